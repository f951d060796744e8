/* SPDX-License-Identifier: MIT */
/* memory_page_faults: the kind of each minor fault (TransitionFault, DemandZeroFault, CopyOnWrite) from its entry's error code and whether it faulted on a file page, paired per thread with perf's minor fault at its end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"

uint16_t etl_kpf_kind(int paired, uint64_t error_code, int file)
{
    int present = !!(error_code & 1), write = !!(error_code & 2);

    if (!paired) return ETL_HOOK_PAGE_FAULT_DEMAND_ZERO;
    /* a write to a page that is there (write-protected): its copy, or (a private file page not
       read yet) the file's page read from the page cache and copied */
    if (write && (present || file)) return ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE;
    /* a page that was in memory: the page cache's, or (a protection fault) the page itself */
    if (file || present) return ETL_HOOK_PAGE_FAULT_TRANSITION;
    return ETL_HOOK_PAGE_FAULT_DEMAND_ZERO;
}

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* What is noted of a thread: a fault's entry (its address and error code) or a file page's
   fault or mapping (filemap's tracepoints) within one. */
struct kpf_rec {
    int64_t ts;
    uint64_t addr, error_code;
    uint8_t file;              /* 1: filemap's; 0: an entry */
    int cpu;                   /* the processor whose reader noted it */
};
struct kpf_thread {
    uint32_t tid;
    struct kpf_rec *r;
    size_t n, cap;
    struct kpf_thread *next;
};
#define KPF_SLOTS 1024u
/* Records kept of a thread: a fault's end follows its entry within the fault, the readers of
   the other processors being behind by a second or two at most; those of faults with no end
   (a SIGSEGV, a spurious fault) go with the next end of the thread, or stale. */
#define KPF_MAX 4096u
#define KPF_STALE_NS 10000000000LL
struct kpf_state {
    pthread_mutex_t lock;
    struct kpf_thread *threads[KPF_SLOTS];
    struct tp_field u_addr, u_err, k_addr, k_err; /* page_fault_user's, page_fault_kernel's address, error_code */
    int64_t swept;
};

int etl_kpf_init(struct etl_kcapture *k)
{
    if (!(k->flags & ETL_KERNEL_MEMORY_PAGE_FAULTS)) return 0;
    if (!(k->pf = calloc(1, sizeof *k->pf))) return -1;
    pthread_mutex_init(&k->pf->lock, NULL);
    return 0;
}

void etl_kpf_free(struct etl_kcapture *k)
{
    struct kpf_state *h = k->pf;

    if (!h) return;
    for (unsigned i = 0; i < KPF_SLOTS; i++)
        while (h->threads[i]) {
            struct kpf_thread *t = h->threads[i];
            h->threads[i] = t->next;
            free(t->r);
            free(t);
        }
    pthread_mutex_destroy(&h->lock);
    free(h);
    k->pf = NULL;
}

int etl_kpf_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    struct kpf_state *h = k->pf;
    char format[8192];

    if (!h) return 0;
    /* Without the exceptions tracepoints (x86's only) every minor fault is a DemandZeroFault. */
    if (etl_ktracepoint("exceptions:page_fault_user", &ids[EV_PF_USER], format, sizeof format, err, errsize) != 0 ||
        etl_ktp_find_any(format, "exceptions:page_fault_user", "address", &h->u_addr, err, errsize) != 0 ||
        etl_ktp_find_any(format, "exceptions:page_fault_user", "error_code", &h->u_err, err, errsize) != 0 ||
        etl_ktracepoint("exceptions:page_fault_kernel", &ids[EV_PF_KERNEL], format, sizeof format, err, errsize) != 0 ||
        etl_ktp_find_any(format, "exceptions:page_fault_kernel", "address", &h->k_addr, err, errsize) != 0 ||
        etl_ktp_find_any(format, "exceptions:page_fault_kernel", "error_code", &h->k_err, err, errsize) != 0 ||
        (!ids[EV_HF_FAULT] &&
         etl_ktracepoint("filemap:mm_filemap_fault", &ids[EV_HF_FAULT], format, sizeof format, err, errsize) != 0) ||
        etl_ktracepoint("filemap:mm_filemap_map_pages", &ids[EV_PF_MAP], format, sizeof format, err, errsize) != 0) {
        ids[EV_PF_USER] = ids[EV_PF_KERNEL] = ids[EV_PF_MAP] = 0;
        if (!(k->flags & ETL_KERNEL_MEMORY_HARD_FAULTS)) ids[EV_HF_FAULT] = 0;
        err[0] = '\0';
        k->pf_kinds = 0;
        return 0;
    }
    k->pf_kinds = 1;
    return 0;
}

/* The thread, time, and what of a record of the fault tracepoints (sample_type IDENTIFIER, TID,
   TIME, CPU, RAW): 1, or 0 for another record. */
static int pf_sample_of(const struct kcpu *c, const struct kpf_state *h, const uint8_t *r, uint32_t size,
                        uint32_t *tid, struct kpf_rec *rec)
{
    uint64_t id;
    uint32_t raw_len;
    const uint8_t *raw;
    int e;

    if (size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return 0;
    id = etl_le64(r + 8);
    if (c->fd[EV_PF_USER] >= 0 && c->id[EV_PF_USER] == id) e = EV_PF_USER;
    else if (c->fd[EV_PF_KERNEL] >= 0 && c->id[EV_PF_KERNEL] == id) e = EV_PF_KERNEL;
    else if (c->fd[EV_PF_MAP] >= 0 && c->id[EV_PF_MAP] == id) e = EV_PF_MAP;
    else if (c->fd[EV_HF_FAULT] >= 0 && c->id[EV_HF_FAULT] == id) e = EV_HF_FAULT;
    else return 0;
    *tid = etl_le32(r + 20);
    raw_len = etl_le32(r + 40);
    if (raw_len > size - 44) return 0;
    raw = r + 44;
    memset(rec, 0, sizeof *rec);
    rec->ts = (int64_t)etl_le64(r + 24);
    if (e == EV_PF_USER || e == EV_PF_KERNEL) {
        rec->addr = etl_ktp_uint(raw, raw_len, e == EV_PF_USER ? &h->u_addr : &h->k_addr);
        rec->error_code = etl_ktp_uint(raw, raw_len, e == EV_PF_USER ? &h->u_err : &h->k_err);
    } else {
        rec->file = 1;
    }
    return 1;
}

static struct kpf_thread *thread_of(struct kpf_state *h, uint32_t tid, int create)
{
    struct kpf_thread **p = &h->threads[tid % KPF_SLOTS];

    for (; *p; p = &(*p)->next)
        if ((*p)->tid == tid) return *p;
    if (!create || !(*p = calloc(1, sizeof **p))) return NULL;
    (*p)->tid = tid;
    return *p;
}

static void drop(struct kpf_thread *t, size_t n)
{
    if (n > t->n) n = t->n;
    if (!n) return;
    memmove(t->r, t->r + n, (t->n - n) * sizeof *t->r);
    t->n -= n;
}

/* Once a second: records older than KPF_STALE_NS dropped, threads left with none forgotten.
   Under h->lock. */
static void sweep(struct kpf_state *h, int64_t ts)
{
    if (ts - h->swept < 1000000000) return;
    h->swept = ts;
    for (unsigned i = 0; i < KPF_SLOTS; i++)
        for (struct kpf_thread **p = &h->threads[i]; *p;) {
            struct kpf_thread *t = *p;
            size_t old = 0;
            while (old < t->n && t->r[old].ts < ts - KPF_STALE_NS) old++;
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

void etl_kpf_note(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct kpf_state *h = c->k->pf;
    struct kpf_thread *t;
    struct kpf_rec rec;
    uint32_t tid;
    size_t at, old = 0;

    if (!h || !c->k->pf_kinds || !pf_sample_of(c, h, r, size, &tid, &rec)) return;
    rec.cpu = c->cpu;
    pthread_mutex_lock(&h->lock);
    sweep(h, rec.ts);
    /* a file page's fault outside a fault's entry (read(2) of a mapping) is not kept */
    t = thread_of(h, tid, !rec.file);
    if (!t || (rec.file && !t->n)) goto out;
    if (t->n - old >= KPF_MAX) old = t->n - KPF_MAX + 1;
    drop(t, old);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct kpf_rec *m = realloc(t->r, cap * sizeof *m);
        if (!m) goto out; /* no memory: not kept (its fault is a DemandZeroFault) */
        t->r = m;
        t->cap = cap;
    }
    for (at = t->n; at > 0 && t->r[at - 1].ts > rec.ts; at--) {}
    memmove(t->r + at + 1, t->r + at, (t->n - at) * sizeof *t->r);
    t->r[at] = rec;
    t->n++;
out:
    pthread_mutex_unlock(&h->lock);
}

/* 1 when tid's last entry noted before ts is at addr's page and this processor's: its fault
   began here, and what happened in it (a file page) was noted here too, before its end. */
static int begun_here(struct kcpu *c, uint32_t tid, uint64_t addr, int64_t ts)
{
    struct kpf_state *h = c->k->pf;
    struct kpf_thread *t;
    uint64_t mask = ~(uint64_t)(c->page - 1);
    int here = 0;

    pthread_mutex_lock(&h->lock);
    if ((t = thread_of(h, tid, 0)))
        for (size_t i = t->n; i-- > 0;) {
            if (t->r[i].ts > ts || t->r[i].file) continue;
            here = t->r[i].cpu == c->cpu && (t->r[i].addr & mask) == (addr & mask);
            break;
        }
    pthread_mutex_unlock(&h->lock);
    return here;
}

int etl_kpf_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final)
{
    struct timespec nap = { 0, 1000000 };

    /* a minor fault: IDENTIFIER, IP, TID (pid, tid), TIME, ADDR, CPU */
    if (!c->k->pf || !c->k->pf_kinds || size < 56 || etl_le32(r) != PERF_RECORD_SAMPLE || c->fd[EV_FAULT_MIN] < 0 ||
        etl_le64(r + 8) != c->id[EV_FAULT_MIN])
        return 0;
    /* Most faults begin and end on one processor (a minor fault seldom sleeps): those do not wait.
       Else its entry may be on a processor the thread ran on before it was preempted. */
    if (begun_here(c, etl_le32(r + 28), etl_le64(r + 40), ts)) return 0;
    while (etl_kothers_wait(c, &c->pf_wait, ts)) {
        if (!final) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

uint16_t etl_kpf_fault(struct kcpu *c, int64_t sample_ts, uint32_t tid, uint64_t addr, int major)
{
    struct kpf_state *h = c->k->pf;
    struct kpf_thread *t;
    uint64_t mask = ~(uint64_t)(c->page - 1), error_code = 0;
    size_t upto = 0, entry;
    int paired = 0, file = 0;

    if (major) {
        if (!h) return ETL_HOOK_PAGE_FAULT_HARD;
    } else if (!h || !c->k->pf_kinds) {
        return ETL_HOOK_PAGE_FAULT_DEMAND_ZERO;
    }
    pthread_mutex_lock(&h->lock);
    if ((t = thread_of(h, tid, 0))) {
        while (upto < t->n && t->r[upto].ts <= sample_ts) upto++;
        /* the last entry before its end, at its page; the file pages' faults after that entry */
        for (entry = upto; entry-- > 0;)
            if (!t->r[entry].file) break;
        if (entry < upto && (t->r[entry].addr & mask) == (addr & mask)) {
            paired = 1;
            error_code = t->r[entry].error_code;
            for (size_t i = entry + 1; i < upto; i++) file |= t->r[i].file;
        }
        drop(t, upto); /* this fault's, and those of faults that ended in none (a signal) */
    }
    pthread_mutex_unlock(&h->lock);
    return major ? ETL_HOOK_PAGE_FAULT_HARD : etl_kpf_kind(paired, error_code, file);
}

#endif
