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
 *     written (lib/mpctl-shrinker.c).
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
 *                         [--lazyfree] [--verbose]
 *
 * With the kernel's shrinker, the usage early warning of common/'s
 * emulator runs beside it (mp_shrinker.h, cfg.early_warning) unless
 * --no-assist (or its alias --no-early-warning): the kernel asks from
 * reclaim, after the reclaim window, and without swap the OOM killer can
 * get there first.
 * Ctrl-C (or --duration) ends it; the totals are printed at the end.
 *
 * --lazyfree marks every chunk MADV_FREE once written: a fallback that
 * needs no answer, as reclaim may drop such chunks without swap when the
 * reclaim thread is late. The kernel's requests are still answered (they
 * are advice). Each chunk's first word holds a non-zero marker, zero once
 * reclaim dropped the page; the chunks found so, when freed on request or
 * still held at the end, are printed as "lost N chunks" with the totals.
 *
 * The allocator and reclaim threads are those of mpctl stress's engine
 * (stress/engine.c), run in this process: the fixes above live there, in
 * common/ and in libmpctl-shrinker (lib/mpctl-shrinker.h, the library a
 * cooperating program vendors): every registration, request, "+N"/"-N"
 * and offered chunk of this test goes through the library's calls
 * (common/mp_shrinker.c for the protocol, common/mp_chunks.c for the
 * markers), and what the library does not cover, the emulator for a stock
 * kernel and the usage early warning beside the kernel's shrinker, is
 * mpctl's own.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "mp_memstat.h"
#include "mp_parse.h"
#include "mp_target.h"

#define NAME "mempressure_test"

static void die(const char *what, const char *msg, int status)
{
	fprintf(stderr, NAME ": %s%s%s\n", what, msg ? ": " : "",
		msg ? msg : "");
	exit(status);
}

/* a usage error: one line and the hint, as mpctl gives them */
static void die64(const char *what)
{
	fprintf(stderr,
		NAME ": %s\nTry '" NAME " --help' for more "
		     "information.\n",
		what);
	exit(64);
}

static void usage(void)
{
	printf("Usage: " NAME " [--threads N] [--chunk SIZE] "
	       "[--max-chunks N]\n"
	       "                        [--duration TIME] [--cgroup PATH] "
	       "[--backend B]\n"
	       "                        [--emulate] [--no-assist] [--lazyfree] "
	       "[--verbose]\n");
}

static void print_request(uint64_t requested, uint64_t freed, void *arg)
{
	(void)arg;
	printf("%" PRIu64 " chunks to reclaim, %" PRIu64 " freed\n", requested,
	       freed);
}

/* A bounded footprint (bug 4): twice the limit, or RAM available / 4. */
static uint64_t default_max_chunks(struct mp_shrinker *sh, uint64_t chunk)
{
	uint64_t avail = 0, n;
	struct mp_memstat ms;

	if (mp_memstat_open(&ms, mp_shrinker_cgroup(sh)))
		die("cannot read the memory usage", strerror(errno), 1);
	mp_meminfo(NULL, &avail, NULL);
	n = (ms.limited ? 2 * ms.limit : avail / 4) / chunk;
	mp_memstat_close(&ms);
	return n ? n : 1;
}

/* Until SIGINT or SIGTERM (bug 3), the duration, or the engine stops. */
static void wait_end(const sigset_t *mask, uint64_t duration,
		     const struct stress_shared *shm)
{
	uint64_t end = mp_now_ns(CLOCK_MONOTONIC) + duration;
	struct timespec slice = { 0, 100000000 };

	while (!__atomic_load_n(&shm->stop, __ATOMIC_RELAXED)) {
		if (sigtimedwait(mask, NULL, &slice) >= 0)
			return;
		if (duration && mp_now_ns(CLOCK_MONOTONIC) >= end)
			return;
	}
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
		{ "no-early-warning", no_argument, NULL, 'A' },
		{ "lazyfree", no_argument, NULL, 'l' },
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
		.early_warning = true,
	};
	static struct mp_target target;
	const char *cgroup = NULL;
	/* the reclaim thread first in line; harmless without privilege */
	struct stress_engine_cfg ecfg = { .reclaim_rt = 1, .usage_fd = -1 };
	long long threads = 2, maxc = 0;
	const struct mp_chunk_stats *cs;
	struct stress_engine *eng;
	struct stress_shared *shm;
	uint64_t duration = 0;
	struct mp_shrinker *sh;
	struct mp_err err;
	char msg[128];
	sigset_t mask;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:c:m:d:g:b:eAlvh", opts, NULL)) !=
	       -1) {
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
			if (mp_parse_duration(optarg, &duration) ||
			    duration == MP_DURATION_INFINITY)
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
			cfg.early_warning = false;
			break;
		case 'l':
			ecfg.lazyfree = true;
			break;
		case 'v':
			ecfg.on_reclaim = print_request;
			break;
		case 'h':
			usage();
			return 0;
		default:
			snprintf(msg, sizeof(msg), "unrecognized option '%s'",
				 argv[optind - 1]);
			die64(msg);
		}
	}
	if (optind < argc) {
		snprintf(msg, sizeof(msg), "unexpected argument '%s'",
			 argv[optind]);
		die64(msg);
	}

	/* signals go to the main thread only, through sigtimedwait (bug 3) */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);

	mp_target_resolve(cgroup, &target);
	cfg.target = &target;
	if (mp_shrinker_open(&cfg, &sh, &err))
		die("cannot register the shrinker", err.msg,
		    err.status ? err.status : 1);
	ecfg.chunk_size = cfg.chunk_size;
	ecfg.threads = (int)threads;
	ecfg.max_chunks = maxc ? (uint64_t)maxc :
				 default_max_chunks(sh, cfg.chunk_size);
	ecfg.sh = sh;
	shm = stress_shared_new(NULL);
	if (!shm)
		die("out of memory", NULL, 1);
	ecfg.shm = shm;
	printf(NAME ": %s shrinker (%s) on %s, %lld threads, "
		    "chunk %" PRIu64 ", at most %" PRIu64 " chunks\n",
	       mp_shrinker_mode_name(mp_shrinker_mode(sh)),
	       mp_backend_name(mp_shrinker_backend(sh)),
	       mp_shrinker_cgroup(sh) ? mp_shrinker_cgroup(sh)->path : "?",
	       threads, cfg.chunk_size, ecfg.max_chunks);
	fflush(stdout);
	eng = stress_engine_start(&ecfg);
	if (eng) {
		wait_end(&mask, duration, shm);
		stress_engine_stop(eng);
	}

	cs = &shm->chunks;
	printf("\nTOTAL: allocated %" PRIu64 " chunks, reclaimed %" PRIu64
	       " chunks (%" PRIu64 " MiB) on %" PRIu64 " requests for %" PRIu64
	       "; re-added %" PRIu64 ", short %" PRIu64 "\n",
	       cs->allocated, cs->freed, cs->freed * cfg.chunk_size >> 20,
	       shm->requests, shm->chunks_requested, shm->chunks_readded,
	       shm->chunks_short);
	printf("reclaim latency: p50 %" PRIu64 " us, p99 %" PRIu64
	       " us, max %" PRIu64 " us\n",
	       mp_hist_quantile(&shm->latency, 0.5) / 1000,
	       mp_hist_quantile(&shm->latency, 0.99) / 1000,
	       shm->latency.max / 1000);
	if (ecfg.lazyfree)
		printf("lost %" PRIu64 " chunks (MADV_FREE, dropped by "
		       "reclaim)\n",
		       cs->lost);
	ret = fflush(stdout) ? 1 : 0;
	if (shm->error[0]) {
		fprintf(stderr, NAME ": %s\n", shm->error);
		ret = 1;
	}
	stress_shared_free(shm);
	mp_shrinker_close(sh);
	return ret;
}
