/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tables: every table mpctl prints goes through here, as text with its
 * columns aligned to their widest cell (a long metric name widens its
 * column, it never pushes the rest), as markdown, or as HTML.
 *
 * Why not libsmartcols (util-linux's table library, which lsmem uses):
 * Debian ships it only as a shared library (libsmartcols-dev has no
 * libsmartcols.a), and the VM's initramfs runs a static mpctl ("make
 * static"); nor does it write markdown, which --compare's export needs.
 * What the tables need of it (a width per column, left or right, a
 * header, free text after the first cell) is the little below.
 *
 * Cells are copied; a failed allocation is remembered and returned by
 * mp_table_write(), so that the rows can be added without a check each.
 */
#ifndef MP_TABLE_H
#define MP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mp_err.h"

enum mp_table_format {
	MP_TABLE_TEXT = 0,
	MP_TABLE_MARKDOWN,
	MP_TABLE_HTML,
};

enum mp_table_align {
	MP_TABLE_LEFT = 0,
	MP_TABLE_RIGHT,
};

/* head: a string that outlives the table (a literal) */
struct mp_table_col {
	const char *head;
	enum mp_table_align align;
};

struct mp_table;

/* A table of @ncols columns (copied), or NULL (ENOMEM). */
struct mp_table *mp_table_new(const struct mp_table_col *cols, size_t ncols);
/* Append a row of ncols cells (copied); a NULL cell is empty. */
void mp_table_row(struct mp_table *t, const char *const *cells);
/*
 * Append a row whose first cell is @first and whose other columns hold
 * @text as one free cell: in text it follows the first column and widens
 * nothing ("kernel  skipped: needs the kernel's shrinker").
 */
void mp_table_note(struct mp_table *t, const char *first, const char *text);
/* Whether any row was added. */
bool mp_table_empty(const struct mp_table *t);
/*
 * Write the table into @f: text (each line starting with @indent, the
 * header included unless @t has none, no trailing blanks), markdown (a
 * GitHub table, '|' in a cell escaped, columns padded to line up) or an
 * HTML <table> (cells escaped). 0, or -1 with err set (ENOMEM while the
 * rows were added, a write error).
 */
int mp_table_write(FILE *f, const struct mp_table *t, enum mp_table_format fmt,
		   const char *indent, struct mp_err *err);
/* Text without its header line (for lists such as --list). */
void mp_table_no_header(struct mp_table *t);
void mp_table_free(struct mp_table *t);

/* Escape @s for XML/HTML text or attributes into f. */
void mp_xml_puts(FILE *f, const char *s);

#endif
