// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text exposition of a listener: see mp_metrics.h. Label
 * values are escaped as the format says (backslash, double quote, line
 * feed); every family has its HELP and TYPE before its samples, and a
 * counter's name ends in _total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "mp_metrics.h"

static void label(FILE *f, const char *v)
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

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{backend="..",cgroup=".."[,KEY="VAL"]} */
static void series(FILE *f, const struct mp_listen_metrics *m, const char *name,
		   const char *key, const char *val)
{
	fprintf(f, "%s{backend=\"", name);
	label(f, m->backend);
	fputs("\",cgroup=\"", f);
	label(f, m->cg && m->cg->path[0] ? m->cg->path : "/");
	if (key) {
		fprintf(f, "\",%s=\"", key);
		label(f, val);
	}
	fputs("\"} ", f);
}

/* "NAME VALUE" lines of a cgroup file (memory.events, oom_control) */
static void counters(FILE *f, const struct mp_listen_metrics *m,
		     const char *file, const char *only, bool *declared)
{
	char buf[1024], *line, *save = NULL;
	char name[64];
	uint64_t v;

	if (!m->cg || !m->cg->dir[0] ||
	    mp_cg_read(m->cg, file, buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %" SCNu64, name, &v) != 2 ||
		    (only && strcmp(name, only)))
			continue;
		if (!*declared)
			family(f, "mpctl_memory_events_total", "counter",
			       "The cgroup's memory event counters "
			       "(cgroup2 memory.events, v1 oom_control).");
		*declared = true;
		series(f, m, "mpctl_memory_events_total", "event", name);
		fprintf(f, "%" PRIu64 "\n", v);
	}
}

/* a counter family with one sample per level */
static void per_level(FILE *f, const struct mp_listen_metrics *m,
		      const char *name, const char *help,
		      const uint64_t v[MP_LEVEL_NR])
{
	int l;

	family(f, name, "counter", help);
	for (l = 0; l < MP_LEVEL_NR; l++) {
		series(f, m, name, "level", mp_level_name(l));
		fprintf(f, "%" PRIu64 "\n", v[l]);
	}
}

int mp_metrics_write(FILE *f, const struct mp_listen_metrics *m)
{
	bool declared = false;
	uint64_t failcnt;

	errno = 0;
	per_level(f, m, "mpctl_listen_events_total",
		  "Memory pressure events the listener reported, by level.",
		  m->events);
	per_level(f, m, "mpctl_listen_notifications_total",
		  "Kernel notifications behind those events, by level.",
		  m->notifications);
	family(f, "mpctl_listen_last_event_timestamp_seconds", "gauge",
	       "When the last event was read (0: none yet).");
	series(f, m, "mpctl_listen_last_event_timestamp_seconds", NULL, NULL);
	fprintf(f, "%" PRIu64 ".%03" PRIu64 "\n", m->last_event_ns / 1000000000,
		m->last_event_ns / 1000000 % 1000);
	counters(f, m, "memory.events", NULL, &declared);
	counters(f, m, "memory.oom_control", "oom_kill", &declared);
	if (m->cg && m->cg->dir[0] &&
	    !mp_cg_read_u64(m->cg, "memory.failcnt", &failcnt)) {
		family(f, "mpctl_memory_failcnt_total", "counter",
		       "Times the v1 memory limit was hit (memory.failcnt).");
		series(f, m, "mpctl_memory_failcnt_total", NULL, NULL);
		fprintf(f, "%" PRIu64 "\n", failcnt);
	}
	return ferror(f) ? -1 : 0;
}
