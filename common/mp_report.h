/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reports: the metrics a report keeps per scenario, their summaries over
 * repeated runs, and the comparison of two reports.
 *
 * A report (schema "mpctl-report") holds scenarios; each scenario holds
 * the documents of its runs ("runs", as "mpctl stress --json" writes them)
 * and, per metric, a summary of the samples taken from those runs
 * ("metrics": {"<name>": {"median", "min", "max", "spread_pct", "n",
 * "samples"}}). Comparison works on the summaries only, so it needs
 * nothing but the two documents. Nothing here prints.
 */
#ifndef MP_REPORT_H
#define MP_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "mp_err.h"

#define MP_REPORT_SCHEMA		"mpctl-report"
#define MP_REPORT_SCHEMA_VERSION	1
#define MP_COMPARE_SCHEMA		"mpctl-report-compare"
#define MP_COMPARE_SCHEMA_VERSION	1

enum mp_better {
	MP_BETTER_LOWER = 0,
	MP_BETTER_HIGHER,
};

struct mp_metric {
	const char *name;	/* key in a scenario's "metrics" */
	/* where a run document holds it: dotted paths, first one found */
	const char *paths[4];
	enum mp_better better;
	double threshold_pct;	/* default regression threshold */
	double min_delta;	/* absolute change below which it is noise */
	const char *unit;	/* "ns", "bytes", "count", "ratio" */
	const char *help;
};

extern const struct mp_metric mp_metrics[];
extern const size_t mp_nr_metrics;

const struct mp_metric *mp_metric_find(const char *name);
const char *mp_better_name(enum mp_better b);

/* The value at a dotted path ("latency.p99_ns"), or NULL. */
json_t *mp_json_path(const json_t *doc, const char *path);
/* A number at a path: 0 and *v set, or -1 if missing or not a number. */
int mp_json_path_num(const json_t *doc, const char *path, double *v);

/*
 * Summary of n samples: {"median", "min", "max", "spread_pct", "n",
 * "samples"}; spread_pct is (max - min) / |median| * 100 (0 when the
 * median is 0 and all samples are equal, null when undefined).
 */
json_t *mp_summary(const double *v, size_t n);

/*
 * Fill scenario["metrics"] from scenario["runs"]: for each metric of the
 * table found in at least one run, a summary of the runs that have it.
 * Metrics a run already computed under "metrics" in the scenario (added by
 * the caller, e.g. listen latency) are kept.
 */
int mp_report_summarize(json_t *scenario);

/*
 * Compare two reports. threshold_pct < 0 keeps each metric's default.
 * Returns the comparison document (schema "mpctl-report-compare") with
 * "rows": one per metric present in both, and "regressions": how many
 * rows have the verdict "worse". NULL with err set when a document is not
 * a report of this schema version (status 1).
 *
 * A row is "worse" only when all of these hold:
 *  - the change of the medians goes the wrong way for the metric;
 *  - the gap between the sample ranges, from the best new sample to the
 *    worst base sample, exceeds both the metric's min_delta and the
 *    threshold (percent of |base median|): run-to-run noise seen in
 *    either report is taken out of the change before it is judged;
 *  - both summaries have at least 2 samples; with fewer the verdict is
 *    "unsure", never counted as a regression.
 * "better" is the mirror image; everything else is "same". A report
 * compared with itself is never worse (its gap is negative or zero).
 */
json_t *mp_report_compare(const json_t *base, const json_t *cur,
			  double threshold_pct, struct mp_err *err);

/* Check a loaded report: 0, or -1 with a message naming what is wrong. */
int mp_report_check(const json_t *doc, const char *what, struct mp_err *err);

/* Load a JSON document from a file ("-" is stdin). */
json_t *mp_json_load_file(const char *path, struct mp_err *err);

/* Scenario by name in a report, or NULL. */
json_t *mp_report_scenario(const json_t *doc, const char *name);

#endif
