/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC_RAW interpolated from the TSC along a line re-fitted every 100 ms (engine.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "engine/engine.h"

struct etl_monoclock etl_monoclock_line;

#define PERIOD_NS 100000000LL   /* the flush threads wake this often */
#define STEP_NS 1000000LL       /* an error beyond this restarts the line instead of slewing */

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)

static pthread_mutex_t fit_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under fit_lock: the first point of the current line run (the slope's long baseline) and the
   time of the last fit. */
static uint64_t ref_tsc, last_fit_tsc;
static int64_t ref_ns;

/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every power state. */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;

    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007) return 0;
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d)) return 0;
    return (d >> 8) & 1;
}

/* A (tsc, ns) pair taken as close together as five tries allow. */
static void sample(uint64_t *tsc, int64_t *ns)
{
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 5; i++) {
        uint64_t t1 = __rdtsc();
        int64_t n = etl_monoclock_exact();
        uint64_t t2 = __rdtsc();
        if (t2 >= t1 && t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
    if (best == UINT64_MAX) { /* the counter went back five times: take the kernel's pair */
        *tsc = __rdtsc();
        *ns = etl_monoclock_exact();
    }
}

/* Ticks in ns nanoseconds at the rate mult. */
static uint64_t ticks_in(int64_t ns, uint64_t mult)
{
    return mult ? (uint64_t)(((unsigned __int128)ns << 32) / mult) : 0;
}

/* A new line from (base_tsc, base_ns) at rate mult, taking up error ns over one period. */
static void publish(uint64_t base_tsc, int64_t base_ns, uint64_t mult, int64_t error)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    uint32_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
    uint64_t slew_ticks = ticks_in(PERIOD_NS, mult);
    /* Four periods' worth of ticks: a line nobody re-fitted for that long is not trusted (and
       below 2^31 ticks for any TSC under 5 GHz, as the reading's arithmetic needs). */
    uint64_t max = ticks_in(4 * PERIOD_NS, mult);
    int64_t slew = slew_ticks ? (int64_t)(((__int128)error * 4294967296LL) / (__int128)slew_ticks) : 0;

    if (max > 0x7FFFFFFF) max = 0x7FFFFFFF;
    if (slew_ticks > max) slew_ticks = max;
    /* Release stores: a reader that sees any new field sees the odd count too. */
    atomic_store_explicit(&c->seq, seq + 1, memory_order_relaxed);
    atomic_store_explicit(&c->base_tsc, base_tsc, memory_order_release);
    atomic_store_explicit(&c->base_ns, base_ns, memory_order_release);
    atomic_store_explicit(&c->mult, mult, memory_order_release);
    atomic_store_explicit(&c->slew_mult, slew, memory_order_release);
    atomic_store_explicit(&c->slew_ticks, slew_ticks, memory_order_release);
    atomic_store_explicit(&c->max_ticks, max, memory_order_release);
    atomic_store_explicit(&c->seq, seq + 2, memory_order_release);
}

/* ns per tick << 32 between two points, or 0 when they do not make a slope. */
static uint64_t slope(uint64_t t0, int64_t n0, uint64_t t1, int64_t n1)
{
    if (t1 <= t0 || n1 <= n0) return 0;
    return (uint64_t)(((unsigned __int128)(uint64_t)(n1 - n0) << 32) / (t1 - t0));
}

/* The line's value at tick t (t within max_ticks of the base). */
static int64_t line_at(uint64_t t)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    uint64_t d = t - atomic_load_explicit(&c->base_tsc, memory_order_relaxed);
    uint64_t slew_ticks = atomic_load_explicit(&c->slew_ticks, memory_order_relaxed);

    return atomic_load_explicit(&c->base_ns, memory_order_relaxed) +
           (int64_t)(((unsigned __int128)d * atomic_load_explicit(&c->mult, memory_order_relaxed)) >> 32) +
           (int64_t)(d < slew_ticks ? d : slew_ticks) * atomic_load_explicit(&c->slew_mult, memory_order_relaxed) /
               4294967296LL;
}

static void refit_locked(void)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    uint64_t base = atomic_load_explicit(&c->base_tsc, memory_order_relaxed), t;
    uint64_t mult = atomic_load_explicit(&c->mult, memory_order_relaxed), fit;
    int64_t r, v, e;

    sample(&t, &r);
    last_fit_tsc = t;
    if (t < base || t - base > atomic_load_explicit(&c->max_ticks, memory_order_relaxed)) {
        /* The counter went back, or the line went stale (readings came from the kernel
           meanwhile): start a new run here. */
        ref_tsc = t;
        ref_ns = r;
        publish(t, r, mult, 0);
        return;
    }
    v = line_at(t);
    e = r - v;
    if (e > STEP_NS || e < -STEP_NS) {
        ref_tsc = t;
        ref_ns = r;
        publish(t, r, mult, 0);
        return;
    }
    /* The rate over the whole run; the error is taken up over the next period, at most 0.1%
       of it (the clock runs forward at 0.999 of the rate at least). */
    fit = slope(ref_tsc, ref_ns, t, r);
    if (!fit) fit = mult;
    if (e > PERIOD_NS / 1000) e = PERIOD_NS / 1000;
    if (e < -PERIOD_NS / 1000) e = -PERIOD_NS / 1000;
    publish(t, v, fit, e);
}

int etl_monoclock_init(void)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    int usable;

    pthread_mutex_lock(&fit_lock);
    usable = atomic_load_explicit(&c->usable, memory_order_relaxed);
    if (!usable) {
        uint64_t t0, t1, mult;
        int64_t n0, n1;
        struct timespec pause = { 0, 10000000 };

        usable = -1;
        if (tsc_invariant()) {
            sample(&t0, &n0);
            nanosleep(&pause, NULL);
            sample(&t1, &n1);
            mult = slope(t0, n0, t1, n1);
            if (mult) {
                ref_tsc = t0;
                ref_ns = n0;
                last_fit_tsc = t1;
                publish(t1, n1, mult, 0);
                usable = 1;
            }
        }
        atomic_store_explicit(&c->usable, usable, memory_order_release);
    } else if (usable > 0) {
        /* A session starting after the line went stale (no session ran for a while) must not
           spend its first 100 ms on the kernel's clock. */
        uint64_t mult = atomic_load_explicit(&c->mult, memory_order_relaxed);
        if (__rdtsc() - last_fit_tsc >= ticks_in(PERIOD_NS / 2, mult)) refit_locked();
    }
    pthread_mutex_unlock(&fit_lock);
    return usable > 0;
}

void etl_monoclock_tick(void)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    uint64_t mult, now;

    if (atomic_load_explicit(&c->usable, memory_order_acquire) <= 0) return;
    mult = atomic_load_explicit(&c->mult, memory_order_relaxed);
    now = __rdtsc();
    if (pthread_mutex_trylock(&fit_lock) != 0) return; /* another session's thread is at it */
    /* Half a period since the last fit, in ticks. */
    if (mult && now - last_fit_tsc >= (uint64_t)(((unsigned __int128)(PERIOD_NS / 2) << 32) / mult)) refit_locked();
    pthread_mutex_unlock(&fit_lock);
}

void etl_monoclock_refit(void)
{
    if (atomic_load_explicit(&etl_monoclock_line.usable, memory_order_acquire) <= 0) return;
    pthread_mutex_lock(&fit_lock);
    refit_locked();
    pthread_mutex_unlock(&fit_lock);
}

uint32_t etl_monoclock_tsc_mhz(void)
{
    uint64_t mult = atomic_load_explicit(&etl_monoclock_line.mult, memory_order_relaxed);

    if (atomic_load_explicit(&etl_monoclock_line.usable, memory_order_acquire) <= 0 || !mult) return 0;
    return (uint32_t)((((unsigned __int128)1000 << 32) + mult / 2) / mult);
}

#else /* no TSC line: every reading is clock_gettime() */

int etl_monoclock_init(void)
{
    atomic_store(&etl_monoclock_line.usable, -1);
    return 0;
}
void etl_monoclock_tick(void) {}
void etl_monoclock_refit(void) {}
uint32_t etl_monoclock_tsc_mhz(void) { return 0; }

#endif

void etl_monoclock_publish_copy(struct etl_monoclock *dst)
{
    struct etl_monoclock *c = &etl_monoclock_line;
    uint64_t base, mult, slew_ticks, max;
    int64_t ns, slew;
    int usable;
    uint32_t seq, dseq;

    do { /* a consistent reading of the process's line */
        seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        usable = atomic_load_explicit(&c->usable, memory_order_acquire);
        base = atomic_load_explicit(&c->base_tsc, memory_order_acquire);
        ns = atomic_load_explicit(&c->base_ns, memory_order_acquire);
        mult = atomic_load_explicit(&c->mult, memory_order_acquire);
        slew = atomic_load_explicit(&c->slew_mult, memory_order_acquire);
        slew_ticks = atomic_load_explicit(&c->slew_ticks, memory_order_acquire);
        max = atomic_load_explicit(&c->max_ticks, memory_order_acquire);
    } while ((seq & 1) || atomic_load_explicit(&c->seq, memory_order_relaxed) != seq);
    dseq = atomic_load_explicit(&dst->seq, memory_order_relaxed);
    atomic_store_explicit(&dst->seq, dseq + 1, memory_order_relaxed);
    atomic_store_explicit(&dst->base_tsc, base, memory_order_release);
    atomic_store_explicit(&dst->base_ns, ns, memory_order_release);
    atomic_store_explicit(&dst->mult, mult, memory_order_release);
    atomic_store_explicit(&dst->slew_mult, slew, memory_order_release);
    atomic_store_explicit(&dst->slew_ticks, slew_ticks, memory_order_release);
    atomic_store_explicit(&dst->max_ticks, max, memory_order_release);
    atomic_store_explicit(&dst->seq, dseq + 2, memory_order_release);
    atomic_store_explicit(&dst->usable, usable, memory_order_release);
}
