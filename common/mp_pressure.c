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
#include <sys/vfs.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <poll.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_target.h"
#include "mp_thread.h"

#define PSI_WINDOW_MIN_US    500000ULL
#define PSI_WINDOW_MAX_US    10000000ULL
#define PSI_UNPRIV_WINDOW_US 2000000ULL

struct mp_watch {
	int fd; /* eventfd: the kernel's (v1) or the relay's */
	enum mp_level level;
};

/* A trigger file (PSI, cgroup2 mempressure.level) the relay thread polls. */
struct mp_trigger {
	int fd;
	int watch;	    /* index of the watch it feeds */
	bool events;	    /* cgroup2 memory.events: counters, no trigger */
	uint64_t high, max; /* events: the counts last read */
};

/* the PSI triggers of each level, and memory.events */
#define MP_TRIG_NR (MP_LEVEL_NR + 1)

struct mp_source {
	enum mp_backend backend;
	enum mp_cg_version cgver;
	struct mp_cgroup cg;
	bool system;		  /* psi on /proc/pressure/memory */
	char note[PATH_MAX + 64]; /* why it is not what was asked */
	char file[PATH_MAX + 32];
	int epfd;
	/*
	 * Filled in by mp_source_open() before the relay thread starts, and
	 * only read afterwards, by the relay and by mp_source_read().
	 */
	int nwatch;
	struct mp_watch watch[MP_LEVEL_NR];
	int ntrig;
	struct mp_trigger trig[MP_TRIG_NR];
	int stop_fd; /* eventfd that ends the relay thread */
	pthread_t relay;
	bool relay_started;
	atomic_bool trig_lost; /* a trigger file reported POLLERR */
};

static const char *const backend_names[MP_BACKEND_NR] = {
	[MP_BACKEND_MEMPRESSURE] = "mempressure",
	[MP_BACKEND_MEMCG] = "memcg",
	[MP_BACKEND_PSI] = "psi",
};

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

const char *mp_backend_name(enum mp_backend b)
{
	if (b < 0 || b >= MP_BACKEND_NR)
		return "auto";
	return backend_names[b];
}

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

int mp_backend_parse(const char *s, enum mp_backend *b)
{
	int i;

	if (!strcmp(s, "auto")) {
		*b = MP_BACKEND_AUTO;
		return 0;
	}
	i = name_index(backend_names, MP_BACKEND_NR, s);
	if (i < 0)
		return -1;
	*b = i;
	return 0;
}

const char *mp_level_name(enum mp_level l)
{
	return l >= 0 && l < MP_LEVEL_NR ? level_names[l] : "unknown";
}

const char *mp_level_native(enum mp_backend b, enum mp_level l)
{
	if (b == MP_BACKEND_MEMPRESSURE && l == MP_LEVEL_CRITICAL)
		return "oom";
	return mp_level_name(l);
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
			if (src->backend != MP_BACKEND_MEMPRESSURE) {
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
		if (src->backend != MP_BACKEND_MEMPRESSURE &&
		    !src->trig[i].events)
			continue;
		for (l = src->watch[src->trig[i].watch].level + 1;
		     l < MP_LEVEL_NR; l++)
			if (level_watch(src, l) < 0)
				return -1;
	}
	return 0;
}

static int start_relay(struct mp_source *src, struct mp_err *err)
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
static int v1_register(struct mp_source *src, const char *file,
		       const char *args, enum mp_level level,
		       struct mp_err *err)
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
static int trigger_register(struct mp_source *src, const char *path,
			    const char *trig, enum mp_level level,
			    struct mp_err *err)
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
static int events_register(struct mp_source *src, enum mp_level level,
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

static int open_memcg(struct mp_source *src, const struct mp_source_cfg *cfg,
		      const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *cg;
	int l;

	if (mp_backend_probe(MP_BACKEND_MEMCG, err) ||
	    mp_target_get(t, MP_ROLE_MEMORY, &cg, err))
		return -1;
	src->cg = *cg;
	/* one registration per level from the threshold up tells the level */
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		char args[64];

		snprintf(args, sizeof(args), "%s%s%s", level_names[l],
			 cfg->mode_set ? "," : "",
			 cfg->mode_set ? mode_names[cfg->mode] : "");
		if (v1_register(src, "memory.pressure_level", args, l, err))
			return -1;
	}
	return 0;
}

static int open_mempressure(struct mp_source *src,
			    const struct mp_source_cfg *cfg,
			    const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *cg;
	char path[PATH_MAX + 32];
	int l;

	if (cfg->mode_set)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"a propagation mode applies to the memcg backend only");
	if (mp_backend_probe(MP_BACKEND_MEMPRESSURE, err) ||
	    mp_target_get(t, MP_ROLE_MEMPRESSURE, &cg, err))
		return -1;
	src->cg = *cg;
	src->cgver = cg->hier->version;
	if (cg->hier->version == MP_CG_V1) {
		for (l = cfg->level; l < MP_LEVEL_NR; l++)
			if (v1_register(src, "mempressure.level",
					mp_level_native(MP_BACKEND_MEMPRESSURE,
							l),
					l, err))
				return -1;
		return 0;
	}
	/* cgroup2: one trigger reports the highest level and a count */
	snprintf(path, sizeof(path), "%s/mempressure.level", src->cg.dir);
	return trigger_register(src, path,
				mp_level_native(MP_BACKEND_MEMPRESSURE,
						cfg->level),
				cfg->level, err);
}

/* "some 70000 1000000": the trigger as PSI's files take it */
static void psi_spec(char *buf, size_t size, const struct mp_psi_trigger *t)
{
	snprintf(buf, size, "%s %" PRIu64 " %" PRIu64,
		 t->full ? "full" : "some", t->stall_us, t->window_us);
}

/* systemd.exec(5)'s memory pressure protocol, from the environment */
struct env_watch {
	char path[PATH_MAX];
	char trig[256];
};

/*
 * *out: the watch $MEMORY_PRESSURE_WATCH names (allocated), or NULL when
 * it is unset or empty. -1 when it says off ("/dev/null", status 69) or
 * either variable is malformed (64). $MEMORY_PRESSURE_WRITE is the
 * trigger in base64, which systemd encodes with its terminating NUL;
 * without it the level's default trigger is written.
 */
static int env_watch_get(const struct mp_source_cfg *cfg,
			 struct env_watch **out, struct mp_err *err)
{
	const char *path = getenv("MEMORY_PRESSURE_WATCH");
	const char *wr = getenv("MEMORY_PRESSURE_WRITE");
	struct mp_psi_trigger def;
	struct env_watch *w;
	size_t len;

	*out = NULL;
	if (!path || !*path)
		return 0;
	if (!strcmp(path, "/dev/null"))
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"memory pressure watching is off (MEMORY_PRESSURE_WATCH=/dev/null)");
	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not an absolute path",
			path);
	w = calloc(1, sizeof(*w));
	if (!w)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "out of memory");
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (!wr || !*wr) {
		mp_psi_default(cfg->level, &def);
		psi_spec(w->trig, sizeof(w->trig), &def);
		goto ok;
	}
	if (mp_base64_decode(wr, w->trig, sizeof(w->trig), &len)) {
		mp_errf(err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WRITE '%s': %s", wr,
			errno == ERANGE ? "too long" : "not base64");
		goto bad;
	}
	while (len && w->trig[len - 1] == '\0')
		len--;
	if (!len || strlen(w->trig) != len) {
		mp_errf(err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WRITE '%s': not a trigger string",
			wr);
		goto bad;
	}
ok:
	*out = w;
	return 0;
bad:
	free(w);
	return -1;
}

/*
 * What the service manager named must be a memory pressure file: the
 * system's /proc/pressure/memory, or a cgroup2 group's memory.pressure,
 * whose group labels the events (it may be another service's). Anything
 * else (a regular file, above all) would be written into: refused, 64.
 */
static int env_watch_cgroup(struct mp_source *src, const struct mp_target *t,
			    const struct env_watch *w, struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	const struct mp_hier *h = &sys->hier[MP_ROLE_UNIFIED];
	char real[PATH_MAX], *base;
	const struct mp_cgroup *cg;
	struct statfs fs;
	size_t mlen;

	if (!realpath(w->path, real) || statfs(real, &fs))
		return mp_errf(err, -1, errno,
			       "cannot open MEMORY_PRESSURE_WATCH '%s'",
			       w->path);
	base = strrchr(real, '/');
	*base++ = '\0';
	if (fs.f_type == PROC_SUPER_MAGIC && !strcmp(real, "/proc/pressure") &&
	    !strcmp(base, "memory")) {
		/* the system's: our own group's usage, as before */
		if (!mp_target_get(t, MP_ROLE_UNIFIED, &cg, NULL))
			src->cg = *cg;
		else
			snprintf(src->cg.path, sizeof(src->cg.path), "/");
		return 0;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC || strcmp(base, "memory.pressure"))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not a pressure file (a PSI file or a cgroup's memory.pressure)",
			w->path);
	/* our own group, or the one the file is in */
	if (!mp_target_get(t, MP_ROLE_UNIFIED, &cg, NULL) &&
	    !strcmp(cg->dir, real)) {
		src->cg = *cg;
		return 0;
	}
	mlen = strlen(h->mnt);
	if (!sys->have[MP_ROLE_UNIFIED] || strncmp(real, h->mnt, mlen) ||
	    (real[mlen] != '/' && real[mlen]))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not under the cgroup2 mount",
			w->path);
	src->cg.hier = h;
	snprintf(src->cg.dir, sizeof(src->cg.dir), "%s", real);
	snprintf(src->cg.path, sizeof(src->cg.path), "%s",
		 real[mlen] ? real + mlen : "/");
	return 0;
}

/* The file the service manager named, with its trigger, at the level. */
static int open_env_watch(struct mp_source *src,
			  const struct mp_source_cfg *cfg,
			  const struct mp_target *t, const struct env_watch *w,
			  struct mp_err *err)
{
	if (env_watch_cgroup(src, t, w, err))
		return -1;
	/* no memory.events beside it: the file may be any PSI file */
	src->system = true;
	snprintf(src->note, sizeof(src->note),
		 "MEMORY_PRESSURE_WATCH: '%s' with trigger '%s'", w->path,
		 w->trig);
	return trigger_register(src, w->path, w->trig, cfg->level, err);
}

static int open_psi(struct mp_source *src, const struct mp_source_cfg *cfg,
		    const struct mp_target *t, struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	bool have_v2 = sys->have[MP_ROLE_UNIFIED];
	struct mp_psi_trigger trig[MP_LEVEL_NR];
	bool priv = mp_privileged();
	const struct mp_cgroup *cg;
	char path[PATH_MAX + 32];
	int l;

	if (cfg->mode_set)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"a propagation mode applies to the memcg backend only");
	/* check every trigger before touching the kernel */
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		if (cfg->psi_set && l == (int)cfg->level)
			trig[l] = cfg->psi;
		else
			mp_psi_default(l, &trig[l]);
		if (mp_psi_check(&trig[l], priv, err))
			return -1;
		/* an override replaces the one trigger asked for */
		if (cfg->psi_set)
			break;
	}
	if (mp_backend_probe(MP_BACKEND_PSI, err))
		return -1;
	if (have_v2) {
		const struct mp_cgroup *v1;

		if (mp_target_get(t, MP_ROLE_UNIFIED, &cg, err)) {
			/* PSI is cgroup2's: say where the cgroup is */
			if (err->errnum == ENOENT &&
			    !mp_target_get(t, MP_ROLE_MEMORY, &v1, NULL) &&
			    v1->hier->version == MP_CG_V1)
				return mp_errf(
					err, MP_EXIT_UNAVAILABLE, 0,
					"cgroup '%s' exists only in the cgroup v1 memory hierarchy, and PSI is per cgroup on cgroup2 only: use -b memcg, or -c / for system-wide PSI",
					t->user);
			return -1;
		}
		src->cg = *cg;
		snprintf(path, sizeof(path), "%s/memory.pressure", src->cg.dir);
	}
	if (!have_v2 || (access(path, F_OK) && !strcmp(src->cg.path, "/"))) {
		if (!t->own && strcmp(t->user, "/"))
			return mp_errf(
				err, MP_EXIT_UNAVAILABLE, 0,
				"no cgroup2 hierarchy for '%s': only system-wide PSI is present",
				t->user);
		mp_syspath(path, sizeof(path), "/proc/pressure/memory");
		src->system = true;
		snprintf(src->cg.path, sizeof(src->cg.path), "/");
	} else if (!priv && access(path, W_OK) && errno == EACCES) {
		/*
		 * A root-owned memory.pressure takes no trigger of ours; the
		 * system-wide file does, with the kernel's unprivileged
		 * rules (2 s windows, checked above).
		 */
		snprintf(src->note, sizeof(src->note),
			 "'%s' is not writable: system-wide PSI", path);
		mp_syspath(path, sizeof(path), "/proc/pressure/memory");
		src->system = true;
	}
	if (!src->system && events_register(src, cfg->level, err))
		return -1;
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		char spec[96];

		psi_spec(spec, sizeof(spec), &trig[l]);
		if (trigger_register(src, path, spec, l, err))
			return -1;
		if (cfg->psi_set)
			break;
	}
	return 0;
}

static int source_open_one(const struct mp_source_cfg *cfg,
			   const struct mp_target *t, enum mp_backend b,
			   const struct env_watch *w, struct mp_source **out,
			   struct mp_err *err)
{
	struct mp_source *src;
	int ret;

	src = calloc(1, sizeof(*src));
	if (!src)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "out of memory");
	src->backend = b;
	src->cgver = MP_CG_V1;
	src->stop_fd = -1;
	src->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (src->epfd < 0) {
		free(src);
		return mp_errf(err, MP_EXIT_FAILURE, errno, "epoll_create1");
	}
	switch (b) {
	case MP_BACKEND_MEMPRESSURE:
		ret = open_mempressure(src, cfg, t, err);
		break;
	case MP_BACKEND_MEMCG:
		ret = open_memcg(src, cfg, t, err);
		break;
	case MP_BACKEND_PSI:
		src->cgver = MP_CG_V2;
		ret = w ? open_env_watch(src, cfg, t, w, err) :
			  open_psi(src, cfg, t, err);
		break;
	default:
		ret = mp_errf(err, MP_EXIT_USAGE, 0, "unknown backend");
	}
	if (!ret)
		ret = start_relay(src, err);
	if (ret) {
		mp_source_close(src);
		return -1;
	}
	*out = src;
	return 0;
}

int mp_source_open(const struct mp_source_cfg *cfg, struct mp_source **out,
		   struct mp_err *err)
{
	enum mp_backend b = cfg->backend;
	const struct mp_target *t = cfg->target;
	struct mp_target *own = NULL;
	struct env_watch *w = NULL;
	struct mp_err first;
	bool picked = false;
	int ret = -1;

	if (cfg->psi_set && b != MP_BACKEND_PSI && b != MP_BACKEND_AUTO)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "a psi trigger applies to the psi backend only");
	if (b == MP_BACKEND_AUTO) {
		/* --mode and --psi choose their backend */
		b = cfg->mode_set ? MP_BACKEND_MEMCG :
		    cfg->psi_set  ? MP_BACKEND_PSI :
				    mp_backend_pick(MP_USE_EVENTS);
		if (b == MP_BACKEND_AUTO)
			return mp_errf(
				err, MP_EXIT_UNAVAILABLE, 0,
				"no memory pressure interface: no mempressure, memcg v1 or PSI");
		picked = !cfg->mode_set && !cfg->psi_set;
	}
	if (!t) {
		own = mp_target_new(NULL);
		if (!own)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cgroup");
		t = own;
	}
	if (cfg->env_watch && t->own && !cfg->mode_set && !cfg->psi_set &&
	    env_watch_get(cfg, &w, err))
		goto out;
	if (w) {
		ret = source_open_one(cfg, t, MP_BACKEND_PSI, w, out, err);
		goto out;
	}
	if (!source_open_one(cfg, t, b, NULL, out, err)) {
		ret = 0;
		goto out;
	}
	/*
	 * A backend chosen for the user that this user may not use (an
	 * unprivileged caller and a root-owned cgroup.event_control): PSI,
	 * which takes unprivileged triggers, if it is there; the reason
	 * becomes the source's note (-v says it)
	 */
	if (!picked || b == MP_BACKEND_PSI || err->status != MP_EXIT_NOPERM ||
	    mp_backend_probe(MP_BACKEND_PSI, NULL))
		goto out;
	first = *err;
	if (source_open_one(cfg, t, MP_BACKEND_PSI, NULL, out, err)) {
		*err = first;
		goto out;
	}
	{
		char note[sizeof((*out)->note)];

		snprintf(note, sizeof(note), "%s: %s; fell back to psi%s%s",
			 mp_backend_name(b), first.msg,
			 (*out)->note[0] ? "; " : "", (*out)->note);
		snprintf((*out)->note, sizeof((*out)->note), "%s", note);
	}
	ret = 0;
out:
	free(w);
	free(own);
	return ret;
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
