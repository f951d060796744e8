/* SPDX-License-Identifier: MIT */
/* The SQLite loader's main thread rows: traces, providers, events (batched), lost, disk_io and
   syscalls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

/* ------------------------------------------------------------------ providers */

static uint32_t guid_hash(const etl_guid *g)
{
    uint32_t h = g->data1 * 2654435761u;
    h ^= ((uint32_t)g->data2 << 16 | g->data3) * 2246822519u;
    for (int i = 0; i < 8; i++) h = (h ^ g->data4[i]) * 16777619u;
    return h;
}

/* Puts (g, id) into the table, which has room. */
static void provider_put(struct provider_slot *t, unsigned cap, const etl_guid *g, int64_t id)
{
    unsigned j;

    for (j = guid_hash(g) & (cap - 1); t[j].id; j = (j + 1) & (cap - 1)) {}
    t[j].guid = *g;
    t[j].id = id;
}

/* Makes room for one more provider; -1 without memory. */
static int provider_room(struct etl_sqlite_loader *l)
{
    unsigned cap = 2 * l->provider_cap;
    struct provider_slot *t;

    if (2 * (l->provider_count + 1) <= l->provider_cap) return 0;
    t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (unsigned k = 0; k < l->provider_cap; k++)
        if (l->providers[k].id) provider_put(t, cap, &l->providers[k].guid, l->providers[k].id);
    free(l->providers);
    l->providers = t;
    l->provider_cap = cap;
    return 0;
}

/* The providers.provider of g, inserting the row on first sight; -1 on error. */
int64_t etl_load_provider_id(struct etl_sqlite_loader *l, const etl_guid *g)
{
    uint32_t mask = l->provider_cap - 1, i = guid_hash(g) & mask;
    char text[ETL_GUID_STRING_SIZE];
    struct rowval *r;
    const char *name;
    int64_t id;

    for (; l->providers[i].id; i = (i + 1) & mask)
        if (etl_guid_equal(&l->providers[i].guid, g)) return l->providers[i].id;
    if (provider_room(l) != 0) return -1;
    id = l->next_provider++;
    provider_put(l->providers, l->provider_cap, g, id);
    l->provider_count++;
    /* a back end takes the providers at the end, with the names known then */
    if (l->sink.backend) return id;
    name = etl_decoder_provider_name(l->decoder, g);
    if (!name) name = etl_guid_name(g);
    r = row_begin(&l->sink, S_PROVIDER);
    rv_i64(r, 1, id);
    rv_text(r, 2, etl_guid_format(g, text));
    rv_text(r, 3, name);
    if (etl_sink_row_end(&l->sink, S_PROVIDER) != 0) return -1;
    return id;
}

/* Loads the providers an appended database already has. */
int etl_load_providers(struct etl_sqlite_loader *l)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(l->sink.db, "SELECT provider, guid FROM providers", -1, &s, NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "reading providers");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        etl_guid g;
        const char *text = (const char *)sqlite3_column_text(s, 1);
        if (!text || etl_guid_parse(text, &g) != ETL_OK) continue;
        if (provider_room(l) != 0) {
            sqlite3_finalize(s);
            return etl_sink_error(&l->sink, "out of memory");
        }
        provider_put(l->providers, l->provider_cap, &g, sqlite3_column_int64(s, 0));
        l->provider_count++;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : etl_sink_error(&l->sink, "reading providers");
}

/* ------------------------------------------------------------------ lost and traces */

/* The providers' names as the decoder knows them now: those a TraceLogging event taught it after
   the provider's row was written, and those of an appended database's providers that a manifest
   now names. */
int etl_load_provider_names(struct etl_sqlite_loader *l)
{
    sqlite3_stmt *s;
    int rc = SQLITE_DONE;

    if (sqlite3_prepare_v2(l->sink.db, "UPDATE providers SET name = ?2 WHERE provider = ?1 AND name IS NOT ?2", -1, &s,
                           NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "providers");
    for (unsigned i = 0; i < l->provider_cap && rc == SQLITE_DONE; i++) {
        const char *name;
        if (!l->providers[i].id || !(name = etl_decoder_provider_name(l->decoder, &l->providers[i].guid))) continue;
        bind_i64(s, 1, l->providers[i].id);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : etl_sink_error(&l->sink, "providers");
}

int etl_load_lost(struct etl_sqlite_loader *l, int64_t trace, const char *kind, int64_t provider, int64_t count,
                  int64_t offset, const char *message)
{
    struct rowval *r = row_begin(&l->sink, S_LOST);

    rv_i64(r, 1, trace);
    rv_text(r, 2, kind);
    if (provider > 0) rv_i64(r, 3, provider); else rv_null(r, 3);
    if (count >= 0) rv_i64(r, 4, count); else rv_null(r, 4);
    if (offset >= 0) rv_i64(r, 5, offset); else rv_null(r, 5);
    rv_text(r, 6, message);
    return etl_sink_row_end(&l->sink, S_LOST);
}

/* The traces row of an input (TRACE_COLUMNS values) as its header gives it; clock_source ..
   warnings (the last five) NULL: they are known after the load. The texts point into ti, mode
   and v (64 bytes). */
#define TRACE_COLUMNS 35
static void trace_values(const struct input *in, const etl_trace_info *ti, struct rowval *r, char mode[512], char v[64])
{
    int i = 1;

    rv_i64(r, i++, in->trace);
    rv_text(r, i++, in->path);
    rv_text(r, i++, ti->logger_name);
    rv_text(r, i++, ti->log_file_name);
    rv_i64(r, i++, ti->log_file_mode);
    rv_text(r, i++, etl_log_file_mode_format(ti->log_file_mode, mode, 512));
    rv_text(r, i++, etl_clock_type_name(ti->clock.type));
    rv_i64(r, i++, ti->clock.type);
    rv_i64(r, i++, ti->clock.perf_freq);
    rv_i64(r, i++, ti->clock.cpu_speed_mhz);
    rv_i64(r, i++, ti->clock.start_timestamp);
    rv_i64(r, i++, etl_time_from_filetime(ti->clock.start_time));
    if (ti->end_time) rv_i64(r, i++, etl_time_from_filetime(ti->end_time)); else rv_null(r, i++);
    if (ti->boot_time) rv_i64(r, i++, etl_time_from_filetime(ti->boot_time)); else rv_null(r, i++);
    rv_i64(r, i++, ti->timezone_bias);
    snprintf(v, 32, "%u.%u.%u", ti->os_major, ti->os_minor, (unsigned)ti->os_build);
    rv_text(r, i++, v);
    snprintf(v + 32, 32, "%u.%u", ti->layout_major, ti->layout_minor);
    rv_text(r, i++, v + 32);
    rv_i64(r, i++, ti->pointer_size);
    rv_i64(r, i++, ti->number_of_processors);
    rv_i64(r, i++, ti->buffer_size);
    rv_i64(r, i++, ti->maximum_file_size);
    rv_i64(r, i++, ti->timer_resolution);
    rv_i64(r, i++, ti->start_buffers);
    rv_i64(r, i++, ti->buffers_written);
    rv_i64(r, i++, ti->events_lost);
    rv_i64(r, i++, ti->buffers_lost);
    rv_i64(r, i++, ti->buffers);
    rv_i64(r, i++, ti->compressed_buffers);
    rv_i64(r, i++, ti->damaged_buffers);
    rv_u64(r, i++, ti->file_size);
    while (i <= TRACE_COLUMNS) rv_null(r, i++); /* clock_source .. warnings: after the load */
}

int etl_load_trace(struct etl_sqlite_loader *l, struct input *in, const etl_trace_info *ti)
{
    struct rowval r[TRACE_COLUMNS];
    sqlite3_stmt *s;
    char mode[512], v[64];
    int rc;

    in->perf_freq = ti->clock.perf_freq;
    if (l->sink.backend) {
        /* the row is made at the end: the header kept until then (the reader that has it closes) */
        in->info = *ti;
        in->info.logger_name = in->info_text[0] = strdup(ti->logger_name);
        in->info.log_file_name = in->info_text[1] = strdup(ti->log_file_name);
        if (!in->info_text[0] || !in->info_text[1]) return etl_sink_error(&l->sink, "out of memory");
    }
    else {
        if (sqlite3_prepare_v2(l->sink.db,
                               "INSERT INTO traces VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                               "?,?,?,?,?)",
                               -1, &s, NULL) != SQLITE_OK)
            return etl_sink_error(&l->sink, "traces");
        trace_values(in, ti, r, mode, v);
        etl_sink_bind_row(s, r, TRACE_COLUMNS);
        rc = sqlite3_step(s);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) return etl_sink_error(&l->sink, "traces");
    }
    if (ti->events_lost && etl_load_lost(l, in->trace, "events_lost", 0, ti->events_lost, -1,
                                         "EventsLost of the logfile header") != 0)
        return -1;
    if (ti->buffers_lost && etl_load_lost(l, in->trace, "buffers_lost", 0, ti->buffers_lost, -1,
                                          "BuffersLost of the logfile header") != 0)
        return -1;
    return 0;
}

int etl_load_trace_finish(struct etl_sqlite_loader *l, struct input *in)
{
    sqlite3_stmt *s;
    etl_merge_input_info mi;
    int rc, has_source;

    if (etl_load_fields_lost(l, in) != 0) return -1;
    has_source = etl_merge_input_get(l->merge, (unsigned)in->merge_index, &mi) == ETL_OK;
    if (l->sink.backend) {
        struct rowval r[TRACE_COLUMNS];
        char mode[512], v[64];
        trace_values(in, &in->info, r, mode, v);
        if (has_source) rv_i64(r, 31, l->first_trace + (int64_t)mi.clock_source);
        rv_u64(r, 32, in->events);
        if (in->events) {
            rv_i64(r, 33, in->first_ns);
            rv_i64(r, 34, in->last_ns);
        }
        rv_i64(r, 35, in->warnings);
        return l->sink.backend->trace(l->sink.backend->arg, r, TRACE_COLUMNS) == 0 ? 0 : etl_sink_error(&l->sink, "traces");
    }
    if (sqlite3_prepare_v2(l->sink.db,
                           "UPDATE traces SET clock_source = ?2, events = ?3, first_time_ns = ?4, last_time_ns = ?5, "
                           "warnings = ?6 WHERE trace = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "traces");
    bind_i64(s, 1, in->trace);
    if (has_source) bind_i64(s, 2, l->first_trace + (int64_t)mi.clock_source);
    bind_u64(s, 3, in->events);
    if (in->events) {
        bind_i64(s, 4, in->first_ns);
        bind_i64(s, 5, in->last_ns);
    }
    bind_i64(s, 6, in->warnings);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : etl_sink_error(&l->sink, "traces");
}

/* A back end's providers rows, at the end: with the names the decoder knows then (what
   etl_load_provider_names makes of a database's). */
int etl_load_providers_out(struct etl_sqlite_loader *l)
{
    char text[ETL_GUID_STRING_SIZE];

    for (unsigned i = 0; i < l->provider_cap; i++) {
        const etl_guid *g = &l->providers[i].guid;
        const char *name;
        struct rowval *r;
        if (!l->providers[i].id) continue;
        if (!(name = etl_decoder_provider_name(l->decoder, g))) name = etl_guid_name(g);
        r = row_begin(&l->sink, S_PROVIDER);
        rv_i64(r, 1, l->providers[i].id);
        rv_text(r, 2, etl_guid_format(g, text));
        rv_text(r, 3, name);
        if (etl_sink_row_end(&l->sink, S_PROVIDER) != 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ events */

/* Events rows are inserted EVENT_BATCH at a time, by one multi-row INSERT: SQLite's work per
   statement (start, halt, reset) is then shared by the rows. */
char *etl_load_event_batch_sql(void)
{
    size_t cap = 64 + (size_t)EVENT_BATCH * EVENT_COLUMNS * 8;
    char *sql = malloc(cap);
    size_t n;

    if (!sql) return NULL;
    n = (size_t)snprintf(sql, cap, "INSERT INTO events VALUES ");
    for (unsigned r = 0; r < EVENT_BATCH; r++) {
        n += (size_t)snprintf(sql + n, cap - n, "%s(", r ? "," : "");
        for (unsigned c = 0; c < EVENT_COLUMNS; c++) n += (size_t)snprintf(sql + n, cap - n, c ? ",?" : "?");
        n += (size_t)snprintf(sql + n, cap - n, ")");
    }
    return sql;
}

/* Binds row r at parameters base+1 .. base+EVENT_COLUMNS of s. */
static void bind_event_row(sqlite3_stmt *s, int base, const struct event_row *r, int no_payload)
{
    for (int c = 0; c < EVENT_INT_COLUMNS; c++) {
        if (r->nulls & (1u << c)) sqlite3_bind_null(s, base + c + 1);
        else sqlite3_bind_int64(s, base + c + 1, r->v[c]);
    }
    if (r->has_fields) sqlite3_bind_text(s, base + EVENT_COLUMNS - 1, r->fields, (int)r->fields_len, SQLITE_STATIC);
    else sqlite3_bind_null(s, base + EVENT_COLUMNS - 1);
    if (no_payload) sqlite3_bind_null(s, base + EVENT_COLUMNS);
    else sqlite3_bind_blob(s, base + EVENT_COLUMNS, r->payload_len ? (const void *)r->payload : "",
                           (int)r->payload_len, SQLITE_STATIC);
}

/* Inserts the rows waiting: all of them in one statement when the batch is full, else one by one. */
int etl_load_flush_events(struct etl_sqlite_loader *l)
{
    sqlite3_stmt *s;
    int rc;

    if (l->sink.backend) {
        rc = l->sink.backend->events(l->sink.backend->arg, l->batch, l->nbatch, l->o.no_payload);
        l->nbatch = 0;
        if (rc != 0) l->sink.failed = 1;
        return rc;
    }
    if (l->nbatch == EVENT_BATCH) {
        s = l->event_batch;
        for (unsigned r = 0; r < EVENT_BATCH; r++)
            bind_event_row(s, (int)(r * EVENT_COLUMNS), &l->batch[r], l->o.no_payload);
        rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) return etl_sink_error(&l->sink, "insert");
    }
    else {
        for (unsigned r = 0; r < l->nbatch; r++) {
            bind_event_row(l->sink.stmt[S_EVENT], 0, &l->batch[r], l->o.no_payload);
            if (etl_sink_step(&l->sink, S_EVENT) != 0) return -1;
        }
    }
    l->nbatch = 0;
    return 0;
}

/* A TcpIp or UdpIp event: its addresses as text (this table's rows are not batched: the row
   is written at its end, while the text on the stack lives). */
static int tcpip_row(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, const etl_kernel_event *ke,
                     int64_t event, int64_t time_ns)
{
    const etl_ktcpip *t = &ke->u.tcpip;
    char sa[ETL_KTCPIP_ADDR_SIZE], da[ETL_KTCPIP_ADDR_SIZE];
    struct rowval *r = row_begin(&l->sink, S_TCPIP);

    rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
    rv_text(r, 5, ke->name);
    rv_text(r, 6, t->protocol == 17 ? "udp" : "tcp");
    rv_i64(r, 7, t->ip_version == 6 ? 6 : 4);
    if (t->pid != UINT32_MAX) rv_i64(r, 8, t->pid); else rv_null(r, 8);
    if (ev->has & ETL_HAS_PID_TID) rv_i64(r, 9, ev->tid); else rv_null(r, 9);
    rv_i64(r, 10, t->size);
    rv_text(r, 11, etl_ktcpip_addr_format(t, 1, sa, sizeof sa));
    rv_i64(r, 12, t->sport);
    rv_text(r, 13, etl_ktcpip_addr_format(t, 0, da, sizeof da));
    rv_i64(r, 14, t->dport);
    rv_u64(r, 15, t->connid);
    rv_i64(r, 16, t->seqnum);
    rv_i64(r, 17, t->mss);
    return etl_sink_row_end(&l->sink, S_TCPIP);
}

/* A FileIo event's row (not batched: its path is converted for this row alone). Each column is
   NULL where the event's class has no such field. */
static int file_io_row(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, const etl_kernel_event *ke,
                       int64_t event, int64_t time_ns)
{
    const etl_kfile_io *f = &ke->u.file_io;
    uint16_t type = ev->hook_id & 0xFF;
    int name = type < 64, rw = type == 67 || type == 68, dir = type == 72 || type == 77, end = type == 76;
    int info = type == 69 || type == 70 || type == 71 || type == 74 || type == 75;
    struct rowval *r = row_begin(&l->sink, S_FILE_IO);

    rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
    rv_text(r, 5, ke->name);
    if (ev->has & ETL_HAS_PID_TID) {
        rv_i64(r, 6, ev->pid);
        rv_i64(r, 7, ev->tid);
    } else {
        rv_null(r, 6);
        if (!name && !end) rv_i64(r, 7, f->ttid);
        else rv_null(r, 7);
    }
    if (name) rv_null(r, 8); else rv_u64(r, 8, f->irp);
    if (name || end) rv_null(r, 9); else rv_u64(r, 9, f->file_object);
    if (end || type == 64) rv_null(r, 10); else rv_u64(r, 10, f->file_key);
    if (rw) rv_u64(r, 11, f->offset); else rv_null(r, 11);
    if (rw || dir) rv_i64(r, 12, rw ? f->io_size : f->length); else rv_null(r, 12);
    if (info || dir) rv_i64(r, 13, f->info_class); else rv_null(r, 13);
    if (info || end) rv_u64(r, 14, f->extra_info); else rv_null(r, 14);
    if (end) rv_i64(r, 15, f->nt_status); else rv_null(r, 15);
    if (etl_sink_rv_string(&l->sink, r, 16, &f->file_name, 0) != 0) return etl_sink_error(&l->sink, "out of memory");
    return etl_sink_row_end(&l->sink, S_FILE_IO);
}

/*
 * What the main thread writes from the context of other events (in the merged order): a
 * CSwitch says which thread runs on its processor (the thread of the SysClEnter/SysClExit
 * that follow there: their PERFINFO header names none), a DiskIo issue is kept until its
 * completion's row, which carries it.
 */
static int io_row(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, const etl_kernel_event *ke,
                  int64_t event, int64_t time_ns)
{
    struct rowval *r;
    int64_t tid;

    switch (ke->kclass) {
    case ETL_KCLASS_CSWITCH:
        return etl_cpu_threads_add(in->running, ev, ke) != ETL_OK ? etl_sink_error(&l->sink, "out of memory") : 0;
    case ETL_KCLASS_DISK_IO_INIT:
        return etl_disk_io_pairing_add(in->issues, ke, time_ns, event, NULL) != ETL_OK ? etl_sink_error(&l->sink, "out of memory")
                                                                                       : 0;
    case ETL_KCLASS_DISK_IO: {
        const etl_kdisk_io *d = &ke->u.disk_io;
        etl_disk_io_issue issue;
        int matched = etl_disk_io_pairing_add(in->issues, ke, time_ns, event, &issue) == 1;
        r = row_begin(&l->sink, S_DISK_IO);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name); rv_i64(r, 6, d->disk_number); rv_i64(r, 7, d->irp_flags);
        rv_i64(r, 8, d->transfer_size); rv_i64(r, 9, d->byte_offset); rv_u64(r, 10, d->file_object);
        rv_u64(r, 11, d->irp);
        if (in->perf_freq > 0)
            rv_i64(r, 12, (int64_t)((long double)d->high_res_response_time * 1e9L / (long double)in->perf_freq));
        else rv_null(r, 12);
        if (ev->version >= 3) rv_i64(r, 13, d->issuing_tid); else rv_null(r, 13);
        if (matched) { rv_i64(r, 14, issue.tag); rv_i64(r, 15, issue.time); }
        else { rv_null(r, 14); rv_null(r, 15); }
        return etl_sink_row_end(&l->sink, S_DISK_IO);
    }
    case ETL_KCLASS_SYSCALL_ENTER: case ETL_KCLASS_SYSCALL_EXIT:
        r = row_begin(&l->sink, S_SYSCALL);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name);
        if (ke->kclass == ETL_KCLASS_SYSCALL_ENTER) { rv_u64(r, 6, ke->u.syscall.address); rv_null(r, 7); }
        else { rv_null(r, 6); rv_i64(r, 7, ke->u.syscall.nt_status); }
        tid = etl_cpu_threads_running(in->running, ev->cpu);
        if (tid >= 0) rv_i64(r, 8, tid); else rv_null(r, 8);
        /* (the map's names live as long as the input) */
        rv_text(r, 9, ke->kclass == ETL_KCLASS_SYSCALL_ENTER && in->map
                          ? etl_image_map_syscall_name(in->map, ke->u.syscall.address) : NULL);
        return etl_sink_row_end(&l->sink, S_SYSCALL);
    case ETL_KCLASS_PAGE_FAULT:
        r = row_begin(&l->sink, S_PAGE_FAULT);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name);
        if (ev->has & ETL_HAS_PID_TID) { rv_i64(r, 6, ev->pid); rv_i64(r, 7, ev->tid); }
        else { rv_null(r, 6); rv_null(r, 7); }
        rv_u64(r, 8, ke->u.page_fault.virtual_address); rv_u64(r, 9, ke->u.page_fault.program_counter);
        return etl_sink_row_end(&l->sink, S_PAGE_FAULT);
    case ETL_KCLASS_TCPIP: return tcpip_row(l, in, ev, ke, event, time_ns);
    case ETL_KCLASS_FILE_IO: return file_io_row(l, in, ev, ke, event, time_ns);
    case ETL_KCLASS_VIRTUAL_ALLOC:
        r = row_begin(&l->sink, S_VIRTUAL_ALLOC);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name); rv_i64(r, 6, ke->u.virtual_alloc.pid);
        if (ev->has & ETL_HAS_PID_TID) rv_i64(r, 7, ev->tid);
        else rv_null(r, 7);
        rv_u64(r, 8, ke->u.virtual_alloc.base_address); rv_u64(r, 9, ke->u.virtual_alloc.region_size);
        rv_i64(r, 10, ke->u.virtual_alloc.flags);
        return etl_sink_row_end(&l->sink, S_VIRTUAL_ALLOC);
    case ETL_KCLASS_MAP_FILE:
        r = row_begin(&l->sink, S_MAP_FILE);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name); rv_i64(r, 6, ke->u.map_file.pid);
        if (ev->has & ETL_HAS_PID_TID) rv_i64(r, 7, ev->tid);
        else rv_null(r, 7);
        rv_u64(r, 8, ke->u.map_file.view_base); rv_u64(r, 9, ke->u.map_file.view_size);
        rv_u64(r, 10, ke->u.map_file.file_key); rv_u64(r, 11, ke->u.map_file.byte_offset);
        rv_u64(r, 12, ke->u.map_file.misc_info);
        return etl_sink_row_end(&l->sink, S_MAP_FILE);
    case ETL_KCLASS_PROCESS_COUNTERS: {
        const etl_kprocess_counters *c = &ke->u.process_counters;
        r = row_begin(&l->sink, S_PROCESS_COUNTERS);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name); rv_i64(r, 6, c->pid); rv_i64(r, 7, c->page_fault_count); rv_i64(r, 8, c->handle_count);
        rv_u64(r, 9, c->peak_virtual_size); rv_u64(r, 10, c->peak_working_set_size); rv_u64(r, 11, c->peak_pagefile_usage);
        rv_u64(r, 12, c->quota_peak_paged_pool_usage); rv_u64(r, 13, c->quota_peak_non_paged_pool_usage);
        rv_u64(r, 14, c->virtual_size); rv_u64(r, 15, c->working_set_size); rv_u64(r, 16, c->pagefile_usage);
        rv_u64(r, 17, c->quota_paged_pool_usage); rv_u64(r, 18, c->quota_non_paged_pool_usage);
        rv_u64(r, 19, c->private_page_count);
        return etl_sink_row_end(&l->sink, S_PROCESS_COUNTERS);
    }
    case ETL_KCLASS_HARD_FAULT: {
        /* it lasted from InitialTime (the input's clock) to the event */
        const etl_khard_fault *h = &ke->u.hard_fault;
        int64_t ticks = ev->timestamp - h->initial_time, ns;
        r = row_begin(&l->sink, S_HARD_FAULT);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name);
        if (ev->has & ETL_HAS_PID_TID) rv_i64(r, 6, ev->pid);
        else rv_null(r, 6);
        rv_i64(r, 7, h->tid);
        if (in->perf_freq > 0 && ticks >= 0) {
            ns = (int64_t)((long double)ticks * 1e9L / (long double)in->perf_freq);
            rv_i64(r, 8, time_ns - ns); rv_i64(r, 9, ns);
        } else {
            rv_null(r, 8); rv_null(r, 9);
        }
        rv_u64(r, 10, h->read_offset); rv_u64(r, 11, h->virtual_address); rv_u64(r, 12, h->file_object);
        rv_i64(r, 13, h->byte_count);
        return etl_sink_row_end(&l->sink, S_HARD_FAULT);
    }
    case ETL_KCLASS_ISR: case ETL_KCLASS_DPC: {
        /* it ran from InitialTime (the input's clock) to the event */
        int64_t ticks = ev->timestamp - ke->u.isr_dpc.initial_time, ns;
        r = row_begin(&l->sink, S_ISR_DPC);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name);
        if (in->perf_freq > 0 && ticks >= 0) {
            ns = (int64_t)((long double)ticks * 1e9L / (long double)in->perf_freq);
            rv_i64(r, 6, time_ns - ns); rv_i64(r, 7, ns);
        } else {
            rv_null(r, 6); rv_null(r, 7);
        }
        rv_u64(r, 8, ke->u.isr_dpc.routine);
        if (ke->kclass == ETL_KCLASS_ISR) { rv_i64(r, 9, ke->u.isr_dpc.vector); rv_i64(r, 10, ke->u.isr_dpc.return_value); }
        else { rv_null(r, 9); rv_null(r, 10); }
        return etl_sink_row_end(&l->sink, S_ISR_DPC);
    }
    default:
        return 0;
    }
}

/* One event's events row (the main thread's part). */
int etl_load_event(struct etl_sqlite_loader *l, struct input *in, const etl_merge_event *me)
{
    const etl_event *ev = me->event;
    struct event_row *r = &l->batch[l->nbatch];
    int64_t time_ns = etl_clock_time_ns(l->clock, me->timestamp);
    int has_id = (ev->has & ETL_HAS_ID) != 0, pt = (ev->has & ETL_HAS_PID_TID) != 0;
    uint32_t nulls = 1u << 0;

    int64_t provider = 0;

    if (etl_load_fields(l, in, ev, r, &provider) != 0) return -1;
    if (!(ev->has & ETL_HAS_PROVIDER)) nulls |= 1u << 7;
    if (!r->v[20]) nulls |= 1u << 20;
    r->v[0] = l->next_event++;  /* bound as NULL: SQLite numbers it so, max + 1, without a seek */
    r->v[1] = in->trace;
    r->v[2] = ev->timestamp;
    r->v[3] = time_ns;
    r->v[4] = ev->cpu;
    r->v[5] = ev->pid;
    r->v[6] = ev->tid;
    r->v[7] = provider;
    if (!pt) nulls |= 1u << 5 | 1u << 6;
    r->v[8] = ev->kind;
    r->v[9] = ev->hook_id;
    if (ev->kind != ETL_KIND_SYSTEM && ev->kind != ETL_KIND_COMPACT && ev->kind != ETL_KIND_PERFINFO &&
        ev->kind != ETL_KIND_MESSAGE)
        nulls |= 1u << 9;
    r->v[10] = ev->id;
    r->v[11] = ev->version;
    r->v[12] = ev->opcode;
    r->v[13] = ev->level;
    if (!(ev->has & ETL_HAS_LEVEL)) nulls |= 1u << 13;
    r->v[14] = ev->task;
    r->v[15] = (int64_t)ev->keywords;
    r->v[16] = ev->channel;
    if (!has_id) nulls |= 1u << 10 | 1u << 14 | 1u << 15 | 1u << 16;
    r->v[17] = ev->pointer_size;
    r->v[18] = ev->payload_len;
    r->v[19] = ev->ext_count;
    r->nulls = nulls;
    r->payload_len = 0;
    if (!l->o.no_payload && ev->payload_len) {
        if (ev->payload_len > r->payload_cap) {
            uint32_t cap = ev->payload_len < 256 ? 256 : ev->payload_len;
            uint8_t *p = realloc(r->payload, cap);
            if (!p) return etl_sink_error(&l->sink, "out of memory");
            r->payload = p;
            r->payload_cap = cap;
        }
        memcpy(r->payload, ev->payload, ev->payload_len);
        r->payload_len = ev->payload_len;
    }
    if (++l->nbatch == EVENT_BATCH && etl_load_flush_events(l) != 0) return -1;
    if (ev->kind == ETL_KIND_SYSTEM || ev->kind == ETL_KIND_COMPACT || ev->kind == ETL_KIND_PERFINFO) {
        etl_kernel_event ke;
        if (etl_kernel_decode(ev, &ke) == 1 &&
            ((etl_load_main_thread_class(ke.kclass) &&
              etl_load_kernel_row(&l->sink, NULL, in, 0, ev, &ke, r->v[0], time_ns) != 0) ||
             io_row(l, in, ev, &ke, r->v[0], time_ns) != 0))
            return -1;
    }

    if (!in->events++) in->first_ns = time_ns;
    in->last_ns = time_ns;
    if (ev->buffer_offset > in->progress_offset) in->progress_offset = ev->buffer_offset;
    return 0;
}
