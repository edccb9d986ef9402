// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>

#include "mp_sched.h"

int mp_realtime(struct mp_err *err)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return mp_errf(err, -1, errno, "cannot set SCHED_FIFO");
	/* page faults in the handler would wait for the reclaim it serves */
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT))
		return mp_errf(err, -1, errno, "cannot lock memory");
	return 0;
}
