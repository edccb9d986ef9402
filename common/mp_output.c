// SPDX-License-Identifier: GPL-2.0
/*
 * Output files that are never destroyed: see mp_output.h.
 *
 * The temporary file is created when the output is opened, before a
 * command's run, so that an unwritable directory fails at once and not
 * after a 30 s run, in the target's directory, as rename() needs the same
 * file system. It is an O_TMPFILE, which has no name and so cannot be
 * left behind by a run killed with SIGKILL; it is linked as a hidden
 * ".NAME.XXXXXX" only at the commit, and renamed over the target at once.
 * Where the file system has no O_TMPFILE, it is that hidden file from the
 * start.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mp_output.h"

static int make_tmp(struct mp_output *out, const struct stat *old,
		    struct mp_err *err)
{
	char dir[sizeof(out->target)], base[sizeof(out->target)];
	const char *d;
	mode_t mask;
	int fd;

	snprintf(dir, sizeof(dir), "%s", out->target);
	snprintf(base, sizeof(base), "%s", out->target);
	d = dirname(dir); /* may be a constant "." */
	if ((size_t)snprintf(out->tmpl, sizeof(out->tmpl), "%s/.%s.XXXXXX", d,
			     basename(base)) >= sizeof(out->tmpl))
		return mp_errf(err, MP_EXIT_FAILURE, ENAMETOOLONG,
			       "cannot create '%s'", out->path);
	fd = open(d, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		out->anon = true;
	} else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
		strcpy(out->tmp, out->tmpl);
		fd = mkostemp(out->tmp, O_CLOEXEC);
	}
	if (fd < 0) {
		out->tmp[0] = '\0';
		return mp_errf(err, -1, errno, "cannot create '%s'", out->path);
	}
	/* the mode of the file replaced, or what open(2) would give */
	if (old) {
		/* not root: the file becomes ours */
		(void)!fchown(fd, old->st_uid, old->st_gid);
		(void)!fchmod(fd, old->st_mode & 07777);
	} else {
		mask = umask(0);
		umask(mask);
		(void)!fchmod(fd, 0666 & ~mask);
	}
	out->f = fdopen(fd, "w");
	if (!out->f) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "cannot create '%s'",
			out->path);
		close(fd);
		unlink(out->tmp);
		out->tmp[0] = '\0';
		return -1;
	}
	return 0;
}

/*
 * The kernel's protected_symlinks rule, applied whatever the sysctl says:
 * a link in a sticky or world-writable directory is followed only when we
 * own it or the directory's owner does. Root would otherwise replace a
 * file another user's link points at, where the user could not.
 */
static int link_trusted(const char *path, const struct stat *lnk)
{
	char dir[PATH_MAX];
	struct stat d;

	if (lnk->st_uid == geteuid())
		return 1;
	snprintf(dir, sizeof(dir), "%s", path);
	if (stat(dirname(dir), &d))
		return 0;
	if (!(d.st_mode & (S_ISVTX | S_IWOTH)))
		return 1;
	return lnk->st_uid == d.st_uid;
}

/* 0 when the directory a dangling link points into can take a file */
static int dangling_dir_ok(const char *path)
{
	char link[PATH_MAX], at[PATH_MAX], *dir;
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	int ret;

	if (n < 0)
		return -1;
	link[n] = '\0';
	snprintf(at, sizeof(at), "%s", path);
	if (asprintf(&dir, "%s%s%s", link[0] == '/' ? "" : dirname(at),
		     link[0] == '/' ? "" : "/", link) < 0)
		return -1;
	ret = access(dirname(dir), W_OK);
	free(dir);
	return ret;
}

int mp_output_open(struct mp_output *out, const char *path, struct mp_err *err)
{
	struct stat st;
	char *real;

	memset(out, 0, sizeof(*out));
	out->path = path;
	if (!path || !*path)
		return mp_errf(err, MP_EXIT_USAGE, 0, "empty output file name");
	if (strlen(path) >= sizeof(out->target))
		return mp_errf(err, MP_EXIT_FAILURE, ENAMETOOLONG,
			       "cannot create '%s'", path);
	strcpy(out->target, path);
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		if (!link_trusted(path, &st))
			return mp_errf(
				err, MP_EXIT_NOPERM, 0,
				"refusing to follow '%s': a symlink of another user in a sticky or world-writable directory",
				path);
		/* replace what the link points at, keep the link */
		real = realpath(path, NULL);
		if (!real) {
			/* dangling: create its target as a shell would, in
			 * a directory checked now rather than after the run */
			if (dangling_dir_ok(path))
				return mp_errf(err, -1, errno,
					       "cannot create '%s'", path);
			out->direct = out->create = true;
			return 0;
		}
		if (strlen(real) >= sizeof(out->target)) {
			free(real);
			return mp_errf(err, MP_EXIT_FAILURE, ENAMETOOLONG,
				       "cannot create '%s'", path);
		}
		strcpy(out->target, real);
		free(real);
	}
	if (stat(out->target, &st)) {
		if (errno != ENOENT)
			return mp_errf(err, -1, errno, "cannot open '%s'",
				       path);
		return make_tmp(out, NULL, err);
	}
	if (S_ISDIR(st.st_mode))
		return mp_errf(err, MP_EXIT_FAILURE, EISDIR,
			       "cannot write '%s'", path);
	if (S_ISREG(st.st_mode))
		return make_tmp(out, &st, err);
	/* a device node, a fifo, a socket: written into, never replaced */
	if (access(out->target, W_OK))
		return mp_errf(err, -1, errno, "cannot open '%s'", path);
	out->direct = true;
	return 0;
}

/*
 * Open a fifo as a shell would, waiting for a reader, but not past a
 * SIGINT, SIGTERM or SIGHUP: the commands block those for their signalfd,
 * so a blocking open(2) would ignore them for good.
 */
static int open_fifo(const char *path)
{
	const struct timespec tick = { 0, 20 * 1000 * 1000 };
	sigset_t pend;
	int fd;

	for (;;) {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			return fd;
		}
		if (errno != ENXIO)
			return -1;
		if (!sigpending(&pend) && (sigismember(&pend, SIGINT) ||
					   sigismember(&pend, SIGTERM) ||
					   sigismember(&pend, SIGHUP))) {
			errno = EINTR;
			return -1;
		}
		nanosleep(&tick, NULL);
	}
}

FILE *mp_output_stream(struct mp_output *out, struct mp_err *err)
{
	struct stat st;
	int fd;

	if (out->f)
		return out->f;
	if (!out->direct) {
		mp_errf(err, MP_EXIT_FAILURE, EBADF, "cannot write '%s'",
			out->path);
		return NULL;
	}
	if (!out->create && !stat(out->target, &st) && S_ISFIFO(st.st_mode))
		fd = open_fifo(out->target);
	else
		fd = open(out->target,
			  O_WRONLY | O_CLOEXEC | O_NOCTTY |
				  (out->create ? O_CREAT | O_TRUNC : 0),
			  0666);
	if (fd < 0) {
		if (errno == EINTR)
			mp_errf(err, MP_EXIT_FAILURE, 0,
				"no reader on '%s': interrupted by a signal",
				out->path);
		else
			mp_errf(err, -1, errno, "cannot open '%s'", out->path);
		return NULL;
	}
	out->f = fdopen(fd, "w");
	if (!out->f) {
		mp_errf(err, MP_EXIT_FAILURE, errno, "cannot open '%s'",
			out->path);
		close(fd);
	}
	return out->f;
}

/* Give the O_TMPFILE a hidden name beside the target, for the rename. */
static int link_anon(struct mp_output *out, int fd)
{
	char proc[64], *x;
	unsigned int seed;
	struct timespec ts;
	int i, j;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (unsigned int)ts.tv_nsec ^ ((unsigned int)getpid() << 16);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (i = 0; i < 100; i++) {
		strcpy(out->tmp, out->tmpl);
		x = out->tmp + strlen(out->tmp) - 6;
		for (j = 0; j < 6; j++) {
			seed = seed * 1103515245 + 12345;
			x[j] = "abcdefghijklmnopqrstuvwxyz0123456789"[(seed >>
								       16) %
								      36];
		}
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, out->tmp,
			    AT_SYMLINK_FOLLOW))
			return 0;
		/* no /proc: the same without it (needs privilege) */
		if (errno == ENOENT &&
		    !linkat(fd, "", AT_FDCWD, out->tmp, AT_EMPTY_PATH))
			return 0;
		if (errno != EEXIST)
			break;
	}
	out->tmp[0] = '\0';
	return -1;
}

int mp_output_commit(struct mp_output *out, struct mp_err *err)
{
	FILE *f = out->f;
	int ret = 0;

	out->f = NULL;
	if (!f) {
		mp_output_abort(out);
		return mp_errf(err, MP_EXIT_FAILURE, EBADF, "cannot write '%s'",
			       out->path);
	}
	errno = 0;
	if (fflush(f) || ferror(f)) {
		ret = mp_errf(err, MP_EXIT_FAILURE, errno ? errno : EIO,
			      "cannot write '%s'", out->path);
		fclose(f);
	} else if (out->anon && link_anon(out, fileno(f))) {
		ret = mp_errf(err, -1, errno, "cannot create '%s'", out->path);
		fclose(f);
	} else if (fclose(f)) {
		ret = mp_errf(err, MP_EXIT_FAILURE, errno, "cannot write '%s'",
			      out->path);
	}
	if (ret || out->direct) {
		mp_output_abort(out);
		return ret;
	}
	if (rename(out->tmp, out->target)) {
		ret = mp_errf(err, -1, errno, "cannot replace '%s'", out->path);
		mp_output_abort(out);
		return ret;
	}
	out->tmp[0] = '\0';
	return 0;
}

void mp_output_abort(struct mp_output *out)
{
	if (out->f) {
		fclose(out->f);
		out->f = NULL;
	}
	if (out->tmp[0]) {
		unlink(out->tmp);
		out->tmp[0] = '\0';
	}
}

/* path's directory resolved, and its last component: the file it names */
static char *canonical(const char *path)
{
	char dir[PATH_MAX], base[PATH_MAX], *rd, *r = NULL;
	struct stat st;

	if (!lstat(path, &st) && S_ISLNK(st.st_mode) &&
	    (rd = realpath(path, NULL)))
		return rd;
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	rd = realpath(dirname(dir), NULL);
	if (rd && asprintf(&r, "%s/%s", rd, basename(base)) < 0)
		r = NULL;
	free(rd);
	return r;
}

bool mp_output_same(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	bool same;

	/* a device node or a fifo takes each document in turn, as > would */
	if (!stat(a, &sa) && !S_ISREG(sa.st_mode))
		return false;
	if (!strcmp(a, b))
		return true;
	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ca = canonical(a);
	cb = canonical(b);
	same = ca && cb && !strcmp(ca, cb);
	free(ca);
	free(cb);
	return same;
}
