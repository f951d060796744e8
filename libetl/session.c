/* SPDX-License-Identifier: MIT */
/* The capture engine: a session's per-processor buffer pool with lock-free reservation, its flush thread and logging modes. */
/* sched_getcpu, gettid through syscall, MAP_ANONYMOUS: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "format.h"
#include "monoclock.h"
#include "provider.h"
#include "rseq.h"
#include "writer.h"

/*
 * Two ways to write into a processor's buffer; a session uses one of them throughout.
 *
 * Restartable sequences (x86-64 Linux, the default where the kernel offers them; rseq.h):
 * slots[cpu] points at the processor's current buffer, and a writer copies its finished
 * record into it and moves the buffer's offset (cursor.off) inside one sequence: no atomic
 * instruction at all. A writer that finds no room takes a fresh buffer and swaps it in with
 * another sequence on that processor; the flush thread does the same (moving itself onto the
 * processor) to close a buffer for the flush timer, a flush request or the stop.
 *
 * Compare-and-swap (elsewhere, or with ETL_ENGINE_ATOMIC_RESERVE): the state word of a buffer
 * holds a generation (high half: how many times the buffer was taken into use) and the end of
 * its reservations (low half), with SEALED set once the buffer takes no more. Writers reserve
 * with compare-and-swap on the state word, so a writer that held on to a buffer that was since
 * written and reused sees another generation and never writes into it. The one that finds no
 * room seals the buffer; the flush thread writes it once `committed` says every reservation
 * below the end is written.
 */
#define STATE_SEALED 0x80000000u
#define STATE(gen, off) ((uint64_t)(gen) << 32 | (off))

struct ebuf {
    /* One cache line per buffer: neighbouring buffers are other processors' current ones. */
    _Alignas(64) struct etl_rseq_cursor cur; /* offset, size, data: what sequences write (first) */
    _Atomic uint64_t state; /* generation << 32 | SEALED | end of the reservations */
    _Atomic uint32_t committed; /* bytes of the records fully written */
    _Atomic uint32_t next;      /* stack link: index + 1 */
    uint32_t used;              /* end of the records, set by the sealer */
    uint16_t cpu;
    uint64_t seal;              /* sealing order */
};

/* Events lost on one processor, on a cache line of its own: when the pool is exhausted every
   writer counts every event, and one shared counter would bounce between processors. */
struct lost_count {
    _Alignas(64) _Atomic uint64_t n;
};

struct etl_session {
    etl_session_properties p;
    char *logger_name, *log_file_name;
    uint32_t bsize, ncpu, nmin, nmax;
    int buffering;
    int rseq;                      /* writers use restartable sequences on slots */
    int exact_clock;               /* PerfCounter readings from clock_gettime() each time */
    int evict;                     /* evict written buffers from the cache: 2 CLFLUSHOPT, 1 CLFLUSH */
    struct etl_rseq_cursor **slots; /* rseq: per processor, its current buffer or NULL */
    uint8_t *memory;
    size_t memory_size;
    struct ebuf *bufs;
    _Atomic uint64_t free_head;    /* (tag << 32) | index + 1 */
    _Atomic uint32_t free_count;
    _Atomic uint64_t full_head;    /* sealed buffers waiting for the flush thread */
    _Atomic uint32_t allocated;    /* buffers taken into the pool */
    _Atomic uint64_t *current;     /* per processor: generation << 32 | index + 1, 0 for none */
    _Atomic uint64_t seal_counter;
    _Atomic uint64_t events_lost;  /* what the flush thread counts (refused buffers) */
    struct lost_count *lost;       /* per processor: events writers could not log */
    _Atomic int file_full;
    _Atomic int stopping;
    _Atomic int wake_pending;      /* the flush thread was woken and has not run yet */
    uint32_t low_water;            /* wake it when fewer buffers than this are available */
    etl_clock clock;
    int64_t boot_time;             /* FILETIME, from /proc/stat */
    etl_writer *writer;
    /* The flush thread and the requests it serves. */
    pthread_t flusher;
    int flusher_started;
    sem_t wake;
    pthread_mutex_t lock;          /* the retained ring and the requests, never the write path */
    pthread_cond_t done;
    uint64_t flush_requested, flush_completed;
    /* Buffering mode: sealed buffers kept, oldest first. */
    uint32_t *ring;
    uint32_t ring_head, ring_n;
    uint32_t *batch;               /* sealed buffers being collected */
    _Atomic uint32_t buffers_written, log_buffers_lost;
    char err[256];
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void serror(etl_session *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

const char *etl_session_error(const etl_session *s) { return s ? s->err : "out of memory"; }

/* ------------------------------------------------------------------ clock */

static int64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (int64_t)__rdtsc();
#else
    return clock_ns(CLOCK_MONOTONIC_RAW);
#endif
}

static inline int64_t session_now(const etl_session *s)
{
    switch (s->clock.type) {
    case ETL_CLOCK_SYSTEMTIME: return etl_ns_to_filetime(clock_ns(CLOCK_REALTIME));
    case ETL_CLOCK_CPUCYCLE: return cycles();
    default: return s->exact_clock ? etl_monoclock_exact() : etl_monoclock_now();
    }
}

int64_t etl_session_timestamp(const etl_session *s) { return session_now(s); }

/* Ticks of the cycle counter per microsecond, measured against the monotonic clock (the
   TSC line has measured it already when there is one). */
static uint32_t measure_cpu_mhz(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t known = etl_monoclock_tsc_mhz();
    if (known) return known;
    int64_t t0 = clock_ns(CLOCK_MONOTONIC_RAW), c0 = cycles(), t1, c1;
    struct timespec pause = { 0, 20000000 };
    nanosleep(&pause, NULL);
    t1 = clock_ns(CLOCK_MONOTONIC_RAW);
    c1 = cycles();
    return t1 > t0 ? (uint32_t)((c1 - c0) * 1000 / (t1 - t0)) : 1000;
#else
    return 1000;
#endif
}

/* The clock of the file: StartTime and the raw clock then, taken together. */
static void session_clock(etl_session *s)
{
    s->clock.type = s->p.clock_type ? s->p.clock_type : ETL_CLOCK_PERFCOUNTER;
    /* The TSC line serves every session of the process; it is fitted once, here. */
    s->exact_clock = (s->p.engine_flags & ETL_ENGINE_EXACT_CLOCK) || !etl_monoclock_init();
    s->clock.cpu_speed_mhz = measure_cpu_mhz(); /* recorded whatever the clock, as Windows does */
    s->clock.perf_freq = s->clock.type == ETL_CLOCK_SYSTEMTIME ? 10000000 : 1000000000;
    s->clock.start_timestamp = session_now(s);
    s->clock.start_time = etl_ns_to_filetime(clock_ns(CLOCK_REALTIME));
}

/* ------------------------------------------------------------------ buffer stacks */

static void stack_push(_Atomic uint64_t *head, struct ebuf *bufs, uint32_t index)
{
    uint64_t old = atomic_load_explicit(head, memory_order_relaxed), nw;

    do {
        atomic_store_explicit(&bufs[index].next, (uint32_t)old, memory_order_relaxed);
        nw = ((old >> 32) + 1) << 32 | (index + 1);
    } while (!atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_release, memory_order_relaxed));
}

/* Index + 1 of a buffer taken from the stack, or 0 if it is empty. The tag in the high half
   makes a head that was popped and pushed back in between fail the exchange (ABA). */
static uint32_t stack_pop(_Atomic uint64_t *head, struct ebuf *bufs)
{
    uint64_t old = atomic_load_explicit(head, memory_order_acquire), nw;

    for (;;) {
        uint32_t top = (uint32_t)old;
        if (!top) return 0;
        nw = ((old >> 32) + 1) << 32 | atomic_load_explicit(&bufs[top - 1].next, memory_order_relaxed);
        if (atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_acquire, memory_order_acquire))
            return top;
    }
}

static void free_push(etl_session *s, uint32_t index)
{
    stack_push(&s->free_head, s->bufs, index);
    atomic_fetch_add_explicit(&s->free_count, 1, memory_order_relaxed);
}

static uint32_t reclaim_oldest(etl_session *s);

/* A buffer ready for cpu: from the free list, else a new one while the pool may grow. */
static uint64_t take_buffer(etl_session *s, uint16_t cpu)
{
    uint32_t top = stack_pop(&s->free_head, s->bufs);
    struct ebuf *b;

    if (top) {
        atomic_fetch_sub_explicit(&s->free_count, 1, memory_order_relaxed);
    } else {
        uint32_t n = atomic_load_explicit(&s->allocated, memory_order_relaxed);
        do {
            if (n >= s->nmax) {
                /* Buffering mode reuses its oldest buffer; a file session has none to give. */
                top = s->buffering ? reclaim_oldest(s) : 0;
                if (!top) return 0;
                break;
            }
        } while (!atomic_compare_exchange_weak_explicit(&s->allocated, &n, n + 1, memory_order_relaxed,
                                                         memory_order_relaxed));
        if (!top) top = n + 1;
    }
    b = &s->bufs[top - 1];
    b->cpu = cpu;
    b->used = 0;
    /* An rseq writer may still look at the offset of a buffer it saw in a slot before (a hint
       that the sequence checks again): atomic, as that reader's load. */
    __atomic_store_n(&b->cur.off, ETL_BUFFER_HEADER_SIZE, __ATOMIC_RELAXED);
    atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
    {
        uint32_t gen = (uint32_t)(atomic_load_explicit(&b->state, memory_order_relaxed) >> 32) + 1;
        atomic_store_explicit(&b->state, STATE(gen, ETL_BUFFER_HEADER_SIZE), memory_order_release);
        return STATE(gen, top);
    }
}

/* The buffer ends at `end`: hand it to the flush thread. Only the one reservation that
   crossed the end (or the flush that closed the buffer) calls this. */
static void seal(etl_session *s, uint32_t top, uint32_t end)
{
    struct ebuf *b = &s->bufs[top - 1];

    b->used = end;
    b->seal = atomic_fetch_add_explicit(&s->seal_counter, 1, memory_order_relaxed);
    stack_push(&s->full_head, s->bufs, top - 1);
    /* Waking the flush thread is a system call, and the thread then takes the producer's
       processor: only when the pool runs low (it also wakes every 100 ms by itself). */
    if (!s->buffering &&
        atomic_load_explicit(&s->free_count, memory_order_relaxed) +
                (s->nmax - atomic_load_explicit(&s->allocated, memory_order_relaxed)) <= s->low_water &&
        !atomic_exchange_explicit(&s->wake_pending, 1, memory_order_relaxed))
        sem_post(&s->wake);
}

/* Replace cpu's buffer `old` (generation << 32 | index + 1, or 0) by a fresh one; returns the
   current buffer afterwards, or 0 when no buffer is free. */
static uint64_t switch_buffer(etl_session *s, uint16_t cpu, uint64_t old)
{
    uint64_t fresh = take_buffer(s, cpu), expected = old;

    if (!fresh) return 0;
    if (atomic_compare_exchange_strong_explicit(&s->current[cpu], &expected, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free_push(s, (uint32_t)fresh - 1); /* another writer switched first */
    return expected ? expected : switch_buffer(s, cpu, 0);
}

static _Thread_local uint32_t cached_tid __attribute__((tls_model("initial-exec")));
static _Thread_local uint32_t cached_pid __attribute__((tls_model("initial-exec")));

static void forget_ids(void)
{
    cached_tid = 0;
    cached_pid = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(NULL, NULL, forget_ids); }

static inline void caller_ids(uint32_t *pid, uint32_t *tid)
{
    if (!cached_tid) {
        cached_tid = (uint32_t)syscall(SYS_gettid);
        cached_pid = (uint32_t)getpid();
    }
    *pid = cached_pid;
    *tid = cached_tid;
}

/*
 * Reserve space bytes in the current buffer of the caller's processor. Returns where to
 * write and the buffer (for the commit), or NULL with errno set when the event is lost.
 */
static uint8_t *reserve(etl_session *s, uint32_t space, struct ebuf **out)
{
    int c = sched_getcpu();
    uint16_t cpu = (uint16_t)((c < 0 ? 0 : (unsigned)c) % s->ncpu);
    uint64_t cur = atomic_load_explicit(&s->current[cpu], memory_order_acquire);

    if (atomic_load_explicit(&s->file_full, memory_order_relaxed)) {
        errno = ENOSPC;
        return NULL;
    }
    for (;;) {
        struct ebuf *b;
        uint64_t st;
        uint32_t gen = (uint32_t)(cur >> 32), top = (uint32_t)cur;

        if (!top) {
            cur = switch_buffer(s, cpu, 0);
            if (!cur) {
                errno = ENOBUFS;
                return NULL;
            }
            continue;
        }
        b = &s->bufs[top - 1];
        st = atomic_load_explicit(&b->state, memory_order_acquire);
        for (;;) {
            uint32_t off = (uint32_t)st;
            if ((uint32_t)(st >> 32) != gen || (off & STATE_SEALED)) break; /* reused or closed */
            if (off + space <= s->bsize) {
                if (atomic_compare_exchange_weak_explicit(&b->state, &st, STATE(gen, off + space),
                                                          memory_order_acquire, memory_order_acquire)) {
                    *out = b;
                    return b->cur.data + off;
                }
                continue;
            }
            /* No room: close the buffer where its records end, and hand it on. */
            if (atomic_compare_exchange_weak_explicit(&b->state, &st, STATE(gen, off | STATE_SEALED),
                                                      memory_order_acq_rel, memory_order_acquire)) {
                seal(s, top, off);
                break;
            }
        }
        /* Not (or no longer) this buffer: move cpu on from it if it is still current. */
        if (atomic_load_explicit(&s->current[cpu], memory_order_acquire) == cur) {
            cur = switch_buffer(s, cpu, cur);
            if (!cur) {
                errno = ENOBUFS;
                return NULL;
            }
        } else {
            cur = atomic_load_explicit(&s->current[cpu], memory_order_acquire);
        }
    }
}

static inline void commit(struct ebuf *b, uint32_t space)
{
    atomic_fetch_add_explicit(&b->committed, space, memory_order_release);
}

/* EventsLost: what writers and the flush thread counted. */
static uint64_t events_lost(const etl_session *s)
{
    uint64_t n = atomic_load_explicit(&s->events_lost, memory_order_relaxed);

    for (uint32_t i = 0; s->lost && i < s->ncpu; i++) n += atomic_load_explicit(&s->lost[i].n, memory_order_relaxed);
    return n;
}

static int lost(etl_session *s)
{
    int cpu = sched_getcpu();

    atomic_fetch_add_explicit(&s->lost[(unsigned)(cpu < 0 ? 0 : cpu) % s->ncpu].n, 1, memory_order_relaxed);
    return ETL_FAILED;
}

/* ------------------------------------------------------------------ restartable sequences */

/* rseq: buffer b left its processor's slot, so its offset is final: hand it on. */
static void seal_taken(etl_session *s, struct ebuf *b)
{
    uint32_t used = b->cur.off;

    atomic_store_explicit(&b->committed, used - ETL_BUFFER_HEADER_SIZE, memory_order_relaxed);
    seal(s, (uint32_t)(b - s->bufs) + 1, used);
}

static struct ebuf *cursor_buffer(struct etl_rseq_cursor *c) { return (struct ebuf *)(void *)c; }

#if defined(ETL_HAVE_RSEQ)
/*
 * The slow path of an append: the processor has no current buffer, or no room for space
 * bytes in it. Swap in a fresh buffer and close the old one. Returns 1 to try the append
 * again, 0 when no buffer is free (the event is lost).
 */
static int replace_current(etl_session *s, struct etl_rseq_abi *rs, uint32_t space)
{
    uint32_t cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
    struct etl_rseq_cursor *old;
    uint64_t fresh;

    if (cpu >= s->ncpu) return 0; /* a processor the session was not sized for */
    old = __atomic_load_n(&s->slots[cpu], __ATOMIC_RELAXED);
    /* old may have been closed and reused since: this look is only a hint (an old buffer that
       came back to the slot is closed early by the swap below, which loses nothing). */
    if (old && __atomic_load_n(&old->off, __ATOMIC_RELAXED) + space <= s->bsize)
        return 1; /* the thread moved, or another one swapped first: try again */
    fresh = take_buffer(s, (uint16_t)cpu);
    if (!fresh) return 0;
    for (;;) {
        int r;
        ETL_HB_RELEASE(&s->slots[cpu]); /* what take_buffer wrote, for whoever takes it out */
        r = etl_rseq_swap(rs, s->slots, cpu, old, &s->bufs[(uint32_t)fresh - 1].cur);
        if (r == 0) {
            ETL_HB_ACQUIRE(&s->slots[cpu]); /* what the one who put old in wrote */
            if (old) seal_taken(s, cursor_buffer(old));
            return 1;
        }
        if (r > 0) { /* on another processor now, or the slot changed: not ours to replace */
            free_push(s, (uint32_t)fresh - 1);
            return 1;
        }
    }
}

/* Copy a finished record into the caller's processor's buffer. */
static int append(etl_session *s, const uint8_t *rec, uint32_t space)
{
    struct etl_rseq_abi *rs = etl_rseq_thread_area();

    if (!rs) {
        errno = ENOTSUP; /* a thread without an rseq area cannot write into this session */
        return lost(s);
    }
    if (atomic_load_explicit(&s->file_full, memory_order_relaxed)) {
        errno = ENOSPC;
        return lost(s);
    }
    for (;;) {
        int r = etl_rseq_append(rs, s->slots, s->ncpu, rec, space);
        if (r == 0) return ETL_OK;
        if (r > 0 && !replace_current(s, rs, space)) {
            errno = ENOBUFS;
            return lost(s);
        }
    }
}
#else
static int append(etl_session *s, const uint8_t *rec, uint32_t space)
{
    (void)rec;
    (void)space;
    errno = ENOTSUP;
    return lost(s);
}
#endif

/*
 * Writing one record: emit_begin gives where to encode it (the reserved space in the buffer,
 * or with sequences a staging area, on the stack for the common small record), emit_end
 * commits it. The record is refused (E2BIG) when it cannot fit in a buffer.
 */
struct emit {
    struct ebuf *b;
    uint8_t *p, *heap;
    uint32_t space;
    _Alignas(8) uint8_t stage[512];
};

static uint8_t *emit_begin(etl_session *s, uint32_t size, struct emit *e)
{
    if (!size || ETL_RECORD_SPACE(size) > s->bsize - ETL_BUFFER_HEADER_SIZE) {
        errno = E2BIG;
        lost(s);
        return NULL;
    }
    e->space = ETL_RECORD_SPACE(size);
    e->heap = NULL;
    if (s->rseq) {
        if (e->space <= sizeof e->stage) return e->p = e->stage;
        e->p = e->heap = malloc(e->space);
        if (!e->p) lost(s);
        return e->p;
    }
    e->p = reserve(s, e->space, &e->b);
    if (!e->p) lost(s);
    return e->p;
}

static int emit_end(etl_session *s, struct emit *e)
{
    int rc;

    if (!s->rseq) {
        commit(e->b, e->space);
        return ETL_OK;
    }
    rc = append(s, e->p, e->space);
    if (e->heap) free(e->heap);
    return rc;
}

int etl_session_write_event(etl_session *s, const etl_guid *provider, const etl_event_descriptor *d,
                            const etl_event_extras *x, const etl_data *data, unsigned ndata)
{
    uint32_t size, pid, tid;
    struct emit e;
    uint8_t *p;

    if (!x) { /* the common case, without calling the encoder twice */
        uint64_t n = ETL_EVENT_HEADER_SIZE;
        for (unsigned i = 0; i < ndata; i++) n += data[i].size;
        size = n > ETL_MAX_RECORD_SIZE ? 0 : (uint32_t)n;
    } else {
        size = etl_encode_event(NULL, 0, 0, 0, 0, provider, d, x, data, ndata);
    }
    p = emit_begin(s, size, &e);
    if (!p) return ETL_FAILED;
    caller_ids(&pid, &tid);
    etl_encode_event(p, e.space, session_now(s), pid, tid, provider, d, x, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_system(etl_session *s, int64_t ts, uint16_t hook, uint16_t version, uint32_t pid,
                             uint32_t tid, const etl_data *data, unsigned ndata)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_encode_system(NULL, 0, 0, hook, version, pid, tid, data, ndata), &e);

    if (!p) return ETL_FAILED;
    etl_encode_system(p, e.space, ts ? ts : session_now(s), hook, version, pid, tid, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_perfinfo(etl_session *s, int64_t ts, uint16_t hook, uint16_t version,
                               const etl_data *data, unsigned ndata)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_encode_perfinfo(NULL, 0, 0, hook, version, data, ndata), &e);

    if (!p) return ETL_FAILED;
    etl_encode_perfinfo(p, e.space, ts ? ts : session_now(s), hook, version, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_lbr(etl_session *s, int64_t trigger_ts, uint32_t pid, uint32_t tid, uint32_t filters,
                          const etl_lbr_entry *entries, unsigned count)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_encode_lbr(NULL, 0, trigger_ts, pid, tid, filters, entries, count), &e);

    if (!p) return ETL_FAILED;
    etl_encode_lbr(p, e.space, trigger_ts, pid, tid, filters, entries, count);
    return emit_end(s, &e);
}

/* ------------------------------------------------------------------ flushing */

#if defined(ETL_HAVE_RSEQ)
/* rseq: close processor cpu's buffer, if it still is old, by running a swap sequence on cpu.
   Returns 1 when this call took it out of the slot. */
static int close_on(etl_session *s, struct etl_rseq_abi *rs, uint32_t cpu, struct etl_rseq_cursor *old)
{
    for (int tries = 0; tries < 100; tries++) {
        int r = etl_rseq_swap(rs, s->slots, cpu, old, NULL);
        if (r == 0) {
            ETL_HB_ACQUIRE(&s->slots[cpu]);
            return 1;
        }
        if (r > 0) {
            if (__atomic_load_n(&s->slots[cpu], __ATOMIC_RELAXED) != old) return 0; /* a writer swapped it */
            sched_yield(); /* moved off cpu for a moment (the mask still holds only cpu) */
        }
    }
    return 0;
}

/*
 * rseq: close every processor's non-empty buffer. A buffer is only ever taken out of its slot
 * by a sequence running on its processor, so the flush thread moves itself onto each
 * processor in turn. A processor it may not run on (a cpuset) is left alone, its buffer
 * flushed when full, except at the stop, when no writer runs any more.
 */
static void seal_current_rseq(etl_session *s, int stopping)
{
    struct etl_rseq_abi *rs = etl_rseq_thread_area();
    cpu_set_t saved, one;
    int have_saved = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;

    for (uint32_t cpu = 0; cpu < s->ncpu; cpu++) {
        struct etl_rseq_cursor *old = __atomic_load_n(&s->slots[cpu], __ATOMIC_ACQUIRE);
        int closed = 0;

        if (!old || __atomic_load_n(&old->off, __ATOMIC_RELAXED) == ETL_BUFFER_HEADER_SIZE) continue;
        CPU_ZERO(&one);
        if (cpu < CPU_SETSIZE) CPU_SET(cpu, &one);
        if (rs && cpu < CPU_SETSIZE && pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0)
            closed = close_on(s, rs, cpu, old);
        else if (stopping)
            closed = __atomic_compare_exchange_n(&s->slots[cpu], &old, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        if (closed) seal_taken(s, cursor_buffer(old));
    }
    if (have_saved) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
}
#endif

/* Close every processor's non-empty buffer so that the flush thread takes it. */
static void seal_current(etl_session *s)
{
#if defined(ETL_HAVE_RSEQ)
    if (s->rseq) {
        seal_current_rseq(s, atomic_load(&s->stopping));
        return;
    }
#endif
    for (uint32_t cpu = 0; cpu < s->ncpu; cpu++) {
        uint64_t cur = atomic_load_explicit(&s->current[cpu], memory_order_acquire), st;
        uint32_t top = (uint32_t)cur, gen = (uint32_t)(cur >> 32);
        struct ebuf *b;

        if (!top) continue;
        b = &s->bufs[top - 1];
        st = atomic_load_explicit(&b->state, memory_order_acquire);
        if ((uint32_t)st == ETL_BUFFER_HEADER_SIZE) continue; /* empty: leave it */
        if (!atomic_compare_exchange_strong_explicit(&s->current[cpu], &cur, 0, memory_order_acq_rel,
                                                     memory_order_relaxed))
            continue; /* a writer moved on from it: it is sealed already */
        /* Close it where its reservations end, unless a writer closed it first. */
        for (;;) {
            if ((uint32_t)(st >> 32) != gen || ((uint32_t)st & STATE_SEALED)) break;
            if (atomic_compare_exchange_weak_explicit(&b->state, &st, STATE(gen, (uint32_t)st | STATE_SEALED),
                                                      memory_order_acq_rel, memory_order_acquire)) {
                seal(s, top, (uint32_t)st);
                break;
            }
        }
    }
}

/* Wait until every reservation below the buffer's end is written. */
static void wait_committed(const struct ebuf *b)
{
    unsigned spins = 0;

    while (atomic_load_explicit(&b->committed, memory_order_acquire) < b->used - ETL_BUFFER_HEADER_SIZE) {
        if (++spins > 64) sched_yield();
    }
}

/* Records in [0x48, used): what a refused buffer held, for EventsLost. */
static uint32_t count_records(const struct ebuf *b)
{
    uint32_t n = 0, pos = ETL_BUFFER_HEADER_SIZE, step;
    const char *why;
    etl_event ev;

    while (pos < b->used &&
           etl_record_decode(NULL, b->cur.data + pos, b->used - pos, &ev, &step, &why) == ETL_RECORD_OK) {
        n++;
        pos += step;
    }
    return n;
}

/* Takes every sealed buffer into s->batch, oldest first; returns how many. Called by the
   flush thread (file modes) or under s->lock (buffering mode), never both. */
static uint32_t collect_sealed(etl_session *s)
{
    uint32_t *batch = s->batch, n = 0, top = (uint32_t)atomic_exchange_explicit(&s->full_head, 0, memory_order_acquire);

    while (top && n < s->nmax) { /* a buffer is sealed once at a time: at most nmax */
        batch[n++] = top - 1;
        top = atomic_load_explicit(&s->bufs[top - 1].next, memory_order_relaxed);
    }
    /* The stack gives newest first; sealing order is nearly its reverse. */
    for (uint32_t i = 0; i < n / 2; i++) {
        uint32_t t = batch[i];
        batch[i] = batch[n - 1 - i];
        batch[n - 1 - i] = t;
    }
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: what is left out of order is little */
        uint32_t x = batch[i], j = i;
        while (j > 0 && s->bufs[batch[j - 1]].seal > s->bufs[x].seal) {
            batch[j] = batch[j - 1];
            j--;
        }
        batch[j] = x;
    }
    return n;
}

/* Buffering mode, under s->lock: the sealed buffers join the ring, oldest first. */
static void ring_collect_locked(etl_session *s)
{
    uint32_t n = collect_sealed(s);

    for (uint32_t i = 0; i < n; i++) s->ring[(s->ring_head + s->ring_n++) % s->nmax] = s->batch[i];
}

/* Buffering mode, for a writer that finds no free buffer: the oldest kept buffer, if every
   record in it is written and nobody else holds the ring (try-lock: a writer never waits).
   Returns index + 1, or 0. */
static uint32_t reclaim_oldest(etl_session *s)
{
    uint32_t top = 0;

    if (pthread_mutex_trylock(&s->lock) != 0) return 0;
    ring_collect_locked(s);
    if (s->ring_n > 0) {
        struct ebuf *b = &s->bufs[s->ring[s->ring_head]];
        if (atomic_load_explicit(&b->committed, memory_order_acquire) >= b->used - ETL_BUFFER_HEADER_SIZE) {
            top = s->ring[s->ring_head] + 1;
            s->ring_head = (s->ring_head + 1) % s->nmax;
            s->ring_n--;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return top;
}

/*
 * A buffer the flush thread has written is in the flush thread's processor's cache: write()
 * read it and the writer filled its header and tail. A writer that reuses it must take every
 * line back from there, which in sessionbench made an event in a file session cost 80 ns
 * instead of 25 when the two processors were far apart. Evicting the lines after the write
 * (CLFLUSHOPT, weakly ordered, about 1 us for 64 KB) lets the writer find them in memory.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
static int can_clflushopt(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 23) & 1;
}

__attribute__((target("clflushopt"))) static void evict_opt(const uint8_t *p, uint32_t size)
{
    for (uint32_t o = 0; o < size; o += 64) _mm_clflushopt((void *)(p + o));
    _mm_sfence();
}

static void evict(const etl_session *s, const uint8_t *p)
{
    if (s->evict == 2) {
        evict_opt(p, s->bsize);
    } else if (s->evict == 1) {
        for (uint32_t o = 0; o < s->bsize; o += 64) _mm_clflush(p + o);
    }
}
#else
static int can_clflushopt(void) { return 0; }
static void evict(const etl_session *s, const uint8_t *p) { (void)s; (void)p; }
#endif

/* Take the sealed buffers, oldest first: write them (file modes) or keep them (buffering). */
static void drain(etl_session *s)
{
    uint32_t *batch = s->batch, n;

    if (s->buffering) {
        pthread_mutex_lock(&s->lock);
        ring_collect_locked(s);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    n = collect_sealed(s);
    for (uint32_t i = 0; i < n; i++) {
        struct ebuf *b = &s->bufs[batch[i]];
        wait_committed(b);
        if (s->writer) {
            int rc = etl_writer_write_buffer(s->writer, b->cur.data, b->used, b->cpu, session_now(s), i + 1 == n);
            if (rc == ETL_OK) {
                atomic_fetch_add_explicit(&s->buffers_written, 1, memory_order_relaxed);
            } else {
                /* The file takes no more: what this buffer held is lost, and so is what comes. */
                atomic_fetch_add_explicit(&s->events_lost, count_records(b), memory_order_relaxed);
                atomic_store_explicit(&s->file_full, 1, memory_order_relaxed);
                if (rc == ETL_FATAL && !s->err[0]) serror(s, "%s", etl_writer_error(s->writer));
                atomic_fetch_add_explicit(&s->log_buffers_lost, 1, memory_order_relaxed);
            }
            evict(s, b->cur.data);
        }
        free_push(s, batch[i]);
    }
}

static void *flush_thread(void *arg)
{
    etl_session *s = arg;
    int64_t next_timer = s->p.flush_timer_s && !s->buffering
                             ? clock_ns(CLOCK_MONOTONIC) + (int64_t)s->p.flush_timer_s * 1000000000 : INT64_MAX;

    for (;;) {
        struct timespec until;
        int64_t now = clock_ns(CLOCK_REALTIME), wait = 100000000;
        uint64_t requested;
        int stopping;

        until.tv_sec = (now + wait) / 1000000000;
        until.tv_nsec = (now + wait) % 1000000000;
        sem_timedwait(&s->wake, &until);
        atomic_store_explicit(&s->wake_pending, 0, memory_order_relaxed);
        etl_monoclock_tick();
        stopping = atomic_load(&s->stopping);
        pthread_mutex_lock(&s->lock);
        requested = s->flush_requested;
        pthread_mutex_unlock(&s->lock);
        if (clock_ns(CLOCK_MONOTONIC) >= next_timer || requested != s->flush_completed || stopping) {
            seal_current(s);
            if (next_timer != INT64_MAX) next_timer = clock_ns(CLOCK_MONOTONIC) + (int64_t)s->p.flush_timer_s * 1000000000;
        }
        drain(s);
        if (requested != s->flush_completed) {
            pthread_mutex_lock(&s->lock);
            s->flush_completed = requested;
            pthread_cond_broadcast(&s->done);
            pthread_mutex_unlock(&s->lock);
        }
        if (stopping) {
            seal_current(s);
            drain(s);
            if (!atomic_load_explicit(&s->full_head, memory_order_acquire)) break;
        }
    }
    return NULL;
}

/* Have the flush thread close every processor's buffer and take the sealed ones (write them,
   or in buffering mode add them to the ring), and wait until it has. */
static void flush_request(etl_session *s)
{
    uint64_t want;

    pthread_mutex_lock(&s->lock);
    want = ++s->flush_requested;
    sem_post(&s->wake);
    while (s->flush_completed < want) pthread_cond_wait(&s->done, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

int etl_session_flush(etl_session *s)
{
    if (s->buffering) return ETL_OK;
    flush_request(s);
    return s->err[0] ? ETL_FAILED : ETL_OK;
}

/* ------------------------------------------------------------------ snapshots */

/*
 * BootTime: the kernel's boot time as /proc/stat gives it (btime, whole seconds), so that
 * every session of one boot records the same value and etlmerge can tell they share a clock.
 * 0 when it cannot be read.
 */
static int64_t boot_filetime(void)
{
    char line[256];
    long long btime = 0;
    FILE *f = fopen("/proc/stat", "r");

    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) == 1) break;
    fclose(f);
    return btime > 0 ? etl_ns_to_filetime(btime * 1000000000LL) : 0;
}

static void writer_options(const etl_session *s, etl_writer_options *o, uint32_t mode)
{
    memset(o, 0, sizeof *o);
    o->buffer_size = s->bsize;
    o->log_file_mode = mode;
    o->maximum_file_size = (uint64_t)s->p.maximum_file_size_mb << 20;
    o->number_of_processors = s->ncpu;
    o->clock = s->clock;
    o->boot_time = s->boot_time;
    o->logger_name = s->logger_name;
    o->header_pid = (uint32_t)getpid();
    o->header_tid = (uint32_t)syscall(SYS_gettid);
}

int etl_session_snapshot(etl_session *s, const char *path)
{
    etl_writer_options o;
    etl_writer *w = NULL;
    int rc = ETL_OK;

    if (!s->buffering) {
        serror(s, "snapshots are for buffering mode; flush a file session instead");
        return ETL_FAILED;
    }
    flush_request(s);
    writer_options(s, &o, ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_BUFFERING | (s->p.log_file_mode & ETL_MODE_COMPRESSED));
    o.maximum_file_size = 0;
    if (etl_writer_open(&w, path, &o) != ETL_OK) {
        serror(s, "%s", etl_writer_error(w));
        etl_writer_close(w, 0);
        return ETL_FAILED;
    }
    pthread_mutex_lock(&s->lock);
    ring_collect_locked(s);
    for (uint32_t i = 0; i < s->ring_n && rc == ETL_OK; i++) {
        struct ebuf *b = &s->bufs[s->ring[(s->ring_head + i) % s->nmax]];
        wait_committed(b);
        if (etl_writer_write_buffer(w, b->cur.data, b->used, b->cpu, session_now(s), i + 1 == s->ring_n) != ETL_OK)
            rc = ETL_FAILED;
    }
    pthread_mutex_unlock(&s->lock);
    etl_writer_set_events_lost(w, (uint32_t)events_lost(s));
    if (rc != ETL_OK) serror(s, "%s", etl_writer_error(w));
    if (etl_writer_close(w, etl_ns_to_filetime(clock_ns(CLOCK_REALTIME))) != ETL_OK) rc = ETL_FAILED;
    return rc;
}

/* ------------------------------------------------------------------ start, query, stop */

void etl_session_query(const etl_session *s, etl_session_stats *out)
{
    memset(out, 0, sizeof *out);
    out->number_of_buffers = atomic_load(&s->allocated);
    out->free_buffers = atomic_load(&s->free_count);
    out->events_lost = events_lost(s);
    out->buffers_written = atomic_load(&s->buffers_written);
    out->log_buffers_lost = atomic_load(&s->log_buffers_lost);
    out->engine_flags = (s->rseq ? 0 : ETL_ENGINE_ATOMIC_RESERVE) |
                        (s->exact_clock || s->clock.type != ETL_CLOCK_PERFCOUNTER ? ETL_ENGINE_EXACT_CLOCK : 0);
    snprintf(out->error, sizeof out->error, "%s", s->err);
}

static int start(etl_session *s)
{
    etl_session_properties *p = &s->p;
    uint32_t kb = p->buffer_size_kb ? p->buffer_size_kb : 64;
    long conf = sysconf(_SC_NPROCESSORS_CONF);

    if (kb < 4 || kb > 16384) {
        serror(s, "buffer size %u KB is out of range (4 to 16384)", kb);
        return -1;
    }
    s->bsize = kb * 1024;
    s->ncpu = p->number_of_processors ? p->number_of_processors : conf > 0 ? (uint32_t)conf : 1;
    s->buffering = (p->log_file_mode & ETL_MODE_BUFFERING) != 0;
    /* Buffering mode keeps what its buffers hold: unless told, 16 per processor. */
    s->nmin = p->minimum_buffers ? p->minimum_buffers : s->buffering ? 16 * s->ncpu : 0;
    if (s->nmin < 2 * s->ncpu) s->nmin = 2 * s->ncpu;
    /* Unless told, the pool may grow to the minimum plus 64 buffers under pressure. */
    s->nmax = s->buffering ? s->nmin
              : p->maximum_buffers ? (p->maximum_buffers > s->nmin ? p->maximum_buffers : s->nmin)
                                   : s->nmin + 64;
    if (!s->buffering && !(s->log_file_name && *s->log_file_name)) {
        serror(s, "a session needs a log file name unless it is in buffering mode");
        return -1;
    }
    s->memory_size = (size_t)s->nmax * s->bsize;
    s->memory = mmap(NULL, s->memory_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s->memory == MAP_FAILED) {
        s->memory = NULL;
        serror(s, "cannot reserve %zu bytes for %u buffers: %s", s->memory_size, s->nmax, strerror(errno));
        return -1;
    }
    s->low_water = s->nmax / 2 > 2 * s->ncpu ? s->nmax / 2 : 2 * s->ncpu;
    s->bufs = aligned_alloc(64, (size_t)s->nmax * sizeof *s->bufs);
    if (s->bufs) memset(s->bufs, 0, (size_t)s->nmax * sizeof *s->bufs);
    s->current = calloc(s->ncpu, sizeof *s->current);
    s->slots = calloc(s->ncpu, sizeof *s->slots);
    s->lost = aligned_alloc(64, (size_t)s->ncpu * sizeof *s->lost);
    if (s->lost) memset(s->lost, 0, (size_t)s->ncpu * sizeof *s->lost);
#if defined(__x86_64__)
    s->evict = can_clflushopt() ? 2 : 1; /* CLFLUSH is in every x86-64 (SSE2) */
#else
    s->evict = can_clflushopt();
#endif
    /* Restartable sequences need a buffer of its own for every processor a writer may run on,
       and an rseq area in this thread (whose kind every thread of the process shares). */
#if defined(ETL_HAVE_RSEQ)
    s->rseq = !(p->engine_flags & ETL_ENGINE_ATOMIC_RESERVE) && conf > 0 && s->ncpu >= (uint32_t)conf &&
              etl_rseq_thread_area() != NULL;
#endif
    s->ring = calloc(s->nmax, sizeof *s->ring);
    s->batch = calloc(s->nmax, sizeof *s->batch);
    if (!s->bufs || !s->current || !s->slots || !s->lost || !s->ring || !s->batch) {
        serror(s, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < s->nmax; i++) {
        s->bufs[i].cur.data = s->memory + (size_t)i * s->bsize;
        s->bufs[i].cur.limit = s->bsize; /* fixed: the sequences compare against it */
    }
    /* The minimum is in the pool from the start, touched so that no page fault waits later. */
    for (uint32_t i = 0; i < s->nmin; i++) {
        memset(s->bufs[i].cur.data, 0, s->bsize);
        free_push(s, i);
    }
    atomic_store(&s->allocated, s->nmin);
    session_clock(s);
    s->boot_time = boot_filetime();
    if (!s->buffering) {
        etl_writer_options o;
        writer_options(s, &o, p->log_file_mode & ~ETL_MODE_BUFFERING);
        if (etl_writer_open(&s->writer, s->log_file_name, &o) != ETL_OK) {
            serror(s, "%s", etl_writer_error(s->writer));
            etl_writer_close(s->writer, 0);
            s->writer = NULL;
            return -1;
        }
    }
    if (sem_init(&s->wake, 0, 0) != 0 || pthread_create(&s->flusher, NULL, flush_thread, s) != 0) {
        serror(s, "cannot start the flush thread: %s", strerror(errno));
        return -1;
    }
    s->flusher_started = 1;
    return 0;
}

void etl_session_properties_get(const etl_session *s, etl_session_properties *out)
{
    *out = s->p;
    out->logger_name = s->logger_name;
    out->log_file_name = s->log_file_name;
    out->buffer_size_kb = s->bsize / 1024;
    out->minimum_buffers = s->nmin;
    out->maximum_buffers = s->nmax;
    out->number_of_processors = s->ncpu;
    out->clock_type = s->clock.type;
    if (!(out->log_file_mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_BUFFERING)))
        out->log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
}

int etl_session_start(etl_session **out, const etl_session_properties *p)
{
    etl_session *s = calloc(1, sizeof *s);

    *out = s;
    if (!s) return ETL_FATAL;
    pthread_once(&atfork_once, install_atfork);
    s->p = *p;
    s->logger_name = strdup(p->logger_name ? p->logger_name : "libetl");
    s->log_file_name = p->log_file_name ? strdup(p->log_file_name) : NULL;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->done, NULL);
    if (!s->logger_name || (p->log_file_name && !s->log_file_name)) {
        serror(s, "out of memory");
        return ETL_FATAL;
    }
    return start(s) == 0 ? ETL_OK : ETL_FATAL;
}

int etl_session_stop(etl_session *s, etl_session_stats *out)
{
    int rc = ETL_OK;

    if (!s) return ETL_FATAL;
    etl_providers_forget_session(s);
    if (s->flusher_started) {
        atomic_store(&s->stopping, 1);
        sem_post(&s->wake);
        pthread_join(s->flusher, NULL);
        sem_destroy(&s->wake);
    }
    if (s->writer) {
        etl_writer_set_events_lost(s->writer, (uint32_t)events_lost(s));
        if (etl_writer_close(s->writer, etl_ns_to_filetime(clock_ns(CLOCK_REALTIME))) != ETL_OK) {
            if (!s->err[0]) serror(s, "cannot finalise the log file");
            rc = ETL_FATAL;
        }
    }
    if (s->err[0]) rc = ETL_FATAL;
    if (out) etl_session_query(s, out);
    if (s->memory) munmap(s->memory, s->memory_size);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->done);
    free(s->bufs);
    free((void *)s->current);
    free(s->slots);
    free(s->lost);
    free(s->ring);
    free(s->batch);
    free(s->logger_name);
    free(s->log_file_name);
    free(s);
    return rc;
}
