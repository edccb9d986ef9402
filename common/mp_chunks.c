// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mp_chunks.h"

struct mp_chunk {
	struct mp_chunk *next;
};

struct chunk_list {
	pthread_mutex_t lock;
	struct mp_chunk *head, *tail;	/* oldest first */
	uint64_t n;
} __attribute__((aligned(64)));

struct mp_chunk_pool {
	uint64_t size;
	long page;
	bool heap, touch;
	int nlists;
	unsigned int cursor;	/* where the next reclaim starts */
	uint64_t held;
	struct mp_chunk_stats own;
	struct mp_chunk_stats *st;
	struct chunk_list *lists;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct mp_chunk_pool *mp_chunks_new(const struct mp_chunk_pool_cfg *cfg,
				    struct mp_chunk_stats *st)
{
	struct mp_chunk_pool *p;
	int i;

	if (cfg->chunk_size < sizeof(struct mp_chunk) * 2 || cfg->lists < 1) {
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
	p->nlists = cfg->lists;
	p->st = st ? st : &p->own;
	return p;
}

static void *chunk_map(struct mp_chunk_pool *p)
{
	void *c;

	if (p->heap)
		return malloc(p->size);
	/* mmap, not malloc: glibc's dynamic threshold keeps freed chunks */
	c = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (p->touch ? MAP_POPULATE : 0),
		 -1, 0);
	return c == MAP_FAILED ? NULL : c;
}

static int chunk_unmap(struct mp_chunk_pool *p, void *c)
{
	if (p->heap) {
		free(c);
		return 0;
	}
	return munmap(c, p->size);
}

void *mp_chunk_alloc(struct mp_chunk_pool *p, int list)
{
	struct chunk_list *l = &p->lists[list % p->nlists];
	uint64_t t0 = mono_ns(), off;
	struct mp_chunk *c;
	char *b;

	c = chunk_map(p);
	if (!c) {
		__atomic_add_fetch(&p->st->alloc_failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	b = (char *)c;
	if (p->touch)
		for (off = 0; off < p->size; off += p->page)
			b[off] = (char)(off >> 12 | 1);
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
	return c;
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

uint64_t mp_chunks_reclaim(struct mp_chunk_pool *p, uint64_t n,
			   uint64_t *kept)
{
	struct mp_chunk *todo = NULL, *c, *next;
	uint64_t got = 0, freed = 0, fail = 0, share;
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
	for (c = todo; c; c = next) {
		next = c->next;
		if (chunk_unmap(p, c)) {
			put_back(p, c);
			fail++;
		} else {
			freed++;
		}
	}
	__atomic_sub_fetch(&p->held, freed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->freed, freed, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->st->free_failed, fail, __ATOMIC_RELAXED);
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

void mp_chunks_destroy(struct mp_chunk_pool *p)
{
	struct mp_chunk *c, *next;
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nlists; i++) {
		for (c = p->lists[i].head; c; c = next) {
			next = c->next;
			chunk_unmap(p, c);
		}
		pthread_mutex_destroy(&p->lists[i].lock);
	}
	free(p->lists);
	free(p);
}
