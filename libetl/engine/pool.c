/* SPDX-License-Identifier: MIT */
/* The buffer pool of a session: per-processor buffers, lock-free reservation or restartable sequences, the write path, and buffering mode's ring. */
/* sched_getcpu, gettid through syscall, MADV_POPULATE_WRITE: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"
#include "writer/writer.h"

/* A session writes with restartable sequences or with compare-and-swap reservation
   throughout: engine.h says how each works, before struct etl_ebuf. */

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

int32_t etl_pool_own_pid(void) { return own_pid(); }
void etl_pool_ids_init(void) { pthread_once(&atfork_once, install_atfork); }

/* ------------------------------------------------------------------ buffer stacks */

static void stack_push(_Atomic uint64_t *head, struct etl_ebuf *bufs, uint32_t index)
{
    uint64_t old = atomic_load_explicit(head, memory_order_relaxed), nw;

    do {
        atomic_store_explicit(&bufs[index].next, (uint32_t)old, memory_order_relaxed);
        nw = ((old >> 32) + 1) << 32 | (index + 1);
    } while (!atomic_compare_exchange_weak_explicit(head, &old, nw, memory_order_release, memory_order_relaxed));
}

/* Index + 1 of a buffer taken from the stack, or 0 if it is empty. The tag in the high half
   makes a head that was popped and pushed back in between fail the exchange (ABA). */
static uint32_t stack_pop(_Atomic uint64_t *head, struct etl_ebuf *bufs)
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
void etl_pool_free_push(etl_session *s, uint32_t index)
{
    ETL_HB_RELEASE(&s->bufs[index]);
    atomic_store_explicit(&s->bufs[index].holder, 0, memory_order_relaxed);
    stack_push(&s->h->free_head, s->bufs, index);
    atomic_fetch_add_explicit(&s->h->free_count, 1, memory_order_relaxed);
}

static uint32_t reclaim_oldest(etl_session *s, int *busy);

/*
 * Shared sessions: reserve the memory of buffer index, new to the pool, in the session's
 * file (shared.c's reserve_growth). Two writers may both do it for one buffer, which is
 * harmless. 1, or 0 when there is no memory (a full /dev/shm): the pool grows no further.
 */
static int populate(etl_session *s, uint32_t index)
{
#if defined(MADV_POPULATE_WRITE)
    int e = errno;
    int ok = madvise(s->bufs[index].cur.data, s->bsize, MADV_POPULATE_WRITE) == 0;

    errno = e;
    return ok;
#else
    (void)s;
    (void)index;
    return 0;
#endif
}

/* A buffer ready for cpu: from the free list, else a new one while the pool may grow. */
static uint64_t take_buffer(etl_session *s, uint16_t cpu)
{
    uint32_t top = stack_pop(&s->h->free_head, s->bufs);
    struct etl_ebuf *b;

    if (top) {
        atomic_fetch_sub_explicit(&s->h->free_count, 1, memory_order_relaxed);
    } else {
        uint32_t n = atomic_load_explicit(&s->h->allocated, memory_order_relaxed);
        do {
            if (n < atomic_load_explicit(&s->h->limit, memory_order_relaxed) && s->populate &&
                !populate(s, n))
                return 0; /* no memory for it: as if the pool were at its limit */
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
        atomic_store_explicit(&b->state, ETL_STATE(gen, ETL_BUFFER_HEADER_SIZE), memory_order_release);
        return ETL_STATE(gen, top);
    }
}

/* The buffer ends at `end`: hand it to the flush thread. Only the one reservation that
   crossed the end (or the flush that closed the buffer) calls this. */
void etl_pool_seal(etl_session *s, uint32_t top, uint32_t end)
{
    struct etl_ebuf *b = &s->bufs[top - 1];

    b->used = end;
    b->seal = atomic_fetch_add_explicit(&s->h->seal_counter, 1, memory_order_relaxed);
    atomic_store_explicit(&b->holder, 0, memory_order_relaxed);
    ETL_HB_RELEASE(b);
    stack_push(&s->h->full_head, s->bufs, top - 1);
    /* Waking the flush thread is a system call, and the thread then takes the producer's
       processor: only when the free buffers run low (it also wakes every 100 ms by itself).
       The room to grow up to MaximumBuffers does not count: it is for peaks the flush thread
       cannot follow, and a thread woken only when that ran low too let the pool grow to half
       of it at rates the flush thread writes with ease. A real-time session's is also woken
       every few sealed buffers (wake_every), so that its consumer gets them soon. */
    if (s->buffering) return;
    if ((atomic_load_explicit(&s->h->free_count, memory_order_relaxed) <= s->low_water ||
         (s->wake_every && atomic_fetch_add_explicit(&s->h->sealed_unwoken, 1, memory_order_relaxed) + 1 >= s->wake_every)) &&
        !atomic_exchange_explicit(&s->h->wake_pending, 1, memory_order_relaxed))
        sem_post(&s->h->wake);
}

/* The order of a buffer that goes into cpu's slot after `old` (NULL: the slot is empty). */
static uint64_t buffer_order_after(etl_session *s, uint32_t cpu, const struct etl_ebuf *old)
{
    return (old ? etl_pool_buffer_order(old) : atomic_load_explicit(&s->lost[cpu].order, memory_order_acquire)) + 1;
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
    etl_pool_free_push(s, (uint32_t)fresh - 1); /* another writer switched first */
    return expected ? expected : switch_buffer(s, cpu, 0);
}

/*
 * Reserve space bytes in the current buffer of the caller's processor. Returns where to
 * write and the buffer (for the commit), or NULL with errno set when the event is lost.
 */
static uint8_t *reserve(etl_session *s, uint32_t space, struct etl_ebuf **out)
{
    int c = sched_getcpu();
    uint16_t cpu = (uint16_t)((c < 0 ? 0 : (unsigned)c) % s->ncpu);
    uint64_t cur = atomic_load_explicit(&s->current[cpu], memory_order_acquire);

    if (atomic_load_explicit(&s->h->file_full, memory_order_relaxed)) {
        errno = ENOSPC;
        return NULL;
    }
    for (;;) {
        struct etl_ebuf *b;
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
            if ((uint32_t)(st >> 32) != gen || (off & ETL_STATE_SEALED)) break; /* reused or closed */
            if (off + space <= s->bsize) {
                if (atomic_compare_exchange_weak_explicit(&b->state, &st, ETL_STATE(gen, off + space),
                                                          memory_order_acquire, memory_order_acquire)) {
                    *out = b;
                    return b->cur.data + off;
                }
                continue;
            }
            /* No room: close the buffer where its records end, and hand it on. */
            if (atomic_compare_exchange_weak_explicit(&b->state, &st, ETL_STATE(gen, off | ETL_STATE_SEALED),
                                                      memory_order_acq_rel, memory_order_acquire)) {
                etl_pool_seal(s, top, off);
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

static inline void commit(struct etl_ebuf *b, uint32_t space)
{
    atomic_fetch_add_explicit(&b->committed, space, memory_order_release);
}

/* EventsLost: what writers and the flush thread counted. */
uint64_t etl_pool_events_lost(const etl_session *s)
{
    uint64_t n = atomic_load_explicit(&s->h->events_lost, memory_order_relaxed);

    for (uint32_t i = 0; s->lost && i < s->ncpu; i++) n += atomic_load_explicit(&s->lost[i].n, memory_order_relaxed);
    return n;
}

void etl_session_add_events_lost(etl_session *s, uint64_t n)
{
    atomic_fetch_add_explicit(&s->h->events_lost, n, memory_order_relaxed);
}

static int lost(etl_session *s)
{
    int cpu = sched_getcpu();

    atomic_fetch_add_explicit(&s->lost[(unsigned)(cpu < 0 ? 0 : cpu) % s->ncpu].n, 1, memory_order_relaxed);
    return ETL_FAILED;
}

/* ------------------------------------------------------------------ restartable sequences */

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
    if (s->role != ETL_ROLE_PRIVATE && atomic_load_explicit(&s->h->stopping, memory_order_relaxed)) return -1;
    old = __atomic_load_n(&s->slots[cpu], __ATOMIC_RELAXED);
    /* old may have been closed and reused since: this look is only a hint (an old buffer that
       came back to the slot is closed early by the swap below, which loses nothing). */
    if (old && __atomic_load_n(&old->off, __ATOMIC_RELAXED) + space <= s->bsize)
        return 1; /* the thread moved, or another one swapped first: try again */
    fresh = take_buffer(s, (uint16_t)cpu);
    if (!fresh) return 0;
    atomic_store_explicit(&s->bufs[(uint32_t)fresh - 1].order, buffer_order_after(s, cpu, old ? etl_pool_cursor_buffer(old) : NULL),
                          memory_order_relaxed);
    for (;;) {
        int r;
        ETL_HB_RELEASE(&s->slots[cpu]); /* what take_buffer wrote, for whoever takes it out */
        ETL_HB_RELEASE(&s->bufs[(uint32_t)fresh - 1]); /* (the flush thread of another process may) */
        /* The old buffer is marked ours inside the sequence, as it leaves the slot: if this
           process dies before it seals it, the flush thread knows whose it was. */
        r = etl_rseq_swap(rs, s->slots, cpu, old, &s->bufs[(uint32_t)fresh - 1].cur,
                          old ? (int32_t *)&etl_pool_cursor_buffer(old)->holder : &unmarked, pid);
        if (r == 0) {
            int32_t mine = pid;
            ETL_HB_ACQUIRE(&s->slots[cpu]); /* what the one who put old in wrote */
            if (old) ETL_HB_ACQUIRE(etl_pool_cursor_buffer(old)); /* (put in by a writer of another process) */
            /* The fresh buffer is in the slot now: no longer in our hands (unless a writer
               already took it out again and marked it its own). */
            atomic_compare_exchange_strong_explicit(&s->bufs[(uint32_t)fresh - 1].holder, &mine, 0,
                                                    memory_order_relaxed, memory_order_relaxed);
            if (old) etl_pool_seal_taken(s, etl_pool_cursor_buffer(old));
            return 1;
        }
        if (r > 0) { /* on another processor now, or the slot changed: not ours to replace */
            etl_pool_free_push(s, (uint32_t)fresh - 1);
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
    struct etl_ebuf *b;
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
        size = etl_record_encode_event(NULL, 0, 0, 0, 0, provider, d, x, data, ndata);
    }
    p = emit_begin(s, size, &e);
    if (!p) return ETL_FAILED;
    caller_ids(&pid, &tid);
    etl_record_encode_event(p, e.space, etl_session_now(s), pid, tid, provider, d, x, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_event_items(etl_session *s, const etl_guid *provider, const etl_event_descriptor *d,
                                  const uint8_t *items, uint32_t items_size, const etl_data *data, unsigned ndata)
{
    uint64_t n = ETL_EVENT_HEADER_SIZE + (uint64_t)items_size;
    uint32_t pid, tid;
    struct emit e;
    uint8_t *p;

    for (unsigned i = 0; i < ndata; i++) n += data[i].size;
    p = emit_begin(s, n > ETL_MAX_RECORD_SIZE || items_size % 8 ? 0 : (uint32_t)n, &e);
    if (!p) return ETL_FAILED;
    caller_ids(&pid, &tid);
    etl_record_encode_event_items(p, e.space, etl_session_now(s), pid, tid, provider, d, items, items_size, data,
                                  ndata);
    return emit_end(s, &e);
}

int etl_session_write_system(etl_session *s, int64_t ts, uint16_t hook, uint16_t version, uint32_t pid,
                             uint32_t tid, const etl_data *data, unsigned ndata)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_record_encode_system(NULL, 0, 0, hook, version, pid, tid, data, ndata), &e);

    if (!p) return ETL_FAILED;
    etl_record_encode_system(p, e.space, ts ? ts : etl_session_now(s), hook, version, pid, tid, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_perfinfo(etl_session *s, int64_t ts, uint16_t hook, uint16_t version,
                               const etl_data *data, unsigned ndata)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_record_encode_perfinfo(NULL, 0, 0, hook, version, data, ndata), &e);

    if (!p) return ETL_FAILED;
    etl_record_encode_perfinfo(p, e.space, ts ? ts : etl_session_now(s), hook, version, data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_classic(etl_session *s, int64_t ts, const etl_guid *class_guid, uint8_t type, uint8_t level,
                              uint16_t version, uint32_t pid, uint32_t tid, const etl_data *data, unsigned ndata)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_record_encode_classic(NULL, 0, 0, class_guid, type, level, version, pid, tid, data,
                                                         ndata), &e);

    if (!p) return ETL_FAILED;
    etl_record_encode_classic(p, e.space, ts ? ts : etl_session_now(s), class_guid, type, level, version, pid, tid,
                              data, ndata);
    return emit_end(s, &e);
}

int etl_session_write_lbr(etl_session *s, int64_t trigger_ts, uint32_t pid, uint32_t tid, uint32_t filters,
                          const etl_lbr_entry *entries, unsigned count)
{
    struct emit e;
    uint8_t *p = emit_begin(s, etl_record_encode_lbr(NULL, 0, trigger_ts, pid, tid, filters, entries, count), &e);

    if (!p) return ETL_FAILED;
    etl_record_encode_lbr(p, e.space, trigger_ts, pid, tid, filters, entries, count);
    return emit_end(s, &e);
}

/* Takes every sealed buffer into s->batch, oldest first; returns how many. Called by the
   flush thread (file modes) or under the ring lock (buffering mode), never both. */
uint32_t etl_pool_collect_sealed(etl_session *s)
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



/* Buffering mode, under the ring lock: the sealed buffers join the ring, oldest first. */
void etl_pool_ring_collect_locked(etl_session *s)
{
    uint32_t n = etl_pool_collect_sealed(s);

    for (uint32_t i = 0; i < n; i++) s->ring[(s->h->ring_head + s->h->ring_n++) % s->nmax] = s->batch[i];
}

/* Buffering mode, for a writer that finds no free buffer: the oldest kept buffer, if every
   record in it is written and nobody else holds the ring (try-lock: a writer never waits).
   Returns index + 1, or 0 (*busy: the ring was locked). */
static uint32_t reclaim_oldest(etl_session *s, int *busy)
{
    uint32_t top = 0;

    *busy = etl_pool_ring_lock(s, 1) != 0;
    if (*busy) return 0;
    etl_pool_ring_collect_locked(s);
    if (s->h->ring_n > 0) {
        struct etl_ebuf *b = &s->bufs[s->ring[s->h->ring_head]];
        if (atomic_load_explicit(&b->committed, memory_order_acquire) >= b->used - ETL_BUFFER_HEADER_SIZE) {
            top = s->ring[s->h->ring_head] + 1;
            s->h->ring_head = (s->h->ring_head + 1) % s->nmax;
            s->h->ring_n--;
        }
    }
    etl_pool_ring_unlock(s);
    return top;
}
