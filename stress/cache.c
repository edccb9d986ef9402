// SPDX-License-Identifier: GPL-2.0
/*
 * The cache workload, see cache.h.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "mp_pressure.h"
#include "mp_thread.h"

#define LOAD(x)	  __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)
#define SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

struct slot {
	pthread_mutex_t lock;
	bool held;
	bool ref;  /* read since the clock hand passed */
	char *mem; /* the chunk; NULL when not held (munmap, free) */
};

struct cache {
	const struct stress_cache_cfg *cfg;
	struct stress_shared *shm;
	char *base; /* the slots' mapping (reuse), or NULL */
	struct slot *slot;
	double *cdf; /* Zipf popularity, cumulative */
	size_t page;
	bool lazy;     /* MADV_FREE once filled */
	uint64_t hand; /* the clock's, reclaim thread only */
};

struct reader {
	struct cache *c;
	uint64_t rng;
};

static void chunk_release(struct cache *c, char *p)
{
	if (c->cfg->free_mode == STRESS_FREE_HEAP)
		free(p);
	else
		munmap(p, c->cfg->chunk_size);
}

static void cache_error(struct cache *c, const char *what, int errnum)
{
	if (!c->shm->error[0])
		snprintf(c->shm->error, sizeof(c->shm->error), "cache: %s: %s",
			 what, strerror(errnum));
	SET(c->shm->stop, 1);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint64_t zipf_key(struct cache *c, uint64_t *rng)
{
	double u = (double)(xorshift(rng) >> 11) / 9007199254740992.0;
	uint64_t lo = 0, hi = c->cfg->slots - 1;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (c->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the pages' marker words: all set means the chunk is intact */
static bool intact(struct cache *c, uint64_t i)
{
	volatile uint64_t *p;
	uint64_t off;

	for (off = 0; off < c->cfg->chunk_size; off += c->page) {
		p = (volatile uint64_t *)(c->slot[i].mem + off);
		if (*p != i + 1)
			return false;
	}
	return true;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = mp_now_ns(CLOCK_MONOTONIC) + ns;

	while (mp_now_ns(CLOCK_MONOTONIC) < end)
		;
}

/* as the allocator engine's throttle (engine.c): at most 1 s in a row */
static void throttle(struct cache *c)
{
	struct timespec ts = { 0, 1000000 };
	char buf[32];
	ssize_t n;
	int i;

	for (i = 0; i < 1000 && !LOAD(c->shm->stop); i++) {
		n = pread(c->cfg->usage_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return;
		buf[n] = '\0';
		if (strtoull(buf, NULL, 10) <= c->cfg->high_bytes)
			return;
		nanosleep(&ts, NULL);
	}
}

/* a fresh chunk (munmap, free), its pages faulted in unless told not */
static char *chunk_new(struct cache *c)
{
	uint64_t size = c->cfg->chunk_size;
	char *p;

	if (c->cfg->free_mode == STRESS_FREE_HEAP) {
		p = malloc(size);
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	if (p && !c->cfg->no_populate && mp_chunk_populate(p, size)) {
		chunk_release(c, p);
		p = NULL;
	}
	return p;
}

/*
 * Re-create chunk i: its memory (a fresh chunk, or the slot's range whose
 * pages were given back), every page written, then the fixed cost. -1 if
 * no memory could be had.
 */
static int fill(struct cache *c, uint64_t i)
{
	uint64_t t0 = mp_now_ns(CLOCK_MONOTONIC), off;
	struct slot *s = &c->slot[i];
	char *p = c->base ? c->base + i * c->cfg->chunk_size : s->mem;

	if (!p)
		p = chunk_new(c);
	if (!p) {
		ADD(c->shm->chunks.alloc_failed, 1);
		return -1;
	}
	for (off = 0; off < c->cfg->chunk_size; off += c->page)
		*(uint64_t *)(p + off) = i + 1;
	s->mem = p;
	stress_alloc_latency(c->shm, mp_now_ns(CLOCK_MONOTONIC) - t0);
	spin_ns(c->cfg->miss_cost_ns);
	if (c->lazy)
		madvise(p, c->cfg->chunk_size, MADV_FREE);
	return 0;
}

static void read_one(struct cache *c, uint64_t i)
{
	struct slot *s = &c->slot[i];
	struct mp_err err;
	bool was_held;

	pthread_mutex_lock(&s->lock);
	was_held = s->held;
	if (was_held && intact(c, i)) {
		s->ref = true;
		pthread_mutex_unlock(&s->lock);
		ADD(c->shm->cache_hits, 1);
		ADD(c->shm->cache_reads, 1);
		return;
	}
	if (was_held)
		ADD(c->shm->cache_lost, 1);
	if (c->cfg->usage_fd >= 0)
		throttle(c);
	if (fill(c, i)) {
		/* out of memory or address space: back off */
		struct timespec ts = { 0, 1000000 };

		pthread_mutex_unlock(&s->lock);
		nanosleep(&ts, NULL);
		return;
	}
	s->held = true;
	s->ref = true;
	pthread_mutex_unlock(&s->lock);
	ADD(c->shm->cache_misses, 1);
	ADD(c->shm->cache_reads, 1);
	if (!was_held) {
		ADD(c->shm->chunks.allocated, 1);
		ADD(c->shm->held, 1);
		if (c->cfg->sh && mp_shrinker_add(c->cfg->sh, 1, &err))
			ADD(c->shm->add_failed, 1);
	}
}

static void *reader_thread(void *arg)
{
	struct reader *r = arg;

	while (!LOAD(r->c->shm->stop))
		read_one(r->c, zipf_key(r->c, &r->rng));
	return NULL;
}

/* drop up to n chunks in CLOCK order; returns how many */
static uint64_t drop(struct cache *c, uint64_t n)
{
	uint64_t freed = 0, seen = 0, slots = c->cfg->slots;

	while (freed < n && seen < 2 * slots) {
		struct slot *s = &c->slot[c->hand];

		c->hand = (c->hand + 1) % slots;
		seen++;
		if (pthread_mutex_trylock(&s->lock))
			continue;
		if (s->held && s->ref) {
			s->ref = false;
		} else if (s->held) {
			if (c->base) {
				madvise(s->mem, c->cfg->chunk_size,
					MADV_DONTNEED);
			} else {
				chunk_release(c, s->mem);
				s->mem = NULL;
			}
			s->held = false;
			freed++;
		}
		pthread_mutex_unlock(&s->lock);
	}
	ADD(c->shm->held, -freed);
	return freed;
}

static void answer(struct cache *c)
{
	struct pollfd pfd = { .fd = mp_shrinker_fd(c->cfg->sh),
			      .events = POLLIN };
	uint64_t n, freed, t0, dt;
	struct mp_err err;
	int ret;

	while (!LOAD(c->shm->stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		t0 = mp_now_ns(CLOCK_MONOTONIC);
		ret = mp_shrinker_read(c->cfg->sh, &n, &err);
		if (ret < 0) {
			cache_error(c, err.msg, 0);
			return;
		}
		if (!ret)
			continue;
		freed = drop(c, n);
		dt = mp_now_ns(CLOCK_MONOTONIC) - t0;
		ADD(c->shm->requests, 1);
		ADD(c->shm->chunks_requested, n);
		ADD(c->shm->chunks.freed, freed);
		if (freed < n)
			ADD(c->shm->chunks_short, n - freed);
		if (freed) {
			mp_hist_add(&c->shm->latency, dt);
			mp_hist_add(&c->shm->latency_chunk, dt / freed);
		}
	}
}

static int setup(struct cache *c, const struct stress_cache_cfg *cfg)
{
	double sum = 0, acc = 0;
	uint64_t i;

	c->cfg = cfg;
	c->shm = cfg->shm;
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->lazy = cfg->lazyfree;
	c->slot = calloc(cfg->slots, sizeof(*c->slot));
	c->cdf = calloc(cfg->slots, sizeof(*c->cdf));
	if (!c->slot || !c->cdf)
		return -1;
	if (cfg->free_mode == STRESS_FREE_REUSE) {
		c->base = mmap(NULL, cfg->slots * cfg->chunk_size,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);
		if (c->base == MAP_FAILED) {
			c->base = NULL;
			return -1;
		}
	}
	for (i = 0; i < cfg->slots; i++) {
		pthread_mutex_init(&c->slot[i].lock, NULL);
		if (c->base)
			c->slot[i].mem = c->base + i * cfg->chunk_size;
		sum += 1.0 / (double)(i + 1);
	}
	for (i = 0; i < cfg->slots; i++) {
		acc += 1.0 / (double)(i + 1) / sum;
		c->cdf[i] = acc;
	}
	c->cdf[cfg->slots - 1] = 1.0;
	SET(c->shm->cache_slots, cfg->slots);
	return 0;
}

int stress_cache_run(const struct stress_cache_cfg *cfg)
{
	struct cache c = { 0 };
	struct reader *r = NULL;
	pthread_t *thr = NULL;
	struct timespec ts = { 0, 5000000 };
	int i, started = 0, ret = -1;

	if (setup(&c, cfg)) {
		cache_error(&c, "setup", errno ? errno : ENOMEM);
		goto out;
	}
	r = calloc(cfg->threads, sizeof(*r));
	thr = calloc(cfg->threads, sizeof(*thr));
	if (!r || !thr) {
		cache_error(&c, "setup", ENOMEM);
		goto out;
	}
	SET(cfg->shm->state, STRESS_RUNNING);
	for (i = 0; i < cfg->threads; i++) {
		r[i].c = &c;
		/* never 0: xorshift would stay there */
		r[i].rng = (cfg->seed + 1) * 0x9e3779b97f4a7c15ULL + i + 1;
		if (mp_thread_start(&thr[i], reader_thread, &r[i])) {
			cache_error(&c, "reader threads", EAGAIN);
			break;
		}
		started++;
	}
	if (cfg->sh)
		answer(&c);
	while (!LOAD(cfg->shm->stop))
		nanosleep(&ts, NULL);
	for (i = 0; i < started; i++)
		pthread_join(thr[i], NULL);
	ret = cfg->shm->error[0] ? -1 : 0;
out:
	if (c.base)
		munmap(c.base, cfg->slots * cfg->chunk_size);
	if (c.slot)
		for (uint64_t k = 0; k < cfg->slots; k++) {
			if (!c.base && c.slot[k].mem)
				chunk_release(&c, c.slot[k].mem);
			pthread_mutex_destroy(&c.slot[k].lock);
		}
	free(c.slot);
	free(c.cdf);
	free(r);
	free(thr);
	SET(cfg->shm->held, 0);
	SET(cfg->shm->state, ret ? STRESS_FAILED : STRESS_DONE);
	return ret;
}
