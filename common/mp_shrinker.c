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
#include "mp_shrinker.h"
#include "mp_spawn.h"
#include "mp_target.h"
#include "mpctl-shrinker.h"

/*
 * The wire protocol (registration, requests, accounting, the
 * environment's fds) is the vendorable library's, lib/mpctl-shrinker.c:
 * what this file adds is the target model, the emulator and its early
 * warning, mempressure.events and handing the registration to children.
 */

/* clang-format off */
struct mp_shrinker {
	enum mp_shrinker_mode mode;
	enum mp_backend backend;
	uint64_t chunk;
	struct mpctl_shrinker *reg;	/* the registration, owns efd and fd
					 * (a client's: owns nothing) */
	struct mpctl_shrinker *w;	/* the request path: reg, or reg's fds
					 * with the early warning beside */
	int efd;		/* reg's request eventfd (v1, emulated), or -1 */
	int fd;			/* reg's mempressure.shrinker, or the pipe */
	int epfd;		/* epoll around w's fd and the files below,
				 * or -1: w's fd alone */
	int ewfd;		/* kernel mode: early-warning requests */
	int evfd;		/* kernel mode: mempressure.events, or -1 */
	uint64_t moved_base;	/* its "moved" count at registration */
	uint64_t moved;		/* and at the last read */
	bool client;
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
	enum mp_backend kb = mp_backend_kernel_shrinker();

	return (cfg->backend == kb && kb != MP_BACKEND_AUTO) ||
	       (cfg->backend == MP_BACKEND_AUTO && !cfg->emulate &&
		!mp_backend_probe(kb, NULL));
}

static struct mp_shrinker *sh_new(void)
{
	struct mp_shrinker *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->efd = sh->fd = sh->epfd = sh->ewfd = sh->evfd = -1;
	return sh;
}

/* the library's reason as ours, with our exit status */
static int lib_err(struct mp_err *err, int status,
		   const struct mpctl_shrinker_err *le)
{
	mp_errf(err, status < 0 ? mp_status_for_errno(le->errnum) : status, 0,
		"%s", le->msg);
	if (err)
		err->errnum = le->errnum;
	return -1;
}

static const enum mp_shrinker_mode modes[] = {
	[MPCTL_SHRINKER_KERNEL_V1] = MP_SHRINKER_KERNEL_V1,
	[MPCTL_SHRINKER_KERNEL_V2] = MP_SHRINKER_KERNEL_V2,
	[MPCTL_SHRINKER_EMULATED] = MP_SHRINKER_EMULATED,
};

/* Take reg as the registration and the request path. */
static void set_reg(struct mp_shrinker *sh, struct mpctl_shrinker *reg)
{
	sh->reg = sh->w = reg;
	sh->mode = modes[mpctl_shrinker_backend(reg)];
	mpctl_shrinker_fds(reg, &sh->efd, &sh->fd);
}

/*
 * The epoll instance readers wait on, around the library's fd, for the
 * files watched beside it (mempressure.events, the emulator's end)
 */
static int epoll_add(struct mp_shrinker *sh, int fd, uint32_t events,
		     struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (sh->epfd < 0) {
		sh->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (sh->epfd < 0 || epoll_ctl(sh->epfd, EPOLL_CTL_ADD,
					      mpctl_shrinker_fd(sh->w), &ev))
			return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	}
	ev.events = events;
	if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, fd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
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
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/mempressure.events", sh->cg.dir);
	sh->evfd = open(path, O_RDONLY | O_CLOEXEC);
	if (sh->evfd < 0)
		return 0;
	/* the read also arms poll(): kernfs reports changes since it */
	sh->moved_base = sh->moved = read_moved(sh->evfd);
	return epoll_add(sh, sh->evfd, EPOLLPRI, err);
}

static int open_kernel(struct mp_shrinker *sh, const struct mp_target *t,
		       struct mp_err *err)
{
	struct mpctl_shrinker_err le;
	struct mpctl_shrinker *reg;
	const struct mp_cgroup *cg;

	enum mp_backend kb = mp_backend_kernel_shrinker();

	if (mp_backend_probe(kb, err) ||
	    mp_target_get(t, MP_ROLE_MEMPRESSURE, &cg, err))
		return -1;
	sh->cg = *cg;
	sh->have_cg = true;
	sh->backend = kb;
	if (mpctl_shrinker_register(sh->cg.dir, sh->chunk, &reg, &le))
		return lib_err(err,
			       le.errnum == ENOENT ? MP_EXIT_UNAVAILABLE :
			       le.errnum == EINVAL ? MP_EXIT_USAGE :
						     -1,
			       &le);
	set_reg(sh, reg);
	return open_events(sh, err);
}

/* ---- emulation ---- */

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
	enum mp_backend fb = mp_backend_pick(MP_USE_UNPRIVILEGED);
	bool picked = false;
	int ret;

	/* the kernel's shrinker's backend is emulated over another */
	if (scfg.backend == MP_BACKEND_AUTO ||
	    scfg.backend == mp_backend_kernel_shrinker()) {
		scfg.backend = mp_backend_pick(MP_USE_EMULATION);
		if (scfg.backend == MP_BACKEND_AUTO)
			scfg.backend = MP_BACKEND_PSI; /* its error, below */
		picked = true;
	}
	ret = mp_source_open(&scfg, src, err);
	/* chosen for the user, and not theirs to use: as listen does */
	if (ret && picked && fb != MP_BACKEND_AUTO && scfg.backend != fb &&
	    err->status == MP_EXIT_NOPERM) {
		scfg.backend = fb;
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
	struct mpctl_shrinker_err le;
	struct mpctl_shrinker *reg;
	int pfd[2] = { -1, -1 }, efd;

	sh->mode = MP_SHRINKER_EMULATED;
	if (mp_emulator_policy(&ecfg.policy, err) ||
	    open_source(sh, cfg, t, ecfg.policy.level, &ecfg.src, err))
		return -1;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0 || pipe2(pfd, O_CLOEXEC)) {
		mp_errf(err, MP_EXIT_FAILURE, errno,
			"cannot set up the shrinker emulation");
		goto err_close;
	}
	/* the owner speaks the v1 protocol to its own emulator */
	if (mpctl_shrinker_from_fds(MPCTL_SHRINKER_EMULATED, efd, pfd[1], -1,
				    sh->chunk, 1, &reg, &le)) {
		lib_err(err, MP_EXIT_FAILURE, &le);
		goto err_close;
	}
	set_reg(sh, reg);
	ecfg.pipe_r = pfd[0];
	fcntl(ecfg.pipe_r, F_SETFL, O_NONBLOCK);
	ecfg.req_fd = sh->efd;
	/* the source and the pipe's read end are the emulator's from here */
	if (mp_emulator_start(&ecfg, "the shrinker emulation", &sh->emu, err))
		return -1;
	/* the owner waits on requests and on the source failing */
	return epoll_add(sh, mp_emulator_gone_fd(sh->emu), EPOLLIN, err);
err_close:
	mp_source_close(ecfg.src);
	if (efd >= 0)
		close(efd);
	if (pfd[0] >= 0) {
		close(pfd[0]);
		close(pfd[1]);
	}
	return -1;
}

/*
 * The request path with the early-warning eventfd beside the registration:
 * the library reads both, and takes the early warning's requests off the
 * kernel's counter.
 */
static int attach_early_warning(struct mp_shrinker *sh, int ewfd,
				struct mp_err *err)
{
	struct mpctl_shrinker_err le;

	if (mpctl_shrinker_from_fds(mpctl_shrinker_backend(sh->reg), sh->efd,
				    sh->fd, ewfd, sh->chunk, 0, &sh->w, &le)) {
		sh->w = sh->reg;
		return lib_err(err, MP_EXIT_FAILURE, &le);
	}
	sh->ewfd = ewfd;
	/* waited on beside the files already there (mempressure.events) */
	if (sh->epfd >= 0 &&
	    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, mpctl_shrinker_fd(sh->w),
		      &(struct epoll_event){ .events = EPOLLIN }))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
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
	if (cfg->backend == mp_backend_kernel_shrinker() &&
	    cfg->backend != MP_BACKEND_AUTO && cfg->emulate)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"the %s backend is the kernel's shrinker: it cannot be emulated",
			mp_backend_name(cfg->backend));
	sh = sh_new();
	if (!sh)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "shrinker");
	sh->chunk = cfg->chunk_size;
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
	return sh->epfd >= 0 ? sh->epfd : mpctl_shrinker_fd(sh->w);
}

int mp_shrinker_read(struct mp_shrinker *sh, uint64_t *chunks,
		     struct mp_err *err)
{
	const char *gone = sh->emu ? mp_emulator_gone(sh->emu) : NULL;
	int ret;

	if (gone)
		return mp_errf(err, MP_EXIT_FAILURE, 0, "%s", gone);
	if (sh->evfd >= 0) {
		/* the count only grows; a read clears the file's POLLPRI */
		uint64_t m = read_moved(sh->evfd);

		if (m > sh->moved)
			sh->moved = m;
	}
	ret = mpctl_shrinker_read(sh->w, chunks);
	if (ret >= 0)
		return ret;
	if (errno == ENODEV)
		return sh->have_cg ?
			       mp_errf(err, MP_EXIT_FAILURE, 0,
				       "cgroup removed '%s'", sh->cg.path) :
			       mp_errf(err, MP_EXIT_FAILURE, 0,
				       "the shrinker's cgroup was removed");
	return mp_errf(err, MP_EXIT_FAILURE, errno,
		       "cannot read the shrinker request");
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
	if (mpctl_shrinker_add(sh->w, chunks))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
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
	if (sh->w != sh->reg)
		mpctl_shrinker_close(sh->w);
	/* a client's fds are the environment's: the library leaves them */
	mpctl_shrinker_close(sh->reg);
	if (!sh->client)
		close_fd(&sh->ewfd);
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

int mp_shrinker_client_from_env(struct mp_shrinker **out, struct mp_err *err)
{
	const char *e_backend = getenv("MPCTL_SHRINKER_BACKEND");
	struct mpctl_shrinker_err le;
	struct mpctl_shrinker *reg;
	struct mp_shrinker *sh;

	if (mpctl_shrinker_from_env(&reg, &le))
		return lib_err(err,
			       le.errnum == ENOENT ? MP_EXIT_UNAVAILABLE :
			       le.errnum == EINVAL ? MP_EXIT_USAGE :
						     MP_EXIT_FAILURE,
			       &le);
	sh = sh_new();
	if (!sh) {
		mpctl_shrinker_close(reg);
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "shrinker");
	}
	sh->client = true;
	set_reg(sh, reg);
	sh->chunk = mpctl_shrinker_chunk_size(reg);
	/* the library checked the name; the emulated default is memcg */
	sh->backend = MP_BACKEND_MEMCG;
	if (sh->mode != MP_SHRINKER_EMULATED)
		sh->backend = mp_backend_kernel_shrinker();
	else if (e_backend)
		mp_backend_parse(e_backend, &sh->backend);
	*out = sh;
	return 0;
}
