/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory usage and limit of a cgroup, the way the shrinker emulation and
 * mpctl stress read them.
 *
 *  v1 memcg  memory.usage_in_bytes against hierarchical_memory_limit
 *            (memory.stat), so a child of a limited cgroup sees the limit
 *  v2        memory.current against memory.max
 *  host      MemTotal - MemAvailable against MemTotal (/proc/meminfo),
 *            also used when a cgroup has no limit
 */
#ifndef MP_MEMSTAT_H
#define MP_MEMSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_cgroup.h"

struct mp_memstat {
	int usage_fd;	/* kept open, read with pread */
	bool host;	/* /proc/meminfo */
	uint64_t limit; /* bytes, read at open */
	bool limited;	/* the cgroup (or an ancestor) has a limit */
};

/* cg NULL or "/": the host. 0 or -1 with errno. */
int mp_memstat_open(struct mp_memstat *ms, const struct mp_cgroup *cg);
/* Current usage in bytes; 0 or -1 with errno. */
int mp_memstat_usage(struct mp_memstat *ms, uint64_t *usage);
void mp_memstat_close(struct mp_memstat *ms);

/*
 * The one /proc/meminfo parser (the sysroot applies): the lines found are
 * set in have. 0, or -1 with errno (EPROTO: no MemTotal).
 */
enum {
	MP_MI_TOTAL = 1 << 0,
	MP_MI_AVAIL = 1 << 1,
	MP_MI_SWAP_TOTAL = 1 << 2,
	MP_MI_SWAP_FREE = 1 << 3,
};

struct mp_meminfo {
	uint64_t total;	     /* MemTotal, bytes */
	uint64_t avail;	     /* MemAvailable */
	uint64_t swap_total; /* SwapTotal */
	uint64_t swap_free;  /* SwapFree */
	unsigned int have;   /* MP_MI_* */
};

int mp_meminfo_read(struct mp_meminfo *mi);
/* The same in bytes: MemTotal, MemAvailable, SwapTotal - SwapFree. */
int mp_meminfo(uint64_t *total, uint64_t *avail, uint64_t *swap_used);

/*
 * OOM kills counted in a cgroup: oom_kill of memory.oom_control (v1) or
 * memory.events (v2). 0 or -1 with errno.
 */
int mp_cg_oom_kills(const struct mp_cgroup *cg, uint64_t *kills);

/*
 * Reclaim counters, to say why a run went as it did: a set of keys of a
 * "key value" file and the values found (bit i of have: keys[i] found).
 */
#define MP_COUNTERS_MAX 16
struct mp_counters {
	uint64_t v[MP_COUNTERS_MAX];
	uint32_t have;
};

/*
 * The keys read, each list ending with NULL: /proc/vmstat's pgscan and
 * pgsteal (direct, kswapd), workingset_refault_{anon,file}, pswpin,
 * pswpout, pgmajfault, oom_kill, thp_fault_fallback, pgfault,
 * thp_fault_alloc (the cost of getting memory: faults, huge pages); a cgroup's
 * memory.stat (v2 names, and v1's total_* ones); its memory.events (v2)
 * or memory.oom_control (v1).
 */
extern const char *const mp_vmstat_keys[];
extern const char *const mp_cg_stat_keys[];
extern const char *const mp_cg_event_keys[];

/* /proc/vmstat (the sysroot applies). 0 or -1 with errno. */
int mp_vmstat_read(struct mp_counters *c);
/* A cgroup's memory.stat and events; 0, or -1 when one could not be read */
int mp_cg_counters_read(const struct mp_cgroup *cg, struct mp_counters *stat,
			struct mp_counters *events);
/* end -= start, for the keys both have (a counter that fell: 0) */
void mp_counters_delta(struct mp_counters *end,
		       const struct mp_counters *start);

#endif
