/* SPDX-License-Identifier: MIT */
/* Kernel state over time from decoded kernel events: DiskIo issue/completion pairing, the thread
   on each processor, process and thread names, the runs of each process (one per image). */
#include <stdlib.h>
#include <string.h>

#include "etl.h"

/* ------------------------------------------------------------------ disk I/O pairing */

/* An issue waiting for its completion (irp 0: an empty slot; taken: a slot whose issue was
   paired, kept so that probing runs on past it). */
struct disk_issue {
    uint64_t irp;
    int64_t time, tag;
    int taken;
};

struct etl_disk_io_pairing {
    struct disk_issue *slot;    /* open addressing by Irp */
    unsigned cap, used;         /* used counts taken slots too: they are reclaimed on growth */
};

etl_disk_io_pairing *etl_disk_io_pairing_new(void)
{
    return calloc(1, sizeof(etl_disk_io_pairing));
}

void etl_disk_io_pairing_free(etl_disk_io_pairing *p)
{
    if (!p) return;
    free(p->slot);
    free(p);
}

static uint64_t irp_hash(uint64_t irp)
{
    irp ^= irp >> 33;
    irp *= 0xFF51AFD7ED558CCDull;
    return irp ^ irp >> 33;
}

static int issue_put(etl_disk_io_pairing *p, uint64_t irp, int64_t time, int64_t tag)
{
    unsigned i;

    if ((p->used + 1) * 2 > p->cap) { /* grow, leaving the taken slots behind */
        unsigned cap = p->cap ? p->cap * 2 : 1024, old_cap = p->cap;
        struct disk_issue *old = p->slot, *n = calloc(cap, sizeof *n);
        if (!n) return ETL_FAILED;
        p->slot = n;
        p->cap = cap;
        p->used = 0;
        for (unsigned j = 0; j < old_cap; j++)
            if (old[j].irp && !old[j].taken) issue_put(p, old[j].irp, old[j].time, old[j].tag); /* has room */
        free(old);
    }
    for (i = (unsigned)irp_hash(irp) & (p->cap - 1); p->slot[i].irp && p->slot[i].irp != irp; i = (i + 1) & (p->cap - 1)) {}
    if (!p->slot[i].irp) p->used++;
    p->slot[i] = (struct disk_issue){ irp, time, tag, 0 };
    return ETL_OK;
}

static int issue_take(etl_disk_io_pairing *p, uint64_t irp, etl_disk_io_issue *out)
{
    if (!p->cap) return 0;
    for (unsigned i = (unsigned)irp_hash(irp) & (p->cap - 1); p->slot[i].irp; i = (i + 1) & (p->cap - 1))
        if (p->slot[i].irp == irp) {
            if (p->slot[i].taken) return 0;
            out->time = p->slot[i].time;
            out->tag = p->slot[i].tag;
            p->slot[i].taken = 1;
            return 1;
        }
    return 0;
}

int etl_disk_io_pairing_add(etl_disk_io_pairing *p, const etl_kernel_event *ke, int64_t time, int64_t tag,
                            etl_disk_io_issue *issue)
{
    uint64_t irp = ke->u.disk_io.irp;

    if (ke->kclass == ETL_KCLASS_DISK_IO_INIT) return irp ? issue_put(p, irp, time, tag) : ETL_OK;
    if (ke->kclass == ETL_KCLASS_DISK_IO && irp) return issue_take(p, irp, issue);
    return 0;
}

/* ------------------------------------------------------------------ the thread on each processor */

struct etl_cpu_threads {
    uint32_t *running;          /* per processor, the tid + 1 (0: no CSwitch yet) */
    unsigned n;
};

etl_cpu_threads *etl_cpu_threads_new(void)
{
    return calloc(1, sizeof(etl_cpu_threads));
}

void etl_cpu_threads_free(etl_cpu_threads *t)
{
    if (!t) return;
    free(t->running);
    free(t);
}

int etl_cpu_threads_add(etl_cpu_threads *t, const etl_event *ev, const etl_kernel_event *ke)
{
    if (ke->kclass != ETL_KCLASS_CSWITCH) return ETL_OK;
    if (ev->cpu >= t->n) {
        unsigned n = ev->cpu + 64u;
        uint32_t *run = realloc(t->running, n * sizeof *run);
        if (!run) return ETL_FAILED;
        memset(run + t->n, 0, (n - t->n) * sizeof *run);
        t->running = run;
        t->n = n;
    }
    t->running[ev->cpu] = ke->u.cswitch.new_tid + 1;
    return ETL_OK;
}

int64_t etl_cpu_threads_running(const etl_cpu_threads *t, unsigned cpu)
{
    return cpu < t->n && t->running[cpu] ? (int64_t)t->running[cpu] - 1 : -1;
}

/* ------------------------------------------------------------------ names over time */

struct named {
    uint32_t id;                /* pid or tid */
    int64_t ts;
    int starts;                 /* 0 for an End, DCEnd or Defunct: at one ts, these come first */
    size_t seq;                 /* feed order: other ties in ts keep it */
    char *name;                 /* UTF-8, owned */
};

struct names {
    struct named *e;
    size_t n, cap;
    int dirty;                  /* fed since the last sort */
};

struct etl_name_map {
    struct names process, thread;
};

etl_name_map *etl_name_map_new(void)
{
    return calloc(1, sizeof(etl_name_map));
}

static void names_free(struct names *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->e[i].name);
    free(s->e);
}

void etl_name_map_free(etl_name_map *m)
{
    if (!m) return;
    names_free(&m->process);
    names_free(&m->thread);
    free(m);
}

/* Whether an event of this name ends what it names (a process's or thread's life, or at an
   exec the program that ran): "Process/End", "Thread/DCEnd", "Process/Defunct". */
static int ends(const char *name)
{
    const char *slash = name ? strchr(name, '/') : NULL;

    return slash && (strcmp(slash, "/End") == 0 || strcmp(slash, "/DCEnd") == 0 || strcmp(slash, "/Defunct") == 0);
}

static int names_add(struct names *s, uint32_t id, int64_t ts, int starts, const etl_string *str)
{
    size_t size = 4 * (size_t)str->size / (str->utf16 ? 2 : 1) + 1;
    char *name;

    if (!str->data) return ETL_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        struct named *e = realloc(s->e, cap * sizeof *e);
        if (!e) return ETL_FAILED;
        s->e = e;
        s->cap = cap;
    }
    name = malloc(size);
    if (!name) return ETL_FAILED;
    etl_string_to_utf8(str, name, size);
    s->e[s->n] = (struct named){ id, ts, starts, s->n, name };
    s->n++;
    s->dirty = 1;
    return ETL_OK;
}

int etl_name_map_add(etl_name_map *m, const etl_event *ev)
{
    etl_kernel_event ke;

    if (etl_kernel_decode(ev, &ke) != 1) return ETL_OK;
    if (ke.kclass == ETL_KCLASS_PROCESS)
        return names_add(&m->process, ke.u.process.pid, ev->timestamp, !ends(ke.name), &ke.u.process.image_file_name);
    if (ke.kclass == ETL_KCLASS_THREAD)
        return names_add(&m->thread, ke.u.thread.tid, ev->timestamp, !ends(ke.name), &ke.u.thread.name);
    return ETL_OK;
}

static int named_cmp(const void *a, const void *b)
{
    const struct named *x = a, *y = b;

    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    /* An exec writes the old program's End and the new one's Start at one time: from then on
       the new name is in force, in whatever order the two were fed. */
    if (x->starts != y->starts) return x->starts < y->starts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *names_find(struct names *s, uint32_t id, int64_t ts)
{
    size_t lo = 0, hi = s->n;

    if (s->dirty) {
        qsort(s->e, s->n, sizeof *s->e, named_cmp);
        s->dirty = 0;
    }
    /* The first entry after (id, ts): its predecessor is the last at or before ts. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->e[mid].id < id || (s->e[mid].id == id && s->e[mid].ts <= ts)) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && s->e[lo - 1].id == id) return s->e[lo - 1].name;
    if (lo < s->n && s->e[lo].id == id) return s->e[lo].name;
    return NULL;
}

const char *etl_name_map_process(etl_name_map *m, uint32_t pid, int64_t ts)
{
    return names_find(&m->process, pid, ts);
}

const char *etl_name_map_thread(etl_name_map *m, uint32_t tid, int64_t ts)
{
    return names_find(&m->thread, tid, ts);
}

/* ------------------------------------------------------------------ the runs of each process */

struct run_slot {
    uint32_t pid;
    int used;
    int ended;                  /* its last event was an End or Defunct */
    uint64_t key;               /* UniqueProcessKey of the run */
    int64_t run;                /* the tag of the event that began it */
};

struct etl_process_runs {
    struct run_slot *slot;      /* open addressing by pid */
    unsigned cap, used;
};

etl_process_runs *etl_process_runs_new(void)
{
    return calloc(1, sizeof(etl_process_runs));
}

void etl_process_runs_free(etl_process_runs *r)
{
    if (!r) return;
    free(r->slot);
    free(r);
}

/* The slot of pid (*created: a new one), or NULL without memory. */
static struct run_slot *run_slot(etl_process_runs *r, uint32_t pid, int *created)
{
    unsigned i;

    if ((r->used + 1) * 2 > r->cap) {
        unsigned cap = r->cap ? r->cap * 2 : 256;
        struct run_slot *n = calloc(cap, sizeof *n);
        if (!n) return NULL;
        for (unsigned j = 0; j < r->cap; j++) {
            if (!r->slot[j].used) continue;
            for (i = (r->slot[j].pid * 2654435761u) & (cap - 1); n[i].used; i = (i + 1) & (cap - 1)) {}
            n[i] = r->slot[j];
        }
        free(r->slot);
        r->slot = n;
        r->cap = cap;
    }
    for (i = (pid * 2654435761u) & (r->cap - 1); r->slot[i].used && r->slot[i].pid != pid; i = (i + 1) & (r->cap - 1)) {}
    *created = !r->slot[i].used;
    if (*created) {
        r->slot[i].used = 1;
        r->slot[i].pid = pid;
        r->used++;
    }
    return &r->slot[i];
}

int etl_process_runs_add(etl_process_runs *r, const etl_kernel_event *ke, int64_t tag, int64_t *run)
{
    const etl_kprocess *p = &ke->u.process;
    struct run_slot *s;
    int fresh, defunct;

    if (ke->kclass != ETL_KCLASS_PROCESS) return 0;
    if (!(s = run_slot(r, p->pid, &fresh))) return ETL_FAILED;
    defunct = ke->name && strcmp(ke->name, "Process/Defunct") == 0;
    /* A run begins at the first event of a pid, at a Start (a fork's, an exec's, Windows'
       CreateProcess), at another UniqueProcessKey (a pid used again), and after an End or
       Defunct (a pid used again whose Start is not in the trace) unless it is the Defunct of
       the process that ended. */
    if (fresh || (ke->name && strcmp(ke->name, "Process/Start") == 0) || p->unique_process_key != s->key ||
        (s->ended && !defunct)) {
        s->run = tag;
        s->key = p->unique_process_key;
    }
    s->ended = defunct || (ke->name && strcmp(ke->name, "Process/End") == 0); /* (not a DCEnd: a rundown) */
    *run = s->run;
    return 1;
}
