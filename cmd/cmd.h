/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands of the mpctl multi-call binary, and what they share:
 * printing errors in one format, argp set-up and the final stdout check.
 */
#ifndef MPCTL_CMD_H
#define MPCTL_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include <stdio.h>

#include "mp_err.h"
#include "mp_metrics.h"

#ifndef MPCTL_VERSION
#define MPCTL_VERSION "0.0.0"
#endif

int cmd_listen(int argc, char **argv);
int cmd_register(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_stress(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
/* hidden: the engine process of 'mpctl stress' (cmd/engine.c) */
int cmd_stress_engine(int argc, char **argv);

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
/* sd_notify STATE: 0, or the status of a malformed $NOTIFY_SOCKET (told);
 * a datagram not delivered is one warning for the whole run */
int cmd_notify(const char *state);
/* usage error: one line, the "Try" hint, returns MP_EXIT_USAGE */
int cmd_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * argp_parse with the command's name in messages; a usage error exits 64
 * with cmd_usage_error()'s hint
 */
struct argp;
int cmd_argp_parse(const struct argp *argp, int argc, char **argv, void *input);
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

/*
 * Typed option values (cmd/args.c): the value of option key parsed with
 * mp_parse.h's grammar and checked, or one line naming the option
 * ("invalid --limit '12Q': not a size ...") and exit 64.
 */
/* a size of at least min (and never 0); "N%" of whole, refused if 0 */
uint64_t cmd_arg_size(struct argp_state *state, int key, const char *arg,
		      uint64_t min, uint64_t whole);
/* an integer in [min, max] */
long long cmd_arg_long(struct argp_state *state, int key, const char *arg,
		       long long min, long long max);
/* a fraction ("0.85" or "85%") in [min, max]; the flags open either end */
enum {
	CMD_FRAC_ABOVE = 1 << 0, /* > min */
	CMD_FRAC_BELOW = 1 << 1, /* < max */
};
double cmd_arg_frac(struct argp_state *state, int key, const char *arg,
		    double min, double max, unsigned int flags);
/*
 * a duration above 0; with CMD_DUR_INFINITY, "infinity" is taken and
 * gives 0 (no end: a duration of 0 is refused, so 0 is free for it)
 */
enum {
	CMD_DUR_INFINITY = 1 << 0,
};
uint64_t cmd_arg_duration(struct argp_state *state, int key, const char *arg,
			  unsigned int flags);
/* a non-empty string */
const char *cmd_arg_str(struct argp_state *state, int key, const char *arg);
/*
 * --metrics FILE and --metrics-format (cmd/metrics.c): FILE "-" is
 * stdout, else FILE is replaced atomically by what write() makes.
 */
struct mp_output;
struct cmd_metrics {
	const char *path; /* NULL: no --metrics */
	enum mp_metrics_format format;
	struct mp_output *out; /* FILE opened, not yet written */
	bool format_set;       /* --metrics-format given */
};
typedef int cmd_metrics_fn(FILE *f, enum mp_metrics_format fmt,
			   const void *arg);
/* the argp row of --metrics-format, the same in every command */
#define CMD_METRICS_FORMAT_OPTION(key)                                              \
	{                                                                           \
		"metrics-format", key, "FORMAT", 0,                                 \
			"--metrics in the Prometheus text format (prometheus, the " \
			"default) or OpenMetrics (openmetrics)",                    \
			0                                                           \
	}
/* --metrics FILE (format false) or --metrics-format FORMAT (true) */
void cmd_arg_metrics(struct argp_state *state, int key, const char *arg,
		     bool format, struct cmd_metrics *cm);
bool cmd_metrics_stdout(const struct cmd_metrics *cm);
/* at ARGP_KEY_END: --metrics-format without --metrics is a usage error */
void cmd_metrics_check(struct argp_state *state, const struct cmd_metrics *cm);
/*
 * Open FILE before a run, so that one that cannot be written fails before
 * it, not after; 0 or -1 (told). cmd_metrics_abort() leaves it as it was.
 */
int cmd_metrics_open(struct cmd_metrics *cm);
void cmd_metrics_abort(struct cmd_metrics *cm);
/* write (FILE opened if it is not yet): 0, or -1 (told) */
int cmd_metrics_write(struct cmd_metrics *cm, cmd_metrics_fn *write,
		      const void *arg);
/* MemTotal in bytes (what -L 50% is half of), 0 if unknown */
uint64_t cmd_host_ram(void);

#endif
