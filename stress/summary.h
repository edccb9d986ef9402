/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text summary of "mpctl stress", rendered from its JSON document
 * (the mpctl-stress schema), as report's tables are rendered from its
 * own: one source, two renderings, so that they cannot disagree.
 */
#ifndef STRESS_SUMMARY_H
#define STRESS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

/*
 * Write the summary of the stress document @doc into @f. A key the
 * document lacks reads as 0 (or ""). 0, or -1 when writing failed.
 */
int stress_summary_write(FILE *f, const json_t *doc);
/* @b bytes as "N MiB" into buf, as the summary and the progress line say */
void stress_fmt_mib(uint64_t b, char *buf, size_t len);

#endif
