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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_parse.h"
#include "mp_report.h"
#include "mp_report_text.h"
#include "mp_svg.h"

#define W	960
#define PANEL_H 380
#define LEFT	80
#define RIGHT	30
#define PLOT_W	(W - LEFT - RIGHT)
#define MIB	1048576.0

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
	[S_REQ] = "#9467bd",
	[S_LOW] = "#f2c14e",
	[S_MEDIUM] = "#f08a24",
	[S_CRITICAL] = "#c0392b",
	[S_EVENTS] = "#8c564b",
};
/* clang-format on */

struct timeline {
	size_t n;
	double *t;	 /* seconds from the start */
	double *v[S_NR]; /* NAN where a sample lacks the series */
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

/* the run's length in seconds from its document, NAN when it has none */
static double run_secs(const json_t *run)
{
	double d;

	if (!mp_json_path_num(run, "duration_ns", &d) ||
	    !mp_json_path_num(run, "stress.duration_ns", &d))
		return d / 1e9;
	return NAN;
}

static int timeline_load(const json_t *run, struct timeline *tl)
{
	json_t *arr = json_object_get(run, "timeline"), *s;
	double limit = NAN, t0 = NAN, end = run_secs(run), last = NAN;
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
		last = t;
		tl->t[tl->n] = t - t0;
		for (j = 0; j < S_NR; j++) {
			double v = NAN;

			for (k = 0; k < 5 && keys[j][k]; k++)
				if (!mp_json_path_num(s, keys[j][k], &v))
					break;
			if (j == S_LIMIT && isnan(v))
				v = limit;
			tl->v[j][tl->n] = v;
		}
		tl->n++;
	}
	/*
	 * The last sample is taken after the run, once its engine is
	 * stopped and its memory freed (stress/run.c, finish()): at the
	 * run's end, to the millisecond. It is the teardown's, not the run's
	 */
	if (tl->n > 1 && !isnan(end) && last >= end - 0.002)
		tl->n--;
	if (!tl->n) {
		timeline_free(tl);
		return -1;
	}
	to_increments(tl->v[S_REQ], tl->n);
	for (j = S_LOW; j <= S_EVENTS; j++)
		to_increments(tl->v[j], tl->n);
	return 0;
}

/*
 * The runs of a scenario on one time grid: per series and grid point the
 * lowest, the median and the highest of the runs that reach it (NAN where
 * none has a value). Lines (usage, limit, chunks) are interpolated
 * between a run's samples; counts per sample (requests, events) are the
 * sum of a run's increments in the grid point's interval
 */
struct band {
	size_t n, runs;
	double dt;
	double *t;
	double *lo[S_NR], *mid[S_NR], *hi[S_NR];
	bool have[S_NR]; /* a value somewhere; counts: one above 0 */
	double oom_kills;
};

static bool is_count(int s)
{
	return s >= S_REQ;
}

static double run_at(const struct timeline *tl, int s, double t, double dt)
{
	double sum = NAN;
	size_t i;

	if (is_count(s)) {
		if (t - dt / 2 > tl->t[tl->n - 1])
			return NAN;
		for (i = 0; i < tl->n; i++)
			if (tl->t[i] >= t - dt / 2 && tl->t[i] < t + dt / 2 &&
			    !isnan(tl->v[s][i]))
				sum = (isnan(sum) ? 0 : sum) + tl->v[s][i];
		return isnan(sum) && t - dt / 2 <= tl->t[tl->n - 1] ? 0 : sum;
	}
	if (t > tl->t[tl->n - 1] + 1e-9)
		return NAN;
	for (i = 1; i < tl->n && tl->t[i] < t; i++)
		;
	if (i == tl->n || tl->t[i] <= tl->t[i - 1] || isnan(tl->v[s][i - 1]))
		return tl->v[s][i < tl->n ? i : tl->n - 1];
	if (isnan(tl->v[s][i]))
		return tl->v[s][i - 1];
	return tl->v[s][i - 1] + (tl->v[s][i] - tl->v[s][i - 1]) *
					 (t - tl->t[i - 1]) /
					 (tl->t[i] - tl->t[i - 1]);
}

static void band_free(struct band *b)
{
	int s;

	free(b->t);
	for (s = 0; s < S_NR; s++) {
		free(b->lo[s]);
		free(b->mid[s]);
		free(b->hi[s]);
	}
	memset(b, 0, sizeof(*b));
}

/* the band of @nr timelines: 0, or -1 (ENOMEM) */
static int band_make(struct band *b, const struct timeline *tls, size_t nr)
{
	double tmax = 0, *vals;
	size_t i, k, r, m;
	int s;

	memset(b, 0, sizeof(*b));
	for (r = 0; r < nr; r++) {
		tmax = fmax(tmax, tls[r].t[tls[r].n - 1]);
		b->n = tls[r].n > b->n ? tls[r].n : b->n;
	}
	b->n = b->n < 2 ? 2 : b->n;
	b->runs = nr;
	b->dt = (tmax > 0 ? tmax : 1) / (b->n - 1);
	b->t = calloc(b->n, sizeof(double));
	vals = calloc(nr, sizeof(double));
	for (s = 0; s < S_NR; s++) {
		b->lo[s] = calloc(b->n, sizeof(double));
		b->mid[s] = calloc(b->n, sizeof(double));
		b->hi[s] = calloc(b->n, sizeof(double));
		if (!b->lo[s] || !b->mid[s] || !b->hi[s])
			break;
	}
	if (!b->t || !vals || s < S_NR) {
		free(vals);
		band_free(b);
		return -1;
	}
	for (k = 0; k < b->n; k++) {
		b->t[k] = k * b->dt;
		for (s = 0; s < S_NR; s++) {
			for (r = 0, m = 0; r < nr; r++) {
				double v = run_at(&tls[r], s, b->t[k], b->dt);

				if (isnan(v))
					continue;
				/* insertion sort: a few runs */
				for (i = m++; i > 0 && vals[i - 1] > v; i--)
					vals[i] = vals[i - 1];
				vals[i] = v;
			}
			b->lo[s][k] = m ? vals[0] : NAN;
			b->hi[s][k] = m ? vals[m - 1] : NAN;
			b->mid[s][k] = !m ? NAN :
				       m % 2 ?
					    vals[m / 2] :
					    (vals[m / 2 - 1] + vals[m / 2]) / 2;
			if (m && (!is_count(s) || b->hi[s][k] > 0))
				b->have[s] = true;
		}
	}
	free(vals);
	return 0;
}

static double band_max(const struct band *b, int s)
{
	double m = 0;
	size_t i;

	for (i = 0; i < b->n; i++)
		if (!isnan(b->hi[s][i]) && b->hi[s][i] > m)
			m = b->hi[s][i];
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
	double step; /* between two ticks of the value axis */
};

/* a plot's value axis up to @max (in axis units): round ticks, 3 to 5 */
static void plot_range(struct plot *p, double max, int ticks)
{
	p->step = nice_ceil(max / ticks);
	p->vmax = ceil(max / p->step - 1e-9) * p->step;
	if (p->vmax <= 0)
		p->vmax = p->step;
}

static double px(const struct plot *p, double t)
{
	return LEFT + (p->tmax > 0 ? t / p->tmax : 0) * PLOT_W;
}

static double py(const struct plot *p, double v)
{
	return p->y + p->h - (p->vmax > 0 ? v / p->vmax : 0) * p->h;
}

/* the frame, the value axis's ticks (class tick-NAME), the time grid */
static void frame(FILE *f, const struct plot *p, const char *name,
		  const char *unit)
{
	double t, v;

	fprintf(f,
		"<rect class=\"plot %s\" x=\"%d\" y=\"%.1f\" width=\"%d\" "
		"height=\"%.1f\" fill=\"#fafafa\" stroke=\"#999\"/>\n",
		name, LEFT, p->y, PLOT_W, p->h);
	for (v = 0; v <= p->vmax + p->step / 1000; v += p->step) {
		if (v > 0)
			fprintf(f,
				"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
				"y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
				LEFT, py(p, v), LEFT + PLOT_W, py(p, v));
		fprintf(f,
			"<text class=\"tick-%s\" x=\"%d\" y=\"%.1f\" "
			"font-size=\"10\" text-anchor=\"end\">%g%s</text>\n",
			name, LEFT - 4, py(p, v) + 3.5, v, v > 0 ? unit : "");
	}
	fprintf(f,
		"<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
		"text-anchor=\"middle\" fill=\"#444\" transform=\"rotate(-90 "
		"%d %.1f)\">%s</text>\n",
		LEFT - 48, p->y + p->h / 2, LEFT - 48, p->y + p->h / 2, name);
	for (t = nice_ceil(p->tmax / 10); t < p->tmax;
	     t += nice_ceil(p->tmax / 10))
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
			"y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
			px(p, t), p->y, px(p, t), p->y + p->h);
}

static void points(FILE *f, const struct plot *p, const struct band *b,
		   const double *v, double scale, bool back)
{
	size_t i, k;

	for (k = 0; k < b->n; k++) {
		i = back ? b->n - 1 - k : k;
		if (!isnan(v[i]))
			fprintf(f, "%.1f,%.1f ", px(p, b->t[i]),
				py(p, fmin(v[i] / scale, p->vmax)));
	}
}

/* the median line of series s, on its band from min to max when runs > 1 */
static void band_line(FILE *f, const struct plot *p, const struct band *b,
		      int s, double scale, const char *name, const char *extra)
{
	if (b->runs > 1 && !extra[0]) {
		fprintf(f,
			"<polygon class=\"band %s\" fill=\"%s\" "
			"fill-opacity=\"0.2\" stroke=\"none\" points=\"",
			name, colour[s]);
		points(f, p, b, b->hi[s], scale, false);
		points(f, p, b, b->lo[s], scale, true);
		fputs("\"/>\n", f);
	}
	fprintf(f,
		"<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" "
		"stroke-width=\"1.5\" %s points=\"",
		name, colour[s], extra);
	points(f, p, b, b->mid[s], scale, false);
	fputs("\"/>\n", f);
}

/* a legend row above a plot, of what is drawn in it; x moves on */
static void legend(FILE *f, double *x, double y, int s, const char *name)
{
	fprintf(f,
		"<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"10\" "
		"height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
		"font-size=\"11\">%s</text>\n",
		*x, y - 9, colour[s], *x + 14, y, name);
	*x += 14 + 6.5 * strlen(name) + 16;
}

/* x of a bar starting at t, kept inside the plot */
static double bar_x(const struct plot *p, double t, double bw)
{
	return fmin(fmax(px(p, t) - bw / 2, LEFT), LEFT + PLOT_W - bw);
}

static void memory_plot(FILE *f, const struct band *b, struct plot *mem)
{
	double lim = NAN, x = LEFT;
	char buf[32];
	size_t i;

	plot_range(mem, fmax(band_max(b, S_USAGE), band_max(b, S_LIMIT)) / MIB,
		   4);
	if (b->have[S_USAGE])
		legend(f, &x, mem->y - 6, S_USAGE,
		       b->runs > 1 ? "usage (median, min-max)" : "usage");
	if (b->have[S_LIMIT])
		legend(f, &x, mem->y - 6, S_LIMIT, "limit");
	frame(f, mem, "memory", " MiB");
	if (b->have[S_LIMIT]) {
		band_line(f, mem, b, S_LIMIT, MIB, "limit",
			  "stroke-dasharray=\"6,3\"");
		for (i = 0; i < b->n && isnan(lim); i++)
			lim = b->mid[S_LIMIT][i];
		fprintf(f,
			"<text class=\"limit-label\" x=\"%d\" y=\"%.1f\" "
			"font-size=\"10\" text-anchor=\"end\" fill=\"%s\">"
			"limit %s</text>\n",
			LEFT + PLOT_W - 4,
			py(mem, lim / MIB) +
				(py(mem, lim / MIB) - mem->y < 14 ? 11 : -3),
			colour[S_LIMIT],
			mp_fmt_size(lim > 0 ? (uint64_t)lim : 0, buf,
				    sizeof(buf)));
	}
	if (b->have[S_USAGE])
		band_line(f, mem, b, S_USAGE, MIB, "usage", "");
}

static void chunks_plot(FILE *f, const struct band *b, struct plot *chk,
			double bw)
{
	double x = LEFT, m;
	size_t i;

	plot_range(chk, band_max(b, S_CHUNKS), 2);
	if (b->have[S_CHUNKS])
		legend(f, &x, chk->y - 6, S_CHUNKS,
		       b->runs > 1 ? "chunks held (median, min-max)" :
				     "chunks held");
	if (b->have[S_REQ])
		legend(f, &x, chk->y - 6, S_REQ,
		       b->runs > 1 ? "reclaim requests (median)" :
				     "reclaim requests");
	frame(f, chk, "chunks", "");
	/* reclaim requests: bars along the bottom, height by count */
	m = band_max(b, S_REQ);
	for (i = 0; b->have[S_REQ] && i < b->n; i++) {
		double v = b->mid[S_REQ][i], h;

		if (isnan(v) || v <= 0)
			continue;
		h = 6 + 18 * (m > 0 ? v / m : 0);
		fprintf(f,
			"<rect class=\"request\" x=\"%.1f\" y=\"%.1f\" "
			"width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
			"opacity=\"0.8\"/>\n",
			bar_x(chk, b->t[i], bw), chk->y + chk->h - h, bw, h,
			colour[S_REQ]);
	}
	if (b->have[S_CHUNKS])
		band_line(f, chk, b, S_CHUNKS, 1, "chunks", "");
}

static void events_plot(FILE *f, const struct band *b, struct plot *ev,
			double bw)
{
	static const char *const names[] = { "low", "medium", "critical",
					     "events (all levels)" };
	static const char *const cls[] = { "low", "medium", "critical", "all" };
	double x = LEFT, m = 0;
	size_t i;
	int j;

	for (i = 0; i < b->n; i++) {
		double sum = 0;

		for (j = S_LOW; j <= S_EVENTS; j++)
			if (!isnan(b->mid[j][i]))
				sum += b->mid[j][i];
		m = fmax(m, sum);
	}
	plot_range(ev, m, 2);
	for (j = S_LOW; j <= S_EVENTS; j++)
		if (b->have[j])
			legend(f, &x, ev->y - 6, j, names[j - S_LOW]);
	frame(f, ev, "events", "");
	for (i = 0; i < b->n; i++) {
		double base = 0;

		for (j = S_LOW; j <= S_EVENTS; j++) {
			double v = b->mid[j][i];

			if (isnan(v) || v <= 0)
				continue;
			fprintf(f,
				"<rect class=\"event-%s\" x=\"%.1f\" "
				"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>\n",
				cls[j - S_LOW], bar_x(ev, b->t[i], bw),
				py(ev, base + v), bw,
				py(ev, base) - py(ev, base + v), colour[j]);
			base += v;
		}
	}
}

static void panel(FILE *f, const json_t *sc, const struct band *b, double top)
{
	const char *name = json_string_value(json_object_get(sc, "name"));
	const char *desc =
		json_string_value(json_object_get(sc, "description"));
	double tmax = b->t[b->n - 1] > 0 ? b->t[b->n - 1] : 1, bw, t;
	struct plot mem = { top + 68, 118, tmax },
		    chk = { top + 210, 56, tmax }, ev = { top + 292, 56, tmax };

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
	if (b->runs > 1)
		fprintf(f, " (%zu runs: the median, a band from min to max",
			b->runs);
	else
		fputs(" (1 run", f);
	if (b->oom_kills > 0)
		fprintf(f, "; <tspan fill=\"#c0392b\">%g OOM kill%s</tspan>",
			b->oom_kills, b->oom_kills == 1 ? "" : "s");
	fputs(")</text>\n", f);

	/* bars 80% of a grid interval wide */
	bw = fmax(1.0, (px(&mem, b->dt) - px(&mem, 0)) * 0.8);
	memory_plot(f, b, &mem);
	chunks_plot(f, b, &chk, bw);
	events_plot(f, b, &ev, bw);
	/* time axis under the last plot, at the grid lines */
	bw = nice_ceil(tmax / 10);
	for (t = 0; t <= tmax + bw / 1000; t += bw)
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"middle\">%g s</text>\n",
			px(&ev, t), ev.y + ev.h + 14, t);
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

static bool has_timeline(const json_t *sc)
{
	json_t *runs = json_object_get(sc, "runs"), *r;
	size_t i;

	json_array_foreach(runs, i, r)
		if (json_array_size(json_object_get(r, "timeline")))
			return true;
	return false;
}

/*
 * The band of every run of @sc that has a timeline: 0, 1 when none has
 * one, -1 (ENOMEM)
 */
static int scenario_band(const json_t *sc, struct band *b)
{
	json_t *runs = json_object_get(sc, "runs"), *r;
	struct timeline *tls;
	double kills = 0, k;
	size_t i, nr = 0;
	int ret;

	tls = calloc(json_array_size(runs) + 1, sizeof(*tls));
	if (!tls)
		return -1;
	json_array_foreach(runs, i, r) {
		if (!timeline_load(r, &tls[nr]))
			nr++;
		if (!mp_json_path_num(r, "oom_kills", &k))
			kills += k;
	}
	ret = nr ? band_make(b, tls, nr) : 1;
	if (!ret)
		b->oom_kills = kills;
	for (i = 0; i < nr; i++)
		timeline_free(&tls[i]);
	free(tls);
	return ret;
}

#define EMPTY_H 60

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
		height += has_timeline(sc) ? PANEL_H : EMPTY_H;
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
		struct band b;
		int ret = scenario_band(sc, &b);

		if (ret < 0)
			return mp_errf(err, MP_EXIT_FAILURE, ENOMEM, "svg");
		if (!ret) {
			panel(f, sc, &b, top);
			band_free(&b);
			top += PANEL_H;
		} else {
			empty_panel(f, sc, top);
			top += has_timeline(sc) ? PANEL_H : EMPTY_H;
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
