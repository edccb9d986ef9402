// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "mp_clock.h"
#include "mp_wait.h"

int mp_waiter_init(struct mp_waiter *w, uint64_t timeout_ns, struct mp_err *err)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	w->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w->sfd < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "signalfd");
	w->deadline = timeout_ns ? mp_now_ns(CLOCK_MONOTONIC) + timeout_ns : 0;
	return 0;
}

enum mp_wait_result mp_wait(struct mp_waiter *w, int fd, short events)
{
	struct pollfd pfd[2] = {
		{ .fd = w->sfd, .events = POLLIN },
		{ .fd = fd, .events = events },
	};

	for (;;) {
		int timeout = -1;

		if (w->deadline) {
			uint64_t now = mp_now_ns(CLOCK_MONOTONIC);

			if (now >= w->deadline)
				return MP_WAIT_TIMEOUT;
			timeout = mp_poll_ms(w->deadline, now);
		}
		if (poll(pfd, 2, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return MP_WAIT_ERROR;
		}
		if (pfd[0].revents)
			return MP_WAIT_SIGNAL;
		if (pfd[1].revents)
			return MP_WAIT_READY;
	}
}

void mp_waiter_close(struct mp_waiter *w)
{
	if (w->sfd >= 0)
		close(w->sfd);
	w->sfd = -1;
}
