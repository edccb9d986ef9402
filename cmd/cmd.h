/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands of the mpctl multi-call binary, and what they share:
 * printing errors in one format, argp set-up and the final stdout check.
 */
#ifndef MPCTL_CMD_H
#define MPCTL_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"

#ifndef MPCTL_VERSION
#define MPCTL_VERSION "0.0.0"
#endif

int cmd_listen(int argc, char **argv);
int cmd_register(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_stress(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);

/* "mpctl <verb>", set by main() before the command runs */
extern const char *cmd_name;

/* "mpctl <verb>: <msg>" on stderr */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A failed write to stdout: "write error: <strerror>" once (nothing for
 * EPIPE, as a reader that is gone is no news); close_stdout() at exit
 * then does not say it again.
 */
void cmd_write_error(int errnum);
/* prints err and returns its exit status */
int cmd_fail(const struct mp_err *err);
/* usage error: one line, the "Try" hint, returns MP_EXIT_USAGE */
int cmd_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * argp_parse with the command's name in messages; a usage error exits 64
 * with cmd_usage_error()'s hint
 */
struct argp;
int cmd_argp_parse(const struct argp *argp, int argc, char **argv,
		   void *input);
/*
 * argp_error() for the commands' option parsers: the message, the hint of
 * cmd_usage_error(), exit 64 (argp_error() would give argp's own hint)
 */
struct argp_state;
void cmd_argerr(const struct argp_state *state, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/*
 * One wait of a command's event loop on fd (mp_wait.h): 1 ready, 0 the
 * deadline or a signal ended it, -1 an error (said on stderr).
 */
struct mp_waiter;
int cmd_wait(struct mp_waiter *w, int fd);

/* a positive duration for an option, or a usage error (exits 64) */
uint64_t cmd_arg_duration(struct argp_state *state, const char *arg);

#endif
