// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl report: run a short standard suite and write one document;
 * compare two such documents; draw their timelines.
 *
 * Scenarios run "mpctl stress --json" (and "mpctl listen --json") as
 * children of /proc/self/exe and embed their documents, so a scenario
 * that crashes or is OOM-killed cannot take the report with it. Each
 * scenario runs --repeat times; the report keeps every run and, per
 * metric, the median and the spread of the samples (common/mp_report.c).
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "mp_cgroup.h"
#include "mp_json.h"
#include "mp_memstat.h"
#include "mp_output.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_report.h"
#include "mp_stats.h"
#include "mp_svg.h"
#include "mp_target.h"

#define MAX_SCENARIOS	16

struct report_opts {
	bool json;
	bool pretty;
	const char *output;
	const char *input;
	const char *svg;
	const char *html;
	uint64_t duration_ns;
	long long repeat;
	const char *scenarios[MAX_SCENARIOS];
	int nr_scenarios;
	bool compare;
	bool list;
	double threshold;	/* < 0: per-metric defaults */
	double alpha;		/* --compare's significance level */
	bool allow_empty;
	const char *args[2];
	int nr_args;
	uint64_t limit;		/* stress --limit */
	const char *stress_extra[8];	/* --stress-arg */
	int nr_extra;
	const char *parent;		/* --parent */
	struct mp_parent *par;		/* where the runs' cgroups go */
};

struct scenario {
	const char *name;
	const char *description;
	int (*run)(const struct report_opts *o, const struct scenario *s,
		   json_t **out, struct mp_err *err);
	const char *stress_args[6];	/* extra "mpctl stress" arguments */
	int hog_pct;		/* a stress-ng vm hog, % of the limit */
	bool needs_kernel_shrinker;	/* else skipped */
};

static int run_stress(const struct report_opts *o, const struct scenario *s,
		      json_t **out, struct mp_err *err);
static int run_listen(const struct report_opts *o, const struct scenario *s,
		      json_t **out, struct mp_err *err);

static const struct scenario scenarios[] = {
	{ "listen-latency",
	  "mpctl listen --json on the cgroup of a stress run beside a "
	  "stress-ng vm hog larger than the limit: wake-up to line read "
	  "latency", run_listen, { NULL }, 110 },
	{ "shrinker", "mpctl stress with the user-space shrinker",
	  run_stress },
	{ "hog", "mpctl stress beside an uncooperative stress-ng vm hog "
	  "(limit/4) in the same cgroup", run_stress, { NULL }, 25 },
	{ "overcommit", "mpctl stress at 4x the limit with 8 threads",
	  run_stress, { "--overcommit", "4", "--threads", "8" } },
	{ "emulated", "mpctl stress with the emulated shrinker on a kernel "
	  "that has one", run_stress, { "--emulate" }, 0, true },
	{ "kernel-shrinker", "mpctl stress --no-assist --swap: every request "
	  "comes from the kernel's reclaim", run_stress,
	  { "--no-assist", "--swap" }, 0, true },
};

#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

enum {
	OPT_COMPARE = 0x100,
	OPT_SVG,
	OPT_HTML,
	OPT_INPUT,
	OPT_LIST,
	OPT_THRESHOLD,
	OPT_STRESS_ARG,
	OPT_PARENT,
	OPT_ALPHA,
	OPT_ALLOW_EMPTY,
};

static const struct argp_option options[] = {
	{ "json", 'j', NULL, 0, "write the document as JSON", 0 },
	{ "pretty", 'p', NULL, 0, "indent JSON (implies --json)", 0 },
	{ "output", 'o', "FILE", 0,
	  "write the JSON document to FILE (tables still on stdout)", 0 },
	{ "duration", 'd', "TIME", 0, "each run's duration (default 5s)", 0 },
	{ "repeat", 'r', "N", 0, "runs per scenario (default 3)", 0 },
	{ "scenario", 's', "NAME", 0,
	  "run only NAME (repeatable; see --list)", 0 },
	{ "limit", 'L', "SIZE", 0,
	  "memory limit of each run's cgroup (default 128M)", 0 },
	{ "stress-arg", OPT_STRESS_ARG, "ARG", 0,
	  "pass ARG to every mpctl stress run (repeatable; for experiments, "
	  "see mpctl-report(1))", 0 },
	{ "parent", OPT_PARENT, "PATH", 0,
	  "create the runs' cgroups under this cgroup (default: as mpctl "
	  "stress does)", 0 },
	{ "list", OPT_LIST, NULL, 0, "list the scenarios and exit", 0 },
	{ "compare", OPT_COMPARE, NULL, 0,
	  "compare two reports: --compare BASE.json NEW.json", 0 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "minimum effect size in percent of the base for every metric "
	  "(default: per metric, see mpctl-report(1))", 0 },
	{ "alpha", OPT_ALPHA, "P", 0,
	  "one-sided significance level of a verdict (default 0.05)", 0 },
	{ "allow-empty", OPT_ALLOW_EMPTY, NULL, 0,
	  "compare even when a report is incomplete, has a failed or "
	  "missing scenario, no scenario that ran, or no metrics", 0 },
	{ "svg", OPT_SVG, "FILE", 0, "draw the timelines as SVG to FILE", 0 },
	{ "html", OPT_HTML, "FILE", 0,
	  "write an HTML page with the tables and the SVG to FILE", 0 },
	{ "input", 'i', "FILE", 0,
	  "use a recorded report instead of running the suite", 0 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;
	uint64_t v;
	char *end;
	size_t i;

	switch (key) {
	case 'j':
		o->json = true;
		break;
	case 'p':
		o->json = o->pretty = true;
		break;
	case 'o':
		if (!*arg)
			cmd_argerr(state, "empty file name for --output");
		o->output = arg;
		break;
	case 'd':
		o->duration_ns = cmd_arg_duration(state, arg);
		break;
	case 'r':
		if (mp_parse_long(arg, 1, 100, &o->repeat))
			cmd_argerr(state, "invalid repeat count '%s': must be "
				   "1 to 100", arg);
		break;
	case 's':
		for (i = 0; i < NR_SCENARIOS; i++)
			if (!strcmp(scenarios[i].name, arg))
				break;
		if (i == NR_SCENARIOS)
			cmd_argerr(state, "unknown scenario '%s' (see --list)",
				   arg);
		if (o->nr_scenarios == MAX_SCENARIOS)
			cmd_argerr(state, "too many --scenario options");
		o->scenarios[o->nr_scenarios++] = arg;
		break;
	case 'L':
		if (mp_parse_size(arg, &v) || v < 16 << 20)
			cmd_argerr(state, "invalid limit '%s': at least 16M",
				   arg);
		o->limit = v;
		break;
	case OPT_PARENT:
		o->parent = arg;
		break;
	case OPT_STRESS_ARG:
		if (o->nr_extra == 8)
			cmd_argerr(state, "too many --stress-arg options");
		o->stress_extra[o->nr_extra++] = arg;
		break;
	case OPT_LIST:
		o->list = true;
		break;
	case OPT_COMPARE:
		o->compare = true;
		break;
	case OPT_THRESHOLD:
		errno = 0;
		o->threshold = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(o->threshold) ||
		    o->threshold < 0)
			cmd_argerr(state, "invalid threshold '%s': a "
				   "percentage of 0 or more", arg);
		break;
	case OPT_ALPHA:
		errno = 0;
		o->alpha = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->alpha > 0) ||
		    !(o->alpha < 1))
			cmd_argerr(state, "invalid alpha '%s': a probability "
				   "between 0 and 1", arg);
		break;
	case OPT_ALLOW_EMPTY:
		o->allow_empty = true;
		break;
	case OPT_SVG:
		if (!*arg)
			cmd_argerr(state, "empty file name for --svg");
		o->svg = arg;
		break;
	case OPT_HTML:
		if (!*arg)
			cmd_argerr(state, "empty file name for --html");
		o->html = arg;
		break;
	case 'i':
		o->input = arg;
		break;
	case ARGP_KEY_ARG:
		if (!o->compare || o->nr_args == 2)
			cmd_argerr(state, "unexpected argument '%s'", arg);
		o->args[o->nr_args++] = arg;
		break;
	case ARGP_KEY_END:
		if (o->compare && o->nr_args != 2)
			cmd_argerr(state, "--compare needs BASE.json and "
				   "NEW.json");
		if (o->compare && (o->svg || o->html || o->input ||
				   o->output || o->nr_scenarios))
			cmd_argerr(state, "--compare takes no --svg, --html, "
				   "--input, --output or --scenario");
		if (!o->compare && (o->threshold >= 0 || o->alpha > 0 ||
				    o->allow_empty))
			cmd_argerr(state, "--threshold, --alpha and "
				   "--allow-empty go with --compare");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp report_argp = {
	options, parse_opt, "\n--compare BASE.json NEW.json",
	"Run the standard suite and write one report, or compare two "
	"reports.\v"
	"Exit status: 0 success (--compare: no regression); 1 failure, a "
	"scenario failed, or --compare found a regression; 64 usage error; "
	"65 --compare: a report is incomplete, has a failed or missing "
	"scenario, no scenario that ran or no metrics; "
	"69 no such kernel interface; 77 permission denied; 129, 130, 143 "
	"stopped by SIGHUP, SIGINT, SIGTERM (the document is still written, "
	"marked incomplete). "
	"See mpctl-report(1) for the metrics and their thresholds.",
	NULL, NULL, NULL
};

/* ---- children ---------------------------------------------------------- */

/* the signal that interrupts the run, 0 if none (see catch_signals()) */
static volatile sig_atomic_t report_signal;

static uint64_t now_mono(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

/* Start /proc/self/exe with argv, stdout to a pipe; stderr inherited. */
/* errfd NULL: the child writes to our stderr, else to a pipe of its own */
static pid_t spawn_self(char *const argv[], int *outfd, int *errfd)
{
	int p[2], e[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (errfd && pipe2(e, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		if (errfd) {
			close(e[0]);
			close(e[1]);
		}
		return -1;
	}
	if (!pid) {
		/*
		 * Its own process group, stopped by us (stop_child()); and
		 * never outliving a report killed with SIGKILL: SIGTERM lets
		 * "mpctl stress" remove its cgroups and its stress-ng hog.
		 */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(127);
		dup2(p[1], STDOUT_FILENO);
		if (errfd)
			dup2(e[1], STDERR_FILENO);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	setpgid(pid, pid);	/* no race with a signal before exec */
	close(p[1]);
	*outfd = p[0];
	if (errfd) {
		close(e[1]);
		*errfd = e[0];
	}
	return pid;
}

/*
 * Pass an interruption on to a child's process group once; a child that
 * then does not end in 10 s is killed. Returns the deadline to use.
 */
static uint64_t pass_signal(pid_t pid, bool *passed, uint64_t deadline)
{
	uint64_t soon = mp_now_ns(CLOCK_MONOTONIC) + 10000000000ULL;

	if (!report_signal || *passed)
		return deadline;
	*passed = true;
	kill(-pid, report_signal);
	return soon < deadline ? soon : deadline;
}

struct buf {
	char *data;
	size_t len, cap;
};

static int buf_read(struct buf *b, int fd)
{
	ssize_t n;

	if (b->cap - b->len < 4096) {
		size_t cap = b->cap ? b->cap * 2 : 65536;
		char *d = realloc(b->data, cap);

		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	n = read(fd, b->data + b->len, b->cap - b->len - 1);
	if (n > 0) {
		b->len += n;
		b->data[b->len] = '\0';
	}
	return n;
}

static int wait_child(pid_t pid, uint64_t deadline)
{
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (deadline && now_mono() > deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			deadline = 0;
		}
		usleep(10000);
	}
}

/* "mpctl stress" status in words, for a scenario's error */
static int child_failed(int status, const char *what, struct mp_err *err)
{
	if (WIFEXITED(status))
		return mp_errf(err, WEXITSTATUS(status), 0,
			       "%s exited with status %d", what,
			       WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "%s killed by signal %d", what,
			       WTERMSIG(status));
	return mp_errf(err, MP_EXIT_FAILURE, 0, "%s failed", what);
}

static json_t *parse_doc(const char *text)
{
	const char *last;
	json_t *doc;

	doc = json_loads(text, 0, NULL);
	if (doc)
		return doc;
	/* JSON Lines: the last complete line is the summary */
	last = text + strlen(text);
	while (last > text && last[-1] == '\n')
		last--;
	while (last > text && last[-1] != '\n')
		last--;
	return json_loads(last, 0, NULL);
}

struct stress_args {
	char *argv[32];
	char dur[32];
	char limit[32];
	char hog[96];
};

static void stress_argv(const struct report_opts *o, const struct scenario *s,
			const char *cgroup, struct stress_args *a)
{
	int n = 0, i;

	snprintf(a->dur, sizeof(a->dur), "%" PRIu64 "ms",
		 o->duration_ns / 1000000);
	snprintf(a->limit, sizeof(a->limit), "%" PRIu64, o->limit);
	a->argv[n++] = "mpctl";
	a->argv[n++] = "stress";
	a->argv[n++] = "--json";
	a->argv[n++] = "--duration";
	a->argv[n++] = a->dur;
	a->argv[n++] = "--limit";
	a->argv[n++] = a->limit;
	if (cgroup) {
		a->argv[n++] = "--cgroup";
		a->argv[n++] = (char *)cgroup;
	} else if (o->par) {
		a->argv[n++] = "--parent";
		a->argv[n++] = o->par->t.role[MP_ROLE_MEMORY].cg.dir;
	}
	if (s->hog_pct) {
		/* a fixed seed: the same hog in every run and boot */
		snprintf(a->hog, sizeof(a->hog), "--vm 1 --vm-bytes %" PRIu64
			 "k --vm-keep --seed 1", o->limit / 100 * s->hog_pct /
			 1024);
		a->argv[n++] = "--hog";
		a->argv[n++] = a->hog;
	}
	for (i = 0; i < 6 && s->stress_args[i]; i++)
		a->argv[n++] = (char *)s->stress_args[i];
	for (i = 0; i < o->nr_extra; i++)
		a->argv[n++] = (char *)o->stress_extra[i];
	a->argv[n] = NULL;
}

/*
 * A stress run's outcome. Status 1 with a document is a result, not a
 * failure of the scenario: the engine was OOM-killed, and oom_kills says
 * so. The run keeps its exit status.
 */
static int stress_result(int status, json_t **doc, struct mp_err *err)
{
	bool ok = !status || (WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
			      *doc);

	if (!ok) {
		json_decref(*doc);
		*doc = NULL;
		return child_failed(status, "mpctl stress", err);
	}
	if (!*doc)
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "mpctl stress wrote no JSON document");
	json_object_set_new(*doc, "exit_status",
			    json_integer(WEXITSTATUS(status)));
	return 0;
}

/* Run "mpctl stress --json" once and return its document. */
static int run_stress(const struct report_opts *o, const struct scenario *s,
		      json_t **out, struct mp_err *err)
{
	struct stress_args a;
	struct buf b = { 0 };
	uint64_t deadline;
	bool passed = false;
	int fd, status;
	pid_t pid;

	stress_argv(o, s, NULL, &a);
	pid = spawn_self(a.argv, &fd, NULL);
	if (pid < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot run 'mpctl stress'");
	/* a run that hangs is killed: three times its duration and 30 s */
	deadline = now_mono() + o->duration_ns * 3 + 30000000000ULL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now;
		int n;

		deadline = pass_signal(pid, &passed, deadline);
		now = now_mono();
		if (now >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		n = poll(&pfd, 1, (deadline - now) / 1000000 > 1000 ? 1000 :
			 (int)((deadline - now) / 1000000) + 1);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && buf_read(&b, fd) <= 0)
			break;
	}
	close(fd);
	status = wait_child(pid, deadline);
	*out = b.data ? parse_doc(b.data) : NULL;
	free(b.data);
	return stress_result(status, out, err);
}

/*
 * A cgroup for the listen scenario, with the run's limit: v1 memcg when
 * mounted (listen's memcg backend), else cgroup2 with the memory
 * controller (psi backend); on a kernel with the mempressure controller
 * on its own v1 hierarchy, the cgroup of the same name there too, where
 * "mpctl stress --cgroup" registers its shrinker.
 */
static int listen_cgroup(const struct report_opts *o, struct mp_target *t,
			 enum mp_backend *backend, struct mp_err *err)
{
	struct mp_target_spec spec = { .limit = o->limit, .mempressure = true };
	const struct mp_cgroup *mem;
	char name[128];

	if (!o->par)
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
			       "no memory cgroup to run the listener on");
	mp_target_remove_stale(&o->par->t, "report");
	if (mp_target_name(name, sizeof(name), "report", "listen"))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "cgroup name");
	if (mp_target_create(&o->par->t, name, &spec, t, err))
		return -1;
	mem = mp_target_cg(t, MP_ROLE_MEMORY);
	*backend = mem->hier.version == MP_CG_V1 ? MP_BACKEND_MEMCG :
		   MP_BACKEND_PSI;
	return 0;
}

struct listen_acc {
	struct mp_hist lat;	/* wake-up to line read, as stress's latencies */
	size_t n;
	uint64_t levels[MP_LEVEL_NR];
	uint64_t first_mono;
	struct buf b;
	size_t done;
};

/* Account the complete lines read so far, read at time t (monotonic). */
static void listen_lines(struct listen_acc *a, uint64_t t)
{
	char *nl;

	while (a->b.data && (nl = memchr(a->b.data + a->done, '\n',
					  a->b.len - a->done))) {
		char *line = a->b.data + a->done;
		double mono, cnt = 1;
		const char *lv;
		enum mp_level l;
		json_t *ev;

		*nl = '\0';
		a->done = nl + 1 - a->b.data;
		ev = json_loads(line, 0, NULL);
		if (!ev)
			continue;
		if (!mp_json_path_num(ev, "event.monotonic_ns", &mono)) {
			mp_hist_add(&a->lat, t > mono ? t - (uint64_t)mono : 0);
			a->n++;
			if (!a->first_mono)
				a->first_mono = (uint64_t)mono;
		}
		mp_json_path_num(ev, "event.events", &cnt);
		lv = json_string_value(mp_json_path(ev, "event.level"));
		if (lv && !mp_level_parse(lv, &l))
			a->levels[l] += (uint64_t)cnt;
		json_decref(ev);
	}
}

/*
 * listen's stderr: its complete lines go on to ours, except the one that
 * says it is listening ("mpctl listen: listening: ..." from --verbose),
 * which sets *ready (if not NULL).
 */
static void listen_stderr(struct buf *b, bool *ready)
{
	char *line = b->data, *nl;

	if (!b->len)
		return;
	while ((nl = memchr(line, '\n', b->data + b->len - line))) {
		*nl = '\0';
		if (strstr(line, ": listening: ")) {
			if (ready)
				*ready = true;
		} else {
			fprintf(stderr, "%s\n", line);
		}
		line = nl + 1;
	}
	b->len -= line - b->data;
	memmove(b->data, line, b->len);
	b->data[b->len] = '\0';
}

/*
 * Wait until listen has registered, so that stress starts to allocate
 * only then: until its "listening" line, its exit (stress then runs and
 * listen's status tells), a signal to us or the deadline.
 */
static void wait_listening(int fd, struct buf *b, uint64_t deadline)
{
	bool ready = false;
	uint64_t now;

	while (!ready && !report_signal && (now = now_mono()) < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n;

		n = poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1));
		if (n < 0 && errno != EINTR)
			return;
		if (n <= 0)
			continue;
		n = buf_read(b, fd);
		if (n == 0 || (n < 0 && errno != EINTR))
			return;
		listen_stderr(b, &ready);
	}
}

/*
 * The listen scenario: "mpctl listen --json" watches the cgroup that
 * "mpctl stress" runs in. For every event line, the latency is the time
 * from listen's wake-up (its "monotonic_ns") to our reading the line: the
 * cost of mpctl's own formatting and writing and of a reader's wake-up.
 * It does not include the kernel's delay before it signals.
 */
static int run_listen(const struct report_opts *o, const struct scenario *s,
		      json_t **out, struct mp_err *err)
{
	struct listen_acc acc = { 0 };
	struct buf sb = { 0 }, eb = { 0 };
	struct stress_args sa;
	enum mp_backend be = MP_BACKEND_MEMCG;
	const struct mp_cgroup *cg;
	struct mp_target lt;
	uint64_t start, deadline, t;
	int lfd, lerr, sfd, lstatus, sstatus, ret = 0;
	char *largv[] = { "mpctl", "listen", "--json", "--verbose",
			  "--backend", NULL, "--cgroup", NULL, NULL };
	bool lopen = true, eopen = true, sopen = true, passed = false;
	json_t *stress = NULL, *doc;
	pid_t lpid, spid;

	if (listen_cgroup(o, &lt, &be, err))
		return -1;
	cg = mp_target_cg(&lt, MP_ROLE_MEMORY);
	largv[5] = (char *)mp_backend_name(be);
	largv[7] = (char *)cg->dir;
	lpid = spawn_self(largv, &lfd, &lerr);
	if (lpid < 0) {
		ret = mp_errf(err, MP_EXIT_FAILURE, errno,
			      "cannot run 'mpctl listen'");
		goto out_cg;
	}
	/* listen registers before stress starts to allocate */
	wait_listening(lerr, &eb, now_mono() + 10000000000ULL);
	stress_argv(o, s, cg->dir, &sa);
	start = mp_now_ns(CLOCK_MONOTONIC);
	spid = spawn_self(sa.argv, &sfd, NULL);
	if (spid < 0) {
		ret = mp_errf(err, MP_EXIT_FAILURE, errno,
			      "cannot run 'mpctl stress'");
		kill(lpid, SIGTERM);
		wait_child(lpid, 0);
		close(lfd);
		goto out_err;
	}
	deadline = start + o->duration_ns * 3 + 30000000000ULL;
	while (sopen && now_mono() < deadline) {
		struct pollfd pfd[3] = {
			{ .fd = lopen ? lfd : -1, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = eopen ? lerr : -1, .events = POLLIN },
		};

		deadline = pass_signal(spid, &passed, deadline);

		if (poll(pfd, 3, 100) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents) {
			if (buf_read(&eb, lerr) <= 0)
				eopen = false;
			listen_stderr(&eb, NULL);
		}
		if (pfd[0].revents) {
			t = now_mono();
			if (buf_read(&acc.b, lfd) <= 0)
				lopen = false;
			listen_lines(&acc, t);
		}
		if (pfd[1].revents && buf_read(&sb, sfd) <= 0)
			sopen = false;
	}
	close(sfd);
	sstatus = wait_child(spid, deadline);
	/* late lines: whatever listen wrote before it heard SIGTERM */
	kill(-lpid, SIGTERM);
	while (lopen && buf_read(&acc.b, lfd) > 0)
		listen_lines(&acc, now_mono());
	lstatus = wait_child(lpid, now_mono() + 2000000000ULL);
	close(lfd);
	/* listen has exited: the rest of its stderr, to the end */
	while (eopen && buf_read(&eb, lerr) > 0)
		;
	if (eb.len)
		eb.data[eb.len++] = '\n';
	listen_stderr(&eb, NULL);
	stress = sb.data ? parse_doc(sb.data) : NULL;
	if (stress_result(sstatus, &stress, err)) {
		ret = -1;
		goto out;
	}
	if (lstatus) {
		json_decref(stress);
		ret = child_failed(lstatus, "mpctl listen", err);
		goto out;
	}

	doc = mp_json_doc("mpctl-report-listen", 1);
	json_object_set_new(doc, "latency_kind", json_string(
		"listen wake-up to event line read by the reader"));
	json_object_set_new(doc, "backend", json_string(mp_backend_name(be)));
	json_object_set_new(doc, "events", json_pack("{s:I, s:I, s:I}",
		"low", (json_int_t)acc.levels[MP_LEVEL_LOW],
		"medium", (json_int_t)acc.levels[MP_LEVEL_MEDIUM],
		"critical", (json_int_t)acc.levels[MP_LEVEL_CRITICAL]));
	json_object_set_new(doc, "event_lines",
			    json_integer((json_int_t)acc.n));
	if (acc.n) {
		json_object_set_new(doc, "latency", json_pack(
			"{s:I, s:I, s:I, s:I}",
			"count", (json_int_t)acc.n,
			"p50_ns", (json_int_t)mp_hist_quantile(&acc.lat, 0.50),
			"p99_ns", (json_int_t)mp_hist_quantile(&acc.lat, 0.99),
			"max_ns", (json_int_t)acc.lat.max));
		json_object_set_new(doc, "first_event_ns", json_integer(
			(json_int_t)(acc.first_mono > start ?
				     acc.first_mono - start : 0)));
	}
	/* the stress run that made the pressure, for its timeline */
	if (stress) {
		json_t *tl = json_object_get(stress, "timeline");

		if (tl)
			json_object_set(doc, "timeline", tl);
		json_object_set(doc, "limit_bytes",
				json_object_get(stress, "limit_bytes"));
		json_object_set(doc, "peak_usage_bytes",
				json_object_get(stress, "peak_usage_bytes"));
		json_object_set(doc, "exit_status",
				json_object_get(stress, "exit_status"));
		/* the stress document without its timeline (kept above) */
		json_object_del(stress, "timeline");
		json_object_set_new(doc, "stress", stress);
	}
	*out = doc;
out:
	free(sb.data);
	free(acc.b.data);
out_err:
	close(lerr);
	free(eb.data);
out_cg:
	if (mp_target_remove(&lt, 5000) && !ret)
		cmd_error("cannot remove cgroup '%s': %s", cg->dir,
			  strerror(errno));
	return ret;
}

/* ---- the system -------------------------------------------------------- */

/* the options that shape memory pressure; "n" when not set */
static const char *const config_names[] = {
	"CONFIG_CGROUP_MEMPRESSURE", "CONFIG_MEMCG", "CONFIG_MEMCG_V1",
	"CONFIG_PSI", "CONFIG_PSI_DEFAULT_DISABLED", "CONFIG_SWAP",
	"CONFIG_ZSWAP", "CONFIG_ZRAM", "CONFIG_TRANSPARENT_HUGEPAGE",
	"CONFIG_LRU_GEN", "CONFIG_LRU_GEN_ENABLED", "CONFIG_HZ",
	"CONFIG_PREEMPT_NONE", "CONFIG_PREEMPT_VOLUNTARY", "CONFIG_PREEMPT",
	"CONFIG_PREEMPT_DYNAMIC", "CONFIG_KASAN", "CONFIG_PROVE_LOCKING",
	"CONFIG_DEBUG_KMEMLEAK", NULL,
};

static json_t *kernel_config(const char *release)
{
	json_t *c = json_object(), *opts = json_object();
	json_t *found = json_object();
	char path[PATH_MAX], cmd[PATH_MAX + 32], line[512];
	const char *src = NULL;
	FILE *f = NULL;
	bool gz = false;
	int i;

	if (!access(mp_syspath(path, sizeof(path), "/proc/config.gz"),
		    R_OK)) {
		snprintf(cmd, sizeof(cmd), "gzip -dc '%s' 2>/dev/null", path);
		f = popen(cmd, "r");
		gz = true;
		src = "/proc/config.gz";
	} else {
		snprintf(cmd, sizeof(cmd), "/boot/config-%s", release);
		f = fopen(mp_syspath(path, sizeof(path), cmd), "r");
		src = f ? cmd : NULL;
	}
	mp_json_set(c, "source", src ? json_string(src) : NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char *name = line, *val, *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		val = strchr(line, '=');
		if (!strncmp(line, "# CONFIG_", 9) &&
		    strstr(line, " is not set")) {
			name = line + 2;
			*strchr(name, ' ') = '\0';
			val = "n";
		} else if (!strncmp(line, "CONFIG_", 7) && val) {
			*val++ = '\0';
		} else {
			continue;
		}
		for (i = 0; config_names[i]; i++)
			if (!strcmp(name, config_names[i]))
				break;
		if (config_names[i])
			json_object_set_new(found, name, json_string(val));
	}
	/* in the list's order, and "n" for what the config does not know */
	for (i = 0; config_names[i] && f; i++) {
		json_t *v = json_object_get(found, config_names[i]);

		json_object_set_new(opts, config_names[i],
				    v ? json_incref(v) : json_string("n"));
	}
	json_decref(found);
	if (f)
		gz ? pclose(f) : fclose(f);
	json_object_set_new(c, "options", opts);
	return c;
}

/* a /proc/meminfo line in bytes, null if it is missing */
static json_t *mem_json(const struct mp_meminfo *mi, unsigned int bit,
			uint64_t v)
{
	return mi->have & bit ? json_integer((json_int_t)v) : json_null();
}

static json_t *system_json(void)
{
	json_t *sys = json_object(), *be = json_array();
	const struct mp_system *ms = mp_system();
	struct mp_meminfo mi;
	struct utsname u;
	struct mp_err err;
	int b;

	uname(&u);
	json_object_set_new(sys, "kernel_release", json_string(u.release));
	json_object_set_new(sys, "kernel_version", json_string(u.version));
	json_object_set_new(sys, "machine", json_string(u.machine));
	json_object_set_new(sys, "kernel_config", kernel_config(u.release));
	json_object_set_new(sys, "nr_cpus", json_integer(get_nprocs()));
	mp_meminfo_read(&mi);	/* on failure, have is 0: nulls */
	json_object_set_new(sys, "mem_total_bytes",
			    mem_json(&mi, MP_MI_TOTAL, mi.total));
	json_object_set_new(sys, "mem_available_bytes",
			    mem_json(&mi, MP_MI_AVAIL, mi.avail));
	json_object_set_new(sys, "swap_total_bytes",
			    mem_json(&mi, MP_MI_SWAP_TOTAL, mi.swap_total));
	json_object_set_new(sys, "swap_free_bytes",
			    mem_json(&mi, MP_MI_SWAP_FREE, mi.swap_free));
	json_object_set_new(sys, "cgroup_mode",
			    json_string(mp_system_mode(ms)));
	json_object_set_new(sys, "cgroup_v1_memory",
			    json_boolean(ms->v1_memory));
	json_object_set_new(sys, "cgroup_v2_memory",
			    json_boolean(ms->v2_memory));
	for (b = 0; b < MP_BACKEND_NR; b++) {
		bool ok = !mp_backend_probe(b, &err);
		json_t *e = json_pack("{s:s, s:b}", "name",
				      mp_backend_name(b), "present", ok);

		if (!ok)
			json_object_set_new(e, "reason", json_string(err.msg));
		json_array_append_new(be, e);
	}
	json_object_set_new(sys, "backends", be);
	b = mp_backend_pick(MP_USE_EVENTS);
	mp_json_set(sys, "default_backend", b == MP_BACKEND_AUTO ? NULL :
		    json_string(mp_backend_name(b)));
	return sys;
}

/* ---- running the suite ------------------------------------------------- */

static bool have_stress_ng(void)
{
	return !system("command -v stress-ng >/dev/null 2>&1");
}

static bool selected(const struct report_opts *o, const char *name)
{
	int i;

	if (!o->nr_scenarios)
		return true;
	for (i = 0; i < o->nr_scenarios; i++)
		if (!strcmp(o->scenarios[i], name))
			return true;
	return false;
}

static json_t *run_scenario(const struct report_opts *o,
			    const struct scenario *s, bool *failed)
{
	json_t *sc = json_object(), *runs = json_array(), *run;
	struct mp_err err;
	long long i;

	json_object_set_new(sc, "name", json_string(s->name));
	json_object_set_new(sc, "description", json_string(s->description));
	json_object_set_new(sc, "runs", runs);
	if (s->hog_pct && !have_stress_ng()) {
		json_object_set_new(sc, "status", json_string("skipped"));
		json_object_set_new(sc, "reason",
				    json_string("stress-ng is not installed"));
		return sc;
	}
	if (s->needs_kernel_shrinker &&
	    mp_backend_probe(MP_BACKEND_MEMPRESSURE, &err)) {
		json_object_set_new(sc, "status", json_string("skipped"));
		json_object_set_new(sc, "reason", json_string(
			"no kernel shrinker: the same as 'shrinker' here"));
		return sc;
	}
	for (i = 0; i < o->repeat && !report_signal; i++) {
		if (s->run(o, s, &run, &err)) {
			bool skip = err.status == MP_EXIT_UNAVAILABLE ||
				    err.status == MP_EXIT_NOPERM;

			json_object_set_new(sc, "status", json_string(
				skip ? "skipped" : "failed"));
			json_object_set_new(sc, "reason",
					    json_string(err.msg));
			if (!skip)
				*failed = true;
			cmd_error("scenario '%s': %s", s->name, err.msg);
			break;
		}
		json_array_append_new(runs, run);
	}
	if (report_signal && !json_object_get(sc, "status")) {
		/* the runs so far, the last one cut short */
		json_object_set_new(sc, "status", json_string("interrupted"));
		json_object_set_new(sc, "reason", json_string(
			"the report was interrupted"));
	}
	if (!json_object_get(sc, "status"))
		json_object_set_new(sc, "status", json_string("ok"));
	mp_report_summarize(sc);
	return sc;
}

static json_t *run_suite(const struct report_opts *o, bool *failed)
{
	json_t *doc = mp_json_doc(MP_REPORT_SCHEMA, MP_REPORT_SCHEMA_VERSION);
	json_t *scs = json_array(), *names = json_array();
	char when[64];
	time_t t = time(NULL);
	struct tm tm;
	size_t i;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(doc, "mpctl_version", json_string(MPCTL_VERSION));
	json_object_set_new(doc, "created", json_string(when));
	json_object_set_new(doc, "system", system_json());
	for (i = 0; i < NR_SCENARIOS; i++)
		if (selected(o, scenarios[i].name))
			json_array_append_new(names,
					      json_string(scenarios[i].name));
	json_object_set_new(doc, "settings", json_pack(
		"{s:I, s:I, s:I, s:o}",
		"duration_ns", (json_int_t)o->duration_ns,
		"repeat", (json_int_t)o->repeat,
		"limit_bytes", (json_int_t)o->limit,
		"scenarios", names));
	{
		json_t *extra = json_array();
		int k;

		for (k = 0; k < o->nr_extra; k++)
			json_array_append_new(extra,
					      mp_json_str(o->stress_extra[k]));
		json_object_set_new(json_object_get(doc, "settings"),
				    "stress_args", extra);
	}
	json_object_set_new(doc, "scenarios", scs);
	for (i = 0; i < NR_SCENARIOS && !report_signal; i++) {
		if (!selected(o, scenarios[i].name))
			continue;
		if (!o->json || o->output)
			cmd_error("running scenario '%s' (%lld x %s)",
				  scenarios[i].name, o->repeat,
				  mp_fmt_duration(o->duration_ns, when,
						  sizeof(when)));
		json_array_append_new(scs, run_scenario(o, &scenarios[i],
							failed));
	}
	return doc;
}

/* ---- printing ---------------------------------------------------------- */

/* a string member for printing: "?" when absent */
static const char *str(const json_t *obj, const char *path)
{
	const char *s = json_string_value(mp_json_path(obj, path));

	return s ? s : "?";
}

static const char *fmt_value(const char *unit, double v, char *buf, int len)
{
	/* beyond uint64_t a cast is undefined: the number as it is */
	if (!unit || !isfinite(v) || fabs(v) >= 1.8e19) {
		snprintf(buf, len, "%g", v);
		return buf;
	}
	if (!strcmp(unit, "ns"))
		return mp_fmt_duration(v < 0 ? 0 : (uint64_t)v, buf, len);
	if (!strcmp(unit, "bytes"))
		return mp_fmt_size(v < 0 ? 0 : (uint64_t)v, buf, len);
	if (!strcmp(unit, "bytes/s")) {
		mp_fmt_size(v < 0 ? 0 : (uint64_t)v, buf, len - 2);
		strcat(buf, "/s");
		return buf;
	}
	if (!strcmp(unit, "ratio"))
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%g", v);
	return buf;
}

static const char *fmt_delta(const char *unit, double v, char *buf, int len)
{
	char tmp[32];

	fmt_value(unit, fabs(v), tmp, sizeof(tmp));
	snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", tmp);
	return buf;
}

static void print_system(const json_t *doc)
{
	json_t *sys = json_object_get(doc, "system"), *b, *opts, *v;
	char s1[32], s2[32];
	const char *key;
	size_t i;

	printf("mpctl %s report, %s\n", str(doc, "mpctl_version"),
	       str(doc, "created"));
	printf("%-10s %s (%s)\n", "kernel", str(sys, "kernel_release"),
	       str(sys, "machine"));
	opts = mp_json_path(sys, "kernel_config.options");
	printf("%-10s", "config");
	json_object_foreach(opts, key, v) {
		const char *val = json_string_value(v), *name = key;

		/* a recorded document may hold any key: no prefix assumed */
		if (!strncmp(name, "CONFIG_", 7) && name[7])
			name += 7;
		printf(" %s=%s", name, val ? val : "?");
	}
	printf("%s\n", json_object_size(opts) ? "" : " unknown");
	printf("%-10s %s, swap %s, %lld cpus\n", "memory",
	       mp_fmt_size(json_integer_value(json_object_get(sys,
			   "mem_total_bytes")), s1, sizeof(s1)),
	       mp_fmt_size(json_integer_value(json_object_get(sys,
			   "swap_total_bytes")), s2, sizeof(s2)),
	       (long long)json_integer_value(json_object_get(sys,
							     "nr_cpus")));
	printf("%-10s %s\n", "cgroups", str(sys, "cgroup_mode"));
	printf("%-10s", "backends");
	json_array_foreach(json_object_get(sys, "backends"), i, b)
		printf(" %s%s", json_string_value(json_object_get(b, "name")),
		       json_is_true(json_object_get(b, "present")) ? "" :
		       " (absent)");
	printf("\n");
}

static void print_scenario(const json_t *sc)
{
	json_t *ms = json_object_get(sc, "metrics");
	char a[32], b[32], c[32];
	size_t i;

	printf("\nscenario %s: %s (%zu runs, %s)\n", str(sc, "name"),
	       str(sc, "description"),
	       json_array_size(json_object_get(sc, "runs")),
	       str(sc, "status"));
	if (json_object_get(sc, "reason"))
		printf("  %s\n", json_string_value(json_object_get(sc,
								   "reason")));
	if (!json_object_size(ms))
		return;
	printf("  %-18s %12s %12s %12s %8s\n", "metric", "median", "min",
	       "max", "spread");
	for (i = 0; i < mp_nr_metrics; i++) {
		const struct mp_metric *m = &mp_metrics[i];
		json_t *s = json_object_get(ms, m->name), *sp;

		if (!s)
			continue;
		sp = json_object_get(s, "spread_pct");
		printf("  %-18s %12s %12s %12s", m->name,
		       fmt_value(m->unit, json_number_value(
				 json_object_get(s, "median")), a, sizeof(a)),
		       fmt_value(m->unit, json_number_value(
				 json_object_get(s, "min")), b, sizeof(b)),
		       fmt_value(m->unit, json_number_value(
				 json_object_get(s, "max")), c, sizeof(c)));
		if (json_is_number(sp))
			printf(" %7.1f%%\n", json_number_value(sp));
		else
			printf(" %8s\n", "-");
	}
}

static void print_tables(const json_t *doc)
{
	json_t *sc;
	size_t i;

	print_system(doc);
	json_array_foreach(json_object_get(doc, "scenarios"), i, sc)
		print_scenario(sc);
}

static void print_compare(const json_t *cmp)
{
	json_t *row, *ms;
	char a[32], b[32], c[32], d[32], p[16], e[16];
	size_t i;

	printf("base %s, new %s\n",
	       json_string_value(json_object_get(cmp, "base_kernel")) ?: "?",
	       json_string_value(json_object_get(cmp, "new_kernel")) ?: "?");
	printf("%-15s %-18s %-6s %11s %11s %12s %8s %7s %7s  %s\n",
	       "scenario", "metric", "better", "base", "new", "delta",
	       "delta%", "p", "mde%", "verdict");
	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		const char *unit = json_string_value(json_object_get(row,
								    "unit"));
		const char *v = json_string_value(json_object_get(row,
								  "verdict"));
		json_t *pct = json_object_get(row, "delta_pct");
		json_t *pv = json_object_get(row, "p_value");
		json_t *mde = json_object_get(row, "mde_pct");

		if (json_is_number(pct))
			snprintf(d, sizeof(d), "%+.1f%%",
				 json_number_value(pct));
		else
			snprintf(d, sizeof(d), "-");
		if (json_is_number(pv))
			snprintf(p, sizeof(p), "%.3g", json_number_value(pv));
		else
			snprintf(p, sizeof(p), "-");
		if (json_is_number(mde))
			snprintf(e, sizeof(e), "%.1f%%",
				 json_number_value(mde));
		else
			snprintf(e, sizeof(e), "-");
		printf("%-15s %-18s %-6s %11s %11s %12s %8s %7s %7s  %s\n",
		       json_string_value(json_object_get(row, "scenario")),
		       json_string_value(json_object_get(row, "metric")),
		       json_string_value(json_object_get(row, "better")),
		       fmt_value(unit, json_number_value(
				 json_object_get(row, "base")), a, sizeof(a)),
		       fmt_value(unit, json_number_value(
				 json_object_get(row, "new")), b, sizeof(b)),
		       fmt_delta(unit, json_number_value(
				 json_object_get(row, "delta")), c, sizeof(c)),
		       d, p, e, !strcmp(v, "worse") ? "WORSE" : v);
	}
	ms = json_object_get(cmp, "missing_scenarios");
	json_array_foreach(ms, i, row)
		printf("scenario '%s' is missing from NEW\n",
		       json_string_value(row));
	printf("(medians; p: one-sided rank-sum test, a verdict needs p <= "
	       "%g, a new median beyond the base's boot-to-boot interval and "
	       "the minimum effect; mde: the smallest change this base "
	       "could detect)\n",
	       json_number_value(json_object_get(cmp, "alpha")));
	printf("%lld regression(s), %lld improvement(s), %lld unsure\n",
	       (long long)json_integer_value(json_object_get(cmp,
							     "regressions")),
	       (long long)json_integer_value(json_object_get(cmp,
							     "improvements")),
	       (long long)json_integer_value(json_object_get(cmp,
							     "unsure")));
}

/* ---- files ------------------------------------------------------------- */

/*
 * The files of a run: opened (checked, their temporary files made) before
 * the suite runs, written at the end. A failure before the end leaves
 * every existing file as it was (common/mp_output.c).
 */
struct report_file {
	const char *path;
	int (*fn)(FILE *, const json_t *, struct mp_err *);
	struct mp_output out;
	bool stdout_;
};

static int files_open(struct report_file *files, int n)
{
	struct mp_err err;
	int i;

	for (i = 0; i < n; i++) {
		if (!files[i].path)
			continue;
		if (!strcmp(files[i].path, "-")) {
			files[i].stdout_ = true;
			continue;
		}
		if (mp_output_open(&files[i].out, files[i].path, &err)) {
			while (i--)
				if (files[i].path && !files[i].stdout_)
					mp_output_abort(&files[i].out);
			return cmd_fail(&err);
		}
	}
	return 0;
}

static int file_write(struct report_file *rf, const json_t *doc,
		      bool pretty)
{
	struct mp_err err = { 0 };
	FILE *f;
	int ret;

	f = rf->stdout_ ? stdout : mp_output_stream(&rf->out, &err);
	if (!f) {
		mp_output_abort(&rf->out);
		return cmd_fail(&err);
	}
	if (rf->fn)
		ret = rf->fn(f, doc, &err);
	else
		ret = mp_json_emit(f, doc, pretty);
	if (rf->stdout_)
		return ret ? MP_EXIT_FAILURE : 0;
	if (ret) {
		if (!err.msg[0])
			mp_errf(&err, MP_EXIT_FAILURE, errno ? errno : EIO,
				"cannot write '%s'", rf->path);
		mp_output_abort(&rf->out);
		return cmd_fail(&err);
	}
	if (mp_output_commit(&rf->out, &err))
		return cmd_fail(&err);
	return 0;
}

/* Write every file; after a failure the rest keep their old contents. */
static int files_write(struct report_file *files, int n, const json_t *doc,
		       bool pretty)
{
	int i, ret = 0;

	for (i = 0; i < n; i++) {
		if (!files[i].path)
			continue;
		if (ret) {
			if (!files[i].stdout_)
				mp_output_abort(&files[i].out);
			continue;
		}
		ret = file_write(&files[i], doc, pretty);
	}
	return ret;
}

static void files_abort(struct report_file *files, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (files[i].path && !files[i].stdout_)
			mp_output_abort(&files[i].out);
}

/* Fill metrics a recorded report lacks (e.g. one written by hand). */
static void summarize_all(json_t *doc)
{
	json_t *sc;
	size_t i;

	json_array_foreach(json_object_get(doc, "scenarios"), i, sc)
		mp_report_summarize(sc);
}

static int do_compare(const struct report_opts *o)
{
	struct mp_compare_opts copts = {
		.min_effect_pct = o->threshold,
		.alpha = o->alpha > 0 ? o->alpha : MP_COMPARE_ALPHA,
	};
	json_t *base, *cur, *cmp;
	struct mp_err err;
	int ret;

	base = mp_json_load_file(o->args[0], &err);
	if (!base)
		return cmd_fail(&err);
	cur = mp_json_load_file(o->args[1], &err);
	if (!cur) {
		json_decref(base);
		return cmd_fail(&err);
	}
	if (mp_report_check(base, o->args[0], &err) ||
	    mp_report_check(cur, o->args[1], &err)) {
		json_decref(base);
		json_decref(cur);
		return cmd_fail(&err);
	}
	summarize_all(base);
	summarize_all(cur);
	if (!o->allow_empty &&
	    (mp_report_usable(base, o->args[0], &err) ||
	     mp_report_usable(cur, o->args[1], &err))) {
		json_decref(base);
		json_decref(cur);
		return cmd_fail(&err);
	}
	cmp = mp_report_compare(base, cur, &copts, &err);
	json_decref(base);
	json_decref(cur);
	if (!cmp)
		return cmd_fail(&err);
	if (o->json)
		mp_json_emit(stdout, cmp, o->pretty);
	else
		print_compare(cmp);
	ret = json_integer_value(json_object_get(cmp, "regressions")) ?
	      MP_EXIT_FAILURE : MP_EXIT_OK;
	/* a scenario of BASE that NEW lacks is not "no regression" */
	if (!o->allow_empty &&
	    json_array_size(json_object_get(cmp, "missing_scenarios"))) {
		mp_errf(&err, MP_EXIT_DATAERR, 0,
			"'%s' lacks scenarios of '%s' (missing_scenarios)",
			o->args[1], o->args[0]);
		ret = cmd_fail(&err);
	}
	json_decref(cmp);
	return ret;
}

static void list_scenarios(void)
{
	size_t i;

	for (i = 0; i < NR_SCENARIOS; i++)
		printf("%-15s %s\n", scenarios[i].name,
		       scenarios[i].description);
}

/*
 * SIGINT, SIGTERM, SIGHUP during a run: the handler only records the
 * signal; the loops that wait for children see it (poll returns EINTR),
 * pass it on to the children's process groups, collect what the children
 * write as they stop, and the report is written marked incomplete.
 */
static void on_signal(int sig)
{
	if (!report_signal)
		report_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {
		.duration_ns = 5000000000ULL,
		.repeat = 3,
		.threshold = -1,
		.limit = 128 << 20,
	};
	struct report_file files[3] = {
		{ NULL, NULL }, { NULL, mp_svg_report }, { NULL, mp_html_report },
	};
	struct mp_err err;
	bool failed = false;
	json_t *doc;
	int ret = 0;

	cmd_argp_parse(&report_argp, argc, argv, &o);
	if (o.list) {
		list_scenarios();
		return MP_EXIT_OK;
	}
	if (o.compare)
		return do_compare(&o);

	/* every output is checked before anything runs */
	files[0].path = o.output;
	files[1].path = o.svg;
	files[2].path = o.html;
	ret = files_open(files, 3);
	if (ret)
		return ret;
	if (o.input) {
		doc = mp_json_load_file(o.input, &err);
		if (!doc || mp_report_check(doc, o.input, &err)) {
			json_decref(doc);
			files_abort(files, 3);
			return cmd_fail(&err);
		}
		summarize_all(doc);
	} else {
		struct mp_parent par;

		catch_signals();
		/* without a memory cgroup the scenarios say so, one by one */
		if (mp_parent_acquire(o.parent, "report", &par, &err)) {
			if (err.status != MP_EXIT_UNAVAILABLE) {
				files_abort(files, 3);
				return cmd_fail(&err);
			}
		} else {
			o.par = &par;
		}
		doc = run_suite(&o, &failed);
		if (o.par)
			mp_parent_release(o.par);
		json_object_set_new(doc, "complete",
				    json_boolean(!report_signal));
		if (report_signal) {
			json_object_set_new(doc, "interrupted_by", json_string(
				sigabbrev_np(report_signal)));
			cmd_error("interrupted by SIG%s: the report is "
				  "incomplete", sigabbrev_np(report_signal));
		}
	}
	ret = files_write(files, 3, doc, o.pretty);
	if (!ret) {
		if (o.json && !o.output)
			ret = mp_json_emit(stdout, doc, o.pretty) ?
			      MP_EXIT_FAILURE : 0;
		else if (!o.json)
			print_tables(doc);
	}
	json_decref(doc);
	if (!ret && failed)
		ret = MP_EXIT_FAILURE;
	/* as a shell reports a job killed by the signal */
	if (report_signal)
		ret = 128 + report_signal;
	return ret;
}
