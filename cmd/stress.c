// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl stress: allocate more than a cgroup's limit with a user-space
 * shrinker freeing chunks on request, and report how it went.
 *
 * The options, and the JSON document built from the result; the run
 * itself is stress_run() (stress/run.h), the text summary is rendered
 * from the document (stress/summary.h).
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd.h"
#include "cotenant.h"
#include "mp_json.h"
#include "mp_output.h"
#include "mp_parse.h"
#include "mp_report.h"
#include "mp_target.h"
#include "run.h"
#include "summary.h"

#define STRESS_SCHEMA "mpctl-stress"
/* 2: parameters.chunk_size_bytes (was chunk_bytes), timeline[].t_ns (t_ms) */
#define STRESS_SCHEMA_VERSION 2

struct stress_opts {
	struct stress_run_cfg cfg;
	bool json;
	bool pretty;
	const char *output;
	bool quiet;	       /* -q: errors only */
	bool verbose;	       /* -v: the run's set-up on stderr */
	bool progress_shown;   /* a progress line to clear on stderr */
	const char *chunk_arg; /* --chunk as given */
	const char *stop_arg;  /* --stop-answering as given */
	const char *input;     /* hidden --input: a saved document's summary */
	struct cmd_metrics metrics; /* --metrics FILE, --metrics-format */
};

enum {
	OPT_CHUNK = 0x100,
	OPT_TARGET,
	OPT_HIGH,
	OPT_EMULATE,
	OPT_NICE,
	OPT_RT,
	OPT_RECLAIM_RT,
	OPT_NO_EARLY_WARNING,
	OPT_NO_THROTTLE,
	OPT_SWAP,
	OPT_OVERCOMMIT,
	OPT_PARENT,
	OPT_UNTIL_FREED,
	OPT_FORCE,
	OPT_STRATEGY,
	OPT_MISS_COST,
	OPT_SEED,
	OPT_FREE,
	OPT_NO_POPULATE,
	OPT_LAZYFREE,
	OPT_INPUT,
	OPT_ANSWER_DELAY,
	OPT_STOP_ANSWERING,
	OPT_COTENANT,
	OPT_METRICS,
	OPT_METRICS_FORMAT,
};

/* clang-format off */
static const struct argp_option options[] = {
	{ "chunk", 'C', "SIZE", 0,
	  "chunk size (default 1M; at least 4K, at most the limit; N% of "
	  "the limit)", 0 },
	{ "threads", 'T', "N", 0, "allocator threads, 1 to 1024 (default 4)",
	  0 },
	{ "duration", 'd', "TIME", 0, "run time, e.g. 20s, 1m30s (default 30s)", 0 },
	{ "until-freed", OPT_UNTIL_FREED, "N", 0,
	  "end the run once N chunks were freed on request (--duration is "
	  "then the longest it runs)", 0 },
	{ "limit", 'L', "SIZE", 0,
	  "memory limit of the run's cgroup, e.g. 1G or 10% of RAM "
	  "(default 256M)", 0 },
	{ "overcommit", OPT_OVERCOMMIT, "X", 0,
	  "footprint the allocators aim at, as a multiple of the limit "
	  "(default 2.0, or 200%)", 0 },
	{ "strategy", OPT_STRATEGY, "NAME", 0,
	  "run the cache workload instead: none, madv-free, psi, kernel, "
	  "kernel-lazyfree or reclaim-agent (see mpctl-stress(1))", 0 },
	{ "miss-cost", OPT_MISS_COST, "TIME", 0,
	  "cache workload: CPU time of a miss besides touching the chunk "
	  "(default 500us)", 0 },
	{ "seed", OPT_SEED, "N", 0,
	  "cache workload: seed of the readers' key generator (default 1)",
	  0 },
	{ "free", OPT_FREE, "MODE", 0,
	  "how chunks are mapped and freed: reuse (one reservation, "
	  "MADV_DONTNEED, ranges reused; the default), munmap (an mmap a "
	  "chunk, munmap to free) or free (malloc and free)", 0 },
	{ "no-populate", OPT_NO_POPULATE, NULL, 0,
	  "fault a chunk in by writing its pages one by one, not with "
	  "MADV_POPULATE_WRITE", 0 },
	{ "lazyfree", OPT_LAZYFREE, NULL, 0,
	  "mark every chunk MADV_FREE once written: reclaim may drop it "
	  "without an answer; count the chunks found dropped", 0 },
	{ "answer-delay", OPT_ANSWER_DELAY, "TIME", 0,
	  "answer every request late: the reclaim thread sleeps TIME after "
	  "reading it, before it frees, at most 10s (default: none)", 0 },
	{ "stop-answering", OPT_STOP_ANSWERING, "AFTER", 0,
	  "stop answering AFTER a time or N% of --duration: the reclaim "
	  "thread reads no more requests, as if the program were stopped, "
	  "and the registration stays (default: never)", 0 },
	{ "cotenant", OPT_COTENANT, "SIZE", OPTION_ARG_OPTIONAL,
	  "run a co-tenant in the program's cgroup: a process of its own "
	  "that maps SIZE (default 64K), writes every page and unmaps it, "
	  "1 ms apart, each operation timed", 0 },
	{ "backend", 'b', "NAME", 0,
	  "mempressure (kernel shrinker), memcg or psi (emulated), or auto",
	  0 },
	{ "emulate", OPT_EMULATE, NULL, 0,
	  "emulate the shrinker even on a patched kernel", 0 },
	/* hidden until completion/mpctl.bash lists them (bats/docs.bats) */
	{ "no-assist", OPT_NO_EARLY_WARNING, NULL, 0,
	  "kernel shrinker alone, without the usage early warning", 0 },
	{ "no-early-warning", 0, NULL, OPTION_ALIAS, NULL, 0 },
	{ "no-throttle", OPT_NO_THROTTLE, NULL, 0,
	  "no memory.high (cgroup2) or soft limit (v1) on the transient cgroup", 0 },
	{ "swap", OPT_SWAP, NULL, 0,
	  "let the transient cgroup swap (default: no swap)", 0 },
	{ "cgroup", 'c', "PATH", 0,
	  "run in this existing cgroup instead of a transient one "
	  "('/' pressures the whole host)", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "let --cgroup run in a cgroup without a memory limit (the root: "
	  "the whole host)", 0 },
	{ "parent", OPT_PARENT, "PATH", 0,
	  "create the transient cgroup under this cgroup (default: the v1 "
	  "memory root, or on cgroup2 the caller's own delegated cgroup)", 0 },
	{ "hog", 'H', "ARGS", 0,
	  "also run 'stress-ng ARGS' in the cgroup, uncooperative", 0 },
	{ "json", 'j', NULL, 0, "print one JSON document instead of the summary",
	  0 },
	{ "pretty", 'p', NULL, 0, "indent the JSON (implies --json)", 0 },
	{ "output", 'o', "FILE", 0,
	  "write the JSON document to FILE instead of stdout (indented "
	  "with --pretty); the summary stays on stdout without --json", 0 },
	{ "quiet", 'q', NULL, 0,
	  "print nothing but errors (no summary, progress or JSON on stdout; "
	  "--output is still written)", 0 },
	{ "metrics", OPT_METRICS, "FILE", 0,
	  "write the run's metrics (requests, chunks asked and freed, OOM "
	  "kills) to FILE as a Prometheus exposition once it ends; '-': on "
	  "stdout instead of the summary", 0 },
	CMD_METRICS_FORMAT_OPTION(OPT_METRICS_FORMAT),
	{ "verbose", 'v', NULL, 0,
	  "say on stderr how the run was set up (backend, shrinker, cgroup) "
	  "and why it ended", 0 },
	/* for tests: the text summary of a document -o wrote, no run */
	{ "input", OPT_INPUT, "FILE", OPTION_HIDDEN,
	  "print the summary of a saved document instead of running", 0 },
	{ "target", OPT_TARGET, "FRAC", 0,
	  "emulation: bring usage back under FRAC of the limit (0.85)", 0 },
	{ "high", OPT_HIGH, "FRAC", 0,
	  "emulation: first usage threshold, FRAC of the limit or "
	  "'off' (0.90)", 0 },
	{ "emulator-rt", OPT_RT, "PRIO", 0,
	  "emulation: SCHED_FIFO priority of the emulator thread, 0 for none "
	  "(default 1)", 0 },
	{ "reclaim-rt", OPT_RECLAIM_RT, "PRIO", 0,
	  "SCHED_FIFO priority of the engine's reclaim thread, 0 for none "
	  "(default 1; --reclaim-nice applies without it)", 0 },
	{ "reclaim-nice", OPT_NICE, "N", 0,
	  "nice value of the engine's reclaim thread (default -10)", 0 },
	{ 0 }
};
/* clang-format on */

/* settings that an exclusion names (given()) */
enum setting {
	SET_CGROUP,
	SET_PARENT,
	SET_LAZYFREE,
	SET_FREE_HEAP,
	SET_EMULATE,
	SET_BACKEND_MEMPRESSURE,
};

static bool given(const struct stress_run_cfg *o, enum setting s)
{
	switch (s) {
	case SET_CGROUP:
		return o->cgroup;
	case SET_PARENT:
		return o->parent;
	case SET_LAZYFREE:
		return o->lazyfree;
	case SET_FREE_HEAP:
		return o->free_mode == STRESS_FREE_HEAP;
	case SET_EMULATE:
		return o->emulate;
	case SET_BACKEND_MEMPRESSURE:
		return o->backend == MP_BACKEND_MEMPRESSURE;
	}
	return false;
}

/*
 * Options that exclude each other, as util-linux's ul_excl_t (a side may
 * be one value of an option): walked once, when every option is read; the
 * first pair given is the usage error. A workload's exclusions are its
 * row's (stress/workload.h).
 */
static const struct {
	enum setting a, b;
	const char *msg;
} exclusions[] = {
	{ SET_CGROUP, SET_PARENT, "--cgroup and --parent exclude each other" },
	{ SET_LAZYFREE, SET_FREE_HEAP,
	  "--lazyfree and --free free exclude each other: glibc reuses what "
	  "is freed, and MADV_FREE takes whole pages" },
	{ SET_EMULATE, SET_BACKEND_MEMPRESSURE,
	  "--emulate and --backend mempressure contradict each other" },
};

static void check_exclusions(struct argp_state *state,
			     const struct stress_run_cfg *o)
{
	size_t i;

	for (i = 0; i < sizeof(exclusions) / sizeof(exclusions[0]); i++)
		if (given(o, exclusions[i].a) && given(o, exclusions[i].b))
			cmd_argerr(state, "%s", exclusions[i].msg);
}

/* --chunk N%: of --limit, rounded down to a page */
static void chunk_of_limit(struct argp_state *state, struct stress_opts *so)
{
	struct stress_run_cfg *o = &so->cfg;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (o->cgroup && !o->limit_set)
		cmd_argerr(state,
			   "invalid --chunk '%s': a percentage of --limit, which --cgroup then needs",
			   so->chunk_arg);
	o->chunk = cmd_arg_size(state, 'C', so->chunk_arg, page, o->limit);
	o->chunk -= o->chunk % page;
	if (o->chunk < STRESS_MIN_CHUNK)
		cmd_argerr(state, "invalid --chunk '%s': below 4K",
			   so->chunk_arg);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct stress_opts *so = state->input;
	struct stress_run_cfg *o = &so->cfg;
	long page = sysconf(_SC_PAGESIZE);

	switch (key) {
	case 'C':
		/* N% of the limit: known once every option is read */
		so->chunk_arg = arg;
		if (!strchr(arg, '%'))
			o->chunk = cmd_arg_size(state, key, arg,
						STRESS_MIN_CHUNK, 0);
		if (!strchr(arg, '%') && o->chunk % page)
			cmd_argerr(state,
				   "invalid --chunk '%s': not a multiple of the page size (%ld)",
				   arg, page);
		break;
	case 'T':
		o->threads = (int)cmd_arg_long(state, key, arg, 1,
					       STRESS_MAX_THREADS);
		break;
	case 'd':
		o->duration_ns = cmd_arg_duration(state, key, arg, 0);
		break;
	case OPT_UNTIL_FREED:
		o->until_freed = cmd_arg_long(state, key, arg, 1, LLONG_MAX);
		break;
	case 'L':
		o->limit = cmd_arg_size(state, key, arg, STRESS_MIN_LIMIT,
					cmd_host_ram());
		o->limit_set = true;
		break;
	case OPT_OVERCOMMIT:
		o->overcommit = cmd_arg_frac(state, key, arg, 0, 64,
					     CMD_FRAC_ABOVE);
		break;
	case 'b':
		if (mp_backend_parse(arg, &o->backend))
			cmd_argerr(state, "unknown backend '%s'", arg);
		break;
	case OPT_EMULATE:
		o->emulate = true;
		break;
	case OPT_STRATEGY:
		o->workload = stress_workload_strategy(arg);
		if (!o->workload)
			cmd_argerr(state, "unknown strategy '%s'", arg);
		break;
	case OPT_FREE:
		if (stress_free_parse(arg, &o->free_mode))
			cmd_argerr(state,
				   "unknown free mode '%s': reuse, munmap or free",
				   arg);
		break;
	case OPT_NO_POPULATE:
		o->no_populate = true;
		break;
	case OPT_LAZYFREE:
		o->lazyfree = true;
		break;
	case OPT_MISS_COST:
		o->miss_cost_ns = cmd_arg_duration(state, key, arg, 0);
		break;
	case OPT_ANSWER_DELAY:
		o->answer_delay_ns = cmd_arg_duration(state, key, arg, 0);
		/* a run's end waits for the answer being delayed */
		if (o->answer_delay_ns > STRESS_MAX_ANSWER_DELAY_NS)
			cmd_argerr(state,
				   "invalid --answer-delay '%s': at most 10s",
				   arg);
		break;
	case OPT_STOP_ANSWERING:
		/* N%: of --duration, known once every option is read */
		so->stop_arg = arg;
		if (!strchr(arg, '%'))
			o->stop_answering_ns = cmd_arg_duration(state, key, arg,
								0);
		break;
	case OPT_COTENANT:
		o->cotenant_bytes = arg ? cmd_arg_size(state, key, arg, page,
						       0) :
					  STRESS_COTENANT_DEFAULT_BYTES;
		if (o->cotenant_bytes > STRESS_COTENANT_MAX_BYTES)
			cmd_argerr(state,
				   "invalid --cotenant '%s': at most 64M", arg);
		o->cotenant_bytes -= o->cotenant_bytes % (uint64_t)page;
		break;
	case OPT_SEED:
		o->seed = cmd_arg_long(state, key, arg, 0, LLONG_MAX);
		break;
	case OPT_NO_EARLY_WARNING:
		o->no_early_warning = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_NO_THROTTLE:
		o->no_throttle = true;
		break;
	case OPT_PARENT:
		o->parent = arg;
		break;
	case OPT_SWAP:
		o->swap = true;
		break;
	case 'c':
		o->cgroup = cmd_arg_str(state, key, arg);
		break;
	case 'H':
		o->hog = cmd_arg_str(state, key, arg);
		break;
	case 'p':
		so->pretty = true;
		/* fall through */
	case 'j':
		so->json = true;
		break;
	case 'o':
		so->output = cmd_arg_str(state, key, arg);
		break;
	case 'q':
		so->quiet = true;
		break;
	case 'v':
		so->verbose = true;
		break;
	case OPT_INPUT:
		so->input = cmd_arg_str(state, key, arg);
		break;
	case OPT_METRICS:
	case OPT_METRICS_FORMAT:
		cmd_arg_metrics(state, key, arg, key == OPT_METRICS_FORMAT,
				&so->metrics);
		break;
	case OPT_TARGET:
		o->target = cmd_arg_frac(state, key, arg, 0, 0.99,
					 CMD_FRAC_ABOVE);
		break;
	case OPT_HIGH:
		if (!strcmp(arg, "off"))
			o->high = -1;
		else
			o->high = cmd_arg_frac(state, key, arg, 0, 1,
					       CMD_FRAC_ABOVE);
		break;
	case OPT_RT:
		o->rt_priority = (int)cmd_arg_long(state, key, arg, 0, 99);
		break;
	case OPT_RECLAIM_RT:
		o->reclaim_rt = (int)cmd_arg_long(state, key, arg, 0, 99);
		break;
	case OPT_NICE:
		o->reclaim_nice = (int)cmd_arg_long(state, key, arg, -20, 19);
		break;
	case ARGP_KEY_ARG:
		cmd_argerr(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		cmd_metrics_check(state, &so->metrics);
		check_exclusions(state, o);
		if (so->chunk_arg && strchr(so->chunk_arg, '%'))
			chunk_of_limit(state, so);
		if (so->stop_arg && strchr(so->stop_arg, '%'))
			o->stop_answering_ns =
				(uint64_t)(cmd_arg_frac(state,
							OPT_STOP_ANSWERING,
							so->stop_arg, 0, 1,
							CMD_FRAC_ABOVE |
								CMD_FRAC_BELOW) *
					   (double)o->duration_ns);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp stress_argp = {
	options,
	parse_opt,
	NULL,
	"Allocate more than a cgroup's memory limit while a user-space "
	"shrinker frees chunks on request; print a summary or JSON.\v"
	"By default the run gets its own transient cgroup with --limit, "
	"removed afterwards. Ctrl-C ends the run early and still reports. "
	"Exit status: 0 the run completed; 1 runtime failure (e.g. the "
	"engine was OOM-killed); 64 usage error; 65 a saved document to "
	"summarize is not an mpctl-stress one; 66 it is missing; 69 no "
	"memory cgroup or "
	"pressure interface; 77 permission denied. See mpctl-stress(1).",
	NULL,
	NULL,
	NULL
};

/* ---- rendering ---- */

static json_t *hist_json(const struct mp_hist *h)
{
	/* clang-format off */
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "count", (json_int_t)h->count,
			 "p50_ns", (json_int_t)mp_hist_quantile(h, 0.50),
			 "p99_ns", (json_int_t)mp_hist_quantile(h, 0.99),
			 "max_ns", (json_int_t)h->max,
			 "mean_ns", (json_int_t)(h->count ? h->sum / h->count :
						 0));
	/* clang-format on */
}

/* the allocations' latency, and how many took 500 ms or more */
static json_t *alloc_latency_json(const struct stress_shared *s)
{
	json_t *h = hist_json(&s->alloc_latency);

	if (h &&
	    json_object_set_new(h, "over_500ms",
				json_integer((json_int_t)s->allocs_slow))) {
		json_decref(h);
		return NULL;
	}
	return h;
}

/*
 * Whether chunks were faulted in with MADV_POPULATE_WRITE: the cache's
 * reuse mode writes its pages, as it always did
 */
static bool populates(const struct stress_run_cfg *o)
{
	return !o->no_populate && !(o->workload->kind == STRESS_WL_CACHE &&
				    o->free_mode == STRESS_FREE_REUSE);
}

static double seconds(const struct stress_result *r)
{
	return (double)(r->end_ns - r->start_ns) / 1e9;
}

/*
 * The co-tenant's operations (cotenant.h): the histogram's quantiles, its
 * count as "ops"; null without --cotenant
 */
static json_t *cotenant_json(const struct stress_run_cfg *o,
			     const struct stress_result *r)
{
	const struct mp_hist *h = &r->engine.cotenant_latency;
	double secs = seconds(r);
	json_t *j;

	if (!o->cotenant_bytes)
		return json_null();
	j = hist_json(h);
	/* clang-format off */
	if (j && (json_object_del(j, "count") ||
		  json_object_set_new(j, "ops", json_integer((json_int_t)h->count)) ||
		  json_object_set_new(j, "ops_per_sec", json_real(
			  secs > 0 ? (double)h->count / secs : 0.0)) ||
		  json_object_set_new(j, "size_bytes",
				      json_integer((json_int_t)o->cotenant_bytes)) ||
		  json_object_set_new(j, "killed",
				      json_boolean(r->cotenant_killed)))) {
		json_decref(j);
		return NULL;
	}
	/* clang-format on */
	return j;
}

/* An argv as an array of strings; null when there is none (not run). */
static json_t *argv_json(char *const *argv)
{
	json_t *a;

	if (!argv)
		return json_null();
	a = json_array();
	for (; a && *argv; argv++)
		if (json_array_append_new(a, mp_json_str(*argv))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* the cache workload's numbers, null without --strategy */
static json_t *cache_json(const struct stress_run_cfg *o,
			  const struct stress_result *r)
{
	const struct stress_shared *s = &r->engine;
	double secs = seconds(r), held = 0;
	size_t i;

	if (o->workload->kind != STRESS_WL_CACHE)
		return json_null();
	for (i = 0; i < r->ntl; i++)
		held += (double)r->tl[i].held;
	/* clang-format off */
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:I}",
			 "slots", (json_int_t)s->cache_slots,
			 "reads", (json_int_t)s->cache_reads,
			 "hits", (json_int_t)s->cache_hits,
			 "misses", (json_int_t)s->cache_misses,
			 "lost", (json_int_t)s->cache_lost,
			 "hit_ratio", s->cache_reads ?
			 (double)s->cache_hits / (double)s->cache_reads : 0.0,
			 "reads_per_s", secs > 0 ?
			 (double)s->cache_reads / secs : 0.0,
			 "bytes_held_avg", (json_int_t)(r->ntl ?
				held / (double)r->ntl * (double)o->chunk : 0),
			 "miss_cost_ns", (json_int_t)o->miss_cost_ns,
			 "seed", (json_int_t)o->seed,
			 "memory_reclaim_writes", (json_int_t)r->agent_writes,
			 "memory_reclaim_bytes", (json_int_t)r->agent_bytes);
	/* clang-format on */
}

/* the counters found, as {"key": growth, ...} (empty when none was read) */
static json_t *counters_json(const struct mp_counters *c,
			     const char *const *keys)
{
	json_t *obj = json_object();
	size_t i;

	for (i = 0; keys[i]; i++)
		if (c->have & (1U << i))
			json_object_set_new(obj, keys[i],
					    json_integer((json_int_t)c->v[i]));
	return obj;
}

/* the run's settings, the document's "parameters" */
static json_t *params_json(const struct stress_run_cfg *o)
{
	/* clang-format off */
	return json_pack("{s:I, s:I, s:I, s:o, s:I, s:f, s:s, s:b, s:b, s:b, s:o, s:o, s:s, s:b, s:b, s:I, s:o, s:o}",
			 "chunk_size_bytes", (json_int_t)o->chunk,
			 "threads", (json_int_t)o->threads,
			 "duration_ns", (json_int_t)o->duration_ns,
			 "until_freed", o->until_freed ?
			 json_integer((json_int_t)o->until_freed) :
			 json_null(),
			 "limit_bytes", (json_int_t)o->limit,
			 "overcommit", o->overcommit,
			 "backend", o->backend == MP_BACKEND_AUTO ? "auto" :
			 mp_backend_name(o->backend),
			 "emulate", o->emulate,
			 /* the public name of the early warning */
			 "assist", !o->no_early_warning,
			 "swap", o->swap,
			 "cgroup", o->cgroup ? mp_json_str(o->cgroup) :
			 json_null(),
			 "hog", o->hog ? mp_json_str(o->hog) : json_null(),
			 "free", stress_free_name(o->free_mode),
			 "populate", populates(o),
			 "lazyfree", o->lazyfree,
			 "answer_delay_ns", (json_int_t)o->answer_delay_ns,
			 "stop_answering_ns", o->stop_answering_ns ?
			 json_integer((json_int_t)o->stop_answering_ns) :
			 json_null(),
			 "cotenant_bytes", o->cotenant_bytes ?
			 json_integer((json_int_t)o->cotenant_bytes) :
			 json_null());
	/* clang-format on */
}

/* the emulation policy in force, null without one */
static json_t *policy_json(const struct stress_run_cfg *o, bool policy_on)
{
	struct mp_emul_policy p = { .target = o->target, .high = o->high };

	if (!policy_on)
		return json_null();
	mp_emul_policy_defaults(&p);
	/* clang-format off */
	return json_pack("{s:f, s:o, s:f, s:f, s:f, s:I, s:I}",
			 "target", p.target,
			 "high", p.high > 0 ? json_real(p.high) : json_null(),
			 "min_frac_low", p.min_frac[MP_LEVEL_LOW],
			 "min_frac_medium", p.min_frac[MP_LEVEL_MEDIUM],
			 "min_frac_critical", p.min_frac[MP_LEVEL_CRITICAL],
			 "interval_ns", (json_int_t)p.interval_ns,
			 "linger_ns", (json_int_t)p.linger_ns);
	/* clang-format on */
}

/*
 * The document in the sections of the summary (stress/summary.c), which
 * reads each back: a section adds its keys in the document's order, and
 * a number the summary shows is a key of its section first. Each returns
 * non-zero when a key could not be set (a NULL from json_pack() would
 * drop it).
 */

/* the first lines: how the run was set up, how long, why it ended */
static int head_json(json_t *doc, const struct stress_run_cfg *o,
		     const struct stress_result *r)
{
	const struct mp_shrinker_stats *ss = &r->ss;
	bool policy_on = r->emulated || ss->limit_bytes;
	struct utsname un;
	int bad = 0;

	uname(&un);
	/* clang-format off */
	bad |= json_object_set_new(doc, "parameters", params_json(o));
	bad |= json_object_set_new(doc, "backend", json_string(
		mp_backend_name(r->backend)));
	bad |= json_object_set_new(doc, "shrinker", json_string(
		r->mode ? mp_shrinker_mode_name(r->mode) : "none"));
	bad |= json_object_set_new(doc, "emulation_policy",
				   policy_json(o, policy_on));
	bad |= json_object_set_new(doc, "early_warning", json_boolean(
		!r->emulated && policy_on));
	bad |= json_object_set_new(doc, "emulator", policy_on ?
		json_pack("{s:I, s:I, s:I, s:I, s:I}",
			  "requests", (json_int_t)ss->requests,
			  "chunks_requested", (json_int_t)ss->chunks_requested,
			  "counter_end", (json_int_t)ss->counter,
			  "added", (json_int_t)ss->added,
			  "removed", (json_int_t)ss->removed) : json_null());
	bad |= json_object_set_new(doc, "kernel_release", json_string(un.release));
	bad |= json_object_set_new(doc, "cgroup", mp_json_str(r->cgroup));
	bad |= json_object_set_new(doc, "transient_cgroup", json_boolean(r->transient));
	bad |= json_object_set_new(doc, "memory_high_bytes",
			    r->transient && !o->no_throttle ?
			    json_integer((json_int_t)r->high_bytes) :
			    json_null());
	bad |= json_object_set_new(doc, "duration_ns",
			    json_integer((json_int_t)(r->end_ns - r->start_ns)));
	bad |= json_object_set_new(doc, "exit_reason", json_string(stress_end_name(r->reason)));
	/* clang-format on */
	return bad;
}

/* the chunks allocated, freed on request, lost */
static int chunks_json(json_t *doc, const struct stress_run_cfg *o,
		       const struct stress_result *r)
{
	const struct stress_shared *s = &r->engine;
	int bad = 0;

	/* clang-format off */
	bad |= json_object_set_new(doc, "chunks_allocated",
			    json_integer((json_int_t)s->chunks.allocated));
	bad |= json_object_set_new(doc, "bytes_allocated",
			    json_integer((json_int_t)(s->chunks.allocated *
						      o->chunk)));
	bad |= json_object_set_new(doc, "chunks_freed",
			    json_integer((json_int_t)s->chunks.freed));
	bad |= json_object_set_new(doc, "bytes_freed",
			    json_integer((json_int_t)(s->chunks.freed *
						      o->chunk)));
	bad |= json_object_set_new(doc, "reclaim_requests",
			    json_integer((json_int_t)s->requests));
	bad |= json_object_set_new(doc, "chunks_requested",
			    json_integer((json_int_t)s->chunks_requested));
	bad |= json_object_set_new(doc, "chunks_readded",
			    json_integer((json_int_t)s->chunks_readded));
	bad |= json_object_set_new(doc, "chunks_short",
			    json_integer((json_int_t)s->chunks_short));
	bad |= json_object_set_new(doc, "chunks_lost",
			    json_integer((json_int_t)s->chunks.lost));
	/* clang-format on */
	return bad;
}

/* how long the answers and the allocations took */
static int latency_json(json_t *doc, const struct stress_run_cfg *o,
			const struct stress_result *r)
{
	const struct stress_shared *s = &r->engine;
	int bad = 0;

	(void)o;
	bad |= json_object_set_new(doc, "reclaim_latency",
				   hist_json(&s->latency));
	bad |= json_object_set_new(doc, "reclaim_latency_per_chunk",
				   hist_json(&s->latency_chunk));
	bad |= json_object_set_new(doc, "alloc_latency", alloc_latency_json(s));
	return bad;
}

/*
 * The events, the memory and what reclaim did; the allocators' rates
 * stand among them in the document's order
 */
static int memory_json(json_t *doc, const struct stress_run_cfg *o,
		       const struct stress_result *r)
{
	const struct stress_shared *s = &r->engine;
	const struct mp_shrinker_stats *ss = &r->ss;
	double secs = seconds(r);
	int bad = 0;

	/* clang-format off */
	bad |= json_object_set_new(doc, "events", json_pack(
		"{s:I, s:I, s:I, s:I, s:I}",
		"low", (json_int_t)r->events[MP_LEVEL_LOW],
		"medium", (json_int_t)r->events[MP_LEVEL_MEDIUM],
		"critical", (json_int_t)r->events[MP_LEVEL_CRITICAL],
		"thresholds", (json_int_t)ss->thresholds,
		"samples", (json_int_t)ss->samples));
	bad |= json_object_set_new(doc, "alloc_throughput_bytes_per_s", json_integer(
		(json_int_t)(secs > 0 ? (double)s->chunks.allocated *
			     (double)o->chunk / secs : 0)));
	bad |= json_object_set_new(doc, "allocator_throttle_ns",
				   json_integer((json_int_t)s->throttle_ns));
	bad |= json_object_set_new(doc, "alloc_busy_throughput_bytes_per_s",
		json_integer((json_int_t)(s->chunks.alloc_ns ?
			(double)s->chunks.allocated * (double)o->chunk * 1e9 /
			(double)s->chunks.alloc_ns * (double)o->threads : 0)));
	bad |= json_object_set_new(doc, "peak_usage_bytes",
			    json_integer((json_int_t)r->peak));
	bad |= json_object_set_new(doc, "limit_bytes",
			    json_integer((json_int_t)r->limit));
	bad |= json_object_set_new(doc, "swap_total_bytes",
			    json_integer((json_int_t)r->swap_total));
	bad |= json_object_set_new(doc, "swap_used_bytes",
			    json_integer((json_int_t)r->swap_end));
	bad |= json_object_set_new(doc, "swap_peak_bytes",
			    json_integer((json_int_t)r->swap_peak));
	bad |= json_object_set_new(doc, "swap_growth_bytes", json_integer(
		(json_int_t)(r->swap_peak - r->swap_start)));
	bad |= json_object_set_new(doc, "oom_kills",
			    json_integer((json_int_t)r->oom_kills));
	bad |= json_object_set_new(doc, "teardown_oom_kills",
			    json_integer((json_int_t)r->teardown_oom_kills));
	bad |= json_object_set_new(doc, "vmstat",
			    counters_json(&r->vmstat, mp_vmstat_keys));
	bad |= json_object_set_new(doc, "cgroup_counters", json_pack(
		"{s:o, s:o}",
		"memory_stat", counters_json(&r->cg_stat, mp_cg_stat_keys),
		"memory_events", counters_json(&r->cg_events,
					       mp_cg_event_keys)));
	/* clang-format on */
	return bad;
}

/* the timeline of the samples */
static json_t *timeline_json(const struct stress_result *r)
{
	json_t *tl = json_array();
	size_t i;

	/* clang-format off */
	for (i = 0; tl && i < r->ntl; i++)
		if (json_array_append_new(tl, json_pack(
			"{s:I, s:I, s:I, s:I, s:I}",
			"t_ns", (json_int_t)r->tl[i].t_ns,
			"usage_bytes", (json_int_t)r->tl[i].usage,
			"chunks_held", (json_int_t)r->tl[i].held,
			"events", (json_int_t)r->tl[i].events,
			"requests", (json_int_t)r->tl[i].requests))) {
			json_decref(tl);
			return NULL;
		}
	/* clang-format on */
	return tl;
}

/*
 * The hog, the timeline, the cache, the co-tenant, the stop of the
 * answers, the usage and pressure over the run, the engine's error
 */
static int extras_json(json_t *doc, const struct stress_run_cfg *o,
		       const struct stress_result *r)
{
	const struct stress_shared *s = &r->engine;
	int bad = 0;

	/* clang-format off */
	if (o->hog)
		bad |= json_object_set_new(doc, "hog", json_pack(
			"{s:o, s:o, s:o, s:I, s:o, s:b}",
			"args", mp_json_str(o->hog),
			"argv", argv_json(r->hog_argv),
			"bogo_ops", r->hog_have_ops ?
			json_integer((json_int_t)r->hog_bogo_ops) :
			json_null(),
			"oom_kills", (json_int_t)r->hog_oom_kills,
			"exit_status", r->hog_exited &&
			WIFEXITED(r->hog_status) ?
			json_integer(WEXITSTATUS(r->hog_status)) :
			json_null(), "failed", r->hog_failed));
	else
		bad |= json_object_set_new(doc, "hog", json_null());
	bad |= json_object_set_new(doc, "timeline", timeline_json(r));
	bad |= json_object_set_new(doc, "strategy",
		o->workload->kind == STRESS_WL_CACHE ?
		json_string(o->workload->name) : json_null());
	bad |= json_object_set_new(doc, "cache", cache_json(o, r));
	bad |= json_object_set_new(doc, "cotenant", cotenant_json(o, r));
	bad |= json_object_set_new(doc, "stopped_answering_ns",
		s->stopped_answering_ns ?
		json_integer((json_int_t)s->stopped_answering_ns) :
		json_null());
	bad |= json_object_set_new(doc, "usage_avg_bytes", json_integer(
		(json_int_t)(r->ntl ? r->usage_sum / r->ntl : 0)));
	bad |= json_object_set_new(doc, "memory_pressure",
		r->pressure_source ? json_pack("{s:s, s:I, s:I}",
			"source", r->pressure_source,
			"some_us", (json_int_t)r->pressure_some_us,
			"full_us", (json_int_t)r->pressure_full_us) :
		json_null());
	/* clang-format on */
	if (s->error[0])
		bad |= json_object_set_new(doc, "error", json_string(s->error));
	return bad;
}

static int (*const sections[])(json_t *doc, const struct stress_run_cfg *o,
			       const struct stress_result *r) = {
	head_json, chunks_json, latency_json, memory_json, extras_json,
};

static json_t *result_json(const struct stress_run_cfg *o,
			   const struct stress_result *r)
{
	json_t *doc = mp_json_doc(STRESS_SCHEMA, STRESS_SCHEMA_VERSION);
	int bad = !doc;
	size_t i;

	for (i = 0; doc && i < sizeof(sections) / sizeof(sections[0]); i++)
		bad |= sections[i](doc, o, r);
	/* a NULL from json_pack() would drop a key: no partial document */
	if (bad) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	return doc;
}

/* progress goes to stderr: stdout may be a document (docker -t) */
static void progress(const struct stress_sample *s, uint64_t freed,
		     const uint64_t events[MP_LEVEL_NR], uint64_t limit,
		     void *arg)
{
	struct stress_opts *so = arg;
	char held[32], usage[32], lim[32], line[256];
	struct winsize ws;
	size_t cols = 80;

	so->progress_shown = true;
	stress_fmt_mib(s->held * so->cfg.chunk, held, sizeof(held));
	stress_fmt_mib(s->usage, usage, sizeof(usage));
	stress_fmt_mib(limit, lim, sizeof(lim));
	snprintf(line, sizeof(line),
		 "%5.1fs held %s freed %" PRIu64 " requests %" PRIu64
		 " events l/m/c %" PRIu64 "/%" PRIu64 "/%" PRIu64
		 " usage %s/%s",
		 (double)s->t_ns / 1e9, held, freed, s->requests,
		 events[MP_LEVEL_LOW], events[MP_LEVEL_MEDIUM],
		 events[MP_LEVEL_CRITICAL], usage, lim);
	/* shorter than the terminal: a full line would wrap, and "\r" then
	 * rewrites only its last row */
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col)
		cols = ws.ws_col;
	if (cols - 1 < sizeof(line))
		line[cols - 1] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
}

/* a terminal that can take "\r\033[K" (not TERM=dumb, as util-linux) */
static bool progress_wanted(void)
{
	const char *term = getenv("TERM");

	return isatty(STDERR_FILENO) && term && *term && strcmp(term, "dumb");
}

/*
 * The document to --output (indented with --pretty), or else to stdout
 * (--json, not --quiet), as report does. -2: already told; -1: stdout
 * failed (errno).
 */
static int write_output(const struct stress_opts *so, struct mp_output *out,
			bool *have_out, json_t *doc)
{
	struct mp_err err;
	FILE *f;

	if (!*have_out)
		return so->json && !so->quiet &&
				       mp_json_emit(stdout, doc, so->pretty) ?
			       -1 :
			       0;
	*have_out = false;
	f = mp_output_stream(out, &err);
	if (!f)
		goto err_abort;
	if (mp_json_emit(f, doc, so->pretty)) {
		mp_errf(&err, MP_EXIT_FAILURE, errno ? errno : EIO,
			"cannot write '%s'", so->output);
		goto err_abort;
	}
	if (mp_output_commit(out, &err))
		goto err;
	return 0;
err_abort:
	mp_output_abort(out);
err:
	cmd_fail(&err);
	return -2;
}

static int usage_or_fail(const struct mp_err *err)
{
	return err->status == MP_EXIT_USAGE ? cmd_usage_error("%s", err->msg) :
					      cmd_fail(err);
}

/*
 * The hog ended before the run with a failure (stress-ng refused its
 * arguments, or was killed): the run was not beside a hog, as asked.
 * Said, true; the document keeps its exit status.
 */
static bool hog_failed(const struct stress_opts *so,
		       const struct stress_result *r)
{
	int st = r->hog_status;

	if (!so->cfg.hog || !r->hog_failed)
		return false;
	if (WIFEXITED(st))
		cmd_error("the hog 'stress-ng %s' failed: exited with status %d%s%s",
			  so->cfg.hog, WEXITSTATUS(st),
			  *r->hog_said ? ": " : "", r->hog_said);
	else
		cmd_error("the hog 'stress-ng %s' failed: killed by signal %d%s%s",
			  so->cfg.hog, WTERMSIG(st), *r->hog_said ? ": " : "",
			  r->hog_said);
	return true;
}

static int stress_metrics(FILE *f, enum mp_metrics_format fmt, const void *doc)
{
	return mp_metrics_write_stress(f, fmt, doc);
}

/* a run's result and its output file: on the heap, 33 KB together */
struct stress_frame {
	struct stress_result res;
	struct mp_output out;
};

static int stress(struct stress_opts *so)
{
	struct stress_run_cfg *o = &so->cfg;
	const struct stress_shared *s;
	struct stress_frame *f;
	bool have_out = false;
	struct mp_err err;
	int ret, w, others;
	json_t *doc;

	if (stress_check(o, &err))
		return usage_or_fail(&err);
	if (cmd_metrics_stdout(&so->metrics) && so->json && !so->output) {
		cmd_error("--metrics - and --json both write to stdout: give "
			  "one of them a file");
		return MP_EXIT_USAGE;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "stress");
		return cmd_fail(&err);
	}
	/* an output that cannot be written fails before the run, not after */
	if (so->output) {
		if (mp_output_open(&f->out, so->output, &err)) {
			free(f);
			return cmd_fail(&err);
		}
		have_out = true;
	}
	ret = cmd_metrics_open(&so->metrics) ? MP_EXIT_FAILURE : 0;
	if (ret)
		goto out;
	if (!so->quiet && progress_wanted()) {
		o->progress = progress;
		o->progress_arg = so;
	}
	ret = stress_run(o, &f->res, &err);
	if (so->progress_shown)
		fprintf(stderr, "\r\033[K");
	if (ret) {
		ret = usage_or_fail(&err);
		goto out;
	}
	/* said once the run took place, before its results */
	others = f->res.cgroup_others;
	if (others && !so->quiet)
		cmd_error("warning: cgroup '%s' has %d other process%s: %s the "
			  "limit, and %s memory counts in the results",
			  f->res.cgroup, others, others == 1 ? "" : "es",
			  others == 1 ? "it shares" : "they share",
			  others == 1 ? "its" : "their");
	s = &f->res.engine;
	doc = result_json(o, &f->res);
	if (so->verbose)
		cmd_error("backend %s, shrinker %s, cgroup '%s', ended by %s",
			  f->res.mode ? mp_backend_name(f->res.backend) : "-",
			  f->res.mode ? mp_shrinker_mode_name(f->res.mode) :
					"none",
			  f->res.cgroup, stress_end_name(f->res.reason));
	if (!doc)
		cmd_error("cannot build the JSON document: %s",
			  strerror(errno));
	else if (!so->json && !so->quiet && !cmd_metrics_stdout(&so->metrics))
		stress_summary_write(stdout, doc);
	w = doc ? write_output(so, &f->out, &have_out, doc) : -2;
	if (w == 0 && cmd_metrics_write(&so->metrics, stress_metrics, doc))
		w = -2;
	json_decref(doc);
	if (w == -2) {
		ret = MP_EXIT_FAILURE;
	} else if (w < 0) {
		cmd_write_error(errno);
		ret = MP_EXIT_FAILURE;
	} else if (f->res.reason == STRESS_END_ENGINE_UNRESPONSIVE) {
		cmd_error("the engine did not stop within %llu s of the "
			  "run's end and was killed: the run failed",
			  (unsigned long long)(STRESS_ENGINE_GRACE_NS /
					       1000000000ULL));
		ret = MP_EXIT_FAILURE;
	} else if (hog_failed(so, &f->res)) {
		ret = MP_EXIT_FAILURE;
	} else if (s->error[0] || f->res.reason == STRESS_END_ENGINE_KILLED ||
		   f->res.reason == STRESS_END_ENGINE_FAILED ||
		   f->res.reason == STRESS_END_FAILED) {
		cmd_error("the engine %s%s%s",
			  f->res.reason == STRESS_END_ENGINE_KILLED ?
				  "was killed" :
				  "failed",
			  s->error[0] ? ": " : "", s->error);
		ret = MP_EXIT_FAILURE;
	} else {
		ret = MP_EXIT_OK;
	}
out:
	stress_result_free(&f->res);
	/* the run never got to write it: an existing file stays as it was */
	if (have_out)
		mp_output_abort(&f->out);
	cmd_metrics_abort(&so->metrics);
	free(f);
	return ret;
}

/* --input: the summary of a saved document, rendered as a run's is */
static int summarize_input(const char *path)
{
	struct mp_err err;
	json_t *doc;

	doc = mp_json_load_file(path, &err);
	if (!doc)
		return cmd_fail(&err);
	if (mp_json_check_schema(doc, STRESS_SCHEMA, STRESS_SCHEMA_VERSION)) {
		json_decref(doc);
		cmd_error("'%s' is not an %s document of version %d", path,
			  STRESS_SCHEMA, STRESS_SCHEMA_VERSION);
		return MP_EXIT_DATAERR;
	}
	stress_summary_write(stdout, doc);
	json_decref(doc);
	return MP_EXIT_OK;
}

int cmd_stress(int argc, char **argv)
{
	struct stress_opts o = { .cfg = {
					 .chunk = 1ULL << 20,
					 .threads = 4,
					 .duration_ns = 30ULL * 1000000000ULL,
					 .limit = 256ULL << 20,
					 .overcommit = 2.0,
					 .backend = MP_BACKEND_AUTO,
					 .reclaim_nice = -10,
					 .rt_priority = 1,
					 .reclaim_rt = 1,
					 .miss_cost_ns = 500000,
					 .seed = 1,
				 } };

	o.cfg.workload = stress_workload_default();

	cmd_argp_parse(&stress_argp, argc, argv, &o);
	return o.input ? summarize_input(o.input) : stress(&o);
}
