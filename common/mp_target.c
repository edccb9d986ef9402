// SPDX-License-Identifier: GPL-2.0
/*
 * The target model (mp_target.h): hierarchies read once, a user's cgroup
 * resolved on each role's hierarchy, created, joined and removed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_target.h"

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

static bool word_in(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\t' ||
		     p[-1] == '\n') &&
		    (p[len] == ' ' || p[len] == '\t' || p[len] == '\n' ||
		     p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/* One cgroup mount of mountinfo that may play a role. */
struct mount_pick {
	bool found;
	bool whole; /* the hierarchy's root is mounted: final */
};

/*
 * Take a mount for a hierarchy: the first one found, unless a later mount
 * of the hierarchy's root comes (a bind mount of a subtree loses).
 */
static void pick_mount(struct mount_pick *p, struct mp_hier *h,
		       enum mp_cg_version version, const char *controller,
		       const char *root, const char *mnt, const char *opts)
{
	if (p->whole || (p->found && strcmp(root, "/")))
		return;
	if (!mp_syspath(h->mnt, sizeof(h->mnt), mnt))
		return;
	h->version = version;
	snprintf(h->root, sizeof(h->root), "%s", root);
	snprintf(h->opts, sizeof(h->opts), "%s", opts);
	snprintf(h->controller, sizeof(h->controller), "%s", controller);
	p->found = true;
	p->whole = !strcmp(root, "/");
}

/* One pass over mountinfo: v1 memory, v1 mempressure, cgroup2. */
static void scan_mounts(struct mp_hier *mem, struct mount_pick *pmem,
			struct mp_hier *mp, struct mount_pick *pmp,
			struct mp_hier *v2, struct mount_pick *pv2)
{
	char path[PATH_MAX], line[4096];
	FILE *f;

	if (!mp_syspath(path, sizeof(path), "/proc/self/mountinfo"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *field[16], *sep, *save = NULL, *tok;
		char *fstype, *opts;
		int n = 0;

		/* fields before " - ": id parent dev root mnt opts [optional] */
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && n < 16;
		     tok = strtok_r(NULL, " ", &save))
			field[n++] = tok;
		if (n < 6)
			continue;
		save = NULL;
		fstype = strtok_r(sep + 3, " \n", &save);
		if (!fstype || !strtok_r(NULL, " \n", &save))
			continue;
		opts = strtok_r(NULL, " \n", &save);
		if (!opts)
			opts = "";
		unescape(field[3]);
		unescape(field[4]);
		if (!strcmp(fstype, "cgroup2"))
			pick_mount(pv2, v2, MP_CG_V2, "", field[3], field[4],
				   opts);
		if (strcmp(fstype, "cgroup"))
			continue;
		if (mp_mount_opt(opts, "memory"))
			pick_mount(pmem, mem, MP_CG_V1, "memory", field[3],
				   field[4], opts);
		if (mp_mount_opt(opts, "mempressure"))
			pick_mount(pmp, mp, MP_CG_V1, "mempressure", field[3],
				   field[4], opts);
	}
	fclose(f);
}

static bool v2_has_controller(const struct mp_hier *h, const char *name)
{
	char path[PATH_MAX + 32], buf[1024];

	snprintf(path, sizeof(path), "%s/cgroup.controllers", h->mnt);
	if (mp_read_file(path, buf, sizeof(buf)))
		return false;
	return word_in(buf, name);
}

static bool has_word(const struct mp_cgroup *cg, const char *file,
		     const char *word)
{
	char buf[1024];

	return !mp_cg_read(cg, file, buf, sizeof(buf)) && word_in(buf, word);
}

/* cgroup2: make a controller available to the children of cg */
static int v2_enable(const struct mp_cgroup *cg, const char *ctrl)
{
	char word[64];

	if (has_word(cg, "cgroup.subtree_control", ctrl))
		return 0;
	snprintf(word, sizeof(word), "+%s", ctrl);
	return mp_cg_write(cg, "cgroup.subtree_control", word);
}

static bool kernel_has_controller(const char *name)
{
	char path[PATH_MAX], line[256];
	bool found = false;
	FILE *f;

	if (!mp_syspath(path, sizeof(path), "/proc/cgroups"))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char sub[64];
		int hier, num, enabled;

		if (sscanf(line, "%63s %d %d %d", sub, &hier, &num, &enabled) ==
			    4 &&
		    !strcmp(sub, name) && enabled) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

static void probe(struct mp_system *sys)
{
	struct mount_pick pmem = { 0 }, pmp = { 0 }, pv2 = { 0 };
	/* 26 KB, static as mp_system()'s own state: it alone calls probe() */
	static struct mp_hier mem, mp, v2;
	char path[PATH_MAX + 32];

	memset(sys, 0, sizeof(*sys));
	scan_mounts(&mem, &pmem, &mp, &pmp, &v2, &pv2);
	if (pv2.found) {
		sys->have[MP_ROLE_UNIFIED] = true;
		sys->hier[MP_ROLE_UNIFIED] = v2;
		sys->v2_memory = v2_has_controller(&v2, "memory");
	}
	if (pmem.found) {
		sys->have[MP_ROLE_MEMORY] = true;
		sys->hier[MP_ROLE_MEMORY] = mem;
		sys->v1_memory = true;
		snprintf(path, sizeof(path), "%s/memory.pressure_level",
			 mem.mnt);
		sys->pressure_level = !access(path, F_OK);
	} else if (sys->v2_memory) {
		sys->have[MP_ROLE_MEMORY] = true;
		sys->hier[MP_ROLE_MEMORY] = v2;
	}
	if (pmp.found) {
		sys->have[MP_ROLE_MEMPRESSURE] = true;
		sys->hier[MP_ROLE_MEMPRESSURE] = mp;
	} else if (pv2.found && v2_has_controller(&v2, "mempressure")) {
		sys->have[MP_ROLE_MEMPRESSURE] = true;
		sys->hier[MP_ROLE_MEMPRESSURE] = v2;
	}
	sys->psi_system = mp_syspath(path, sizeof(path),
				     "/proc/pressure/memory") &&
			  !access(path, F_OK);
	sys->kernel_mempressure = kernel_has_controller("mempressure");
}

const struct mp_system *mp_system(void)
{
	static struct mp_system sys;
	static char probed_root[PATH_MAX];
	static bool probed;

	/* again when the sysroot changed (the tests' recorded trees) */
	if (!probed || strcmp(probed_root, mp_sysroot())) {
		probe(&sys);
		snprintf(probed_root, sizeof(probed_root), "%s", mp_sysroot());
		probed = true;
	}
	return &sys;
}

const char *mp_system_mode(const struct mp_system *sys)
{
	bool v1 = sys->v1_memory, v2 = sys->have[MP_ROLE_UNIFIED];

	return v1 && v2 ? "hybrid" : v1 ? "v1" : v2 ? "v2" : "none";
}

/*
 * "cannot create cgroup 'PARENT/NAME'" without a double slash under the
 * root, and on v1, where nothing is delegated, what else works.
 */
static int create_failed(struct mp_err *err, const struct mp_cgroup *parent,
			 const char *name)
{
	int e = errno;
	const char *sep = strcmp(parent->path, "/") ? "/" : "";

	if (parent->hier->version != MP_CG_V2 &&
	    (e == EACCES || e == EPERM || e == EROFS))
		return mp_errf(
			err, -1, e,
			"cannot create cgroup '%s%s%s' (cgroup v1: only root, or a user given a directory of the hierarchy, can; --cgroup runs in an existing cgroup)",
			parent->path, sep, name);
	return mp_errf(err, -1, e, "cannot create cgroup '%s%s%s'",
		       parent->path, sep, name);
}

/* ---- targets -------------------------------------------------------- */

static const char *const role_names[MP_ROLE_NR] = {
	[MP_ROLE_MEMORY] = "memory",
	[MP_ROLE_MEMPRESSURE] = "mempressure",
	[MP_ROLE_UNIFIED] = "cgroup2",
};

int mp_target_resolve(const char *user, struct mp_target *t)
{
	const struct mp_system *sys = mp_system();
	const char *path = user;
	char hpath[PATH_MAX];
	size_t ml;
	int r;

	memset(t, 0, sizeof(*t));
	t->own = !user;
	snprintf(t->user, sizeof(t->user), "%s", user ? user : "");
	/*
	 * A directory under one hierarchy's mount names the same path in the
	 * others: resolve it there first, then the others by its path.
	 */
	for (r = 0; user && user[0] == '/' && r < MP_ROLE_NR; r++) {
		ml = strlen(sys->hier[r].mnt);
		if (!sys->have[r] || strncmp(user, sys->hier[r].mnt, ml) ||
		    (user[ml] != '/' && user[ml] != '\0'))
			continue;
		if (!mp_cgroup_resolve(&sys->hier[r], user, &t->role[r].cg,
				       &t->role[r].err)) {
			snprintf(hpath, sizeof(hpath), "%s",
				 t->role[r].cg.path);
			path = hpath;
		}
		break;
	}
	for (r = 0; r < MP_ROLE_NR; r++) {
		struct mp_target_cg *tc = &t->role[r];

		if (!sys->have[r]) {
			mp_errf(&tc->err, MP_EXIT_UNAVAILABLE, 0,
				"no %s hierarchy is mounted", role_names[r]);
			continue;
		}
		tc->ok = !mp_cgroup_resolve(&sys->hier[r], path, &tc->cg,
					    &tc->err);
	}
	return 0;
}

struct mp_target *mp_target_new(const char *user)
{
	struct mp_target *t = calloc(1, sizeof(*t));

	if (t)
		mp_target_resolve(user, t);
	return t;
}

int mp_target_get(const struct mp_target *t, enum mp_role role,
		  const struct mp_cgroup **cg, struct mp_err *err)
{
	const struct mp_target_cg *tc = &t->role[role];

	if (!tc->ok) {
		if (err)
			*err = tc->err;
		return -1;
	}
	*cg = &tc->cg;
	return 0;
}

static int write_u64(const struct mp_cgroup *cg, const char *file, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return mp_cg_write(cg, file, buf);
}

static int set_limits(const struct mp_cgroup *cg,
		      const struct mp_target_spec *spec, struct mp_err *err)
{
	bool v1 = cg->hier->version == MP_CG_V1;

	if (write_u64(cg, v1 ? "memory.limit_in_bytes" : "memory.max",
		      spec->limit))
		return mp_errf(err, -1, errno, "cannot set the limit of '%s'",
			       cg->path);
	/* no swap for the run where the kernel accounts it */
	if (!spec->swap) {
		if (v1 && mp_cg_has_file(cg, "memory.memsw.limit_in_bytes"))
			write_u64(cg, "memory.memsw.limit_in_bytes",
				  spec->limit);
		if (!v1 && mp_cg_has_file(cg, "memory.swap.max"))
			mp_cg_write(cg, "memory.swap.max", "0");
	}
	/*
	 * v1 has no memory.high; for userspace shrinkers the patched kernel
	 * gives the soft limit its part (see mempressure(7)), elsewhere it
	 * only guides global reclaim.
	 */
	if (spec->high)
		write_u64(cg, v1 ? "memory.soft_limit_in_bytes" : "memory.high",
			  spec->high);
	return 0;
}

/*
 * A child's limit above an ancestor's would be the ancestor's in effect,
 * and a run would be reported at a limit it never had: refused, naming
 * the tightest ancestor.
 */
static int check_ancestors(const struct mp_cgroup *pm, const char *name,
			   uint64_t limit, struct mp_err *err)
{
	bool v1 = pm->hier->version == MP_CG_V1;
	struct mp_cgroup *a = malloc(sizeof(*a));
	uint64_t v, low = UINT64_MAX;
	char at[PATH_MAX] = "";
	char *slash;
	int ret = 0;

	if (!a)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "out of memory");
	*a = *pm;
	for (;;) {
		if (!mp_cg_read_u64(a,
				    v1 ? "memory.limit_in_bytes" : "memory.max",
				    &v) &&
		    v < low) {
			low = v;
			snprintf(at, sizeof(at), "%s", a->path);
		}
		if (!strcmp(a->path, "/"))
			break;
		slash = strrchr(a->path, '/');
		*(slash == a->path ? slash + 1 : slash) = '\0';
		slash = strrchr(a->dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	if (low < limit)
		ret = mp_errf(err, MP_EXIT_FAILURE, 0,
			      "cannot give cgroup '%s%s%s' a limit of %" PRIu64
			      " bytes: cgroup '%s' is limited to %" PRIu64
			      " bytes",
			      pm->path, strcmp(pm->path, "/") ? "/" : "", name,
			      limit, at, low);
	free(a);
	return ret;
}

int mp_target_create(const struct mp_target *parent, const char *name,
		     const struct mp_target_spec *spec, struct mp_target *child,
		     struct mp_err *err)
{
	const struct mp_cgroup *pm, *pp;
	struct mp_target_cg *cm, *cp;

	memset(child, 0, sizeof(*child));
	snprintf(child->user, sizeof(child->user), "%s", name);
	cm = &child->role[MP_ROLE_MEMORY];
	cp = &child->role[MP_ROLE_MEMPRESSURE];
	if (mp_target_get(parent, MP_ROLE_MEMORY, &pm, err))
		return -1;
	if (pm->hier->version == MP_CG_V2) {
		/* the limit needs memory in the parent's subtree */
		if (v2_enable(pm, "memory"))
			return mp_errf(
				err, -1, errno,
				"cannot enable the memory controller for the children of '%s'",
				pm->path);
		if (spec && spec->mempressure &&
		    v2_has_controller(pm->hier, "mempressure"))
			v2_enable(pm, "mempressure");
	}
	if (spec && spec->limit && check_ancestors(pm, name, spec->limit, err))
		return -1;
	if (mp_cg_create(pm, name, &cm->cg))
		return create_failed(err, pm, name);
	cm->ok = cm->created = true;
	if (spec && set_limits(&cm->cg, spec, err))
		goto fail;
	if (pm->hier->version == MP_CG_V2)
		child->role[MP_ROLE_UNIFIED] =
			(struct mp_target_cg){ .ok = true, .cg = cm->cg };
	else
		mp_errf(&child->role[MP_ROLE_UNIFIED].err, MP_EXIT_UNAVAILABLE,
			0, "cgroup '%s' is not on cgroup2", cm->cg.path);
	if (!spec || !spec->mempressure ||
	    mp_target_get(parent, MP_ROLE_MEMPRESSURE, &pp, NULL)) {
		mp_errf(&cp->err, MP_EXIT_UNAVAILABLE, 0,
			"no mempressure cgroup was made for '%s'", cm->cg.path);
		return 0;
	}
	if (!strcmp(pp->hier->mnt, pm->hier->mnt)) {
		cp->ok = true;
		cp->cg = cm->cg;
		return 0;
	}
	if (mp_cg_create(pp, name, &cp->cg)) {
		create_failed(err, pp, name);
		goto fail;
	}
	cp->ok = cp->created = true;
	return 0;
fail:
	mp_target_remove(child, 1000);
	return -1;
}

int mp_target_join(const struct mp_target *t, pid_t pid, struct mp_err *err)
{
	const char *done[MP_ROLE_NR];
	char buf[32];
	int r, i, n = 0;

	snprintf(buf, sizeof(buf), "%d", pid ? (int)pid : (int)getpid());
	for (r = 0; r < MP_ROLE_NR; r++) {
		if (r == MP_ROLE_UNIFIED)
			continue; /* a cgroup to read, not to join */
		const struct mp_cgroup *cg = mp_target_cg(t, r);

		if (!cg)
			continue;
		for (i = 0; i < n && strcmp(done[i], cg->dir); i++)
			;
		if (i < n)
			continue;
		if (mp_cg_write(cg, "cgroup.procs", buf))
			return mp_errf(err, -1, errno,
				       "cannot join cgroup '%s'", cg->dir);
		done[n++] = cg->dir;
	}
	return 0;
}

int mp_target_remove(struct mp_target *t, int timeout_ms)
{
	int r, ret = 0;

	for (r = 0; r < MP_ROLE_NR; r++) {
		struct mp_target_cg *tc = &t->role[r];

		if (!tc->created)
			continue;
		if (mp_cg_remove(&tc->cg, timeout_ms))
			ret = -1;
		tc->created = false;
	}
	return ret;
}

/* ---- placement ------------------------------------------------------ */

/* Whether cg has a child cgroup other than the directory except. */
static bool has_other_children(const struct mp_cgroup *cg, const char *except)
{
	const char *base = strrchr(except, '/');
	struct dirent *de;
	bool found = false;
	DIR *d;

	base = base ? base + 1 : except;
	d = opendir(cg->dir);
	if (!d)
		return true;
	while (!found && (de = readdir(d)))
		found = de->d_type == DT_DIR && de->d_name[0] != '.' &&
			strcmp(de->d_name, base);
	closedir(d);
	return found;
}

/* 0 when the kernel has no pid namespaces: then there is only one */
static unsigned long pidns_id(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long)st.st_ino;
}

int mp_target_name(char *buf, size_t len, const char *kind, const char *suffix)
{
	int n = snprintf(buf, len, "mpctl-%s-%d-%lu%s%s", kind, (int)getpid(),
			 pidns_id(), suffix ? "-" : "", suffix ? suffix : "");

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static bool cg_empty(const struct mp_cgroup *cg)
{
	char buf[64];

	return !mp_cg_read(cg, "cgroup.procs", buf, sizeof(buf)) && !buf[0];
}

/* rmdir cg's empty child cgroups, then cg if empty */
static void remove_empty_tree(const struct mp_cgroup *cg)
{
	struct mp_cgroup child;
	struct dirent *de;
	DIR *d;

	d = opendir(cg->dir);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			child = *cg;
			if (snprintf(child.dir, sizeof(child.dir), "%s/%s",
				     cg->dir,
				     de->d_name) >= (int)sizeof(child.dir))
				continue;
			if (cg_empty(&child))
				rmdir(child.dir);
		}
		closedir(d);
	}
	if (cg_empty(cg))
		rmdir(cg->dir);
}

void mp_target_remove_stale(const struct mp_target *parent, const char *kind)
{
	/* on the heap: remove_empty_tree() holds another 8 KB cgroup */
	struct mp_cgroup *cg = malloc(sizeof(*cg));
	char prefix[64];
	unsigned long ns = pidns_id();
	size_t pl;
	int r;

	if (!cg)
		return;

	pl = (size_t)snprintf(prefix, sizeof(prefix), "mpctl-%s-", kind);
	for (r = 0; r < MP_ROLE_NR; r++) {
		const struct mp_cgroup *pcg = mp_target_cg(parent, r);
		struct dirent *de;
		DIR *d;

		if (!pcg ||
		    (r == MP_ROLE_UNIFIED &&
		     mp_target_cg(parent, MP_ROLE_MEMORY) &&
		     !strcmp(pcg->dir,
			     mp_target_cg(parent, MP_ROLE_MEMORY)->dir)))
			continue;
		d = opendir(pcg->dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			unsigned long dns;
			char *end;
			long pid;

			if (strncmp(de->d_name, prefix, pl))
				continue;
			pid = strtol(de->d_name + pl, &end, 10);
			if (pid <= 0 || *end != '-')
				continue;
			dns = strtoul(end + 1, &end, 10);
			/* only ours: this pid namespace, the process gone */
			if ((*end && *end != '-') || dns != ns ||
			    !kill((pid_t)pid, 0) || errno != ESRCH)
				continue;
			*cg = *pcg;
			if (snprintf(cg->dir, sizeof(cg->dir), "%s/%s",
				     pcg->dir,
				     de->d_name) >= (int)sizeof(cg->dir))
				continue;
			remove_empty_tree(cg);
		}
		closedir(d);
	}
	free(cg);
}

/* Whether cg's cgroup.procs lists a process other than the caller. */
static bool others_in(const struct mp_cgroup *cg)
{
	char buf[4096], *p, *end;
	long self = (long)getpid();

	if (mp_cg_read(cg, "cgroup.procs", buf, sizeof(buf)))
		return true;
	for (p = buf; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid != self)
			return true;
	}
	return false;
}

static int move_self(const struct mp_cgroup *to)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	return mp_cg_write(to, "cgroup.procs", buf);
}

/* cgroup2, not the root: make cg a parent the caller may create under */
static int v2_delegated(struct mp_parent *p, const char *kind, bool own,
			struct mp_err *err)
{
	const struct mp_cgroup *cg = &p->t.role[MP_ROLE_MEMORY].cg;
	char name[128];

	static const char *const files[] = { "cgroup.procs",
					     "cgroup.subtree_control" };
	char path[PATH_MAX + 32];
	size_t i;
	int e = 0;

	/* mkdir, and the two files a parent needs */
	if (access(cg->dir, W_OK))
		e = errno;
	for (i = 0; !e && i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", cg->dir, files[i]);
		if (access(path, W_OK))
			e = errno;
	}
	if (e == EROFS)
		return mp_errf(
			err, MP_EXIT_NOPERM, 0,
			"the cgroup file system '%s' is read-only here: give the container a writable, delegated cgroup2 (its own cgroup namespace), or name a writable cgroup",
			cg->hier->mnt);
	if (e)
		return mp_errf(
			err, MP_EXIT_NOPERM, 0,
			"cgroup '%s' is not delegated to you: run mpctl in a systemd service or scope with Delegate=yes (systemd-run --user --scope -p Delegate=yes mpctl ...), or name a delegated cgroup",
			cg->path);
	if (has_word(cg, "cgroup.subtree_control", "memory"))
		return 0;
	if (!own && others_in(cg))
		return mp_errf(
			err, MP_EXIT_FAILURE, 0,
			"cgroup '%s' has processes: a cgroup2 parent with processes cannot enable the memory controller for its children",
			cg->path);
	if (own && others_in(cg))
		return mp_errf(
			err, MP_EXIT_FAILURE, 0,
			"cgroup '%s' has other processes, so controllers cannot be enabled below it (cgroup2's no-internal-process rule): start mpctl in a cgroup of its own (systemd-run --scope -p Delegate=yes mpctl ...)",
			cg->path);
	if (own) {
		if (mp_target_name(name, sizeof(name), kind, "self"))
			return mp_errf(err, MP_EXIT_FAILURE, errno, "%s", kind);
		p->home = *cg;
		if (mp_cg_create(cg, name, &p->leaf))
			return create_failed(err, cg, name);
		if (move_self(&p->leaf)) {
			mp_errf(err, -1, errno, "cannot move into cgroup '%s'",
				p->leaf.path);
			rmdir(p->leaf.dir);
			return -1;
		}
		p->moved = true;
	}
	if (v2_enable(cg, "memory"))
		return mp_errf(
			err, -1, errno,
			"cannot enable the memory controller for the children of '%s'",
			cg->path);
	p->enabled = true;
	if (has_word(cg, "cgroup.controllers", "mempressure") &&
	    !v2_enable(cg, "mempressure"))
		p->enabled_mp = true;
	return 0;
}

int mp_parent_acquire(const char *user, const char *kind, struct mp_parent *p,
		      struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	const struct mp_cgroup *mem;

	memset(p, 0, sizeof(*p));
	if (!sys->have[MP_ROLE_MEMORY])
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"no memory cgroup: neither a v1 memory hierarchy nor cgroup2 with the memory controller");
	if (!user && sys->v1_memory) {
		mp_target_resolve("/", &p->t);
		return 0;
	}
	mp_target_resolve(user, &p->t);
	if (mp_target_get(&p->t, MP_ROLE_MEMORY, &mem, err))
		return -1;
	/* the real root has no cgroup.type; a namespace's root has one */
	if (mem->hier->version == MP_CG_V1 ||
	    !mp_cg_has_file(mem, "cgroup.type"))
		return 0;
	if (v2_delegated(p, kind, !user, err)) {
		mp_parent_release(p);
		return -1;
	}
	return 0;
}

void mp_parent_release(struct mp_parent *p)
{
	const struct mp_cgroup *cg = &p->t.role[MP_ROLE_MEMORY].cg;

	/*
	 * Undo what we enabled, unless another child (another run) still
	 * uses it; only a cgroup without controllers for its children may
	 * take a process again, so then the caller cannot move back, and
	 * the leaf stays for the next run's cleanup.
	 */
	if (p->enabled &&
	    !has_other_children(cg, p->moved ? p->leaf.dir : "")) {
		if (p->enabled_mp)
			mp_cg_write(cg, "cgroup.subtree_control",
				    "-mempressure");
		mp_cg_write(cg, "cgroup.subtree_control", "-memory");
	}
	if (p->moved && !move_self(&p->home))
		rmdir(p->leaf.dir);
	p->moved = p->enabled = p->enabled_mp = false;
}

/* processes in dir's cgroup.procs and its children's, pid itself left out */
static int count_procs(const char *dir, pid_t self, int depth)
{
	char path[PATH_MAX], line[32];
	struct dirent *de;
	int n = 0;
	FILE *f;
	DIR *d;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (atoi(line) != self)
				n++;
		fclose(f);
	}
	d = depth < 16 ? opendir(dir) : NULL;
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path))
			n += count_procs(path, self, depth + 1);
	}
	if (d)
		closedir(d);
	return n;
}

int mp_cg_claim(const struct mp_cgroup *cg, int *fd, int *others,
		struct mp_err *err)
{
	*others = 0;
	*fd = open(cg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return mp_errf(err, -1, errno, "cannot open cgroup '%s'",
			       cg->path);
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		close(*fd);
		*fd = -1;
		return mp_errf(
			err, MP_EXIT_FAILURE, 0,
			"cgroup '%s' is in use by another mpctl run: give each run a cgroup of its own, or leave --cgroup out for a transient one",
			cg->path);
	}
	*others = count_procs(cg->dir, getpid(), 0);
	return 0;
}
