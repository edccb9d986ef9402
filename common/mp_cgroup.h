/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup discovery and access.
 *
 * Hierarchies are found by mp_target.h, never assumed. Every path
 * read from the system is prefixed with the sysroot (MPCTL_SYSROOT in the
 * environment or mp_set_sysroot()), so that the parsers can be tested
 * against recorded /proc and /sys trees.
 */
#ifndef MP_CGROUP_H
#define MP_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

enum mp_cg_version {
	MP_CG_V1 = 1,
	MP_CG_V2 = 2,
};

struct mp_hier {
	enum mp_cg_version version;
	char mnt[PATH_MAX];  /* mount point, sysroot included */
	char root[PATH_MAX]; /* root of the mount within the hierarchy */
	char opts[512];	     /* super options (v1 controllers) */
	char controller[32]; /* v1: the controller asked for */
};

struct mp_cgroup {
	const struct mp_hier *hier; /* mp_system()'s, never copied */
	char dir[PATH_MAX];	    /* cgroupfs directory, sysroot included */
	char path[PATH_MAX]; /* path in the hierarchy, "/" for its root */
};

/* the longest sysroot: paths below it stay well within PATH_MAX */
#define MP_SYSROOT_MAX 1024
/* 0, or -1 (ENAMETOOLONG, the sysroot unchanged) past MP_SYSROOT_MAX */
int mp_set_sysroot(const char *sysroot);
const char *mp_sysroot(void);
/* sysroot + abs into buf; returns buf, or NULL if it does not fit */
char *mp_syspath(char *buf, size_t len, const char *abs);

/*
 * Resolve a user's --cgroup: an absolute cgroupfs path (under the mount
 * point), a cgroup path as /proc/<pid>/cgroup writes it ("/a/b"), or a
 * path relative to the hierarchy's mount ("a/b"). NULL means the calling
 * process's own cgroup. The directory must exist and be a cgroup.
 */
int mp_cgroup_resolve(const struct mp_hier *h, const char *user,
		      struct mp_cgroup *cg, struct mp_err *err);

/* Small file helpers on a cgroup directory; 0 or -1 with errno. */
int mp_cg_read(const struct mp_cgroup *cg, const char *file, char *buf,
	       size_t len);
int mp_cg_read_u64(const struct mp_cgroup *cg, const char *file, uint64_t *val);
int mp_cg_write(const struct mp_cgroup *cg, const char *file, const char *str);
bool mp_cg_has_file(const struct mp_cgroup *cg, const char *file);
bool mp_cg_exists(const struct mp_cgroup *cg);

/*
 * Create a child cgroup named name under parent (fails with EEXIST if it
 * exists), and remove it again. Removal retries while the kernel still
 * reports it busy (EBUSY) for up to timeout_ms.
 */
int mp_cg_create(const struct mp_cgroup *parent, const char *name,
		 struct mp_cgroup *child);
int mp_cg_remove(const struct mp_cgroup *cg, int timeout_ms);

/* Read a whole small file (at most len - 1 bytes, NUL-terminated). */
int mp_read_file(const char *path, char *buf, size_t len);

/*
 * The calling process's cgroup in a hierarchy (from /proc/self/cgroup),
 * as a path in the hierarchy.
 */
int mp_self_cgroup(const struct mp_hier *h, char *path, size_t len);

/* opt is one of the comma-separated options (mountinfo's super options). */
bool mp_mount_opt(const char *opts, const char *opt);

#endif
