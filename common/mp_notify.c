// SPDX-License-Identifier: GPL-2.0
/*
 * sd_notify(3)'s wire protocol: a datagram of "VAR=value" lines sent to
 * $NOTIFY_SOCKET. A leading '@' names a socket in the abstract namespace
 * (the '@' becomes a NUL byte, and the address length counts only the
 * name). Only AF_UNIX is supported; systemd's "vsock:" addresses are not.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mp_notify.h"

static bool failed; /* a datagram was not delivered: said once */

int mp_notify(const char *state, struct mp_err *err)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	socklen_t salen;
	int fd, ret = -1;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"unsupported NOTIFY_SOCKET '%s': expected an absolute path or '@name'",
			path);
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	else
		len++; /* a path's terminating NUL */
	salen = offsetof(struct sockaddr_un, sun_path) + len;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		if (failed)
			return 0;
		failed = true;
		mp_errf(err, MP_EXIT_FAILURE, errno, "socket");
		return 1;
	}
	ret = 0;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen) < 0 &&
	    !failed) {
		/* the manager gone or restarting: told once, never fatal */
		failed = true;
		/* its first line: "READY=1", not the STATUS= after it */
		mp_errf(err, MP_EXIT_FAILURE, errno,
			"cannot notify '%s' of %.*s", path,
			(int)strcspn(state, "\n"), state);
		ret = 1;
	}
	close(fd);
	return ret;
}
