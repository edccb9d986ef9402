// SPDX-License-Identifier: GPL-2.0
/*
 * SVG and HTML pictures of a report; see mp_svg.h.
 *
 * Timeline samples are read by name, the first key found wins, so the
 * drawing follows the stress document without a copy of its layout:
 * time (t_ns, time_ns, elapsed_ns or t_ms), usage_bytes, limit_bytes,
 * chunks_held, events per level ("events": {"low", "medium",
 * "critical"}), and reclaim requests. Counters that only grow are drawn
 * as their increase per sample.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mp_report.h"
#include "mp_report_text.h"
#include "mp_svg.h"

#define W	960
#define PANEL_H 380
#define LEFT	80
#define RIGHT	30
#define PLOT_W	(W - LEFT - RIGHT)

enum series {
	S_USAGE,
	S_LIMIT,
	S_CHUNKS,
	S_REQ,
	S_LOW,
	S_MEDIUM,
	S_CRITICAL,
	S_EVENTS, /* all levels, when a sample has no split */
	S_NR,
};

static const char *const keys[S_NR][5] = {
	[S_USAGE] = { "usage_bytes", "memory.usage_bytes" },
	[S_LIMIT] = { "limit_bytes", "memory.limit_bytes" },
	[S_CHUNKS] = { "chunks_held", "chunks", "held_chunks" },
	[S_REQ] = { "requests", "reclaim_requests", "chunks_requested",
		    "requested_chunks" },
	[S_LOW] = { "events.low", "events_low" },
	[S_MEDIUM] = { "events.medium", "events_medium" },
	[S_CRITICAL] = { "events.critical", "events.oom", "events_critical" },
	[S_EVENTS] = { "events", "events_total" },
};

/* clang-format off */
static const char *const colour[S_NR] = {
	[S_USAGE] = "#1f77b4",
	[S_LIMIT] = "#d62728",
	[S_CHUNKS] = "#2ca02c",
	[S_REQ] = "#ff7f0e",
	[S_LOW] = "#f2c14e",
	[S_MEDIUM] = "#f08a24",
	[S_CRITICAL] = "#c0392b",
	[S_EVENTS] = "#8e6c8a",
};
/* clang-format on */

struct timeline {
	size_t n;
	double *t;	 /* seconds from the start */
	double *v[S_NR]; /* NAN where a sample lacks the series */
	bool have[S_NR];
};

static int sample_time(const json_t *s, double *t)
{
	if (!mp_json_path_num(s, "t_ns", t) ||
	    !mp_json_path_num(s, "time_ns", t) ||
	    !mp_json_path_num(s, "elapsed_ns", t)) {
		*t /= 1e9;
		return 0;
	}
	if (!mp_json_path_num(s, "t_ms", t)) {
		*t /= 1e3;
		return 0;
	}
	return -1;
}

static void timeline_free(struct timeline *tl)
{
	int i;

	free(tl->t);
	for (i = 0; i < S_NR; i++)
		free(tl->v[i]);
	memset(tl, 0, sizeof(*tl));
}

/* A counter that never goes down is cumulative: draw its increments. */
static void to_increments(double *v, size_t n)
{
	double prev = 0;
	size_t i;

	for (i = 1; i < n; i++)
		if (!isnan(v[i]) && !isnan(v[i - 1]) && v[i] < v[i - 1])
			return;
	for (i = 0; i < n; i++) {
		double cur = v[i];

		if (isnan(cur))
			continue;
		v[i] = cur - prev;
		prev = cur;
	}
}

static int timeline_load(const json_t *run, struct timeline *tl)
{
	json_t *arr = json_object_get(run, "timeline"), *s;
	double limit = NAN, t0 = NAN;
	size_t i, k;
	int j;

	memset(tl, 0, sizeof(*tl));
	if (!json_is_array(arr) || !json_array_size(arr))
		return -1;
	tl->t = calloc(json_array_size(arr), sizeof(double));
	for (j = 0; j < S_NR; j++)
		tl->v[j] = calloc(json_array_size(arr), sizeof(double));
	for (j = 0; j < S_NR; j++)
		if (!tl->v[j] || !tl->t) {
			timeline_free(tl);
			return -1;
		}
	mp_json_path_num(run, "limit_bytes", &limit);
	json_array_foreach(arr, i, s) {
		double t;

		if (sample_time(s, &t))
			continue;
		if (isnan(t0))
			t0 = t;
		tl->t[tl->n] = t - t0;
		for (j = 0; j < S_NR; j++) {
			double v = NAN;

			for (k = 0; k < 5 && keys[j][k]; k++)
				if (!mp_json_path_num(s, keys[j][k], &v))
					break;
			if (j == S_LIMIT && isnan(v))
				v = limit;
			tl->v[j][tl->n] = v;
			if (!isnan(v))
				tl->have[j] = true;
		}
		tl->n++;
	}
	if (!tl->n) {
		timeline_free(tl);
		return -1;
	}
	to_increments(tl->v[S_REQ], tl->n);
	for (j = S_LOW; j <= S_EVENTS; j++)
		to_increments(tl->v[j], tl->n);
	return 0;
}

static double series_max(const struct timeline *tl, int s)
{
	double m = 0;
	size_t i;

	for (i = 0; i < tl->n; i++)
		if (!isnan(tl->v[s][i]) && tl->v[s][i] > m)
			m = tl->v[s][i];
	return m;
}

/* a round number at or above v, for axis ends */
static double nice_ceil(double v)
{
	double p, r;

	if (v <= 0)
		return 1;
	p = pow(10, floor(log10(v)));
	r = v / p;
	if (r <= 1)
		return p;
	if (r <= 2)
		return 2 * p;
	if (r <= 2.5)
		return 2.5 * p;
	if (r <= 5)
		return 5 * p;
	return 10 * p;
}

struct plot {
	double y, h; /* top and height in the picture */
	double tmax; /* seconds at the right edge */
	double vmax; /* value at the top */
};

static double px(const struct plot *p, double t)
{
	return LEFT + (p->tmax > 0 ? t / p->tmax : 0) * PLOT_W;
}

static double py(const struct plot *p, double v)
{
	return p->y + p->h - (p->vmax > 0 ? v / p->vmax : 0) * p->h;
}

static void frame(FILE *f, const struct plot *p, const char *label,
		  double scale, const char *unit)
{
	double t, step;

	fprintf(f,
		"<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		"fill=\"#fafafa\" stroke=\"#999\"/>\n",
		LEFT, p->y, PLOT_W, p->h);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
		"text-anchor=\"end\">%g%s</text>\n",
		LEFT - 4, p->y + 10, p->vmax / scale, unit);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
		"text-anchor=\"end\">0</text>\n",
		LEFT - 4, p->y + p->h);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
		"text-anchor=\"end\" fill=\"#444\">",
		LEFT - 4, p->y + p->h / 2 + 4);
	mp_xml_puts(f, label);
	fputs("</text>\n", f);
	step = nice_ceil(p->tmax / 10);
	for (t = step; t < p->tmax; t += step)
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
			px(p, t), p->y, px(p, t), p->y + p->h);
}

static void polyline(FILE *f, const struct plot *p, const struct timeline *tl,
		     int s, const char *extra)
{
	size_t i;

	fprintf(f,
		"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5"
		"\" %s points=\"",
		colour[s], extra);
	for (i = 0; i < tl->n; i++)
		if (!isnan(tl->v[s][i]))
			fprintf(f, "%.1f,%.1f ", px(p, tl->t[i]),
				py(p, fmin(tl->v[s][i], p->vmax)));
	fputs("\"/>\n", f);
}

/* x of a bar starting at t, kept inside the plot */
static double bar_x(const struct plot *p, double t, double bw)
{
	return fmin(px(p, t), LEFT + PLOT_W - bw);
}

static void legend(FILE *f, double x, double y, int s, const char *name)
{
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" "
		"fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">"
		"%s</text>\n",
		x, y - 9, colour[s], x + 14, y, name);
}

static void panel(FILE *f, const json_t *sc, const json_t *run,
		  const struct timeline *tl, double top)
{
	double kills = 0;
	const char *name = json_string_value(json_object_get(sc, "name"));
	const char *desc =
		json_string_value(json_object_get(sc, "description"));
	struct plot mem, chk, ev;
	double tmax, m, bw;
	size_t i;
	int j;

	/* the run's own length: panels of runs cut short stay readable */
	tmax = tl->n && tl->t[tl->n - 1] > 0 ? tl->t[tl->n - 1] : 1;
	fprintf(f, "<g class=\"scenario\" id=\"scenario-");
	mp_xml_puts(f, name);
	fprintf(f,
		"\">\n<text x=\"%d\" y=\"%.1f\" font-size=\"15\" "
		"font-weight=\"bold\">",
		LEFT, top + 22);
	mp_xml_puts(f, name);
	fputs("</text>\n", f);
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
		"fill=\"#555\">",
		LEFT, top + 40);
	mp_xml_puts(f, desc ? desc : "");
	fprintf(f, " (first run of %zu",
		json_array_size(json_object_get(sc, "runs")));
	if (!mp_json_path_num(run, "oom_kills", &kills) && kills > 0)
		fprintf(f, "; <tspan fill=\"#c0392b\">%g OOM kill%s</tspan>",
			kills, kills == 1 ? "" : "s");
	fputs(")</text>\n", f);

	mem = (struct plot){ top + 55, 130, tmax, 0 };
	m = fmax(series_max(tl, S_USAGE), series_max(tl, S_LIMIT));
	mem.vmax = nice_ceil(m / 1048576) * 1048576;
	frame(f, &mem, "memory", 1048576, " MiB");
	if (tl->have[S_LIMIT])
		polyline(f, &mem, tl, S_LIMIT, "stroke-dasharray=\"6,3\"");
	if (tl->have[S_USAGE])
		polyline(f, &mem, tl, S_USAGE, "");
	legend(f, LEFT + 10, mem.y + 16, S_USAGE, "usage");
	legend(f, LEFT + 80, mem.y + 16, S_LIMIT, "limit");

	chk = (struct plot){ top + 200, 70, tmax, 0 };
	chk.vmax = nice_ceil(series_max(tl, S_CHUNKS));
	frame(f, &chk, "chunks", 1, "");
	if (tl->have[S_CHUNKS])
		polyline(f, &chk, tl, S_CHUNKS, "");
	/* reclaim requests: ticks along the bottom of the chunks plot */
	/* bars 80% of a sample interval wide */
	bw = tl->n > 1 ? (px(&chk, tl->t[tl->n - 1]) - px(&chk, tl->t[0])) /
				 (tl->n - 1) * 0.8 :
			 4;
	bw = fmax(1.0, bw);
	if (tl->have[S_REQ]) {
		m = series_max(tl, S_REQ);
		for (i = 0; i < tl->n; i++) {
			double v = tl->v[S_REQ][i], h;

			if (isnan(v) || v <= 0)
				continue;
			h = 6 + 18 * (m > 0 ? v / m : 0);
			fprintf(f,
				"<rect class=\"request\" x=\"%.1f\" "
				"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\" opacity=\"0.8\"/>\n",
				bar_x(&chk, tl->t[i], bw), chk.y + chk.h - h,
				bw, h, colour[S_REQ]);
		}
	}
	legend(f, LEFT + 10, chk.y + 16, S_CHUNKS, "chunks held");
	legend(f, LEFT + 110, chk.y + 16, S_REQ, "reclaim requests");

	ev = (struct plot){ top + 285, 70, tmax, 0 };
	m = 0;
	for (i = 0; i < tl->n; i++) {
		double sum = 0;

		for (j = S_LOW; j <= S_EVENTS; j++)
			if (!isnan(tl->v[j][i]))
				sum += tl->v[j][i];
		m = fmax(m, sum);
	}
	ev.vmax = nice_ceil(m);
	frame(f, &ev, "events", 1, "");
	for (i = 0; i < tl->n; i++) {
		double base = 0;

		for (j = S_LOW; j <= S_EVENTS; j++) {
			double v = tl->v[j][i];

			if (isnan(v) || v <= 0)
				continue;
			fprintf(f,
				"<rect class=\"event-%s\" x=\"%.1f\" "
				"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>\n",
				j == S_LOW	? "low" :
				j == S_MEDIUM	? "medium" :
				j == S_CRITICAL ? "critical" :
						  "all",
				bar_x(&ev, tl->t[i], bw), py(&ev, base + v), bw,
				py(&ev, base) - py(&ev, base + v), colour[j]);
			base += v;
		}
	}
	legend(f, LEFT + 10, ev.y + 16, S_LOW, "low");
	legend(f, LEFT + 60, ev.y + 16, S_MEDIUM, "medium");
	legend(f, LEFT + 130, ev.y + 16, S_CRITICAL, "critical");
	if (tl->have[S_EVENTS])
		legend(f, LEFT + 200, ev.y + 16, S_EVENTS,
		       "events (all levels)");
	/* time axis under the last plot, at the grid lines */
	bw = nice_ceil(tmax / 10);
	for (m = 0; m <= tmax + bw / 1000; m += bw)
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"middle\">%g s</text>\n",
			px(&ev, m), ev.y + ev.h + 14, m);
	fputs("</g>\n", f);
}

static void empty_panel(FILE *f, const json_t *sc, double top)
{
	const char *name = json_string_value(json_object_get(sc, "name"));

	const char *why = json_string_value(json_object_get(sc, "reason"));

	fprintf(f,
		"<g class=\"scenario\">\n<text x=\"%d\" y=\"%.1f\" "
		"font-size=\"15\" font-weight=\"bold\">",
		LEFT, top + 22);
	mp_xml_puts(f, name);
	fprintf(f,
		"</text>\n<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
		"fill=\"#555\">no timeline",
		LEFT, top + 42);
	if (why) {
		fputs(": ", f);
		mp_xml_puts(f, why);
	}
	fputs("</text>\n</g>\n", f);
}

static const json_t *first_timeline_run(const json_t *sc)
{
	json_t *runs = json_object_get(sc, "runs"), *r;
	size_t i;

	json_array_foreach(runs, i, r)
		if (json_array_size(json_object_get(r, "timeline")))
			return r;
	return NULL;
}

#define EMPTY_H 60

static const json_t *first_timeline_run(const json_t *sc);

int mp_svg_report(FILE *f, const json_t *report, struct mp_err *err)
{
	json_t *scs = json_object_get(report, "scenarios"), *sc;
	const char *kernel = json_string_value(
		mp_json_path(report, "system.kernel_release"));
	double top = 30, height = 30;
	size_t i;

	if (mp_report_check(report, "report", err))
		return -1;
	json_array_foreach(scs, i, sc)
		height += first_timeline_run(sc) ? PANEL_H : EMPTY_H;
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
		"font-family=\"sans-serif\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, height + 10, W, height + 10);
	fprintf(f,
		"<text x=\"%d\" y=\"20\" font-size=\"13\" fill=\"#333\">"
		"mpctl report, kernel ",
		LEFT);
	mp_xml_puts(f, kernel ? kernel : "unknown");
	fputs("</text>\n", f);
	json_array_foreach(scs, i, sc) {
		const json_t *run = first_timeline_run(sc);
		struct timeline tl;

		if (run && !timeline_load(run, &tl)) {
			panel(f, sc, run, &tl, top);
			timeline_free(&tl);
			top += PANEL_H;
		} else {
			empty_panel(f, sc, top);
			top += run ? PANEL_H : EMPTY_H;
		}
	}
	fputs("</svg>\n", f);
	if (ferror(f))
		return mp_errf(err, MP_EXIT_FAILURE, errno ? errno : EIO,
			       "write error");
	return 0;
}

int mp_html_report(FILE *f, const json_t *report, struct mp_err *err)
{
	json_t *scs = json_object_get(report, "scenarios"), *sc;
	size_t i;
	int ret;

	if (mp_report_check(report, "report", err))
		return -1;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
	      "<title>mpctl report</title><style>body{font-family:sans-serif}"
	      "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
	      "padding:2px 8px;text-align:right}</style></head><body>\n"
	      "<h1>mpctl report</h1>\n",
	      f);
	json_array_foreach(scs, i, sc) {
		struct mp_table *t = mp_report_scenario_table(sc);

		fputs("<h2>", f);
		mp_xml_puts(f, json_string_value(json_object_get(sc, "name")));
		fputs("</h2>\n", f);
		if (!t)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "table");
		ret = mp_table_write(f, t, MP_TABLE_HTML, NULL, err);
		mp_table_free(t);
		if (ret)
			return -1;
	}
	if (mp_svg_report(f, report, err))
		return -1;
	fputs("</body></html>\n", f);
	return 0;
}
