/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for command-line values: sizes, durations and counts.
 * All return 0 on success and -1 with errno set (EINVAL for malformed
 * input, ERANGE for out of range values).
 */
#ifndef MP_PARSE_H
#define MP_PARSE_H

#include <stdint.h>

/* "4096", "64K", "1M", "2G", "1.5G", "512KiB": binary multiples, bytes. */
int mp_parse_size(const char *s, uint64_t *bytes);

/* "250ms", "2s", "1.5s", "1m", "1h", "100us", "10ns"; bare number: s. */
/*
 * A chunk of memory that the stress engine allocates and gives back with
 * MADV_DONTNEED: a size that is a non-zero multiple of the page size
 * (errno EDOM when it is not, EINVAL/ERANGE as mp_parse_size()).
 */
int mp_parse_chunk(const char *s, uint64_t *bytes);
int mp_parse_duration(const char *s, uint64_t *ns);

/* A decimal integer in [min, max]; no sign for unsigned ranges. */
int mp_parse_long(const char *s, long long min, long long max,
		  long long *val);

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
