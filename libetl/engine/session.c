/* SPDX-License-Identifier: MIT */
/* The capture engine: a session's per-processor buffer pool with lock-free reservation, its flush thread and logging modes. */
/* sched_getcpu, gettid through syscall, MAP_ANONYMOUS: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "format/format.h"
#include "capture/capture.h"
#include "engine/lbr.h"
#include "engine/monoclock.h"
#include "engine/provider.h"
#include "format/format.h"
#include "engine/rseq.h"
#include "writer/writer.h"

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
    /* The pid of the process that has the buffer in hand, out of every list and slot (it took
       it from the free list, or swapped it out of a slot and is about to seal it); 0 when a
       list or a slot holds it. A holder that died left it there: the flush thread takes it
       back (reclaim_orphans). */
    _Atomic int32_t holder;
    uint64_t seal;              /* sealing order */
    _Atomic uint64_t order;     /* its place among its processor's buffers (1, 2, ...), in the
                                   order they entered its slot: set before it goes in */
};

/* Events lost on one processor, on a cache line of its own: when the pool is exhausted every
   writer counts every event, and one shared counter would bounce between processors. */
struct lost_count {
    _Alignas(64) _Atomic uint64_t n;
    /* The order of the processor's buffer last closed out of its slot, leaving it empty (the
       next buffer that goes in follows it): set by the flush thread before it closes one. */
    _Atomic uint64_t order;
};

/*
 * A session's memory is one mapping: this head, then the per-processor arrays, the buffer
 * descriptors, the ring and the buffers themselves (layout_of). A private session maps it
 * anonymously; a shared session (ETL_ENGINE_SHARED) maps RUNTIME/KEY.shm, at one address in
 * every process that writes into it, so that the pointers in it (a slot's cursor, a cursor's
 * data) mean the same everywhere and the restartable sequences run unchanged. Writers of any
 * process touch only what is here; the file, the flush thread and the requests stay with the
 * controller.
 */
#define SHARED_MAGIC UINT64_C(0x31304d48534c5445) /* "ETLSHM01" */
#define SHARED_LAYOUT 2u
/* Where shared sessions are mapped: 128 slots of 16 GiB from 0x5660'0000'0000 up. Nothing is
   there in a process of x86-64 Linux (position-independent executables load below
   0x5656'0000'0000, the shared libraries and mappings come down from 0x7fff'ffff'ffff), and
   the sanitizers leave it to the program too (it is application memory for ThreadSanitizer,
   high memory for AddressSanitizer), so instrumented test programs share sessions as well. */
#define SHARED_BASE UINT64_C(0x566000000000)
#define SHARED_STRIDE UINT64_C(0x400000000)
#define SHARED_SLOTS 128u

enum { ROLE_PRIVATE, ROLE_CONTROLLER, ROLE_ATTACHED };

struct shared {
    /* What the controller sets before the file gets its name; read-only after. */
    uint64_t magic;
    uint32_t layout, head_size;
    uint64_t size, address;       /* of the whole mapping */
    uint32_t bsize, ncpu, nmin, nmax, low_water;
    uint8_t buffering, rseq, exact_clock, reserved;
    int32_t controller_pid;
    etl_clock clock;
    char name[ETL_SESSION_NAME_MAX + 1];
    /* The pool. */
    _Alignas(64) _Atomic uint64_t free_head; /* (tag << 32) | index + 1 */
    _Atomic uint32_t free_count;
    _Atomic uint64_t full_head;    /* sealed buffers waiting for the flush thread */
    _Atomic uint32_t allocated;    /* buffers taken into the pool */
    _Atomic uint32_t limit;        /* MaximumBuffers: the pool grows to it (nmax, the layout's
                                      room, is at least that: etl_session_set_maximum_buffers) */
    _Atomic uint64_t seal_counter;
    _Atomic uint64_t events_lost;  /* what the flush thread counts (refused buffers) */
    _Atomic int file_full;
    _Atomic int stopping;          /* writers take no new buffer */
    _Atomic int wake_pending;      /* the flush thread was woken and has not run yet */
    _Atomic uint32_t buffers_written, log_buffers_lost;
    _Atomic uint32_t buffers_reclaimed; /* taken back from writers that died holding them */
    _Atomic uint32_t rt_buffers_lost;   /* real-time mode: buffers no consumer got, */
    _Atomic uint64_t rt_events_lost;    /* and the events they held */
    _Atomic uint32_t writers_refused;   /* processes that could not map the session */
    sem_t wake;                    /* process-shared */
    pthread_mutex_t ring_lock;     /* buffering mode's ring: process-shared, robust */
    uint32_t ring_head, ring_n;
    /* The controller's clock line, which every writer of the session reads. */
    struct etl_monoclock line;
    /* The providers the session enables, for provider processes: changed under enable_seq
       (odd while being written), each change counted in generation. */
    _Alignas(64) _Atomic uint64_t generation;
    _Atomic uint32_t enable_seq;
    uint32_t enable_n;
    etl_shared_enable enables[ETL_SHARED_MAX_ENABLES];
};

struct etl_session {
    struct shared *h;
    int role;                      /* ROLE_*: whose session this is */
    etl_session_properties p;
    char *logger_name, *log_file_name;
    /* Copies of the head's constants, for the write path. */
    uint32_t bsize, ncpu, nmin, nmax;
    int buffering;
    int rseq;                      /* writers use restartable sequences on slots */
    int exact_clock;               /* PerfCounter readings from clock_gettime() each time */
    struct etl_monoclock *line;    /* the clock line the session's writers read */
    int evict;                     /* evict written buffers from the cache: 2 CLFLUSHOPT, 1 CLFLUSH */
    /* Into the mapping. */
    struct etl_rseq_cursor **slots; /* rseq: per processor, its current buffer or NULL */
    uint8_t *memory;
    size_t memory_size;
    struct ebuf *bufs;
    _Atomic uint64_t *current;     /* per processor: generation << 32 | index + 1, 0 for none */
    struct lost_count *lost;       /* per processor: events writers could not log */
    uint32_t *ring;                /* buffering mode: sealed buffers kept, oldest first */
    uint32_t *batch;               /* sealed buffers being collected */
    uint8_t *written_ok;           /* the flush thread's: which of the batch reached the file */
    uint32_t chunk;                /* buffers the flush thread writes at once at most */
    /* The flush thread's: sealed buffers waiting for one of their processor that came before
       them (a writer between taking it out of the slot and sealing it), the order each
       processor's next buffer has, and since when one has been awaited. */
    uint32_t *pending, pend_n;
    uint64_t *next_order;
    int64_t *gap_since;
    uint32_t low_water;            /* wake the flush thread when no more buffers than this are free */
    etl_clock clock;
    int64_t boot_time;             /* FILETIME, from /proc/stat */
    etl_writer *writer;
    /* The flush thread and the requests it serves (the controller's). */
    pthread_t flusher;
    int flusher_started;
    int wake_made, ring_lock_made;
    void *mapping;                 /* the whole mapping (head first) */
    int borrowed;                  /* attached through a mapping inherited at fork: not ours to unmap */
    int shm_fd, address_lock;      /* the controller's session file and address lock */
    char shm_path[4096 + ETL_SESSION_NAME_MAX + 16], shm_new[4096 + ETL_SESSION_NAME_MAX + 16];
    pthread_mutex_t lock;          /* the requests, never the write path */
    pthread_cond_t done;
    uint64_t flush_requested, flush_completed;
    /* Real-time mode (under lock): the buffers written and held for the consumer, oldest
       first, in ring[] (held_head, held_n, at most held_max()); the consumer being served. */
    int realtime;
    uint32_t held_head, held_n;
    int64_t rt_sequence;           /* SequenceNumber of the next buffer delivered */
    int ended;                     /* the flush thread is done: what is held is all there is */
    int consumer, consumer_fd, consumer_abort;
    uint64_t delivered;            /* buffers delivered, for the stop's progress check */
    pthread_cond_t held_cond;      /* held_n, ended, consumer changed */
    int rt_wake;                   /* eventfd: the consumer's thread has something to do */
    struct etl_kcapture *kcapture; /* kernel events (kcapture.c), or NULL */
    char err[256];
    /* LBR (lbr.c): the triggers and filters, and the kernel flags triggers are checked against. */
    etl_lbr_config lbr;
    uint32_t kernel_flags;
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

etl_lbr_config *etl_session_lbr_slot(etl_session *s) { return &s->lbr; }
void etl_session_set_kernel_flags(etl_session *s, uint32_t flags) { s->kernel_flags = flags; }
uint32_t etl_session_kernel_flags(const etl_session *s) { return s->kernel_flags; }

/* ------------------------------------------------------------------ clock */

static int64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* CLOCK_REALTIME ns from now: the deadline sem_timedwait and pthread_cond_timedwait take. */
static struct timespec deadline_in(int64_t ns)
{
    int64_t t = clock_ns(CLOCK_REALTIME) + ns;
    return (struct timespec){ (time_t)(t / 1000000000), (long)(t % 1000000000) };
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
    default: return s->exact_clock ? etl_monoclock_exact() : etl_monoclock_read(s->line);
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
    /* A shared session's writers read the line from its memory: there from the start (the
       flush thread publishes it again after each re-fit). */
    if (s->role == ROLE_CONTROLLER) etl_monoclock_publish_copy(&s->h->line);
    s->clock.cpu_speed_mhz = measure_cpu_mhz(); /* recorded whatever the clock, as Windows does */
    s->clock.perf_freq = s->clock.type == ETL_CLOCK_SYSTEMTIME ? 10000000 : 1000000000;
    s->clock.start_timestamp = session_now(s);
    s->clock.start_time = etl_ns_to_filetime(clock_ns(CLOCK_REALTIME));
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

static inline int32_t own_pid(void)
{
    uint32_t pid, tid;

    caller_ids(&pid, &tid);
    return (int32_t)pid;
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

/*
 * A buffer passes from hand to hand through the free and full lists: a writer seals it, the
 * flush thread writes it and frees it, a writer takes it. In a shared session the flush
 * thread is in another process, where ThreadSanitizer cannot follow it, so the hand-overs
 * are told to it on the buffer itself (nothing in other builds).
 */
static void free_push(etl_session *s, uint32_t index)
{
    ETL_HB_RELEASE(&s->bufs[index]);
    atomic_store_explicit(&s->bufs[index].holder, 0, memory_order_relaxed);
    stack_push(&s->h->free_head, s->bufs, index);
    atomic_fetch_add_explicit(&s->h->free_count, 1, memory_order_relaxed);
}

static uint32_t reclaim_oldest(etl_session *s, int *busy);

/* A buffer ready for cpu: from the free list, else a new one while the pool may grow. */
static uint64_t take_buffer(etl_session *s, uint16_t cpu)
{
    uint32_t top = stack_pop(&s->h->free_head, s->bufs);
    struct ebuf *b;

    if (top) {
        atomic_fetch_sub_explicit(&s->h->free_count, 1, memory_order_relaxed);
    } else {
        uint32_t n = atomic_load_explicit(&s->h->allocated, memory_order_relaxed);
        do {
            if (n >= atomic_load_explicit(&s->h->limit, memory_order_relaxed)) {
                /* Buffering mode reuses its oldest buffer; a file session has none to give.
                   The ring's lock is held only for a moment, by a writer that takes from it
                   or by the flush thread: a writer that finds it taken yields and tries
                   again, a few times, rather than lose its event (the holder may have been
                   preempted by it). */
                int busy = 0;
                for (int tries = 0; s->buffering && !top && tries < 16; tries++) {
                    top = reclaim_oldest(s, &busy);
                    if (top || !busy) break;
                    sched_yield();
                }
                if (!top) return 0;
                break;
            }
        } while (!atomic_compare_exchange_weak_explicit(&s->h->allocated, &n, n + 1, memory_order_relaxed,
                                                         memory_order_relaxed));
        if (!top) top = n + 1;
    }
    b = &s->bufs[top - 1];
    ETL_HB_ACQUIRE(b);
    atomic_store_explicit(&b->holder, own_pid(), memory_order_relaxed);
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
    b->seal = atomic_fetch_add_explicit(&s->h->seal_counter, 1, memory_order_relaxed);
    atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
    ETL_HB_RELEASE(b);
    stack_push(&s->h->full_head, s->bufs, top - 1);
    /* Waking the flush thread is a system call, and the thread then takes the producer's
       processor: only when the free buffers run low (it also wakes every 100 ms by itself).
       The room to grow up to MaximumBuffers does not count: it is for peaks the flush thread
       cannot follow, and a thread woken only when that ran low too let the pool grow to half
       of it at rates the flush thread writes with ease. */
    if (!s->buffering && atomic_load_explicit(&s->h->free_count, memory_order_relaxed) <= s->low_water &&
        !atomic_exchange_explicit(&s->h->wake_pending, 1, memory_order_relaxed))
        sem_post(&s->h->wake);
}

/* A buffer's order. (A writer may read it from a buffer it saw in a slot, which another may be
   taking again: atomic, relaxed.) */
static uint64_t buffer_order(const struct ebuf *b) { return atomic_load_explicit(&b->order, memory_order_relaxed); }

/* The order of a buffer that goes into cpu's slot after `old` (NULL: the slot is empty). */
static uint64_t buffer_order_after(etl_session *s, uint32_t cpu, const struct ebuf *old)
{
    return (old ? buffer_order(old) : atomic_load_explicit(&s->lost[cpu].order, memory_order_acquire)) + 1;
}

/* Replace cpu's buffer `old` (generation << 32 | index + 1, or 0) by a fresh one; returns the
   current buffer afterwards, or 0 when no buffer is free. */
static uint64_t switch_buffer(etl_session *s, uint16_t cpu, uint64_t old)
{
    uint64_t fresh = take_buffer(s, cpu), expected = old;

    if (!fresh) return 0;
    atomic_store_explicit(&s->bufs[(uint32_t)fresh - 1].order,
                          buffer_order_after(s, cpu, old ? &s->bufs[(uint32_t)old - 1] : NULL), memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&s->current[cpu], &expected, fresh, memory_order_acq_rel,
                                                memory_order_acquire)) {
        atomic_store_explicit(&s->bufs[(uint32_t)fresh - 1].holder, 0, memory_order_relaxed);
        return fresh;
    }
    free_push(s, (uint32_t)fresh - 1); /* another writer switched first */
    return expected ? expected : switch_buffer(s, cpu, 0);
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

    if (atomic_load_explicit(&s->h->file_full, memory_order_relaxed)) {
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
    uint64_t n = atomic_load_explicit(&s->h->events_lost, memory_order_relaxed);

    for (uint32_t i = 0; s->lost && i < s->ncpu; i++) n += atomic_load_explicit(&s->lost[i].n, memory_order_relaxed);
    return n;
}

void etl_session_add_events_lost(etl_session *s, uint64_t n)
{
    atomic_fetch_add_explicit(&s->h->events_lost, n, memory_order_relaxed);
}

struct etl_kcapture *etl_session_kcapture(const etl_session *s) { return s->kcapture; }
void etl_session_set_kcapture(etl_session *s, struct etl_kcapture *k) { s->kcapture = k; }

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
 * again, 0 when no buffer is free (the event is lost), -1 when a shared session stops (no
 * new buffer goes in).
 */
static int replace_current(etl_session *s, struct etl_rseq_abi *rs, uint32_t space)
{
    uint32_t cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
    struct etl_rseq_cursor *old;
    int32_t pid = own_pid(), unmarked = 0;
    uint64_t fresh;

    if (cpu >= s->ncpu) return 0; /* a processor the session was not sized for */
    if (s->role != ROLE_PRIVATE && atomic_load_explicit(&s->h->stopping, memory_order_relaxed)) return -1;
    old = __atomic_load_n(&s->slots[cpu], __ATOMIC_RELAXED);
    /* old may have been closed and reused since: this look is only a hint (an old buffer that
       came back to the slot is closed early by the swap below, which loses nothing). */
    if (old && __atomic_load_n(&old->off, __ATOMIC_RELAXED) + space <= s->bsize)
        return 1; /* the thread moved, or another one swapped first: try again */
    fresh = take_buffer(s, (uint16_t)cpu);
    if (!fresh) return 0;
    atomic_store_explicit(&s->bufs[(uint32_t)fresh - 1].order, buffer_order_after(s, cpu, old ? cursor_buffer(old) : NULL),
                          memory_order_relaxed);
    for (;;) {
        int r;
        ETL_HB_RELEASE(&s->slots[cpu]); /* what take_buffer wrote, for whoever takes it out */
        ETL_HB_RELEASE(&s->bufs[(uint32_t)fresh - 1]); /* (the flush thread of another process may) */
        /* The old buffer is marked ours inside the sequence, as it leaves the slot: if this
           process dies before it seals it, the flush thread knows whose it was. */
        r = etl_rseq_swap(rs, s->slots, cpu, old, &s->bufs[(uint32_t)fresh - 1].cur,
                          old ? (int32_t *)&cursor_buffer(old)->holder : &unmarked, pid);
        if (r == 0) {
            int32_t mine = pid;
            ETL_HB_ACQUIRE(&s->slots[cpu]); /* what the one who put old in wrote */
            if (old) ETL_HB_ACQUIRE(cursor_buffer(old)); /* (put in by a writer of another process) */
            /* The fresh buffer is in the slot now: no longer in our hands (unless a writer
               already took it out again and marked it its own). */
            atomic_compare_exchange_strong_explicit(&s->bufs[(uint32_t)fresh - 1].holder, &mine, 0,
                                                    memory_order_relaxed, memory_order_relaxed);
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
    if (atomic_load_explicit(&s->h->file_full, memory_order_relaxed)) {
        errno = ENOSPC;
        return lost(s);
    }
    for (;;) {
        int r = etl_rseq_append(rs, s->slots, s->ncpu, rec, space);
        if (r == 0) return ETL_OK;
        if (r > 0) {
            r = replace_current(s, rs, space);
            if (r == 0) {
                errno = ENOBUFS;
                return lost(s);
            }
            if (r < 0) { /* the session stops: the event comes after its end, not lost */
                errno = ESHUTDOWN;
                return ETL_FAILED;
            }
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
    /* If the slot is left empty, the buffer that goes in next follows this one. */
    atomic_store_explicit(&s->lost[cpu].order, buffer_order(cursor_buffer(old)), memory_order_release);
    for (int tries = 0; tries < 100; tries++) {
        int r = etl_rseq_swap(rs, s->slots, cpu, old, NULL, (int32_t *)&cursor_buffer(old)->holder, own_pid());
        if (r == 0) {
            ETL_HB_ACQUIRE(&s->slots[cpu]);
            ETL_HB_ACQUIRE(cursor_buffer(old));
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
        else if (stopping) {
            atomic_store_explicit(&s->lost[cpu].order, buffer_order(cursor_buffer(old)), memory_order_release);
            closed = __atomic_compare_exchange_n(&s->slots[cpu], &old, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        }
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
        seal_current_rseq(s, atomic_load(&s->h->stopping));
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
        atomic_store_explicit(&s->lost[cpu].order, buffer_order(b), memory_order_release); /* the next follows it */
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
   flush thread (file modes) or under the ring lock (buffering mode), never both. */
static uint32_t collect_sealed(etl_session *s)
{
    uint32_t *batch = s->batch, n = 0, top = (uint32_t)atomic_exchange_explicit(&s->h->full_head, 0, memory_order_acquire);

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

/* The ring's lock, which writers of any process may take (a writer of buffering mode that
   reclaims the oldest buffer): process-shared and robust, so that one that died holding it
   does not block the session. try: do not wait. 0 when taken. */
static int ring_lock(etl_session *s, int try)
{
    int rc = try ? pthread_mutex_trylock(&s->h->ring_lock) : pthread_mutex_lock(&s->h->ring_lock);

    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&s->h->ring_lock);
        rc = 0;
    }
    return rc;
}

static void ring_unlock(etl_session *s) { pthread_mutex_unlock(&s->h->ring_lock); }

/* Buffering mode, under the ring lock: the sealed buffers join the ring, oldest first. */
static void ring_collect_locked(etl_session *s)
{
    uint32_t n = collect_sealed(s);

    for (uint32_t i = 0; i < n; i++) s->ring[(s->h->ring_head + s->h->ring_n++) % s->nmax] = s->batch[i];
}

/* Buffering mode, for a writer that finds no free buffer: the oldest kept buffer, if every
   record in it is written and nobody else holds the ring (try-lock: a writer never waits).
   Returns index + 1, or 0 (*busy: the ring was locked). */
static uint32_t reclaim_oldest(etl_session *s, int *busy)
{
    uint32_t top = 0;

    *busy = ring_lock(s, 1) != 0;
    if (*busy) return 0;
    ring_collect_locked(s);
    if (s->h->ring_n > 0) {
        struct ebuf *b = &s->bufs[s->ring[s->h->ring_head]];
        if (atomic_load_explicit(&b->committed, memory_order_acquire) >= b->used - ETL_BUFFER_HEADER_SIZE) {
            top = s->ring[s->h->ring_head] + 1;
            s->h->ring_head = (s->h->ring_head + 1) % s->nmax;
            s->h->ring_n--;
        }
    }
    ring_unlock(s);
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

/*
 * Real-time mode: a buffer written (or not: real time only) waits in the held queue for the
 * consumer, with its buffer header filled as in a file; when the queue is at its limit the
 * buffer is dropped and counted in RealTimeBuffersLost (and its events with it), as ETW
 * drops what a session with no consumer cannot hold.
 */
/* What a real-time session holds for its consumer at most: the pool less a buffer per
   processor and one more, so that writers always have buffers. */
static uint32_t held_max(const etl_session *s)
{
    uint32_t limit = atomic_load_explicit(&s->h->limit, memory_order_relaxed);
    return limit > s->ncpu + 1 ? limit - s->ncpu - 1 : 1;
}

static void realtime_wake(etl_session *s)
{
    uint64_t one = 1;
    if (write(s->rt_wake, &one, sizeof one) < 0) {} /* full: it is awake anyway */
}

static void hold(etl_session *s, uint32_t index)
{
    struct ebuf *b = &s->bufs[index];
    uint32_t used = ETL_RECORD_SPACE(b->used);

    if (b->used <= ETL_BUFFER_HEADER_SIZE) { /* nothing in it */
        free_push(s, index);
        return;
    }
    if (used > s->bsize) used = s->bsize;
    memset(b->cur.data + b->used, 0, used - b->used);
    pthread_mutex_lock(&s->lock);
    if (s->held_n < held_max(s)) {
        etl_buffer_header_fill(b->cur.data, s->bsize, used, b->cpu, session_now(s), s->rt_sequence++, 0, 1);
        b->used = used;
        s->ring[(s->held_head + s->held_n++) % s->nmax] = index;
        pthread_cond_broadcast(&s->held_cond);
        index = UINT32_MAX;
    }
    pthread_mutex_unlock(&s->lock);
    if (index == UINT32_MAX) {
        realtime_wake(s);
        return;
    }
    atomic_fetch_add_explicit(&s->h->rt_buffers_lost, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->h->rt_events_lost, count_records(b), memory_order_relaxed);
    free_push(s, index);
}

/*
 * Each processor's buffers go on in the order they were in its slot. A writer that swapped
 * a full buffer out and was preempted before sealing it lets the next buffer of that
 * processor be sealed, and even collected, first; written first, its events would come
 * before older ones of the same thread. So a buffer waits (pending) until the one before it
 * in its processor's order has gone on, or 50 ms (a writer that stopped or died: a dead one's
 * buffer is reclaimed meanwhile), or the end of a flush or of the session (final).
 */
#define GAP_WAIT_NS 50000000

static int by_processor_order(const void *a, const void *b, void *bufs)
{
    const struct ebuf *x = (const struct ebuf *)bufs + *(const uint32_t *)a;
    const struct ebuf *y = (const struct ebuf *)bufs + *(const uint32_t *)b;

    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    return buffer_order(x) < buffer_order(y) ? -1 : buffer_order(x) > buffer_order(y);
}

/* The n buffers collected in batch and those pending: what may go on now into batch (each
   processor's in order), the rest back to pending. Returns how many go on. */
static uint32_t in_processor_order(etl_session *s, uint32_t n, int final)
{
    uint32_t *all = s->pending, m = s->pend_n, out = 0, keep = 0;
    int64_t now = clock_ns(CLOCK_MONOTONIC);

    if (!n && !m) return 0;
    memcpy(all + m, s->batch, (size_t)n * sizeof *all);
    m += n;
    qsort_r(all, m, sizeof *all, by_processor_order, s->bufs);
    for (uint32_t i = 0; i < m; i++) {
        const struct ebuf *b = &s->bufs[all[i]];
        uint16_t c = b->cpu;
        uint64_t order = buffer_order(b);
        if (order > s->next_order[c] && !final && (!s->gap_since[c] || now - s->gap_since[c] < GAP_WAIT_NS)) {
            if (!s->gap_since[c]) s->gap_since[c] = now;
            all[keep++] = all[i]; /* (keep <= i: in place) */
            continue;
        }
        if (order > s->next_order[c]) s->gap_since[c] = 0; /* given up on the one before */
        if (order >= s->next_order[c]) s->next_order[c] = order + 1;
        s->batch[out++] = all[i];
    }
    s->pend_n = keep;
    for (uint32_t i = 0; i < s->ncpu; i++) { /* a processor with none waiting waits for nothing */
        int waiting = 0;
        for (uint32_t k = 0; k < keep && !waiting; k++) waiting = s->bufs[all[k]].cpu == i;
        if (!waiting) s->gap_since[i] = 0;
    }
    return out;
}

/* Take the sealed buffers, oldest first: write them (file modes) or keep them (buffering);
   in real-time mode, then hold them for the consumer. final: at the end of a flush or of the
   session, nothing waits for what has not been sealed. */
static void drain(etl_session *s, int final)
{
    uint32_t *batch = s->batch, n;

    if (s->buffering) {
        ring_lock(s, 0);
        ring_collect_locked(s);
        ring_unlock(s);
        return;
    }
    n = in_processor_order(s, collect_sealed(s), final);
    /* In chunks: buffers that follow each other in the file go out in one write, and each
       chunk's buffers go back to the writers as soon as it is written. (One write of all
       that was collected held the whole pool for its duration: in provbench the writers then
       lost 90% of their events flat out, against 70% before.) */
    for (uint32_t c0 = 0; s->writer && c0 < n; c0 += s->chunk) {
        uint32_t c1 = c0 + s->chunk < n ? c0 + s->chunk : n, failed;

        etl_writer_batch_begin(s->writer);
        for (uint32_t i = c0; i < c1; i++) {
            struct ebuf *b = &s->bufs[batch[i]];
            wait_committed(b);
            s->written_ok[i] = etl_writer_write_buffer(s->writer, b->cur.data, b->used, b->cpu, session_now(s),
                                                       i + 1 == n) == ETL_OK;
        }
        failed = etl_writer_batch_end(s->writer);
        /* Those that did not reach the file after all are the last ones accepted. */
        for (uint32_t i = c1; i-- > c0 && failed;)
            if (s->written_ok[i]) {
                s->written_ok[i] = 0;
                failed--;
            }
        for (uint32_t i = c0; i < c1; i++) {
            struct ebuf *b = &s->bufs[batch[i]];
            if (s->written_ok[i]) {
                atomic_fetch_add_explicit(&s->h->buffers_written, 1, memory_order_relaxed);
            } else {
                /* The file takes no more: what this buffer held is lost, and so is what comes. */
                atomic_fetch_add_explicit(&s->h->events_lost, count_records(b), memory_order_relaxed);
                atomic_store_explicit(&s->h->file_full, 1, memory_order_relaxed);
                if (!s->err[0] && etl_writer_error(s->writer)[0]) serror(s, "%s", etl_writer_error(s->writer));
                atomic_fetch_add_explicit(&s->h->log_buffers_lost, 1, memory_order_relaxed);
            }
            if (s->realtime) continue;
            evict(s, b->cur.data);
            free_push(s, batch[i]);
        }
    }
    if (s->writer && !s->realtime) return;
    for (uint32_t i = 0; i < n; i++) {
        if (!s->writer) wait_committed(&s->bufs[batch[i]]);
        if (s->realtime) hold(s, batch[i]);
        else free_push(s, batch[i]);
    }
}

/*
 * Shared sessions: take back the buffers that writer processes died holding. A holder that
 * no longer exists, of a buffer no slot holds: it had taken it from the free list (empty: it
 * goes back there) or swapped it out of a slot and not sealed it yet (its records are whole,
 * as restartable sequences commit a record with one store: it is written like any other).
 * The holder is compared and cleared in one step, so a buffer that a live writer marked in
 * the meantime stays its.
 */
static void reclaim_orphans(etl_session *s)
{
    uint32_t n = atomic_load_explicit(&s->h->allocated, memory_order_acquire);
    int32_t self = own_pid();

    for (uint32_t i = 0; i < n; i++) {
        struct ebuf *b = &s->bufs[i];
        int32_t pid = atomic_load_explicit(&b->holder, memory_order_acquire);
        int in_slot = 0;

        if (pid <= 0 || pid == self || kill(pid, 0) == 0 || errno != ESRCH) continue;
        for (uint32_t c = 0; c < s->ncpu && !in_slot; c++)
            in_slot = __atomic_load_n(&s->slots[c], __ATOMIC_ACQUIRE) == &b->cur;
        if (in_slot) continue;
        if (!atomic_compare_exchange_strong_explicit(&b->holder, &pid, 0, memory_order_acq_rel, memory_order_relaxed))
            continue;
        atomic_fetch_add_explicit(&s->h->buffers_reclaimed, 1, memory_order_relaxed);
        if (__atomic_load_n(&b->cur.off, __ATOMIC_ACQUIRE) > ETL_BUFFER_HEADER_SIZE)
            seal_taken(s, b);
        else
            free_push(s, i);
    }
}

static void *flush_thread(void *arg)
{
    etl_session *s = arg;
    uint32_t period = s->p.flush_timer_s;
    int64_t next_timer = period && !s->buffering ? clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000 : INT64_MAX;

    for (;;) {
        /* Every 100 ms by itself; every 2 ms while buffers wait for one before them. */
        struct timespec until = deadline_in(s->pend_n ? 2000000 : 100000000);
        uint64_t requested;
        int stopping;

        sem_timedwait(&s->h->wake, &until);
        atomic_store_explicit(&s->h->wake_pending, 0, memory_order_relaxed);
        etl_monoclock_tick();
        if (s->role == ROLE_CONTROLLER) {
            etl_monoclock_publish_copy(&s->h->line);
            reclaim_orphans(s);
        }
        stopping = atomic_load(&s->h->stopping);
        pthread_mutex_lock(&s->lock);
        requested = s->flush_requested;
        if (s->p.flush_timer_s != period) { /* etl_session_set_flush_timer */
            period = s->p.flush_timer_s;
            next_timer = period ? clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000 : INT64_MAX;
        }
        pthread_mutex_unlock(&s->lock);
        if (clock_ns(CLOCK_MONOTONIC) >= next_timer || requested != s->flush_completed || stopping) {
            seal_current(s);
            if (next_timer != INT64_MAX) next_timer = clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000;
        }
        drain(s, requested != s->flush_completed || stopping);
        if (requested != s->flush_completed) {
            pthread_mutex_lock(&s->lock);
            s->flush_completed = requested;
            pthread_cond_broadcast(&s->done);
            pthread_mutex_unlock(&s->lock);
        }
        if (stopping) {
            /* A shared session's writers in other processes see the stop a moment late: one
               may put a buffer into a slot just after it was closed. Close them again. */
            int rounds = s->role == ROLE_CONTROLLER ? 3 : 1;
            for (int r = 0; r < rounds; r++) {
                if (r) {
                    struct timespec ms = { 0, 5000000 };
                    nanosleep(&ms, NULL);
                    reclaim_orphans(s);
                }
                seal_current(s);
                drain(s, 1);
            }
            if (!atomic_load_explicit(&s->h->full_head, memory_order_acquire)) break;
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
    sem_post(&s->h->wake);
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
    o->direct_io = (s->p.engine_flags & ETL_ENGINE_DIRECT_IO) != 0;
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
    ring_lock(s, 0);
    ring_collect_locked(s);
    for (uint32_t i = 0; i < s->h->ring_n && rc == ETL_OK; i++) {
        struct ebuf *b = &s->bufs[s->ring[(s->h->ring_head + i) % s->nmax]];
        wait_committed(b);
        if (etl_writer_write_buffer(w, b->cur.data, b->used, b->cpu, session_now(s), i + 1 == s->h->ring_n) != ETL_OK)
            rc = ETL_FAILED;
    }
    ring_unlock(s);
    etl_writer_set_events_lost(w, (uint32_t)events_lost(s));
    if (rc != ETL_OK) serror(s, "%s", etl_writer_error(w));
    if (etl_writer_close(w, etl_ns_to_filetime(clock_ns(CLOCK_REALTIME))) != ETL_OK) rc = ETL_FAILED;
    return rc;
}

/* ------------------------------------------------------------------ real-time delivery */

/* Sends all of n bytes (no SIGPIPE); 0, or -1 when the consumer is gone or the stop gave up on it. */
static int send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A frame: its head and bytes in one system call, unless the socket takes them in parts. */
static int send_frame(int fd, uint32_t kind, const void *p, uint32_t n)
{
    uint8_t head[ETL_RT_FRAME_HEAD];
    struct iovec iov[2] = { { head, sizeof head }, { (void *)(uintptr_t)p, n } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    ssize_t k;

    etl_put32(head, ETL_RT_MAGIC);
    etl_put32(head + 4, kind);
    etl_put32(head + 8, n);
    do k = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    if (k < 0) return -1;
    if ((size_t)k < sizeof head) return send_all(fd, head + k, sizeof head - (size_t)k) == 0 && send_all(fd, p, n) == 0 ? 0 : -1;
    return send_all(fd, (const uint8_t *)p + (k - (ssize_t)sizeof head), n - (size_t)(k - (ssize_t)sizeof head));
}

/* The END frame: the final statistics, as etlrecord names them. */
static int send_end(etl_session *s, int fd)
{
    etl_session_stats st;
    char text[ETL_RT_END_MAX];
    int n;

    etl_session_query(s, &st);
    n = snprintf(text, sizeof text,
                 "EventsLost %llu\nBuffersWritten %u\nLogBuffersLost %u\nRealTimeBuffersLost %u\n"
                 "RealTimeEventsLost %llu\n", (unsigned long long)st.events_lost, st.buffers_written,
                 st.log_buffers_lost, st.real_time_buffers_lost, (unsigned long long)st.real_time_events_lost);
    return send_frame(fd, ETL_RT_END, text, (uint32_t)n);
}

/* The consumer's end of the socket is closed. */
static int peer_gone(int fd)
{
    struct pollfd pf = { fd, POLLRDHUP, 0 };

    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The consumer took n more of the buffers sent: they leave the held queue, oldest first. */
static void realtime_release(etl_session *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t index;
        pthread_mutex_lock(&s->lock);
        index = s->ring[s->held_head];
        s->held_head = (s->held_head + 1) % s->nmax;
        s->held_n--;
        s->delivered++;
        if (!s->writer) atomic_fetch_add_explicit(&s->h->buffers_written, 1, memory_order_relaxed);
        pthread_cond_broadcast(&s->held_cond);
        pthread_mutex_unlock(&s->lock);
        free_push(s, index);
    }
}

/*
 * The consumer's acknowledgements that have come (each a 4-byte count of buffers it has
 * taken, ack[] holding a partial one): what they count is released. -1 when the consumer is
 * gone, or acknowledges more than it was sent.
 */
static int take_acks(etl_session *s, int fd, uint32_t *sent, uint8_t ack[4], unsigned *nack)
{
    uint8_t buf[256];

    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        if (k == 0) return -1;
        for (ssize_t i = 0; i < k; i++) {
            ack[(*nack)++] = buf[i];
            if (*nack == 4) {
                uint32_t n = etl_le32(ack);
                *nack = 0;
                if (n > *sent) return -1;
                realtime_release(s, n);
                *sent -= n;
            }
        }
    }
}

int etl_session_realtime_attach(etl_session *s, int fd)
{
    char line[256];
    int e = 0, n;

    pthread_mutex_lock(&s->lock);
    /* A consumer that has just gone is still attached until its thread sees it (at once, as
       it waits on the socket): the next one waits for that, a second at most. */
    for (int i = 0; i < 20 && s->consumer && peer_gone(s->consumer_fd); i++) {
        struct timespec until = deadline_in(50000000);
        realtime_wake(s);
        pthread_cond_timedwait(&s->held_cond, &s->lock, &until);
    }
    if (!s->realtime) e = EINVAL;
    else if (s->consumer) e = EBUSY;
    else if (s->ended) e = ESHUTDOWN;
    else {
        /* Room in the socket for 16 buffers on their way (as far as the system allows), so
           that the consumer's thread and this one do not take turns a frame at a time. */
        int want = (int)(s->bsize * 16);
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
        s->consumer = 1;
        s->consumer_fd = fd;
        s->consumer_abort = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (!e) return ETL_OK;
    n = snprintf(line, sizeof line, e == EINVAL ? "error session %s is not in real-time mode\n"
                                    : e == EBUSY ? "error session %s already has a real-time consumer\n"
                                                 : "error session %s is stopping\n", s->logger_name);
    send_all(fd, line, (size_t)n);
    errno = e;
    return ETL_FAILED;
}

int etl_session_realtime_deliver(etl_session *s)
{
    etl_writer_options o;
    uint8_t *header, ack[4];
    uint32_t used, sent = 0; /* buffers sent that the consumer has not acknowledged */
    unsigned nack = 0;
    int rc = ETL_FAILED, fd;

    pthread_mutex_lock(&s->lock);
    fd = s->consumer ? s->consumer_fd : -1;
    pthread_mutex_unlock(&s->lock);
    if (fd < 0) {
        errno = EINVAL;
        return ETL_FAILED;
    }
    header = malloc(s->bsize);
    if (!header) goto out;
    writer_options(s, &o, ETL_MODE_REAL_TIME | (s->writer ? s->p.log_file_mode & ~ETL_MODE_COMPRESSED : 0));
    etl_header_buffer_build(&o, s->log_file_name, &(etl_header_counts){ 0, 0, 0, 0 }, header);
    used = etl_le32(header + ETL_BH_SAVED_OFFSET);
    if (send_all(fd, "ok\n", 3) != 0 || send_frame(fd, ETL_RT_HEADER, header, used) != 0) goto out;
    /* The held buffers, oldest first (those held before the consumer came too), as they come;
       each stays held until the consumer says it has taken it. */
    for (;;) {
        struct pollfd pf[2] = { { fd, POLLIN, 0 }, { s->rt_wake, POLLIN, 0 } };
        uint32_t held, index = 0;
        int ended, abort_;

        if (take_acks(s, fd, &sent, ack, &nack) != 0) goto out;
        pthread_mutex_lock(&s->lock);
        held = s->held_n;
        ended = s->ended;
        abort_ = s->consumer_abort;
        if (sent < held) index = s->ring[(s->held_head + sent) % s->nmax];
        pthread_mutex_unlock(&s->lock);
        if (abort_) goto out;
        if (sent < held) {
            struct ebuf *b = &s->bufs[index];
            if (send_frame(fd, ETL_RT_BUFFER, b->cur.data, b->used) != 0) goto out; /* it stays held */
            sent++;
            continue;
        }
        if (ended && !held) break; /* everything taken */
        /* Wait for the consumer's word, a buffer or the end. */
        if (poll(pf, 2, 1000) > 0 && (pf[1].revents & POLLIN)) {
            uint64_t v;
            if (read(s->rt_wake, &v, sizeof v) < 0) {}
        }
    }
    rc = send_end(s, fd) == 0 ? ETL_OK : ETL_FAILED;
out:
    free(header);
    pthread_mutex_lock(&s->lock);
    s->consumer = 0;
    s->consumer_fd = -1;
    pthread_cond_broadcast(&s->held_cond);
    pthread_mutex_unlock(&s->lock);
    if (rc != ETL_OK) errno = EPIPE;
    return rc;
}

/*
 * At the stop, once the flush thread has held the last buffers: the consumer attached gets
 * them (the stop waits while it makes progress, and gives up on one that takes nothing for 5
 * seconds); whatever no consumer got is counted in RealTimeBuffersLost.
 */
static void realtime_end(etl_session *s)
{
    int64_t last = clock_ns(CLOCK_MONOTONIC);
    uint64_t seen;

    pthread_mutex_lock(&s->lock);
    s->ended = 1;
    pthread_cond_broadcast(&s->held_cond);
    realtime_wake(s);
    seen = s->delivered;
    while (s->consumer) {
        struct timespec until = deadline_in(1000000000);
        pthread_cond_timedwait(&s->held_cond, &s->lock, &until);
        if (s->delivered != seen) {
            seen = s->delivered;
            last = clock_ns(CLOCK_MONOTONIC);
        } else if (s->consumer && !s->consumer_abort && clock_ns(CLOCK_MONOTONIC) - last > 5000000000LL) {
            s->consumer_abort = 1;
            shutdown(s->consumer_fd, SHUT_RDWR); /* its send fails now */
            realtime_wake(s);
        }
    }
    while (s->held_n) {
        struct ebuf *b = &s->bufs[s->ring[s->held_head]];
        atomic_fetch_add_explicit(&s->h->rt_buffers_lost, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->h->rt_events_lost, count_records(b), memory_order_relaxed);
        s->held_head = (s->held_head + 1) % s->nmax;
        s->held_n--;
    }
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ start, query, stop */

void etl_session_query(const etl_session *s, etl_session_stats *out)
{
    memset(out, 0, sizeof *out);
    out->number_of_buffers = atomic_load(&s->h->allocated);
    out->free_buffers = atomic_load(&s->h->free_count);
    out->events_lost = events_lost(s);
    out->buffers_written = atomic_load(&s->h->buffers_written);
    out->log_buffers_lost = atomic_load(&s->h->log_buffers_lost);
    out->engine_flags = (s->rseq ? 0 : ETL_ENGINE_ATOMIC_RESERVE) |
                        (s->exact_clock || s->clock.type != ETL_CLOCK_PERFCOUNTER ? ETL_ENGINE_EXACT_CLOCK : 0) |
                        (s->role != ROLE_PRIVATE ? ETL_ENGINE_SHARED : 0);
    out->buffers_reclaimed = atomic_load(&s->h->buffers_reclaimed);
    out->writers_refused = atomic_load(&s->h->writers_refused);
    out->real_time_buffers_lost = atomic_load(&s->h->rt_buffers_lost);
    out->real_time_events_lost = atomic_load(&s->h->rt_events_lost);
    snprintf(out->error, sizeof out->error, "%s", s->err);
}

/* ------------------------------------------------------------------ the mapping */

/* Where each part of a session's mapping starts (layout of struct shared's comment). */
struct layout {
    size_t current, slots, lost, bufs, ring, batch, data, size;
};

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

static void layout_of(uint32_t ncpu, uint32_t nmax, uint32_t bsize, struct layout *l)
{
    size_t o = ALIGN_UP(sizeof(struct shared), 64);

    l->current = o;
    o += (size_t)ncpu * sizeof(uint64_t);
    l->slots = o;
    o += (size_t)ncpu * sizeof(void *);
    o = ALIGN_UP(o, 64);
    l->lost = o;
    o += (size_t)ncpu * sizeof(struct lost_count);
    l->bufs = o;
    o += (size_t)nmax * sizeof(struct ebuf);
    l->ring = o;
    o += (size_t)nmax * sizeof(uint32_t);
    l->batch = o;
    o += (size_t)nmax * sizeof(uint32_t);
    l->data = ALIGN_UP(o, 4096);
    l->size = l->data + (size_t)nmax * bsize;
}

/* Points the session's arrays into its mapping. */
static void place(etl_session *s, uint8_t *base, const struct layout *l)
{
    s->h = (struct shared *)(void *)base;
    s->current = (_Atomic uint64_t *)(void *)(base + l->current);
    s->slots = (struct etl_rseq_cursor **)(void *)(base + l->slots);
    s->lost = (struct lost_count *)(void *)(base + l->lost);
    s->bufs = (struct ebuf *)(void *)(base + l->bufs);
    s->ring = (uint32_t *)(void *)(base + l->ring);
    s->batch = (uint32_t *)(void *)(base + l->batch);
    s->memory = base + l->data;
}

/*
 * Maps size bytes of fd at exactly want, or fails with EEXIST when something is there
 * already. The address is given as a hint, not with MAP_FIXED_NOREPLACE: the kernel takes a
 * hint when the range is free, and ThreadSanitizer's mmap (GCC 12) mishandles the flag.
 */
static void *map_at(void *want, size_t size, int fd)
{
    void *got = mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (got == MAP_FAILED || got == want) return got;
    munmap(got, size);
    errno = EEXIST;
    return MAP_FAILED;
}

static uint64_t fnv1a(const char *t)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (; *t; t++) h = (h ^ (unsigned char)*t) * UINT64_C(0x100000001b3);
    return h;
}

/* The address a shared session of the runtime directory dir already uses (its file's head), or 0. */
static uint64_t address_in_use(const char *dir, const char *file)
{
    char path[4096 + 300];
    struct shared h;
    int fd;
    uint64_t a = 0;

    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    if (pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && h.magic == SHARED_MAGIC) a = h.address;
    close(fd);
    return a;
}

/*
 * The controller's mapping: RUNTIME/KEY.shm.new, sized and mapped at a free slot address
 * (one no other session of the directory uses, and free in this process), under the
 * directory's address lock, which start keeps until the file has its name.
 */
static int shared_create(etl_session *s, size_t size, size_t reserve)
{
    char dir[4096], key[ETL_SESSION_NAME_MAX + 1], lockpath[4096 + 32];
    uint8_t used[SHARED_SLOTS] = { 0 };
    DIR *d;
    struct dirent *e;
    uint32_t first;

    if (etl_session_name_key(s->logger_name, key) != ETL_OK) {
        serror(s, "'%s' is not a session name", s->logger_name);
        return -1;
    }
    if (etl_runtime_dir(dir, sizeof dir, s->err, sizeof s->err) != ETL_OK) return -1;
    if (!etl_session_name_held(s->logger_name)) {
        serror(s, "session '%s': a shared session's name must be claimed first (etl_session_name_claim)", s->logger_name);
        return -1;
    }
    if (size > SHARED_STRIDE) {
        serror(s, "%zu bytes of buffers are more than a shared session may map (%llu)", size,
               (unsigned long long)SHARED_STRIDE);
        return -1;
    }
    snprintf(lockpath, sizeof lockpath, "%s/.address.lock", dir);
    s->address_lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->address_lock < 0 || flock(s->address_lock, LOCK_EX) != 0) {
        serror(s, "%s: %s", lockpath, strerror(errno));
        return -1;
    }
    if ((d = opendir(dir)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            uint64_t a;
            if (len < 5 || strcmp(e->d_name + len - 4, ".shm") != 0) continue;
            a = address_in_use(dir, e->d_name);
            if (a >= SHARED_BASE && (a - SHARED_BASE) % SHARED_STRIDE == 0 && (a - SHARED_BASE) / SHARED_STRIDE < SHARED_SLOTS)
                used[(a - SHARED_BASE) / SHARED_STRIDE] = 1;
        }
        closedir(d);
    }
    snprintf(s->shm_path, sizeof s->shm_path, "%s/%s.shm", dir, key);
    snprintf(s->shm_new, sizeof s->shm_new, "%s/%s.shm.new", dir, key);
    unlink(s->shm_new);
    s->shm_fd = open(s->shm_new, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->shm_fd < 0) {
        serror(s, "%s: %s", s->shm_new, strerror(errno));
        return -1;
    }
    /* Reserved now, not when a writer first touches a page: a full /dev/shm must fail the
       start with a message, not kill a writer later with SIGBUS. */
    if (ftruncate(s->shm_fd, (off_t)size) != 0 || (errno = posix_fallocate(s->shm_fd, 0, (off_t)reserve)) != 0) {
        serror(s, "%s: cannot reserve %zu bytes of session memory: %s", s->shm_new, reserve, strerror(errno));
        return -1;
    }
    first = (uint32_t)(fnv1a(key) % SHARED_SLOTS);
    for (uint32_t i = 0; i < SHARED_SLOTS; i++) {
        uint32_t slot = (first + i) % SHARED_SLOTS;
        void *want = (void *)(uintptr_t)(SHARED_BASE + (uint64_t)slot * SHARED_STRIDE), *got;
        if (used[slot]) continue;
        got = map_at(want, size, s->shm_fd);
        if (got == want) {
            s->mapping = got;
            return 0;
        }
        if (errno != EEXIST) break;
    }
    serror(s, "%s: cannot map %zu bytes of session memory at a free address: %s", s->shm_new, size, strerror(errno));
    return -1;
}

static int start(etl_session *s)
{
    etl_session_properties *p = &s->p;
    uint32_t kb = p->buffer_size_kb ? p->buffer_size_kb : 64, limit;
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    struct layout l;
    struct shared *h;
    pthread_mutexattr_t ma;

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
    limit = s->buffering ? s->nmin
            : p->maximum_buffers ? (p->maximum_buffers > s->nmin ? p->maximum_buffers : s->nmin)
                                 : s->nmin + 64;
    if (s->ncpu > 65536 || limit > (1u << 23)) {
        serror(s, "%u processors and %u buffers are more than a session takes", s->ncpu, limit);
        return -1;
    }
    /* The layout has room for twice the maximum, so that an update may raise it (untouched, and
       in a shared session's file not reserved, until then); a buffering ring is fixed. */
    s->nmax = s->buffering ? limit : 2 * limit;
    layout_of(s->ncpu, s->nmax, s->bsize, &l);
    if ((p->engine_flags & ETL_ENGINE_SHARED) && l.size > SHARED_STRIDE) s->nmax = limit;
    s->realtime = (p->log_file_mode & ETL_MODE_REAL_TIME) != 0;
    if (s->realtime && s->buffering) {
        serror(s, "real-time mode cannot be combined with buffering mode");
        return -1;
    }
    if (!s->buffering && !s->realtime && !(s->log_file_name && *s->log_file_name)) {
        serror(s, "a session needs a log file name unless it is in buffering or real-time mode");
        return -1;
    }
    /* A real-time session delivers every second unless told otherwise (EVENT_TRACE_PROPERTIES,
       FlushTimer); it holds for a consumer what the pool can spare beyond a buffer per
       processor and one more. */
    if (s->realtime && !p->flush_timer_s) p->flush_timer_s = 1;
    if (s->realtime && (s->rt_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        serror(s, "cannot make the real-time consumer's event: %s", strerror(errno));
        return -1;
    }
    /* Restartable sequences need a buffer of its own for every processor a writer may run on,
       and an rseq area in this thread (whose kind every thread of the process shares). */
#if defined(ETL_HAVE_RSEQ)
    s->rseq = !(p->engine_flags & ETL_ENGINE_ATOMIC_RESERVE) && conf > 0 && s->ncpu >= (uint32_t)conf &&
              etl_rseq_thread_area() != NULL;
#endif
    s->role = p->engine_flags & ETL_ENGINE_SHARED ? ROLE_CONTROLLER : ROLE_PRIVATE;
    if (s->role == ROLE_CONTROLLER && !s->rseq) {
        serror(s, "a shared session needs restartable sequences (x86-64, Linux 4.18 or later), a buffer per "
                  "processor and no ETL_ENGINE_ATOMIC_RESERVE");
        return -1;
    }
    layout_of(s->ncpu, s->nmax, s->bsize, &l);
    s->memory_size = l.size;
    if (s->role == ROLE_CONTROLLER) {
        if (shared_create(s, l.size, l.data + (size_t)limit * s->bsize) != 0) return -1;
    } else {
        s->mapping = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s->mapping == MAP_FAILED) {
            s->mapping = NULL;
            serror(s, "cannot reserve %zu bytes for %u buffers: %s", l.size, s->nmax, strerror(errno));
            return -1;
        }
    }
    place(s, s->mapping, &l);
    h = s->h;
    h->layout = SHARED_LAYOUT;
    h->head_size = (uint32_t)sizeof *h;
    h->size = l.size;
    h->address = (uint64_t)(uintptr_t)s->mapping;
    h->bsize = s->bsize;
    h->ncpu = s->ncpu;
    h->nmin = s->nmin;
    h->nmax = s->nmax;
    atomic_store(&h->limit, limit);
    h->buffering = (uint8_t)s->buffering;
    h->rseq = (uint8_t)s->rseq;
    h->controller_pid = (int32_t)getpid();
    snprintf(h->name, sizeof h->name, "%s", s->logger_name);
    /* A real-time session hands each buffer on as soon as it is full: batches of half the
       pool made the consumer take 30 buffers at once and fall behind at the start. */
    s->low_water = h->low_water = s->realtime ? s->nmax : s->nmin / 2 > 2 * s->ncpu ? s->nmin / 2 : 2 * s->ncpu;
#if defined(__x86_64__)
    s->evict = can_clflushopt() ? 2 : 1; /* CLFLUSH is in every x86-64 (SSE2) */
#else
    s->evict = can_clflushopt();
#endif
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    s->ring_lock_made = pthread_mutex_init(&h->ring_lock, &ma) == 0;
    pthread_mutexattr_destroy(&ma);
    if (!s->ring_lock_made) {
        serror(s, "cannot make the session's ring lock");
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
    atomic_store(&h->allocated, s->nmin);
    s->line = s->role == ROLE_CONTROLLER ? &h->line : &etl_monoclock_line;
    session_clock(s);
    h->clock = s->clock;
    h->exact_clock = (uint8_t)s->exact_clock;
    s->boot_time = boot_filetime();
    if (!s->buffering && s->log_file_name && *s->log_file_name) {
        etl_writer_options o;
        writer_options(s, &o, p->log_file_mode & ~ETL_MODE_BUFFERING);
        if (etl_writer_open(&s->writer, s->log_file_name, &o) != ETL_OK) {
            serror(s, "%s", etl_writer_error(s->writer));
            etl_writer_close(s->writer, 0);
            s->writer = NULL;
            return -1;
        }
        /* An eighth of the starting pool, from 1 to 16 buffers. */
        s->chunk = s->nmin / 8 < 1 ? 1 : s->nmin / 8 > 16 ? 16 : s->nmin / 8;
        s->written_ok = calloc(s->nmax, 1);
        if (!s->written_ok) {
            serror(s, "out of memory");
            return -1;
        }
    }
    if (sem_init(&h->wake, s->role == ROLE_CONTROLLER, 0) != 0) {
        serror(s, "cannot make the flush thread's semaphore: %s", strerror(errno));
        return -1;
    }
    s->wake_made = 1;
    s->pending = calloc(s->nmax, sizeof *s->pending);
    s->next_order = calloc(s->ncpu, sizeof *s->next_order);
    s->gap_since = calloc(s->ncpu, sizeof *s->gap_since);
    if (!s->pending || !s->next_order || !s->gap_since) {
        serror(s, "out of memory");
        return -1;
    }
    for (uint32_t c = 0; c < s->ncpu; c++) s->next_order[c] = 1;
    if (pthread_create(&s->flusher, NULL, flush_thread, s) != 0) {
        serror(s, "cannot start the flush thread: %s", strerror(errno));
        return -1;
    }
    s->flusher_started = 1;
    if (s->role == ROLE_CONTROLLER) {
        /* Complete: the file gets its name, and provider processes may map it. */
        atomic_store_explicit((_Atomic uint64_t *)&h->magic, SHARED_MAGIC, memory_order_release);
        if (rename(s->shm_new, s->shm_path) != 0) {
            serror(s, "%s: %s", s->shm_path, strerror(errno));
            return -1;
        }
        s->shm_new[0] = '\0';
        close(s->address_lock);
        s->address_lock = -1;
    }
    return 0;
}

void etl_session_properties_get(const etl_session *s, etl_session_properties *out)
{
    *out = s->p;
    out->logger_name = s->logger_name;
    out->log_file_name = s->log_file_name;
    out->buffer_size_kb = s->bsize / 1024;
    out->minimum_buffers = s->nmin;
    out->maximum_buffers = atomic_load(&s->h->limit);
    out->number_of_processors = s->ncpu;
    out->clock_type = s->clock.type;
    if (!(out->log_file_mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_BUFFERING)) &&
        s->log_file_name && *s->log_file_name)
        out->log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
}

static etl_session *session_new(void)
{
    etl_session *s = calloc(1, sizeof *s);

    if (!s) return NULL;
    s->shm_fd = -1;
    s->address_lock = -1;
    pthread_once(&atfork_once, install_atfork);
    s->consumer_fd = -1;
    s->rt_wake = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->done, NULL);
    pthread_cond_init(&s->held_cond, NULL);
    return s;
}

static void session_free(etl_session *s)
{
    if (s->mapping && !s->borrowed) munmap(s->mapping, s->memory_size);
    if (s->shm_fd >= 0) close(s->shm_fd);
    if (s->address_lock >= 0) close(s->address_lock);
    if (s->rt_wake >= 0) close(s->rt_wake);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->done);
    pthread_cond_destroy(&s->held_cond);
    free(s->logger_name);
    free(s->log_file_name);
    free(s->written_ok);
    free(s->pending);
    free(s->next_order);
    free(s->gap_since);
    free(s);
}

/* ------------------------------------------------------------------ updates */

int etl_session_set_flush_timer(etl_session *s, uint32_t seconds, char *err, size_t errsize)
{
    if (s->role == ROLE_ATTACHED || s->buffering) {
        snprintf(err, errsize, "%s", s->buffering ? "a buffering session has no flush timer"
                                                  : "only the session's controller updates it");
        return ETL_FAILED;
    }
    /* A real-time session's 0 means a second, as at its start. */
    if (s->realtime && !seconds) seconds = 1;
    pthread_mutex_lock(&s->lock);
    s->p.flush_timer_s = seconds;
    pthread_mutex_unlock(&s->lock);
    sem_post(&s->h->wake); /* the flush thread takes the new period at once */
    return ETL_OK;
}

int etl_session_set_maximum_buffers(etl_session *s, uint32_t n, char *err, size_t errsize)
{
    uint32_t limit = atomic_load(&s->h->limit);

    if (s->role == ROLE_ATTACHED || s->buffering) {
        snprintf(err, errsize, "%s", s->buffering ? "a buffering session's ring cannot grow"
                                                  : "only the session's controller updates it");
        return ETL_FAILED;
    }
    if (n < limit || n > s->nmax) {
        snprintf(err, errsize, "MaximumBuffers %u: it can be raised from %u up to %u (twice its value at the "
                 "start, which the session's memory has room for), not lowered", n, limit, s->nmax);
        return ETL_FAILED;
    }
    /* A shared session's file gets the memory now: no room fails here, not in a writer. */
    if (s->shm_fd >= 0) {
        struct layout l;
        layout_of(s->ncpu, s->nmax, s->bsize, &l);
        if ((errno = posix_fallocate(s->shm_fd, 0, (off_t)(l.data + (size_t)n * s->bsize))) != 0) {
            snprintf(err, errsize, "%s: cannot reserve the memory of %u buffers: %s", s->shm_path, n, strerror(errno));
            return ETL_FAILED;
        }
    }
    atomic_store(&s->h->limit, n);
    return ETL_OK;
}

int etl_session_start(etl_session **out, const etl_session_properties *p)
{
    etl_session *s = session_new();

    *out = s;
    if (!s) return ETL_FATAL;
    s->p = *p;
    s->logger_name = strdup(p->logger_name ? p->logger_name : "libetl");
    s->log_file_name = p->log_file_name ? strdup(p->log_file_name) : NULL;
    if (!s->logger_name || (p->log_file_name && !s->log_file_name)) {
        serror(s, "out of memory");
        return ETL_FATAL;
    }
    return start(s) == 0 ? ETL_OK : ETL_FATAL;
}

/* Tell provider processes that the shared session changed (their watch sees the file's
   attributes change). */
static void shared_changed(etl_session *s)
{
    atomic_fetch_add_explicit(&s->h->generation, 1, memory_order_release);
    if (s->shm_fd >= 0) futimens(s->shm_fd, NULL);
}

int etl_session_stop(etl_session *s, etl_session_stats *out)
{
    int rc = ETL_OK;

    if (!s) return ETL_FATAL;
    /* Kernel capture writes its last events (the DCEnd rundown) while the session still takes them. */
    if (s->kcapture) etl_kcapture_end(s, s->kcapture);
    s->kcapture = NULL;
    etl_providers_forget_session(s);
    if (s->role == ROLE_ATTACHED) { /* not the controller's to stop: just leave it */
        etl_session_detach(s);
        return ETL_OK;
    }
    if (s->h && s->role == ROLE_CONTROLLER) {
        atomic_store(&s->h->stopping, 1);
        shared_changed(s);
    }
    if (s->flusher_started) {
        atomic_store(&s->h->stopping, 1);
        sem_post(&s->h->wake);
        pthread_join(s->flusher, NULL);
    }
    if (s->writer) {
        etl_writer_set_events_lost(s->writer, (uint32_t)events_lost(s));
        if (etl_writer_close(s->writer, etl_ns_to_filetime(clock_ns(CLOCK_REALTIME))) != ETL_OK) {
            if (!s->err[0]) serror(s, "cannot finalise the log file");
            rc = ETL_FATAL;
        }
    }
    if (s->realtime) realtime_end(s);
    if (s->err[0]) rc = ETL_FATAL;
    if (out) {
        if (s->h) etl_session_query(s, out);
        else {
            memset(out, 0, sizeof *out);
            snprintf(out->error, sizeof out->error, "%s", s->err);
        }
    }
    if (s->role == ROLE_CONTROLLER) {
        if (s->shm_path[0]) unlink(s->shm_path);
        if (s->shm_new[0]) unlink(s->shm_new);
    }
    if (s->wake_made) sem_destroy(&s->h->wake);
    if (s->ring_lock_made) pthread_mutex_destroy(&s->h->ring_lock);
    session_free(s);
    return rc;
}

/* ------------------------------------------------------------------ shared sessions */

int etl_session_is_shared_controller(const etl_session *s) { return s->role == ROLE_CONTROLLER; }

/* The enable table's sequence lock orders its plain copies with fences, which
   ThreadSanitizer does not take (GCC warns, and -Werror fails the build). Its readers are in
   other processes, where it cannot look anyway: there the fences go. */
#if defined(ETL_TSAN)
#define SEQLOCK_FENCE(order) atomic_signal_fence(order)
#else
#define SEQLOCK_FENCE(order) atomic_thread_fence(order)
#endif

int etl_session_enables_publish(etl_session *s, const etl_shared_enable *e, unsigned n)
{
    struct shared *h = s->h;
    uint32_t seq;

    if (s->role != ROLE_CONTROLLER) return ETL_OK;
    if (n > ETL_SHARED_MAX_ENABLES) {
        serror(s, "a shared session enables at most %d providers", ETL_SHARED_MAX_ENABLES);
        return ETL_FAILED;
    }
    seq = atomic_load_explicit(&h->enable_seq, memory_order_relaxed);
    atomic_store_explicit(&h->enable_seq, seq + 1, memory_order_relaxed);
    SEQLOCK_FENCE(memory_order_release);
    memcpy(h->enables, e, n * sizeof *e);
    h->enable_n = n;
    atomic_store_explicit(&h->enable_seq, seq + 2, memory_order_release);
    shared_changed(s);
    return ETL_OK;
}

uint64_t etl_session_enables_read(const etl_session *s, etl_shared_enable *out, unsigned *n)
{
    const struct shared *h = s->h;

    /* A controller killed in the middle of a change leaves the count odd for good: after a
       while the table reads as empty (the session is dead, and the next look lets it go),
       rather than the watch thread, and the registrations waiting on it, hanging. */
    for (unsigned tries = 0;; tries++) {
        uint64_t gen = atomic_load_explicit(&h->generation, memory_order_acquire);
        uint32_t seq = atomic_load_explicit(&h->enable_seq, memory_order_acquire);
        uint32_t k = h->enable_n;
        if (seq & 1) {
            if (tries >= 10000) {
                *n = 0;
                return gen;
            }
            sched_yield();
            continue;
        }
        if (k > ETL_SHARED_MAX_ENABLES) k = ETL_SHARED_MAX_ENABLES;
        memcpy(out, (const void *)h->enables, k * sizeof *out);
        SEQLOCK_FENCE(memory_order_acquire);
        if (atomic_load_explicit(&h->enable_seq, memory_order_relaxed) == seq) {
            *n = k;
            return gen;
        }
    }
}

uint64_t etl_session_generation(const etl_session *s)
{
    return atomic_load_explicit(&s->h->generation, memory_order_acquire);
}

int etl_session_running(const etl_session *s)
{
    if (atomic_load_explicit(&s->h->stopping, memory_order_acquire)) return 0;
    /* A controller that died (SIGKILL) left an orphan: nobody flushes it any more. */
    return kill((pid_t)s->h->controller_pid, 0) == 0 || errno != ESRCH;
}

long etl_session_controller_pid(const etl_session *s) { return s->h->controller_pid; }

/* Whether this process maps the file st from address want on, size bytes or more (a
   mapping inherited at fork), as /proc/self/maps says. */
static int mapped_here(void *want, uint64_t size, const struct stat *st)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "re");
    int found = 0;

    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long from, to, offset, inode;
        unsigned maj, min;
        if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &from, &to, &offset, &maj, &min, &inode) != 6) continue;
        found = from == (uint64_t)(uintptr_t)want && to - from >= size && offset == 0 && inode == (unsigned long long)st->st_ino &&
                makedev(maj, min) == st->st_dev;
    }
    fclose(f);
    return found;
}

/* Counts a process that could not map the session, through a mapping of its head anywhere. */
static void count_refused(int fd)
{
    struct shared *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (h == MAP_FAILED) return;
    atomic_fetch_add_explicit(&h->writers_refused, 1, memory_order_relaxed);
    munmap(h, sizeof *h);
}

int etl_session_attach(etl_session **out, const char *path, char *err, size_t errsize)
{
    struct shared head;
    struct layout l;
    struct stat st;
    etl_session *s;
    void *want, *got;
    int fd, borrowed = 0;

    *out = NULL;
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return ETL_FAILED;
    }
    /* Only the user's own session files, and only ones that are what they say. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
        pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head || head.magic != SHARED_MAGIC ||
        head.layout != SHARED_LAYOUT || head.head_size != sizeof head) {
        snprintf(err, errsize, "%s: not a session file of this user and this version of libetl", path);
        close(fd);
        return ETL_FAILED;
    }
    layout_of(head.ncpu, head.nmax, head.bsize, &l);
    if (head.ncpu == 0 || head.ncpu > 65536 || head.nmax > (1u << 24) || head.nmax < head.nmin ||
        head.bsize < 4096 || head.bsize > 16384 * 1024 || head.bsize % 1024 || l.size != head.size ||
        (uint64_t)st.st_size != head.size || head.address < SHARED_BASE ||
        head.address >= SHARED_BASE + (uint64_t)SHARED_SLOTS * SHARED_STRIDE || (head.address - SHARED_BASE) % SHARED_STRIDE ||
        head.size > SHARED_STRIDE || !head.rseq || head.limit > head.nmax || head.limit < head.nmin) {
        snprintf(err, errsize, "%s: the session's head is damaged", path);
        close(fd);
        return ETL_FAILED;
    }
    if (head.stopping) {
        snprintf(err, errsize, "%s: the session is stopping", path);
        close(fd);
        return ETL_FAILED;
    }
    if (head.controller_pid == (int32_t)getpid()) { /* its providers write into it directly */
        snprintf(err, errsize, "%s: the session is this process's own", path);
        close(fd);
        return ETL_FAILED;
    }
    want = (void *)(uintptr_t)head.address;
    got = map_at(want, head.size, fd);
    if (got == MAP_FAILED && errno == EEXIST && mapped_here(want, head.size, &st)) {
        got = want; /* a child of the controller (or of a provider process) has it from the fork */
        borrowed = 1;
    }
    if (got != want) {
        int e = errno;
        count_refused(fd);
        snprintf(err, errsize, "%s: cannot map the session at %p: %s", path, want, strerror(e));
        close(fd);
        return ETL_FAILED;
    }
    s = session_new();
    if (!s || !(s->logger_name = strdup(head.name))) {
        if (!borrowed) munmap(got, head.size);
        close(fd);
        if (s) session_free(s);
        snprintf(err, errsize, "out of memory");
        return ETL_FAILED;
    }
    close(fd);
    s->role = ROLE_ATTACHED;
    s->mapping = got;
    s->borrowed = borrowed;
    s->memory_size = head.size;
    place(s, got, &l);
    s->bsize = head.bsize;
    s->ncpu = head.ncpu;
    s->nmin = head.nmin;
    s->nmax = head.nmax;
    s->buffering = head.buffering;
    s->rseq = head.rseq;
    s->exact_clock = head.exact_clock;
    s->low_water = head.low_water;
    s->clock = head.clock;
    s->line = &s->h->line;
    /* The buffers must be where the layout puts them: a writer follows these pointers. */
    for (uint32_t i = 0; i < s->nmax; i++) {
        if (s->bufs[i].cur.data != s->memory + (size_t)i * s->bsize || s->bufs[i].cur.limit != s->bsize) {
            snprintf(err, errsize, "%s: the session's buffer table is damaged", path);
            session_free(s);
            return ETL_FAILED;
        }
    }
    *out = s;
    return ETL_OK;
}

void etl_session_detach(etl_session *s)
{
    if (s && s->role == ROLE_ATTACHED) session_free(s);
}
