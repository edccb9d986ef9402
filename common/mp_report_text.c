// SPDX-License-Identifier: GPL-2.0
/*
 * The tables of a report and of a comparison; see mp_report_text.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_parse.h"
#include "mp_report.h"
#include "mp_report_text.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* a string member for printing: "?" when absent */
static const char *str(const json_t *obj, const char *path)
{
	const char *s = json_string_value(mp_json_path(obj, path));

	return s ? s : "?";
}

const char *mp_fmt_metric(const char *unit, double v, char *buf, int len)
{
	/* beyond uint64_t a cast is undefined: the number as it is */
	if (!unit || !isfinite(v) || fabs(v) >= 1.8e19) {
		snprintf(buf, len, "%g", v);
		return buf;
	}
	if (!strcmp(unit, "ns"))
		return mp_fmt_duration(v < 0 ? 0 : (uint64_t)v, buf, len);
	/* PSI totals: microseconds, read as times */
	if (!strcmp(unit, "us"))
		return mp_fmt_metric("ns", v * 1000, buf, len);
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

	mp_fmt_metric(unit, fabs(v), tmp, sizeof(tmp));
	snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", tmp);
	return buf;
}

/* a number member of @obj in @unit, "-" when it is not a number */
static const char *fmt_member(const json_t *obj, const char *key,
			      const char *unit, char *buf, int len)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		return "-";
	return mp_fmt_metric(unit, json_number_value(v), buf, len);
}

/*
 * A number member as the literal printf format @fmt gives it into the
 * array @buf, "-" when it is not a number
 */
#define FMT_NUM(obj, key, fmt, buf)                                       \
	(json_is_number(json_object_get(obj, key)) ?                      \
		 (snprintf(buf, sizeof(buf), fmt,                         \
			   json_number_value(json_object_get(obj, key))), \
		  (const char *)buf) :                                    \
		 "-")

/* end a table: written and freed; @t NULL is ENOMEM */
static int table_out(FILE *f, struct mp_table *t, enum mp_table_format fmt,
		     const char *indent, struct mp_err *err)
{
	int ret;

	if (!t)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "table");
	/* markdown: a table is a block of its own */
	if (fmt == MP_TABLE_MARKDOWN)
		fputc('\n', f);
	ret = mp_table_write(f, t, fmt, indent, err);
	if (!ret && fmt == MP_TABLE_MARKDOWN)
		fputc('\n', f);
	mp_table_free(t);
	return ret;
}

static struct mp_table *system_table(const json_t *doc)
{
	static const struct mp_table_col cols[] = { { "system" }, { "" } };
	json_t *sys = json_object_get(doc, "system"), *b, *opts, *v;
	struct mp_table *t = mp_table_new(cols, ARRAY_SIZE(cols));
	char line[2048], s1[32], s2[32];
	const char *key, *err_s;
	size_t i, used;

	if (!t)
		return NULL;
	mp_table_no_header(t);
	snprintf(line, sizeof(line), "%s (%s)", str(sys, "kernel_release"),
		 str(sys, "machine"));
	mp_table_row(t, (const char *[]){ "kernel", line });
	opts = mp_json_path(sys, "kernel_config.options");
	used = 0;
	line[0] = '\0';
	json_object_foreach(opts, key, v) {
		const char *val = json_string_value(v), *name = key;

		/* a recorded document may hold any key: no prefix assumed */
		if (!strncmp(name, "CONFIG_", 7) && name[7])
			name += 7;
		if (used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 "%s%s=%s", used ? " " : "", name,
					 val ? val : "?");
	}
	/* a config.gz cut short: what it did not list is unknown */
	err_s = json_string_value(mp_json_path(sys, "kernel_config.error"));
	if (used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, "%s%s%s%s",
			 json_object_size(opts) ? "" : "unknown",
			 err_s ? " (incomplete: " : "", err_s ? err_s : "",
			 err_s ? ")" : "");
	mp_table_row(t, (const char *[]){ "config", line });
	snprintf(line, sizeof(line), "%s, swap %s, %lld cpus",
		 mp_fmt_size(json_integer_value(
				     json_object_get(sys, "mem_total_bytes")),
			     s1, sizeof(s1)),
		 mp_fmt_size(json_integer_value(
				     json_object_get(sys, "swap_total_bytes")),
			     s2, sizeof(s2)),
		 (long long)json_integer_value(
			 json_object_get(sys, "nr_cpus")));
	mp_table_row(t, (const char *[]){ "memory", line });
	mp_table_row(t, (const char *[]){ "cgroups", str(sys, "cgroup_mode") });
	used = 0;
	line[0] = '\0';
	json_array_foreach(json_object_get(sys, "backends"), i, b)
		if (used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 "%s%s%s", used ? " " : "",
					 json_string_value(
						 json_object_get(b, "name")),
					 json_is_true(
						 json_object_get(b,
								 "present")) ?
						 "" :
						 " (absent)");
	mp_table_row(t, (const char *[]){ "backends", line });
	return t;
}

struct mp_table *mp_report_scenario_table(const json_t *sc)
{
	static const struct mp_table_col cols[] = {
		{ "metric" },
		{ "median", MP_TABLE_RIGHT },
		{ "min", MP_TABLE_RIGHT },
		{ "max", MP_TABLE_RIGHT },
		{ "spread", MP_TABLE_RIGHT },
		{ "n", MP_TABLE_RIGHT },
	};
	json_t *ms = json_object_get(sc, "metrics");
	struct mp_table *t = mp_table_new(cols, ARRAY_SIZE(cols));
	char a[32], b[32], c[32], d[32], n[32];
	size_t i;

	for (i = 0; t && i < mp_nr_metrics; i++) {
		const struct mp_metric *m = &mp_metrics[i];
		json_t *s = json_object_get(ms, m->name);

		if (!s)
			continue;
		mp_table_row(t, (const char *[]){
					m->name,
					fmt_member(s, "median", m->unit, a,
						   sizeof(a)),
					fmt_member(s, "min", m->unit, b,
						   sizeof(b)),
					fmt_member(s, "max", m->unit, c,
						   sizeof(c)),
					FMT_NUM(s, "spread_pct", "%.1f%%", d),
					FMT_NUM(s, "n", "%.0f", n),
				});
	}
	return t;
}

static int write_scenario(FILE *f, const json_t *sc, enum mp_table_format fmt,
			  struct mp_err *err)
{
	bool md = fmt == MP_TABLE_MARKDOWN;

	fprintf(f, "\n%sscenario %s: %s (%zu runs, %s)\n", md ? "### " : "",
		str(sc, "name"), str(sc, "description"),
		json_array_size(json_object_get(sc, "runs")),
		str(sc, "status"));
	if (json_object_get(sc, "reason"))
		fprintf(f, "%s%s\n", md ? "\n" : "  ",
			json_string_value(json_object_get(sc, "reason")));
	if (!json_object_size(json_object_get(sc, "metrics")))
		return 0;
	return table_out(f, mp_report_scenario_table(sc), fmt, "  ", err);
}

/* the strategy table's columns: metrics of the strategy-* scenarios */
static const struct {
	const char *metric, *head;
} strategy_cols[] = {
	{ "oom_kills", "oom" },
	{ "swap_growth_bytes", "swap" },
	{ "cache_hit_ratio", "hit" },
	{ "cache_reads_per_s", "reads/s" },
	{ "cache_misses", "misses" },
	{ "usage_avg_bytes", "usage avg" },
	{ "pressure_some_us", "psi some" },
	{ "pressure_full_us", "psi full" },
	{ "alloc_latency_p99_ns", "alloc p99" },
};
#define NR_STRATEGY_COLS ARRAY_SIZE(strategy_cols)

static bool strategy_median(const json_t *sc, size_t c, double *v)
{
	json_t *m = mp_json_path(json_object_get(sc, "metrics"),
				 strategy_cols[c].metric);

	if (!json_is_number(json_object_get(m, "median")))
		return false;
	*v = json_number_value(json_object_get(m, "median"));
	return true;
}

static bool is_strategy(const json_t *sc)
{
	return !strncmp(str(sc, "name"), "strategy-", 9);
}

/* ranked: ran, and not cut short by the OOM killer */
static bool ranked(const json_t *sc)
{
	double v;

	return !strcmp(str(sc, "status"), "ok") &&
	       !(strategy_median(sc, 0, &v) && v > 0);
}

/*
 * The best of each column by the metric's direction, among the ranked
 * strategies: @n[c] is how many have the column (a star marks the best
 * of several, never of one)
 */
static void strategy_best(const json_t *scs, double *best, size_t *n)
{
	const json_t *sc;
	size_t i, c;
	double v;

	json_array_foreach(scs, i, sc) {
		if (!is_strategy(sc) || !ranked(sc))
			continue;
		for (c = 0; c < NR_STRATEGY_COLS; c++) {
			const struct mp_metric *m =
				mp_metric_find(strategy_cols[c].metric);

			if (!strategy_median(sc, c, &v))
				continue;
			if (!n[c] ||
			    (m->better == MP_BETTER_HIGHER ? v > best[c] :
							     v < best[c]))
				best[c] = v;
			n[c]++;
		}
	}
}

/*
 * One table: the strategies against the metrics, medians of the runs, the
 * best of each column marked '*' (by the metric's direction) when two or
 * more strategies are ranked in it; skipped strategies with their reason.
 */
static int write_strategies(FILE *f, const json_t *doc,
			    enum mp_table_format fmt, struct mp_err *err)
{
	json_t *scs = json_object_get(doc, "scenarios"), *sc;
	struct mp_table_col cols[NR_STRATEGY_COLS + 1] = { { "strategy" } };
	double best[NR_STRATEGY_COLS], v;
	size_t n[NR_STRATEGY_COLS] = { 0 }, nr = 0;
	char buf[NR_STRATEGY_COLS][40], why[512];
	const char *cells[NR_STRATEGY_COLS + 1];
	struct mp_table *t;
	size_t i, c;

	json_array_foreach(scs, i, sc)
		nr += is_strategy(sc);
	if (!nr)
		return 0;
	strategy_best(scs, best, n);
	for (c = 0; c < NR_STRATEGY_COLS; c++)
		cols[c + 1] = (struct mp_table_col){ strategy_cols[c].head,
						     MP_TABLE_RIGHT };
	t = mp_table_new(cols, NR_STRATEGY_COLS + 1);
	json_array_foreach(scs, i, sc) {
		if (!t || !is_strategy(sc))
			continue;
		if (strcmp(str(sc, "status"), "ok")) {
			snprintf(why, sizeof(why), "%s: %s", str(sc, "status"),
				 str(sc, "reason"));
			mp_table_note(t, str(sc, "name") + 9, why);
			continue;
		}
		cells[0] = str(sc, "name") + 9;
		for (c = 0; c < NR_STRATEGY_COLS; c++) {
			const struct mp_metric *m =
				mp_metric_find(strategy_cols[c].metric);
			char val[32];

			cells[c + 1] = "-";
			if (!strategy_median(sc, c, &v))
				continue;
			snprintf(buf[c], sizeof(buf[c]), "%s%s",
				 n[c] > 1 && v == best[c] ? "*" : "",
				 mp_fmt_metric(m->unit, v, val, sizeof(val)));
			cells[c + 1] = buf[c];
		}
		mp_table_row(t, cells);
	}
	fprintf(f,
		"\n%sstrategies (medians; * the best of two or more in a "
		"column, OOM-killed runs not ranked)\n",
		fmt == MP_TABLE_MARKDOWN ? "### " : "");
	return table_out(f, t, fmt, "  ", err);
}

int mp_report_write_tables(FILE *f, const json_t *doc, enum mp_table_format fmt,
			   struct mp_err *err)
{
	json_t *sc;
	size_t i;

	fprintf(f, "%smpctl %s report, %s\n",
		fmt == MP_TABLE_MARKDOWN ? "## " : "",
		str(doc, "mpctl_version"), str(doc, "created"));
	if (table_out(f, system_table(doc), fmt, "", err) ||
	    write_strategies(f, doc, fmt, err))
		return -1;
	json_array_foreach(json_object_get(doc, "scenarios"), i, sc)
		if (write_scenario(f, sc, fmt, err))
			return -1;
	if (ferror(f))
		return mp_errf(err, MP_EXIT_FAILURE, errno ? errno : EIO,
			       "write error");
	return 0;
}

/* why a row was judged by a rule rather than by the test */
static bool write_rule(FILE *f, const json_t *row, const char *li)
{
	const char *rule = json_string_value(json_object_get(row, "rule"));
	const char *sc = json_string_value(json_object_get(row, "scenario"));

	if (!rule)
		return false;
	if (!strcmp(rule, "oom"))
		return fprintf(f,
			       "%s%s: an OOM kill in NEW where no BASE run had one is "
			       "a regression, whatever the test says\n",
			       li, sc) > 0;
	if (!strcmp(rule, "none") &&
	    !strcmp(json_string_value(json_object_get(row, "verdict")),
		    "worse"))
		return fprintf(f,
			       "%s%s: %s not measured in NEW, which had no %s in any "
			       "run: BASE did what NEW no longer does\n",
			       li, sc,
			       json_string_value(
				       json_object_get(row, "metric")),
			       json_string_value(json_object_get(row, "per"))) >
		       0;
	return false;
}

/* beside a verdict, the reclaim counters that moved most: a note row */
static void counters_note(struct mp_table *t, const json_t *counters)
{
	char line[1024];
	const json_t *c;
	size_t i, used;

	if (!json_array_size(counters))
		return;
	used = snprintf(line, sizeof(line), "counters that moved most:");
	json_array_foreach(counters, i, c) {
		json_t *pct = json_object_get(c, "delta_pct");

		if (used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 "%s %s %g -> %g", i ? "," : "",
					 json_string_value(
						 json_object_get(c, "metric")),
					 json_number_value(
						 json_object_get(c, "base")),
					 json_number_value(
						 json_object_get(c, "new")));
		if (json_is_number(pct) && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 " (%+.1f%%)", json_number_value(pct));
	}
	mp_table_note(t, "", line);
}

static struct mp_table *compare_table(const json_t *cmp)
{
	static const struct mp_table_col cols[] = {
		{ "scenario" },
		{ "metric" },
		{ "better" },
		{ "base", MP_TABLE_RIGHT },
		{ "new", MP_TABLE_RIGHT },
		{ "delta", MP_TABLE_RIGHT },
		{ "delta%", MP_TABLE_RIGHT },
		{ "p", MP_TABLE_RIGHT },
		{ "mde%", MP_TABLE_RIGHT },
		{ "verdict" },
	};
	struct mp_table *t = mp_table_new(cols, ARRAY_SIZE(cols));
	char a[32], b[32], c[32], d[32], p[32], e[32];
	json_t *row;
	size_t i;

	json_array_foreach(json_object_get(cmp, "rows"), i, row) {
		const char *unit =
			json_string_value(json_object_get(row, "unit"));
		const char *v =
			json_string_value(json_object_get(row, "verdict"));
		json_t *delta = json_object_get(row, "delta");

		if (!t)
			break;
		mp_table_row(t,
			     (const char *[]){
				     str(row, "scenario"),
				     str(row, "metric"),
				     str(row, "better"),
				     fmt_member(row, "base", unit, a,
						sizeof(a)),
				     fmt_member(row, "new", unit, b, sizeof(b)),
				     json_is_number(delta) ?
					     fmt_delta(unit,
						       json_number_value(delta),
						       c, sizeof(c)) :
					     "-",
				     FMT_NUM(row, "delta_pct", "%+.1f%%", d),
				     FMT_NUM(row, "p_value", "%.3g", p),
				     FMT_NUM(row, "mde_pct", "%.1f%%", e),
				     v && !strcmp(v, "worse") ? "WORSE" : v,
			     });
		counters_note(t, json_object_get(row, "counters"));
	}
	return t;
}

int mp_compare_write(FILE *f, const json_t *cmp, enum mp_table_format fmt,
		     struct mp_err *err)
{
	bool md = fmt == MP_TABLE_MARKDOWN;
	const char *li = md ? "- " : "";
	bool list = false;
	json_t *row, *ms;
	size_t i;

	/* the regressions first, one line each, as LKP words them */
	json_array_foreach(json_object_get(cmp, "headline"), i, row)
		fprintf(f, "%s%s\n", li,
			json_string_value(json_object_get(row, "text")));
	if (json_array_size(json_object_get(cmp, "headline")))
		fprintf(f, "\n");
	fprintf(f, "base %s, new %s\n", str(cmp, "base_kernel"),
		str(cmp, "new_kernel"));
	if (table_out(f, compare_table(cmp), fmt, "", err))
		return -1;
	ms = json_object_get(cmp, "missing_scenarios");
	json_array_foreach(ms, i, row)
		list |= fprintf(f, "%sscenario '%s' ran in BASE, not in NEW\n",
				li, json_string_value(row)) > 0;
	ms = json_object_get(cmp, "missing_metrics");
	json_array_foreach(ms, i, row)
		list |= fprintf(f, "%smetric '%s' is in BASE, not in NEW\n", li,
				json_string_value(row)) > 0;
	json_array_foreach(json_object_get(cmp, "rows"), i, row)
		list |= write_rule(f, row, li);
	/* markdown: the table ended with a blank line, a list needs one */
	fprintf(f,
		"%s(medians; p: one-sided rank-sum test, a verdict needs p <= "
		"%g, a new median beyond the base's boot-to-boot interval, "
		"and beyond its every run by the minimum effect; mde: the "
		"smallest change this base could detect)\n",
		md && list ? "\n" : "",
		json_number_value(json_object_get(cmp, "alpha")));
	fprintf(f, "%s%lld regression(s), %lld improvement(s), %lld unsure\n",
		md ? "\n" : "",
		(long long)json_integer_value(
			json_object_get(cmp, "regressions")),
		(long long)json_integer_value(
			json_object_get(cmp, "improvements")),
		(long long)json_integer_value(json_object_get(cmp, "unsure")));
	if (ferror(f))
		return mp_errf(err, MP_EXIT_FAILURE, errno ? errno : EIO,
			       "write error");
	return 0;
}

int mp_report_markdown(FILE *f, const json_t *report, struct mp_err *err)
{
	return mp_report_write_tables(f, report, MP_TABLE_MARKDOWN, err);
}

int mp_compare_markdown(FILE *f, const json_t *cmp, struct mp_err *err)
{
	return mp_compare_write(f, cmp, MP_TABLE_MARKDOWN, err);
}
