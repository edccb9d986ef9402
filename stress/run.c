// SPDX-License-Identifier: GPL-2.0
/*
 * A stress run, see run.h: the run's cgroups, the engine started through
 * /proc/self/exe, supervision and sampling.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mp_memstat.h"
#include "mp_parse.h"
#include "mp_spawn.h"
#include "mp_target.h"
#include "run.h"

#define TICK_NS	       100000000ULL /* timeline sampling */
#define PROGRESS_TICKS 2	    /* progress every 200 ms */

extern char **environ;

static const char *const end_names[STRESS_END_NR] = {
	[STRESS_END_DURATION] = "duration",
	[STRESS_END_FREED] = "freed",
	[STRESS_END_INTERRUPTED] = "interrupted",
	[STRESS_END_ENGINE_KILLED] = "engine_killed",
	[STRESS_END_ENGINE_FAILED] = "engine_failed",
	[STRESS_END_ENGINE_UNRESPONSIVE] = "engine_unresponsive",
	[STRESS_END_FAILED] = "failed",
};

const char *stress_end_name(enum stress_end e)
{
	return e > STRESS_END_NONE && e < STRESS_END_NR ? end_names[e] : NULL;
}

/* ---- the run's cgroups ---- */

/* The kernel's shrinker, on a kernel whose mempressure cgroups we make */
static bool want_mempressure(const struct stress_run_cfg *cfg)
{
	struct mp_shrinker_cfg scfg = {
		.backend = cfg->backend,
		.emulate = cfg->emulate,
	};

	return mp_shrinker_wants_kernel(&scfg) &&
	       !mp_backend_probe(MP_BACKEND_MEMPRESSURE, NULL);
}

#define NO_MEMORY_CGROUP \
	"no memory cgroup to limit the run: neither a v1 memory hierarchy nor cgroup2 with the memory controller (use --cgroup / --force to pressure the whole host)"

int stress_cgroups_setup(struct stress_cgroups *c,
			 const struct stress_run_cfg *cfg, uint64_t high_bytes,
			 struct mp_err *err)
{
	struct mp_target_spec spec = {
		.limit = cfg->limit,
		.high = cfg->no_throttle ? 0 : high_bytes,
		.swap = cfg->swap,
		.mempressure = want_mempressure(cfg),
	};
	const struct mp_cgroup *mem;
	char name[128], path[PATH_MAX + 32];

	if (cfg->cgroup) {
		mp_target_resolve(cfg->cgroup, &c->tgt);
		if (mp_target_get(&c->tgt, MP_ROLE_MEMORY, &mem, err)) {
			if (mp_system()->have[MP_ROLE_MEMORY])
				return -1;
			/* only --cgroup / can do without a memory cgroup */
			if (strcmp(cfg->cgroup, "/") ||
			    mp_target_get(&c->tgt, MP_ROLE_UNIFIED, &mem, NULL))
				return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
					       NO_MEMORY_CGROUP);
		}
		c->cg = mem;
		snprintf(path, sizeof(path), "%s/cgroup.procs", c->cg->dir);
		if (access(path, W_OK))
			return mp_errf(err, -1, errno,
				       "cannot write to cgroup '%s'",
				       c->cg->path);
		/* a second run there is refused while this one holds it */
		if (mp_cg_claim(c->cg, &c->claim_fd, &c->others, err))
			return -1;
	} else {
		if (mp_parent_acquire(cfg->parent, "stress", &c->parent, err))
			return -1;
		mp_target_remove_stale(&c->parent.t, "stress");
		if (mp_target_name(name, sizeof(name), "stress", NULL))
			return mp_errf(err, MP_EXIT_FAILURE, errno,
				       "cgroup name");
		if (mp_target_create(&c->parent.t, name, &spec, &c->tgt, err))
			return -1;
		c->created = true;
		c->cg = mp_target_cg(&c->tgt, MP_ROLE_MEMORY);
	}
	c->engine_cg = c->cg;
	c->hog_cg = c->cg;
	if (cfg->hog && c->created) {
		/* leaves, so that OOM kills are counted apart */
		if (mp_target_create(&c->tgt, "engine", NULL, &c->engine_t,
				     err) ||
		    mp_target_create(&c->tgt, "hog", NULL, &c->hog_t, err))
			return -1;
		c->engine_created = c->hog_created = true;
		c->engine_cg = mp_target_cg(&c->engine_t, MP_ROLE_MEMORY);
		c->hog_cg = mp_target_cg(&c->hog_t, MP_ROLE_MEMORY);
	}
	/* a patched kernel's mempressure cgroup, if mounted apart */
	if (spec.mempressure) {
		if (mp_target_get(&c->tgt, MP_ROLE_MEMPRESSURE, &mem, err))
			return -1;
		c->mp_cg = mem;
	}
	return 0;
}

void stress_cgroups_remove(struct stress_cgroups *c)
{
	mp_target_remove(&c->hog_t, 5000);
	mp_target_remove(&c->engine_t, 5000);
	mp_target_remove(&c->tgt, 5000);
	mp_parent_release(&c->parent);
	c->hog_created = c->engine_created = c->created = false;
	if (c->claim_fd >= 0)
		close(c->claim_fd);
	c->claim_fd = -1;
}

/* ---- the run ---- */

struct hog {
	struct mp_child c;
	int yaml_fd; /* memfd stress-ng writes its YAML into */
	int out_fd;  /* memfd of its stdout and stderr: why it failed */
};

/* a workload's process beside the program, and its name in messages */
struct beside {
	struct mp_child c;
	char name[96];
};

struct run {
	struct stress_run_cfg *cfg;
	struct stress_result *res;
	struct stress_cgroups c;
	struct mp_shrinker *sh;
	struct mp_source *src; /* event counting, kernel shrinker */
	struct stress_shared *shm;
	int shm_fd;
	int usage_fd;		 /* the engine's throttle, or -1 */
	uint64_t throttle_bytes; /* its high mark */
	struct mp_memstat ms;
	bool have_ms;
	uint64_t footprint; /* chunks the allocators aim at */
	uint64_t oom_base;
	/* the counters at the start (stress_result's, at the end) */
	struct mp_counters vm0, cgs0, cge0;
	struct mp_child engine;
	/* the STRESS_WL_BESIDE rows' processes, by row; unused: never started */
	struct beside *beside;
	struct hog hog;
	size_t tl_cap;
	int sfd, tfd;
};

static uint64_t now_ns(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

/*
 * The hidden applet on the shared memory, in the program's cgroup: in its
 * own process group, killed if we die (we alone remove the cgroup).
 */
static void self_child(struct run *r, struct mp_child *c, char **argv, char *fd,
		       size_t fd_size)
{
	snprintf(fd, fd_size, "%d", r->shm_fd);
	mp_child_init(c, argv);
	c->file = "/proc/self/exe";
	c->name = "/proc/self/exe " STRESS_ENGINE_APPLET;
	c->pgroup = true;
	c->pdeathsig = SIGKILL;
}

/*
 * The engine, started through /proc/self/exe (no fork without exec),
 * with the registration as 'mpctl register' hands it to its command.
 */
static int start_engine(struct run *r, struct mp_err *err)
{
	struct stress_run_cfg *cfg = r->cfg;
	struct stress_params *p = &r->shm->params;
	struct mp_child *c = &r->engine;
	char fd[24],
		*argv[] = { "mpctl", STRESS_ENGINE_APPLET, "--shm", fd, NULL };

	*p = (struct stress_params){
		.magic = STRESS_PARAMS_MAGIC,
		.version = STRESS_PARAMS_VERSION,
		.size = sizeof(*r->shm),
		.threads = cfg->threads,
		.chunk_size = cfg->chunk,
		.max_chunks = r->footprint,
		.reclaim_nice = cfg->reclaim_nice,
		.reclaim_rt = cfg->reclaim_rt,
		.usage_fd = r->usage_fd,
		.workload = stress_workload_index(cfg->workload),
		.high_bytes = r->usage_fd >= 0 ? r->throttle_bytes : 0,
		.miss_cost_ns = cfg->miss_cost_ns,
		.seed = cfg->seed,
		.free_mode = (int32_t)cfg->free_mode,
		.no_populate = cfg->no_populate,
		.lazyfree = cfg->lazyfree,
		.answer_delay_ns = cfg->answer_delay_ns,
		.stop_answering_ns = cfg->stop_answering_ns,
		.cotenant_bytes = cfg->cotenant_bytes,
	};
	if (stress_params_check(p, err))
		return -1;
	self_child(r, c, argv, fd, sizeof(fd));
	if ((r->sh && mp_shrinker_pass(r->sh, c, err)) ||
	    mp_child_keep(c, r->shm_fd, err) ||
	    mp_child_keep(c, r->usage_fd, err) ||
	    mp_child_join(c, r->c.engine_cg->dir, err) ||
	    (r->c.mp_cg && strcmp(r->c.mp_cg->dir, r->c.cg->dir) &&
	     mp_child_join(c, r->c.mp_cg->dir, err)))
		return -1;
	return mp_child_start(c, err);
}

/*
 * The workloads beside the program that the run wants (workload.h): the
 * same applet with --NAME, a process of its own in the engine's memory
 * cgroup, without the registration
 */
static int start_beside(struct run *r, struct mp_err *err)
{
	const struct stress_workload *w;
	char fd[24], flag[64],
		*argv[] = { "mpctl", STRESS_ENGINE_APPLET, "--shm", fd, flag,
			    NULL };
	struct mp_child *c;
	size_t i;

	for (i = 0; i < stress_nr_workloads; i++) {
		w = &stress_workloads[i];
		c = &r->beside[i].c;
		if (w->kind != STRESS_WL_BESIDE || !w->wanted(&r->shm->params))
			continue;
		snprintf(flag, sizeof(flag), "--%s", w->name);
		self_child(r, c, argv, fd, sizeof(fd));
		snprintf(r->beside[i].name, sizeof(r->beside[i].name),
			 "/proc/self/exe " STRESS_ENGINE_APPLET " %s", flag);
		c->name = r->beside[i].name;
		if (mp_child_keep(c, r->shm_fd, err) ||
		    mp_child_join(c, r->c.engine_cg->dir, err) ||
		    mp_child_start(c, err))
			return -1;
	}
	return 0;
}

/*
 * stress-ng with the words of --hog as its arguments, no shell between:
 * what runs is what the result records (res->hog_argv).
 */
static int start_hog(struct run *r, struct mp_err *err)
{
	struct mp_child *c = &r->hog.c;
	char **words, **argv, timeout[24], yaml[40];
	int n, k = 0, i, ret = -1;

	words = mp_parse_words(r->cfg->hog, &n);
	if (!words)
		return mp_errf(err, MP_EXIT_USAGE, errno,
			       "invalid arguments for --hog '%s'", r->cfg->hog);
	/*
	 * stress-ng's report goes to a memfd, opened by stress-ng through
	 * /proc/self/fd: nothing in /tmp to leak when we are SIGKILLed.
	 */
	r->hog.yaml_fd = memfd_create("mpctl-stress-hog-yaml", MFD_CLOEXEC);
	r->hog.out_fd = memfd_create("mpctl-stress-hog-out", MFD_CLOEXEC);
	argv = calloc(n + 7, sizeof(*argv));
	if (r->hog.yaml_fd < 0 || r->hog.out_fd < 0 || !argv) {
		free(words);
		free(argv);
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot create a memory file for stress-ng");
	}
	snprintf(timeout, sizeof(timeout), "%" PRIu64,
		 (uint64_t)((r->cfg->duration_ns + 999999999ULL) /
			    1000000000ULL));
	snprintf(yaml, sizeof(yaml), "/proc/self/fd/%d", r->hog.yaml_fd);
	argv[k++] = "stress-ng";
	for (i = 0; i < n; i++)
		argv[k++] = words[i];
	argv[k++] = "--timeout";
	argv[k++] = timeout;
	argv[k++] = "--metrics-brief";
	argv[k++] = "--yaml";
	argv[k++] = yaml;
	mp_child_init(c, argv);
	c->out = r->hog.out_fd;
	c->err = r->hog.out_fd;
	c->pgroup = true;
	c->pdeathsig = SIGKILL;
	if (mp_child_keep(c, r->hog.yaml_fd, err) ||
	    mp_child_join(c, r->c.hog_cg->dir, err) || mp_child_start(c, err))
		goto out;
	/* what ran, kept for the result */
	r->res->hog_argv = mp_argv_dup(argv);
	if (!r->res->hog_argv) {
		mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "hog");
		goto out;
	}
	ret = 0;
out:
	free(argv);
	free(words);
	return ret;
}

/* the first SIZE - 1 bytes of a memfd, NUL-terminated; -1 without them */
static ssize_t memfd_text(int fd, char *buf, size_t size)
{
	ssize_t n, k;

	if (fd < 0 || !buf)
		return -1;
	for (n = 0; (size_t)n < size - 1; n += k) {
		k = pread(fd, buf + n, size - 1 - n, n);
		if (k <= 0)
			break;
	}
	buf[n] = '\0';
	return n;
}

/*
 * What stress-ng said last about an error, a failure or a bad option
 * (else its first line), for the message that says the hog failed.
 */
static void hog_said(const char *text, char *said, size_t size)
{
	static const char *const words[] = { "error", "fail", "unrecognized",
					     "invalid" };
	const char *line, *end, *pick = NULL, *first = NULL;
	size_t i;

	for (line = text; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (end == line)
			continue;
		if (!first)
			first = line;
		for (i = 0; i < sizeof(words) / sizeof(*words); i++)
			if (memmem(line, end - line, words[i],
				   strlen(words[i])))
				pick = line;
	}
	if (!pick)
		pick = first;
	if (pick)
		snprintf(said, size, "%.*s",
			 (int)(strchrnul(pick, '\n') - pick), pick);
}

static void hog_results(struct run *r)
{
	struct stress_result *res = r->res;
	size_t size = 65536;
	char *buf = malloc(size), *p;

	if (memfd_text(r->hog.yaml_fd, buf, size) >= 0)
		for (p = strstr(buf, "bogo-ops:"); p;
		     p = strstr(p + 1, "bogo-ops:")) {
			res->hog_bogo_ops += strtoull(p + 9, NULL, 10);
			res->hog_have_ops = true;
		}
	if (memfd_text(r->hog.out_fd, buf, size) >= 0)
		hog_said(buf, res->hog_said, sizeof(res->hog_said));
	free(buf);
	if (r->hog.yaml_fd >= 0)
		close(r->hog.yaml_fd);
	if (r->hog.out_fd >= 0)
		close(r->hog.out_fd);
	r->hog.yaml_fd = r->hog.out_fd = -1;
	if (r->c.hog_created)
		mp_cg_oom_kills(r->c.hog_cg, &res->hog_oom_kills);
}

static uint64_t total_events(const struct run *r)
{
	uint64_t sum = 0;
	int l;

	for (l = 0; l < MP_LEVEL_NR; l++)
		sum += r->res->events[l];
	return sum;
}

static void update_events(struct run *r)
{
	struct mp_shrinker_stats st;
	int l;

	if (r->src || !r->sh)
		return; /* counted as they come, or none */
	mp_shrinker_stats(r->sh, &st);
	for (l = 0; l < MP_LEVEL_NR; l++)
		r->res->events[l] = st.events[l];
}

/*
 * A workload that needs the agent (reclaim-agent): like Senpai, bring the usage back under the
 * target (--target of the limit) by writing memory.reclaim, every tick.
 * The kernel may reclaim less than asked (EAGAIN): the next tick asks again.
 */
static void reclaim_agent(struct run *r, uint64_t usage)
{
	double t = r->cfg->target > 0 ? r->cfg->target : MP_EMUL_TARGET;
	uint64_t target = (uint64_t)(t * (double)r->res->limit);
	char buf[32];

	if (!(r->cfg->workload->needs & STRESS_NEEDS_AGENT) || usage <= target)
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64, usage - target);
	if (!mp_cg_write(r->c.cg, "memory.reclaim", buf)) {
		r->res->agent_writes++;
		r->res->agent_bytes += usage - target;
	}
}

static void take_sample(struct run *r, uint64_t now)
{
	struct stress_result *res = r->res;
	struct stress_sample *s;
	uint64_t usage = 0, swap;

	mp_memstat_usage(&r->ms, &usage);
	res->usage_sum += usage;
	if (usage > res->peak)
		res->peak = usage;
	reclaim_agent(r, usage);
	/*
	 * Swap is sampled while the engine runs: once it has exited, what
	 * it had swapped out is free again.
	 */
	if (!mp_meminfo(NULL, NULL, &swap) && swap > res->swap_peak)
		res->swap_peak = swap;
	update_events(r);
	if (res->ntl == r->tl_cap) {
		size_t cap = r->tl_cap ? r->tl_cap * 2 : 512;
		struct stress_sample *n = realloc(res->tl, cap * sizeof(*n));

		if (!n)
			return;
		res->tl = n;
		r->tl_cap = cap;
	}
	s = &res->tl[res->ntl++];
	s->t_ns = now - res->start_ns;
	s->usage = usage;
	s->held = __atomic_load_n(&r->shm->held, __ATOMIC_RELAXED);
	s->events = total_events(r);
	s->requests = __atomic_load_n(&r->shm->requests, __ATOMIC_RELAXED);
}

/* The children that have exited, reaped: SIGCHLD told us */
static void reap(struct run *r)
{
	if (mp_child_reap(&r->hog.c) > 0 && !r->res->hog_exited) {
		r->res->hog_status = r->hog.c.status;
		r->res->hog_exited = true;
	}
	size_t i;

	mp_child_reap(&r->engine);
	for (i = 0; r->beside && i < stress_nr_workloads; i++)
		mp_child_reap(&r->beside[i].c);
}

/* 1 when the engine did not end within the grace and was SIGKILLed */
static int stop_engine(struct run *r)
{
	if (r->shm)
		__atomic_store_n(&r->shm->stop, 1, __ATOMIC_RELAXED);
	return mp_child_stop(&r->engine, 0, STRESS_ENGINE_GRACE_NS);
}

/* after stop_engine(): shm->stop tells them too */
static void stop_beside(struct run *r)
{
	size_t i;

	for (i = 0; r->beside && i < stress_nr_workloads; i++)
		mp_child_stop(&r->beside[i].c, 0, 1000000000ULL);
}

/* a workload beside the program died of a signal in the run */
static bool beside_killed(const struct run *r)
{
	const struct mp_child *c;
	size_t i;

	for (i = 0; i < stress_nr_workloads; i++) {
		c = &r->beside[i].c;
		if (c->pid > 0 && c->exited && WIFSIGNALED(c->status))
			return true;
	}
	return false;
}

static void stop_hog(struct run *r)
{
	mp_child_stop(&r->hog.c, SIGINT, 5000000000ULL);
	reap(r);
}

static void count_event(struct run *r)
{
	struct mp_event ev;
	struct mp_err err;

	if (mp_source_read(r->src, &ev, &err) > 0)
		r->res->events[ev.level] += ev.count ? ev.count : 1;
}

static void progress(struct run *r)
{
	const struct stress_result *res = r->res;

	r->cfg->progress(&res->tl[res->ntl - 1],
			 __atomic_load_n(&r->shm->chunks.freed,
					 __ATOMIC_RELAXED),
			 res->events, res->limit, r->cfg->progress_arg);
}

static void run_loop(struct run *r)
{
	struct pollfd pfd[3] = {
		{ .fd = r->sfd, .events = POLLIN },
		{ .fd = r->tfd, .events = POLLIN },
		{ .fd = r->src ? mp_source_fd(r->src) : -1, .events = POLLIN },
	};
	uint64_t deadline = r->res->start_ns + r->cfg->duration_ns;
	uint64_t ticks = 0, exp, now;
	struct signalfd_siginfo si;
	enum stress_end *reason = &r->res->reason;

	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			*reason = STRESS_END_FAILED;
			return;
		}
		if (pfd[0].revents) {
			while (read(r->sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					continue;
				*reason = STRESS_END_INTERRUPTED;
			}
			reap(r);
			if (*reason)
				return;
			if (r->engine.exited) {
				*reason = WIFSIGNALED(r->engine.status) ?
						  STRESS_END_ENGINE_KILLED :
						  STRESS_END_ENGINE_FAILED;
				return;
			}
		}
		if (pfd[2].revents)
			count_event(r);
		if (pfd[1].revents) {
			now = now_ns();
			if (read(r->tfd, &exp, sizeof(exp)) < 0)
				continue;
			take_sample(r, now);
			if (r->cfg->progress && ++ticks % PROGRESS_TICKS == 0)
				progress(r);
			if (now >= deadline) {
				*reason = STRESS_END_DURATION;
				return;
			}
			if (r->cfg->until_freed &&
			    __atomic_load_n(&r->shm->chunks.freed,
					    __ATOMIC_RELAXED) >=
				    r->cfg->until_freed) {
				*reason = STRESS_END_FREED;
				return;
			}
		}
	}
}

/*
 * The "total=" of the some and full lines of a PSI file, in us: the
 * cgroup's memory.pressure (v2), else the host's /proc/pressure/memory.
 * At the start, the values are kept; at the end, the growth is set.
 */
static void pressure_totals(struct run *r, bool start)
{
	struct stress_result *res = r->res;
	const struct mp_cgroup *cg = r->c.cg;
	char path[PATH_MAX + 32], buf[512], *p;
	uint64_t v[2] = { 0, 0 };
	const char *src = "cgroup";
	int i;

	if (cg)
		snprintf(path, sizeof(path), "%s/memory.pressure", cg->dir);
	if (!cg || cg->hier->version == MP_CG_V1 ||
	    mp_read_file(path, buf, sizeof(buf)) < 0) {
		src = "host";
		if (mp_read_file(mp_syspath(path, sizeof(path),
					    "/proc/pressure/memory"),
				 buf, sizeof(buf)) < 0) {
			res->pressure_source = NULL;
			return;
		}
	}
	for (i = 0, p = buf; i < 2 && (p = strstr(p, "total=")); i++, p++)
		v[i] = strtoull(p + 6, NULL, 10);
	if (start) {
		res->pressure_source = src;
		res->pressure_some_us = v[0];
		res->pressure_full_us = v[1];
	} else if (res->pressure_source) {
		res->pressure_some_us = v[0] - res->pressure_some_us;
		res->pressure_full_us = v[1] - res->pressure_full_us;
	}
}

static void finish(struct run *r)
{
	struct stress_result *res = r->res;
	const struct mp_cgroup *cg = r->c.cg;
	uint64_t v = 0, oom_end = 0;

	/*
	 * The OOM kills are the run's up to its end, read before anything
	 * is torn down: a kill while the engine stops is the teardown's,
	 * counted apart (the engine answers its last allocations before it
	 * stops answering, so there should be none)
	 */
	if (cg && !mp_cg_oom_kills(r->c.engine_cg, &v))
		res->oom_kills = v > r->oom_base ? v - r->oom_base : 0;
	oom_end = v;
	/* the counters of the run, not of its teardown, as the OOM kills */
	if (!mp_vmstat_read(&res->vmstat))
		mp_counters_delta(&res->vmstat, &r->vm0);
	if (cg) {
		mp_cg_counters_read(cg, &res->cg_stat, &res->cg_events);
		mp_counters_delta(&res->cg_stat, &r->cgs0);
		mp_counters_delta(&res->cg_events, &r->cge0);
	}
	/* stop the engine, the co-tenant, then the hog; wait for them */
	if (stop_engine(r) > 0)
		res->reason = STRESS_END_ENGINE_UNRESPONSIVE;
	res->cotenant_killed = beside_killed(r);
	stop_beside(r);
	/* judged before the stop: what the stop causes is not the hog's */
	reap(r);
	res->hog_failed = res->hog_exited && !(WIFEXITED(res->hog_status) &&
					       !WEXITSTATUS(res->hog_status));
	stop_hog(r);
	res->end_ns = now_ns();
	take_sample(r, res->end_ns);
	if (r->c.created &&
	    !mp_cg_read_u64(cg,
			    cg->hier->version == MP_CG_V1 ?
				    "memory.max_usage_in_bytes" :
				    "memory.peak",
			    &v) &&
	    v > res->peak)
		res->peak = v;
	v = 0;
	if (cg && !mp_cg_oom_kills(r->c.engine_cg, &v) && v > oom_end &&
	    oom_end >= r->oom_base)
		res->teardown_oom_kills = v - oom_end;
	if (r->hog.c.pid > 0)
		hog_results(r);
	mp_meminfo(NULL, NULL, &res->swap_end);
	update_events(r);
	if (r->sh)
		mp_shrinker_stats(r->sh, &res->ss);
	pressure_totals(r, false);
	res->engine = *r->shm;
}

/* MADV_FREE on a page of our own: false with errno (EINVAL before 4.5) */
static bool lazyfree_works(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int e = 0;

	if (m == MAP_FAILED)
		return false;
	*(char *)m = 1;
	if (madvise(m, (size_t)page, MADV_FREE))
		e = errno;
	munmap(m, (size_t)page);
	errno = e;
	return !e;
}

int stress_check(const struct stress_run_cfg *cfg, struct mp_err *err)
{
	char path[PATH_MAX], **words;
	uint64_t total, avail;
	struct mp_err why;
	int n;

	if (mp_meminfo(&total, &avail, NULL))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot read '/proc/meminfo'");
	if (!cfg->cgroup && cfg->limit > avail) {
		char a[32], b[32];

		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "limit %s is larger than the memory available (%s)",
			       mp_fmt_size(cfg->limit, a, sizeof(a)),
			       mp_fmt_size(avail, b, sizeof(b)));
	}
	/* --cgroup without --limit: checked against its own limit later */
	if ((!cfg->cgroup || cfg->limit_set) && cfg->chunk > cfg->limit)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "chunk size %" PRIu64
			       " is larger than the limit %" PRIu64,
			       cfg->chunk, cfg->limit);
	if (!cfg->cgroup &&
	    cfg->limit / STRESS_LIMIT_PER_INFLIGHT / (uint64_t)cfg->threads <
		    cfg->chunk) {
		char a[32], b[32], c[32];

		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"limit %s is too small for %d threads of %s chunks: at least %s (or fewer threads, smaller chunks)",
			mp_fmt_size(cfg->limit, a, sizeof(a)), cfg->threads,
			mp_fmt_size(cfg->chunk, b, sizeof(b)),
			mp_fmt_size(STRESS_LIMIT_PER_INFLIGHT *
					    (uint64_t)cfg->threads * cfg->chunk,
				    c, sizeof(c)));
	}
	if (cfg->hog && mp_path_search("stress-ng", path, sizeof(path)))
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
			       "--hog needs stress-ng, which is not installed");
	words = cfg->hog ? mp_parse_words(cfg->hog, &n) : NULL;
	free(words);
	if (cfg->hog && !words)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "invalid arguments for --hog '%s': %s", cfg->hog,
			       errno == EINVAL ? "a quote is not closed" :
						 strerror(errno));
	if (stress_workload_check(cfg->workload,
				  stress_settings(cfg->free_mode, cfg->lazyfree,
						  cfg->answer_delay_ns,
						  cfg->stop_answering_ns),
				  err))
		return -1;
	if (cfg->stop_answering_ns >= cfg->duration_ns)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"--stop-answering must come before the end of the run: less than --duration");
	if (cfg->lazyfree && !lazyfree_works())
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"--lazyfree needs MADV_FREE (Linux 4.5), which this kernel refused: %s",
			strerror(errno));
	if ((cfg->workload->needs & STRESS_NEEDS_KERNEL_SHRINKER) &&
	    mp_backend_probe(MP_BACKEND_MEMPRESSURE, &why))
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
			       "%s needs the kernel's shrinker: %s",
			       cfg->workload->title, why.msg);
	return 0;
}

/* Signals, the tick, the shared memory, the cgroups, the shrinker. */
static int prepare(struct run *r, struct mp_err *err)
{
	struct stress_run_cfg *cfg = r->cfg;
	const struct stress_workload *w = cfg->workload;
	struct stress_result *res = r->res;
	struct mp_shrinker_cfg scfg = {
		.backend = cfg->backend,
		.chunk_size = cfg->chunk,
		.emulate = cfg->emulate,
		.policy = { .target = cfg->target,
			    .high = cfg->high,
			    .rt_priority = cfg->rt_priority },
	};
	struct mp_meminfo mi;
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/*
	 * A shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches the signalfd: "kill -INT" must still end the
	 * run with its report.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/*
	 * A reader gone (a report killed, "| head") must not kill us before
	 * the cgroups are removed: the write fails with EPIPE instead.
	 */
	signal(SIGPIPE, SIG_IGN);
	r->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r->shm = stress_shared_new(&r->shm_fd);
	if (r->sfd < 0 || r->tfd < 0 || !r->shm)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot set up the run");
	res->high_bytes = mp_emul_high_mark(&scfg.policy, cfg->limit);
	if (stress_cgroups_setup(&r->c, cfg, res->high_bytes, err))
		return -1;
	snprintf(res->cgroup, sizeof(res->cgroup), "%s", r->c.cg->path);
	res->transient = r->c.created;
	res->cgroup_others = r->c.others;
	scfg.target = &r->c.tgt;
	/* kernel shrinker: the usage early warning beside it, unless told */
	scfg.early_warning = !cfg->no_early_warning;
	if (w->needs & STRESS_NEEDS_EMULATED)
		scfg.emulate = true;
	if (w->needs & STRESS_NEEDS_KERNEL_SHRINKER)
		scfg.backend = MP_BACKEND_MEMPRESSURE;
	if ((w->needs & STRESS_NEEDS_MEMORY_RECLAIM) &&
	    (!r->c.cg->dir[0] || !r->c.cg->hier ||
	     r->c.cg->hier->version == MP_CG_V1 ||
	     !mp_cg_has_file(r->c.cg, "memory.reclaim")))
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"%s needs memory.reclaim (cgroup v2, Linux 5.19+), which cgroup '%s' has not%s",
			w->title, r->c.cg->path[0] ? r->c.cg->path : "/",
			r->c.cg->hier && r->c.cg->hier->version == MP_CG_V1 ?
				": its memory controller is on cgroup v1" :
				"");
	if ((w->needs & STRESS_NEEDS_SHRINKER) &&
	    mp_shrinker_open(&scfg, &r->sh, err))
		return -1;
	if (r->sh) {
		res->mode = mp_shrinker_mode(r->sh);
		res->backend = mp_shrinker_backend(r->sh);
		res->emulated = mp_shrinker_emulated(r->sh);
	}
	if (r->sh && !res->emulated) {
		struct mp_source_cfg src = {
			.backend = MP_BACKEND_MEMPRESSURE,
			.level = MP_LEVEL_LOW,
			.target = &r->c.tgt,
		};

		if (mp_source_open(&src, &r->src, err))
			return -1;
	}
	r->have_ms = true;
	if (mp_memstat_open(&r->ms, r->c.cg))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot read the memory usage of '%s'",
			       r->c.cg->path);
	/* the root, or any cgroup without a limit: the whole host */
	if (!r->c.created && !r->ms.limited && !cfg->force)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"cgroup '%s' has no memory limit: the run would pressure the whole host (--force to do so)",
			r->c.cg->path[0] ? r->c.cg->path : "/");
	res->limit = r->c.created ? cfg->limit : r->ms.limit;
	/*
	 * Emulated: the allocators pause above the high mark (engine.c), the
	 * transient cgroup's memory.high or, in --cgroup, the same fraction
	 * of the limit it works against
	 */
	if (res->emulated && !cfg->no_throttle && r->ms.limited) {
		r->usage_fd = r->ms.usage_fd;
		r->throttle_bytes = mp_emul_high_mark(&scfg.policy, res->limit);
	}
	if (!cfg->limit_set && cfg->cgroup)
		cfg->limit = res->limit;
	/* --cgroup: only now is its limit known */
	if (cfg->chunk > res->limit)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "chunk size %" PRIu64
			       " is larger than the limit %" PRIu64
			       " of cgroup '%s'",
			       cfg->chunk, res->limit, r->c.cg->path);
	r->footprint = (uint64_t)(cfg->overcommit * (double)cfg->limit /
				  (double)cfg->chunk);
	if (!r->footprint)
		r->footprint = 1;
	if (!mp_meminfo_read(&mi)) {
		res->swap_total = mi.swap_total;
		res->swap_start = mi.swap_total - mi.swap_free;
		res->swap_peak = res->swap_start;
	}
	mp_cg_oom_kills(r->c.cg, &r->oom_base);
	if (r->c.engine_created)
		r->oom_base = 0;
	mp_vmstat_read(&r->vm0);
	mp_cg_counters_read(r->c.cg, &r->cgs0, &r->cge0);
	pressure_totals(r, true);
	return 0;
}

int stress_run(struct stress_run_cfg *cfg, struct stress_result *res,
	       struct mp_err *err)
{
	struct run *r = calloc(1, sizeof(*r)); /* 300 KB: not on the stack */
	struct itimerspec its = {
		.it_interval = { 0, TICK_NS },
		.it_value = { 0, TICK_NS },
	};
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (!r)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM,
			       "cannot set up the run");
	*r = (struct run){ .cfg = cfg,
			   .res = res,
			   .beside = calloc(stress_nr_workloads,
					    sizeof(*r->beside)),
			   .c = { .claim_fd = -1 },
			   .sfd = -1,
			   .tfd = -1,
			   .shm_fd = -1,
			   .usage_fd = -1,
			   .hog = { .yaml_fd = -1, .out_fd = -1 } };
	if (!r->beside) {
		mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cannot set up the run");
		goto out;
	}
	if (prepare(r, err))
		goto out;
	res->start_ns = now_ns();
	if (start_engine(r, err) || start_beside(r, err))
		goto out;
	if (cfg->hog && start_hog(r, err)) {
		res->reason = STRESS_END_FAILED;
		finish(r);
		goto out;
	}
	timerfd_settime(r->tfd, 0, &its, NULL);
	take_sample(r, now_ns());
	run_loop(r);
	finish(r);
	ret = 0;
out:
	stop_engine(r);
	stop_beside(r);
	stop_hog(r);
	mp_child_release(&r->engine);
	for (size_t i = 0; r->beside && i < stress_nr_workloads; i++)
		mp_child_release(&r->beside[i].c);
	free(r->beside);
	mp_child_release(&r->hog.c);
	if (r->hog.yaml_fd >= 0)
		close(r->hog.yaml_fd);
	if (r->hog.out_fd >= 0)
		close(r->hog.out_fd);
	mp_source_close(r->src);
	mp_shrinker_close(r->sh);
	if (r->have_ms)
		mp_memstat_close(&r->ms);
	stress_cgroups_remove(&r->c);
	stress_shared_free(r->shm);
	if (r->shm_fd >= 0)
		close(r->shm_fd);
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->tfd >= 0)
		close(r->tfd);
	free(r);
	return ret;
}

void stress_result_free(struct stress_result *res)
{
	free(res->tl);
	res->tl = NULL;
	res->ntl = 0;
	free(res->hog_argv);
	res->hog_argv = NULL;
}
