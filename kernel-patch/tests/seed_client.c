// SPDX-License-Identifier: GPL-2.0
/*
 * seed_client - a mempressure client written from the 2012 RFC's
 * Documentation/cgroups/mempressure.txt alone
 *
 * usage: seed_client CGDIR [SECONDS]
 *
 * CGDIR is a cgroup on a cgroup v1 mount of mempressure; run the program
 * inside it (and inside a memory cgroup with a limit, for pressure).  Uses
 * nothing but what that document says, quoted below, and the usual
 * cgroup.event_control registration "<event_fd> <fd of file> <args>":
 * no header or helper of this project.  For SECONDS (default 10) it keeps
 * allocating 1 MiB chunks, at most 128, accounts each one, frees what the
 * kernel asks for and counts level events.
 *
 * Prints "requests=R chunks=C freed=F held=H level_events=L over=O
 * kernel=K" and exits 0 when the kernel asked at least once, never for
 * more chunks than were held, and its count K equals what is still held;
 * 1 otherwise, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* "suppose the application has 200 page renders cached ..., 1MB each" */
#define CHUNK_SIZE (1024 * 1024)
#define MAX_CHUNKS 128

static void *chunks[MAX_CHUNKS];
static int held;

static void die(const char *what)
{
	fprintf(stderr, "seed_client: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int open_in(const char *dir, const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags);
	if (fd < 0)
		die(path);
	return fd;
}

static void write_str(int fd, const char *s, const char *what)
{
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		die(what);
}

/*
 * "Writes must be in "<eventfd> <number of chunks>" format.  Positive
 * numbers increment the internal counter, negative numbers decrement it."
 */
static void account(int shrinker_fd, int efd, long n)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%d %ld", efd, n);
	write_str(shrinker_fd, buf, "write mempressure.shrinker");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the kernel's count for our chunk size, from "<chunk size> <chunks>" */
static long kernel_count(const char *dir)
{
	char path[4096];
	unsigned long size;
	long n, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/mempressure.shrinker", dir);
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fscanf(f, "%lu %ld", &size, &n) == 2)
		if (size == CHUNK_SIZE)
			found = n;
	fclose(f);
	return found < 0 ? 0 : found;
}

int main(int argc, char **argv)
{
	long requests = 0, asked = 0, freed = 0, level_events = 0, over = 0;
	int ctl, shr, lvl, sefd, lefd, i;
	double secs = 10, end;
	long kernel = -1;
	uint64_t v;
	char buf[128];

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: seed_client CGDIR [SECONDS]\n");
		return 2;
	}
	if (argc == 3)
		secs = atof(argv[2]);

	ctl = open_in(argv[1], "cgroup.event_control", O_WRONLY);
	shr = open_in(argv[1], "mempressure.shrinker", O_WRONLY);
	lvl = open_in(argv[1], "mempressure.level", O_RDONLY);
	sefd = eventfd(0, 0);
	lefd = eventfd(0, 0);
	if (sefd < 0 || lefd < 0)
		die("eventfd");

	/*
	 * "Event control: Used to setup shrinker events.  There is only one
	 * argument for the event control: chunk size in bytes."
	 */
	snprintf(buf, sizeof(buf), "%d %d %d", sefd, shr, CHUNK_SIZE);
	write_str(ctl, buf, "register the shrinker");
	/* "The argument to the event control specifies the level threshold." */
	snprintf(buf, sizeof(buf), "%d %d low", lefd, lvl);
	write_str(ctl, buf, "register for low");
	printf("registered\n");
	fflush(stdout);

	end = now() + secs;
	while (now() < end) {
		struct pollfd pfd[2] = {
			{ .fd = sefd, .events = POLLIN },
			{ .fd = lefd, .events = POLLIN },
		};

		if (held < MAX_CHUNKS) {
			void *p = mmap(NULL, CHUNK_SIZE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				die("mmap");
			memset(p, 0x5a, CHUNK_SIZE);
			chunks[held++] = p;
			account(shr, sefd, 1);
		}
		if (poll(pfd, 2, 5) < 0 && errno != EINTR)
			die("poll");
		/*
		 * "Upon the notification, a read() from the eventfd returns
		 * the number of chunks to reclaim (free)."
		 */
		if (pfd[0].revents & POLLIN) {
			if (read(sefd, &v, sizeof(v)) != sizeof(v))
				die("read shrinker eventfd");
			requests++;
			asked += v;
			if (v > (uint64_t)held) {
				over++;
				v = held;
			}
			for (i = 0; i < (int)v; i++) {
				munmap(chunks[--held], CHUNK_SIZE);
				freed++;
			}
		}
		if (pfd[1].revents & POLLIN) {
			if (read(lefd, &v, sizeof(v)) != sizeof(v))
				die("read level eventfd");
			level_events += v;
		}
	}

	/* settle: a request may still be in flight when we look */
	for (i = 0; i < 20; i++) {
		struct pollfd pfd = { .fd = sefd, .events = POLLIN };

		kernel = kernel_count(argv[1]);
		if (poll(&pfd, 1, 50) == 0 && kernel == held)
			break;
		if (pfd.revents & POLLIN &&
		    read(sefd, &v, sizeof(v)) == sizeof(v)) {
			requests++;
			asked += v;
			if (v > (uint64_t)held) {
				over++;
				v = held;
			}
			while (v--) {
				munmap(chunks[--held], CHUNK_SIZE);
				freed++;
			}
		}
	}

	printf("requests=%ld chunks=%ld freed=%ld held=%d level_events=%ld over=%ld kernel=%ld\n",
	       requests, asked, freed, held, level_events, over, kernel);
	return requests > 0 && !over && kernel == held ? 0 : 1;
}
