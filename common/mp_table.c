// SPDX-License-Identifier: GPL-2.0
/*
 * Tables in text, markdown and HTML; see mp_table.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mp_table.h"

struct mp_table_line {
	char **cells; /* ncols cells; a note: cells[0] and cells[1] */
	bool note;
};

struct mp_table {
	struct mp_table_col *cols;
	const char **heads; /* cols[].head, as a row */
	size_t ncols;
	struct mp_table_line *lines;
	size_t nlines, alloc;
	bool no_header;
	bool nomem; /* an allocation failed while adding */
};

struct mp_table *mp_table_new(const struct mp_table_col *cols, size_t ncols)
{
	struct mp_table *t = calloc(1, sizeof(*t));
	size_t i;

	if (!t)
		return NULL;
	t->cols = calloc(ncols, sizeof(*cols));
	t->heads = calloc(ncols, sizeof(char *));
	if (!t->cols || !t->heads) {
		mp_table_free(t);
		return NULL;
	}
	memcpy(t->cols, cols, ncols * sizeof(*cols));
	t->ncols = ncols;
	for (i = 0; i < ncols; i++)
		t->heads[i] = cols[i].head;
	return t;
}

static void line_free(struct mp_table_line *l, size_t n)
{
	size_t i;

	if (!l->cells)
		return;
	for (i = 0; i < n; i++)
		free(l->cells[i]);
	free(l->cells);
}

void mp_table_free(struct mp_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nlines; i++)
		line_free(&t->lines[i], t->ncols);
	free(t->lines);
	free(t->heads);
	free(t->cols);
	free(t);
}

void mp_table_no_header(struct mp_table *t)
{
	t->no_header = true;
}

bool mp_table_empty(const struct mp_table *t)
{
	return !t->nlines;
}

/* a new line of ncols empty cells, or NULL (remembered) */
static struct mp_table_line *add_line(struct mp_table *t)
{
	struct mp_table_line *l;

	if (t->nomem)
		return NULL;
	if (t->nlines == t->alloc) {
		size_t n = t->alloc ? 2 * t->alloc : 16;

		l = reallocarray(t->lines, n, sizeof(*l));
		if (!l)
			goto nomem;
		t->lines = l;
		t->alloc = n;
	}
	l = &t->lines[t->nlines];
	memset(l, 0, sizeof(*l));
	l->cells = calloc(t->ncols < 2 ? 2 : t->ncols, sizeof(char *));
	if (!l->cells)
		goto nomem;
	t->nlines++;
	return l;
nomem:
	t->nomem = true;
	return NULL;
}

static void set_cell(struct mp_table *t, struct mp_table_line *l, size_t i,
		     const char *s)
{
	l->cells[i] = strdup(s ? s : "");
	if (!l->cells[i])
		t->nomem = true;
}

void mp_table_row(struct mp_table *t, const char *const *cells)
{
	struct mp_table_line *l = add_line(t);
	size_t i;

	for (i = 0; l && i < t->ncols; i++)
		set_cell(t, l, i, cells[i]);
}

void mp_table_note(struct mp_table *t, const char *first, const char *text)
{
	struct mp_table_line *l = add_line(t);

	if (!l)
		return;
	l->note = true;
	set_cell(t, l, 0, first);
	set_cell(t, l, 1, text);
}

/* characters on screen: UTF-8 lead bytes; markdown's escapes count */
static size_t width(const char *s, enum mp_table_format fmt)
{
	size_t w = 0;

	for (; s && *s; s++)
		w += ((*s & 0xc0) != 0x80) +
		     (fmt == MP_TABLE_MARKDOWN && *s == '|');
	return w;
}

static void pad(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

/* a markdown cell: '|' escaped */
static void md_puts(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void mp_xml_puts(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* one cell of text or markdown, padded to w as its column is aligned */
static void put_cell(FILE *f, const char *s, size_t w,
		     enum mp_table_align align, enum mp_table_format fmt)
{
	size_t sw = width(s, fmt);

	if (align == MP_TABLE_RIGHT)
		pad(f, w > sw ? w - sw : 0);
	if (fmt == MP_TABLE_MARKDOWN)
		md_puts(f, s);
	else
		fputs(s, f);
	if (align == MP_TABLE_LEFT)
		pad(f, w > sw ? w - sw : 0);
}

/*
 * Text and markdown: the same grid. In text, the last column left-aligned
 * is not padded (no trailing blanks) and a note's text follows the first
 * column; in markdown a note's text is the second cell
 */
static void grid_line(FILE *f, const struct mp_table *t, const size_t *w,
		      const char *const *cells, bool note,
		      enum mp_table_format fmt, const char *indent)
{
	bool md = fmt == MP_TABLE_MARKDOWN;
	size_t i, n = t->ncols;

	fputs(md ? "| " : indent, f);
	for (i = 0; i < n; i++) {
		const char *s = !note ? cells[i] : i < 2 ? cells[i] : "";
		bool last = i + 1 == n || (note && i == 1 && !md);
		size_t cw = w[i];

		if (i)
			fputs(md ? " | " : "  ", f);
		if (note && i == 1 && !md) {
			fputs(s, f);
			break;
		}
		if (!md && last && t->cols[i].align == MP_TABLE_LEFT)
			cw = 0;
		put_cell(f, s, cw, t->cols[i].align, fmt);
	}
	fputs(md ? " |\n" : "\n", f);
}

static void write_grid(FILE *f, const struct mp_table *t, size_t *w,
		       enum mp_table_format fmt, const char *indent)
{
	bool head = !t->no_header || fmt == MP_TABLE_MARKDOWN;
	size_t i, j;

	for (j = 0; j < t->ncols; j++) {
		w[j] = head ? width(t->heads[j], fmt) : 0;
		if (fmt == MP_TABLE_MARKDOWN && w[j] < 3)
			w[j] = 3;
	}
	for (i = 0; i < t->nlines; i++) {
		const struct mp_table_line *l = &t->lines[i];

		for (j = 0; j < t->ncols; j++) {
			/* a note's text widens nothing in text */
			if (l->note && j > (fmt == MP_TABLE_MARKDOWN ? 1 : 0))
				break;
			if (width(l->cells[j], fmt) > w[j])
				w[j] = width(l->cells[j], fmt);
		}
	}
	if (head)
		grid_line(f, t, w, t->heads, false, fmt, indent);
	if (fmt == MP_TABLE_MARKDOWN) {
		fputs("|", f);
		for (j = 0; j < t->ncols; j++) {
			fputc(' ', f);
			for (i = 0; i + 1 < w[j]; i++)
				fputc('-', f);
			fputs(t->cols[j].align == MP_TABLE_RIGHT ? ":" : "-",
			      f);
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	for (i = 0; i < t->nlines; i++)
		grid_line(f, t, w, (const char *const *)t->lines[i].cells,
			  t->lines[i].note, fmt, indent);
}

static void html_cell(FILE *f, const char *tag, const char *s,
		      enum mp_table_align align, size_t span)
{
	fprintf(f, "<%s", tag);
	if (span > 1)
		fprintf(f, " colspan=\"%zu\"", span);
	if (align == MP_TABLE_LEFT)
		fputs(" style=\"text-align:left\"", f);
	fputc('>', f);
	mp_xml_puts(f, s);
	fprintf(f, "</%s>", tag);
}

static void write_html(FILE *f, const struct mp_table *t)
{
	size_t i, j;

	fputs("<table>\n", f);
	if (!t->no_header) {
		fputs("<tr>", f);
		for (j = 0; j < t->ncols; j++)
			html_cell(f, "th", t->cols[j].head, t->cols[j].align,
				  1);
		fputs("</tr>\n", f);
	}
	for (i = 0; i < t->nlines; i++) {
		const struct mp_table_line *l = &t->lines[i];

		fputs("<tr>", f);
		for (j = 0; j < t->ncols; j++) {
			if (l->note && j == 1) {
				html_cell(f, "td", l->cells[1], MP_TABLE_LEFT,
					  t->ncols - 1);
				break;
			}
			html_cell(f, "td", l->cells[j], t->cols[j].align, 1);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int mp_table_write(FILE *f, const struct mp_table *t, enum mp_table_format fmt,
		   const char *indent, struct mp_err *err)
{
	size_t *w;

	if (t->nomem)
		return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "table");
	if (fmt == MP_TABLE_HTML) {
		write_html(f, t);
	} else {
		w = calloc(t->ncols, sizeof(*w));
		if (!w)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "table");
		write_grid(f, t, w, fmt, indent ? indent : "");
		free(w);
	}
	if (ferror(f))
		return mp_errf(err, MP_EXIT_FAILURE, errno ? errno : EIO,
			       "write error");
	return 0;
}
