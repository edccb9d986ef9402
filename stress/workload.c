// SPDX-License-Identifier: GPL-2.0
/*
 * The workloads of "mpctl stress" and the process that runs one, see
 * workload.h.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cotenant.h"
#include "workload.h"

/* what a cache answers at once and does with its chunks itself */
#define CACHE_EXCLUDES                                   \
	(STRESS_SET_LAZYFREE | STRESS_SET_ANSWER_DELAY | \
	 STRESS_SET_STOP_ANSWERING)

static int run_engine(const struct stress_params *p, struct stress_shared *shm,
		      struct mp_shrinker *sh)
{
	struct stress_engine_cfg cfg = {
		.chunk_size = p->chunk_size,
		.threads = p->threads,
		.max_chunks = p->max_chunks,
		.sh = sh,
		.shm = shm,
		.reclaim_nice = p->reclaim_nice,
		.free_mode = (enum stress_free)p->free_mode,
		.no_populate = p->no_populate,
		.lazyfree = p->lazyfree,
		.reclaim_rt = p->reclaim_rt,
		.answer_delay_ns = p->answer_delay_ns,
		.stop_answering_ns = p->stop_answering_ns,
		.usage_fd = p->usage_fd,
		.high_bytes = p->high_bytes,
	};

	return stress_engine_run(&cfg);
}

static int run_cache(const struct stress_params *p, struct stress_shared *shm,
		     struct mp_shrinker *sh)
{
	struct stress_cache_cfg cfg = {
		.lazyfree = stress_workload_at(p->workload)->lazyfree,
		.chunk_size = p->chunk_size,
		.slots = p->max_chunks,
		.threads = p->threads,
		.miss_cost_ns = p->miss_cost_ns,
		.seed = p->seed,
		.free_mode = (enum stress_free)p->free_mode,
		.no_populate = p->no_populate,
		.sh = sh,
		.shm = shm,
		.usage_fd = p->usage_fd,
		.high_bytes = p->high_bytes,
	};

	return stress_cache_run(&cfg);
}

/* clang-format off */
const struct stress_workload stress_workloads[] = {
	/* allocator threads and a reclaim thread answering the shrinker */
	{ .name = "engine", .title = "engine", .kind = STRESS_WL_ALLOCATOR,
	  .needs = STRESS_NEEDS_SHRINKER, .run = run_engine },
	/* the cache's strategies (cache.h): what it does with its memory */
	{ .name = "none", .title = "strategy 'none'", .kind = STRESS_WL_CACHE,
	  .excludes = CACHE_EXCLUDES, .run = run_cache },
	{ .name = "madv-free", .title = "strategy 'madv-free'",
	  .kind = STRESS_WL_CACHE, .lazyfree = true,
	  .excludes = CACHE_EXCLUDES | STRESS_SET_FREE_HEAP, .run = run_cache },
	{ .name = "psi", .title = "strategy 'psi'", .kind = STRESS_WL_CACHE,
	  .needs = STRESS_NEEDS_SHRINKER | STRESS_NEEDS_EMULATED,
	  .excludes = CACHE_EXCLUDES, .run = run_cache },
	{ .name = "kernel", .title = "strategy 'kernel'",
	  .kind = STRESS_WL_CACHE,
	  .needs = STRESS_NEEDS_SHRINKER | STRESS_NEEDS_KERNEL_SHRINKER,
	  .excludes = CACHE_EXCLUDES, .run = run_cache },
	{ .name = "kernel-lazyfree", .title = "strategy 'kernel-lazyfree'",
	  .kind = STRESS_WL_CACHE, .lazyfree = true,
	  .needs = STRESS_NEEDS_SHRINKER | STRESS_NEEDS_KERNEL_SHRINKER,
	  .excludes = CACHE_EXCLUDES | STRESS_SET_FREE_HEAP, .run = run_cache },
	{ .name = "reclaim-agent", .title = "strategy 'reclaim-agent'",
	  .kind = STRESS_WL_CACHE,
	  .needs = STRESS_NEEDS_MEMORY_RECLAIM | STRESS_NEEDS_AGENT,
	  .excludes = CACHE_EXCLUDES, .run = run_cache },
	/* beside the program, in its cgroup (cotenant.h) */
	{ .name = "cotenant", .title = "co-tenant", .kind = STRESS_WL_BESIDE,
	  .wanted = stress_cotenant_wanted, .run = stress_cotenant_run },
};
/* clang-format on */

const size_t stress_nr_workloads = sizeof(stress_workloads) /
				   sizeof(stress_workloads[0]);

/*
 * Why a program excludes a setting, in the order they are checked: "OPTION
 * and --strategy exclude each other: WHY", or with the row's title in
 * place of --strategy
 */
static const struct {
	enum stress_setting setting;
	const char *option;
	bool title; /* the row's title, not "--strategy" */
	const char *why;
} exclusions[] = {
	{ STRESS_SET_FREE_HEAP, "--free free", true,
	  "MADV_FREE takes whole pages, malloc() does not give them" },
	{ STRESS_SET_LAZYFREE, "--lazyfree", false,
	  "the strategy says what the cache does with its chunks (madv-free, kernel-lazyfree)" },
	{ STRESS_SET_ANSWER_DELAY, "--answer-delay", false,
	  "the delay is the stress engine's, the cache answers at once" },
	{ STRESS_SET_STOP_ANSWERING, "--stop-answering", false,
	  "the stress engine stops answering, the cache answers at once" },
};

const struct stress_workload *stress_workload_default(void)
{
	return &stress_workloads[0];
}

static const struct stress_workload *find(enum stress_workload_kind kind,
					  const char *name)
{
	size_t i;

	for (i = 0; i < stress_nr_workloads; i++)
		if (stress_workloads[i].kind == kind &&
		    !strcmp(stress_workloads[i].name, name))
			return &stress_workloads[i];
	return NULL;
}

const struct stress_workload *stress_workload_strategy(const char *name)
{
	return find(STRESS_WL_CACHE, name);
}

const struct stress_workload *stress_workload_beside(const char *name)
{
	return find(STRESS_WL_BESIDE, name);
}

const struct stress_workload *stress_workload_at(int32_t i)
{
	return i >= 0 && (size_t)i < stress_nr_workloads ?
		       &stress_workloads[i] :
		       NULL;
}

int32_t stress_workload_index(const struct stress_workload *w)
{
	return (int32_t)(w - stress_workloads);
}

unsigned int stress_settings(int free_mode, bool lazyfree,
			     uint64_t answer_delay_ns,
			     uint64_t stop_answering_ns)
{
	return (free_mode == STRESS_FREE_HEAP ? STRESS_SET_FREE_HEAP : 0) |
	       (lazyfree ? STRESS_SET_LAZYFREE : 0) |
	       (answer_delay_ns ? STRESS_SET_ANSWER_DELAY : 0) |
	       (stop_answering_ns ? STRESS_SET_STOP_ANSWERING : 0);
}

int stress_workload_check(const struct stress_workload *w,
			  unsigned int settings, struct mp_err *err)
{
	size_t i;

	for (i = 0; i < sizeof(exclusions) / sizeof(exclusions[0]); i++)
		if (w->excludes & settings & exclusions[i].setting)
			return mp_errf(err, MP_EXIT_USAGE, 0,
				       "%s and %s exclude each other: %s",
				       exclusions[i].option,
				       exclusions[i].title ? w->title :
							     "--strategy",
				       exclusions[i].why);
	return 0;
}

int stress_params_check(const struct stress_params *p, struct mp_err *err)
{
	const struct stress_workload *w = stress_workload_at(p->workload);
	const char *bad = NULL;

	if (p->magic != STRESS_PARAMS_MAGIC ||
	    p->version != STRESS_PARAMS_VERSION ||
	    p->size != sizeof(struct stress_shared))
		bad = "its header (not the memfd of this mpctl's stress)";
	else if (p->threads < 1 || p->threads > STRESS_MAX_THREADS)
		bad = "threads";
	else if (!p->chunk_size)
		bad = "chunk_size";
	else if (!p->max_chunks)
		bad = "max_chunks";
	else if (p->reclaim_nice < -20 || p->reclaim_nice > 19)
		bad = "reclaim_nice";
	else if (p->reclaim_rt < 0 || p->reclaim_rt > 99)
		bad = "reclaim_rt";
	else if (p->usage_fd < -1)
		bad = "usage_fd";
	else if (!w || w->kind == STRESS_WL_BESIDE)
		bad = "workload";
	else if (p->free_mode < 0 || p->free_mode >= STRESS_FREE_NR)
		bad = "free_mode";
	else if (p->no_populate > 1 || p->lazyfree > 1)
		bad = "a flag";
	else if (p->answer_delay_ns > STRESS_MAX_ANSWER_DELAY_NS)
		bad = "answer_delay_ns";
	else if (p->cotenant_bytes > STRESS_COTENANT_MAX_BYTES)
		bad = "cotenant_bytes";
	if (!bad)
		return 0;
	return mp_errf(err, MP_EXIT_USAGE, 0,
		       "bad engine parameters in the shared memory: %s", bad);
}

/*
 * The shared memory behind fd, mapped into *shm, and its parameters
 * checked: 0, or -1 with err and *shm NULL (not the memfd) or mapped
 * (bad parameters)
 */
static int attach(int shm_fd, struct stress_shared **shm, struct mp_err *err)
{
	*shm = stress_shared_map(shm_fd);
	if (!*shm)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "fd %d is not the shared memory of 'mpctl stress'",
			       shm_fd);
	close(shm_fd);
	return stress_params_check(&(*shm)->params, err);
}

/* a workload beside the program: a usage error ends it, as it came */
static int beside_main(int shm_fd, const struct stress_workload *w,
		       struct mp_err *err)
{
	struct stress_shared *shm;
	int ret = MP_EXIT_USAGE;

	if (attach(shm_fd, &shm, err))
		goto out;
	if (!w->wanted(&shm->params))
		mp_errf(err, MP_EXIT_USAGE, 0,
			"bad engine parameters in the shared memory: no %s",
			w->title);
	else
		ret = w->run(&shm->params, shm, NULL) ? MP_EXIT_FAILURE :
							MP_EXIT_OK;
out:
	stress_shared_free(shm);
	return ret;
}

int stress_workload_main(int shm_fd, const struct stress_workload *beside,
			 struct mp_err *err)
{
	struct stress_shared *shm;
	const struct stress_workload *w;
	struct mp_shrinker *sh = NULL;
	struct stress_params p;
	int ret;

	if (beside)
		return beside_main(shm_fd, beside, err);
	if (attach(shm_fd, &shm, err)) {
		if (!shm)
			return MP_EXIT_USAGE;
		goto fail;
	}
	p = shm->params;
	w = stress_workload_at(p.workload);
	/* the registration as any child of 'mpctl register' gets it */
	if ((w->needs & STRESS_NEEDS_SHRINKER) &&
	    mp_shrinker_client_from_env(&sh, err))
		goto fail;
	ret = w->run(&p, shm, sh) ? MP_EXIT_FAILURE : MP_EXIT_OK;
	mp_shrinker_close(sh);
	stress_shared_free(shm);
	return ret;
fail:
	/* the parent reads why from the shared memory */
	snprintf(shm->error, sizeof(shm->error), "%s", err->msg);
	shm->state = STRESS_FAILED;
	stress_shared_free(shm);
	return MP_EXIT_FAILURE;
}
