// SPDX-License-Identifier: GPL-2.0
/*
 * User-space shrinkers: kernel mempressure.shrinker (v1 and v2 ABI) and the
 * emulation for stock kernels. See mp_shrinker.h for the contract and the
 * emulation policy.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "mp_memstat.h"
#include "mp_parse.h"
#include "mp_shrinker.h"
#include "mp_spawn.h"
#include "mp_target.h"
#include "mp_thread.h"

/* requests younger than this are taken as still being freed */
#define EMUL_INFLIGHT_NS	10000000ULL
/* sampling period while usage is above the early-warning threshold */
#define MP_EMUL_FAST_MS		2
/*
 * cgroup v1: what the kernel adds to a shrinker's eventfd when the cgroup
 * is removed; no count of chunks reaches it (mempressure.rst).
 */
#define MP_SHRINKER_V1_GONE	(1ULL << 63)

enum { W_STOP, W_PIPE, W_SOURCE, W_THRESH };

/* clang-format off */
struct mp_shrinker {
	enum mp_shrinker_mode mode;
	enum mp_backend backend;
	uint64_t chunk;
	int efd;		/* request eventfd (v1, emulated), else -1 */
	int fd;			/* mempressure.shrinker, or the pipe's write end */
	int epfd;		/* epoll around the request fds, POLLIN on a
				 * request (v2: the file's POLLPRI) */
	int afd;		/* kernel mode: early-warning requests */
	bool assist;		/* this process runs the early warning */
	struct mp_cgroup ucg;	/* where usage and limit are read */
	bool client;
	bool close_fds;
	bool have_cg;
	struct mp_cgroup cg;

	/* emulation */
	struct mp_emul_policy pol;
	pthread_t thr;
	bool running;
	int pipe_r;
	int stop_efd;
	int thresh_efd;		/* one eventfd for every threshold */
	int emul_epfd;
	/*
	 * The pressure source failed (the cgroup was removed): the thread
	 * sets gone and makes gone_efd readable; mp_shrinker_read() then
	 * fails with gone_msg, so that the owner's waits end.
	 */
	int gone_efd;
	int gone;
	char gone_msg[256];
	uint64_t high_bytes;	/* usage above which sampling is fast */
	struct mp_source *src;
	struct mp_memstat ms;
	char line[128];		/* partial line from the pipe */
	size_t line_len;
	uint64_t last_event_ns;
	uint64_t recent_ns[8];	/* in-flight requests: time, chunks */
	uint64_t recent_n[8];
	unsigned int recent_i;
	struct mp_shrinker_stats st;	/* updated with __atomic */

	char env[MP_SHRINKER_ENV_NR][64];
	const char *envp[MP_SHRINKER_ENV_NR + 1];
};
/* clang-format on */

#define ST_ADD(sh, f, v) __atomic_add_fetch(&(sh)->st.f, (v), __ATOMIC_RELAXED)
#define ST_SET(sh, f, v) __atomic_store_n(&(sh)->st.f, (v), __ATOMIC_RELAXED)
#define ST_GET(sh, f) __atomic_load_n(&(sh)->st.f, __ATOMIC_RELAXED)

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

uint64_t mp_emul_high_mark(const struct mp_emul_policy *p, uint64_t limit)
{
	double hi = p->high > 0 ? p->high : p->high < 0 ?
		    (p->target > 0 ? p->target : MP_EMUL_TARGET) :
		    MP_EMUL_HIGH;

	return (uint64_t)((1.0 + hi) / 2 * (double)limit);
}

bool mp_shrinker_wants_kernel(const struct mp_shrinker_cfg *cfg)
{
	return cfg->backend == MP_BACKEND_MEMPRESSURE ||
	       (cfg->backend == MP_BACKEND_AUTO && !cfg->emulate &&
		!mp_backend_probe(MP_BACKEND_MEMPRESSURE, NULL));
}

void mp_emul_policy_defaults(struct mp_emul_policy *p)
{
	static const double mins[MP_LEVEL_NR] = {
		MP_EMUL_MIN_LOW, MP_EMUL_MIN_MEDIUM, MP_EMUL_MIN_CRITICAL,
	};
	bool any_min = false;
	int l;

	if (p->target <= 0)
		p->target = MP_EMUL_TARGET;
	if (p->high == 0)
		p->high = MP_EMUL_HIGH;
	for (l = 0; l < MP_LEVEL_NR; l++)
		any_min |= p->min_frac[l] != 0;
	if (!any_min)
		for (l = 0; l < MP_LEVEL_NR; l++)
			p->min_frac[l] = mins[l];
	for (l = 0; l < MP_LEVEL_NR; l++)
		if (p->min_frac[l] < 0)
			p->min_frac[l] = 0;	/* negative: explicitly none */
	if (!p->interval_ns)
		p->interval_ns = MP_EMUL_INTERVAL_NS;
	if (!p->linger_ns)
		p->linger_ns = MP_EMUL_LINGER_NS;
}

static struct mp_shrinker *sh_new(void)
{
	struct mp_shrinker *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->efd = sh->fd = sh->epfd = sh->afd = -1;
	sh->pipe_r = sh->stop_efd = sh->thresh_efd = sh->emul_epfd = -1;
	sh->gone_efd = -1;
	sh->ms.usage_fd = -1;
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
			return mp_errf(err, errno == EINVAL ? MP_EXIT_USAGE : -1,
				       errno, "cannot register chunk size %s on '%s'",
				       cmd, path);
		return v2_epoll(sh, err);
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
	return 0;
}

/* ---- emulation ---- */

static uint64_t now_ns(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

/*
 * memcg v1 usage thresholds: "<efd> <fd of usage_in_bytes> <bytes>" on
 * cgroup.event_control, one eventfd for all. The kernel signals a
 * threshold when usage crosses it either way.
 */
static int register_threshold(struct mp_shrinker *sh, uint64_t bytes)
{
	char path[PATH_MAX + 32], cmd[96];
	int ufd, cfd, n, ret = -1;

	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", sh->ucg.dir);
	ufd = open(path, O_RDONLY | O_CLOEXEC);
	if (ufd < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.event_control", sh->ucg.dir);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (cfd < 0)
		goto out;
	if (sh->thresh_efd < 0)
		sh->thresh_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sh->thresh_efd < 0)
		goto out;
	n = snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, sh->thresh_efd, ufd,
		     bytes);
	if (write(cfd, cmd, n) == n)
		ret = 0;
out:
	if (cfd >= 0)
		close(cfd);
	close(ufd);
	return ret;
}

/*
 * The early warnings: high * limit, then MP_EMUL_STEPS more evenly up to
 * halfway between the last and the limit, so that usage that keeps
 * climbing after a request (the request is still being served, or was too
 * small) raises another event before the limit is reached.
 */
#define MP_EMUL_STEPS 4

static void register_thresholds(struct mp_shrinker *sh)
{
	double lim = (double)sh->ms.limit, step;
	int i;

	step = (1.0 - sh->pol.high) / (MP_EMUL_STEPS + 1);
	for (i = 0; i <= MP_EMUL_STEPS; i++)
		if (register_threshold(sh, (uint64_t)((sh->pol.high +
							i * step) * lim)))
			break;
}

/* Apply "<efd> <+/-N>" lines from the pipe to the counter. */
static void emul_apply_line(struct mp_shrinker *sh, const char *s)
{
	long long v;
	int efd;

	if (sscanf(s, "%d %lld", &efd, &v) != 2)
		return;		/* malformed: ignored, as the kernel rejects it */
	if (v > 0) {
		ST_ADD(sh, counter, (uint64_t)v);
		ST_ADD(sh, added, (uint64_t)v);
	} else if (v < 0) {
		uint64_t c = ST_GET(sh, counter), d = (uint64_t)-v;

		/* only this thread lowers the counter: no race to zero */
		ST_SET(sh, counter, c > d ? c - d : 0);
		ST_ADD(sh, removed, d);
	}
}

static void emul_drain_pipe(struct mp_shrinker *sh)
{
	char buf[4096];
	ssize_t n, i;

	while ((n = read(sh->pipe_r, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n' || buf[i] == '\0') {
				sh->line[sh->line_len] = '\0';
				if (sh->line_len)
					emul_apply_line(sh, sh->line);
				sh->line_len = 0;
			} else if (sh->line_len + 1 < sizeof(sh->line)) {
				sh->line[sh->line_len++] = buf[i];
			}
		}
	}
}

static uint64_t inflight(struct mp_shrinker *sh, uint64_t now)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		if (sh->recent_n[i] && now - sh->recent_ns[i] < EMUL_INFLIGHT_NS)
			sum += sh->recent_n[i];
	return sum;
}

static bool level_floor_due(int level)
{
	return level > MP_LEVEL_LOW;
}

/* Whether the request eventfd still holds a count nobody has read. */
static bool unread(struct mp_shrinker *sh)
{
	struct pollfd pfd = { .fd = sh->assist ? sh->afd : sh->efd,
			      .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/*
 * The policy: chunks to ask for, from usage against the limit, and for an
 * event of a level (level >= 0) a floor of min_frac[level] of the counter.
 * Returns 0 when usage is under the target, 1 above it (keep sampling
 * every interval), 2 above the early-warning threshold (sample fast).
 */
static int emul_request(struct mp_shrinker *sh, int level)
{
	uint64_t usage, counter, target, want = 0, fl = 0, n, now, busy;

	emul_drain_pipe(sh);
	if (mp_memstat_usage(&sh->ms, &usage))
		return 0;
	ST_SET(sh, usage_bytes, usage);
	now = now_ns();
	target = (uint64_t)(sh->pol.target * (double)sh->ms.limit);
	if (usage > target)
		want = (usage - target + sh->chunk - 1) / sh->chunk;
	busy = inflight(sh, now);
	want = want > busy ? want - busy : 0;
	/* the last request not even read yet: asking more only piles up */
	if (want && !level_floor_due(level) && unread(sh))
		want = 0;
	/* the early warning of a kernel shrinker cannot see its counter */
	counter = sh->assist ? UINT64_MAX : ST_GET(sh, counter);
	if (level >= 0 && !sh->assist)
		fl = (uint64_t)ceil(sh->pol.min_frac[level] * (double)counter);
	n = want > fl ? want : fl;
	if (n > counter)
		n = counter;
	if (n) {
		if (!sh->assist)
			ST_SET(sh, counter, counter - n);
		ST_ADD(sh, requests, 1);
		ST_ADD(sh, chunks_requested, n);
		sh->recent_ns[sh->recent_i] = now;
		sh->recent_n[sh->recent_i] = n;
		sh->recent_i = (sh->recent_i + 1) % 8;
		if (write(sh->assist ? sh->afd : sh->efd, &n, sizeof(n)) !=
		    sizeof(n) && !sh->assist) {
			/* eventfd full (cannot happen below 2^64 - 1) */
			ST_ADD(sh, counter, n);
		}
	}
	return usage > sh->high_bytes ? 2 : usage > target ? 1 : 0;
}

/*
 * Without usage thresholds (cgroup2, or v1 with high off) usage is
 * sampled all the time: every interval_ns while it is well under the
 * early-warning level, every 10 ms within 15 % of the limit under it.
 */
static int watch_ms(struct mp_shrinker *sh)
{
	uint64_t usage = ST_GET(sh, usage_bytes);
	double high = sh->pol.high > 0 ? sh->pol.high : sh->pol.target;

	if ((double)usage >= (high - 0.15) * (double)sh->ms.limit)
		return 10;
	return (int)((sh->pol.interval_ns + 999999) / 1000000);
}

/* The sampling period now, in ms; -1 for none. */
static int sample_ms(struct mp_shrinker *sh, int state)
{
	/* above high: look again soon, a request may not be enough */
	if (state == 2)
		return MP_EMUL_FAST_MS;
	if (sh->thresh_efd < 0 && sh->ms.limited)
		/* no early warning from the kernel: watch usage */
		return watch_ms(sh);
	if (state || now_ns() - sh->last_event_ns < sh->pol.linger_ns)
		return (int)((sh->pol.interval_ns + 999999) / 1000000);
	return -1;
}

/*
 * Tell the owner's waits that no request will come any more, and the
 * clients' (mpctl add under register): the pipe's read end is closed, as
 * when the owner exits, so that their writes fail and their waits end.
 */
static void emul_gone(struct mp_shrinker *sh, const char *msg)
{
	uint64_t one = 1;

	snprintf(sh->gone_msg, sizeof(sh->gone_msg), "%s", msg);
	__atomic_store_n(&sh->gone, 1, __ATOMIC_RELEASE);
	if (sh->pipe_r >= 0) {
		epoll_ctl(sh->emul_epfd, EPOLL_CTL_DEL, sh->pipe_r, NULL);
		close_fd(&sh->pipe_r);
	}
	if (write(sh->gone_efd, &one, sizeof(one)) != sizeof(one))
		return;	/* a full eventfd is readable already */
}

static void *emul_thread(void *arg)
{
	struct mp_shrinker *sh = arg;
	struct epoll_event evs[4];
	uint64_t v, now, next = 0;
	int i, n, ms, timeout, state = 0;

	if (sh->pol.rt_priority > 0) {
		struct sched_param sp = { .sched_priority = sh->pol.rt_priority };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	for (;;) {
		/*
		 * Samples are due by the clock, not by idleness: the pipe
		 * wakes us up for every chunk the allocators account.
		 */
		ms = sample_ms(sh, state);
		now = now_ns();
		if (ms < 0) {
			next = 0;
			timeout = -1;
		} else {
			if (!next || next > now + (uint64_t)ms * 1000000ULL)
				next = now + (uint64_t)ms * 1000000ULL;
			timeout = next > now ?
				  (int)((next - now + 999999) / 1000000) : 0;
		}
		n = epoll_wait(sh->emul_epfd, evs, 4, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case W_STOP:
				return NULL;
			case W_PIPE:
				emul_drain_pipe(sh);
				break;
			case W_THRESH:
				if (read(sh->thresh_efd, &v, sizeof(v)) > 0) {
					ST_ADD(sh, thresholds, 1);
					sh->last_event_ns = now_ns();
					state = emul_request(sh, -1);
					next = 0;
				}
				break;
			case W_SOURCE: {
				struct mp_event ev;
				struct mp_err err;

				if (mp_source_read(sh->src, &ev, &err) < 0) {
					/* the cgroup went away: stop listening */
					epoll_ctl(sh->emul_epfd, EPOLL_CTL_DEL,
						  mp_source_fd(sh->src), NULL);
					emul_gone(sh, err.msg);
					break;
				}
				if (!ev.count)
					break;
				ST_ADD(sh, events[ev.level], 1);
				sh->last_event_ns = now_ns();
				state = emul_request(sh, ev.level);
				next = 0;
				break;
			}
			}
		}
		if (next && now_ns() >= next) {
			ST_ADD(sh, samples, 1);
			state = emul_request(sh, -1);
			next = 0;
		}
	}
	return NULL;
}

static int emul_watch(struct mp_shrinker *sh, int fd, uint32_t what)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = what };

	return epoll_ctl(sh->emul_epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The emulation's policy, for the emulation and the early warning alike. */
static int emul_policy(struct mp_shrinker *sh,
		       const struct mp_shrinker_cfg *cfg, struct mp_err *err)
{
	sh->pol = cfg->policy;
	mp_emul_policy_defaults(&sh->pol);
	if (sh->pol.target >= 1.0 || sh->pol.high > 1.0)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "shrinker policy: target and high must be fractions of the limit");
	return 0;
}

/*
 * What the emulation and the early warning share, once the caller has
 * chosen sh->ucg (and, emulating, opened sh->src, the request eventfd and
 * the pipe): usage and limit, the usage thresholds, the emulator's epoll
 * set, and last the thread, when all it reads is in place. what names
 * the machinery in messages.
 */
static int emul_start(struct mp_shrinker *sh, const char *what,
		      struct mp_err *err)
{
	int e;

	if (mp_memstat_open(&sh->ms, &sh->ucg))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot read the memory usage of '%s'",
			       sh->ucg.path);
	ST_SET(sh, limit_bytes, sh->ms.limit);
	sh->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sh->emul_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sh->stop_efd < 0 || sh->emul_epfd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up %s", what);
	/* not for "/": it has no limit (ms.limited is false) */
	if (sh->pol.high > 0 && sh->ucg.hier->version == MP_CG_V1 &&
	    sh->ms.limited)
		register_thresholds(sh);
	sh->high_bytes = sh->pol.high > 0 ?
			 (uint64_t)(sh->pol.high * (double)sh->ms.limit) :
			 (uint64_t)(sh->pol.target * (double)sh->ms.limit);
	if (emul_watch(sh, sh->stop_efd, W_STOP) ||
	    (sh->pipe_r >= 0 && emul_watch(sh, sh->pipe_r, W_PIPE)) ||
	    (sh->src && emul_watch(sh, mp_source_fd(sh->src), W_SOURCE)) ||
	    (sh->thresh_efd >= 0 && emul_watch(sh, sh->thresh_efd, W_THRESH)))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
	e = mp_thread_start(&sh->thr, emul_thread, sh);
	if (e)
		return mp_errf(err, MP_EXIT_FAILURE, e, "cannot start %s", what);
	sh->running = true;
	return 0;
}

static int open_emulated(struct mp_shrinker *sh,
			 const struct mp_shrinker_cfg *cfg,
			 const struct mp_target *t, struct mp_err *err)
{
	struct mp_source_cfg scfg = {
		.backend = cfg->backend,
		.target = t,
		/* without a cgroup or backend, the service manager's file */
		.env_watch = cfg->backend == MP_BACKEND_AUTO,
	};
	bool picked = false;
	int pfd[2], ret;

	sh->mode = MP_SHRINKER_EMULATED;
	if (emul_policy(sh, cfg, err))
		return -1;
	scfg.level = sh->pol.level;
	if (scfg.backend == MP_BACKEND_AUTO ||
	    scfg.backend == MP_BACKEND_MEMPRESSURE) {
		scfg.backend = mp_backend_pick(MP_USE_EMULATION);
		if (scfg.backend == MP_BACKEND_AUTO)
			scfg.backend = MP_BACKEND_PSI;	/* its error, below */
		picked = true;
	}
	ret = mp_source_open(&scfg, &sh->src, err);
	/* chosen for the user, and not theirs to use: PSI, as listen does */
	if (ret && picked && scfg.backend != MP_BACKEND_PSI &&
	    err->status == MP_EXIT_NOPERM &&
	    !mp_backend_probe(MP_BACKEND_PSI, NULL)) {
		scfg.backend = MP_BACKEND_PSI;
		ret = mp_source_open(&scfg, &sh->src, err);
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
		e = mp_source_open(&scfg, &sh->src, err);
		free(host);
		if (e)
			return -1;
	} else {
		sh->cg = *mp_source_cgroup(sh->src);
	}
	sh->backend = mp_source_backend(sh->src);
	sh->have_cg = true;
	sh->ucg = sh->cg;

	sh->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sh->gone_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sh->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sh->efd < 0 || sh->gone_efd < 0 || sh->epfd < 0 ||
	    pipe2(pfd, O_CLOEXEC))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up the shrinker emulation");
	/* the owner waits on requests and on the source failing */
	{
		struct epoll_event ev = { .events = EPOLLIN };

		if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->efd, &ev) ||
		    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->gone_efd, &ev))
			return mp_errf(err, MP_EXIT_FAILURE, errno,
				       "epoll_ctl");
	}
	sh->pipe_r = pfd[0];
	sh->fd = pfd[1];
	fcntl(sh->pipe_r, F_SETFL, O_NONBLOCK);
	return emul_start(sh, "the shrinker emulation", err);
}

/* Add the early-warning eventfd to the epoll instance readers wait on. */
static int attach_assist(struct mp_shrinker *sh, int afd, struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (sh->epfd < 0) {
		/* v1: the kernel's eventfd and ours, behind one fd */
		sh->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (sh->epfd < 0 ||
		    epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->efd, &ev))
			return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	}
	if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, afd, &ev))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll");
	sh->afd = afd;
	return 0;
}

/*
 * The kernel's shrinker asks from reclaim, through a work item after the
 * reclaim window: in a cgroup of anonymous memory without swap, the OOM
 * killer comes first. The early warning runs the emulation's usage policy
 * beside it, its requests on a second eventfd (see mp_shrinker_read()).
 */
static int open_assist(struct mp_shrinker *sh,
		       const struct mp_shrinker_cfg *cfg,
		       const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *mcg = mp_target_cg(t, MP_ROLE_MEMORY);
	int afd;

	if (emul_policy(sh, cfg, err))
		return -1;
	if (!mcg)
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "no memory cgroup '%s' for the shrinker's early warning",
			       sh->cg.path);
	sh->ucg = *mcg;
	afd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (afd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up the shrinker's early warning");
	if (attach_assist(sh, afd, err)) {
		close(afd);
		return -1;
	}
	sh->assist = true;
	return emul_start(sh, "the shrinker's early warning", err);
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
		return mp_errf(err, MP_EXIT_USAGE, 0,
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
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "shrinker");
		}
		t = own;
	}
	if (mp_shrinker_wants_kernel(cfg)) {
		ret = open_kernel(sh, t, err);
		if (!ret && cfg->assist)
			ret = open_assist(sh, cfg, t, err);
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
		       mp_errf(err, MP_EXIT_FAILURE, 0, "cgroup removed '%s'",
			       sh->cg.path) :
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
	uint64_t k = 0, a = 0;
	int ret;

	if (__atomic_load_n(&sh->gone, __ATOMIC_ACQUIRE))
		return mp_errf(err, MP_EXIT_FAILURE, 0, "%s", sh->gone_msg);
	ret = kernel_read(sh, &k, err);
	if (ret < 0)
		return -1;
	if (!ret)
		k = 0;
	if (sh->afd >= 0 && read(sh->afd, &a, sizeof(a)) == sizeof(a) && a) {
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
			sh->fd : -1, .events = 0 },
	};
	uint64_t deadline = 0, now;
	int ret, t = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;

	if (timeout_ms >= 0)
		deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	for (;;) {
		ret = poll(pfd, 2, t);
		if (ret < 0)
			return mp_errf(err, MP_EXIT_FAILURE, errno, "poll");
		if (pfd[1].revents & (POLLERR | POLLHUP)) {
			mp_errf(err, MP_EXIT_FAILURE, 0,
				"the shrinker is gone: its owner has exited or its cgroup was removed");
			if (err)
				err->errnum = EPIPE;	/* as a write would */
			return -1;
		}
		if (ret > 0 && pfd[0].revents) {
			ret = mp_shrinker_read(sh, chunks, err);
			if (ret)
				return ret;
		}
		if (timeout_ms >= 0) {
			now = now_ns();
			if (now >= deadline)
				return 0;
			/* poll() takes an int: about 24.8 days at most */
			t = (deadline - now) / 1000000 >= INT_MAX ? INT_MAX :
			    (int)((deadline - now + 999999) / 1000000);
		}
	}
}

int mp_shrinker_add(struct mp_shrinker *sh, int64_t chunks,
		    struct mp_err *err)
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

const struct mp_cgroup *mp_shrinker_cgroup(const struct mp_shrinker *sh)
{
	return sh->have_cg ? &sh->cg : NULL;
}

void mp_shrinker_stats(const struct mp_shrinker *sh,
		       struct mp_shrinker_stats *st)
{
	const uint64_t *src = (const uint64_t *)&sh->st;
	uint64_t *dst = (uint64_t *)st;
	size_t i;

	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void mp_shrinker_close(struct mp_shrinker *sh)
{
	if (!sh)
		return;
	/* the thread is gone before anything it uses is closed or freed */
	if (sh->running)
		mp_thread_stop(sh->thr, sh->stop_efd);
	mp_source_close(sh->src);
	mp_memstat_close(&sh->ms);
	close_fd(&sh->pipe_r);
	close_fd(&sh->stop_efd);
	close_fd(&sh->thresh_efd);
	close_fd(&sh->emul_epfd);
	close_fd(&sh->gone_efd);
	close_fd(&sh->epfd);
	if (sh->close_fds || sh->assist)
		close_fd(&sh->afd);
	if (sh->close_fds) {
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
		 sh->afd);
	sh->envp[0] = sh->env[0];
	sh->envp[1] = sh->env[1];
	sh->envp[2] = sh->env[2];
	sh->envp[3] = sh->env[3];
	sh->envp[4] = sh->env[4];
	sh->envp[5] = sh->afd >= 0 ? sh->env[5] : NULL;
	sh->envp[6] = NULL;
	return sh->envp;
}

int mp_shrinker_pass(struct mp_shrinker *sh, struct mp_child *c,
		     struct mp_err *err)
{
	if (mp_child_env(c, "MPCTL_SHRINKER_", mp_shrinker_env(sh), err) ||
	    (sh->mode != MP_SHRINKER_KERNEL_V2 &&
	     mp_child_keep(c, sh->efd, err)) ||
	    mp_child_keep(c, sh->fd, err) || mp_child_keep(c, sh->afd, err))
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
		return mp_errf(err, MP_EXIT_USAGE, 0,
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
			   MP_SHRINKER_KERNEL_V1 : MP_SHRINKER_EMULATED;
		/* requests are never waited for by blocking in read() */
		fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) | O_NONBLOCK);
	}
	*out = sh;
	return 0;
}

#define MP_CGROUP_SUPER_MAGIC	0x27e0eb
#define MP_CGROUP2_SUPER_MAGIC	0x63677270

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
	if (b != MP_BACKEND_MEMPRESSURE)	/* the emulator's pipe */
		return S_ISFIFO(st.st_mode) && (fl & O_ACCMODE) != O_RDONLY;
	if (fstatfs(fd, &fs) || !S_ISREG(st.st_mode))
		return false;
	return fs.f_type == (abi == 2 ? MP_CGROUP2_SUPER_MAGIC :
			     MP_CGROUP_SUPER_MAGIC);
}

int mp_shrinker_client_from_env(struct mp_shrinker **out, struct mp_err *err)
{
	const char *e_efd = getenv("MPCTL_SHRINKER_EFD");
	const char *e_fd = getenv("MPCTL_SHRINKER_FD");
	const char *e_chunk = getenv("MPCTL_SHRINKER_CHUNK");
	const char *e_backend = getenv("MPCTL_SHRINKER_BACKEND");
	const char *e_abi = getenv("MPCTL_SHRINKER_ABI");
	const char *e_afd = getenv("MPCTL_SHRINKER_AFD");
	enum mp_backend b = MP_BACKEND_MEMCG;
	long long efd = -1, fd, chunk, afd;
	int abi;

	if (!e_fd || !e_chunk || !e_abi)
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
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
			       abi == 2 ? "a cgroup2 mempressure.shrinker file" :
			       "a cgroup v1 mempressure.shrinker file");
	if (mp_shrinker_client((int)efd, (int)fd, (uint64_t)chunk, abi, b,
			       false, out, err))
		return -1;
	/* the early warning beside a kernel shrinker, if handed down */
	if (e_afd) {
		if (mp_parse_long(e_afd, 0, INT_MAX, &afd) ||
		    !fd_is_eventfd((int)afd) ||
		    attach_assist(*out, (int)afd, err)) {
			mp_shrinker_close(*out);
			return mp_errf(err, MP_EXIT_USAGE, 0,
				       "invalid MPCTL_SHRINKER_AFD '%s'",
				       e_afd);
		}
	}
	return 0;
}
