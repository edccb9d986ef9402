/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scheduling for pressure handlers: a handler that the workload under
 * pressure can delay frees memory late, so Android's lmkd runs SCHED_FIFO
 * with its memory locked. mp_realtime() does the same for the caller.
 */
#ifndef MP_SCHED_H
#define MP_SCHED_H

#include "mp_err.h"

/* SCHED_FIFO priority 1 and mlockall(); 0, or -1 with err (77 on EPERM) */
int mp_realtime(struct mp_err *err);

#endif
