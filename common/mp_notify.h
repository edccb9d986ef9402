/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The service manager's readiness protocol (sd_notify(3)) without
 * libsystemd: one datagram on the AF_UNIX socket named by $NOTIFY_SOCKET
 * (a path, or '@' for an abstract name). Never prints.
 */
#ifndef MP_NOTIFY_H
#define MP_NOTIFY_H

#include "mp_err.h"

/*
 * Send STATE (e.g. "READY=1") to $NOTIFY_SOCKET. 0 when sent or when the
 * variable is unset or empty (nobody listens); -1 with *err filled when the
 * variable is malformed (a usage error). A datagram that cannot be
 * delivered (the manager gone, the socket full) is never fatal: the first
 * such failure of the process returns 1 with *err filled, for one warning,
 * and later ones return 0.
 */
int mp_notify(const char *state, struct mp_err *err);

#endif
