// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_memstat.h"

/* the v1 "no limit" value is PAGE_COUNTER_MAX pages: anything this big */
#define NO_LIMIT (1ULL << 60)

int mp_meminfo_read(struct mp_meminfo *mi)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned int bit;
	} keys[] = {
		{ "MemTotal:", offsetof(struct mp_meminfo, total),
		  MP_MI_TOTAL },
		{ "MemAvailable:", offsetof(struct mp_meminfo, avail),
		  MP_MI_AVAIL },
		{ "SwapTotal:", offsetof(struct mp_meminfo, swap_total),
		  MP_MI_SWAP_TOTAL },
		{ "SwapFree:", offsetof(struct mp_meminfo, swap_free),
		  MP_MI_SWAP_FREE },
	};
	char path[PATH_MAX], buf[8192], *p;
	uint64_t kb;
	size_t i;

	memset(mi, 0, sizeof(*mi));
	if (!mp_syspath(path, sizeof(path), "/proc/meminfo") ||
	    mp_read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(p, keys[i].key, strlen(keys[i].key)) &&
			    sscanf(p + strlen(keys[i].key), "%" SCNu64, &kb) ==
				    1) {
				*(uint64_t *)((char *)mi + keys[i].off) = kb *
									  1024;
				mi->have |= keys[i].bit;
			}
	if (!(mi->have & MP_MI_TOTAL) || !mi->total) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int mp_meminfo(uint64_t *total, uint64_t *avail, uint64_t *swap_used)
{
	struct mp_meminfo mi;

	if (mp_meminfo_read(&mi))
		return -1;
	if (total)
		*total = mi.total;
	if (avail)
		*avail = mi.avail;
	if (swap_used)
		*swap_used = mi.swap_total - mi.swap_free;
	return 0;
}

/*
 * The one parser of "key value" lines (memory.stat, memory.events,
 * memory.oom_control, /proc/vmstat): vals[i] of each keys[i] found (the
 * list ends with NULL), their bits in the result
 */
static uint32_t kv_parse(const char *buf, const char *const *keys,
			 uint64_t *vals)
{
	const char *p;
	uint32_t have = 0;
	size_t i, kl;

	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		for (i = 0; keys[i] && i < 32; i++) {
			kl = strlen(keys[i]);
			if (!strncmp(p, keys[i], kl) && p[kl] == ' ') {
				vals[i] = strtoull(p + kl + 1, NULL, 10);
				have |= 1U << i;
				break;
			}
		}
	return have;
}

static int stat_value(const struct mp_cgroup *cg, const char *file,
		      const char *key, uint64_t *val)
{
	const char *keys[] = { key, NULL };
	char buf[8192];

	if (mp_cg_read(cg, file, buf, sizeof(buf)))
		return -1;
	if (kv_parse(buf, keys, val))
		return 0;
	errno = ENOENT;
	return -1;
}

/* clang-format off */
const char *const mp_vmstat_keys[] = {
	"pgscan_direct", "pgscan_kswapd", "pgsteal_direct", "pgsteal_kswapd",
	"workingset_refault_anon", "workingset_refault_file",
	"pswpin", "pswpout", "pgmajfault", "oom_kill", "thp_fault_fallback",
	"pgfault", "thp_fault_alloc", NULL,
};

/* v2 names, then v1's hierarchical ones (total_*) */
const char *const mp_cg_stat_keys[] = {
	"pgscan", "pgsteal", "workingset_refault_anon",
	"workingset_refault_file", "pgmajfault", "thp_fault_fallback",
	"total_pgmajfault", "total_pgpgout", "pgfault", "thp_fault_alloc",
	NULL,
};

/* memory.events (v2), memory.oom_control (v1) */
const char *const mp_cg_event_keys[] = {
	"low", "high", "max", "oom", "oom_kill", "under_oom", NULL,
};
/* clang-format on */

/* the counter files are a few KB; their buffer is on the heap */
#define COUNTERS_BUF 32768

int mp_vmstat_read(struct mp_counters *c)
{
	char path[PATH_MAX], *buf = malloc(COUNTERS_BUF);
	int ret = -1;

	memset(c, 0, sizeof(*c));
	if (buf && mp_syspath(path, sizeof(path), "/proc/vmstat") &&
	    !mp_read_file(path, buf, COUNTERS_BUF)) {
		c->have = kv_parse(buf, mp_vmstat_keys, c->v);
		ret = 0;
	}
	free(buf);
	return ret;
}

int mp_cg_counters_read(const struct mp_cgroup *cg, struct mp_counters *stat,
			struct mp_counters *events)
{
	char *buf = malloc(COUNTERS_BUF);
	int ret = 0;

	memset(stat, 0, sizeof(*stat));
	memset(events, 0, sizeof(*events));
	if (buf && !mp_cg_read(cg, "memory.stat", buf, COUNTERS_BUF))
		stat->have = kv_parse(buf, mp_cg_stat_keys, stat->v);
	else
		ret = -1;
	if (buf &&
	    !mp_cg_read(cg,
			cg->hier->version == MP_CG_V1 ? "memory.oom_control" :
							"memory.events",
			buf, COUNTERS_BUF))
		events->have = kv_parse(buf, mp_cg_event_keys, events->v);
	else
		ret = -1;
	free(buf);
	return ret;
}

void mp_counters_delta(struct mp_counters *end, const struct mp_counters *start)
{
	size_t i;

	end->have &= start->have;
	for (i = 0; i < MP_COUNTERS_MAX; i++)
		end->v[i] = end->v[i] >= start->v[i] ? end->v[i] - start->v[i] :
						       0;
}

/*
 * cgroup2: the lowest memory.max or memory.high from cg up to the root of
 * the mount, which in a cgroup namespace is the namespace's root: a child
 * of a limited cgroup works against its ancestors' limits.
 */
static uint64_t v2_limit(const struct mp_cgroup *cg)
{
	static const char *const files[] = { "memory.max", "memory.high" };
	size_t ml = strlen(cg->hier->mnt);
	struct mp_cgroup up = *cg;
	uint64_t lim = NO_LIMIT, v;
	char *slash;
	size_t i;

	for (;;) {
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			if (!mp_cg_read_u64(&up, files[i], &v) && v < lim)
				lim = v;
		slash = strrchr(up.dir, '/');
		if (strlen(up.dir) <= ml || !slash ||
		    (size_t)(slash - up.dir) < ml)
			break;
		*slash = '\0';
	}
	return lim;
}

/*
 * A cgroup with its own usage counter: any but the root. The root of a
 * cgroup namespace is a cgroup of the host: it has memory.current.
 */
static bool has_usage(const struct mp_cgroup *cg)
{
	return strcmp(cg->path, "/") || (cg->hier->version == MP_CG_V2 &&
					 mp_cg_has_file(cg, "memory.current"));
}

int mp_memstat_open(struct mp_memstat *ms, const struct mp_cgroup *cg)
{
	char path[PATH_MAX + 32];
	uint64_t lim = 0;

	memset(ms, 0, sizeof(*ms));
	ms->usage_fd = -1;
	if (cg && cg->dir[0] && has_usage(cg)) {
		if (cg->hier->version == MP_CG_V1) {
			snprintf(path, sizeof(path), "%s/memory.usage_in_bytes",
				 cg->dir);
			if (stat_value(cg, "memory.stat",
				       "hierarchical_memory_limit", &lim) &&
			    mp_cg_read_u64(cg, "memory.limit_in_bytes", &lim))
				lim = NO_LIMIT;
		} else {
			snprintf(path, sizeof(path), "%s/memory.current",
				 cg->dir);
			lim = v2_limit(cg);
		}
		ms->usage_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (ms->usage_fd < 0 || lim >= NO_LIMIT) {
		/* the host, or a cgroup that cannot tell its usage */
		if (ms->usage_fd < 0) {
			ms->host = true;
		}
		if (mp_meminfo(&ms->limit, NULL, NULL))
			return -1;
		return 0;
	}
	ms->limit = lim;
	ms->limited = true;
	return 0;
}

int mp_memstat_usage(struct mp_memstat *ms, uint64_t *usage)
{
	char buf[64];
	uint64_t t, a;
	ssize_t n;

	if (ms->host) {
		if (mp_meminfo(&t, &a, NULL))
			return -1;
		*usage = t - a;
		return 0;
	}
	n = pread(ms->usage_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		if (!n)
			errno = ENODEV;
		return -1;
	}
	buf[n] = '\0';
	*usage = strtoull(buf, NULL, 10);
	return 0;
}

void mp_memstat_close(struct mp_memstat *ms)
{
	if (ms->usage_fd >= 0)
		close(ms->usage_fd);
	ms->usage_fd = -1;
}

int mp_cg_oom_kills(const struct mp_cgroup *cg, uint64_t *kills)
{
	if (cg->hier->version == MP_CG_V1)
		return stat_value(cg, "memory.oom_control", "oom_kill", kills);
	return stat_value(cg, "memory.events", "oom_kill", kills);
}
