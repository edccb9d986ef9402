// SPDX-License-Identifier: GPL-2.0
/*
 * --metrics FILE and --metrics-format, shared by the commands that export
 * metrics: the document comes from common/mp_metrics.c; here it goes to
 * stdout ("-") or replaces FILE atomically (mp_output), and errors are
 * told.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "mp_output.h"

void cmd_arg_metrics(struct argp_state *state, int key, const char *arg,
		     bool format, struct cmd_metrics *cm)
{
	if (!format)
		cm->path = cmd_arg_str(state, key, arg);
	else if (mp_metrics_format_parse(arg, &cm->format))
		cmd_argerr(state,
			   "invalid --metrics-format '%s': expected "
			   "prometheus or openmetrics",
			   arg);
	else
		cm->format_set = true;
}

void cmd_metrics_check(struct argp_state *state, const struct cmd_metrics *cm)
{
	if (cm->format_set && !cm->path)
		cmd_argerr(state, "--metrics-format needs --metrics FILE");
}

bool cmd_metrics_stdout(const struct cmd_metrics *cm)
{
	return cm->path && !strcmp(cm->path, "-");
}

int cmd_metrics_open(struct cmd_metrics *cm)
{
	struct mp_err err;

	if (!cm->path || cmd_metrics_stdout(cm) || cm->out)
		return 0;
	/* three paths of PATH_MAX: on the heap */
	cm->out = malloc(sizeof(*cm->out));
	if (!cm->out) {
		mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "cannot write '%s'",
			cm->path);
		cmd_fail(&err);
		return -1;
	}
	if (mp_output_open(cm->out, cm->path, &err)) {
		free(cm->out);
		cm->out = NULL;
		cmd_fail(&err);
		return -1;
	}
	return 0;
}

void cmd_metrics_abort(struct cmd_metrics *cm)
{
	if (!cm->out)
		return;
	mp_output_abort(cm->out);
	free(cm->out);
	cm->out = NULL;
}

int cmd_metrics_write(struct cmd_metrics *cm, cmd_metrics_fn *write,
		      const void *arg)
{
	struct mp_err err;
	FILE *f;

	if (!cm->path)
		return 0;
	if (cmd_metrics_stdout(cm)) {
		if (write(stdout, cm->format, arg) || fflush(stdout)) {
			cmd_write_error(errno);
			return -1;
		}
		return 0;
	}
	if (cmd_metrics_open(cm))
		return -1;
	f = mp_output_stream(cm->out, &err);
	if (!f)
		goto fail;
	if (write(f, cm->format, arg)) {
		mp_errf(&err, MP_EXIT_FAILURE, errno ? errno : EIO,
			"cannot write '%s'", cm->path);
		goto fail;
	}
	if (mp_output_commit(cm->out, &err)) {
		free(cm->out);
		cm->out = NULL;
		cmd_fail(&err);
		return -1;
	}
	free(cm->out);
	cm->out = NULL;
	return 0;
fail:
	cmd_metrics_abort(cm);
	cmd_fail(&err);
	return -1;
}
