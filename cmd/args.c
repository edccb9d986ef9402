// SPDX-License-Identifier: GPL-2.0
/*
 * Typed option values for the commands' argp parsers: one call per
 * option parses with common/mp_parse.c's grammar, checks the range and on
 * a bad value says one line that names the option, then exits 64.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "mp_memstat.h"
#include "mp_parse.h"

/* "--limit" for the option key, from the command's option tables */
static bool find_opt(const struct argp *argp, int key, char *buf, size_t len)
{
	const struct argp_child *c;
	const struct argp_option *o;

	for (o = argp->options; o && (o->name || o->key || o->doc); o++) {
		if (o->key != key || o->flags & OPTION_ALIAS)
			continue;
		if (o->name)
			snprintf(buf, len, "--%s", o->name);
		else
			snprintf(buf, len, "-%c", key);
		return true;
	}
	for (c = argp->children; c && c->argp; c++)
		if (find_opt(c->argp, key, buf, len))
			return true;
	return false;
}

static const char *opt_name(const struct argp_state *state, int key, char *buf,
			    size_t len)
{
	if (find_opt(state->root_argp, key, buf, len))
		return buf;
	return key == ARGP_KEY_ARG ? "argument" : "value";
}

#define ARGERR(state, key, arg, fmt, ...)                             \
	do {                                                          \
		char _n[64];                                          \
		cmd_argerr(state, "invalid %s '%s': " fmt,            \
			   opt_name(state, key, _n, sizeof(_n)), arg, \
			   ##__VA_ARGS__);                            \
	} while (0)

uint64_t cmd_host_ram(void)
{
	uint64_t total = 0, avail, swap;

	return mp_meminfo(&total, &avail, &swap) ? 0 : total;
}

uint64_t cmd_arg_size(struct argp_state *state, int key, const char *arg,
		      uint64_t min, uint64_t whole)
{
	char m[32];
	uint64_t v;

	if (!mp_parse_size_of(arg, whole, &v)) {
		if (v >= min && v)
			return v;
		if (!v)
			ARGERR(state, key, arg, "must not be zero");
		ARGERR(state, key, arg, "below %s",
		       mp_fmt_size(min, m, sizeof(m)));
	}
	if (errno == ENOTSUP)
		ARGERR(state, key, arg, "a percentage has no meaning here");
	if (errno == ERANGE)
		ARGERR(state, key, arg, "too large");
	ARGERR(state, key, arg, "not a size (e.g. 4096, 64K, 1.5G%s)",
	       whole ? ", 50%" : "");
	return 0;
}

long long cmd_arg_long(struct argp_state *state, int key, const char *arg,
		       long long min, long long max)
{
	long long v;

	if (!mp_parse_long(arg, min, max, &v))
		return v;
	if (errno != ERANGE)
		ARGERR(state, key, arg, "not a number");
	if (max == LLONG_MAX)
		ARGERR(state, key, arg, "must be at least %lld", min);
	ARGERR(state, key, arg, "must be %lld to %lld", min, max);
	return 0;
}

double cmd_arg_frac(struct argp_state *state, int key, const char *arg,
		    double min, double max, unsigned int flags)
{
	bool lo_ok, hi_ok;
	double v;

	if (mp_parse_frac(arg, &v))
		ARGERR(state, key, arg, "not a number (e.g. 0.85 or 85%%)");
	lo_ok = flags & CMD_FRAC_ABOVE ? v > min : v >= min;
	hi_ok = flags & CMD_FRAC_BELOW ? v < max : v <= max;
	if (lo_ok && hi_ok)
		return v;
	if (isinf(max))
		ARGERR(state, key, arg, "must be %s %g",
		       flags & CMD_FRAC_ABOVE ? "above" : "at least", min);
	ARGERR(state, key, arg, "must be %s %g and %s %g",
	       flags & CMD_FRAC_ABOVE ? "above" : "at least", min,
	       flags & CMD_FRAC_BELOW ? "below" : "at most", max);
	return 0;
}

uint64_t cmd_arg_duration(struct argp_state *state, int key, const char *arg,
			  unsigned int flags)
{
	bool inf = flags & CMD_DUR_INFINITY;
	uint64_t ns;

	if (!mp_parse_duration(arg, &ns)) {
		if (ns == MP_DURATION_INFINITY && !inf)
			ARGERR(state, key, arg,
			       "must end (infinity has no "
			       "meaning here)");
		if (ns == MP_DURATION_INFINITY)
			return 0;
		if (ns)
			return ns;
		ARGERR(state, key, arg, "must be above 0%s",
		       inf ? " (infinity: no end)" : "");
	}
	if (errno == ERANGE)
		ARGERR(state, key, arg, "at most a year%s",
		       inf ? " (or infinity)" : "");
	ARGERR(state, key, arg, "not a duration (e.g. 500ms, 30s, 1m30s, 1d%s)",
	       inf ? ", infinity" : "");
	return 0;
}

const char *cmd_arg_str(struct argp_state *state, int key, const char *arg)
{
	if (!arg || !*arg)
		ARGERR(state, key, arg ? arg : "", "must not be empty");
	return arg;
}
