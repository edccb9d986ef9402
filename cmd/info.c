// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl info: what mpctl finds here and what each command would do with
 * it (common/mp_info.c); the text is rendered from the JSON document, so
 * that the two cannot drift.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "mp_cgroup.h"
#include "mp_info.h"
#include "mp_json.h"
#include "mp_parse.h"

enum { OPT_SYSROOT = 0x100 };

struct info_opts {
	const char *cgroup;
	bool json;
	bool pretty;
};

/* clang-format off */
static const struct argp_option options[] = {
	{ "cgroup", 'c', "PATH", 0,
	  "look at this cgroup (default: mpctl's own)", 0 },
	{ "json", 'j', NULL, 0, "print one JSON document", 0 },
	{ "pretty", 'p', NULL, 0, "indent the JSON (implies --json)", 0 },
	{ "sysroot", OPT_SYSROOT, "DIR", 0,
	  "read /proc and /sys below DIR (recorded trees, tests)", 0 },
	{ 0 }
};
/* clang-format on */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct info_opts *o = state->input;

	switch (key) {
	case 'c':
		o->cgroup = cmd_arg_str(state, key, arg);
		break;
	case 'p':
		o->pretty = true;
		/* fall through */
	case 'j':
		o->json = true;
		break;
	case OPT_SYSROOT:
		if (mp_set_sysroot(arg))
			cmd_argerr(state,
				   "invalid --sysroot: longer than %d bytes",
				   MP_SYSROOT_MAX);
		break;
	case ARGP_KEY_ARG:
		cmd_argerr(state, "unexpected argument '%s'", arg);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp info_argp = {
	options,
	parse_opt,
	NULL,
	"Show what mpctl finds on this machine: the cgroup hierarchies and the "
	"cgroup in each, the backends and which one listen, register and "
	"stress would use, the effective memory limit, the permission checks "
	"they make, the kernel interfaces. Reads only.\v"
	"Exit status: 0 success; 1 failure; 64 usage error.",
	NULL,
	NULL,
	NULL
};

static const char *s_or(const json_t *v, const char *dflt)
{
	return json_is_string(v) ? json_string_value(v) : dflt;
}

static const char *yes_no(const json_t *v)
{
	return json_is_true(v) ? "yes" : json_is_false(v) ? "no" : "-";
}

static void render(const json_t *doc)
{
	const json_t *v, *o;
	const char *key;
	size_t i;
	char a[32], b[32];

	printf("%-12s %s, cgroups %s\n", "kernel",
	       s_or(json_object_get(doc, "kernel_release"), "?"),
	       s_or(json_object_get(doc, "cgroup_mode"), "?"));
	json_array_foreach(json_object_get(doc, "hierarchies"), i, v)
		printf("%-12s v%lld at %s: %s\n",
		       s_or(json_object_get(v, "role"), "?"),
		       (long long)json_integer_value(
			       json_object_get(v, "version")),
		       s_or(json_object_get(v, "mount"), "?"),
		       s_or(json_object_get(v, "cgroup"),
			    s_or(json_object_get(v, "error"), "?")));
	printf("%-12s", "backends");
	json_array_foreach(json_object_get(doc, "backends"), i, v)
		printf(" %s%s", s_or(json_object_get(v, "name"), "?"),
		       json_is_true(json_object_get(v, "present")) ?
			       "" :
			       " (absent)");
	printf("\n%-12s", "commands");
	json_object_foreach(json_object_get(doc, "commands"), key, v)
		printf(" %s=%s", key, s_or(v, "none"));
	o = json_object_get(doc, "memory");
	v = json_object_get(o, "limit_bytes");
	printf("\n%-12s limit %s, usage %s\n", "memory",
	       json_is_integer(v) ? mp_fmt_size((uint64_t)json_integer_value(v),
						a, sizeof(a)) :
				    "none",
	       mp_fmt_size((uint64_t)json_integer_value(
				   json_object_get(o, "usage_bytes")),
			   b, sizeof(b)));
	printf("%-12s", "may write");
	json_object_foreach(json_object_get(doc, "permissions"), key, v)
		printf(" %s=%s", key, yes_no(v));
	printf("\n%-12s", "interfaces");
	json_object_foreach(json_object_get(doc, "interfaces"), key, v) {
		if (json_is_integer(v))
			printf(" %s=%s", key,
			       mp_fmt_size((uint64_t)json_integer_value(v), a,
					   sizeof(a)));
		else if (json_is_string(v))
			printf(" %s=\"%s\"", key, json_string_value(v));
		else
			printf(" %s=%s", key, yes_no(v));
	}
	printf("\n");
}

int cmd_info(int argc, char **argv)
{
	struct info_opts o = { 0 };
	struct mp_err err;
	json_t *doc;
	int ret = MP_EXIT_OK;

	cmd_argp_parse(&info_argp, argc, argv, &o);
	doc = mp_info(o.cgroup, &err);
	if (!doc)
		return cmd_fail(&err);
	if (o.json)
		ret = mp_json_emit(stdout, doc, o.pretty) ? MP_EXIT_FAILURE : 0;
	else
		render(doc);
	json_decref(doc);
	return ret;
}
