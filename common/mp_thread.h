/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's threads, started and ended one way.
 *
 * Rules for every thread of common/ and stress/:
 *  - it starts through mp_thread_start(), so it takes no asynchronous
 *    signal: those belong to the thread that waits for them (a signalfd,
 *    sigtimedwait()), whatever mask the caller happens to have;
 *  - whatever it reads is filled in before it starts (pthread_create()
 *    orders the two); afterwards it only reads what another thread
 *    changes through atomics or a lock;
 *  - it is joined: mp_thread_stop() for a thread that sleeps in poll()
 *    on a stop eventfd, pthread_join() for one that ends on a flag.
 */
#ifndef MP_THREAD_H
#define MP_THREAD_H

#include <pthread.h>

/*
 * pthread_create(thr, NULL, fn, arg) with every signal blocked in the new
 * thread except the synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS: a fault must still reach its handler). The caller's
 * mask is left as it was. 0, or an errno value as pthread_create().
 */
int mp_thread_start(pthread_t *thr, void *(*fn)(void *), void *arg);

/*
 * Stop a thread that polls stop_fd (an eventfd) for POLLIN and returns
 * when it is readable, and join it. Always joins: if the eventfd cannot
 * be written the thread is cancelled, then joined.
 */
void mp_thread_stop(pthread_t thr, int stop_fd);

#endif
