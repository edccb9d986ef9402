// SPDX-License-Identifier: GPL-2.0
/*
 * mempressure shrinker test, fixed and multi-threaded.
 *
 * Based on Documentation/cgroups/mempressure_test.c of the 2012
 * mempressure RFC (Anton Vorontsov, Linaro): allocator threads keep
 * allocating memory, more than the cgroup may hold, and account every
 * chunk to the user-space shrinker; a reclaim thread frees what the
 * shrinker asks for. Ideally nothing is OOM-killed and swap does not grow.
 *
 * Upstream bugs fixed here:
 *
 *  1. add_reclaimable(chunks) wrote "<efd> CHUNK_SIZE" (1048576) to
 *     mempressure.shrinker instead of the number of chunks: its argument
 *     was ignored and the kernel's counter grew by a million per call.
 *  2. The reclaim loop scanned every slot from 0 with a mutex per slot,
 *     O(all chunks) per request, and spun forever (holding and dropping
 *     every lock in turn) when fewer chunks existed than were requested:
 *     "while (n)" never reached 0. Here chunks sit on one FIFO list per
 *     allocator thread and a request for k takes k of them in O(k), with
 *     no lock held across the free (common/mp_chunks.c); a request larger
 *     than what is held frees what there is and stops.
 *  3. The SIGINT handler called printf() and exit(), neither
 *     async-signal-safe, while other threads ran (exit() flushes stdio
 *     under locks those threads may hold, and runs atexit handlers). Here
 *     SIGINT and SIGTERM are blocked in every thread and taken by the main
 *     thread with sigtimedwait(), which then stops the others and prints.
 *  4. The chunk count came from RAM plus swap (sysinfo) with no bound: the
 *     slot arrays alone were sized for the whole machine, and the test set
 *     out to fill it. Here the footprint is bounded (--max-chunks, by
 *     default twice the cgroup's limit, or a quarter of the memory
 *     available when there is no limit).
 *  5. The registration string differed from the documented one: it was
 *     printed, and written with its trailing NUL ("%d %d %d\n" plus the
 *     terminator, ret + 1 bytes), as were the accounting writes. Here
 *     exactly "<eventfd> <fd of mempressure.shrinker> <chunk size>" is
 *     written (common/mp_shrinker.c).
 *  6. Chunks that could not be freed were never re-added, so the kernel's
 *     counter (already lowered by the request) drifted below what was
 *     held. Here every chunk not freed is re-added with "+N".
 *  7. Chunks were malloc()ed and free()d: after the first free of an
 *     mmapped 1 MiB chunk glibc raises its mmap threshold, later chunks
 *     come from the heap, and free() no longer gives memory back to the
 *     kernel, so "reclaimed" chunks were not reclaimed at all. Here chunks
 *     are mapped directly and freed with MADV_DONTNEED.
 *  8. "reclaimed += n" counted what was asked, before anything was freed,
 *     and "added %d reclaimable chunks" printed j, not what was added;
 *     with fewer than 10 chunks num_chunks / 10 was 0 and nothing was
 *     ever accounted.
 *  9. The cgroup was hard-wired to /sys/fs/cgroup/mempressure; errors went
 *     to abort(). Here the cgroup is found in mountinfo (--cgroup), and on
 *     stock kernels the same code runs against the emulated shrinker.
 *
 * Usage: mempressure_test [--threads N] [--chunk SIZE] [--max-chunks N]
 *                         [--duration TIME] [--cgroup PATH]
 *                         [--backend B] [--emulate] [--no-assist]
 *                         [--verbose]
 *
 * With the kernel's shrinker, the usage early warning of common/'s
 * emulation runs beside it (mp_shrinker.h, cfg.assist) unless --no-assist:
 * the kernel asks from reclaim, after the reclaim window, and without swap
 * the OOM killer can get there first.
 * Ctrl-C (or --duration) ends it; the totals are printed at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mp_cgroup.h"
#include "mp_chunks.h"
#include "mp_memstat.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_shrinker.h"
#include "mp_target.h"
#include "mp_stats.h"
#include "mp_thread.h"

static struct {
	struct mp_shrinker *sh;
	struct mp_chunk_pool *pool;
	uint64_t max_chunks;
	bool verbose;
	int stop;
	uint64_t requests, requested, readded, short_;
	struct mp_hist latency;
} t;

static void die(const char *what, const struct mp_err *err)
{
	fprintf(stderr, "mempressure_test: %s%s%s\n", what, err ? ": " : "",
		err ? err->msg : "");
	exit(err && err->status ? err->status : 1);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: mempressure_test [--threads N] [--chunk SIZE] "
		"[--max-chunks N]\n"
		"                        [--duration TIME] [--cgroup PATH] "
		"[--backend B]\n"
		"                        [--emulate] [--no-assist] [--verbose]\n");
}

static void die64(const char *what)
{
	fprintf(stderr, "mempressure_test: %s\n", what);
	usage(stderr);
	exit(64);
}

static void *alloc_thread(void *arg)
{
	int idx = (int)(intptr_t)arg;
	struct mp_err err;
	struct timespec ms = { 0, 1000000 };

	while (!__atomic_load_n(&t.stop, __ATOMIC_RELAXED)) {
		if (mp_chunks_held(t.pool) >= t.max_chunks ||
		    !mp_chunk_alloc(t.pool, idx)) {
			nanosleep(&ms, NULL);
			continue;
		}
		/* one chunk allocated: one reclaimable chunk (bug 1) */
		if (mp_shrinker_add(t.sh, 1, &err))
			fprintf(stderr, "mempressure_test: %s\n", err.msg);
	}
	return NULL;
}

static void *reclaim_thread(void *arg)
{
	struct pollfd pfd = { .fd = mp_shrinker_fd(t.sh), .events = POLLIN };
	uint64_t n, freed, kept, t0;
	struct mp_err err;
	int ret;

	(void)arg;
	/* first in line when a request comes; harmless without privilege */
	pthread_setschedparam(pthread_self(), SCHED_FIFO,
			      &(struct sched_param){ .sched_priority = 1 });
	while (!__atomic_load_n(&t.stop, __ATOMIC_RELAXED)) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		t0 = mp_now_ns(CLOCK_MONOTONIC);
		ret = mp_shrinker_read(t.sh, &n, &err);
		if (ret < 0) {
			fprintf(stderr, "mempressure_test: %s\n", err.msg);
			break;
		}
		if (!ret)
			continue;
		/* O(n), never more than is held (bug 2) */
		freed = mp_chunks_reclaim(t.pool, n, &kept);
		if (freed)
			mp_hist_add(&t.latency,
				    mp_now_ns(CLOCK_MONOTONIC) - t0);
		/* what could not be freed goes back (bug 6) */
		if (kept && mp_shrinker_add(t.sh, (int64_t)kept, &err))
			fprintf(stderr, "mempressure_test: %s\n", err.msg);
		t.requests++;
		t.requested += n;
		t.readded += kept;
		if (n > freed + kept)
			t.short_ += n - freed - kept;
		if (t.verbose)
			printf("%" PRIu64 " chunks to reclaim, %" PRIu64
			       " freed\n", n, freed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "max-chunks", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "backend", required_argument, NULL, 'b' },
		{ "emulate", no_argument, NULL, 'e' },
		{ "no-assist", no_argument, NULL, 'A' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct mp_shrinker_cfg cfg = {
		.backend = MP_BACKEND_AUTO,
		.chunk_size = 1 << 20,
		/* the emulator answers before the allocators reach the limit */
		.policy = { .rt_priority = 1 },
		/* a kernel shrinker gets the usage early warning beside it */
		.assist = true,
	};
	struct mp_chunk_pool_cfg pcfg = { 0 };
	static struct mp_target target;
	const char *cgroup = NULL;
	long long threads = 2, maxc = 0;
	uint64_t duration = 0, limit, avail;
	const struct mp_chunk_stats *cs;
	struct timespec ts, *tsp = NULL;
	struct mp_memstat ms;
	struct mp_err err;
	pthread_t *thr, rthr;
	sigset_t mask;
	int c, i;

	while ((c = getopt_long(argc, argv, "t:c:m:d:g:b:eAvh", opts,
				NULL)) != -1) {
		switch (c) {
		case 't':
			if (mp_parse_long(optarg, 1, 1024, &threads))
				die64("invalid thread count (1 to 1024)");
			break;
		case 'c':
			if (mp_parse_size(optarg, &cfg.chunk_size) ||
			    cfg.chunk_size < 4096)
				die64("invalid chunk size (at least 4K)");
			if (mp_parse_chunk(optarg, &cfg.chunk_size))
				die64("invalid chunk size (a multiple of the "
				      "page size)");
			break;
		case 'm':
			if (mp_parse_long(optarg, 1, 1LL << 32, &maxc))
				die64("invalid chunk count");
			break;
		case 'd':
			if (mp_parse_duration(optarg, &duration))
				die64("invalid duration");
			break;
		case 'g':
			cgroup = optarg;
			break;
		case 'b':
			if (mp_backend_parse(optarg, &cfg.backend))
				die64("unknown backend");
			break;
		case 'e':
			cfg.emulate = true;
			break;
		case 'A':
			cfg.assist = false;
			break;
		case 'v':
			t.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 64;
	}

	/* signals go to the main thread only, through sigtimedwait (bug 3) */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);

	/* our code stays resident at the limit, where reclaim takes it */
	mlockall(MCL_CURRENT);
	mp_target_resolve(cgroup, &target);
	cfg.target = &target;
	if (mp_shrinker_open(&cfg, &t.sh, &err))
		die("cannot register the shrinker", &err);
	/* a bounded footprint (bug 4) */
	if (mp_memstat_open(&ms, mp_shrinker_cgroup(t.sh)))
		die("cannot read the memory usage", NULL);
	limit = ms.limit;
	mp_meminfo(NULL, &avail, NULL);
	mp_memstat_close(&ms);
	if (!maxc)
		maxc = (long long)((ms.limited ? 2 * limit : avail / 4) /
				   cfg.chunk_size);
	if (maxc < 1)
		maxc = 1;
	t.max_chunks = (uint64_t)maxc;
	pcfg.chunk_size = cfg.chunk_size;
	pcfg.lists = (int)threads;
	pcfg.reserve_chunks = t.max_chunks + (uint64_t)threads;
	t.pool = mp_chunks_new(&pcfg, NULL);
	thr = calloc((size_t)threads, sizeof(*thr));
	if (!t.pool || !thr)
		die("out of memory", NULL);
	printf("mempressure_test: %s shrinker (%s) on %s, %lld threads, "
	       "chunk %" PRIu64 ", at most %lld chunks\n",
	       mp_shrinker_mode_name(mp_shrinker_mode(t.sh)),
	       mp_backend_name(mp_shrinker_backend(t.sh)),
	       mp_shrinker_cgroup(t.sh) ? mp_shrinker_cgroup(t.sh)->path :
	       "?", threads, cfg.chunk_size, maxc);
	fflush(stdout);
	if (mp_thread_start(&rthr, reclaim_thread, NULL))
		die("cannot start the reclaim thread", NULL);
	for (i = 0; i < threads; i++)
		if (mp_thread_start(&thr[i], alloc_thread,
				    (void *)(intptr_t)i))
			die("cannot start the allocator threads", NULL);

	if (duration) {
		ts.tv_sec = (time_t)(duration / 1000000000ULL);
		ts.tv_nsec = (long)(duration % 1000000000ULL);
		tsp = &ts;
	}
	while (sigtimedwait(&mask, NULL, tsp) < 0 && errno == EINTR)
		;
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < threads; i++)
		pthread_join(thr[i], NULL);
	pthread_join(rthr, NULL);

	cs = mp_chunks_stats(t.pool);
	printf("\nTOTAL: allocated %" PRIu64 " chunks, reclaimed %" PRIu64
	       " chunks (%" PRIu64 " MiB) on %" PRIu64 " requests for %"
	       PRIu64 "; re-added %" PRIu64 ", short %" PRIu64 "\n",
	       cs->allocated, cs->freed,
	       cs->freed * cfg.chunk_size >> 20, t.requests, t.requested,
	       t.readded, t.short_);
	printf("reclaim latency: p50 %" PRIu64 " us, p99 %" PRIu64
	       " us, max %" PRIu64 " us\n",
	       mp_hist_quantile(&t.latency, 0.5) / 1000,
	       mp_hist_quantile(&t.latency, 0.99) / 1000,
	       t.latency.max / 1000);
	mp_chunks_destroy(t.pool);
	mp_shrinker_close(t.sh);
	free(thr);
	return fflush(stdout) ? 1 : 0;
}
