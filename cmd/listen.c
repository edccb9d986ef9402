// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl listen: print memory pressure events as they come.
 *
 * Sleeps in poll() on the pressure source and a signalfd; the only timeout
 * is --timeout, so an idle listener never wakes up.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "mp_cgroup.h"
#include "mp_clock.h"
#include "mp_target.h"
#include "mp_json.h"
#include "mp_metrics.h"
#include "mp_output.h"
#include "mp_parse.h"
#include "mp_backend.h"
#include "mp_pressure.h"
#include "mp_sched.h"
#include "mp_spawn.h"
#include "mp_wait.h"

#define LISTEN_SCHEMA	      "mpctl-listen"
#define LISTEN_SCHEMA_VERSION 1

/* -c may be given this many times */
#define LISTEN_MAX_CGROUPS 64

struct listen_opts {
	struct mp_source_cfg cfg;
	const char *cgroup[LISTEN_MAX_CGROUPS]; /* none: the caller's own */
	int ncgroup;
	long long count;     /* 0: unlimited */
	uint64_t timeout_ns; /* 0: none */
	bool json;
	bool verbose;
	bool quiet; /* -q: no informational lines, wins over -v */
	bool realtime;
	const char *exec;
	struct cmd_metrics metrics; /* --metrics FILE, --metrics-format */
	uint64_t min_interval_ns;   /* --min-interval: 0 for every event */
};

enum {
	OPT_PSI = 0x100,
	OPT_SYSROOT,
	OPT_REALTIME,
	OPT_METRICS,
	OPT_METRICS_FORMAT,
	OPT_MIN_INTERVAL,
};

/* clang-format off */
static const struct argp_option options[] = {
	{ "level", 'l', "LEVEL", 0,
	  "threshold: low (default), medium, critical (alias oom)", 0 },
	{ "cgroup", 'c', "PATH", 0,
	  "cgroup to watch: cgroupfs path or path in the hierarchy "
	  "(default: the caller's own); repeat to watch several, each event "
	  "names its cgroup", 0 },
	{ "backend", 'b', "NAME", 0,
	  "mempressure, memcg, psi or auto (default: best present)", 0 },
	{ "mode", 'm', "MODE", 0,
	  "memcg propagation: default, hierarchy or local", 0 },
	{ "psi", OPT_PSI, "SPEC", 0,
	  "psi trigger for the level, 'some|full STALL WINDOW' (us)", 0 },
	{ "count", 'n', "N", 0, "exit 0 after N events", 0 },
	{ "timeout", 't', "TIME", 0, "exit 0 after TIME (e.g. 500ms, 1m30s; default infinity)", 0 },
	{ "json", 'j', NULL, 0, "print JSON Lines, one object per event", 0 },
	{ "exec", 'e', "CMD", 0,
	  "run CMD with /bin/sh for each event (MPCTL_* environment)", 0 },
	{ "metrics", OPT_METRICS, "FILE", 0,
	  "keep FILE the Prometheus text exposition of the events seen and "
	  "the cgroup's memory event counters (for node_exporter's textfile "
	  "collector), replaced atomically at each event; '-': on stdout "
	  "once listening ends, instead of the event lines", 0 },
	CMD_METRICS_FORMAT_OPTION(OPT_METRICS_FORMAT),
	{ "min-interval", OPT_MIN_INTERVAL, "TIME", 0,
	  "at most one line per cgroup every TIME (e.g. 10s): the first event "
	  "at once, the others of the interval as one line at its end, with "
	  "their count (coalesced=N)", 0 },
	{ "verbose", 'v', NULL, 0, "say on stderr when listening starts", 0 },
	{ "quiet", 'q', NULL, 0,
	  "no informational lines on stderr (errors and events still print; wins over -v)", 0 },
	{ "realtime", OPT_REALTIME, NULL, 0,
	  "run as SCHED_FIFO with memory locked, as lmkd does", 0 },
	{ "sysroot", OPT_SYSROOT, "DIR", 0,
	  "read /proc and /sys under DIR (for tests)", 0 },
	{ 0 }
};
/* clang-format on */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct listen_opts *o = state->input;
	struct mp_err err;

	switch (key) {
	case 'l':
		if (mp_level_parse(arg, &o->cfg.level))
			cmd_argerr(state, "unknown level '%s'", arg);
		break;
	case 'c':
		if (o->ncgroup == LISTEN_MAX_CGROUPS)
			cmd_argerr(state, "too many cgroups: at most %d",
				   LISTEN_MAX_CGROUPS);
		o->cgroup[o->ncgroup++] = cmd_arg_str(state, key, arg);
		break;
	case 'b':
		if (mp_backend_parse(arg, &o->cfg.backend))
			cmd_argerr(state, "unknown backend '%s'", arg);
		break;
	case 'm':
		if (mp_mode_parse(arg, &o->cfg.mode))
			cmd_argerr(state, "unknown mode '%s'", arg);
		o->cfg.mode_set = true;
		break;
	case OPT_PSI:
		if (mp_psi_parse(arg, &o->cfg.psi, &err))
			cmd_argerr(state, "%s", err.msg);
		o->cfg.psi_set = true;
		break;
	case 'n':
		o->count = cmd_arg_long(state, key, arg, 1, INT32_MAX);
		break;
	case 't':
		o->timeout_ns = cmd_arg_duration(state, key, arg,
						 CMD_DUR_INFINITY);
		break;
	case 'j':
		o->json = true;
		break;
	case 'e':
		o->exec = cmd_arg_str(state, key, arg);
		break;
	case OPT_METRICS:
	case OPT_METRICS_FORMAT:
		cmd_arg_metrics(state, key, arg, key == OPT_METRICS_FORMAT,
				&o->metrics);
		break;
	case OPT_MIN_INTERVAL:
		o->min_interval_ns = cmd_arg_duration(state, key, arg, 0);
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_REALTIME:
		o->realtime = true;
		break;
	case OPT_SYSROOT:
		if (mp_set_sysroot(arg))
			cmd_argerr(state,
				   "invalid --sysroot: longer than %d bytes",
				   MP_SYSROOT_MAX);
		break;
	case ARGP_KEY_ARG:
		cmd_argerr(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		cmd_metrics_check(state, &o->metrics);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp listen_argp = {
	options,
	parse_opt,
	NULL,
	"Print memory pressure events of a cgroup, one line each.\v"
	"Exit status: 0 after --count events, at --timeout or on SIGINT/"
	"SIGTERM; 1 on failure (e.g. the cgroup was removed: with several "
	"-c, listening goes on for the others and the status is 1 at the "
	"end); 64 usage "
	"error; 69 no such kernel interface; 77 permission denied.\n"
	"Without -c and -b, $MEMORY_PRESSURE_WATCH and $MEMORY_PRESSURE_WRITE "
	"(systemd.exec(5)) name the memory pressure file (/proc/pressure/"
	"memory or a cgroup's memory.pressure; anything else is refused, 64) "
	"and its trigger (base64); /dev/null means off (69). $NOTIFY_SOCKET "
	"gets READY=1 once listening, STATUS= with the events seen (at most "
	"once a second) and STOPPING=1 (a datagram not taken: one warning).",
	NULL,
	NULL,
	NULL
};

/* --metrics -: stdout is the exposition's, written once at the end */
static bool metrics_stdout(const struct listen_opts *o)
{
	return cmd_metrics_stdout(&o->metrics);
}

/* The event's document, or NULL (out of memory): never a partial one. */
static json_t *event_json(const struct listen_opts *o,
			  const struct mp_source *src,
			  const struct mp_event *ev, uint64_t seq,
			  uint64_t coalesced)
{
	enum mp_backend b = mp_source_backend(src);
	json_t *doc = mp_json_doc(LISTEN_SCHEMA, LISTEN_SCHEMA_VERSION);

	/* clang-format off */
	if (!doc || json_object_set_new(doc, "event", json_pack(
		"{s:I, s:I, s:I, s:s, s:o, s:s, s:s, s:I}",
		"seq", (json_int_t)seq,
		"time_ns", (json_int_t)ev->time_ns,
		"monotonic_ns", (json_int_t)ev->mono_ns,
		"backend", mp_backend_name(b),
		"cgroup", mp_json_str(mp_source_cgroup(src)->path),
		"level", mp_level_name(ev->level),
		"level_native", mp_level_native(b, ev->level),
			       /* clang-format on */
			       "events", (json_int_t)ev->count))) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	/* with --min-interval: the events the line stands for */
	if (o->min_interval_ns &&
	    json_object_set_new(json_object_get(doc, "event"), "coalesced",
				json_integer((json_int_t)coalesced))) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	return doc;
}

/*
 * Wait for --exec's command without blocking the listener's deadline and
 * signals: on either, the command's process group gets SIGTERM, then
 * SIGKILL after a second, and the caller's next mp_wait() sees the same
 * deadline or pending signal and ends the listener. 0: it exited, 1: it
 * was stopped, -1: error.
 */
static int wait_exec(struct mp_waiter *w, struct mp_child *c)
{
	/* a kernel without pidfds: block, as before them */
	if (c->pidfd < 0 || mp_wait(w, c->pidfd, POLLIN) == MP_WAIT_READY)
		return mp_child_wait(c, 0);
	mp_child_stop(c, SIGTERM, 1000000000ULL);
	return 1;
}

/* *var = the formatted "NAME=value"; 1 (and NULL) when out of memory */
static int __attribute__((format(printf, 2, 3)))
env_var(char **var, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(var, fmt, ap);
	va_end(ap);
	if (n < 0)
		*var = NULL;
	return n < 0;
}

/* Run --exec for one event with the event in the environment. */
static void run_exec(const struct listen_opts *o, const struct mp_source *src,
		     const struct mp_event *ev, uint64_t seq, const char *json,
		     struct mp_waiter *w)
{
	enum mp_backend b = mp_source_backend(src);
	char *argv[] = { "sh", "-c", (char *)o->exec, NULL };
	char *vars[9] = { NULL };
	struct mp_child c;
	struct mp_err err;
	int i, bad = 0;

	bad |= env_var(&vars[0], "MPCTL_LEVEL=%s", mp_level_name(ev->level));
	bad |= env_var(&vars[1], "MPCTL_BACKEND=%s", mp_backend_name(b));
	bad |= env_var(&vars[2], "MPCTL_CGROUP=%s",
		       mp_source_cgroup(src)->path);
	bad |= env_var(&vars[3], "MPCTL_EVENTS=%" PRIu64, ev->count);
	bad |= env_var(&vars[4], "MPCTL_TIME_NS=%" PRIu64, ev->time_ns);
	bad |= env_var(&vars[5], "MPCTL_SEQ=%" PRIu64, seq);
	bad |= env_var(&vars[6], "MPCTL_LEVEL_NATIVE=%s",
		       mp_level_native(b, ev->level));
	if (json)
		bad |= env_var(&vars[7], "MPCTL_EVENT_JSON=%s", json);
	mp_child_init(&c, argv);
	c.file = "/bin/sh";
	c.name = o->exec;
	/* its own process group, so that a hung command can be stopped */
	c.pgroup = true;
	if (bad) {
		mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "cannot run '%s'",
			o->exec);
		cmd_fail(&err);
		goto out;
	}
	if (mp_child_env(&c, NULL, (const char *const *)vars, &err) ||
	    mp_child_start(&c, &err)) {
		cmd_fail(&err);
		goto out;
	}
	switch (wait_exec(w, &c)) {
	case 0:
		break;
	case 1:
		cmd_error("command '%s' stopped: the listener is exiting",
			  o->exec);
		goto out;
	default:
		cmd_error("cannot wait for '%s': %s", o->exec, strerror(errno));
		goto out;
	}
	if (WIFEXITED(c.status) && WEXITSTATUS(c.status))
		cmd_error("command '%s' exited with status %d", o->exec,
			  WEXITSTATUS(c.status));
	else if (WIFSIGNALED(c.status))
		cmd_error("command '%s' killed by signal %d", o->exec,
			  WTERMSIG(c.status));
out:
	mp_child_release(&c);
	for (i = 0; i < 9; i++)
		free(vars[i]);
}

static int print_event(const struct listen_opts *o, const struct mp_source *src,
		       const struct mp_event *ev, uint64_t seq,
		       uint64_t coalesced, struct mp_waiter *w)
{
	enum mp_backend b = mp_source_backend(src);
	char *line = NULL;
	json_t *doc = NULL;
	char when[64];
	int ret = 0;

	if (o->json || o->exec) {
		doc = event_json(o, src, ev, seq, coalesced);
		line = doc ? json_dumps(doc,
					JSON_PRESERVE_ORDER | JSON_COMPACT) :
			     NULL;
		if (!line) {
			json_decref(doc);
			errno = ENOMEM;
			return -1;
		}
	}
	if (metrics_stdout(o)) {
		/* stdout is the exposition's */
	} else if (o->json) {
		if (!line || puts(line) == EOF)
			ret = -1;
	} else {
		mp_fmt_time(ev->time_ns, when, sizeof(when));
		if (printf("%s backend=%s cgroup=%s level=%s events=%" PRIu64,
			   when, mp_backend_name(b),
			   mp_source_cgroup(src)->path,
			   mp_level_native(b, ev->level), ev->count) < 0 ||
		    (o->min_interval_ns &&
		     printf(" coalesced=%" PRIu64, coalesced) < 0) ||
		    putchar('\n') == EOF)
			ret = -1;
	}
	if (fflush(stdout) == EOF)
		ret = -1;
	if (!ret && o->exec)
		run_exec(o, src, ev, seq, line, w);
	free(line);
	json_decref(doc);
	return ret;
}

static int listen_metrics(FILE *f, enum mp_metrics_format fmt, const void *m)
{
	return mp_metrics_write_listen(f, fmt, m);
}

/*
 * --metrics: FILE replaced by the exposition as it is now, or, for "-",
 * the exposition on stdout once listening ends (final); 0 or -1 (told)
 */
static int write_metrics(const struct listen_opts *o,
			 const struct mp_listen_metrics *m, bool final)
{
	struct cmd_metrics cm = o->metrics; /* opened and closed each time */

	if (metrics_stdout(o) && !final)
		return 0;
	return cmd_metrics_write(&cm, listen_metrics, m);
}

/* What a listener holds open: a source per cgroup and their group fd. */
struct listener {
	struct mp_target *target[LISTEN_MAX_CGROUPS]; /* 56 KB each */
	struct mp_source *src[LISTEN_MAX_CGROUPS];    /* NULL: closed */
	int n;					      /* cgroups */
	int live;				      /* sources still open */
	bool lost;  /* a source failed: status 1 at the end */
	bool ready; /* READY=1 sent */
	int gfd;    /* readable when any source is; -1: one */
	uint64_t seq;
	struct mp_listen_metrics m;
	/* STATUS= for the service manager: events not told yet, and when */
	bool status_due;
	uint64_t status_ns; /* the earliest next STATUS= (monotonic) */
	/* --min-interval, per source: the events held for one line */
	struct listen_held {
		struct mp_event ev; /* the latest, highest level, summed count */
		uint64_t n;	    /* events held: 0, none */
		uint64_t end_ns;    /* the interval's end (monotonic) */
	} held[LISTEN_MAX_CGROUPS];
};

/*
 * A source that failed (its cgroup removed): say so and close it; the
 * others go on. 0 while some are left, -1 when none is.
 */
static int drop_source(struct listener *l, int i, const struct mp_err *err)
{
	cmd_fail(err);
	mp_source_close(l->src[i]);
	l->src[i] = NULL;
	l->lost = true;
	return --l->live ? 0 : -1;
}

/* STATUS= at most this often: once a second, or once per --min-interval */
#define LISTEN_STATUS_NS 1000000000ULL

/*
 * Tell $NOTIFY_SOCKET (if set) STATE with a STATUS= line of what is
 * watched and the events seen: "watching 1 cgroup, backend memcg, 3
 * events" ("stopped: watched ..." once stopping). 0, or the status of a
 * malformed $NOTIFY_SOCKET (told).
 */
static int send_status(const struct listen_opts *o, struct listener *l,
		       const char *state)
{
	bool stopping = !strcmp(state, "STOPPING=1");
	uint64_t n = 0, every = LISTEN_STATUS_NS;
	int i, cgroups = stopping ? l->n : l->live;
	char msg[256];

	for (i = 0; i < MP_LEVEL_NR; i++)
		n += l->m.events[i];
	snprintf(msg, sizeof(msg),
		 "%s\nSTATUS=%s %d cgroup%s, backend %s, %" PRIu64 " event%s",
		 state, stopping ? "stopped: watched" : "watching", cgroups,
		 cgroups == 1 ? "" : "s", l->m.backend, n, n == 1 ? "" : "s");
	if (o->min_interval_ns > every)
		every = o->min_interval_ns;
	l->status_due = false;
	l->status_ns = mp_now_ns(CLOCK_MONOTONIC) + every;
	/* no state: an update, the STATUS= line alone */
	return cmd_notify(*state ? msg : msg + 1);
}

/* events came: STATUS= now if the last one is old enough, else later */
static void status_update(const struct listen_opts *o, struct listener *l)
{
	if (!l->ready)
		return;
	l->status_due = true;
	if (mp_now_ns(CLOCK_MONOTONIC) >= l->status_ns)
		send_status(o, l, "");
}

/* One line for source i, standing for n events: 0, 1 at --count, -1 */
static int emit(const struct listen_opts *o, struct listener *l, int i,
		const struct mp_event *ev, uint64_t n, struct mp_waiter *w)
{
	if (print_event(o, l->src[i], ev, ++l->seq, n, w)) {
		cmd_write_error(errno);
		l->lost = true;
		return -1;
	}
	if (write_metrics(o, &l->m, false)) {
		l->lost = true;
		return -1;
	}
	return o->count && l->seq >= (uint64_t)o->count;
}

/*
 * --min-interval: an event inside source i's interval is held (true);
 * one after it opens the next interval and is printed at once (false).
 */
static bool hold(const struct listen_opts *o, struct listener *l, int i,
		 const struct mp_event *ev)
{
	struct listen_held *h = &l->held[i];
	uint64_t now = mp_now_ns(CLOCK_MONOTONIC);

	if (!o->min_interval_ns)
		return false;
	if (now >= h->end_ns && !h->n) {
		h->end_ns = now + o->min_interval_ns;
		return false;
	}
	if (!h->n) {
		h->ev = *ev;
	} else {
		h->ev.count += ev->count;
		h->ev.time_ns = ev->time_ns;
		h->ev.mono_ns = ev->mono_ns;
		if (ev->level > h->ev.level)
			h->ev.level = ev->level;
	}
	h->n++;
	return true;
}

/* Source i's held events as one line, if any: 0, 1 at --count, -1 */
static int flush_one(const struct listen_opts *o, struct listener *l, int i,
		     struct mp_waiter *w)
{
	struct listen_held *h = &l->held[i];
	uint64_t n = h->n;

	if (!n)
		return 0;
	h->n = 0;
	/* the next interval starts now: one line per interval at most */
	h->end_ns = mp_now_ns(CLOCK_MONOTONIC) + o->min_interval_ns;
	return emit(o, l, i, &h->ev, n, w);
}

/* The held lines whose interval is over (all: at the end); as flush_one */
static int flush_due(const struct listen_opts *o, struct listener *l,
		     struct mp_waiter *w, bool all)
{
	uint64_t now = mp_now_ns(CLOCK_MONOTONIC);
	int i, ret;

	for (i = 0; i < l->n; i++) {
		if (!l->src[i] || !l->held[i].n ||
		    (!all && now < l->held[i].end_ns))
			continue;
		ret = flush_one(o, l, i, w);
		if (ret)
			return ret;
	}
	return 0;
}

/* The earliest end of an interval holding events or STATUS= due, or 0 */
static uint64_t next_flush(const struct listener *l)
{
	uint64_t t = l->status_due ? l->status_ns : 0;
	int i;

	for (i = 0; i < l->n; i++)
		if (l->src[i] && l->held[i].n && (!t || l->held[i].end_ns < t))
			t = l->held[i].end_ns;
	return t;
}

/* The pending events of source i: 0, 1 when --count is reached, -1 */
static int pump_one(const struct listen_opts *o, struct listener *l, int i,
		    struct mp_waiter *w)
{
	struct mp_event ev;
	struct mp_err err;
	int ret;

	ret = mp_source_read(l->src[i], &ev, &err);
	if (ret < 0) {
		/* what it held still gets its line */
		if (flush_one(o, l, i, w) < 0)
			return -1;
		return drop_source(l, i, &err);
	}
	if (!ret)
		return 0;
	l->m.events[ev.level]++;
	l->m.notifications[ev.level] += ev.count;
	l->m.last_event_ns = ev.time_ns;
	status_update(o, l);
	if (hold(o, l, i, &ev))
		return 0;
	return emit(o, l, i, &ev, 1, w);
}

/*
 * cmd_wait() with the end of the first interval holding events as an
 * earlier deadline: 1 ready, 2 an interval ended, 0 --timeout or a signal,
 * -1 error.
 */
static int listen_wait(struct listener *l, struct mp_waiter *w)
{
	int fd = l->gfd >= 0 ? l->gfd : mp_source_fd(l->src[0]);
	uint64_t deadline = w->deadline, t = next_flush(l);
	enum mp_wait_result ret;

	if (!t || (deadline && deadline <= t))
		return cmd_wait(w, fd);
	w->deadline = t;
	ret = mp_wait(w, fd, POLLIN);
	w->deadline = deadline;
	switch (ret) {
	case MP_WAIT_READY:
		return 1;
	case MP_WAIT_TIMEOUT: /* the interval's end, before --timeout's */
		return 2;
	case MP_WAIT_ERROR:
		cmd_error("poll: %s", strerror(errno));
		return -1;
	default: /* SIGINT, SIGTERM, SIGHUP */
		return 0;
	}
}

/* Print events until --count, --timeout, a signal or no source is left. */
static int listen_pump(const struct listen_opts *o, struct listener *l,
		       struct mp_waiter *w)
{
	int i, ret;

	if (write_metrics(o, &l->m, false))
		return MP_EXIT_FAILURE;
	for (;;) {
		ret = listen_wait(l, w);
		if (ret < 0)
			l->lost = true;
		if (ret <= 0)
			break;
		if (ret == 2 && l->status_due &&
		    mp_now_ns(CLOCK_MONOTONIC) >= l->status_ns)
			send_status(o, l, "");
		ret = ret == 2 ? flush_due(o, l, w, false) : 0;
		for (i = 0; !ret && i < l->n; i++)
			if (l->src[i] && (ret = pump_one(o, l, i, w)))
				break;
		if (ret)
			break;
	}
	/* --timeout, a signal, the last source gone: what is held is said */
	if (!ret && flush_due(o, l, w, true) < 0)
		l->lost = true;
	if (write_metrics(o, &l->m, true))
		l->lost = true;
	return l->lost ? MP_EXIT_FAILURE : MP_EXIT_OK;
}

static void say_listening(const struct listen_opts *o,
			  const struct mp_source *src)
{
	enum mp_backend b = mp_source_backend(src);

	if (!o->verbose)
		return;
	cmd_error("listening: backend=%s cgroup=%s level=%s file=%s",
		  mp_backend_name(b), mp_source_cgroup(src)->path,
		  mp_level_native(b, o->cfg.level), mp_source_file(src));
	if (mp_source_note(src))
		cmd_error("note: %s", mp_source_note(src));
}

/*
 * Source i watches the cgroup an earlier one does (the same -c in another
 * spelling): closed, and said once with -v, so that no event is counted
 * twice. True when it was.
 */
static bool is_duplicate(const struct listen_opts *o, struct listener *l, int i)
{
	const struct mp_cgroup *cg = mp_source_cgroup(l->src[i]);
	int j;

	for (j = 0; j < i; j++)
		if (mp_source_backend(l->src[j]) ==
			    mp_source_backend(l->src[i]) &&
		    !strcmp(mp_source_cgroup(l->src[j])->dir, cg->dir))
			break;
	if (j == i)
		return false;
	if (o->verbose)
		cmd_error("note: cgroup '%s' is given more than once: watched "
			  "once",
			  cg->path);
	mp_source_close(l->src[i]);
	free(l->target[i]);
	l->src[i] = NULL;
	l->target[i] = NULL;
	l->live--;
	l->n--;
	return true;
}

/* Open a source per cgroup and their group; 0 or the exit status (told) */
static int listen_start(struct listen_opts *o, struct listener *l)
{
	struct mp_err err;
	int i, k, n;

	n = o->ncgroup ? o->ncgroup : 1;
	for (k = 0; k < n; k++) {
		i = l->n;
		l->target[i] = malloc(sizeof(*l->target[i]));
		if (!l->target[i]) {
			mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "out of memory");
			return cmd_fail(&err);
		}
		l->n++;
		mp_target_resolve(o->ncgroup ? o->cgroup[k] : NULL,
				  l->target[i]);
		o->cfg.target = l->target[i];
		if (mp_source_open(&o->cfg, &l->src[i], &err))
			return cmd_fail(&err);
		l->live++;
		if (is_duplicate(o, l, i))
			continue;
		say_listening(o, l->src[i]);
	}
	/* one cgroup: its own fd, no group (an fd fewer) */
	if (l->n > 1) {
		l->gfd = mp_source_group(l->src, l->n, &err);
		if (l->gfd < 0)
			return cmd_fail(&err);
	}
	l->m.backend = mp_backend_name(mp_source_backend(l->src[0]));
	l->m.cg = mp_source_cgroup(l->src[0]);
	/* a service manager waiting for us ($NOTIFY_SOCKET): registered */
	i = send_status(o, l, "READY=1");
	if (i)
		return i;
	l->ready = true;
	return 0;
}

static void listen_stop(const struct listen_opts *o, struct listener *l)
{
	int i;

	if (l->gfd >= 0)
		close(l->gfd);
	for (i = 0; i < l->n; i++) {
		if (l->src[i])
			mp_source_close(l->src[i]);
		free(l->target[i]);
	}
	/* best effort: the manager learns it anyway when we exit */
	if (l->ready)
		send_status(o, l, "STOPPING=1");
	free(l);
}

/*
 * --mode and --psi are options of the backends whose row takes them: say
 * so in the options' words (the library would refuse them too, without
 * naming options).
 */
static int check_backend_opts(const struct listen_opts *o)
{
	unsigned int opt = mp_backend_refuses(&o->cfg);

	if (opt) {
		cmd_error("%s applies to the %s backend only",
			  opt == MP_TAKES_PSI ? "--psi" : "--mode",
			  mp_backend_name(mp_backend_taking(opt)));
		return MP_EXIT_USAGE;
	}
	if (metrics_stdout(o) && o->json) {
		cmd_error("--metrics - and --json both write to stdout: give "
			  "--metrics a file");
		return MP_EXIT_USAGE;
	}
	if (o->metrics.path && o->ncgroup > 1) {
		cmd_error("--metrics describes one cgroup: give one -c");
		return MP_EXIT_USAGE;
	}
	return 0;
}

int cmd_listen(int argc, char **argv)
{
	struct listen_opts o = {
		.cfg = { .backend = MP_BACKEND_AUTO, .level = MP_LEVEL_LOW },
	};
	struct listener *l;
	struct mp_waiter w;
	struct mp_err err;
	int ret;

	cmd_argp_parse(&listen_argp, argc, argv, &o);
	if (o.quiet)
		o.verbose = false;
	ret = check_backend_opts(&o);
	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l) {
		cmd_error("out of memory");
		return MP_EXIT_FAILURE;
	}
	l->gfd = -1;
	/* without -c and -b, a service manager's choice counts */
	o.cfg.env_watch = o.cfg.backend == MP_BACKEND_AUTO;

	/* signals arrive through a signalfd, so poll() is the only wait */
	if (mp_waiter_init(&w, 0, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	if (o.realtime && mp_realtime(&err)) {
		ret = cmd_fail(&err);
		goto out_waiter;
	}
	ret = listen_start(&o, l);
	if (ret)
		goto out_waiter;
	/* the timeout counts from when listening starts */
	if (o.timeout_ns)
		w.deadline = mp_now_ns(CLOCK_MONOTONIC) + o.timeout_ns;
	ret = listen_pump(&o, l, &w);
out_waiter:
	mp_waiter_close(&w);
out:
	listen_stop(&o, l);
	return ret;
}
