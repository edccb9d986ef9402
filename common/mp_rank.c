// SPDX-License-Identifier: GPL-2.0
/*
 * Rank statistics; see mp_rank.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_rank.h"

struct tagged {
	double v;
	int from_y;
};

static int cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct tagged *)a)->v;
	double y = ((const struct tagged *)b)->v;

	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Doubled mid-ranks (integers: ranks are 1..n, a tie group spanning ranks
 * i..j gets i + j) into r2[], in the sorted order of t[]; the sum of the
 * doubled ranks of y, and sum(t^3 - t) over tie groups for the variance.
 */
static long rank2(struct tagged *t, size_t n, long *r2, double *ties)
{
	size_t i = 0, j, k;
	long sum_y = 0;

	qsort(t, n, sizeof(*t), cmp_tagged);
	*ties = 0;
	while (i < n) {
		j = i;
		while (j + 1 < n && t[j + 1].v == t[i].v)
			j++;
		for (k = i; k <= j; k++) {
			r2[k] = (long)(i + 1) + (long)(j + 1);
			if (t[k].from_y)
				sum_y += r2[k];
		}
		*ties += pow((double)(j - i + 1), 3) - (double)(j - i + 1);
		i = j + 1;
	}
	return sum_y;
}

/*
 * P(sum of a random ny-subset of r2[] >= obs): count the subsets of each
 * size and sum, item by item (cnt[j][s], j items summing to s).
 */
static double exact_p(const long *r2, size_t n, size_t ny, long obs)
{
	long smax = (long)(n * (n + 1)); /* all doubled ranks */
	size_t i, j;
	double *cnt, total = 0, hit = 0;
	long s;

	cnt = calloc((ny + 1) * (size_t)(smax + 1), sizeof(*cnt));
	if (!cnt)
		return NAN;
	cnt[0] = 1;
	for (i = 0; i < n; i++) {
		size_t top = i + 1 < ny ? i + 1 : ny;

		for (j = top; j >= 1; j--) {
			double *dst = cnt + j * (size_t)(smax + 1);
			double *src = cnt + (j - 1) * (size_t)(smax + 1);

			for (s = smax; s >= r2[i]; s--)
				dst[s] += src[s - r2[i]];
		}
	}
	for (s = 0; s <= smax; s++) {
		double c = cnt[ny * (size_t)(smax + 1) + s];

		total += c;
		if (s >= obs)
			hit += c;
	}
	free(cnt);
	return total > 0 ? hit / total : NAN;
}

double mp_rank_p_greater(const double *x, size_t nx, const double *y, size_t ny)
{
	size_t n = nx + ny, i;
	struct tagged *t;
	long *r2, sum2;
	double ties, p, u, mu, var, z;

	if (!nx || !ny)
		return NAN;
	t = malloc(n * sizeof(*t));
	r2 = malloc(n * sizeof(*r2));
	if (!t || !r2) {
		free(t);
		free(r2);
		return NAN;
	}
	for (i = 0; i < nx; i++)
		t[i] = (struct tagged){ x[i], 0 };
	for (i = 0; i < ny; i++)
		t[nx + i] = (struct tagged){ y[i], 1 };
	sum2 = rank2(t, n, r2, &ties);
	if ((double)n * (double)ny * (double)(n * (n + 1)) <=
	    MP_RANK_EXACT_WORK) {
		p = exact_p(r2, n, ny, sum2);
	} else {
		u = sum2 / 2.0 - ny * (ny + 1) / 2.0;
		mu = nx * ny / 2.0;
		var = nx * ny / 12.0 * ((n + 1) - ties / ((double)n * (n - 1)));
		if (var <= 0) {
			p = 1;
		} else {
			z = (u - mu - 0.5) / sqrt(var);
			p = 0.5 * erfc(z / M_SQRT2);
		}
	}
	free(t);
	free(r2);
	return p;
}

double mp_rank_p_min(size_t nx, size_t ny)
{
	double c = 1;
	size_t i;

	/* C(nx + ny, ny), built up as a product */
	for (i = 1; i <= ny; i++)
		c = c * (double)(nx + i) / (double)i;
	return 1 / c;
}

/*
 * The differences a[i] - b[j] of two sorted samples, never stored: the
 * matrix of them falls along each row (j up) and rises down each column,
 * so counting them below a value, or finding the next one above it, is
 * one walk of two indices, O(na + nb).
 */
struct diffs {
	const double *a, *b;
	size_t na, nb;
	size_t *lo, *hi; /* per row: the candidates of a selection */
	size_t *lt, *le; /* per row: counts below a pivot */
};

/*
 * Per row i, the count of j with a[i] - b[j] < t (lt) and <= t (le),
 * into d->lt[] and d->le[] when given; their totals into *lt and *le
 */
static void diffs_count(const struct diffs *d, double t, uint64_t *lt,
			uint64_t *le)
{
	size_t i, jl = d->nb, je = d->nb;

	*lt = *le = 0;
	/* as a[i] grows, fewer b[j] are beyond a[i] - t: j only falls */
	for (i = d->na; i-- > 0;) {
		/* a[i] - b[j] < t iff b[j] > a[i] - t */
		while (jl > 0 && d->a[i] - d->b[jl - 1] < t)
			jl--;
		while (je > 0 && d->a[i] - d->b[je - 1] <= t)
			je--;
		if (d->lt) {
			d->lt[i] = d->nb - jl;
			d->le[i] = d->nb - je;
		}
		*lt += d->nb - jl;
		*le += d->nb - je;
	}
}

/* the smallest difference above t, INFINITY when none is */
static double diffs_next(const struct diffs *d, double t)
{
	double best = INFINITY;
	size_t i, j = d->nb;

	for (i = d->na; i-- > 0;) {
		while (j > 0 && d->a[i] - d->b[j - 1] <= t)
			j--;
		/* b[j - 1] is the largest b with a[i] - b > t */
		if (j > 0)
			best = fmin(best, d->a[i] - d->b[j - 1]);
	}
	return best;
}

/* row i's candidate c (0-based), counted from the largest b down */
static double diffs_at(const struct diffs *d, size_t i, size_t c)
{
	return d->a[i] - d->b[d->nb - 1 - c];
}

/*
 * The k-th smallest difference (1 <= k <= na * nb), by random pivots
 * among the candidates left (Monahan's selection for the Hodges-Lehmann
 * estimate): each pivot is counted in O(na + nb) and keeps, on average,
 * a fixed share of the candidates, so O((na + nb) log(na nb)) in all.
 * Row i holds its differences in rising order at candidate c = 0..nb-1
 * (b from its largest down). NAN when memory runs out.
 */
static double diffs_kth(struct diffs *d, uint64_t k)
{
	uint64_t left, lt, le, below = 0, seed = 0x9e3779b97f4a7c15ULL;
	double res = NAN, pivot, *buf = NULL;
	size_t i, n = 0, cap = d->na + d->nb;

	d->lo = calloc(d->na, sizeof(*d->lo));
	d->hi = malloc(d->na * sizeof(*d->hi));
	d->lt = malloc(d->na * sizeof(*d->lt));
	d->le = malloc(d->na * sizeof(*d->le));
	buf = malloc(cap * sizeof(*buf));
	if (!d->lo || !d->hi || !d->lt || !d->le || !buf)
		goto out;
	for (i = 0; i < d->na; i++)
		d->hi[i] = d->nb;
	/* candidates of row i: [lo, hi); "below" counts those dropped under */
	for (;;) {
		for (left = 0, i = 0; i < d->na; i++)
			left += d->hi[i] - d->lo[i];
		if (left <= cap)
			break;
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		left = seed % left;
		for (i = 0; left >= d->hi[i] - d->lo[i]; i++)
			left -= d->hi[i] - d->lo[i];
		pivot = diffs_at(d, i, d->lo[i] + left);
		diffs_count(d, pivot, &lt, &le);
		if (k <= lt) {
			for (i = 0; i < d->na; i++)
				if (d->hi[i] > d->lt[i])
					d->hi[i] = d->lt[i];
		} else if (k <= le) {
			res = pivot;
			goto out;
		} else {
			for (i = 0; i < d->na; i++)
				if (d->lo[i] < d->le[i])
					d->lo[i] = d->le[i];
		}
		for (below = 0, i = 0; i < d->na; i++)
			below += d->lo[i];
	}
	for (i = 0; i < d->na; i++) {
		size_t c;

		for (c = d->lo[i]; c < d->hi[i]; c++)
			buf[n++] = diffs_at(d, i, c);
	}
	qsort(buf, n, sizeof(*buf), cmp_double);
	if (k > below && k - below <= n)
		res = buf[k - below - 1];
out:
	free(d->lo);
	free(d->hi);
	free(d->lt);
	free(d->le);
	d->lo = d->hi = d->lt = d->le = NULL;
	free(buf);
	return res;
}

/* a sorted copy of v[n], or NULL */
static double *sorted_copy(const double *v, size_t n)
{
	double *s = malloc(n * sizeof(*s));

	if (!s)
		return NULL;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

double mp_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny)
{
	struct diffs d = { .na = ny, .nb = nx };
	uint64_t n = (uint64_t)nx * ny;
	double *xs, *ys, med = NAN, lo;

	if (!n)
		return NAN;
	xs = sorted_copy(x, nx);
	ys = sorted_copy(y, ny);
	if (!xs || !ys)
		goto out;
	/* the differences y[j] - x[i]: a = y, b = x */
	d.a = ys;
	d.b = xs;
	lo = diffs_kth(&d, n / 2 + (n % 2));
	if (n % 2 || isnan(lo)) {
		med = lo;
	} else {
		uint64_t lt, le;

		/* the next one: lo again when it repeats, else the next above */
		diffs_count(&d, lo, &lt, &le);
		med = (lo + (le > n / 2 ? lo : diffs_next(&d, lo))) / 2;
	}
out:
	free(xs);
	free(ys);
	return med;
}

/* quantile of sorted v[n] at q, linear between order statistics */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos);

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* p of ny samples, the quantiles q[] of x moved up by d */
static double p_shifted(const double *x, size_t nx, const double *q, size_t ny,
			double d, double *y)
{
	size_t j;

	for (j = 0; j < ny; j++)
		y[j] = q[j] + d;
	return mp_rank_p_greater(x, nx, y, ny);
}

double mp_rank_mde(const double *x, size_t nx, size_t ny, double alpha)
{
	double *xs = NULL, *q = NULL, *y = NULL, res = NAN, top, blo, bhi;
	struct diffs d = { .na = nx, .nb = ny };
	uint64_t lt, le, le2, nb, lo, hi;
	size_t j;

	if (!nx || !ny || mp_rank_p_min(nx, ny) > alpha)
		return NAN;
	xs = sorted_copy(x, nx);
	q = malloc(ny * sizeof(*q));
	y = malloc(ny * sizeof(*y));
	if (!xs || !q || !y)
		goto out;
	for (j = 0; j < ny; j++)
		q[j] = quantile(xs, nx, (j + 0.5) / (double)ny);
	/*
	 * The ranks, so the p-value, change only where a moved sample
	 * passes a sample of x: at d = x[i] - q[j]. Between two such points
	 * p is constant and it falls as d grows; find the first interval
	 * where p <= alpha by bisection over the intervals. The points are
	 * b[0] = 0 and the positive differences in rising order, b[t] the
	 * (le + t)-th difference of all: selected, never stored (q rises
	 * with j, as the selection needs)
	 */
	d.a = xs;
	d.b = q;
	diffs_count(&d, 0, &lt, &le);
	nb = 1 + (uint64_t)nx * ny - le;
	top = NAN;
	lo = 0;
	hi = nb - 1; /* the last interval, (b[nb-1], inf), always passes */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		double dd;

		blo = mid ? diffs_kth(&d, le + mid) : 0;
		if (isnan(blo))
			goto out;
		if (mid + 1 < nb) {
			bhi = diffs_next(&d, blo);
			/* b[mid + 1] repeats b[mid] when the count says so */
			diffs_count(&d, blo, &lt, &le2);
			if (mid && le2 >= le + mid + 1)
				bhi = blo;
			dd = (blo + bhi) / 2;
		} else {
			if (isnan(top)) {
				bhi = diffs_kth(&d, (uint64_t)nx * ny);
				top = bhi + fmax(1, fabs(bhi));
			}
			dd = top;
		}
		if (p_shifted(xs, nx, q, ny, dd, y) <= alpha)
			hi = mid;
		else
			lo = mid + 1;
	}
	res = lo ? diffs_kth(&d, le + lo) : 0;
out:
	free(xs);
	free(q);
	free(y);
	return res;
}

/* standard normal quantile, by bisection on erfc (|error| < 1e-12) */
static double z_quantile(double p)
{
	double lo = -40, hi = 40, mid;
	int i;

	for (i = 0; i < 200; i++) {
		mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / M_SQRT2) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double mp_t_quantile(double p, double df)
{
	double z, z2, g1, g2, g3, g4;

	if (df <= 0 || p <= 0 || p >= 1)
		return NAN;
	if (df == 1)
		return tan(M_PI * (p - 0.5));
	if (df == 2)
		return (2 * p - 1) / sqrt(2 * p * (1 - p));
	/* Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5) */
	z = z_quantile(p);
	z2 = z * z;
	g1 = (z2 + 1) * z / 4;
	g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z /
	     92160;
	return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) +
	       g4 / (df * df * df * df);
}
