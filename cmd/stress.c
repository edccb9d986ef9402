// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl stress: allocate more than a cgroup's limit with a user-space
 * shrinker freeing chunks on request, and report how it went.
 *
 * The parent (this process) stays outside the run's cgroup: it creates a
 * transient cgroup with the limit, registers the shrinker (the kernel's or
 * the emulated one, whose thread then lives here, outside the limit),
 * forks the engine into the cgroup, samples usage every 100 ms, and prints
 * the summary and the JSON document from numbers the engine keeps in
 * shared memory, so that they survive the engine being OOM-killed.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "engine.h"
#include "mp_cgroup.h"
#include "mp_json.h"
#include "mp_memstat.h"
#include "mp_output.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_shrinker.h"

#define STRESS_SCHEMA		"mpctl-stress"
/* 2: parameters.chunk_size_bytes (was chunk_bytes), timeline[].t_ns (t_ms) */
#define STRESS_SCHEMA_VERSION	2

#define MAX_THREADS	1024
#define MIN_CHUNK	4096ULL
#define MIN_LIMIT	(16ULL << 20)	/* below, the engine is OOM-killed */
#define TICK_NS		100000000ULL	/* timeline sampling */
#define PROGRESS_TICKS	2		/* progress line every 200 ms */

struct stress_opts {
	uint64_t chunk;
	long long threads;
	uint64_t duration_ns;
	uint64_t limit;
	bool limit_set;
	double overcommit;
	enum mp_backend backend;
	bool emulate;
	const char *cgroup;
	const char *hog;
	bool json;
	bool pretty;
	const char *output;
	double target;
	double high;
	long long reclaim_nice;
	long long rt_priority;
	long long reclaim_rt;
	bool no_assist;
	bool no_throttle;
	bool swap;		/* no memsw / swap.max limit */
};

enum {
	OPT_CHUNK = 0x100,
	OPT_TARGET,
	OPT_HIGH,
	OPT_EMULATE,
	OPT_NICE,
	OPT_RT,
	OPT_RECLAIM_RT,
	OPT_NO_ASSIST,
	OPT_NO_THROTTLE,
	OPT_SWAP,
	OPT_OVERCOMMIT,
};

static const struct argp_option options[] = {
	{ "chunk", 'C', "SIZE", 0,
	  "chunk size (default 1M; at least 4K, at most the limit)", 0 },
	{ "threads", 'T', "N", 0, "allocator threads, 1 to 1024 (default 4)",
	  0 },
	{ "duration", 'd', "TIME", 0, "run time, e.g. 20s (default 30s)", 0 },
	{ "limit", 'L', "SIZE", 0,
	  "memory limit of the run's cgroup (default 256M)", 0 },
	{ "overcommit", OPT_OVERCOMMIT, "X", 0,
	  "footprint the allocators aim at, as a multiple of the limit "
	  "(default 2.0)", 0 },
	{ "backend", 'b', "NAME", 0,
	  "mempressure (kernel shrinker), memcg or psi (emulated), or auto",
	  0 },
	{ "emulate", OPT_EMULATE, NULL, 0,
	  "emulate the shrinker even on a patched kernel", 0 },
	/* hidden until completion/mpctl.bash lists them (bats/docs.bats) */
	{ "no-assist", OPT_NO_ASSIST, NULL, 0,
	  "kernel shrinker alone, without the usage early warning", 0 },
	{ "no-throttle", OPT_NO_THROTTLE, NULL, 0,
	  "no memory.high (cgroup2) or soft limit (v1) on the transient cgroup", 0 },
	{ "swap", OPT_SWAP, NULL, 0,
	  "let the transient cgroup swap (default: no swap)", 0 },
	{ "cgroup", 'c', "PATH", 0,
	  "run in this existing cgroup instead of a transient one "
	  "('/' pressures the whole host)", 0 },
	{ "hog", 'H', "ARGS", 0,
	  "also run 'stress-ng ARGS' in the cgroup, uncooperative", 0 },
	{ "json", 'j', NULL, 0, "print one JSON document instead of the summary",
	  0 },
	{ "pretty", 'p', NULL, 0, "indent the JSON (implies --json)", 0 },
	{ "output", 'o', "FILE", 0, "also write the JSON document to FILE", 0 },
	{ "target", OPT_TARGET, "FRAC", 0,
	  "emulation: bring usage back under FRAC of the limit (0.85)", 0 },
	{ "high", OPT_HIGH, "FRAC", 0,
	  "emulation: early-warning usage threshold, FRAC of the limit or "
	  "'off' (0.90)", 0 },
	{ "emulator-rt", OPT_RT, "PRIO", 0,
	  "emulation: SCHED_FIFO priority of the emulator thread, 0 for none "
	  "(default 1)", 0 },
	{ "reclaim-rt", OPT_RECLAIM_RT, "PRIO", 0,
	  "SCHED_FIFO priority of the engine's reclaim thread, 0 for none "
	  "(default 1; --reclaim-nice applies without it)", 0 },
	{ "reclaim-nice", OPT_NICE, "N", 0,
	  "nice value of the engine's reclaim thread (default -10)", 0 },
	{ 0 }
};

static int parse_frac(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(*v) || *v <= lo || *v > hi)
		return -1;
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct stress_opts *o = state->input;
	uint64_t v;

	switch (key) {
	case 'C':
		if (mp_parse_size(arg, &v))
			argp_error(state, "invalid chunk size '%s'", arg);
		if (!v)
			argp_error(state, "invalid chunk size '%s': must not be zero",
				   arg);
		if (v < MIN_CHUNK)
			argp_error(state, "invalid chunk size '%s': below 4K",
				   arg);
		if (mp_parse_chunk(arg, &v))
			argp_error(state, "invalid chunk size '%s': not a multiple of the page size (%ld)",
				   arg, sysconf(_SC_PAGESIZE));
		o->chunk = v;
		break;
	case 'T':
		if (mp_parse_long(arg, 1, MAX_THREADS, &o->threads))
			argp_error(state, "invalid thread count '%s': %s", arg,
				   errno == ERANGE ? "must be 1 to 1024" :
				   "not a number");
		break;
	case 'd':
		o->duration_ns = cmd_arg_duration(state, arg);
		break;
	case 'L':
		if (mp_parse_size(arg, &v))
			argp_error(state, "invalid limit '%s'", arg);
		if (v < MIN_LIMIT)
			argp_error(state, "limit '%s' is below 16M: the engine needs room", arg);
		o->limit = v;
		o->limit_set = true;
		break;
	case OPT_OVERCOMMIT:
		if (parse_frac(arg, 0, 64, &o->overcommit))
			argp_error(state, "invalid overcommit '%s': must be above 0 and at most 64",
				   arg);
		break;
	case 'b':
		if (mp_backend_parse(arg, &o->backend))
			argp_error(state, "unknown backend '%s'", arg);
		break;
	case OPT_EMULATE:
		o->emulate = true;
		break;
	case OPT_NO_ASSIST:
		o->no_assist = true;
		break;
	case OPT_NO_THROTTLE:
		o->no_throttle = true;
		break;
	case OPT_SWAP:
		o->swap = true;
		break;
	case 'c':
		if (!*arg)
			argp_error(state, "empty cgroup path");
		o->cgroup = arg;
		break;
	case 'H':
		if (!*arg)
			argp_error(state, "empty arguments for --hog");
		o->hog = arg;
		break;
	case 'p':
		o->pretty = true;
		/* fall through */
	case 'j':
		o->json = true;
		break;
	case 'o':
		if (!*arg)
			argp_error(state, "empty file name for --output");
		o->output = arg;
		break;
	case OPT_TARGET:
		if (parse_frac(arg, 0, 0.99, &o->target))
			argp_error(state, "invalid target '%s': a fraction above 0 and at most 0.99",
				   arg);
		break;
	case OPT_HIGH:
		if (!strcmp(arg, "off"))
			o->high = -1;
		else if (parse_frac(arg, 0, 1, &o->high))
			argp_error(state, "invalid threshold '%s': a fraction above 0 and at most 1, or 'off'",
				   arg);
		break;
	case OPT_RT:
		if (mp_parse_long(arg, 0, 99, &o->rt_priority))
			argp_error(state, "invalid priority '%s': must be 0 to 99",
				   arg);
		break;
	case OPT_RECLAIM_RT:
		if (mp_parse_long(arg, 0, 99, &o->reclaim_rt))
			argp_error(state, "invalid priority '%s': must be 0 to 99",
				   arg);
		break;
	case OPT_NICE:
		if (mp_parse_long(arg, -20, 19, &o->reclaim_nice))
			argp_error(state, "invalid nice value '%s': must be -20 to 19",
				   arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp stress_argp = {
	options, parse_opt, NULL,
	"Allocate more than a cgroup's memory limit while a user-space "
	"shrinker frees chunks on request; print a summary or JSON.\v"
	"By default the run gets its own transient cgroup with --limit, "
	"removed afterwards. Ctrl-C ends the run early and still reports. "
	"Exit status: 0 the run completed; 1 runtime failure (e.g. the "
	"engine was OOM-killed); 64 usage error; 69 no memory cgroup or "
	"pressure interface; 77 permission denied. See mpctl-stress(1).",
	NULL, NULL, NULL
};

/* ---- the run ---- */

struct sample {
	uint64_t t_ns;
	uint64_t usage;
	uint64_t held;
	uint64_t events;
	uint64_t requests;
};

struct hog {
	pid_t pid;
	int yaml_fd;		/* memfd stress-ng writes its YAML into */
	int status;
	bool exited;
	uint64_t bogo_ops;
	uint64_t oom_kills;
	bool have_ops;
};

struct run {
	struct stress_opts *o;
	struct mp_output out;		/* --output, opened before the run */
	bool have_out;
	/* cgroups: the run's (limit), engine and hog leaves, mempressure */
	struct mp_cgroup cg, engine_cg, hog_cg, mp_cg;
	bool created, engine_created, hog_created, mp_created;
	bool have_mp_cg;
	uint64_t high_bytes;		/* cgroup2 memory.high, 0 if none */
	struct mp_shrinker *sh;
	struct mp_source *src;		/* event counting, kernel shrinker */
	uint64_t events[MP_LEVEL_NR];
	struct stress_shared *shm;
	struct mp_memstat ms;
	uint64_t limit;			/* the limit the run works against */
	uint64_t footprint;		/* chunks the allocators aim at */
	pid_t pid;
	int status;
	bool engine_exited;
	struct hog hog;
	uint64_t start_ns, end_ns;
	uint64_t peak, swap_start, swap_end, swap_total;
	uint64_t oom_base, oom_kills;
	const char *reason;
	struct sample *tl;
	size_t ntl, tl_cap;
	int sfd, tfd;
	bool tty;
};

static uint64_t now_ns(void)
{
	return mp_now_ns(CLOCK_MONOTONIC);
}

static void fmt_mib(uint64_t b, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f MiB", (double)b / (1 << 20));
}

/* The hierarchy the run's transient cgroup goes in. */
static int find_memory_hier(struct mp_hier *h, struct mp_err *err)
{
	if (!mp_find_v1("memory", h))
		return 0;
	if (!mp_find_v2(h) && mp_v2_has_controller(h, "memory"))
		return 0;
	return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
		       "no memory cgroup to limit the run: neither a v1 memory hierarchy nor cgroup2 with the memory controller (use --cgroup / to pressure the whole host)");
}

static int cg_write_u64(const struct mp_cgroup *cg, const char *file,
			uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return mp_cg_write(cg, file, buf);
}

static int make_child(const struct mp_cgroup *parent, const char *name,
		      struct mp_cgroup *child, bool *created,
		      struct mp_err *err)
{
	if (mp_cg_create(parent, name, child))
		return mp_errf(err, -1, errno, "cannot create cgroup '%s/%s'",
			       parent->path, name);
	*created = true;
	return 0;
}

/* cgroup2: make a controller available to the children of cg */
static int v2_enable(const struct mp_cgroup *cg, const char *ctrl)
{
	char buf[512], word[64], *p, *tok, *save = NULL;

	if (mp_cg_read(cg, "cgroup.subtree_control", buf, sizeof(buf)))
		return -1;
	for (p = buf; (tok = strtok_r(p, " \n", &save)); p = NULL)
		if (!strcmp(tok, ctrl))
			return 0;
	snprintf(word, sizeof(word), "+%s", ctrl);
	return mp_cg_write(cg, "cgroup.subtree_control", word);
}

/*
 * A run killed with SIGKILL cannot remove its transient cgroup: remove
 * those of runs whose process is gone, when nothing runs in them.
 */
static void remove_stale(const struct mp_cgroup *root)
{
	static const char *const leaves[] = { "engine", "hog" };
	char buf[64];
	struct dirent *de;
	DIR *d;

	d = opendir(root->dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct mp_cgroup cg, leaf;
		char *end;
		long pid;
		size_t i;

		if (strncmp(de->d_name, "mpctl-stress-", 13))
			continue;
		pid = strtol(de->d_name + 13, &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		cg = *root;
		snprintf(cg.dir, sizeof(cg.dir), "%s/%s", root->dir,
			 de->d_name);
		for (i = 0; i < 2; i++) {
			leaf = cg;
			snprintf(leaf.dir, sizeof(leaf.dir), "%s/%s", cg.dir,
				 leaves[i]);
			if (!mp_cg_read(&leaf, "cgroup.procs", buf,
					sizeof(buf)) && !buf[0])
				rmdir(leaf.dir);
		}
		if (!mp_cg_read(&cg, "cgroup.procs", buf, sizeof(buf)) &&
		    !buf[0])
			rmdir(cg.dir);
	}
	closedir(d);
}

static int setup_cgroups(struct run *r, struct mp_err *err)
{
	struct stress_opts *o = r->o;
	struct mp_cgroup root;
	struct mp_hier h;
	char name[64], path[PATH_MAX + 32];

	if (find_memory_hier(&h, err)) {
		/* only --cgroup / can do without a memory cgroup */
		if (!o->cgroup || strcmp(o->cgroup, "/"))
			return -1;
		memset(&r->cg, 0, sizeof(r->cg));
		snprintf(r->cg.path, sizeof(r->cg.path), "/");
		if (mp_find_v2(&h) && mp_find_v1("memory", &h))
			return -1;
	}
	if (o->cgroup) {
		if (mp_cgroup_resolve(&h, o->cgroup, &r->cg, err))
			return -1;
		snprintf(path, sizeof(path), "%s/cgroup.procs", r->cg.dir);
		if (access(path, W_OK))
			return mp_errf(err, -1, errno,
				       "cannot write to cgroup '%s'",
				       r->cg.path);
	} else {
		if (mp_cgroup_resolve(&h, "/", &root, err))
			return -1;
		remove_stale(&root);
		snprintf(name, sizeof(name), "mpctl-stress-%d", (int)getpid());
		if (h.version == MP_CG_V2) {
			/* the limit needs memory in the root's subtree */
			if (v2_enable(&root, "memory"))
				return mp_errf(err, -1, errno,
					       "cannot enable the memory controller for the children of '%s'",
					       root.path);
			if (mp_v2_has_controller(&h, "mempressure"))
				v2_enable(&root, "mempressure");
		}
		if (make_child(&root, name, &r->cg, &r->created, err))
			return -1;
		if (h.version == MP_CG_V1) {
			if (cg_write_u64(&r->cg, "memory.limit_in_bytes",
					 o->limit))
				return mp_errf(err, -1, errno,
					       "cannot set the limit of '%s'",
					       r->cg.path);
			/* no swap for the run where memsw exists */
			if (!o->swap && mp_cg_has_file(&r->cg,
					   "memory.memsw.limit_in_bytes"))
				cg_write_u64(&r->cg,
					     "memory.memsw.limit_in_bytes",
					     o->limit);
			/*
			 * v1 has no memory.high; for userspace shrinkers the
			 * patched kernel gives the soft limit its part (see
			 * mempressure(7)), elsewhere it only guides global
			 * reclaim.
			 */
			if (!o->no_throttle)
				cg_write_u64(&r->cg, "memory.soft_limit_in_bytes",
					     r->high_bytes);
		} else {
			if (cg_write_u64(&r->cg, "memory.max", o->limit))
				return mp_errf(err, -1, errno,
					       "cannot set the limit of '%s'",
					       r->cg.path);
			if (!o->swap &&
			    mp_cg_has_file(&r->cg, "memory.swap.max"))
				mp_cg_write(&r->cg, "memory.swap.max", "0");
			/*
			 * Above memory.high the kernel throttles the
			 * allocators instead of killing them: halfway between
			 * the early warning and the limit, it buys the
			 * shrinker time on a slow machine.
			 */
			if (!o->no_throttle)
				cg_write_u64(&r->cg, "memory.high",
					     r->high_bytes);
		}
	}
	r->engine_cg = r->cg;
	if (o->hog && r->created) {
		/* leaves, so that OOM kills are counted apart */
		if (r->cg.hier.version == MP_CG_V2 &&
		    v2_enable(&r->cg, "memory"))
			return mp_errf(err, -1, errno,
				       "cannot enable the memory controller for the children of '%s'",
				       r->cg.path);
		if (make_child(&r->cg, "engine", &r->engine_cg,
			       &r->engine_created, err) ||
		    make_child(&r->cg, "hog", &r->hog_cg, &r->hog_created,
			       err))
			return -1;
	} else {
		r->hog_cg = r->cg;
	}
	/* a patched kernel's mempressure hierarchy, if mounted apart */
	if ((o->backend == MP_BACKEND_MEMPRESSURE ||
	     (o->backend == MP_BACKEND_AUTO && !o->emulate)) &&
	    !mp_backend_probe(MP_BACKEND_MEMPRESSURE, NULL)) {
		struct mp_hier mh;

		if (!mp_find_v1("mempressure", &mh) ||
		    (!mp_find_v2(&mh) &&
		     mp_v2_has_controller(&mh, "mempressure"))) {
			if (!strcmp(mh.mnt, h.mnt)) {
				r->mp_cg = r->cg;
			} else if (r->created) {
				if (!mp_cgroup_resolve(&mh, "/", &root, NULL))
					remove_stale(&root);
				if (mp_cgroup_resolve(&mh, "/", &root, err) ||
				    make_child(&root, r->cg.dir +
					       strlen(r->cg.dir) -
					       strlen(name), &r->mp_cg,
					       &r->mp_created, err))
					return -1;
			} else if (mp_cgroup_resolve(&mh, r->cg.path,
						     &r->mp_cg, err)) {
				/* the same path in the mempressure hierarchy */
				return -1;
			}
			r->have_mp_cg = true;
		}
	}
	return 0;
}

static void remove_cgroups(struct run *r)
{
	if (r->hog_created)
		mp_cg_remove(&r->hog_cg, 5000);
	if (r->engine_created)
		mp_cg_remove(&r->engine_cg, 5000);
	if (r->created)
		mp_cg_remove(&r->cg, 5000);
	if (r->mp_created)
		mp_cg_remove(&r->mp_cg, 5000);
	r->hog_created = r->engine_created = r->created = false;
	r->mp_created = false;
}

static int join_cgroup(const struct mp_cgroup *cg)
{
	char pid[32];

	if (!cg->dir[0])
		return 0;	/* the host: stay where we are */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return mp_cg_write(cg, "cgroup.procs", pid);
}

static void child_signals(void)
{
	sigset_t none;

	/* never outlive the parent, which alone removes the cgroup */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* The engine process: join the cgroup(s), run, exit. Never returns. */
static void engine_main(struct run *r)
{
	struct stress_engine_cfg cfg = {
		.chunk_size = r->o->chunk,
		.threads = (int)r->o->threads,
		.max_chunks = r->footprint,
		.shm = r->shm,
		.reclaim_nice = (int)r->o->reclaim_nice,
		.reclaim_rt = (int)r->o->reclaim_rt,
	};
	struct mp_shrinker *sh;
	struct mp_err err;

	setpgid(0, 0);	/* Ctrl-C goes to the parent, which stops us */
	child_signals();
	if (join_cgroup(&r->engine_cg) ||
	    (r->have_mp_cg && strcmp(r->mp_cg.dir, r->cg.dir) &&
	     join_cgroup(&r->mp_cg))) {
		snprintf(r->shm->error, sizeof(r->shm->error),
			 "cannot move the engine into cgroup '%s': %s",
			 r->engine_cg.path, strerror(errno));
		r->shm->state = STRESS_FAILED;
		_exit(1);
	}
	/* the registration as any child of 'mpctl register' gets it */
	if (mp_shrinker_client_from_env(&sh, &err)) {
		snprintf(r->shm->error, sizeof(r->shm->error), "%s", err.msg);
		r->shm->state = STRESS_FAILED;
		_exit(1);
	}
	cfg.sh = sh;
	_exit(stress_engine_run(&cfg) ? 1 : 0);
}

static int start_hog(struct run *r, struct mp_err *err)
{
	char *cmd;
	pid_t pid;
	int n;

	/*
	 * stress-ng's report goes to a memfd, opened by stress-ng through
	 * /proc/self/fd: nothing in /tmp to leak when we are SIGKILLed.
	 */
	r->hog.yaml_fd = memfd_create("mpctl-stress-hog-yaml", MFD_CLOEXEC);
	if (r->hog.yaml_fd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot create a memory file for stress-ng");
	n = asprintf(&cmd, "exec stress-ng %s --timeout %" PRIu64
		     " --metrics-brief --yaml /proc/self/fd/%d >/dev/null 2>&1",
		     r->o->hog,
		     (uint64_t)((r->o->duration_ns + 999999999ULL) / 1000000000ULL),
		     r->hog.yaml_fd);
	if (n < 0)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "hog");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(cmd);
		return mp_errf(err, MP_EXIT_FAILURE, errno, "fork");
	}
	if (!pid) {
		setpgid(0, 0);
		child_signals();
		if (join_cgroup(&r->hog_cg) ||
		    fcntl(r->hog.yaml_fd, F_SETFD, 0))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	free(cmd);
	r->hog.pid = pid;
	return 0;
}

static void hog_results(struct run *r)
{
	char buf[65536], *p;
	const struct mp_cgroup *cg = &r->hog_cg;

	ssize_t n = -1, k;

	if (r->hog.yaml_fd >= 0)
		for (n = 0; (size_t)n < sizeof(buf) - 1; n += k) {
			k = pread(r->hog.yaml_fd, buf + n,
				  sizeof(buf) - 1 - n, n);
			if (k <= 0)
				break;
		}
	if (n >= 0) {
		buf[n] = '\0';
		for (p = strstr(buf, "bogo-ops:"); p;
		     p = strstr(p + 1, "bogo-ops:")) {
			r->hog.bogo_ops += strtoull(p + 9, NULL, 10);
			r->hog.have_ops = true;
		}
	}
	if (r->hog.yaml_fd >= 0)
		close(r->hog.yaml_fd);
	r->hog.yaml_fd = -1;
	if (r->hog_created)
		mp_cg_oom_kills(cg, &r->hog.oom_kills);
}

static uint64_t total_events(struct run *r)
{
	uint64_t sum = 0;
	int l;

	for (l = 0; l < MP_LEVEL_NR; l++)
		sum += r->events[l];
	return sum;
}

static void update_events(struct run *r)
{
	struct mp_shrinker_stats st;
	int l;

	if (r->src)
		return;		/* counted as they come */
	mp_shrinker_stats(r->sh, &st);
	for (l = 0; l < MP_LEVEL_NR; l++)
		r->events[l] = st.events[l];
}

static void take_sample(struct run *r, uint64_t now)
{
	uint64_t usage = 0;
	struct sample *s;

	mp_memstat_usage(&r->ms, &usage);
	if (usage > r->peak)
		r->peak = usage;
	update_events(r);
	if (r->ntl == r->tl_cap) {
		size_t cap = r->tl_cap ? r->tl_cap * 2 : 512;
		struct sample *n = realloc(r->tl, cap * sizeof(*n));

		if (!n)
			return;
		r->tl = n;
		r->tl_cap = cap;
	}
	s = &r->tl[r->ntl++];
	s->t_ns = now - r->start_ns;
	s->usage = usage;
	s->held = __atomic_load_n(&r->shm->held, __ATOMIC_RELAXED);
	s->events = total_events(r);
	s->requests = __atomic_load_n(&r->shm->requests, __ATOMIC_RELAXED);
}

static void progress(struct run *r)
{
	const struct sample *s = &r->tl[r->ntl - 1];
	char held[32], usage[32], limit[32];

	fmt_mib(s->held * r->o->chunk, held, sizeof(held));
	fmt_mib(s->usage, usage, sizeof(usage));
	fmt_mib(r->limit, limit, sizeof(limit));
	fprintf(stderr, "\r\033[K%5.1fs held %s freed %" PRIu64
		" requests %" PRIu64 " events l/m/c %" PRIu64 "/%" PRIu64
		"/%" PRIu64 " usage %s/%s",
		(double)s->t_ns / 1e9, held,
		__atomic_load_n(&r->shm->chunks.freed, __ATOMIC_RELAXED),
		s->requests, r->events[MP_LEVEL_LOW],
		r->events[MP_LEVEL_MEDIUM], r->events[MP_LEVEL_CRITICAL],
		usage, limit);
	fflush(stderr);
}

static void reap(struct run *r)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == r->pid) {
			r->status = status;
			r->engine_exited = true;
		} else if (pid == r->hog.pid) {
			r->hog.status = status;
			r->hog.exited = true;
		}
	}
}

/* Wait for a child for up to ms, then kill its process group. */
static void stop_child(struct run *r, pid_t pid, bool *exited, int sig,
		       int ms)
{
	int i;

	if (!pid || *exited)
		return;
	if (sig)
		kill(-pid, sig);
	for (i = 0; i < ms / 10 && !*exited; i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
		reap(r);
	}
	if (!*exited) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (!*exited) {
			struct timespec ts = { 0, 10000000 };

			nanosleep(&ts, NULL);
			reap(r);
		}
	}
}

static void count_event(struct run *r)
{
	struct mp_event ev;
	struct mp_err err;

	if (mp_source_read(r->src, &ev, &err) > 0)
		r->events[ev.level] += ev.count ? ev.count : 1;
}

static int run_loop(struct run *r)
{
	struct pollfd pfd[3] = {
		{ .fd = r->sfd, .events = POLLIN },
		{ .fd = r->tfd, .events = POLLIN },
		{ .fd = r->src ? mp_source_fd(r->src) : -1, .events = POLLIN },
	};
	uint64_t deadline = r->start_ns + r->o->duration_ns, ticks = 0, exp;
	struct signalfd_siginfo si;

	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			r->reason = "failed";
			return -1;
		}
		if (pfd[0].revents) {
			while (read(r->sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					continue;
				r->reason = "interrupted";
			}
			reap(r);
			if (r->reason)
				return 0;
			if (r->engine_exited) {
				r->reason = WIFSIGNALED(r->status) ?
					    "engine_killed" : "engine_failed";
				return 0;
			}
		}
		if (pfd[2].revents)
			count_event(r);
		if (pfd[1].revents) {
			uint64_t now = now_ns();

			if (read(r->tfd, &exp, sizeof(exp)) < 0)
				continue;
			take_sample(r, now);
			if (r->tty && ++ticks % PROGRESS_TICKS == 0)
				progress(r);
			if (now >= deadline) {
				r->reason = "duration";
				return 0;
			}
		}
	}
}

/* ---- results ---- */

static json_t *hist_json(const struct mp_hist *h)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "count", (json_int_t)h->count,
			 "p50_ns", (json_int_t)mp_hist_quantile(h, 0.50),
			 "p99_ns", (json_int_t)mp_hist_quantile(h, 0.99),
			 "max_ns", (json_int_t)h->max,
			 "mean_ns", (json_int_t)(h->count ? h->sum / h->count :
						 0));
}

static double seconds(const struct run *r)
{
	return (double)(r->end_ns - r->start_ns) / 1e9;
}

static json_t *result_json(struct run *r, const struct mp_shrinker_stats *ss)
{
	const struct stress_shared *s = r->shm;
	const struct stress_opts *o = r->o;
	json_t *doc = mp_json_doc(STRESS_SCHEMA, STRESS_SCHEMA_VERSION);
	json_t *tl = json_array(), *params, *policy = json_null();
	struct utsname un;
	double secs = seconds(r);
	size_t i;
	int bad = !doc || !tl;

	uname(&un);
	bool policy_on = mp_shrinker_emulated(r->sh) || ss->limit_bytes;

	params = json_pack("{s:I, s:I, s:I, s:I, s:f, s:s, s:b, s:b, s:b, s:o, s:o}",
			   "chunk_size_bytes", (json_int_t)o->chunk,
			   "threads", (json_int_t)o->threads,
			   "duration_ns", (json_int_t)o->duration_ns,
			   "limit_bytes", (json_int_t)o->limit,
			   "overcommit", o->overcommit,
			   "backend", o->backend == MP_BACKEND_AUTO ? "auto" :
			   mp_backend_name(o->backend),
			   "emulate", o->emulate,
			   "assist", !o->no_assist,
			   "swap", o->swap,
			   "cgroup", o->cgroup ? mp_json_str(o->cgroup) :
			   json_null(),
			   "hog", o->hog ? mp_json_str(o->hog) : json_null());
	if (policy_on) {
		struct mp_emul_policy p = {
			.target = o->target, .high = o->high,
		};

		mp_emul_policy_defaults(&p);
		policy = json_pack("{s:f, s:o, s:f, s:f, s:f, s:I, s:I}",
				   "target", p.target,
				   "high", p.high > 0 ? json_real(p.high) :
				   json_null(),
				   "min_frac_low", p.min_frac[MP_LEVEL_LOW],
				   "min_frac_medium",
				   p.min_frac[MP_LEVEL_MEDIUM],
				   "min_frac_critical",
				   p.min_frac[MP_LEVEL_CRITICAL],
				   "interval_ns", (json_int_t)p.interval_ns,
				   "linger_ns", (json_int_t)p.linger_ns);
	}
	bad |= json_object_set_new(doc, "parameters", params);
	bad |= json_object_set_new(doc, "backend", json_string(
		mp_backend_name(mp_shrinker_backend(r->sh))));
	bad |= json_object_set_new(doc, "shrinker", json_string(
		mp_shrinker_mode_name(mp_shrinker_mode(r->sh))));
	bad |= json_object_set_new(doc, "emulation_policy", policy);
	bad |= json_object_set_new(doc, "early_warning", json_boolean(
		!mp_shrinker_emulated(r->sh) && policy_on));
	bad |= json_object_set_new(doc, "emulator", policy_on ?
		json_pack("{s:I, s:I, s:I, s:I, s:I}",
			  "requests", (json_int_t)ss->requests,
			  "chunks_requested", (json_int_t)ss->chunks_requested,
			  "counter_end", (json_int_t)ss->counter,
			  "added", (json_int_t)ss->added,
			  "removed", (json_int_t)ss->removed) : json_null());
	bad |= json_object_set_new(doc, "kernel_release", json_string(un.release));
	bad |= json_object_set_new(doc, "cgroup", mp_json_str(r->cg.path));
	bad |= json_object_set_new(doc, "transient_cgroup", json_boolean(r->created));
	bad |= json_object_set_new(doc, "memory_high_bytes",
			    r->created && !o->no_throttle ?
			    json_integer((json_int_t)r->high_bytes) :
			    json_null());
	bad |= json_object_set_new(doc, "duration_ns",
			    json_integer((json_int_t)(r->end_ns - r->start_ns)));
	bad |= json_object_set_new(doc, "exit_reason", json_string(r->reason));
	bad |= json_object_set_new(doc, "chunks_allocated",
			    json_integer((json_int_t)s->chunks.allocated));
	bad |= json_object_set_new(doc, "bytes_allocated",
			    json_integer((json_int_t)(s->chunks.allocated *
						      o->chunk)));
	bad |= json_object_set_new(doc, "chunks_freed",
			    json_integer((json_int_t)s->chunks.freed));
	bad |= json_object_set_new(doc, "bytes_freed",
			    json_integer((json_int_t)(s->chunks.freed *
						      o->chunk)));
	bad |= json_object_set_new(doc, "reclaim_requests",
			    json_integer((json_int_t)s->requests));
	bad |= json_object_set_new(doc, "chunks_requested",
			    json_integer((json_int_t)s->chunks_requested));
	bad |= json_object_set_new(doc, "chunks_readded",
			    json_integer((json_int_t)s->chunks_readded));
	bad |= json_object_set_new(doc, "chunks_short",
			    json_integer((json_int_t)s->chunks_short));
	bad |= json_object_set_new(doc, "reclaim_latency", hist_json(&s->latency));
	bad |= json_object_set_new(doc, "reclaim_latency_per_chunk",
			    hist_json(&s->latency_chunk));
	bad |= json_object_set_new(doc, "events", json_pack(
		"{s:I, s:I, s:I, s:I, s:I}",
		"low", (json_int_t)r->events[MP_LEVEL_LOW],
		"medium", (json_int_t)r->events[MP_LEVEL_MEDIUM],
		"critical", (json_int_t)r->events[MP_LEVEL_CRITICAL],
		"thresholds", (json_int_t)ss->thresholds,
		"samples", (json_int_t)ss->samples));
	bad |= json_object_set_new(doc, "alloc_throughput_bytes_per_s", json_integer(
		(json_int_t)(secs > 0 ? (double)s->chunks.allocated *
			     (double)o->chunk / secs : 0)));
	bad |= json_object_set_new(doc, "alloc_busy_throughput_bytes_per_s",
		json_integer((json_int_t)(s->chunks.alloc_ns ?
			(double)s->chunks.allocated * (double)o->chunk * 1e9 /
			(double)s->chunks.alloc_ns * (double)o->threads : 0)));
	bad |= json_object_set_new(doc, "peak_usage_bytes",
			    json_integer((json_int_t)r->peak));
	bad |= json_object_set_new(doc, "limit_bytes",
			    json_integer((json_int_t)r->limit));
	bad |= json_object_set_new(doc, "swap_total_bytes",
			    json_integer((json_int_t)r->swap_total));
	bad |= json_object_set_new(doc, "swap_used_bytes",
			    json_integer((json_int_t)r->swap_end));
	bad |= json_object_set_new(doc, "swap_growth_bytes", json_integer(
		(json_int_t)(r->swap_end > r->swap_start ?
			     r->swap_end - r->swap_start : 0)));
	bad |= json_object_set_new(doc, "oom_kills",
			    json_integer((json_int_t)r->oom_kills));
	if (o->hog)
		bad |= json_object_set_new(doc, "hog", json_pack(
			"{s:o, s:o, s:I, s:o}",
			"args", mp_json_str(o->hog),
			"bogo_ops", r->hog.have_ops ?
			json_integer((json_int_t)r->hog.bogo_ops) :
			json_null(),
			"oom_kills", (json_int_t)r->hog.oom_kills,
			"exit_status", r->hog.exited &&
			WIFEXITED(r->hog.status) ?
			json_integer(WEXITSTATUS(r->hog.status)) :
			json_null()));
	else
		bad |= json_object_set_new(doc, "hog", json_null());
	for (i = 0; i < r->ntl; i++)
		bad |= json_array_append_new(tl, json_pack(
			"{s:I, s:I, s:I, s:I, s:I}",
			"t_ns", (json_int_t)r->tl[i].t_ns,
			"usage_bytes", (json_int_t)r->tl[i].usage,
			"chunks_held", (json_int_t)r->tl[i].held,
			"events", (json_int_t)r->tl[i].events,
			"requests", (json_int_t)r->tl[i].requests));
	bad |= json_object_set_new(doc, "timeline", tl);
	if (s->error[0])
		bad |= json_object_set_new(doc, "error", json_string(s->error));
	/* a NULL from json_pack() would drop a key: no partial document */
	if (bad) {
		json_decref(doc);
		errno = ENOMEM;
		return NULL;
	}
	return doc;
}

static void print_summary(struct run *r,
			  const struct mp_shrinker_stats *ss)
{
	const struct stress_shared *s = r->shm;
	const struct stress_opts *o = r->o;
	char a[32], b[32], c[32];
	double secs = seconds(r);

	printf("mpctl stress: %s shrinker (%s) in %s, ended: %s\n",
	       mp_shrinker_mode_name(mp_shrinker_mode(r->sh)),
	       mp_backend_name(mp_shrinker_backend(r->sh)), r->cg.path,
	       r->reason);
	printf("  duration      %.1f s, %lld threads, chunk %" PRIu64
	       " bytes\n", secs, o->threads, o->chunk);
	fmt_mib(s->chunks.allocated * o->chunk, a, sizeof(a));
	fmt_mib(s->chunks.freed * o->chunk, b, sizeof(b));
	printf("  allocated     %" PRIu64 " chunks (%s), %.0f MiB/s\n",
	       s->chunks.allocated, a,
	       secs > 0 ? (double)s->chunks.allocated * (double)o->chunk /
	       secs / (1 << 20) : 0.0);
	printf("  freed         %" PRIu64 " chunks (%s) on %" PRIu64
	       " requests for %" PRIu64 " (re-added %" PRIu64 ", short %"
	       PRIu64 ")\n", s->chunks.freed, b, s->requests,
	       s->chunks_requested, s->chunks_readded, s->chunks_short);
	printf("  latency       p50 %.0f us, p99 %.0f us, max %.0f us per "
	       "request; p50 %.0f us per chunk\n",
	       mp_hist_quantile(&s->latency, 0.5) / 1e3,
	       mp_hist_quantile(&s->latency, 0.99) / 1e3,
	       s->latency.max / 1e3,
	       mp_hist_quantile(&s->latency_chunk, 0.5) / 1e3);
	printf("  events        low %" PRIu64 ", medium %" PRIu64
	       ", critical %" PRIu64, r->events[MP_LEVEL_LOW],
	       r->events[MP_LEVEL_MEDIUM], r->events[MP_LEVEL_CRITICAL]);
	if (mp_shrinker_emulated(r->sh))
		printf("; usage thresholds %" PRIu64, ss->thresholds);
	printf("\n");
	fmt_mib(r->peak, a, sizeof(a));
	fmt_mib(r->limit, b, sizeof(b));
	fmt_mib(r->swap_end > r->swap_start ? r->swap_end - r->swap_start : 0,
		c, sizeof(c));
	printf("  peak usage    %s of %s limit, swap growth %s\n", a, b, c);
	printf("  OOM kills     %" PRIu64 "\n", r->oom_kills);
	if (o->hog)
		printf("  hog           stress-ng %s: %s%" PRIu64
		       " bogo-ops, %" PRIu64 " OOM kills\n", o->hog,
		       r->hog.have_ops ? "" : "no report, ", r->hog.bogo_ops,
		       r->hog.oom_kills);
	if (s->error[0])
		printf("  error         %s\n", s->error);
}

static int write_output(struct run *r, json_t *doc)
{
	struct mp_err err;
	FILE *f;

	if (r->o->json && mp_json_emit(stdout, doc, r->o->pretty))
		return -1;
	if (!r->have_out)
		return 0;
	r->have_out = false;
	f = mp_output_stream(&r->out, &err);
	if (!f) {
		mp_output_abort(&r->out);
		cmd_fail(&err);
		return -2;
	}
	if (mp_json_emit(f, doc, true)) {
		mp_errf(&err, MP_EXIT_FAILURE, errno ? errno : EIO,
			"cannot write '%s'", r->o->output);
		mp_output_abort(&r->out);
		cmd_fail(&err);
		return -2;
	}
	if (mp_output_commit(&r->out, &err)) {
		cmd_fail(&err);
		return -2;
	}
	return 0;
}

static void finish(struct run *r)
{
	uint64_t kills = 0;

	/* stop the engine, then the hog; wait for both */
	__atomic_store_n(&r->shm->stop, 1, __ATOMIC_RELAXED);
	stop_child(r, r->pid, &r->engine_exited, 0, 5000);
	stop_child(r, r->hog.pid, &r->hog.exited, SIGINT, 5000);
	r->end_ns = now_ns();
	take_sample(r, r->end_ns);
	if (r->tty)
		fprintf(stderr, "\r\033[K");
	if (r->created && r->cg.hier.version == MP_CG_V1 &&
	    !mp_cg_read_u64(&r->cg, "memory.max_usage_in_bytes", &kills) &&
	    kills > r->peak)
		r->peak = kills;
	else if (r->created && r->cg.hier.version == MP_CG_V2 &&
		 !mp_cg_read_u64(&r->cg, "memory.peak", &kills) &&
		 kills > r->peak)
		r->peak = kills;
	kills = 0;
	if (r->cg.dir[0] &&
	    !mp_cg_oom_kills(r->engine_created ? &r->engine_cg : &r->cg,
			     &kills))
		r->oom_kills = kills > r->oom_base ? kills - r->oom_base : 0;
	if (r->hog.pid)
		hog_results(r);
	mp_meminfo(NULL, NULL, &r->swap_end);
	update_events(r);
}

static int check_limits(struct stress_opts *o, struct mp_err *err)
{
	uint64_t total, avail;

	if (mp_meminfo(&total, &avail, NULL))
		return mp_errf(err, MP_EXIT_FAILURE, errno,
			       "cannot read '/proc/meminfo'");
	if (!o->cgroup && o->limit > avail) {
		char a[32], b[32];

		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "limit %s is larger than the memory available (%s)",
			       mp_fmt_size(o->limit, a, sizeof(a)),
			       mp_fmt_size(avail, b, sizeof(b)));
	}
	if (o->chunk > o->limit)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "chunk size %" PRIu64 " is larger than the limit %" PRIu64,
			       o->chunk, o->limit);
	if (o->hog && system("command -v stress-ng >/dev/null 2>&1"))
		return mp_errf(err, MP_EXIT_UNAVAILABLE, 0,
			       "--hog needs stress-ng, which is not installed");
	if (o->emulate && o->backend == MP_BACKEND_MEMPRESSURE)
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "--emulate and --backend mempressure contradict each other");
	return 0;
}

static int stress(struct stress_opts *o)
{
	struct run r = { .o = o, .sfd = -1, .tfd = -1,
			 .hog = { .yaml_fd = -1 } };
	struct mp_shrinker_cfg scfg = {
		.backend = o->backend,
		.chunk_size = o->chunk,
		.emulate = o->emulate,
		.policy = { .target = o->target, .high = o->high,
			    .rt_priority = (int)o->rt_priority },
	};
	struct itimerspec its = {
		.it_interval = { 0, TICK_NS },
		.it_value = { 0, TICK_NS },
	};
	struct mp_shrinker_stats ss;
	struct mp_err err;
	sigset_t mask;
	json_t *doc;
	int ret = MP_EXIT_FAILURE, w;

	if (check_limits(o, &err))
		return err.status == MP_EXIT_USAGE ?
		       cmd_usage_error("%s", err.msg) : cmd_fail(&err);
	/* an output that cannot be written fails before the run, not after */
	if (o->output) {
		if (mp_output_open(&r.out, o->output, &err))
			return cmd_fail(&err);
		r.have_out = true;
	}
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
	r.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	r.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r.shm = stress_shared_new();
	if (r.sfd < 0 || r.tfd < 0 || !r.shm) {
		cmd_error("cannot set up the run: %s", strerror(errno));
		goto out;
	}
	{
		double hi = o->high > 0 ? o->high : o->high < 0 ?
			    (o->target > 0 ? o->target : MP_EMUL_TARGET) :
			    MP_EMUL_HIGH;

		r.high_bytes = (uint64_t)((1.0 + hi) / 2 * (double)o->limit);
	}
	if (setup_cgroups(&r, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	scfg.cgroup = r.have_mp_cg ? r.mp_cg.dir : r.cg.dir[0] ? r.cg.dir :
		      "/";
	/* kernel shrinker: the usage early warning beside it, unless told */
	scfg.assist = !o->no_assist && r.cg.dir[0];
	scfg.usage_cgroup = r.cg.dir[0] ? r.cg.dir : NULL;
	if (mp_shrinker_open(&scfg, &r.sh, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	if (!mp_shrinker_emulated(r.sh)) {
		struct mp_source_cfg src = {
			.backend = MP_BACKEND_MEMPRESSURE,
			.level = MP_LEVEL_LOW,
			.cgroup = scfg.cgroup,
		};

		if (mp_source_open(&src, &r.src, &err)) {
			ret = cmd_fail(&err);
			goto out;
		}
	}
	if (mp_memstat_open(&r.ms, r.cg.dir[0] ? &r.cg : NULL)) {
		cmd_error("cannot read the memory usage of '%s': %s",
			  r.cg.path, strerror(errno));
		goto out;
	}
	r.limit = r.created ? o->limit : r.ms.limit;
	if (!o->limit_set && o->cgroup)
		o->limit = r.limit;
	/* --cgroup: only now is its limit known */
	if (o->chunk > r.limit) {
		ret = cmd_usage_error("chunk size %" PRIu64 " is larger than the limit %" PRIu64 " of cgroup '%s'",
				      o->chunk, r.limit, r.cg.path);
		goto out;
	}
	r.footprint = (uint64_t)(o->overcommit * (double)o->limit /
				 (double)o->chunk);
	if (!r.footprint)
		r.footprint = 1;
	{
		struct mp_meminfo mi;

		if (!mp_meminfo_read(&mi)) {
			r.swap_total = mi.swap_total;
			r.swap_start = mi.swap_total - mi.swap_free;
		}
	}
	if (r.cg.dir[0])
		mp_cg_oom_kills(&r.cg, &r.oom_base);
	if (r.engine_created)
		r.oom_base = 0;

	/* the engine gets the registration as 'mpctl register' passes it */
	if (mp_shrinker_setenv(r.sh, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	/* progress goes to stderr: stdout may be a document (docker -t) */
	r.tty = isatty(STDERR_FILENO);
	fflush(NULL);
	r.start_ns = now_ns();
	r.pid = fork();
	if (r.pid < 0) {
		cmd_error("fork: %s", strerror(errno));
		goto out;
	}
	if (!r.pid)
		engine_main(&r);
	mp_shrinker_unsetenv(r.sh);
	if (o->hog && start_hog(&r, &err)) {
		r.reason = "failed";
		finish(&r);
		ret = cmd_fail(&err);
		goto out;
	}
	timerfd_settime(r.tfd, 0, &its, NULL);
	take_sample(&r, now_ns());
	run_loop(&r);
	finish(&r);
	mp_shrinker_stats(r.sh, &ss);

	doc = result_json(&r, &ss);
	if (!o->json)
		print_summary(&r, &ss);
	if (!doc)
		cmd_error("cannot build the JSON document: %s",
			  strerror(errno));
	w = doc ? write_output(&r, doc) : -2;
	json_decref(doc);
	if (w == -2) {
		ret = MP_EXIT_FAILURE;
	} else if (w < 0) {
		cmd_write_error(errno);
		ret = MP_EXIT_FAILURE;
	} else if (r.shm->error[0] || !strcmp(r.reason, "engine_killed") ||
		   !strcmp(r.reason, "engine_failed") ||
		   !strcmp(r.reason, "failed")) {
		cmd_error("the engine %s%s%s",
			  !strcmp(r.reason, "engine_killed") ?
			  "was killed" : "failed",
			  r.shm->error[0] ? ": " : "", r.shm->error);
		ret = MP_EXIT_FAILURE;
	} else {
		ret = MP_EXIT_OK;
	}
out:
	if (r.pid > 0 && !r.engine_exited) {
		__atomic_store_n(&r.shm->stop, 1, __ATOMIC_RELAXED);
		stop_child(&r, r.pid, &r.engine_exited, 0, 5000);
	}
	mp_source_close(r.src);
	mp_shrinker_close(r.sh);
	mp_memstat_close(&r.ms);
	remove_cgroups(&r);
	stress_shared_free(r.shm);
	free(r.tl);
	/* the run never got to write it: an existing file stays as it was */
	if (r.have_out)
		mp_output_abort(&r.out);
	if (r.sfd >= 0)
		close(r.sfd);
	if (r.tfd >= 0)
		close(r.tfd);
	return ret;
}

int cmd_stress(int argc, char **argv)
{
	struct stress_opts o = {
		.chunk = 1ULL << 20,
		.threads = 4,
		.duration_ns = 30ULL * 1000000000ULL,
		.limit = 256ULL << 20,
		.overcommit = 2.0,
		.backend = MP_BACKEND_AUTO,
		.reclaim_nice = -10,
		.rt_priority = 1,
		.reclaim_rt = 1,
	};

	cmd_argp_parse(&stress_argp, argc, argv, &o);
	return stress(&o);
}
