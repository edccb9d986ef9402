/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Metrics of every command in one of two expositions:
 *
 *  - the Prometheus text format 0.0.4 (the default: what node_exporter's
 *    textfile collector and promtool read), where a counter's HELP and
 *    TYPE name its sample, "NAME_total";
 *  - OpenMetrics 1.0 text, where a counter family is "NAME" with samples
 *    "NAME_total", and the document ends in "# EOF".
 *
 * No one document can be both: the two formats name a counter's family
 * differently. Families are written in full (HELP, TYPE, samples), with
 * the writer's labels on every sample and at most one more label per
 * sample. Nothing here prints: documents go to the stream given, and a
 * write error shows as -1 with errno from the *_write functions.
 */
#ifndef MP_METRICS_H
#define MP_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "mp_cgroup.h"
#include "mp_pressure.h"

enum mp_metrics_format {
	MP_METRICS_PROMETHEUS, /* text 0.0.4 */
	MP_METRICS_OPENMETRICS,
};

enum mp_metric_type {
	MP_METRIC_COUNTER, /* family named without "_total" */
	MP_METRIC_GAUGE,
};

struct mp_label {
	const char *key, *val;
};

#define MP_METRICS_MAX_LABELS 4

struct mp_metrics {
	FILE *f;
	enum mp_metrics_format format;
	struct mp_label labels[MP_METRICS_MAX_LABELS]; /* on every sample */
	int nlabels;
	/* the family being written */
	char name[96];
	enum mp_metric_type type;
};

/* "prometheus" or "openmetrics": 0, or -1 for another name */
int mp_metrics_format_parse(const char *s, enum mp_metrics_format *fmt);

/* Start a document on f; labels are added with mp_metrics_label(). */
void mp_metrics_init(struct mp_metrics *m, FILE *f,
		     enum mp_metrics_format format);
void mp_metrics_label(struct mp_metrics *m, const char *key, const char *val);

/* Start family NAME (a counter's without "_total") with its help text. */
void mp_metrics_family(struct mp_metrics *m, const char *name,
		       enum mp_metric_type type, const char *help);

/* A sample of the family, with the extra label KEY="VAL" unless key is NULL */
void mp_metrics_u64(struct mp_metrics *m, const char *key, const char *val,
		    uint64_t v);
void mp_metrics_real(struct mp_metrics *m, const char *key, const char *val,
		     double v);
/* a time in nanoseconds, in seconds, exactly */
void mp_metrics_seconds(struct mp_metrics *m, const char *key, const char *val,
			uint64_t ns);

/* End the document (OpenMetrics' "# EOF"): 0, or -1 with errno */
int mp_metrics_end(struct mp_metrics *m);

/* ---- what each command exports ----------------------------------------- */

/* listen: what a listener has seen, and the cgroup's memory events */
struct mp_listen_metrics {
	const char *backend;
	const struct mp_cgroup *cg;	     /* NULL or dir "": system-wide */
	uint64_t events[MP_LEVEL_NR];	     /* lines printed, by level */
	uint64_t notifications[MP_LEVEL_NR]; /* kernel notifications */
	uint64_t last_event_ns;		     /* CLOCK_REALTIME, 0: none yet */
};

int mp_metrics_write_listen(FILE *f, enum mp_metrics_format fmt,
			    const struct mp_listen_metrics *m);

/* register's monitor: the requests it served, and the cgroup's events */
struct mp_register_metrics {
	const char *backend, *mode;
	const struct mp_cgroup *cg; /* NULL: none */
	uint64_t requests;	    /* reclaim requests read */
	uint64_t chunks_requested;  /* the chunks they asked for */
	uint64_t chunks_readded;    /* --keep: re-added, not freed */
	uint64_t last_request_ns;   /* CLOCK_REALTIME, 0: none yet */
};

int mp_metrics_write_register(FILE *f, enum mp_metrics_format fmt,
			      const struct mp_register_metrics *m);

/*
 * stress: a run's mpctl-stress document (requests, chunks asked and
 * freed, OOM kills, peak usage); report: per scenario of an mpctl-report
 * document, its status, runs and the same counters summed over its runs;
 * report --compare: the verdicts of an mpctl-report-compare document.
 */
int mp_metrics_write_stress(FILE *f, enum mp_metrics_format fmt,
			    const json_t *doc);
int mp_metrics_write_report(FILE *f, enum mp_metrics_format fmt,
			    const json_t *doc);
int mp_metrics_write_compare(FILE *f, enum mp_metrics_format fmt,
			     const json_t *doc);

#endif
