// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mp_chunks.h"
#include "mpctl-shrinker.h"

/*
 * A list node: the chunk's own first bytes, or with lazyfree a node apart
 * (reclaim may drop the chunk's pages, a link in them with it)
 */
struct mp_chunk {
	struct mp_chunk *next;
	char *mem; /* lazyfree: the chunk (else it is the node) */
};

struct chunk_list {
	pthread_mutex_t lock;
	struct mp_chunk *head, *tail; /* oldest first */
	uint64_t n;
} __attribute__((aligned(64)));

struct mp_chunk_pool {
	uint64_t size;
	long page;
	bool heap, touch, unmap, populate, lazy;
	/* address ranges whose pages were given back, to be reused */
	pthread_mutex_t empty_lock;
	void **empty;
	size_t nempty, empty_cap;
	void *reserve; /* one mapping carved into chunks */
	size_t reserve_len;
	int nlists;
	unsigned int cursor; /* where the next reclaim starts */
	uint64_t held;
	struct mp_chunk_stats own;
	struct mp_chunk_stats *st;
	struct chunk_list *lists;
};

/* MADV_POPULATE_WRITE is not supported: any thread may find out */
static bool populate_unsupported; /* __atomic */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int push_empty(struct mp_chunk_pool *p, void **c, size_t n);

/*
 * Address space for n chunks in one mapping, so that allocating never
 * calls mmap(): a writer on mmap_lock would queue behind allocators stuck
 * in reclaim, and every MADV_DONTNEED of the reclaim thread behind it.
 */
static void reserve(struct mp_chunk_pool *p, uint64_t n)
{
	void *r;
	uint64_t i;

	if (n > (1ULL << 40) / p->size)
		n = (1ULL << 40) / p->size;
	r = mmap(NULL, n * p->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return; /* chunks get their own mappings */
	p->empty = malloc(n * sizeof(*p->empty));
	if (!p->empty) {
		munmap(r, n * p->size);
		return;
	}
	p->empty_cap = n;
	/* lowest addresses on top of the stack */
	for (i = 0; i < n; i++)
		p->empty[i] = (char *)r + (n - 1 - i) * p->size;
	p->nempty = n;
	p->reserve = r;
	p->reserve_len = n * p->size;
}

struct mp_chunk_pool *mp_chunks_new(const struct mp_chunk_pool_cfg *cfg,
				    struct mp_chunk_stats *st)
{
	struct mp_chunk_pool *p;
	int i;

	/*
	 * Chunks are given back with MADV_DONTNEED, which takes whole pages:
	 * a chunk that is not a page multiple fails with EINVAL, or a
	 * batched range would reach into the held neighbour's first page.
	 */
	if (cfg->chunk_size < sizeof(struct mp_chunk) * 2 || cfg->lists < 1 ||
	    cfg->chunk_size % (uint64_t)sysconf(_SC_PAGESIZE) ||
	    (cfg->lazyfree && cfg->heap)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (posix_memalign((void **)&p->lists, 64,
			   sizeof(*p->lists) * cfg->lists)) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	memset(p->lists, 0, sizeof(*p->lists) * cfg->lists);
	for (i = 0; i < cfg->lists; i++)
		pthread_mutex_init(&p->lists[i].lock, NULL);
	p->size = cfg->chunk_size;
	p->page = sysconf(_SC_PAGESIZE);
	p->heap = cfg->heap;
	p->touch = !cfg->no_touch;
	p->unmap = cfg->unmap;
	p->populate = p->touch && !cfg->no_populate;
	p->lazy = cfg->lazyfree;
	pthread_mutex_init(&p->empty_lock, NULL);
	if (cfg->reserve_chunks && !p->heap && !p->unmap)
		reserve(p, cfg->reserve_chunks);
	p->nlists = cfg->lists;
	p->st = st ? st : &p->own;
	return p;
}

static void *pop_empty(struct mp_chunk_pool *p)
{
	void *c = NULL;

	pthread_mutex_lock(&p->empty_lock);
	if (p->nempty)
		c = p->empty[--p->nempty];
	pthread_mutex_unlock(&p->empty_lock);
	return c;
}

/* Keep n emptied ranges for reuse; 0, or -1 if the stack cannot grow. */
static int push_empty(struct mp_chunk_pool *p, void **c, size_t n)
{
	int ret = 0;

	pthread_mutex_lock(&p->empty_lock);
	if (p->nempty + n > p->empty_cap) {
		size_t cap = (p->nempty + n) * 2 + 64;
		void **e = realloc(p->empty, cap * sizeof(*e));

		if (!e) {
			ret = -1;
			goto out;
		}
		p->empty = e;
		p->empty_cap = cap;
	}
	memcpy(p->empty + p->nempty, c, n * sizeof(*c));
	p->nempty += n;
out:
	pthread_mutex_unlock(&p->empty_lock);
	return ret;
}

/*
 * Fresh pages for a chunk. A range emptied by an earlier reclaim is
 * reused when there is one: MADV_DONTNEED gave its pages back, so faulting
 * it in again allocates (and charges) new zeroed pages, the same work as a
 * new mapping, without taking mmap_lock for writing. That matters: a
 * munmap() waits for the write lock behind every allocator populating a
 * mapping, and those can be stuck in memcg reclaim at the limit, which is
 * exactly when the shrinker must free memory fast.
 */
static void *chunk_map(struct mp_chunk_pool *p)
{
	void *c;

	if (p->heap) {
		c = malloc(p->size);
		if (!c)
			return NULL;
	} else {
		c = p->unmap ? NULL : pop_empty(p);
		if (!c) {
			/* mmap, not malloc: glibc's dynamic threshold keeps
			 * frees */
			c = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (c == MAP_FAILED)
				return NULL;
		}
	}
	if (p->populate && mp_chunk_populate(c, p->size)) {
		if (p->heap)
			free(c);
		else
			munmap(c, p->size);
		return NULL;
	}
	return c;
}

/*
 * One call faults every page in, far cheaper than a fault each; of
 * malloc()'s memory the whole pages inside it (an unaligned address is
 * EINVAL, which must not read as "not supported")
 */
int mp_chunk_populate(void *c, uint64_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)c + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)c + size) & ~(page - 1);

	if (end <= start ||
	    __atomic_load_n(&populate_unsupported, __ATOMIC_RELAXED) ||
	    !madvise((void *)start, end - start, MADV_POPULATE_WRITE))
		return 0;
	if (errno == EINVAL) { /* before Linux 5.14 */
		__atomic_store_n(&populate_unsupported, true, __ATOMIC_RELAXED);
		return 0;
	}
	return errno == ENOMEM || errno == EFAULT ? -1 : 0;
}

/* Give a chunk's memory back to the kernel. */
static int chunk_unmap(struct mp_chunk_pool *p, void *c)
{
	if (p->heap) {
		free(c);
		return 0;
	}
	if (p->unmap)
		return munmap(c, p->size);
	return madvise(c, p->size, MADV_DONTNEED);
}

/* Give back the memory of a chunk that never made it to a list. */
static void chunk_drop(struct mp_chunk_pool *p, void *c)
{
	if (p->heap) {
		free(c);
		return;
	}
	if (!p->unmap && !madvise(c, p->size, MADV_DONTNEED) &&
	    !push_empty(p, &c, 1))
		return;
	munmap(c, p->size); /* of the reservation: a hole, never reused */
}

void *mp_chunk_alloc(struct mp_chunk_pool *p, int list)
{
	struct chunk_list *l = &p->lists[list % p->nlists];
	uint64_t t0 = mono_ns(), off;
	struct mp_chunk *c;
	char *b;

	b = chunk_map(p);
	if (!b)
		goto err;
	if (p->touch)
		for (off = 0; off < p->size; off += p->page)
			b[off] = (char)(off >> 12 | 1);
	if (p->lazy) {
		/* written first: MADV_FREE applies to what is there */
		c = malloc(sizeof(*c));
		if (!c)
			goto err_drop;
		/* a marker in every page (reclaim may drop some of them),
		 * then MADV_FREE: the library's offer */
		if (mpctl_chunk_offer(b, p->size)) {
			free(c);
			goto err_drop;
		}
		c->mem = b;
	} else {
		c = (struct mp_chunk *)b;
	}
	c->next = NULL;
	pthread_mutex_lock(&l->lock);
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	l->n++;
	pthread_mutex_unlock(&l->lock);
	__atomic_add_fetch(&p->held, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->allocated, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->alloc_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	return b;
err_drop:
	chunk_drop(p, b);
err:
	__atomic_add_fetch(&p->st->alloc_failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The chunk of a node: without lazyfree, the same address (no load) */
static char *chunk_mem(const struct mp_chunk_pool *p, struct mp_chunk *c)
{
	return p->lazy ? c->mem : (char *)c;
}

/*
 * A lazyfree chunk reclaim dropped, in whole or in part: a page marker reads
 * zero. Read before its pages are given back (after, every chunk reads zero).
 */
static bool dropped(const struct mp_chunk_pool *p, const char *mem)
{
	return p->lazy && mpctl_chunk_lost(mem, p->size) == 1;
}

/* The node of a chunk freed: a lazyfree node is apart, the others are gone */
static void node_free(struct mp_chunk_pool *p, struct mp_chunk *c)
{
	if (p->lazy)
		free(c);
}

/* Unlink up to n of the oldest chunks of a list onto *out. */
static uint64_t take(struct chunk_list *l, uint64_t n, struct mp_chunk **out)
{
	struct mp_chunk *first, *last;
	uint64_t got = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&l->lock);
	first = last = l->head;
	if (first) {
		got = 1;
		while (got < n && last->next) {
			last = last->next;
			got++;
		}
		l->head = last->next;
		if (!l->head)
			l->tail = NULL;
		l->n -= got;
	}
	pthread_mutex_unlock(&l->lock);
	if (got) {
		last->next = *out;
		*out = first;
	}
	return got;
}

static void put_back(struct mp_chunk_pool *p, struct mp_chunk *c)
{
	struct chunk_list *l = &p->lists[0];

	pthread_mutex_lock(&l->lock);
	c->next = l->head;
	l->head = c;
	if (!l->tail)
		l->tail = c;
	l->n++;
	pthread_mutex_unlock(&l->lock);
}

#define BATCH 64

/* Remember emptied ranges; if that fails, unmap them instead. */
static void flush_empty(struct mp_chunk_pool *p, void **c, size_t n)
{
	size_t i;

	if (push_empty(p, c, n))
		for (i = 0; i < n; i++)
			munmap(c[i], p->size);
}

/* a chunk of a batch, read before its pages are given back */
struct batch_item {
	char *mem;
	struct mp_chunk *c;
	bool gone; /* lazyfree: found dropped */
};

static int cmp_addr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct batch_item *)a)->mem;
	uintptr_t y = (uintptr_t)((const struct batch_item *)b)->mem;

	return x < y ? -1 : x > y;
}

/*
 * Give back the pages of up to BATCH chunks: sorted by address, adjacent
 * chunks (common, as they are carved from one reservation) go in one
 * madvise() call, one page-table walk and one TLB flush. The emptied
 * ranges are kept for reuse. Markers are read first: MADV_DONTNEED
 * zeroes them all.
 */
static uint64_t release_batch(struct mp_chunk_pool *p, struct mp_chunk **b,
			      size_t n, uint64_t *fail, uint64_t *lost)
{
	struct batch_item it[BATCH];
	size_t i = 0, j, k, done = 0;
	void *ok[BATCH];

	for (k = 0; k < n; k++) {
		it[k].c = b[k];
		it[k].mem = chunk_mem(p, b[k]);
		it[k].gone = dropped(p, it[k].mem);
	}
	qsort(it, n, sizeof(*it), cmp_addr);
	while (i < n) {
		for (j = i + 1; j < n && it[j].mem == it[j - 1].mem + p->size;
		     j++)
			;
		if (madvise(it[i].mem, (j - i) * p->size, MADV_DONTNEED)) {
			/* one by one: what fails goes back */
			for (k = i; k < j; k++) {
				if (chunk_unmap(p, it[k].mem)) {
					put_back(p, it[k].c);
					(*fail)++;
					it[k].mem = NULL;
				}
			}
		}
		for (k = i; k < j; k++) {
			if (!it[k].mem)
				continue;
			ok[done++] = it[k].mem;
			*lost += it[k].gone;
			node_free(p, it[k].c);
		}
		i = j;
	}
	if (done)
		flush_empty(p, ok, done);
	return done;
}

uint64_t mp_chunks_reclaim(struct mp_chunk_pool *p, uint64_t n, uint64_t *kept)
{
	struct mp_chunk *todo = NULL, *c, *next, *batch[BATCH];
	uint64_t got = 0, freed = 0, fail = 0, lost = 0, share;
	bool gone;
	char *mem;
	size_t nb = 0;
	unsigned int start, i, left;
	int pass;

	start = __atomic_fetch_add(&p->cursor, 1, __ATOMIC_RELAXED);
	/* a fair share from each list first, then whatever is left */
	for (pass = 0; pass < 2 && got < n; pass++) {
		for (i = 0; i < (unsigned int)p->nlists && got < n; i++) {
			left = (unsigned int)p->nlists - i;
			share = pass ? n - got : (n - got + left - 1) / left;
			got += take(&p->lists[(start + i) % p->nlists], share,
				    &todo);
		}
	}
	/* no lock is held from here on */
	if (p->heap || p->unmap) {
		for (c = todo; c; c = next) {
			next = c->next;
			mem = chunk_mem(p, c);
			gone = dropped(p, mem);
			if (chunk_unmap(p, mem)) {
				put_back(p, c);
				fail++;
			} else {
				freed++;
				lost += gone;
				node_free(p, c);
			}
		}
	}
	while (!p->heap && !p->unmap && todo) {
		for (nb = 0; todo && nb < BATCH; todo = todo->next)
			batch[nb++] = todo;
		freed += release_batch(p, batch, nb, &fail, &lost);
	}
	__atomic_sub_fetch(&p->held, freed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->freed, freed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->free_failed, fail, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->lost, lost, __ATOMIC_RELAXED);
	if (kept)
		*kept = fail;
	return freed;
}

uint64_t mp_chunks_held(const struct mp_chunk_pool *p)
{
	return __atomic_load_n(&p->held, __ATOMIC_RELAXED);
}

const struct mp_chunk_stats *mp_chunks_stats(const struct mp_chunk_pool *p)
{
	return p->st;
}

static bool in_reserve(const struct mp_chunk_pool *p, const void *c)
{
	return p->reserve && (const char *)c >= (const char *)p->reserve &&
	       (const char *)c < (const char *)p->reserve + p->reserve_len;
}

void mp_chunks_destroy(struct mp_chunk_pool *p)
{
	struct mp_chunk *c, *next;
	uint64_t lost = 0;
	char *mem;
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nlists; i++) {
		for (c = p->lists[i].head; c; c = next) {
			next = c->next;
			mem = chunk_mem(p, c);
			lost += dropped(p, mem);
			node_free(p, c);
			if (p->heap)
				free(mem);
			else if (!in_reserve(p, mem))
				munmap(mem, p->size);
		}
		pthread_mutex_destroy(&p->lists[i].lock);
	}
	while (p->nempty) {
		void *e = p->empty[--p->nempty];

		if (!in_reserve(p, e))
			munmap(e, p->size);
	}
	if (p->reserve)
		munmap(p->reserve, p->reserve_len);
	__atomic_add_fetch(&p->st->lost, lost, __ATOMIC_RELAXED);
	free(p->empty);
	pthread_mutex_destroy(&p->empty_lock);
	free(p->lists);
	free(p);
}
