// SPDX-License-Identifier: GPL-2.0
/*
 * Starting, stopping and waiting for a child, see mp_spawn.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mp_clock.h"
#include "mp_spawn.h"

extern char **environ;

/* The name messages give it, shortened: a command can be 100 KB long */
static const char *shown(struct mp_child *c)
{
	const char *name = c->name ? c->name : c->file;
	size_t max = sizeof(c->shown) - 4;

	if (strlen(name) <= max)
		return name;
	snprintf(c->shown, sizeof(c->shown), "%.*s...", (int)max, name);
	return c->shown;
}

#define NAME(c) shown(c)

/* the steps of the child, as reported to the parent */
enum step {
	STEP_PGROUP = 1,
	STEP_PARENT,
	STEP_STDIO,
	STEP_JOIN,
	STEP_KEEP,
	STEP_SIGNALS,
	STEP_EXEC,
};

struct report {
	int step;
	int errnum;
	int index; /* the cgroup, for STEP_JOIN */
};

void mp_child_init(struct mp_child *c, char *const *argv)
{
	memset(c, 0, sizeof(*c));
	c->argv = argv;
	c->file = argv[0];
	c->pid = -1;
	c->pidfd = -1;
}

int mp_child_join(struct mp_child *c, const char *dir, struct mp_err *err)
{
	char path[PATH_MAX];
	int fd;

	if (!*dir)
		return 0; /* the host's root: stay where we are */
	if (c->njoin == MP_CHILD_MAX_JOIN)
		return mp_errf(err, 126, E2BIG,
			       "cannot run '%s': cannot join cgroup '%s'",
			       NAME(c), dir);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return mp_errf(err, 126, errno,
			       "cannot run '%s': cannot join cgroup '%s'",
			       NAME(c), dir);
	c->join_fd[c->njoin] = fd;
	c->join_dir[c->njoin++] = dir;
	return 0;
}

int mp_child_keep(struct mp_child *c, int fd, struct mp_err *err)
{
	int i;

	if (fd < 0)
		return 0;
	for (i = 0; i < c->nkeep; i++)
		if (c->keep[i] == fd)
			return 0;
	if (c->nkeep == MP_CHILD_MAX_KEEP)
		return mp_errf(err, MP_EXIT_FAILURE, E2BIG,
			       "cannot pass fd %d to '%s'", fd, NAME(c));
	c->keep[c->nkeep++] = fd;
	return 0;
}

/* "NAME=" of var is set in add */
static bool env_set_by(const char *var, const char *const *add)
{
	const char *eq = strchr(var, '=');
	size_t n = eq ? (size_t)(eq - var) + 1 : strlen(var);

	for (; add && *add; add++)
		if (!strncmp(*add, var, n))
			return true;
	return false;
}

int mp_child_env(struct mp_child *c, const char *drop, const char *const *add,
		 struct mp_err *err)
{
	size_t n = 0, k = 0, i;
	char **envp;

	while (environ && environ[n])
		n++;
	for (i = 0; add && add[i]; i++)
		;
	envp = calloc(n + i + 1, sizeof(*envp));
	if (!envp)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cannot run '%s'",
			       NAME(c));
	for (i = 0; i < n; i++)
		if ((!drop || strncmp(environ[i], drop, strlen(drop))) &&
		    !env_set_by(environ[i], add))
			envp[k++] = environ[i];
	for (i = 0; add && add[i]; i++)
		envp[k++] = (char *)add[i];
	free(c->env_own);
	c->env_own = envp;
	c->envp = envp;
	return 0;
}

int mp_path_search(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;
	struct stat st;
	int found = ENOENT;
	size_t len;

	if (strchr(name, '/')) {
		if (snprintf(buf, size, "%s", name) >= (int)size) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	if (!*name) {
		errno = ENOENT;
		return -1;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		len = (size_t)(end - p);
		/* an empty entry is the current directory, as for execvp */
		if (snprintf(buf, size, "%.*s%s%s", (int)len, p, len ? "/" : "",
			     name) < (int)size &&
		    !stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK))
				return 0;
			found = EACCES;
		}
		if (!*end)
			break;
	}
	errno = found;
	return -1;
}

/* The child. Only async-signal-safe calls; never returns. */
static void __attribute__((noreturn))
child(const struct mp_child *c, pid_t parent, int out, int errfd, int rep)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct report r = { 0 };
	sigset_t none;
	size_t i;

	if (c->pgroup && setpgid(0, 0)) {
		r.step = STEP_PGROUP;
		goto fail;
	}
	if (c->pdeathsig) {
		prctl(PR_SET_PDEATHSIG, c->pdeathsig);
		/* the parent died before prctl(): nobody to stop us */
		if (getppid() != parent) {
			r.step = STEP_PARENT;
			goto fail;
		}
	}
	if ((out >= 0 && dup2(out, STDOUT_FILENO) < 0) ||
	    (errfd >= 0 && dup2(errfd, STDERR_FILENO) < 0)) {
		r.step = STEP_STDIO;
		goto fail;
	}
	for (i = 0; i < (size_t)c->njoin; i++) {
		/* "0" is the writer itself, on v1 and v2 */
		if (write(c->join_fd[i], "0", 1) != 1) {
			r.step = STEP_JOIN;
			r.index = (int)i;
			goto fail;
		}
	}
	for (i = 0; i < (size_t)c->nkeep; i++) {
		if (fcntl(c->keep[i], F_SETFD, 0)) {
			r.step = STEP_KEEP;
			r.index = (int)i;
			goto fail;
		}
	}
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &dfl, NULL);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, c->sigmask ? c->sigmask : &none, NULL)) {
		r.step = STEP_SIGNALS;
		goto fail;
	}
	execve(c->path, c->argv, c->envp ? c->envp : environ);
	r.step = STEP_EXEC;
fail:
	r.errnum = errno;
	if (write(rep, &r, sizeof(r)) < 0)
		_exit(126);
	_exit(r.step == STEP_EXEC && r.errnum == ENOENT ? 127 : 126);
}

/* The message for a child's report. */
static int report_err(struct mp_child *c, const struct report *r,
		      struct mp_err *err)
{
	static const char *const what[] = {
		[STEP_PGROUP] = "setpgid",
		[STEP_PARENT] = "the parent exited",
		[STEP_STDIO] = "dup2",
		[STEP_KEEP] = "fcntl",
		[STEP_SIGNALS] = "sigprocmask",
	};
	int status = r->step == STEP_EXEC && r->errnum == ENOENT ? 127 : 126;

	if (r->step == STEP_JOIN && r->index >= 0 && r->index < c->njoin)
		return mp_errf(err, status, r->errnum,
			       "cannot run '%s': cannot join cgroup '%s'",
			       NAME(c), c->join_dir[r->index]);
	if (r->step == STEP_EXEC)
		return mp_errf(err, status, r->errnum, "cannot run '%s'",
			       NAME(c));
	return mp_errf(err, status, r->step == STEP_PARENT ? 0 : r->errnum,
		       "cannot run '%s': %s", NAME(c),
		       r->step > 0 && r->step < STEP_EXEC && what[r->step] ?
			       what[r->step] :
			       "unknown step");
}

/* The fd a stdio setting gives the child, -1 to inherit ours. */
static int stdio_fd(int *set, int pipe_end[2], struct mp_err *err,
		    const char *file)
{
	int fd;

	pipe_end[0] = pipe_end[1] = -1;
	if (*set == MP_CHILD_PIPE) {
		if (pipe2(pipe_end, O_CLOEXEC))
			return mp_errf(err, MP_EXIT_FAILURE, errno,
				       "cannot run '%s': pipe", file);
		return pipe_end[1];
	}
	if (*set == MP_CHILD_NULL) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return mp_errf(err, MP_EXIT_FAILURE, errno,
				       "cannot open '/dev/null'");
		pipe_end[1] = fd; /* closed after the fork */
		return fd;
	}
	return *set > 0 ? *set : -2;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int mp_child_start(struct mp_child *c, struct mp_err *err)
{
	int rep[2] = { -1, -1 }, op[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int out = -2, errfd = -2, ret = -1, status;
	struct report r;
	pid_t parent = getpid();
	ssize_t n;

	if (mp_path_search(c->file, c->path, sizeof(c->path))) {
		mp_errf(err, errno == ENOENT ? 127 : 126, errno,
			"cannot run '%s'", NAME(c));
		return -1;
	}
	out = stdio_fd(&c->out, op, err, NAME(c));
	if (out == -1)
		goto out;
	errfd = stdio_fd(&c->err, ep, err, NAME(c));
	if (errfd == -1)
		goto out;
	if (pipe2(rep, O_CLOEXEC)) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "cannot run '%s': pipe",
			NAME(c));
		goto out;
	}
	/* nothing buffered twice, nothing out of order with the child's */
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "cannot run '%s': fork",
			NAME(c));
		goto out;
	}
	if (!c->pid)
		child(c, parent, out < 0 ? -1 : out, errfd < 0 ? -1 : errfd,
		      rep[1]);
	if (c->pgroup)
		setpgid(c->pid, c->pid); /* no race with a signal */
	close_fd(&rep[1]);
	do
		n = read(rep[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(r)) {
		/* it failed before exec: it exits now, reap it */
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		c->pid = -1;
		report_err(c, &r, err);
		goto out;
	}
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	if (c->out == MP_CHILD_PIPE) {
		c->out = op[0];
		op[0] = -1;
	}
	if (c->err == MP_CHILD_PIPE) {
		c->err = ep[0];
		ep[0] = -1;
	}
	ret = 0;
out:
	close_fd(&rep[0]);
	close_fd(&rep[1]);
	close_fd(&op[0]);
	close_fd(&op[1]);
	close_fd(&ep[0]);
	close_fd(&ep[1]);
	return ret;
}

int mp_child_reap(struct mp_child *c)
{
	pid_t r;

	if (c->exited)
		return 1;
	if (c->pid <= 0) {
		errno = ECHILD;
		return -1;
	}
	do
		r = waitpid(c->pid, &c->status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	c->exited = r == c->pid;
	return c->exited;
}

int mp_child_wait(struct mp_child *c, uint64_t deadline)
{
	struct timespec tick = { 0, 10000000 };
	struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };
	uint64_t now;
	int ms;

	for (;;) {
		switch (mp_child_reap(c)) {
		case 1:
			return 0;
		case -1:
			return -1;
		}
		now = mp_now_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			return 1;
		if (c->pidfd < 0) {
			/* no pidfd: look again every 10 ms */
			nanosleep(&tick, NULL);
			continue;
		}
		ms = !deadline ? -1 : mp_poll_ms(deadline, now);
		if (ms > 1000)
			ms = 1000;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
			return -1;
	}
}

void mp_child_signal(const struct mp_child *c, int sig)
{
	if (c->pid <= 0 || c->exited)
		return;
	kill(c->pgroup ? -c->pid : c->pid, sig);
}

int mp_child_stop(struct mp_child *c, int sig, uint64_t grace_ns)
{
	if (mp_child_reap(c))
		return 0; /* exited, or no child */
	if (sig)
		mp_child_signal(c, sig);
	if (!mp_child_wait(c, mp_now_ns(CLOCK_MONOTONIC) + grace_ns))
		return 0;
	/* the group, and the child if it left the group */
	mp_child_signal(c, SIGKILL);
	kill(c->pid, SIGKILL);
	mp_child_wait(c, 0);
	return 1;
}

void mp_child_release(struct mp_child *c)
{
	int i;

	for (i = 0; i < c->njoin; i++)
		close_fd(&c->join_fd[i]);
	c->njoin = 0;
	if (c->pid > 0) /* else never opened */
		close_fd(&c->pidfd);
	free(c->env_own);
	c->env_own = NULL;
}

int mp_child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return MP_EXIT_FAILURE;
}

char **mp_argv_dup(char *const *argv)
{
	size_t n, len = 0, i;
	char **v, *p;

	for (n = 0; argv[n]; n++)
		len += strlen(argv[n]) + 1;
	v = malloc((n + 1) * sizeof(*v) + len);
	if (!v)
		return NULL;
	p = (char *)(v + n + 1);
	for (i = 0; i < n; i++) {
		v[i] = p;
		p = stpcpy(p, argv[i]) + 1;
	}
	v[n] = NULL;
	return v;
}
