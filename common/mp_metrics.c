// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics writer: see mp_metrics.h. Label values are escaped as both
 * formats say (backslash, double quote, line feed); every family has its
 * HELP and TYPE before its samples, and a counter's samples end in
 * _total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "mp_metrics.h"

int mp_metrics_format_parse(const char *s, enum mp_metrics_format *fmt)
{
	if (!strcmp(s, "prometheus"))
		*fmt = MP_METRICS_PROMETHEUS;
	else if (!strcmp(s, "openmetrics"))
		*fmt = MP_METRICS_OPENMETRICS;
	else
		return -1;
	return 0;
}

void mp_metrics_init(struct mp_metrics *m, FILE *f,
		     enum mp_metrics_format format)
{
	memset(m, 0, sizeof(*m));
	m->f = f;
	m->format = format;
	errno = 0;
}

void mp_metrics_label(struct mp_metrics *m, const char *key, const char *val)
{
	if (m->nlabels < MP_METRICS_MAX_LABELS)
		m->labels[m->nlabels++] = (struct mp_label){ key, val };
}

static void escape(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* NAME, with "_total" for a counter's samples (and text format's TYPE) */
static void name(const struct mp_metrics *m, bool family)
{
	fputs(m->name, m->f);
	if (m->type == MP_METRIC_COUNTER &&
	    (!family || m->format == MP_METRICS_PROMETHEUS))
		fputs("_total", m->f);
}

void mp_metrics_family(struct mp_metrics *m, const char *family,
		       enum mp_metric_type type, const char *help)
{
	snprintf(m->name, sizeof(m->name), "%s", family);
	m->type = type;
	fputs("# HELP ", m->f);
	name(m, true);
	fprintf(m->f, " %s\n# TYPE ", help);
	name(m, true);
	fprintf(m->f, " %s\n", type == MP_METRIC_COUNTER ? "counter" : "gauge");
}

static void label(FILE *f, bool first, const char *key, const char *val)
{
	fprintf(f, "%s%s=\"", first ? "{" : ",", key);
	escape(f, val ? val : "");
	fputc('"', f);
}

/* NAME{k="v",...} and the space before the value */
static void sample(struct mp_metrics *m, const char *key, const char *val)
{
	int i;

	name(m, false);
	for (i = 0; i < m->nlabels; i++)
		label(m->f, !i, m->labels[i].key, m->labels[i].val);
	if (key)
		label(m->f, !m->nlabels, key, val);
	fputs(m->nlabels || key ? "} " : " ", m->f);
}

void mp_metrics_u64(struct mp_metrics *m, const char *key, const char *val,
		    uint64_t v)
{
	sample(m, key, val);
	fprintf(m->f, "%" PRIu64 "\n", v);
}

void mp_metrics_real(struct mp_metrics *m, const char *key, const char *val,
		     double v)
{
	sample(m, key, val);
	fprintf(m->f, "%.17g\n", v);
}

void mp_metrics_seconds(struct mp_metrics *m, const char *key, const char *val,
			uint64_t ns)
{
	sample(m, key, val);
	fprintf(m->f, "%" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000,
		ns % 1000000000);
}

int mp_metrics_end(struct mp_metrics *m)
{
	if (m->format == MP_METRICS_OPENMETRICS)
		fputs("# EOF\n", m->f);
	if (ferror(m->f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* a family of one sample */
static void one(struct mp_metrics *m, const char *family,
		enum mp_metric_type type, const char *help, uint64_t v)
{
	mp_metrics_family(m, family, type, help);
	mp_metrics_u64(m, NULL, NULL, v);
}

/* ---- listen ------------------------------------------------------------- */

/* "NAME VALUE" lines of a cgroup file (memory.events, oom_control) */
static void cg_counters(struct mp_metrics *m, const struct mp_cgroup *cg,
			const char *file, const char *only, bool *declared)
{
	char buf[1024], *line, *save = NULL;
	char event[64];
	uint64_t v;

	if (!cg || !cg->dir[0] || mp_cg_read(cg, file, buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %" SCNu64, event, &v) != 2 ||
		    (only && strcmp(event, only)))
			continue;
		if (!*declared)
			mp_metrics_family(
				m, "mpctl_memory_events", MP_METRIC_COUNTER,
				"The cgroup's memory event counters "
				"(cgroup2 memory.events, v1 oom_control).");
		*declared = true;
		mp_metrics_u64(m, "event", event, v);
	}
}

/* the cgroup's own memory events (OOM kills among them) and v1 failcnt */
static void cg_events(struct mp_metrics *m, const struct mp_cgroup *cg)
{
	bool declared = false;
	uint64_t failcnt;

	cg_counters(m, cg, "memory.events", NULL, &declared);
	cg_counters(m, cg, "memory.oom_control", "oom_kill", &declared);
	if (cg && cg->dir[0] && !mp_cg_read_u64(cg, "memory.failcnt", &failcnt))
		one(m, "mpctl_memory_failcnt", MP_METRIC_COUNTER,
		    "Times the v1 memory limit was hit (memory.failcnt).",
		    failcnt);
}

/* a counter family with one sample per level */
static void per_level(struct mp_metrics *m, const char *family,
		      const char *help, const uint64_t v[MP_LEVEL_NR])
{
	int l;

	mp_metrics_family(m, family, MP_METRIC_COUNTER, help);
	for (l = 0; l < MP_LEVEL_NR; l++)
		mp_metrics_u64(m, "level", mp_level_name(l), v[l]);
}

int mp_metrics_write_listen(FILE *f, enum mp_metrics_format fmt,
			    const struct mp_listen_metrics *lm)
{
	const struct mp_cgroup *cg = lm->cg;
	struct mp_metrics m;

	mp_metrics_init(&m, f, fmt);
	mp_metrics_label(&m, "backend", lm->backend);
	mp_metrics_label(&m, "cgroup", cg && cg->path[0] ? cg->path : "/");
	per_level(&m, "mpctl_listen_events",
		  "Memory pressure events the listener reported, by level.",
		  lm->events);
	per_level(&m, "mpctl_listen_notifications",
		  "Kernel notifications behind those events, by level.",
		  lm->notifications);
	mp_metrics_family(&m, "mpctl_listen_last_event_timestamp_seconds",
			  MP_METRIC_GAUGE,
			  "When the last event was read (0: none yet).");
	mp_metrics_seconds(&m, NULL, NULL, lm->last_event_ns);
	cg_events(&m, cg);
	return mp_metrics_end(&m);
}

/* ---- register ----------------------------------------------------------- */

int mp_metrics_write_register(FILE *f, enum mp_metrics_format fmt,
			      const struct mp_register_metrics *rm)
{
	const struct mp_cgroup *cg = rm->cg;
	struct mp_metrics m;

	mp_metrics_init(&m, f, fmt);
	mp_metrics_label(&m, "backend", rm->backend);
	mp_metrics_label(&m, "mode", rm->mode);
	mp_metrics_label(&m, "cgroup", cg && cg->path[0] ? cg->path : "/");
	one(&m, "mpctl_register_requests", MP_METRIC_COUNTER,
	    "Reclaim requests the shrinker received.", rm->requests);
	one(&m, "mpctl_register_chunks_requested", MP_METRIC_COUNTER,
	    "Chunks the requests asked for.", rm->chunks_requested);
	one(&m, "mpctl_register_chunks_freed", MP_METRIC_COUNTER,
	    "Chunks given up in answer (--keep re-adds them).",
	    rm->chunks_requested - rm->chunks_readded);
	mp_metrics_family(&m, "mpctl_register_last_request_timestamp_seconds",
			  MP_METRIC_GAUGE,
			  "When the last request was read (0: none yet).");
	mp_metrics_seconds(&m, NULL, NULL, rm->last_request_ns);
	cg_events(&m, cg);
	return mp_metrics_end(&m);
}

/* ---- stress, report, compare: from their JSON documents ----------------- */

/* a key of a stress document, exported as NAME with a prefix */
struct json_metric {
	const char *key, *name;
	enum mp_metric_type type;
	const char *help;
};

static const struct json_metric stress_metrics[] = {
	{ "reclaim_requests", "reclaim_requests", MP_METRIC_COUNTER,
	  "Reclaim requests the shrinker received." },
	{ "chunks_requested", "chunks_requested", MP_METRIC_COUNTER,
	  "Chunks the requests asked for." },
	{ "chunks_freed", "chunks_freed", MP_METRIC_COUNTER,
	  "Chunks freed in answer." },
	{ "oom_kills", "oom_kills", MP_METRIC_COUNTER,
	  "OOM kills in the run's cgroup during the run." },
	{ "peak_usage_bytes", "peak_usage_bytes", MP_METRIC_GAUGE,
	  "The cgroup's peak memory usage." },
	{ "limit_bytes", "limit_bytes", MP_METRIC_GAUGE,
	  "The cgroup's memory limit." },
};

#define NR_STRESS_METRICS (sizeof(stress_metrics) / sizeof(stress_metrics[0]))

static uint64_t json_u64(const json_t *obj, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(obj, key));

	return v > 0 ? (uint64_t)v : 0;
}

static void family(struct mp_metrics *m, const char *prefix,
		   const struct json_metric *jm, const char *why)
{
	char name[96], help[256];

	snprintf(name, sizeof(name), "mpctl_%s_%s", prefix, jm->name);
	snprintf(help, sizeof(help), "%s%s", jm->help, why ? why : "");
	mp_metrics_family(m, name, jm->type, help);
}

int mp_metrics_write_stress(FILE *f, enum mp_metrics_format fmt,
			    const json_t *doc)
{
	struct mp_metrics m;
	size_t i;

	mp_metrics_init(&m, f, fmt);
	mp_metrics_label(&m, "backend",
			 json_string_value(json_object_get(doc, "backend")));
	mp_metrics_label(&m, "cgroup",
			 json_string_value(json_object_get(doc, "cgroup")));
	for (i = 0; i < NR_STRESS_METRICS; i++) {
		family(&m, "stress", &stress_metrics[i], NULL);
		mp_metrics_u64(&m, NULL, NULL,
			       json_u64(doc, stress_metrics[i].key));
	}
	mp_metrics_family(&m, "mpctl_stress_duration_seconds", MP_METRIC_GAUGE,
			  "How long the run lasted.");
	mp_metrics_seconds(&m, NULL, NULL, json_u64(doc, "duration_ns"));
	return mp_metrics_end(&m);
}

/* a report's run: the stress document (a listen run has it under "stress") */
static const json_t *run_stress(const json_t *run)
{
	const json_t *s = json_object_get(run, "stress");

	return json_is_object(s) ? s : run;
}

int mp_metrics_write_report(FILE *f, enum mp_metrics_format fmt,
			    const json_t *doc)
{
	const json_t *scs = json_object_get(doc, "scenarios"), *sc, *run;
	struct mp_metrics m;
	size_t i, j, k;
	uint64_t sum;

	mp_metrics_init(&m, f, fmt);
	mp_metrics_family(&m, "mpctl_report_scenario_status", MP_METRIC_GAUGE,
			  "1 for the status of each scenario (ok, skipped, "
			  "failed, interrupted).");
	json_array_foreach(scs, i, sc) {
		mp_metrics_label(&m, "scenario",
				 json_string_value(
					 json_object_get(sc, "name")));
		mp_metrics_u64(&m, "status",
			       json_string_value(json_object_get(sc, "status")),
			       1);
		/* the next scenario's label, not a second one */
		m.nlabels = 0;
	}
	mp_metrics_family(&m, "mpctl_report_runs", MP_METRIC_GAUGE,
			  "The runs of each scenario.");
	json_array_foreach(scs, i, sc) {
		mp_metrics_u64(&m, "scenario",
			       json_string_value(json_object_get(sc, "name")),
			       json_array_size(json_object_get(sc, "runs")));
	}
	for (k = 0; k < NR_STRESS_METRICS; k++) {
		if (stress_metrics[k].type != MP_METRIC_COUNTER)
			continue;
		family(&m, "report", &stress_metrics[k],
		       " Summed over the scenario's runs.");
		json_array_foreach(scs, i, sc) {
			sum = 0;
			json_array_foreach(json_object_get(sc, "runs"), j, run)
				sum += json_u64(run_stress(run),
						stress_metrics[k].key);
			mp_metrics_u64(&m, "scenario",
				       json_string_value(
					       json_object_get(sc, "name")),
				       sum);
		}
	}
	return mp_metrics_end(&m);
}

int mp_metrics_write_compare(FILE *f, enum mp_metrics_format fmt,
			     const json_t *doc)
{
	static const char *const verdicts[] = { "worse", "better", "same",
						"unsure", "info" };
	const json_t *row;
	const char *verdict;
	struct mp_metrics m;
	uint64_t n;
	size_t i, v;

	mp_metrics_init(&m, f, fmt);
	one(&m, "mpctl_compare_regressions", MP_METRIC_GAUGE,
	    "Metrics that got worse from BASE to NEW.",
	    json_u64(doc, "regressions"));
	one(&m, "mpctl_compare_improvements", MP_METRIC_GAUGE,
	    "Metrics that got better from BASE to NEW.",
	    json_u64(doc, "improvements"));
	mp_metrics_family(&m, "mpctl_compare_rows", MP_METRIC_GAUGE,
			  "The comparison's rows, by verdict.");
	for (v = 0; v < sizeof(verdicts) / sizeof(verdicts[0]); v++) {
		n = 0;
		json_array_foreach(json_object_get(doc, "rows"), i, row) {
			verdict = json_string_value(
				json_object_get(row, "verdict"));
			n += verdict && !strcmp(verdict, verdicts[v]);
		}
		mp_metrics_u64(&m, "verdict", verdicts[v], n);
	}
	return mp_metrics_end(&m);
}
