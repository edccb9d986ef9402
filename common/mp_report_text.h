/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tables of a report and of a comparison, rendered from their JSON
 * documents through mp_table: as text (what "mpctl report" prints), as
 * markdown (--markdown) and, for a scenario's metrics, as HTML (the
 * --html page). Every number goes through mp_fmt_metric(), so that the
 * renderings say the same thing.
 */
#ifndef MP_REPORT_TEXT_H
#define MP_REPORT_TEXT_H

#include <stdio.h>

#include <jansson.h>

#include "mp_err.h"
#include "mp_table.h"

/*
 * A metric's value in its unit ("ns": "1.2 ms", "bytes": "3.0 MiB",
 * "ratio": "0.950", a count as %g) into buf.
 */
const char *mp_fmt_metric(const char *unit, double v, char *buf, int len);

/* A scenario's metrics (median, min, max, spread), or NULL (ENOMEM). */
struct mp_table *mp_report_scenario_table(const json_t *sc);

/*
 * The tables of a report (the system, the strategies, each scenario's
 * metrics) into f as MP_TABLE_TEXT or MP_TABLE_MARKDOWN: 0, or -1 with
 * err.
 */
int mp_report_write_tables(FILE *f, const json_t *report,
			   enum mp_table_format fmt, struct mp_err *err);

/*
 * A comparison (mp_report_compare()'s document) into f as text or
 * markdown: the regressions' headlines, the table of rows, what is
 * missing and the counts. 0, or -1 with err.
 */
int mp_compare_write(FILE *f, const json_t *cmp, enum mp_table_format fmt,
		     struct mp_err *err);

/* The same in markdown, in the shape of an output file's writer. */
int mp_report_markdown(FILE *f, const json_t *report, struct mp_err *err);
int mp_compare_markdown(FILE *f, const json_t *cmp, struct mp_err *err);

#endif
