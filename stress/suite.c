// SPDX-License-Identifier: GPL-2.0
/*
 * The standard suite of mpctl report, see suite.h: the scenarios, the
 * children that run them ("mpctl stress", "mpctl listen"), their
 * supervision, and the report document built from what they write.
 *
 * Each scenario runs --repeat times; the report keeps every run and, per
 * metric, the median and the spread of the samples (common/mp_report.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "mp_backend.h"
#include "mp_cgroup.h"
#include "mp_clock.h"
#include "mp_json.h"
#include "mp_info.h"
#include "mp_memstat.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_report.h"
#include "mp_spawn.h"
#include "mp_stats.h"
#include "mp_target.h"
#include "suite.h"
#include "workload.h"

/* a run of the suite: its settings and where its cgroups go */
struct suite {
	const struct report_suite_cfg *cfg;
	struct mp_parent *par; /* NULL: no memory cgroup */
	bool failed;
};

struct scenario {
	const char *name;
	const char *description;
	int (*run)(const struct suite *su, const struct scenario *s,
		   json_t **out, struct mp_err *err);
	const char *stress_args[6]; /* extra "mpctl stress" arguments */
	int hog_pct;		    /* a stress-ng vm hog, % of the limit */
	/* the allocator engine's: skipped without the kernel's shrinker */
	bool needs_kernel_shrinker;
	/*
	 * the cache's strategy (a row of stress/workload.c, whose needs
	 * skip it): --strategy NAME, short runs, not in the standard suite
	 */
	const char *strategy;
	/* why it is skipped without the kernel's shrinker (NULL: default) */
	const char *why_kernel;
};

/* a strategy run's duration at most: --repeat 3 costs 3 s per strategy */
#define STRATEGY_DURATION_NS ((uint64_t)1000000000)

/* clang-format off */
#define STRATEGY(name, what) \
	{ "strategy-" name, "mpctl stress --strategy " name ": " what, \
	  run_stress, .strategy = name }

/* the reason a kernel-only scenario is skipped without the kernel's shrinker */
#define KERNEL_ONLY	"needs the kernel's shrinker (a patched kernel)"

static int run_stress(const struct suite *su, const struct scenario *s,
		      json_t **out, struct mp_err *err);
static int run_listen(const struct suite *su, const struct scenario *s,
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
	/*
	 * Where the kernels differ (issue 18): memory.max alone, where no
	 * charge over memory.high asks first and only reclaim at the limit
	 * does; and a program that answers 50 ms after reading a request,
	 * inside the kernel's wait for an answer (150 ms since the read,
	 * 200 ms at most over memory.high), which a kernel that waits
	 * less or not at all turns into swap, reclaim of other memory or
	 * an OOM kill.
	 */
	{ .name = "kernel-shrinker-max",
	  .description = "mpctl stress --no-assist --swap --no-throttle: "
	  "the limit alone, no memory.high (v1: soft limit); the kernel asks "
	  "at the limit",
	  .run = run_stress,
	  .stress_args = { "--no-assist", "--swap", "--no-throttle" },
	  .needs_kernel_shrinker = true, .why_kernel = KERNEL_ONLY },
	{ .name = "kernel-shrinker-late",
	  .description = "mpctl stress --no-assist --swap --answer-delay "
	  "50ms: the program answers every request 50 ms after reading it",
	  .run = run_stress,
	  .stress_args = { "--no-assist", "--swap", "--answer-delay",
			   "50ms" },
	  .needs_kernel_shrinker = true, .why_kernel = KERNEL_ONLY },
	/* the same without swap: reclaim can only take the chunks or kill */
	{ .name = "kernel-shrinker-noswap",
	  .description = "mpctl stress --no-assist: kernel-shrinker without "
	  "swap, where reclaim can only take the chunks or kill",
	  .run = run_stress, .stress_args = { "--no-assist" },
	  .needs_kernel_shrinker = true, .why_kernel = KERNEL_ONLY },
	/*
	 * A program that stops answering beside a co-tenant. The registration
	 * stays while nobody reads the requests; what the kernel's wait for an
	 * answer costs shows in the co-tenant's small allocations over
	 * memory.high (cotenant_p99_ns), not in the program's own numbers
	 */
	{ .name = "kernel-shrinker-stopped",
	  .description = "mpctl stress --no-assist --swap --stop-answering "
	  "25% --cotenant: the program stops reading requests after a "
	  "quarter of the run, registered, beside a co-tenant mapping 64K "
	  "at a time in the same cgroup",
	  .run = run_stress,
	  .stress_args = { "--no-assist", "--swap", "--stop-answering", "25%",
			   "--cotenant" },
	  .needs_kernel_shrinker = true, .why_kernel = KERNEL_ONLY },
	STRATEGY("none", "a Zipf-read cache that never gives memory back"),
	STRATEGY("madv-free", "the cache's chunks MADV_FREE, re-created "
		 "when dropped"),
	STRATEGY("psi", "the cache drops chunks when the emulated shrinker "
		 "asks"),
	STRATEGY("kernel", "the cache drops chunks when the kernel's "
		 "shrinker asks"),
	STRATEGY("kernel-lazyfree", "kernel asks, chunks kept MADV_FREE"),
	/* the same program written the ordinary way: issue 21's */
	{ "strategy-kernel-munmap", "mpctl stress --strategy kernel --free "
	  "munmap: the cache maps a chunk a miss, populates it, munmap()s "
	  "what the kernel's shrinker asks for", run_stress,
	  { "--free", "munmap" }, .strategy = "kernel" },
	/* cgroup v2 with memory.reclaim only: skipped with the reason else */
	STRATEGY("reclaim-agent", "a Senpai-like agent writes memory.reclaim "
		 "to hold the usage under the target"),
};
/* clang-format on */

#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* ---- children ---------------------------------------------------------- */

/* the signal that interrupts the run, 0 if none (see catch_signals()) */
static volatile sig_atomic_t report_signal;

/* a message for the caller's stderr */
static void warn(const struct suite *su, const struct mp_err *msg)
{
	if (su->cfg->warn)
		su->cfg->warn(msg, su->cfg->arg);
}

static uint64_t now_mono(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

/*
 * Start /proc/self/exe with argv, stdout to a pipe (c->out), stderr to a
 * pipe (c->err) when err_pipe, else ours. Its own process group, stopped
 * by us; and never outliving a report killed with SIGKILL: SIGTERM lets
 * "mpctl stress" remove its cgroups and its stress-ng hog.
 */
static int spawn_self(struct mp_child *c, char *const argv[], bool err_pipe,
		      const char *name, struct mp_err *err)
{
	mp_child_init(c, argv);
	c->file = "/proc/self/exe";
	c->name = name;
	c->out = MP_CHILD_PIPE;
	c->err = err_pipe ? MP_CHILD_PIPE : 0;
	c->pgroup = true;
	c->pdeathsig = SIGTERM;
	return mp_child_start(c, err);
}

/*
 * Pass an interruption on to a child's process group once; a child that
 * then does not end in 10 s is killed. Returns the deadline to use.
 */
static uint64_t pass_signal(struct mp_child *c, bool *passed, uint64_t deadline)
{
	uint64_t soon = mp_now_ns(CLOCK_MONOTONIC) + 10000000000ULL;

	if (!report_signal || *passed)
		return deadline;
	*passed = true;
	mp_child_signal(c, report_signal);
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

/* Its wait status, killed at the deadline (0: none); -1 on error. */
static int wait_child(struct mp_child *c, uint64_t deadline)
{
	uint64_t now = now_mono();

	if (deadline)
		mp_child_stop(c, 0, deadline > now ? deadline - now : 0);
	else
		mp_child_wait(c, 0);
	return c->exited ? c->status : -1;
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

static void stress_argv(const struct suite *su, const struct scenario *s,
			const char *cgroup, struct stress_args *a)
{
	const struct report_suite_cfg *o = su->cfg;
	int n = 0, i;

	snprintf(a->dur, sizeof(a->dur), "%" PRIu64 "ms",
		 (s->strategy && o->duration_ns > STRATEGY_DURATION_NS ?
			  STRATEGY_DURATION_NS :
			  o->duration_ns) /
			 1000000);
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
	} else if (su->par) {
		a->argv[n++] = "--parent";
		a->argv[n++] = su->par->t.role[MP_ROLE_MEMORY].cg.dir;
	}
	if (s->hog_pct) {
		/* a fixed seed: the same hog in every run and boot */
		snprintf(a->hog, sizeof(a->hog),
			 "--vm 1 --vm-bytes %" PRIu64 "k --vm-keep --seed 1",
			 o->limit / 100 * s->hog_pct / 1024);
		a->argv[n++] = "--hog";
		a->argv[n++] = a->hog;
	}
	if (s->strategy) {
		a->argv[n++] = "--strategy";
		a->argv[n++] = (char *)s->strategy;
	}
	for (i = 0; i < 6 && s->stress_args[i]; i++)
		a->argv[n++] = (char *)s->stress_args[i];
	for (i = 0; i < o->nr_stress_args; i++)
		a->argv[n++] = (char *)o->stress_args[i];
	a->argv[n] = NULL;
}

/*
 * A stress run's outcome. Status 1 with a document is a result, not a
 * failure of the scenario: the engine was OOM-killed, and oom_kills says
 * so; but an engine that had to be killed because it did not stop at the
 * end is a failed run. The run keeps its exit status.
 */
static int stress_result(int status, json_t **doc, struct mp_err *err)
{
	const char *why =
		json_string_value(json_object_get(*doc, "exit_reason"));
	bool ok = !status ||
		  (WIFEXITED(status) && WEXITSTATUS(status) == 1 && *doc);
	const json_t *hog;
	json_int_t hog_status;

	if (ok && why && !strcmp(why, "engine_unresponsive")) {
		json_decref(*doc);
		*doc = NULL;
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "mpctl stress: the engine did not stop at the "
			       "end of the run and was killed");
	}

	if (!ok) {
		json_decref(*doc);
		*doc = NULL;
		return child_failed(status, "mpctl stress", err);
	}
	if (!*doc)
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "mpctl stress wrote no JSON document");
	/* a scenario beside a hog without its hog measured something else */
	hog = json_object_get(*doc, "hog");
	if (json_is_true(json_object_get(hog, "failed"))) {
		hog_status =
			json_integer_value(json_object_get(hog, "exit_status"));
		json_decref(*doc);
		*doc = NULL;
		if (!hog_status)
			return mp_errf(err, MP_EXIT_FAILURE, 0,
				       "the hog failed: stress-ng was killed");
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "the hog failed: stress-ng exited with status %d",
			       (int)hog_status);
	}
	json_object_set_new(*doc, "exit_status",
			    json_integer(WEXITSTATUS(status)));
	return 0;
}

/* Run "mpctl stress --json" once and return its document. */
static int run_stress(const struct suite *su, const struct scenario *s,
		      json_t **out, struct mp_err *err)
{
	struct stress_args a;
	struct buf b = { 0 };
	struct mp_child c;
	uint64_t deadline;
	bool passed = false;
	int fd, status;

	stress_argv(su, s, NULL, &a);
	if (spawn_self(&c, a.argv, false, "mpctl stress", err))
		return -1;
	fd = c.out;
	/* a run that hangs is killed: three times its duration and 30 s */
	deadline = now_mono() + su->cfg->duration_ns * 3 + 30000000000ULL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now;
		int n, ms;

		deadline = pass_signal(&c, &passed, deadline);
		now = now_mono();
		if (now >= deadline)
			break;
		/* a second at most: pass_signal() looks again */
		ms = mp_poll_ms(deadline, now);
		n = poll(&pfd, 1, ms > 1000 ? 1000 : ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && buf_read(&b, fd) <= 0)
			break;
	}
	close(fd);
	status = wait_child(&c, deadline);
	mp_child_release(&c);
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
static int listen_cgroup(const struct suite *su, struct mp_target *t,
			 enum mp_backend *backend, struct mp_err *err)
{
	struct mp_target_spec spec = {
		.limit = su->cfg->limit,
		.mempressure = true,
	};
	const struct mp_cgroup *mem;
	char name[128];

	if (!su->par)
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
			       "no memory cgroup to run the listener on");
	mp_target_remove_stale(&su->par->t, "report");
	if (mp_target_name(name, sizeof(name), "report", "listen"))
		return mp_errf(err, MP_EXIT_FAILURE, errno, "cgroup name");
	if (mp_target_create(&su->par->t, name, &spec, t, err))
		return -1;
	mem = mp_target_cg(t, MP_ROLE_MEMORY);
	*backend = mem->hier->version == MP_CG_V1 ? MP_BACKEND_MEMCG :
						    MP_BACKEND_PSI;
	return 0;
}

struct listen_acc {
	struct mp_hist lat; /* wake-up to line read, as stress's */
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

	while (a->b.data &&
	       (nl = memchr(a->b.data + a->done, '\n', a->b.len - a->done))) {
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
 * listen's stderr: its complete lines go on to the caller's child_line(),
 * except the one that says it is listening ("mpctl listen: listening: ..."
 * from --verbose), which sets *ready (if not NULL).
 */
static void listen_stderr(const struct suite *su, struct buf *b, bool *ready)
{
	const struct report_suite_cfg *cfg = su->cfg;

	char *line = b->data, *nl;

	if (!b->len)
		return;
	while ((nl = memchr(line, '\n', b->data + b->len - line))) {
		*nl = '\0';
		if (strstr(line, ": listening: ")) {
			if (ready)
				*ready = true;
		} else if (cfg->child_line) {
			cfg->child_line(line, cfg->arg);
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
static void wait_listening(const struct suite *su, int fd, struct buf *b,
			   uint64_t deadline)
{
	bool ready = false;
	uint64_t now;

	while (!ready && !report_signal && (now = now_mono()) < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n;

		n = poll(&pfd, 1, mp_poll_ms(deadline, now));
		if (n < 0 && errno != EINTR)
			return;
		if (n <= 0)
			continue;
		n = buf_read(b, fd);
		if (n == 0 || (n < 0 && errno != EINTR))
			return;
		listen_stderr(su, b, &ready);
	}
}

/*
 * The listen scenario: "mpctl listen --json" watches the cgroup that
 * "mpctl stress" runs in. For every event line, the latency is the time
 * from listen's wake-up (its "monotonic_ns") to our reading the line: the
 * cost of mpctl's own formatting and writing and of a reader's wake-up.
 * It does not include the kernel's delay before it signals.
 */
static int run_listen(const struct suite *su, const struct scenario *s,
		      json_t **out, struct mp_err *err)
{
	/* on the heap: its histogram is 8 KB, the two children 9 KB */
	struct listen_acc *acc = calloc(1, sizeof(*acc));
	struct buf sb = { 0 }, eb = { 0 };
	struct stress_args sa;
	enum mp_backend be = MP_BACKEND_MEMCG;
	const struct mp_cgroup *cg;
	struct mp_target *lt = calloc(1, sizeof(*lt));
	uint64_t start, deadline, t;
	struct mp_child lc, sc;
	int lfd, lerr, sfd, lstatus, sstatus, ret = 0;
	char *largv[] = { "mpctl",     "listen",    "--json",
			  "--verbose", "--backend", NULL,
			  "--cgroup",  NULL,	    NULL };
	bool lopen = true, eopen = true, sopen = true, passed = false;
	json_t *stress = NULL, *doc;

	if (!lt || !acc) {
		free(lt);
		free(acc);
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "listen");
	}
	if (listen_cgroup(su, lt, &be, err)) {
		free(lt);
		free(acc);
		return -1;
	}
	cg = mp_target_cg(lt, MP_ROLE_MEMORY);
	largv[5] = (char *)mp_backend_name(be);
	largv[7] = (char *)cg->dir;
	if (spawn_self(&lc, largv, true, "mpctl listen", err)) {
		ret = -1;
		goto out_cg;
	}
	lfd = lc.out;
	lerr = lc.err;
	/* listen registers before stress starts to allocate */
	wait_listening(su, lerr, &eb, now_mono() + 10000000000ULL);
	stress_argv(su, s, cg->dir, &sa);
	start = mp_now_ns(CLOCK_MONOTONIC);
	if (spawn_self(&sc, sa.argv, false, "mpctl stress", err)) {
		ret = -1;
		mp_child_signal(&lc, SIGTERM);
		wait_child(&lc, 0);
		close(lfd);
		goto out_err;
	}
	sfd = sc.out;
	deadline = start + su->cfg->duration_ns * 3 + 30000000000ULL;
	while (sopen && now_mono() < deadline) {
		struct pollfd pfd[3] = {
			{ .fd = lopen ? lfd : -1, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = eopen ? lerr : -1, .events = POLLIN },
		};

		deadline = pass_signal(&sc, &passed, deadline);

		if (poll(pfd, 3, 100) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents) {
			if (buf_read(&eb, lerr) <= 0)
				eopen = false;
			listen_stderr(su, &eb, NULL);
		}
		if (pfd[0].revents) {
			t = now_mono();
			if (buf_read(&acc->b, lfd) <= 0)
				lopen = false;
			listen_lines(acc, t);
		}
		if (pfd[1].revents && buf_read(&sb, sfd) <= 0)
			sopen = false;
	}
	close(sfd);
	sstatus = wait_child(&sc, deadline);
	mp_child_release(&sc);
	/* late lines: whatever listen wrote before it heard SIGTERM */
	mp_child_signal(&lc, SIGTERM);
	while (lopen && buf_read(&acc->b, lfd) > 0)
		listen_lines(acc, now_mono());
	lstatus = wait_child(&lc, now_mono() + 2000000000ULL);
	close(lfd);
	/* listen has exited: the rest of its stderr, to the end */
	while (eopen && buf_read(&eb, lerr) > 0)
		;
	if (eb.len)
		eb.data[eb.len++] = '\n';
	listen_stderr(su, &eb, NULL);
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
	json_object_set_new(
		doc, "latency_kind",
		json_string("listen wake-up to event line read by the reader"));
	json_object_set_new(doc, "backend", json_string(mp_backend_name(be)));
	/* clang-format off */
	json_object_set_new(doc, "events", json_pack("{s:I, s:I, s:I}",
		"low", (json_int_t)acc->levels[MP_LEVEL_LOW],
		"medium", (json_int_t)acc->levels[MP_LEVEL_MEDIUM],
		"critical", (json_int_t)acc->levels[MP_LEVEL_CRITICAL]));
	json_object_set_new(doc, "event_lines",
			    json_integer((json_int_t)acc->n));
	if (acc->n) {
		json_object_set_new(doc, "latency", json_pack(
			"{s:I, s:I, s:I, s:I}",
			"count", (json_int_t)acc->n,
			"p50_ns", (json_int_t)mp_hist_quantile(&acc->lat, 0.50),
			"p99_ns", (json_int_t)mp_hist_quantile(&acc->lat, 0.99),
					       /* clang-format on */
					       "max_ns",
					       (json_int_t)acc->lat.max));
		json_object_set_new(doc, "first_event_ns",
				    json_integer((
					    json_int_t)(acc->first_mono > start ?
								acc->first_mono -
									start :
								0)));
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
	free(acc->b.data);
out_err:
	close(lerr);
	mp_child_release(&lc);
	free(eb.data);
out_cg:
	if (mp_target_remove(lt, 5000) && !ret) {
		struct mp_err left;

		mp_errf(&left, MP_EXIT_FAILURE, errno,
			"cannot remove cgroup '%s'", cg->dir);
		warn(su, &left);
	}
	free(lt);
	free(acc);
	return ret;
}

/* ---- the system -------------------------------------------------------- */

/* the options that shape memory pressure; "n" when not set */
static const char *const config_names[] = {
	"CONFIG_CGROUP_MEMPRESSURE",
	"CONFIG_MEMCG",
	"CONFIG_MEMCG_V1",
	"CONFIG_PSI",
	"CONFIG_PSI_DEFAULT_DISABLED",
	"CONFIG_SWAP",
	"CONFIG_ZSWAP",
	"CONFIG_ZRAM",
	"CONFIG_TRANSPARENT_HUGEPAGE",
	"CONFIG_LRU_GEN",
	"CONFIG_LRU_GEN_ENABLED",
	"CONFIG_HZ",
	"CONFIG_PREEMPT_NONE",
	"CONFIG_PREEMPT_VOLUNTARY",
	"CONFIG_PREEMPT",
	"CONFIG_PREEMPT_DYNAMIC",
	"CONFIG_KASAN",
	"CONFIG_PROVE_LOCKING",
	"CONFIG_DEBUG_KMEMLEAK",
	NULL,
};

/*
 * The options of the running kernel from /proc/config.gz or
 * /boot/config-RELEASE (zlib reads either, compressed or not). An option
 * the config does not list is "n"; when the config cannot be read, reads
 * as no config at all, or ends early (a truncated gzip stream, no
 * trailer: "error" says so), an option not read is null: unknown, not "n".
 */
static json_t *kernel_config(const char *release)
{
	json_t *c = json_object(), *opts = json_object();
	json_t *found = json_object();
	char path[PATH_MAX], name_buf[PATH_MAX], line[512];
	const char *src = NULL;
	bool known = false;
	const char *zmsg;
	gzFile f = NULL;
	int i, zerr = Z_OK;

	if (!access(mp_syspath(path, sizeof(path), "/proc/config.gz"), F_OK)) {
		src = "/proc/config.gz";
	} else {
		snprintf(name_buf, sizeof(name_buf), "/boot/config-%s",
			 release);
		if (!access(mp_syspath(path, sizeof(path), name_buf), F_OK))
			src = name_buf;
	}
	if (src)
		f = gzopen(path, "rb");
	mp_json_set(c, "source", src ? json_string(src) : NULL);
	while (f && gzgets(f, line, sizeof(line))) {
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
		known = true;
		for (i = 0; config_names[i]; i++)
			if (!strcmp(name, config_names[i]))
				break;
		if (config_names[i])
			json_object_set_new(found, name, json_string(val));
	}
	if (f) {
		/* Z_BUF_ERROR: the stream ended early (a truncated file, or
		 * no trailer), so the options read are not the whole config */
		zmsg = gzerror(f, &zerr);
		/* zlib's message starts with the path it opened */
		if (!strncmp(zmsg, path, strlen(path)) &&
		    !strncmp(zmsg + strlen(path), ": ", 2))
			zmsg += strlen(path) + 2;
		if (zerr == Z_BUF_ERROR)
			mp_json_set(c, "error",
				    json_sprintf("'%s': truncated: %s", src,
						 zmsg));
		else if (zerr != Z_OK)
			mp_json_set(c, "error",
				    json_sprintf("'%s': %s", src, zmsg));
		gzclose(f);
	}
	if (zerr != Z_OK)
		known = false;
	/* in the list's order; "n" for what a config read does not list */
	for (i = 0; config_names[i] && src; i++) {
		json_t *v = json_object_get(found, config_names[i]);

		json_object_set_new(opts, config_names[i],
				    v	  ? json_incref(v) :
				    known ? json_string("n") :
					    json_null());
	}
	json_decref(found);
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
	const struct mp_system *ms = mp_system();
	json_t *sys = json_object();
	struct mp_meminfo mi;
	struct utsname u;
	enum mp_backend b;

	uname(&u);
	json_object_set_new(sys, "kernel_release", json_string(u.release));
	json_object_set_new(sys, "kernel_version", json_string(u.version));
	json_object_set_new(sys, "machine", json_string(u.machine));
	json_object_set_new(sys, "kernel_config", kernel_config(u.release));
	json_object_set_new(sys, "nr_cpus", json_integer(get_nprocs()));
	mp_meminfo_read(&mi); /* on failure, have is 0: nulls */
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
	json_object_set_new(sys, "backends", mp_info_backends(false));
	b = mp_backend_pick(MP_USE_EVENTS);
	mp_json_set(sys, "default_backend",
		    b == MP_BACKEND_AUTO ? NULL :
					   json_string(mp_backend_name(b)));
	return sys;
}

/* ---- running the suite ------------------------------------------------- */

static bool have_stress_ng(void)
{
	char path[PATH_MAX];

	return !mp_path_search("stress-ng", path, sizeof(path));
}

/*
 * The scenarios named with --scenario; without, the standard suite: every
 * scenario but the strategy-* ones, which are asked for by name (each
 * scenario costs its runs in every boot of make check's comparison, and
 * the strategies are compared in their own table)
 */
static bool selected(const struct report_suite_cfg *o, const struct scenario *s)
{
	int i;

	if (!o->nr_scenarios)
		return !s->strategy;
	for (i = 0; i < o->nr_scenarios; i++)
		if (!strcmp(o->scenarios[i], s->name))
			return true;
	return false;
}

/* the row of s's strategy, NULL for the allocator engine's scenarios */
static const struct stress_workload *workload(const struct scenario *s)
{
	return s->strategy ? stress_workload_strategy(s->strategy) : NULL;
}

/* why a strategy that needs memory.reclaim cannot run here, NULL if it can */
static const char *no_memory_reclaim(const struct suite *su,
				     const struct scenario *s)
{
	const struct stress_workload *w = workload(s);
	const struct mp_cgroup *mem;

	if (!w || !(w->needs & STRESS_NEEDS_MEMORY_RECLAIM))
		return NULL;
	if (!su->par)
		return "needs memory.reclaim: there is no memory cgroup";
	mem = mp_target_cg(&su->par->t, MP_ROLE_MEMORY);
	if (mem->hier && mem->hier->version == MP_CG_V1)
		return "needs memory.reclaim (cgroup v2): the memory controller is on cgroup v1 here";
	return NULL;
}

/* why scenario s cannot run here (it is skipped), NULL if it can */
static const char *skip_reason(const struct suite *su, const struct scenario *s)
{
	const struct stress_workload *w = workload(s);
	struct mp_err err;

	if (s->hog_pct && !have_stress_ng())
		return "stress-ng is not installed";
	if ((s->needs_kernel_shrinker ||
	     (w && (w->needs & STRESS_NEEDS_KERNEL_SHRINKER))) &&
	    mp_backend_probe(mp_backend_kernel_shrinker(), &err))
		return w	     ? KERNEL_ONLY :
		       s->why_kernel ? s->why_kernel :
				       "no kernel shrinker: the same as "
				       "'shrinker' here";
	return no_memory_reclaim(su, s);
}

/* scenario s's runs, or skipped for why (non-NULL) */
static json_t *run_scenario(struct suite *su, const struct scenario *s,
			    const char *why)
{
	json_t *sc = json_object(), *runs = json_array(), *run;
	struct mp_err err, msg;
	long long i;

	json_object_set_new(sc, "name", json_string(s->name));
	json_object_set_new(sc, "description", json_string(s->description));
	json_object_set_new(sc, "runs", runs);
	if (why) {
		json_object_set_new(sc, "status", json_string("skipped"));
		json_object_set_new(sc, "reason", json_string(why));
		return sc;
	}
	for (i = 0; i < su->cfg->repeat && !report_signal; i++) {
		if (s->run(su, s, &run, &err)) {
			bool skip = err.status == MP_EXIT_UNAVAILABLE ||
				    err.status == MP_EXIT_NOPERM;

			json_object_set_new(sc, "status",
					    json_string(skip ? "skipped" :
							       "failed"));
			json_object_set_new(sc, "reason", json_string(err.msg));
			if (!skip)
				su->failed = true;
			mp_errf(&msg, err.status, 0, "scenario '%s': %s%s",
				s->name, skip ? "skipped: " : "", err.msg);
			warn(su, &msg);
			break;
		}
		json_array_append_new(runs, run);
	}
	if (report_signal && !json_object_get(sc, "status")) {
		/* the runs so far, the last one cut short */
		json_object_set_new(sc, "status", json_string("interrupted"));
		json_object_set_new(sc, "reason",
				    json_string("the report was interrupted"));
	}
	if (!json_object_get(sc, "status"))
		json_object_set_new(sc, "status", json_string("ok"));
	mp_report_summarize(sc);
	return sc;
}

static json_t *settings_json(const struct report_suite_cfg *o)
{
	json_t *names = json_array(), *extra = json_array();
	size_t i;
	int k;

	for (i = 0; i < NR_SCENARIOS; i++)
		if (selected(o, &scenarios[i]))
			json_array_append_new(names,
					      json_string(scenarios[i].name));
	for (k = 0; k < o->nr_stress_args; k++)
		json_array_append_new(extra, mp_json_str(o->stress_args[k]));
	/* clang-format off */
	return json_pack("{s:I, s:I, s:I, s:o, s:o}",
			 "duration_ns", (json_int_t)o->duration_ns,
			 "repeat", (json_int_t)o->repeat,
			 "limit_bytes", (json_int_t)o->limit,
			 "scenarios", names,
			 /* clang-format on */
			 "stress_args", extra);
}

static json_t *run_suite(struct suite *su)
{
	const struct report_suite_cfg *o = su->cfg;
	json_t *doc = mp_json_doc(MP_REPORT_SCHEMA, MP_REPORT_SCHEMA_VERSION);
	json_t *scs = json_array();
	const char *why;
	char when[64];
	time_t t = time(NULL);
	struct tm tm;
	size_t i;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(doc, "mpctl_version", json_string(MPCTL_VERSION));
	json_object_set_new(doc, "created", json_string(when));
	json_object_set_new(doc, "system", system_json());
	json_object_set_new(doc, "settings", settings_json(o));
	json_object_set_new(doc, "scenarios", scs);
	for (i = 0; i < NR_SCENARIOS && !report_signal; i++) {
		if (!selected(o, &scenarios[i]))
			continue;
		why = skip_reason(su, &scenarios[i]);
		if (o->starting)
			o->starting(scenarios[i].name, why, o->arg);
		json_array_append_new(scs,
				      run_scenario(su, &scenarios[i], why));
	}
	json_object_set_new(doc, "complete", json_boolean(!report_signal));
	if (report_signal)
		json_object_set_new(doc, "interrupted_by",
				    json_string(sigabbrev_np(report_signal)));
	return doc;
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

const char *report_suite_scenario(size_t i, const char **description)
{
	if (i >= NR_SCENARIOS)
		return NULL;
	if (description)
		*description = scenarios[i].description;
	return scenarios[i].name;
}

bool report_suite_standard(size_t i)
{
	return i < NR_SCENARIOS && !scenarios[i].strategy;
}

/*
 * --stress-arg is for experiments: an option report sets itself (the run's
 * duration, limit, cgroup, output) or reads the run by (--json, no help
 * text) would silently change what the report says it measured. Long
 * options are matched as getopt does, by any prefix; short ones through a
 * cluster ("-jd5s") up to the first that takes an argument.
 */
static const char *const report_owned[] = {
	"json",	  "pretty", "duration", "limit", "cgroup", "parent",
	"output", "quiet",  "hog",	"help",	 "usage",  "version",
};
#define REPORT_OWNED_SHORT "jpdLcoqH?V"
#define STRESS_ARG_SHORT   "bcCdHLoT" /* stress's short options with a value */

static const char *stress_arg_owned(const char *arg)
{
	size_t len, i;
	const char *p;

	if (!strncmp(arg, "--", 2) && arg[2]) {
		len = strcspn(arg + 2, "=");
		for (i = 0; i < sizeof(report_owned) / sizeof(report_owned[0]);
		     i++)
			if (len <= strlen(report_owned[i]) &&
			    !strncmp(arg + 2, report_owned[i], len))
				return report_owned[i];
		return NULL;
	}
	if (arg[0] != '-' || arg[1] == '-')
		return NULL;
	for (p = arg + 1; *p; p++) {
		if (strchr(REPORT_OWNED_SHORT, *p))
			return arg;
		if (strchr(STRESS_ARG_SHORT, *p))
			break;
	}
	return NULL;
}

json_t *report_suite_run(const struct report_suite_cfg *cfg, bool *failed,
			 struct mp_err *err)
{
	struct suite su = { .cfg = cfg };
	struct mp_parent *par = calloc(1, sizeof(*par));
	json_t *doc = NULL;

	const char *own;
	int i;

	for (i = 0; i < cfg->nr_stress_args; i++) {
		own = stress_arg_owned(cfg->stress_args[i]);
		if (own) {
			mp_errf(err, MP_EXIT_USAGE, 0,
				"--stress-arg '%s' would override report's own %s%s: give report's option, or leave it to report",
				cfg->stress_args[i],
				own == cfg->stress_args[i] ? "" : "--",
				own == cfg->stress_args[i] ? "options" : own);
			free(par);
			return NULL;
		}
	}
	if (!par) {
		mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "report");
		return NULL;
	}
	catch_signals();
	/* without a memory cgroup the scenarios say so, one by one */
	if (mp_parent_acquire(cfg->parent, "report", par, err)) {
		if (err->status != MP_EXIT_UNAVAILABLE)
			goto out;
	} else {
		su.par = par;
	}
	doc = run_suite(&su);
	if (su.par)
		mp_parent_release(su.par);
	*failed = su.failed;
out:
	free(par);
	return doc;
}

int report_suite_signal(void)
{
	return report_signal;
}
