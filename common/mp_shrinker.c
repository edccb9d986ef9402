// SPDX-License-Identifier: GPL-2.0
/*
 * User-space shrinkers: kernel mempressure.shrinker (v1 and v2 ABI) and the
 * emulation for stock kernels, whose thread is the emulator
 * (mp_emulator.c). See mp_shrinker.h for the contract, mp_emulator.h for
 * the emulation policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "mp_clock.h"
#include "mp_emulator.h"
#include "mp_parse.h"
#include "mp_shrinker.h"
#include "mp_spawn.h"
#include "mp_target.h"

/*
 * cgroup v1: what the kernel adds to a shrinker's eventfd when the cgroup
 * is removed; no count of chunks reaches it (mempressure.rst).
 */
#define MP_SHRINKER_V1_GONE (1ULL << 63)

/* clang-format off */
struct mp_shrinker {
	enum mp_shrinker_mode mode;
	enum mp_backend backend;
	uint64_t chunk;
	int efd;		/* request eventfd (v1, emulated), else -1 */
	int fd;			/* mempressure.shrinker, or the pipe's write end */
	int epfd;		/* epoll around the request fds, POLLIN on a
				 * request (v2: the file's POLLPRI) */
	int ewfd;		/* kernel mode: early-warning requests */
	int evfd;		/* kernel mode: mempressure.events, or -1 */
	uint64_t moved_base;	/* its "moved" count at registration */
	uint64_t moved;		/* and at the last read */
	bool client;
	bool close_fds;
	bool have_cg;
	struct mp_cgroup cg;

	struct mp_emulator *emu;	/* emulation or early warning, or NULL */

	char env[MP_SHRINKER_ENV_NR][64];
	const char *envp[MP_SHRINKER_ENV_NR + 1];
};
/* clang-format on */

static const char *const mode_names[] = {
	[MP_SHRINKER_KERNEL_V1] = "kernel-v1",
	[MP_SHRINKER_KERNEL_V2] = "kernel-v2",
	[MP_SHRINKER_EMULATED] = "emulated",
};

const char *mp_shrinker_mode_name(enum mp_shrinker_mode m)
{
	if (m < MP_SHRINKER_KERNEL_V1 || m > MP_SHRINKER_EMULATED)
		return "unknown";
	return mode_names[m];
}

bool mp_shrinker_wants_kernel(const struct mp_shrinker_cfg *cfg)
{
	return cfg->backend == MP_BACKEND_MEMPRESSURE ||
	       (cfg->backend == MP_BACKEND_AUTO && !cfg->emulate &&
		!mp_backend_probe(MP_BACKEND_MEMPRESSURE, NULL));
}

static struct mp_shrinker *sh_new(void)
{
	struct mp_shrinker *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->efd = sh->fd = sh->epfd = sh->ewfd = sh->evfd = -1;
	return sh;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* v2: an epoll instance that is readable when the file has POLLPRI */
static int v2_epoll(struct mp_shrinker *sh, struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLPRI };

	sh->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sh->epfd < 0 || epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->fd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	return 0;
}

/* mempressure.events' "moved" count, or 0 when it cannot be read */
static uint64_t read_moved(int fd)
{
	char buf[128], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "moved ", 6))
			return strtoull(p + 6, NULL, 10);
	}
	return 0;
}

/*
 * mempressure.events, where the kernel tells that the shrinker moved to an
 * ancestor's memory cgroup because its own went offline: polled with the
 * requests (EPOLLPRI). Optional: a series without the file has no moves
 * to tell, and a file that cannot be opened leaves them untold.
 */
static int open_events(struct mp_shrinker *sh, struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/mempressure.events", sh->cg.dir);
	sh->evfd = open(path, O_RDONLY | O_CLOEXEC);
	if (sh->evfd < 0)
		return 0;
	/* the read also arms poll(): kernfs reports changes since it */
	sh->moved_base = sh->moved = read_moved(sh->evfd);
	if (sh->epfd < 0) {
		/* v1: the kernel's eventfd and the file, behind one fd */
		sh->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (sh->epfd < 0 ||
		    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->efd, &ev))
			return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	}
	ev.events = EPOLLPRI;
	if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->evfd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	return 0;
}

static int open_kernel(struct mp_shrinker *sh, const struct mp_target *t,
		       struct mp_err *err)
{
	char path[PATH_MAX + 32], cmd[96];
	const struct mp_cgroup *cg;
	const struct mp_hier *h;
	int cfd, n, e;

	if (mp_backend_probe(MP_BACKEND_MEMPRESSURE, err) ||
	    mp_target_get(t, MP_ROLE_MEMPRESSURE, &cg, err))
		return -1;
	sh->cg = *cg;
	h = cg->hier;
	sh->have_cg = true;
	sh->backend = MP_BACKEND_MEMPRESSURE;
	snprintf(path, sizeof(path), "%s/mempressure.shrinker", sh->cg.dir);
	sh->fd = open(path, O_RDWR | O_CLOEXEC |
				    (h->version == MP_CG_V2 ? O_NONBLOCK : 0));
	if (sh->fd < 0)
		return mp_errf(err, errno == ENOENT ? MP_EXIT_UNAVAILABLE : -1,
			       errno, "cannot open '%s'", path);
	if (h->version == MP_CG_V2) {
		sh->mode = MP_SHRINKER_KERNEL_V2;
		n = snprintf(cmd, sizeof(cmd), "%" PRIu64, sh->chunk);
		if (write(sh->fd, cmd, n) != n)
			return mp_errf(err,
				       errno == EINVAL ? MP_EXIT_USAGE : -1,
				       errno,
				       "cannot register chunk size %s on '%s'",
				       cmd, path);
		if (v2_epoll(sh, err))
			return -1;
		return open_events(sh, err);
	}
	sh->mode = MP_SHRINKER_KERNEL_V1;
	sh->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sh->efd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "eventfd");
	snprintf(path, sizeof(path), "%s/cgroup.event_control", sh->cg.dir);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (cfd < 0)
		return mp_errf(err, -1, errno, "cannot open '%s'", path);
	/* the documented string, without the upstream test's trailing NUL */
	n = snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, sh->efd, sh->fd,
		     sh->chunk);
	if (write(cfd, cmd, n) != n) {
		e = errno;
		close(cfd);
		return mp_errf(err, e == EINVAL ? MP_EXIT_USAGE : -1, e,
			       "cannot register shrinker '%s' on '%s'", cmd,
			       path);
	}
	close(cfd);
	return open_events(sh, err);
}

/* ---- emulation ---- */

/* Add fd to the epoll instance readers wait on (POLLIN). */
static int epoll_add(struct mp_shrinker *sh, int fd, struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, fd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
	return 0;
}

/*
 * The pressure source of an emulated shrinker, and the cgroup it is
 * registered for (sh->cg, where the emulator reads usage and limit).
 */
static int open_source(struct mp_shrinker *sh,
		       const struct mp_shrinker_cfg *cfg,
		       const struct mp_target *t, enum mp_level level,
		       struct mp_source **src, struct mp_err *err)
{
	struct mp_source_cfg scfg = {
		.backend = cfg->backend,
		.target = t,
		.level = level,
		/* without a cgroup or backend, the service manager's file */
		.env_watch = cfg->backend == MP_BACKEND_AUTO,
	};
	bool picked = false;
	int ret;

	if (scfg.backend == MP_BACKEND_AUTO ||
	    scfg.backend == MP_BACKEND_MEMPRESSURE) {
		scfg.backend = mp_backend_pick(MP_USE_EMULATION);
		if (scfg.backend == MP_BACKEND_AUTO)
			scfg.backend = MP_BACKEND_PSI; /* its error, below */
		picked = true;
	}
	ret = mp_source_open(&scfg, src, err);
	/* chosen for the user, and not theirs to use: PSI, as listen does */
	if (ret && picked && scfg.backend != MP_BACKEND_PSI &&
	    err->status == MP_EXIT_NOPERM &&
	    !mp_backend_probe(MP_BACKEND_PSI, NULL)) {
		scfg.backend = MP_BACKEND_PSI;
		ret = mp_source_open(&scfg, src, err);
	}
	if (ret) {
		const struct mp_cgroup *mcg = mp_target_cg(t, MP_ROLE_MEMORY);
		struct mp_target *host;
		int e;

		/*
		 * PSI for a cgroup of the v1 memory hierarchy: the pressure
		 * of the host, the usage and the limit of the memcg.
		 */
		if (scfg.backend != MP_BACKEND_PSI || t->own || !mcg ||
		    mcg->hier->version != MP_CG_V1)
			return -1;
		sh->cg = *mcg;
		host = mp_target_new("/");
		if (!host)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cgroup");
		scfg.target = host;
		e = mp_source_open(&scfg, src, err);
		free(host);
		if (e)
			return -1;
	} else {
		sh->cg = *mp_source_cgroup(*src);
	}
	sh->backend = mp_source_backend(*src);
	sh->have_cg = true;
	return 0;
}

static int open_emulated(struct mp_shrinker *sh,
			 const struct mp_shrinker_cfg *cfg,
			 const struct mp_target *t, struct mp_err *err)
{
	struct mp_emulator_cfg ecfg = {
		.policy = cfg->policy,
		.ucg = &sh->cg,
		.chunk_size = sh->chunk,
		.pipe_r = -1,
	};
	int pfd[2];

	sh->mode = MP_SHRINKER_EMULATED;
	if (mp_emulator_policy(&ecfg.policy, err) ||
	    open_source(sh, cfg, t, ecfg.policy.level, &ecfg.src, err))
		return -1;
	sh->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sh->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sh->efd < 0 || sh->epfd < 0 || pipe2(pfd, O_CLOEXEC)) {
		mp_source_close(ecfg.src);
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up the shrinker emulation");
	}
	sh->fd = pfd[1];
	ecfg.pipe_r = pfd[0];
	fcntl(ecfg.pipe_r, F_SETFL, O_NONBLOCK);
	ecfg.req_fd = sh->efd;
	/* the source and the pipe's read end are the emulator's from here */
	if (mp_emulator_start(&ecfg, "the shrinker emulation", &sh->emu, err))
		return -1;
	/* the owner waits on requests and on the source failing */
	if (epoll_add(sh, sh->efd, err) ||
	    epoll_add(sh, mp_emulator_gone_fd(sh->emu), err))
		return -1;
	return 0;
}

/* Add the early-warning eventfd to the epoll instance readers wait on. */
static int attach_early_warning(struct mp_shrinker *sh, int ewfd,
				struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (sh->epfd < 0) {
		/* v1: the kernel's eventfd and ours, behind one fd */
		sh->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (sh->epfd < 0 ||
		    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->efd, &ev))
			return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	}
	if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, ewfd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	sh->ewfd = ewfd;
	return 0;
}

/*
 * The kernel's shrinker asks from reclaim, through a work item after the
 * reclaim window: in a cgroup of anonymous memory without swap, the OOM
 * killer comes first. The early warning runs the emulation's usage policy
 * beside it, its requests on a second eventfd (see mp_shrinker_read()).
 */
static int open_early_warning(struct mp_shrinker *sh,
			      const struct mp_shrinker_cfg *cfg,
			      const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *mcg = mp_target_cg(t, MP_ROLE_MEMORY);
	struct mp_emulator_cfg ecfg = {
		.policy = cfg->policy,
		.ucg = mcg,
		.chunk_size = sh->chunk,
		.pipe_r = -1,
	};
	int ewfd;

	if (mp_emulator_policy(&ecfg.policy, err))
		return -1;
	if (!mcg)
		return mp_errf(
			err, MP_EXIT_FAILURE, 0,
			"no memory cgroup '%s' for the shrinker's early warning",
			sh->cg.path);
	ewfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ewfd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up the shrinker's early warning");
	if (attach_early_warning(sh, ewfd, err)) {
		close(ewfd);
		return -1;
	}
	ecfg.req_fd = ewfd;
	return mp_emulator_start(&ecfg, "the shrinker's early warning",
				 &sh->emu, err);
}

int mp_shrinker_open(const struct mp_shrinker_cfg *cfg,
		     struct mp_shrinker **out, struct mp_err *err)
{
	const struct mp_target *t = cfg->target;
	struct mp_target *own = NULL;
	struct mp_shrinker *sh;
	int ret;

	if (!cfg->chunk_size)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "shrinker chunk size must not be zero");
	if (cfg->backend == MP_BACKEND_MEMPRESSURE && cfg->emulate)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"the mempressure backend is the kernel's shrinker: it cannot be emulated");
	sh = sh_new();
	if (!sh)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "shrinker");
	sh->chunk = cfg->chunk_size;
	sh->close_fds = true;
	if (!t) {
		own = mp_target_new(NULL);
		if (!own) {
			mp_shrinker_close(sh);
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM,
				       "shrinker");
		}
		t = own;
	}
	if (mp_shrinker_wants_kernel(cfg)) {
		ret = open_kernel(sh, t, err);
		if (!ret && cfg->early_warning)
			ret = open_early_warning(sh, cfg, t, err);
	} else {
		ret = open_emulated(sh, cfg, t, err);
	}
	free(own);
	if (ret) {
		mp_shrinker_close(sh);
		return -1;
	}
	*out = sh;
	return 0;
}

int mp_shrinker_fd(const struct mp_shrinker *sh)
{
	return sh->epfd >= 0 ? sh->epfd : sh->efd;
}

static int kernel_read(struct mp_shrinker *sh, uint64_t *chunks,
		       struct mp_err *err)
{
	char buf[64];
	ssize_t n;

	if (sh->evfd >= 0) {
		/* the count only grows; a read clears the file's POLLPRI */
		uint64_t m = read_moved(sh->evfd);

		if (m > sh->moved)
			sh->moved = m;
	}
	if (sh->mode == MP_SHRINKER_KERNEL_V2) {
		struct epoll_event ev;

		/* consume the POLLPRI edge, then read the count */
		epoll_wait(sh->epfd, &ev, 1, 0);
		n = pread(sh->fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return mp_errf(err, MP_EXIT_FAILURE, errno,
				       "cannot read the shrinker request");
		}
		buf[n] = '\0';
		*chunks = strtoull(buf, NULL, 10);
		return *chunks ? 1 : 0;
	}
	n = read(sh->efd, chunks, sizeof(*chunks));
	if (n == sizeof(*chunks) && sh->mode == MP_SHRINKER_KERNEL_V1 &&
	    *chunks >= MP_SHRINKER_V1_GONE)
		return sh->have_cg ?
			       mp_errf(err, MP_EXIT_FAILURE, 0,
				       "cgroup removed '%s'", sh->cg.path) :
			       mp_errf(err, MP_EXIT_FAILURE, 0,
				       "the shrinker's cgroup was removed");
	if (n == sizeof(*chunks))
		return *chunks ? 1 : 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return mp_errf(err, MP_EXIT_FAILURE, n < 0 ? errno : EIO,
		       "cannot read the shrinker eventfd");
}

int mp_shrinker_read(struct mp_shrinker *sh, uint64_t *chunks,
		     struct mp_err *err)
{
	const char *gone = sh->emu ? mp_emulator_gone(sh->emu) : NULL;
	uint64_t k = 0, a = 0;
	int ret;

	if (gone)
		return mp_errf(err, MP_EXIT_FAILURE, 0, "%s", gone);
	ret = kernel_read(sh, &k, err);
	if (ret < 0)
		return -1;
	if (!ret)
		k = 0;
	if (sh->ewfd >= 0 && read(sh->ewfd, &a, sizeof(a)) == sizeof(a) && a) {
		/*
		 * The early warning asked without the kernel: lower the
		 * kernel's counter as a request of its own would have.
		 */
		if (mp_shrinker_add(sh, -(int64_t)a, err))
			return -1;
	} else {
		a = 0;
	}
	*chunks = k + a;
	return *chunks ? 1 : 0;
}

int mp_shrinker_wait(struct mp_shrinker *sh, uint64_t *chunks,
		     int64_t timeout_ms, struct mp_err *err)
{
	/*
	 * An emulated client also watches the pipe to the emulator: when
	 * its read end is gone (the process that owned it exited) no
	 * request can come any more.
	 */
	struct pollfd pfd[2] = {
		{ .fd = mp_shrinker_fd(sh), .events = POLLIN },
		{ .fd = sh->client && sh->mode == MP_SHRINKER_EMULATED ?
				sh->fd :
				-1,
		  .events = 0 },
	};
	uint64_t deadline = 0, now;
	int ret, t = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;

	if (timeout_ms >= 0)
		deadline = mp_now_ns(CLOCK_MONOTONIC) +
			   (uint64_t)timeout_ms * 1000000ULL;
	for (;;) {
		ret = poll(pfd, 2, t);
		if (ret < 0)
			return mp_errf(err, MP_EXIT_FAILURE, errno, "poll");
		if (pfd[1].revents & (POLLERR | POLLHUP)) {
			mp_errf(err, MP_EXIT_FAILURE, 0,
				"the shrinker is gone: its owner has exited or its cgroup was removed");
			if (err)
				err->errnum = EPIPE; /* as a write would */
			return -1;
		}
		if (ret > 0 && pfd[0].revents) {
			ret = mp_shrinker_read(sh, chunks, err);
			if (ret)
				return ret;
		}
		if (timeout_ms >= 0) {
			now = mp_now_ns(CLOCK_MONOTONIC);
			if (now >= deadline)
				return 0;
			t = mp_poll_ms(deadline, now);
		}
	}
}

int mp_shrinker_add(struct mp_shrinker *sh, int64_t chunks, struct mp_err *err)
{
	char buf[64];
	ssize_t n;
	int len;

	if (!chunks)
		return 0;
	/* "+n"/"-n" (v2), "<efd> +n" (v1); lines for the emulator's pipe */
	if (sh->mode == MP_SHRINKER_KERNEL_V2)
		len = snprintf(buf, sizeof(buf), "%+" PRId64, chunks);
	else
		len = snprintf(buf, sizeof(buf), "%d %+" PRId64 "%s", sh->efd,
			       chunks,
			       sh->mode == MP_SHRINKER_EMULATED ? "\n" : "");
	do
		n = write(sh->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n != len)
		return mp_errf(err, MP_EXIT_FAILURE, n < 0 ? errno : EIO,
			       "cannot account %+" PRId64 " chunks", chunks);
	return 0;
}

enum mp_shrinker_mode mp_shrinker_mode(const struct mp_shrinker *sh)
{
	return sh->mode;
}

bool mp_shrinker_emulated(const struct mp_shrinker *sh)
{
	return sh->mode == MP_SHRINKER_EMULATED;
}

enum mp_backend mp_shrinker_backend(const struct mp_shrinker *sh)
{
	return sh->backend;
}

uint64_t mp_shrinker_chunk_size(const struct mp_shrinker *sh)
{
	return sh->chunk;
}

uint64_t mp_shrinker_moves(const struct mp_shrinker *sh)
{
	return sh->moved - sh->moved_base;
}

const struct mp_cgroup *mp_shrinker_cgroup(const struct mp_shrinker *sh)
{
	return sh->have_cg ? &sh->cg : NULL;
}

void mp_shrinker_stats(const struct mp_shrinker *sh,
		       struct mp_shrinker_stats *st)
{
	if (sh->emu)
		mp_emulator_stats(sh->emu, st);
	else
		memset(st, 0, sizeof(*st));
}

void mp_shrinker_close(struct mp_shrinker *sh)
{
	if (!sh)
		return;
	/* the thread is gone before anything it uses is closed or freed */
	mp_emulator_stop(sh->emu);
	close_fd(&sh->epfd);
	close_fd(&sh->evfd);
	if (sh->close_fds) {
		close_fd(&sh->ewfd);
		close_fd(&sh->efd);
		close_fd(&sh->fd);
	}
	free(sh);
}

/* ---- handing the registration to children ---- */

const char *const *mp_shrinker_env(struct mp_shrinker *sh)
{
	snprintf(sh->env[0], sizeof(sh->env[0]), "MPCTL_SHRINKER_EFD=%d",
		 sh->mode == MP_SHRINKER_KERNEL_V2 ? -1 : sh->efd);
	snprintf(sh->env[1], sizeof(sh->env[1]), "MPCTL_SHRINKER_FD=%d",
		 sh->fd);
	snprintf(sh->env[2], sizeof(sh->env[2]),
		 "MPCTL_SHRINKER_CHUNK=%" PRIu64, sh->chunk);
	snprintf(sh->env[3], sizeof(sh->env[3]), "MPCTL_SHRINKER_BACKEND=%s",
		 mp_backend_name(sh->backend));
	snprintf(sh->env[4], sizeof(sh->env[4]), "MPCTL_SHRINKER_ABI=%s",
		 sh->mode == MP_SHRINKER_KERNEL_V2 ? "v2" : "v1");
	snprintf(sh->env[5], sizeof(sh->env[5]), "MPCTL_SHRINKER_AFD=%d",
		 sh->ewfd);
	sh->envp[0] = sh->env[0];
	sh->envp[1] = sh->env[1];
	sh->envp[2] = sh->env[2];
	sh->envp[3] = sh->env[3];
	sh->envp[4] = sh->env[4];
	sh->envp[5] = sh->ewfd >= 0 ? sh->env[5] : NULL;
	sh->envp[6] = NULL;
	return sh->envp;
}

int mp_shrinker_pass(struct mp_shrinker *sh, struct mp_child *c,
		     struct mp_err *err)
{
	if (mp_child_env(c, "MPCTL_SHRINKER_", mp_shrinker_env(sh), err) ||
	    (sh->mode != MP_SHRINKER_KERNEL_V2 &&
	     mp_child_keep(c, sh->efd, err)) ||
	    mp_child_keep(c, sh->fd, err) || mp_child_keep(c, sh->ewfd, err))
		return -1;
	return 0;
}

int mp_shrinker_client(int efd, int fd, uint64_t chunk_size, int abi,
		       enum mp_backend backend, bool close_fds,
		       struct mp_shrinker **out, struct mp_err *err)
{
	struct mp_shrinker *sh;

	if ((abi != 1 && abi != 2) || fd < 0 || (abi == 1 && efd < 0) ||
	    !chunk_size || fcntl(fd, F_GETFD) < 0 ||
	    (abi == 1 && fcntl(efd, F_GETFD) < 0))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid shrinker registration (efd %d, fd %d, abi v%d)",
			efd, fd, abi);
	sh = sh_new();
	if (!sh)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "shrinker");
	sh->client = true;
	sh->close_fds = close_fds;
	sh->chunk = chunk_size;
	sh->backend = backend;
	sh->fd = fd;
	if (abi == 2) {
		sh->mode = MP_SHRINKER_KERNEL_V2;
		if (v2_epoll(sh, err)) {
			mp_shrinker_close(sh);
			return -1;
		}
	} else {
		sh->efd = efd;
		sh->mode = backend == MP_BACKEND_MEMPRESSURE ?
				   MP_SHRINKER_KERNEL_V1 :
				   MP_SHRINKER_EMULATED;
		/* requests are never waited for by blocking in read() */
		fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) | O_NONBLOCK);
	}
	*out = sh;
	return 0;
}

#define MP_CGROUP_SUPER_MAGIC  0x27e0eb
#define MP_CGROUP2_SUPER_MAGIC 0x63677270

/* An inherited fd is what its variable says, or refused: never read or
 * write, nor set O_NONBLOCK on, a terminal, a file or a shared stdin. */
static bool fd_is_eventfd(int fd)
{
	char proc[64], link[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

static bool fd_is_shrinker(int fd, int abi, enum mp_backend b)
{
	struct statfs fs;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat(fd, &st))
		return false;
	if (b != MP_BACKEND_MEMPRESSURE) /* the emulator's pipe */
		return S_ISFIFO(st.st_mode) && (fl & O_ACCMODE) != O_RDONLY;
	if (fstatfs(fd, &fs) || !S_ISREG(st.st_mode))
		return false;
	return fs.f_type ==
	       (abi == 2 ? MP_CGROUP2_SUPER_MAGIC : MP_CGROUP_SUPER_MAGIC);
}

int mp_shrinker_client_from_env(struct mp_shrinker **out, struct mp_err *err)
{
	const char *e_efd = getenv("MPCTL_SHRINKER_EFD");
	const char *e_fd = getenv("MPCTL_SHRINKER_FD");
	const char *e_chunk = getenv("MPCTL_SHRINKER_CHUNK");
	const char *e_backend = getenv("MPCTL_SHRINKER_BACKEND");
	const char *e_abi = getenv("MPCTL_SHRINKER_ABI");
	const char *e_ewfd = getenv("MPCTL_SHRINKER_AFD");
	enum mp_backend b = MP_BACKEND_MEMCG;
	long long efd = -1, fd, chunk, ewfd;
	int abi;

	if (!e_fd || !e_chunk || !e_abi)
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"no shrinker registration in the environment (MPCTL_SHRINKER_FD, MPCTL_SHRINKER_CHUNK, MPCTL_SHRINKER_ABI)");
	if (!strcmp(e_abi, "v1"))
		abi = 1;
	else if (!strcmp(e_abi, "v2"))
		abi = 2;
	else
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_ABI '%s'", e_abi);
	/* strict: no empty value (fd 0), no sign games, nothing truncated */
	if (e_efd && mp_parse_long(e_efd, -1, INT_MAX, &efd))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_EFD '%s'", e_efd);
	if (mp_parse_long(e_fd, 0, INT_MAX, &fd))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_FD '%s'", e_fd);
	if (mp_parse_long(e_chunk, 1, INT64_MAX, &chunk))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_CHUNK '%s'", e_chunk);
	if (e_backend && mp_backend_parse(e_backend, &b))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_BACKEND '%s'",
			       e_backend);
	if (abi == 2)
		b = MP_BACKEND_MEMPRESSURE;
	if (abi == 1 && (!e_efd || !fd_is_eventfd((int)efd)))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_EFD '%s': not an eventfd",
			       e_efd ? e_efd : "");
	if (!fd_is_shrinker((int)fd, abi, b))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid MPCTL_SHRINKER_FD '%s': not %s", e_fd,
			       b != MP_BACKEND_MEMPRESSURE ?
				       "the emulated shrinker's pipe" :
			       abi == 2 ?
				       "a cgroup2 mempressure.shrinker file" :
				       "a cgroup v1 mempressure.shrinker file");
	if (mp_shrinker_client((int)efd, (int)fd, (uint64_t)chunk, abi, b,
			       false, out, err))
		return -1;
	/* the early warning beside a kernel shrinker, if handed down */
	if (e_ewfd) {
		if (mp_parse_long(e_ewfd, 0, INT_MAX, &ewfd) ||
		    !fd_is_eventfd((int)ewfd) ||
		    attach_early_warning(*out, (int)ewfd, err)) {
			mp_shrinker_close(*out);
			return mp_errf(err, MP_EXIT_USAGE, 0,
				       "invalid MPCTL_SHRINKER_AFD '%s'",
				       e_ewfd);
		}
	}
	return 0;
}
