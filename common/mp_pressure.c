// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <poll.h>
#include <unistd.h>
#include <linux/capability.h>

#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_pressure_int.h"
#include "mp_thread.h"

#define PSI_WINDOW_MIN_US    500000ULL
#define PSI_WINDOW_MAX_US    10000000ULL
#define PSI_UNPRIV_WINDOW_US 2000000ULL

static const char *const level_names[MP_LEVEL_NR] = {
	[MP_LEVEL_LOW] = "low",
	[MP_LEVEL_MEDIUM] = "medium",
	[MP_LEVEL_CRITICAL] = "critical",
};

static const char *const mode_names[] = {
	[MP_MODE_DEFAULT] = "default",
	[MP_MODE_HIERARCHY] = "hierarchy",
	[MP_MODE_LOCAL] = "local",
};

/* The index of s in names[0..n), or -1 with errno EINVAL. */
static int name_index(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	errno = EINVAL;
	return -1;
}

const char *mp_level_name(enum mp_level l)
{
	return l >= 0 && l < MP_LEVEL_NR ? level_names[l] : "unknown";
}

int mp_level_parse(const char *s, enum mp_level *l)
{
	/* "oom" is the mempressure ABI's name of critical */
	int i = strcmp(s, "oom") ? name_index(level_names, MP_LEVEL_NR, s) :
				   MP_LEVEL_CRITICAL;

	if (i < 0)
		return -1;
	*l = i;
	return 0;
}

const char *mp_mode_name(enum mp_mode m)
{
	return mode_names[m];
}

int mp_mode_parse(const char *s, enum mp_mode *m)
{
	int i = name_index(mode_names,
			   sizeof(mode_names) / sizeof(mode_names[0]), s);

	if (i < 0)
		return -1;
	*m = i;
	return 0;
}

/*
 * Default triggers, the ones Android's lmkd uses: stall within a 1 s
 * window of 70 ms (some) for low, 100 ms (some) for medium and 70 ms
 * (full) for critical. Without CAP_SYS_RESOURCE the kernel only accepts
 * windows in multiples of 2 s, so the unprivileged defaults scale to 2 s.
 */
void mp_psi_default(enum mp_level l, struct mp_psi_trigger *t)
{
	static const struct mp_psi_trigger def[MP_LEVEL_NR] = {
		[MP_LEVEL_LOW] = { false, 70000, 1000000 },
		[MP_LEVEL_MEDIUM] = { false, 100000, 1000000 },
		[MP_LEVEL_CRITICAL] = { true, 70000, 1000000 },
	};

	*t = def[l];
	if (!mp_privileged()) {
		t->stall_us *= 2;
		t->window_us *= 2;
	}
}

bool mp_privileged(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	return data[CAP_SYS_RESOURCE / 32].effective &
	       (1U << (CAP_SYS_RESOURCE % 32));
}

static int psi_time(const char *s, uint64_t *us)
{
	uint64_t ns;
	long long v;

	/* a bare number is microseconds, as in the kernel's format */
	if (!mp_parse_long(s, 0, INT64_MAX / 1000, &v)) {
		*us = v;
		return 0;
	}
	if (mp_parse_duration(s, &ns) || ns == MP_DURATION_INFINITY)
		return -1;
	*us = ns / 1000;
	return 0;
}

int mp_psi_parse(const char *spec, struct mp_psi_trigger *t, struct mp_err *err)
{
	char kind[16], stall[32], window[32], extra[2];
	int n;

	n = sscanf(spec, "%15s %31s %31s %1s", kind, stall, window, extra);
	if (n != 3)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid psi trigger '%s': expected 'some|full <stall> <window>'",
			spec);
	if (!strcmp(kind, "some"))
		t->full = false;
	else if (!strcmp(kind, "full"))
		t->full = true;
	else
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid psi trigger '%s': '%s' is neither 'some' nor 'full'",
			spec, kind);
	if (psi_time(stall, &t->stall_us))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid psi stall time '%s'", stall);
	if (psi_time(window, &t->window_us))
		return mp_errf(err, MP_EXIT_USAGE, 0, "invalid psi window '%s'",
			       window);
	snprintf(t->window_arg, sizeof(t->window_arg), "%s", window);
	return 0;
}

int mp_psi_check(const struct mp_psi_trigger *t, bool privileged,
		 struct mp_err *err)
{
	if (t->window_us < PSI_WINDOW_MIN_US ||
	    t->window_us > PSI_WINDOW_MAX_US)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "psi window %" PRIu64
			       " us out of range: must be 500000 to 10000000 us",
			       t->window_us);
	if (t->stall_us == 0 || t->stall_us > t->window_us)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "psi stall %" PRIu64
			       " us out of range: must be 1 to the window (%" PRIu64
			       " us)",
			       t->stall_us, t->window_us);
	/* a privilege missing, not a usage error: 77, in the user's words */
	if (!privileged && t->window_us % PSI_UNPRIV_WINDOW_US) {
		if (t->window_arg[0])
			return mp_errf(
				err, MP_EXIT_NOPERM, 0,
				"psi window '%s': without CAP_SYS_RESOURCE it must be a multiple of 2s",
				t->window_arg);
		return mp_errf(
			err, MP_EXIT_NOPERM, 0,
			"psi window %" PRIu64
			" us: without CAP_SYS_RESOURCE it must be a multiple of 2s",
			t->window_us);
	}
	return 0;
}

/* The entry is complete before epoll can report it. */
static int add_watch(struct mp_source *src, int fd, enum mp_level level)
{
	struct epoll_event ev = {
		.events = EPOLLIN,
		.data.u32 = src->nwatch,
	};
	struct mp_watch *w = &src->watch[src->nwatch];

	w->fd = fd;
	w->level = level;
	if (epoll_ctl(src->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -1;
	src->nwatch++;
	return 0;
}

/* The watch of a level, or -1. Read-only: safe from the relay thread. */
static int find_watch(const struct mp_source *src, enum mp_level level)
{
	int i;

	for (i = 0; i < src->nwatch; i++)
		if (src->watch[i].level == level)
			return i;
	return -1;
}

/*
 * The watch of a level, made (with a fresh eventfd) if it is missing.
 * Only before the relay thread starts.
 */
static int level_watch(struct mp_source *src, enum mp_level level)
{
	int i, fd;

	i = find_watch(src, level);
	if (i >= 0)
		return i;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -1;
	if (add_watch(src, fd, level)) {
		close(fd);
		return -1;
	}
	return src->nwatch - 1;
}

static void relay_signal(struct mp_source *src, int watch, uint64_t n)
{
	if (watch >= 0 && watch < src->nwatch && n &&
	    write(src->watch[watch].fd, &n, sizeof(n)) < 0)
		atomic_store(&src->trig_lost, true);
}

/*
 * Trigger files (PSI, cgroup2 mempressure.level) hand out each event to
 * the first poll() that looks: a poll() of an epoll set holding them
 * would consume the event before epoll_wait() reports it. So a thread
 * blocks in poll() on them and turns each event into eventfd counts, and
 * the source's epoll set holds eventfds only. It sleeps until an event
 * or mp_source_close(): no periodic wake-up.
 */
/*
 * memory.events changed: MP_LEVEL_CRITICAL when max, oom or oom_kill
 * grew (allocations hit memory.max), MP_LEVEL_MEDIUM when only high grew
 * (throttled above memory.high), MP_LEVEL_NR when neither did (another
 * counter), -1 when the file is gone.
 */
static int events_level(struct mp_trigger *t)
{
	uint64_t high = 0, max = 0, v;
	char buf[512], key[32], *p;
	int level = MP_LEVEL_NR;
	ssize_t n;

	n = pread(t->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "%31s %" SCNu64, key, &v) != 2)
			continue;
		if (!strcmp(key, "high"))
			high = v;
		else if (!strcmp(key, "max") || !strcmp(key, "oom") ||
			 !strcmp(key, "oom_kill"))
			max += v;
	}
	if (max > t->max)
		level = MP_LEVEL_CRITICAL;
	else if (high > t->high)
		level = MP_LEVEL_MEDIUM;
	t->high = high;
	t->max = max;
	return level;
}

static void *relay_fn(void *arg)
{
	struct mp_source *src = arg;
	struct pollfd pfd[MP_TRIG_NR + 1];
	int i;

	pfd[0].fd = src->stop_fd;
	pfd[0].events = POLLIN;
	for (i = 0; i < src->ntrig; i++) {
		pfd[i + 1].fd = src->trig[i].fd;
		pfd[i + 1].events = POLLPRI;
	}
	for (;;) {
		if (poll(pfd, src->ntrig + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			return NULL;
		for (i = 0; i < src->ntrig; i++) {
			struct mp_trigger *t = &src->trig[i];
			short rev = pfd[i + 1].revents;
			enum mp_level level;
			uint64_t cnt = 1;
			char buf[64], name[16];
			ssize_t n;

			if (t->events && (rev & (POLLPRI | POLLERR))) {
				/* a changed file polls as POLLERR too */
				int el = events_level(t);

				if (el < 0)
					goto lost;
				/* another counter, or below the threshold */
				if (el == MP_LEVEL_NR ||
				    el < (int)src->watch[t->watch].level)
					continue;
				relay_signal(src, t->watch, 1);
				if (el > (int)src->watch[t->watch].level)
					relay_signal(src, find_watch(src, el),
						     1);
				continue;
			}
			if (rev & (POLLERR | POLLHUP | POLLNVAL)) {
lost:
				/* the file is gone: wake the reader, stop */
				atomic_store(&src->trig_lost, true);
				relay_signal(src, t->watch, 1);
				return NULL;
			}
			if (!(rev & POLLPRI))
				continue;
			if (!t->leveled) {
				relay_signal(src, t->watch, 1);
				continue;
			}
			/* cgroup2 mempressure.level: "<level> <count>\n" */
			n = pread(t->fd, buf, sizeof(buf) - 1, 0);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			if (sscanf(buf, "%15s %" SCNu64, name, &cnt) != 2 ||
			    mp_level_parse(name, &level) ||
			    level < src->watch[t->watch].level)
				level = src->watch[t->watch].level;
			/* the threshold counts all, the level's watch tells it */
			relay_signal(src, t->watch, cnt);
			if (level > src->watch[t->watch].level)
				relay_signal(src, find_watch(src, level), cnt);
		}
	}
	atomic_store(&src->trig_lost, true);
	return NULL;
}

/*
 * A cgroup2 mempressure.level trigger reports the level of each event, and
 * the relay signals that level's watch: every level above the trigger's
 * gets its watch now, as the relay must not add to src->watch[] while
 * mp_source_read() indexes it.
 */
static int relay_watches(struct mp_source *src)
{
	int i, l;

	for (i = 0; i < src->ntrig; i++) {
		if (!src->trig[i].leveled && !src->trig[i].events)
			continue;
		for (l = src->watch[src->trig[i].watch].level + 1;
		     l < MP_LEVEL_NR; l++)
			if (level_watch(src, l) < 0)
				return -1;
	}
	return 0;
}

int mp_source_start(struct mp_source *src, struct mp_err *err)
{
	int ret;

	if (!src->ntrig)
		return 0;
	if (relay_watches(src))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "eventfd");
	src->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (src->stop_fd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "eventfd");
	/* the thread takes no signals: they belong to the caller */
	ret = mp_thread_start(&src->relay, relay_fn, src);
	if (ret)
		return mp_errf(err, MP_EXIT_FAILURE, ret,
			       "cannot start the trigger thread");
	src->relay_started = true;
	return 0;
}

/*
 * cgroup v1 notification: "<eventfd> <fd of file> <args>" written to the
 * cgroup's cgroup.event_control. The eventfd stays ours; the others can be
 * closed once the kernel holds the registration.
 */
int mp_source_v1(struct mp_source *src, const char *file, const char *args,
		 enum mp_level level, struct mp_err *err)
{
	char path[PATH_MAX + 64], cmd[128];
	int efd = -1, lfd = -1, cfd = -1, n, ret = -1;

	snprintf(path, sizeof(path), "%s/%s", src->cg.dir, file);
	snprintf(src->file, sizeof(src->file), "%s", path);
	lfd = open(path, O_RDONLY | O_CLOEXEC);
	if (lfd < 0) {
		mp_errf(err, -1, errno, "cannot open '%s'", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cgroup.event_control", src->cg.dir);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (cfd < 0) {
		mp_errf(err, -1, errno, "cannot open '%s'", path);
		goto out;
	}
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "cannot create eventfd");
		goto out;
	}
	n = snprintf(cmd, sizeof(cmd), "%d %d %s", efd, lfd, args);
	if (write(cfd, cmd, n) != n) {
		mp_errf(err, errno == EINVAL ? MP_EXIT_USAGE : -1, errno,
			"cannot register '%s' on '%s'", args, path);
		goto out;
	}
	/* the kernel holds the registration: the eventfd is the watch's */
	if (add_watch(src, efd, level)) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
		goto out;
	}
	efd = -1;
	ret = 0;
out:
	if (efd >= 0)
		close(efd);
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	return ret;
}

/*
 * A trigger written to an open file: PSI's "some 70000 1000000", or the
 * level name on a cgroup2 mempressure.level. poll() reports POLLPRI.
 */
int mp_source_trigger(struct mp_source *src, const char *path, const char *trig,
		      enum mp_level level, bool leveled, struct mp_err *err)
{
	size_t len = strlen(trig) + 1;
	int fd, e;

	snprintf(src->file, sizeof(src->file), "%s", path);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return mp_errf(err, -1, errno, "cannot open '%s'", path);
	if (write(fd, trig, len) != (ssize_t)len) {
		e = errno;
		close(fd);
		return mp_errf(err, e == EINVAL ? MP_EXIT_USAGE : -1, e,
			       "cannot register trigger '%s' on '%s'", trig,
			       path);
	}
	src->trig[src->ntrig].fd = fd;
	src->trig[src->ntrig].leveled = leveled;
	src->trig[src->ntrig].watch = level_watch(src, level);
	if (src->trig[src->ntrig].watch < 0) {
		e = errno;
		close(fd);
		return mp_errf(err, MP_EXIT_FAILURE, e, "eventfd");
	}
	src->ntrig++;
	return 0;
}

/*
 * cgroup2 memory.events beside PSI: the kernel notifies (POLLPRI) when a
 * counter changes, and high, max and oom change before a stall shows in
 * PSI's averages. A cgroup without the memory controller has no file.
 */
int mp_source_events(struct mp_source *src, enum mp_level level,
		     struct mp_err *err)
{
	struct mp_trigger *t = &src->trig[src->ntrig];
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/memory.events", src->cg.dir);
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0)
		return errno == ENOENT ? 0 :
					 mp_errf(err, -1, errno,
						 "cannot open '%s'", path);
	t->events = true;
	/* the counts so far, and the kernel's notion of what we have seen */
	events_level(t);
	t->watch = level_watch(src, level);
	if (t->watch < 0) {
		close(t->fd);
		return mp_errf(err, MP_EXIT_FAILURE, errno, "eventfd");
	}
	src->ntrig++;
	return 0;
}

int mp_source_group(struct mp_source *const *src, int n, struct mp_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i, gfd;

	gfd = epoll_create1(EPOLL_CLOEXEC);
	if (gfd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_create1");
	for (i = 0; i < n; i++) {
		if (!src[i])
			continue;
		ev.data.u32 = i;
		if (epoll_ctl(gfd, EPOLL_CTL_ADD, src[i]->epfd, &ev)) {
			mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_ctl");
			close(gfd);
			return -1;
		}
	}
	return gfd;
}

int mp_source_fd(const struct mp_source *src)
{
	return src->epfd;
}

enum mp_backend mp_source_backend(const struct mp_source *src)
{
	return src->backend;
}

const struct mp_cgroup *mp_source_cgroup(const struct mp_source *src)
{
	return &src->cg;
}

const char *mp_source_file(const struct mp_source *src)
{
	return src->file;
}

const char *mp_source_note(const struct mp_source *src)
{
	return src->note[0] ? src->note : NULL;
}

int mp_source_read(struct mp_source *src, struct mp_event *ev,
		   struct mp_err *err)
{
	struct epoll_event evs[MP_LEVEL_NR];
	bool got = false;
	int i, n;

	n = epoll_wait(src->epfd, evs, MP_LEVEL_NR, 0);
	if (n < 0)
		return errno == EINTR ? 0 :
					mp_errf(err, MP_EXIT_FAILURE, errno,
						"epoll_wait");
	ev->time_ns = mp_now_ns(CLOCK_REALTIME);
	ev->mono_ns = mp_now_ns(CLOCK_MONOTONIC);
	ev->count = 0;
	ev->level = MP_LEVEL_LOW;
	for (i = 0; i < n; i++) {
		struct mp_watch *w = &src->watch[evs[i].data.u32];
		uint64_t cnt;

		if (read(w->fd, &cnt, sizeof(cnt)) != sizeof(cnt))
			continue;
		if (!got || w->level > ev->level)
			ev->level = w->level;
		/* the threshold's watch counts every notification */
		if (w == &src->watch[0] || cnt > ev->count)
			ev->count = cnt;
		got = true;
	}
	/* memcg signals the eventfd once more when the cgroup goes away */
	if ((got || atomic_load(&src->trig_lost)) && !src->system &&
	    !mp_cg_exists(&src->cg))
		return mp_errf(err, MP_EXIT_FAILURE, 0, "cgroup removed '%s'",
			       src->cg.path);
	if (atomic_load(&src->trig_lost))
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "lost the trigger on '%s'", src->file);
	return got;
}

struct mp_source *mp_source_new(enum mp_backend b, struct mp_err *err)
{
	struct mp_source *src = calloc(1, sizeof(*src));

	if (!src) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "out of memory");
		return NULL;
	}
	src->backend = b;
	src->stop_fd = -1;
	src->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (src->epfd < 0) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_create1");
		free(src);
		return NULL;
	}
	return src;
}

void mp_source_close(struct mp_source *src)
{
	int i;

	if (!src)
		return;
	/* the relay is gone before anything it uses is closed or freed */
	if (src->relay_started)
		mp_thread_stop(src->relay, src->stop_fd);
	if (src->stop_fd >= 0)
		close(src->stop_fd);
	for (i = 0; i < src->ntrig; i++)
		close(src->trig[i].fd);
	for (i = 0; i < src->nwatch; i++)
		close(src->watch[i].fd);
	if (src->epfd >= 0)
		close(src->epfd);
	free(src);
}
