// SPDX-License-Identifier: GPL-2.0
/*
 * mpvm - small static helper for the in-VM bats suites
 *
 * bash cannot make an eventfd or poll for POLLPRI, so the suites drive the
 * cgroup files through this program.  Every failing system call is reported
 * as "error: <ERRNO_NAME> <what>" on stdout, so tests can match the errno.
 *
 * usage:
 *   mpvm [-u UID] evctl CGDIR FILE ARGS [opts] [-- CMD...]
 *	v1: eventfd + open CGDIR/FILE, write "<efd> <fd> ARGS" to
 *	CGDIR/cgroup.event_control, print "registered", run CMD, print
 *	"event <value>" for each eventfd read and "events=N total=T" at the end
 *   mpvm [-u UID] v1-shrinker CGDIR CHUNK ADD [opts] [-- CMD...]
 *	v1 user-space shrinker: register CHUNK through event_control, write
 *	"<efd> +ADD" to mempressure.shrinker, behave like an application that
 *	frees what it is asked to: "request N" for each request, "over" when
 *	asked for more than it has registered
 *   mpvm [-u UID] v2-level CGDIR LEVEL [opts] [-- CMD...]
 *	v2: open CGDIR/mempressure.level O_RDWR, write LEVEL, poll POLLPRI,
 *	print "event <line>" for each "<level> <count>" read
 *   mpvm [-u UID] v2-shrinker CGDIR CHUNK ADD [opts] [-- CMD...]
 *	v2 user-space shrinker: write CHUNK, then "+ADD", poll POLLPRI, read
 *	"<N>", same output as v1-shrinker
 *   mpvm [-u UID] v2-many CGDIR N CHUNK ADD [opts]
 *	N v2 shrinkers on N opens of CGDIR/mempressure.shrinker, ADD chunks
 *	each (-a: held for real, one pool), all polled by this one task; N 0
 *	holds ADD chunks without a registration (a baseline).  "registered"
 *	once all are, "many n=N requests=R chunks=C held=H polls=P" at the
 *	end (timeout or SIGTERM), P the polls that returned an event
 *   mpvm [-u UID] alloc HOLD_MB STEP_KB MS
 *	an allocator: touch HOLD_MB MiB and keep it, print "registered", then
 *	for MS milliseconds map STEP_KB KiB, write each page, unmap it;
 *	"alloc loops=L ms=T" and "waits sleeps=S" (voluntary context switches
 *	over the loop: the times it slept) at the end
 *   mpvm [-u UID] watch FILE [opts]
 *	a file that kernfs notifies (memory.events, mempressure.events): read
 *	it, print "watching <first line>", then poll POLLPRI and print
 *	"event <first line>" for each notification
 *   mpvm [-u UID] ec CGDIR EFD TARGET ARGS
 *	one event_control write with chosen fds; EFD is eventfd, pipe, closed,
 *	or a literal number; TARGET is a file name under CGDIR, closed, or a
 *	literal number; prints "ok" or "error: ERRNO"
 *   mpvm [-u UID] write FILE STRING...
 *	open FILE O_RDWR once and write each STRING on that fd in turn,
 *	printing "ok" or "error: ERRNO" for each
 *   mpvm [-u UID] shrinker-write CGDIR EFD STRING...
 *	v1: register an eventfd shrinker of chunk 4096, then write each STRING
 *	to mempressure.shrinker with "%d" replaced by the registered eventfd
 *	(EFD "keep") or by another fd (EFD as for ec: eventfd, pipe, closed);
 *	a STRING "@ec FMT" is written to cgroup.event_control instead, with
 *	the fd and the registered mempressure.shrinker fd for its %d;
 *	"state <chunk_size chunks>,..." follows each write
 *
 * opts: -t MS  stop waiting for events after MS milliseconds (default 10000;
 *              SIGTERM stops it too, with the same summary)
 *       -n N   stop after N events
 *       -a     allocate the registered chunks for real and free what the
 *              kernel asks for (shrinkers)
 *       -f     with -a: map each chunk (CHUNK a page multiple), write it and
 *              mark it MADV_FREE, so that reclaim may drop it without an
 *              answer; a chunk whose first word reads zero when it is freed
 *              on request or at the end was dropped: "lost=N checked=M"
 *              follows the summary line
 *       -k     keep waiting the full timeout even after CMD exited
 *
 * The event loops end with "waits polls=P sleeps=S": P calls to poll(), S
 * times this process slept (voluntary context switches).  A poll() that
 * finds nothing sleeps once, until its timeout or a signal; S - P above 0
 * counts the wake-ups that found no event.
 *
 * exit status: 0 at least one event (or -n reached, or a command without
 * events like ec/write that ran), 1 usage, 2 a setup call failed, 3 no event
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	/* clang-format off */
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBADF: return "EBADF";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	case ENOSPC: return "ENOSPC";
	case EEXIST: return "EEXIST";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	case EOVERFLOW: return "EOVERFLOW";
	case ENODEV: return "ENODEV";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EFAULT: return "EFAULT";
	case E2BIG: return "E2BIG";
	case EAGAIN: return "EAGAIN";
	case ESRCH: return "ESRCH";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ENXIO: return "ENXIO";
	default: return "EOTHER";
	}
	/* clang-format on */
}

static void fail(const char *what)
{
	printf("error: %s %s (%s)\n", errname(errno), what, strerror(errno));
	fflush(stdout);
	exit(2);
}

/* print the shrinker list of DIR's mempressure.shrinker on one line */
static void print_state(const char *dir)
{
	char path[4096], buf[4096];
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "%s/mempressure.shrinker", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("state error: %s\n", errname(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		printf("state error: %s\n", errname(errno));
		return;
	}
	buf[n] = 0;
	for (i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = i == n - 1 ? 0 : ',';
	printf("state %s\n", buf);
	fflush(stdout);
}

static long timeout_ms = 10000;
static long max_events;
static int alloc_chunks;
static int lazy_chunks;
static int keep_waiting;
static char **cmd;
static const char *state_dir;
static pid_t child;
static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void start_cmd(void)
{
	if (!cmd || !cmd[0])
		return;
	child = fork();
	if (child < 0)
		fail("fork");
	if (child == 0) {
		execvp(cmd[0], cmd);
		fprintf(stderr, "mpvm: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
}

/* 1 while the command runs (or there is none and we wait for time) */
static int cmd_running(int *status)
{
	if (child <= 0)
		return 1;
	if (waitpid(child, status, WNOHANG) == child) {
		child = 0;
		printf("cmd-exit %d\n", WIFEXITED(*status) ?
						WEXITSTATUS(*status) :
						128 + WTERMSIG(*status));
		fflush(stdout);
		return 0;
	}
	return 1;
}

static void stop_cmd(void)
{
	int status;

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		printf("cmd-killed\n");
	}
}

/* chunks held by the pretend application */
static char **chunks;
static long nchunks, chunk_size;
/* -f: chunks checked (freed or held at the end), found dropped */
static long lazy_checked, lazy_lost;

/* -f: mapped (MADV_FREE takes whole pages), written, then marked */
static char *lazy_chunk(void)
{
	char *c = mmap(NULL, chunk_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		fail("mmap");
	memset(c, 0x5a, chunk_size);
	if (madvise(c, chunk_size, MADV_FREE))
		fail("madvise MADV_FREE");
	return c;
}

/* -f: a dropped page reads zero (the zero page: nothing is charged) */
static void lazy_check(const char *c)
{
	lazy_checked++;
	if (!*(const volatile long *)c)
		lazy_lost++;
}

static void hold_chunks(long n)
{
	long i;

	chunks = realloc(chunks, sizeof(*chunks) * (nchunks + n));
	if (!chunks)
		fail("realloc");
	for (i = 0; i < n; i++) {
		chunks[nchunks + i] = NULL;
		if (alloc_chunks && lazy_chunks) {
			chunks[nchunks + i] = lazy_chunk();
		} else if (alloc_chunks) {
			chunks[nchunks + i] = malloc(chunk_size);
			if (!chunks[nchunks + i])
				fail("malloc");
			memset(chunks[nchunks + i], 0x5a, chunk_size);
		}
	}
	nchunks += n;
}

static void free_chunks(long n)
{
	char *c;

	while (n-- > 0 && nchunks > 0) {
		c = chunks[--nchunks];
		if (c && lazy_chunks) {
			lazy_check(c);
			munmap(c, chunk_size);
		} else {
			free(c);
		}
	}
}

/*
 * The event loop.  kind 0: v1 eventfd level, 1: v1 eventfd shrinker,
 * 2: v2 level (POLLPRI), 3: v2 shrinker (POLLPRI).
 */
/* the voluntary context switches of this process so far */
static long nvcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		fail("getrusage");
	return ru.ru_nvcsw;
}

static int loop(int fd, int kind)
{
	long deadline = now_ms() + timeout_ms, events = 0, total = 0;
	long grace = -1, polls = 0, sleeps = nvcsw();
	int status = 0, over = 0;

	start_cmd();
	for (;;) {
		struct pollfd p = { .fd = fd };
		long left = deadline - now_ms();
		char buf[128];
		uint64_t v = 0;
		ssize_t n;

		if (!cmd_running(&status) && grace < 0 && !keep_waiting) {
			/* let late events in, then stop */
			grace = now_ms() + 1000;
			if (grace < deadline)
				deadline = grace;
			left = deadline - now_ms();
		}
		if (stopping)
			break;
		if (left <= 0 || (max_events && events >= max_events))
			break;
		p.events = kind >= 2 ? POLLPRI : POLLIN;
		polls++;
		n = poll(&p, 1, left > 200 ? 200 : left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("poll");
		if (n == 0)
			continue;
		if (kind < 2) {
			if (read(fd, &v, sizeof(v)) != sizeof(v))
				fail("read eventfd");
			/* v1: 2^63 added, the cgroup was removed */
			if (kind == 1 && v >= 1ULL << 63) {
				printf("gone %llu\n",
				       (unsigned long long)(v - (1ULL << 63)));
				break;
			}
		} else {
			if (p.revents & (POLLERR | POLLNVAL))
				printf("revents 0x%x\n", p.revents);
			if (lseek(fd, 0, SEEK_SET) < 0)
				fail("lseek");
			n = read(fd, buf, sizeof(buf) - 1);
			if (n < 0)
				fail("read");
			buf[n] = 0;
			buf[strcspn(buf, "\n")] = 0;
			v = kind == 3 ? strtoull(buf, NULL, 10) : 1;
			if (kind == 2)
				printf("event %s\n", buf);
		}
		events++;
		total += v;
		if (kind == 0)
			printf("event %llu\n", (unsigned long long)v);
		if (kind == 1 || kind == 3) {
			printf("request %llu held %ld\n", (unsigned long long)v,
			       nchunks);
			if ((long)v > nchunks) {
				printf("over %llu > %ld\n",
				       (unsigned long long)v, nchunks);
				over = 1;
			}
			free_chunks(v);
		}
		fflush(stdout);
	}
	sleeps = nvcsw() - sleeps;
	stop_cmd();
	if (state_dir)
		print_state(state_dir);
	printf("events=%ld total=%ld held=%ld over=%d\n", events, total,
	       nchunks, over);
	printf("waits polls=%ld sleeps=%ld\n", polls, sleeps);
	if (alloc_chunks && lazy_chunks) {
		long i;

		for (i = 0; i < nchunks; i++)
			lazy_check(chunks[i]);
		printf("lost=%ld checked=%ld\n", lazy_lost, lazy_checked);
	}
	fflush(stdout);
	return events ? 0 : 3;
}

static void xwrite(int fd, const char *s, const char *what)
{
	if (write(fd, s, strlen(s)) < 0)
		fail(what);
}

static int open_in(const char *dir, const char *file, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, flags);
	if (fd < 0)
		fail(path);
	return fd;
}

static int v1_register(const char *dir, const char *file, const char *args,
		       int *efd_out)
{
	char line[256];
	int efd, fd, ec;

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		fail("eventfd");
	fd = open_in(dir, file, O_RDONLY | O_CLOEXEC);
	ec = open_in(dir, "cgroup.event_control", O_WRONLY | O_CLOEXEC);
	snprintf(line, sizeof(line), "%d %d %s", efd, fd, args);
	xwrite(ec, line, "event_control");
	close(ec);
	*efd_out = efd;
	return fd;
}

static int cmd_evctl(int argc, char **argv)
{
	int efd;

	if (argc < 4)
		return 1;
	v1_register(argv[1], argv[2], argv[3], &efd);
	printf("registered\n");
	fflush(stdout);
	return loop(efd, 0);
}

static int cmd_v1_shrinker(int argc, char **argv)
{
	char line[64];
	int efd, sfd;

	if (argc < 4)
		return 1;
	state_dir = argv[1];
	chunk_size = atol(argv[2]);
	v1_register(argv[1], "mempressure.shrinker", argv[2], &efd);
	sfd = open_in(argv[1], "mempressure.shrinker", O_WRONLY | O_CLOEXEC);
	hold_chunks(atol(argv[3]));
	snprintf(line, sizeof(line), "%d +%s", efd, argv[3]);
	xwrite(sfd, line, "add chunks");
	printf("registered\n");
	fflush(stdout);
	return loop(efd, 1);
}

static int cmd_v2_level(int argc, char **argv)
{
	int fd;

	if (argc < 3)
		return 1;
	fd = open_in(argv[1], "mempressure.level", O_RDWR | O_CLOEXEC);
	xwrite(fd, argv[2], "trigger");
	printf("registered\n");
	fflush(stdout);
	return loop(fd, 2);
}

static int cmd_v2_shrinker(int argc, char **argv)
{
	char line[64];
	int fd;

	if (argc < 4)
		return 1;
	state_dir = argv[1];
	chunk_size = atol(argv[2]);
	fd = open_in(argv[1], "mempressure.shrinker", O_RDWR | O_CLOEXEC);
	xwrite(fd, argv[2], "register chunk size");
	hold_chunks(atol(argv[3]));
	snprintf(line, sizeof(line), "+%s", argv[3]);
	xwrite(fd, line, "add chunks");
	printf("registered\n");
	fflush(stdout);
	return loop(fd, 3);
}

/* read the request pending on a v2 registration: the chunks asked, or 0 */
static unsigned long long v2_read(int fd)
{
	char buf[64];
	ssize_t len;

	if (lseek(fd, 0, SEEK_SET) < 0)
		fail("lseek");
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0)
		fail("read");
	buf[len] = 0;
	return strtoull(buf, NULL, 10);
}

/* the first line of @fd, read from offset 0, without its newline */
static void read_line(int fd, char *buf, size_t size)
{
	ssize_t len = pread(fd, buf, size - 1, 0);

	if (len < 0)
		fail("pread");
	buf[len] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static int cmd_watch(int argc, char **argv)
{
	struct pollfd p = { .events = POLLPRI };
	long events = 0, deadline = now_ms() + timeout_ms;
	char buf[256];

	if (argc < 2)
		return 1;
	p.fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (p.fd < 0)
		fail(argv[1]);
	/* kernfs reports a change against the last read of this open file */
	read_line(p.fd, buf, sizeof(buf));
	printf("watching %s\n", buf);
	while (!stopping && now_ms() < deadline &&
	       !(max_events && events >= max_events)) {
		long left = deadline - now_ms();
		int r = poll(&p, 1, left > 200 ? 200 : left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail("poll");
		if (r == 0 || !(p.revents & POLLPRI))
			continue;
		read_line(p.fd, buf, sizeof(buf));
		printf("event %s\n", buf);
		events++;
	}
	close(p.fd);
	return events ? 0 : 3;
}

static int cmd_v2_many(int argc, char **argv)
{
	long n, i, requests = 0, asked = 0, polls = 0, deadline;
	struct pollfd *p;
	char line[64];

	if (argc < 5 || atol(argv[2]) < 0)
		return 1;
	n = atol(argv[2]);
	chunk_size = atol(argv[3]);
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p)
		fail("calloc");
	snprintf(line, sizeof(line), "+%s", argv[4]);
	if (!n)
		hold_chunks(atol(argv[4]));
	for (i = 0; i < n; i++) {
		p[i].fd = open_in(argv[1], "mempressure.shrinker",
				  O_RDWR | O_CLOEXEC);
		p[i].events = POLLPRI;
		xwrite(p[i].fd, argv[3], "register chunk size");
		hold_chunks(atol(argv[4]));
		xwrite(p[i].fd, line, "add chunks");
	}
	printf("registered\n");
	deadline = now_ms() + timeout_ms;
	while (!stopping && now_ms() < deadline) {
		long left = deadline - now_ms();
		int r = poll(p, n, left > 200 ? 200 : left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail("poll");
		if (r > 0)
			polls++;
		for (i = 0; r > 0 && i < n; i++) {
			unsigned long long v;

			if (!p[i].revents)
				continue;
			/* a registration whose cgroup went: poll it no more */
			if (p[i].revents & (POLLERR | POLLNVAL | POLLHUP)) {
				printf("revents %ld 0x%x\n", i, p[i].revents);
				p[i].fd = -1;
				continue;
			}
			v = v2_read(p[i].fd);
			if (v) {
				requests++;
				asked += v;
				free_chunks(v);
			}
		}
	}
	printf("many n=%ld requests=%ld chunks=%ld held=%ld polls=%ld\n", n,
	       requests, asked, nchunks, polls);
	free(p);
	return 0;
}

static int pick_fd(const char *dir, const char *what)
{
	int fds[2], fd;

	if (!strcmp(what, "eventfd")) {
		fd = eventfd(0, 0);
		if (fd < 0)
			fail("eventfd");
		return fd;
	}
	if (!strcmp(what, "pipe")) {
		if (pipe(fds))
			fail("pipe");
		return fds[0];
	}
	if (!strcmp(what, "closed")) {
		/* a number no later open() reuses */
		for (fd = 1000; fcntl(fd, F_GETFD) >= 0; fd++)
			;
		return fd;
	}
	if ((what[0] >= '0' && what[0] <= '9') || what[0] == '-')
		return atoi(what);
	if (what[0] == '/')
		fd = open(what, O_RDONLY);
	else
		return open_in(dir, what, O_RDONLY);
	if (fd < 0)
		fail(what);
	return fd;
}

static void report_write(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		printf("error: %s\n", errname(errno));
	else
		printf("ok\n");
	fflush(stdout);
}

/*
 * alloc HOLD_MB STEP_KB MS: touch HOLD_MB MiB and keep it, then for MS
 * milliseconds map STEP_KB KiB, write each page and unmap it again: an
 * allocator whose memory cgroup stays where it is, over a mark or not.
 */
static int cmd_alloc(int argc, char **argv)
{
	long hold, step, ms, loops = 0, start, end, sleeps, page = 4096, i;
	char *held, *p;

	if (argc < 4)
		return 1;
	hold = atol(argv[1]) << 20;
	step = atol(argv[2]) << 10;
	ms = atol(argv[3]);
	if (hold < 0 || step < page || ms <= 0)
		return 1;
	if (hold) {
		held = mmap(NULL, hold, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (held == MAP_FAILED)
			fail("mmap held");
		memset(held, 0x5a, hold);
	}
	printf("registered\n");
	fflush(stdout);
	sleeps = nvcsw();
	start = now_ms();
	end = start + ms;
	while (now_ms() < end && !stopping) {
		p = mmap(NULL, step, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			fail("mmap");
		for (i = 0; i < step; i += page)
			p[i] = 1;
		munmap(p, step);
		loops++;
	}
	printf("alloc loops=%ld ms=%ld\n", loops, now_ms() - start);
	printf("waits sleeps=%ld\n", nvcsw() - sleeps);
	fflush(stdout);
	return 0;
}

static int cmd_ec(int argc, char **argv)
{
	char line[512];
	int efd, fd, ec;

	if (argc < 5)
		return 1;
	/* first, so that a "closed" fd number is not reused by it */
	ec = open_in(argv[1], "cgroup.event_control", O_WRONLY);
	efd = pick_fd(argv[1], argv[2]);
	fd = pick_fd(argv[1], argv[3]);
	snprintf(line, sizeof(line), "%d %d %s", efd, fd, argv[4]);
	report_write(ec, line);
	return 0;
}

static int cmd_write(int argc, char **argv)
{
	int fd, i;

	if (argc < 3)
		return 1;
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		fail(argv[1]);
	for (i = 2; i < argc; i++) {
		char dir[4096], *slash;

		report_write(fd, argv[i]);
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		slash = strrchr(dir, '/');
		if (slash && !strcmp(slash + 1, "mempressure.shrinker")) {
			*slash = 0;
			print_state(dir);
		}
	}
	return 0;
}

static int cmd_shrinker_write(int argc, char **argv)
{
	char line[512];
	int efd, sfd, rfd, i, use;

	if (argc < 4)
		return 1;
	rfd = v1_register(argv[1], "mempressure.shrinker", "4096", &efd);
	sfd = open_in(argv[1], "mempressure.shrinker", O_WRONLY);
	use = efd;
	if (strcmp(argv[2], "keep"))
		use = pick_fd(argv[1], argv[2]);
	for (i = 3; i < argc; i++) {
		if (!strncmp(argv[i], "@ec ", 4)) {
			int ec = open_in(argv[1], "cgroup.event_control",
					 O_WRONLY);

			snprintf(line, sizeof(line), argv[i] + 4, use, rfd);
			report_write(ec, line);
			close(ec);
		} else {
			snprintf(line, sizeof(line), argv[i], use);
			report_write(sfd, line);
		}
		print_state(argv[1]);
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: mpvm [-u UID] evctl|v1-shrinker|v2-level|"
			"v2-shrinker|v2-many|watch|ec|write|shrinker-write "
			"ARGS... "
			"(see mpvm.c)\n");
	return 1;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "evctl", cmd_evctl },
		{ "v1-shrinker", cmd_v1_shrinker },
		{ "v2-level", cmd_v2_level },
		{ "v2-shrinker", cmd_v2_shrinker },
		{ "v2-many", cmd_v2_many },
		{ "watch", cmd_watch },
		{ "alloc", cmd_alloc },
		{ "ec", cmd_ec },
		{ "write", cmd_write },
		{ "shrinker-write", cmd_shrinker_write },
	};
	int i, n = 0, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		struct sigaction sa = { .sa_handler = on_term };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	argv++;
	argc--;
	if (argc >= 2 && !strcmp(argv[0], "-u")) {
		uid_t uid = atoi(argv[1]);

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			fail("setuid");
		argv += 2;
		argc -= 2;
	}
	if (argc < 1)
		return usage();
	/* options and the command after the positional arguments */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			cmd = &argv[i + 1];
			break;
		} else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			timeout_ms = atol(argv[++i]);
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			max_events = atol(argv[++i]);
		} else if (!strcmp(argv[i], "-a")) {
			alloc_chunks = 1;
		} else if (!strcmp(argv[i], "-f")) {
			lazy_chunks = 1;
		} else if (!strcmp(argv[i], "-k")) {
			keep_waiting = 1;
		} else {
			argv[n + 1] = argv[i];
			n++;
		}
	}
	for (i = 0; i < (int)(sizeof(cmds) / sizeof(cmds[0])); i++) {
		if (!strcmp(argv[0], cmds[i].name)) {
			rc = cmds[i].fn(n + 1, argv);
			if (rc == 1)
				return usage();
			return rc;
		}
	}
	return usage();
}
