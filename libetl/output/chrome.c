/* SPDX-License-Identifier: MIT */
/* A trace as a timeline in Chrome's trace-event JSON: thread states, samples and user events, streamed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output/output.h"

/* The process a thread is drawn in when nothing says which it is of. */
#define UNKNOWN_PID 0xFFFFFFFFu

/* KTHREAD_STATE values of a CSwitch's OldThreadState. */
enum { KS_READY = 1, KS_STANDBY = 3, KS_TERMINATED = 4, KS_WAITING = 5, KS_TRANSITION = 6,
       KS_DEFERRED_READY = 7, KS_GATE_WAIT = 8, KS_WAITING_OUT_SWAP = 9 };

/* KWAIT_REASON, as Windows' headers name its values. */
static const char *const wait_reasons[] = {
    "Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution", "Suspended", "UserRequest",
    "WrExecutive", "WrFreePage", "WrPageIn", "WrPoolAllocation", "WrDelayExecution", "WrSuspended",
    "WrUserRequest", "WrEventPair", "WrQueue", "WrLpcReceive", "WrLpcReply", "WrVirtualMemory", "WrPageOut",
    "WrRendezvous", "WrKeyedEvent", "WrTerminated", "WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack",
    "WrKernel", "WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt", "WrPreempted",
    "WrYieldExecution", "WrFastMutex", "WrGuardedMutex", "WrRundown", "WrAlertByThreadId", "WrDeferredPreempt",
    "WrPhysicalFault", "WrIoRing", "WrMdlCache", "WrRcu"
};

static void wait_reason_name(unsigned reason, char *out, size_t size)
{
    if (reason < sizeof wait_reasons / sizeof wait_reasons[0]) snprintf(out, size, "%s", wait_reasons[reason]);
    else snprintf(out, size, "WaitReason%u", reason);
}

/* ---- open-addressing tables keyed by 64 bits; each entry begins with struct slot ---- */

struct slot {
    uint64_t key;
    int used;
};

struct table {
    unsigned char *e;
    size_t entry, cap, n;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static struct slot *table_at(const struct table *t, size_t i)
{
    return (struct slot *)(t->e + i * t->entry);
}

static struct slot *table_probe(const struct table *t, uint64_t key)
{
    size_t i = (size_t)mix64(key) & (t->cap - 1);

    for (;;) {
        struct slot *s = table_at(t, i);
        if (!s->used || s->key == key) return s;
        i = (i + 1) & (t->cap - 1);
    }
}

static void *table_find(const struct table *t, uint64_t key)
{
    struct slot *s;

    if (!t->cap) return NULL;
    s = table_probe(t, key);
    return s->used ? s : NULL;
}

/* The entry of key, made (zeroed but for its slot) when new: *created says which. NULL without memory. */
static void *table_get(struct table *t, uint64_t key, int *created)
{
    struct slot *s;

    *created = 0;
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct table bigger = { calloc(cap, t->entry), t->entry, cap, t->n };
        if (!bigger.e) return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            struct slot *old = table_at(t, i);
            if (old->used) memcpy(table_probe(&bigger, old->key), old, t->entry);
        }
        free(t->e);
        *t = bigger;
    }
    s = table_probe(t, key);
    if (!s->used) {
        s->used = 1;
        s->key = key;
        t->n++;
        *created = 1;
    }
    return s;
}

/* The used entries in key order (a malloc'ed array of pointers, *n of them), or NULL. */
static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = *(const struct slot *const *)a, *y = *(const struct slot *const *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static struct slot **table_sorted(const struct table *t, size_t *n)
{
    struct slot **v = malloc((t->n ? t->n : 1) * sizeof *v);

    *n = 0;
    if (!v) return NULL;
    for (size_t i = 0; i < t->cap; i++)
        if (table_at(t, i)->used) v[(*n)++] = table_at(t, i);
    qsort(v, *n, sizeof *v, slot_cmp);
    return v;
}

/* ---- the writer's state ---- */

enum thread_state { TS_UNKNOWN = 0, TS_RUNNING, TS_READY, TS_WAITING, TS_GONE };

struct thread {                 /* keyed by tid */
    struct slot s;
    uint32_t tid;
    int has_pid;                /* pid known from an event (else from the image map or unknown) */
    uint32_t pid;
    uint8_t state;              /* enum thread_state */
    uint8_t reason, mode;       /* the wait reason and mode of a switch-out */
    uint8_t ready_reason;       /* READY after a switch-out (preempted): 1; after a ReadyThread: 0 */
    int8_t priority;
    uint16_t cpu;
    int64_t since;              /* ns of the state's start */
    int64_t since_raw;          /* and its raw timestamp */
    int64_t readied_by;         /* tid, or -1 */
    int64_t last_end;           /* end of its last slice: the next never starts before it */
    uint32_t track_pid;         /* the process its slices are drawn in */
    int track_known;            /* track_pid is set */
};

struct cpu {                    /* keyed by processor */
    struct slot s;
    int64_t first;              /* ns of its first event */
    int64_t first_raw;
    int64_t tid;                /* switched in by its last CSwitch, or -1 */
};

struct track {                  /* keyed by pid << 32 | tid: a thread as drawn */
    struct slot s;
    uint32_t pid, tid;
    int64_t first_raw;          /* raw timestamp of its first event: its names are those then */
};

struct process {                /* keyed by pid */
    struct slot s;
    int64_t first_raw;
    int selected;
};

struct span {                   /* keyed by a hash of (pid, tid, provider, task, name) */
    struct slot s;
    uint32_t pid, tid;
    uint64_t id;
    uint64_t open;              /* Starts not yet stopped */
    int64_t last;               /* ns of its last "b" or "e": the next never comes before it */
    char *name, *cat;
};

struct etl_chrome_writer {
    FILE *f;
    etl_chrome_options o;
    uint32_t *pids, *tids;
    char **names;
    etl_image_map *own_images;  /* when o.images is NULL */
    etl_name_map *names_map;
    int learned;                /* etl_chrome_writer_learn was called */
    int started, finished;
    int have_origin;
    int64_t origin, learned_min;
    int have_last;
    int64_t last;               /* ns of the latest event added */
    struct table threads, cpus, tracks, processes, spans;
    uint64_t next_span_id;
    char *buf;                  /* decoded fields */
    size_t buf_size;
    etl_chrome_stats stats;
};

void etl_chrome_options_init(etl_chrome_options *o)
{
    memset(o, 0, sizeof *o);
    o->from_ns = INT64_MIN;
    o->to_ns = INT64_MAX;
    o->origin_ns = INT64_MIN;
}

static void *copy_array(const void *src, size_t n, size_t size, int *failed)
{
    void *p;

    if (!n) return NULL;
    p = malloc(n * size);
    if (!p) {
        *failed = 1;
        return NULL;
    }
    memcpy(p, src, n * size);
    return p;
}

int etl_chrome_writer_new(etl_chrome_writer **out, FILE *f, const etl_chrome_options *o)
{
    etl_chrome_writer *w = calloc(1, sizeof *w);
    int failed = 0;

    *out = NULL;
    if (!w) return ETL_FAILED;
    w->f = f;
    if (o) w->o = *o;
    else etl_chrome_options_init(&w->o);
    w->pids = copy_array(w->o.pids, w->o.npids, sizeof *w->pids, &failed);
    w->tids = copy_array(w->o.tids, w->o.ntids, sizeof *w->tids, &failed);
    if (w->o.nprocess_names && (w->names = calloc(w->o.nprocess_names, sizeof *w->names)))
        for (unsigned i = 0; i < w->o.nprocess_names; i++)
            if (!(w->names[i] = strdup(w->o.process_names[i]))) failed = 1;
    if (w->o.nprocess_names && !w->names) failed = 1;
    w->o.pids = w->pids;
    w->o.tids = w->tids;
    w->o.process_names = (const char *const *)w->names;
    w->names_map = etl_name_map_new();
    if (!w->o.images) w->own_images = etl_image_map_new();
    w->threads.entry = sizeof(struct thread);
    w->cpus.entry = sizeof(struct cpu);
    w->tracks.entry = sizeof(struct track);
    w->processes.entry = sizeof(struct process);
    w->spans.entry = sizeof(struct span);
    if (failed || !w->names_map || (!w->o.images && !w->own_images)) {
        etl_chrome_writer_free(w);
        return ETL_FAILED;
    }
    *out = w;
    return ETL_OK;
}

void etl_chrome_writer_free(etl_chrome_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->spans.cap; i++) {
        struct span *sp = (struct span *)table_at(&w->spans, i);
        if (sp->s.used) {
            free(sp->name);
            free(sp->cat);
        }
    }
    free(w->threads.e);
    free(w->cpus.e);
    free(w->tracks.e);
    free(w->processes.e);
    free(w->spans.e);
    if (w->names)
        for (unsigned i = 0; i < w->o.nprocess_names; i++) free(w->names[i]);
    free(w->names);
    free(w->pids);
    free(w->tids);
    etl_image_map_free(w->own_images);
    etl_name_map_free(w->names_map);
    free(w->buf);
    free(w);
}

void etl_chrome_writer_stats(const etl_chrome_writer *w, etl_chrome_stats *out)
{
    *out = w->stats;
}

static etl_image_map *images(etl_chrome_writer *w)
{
    return w->o.images ? w->o.images : w->own_images;
}

int etl_chrome_writer_learn(etl_chrome_writer *w, const etl_event *ev, int64_t time_ns)
{
    if (!w->learned || time_ns < w->learned_min) w->learned_min = time_ns;
    w->learned = 1;
    if (w->own_images && etl_image_map_add(w->own_images, ev) != ETL_OK) return ETL_FAILED;
    if (etl_name_map_add(w->names_map, ev) != ETL_OK) return ETL_FAILED;
    if (w->o.decoder && etl_decoder_learn(w->o.decoder, ev) == ETL_FATAL) return ETL_FAILED;
    return ETL_OK;
}

/* ---- selection ---- */

/* name is want, ignoring ASCII case and a final ".exe" on either. */
static int same_name(const char *name, const char *want)
{
    size_t n = strlen(name), m = strlen(want);

    if (n > 4 && strcasecmp(name + n - 4, ".exe") == 0) n -= 4;
    if (m > 4 && strcasecmp(want + m - 4, ".exe") == 0) m -= 4;
    return n == m && strncasecmp(name, want, n) == 0;
}

static struct process *process_of(etl_chrome_writer *w, uint32_t pid, int64_t raw)
{
    int created;
    struct process *p = table_get(&w->processes, pid, &created);

    if (!p || !created) return p;
    p->first_raw = raw;
    p->selected = !w->o.npids && !w->o.nprocess_names;
    for (unsigned i = 0; i < w->o.npids && !p->selected; i++) p->selected = w->o.pids[i] == pid;
    if (!p->selected && w->o.nprocess_names) {
        const char *name = etl_name_map_process(w->names_map, pid, raw);
        for (unsigned i = 0; name && i < w->o.nprocess_names && !p->selected; i++)
            p->selected = same_name(name, w->o.process_names[i]);
    }
    return p;
}

/* Whether events of (pid, tid) at raw time raw are written: -1 without memory. */
static int selected(etl_chrome_writer *w, uint32_t pid, uint32_t tid, int64_t raw)
{
    struct process *p = process_of(w, pid, raw);

    if (!p) return -1;
    if (!p->selected) return 0;
    if (!w->o.ntids) return 1;
    for (unsigned i = 0; i < w->o.ntids; i++)
        if (w->o.tids[i] == tid) return 1;
    return 0;
}

/* ---- writing ---- */

static void put_time(FILE *f, int64_t us_ns)
{
    uint64_t a = us_ns < 0 ? (uint64_t)0 - (uint64_t)us_ns : (uint64_t)us_ns;

    fprintf(f, "%s%" PRIu64 ".%03u", us_ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* The start of one element of traceEvents, up to and including its "ph" member. */
static void begin_event(etl_chrome_writer *w, const char *name, const char *cat, char ph)
{
    FILE *f = w->f;

    if (!w->started) {
        fputs("{\"traceEvents\":[\n", f);
        w->started = 1;
    } else {
        fputs(",\n", f);
    }
    w->stats.trace_events++;
    fputs("{\"name\":", f);
    output_json_string(f, name);
    if (cat) {
        fputs(",\"cat\":", f);
        output_json_string(f, cat);
    }
    fprintf(f, ",\"ph\":\"%c\"", ph);
}

static void put_ids(FILE *f, uint32_t pid, uint32_t tid)
{
    fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, pid, tid);
}

static int64_t origin(etl_chrome_writer *w, int64_t time_ns)
{
    if (!w->have_origin) {
        w->origin = w->o.origin_ns != INT64_MIN ? w->o.origin_ns : w->learned ? w->learned_min : time_ns;
        w->have_origin = 1;
    }
    return w->origin;
}

static void put_ts(etl_chrome_writer *w, int64_t ns)
{
    fputs(",\"ts\":", w->f);
    put_time(w->f, ns - origin(w, ns));
}

/* Remembers that (pid, tid) is drawn, for its names. -1 without memory. */
static int note_track(etl_chrome_writer *w, uint32_t pid, uint32_t tid, int64_t raw)
{
    int created;
    struct track *t = table_get(&w->tracks, (uint64_t)pid << 32 | tid, &created);

    if (!t) return -1;
    if (created) {
        t->pid = pid;
        t->tid = tid;
        t->first_raw = raw;
    }
    return 0;
}

/* ---- threads ---- */

/* The process thread th is of at raw time raw: what events said, else the image map's. */
static uint32_t thread_pid(etl_chrome_writer *w, struct thread *th, int64_t raw)
{
    int64_t pid;

    if (th->has_pid) return th->pid;
    pid = w->learned || w->o.images ? etl_image_map_thread_pid(images(w), th->tid, raw) : -1;
    return pid < 0 ? UNKNOWN_PID : (uint32_t)pid;
}

static struct thread *thread_of(etl_chrome_writer *w, uint32_t tid)
{
    int created;
    struct thread *th = table_get(&w->threads, tid, &created);

    if (th && created) {
        th->tid = tid;
        th->readied_by = -1;
        th->last_end = INT64_MIN;
    }
    return th;
}

/* A thread state slice [from, to) of th, cut to the time range and to its last slice.
   -1 without memory. */
static int put_slice(etl_chrome_writer *w, struct thread *th, int64_t from, int64_t to, int64_t raw,
                     const char *name, const char *args)
{
    int sel;

    if (w->o.no_states) return 0;
    if (!th->track_known) {
        th->track_pid = thread_pid(w, th, raw);
        th->track_known = 1;
        if (th->track_pid == UNKNOWN_PID) w->stats.unknown_threads++;
    }
    if (from < th->last_end) {
        from = th->last_end;
        w->stats.out_of_order++;
    }
    if (to < from) { /* cut to nothing, or ending before it began */
        if (to < th->since) w->stats.out_of_order++;
        return 0;
    }
    th->last_end = to;
    if (from < w->o.from_ns) from = w->o.from_ns;
    if (to > w->o.to_ns) to = w->o.to_ns;
    if (to < from) return 0;
    sel = selected(w, th->track_pid, th->tid, raw);
    if (sel <= 0) return sel;
    if (note_track(w, th->track_pid, th->tid, raw) < 0) return -1;
    begin_event(w, name, "sched", 'X');
    put_ts(w, from);
    fputs(",\"dur\":", w->f);
    put_time(w->f, to - from);
    put_ids(w->f, th->track_pid, th->tid);
    fprintf(w->f, ",\"args\":{%s}}", args);
    w->stats.slices++;
    return 0;
}

/* Ends th's state at time t (ns): writes the slice of that state. */
static int end_state(etl_chrome_writer *w, struct thread *th, int64_t t, int unfinished)
{
    int64_t raw = th->since_raw;

    char args[160], reason[32], name[64];
    const char *more = unfinished ? ",\"unfinished\":true" : "";

    switch (th->state) {
    case TS_RUNNING:
        snprintf(args, sizeof args, "\"cpu\":%u,\"priority\":%d%s", th->cpu, th->priority, more);
        return put_slice(w, th, th->since, t, raw, "Running", args);
    case TS_READY:
        if (th->ready_reason) {
            wait_reason_name(th->reason, reason, sizeof reason);
            snprintf(args, sizeof args, "\"wait_reason\":\"%s\"%s", reason, more);
        } else if (th->readied_by >= 0) {
            snprintf(args, sizeof args, "\"readied_by\":%" PRId64 "%s", th->readied_by, more);
        } else {
            snprintf(args, sizeof args, "%s", unfinished ? more + 1 : "");
        }
        return put_slice(w, th, th->since, t, raw, "Ready", args);
    case TS_WAITING:
        wait_reason_name(th->reason, reason, sizeof reason);
        snprintf(name, sizeof name, "Waiting (%s)", reason);
        snprintf(args, sizeof args, "\"wait_reason\":\"%s\",\"wait_mode\":\"%s\"%s", reason,
                 th->mode & 1 ? "user" : "kernel", more);
        return put_slice(w, th, th->since, t, raw, name, args);
    default:
        return 0;
    }
}

static struct cpu *cpu_of(etl_chrome_writer *w, unsigned cpu, int64_t t, int64_t raw)
{
    int created;
    struct cpu *c = table_get(&w->cpus, cpu, &created);

    if (c && created) {
        c->first = t;
        c->first_raw = raw;
        c->tid = -1;
    }
    return c;
}

static int on_cswitch(etl_chrome_writer *w, const etl_event *ev, const etl_kcswitch *cs, int64_t t)
{
    struct cpu *c = cpu_of(w, ev->cpu, t, ev->timestamp);
    struct thread *old, *new;
    int64_t ran_since, ran_since_raw = 0;

    if (!c) return -1;
    if (cs->old_tid != 0) {
        if (!(old = thread_of(w, cs->old_tid))) return -1;
        ran_since = INT64_MIN;
        if (old->state == TS_RUNNING && old->cpu == ev->cpu) {
            ran_since = old->since;
            ran_since_raw = old->since_raw;
        } else if (c->tid < 0) { /* the processor's first CSwitch */
            ran_since = c->first;
            ran_since_raw = c->first_raw;
        }
        if (ran_since != INT64_MIN) {
            old->state = TS_RUNNING;
            old->since = ran_since;
            old->since_raw = ran_since_raw;
            old->cpu = ev->cpu;
            old->priority = cs->old_thread_priority;
            if (end_state(w, old, t, 0) < 0) return -1;
        }
        old->reason = cs->old_thread_wait_reason;
        old->mode = cs->old_thread_wait_mode;
        old->since = t;
        old->since_raw = ev->timestamp;
        old->readied_by = -1;
        switch (cs->old_thread_state) {
        case KS_READY: case KS_STANDBY: case KS_DEFERRED_READY:
            old->state = TS_READY;
            old->ready_reason = 1;
            break;
        case KS_WAITING: case KS_TRANSITION: case KS_GATE_WAIT: case KS_WAITING_OUT_SWAP:
            old->state = TS_WAITING;
            break;
        case KS_TERMINATED:
            old->state = TS_GONE;
            break;
        default:
            old->state = TS_UNKNOWN;
        }
    }
    c->tid = cs->new_tid;
    if (cs->new_tid == 0) return 0;
    if (!(new = thread_of(w, cs->new_tid))) return -1;
    if (end_state(w, new, t, 0) < 0) return -1;
    new->state = TS_RUNNING;
    new->since = t;
    new->since_raw = ev->timestamp;
    new->cpu = ev->cpu;
    new->priority = cs->new_thread_priority;
    return 0;
}

static int on_ready(etl_chrome_writer *w, const etl_event *ev, const etl_kready_thread *rt, int64_t t)
{
    struct cpu *c = cpu_of(w, ev->cpu, t, ev->timestamp);
    struct thread *th;

    if (!c) return -1;
    if (rt->tid == 0) return 0;
    if (!(th = thread_of(w, rt->tid))) return -1;
    if (th->state == TS_RUNNING || th->state == TS_READY) return 0; /* woken while not waiting */
    if (th->state == TS_WAITING && end_state(w, th, t, 0) < 0) return -1;
    th->state = TS_READY;
    th->ready_reason = 0;
    th->since = t;
    th->since_raw = ev->timestamp;
    th->readied_by = (ev->has & ETL_HAS_PID_TID) && ev->tid != UINT32_MAX ? (int64_t)ev->tid : c->tid;
    return 0;
}

/* A Thread event: the process of its thread. A thread of another process than the one known
   is another thread (the tid was used again): what the old one was doing is forgotten. */
static int on_thread(etl_chrome_writer *w, const etl_event *ev, const etl_kthread *kt)
{
    struct thread *th;

    if (kt->tid == 0) return 0;
    if (!(th = thread_of(w, kt->tid))) return -1;
    if (th->has_pid && th->pid != kt->pid && (ev->opcode == 1 || ev->opcode == 3)) {
        th->state = TS_UNKNOWN;
        th->track_known = 0;
        th->last_end = INT64_MIN;
    }
    th->has_pid = 1;
    th->pid = kt->pid;
    return 0;
}

static int on_sample(etl_chrome_writer *w, const etl_event *ev, const etl_ksample *s, int64_t t)
{
    struct thread *th;
    etl_image_info in;
    uint32_t pid;
    int sel;

    if (w->o.no_samples || s->tid == 0 || t < w->o.from_ns || t > w->o.to_ns) return 0;
    if (!(th = thread_of(w, s->tid))) return -1;
    pid = th->track_known ? th->track_pid : thread_pid(w, th, ev->timestamp);
    sel = selected(w, pid, s->tid, ev->timestamp);
    if (sel <= 0) return sel;
    if (note_track(w, pid, s->tid, ev->timestamp) < 0) return -1;
    begin_event(w, ev->hook_id == 0x0F2F ? "PMC sample" : "Sample", "sample", 'i');
    fputs(",\"s\":\"t\"", w->f);
    put_ts(w, t);
    put_ids(w->f, pid, s->tid);
    fprintf(w->f, ",\"args\":{\"cpu\":%u,\"ip\":\"0x%" PRIx64 "\"", ev->cpu, s->instruction_pointer);
    if (ev->hook_id == 0x0F2F) fprintf(w->f, ",\"source\":%u", s->profile_source);
    if ((w->learned || w->o.images) && pid != UNKNOWN_PID &&
        etl_image_map_find(images(w), pid, s->instruction_pointer, ev->timestamp, &in) == 1) {
        char image[600];
        snprintf(image, sizeof image, "%s+0x%" PRIx64, in.base_name, s->instruction_pointer - in.base);
        fputs(",\"image\":", w->f);
        output_json_string(w->f, image);
    }
    fputs("}}", w->f);
    w->stats.samples++;
    return 0;
}

/* ---- user events ---- */

/* The decoded fields as JSON in w->buf ("{}" when none). NULL without memory. */
static const char *fields_json(etl_chrome_writer *w, const etl_decoded_event *de)
{
    size_t n;

    if (!de || de->source == ETL_SCHEMA_NONE) return "{}";
    n = etl_decoded_format_json(de, w->buf, w->buf_size);
    if (n >= w->buf_size) {
        char *b = realloc(w->buf, n + 1);
        if (!b) return NULL;
        w->buf = b;
        w->buf_size = n + 1;
        etl_decoded_format_json(de, w->buf, w->buf_size);
    }
    return w->buf;
}

/* The args object: the fields, with extra members (",\"k\":v", or "") added at its end. */
static void put_args(etl_chrome_writer *w, const char *fields, const char *extra)
{
    size_t n = strlen(fields);

    fputs(",\"args\":", w->f);
    if (!*extra) {
        fputs(fields, w->f);
        return;
    }
    /* fields is an object "{...}": extra goes before its brace */
    fwrite(fields, 1, n - 1, w->f);
    fputs(n > 2 ? extra : extra + 1, w->f);
    fputc('}', w->f);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static int on_user_event(etl_chrome_writer *w, const etl_event *ev, int64_t t)
{
    etl_decoded_event de;
    const etl_decoded_event *dp = NULL;
    char name[300], cat[ETL_GUID_STRING_SIZE], extra[160] = "", span_name[300] = "";
    const char *catp, *fields, *ev_name;
    int rc = 0, sel, span = 0;

    if (w->o.no_user_events || ev->pid == UINT32_MAX || ev->tid == UINT32_MAX) return 0;
    if (w->o.decoder) {
        rc = etl_decoder_decode(w->o.decoder, ev, &de);
        if (de.source == ETL_SCHEMA_KERNEL) return 0; /* a kernel class the timeline does not draw */
        dp = &de;
    }
    {   /* the thread's process, for the samples and states of the thread */
        struct thread *th = ev->tid ? thread_of(w, ev->tid) : NULL;
        if (ev->tid && !th) return -1;
        if (th && ev->pid) {
            th->has_pid = 1;
            th->pid = ev->pid;
        }
    }
    if (t < w->o.from_ns || t > w->o.to_ns) return 0;
    sel = selected(w, ev->pid, ev->tid, ev->timestamp);
    if (sel <= 0) return sel;
    catp = dp && dp->provider_name ? dp->provider_name : etl_guid_format(&ev->provider, cat);
    ev_name = dp ? dp->event_name : NULL;
    if (ev_name && dp->provider_name) {
        size_t n = strlen(dp->provider_name);
        if (strncmp(ev_name, dp->provider_name, n) == 0 && ev_name[n] == '/') ev_name += n + 1;
    }
    if (ev_name) snprintf(name, sizeof name, "%s", ev_name);
    else if (ev->has & ETL_HAS_ID) snprintf(name, sizeof name, "id %u", ev->id);
    else snprintf(name, sizeof name, "opcode %u", ev->opcode);
    if (dp && (ev->opcode == 1 || ev->opcode == 2) &&
        (dp->source == ETL_SCHEMA_MANIFEST || dp->source == ETL_SCHEMA_EVENTSOURCE ||
         dp->source == ETL_SCHEMA_TRACELOGGING)) {
        span = ev->opcode;
        if (dp->source == ETL_SCHEMA_TRACELOGGING) snprintf(span_name, sizeof span_name, "%s", name);
        else if (dp->task_name) snprintf(span_name, sizeof span_name, "%s", dp->task_name);
        else snprintf(span_name, sizeof span_name, "task %u", ev->task);
    }
    if (!(fields = fields_json(w, dp))) return -1;
    if (rc == ETL_FAILED) snprintf(extra, sizeof extra, ",\"decode_error\":true");
    else if (!dp || dp->source == ETL_SCHEMA_NONE)
        snprintf(extra, sizeof extra, ",\"id\":%u,\"opcode\":%u,\"payload_size\":%" PRIu32, ev->id, ev->opcode,
                 ev->payload_len);
    if (note_track(w, ev->pid, ev->tid, ev->timestamp) < 0) return -1;
    if (span) {
        uint64_t key = fnv(0xcbf29ce484222325ULL, &ev->pid, sizeof ev->pid);
        struct span *sp;
        int created;

        key = fnv(key, &ev->tid, sizeof ev->tid);
        key = fnv(key, &ev->provider, sizeof ev->provider);
        key = fnv(key, &ev->task, sizeof ev->task);
        key = fnv(key, span_name, strlen(span_name));
        if (span == 2 && (!(sp = table_find(&w->spans, key)) || !sp->open)) {
            size_t n = strlen(extra);
            snprintf(extra + n, sizeof extra - n, ",\"unmatched\":\"Stop without a Start\"");
            w->stats.unmatched_stops++;
            span = 0; /* an instant */
        } else {
            if (!(sp = table_get(&w->spans, key, &created))) return -1;
            if (created) {
                sp->pid = ev->pid;
                sp->tid = ev->tid;
                sp->id = ++w->next_span_id;
                sp->last = INT64_MIN;
                sp->name = strdup(span_name);
                sp->cat = strdup(catp);
                if (!sp->name || !sp->cat) return -1;
            }
            if (t < sp->last) {
                t = sp->last;
                w->stats.out_of_order++;
            }
            sp->last = t;
            if (span == 1) sp->open++;
            else sp->open--;
            if (span == 1) w->stats.spans++;
            begin_event(w, sp->name, sp->cat, span == 1 ? 'b' : 'e');
            fprintf(w->f, ",\"id\":\"0x%" PRIx64 "\"", sp->id);
            put_ts(w, t);
            put_ids(w->f, ev->pid, ev->tid);
            put_args(w, fields, extra);
            fputc('}', w->f);
            return 0;
        }
    }
    begin_event(w, name, catp, 'i');
    fputs(",\"s\":\"t\"", w->f);
    put_ts(w, t);
    put_ids(w->f, ev->pid, ev->tid);
    put_args(w, fields, extra);
    fputc('}', w->f);
    w->stats.instants++;
    return 0;
}

int etl_chrome_writer_add(etl_chrome_writer *w, const etl_event *ev, int64_t time_ns)
{
    etl_kernel_event ke;
    int rc = 0, k;

    if (w->finished) return ETL_FAILED;
    origin(w, time_ns);
    if (!w->have_last || time_ns > w->last) w->last = time_ns;
    w->have_last = 1;
    if (!w->learned && etl_name_map_add(w->names_map, ev) != ETL_OK) return ETL_FAILED;
    if (!cpu_of(w, ev->cpu, time_ns, ev->timestamp)) return ETL_FAILED;
    k = etl_kernel_decode(ev, &ke);
    if (k == 1) {
        switch (ke.kclass) {
        case ETL_KCLASS_CSWITCH: rc = on_cswitch(w, ev, &ke.u.cswitch, time_ns); break;
        case ETL_KCLASS_READY_THREAD: rc = on_ready(w, ev, &ke.u.ready_thread, time_ns); break;
        case ETL_KCLASS_THREAD: rc = on_thread(w, ev, &ke.u.thread); break;
        case ETL_KCLASS_SAMPLED_PROFILE: rc = on_sample(w, ev, &ke.u.sample, time_ns); break;
        default: break;
        }
    } else if (k == 0 && (ev->has & ETL_HAS_PID_TID) &&
               (ev->kind == ETL_KIND_EVENT || ev->kind == ETL_KIND_CLASSIC || ev->kind == ETL_KIND_INSTANCE)) {
        rc = on_user_event(w, ev, time_ns);
    }
    if (ferror(w->f)) return ETL_FATAL;
    return rc < 0 ? ETL_FAILED : ETL_OK;
}

/* ---- the end ---- */

static void put_name_meta(etl_chrome_writer *w, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
    begin_event(w, what, NULL, 'M');
    put_ids(w->f, pid, tid);
    fputs(",\"args\":{\"name\":", w->f);
    output_json_string(w->f, name);
    fputs("}}", w->f);
}

static int finish_states(etl_chrome_writer *w)
{
    size_t n;
    struct slot **v = table_sorted(&w->threads, &n);

    if (!v) return -1;
    for (size_t i = 0; i < n; i++) {
        struct thread *th = (struct thread *)v[i];
        if (th->state != TS_UNKNOWN && th->state != TS_GONE && end_state(w, th, w->last, 1) < 0) {
            free(v);
            return -1;
        }
    }
    free(v);
    return 0;
}

static int finish_spans(etl_chrome_writer *w)
{
    size_t n;
    struct slot **v = table_sorted(&w->spans, &n);

    if (!v) return -1;
    for (size_t i = 0; i < n; i++) {
        struct span *sp = (struct span *)v[i];
        for (; sp->open; sp->open--) {
            begin_event(w, sp->name, sp->cat, 'e');
            fprintf(w->f, ",\"id\":\"0x%" PRIx64 "\"", sp->id);
            put_ts(w, w->last > sp->last ? w->last : sp->last);
            put_ids(w->f, sp->pid, sp->tid);
            fputs(",\"args\":{\"unmatched\":\"no Stop before the end of the trace\"}}", w->f);
            w->stats.unmatched_starts++;
        }
    }
    free(v);
    return 0;
}

static int finish_names(etl_chrome_writer *w)
{
    size_t n;
    struct slot **v = table_sorted(&w->tracks, &n);
    int64_t last_pid = -1;

    if (!v) return -1;
    for (size_t i = 0; i < n; i++) {
        struct track *t = (struct track *)v[i];
        const char *name;
        if (t->pid != last_pid) {
            struct process *p = table_find(&w->processes, t->pid);
            int64_t raw = p && p->first_raw < t->first_raw ? p->first_raw : t->first_raw;
            name = t->pid == UNKNOWN_PID ? "(unknown process)" : etl_name_map_process(w->names_map, t->pid, raw);
            if (!name && t->pid == 0) name = "Idle";
            if (name) put_name_meta(w, "process_name", t->pid, 0, name);
            last_pid = t->pid;
        }
        name = etl_name_map_thread(w->names_map, t->tid, t->first_raw);
        if (name && *name) put_name_meta(w, "thread_name", t->pid, t->tid, name);
    }
    free(v);
    return 0;
}

int etl_chrome_writer_finish(etl_chrome_writer *w)
{
    const etl_chrome_stats *s = &w->stats;
    char when[40];
    int rc = 0;

    if (w->finished) return ETL_FAILED;
    w->finished = 1;
    if (!w->have_last) w->last = w->o.origin_ns != INT64_MIN ? w->o.origin_ns : w->learned ? w->learned_min : 0;
    origin(w, w->last);
    if (finish_states(w) < 0 || finish_spans(w) < 0 || finish_names(w) < 0) rc = -1;
    if (!w->started) fputs("{\"traceEvents\":[", w->f);
    etl_time_format(w->origin, when, sizeof when);
    fprintf(w->f,
            "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"libetl %s\",\"origin\":\"%s\","
            "\"slices\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"instants\":%" PRIu64 ",\"spans\":%" PRIu64
            ",\"unmatched_stops\":%" PRIu64 ",\"unmatched_starts\":%" PRIu64 ",\"out_of_order\":%" PRIu64
            ",\"unknown_threads\":%" PRIu64 "}}\n",
            etl_version(), when, s->slices, s->samples, s->instants, s->spans, s->unmatched_stops,
            s->unmatched_starts, s->out_of_order, s->unknown_threads);
    if (ferror(w->f)) return ETL_FATAL;
    return rc < 0 ? ETL_FAILED : ETL_OK;
}

int etl_chrome_write(FILE *f, etl_reader *r, const etl_chrome_options *o, etl_chrome_stats *stats)
{
    etl_chrome_writer *w;
    etl_event ev;
    int rc, status = ETL_OK;

    if (etl_chrome_writer_new(&w, f, o) != ETL_OK) return ETL_FAILED;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN)
        if (etl_chrome_writer_learn(w, &ev, etl_reader_time_ns(r, ev.timestamp)) != ETL_OK) {
            status = ETL_FAILED;
            goto out;
        }
    if (rc == ETL_FATAL || etl_reader_rewind(r) != ETL_OK) {
        status = ETL_FATAL;
        goto out;
    }
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        int k = etl_chrome_writer_add(w, &ev, etl_reader_time_ns(r, ev.timestamp));
        if (k == ETL_FATAL) {
            status = ETL_FATAL;
            goto out;
        }
        if (k != ETL_OK) status = ETL_FAILED;
    }
    if (rc == ETL_FATAL) status = ETL_FATAL;
    rc = etl_chrome_writer_finish(w);
    if (rc != ETL_OK && status == ETL_OK) status = rc;
    if (rc == ETL_FATAL) status = ETL_FATAL;
out:
    if (stats) etl_chrome_writer_stats(w, stats);
    etl_chrome_writer_free(w);
    return status;
}
