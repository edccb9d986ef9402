// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "mp_thread.h"

int mp_thread_start(pthread_t *thr, void *(*fn)(void *), void *arg)
{
	static const int sync_sigs[] = {
		SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
	};
	sigset_t block, old;
	unsigned int i;
	int ret;

	/* the new thread inherits the mask in force at pthread_create() */
	sigfillset(&block);
	for (i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		sigdelset(&block, sync_sigs[i]);
	ret = pthread_sigmask(SIG_SETMASK, &block, &old);
	if (ret)
		return ret;
	ret = pthread_create(thr, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void mp_thread_stop(pthread_t thr, int stop_fd)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(stop_fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* only a bad fd fails here; never leave the thread running */
	if (n != sizeof(one))
		pthread_cancel(thr);
	pthread_join(thr, NULL);
}
