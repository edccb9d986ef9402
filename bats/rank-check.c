// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper: mp_hodges_lehmann() and mp_rank_mde(), which select among
 * the nx * ny pairwise differences without storing them, against the
 * plain definitions (every difference stored and sorted) on random
 * samples: small and large, with many ties and with none. Prints the
 * first disagreement and exits 1; exits 0 after COUNT trials (default
 * 2000). Usage: rank-check [COUNT]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mp_rank.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the median of all y[j] - x[i], stored and sorted */
static double hl_plain(const double *x, size_t nx, const double *y, size_t ny)
{
	size_t i, j, n = nx * ny;
	double *d = malloc(n * sizeof(*d)), med;

	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			d[i * ny + j] = y[j] - x[i];
	qsort(d, n, sizeof(*d), cmp_double);
	med = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
	free(d);
	return med;
}

static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)floor(pos);

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* the minimum detectable shift by its definition: every point stored */
static double mde_plain(const double *x, size_t nx, size_t ny, double alpha)
{
	double *xs, *q, *y, *b, top, res;
	size_t i, j, nb = 0, lo, hi;

	if (mp_rank_p_min(nx, ny) > alpha)
		return NAN;
	xs = malloc(nx * sizeof(*xs));
	q = malloc(ny * sizeof(*q));
	y = malloc(ny * sizeof(*y));
	b = malloc((nx * ny + 1) * sizeof(*b));
	for (i = 0; i < nx; i++)
		xs[i] = x[i];
	qsort(xs, nx, sizeof(*xs), cmp_double);
	for (j = 0; j < ny; j++)
		q[j] = quantile(xs, nx, (j + 0.5) / (double)ny);
	b[nb++] = 0;
	for (i = 0; i < nx; i++)
		for (j = 0; j < ny; j++)
			if (xs[i] - q[j] > 0)
				b[nb++] = xs[i] - q[j];
	qsort(b, nb, sizeof(*b), cmp_double);
	top = b[nb - 1] + fmax(1, fabs(b[nb - 1]));
	lo = 0;
	hi = nb - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		double d = mid + 1 < nb ? (b[mid] + b[mid + 1]) / 2 : top;

		for (j = 0; j < ny; j++)
			y[j] = q[j] + d;
		if (mp_rank_p_greater(xs, nx, y, ny) <= alpha)
			hi = mid;
		else
			lo = mid + 1;
	}
	res = b[lo];
	free(xs);
	free(q);
	free(y);
	free(b);
	return res;
}

static uint64_t rnd(void)
{
	static uint64_t s = 88172645463325252ULL;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static void fill(double *v, size_t n, int kind)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (kind == 0) /* counts that repeat */
			v[i] = (double)(rnd() % 5);
		else if (kind == 1)
			v[i] = (double)(rnd() % 100000) / 7.0;
		else /* a run of equal values and a tail */
			v[i] = rnd() % 3 ? 42 : (double)(rnd() % 1000);
	}
}

static int same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

int main(int argc, char **argv)
{
	long trials = argc > 1 ? atol(argv[1]) : 2000, t;
	double x[200], y[200], a, b;

	for (t = 0; t < trials; t++) {
		size_t nx = 1 + rnd() % (t % 10 ? 12 : 200);
		size_t ny = 1 + rnd() % (t % 10 ? 12 : 200);
		int kind = (int)(rnd() % 3);

		fill(x, nx, kind);
		fill(y, ny, kind);
		a = mp_hodges_lehmann(x, nx, y, ny);
		b = hl_plain(x, nx, y, ny);
		if (!same(a, b)) {
			printf("hodges-lehmann nx %zu ny %zu kind %d: %.17g, "
			       "by definition %.17g\n",
			       nx, ny, kind, a, b);
			return 1;
		}
		a = mp_rank_mde(x, nx, ny, 0.05);
		b = mde_plain(x, nx, ny, 0.05);
		if (!same(a, b)) {
			printf("mde nx %zu ny %zu kind %d: %.17g, by "
			       "definition %.17g\n",
			       nx, ny, kind, a, b);
			return 1;
		}
	}
	printf("%ld trials agree\n", trials);
	return 0;
}
