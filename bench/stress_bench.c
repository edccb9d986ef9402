// SPDX-License-Identifier: GPL-2.0
/*
 * Micro-benchmarks for bench/stress.sh, each printing one JSON object:
 *
 *   stress_bench alloc  CHUNK SECONDS [fault]
 *                                      fresh-chunk allocation rate: mmap,
 *                                      MADV_POPULATE_WRITE (or a page
 *                                      fault each), write every page
 *                                      (munmap untimed), one thread
 *   stress_bench memset SECONDS        memset bandwidth on a resident
 *                                      64 MiB buffer, one thread
 *   stress_bench free   CHUNK COUNT    cost of freeing one populated chunk
 *                                      with munmap and with MADV_DONTNEED
 *   stress_bench free-busy CHUNK COUNT THREADS
 *                                      the same with THREADS allocating
 *                                      in the same process meanwhile
 *   stress_bench scale  N K            time to free K chunks out of N:
 *                                      the upstream loop (scan every slot
 *                                      from 0, a mutex per slot) against
 *                                      mp_chunks (per-thread FIFO lists)
 *
 * Built by bench/stress.sh against the objects of common/.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "mp_chunks.h"
#include "mp_json.h"
#include "mp_parse.h"

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool by_fault; /* fault every page in by writing it */

static void *populate(uint64_t size)
{
	char *c = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t off;

	if (c == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (!by_fault && madvise(c, size, MADV_POPULATE_WRITE) &&
	    errno != EINVAL) {
		perror("madvise");
		exit(1);
	}
	for (off = 0; off < size; off += 4096)
		c[off] = (char)(off >> 12 | 1);
	return c;
}

static int emit(json_t *o)
{
	int ret = mp_json_emit(stdout, o, false);

	json_decref(o);
	return ret ? 1 : 0;
}

#define RING 64

static int bench_alloc(uint64_t chunk, double secs)
{
	void *ring[RING] = { 0 };
	uint64_t t0, busy = 0, n = 0, end;
	unsigned int i = 0;

	end = now() + (uint64_t)(secs * 1e9);
	while (now() < end) {
		if (ring[i])
			munmap(ring[i], chunk);
		t0 = now();
		ring[i] = populate(chunk);
		busy += now() - t0;
		n++;
		i = (i + 1) % RING;
	}
	for (i = 0; i < RING; i++)
		if (ring[i])
			munmap(ring[i], chunk);
	/* clang-format off */
	return emit(json_pack("{s:s, s:s, s:I, s:I, s:I, s:f}",
			      "bench", "alloc",
			      "method", by_fault ? "fault" : "populate",
			      "chunk_bytes", (json_int_t)chunk,
			      "chunks", (json_int_t)n,
			      "busy_ns", (json_int_t)busy,
			      "bytes_per_s", (double)n * (double)chunk * 1e9 /
			      (double)busy));
	/* clang-format on */
}

static int bench_memset(double secs)
{
	uint64_t size = 64ULL << 20, n = 0, t0, end;
	char *b = populate(size);
	double dt;

	t0 = now();
	end = t0 + (uint64_t)(secs * 1e9);
	while (now() < end) {
		memset(b, (int)n, size);
		n++;
	}
	dt = (double)(now() - t0);
	/* keep the stores */
	if (b[size - 1] == 42 && b[0] == 43)
		puts("");
	munmap(b, size);
	return emit(json_pack("{s:s, s:f}", "bench", "memset", "bytes_per_s",
			      (double)n * (double)size * 1e9 / dt));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int bench_free(uint64_t chunk, int count)
{
	uint64_t *um = calloc(count, sizeof(*um));
	uint64_t *dn = calloc(count, sizeof(*dn));
	uint64_t t0;
	int i;

	for (i = 0; i < count; i++) {
		void *c = populate(chunk);

		t0 = now();
		munmap(c, chunk);
		um[i] = now() - t0;
		c = populate(chunk);
		t0 = now();
		madvise(c, chunk, MADV_DONTNEED);
		dn[i] = now() - t0;
		munmap(c, chunk);
	}
	qsort(um, count, sizeof(*um), cmp_u64);
	qsort(dn, count, sizeof(*dn), cmp_u64);
	/* clang-format off */
	return emit(json_pack("{s:s, s:I, s:I, s:I, s:I}",
			      "bench", "free",
			      "chunk_bytes", (json_int_t)chunk,
			      "count", (json_int_t)count,
			      "munmap_p50_ns", (json_int_t)um[count / 2],
			      "dontneed_p50_ns", (json_int_t)dn[count / 2]));
	/* clang-format on */
}

static int busy_stop;
static uint64_t busy_chunk;

/* An allocator like the engine's: populate, write, unmap, again. */
static void *busy_thread(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED))
		munmap(populate(busy_chunk), busy_chunk);
	return NULL;
}

/*
 * The same as bench_free, while threads of the same process allocate:
 * the conditions the engine's reclaim thread works in (TLB shootdowns to
 * the allocators' CPUs, contention on the page allocator).
 */
static int bench_free_busy(uint64_t chunk, int count, int threads)
{
	pthread_t thr[64];
	uint64_t *um = calloc(count, sizeof(*um)), t0;
	int i;

	busy_chunk = chunk;
	if (threads > 64)
		threads = 64;
	for (i = 0; i < threads; i++)
		pthread_create(&thr[i], NULL, busy_thread, NULL);
	for (i = 0; i < count; i++) {
		void *c = populate(chunk);

		t0 = now();
		munmap(c, chunk);
		um[i] = now() - t0;
	}
	__atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < threads; i++)
		pthread_join(thr[i], NULL);
	qsort(um, count, sizeof(*um), cmp_u64);
	/* clang-format off */
	return emit(json_pack("{s:s, s:I, s:I, s:I, s:I}",
			      "bench", "free-busy",
			      "chunk_bytes", (json_int_t)chunk,
			      "count", (json_int_t)count,
			      "threads", (json_int_t)threads,
			      "munmap_p50_ns", (json_int_t)um[count / 2]));
	/* clang-format on */
}

/* The upstream test's reclaim loop, unchanged but for its end condition. */
static uint64_t upstream_reclaim(void **chunks, pthread_mutex_t *locks,
				 size_t num, uint64_t n)
{
	size_t i = 0, scanned = 0;

	while (n && scanned < num) {
		pthread_mutex_lock(&locks[i]);
		if (chunks[i]) {
			free(chunks[i]);
			chunks[i] = NULL;
			n--;
		}
		pthread_mutex_unlock(&locks[i]);
		i = (i + 1) % num;
		scanned++;
	}
	return scanned;
}

#define SCALE_CHUNK 64
#define SCALE_REQS  20

static int bench_scale(uint64_t num, uint64_t k)
{
	struct mp_chunk_pool_cfg cfg = {
		.chunk_size = SCALE_CHUNK,
		.lists = 4,
		.heap = true,
		.no_touch = true,
	};
	void **chunks = calloc(num, sizeof(*chunks));
	pthread_mutex_t *locks = calloc(num, sizeof(*locks));
	struct mp_chunk_pool *pool = mp_chunks_new(&cfg, NULL);
	uint64_t i, t0, up = 0, ours = 0, scanned = 0;
	int r;

	if (!chunks || !locks || !pool) {
		perror("scale");
		return 1;
	}
	/*
	 * Steady state: the first half of the slots was freed by earlier
	 * requests; the upstream loop restarts at slot 0 on every request.
	 */
	for (i = 0; i < num; i++) {
		pthread_mutex_init(&locks[i], NULL);
		if (i >= num / 2)
			chunks[i] = malloc(SCALE_CHUNK);
		mp_chunk_alloc(pool, (int)(i % 4));
	}
	mp_chunks_reclaim(pool, num / 2, NULL);
	for (r = 0; r < SCALE_REQS; r++) {
		t0 = now();
		scanned += upstream_reclaim(chunks, locks, num, k);
		up += now() - t0;
		t0 = now();
		mp_chunks_reclaim(pool, k, NULL);
		ours += now() - t0;
	}
	for (i = 0; i < num; i++)
		free(chunks[i]);
	free(chunks);
	free(locks);
	mp_chunks_destroy(pool);
	/* clang-format off */
	return emit(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}",
			      "bench", "scale",
			      "n", (json_int_t)num, "k", (json_int_t)k,
			      "upstream_ns", (json_int_t)(up / SCALE_REQS),
			      "upstream_slots_scanned",
			      (json_int_t)(scanned / SCALE_REQS),
			      "ours_ns", (json_int_t)(ours / SCALE_REQS)));
	/* clang-format on */
}

static uint64_t size_arg(const char *s)
{
	uint64_t v;

	if (mp_parse_size(s, &v) || !v) {
		fprintf(stderr, "stress_bench: invalid size '%s'\n", s);
		exit(64);
	}
	return v;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "alloc")) {
		by_fault = argc == 5 && !strcmp(argv[4], "fault");
		return bench_alloc(size_arg(argv[2]), atof(argv[3]));
	}
	if (argc == 3 && !strcmp(argv[1], "memset"))
		return bench_memset(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "free"))
		return bench_free(size_arg(argv[2]), atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "free-busy"))
		return bench_free_busy(size_arg(argv[2]), atoi(argv[3]),
				       atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "scale"))
		return bench_scale(size_arg(argv[2]), size_arg(argv[3]));
	fprintf(stderr,
		"usage: stress_bench alloc CHUNK SECONDS [fault] | memset SECONDS | free CHUNK COUNT | free-busy CHUNK COUNT THREADS | scale N K\n");
	return 64;
}
