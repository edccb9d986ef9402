/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool of reclaimable chunks, as a shrinker client holds them.
 *
 * One FIFO list per allocator thread, each with its own lock. Allocating
 * takes an address range (from one reservation mapped at the start, or a
 * new mapping), faults every page in with MADV_POPULATE_WRITE, writes
 * every page and appends the chunk to the thread's list. Reclaiming n
 * chunks takes the oldest chunks round-robin over the lists, unlinking
 * them under the list's lock in O(1) each, and gives their pages back with
 * MADV_DONTNEED (adjacent chunks in one call) after dropping the lock: the
 * cost is O(n + lists), independent of how many chunks are held, and no
 * lock is held across madvise()/munmap()/free(). Emptied ranges are
 * reused, so that the allocators never take mmap_lock for writing.
 *
 * With lazyfree, a chunk is marked MADV_FREE once written: reclaim may
 * then drop its pages without swap, and the program need not answer.
 * Every page starts with a non-zero marker (mpctl_chunk_offer() and
 * mpctl_chunk_lost() of lib/mpctl-shrinker.h): reclaim drops a chunk a folio at a time, and a page it dropped
 * reads back zero there (a read maps the zero page, it charges nothing);
 * a chunk with any page dropped is lost. The list links then live apart from the chunks (a
 * node each), as a link inside a dropped page would be lost. The marker
 * is checked when a chunk is freed on request and when the pool is
 * destroyed; the chunks found dropped are counted in lost.
 */
#ifndef MP_CHUNKS_H
#define MP_CHUNKS_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_stats.h"

/* Counters, safe to place in memory shared with another process. */
/* clang-format off */
struct mp_chunk_stats {
	uint64_t allocated;	/* chunks allocated and touched */
	uint64_t freed;		/* chunks freed on request */
	uint64_t alloc_ns;	/* time spent allocating and touching */
	uint64_t alloc_failed;	/* mmap failures */
	uint64_t free_failed;	/* madvise/munmap failures (chunks kept, to
				 * be re-added) */
	uint64_t lost;		/* lazyfree: found dropped by the kernel */
};

struct mp_chunk_pool_cfg {
	uint64_t chunk_size;	/* bytes; >= 16 */
	int lists;		/* one per allocator thread; >= 1 */
	bool heap;		/* malloc()/free() instead of mmap()/munmap() */
	bool no_touch;		/* do not write every page */
	bool no_populate;	/* no MADV_POPULATE_WRITE: the writes to
				 * every page fault them in, one by one */
	bool unmap;		/* free with munmap() rather than giving the
				 * pages back with MADV_DONTNEED and reusing
				 * the address range */
	uint64_t reserve_chunks;	/* address space mapped at once for so
				 * many chunks (0: one mapping per chunk) */
	bool lazyfree;		/* MADV_FREE each chunk once written; not
				 * with heap (EINVAL) */
};
/* clang-format on */

struct mp_chunk_pool;

/* st may be NULL (the pool keeps its own); NULL with errno on failure. */
struct mp_chunk_pool *mp_chunks_new(const struct mp_chunk_pool_cfg *cfg,
				    struct mp_chunk_stats *st);
/*
 * Allocate, touch and append a chunk to list (0 .. lists - 1); with
 * lazyfree, write its marker and MADV_FREE it (a chunk that cannot be
 * marked is given back: NULL, counted in alloc_failed).
 */
void *mp_chunk_alloc(struct mp_chunk_pool *p, int list);
/*
 * Free up to n of the oldest chunks. Returns the number freed (those found
 * dropped included, counted in lost too); chunks that could not be
 * unmapped are put back and counted in *kept (to be re-added to the
 * shrinker by the caller).
 */
uint64_t mp_chunks_reclaim(struct mp_chunk_pool *p, uint64_t n, uint64_t *kept);
uint64_t mp_chunks_held(const struct mp_chunk_pool *p);
const struct mp_chunk_stats *mp_chunks_stats(const struct mp_chunk_pool *p);
/*
 * Fault in the whole pages of [c, c + size) with MADV_POPULATE_WRITE: 0,
 * also where the kernel lacks it (the caller's writes fault them in), or
 * -1 with errno ENOMEM or EFAULT (out of memory).
 */
int mp_chunk_populate(void *c, uint64_t size);
/* Free every chunk and the pool; lazyfree: count the held ones dropped. */
void mp_chunks_destroy(struct mp_chunk_pool *p);

#endif
