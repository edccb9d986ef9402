// SPDX-License-Identifier: GPL-2.0
/*
 * The backends as rows: see mp_backend.h. Each backend is a probe (is it
 * on this machine), an open function (what it registers on a new source,
 * through mp_pressure_int.h) and a row in rows[] below; the order in
 * which each use prefers them is prefer[]. mp_source_open(), info and
 * the shrinker ask the rows; the few places that still name a backend
 * are listed in doc/HACKING.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "mp_backend.h"
#include "mp_parse.h"
#include "mp_pressure_int.h"
#include "mp_target.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- probes: 0 if present, else -1 and why (69) ------------------------ */

static int probe_mempressure(struct mp_err *err)
{
	const struct mp_system *sys = mp_system();

	if (sys->have[MP_ROLE_MEMPRESSURE])
		return 0;
	if (sys->kernel_mempressure)
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"the mempressure controller is not mounted (mount -t cgroup -o mempressure none DIR)");
	return mp_errf(
		err, MP_EXIT_UNAVAILABLE, 0,
		"the kernel has no mempressure controller (not a patched kernel)");
}

static int probe_memcg(struct mp_err *err)
{
	if (mp_system()->pressure_level)
		return 0;
	return mp_errf(
		err, MP_EXIT_UNAVAILABLE, 0,
		"no cgroup v1 memory hierarchy with memory.pressure_level is mounted");
}

static int probe_psi(struct mp_err *err)
{
	const struct mp_system *sys = mp_system();

	if (sys->have[MP_ROLE_UNIFIED] || sys->psi_system)
		return 0;
	return mp_errf(
		err, MP_EXIT_UNAVAILABLE, 0,
		"no PSI: neither cgroup2 nor /proc/pressure/memory is present");
}

/* ---- open functions: what each registers on a new source --------------- */

/* the mempressure ABI's names: "oom" is critical */
static const char *const mempressure_levels[MP_LEVEL_NR] = {
	[MP_LEVEL_LOW] = "low",
	[MP_LEVEL_MEDIUM] = "medium",
	[MP_LEVEL_CRITICAL] = "oom",
};

static int open_memcg(struct mp_source *src, const struct mp_source_cfg *cfg,
		      const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *cg;
	int l;

	if (probe_memcg(err) || mp_target_get(t, MP_ROLE_MEMORY, &cg, err))
		return -1;
	src->cg = *cg;
	/* one registration per level from the threshold up tells the level */
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		char args[64];

		snprintf(args, sizeof(args), "%s%s%s", mp_level_name(l),
			 cfg->mode_set ? "," : "",
			 cfg->mode_set ? mp_mode_name(cfg->mode) : "");
		if (mp_source_v1(src, "memory.pressure_level", args, l, err))
			return -1;
	}
	return 0;
}

static int open_mempressure(struct mp_source *src,
			    const struct mp_source_cfg *cfg,
			    const struct mp_target *t, struct mp_err *err)
{
	const struct mp_cgroup *cg;
	char path[PATH_MAX + 32];
	int l;

	if (probe_mempressure(err) ||
	    mp_target_get(t, MP_ROLE_MEMPRESSURE, &cg, err))
		return -1;
	src->cg = *cg;
	if (cg->hier->version == MP_CG_V1) {
		for (l = cfg->level; l < MP_LEVEL_NR; l++)
			if (mp_source_v1(src, "mempressure.level",
					 mp_level_native(MP_BACKEND_MEMPRESSURE,
							 l),
					 l, err))
				return -1;
		return 0;
	}
	/* cgroup2: one trigger reports the highest level and a count */
	snprintf(path, sizeof(path), "%s/mempressure.level", src->cg.dir);
	return mp_source_trigger(src, path,
				 mp_level_native(MP_BACKEND_MEMPRESSURE,
						 cfg->level),
				 cfg->level, true, err);
}

/* "some 70000 1000000": the trigger as PSI's files take it */
static void psi_spec(char *buf, size_t size, const struct mp_psi_trigger *t)
{
	snprintf(buf, size, "%s %" PRIu64 " %" PRIu64,
		 t->full ? "full" : "some", t->stall_us, t->window_us);
}

/* systemd.exec(5)'s memory pressure protocol, from the environment */
struct env_watch {
	char path[PATH_MAX];
	char trig[256];
};

/*
 * *out: the watch $MEMORY_PRESSURE_WATCH names (allocated), or NULL when
 * it is unset or empty. -1 when it says off ("/dev/null", status 69) or
 * either variable is malformed (64). $MEMORY_PRESSURE_WRITE is the
 * trigger in base64, which systemd encodes with its terminating NUL;
 * without it the level's default trigger is written.
 */
static int env_watch_get(const struct mp_source_cfg *cfg,
			 struct env_watch **out, struct mp_err *err)
{
	const char *path = getenv("MEMORY_PRESSURE_WATCH");
	const char *wr = getenv("MEMORY_PRESSURE_WRITE");
	struct mp_psi_trigger def;
	struct env_watch *w;
	size_t len;

	*out = NULL;
	if (!path || !*path)
		return 0;
	if (!strcmp(path, "/dev/null"))
		return mp_errf(
			err, MP_EXIT_UNAVAILABLE, 0,
			"memory pressure watching is off (MEMORY_PRESSURE_WATCH=/dev/null)");
	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not an absolute path",
			path);
	w = calloc(1, sizeof(*w));
	if (!w)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "out of memory");
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (!wr || !*wr) {
		mp_psi_default(cfg->level, &def);
		psi_spec(w->trig, sizeof(w->trig), &def);
		goto ok;
	}
	if (mp_base64_decode(wr, w->trig, sizeof(w->trig), &len)) {
		mp_errf(err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WRITE '%s': %s", wr,
			errno == ERANGE ? "too long" : "not base64");
		goto bad;
	}
	while (len && w->trig[len - 1] == '\0')
		len--;
	if (!len || strlen(w->trig) != len) {
		mp_errf(err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WRITE '%s': not a trigger string",
			wr);
		goto bad;
	}
ok:
	*out = w;
	return 0;
bad:
	free(w);
	return -1;
}

/*
 * What the service manager named must be a memory pressure file: the
 * system's /proc/pressure/memory, or a cgroup2 group's memory.pressure,
 * whose group labels the events (it may be another service's). Anything
 * else (a regular file, above all) would be written into: refused, 64.
 */
static int env_watch_cgroup(struct mp_source *src, const struct mp_target *t,
			    const struct env_watch *w, struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	const struct mp_hier *h = &sys->hier[MP_ROLE_UNIFIED];
	char real[PATH_MAX], *base;
	const struct mp_cgroup *cg;
	struct statfs fs;
	size_t mlen;

	if (!realpath(w->path, real) || statfs(real, &fs))
		return mp_errf(err, -1, errno,
			       "cannot open MEMORY_PRESSURE_WATCH '%s'",
			       w->path);
	base = strrchr(real, '/');
	*base++ = '\0';
	if (fs.f_type == PROC_SUPER_MAGIC && !strcmp(real, "/proc/pressure") &&
	    !strcmp(base, "memory")) {
		/* the system's: our own group's usage, as before */
		if (!mp_target_get(t, MP_ROLE_UNIFIED, &cg, NULL))
			src->cg = *cg;
		else
			snprintf(src->cg.path, sizeof(src->cg.path), "/");
		return 0;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC || strcmp(base, "memory.pressure"))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not a pressure file (a PSI file or a cgroup's memory.pressure)",
			w->path);
	/* our own group, or the one the file is in */
	if (!mp_target_get(t, MP_ROLE_UNIFIED, &cg, NULL) &&
	    !strcmp(cg->dir, real)) {
		src->cg = *cg;
		return 0;
	}
	mlen = strlen(h->mnt);
	if (!sys->have[MP_ROLE_UNIFIED] || strncmp(real, h->mnt, mlen) ||
	    (real[mlen] != '/' && real[mlen]))
		return mp_errf(
			err, MP_EXIT_USAGE, 0,
			"invalid MEMORY_PRESSURE_WATCH '%s': not under the cgroup2 mount",
			w->path);
	src->cg.hier = h;
	snprintf(src->cg.dir, sizeof(src->cg.dir), "%s", real);
	snprintf(src->cg.path, sizeof(src->cg.path), "%s",
		 real[mlen] ? real + mlen : "/");
	return 0;
}

/* The file the service manager named, with its trigger, at the level. */
static int open_env_watch(struct mp_source *src,
			  const struct mp_source_cfg *cfg,
			  const struct mp_target *t, const struct env_watch *w,
			  struct mp_err *err)
{
	if (env_watch_cgroup(src, t, w, err))
		return -1;
	/* no memory.events beside it: the file may be any PSI file */
	src->system = true;
	snprintf(src->note, sizeof(src->note),
		 "MEMORY_PRESSURE_WATCH: '%s' with trigger '%s'", w->path,
		 w->trig);
	return mp_source_trigger(src, w->path, w->trig, cfg->level, false, err);
}

static int open_psi(struct mp_source *src, const struct mp_source_cfg *cfg,
		    const struct mp_target *t, struct mp_err *err)
{
	const struct mp_system *sys = mp_system();
	bool have_v2 = sys->have[MP_ROLE_UNIFIED];
	struct mp_psi_trigger trig[MP_LEVEL_NR];
	bool priv = mp_privileged();
	const struct mp_cgroup *cg;
	char path[PATH_MAX + 32];
	int l;

	/* check every trigger before touching the kernel */
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		if (cfg->psi_set && l == (int)cfg->level)
			trig[l] = cfg->psi;
		else
			mp_psi_default(l, &trig[l]);
		if (mp_psi_check(&trig[l], priv, err))
			return -1;
		/* an override replaces the one trigger asked for */
		if (cfg->psi_set)
			break;
	}
	if (probe_psi(err))
		return -1;
	if (have_v2) {
		const struct mp_cgroup *v1;

		if (mp_target_get(t, MP_ROLE_UNIFIED, &cg, err)) {
			/* PSI is cgroup2's: say where the cgroup is */
			if (err->errnum == ENOENT &&
			    !mp_target_get(t, MP_ROLE_MEMORY, &v1, NULL) &&
			    v1->hier->version == MP_CG_V1)
				return mp_errf(
					err, MP_EXIT_UNAVAILABLE, 0,
					"cgroup '%s' exists only in the cgroup v1 memory hierarchy, and PSI is per cgroup on cgroup2 only: use -b memcg, or -c / for system-wide PSI",
					t->user);
			return -1;
		}
		src->cg = *cg;
		snprintf(path, sizeof(path), "%s/memory.pressure", src->cg.dir);
	}
	if (!have_v2 || (access(path, F_OK) && !strcmp(src->cg.path, "/"))) {
		if (!t->own && strcmp(t->user, "/"))
			return mp_errf(
				err, MP_EXIT_UNAVAILABLE, 0,
				"no cgroup2 hierarchy for '%s': only system-wide PSI is present",
				t->user);
		mp_syspath(path, sizeof(path), "/proc/pressure/memory");
		src->system = true;
		snprintf(src->cg.path, sizeof(src->cg.path), "/");
	} else if (!priv && access(path, W_OK) && errno == EACCES) {
		/*
		 * A root-owned memory.pressure takes no trigger of ours; the
		 * system-wide file does, with the kernel's unprivileged
		 * rules (2 s windows, checked above).
		 */
		snprintf(src->note, sizeof(src->note),
			 "'%s' is not writable: system-wide PSI", path);
		mp_syspath(path, sizeof(path), "/proc/pressure/memory");
		src->system = true;
	}
	if (!src->system && mp_source_events(src, cfg->level, err))
		return -1;
	for (l = cfg->level; l < MP_LEVEL_NR; l++) {
		char spec[96];

		psi_spec(spec, sizeof(spec), &trig[l]);
		if (mp_source_trigger(src, path, spec, l, false, err))
			return -1;
		if (cfg->psi_set)
			break;
	}
	return 0;
}

/* ---- the table ---------------------------------------------------------- */

static const struct mp_backend_row rows[MP_BACKEND_NR] = {
	[MP_BACKEND_MEMPRESSURE] = {
		.name = "mempressure",
		.probe = probe_mempressure,
		.open = open_mempressure,
		.levels = mempressure_levels,
		.kernel_shrinker = true,
	},
	[MP_BACKEND_MEMCG] = {
		.name = "memcg",
		.probe = probe_memcg,
		.open = open_memcg,
		.takes = MP_TAKES_MODE,
	},
	[MP_BACKEND_PSI] = {
		.name = "psi",
		.probe = probe_psi,
		.open = open_psi,
		.takes = MP_TAKES_PSI,
	},
};

static const enum mp_backend prefer[MP_USE_NR][MP_BACKEND_NR + 1] = {
	/* the patched kernel's controller, then vmpressure, then PSI */
	[MP_USE_EVENTS] = { MP_BACKEND_MEMPRESSURE, MP_BACKEND_MEMCG,
			    MP_BACKEND_PSI, MP_BACKEND_AUTO },
	/* memcg's vmpressure first: PSI needs a v2 memory cgroup */
	[MP_USE_EMULATION] = { MP_BACKEND_MEMCG, MP_BACKEND_PSI,
			       MP_BACKEND_AUTO },
	/* PSI takes a trigger of an unprivileged caller */
	[MP_USE_UNPRIVILEGED] = { MP_BACKEND_PSI, MP_BACKEND_AUTO },
};

/* the options of struct mp_source_cfg a row may not take, as refused */
static const struct {
	unsigned int opt;
	const char *what;
} opts[] = {
	{ MP_TAKES_PSI, "a psi trigger" },
	{ MP_TAKES_MODE, "a propagation mode" },
};

const struct mp_backend_row *mp_backend_row(enum mp_backend b)
{
	return b >= 0 && b < MP_BACKEND_NR ? &rows[b] : NULL;
}

const char *mp_backend_name(enum mp_backend b)
{
	return b >= 0 && b < MP_BACKEND_NR ? rows[b].name : "auto";
}

int mp_backend_parse(const char *s, enum mp_backend *b)
{
	int i;

	if (!strcmp(s, "auto")) {
		*b = MP_BACKEND_AUTO;
		return 0;
	}
	for (i = 0; i < MP_BACKEND_NR; i++)
		if (!strcmp(s, rows[i].name)) {
			*b = i;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

const char *mp_level_native(enum mp_backend b, enum mp_level l)
{
	const struct mp_backend_row *r = mp_backend_row(b);

	if (r && r->levels && l >= 0 && l < MP_LEVEL_NR)
		return r->levels[l];
	return mp_level_name(l);
}

int mp_backend_probe(enum mp_backend b, struct mp_err *err)
{
	if (b < 0 || b >= MP_BACKEND_NR)
		return mp_errf(err, MP_EXIT_USAGE, 0, "unknown backend");
	return rows[b].probe(err);
}

enum mp_backend mp_backend_pick(enum mp_use use)
{
	const enum mp_backend *b;

	for (b = prefer[use]; *b != MP_BACKEND_AUTO; b++)
		if (!mp_backend_probe(*b, NULL))
			return *b;
	return MP_BACKEND_AUTO;
}

enum mp_backend mp_backend_kernel_shrinker(void)
{
	int i;

	for (i = 0; i < MP_BACKEND_NR; i++)
		if (rows[i].kernel_shrinker)
			return i;
	return MP_BACKEND_AUTO;
}

bool mp_backend_takes(enum mp_backend b, unsigned int opt)
{
	return b == MP_BACKEND_AUTO ||
	       (b >= 0 && b < MP_BACKEND_NR && (rows[b].takes & opt) == opt);
}

enum mp_backend mp_backend_taking(unsigned int opt)
{
	int i;

	for (i = 0; i < MP_BACKEND_NR; i++)
		if ((rows[i].takes & opt) == opt)
			return i;
	return MP_BACKEND_AUTO;
}

/* ---- opening a source ---------------------------------------------------- */

/*
 * The backend cfg names; with auto, the one its options name (--mode
 * first), or auto when it sets none.
 */
static enum mp_backend cfg_backend(const struct mp_source_cfg *cfg)
{
	if (cfg->backend != MP_BACKEND_AUTO)
		return cfg->backend;
	if (cfg->mode_set)
		return mp_backend_taking(MP_TAKES_MODE);
	if (cfg->psi_set)
		return mp_backend_taking(MP_TAKES_PSI);
	return MP_BACKEND_AUTO;
}

unsigned int mp_backend_refuses(const struct mp_source_cfg *cfg)
{
	unsigned int set = (cfg->mode_set ? MP_TAKES_MODE : 0) |
			   (cfg->psi_set ? MP_TAKES_PSI : 0);
	enum mp_backend b = cfg_backend(cfg);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opts); i++)
		if ((set & opts[i].opt) && !mp_backend_takes(b, opts[i].opt))
			return opts[i].opt;
	return 0;
}

/* 0, or -1 (64) naming the first option of cfg its backend does not take */
static int refuse_opts(const struct mp_source_cfg *cfg, struct mp_err *err)
{
	unsigned int opt = mp_backend_refuses(cfg);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opts); i++)
		if (opts[i].opt == opt)
			return mp_errf(err, MP_EXIT_USAGE, 0,
				       "%s applies to the %s backend only",
				       opts[i].what,
				       mp_backend_name(mp_backend_taking(opt)));
	return 0;
}

/* A source of backend b, or of the service manager's file w (PSI's). */
static int source_open_one(const struct mp_source_cfg *cfg,
			   const struct mp_target *t, enum mp_backend b,
			   const struct env_watch *w, struct mp_source **out,
			   struct mp_err *err)
{
	struct mp_source *src;
	int ret;

	if (b < 0 || b >= MP_BACKEND_NR)
		return mp_errf(err, MP_EXIT_USAGE, 0, "unknown backend");
	src = mp_source_new(b, err);
	if (!src)
		return -1;
	ret = w ? open_env_watch(src, cfg, t, w, err) :
		  rows[b].open(src, cfg, t, err);
	if (!ret)
		ret = mp_source_start(src, err);
	if (ret) {
		mp_source_close(src);
		return -1;
	}
	*out = src;
	return 0;
}

int mp_source_open(const struct mp_source_cfg *cfg, struct mp_source **out,
		   struct mp_err *err)
{
	enum mp_backend b = cfg_backend(cfg), fb;
	const struct mp_target *t = cfg->target;
	struct mp_target *own = NULL;
	struct env_watch *w = NULL;
	struct mp_err first;
	bool picked = false;
	int ret = -1;

	/* the one check of the options against the row */
	if (refuse_opts(cfg, err))
		return -1;
	if (b == MP_BACKEND_AUTO) {
		b = mp_backend_pick(MP_USE_EVENTS);
		if (b == MP_BACKEND_AUTO)
			return mp_errf(
				err, MP_EXIT_UNAVAILABLE, 0,
				"no memory pressure interface: no mempressure, memcg v1 or PSI");
		picked = true;
	}
	if (!t) {
		own = mp_target_new(NULL);
		if (!own)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "cgroup");
		t = own;
	}
	if (cfg->env_watch && t->own && !cfg->mode_set && !cfg->psi_set &&
	    env_watch_get(cfg, &w, err))
		goto out;
	if (w) {
		/* systemd.exec(5)'s protocol is PSI's */
		ret = source_open_one(cfg, t, MP_BACKEND_PSI, w, out, err);
		goto out;
	}
	if (!source_open_one(cfg, t, b, NULL, out, err)) {
		ret = 0;
		goto out;
	}
	/*
	 * A backend chosen for the user that this user may not use (an
	 * unprivileged caller and a root-owned cgroup.event_control): the
	 * one that takes unprivileged triggers, if it is there; the reason
	 * becomes the source's note (-v says it)
	 */
	fb = mp_backend_pick(MP_USE_UNPRIVILEGED);
	if (!picked || fb == MP_BACKEND_AUTO || b == fb ||
	    err->status != MP_EXIT_NOPERM)
		goto out;
	first = *err;
	if (source_open_one(cfg, t, fb, NULL, out, err)) {
		*err = first;
		goto out;
	}
	{
		char note[sizeof((*out)->note)];

		snprintf(note, sizeof(note), "%s: %s; fell back to %s%s%s",
			 mp_backend_name(b), first.msg, mp_backend_name(fb),
			 (*out)->note[0] ? "; " : "", (*out)->note);
		snprintf((*out)->note, sizeof((*out)->note), "%s", note);
	}
	ret = 0;
out:
	free(w);
	free(own);
	return ret;
}
