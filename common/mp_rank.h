/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rank statistics for "mpctl report --compare": the Mann-Whitney U (rank
 * sum) test with its exact permutation distribution (mid-ranks for ties,
 * so counts that repeat are handled), the Hodges-Lehmann estimate of the
 * shift between two samples, the smallest shift the test can detect, and
 * the Student t quantile for a prediction interval. Nothing here prints or
 * allocates beyond its own scratch space.
 */
#ifndef MP_RANK_H
#define MP_RANK_H

#include <stddef.h>

/*
 * One-sided p-value of the rank-sum test: the probability, when x and y
 * come from one distribution, of a rank sum of y at least as large as the
 * one observed (small when y tends to be larger than x). Exact while the
 * count of subsets takes at most MP_RANK_EXACT_WORK steps (n * ny * n^2:
 * about 40 samples in all, split evenly; far more when one side is small),
 * normal approximation with the tie correction beyond. NAN when a sample
 * is empty or memory runs out.
 */
#define MP_RANK_EXACT_WORK 4e6
double mp_rank_p_greater(const double *x, size_t nx, const double *y,
			 size_t ny);

/* The smallest p-value nx and ny samples can give: 1 / C(nx + ny, ny). */
double mp_rank_p_min(size_t nx, size_t ny);

/*
 * Hodges-Lehmann shift: the median of all differences y[j] - x[i],
 * selected without storing them: O((nx + ny) log(nx ny)) time on average,
 * O(nx + ny) memory.
 */
double mp_hodges_lehmann(const double *x, size_t nx, const double *y,
			 size_t ny);

/*
 * Minimum detectable shift: the smallest d >= 0 such that ny samples
 * spread as x is (its quantiles at (j + 1/2) / ny), moved up by d, give
 * mp_rank_p_greater() <= alpha against x. NAN when no shift can (too few
 * samples for alpha). The same holds for a shift down, by symmetry.
 * A bisection over the points where the ranks change, each selected as
 * mp_hodges_lehmann() selects: O(nx + ny) memory, O((nx + ny)
 * log^2(nx ny)) time on average.
 */
double mp_rank_mde(const double *x, size_t nx, size_t ny, double alpha);

/* Quantile p (0 < p < 1) of Student's t with df degrees of freedom. */
double mp_t_quantile(double p, double df);

#endif
