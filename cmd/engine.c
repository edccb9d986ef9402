// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl __stress-engine --shm FD [--cotenant]: the engine process of
 * 'mpctl stress', or with --cotenant its co-tenant (stress/cotenant.h)
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
#include "cotenant.h"
#include "mp_err.h"
#include "mp_parse.h"
#include "run.h"

int cmd_stress_engine(int argc, char **argv)
{
	struct mp_err err = { 0 };
	bool cotenant = argc == 4 && !strcmp(argv[3], STRESS_COTENANT_FLAG);
	long long fd;
	int ret;

	if ((argc != 3 && !cotenant) || strcmp(argv[1], "--shm") ||
	    mp_parse_long(argv[2], 0, INT_MAX, &fd)) {
		mp_errf(&err, MP_EXIT_USAGE, 0,
			"the engine of 'mpctl stress', not a command");
		return cmd_fail(&err);
	}
	ret = cotenant ? stress_cotenant_main((int)fd, &err) :
			 stress_engine_main((int)fd, &err);
	/* any later failure is in the shared memory, for the parent */
	if (ret == MP_EXIT_USAGE)
		return cmd_fail(&err);
	return ret;
}
