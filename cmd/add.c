// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl add: account reclaimable chunks on the registration inherited from
 * "mpctl register", and wait for its reclaim requests.
 *
 *   mpctl add 10            ten more reclaimable chunks
 *   mpctl add -- -3         three fewer (freed by the program itself)
 *   mpctl add --wait        block until the shrinker asks, print how many
 *                           chunks to free (the counter is already lower)
 *
 * so that a shell loop can serve reclaim:
 *   while n=$(mpctl add --wait); do drop_caches "$n"; done
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "mp_json.h"
#include "mp_parse.h"
#include "mp_pressure.h"
#include "mp_shrinker.h"

#define ADD_SCHEMA	   "mpctl-add"
#define ADD_SCHEMA_VERSION 1

struct add_opts {
	bool have_n;
	long long n;
	bool wait;
	uint64_t timeout_ns; /* 0: none */
	bool timeout_set;
	bool json;
	bool quiet; /* -q: accepted; add prints no informational lines */
};

/* clang-format off */
static const struct argp_option options[] = {
	{ "wait", 'w', NULL, 0,
	  "after adding N (if given), wait for the next reclaim request and "
	  "print its number of chunks", 0 },
	{ "timeout", 't', "TIME", 0,
	  "with --wait: give up after TIME (exit 1)", 0 },
	{ "json", 'j', NULL, 0, "with --wait: print the request as JSON", 0 },
	{ "quiet", 'q', NULL, 0,
	  "no informational lines on stderr (add prints none; errors still print)", 0 },
	{ 0 }
};
/* clang-format on */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct add_opts *o = state->input;

	switch (key) {
	case 'w':
		o->wait = true;
		break;
	case 't':
		o->timeout_ns = cmd_arg_duration(state, key, arg,
						 CMD_DUR_INFINITY);
		o->timeout_set = true;
		break;
	case 'j':
		o->json = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (o->have_n)
			cmd_argerr(state, "unexpected argument '%s'", arg);
		/* "+5" is a count too, as the kernel's file takes it */
		if (mp_parse_long(arg[0] == '+' ? arg + 1 : arg, -INT32_MAX,
				  INT32_MAX, &o->n))
			cmd_argerr(state, "invalid chunk count '%s'", arg);
		o->have_n = true;
		break;
	case ARGP_KEY_END:
		if (!o->have_n && !o->wait)
			cmd_argerr(state, "nothing to do: give N or --wait");
		if (!o->wait && (o->timeout_set || o->json))
			cmd_argerr(state, "--timeout and --json go with "
					  "--wait");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp add_argp = {
	options,
	parse_opt,
	"N\n[N] --wait",
	"Account N reclaimable chunks (negative N removes) on the shrinker "
	"registration inherited from 'mpctl register', or wait for its next "
	"reclaim request.\v"
	"Exit status: 0 success; 1 failure or --timeout expired; 64 usage "
	"error; 69 not run under 'mpctl register' (no MPCTL_SHRINKER_* "
	"variables); 77 permission denied.",
	NULL,
	NULL,
	NULL
};

static int print_request(const struct add_opts *o, struct mp_shrinker *sh,
			 uint64_t chunks)
{
	uint64_t chunk = mp_shrinker_chunk_size(sh);
	json_t *doc;
	int ret;

	if (!o->json)
		return printf("%" PRIu64 "\n", chunks) < 0 ||
				       fflush(stdout) == EOF ?
			       -1 :
			       0;
	doc = mp_json_doc(ADD_SCHEMA, ADD_SCHEMA_VERSION);
	/* clang-format off */
	json_object_set_new(doc, "request", json_pack(
		"{s:I, s:I, s:I, s:s, s:I}",
		"chunks", (json_int_t)chunks,
		"chunk_size_bytes", (json_int_t)chunk,
		"bytes", (json_int_t)(chunks * chunk),
		"backend", mp_backend_name(mp_shrinker_backend(sh)),
		"time_ns", (json_int_t)mp_now_ns(CLOCK_REALTIME)));
	/* clang-format on */
	ret = mp_json_emit(stdout, doc, false);
	json_decref(doc);
	return ret;
}

int cmd_add(int argc, char **argv)
{
	struct add_opts o = { 0 };
	struct mp_shrinker *sh;
	struct mp_err err;
	uint64_t chunks = 0;
	int64_t timeout;
	int ret;

	/* "-3" is a count, not an option: argp sees "--" before it */
	if (argc == 2 && argv[1][0] == '-' && argv[1][1] >= '0' &&
	    argv[1][1] <= '9') {
		static char *neg[4];

		neg[0] = argv[0];
		neg[1] = "--";
		neg[2] = argv[1];
		neg[3] = NULL;
		argv = neg;
		argc = 3;
	}
	cmd_argp_parse(&add_argp, argc, argv, &o);
	/*
	 * With the emulated shrinker, accounting writes to a pipe whose
	 * reader is 'mpctl register': when it is gone, say so (EPIPE) rather
	 * than die of SIGPIPE without a word.
	 */
	signal(SIGPIPE, SIG_IGN);

	if (mp_shrinker_client_from_env(&sh, &err)) {
		if (err.status == MP_EXIT_UNAVAILABLE)
			cmd_error("not run under 'mpctl register': no "
				  "shrinker registration in the environment "
				  "(MPCTL_SHRINKER_FD)");
		else
			cmd_error("%s", err.msg);
		return err.status ? err.status : MP_EXIT_FAILURE;
	}
	if (o.have_n && o.n && mp_shrinker_add(sh, o.n, &err)) {
		mp_shrinker_close(sh);
		if (err.errnum == EPIPE)
			mp_errf(&err, MP_EXIT_FAILURE, 0,
				"cannot account %+lld chunks: the shrinker is gone (the 'mpctl register' that owned it has exited, or its cgroup was removed)",
				o.n);
		return cmd_fail(&err);
	}
	if (!o.wait) {
		mp_shrinker_close(sh);
		return MP_EXIT_OK;
	}
	timeout = o.timeout_ns ? (int64_t)((o.timeout_ns + 999999) / 1000000) :
				 -1;
	do {
		ret = mp_shrinker_wait(sh, &chunks, timeout, &err);
		/* a request for 0 chunks asks nothing: keep waiting */
	} while ((ret == 1 && !chunks) || (ret < 0 && err.errnum == EINTR));
	if (ret < 0) {
		mp_shrinker_close(sh);
		if (err.errnum == EPIPE)
			mp_errf(&err, MP_EXIT_FAILURE, 0,
				"the shrinker is gone: the 'mpctl register' that owned it has exited, or its cgroup was removed");
		return cmd_fail(&err);
	}
	if (!ret) {
		mp_shrinker_close(sh);
		cmd_error("no reclaim request within the timeout");
		return MP_EXIT_FAILURE;
	}
	ret = print_request(&o, sh, chunks);
	if (ret) {
		/* nobody will free them: give the chunks back */
		int e = errno;

		mp_shrinker_add(sh, chunks, &err);
		mp_shrinker_close(sh);
		cmd_write_error(e);
		return MP_EXIT_FAILURE;
	}
	mp_shrinker_close(sh);
	return MP_EXIT_OK;
}
