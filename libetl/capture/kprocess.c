/* SPDX-License-Identifier: MIT */
/* Kernel capture's processes and threads: what /proc and perf's records say of each process (name, command line, images, what decides its exit status), written as Process, Thread and Image events, and the rundowns. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

struct kimage {
    int64_t ts;                /* of its event */
    uint64_t base, size;
    char *file;
    uint64_t code_lo, code_hi; /* what is left of its executable mapping */
    etl_kbuild_id bid;         /* its file's build-id (a fork's copies have it too) */
};

/* Mappings a process lost at ts (a munmap; all of them at an exec), kept a while for the
   images a reader of another processor brings after it. */
struct kremoval {
    int64_t ts;
    uint64_t lo, hi;
    uint32_t tid;
};

/* What a process was from ts on (a fork's copy, an exec's program, the rundown's). */
struct pstate {
    int64_t ts;
    uint32_t ppid, uid;
    char name[16];
    char *cmdline;
};

/* How many of its earlier states a process keeps: readers of other processors may bring a
   fork after the exec that followed it in the parent, and the child is a copy of what the
   parent ran at its fork. */
#define PSTATES 4

/* What the capture knows of a process between its events: perf's records name only pids,
   and a process may be gone from /proc by the time its records are read. */
struct pentry {
    int64_t ts;                /* of the record that said it: readers of other processors may
                                  bring older news later (a fork after the exec that followed it) */
    uint32_t pid, ppid, uid;
    char name[16];
    char *cmdline;
    struct pstate old[PSTATES]; /* what it was before ts, oldest first */
    unsigned nold;
    /* Its images (Load and DCStart events), for the children it forks: a fork's child has
       its parent's mappings, which no MMAP2 record reports. */
    struct kimage *images;
    unsigned nimages, cap;
    struct pentry *next;
    struct kremoval *removals; /* in time order */
    unsigned nremovals, removals_cap;
    etl_kexit exit;            /* what decides its ExitStatus */
};

/* ---- what /proc says of a process ---- */

struct procinfo {
    uint32_t pid, ppid, uid;
    char name[64];
    char cmdline[4096];
};

/* Fills pi from /proc/PID: 0, or -1 when the process is gone. name_hint (or NULL) is the
   name to keep when /proc cannot tell. */
static int proc_info(uint32_t pid, struct procinfo *pi, const char *name_hint)
{
    memset(pi, 0, sizeof *pi);
    pi->pid = pid;
    if (name_hint) snprintf(pi->name, sizeof pi->name, "%s", name_hint);
    if (etl_kproc_status(pid, pi->name, sizeof pi->name, &pi->ppid, &pi->uid) != 0) return -1;
    etl_kproc_cmdline(pid, pi->cmdline, sizeof pi->cmdline);
    return 0;
}

int etl_kthread_prio(uint32_t pid, uint32_t tid)
{
    char path[96], buf[1024], *p;
    int field = 2;

    snprintf(path, sizeof path, "/proc/%u/task/%u/stat", pid, tid);
    if (etl_kread_small(path, buf, sizeof buf) <= 0 || !(p = strrchr(buf, ')'))) return 120;
    /* Fields after the name: 3 state ... 18 priority. */
    for (p++; *p && field < 18; p++)
        if (*p == ' ') field++;
    return field == 18 ? (int)strtol(p, NULL, 10) + 100 : 120;
}

static void emit_process(struct etl_kcapture *k, int64_t ts, uint16_t hook, const struct procinfo *pi,
                         int32_t exit_status, uint32_t hdr_pid, uint32_t hdr_tid)
{
    etl_kproc_desc d = { pi->pid, pi->ppid, pi->uid, exit_status, pi->name, pi->cmdline };
    uint8_t buf[16384];
    size_t n = etl_kpayload_process(buf, sizeof buf, &d);

    if (n > sizeof buf) {
        d.command_line = ""; /* a command line beyond what a record holds is left out */
        n = etl_kpayload_process(buf, sizeof buf, &d);
    }
    etl_kwrite_ev(k, ts, hook, hdr_pid, hdr_tid, buf, n);
}

static void emit_thread(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid,
                        uint32_t hdr_pid, uint32_t hdr_tid)
{
    uint8_t buf[128];
    size_t n = etl_kpayload_thread(buf, sizeof buf, pid, tid, (uint8_t)(tid ? etl_kpriority(etl_kthread_prio(pid, tid)) : 0));

    etl_kwrite_ev(k, ts, hook, hdr_pid, hdr_tid, buf, n);
}

/* ---- thread names (Thread/SetName): each thread's comm ---- */

struct kname {
    uint32_t tid;
    char comm[16];
    struct kname *next;
};

static unsigned name_slot(uint32_t tid) { return (tid * 2654435761u >> 20) % NTAB_SIZE; }

/* The comm of thread tid as the capture last saw it into out (16 bytes): 1, or 0 when unknown. */
static int name_get(struct etl_kcapture *k, uint32_t tid, char *out)
{
    int found = 0;

    pthread_mutex_lock(&k->nlock);
    for (struct kname *n = k->ntab[name_slot(tid)]; n; n = n->next)
        if (n->tid == tid) {
            memcpy(out, n->comm, 16);
            found = 1;
            break;
        }
    pthread_mutex_unlock(&k->nlock);
    return found;
}

/* Thread tid is now called comm (NULL: it is gone); kept with the thread flag only. */
static void name_set(struct etl_kcapture *k, uint32_t tid, const char *comm)
{
    struct kname **p, *n;

    if (!(k->flags & ETL_KERNEL_THREAD)) return;
    pthread_mutex_lock(&k->nlock);
    for (p = &k->ntab[name_slot(tid)]; *p && (*p)->tid != tid; p = &(*p)->next) {}
    if (!comm) {
        if ((n = *p)) {
            *p = n->next;
            free(n);
        }
    } else if ((n = *p) || (n = calloc(1, sizeof *n))) {
        if (!*p) {
            n->tid = tid;
            *p = n;
        }
        snprintf(n->comm, sizeof n->comm, "%s", comm);
    }
    pthread_mutex_unlock(&k->nlock);
}

void etl_knames_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < NTAB_SIZE; i++)
        while (k->ntab[i]) {
            struct kname *n = k->ntab[i];
            k->ntab[i] = n->next;
            free(n);
        }
}

/* A thread's comm from /proc: 0, or -1 when it is gone. */
static int proc_comm(uint32_t pid, uint32_t tid, char *out, size_t size)
{
    char path[96];
    ssize_t n;

    snprintf(path, sizeof path, "/proc/%u/task/%u/comm", pid, tid);
    if ((n = etl_kread_small(path, out, size)) <= 0) return -1;
    if (out[n - 1] == '\n') out[n - 1] = '\0';
    return 0;
}

/* Thread/SetName of thread tid of process pid, called name now (with the thread flag). */
static void emit_thread_name(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, const char *name)
{
    uint8_t buf[128];
    size_t n;

    if (!(k->flags & ETL_KERNEL_THREAD)) return;
    n = etl_kpayload_thread_name(buf, sizeof buf, pid, tid, name);
    if (n <= sizeof buf) etl_kwrite_ev(k, ts, ETL_HOOK_THREAD_SET_NAME, pid, tid, buf, n);
}

static void pcache_add_image(struct etl_kcapture *k, uint32_t pid, int64_t ts, uint64_t base, uint64_t size,
                             uint64_t code, const char *file, const etl_kbuild_id *bid);
/* The reader this thread is (NULL: the controlling thread, writing the rundown). */
_Thread_local struct kcpu *etl_kthis_reader;

/* An Image Unload at ts, later than the record this thread handles: kept for its time (see
   struct kcpu's def), or written now where no reader runs. */
void etl_kdefer_unload(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t base,
                       uint64_t size, const char *file)
{
    struct kcpu *c = etl_kthis_reader;
    size_t i;

    if (c && c->ndef == c->defcap) {
        size_t cap = c->defcap ? 2 * c->defcap : 16;
        struct kdeferred *n = realloc(c->def, cap * sizeof *n);
        if (n) {
            c->def = n;
            c->defcap = cap;
        }
    }
    if (!c || c->ndef == c->defcap) { /* no reader, or no memory: now, out of time order */
        etl_kemit_image(k, ts, ETL_HOOK_IMAGE_UNLOAD, pid, tid, base, size, 0, file, NULL);
        return;
    }
    for (i = c->ndef; i > 0 && c->def[i - 1].ts > ts; i--) c->def[i] = c->def[i - 1];
    c->def[i] = (struct kdeferred){ ts, pid, tid, base, size, strdup(file) };
    c->ndef++;
}

/* Writes the deferred unloads of c due at or before ts (in time order). */
void etl_kflush_deferred(struct kcpu *c, int64_t ts)
{
    size_t n = 0;

    while (n < c->ndef && c->def[n].ts <= ts) {
        struct kdeferred *d = &c->def[n++];
        etl_kemit_image(c->k, d->ts, ETL_HOOK_IMAGE_UNLOAD, d->pid, d->tid, d->base, d->size, 0, d->file ? d->file : "",
                        NULL);
        if (d->ts > c->last_ts) c->last_ts = d->ts;
        free(d->file);
    }
    if (n && n < c->ndef) memmove(c->def, c->def + n, (c->ndef - n) * sizeof *c->def);
    c->ndef -= n;
}

void etl_kemit_image(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, uint64_t start,
                     uint64_t len, uint64_t pgoff, const char *file, const etl_kbuild_id *bid)
{
    uint8_t buf[8192];
    /* The image starts where the file's offset 0 is mapped, so that an address's offset from
       ImageBase is its offset in the file (what symbol lookups want). */
    uint64_t base = pgoff <= start ? start - pgoff : start;
    size_t n = etl_kpayload_image(buf, sizeof buf, base, len + (start - base), pid, file);
    static const etl_kbuild_id none = { 0, { 0 } };

    if (n <= sizeof buf) etl_kwrite_ev(k, ts, hook, pid, tid, buf, n);
    if (hook != ETL_HOOK_PROCESS_LOAD_IMAGE && hook != ETL_HOOK_IMAGE_DCSTART) return;
    /* Its BuildId right after it, same time and processor: FileOffset is the file's offset
       mapped at ImageBase (0 but where pgoff is above the mapping's address). */
    if (n <= sizeof buf)
        etl_kwrite_build_id(k, ts, pid, tid, base, len + (start - base), pgoff - (start - base), bid ? bid : &none,
                            file);
    pcache_add_image(k, pid, ts, base, len + (start - base), start, file, bid ? bid : &none);
}

/* ---- the processes known ---- */

static void pentry_free(struct pentry *e)
{
    for (unsigned i = 0; i < e->nold; i++) free(e->old[i].cmdline);
    for (unsigned i = 0; i < e->nimages; i++) free(e->images[i].file);
    free(e->images);
    free(e->removals);
    free(e->cmdline);
    free(e);
}

static struct pentry **pfind(struct etl_kcapture *k, uint32_t pid)
{
    struct pentry **p = &k->ptab[pid % PTAB_SIZE];

    while (*p && (*p)->pid != pid) p = &(*p)->next;
    return p;
}

/* Keeps s among e's earlier states, in time order (the oldest goes when they are full, or s
   when it is older than all those kept); s's cmdline is handed over (plock held). */
static void pstate_keep(struct pentry *e, struct pstate s)
{
    unsigned i;

    if (e->nold == PSTATES) {
        if (s.ts < e->old[0].ts) {
            free(s.cmdline);
            return;
        }
        free(e->old[0].cmdline);
        memmove(e->old, e->old + 1, --e->nold * sizeof *e->old);
    }
    for (i = e->nold; i > 0 && e->old[i - 1].ts > s.ts; i--) e->old[i] = e->old[i - 1];
    e->old[i] = s;
    e->nold++;
}

/* Records pi as what is known of its process from ts on: what was known before ts is kept as
   an earlier state, and news older than what is known (a fork brought after its child's exec)
   too. */
static void pcache_put(struct etl_kcapture *k, int64_t ts, const struct procinfo *pi)
{
    struct pentry **p, *e;
    struct pstate now = { ts, pi->ppid, pi->uid, "", NULL };

    snprintf(now.name, sizeof now.name, "%.15s", pi->name);
    pthread_mutex_lock(&k->plock);
    p = pfind(k, pi->pid);
    e = *p ? *p : calloc(1, sizeof *e);
    if (e) {
        now.cmdline = strdup(pi->cmdline); /* (NULL without memory: "") */
        if (!*p) {
            etl_kexit_init(&e->exit);
            e->pid = pi->pid;
            e->ts = INT64_MIN;
            *p = e;
        }
        if (e->ts > ts) {
            pstate_keep(e, now); /* older news */
        } else {
            if (e->ts != INT64_MIN) { /* (a placeholder, pcache_exec_images, was nothing) */
                struct pstate was = { e->ts, e->ppid, e->uid, "", e->cmdline };
                memcpy(was.name, e->name, sizeof was.name);
                pstate_keep(e, was);
            } else {
                free(e->cmdline);
                etl_kexit_forget(&e->exit, ts); /* (a placeholder's notes from before: not its) */
            }
            e->ts = ts;
            e->ppid = now.ppid;
            e->uid = now.uid;
            memcpy(e->name, now.name, sizeof e->name);
            e->cmdline = now.cmdline;
        }
    }
    pthread_mutex_unlock(&k->plock);
}

/* What is known of pid into pi, as it was at ts (INT64_MAX: now): its state from the latest
   time at or before ts, else its earliest known. 0, or -1 when nothing is (pi then holds only
   the pid). With drop, it is forgotten. */
static int pcache_get(struct etl_kcapture *k, uint32_t pid, struct procinfo *pi, int drop, int64_t ts)
{
    struct pentry **p, *e;

    memset(pi, 0, sizeof *pi);
    pi->pid = pid;
    pi->uid = UINT32_MAX;
    pthread_mutex_lock(&k->plock);
    p = pfind(k, pid);
    e = *p;
    if (e && e->ts == INT64_MIN) { /* a placeholder (pcache_exec_images): nothing known */
        if (drop) {
            *p = e->next;
            pentry_free(e);
        }
        e = NULL;
    }
    if (e) {
        struct pstate now = { e->ts, e->ppid, e->uid, "", e->cmdline };
        const struct pstate *st = &now;
        if (e->ts > ts && e->nold) { /* an earlier state: the latest at or before ts, else the earliest */
            st = &e->old[0];
            for (unsigned i = 1; i < e->nold && e->old[i].ts <= ts; i++) st = &e->old[i];
        }
        memcpy(now.name, e->name, sizeof now.name);
        pi->ppid = st->ppid;
        pi->uid = st->uid;
        snprintf(pi->name, sizeof pi->name, "%s", st->name);
        snprintf(pi->cmdline, sizeof pi->cmdline, "%s", st->cmdline ? st->cmdline : "");
        if (drop) {
            *p = e->next;
            pentry_free(e);
        }
    }
    pthread_mutex_unlock(&k->plock);
    return e ? 0 : -1;
}

void etl_kpcache_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < PTAB_SIZE; i++)
        while (k->ptab[i]) {
            struct pentry *e = k->ptab[i];
            k->ptab[i] = e->next;
            pentry_free(e);
        }
}

/* How long, and how many, removals a process keeps for images brought late (a reader lags
   the others by a few polls at most). */
#define REMOVAL_KEEP_NS 250000000
#define REMOVAL_MAX 1024u

/* Notes that e lost [lo, hi) at ts (plock held). */
static void pcache_removed(struct pentry *e, int64_t ts, uint64_t lo, uint64_t hi, uint32_t tid)
{
    unsigned i;

    if (e->nremovals == e->removals_cap) {
        /* Full: forget the old ones first; grow only when all are recent. */
        int64_t newest = e->nremovals ? e->removals[e->nremovals - 1].ts : ts;
        unsigned old = 0;
        while (old < e->nremovals && (e->removals[old].ts < newest - REMOVAL_KEEP_NS ||
                                      (e->nremovals == REMOVAL_MAX && old < REMOVAL_MAX / 4)))
            old++;
        if (old) memmove(e->removals, e->removals + old, (e->nremovals - old) * sizeof *e->removals);
        e->nremovals -= old;
    }
    if (e->nremovals == e->removals_cap) {
        unsigned cap = e->removals_cap ? 2 * e->removals_cap : 8;
        struct kremoval *n = realloc(e->removals, cap * sizeof *n);
        if (!n) return;
        e->removals = n;
        e->removals_cap = cap;
    }
    for (i = e->nremovals; i > 0 && e->removals[i - 1].ts > ts; i--) e->removals[i] = e->removals[i - 1];
    e->removals[i] = (struct kremoval){ ts, lo, hi, tid };
    e->nremovals++;
}

/* Applies to the code [*code_lo, *code_hi) of an image of e known since ts what e lost after
   ts: 1 and the removal that took the last of it into *gone, or 0 (plock held). */
static int removed_since(const struct pentry *e, int64_t ts, uint64_t *code_lo, uint64_t *code_hi,
                         struct kremoval *gone)
{
    for (unsigned i = 0; i < e->nremovals; i++) {
        if (e->removals[i].ts <= ts) continue;
        if (etl_kunmap_image(e->removals[i].lo, e->removals[i].hi, code_lo, code_hi) == ETL_KUNMAP_GONE) {
            *gone = e->removals[i];
            return 1;
        }
    }
    return 0;
}

static int by_base(const void *a, const void *b)
{
    const struct kimage *x = a, *y = b;

    return x->base < y->base ? -1 : x->base > y->base;
}

static void free_images(struct kimage *images, unsigned n);

/* Image Unload of each image (in the order of their bases, as Windows lists them), then
   frees them. */
static void unload_images(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, struct kimage *images,
                          unsigned n)
{
    if (n > 1) qsort(images, n, sizeof *images, by_base);
    for (unsigned i = 0; i < n; i++)
        etl_kemit_image(k, ts, ETL_HOOK_IMAGE_UNLOAD, pid, tid, images[i].base, images[i].size, 0, images[i].file, NULL);
    free_images(images, n);
}

/* Thread tid of pid unmapped [lo, hi) at ts: the images whose code that took the last of
   unload; the others keep what is left (etl_kunmap_image). */
static void pcache_unmap(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t lo, uint64_t hi)
{
    struct pentry *e;
    struct kimage *gone = NULL;
    unsigned ngone = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (e && ts >= e->ts) { /* (an older program's images unloaded at its exec) */
        unsigned o = 0;
        for (unsigned i = 0; i < e->nimages; i++) {
            struct kimage *im = &e->images[i];
            if (im->ts > ts || etl_kunmap_image(lo, hi, &im->code_lo, &im->code_hi) != ETL_KUNMAP_GONE) {
                e->images[o++] = *im;
                continue;
            }
            if (!gone && !(gone = malloc(e->nimages * sizeof *gone))) {
                e->images[o++] = *im; /* no memory: it stays, and unloads at the exit */
                continue;
            }
            gone[ngone++] = *im;
        }
        e->nimages = o;
        pcache_removed(e, ts, lo, hi, tid);
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, gone, ngone);
}

/* Adds an image of pid, known since ts (a process not known has none kept, nor does one whose
   exec, later than ts, a reader of another processor brought first). */
static void pcache_add_image(struct etl_kcapture *k, uint32_t pid, int64_t ts, uint64_t base, uint64_t size,
                             uint64_t code, const char *file, const etl_kbuild_id *bid)
{
    struct pentry *e;
    struct kremoval gone = { 0, 0, 0, 0 };
    uint64_t code_lo = code, code_hi = base + size;
    int unloaded = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    /* Unmapped already, by what a reader of another processor brought first? */
    if (e) unloaded = removed_since(e, ts, &code_lo, &code_hi, &gone);
    if (e && (unloaded || ts < e->ts)) e = NULL;
    /* One image per address: one loaded where another is (the fork's copy of a DCStart the
       rundown also saw, a mapping over another) takes its place, as in the image map. */
    for (unsigned i = 0; e && i < e->nimages; i++)
        if (e->images[i].base == base) {
            if (e->images[i].ts > ts) e = NULL; /* brought late: the newer one stays */
            else {
                free(e->images[i].file);
                e->images[i] = e->images[--e->nimages];
            }
            break;
        }
    if (e && e->nimages == e->cap) {
        unsigned cap = e->cap ? 2 * e->cap : 16;
        struct kimage *n = realloc(e->images, cap * sizeof *n);
        if (n) {
            e->images = n;
            e->cap = cap;
        }
    }
    if (e && e->nimages < e->cap && (e->images[e->nimages].file = strdup(file))) {
        e->images[e->nimages].ts = ts;
        e->images[e->nimages].base = base;
        e->images[e->nimages].size = size;
        e->images[e->nimages].code_lo = code_lo;
        e->images[e->nimages].code_hi = code_hi;
        e->images[e->nimages].bid = *bid;
        e->nimages++;
    }
    pthread_mutex_unlock(&k->plock);
    if (unloaded) etl_kdefer_unload(k, gone.ts, pid, gone.tid, base, size, file);
}

/* An exec at ts by thread tid: the images pid had before it are gone (those since are the new
   program's), and unload; what decides the exit status starts anew. The exec is noted for
   images brought later. */
static void pcache_exec_images(struct etl_kcapture *k, uint32_t pid, uint32_t tid, int64_t ts)
{
    struct pentry *e;
    struct kimage *gone = NULL;
    unsigned ngone = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (!e && (e = calloc(1, sizeof *e))) {
        /* Its fork is not read yet: a placeholder (ts INT64_MIN, which pcache_get does not
           report) holds the exec for the images the fork brings. */
        e->pid = pid;
        e->ts = INT64_MIN;
        etl_kexit_init(&e->exit);
        *pfind(k, pid) = e;
    }
    if (e) {
        unsigned o = 0;
        pcache_removed(e, ts, 0, UINT64_MAX, tid);
        if (e->nimages) gone = malloc(e->nimages * sizeof *gone);
        for (unsigned i = 0; i < e->nimages; i++) {
            if (e->images[i].ts >= ts) e->images[o++] = e->images[i];
            else if (gone) gone[ngone++] = e->images[i];
            else free(e->images[i].file);
        }
        e->nimages = o;
        /* (What the new program was sent may have been read first, on another processor.) */
        if (e->ts <= ts) etl_kexit_forget(&e->exit, ts);
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, gone, ngone);
}

/* The images ppid had at ts, copied (to free with free_images); their number. */
static unsigned pcache_images_at(struct etl_kcapture *k, uint32_t ppid, int64_t ts, struct kimage **out)
{
    struct pentry *e;
    unsigned n = 0;

    *out = NULL;
    pthread_mutex_lock(&k->plock);
    e = *pfind(k, ppid);
    if (e && e->nimages && (*out = calloc(e->nimages, sizeof **out)))
        for (unsigned i = 0; i < e->nimages; i++) {
            if (e->images[i].ts > ts) continue; /* mapped after the fork */
            (*out)[n] = e->images[i];
            if (((*out)[n].file = strdup(e->images[i].file))) n++;
        }
    pthread_mutex_unlock(&k->plock);
    return n;
}

static void free_images(struct kimage *images, unsigned n)
{
    for (unsigned i = 0; i < n; i++) free(images[i].file);
    free(images);
}

/* ---- rundown ---- */

/* The executable mappings of pid, as Image events. */
static void rundown_images(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid)
{
    char path[64], line[4352];
    FILE *f;

    snprintf(path, sizeof path, "/proc/%u/maps", pid);
    f = fopen(path, "re");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long start, end, off, ino;
        unsigned maj, min;
        char perms[8];
        int pos = 0;
        etl_kbuild_id bid = { 0, { 0 } };
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &ino, &pos) < 7 ||
            !pos)
            continue;
        if (perms[2] != 'x') continue;
        line[strcspn(line, "\n")] = '\0';
        const char *file = line + pos;
        if (!*file) continue; /* anonymous code has no image */
        if (hook == ETL_HOOK_IMAGE_DCSTART)
            etl_kbuild_id_of_mapping(k->bids, pid, start, end, makedev(maj, min), ino, file, &bid);
        etl_kemit_image(k, ts, hook, pid, 0, start, end - start, off, file, &bid);
    }
    fclose(f);
}

/* The kernel's own image, in process 0 as Windows puts ntoskrnl.exe: [kernel.kallsyms] from
   _stext to _etext (when /proc/kallsyms shows addresses: root). At the start, with its
   build-id, then the KernelModule events of the kernel ("vmlinux") and its modules, and
   /proc/kallsyms as KernelSymbols. */
static void rundown_kernel_image(struct etl_kcapture *k, int64_t ts, uint16_t hook)
{
    etl_kbuild_id bid = { 0, { 0 } };

    FILE *f = fopen("/proc/kallsyms", "re");
    char line[512];
    unsigned long long stext = 0, etext = 0;

    if (!f) return;
    while ((!stext || !etext) && fgets(line, sizeof line, f)) {
        unsigned long long a;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3) continue;
        if (strcmp(name, "_stext") == 0) stext = a;
        else if (strcmp(name, "_etext") == 0) etext = a;
    }
    fclose(f);
    if (hook == ETL_HOOK_IMAGE_DCSTART) etl_kkernel_build_id(&bid);
    if (stext && etext > stext) etl_kemit_image(k, ts, hook, 0, 0, stext, etext - stext, 0, "[kernel.kallsyms]", &bid);
    if (hook != ETL_HOOK_IMAGE_DCSTART) return;
    if (stext && etext > stext) etl_kwrite_kernel_module(k, ts, stext, etext - stext, &bid, "vmlinux");
    etl_kwrite_modules(k, ts);
    if (etl_kwrite_kallsyms(k, ts, etl_kallsyms_chunk_max(k)) == 0)
        etl_knote(k, "kernel symbols not recorded: /proc/kallsyms shows no addresses (kernel.kptr_restrict, or no "
                     "CAP_SYSLOG)");
}

/* DCStart (start) or DCEnd (end) of every process, thread and executable mapping /proc shows. */
void etl_krundown(struct etl_kcapture *k, int64_t ts, int end)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    /* Process 0, the idle task ("swapper", which /proc does not show), and its thread 0, as
       Windows' rundown has Idle: samples and switches of tid 0 then have a process. */
    if (k->flags & ETL_KERNEL_PROCESS) {
        struct procinfo idle = { .pid = 0, .ppid = 0, .uid = 0, .name = "swapper", .cmdline = "" };
        emit_process(k, ts, end ? ETL_HOOK_PROCESS_DCEND : ETL_HOOK_PROCESS_DCSTART, &idle, ETL_KSTILL_ACTIVE, 0, 0);
    }
    if (k->flags & ETL_KERNEL_THREAD) emit_thread(k, ts, end ? ETL_HOOK_THREAD_DCEND : ETL_HOOK_THREAD_DCSTART, 0, 0, 0, 0);
    if (k->flags & ETL_KERNEL_IMAGE_LOAD) rundown_kernel_image(k, ts, end ? ETL_HOOK_IMAGE_DCEND : ETL_HOOK_IMAGE_DCSTART);
    if (!d) return;
    while ((e = readdir(d))) {
        struct procinfo pi;
        uint32_t pid;
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (proc_info(pid, &pi, NULL) != 0) continue;
        if (!end) pcache_put(k, ts, &pi);
        if (k->flags & ETL_KERNEL_PROCESS)
            emit_process(k, ts, end ? ETL_HOOK_PROCESS_DCEND : ETL_HOOK_PROCESS_DCSTART, &pi, ETL_KSTILL_ACTIVE, 0, 0);
        if (k->flags & ETL_KERNEL_THREAD) {
            char path[64];
            DIR *t;
            struct dirent *te;
            snprintf(path, sizeof path, "/proc/%u/task", pid);
            if ((t = opendir(path))) {
                while ((te = readdir(t))) {
                    uint32_t tid;
                    char comm[64];
                    if (!isdigit((unsigned char)te->d_name[0])) continue;
                    tid = (uint32_t)strtoul(te->d_name, NULL, 10);
                    emit_thread(k, ts, end ? ETL_HOOK_THREAD_DCEND : ETL_HOOK_THREAD_DCSTART, pid, tid, 0, 0);
                    /* the start's rundown names each thread, as Windows 10's does */
                    if (!end && proc_comm(pid, tid, comm, sizeof comm) == 0) {
                        name_set(k, tid, comm);
                        emit_thread_name(k, ts, pid, tid, comm);
                    }
                }
                closedir(t);
            }
        }
        if (k->flags & ETL_KERNEL_IMAGE_LOAD)
            rundown_images(k, ts, end ? ETL_HOOK_IMAGE_DCEND : ETL_HOOK_IMAGE_DCSTART, pid);
    }
    closedir(d);
}

/* ---- records ---- */

/* The sample_id trailer of a non-sample record (TID, TIME, CPU, IDENTIFIER: 32 bytes). */
struct trailer {
    uint32_t pid, tid;
    int64_t time;
};

static int trailer(const uint8_t *r, uint32_t size, uint32_t body, struct trailer *t)
{
    if (size < body + 32) return -1;
    t->pid = etl_le32(r + size - 32);
    t->tid = etl_le32(r + size - 28);
    t->time = (int64_t)etl_le64(r + size - 24);
    return 0;
}

/* The exit of pid at ts (its leader's, tid): Image Unload of the images it still has (as
   Windows writes them at a process's end, before its Process End); its ExitStatus. */
static int32_t process_exit(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid)
{
    struct etl_kcapture *k = c->k;
    struct pentry *e;
    struct kimage *images = NULL;
    unsigned n = 0;
    int32_t status = 0;

    /* (The other readers have handled what came before: etl_ktask_wait.) */
    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (e && e->ts <= ts) {
        etl_kexit_status(&e->exit, ts, &status);
        images = e->images; /* the entry is dropped next: its images are handed over */
        n = e->nimages;
        e->images = NULL;
        e->nimages = e->cap = 0;
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, images, n);
    return status;
}

/* What the exit and signal tracepoints say of a process, noted for its exit. */
enum { XN_GROUP, XN_LEADER, XN_SENT, XN_DELIVERED, XN_CAUGHT };

static void pcache_exit_note(struct etl_kcapture *k, uint32_t pid, int64_t ts, int what, int64_t value)
{
    struct pentry *e;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (!e && (e = calloc(1, sizeof *e))) {
        /* Its fork is not read yet (it waits for the other readers, and this one went on): a
           placeholder, as pcache_exec_images makes, keeps the note for the fork to find. */
        e->pid = pid;
        e->ts = INT64_MIN;
        etl_kexit_init(&e->exit);
        *pfind(k, pid) = e;
    }
    if (e && ts >= e->ts) { /* (not of the program before an exec) */
        switch (what) {
        case XN_GROUP: etl_kexit_group(&e->exit, ts, value); break;
        case XN_LEADER: etl_kexit_leader(&e->exit, ts, value); break;
        case XN_SENT: etl_kexit_sent(&e->exit, ts, (int)value); break;
        default: etl_kexit_delivered(&e->exit, ts, (int)value, what == XN_DELIVERED); break;
        }
    }
    pthread_mutex_unlock(&k->plock);
}

/* A sample of the unload and exit tracepoints (etl_kexit_unmap_tps): 1, or 0 for another event. */
int etl_kexit_unmap_sample(struct kcpu *c, int e, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                           uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    const struct tp_field *f = k->tpf[e];
    uint64_t lo, hi;

    switch (e) {
    case EV_MUNMAP:
        if (etl_kunmap_range((uint64_t)etl_ktp_get(raw, raw_len, &f[0]), (uint64_t)etl_ktp_get(raw, raw_len, &f[1]), c->page,
                             &lo, &hi) == 0)
            pcache_unmap(k, ts, pid, tid, lo, hi);
        return 1;
    case EV_MREMAP:
        if (etl_kmremap_range((uint64_t)etl_ktp_get(raw, raw_len, &f[0]), (uint64_t)etl_ktp_get(raw, raw_len, &f[1]),
                              (uint64_t)etl_ktp_get(raw, raw_len, &f[2]), (uint64_t)etl_ktp_get(raw, raw_len, &f[3]), c->page,
                              &lo, &hi) == 0)
            pcache_unmap(k, ts, pid, tid, lo, hi);
        return 1;
    case EV_EXIT_GROUP: pcache_exit_note(k, pid, ts, XN_GROUP, etl_ktp_get(raw, raw_len, &f[0])); return 1;
    case EV_EXIT:
        /* A thread's exit: the process's status when it is the leader's (what waitpid reports
           when no group exit came first). */
        if (pid == tid) pcache_exit_note(k, pid, ts, XN_LEADER, etl_ktp_get(raw, raw_len, &f[0]));
        return 1;
    case EV_SIG_DELIVER:
        pcache_exit_note(k, pid, ts, etl_ktp_get(raw, raw_len, &f[1]) == 0 ? XN_DELIVERED : XN_CAUGHT,
                         etl_ktp_get(raw, raw_len, &f[0]));
        return 1;
    case EV_SIG_GENERATE: {
        /* Queued (result 0, TRACE_SIGNAL_DELIVERED), to: the sending thread itself (raise,
           the kernel's own), a process (group: the pid is its leader's), or a leader by tid. */
        uint32_t target = (uint32_t)etl_ktp_get(raw, raw_len, &f[1]);
        if (etl_ktp_get(raw, raw_len, &f[3]) != 0) return 1;
        pcache_exit_note(k, target == tid ? pid : target, ts, XN_SENT, etl_ktp_get(raw, raw_len, &f[0]));
        return 1;
    }
    default: return 0;
    }
}

/* Process Start of a fork: the child is its parent's copy (name, user, command line) until it
   execs. */
static void process_fork(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t ppid, uint32_t ptid)
{
    struct procinfo pi;

    if (pcache_get(c->k, ppid, &pi, 0, ts) != 0) proc_info(ppid, &pi, NULL);
    pi.pid = pid;
    pi.ppid = ppid;
    pcache_put(c->k, ts, &pi);
    if (c->k->flags & ETL_KERNEL_PROCESS)
        emit_process(c->k, ts, ETL_HOOK_PROCESS_START, &pi, ETL_KSTILL_ACTIVE, ppid, ptid);
    if (c->k->flags & ETL_KERNEL_IMAGE_LOAD) {
        /* Windows has no fork: the child's copies of its parent's images load with it. */
        struct kimage *images;
        unsigned n = pcache_images_at(c->k, ppid, ts, &images);
        for (unsigned i = 0; i < n; i++)
            etl_kemit_image(c->k, ts, ETL_HOOK_PROCESS_LOAD_IMAGE, pid, pid, images[i].code_lo,
                            images[i].code_hi - images[i].code_lo, images[i].code_lo - images[i].base, images[i].file,
                            &images[i].bid);
        free_images(images, n);
    }
}

/* What /proc said of a process when its exec's sample was read (etl_kexec_take): its parent
   (0: not known) and user (UINT32_MAX). */
struct at_exec {
    uint32_t ppid, uid;
};

/* Process End of the program a process ran: at its exit (drop: it is forgotten; its images
   unload first) or its exec (x: what /proc said then). */
static void process_end(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, int drop, const struct at_exec *x)
{
    struct procinfo pi;
    int32_t status = drop ? process_exit(c, ts, pid, tid) : 0;

    /* (At an exec, what it was until then: a later exec another reader handled first is not.) */
    if (pcache_get(c->k, pid, &pi, drop, drop ? INT64_MAX : ts - 1) != 0) {
        int running = proc_info(pid, &pi, NULL) == 0;
        struct procinfo parent;
        if (!drop) {
            /* An exec whose fork another processor's reader has not brought yet (or that was
               lost): until the exec the process was its parent's copy. Its parent: the one
               /proc gave at the exec, else now (it may be gone by now). */
            if (x->ppid) pi.ppid = x->ppid;
            if (!running) pi.uid = x->uid;
            if (pi.ppid && pcache_get(c->k, pi.ppid, &parent, 0, ts - 1) == 0) {
                snprintf(pi.name, sizeof pi.name, "%s", parent.name);
                snprintf(pi.cmdline, sizeof pi.cmdline, "%s", parent.cmdline);
                if (pi.uid == UINT32_MAX) pi.uid = parent.uid;
            }
        }
    }
    if (c->k->flags & ETL_KERNEL_PROCESS) emit_process(c->k, ts, ETL_HOOK_PROCESS_END, &pi, status, pid, tid);
}

/* Process Start at an exec (its COMM record): the new program's name (the exec's comm), its
   command line as noted when the exec's sample was read (args: cmd; "" when the process was
   gone by then, or ran another program: /proc now may show a later exec's), else (no sample)
   from /proc while the process is still there. Its parent: the fork's (the parent that made
   it), else the one /proc gave at the exec (x), else now. */
static void process_exec(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const char *name, int args,
                         const char *cmd, const struct at_exec *x)
{
    struct procinfo known, pi;
    int had = pcache_get(c->k, pid, &known, 0, ts - 1) == 0;

    if (proc_info(pid, &pi, name) != 0 && had) {
        pi = known;
        pi.cmdline[0] = '\0'; /* gone already: the old program's command line is not the new one's */
    }
    /* What /proc says now may be a later exec's (a script that execs its program). */
    if (args) snprintf(pi.cmdline, sizeof pi.cmdline, "%s", cmd);
    snprintf(pi.name, sizeof pi.name, "%s", name);
    if (had && known.ppid) pi.ppid = known.ppid;
    else if (x->ppid) pi.ppid = x->ppid;
    if (had && pi.uid == UINT32_MAX) pi.uid = known.uid;
    if (pi.uid == UINT32_MAX) pi.uid = x->uid;
    pcache_put(c->k, ts, &pi);
    if (c->k->flags & ETL_KERNEL_PROCESS)
        emit_process(c->k, ts, ETL_HOOK_PROCESS_START, &pi, ETL_KSTILL_ACTIVE, pid, tid);
}

int etl_ktask_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final)
{
    uint32_t type = etl_le32(r);
    struct timespec nap = { 0, 1000000 };

    /* A process's, not a thread's (pid is tid); and only what process_fork and process_end
       use. The wait is on the record's time as the queue orders it, which is what the other
       readers' progress says: a time of its own (etl_korder_ts moves it on past an earlier
       record's) would have two readers wait for each other. */
    if ((type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT) || size < 8 + 24 || etl_le32(r + 8) != etl_le32(r + 16) ||
        !(c->k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD)))
        return 0;
    while (etl_kothers_wait(c, &c->task_wait, ts)) {
        if (!final) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

void etl_ktask_record(struct kcpu *c, const uint8_t *r, uint32_t size, int fork)
{
    struct etl_kcapture *k = c->k;
    uint32_t pid, ppid, tid, ptid;
    int64_t ts;

    if (size < 8 + 24) return;
    pid = etl_le32(r + 8);
    ppid = etl_le32(r + 12);
    tid = etl_le32(r + 16);
    ptid = etl_le32(r + 20);
    ts = etl_korder_ts(c, (int64_t)etl_le64(r + 24));
    if (fork) {
        if (pid == tid && (k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD))) process_fork(c, ts, pid, ppid, ptid);
        if (k->flags & ETL_KERNEL_THREAD) {
            /* A new thread has the comm of the thread that made it (the kernel copies it at
               clone); /proc says it too while the thread lives and has not renamed itself. */
            char comm[64];
            emit_thread(k, ts, ETL_HOOK_THREAD_START, pid, tid, ppid, ptid);
            if (name_get(k, ptid, comm) || proc_comm(pid, tid, comm, sizeof comm) == 0) {
                name_set(k, tid, comm);
                emit_thread_name(k, ts, pid, tid, comm);
            }
        }
        return;
    }
    if (k->flags & ETL_KERNEL_THREAD) {
        emit_thread(k, ts, ETL_HOOK_THREAD_END, pid, tid, pid, tid);
        name_set(k, tid, NULL);
    }
    if (pid == tid && (k->flags & ETL_KERNEL_PROCESS_COUNTERS)) etl_kcounters_exit(c, ts, pid); /* before its End */
    if (pid == tid && (k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD))) process_end(c, ts, pid, tid, 1, NULL);
    if (pid == tid) etl_kvm_forget(k, pid, (int64_t)etl_le64(r + 24));
}

void etl_kcomm_record(struct kcpu *c, const uint8_t *r, uint32_t size, uint16_t misc)
{
    struct trailer t;
    struct at_exec x;
    char name[17], cmd[4096];
    uint32_t pid, tid;
    int64_t ts;
    int args;

    if (trailer(r, size, 8 + 8, &t) != 0) return;
    pid = etl_le32(r + 8);
    tid = etl_le32(r + 12);
    snprintf(name, sizeof name, "%.*s", (int)(size - 32 - 16 < 16 ? size - 32 - 16 : 16), (const char *)r + 16);
    ts = etl_korder_ts(c, t.time);
    /* The thread's new name: a rename (prctl PR_SET_NAME, pthread_setname_np, a write to
       /proc/PID/task/TID/comm), or an exec's program (after its Process Start, below). */
    if (!(misc & PERF_RECORD_MISC_COMM_EXEC) || !(c->k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD))) {
        name_set(c->k, tid, name);
        emit_thread_name(c->k, ts, pid, tid, name);
        return;
    }
    /* exec: the process ends as the program it was and starts as the new one (its mappings
       went with the old program; the new one's come as Image Loads). The record waited in the
       queue for its exec's command line and for what the other readers have before it, the
       process's fork among them (etl_kexec_wait). */
    args = etl_kexec_take(c->k, pid, t.time, cmd, sizeof cmd, &x.ppid, &x.uid);
    etl_kvm_forget(c->k, pid, t.time);
    pcache_exec_images(c->k, pid, tid, ts);
    process_end(c, ts, pid, tid, 0, &x);
    process_exec(c, ts, pid, tid, name, args, cmd, &x);
    name_set(c->k, tid, name);
    emit_thread_name(c->k, ts, pid, tid, name);
}

void etl_kmmap2_record(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct trailer t;
    char file[4096];
    uint32_t body = 8 + 8 + 24 + 24 + 8, pid;
    uint64_t start, len;
    etl_kbuild_id bid = { 0, { 0 } };

    if (trailer(r, size, body, &t) != 0) return;
    if (!(etl_le32(r + 8 + 8 + 24 + 24) & PROT_EXEC)) return;
    snprintf(file, sizeof file, "%.*s", (int)(size - 32 - body), (const char *)r + body);
    pid = etl_le32(r + 8);
    start = etl_le64(r + 16);
    len = etl_le64(r + 24);
    /* After pid, tid, addr, len, pgoff: maj, min, ino, ino_generation (the capture never asks
       for the build-id in their place, attr.build_id: kcapture.c says why). */
    etl_kbuild_id_of_mapping(c->k->bids, pid, start, start + len, makedev(etl_le32(r + 40), etl_le32(r + 44)),
                             etl_le64(r + 48), file, &bid);
    etl_kemit_image(c->k, etl_korder_ts(c, t.time), ETL_HOOK_PROCESS_LOAD_IMAGE, pid, etl_le32(r + 12), start, len,
                    etl_le64(r + 32), file, &bid);
}

#endif
