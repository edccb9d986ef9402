/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One pressure-source interface, over the backends of mp_backend.h:
 *
 *  mempressure  the mempressure cgroup of a patched kernel (v1 hierarchy
 *               mounted with -o mempressure, or cgroup2 with the controller)
 *  memcg        mainline cgroup v1 memory.pressure_level (vmpressure)
 *  psi          PSI triggers on cgroup2 memory.pressure or
 *               /proc/pressure/memory
 *
 * A source is opened for a cgroup and a threshold level. Its file
 * descriptor (an epoll instance) becomes readable when events are pending;
 * mp_source_read() then collects them into one struct mp_event. Nothing
 * here prints. What a backend is, and which one a source uses, is
 * mp_backend.h's: this module knows watches and trigger files only.
 */
#ifndef MP_PRESSURE_H
#define MP_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_cgroup.h"
#include "mp_clock.h"
#include "mp_err.h"

/* The backends (their rows, and opening a source: mp_backend.h). */
enum mp_backend {
	MP_BACKEND_AUTO = -1,
	MP_BACKEND_MEMPRESSURE = 0,
	MP_BACKEND_MEMCG,
	MP_BACKEND_PSI,
	MP_BACKEND_NR,
};

enum mp_level {
	MP_LEVEL_LOW = 0,
	MP_LEVEL_MEDIUM,
	MP_LEVEL_CRITICAL, /* "oom" in the mempressure ABI */
	MP_LEVEL_NR,
};

enum mp_mode {
	MP_MODE_DEFAULT = 0,
	MP_MODE_HIERARCHY,
	MP_MODE_LOCAL,
};

struct mp_psi_trigger {
	bool full; /* "full" rather than "some" */
	uint64_t stall_us;
	uint64_t window_us;
	char window_arg[32]; /* the window as the user wrote it, "" if none */
};

struct mp_source_cfg {
	enum mp_backend backend; /* MP_BACKEND_AUTO: best present */
	enum mp_level level;	 /* threshold */
	enum mp_mode mode;	 /* memcg only */
	bool mode_set;
	/* NULL: the caller's own cgroup */
	const struct mp_target *target;
	bool psi_set; /* psi: override the level's default */
	struct mp_psi_trigger psi;
	/*
	 * Honour systemd.exec(5)'s $MEMORY_PRESSURE_WATCH and
	 * $MEMORY_PRESSURE_WRITE when the target is the caller's own and
	 * neither a mode nor a psi trigger is given: the file watched with
	 * the trigger written into it ("/dev/null": off, status 69).
	 */
	bool env_watch;
};

struct mp_event {
	enum mp_level level; /* highest level signalled */
	uint64_t count;	     /* notifications coalesced into this event */
	uint64_t time_ns;    /* CLOCK_REALTIME at wake-up */
	uint64_t mono_ns;    /* CLOCK_MONOTONIC at wake-up */
};

struct mp_source;
struct mp_target;

const char *mp_level_name(enum mp_level l);
/* a level's name, or "oom" (the mempressure ABI's name of critical) */
int mp_level_parse(const char *s, enum mp_level *l);
const char *mp_mode_name(enum mp_mode m);
int mp_mode_parse(const char *s, enum mp_mode *m);

/*
 * PSI trigger "some|full <stall> <window>", times in microseconds or with
 * a unit ("150ms"). Checks the kernel's rules: 0 < stall <= window,
 * 500 ms <= window <= 10 s, and without CAP_SYS_RESOURCE a window that is
 * a multiple of 2 s. Errors are usage errors.
 */
int mp_psi_parse(const char *spec, struct mp_psi_trigger *t,
		 struct mp_err *err);
int mp_psi_check(const struct mp_psi_trigger *t, bool privileged,
		 struct mp_err *err);
void mp_psi_default(enum mp_level l, struct mp_psi_trigger *t);
bool mp_privileged(void);

/* A source is opened by mp_source_open() (mp_backend.h). */
/* Readable (POLLIN) when events are pending. */
int mp_source_fd(const struct mp_source *src);
/*
 * Collect pending events: 1 with *ev filled, 0 if none was pending,
 * -1 on error (e.g. the cgroup was removed: status 1, "cgroup removed").
 */
int mp_source_read(struct mp_source *src, struct mp_event *ev,
		   struct mp_err *err);
enum mp_backend mp_source_backend(const struct mp_source *src);
const struct mp_cgroup *mp_source_cgroup(const struct mp_source *src);
/* The file the source watches, e.g. ".../memory.pressure". */
const char *mp_source_file(const struct mp_source *src);
/* Why the source is not what was asked (a fallback), or NULL. */
const char *mp_source_note(const struct mp_source *src);
void mp_source_close(struct mp_source *src);
/*
 * One fd (an epoll) readable when any of the n sources (NULL entries are
 * skipped) has events pending; closing a source takes it out. -1 on error.
 */
int mp_source_group(struct mp_source *const *src, int n, struct mp_err *err);

#endif
