/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shrinker emulator: a thread that watches a cgroup's memory pressure
 * and usage and turns what it sees into requests of chunks to free, added
 * to an eventfd, as the kernel's mempressure.shrinker adds them to its own.
 *
 * It runs in one of two roles, for its owner, struct mp_shrinker
 * (mp_shrinker.h), which holds it by pointer:
 *
 *  emulation      no kernel shrinker: it listens to a pressure source,
 *                 keeps the counter of reclaimable chunks from the
 *                 "<efd> <+/-N>\n" lines of a pipe that stands in for
 *                 mempressure.shrinker, and lowers it by what it asks.
 *  early warning  beside a kernel shrinker: only the usage policy (usage
 *                 thresholds or sampling), without a counter (the kernel
 *                 keeps it) and without per-level floors; its owner lowers
 *                 the kernel's counter for what it asked.
 *
 * The policy, the statistics it keeps and the defaults are the shrinker's
 * public types, defined here where they are used and re-exported by
 * mp_shrinker.h. This header depends on nothing above it: the shrinker
 * includes the emulator, never the reverse.
 *
 * Nothing here prints; errors come back in a struct mp_err.
 */
#ifndef MP_EMULATOR_H
#define MP_EMULATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_cgroup.h"
#include "mp_err.h"
#include "mp_pressure.h"

/*
 * Emulation policy. A zero field takes the documented default, so
 * "struct mp_emul_policy p = { 0 }" is the default policy.
 *
 * On every pressure event and every usage-threshold event, and then by
 * sampling (every 2 ms while usage is above high * limit, every
 * interval_ns while it is above target * limit, and for linger_ns after
 * the last event), the emulator computes (where no usage threshold can be
 * registered, cgroup2 or high < 0, usage is sampled all the time: every
 * interval_ns, every 10 ms from (high - 0.15) * limit, every 2 ms above
 * high * limit)
 *
 *   want  = ceil((usage - target * limit) / chunk_size)
 *           - chunks asked for in the last 10 ms (still being freed)
 *   floor = ceil(min_frac[level] * counter)     (on an event of that level)
 *   n     = min(max(want, floor, 0), counter)
 *
 * lowers its counter by n and adds n to the request eventfd: the same
 * contract as the kernel (chunks not freed must be re-added).
 *
 * "usage" and "limit" are the cgroup's memory.usage_in_bytes and
 * hierarchical_memory_limit (v1) or memory.current and memory.max (v2);
 * for a cgroup without a limit (or the root), MemTotal - MemAvailable and
 * MemTotal from /proc/meminfo. With the psi backend and a cgroup of the v1
 * memory hierarchy, the pressure is the host's (/proc/pressure/memory or
 * the cgroup2 root) and the usage and limit are the memcg's.
 *
 * Besides the pressure source, the emulator registers usage thresholds
 * where the kernel has them: memcg v1 thresholds (cgroup.event_control on
 * memory.usage_in_bytes) at high * limit and four more steps up to
 * halfway between the last one and the limit, so that usage that keeps
 * climbing after a request raises another event before the limit.
 * vmpressure alone comes too late for fast allocators: reclaim raises it
 * only at the limit, where the OOM killer is a few milliseconds away.
 *
 * The emulator thread should answer before the allocators reach the
 * limit: rt_priority runs it SCHED_FIFO (mpctl stress uses 1), as the
 * kernel's shrinker runs in reclaim itself.
 */
/* clang-format off */
struct mp_emul_policy {
	double target;		/* fraction of the limit to get back under;
				 * default 0.85 */
	double high;		/* usage threshold, fraction of the limit;
				 * default 0.90; negative disables */
	double min_frac[MP_LEVEL_NR];	/* per event level, fraction of the
				 * counter asked at least; defaults
				 * low 0, medium 0.05, critical 0.25 */
	uint64_t interval_ns;	/* sampling while above target; 100 ms */
	uint64_t linger_ns;	/* keep sampling after an event; 1 s */
	enum mp_level level;	/* lowest pressure level listened to; low */
	int rt_priority;	/* >0: SCHED_FIFO priority of the emulator
				 * thread (needs CAP_SYS_NICE); 0 default */
};
/* clang-format on */

/* Defaults, for documentation and for callers that print the policy. */
#define MP_EMUL_TARGET	     0.85
#define MP_EMUL_HIGH	     0.90
#define MP_EMUL_MIN_LOW	     0.0
#define MP_EMUL_MIN_MEDIUM   0.05
#define MP_EMUL_MIN_CRITICAL 0.25
#define MP_EMUL_INTERVAL_NS  100000000ULL
#define MP_EMUL_LINGER_NS    1000000000ULL

/* Fill the zero fields of p with the defaults above. */
void mp_emul_policy_defaults(struct mp_emul_policy *p);

/*
 * The high mark of an emulated run (a transient cgroup's memory.high, the
 * usage at which the stress engine's allocators pause): midway between
 * the policy's high (its target when high is off, < 0) and the limit.
 */
uint64_t mp_emul_high_mark(const struct mp_emul_policy *p, uint64_t limit);

/*
 * What the emulator has seen and done (all zero for a kernel shrinker
 * without early warning, or a client). Safe to read from any thread while
 * it runs (mp_shrinker_stats()).
 */
struct mp_shrinker_stats {
	uint64_t events[MP_LEVEL_NR]; /* pressure events by level */
	uint64_t thresholds;	      /* usage threshold events */
	uint64_t samples;	      /* periodic samples while above target */
	uint64_t requests;	      /* eventfd writes (requests made) */
	uint64_t chunks_requested;
	uint64_t counter;     /* reclaimable chunks it believes exist */
	uint64_t added;	      /* sum of +N received */
	uint64_t removed;     /* sum of -N received */
	uint64_t usage_bytes; /* last usage read */
	uint64_t limit_bytes; /* limit it works against */
};

struct mp_emulator;

/* clang-format off */
struct mp_emulator_cfg {
	struct mp_emul_policy policy;	/* as mp_emulator_policy() left it */
	const struct mp_cgroup *ucg;	/* where usage and limit are read */
	uint64_t chunk_size;	/* bytes, > 0 */
	int req_fd;		/* the eventfd requests are added to; the
				 * caller's, open until mp_emulator_stop() */
	/*
	 * Emulation only (early warning: NULL and -1): the pressure source
	 * and the read end of the accounting pipe. The emulator owns both
	 * from the call of mp_emulator_start() on, whatever it returns.
	 */
	struct mp_source *src;
	int pipe_r;
};
/* clang-format on */

/*
 * Fill the defaults of a policy and check it: 0, or -1 with 64 (a target
 * or high that is no fraction of the limit).
 */
int mp_emulator_policy(struct mp_emul_policy *p, struct mp_err *err);

/*
 * Start the emulator thread: emulation when cfg->src is set, else the
 * early warning. what names it in messages ("the shrinker emulation").
 * It runs until mp_emulator_stop().
 */
int mp_emulator_start(const struct mp_emulator_cfg *cfg, const char *what,
		      struct mp_emulator **out, struct mp_err *err);

/*
 * Readable (POLLIN) once the pressure source has failed (the cgroup was
 * removed): no request will come any more, and mp_emulator_gone() says
 * why. -1 for the early warning, which has no source.
 */
int mp_emulator_gone_fd(const struct mp_emulator *em);
/* The source's error once it failed, else NULL. Any thread. */
const char *mp_emulator_gone(const struct mp_emulator *em);

void mp_emulator_stats(const struct mp_emulator *em,
		       struct mp_shrinker_stats *st);

/* Stop and join the thread, close what it owns, free it. NULL is a no-op. */
void mp_emulator_stop(struct mp_emulator *em);

#endif
