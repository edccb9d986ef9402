// SPDX-License-Identifier: GPL-2.0
/*
 * mpctl add: not implemented yet (see the project's open issues).
 */
#include "cmd.h"

int cmd_add(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cmd_error("not implemented yet");
	return MP_EXIT_UNAVAILABLE;
}
