/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus text exposition (format 0.0.4, what node_exporter's textfile
 * collector reads) of what a listener has seen: events and kernel
 * notifications per level, the time of the last event, and the cgroup's
 * own memory event counters (cgroup2 memory.events, v1
 * memory.oom_control and memory.failcnt). Nothing here prints: the
 * document is written to the stream given.
 */
#ifndef MP_METRICS_H
#define MP_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "mp_cgroup.h"
#include "mp_pressure.h"

struct mp_listen_metrics {
	const char *backend;
	const struct mp_cgroup *cg;	     /* NULL or dir "": system-wide */
	uint64_t events[MP_LEVEL_NR];	     /* lines printed, by level */
	uint64_t notifications[MP_LEVEL_NR]; /* kernel notifications */
	uint64_t last_event_ns;		     /* CLOCK_REALTIME, 0: none yet */
};

/* Write the exposition; 0, or -1 with errno (a write error). */
int mp_metrics_write(FILE *f, const struct mp_listen_metrics *m);

#endif
