/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stress run: allocate more than a cgroup's limit with a user-space
 * shrinker freeing chunks on request, and measure how it went.
 *
 * The calling process stays outside the run's cgroup: stress_run() creates
 * a transient cgroup with the limit (stress_cgroups_setup()), registers the
 * shrinker (the kernel's or the emulated one, whose thread then lives in
 * the caller, outside the limit), starts the engine as the hidden applet
 * "mpctl __stress-engine" through /proc/self/exe inside the cgroup, samples
 * usage every 100 ms and fills a struct stress_result from numbers the
 * engine keeps in shared memory, so that they survive its OOM kill.
 *
 * Nothing here prints: the caller renders the result; progress comes
 * through a callback.
 */
#ifndef STRESS_RUN_H
#define STRESS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "mp_cgroup.h"
#include "mp_err.h"
#include "mp_memstat.h"
#include "mp_pressure.h"
#include "mp_shrinker.h"
#include "mp_target.h"
#include "workload.h"

#define STRESS_MIN_CHUNK 4096ULL
#define STRESS_MIN_LIMIT (16ULL << 20) /* below, the engine is OOM-killed */
/*
 * The engine's time to stop at the end of a run; beyond it, it is
 * SIGKILLed and the run failed (exit_reason "engine_unresponsive")
 */
#define STRESS_ENGINE_GRACE_NS 5000000000ULL
/*
 * A transient cgroup's limit is at least this many times what the
 * allocators hold in flight (threads x chunk): measured on a v1 host with
 * the emulated shrinker, 4 threads of 1M chunks were OOM-killed in 2 of 2
 * runs at 16M, 24M, 32M and 48M, and in none of 3 at 64M.
 */
#define STRESS_LIMIT_PER_INFLIGHT 16

struct stress_sample {
	uint64_t t_ns;	 /* since the start */
	uint64_t usage;	 /* bytes */
	uint64_t held;	 /* chunks */
	uint64_t events; /* pressure events, all levels */
	uint64_t requests;
};

struct stress_run_cfg {
	uint64_t chunk;
	int threads;
	uint64_t duration_ns;
	uint64_t until_freed; /* end once freed, 0: at the duration */
	uint64_t limit;	      /* --cgroup without --limit: set to its limit */
	bool limit_set;
	double overcommit;
	enum mp_backend backend;
	bool emulate;
	const char *cgroup; /* an existing cgroup, NULL: a transient one */
	const char *parent; /* where the transient one goes, NULL: default */
	const char *hog;    /* stress-ng arguments, or NULL */
	double target;	    /* emulation policy, 0: default */
	double high;	    /* 0: default, < 0: off */
	int reclaim_nice;
	int rt_priority; /* of the emulator thread */
	int reclaim_rt;	 /* of the engine's reclaim thread */
	bool no_early_warning;
	bool no_throttle;
	bool force;		    /* --cgroup without a memory limit */
	bool swap;		    /* no memsw / swap.max limit */
	enum stress_free free_mode; /* how chunks are mapped and freed */
	bool no_populate;	    /* a write a page, no MADV_POPULATE_WRITE */
	bool lazyfree;		  /* the engine's chunks MADV_FREE (engine.h) */
	uint64_t answer_delay_ns; /* before each answer (engine.h) */
	/* stop answering after this long (engine.h), 0: never */
	uint64_t stop_answering_ns;
	/* the co-tenant's operation size (cotenant.h), 0: no co-tenant */
	uint64_t cotenant_bytes;
	/* the program: the allocator engine, or a cache (workload.h) */
	const struct stress_workload *workload;
	uint64_t miss_cost_ns;
	uint64_t seed;
	/* every 200 ms while the run goes, if set */
	void (*progress)(const struct stress_sample *s, uint64_t freed,
			 const uint64_t events[MP_LEVEL_NR], uint64_t limit,
			 void *arg);
	void *progress_arg;
};

/* The run's cgroups: the run's (limit), engine and hog leaves, mempressure */
struct stress_cgroups {
	struct mp_parent parent; /* where tgt was created */
	struct mp_target tgt, engine_t, hog_t;
	/* into the targets: memory cgroups of the run, engine, hog; NULL mp_cg: none apart */
	const struct mp_cgroup *cg, *engine_cg, *hog_cg, *mp_cg;
	bool created, engine_created, hog_created;
	/* --cgroup: claimed for the run (mp_cg_claim()), -1 without one */
	int claim_fd;
	int others; /* processes already in --cgroup */
};

/* why a run ended: the document's exit_reason (stress_end_name()) */
enum stress_end {
	STRESS_END_NONE = 0, /* not yet */
	STRESS_END_DURATION,
	STRESS_END_FREED,	/* --until-freed */
	STRESS_END_INTERRUPTED, /* SIGINT, SIGTERM, SIGHUP */
	STRESS_END_ENGINE_KILLED,
	STRESS_END_ENGINE_FAILED,
	/* SIGKILLed after the run: it did not stop */
	STRESS_END_ENGINE_UNRESPONSIVE,
	STRESS_END_FAILED,
	STRESS_END_NR,
};

/* "duration", "freed", ...; NULL for STRESS_END_NONE or out of range */
const char *stress_end_name(enum stress_end e);

struct stress_result {
	enum stress_end reason;
	enum mp_shrinker_mode mode;
	enum mp_backend backend;
	bool emulated;
	struct mp_shrinker_stats ss;
	uint64_t events[MP_LEVEL_NR];
	char cgroup[PATH_MAX]; /* path in the hierarchy, "/" for the host */
	int cgroup_others; /* processes already in --cgroup: they share it */
	bool transient;
	uint64_t high_bytes; /* memory.high / soft limit, 0 if none */
	uint64_t limit;	     /* the limit the run worked against */
	uint64_t start_ns, end_ns;
	uint64_t peak, swap_start, swap_end, swap_total;
	uint64_t swap_peak; /* the host's swap use, highest sample */
	/*
	 * The reclaim counters' growth over the run (start to end, before
	 * teardown): the host's /proc/vmstat, the run cgroup's memory.stat
	 * and memory.events (memory.oom_control on v1); have 0: unread
	 */
	struct mp_counters vmstat, cg_stat, cg_events;
	uint64_t oom_kills; /* up to the end of the run, before teardown */
	/* after it, while the engine stopped: not the run's */
	uint64_t teardown_oom_kills;
	uint64_t usage_sum; /* of the samples, for the average */
	/* memory.pressure of the cgroup (v2) or the host's PSI, over the run */
	const char *pressure_source; /* "cgroup", "host" or NULL */
	uint64_t pressure_some_us, pressure_full_us;
	/* reclaim-agent: memory.reclaim writes that worked, bytes asked */
	uint64_t agent_writes, agent_bytes;
	struct stress_shared engine; /* the engine's numbers at the end */
	bool cotenant_killed; /* the co-tenant died of a signal in the run */
	bool hog_exited;
	/*
	 * the hog ended before the run did with a failure (a non-zero
	 * status, a signal): the run was not beside a hog. Its end when
	 * the run stopped it (SIGINT, SIGKILL after a grace) is teardown
	 */
	bool hog_failed;
	int hog_status;
	char **hog_argv;    /* what ran: stress-ng and its arguments */
	char hog_said[160]; /* its last line on an error, else its last */
	bool hog_have_ops;
	uint64_t hog_bogo_ops, hog_oom_kills;
	struct stress_sample *tl;
	size_t ntl;
};

/*
 * What can be refused before anything is set up: the limit against the
 * memory available, the chunk against the limit, --hog without stress-ng,
 * the settings the program's row excludes, what it needs of the kernel.
 * 0, or -1 with err (status 64 for usage errors).
 */
int stress_check(const struct stress_run_cfg *cfg, struct mp_err *err);

/*
 * Run; 0 with res filled (whatever the engine's end: see res->reason and
 * res->engine.error), or -1 with err when the run could not be made (status
 * 64 for a chunk above --cgroup's own limit). res must be freed with
 * stress_result_free() either way. SIGINT, SIGTERM, SIGHUP and SIGCHLD
 * are taken through a signalfd and stay blocked afterwards (a second
 * Ctrl-C must not cut the report short); SIGPIPE is ignored.
 */
int stress_run(struct stress_run_cfg *cfg, struct stress_result *res,
	       struct mp_err *err);
void stress_result_free(struct stress_result *res);

/*
 * The transient cgroup of a run and its leaves, or --cgroup resolved; and
 * their removal. high_bytes is the run's memory.high (soft limit on v1).
 */
int stress_cgroups_setup(struct stress_cgroups *c,
			 const struct stress_run_cfg *cfg, uint64_t high_bytes,
			 struct mp_err *err);
void stress_cgroups_remove(struct stress_cgroups *c);

#endif
