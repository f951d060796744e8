/* SPDX-License-Identifier: MIT */
/* Unit tests of clock conversion: PerfCounter, SystemTime and CPU-cycle timestamps to absolute time. */
#define _GNU_SOURCE /* usleep */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "check_run.h"
#include "etl.h"
#include "engine/engine.h"

#define FT_2024 133485408000000000LL /* 2024-01-01T00:00:00Z as FILETIME */
#define NS_2024 1704067200000000000LL

static etl_clock qpc(int64_t freq)
{
    etl_clock c = { ETL_CLOCK_PERFCOUNTER, freq, 0, FT_2024, 5000 };
    return c;
}

START_TEST(filetime_conversion)
{
    char s[40];

    ck_assert_int_eq(etl_time_from_filetime(FT_2024), NS_2024);
    ck_assert_int_eq(etl_time_to_filetime(NS_2024), FT_2024);
    ck_assert_int_eq(etl_time_to_filetime(NS_2024 + 99), FT_2024);
    ck_assert_int_eq(etl_time_to_filetime(-1), 116444736000000000LL - 1);
    ck_assert_str_eq(etl_time_format(NS_2024 + 123456789, s, sizeof s), "2024-01-01T00:00:00.123456789Z");
    ck_assert_str_eq(etl_time_format(-1, s, sizeof s), "1969-12-31T23:59:59.999999999Z");
    /* 64-bit nanoseconds reach back to 1677; FILETIME 0 (1601) saturates. */
    ck_assert_int_eq(etl_time_from_filetime(0), INT64_MIN);
    ck_assert_str_eq(etl_time_format(etl_time_from_filetime(25000000000000000LL), s, sizeof s),
                     "1680-03-22T04:26:40.000000000Z");
}
END_TEST

START_TEST(perfcounter)
{
    etl_clock c = qpc(10000000);

    ck_assert_int_eq(etl_clock_frequency(&c), 10000000);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5000), NS_2024);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5001), NS_2024 + 100);
    ck_assert_int_eq(etl_clock_time_ns(&c, 4999), NS_2024 - 100);
    /* One day of ticks, exactly. */
    ck_assert_int_eq(etl_clock_time_ns(&c, 5000 + 864000000000LL), NS_2024 + 86400000000000LL);

    /* 3 MHz: a tick is 333.33 ns; floor, exact over long spans (no float drift). */
    c = qpc(3000000);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5001), NS_2024 + 333);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5003), NS_2024 + 1000);
    ck_assert_int_eq(etl_clock_time_ns(&c, 4999), NS_2024 - 334);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5000 + 3000000LL * 3600 * 24 * 365), NS_2024 + 31536000000000000LL);

    /* A frequency of 0 (damaged header) is taken as 100 ns ticks rather than dividing by 0. */
    c = qpc(0);
    ck_assert_int_eq(etl_clock_frequency(&c), 0);
    ck_assert_int_eq(etl_clock_time_ns(&c, 5010), NS_2024 + 1000);
}
END_TEST

START_TEST(systemtime_and_cycles)
{
    etl_clock st = { ETL_CLOCK_SYSTEMTIME, 0, 0, FT_2024, FT_2024 };
    etl_clock cy = { ETL_CLOCK_CPUCYCLE, 0, 2500, FT_2024, 1000000 };

    ck_assert_int_eq(etl_clock_frequency(&st), 10000000);
    ck_assert_int_eq(etl_clock_time_ns(&st, FT_2024 + 7), NS_2024 + 700);
    ck_assert_int_eq(etl_clock_frequency(&cy), 2500000000LL);
    ck_assert_int_eq(etl_clock_time_ns(&cy, 1000000 + 2500), NS_2024 + 1000);
    ck_assert_int_eq(etl_clock_time_ns(&cy, 1000000 + 2501), NS_2024 + 1000);
    ck_assert_int_eq(etl_clock_time_ns(&cy, 1000000 + 2503), NS_2024 + 1001);
    ck_assert_str_eq(etl_clock_type_name(ETL_CLOCK_CPUCYCLE), "cpucycle");
    ck_assert_str_eq(etl_clock_type_name(7), "unknown");
}
END_TEST

/* etl_clock_timestamp inverts etl_clock_time_ns for every clock slower than 1 GHz. */
START_TEST(round_trip)
{
    static const int64_t freqs[] = { 1, 1000, 3000000, 10000000, 14318180, 1000000000 };
    for (size_t i = 0; i < sizeof freqs / sizeof freqs[0]; i++) {
        etl_clock c = qpc(freqs[i]);
        /* Spans of up to 100 000 000 s (3 years) either side of the start. */
        for (int64_t a = 0; a < freqs[i] * 100000000LL; a = a * 3 + 7919) {
            for (int sign = -1; sign <= 1; sign += 2) {
                int64_t ts = 5000 + sign * a;
                int64_t ns = etl_clock_time_ns(&c, ts);
                ck_assert_msg(etl_clock_timestamp(&c, ns) == ts, "freq %lld ts %lld", (long long)freqs[i], (long long)ts);
                /* A time between two ticks maps to the later one. */
                if (freqs[i] < 1000000000)
                    ck_assert_int_eq(etl_clock_timestamp(&c, ns + 1), ts + 1);
            }
        }
    }
}
END_TEST

/* The conversion, as the definition says: StartTime, plus the ticks since the header's
   timestamp at the frequency, rounded toward minus infinity; for frequencies that divide 1 GHz
   (computed without a division) and the others alike. */
START_TEST(time_ns_is_exact)
{
    static const int64_t freqs[] = { 1, 1000, 2500000, 10000000, 1000000000, 3000000, 14318180, 2100000000 };
    uint64_t rng = 88172645463325252ull;
    for (size_t i = 0; i < sizeof freqs / sizeof freqs[0]; i++) {
        etl_clock c = qpc(freqs[i]);
        for (int k = 0; k < 20000; k++) {
            __int128 num, q;
            int64_t ts;
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            ts = (int64_t)(rng >> (k % 40 + 1)) * (k & 1 ? -1 : 1);
            num = ((__int128)ts - 5000) * 1000000000;
            q = num / freqs[i];
            if (q * freqs[i] != num && num < 0) q--;
            q += NS_2024;
            if (q > INT64_MAX) q = INT64_MAX; /* beyond the range: saturated */
            if (q < INT64_MIN) q = INT64_MIN;
            ck_assert_msg(etl_clock_time_ns(&c, ts) == (int64_t)q, "freq %lld ts %lld", (long long)freqs[i],
                          (long long)ts);
        }
    }
}
END_TEST

START_TEST(extremes_saturate)
{
    etl_clock c = qpc(1);

    ck_assert_int_eq(etl_clock_time_ns(&c, INT64_MAX), INT64_MAX);
    ck_assert_int_eq(etl_clock_time_ns(&c, INT64_MIN), INT64_MIN);
}
END_TEST

/* ---- the sessions' PerfCounter clock: CLOCK_MONOTONIC_RAW read through the TSC ---- */

/* Readings follow the kernel's clock within 20 us over 1.5 s while the line is re-fitted
   every 100 ms, as the flush threads do, and one thread's readings never go back. */
START_TEST(tsc_line_tracks_the_kernel_clock)
{
    int64_t worst = 0, last = INT64_MIN;

    etl_monoclock_init();
    for (int round = 0; round < 15; round++) {
        for (int i = 0; i < 100000; i++) {
            int64_t t = etl_monoclock_now();
            ck_assert_int_ge(t, last);
            last = t;
        }
        for (int i = 0; i < 100; i++) {
            int64_t before = etl_monoclock_exact(), t = etl_monoclock_now(), after = etl_monoclock_exact();
            int64_t off = t < before ? before - t : t > after ? t - after : 0;
            if (off > worst) worst = off;
        }
        usleep(100000);
        etl_monoclock_tick();
    }
    ck_assert_msg(worst < 20000, "the TSC line strays %lld ns from CLOCK_MONOTONIC_RAW", (long long)worst);
}
END_TEST

/* A line that nobody re-fitted, or a counter that went back, gives the kernel's clock. */
START_TEST(stale_tsc_line_falls_back)
{
    struct etl_monoclock *c = &etl_monoclock_line;

    if (!etl_monoclock_init()) return; /* no TSC line here: every reading is the kernel's */
#if defined(__x86_64__)
    {
        uint64_t base = atomic_load(&c->base_tsc);
        int64_t before, t, after;
        /* The base far ahead: the counter reads as gone back. */
        atomic_store(&c->base_tsc, __rdtsc() + (1ull << 40));
        before = etl_monoclock_exact();
        t = etl_monoclock_now();
        after = etl_monoclock_exact();
        ck_assert_int_ge(t, before);
        ck_assert_int_le(t, after);
        /* The base far behind: the line is stale. */
        atomic_store(&c->base_tsc, base - (atomic_load(&c->max_ticks) + 1000));
        before = etl_monoclock_exact();
        t = etl_monoclock_now();
        after = etl_monoclock_exact();
        ck_assert_int_ge(t, before);
        ck_assert_int_le(t, after);
        /* A re-fit starts a new line where the kernel's clock is. */
        etl_monoclock_refit();
        before = etl_monoclock_exact();
        t = etl_monoclock_now();
        after = etl_monoclock_exact();
        ck_assert_int_ge(t, before - 5000);
        ck_assert_int_le(t, after + 5000);
        ck_assert_uint_gt(etl_monoclock_tsc_mhz(), 0);
    }
#endif
}
END_TEST

/* A session that starts after no session ran for a while (the line went stale) reads the TSC
   from its first event, not the kernel's clock for its first 100 ms. */
START_TEST(start_after_idle_refits)
{
    struct etl_monoclock *c = &etl_monoclock_line;

    if (!etl_monoclock_init()) return;
#if defined(__x86_64__)
    usleep(450000); /* past max_ticks: stale */
    ck_assert_uint_gt(__rdtsc() - atomic_load(&c->base_tsc), atomic_load(&c->max_ticks));
    etl_monoclock_init(); /* what etl_session_start does */
    ck_assert_uint_le(__rdtsc() - atomic_load(&c->base_tsc), atomic_load(&c->max_ticks));
#endif
}
END_TEST

/* The nearest target tick, computed another way: over nanoseconds rather than FILETIME units. */
static int64_t nearest_tick(const etl_clock *from, const etl_clock *to, int64_t ts)
{
    __int128 ff = etl_clock_frequency(from), ft = etl_clock_frequency(to);
    __int128 num = ((__int128)from->start_time - to->start_time) * 100 * ft * ff +
                   ((__int128)ts - from->start_timestamp) * 1000000000 * ft;
    __int128 den = (__int128)1000000000 * ff, twice = 2 * num + den, q = twice / (2 * den);

    if (twice % (2 * den) != 0 && twice < 0) q--;
    return (int64_t)(to->start_timestamp + q);
}

/* A clock map gives the nearest tick of the target clock, in exact arithmetic; equal
   frequencies shift by whole ticks. */
START_TEST(clock_map)
{
    static const int64_t freqs[] = { 1, 1000, 1818300, 2337949, 3579545, 10000000, 14318180, 1000000000,
                                     2893000000LL, 68000000000LL };
    uint64_t x = 88172645463325252ull;
    etl_clock_map m;

    for (size_t i = 0; i < sizeof freqs / sizeof freqs[0]; i++)
        for (size_t j = 0; j < sizeof freqs / sizeof freqs[0]; j++) {
            etl_clock from = qpc(freqs[i]), to = qpc(freqs[j]);
            int64_t last = INT64_MIN;
            from.start_time = FT_2024 + 1234567;  /* 0.12 s after the target's start */
            from.start_timestamp = 987654321;
            to.start_timestamp = 42;
            ck_assert_int_eq(etl_clock_map_init(&m, &from, &to), ETL_OK);
            ck_assert_int_eq(m.same_frequency, freqs[i] == freqs[j]);
            for (int k = 0; k < 2000; k++) {
                int64_t ts, got, want;
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                /* Up to a year of ticks either side (10^17 at most, for the oracle's 128 bits), and
                   a sorted run to see order kept. */
                int64_t span = freqs[i] * 31536000LL < 100000000000000000LL ? freqs[i] * 31536000LL
                                                                            : 100000000000000000LL;
                ts = from.start_timestamp + (k < 1000 ? (int64_t)(x % (uint64_t)(2 * span + 1)) - span : (k - 1000) * 7);
                got = etl_clock_map_timestamp(&m, ts);
                want = nearest_tick(&from, &to, ts);
                ck_assert_msg(got == want, "%lld Hz -> %lld Hz: ts %lld gave %lld, not %lld", (long long)freqs[i],
                              (long long)freqs[j], (long long)ts, (long long)got, (long long)want);
                /* Within half a target tick (plus the nanosecond of flooring) in absolute time. */
                ck_assert_int_le(llabs(etl_clock_time_ns(&to, got) - etl_clock_time_ns(&from, ts)),
                                 (1000000000LL + 2 * freqs[j] - 1) / (2 * freqs[j]) + 1);
                if (k >= 1000) {
                    ck_assert_int_ge(got, last);
                    last = got;
                }
                if (m.same_frequency) ck_assert_int_eq(got, ts + m.shift);
            }
        }
    /* Beyond 2^36 Hz the arithmetic could overflow: refused (as are anchors too far apart, below). */
    {
        etl_clock fast = qpc(1LL << 37), slow = qpc(10000000);
        ck_assert_int_eq(etl_clock_map_init(&m, &fast, &slow), ETL_FAILED);
        ck_assert_int_eq(etl_clock_map_init(&m, &slow, &fast), ETL_FAILED);
    }
    /* Extremes saturate; clocks without a frequency are 100 ns ticks, as etl_clock_time_ns takes them. */
    {
        etl_clock a = qpc(1), b = qpc(68000000000LL), none = qpc(0);
        ck_assert_int_eq(etl_clock_map_init(&m, &a, &b), ETL_OK);
        ck_assert_int_eq(etl_clock_map_timestamp(&m, INT64_MAX), INT64_MAX);
        ck_assert_int_eq(etl_clock_map_timestamp(&m, INT64_MIN), INT64_MIN);
        ck_assert_int_eq(etl_clock_map_init(&m, &none, &b), ETL_OK);
        ck_assert_int_eq(etl_clock_map_timestamp(&m, 5001), 5000 + 6800);
        /* Anchors 58 000 years apart: 2^64 FILETIME units are 1844674407371 s at 1 Hz ... */
        b = qpc(1);
        b.start_time = INT64_MIN;
        a.start_time = INT64_MAX;
        ck_assert_int_eq(etl_clock_map_init(&m, &a, &b), ETL_OK);
        ck_assert_int_eq(etl_clock_map_timestamp(&m, a.start_timestamp), b.start_timestamp + 1844674407371LL);
        /* ... and more ticks than 64 bits hold at 68 GHz. */
        b = qpc(68000000000LL);
        b.start_time = INT64_MIN;
        ck_assert_int_eq(etl_clock_map_init(&m, &a, &b), ETL_FAILED);
    }
}
END_TEST

/* etl_time_parse reads what etl_time_format writes, and refuses what is not a time. */
START_TEST(parse_time)
{
    static const int64_t values[] = { NS_2024, NS_2024 + 123456789, 0, -1, 951782400000000000LL /* 2000-02-29 */,
                                      -6106060800000000000LL /* 1776-07-04 */, 9223372036000000000LL };
    static const char *const bad[] = { "", "2024", "2024-01-01", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
                                       "2024-02-30T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00.Z",
                                       "2024-01-01T00:00:00Zx", "2024-01-01X00:00:00", "2300-01-01T00:00:00Z" };
    char s[40];
    int64_t ns;

    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        etl_time_format(values[i], s, sizeof s);
        ck_assert_int_eq(etl_time_parse(s, &ns), ETL_OK);
        ck_assert_int_eq(ns, values[i]);
    }
    ck_assert_int_eq(etl_time_parse("2024-01-01T00:00:01.5", &ns), ETL_OK);
    ck_assert_int_eq(ns, NS_2024 + 1500000000);
    ck_assert_int_eq(etl_time_parse("2024-01-01 00:00:00.0000000019Z", &ns), ETL_OK);
    ck_assert_int_eq(ns, NS_2024 + 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(etl_time_parse(bad[i], &ns) == ETL_FAILED, "'%s' was taken", bad[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("conversion");

    /* clock_map checks 200 000 mappings (10 x 10 clock pairs) against a 128-bit oracle:
       about 4 s under ThreadSanitizer on a loaded machine, the default limit. */
    tcase_set_timeout(tc, 60);

    tcase_add_test(tc, filetime_conversion);
    tcase_add_test(tc, perfcounter);
    tcase_add_test(tc, systemtime_and_cycles);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, time_ns_is_exact);
    tcase_add_test(tc, extremes_saturate);
    tcase_add_test(tc, clock_map);
    tcase_add_test(tc, parse_time);
    suite_add_tcase(s, tc);
    tc = tcase_create("tsc line");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, tsc_line_tracks_the_kernel_clock);
    tcase_add_test(tc, stale_tsc_line_falls_back);
    tcase_add_test(tc, start_after_idle_refits);
    suite_add_tcase(s, tc);
    return check_run(s);
}
