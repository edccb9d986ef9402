/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The co-tenant of "mpctl stress --cotenant": a process of its own (its
 * own mm, so its page faults never wait on the program's mmap_lock) in
 * the program's cgroup, doing what a small neighbour does: map SIZE,
 * write every page, unmap, 1 ms apart. Each operation is charged to the
 * cgroup and so pays for whatever the cgroup's pressure costs it:
 * reclaim at memory.high, a wait for the program's answer, throttling.
 * Each one's time goes into the shared memory's cotenant_latency
 * histogram; the parent reports its p50, p99 and maximum.
 */
#ifndef STRESS_COTENANT_H
#define STRESS_COTENANT_H

#include <stdbool.h>

#include "engine.h"

/* the co-tenant's default --cotenant SIZE and its pause between ops */
#define STRESS_COTENANT_DEFAULT_BYTES (64ULL << 10)
#define STRESS_COTENANT_MAX_BYTES     (64ULL << 20)
#define STRESS_COTENANT_PAUSE_NS      1000000ULL

/*
 * The co-tenant's row (stress/workload.c): wanted when the parameters
 * give it a size; runs until the parent says stop (sh unused). 0.
 */
bool stress_cotenant_wanted(const struct stress_params *p);
int stress_cotenant_run(const struct stress_params *p,
			struct stress_shared *shm, struct mp_shrinker *sh);

#endif
