// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl register: register a user-space shrinker and run a command with it.
 *
 * The registration (the kernel's mempressure.shrinker, or the emulated one
 * of common/mp_shrinker.c) is handed to COMMAND through inherited file
 * descriptors described in MPCTL_SHRINKER_* variables, so that COMMAND,
 * or "mpctl add" run by it, accounts chunks and serves reclaim requests.
 * In emulated mode the emulator is a thread of this process, which is why
 * register stays alive until COMMAND exits. Without COMMAND it is a
 * monitor: one line per reclaim request.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "mp_cgroup.h"
#include "mp_json.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_shrinker.h"
#include "mp_spawn.h"
#include "mp_target.h"
#include "mp_wait.h"

#define REGISTER_SCHEMA		"mpctl-register"
#define REGISTER_SCHEMA_VERSION 1

struct register_opts {
	struct mp_shrinker_cfg cfg;
	const char *cgroup;	  /* NULL: the caller's own */
	struct mp_target *target; /* 56 KB: on the heap */
	bool chunk_set;
	long long chunks; /* monitor: reclaimable chunks to start with */
	bool keep;	  /* monitor: re-add what was requested */
	long long count;
	uint64_t timeout_ns; /* 0: none */
	bool timeout_set;
	bool json;
	bool verbose;
	bool quiet; /* -q: no informational lines, wins over -v */
	bool join;
	char **argv;		    /* COMMAND, NULL for a monitor */
	struct cmd_metrics metrics; /* monitor: --metrics, --metrics-format */
};

enum {
	OPT_EMULATE = 0x100,
	OPT_KEEP,
	OPT_SYSROOT,
	OPT_JOIN,
	OPT_CHUNKS,
	OPT_METRICS,
	OPT_METRICS_FORMAT,
};

/* clang-format off */
static const struct argp_option options[] = {
	{ "chunk", 'C', "SIZE", 0,
	  "chunk size: the granularity of the program's caches (required)",
	  0 },
	{ "cgroup", 'c', "PATH", 0,
	  "cgroup to register for (default: the caller's own)", 0 },
	{ "backend", 'b', "NAME", 0,
	  "mempressure (kernel shrinker), memcg or psi (emulated), or auto "
	  "(default)", 0 },
	{ "emulate", OPT_EMULATE, NULL, 0,
	  "emulate the shrinker even on a patched kernel", 0 },
	{ "join", OPT_JOIN, NULL, 0,
	  "run COMMAND inside the cgroup (and the memory cgroup of the same "
	  "path)", 0 },
	{ "chunks", OPT_CHUNKS, "N", 0,
	  "monitor: reclaimable chunks to account at the start", 0 },
	{ "keep", OPT_KEEP, NULL, 0,
	  "monitor: re-add the requested chunks (free nothing)", 0 },
	{ "count", 'n', "N", 0, "monitor: exit 0 after N requests", 0 },
	{ "timeout", 't', "TIME", 0, "monitor: exit 0 after TIME", 0 },
	{ "json", 'j', NULL, 0, "monitor: print JSON Lines", 0 },
	{ "metrics", OPT_METRICS, "FILE", 0,
	  "monitor: keep FILE the Prometheus exposition of the requests "
	  "served (requests, chunks asked and freed) and the cgroup's memory "
	  "events (OOM kills), replaced atomically at each request; '-': on "
	  "stdout once monitoring ends, instead of the request lines", 0 },
	CMD_METRICS_FORMAT_OPTION(OPT_METRICS_FORMAT),
	{ "verbose", 'v', NULL, 0,
	  "say on stderr how the shrinker is registered", 0 },
	{ "quiet", 'q', NULL, 0,
	  "no informational lines on stderr (errors and requests still "
	  "print; wins over -v)", 0 },
	{ "sysroot", OPT_SYSROOT, "DIR", OPTION_HIDDEN, "for tests", 0 },
	{ 0 }
};
/* clang-format on */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct register_opts *o = state->input;

	switch (key) {
	case 'C':
		o->cfg.chunk_size = cmd_arg_size(state, key, arg, 1, 0);
		o->chunk_set = true;
		break;
	case 'c':
		o->cgroup = cmd_arg_str(state, key, arg);
		break;
	case 'b':
		if (mp_backend_parse(arg, &o->cfg.backend))
			cmd_argerr(state, "unknown backend '%s'", arg);
		break;
	case OPT_EMULATE:
		o->cfg.emulate = true;
		break;
	case OPT_JOIN:
		o->join = true;
		break;
	case OPT_CHUNKS:
		o->chunks = cmd_arg_long(state, key, arg, 0, INT32_MAX);
		break;
	case OPT_KEEP:
		o->keep = true;
		break;
	case 'n':
		o->count = cmd_arg_long(state, key, arg, 1, INT32_MAX);
		break;
	case 't':
		o->timeout_ns = cmd_arg_duration(state, key, arg,
						 CMD_DUR_INFINITY);
		o->timeout_set = true;
		break;
	case 'j':
		o->json = true;
		break;
	case OPT_METRICS:
	case OPT_METRICS_FORMAT:
		cmd_arg_metrics(state, key, arg, key == OPT_METRICS_FORMAT,
				&o->metrics);
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_SYSROOT:
		if (mp_set_sysroot(arg))
			cmd_argerr(state,
				   "invalid --sysroot: longer than %d bytes",
				   MP_SYSROOT_MAX);
		break;
	case ARGP_KEY_ARGS:
		o->argv = state->argv + state->next;
		break;
	case ARGP_KEY_END:
		cmd_metrics_check(state, &o->metrics);
		if (!o->chunk_set)
			cmd_argerr(state, "--chunk SIZE is required");
		if (o->argv && (o->count || o->timeout_set || o->json ||
				o->keep || o->chunks || o->metrics.path))
			cmd_argerr(state,
				   "--chunks, --keep, --count, --timeout, "
				   "--json and --metrics are for the monitor "
				   "(no COMMAND)");
		if (cmd_metrics_stdout(&o->metrics) && o->json)
			cmd_argerr(state, "--metrics - and --json both write "
					  "to stdout: give --metrics a file");
		if (!o->argv && o->join)
			cmd_argerr(state, "--join needs a COMMAND");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp register_argp = {
	options,
	parse_opt,
	"--chunk SIZE [OPTION...] [--] [COMMAND [ARG...]]",
	"Register a user-space shrinker and run COMMAND with it; without "
	"COMMAND, print one line per reclaim request.\v"
	"COMMAND inherits the registration: MPCTL_SHRINKER_EFD, "
	"MPCTL_SHRINKER_FD, MPCTL_SHRINKER_CHUNK, MPCTL_SHRINKER_BACKEND and "
	"MPCTL_SHRINKER_ABI describe it, and 'mpctl add' uses them.\n"
	"Exit status: COMMAND's status (128+N if killed by signal N), 126/127 "
	"if it cannot be run; the monitor exits 0 after --count or "
	"--timeout or on SIGINT/SIGTERM; 1 on failure; 64 usage error; 69 no "
	"shrinker interface; 77 permission denied.",
	NULL,
	NULL,
	NULL
};

static void describe(const struct mp_shrinker *sh)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);

	cmd_error("registered: mode=%s backend=%s cgroup=%s chunk=%" PRIu64
		  "; listening for reclaim requests",
		  mp_shrinker_mode_name(mp_shrinker_mode(sh)),
		  mp_backend_name(mp_shrinker_backend(sh)), cg ? cg->path : "?",
		  mp_shrinker_chunk_size(sh));
}

/* The kernel moved the shrinker: its memory cgroup went offline. */
static void moved(const struct mp_shrinker *sh)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);

	cmd_error("moved: the memory cgroup of the shrinker of '%s' went "
		  "offline; it is asked for its parent's from now on",
		  cg ? cg->path : "?");
}

static int print_request(const struct register_opts *o,
			 const struct mp_shrinker *sh, uint64_t chunks,
			 uint64_t seq)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);
	uint64_t now = mp_now_ns(CLOCK_REALTIME);
	uint64_t chunk = mp_shrinker_chunk_size(sh);
	struct mp_shrinker_stats st;
	const char *mode = mp_shrinker_mode_name(mp_shrinker_mode(sh));
	const char *be = mp_backend_name(mp_shrinker_backend(sh));
	char when[64];
	int ret = 0;

	mp_shrinker_stats(sh, &st);
	if (o->json) {
		json_t *doc = mp_json_doc(REGISTER_SCHEMA,
					  REGISTER_SCHEMA_VERSION);

		/* clang-format off */
		json_t *req = json_pack(
			"{s:I, s:I, s:I, s:s, s:s, s:o, s:I, s:I, s:I}",
			"seq", (json_int_t)seq,
			"time_ns", (json_int_t)now,
			"monotonic_ns",
			(json_int_t)mp_now_ns(CLOCK_MONOTONIC),
			"mode", mode, "backend", be,
			"cgroup", mp_json_str(cg ? cg->path : ""),
			"chunk_size_bytes", (json_int_t)chunk,
			"chunks", (json_int_t)chunks,
			"bytes", (json_int_t)(chunks * chunk));
		/* clang-format on */

		/* never a request with keys missing */
		if (!doc || json_object_set_new(doc, "request", req) ||
		    (mp_shrinker_emulated(sh) &&
		     json_object_set_new(req, "usage_bytes",
					 json_integer(st.usage_bytes)))) {
			json_decref(doc);
			errno = ENOMEM;
			return -1;
		}
		ret = mp_json_emit(stdout, doc, false);
		json_decref(doc);
	} else {
		mp_fmt_time(now, when, sizeof(when));
		if (printf("%s mode=%s backend=%s cgroup=%s chunks=%" PRIu64
			   " bytes=%" PRIu64 "\n",
			   when, mode, be, cg ? cg->path : "?", chunks,
			   chunks * chunk) < 0 ||
		    fflush(stdout) == EOF)
			ret = -1;
	}
	return ret;
}

static int register_metrics(FILE *f, enum mp_metrics_format fmt, const void *rm)
{
	return mp_metrics_write_register(f, fmt, rm);
}

/*
 * --metrics: FILE replaced by the exposition as it is now, or for "-", on
 * stdout once monitoring ends (final); 0 or -1 (told)
 */
static int write_metrics(const struct register_opts *o,
			 const struct mp_register_metrics *rm, bool final)
{
	struct cmd_metrics cm = o->metrics; /* opened and closed each time */

	if (cmd_metrics_stdout(&cm) && !final)
		return 0;
	return cmd_metrics_write(&cm, register_metrics, rm);
}

/* The request loop, until --count, --timeout, a signal or an error. */
static int serve(const struct register_opts *o, struct mp_shrinker *sh,
		 struct mp_waiter *w, struct mp_register_metrics *rm)
{
	uint64_t chunks, moves = 0;
	struct mp_err err;
	int ret;

	for (;;) {
		ret = cmd_wait(w, mp_shrinker_fd(sh));
		if (ret <= 0)
			return ret ? MP_EXIT_FAILURE : MP_EXIT_OK;
		ret = mp_shrinker_read(sh, &chunks, &err);
		if (ret < 0)
			return cmd_fail(&err);
		if (mp_shrinker_moves(sh) != moves) {
			moves = mp_shrinker_moves(sh);
			if (!o->quiet)
				moved(sh);
		}
		if (!ret || !chunks)
			continue;
		rm->requests++;
		rm->chunks_requested += chunks;
		rm->last_request_ns = mp_now_ns(CLOCK_REALTIME);
		if (!cmd_metrics_stdout(&o->metrics) &&
		    print_request(o, sh, chunks, rm->requests)) {
			cmd_write_error(errno);
			return MP_EXIT_FAILURE;
		}
		if (o->keep) {
			if (mp_shrinker_add(sh, chunks, &err))
				return cmd_fail(&err);
			rm->chunks_readded += chunks;
		}
		if (write_metrics(o, rm, false))
			return MP_EXIT_FAILURE;
		if (o->count && rm->requests >= (uint64_t)o->count)
			return MP_EXIT_OK;
	}
}

static int monitor(const struct register_opts *o, struct mp_shrinker *sh,
		   int sfd)
{
	struct mp_register_metrics rm = {
		.backend = mp_backend_name(mp_shrinker_backend(sh)),
		.mode = mp_shrinker_mode_name(mp_shrinker_mode(sh)),
		.cg = mp_shrinker_cgroup(sh),
	};
	struct mp_waiter w = { .sfd = sfd };
	struct mp_err err;
	int ret;

	if (o->chunks && mp_shrinker_add(sh, o->chunks, &err))
		return cmd_fail(&err);
	if (write_metrics(o, &rm, false))
		return MP_EXIT_FAILURE;
	if (o->timeout_ns)
		w.deadline = mp_now_ns(CLOCK_MONOTONIC) + o->timeout_ns;
	ret = serve(o, sh, &w, &rm);
	if (write_metrics(o, &rm, true) && !ret)
		ret = MP_EXIT_FAILURE;
	return ret;
}

/*
 * The cgroups --join moves COMMAND into: the shrinker's, and when that is
 * not a memory hierarchy (the kernel's v1 mempressure hierarchy, or
 * cgroup2 without the memory controller), the cgroup of the same path in
 * the memory hierarchies where it exists, so that the memory COMMAND uses
 * is charged where the pressure is measured.
 */
static int join(struct mp_child *c, const struct mp_shrinker *sh,
		const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);
	const struct mp_cgroup *mem = mp_target_cg(t, MP_ROLE_MEMORY);

	if (!cg)
		return 0;
	if (mp_child_join(c, cg->dir, err))
		return -1;
	if (mem && strcmp(mem->dir, cg->dir))
		return mp_child_join(c, mem->dir, err);
	return 0;
}

/* Whether no request can come any more, said once if so. */
static bool registration_gone(struct mp_shrinker *sh)
{
	struct mp_err err;
	uint64_t chunks;

	if (mp_shrinker_read(sh, &chunks, &err) >= 0)
		return false;
	cmd_error("%s", err.msg);
	return true;
}

/*
 * COMMAND, found in $PATH and given the registration before the fork;
 * SIGINT, SIGTERM and SIGHUP are passed on, SIGCHLD ends the wait.
 */
static int run_command(const struct register_opts *o, struct mp_shrinker *sh,
		       int sfd, const sigset_t *old)
{
	struct signalfd_siginfo si;
	struct mp_child c;
	struct mp_err err;
	int ret;

	mp_child_init(&c, o->argv);
	c.sigmask = old;
	if ((o->join && join(&c, sh, o->target, &err)) ||
	    mp_shrinker_pass(sh, &c, &err) || mp_child_start(&c, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	while (!(ret = mp_child_reap(&c)))
		if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo != SIGCHLD)
			mp_child_signal(&c, (int)si.ssi_signo);
	if (ret < 0) {
		cmd_error("waitpid: %s", strerror(errno));
		ret = MP_EXIT_FAILURE;
		goto out;
	}
	ret = mp_child_exit_code(c.status);
	/* the registration ended under COMMAND (its cgroup was removed) */
	if (registration_gone(sh) && !ret)
		ret = MP_EXIT_FAILURE;
out:
	mp_child_release(&c);
	return ret;
}

int cmd_register(int argc, char **argv)
{
	struct register_opts o = {
		.cfg = { .backend = MP_BACKEND_AUTO },
	};
	struct mp_shrinker *sh;
	struct mp_err err;
	sigset_t mask, old;
	int sfd, ret;
	bool posix;

	/*
	 * Options end at COMMAND, as for env(1) and nice(1): in
	 * "register --chunk 1M sh -c ..." the -c is sh's. getopt stops at the
	 * first non-option under POSIXLY_CORRECT; COMMAND must not see it.
	 */
	posix = getenv("POSIXLY_CORRECT") != NULL;
	if (!posix)
		setenv("POSIXLY_CORRECT", "1", 1);
	cmd_argp_parse(&register_argp, argc, argv, &o);
	if (!posix)
		unsetenv("POSIXLY_CORRECT");
	o.target = malloc(sizeof(*o.target));
	if (!o.target) {
		cmd_error("out of memory");
		return MP_EXIT_FAILURE;
	}
	mp_target_resolve(o.cgroup, o.target);
	o.cfg.target = o.target;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (o.argv)
		sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	/* blocking for the command (its wait), non-blocking for the monitor */
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | (o.argv ? 0 : SFD_NONBLOCK));
	if (sfd < 0) {
		cmd_error("signalfd: %s", strerror(errno));
		ret = MP_EXIT_FAILURE;
		goto out;
	}
	if (mp_shrinker_open(&o.cfg, &sh, &err)) {
		ret = cmd_fail(&err);
		goto out;
	}
	if (o.verbose && !o.quiet)
		describe(sh);
	/* a service manager waiting for us ($NOTIFY_SOCKET): registered */
	ret = cmd_notify("READY=1");
	if (ret)
		goto out_shrinker;
	if (o.argv)
		ret = run_command(&o, sh, sfd, &old);
	else
		ret = monitor(&o, sh, sfd);
	/* best effort: the manager learns it anyway when we exit */
	cmd_notify("STOPPING=1");
out_shrinker:
	mp_shrinker_close(sh);
out:
	if (sfd >= 0)
		close(sfd);
	free(o.target);
	return ret;
}
