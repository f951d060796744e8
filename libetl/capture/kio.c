/* SPDX-License-Identifier: MIT */
/* Kernel capture's disk I/O and system calls: block tracepoint samples as DiskIo events (each completion paired with its issue, read on any processor) and raw_syscalls samples as PerfInfo SysClEnter and SysClExit. */
/* usleep */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* ---- disk I/O (block:block_rq_issue, block:block_rq_complete) and system calls (raw_syscalls) ---- */

/* A block request issued (read from its processor's ring) and not completed yet. */
struct disk_req {
    uint32_t dev, tid;
    uint64_t sector;
    int64_t ts;
    struct disk_req *next;
};

/* Reads r as a sample of the block or raw_syscalls events (struct io_sample; their sample_type
   is IDENTIFIER, TID, TIME, CPU, RAW: no IP and no callchain, see open_cpu in kcapture.c): 1,
   or 0 when it is another record. */
static int io_sample_of(const struct kcpu *c, const uint8_t *r, uint32_t size, struct io_sample *s)
{
    static const int io_events[] = { EV_RQ_ISSUE, EV_RQ_COMPLETE, EV_SYS_ENTER, EV_SYS_EXIT };
    uint64_t id;

    if (size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return 0;
    id = etl_le64(r + 8);
    s->e = -1;
    for (size_t i = 0; i < sizeof io_events / sizeof io_events[0]; i++)
        if (c->fd[io_events[i]] >= 0 && c->id[io_events[i]] == id) s->e = io_events[i];
    if (s->e < 0) return 0;
    s->tid = etl_le32(r + 20);                /* after the pid */
    s->ts = (int64_t)etl_le64(r + 24);
    s->raw_len = etl_le32(r + 40);            /* after CPU and its reserved word */
    if (s->raw_len > size - 44) return 0;
    s->raw = r + 44;
    return 1;
}

/* What a block tracepoint says of its request. */
struct rq {
    uint32_t dev, nr_sector, irp_flags;
    uint64_t sector;
    int kind;                                 /* ETL_KIO_* */
};

static void rq_read(const struct etl_kcapture *k, int complete, const struct io_sample *s, struct rq *q)
{
    const struct tp_field *w = &k->rq_rwbs[complete];
    char rwbs[17] = { 0 };

    q->dev = (uint32_t)etl_ktp_get(s->raw, s->raw_len, &k->rq_dev[complete]);
    q->sector = (uint64_t)etl_ktp_get(s->raw, s->raw_len, &k->rq_sector[complete]);
    q->nr_sector = (uint32_t)etl_ktp_get(s->raw, s->raw_len, &k->rq_nr_sector[complete]);
    if (w->off + w->size <= s->raw_len) memcpy(rwbs, s->raw + w->off, w->size);
    q->kind = etl_kio_kind(rwbs, w->size, &q->irp_flags);
    /* A flush's sector is 0 at its issue and -1 at its completion: flushes are matched by
       disk. A read or write of no data is the tail of a flush sequence (its issue was the
       flush): not written. */
    if (q->kind == ETL_KIO_FLUSH) q->sector = 0;
    else if (q->nr_sector == 0) q->kind = ETL_KIO_OTHER;
}

/* The Irp of a request: a key made of its disk, sector and issue time, the same in its Init
   and its completion (issue_ts 0: a completion whose issue was not seen). */
static uint64_t disk_irp(uint32_t dev, uint64_t sector, int64_t issue_ts)
{
    uint64_t x = ((uint64_t)dev << 40) ^ sector ^ ((uint64_t)issue_ts * 0x9E3779B97F4A7C15ull);

    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x ? x : 1;
}

static unsigned disk_slot(uint32_t dev, uint64_t sector)
{
    return (unsigned)(((sector * 0x9E3779B97F4A7C15ull) >> 40) ^ dev) % DTAB_SIZE;
}

/*
 * A request's completion often runs on another processor than its issue (an interrupt), and
 * each processor's reader goes at its own pace. So issues are noted when their record is read
 * from the ring (before the records are sorted and handled), and a completion is handled once
 * its issue is noted, or once the other readers are past it (etl_kothers_wait: its issue was
 * before the session, or lost: then it has no response time and no issuing thread). An issue
 * whose completion never came is forgotten after DISK_STALE_NS.
 */
#define DISK_STALE_NS 10000000000LL

void etl_kdisk_note_issue(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct etl_kcapture *k = c->k;
    struct io_sample s;
    struct rq q;
    struct disk_req *d;
    unsigned slot;

    if (!io_sample_of(c, r, size, &s) || s.e != EV_RQ_ISSUE) return;
    rq_read(k, 0, &s, &q);
    if (q.kind == ETL_KIO_OTHER || !(d = malloc(sizeof *d))) return;
    d->dev = q.dev;
    d->sector = q.sector;
    d->ts = s.ts;
    d->tid = s.tid;
    slot = disk_slot(q.dev, q.sector);
    pthread_mutex_lock(&k->dlock);
    d->next = k->dtab[slot];
    k->dtab[slot] = d;
    pthread_mutex_unlock(&k->dlock);
}

/* The latest issue of (dev, sector) at or before ts into *out: 1, or 0 when none is noted.
   With take, it leaves the table, with the older issues of that sector (their completions
   were lost) and any issue older than DISK_STALE_NS. */
static int disk_issue(struct etl_kcapture *k, uint32_t dev, uint64_t sector, int64_t ts, int take, struct disk_req *out)
{
    unsigned slot = disk_slot(dev, sector);
    struct disk_req *best = NULL;

    pthread_mutex_lock(&k->dlock);
    for (struct disk_req *d = k->dtab[slot]; d; d = d->next)
        if (d->dev == dev && d->sector == sector && d->ts <= ts && (!best || d->ts > best->ts)) best = d;
    if (best) *out = *best;
    for (struct disk_req **p = &k->dtab[slot]; best && take && *p;) {
        struct disk_req *d = *p;
        if ((d->dev == dev && d->sector == sector && d->ts <= out->ts) || d->ts < ts - DISK_STALE_NS) {
            *p = d->next;
            free(d);
        } else {
            p = &d->next;
        }
    }
    pthread_mutex_unlock(&k->dlock);
    return best != NULL;
}

/* Whether the record r must wait before it is handled: a completion whose issue no reader has
   noted yet, while the other readers are not past it (etl_kothers_wait). At the end (final) it
   waits for them. */
int etl_kdisk_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final)
{
    struct io_sample s;
    struct disk_req d;
    struct rq q;

    if (!io_sample_of(c, r, size, &s) || s.e != EV_RQ_COMPLETE) return 0;
    rq_read(c->k, 1, &s, &q);
    if (q.kind == ETL_KIO_OTHER) return 0;
    /* its issue may be on a processor whose reader is behind, however late this one is */
    while (!disk_issue(c->k, q.dev, q.sector, s.ts, 0, &d) && etl_kothers_wait(c, &c->disk_wait, s.ts)) {
        if (!final) return 1;
        usleep(1000);
    }
    return 0;
}

void etl_kdisk_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < DTAB_SIZE; i++)
        while (k->dtab[i]) {
            struct disk_req *d = k->dtab[i];
            k->dtab[i] = d->next;
            free(d);
        }
    pthread_mutex_destroy(&k->dlock);
}

/* DiskIo ReadInit, WriteInit or FlushInit at a request's issue. */
static void disk_issue_record(struct kcpu *c, const struct io_sample *s, int64_t ts)
{
    uint8_t buf[32];
    struct rq q;
    size_t n;

    rq_read(c->k, 0, s, &q);
    if (q.kind == ETL_KIO_OTHER) return; /* discards, secure erases, driver-private requests */
    n = etl_kpayload_disk_init(buf, sizeof buf, disk_irp(q.dev, q.sector, s->ts), s->tid);
    etl_kwrite_ev(c->k, ts,
             q.kind == ETL_KIO_READ ? ETL_HOOK_DISK_READ_INIT
             : q.kind == ETL_KIO_WRITE ? ETL_HOOK_DISK_WRITE_INIT : ETL_HOOK_DISK_FLUSH_INIT,
             0, 0, buf, n);
}

/* DiskIo Read, Write or FlushBuffers at its completion, with what its issue said. */
static void disk_complete_record(struct kcpu *c, const struct io_sample *s, int64_t ts)
{
    etl_kdisk_desc d;
    struct disk_req issue;
    uint8_t buf[64];
    struct rq q;
    size_t n;

    rq_read(c->k, 1, s, &q);
    if (q.kind == ETL_KIO_OTHER) return;
    memset(&d, 0, sizeof d);
    d.disk_number = q.dev;
    d.irp_flags = q.irp_flags;
    d.transfer_size = q.nr_sector * 512u;
    d.byte_offset = (int64_t)(q.sector * 512u);
    d.irp = disk_irp(q.dev, q.sector, 0);
    if (disk_issue(c->k, q.dev, q.sector, s->ts, 1, &issue)) {
        d.irp = disk_irp(q.dev, q.sector, issue.ts);
        d.response_time = (uint64_t)(s->ts - issue.ts); /* ns: the PerfCounter clock's ticks */
        d.issuing_tid = issue.tid;
    }
    if (q.kind == ETL_KIO_FLUSH) {
        n = etl_kpayload_disk_flush(buf, sizeof buf, &d);
        etl_kwrite_ev(c->k, ts, ETL_HOOK_DISK_FLUSH, 0, 0, buf, n);
    } else {
        n = etl_kpayload_disk_io(buf, sizeof buf, &d);
        etl_kwrite_ev(c->k, ts, q.kind == ETL_KIO_READ ? ETL_HOOK_DISK_READ : ETL_HOOK_DISK_WRITE, 0, 0, buf, n);
    }
}

/* A block or raw_syscalls sample, in its processor's buffer. PerfInfo's SysClEnter and
   SysClExit name no thread (Windows' consumers take the one CSwitch says is running). */
void etl_kio_record(struct kcpu *c, const struct io_sample *s)
{
    struct etl_kcapture *k = c->k;
    int64_t ts = etl_korder_ts(c, s->ts);
    uint8_t buf[16];
    size_t n;

    if (s->e == EV_SYS_ENTER) {
        /* Linux has no system-call address a Windows consumer could resolve: the number. */
        n = etl_kpayload_syscall_enter(buf, sizeof buf, (uint64_t)etl_ktp_get(s->raw, s->raw_len, &k->sys_id));
        etl_kwrite_ev(k, ts, ETL_HOOK_SYSCALL_ENTER, 0, 0, buf, n);
    } else if (s->e == EV_SYS_EXIT) {
        n = etl_kpayload_syscall_exit(buf, sizeof buf, etl_kntstatus(etl_ktp_get(s->raw, s->raw_len, &k->sys_ret)));
        etl_kwrite_ev(k, ts, ETL_HOOK_SYSCALL_EXIT, 0, 0, buf, n);
    } else if (s->e == EV_RQ_ISSUE) {
        disk_issue_record(c, s, ts);
    } else {
        disk_complete_record(c, s, ts);
    }
}

#endif
