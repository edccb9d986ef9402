// SPDX-License-Identifier: GPL-2.0
/*
 * thread-sample - where the threads of a cgroup wait, sampled
 *
 * usage: thread-sample CGDIR SECONDS [PERIOD_MS]
 *
 * Every PERIOD_MS (default 2) prints one line,
 *
 *   T_MS USAGE_MIB TID:STATE:CPU:TICKS:FRAME<CALLER ...
 *
 * T_MS since the start, USAGE_MIB the cgroup's memory.current, then each
 * thread of each process in CGDIR/cgroup.procs: its state and last CPU
 * (/proc/PID/task/TID/stat), its user plus system time in clock ticks,
 * and the two innermost frames of its kernel stack, offsets dropped ("-"
 * when there is none).  A thread running on another CPU shows the frames
 * of its last switch, so a span of samples with the same frames and the
 * same TICKS is time the thread spent off the CPU there.  Needs root
 * (the stacks) and CONFIG_STACKTRACE.  Ends after SECONDS or once CGDIR is
 * gone; exit 0, or 1 on bad usage.  A by-hand diagnosis aid for the VM
 * (boot group trace, bats/vm-bench/50-trace.bats), not a test.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* the first @n - 1 bytes of @path into @buf; -1 when it cannot be read */
static int read_file(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		return -1;
	len = fread(buf, 1, n - 1, f);
	buf[len] = '\0';
	fclose(f);
	return 0;
}

/* field @n (1-based, as in proc(5)) of a stat line, after the comm */
static const char *stat_field(const char *stat, int n)
{
	const char *p = strrchr(stat, ')');
	int i;

	if (!p)
		return NULL;
	p += 2; /* field 3, the state */
	for (i = 3; i < n && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p;
}

/* "frame<caller" from a kernel stack dump, without offsets */
static void frames(const char *stack, char *out, size_t n)
{
	const char *line = stack;
	size_t len = 0;
	int k;

	out[0] = '\0';
	for (k = 0; k < 2 && line && *line; k++) {
		const char *name = strchr(line, ' ');
		size_t l;

		if (!name)
			break;
		name++;
		l = strcspn(name, "+\n ");
		if (len + l + 2 >= n)
			break;
		if (k)
			out[len++] = '<';
		memcpy(out + len, name, l);
		len += l;
		out[len] = '\0';
		line = strchr(name, '\n');
		if (line)
			line++;
	}
	if (!len)
		snprintf(out, n, "-");
}

static void thread(int pid, const char *tid)
{
	char path[512], buf[4096], fr[128];
	const char *st, *ut, *sy, *cpu;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)))
		return;
	st = stat_field(buf, 3);
	ut = stat_field(buf, 14);
	sy = stat_field(buf, 15);
	cpu = stat_field(buf, 39);
	if (!st || !ut || !sy || !cpu)
		return;
	printf(" %s:%c:%d:%lld", tid, *st, atoi(cpu), atoll(ut) + atoll(sy));
	snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid, tid);
	if (read_file(path, buf, sizeof(buf)))
		buf[0] = '\0';
	frames(buf, fr, sizeof(fr));
	printf(":%s", fr);
}

static int sample(const char *cg, long long t)
{
	char path[4096], buf[64];
	struct dirent *de;
	FILE *procs;
	DIR *d;
	int pid;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	printf("%lld %lld", t, atoll(buf) >> 20);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	procs = fopen(path, "r");
	while (procs && fscanf(procs, "%d", &pid) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = opendir(path);
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				thread(pid, de->d_name);
		if (d)
			closedir(d);
	}
	if (procs)
		fclose(procs);
	putchar('\n');
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	long long t0, end, secs, period = 2;
	char *p;

	if (argc < 3 || argc > 4 || (secs = strtoll(argv[2], &p, 10)) <= 0 ||
	    *p ||
	    (argc == 4 && ((period = strtoll(argv[3], &p, 10)) <= 0 || *p))) {
		fprintf(stderr,
			"usage: thread-sample CGDIR SECONDS [PERIOD_MS]\n");
		return 1;
	}
	t0 = now_ms();
	end = t0 + secs * 1000;
	while (now_ms() < end && !sample(argv[1], now_ms() - t0))
		usleep((useconds_t)(period * 1000));
	return 0;
}
