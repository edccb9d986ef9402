// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl: memory pressure cooperation for Linux.
 *
 * A multi-call binary: "mpctl <command> ..." or, through a link,
 * "mpctl-<command> ...". Exact command names only.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <zlib.h>

#include "cmd.h"
#include "mp_cgroup.h"
#include "mp_notify.h"
#include "mp_parse.h"
#include "mp_wait.h"
#include "run.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_struct commands[] = {
	{ "listen", cmd_listen, "print memory pressure events" },
	{ "register", cmd_register,
	  "run a command with a user-space shrinker" },
	{ "add", cmd_add, "account reclaimable chunks, wait for requests" },
	{ "stress", cmd_stress, "allocate under a limit with the shrinker" },
	{ "report", cmd_report, "run the standard suite, compare reports" },
	{ "info", cmd_info,
	  "what mpctl finds here, what each command would use" },
	/* hidden (no help): the process mpctl stress starts for its engine */
	{ STRESS_ENGINE_APPLET, cmd_stress_engine, NULL },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *cmd_name = "mpctl";

/* as util-linux and stress-ng: the version, and what it was built with */
static void print_version(FILE *f, struct argp_state *state)
{
	(void)state;
	fprintf(f, "mpctl %s\n", MPCTL_VERSION);
	fprintf(f,
		"libraries: jansson %s (built with %s), zlib %s (built with %s)\n",
		jansson_version_str(), JANSSON_VERSION, zlibVersion(),
		ZLIB_VERSION);
	fprintf(f, "built: %s, %s\n",
#ifdef __OPTIMIZE__
		"optimized",
#else
		"not optimized",
#endif
#if defined(__SANITIZE_ADDRESS__)
		"AddressSanitizer"
#else
		"no sanitizer"
#endif
	);
}

void (*argp_program_version_hook)(FILE *, struct argp_state *) = print_version;

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cmd_notify(const char *state)
{
	struct mp_err err;
	int ret = mp_notify(state, &err);

	if (ret < 0)
		return cmd_fail(&err);
	if (ret > 0)
		cmd_error("warning: %s", err.msg);
	return 0;
}

static bool write_error_reported;

void cmd_write_error(int errnum)
{
	if (!write_error_reported && errnum != EPIPE)
		cmd_error("write error: %s", strerror(errnum ? errnum : EIO));
	write_error_reported = true;
}

int cmd_wait(struct mp_waiter *w, int fd)
{
	switch (mp_wait(w, fd, POLLIN)) {
	case MP_WAIT_READY:
		return 1;
	case MP_WAIT_ERROR:
		cmd_error("poll: %s", strerror(errno));
		return -1;
	default: /* the deadline, SIGINT, SIGTERM, SIGHUP */
		return 0;
	}
}

int cmd_fail(const struct mp_err *err)
{
	cmd_error("%s", err->msg);
	return err->status ? err->status : MP_EXIT_FAILURE;
}

/*
 * A usage error: "mpctl <verb>: <msg>" and util-linux's hint, the one
 * style of every usage error of mpctl (argp's own hint is kept out, see
 * cmd_argp_parse()).
 */
static void usage_msg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", cmd_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void usage_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", cmd_name);
}

int cmd_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_msg(fmt, ap);
	va_end(ap);
	usage_hint();
	return MP_EXIT_USAGE;
}

void cmd_argerr(const struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	(void)state;
	va_start(ap, fmt);
	usage_msg(fmt, ap);
	va_end(ap);
	usage_hint();
	exit(MP_EXIT_USAGE);
}

/* the command's parser, behind help_parser() (one parse at a time) */
static argp_parser_t cmd_parser;

/*
 * -h is --help for every command, as at the top level. argp's error
 * stream is taken away: its errors (an unknown option, a missing
 * argument, after getopt's line) then make argp_parse() return instead of
 * printing argp's own hint, and cmd_argp_parse() gives ours.
 */
static error_t help_parser(int key, char *arg, struct argp_state *state)
{
	if (key == ARGP_KEY_INIT)
		state->err_stream = NULL;
	if (key == 'h') {
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP); /* exits */
		return 0;
	}
	return cmd_parser(key, arg, state);
}

int cmd_argp_parse(const struct argp *argp, int argc, char **argv, void *input)
{
	struct argp_option *opts;
	struct argp a = *argp;
	size_t n = 0;
	int ret;

	/* argp names the program after program_invocation_short_name */
	program_invocation_short_name = (char *)cmd_name;
	program_invocation_name = (char *)cmd_name;
	argp_err_exit_status = MP_EXIT_USAGE;
	if (argc > 0)
		argv[0] = (char *)cmd_name;
	/* the command's options and a hidden -h (argp's own is -?) */
	while (argp->options[n].name || argp->options[n].key ||
	       argp->options[n].doc)
		n++;
	opts = calloc(n + 2, sizeof(*opts));
	if (!opts)
		return argp_parse(argp, argc, argv, 0, NULL, input);
	memcpy(opts, argp->options, n * sizeof(*opts));
	opts[n].key = 'h';
	opts[n].flags = OPTION_HIDDEN;
	a.options = opts;
	cmd_parser = argp->parser;
	a.parser = help_parser;
	ret = argp_parse(&a, argc, argv, 0, NULL, input);
	free(opts);
	if (ret) {
		usage_hint();
		exit(MP_EXIT_USAGE);
	}
	return ret;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: mpctl <command> [options]\n"
		   "       mpctl-<command> [options]\n\n"
		   "Memory pressure events and user-space shrinkers.\n\n"
		   "Commands:\n");
	for (i = 0; i < NR_COMMANDS; i++)
		if (commands[i].help)
			fprintf(f, "  %-10s %s\n", commands[i].name,
				commands[i].help);
	fprintf(f, "\nOptions:\n"
		   "  -h, -?, --help give this help list\n"
		   "      --usage    give a short usage message\n"
		   "  -V, --version  print program version\n\n"
		   "Run 'mpctl <command> --help' for a command's options.\n"
		   "See mpctl(1).\n");
}

/*
 * At exit, as util-linux's close_stdout_atexit(): a failed write to stdout
 * is a failure, also after argp's --help and --usage, which call exit().
 */
static void close_stdout(void)
{
	errno = 0;
	if (fflush(stdout) || ferror(stdout) || fclose(stdout)) {
		cmd_write_error(errno);
		_exit(MP_EXIT_FAILURE);
	}
}

static int run(const struct cmd_struct *c, int argc, char **argv)
{
	static char name[64];

	const char *root = getenv("MPCTL_SYSROOT");

	snprintf(name, sizeof(name), "mpctl %s", c->name);
	cmd_name = name;
	optind = 0; /* reset getopt state, as busybox does per applet */
	if (root && mp_set_sysroot(root)) {
		cmd_error("invalid MPCTL_SYSROOT: longer than %d bytes",
			  MP_SYSROOT_MAX);
		return MP_EXIT_USAGE;
	}
	return c->fn(argc, argv);
}

static const struct cmd_struct *lookup(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * Started with fd 0, 1 or 2 closed ("cmd >&-"), the first file opened would
 * take its number and receive what is meant for stdout or stderr (a
 * document written twice into an --output file): they are opened on
 * /dev/null first, as setuid programs get them from the C library. Writing
 * nothing to a closed stdout is then no error either.
 */
static void sanitize_fds(void)
{
	int fd, nfd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		nfd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (nfd >= 0 && nfd != fd) {
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

/* an option of mpctl itself, before any command */
static bool top_option(const char *arg)
{
	static const char *const opts[] = { "--help",  "-h",	    "-?",
					    "--usage", "--version", "-V" };
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(arg, opts[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;
	const char *base;

	sanitize_fds();
	atexit(close_stdout);
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	/* mpctl-<command>; any other name (mpctl-copy, a renamed copy) is
	 * mpctl itself, as busybox falls back to argv[1] */
	if (!strncmp(base, "mpctl-", 6) && (c = lookup(base + 6)) && c->help)
		return run(c, argc, argv);
	/* mpctl-lsten -t 1s: a mistyped link, not mpctl given '-t' */
	if (!strncmp(base, "mpctl-", 6) && base[6] &&
	    (argc < 2 || (argv[1][0] == '-' && !top_option(argv[1]))))
		return cmd_usage_error("unknown command '%s'", base + 6);
	if (argc < 2) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	/* "help COMMAND" is "COMMAND --help", as git and perf have it */
	if (!strcmp(argv[1], "help") && argc > 2 && lookup(argv[2]) &&
	    lookup(argv[2])->help) {
		char *hargv[] = { argv[2], "--help", NULL };

		return run(lookup(argv[2]), 2, hargv);
	}
	if (!strcmp(argv[1], "help") && argc > 2)
		return cmd_usage_error("unknown command '%s'", argv[2]);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "-?") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return MP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--usage")) {
		printf("Usage: mpctl [-h|--help] [-V|--version] [--usage] "
		       "<command> [options]\n");
		return MP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		print_version(stdout, NULL);
		return MP_EXIT_OK;
	}
	c = lookup(argv[1]);
	if (!c) {
		return cmd_usage_error(argv[1][0] == '-' ?
					       "unknown option '%s'" :
					       "unknown command '%s'",
				       argv[1]);
	}
	return run(c, argc - 1, argv + 1);
}
