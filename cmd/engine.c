// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl __stress-engine --shm FD [--NAME]: the process of a workload of
 * 'mpctl stress' (stress/workload.h): its program or, with --NAME, the
 * workload of that name beside it (--cotenant)
 *
 * Hidden (no help, not for hands): stress_run() starts it through
 * /proc/self/exe with the shared memory it made, whose head holds every
 * setting (struct stress_params); the engine's numbers and errors go back
 * through the same memory. This file only takes the fd and says what was
 * wrong with it; stress/ prints nothing.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "cmd.h"
#include "mp_err.h"
#include "mp_parse.h"
#include "workload.h"

int cmd_stress_engine(int argc, char **argv)
{
	const struct stress_workload *beside = NULL;
	struct mp_err err = { 0 };
	long long fd;
	int ret;

	if (argc == 4 && !strncmp(argv[3], "--", 2))
		beside = stress_workload_beside(argv[3] + 2);
	if ((argc != 3 && !beside) || strcmp(argv[1], "--shm") ||
	    mp_parse_long(argv[2], 0, INT_MAX, &fd)) {
		mp_errf(&err, MP_EXIT_USAGE, 0,
			"the engine of 'mpctl stress', not a command");
		return cmd_fail(&err);
	}
	ret = stress_workload_main((int)fd, beside, &err);
	/* any later failure is in the shared memory, for the parent */
	if (ret == MP_EXIT_USAGE)
		return cmd_fail(&err);
	return ret;
}
