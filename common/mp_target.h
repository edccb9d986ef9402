/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target model: which cgroups, on which hierarchies.
 *
 * The system's hierarchies are read once per process (mp_system()): one
 * pass over /proc/self/mountinfo finds the v1 memory hierarchy, the v1
 * mempressure hierarchy and cgroup2, and from them the hierarchy that
 * plays each role:
 *
 *  memory       usage, limit, OOM kills: v1 memory, else cgroup2 with the
 *               memory controller
 *  mempressure  the patched kernel's controller: v1 -o mempressure, else
 *               cgroup2 with the controller
 *  unified      cgroup2 with any controllers: PSI's memory.pressure
 *
 * A target is one user's cgroup (a path, or the caller's own cgroup)
 * resolved on each role's hierarchy. A role that is absent, or where the
 * path does not resolve, keeps the error it got; the code that needs the
 * role returns that error, so that what a user sees does not depend on
 * which other hierarchies happen to exist.
 *
 * This module alone probes hierarchies (the interfaces in struct mp_system
 * are what mp_backend.c's probes read); nothing here prints.
 */
#ifndef MP_TARGET_H
#define MP_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_cgroup.h"
#include "mp_err.h"

enum mp_role {
	MP_ROLE_MEMORY = 0,
	MP_ROLE_MEMPRESSURE,
	MP_ROLE_UNIFIED,
	MP_ROLE_NR,
};

struct mp_system {
	bool have[MP_ROLE_NR];
	struct mp_hier hier[MP_ROLE_NR];
	bool v1_memory;		 /* the memory role is on a v1 hierarchy */
	bool v2_memory;		 /* cgroup2 has the memory controller */
	bool pressure_level;	 /* v1 memory.pressure_level exists */
	bool psi_system;	 /* /proc/pressure/memory exists */
	bool kernel_mempressure; /* /proc/cgroups lists mempressure */
};

/*
 * The system's hierarchies, probed on the first call (and again after
 * mp_set_sysroot()). Never NULL.
 */
const struct mp_system *mp_system(void);
/* "hybrid", "v1", "v2" or "none", as report's JSON says it */
const char *mp_system_mode(const struct mp_system *sys);

struct mp_target_cg {
	bool ok;
	bool created; /* by mp_target_create(): removed by us */
	struct mp_cgroup cg;
	struct mp_err err; /* why not ok */
};

struct mp_target {
	struct mp_target_cg role[MP_ROLE_NR];
	bool own;	     /* the caller's own cgroup */
	char user[PATH_MAX]; /* what the user named, for messages */
};

/*
 * Resolve a user's cgroup (as mp_cgroup_resolve() takes it; NULL: the
 * caller's own) on every role's hierarchy. Never fails: each role records
 * its own result. Returns 0.
 */
int mp_target_resolve(const char *user, struct mp_target *t);
/*
 * The same on the heap (a target is ~28 KB: not for a stack frame); free()
 * it. NULL with errno ENOMEM.
 */
struct mp_target *mp_target_new(const char *user);

/*
 * The role's cgroup, or -1 with the error that role got (69 when the
 * hierarchy is absent).
 */
int mp_target_get(const struct mp_target *t, enum mp_role role,
		  const struct mp_cgroup **cg, struct mp_err *err);
static inline const struct mp_cgroup *mp_target_cg(const struct mp_target *t,
						   enum mp_role role)
{
	return t->role[role].ok ? &t->role[role].cg : NULL;
}

/* What a created target gets. */
struct mp_target_spec {
	uint64_t limit;	  /* memory.max / memory.limit_in_bytes */
	uint64_t high;	  /* memory.high / soft limit; 0: none */
	bool swap;	  /* allow swap (else 0 where the file exists) */
	bool mempressure; /* also on a separate mempressure hierarchy */
};

/*
 * Create the child name under parent on the memory hierarchy (making the
 * memory controller available to parent's children on cgroup2 as needed),
 * set spec's limits, and, with spec->mempressure, the child of the same
 * name on the mempressure hierarchy when that is a hierarchy of its own.
 * spec NULL: a plain child, no limits, on the memory hierarchy only. On
 * failure nothing created is left.
 */
int mp_target_create(const struct mp_target *parent, const char *name,
		     const struct mp_target_spec *spec, struct mp_target *child,
		     struct mp_err *err);
/*
 * Move pid (0: the caller) into the target's memory and mempressure
 * cgroups (one write where they are one directory).
 */
int mp_target_join(const struct mp_target *t, pid_t pid, struct mp_err *err);
/* Remove what mp_target_create() made, children first; 0 or -1. */
int mp_target_remove(struct mp_target *t, int timeout_ms);

/*
 * Names of the cgroups a command creates: "mpctl-<kind>-<pid>-<pidns>"
 * (and "-<suffix>"), the pid namespace's inode making them provably ours:
 * stale-run cleanup removes only those of our pid namespace whose
 * process is gone.
 */
int mp_target_name(char *buf, size_t len, const char *kind, const char *suffix);
/*
 * Remove, under parent (each role's cgroup), the empty cgroups of kind
 * left by runs of this pid namespace whose process is gone, and their
 * empty children.
 */
void mp_target_remove_stale(const struct mp_target *parent, const char *kind);

/*
 * Where a command puts the cgroups it creates.
 *
 *  user set     that cgroup (cgroupfs or hierarchy path), as it is: on
 *               cgroup2 it must be delegated to the caller and empty of
 *               processes to make the memory controller available below
 *  v1 memory    the hierarchy's root (v1 has no delegation)
 *  cgroup2      the caller's own cgroup (a systemd service or scope with
 *               Delegate=yes): at the hierarchy's real root as it is;
 *               elsewhere the caller first moves itself into a leaf
 *               "mpctl-<kind>-<pid>-<pidns>-self" of it, because a cgroup
 *               with processes cannot enable controllers for its children
 *               (the no-internal-process rule). It must hold no other
 *               process and be writable.
 *
 * mp_parent_release() undoes what was enabled (unless another run's
 * cgroup is still there), moves the caller back and removes the leaf,
 * when it can.
 */
struct mp_parent {
	struct mp_target t;
	struct mp_cgroup home; /* the caller's cgroup before the move */
	struct mp_cgroup leaf;
	bool moved;
	bool enabled;	 /* memory enabled in t's subtree_control */
	bool enabled_mp; /* and mempressure */
};

int mp_parent_acquire(const char *user, const char *kind, struct mp_parent *p,
		      struct mp_err *err);
void mp_parent_release(struct mp_parent *p);

/*
 * Claim a cgroup a run is given (stress --cgroup) for that run: an
 * exclusive flock(2) on its directory, which another run's claim finds
 * taken, and *others, the processes already in it or below it (another
 * tenant, sharing its limit). *fd is the lock, held until it is closed.
 * -1 with err: taken by another run (status 1), or not readable.
 */
int mp_cg_claim(const struct mp_cgroup *cg, int *fd, int *others,
		struct mp_err *err);

#endif
