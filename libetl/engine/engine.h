/* SPDX-License-Identifier: MIT */
/*
 * The capture engine's private header: what the files of libetl/engine/ share. Private to
 * libetl (it fails to compile outside the library's build); users include <etl.h>.
 *
 *   session.c      a session's lifecycle: start, query, updates, stop; its hooks; its clock
 *   pool.c         the buffer pool: per-processor buffers, reservation, the write path, the
 *                  buffering ring
 *   flush.c        the flush thread: closing buffers, writing them in order, snapshots
 *   realtime.c     real-time delivery to a consumer
 *   shared.c       the session's mapping; shared sessions (their file, their enable table,
 *                  attaching to them)
 *   provider.c     providers, ETW's filter, and the shared sessions of other processes that
 *                  this process's providers write into
 *   sessionname.c  session names; monoclock.c the TSC clock line; rseq.c rseq areas
 *   control.c      the control socket protocol: a named session's controller and its clients
 *
 * The engine calls nothing above it: what plugs into a session and must act at its stop
 * (the kernel capture, the provider registry) registers a hook (struct etl_session_hook).
 */
#ifndef ETL_ENGINE_H
#define ETL_ENGINE_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/engine.h is private to libetl: include <etl.h>"
#endif

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "etl.h"
#include "format/format.h"

/* ------------------------------------------------------------------ LBR configuration (lbr.c) */

/* A session's LBR configuration (etl_session_configure_lbr); count 0: LBR is off. */
typedef struct etl_lbr_config {
    uint32_t flags;                                 /* ETL_LBR_FILTER_* | ETL_LBR_CALLSTACK */
    unsigned count;
    etl_classic_event_id events[ETL_LBR_MAX_EVENTS];
} etl_lbr_config;

/* ---- the session's side (session.c) ---- */

/* Where s keeps its configuration (read and written under lbr.c's lock). */
etl_lbr_config *etl_session_lbr_slot(etl_session *s);
/*
 * The EVENT_TRACE_FLAG_* bits (EnableFlags) of the kernel events s produces: the kernel
 * capture sets them when it starts, and etl_session_configure_lbr checks kernel triggers
 * against them. 0 (no kernel events) until then.
 */
void etl_session_set_kernel_flags(etl_session *s, uint32_t flags);
uint32_t etl_session_kernel_flags(const etl_session *s);

/* ---- for the kernel capture ---- */

/* A copy of s's LBR configuration (count 0: none). */
void etl_session_lbr_config(etl_session *s, etl_lbr_config *out);
/* 1 when the event of this GUID (provider or kernel group) and type is one of cfg's triggers. */
int etl_lbr_trigger_matches(const etl_lbr_config *cfg, const etl_guid *guid, uint8_t type);
/* The EVENT_TRACE_FLAG_* bit that produces a kernel group's event, or 0 when libetl has none
   for it (*is_kernel tells whether guid is a kernel group at all). */
uint32_t etl_lbr_kernel_flag_for(const etl_guid *guid, uint8_t type, int *is_kernel);

/* ------------------------------------------------------------------ the clock (monoclock.c) */

/* CLOCK_MONOTONIC_RAW in nanoseconds, read through the time-stamp counter. */
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

/* ------------------------------------------------------------------ restartable sequences (rseq.c) */

/* Restartable sequences (Linux rseq) for the session's per-processor write path. */
/*
 * A restartable sequence is a stretch of code that the kernel restarts (by jumping to its
 * abort handler) if the thread is preempted, migrated or signalled while inside it. A thread
 * that reads its processor number and then writes that processor's buffer inside one
 * sequence therefore owns the buffer for the whole stretch without a lock prefix: every
 * other thread that touches the buffer runs on the same processor, and it could only have
 * run by preempting us, which restarts us. The last instruction of a sequence is its one
 * commit store.
 *
 * The session uses two sequences on x86-64 (elsewhere, or where the kernel or the C library
 * gives no rseq area, it falls back to compare-and-swap reservation):
 *   etl_rseq_append  copy a finished record into the current buffer of this processor and
 *                    move the buffer's offset past it (the commit);
 *   etl_rseq_swap    replace this processor's current buffer by another (or none), if it is
 *                    still the one the caller saw. After it the old buffer is complete: its
 *                    offset is final, as no append on that processor can be half done.
 */

/* The per-thread area the kernel updates (include/uapi/linux/rseq.h, 32 bytes as registered). */
struct etl_rseq_abi {
    uint32_t cpu_id_start;
    uint32_t cpu_id;       /* the processor the thread runs on; ~0u before registration */
    uint64_t rseq_cs;      /* the descriptor of the sequence being run, or 0 */
    uint32_t flags;
    uint32_t node_id;
    uint32_t mm_cid;
    uint32_t padding;
} __attribute__((aligned(32)));

/* What a sequence writes: the first bytes of a buffer's bookkeeping. */
struct etl_rseq_cursor {
    uint32_t off;          /* end of the records written so far */
    uint32_t limit;        /* the buffer size */
    uint8_t *data;         /* the buffer */
};

/* Per thread: its rseq area, ETL_RSEQ_NONE when it has none, NULL before the first look. */
#define ETL_RSEQ_NONE ((struct etl_rseq_abi *)1)
extern _Thread_local struct etl_rseq_abi *etl_rseq_tls __attribute__((tls_model("initial-exec")));

/* Looks up (registering if the C library did not) the calling thread's rseq area. */
struct etl_rseq_abi *etl_rseq_thread_area_slow(void);

/* The calling thread's rseq area, registered by the C library (glibc 2.35 and later) or by
   libetl, or NULL when the kernel offers none. */
static inline struct etl_rseq_abi *etl_rseq_thread_area(void)
{
    struct etl_rseq_abi *a = etl_rseq_tls;

    if (__builtin_expect(a != NULL && a != ETL_RSEQ_NONE, 1)) return a;
    return a ? NULL : etl_rseq_thread_area_slow();
}

/*
 * ThreadSanitizer cannot see the ordering that sequences give (two sequences that touch a
 * processor's slot run on that processor one after the other), so the code that installs or
 * takes a buffer through a slot tells it: a release when a buffer goes in or out of a slot,
 * an acquire before a thread uses what it found there. Nothing in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define ETL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ETL_TSAN 1
#endif
#endif
#if defined(ETL_TSAN)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define ETL_HB_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#define ETL_HB_RELEASE(addr) __tsan_release((void *)(addr))
#else
#define ETL_HB_ACQUIRE(addr) ((void)0)
#define ETL_HB_RELEASE(addr) ((void)0)
#endif

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
#define ETL_HAVE_RSEQ 1

/* The signature before every abort handler; glibc registers x86 threads with it. */
#define ETL_RSEQ_SIG 0x53053053

/* The descriptor of a sequence [start, post_commit) with its abort handler, in __rseq_cs. */
#define ETL_RSEQ_DEFINE_CS(label, start, post_commit, abort)                         \
    ".pushsection __rseq_cs, \"aw\"\n\t"                                             \
    ".balign 32\n\t"                                                                 \
    #label ":\n\t"                                                                   \
    ".long 0x0, 0x0\n\t"                                                             \
    ".quad " #start "f, (" #post_commit "f - " #start "f), " #abort "f\n\t"         \
    ".popsection\n\t"                                                                \
    ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"                                   \
    ".quad " #label "b\n\t"                                                          \
    ".popsection\n\t"

/* The abort handler: the signature (as the operand of a ud1, so disassemblers stay in step),
   then a jump back into C. */
#define ETL_RSEQ_DEFINE_ABORT(label, target)                                          \
    ".pushsection __rseq_failure, \"ax\"\n\t"                                        \
    ".byte 0x0f, 0xb9, 0x3d\n\t"                                                     \
    ".long 0x53053053\n\t"                                                           \
    #label ":\n\t"                                                                   \
    "jmp %l[" #target "]\n\t"                                                        \
    ".popsection\n\t"

/*
 * Append len bytes from src to the current buffer of the processor the thread runs on
 * (slots[cpu]). Returns 0 when done, 1 when there is no current buffer or no room in it (or
 * the processor is beyond nslots), -1 when the kernel restarted the sequence (try again).
 */
static inline int etl_rseq_append(struct etl_rseq_abi *rs, struct etl_rseq_cursor *const *slots, uint32_t nslots,
                                  const void *src, uint64_t len)
{
    __asm__ goto(ETL_RSEQ_DEFINE_CS(3, 1, 2, 4)
                 "leaq 3b(%%rip), %%rax\n\t"
                 "movq %%rax, %[rseq_cs]\n\t"
                 "1:\n\t"
                 "movl %[cpu_id], %%eax\n\t"
                 "cmpl %[nslots], %%eax\n\t"
                 "jae %l[slow]\n\t"
                 "movq (%[slots], %%rax, 8), %%rdx\n\t"
                 "testq %%rdx, %%rdx\n\t"
                 "jz %l[slow]\n\t"
                 "movl (%%rdx), %%eax\n\t"          /* off */
                 "leaq (%%rax, %[len]), %%rcx\n\t"   /* off + len */
                 "movl 4(%%rdx), %%esi\n\t"          /* limit */
                 "cmpq %%rsi, %%rcx\n\t"
                 "ja %l[slow]\n\t"
                 "movq 8(%%rdx), %%rdi\n\t"
                 "addq %%rax, %%rdi\n\t"
                 "xorl %%ecx, %%ecx\n\t"
                 "5:\n\t"                          /* copy word by word: the loads match */
                 "movq (%[src], %%rcx), %%rsi\n\t" /* the encoder's stores, which forward */
                 "movq %%rsi, (%%rdi, %%rcx)\n\t"
                 "addq $8, %%rcx\n\t"
                 "cmpq %[len], %%rcx\n\t"
                 "jb 5b\n\t"
                 "addl %k[len], %%eax\n\t"
                 "movl %%eax, (%%rdx)\n\t"            /* commit */
                 "2:\n\t"
                 ETL_RSEQ_DEFINE_ABORT(4, aborted)
                 :
                 : [rseq_cs] "m"(rs->rseq_cs), [cpu_id] "m"(rs->cpu_id), [slots] "r"(slots), [nslots] "r"(nslots),
                   [src] "r"(src), [len] "r"(len)
                 : "memory", "cc", "rax", "rcx", "rdx", "rsi", "rdi"
                 : slow, aborted);
    return 0;
slow:
    return 1;
aborted:
    return -1;
}

/*
 * If the thread runs on processor cpu and slots[cpu] is still expect, store mark_value at
 * *mark (the taken buffer's holder: who has it in hand once it leaves the slot) and make the
 * slot fresh. Returns 0 when done, 1 when the thread is on another processor or the slot
 * changed (nothing stored), -1 when the kernel restarted the sequence (the mark may be stored,
 * the slot is not changed).
 */
static inline int etl_rseq_swap(struct etl_rseq_abi *rs, struct etl_rseq_cursor **slots, uint32_t cpu,
                                struct etl_rseq_cursor *expect, struct etl_rseq_cursor *fresh,
                                int32_t *mark, int32_t mark_value)
{
    __asm__ goto(ETL_RSEQ_DEFINE_CS(3, 1, 2, 4)
                 "leaq 3b(%%rip), %%rax\n\t"
                 "movq %%rax, %[rseq_cs]\n\t"
                 "1:\n\t"
                 "cmpl %[cpu], %[cpu_id]\n\t"
                 "jne %l[other]\n\t"
                 "cmpq %[expect], (%[slot])\n\t"
                 "jne %l[other]\n\t"
                 "movl %[mval], (%[mark])\n\t"
                 "movq %[fresh], (%[slot])\n\t"     /* commit */
                 "2:\n\t"
                 ETL_RSEQ_DEFINE_ABORT(4, aborted)
                 :
                 : [rseq_cs] "m"(rs->rseq_cs), [cpu_id] "m"(rs->cpu_id), [cpu] "r"(cpu), [slot] "r"(slots + cpu),
                   [expect] "r"(expect), [fresh] "r"(fresh), [mark] "r"(mark), [mval] "r"(mark_value)
                 : "memory", "cc", "rax"
                 : other, aborted);
    return 0;
other:
    return 1;
aborted:
    return -1;
}

#endif

/* ------------------------------------------------------------------ providers (provider.c) */

/* Whether an event of level and keywords passes a session's filter (ETW's rules). */
int etl_enable_passes(uint8_t enable_level, uint64_t match_any, uint64_t match_all, uint8_t level,
                      uint64_t keywords);

/* 1 when s enables provider. */
int etl_session_provider_enabled(etl_session *s, const etl_guid *provider);

/* ---- Shared sessions (shared.c) and the provider processes that write into them (provider.c);
   doc/etlrecord-design.md ---- */

/* One provider a shared session enables, as provider processes read it from the session. */
#define ETL_SHARED_MAX_ENABLES 64
typedef struct etl_shared_enable {
    etl_guid guid;
    uint8_t level;
    uint8_t reserved1;
    uint16_t properties;           /* ETL_ENABLE_* */
    uint8_t reserved[4];
    uint64_t any, all;
} etl_shared_enable;

/* 1 for a shared session this process controls (it publishes its enables). */
int etl_session_is_shared_controller(const etl_session *s);
/* The controller publishes the providers s enables (at most ETL_SHARED_MAX_ENABLES; ETL_FAILED
   beyond, with nothing changed). */
int etl_session_enables_publish(etl_session *s, const etl_shared_enable *e, unsigned n);
/* Reads them: *n entries into out (room for ETL_SHARED_MAX_ENABLES). Returns the generation
   they belong to. */
uint64_t etl_session_enables_read(const etl_session *s, etl_shared_enable *out, unsigned *n);
/* The generation (bumped by every change of the enables and by the stop), and whether the
   session still takes events (0 once its controller stops it). */
uint64_t etl_session_generation(const etl_session *s);
int etl_session_running(const etl_session *s);
/* The pid of the session's controller. */
long etl_session_controller_pid(const etl_session *s);

/* Maps the shared session whose file is path into this process, for writing only (no flush
   thread, no file): ETL_OK; ETL_FAILED with a message when it is not a session file of this
   user, is stopping, or its address range is taken in this process (counted in the session's
   writers_refused). */
int etl_session_attach(etl_session **out, const char *path, char *err, size_t errsize);
/* Unmaps it. No write through s may be running or start (s left every provider's set first). */
void etl_session_detach(etl_session *s);

/* 1 when this process holds the session name (etl_session_name_claim). sessionname.c. */
int etl_session_name_held(const char *name);

/* ------------------------------------------------------------------ session hooks (session.c) */

/*
 * What plugs into a session and must act at one of its moments registers a table of
 * functions with it, as libarchive's formats register theirs with its core: the engine calls
 * them and knows nothing else of them. The kernel capture registers one when it is enabled
 * (it drains its readers and writes its rundown at the stop), the provider registry when the
 * session first enables a provider (the session leaves every provider's set). A table has an
 * entry for each moment the engine calls out at; today that is the stop.
 */
struct etl_session_hook {
    const char *name;                      /* what registered it, for messages */
    /* At etl_session_stop, first: the session still takes events and its flush thread still
       runs. Hooks are called in the reverse order of their registration (what registered
       later may use what registered before), each once, and stay registered until every
       one has been called. */
    void (*stop)(etl_session *s, void *ctx);
};

/* Registers table h, with ctx, on s. A table registers once per session: registering it
   again with the same ctx changes nothing (ETL_OK); with another ctx it fails. ETL_OK, or
   ETL_FAILED with the cause in etl_session_error (a table registered with another context,
   no memory). */
int etl_session_hook_add(etl_session *s, const struct etl_session_hook *h, void *ctx);
/* The context table h was registered on s with, or NULL when it is not registered. */
void *etl_session_hook_context(const etl_session *s, const struct etl_session_hook *h);

/* ------------------------------------------------------------------ the session's insides */

/*
 * Two ways to write into a processor's buffer; a session uses one of them throughout.
 *
 * Restartable sequences (x86-64 Linux, the default where the kernel offers them; above):
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
#define ETL_STATE_SEALED 0x80000000u
#define ETL_STATE(gen, off) ((uint64_t)(gen) << 32 | (off))

struct etl_ebuf {
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
struct etl_lost_count {
    _Alignas(64) _Atomic uint64_t n;
    /* The order of the processor's buffer last closed out of its slot, leaving it empty (the
       next buffer that goes in follows it): set by the flush thread before it closes one. */
    _Atomic uint64_t order;
};

/*
 * A session's memory is one mapping: this head, then the per-processor arrays, the buffer
 * descriptors, the ring and the buffers themselves (etl_shared_layout_of). A private session maps it
 * anonymously; a shared session (ETL_ENGINE_SHARED) maps RUNTIME/KEY.shm, at one address in
 * every process that writes into it, so that the pointers in it (a slot's cursor, a cursor's
 * data) mean the same everywhere and the restartable sequences run unchanged. Writers of any
 * process touch only what is here; the file, the flush thread and the requests stay with the
 * controller.
 */
#define ETL_SHARED_MAGIC UINT64_C(0x31304d48534c5445) /* "ETLSHM01" */
#define ETL_SHARED_LAYOUT 3u
/* Where shared sessions are mapped: 128 slots of 16 GiB from 0x5660'0000'0000 up. Nothing is
   there in a process of x86-64 Linux (position-independent executables load below
   0x5656'0000'0000, the shared libraries and mappings come down from 0x7fff'ffff'ffff), and
   the sanitizers leave it to the program too (it is application memory for ThreadSanitizer,
   high memory for AddressSanitizer), so instrumented test programs share sessions as well. */
#define ETL_SHARED_BASE UINT64_C(0x566000000000)
#define ETL_SHARED_STRIDE UINT64_C(0x400000000)
#define ETL_SHARED_SLOTS 128u

enum { ETL_ROLE_PRIVATE, ETL_ROLE_CONTROLLER, ETL_ROLE_ATTACHED };

struct etl_shared_head {
    /* What the controller sets before the file gets its name; read-only after. */
    uint64_t magic;
    uint32_t layout, head_size;
    uint64_t size, address;       /* of the whole mapping */
    uint32_t bsize, ncpu, nmin, nmax, low_water;
    uint32_t wake_every;           /* real time: wake the flush thread every this many sealed
                                      buffers (0: only as the free buffers run low) */
    uint8_t buffering, rseq, exact_clock;
    uint8_t populate;              /* a buffer's memory is reserved as the pool grows into it
                                      (MADV_POPULATE_WRITE), not all at the start */
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
    _Atomic uint32_t sealed_unwoken; /* real time: buffers sealed since the flush thread woke */
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
    struct etl_shared_head *h;
    int role;                      /* ROLE_*: whose session this is */
    etl_session_properties p;
    char *logger_name, *log_file_name;
    /* Copies of the head's constants, for the write path. */
    uint32_t bsize, ncpu, nmin, nmax;  /* ncpu: the current buffers (slots): 1 in one pool */
    uint32_t nproc;                /* the processors (NumberOfProcessors of the file) */
    int pooled;                    /* ETL_MODE_NO_PER_PROCESSOR_BUFFERING: one current buffer */
    int buffering;
    int rseq;                      /* writers use restartable sequences on slots */
    int exact_clock;               /* PerfCounter readings from clock_gettime() each time */
    int populate;                  /* shared: the memory of a buffer new to the pool is
                                      reserved by the writer that takes it (h->populate) */
    struct etl_monoclock *line;    /* the clock line the session's writers read */
    int evict;                     /* evict written buffers from the cache: 2 CLFLUSHOPT, 1 CLFLUSH */
    _Atomic int flush_held;        /* tests: the flush thread takes no sealed buffer (a stalled write) */
    /* Into the mapping. */
    struct etl_rseq_cursor **slots; /* rseq: per processor, its current buffer or NULL */
    uint8_t *memory;
    size_t memory_size;
    struct etl_ebuf *bufs;
    _Atomic uint64_t *current;     /* per processor: generation << 32 | index + 1, 0 for none */
    struct etl_lost_count *lost;       /* per processor: events writers could not log */
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
    uint32_t wake_every;           /* and every this many sealed buffers (real time; 0: never) */
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
    struct etl_session_hook_entry *hooks; /* under lock: the last registered first */
    /* The last error's message (etl_session_error), written by the calls of the thread that
       controls the session. It is not the session's state: a refused update leaves its message
       here, and the session goes on. */
    char err[1024];
    /* The session failed (under lock): its start, or a write to its file (the flush thread's
       first writer error, in fail_err). Its flushes and its stop fail from then on, and put
       fail_err back as the message. */
    int failed;
    char fail_err[1024];
    /* After etl_session_stop: its resources are released, the handle is kept for
       etl_session_error and etl_session_stats_get until etl_session_close. */
    int stopped;
    etl_session_stats final;       /* the statistics at the stop */
    uint32_t final_limit;          /* MaximumBuffers at the stop */
    /* LBR (lbr.c): the triggers and filters, and the kernel flags triggers are checked against. */
    etl_lbr_config lbr;
    uint32_t kernel_flags;
};

/* The session's message (etl_session_error): the last error, which leaves the session as it
   was. session.c. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void etl_session_set_error(etl_session *s, const char *fmt, ...);
/* The session failed (its start, a write to its file), why: from any thread (the flush
   thread's); the first failure is the one kept. */
void etl_session_fail(etl_session *s, const char *why);
/* 1 when the session failed, its failure then the session's message (etl_session_error); 0
   when it did not. From the thread that controls the session. */
int etl_session_failed(etl_session *s);

/* ---- clocks ---- */

static inline int64_t etl_clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* CLOCK_REALTIME ns from now: the deadline sem_timedwait and pthread_cond_timedwait take. */
static inline struct timespec etl_deadline_in(int64_t ns)
{
    int64_t t = etl_clock_ns(CLOCK_REALTIME) + ns;
    return (struct timespec){ (time_t)(t / 1000000000), (long)(t % 1000000000) };
}

static inline int64_t etl_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (int64_t)__rdtsc();
#else
    return etl_clock_ns(CLOCK_MONOTONIC_RAW);
#endif
}

static inline int64_t etl_session_now(const etl_session *s)
{
    switch (s->clock.type) {
    case ETL_CLOCK_SYSTEMTIME: return etl_time_to_filetime(etl_clock_ns(CLOCK_REALTIME));
    case ETL_CLOCK_CPUCYCLE: return etl_cycles();
    default: return s->exact_clock ? etl_monoclock_exact() : etl_monoclock_read(s->line);
    }
}

/* ---- the pool (pool.c) ---- */

/*
 * MaximumBuffers by default: the minimum plus 64 MB of buffers (1024 of 64 KB), never fewer
 * than 64 more. The pool grows into it only under pressure (a writer that finds no free
 * buffer), so a session at rest holds its minimum, as before; what the room is for is a
 * write that stalls: at 2 million events a second of 112-byte records (224 MB/s), 64 MB
 * rides out a stall of 290 ms. (ETW documents no default: it raises MaximumBuffers to at
 * least MinimumBuffers and caps it at a limit of its own; doc/libetl.md.)
 */
#define ETL_DEFAULT_GROWTH_BYTES (64u << 20)
static inline uint32_t etl_session_default_growth(uint32_t bsize)
{
    return ETL_DEFAULT_GROWTH_BYTES / bsize > 64 ? ETL_DEFAULT_GROWTH_BYTES / bsize : 64;
}

/* The calling thread's pid, as the write path caches it. */
int32_t etl_pool_own_pid(void);
/* Once per process, before the first session: forget the cached ids in a forked child. */
void etl_pool_ids_init(void);
/* Buffer index goes back to the free list. */
void etl_pool_free_push(etl_session *s, uint32_t index);
/* The buffer ends at `end`: hand it to the flush thread. */
void etl_pool_seal(etl_session *s, uint32_t top, uint32_t end);
/* EventsLost: what writers and the flush thread counted. */
uint64_t etl_pool_events_lost(const etl_session *s);
/* Adds n to it (the kernel capture: events the kernel wrote no sample of). */
void etl_session_add_events_lost(etl_session *s, uint64_t n);
/* etl_session_write_event of an event whose only extended items are ready-made (a TraceLogging
   event's: etl_record_encode_event_items), for the provider API's write path. */
int etl_session_write_event_items(etl_session *s, const etl_guid *provider, const etl_event_descriptor *d,
                                  const uint8_t *items, uint32_t items_size, const etl_data *data, unsigned ndata);
/* Takes every sealed buffer into s->batch, oldest first; returns how many. */
uint32_t etl_pool_collect_sealed(etl_session *s);
/* For tests, a write that stalls: while held, the flush thread takes no sealed buffer (a
   flush request and the stop still do). flush.c. */
void etl_session_hold_flush(etl_session *s, int hold);
/* Buffering mode, under the ring lock: the sealed buffers join the ring, oldest first. */
void etl_pool_ring_collect_locked(etl_session *s);

/* A buffer's order. (A writer may read it from a buffer it saw in a slot, which another may be
   taking again: atomic, relaxed.) */
static inline uint64_t etl_pool_buffer_order(const struct etl_ebuf *b) { return atomic_load_explicit(&b->order, memory_order_relaxed); }

/* rseq: buffer b left its processor's slot, so its offset is final: hand it on. */
static inline void etl_pool_seal_taken(etl_session *s, struct etl_ebuf *b)
{
    uint32_t used = b->cur.off;

    atomic_store_explicit(&b->committed, used - ETL_BUFFER_HEADER_SIZE, memory_order_relaxed);
    etl_pool_seal(s, (uint32_t)(b - s->bufs) + 1, used);
}

static inline struct etl_ebuf *etl_pool_cursor_buffer(struct etl_rseq_cursor *c) { return (struct etl_ebuf *)(void *)c; }

/* The ring's lock, which writers of any process may take (a writer of buffering mode that
   reclaims the oldest buffer): process-shared and robust, so that one that died holding it
   does not block the session. try: do not wait. 0 when taken. */
static inline int etl_pool_ring_lock(etl_session *s, int try)
{
    int rc = try ? pthread_mutex_trylock(&s->h->ring_lock) : pthread_mutex_lock(&s->h->ring_lock);

    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&s->h->ring_lock);
        rc = 0;
    }
    return rc;
}

static inline void etl_pool_ring_unlock(etl_session *s) { pthread_mutex_unlock(&s->h->ring_lock); }

/* ---- the flush thread (flush.c) ---- */

void *etl_flush_thread(void *arg);
/* Records in [0x48, used): what a refused buffer held, for EventsLost. */
uint32_t etl_flush_count_records(const struct etl_ebuf *b);
/* 1 when the processor has CLFLUSHOPT. */
int etl_flush_can_clflushopt(void);

/* ---- real-time delivery (realtime.c) ---- */

/* The flush thread hands written buffers to the consumer's queue (or drops them, counted):
   one at a time, then wakes the consumer's thread once for them all. */
void etl_realtime_hold(etl_session *s, uint32_t index);
void etl_realtime_wake(etl_session *s);
/* At the stop: the consumer gets what is held, or it is counted lost. */
void etl_realtime_end(etl_session *s);

/* ---- the mapping and shared sessions (shared.c) ---- */

/* Where each part of a session's mapping starts (layout of struct etl_shared_head's comment). */
struct etl_layout {
    size_t current, slots, lost, bufs, ring, batch, data, size;
};
void etl_shared_layout_of(uint32_t ncpu, uint32_t nmax, uint32_t bsize, struct etl_layout *l);
/* Points the session's arrays into its mapping. */
void etl_shared_place(etl_session *s, uint8_t *base, const struct etl_layout *l);
/* The controller's mapping, its file RUNTIME/KEY.shm.new, size bytes with the first reserve
   of them reserved (the head and the minimum's buffers), and the first reserve_all (up to
   MaximumBuffers) too where writers cannot reserve buffers as the pool grows (s->populate):
   0, or -1 with the message on s. */
int etl_shared_create(etl_session *s, size_t size, size_t reserve, size_t reserve_all);
/* Tell provider processes that the shared session changed. */
void etl_shared_changed(etl_session *s);

/* ---- the lifecycle (session.c) ---- */

etl_session *etl_session_new(void);
void etl_session_free(etl_session *s);
void etl_session_writer_options(const etl_session *s, etl_writer_options *o, uint32_t mode);

/* Sends all of n bytes on a socket, without SIGPIPE (realtime.c): 0, or -1 when the peer is gone
   (or, for a real-time consumer, the stop gave up on it). */
int etl_send_all(int fd, const void *p, size_t n);

/* ---- the control socket (engine/control.c) ---- */

/* RUNTIME/KEY.sock, the one place it is built: ETL_OK, or ETL_FAILED with a message in err
   (errno EINVAL for a name that is not one, else the runtime directory's or ENAMETOOLONG). */
int etl_control_socket_path(const char *name, char *out, size_t size, char *err, size_t errsize);
/*
 * Connects to the controller of name: the socket, or -1 with errno ENOENT (no session),
 * ECONNREFUSED (orphaned: the socket is there, no live controller holds the name), ETIMEDOUT
 * (a live controller has held the name for etl_control_wait_ms without listening), with err
 * empty; or another failure, err saying why (for EINVAL, that name is not a session name).
 * pid gets the controller's pid for ETIMEDOUT.
 */
int etl_control_connect(const char *name, long *pid, char *err, size_t errsize);
/* How long a client waits, in ms, for the socket of a name that a live controller holds
   (5000): the name is claimed before the session starts, the socket listened on after. */
extern int etl_control_wait_ms;

#endif
