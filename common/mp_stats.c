// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>

#include "mp_stats.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int msb;

	if (v < MP_HIST_SUB)
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	/* the 4 bits below the most significant one */
	return (msb - 3) * MP_HIST_SUB +
	       (unsigned int)((v >> (msb - 4)) & (MP_HIST_SUB - 1));
}

static uint64_t bucket_low(unsigned int b)
{
	unsigned int msb;

	if (b < MP_HIST_SUB)
		return b;
	msb = b / MP_HIST_SUB + 3;
	return (1ULL << msb) | ((uint64_t)(b % MP_HIST_SUB) << (msb - 4));
}

void mp_hist_add(struct mp_hist *h, uint64_t v)
{
	uint64_t m;

	__atomic_add_fetch(&h->count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&h->sum, v, __ATOMIC_RELAXED);
	__atomic_add_fetch(&h->bucket[bucket_of(v)], 1, __ATOMIC_RELAXED);
	m = __atomic_load_n(&h->max, __ATOMIC_RELAXED);
	while (v > m &&
	       !__atomic_compare_exchange_n(&h->max, &m, v, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	m = __atomic_load_n(&h->min, __ATOMIC_RELAXED);
	while ((!m || v < m) &&
	       !__atomic_compare_exchange_n(&h->min, &m, v ? v : 1, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint64_t mp_hist_quantile(const struct mp_hist *h, double q)
{
	uint64_t count = __atomic_load_n(&h->count, __ATOMIC_RELAXED);
	uint64_t rank, seen = 0, lo, hi, mid;
	unsigned int b;

	if (!count)
		return 0;
	rank = (uint64_t)(q * (double)count + 0.5);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < MP_HIST_BUCKETS; b++) {
		seen += __atomic_load_n(&h->bucket[b], __ATOMIC_RELAXED);
		if (seen >= rank)
			break;
	}
	if (b >= MP_HIST_BUCKETS)
		return h->max;
	lo = bucket_low(b);
	hi = b + 1 < MP_HIST_BUCKETS ? bucket_low(b + 1) : lo;
	mid = lo + (hi - lo) / 2;
	if (mid > h->max)
		mid = h->max;
	if (mid < h->min)
		mid = h->min;
	return mid;
}

void mp_hist_merge(struct mp_hist *dst, const struct mp_hist *src)
{
	unsigned int b;

	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	if (src->min && (!dst->min || src->min < dst->min))
		dst->min = src->min;
	for (b = 0; b < MP_HIST_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
}
