// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cooperate: a cache that gives memory back when asked, on
 * libmpctl-shrinker (mpctl_shrinker(3)).
 *
 *   cooperate [-n CHUNKS] [-c BYTES] [-d SECONDS] [-r REQUESTS] [-g CGROUP] [-o]
 *
 * It fills a cache of CHUNKS chunks (default 64 of 1 MiB), accounts them
 * to the shrinker and waits in an event loop (poll(2) on the shrinker's fd
 * and a signalfd) until SIGINT, SIGTERM, SECONDS or REQUESTS requests. Each request frees the
 * oldest chunks asked for. The shrinker is the one mpctl register hands
 * down (MPCTL_SHRINKER_*), else the kernel's in CGROUP (-g) or in its own
 * cgroup. With -o the chunks are also offered: reclaim may take them
 * without asking; at the end the ones it took are counted.
 *
 * Output: "registered <backend> chunk <bytes> chunks <n>" once ready, a
 * line "asked <n> freed <n>" per request, and at the end "held <n> freed
 * <n> requests <n> lost <n>". Exit 0, 1 on a failure, 64 on a bad option.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "mpctl-shrinker.h"

struct cache {
	char **chunk; /* oldest first: [first, n) */
	uint64_t first, n, size;
};

static void die(int status, const char *what)
{
	fprintf(stderr, "cooperate: %s\n", what);
	exit(status);
}

static uint64_t arg_num(const char *s, uint64_t min)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min)
		die(64, "invalid number (see the comment at the top)");
	return v;
}

static int fill(struct cache *c, uint64_t n, int offer)
{
	uint64_t i;

	c->chunk = calloc(n, sizeof(*c->chunk));
	if (!c->chunk)
		return -1;
	for (i = 0; i < n; i++) {
		c->chunk[i] = mmap(NULL, c->size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->chunk[i] == MAP_FAILED)
			return -1;
		memset(c->chunk[i], 'm', c->size); /* the cached data */
		if (offer && mpctl_chunk_offer(c->chunk[i], c->size))
			return -1;
		c->n++;
	}
	return 0;
}

/* free the n oldest chunks; how many were freed */
static uint64_t shrink(struct cache *c, uint64_t n)
{
	uint64_t done = 0;

	while (done < n && c->first < c->n) {
		munmap(c->chunk[c->first++], c->size);
		done++;
	}
	return done;
}

int main(int argc, char **argv)
{
	uint64_t chunks = 64, secs = 0, asked, freed, total = 0, requests = 0;
	uint64_t max_requests = 0;
	struct cache cache = { .size = 1 << 20 };
	struct mpctl_shrinker_err err;
	struct mpctl_shrinker *sh;
	const char *cgroup = NULL;
	struct pollfd pfd[2];
	struct timespec end;
	int opt, offer = 0, ret = 0, timeout;
	uint64_t i, lost = 0;
	sigset_t mask;

	while ((opt = getopt(argc, argv, "n:c:d:r:g:o")) != -1) {
		switch (opt) {
		case 'n':
			chunks = arg_num(optarg, 1);
			break;
		case 'c':
			cache.size = arg_num(optarg, 1);
			if (cache.size % (uint64_t)sysconf(_SC_PAGESIZE))
				die(64,
				    "the chunk size is not a page multiple");
			break;
		case 'd':
			secs = arg_num(optarg, 1);
			break;
		case 'r':
			max_requests = arg_num(optarg, 1);
			break;
		case 'g':
			cgroup = optarg;
			break;
		case 'o':
			offer = 1;
			break;
		default:
			return 64;
		}
	}
	if (optind < argc)
		die(64, "unexpected argument");

	/* signals come through the event loop, as the requests do */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN); /* an exited mpctl register: EPIPE */
	pfd[1].fd = signalfd(-1, &mask, SFD_CLOEXEC);
	pfd[1].events = POLLIN;

	if (cgroup ? mpctl_shrinker_register(cgroup, cache.size, &sh, &err) :
		     mpctl_shrinker_open(cache.size, &sh, &err)) {
		fprintf(stderr, "cooperate: %s\n", err.msg);
		return 1;
	}
	if (fill(&cache, chunks, offer) || mpctl_shrinker_add(sh, cache.n)) {
		perror("cooperate: filling the cache");
		ret = 1;
		goto out;
	}
	printf("registered %s chunk %" PRIu64 " chunks %" PRIu64 "\n",
	       mpctl_shrinker_backend_name(mpctl_shrinker_backend(sh)),
	       cache.size, cache.n);
	fflush(stdout);

	pfd[0].fd = mpctl_shrinker_fd(sh);
	pfd[0].events = POLLIN;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	for (;;) {
		struct timespec now;

		timeout = -1;
		if (secs) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > end.tv_sec ||
			    (now.tv_sec == end.tv_sec &&
			     now.tv_nsec >= end.tv_nsec))
				break;
			timeout = (int)((end.tv_sec - now.tv_sec) * 1000 +
					(end.tv_nsec - now.tv_nsec) / 1000000);
		}
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			perror("cooperate: poll");
			ret = 1;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!pfd[0].revents)
			continue;
		if (mpctl_shrinker_read(sh, &asked) < 0) {
			perror("cooperate: reading the request");
			ret = 1;
			break;
		}
		if (!asked)
			continue;
		/* an empty cache frees less: nothing is left to add again */
		freed = shrink(&cache, asked);
		requests++;
		total += freed;
		printf("asked %" PRIu64 " freed %" PRIu64 "\n", asked, freed);
		fflush(stdout);
		if (requests == max_requests)
			break;
	}
	for (i = cache.first; offer && i < cache.n; i++)
		lost += mpctl_chunk_lost(cache.chunk[i], cache.size) == 1;
	printf("held %" PRIu64 " freed %" PRIu64 " requests %" PRIu64
	       " lost %" PRIu64 "\n",
	       cache.n - cache.first, total, requests, lost);
	/* the chunks still held go with the process: take them off */
	mpctl_shrinker_add(sh, -(int64_t)(cache.n - cache.first));
out:
	mpctl_shrinker_close(sh);
	return ret;
}
