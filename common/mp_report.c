// SPDX-License-Identifier: GPL-2.0
/*
 * Report metrics, summaries and comparison; see mp_report.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"
#include "mp_report.h"

/*
 * The metric table: documented in mpctl-report(1), keep the two in step.
 * Paths are tried in order in each run document.
 */
const struct mp_metric mp_metrics[] = {
	{ "oom_kills", { "oom_kills" }, MP_BETTER_LOWER, 0, 0, "count",
	  "processes the OOM killer killed in the run's cgroup" },
	{ "latency_p50_ns", { "reclaim_latency.p50_ns", "latency.p50_ns" },
	  MP_BETTER_LOWER, 100, 500000, "ns",
	  "median latency: request read to chunks freed (stress), or "
	  "wake-up to line read (listen)" },
	{ "latency_p99_ns", { "reclaim_latency.p99_ns", "latency.p99_ns" },
	  MP_BETTER_LOWER, 200, 2000000, "ns", "99th percentile latency" },
	{ "latency_max_ns", { "reclaim_latency.max_ns", "latency.max_ns" },
	  MP_BETTER_LOWER, 400, 10000000, "ns", "worst latency" },
	{ "peak_usage_ratio", { "peak_usage_ratio" }, MP_BETTER_LOWER, 10,
	  0.02, "ratio", "peak usage / limit (computed)" },
	{ "chunks_freed", { "chunks_freed" }, MP_BETTER_HIGHER, 50, 1,
	  "count", "chunks the shrinker had freed on request" },
	{ "reclaim_requests", { "reclaim_requests" }, MP_BETTER_HIGHER, 50, 1,
	  "count", "reclaim requests the program received" },
	{ "events_total", { "events_total" }, MP_BETTER_HIGHER, 50, 1,
	  "count", "pressure events, low + medium + critical (computed)" },
	{ "first_event_ns", { "first_event_ns" }, MP_BETTER_LOWER, 100,
	  100000000, "ns", "time from the start to the first event (listen)" },
	{ "alloc_bytes_per_s", { "alloc_throughput_bytes_per_s" },
	  MP_BETTER_HIGHER, 50, 1048576, "bytes/s",
	  "allocation throughput of the stress engine" },
	{ "swap_growth_bytes", { "swap_growth_bytes" }, MP_BETTER_LOWER, 50,
	  16777216, "bytes", "swap used at the end minus at the start" },
	{ "hog_bogo_ops", { "hog.bogo_ops" }, MP_BETTER_HIGHER, 50, 100,
	  "count", "the stress-ng hog's bogo operations" },
};

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
				    json_real(round(spread / fabs(med) *
						    1000) / 10));
	else
		mp_json_set(s, "spread_pct", spread == 0 ? json_real(0) :
			    NULL);
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

static int run_metric(const json_t *run, const struct mp_metric *m,
		      double *v)
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

int mp_report_summarize(json_t *scenario)
{
	json_t *runs = json_object_get(scenario, "runs");
	json_t *metrics = json_object_get(scenario, "metrics");
	size_t i, j, n, nruns;
	double *v;

	if (!json_is_array(runs))
		return -1;
	if (!json_is_object(metrics)) {
		metrics = json_object();
		json_object_set_new(scenario, "metrics", metrics);
	}
	nruns = json_array_size(runs);
	v = calloc(nruns + 1, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < mp_nr_metrics; i++) {
		const struct mp_metric *m = &mp_metrics[i];

		if (json_object_get(metrics, m->name))
			continue;
		for (j = n = 0; j < nruns; j++)
			if (!run_metric(json_array_get(runs, j), m, &v[n]))
				n++;
		if (n)
			json_object_set_new(metrics, m->name,
					    mp_summary(v, n));
	}
	free(v);
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

int mp_report_check(const json_t *doc, const char *what, struct mp_err *err)
{
	json_t *s = json_object_get(doc, "schema");
	const char *name = json_string_value(json_object_get(s, "name"));
	json_t *ver = json_object_get(s, "version");

	if (!json_is_object(doc) || !name)
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "'%s' is not an mpctl document (no schema)",
			       what);
	if (strcmp(name, MP_REPORT_SCHEMA))
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "'%s' is a '%s' document, not '%s'", what,
			       name, MP_REPORT_SCHEMA);
	if (!json_is_integer(ver) ||
	    json_integer_value(ver) != MP_REPORT_SCHEMA_VERSION)
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "'%s' has schema version %lld, this mpctl "
			       "reads version %d only", what,
			       json_is_integer(ver) ?
			       (long long)json_integer_value(ver) : -1LL,
			       MP_REPORT_SCHEMA_VERSION);
	if (!json_is_array(json_object_get(doc, "scenarios")))
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "'%s' has no \"scenarios\" array", what);
	return 0;
}

json_t *mp_json_load_file(const char *path, struct mp_err *err)
{
	json_error_t jerr;
	json_t *doc;
	FILE *f;

	if (!strcmp(path, "-")) {
		doc = json_loadf(stdin, 0, &jerr);
	} else {
		f = fopen(path, "r");
		if (!f) {
			mp_errf(err, -1, errno, "cannot open '%s'", path);
			return NULL;
		}
		doc = json_loadf(f, 0, &jerr);
		fclose(f);
	}
	if (!doc)
		mp_errf(err, MP_EXIT_FAILURE, 0,
			"cannot parse '%s': line %d: %s", path, jerr.line,
			jerr.text);
	return doc;
}

/* worse than base in the metric's direction by delta (> 0 means worse) */
static double badness(const struct mp_metric *m, double base, double cur)
{
	return m->better == MP_BETTER_LOWER ? cur - base : base - cur;
}

static double spread_of(const json_t *s)
{
	double v;

	return mp_json_path_num(s, "spread_pct", &v) ? 0 : v;
}

static double count_of(const json_t *s)
{
	double v;

	return mp_json_path_num(s, "n", &v) ? 1 : v;
}

static json_t *compare_row(const char *scenario, const struct mp_metric *m,
			   const json_t *bs, const json_t *cs,
			   double threshold)
{
	double bmed, cmed, bmin, bmax, cmin, cmax, bad, pct = NAN;
	double noise, allowed, gap_worse, gap_better;
	bool enough;
	const char *verdict = "same";
	json_t *row;

	if (mp_json_path_num(bs, "median", &bmed) ||
	    mp_json_path_num(cs, "median", &cmed) ||
	    mp_json_path_num(bs, "min", &bmin) ||
	    mp_json_path_num(bs, "max", &bmax) ||
	    mp_json_path_num(cs, "min", &cmin) ||
	    mp_json_path_num(cs, "max", &cmax))
		return NULL;
	bad = badness(m, bmed, cmed);
	if (bmed != 0)
		pct = (cmed - bmed) / fabs(bmed) * 100;
	/* the noise each report saw in its own repeated runs */
	noise = fmax(spread_of(bs), spread_of(cs));
	/*
	 * The change must clear the threshold between the closest samples
	 * of the two reports, not only between the medians: the gap between
	 * the sample ranges (negative when they overlap) is what the noise
	 * leaves of the change.
	 */
	if (m->better == MP_BETTER_LOWER) {
		gap_worse = cmin - bmax;
		gap_better = bmin - cmax;
	} else {
		gap_worse = bmin - cmax;
		gap_better = cmin - bmax;
	}
	allowed = fmax(m->min_delta, threshold / 100 * fabs(bmed));
	/* one sample says nothing about noise: never a verdict on it */
	enough = count_of(bs) >= 2 && count_of(cs) >= 2;
	if (bad > 0 && gap_worse > allowed)
		verdict = enough ? "worse" : "unsure";
	else if (bad < 0 && gap_better > allowed)
		verdict = enough ? "better" : "unsure";

	row = json_object();
	json_object_set_new(row, "scenario", json_string(scenario));
	json_object_set_new(row, "metric", json_string(m->name));
	json_object_set_new(row, "unit", json_string(m->unit));
	json_object_set_new(row, "better", json_string(
				    mp_better_name(m->better)));
	json_object_set_new(row, "base", num(bmed));
	json_object_set_new(row, "new", num(cmed));
	json_object_set_new(row, "delta", num(cmed - bmed));
	mp_json_set(row, "delta_pct", isnan(pct) ? NULL :
		    json_real(round(pct * 10) / 10));
	json_object_set_new(row, "threshold_pct", json_real(threshold));
	json_object_set_new(row, "noise_pct", json_real(noise));
	json_object_set_new(row, "gap", num(bad > 0 ? gap_worse :
					    gap_better));
	json_object_set_new(row, "allowed_gap", num(allowed));
	json_object_set_new(row, "base_range", json_pack("[o, o]", num(bmin),
							 num(bmax)));
	json_object_set_new(row, "new_range", json_pack("[o, o]", num(cmin),
							num(cmax)));
	json_object_set_new(row, "samples", json_pack("[o, o]",
		num(count_of(bs)), num(count_of(cs))));
	json_object_set_new(row, "verdict", json_string(verdict));
	return row;
}

json_t *mp_report_compare(const json_t *base, const json_t *cur,
			  double threshold_pct, struct mp_err *err)
{
	json_t *doc, *rows, *missing, *bsc, *sc, *csc, *row;
	size_t i, k, worse = 0, better = 0;

	if (mp_report_check(base, "BASE", err) ||
	    mp_report_check(cur, "NEW", err))
		return NULL;
	doc = mp_json_doc(MP_COMPARE_SCHEMA, MP_COMPARE_SCHEMA_VERSION);
	rows = json_array();
	missing = json_array();
	bsc = json_object_get(base, "scenarios");
	json_array_foreach(bsc, i, sc) {
		const char *name = json_string_value(json_object_get(sc,
								    "name"));
		json_t *bm = json_object_get(sc, "metrics"), *cm;

		if (!name)
			continue;
		csc = mp_report_scenario(cur, name);
		if (!csc) {
			json_array_append_new(missing, json_string(name));
			continue;
		}
		cm = json_object_get(csc, "metrics");
		for (k = 0; k < mp_nr_metrics; k++) {
			const struct mp_metric *m = &mp_metrics[k];
			json_t *bs = json_object_get(bm, m->name);
			json_t *cs = json_object_get(cm, m->name);

			if (!bs || !cs)
				continue;
			row = compare_row(name, m, bs, cs, threshold_pct < 0 ?
					  m->threshold_pct : threshold_pct);
			if (!row)
				continue;
			if (!strcmp(json_string_value(json_object_get(row,
					"verdict")), "worse"))
				worse++;
			else if (!strcmp(json_string_value(json_object_get(
					row, "verdict")), "better"))
				better++;
			json_array_append_new(rows, row);
		}
	}
	mp_json_set(doc, "base_kernel", json_deep_copy(
		mp_json_path(base, "system.kernel_release")));
	mp_json_set(doc, "new_kernel", json_deep_copy(
		mp_json_path(cur, "system.kernel_release")));
	json_object_set_new(doc, "rows", rows);
	json_object_set_new(doc, "missing_scenarios", missing);
	json_object_set_new(doc, "regressions",
			    json_integer((json_int_t)worse));
	json_object_set_new(doc, "improvements",
			    json_integer((json_int_t)better));
	return doc;
}
