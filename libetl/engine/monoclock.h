/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC_RAW in nanoseconds, read through the time-stamp counter. Private to libetl. */
#ifndef LIBETL_MONOCLOCK_H
#define LIBETL_MONOCLOCK_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/monoclock.h is private to libetl: include <etl.h>"
#endif

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/*
 * The PerfCounter clock of a session is CLOCK_MONOTONIC_RAW in nanoseconds. Asking the kernel
 * for it costs a vDSO call (26 ns on the reference machine, a third of an event's budget); on
 * x86-64 with an invariant TSC the session instead interpolates it from the TSC along a line
 * that the flush threads re-fit to clock_gettime() every 100 ms:
 *
 *     d  = tsc - base_tsc
 *     ns = base_ns + (d * mult) >> 32 + (min(d, slew_ticks) * slew_mult) >> 32
 *
 * mult is the TSC's rate measured over the whole run of lines. A new line starts where the old
 * one is at that moment (so the clock never steps back) and takes up the error measured then
 * (the kernel's clock minus the line) over the next slew_ticks, one period, as an NTP slew
 * does; after that it runs at the measured rate. However late the next re-fit comes, the
 * error is taken up exactly once, so the fit cannot overshoot or oscillate. A reading
 * more than `max_ticks` past the base (the line is stale: nothing re-fitted it, or the TSC
 * jumped) or before it (the TSC went back) is taken from clock_gettime() instead. Without an
 * invariant TSC every reading is clock_gettime().
 *
 * The line is process-wide, shared by all sessions, published under a sequence count.
 */
struct etl_monoclock {
    _Alignas(64) _Atomic uint32_t seq; /* odd while the line is being replaced */
    _Atomic int usable;                /* 1: TSC line, 0: not decided, -1: clock_gettime only */
    _Atomic uint64_t base_tsc;
    _Atomic int64_t base_ns;
    _Atomic uint64_t mult;             /* ns per tick, times 2^32 */
    _Atomic int64_t slew_mult;         /* the error taken up per tick, ns times 2^32 */
    _Atomic uint64_t slew_ticks;       /* over how many ticks */
    _Atomic uint64_t max_ticks;
};

extern struct etl_monoclock etl_monoclock_line;

static inline int64_t etl_monoclock_exact(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The clock now along line c: interpolated when the line is usable and fresh, else from the
   kernel. c is the process's line, or a copy of it that another process publishes (a shared
   session's, so that every process writing into it reads one clock). */
static inline int64_t etl_monoclock_read(struct etl_monoclock *c)
{
#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
    if (atomic_load_explicit(&c->usable, memory_order_relaxed) > 0) {
        for (;;) {
            uint32_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
            /* Acquire loads (plain moves on x86-64): the check of seq below stays after them. */
            uint64_t base = atomic_load_explicit(&c->base_tsc, memory_order_acquire);
            int64_t ns = atomic_load_explicit(&c->base_ns, memory_order_acquire);
            uint64_t mult = atomic_load_explicit(&c->mult, memory_order_acquire);
            int64_t slew = atomic_load_explicit(&c->slew_mult, memory_order_acquire);
            uint64_t slew_ticks = atomic_load_explicit(&c->slew_ticks, memory_order_acquire);
            uint64_t max = atomic_load_explicit(&c->max_ticks, memory_order_acquire);
            uint64_t d = __rdtsc() - base;

            if ((seq & 1) || atomic_load_explicit(&c->seq, memory_order_relaxed) != seq) continue;
            if (d > max) break; /* stale, or the counter went back: ask the kernel */
            /* max_ticks keeps d (and slew_ticks) below 2^31: the slew product fits 64 bits. */
            return ns + (int64_t)(((unsigned __int128)d * mult) >> 32) +
                   (int64_t)(d < slew_ticks ? d : slew_ticks) * slew / 4294967296LL;
        }
    }
#else
    (void)c;
#endif
    return etl_monoclock_exact();
}

/* The clock now along the process's line. */
static inline int64_t etl_monoclock_now(void) { return etl_monoclock_read(&etl_monoclock_line); }

/* Decide whether the TSC can be used and fit the first line (takes about 10 ms, once per
   process). Returns 1 when readings are interpolated, 0 when they come from the kernel. */
int etl_monoclock_init(void);
/* Re-fit the line if it is older than 50 ms; cheap otherwise. Called by flush threads. */
void etl_monoclock_tick(void);
/* Re-fit the line now (tests). */
void etl_monoclock_refit(void);
/* Copy the process's line into dst (a shared session's copy), under dst's sequence count. */
void etl_monoclock_publish_copy(struct etl_monoclock *dst);
/* TSC ticks per microsecond as the line measures them, or 0 without a line. */
uint32_t etl_monoclock_tsc_mhz(void);

#endif
