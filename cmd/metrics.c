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

enum mp_metrics_format cmd_arg_metrics_format(struct argp_state *state,
					      const char *arg)
{
	enum mp_metrics_format fmt;

	if (mp_metrics_format_parse(arg, &fmt))
		cmd_argerr(state,
			   "invalid --metrics-format '%s': expected "
			   "prometheus or openmetrics",
			   arg);
	return fmt;
}

bool cmd_metrics_stdout(const struct cmd_metrics *cm)
{
	return cm->path && !strcmp(cm->path, "-");
}

int cmd_metrics_write(const struct cmd_metrics *cm, cmd_metrics_fn *write,
		      const void *arg)
{
	struct mp_output *out = NULL;
	struct mp_err err;
	FILE *f;
	int ret = 0;

	if (!cm->path)
		return 0;
	if (cmd_metrics_stdout(cm)) {
		if (write(stdout, cm->format, arg) || fflush(stdout)) {
			cmd_write_error(errno);
			return -1;
		}
		return 0;
	}
	/* three paths of PATH_MAX: on the heap */
	out = malloc(sizeof(*out));
	if (!out) {
		mp_errf(&err, MP_EXIT_FAILURE, ENOMEM, "cannot write '%s'",
			cm->path);
		goto fail;
	}
	if (mp_output_open(out, cm->path, &err))
		goto fail;
	f = mp_output_stream(out, &err);
	if (!f) {
		mp_output_abort(out);
		goto fail;
	}
	if (write(f, cm->format, arg)) {
		mp_errf(&err, MP_EXIT_FAILURE, errno ? errno : EIO,
			"cannot write '%s'", cm->path);
		mp_output_abort(out);
		goto fail;
	}
	if (mp_output_commit(out, &err))
		goto fail;
	goto out;
fail:
	cmd_fail(&err);
	ret = -1;
out:
	free(out);
	return ret;
}
