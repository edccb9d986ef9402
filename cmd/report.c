// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl report: run a short standard suite and write one document;
 * compare two such documents; draw their timelines.
 *
 * The options, the files, and the tables rendered from the document; the
 * suite itself is report_suite_run() (stress/suite.h), the comparison and
 * the metrics are common/mp_report.c.
 */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "mp_json.h"
#include "mp_kcidb.h"
#include "mp_output.h"
#include "mp_parse.h"
#include "mp_report.h"
#include "mp_report_text.h"
#include "mp_svg.h"
#include "suite.h"

#define REPORT_LIST_SCHEMA	   "mpctl-report-list"
#define REPORT_LIST_SCHEMA_VERSION 1
/* --pool: reports of one kernel's boots */
#define REPORT_POOL_MAX 64

struct report_opts {
	bool json;
	bool pretty;
	bool quiet;   /* -q: errors only */
	bool verbose; /* -v: progress even with JSON on stdout */
	const char *output;
	const char *input;
	const char *svg;
	const char *html;
	const char *markdown; /* --markdown FILE */
	const char *kcidb;    /* --kcidb FILE */
	struct mp_kcidb_opts kcidb_opts;
	struct report_suite_cfg suite;
	bool compare;
	bool list;
	double threshold;  /* < 0: per-metric defaults */
	double alpha;	   /* --compare's significance level */
	const char *noise; /* --compare's noise profile */
	bool allow_empty;
	bool allow_unsure;
	bool force;
	const char *args[2];
	int nr_args;
	bool pool;
	const char *pool_files[REPORT_POOL_MAX];
	int nr_pool;
	struct cmd_metrics metrics; /* --metrics FILE, --metrics-format */
};

enum {
	OPT_COMPARE = 0x100,
	OPT_POOL,
	OPT_SVG,
	OPT_HTML,
	OPT_INPUT,
	OPT_LIST,
	OPT_THRESHOLD,
	OPT_STRESS_ARG,
	OPT_PARENT,
	OPT_ALPHA,
	OPT_ALLOW_EMPTY,
	OPT_ALLOW_UNSURE,
	OPT_FORCE,
	OPT_NOISE,
	OPT_KCIDB,
	OPT_KCIDB_SET,
	OPT_MARKDOWN,
	OPT_METRICS,
	OPT_METRICS_FORMAT,
};

/* clang-format off */
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
	  "memory limit of each run's cgroup, e.g. 1G or 10% of RAM "
	  "(default 128M)", 0 },
	{ "stress-arg", OPT_STRESS_ARG, "ARG", 0,
	  "pass ARG to every mpctl stress run (repeatable; for experiments, "
	  "see mpctl-report(1))", 0 },
	{ "parent", OPT_PARENT, "PATH", 0,
	  "create the runs' cgroups under this cgroup (default: as mpctl "
	  "stress does)", 0 },
	{ "list", OPT_LIST, NULL, 0, "list the scenarios and exit", 0 },
	{ "metrics", OPT_METRICS, "FILE", 0,
	  "write metrics to FILE as a Prometheus exposition: per scenario its "
	  "status, runs, requests, chunks asked and freed and OOM kills; with "
	  "--compare, the verdicts; '-': on stdout instead of the tables", 0 },
	CMD_METRICS_FORMAT_OPTION(OPT_METRICS_FORMAT),
	{ "compare", OPT_COMPARE, NULL, 0,
	  "compare two reports: --compare BASE.json NEW.json", 0 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0,
	  "minimum effect size in percent of the base for every metric "
	  "(default: per metric, see mpctl-report(1))", 0 },
	{ "alpha", OPT_ALPHA, "P", 0,
	  "one-sided significance level of a verdict (default 0.05)", 0 },
	{ "noise", OPT_NOISE, "FILE", 0,
	  "with --compare: a noise profile (kernel-patch/scripts/"
	  "noise-profile.sh); a difference within the spread it gives a "
	  "scenario's metric is no verdict", 0 },
	{ "allow-unsure", OPT_ALLOW_UNSURE, NULL, 0,
	  "with --compare: too few runs for a verdict on a metric is not a "
	  "failure (exit 65 otherwise)", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "with --compare: compare reports whose parameters differ (limit, "
	  "duration, chunk, threads, ...; refused with 65 otherwise)", 0 },
	{ "allow-empty", OPT_ALLOW_EMPTY, NULL, 0,
	  "compare even when a report is incomplete, has a failed or "
	  "missing scenario, no scenario that ran, or no metrics", 0 },
	{ "svg", OPT_SVG, "FILE", 0, "draw the timelines as SVG to FILE", 0 },
	{ "html", OPT_HTML, "FILE", 0,
	  "write an HTML page with the tables and the SVG to FILE", 0 },
	{ "markdown", OPT_MARKDOWN, "FILE", 0,
	  "write the tables (with --compare: the comparison) as markdown to "
	  "FILE ('-': stdout, instead of the text)", 0 },
	{ "input", 'i', "FILE", 0,
	  "use a recorded report instead of running the suite", 0 },
	{ "pool", OPT_POOL, NULL, 0,
	  "use the reports given as arguments, one per boot of one kernel, "
	  "as one report", 0 },
	{ "kcidb", OPT_KCIDB, "FILE", 0,
	  "write the report (with --compare: NEW and its verdicts) as a "
	  "KCIDB v5.3 document to FILE, for kcidb-submit", 0 },
	{ "kcidb-set", OPT_KCIDB_SET, "KEY=VALUE", 0,
	  "with --kcidb: a field the report does not know (origin, "
	  "patchset_hash, tree_name, build_id, ...; repeatable; see "
	  "mpctl-report(1))", 0 },
	{ "quiet", 'q', NULL, 0,
	  "print nothing but errors (no tables, progress or JSON on stdout; "
	  "the files are still written)", 0 },
	{ "verbose", 'v', NULL, 0,
	  "say on stderr which scenario runs, also with JSON on stdout", 0 },
	{ 0 }
};
/* clang-format on */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;
	struct report_suite_cfg *cfg = &o->suite;
	const char *name;
	size_t i;

	switch (key) {
	case 'j':
		o->json = true;
		break;
	case 'p':
		o->json = o->pretty = true;
		break;
	case 'o':
		o->output = cmd_arg_str(state, key, arg);
		break;
	case 'd':
		cfg->duration_ns = cmd_arg_duration(state, key, arg, 0);
		break;
	case 'r':
		cfg->repeat = cmd_arg_long(state, key, arg, 1, 100);
		break;
	case 's':
		for (i = 0; (name = report_suite_scenario(i, NULL)); i++)
			if (!strcmp(name, arg))
				break;
		if (!name)
			cmd_argerr(state, "unknown scenario '%s' (see --list)",
				   arg);
		if (cfg->nr_scenarios == REPORT_SUITE_MAX_SCENARIOS)
			cmd_argerr(state, "too many --scenario options");
		cfg->scenarios[cfg->nr_scenarios++] = arg;
		break;
	case 'L':
		cfg->limit = cmd_arg_size(state, key, arg, 16ULL << 20,
					  cmd_host_ram());
		break;
	case OPT_PARENT:
		cfg->parent = arg;
		break;
	case OPT_STRESS_ARG:
		if (cfg->nr_stress_args == REPORT_SUITE_MAX_STRESS_ARGS)
			cmd_argerr(state, "too many --stress-arg options");
		cfg->stress_args[cfg->nr_stress_args++] = arg;
		break;
	case OPT_LIST:
		o->list = true;
		break;
	case OPT_METRICS:
	case OPT_METRICS_FORMAT:
		cmd_arg_metrics(state, key, arg, key == OPT_METRICS_FORMAT,
				&o->metrics);
		break;
	case OPT_COMPARE:
		o->compare = true;
		break;
	case OPT_POOL:
		o->pool = true;
		break;
	case OPT_THRESHOLD:
		/* percent either way: "5" or "5%" */
		o->threshold = cmd_arg_frac(state, key, arg, 0, INFINITY, 0);
		if (strchr(arg, '%'))
			o->threshold *= 100;
		break;
	case OPT_ALPHA:
		o->alpha = cmd_arg_frac(state, key, arg, 0, 1,
					CMD_FRAC_ABOVE | CMD_FRAC_BELOW);
		break;
	case OPT_ALLOW_EMPTY:
		o->allow_empty = true;
		break;
	case OPT_ALLOW_UNSURE:
		o->allow_unsure = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_NOISE:
		o->noise = cmd_arg_str(state, key, arg);
		break;
	case OPT_SVG:
		o->svg = cmd_arg_str(state, key, arg);
		break;
	case OPT_HTML:
		o->html = cmd_arg_str(state, key, arg);
		break;
	case OPT_MARKDOWN:
		o->markdown = cmd_arg_str(state, key, arg);
		break;
	case 'i':
		o->input = cmd_arg_str(state, key, arg);
		break;
	case OPT_KCIDB:
		o->kcidb = cmd_arg_str(state, key, arg);
		break;
	case OPT_KCIDB_SET: {
		struct mp_err err;

		if (mp_kcidb_set_check(arg, &err))
			cmd_argerr(state, "invalid --kcidb-set %s", err.msg);
		if (o->kcidb_opts.nr_set == MP_KCIDB_MAX_SET)
			cmd_argerr(state, "too many --kcidb-set options");
		o->kcidb_opts.set[o->kcidb_opts.nr_set++] = arg;
		break;
	}
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (o->pool) {
			if (o->nr_pool == REPORT_POOL_MAX)
				cmd_argerr(state,
					   "too many reports to pool (at most "
					   "%d)",
					   REPORT_POOL_MAX);
			o->pool_files[o->nr_pool++] = arg;
			break;
		}
		if (!o->compare || o->nr_args == 2)
			cmd_argerr(state, "unexpected argument '%s'", arg);
		o->args[o->nr_args++] = arg;
		break;
	case ARGP_KEY_END:
		cmd_metrics_check(state, &o->metrics);
		if (o->pool && (o->compare || o->input || cfg->nr_scenarios))
			cmd_argerr(state, "--pool takes no --compare, --input "
					  "or --scenario");
		if (o->pool && !o->nr_pool)
			cmd_argerr(state, "--pool needs the reports to pool");
		if (o->compare && o->nr_args != 2)
			cmd_argerr(state, "--compare needs BASE.json and "
					  "NEW.json");
		if (o->markdown && !strcmp(o->markdown, "-") && o->json &&
		    (o->compare || !o->output))
			cmd_argerr(state, "--markdown - and --json both write "
					  "to stdout");
		if (o->compare && (o->svg || o->html || o->input || o->output ||
				   cfg->nr_scenarios))
			cmd_argerr(state, "--compare takes no --svg, --html, "
					  "--input, --output or --scenario");
		if (o->kcidb_opts.nr_set && !o->kcidb)
			cmd_argerr(state, "--kcidb-set goes with --kcidb");
		if (!o->compare && (o->threshold >= 0 || o->alpha > 0 ||
				    o->allow_unsure || o->force || o->noise))
			cmd_argerr(state, "--threshold, --alpha, --noise, "
					  "--allow-unsure and --force go with "
					  "--compare");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp report_argp = {
	options,
	parse_opt,
	"\n--compare BASE.json NEW.json\n--pool REPORT.json...",
	"Run the standard suite and write one report, or compare two "
	"reports.\v"
	"Exit status: 0 success (--compare: no regression); 1 failure, a "
	"scenario failed, or --compare found a regression (whatever else "
	"holds); 64 usage error; "
	"65 an input that is not JSON or not a report; --compare: a report "
	"is incomplete, has a failed or missing "
	"scenario, no scenario that ran or no metrics, or too few runs for "
	"a verdict; 66 an input file missing; "
	"69 no such kernel interface; 77 permission denied; 129, 130, 143 "
	"stopped by SIGHUP, SIGINT, SIGTERM (the document is still written, "
	"marked incomplete). "
	"See mpctl-report(1) for the metrics and their thresholds.",
	NULL,
	NULL,
	NULL
};

/* ---- printing ---------------------------------------------------------- */

/* --markdown -: the markdown takes stdout's place of the text */
static bool markdown_stdout(const struct report_opts *o)
{
	return o->markdown && !strcmp(o->markdown, "-");
}

static int print_tables(const json_t *doc)
{
	struct mp_err err;

	if (mp_report_write_tables(stdout, doc, MP_TABLE_TEXT, &err))
		return cmd_fail(&err);
	return 0;
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
	int i, j;

	/* one file for two outputs would keep only the last one */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n && files[i].path; j++)
			if (files[j].path &&
			    mp_output_same(files[i].path, files[j].path))
				return cmd_usage_error(
					"'%s' and '%s' are one file: each output needs its own",
					files[i].path, files[j].path);
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

static int file_write(struct report_file *rf, const json_t *doc, bool pretty)
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

/*
 * --kcidb: the report (NEW, with its comparison) as a KCIDB document, into
 * its file, opened before
 */
static int kcidb_write(struct report_file *rf, const struct report_opts *o,
		       const json_t *doc, const json_t *cmp)
{
	struct mp_err err;
	json_t *kc;
	int ret;

	kc = mp_kcidb_doc(doc, cmp, &o->kcidb_opts, &err);
	if (!kc) {
		files_abort(rf, 1);
		return cmd_fail(&err);
	}
	ret = file_write(rf, kc, o->pretty);
	json_decref(kc);
	return ret;
}

/* Fill metrics a recorded report lacks (e.g. one written by hand). */
static void summarize_all(json_t *doc)
{
	json_t *sc;
	size_t i;

	json_array_foreach(json_object_get(doc, "scenarios"), i, sc)
		mp_report_summarize(sc);
}

/* no scenario of the report has the status "ok" */
static bool nothing_ran(const json_t *doc)
{
	const json_t *sc;
	size_t i;

	json_array_foreach(json_object_get(doc, "scenarios"), i, sc) {
		const char *st =
			json_string_value(json_object_get(sc, "status"));

		if (st && !strcmp(st, "ok"))
			return false;
	}
	return true;
}

/* names of a JSON array of strings, "a, b, c", into buf */
static const char *names(const json_t *arr, char *buf, size_t len)
{
	const json_t *v;
	size_t i, used = 0;

	buf[0] = '\0';
	json_array_foreach(arr, i, v)
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 i ? ", " : "", json_string_value(v));
	return buf;
}

/*
 * A gate that can fail. A regression is 1 whatever else holds: a CI that
 * reruns on 65 must not lose it. Below it, data BASE has and NEW lacks,
 * and verdicts the runs are too few to reach, are errors (65); each is
 * still said on stderr when a regression decides the status
 */
static int compare_status(const struct report_opts *o, const json_t *cmp)
{
	const json_t *ms = json_object_get(cmp, "missing_scenarios");
	const json_t *mm = json_object_get(cmp, "missing_metrics");
	const json_t *uu = json_object_get(cmp, "unusable_metrics");
	json_int_t unsure = json_integer_value(json_object_get(cmp, "unsure"));
	int ret = MP_EXIT_OK;
	char buf[400];

	if (!o->allow_empty && json_array_size(ms)) {
		cmd_error("'%s' lacks scenarios that ran in '%s': %s",
			  o->args[1], o->args[0], names(ms, buf, sizeof(buf)));
		ret = MP_EXIT_DATAERR;
	}
	if (!o->allow_empty && json_array_size(mm)) {
		cmd_error("'%s' lacks metrics of '%s': %s", o->args[1],
			  o->args[0], names(mm, buf, sizeof(buf)));
		ret = MP_EXIT_DATAERR;
	}
	if (json_array_size(uu)) {
		cmd_error("no samples to judge in metrics of both: %s",
			  names(uu, buf, sizeof(buf)));
		ret = MP_EXIT_DATAERR;
	}
	if (!o->allow_unsure && unsure) {
		cmd_error("too few runs for a verdict on %lld metric(s): more "
			  "--repeat, or --allow-unsure",
			  (long long)unsure);
		ret = MP_EXIT_DATAERR;
	}
	if (json_integer_value(json_object_get(cmp, "regressions")))
		ret = MP_EXIT_FAILURE;
	return ret;
}

/*
 * Every scenario a noise profile names is one of the suite's, maybe with
 * a variant after '@' (compare-kernels.sh -L), or one of BASE's: a name
 * misspelt would else leave its rows without the profile, unsaid
 */
static int noise_names(const json_t *noise, const json_t *base,
		       const char *what, struct mp_err *err)
{
	const char *scenario, *name;
	json_t *v;
	size_t i, len;

	json_object_foreach(json_object_get(noise, "noise"), scenario, v) {
		len = strcspn(scenario, "@");
		for (i = 0; (name = report_suite_scenario(i, NULL)); i++)
			if (strlen(name) == len &&
			    !strncmp(name, scenario, len))
				break;
		if (!name && !mp_report_scenario(base, scenario))
			return mp_errf(err, MP_EXIT_DATAERR, 0,
				       "'%s': noise of '%s': no such scenario "
				       "(see --list)",
				       what, scenario);
	}
	return 0;
}

/*
 * --compare --kcidb: NEW and its verdicts, written whatever the verdict;
 * the comparison's exit status unless it is 0 and the file fails
 */
static int compare_kcidb(const struct report_opts *o, const json_t *cur,
			 const json_t *cmp, int status)
{
	struct report_file *rf;
	int ret;

	if (!o->kcidb)
		return status;
	rf = calloc(1, sizeof(*rf));
	if (!rf) {
		cmd_error("KCIDB document: %s", strerror(ENOMEM));
		return status ? status : MP_EXIT_FAILURE;
	}
	rf->path = o->kcidb;
	ret = files_open(rf, 1);
	if (!ret)
		ret = kcidb_write(rf, o, cur, cmp);
	free(rf);
	return status ? status : ret;
}

static int compare_metrics(FILE *f, enum mp_metrics_format fmt, const void *cmp)
{
	return mp_metrics_write_compare(f, fmt, cmp);
}

static int report_metrics(FILE *f, enum mp_metrics_format fmt, const void *doc)
{
	return mp_metrics_write_report(f, fmt, doc);
}

static int do_compare(struct report_opts *o)
{
	struct mp_compare_opts copts = {
		.min_effect_pct = o->threshold,
		.alpha = o->alpha > 0 ? o->alpha : MP_COMPARE_ALPHA,
	};
	json_t *base = NULL, *cur = NULL, *noise = NULL, *cmp = NULL;
	struct report_file *md = NULL;
	bool md_open = false;
	struct mp_err err;
	int ret;

	/* --markdown: checked before anything is read */
	if (o->markdown) {
		md = calloc(1, sizeof(*md));
		if (!md) {
			mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "compare");
			goto fail;
		}
		md->path = o->markdown;
		md->fn = mp_compare_markdown;
		ret = files_open(md, 1);
		if (ret) {
			free(md);
			return ret;
		}
		md_open = true;
	}
	base = mp_json_load_file(o->args[0], &err);
	if (!base)
		goto fail;
	cur = mp_json_load_file(o->args[1], &err);
	if (!cur)
		goto fail;
	if (o->noise) {
		noise = mp_json_load_file(o->noise, &err);
		if (!noise || mp_noise_check(noise, o->noise, &err) ||
		    noise_names(noise, base, o->noise, &err))
			goto fail;
		copts.noise = noise;
	}
	if (mp_report_check(base, o->args[0], &err) ||
	    mp_report_check(cur, o->args[1], &err) ||
	    mp_report_resummarize(base, o->args[0], &err) ||
	    mp_report_resummarize(cur, o->args[1], &err))
		goto fail;
	if (!o->allow_empty && (mp_report_usable(base, o->args[0], &err) ||
				mp_report_usable(cur, o->args[1], &err)))
		goto fail;
	if (!o->force &&
	    mp_report_alike(base, cur, " (--force compares them anyway)", &err))
		goto fail;
	cmp = mp_report_compare(base, cur, &copts, &err);
	if (!cmp)
		goto fail;
	if (cmd_metrics_stdout(&o->metrics) || o->quiet)
		; /* stdout is the metrics', or nothing's */
	else if (o->json)
		mp_json_emit(stdout, cmp, o->pretty);
	else if (!markdown_stdout(o) &&
		 mp_compare_write(stdout, cmp, MP_TABLE_TEXT, &err))
		goto fail;
	ret = compare_status(o, cmp);
	if (md && file_write(md, cmp, false))
		ret = ret ? ret : MP_EXIT_FAILURE;
	md_open = false;
	ret = compare_kcidb(o, cur, cmp, ret);
	if (cmd_metrics_write(&o->metrics, compare_metrics, cmp) && !ret)
		ret = MP_EXIT_FAILURE;
	goto out;
fail:
	ret = cmd_fail(&err);
out:
	if (md_open)
		files_abort(md, 1);
	free(md);
	json_decref(cmp);
	json_decref(noise);
	json_decref(base);
	json_decref(cur);
	return ret;
}

/* --list: a table of the scenarios, or with --json the mpctl-report-list doc */
static int list_scenarios(const struct report_opts *o)
{
	static const struct mp_table_col cols[] = { { "scenario" },
						    { "description" } };
	struct mp_table *t = NULL;
	json_t *doc = NULL, *scs = NULL;
	const char *name, *description;
	struct mp_err err;
	size_t i;
	int ret;

	if (!o->json) {
		t = mp_table_new(cols, 2);
		if (!t) {
			mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "--list");
			return cmd_fail(&err);
		}
		mp_table_no_header(t);
		for (i = 0; (name = report_suite_scenario(i, &description));
		     i++)
			mp_table_row(t, (const char *[]){ name, description });
		ret = mp_table_write(stdout, t, MP_TABLE_TEXT, "", &err);
		mp_table_free(t);
		return ret ? cmd_fail(&err) : MP_EXIT_OK;
	}
	ret = MP_EXIT_OK;
	scs = json_array();
	if (!scs)
		goto nomem;
	for (i = 0; (name = report_suite_scenario(i, &description)); i++)
		if (json_array_append_new(scs,
					  json_pack("{s:s, s:s, s:b}", "name",
						    name, "description",
						    description, "standard",
						    report_suite_standard(i))))
			goto nomem;
	doc = mp_json_doc(REPORT_LIST_SCHEMA, REPORT_LIST_SCHEMA_VERSION);
	if (!doc || json_object_set(doc, "scenarios", scs))
		goto nomem;
	if (mp_json_emit(stdout, doc, o->pretty))
		ret = MP_EXIT_FAILURE;
	goto out;
nomem:
	cmd_error("out of memory");
	ret = MP_EXIT_FAILURE;
out:
	json_decref(scs);
	json_decref(doc);
	return ret;
}

/* the suite's progress and messages, on stderr */
static void on_starting(const char *scenario, const char *why, void *arg)
{
	const struct report_opts *o = arg;
	char dur[32];

	if (!o->verbose && (o->quiet || (o->json && !o->output)))
		return;
	if (why)
		cmd_error("scenario '%s': skipped: %s", scenario, why);
	else
		cmd_error("running scenario '%s' (%lld x %s)", scenario,
			  o->suite.repeat,
			  mp_fmt_duration(o->suite.duration_ns, dur,
					  sizeof(dur)));
}

static void on_warn(const struct mp_err *msg, void *arg)
{
	(void)arg;
	cmd_error("%s", msg->msg);
}

static void on_child_line(const char *line, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", line);
}
/* a recorded report, checked, with the metrics it lacks filled in */
static json_t *load_input(const char *path, struct mp_err *err)
{
	json_t *doc = mp_json_load_file(path, err);

	if (!doc)
		return NULL;
	if (mp_report_check(doc, path, err)) {
		json_decref(doc);
		return NULL;
	}
	summarize_all(doc);
	return doc;
}

/* --pool: the reports, each checked, as one, with its summaries */
static json_t *load_pool(const struct report_opts *o, struct mp_err *err)
{
	json_t *docs[REPORT_POOL_MAX] = { NULL }, *pool = NULL;
	int i;

	for (i = 0; i < o->nr_pool; i++) {
		docs[i] = mp_json_load_file(o->pool_files[i], err);
		if (!docs[i] || mp_report_check(docs[i], o->pool_files[i], err))
			goto out;
	}
	pool = mp_report_pool(docs, o->pool_files, o->nr_pool, err);
	if (pool)
		summarize_all(pool);
out:
	for (i = 0; i < o->nr_pool; i++)
		json_decref(docs[i]);
	return pool;
}

/*
 * The report's run into its files: every output is checked before
 * anything runs. The files are on the heap (four struct mp_output)
 */
static int report_run(struct report_opts *o)
{
	static int (*const fns[4])(FILE *, const json_t *, struct mp_err *) = {
		NULL,
		mp_svg_report,
		mp_html_report,
		mp_report_markdown,
	};
	struct report_file *files;
	struct mp_err err;
	bool failed = false;
	json_t *doc;
	int ret, sig, i;

	files = calloc(5, sizeof(*files));
	if (!files) {
		mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "report");
		return cmd_fail(&err);
	}
	files[0].path = o->output;
	files[1].path = o->svg;
	files[2].path = o->html;
	files[3].path = o->markdown;
	files[4].path = o->kcidb;
	for (i = 0; i < 4; i++)
		files[i].fn = fns[i];
	ret = files_open(files, 5);
	if (!ret && cmd_metrics_open(&o->metrics)) {
		files_abort(files, 5);
		ret = MP_EXIT_FAILURE;
	}
	if (ret)
		goto out;
	if (o->input)
		doc = load_input(o->input, &err);
	else if (o->pool)
		doc = load_pool(o, &err);
	else
		doc = report_suite_run(&o->suite, &failed, &err);
	if (!doc) {
		files_abort(files, 5);
		ret = cmd_fail(&err);
		goto out;
	}
	sig = report_suite_signal();
	if (sig)
		cmd_error("interrupted by SIG%s: the report is incomplete",
			  sigabbrev_np(sig));
	ret = files_write(files, 4, doc, o->pretty);
	if (ret)
		files_abort(files + 4, 1);
	else if (o->kcidb)
		ret = kcidb_write(files + 4, o, doc, NULL);
	if (!ret) {
		if (cmd_metrics_stdout(&o->metrics))
			; /* stdout is the metrics' */
		else if (o->json && !o->output && !o->quiet)
			ret = mp_json_emit(stdout, doc, o->pretty) ?
				      MP_EXIT_FAILURE :
				      0;
		else if (!o->json && !o->quiet && !markdown_stdout(o))
			ret = print_tables(doc);
	}
	if (!ret && cmd_metrics_write(&o->metrics, report_metrics, doc))
		ret = MP_EXIT_FAILURE;
	/* a report in which nothing ran measured nothing: not a success */
	if (!ret && !failed && !o->input && !o->pool && !o->allow_empty &&
	    !report_suite_signal() && nothing_ran(doc)) {
		cmd_error("no scenario ran (every one was skipped): nothing "
			  "measured (--allow-empty accepts it)");
		ret = MP_EXIT_DATAERR;
	}
	json_decref(doc);
	if (!ret && failed)
		ret = MP_EXIT_FAILURE;
	/* as a shell reports a job killed by the signal */
	sig = report_suite_signal();
	if (sig)
		ret = 128 + sig;
out:
	cmd_metrics_abort(&o->metrics);
	free(files);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {
		.suite = {
			.duration_ns = 5000000000ULL,
			.repeat = 3,
			.limit = 128 << 20,
			.starting = on_starting,
			.warn = on_warn,
			.child_line = on_child_line,
		},
		.threshold = -1,
	};

	o.suite.arg = &o;
	cmd_argp_parse(&report_argp, argc, argv, &o);
	if (cmd_metrics_stdout(&o.metrics) && o.json && !o.output) {
		cmd_error("--metrics - and --json both write to stdout: give "
			  "one of them a file");
		return MP_EXIT_USAGE;
	}
	if (cmd_metrics_stdout(&o.metrics) && markdown_stdout(&o)) {
		cmd_error("--metrics - and --markdown - both write to stdout: "
			  "give one of them a file");
		return MP_EXIT_USAGE;
	}
	if (o.list)
		return list_scenarios(&o);
	if (o.compare)
		return do_compare(&o);
	return report_run(&o);
}
