/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The clock: nanoseconds of a POSIX clock (CLOCK_MONOTONIC for deadlines
 * and intervals, CLOCK_REALTIME for timestamps shown to people).
 */
#ifndef MP_CLOCK_H
#define MP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mp_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
