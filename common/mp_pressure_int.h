/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inside of a pressure source, for the two files that see it:
 * mp_pressure.c, which runs a source (its watches, the relay thread that
 * turns trigger files into eventfd counts, reading, closing), and
 * mp_backend.c, whose backends fill a new source through the calls below
 * before mp_source_start(). Nothing else includes this header.
 */
#ifndef MP_PRESSURE_INT_H
#define MP_PRESSURE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mp_cgroup.h"
#include "mp_err.h"
#include "mp_pressure.h"

struct mp_watch {
	int fd; /* eventfd: the kernel's (v1) or the relay's */
	enum mp_level level;
};

/* A trigger file (PSI, cgroup2 mempressure.level) the relay thread polls. */
struct mp_trigger {
	int fd;
	int watch;	    /* index of the watch it feeds */
	bool events;	    /* cgroup2 memory.events: counters, no trigger */
	bool leveled;	    /* reads "<level> <count>" (mempressure.level) */
	uint64_t high, max; /* events: the counts last read */
};

/* the PSI triggers of each level, and memory.events */
#define MP_TRIG_NR (MP_LEVEL_NR + 1)

struct mp_source {
	enum mp_backend backend;
	struct mp_cgroup cg;
	bool system;		  /* psi on /proc/pressure/memory */
	char note[PATH_MAX + 64]; /* why it is not what was asked */
	char file[PATH_MAX + 32];
	int epfd;
	/*
	 * Filled in by the backend's open function before the relay thread
	 * starts, and only read afterwards, by the relay and by
	 * mp_source_read().
	 */
	int nwatch;
	struct mp_watch watch[MP_LEVEL_NR];
	int ntrig;
	struct mp_trigger trig[MP_TRIG_NR];
	int stop_fd; /* eventfd that ends the relay thread */
	pthread_t relay;
	bool relay_started;
	atomic_bool trig_lost; /* a trigger file reported POLLERR */
};

/* An empty source of backend b (its epoll made), or NULL with err. */
struct mp_source *mp_source_new(enum mp_backend b, struct mp_err *err);
/*
 * cgroup v1 notification on src->cg: "<eventfd> <fd of file> <args>"
 * written to its cgroup.event_control; the eventfd is level's watch.
 */
int mp_source_v1(struct mp_source *src, const char *file, const char *args,
		 enum mp_level level, struct mp_err *err);
/*
 * A trigger written to the file at path (PSI's "some 70000 1000000", the
 * level name on a cgroup2 mempressure.level), polled by the relay for
 * level's watch; leveled: the file reads "<level> <count>", and the
 * relay signals the level it names too.
 */
int mp_source_trigger(struct mp_source *src, const char *path, const char *trig,
		      enum mp_level level, bool leveled, struct mp_err *err);
/* cgroup2 memory.events of src->cg beside PSI (none: 0, nothing added) */
int mp_source_events(struct mp_source *src, enum mp_level level,
		     struct mp_err *err);
/* The relay thread, when there are trigger files: the source is done. */
int mp_source_start(struct mp_source *src, struct mp_err *err);

#endif
