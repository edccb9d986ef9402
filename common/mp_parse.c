// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
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

/*
 * A plain decimal at the start of s: digits with at most one '.', no sign,
 * blank, hex, exponent, inf or nan (strtod() would take those). *end after it.
 */
static int scan_decimal(const char *s, double *v, const char **end)
{
	const char *p = s;
	int digits = 0, dots = 0;

	for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
		if (*p == '.')
			dots++;
		else
			digits++;
	}
	if (!digits || dots > 1)
		return -1;
	*v = strtod(s, NULL); /* C locale: '.' is the decimal point */
	*end = p;
	return isfinite(*v) ? 0 : -1;
}

static const struct unit *find_unit(const struct unit *units, const char *s,
				    size_t len, bool fold)
{
	for (; units->name; units++)
		if (strlen(units->name) == len &&
		    !(fold ? strncasecmp : strncmp)(s, units->name, len))
			return units;
	return NULL;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

int mp_parse_size_of(const char *s, uint64_t whole, uint64_t *bytes)
{
	/* binary multiples, as stress-ng and systemd's size parser take them */
	static const struct unit units[] = {
		{ "", 1 },	  { "b", 1 },	     { "k", 0x1p10 },
		{ "kb", 0x1p10 }, { "kib", 0x1p10 }, { "m", 0x1p20 },
		{ "mb", 0x1p20 }, { "mib", 0x1p20 }, { "g", 0x1p30 },
		{ "gb", 0x1p30 }, { "gib", 0x1p30 }, { "t", 0x1p40 },
		{ "tb", 0x1p40 }, { "tib", 0x1p40 }, { "p", 0x1p50 },
		{ "pb", 0x1p50 }, { "pib", 0x1p50 }, { "e", 0x1p60 },
		{ "eb", 0x1p60 }, { "eib", 0x1p60 }, { NULL, 0 },
	};
	const struct unit *u;
	const char *end;
	double v;

	if (!s || scan_decimal(s, &v, &end))
		return fail(EINVAL);
	if (!strcmp(end, "%")) {
		if (!whole)
			return fail(ENOTSUP);
		if (v > 100)
			return fail(ERANGE);
		v = v / 100 * (double)whole;
	} else {
		u = find_unit(units, end, strlen(end), true);
		if (!u)
			return fail(EINVAL);
		v *= u->mult;
	}
	if (v > 9.0e18)
		return fail(ERANGE);
	*bytes = (uint64_t)llround(v);
	return 0;
}

int mp_parse_size(const char *s, uint64_t *bytes)
{
	return mp_parse_size_of(s, 0, bytes);
}

int mp_parse_chunk(const char *s, uint64_t *bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), v;

	if (mp_parse_size(s, &v))
		return -1;
	if (!v || v % page)
		return fail(EDOM);
	*bytes = v;
	return 0;
}

/*
 * systemd.time(7): "1m30s", "2h 30min", "1.5s", "500ms", a bare number in
 * seconds, "infinity". Units are case-sensitive: "m" is a minute, "M" a
 * month.
 */
int mp_parse_duration(const char *s, uint64_t *ns)
{
	static const struct unit units[] = {
		{ "ns", 1 },
		{ "nsec", 1 },
		{ "us", 1e3 },
		{ "usec", 1e3 },
		{ "\xc2\xb5s", 1e3 },
		{ "ms", 1e6 },
		{ "msec", 1e6 },
		{ "s", 1e9 },
		{ "sec", 1e9 },
		{ "second", 1e9 },
		{ "seconds", 1e9 },
		{ "m", 60e9 },
		{ "min", 60e9 },
		{ "minute", 60e9 },
		{ "minutes", 60e9 },
		{ "h", 3600e9 },
		{ "hr", 3600e9 },
		{ "hour", 3600e9 },
		{ "hours", 3600e9 },
		{ "d", 86400e9 },
		{ "day", 86400e9 },
		{ "days", 86400e9 },
		{ "w", 604800e9 },
		{ "week", 604800e9 },
		{ "weeks", 604800e9 },
		{ "M", 2629800e9 },
		{ "month", 2629800e9 },
		{ "months", 2629800e9 },
		{ "y", 31557600e9 },
		{ "year", 31557600e9 },
		{ "years", 31557600e9 },
		{ NULL, 0 },
	};
	const struct unit *u;
	const char *p = s, *end;
	double v, total = 0;
	size_t len;

	if (!s)
		return fail(EINVAL);
	if (!strcmp(s, "infinity")) {
		*ns = MP_DURATION_INFINITY;
		return 0;
	}
	/* a bare number alone is seconds */
	if (!scan_decimal(s, &v, &end) && !*end) {
		total = v * 1e9;
		goto done;
	}
	while (*p) {
		if (scan_decimal(p, &v, &end))
			return fail(EINVAL);
		for (p = end; *p == ' '; p++)
			;
		for (len = 0; p[len] && !isdigit((unsigned char)p[len]) &&
			      p[len] != ' ' && p[len] != '.';
		     len++)
			;
		u = find_unit(units, p, len, false);
		if (!u)
			return fail(EINVAL);
		total += v * u->mult;
		for (p += len; *p == ' '; p++)
			;
	}
	if (p == s)
		return fail(EINVAL);
done:
	/* at most a year: anything longer is a typo (infinity says so) */
	if (total > 366.0 * 86400e9)
		return fail(ERANGE);
	*ns = (uint64_t)llround(total);
	return 0;
}

int mp_parse_frac(const char *s, double *v)
{
	const char *end;

	if (!s || scan_decimal(s, v, &end))
		return fail(EINVAL);
	if (!strcmp(end, "%"))
		*v /= 100;
	else if (*end)
		return fail(EINVAL);
	return 0;
}

int mp_parse_long(const char *s, long long min, long long max, long long *val)
{
	const char *p = s;
	long long v;

	if (!s)
		return fail(EINVAL);
	if (*p == '-')
		p++;
	if (!*p)
		return fail(EINVAL);
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			return fail(EINVAL);
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		return fail(ERANGE);
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

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int mp_base64_decode(const char *s, char *out, size_t size, size_t *len)
{
	unsigned int acc = 0;
	size_t n = 0;
	int bits = 0, pad = 0, digits = 0, v;

	for (; *s; s++) {
		if (isspace((unsigned char)*s))
			continue;
		if (*s == '=') {
			pad++;
			continue;
		}
		v = b64_value(*s);
		/* a digit after padding, or not of the alphabet */
		if (v < 0 || pad)
			goto bad;
		digits++;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n + 1 >= size) {
				errno = ERANGE;
				return -1;
			}
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	/* whole quantums of four, padded or not; no stray bits */
	if (digits % 4 == 1 || pad > 2 || (pad && (digits + pad) % 4) ||
	    (acc & ((1u << bits) - 1)))
		goto bad;
	out[n] = '\0';
	*len = n;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}
