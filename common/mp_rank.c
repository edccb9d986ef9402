// SPDX-License-Identifier: GPL-2.0
/*
 * Rank statistics; see mp_rank.h.
 */
#include <math.h>
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

double mp_hodges_lehmann(const double *x, size_t nx, const double *y, size_t ny)
{
	double *d, med;
	size_t i, j, n = nx * ny;

	if (!n)
		return NAN;
	d = malloc(n * sizeof(*d));
	if (!d)
		return NAN;
	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			d[i * ny + j] = y[j] - x[i];
	qsort(d, n, sizeof(*d), cmp_double);
	med = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
	free(d);
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
	double *xs, *q, *y, *b, res = NAN, top;
	size_t i, j, nb = 0, lo, hi;

	if (!nx || !ny || mp_rank_p_min(nx, ny) > alpha)
		return NAN;
	xs = malloc(nx * sizeof(*xs));
	q = malloc(ny * sizeof(*q));
	y = malloc(ny * sizeof(*y));
	b = malloc((nx * ny + 1) * sizeof(*b));
	if (!xs || !q || !y || !b)
		goto out;
	memcpy(xs, x, nx * sizeof(*xs));
	qsort(xs, nx, sizeof(*xs), cmp_double);
	for (j = 0; j < ny; j++)
		q[j] = quantile(xs, nx, (j + 0.5) / (double)ny);
	/*
	 * The ranks, so the p-value, change only where a moved sample
	 * passes a sample of x: at d = x[i] - q[j]. Between two such points
	 * p is constant and it falls as d grows; find the first interval
	 * where p <= alpha by bisection over the intervals.
	 */
	b[nb++] = 0;
	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			if (xs[i] - q[j] > 0)
				b[nb++] = xs[i] - q[j];
	qsort(b, nb, sizeof(*b), cmp_double);
	top = b[nb - 1] + fmax(1, fabs(b[nb - 1]));
	lo = 0;
	hi = nb - 1; /* the last interval, (b[nb-1], inf), always passes */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		double d = mid + 1 < nb ? (b[mid] + b[mid + 1]) / 2 : top;

		if (p_shifted(xs, nx, q, ny, d, y) <= alpha)
			hi = mid;
		else
			lo = mid + 1;
	}
	res = b[lo];
out:
	free(xs);
	free(q);
	free(y);
	free(b);
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
