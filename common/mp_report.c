// SPDX-License-Identifier: GPL-2.0
/*
 * Report metrics, summaries and comparison; see mp_report.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mp_json.h"
#include "mp_rank.h"
#include "mp_report.h"

/*
 * The metric table: documented in mpctl-report(1), keep the two in step.
 * Paths are tried in order in each run document.
 */
/* clang-format off */
const struct mp_metric mp_metrics[] = {
	{ "oom_kills", { "oom_kills" }, MP_BETTER_LOWER, 0, 0, 1, "count",
	  "processes the OOM killer killed in the run's cgroup",
	  .headline = true },
	/* listen: wake-up to line read */
	{ "latency_p50_ns", { "latency.p50_ns" },
	  MP_BETTER_LOWER, 5, 100, 20000, "ns",
	  "median latency: wake-up to line read (listen)", .headline = true },
	{ "latency_p99_ns", { "latency.p99_ns" },
	  MP_BETTER_LOWER, 10, 200, 100000, "ns",
	  "99th percentile latency (listen)" },
	{ "latency_max_ns", { "latency.max_ns" },
	  MP_BETTER_LOWER, 25, 400, 1000000, "ns", "worst latency (listen)" },
	/*
	 * stress: request read to chunks freed. A request half as big takes
	 * half as long and is no improvement: shown, not judged; what is
	 * judged is chunks_freed, chunks_per_request and the throughput
	 */
	{ "request_latency_p50_ns", { "reclaim_latency.p50_ns" },
	  MP_BETTER_LOWER, 5, 100, 20000, "ns",
	  "median time from a request read to its chunks freed (not judged)",
	  .info = true, .per = "reclaim_requests" },
	{ "request_latency_p99_ns", { "reclaim_latency.p99_ns" },
	  MP_BETTER_LOWER, 10, 200, 100000, "ns",
	  "99th percentile of the same (not judged)", .info = true,
	  .per = "reclaim_requests" },
	/*
	 * stress: one chunk's allocation, map to every page faulted in. The
	 * program stalls there while the kernel reclaims for it; a kernel
	 * that lets allocations through by not reclaiming shows in the OOM
	 * kills and the peak usage instead. p99 is the outcome (the stalls
	 * issue 21 is about); the median and the worst one are shown
	 */
	{ "alloc_latency_p50_ns", { "alloc_latency.p50_ns" },
	  MP_BETTER_LOWER, 10, 200, 100000, "ns",
	  "median time of one chunk's allocation, map and fault in "
	  "(not judged)", .info = true },
	{ "alloc_latency_p99_ns", { "alloc_latency.p99_ns" },
	  MP_BETTER_LOWER, 10, 200, 100000, "ns",
	  "99th percentile of one chunk's allocation: the program's stalls" },
	{ "alloc_latency_max_ns", { "alloc_latency.max_ns" },
	  MP_BETTER_LOWER, 25, 400, 1000000, "ns",
	  "the slowest chunk allocation (not judged)", .info = true },
	/*
	 * stress --cotenant: a neighbour's 64K map, write, unmap in the
	 * program's cgroup. What the program's cooperation (or its silence)
	 * costs the others: its p99 is the outcome, lower is better
	 */
	{ "cotenant_p99_ns", { "cotenant.p99_ns" },
	  MP_BETTER_LOWER, 10, 200, 100000, "ns",
	  "99th percentile of the co-tenant's operation: its stalls",
	  .headline = true },
	{ "peak_usage_ratio", { "peak_usage_ratio" }, MP_BETTER_LOWER, 1, 10,
	  0.01, "ratio", "peak usage / limit (computed)" },
	{ "chunks_freed", { "chunks_freed" }, MP_BETTER_HIGHER, 2, 50, 1,
	  "count", "chunks the shrinker had freed on request",
	  .headline = true },
	/*
	 * A kernel that splits one request in two doubles this and halves
	 * each request's latency for the same memory back: the outcome is
	 * chunks_freed, the efficiency chunks_per_request
	 */
	{ "reclaim_requests", { "reclaim_requests" }, MP_BETTER_HIGHER, 2, 50, 1,
	  "count", "reclaim requests the program received (not judged)",
	  .info = true },
	{ "chunks_per_request", { NULL }, MP_BETTER_HIGHER, 5, 50, 0.5,
	  "ratio", "chunks freed per request: fewer wake-ups for the same "
	  "memory is better (computed)", .headline = true,
	  .per = "reclaim_requests" },
	/*
	 * Level events count threshold crossings, which a boot's page
	 * layout moves: 21-25% boot to boot on 6.12 in the deterministic
	 * mode (kernel-patch/README-harness.md), -15% between a control
	 * boot and three pooled ones in CI. 2% flagged that control.
	 */
	{ "events_total", { "events_total" }, MP_BETTER_HIGHER, 30, 60, 1,
	  "count", "pressure events, low + medium + critical (computed)" },
	{ "first_event_ns", { "first_event_ns" }, MP_BETTER_LOWER, 5, 100,
	  10000000, "ns", "time from the start to the first event (listen)" },
	{ "alloc_bytes_per_s", { "alloc_throughput_bytes_per_s" },
	  MP_BETTER_HIGHER, 2, 50, 1048576, "bytes/s",
	  "allocation throughput of the stress engine", .headline = true },
	{ "swap_growth_bytes", { "swap_growth_bytes" }, MP_BETTER_LOWER, 5, 50,
	  1048576, "bytes", "swap used at the end minus at the start",
	  .headline = true },
	{ "hog_bogo_ops", { "hog.bogo_ops" }, MP_BETTER_HIGHER, 2, 50, 1,
	  "count", "the stress-ng hog's bogo operations" },
	/* the cache workload of the strategy-* scenarios (--strategy) */
	{ "cache_hit_ratio", { "cache.hit_ratio" }, MP_BETTER_HIGHER, 2, 10,
	  0.01, "ratio", "cache reads that found their chunk held" },
	{ "cache_reads_per_s", { "cache.reads_per_s" }, MP_BETTER_HIGHER, 5,
	  50, 1, "count", "cache reads served per second: the useful work" },
	{ "cache_misses", { "cache.misses" }, MP_BETTER_LOWER, 5, 50, 1,
	  "count", "chunks the cache re-created" },
	{ "usage_avg_bytes", { NULL }, MP_BETTER_LOWER, 5, 50, 1048576,
	  "bytes", "the cgroup's usage averaged over the run (strategies)" },
	{ "pressure_some_us", { NULL }, MP_BETTER_LOWER, 30, 100, 10000,
	  "us", "memory.pressure (v2) or host PSI some total, growth over "
	  "the run (strategies)" },
	{ "pressure_full_us", { NULL }, MP_BETTER_LOWER, 30, 100, 10000,
	  "us", "the same, full" },
	/*
	 * Why a run went as it did: the reclaim counters' growth over it,
	 * the host's (the guest's, in a VM) and the run cgroup's. Shown,
	 * never judged; --compare names those that moved most beside each
	 * verdict
	 */
#define MP_COUNTER(n, p, h) { n, { p }, MP_BETTER_LOWER, 5, 50, 1, "count", \
			      h, .info = true, .counter = true }
	MP_COUNTER("vmstat_pgscan_direct", "vmstat.pgscan_direct",
		   "pages scanned by direct reclaim (host /proc/vmstat)"),
	MP_COUNTER("vmstat_pgscan_kswapd", "vmstat.pgscan_kswapd",
		   "pages scanned by kswapd"),
	MP_COUNTER("vmstat_pgsteal_direct", "vmstat.pgsteal_direct",
		   "pages reclaimed by direct reclaim"),
	MP_COUNTER("vmstat_pgsteal_kswapd", "vmstat.pgsteal_kswapd",
		   "pages reclaimed by kswapd"),
	MP_COUNTER("vmstat_refault_anon", "vmstat.workingset_refault_anon",
		   "anonymous pages faulted back soon after reclaim"),
	MP_COUNTER("vmstat_refault_file", "vmstat.workingset_refault_file",
		   "file pages faulted back soon after reclaim"),
	MP_COUNTER("vmstat_pswpin", "vmstat.pswpin", "pages swapped in"),
	MP_COUNTER("vmstat_pswpout", "vmstat.pswpout", "pages swapped out"),
	MP_COUNTER("vmstat_pgmajfault", "vmstat.pgmajfault",
		   "major page faults"),
	MP_COUNTER("vmstat_oom_kill", "vmstat.oom_kill",
		   "OOM kills on the whole host"),
	MP_COUNTER("vmstat_thp_fault_fallback", "vmstat.thp_fault_fallback",
		   "huge page faults that fell back to small pages"),
	MP_COUNTER("vmstat_pgfault", "vmstat.pgfault",
		   "page faults: what getting memory cost, in faults"),
	MP_COUNTER("vmstat_thp_fault_alloc", "vmstat.thp_fault_alloc",
		   "huge pages allocated at a fault"),
	MP_COUNTER("cg_pgscan", "cgroup_counters.memory_stat.pgscan",
		   "pages scanned in the run's cgroup (v2 memory.stat)"),
	MP_COUNTER("cg_pgsteal", "cgroup_counters.memory_stat.pgsteal",
		   "pages reclaimed in the run's cgroup (v2)"),
	MP_COUNTER("cg_refault_anon",
		   "cgroup_counters.memory_stat.workingset_refault_anon",
		   "anonymous refaults in the run's cgroup"),
	MP_COUNTER("cg_refault_file",
		   "cgroup_counters.memory_stat.workingset_refault_file",
		   "file refaults in the run's cgroup"),
	{ "cg_pgmajfault", { "cgroup_counters.memory_stat.pgmajfault",
			     "cgroup_counters.memory_stat.total_pgmajfault" },
	  MP_BETTER_LOWER, 5, 50, 1, "count",
	  "major faults in the run's cgroup", .info = true, .counter = true },
	MP_COUNTER("cg_pgpgout", "cgroup_counters.memory_stat.total_pgpgout",
		   "pages uncharged from the run's cgroup (v1)"),
	MP_COUNTER("cg_pgfault", "cgroup_counters.memory_stat.pgfault",
		   "page faults in the run's cgroup (v2)"),
	MP_COUNTER("cg_thp_fault_alloc",
		   "cgroup_counters.memory_stat.thp_fault_alloc",
		   "huge pages allocated at a fault in the run's cgroup (v2)"),
	MP_COUNTER("cg_high_events", "cgroup_counters.memory_events.high",
		   "times the run's cgroup went over memory.high (v2)"),
	MP_COUNTER("cg_max_events", "cgroup_counters.memory_events.max",
		   "times it hit memory.max (v2)"),
#undef MP_COUNTER
};
/* clang-format on */

const size_t mp_nr_metrics = sizeof(mp_metrics) / sizeof(mp_metrics[0]);

const struct mp_metric *mp_metric_find(const char *name)
{
	size_t i;

	for (i = 0; i < mp_nr_metrics; i++)
		if (!strcmp(mp_metrics[i].name, name))
			return &mp_metrics[i];
	return NULL;
}

const char *mp_better_name(enum mp_better b)
{
	return b == MP_BETTER_HIGHER ? "higher" : "lower";
}

json_t *mp_json_path(const json_t *doc, const char *path)
{
	char key[128];
	const char *p = path, *dot;
	json_t *cur = (json_t *)doc;
	size_t len;

	while (cur && *p) {
		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		cur = json_object_get(cur, key);
		p += len + (dot ? 1 : 0);
	}
	return cur;
}

int mp_json_path_num(const json_t *doc, const char *path, double *v)
{
	json_t *j = mp_json_path(doc, path);

	if (!json_is_number(j))
		return -1;
	*v = json_number_value(j);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* integers stay integers in the document when they are whole */
static json_t *num(double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *mp_summary(const double *v, size_t n)
{
	json_t *s, *samples;
	double *sorted, med, spread;
	size_t i;

	if (!n)
		return NULL;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return NULL;
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	med = median_sorted(sorted, n);
	samples = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(samples, num(v[i]));
	s = json_object();
	json_object_set_new(s, "median", num(med));
	json_object_set_new(s, "min", num(sorted[0]));
	json_object_set_new(s, "max", num(sorted[n - 1]));
	spread = sorted[n - 1] - sorted[0];
	if (med != 0)
		json_object_set_new(s, "spread_pct",
				    json_real(round(spread / fabs(med) * 1000) /
					      10));
	else
		mp_json_set(s, "spread_pct", spread == 0 ? json_real(0) : NULL);
	json_object_set_new(s, "n", json_integer((json_int_t)n));
	json_object_set_new(s, "samples", samples);
	free(sorted);
	return s;
}

/* Metrics a run document does not hold directly. */
static int derived(const json_t *run, const char *name, double *v)
{
	double peak, limit;
	json_t *ev, *val;

	if (!strcmp(name, "peak_usage_ratio")) {
		if (mp_json_path_num(run, "peak_usage_bytes", &peak) ||
		    mp_json_path_num(run, "limit_bytes", &limit) || limit <= 0)
			return -1;
		*v = round(peak / limit * 1000) / 1000;
		return 0;
	}
	if (!strcmp(name, "chunks_per_request")) {
		double freed, req;

		if (mp_json_path_num(run, "chunks_freed", &freed) ||
		    mp_json_path_num(run, "reclaim_requests", &req) || req <= 0)
			return -1;
		*v = round(freed / req * 100) / 100;
		return 0;
	}
	/* for the cache workload's runs only: host-wide PSI is noise elsewhere */
	if (json_is_string(json_object_get(run, "strategy"))) {
		if (!strcmp(name, "usage_avg_bytes"))
			return mp_json_path_num(run, "usage_avg_bytes", v);
		if (!strcmp(name, "pressure_some_us"))
			return mp_json_path_num(run, "memory_pressure.some_us",
						v);
		if (!strcmp(name, "pressure_full_us"))
			return mp_json_path_num(run, "memory_pressure.full_us",
						v);
	}
	if (!strcmp(name, "events_total")) {
		static const char *const lv[] = { "low", "medium", "critical",
						  "oom" };
		bool any = false;
		size_t i;

		ev = json_object_get(run, "events");
		if (!json_is_object(ev))
			return -1;
		*v = 0;
		for (i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
			val = json_object_get(ev, lv[i]);
			if (json_is_number(val)) {
				*v += json_number_value(val);
				any = true;
			}
		}
		return any ? 0 : -1;
	}
	return -1;
}

/* "a.b.c" -> the object at "a.b", or NULL for a top-level key */
static json_t *parent_of(const json_t *doc, const char *path)
{
	const char *dot = strrchr(path, '.');
	char buf[128];

	if (!dot || (size_t)(dot - path) >= sizeof(buf))
		return NULL;
	memcpy(buf, path, dot - path);
	buf[dot - path] = '\0';
	return mp_json_path(doc, buf);
}

static int run_metric(const json_t *run, const struct mp_metric *m, double *v)
{
	size_t i;

	for (i = 0; i < 4 && m->paths[i]; i++) {
		json_t *parent = parent_of(run, m->paths[i]);
		json_t *count = json_object_get(parent, "count");

		/* a histogram with no samples has no latency, not 0 */
		if (json_is_integer(count) && !json_integer_value(count))
			return -1;
		if (!mp_json_path_num(run, m->paths[i], v))
			return 0;
	}
	return derived(run, m->name, v);
}

/* the run's boot number (pooled reports), or 0 */
static long run_boot(const json_t *run)
{
	json_t *b = json_object_get(run, "boot");

	return json_is_integer(b) && json_integer_value(b) > 0 ?
		       (long)json_integer_value(b) :
		       0;
}

/* medians of each boot's samples, in boot order, when 2 boots or more */
static json_t *boot_medians(const double *v, const long *boot, size_t n)
{
	double *w;
	long b, next, last = 0;
	size_t i, k;
	json_t *arr;

	for (i = 0; i < n; i++)
		if (boot[i] > last)
			last = boot[i];
	w = malloc((n + 1) * sizeof(*w));
	if (!w)
		return NULL;
	arr = json_array();
	for (b = 1; b <= last; b = next) {
		next = last + 1;
		for (i = k = 0; i < n; i++) {
			if (boot[i] == b)
				w[k++] = v[i];
			else if (boot[i] > b && boot[i] < next)
				next = boot[i];
		}
		if (!k)
			continue;
		qsort(w, k, sizeof(*w), cmp_double);
		json_array_append_new(arr, num(median_sorted(w, k)));
	}
	free(w);
	if (json_array_size(arr) < 2) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

int mp_report_summarize(json_t *scenario)
{
	json_t *runs = json_object_get(scenario, "runs");
	json_t *metrics = json_object_get(scenario, "metrics");
	size_t i, j, n, nruns;
	double *v;
	long *boot;

	if (!json_is_array(runs))
		return -1;
	if (!json_is_object(metrics)) {
		metrics = json_object();
		json_object_set_new(scenario, "metrics", metrics);
	}
	nruns = json_array_size(runs);
	v = calloc(nruns + 1, sizeof(*v));
	boot = calloc(nruns + 1, sizeof(*boot));
	if (!v || !boot) {
		free(v);
		free(boot);
		return -1;
	}
	for (i = 0; i < mp_nr_metrics; i++) {
		const struct mp_metric *m = &mp_metrics[i];
		json_t *sum, *bm;
		bool all_booted = true;

		if (json_object_get(metrics, m->name))
			continue;
		for (j = n = 0; j < nruns; j++) {
			json_t *run = json_array_get(runs, j);

			if (run_metric(run, m, &v[n]))
				continue;
			boot[n] = run_boot(run);
			all_booted = all_booted && boot[n];
			n++;
		}
		if (!n)
			continue;
		sum = mp_summary(v, n);
		bm = all_booted ? boot_medians(v, boot, n) : NULL;
		if (sum && bm)
			json_object_set_new(sum, "boot_medians", bm);
		else
			json_decref(bm);
		json_object_set_new(metrics, m->name, sum);
	}
	free(v);
	free(boot);
	return 0;
}

/* numbers of a JSON array, sorted into *v (malloc'd); count, 0 if none */
static size_t sorted_numbers(const json_t *arr, double **v)
{
	json_t *e;
	size_t i, n = 0;

	*v = malloc((json_array_size(arr) + 1) * sizeof(**v));
	if (!*v)
		return 0;
	json_array_foreach(arr, i, e)
		if (json_is_number(e))
			(*v)[n++] = json_number_value(e);
	qsort(*v, n, sizeof(**v), cmp_double);
	return n;
}

/*
 * One number as a document holds it: written with 9 significant digits
 * (mp_json_emit()), so read back within a part in 10^8
 */
static bool same_number(double a, double b)
{
	return a == b || fabs(a - b) <= 1e-8 * fmax(fabs(a), fabs(b));
}

/*
 * The same numbers under @key of two summaries, in any order (the
 * samples), or in the same order (@ordered: the boot medians)
 */
static bool same_numbers(const json_t *a, const json_t *b, const char *key,
			 bool ordered)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
	double *u = NULL, *w = NULL;
	size_t n, m, i;
	bool same;

	if (!x || !y)
		return !x && !y;
	if (ordered) {
		if (json_array_size(x) != json_array_size(y))
			return false;
		for (i = 0; i < json_array_size(x); i++)
			if (!same_number(json_number_value(json_array_get(x, i)),
					 json_number_value(
						 json_array_get(y, i))))
				return false;
		return true;
	}
	n = sorted_numbers(x, &u);
	m = sorted_numbers(y, &w);
	same = u && w && n == m && n == json_array_size(x) &&
	       m == json_array_size(y);
	for (i = 0; same && i < n; i++)
		same = same_number(u[i], w[i]);
	free(u);
	free(w);
	return same;
}

int mp_report_resummarize(json_t *doc, const char *what, struct mp_err *err)
{
	json_t *sc, *fresh, *stored, *f, *s;
	const char *key, *name;
	double a, b;
	size_t i;
	int ret = 0;

	json_array_foreach(json_object_get(doc, "scenarios"), i, sc) {
		name = json_string_value(json_object_get(sc, "name")) ?: "?";
		fresh = json_object();
		s = json_object_get(sc, "runs") ?
			    json_pack("{s:O, s:o}", "runs",
				      json_object_get(sc, "runs"), "metrics",
				      fresh) :
			    json_pack("{s:[], s:o}", "runs", "metrics", fresh);
		if (!s || mp_report_summarize(s)) {
			json_decref(s);
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM,
				       "cannot summarize '%s'", what);
		}
		stored = json_object_get(sc, "metrics");
		json_object_foreach(stored, key, f) {
			json_t *g = json_object_get(fresh, key);

			/*
			 * not a metric of the table, or none of its runs:
			 * an older mpctl's (whose table took other paths),
			 * never compared. NEW without it where BASE has it
			 * is a missing metric, as for any other
			 */
			if (!mp_metric_find(key) || !g)
				continue;
			if (mp_json_path_num(f, "median", &a) ||
			    mp_json_path_num(g, "median", &b) ||
			    !same_number(a, b) ||
			    !same_numbers(f, g, "samples", false) ||
			    !same_numbers(f, g, "boot_medians", true)) {
				ret = mp_errf(err, MP_EXIT_DATAERR, 0,
					      "'%s': scenario '%s': the summary "
					      "of '%s' disagrees with its runs "
					      "(median %g, the runs give %g)",
					      what, name, key,
					      json_number_value(
						      json_object_get(f,
								      "median")),
					      json_number_value(
						      json_object_get(g,
								      "median")));
				break;
			}
		}
		/* the summaries compared are the runs', made here */
		if (!ret)
			json_object_set(sc, "metrics", fresh);
		json_decref(s);
		if (ret)
			return ret;
	}
	return 0;
}

json_t *mp_report_scenario(const json_t *doc, const char *name)
{
	json_t *sc = json_object_get(doc, "scenarios"), *s;
	size_t i;

	json_array_foreach(sc, i, s) {
		const char *n = json_string_value(json_object_get(s, "name"));

		if (n && !strcmp(n, name))
			return s;
	}
	return NULL;
}

/*
 * Every scenario is found by its name: one without a name, or two of one
 * name, would be left out of a comparison without a word
 */
static int check_names(const json_t *doc, const char *what, struct mp_err *err)
{
	json_t *scs = json_object_get(doc, "scenarios"), *sc;
	size_t i;

	json_array_foreach(scs, i, sc) {
		const char *name =
			json_string_value(json_object_get(sc, "name"));

		if (!name || !name[0])
			return mp_errf(err, MP_EXIT_DATAERR, 0,
				       "'%s': scenario %zu has no name", what,
				       i + 1);
		if (mp_report_scenario(doc, name) != sc)
			return mp_errf(err, MP_EXIT_DATAERR, 0,
				       "'%s': two scenarios are named '%s'",
				       what, name);
	}
	return 0;
}

int mp_report_check(const json_t *doc, const char *what, struct mp_err *err)
{
	json_t *s = json_object_get(doc, "schema");
	const char *name = json_string_value(json_object_get(s, "name"));
	json_t *ver = json_object_get(s, "version");

	if (!json_is_object(doc) || !name)
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' is not an mpctl document (no schema)",
			       what);
	if (strcmp(name, MP_REPORT_SCHEMA))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' is a '%s' document, not '%s'", what, name,
			       MP_REPORT_SCHEMA);
	if (!json_is_integer(ver) ||
	    json_integer_value(ver) != MP_REPORT_SCHEMA_VERSION)
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has schema version %lld, this mpctl "
			       "reads version %d only",
			       what,
			       json_is_integer(ver) ?
				       (long long)json_integer_value(ver) :
				       -1LL,
			       MP_REPORT_SCHEMA_VERSION);
	if (!json_is_array(json_object_get(doc, "scenarios")))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has no \"scenarios\" array", what);
	return check_names(doc, what, err);
}

int mp_noise_check(const json_t *doc, const char *what, struct mp_err *err)
{
	json_t *noise, *metrics, *v;
	const char *scenario, *metric;

	if (mp_json_check_schema(doc, MP_NOISE_SCHEMA, MP_NOISE_SCHEMA_VERSION))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' is not a noise profile (schema %s "
			       "version %d)",
			       what, MP_NOISE_SCHEMA, MP_NOISE_SCHEMA_VERSION);
	noise = json_object_get(doc, "noise");
	if (!json_is_object(noise))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has no \"noise\" object", what);
	json_object_foreach(noise, scenario, metrics) {
		if (!json_is_object(metrics))
			return mp_errf(err, MP_EXIT_DATAERR, 0,
				       "'%s': noise of '%s' is not an object",
				       what, scenario);
		json_object_foreach(metrics, metric, v) {
			if (!mp_metric_find(metric))
				return mp_errf(err, MP_EXIT_DATAERR, 0,
					       "'%s': noise of %s: no metric "
					       "is named '%s'",
					       what, scenario, metric);
			if (!json_is_number(v) ||
			    !(json_number_value(v) >= 0 &&
			      json_number_value(v) <= MP_NOISE_MAX_PCT))
				return mp_errf(err, MP_EXIT_DATAERR, 0,
					       "'%s': noise of %s %s is not a "
					       "percentage from 0 to %d",
					       what, scenario, metric,
					       MP_NOISE_MAX_PCT);
		}
	}
	return 0;
}

json_t *mp_json_load_file(const char *path, struct mp_err *err)
{
	json_error_t jerr;
	json_t *doc;
	FILE *f;

	struct stat st;

	if (!strcmp(path, "-")) {
		doc = json_loadf(stdin, 0, &jerr);
	} else {
		f = fopen(path, "r");
		if (!f) {
			/* missing: 66; unreadable: 77 (EACCES) */
			mp_errf(err,
				errno == ENOENT || errno == ENOTDIR ?
					MP_EXIT_NOINPUT :
					-1,
				errno, "cannot open '%s'", path);
			return NULL;
		}
		if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
			fclose(f);
			mp_errf(err, MP_EXIT_NOINPUT, EISDIR,
				"cannot read '%s'", path);
			return NULL;
		}
		doc = json_loadf(f, 0, &jerr);
		fclose(f);
	}
	/* what is there is not JSON: a data error */
	if (!doc)
		mp_errf(err, MP_EXIT_DATAERR, 0,
			"cannot parse '%s': line %d: %s", path, jerr.line,
			jerr.text);
	return doc;
}

/* a summary's samples as numbers into *v (malloc'd); their count, or 0 */
static size_t samples_of(const json_t *s, double **v)
{
	json_t *arr = json_object_get(s, "samples"), *e;
	size_t i, n = 0;

	*v = NULL;
	if (!json_is_array(arr) || !json_array_size(arr))
		return 0;
	*v = malloc(json_array_size(arr) * sizeof(**v));
	if (!*v)
		return 0;
	json_array_foreach(arr, i, e)
		if (json_is_number(e))
			(*v)[n++] = json_number_value(e);
	return n;
}

/* mean and sd of a summary's boot medians; their count, 0 below two */
static size_t boot_stats(const json_t *s, double *mean, double *sd)
{
	json_t *arr = json_object_get(s, "boot_medians"), *e;
	double sum = 0, sq = 0;
	size_t i, n = 0;

	json_array_foreach(arr, i, e) {
		if (!json_is_number(e))
			continue;
		sum += json_number_value(e);
		n++;
	}
	if (n < 2)
		return 0;
	*mean = sum / n;
	json_array_foreach(arr, i, e)
		if (json_is_number(e))
			sq += pow(json_number_value(e) - *mean, 2);
	*sd = sqrt(sq / (n - 1));
	return n;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? num(v) : json_null();
}

static json_t *pct_or_null(double v, double base)
{
	if (!isfinite(v) || base == 0)
		return json_null();
	return json_real(round(v / fabs(base) * 1000) / 10);
}

/* round a p-value to 4 significant digits for the document */
static json_t *p_json(double p)
{
	double mag;

	if (!isfinite(p))
		return json_null();
	if (p <= 0)
		return json_real(0);
	mag = pow(10, 3 - floor(log10(p)));
	return json_real(round(p * mag) / mag);
}

/* the first keys of a compare row: what it compares, and BASE's median */
static json_t *row_head(const char *scenario, const struct mp_metric *m,
			double bmed)
{
	json_t *row = json_object();

	json_object_set_new(row, "scenario", json_string(scenario));
	json_object_set_new(row, "metric", json_string(m->name));
	json_object_set_new(row, "unit", json_string(m->unit));
	json_object_set_new(row, "better",
			    json_string(mp_better_name(m->better)));
	json_object_set_new(row, "base", num(bmed));
	return row;
}

/* What one compare row says, computed from numbers alone (no JSON). */
struct cmp_stats {
	double bmed, cmed;     /* the medians of BASE and NEW */
	double pct;	       /* (cmed - bmed) / |bmed| in %, NAN for bmed 0 */
	double shift;	       /* Hodges-Lehmann shift, NEW - BASE */
	double p_row, p_min;   /* the row's one-sided p, the least p */
	double bworst, bbest;  /* BASE's worst and best run, badness space */
	double dir;	       /* 1: lower is better, -1: higher is */
	size_t nb, nc, nboots; /* runs of each side, boots of BASE */
	double pi;	       /* one more boot's prediction interval */
	double min_pct, floor_abs; /* the minimum effect, % and absolute */
	double noise_pct;	   /* the noise profile's spread, %; NAN none */
	double mde;		   /* minimum detectable effect, NAN unknown */
	const char *verdict;	   /* same, worse, better or unsure */
};

/*
 * The statistics of one metric of one scenario: BASE's runs bv[nb] and
 * boot medians' mean and sd over nboots boots (0: one boot), NEW's runs
 * cv[nc], their medians. 0, or -1 when memory ran out.
 */
static int cmp_compute(const struct mp_metric *m, const double *bv, size_t nb,
		       const double *cv, size_t nc, double bmed, double cmed,
		       size_t nboots, double bmean, double bsd,
		       double noise_pct, const struct mp_compare_opts *o,
		       struct cmp_stats *r)
{
	double p_worse, p_better, bad, mde_rank, gap_worse, gap_better;
	bool beyond_worse = true, beyond_better = true;
	double *bneg, *cneg;
	size_t i;

	*r = (struct cmp_stats){
		.bmed = bmed,
		.cmed = cmed,
		.pct = NAN,
		.nb = nb,
		.nc = nc,
		.nboots = nboots,
		.bworst = -INFINITY,
		.bbest = INFINITY,
		.dir = m->better == MP_BETTER_LOWER ? 1 : -1,
		.noise_pct = noise_pct,
		.verdict = "same",
	};
	/* "worse" is "larger" in badness space: dir * value */
	bneg = malloc(nb * sizeof(*bneg));
	cneg = malloc(nc * sizeof(*cneg));
	if (!bneg || !cneg) {
		free(bneg);
		free(cneg);
		return -1;
	}
	for (i = 0; i < nb; i++) {
		bneg[i] = r->dir * bv[i];
		r->bworst = fmax(r->bworst, bneg[i]);
		r->bbest = fmin(r->bbest, bneg[i]);
	}
	for (i = 0; i < nc; i++)
		cneg[i] = r->dir * cv[i];
	p_worse = mp_rank_p_greater(bneg, nb, cneg, nc);
	for (i = 0; i < nb; i++)
		bneg[i] = -bneg[i];
	for (i = 0; i < nc; i++)
		cneg[i] = -cneg[i];
	p_better = mp_rank_p_greater(bneg, nb, cneg, nc);
	free(bneg);
	free(cneg);
	r->p_min = mp_rank_p_min(nb, nc);
	r->shift = mp_hodges_lehmann(bv, nb, cv, nc);
	bad = r->dir * r->shift;
	if (bmed != 0)
		r->pct = (cmed - bmed) / fabs(bmed) * 100;

	/*
	 * A base of one boot cannot know how much a boot differs from the
	 * next: it keeps the wide per-metric thresholds.
	 */
	if (o->min_effect_pct >= 0)
		r->min_pct = o->min_effect_pct;
	else
		r->min_pct = nboots ? m->min_effect_pct : m->one_boot_pct;
	r->floor_abs = fmax(m->min_delta, r->min_pct / 100 * fabs(bmed));
	/* boots of one kernel landed that far apart: no verdict within it */
	if (noise_pct > 0)
		r->floor_abs = fmax(r->floor_abs, noise_pct / 100 * fabs(bmed));
	/* one more boot's median: one-sided prediction interval */
	if (nboots) {
		r->pi = mp_t_quantile(1 - o->alpha, (double)nboots - 1) * bsd *
			sqrt(1 + 1.0 / (double)nboots);
		beyond_worse = r->dir * (cmed - bmean) > r->pi;
		beyond_better = r->dir * (bmean - cmed) > r->pi;
	}
	/*
	 * How far the new median lies beyond the base's worst (best) run:
	 * a value some base run already reached is noise the base has
	 * shown, whatever the boot medians say.  Measured: the hog
	 * scenario's throughput takes two values 7% apart, and a boot of
	 * 6.12 gave the lower one in all its runs.
	 */
	gap_worse = r->dir * cmed - r->bworst;
	gap_better = r->bbest - r->dir * cmed;
	mde_rank = mp_rank_mde(bv, nb, nc, o->alpha);
	r->mde = isfinite(mde_rank) ?
			 fmax(fmax(fmax(mde_rank, r->pi), r->floor_abs),
			      r->bworst - r->dir * bmed + r->floor_abs) :
			 NAN;

	if (r->p_min > o->alpha)
		r->verdict = "unsure";
	else if (p_worse <= o->alpha && beyond_worse && bad > 0 &&
		 fabs(r->shift) >= r->floor_abs && gap_worse >= r->floor_abs)
		r->verdict = "worse";
	else if (p_better <= o->alpha && beyond_better && bad < 0 &&
		 fabs(r->shift) >= r->floor_abs && gap_better >= r->floor_abs)
		r->verdict = "better";
	r->p_row = bad > 0 ? p_worse : p_better;
	return 0;
}

/* The row of the document for @r. */
static json_t *cmp_row_json(const char *scenario, const struct mp_metric *m,
			    const struct cmp_stats *r,
			    const struct mp_compare_opts *o)
{
	double lo = r->dir > 0 ? r->bbest : r->bworst;
	double hi = r->dir > 0 ? r->bworst : r->bbest;
	json_t *row = row_head(scenario, m, r->bmed);

	json_object_set_new(row, "new", num(r->cmed));
	json_object_set_new(row, "delta", num_or_null(r->cmed - r->bmed));
	mp_json_set(row, "delta_pct",
		    isnan(r->pct) ? NULL : json_real(round(r->pct * 10) / 10));
	json_object_set_new(row, "shift", num_or_null(r->shift));
	json_object_set_new(row, "shift_pct", pct_or_null(r->shift, r->bmed));
	json_object_set_new(row, "p_value", p_json(r->p_row));
	json_object_set_new(row, "p_min", p_json(r->p_min));
	json_object_set_new(row, "alpha", json_real(o->alpha));
	json_object_set_new(row, "samples",
			    json_pack("[I, I]", (json_int_t)r->nb,
				      (json_int_t)r->nc));
	json_object_set_new(row, "base_range",
			    json_pack("[o, o]", num(r->dir * lo),
				      num(r->dir * hi)));
	json_object_set_new(row, "base_boots",
			    json_integer((json_int_t)r->nboots));
	json_object_set_new(row, "boot_interval",
			    r->nboots ? num(r->pi) : json_null());
	json_object_set_new(row, "min_effect_pct", json_real(r->min_pct));
	json_object_set_new(row, "noise_profile_pct",
			    num_or_null(r->noise_pct));
	json_object_set_new(row, "min_effect", num(r->floor_abs));
	json_object_set_new(row, "mde", num_or_null(r->mde));
	json_object_set_new(row, "mde_pct", pct_or_null(r->mde, r->bmed));
	json_object_set_new(row, "verdict", json_string(r->verdict));
	return row;
}

/*
 * The spread @noise, a noise profile, gives @metric in @scenario, in
 * percent; NAN when it has none (or there is no profile).
 */
static double noise_of(const json_t *noise, const char *scenario,
		       const char *metric)
{
	json_t *v =
		json_object_get(json_object_get(json_object_get(noise, "noise"),
						scenario),
				metric);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/*
 * One row: BASE's summary @bs against NEW's @cs (their samples, medians
 * and boot medians) through cmp_compute(); NULL when either lacks a
 * median, samples, or memory ran out.
 */
static json_t *compare_row(const char *scenario, const struct mp_metric *m,
			   const json_t *bs, const json_t *cs,
			   const struct mp_compare_opts *o)
{
	double bmed, cmed, *bv = NULL, *cv = NULL, bmean = 0, bsd = 0;
	struct cmp_stats r;
	json_t *row = NULL;
	size_t nb, nc, nboots;

	if (mp_json_path_num(bs, "median", &bmed) ||
	    mp_json_path_num(cs, "median", &cmed))
		return NULL;
	nb = samples_of(bs, &bv);
	nc = samples_of(cs, &cv);
	nboots = boot_stats(bs, &bmean, &bsd);
	if (nb && nc &&
	    !cmp_compute(m, bv, nb, cv, nc, bmed, cmed, nboots, bmean, bsd,
			 noise_of(o->noise, scenario, m->name), o, &r))
		row = cmp_row_json(scenario, m, &r, o);
	free(bv);
	free(cv);
	return row;
}

static bool ran_ok(const json_t *sc)
{
	const char *st = json_string_value(json_object_get(sc, "status"));

	return sc && (!st || !strcmp(st, "ok"));
}

/* every run of BASE without an OOM kill, and one of NEW with one */
static bool new_oom_kill(const json_t *bs, const json_t *cs)
{
	double bmax, cmax;

	return !mp_json_path_num(bs, "max", &bmax) && bmax == 0 &&
	       !mp_json_path_num(cs, "max", &cmax) && cmax > 0;
}

/*
 * NEW lacks metric m, measured per m->per (a latency per request), and
 * that count is 0 in every run of NEW: a row saying so, judged like any
 * other (worse, or info for a metric never judged), or NULL when the
 * metric is simply missing
 */
static json_t *absent_row(const char *scenario, const struct mp_metric *m,
			  const json_t *bs, const json_t *cm)
{
	double bmed, cmax;
	json_t *row;

	if (!m->per ||
	    mp_json_path_num(json_object_get(cm, m->per), "max", &cmax) ||
	    cmax != 0 || mp_json_path_num(bs, "median", &bmed))
		return NULL;
	row = row_head(scenario, m, bmed);
	json_object_set_new(row, "new", json_null());
	json_object_set_new(row, "verdict",
			    json_string(m->info ? "info" : "worse"));
	json_object_set_new(row, "rule", json_string("none"));
	json_object_set_new(row, "per", json_string(m->per));
	return row;
}

/* how far a counter row moved, for ranking: |delta_pct|, from 0: huge */
static double moved(const json_t *row)
{
	json_t *pct = json_object_get(row, "delta_pct");
	double d = json_number_value(json_object_get(row, "delta"));

	if (json_is_number(pct))
		return fabs(json_number_value(pct));
	return d != 0 ? INFINITY : 0;
}

/*
 * Beside each verdict (worse, better), the counters of its scenario that
 * moved most, as mmtests prints reclaim efficiency beside its results:
 * row "counters", up to three {metric, base, new, delta_pct}
 */
static void attach_counters(json_t *rows)
{
	json_t *row, *c;
	size_t i, j, k;

	json_array_foreach(rows, i, row) {
		const char *v =
			json_string_value(json_object_get(row, "verdict"));
		const char *sc =
			json_string_value(json_object_get(row, "scenario"));
		const json_t *top[3] = { NULL };
		json_t *arr;

		if (!v || (strcmp(v, "worse") && strcmp(v, "better")))
			continue;
		json_array_foreach(rows, j, c) {
			const struct mp_metric *m =
				mp_metric_find(json_string_value(
					json_object_get(c, "metric")));

			if (!m || !m->counter || moved(c) == 0 ||
			    strcmp(sc, json_string_value(
					       json_object_get(c, "scenario"))))
				continue;
			for (k = 0; k < 3; k++) {
				if (top[k] && moved(top[k]) >= moved(c))
					continue;
				memmove(&top[k + 1], &top[k],
					(2 - k) * sizeof(top[0]));
				top[k] = c;
				break;
			}
		}
		arr = json_array();
		for (k = 0; k < 3 && top[k]; k++)
			json_array_append_new(
				arr,
				json_pack("{s:O, s:O, s:O, s:O}", "metric",
					  json_object_get(top[k], "metric"),
					  "base",
					  json_object_get(top[k], "base"),
					  "new", json_object_get(top[k], "new"),
					  "delta_pct",
					  json_object_get(top[k], "delta_pct") ?:
						  json_null()));
		json_object_set_new(row, "counters", arr);
	}
}

/* the kernel a report ran on, for a headline: its release, or "?" */
static const char *kernel_of(const json_t *doc)
{
	const char *k =
		json_string_value(mp_json_path(doc, "system.kernel_release"));

	return k ? k : "?";
}

/*
 * One regression as a developer reads it first, in LKP's words:
 * "-18.2% regression of kernel-shrinker.chunks_freed (6.1 -> 6.12),
 * above a 2.0% minimum effect, p=0.003"; a rule's verdict says its rule.
 * The object holds the numbers the text gives.
 */
static json_t *headline_of(const json_t *row, const char *bk, const char *nk)
{
	const char *sc = json_string_value(json_object_get(row, "scenario"));
	const char *m = json_string_value(json_object_get(row, "metric"));
	const char *rule = json_string_value(json_object_get(row, "rule"));
	json_t *h, *jp = json_object_get(row, "delta_pct");
	double base = json_number_value(json_object_get(row, "base"));
	double floor_abs =
		json_number_value(json_object_get(row, "min_effect"));
	double p = json_number_value(json_object_get(row, "p_value"));
	double min_pct = NAN;
	char text[512];

	if (base != 0 && json_is_number(json_object_get(row, "min_effect")))
		min_pct = round(floor_abs / fabs(base) * 1000) / 10;
	if (rule && !strcmp(rule, "oom"))
		snprintf(text, sizeof(text),
			 "new OOM kills in %s (%s -> %s: %g -> %g): no BASE "
			 "run had one",
			 sc, bk, nk, base,
			 json_number_value(json_object_get(row, "new")));
	else if (rule && !strcmp(rule, "none"))
		snprintf(text, sizeof(text),
			 "%s.%s not measured (%s -> %s): no %s in any run of "
			 "NEW",
			 sc, m, bk, nk,
			 json_string_value(json_object_get(row, "per")));
	else if (json_is_number(jp) && isfinite(min_pct))
		snprintf(text, sizeof(text),
			 "%+.1f%% regression of %s.%s (%s -> %s), above a "
			 "%.1f%% minimum effect, p=%.2g",
			 json_number_value(jp), sc, m, bk, nk, min_pct, p);
	else
		snprintf(text, sizeof(text),
			 "regression of %s.%s (%s -> %s), above a minimum "
			 "effect of %g, p=%.2g",
			 sc, m, bk, nk, floor_abs, p);
	h = json_object();
	json_object_set_new(h, "scenario", json_string(sc));
	json_object_set_new(h, "metric", json_string(m));
	json_object_set_new(h, "base_kernel", json_string(bk));
	json_object_set_new(h, "new_kernel", json_string(nk));
	json_object_set(h, "delta_pct", jp ? jp : json_null());
	mp_json_set(h, "min_effect_pct",
		    isfinite(min_pct) ? json_real(min_pct) : NULL);
	json_object_set(h, "p_value",
			json_object_get(row, "p_value") ?: json_null());
	mp_json_set(h, "rule", rule ? json_string(rule) : NULL);
	json_object_set_new(h, "text", json_string(text));
	return h;
}

/* a rule's verdict first, then the largest change */
static int cmp_headline(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	bool rx = json_is_string(json_object_get(x, "rule"));
	bool ry = json_is_string(json_object_get(y, "rule"));
	double dx = fabs(json_number_value(json_object_get(x, "delta_pct")));
	double dy = fabs(json_number_value(json_object_get(y, "delta_pct")));

	if (rx != ry)
		return rx ? -1 : 1;
	return dx > dy ? -1 : dx < dy;
}

/* The regressions of @rows, headlines in the order a reader wants them. */
static json_t *headlines(const json_t *rows, const json_t *base,
			 const json_t *cur)
{
	json_t *arr = json_array(), *row, **v;
	size_t i, n = 0;

	v = calloc(json_array_size(rows) + 1, sizeof(*v));
	if (!v)
		return arr;
	json_array_foreach(rows, i, row) {
		const char *verdict =
			json_string_value(json_object_get(row, "verdict"));

		if (verdict && !strcmp(verdict, "worse"))
			v[n++] = headline_of(row, kernel_of(base),
					     kernel_of(cur));
	}
	qsort(v, n, sizeof(*v), cmp_headline);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
	return arr;
}

json_t *mp_report_compare(const json_t *base, const json_t *cur,
			  const struct mp_compare_opts *o, struct mp_err *err)
{
	json_t *doc, *rows, *missing, *mmetrics, *unusable, *bsc, *sc, *csc,
		*row;
	size_t i, k, worse = 0, better = 0, unsure = 0;
	char name_metric[256];

	if (mp_report_check(base, "BASE", err) ||
	    mp_report_check(cur, "NEW", err))
		return NULL;
	doc = mp_json_doc(MP_COMPARE_SCHEMA, MP_COMPARE_SCHEMA_VERSION);
	rows = json_array();
	missing = json_array();
	mmetrics = json_array();
	unusable = json_array();
	bsc = json_object_get(base, "scenarios");
	json_array_foreach(bsc, i, sc) {
		const char *name =
			json_string_value(json_object_get(sc, "name"));
		json_t *bm = json_object_get(sc, "metrics"), *cm;

		/* what did not run in BASE has nothing to lose in NEW */
		if (!name || !ran_ok(sc))
			continue;
		csc = mp_report_scenario(cur, name);
		if (!ran_ok(csc)) {
			json_array_append_new(missing, json_string(name));
			continue;
		}
		cm = json_object_get(csc, "metrics");
		for (k = 0; k < mp_nr_metrics; k++) {
			const struct mp_metric *m = &mp_metrics[k];
			json_t *bs = json_object_get(bm, m->name);
			json_t *cs = json_object_get(cm, m->name);
			const char *v;

			if (!bs)
				continue;
			row = cs ? compare_row(name, m, bs, cs, o) :
				   absent_row(name, m, bs, cm);
			if (!cs && !row) {
				snprintf(name_metric, sizeof(name_metric),
					 "%s/%s", name, m->name);
				json_array_append_new(mmetrics,
						      json_string(name_metric));
				continue;
			}
			if (!row) {
				/* both have it, and no row: nothing to judge */
				snprintf(name_metric, sizeof(name_metric),
					 "%s/%s", name, m->name);
				json_array_append_new(unusable,
						      json_string(name_metric));
				continue;
			}
			if (m->info)
				json_object_set_new(row, "verdict",
						    json_string("info"));
			/* no rank test talks a first OOM kill away */
			if (!strcmp(m->name, "oom_kills") &&
			    new_oom_kill(bs, cs)) {
				json_object_set_new(row, "verdict",
						    json_string("worse"));
				json_object_set_new(row, "rule",
						    json_string("oom"));
			}
			v = json_string_value(json_object_get(row, "verdict"));
			if (!strcmp(v, "worse"))
				worse++;
			else if (!strcmp(v, "better"))
				better++;
			else if (!strcmp(v, "unsure") && m->headline)
				unsure++;
			json_array_append_new(rows, row);
		}
	}
	mp_json_set(doc, "base_kernel",
		    json_deep_copy(
			    mp_json_path(base, "system.kernel_release")));
	mp_json_set(doc, "new_kernel",
		    json_deep_copy(mp_json_path(cur, "system.kernel_release")));
	json_object_set_new(doc, "test", json_string("mann-whitney-u"));
	json_object_set_new(doc, "alpha", json_real(o->alpha));
	json_object_set_new(doc, "rows", rows);
	json_object_set_new(doc, "missing_scenarios", missing);
	json_object_set_new(doc, "missing_metrics", mmetrics);
	json_object_set_new(doc, "unusable_metrics", unusable);
	json_object_set_new(doc, "regressions",
			    json_integer((json_int_t)worse));
	json_object_set_new(doc, "improvements",
			    json_integer((json_int_t)better));
	json_object_set_new(doc, "unsure", json_integer((json_int_t)unsure));
	attach_counters(rows);
	json_object_set_new(doc, "headline", headlines(rows, base, cur));
	return doc;
}

/* the run parameters that shape a scenario's numbers */
static const char *const alike_keys[] = {
	"parameters.chunk_size_bytes",
	"parameters.threads",
	"parameters.overcommit",
	"parameters.swap",
	"parameters.backend",
	"parameters.emulate",
	"parameters.assist",
	"parameters.hog",
	"parameters.strategy",
	"parameters.until_freed",
	"parameters.free",
	"parameters.populate",
	"parameters.lazyfree",
	"parameters.answer_delay_ns",
	"shrinker",
	/* the backend that ran (parameters.backend may say "auto") */
	"backend",
	NULL,
};

/*
 * A new reference to a run's value of key, or NULL. Stress schema 1
 * named the chunk size "chunk_bytes"; documents before --free lack free
 * and populate, and ran what their defaults are now: reuse, populating
 * but for the cache workload (a string "strategy"); documents before
 * --lazyfree lack lazyfree, and no chunk was MADV_FREE (false); documents
 * before --answer-delay lack it, and answered at once (0)
 */
static json_t *alike_get(const json_t *run, const char *key)
{
	json_t *v = mp_json_path(run, key);

	if (v)
		return json_incref(v);
	if (!strcmp(key, "parameters.chunk_size_bytes"))
		return json_incref(mp_json_path(run, "parameters.chunk_bytes"));
	if (!json_is_object(json_object_get(run, "parameters")))
		return NULL;
	if (!strcmp(key, "parameters.free"))
		return json_string("reuse");
	if (!strcmp(key, "parameters.populate"))
		return json_boolean(
			!json_is_string(json_object_get(run, "strategy")));
	if (!strcmp(key, "parameters.lazyfree"))
		return json_false();
	if (!strcmp(key, "parameters.answer_delay_ns"))
		return json_integer(0);
	return NULL;
}

static void differ(json_t *b, json_t *c, const char *where, const char *key,
		   char *buf, size_t len)
{
	char *sb, *sc;
	size_t used = strlen(buf);

	if ((!b && !c) || (b && c && json_equal(b, c)) || used >= len - 1)
		return;
	/* 2 and 2.0 are one overcommit (jq writes the one as the other) */
	if (json_is_number(b) && json_is_number(c) &&
	    json_number_value(b) == json_number_value(c))
		return;
	sb = b ? json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	sc = c ? json_dumps(c, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	snprintf(buf + used, len - used, "%s%s%s %s -> %s", used ? "; " : "",
		 where, key, sb ? sb : "(none)", sc ? sc : "(none)");
	free(sb);
	free(sc);
}

int mp_report_alike(const json_t *base, const json_t *cur, const char *hint,
		    struct mp_err *err)
{
	static const char *const settings[] = {
		"limit_bytes",
		"duration_ns",
		"stress_args",
		NULL,
	};
	char buf[sizeof(err->msg) - 64] = "", where[160];
	json_t *bset = json_object_get(base, "settings");
	json_t *cset = json_object_get(cur, "settings");
	json_t *sc;
	size_t i, k;

	for (k = 0; settings[k]; k++)
		differ(json_object_get(bset, settings[k]),
		       json_object_get(cset, settings[k]), "", settings[k], buf,
		       sizeof(buf));
	json_array_foreach(json_object_get(base, "scenarios"), i, sc) {
		const char *name =
			json_string_value(json_object_get(sc, "name"));
		json_t *csc = name ? mp_report_scenario(cur, name) : NULL;
		json_t *br = json_array_get(json_object_get(sc, "runs"), 0);
		json_t *cr = json_array_get(json_object_get(csc, "runs"), 0);

		if (!br || !cr)
			continue;
		snprintf(where, sizeof(where), "%s: ", name);
		/* a listen run's stress document shapes it too */
		if (json_object_get(br, "stress"))
			differ(json_object_get(br, "backend"),
			       json_object_get(cr, "backend"), where,
			       "listen backend", buf, sizeof(buf));
		if (json_object_get(br, "stress"))
			br = json_object_get(br, "stress");
		if (json_object_get(cr, "stress"))
			cr = json_object_get(cr, "stress");
		for (k = 0; alike_keys[k]; k++) {
			json_t *b = alike_get(br, alike_keys[k]);
			json_t *c = alike_get(cr, alike_keys[k]);

			differ(b, c, where, alike_keys[k], buf, sizeof(buf));
			json_decref(b);
			json_decref(c);
		}
	}
	if (buf[0])
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "the reports did not measure the same thing%s: %s",
			       hint, buf);
	return 0;
}

int mp_report_usable(const json_t *doc, const char *what, struct mp_err *err)
{
	json_t *scs = json_object_get(doc, "scenarios"), *sc;
	size_t i, ok = 0, metrics = 0;

	if (!json_array_size(scs))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has no scenarios: nothing to compare",
			       what);
	if (json_is_false(json_object_get(doc, "complete")))
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' is incomplete (the run was interrupted)",
			       what);
	json_array_foreach(scs, i, sc) {
		const char *st =
			json_string_value(json_object_get(sc, "status"));
		const char *name =
			json_string_value(json_object_get(sc, "name"));

		if (st && (!strcmp(st, "failed") || !strcmp(st, "interrupted")))
			return mp_errf(err, MP_EXIT_DATAERR, 0,
				       "'%s': scenario '%s' %s", what,
				       name ? name : "?", st);
		if (st && strcmp(st, "ok"))
			continue;
		ok++;
		metrics += json_object_size(json_object_get(sc, "metrics"));
	}
	if (!ok)
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has no scenario that ran (every one "
			       "failed or was skipped)",
			       what);
	if (!metrics)
		return mp_errf(err, MP_EXIT_DATAERR, 0,
			       "'%s' has no metrics: nothing to compare", what);
	return 0;
}

/* how bad a scenario's status is: ok, skipped, interrupted, failed */
static int status_rank(const char *st)
{
	static const char *const order[] = { "ok", "skipped", "interrupted" };
	int i;

	for (i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
		if (st && !strcmp(st, order[i]))
			return i;
	return i; /* failed, or what this mpctl does not know */
}

/*
 * The pool's status of a scenario is its worst in any boot, with that
 * boot's reason ("boot N: ..."): a failure is never hidden by a skip
 */
static int pool_status(json_t *pooled, const json_t *sc, size_t boot)
{
	const char *st = json_string_value(json_object_get(sc, "status"));
	const char *reason = json_string_value(json_object_get(sc, "reason"));
	const char *was = json_string_value(json_object_get(pooled, "status"));

	if (status_rank(st) <= status_rank(was))
		return 0;
	if (json_object_set_new(pooled, "status",
				json_string(st ? st : "failed")) ||
	    json_object_set_new(pooled, "reason",
				json_sprintf("boot %zu: %s", boot,
					     reason ? reason : "no status")))
		return -1;
	return 0;
}

/* the runs of scenario @name of every report, tagged with their boot */
static json_t *pool_runs(json_t *pooled, const char *name, json_t *const *docs,
			 const char *const *what, size_t n, struct mp_err *err)
{
	json_t *runs = json_array(), *sc, *run, *copy;
	size_t i, k;

	if (!runs)
		goto nomem;
	for (i = 0; i < n; i++) {
		sc = mp_report_scenario(docs[i], name);
		if (!sc) {
			mp_errf(err, MP_EXIT_DATAERR, 0,
				"'%s' has no scenario '%s': the reports to "
				"pool have the same scenarios",
				what[i], name);
			goto fail;
		}
		if (pool_status(pooled, sc, i + 1))
			goto nomem;
		json_array_foreach(json_object_get(sc, "runs"), k, run) {
			copy = json_deep_copy(run);
			if (!copy)
				goto nomem;
			if (json_object_set_new(copy, "boot",
						json_integer(i + 1))) {
				json_decref(copy);
				goto nomem;
			}
			if (json_array_append_new(runs, copy))
				goto nomem;
		}
	}
	return runs;
nomem:
	mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cannot pool the reports");
fail:
	json_decref(runs);
	return NULL;
}

json_t *mp_report_pool(json_t *const *docs, const char *const *what, size_t n,
		       struct mp_err *err)
{
	size_t nr = json_array_size(json_object_get(docs[0], "scenarios"));
	json_t *pool = NULL, *sc, *runs;
	bool complete = true;
	size_t i;

	for (i = 0; i < n; i++) {
		if (json_object_get(docs[i], "boots")) {
			mp_errf(err, MP_EXIT_DATAERR, 0,
				"'%s' is pooled already: pool the reports of "
				"single boots",
				what[i]);
			return NULL;
		}
		if (json_array_size(json_object_get(docs[i], "scenarios")) !=
		    nr) {
			mp_errf(err, MP_EXIT_DATAERR, 0,
				"'%s' has %zu scenarios, '%s' %zu: the reports "
				"to pool have the same scenarios",
				what[i],
				json_array_size(
					json_object_get(docs[i], "scenarios")),
				what[0], nr);
			return NULL;
		}
		if (i &&
		    !json_equal(mp_json_path(docs[0], "system.kernel_release"),
				mp_json_path(docs[i],
					     "system.kernel_release"))) {
			mp_errf(err, MP_EXIT_DATAERR, 0,
				"'%s' and '%s' ran on other kernels: pool the "
				"boots of one kernel",
				what[0], what[i]);
			return NULL;
		}
		/* --pool has no --force */
		if (i && mp_report_alike(docs[0], docs[i], "", err))
			return NULL;
		if (json_is_false(json_object_get(docs[i], "complete")))
			complete = false;
	}
	pool = json_deep_copy(docs[0]);
	if (!pool || json_object_set_new(pool, "boots", json_integer(n)))
		goto nomem;
	if (!complete &&
	    json_object_set_new(pool, "complete", json_boolean(false)))
		goto nomem;
	json_array_foreach(json_object_get(pool, "scenarios"), i, sc) {
		/* made again from every boot's, see pool_status() */
		if (json_object_set_new(sc, "status", json_string("ok")))
			goto nomem;
		json_object_del(sc, "reason");
		runs = pool_runs(sc,
				 json_string_value(json_object_get(sc, "name")),
				 docs, what, n, err);
		if (!runs)
			goto fail;
		if (json_object_set_new(sc, "runs", runs))
			goto nomem;
		json_object_del(sc, "metrics");
	}
	return pool;
nomem:
	mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cannot pool the reports");
fail:
	json_decref(pool);
	return NULL;
}
