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
#include <libgen.h>
#include <signal.h>
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
		/* never given to another owner; a group of ours is kept */
		if (old->st_uid == geteuid())
			(void)!fchown(fd, (uid_t)-1, old->st_gid);
		(void)!fchmod(fd, old->st_mode & 0777);
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
static bool link_trusted(const char *dir, const struct stat *lnk)
{
	struct stat d;

	if (lnk->st_uid == geteuid())
		return true;
	if (stat(dir, &d))
		return false;
	if (!(d.st_mode & (S_ISVTX | S_IWOTH)))
		return true;
	return lnk->st_uid == d.st_uid;
}

/* The descriptor N when dir/name is /proc/self/fd/N (or our pid's), else -1 */
static int own_fd(const char *dir, const char *name)
{
	char self[64];
	char *end;
	long n;

	snprintf(self, sizeof(self), "/proc/%d/fd", (int)getpid());
	if (strcmp(dir, self) && strcmp(dir, "/proc/self/fd") &&
	    strcmp(dir, "/proc/thread-self/fd"))
		return -1;
	errno = 0;
	n = strtol(name, &end, 10);
	if (errno || *end || end == name || n < 0 || n > INT_MAX)
		return -1;
	return (int)n;
}

/* a directory of /proc's magic links: /proc/PID/fd, /proc/PID/task/TID/fd */
static bool proc_fd_dir(const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(dir, "/proc/", 6) && !strcmp(dir + n - 3, "/fd");
}

struct resolved {
	char path[PATH_MAX]; /* every link followed; the last may be missing */
	int fd;		     /* >= 0: our descriptor N, path unused */
	bool magic;	     /* path is another process's /proc/PID/fd/N */
};

/*
 * Follow path as open(2) would, one component and one link at a time, so
 * that every link of the way is checked (link_trusted), and a link to one
 * of our descriptors is seen as one. The last component may be missing
 * (the file to create); at a missing directory the walk stops with the
 * rest appended, for the caller's open to report. 0, or -1 with err set
 * (a link refused: MP_EXIT_NOPERM).
 */
static int resolve(const char *path, struct resolved *r, struct mp_err *err)
{
	char rest[PATH_MAX], link[PATH_MAX], tmp[PATH_MAX];
	char *p = r->path, *comp, *next, *cut;
	int links = 0, n;
	struct stat st;
	size_t plen;
	ssize_t ln;
	bool last;

	r->fd = -1;
	r->magic = false;
	if (strlen(path) >= sizeof(rest))
		goto toolong;
	strcpy(rest, path);
	p[0] = '\0';
	if (path[0] != '/') {
		if (!getcwd(p, sizeof(r->path)))
			return mp_errf(err, -1, errno, "cannot open '%s'",
				       path);
		if (!strcmp(p, "/"))
			p[0] = '\0';
	}
	for (;;) {
		comp = rest + strspn(rest, "/");
		if (!*comp)
			break;
		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		else
			next = comp + strlen(comp);
		last = !next[strspn(next, "/")];
		if (!strcmp(comp, "."))
			goto advance;
		if (!strcmp(comp, "..")) {
			cut = strrchr(p, '/');
			*(cut ? cut : p) = '\0';
			goto advance;
		}
		plen = strlen(p);
		if (plen + 1 + strlen(comp) + 1 + strlen(next) >=
		    sizeof(r->path))
			goto toolong;
		snprintf(p + plen, sizeof(r->path) - plen, "/%s", comp);
		if (lstat(p, &st)) {
			/* missing: what is left is for open(2) to judge */
			if (!last)
				snprintf(p + strlen(p),
					 sizeof(r->path) - strlen(p), "/%s",
					 next);
			return 0;
		}
		if (!S_ISLNK(st.st_mode))
			goto advance;
		p[plen] = '\0'; /* the link's directory */
		if (!link_trusted(plen ? p : "/", &st))
			return mp_errf(
				err, MP_EXIT_NOPERM, 0,
				"refusing to follow '%s': the symlink '%s/%s' is another user's, in a sticky or world-writable directory",
				path, p, comp);
		n = last ? own_fd(p, comp) : -1;
		if (n >= 0) {
			r->fd = n;
			return 0;
		}
		p[plen] = '/';
		if (last && proc_fd_dir(p)) {
			/* another process's descriptor: opened as it is */
			r->magic = true;
			return 0;
		}
		if (++links > 40)
			return mp_errf(err, MP_EXIT_FAILURE, ELOOP,
				       "cannot open '%s'", path);
		ln = readlink(p, link, sizeof(link) - 1);
		if (ln < 0)
			return mp_errf(err, -1, errno, "cannot open '%s'",
				       path);
		link[ln] = '\0';
		p[link[0] == '/' ? 0 : plen] = '\0';
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", link, next) >=
		    sizeof(tmp))
			goto toolong;
		strcpy(rest, tmp);
		continue;
advance:
		memmove(rest, next, strlen(next) + 1);
	}
	if (!p[0])
		strcpy(p, "/");
	return 0;
toolong:
	return mp_errf(err, MP_EXIT_FAILURE, ENAMETOOLONG, "cannot create '%s'",
		       path);
}

/*
 * The kernel's protected_regular rule: an existing file in a sticky or
 * world-writable directory that is neither ours nor the directory
 * owner's was planted there; it is not ours to replace.
 */
static bool file_trusted(const char *path, const struct stat *st)
{
	char dir[PATH_MAX];
	struct stat d;

	if (st->st_uid == geteuid())
		return true;
	snprintf(dir, sizeof(dir), "%s", path);
	if (stat(dirname(dir), &d))
		return false;
	if (!(d.st_mode & (S_ISVTX | S_IWOTH)))
		return true;
	return st->st_uid == d.st_uid;
}

/* Our descriptor fd as an output: open for writing, checked now. */
static int open_fd(struct mp_output *out, int fd, struct mp_err *err)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return mp_errf(err, MP_EXIT_FAILURE, errno, "cannot write '%s'",
			       out->path);
	if ((fl & O_ACCMODE) == O_RDONLY)
		return mp_errf(err, MP_EXIT_FAILURE, EBADF, "cannot write '%s'",
			       out->path);
	out->direct = out->isfd = true;
	out->fd = fd;
	return 0;
}

/*
 * Written into: opened now, so that a device without a driver (ENXIO)
 * fails before the run; only a fifo waits for its reader until the data.
 */
static int open_direct(struct mp_output *out, const struct stat *st,
		       struct mp_err *err)
{
	out->direct = true;
	if (S_ISFIFO(st->st_mode))
		return 0;
	return mp_output_stream(out, err) ? 0 : -1;
}

int mp_output_open(struct mp_output *out, const char *path, struct mp_err *err)
{
	struct resolved *r;
	struct stat st;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->path = path;
	if (!path || !*path)
		return mp_errf(err, MP_EXIT_USAGE, 0, "empty output file name");
	r = malloc(sizeof(*r));
	if (!r)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM,
			       "cannot create '%s'", path);
	if (resolve(path, r, err))
		goto out;
	if (r->fd >= 0) {
		ret = open_fd(out, r->fd, err);
		goto out;
	}
	if (strlen(r->path) >= sizeof(out->target)) {
		mp_errf(err, MP_EXIT_FAILURE, ENAMETOOLONG,
			"cannot create '%s'", path);
		goto out;
	}
	strcpy(out->target, r->path);
	if (r->magic || !stat(out->target, &st)) {
		ret = 0;
		if (!r->magic && S_ISDIR(st.st_mode))
			ret = mp_errf(err, MP_EXIT_FAILURE, EISDIR,
				      "cannot write '%s'", path);
		else if (!r->magic && S_ISREG(st.st_mode) &&
			 !file_trusted(out->target, &st))
			ret = mp_errf(
				err, MP_EXIT_NOPERM, 0,
				"refusing to replace '%s': a file of another user in a sticky or world-writable directory",
				path);
		else if (!r->magic && S_ISREG(st.st_mode))
			ret = make_tmp(out, &st, err);
		/* a device node, a fifo, a socket: written into */
		else if (access(out->target, W_OK))
			ret = mp_errf(err, -1, errno, "cannot open '%s'", path);
		else
			ret = open_direct(out, &st, err);
	} else if (errno != ENOENT) {
		mp_errf(err, -1, errno, "cannot open '%s'", path);
	} else {
		/* missing, or a dangling link's target: created */
		ret = make_tmp(out, NULL, err);
	}
out:
	free(r);
	return ret;
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
	if (out->isfd) {
		/* stdio's buffers first, for the order a reader sees */
		fflush(NULL);
		fd = fcntl(out->fd, F_DUPFD_CLOEXEC, 3);
	} else if (!stat(out->target, &st) && S_ISFIFO(st.st_mode)) {
		fd = open_fifo(out->target);
	} else {
		/* O_APPEND: another process's /proc/PID/fd/N keeps its data */
		fd = open(out->target,
			  O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	}
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

bool mp_output_same(const char *a, const char *b)
{
	struct resolved *ra, *rb;
	struct mp_err err;
	struct stat sa, sb;
	bool same = false;

	ra = malloc(sizeof(*ra));
	rb = malloc(sizeof(*rb));
	if (!ra || !rb || resolve(a, ra, &err) || resolve(b, rb, &err)) {
		same = !strcmp(a, b);
		goto out;
	}
	/* a descriptor, a device node or a fifo takes each document in
	 * turn, as > would */
	if (ra->fd >= 0 || rb->fd >= 0 || ra->magic || rb->magic)
		goto out;
	if (!stat(ra->path, &sa) && !S_ISREG(sa.st_mode))
		goto out;
	if (!stat(ra->path, &sa) && !stat(rb->path, &sb))
		same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	else
		same = !strcmp(ra->path, rb->path);
out:
	free(ra);
	free(rb);
	return same;
}
