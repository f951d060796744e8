/* SPDX-License-Identifier: MIT */
/* Kernel capture's per-processor rings: each processor's reader takes perf's records out of its ring, sorts them, and handles them in time order into that processor's buffer. */
/* pthread_setaffinity_np, CPU_SET: Linux interfaces. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

#define MAX_FRAMES ETL_PROVIDER_MAX_STACK

/* A sample record: its event by id, then the fields its sample_type gives, in perf's order. */
/* Which of c's events has perf id id; EV_COUNT: none. */
static int event_of(const struct kcpu *c, uint64_t id)
{
    int e;

    for (e = 0; e < EV_COUNT && (__atomic_load_n(&c->fd[e], __ATOMIC_ACQUIRE) < 0 || c->id[e] != id); e++) {}
    return e;
}

/* The priorities of the threads c's CSwitches name, kept for the switches written from perf's
   switch records (switch_record). */
static void priority_seen(struct kcpu *c, uint32_t tid, int8_t priority)
{
    if (!tid) return;
    c->prio_seen[tid % 256].tid = tid;
    c->prio_seen[tid % 256].priority = priority;
}

/*
 * A hard interrupt's or softirq's entry or exit on c's processor (neither nests on one
 * processor: a hard interrupt may come inside a softirq, which is the other pair). The exit
 * writes the ISR or DPC event, at its time, with the entry's as InitialTime, as Windows writes
 * them at their end. An exit without its entry (lost, or before the session) and an entry
 * without its exit are not written: their samples' loss is counted in EventsLost already.
 */
static void irq_sample(struct kcpu *c, int e, int64_t ts, const uint8_t *raw, uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    uint8_t buf[32];
    size_t n;

    if (e == EV_IRQ_ENTRY) {
        c->irq_ts = ts;
        c->irq = (int32_t)etl_ktp_get(raw, raw_len, &k->irq_irq[0]);
    } else if (e == EV_SOFTIRQ_ENTRY) {
        c->softirq_ts = ts;
        c->softirq_vec = (uint32_t)etl_ktp_get(raw, raw_len, &k->softirq_vec[0]);
    } else if (e == EV_IRQ_EXIT) {
        int32_t irq = (int32_t)etl_ktp_get(raw, raw_len, &k->irq_irq[1]);
        if (c->irq_ts == INT64_MIN || irq != c->irq || ts < c->irq_ts) {
            c->irq_ts = INT64_MIN;
            return;
        }
        /* Routine: none known (the handler is not in the tracepoint); Vector: the Linux irq */
        n = etl_kpayload_isr(buf, sizeof buf, c->irq_ts, 0, etl_ktp_get(raw, raw_len, &k->irq_ret) != 0, (uint8_t)irq);
        etl_kwrite_ev(k, etl_korder_ts(c, ts), ETL_HOOK_ISR, 0, 0, buf, n);
        c->irq_ts = INT64_MIN;
    } else {
        uint32_t vec = (uint32_t)etl_ktp_get(raw, raw_len, &k->softirq_vec[1]);
        if (c->softirq_ts == INT64_MIN || vec != c->softirq_vec || ts < c->softirq_ts) {
            c->softirq_ts = INT64_MIN;
            return;
        }
        n = etl_kpayload_dpc(buf, sizeof buf, c->softirq_ts, vec < ETL_KSOFTIRQS ? k->softirq_routine[vec] : 0);
        etl_kwrite_ev(k, etl_korder_ts(c, ts), etl_ksoftirq_hook(vec), 0, 0, buf, n);
        c->softirq_ts = INT64_MIN;
    }
}

/*
 * NewThreadWaitTime of a switch at ts from prev to next: the time since next was switched out
 * last, in clock ticks (etl_kwait_ticks), and prev's switch out noted. 0 when that is not
 * known: next not seen switched out since its last switch in (the reader of the processor
 * it left may be behind this one: its switch out comes later, and is then taken for the next
 * wait), or its slot taken by another thread. The idle task (0) has no wait.
 */
static uint32_t switched(struct etl_kcapture *k, uint32_t prev, uint32_t next, int64_t ts)
{
    uint32_t ticks = 0;

    if (!k->switched) return 0;
    if (next) {
        struct kswitched *s = &k->switched[next % ETL_KSWITCHED_SLOTS];
        pthread_mutex_t *m = &k->switched_lock[next % 64];
        pthread_mutex_lock(m);
        if (s->tid == next && s->out_ts > s->in_ts && s->out_ts <= ts) ticks = etl_kwait_ticks(ts - s->out_ts);
        if (s->tid != next) {
            s->tid = next;
            s->out_ts = INT64_MIN;
        }
        if (ts > s->in_ts) s->in_ts = ts;
        pthread_mutex_unlock(m);
    }
    if (prev) {
        struct kswitched *s = &k->switched[prev % ETL_KSWITCHED_SLOTS];
        pthread_mutex_t *m = &k->switched_lock[prev % 64];
        pthread_mutex_lock(m);
        if (s->tid != prev) {
            s->tid = prev;
            s->in_ts = INT64_MIN;
            s->out_ts = ts;
        } else if (ts > s->out_ts) {
            s->out_ts = ts;
        }
        pthread_mutex_unlock(m);
    }
    return ticks;
}

int etl_kswitch_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final)
{
    struct etl_kcapture *k = c->k;
    struct timespec nap = { 0, 1000000 };
    uint32_t o = 16, raw_len, next;
    uint64_t st;
    int known;

    if (!k->switched || size < o || etl_le32(r) != PERF_RECORD_SAMPLE || event_of(c, etl_le64(r + 8)) != EV_SWITCH)
        return 0;
    st = k->sample_type[EV_SWITCH];
    if (st & PERF_SAMPLE_IP) o += 8;
    o += 16; /* TID, TIME */
    if (st & PERF_SAMPLE_ADDR) o += 8;
    o += 8; /* CPU */
    if (st & PERF_SAMPLE_CALLCHAIN) {
        if (size < o + 8 || etl_le64(r + o) > (size - o - 8) / 8) return 0;
        o += 8 + (uint32_t)(8 * etl_le64(r + o));
    }
    if (!(st & PERF_SAMPLE_RAW) || size < o + 4 || (raw_len = etl_le32(r + o)) > size - o - 4) return 0;
    if (!(next = (uint32_t)etl_ktp_get(r + o + 4, raw_len, &k->next_pid))) return 0; /* the idle task */
    {
        struct kswitched *s = &k->switched[next % ETL_KSWITCHED_SLOTS];
        pthread_mutex_t *m = &k->switched_lock[next % 64];
        pthread_mutex_lock(m);
        known = s->tid == next && s->out_ts > s->in_ts && s->out_ts <= ts;
        pthread_mutex_unlock(m);
    }
    if (known) return 0;
    while (etl_kothers_wait(c, &c->sw_wait, ts)) {
        if (!final) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* OldThreadWaitIdealProcessor: Linux has no ideal processor; the one the thread leaves is where
   its wakeup looks first (its last processor). */
static uint8_t ideal_processor(const struct kcpu *c) { return (uint8_t)(c->cpu < 127 ? c->cpu : 127); }

static void sample_record(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct etl_kcapture *k = c->k;
    uint32_t o = 8, pid = 0, tid = 0, raw_len = 0, nframes = 0;
    uint64_t id, ip = 0, addr = 0, st, frames[MAX_FRAMES];
    const uint8_t *raw = NULL;
    int64_t ts = 0;
    int e;
    uint8_t buf[64];
    size_t n;

    if (size < o + 8) return;
    id = etl_le64(r + o);
    o += 8;
    e = event_of(c, id);
    if (e == EV_COUNT || e == EV_SIDEBAND) return;
    c->got[e]++;
    if (e == EV_LBR_PROFILE || e == EV_LBR_PMC) {
        etl_lbr_write_perf_trigger(k->s, &k->lbr_form[e - EV_LBR_PROFILE], r, size, c->last_ts, &c->last_ts);
        return;
    }
    st = k->sample_type[e];
    if (st & PERF_SAMPLE_IP) { if (size < o + 8) return; ip = etl_le64(r + o); o += 8; }
    if (size < o + 24) return;
    pid = etl_le32(r + o);
    tid = etl_le32(r + o + 4);
    ts = (int64_t)etl_le64(r + o + 8);
    o += 16; /* TID, TIME; then ADDR, CPU */
    if (st & PERF_SAMPLE_ADDR) { if (size < o + 16) return; addr = etl_le64(r + o); o += 8; }
    o += 8;
    if (st & PERF_SAMPLE_CALLCHAIN) {
        uint64_t nr;
        if (size < o + 8) return;
        nr = etl_le64(r + o);
        o += 8;
        if (nr > (size - o) / 8) return;
        nframes = etl_perf_callchain_frames(r + o, nr, frames, MAX_FRAMES);
        o += (uint32_t)(8 * nr);
    }
    if (st & PERF_SAMPLE_RAW) {
        if (size < o + 4) return;
        raw_len = etl_le32(r + o);
        if (raw_len > size - o - 4) return;
        raw = r + o + 4;
    }
    if (e == EV_RQ_ISSUE || e == EV_RQ_COMPLETE || e == EV_SYS_ENTER || e == EV_SYS_EXIT) {
        struct io_sample io = { e, tid, ts, raw, raw_len };
        etl_kio_record(c, &io);
        return;
    }
    if (e >= EV_IRQ_ENTRY && e <= EV_SOFTIRQ_EXIT) {
        irq_sample(c, e, ts, raw, raw_len);
        return;
    }
    if (e >= EV_NET_STATE && e <= EV_NET_UDP) {
        etl_knet_sample(c, e, ts, pid, tid, raw, raw_len);
        return;
    }
    if (e == EV_HF_FAULT || e == EV_HF_ADD) return; /* noted as they were read (khardfault.c) */
    if (e == EV_PF_USER || e == EV_PF_KERNEL || e == EV_PF_MAP) return; /* (and kfaultkind.c) */
    if (e >= EV_VM_FIRST && e < EV_VM_FIRST + EV_VM_COUNT) {
        etl_kvm_record(c, e, ts, etl_korder_ts(c, ts), pid, tid, raw, raw_len);
        return;
    }
    int64_t sample_ts = ts; /* (the switch's own time: a thread's wait is measured with it) */
    ts = etl_korder_ts(c, ts);
    if (e == EV_FILEIO) {
        etl_kfileio_sample(c, ts, pid, tid, raw, raw_len);
        return;
    }
    if (etl_kexit_unmap_sample(c, e, ts, pid, tid, raw, raw_len)) return;
    if (e == EV_FAULT_MAJ && (k->flags & ETL_KERNEL_MEMORY_HARD_FAULTS)) {
        etl_khf_fault(c, sample_ts, ts, pid, tid, addr);
        if (!(k->flags & ETL_KERNEL_MEMORY_PAGE_FAULTS)) return;
    }
    if (e == EV_FAULT_MIN || e == EV_FAULT_MAJ) {
        /* A major fault read its page; a minor one's kind is its entry's (kfaultkind.c: a new
           zero page, a page of the page cache, a copy on write), DemandZeroFault where this
           kernel does not tell. */
        n = etl_kpayload_page_fault(buf, sizeof buf, addr, ip);
        etl_kwrite_ev(k, ts, etl_kpf_fault(c, sample_ts, tid, addr, e == EV_FAULT_MAJ), pid, tid, buf, n);
    } else if (e == EV_PROFILE) {
        n = etl_kpayload_sample(buf, sizeof buf, ip, tid);
        etl_kwrite_ev(k, ts, ETL_HOOK_SAMPLED_PROFILE, 0, 0, buf, n);
    } else if (e == EV_SWITCH) {
        uint8_t state, reason, mode;
        uint32_t prev = (uint32_t)etl_ktp_get(raw, raw_len, &k->prev_pid);
        uint32_t next = (uint32_t)etl_ktp_get(raw, raw_len, &k->next_pid);
        int8_t next_priority = next ? etl_kpriority((int)etl_ktp_get(raw, raw_len, &k->next_prio)) : 0;
        int8_t prev_priority = prev ? etl_kpriority((int)etl_ktp_get(raw, raw_len, &k->prev_prio)) : 0;
        etl_kstate(etl_ktp_get(raw, raw_len, &k->prev_state), &state, &reason, &mode);
        n = etl_kpayload_cswitch(buf, sizeof buf, next, prev, next_priority, prev_priority, reason, mode, state,
                                 ideal_processor(c), switched(k, prev, next, sample_ts));
        etl_kwrite_ev(k, ts, ETL_HOOK_CSWITCH, 0, 0, buf, n);
        priority_seen(c, next, next_priority);
        priority_seen(c, prev, prev_priority);
        c->last_new_tid = next;
    } else {
        const struct tp_field *f = e == EV_WAKEUP ? &k->wakeup_pid : &k->wakeup_new_pid;
        n = etl_kpayload_ready_thread(buf, sizeof buf, (uint32_t)etl_ktp_get(raw, raw_len, f));
        etl_kwrite_ev(k, ts, ETL_HOOK_READY_THREAD, 0, 0, buf, n);
    }
    if (st & PERF_SAMPLE_CALLCHAIN) {
        uint8_t sbuf[16 + 8 * MAX_FRAMES];
        n = etl_kpayload_stack(sbuf, sizeof sbuf, ts, pid, tid, frames, nframes);
        etl_kwrite_ev(k, ts, ETL_HOOK_STACKWALK_STACK, 0, 0, sbuf, n);
    }
}

/*
 * A switch on c's processor (PERF_RECORD_SWITCH_CPU_WIDE: next_prev_pid, next_prev_tid, then
 * the sample_id trailer: pid, tid, time), written twice: OUT by the thread switched from
 * (PERF_RECORD_MISC_SWITCH_OUT, with _PREEMPT when it was still runnable), IN by the thread
 * switched to, after the switch. Its sched_switch sample says the same, but a kernel may
 * write no sample of a tracepoint, and count none lost (doc/kernel-events.md): those fired
 * while the processor runs the idle task, and on the machine this project is tested on, those
 * of the threads of its pid 1. So from each IN record comes the CSwitch the sample would
 * have been, unless the sample came (the last CSwitch of the processor names that thread
 * already). Its old thread's state: idle's (running), else preempted (Ready) when its OUT said
 * so, else taken as an interruptible sleep (Waiting, UserRequest), which no record says.
 */
static void switch_record(struct kcpu *c, const uint8_t *r, uint32_t size, uint16_t misc)
{
    uint8_t buf[64], state, reason, mode;
    uint32_t tid, pid, prev;
    int8_t priority, prev_priority = 0;
    size_t n;

    if (size < 8 + 8 + 32) return;
    pid = etl_le32(r + size - 32);
    tid = etl_le32(r + size - 28);
    if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
        c->out_tid = tid;
        c->out_preempted = !!(misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
        return;
    }
    prev = etl_le32(r + 12);
    /* (A thread that is exiting is -1 in the records: its switches' samples say who it is.) */
    if (tid == 0 || tid == UINT32_MAX || prev == UINT32_MAX || tid == c->last_new_tid) return;
    priority = c->prio_seen[tid % 256].tid == tid ? c->prio_seen[tid % 256].priority
                                                  : etl_kpriority(etl_kthread_prio(pid, tid));
    if (prev == 0) {
        etl_kstate(0, &state, &reason, &mode); /* what the idle task's sched_switch says: running */
    } else {
        uint32_t prev_pid = etl_le32(r + 8);
        etl_kstate(c->out_tid == prev && c->out_preempted ? 0x100 : 0x01, &state, &reason, &mode);
        prev_priority = c->prio_seen[prev % 256].tid == prev ? c->prio_seen[prev % 256].priority
                                                             : etl_kpriority(etl_kthread_prio(prev_pid, prev));
    }
    n = etl_kpayload_cswitch(buf, sizeof buf, tid, prev, priority, prev_priority, reason, mode, state, ideal_processor(c),
                             switched(c->k, prev, tid, (int64_t)etl_le64(r + size - 24)));
    etl_kwrite_ev(c->k, etl_korder_ts(c, (int64_t)etl_le64(r + size - 24)), ETL_HOOK_CSWITCH, 0, 0, buf, n);
    priority_seen(c, tid, priority);
    priority_seen(c, prev, prev_priority);
    c->last_new_tid = tid;
}

static void handle(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    uint32_t type = etl_le32(r);
    uint16_t misc = etl_le16(r + 4);

    switch (type) {
    case PERF_RECORD_SAMPLE: sample_record(c, r, size); break;
    case PERF_RECORD_FORK: etl_ktask_record(c, r, size, 1); break;
    case PERF_RECORD_EXIT: etl_ktask_record(c, r, size, 0); break;
    case PERF_RECORD_COMM: etl_kcomm_record(c, r, size, misc); break;
    case PERF_RECORD_MMAP2: etl_kmmap2_record(c, r, size); break;
    case PERF_RECORD_SWITCH_CPU_WIDE: switch_record(c, r, size, misc); break;
    case PERF_RECORD_LOST:
        if (size >= 24) etl_session_add_events_lost(c->k->s, etl_le64(r + 16));
        break;
    case PERF_RECORD_LOST_SAMPLES:
        if (size >= 16) etl_session_add_events_lost(c->k->s, etl_le64(r + 8));
        break;
    default: break;
    }
}

/* The time of a record: a sample's TIME field, another's sample_id trailer (INT64_MIN when
   it has none it can be read from: handled in ring order). */
static int64_t record_time(const struct kcpu *c, const uint8_t *r, uint32_t size)
{
    uint32_t type = etl_le32(r), o = 8;

    if (type == PERF_RECORD_SAMPLE) {
        uint64_t id;
        int e;
        if (size < o + 8) return INT64_MIN;
        id = etl_le64(r + o);
        o += 8;
        e = event_of(c, id);
        if (e == EV_COUNT) return INT64_MIN;
        if (c->k->sample_type[e] & PERF_SAMPLE_IP) o += 8;
        return size >= o + 16 ? (int64_t)etl_le64(r + o + 8) : INT64_MIN;
    }
    return size >= 8 + 32 ? (int64_t)etl_le64(r + size - 24) : INT64_MIN;
}

static int queue_add(struct kcpu *c, const uint8_t *r, uint32_t len)
{
    if (c->qn == c->qcap) {
        size_t cap = c->qcap ? 2 * c->qcap : 1024;
        void *q = realloc(c->q, cap * sizeof *c->q);
        if (!q) return -1;
        c->q = q;
        c->qcap = cap;
    }
    if (c->q_used + len > c->q_bytes_cap) {
        size_t cap = c->q_bytes_cap ? 2 * c->q_bytes_cap : 1u << 20;
        void *b;
        while (cap < c->q_used + len) cap *= 2;
        b = realloc(c->q_bytes, cap);
        if (!b) return -1;
        c->q_bytes = b;
        c->q_bytes_cap = cap;
    }
    memcpy(c->q_bytes + c->q_used, r, len);
    c->q[c->qn].ts = record_time(c, r, len);
    c->q[c->qn].seq = c->q_seq++;
    c->q[c->qn].off = (uint32_t)c->q_used;
    c->q[c->qn].len = len;
    if (c->q[c->qn].ts == INT64_MIN) c->q[c->qn].ts = c->qn ? c->q[c->qn - 1].ts : c->last_ts;
    c->qn++;
    c->q_used += len;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct queued *x = a, *y = b;

    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What the ring of c holds now, handled in time order. The perf events of a processor share
 * its ring, but a record is written after its time is taken, so one that interrupted the
 * writing of another comes before it with a later time. The records read are sorted and
 * those older than REORDER_NS handled; the younger ones wait for the next round (all of
 * them at the end: final), as a record of that age has been written by then.
 */
#define REORDER_NS 5000000

static void drain(struct kcpu *c, int final)
{
    struct perf_event_mmap_page *m = (struct perf_event_mmap_page *)(void *)c->ring;
    const uint8_t *data = c->ring + c->page;
    uint64_t size = (uint64_t)RING_PAGES * c->page;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
    int64_t horizon = final ? INT64_MAX : etl_monoclock_exact() - REORDER_NS;
    size_t done = 0, keep = 0;

    while (tail + 8 <= head) {
        uint64_t at = tail % size;
        uint16_t len;
        uint32_t first;
        for (unsigned i = 0; i < 8; i++) c->rec[i] = data[(at + i) % size];
        len = etl_le16(c->rec + 6);
        if (len < 8 || tail + len > head) break;
        first = (uint32_t)(size - at < len ? size - at : len);
        memcpy(c->rec, data + at, first);
        memcpy(c->rec + first, data, len - first);
        etl_kdisk_note_issue(c, c->rec, len);
        etl_kvm_note(c, c->rec, len);
        etl_khf_note(c, c->rec, len);
        etl_kpf_note(c, c->rec, len);
        if (queue_add(c, c->rec, len) != 0) handle(c, c->rec, len); /* no memory: in ring order */
        tail += len;
    }
    __atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
    if (!c->qn) {
        etl_kflush_deferred(c, horizon);
        atomic_store(&c->progress, horizon);
        return;
    }
    qsort(c->q, c->qn, sizeof *c->q, by_time);
    while (done < c->qn && c->q[done].ts <= horizon) {
        /* How far it got, before it waits: the other readers' waits (etl_kothers_wait) see it. */
        atomic_store(&c->progress, c->q[done].ts - 1);
        if (etl_kdisk_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, final) ||
            etl_kexec_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, final) ||
            etl_ktask_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, c->q[done].ts, final) ||
            etl_knet_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, c->q[done].ts, final) ||
            etl_kvm_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, final) ||
            etl_khf_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, c->q[done].ts, final) ||
            etl_kpf_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, c->q[done].ts, final) ||
            etl_kswitch_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, c->q[done].ts, final))
            break;
        etl_kflush_deferred(c, c->q[done].ts);
        handle(c, c->q_bytes + c->q[done].off, c->q[done].len);
        done++;
    }
    /* Handled up to the first record left (a completion waiting for its issue, an exec for its
       command line, a fork or exit for the other readers, or one within the horizon's reach of
       records still to come), or to the horizon. */
    {
        int64_t upto = done < c->qn && c->q[done].ts - 1 < horizon ? c->q[done].ts - 1 : horizon;
        etl_kflush_deferred(c, upto);
        atomic_store(&c->progress, upto);
    }
    /* The rest, to the front (their bytes too). */
    if (done) {
        size_t used = 0;
        uint8_t *tmp = c->qn > done ? malloc(c->q_used) : NULL;
        if (c->qn > done && !tmp) { /* no memory: handle them now */
            for (; done < c->qn; done++) handle(c, c->q_bytes + c->q[done].off, c->q[done].len);
        }
        for (size_t i = done; i < c->qn; i++) {
            memcpy(tmp + used, c->q_bytes + c->q[i].off, c->q[i].len);
            c->q[keep] = c->q[i];
            c->q[keep++].off = (uint32_t)used;
            used += c->q[i].len;
        }
        if (tmp) memcpy(c->q_bytes, tmp, used);
        free(tmp);
        c->qn = keep;
        c->q_used = used;
    }
}

/* One processor's reader, on that processor, so that its records go to its buffer. */
void *etl_kreader(void *arg)
{
    struct kcpu *c = arg;
    cpu_set_t set;

    etl_kthis_reader = c;
    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    while (!atomic_load(&c->k->stop)) {
        struct pollfd p = { c->fd[EV_SIDEBAND], POLLIN, 0 };
        poll(&p, 1, 20);
        drain(c, 0);
    }
    drain(c, 1); /* the events were disabled before the stop was asked: this is the rest */
    return NULL;
}

#endif
