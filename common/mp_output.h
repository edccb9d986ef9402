/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output files that are never destroyed.
 *
 * A regular file (or a missing path) is written through a temporary file
 * in the same directory (O_TMPFILE, unnamed until the commit, so that a
 * SIGKILL leaves nothing) and renamed over it only once the whole document
 * is written, so FILE is either the old file or the new one, never a
 * truncated mix. A symlink to a regular file, or a dangling one, keeps the
 * link: its target is replaced or created. Anything else that exists (a
 * device node such as /dev/null, a fifo, a symlink to one) is written into
 * directly, opened by mp_output_open() (a fifo: once there is data, when
 * it may wait for a reader) and never truncated, created or deleted. A
 * failure before the commit leaves the target untouched.
 *
 * A name that reaches a descriptor of ours (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N) is written into that descriptor, at its
 * offset and with its O_APPEND, as a shell's >> or > left it: the file it
 * is open on is never replaced.
 *
 * Every symlink on the way (of every component, however long the chain)
 * is checked by the kernel's protected_symlinks rule, and an existing file
 * by its protected_regular rule, whatever the sysctls say: root never
 * follows another user's link in a sticky or world-writable directory,
 * nor replaces a file planted there. The new file is never given to
 * another owner: it is the writer's, with the mode of the file replaced.
 */
#ifndef MP_OUTPUT_H
#define MP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "mp_err.h"

struct mp_output {
	const char *path;  /* as the user gave it */
	char target[4096]; /* the file renamed over or written into */
	char tmp[4096];	   /* the temporary file's name, "" if none */
	char tmpl[4096];   /* ".NAME.XXXXXX" beside the target */
	bool anon;	   /* O_TMPFILE: no name until the commit */
	bool direct;	   /* not a regular file: write into it */
	bool isfd;	   /* direct, into our descriptor fd */
	int fd;		   /* isfd: the descriptor (/dev/fd/N) */
	FILE *f;
};

/*
 * Check that path can be written and, for a regular file or a missing
 * path, create the temporary file. Nothing is written to path yet.
 */
int mp_output_open(struct mp_output *out, const char *path, struct mp_err *err);
/* The stream to write the document into (opens a direct target now). */
FILE *mp_output_stream(struct mp_output *out, struct mp_err *err);
/* Flush, close and rename the temporary file over the target. */
int mp_output_commit(struct mp_output *out, struct mp_err *err);
/* Give up: remove the temporary file; the target is left as it was. */
void mp_output_abort(struct mp_output *out);
/* Whether two output names are one regular file, or will be (the same
 * name, a link to it, another spelling of its directory); "-" is stdout.
 * A device node or a fifo is never "one file": it takes each in turn. */
bool mp_output_same(const char *a, const char *b);

#endif
