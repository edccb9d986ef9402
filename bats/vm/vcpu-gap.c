// SPDX-License-Identifier: GPL-2.0
/*
 * vcpu-gap - how long the guest lost its CPUs to the host, measured
 *
 * usage: vcpu-gap SECONDS
 *
 * One thread pinned to each online CPU, SCHED_FIFO 90 when allowed, sleeps
 * 5 ms at a time and records how late each wake-up came.  A FIFO thread
 * that wakes preempts every task of the guest, so a wake-up late by
 * hundreds of milliseconds means that the vCPU itself did not run: qemu's
 * thread was descheduled by a busy host (plain TCG, whose guest clock
 * follows the host's).  The VM tests that bound an allocation's latency
 * add this measured gap to their bound, so that they assert what holds at
 * any host speed and still fail when the guest's kernel stalls on its own.
 *
 * Prints one line, "max_gap_ns=N cpus=K fifo=0|1", after SECONDS or on
 * SIGTERM/SIGINT.  Exit 0, or 1 on bad usage or when no thread started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 64
#define SLEEP_NS 5000000ULL

static volatile sig_atomic_t stop;
static uint64_t gap[MAX_CPUS];
static int fifo = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void *sleeper(void *arg)
{
	long cpu = (long)arg;
	struct timespec ts = { 0, SLEEP_NS };
	uint64_t t0, late;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return NULL;
	while (!stop) {
		t0 = now_ns();
		nanosleep(&ts, NULL);
		late = now_ns() - t0;
		late = late > SLEEP_NS ? late - SLEEP_NS : 0;
		if (late > gap[cpu])
			gap[cpu] = late;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 90 };
	pthread_t tid[MAX_CPUS];
	struct sigaction sa;
	struct timespec end;
	char *p;
	long secs, ncpu, i, started = 0;
	uint64_t max = 0;

	if (argc != 2 || (secs = strtol(argv[1], &p, 10)) <= 0 || *p) {
		fprintf(stderr, "usage: vcpu-gap SECONDS\n");
		return 1;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1 || ncpu > MAX_CPUS)
		ncpu = ncpu < 1 ? 1 : MAX_CPUS;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* threads inherit the policy: FIFO for all, or none at all */
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		fifo = 0;
	for (i = 0; i < ncpu; i++)
		if (!pthread_create(&tid[i], NULL, sleeper, (void *)i))
			started |= 1L << i;
	if (!started) {
		fprintf(stderr, "vcpu-gap: no thread started\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end,
					NULL) == EINTR)
		;
	stop = 1;
	for (i = 0; i < ncpu; i++) {
		if (!(started & (1L << i)))
			continue;
		pthread_join(tid[i], NULL);
		if (gap[i] > max)
			max = gap[i];
	}
	printf("max_gap_ns=%llu cpus=%ld fifo=%d\n", (unsigned long long)max,
	       ncpu, fifo);
	return 0;
}
