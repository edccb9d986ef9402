/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pressure backends as rows of one table (mp_backend.c): each has a
 * name, a probe (present on this machine or not, and why), an open
 * function (what it registers on a new source), the names its kernel
 * interface gives the levels, and the options of struct mp_source_cfg it
 * takes. The order in which each use prefers them is one table too.
 * mp_source_open() asks the rows: it refuses an option the row does not
 * take, picks the preferred backend present for auto, and falls back to
 * the unprivileged one. A new backend is a row and its functions there.
 *
 * Below it: mp_pressure.h, the source every backend fills; mp_target.h,
 * the hierarchies the probes read. Nothing here prints.
 */
#ifndef MP_BACKEND_H
#define MP_BACKEND_H

#include <stdbool.h>

#include "mp_err.h"
#include "mp_pressure.h"

struct mp_source;
struct mp_target;

/* the options of struct mp_source_cfg that only some backends take */
enum mp_backend_takes {
	MP_TAKES_MODE = 1 << 0, /* a propagation mode (cfg->mode) */
	MP_TAKES_PSI = 1 << 1,	/* a psi trigger (cfg->psi) */
};

struct mp_backend_row {
	const char *name;
	/* 0 if present on this machine, else -1 and why (69) */
	int (*probe)(struct mp_err *err);
	/* register on src (from mp_source_new()) what cfg asks for t */
	int (*open)(struct mp_source *src, const struct mp_source_cfg *cfg,
		    const struct mp_target *t, struct mp_err *err);
	/* the kernel interface's level names; NULL: mp_level_name()'s */
	const char *const *levels;
	unsigned int takes; /* enum mp_backend_takes */
	/*
	 * Its kernel has a shrinker (mempressure.shrinker) that register
	 * and stress register with rather than emulate one; one row at most.
	 */
	bool kernel_shrinker;
};

/* Backends and the order in which each use prefers them (one table). */
enum mp_use {
	MP_USE_EVENTS = 0,   /* listen: the best interface present */
	MP_USE_EMULATION,    /* a shrinker emulated over events */
	MP_USE_UNPRIVILEGED, /* the fallback where the caller may not */
	MP_USE_NR,
};

/* b's row, NULL for MP_BACKEND_AUTO */
const struct mp_backend_row *mp_backend_row(enum mp_backend b);
/* the row's name, "auto" for MP_BACKEND_AUTO */
const char *mp_backend_name(enum mp_backend b);
/* a row's name or "auto"; -1 (EINVAL) for anything else */
int mp_backend_parse(const char *s, enum mp_backend *b);
/* the name the backend's kernel interface uses ("oom" for mempressure) */
const char *mp_level_native(enum mp_backend b, enum mp_level l);
/* 0 if the backend is present on this machine, else -1 and why (69). */
int mp_backend_probe(enum mp_backend b, struct mp_err *err);
/* The preferred backend present for a use, or MP_BACKEND_AUTO. */
enum mp_backend mp_backend_pick(enum mp_use use);
/* the backend whose row has the kernel's shrinker, present or not */
enum mp_backend mp_backend_kernel_shrinker(void);
/* whether b takes every option in opt (auto takes them all) */
bool mp_backend_takes(enum mp_backend b, unsigned int opt);
/* the first backend that takes every option in opt, else auto */
enum mp_backend mp_backend_taking(unsigned int opt);

/*
 * The first option cfg sets (in the order they are refused: --psi, then
 * --mode) that its backend's row does not take, 0 if none. With auto,
 * the options name the backend (--mode first), so that a mode and a psi
 * trigger together are refused too.
 */
unsigned int mp_backend_refuses(const struct mp_source_cfg *cfg);
/*
 * A source for cfg: the row's probe, open and the relay started. 64 when
 * cfg sets an option the backend does not take.
 */
int mp_source_open(const struct mp_source_cfg *cfg, struct mp_source **out,
		   struct mp_err *err);

#endif
