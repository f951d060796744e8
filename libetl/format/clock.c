/* SPDX-License-Identifier: MIT */
/* Clock conversion: the one place where raw trace timestamps become absolute time. */
#include <stdio.h>
#include <string.h>
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

int64_t etl_time_from_filetime(int64_t filetime)
{
    /* Nanoseconds since 1970 in 64 bits cover 1677..2262; beyond, the result saturates. */
    return saturate(((__int128)filetime - FILETIME_UNIX_EPOCH) * 100);
}

int64_t etl_time_to_filetime(int64_t ns)
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
    int64_t f = usable_frequency(c);

    /* A frequency that divides 1 GHz (QPC's 10 MHz, FILETIME, nanoseconds) needs no division:
       the same exact result for a fraction of the cost, on every event of every tool. */
    if (1000000000 % f == 0) return saturate(base + delta * (1000000000 / f));
    return saturate(base + floor_div(delta * 1000000000, f));
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

char *etl_time_format(int64_t ns, char *out, size_t size)
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

/* ---- one clock's raw timestamps on another clock ---- */

/* Frequencies the exact mapping handles without overflow of its 128-bit products: up to
   2^36 Hz (68.7 GHz), beyond any performance counter or processor clock. */
#define MAP_MAX_FREQUENCY (1LL << 36)
#define FILETIME_PER_SECOND 10000000

int etl_clock_map_init(etl_clock_map *m, const etl_clock *from, const etl_clock *to)
{
    int64_t f_from = usable_frequency(from), f_to = usable_frequency(to);
    __int128 e, q, shift;

    memset(m, 0, sizeof *m);
    if (f_from > MAP_MAX_FREQUENCY || f_to > MAP_MAX_FREQUENCY) return ETL_FAILED;
    /*
     * The time of ts on the source clock, in seconds, is
     *   from.start_time / 10^7 + (ts - from.start_timestamp) / f_from
     * and the target tick at that time is
     *   to.start_timestamp + (time - to.start_time / 10^7) * f_to
     *   = to.start_timestamp + (from.start_time - to.start_time) * f_to / 10^7
     *                        + (ts - from.start_timestamp) * f_to / f_from.
     * Over the denominator 10^7 * f_from, the anchors' part splits into whole ticks and a
     * remainder in [0, denominator); each timestamp then costs one 128-bit division.
     */
    e = ((__int128)from->start_time - to->start_time) * f_to;
    q = floor_div(e, FILETIME_PER_SECOND);
    m->from_timestamp = from->start_timestamp;
    if ((__int128)to->start_timestamp + q > INT64_MAX || (__int128)to->start_timestamp + q < INT64_MIN) {
        memset(m, 0, sizeof *m);
        return ETL_FAILED; /* anchors so far apart that 64 bits do not hold the ticks between them */
    }
    m->base = (int64_t)((__int128)to->start_timestamp + q);
    m->remainder = (int64_t)((e - q * FILETIME_PER_SECOND) * f_from);
    m->numerator = f_to * FILETIME_PER_SECOND;
    m->denominator = f_from * FILETIME_PER_SECOND;
    /* Equal frequencies: every timestamp moves by the same number of ticks. */
    shift = (__int128)to->start_timestamp + q - from->start_timestamp +
            (m->remainder + m->denominator / 2) / m->denominator;
    m->same_frequency = f_from == f_to && shift >= INT64_MIN && shift <= INT64_MAX;
    m->shift = m->same_frequency ? (int64_t)shift : 0;
    return ETL_OK;
}

int64_t etl_clock_map_timestamp(const etl_clock_map *m, int64_t ts)
{
    int64_t out;

    if (m->same_frequency) {
        if (__builtin_add_overflow(ts, m->shift, &out)) return m->shift > 0 ? INT64_MAX : INT64_MIN;
        return out;
    }
    if (!m->denominator) return ts; /* not initialised */
    /* The nearest target tick (halves round up). */
    __int128 num = ((__int128)ts - m->from_timestamp) * m->numerator + m->remainder + m->denominator / 2;
    return saturate((__int128)m->base + floor_div(num, m->denominator));
}

/* Days from 1970-01-01 to the given proleptic Gregorian date (any year). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe, mp = m > 2 ? m - 3 : m + 9; /* months from March */

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * mp + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Reads exactly n decimal digits at *s. */
static int digits(const char **s, int n, unsigned *out)
{
    unsigned v = 0;

    for (int i = 0; i < n; i++) {
        if ((*s)[i] < '0' || (*s)[i] > '9') return -1;
        v = v * 10 + (unsigned)((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

int etl_time_parse(const char *text, int64_t *ns)
{
    static const unsigned month_days[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    const char *s = text;
    unsigned y, mo, d, h, mi, sec, frac = 0;
    __int128 v;

    if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' || digits(&s, 2, &d) ||
        (*s != 'T' && *s != 't' && *s != ' '))
        return ETL_FAILED;
    s++;
    if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' || digits(&s, 2, &sec))
        return ETL_FAILED;
    if (*s == '.') {
        int n = 0;
        s++;
        while (*s >= '0' && *s <= '9') {
            if (n < 9) frac = frac * 10 + (unsigned)(*s - '0');
            n++;
            s++;
        }
        if (n == 0) return ETL_FAILED;
        for (; n < 9; n++) frac *= 10;
    }
    if (*s == 'Z' || *s == 'z') s++;
    if (*s != '\0' || mo < 1 || mo > 12 || d < 1 || d > month_days[mo - 1] || h > 23 || mi > 59 || sec > 60)
        return ETL_FAILED;
    if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return ETL_FAILED;
    v = ((__int128)days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) * 1000000000 + frac;
    if (v > INT64_MAX || v < INT64_MIN) return ETL_FAILED;
    *ns = (int64_t)v;
    return ETL_OK;
}
