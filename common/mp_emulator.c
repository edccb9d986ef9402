// SPDX-License-Identifier: GPL-2.0
/*
 * The shrinker emulator: its thread, its policy and the memcg v1 usage
 * thresholds it registers. See mp_emulator.h for the two roles and the
 * policy, mp_shrinker.h for the contract it keeps.
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
#include <unistd.h>

#include "mp_clock.h"
#include "mp_emulator.h"
#include "mp_memstat.h"
#include "mp_thread.h"

/* requests younger than this are taken as still being freed */
#define EMUL_INFLIGHT_NS 10000000ULL
/* sampling period while usage is above the usage threshold */
#define MP_EMUL_FAST_MS 2

enum { W_STOP, W_PIPE, W_SOURCE, W_THRESH };

struct mp_emulator {
	struct mp_emul_policy pol;
	struct mp_cgroup ucg; /* where usage and limit are read */
	uint64_t chunk;
	int req_fd;	       /* the owner's request eventfd */
	bool early_warning;    /* beside a kernel shrinker: no counter */
	struct mp_source *src; /* emulation: the pressure source */
	int pipe_r;	       /* emulation: the accounting pipe */
	pthread_t thr;
	bool running;
	int stop_efd;
	int thresh_efd; /* one eventfd for every threshold */
	int epfd;	/* what the thread waits on */
	/*
	 * The pressure source failed (the cgroup was removed): the thread
	 * sets gone and makes gone_efd readable; the owner's reads then fail
	 * with gone_msg, so that its waits end.
	 */
	int gone_efd;
	int gone;
	char gone_msg[256];
	uint64_t high_bytes; /* usage above which sampling is fast */
	struct mp_memstat ms;
	char line[128]; /* partial line from the pipe */
	size_t line_len;
	uint64_t last_event_ns;
	uint64_t recent_ns[8]; /* in-flight requests: time, chunks */
	uint64_t recent_n[8];
	unsigned int recent_i;
	struct mp_shrinker_stats st; /* updated with __atomic */
};

#define ST_ADD(em, f, v) __atomic_add_fetch(&(em)->st.f, (v), __ATOMIC_RELAXED)
#define ST_SET(em, f, v) __atomic_store_n(&(em)->st.f, (v), __ATOMIC_RELAXED)
#define ST_GET(em, f)	 __atomic_load_n(&(em)->st.f, __ATOMIC_RELAXED)

static uint64_t now_ns(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

uint64_t mp_emul_high_mark(const struct mp_emul_policy *p, uint64_t limit)
{
	double hi = p->high > 0 ? p->high :
		    p->high < 0 ? (p->target > 0 ? p->target : MP_EMUL_TARGET) :
				  MP_EMUL_HIGH;

	return (uint64_t)((1.0 + hi) / 2 * (double)limit);
}

void mp_emul_policy_defaults(struct mp_emul_policy *p)
{
	static const double mins[MP_LEVEL_NR] = {
		MP_EMUL_MIN_LOW,
		MP_EMUL_MIN_MEDIUM,
		MP_EMUL_MIN_CRITICAL,
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
			p->min_frac[l] = 0; /* negative: explicitly none */
	if (!p->interval_ns)
		p->interval_ns = MP_EMUL_INTERVAL_NS;
	if (!p->linger_ns)
		p->linger_ns = MP_EMUL_LINGER_NS;
}

/* The policy, for the emulation and the early warning alike. */
int mp_emulator_policy(struct mp_emul_policy *p, struct mp_err *err)
{
	mp_emul_policy_defaults(p);
	if (p->target >= 1.0 || p->high > 1.0)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"shrinker policy: target and high must be fractions of the limit");
	return 0;
}

/*
 * memcg v1 usage thresholds: "<efd> <fd of usage_in_bytes> <bytes>" on
 * cgroup.event_control, one eventfd for all. The kernel signals a
 * threshold when usage crosses it either way.
 */
static int register_threshold(struct mp_emulator *em, uint64_t bytes)
{
	char path[PATH_MAX + 32], cmd[96];
	int ufd, cfd, n, ret = -1;

	snprintf(path, sizeof(path), "%s/memory.usage_in_bytes", em->ucg.dir);
	ufd = open(path, O_RDONLY | O_CLOEXEC);
	if (ufd < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.event_control", em->ucg.dir);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (cfd < 0)
		goto out;
	if (em->thresh_efd < 0)
		em->thresh_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (em->thresh_efd < 0)
		goto out;
	n = snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, em->thresh_efd, ufd,
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
 * The usage thresholds: high * limit, then MP_EMUL_STEPS more evenly up
 * to halfway between the last and the limit, so that usage that keeps
 * climbing after a request (the request is still being served, or was too
 * small) raises another event before the limit is reached.
 */
#define MP_EMUL_STEPS 4

static void register_thresholds(struct mp_emulator *em)
{
	double lim = (double)em->ms.limit, step;
	int i;

	step = (1.0 - em->pol.high) / (MP_EMUL_STEPS + 1);
	for (i = 0; i <= MP_EMUL_STEPS; i++)
		if (register_threshold(em,
				       (uint64_t)((em->pol.high + i * step) *
						  lim)))
			break;
}

/*
 * The most chunks one line may account: 2^40 chunks of the smallest
 * chunk (4 KiB) are 4 EiB, so no honest line comes near it. A line past
 * it, like a malformed one, is ignored, as the kernel rejects it.
 */
#define MP_EMUL_MAX_LINE (1LL << 40)

/* Apply "<efd> <+/-N>" lines from the pipe to the counter. */
static void apply_line(struct mp_emulator *em, const char *s)
{
	char *end;
	long long v;
	uint64_t c;

	errno = 0;
	(void)strtol(s, &end, 10);
	if (errno || end == s || (*end != ' ' && *end != '\t'))
		return;
	s = end;
	v = strtoll(s, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (errno || end == s || *end || v < -MP_EMUL_MAX_LINE ||
	    v > MP_EMUL_MAX_LINE)
		return;
	if (v > 0) {
		ST_ADD(em, counter, (uint64_t)v);
		ST_ADD(em, added, (uint64_t)v);
	} else if (v < 0) {
		c = ST_GET(em, counter);
		/* only this thread lowers the counter: no race to zero */
		ST_SET(em, counter, c > (uint64_t)-v ? c - (uint64_t)-v : 0);
		ST_ADD(em, removed, (uint64_t)-v);
	}
}

static void drain_pipe(struct mp_emulator *em)
{
	char buf[4096];
	ssize_t n, i;

	if (em->pipe_r < 0)
		return;
	while ((n = read(em->pipe_r, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n' || buf[i] == '\0') {
				em->line[em->line_len] = '\0';
				if (em->line_len)
					apply_line(em, em->line);
				em->line_len = 0;
			} else if (em->line_len + 1 < sizeof(em->line)) {
				em->line[em->line_len++] = buf[i];
			}
		}
	}
}

static uint64_t inflight(struct mp_emulator *em, uint64_t now)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		if (em->recent_n[i] &&
		    now - em->recent_ns[i] < EMUL_INFLIGHT_NS)
			sum += em->recent_n[i];
	return sum;
}

static bool level_floor_due(int level)
{
	return level > MP_LEVEL_LOW;
}

/* Whether the request eventfd still holds a count nobody has read. */
static bool unread(struct mp_emulator *em)
{
	struct pollfd pfd = { .fd = em->req_fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/*
 * The policy: chunks to ask for, from usage against the limit, and for an
 * event of a level (level >= 0) a floor of min_frac[level] of the counter.
 * Returns 0 when usage is under the target, 1 above it (keep sampling
 * every interval), 2 above the usage threshold (sample fast).
 */
static int request(struct mp_emulator *em, int level)
{
	uint64_t usage, counter, target, want = 0, fl = 0, n, now, busy;

	drain_pipe(em);
	if (mp_memstat_usage(&em->ms, &usage))
		return 0;
	ST_SET(em, usage_bytes, usage);
	now = now_ns();
	target = (uint64_t)(em->pol.target * (double)em->ms.limit);
	if (usage > target)
		want = (usage - target + em->chunk - 1) / em->chunk;
	busy = inflight(em, now);
	want = want > busy ? want - busy : 0;
	/* the last request not even read yet: asking more only piles up */
	if (want && !level_floor_due(level) && unread(em))
		want = 0;
	/* the early warning of a kernel shrinker cannot see its counter */
	counter = em->early_warning ? UINT64_MAX : ST_GET(em, counter);
	if (level >= 0 && !em->early_warning)
		fl = (uint64_t)ceil(em->pol.min_frac[level] * (double)counter);
	n = want > fl ? want : fl;
	if (n > counter)
		n = counter;
	if (n) {
		if (!em->early_warning)
			ST_SET(em, counter, counter - n);
		ST_ADD(em, requests, 1);
		ST_ADD(em, chunks_requested, n);
		em->recent_ns[em->recent_i] = now;
		em->recent_n[em->recent_i] = n;
		em->recent_i = (em->recent_i + 1) % 8;
		if (write(em->req_fd, &n, sizeof(n)) != sizeof(n) &&
		    !em->early_warning) {
			/* eventfd full (cannot happen below 2^64 - 1) */
			ST_ADD(em, counter, n);
		}
	}
	return usage > em->high_bytes ? 2 : usage > target ? 1 : 0;
}

/*
 * Without usage thresholds (cgroup2, or v1 with high off) usage is
 * sampled all the time: every interval_ns while it is well under the
 * usage threshold, every 10 ms within 15 % of the limit under it.
 */
static int watch_ms(struct mp_emulator *em)
{
	uint64_t usage = ST_GET(em, usage_bytes);
	double high = em->pol.high > 0 ? em->pol.high : em->pol.target;

	if ((double)usage >= (high - 0.15) * (double)em->ms.limit)
		return 10;
	return (int)((em->pol.interval_ns + 999999) / 1000000);
}

/* The sampling period now, in ms; -1 for none. */
static int sample_ms(struct mp_emulator *em, int state)
{
	/* above high: look again soon, a request may not be enough */
	if (state == 2)
		return MP_EMUL_FAST_MS;
	if (em->thresh_efd < 0 && em->ms.limited)
		/* no usage threshold from the kernel: watch usage */
		return watch_ms(em);
	if (state || now_ns() - em->last_event_ns < em->pol.linger_ns)
		return (int)((em->pol.interval_ns + 999999) / 1000000);
	return -1;
}

/*
 * Tell the owner's waits that no request will come any more, and the
 * clients' (mpctl add under register): the pipe's read end is closed, as
 * when the owner exits, so that their writes fail and their waits end.
 */
static void source_gone(struct mp_emulator *em, const char *msg)
{
	uint64_t one = 1;

	snprintf(em->gone_msg, sizeof(em->gone_msg), "%s", msg);
	__atomic_store_n(&em->gone, 1, __ATOMIC_RELEASE);
	if (em->pipe_r >= 0) {
		epoll_ctl(em->epfd, EPOLL_CTL_DEL, em->pipe_r, NULL);
		close(em->pipe_r);
		em->pipe_r = -1;
	}
	if (write(em->gone_efd, &one, sizeof(one)) != sizeof(one))
		return; /* a full eventfd is readable already */
}

/*
 * A pressure event: its level's request (true, *state set), or nothing
 * (false), or the end of the source.
 */
static bool source_event(struct mp_emulator *em, int *state)
{
	struct mp_event ev;
	struct mp_err err;

	if (mp_source_read(em->src, &ev, &err) < 0) {
		/* the cgroup went away: stop listening */
		epoll_ctl(em->epfd, EPOLL_CTL_DEL, mp_source_fd(em->src), NULL);
		source_gone(em, err.msg);
		return false;
	}
	if (!ev.count)
		return false;
	ST_ADD(em, events[ev.level], 1);
	em->last_event_ns = now_ns();
	*state = request(em, ev.level);
	return true;
}

static void *thread_main(void *arg)
{
	struct mp_emulator *em = arg;
	struct epoll_event evs[4];
	uint64_t v, now, next = 0;
	int i, n, ms, timeout, state = 0;

	if (em->pol.rt_priority > 0) {
		struct sched_param sp = { .sched_priority =
						  em->pol.rt_priority };

		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	for (;;) {
		/*
		 * Samples are due by the clock, not by idleness: the pipe
		 * wakes us up for every chunk the allocators account.
		 */
		ms = sample_ms(em, state);
		now = now_ns();
		if (ms < 0) {
			next = 0;
			timeout = -1;
		} else {
			if (!next || next > now + (uint64_t)ms * 1000000ULL)
				next = now + (uint64_t)ms * 1000000ULL;
			timeout = mp_poll_ms(next, now);
		}
		n = epoll_wait(em->epfd, evs, 4, timeout);
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
				drain_pipe(em);
				break;
			case W_THRESH:
				if (read(em->thresh_efd, &v, sizeof(v)) > 0) {
					ST_ADD(em, thresholds, 1);
					em->last_event_ns = now_ns();
					state = request(em, -1);
					next = 0;
				}
				break;
			case W_SOURCE:
				if (source_event(em, &state))
					next = 0;
				break;
			}
		}
		if (next && now_ns() >= next) {
			ST_ADD(em, samples, 1);
			state = request(em, -1);
			next = 0;
		}
	}
	return NULL;
}

static int watch(struct mp_emulator *em, int fd, uint32_t what)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = what };

	return epoll_ctl(em->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * Usage and limit, the usage thresholds, the thread's epoll set, and last
 * the thread, when all it reads is in place.
 */
static int setup(struct mp_emulator *em, const char *what, struct mp_err *err)
{
	int e;

	if (mp_memstat_open(&em->ms, &em->ucg))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot read the memory usage of '%s'",
			       em->ucg.path);
	ST_SET(em, limit_bytes, em->ms.limit);
	em->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	em->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (em->stop_efd < 0 || em->epfd < 0 ||
	    (em->src &&
	     (em->gone_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "cannot set up %s",
			       what);
	/* not for "/": it has no limit (ms.limited is false) */
	if (em->pol.high > 0 && em->ucg.hier->version == MP_CG_V1 &&
	    em->ms.limited)
		register_thresholds(em);
	em->high_bytes =
		em->pol.high > 0 ?
			(uint64_t)(em->pol.high * (double)em->ms.limit) :
			(uint64_t)(em->pol.target * (double)em->ms.limit);
	if (watch(em, em->stop_efd, W_STOP) ||
	    (em->pipe_r >= 0 && watch(em, em->pipe_r, W_PIPE)) ||
	    (em->src && watch(em, mp_source_fd(em->src), W_SOURCE)) ||
	    (em->thresh_efd >= 0 && watch(em, em->thresh_efd, W_THRESH)))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
	e = mp_thread_start(&em->thr, thread_main, em);
	if (e)
		return mp_errf(err, MP_EXIT_FAILURE, e, "cannot start %s",
			       what);
	em->running = true;
	return 0;
}

int mp_emulator_start(const struct mp_emulator_cfg *cfg, const char *what,
		      struct mp_emulator **out, struct mp_err *err)
{
	struct mp_emulator *em = calloc(1, sizeof(*em));

	if (!em) {
		mp_source_close(cfg->src);
		if (cfg->pipe_r >= 0)
			close(cfg->pipe_r);
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "%s", what);
	}
	em->pol = cfg->policy;
	em->ucg = *cfg->ucg;
	em->chunk = cfg->chunk_size;
	em->req_fd = cfg->req_fd;
	em->src = cfg->src;
	em->pipe_r = cfg->pipe_r;
	em->early_warning = !cfg->src;
	em->stop_efd = em->thresh_efd = em->epfd = em->gone_efd = -1;
	em->ms.usage_fd = -1;
	if (setup(em, what, err)) {
		mp_emulator_stop(em);
		return -1;
	}
	*out = em;
	return 0;
}

int mp_emulator_gone_fd(const struct mp_emulator *em)
{
	return em->gone_efd;
}

const char *mp_emulator_gone(const struct mp_emulator *em)
{
	return __atomic_load_n(&em->gone, __ATOMIC_ACQUIRE) ? em->gone_msg :
							      NULL;
}

void mp_emulator_stats(const struct mp_emulator *em,
		       struct mp_shrinker_stats *st)
{
	const uint64_t *src = (const uint64_t *)&em->st;
	uint64_t *dst = (uint64_t *)st;
	size_t i;

	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void mp_emulator_stop(struct mp_emulator *em)
{
	size_t i;

	if (!em)
		return;
	/* the thread is gone before anything it uses is closed or freed */
	if (em->running)
		mp_thread_stop(em->thr, em->stop_efd);
	mp_source_close(em->src);
	mp_memstat_close(&em->ms);
	{
		const int fds[] = { em->pipe_r, em->stop_efd, em->thresh_efd,
				    em->epfd, em->gone_efd };

		for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(em);
}
