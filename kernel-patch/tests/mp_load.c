// SPDX-License-Identifier: GPL-2.0
/*
 * mp_load - a cooperating program under memory pressure
 *
 * usage: mp_load v1|v2 MPCG MEMCG HOLD_MB HOG_MB [SECONDS [offer]]
 *
 * MPCG is the mempressure cgroup to listen to: on v1 a cgroup of a
 * mempressure-only mount, on v2 a cgroup with mempressure enabled.
 * MEMCG is a memory cgroup to join as well (v1: a cgroup of the memory
 * mount, limited by the caller), or "-" for none (v2: MPCG is the memory
 * cgroup too; v1: global pressure).
 *
 * Joins the cgroups, registers level listeners for low, medium and oom and
 * a shrinker of 1 MiB chunks, allocates and touches HOLD_MB chunks and
 * accounts them, then forks a hog that touches HOG_MB MiB of anonymous
 * memory three times. Frees the chunks the kernel asks for and counts
 * them and the level events for up to SECONDS (default 30). Prints one
 * line of counts. Exits 0 when the hog was not killed, chunks were asked
 * for and freed, and the chunks asked for plus the chunks left equal
 * HOLD_MB; 1 otherwise. With "offer", the chunks are MADV_FREE once
 * written (every byte, so every page, non-zero): reclaim may take them
 * without an answer, as the kernel never waits for one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK  (1 << 20)
#define NR_FDS 4 /* low, medium, oom, shrinker */

static const char *const names[NR_FDS] = { "low", "medium", "oom", "shrink" };

static void die(const char *what, const char *subject)
{
	fprintf(stderr, "mp_load: %s '%s': %s\n", what, subject,
		strerror(errno));
	exit(1);
}

static int open_at(const char *dir, const char *name, int flags)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags);
	if (fd < 0)
		die("cannot open", path);
	return fd;
}

static void write_at(const char *dir, const char *name, const char *str)
{
	int fd = open_at(dir, name, O_WRONLY);

	if (write(fd, str, strlen(str)) < 0)
		die("cannot write", name);
	close(fd);
}

static void hog(long mb)
{
	size_t size = (size_t)mb * CHUNK;
	char *mem;
	int pass;
	size_t i;

	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("cannot map", "anonymous memory");
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < size; i += 4096)
			mem[i] = pass + 1;
	exit(0);
}

static uint64_t parse_u64(const char *buf)
{
	return strtoull(buf, NULL, 10);
}

/* The chunks the program holds, freed from the oldest on. */
static char **held;
static long nheld, first;
static int offer;

static void hold(long mb)
{
	long i;

	held = calloc(mb, sizeof(*held));
	if (!held)
		die("cannot allocate", "chunk table");
	for (i = 0; i < mb; i++) {
		held[i] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (held[i] == MAP_FAILED)
			die("cannot map", "chunk");
		memset(held[i], 0x5a, CHUNK);
		if (offer && madvise(held[i], CHUNK, MADV_FREE))
			die("cannot offer", "chunk");
	}
	nheld = mb;
}

static uint64_t release(uint64_t n)
{
	uint64_t freed = 0;

	while (n-- && first < nheld) {
		munmap(held[first++], CHUNK);
		freed++;
	}
	return freed;
}

int main(int argc, char **argv)
{
	uint64_t count[NR_FDS] = { 0 }, left = 0, requests = 0, freed = 0;
	struct pollfd pfd[NR_FDS];
	int v2, i, status, done = 0;
	const char *mpcg, *memcg;
	char buf[256];
	time_t end, hog_end = 0;
	long mb, hog_mb, secs = 30;
	pid_t pid;

	if (argc < 6 || (strcmp(argv[1], "v1") && strcmp(argv[1], "v2"))) {
		fprintf(stderr,
			"usage: mp_load v1|v2 MPCG MEMCG HOLD_MB HOG_MB [SECONDS [offer]]\n");
		return 64;
	}
	v2 = !strcmp(argv[1], "v2");
	mpcg = argv[2];
	memcg = argv[3];
	mb = atol(argv[4]);
	hog_mb = atol(argv[5]);
	if (argc > 6)
		secs = atol(argv[6]);
	offer = argc > 7 && !strcmp(argv[7], "offer");
	if (mb <= 0 || hog_mb <= 0 || secs <= 0) {
		fprintf(stderr,
			"mp_load: HOLD_MB, HOG_MB and SECONDS must be above 0\n");
		return 64;
	}

	/* The chunks are charged where the program runs: join first. */
	write_at(mpcg, "cgroup.procs", "0");
	if (strcmp(memcg, "-"))
		write_at(memcg, "cgroup.procs", "0");
	hold(mb);

	if (v2) {
		for (i = 0; i < 3; i++) {
			pfd[i].fd = open_at(mpcg, "mempressure.level", O_RDWR);
			if (write(pfd[i].fd, names[i], strlen(names[i])) < 0)
				die("cannot register", names[i]);
		}
		pfd[3].fd = open_at(mpcg, "mempressure.shrinker", O_RDWR);
		snprintf(buf, sizeof(buf), "%d", CHUNK);
		if (write(pfd[3].fd, buf, strlen(buf)) < 0)
			die("cannot register", "shrinker");
		snprintf(buf, sizeof(buf), "+%ld", mb);
		if (write(pfd[3].fd, buf, strlen(buf)) < 0)
			die("cannot add chunks to", "shrinker");
		for (i = 0; i < NR_FDS; i++)
			pfd[i].events = POLLPRI;
	} else {
		int ctl = open_at(mpcg, "cgroup.event_control", O_WRONLY);
		int lvl = open_at(mpcg, "mempressure.level", O_RDONLY);
		int shr = open_at(mpcg, "mempressure.shrinker", O_RDWR);

		for (i = 0; i < NR_FDS; i++) {
			pfd[i].fd = eventfd(0, EFD_NONBLOCK);
			pfd[i].events = POLLIN;
			if (i < 3)
				snprintf(buf, sizeof(buf), "%d %d %s",
					 pfd[i].fd, lvl, names[i]);
			else
				snprintf(buf, sizeof(buf), "%d %d %d",
					 pfd[i].fd, shr, CHUNK);
			if (write(ctl, buf, strlen(buf)) < 0)
				die("cannot register", names[i]);
		}
		snprintf(buf, sizeof(buf), "%d +%ld", pfd[3].fd, mb);
		if (write(shr, buf, strlen(buf)) < 0)
			die("cannot add chunks to", "shrinker");
		close(ctl);
		close(lvl);
		close(shr);
	}

	pid = fork();
	if (pid < 0)
		die("cannot fork", "hog");
	if (!pid) {
		/* the chunks must not stay mapped, and charged, in the hog */
		release(nheld);
		hog(hog_mb);
	}

	end = time(NULL) + secs;
	while (time(NULL) < end && !(done && time(NULL) > hog_end)) {
		if (!done && waitpid(pid, &status, WNOHANG) == pid) {
			done = 1;
			hog_end = time(NULL) + 2;
		}
		if (poll(pfd, NR_FDS, 100) <= 0)
			continue;
		for (i = 0; i < NR_FDS; i++) {
			uint64_t n = 0;
			ssize_t len;

			if (!pfd[i].revents)
				continue;
			if (!v2) {
				if (read(pfd[i].fd, &n, sizeof(n)) != sizeof(n))
					continue;
			} else {
				len = pread(pfd[i].fd, buf, sizeof(buf) - 1, 0);
				if (len <= 0)
					continue;
				buf[len] = '\0';
				n = parse_u64(i < 3 ? strchr(buf, ' ') + 1 :
						      buf);
			}
			count[i] += n;
			if (i == 3 && n) {
				requests++;
				freed += release(n);
			}
		}
	}
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}

	/* The chunks the kernel did not ask for are still accounted. */
	i = open_at(mpcg, "mempressure.shrinker", O_RDONLY);
	while (fgets(buf, sizeof(buf), fdopen(i, "r"))) {
		char *sp = strchr(buf, ' ');

		if (sp && parse_u64(buf) == CHUNK)
			left += parse_u64(sp + 1);
		break;
	}

	printf("hog %s, events low %" PRIu64 " medium %" PRIu64 " oom %" PRIu64
	       ", shrinker requests %" PRIu64 " chunks %" PRIu64
	       " freed %" PRIu64 " left %" PRIu64 " of %ld\n",
	       WIFSIGNALED(status) ? "killed" : "exited", count[0], count[1],
	       count[2], requests, count[3], freed, left, mb);

	/*
	 * No level event is required: a program that frees in time keeps
	 * reclaim from scanning, and the windows from filling (the level
	 * suites test the levels).
	 */
	return !WIFSIGNALED(status) && requests && freed &&
			       count[3] + left == (uint64_t)mb ?
		       0 :
		       1;
}
