// SPDX-License-Identifier: GPL-2.0
/*
 * The co-tenant of "mpctl stress", see cotenant.h.
 */
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cotenant.h"
#include "mp_clock.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* One operation: map, write every page, unmap; its time, 0 if it failed */
static uint64_t one_op(size_t bytes, size_t page)
{
	uint64_t t0 = mp_now_ns(CLOCK_MONOTONIC);
	volatile char *m;
	size_t off;

	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	for (off = 0; off < bytes; off += page)
		m[off] = 1;
	munmap((void *)m, bytes);
	return mp_now_ns(CLOCK_MONOTONIC) - t0;
}

bool stress_cotenant_wanted(const struct stress_params *p)
{
	return p->cotenant_bytes != 0;
}

int stress_cotenant_run(const struct stress_params *p,
			struct stress_shared *shm, struct mp_shrinker *sh)
{
	struct timespec pause = { 0, STRESS_COTENANT_PAUSE_NS };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t ns;

	(void)sh;
	while (!LOAD(shm->stop)) {
		ns = one_op(p->cotenant_bytes, page);
		/* out of memory for the mapping: try again, uncounted */
		if (ns)
			mp_hist_add(&shm->cotenant_latency, ns);
		nanosleep(&pause, NULL);
	}
	return 0;
}
