/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A lock-free latency histogram: log-linear buckets (16 per power of two,
 * so quantiles are within about 4 %), exact count, sum and maximum. It can
 * live in memory shared between processes: it holds no pointers.
 */
#ifndef MP_STATS_H
#define MP_STATS_H

#include <stdint.h>

#define MP_HIST_SUB	16
#define MP_HIST_BUCKETS (64 * MP_HIST_SUB)

struct mp_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t min; /* 0 until the first value */
	uint64_t bucket[MP_HIST_BUCKETS];
};

/* Thread-safe (atomic) record of one value. */
void mp_hist_add(struct mp_hist *h, uint64_t v);
/* The q-quantile (0 < q <= 1) as the bucket's midpoint, clamped to max. */
uint64_t mp_hist_quantile(const struct mp_hist *h, double q);
/* dst += src (not atomic on dst) */
void mp_hist_merge(struct mp_hist *dst, const struct mp_hist *src);

#endif
