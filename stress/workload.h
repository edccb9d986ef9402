/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workloads of "mpctl stress", one row each (stress-ng's stressors):
 * the allocator engine (stress/engine.h), the cache's strategies
 * (stress/cache.h) and the co-tenant (stress/cotenant.h).
 *
 * A row says what the workload needs (a shrinker to answer, which one,
 * memory.reclaim, the parent as an agent), which settings it excludes,
 * and the function that runs it in the process the parent started
 * through the hidden applet (cmd/engine.c). The parent (stress/run.c),
 * the checks, the JSON document and the report's suite ask the row; none
 * of them names a workload. A new workload is a row here and its run
 * function.
 *
 * This file is also that process's entry: stress_workload_main() maps
 * the shared memory, checks the parameters at its head once
 * (stress_params_check()) and runs the row they name.
 */
#ifndef STRESS_WORKLOAD_H
#define STRESS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"
#include "mp_err.h"
#include "mp_shrinker.h"

/* the hidden applet of mpctl that runs a workload (not in --help) */
#define STRESS_ENGINE_APPLET "__stress-engine"

enum stress_workload_kind {
	/* the program of a run, chosen when no --strategy is given */
	STRESS_WL_ALLOCATOR = 0,
	/* the program of a run: a cache, chosen by --strategy NAME */
	STRESS_WL_CACHE,
	/* a process of its own beside the program, while wanted() says so */
	STRESS_WL_BESIDE,
};

/* what a workload needs; the parent sets it up or refuses the run */
enum stress_need {
	/* a registration to answer, opened by the parent, passed on */
	STRESS_NEEDS_SHRINKER = 1 << 0,
	/* the patched kernel's shrinker (--backend mempressure) */
	STRESS_NEEDS_KERNEL_SHRINKER = 1 << 1,
	/* the emulated shrinker, whatever the kernel has */
	STRESS_NEEDS_EMULATED = 1 << 2,
	/* memory.reclaim on the run's cgroup (cgroup2, Linux 5.19) */
	STRESS_NEEDS_MEMORY_RECLAIM = 1 << 3,
	/* the parent as an agent, writing memory.reclaim every tick */
	STRESS_NEEDS_AGENT = 1 << 4,
};

/* settings of a run that a workload may exclude (stress_workload_check()) */
enum stress_setting {
	STRESS_SET_FREE_HEAP = 1 << 0,	    /* --free free */
	STRESS_SET_LAZYFREE = 1 << 1,	    /* --lazyfree */
	STRESS_SET_ANSWER_DELAY = 1 << 2,   /* --answer-delay */
	STRESS_SET_STOP_ANSWERING = 1 << 3, /* --stop-answering */
};

struct stress_workload {
	const char *name;  /* --strategy NAME, the document's "strategy" */
	const char *title; /* in messages: "co-tenant" */
	enum stress_workload_kind kind;
	unsigned int needs;    /* enum stress_need */
	unsigned int excludes; /* enum stress_setting */
	/* the cache keeps its chunks MADV_FREE once filled */
	bool lazyfree;
	/* STRESS_WL_BESIDE: whether the run wants it */
	bool (*wanted)(const struct stress_params *p);
	/*
	 * Run until shm->stop, in the process the parent started; sh is the
	 * registration with STRESS_NEEDS_SHRINKER, else NULL. 0, or -1 with
	 * shm->error set.
	 */
	int (*run)(const struct stress_params *p, struct stress_shared *shm,
		   struct mp_shrinker *sh);
};

/* every row; the first is the allocator engine, the default program */
extern const struct stress_workload stress_workloads[];
extern const size_t stress_nr_workloads;

/* the default program: the allocator engine */
const struct stress_workload *stress_workload_default(void);
/* the program --strategy NAME picks, NULL for no such strategy */
const struct stress_workload *stress_workload_strategy(const char *name);
/* the STRESS_WL_BESIDE row of that name, NULL if none */
const struct stress_workload *stress_workload_beside(const char *name);
/* the row at index i of the parameters, NULL out of range */
const struct stress_workload *stress_workload_at(int32_t i);
/* w's index, for the parameters */
int32_t stress_workload_index(const struct stress_workload *w);

/* the run's settings as enum stress_setting bits */
unsigned int stress_settings(int free_mode, bool lazyfree,
			     uint64_t answer_delay_ns,
			     uint64_t stop_answering_ns);
/*
 * 0, or -1 with err (MP_EXIT_USAGE) naming the first setting in
 * @settings that program w excludes, and why
 */
int stress_workload_check(const struct stress_workload *w,
			  unsigned int settings, struct mp_err *err);

/* 0, or -1 with err (MP_EXIT_USAGE) naming the first bad setting. */
int stress_params_check(const struct stress_params *p, struct mp_err *err);

/*
 * The process of a workload, started by stress_run() as the hidden applet
 * STRESS_ENGINE_APPLET (cmd/engine.c) on the shared memory behind
 * @shm_fd: the program the parameters name or, with @beside, the
 * STRESS_WL_BESIDE row @beside. Its exit status; err set (nothing
 * printed) when @shm_fd is not the memfd of 'mpctl stress', holds bad
 * settings, or does not want @beside; a later failure goes to the
 * shared memory's error, for the parent.
 */
int stress_workload_main(int shm_fd, const struct stress_workload *beside,
			 struct mp_err *err);

#endif
