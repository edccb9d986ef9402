/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space shrinkers: the kernel's mempressure.shrinker, or an emulation
 * of it on stock kernels, behind one interface.
 *
 * The contract is the one of the mempressure RFC. A program tells the
 * shrinker its chunk size once (registration) and keeps a counter of
 * reclaimable chunks up to date (mp_shrinker_add(+N / -N)). When memory is
 * short the shrinker lowers the counter by N and asks the program to free N
 * chunks: mp_shrinker_fd() becomes readable and mp_shrinker_read() returns
 * N. Chunks the program could not free must be re-added with
 * mp_shrinker_add(+n), or the shrinker believes they are gone.
 *
 * Modes, all with the same calls:
 *
 *  kernel v1  a cgroup v1 hierarchy with the mempressure controller:
 *             "<eventfd> <fd of mempressure.shrinker> <chunk size>" written
 *             to cgroup.event_control registers; "<eventfd> <+/-N>" written
 *             to mempressure.shrinker accounts; read(eventfd) gives N.
 *  kernel v2  cgroup2 with the mempressure controller: mempressure.shrinker
 *             opened O_RDWR, "<chunk size>" registers, "+N"/"-N" account,
 *             POLLPRI then read() gives "<N>\n". mp_shrinker_fd() is an
 *             epoll instance around it, so callers always wait for POLLIN.
 *  emulated   any other kernel: a thread of the process that opened the
 *             shrinker watches the cgroup's memory pressure (memcg v1
 *             vmpressure and usage thresholds, or PSI with memory.current)
 *             and turns each event into a number of chunks to free (the
 *             emulator, mp_emulator.h, and its policy). It mirrors the
 *             kernel v1 ABI exactly: it owns an eventfd that carries the
 *             requests, and reads
 *             "<eventfd> <+/-N>\n" lines from a pipe that stands in for
 *             mempressure.shrinker. A child process handed the two fds
 *             (mp_shrinker_setenv(), mp_shrinker_client_from_env()) uses
 *             them as it would use the kernel's.
 *
 * Nothing here prints; errors come back in a struct mp_err.
 */
#ifndef MP_SHRINKER_H
#define MP_SHRINKER_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_backend.h"
#include "mp_emulator.h"
#include "mp_err.h"

struct mp_child;

/* clang-format off */
struct mp_shrinker_cfg {
	/*
	 * MP_BACKEND_AUTO: the kernel's mempressure.shrinker if the
	 * mempressure backend is present, else emulated over the best other
	 * source. MP_BACKEND_MEMPRESSURE: the kernel's, or fail (69).
	 * MP_BACKEND_MEMCG / MP_BACKEND_PSI: emulated over that source.
	 */
	enum mp_backend backend;
	/* mempressure (kernel) or memory (emulated) role; NULL: own cgroup */
	const struct mp_target *target;
	uint64_t chunk_size;	/* bytes, > 0 */
	bool emulate;		/* force emulation even on a patched kernel */
	struct mp_emul_policy policy;	/* emulation and early warning;
					 * zero: defaults */
	/*
	 * Kernel shrinker only: also run the emulation's usage policy in
	 * this process as an early warning (memcg v1 usage thresholds or
	 * sampling). The kernel asks from reclaim, through a work item after
	 * the reclaim window: in a cgroup of anonymous memory without swap
	 * the OOM killer gets there first. Early-warning requests come on a
	 * second eventfd behind the same mp_shrinker_fd(); mp_shrinker_read()
	 * adds them to the kernel's and writes "-n" to the kernel for them,
	 * as the kernel lowers its counter for its own requests.
	 */
	bool early_warning;	/* usage and limit: the target's memory role;
				 * mpctl stress --no-assist turns it off */
};
/* clang-format on */

enum mp_shrinker_mode {
	MP_SHRINKER_KERNEL_V1 = 1,
	MP_SHRINKER_KERNEL_V2,
	MP_SHRINKER_EMULATED,
};

struct mp_shrinker;

/*
 * Register a shrinker for cfg->cgroup. In emulated mode this starts the
 * emulator thread in the calling process; it runs until
 * mp_shrinker_close(). Fails with 69 when no interface is present, 77 on
 * permission errors, 64 on a bad cfg.
 */
int mp_shrinker_open(const struct mp_shrinker_cfg *cfg,
		     struct mp_shrinker **out, struct mp_err *err);

/*
 * Whether cfg asks for the kernel's shrinker (mp_shrinker_open()'s
 * choice): the mempressure backend, or auto without emulate on a kernel
 * that has it. The one place the choice is made.
 */
bool mp_shrinker_wants_kernel(const struct mp_shrinker_cfg *cfg);

/* Readable (POLLIN) when a request is pending. */
int mp_shrinker_fd(const struct mp_shrinker *sh);

/*
 * Take the pending request: 1 with *chunks set (the shrinker has already
 * lowered its counter by *chunks), 0 if none was pending, -1 on error.
 * Never blocks.
 */
int mp_shrinker_read(struct mp_shrinker *sh, uint64_t *chunks,
		     struct mp_err *err);

/*
 * Block until a request comes (or timeout_ms passes, -1 forever):
 * 1 with *chunks, 0 on timeout, -1 on error (EINTR is an error here;
 * err->errnum is EPIPE when the emulated shrinker's owner has exited).
 */
int mp_shrinker_wait(struct mp_shrinker *sh, uint64_t *chunks,
		     int64_t timeout_ms, struct mp_err *err);

/*
 * Account reclaimable chunks: +N adds, -N removes (the counter never goes
 * below zero). Thread-safe; one write() per call in every mode.
 */
int mp_shrinker_add(struct mp_shrinker *sh, int64_t chunks, struct mp_err *err);

enum mp_shrinker_mode mp_shrinker_mode(const struct mp_shrinker *sh);
bool mp_shrinker_emulated(const struct mp_shrinker *sh);
/* The pressure backend behind it: mempressure, or memcg/psi if emulated. */
enum mp_backend mp_shrinker_backend(const struct mp_shrinker *sh);
uint64_t mp_shrinker_chunk_size(const struct mp_shrinker *sh);
/* The cgroup it is registered for (NULL for a client from the env). */
const struct mp_cgroup *mp_shrinker_cgroup(const struct mp_shrinker *sh);
/*
 * Kernel mode: how many times the kernel moved the shrinker to an
 * ancestor's memory cgroup because its own went offline (mempressure.events,
 * "moved"), as of the last mp_shrinker_read(); 0 otherwise. A move makes
 * mp_shrinker_fd() readable, and mp_shrinker_read() then returns 0.
 */
uint64_t mp_shrinker_moves(const struct mp_shrinker *sh);
/* "kernel-v1", "kernel-v2" or "emulated" */
const char *mp_shrinker_mode_name(enum mp_shrinker_mode m);

/*
 * What the emulator has seen and done (struct mp_shrinker_stats,
 * mp_emulator.h): all zero for a kernel shrinker without early warning
 * or a client. Safe to call from any thread while it runs.
 */
void mp_shrinker_stats(const struct mp_shrinker *sh,
		       struct mp_shrinker_stats *st);

/* Unregister (kernel) or stop the emulator thread, close every fd. */
void mp_shrinker_close(struct mp_shrinker *sh);

/*
 * Handing a registration to child processes.
 *
 *   MPCTL_SHRINKER_EFD      request eventfd (v1 and emulated; -1 for v2)
 *   MPCTL_SHRINKER_FD       "shrinker fd": mempressure.shrinker (kernel)
 *                           or the emulator's pipe (emulated)
 *   MPCTL_SHRINKER_CHUNK    chunk size in bytes
 *   MPCTL_SHRINKER_BACKEND  mempressure, memcg or psi
 *   MPCTL_SHRINKER_ABI      v1 (kernel v1 and emulated) or v2
 *   MPCTL_SHRINKER_AFD      early-warning eventfd beside a kernel
 *                           shrinker (cfg.early_warning); absent
 *                           otherwise; the name is public and stays
 *
 * mp_shrinker_env() gives them as "NAME=value" strings (five, six with
 * the early warning; NULL-terminated, valid until the shrinker is closed).
 * mp_shrinker_pass() hands the registration to a child about to be
 * started: its environment gets these variables (and no other
 * MPCTL_SHRINKER_* of ours), and it inherits the fds they name.
 */
#define MP_SHRINKER_ENV_NR 6
const char *const *mp_shrinker_env(struct mp_shrinker *sh);
int mp_shrinker_pass(struct mp_shrinker *sh, struct mp_child *c,
		     struct mp_err *err);

/*
 * A client from the inherited fds (the environment above, read and
 * checked by the library, lib/mpctl-shrinker.h): read, wait, add and fd
 * work as for the owner; close only closes the handle, the fds are left
 * open. Fails with 69 when the variables are absent, 64 when they are
 * malformed.
 */
int mp_shrinker_client_from_env(struct mp_shrinker **out, struct mp_err *err);

#endif
