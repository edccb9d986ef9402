/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way mpctl starts a child process, shaped like git's run-command.
 *
 * The rule: no fork() without exec, and only async-signal-safe calls
 * between them, because the process that forks may run threads (the
 * emulated shrinker's). Everything the child needs is prepared before the
 * fork: the program found in $PATH, the environment, the cgroup.procs
 * files opened, the pipes created. The child then only calls setpgid,
 * prctl, dup2, fcntl, write, sigaction, sigprocmask and execve; a step
 * that fails is reported as {step, errno} through a close-on-exec pipe,
 * and the parent, which waits on that pipe, writes the message.
 *
 *	struct mp_child c;
 *
 *	mp_child_init(&c, argv);
 *	c.pgroup = true;
 *	if (mp_child_join(&c, cg->dir, err) || mp_child_start(&c, err))
 *		goto fail;		(mp_child_release() in both cases)
 *	...
 *	mp_child_wait(&c, deadline);	or mp_child_stop(&c, SIGTERM, grace)
 *	mp_child_release(&c);
 */
#ifndef MP_SPAWN_H
#define MP_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_err.h"

#define MP_CHILD_MAX_JOIN 3
#define MP_CHILD_MAX_KEEP 8

/* c.out and c.err: 0 inherits ours, else an fd to give the child */
enum {
	MP_CHILD_PIPE = -1, /* a pipe; its read end replaces the value */
	MP_CHILD_NULL = -2, /* /dev/null */
};

struct mp_child {
	/* what to run: set by the caller before mp_child_start() */
	const char *file; /* program; without '/': searched in $PATH */
	const char *name; /* what messages call it, NULL: file */
	char *const *argv;
	char *const *envp;	 /* NULL: ours (environ) */
	int out, err;		 /* stdout, stderr: 0, MP_CHILD_* or an fd */
	bool pgroup;		 /* in a process group of its own */
	int pdeathsig;		 /* sent to it when we die, 0 for none */
	const sigset_t *sigmask; /* its signal mask, NULL: empty */

	/* filled by mp_child_join(), mp_child_keep(), mp_child_env() */
	int join_fd[MP_CHILD_MAX_JOIN]; /* cgroup.procs, opened */
	const char *join_dir[MP_CHILD_MAX_JOIN];
	int njoin;
	int keep[MP_CHILD_MAX_KEEP]; /* fds inherited across exec */
	int nkeep;
	char **env_own; /* an envp built by mp_child_env() */

	/* the child: valid once mp_child_start() succeeded */
	pid_t pid;
	int pidfd; /* -1 on a kernel without pidfd_open */
	bool exited;
	int status;	 /* waitpid()'s, once exited */
	char path[4096]; /* the program found */
	char shown[128]; /* its name in messages, when shortened */
};

/* A description running argv[0] with our environment and stdio. */
void mp_child_init(struct mp_child *c, char *const *argv);

/*
 * Move the child into the cgroup at dir (a cgroupfs directory) before it
 * runs anything: its cgroup.procs is opened now, written in the child.
 * An empty dir (the host's root) is no move. Fails with status 126.
 */
int mp_child_join(struct mp_child *c, const char *dir, struct mp_err *err);

/* Let the child inherit fd (it stays close-on-exec here); -1 is ignored. */
int mp_child_keep(struct mp_child *c, int fd, struct mp_err *err);

/*
 * The child's environment: ours without the variables that start with
 * drop (NULL: none) or that add sets, then add ("NAME=value", NULL-ended).
 * The strings are not copied: they must outlive mp_child_start().
 */
int mp_child_env(struct mp_child *c, const char *drop, const char *const *add,
		 struct mp_err *err);

/*
 * Start the child and wait until it has exec'd. On failure nothing runs
 * (a child that failed is reaped) and err says what: status 127 when the
 * program is not found, 126 when it cannot be run or a step before exec
 * failed (e.g. "cannot join cgroup '...': ..."), 1 for fork() itself.
 */
int mp_child_start(struct mp_child *c, struct mp_err *err);

/* Reap it if it has exited, without blocking: 1 (c->status set), 0, -1. */
int mp_child_reap(struct mp_child *c);

/*
 * Wait until it exits or the CLOCK_MONOTONIC deadline (ns, 0: none)
 * passes: 0 exited, 1 still running at the deadline, -1 error (errno).
 */
int mp_child_wait(struct mp_child *c, uint64_t deadline);

/* Send sig to it, or to its process group when it has one. */
void mp_child_signal(const struct mp_child *c, int sig);

/*
 * Stop it: sig (0: none) to it or its group, up to grace_ns for it to
 * exit, then SIGKILL to the group and it; always reaped. Returns 0 if it
 * exited in the grace time (or before), 1 if it had to be killed.
 */
int mp_child_stop(struct mp_child *c, int sig, uint64_t grace_ns);

/* Close what the description holds (pipes' read ends stay the caller's). */
void mp_child_release(struct mp_child *c);

/* A wait status as a shell reports it: the exit code, or 128 + signal. */
int mp_child_exit_code(int status);

/*
 * Find a program as execvp() would, without running it: name with a '/'
 * is taken as is; else the first executable "dir/name" in $PATH
 * (default "/bin:/usr/bin"). Returns 0, or -1 with errno: ENOENT when
 * nothing was found, EACCES when only non-executable files were.
 */
int mp_path_search(const char *name, char *buf, size_t size);

/* A copy of a NULL-terminated argv in one allocation (free() it), or NULL. */
char **mp_argv_dup(char *const *argv);

#endif
