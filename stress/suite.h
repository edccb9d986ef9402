/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The standard suite of "mpctl report": its scenarios, run --repeat times
 * each, into one report document (schema mpctl-report, common/mp_report.h).
 *
 * Scenarios run "mpctl stress --json" (and "mpctl listen --json") as
 * children of /proc/self/exe and embed their documents, so a scenario
 * that crashes or is OOM-killed cannot take the report with it. The
 * document is the result: the caller writes it, renders its tables, or
 * compares it (common/mp_report.c).
 *
 * Nothing here prints: what goes to stderr comes through the callbacks.
 */
#ifndef STRESS_SUITE_H
#define STRESS_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mp_err.h"

#define REPORT_SUITE_MAX_SCENARIOS   16
#define REPORT_SUITE_MAX_STRESS_ARGS 8

struct report_suite_cfg {
	uint64_t duration_ns; /* each run's */
	long long repeat;     /* runs per scenario */
	uint64_t limit;	      /* memory limit of each run's cgroup */
	/* the scenarios to run, in the suite's order; none: all */
	const char *scenarios[REPORT_SUITE_MAX_SCENARIOS];
	int nr_scenarios;
	/* passed to every "mpctl stress" run */
	const char *stress_args[REPORT_SUITE_MAX_STRESS_ARGS];
	int nr_stress_args;
	const char *parent; /* where the runs' cgroups go, NULL: default */
	/* when a scenario is reached: why is NULL when it runs, else why it
	 * is skipped */
	void (*starting)(const char *scenario, const char *why, void *arg);
	/* a scenario that failed or was skipped, a cgroup left behind */
	void (*warn)(const struct mp_err *msg, void *arg);
	/* a line "mpctl listen" wrote to its stderr, without its newline */
	void (*child_line)(const char *line, void *arg);
	void *arg;
};

/*
 * The scenario at index i and its description, NULL past the last one;
 * for --list and for checking --scenario.
 */
const char *report_suite_scenario(size_t i, const char **description);

/* whether scenario i runs without --scenario (the standard suite) */
bool report_suite_standard(size_t i);

/*
 * Run the selected scenarios and return the report document: "complete"
 * false and "interrupted_by" set when SIGINT, SIGTERM or SIGHUP stopped
 * it (the handlers are installed here; the signal is passed on to the
 * children, whose documents so far are kept). *failed is set when a
 * scenario failed (not when it was skipped). NULL with err when the runs
 * cannot go anywhere (a --parent that is not usable); a system without a
 * memory cgroup is not that: its scenarios say so, one by one.
 */
json_t *report_suite_run(const struct report_suite_cfg *cfg, bool *failed,
			 struct mp_err *err);

/* the signal that interrupted the suite, 0 if none */
int report_suite_signal(void);

#endif
