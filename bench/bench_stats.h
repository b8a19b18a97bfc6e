/*  bench_stats.h - the order statistics the benchmarks print: one comparison of doubles for
    qsort, the median, a nearest-rank percentile. */
#ifndef BENCH_STATS_H_INCLUDED
#define BENCH_STATS_H_INCLUDED

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

//  qsort comparison of two doubles, ascending.
static inline int
bench_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

//  The median of n values (n > 0; sorts v in place).
static inline double
bench_median (double *v, int n)
{
    qsort (v, (size_t) n, sizeof (double), bench_cmp_double);
    return n % 2 ? v [n / 2] : (v [n / 2 - 1] + v [n / 2]) / 2;
}

//  Percentile p (0..100) of n values (sorts v in place), nearest rank; NAN when n is 0.
static inline double
bench_pct (double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    qsort (v, n, sizeof (double), bench_cmp_double);
    size_t k = (size_t) ceil (p / 100.0 * (double) n);
    return v [k ? k - 1 : 0];
}

#endif
