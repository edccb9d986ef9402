// SPDX-License-Identifier: GPL-2.0
/*
 * shrinker-noalloc: libmpctl-shrinker's request path under a counting
 * allocator (bats/shrinker-lib.bats). Run under mpctl register: it opens
 * the inherited registration, then counts every malloc, calloc, realloc
 * and free while it adds, removes, polls, reads and offers, takes and
 * checks a chunk, ROUNDS times each from THREADS threads at once.
 *
 * "shrinker-noalloc offer" checks the markers of an offered chunk instead.
 *
 * Output: "allocations N" (N the calls counted during the request path)
 * and "calls M" (the request-path calls made). Exit 0 when N is 0, 1
 * when it is not or a call failed.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mpctl-shrinker.h"

#define ROUNDS	1000
#define THREADS 4

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static int counting;	   /* __atomic */
static long allocations;   /* __atomic */
static long calls, failed; /* __atomic */

static void count(void)
{
	if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
		__atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
	count();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	count();
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	count();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (p)
		count();
	__libc_free(p);
}

static void check(int ok)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (!ok)
		__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
}

/* the threads start and end counting together (THREADS + 1) */
static pthread_barrier_t start, stop;

static void *request_path(void *arg)
{
	struct mpctl_shrinker *sh = arg;
	size_t size = mpctl_shrinker_chunk_size(sh);
	struct pollfd pfd = { .fd = mpctl_shrinker_fd(sh), .events = POLLIN };
	char *c = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t n;
	int i;

	check(c != MAP_FAILED);
	pthread_barrier_wait(&start);
	for (i = 0; i < ROUNDS; i++) {
		check(!mpctl_shrinker_add(sh, 2));
		check(poll(&pfd, 1, 0) >= 0);
		check(mpctl_shrinker_read(sh, &n) >= 0);
		check(!mpctl_shrinker_add(sh, -2));
		check(!mpctl_chunk_offer(c, size));
		check(mpctl_chunk_lost(c, size) >= 0);
		check(mpctl_chunk_take(c, size) >= 0);
	}
	pthread_barrier_wait(&stop);
	munmap(c, size);
	return NULL;
}

/*
 * "offer": a chunk offered, then its second page dropped as reclaim would
 * (MADV_DONTNEED): lost and take say so, and a chunk taken back is held
 */
static int offer(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 4 * page;
	char *c = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	printf("offered %d\n", mpctl_chunk_offer(c, size));
	printf("lost %d\n", mpctl_chunk_lost(c, size));
	printf("take %d\n", mpctl_chunk_take(c, size));
	mpctl_chunk_offer(c, size);
	madvise(c + page, page, MADV_DONTNEED);
	printf("dropped: lost %d\n", mpctl_chunk_lost(c, size));
	printf("dropped: take %d\n", mpctl_chunk_take(c, size));
	printf("taken: lost %d\n", mpctl_chunk_lost(c, size));
	printf("unaligned %d\n", mpctl_chunk_offer(c + 1, size));
	return 0;
}

int main(int argc, char **argv)
{
	struct mpctl_shrinker_err err;
	struct mpctl_shrinker *sh;
	pthread_t t[THREADS];
	int i;

	if (argc > 1 && !strcmp(argv[1], "offer"))
		return offer();
	if (mpctl_shrinker_from_env(&sh, &err)) {
		fprintf(stderr, "shrinker-noalloc: %s\n", err.msg);
		return 1;
	}
	/* counted between the barriers: the threads' setup is not */
	pthread_barrier_init(&start, NULL, THREADS + 1);
	pthread_barrier_init(&stop, NULL, THREADS + 1);
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, request_path, sh))
			return 1;
	__atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&stop);
	__atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	mpctl_shrinker_close(sh);
	printf("allocations %ld\ncalls %ld\nfailed %ld\n", allocations, calls,
	       failed);
	return allocations || failed ? 1 : 0;
}
