/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Errors returned by the common library.
 *
 * Library code never prints: it fills a struct mp_err with the exit status
 * the failure maps to, the errno and a one-line message, and the command
 * prints it as "mpctl <verb>: <message>".
 */
#ifndef MP_ERR_H
#define MP_ERR_H

#include <stddef.h>

/* Exit statuses, documented in every man page. */
enum {
	MP_EXIT_OK = 0,
	MP_EXIT_FAILURE = 1,
	MP_EXIT_USAGE = 64,	  /* EX_USAGE, argp's default */
	MP_EXIT_DATAERR = 65,	  /* EX_DATAERR: an input is malformed */
	MP_EXIT_NOINPUT = 66,	  /* EX_NOINPUT: an input file is missing */
	MP_EXIT_UNAVAILABLE = 69, /* EX_UNAVAILABLE: interface absent */
	MP_EXIT_NOPERM = 77,	  /* EX_NOPERM */
};

struct mp_err {
	int status; /* one of MP_EXIT_* */
	int errnum; /* errno, 0 if none */
	char msg[512];
};

/*
 * Record an error. When errnum is non-zero ": strerror(errnum)" is appended.
 * A status of -1 derives the status from errnum (EACCES/EPERM give
 * MP_EXIT_NOPERM, anything else MP_EXIT_FAILURE). Always returns -1 so that
 * callers can write "return mp_errf(...)".
 */
int mp_errf(struct mp_err *err, int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Status for a failed system call on a file: EACCES/EPERM give NOPERM. */
int mp_status_for_errno(int errnum);

#endif
