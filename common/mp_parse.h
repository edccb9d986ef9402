/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for command-line values: sizes, durations, fractions and counts.
 * All return 0 on success and -1 with errno set (EINVAL for malformed
 * input, ERANGE for out of range values).
 */
#ifndef MP_PARSE_H
#define MP_PARSE_H

#include <stdint.h>

/*
 * One grammar for every number on the command line: a plain decimal
 * ("42", "1.5"), never a sign, blank, hex or exponent ("0x10", "1e1").
 */

/*
 * A size: "4096", "64K", "1.5G", "512KiB", "2T": binary multiples (b, k, m,
 * g, t, p, e, with or without "b"/"ib", any case), as stress-ng and systemd
 * take them. "N%" is N percent of whole; with whole 0 a percentage is
 * refused with ENOTSUP. Bytes.
 */
int mp_parse_size(const char *s, uint64_t *bytes);
int mp_parse_size_of(const char *s, uint64_t whole, uint64_t *bytes);

/*
 * A chunk of memory that the stress engine allocates and gives back with
 * MADV_DONTNEED: a size that is a non-zero multiple of the page size
 * (errno EDOM when it is not, EINVAL/ERANGE as mp_parse_size()).
 */
int mp_parse_chunk(const char *s, uint64_t *bytes);

/*
 * A duration as systemd.time(7) writes it: "250ms", "1m30s", "2h 30min",
 * "1.5s", "1d", a bare number in seconds (ns, us, ms, s, m, h, d, w, M,
 * y and their long names; case-sensitive, "M" is a month). At most a
 * year; "infinity" gives MP_DURATION_INFINITY, for the caller to take or
 * refuse.
 */
#define MP_DURATION_INFINITY UINT64_MAX
int mp_parse_duration(const char *s, uint64_t *ns);

/* A fraction: "0.85" or "85%" (the same), "2.5" (no range check). */
int mp_parse_frac(const char *s, double *v);

/*
 * RFC 4648 base64 (the standard alphabet, '=' padding optional, blanks
 * ignored) decoded into out, NUL-terminated; *len is the decoded length.
 * -1 with errno EINVAL (not base64) or ERANGE (does not fit in size).
 */
int mp_base64_decode(const char *s, char *out, size_t size, size_t *len);

/* A decimal integer in [min, max] (ERANGE outside); no '+', no blanks. */
int mp_parse_long(const char *s, long long min, long long max, long long *val);

/*
 * Words as a shell splits them, with nothing expanded or run: blanks
 * separate words; '...' keeps everything, "..." everything but \" and
 * \\, a backslash outside quotes the next character. A NULL-terminated
 * array in one allocation (free() it), *n words; NULL with errno EINVAL
 * for an unterminated quote, ENOMEM.
 */
char **mp_parse_words(const char *s, int *n);

/* Format helpers: "1.0 MiB", "250 ms"; buf of at least 32 bytes. */
const char *mp_fmt_size(uint64_t bytes, char *buf, int len);
const char *mp_fmt_duration(uint64_t ns, char *buf, int len);
/* CLOCK_REALTIME ns as UTC ISO 8601 with microseconds: "...T08:31:47.731180Z" */
const char *mp_fmt_time(uint64_t ns, char *buf, size_t len);

#endif
