/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stress engine: allocator threads that keep allocating and touching
 * chunks, each accounted to a user-space shrinker, and one reclaim thread
 * that frees what the shrinker asks for. It runs in its own process inside
 * the run's cgroup; everything it counts goes to a struct stress_shared in
 * memory shared with the parent, so the numbers survive an OOM kill.
 */
#ifndef STRESS_ENGINE_H
#define STRESS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_chunks.h"
#include "mp_shrinker.h"
#include "mp_stats.h"

/*
 * How the engine's chunks are mapped and freed (--free):
 *  reuse   one reservation carved into chunks, freed with MADV_DONTNEED
 *          and the range reused (mp_chunks.c: no mmap_lock writer)
 *  munmap  one mmap() per chunk, munmap() when freed: a program written
 *          the ordinary way
 *  free    malloc()/free() of glibc
 */
enum stress_free {
	STRESS_FREE_REUSE = 0,
	STRESS_FREE_MUNMAP,
	STRESS_FREE_HEAP,
	STRESS_FREE_NR,
};

/* "reuse", "munmap", "free"; NULL out of range */
const char *stress_free_name(enum stress_free f);
/* 0 and *f, or -1 for an unknown name */
int stress_free_parse(const char *name, enum stress_free *f);

#define STRESS_MAX_THREADS 1024
/* --answer-delay at most: the end of a run waits for a late answer */
#define STRESS_MAX_ANSWER_DELAY_NS 10000000000ULL

/* an allocation this slow or slower is counted apart, exactly */
#define STRESS_ALLOC_SLOW_NS 500000000ULL

enum stress_state {
	STRESS_STARTING = 0,
	STRESS_RUNNING,
	STRESS_DONE,
	STRESS_FAILED,
};

/*
 * The engine's settings, at the head of the shared memory: 'mpctl stress'
 * writes them before it starts the engine, which checks them once
 * (stress_params_check(), workload.h) and takes nothing from its command line
 * but the memfd.
 */
#define STRESS_PARAMS_MAGIC   0x6d707374u /* "mpst" */
#define STRESS_PARAMS_VERSION 3

struct stress_params {
	uint32_t magic;	       /* STRESS_PARAMS_MAGIC */
	uint32_t version;      /* STRESS_PARAMS_VERSION */
	uint32_t size;	       /* sizeof(struct stress_shared) */
	int32_t threads;       /* allocator threads */
	uint64_t chunk_size;   /* bytes */
	uint64_t max_chunks;   /* footprint bound */
	int32_t reclaim_nice;  /* -20 to 19 */
	int32_t reclaim_rt;    /* 0 (none) to 99 */
	int32_t usage_fd;      /* memory.current's fd, or -1 */
	int32_t workload;      /* the program's row (workload.h) */
	uint64_t high_bytes;   /* with usage_fd: pause above */
	uint64_t miss_cost_ns; /* cache workload */
	uint64_t seed;	       /* cache workload */
	int32_t free_mode;     /* enum stress_free */
	uint8_t no_populate;
	uint8_t lazyfree;
	uint64_t answer_delay_ns; /* sleep before each answer */
	/* from the engine's start: stop reading requests (0: never) */
	uint64_t stop_answering_ns;
	/* the co-tenant's allocation size (0: no co-tenant) */
	uint64_t cotenant_bytes;
};

struct stress_shared {
	struct stress_params params;  /* written before the engine starts */
	struct mp_chunk_stats chunks; /* allocated, freed */
	uint64_t requests;	      /* requests read from the shrinker */
	uint64_t chunks_requested;
	uint64_t chunks_readded;      /* could not be freed: re-added */
	uint64_t chunks_short;	      /* asked for, but none left to free */
	uint64_t held;		      /* chunks held now */
	uint64_t add_failed;	      /* shrinker add errors */
	uint64_t throttle_ns;	      /* allocators paused above high */
	struct mp_hist latency;	      /* per request: count read to freed */
	struct mp_hist latency_chunk; /* the same per chunk freed */
	/* per chunk allocated: map and fault in (populate or a write a page) */
	struct mp_hist alloc_latency;
	uint64_t allocs_slow; /* of them, >= STRESS_ALLOC_SLOW_NS */
	/* the cache workload (--strategy, stress/cache.c) */
	uint64_t cache_reads; /* reads served, hits and misses */
	uint64_t cache_hits;
	uint64_t cache_misses; /* chunks re-created */
	uint64_t cache_lost;   /* found dropped by the kernel */
	uint64_t cache_slots;  /* the cache's size in chunks */
	/* the co-tenant (--cotenant, stress/cotenant.c): one op per sample */
	struct mp_hist cotenant_latency;
	uint64_t stopped_answering_ns; /* since the engine's start, 0: never */
	int stop;		       /* set by the parent */
	int state;		       /* enum stress_state */
	char error[256];
};

/* clang-format off */
struct stress_engine_cfg {
	uint64_t chunk_size;
	int threads;
	uint64_t max_chunks;	/* footprint bound: stop allocating there */
	struct mp_shrinker *sh;	/* registered shrinker (or a client) */
	struct stress_shared *shm;
	int reclaim_nice;	/* nice of the reclaim thread (0: unchanged) */
	bool no_mlock;		/* do not mlockall(MCL_CURRENT) at the start */
	enum stress_free free_mode;
	bool no_populate;	/* write every page instead of
				 * MADV_POPULATE_WRITE */
	/*
	 * MADV_FREE every chunk once written (not with STRESS_FREE_HEAP):
	 * reclaim may drop chunks whether the shrinker answers or not; those
	 * found dropped, when freed on request or at the end, are counted in
	 * shm->chunks.lost
	 */
	bool lazyfree;
	int reclaim_rt;		/* >0: SCHED_FIFO priority, else (or if that
				 * is not permitted) reclaim_nice */
	/*
	 * a program that answers late: the reclaim thread sleeps this long
	 * after reading a request, before it frees (counted in the request's
	 * latency)
	 */
	uint64_t answer_delay_ns;
	/*
	 * a program that stops answering: after this long since the start
	 * (0: never) the reclaim thread reads no more requests, as if the
	 * program were stopped, and its registration stays; the allocators
	 * go on
	 */
	uint64_t stop_answering_ns;
	/*
	 * >= 0: the cgroup's usage file; the allocators pause while the
	 * usage is above high_bytes (see throttle() in engine.c)
	 */
	int usage_fd;
	uint64_t high_bytes;
	/* called by the reclaim thread after each request, if set */
	void (*on_reclaim)(uint64_t requested, uint64_t freed, void *arg);
	void *arg;
};
/* clang-format on */

struct stress_engine;

/* One allocation's latency into shm: the histogram, the slow count. */
void stress_alloc_latency(struct stress_shared *shm, uint64_t ns);

/*
 * Start the reclaim thread and the allocator threads; NULL with
 * shm->error set on failure. cfg must live until stress_engine_stop().
 */
struct stress_engine *stress_engine_start(const struct stress_engine_cfg *cfg);
/* Set shm->stop, join the threads, free the chunks; 0, or -1 on error. */
int stress_engine_stop(struct stress_engine *e);
/* Start, run until shm->stop, stop; 0, or -1 with shm->error set. */
int stress_engine_run(const struct stress_engine_cfg *cfg);

/*
 * A shared area for the engine's numbers, pre-faulted; NULL on error.
 * With fd, it is a memfd (close-on-exec) whose fd is returned there, so
 * that an exec'd process can map it with stress_shared_map(); without,
 * anonymous shared memory.
 */
struct stress_shared *stress_shared_new(int *fd);
struct stress_shared *stress_shared_map(int fd);
void stress_shared_free(struct stress_shared *shm);

#endif
