/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The clock: nanoseconds of a POSIX clock (CLOCK_MONOTONIC for deadlines
 * and intervals, CLOCK_REALTIME for timestamps shown to people).
 */
#ifndef MP_CLOCK_H
#define MP_CLOCK_H

#include <limits.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t mp_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The poll()/epoll_wait() timeout, in milliseconds, that waits until
 * deadline_ns and never wakes up early: rounded up, 0 once it is past, at
 * most INT_MAX (about 24.8 days: the caller waits again after).
 */
static inline int mp_poll_ms(uint64_t deadline_ns, uint64_t now_ns)
{
	uint64_t ms;

	if (now_ns >= deadline_ns)
		return 0;
	ms = (deadline_ns - now_ns + 999999) / 1000000;
	return ms >= INT_MAX ? INT_MAX : (int)ms;
}

#endif
