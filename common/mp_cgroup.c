// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mp_cgroup.h"

static char sysroot[PATH_MAX];
static bool sysroot_set;

int mp_set_sysroot(const char *root)
{
	if (root && strlen(root) > MP_SYSROOT_MAX) {
		/* every path below it must fit a PATH_MAX buffer */
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(sysroot, sizeof(sysroot), "%s", root ? root : "");
	/* "/" and "" both mean the real root */
	if (!strcmp(sysroot, "/"))
		sysroot[0] = '\0';
	sysroot_set = true;
	return 0;
}

const char *mp_sysroot(void)
{
	/* too long: the real root, but main() refuses it first */
	if (!sysroot_set && mp_set_sysroot(getenv("MPCTL_SYSROOT")))
		mp_set_sysroot(NULL);
	return sysroot;
}

char *mp_syspath(char *buf, size_t len, const char *abs)
{
	int n = snprintf(buf, len, "%s%s", mp_sysroot(), abs);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return buf;
}

int mp_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	size_t off = 0;
	int fd;

	/* a path mp_syspath() could not make */
	if (!path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (off + 1 < len) {
		n = read(fd, buf + off, len - 1 - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = '\0';
	close(fd);
	return 0;
}

/* Map a path in the hierarchy to the directory under the mount. */
static int hier_to_dir(const struct mp_hier *h, const char *hpath, char *dir,
		       size_t len)
{
	size_t rl = strlen(h->root);
	int n;

	if (strcmp(h->root, "/")) {
		if (strncmp(hpath, h->root, rl) ||
		    (hpath[rl] != '/' && hpath[rl] != '\0')) {
			errno = ENOENT;
			return -1;
		}
		hpath += rl;
	}
	while (*hpath == '/')
		hpath++;
	n = snprintf(dir, len, "%s%s%s", h->mnt, *hpath ? "/" : "", hpath);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static void strip_trailing_slashes(char *p)
{
	size_t l = strlen(p);

	while (l > 1 && p[l - 1] == '/')
		p[--l] = '\0';
}

/*
 * Collapse repeated slashes ("//x" is "/x") and drop trailing ones; -1 when
 * a component is "." or "..", which a cgroup path never needs and which
 * would lead out of the hierarchy or name it twice.
 */
static int normalize_dir(char *p)
{
	char *r = p, *w = p;

	while (*r) {
		if (*r == '/' && r[1] == '/') {
			r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	strip_trailing_slashes(p);
	for (r = p; (r = strchr(r, '/')); r++)
		if (r[1] == '.' && (r[2] == '/' || !r[2] ||
				    (r[2] == '.' && (r[3] == '/' || !r[3]))))
			return -1;
	return 0;
}

int mp_cgroup_resolve(const struct mp_hier *h, const char *user,
		      struct mp_cgroup *cg, struct mp_err *err)
{
	char hpath[PATH_MAX], tmp[PATH_MAX], probe[PATH_MAX + 16];
	size_t ml = strlen(h->mnt);
	const char *shown = user;
	struct stat st;

	memset(cg, 0, sizeof(*cg));
	cg->hier = h;
	if (!user) {
		if (mp_self_cgroup(h, hpath, sizeof(hpath)))
			snprintf(hpath, sizeof(hpath), "/");
		shown = hpath;
		if (hier_to_dir(h, hpath, cg->dir, sizeof(cg->dir))) {
			/* our cgroup is outside this mount: use its root */
			snprintf(cg->dir, sizeof(cg->dir), "%s", h->mnt);
		}
	} else if (!*user) {
		return mp_errf(err, MP_EXIT_USAGE, 0, "empty cgroup path");
	} else if (user[0] == '/' && (!strncmp(user, h->mnt, ml) &&
				      (user[ml] == '/' || user[ml] == '\0'))) {
		snprintf(cg->dir, sizeof(cg->dir), "%s", user);
	} else if (user[0] == '/' && strcmp(user, "/") && !stat(user, &st)) {
		/* an existing file system path outside the hierarchy */
		return mp_errf(err, MP_EXIT_FAILURE, 0,
			       "not a cgroup of the %s hierarchy '%s'",
			       h->version == MP_CG_V2 ? "cgroup2" :
							h->controller,
			       user);
	} else {
		/* hierarchy path: "/a/b" as in /proc/self/cgroup, or "a/b" */
		if (user[0] == '/') {
			if (hier_to_dir(h, user, cg->dir, sizeof(cg->dir)))
				return mp_errf(err, MP_EXIT_FAILURE, errno,
					       "cannot resolve cgroup '%s'",
					       user);
		} else if (snprintf(cg->dir, sizeof(cg->dir), "%s/%s", h->mnt,
				    user) >= (int)sizeof(cg->dir)) {
			return mp_errf(err, MP_EXIT_USAGE, ENAMETOOLONG,
				       "cannot resolve cgroup '%s'", user);
		}
	}
	if (normalize_dir(cg->dir))
		return mp_errf(err, MP_EXIT_USAGE, 0,
			       "cgroup path must not contain '.' or '..' '%s'",
			       shown);
	if (stat(cg->dir, &st))
		return mp_errf(err, errno == ENOENT ? MP_EXIT_FAILURE : -1,
			       errno, "cannot open cgroup '%s'", shown);
	snprintf(probe, sizeof(probe), "%s/cgroup.procs", cg->dir);
	if (!S_ISDIR(st.st_mode) || access(probe, F_OK))
		return mp_errf(err, MP_EXIT_FAILURE, 0, "not a cgroup '%s'",
			       shown);
	/* the path in the hierarchy, for display */
	snprintf(tmp, sizeof(tmp), "%s%s%s",
		 strcmp(h->root, "/") ? h->root : "", "", cg->dir + ml);
	snprintf(cg->path, sizeof(cg->path), "%s", *tmp ? tmp : "/");
	return 0;
}

static int cg_file(const struct mp_cgroup *cg, const char *file, char *buf,
		   size_t len)
{
	int n = snprintf(buf, len, "%s/%s", cg->dir, file);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int mp_cg_read(const struct mp_cgroup *cg, const char *file, char *buf,
	       size_t len)
{
	char path[PATH_MAX];

	if (cg_file(cg, file, path, sizeof(path)))
		return -1;
	return mp_read_file(path, buf, len);
}

int mp_cg_read_u64(const struct mp_cgroup *cg, const char *file, uint64_t *val)
{
	char buf[64], *end;

	if (mp_cg_read(cg, file, buf, sizeof(buf)))
		return -1;
	if (!strncmp(buf, "max", 3)) {
		*val = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (end == buf || errno) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int mp_cg_write(const struct mp_cgroup *cg, const char *file, const char *str)
{
	char path[PATH_MAX];
	size_t len = strlen(str);
	ssize_t n;
	int fd;

	if (cg_file(cg, file, path, sizeof(path)))
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, str, len);
	if (n < 0 || (size_t)n != len) {
		int e = n < 0 ? errno : EIO;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

bool mp_cg_has_file(const struct mp_cgroup *cg, const char *file)
{
	char path[PATH_MAX];

	return !cg_file(cg, file, path, sizeof(path)) && !access(path, F_OK);
}

bool mp_cg_exists(const struct mp_cgroup *cg)
{
	return mp_cg_has_file(cg, "cgroup.procs");
}

int mp_cg_create(const struct mp_cgroup *parent, const char *name,
		 struct mp_cgroup *child)
{
	int n;

	if (!*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, "..")) {
		errno = EINVAL;
		return -1;
	}
	*child = *parent;
	n = snprintf(child->dir, sizeof(child->dir), "%s/%s", parent->dir,
		     name);
	if (n < 0 || (size_t)n >= sizeof(child->dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(child->path, sizeof(child->path), "%s%s%s", parent->path,
		 strcmp(parent->path, "/") ? "/" : "", name);
	return mkdir(child->dir, 0755);
}

int mp_cg_remove(const struct mp_cgroup *cg, int timeout_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int waited = 0;

	for (;;) {
		if (!rmdir(cg->dir) || errno == ENOENT)
			return 0;
		if (errno != EBUSY || waited >= timeout_ms)
			return -1;
		nanosleep(&ts, NULL);
		waited += 10;
	}
}

bool mp_mount_opt(const char *opts, const char *opt)
{
	size_t len = strlen(opt);
	const char *p = opts;

	while ((p = strstr(p, opt))) {
		if ((p == opts || p[-1] == ',') &&
		    (p[len] == ',' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

int mp_self_cgroup(const struct mp_hier *h, char *out, size_t len)
{
	char path[PATH_MAX], line[4096];
	int ret = -1;
	FILE *f;

	if (!mp_syspath(path, sizeof(path), "/proc/self/cgroup"))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	errno = ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl, *cgpath, *nl;

		ctrl = strchr(line, ':');
		if (!ctrl)
			continue;
		*ctrl++ = '\0';
		cgpath = strchr(ctrl, ':');
		if (!cgpath)
			continue;
		*cgpath++ = '\0';
		nl = strchr(cgpath, '\n');
		if (nl)
			*nl = '\0';
		if (h->version == MP_CG_V2 ? strcmp(line, "0") || *ctrl :
					     !mp_mount_opt(ctrl, h->controller))
			continue;
		snprintf(out, len, "%s", cgpath);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
