/* SPDX-License-Identifier: MIT */
/* Which process and thread each event of a compared trace belongs to, and which processes a
   comparison keeps (etl_diff_options.processes: by name or id, with what they started). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output/output.h"

#define NO_ID UINT32_MAX /* what a header holds for "no process" or "no thread" */

/* The process of thread tid at raw time ts, from the Thread events fed so far. */
static void pid_of_thread(struct diff_side *s, uint32_t tid, int64_t ts, struct diff_owner *out)
{
    int64_t pid = etl_image_map_thread_pid(s->image_map, tid, ts);

    if (pid >= 0) {
        out->has_pid = 1;
        out->pid = (uint32_t)pid;
    }
}

int diff_event_owner(struct diff_side *s, const etl_event *ev, struct diff_owner *out)
{
    etl_kernel_event ke;
    int kclass;

    memset(out, 0, sizeof *out);
    if (!s->image_map && !(s->image_map = etl_image_map_new())) return -1;
    if (!s->running && !(s->running = etl_cpu_threads_new())) return -1;
    if (etl_image_map_add(s->image_map, ev) != ETL_OK) return -1;
    kclass = etl_kernel_decode(ev, &ke) == 1 ? ke.kclass : ETL_KCLASS_NONE;
    if (kclass == ETL_KCLASS_CSWITCH && etl_cpu_threads_add(s->running, ev, &ke) != ETL_OK) return -1;
    if ((ev->has & ETL_HAS_PID_TID) && (ev->pid != NO_ID || ev->tid != NO_ID)) {
        out->has_tid = ev->tid != NO_ID;
        out->tid = ev->tid;
        if (ev->pid != NO_ID) {
            out->has_pid = 1;
            out->pid = ev->pid;
        }
        else pid_of_thread(s, ev->tid, ev->timestamp, out);
        return 0;
    }
    /* No thread in the header: the one the payload names, or that runs on the processor. */
    switch (kclass) {
    case ETL_KCLASS_SAMPLED_PROFILE:
        out->has_tid = 1;
        out->tid = ke.u.sample.tid;
        pid_of_thread(s, out->tid, ev->timestamp, out);
        break;
    case ETL_KCLASS_STACK:
    case ETL_KCLASS_STACK_KEY:
        out->has_pid = out->has_tid = 1;
        out->pid = ke.u.stack.pid;
        out->tid = ke.u.stack.tid;
        break;
    case ETL_KCLASS_LBR:
        out->has_pid = out->has_tid = 1;
        out->pid = ke.u.lbr.pid;
        out->tid = ke.u.lbr.tid;
        break;
    case ETL_KCLASS_SYSCALL_ENTER:
    case ETL_KCLASS_SYSCALL_EXIT: {
        int64_t tid = etl_cpu_threads_running(s->running, ev->cpu);
        if (tid >= 0) {
            out->has_tid = 1;
            out->tid = (uint32_t)tid;
            pid_of_thread(s, out->tid, ev->timestamp, out);
        }
        break;
    }
    case ETL_KCLASS_PROCESS: /* rundowns: of the process they describe */
        out->has_pid = 1;
        out->pid = ke.u.process.pid;
        break;
    case ETL_KCLASS_THREAD:
        out->has_pid = out->has_tid = 1;
        out->pid = ke.u.thread.pid;
        out->tid = ke.u.thread.tid;
        break;
    default:
        break;
    }
    return 0;
}

/* ---- sets of process ids ---- */

struct pid_set {
    uint64_t *slot;             /* pid + 1; 0: empty */
    size_t cap, n;
};

static uint64_t pid_slot(uint32_t pid, size_t cap)
{
    return ((uint64_t)pid * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

static int set_has(const struct pid_set *t, uint32_t pid)
{
    if (!t->cap) return 0;
    for (uint64_t i = pid_slot(pid, t->cap); t->slot[i]; i = (i + 1) & (t->cap - 1))
        if (t->slot[i] == (uint64_t)pid + 1) return 1;
    return 0;
}

/* 1 added, 0 already there, -1 without memory. */
static int set_add(struct pid_set *t, uint32_t pid)
{
    uint64_t i;

    if (set_has(t, pid)) return 0;
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        uint64_t *p = calloc(cap, sizeof *p);
        if (!p) return -1;
        for (size_t j = 0; j < t->cap; j++) {
            if (!t->slot[j]) continue;
            for (i = pid_slot((uint32_t)(t->slot[j] - 1), cap); p[i]; i = (i + 1) & (cap - 1)) {}
            p[i] = t->slot[j];
        }
        free(t->slot);
        t->slot = p;
        t->cap = cap;
    }
    for (i = pid_slot(pid, t->cap); t->slot[i]; i = (i + 1) & (t->cap - 1)) {}
    t->slot[i] = (uint64_t)pid + 1;
    t->n++;
    return 1;
}

/* ---- names ---- */

/* The length of name without a final ".exe" (any case). */
static size_t stem_length(const char *name)
{
    size_t n = strlen(name);

    return n > 4 && strcasecmp(name + n - 4, ".exe") == 0 ? n - 4 : n;
}

/* Whether a process named have (as its Process event gives it) is the one named want. */
static int name_matches(const char *have, const char *want)
{
    size_t n = stem_length(have);

    return n && n == stem_length(want) && strncasecmp(have, want, n) == 0;
}

/* A parent process id a Process Start or DCStart event gives. */
struct parent_link {
    uint32_t pid, parent;
};

struct selection {
    struct pid_set seen;        /* every process an event names */
    struct pid_set chosen;      /* the processes named (by name or id), without the tree ones */
    struct pid_set tree;        /* those named with their descendants, and the descendants */
    int *found;                 /* per etl_diff_process: whether the trace has it */
    struct parent_link *links;
    size_t nlinks, links_cap;
    int has_process_events;
};

static void selection_free(struct selection *sel)
{
    free(sel->seen.slot);
    free(sel->chosen.slot);
    free(sel->tree.slot);
    free(sel->found);
    free(sel->links);
}

/* What a Process event says: its names against those asked for, its parent. -1 without memory. */
static int take_process(const etl_diff *d, struct selection *sel, const etl_event *ev, const etl_kprocess *p)
{
    char name[512];

    sel->has_process_events = 1;
    if (set_add(&sel->seen, p->pid) < 0) return -1;
    etl_string_to_utf8(&p->image_file_name, name, sizeof name);
    for (unsigned i = 0; i < d->o.nprocesses; i++) {
        const etl_diff_process *q = &d->processes[i];
        if (!q->name || !name_matches(name, q->name)) continue;
        sel->found[i] = 1;
        if (set_add(q->tree ? &sel->tree : &sel->chosen, p->pid) < 0) return -1;
    }
    if ((ev->opcode == 1 || ev->opcode == 3) && p->parent_pid != p->pid) { /* Start, DCStart */
        if (sel->nlinks == sel->links_cap) {
            size_t cap = sel->links_cap ? 2 * sel->links_cap : 256;
            struct parent_link *l = realloc(sel->links, cap * sizeof *l);
            if (!l) return -1;
            sel->links = l;
            sel->links_cap = cap;
        }
        sel->links[sel->nlinks].pid = p->pid;
        sel->links[sel->nlinks++].parent = p->parent_pid;
    }
    return 0;
}

/* The descendants of the tree's processes into the tree. -1 without memory. */
static int add_descendants(struct selection *sel)
{
    int changed = 1;

    while (changed) {
        changed = 0;
        for (size_t i = 0; i < sel->nlinks; i++) {
            int rc;
            if (!set_has(&sel->tree, sel->links[i].parent)) continue;
            if ((rc = set_add(&sel->tree, sel->links[i].pid)) < 0) return -1;
            if (rc) changed = 1;
        }
    }
    return 0;
}

static int pid_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* The chosen and the tree's processes, sorted, as s->pids. -1 without memory. */
static int keep_selection(struct diff_side *s, const struct selection *sel)
{
    const struct pid_set *sets[2] = { &sel->chosen, &sel->tree };
    size_t n = 0;

    s->pids = malloc((sel->chosen.n + sel->tree.n + 1) * sizeof *s->pids);
    if (!s->pids) return -1;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sets[k]->cap; i++)
            if (sets[k]->slot[i]) s->pids[n++] = (uint32_t)(sets[k]->slot[i] - 1);
    qsort(s->pids, n, sizeof *s->pids, pid_cmp);
    s->npids = 0;
    for (size_t i = 0; i < n; i++)
        if (!s->npids || s->pids[s->npids - 1] != s->pids[i]) s->pids[s->npids++] = s->pids[i];
    return 0;
}

/* The error for the first process asked for that the trace does not have; 0 when it has all. */
static int missing_process(etl_diff *d, const struct diff_side *s, const struct selection *sel)
{
    char message[1024];

    for (unsigned i = 0; i < d->o.nprocesses; i++) {
        const etl_diff_process *q = &d->processes[i];
        if (sel->found[i]) continue;
        if (!q->name)
            snprintf(message, sizeof message, "%s: no event of process %" PRIu32, s->path, q->pid);
        else if (!sel->has_process_events)
            snprintf(message, sizeof message,
                     "%s: no process named '%s': the trace has no Process events to name its processes "
                     "(record them with etlrecord --kernel process, or give a process id)", s->path, q->name);
        else
            snprintf(message, sizeof message, "%s: no process named '%s'", s->path, q->name);
        diff_set_error(d, message);
        return -1;
    }
    return 0;
}

int diff_select_processes(etl_diff *d, int k)
{
    struct diff_side *s = &d->side[k];
    struct selection sel;
    etl_event ev;
    int rc;

    memset(&sel, 0, sizeof sel);
    sel.found = calloc(d->o.nprocesses, sizeof *sel.found);
    if (!sel.found) goto nomem;
    /* Damage is reported by the pass that compares, once. */
    s->prepass = 1;
    while ((rc = etl_reader_next(s->r, &ev)) == ETL_OK || rc == ETL_WARN) {
        etl_kernel_event ke;
        if ((ev.has & ETL_HAS_PID_TID) && ev.pid != NO_ID && set_add(&sel.seen, ev.pid) < 0) goto nomem;
        if (etl_kernel_decode(&ev, &ke) == 1 && ke.kclass == ETL_KCLASS_PROCESS &&
            take_process(d, &sel, &ev, &ke.u.process) != 0)
            goto nomem;
    }
    s->prepass = 0;
    if (rc == ETL_FATAL || etl_reader_rewind(s->r) != ETL_OK) {
        diff_set_error(d, etl_reader_error(s->r));
        selection_free(&sel);
        return -1;
    }
    for (unsigned i = 0; i < d->o.nprocesses; i++) {
        const etl_diff_process *q = &d->processes[i];
        if (q->name || !set_has(&sel.seen, q->pid)) continue;
        sel.found[i] = 1;
        if (set_add(q->tree ? &sel.tree : &sel.chosen, q->pid) < 0) goto nomem;
    }
    if (missing_process(d, s, &sel) != 0) {
        selection_free(&sel);
        return -1;
    }
    if (add_descendants(&sel) != 0 || keep_selection(s, &sel) != 0) goto nomem;
    selection_free(&sel);
    return 0;
nomem:
    s->prepass = 0;
    selection_free(&sel);
    diff_set_error(d, "out of memory");
    return -1;
}

int diff_selected(const struct diff_side *s, uint32_t pid)
{
    size_t lo = 0, hi = s->npids;

    if (!s->npids) return 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->pids[mid] < pid) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->npids && s->pids[lo] == pid;
}
