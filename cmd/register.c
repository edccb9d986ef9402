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
#include "mp_target.h"
#include "mp_wait.h"

#define REGISTER_SCHEMA		"mpctl-register"
#define REGISTER_SCHEMA_VERSION	1

struct register_opts {
	struct mp_shrinker_cfg cfg;
	const char *cgroup;	/* NULL: the caller's own */
	struct mp_target target;
	bool chunk_set;
	long long chunks;	/* monitor: reclaimable chunks to start with */
	bool keep;		/* monitor: re-add what was requested */
	long long count;
	uint64_t timeout_ns;
	bool json;
	bool verbose;
	bool join;
	char **argv;		/* COMMAND, NULL for a monitor */
};

enum {
	OPT_EMULATE = 0x100,
	OPT_KEEP,
	OPT_SYSROOT,
	OPT_JOIN,
	OPT_CHUNKS,
};

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
	{ "verbose", 'v', NULL, 0,
	  "say on stderr how the shrinker is registered", 0 },
	{ "sysroot", OPT_SYSROOT, "DIR", OPTION_HIDDEN, "for tests", 0 },
	{ 0 }
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct register_opts *o = state->input;
	uint64_t v;

	switch (key) {
	case 'C':
		if (mp_parse_size(arg, &v) || !v)
			cmd_argerr(state, "invalid chunk size '%s'", arg);
		o->cfg.chunk_size = v;
		o->chunk_set = true;
		break;
	case 'c':
		o->cgroup = arg;
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
		if (mp_parse_long(arg, 0, INT32_MAX, &o->chunks))
			cmd_argerr(state, "invalid chunk count '%s'", arg);
		break;
	case OPT_KEEP:
		o->keep = true;
		break;
	case 'n':
		if (mp_parse_long(arg, 1, INT32_MAX, &o->count))
			cmd_argerr(state, "invalid count '%s'", arg);
		break;
	case 't':
		o->timeout_ns = cmd_arg_duration(state, arg);
		break;
	case 'j':
		o->json = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_SYSROOT:
		mp_set_sysroot(arg);
		break;
	case ARGP_KEY_ARGS:
		o->argv = state->argv + state->next;
		break;
	case ARGP_KEY_END:
		if (!o->chunk_set)
			cmd_argerr(state, "--chunk SIZE is required");
		if (o->argv && (o->count || o->timeout_ns || o->json ||
				o->keep || o->chunks))
			cmd_argerr(state, "--chunks, --keep, --count, "
				   "--timeout and --json are for the monitor "
				   "(no COMMAND)");
		if (!o->argv && o->join)
			cmd_argerr(state, "--join needs a COMMAND");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp register_argp = {
	options, parse_opt, "--chunk SIZE [OPTION...] [--] [COMMAND [ARG...]]",
	"Register a user-space shrinker and run COMMAND with it; without "
	"COMMAND, print one line per reclaim request.\v"
	"COMMAND inherits the registration: MPCTL_SHRINKER_EFD, "
	"MPCTL_SHRINKER_FD, MPCTL_SHRINKER_CHUNK, MPCTL_SHRINKER_BACKEND and "
	"MPCTL_SHRINKER_ABI describe it, and 'mpctl add' uses them.\n"
	"Exit status: COMMAND's status (128+N if killed by signal N), 126/127 "
	"if it cannot be run; the monitor exits 0 after --count or "
	"--timeout or on SIGINT/SIGTERM; 1 on failure; 64 usage error; 69 no "
	"shrinker interface; 77 permission denied.",
	NULL, NULL, NULL
};

static void describe(const struct mp_shrinker *sh)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);

	cmd_error("registered: mode=%s backend=%s cgroup=%s chunk=%" PRIu64
		  "; listening for reclaim requests",
		  mp_shrinker_mode_name(mp_shrinker_mode(sh)),
		  mp_backend_name(mp_shrinker_backend(sh)),
		  cg ? cg->path : "?", mp_shrinker_chunk_size(sh));
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
			   " bytes=%" PRIu64 "\n", when, mode, be,
			   cg ? cg->path : "?", chunks, chunks * chunk) < 0 ||
		    fflush(stdout) == EOF)
			ret = -1;
	}
	return ret;
}

static int monitor(const struct register_opts *o, struct mp_shrinker *sh,
		   int sfd)
{
	struct mp_waiter w = { .sfd = sfd };
	uint64_t seq = 0, chunks;
	struct mp_err err;
	int ret;

	if (o->chunks && mp_shrinker_add(sh, o->chunks, &err))
		return cmd_fail(&err);
	if (o->timeout_ns)
		w.deadline = mp_now_ns(CLOCK_MONOTONIC) + o->timeout_ns;
	for (;;) {
		ret = cmd_wait(&w, mp_shrinker_fd(sh));
		if (ret <= 0)
			return ret ? MP_EXIT_FAILURE : MP_EXIT_OK;
		ret = mp_shrinker_read(sh, &chunks, &err);
		if (ret < 0)
			return cmd_fail(&err);
		if (!ret || !chunks)
			continue;
		if (print_request(o, sh, chunks, ++seq)) {
			cmd_write_error(errno);
			return MP_EXIT_FAILURE;
		}
		if (o->keep && mp_shrinker_add(sh, chunks, &err))
			return cmd_fail(&err);
		if (o->count && seq >= (uint64_t)o->count)
			return MP_EXIT_OK;
	}
}

/*
 * The cgroups --join moves COMMAND into: the shrinker's, and when that is
 * not a memory hierarchy (the kernel's v1 mempressure hierarchy, or
 * cgroup2 without the memory controller), the cgroup of the same path in
 * the memory hierarchies where it exists, so that the memory COMMAND uses
 * is charged where the pressure is measured.
 */
struct join_set {
	int n;
	struct mp_cgroup cg[3];
};

static void join_set_add(struct join_set *js, const struct mp_cgroup *cg)
{
	int i;

	for (i = 0; i < js->n; i++)
		if (!strcmp(js->cg[i].dir, cg->dir))
			return;
	if (js->n < 3)
		js->cg[js->n++] = *cg;
}

/* The shrinker's cgroup, and the target's memory cgroup where apart. */
static void join_set_fill(struct join_set *js, const struct mp_shrinker *sh,
			  const struct mp_target *t)
{
	const struct mp_cgroup *cg = mp_shrinker_cgroup(sh);
	const struct mp_cgroup *mem = mp_target_cg(t, MP_ROLE_MEMORY);

	js->n = 0;
	if (!cg)
		return;
	join_set_add(js, cg);
	if (mem)
		join_set_add(js, mem);
}

/* In the child: join the cgroups, restore signals, exec. Never returns. */
static void child(const struct register_opts *o, const struct join_set *js,
		  const sigset_t *old, int errfd)
{
	char pid[32], msg[PATH_MAX + 128];
	int status = 126, fd, len, i;

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	for (i = 0; o->join && i < js->n; i++) {
		snprintf(msg, sizeof(msg), "%s/cgroup.procs", js->cg[i].dir);
		fd = open(msg, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
			len = snprintf(msg, sizeof(msg),
				       "cannot join cgroup '%s': %s",
				       js->cg[i].dir, strerror(errno));
			goto fail;
		}
		close(fd);
	}
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, old, NULL);
	execvp(o->argv[0], o->argv);
	if (errno == ENOENT)
		status = 127;
	len = snprintf(msg, sizeof(msg), "cannot run '%s': %s", o->argv[0],
		       strerror(errno));
fail:
	/* the parent prints it, so that messages keep one format */
	if (write(errfd, msg, len) < 0)
		_exit(status);
	_exit(status);
}

static int exit_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return MP_EXIT_FAILURE;
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

static int run_command(const struct register_opts *o, struct mp_shrinker *sh,
		       int sfd, const sigset_t *old)
{
	struct signalfd_siginfo si;
	struct join_set js;
	struct mp_err err;
	char msg[PATH_MAX + 128];
	int status, p[2];
	ssize_t n;
	pid_t pid;

	if (o->join)
		join_set_fill(&js, sh, &o->target);
	if (mp_shrinker_setenv(sh, &err))
		return cmd_fail(&err);
	if (pipe2(p, O_CLOEXEC)) {
		cmd_error("pipe: %s", strerror(errno));
		return MP_EXIT_FAILURE;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cmd_error("fork: %s", strerror(errno));
		return MP_EXIT_FAILURE;
	}
	if (!pid) {
		close(p[0]);
		child(o, &js, old, p[1]);
	}
	close(p[1]);
	n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	/* the fds stay open here: the emulator needs them, not the env */
	mp_shrinker_unsetenv(sh);
	if (n > 0) {
		msg[n] = '\0';
		cmd_error("%s", msg);
	}

	/* forward SIGINT, SIGTERM and SIGHUP; SIGCHLD ends the wait */
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			cmd_error("waitpid: %s", strerror(errno));
			return MP_EXIT_FAILURE;
		}
		if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo != SIGCHLD)
			kill(pid, si.ssi_signo);
	}
	/* the registration ended under COMMAND (its cgroup was removed) */
	if (registration_gone(sh))
		return !WIFEXITED(status) || WEXITSTATUS(status) ?
		       exit_of(status) : MP_EXIT_FAILURE;
	return exit_of(status);
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
	mp_target_resolve(o.cgroup, &o.target);
	o.cfg.target = &o.target;

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
		return MP_EXIT_FAILURE;
	}
	if (mp_shrinker_open(&o.cfg, &sh, &err)) {
		close(sfd);
		return cmd_fail(&err);
	}
	if (o.verbose)
		describe(sh);
	if (o.argv)
		ret = run_command(&o, sh, sfd, &old);
	else
		ret = monitor(&o, sh, sfd);
	mp_shrinker_close(sh);
	close(sfd);
	return ret;
}
