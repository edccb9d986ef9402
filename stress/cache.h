/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cache workload of "mpctl stress --strategy": an application model.
 *
 * A cache of slots chunks (a footprint of --overcommit times the limit)
 * is read by reader threads with a Zipf popularity (s = 1, a seeded
 * xorshift generator per thread: the same keys in every run). A read of
 * a chunk that is held checks one marker word per page (a hit); a chunk
 * that is not held, or whose marker words the kernel zeroed (MADV_FREE),
 * is re-created (a miss): every page written, then miss_cost_ns of CPU.
 * What the cache does with its memory is the strategy, a row each in
 * stress/workload.c:
 *
 *  none             never gives memory back
 *  madv-free        chunks MADV_FREE'd once filled; the kernel may drop
 *                   them, the next read finds out and re-creates them
 *  psi              the emulated shrinker (mpctl stress --emulate) asks,
 *                   the cache drops its least recently read chunks
 *                   (CLOCK order) with MADV_DONTNEED
 *  kernel           the same with the kernel's shrinker (patched kernel)
 *  kernel-lazyfree  kernel asks, and chunks are kept MADV_FREE so that
 *                   reclaim can take them if the program answers late
 *  reclaim-agent    never gives memory back itself; the parent (run.c)
 *                   writes memory.reclaim each tick to hold the usage
 *                   under --target of the limit (Senpai/TMO)
 *
 * The chunks live in one mapping, a slot each, given back with
 * MADV_DONTNEED (--free reuse, the default). With --free munmap a miss
 * maps a fresh chunk and faults it in with MADV_POPULATE_WRITE (or, with
 * --no-populate, by its writes alone) and a drop unmaps it, as a program
 * written the ordinary way does; --free free the same with malloc()/free().
 * A miss's allocation (map and fault in, not the miss cost) is timed into
 * alloc_latency.
 *
 * The counters go to struct stress_shared, as the allocator engine's.
 */
#ifndef STRESS_CACHE_H
#define STRESS_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct stress_cache_cfg {
	bool lazyfree; /* chunks MADV_FREE once filled (madv-free) */
	uint64_t chunk_size;
	uint64_t slots;
	int threads; /* readers */
	uint64_t miss_cost_ns;
	uint64_t seed;
	enum stress_free free_mode;
	bool no_populate;	/* munmap, free: no MADV_POPULATE_WRITE */
	struct mp_shrinker *sh; /* NULL without a shrinker */
	struct stress_shared *shm;
	int usage_fd; /* >= 0: pause misses above high_bytes */
	uint64_t high_bytes;
};

/* Run until shm->stop; 0, or -1 with shm->error set. */
int stress_cache_run(const struct stress_cache_cfg *cfg);

#endif
