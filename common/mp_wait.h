/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait of a long-running command: poll() on one file descriptor and a
 * signalfd for SIGINT, SIGTERM and SIGHUP, with an optional deadline and
 * no other timeout, so that an idle command never wakes up.
 */
#ifndef MP_WAIT_H
#define MP_WAIT_H

#include <stdint.h>

#include "mp_err.h"

enum mp_wait_result {
	MP_WAIT_ERROR = -1,
	MP_WAIT_TIMEOUT = 0, /* the deadline passed */
	MP_WAIT_READY = 1,   /* the fd has the events asked for */
	MP_WAIT_SIGNAL = 2,  /* SIGINT, SIGTERM or SIGHUP arrived */
};

struct mp_waiter {
	int sfd;
	uint64_t deadline; /* CLOCK_MONOTONIC ns, 0 for none */
};

/* Blocks the signals and opens the signalfd; timeout_ns 0 for none. */
int mp_waiter_init(struct mp_waiter *w, uint64_t timeout_ns,
		   struct mp_err *err);
/* Waits for events on fd (POLLIN, POLLPRI); errno set on MP_WAIT_ERROR. */
enum mp_wait_result mp_wait(struct mp_waiter *w, int fd, short events);
void mp_waiter_close(struct mp_waiter *w);

#endif
