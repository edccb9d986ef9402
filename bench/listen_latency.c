// SPDX-License-Identifier: GPL-2.0
/*
 * listen_latency: how long from the kernel's eventfd signal to the event's
 * line on mpctl listen's stdout.
 *
 * A reference listener registers its own eventfd on the same cgroup's
 * memory.pressure_level at the same level, so the kernel signals it in the
 * same vmpressure_event() loop as mpctl's, and blocks in read() on it. Its
 * wake-up stands for the kernel's signal. Each line mpctl prints is
 * timestamped as it arrives on a pipe and paired with the earliest
 * reference wake-up since the previous line: the latency of the line.
 * Since the reference thread also has to wake up, the figure includes the
 * difference of two wake-ups, and the pipe to this program.
 *
 * usage: listen_latency CGROUP_DIR SECONDS OUT.json MPCTL [ARGS...]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define MAX_SAMPLES 100000

static uint64_t ref[MAX_SAMPLES];
static volatile int nref;
static int efd;

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *ref_fn(void *arg)
{
	uint64_t n;

	(void)arg;
	while (read(efd, &n, sizeof(n)) == sizeof(n)) {
		uint64_t t = now();

		if (nref < MAX_SAMPLES)
			ref[__atomic_load_n(&nref, __ATOMIC_RELAXED)] = t;
		__atomic_add_fetch(&nref, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const uint64_t *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return n ? v[i] : 0;
}

int main(int argc, char **argv)
{
	static uint64_t lat[MAX_SAMPLES], user[MAX_SAMPLES];
	char path[4096], cmd[64], line[4096];
	int lfd, cfd, pfd[2], nlat = 0, used = 0, nlines = 0;
	uint64_t deadline, prev_line = 0;
	pthread_t thr;
	struct sched_param sp;
	pid_t pid;
	FILE *in;
	json_t *doc;

	if (argc < 5) {
		fprintf(stderr,
			"usage: %s CGROUP SECONDS OUT.json MPCTL [ARGS...]\n",
			argv[0]);
		return 64;
	}
	snprintf(path, sizeof(path), "%s/memory.pressure_level", argv[1]);
	lfd = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", argv[1]);
	cfd = open(path, O_WRONLY);
	efd = eventfd(0, 0);
	if (lfd < 0 || cfd < 0 || efd < 0) {
		perror("listen_latency: registration");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "%d %d low", efd, lfd);
	if (write(cfd, cmd, strlen(cmd)) < 0) {
		perror("listen_latency: cgroup.event_control");
		return 1;
	}
	/*
	 * The observer runs SCHED_FIFO above any listener, so that its own
	 * wake-ups and timestamps are not what is measured.
	 */
	sp.sched_priority = 2;
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		perror("listen_latency: SCHED_FIFO (the figures include the observer's delays)");
	pthread_create(&thr, NULL, ref_fn, NULL);

	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid == 0) {
		struct sched_param other = { 0 };

		sched_setscheduler(0, SCHED_OTHER, &other);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[4], argv + 4);
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	deadline = now() + strtoull(argv[2], NULL, 10) * 1000000000ULL;
	while (fgets(line, sizeof(line), in)) {
		uint64_t t = now(), first = 0, mono;
		char *p;
		int i, n = __atomic_load_n(&nref, __ATOMIC_ACQUIRE);

		nlines++;
		/* the earliest kernel signal this line accounts for */
		for (i = used; i < n && i < MAX_SAMPLES; i++) {
			if (ref[i] > prev_line) {
				first = ref[i];
				break;
			}
		}
		used = n;
		if (first && first <= t && nlat < MAX_SAMPLES) {
			lat[nlat] = t - first;
			p = strstr(line, "\"monotonic_ns\":");
			mono = p ? strtoull(p + 15, NULL, 10) : 0;
			user[nlat] = mono && mono <= t ? t - mono : 0;
			nlat++;
		}
		prev_line = t;
		if (t > deadline)
			break;
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);

	qsort(lat, nlat, sizeof(lat[0]), cmp_u64);
	qsort(user, nlat, sizeof(user[0]), cmp_u64);
	/* clang-format off */
	doc = json_pack("{s:{s:s, s:i}, s:{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I}}",
		"schema", "name", "mpctl-bench-listen-latency", "version", 1,
		"latency",
		"lines", nlines, "kernel_signals", nref, "samples", nlat,
		"signal_to_stdout_p50_ns", (json_int_t)pct(lat, nlat, 0.50),
		"signal_to_stdout_p99_ns", (json_int_t)pct(lat, nlat, 0.99),
		"signal_to_stdout_max_ns", (json_int_t)(nlat ? lat[nlat - 1] : 0),
		"wakeup_to_stdout_p50_ns", (json_int_t)pct(user, nlat, 0.50),
		"wakeup_to_stdout_p99_ns", (json_int_t)pct(user, nlat, 0.99),
		"wakeup_to_stdout_max_ns", (json_int_t)(nlat ? user[nlat - 1] : 0));
	/* clang-format on */
	json_dump_file(doc, argv[3], JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	return nlat ? 0 : 1;
}
