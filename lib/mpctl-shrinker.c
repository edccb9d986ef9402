// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmpctl-shrinker: the user-space shrinker protocol (kernel v1 and v2,
 * mpctl register's emulation) and chunk offering; see mpctl-shrinker.h
 * and mpctl_shrinker(3). Depends on libc only: mpctl's common/ builds on
 * it, never the other way round.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "mpctl-shrinker.h"

/* a v1 shrinker's eventfd gets this added when its cgroup is removed */
#define V1_GONE (1ULL << 63)

#define CGROUP_SUPER_MAGIC  0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270

/* a page's first word while its chunk is offered: "mpclazy!" */
#define CHUNK_MARKER 0x6d70636c617a7921ULL

struct mpctl_shrinker {
	enum mpctl_shrinker_backend backend;
	uint64_t chunk;
	int efd;  /* request eventfd (v1, emulated), else -1 */
	int fd;	  /* mempressure.shrinker, or the emulator's pipe */
	int afd;  /* early-warning eventfd, or -1 */
	int epfd; /* epoll over the request fds, or -1 (v1: efd alone) */
	bool own_fds;
};

static const char *const backend_names[] = {
	[MPCTL_SHRINKER_KERNEL_V1] = "kernel-v1",
	[MPCTL_SHRINKER_KERNEL_V2] = "kernel-v2",
	[MPCTL_SHRINKER_EMULATED] = "emulated",
};

const char *mpctl_shrinker_backend_name(enum mpctl_shrinker_backend b)
{
	if (b < MPCTL_SHRINKER_KERNEL_V1 || b > MPCTL_SHRINKER_EMULATED)
		return "unknown";
	return backend_names[b];
}

/* -1 with errno = e, and the message in err if there is one */
__attribute__((format(printf, 3, 4))) static int
fail(struct mpctl_shrinker_err *err, int e, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->errnum = e;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	errno = e;
	return -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void mpctl_shrinker_close(struct mpctl_shrinker *sh)
{
	int e = errno;

	if (!sh)
		return;
	close_fd(&sh->epfd);
	if (sh->own_fds) {
		close_fd(&sh->afd);
		close_fd(&sh->efd);
		close_fd(&sh->fd);
	}
	free(sh);
	errno = e;
}

/*
 * The fd to poll: kernel v2's POLLPRI, or an early warning beside the
 * requests, are turned into POLLIN by an epoll instance.
 */
static int make_poll_fd(struct mpctl_shrinker *sh)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (sh->backend != MPCTL_SHRINKER_KERNEL_V2 && sh->afd < 0)
		return 0;
	sh->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sh->epfd < 0)
		return -1;
	if (sh->backend == MPCTL_SHRINKER_KERNEL_V2) {
		ev.events = EPOLLPRI;
		if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->fd, &ev))
			return -1;
		ev.events = EPOLLIN;
	} else if (epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->efd, &ev)) {
		return -1;
	}
	if (sh->afd >= 0 && epoll_ctl(sh->epfd, EPOLL_CTL_ADD, sh->afd, &ev))
		return -1;
	return 0;
}

int mpctl_shrinker_from_fds(enum mpctl_shrinker_backend backend, int efd,
			    int fd, int afd, uint64_t chunk_size, int own_fds,
			    struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err)
{
	bool v2 = backend == MPCTL_SHRINKER_KERNEL_V2;
	struct mpctl_shrinker *sh;
	int e;

	if (backend < MPCTL_SHRINKER_KERNEL_V1 ||
	    backend > MPCTL_SHRINKER_EMULATED || fd < 0 || (!v2 && efd < 0) ||
	    !chunk_size || chunk_size > INT64_MAX)
		return fail(err, EINVAL,
			    "invalid shrinker registration (efd %d, fd %d, %s)",
			    efd, fd, mpctl_shrinker_backend_name(backend));
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return fail(err, ENOMEM, "shrinker: out of memory");
	sh->backend = backend;
	sh->chunk = chunk_size;
	sh->efd = v2 ? -1 : efd;
	sh->fd = fd;
	sh->afd = afd;
	sh->epfd = -1;
	sh->own_fds = own_fds;
	if (make_poll_fd(sh)) {
		e = errno;
		sh->own_fds = false; /* the caller's on failure */
		mpctl_shrinker_close(sh);
		return fail(err, e, "shrinker: epoll: %s", strerror(e));
	}
	*out = sh;
	return 0;
}

/* ---- the kernel's registration ---- */

/* mountinfo's octal escapes (\040 for a space) undone in place */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				    (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* whether a comma-separated list holds word */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/*
 * The mount of the mempressure controller: a cgroup v1 hierarchy whose
 * super options name it, else the cgroup2 mount. Its mount point and its
 * root into mnt and root; v1 or v2 in *v.
 */
static int find_mount(char *mnt, char *root, size_t len, int *v)
{
	char line[4096], *f[12], *save, *sep;
	int n, found = 0;
	FILE *fp = fopen("/proc/self/mountinfo", "re");

	if (!fp)
		return -1;
	while (found != 1 && fgets(line, sizeof(line), fp)) {
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		f[0] = strtok_r(line, " ", &save);
		for (n = 1; n < 5 && f[n - 1]; n++)
			f[n] = strtok_r(NULL, " ", &save);
		f[5] = strtok_r(sep + 3, " \n", &save); /* fstype */
		f[6] = strtok_r(NULL, " \n", &save);	/* source */
		f[7] = strtok_r(NULL, " \n", &save);	/* super options */
		if (n < 5 || !f[4] || !f[7])
			continue;
		if (!strcmp(f[5], "cgroup") && has_word(f[7], "mempressure"))
			found = 1;
		else if (!strcmp(f[5], "cgroup2") && !found)
			found = 2;
		else
			continue;
		snprintf(root, len, "%s", f[3]);
		snprintf(mnt, len, "%s", f[4]);
		*v = found;
	}
	fclose(fp);
	if (!found)
		errno = ENOENT;
	return found ? 0 : -1;
}

/* the caller's cgroup directory on the mempressure controller's mount */
static int own_cgroup(char *dir, size_t len, struct mpctl_shrinker_err *err)
{
	char mnt[PATH_MAX], root[PATH_MAX], line[4096], *path = NULL, *p;
	size_t rl;
	FILE *fp;
	int v;

	if (find_mount(mnt, root, sizeof(mnt), &v))
		return fail(err, ENOENT,
			    "no mempressure cgroup hierarchy is mounted");
	unescape(mnt);
	unescape(root);
	fp = fopen("/proc/self/cgroup", "re");
	if (!fp)
		return fail(err, errno, "cannot read '/proc/self/cgroup': %s",
			    strerror(errno));
	while (!path && fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		p = strchr(line, ':');
		if (!p || !strchr(p + 1, ':'))
			continue;
		*p = '\0';
		*strchr(p + 1, ':') = '\0';
		if (v == 2 ? !strcmp(line, "0") && !p[1] :
			     has_word(p + 1, "mempressure"))
			path = p + 1 + strlen(p + 1) + 1;
	}
	fclose(fp);
	if (!path)
		return fail(err, ENOENT, "not in a mempressure cgroup");
	/* a mount of a subtree: its root is not part of the path below it */
	rl = strlen(root);
	if (strcmp(root, "/") && !strncmp(path, root, rl) &&
	    (path[rl] == '/' || !path[rl]))
		path += rl;
	if ((size_t)snprintf(dir, len, "%s%s", mnt,
			     strcmp(path, "/") ? path : "") >= len)
		return fail(err, ENAMETOOLONG, "cgroup path too long");
	return 0;
}

static int register_v1(struct mpctl_shrinker *sh, const char *cgroup,
		       struct mpctl_shrinker_err *err)
{
	char path[PATH_MAX + 32], cmd[96];
	int cfd, n, e;

	sh->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sh->efd < 0)
		return fail(err, errno, "eventfd: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/cgroup.event_control", cgroup);
	cfd = open(path, O_WRONLY | O_CLOEXEC);
	if (cfd < 0)
		return fail(err, errno, "cannot open '%s': %s", path,
			    strerror(errno));
	/* the documented string, without a trailing NUL */
	n = snprintf(cmd, sizeof(cmd), "%d %d %" PRIu64, sh->efd, sh->fd,
		     sh->chunk);
	e = write(cfd, cmd, n) == n ? 0 : errno ? errno : EIO;
	close(cfd);
	if (e)
		return fail(err, e, "cannot register shrinker '%s' on '%s': %s",
			    cmd, path, strerror(e));
	return 0;
}

static int register_v2(struct mpctl_shrinker *sh, const char *path,
		       struct mpctl_shrinker_err *err)
{
	char cmd[32];
	int n = snprintf(cmd, sizeof(cmd), "%" PRIu64, sh->chunk), e;

	e = write(sh->fd, cmd, n) == n ? 0 : errno ? errno : EIO;
	if (e)
		return fail(err, e, "cannot register chunk size %s on '%s': %s",
			    cmd, path, strerror(e));
	return 0;
}

static int register_at(const char *cgroup, uint64_t chunk_size,
		       struct mpctl_shrinker **out,
		       struct mpctl_shrinker_err *err)
{
	char path[PATH_MAX + 32];
	struct mpctl_shrinker *sh;
	struct statfs fs;
	int e;

	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return fail(err, ENOMEM, "shrinker: out of memory");
	sh->efd = sh->afd = sh->epfd = -1;
	sh->chunk = chunk_size;
	sh->own_fds = true;
	snprintf(path, sizeof(path), "%s/mempressure.shrinker", cgroup);
	sh->fd = open(path, O_RDWR | O_CLOEXEC);
	if (sh->fd < 0) {
		e = errno;
		goto err;
	}
	if (fstatfs(sh->fd, &fs)) {
		e = errno;
		goto err;
	}
	if (fs.f_type == CGROUP2_SUPER_MAGIC) {
		sh->backend = MPCTL_SHRINKER_KERNEL_V2;
		fcntl(sh->fd, F_SETFL, O_NONBLOCK);
		if (register_v2(sh, path, err))
			goto err_msg;
	} else if (fs.f_type == CGROUP_SUPER_MAGIC) {
		sh->backend = MPCTL_SHRINKER_KERNEL_V1;
		if (register_v1(sh, cgroup, err))
			goto err_msg;
	} else {
		e = EINVAL;
		goto err;
	}
	if (make_poll_fd(sh)) {
		e = errno;
		goto err;
	}
	*out = sh;
	return 0;
err:
	fail(err, e, "cannot open '%s': %s", path, strerror(e));
err_msg:
	e = errno;
	mpctl_shrinker_close(sh);
	errno = e;
	return -1;
}

int mpctl_shrinker_register(const char *cgroup, uint64_t chunk_size,
			    struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err)
{
	char *own;
	int ret, e;

	if (!chunk_size || chunk_size > INT64_MAX)
		return fail(err, EINVAL, "invalid chunk size %" PRIu64,
			    chunk_size);
	if (cgroup)
		return register_at(cgroup, chunk_size, out, err);
	own = malloc(PATH_MAX);
	if (!own)
		return fail(err, ENOMEM, "shrinker: out of memory");
	ret = own_cgroup(own, PATH_MAX, err);
	if (!ret)
		ret = register_at(own, chunk_size, out, err);
	e = errno;
	free(own);
	errno = e;
	return ret;
}

/* ---- the registration handed down by mpctl register ---- */

/* strict: digits with an optional '-', nothing else, within [min, max] */
static int parse_ll(const char *s, long long min, long long max, long long *val)
{
	const char *p = s;
	long long v;

	if (*p == '-')
		p++;
	if (!*p)
		return -1;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	errno = 0;
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		return -1;
	*val = v;
	return 0;
}

/*
 * An inherited fd is what its variable says, or refused: never read or
 * write, nor set O_NONBLOCK on, a terminal, a file or a shared stdin.
 */
static bool fd_is_eventfd(int fd)
{
	char proc[64], link[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

static bool fd_is_shrinker(int fd, enum mpctl_shrinker_backend b)
{
	struct statfs fs;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat(fd, &st))
		return false;
	if (b == MPCTL_SHRINKER_EMULATED) /* the emulator's pipe */
		return S_ISFIFO(st.st_mode) && (fl & O_ACCMODE) != O_RDONLY;
	if (fstatfs(fd, &fs) || !S_ISREG(st.st_mode))
		return false;
	return fs.f_type == (b == MPCTL_SHRINKER_KERNEL_V2 ?
				     CGROUP2_SUPER_MAGIC :
				     CGROUP_SUPER_MAGIC);
}

static const char *const shrinker_file_names[] = {
	[MPCTL_SHRINKER_KERNEL_V1] = "a cgroup v1 mempressure.shrinker file",
	[MPCTL_SHRINKER_KERNEL_V2] = "a cgroup2 mempressure.shrinker file",
	[MPCTL_SHRINKER_EMULATED] = "the emulated shrinker's pipe",
};

#define ENV(x) "MPCTL_SHRINKER_" x

int mpctl_shrinker_from_env(struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err)
{
	const char *e_efd = getenv(ENV("EFD")), *e_fd = getenv(ENV("FD"));
	const char *e_chunk = getenv(ENV("CHUNK"));
	const char *e_backend = getenv(ENV("BACKEND"));
	const char *e_abi = getenv(ENV("ABI")), *e_afd = getenv(ENV("AFD"));
	enum mpctl_shrinker_backend b;
	long long efd = -1, fd, chunk, afd = -1;

	if (!e_fd || !e_chunk || !e_abi)
		return fail(err, ENOENT,
			    "no shrinker registration in the environment (" ENV(
				    "FD") ", " ENV("CHUNK") ", " ENV("ABI") ")");
	if (strcmp(e_abi, "v1") && strcmp(e_abi, "v2"))
		return fail(err, EINVAL, "invalid " ENV("ABI") " '%s'", e_abi);
	if (e_efd && parse_ll(e_efd, -1, INT_MAX, &efd))
		return fail(err, EINVAL, "invalid " ENV("EFD") " '%s'", e_efd);
	if (parse_ll(e_fd, 0, INT_MAX, &fd))
		return fail(err, EINVAL, "invalid " ENV("FD") " '%s'", e_fd);
	if (parse_ll(e_chunk, 1, INT64_MAX, &chunk))
		return fail(err, EINVAL, "invalid " ENV("CHUNK") " '%s'",
			    e_chunk);
	if (e_backend && strcmp(e_backend, "mempressure") &&
	    strcmp(e_backend, "memcg") && strcmp(e_backend, "psi"))
		return fail(err, EINVAL, "invalid " ENV("BACKEND") " '%s'",
			    e_backend);
	if (e_afd &&
	    (parse_ll(e_afd, 0, INT_MAX, &afd) || !fd_is_eventfd((int)afd)))
		return fail(err, EINVAL, "invalid " ENV("AFD") " '%s'", e_afd);
	if (!strcmp(e_abi, "v2"))
		b = MPCTL_SHRINKER_KERNEL_V2;
	else if (e_backend && !strcmp(e_backend, "mempressure"))
		b = MPCTL_SHRINKER_KERNEL_V1;
	else
		b = MPCTL_SHRINKER_EMULATED;
	if (b != MPCTL_SHRINKER_KERNEL_V2 &&
	    (!e_efd || !fd_is_eventfd((int)efd)))
		return fail(err, EINVAL,
			    "invalid " ENV("EFD") " '%s': not an eventfd",
			    e_efd ? e_efd : "");
	if (!fd_is_shrinker((int)fd, b))
		return fail(err, EINVAL, "invalid " ENV("FD") " '%s': not %s",
			    e_fd, shrinker_file_names[b]);
	if (mpctl_shrinker_from_fds(b, (int)efd, (int)fd, (int)afd,
				    (uint64_t)chunk, 0, out, err))
		return -1;
	/* requests are never waited for by blocking in read() */
	if (b != MPCTL_SHRINKER_KERNEL_V2)
		fcntl((int)efd, F_SETFL, fcntl((int)efd, F_GETFL) | O_NONBLOCK);
	if (afd >= 0)
		fcntl((int)afd, F_SETFL, fcntl((int)afd, F_GETFL) | O_NONBLOCK);
	return 0;
}

int mpctl_shrinker_open(uint64_t chunk_size, struct mpctl_shrinker **out,
			struct mpctl_shrinker_err *err)
{
	if (!getenv(ENV("FD")))
		return mpctl_shrinker_register(NULL, chunk_size, out, err);
	if (mpctl_shrinker_from_env(out, err))
		return -1;
	if ((*out)->chunk == chunk_size)
		return 0;
	mpctl_shrinker_close(*out);
	return fail(err, EINVAL,
		    "the inherited shrinker's chunk size is not %" PRIu64,
		    chunk_size);
}

/* ---- the request path: no allocation, no lock ---- */

int mpctl_shrinker_fd(const struct mpctl_shrinker *sh)
{
	return sh->epfd >= 0 ? sh->epfd : sh->efd;
}

/* the asker's own request: 1, 0 (none) or -1 */
static int read_request(struct mpctl_shrinker *sh, uint64_t *chunks)
{
	struct epoll_event ev;
	char buf[32];
	ssize_t n;

	if (sh->backend == MPCTL_SHRINKER_KERNEL_V2) {
		/* take the POLLPRI edge, then the count ("<n>\n") */
		epoll_wait(sh->epfd, &ev, 1, 0);
		n = pread(sh->fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		buf[n] = '\0';
		*chunks = strtoull(buf, NULL, 10);
		return *chunks ? 1 : 0;
	}
	n = read(sh->efd, chunks, sizeof(*chunks));
	if (n == sizeof(*chunks) && sh->backend == MPCTL_SHRINKER_KERNEL_V1 &&
	    *chunks >= V1_GONE) {
		errno = ENODEV;
		return -1;
	}
	if (n == sizeof(*chunks))
		return *chunks ? 1 : 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

int mpctl_shrinker_read(struct mpctl_shrinker *sh, uint64_t *chunks)
{
	uint64_t k = 0, a = 0;
	int ret = read_request(sh, &k);

	if (ret < 0)
		return -1;
	if (!ret)
		k = 0;
	if (sh->afd >= 0 && read(sh->afd, &a, sizeof(a)) == sizeof(a) && a) {
		/* the early warning asked: lower the kernel's counter as a
		 * request of its own would have */
		if (mpctl_shrinker_add(sh, -(int64_t)a))
			return -1;
	} else {
		a = 0;
	}
	*chunks = k + a;
	return *chunks ? 1 : 0;
}

int mpctl_shrinker_add(struct mpctl_shrinker *sh, int64_t chunks)
{
	char buf[48];
	ssize_t n;
	int len;

	if (!chunks)
		return 0;
	/* "+n"/"-n" (v2), "<efd> +n" (v1), lines for the emulator's pipe */
	if (sh->backend == MPCTL_SHRINKER_KERNEL_V2)
		len = snprintf(buf, sizeof(buf), "%+" PRId64, chunks);
	else
		len = snprintf(buf, sizeof(buf), "%d %+" PRId64 "%s", sh->efd,
			       chunks,
			       sh->backend == MPCTL_SHRINKER_EMULATED ? "\n" :
									"");
	do
		n = write(sh->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n == len)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

enum mpctl_shrinker_backend
mpctl_shrinker_backend(const struct mpctl_shrinker *sh)
{
	return sh->backend;
}

uint64_t mpctl_shrinker_chunk_size(const struct mpctl_shrinker *sh)
{
	return sh->chunk;
}

void mpctl_shrinker_fds(const struct mpctl_shrinker *sh, int *efd, int *fd)
{
	*efd = sh->efd;
	*fd = sh->fd;
}

/* ---- offering chunks ---- */

static int check_chunk(const void *mem, size_t size, size_t *page)
{
	*page = (size_t)sysconf(_SC_PAGESIZE);
	if (!mem || !size || (uintptr_t)mem % *page || size % *page) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int mpctl_chunk_offer(void *mem, size_t size)
{
	size_t page, off;

	if (check_chunk(mem, size, &page))
		return -1;
	/* written first: MADV_FREE applies to what is there */
	for (off = 0; off < size; off += page)
		__atomic_store_n((uint64_t *)((char *)mem + off), CHUNK_MARKER,
				 __ATOMIC_RELAXED);
	return madvise(mem, size, MADV_FREE);
}

int mpctl_chunk_lost(const void *mem, size_t size)
{
	size_t page, off;

	if (check_chunk(mem, size, &page))
		return -1;
	for (off = 0; off < size; off += page)
		if (!__atomic_load_n((const uint64_t *)((const char *)mem + off),
				     __ATOMIC_RELAXED))
			return 1;
	return 0;
}

int mpctl_chunk_take(void *mem, size_t size)
{
	size_t page, off;
	uint64_t want;
	int lost = 0;

	if (check_chunk(mem, size, &page))
		return -1;
	for (off = 0; off < size; off += page) {
		uint64_t *m = (uint64_t *)((char *)mem + off);

		/*
		 * A read-modify-write: on a page still there it dirties the
		 * page, which reclaim then keeps; on a dropped one it reads
		 * zero, and the store after it makes the page an ordinary one
		 */
		want = CHUNK_MARKER;
		if (!__atomic_compare_exchange_n(m, &want, CHUNK_MARKER, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED)) {
			lost = 1;
			__atomic_store_n(m, CHUNK_MARKER, __ATOMIC_RELAXED);
		}
	}
	return lost;
}
