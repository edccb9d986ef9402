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
	m->name = family;
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
	bool declared = false;
	struct mp_metrics m;
	uint64_t failcnt;

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
	cg_counters(&m, cg, "memory.events", NULL, &declared);
	cg_counters(&m, cg, "memory.oom_control", "oom_kill", &declared);
	if (cg && cg->dir[0] &&
	    !mp_cg_read_u64(cg, "memory.failcnt", &failcnt)) {
		mp_metrics_family(
			&m, "mpctl_memory_failcnt", MP_METRIC_COUNTER,
			"Times the v1 memory limit was hit (memory.failcnt).");
		mp_metrics_u64(&m, NULL, NULL, failcnt);
	}
	return mp_metrics_end(&m);
}
