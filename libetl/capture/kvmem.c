/* SPDX-License-Identifier: MIT */
/* Kernel capture's virtual_alloc and vamap: mmap, munmap, mremap and brk, each entry paired with its return per thread, as PageFault VirtualAlloc/VirtualFree and FileIo MapFile/UnmapFile. */
/* readlink, usleep */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/capture.h"

/* ---- a process's address space as its calls change it (no perf: unit-tested) ---- */

#define KVM_MAP_FIXED 0x10u            /* mmap flags */
#define KVM_MAP_ANONYMOUS 0x20u
#define KVM_MAP_FIXED_NOREPLACE 0x100000u
#define KVM_MREMAP_DONTUNMAP 4u

static int failed(uint64_t ret) { return ret >= (uint64_t)-4095; } /* -errno */

static uint64_t page_up(uint64_t x, uint64_t page) { return x % page ? x + (page - x % page) : x; }

static void emit_range(etl_kvm_emit emit, void *ctx, int kind, uint64_t lo, uint64_t hi, uint32_t flags)
{
    etl_kvm_event e = { kind, lo, hi - lo, flags, 0, 0 };

    if (emit && hi > lo) emit(ctx, &e);
}

static int reserve(etl_kvm_space *sp, size_t more)
{
    if (sp->nviews + more <= sp->cap) return 0;
    size_t cap = sp->cap ? 2 * sp->cap : 16;
    while (cap < sp->nviews + more) cap *= 2;
    etl_kvm_view *v = realloc(sp->views, cap * sizeof *v);
    if (!v) return -1;
    sp->views = v;
    sp->cap = cap;
    return 0;
}

/* Removes [lo, hi) from the views: UnmapFile for each part of a view in it and, with
   free_gaps, VirtualFree for the stretches between them (emit NULL: nothing said). */
static int cut(etl_kvm_space *sp, uint64_t lo, uint64_t hi, int free_gaps, etl_kvm_emit emit, void *ctx)
{
    uint64_t at = lo;
    size_t i = 0;

    if (reserve(sp, 1) != 0) return -1; /* a view cut in two: the one split a range can make */
    while (i < sp->nviews && sp->views[i].base + sp->views[i].size <= lo) i++;
    while (i < sp->nviews && sp->views[i].base < hi) {
        etl_kvm_view v = sp->views[i];
        uint64_t end = v.base + v.size, vlo = v.base > lo ? v.base : lo, vhi = end < hi ? end : hi;
        etl_kvm_event u = { ETL_KVM_UNMAP, vlo, vhi - vlo, 0, v.file_key, v.offset + (vlo - v.base) };
        if (free_gaps) emit_range(emit, ctx, ETL_KVM_FREE, at, vlo, ETL_MEM_RELEASE);
        if (emit) emit(ctx, &u);
        at = vhi;
        if (vlo > v.base && vhi < end) { /* a hole: both sides stay */
            memmove(&sp->views[i + 2], &sp->views[i + 1], (sp->nviews - i - 1) * sizeof *sp->views);
            sp->views[i].size = vlo - v.base;
            sp->views[i + 1] = (etl_kvm_view){ vhi, end - vhi, v.file_key, v.offset + (vhi - v.base), v.ts };
            sp->nviews++;
            i += 2;
        } else if (vlo > v.base) {
            sp->views[i++].size = vlo - v.base;
        } else if (vhi < end) {
            sp->views[i++] = (etl_kvm_view){ vhi, end - vhi, v.file_key, v.offset + (vhi - v.base), v.ts };
        } else {
            memmove(&sp->views[i], &sp->views[i + 1], (sp->nviews - i - 1) * sizeof *sp->views);
            sp->nviews--;
        }
    }
    if (free_gaps) emit_range(emit, ctx, ETL_KVM_FREE, at, hi, ETL_MEM_RELEASE);
    return 0;
}

/* A new view (its range holds none: cut first). */
static int add_view(etl_kvm_space *sp, etl_kvm_view v, etl_kvm_emit emit, void *ctx)
{
    etl_kvm_event e = { ETL_KVM_MAP, v.base, v.size, 0, v.file_key, v.offset };
    size_t i = 0;

    if (reserve(sp, 1) != 0) return -1;
    while (i < sp->nviews && sp->views[i].base < v.base) i++;
    memmove(&sp->views[i + 1], &sp->views[i], (sp->nviews - i) * sizeof *sp->views);
    sp->views[i] = v;
    sp->nviews++;
    if (emit) emit(ctx, &e);
    return 0;
}

int etl_kvm_mmap(etl_kvm_space *sp, uint64_t ret, uint64_t len, uint64_t prot, uint64_t flags, uint64_t file_key,
                 uint64_t off, uint64_t page, etl_kvm_emit emit, void *ctx)
{
    uint64_t size = page_up(len, page);

    if (failed(ret) || !len || size < len || ret % page) return -1;
    /* MAP_FIXED replaces what was there: the views said so (anonymous memory it replaces is
       not known to be there); elsewhere a view still noted was removed unseen. */
    if (cut(sp, ret, ret + size, 0, (flags & (KVM_MAP_FIXED | KVM_MAP_FIXED_NOREPLACE)) ? emit : NULL, ctx) != 0)
        return -1;
    if (flags & KVM_MAP_ANONYMOUS) {
        emit_range(emit, ctx, ETL_KVM_ALLOC, ret, ret + size, prot ? ETL_MEM_RESERVE | ETL_MEM_COMMIT : ETL_MEM_RESERVE);
        return 0;
    }
    return add_view(sp, (etl_kvm_view){ ret, size, file_key, off, sp->now }, emit, ctx);
}

int etl_kvm_munmap(etl_kvm_space *sp, uint64_t addr, uint64_t len, int64_t ret, uint64_t page, etl_kvm_emit emit,
                   void *ctx)
{
    uint64_t lo, hi;

    if (ret != 0 || etl_kunmap_range(addr, len, page, &lo, &hi) != 0) return -1;
    return cut(sp, lo, hi, 1, emit, ctx);
}

int etl_kvm_mremap(etl_kvm_space *sp, uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags, int64_t ret,
                   uint64_t page, etl_kvm_emit emit, void *ctx)
{
    uint64_t old_size = page_up(old_len, page), new_size = page_up(new_len, page), to = (uint64_t)ret;
    const etl_kvm_view *v = NULL;

    if (failed(to) || !new_len || new_size < new_len || old_size < old_len || addr % page) return -1;
    for (size_t i = 0; i < sp->nviews && !v; i++)
        if (sp->views[i].base <= addr && addr < sp->views[i].base + sp->views[i].size) v = &sp->views[i];
    if (v) {
        etl_kvm_view moved = { to, new_size, v->file_key, v->offset + (addr - v->base), sp->now };
        if (old_len && !(flags & KVM_MREMAP_DONTUNMAP) && cut(sp, addr, addr + old_size, 0, emit, ctx) != 0) return -1;
        if (cut(sp, to, to + new_size, 0, NULL, ctx) != 0) return -1;
        return add_view(sp, moved, emit, ctx);
    }
    if (to == addr) {
        if (new_size == old_size) return -1;
        if (new_size > old_size)
            emit_range(emit, ctx, ETL_KVM_ALLOC, addr + old_size, addr + new_size, ETL_MEM_RESERVE | ETL_MEM_COMMIT);
        else
            emit_range(emit, ctx, ETL_KVM_FREE, addr + new_size, addr + old_size, ETL_MEM_RELEASE);
        return 0;
    }
    if (old_len && !(flags & KVM_MREMAP_DONTUNMAP)) emit_range(emit, ctx, ETL_KVM_FREE, addr, addr + old_size, ETL_MEM_RELEASE);
    emit_range(emit, ctx, ETL_KVM_ALLOC, to, to + new_size, ETL_MEM_RESERVE | ETL_MEM_COMMIT);
    return 0;
}

int etl_kvm_brk(etl_kvm_space *sp, uint64_t arg, uint64_t ret, uint64_t page, etl_kvm_emit emit, void *ctx)
{
    uint64_t before = sp->brk;

    sp->brk = ret;
    sp->brk_ts = sp->now;
    if (!arg || !before || ret == before) return -1;
    if (ret > before)
        emit_range(emit, ctx, ETL_KVM_ALLOC, page_up(before, page), page_up(ret, page), ETL_MEM_RESERVE | ETL_MEM_COMMIT);
    else
        emit_range(emit, ctx, ETL_KVM_FREE, page_up(ret, page), page_up(before, page), ETL_MEM_RELEASE);
    return 0;
}

void etl_kvm_space_forget(etl_kvm_space *sp, int64_t ts)
{
    size_t keep = 0;

    for (size_t i = 0; i < sp->nviews; i++)
        if (sp->views[i].ts >= ts) sp->views[keep++] = sp->views[i];
    sp->nviews = keep;
    if (sp->brk_ts < ts) sp->brk = 0;
}

void etl_kvm_space_free(etl_kvm_space *sp)
{
    free(sp->views);
    memset(sp, 0, sizeof *sp);
}

/* ---- the perf samples of the syscalls tracepoints ---- */

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* An entry noted, until its return takes it. */
struct kvm_call {
    uint32_t tid;
    int e;                     /* EV_VM_MMAP, EV_VM_MUNMAP, EV_VM_MREMAP, EV_VM_BRK */
    int64_t ts;
    uint64_t arg[6];
    struct kvm_call *next;
};
/* A process's address space. */
struct kvm_proc {
    uint32_t pid;
    etl_kvm_space sp;
    struct kvm_proc *next;
};
#define KVM_SLOTS 1024u
struct kvm_state {
    pthread_mutex_t lock;
    struct kvm_call *calls[KVM_SLOTS];
    struct kvm_proc *procs[KVM_SLOTS];
    uint64_t *named;           /* the FileKeys a FileIo Name was written for (open addressing, 0 free) */
    size_t nnamed, named_cap;
};

/* A return whose entry no reader noted yet waits for the other readers to be past it (its entry
   is on a processor whose reader is behind: etl_kothers_wait); an entry whose return never came
   is dropped after KVM_STALE_NS. */
#define KVM_STALE_NS 10000000000LL

int etl_kvm_init(struct etl_kcapture *k)
{
    if (!(k->flags & (ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP))) return 0;
    if (!(k->vm = calloc(1, sizeof *k->vm))) return -1;
    pthread_mutex_init(&k->vm->lock, NULL);
    return 0;
}

void etl_kvm_free(struct etl_kcapture *k)
{
    struct kvm_state *v = k->vm;

    if (!v) return;
    for (unsigned i = 0; i < KVM_SLOTS; i++) {
        while (v->calls[i]) {
            struct kvm_call *c = v->calls[i];
            v->calls[i] = c->next;
            free(c);
        }
        while (v->procs[i]) {
            struct kvm_proc *p = v->procs[i];
            v->procs[i] = p->next;
            etl_kvm_space_free(&p->sp);
            free(p);
        }
    }
    free(v->named);
    pthread_mutex_destroy(&v->lock);
    free(v);
    k->vm = NULL;
}

/* Which of the vm events a sample is (sample_type IDENTIFIER, TID, TIME, CPU, RAW: see open_cpu),
   its thread, time and raw data: the event, or -1 for another record. */
static int vm_sample_of(const struct kcpu *c, const uint8_t *r, uint32_t size, uint32_t *tid, int64_t *ts,
                        const uint8_t **raw, uint32_t *raw_len)
{
    uint64_t id;
    int e = -1;

    if (!c->k->vm || size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return -1;
    id = etl_le64(r + 8);
    for (int i = EV_VM_FIRST; i < EV_VM_FIRST + EV_VM_COUNT; i++)
        if (c->fd[i] >= 0 && c->id[i] == id) e = i;
    if (e < 0) return -1;
    *tid = etl_le32(r + 20);
    *ts = (int64_t)etl_le64(r + 24);
    *raw_len = etl_le32(r + 40);
    if (*raw_len > size - 44) return -1;
    *raw = r + 44;
    return e;
}

static int is_entry(int e) { return (e - EV_VM_FIRST) % 2 == 0; }

void etl_kvm_note(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct kvm_state *v = c->k->vm;
    const uint8_t *raw;
    uint32_t tid, raw_len;
    int64_t ts;
    int e = vm_sample_of(c, r, size, &tid, &ts, &raw, &raw_len);
    struct kvm_call *call;

    if (e < 0 || !is_entry(e) || !(call = malloc(sizeof *call))) return;
    call->tid = tid;
    call->e = e;
    call->ts = ts;
    for (int i = 0; i < 6; i++) {
        const struct tp_field *f = &c->k->vm_f[e - EV_VM_FIRST][i];
        call->arg[i] = f->size ? (uint64_t)etl_ktp_get(raw, raw_len, f) : 0;
    }
    pthread_mutex_lock(&v->lock);
    call->next = v->calls[tid % KVM_SLOTS];
    v->calls[tid % KVM_SLOTS] = call;
    pthread_mutex_unlock(&v->lock);
}

/* The latest entry of call e by tid at or before ts (a thread is in one system call at a
   time): 1 and *out, or 0. With take, it leaves the table with the older ones of that thread
   (their returns were lost) and those older than KVM_STALE_NS. Under v->lock. */
static int entry_of(struct kvm_state *v, uint32_t tid, int e, int64_t ts, int take, struct kvm_call *out)
{
    struct kvm_call *best = NULL;

    for (struct kvm_call *c = v->calls[tid % KVM_SLOTS]; c; c = c->next)
        if (c->tid == tid && c->ts <= ts && (!best || c->ts > best->ts)) best = c;
    if (!best || best->e != e) return 0;
    *out = *best;
    for (struct kvm_call **p = &v->calls[tid % KVM_SLOTS]; take && *p;) {
        struct kvm_call *c = *p;
        if ((c->tid == tid && c->ts <= out->ts) || c->ts < ts - KVM_STALE_NS) {
            *p = c->next;
            free(c);
        } else {
            p = &c->next;
        }
    }
    return 1;
}

int etl_kvm_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final)
{
    struct kvm_state *v = c->k->vm;
    struct kvm_call call;
    const uint8_t *raw;
    uint32_t tid, raw_len;
    int64_t ts;
    int e = vm_sample_of(c, r, size, &tid, &ts, &raw, &raw_len), found;

    if (e < 0 || is_entry(e)) return 0;
    /* its entry may be on a processor whose reader is behind, however late this one is */
    for (;;) {
        pthread_mutex_lock(&v->lock);
        found = entry_of(v, tid, e - 1, ts, 0, &call);
        pthread_mutex_unlock(&v->lock);
        if (found || !etl_kothers_wait(c, &c->vm_wait, ts)) return 0;
        if (!final) return 1;
        usleep(1000);
    }
}

static struct kvm_proc *proc_of(struct kvm_state *v, uint32_t pid)
{
    struct kvm_proc *p;

    for (p = v->procs[pid % KVM_SLOTS]; p; p = p->next)
        if (p->pid == pid) return p;
    if (!(p = calloc(1, sizeof *p))) return NULL;
    p->pid = pid;
    p->next = v->procs[pid % KVM_SLOTS];
    v->procs[pid % KVM_SLOTS] = p;
    return p;
}

void etl_kvm_forget(struct etl_kcapture *k, uint32_t pid, int64_t ts)
{
    struct kvm_state *v = k->vm;

    if (!v) return;
    pthread_mutex_lock(&v->lock);
    for (struct kvm_proc **p = &v->procs[pid % KVM_SLOTS]; *p; p = &(*p)->next)
        if ((*p)->pid == pid) {
            struct kvm_proc *gone = *p;
            etl_kvm_space_forget(&gone->sp, ts);
            if (!gone->sp.nviews && !gone->sp.brk) {
                *p = gone->next;
                etl_kvm_space_free(&gone->sp);
                free(gone);
            }
            break;
        }
    pthread_mutex_unlock(&v->lock);
}

/* 1 when key was named already; else notes it (0). Under v->lock. */
static int named(struct kvm_state *v, uint64_t key)
{
    size_t i;

    if (2 * (v->nnamed + 1) > v->named_cap) {
        size_t cap = v->named_cap ? 2 * v->named_cap : 256;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t) return 1; /* no memory: no more names */
        for (size_t j = 0; j < v->named_cap; j++)
            if (v->named[j]) {
                for (i = (size_t)(v->named[j] % cap); t[i]; i = (i + 1) % cap) {}
                t[i] = v->named[j];
            }
        free(v->named);
        v->named = t;
        v->named_cap = cap;
    }
    for (i = (size_t)(key % v->named_cap); v->named[i]; i = (i + 1) % v->named_cap)
        if (v->named[i] == key) return 1;
    v->named[i] = key;
    v->nnamed++;
    return 0;
}

/* The file a process maps at [lo, hi), as /proc says while the mapping (else the descriptor it
   was mapped from) is there: its key (0: not known) and path into name. */
static uint64_t mapped_file(uint32_t pid, uint64_t lo, uint64_t hi, int64_t fd, char *name, size_t size)
{
    char path[96];
    struct stat st;
    ssize_t n;

    name[0] = '\0';
    snprintf(path, sizeof path, "/proc/%u/map_files/%llx-%llx", (unsigned)pid, (unsigned long long)lo,
             (unsigned long long)hi);
    if (stat(path, &st) != 0) {
        if (fd < 0) return 0;
        snprintf(path, sizeof path, "/proc/%u/fd/%lld", (unsigned)pid, (long long)fd);
        if (stat(path, &st) != 0) return 0;
    }
    n = readlink(path, name, size - 1);
    name[n > 0 ? n : 0] = '\0';
    return etl_kfile_key(major(st.st_dev), minor(st.st_dev), st.st_ino);
}

struct vm_emit {
    struct etl_kcapture *k;
    int64_t ts;
    uint32_t pid, tid;
    const char *file;          /* the name of the file a MapFile maps ("": not known) */
};

/* Under k->vm->lock. */
static void vm_write(void *ctx, const etl_kvm_event *e)
{
    struct vm_emit *w = ctx;
    struct etl_kcapture *k = w->k;
    uint8_t buf[64 + 8192];
    size_t n;

    if (e->kind == ETL_KVM_ALLOC || e->kind == ETL_KVM_FREE) {
        if (!(k->flags & ETL_KERNEL_VIRTUAL_ALLOC)) return;
        n = etl_kpayload_virtual_alloc(buf, sizeof buf, e->base, e->size, w->pid, e->flags);
        etl_kwrite_ev(k, w->ts, e->kind == ETL_KVM_ALLOC ? ETL_HOOK_VIRTUAL_ALLOC : ETL_HOOK_VIRTUAL_FREE, w->pid, w->tid,
                      buf, n);
        return;
    }
    if (!(k->flags & ETL_KERNEL_VAMAP)) return;
    if (e->kind == ETL_KVM_MAP && e->file_key && w->file && *w->file && !named(k->vm, e->file_key)) {
        n = etl_kpayload_file_name(buf, sizeof buf, e->file_key, w->file);
        if (n <= sizeof buf) etl_kwrite_ev(k, w->ts, ETL_HOOK_FILEIO_NAME, w->pid, w->tid, buf, n);
    }
    etl_kmap_file_desc m = { e->base, e->file_key, 0, e->size, e->offset, w->pid };
    n = etl_kpayload_map_file(buf, sizeof buf, &m);
    etl_kwrite_ev(k, w->ts, e->kind == ETL_KVM_MAP ? ETL_HOOK_MAP_FILE : ETL_HOOK_UNMAP_FILE, w->pid, w->tid, buf, n);
}

void etl_kvm_record(struct kcpu *c, int e, int64_t sample_ts, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                    uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    struct kvm_state *v = k->vm;
    struct vm_emit w = { k, ts, pid, tid, "" };
    struct kvm_call call;
    struct kvm_proc *p;
    int64_t ret;
    char file[4096];
    int found;

    if (!v || is_entry(e)) return; /* an entry: noted as it was read */
    ret = etl_ktp_get(raw, raw_len, &k->vm_f[e - EV_VM_FIRST][0]);
    /* A file mapping's name and key, read before the lock (it is /proc's): the mapping is
       there while the process has not removed it since. */
    pthread_mutex_lock(&v->lock);
    /* (the return's own time: the time it is written at may be later than the thread's next entry) */
    found = entry_of(v, tid, e - 1, sample_ts, 1, &call);
    pthread_mutex_unlock(&v->lock);
    if (!found) return; /* entered before the session, or its entry was lost */
    uint64_t key = 0, *a = call.arg;
    if (e == EV_VM_MMAP_RET && (k->flags & ETL_KERNEL_VAMAP) && !(a[3] & KVM_MAP_ANONYMOUS) && (uint64_t)ret < (uint64_t)-4095) {
        key = mapped_file(pid, (uint64_t)ret, (uint64_t)ret + page_up(a[1], c->page), (int64_t)a[4], file, sizeof file);
        w.file = file;
    }
    pthread_mutex_lock(&v->lock);
    if ((p = proc_of(v, pid))) {
        p->sp.now = sample_ts;
        switch (e) {
        case EV_VM_MMAP_RET: etl_kvm_mmap(&p->sp, (uint64_t)ret, a[1], a[2], a[3], key, a[5], c->page, vm_write, &w); break;
        case EV_VM_MUNMAP_RET: etl_kvm_munmap(&p->sp, a[0], a[1], ret, c->page, vm_write, &w); break;
        case EV_VM_MREMAP_RET: etl_kvm_mremap(&p->sp, a[0], a[1], a[2], a[3], ret, c->page, vm_write, &w); break;
        default: etl_kvm_brk(&p->sp, a[0], (uint64_t)ret, c->page, vm_write, &w); break;
        }
    }
    pthread_mutex_unlock(&v->lock);
}

#endif
