/* SPDX-License-Identifier: MIT */
/* A session's flush thread: it closes the processors' buffers, writes the sealed ones in each processor's order (or keeps them in the ring), takes back buffers of dead writers, and takes snapshots. */
/* pthread_setaffinity_np, CPU_SET, qsort_r: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "writer/writer.h"

/* ------------------------------------------------------------------ flushing */

#if defined(ETL_HAVE_RSEQ)
/* rseq: close processor cpu's buffer, if it still is old, by running a swap sequence on cpu.
   Returns 1 when this call took it out of the slot. */
static int close_on(etl_session *s, struct etl_rseq_abi *rs, uint32_t cpu, struct etl_rseq_cursor *old)
{
    /* If the slot is left empty, the buffer that goes in next follows this one. */
    atomic_store_explicit(&s->lost[cpu].order, etl_pool_buffer_order(etl_pool_cursor_buffer(old)), memory_order_release);
    for (int tries = 0; tries < 100; tries++) {
        int r = etl_rseq_swap(rs, s->slots, cpu, old, NULL, (int32_t *)&etl_pool_cursor_buffer(old)->holder, etl_pool_own_pid());
        if (r == 0) {
            ETL_HB_ACQUIRE(&s->slots[cpu]);
            ETL_HB_ACQUIRE(etl_pool_cursor_buffer(old));
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
            atomic_store_explicit(&s->lost[cpu].order, etl_pool_buffer_order(etl_pool_cursor_buffer(old)), memory_order_release);
            closed = __atomic_compare_exchange_n(&s->slots[cpu], &old, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        }
        if (closed) etl_pool_seal_taken(s, etl_pool_cursor_buffer(old));
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
        struct etl_ebuf *b;

        if (!top) continue;
        b = &s->bufs[top - 1];
        st = atomic_load_explicit(&b->state, memory_order_acquire);
        if ((uint32_t)st == ETL_BUFFER_HEADER_SIZE) continue; /* empty: leave it */
        atomic_store_explicit(&s->lost[cpu].order, etl_pool_buffer_order(b), memory_order_release); /* the next follows it */
        if (!atomic_compare_exchange_strong_explicit(&s->current[cpu], &cur, 0, memory_order_acq_rel,
                                                     memory_order_relaxed))
            continue; /* a writer moved on from it: it is sealed already */
        /* Close it where its reservations end, unless a writer closed it first. */
        for (;;) {
            if ((uint32_t)(st >> 32) != gen || ((uint32_t)st & ETL_STATE_SEALED)) break;
            if (atomic_compare_exchange_weak_explicit(&b->state, &st, ETL_STATE(gen, (uint32_t)st | ETL_STATE_SEALED),
                                                      memory_order_acq_rel, memory_order_acquire)) {
                etl_pool_seal(s, top, (uint32_t)st);
                break;
            }
        }
    }
}

/* Wait until every reservation below the buffer's end is written. */
static void wait_committed(const struct etl_ebuf *b)
{
    unsigned spins = 0;

    while (atomic_load_explicit(&b->committed, memory_order_acquire) < b->used - ETL_BUFFER_HEADER_SIZE) {
        if (++spins > 64) sched_yield();
    }
}

/* Records in [0x48, used): what a refused buffer held, for EventsLost. */
uint32_t etl_flush_count_records(const struct etl_ebuf *b)
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


/*
 * A buffer the flush thread has written is in the flush thread's processor's cache: write()
 * read it and the writer filled its header and tail. A writer that reuses it must take every
 * line back from there, which in sessionbench made an event in a file session cost 80 ns
 * instead of 25 when the two processors were far apart. Evicting the lines after the write
 * (CLFLUSHOPT, weakly ordered, about 1 us for 64 KB) lets the writer find them in memory.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
int etl_flush_can_clflushopt(void)
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
int etl_flush_can_clflushopt(void) { return 0; }
static void evict(const etl_session *s, const uint8_t *p) { (void)s; (void)p; }
#endif

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
    const struct etl_ebuf *x = (const struct etl_ebuf *)bufs + *(const uint32_t *)a;
    const struct etl_ebuf *y = (const struct etl_ebuf *)bufs + *(const uint32_t *)b;

    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    return etl_pool_buffer_order(x) < etl_pool_buffer_order(y) ? -1 : etl_pool_buffer_order(x) > etl_pool_buffer_order(y);
}

/* The n buffers collected in batch and those pending: what may go on now into batch (each
   processor's in order), the rest back to pending. Returns how many go on. */
static uint32_t in_processor_order(etl_session *s, uint32_t n, int final)
{
    uint32_t *all = s->pending, m = s->pend_n, out = 0, keep = 0;
    int64_t now = etl_clock_ns(CLOCK_MONOTONIC);

    if (!n && !m) return 0;
    memcpy(all + m, s->batch, (size_t)n * sizeof *all);
    m += n;
    qsort_r(all, m, sizeof *all, by_processor_order, s->bufs);
    for (uint32_t i = 0; i < m; i++) {
        const struct etl_ebuf *b = &s->bufs[all[i]];
        uint16_t c = b->cpu;
        uint64_t order = etl_pool_buffer_order(b);
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

    if (!final && atomic_load_explicit(&s->flush_held, memory_order_acquire)) return; /* a stalled write (tests) */

    if (s->buffering) {
        etl_pool_ring_lock(s, 0);
        etl_pool_ring_collect_locked(s);
        etl_pool_ring_unlock(s);
        return;
    }
    n = in_processor_order(s, etl_pool_collect_sealed(s), final);
    /* In chunks: buffers that follow each other in the file go out in one write, and each
       chunk's buffers go back to the writers as soon as it is written. (One write of all
       that was collected held the whole pool for its duration: in provbench the writers then
       lost 90% of their events flat out, against 70% before.) */
    for (uint32_t c0 = 0; s->writer && c0 < n; c0 += s->chunk) {
        uint32_t c1 = c0 + s->chunk < n ? c0 + s->chunk : n, failed;

        etl_writer_batch_begin(s->writer);
        for (uint32_t i = c0; i < c1; i++) {
            struct etl_ebuf *b = &s->bufs[batch[i]];
            wait_committed(b);
            s->written_ok[i] = etl_writer_write_buffer(s->writer, b->cur.data, b->used, b->cpu, etl_session_now(s),
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
            struct etl_ebuf *b = &s->bufs[batch[i]];
            if (s->written_ok[i]) {
                atomic_fetch_add_explicit(&s->h->buffers_written, 1, memory_order_relaxed);
            } else {
                /* The file takes no more: what this buffer held is lost, and so is what comes. */
                atomic_fetch_add_explicit(&s->h->events_lost, etl_flush_count_records(b), memory_order_relaxed);
                atomic_store_explicit(&s->h->file_full, 1, memory_order_relaxed);
                if (etl_writer_error(s->writer)[0]) etl_session_fail(s, etl_writer_error(s->writer));
                atomic_fetch_add_explicit(&s->h->log_buffers_lost, 1, memory_order_relaxed);
            }
            if (s->realtime) continue;
            evict(s, b->cur.data);
            etl_pool_free_push(s, batch[i]);
        }
    }
    if (s->writer && !s->realtime) return;
    for (uint32_t i = 0; i < n; i++) {
        if (!s->writer) wait_committed(&s->bufs[batch[i]]);
        if (s->realtime) etl_realtime_hold(s, batch[i]);
        else etl_pool_free_push(s, batch[i]);
    }
    if (s->realtime && n) etl_realtime_wake(s);
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
    int32_t self = etl_pool_own_pid();

    for (uint32_t i = 0; i < n; i++) {
        struct etl_ebuf *b = &s->bufs[i];
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
            etl_pool_seal_taken(s, b);
        else
            etl_pool_free_push(s, i);
    }
}

void *etl_flush_thread(void *arg)
{
    etl_session *s = arg;
    uint32_t period = s->p.flush_timer_s;
    int64_t next_timer = period && !s->buffering ? etl_clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000 : INT64_MAX;

    for (;;) {
        /* Every 100 ms by itself (real time: every 10 ms, so that a buffer sealed since waits
           no longer for its consumer); every 2 ms while buffers wait for one before them. */
        struct timespec until = etl_deadline_in(s->pend_n ? 2000000 : s->realtime ? 10000000 : 100000000);
        uint64_t requested;
        int stopping;

        sem_timedwait(&s->h->wake, &until);
        atomic_store_explicit(&s->h->wake_pending, 0, memory_order_relaxed);
        atomic_store_explicit(&s->h->sealed_unwoken, 0, memory_order_relaxed);
        etl_monoclock_tick();
        if (s->role == ETL_ROLE_CONTROLLER) {
            etl_monoclock_publish_copy(&s->h->line);
            reclaim_orphans(s);
        }
        stopping = atomic_load(&s->h->stopping);
        pthread_mutex_lock(&s->lock);
        requested = s->flush_requested;
        if (s->p.flush_timer_s != period) { /* etl_session_set_flush_timer */
            period = s->p.flush_timer_s;
            next_timer = period ? etl_clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000 : INT64_MAX;
        }
        pthread_mutex_unlock(&s->lock);
        if (etl_clock_ns(CLOCK_MONOTONIC) >= next_timer || requested != s->flush_completed || stopping) {
            seal_current(s);
            if (next_timer != INT64_MAX) next_timer = etl_clock_ns(CLOCK_MONOTONIC) + (int64_t)period * 1000000000;
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
            int rounds = s->role == ETL_ROLE_CONTROLLER ? 3 : 1;
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

void etl_session_hold_flush(etl_session *s, int hold)
{
    atomic_store_explicit(&s->flush_held, hold, memory_order_release);
    if (!hold) sem_post(&s->h->wake);
}

int etl_session_flush(etl_session *s)
{
    if (s->buffering) return ETL_OK;
    flush_request(s);
    return etl_session_failed(s) ? ETL_FAILED : ETL_OK;
}

/* ------------------------------------------------------------------ snapshots */

int etl_session_snapshot(etl_session *s, const char *path)
{
    etl_writer_options o;
    etl_writer *w = NULL;
    int rc = ETL_OK;

    if (!s->buffering) {
        etl_session_set_error(s, "snapshots are for buffering mode; flush a file session instead");
        return ETL_FAILED;
    }
    flush_request(s);
    etl_session_writer_options(s, &o, ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_BUFFERING | (s->p.log_file_mode & ETL_MODE_COMPRESSED));
    o.maximum_file_size = 0;
    if (etl_writer_open(&w, path, &o) != ETL_OK) {
        etl_session_set_error(s, "%s", etl_writer_error(w));
        etl_writer_close(w, 0);
        return ETL_FAILED;
    }
    etl_pool_ring_lock(s, 0);
    etl_pool_ring_collect_locked(s);
    for (uint32_t i = 0; i < s->h->ring_n && rc == ETL_OK; i++) {
        struct etl_ebuf *b = &s->bufs[s->ring[(s->h->ring_head + i) % s->nmax]];
        wait_committed(b);
        if (etl_writer_write_buffer(w, b->cur.data, b->used, b->cpu, etl_session_now(s), i + 1 == s->h->ring_n) != ETL_OK)
            rc = ETL_FAILED;
    }
    etl_pool_ring_unlock(s);
    etl_writer_set_events_lost(w, (uint32_t)etl_pool_events_lost(s));
    if (rc != ETL_OK) etl_session_set_error(s, "%s", etl_writer_error(w));
    if (etl_writer_close(w, etl_time_to_filetime(etl_clock_ns(CLOCK_REALTIME))) != ETL_OK) rc = ETL_FAILED;
    return rc;
}
