/* SPDX-License-Identifier: MIT */
/* Median, min and max of a benchmark's runs, the inputs' random numbers, and the machine line, shared by the benchmark programs. */
#ifndef ETL_BENCHSTAT_H
#define ETL_BENCHSTAT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"

/* xorshift64*: the benchmarks' deterministic pseudo-random numbers (state must not be 0). */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Wall-clock seconds (CLOCK_MONOTONIC). */
static inline double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The process's processor seconds (CLOCK_PROCESS_CPUTIME_ID). */
static inline double bench_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

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

/* "machine: N processors online (CPU model), kernel; libetl version" on stdout. */
static inline void bench_print_machine(void)
{
    char line[512], model[256] = "unknown";
    struct utsname u;
    FILE *f = fopen("/proc/cpuinfo", "r");

    if (f) {
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    uname(&u);
    printf("machine: %ld processors online (%s), %s %s %s; %s\n", sysconf(_SC_NPROCESSORS_ONLN), model, u.sysname,
           u.release, u.machine, etl_version_details());
}

#endif
