/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pictures of a report: one panel per scenario, drawn from the timeline of
 * its first run that has one (usage and limit, chunks held, pressure
 * events by level, reclaim requests), as SVG or as an HTML page holding
 * the SVG and the metric tables. The drawing is computed from the jansson
 * tree; only the SVG markup is written with fprintf.
 */
#ifndef MP_SVG_H
#define MP_SVG_H

#include <stdio.h>

#include <jansson.h>

#include "mp_err.h"

/* Write the picture of a report to f: 0, or -1 with err set. */
int mp_svg_report(FILE *f, const json_t *report, struct mp_err *err);
/* The same picture inside a self-contained HTML page with the metrics. */
int mp_html_report(FILE *f, const json_t *report, struct mp_err *err);

#endif
