/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reports: the metrics a report keeps per scenario, their summaries over
 * repeated runs, and the comparison of two reports.
 *
 * A report (schema "mpctl-report") holds scenarios; each scenario holds
 * the documents of its runs ("runs", as "mpctl stress --json" writes them)
 * and, per metric, a summary of the samples taken from those runs
 * ("metrics": {"<name>": {"median", "min", "max", "spread_pct", "n",
 * "samples"[, "boot_medians"]}}). Comparison works on the summaries,
 * which mp_report_resummarize() makes again from the runs (and refuses
 * a document whose summaries are not its runs'). Nothing here prints.
 */
#ifndef MP_REPORT_H
#define MP_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "mp_err.h"

#define MP_REPORT_SCHEMA	  "mpctl-report"
#define MP_REPORT_SCHEMA_VERSION  1
#define MP_COMPARE_SCHEMA	  "mpctl-report-compare"
#define MP_COMPARE_SCHEMA_VERSION 2
#define MP_NOISE_SCHEMA		  "mpctl-noise-profile"
#define MP_NOISE_SCHEMA_VERSION	  1
/* the widest spread a noise profile may give, percent of the median */
#define MP_NOISE_MAX_PCT 1000
/* one-sided significance level of a verdict unless told otherwise */
#define MP_COMPARE_ALPHA 0.05

enum mp_better {
	MP_BETTER_LOWER = 0,
	MP_BETTER_HIGHER,
};

struct mp_metric {
	const char *name; /* key in a scenario's "metrics" */
	/* where a run document holds it: dotted paths, first one found */
	const char *paths[4];
	enum mp_better better;
	double min_effect_pct; /* default minimum effect, % of the base */
	double one_boot_pct;   /* the same when the base is one boot */
	double min_delta;      /* absolute change below which it is noise */
	const char *unit;      /* "ns", "bytes", "count", "ratio" */
	const char *help;
	/*
	 * Shown, never judged (verdict "info"): a count that moves with the
	 * size of each request rather than with the outcome
	 */
	bool info;
	/* an outcome: too few runs for a verdict on it fails the gate */
	bool headline;
	/*
	 * The count it is measured per (a latency per request, per event):
	 * NEW without a metric that BASE has, where that count is 0 in
	 * every run of NEW, stopped doing what BASE did. That is a
	 * regression (rule "none"), not missing data
	 */
	const char *per;
	/*
	 * A reclaim counter's growth over the run (info too): --compare
	 * names the counters that moved most beside each verdict
	 */
	bool counter;
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
 * the caller, e.g. listen latency) are kept. When the runs carry a "boot"
 * number (reports of several boots pooled, as compare-kernels.sh pools
 * them) and there are two boots or more, the summary also holds
 * "boot_medians": the median of each boot's runs, in boot order.
 */
int mp_report_summarize(json_t *scenario);

/*
 * Make every scenario's "metrics" again from its "runs", as
 * mp_report_summarize() does, and refuse a document whose summaries say
 * otherwise: a metric whose median, samples or boot medians are not its
 * runs'. Summaries edited by hand or pooled by a script that kept the
 * old ones would else be judged instead of the runs. A summary no run
 * gives (an older mpctl's table took other paths) is dropped: only what
 * the runs hold is compared. 0 (the metrics replaced), or -1 with err
 * (MP_EXIT_DATAERR) naming @what, the scenario and the metric.
 */
int mp_report_resummarize(json_t *doc, const char *what, struct mp_err *err);

struct mp_compare_opts {
	double min_effect_pct; /* < 0: each metric's default */
	double alpha;	       /* one-sided significance level, 0 < a < 1 */
	/*
	 * A noise profile (mp_noise_check(), kernel-patch/scripts/
	 * noise-profile.sh), or NULL: per scenario and metric, how far apart
	 * boots of one kernel landed, in percent; a difference within it is
	 * no verdict
	 */
	const json_t *noise;
};

/*
 * Whether two reports measured the same thing: the settings and each
 * scenario's run parameters that shape the numbers (limit, duration,
 * chunk, threads, overcommit, swap, the backend asked for and the one
 * that ran, emulation, hog, strategy, the shrinker's mode). 0, or -1 with err (MP_EXIT_DATAERR) naming every
 * difference ("scenario: key BASE -> NEW; ..."), after @hint (the
 * caller's way around it, " (--force ...)", or "").
 */
int mp_report_alike(const json_t *base, const json_t *cur, const char *hint,
		    struct mp_err *err);

/*
 * Compare two reports. Returns the comparison document (schema
 * "mpctl-report-compare" version 2) with "rows": one per metric present
 * in both, "regressions" and "improvements": how many rows have the
 * verdict "worse" and "better". NULL with err set when a document is not
 * a report of this schema version (status 1).
 *
 * The samples of a metric are the runs of the scenario (of all boots,
 * when several were pooled). A row is "worse" only when all hold:
 *  - the rank-sum test (Mann-Whitney U, exact) says NEW's runs are worse
 *    than BASE's at the significance level alpha (one-sided p <= alpha);
 *  - when BASE has per-boot medians (B >= 2 boots): NEW's median lies
 *    beyond the one-sided 1 - alpha prediction interval of one more
 *    boot's median, mean +- t(1 - alpha, B - 1) * sd * sqrt(1 + 1/B):
 *    runs of one boot share that boot's speed, so the run-level test
 *    alone would call a boot-to-boot difference a change;
 *  - the Hodges-Lehmann shift (median of the pairwise differences
 *    new - base) reaches the minimum effect: the larger of the metric's
 *    min_delta and min_effect_pct of |base median| (one_boot_pct, much
 *    wider, when BASE is a single boot: then nothing in it says how much
 *    two boots differ; o->min_effect_pct >= 0 replaces both), and the
 *    spread o->noise gives the scenario's metric (in percent of |base
 *    median|): boots of one kernel already landed that far apart;
 * "better" is the mirror image; "unsure" when the samples are too few
 * for any p <= alpha (never counted); else "same". Each row also gives
 * the minimum detectable effect ("mde"): the largest of the rank test's
 * smallest detectable shift for NEW's number of runs spread as BASE's,
 * the prediction interval's half-width and the minimum effect; null
 * when the test cannot reach alpha.
 *
 * Gates that no rank test can talk away: an OOM kill in NEW where every
 * BASE run had none makes the oom_kills row "worse" (rule "oom"); a
 * scenario that ran in BASE and is absent, skipped or failed in NEW is
 * listed in "missing_scenarios", a metric of such a scenario that NEW
 * lacks in "missing_metrics" ("scenario/metric"), a metric both have
 * without samples to judge (or memory ran out) in "unusable_metrics";
 * judged rows that cannot
 * reach a verdict on a headline metric are counted in "unsure". Metrics
 * marked info get the
 * verdict "info".
 */
json_t *mp_report_compare(const json_t *base, const json_t *cur,
			  const struct mp_compare_opts *o, struct mp_err *err);

/*
 * Can DOC be compared? 0, or -1 with err (status MP_EXIT_DATAERR) when it
 * has no scenario, no scenario with the status "ok", or no metric in
 * those.
 */
int mp_report_usable(const json_t *doc, const char *what, struct mp_err *err);

/*
 * Check a loaded report: 0, or -1 with a message naming what is wrong
 * (status 1 for another schema, MP_EXIT_DATAERR for a scenario without
 * a name or two of one name).
 */
int mp_report_check(const json_t *doc, const char *what, struct mp_err *err);

/*
 * Whether @doc is a noise profile this mpctl reads: schema
 * "mpctl-noise-profile" version 1 and a "noise" object of scenarios, each
 * an object of metrics of the table with a spread in percent (a number
 * from 0 to MP_NOISE_MAX_PCT: beyond, the metric cannot be judged at
 * all, leave it out). 0, or -1 with err (MP_EXIT_DATAERR) naming @what
 * and the first problem. The scenario names are the caller's to check.
 */
int mp_noise_check(const json_t *doc, const char *what, struct mp_err *err);

/* Load a JSON document from a file ("-" is stdin). */
json_t *mp_json_load_file(const char *path, struct mp_err *err);

/* Scenario by name in a report, or NULL. */
json_t *mp_report_scenario(const json_t *doc, const char *name);

/*
 * Reports of one kernel, one per boot, as one report (mpctl report
 * --pool): the first report's document with "boots": @n and, for every
 * scenario, the runs of every report, each tagged "boot" (1 to @n), in
 * place of the summaries (mp_report_summarize() makes them again). A
 * scenario that was not "ok" in a boot takes that boot's status and
 * reason; the pool is "complete" only if every report is. The reports
 * must have the same scenarios and have measured the same thing
 * (mp_report_alike()), and none may be pooled already. A new document,
 * or NULL with err (MP_EXIT_DATAERR naming the report of @what at fault).
 */
json_t *mp_report_pool(json_t *const *docs, const char *const *what, size_t n,
		       struct mp_err *err);

#endif
