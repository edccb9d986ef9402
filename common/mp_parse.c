// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "mp_parse.h"

struct unit {
	const char *name;
	double mult;
};

/* Parse "<number><unit>" with a unit from the table; "" is units[0]. */
static int parse_with_units(const char *s, const struct unit *units,
			    double max, double *out)
{
	const struct unit *u;
	const char *p;
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		goto inval;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		goto inval;
	/* plain decimal only: no hex, exponent, inf or nan forms */
	for (p = s; p < end; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			goto inval;
	for (u = units; u->name; u++) {
		if (!strcasecmp(end, u->name)) {
			v *= u->mult;
			if (v > max) {
				errno = ERANGE;
				return -1;
			}
			*out = v;
			return 0;
		}
	}
inval:
	errno = EINVAL;
	return -1;
}

int mp_parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1024.0 }, { "kb", 1024.0 }, { "kib", 1024.0 },
		{ "m", 1048576.0 }, { "mb", 1048576.0 }, { "mib", 1048576.0 },
		{ "g", 1073741824.0 }, { "gb", 1073741824.0 },
		{ "gib", 1073741824.0 },
		{ "t", 1099511627776.0 }, { "tb", 1099511627776.0 },
		{ "tib", 1099511627776.0 },
		{ NULL, 0 },
	};
	double v;

	if (parse_with_units(s, units, 9.0e18, &v))
		return -1;
	*bytes = (uint64_t)llround(v);
	return 0;
}

int mp_parse_chunk(const char *s, uint64_t *bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), v;

	if (mp_parse_size(s, &v))
		return -1;
	if (!v || v % page) {
		errno = EDOM;
		return -1;
	}
	*bytes = v;
	return 0;
}

int mp_parse_duration(const char *s, uint64_t *ns)
{
	static const struct unit units[] = {
		{ "", 1e9 }, { "s", 1e9 }, { "sec", 1e9 },
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
		{ NULL, 0 },
	};
	double v;

	/* at most a year: anything longer is a typo */
	if (parse_with_units(s, units, 366.0 * 86400e9, &v))
		return -1;
	*ns = (uint64_t)llround(v);
	return 0;
}

int mp_parse_long(const char *s, long long min, long long max, long long *val)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end) {
		errno = EINVAL;
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		errno = ERANGE;
		return -1;
	}
	*val = v;
	return 0;
}

const char *mp_fmt_size(uint64_t bytes, char *buf, int len)
{
	static const char *const sfx[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int i = 0;

	while (v >= 1024.0 && i < 4) {
		v /= 1024.0;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, sfx[i]);
	return buf;
}

const char *mp_fmt_duration(uint64_t ns, char *buf, int len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
}

const char *mp_fmt_time(uint64_t ns, char *buf, size_t len)
{
	time_t sec = ns / 1000000000ULL;
	struct tm tm;
	size_t n;

	gmtime_r(&sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06uZ",
		 (unsigned int)(ns % 1000000000ULL / 1000));
	return buf;
}

char **mp_parse_words(const char *s, int *n)
{
	size_t len = strlen(s), max = len / 2 + 2;
	char **argv, *out, quote;
	int k = 0;

	argv = malloc(max * sizeof(*argv) + len + 1);
	if (!argv)
		return NULL;
	out = (char *)(argv + max);
	while (*s) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			s++;
			continue;
		}
		argv[k++] = out;
		for (quote = 0; *s; s++) {
			if (quote == '\'') {
				if (*s == '\'')
					quote = 0;
				else
					*out++ = *s;
			} else if (*s == '\\' && s[1] &&
				   (!quote || s[1] == '"' || s[1] == '\\')) {
				*out++ = *++s;
			} else if (quote) {
				if (*s == '"')
					quote = 0;
				else
					*out++ = *s;
			} else if (*s == '\'' || *s == '"') {
				quote = *s;
			} else if (*s == ' ' || *s == '\t' || *s == '\n') {
				break;
			} else {
				*out++ = *s;
			}
		}
		*out++ = '\0';
		if (quote) {
			free(argv);
			errno = EINVAL;
			return NULL;
		}
	}
	argv[k] = NULL;
	*n = k;
	return argv;
}
