/* SPDX-License-Identifier: MIT */
/* Clock conversion: the one place where raw trace timestamps become absolute time. */
#include <stdio.h>
#include <time.h>

#include "etl.h"

/* FILETIME of 1970-01-01T00:00:00Z. */
#define FILETIME_UNIX_EPOCH 116444736000000000LL

const char *etl_clock_type_name(int clock_type)
{
    switch (clock_type) {
    case ETL_CLOCK_RAW: return "raw";
    case ETL_CLOCK_PERFCOUNTER: return "perfcounter";
    case ETL_CLOCK_SYSTEMTIME: return "systemtime";
    case ETL_CLOCK_CPUCYCLE: return "cpucycle";
    default: return "unknown";
    }
}

static int64_t saturate(__int128 v)
{
    if (v > INT64_MAX) return INT64_MAX;
    if (v < INT64_MIN) return INT64_MIN;
    return (int64_t)v;
}

/* floor(a / b) for b > 0. */
static __int128 floor_div(__int128 a, int64_t b)
{
    __int128 q = a / b;
    if (a % b != 0 && a < 0) q--;
    return q;
}

int64_t etl_filetime_to_ns(int64_t filetime)
{
    /* Nanoseconds since 1970 in 64 bits cover 1677..2262; beyond, the result saturates. */
    return saturate(((__int128)filetime - FILETIME_UNIX_EPOCH) * 100);
}

int64_t etl_ns_to_filetime(int64_t ns)
{
    int64_t q = ns / 100;
    if (ns % 100 < 0) q--;
    return q + FILETIME_UNIX_EPOCH;
}

int64_t etl_clock_frequency(const etl_clock *c)
{
    switch (c->type) {
    case ETL_CLOCK_SYSTEMTIME:
        return 10000000;
    case ETL_CLOCK_CPUCYCLE:
        return (int64_t)c->cpu_speed_mhz * 1000000;
    default:
        /* PerfCounter, and raw (pre-Vista files carry the QPC frequency too). */
        return c->perf_freq > 0 ? c->perf_freq : 0;
    }
}

/* Frequency used for arithmetic: a clock with none is taken as 100 ns ticks. */
static int64_t usable_frequency(const etl_clock *c)
{
    int64_t f = etl_clock_frequency(c);
    return f > 0 ? f : 10000000;
}

int64_t etl_clock_time_ns(const etl_clock *c, int64_t ts)
{
    __int128 delta = (__int128)ts - c->start_timestamp;
    __int128 base = ((__int128)c->start_time - FILETIME_UNIX_EPOCH) * 100;

    return saturate(base + floor_div(delta * 1000000000, usable_frequency(c)));
}

int64_t etl_clock_timestamp(const etl_clock *c, int64_t ns)
{
    __int128 base = ((__int128)c->start_time - FILETIME_UNIX_EPOCH) * 100;
    __int128 delta = (__int128)ns - base;

    /* The tick whose time is ns or the last before it, computed as the exact inverse of
       etl_clock_time_ns: the smallest ticks with floor(ticks * 1e9 / f) >= delta. */
    __int128 f = usable_frequency(c);
    __int128 ticks = floor_div(delta * f + 999999999, 1000000000);
    while (floor_div((ticks - 1) * 1000000000, (int64_t)f) >= delta) ticks--;
    while (floor_div(ticks * 1000000000, (int64_t)f) < delta) ticks++;
    return saturate((__int128)c->start_timestamp + ticks);
}

char *etl_format_time_ns(int64_t ns, char *out, size_t size)
{
    int64_t secs = ns / 1000000000, frac = ns % 1000000000;
    struct tm tm;
    time_t t;

    if (frac < 0) {
        frac += 1000000000;
        secs--;
    }
    t = (time_t)secs;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, size, "invalid");
        return out;
    }
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)frac);
    return out;
}
