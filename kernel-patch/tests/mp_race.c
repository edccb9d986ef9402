// SPDX-License-Identifier: GPL-2.0
/*
 * mp_race - race the userspace shrinker's registrations against reclaim
 *
 * usage: mp_race v1|v2 MPCG MEMCG SECONDS
 *
 * MPCG is a mempressure cgroup (v1: of a mempressure-only mount; v2: a
 * cgroup with memory and mempressure enabled and a memory.max), MEMCG the
 * v1 memory cgroup with a limit ("-" on v2). For SECONDS, while a hog in
 * the cgroups keeps reclaim asking:
 *
 *   - registration threads register a shrinker, add chunks from several
 *     threads at once, and close it while requests may be in flight
 *     (v1: the eventfd, v2: the file);
 *   - a forked child shares the registration's file descriptors, writes
 *     counts and reads requests, and exits while the parent goes on;
 *   - at the end, the cgroup is removed while reclaim is still active
 *     (v1 only: on v2 the caller removes it).
 *
 * Checks nothing by itself but that every call fails only with the errors
 * the ABI documents; the kernel's lockdep, KASAN and list debugging (the
 * VM's debug kernel) and the console check of the harness do the rest.
 * Prints one line of counts; exits 0 when every round ran, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
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

#define ADDERS 4

static int v2;
static const char *mpcg, *memcg;
static volatile int stop;
static unsigned long rounds, writes, requests, bad;

struct reg {
	int efd; /* v1: the eventfd; v2: -1 */
	int fd;	 /* mempressure.shrinker */
};

static void write_file(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, str, strlen(str)) < 0)
			perror(path);
		close(fd);
	}
}

static void join(const char *dir)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		fprintf(stderr, "mp_race: cannot join '%s': %s\n", dir,
			strerror(errno));
		exit(1);
	}
	close(fd);
}

/* An error the ABI documents for a registration that is going away. */
static void check(int ret, const char *what)
{
	if (ret >= 0)
		return;
	switch (errno) {
	case EBADF:
	case ENOENT:
	case ENODEV:
	case EINVAL:
	case EAGAIN:
		return;
	case ENOMEM:
		/*
		 * The hog keeps this task's memory cgroup at its limit, and
		 * the open files, the eventfd and the registration are
		 * charged there: a registration may fail as any allocating
		 * call may (once in 947 rounds on 6.1, 2026-12-06)
		 */
		if (!strcmp(what, "register"))
			return;
		break;
	}
	__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "mp_race: %s: %s\n", what, strerror(errno));
}

static int reg_open(struct reg *r)
{
	char path[512], buf[64];
	int ctl, n;

	snprintf(path, sizeof(path), "%s/mempressure.shrinker", mpcg);
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0)
		return -1;
	if (v2) {
		r->efd = -1;
		return write(r->fd, "4096", 4) == 4 ? 0 : -1;
	}
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", mpcg);
	ctl = open(path, O_WRONLY | O_CLOEXEC);
	if (r->efd < 0 || ctl < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d %d 4096", r->efd, r->fd);
	n = write(ctl, buf, n) == n ? 0 : -1;
	close(ctl);
	return n;
}

static void reg_add(struct reg *r, const char *count)
{
	char buf[64];
	int n;

	if (v2)
		n = snprintf(buf, sizeof(buf), "%s", count);
	else
		n = snprintf(buf, sizeof(buf), "%d %s", r->efd, count);
	check(write(r->fd, buf, n), "account");
	__atomic_add_fetch(&writes, 1, __ATOMIC_RELAXED);
}

static void reg_read(struct reg *r)
{
	char buf[64];
	uint64_t n;

	if (v2)
		check(pread(r->fd, buf, sizeof(buf), 0), "read requests");
	else if (read(r->efd, &n, sizeof(n)) == sizeof(n))
		__atomic_add_fetch(&requests, 1, __ATOMIC_RELAXED);
}

static void *adder(void *arg)
{
	struct reg *r = arg;
	int i;

	for (i = 0; i < 200; i++) {
		reg_add(r, i % 3 ? "+64" : "-16");
		if (!(i % 16))
			reg_read(r);
	}
	return NULL;
}

/* One round: register, add from threads and a forked child, close. */
static void round_once(void)
{
	pthread_t t[ADDERS];
	struct reg r = { .efd = -1, .fd = -1 };
	pid_t pid;
	int i;

	if (reg_open(&r)) {
		check(-1, "register");
		if (r.efd >= 0)
			close(r.efd);
		goto out;
	}
	pid = fork();
	if (!pid) {
		/* shares the registration's fds, outlives nothing */
		adder(&r);
		_exit(0);
	}
	for (i = 0; i < ADDERS; i++)
		pthread_create(&t[i], NULL, adder, &r);
	/* close while requests may be delivered and threads still write */
	usleep(1000);
	if (r.efd >= 0)
		close(r.efd);
	for (i = 0; i < ADDERS; i++)
		pthread_join(t[i], NULL);
	if (pid > 0)
		waitpid(pid, NULL, 0);
out:
	if (r.fd >= 0)
		close(r.fd);
	__atomic_add_fetch(&rounds, 1, __ATOMIC_RELAXED);
}

/* Keeps reclaim busy: map, touch and unmap 64 MiB, again and again. */
static void hog(void)
{
	size_t size = 64 << 20, i;
	char *mem;

	for (;;) {
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(1);
		for (i = 0; i < size; i += 4096)
			mem[i] = 1;
		munmap(mem, size);
	}
}

/* The hog, started again when the OOM killer took it. */
static pid_t hog_pid;

static void hog_keep(void)
{
	if (hog_pid > 0 && waitpid(hog_pid, NULL, WNOHANG) != hog_pid)
		return;
	hog_pid = fork();
	if (!hog_pid) {
		write_file("/proc/self/oom_score_adj", "1000");
		hog();
	}
}

/* The parent directory of @dir, the cgroup to move to before rmdir. */
static void join_parent(const char *dir)
{
	char parent[512], *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	join(parent);
}

int main(int argc, char **argv)
{
	time_t end;

	if (argc != 5 || (strcmp(argv[1], "v1") && strcmp(argv[1], "v2"))) {
		fprintf(stderr, "usage: mp_race v1|v2 MPCG MEMCG SECONDS\n");
		return 64;
	}
	v2 = !strcmp(argv[1], "v2");
	mpcg = argv[2];
	memcg = argv[3];
	end = time(NULL) + atoi(argv[4]);

	/* the hog, not this program, is what the OOM killer may take */
	write_file("/proc/self/oom_score_adj", "-1000");
	/* registrations are charged where this program runs */
	join(mpcg);
	if (strcmp(memcg, "-"))
		join(memcg);

	while (time(NULL) < end) {
		hog_keep();
		round_once();
	}

	/*
	 * v1: remove the mempressure cgroup while reclaim in the memcg goes
	 * on and a shrinker with chunks lives; the hog stays in the memcg.
	 */
	if (!v2) {
		struct reg r;

		if (!reg_open(&r)) {
			reg_add(&r, "+100000");
			if (hog_pid > 0)
				kill(hog_pid, SIGKILL);
			waitpid(hog_pid, NULL, 0);
			hog_pid = 0;
			join_parent(mpcg);
			hog_keep();
			usleep(100000);
			check(rmdir(mpcg), "rmdir");
			reg_add(&r, "+1");
			reg_read(&r);
			close(r.efd);
			close(r.fd);
		}
	}

	kill(hog_pid, SIGKILL);
	waitpid(hog_pid, NULL, 0);
	printf("rounds %lu writes %lu requests %lu unexpected errors %lu\n",
	       rounds, writes, requests, bad);
	return rounds && !bad ? 0 : 1;
}
