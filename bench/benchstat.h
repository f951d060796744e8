/* SPDX-License-Identifier: MIT */
/* Median, min and max of a benchmark's runs, shared by the benchmark programs. */
#ifndef ETL_BENCHSTAT_H
#define ETL_BENCHSTAT_H

#include <stdlib.h>

struct stats {
    double med, min, max;
};

static int stats_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median, min and max of v[0..n); zeros for n = 0. Sorts a copy (n <= 64). */
static inline struct stats stats_of(const double *v, unsigned n)
{
    double s[64];
    struct stats st = { 0, 0, 0 };

    if (!n || n > 64) return st;
    for (unsigned i = 0; i < n; i++) s[i] = v[i];
    qsort(s, n, sizeof *s, stats_cmp_double);
    st.min = s[0];
    st.max = s[n - 1];
    st.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    return st;
}

#endif
