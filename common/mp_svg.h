/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pictures of a report: one panel per scenario, drawn from the timelines
 * of all its runs on one time axis (usage and chunks held as the median
 * with a band from min to max, the limit with its value, reclaim requests
 * and pressure events by level as the median per sample), as SVG or as an
 * HTML page holding the SVG and the metric tables (mp_report_text's, in
 * the text's units). A run's last sample, taken after its teardown, is
 * not drawn; a legend names only what is drawn, above its plot. The
 * drawing is computed from the jansson tree; only the SVG markup is
 * written with fprintf.
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
