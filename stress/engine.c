// SPDX-License-Identifier: GPL-2.0
/*
 * The stress engine, see engine.h.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "mp_pressure.h"
#include "mp_thread.h"

struct engine {
	const struct stress_engine_cfg *cfg;
	struct stress_shared *shm;
	struct mp_chunk_pool *pool;
	pthread_mutex_t err_lock;
};

struct alloc_arg {
	struct engine *e;
	int idx;
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)
#define SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void engine_error(struct engine *e, const char *msg)
{
	pthread_mutex_lock(&e->err_lock);
	if (!e->shm->error[0])
		snprintf(e->shm->error, sizeof(e->shm->error), "%s", msg);
	pthread_mutex_unlock(&e->err_lock);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	nanosleep(&ts, NULL);
}

static void *alloc_thread(void *arg)
{
	struct alloc_arg *a = arg;
	struct engine *e = a->e;
	struct mp_err err;

	while (!LOAD(e->shm->stop)) {
		if (mp_chunks_held(e->pool) >= e->cfg->max_chunks) {
			sleep_ns(1000000);
			continue;
		}
		if (!mp_chunk_alloc(e->pool, a->idx)) {
			/* out of address space or memory: back off */
			sleep_ns(1000000);
			continue;
		}
		SET(e->shm->held, mp_chunks_held(e->pool));
		if (mp_shrinker_add(e->cfg->sh, 1, &err)) {
			ADD(e->shm->add_failed, 1);
			engine_error(e, err.msg);
		}
	}
	return NULL;
}

static void reclaim(struct engine *e, uint64_t n, uint64_t t0)
{
	uint64_t freed, kept = 0, dt;
	struct mp_err err;

	freed = mp_chunks_reclaim(e->pool, n, &kept);
	dt = mp_now_ns(CLOCK_MONOTONIC) - t0;
	SET(e->shm->held, mp_chunks_held(e->pool));
	ADD(e->shm->requests, 1);
	ADD(e->shm->chunks_requested, n);
	if (kept) {
		/* the contract: what was not freed goes back on the counter */
		if (mp_shrinker_add(e->cfg->sh, (int64_t)kept, &err))
			engine_error(e, err.msg);
		ADD(e->shm->chunks_readded, kept);
	}
	if (n > freed + kept)
		ADD(e->shm->chunks_short, n - freed - kept);
	if (freed) {
		mp_hist_add(&e->shm->latency, dt);
		mp_hist_add(&e->shm->latency_chunk, dt / freed);
	}
}

static void *reclaim_thread(void *arg)
{
	struct engine *e = arg;
	struct pollfd pfd = { .fd = mp_shrinker_fd(e->cfg->sh),
			      .events = POLLIN };
	struct mp_err err;
	uint64_t n, t0;
	int ret;

	/* answering fast is the point: like the kernel's reclaim, first */
	if (e->cfg->reclaim_rt > 0) {
		struct sched_param sp = {
			.sched_priority = e->cfg->reclaim_rt,
		};

		if (!pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
			goto run;
	}
	if (e->cfg->reclaim_nice)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
			    e->cfg->reclaim_nice);
run:
	while (!LOAD(e->shm->stop)) {
		ret = poll(&pfd, 1, 20);
		if (ret <= 0)
			continue;
		t0 = mp_now_ns(CLOCK_MONOTONIC);
		ret = mp_shrinker_read(e->cfg->sh, &n, &err);
		if (ret < 0) {
			engine_error(e, err.msg);
			SET(e->shm->stop, 1);
			break;
		}
		if (ret)
			reclaim(e, n, t0);
	}
	return NULL;
}

int stress_engine_run(const struct stress_engine_cfg *cfg)
{
	struct mp_chunk_pool_cfg pcfg = {
		.chunk_size = cfg->chunk_size,
		.lists = cfg->threads,
		.reserve_chunks = cfg->max_chunks + cfg->threads,
	};
	struct engine e = { .cfg = cfg, .shm = cfg->shm };
	struct alloc_arg *args;
	pthread_t *thr, rthr;
	int i, started = 0, ret = 0;

	pthread_mutex_init(&e.err_lock, NULL);
	/*
	 * At the limit the page cache is what reclaim takes: the reclaim
	 * thread must not have to fault its own code back in, charged to the
	 * cgroup that is out of memory, before it can free anything. Lock
	 * what is mapped now, before the chunks' reservation exists.
	 */
	if (!cfg->no_mlock)
		mlockall(MCL_CURRENT);
	e.pool = mp_chunks_new(&pcfg, &cfg->shm->chunks);
	args = calloc(cfg->threads, sizeof(*args));
	thr = calloc(cfg->threads, sizeof(*thr));
	if (!e.pool || !args || !thr) {
		snprintf(cfg->shm->error, sizeof(cfg->shm->error),
			 "engine: %s", strerror(errno ? errno : ENOMEM));
		ret = -1;
		goto out;
	}
	if (mp_thread_start(&rthr, reclaim_thread, &e)) {
		snprintf(cfg->shm->error, sizeof(cfg->shm->error),
			 "cannot start the reclaim thread");
		ret = -1;
		goto out;
	}
	for (i = 0; i < cfg->threads; i++) {
		args[i].e = &e;
		args[i].idx = i;
		if (mp_thread_start(&thr[i], alloc_thread, &args[i])) {
			engine_error(&e, "cannot start the allocator threads");
			SET(cfg->shm->stop, 1);
			ret = -1;
			break;
		}
		started++;
	}
	SET(cfg->shm->state, STRESS_RUNNING);
	while (!LOAD(cfg->shm->stop))
		sleep_ns(5000000);
	for (i = 0; i < started; i++)
		pthread_join(thr[i], NULL);
	pthread_join(rthr, NULL);
out:
	mp_chunks_destroy(e.pool);
	SET(cfg->shm->held, 0);
	free(args);
	free(thr);
	if (cfg->shm->error[0])
		ret = -1;
	SET(cfg->shm->state, ret ? STRESS_FAILED : STRESS_DONE);
	return ret;
}

struct stress_shared *stress_shared_new(void)
{
	struct stress_shared *shm;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return NULL;
	/* fault it in here, so that it is charged to the caller's cgroup */
	memset(shm, 0, sizeof(*shm));
	return shm;
}

void stress_shared_free(struct stress_shared *shm)
{
	if (shm)
		munmap(shm, sizeof(*shm));
}
