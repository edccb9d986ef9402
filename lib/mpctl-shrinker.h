/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmpctl-shrinker: a user-space shrinker client for programs that
 * cooperate with memory reclaim. One header and one C file, with no
 * dependency but libc: copy both into a project, or link
 * libmpctl-shrinker.a. The manual is mpctl_shrinker(3).
 *
 * A program declares how many chunks of a fixed size it could free
 * (mpctl_shrinker_add(+n / -n)); when memory runs short it is asked to
 * free some: mpctl_shrinker_fd() becomes readable (POLLIN) and
 * mpctl_shrinker_read() returns how many. The asker has already lowered
 * its counter by that many: chunks the program keeps must be added again.
 *
 * The backends, all behind the same calls:
 *
 *  kernel v2  cgroup2 with the mempressure controller: the cgroup's
 *             mempressure.shrinker opened O_RDWR, "<chunk size>" written
 *             registers, "+n"/"-n" account, POLLPRI then a read gives
 *             "<n>\n".
 *  kernel v1  a cgroup v1 mempressure hierarchy: "<eventfd> <fd of
 *             mempressure.shrinker> <chunk size>" written to
 *             cgroup.event_control registers, "<eventfd> +n" written to
 *             mempressure.shrinker accounts, a read of the eventfd gives
 *             n (2^63 or more: the cgroup was removed).
 *  inherited  a registration handed down in MPCTL_SHRINKER_* by
 *             mpctl register (mpctl-register(1)): the kernel's (v1 or v2),
 *             or mpctl's emulation on a stock kernel, which speaks the v1
 *             protocol over a pipe ("<eventfd> +n\n" lines). An early
 *             warning eventfd (MPCTL_SHRINKER_AFD) is read with the
 *             requests, and what it asks is taken off the kernel's counter.
 *
 * Chunks the kernel may take by itself (offering): mpctl_chunk_offer()
 * writes a non-zero marker at the start of every page and marks the chunk
 * MADV_FREE; reclaim may then drop its pages without asking. A dropped
 * page reads zero: mpctl_chunk_lost() tells. mpctl_chunk_take() takes an
 * offered chunk back for use, atomically per page.
 *
 * Errors: -1 with errno set. The calls that open a registration also
 * accept a struct mpctl_shrinker_err for a one-line message (may be NULL).
 *
 * Threads: a handle is immutable once opened; fd, read and add may be
 * called from any thread at once (each is one or two system calls on
 * kernel objects that serialise them). Nothing in the request path (fd,
 * read, add, offer, lost, take) allocates memory.
 */
#ifndef MPCTL_SHRINKER_H
#define MPCTL_SHRINKER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mpctl_shrinker_backend {
	MPCTL_SHRINKER_KERNEL_V1 = 1,
	MPCTL_SHRINKER_KERNEL_V2,
	MPCTL_SHRINKER_EMULATED, /* mpctl register's emulator */
};

/* a one-line reason for a failed open, beside errno */
struct mpctl_shrinker_err {
	int errnum;
	char msg[256];
};

struct mpctl_shrinker;

/*
 * Register a shrinker on the kernel: cgroup is the directory of the
 * cgroup holding mempressure.shrinker (cgroup2 or a cgroup v1
 * mempressure hierarchy); NULL: the caller's own cgroup, found in
 * /proc/self/cgroup and /proc/self/mountinfo. chunk_size in bytes, > 0.
 * errno ENOENT: no such file (not a patched kernel, or no mempressure
 * controller there); EINVAL: a bad chunk size; EACCES, EPERM.
 */
int mpctl_shrinker_register(const char *cgroup, uint64_t chunk_size,
			    struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err);

/*
 * The registration handed down by mpctl register (MPCTL_SHRINKER_*).
 * The fds are checked to be what their variables say (an eventfd, a
 * cgroupfs mempressure.shrinker, the emulator's pipe) and left open by
 * mpctl_shrinker_close(). errno ENOENT: the variables are absent;
 * EINVAL: a value is malformed or an fd is not what it should be.
 */
int mpctl_shrinker_from_env(struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err);

/*
 * The environment's registration if there is one, else the kernel's for
 * the caller's own cgroup (mpctl_shrinker_register(NULL, ...)); a
 * registration from the environment must have chunk_size (EINVAL).
 */
int mpctl_shrinker_open(uint64_t chunk_size, struct mpctl_shrinker **out,
			struct mpctl_shrinker_err *err);

/*
 * A handle over fds already registered: the backend says which protocol;
 * efd is the request eventfd (-1 for kernel v2), fd mempressure.shrinker
 * or the emulator's pipe, afd an early-warning eventfd or -1. own_fds:
 * mpctl_shrinker_close() closes efd, fd and afd. Nothing is checked but
 * the numbers (EINVAL).
 */
int mpctl_shrinker_from_fds(enum mpctl_shrinker_backend backend, int efd,
			    int fd, int afd, uint64_t chunk_size, int own_fds,
			    struct mpctl_shrinker **out,
			    struct mpctl_shrinker_err *err);

/* Readable (POLLIN) while a request may be pending. Never blocks. */
int mpctl_shrinker_fd(const struct mpctl_shrinker *sh);

/*
 * Take the pending request: 1 with *chunks (the asker already lowered its
 * counter by *chunks), 0 if none was pending, -1 on error. Never blocks.
 * errno ENODEV: the kernel v1 cgroup was removed (no request can come).
 */
int mpctl_shrinker_read(struct mpctl_shrinker *sh, uint64_t *chunks);

/*
 * Account reclaimable chunks: +n adds, -n removes (the counter never
 * goes below zero), 0 does nothing. One write(2). errno EPIPE: the
 * emulator's process (mpctl register) has exited; SIGPIPE is raised
 * first unless the program ignores it.
 */
int mpctl_shrinker_add(struct mpctl_shrinker *sh, int64_t chunks);

enum mpctl_shrinker_backend
mpctl_shrinker_backend(const struct mpctl_shrinker *sh);
/* "kernel-v1", "kernel-v2", "emulated" */
const char *mpctl_shrinker_backend_name(enum mpctl_shrinker_backend b);
uint64_t mpctl_shrinker_chunk_size(const struct mpctl_shrinker *sh);
/*
 * The registration's fds, to hand it to a child (as mpctl register does):
 * the request eventfd (-1 for kernel v2) and the shrinker file or pipe.
 */
void mpctl_shrinker_fds(const struct mpctl_shrinker *sh, int *efd, int *fd);

/* Unregister (kernel), close what the handle owns, free it. NULL is ok. */
void mpctl_shrinker_close(struct mpctl_shrinker *sh);

/*
 * Offering. mem is page-aligned and size a multiple of the page size.
 * The first 8 bytes of every page belong to the marker while a chunk is
 * offered: mpctl_chunk_offer() overwrites them.
 *
 * mpctl_chunk_offer(): write the marker in every page, then MADV_FREE.
 * mpctl_chunk_lost(): 1 if reclaim dropped a page (its marker reads
 *   zero), else 0; reads only (a dropped page maps the zero page).
 * mpctl_chunk_take(): take the chunk back for use: every page's marker
 *   is rewritten with an atomic compare-and-swap, which dirties a page
 *   still there, so that reclaim may no longer drop it. 0: the whole
 *   chunk was still there; 1: a page was dropped (the contents are gone:
 *   write them again). Both are held again either way.
 * -1 with EINVAL for an unaligned chunk; offer: madvise(2)'s errno.
 */
int mpctl_chunk_offer(void *mem, size_t size);
int mpctl_chunk_lost(const void *mem, size_t size);
int mpctl_chunk_take(void *mem, size_t size);

#ifdef __cplusplus
}
#endif

#endif
