// SPDX-License-Identifier: GPL-2.0
/*
 * The stress engine, see engine.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "mp_clock.h"
#include "mp_thread.h"

struct alloc_arg {
	struct stress_engine *e;
	int idx;
};

struct stress_engine {
	const struct stress_engine_cfg *cfg;
	struct stress_shared *shm;
	struct mp_chunk_pool *pool;
	pthread_mutex_t err_lock;
	struct alloc_arg *args;
	pthread_t *thr, rthr;
	uint64_t start_ns;
	int started;
	bool have_rthr;
	/*
	 * The reclaim thread's own stop, set once the allocators are
	 * joined: an allocation still faulting in when shm->stop comes is
	 * answered, never left to the OOM killer by a teardown
	 */
	int reclaim_stop;
};

#define LOAD(x)	  __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)
#define SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static const char *const free_names[STRESS_FREE_NR] = {
	[STRESS_FREE_REUSE] = "reuse",
	[STRESS_FREE_MUNMAP] = "munmap",
	[STRESS_FREE_HEAP] = "free",
};

const char *stress_free_name(enum stress_free f)
{
	return f >= 0 && f < STRESS_FREE_NR ? free_names[f] : NULL;
}

int stress_free_parse(const char *name, enum stress_free *f)
{
	int i;

	for (i = 0; i < STRESS_FREE_NR; i++)
		if (!strcmp(name, free_names[i])) {
			*f = i;
			return 0;
		}
	return -1;
}

void stress_alloc_latency(struct stress_shared *shm, uint64_t ns)
{
	mp_hist_add(&shm->alloc_latency, ns);
	if (ns >= STRESS_ALLOC_SLOW_NS)
		ADD(shm->allocs_slow, 1);
}

static void engine_error(struct stress_engine *e, const char *msg)
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

/*
 * With an emulated shrinker no kernel throttles allocations above the
 * high mark (memory.high, or the soft limit of the patched v1), and the
 * emulator's answer can come after the allocators have run into the hard
 * limit when the machine is busy. A cooperating program stops growing
 * while it is asked to shrink: the allocators wait while the usage is
 * above the high mark, 1 ms at a time, at most 1 s in a row (a shrinker
 * that frees nothing must not stop the run), and the time is reported.
 */
static void throttle(struct stress_engine *e)
{
	uint64_t t0 = 0, now = 0, usage;
	char buf[32];
	ssize_t n;

	for (;;) {
		n = pread(e->cfg->usage_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		buf[n] = '\0';
		usage = strtoull(buf, NULL, 10);
		if (usage <= e->cfg->high_bytes || LOAD(e->shm->stop))
			break;
		now = mp_now_ns(CLOCK_MONOTONIC);
		if (!t0)
			t0 = now;
		else if (now - t0 >= 1000000000ULL)
			break;
		sleep_ns(1000000);
	}
	if (t0)
		ADD(e->shm->throttle_ns, mp_now_ns(CLOCK_MONOTONIC) - t0);
}

static void *alloc_thread(void *arg)
{
	struct alloc_arg *a = arg;
	struct stress_engine *e = a->e;
	struct mp_err err;
	uint64_t t0;

	while (!LOAD(e->shm->stop)) {
		if (mp_chunks_held(e->pool) >= e->cfg->max_chunks) {
			sleep_ns(1000000);
			continue;
		}
		if (e->cfg->usage_fd >= 0)
			throttle(e);
		t0 = mp_now_ns(CLOCK_MONOTONIC);
		if (!mp_chunk_alloc(e->pool, a->idx)) {
			/* out of address space or memory: back off */
			sleep_ns(1000000);
			continue;
		}
		stress_alloc_latency(e->shm, mp_now_ns(CLOCK_MONOTONIC) - t0);
		SET(e->shm->held, mp_chunks_held(e->pool));
		if (mp_shrinker_add(e->cfg->sh, 1, &err)) {
			ADD(e->shm->add_failed, 1);
			engine_error(e, err.msg);
		}
	}
	return NULL;
}

static void reclaim(struct stress_engine *e, uint64_t n, uint64_t t0)
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
	if (e->cfg->on_reclaim)
		e->cfg->on_reclaim(n, freed, e->cfg->arg);
}

/*
 * --stop-answering: past the time, the program reads no more requests,
 * as a stopped one would; its registration stays. True once it is so.
 */
static bool stopped_answering(struct stress_engine *e)
{
	uint64_t t;

	if (!e->cfg->stop_answering_ns)
		return false;
	if (LOAD(e->shm->stopped_answering_ns))
		return true;
	t = mp_now_ns(CLOCK_MONOTONIC) - e->start_ns;
	if (t < e->cfg->stop_answering_ns)
		return false;
	SET(e->shm->stopped_answering_ns, t);
	return true;
}

static void *reclaim_thread(void *arg)
{
	struct stress_engine *e = arg;
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
	while (!LOAD(e->reclaim_stop)) {
		if (stopped_answering(e)) {
			sleep_ns(20000000);
			continue;
		}
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
		if (!ret)
			continue;
		if (e->cfg->answer_delay_ns)
			sleep_ns(e->cfg->answer_delay_ns);
		reclaim(e, n, t0);
	}
	return NULL;
}

struct stress_engine *stress_engine_start(const struct stress_engine_cfg *cfg)
{
	struct mp_chunk_pool_cfg pcfg = {
		.chunk_size = cfg->chunk_size,
		.lists = cfg->threads,
		.heap = cfg->free_mode == STRESS_FREE_HEAP,
		.unmap = cfg->free_mode == STRESS_FREE_MUNMAP,
		.no_populate = cfg->no_populate,
		.lazyfree = cfg->lazyfree,
		/* the reuse mode's reservation; the others map per chunk */
		.reserve_chunks = cfg->free_mode == STRESS_FREE_REUSE ?
					  cfg->max_chunks + cfg->threads :
					  0,
	};
	struct stress_engine *e;
	int i;

	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(cfg->shm->error, sizeof(cfg->shm->error), "engine: %s",
			 strerror(ENOMEM));
		SET(cfg->shm->state, STRESS_FAILED);
		return NULL;
	}
	e->cfg = cfg;
	e->shm = cfg->shm;
	e->start_ns = mp_now_ns(CLOCK_MONOTONIC);
	pthread_mutex_init(&e->err_lock, NULL);
	/*
	 * At the limit the page cache is what reclaim takes: the reclaim
	 * thread must not have to fault its own code back in, charged to the
	 * cgroup that is out of memory, before it can free anything. Lock
	 * what is mapped now, before the chunks' reservation exists.
	 */
	if (!cfg->no_mlock)
		mlockall(MCL_CURRENT);
	e->pool = mp_chunks_new(&pcfg, &cfg->shm->chunks);
	e->args = calloc(cfg->threads, sizeof(*e->args));
	e->thr = calloc(cfg->threads, sizeof(*e->thr));
	if (!e->pool || !e->args || !e->thr) {
		char msg[128];

		snprintf(msg, sizeof(msg), "engine: %s",
			 strerror(errno ? errno : ENOMEM));
		engine_error(e, msg);
		goto fail;
	}
	if (mp_thread_start(&e->rthr, reclaim_thread, e)) {
		engine_error(e, "cannot start the reclaim thread");
		goto fail;
	}
	e->have_rthr = true;
	for (i = 0; i < cfg->threads; i++) {
		e->args[i].e = e;
		e->args[i].idx = i;
		if (mp_thread_start(&e->thr[i], alloc_thread, &e->args[i])) {
			engine_error(e, "cannot start the allocator threads");
			SET(cfg->shm->stop, 1);
			break;
		}
		e->started++;
	}
	SET(cfg->shm->state, STRESS_RUNNING);
	return e;
fail:
	stress_engine_stop(e);
	return NULL;
}

int stress_engine_stop(struct stress_engine *e)
{
	struct stress_shared *shm = e->shm;
	int i, ret;

	/* the allocators first, answered until the last one is out */
	SET(shm->stop, 1);
	for (i = 0; i < e->started; i++)
		pthread_join(e->thr[i], NULL);
	SET(e->reclaim_stop, 1);
	if (e->have_rthr)
		pthread_join(e->rthr, NULL);
	mp_chunks_destroy(e->pool);
	SET(shm->held, 0);
	free(e->args);
	free(e->thr);
	pthread_mutex_destroy(&e->err_lock);
	free(e);
	ret = shm->error[0] ? -1 : 0;
	SET(shm->state, ret ? STRESS_FAILED : STRESS_DONE);
	return ret;
}

int stress_engine_run(const struct stress_engine_cfg *cfg)
{
	struct stress_engine *e = stress_engine_start(cfg);

	if (!e)
		return -1;
	while (!LOAD(cfg->shm->stop))
		sleep_ns(5000000);
	return stress_engine_stop(e);
}

struct stress_shared *stress_shared_new(int *fd)
{
	struct stress_shared *shm;
	int mfd = -1;

	if (fd) {
		/* a memfd: an exec'd engine maps it from the inherited fd */
		mfd = memfd_create("mpctl-stress-shared", MFD_CLOEXEC);
		if (mfd < 0)
			return NULL;
		if (ftruncate(mfd, sizeof(*shm))) {
			close(mfd);
			return NULL;
		}
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   mfd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS, mfd, 0);
	if (shm == MAP_FAILED) {
		if (mfd >= 0)
			close(mfd);
		return NULL;
	}
	/* fault it in here, so that it is charged to the caller's cgroup */
	memset(shm, 0, sizeof(*shm));
	if (fd)
		*fd = mfd;
	return shm;
}

struct stress_shared *stress_shared_map(int fd)
{
	struct stress_shared *shm;
	char proc[64], link[64];
	struct stat st;
	ssize_t n;

	/* only the memfd stress_shared_new() made, whole: a short or other
	 * file would be mapped and fault (SIGBUS) past its end */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(*shm))
		return NULL;
	link[n] = '\0';
	if (strncmp(link, "/memfd:", 7))
		return NULL;
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	return shm == MAP_FAILED ? NULL : shm;
}

void stress_shared_free(struct stress_shared *shm)
{
	if (shm)
		munmap(shm, sizeof(*shm));
}
