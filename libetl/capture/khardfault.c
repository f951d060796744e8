/* SPDX-License-Identifier: MIT */
/* memory_hard_faults: each major fault of a file page as a PageFault HardFault, from its thread's file fault attempts, the pages it added to the page cache, and perf's major fault at its end. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"

static int same_page(const etl_khf_rec *a, const etl_khf_rec *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->index == b->index;
}

int etl_khf_pair(const etl_khf_rec *r, size_t n, int64_t ts, uint64_t page, uint32_t *dev, uint64_t *ino,
                 etl_khard_fault_desc *d)
{
    size_t last = n, first, upto;
    uint64_t idx, lo = 0, hi = 0;
    int found = 0, grew;

    for (upto = 0; upto < n && r[upto].ts <= ts; upto++)
        if (!r[upto].add) last = upto;
    if (last == n) return 0;
    /* A fault that waits for its page drops the address space's lock and is tried again: the
       attempts of one page in a row (the pages read between them) are one fault. */
    first = last;
    for (size_t i = last; i-- > 0;) {
        if (r[i].add) continue;
        if (!same_page(&r[i], &r[last])) break;
        first = i;
    }
    idx = r[last].index;
    /* What it read: the pages it added to that file from its start on that hold its page, and
       those next to them (one read, readahead's). */
    for (size_t i = first; i < upto; i++)
        if (r[i].add && r[i].dev == r[last].dev && r[i].ino == r[last].ino && r[i].index <= idx &&
            idx - r[i].index < r[i].pages) {
            lo = r[i].index;
            hi = r[i].index + r[i].pages;
            found = 1;
            break;
        }
    do {
        grew = 0;
        for (size_t i = first; found && i < upto; i++) {
            if (!r[i].add || r[i].dev != r[last].dev || r[i].ino != r[last].ino) continue;
            uint64_t a = r[i].index, b = r[i].index + r[i].pages;
            if (a <= hi && b >= lo && (a < lo || b > hi)) {
                if (a < lo) lo = a;
                if (b > hi) hi = b;
                grew = 1;
            }
        }
    } while (grew);
    *dev = r[last].dev;
    *ino = r[last].ino;
    d->initial_time = r[first].ts;
    if (found) {
        uint64_t bytes = (hi - lo) * page;
        d->read_offset = lo * page;
        d->byte_count = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    } else {
        d->read_offset = idx * page; /* it waited for a read another began */
        d->byte_count = 0;
    }
    return 1;
}

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* A thread's records, in time order (the readers of several processors add to it). */
struct khf_thread {
    uint32_t tid;
    etl_khf_rec *r;
    size_t n, cap;
    struct khf_thread *next;
};
#define KHF_SLOTS 1024u
/* Records kept of a thread (the oldest go first): the records of its faults wait for their ends'
   readers, which may be behind by a second or two, and those of faults that read nothing (a
   minor fault ends without a record) wait for the thread's next major fault, or to be stale. */
#define KHF_MAX 65536u
#define KHF_STALE_NS 10000000000LL   /* and those older than this */
struct khf_state {
    pthread_mutex_t lock;
    struct khf_thread *threads[KHF_SLOTS];
    /* mm_filemap_fault's i_ino, s_dev, index; mm_filemap_add_to_page_cache's i_ino, s_dev, index, order */
    struct tp_field f_ino, f_dev, f_index, a_ino, a_dev, a_index, a_order;
    uint64_t *named;                 /* the FileKeys a FileIo Name was written for (open addressing, 0 free) */
    size_t nnamed, named_cap;
    int64_t swept;                   /* when stale records were last dropped from every thread */
};

int etl_khf_init(struct etl_kcapture *k)
{
    if (!(k->flags & ETL_KERNEL_MEMORY_HARD_FAULTS)) return 0;
    if (!(k->hf = calloc(1, sizeof *k->hf))) return -1;
    pthread_mutex_init(&k->hf->lock, NULL);
    return 0;
}

void etl_khf_free(struct etl_kcapture *k)
{
    struct khf_state *h = k->hf;

    if (!h) return;
    for (unsigned i = 0; i < KHF_SLOTS; i++)
        while (h->threads[i]) {
            struct khf_thread *t = h->threads[i];
            h->threads[i] = t->next;
            free(t->r);
            free(t);
        }
    free(h->named);
    pthread_mutex_destroy(&h->lock);
    free(h);
    k->hf = NULL;
}

int etl_khf_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    struct khf_state *h = k->hf;
    char format[8192];

    if (!h) return 0;
    if (etl_ktracepoint("filemap:mm_filemap_fault", &ids[EV_HF_FAULT], format, sizeof format, err, errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_fault", "i_ino", &h->f_ino, err, errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_fault", "s_dev", &h->f_dev, err, errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_fault", "index", &h->f_index, err, errsize) != 0 ||
        etl_ktracepoint("filemap:mm_filemap_add_to_page_cache", &ids[EV_HF_ADD], format, sizeof format, err,
                        errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_add_to_page_cache", "i_ino", &h->a_ino, err, errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_add_to_page_cache", "s_dev", &h->a_dev, err, errsize) != 0 ||
        etl_ktp_find_any(format, "filemap:mm_filemap_add_to_page_cache", "index", &h->a_index, err, errsize) != 0) {
        size_t n = strlen(err);
        snprintf(err + n, errsize - n, "; memory_hard_faults needs the filemap tracepoints (Linux 4.14 or later)");
        return -1;
    }
    /* (order: a folio of 2^order pages, Linux 6.6 and later; one page before) */
    if (etl_ktp_find_any(format, "filemap:mm_filemap_add_to_page_cache", "order", &h->a_order, err, errsize) != 0) {
        h->a_order.size = 0;
        err[0] = '\0';
    }
    return 0;
}

/* Which of the filemap events a sample is (sample_type IDENTIFIER, TID, TIME, CPU, RAW), its
   thread, time and raw data: the event, or -1 for another record. */
static int hf_sample_of(const struct kcpu *c, const uint8_t *r, uint32_t size, uint32_t *tid, int64_t *ts,
                        const uint8_t **raw, uint32_t *raw_len)
{
    uint64_t id;
    int e;

    if (size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return -1;
    id = etl_le64(r + 8);
    if (c->fd[EV_HF_FAULT] >= 0 && c->id[EV_HF_FAULT] == id) e = EV_HF_FAULT;
    else if (c->fd[EV_HF_ADD] >= 0 && c->id[EV_HF_ADD] == id) e = EV_HF_ADD;
    else return -1;
    *tid = etl_le32(r + 20);
    *ts = (int64_t)etl_le64(r + 24);
    *raw_len = etl_le32(r + 40);
    if (*raw_len > size - 44) return -1;
    *raw = r + 44;
    return e;
}

/* The records of tid (create: made when missing): NULL when none. Under h->lock. */
static struct khf_thread *thread_of(struct khf_state *h, uint32_t tid, int create)
{
    struct khf_thread **p = &h->threads[tid % KHF_SLOTS];

    for (; *p; p = &(*p)->next)
        if ((*p)->tid == tid) return *p;
    if (!create || !(*p = calloc(1, sizeof **p))) return NULL;
    (*p)->tid = tid;
    return *p;
}

/* Drops t's first n records. */
static void drop(struct khf_thread *t, size_t n)
{
    if (n > t->n) n = t->n;
    if (!n) return; /* (t->r may be NULL) */
    memmove(t->r, t->r + n, (t->n - n) * sizeof *t->r);
    t->n -= n;
}

/* Once a second of records: what every thread noted before ts - KHF_STALE_NS is dropped, and
   the threads left with nothing are forgotten (those that ended, those whose faults read
   nothing). Under h->lock. */
static void sweep(struct khf_state *h, int64_t ts)
{
    if (ts - h->swept < 1000000000) return;
    h->swept = ts;
    for (unsigned i = 0; i < KHF_SLOTS; i++)
        for (struct khf_thread **p = &h->threads[i]; *p;) {
            struct khf_thread *t = *p;
            size_t old = 0;
            while (old < t->n && t->r[old].ts < ts - KHF_STALE_NS) old++;
            drop(t, old);
            if (t->n) {
                p = &t->next;
                continue;
            }
            *p = t->next;
            free(t->r);
            free(t);
        }
}

void etl_khf_note(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct khf_state *h = c->k->hf;
    const uint8_t *raw;
    uint32_t tid, raw_len;
    int64_t ts;
    int e;
    etl_khf_rec rec;
    struct khf_thread *t;
    size_t at, old = 0;

    if (!h || (e = hf_sample_of(c, r, size, &tid, &ts, &raw, &raw_len)) < 0) return;
    memset(&rec, 0, sizeof rec);
    rec.ts = ts;
    rec.add = e == EV_HF_ADD;
    if (rec.add) {
        rec.dev = (uint32_t)etl_ktp_uint(raw, raw_len, &h->a_dev);
        rec.ino = etl_ktp_uint(raw, raw_len, &h->a_ino);
        rec.index = etl_ktp_uint(raw, raw_len, &h->a_index);
        uint64_t order = h->a_order.size ? etl_ktp_uint(raw, raw_len, &h->a_order) : 0;
        rec.pages = order < 31 ? 1u << order : 1u;
    } else {
        rec.dev = (uint32_t)etl_ktp_uint(raw, raw_len, &h->f_dev);
        rec.ino = etl_ktp_uint(raw, raw_len, &h->f_ino);
        rec.index = etl_ktp_uint(raw, raw_len, &h->f_index);
    }
    pthread_mutex_lock(&h->lock);
    sweep(h, ts);
    /* pages added by a thread in no file fault (a read, a write) are not kept */
    t = thread_of(h, tid, !rec.add);
    if (!t || (rec.add && !t->n)) goto out;
    /* pages added right after those of the thread's last record: one read (readahead's) */
    if (rec.add && t->r[t->n - 1].add && t->r[t->n - 1].ts <= ts && t->r[t->n - 1].dev == rec.dev &&
        t->r[t->n - 1].ino == rec.ino && t->r[t->n - 1].index + t->r[t->n - 1].pages == rec.index &&
        t->r[t->n - 1].pages <= UINT32_MAX - rec.pages) {
        t->r[t->n - 1].pages += rec.pages;
        goto out;
    }
    while (old < t->n && t->r[old].ts < ts - KHF_STALE_NS) old++;
    if (t->n - old >= KHF_MAX) old = t->n - KHF_MAX + 1;
    drop(t, old);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        etl_khf_rec *m = realloc(t->r, cap * sizeof *m);
        if (!m) goto out; /* no memory: this record is not kept */
        t->r = m;
        t->cap = cap;
    }
    for (at = t->n; at > 0 && t->r[at - 1].ts > ts; at--) {} /* (another processor's may be later) */
    memmove(t->r + at + 1, t->r + at, (t->n - at) * sizeof *t->r);
    t->r[at] = rec;
    t->n++;
out:
    pthread_mutex_unlock(&h->lock);
}

int etl_khf_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final)
{
    struct timespec nap = { 0, 1000000 };

    if (!c->k->hf || size < 16 || etl_le32(r) != PERF_RECORD_SAMPLE || c->fd[EV_FAULT_MAJ] < 0 ||
        etl_le64(r + 8) != c->id[EV_FAULT_MAJ])
        return 0;
    /* its attempts and reads may be on the processors it ran on before it slept on the read */
    while (etl_kothers_wait(c, &c->hf_wait, ts)) {
        if (!final) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* 1 when key was named already; else, with note, notes it (0). Under h->lock. */
static int named(struct khf_state *h, uint64_t key, int note)
{
    size_t i;

    if (note && 2 * (h->nnamed + 1) > h->named_cap) {
        size_t cap = h->named_cap ? 2 * h->named_cap : 256;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t) return 1; /* no memory: not noted (a later fault names it again) */
        for (size_t j = 0; j < h->named_cap; j++)
            if (h->named[j]) {
                for (i = (size_t)(h->named[j] % cap); t[i]; i = (i + 1) % cap) {}
                t[i] = h->named[j];
            }
        free(h->named);
        h->named = t;
        h->named_cap = cap;
    }
    if (!h->named_cap) return 0;
    for (i = (size_t)(key % h->named_cap); h->named[i]; i = (i + 1) % h->named_cap)
        if (h->named[i] == key) return 1;
    if (note) {
        h->named[i] = key;
        h->nnamed++;
    }
    return 0;
}

/* The path of the file (major, minor, ino) as pid maps it, from /proc/PID/maps: 1, or 0 (the
   process is gone or maps it no more, or a stacked file system shows its own device). */
static int path_of(uint32_t pid, uint32_t major, uint32_t minor, uint64_t ino, char *name, size_t size)
{
    char path[64], line[4096 + 128];
    FILE *f;
    int ok = 0;

    snprintf(path, sizeof path, "/proc/%" PRIu32 "/maps", pid);
    if (!(f = fopen(path, "re"))) return 0;
    while (!ok && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off, lino;
        unsigned maj, min;
        int at = 0;
        if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &lo, &hi, &off, &maj, &min, &lino, &at) < 6 || !at ||
            maj != major || min != minor || lino != ino || line[at] != '/')
            continue;
        size_t n = strcspn(line + at, "\n");
        if (n >= size) n = size - 1;
        memcpy(name, line + at, n);
        name[n] = '\0';
        ok = 1;
    }
    fclose(f);
    return ok;
}

void etl_khf_fault(struct kcpu *c, int64_t sample_ts, int64_t ts, uint32_t pid, uint32_t tid, uint64_t addr)
{
    struct etl_kcapture *k = c->k;
    struct khf_state *h = k->hf;
    struct khf_thread *t;
    etl_khard_fault_desc d;
    uint32_t dev = 0;
    uint64_t ino = 0, key;
    size_t upto = 0;
    int paired = 0, name_it;
    uint8_t buf[64 + 8192];
    char file[4096];
    size_t n;

    if (!h) return;
    memset(&d, 0, sizeof d);
    pthread_mutex_lock(&h->lock);
    if ((t = thread_of(h, tid, 0))) {
        paired = etl_khf_pair(t->r, t->n, sample_ts, c->page, &dev, &ino, &d);
        while (upto < t->n && t->r[upto].ts <= sample_ts) upto++;
        drop(t, upto); /* what came before it was this fault, or faults that read nothing */
    }
    pthread_mutex_unlock(&h->lock);
    /* A major fault without a file attempt before it read no file page: swap, shared memory. */
    if (!paired) return;
    key = etl_kfile_key(dev >> 20, dev & 0xFFFFF, ino);
    pthread_mutex_lock(&h->lock);
    name_it = !named(h, key, 0);
    pthread_mutex_unlock(&h->lock);
    /* Its name, the first time the file is seen with one (a file not found now may be later). */
    if (name_it && path_of(pid, dev >> 20, dev & 0xFFFFF, ino, file, sizeof file)) {
        pthread_mutex_lock(&h->lock);
        name_it = !named(h, key, 1);
        pthread_mutex_unlock(&h->lock);
        n = etl_kpayload_file_name(buf, sizeof buf, key, file);
        if (name_it && n <= sizeof buf) etl_kwrite_ev(k, ts, ETL_HOOK_FILEIO_NAME, pid, tid, buf, n);
    }
    d.virtual_address = addr;
    d.file_object = key;
    d.tid = tid;
    n = etl_kpayload_hard_fault(buf, sizeof buf, &d);
    etl_kwrite_ev(k, ts, ETL_HOOK_PAGE_FAULT_HARD_FAULT, pid, tid, buf, n);
}

#endif
