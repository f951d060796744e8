/* SPDX-License-Identifier: MIT */
/* The SQLite loader's decoded kernel tables, and its kernel thread, which writes those that need
   the image map (samples, stacks, LBR). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load/load.h"

/*
 * Frame lists are stored once: stacks that have the same frames, resolved to the same images,
 * share one set of stack_frames rows (stacks.frames). A frame list is known by a 128-bit hash of
 * its addresses and images; the table of hashes is bounded (emptied when full, which only
 * costs compactness).
 */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* A hash of an image's name, so that the same image in two processes (two entries of the
   image map, two pointers) counts as the same; remembered per pointer. */
static uint64_t name_hash(struct frame_sets *fs, const char *name)
{
    struct name_hash *c;
    uint64_t h = 0xCBF29CE484222325ull;

    if (!name) return 0;
    c = &fs->names[((uintptr_t)name >> 3) % (sizeof fs->names / sizeof fs->names[0])];
    if (c->name == name) return c->hash;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 0x100000001B3ull;
    c->name = name;
    c->hash = h;
    return h;
}

/* The id of the frame list fs->addr/image/offset[0..n), and whether it is new (*fresh). */
static int frame_set_id(struct frame_sets *fs, unsigned n, int64_t *id, int *fresh)
{
    uint64_t h1 = 0x243F6A8885A308D3ull ^ n, h2 = 0x13198A2E03707344ull + n;
    unsigned mask, i;

    for (unsigned k = 0; k < n; k++) {
        uint64_t a = fs->addr[k], im = name_hash(fs, fs->image[k]);
        h1 = mix64(h1 ^ a) + im;
        h2 = mix64((h2 + a * 0x9E3779B97F4A7C15ull) ^ (im << 1));
    }
    h1 = mix64(h1);
    h2 = mix64(h2 ^ h1);
    if (fs->count + 1 > fs->cap / 2) {
        if (fs->cap >= FRAME_SETS_MAX) {
            memset(fs->slot, 0, (size_t)fs->cap * sizeof *fs->slot);
            fs->count = 0;
        }
        else {
            unsigned cap = fs->cap ? 2 * fs->cap : 4096;
            struct frame_set *t = calloc(cap, sizeof *t);
            if (!t) return -1;
            for (unsigned k = 0; k < fs->cap; k++) {
                unsigned j;
                if (!fs->slot[k].id) continue;
                for (j = (unsigned)fs->slot[k].h1 & (cap - 1); t[j].id; j = (j + 1) & (cap - 1)) {}
                t[j] = fs->slot[k];
            }
            free(fs->slot);
            fs->slot = t;
            fs->cap = cap;
        }
    }
    mask = fs->cap - 1;
    for (i = (unsigned)h1 & mask; fs->slot[i].id; i = (i + 1) & mask) {
        if (fs->slot[i].h1 == h1 && fs->slot[i].h2 == h2) {
            *id = fs->slot[i].id;
            *fresh = 0;
            return 0;
        }
    }
    fs->slot[i].h1 = h1;
    fs->slot[i].h2 = h2;
    fs->slot[i].id = *id = ++fs->next_id;
    fs->count++;
    *fresh = 1;
    return 0;
}

static int frames_reserve(struct frame_sets *fs, unsigned n)
{
    if (n <= fs->frames_cap) return 0;
    unsigned cap = n < 256 ? 256 : n;
    uint64_t *a = realloc(fs->addr, cap * sizeof *a), *o;
    if (a) fs->addr = a;
    o = realloc(fs->offset, cap * sizeof *o);
    if (o) fs->offset = o;
    const char **im = realloc(fs->image, cap * sizeof *im);
    if (im) fs->image = im;
    if (!a || !o || !im) return -1;
    fs->frames_cap = cap;
    return 0;
}
/* A stack's row, and its frames when no stack before had the same. */
static int insert_stack(struct kernel_side *ks, const struct input *in, int64_t event, int64_t time_ns,
                        const char *kind, int64_t owner, int64_t event_ts, int64_t pid, int64_t tid, int has_key,
                        uint64_t key, const uint8_t *frames, unsigned count, unsigned frame_size, int64_t lookup_ts)
{
    struct frame_sets *fs = &ks->frame_sets;
    struct sink *k = &ks->sink;
    struct rowval *r;
    int64_t frames_id = 0;
    int fresh = 0;

    if (count) {
        if (frames_reserve(fs, count) != 0) return etl_sink_error(k, "out of memory");
        for (unsigned i = 0; i < count; i++) {
            uint64_t a = 0;
            etl_image_info info;
            for (int b = (int)frame_size - 1; b >= 0; b--) a = a << 8 | frames[frame_size * i + (unsigned)b];
            fs->addr[i] = a;
            fs->image[i] = NULL;
            fs->offset[i] = 0;
            if (in->map && etl_image_map_find(in->map, pid < 0 ? 0 : (uint32_t)pid, a, lookup_ts, &info) == 1) {
                fs->image[i] = info.base_name;
                fs->offset[i] = a - info.base;
            }
        }
        if (frame_set_id(fs, count, &frames_id, &fresh) != 0) return etl_sink_error(k, "out of memory");
    }
    r = row_begin(k, S_STACK);
    rv_i64(r, 1, ks->next_stack++);
    rv_i64(r, 2, event);
    rv_i64(r, 3, in->trace);
    rv_i64(r, 4, time_ns);
    rv_text(r, 5, kind);
    if (owner) rv_i64(r, 6, owner); else rv_null(r, 6);
    if (event_ts != INT64_MIN) rv_i64(r, 7, event_ts); else rv_null(r, 7);
    if (pid >= 0) rv_i64(r, 8, pid); else rv_null(r, 8);
    if (tid >= 0) rv_i64(r, 9, tid); else rv_null(r, 9);
    if (has_key) rv_u64(r, 10, key); else rv_null(r, 10);
    rv_i64(r, 11, count);
    if (frames_id) rv_i64(r, 12, frames_id); else rv_null(r, 12);
    if (etl_sink_row_end(k, S_STACK) != 0) return -1;
    for (unsigned i = 0; fresh && i < count; i++) {
        r = row_begin(k, S_FRAME);
        rv_i64(r, 1, frames_id);
        rv_i64(r, 2, i);
        rv_u64(r, 3, fs->addr[i]);
        rv_text(r, 4, fs->image[i]);
        if (fs->image[i]) rv_u64(r, 5, fs->offset[i]); else rv_null(r, 5);
        /* Only a new frame list's frames are looked up: each distinct list once. */
        if (etl_load_rv_function(ks, in, r, 6, pid, fs->addr[i], lookup_ts, i > 0) != 0) return -1;
        if (etl_sink_row_end(k, S_FRAME) != 0) return -1;
    }
    return 0;
}

/* The extended data items of an event (event_ext rows). */
static int insert_ext(struct sink *k, const etl_event *ev, int64_t event)
{
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        struct rowval *r;
        if (etl_event_ext_item_get(ev, i, &it) != ETL_OK) continue;
        r = row_begin(k, S_EXT);
        rv_i64(r, 1, event);
        rv_i64(r, 2, i);
        rv_i64(r, 3, it.type);
        rv_text(r, 4, etl_ext_type_name(it.type));
        rv_blob(r, 5, it.data, it.size);
        if (etl_sink_row_end(k, S_EXT) != 0) return -1;
    }
    return 0;
}

/* STACK_TRACE32/64 extended items of an EVENT_HEADER event: MatchId, then the frames. */
static int insert_ext_stacks(struct kernel_side *ks, const struct input *in, const etl_event *ev, int64_t event,
                             int64_t time_ns)
{
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        unsigned fs;
        if (etl_event_ext_item_get(ev, i, &it) != ETL_OK) continue;
        if (it.type != ETL_EXT_STACK_TRACE32 && it.type != ETL_EXT_STACK_TRACE64) continue;
        fs = it.type == ETL_EXT_STACK_TRACE64 ? 8 : 4;
        if (it.size < 8) continue;
        if (insert_stack(ks, in, event, time_ns, "ext", event, ev->timestamp,
                         (ev->has & ETL_HAS_PID_TID) ? (int64_t)ev->pid : -1,
                         (ev->has & ETL_HAS_PID_TID) ? (int64_t)ev->tid : -1, 0, 0, it.data + 8,
                         (it.size - 8u) / fs, fs, ev->timestamp) != 0)
            return -1;
    }
    return 0;
}

/* Which thread writes which class: the main thread those that need no image map (processes,
   threads, images, context switches), straight into the database; the kernel thread those
   that do (samples, stacks, LBR), copied in at the end. Measured on a kernel trace, this
   shares the work about evenly and keeps the copy small. */
int etl_load_main_thread_class(int kclass)
{
    return kclass == ETL_KCLASS_PROCESS || kclass == ETL_KCLASS_THREAD || kclass == ETL_KCLASS_IMAGE ||
           kclass == ETL_KCLASS_CSWITCH || kclass == ETL_KCLASS_READY_THREAD;
}

int etl_load_kernel_row(struct sink *k, struct kernel_side *ks, const struct input *in, int64_t owner,
                        const etl_event *ev, const etl_kernel_event *ke, int64_t event, int64_t time_ns)
{
    char sid[200];

    switch (ke->kclass) {
    case ETL_KCLASS_PROCESS: {
        const etl_kprocess *p = &ke->u.process;
        int64_t run = event;
        struct rowval *r = row_begin(k, S_PROCESS);
        if (etl_process_runs_add(in->runs, ke, event, &run) < 0) return etl_sink_error(k, "out of memory");
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns);
        rv_text(r, 4, ke->name);
        rv_i64(r, 5, p->pid); rv_i64(r, 6, p->parent_pid); rv_i64(r, 7, p->session_id);
        rv_i64(r, 8, p->exit_status); rv_u64(r, 9, p->unique_process_key);
        rv_u64(r, 10, p->directory_table_base); rv_i64(r, 11, p->flags);
        rv_text(r, 12, p->sid && etl_sid_format(p->sid, p->sid_size, sid, sizeof sid)[0] ? sid : NULL);
        if (etl_sink_rv_string(k, r, 13, &p->image_file_name, 0) ||
            etl_sink_rv_string(k, r, 14, &p->command_line, 1) ||
            etl_sink_rv_string(k, r, 15, &p->package_full_name, 2) ||
            etl_sink_rv_string(k, r, 16, &p->application_id, 3))
            return etl_sink_error(k, "out of memory");
        rv_i64(r, 17, run);
        return etl_sink_row_end(k, S_PROCESS);
    }
    case ETL_KCLASS_THREAD: {
        const etl_kthread *t = &ke->u.thread;
        struct rowval *r = row_begin(k, S_THREAD);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns);
        rv_text(r, 4, ke->name);
        rv_i64(r, 5, t->pid); rv_i64(r, 6, t->tid);
        rv_u64(r, 7, t->stack_base); rv_u64(r, 8, t->stack_limit);
        rv_u64(r, 9, t->user_stack_base); rv_u64(r, 10, t->user_stack_limit);
        rv_u64(r, 11, t->start_address); rv_u64(r, 12, t->win32_start_address);
        rv_u64(r, 13, t->teb_base); rv_i64(r, 14, t->sub_process_tag);
        rv_i64(r, 15, t->base_priority); rv_i64(r, 16, t->page_priority);
        rv_i64(r, 17, t->io_priority); rv_i64(r, 18, t->thread_flags);
        if (etl_sink_rv_string(k, r, 19, &t->name, 0)) return etl_sink_error(k, "out of memory");
        return etl_sink_row_end(k, S_THREAD);
    }
    case ETL_KCLASS_IMAGE: {
        const etl_kimage *im = &ke->u.image;
        struct rowval *r = row_begin(k, S_IMAGE);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns);
        rv_text(r, 4, ke->name);
        rv_i64(r, 5, im->pid); rv_u64(r, 6, im->image_base); rv_u64(r, 7, im->image_size);
        rv_i64(r, 8, im->checksum); rv_i64(r, 9, im->time_date_stamp);
        rv_i64(r, 10, im->signature_level); rv_i64(r, 11, im->signature_type);
        rv_u64(r, 12, im->default_base);
        if (etl_sink_rv_string(k, r, 13, &im->file_name, 0)) return etl_sink_error(k, "out of memory");
        if (im->file_name.data) {
            const char *full = k->scratch[0], *base = full;
            for (const char *c = full; *c; c++)
                if (*c == '\\' || *c == '/') base = c + 1;
            rv_text(r, 14, base);
        }
        else rv_null(r, 14);
        return etl_sink_row_end(k, S_IMAGE);
    }
    case ETL_KCLASS_CSWITCH: {
        const etl_kcswitch *c = &ke->u.cswitch;
        struct rowval *r = row_begin(k, S_CSWITCH);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_i64(r, 5, c->new_tid); rv_i64(r, 6, c->old_tid);
        rv_i64(r, 7, c->new_thread_priority); rv_i64(r, 8, c->old_thread_priority);
        rv_i64(r, 9, c->previous_cstate); rv_i64(r, 10, c->old_thread_wait_reason);
        rv_i64(r, 11, c->old_thread_wait_mode); rv_i64(r, 12, c->old_thread_state);
        rv_i64(r, 13, c->old_thread_wait_ideal_processor); rv_i64(r, 14, c->new_thread_wait_time);
        rv_i64(r, 15, c->old_thread_remaining_quantum);
        return etl_sink_row_end(k, S_CSWITCH);
    }
    case ETL_KCLASS_READY_THREAD: {
        const etl_kready_thread *t = &ke->u.ready_thread;
        struct rowval *r = row_begin(k, S_READY);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_i64(r, 5, t->tid); rv_i64(r, 6, t->adjust_reason); rv_i64(r, 7, t->adjust_increment);
        rv_i64(r, 8, t->flags);
        return etl_sink_row_end(k, S_READY);
    }
    case ETL_KCLASS_SAMPLED_PROFILE: {
        const etl_ksample *p = &ke->u.sample;
        int64_t pid = in->map ? etl_image_map_thread_pid(in->map, p->tid, ev->timestamp) : -1;
        struct rowval *r = row_begin(k, S_SAMPLE);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_i64(r, 5, p->tid);
        if (pid >= 0) rv_i64(r, 6, pid); else rv_null(r, 6);
        rv_u64(r, 7, p->instruction_pointer);
        if (ev->hook_id == 0x0F2F) { /* PerfInfo/PMCSample */ rv_null(r, 8); rv_null(r, 9); rv_null(r, 10); }
        else { rv_i64(r, 8, p->count); rv_i64(r, 9, p->flags); rv_i64(r, 10, p->rank); }
        etl_load_rv_image(in, r, 11, pid, p->instruction_pointer, ev->timestamp);
        rv_i64(r, 13, p->profile_source);
        if (etl_load_rv_function(ks, in, r, 14, pid, p->instruction_pointer, ev->timestamp, 0) != 0) return -1;
        return etl_sink_row_end(k, S_SAMPLE);
    }
    case ETL_KCLASS_STACK: case ETL_KCLASS_STACK_KEY: case ETL_KCLASS_STACK_KEY_DEF: {
        const etl_kstack *st = &ke->u.stack;
        int def = ke->kclass == ETL_KCLASS_STACK_KEY_DEF;
        const char *kind = ke->kclass == ETL_KCLASS_STACK ? "stack"
                           : def ? "key_def"
                           : ev->hook_id == 0x1825 ? "key_kernel" : "key_user";
        return insert_stack(ks, in, event, time_ns, kind, owner, def ? INT64_MIN : st->event_timestamp,
                            def ? -1 : (int64_t)st->pid, def ? -1 : (int64_t)st->tid, ke->kclass != ETL_KCLASS_STACK,
                            st->stack_key, st->frames, st->frame_count, st->frame_size,
                            def ? ev->timestamp : st->event_timestamp);
    }
    case ETL_KCLASS_LBR: {
        const etl_lbr *b = &ke->u.lbr;
        int64_t id = ks->next_lbr++;
        struct rowval *lr = row_begin(k, S_LBR);
        rv_i64(lr, 1, id); rv_i64(lr, 2, event); rv_i64(lr, 3, in->trace); rv_i64(lr, 4, time_ns);
        rv_i64(lr, 5, b->timestamp); rv_i64(lr, 6, b->pid); rv_i64(lr, 7, b->tid); rv_i64(lr, 8, b->filters);
        rv_i64(lr, 9, b->count);
        if (etl_sink_row_end(k, S_LBR) != 0) return -1;
        for (unsigned i = 0; i < b->count; i++) {
            etl_lbr_entry e = etl_lbr_entry_at(b, i);
            struct rowval *r = row_begin(k, S_LBR_ENTRY);
            rv_i64(r, 1, id); rv_i64(r, 2, i); rv_u64(r, 3, e.from); rv_u64(r, 4, e.to);
            etl_load_rv_image(in, r, 5, b->pid, e.from, b->timestamp);
            etl_load_rv_image(in, r, 7, b->pid, e.to, b->timestamp);
            if (etl_sink_row_end(k, S_LBR_ENTRY) != 0) return -1;
        }
        return 0;
    }
    default:
        return 0;
    }
}

/* The kernel thread's part of one event: its decoded kernel row, and the stacks of its
   extended items. */
static int kernel_event(struct kernel_side *ks, const struct input *in, struct kinput *ki, const etl_merge_event *me)
{
    const etl_event *ev = me->event;
    int64_t event = ks->next_event++, time_ns = etl_clock_time_ns(etl_merge_clock(ks->merge), me->timestamp);
    etl_kernel_event ke;
    int krc = etl_kernel_decode(ev, &ke);
    int64_t owner;

    /* A stack that follows on this processor with this event's timestamp belongs to it. */
    if (!ki->owners && !(ki->owners = etl_stack_owners_new())) return etl_sink_error(&ks->sink, "out of memory");
    if (etl_stack_owners_add(ki->owners, ev, krc == 1 ? &ke : NULL, event, &owner) != ETL_OK)
        return etl_sink_error(&ks->sink, "out of memory");
    /* A payload that does not fit the class's layout does not fit its schema either: the main
       thread's decoding of the fields lists it in lost (decode_failed). */
    if (krc == 1 && !etl_load_main_thread_class(ke.kclass) &&
        etl_load_kernel_row(&ks->sink, ks, in, owner, ev, &ke, event, time_ns) != 0)
        return -1;
    if (ev->ext_count) {
        if (insert_ext(&ks->sink, ev, event) != 0) return -1;
        if (ev->kind == ETL_KIND_EVENT && insert_ext_stacks(ks, in, ev, event, time_ns) != 0) return -1;
    }
    return 0;
}

static void quiet_message(void *arg, const etl_merge_message *msg)
{
    (void)arg, (void)msg;
}

/* The kernel thread: the same merge as the main thread's, event by event with the same event
   numbers, writing the decoded kernel tables into its own database. */
void *etl_load_kernel_thread(void *arg)
{
    struct kernel_side *ks = arg;
    struct etl_sqlite_loader *l = ks->l;
    etl_merge_options mo;
    etl_merge_event me;
    uint64_t n = 0;
    int rc;

    ks->rc = -1;
    memset(&mo, 0, sizeof mo);
    mo.on_message = quiet_message;
    if ((!ks->sink.backend && etl_sink_exec(&ks->sink, "BEGIN") != 0) || etl_sink_prepare(&ks->sink) != 0) goto out;
    if (etl_merge_open(&ks->merge, l->paths, l->ninputs, &mo) == ETL_FATAL) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s",
                         ks->merge ? etl_merge_error(ks->merge) : "out of memory");
        goto out;
    }
    while ((rc = etl_merge_next(ks->merge, &me)) == ETL_OK || rc == ETL_WARN) {
        struct input *in = me.input < l->ninputs ? &l->in[me.input] : NULL;
        if (!in || kernel_event(ks, in, &ks->kin[in - l->in], &me) != 0) goto out;
        if ((++n & 4095) == 0 && atomic_load(&l->stop)) goto out;
    }
    /* An input that fails mid-way: the main thread, reading the same, reports it. */
    if (etl_sink_flush(&ks->sink) != 0) goto out;
    etl_sink_finalize(&ks->sink);
    ks->rows_s = etl_load_thread_cpu_s();
    if (!ks->sink.backend && (etl_load_create_indexes(&ks->sink) != 0 || etl_sink_exec(&ks->sink, "COMMIT") != 0))
        goto out;
    ks->rc = 0;
out:
    if (ks->rc != 0) atomic_store(&l->stop, 1);
    etl_sink_close(&ks->sink);
    ks->cpu_s = etl_load_thread_cpu_s();
    return NULL;
}

/* The kernel thread's database: a file beside the output with the same tables, attached to
   the main connection (before its transaction) so that its rows can be copied at the end. */
int etl_load_kernel_open(struct etl_sqlite_loader *l, int fresh)
{
    struct kernel_side *ks = &l->kernel;
    char *sql;
    int fd, rc;

    ks->l = l;
    ks->sink.l = l;
    ks->sink.label = l->output;
    ks->kin = calloc(l->ninputs, sizeof *ks->kin);
    ks->path = malloc(strlen(l->output) + 16);
    if (ks->sink.backend) { /* streamed: no database of its own */
        free(ks->path);
        ks->path = NULL;
        ks->next_stack = ks->next_lbr = 1;
        return ks->kin ? 0 : etl_sink_error(&l->sink, "out of memory");
    }
    if (!ks->kin || !ks->path) return etl_sink_error(&l->sink, "out of memory");
    sprintf(ks->path, "%s.tmp-XXXXXX", l->output);
    fd = mkstemp(ks->path);
    if (fd < 0) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: cannot create a file beside it: %s", l->output,
                         strerror(errno));
        free(ks->path);
        ks->path = NULL;
        l->sink.failed = 1;
        return -1;
    }
    close(fd);
    if (sqlite3_open_v2(ks->path, &ks->sink.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        etl_sink_exec(&ks->sink, "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                                 "PRAGMA cache_size = -16384") != 0 ||
        etl_sink_exec(&ks->sink, etl_sqlite_schema_tables) != 0) {
        etl_sink_error(&ks->sink, "kernel tables");
        l->sink.failed = 1;
        return -1;
    }
    if (!fresh) {
        ks->frame_sets.next_id = etl_sink_max(&l->sink, "SELECT max(frames) FROM stack_frames");
        ks->next_stack = etl_sink_max(&l->sink, "SELECT max(stack) FROM stacks") + 1;
        ks->next_lbr = etl_sink_max(&l->sink, "SELECT max(lbr) FROM lbr") + 1;
        if (etl_load_functions_read(l) != 0) return -1;
    }
    else ks->next_stack = ks->next_lbr = 1;
    sql = sqlite3_mprintf("ATTACH %Q AS kernel", ks->path);
    rc = sql ? etl_sink_exec(&l->sink, sql) : etl_sink_error(&l->sink, "out of memory");
    sqlite3_free(sql);
    /* Attached: from now on only the kernel thread uses the file, until it closes it. */
    return rc == 0 ? etl_sink_exec(&ks->sink, "PRAGMA locking_mode = EXCLUSIVE") : rc;
}

/* The tables the kernel thread fills, copied into the main database at the end. */
static const char *const kernel_tables[] = { "event_ext", "samples", "stacks", "stack_frames", "lbr", "lbr_entries",
                                             "functions" };

int etl_load_kernel_copy(struct etl_sqlite_loader *l)
{
    char sql[256];

    for (size_t i = 0; i < sizeof kernel_tables / sizeof kernel_tables[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO main.%s SELECT * FROM kernel.%s", kernel_tables[i], kernel_tables[i]);
        if (etl_sink_exec(&l->sink, sql) != 0) return -1;
    }
    return 0;
}

