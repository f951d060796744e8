/* SPDX-License-Identifier: MIT */
/* The ClickHouse loader: the SQLite loader's rows, streamed while the trace is read, each table's in RowBinary over HTTP (libcurl), committed by its traces row. */
#define _GNU_SOURCE /* getrandom, vasprintf */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <sqlite3.h>

#include "load/load.h"
#include "etl/clickhouse.h"

/*
 * The tables are the SQLite loader's, each with four columns first: machine, trace (UUID),
 * load (this load's random id) and day (the trace's first day, UTC: the partition). Their other
 * columns come from the SQLite schema itself (PRAGMA table_info of a schema made in memory:
 * INTEGER is Int64, TEXT and BLOB are String, Nullable unless NOT NULL), less its trace number.
 * The rows are the SQLite loader's own (a streamed load, load/sqlite.c: the same row code with
 * this file as its back end), encoded as they are made. A few tables get columns that
 * etl2sqlite's views compute with correlated subqueries or window functions, which ClickHouse
 * 18's SQL has neither of: they are filled here, from a survey of the trace's processes and
 * threads made before its rows (the same lookups as the SQLite views' NAME_AT and PID_AT).
 */
struct extra {
    const char *name, *type;
};

/* The rows of a table: a statement id of the loader's, or one of these. */
#define ROWS_TRACES (-1)   /* the loader's trace() */
#define ROWS_INTERVALS (-2) /* made here from the cswitches rows */
#define ROWS_VIEW (-3)      /* made at the end by the SQLite view of the same name (view_sql) over the
                               trace's processes and threads rows, kept in memory (few: a row per
                               process or thread event) */
#define ROWS_KERNEL (-5)    /* made at the end by the SQLite view of the same name (view_sql) over the
                               trace's tcpip and file_io rows, kept in a temporary SQLite database
                               of their own (as ROWS_STACKS': they grow with the trace), and its
                               processes and threads rows (copied there at the end) */
#define ROWS_STACKS (-4)    /* made at the end by the SQLite view of the same name (view_sql) over the
                               trace's samples, stacks, stack_frames and functions rows, kept in a
                               temporary SQLite database (on disk past its cache: they grow with
                               the trace) */

struct table_def {
    const char *name;           /* the ClickHouse table's name (and its SQLite table's) */
    const char *sqlite_table;   /* whose columns it has; NULL: only its extras */
    const char *order;          /* ORDER BY after machine, trace */
    const struct extra *extra;
    int rows;                   /* enum stmt_id, or ROWS_* */
    const char *view_sql;       /* ROWS_VIEW: its rows, the extras' columns in order */
};

static const struct extra traces_extra[] = { { "committed_ns", "Int64" }, { NULL, NULL } };
static const struct extra samples_extra[] = { { "process_name", "Nullable(String)" }, { NULL, NULL } };
static const struct extra cswitches_extra[] = {
    { "old_pid", "Nullable(Int64)" }, { "new_pid", "Nullable(Int64)" },
    { "old_process", "Nullable(String)" }, { "new_process", "Nullable(String)" }, { NULL, NULL },
};
static const struct extra syscalls_extra[] = { { "pid", "Nullable(Int64)" }, { "process_name", "Nullable(String)" }, { NULL, NULL } };
static const struct extra intervals_extra[] = {
    { "cpu", "Int64" }, { "tid", "Int64" }, { "pid", "Nullable(Int64)" }, { "process_name", "Nullable(String)" },
    { "start_ns", "Int64" }, { "end_ns", "Nullable(Int64)" }, { "ns", "Nullable(Int64)" },
    { "start_event", "Int64" }, { "end_event", "Nullable(Int64)" }, { NULL, NULL },
};

static const struct extra processes_view_extra[] = {
    { "pid", "Int64" }, { "image_file_name", "Nullable(String)" }, { "command_line", "Nullable(String)" },
    { "parent_pid", "Nullable(Int64)" }, { "user_sid", "Nullable(String)" }, { "start_ns", "Nullable(Int64)" },
    { "end_ns", "Nullable(Int64)" }, { "exit_status", "Nullable(Int64)" }, { NULL, NULL },
};
static const struct extra threads_view_extra[] = {
    { "tid", "Int64" }, { "pid", "Int64" }, { "process_name", "Nullable(String)" }, { "thread_name", "Nullable(String)" },
    { "start_ns", "Nullable(Int64)" }, { "end_ns", "Nullable(Int64)" }, { "win32_start_address", "Nullable(Int64)" },
    { NULL, NULL },
};

/* etl2sqlite's function views (ROWS_STACKS), their columns as the views have them, but trace */
static const struct extra sample_stack_frames_extra[] = {
    { "sample", "Int64" }, { "time_ns", "Int64" }, { "pid", "Nullable(Int64)" }, { "tid", "Int64" }, { "depth", "Int64" },
    { "address", "Int64" }, { "image", "Nullable(String)" }, { "image_offset", "Nullable(Int64)" },
    { "function", "Nullable(Int64)" }, { "function_offset", "Nullable(Int64)" }, { "outer_function", "Nullable(Int64)" },
    { "line", "Nullable(Int64)" }, { "frame", "Nullable(String)" }, { NULL, NULL },
};
static const struct extra sample_functions_extra[] = {
    { "sample", "Int64" }, { "profile_source", "Int64" }, { "pid", "Nullable(Int64)" }, { "tid", "Int64" },
    { "function", "Int64" }, { "self", "Int64" }, { NULL, NULL },
};
static const struct extra top_functions_extra[] = {
    { "function", "Int64" }, { "name", "String" }, { "image", "Nullable(String)" }, { "source_file", "Nullable(String)" },
    { "profile_source", "Int64" }, { "exclusive", "Int64" }, { "inclusive", "Int64" },
    { "exclusive_percent", "Nullable(Float64)" }, { "inclusive_percent", "Nullable(Float64)" }, { NULL, NULL },
};
static const struct extra function_stacks_extra[] = {
    { "function", "Int64" }, { "name", "String" }, { "image", "Nullable(String)" }, { "stack", "Nullable(String)" },
    { "samples", "Int64" }, { NULL, NULL },
};

/* etl2sqlite's views of the kernel's TcpIp, UdpIp and FileIo events (ROWS_KERNEL), their columns
   as the views have them, but trace */
static const struct extra tcpip_by_connection_extra[] = {
    { "protocol", "String" }, { "connid", "Nullable(Int64)" }, { "pid", "Nullable(Int64)" },
    { "process_name", "Nullable(String)" }, { "saddr", "Nullable(String)" }, { "sport", "Nullable(Int64)" },
    { "daddr", "Nullable(String)" }, { "dport", "Nullable(Int64)" }, { "sends", "Int64" }, { "bytes_sent", "Int64" },
    { "recvs", "Int64" }, { "bytes_received", "Int64" }, { "retransmits", "Int64" }, { "first_ns", "Int64" },
    { "last_ns", "Int64" }, { NULL, NULL },
};
static const struct extra file_io_view_extra[] = {
    { "event", "Int64" }, { "time_ns", "Int64" }, { "cpu", "Int64" }, { "pid", "Nullable(Int64)" },
    { "tid", "Nullable(Int64)" }, { "op", "String" }, { "irp", "Nullable(Int64)" }, { "file_object", "Nullable(Int64)" },
    { "file_key", "Nullable(Int64)" }, { "offset", "Nullable(Int64)" }, { "size", "Nullable(Int64)" },
    { "info_class", "Nullable(Int64)" }, { "extra_info", "Nullable(Int64)" }, { "path", "Nullable(String)" },
    { "end_event", "Nullable(Int64)" }, { "nt_status", "Nullable(Int64)" }, { "bytes", "Nullable(Int64)" },
    { "duration_ns", "Nullable(Int64)" }, { NULL, NULL },
};
static const struct extra hard_faults_view_extra[] = {
    { "event", "Int64" }, { "time_ns", "Int64" }, { "cpu", "Int64" }, { "name", "String" }, { "pid", "Nullable(Int64)" },
    { "tid", "Int64" }, { "start_ns", "Nullable(Int64)" }, { "duration_ns", "Nullable(Int64)" }, { "read_offset", "Int64" },
    { "virtual_address", "Int64" }, { "file_key", "Int64" }, { "byte_count", "Int64" },
    { "process_name", "Nullable(String)" }, { "file_name", "Nullable(String)" }, { NULL, NULL },
};
/* etl2sqlite's views of the memory and interrupt tables (ROWS_KERNEL too), their columns as the
   views have them, but trace */
static const struct extra isr_dpc_summary_extra[] = {
    { "name", "String" }, { "vector", "Nullable(Int64)" }, { "routine", "Nullable(String)" }, { "count", "Int64" },
    { "total_ns", "Nullable(Int64)" }, { "avg_ns", "Nullable(Float64)" }, { "max_ns", "Nullable(Int64)" }, { NULL, NULL },
};
static const struct extra page_faults_by_process_extra[] = {
    { "pid", "Nullable(Int64)" }, { "process_name", "Nullable(String)" }, { "name", "String" }, { "count", "Int64" },
    { NULL, NULL },
};
static const struct extra virtual_alloc_by_process_extra[] = {
    { "pid", "Nullable(Int64)" }, { "process_name", "Nullable(String)" }, { "name", "String" }, { "count", "Int64" },
    { "bytes", "Nullable(Int64)" }, { NULL, NULL },
};
static const struct extra process_counters_view_extra[] = {
    { "event", "Int64" }, { "time_ns", "Int64" }, { "cpu", "Int64" }, { "name", "String" }, { "pid", "Int64" },
    { "page_fault_count", "Int64" }, { "handle_count", "Int64" }, { "peak_virtual_size", "Int64" },
    { "peak_working_set_size", "Int64" }, { "peak_pagefile_usage", "Int64" }, { "quota_peak_paged_pool_usage", "Int64" },
    { "quota_peak_non_paged_pool_usage", "Int64" }, { "virtual_size", "Int64" }, { "working_set_size", "Int64" },
    { "pagefile_usage", "Int64" }, { "quota_paged_pool_usage", "Int64" }, { "quota_non_paged_pool_usage", "Int64" },
    { "private_page_count", "Int64" }, { "process_name", "Nullable(String)" }, { NULL, NULL },
};
static const struct extra file_maps_view_extra[] = {
    { "event", "Int64" }, { "time_ns", "Int64" }, { "cpu", "Int64" }, { "name", "String" }, { "pid", "Int64" },
    { "tid", "Nullable(Int64)" }, { "view_base", "Int64" }, { "view_size", "Int64" }, { "file_key", "Int64" },
    { "byte_offset", "Int64" }, { "misc_info", "Int64" }, { "process_name", "Nullable(String)" },
    { "file_name", "Nullable(String)" }, { NULL, NULL },
};
static const struct extra file_io_by_file_extra[] = {
    { "pid", "Nullable(Int64)" }, { "process_name", "Nullable(String)" }, { "path", "Nullable(String)" },
    { "ops", "Int64" }, { "reads", "Int64" }, { "bytes_read", "Int64" }, { "writes", "Int64" },
    { "bytes_written", "Int64" }, { "duration_ns", "Nullable(Int64)" }, { NULL, NULL },
};

/* traces last: its row commits the load. */
static const struct table_def table_defs[] = {
    { "providers", "providers", "provider", NULL, S_PROVIDER, NULL },
    { "event_names", "event_names", "name_id", NULL, S_NAME, NULL },
    { "event_name_fields", "event_name_fields", "name_id, idx", NULL, S_NAME_FIELD, NULL },
    { "events", "events", "time_ns, event", NULL, S_EVENT, NULL },
    { "event_ext", "event_ext", "event, idx", NULL, S_EXT, NULL },
    { "processes", "processes", "time_ns, event", NULL, S_PROCESS, NULL },
    { "threads", "threads", "time_ns, event", NULL, S_THREAD, NULL },
    { "images", "images", "time_ns, event", NULL, S_IMAGE, NULL },
    { "cswitches", "cswitches", "time_ns, event", cswitches_extra, S_CSWITCH, NULL },
    { "ready_threads", "ready_threads", "time_ns, event", NULL, S_READY, NULL },
    { "disk_io", "disk_io", "time_ns, event", NULL, S_DISK_IO, NULL },
    { "syscalls", "syscalls", "time_ns, event", syscalls_extra, S_SYSCALL, NULL },
    { "samples", "samples", "time_ns, event", samples_extra, S_SAMPLE, NULL },
    { "stacks", "stacks", "time_ns, stack", NULL, S_STACK, NULL },
    { "stack_frames", "stack_frames", "frames, depth", NULL, S_FRAME, NULL },
    { "functions", "functions", "function", NULL, S_FUNCTION, NULL },
    { "lbr", "lbr", "time_ns, lbr", NULL, S_LBR, NULL },
    { "lbr_entries", "lbr_entries", "lbr, idx", NULL, S_LBR_ENTRY, NULL },
    { "lost", "lost", "kind", NULL, S_LOST, NULL },
    { "cpu_intervals", NULL, "start_ns, cpu", intervals_extra, ROWS_INTERVALS, NULL },
    /* issue 21's kernel tables */
    { "isr_dpc", "isr_dpc", "time_ns, event", NULL, S_ISR_DPC, NULL },
    { "page_faults", "page_faults", "time_ns, event", NULL, S_PAGE_FAULT, NULL },
    { "tcpip", "tcpip", "time_ns, event", NULL, S_TCPIP, NULL },
    { "file_io", "file_io", "time_ns, event", NULL, S_FILE_IO, NULL },
    { "virtual_alloc", "virtual_alloc", "time_ns, event", NULL, S_VIRTUAL_ALLOC, NULL },
    { "file_maps", "file_maps", "time_ns, event", NULL, S_MAP_FILE, NULL },
    { "process_counters", "process_counters", "time_ns, event", NULL, S_PROCESS_COUNTERS, NULL },
    { "hard_faults", "hard_faults", "time_ns, event", NULL, S_HARD_FAULT, NULL },
    /* etl2sqlite's views that ClickHouse 18's SQL cannot express, as tables */
    { "processes_view", NULL, "pid", processes_view_extra, ROWS_VIEW,
      "SELECT pid, image_file_name, command_line, parent_pid, user_sid, start_ns, end_ns, exit_status FROM processes_view" },
    { "threads_view", NULL, "tid, pid", threads_view_extra, ROWS_VIEW,
      "SELECT tid, pid, process_name, thread_name, start_ns, end_ns, win32_start_address FROM threads_view" },
    /* etl2sqlite's function views, which need a window function and correlated subqueries (a
       sample's frames numbered over its stacks; a stack key's nearest definition), as tables */
    { "sample_stack_frames", NULL, "sample, depth", sample_stack_frames_extra, ROWS_STACKS,
      "SELECT sample, time_ns, pid, tid, depth, address, image, image_offset, function, function_offset, outer_function, "
      "line, frame FROM sample_stack_frames" },
    { "sample_functions", NULL, "sample, function", sample_functions_extra, ROWS_STACKS,
      "SELECT sample, profile_source, pid, tid, function, self FROM sample_functions" },
    { "top_functions", NULL, "profile_source, function", top_functions_extra, ROWS_STACKS,
      "SELECT function, name, image, source_file, profile_source, exclusive, inclusive, exclusive_percent, "
      "inclusive_percent FROM top_functions" },
    { "function_stacks", NULL, "function", function_stacks_extra, ROWS_STACKS,
      "SELECT function, name, image, stack, samples FROM function_stacks" },
    /* etl2sqlite's views of the TcpIp, UdpIp and FileIo events, which need correlated subqueries
       (a process's program at an event; a file operation's path and end), as tables */
    { "tcpip_by_connection", NULL, "protocol, first_ns", tcpip_by_connection_extra, ROWS_KERNEL,
      "SELECT protocol, connid, pid, process_name, saddr, sport, daddr, dport, sends, bytes_sent, recvs, bytes_received, "
      "retransmits, first_ns, last_ns FROM tcpip_by_connection" },
    { "file_io_view", NULL, "time_ns, event", file_io_view_extra, ROWS_KERNEL,
      "SELECT event, time_ns, cpu, pid, tid, op, irp, file_object, file_key, offset, size, info_class, extra_info, path, "
      "end_event, nt_status, bytes, duration_ns FROM file_io_view" },
    { "file_io_by_file", NULL, "", file_io_by_file_extra, ROWS_KERNEL,
      "SELECT pid, process_name, path, ops, reads, bytes_read, writes, bytes_written, duration_ns FROM file_io_by_file" },
    { "hard_faults_view", NULL, "time_ns, event", hard_faults_view_extra, ROWS_KERNEL,
      "SELECT event, time_ns, cpu, name, pid, tid, start_ns, duration_ns, read_offset, virtual_address, file_key, byte_count, "
      "process_name, file_name FROM hard_faults_view" },
    { "isr_dpc_summary", NULL, "name", isr_dpc_summary_extra, ROWS_KERNEL,
      "SELECT name, vector, routine, count, total_ns, avg_ns, max_ns FROM isr_dpc_summary" },
    { "page_faults_by_process", NULL, "name", page_faults_by_process_extra, ROWS_KERNEL,
      "SELECT pid, process_name, name, count FROM page_faults_by_process" },
    { "virtual_alloc_by_process", NULL, "name", virtual_alloc_by_process_extra, ROWS_KERNEL,
      "SELECT pid, process_name, name, count, bytes FROM virtual_alloc_by_process" },
    { "process_counters_view", NULL, "time_ns, event", process_counters_view_extra, ROWS_KERNEL,
      "SELECT event, time_ns, cpu, name, pid, page_fault_count, handle_count, peak_virtual_size, peak_working_set_size, "
      "peak_pagefile_usage, quota_peak_paged_pool_usage, quota_peak_non_paged_pool_usage, virtual_size, working_set_size, "
      "pagefile_usage, quota_paged_pool_usage, quota_non_paged_pool_usage, private_page_count, process_name "
      "FROM process_counters_view" },
    { "file_maps_view", NULL, "time_ns, event", file_maps_view_extra, ROWS_KERNEL,
      "SELECT event, time_ns, cpu, name, pid, tid, view_base, view_size, file_key, byte_offset, misc_info, process_name, "
      "file_name FROM file_maps_view" },
    { "traces", "traces", "", traces_extra, ROWS_TRACES, NULL },
};
#define NTABLES (sizeof table_defs / sizeof table_defs[0])

/* Column types as RowBinary writes them. */
enum coltype { C_I64, C_NI64, C_STR, C_NSTR, C_F64, C_NF64 };

struct column {
    char *name;
    enum coltype type;
};

struct table {
    const struct table_def *def;
    struct column *col;         /* the SQLite columns but trace, then the extras */
    unsigned ncols, nbase;      /* nbase: the SQLite columns' */
    int trace_col;              /* the index of the loader's trace number among a row's values; -1: none */
};

struct buf {
    char *p;
    size_t n, cap, pos;
};

/* A connection to the server: the handle and its last error. Each sending thread has one. */
struct conn {
    CURL *curl;
    char *error;
};

struct etl_clickhouse {
    etl_clickhouse_options o;
    char *url;                  /* as given */
    char *where;                /* scheme://host:port, for messages (no credentials) */
    char *database, *cluster, *machine_opt;
    struct conn conn;           /* the caller's thread's; conn.error is the handle's error */
    struct table table[NTABLES];
    int table_of[S_COUNT];      /* the table of each of the loader's statements; -1 none */
    int intervals_at, traces_at; /* the tables of ROWS_INTERVALS and ROWS_TRACES */
    int schema_ok;              /* etl_meta was checked */
    char trace_id[40];
    char *machine;
    const char *path;           /* the input being loaded */
    struct timespec phase_start;
};

/* ---------------------------------------------------------------- small helpers */

static int buf_grow(struct buf *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* (inline: the rows' values are a few bytes each, copied by a move or two) */
static inline int buf_reserve(struct buf *b, size_t more)
{
    return b->n + more <= b->cap ? 0 : buf_grow(b, more);
}

static inline int buf_add(struct buf *b, const void *data, size_t n)
{
    if (buf_reserve(b, n + 1) != 0) return -1;
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

static int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n + 1) != 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
    return 0;
}

static void conn_error(struct conn *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_error(struct conn *k, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;

    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    free(k->error);
    k->error = text;
}
#define set_error(c, ...) conn_error(&(c)->conn, __VA_ARGS__)

/* Tells the caller: the error as an ETL_FATAL message. */
static void say_fatal(etl_clickhouse *c)
{
    etl_sqlite_message m = { ETL_FATAL, 0, c->path, -1, c->conn.error ? c->conn.error : "out of memory" };
    if (c->o.read.on_message) c->o.read.on_message(c->o.read.arg, &m);
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A ClickHouse string literal's body (quotes and backslashes escaped). */
static int buf_literal(struct buf *b, const char *s)
{
    if (buf_add(b, "'", 1) != 0) return -1;
    for (; *s; s++) {
        if ((*s == '\'' || *s == '\\') && buf_add(b, "\\", 1) != 0) return -1;
        if (buf_add(b, s, 1) != 0) return -1;
    }
    return buf_add(b, "'", 1);
}

/* ---------------------------------------------------------------- HTTP */

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    size_t len = size * n;
    return buf_add(b, data, len) == 0 ? len : 0;
}

/* A server's error on one line: its line breaks (a Distributed insert's status per shard) as
   "; ", without the trailing ", e.what() = DB::Exception". */
static void squeeze(struct buf *b)
{
    size_t n = 0;
    char *tail;

    for (size_t i = 0; i < b->n; i++) {
        if (b->p[i] == '\n' || b->p[i] == '\r') {
            while (n && (b->p[n - 1] == ' ' || b->p[n - 1] == ':' || b->p[n - 1] == ',' || b->p[n - 1] == ';')) n--;
            if (n && i + 1 < b->n && b->p[i + 1] != '\n' && b->p[i + 1] != ',') {
                b->p[n++] = ';';
                b->p[n++] = ' ';
            }
            continue;
        }
        b->p[n++] = b->p[i];
    }
    while (n && (b->p[n - 1] == ' ' || b->p[n - 1] == ';')) n--;
    if (b->p) b->p[n] = '\0';
    b->n = n;
    if (b->p && (tail = strstr(b->p, ", e.what() = ")) != NULL) {
        *tail = '\0';
        b->n = (size_t)(tail - b->p);
    }
}

/* What the sending threads share: the next table to send, the rows sent, whether to stop. */
/* ---------------------------------------------------------------- streams */

/* Rows on their way to the server: a chunk of a table's encoded rows. */
struct chunk {
    struct chunk *next;
    struct buf b;
};

/*
 * One INSERT of a table's rows, sent by a thread of its own while the loader makes more: the
 * loader queues chunks of rows (at most STREAM_QUEUE, waiting when that many are queued: the
 * memory a table's rows take is bounded, whatever the trace's size), the thread's request reads
 * them as the body of a chunked POST. The server parses the body as it comes and writes a part
 * per block of rows (max_insert_block_size, a million).
 */
#define STREAM_CHUNK (1u << 20)
#define STREAM_QUEUE 4

struct load_state;
struct stream;
/* A stream's request failed while the load goes on: the load stops (defined with the loads). */
static void stream_refused(struct load_state *ls, const struct stream *s);

struct stream {
    etl_clickhouse *c;
    struct load_state *ls;      /* told of a failure at once */
    const struct table *t;
    struct conn conn;           /* the thread's connection, and its error */
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct chunk *head, *tail;  /* queued */
    unsigned queued;
    struct buf reading;         /* the chunk being read into curl's buffer */
    struct buf spare[2];        /* chunks read, their memory for the next (no fresh pages to fault in) */
    unsigned nspare;
    int closed;                 /* no more chunks come */
    int abort;                  /* the load failed elsewhere: the request is abandoned */
    int done, rc;               /* the request has returned rc */
    /* The first chunk goes alone, in a request of its own: ClickHouse answers an INSERT only
       once its body has ended (a refusal too: a missing table, a column it lacks, a row it
       cannot parse), so a refusal is known after one chunk, not at the end of the trace. The
       rest follows in a second request. */
    unsigned limit, taken;      /* chunks this request may take (0: all), and has taken */
};

static size_t stream_read(char *out, size_t size, size_t n, void *arg)
{
    struct stream *s = arg;
    size_t want = size * n, got = 0;

    while (got < want) {
        if (s->reading.pos == s->reading.n) {
            struct chunk *ch;
            if (s->limit && s->taken == s->limit) break; /* this request's body ends */
            pthread_mutex_lock(&s->lock);
            while (!s->head && !s->closed && !s->abort) pthread_cond_wait(&s->cond, &s->lock);
            if (s->abort) {
                pthread_mutex_unlock(&s->lock);
                return CURL_READFUNC_ABORT;
            }
            if (!(ch = s->head)) { /* closed, and every row read */
                pthread_mutex_unlock(&s->lock);
                break;
            }
            s->head = ch->next;
            if (!s->head) s->tail = NULL;
            s->queued--;
            if (s->reading.p && s->nspare < 2) {
                s->spare[s->nspare++] = s->reading;
                s->reading.p = NULL;
            }
            pthread_cond_broadcast(&s->cond);
            pthread_mutex_unlock(&s->lock);
            free(s->reading.p);
            s->reading = ch->b;
            s->reading.pos = 0;
            s->taken++;
            free(ch);
            continue;
        }
        size_t k = s->reading.n - s->reading.pos;
        if (k > want - got) k = want - got;
        memcpy(out + got, s->reading.p + s->reading.pos, k);
        s->reading.pos += k;
        got += k;
    }
    return got;
}

/*
 * Sends sql (in the body; or, with a stream, in the URL and the stream's rows as the body) with
 * extra URL parameters params ("insert_distributed_sync=1"). 0, with the answer in *answer when
 * given; -1 with the error set ("where: what: the server's message").
 */
static int request(etl_clickhouse *c, struct conn *k, const char *what, const char *sql, const char *params,
                   struct stream *s, struct buf *answer)
{
    struct buf url = { 0 }, body = { 0 };
    struct curl_slist *headers = NULL;
    long code = 0;
    CURLcode rc;
    int ret = -1;

    if (buf_printf(&url, "%s%s", c->url, strchr(c->url, '?') ? "&" : "?") != 0) goto nomem;
    if (params && buf_printf(&url, "%s&", params) != 0) goto nomem;
    if (s) {
        char *q = curl_easy_escape(k->curl, sql, 0);
        int e = q ? buf_printf(&url, "query=%s", q) : -1;
        curl_free(q);
        if (e != 0) goto nomem;
    }
    curl_easy_reset(k->curl);
    curl_easy_setopt(k->curl, CURLOPT_URL, url.p);
    curl_easy_setopt(k->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(k->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(k->curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(k->curl, CURLOPT_POST, 1L);
    curl_easy_setopt(k->curl, CURLOPT_CONNECTTIMEOUT, 10L);
    if (s) {
        headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
        headers = headers ? curl_slist_append(headers, "Content-Type: application/octet-stream") : NULL;
        if (!headers) goto nomem;
        curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(k->curl, CURLOPT_READFUNCTION, stream_read);
        curl_easy_setopt(k->curl, CURLOPT_READDATA, s);
        curl_easy_setopt(k->curl, CURLOPT_UPLOAD_BUFFERSIZE, 262144L);
    }
    else {
        curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, sql);
        curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(sql));
    }
    rc = curl_easy_perform(k->curl);
    curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &code);
    while (body.n && (body.p[body.n - 1] == '\n' || body.p[body.n - 1] == '\r')) body.p[--body.n] = '\0';
    if (rc != CURLE_OK || code != 200) squeeze(&body);
    if (s && rc == CURLE_ABORTED_BY_CALLBACK) conn_error(k, "stopped");
    else if (rc == CURLE_OK && code == 200) {
        ret = 0;
        if (answer) {
            *answer = body;
            body.p = NULL;
        }
    }
    else if (code != 0 && body.n)
        conn_error(k, "%s: %s: %s", c->where, what, body.p);
    else if (code != 0)
        conn_error(k, "%s: %s: HTTP status %ld", c->where, what, code);
    else
        conn_error(k, "%s: %s: %s", c->where, what, curl_easy_strerror(rc));
    curl_slist_free_all(headers);
    free(url.p);
    free(body.p);
    return ret;
nomem:
    conn_error(k, "out of memory");
    curl_slist_free_all(headers);
    free(url.p);
    return -1;
}

static int exec_sql(etl_clickhouse *c, const char *what, const char *sql)
{
    return request(c, &c->conn, what, sql, NULL, NULL, NULL);
}

/* Whether rows come after the first request's: waits until a chunk is queued, or the stream
   is closed (or abandoned). The first request took one chunk whole. */
static int stream_more(struct stream *s)
{
    int more;

    pthread_mutex_lock(&s->lock);
    while (!s->head && !s->closed && !s->abort) pthread_cond_wait(&s->cond, &s->lock);
    more = s->head != NULL && !s->abort;
    pthread_mutex_unlock(&s->lock);
    return more;
}

static void *stream_main(void *arg)
{
    struct stream *s = arg;
    struct buf insert = { 0 };
    char what[96];
    int rc = 0;

    snprintf(what, sizeof what, "inserting into %s", s->t->def->name);
    /* the columns named: a table that lacks one refuses the INSERT, rather than read the rows
       into the columns it has */
    if (buf_printf(&insert, "INSERT INTO `%s`.`%s_%s` (machine, trace, load, day", s->c->database, s->t->def->name,
                   s->c->cluster ? "rows" : "local") != 0)
        rc = -1;
    for (unsigned k = 0; rc == 0 && k < s->t->ncols; k++)
        if (buf_printf(&insert, ", `%s`", s->t->col[k].name) != 0) rc = -1;
    if (rc != 0 || buf_printf(&insert, ") FORMAT RowBinary") != 0) {
        conn_error(&s->conn, "out of memory");
        rc = -1;
    }
    else {
        const char *params = s->c->cluster ? "insert_distributed_sync=1" : NULL;
        int abandoned;
        s->limit = 1;
        rc = request(s->c, &s->conn, what, insert.p, params, s, NULL);
        if (rc == 0 && stream_more(s)) {
            s->limit = 0;
            rc = request(s->c, &s->conn, what, insert.p, params, s, NULL);
        }
        /* a request that ended before its rows (refused; the connection lost: a server that
           stopped) stops the load now */
        pthread_mutex_lock(&s->lock);
        abandoned = s->abort;
        pthread_mutex_unlock(&s->lock);
        if (rc != 0 && !abandoned) stream_refused(s->ls, s);
    }
    free(insert.p);
    pthread_mutex_lock(&s->lock);
    s->done = 1;
    s->rc = rc;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* A stream of table t's rows, its request started: NULL without memory or a thread. */
static struct stream *stream_start(etl_clickhouse *c, struct load_state *ls, const struct table *t)
{
    struct stream *s = calloc(1, sizeof *s);

    if (!s) return NULL;
    s->c = c;
    s->ls = ls;
    s->t = t;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    if (!(s->conn.curl = curl_easy_init()) || pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        if (s->conn.curl) curl_easy_cleanup(s->conn.curl);
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->cond);
        free(s);
        return NULL;
    }
    s->started = 1;
    return s;
}

/* Queues the rows of b (taken: b is left empty), waiting while the queue is full. 0, or -1
   when the request has ended (failed, or stopped). */
static int stream_push(struct stream *s, struct buf *b)
{
    struct chunk *ch = malloc(sizeof *ch);

    if (!ch) return -1;
    ch->next = NULL;
    ch->b = *b;
    *b = (struct buf){ 0 };
    pthread_mutex_lock(&s->lock);
    while (s->queued >= STREAM_QUEUE && !s->done && !s->abort) pthread_cond_wait(&s->cond, &s->lock);
    if (s->done || s->abort) {
        pthread_mutex_unlock(&s->lock);
        free(ch->b.p);
        free(ch);
        return -1;
    }
    if (s->tail) s->tail->next = ch;
    else s->head = ch;
    s->tail = ch;
    s->queued++;
    if (s->nspare) {
        *b = s->spare[--s->nspare];
        b->n = b->pos = 0;
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Ends the stream (abandoned with abandon) and waits for its request: its result, 0 or -1. */
static int stream_end(struct stream *s, int abandon)
{
    pthread_mutex_lock(&s->lock);
    s->closed = 1;
    if (abandon) s->abort = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    s->started = 0;
    return s->rc;
}

static void stream_free(struct stream *s)
{
    if (!s) return;
    if (s->started) stream_end(s, 1);
    while (s->head) {
        struct chunk *ch = s->head;
        s->head = ch->next;
        free(ch->b.p);
        free(ch);
    }
    free(s->reading.p);
    while (s->nspare) free(s->spare[--s->nspare].p);
    curl_easy_cleanup(s->conn.curl);
    free(s->conn.error);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

/* ---------------------------------------------------------------- the schema's columns */

static int add_column(struct table *t, const char *name, enum coltype type)
{
    struct column *col = realloc(t->col, (t->ncols + 1) * sizeof *col);
    if (!col) return -1;
    t->col = col;
    col[t->ncols].name = strdup(name);
    col[t->ncols].type = type;
    if (!col[t->ncols].name) return -1;
    t->ncols++;
    return 0;
}

static enum coltype type_of(const char *ch)
{
    int nullable = strncmp(ch, "Nullable(", 9) == 0;
    int str = strstr(ch, "String") != NULL;
    if (strstr(ch, "Float64")) return nullable ? C_NF64 : C_F64;
    return str ? (nullable ? C_NSTR : C_STR) : (nullable ? C_NI64 : C_I64);
}

static const char *type_name(enum coltype t)
{
    static const char *const names[] = { "Int64", "Nullable(Int64)", "String", "Nullable(String)", "Float64",
                                         "Nullable(Float64)" };
    return names[t];
}

/* Each table's columns, from the SQLite schema made in memory, and its SELECT. */

/* Each table's columns, from the SQLite schema made in memory. */
static int tables_init(etl_clickhouse *c)
{
    sqlite3 *db = NULL;
    int rc = -1;

    for (int i = 0; i < S_COUNT; i++) c->table_of[i] = -1;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK ||
        sqlite3_exec(db, etl_sqlite_schema_tables, NULL, NULL, NULL) != SQLITE_OK)
        goto out;
    for (size_t i = 0; i < NTABLES; i++) {
        struct table *t = &c->table[i];
        int values = 0;
        t->def = &table_defs[i];
        t->trace_col = -1;
        if (t->def->rows >= 0) c->table_of[t->def->rows] = (int)i;
        else if (t->def->rows == ROWS_INTERVALS) c->intervals_at = (int)i;
        else if (t->def->rows == ROWS_TRACES) c->traces_at = (int)i;
        if (t->def->sqlite_table) {
            sqlite3_stmt *st;
            char q[128];
            snprintf(q, sizeof q, "PRAGMA table_info(%s)", t->def->sqlite_table);
            if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) goto out;
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *name = (const char *)sqlite3_column_text(st, 1);
                const char *decl = (const char *)sqlite3_column_text(st, 2);
                int notnull = sqlite3_column_int(st, 3) || sqlite3_column_int(st, 5);
                int str = decl && (strcmp(decl, "TEXT") == 0 || strcmp(decl, "BLOB") == 0);
                /* the trace number: the trace is the UUID here (traces.trace too) */
                if (strcmp(name, "trace") == 0) t->trace_col = values;
                else if (add_column(t, name, str ? (notnull ? C_STR : C_NSTR) : (notnull ? C_I64 : C_NI64)) != 0) {
                    sqlite3_finalize(st);
                    goto out;
                }
                values++;
            }
            sqlite3_finalize(st);
            /* the loader's rows have the table's columns */
            if (t->def->rows >= 0 && values != etl_sink_columns[t->def->rows]) goto out;
        }
        t->nbase = t->ncols;
        for (const struct extra *e = t->def->extra; e && e->name; e++)
            if (add_column(t, e->name, type_of(e->type)) != 0) goto out;
    }
    rc = 0;
out:
    sqlite3_close(db);
    return rc;
}

/* printf('0x%x', X) of etl2sqlite's views: hex() writes whole bytes, so at most one leading 0 */
#define HEX(x) "concat('0x', replaceRegexpOne(lower(hex(toUInt64(" x "))), '^0', ''))"
/* SOURCE_TEXT of etl2sqlite's views: 'file:line', the file alone, or NULL */
#define SOURCE(file, line) \
    "if(isNull(" file "), NULL, if(isNull(" line "), " file ", concat(assumeNotNull(" file "), ':', toString(assumeNotNull(" line ")))))"

/* etl2sqlite's views that a ClickHouse view can express over the tables (their columns, and the
   extra ones filled at load time): one JOIN per SELECT, so nested; each GLOBAL, its right side
   made once and sent to the shards (a view cannot set distributed_product_mode); keys that may
   be NULL as -1, which no row has; a right side's columns Nullable where a row may find none. */
static int views_sql(struct buf *b, const char *db)
{
    /* events_view: the time as etldump writes it; kind, provider and event name by their ids */
    if (buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.events_view AS\n"
                   "SELECT machine, trace, event, ts,\n"
                   "       concat(formatDateTime(toDateTime(intDiv(time_ns, 1000000000), 'UTC'), '%%Y-%%m-%%dT%%H:%%M:%%S', 'UTC'),\n"
                   "              '.', substring(toString(1000000000 + time_ns %% 1000000000), 2), 'Z') AS time,\n"
                   "       time_ns, cpu, pid, tid, p_guid AS provider, p_name AS provider_name, k_name AS kind, id, version, opcode,\n"
                   "       level, task, keywords, payload_len, ext_count AS ext, n_name AS event_name, fields FROM (\n"
                   "  SELECT * FROM (\n"
                   "    SELECT * FROM (\n"
                   "      SELECT machine, trace, event, ts, time_ns, cpu, pid, tid, ifNull(provider, -1) AS p_id, kind AS k_id, id,\n"
                   "             version, opcode, level, task, keywords, payload_len, ext_count, ifNull(name, -1) AS n_id, fields\n"
                   "      FROM `%s`.events)\n"
                   "    GLOBAL ANY LEFT JOIN (SELECT machine, trace, provider AS p_id, toNullable(guid) AS p_guid, name AS p_name\n"
                   "                          FROM `%s`.providers) USING (machine, trace, p_id))\n"
                   "  GLOBAL ANY LEFT JOIN (SELECT machine, trace, name_id AS n_id, toNullable(name) AS n_name FROM `%s`.event_names)\n"
                   "  USING (machine, trace, n_id))\n"
                   "GLOBAL ANY INNER JOIN (SELECT kind AS k_id, name AS k_name FROM `%s`.kinds) USING (k_id);\n",
                   db, db, db, db, db) != 0)
        return -1;
    /* samples_view: process_name is the samples table's (filled at load time) */
    if (buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.samples_view AS\n"
                   "SELECT machine, trace, event, time_ns, cpu, tid, pid, process_name, " HEX("instruction_pointer") " AS ip,\n"
                   "       image, image_offset, fn_name AS function, function_offset, " SOURCE("fn_source", "line") " AS source FROM (\n"
                   "  SELECT machine, trace, event, time_ns, cpu, tid, pid, process_name, instruction_pointer, image, image_offset,\n"
                   "         function_offset, line, ifNull(function, -1) AS fn_id FROM `%s`.samples)\n"
                   "GLOBAL ANY LEFT JOIN (SELECT machine, trace, function AS fn_id, toNullable(name) AS fn_name, source_file AS fn_source\n"
                   "                      FROM `%s`.functions) USING (machine, trace, fn_id);\n",
                   db, db, db) != 0)
        return -1;
    /* cswitches_view and syscalls_view: their pids and programs are the tables' (filled at load time) */
    if (buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.cswitches_view AS\n"
                   "SELECT machine, trace, event, time_ns, cpu, old_tid, old_pid, old_process, new_tid, new_pid, new_process,\n"
                   "       old_thread_wait_reason, old_thread_state FROM `%s`.cswitches;\n",
                   db, db) != 0 ||
        buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.syscalls_view AS\n"
                   "SELECT machine, trace, event, time_ns, cpu, name, " HEX("address") " AS address, nt_status, syscall, tid, pid,\n"
                   "       process_name FROM `%s`.syscalls;\n",
                   db, db) != 0)
        return -1;
    /* stack_frames_view: a stack's frames (a stack without frames has none), their functions */
    return buf_printf(b,
                      "CREATE VIEW IF NOT EXISTS `%s`.stack_frames_view AS\n"
                      "SELECT machine, trace, stack, event, owner_event, kind, pid, tid, depth, " HEX("f_address") " AS address,\n"
                      "       if(isNull(f_image), " HEX("f_address") ", concat(assumeNotNull(f_image), '+', " HEX("ifNull(f_image_offset, 0)") ")) AS frame,\n"
                      "       fn_name AS function, f_function_offset AS function_offset, " SOURCE("fn_source", "f_line") " AS source FROM (\n"
                      "  SELECT machine, trace, stack, event, owner_event, kind, pid, tid, depth, f_address, f_image, f_image_offset,\n"
                      "         f_function_offset, f_line, ifNull(f_function, -1) AS fn_id FROM (\n"
                      "    SELECT machine, trace, stack, event, owner_event, kind, pid, tid, ifNull(frames, -1) AS fr FROM `%s`.stacks)\n"
                      "  GLOBAL ALL INNER JOIN (SELECT machine, trace, frames AS fr, depth, address AS f_address, image AS f_image,\n"
                      "                                image_offset AS f_image_offset, function AS f_function,\n"
                      "                                function_offset AS f_function_offset, line AS f_line FROM `%s`.stack_frames)\n"
                      "  USING (machine, trace, fr))\n"
                      "GLOBAL ANY LEFT JOIN (SELECT machine, trace, function AS fn_id, toNullable(name) AS fn_name, source_file AS fn_source\n"
                      "                      FROM `%s`.functions) USING (machine, trace, fn_id);\n",
                      db, db, db, db);
}

static int schema_sql(const etl_clickhouse *c, struct buf *b)
{
    const char *db = c->database;
#define COMMITTED "load IN (SELECT argMax(load, committed_ns) FROM `%s`.traces_local GROUP BY machine, trace)"

    if (buf_printf(b, "CREATE DATABASE IF NOT EXISTS `%s`;\n", db) != 0) return -1;
    for (size_t i = 0; i < NTABLES; i++) {
        const struct table *t = &c->table[i];
        const char *name = t->def->name;
        if (buf_printf(b, "CREATE TABLE IF NOT EXISTS `%s`.`%s_local` (machine String, trace UUID, load UInt64, day Date",
                       db, name) != 0)
            return -1;
        for (unsigned k = 0; k < t->ncols; k++)
            if (buf_printf(b, ", `%s` %s", t->col[k].name, type_name(t->col[k].type)) != 0) return -1;
        if (buf_printf(b, ") ENGINE = MergeTree PARTITION BY day ORDER BY (machine, trace%s%s);\n",
                       *t->def->order ? ", " : "", t->def->order) != 0)
            return -1;
    }
    /* the views read traces_local: after every table */
    for (size_t i = 0; i < NTABLES; i++) {
        const char *name = c->table[i].def->name;
        if (c->cluster) {
            if (buf_printf(b, "CREATE VIEW IF NOT EXISTS `%s`.`%s_visible` AS SELECT * FROM `%s`.`%s_local` WHERE ", db,
                           name, db, name) != 0 ||
                buf_printf(b, COMMITTED ";\n", db) != 0 ||
                buf_printf(b,
                           "CREATE TABLE IF NOT EXISTS `%s`.`%s_rows` AS `%s`.`%s_local` ENGINE = Distributed(`%s`, `%s`, "
                           "`%s_local`, cityHash64(machine));\n",
                           db, name, db, name, c->cluster, db, name) != 0 ||
                buf_printf(b,
                           "CREATE TABLE IF NOT EXISTS `%s`.`%s` AS `%s`.`%s_local` ENGINE = Distributed(`%s`, `%s`, "
                           "`%s_visible`);\n",
                           db, name, db, name, c->cluster, db, name) != 0)
                return -1;
        }
        else if (buf_printf(b, "CREATE VIEW IF NOT EXISTS `%s`.`%s` AS SELECT * FROM `%s`.`%s_local` WHERE ", db, name,
                            db, name) != 0 ||
                 buf_printf(b, COMMITTED ";\n", db) != 0)
            return -1;
    }
    if (buf_printf(b, "CREATE TABLE IF NOT EXISTS `%s`.kinds (kind Int64, name String) ENGINE = TinyLog;\n", db) != 0)
        return -1;
    if (buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.provider_counts AS\n"
                   "SELECT machine, trace, guid AS provider, provider_name, kind_name AS kind, events, payload_bytes FROM (\n"
                   "  SELECT machine, trace, guid, pname AS provider_name, kind_id, events, payload_bytes FROM (\n"
                   "    SELECT machine, trace, ifNull(provider, 0) AS provider_id, kind AS kind_id, count() AS events,\n"
                   "           sum(payload_len) AS payload_bytes\n"
                   "    FROM `%s`.events GROUP BY machine, trace, provider_id, kind_id)\n"
                   "  GLOBAL ANY LEFT JOIN (SELECT machine, trace, provider AS provider_id, guid, name AS pname\n"
                   "                        FROM `%s`.providers) USING (machine, trace, provider_id))\n"
                   "GLOBAL ANY LEFT JOIN (SELECT kind AS kind_id, name AS kind_name FROM `%s`.kinds) USING (kind_id);\n",
                   db, db, db, db) != 0 ||
        buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.cpu_time_by_thread AS\n"
                   "SELECT machine, trace, tid, pid, process_name, sum(ns) AS cpu_ns, count() AS intervals\n"
                   "FROM `%s`.cpu_intervals GROUP BY machine, trace, tid, pid, process_name;\n",
                   db, db) != 0 ||
        buf_printf(b,
                   "CREATE VIEW IF NOT EXISTS `%s`.cpu_time_by_process AS\n"
                   "SELECT machine, trace, pid, process_name, uniqExact(tid) AS threads, sum(ns) AS cpu_ns, count() AS intervals\n"
                   "FROM `%s`.cpu_intervals GROUP BY machine, trace, pid, process_name;\n",
                   db, db) != 0)
        return -1;
    if (views_sql(b, db) != 0) return -1;
    return buf_printf(b, "CREATE TABLE IF NOT EXISTS `%s`.etl_meta (key String, value String) ENGINE = TinyLog;\n", db);
}

/* ---------------------------------------------------------------- the schema on the server */

/* One value of etl_meta: 1 found (*out malloc'd), 0 no such key or table, -1 error. */
static int meta_get(etl_clickhouse *c, const char *key, char **out)
{
    struct buf q = { 0 }, a = { 0 };
    int rc;

    *out = NULL;
    if (buf_printf(&q, "SELECT count() FROM system.tables WHERE database = ") != 0 || buf_literal(&q, c->database) != 0 ||
        buf_printf(&q, " AND name = 'etl_meta'") != 0)
        goto nomem;
    rc = request(c, &c->conn, "reading the schema", q.p, NULL, NULL, &a);
    if (rc != 0) goto fail;
    if (!a.p || atoi(a.p) == 0) {
        free(q.p);
        free(a.p);
        return 0;
    }
    free(a.p);
    a = (struct buf){ 0 };
    q.n = 0;
    if (buf_printf(&q, "SELECT value FROM `%s`.etl_meta WHERE key = ", c->database) != 0 || buf_literal(&q, key) != 0 ||
        buf_printf(&q, " LIMIT 1 FORMAT TabSeparatedRaw") != 0)
        goto nomem;
    if (request(c, &c->conn, "reading the schema", q.p, NULL, NULL, &a) != 0) goto fail;
    free(q.p);
    *out = a.p ? a.p : strdup("");
    return *out ? 1 : -1;
nomem:
    set_error(c, "out of memory");
fail:
    free(q.p);
    free(a.p);
    return -1;
}

/* The server's schema is this loader's: version and cluster. 1 yes, 0 there is none, -1 another
   (or an error; said). */
static int schema_check(etl_clickhouse *c)
{
    char *version = NULL, *cluster = NULL;
    int rc = meta_get(c, "schema_version", &version);

    if (rc <= 0) return rc;
    if (atoi(version) != ETL_CLICKHOUSE_SCHEMA_VERSION) {
        set_error(c, "%s: database %s has the etl2clickhouse schema version %s, and this etl2clickhouse writes version %d "
                     "(use another --database)", c->where, c->database, version, ETL_CLICKHOUSE_SCHEMA_VERSION);
        free(version);
        return -1;
    }
    free(version);
    if (meta_get(c, "cluster", &cluster) < 0) return -1;
    if (strcmp(cluster ? cluster : "", c->cluster ? c->cluster : "") != 0) {
        if (cluster && *cluster)
            set_error(c, "%s: database %s was made for cluster %s (--cluster %s)", c->where, c->database, cluster, cluster);
        else
            set_error(c, "%s: database %s was made for one server (no --cluster)", c->where, c->database);
        free(cluster);
        return -1;
    }
    free(cluster);
    return 1;
}

int etl_clickhouse_create_schema(etl_clickhouse *c)
{
    struct buf b = { 0 }, q = { 0 }, a = { 0 };
    char *p;
    int rc = schema_check(c);

    c->path = NULL;
    if (rc < 0) goto fail;
    /* rc 1: the schema is there; what is missing of it (a table dropped) is made again */
    if (schema_sql(c, &b) != 0) goto nomem;
    /* one statement a request: the HTTP interface takes one */
    for (p = b.p; p && *p;) {
        char *end = strstr(p, ";\n");
        if (!end) break;
        *end = '\0';
        if (strncmp(p, "CREATE TABLE IF NOT EXISTS", 26) == 0 && strstr(p, ".etl_meta ")) {
            /* etl_meta last, after the kinds */
            if (buf_printf(&q, "SELECT count() FROM `%s`.kinds", c->database) != 0) goto nomem;
            if (request(c, &c->conn, "creating the schema", q.p, NULL, NULL, &a) != 0) goto fail;
            if (a.p && atoi(a.p) == 0) {
                q.n = 0;
                if (buf_printf(&q, "INSERT INTO `%s`.kinds VALUES ", c->database) != 0) goto nomem;
                for (int k = ETL_KIND_SYSTEM; k <= ETL_KIND_MESSAGE; k++)
                    if (buf_printf(&q, "%s(%d, '%s')", k > ETL_KIND_SYSTEM ? ", " : "", k, etl_event_kind_name(k)) != 0)
                        goto nomem;
                if (exec_sql(c, "creating the schema", q.p) != 0) goto fail;
            }
            if (exec_sql(c, "creating the schema", p) != 0) goto fail;
            if (rc == 1) break;
            q.n = 0;
            if (buf_printf(&q, "INSERT INTO `%s`.etl_meta VALUES ('schema_version', '%d'), ('created_by', 'etl2clickhouse %s'), "
                               "('cluster', ", c->database, ETL_CLICKHOUSE_SCHEMA_VERSION, etl_version()) != 0 ||
                buf_literal(&q, c->cluster ? c->cluster : "") != 0 || buf_printf(&q, ")") != 0)
                goto nomem;
            if (exec_sql(c, "creating the schema", q.p) != 0) goto fail;
        }
        else if (exec_sql(c, "creating the schema", p) != 0)
            goto fail;
        p = end + 2;
    }
    /* this node's HTTP address, by which a loader on a cluster reaches the shard to delete the
       rows of an earlier or failed load (the last recorded is used) */
    q.n = 0;
    free(a.p);
    a = (struct buf){ 0 };
    if (buf_printf(&q, "SELECT value FROM `%s`.etl_meta WHERE key = 'http' FORMAT TabSeparatedRaw", c->database) != 0) goto nomem;
    if (request(c, &c->conn, "creating the schema", q.p, NULL, NULL, &a) != 0) goto fail;
    {
        char *last = a.p ? strrchr(a.p, '\n') : NULL;
        const char *http = last ? last + 1 : a.p;
        if (!http || strcmp(http, c->where) != 0) {
            q.n = 0;
            if (buf_printf(&q, "INSERT INTO `%s`.etl_meta VALUES ('http', ", c->database) != 0 || buf_literal(&q, c->where) != 0 ||
                buf_printf(&q, ")") != 0)
                goto nomem;
            if (exec_sql(c, "creating the schema", q.p) != 0) goto fail;
        }
    }
    free(b.p);
    free(q.p);
    free(a.p);
    return ETL_OK;
nomem:
    set_error(c, "out of memory");
fail:
    free(b.p);
    free(q.p);
    free(a.p);
    say_fatal(c);
    return ETL_FATAL;
}

char *etl_clickhouse_schema(const etl_clickhouse *c)
{
    struct buf b = { 0 };
    if (schema_sql(c, &b) != 0) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---------------------------------------------------------------- rows in RowBinary */

static int put_varint(struct buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    return buf_add(b, tmp, n);
}

static int put_u64(struct buf *b, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
    return buf_add(b, le, 8);
}

static int put_bytes(struct buf *b, const void *p, size_t n)
{
    return put_varint(b, n) == 0 && (n == 0 || buf_add(b, p, n) == 0) ? 0 : -1;
}


static void progress(etl_clickhouse *c, int phase, uint64_t done, uint64_t total, uint64_t events, int final)
{
    etl_clickhouse_progress p = { c->path, phase, done, total, events, since(&c->phase_start), final };
    if (c->o.on_progress) c->o.on_progress(c->o.read.arg, &p);
}

/* ---------------------------------------------------------------- the survey of a trace */

/* The processes and threads rows' keys (what NAME_AT and PID_AT look up), by pid or tid,
   then time and event. */
struct process_key {
    int64_t pid, time_ns, event;
    char *name;                 /* image_file_name; NULL: none */
};

struct thread_key {
    int64_t tid, event, pid;
};

/*
 * What a load needs before its first row: the trace's id (a hash of its logfile header and
 * first events), its machine name (the first SystemConfig/CPU event's ComputerName), its day,
 * and its processes and threads for the columns filled at load time. One pass over the
 * trace, in the merge's order: the event numbers are the loader's.
 */
struct survey {
    uint8_t id[16];
    char *machine;
    int64_t start_ns;
    struct process_key *proc;
    size_t nproc, cap_proc;
    struct thread_key *thr;
    size_t nthr, cap_thr;
    uint64_t samples;           /* SampledProfile and PMCSample events: none, no function tables */
    uint64_t kernel_stacks;     /* StackWalk events and stack key references: none, no sample has a
                                   stack (an EVENT_HEADER event's is its own) */
};

/* The hash of a value as the earlier loader (which read it back from SQLite) made it: its
   type's code (SQLite's), then its bytes (an integer's in decimal). */
struct id_hash {
    uint64_t h1, h2;
};

static void hash_bytes(struct id_hash *h, int tag, const void *data, size_t n)
{
    const uint8_t *p = data;

    h->h1 = (h->h1 ^ (uint8_t)tag) * 0x100000001b3ull;
    h->h2 = (h->h2 ^ (uint8_t)tag) * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; p && i < n; i++) {
        h->h1 = (h->h1 ^ p[i]) * 0x100000001b3ull;
        h->h2 = ((h->h2 ^ p[i]) * 0x9e3779b97f4a7c15ull) ^ (h->h2 >> 29);
    }
}

static void hash_int(struct id_hash *h, int64_t v)
{
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)v);
    hash_bytes(h, SQLITE_INTEGER, text, (size_t)n);
}

static void hash_null(struct id_hash *h)
{
    hash_bytes(h, SQLITE_NULL, NULL, 0);
}

static void hash_text(struct id_hash *h, const char *s)
{
    hash_bytes(h, SQLITE_TEXT, s, strlen(s));
}

/* The trace's header as its traces row has it: logger_name, log_file_name, log_file_mode,
   clock_type, perf_freq, cpu_speed_mhz, start_timestamp, start_time_ns, boot_time_ns,
   timezone_bias, os_version, pointer_size, processors, buffer_size. */
static void hash_header(struct id_hash *h, const etl_trace_info *ti)
{
    char v[32];

    hash_text(h, ti->logger_name);
    hash_text(h, ti->log_file_name);
    hash_int(h, ti->log_file_mode);
    hash_int(h, ti->clock.type);
    hash_int(h, ti->clock.perf_freq);
    hash_int(h, ti->clock.cpu_speed_mhz);
    hash_int(h, ti->clock.start_timestamp);
    hash_int(h, etl_time_from_filetime(ti->clock.start_time));
    if (ti->boot_time) hash_int(h, etl_time_from_filetime(ti->boot_time));
    else hash_null(h);
    hash_int(h, ti->timezone_bias);
    snprintf(v, sizeof v, "%u.%u.%u", ti->os_major, ti->os_minor, (unsigned)ti->os_build);
    hash_text(h, v);
    hash_int(h, ti->pointer_size);
    hash_int(h, ti->number_of_processors);
    hash_int(h, ti->buffer_size);
}

/* An event as its events row has it: ts, cpu, pid, tid, kind, hook_id, id, version, opcode,
   payload_len, payload. */
static void hash_event(struct id_hash *h, const etl_event *ev, int no_payload)
{
    int pt = (ev->has & ETL_HAS_PID_TID) != 0;
    int hook = ev->kind == ETL_KIND_SYSTEM || ev->kind == ETL_KIND_COMPACT || ev->kind == ETL_KIND_PERFINFO ||
               ev->kind == ETL_KIND_MESSAGE;

    hash_int(h, ev->timestamp);
    hash_int(h, ev->cpu);
    if (pt) {
        hash_int(h, ev->pid);
        hash_int(h, ev->tid);
    }
    else {
        hash_null(h);
        hash_null(h);
    }
    hash_int(h, ev->kind);
    if (hook) hash_int(h, ev->hook_id);
    else hash_null(h);
    if (ev->has & ETL_HAS_ID) hash_int(h, ev->id);
    else hash_null(h);
    hash_int(h, ev->version);
    hash_int(h, ev->opcode);
    hash_int(h, ev->payload_len);
    if (no_payload) hash_null(h);
    else hash_bytes(h, SQLITE_BLOB, ev->payload, ev->payload_len);
}

static int process_key_cmp(const void *a, const void *b)
{
    const struct process_key *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->time_ns != y->time_ns) return x->time_ns < y->time_ns ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

static int thread_key_cmp(const void *a, const void *b)
{
    const struct thread_key *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* A UTF-8 copy of s (NULL when the record does not carry it); *ok 0 without memory. */
static char *utf8_copy(const etl_string *s, int *ok)
{
    size_t n;
    char *p;

    if (!s->data) return NULL;
    n = etl_string_to_utf8(s, NULL, 0);
    if (!(p = malloc(n + 1))) {
        *ok = 0;
        return NULL;
    }
    etl_string_to_utf8(s, p, n + 1);
    return p;
}

static void quiet(void *arg, const etl_merge_message *m)
{
    (void)arg, (void)m;
}

static void survey_free(struct survey *sv)
{
    for (size_t i = 0; i < sv->nproc; i++) free(sv->proc[i].name);
    free(sv->proc);
    free(sv->thr);
    free(sv->machine);
    memset(sv, 0, sizeof *sv);
}

/* The computer's name of a SystemConfig/CPU event (malloc'd), NULL if it names none. */
static char *computer_name(etl_decoder *d, const etl_event *ev)
{
    etl_decoded_event de;
    const etl_field *f;
    etl_string s;
    int ok = 1;
    char *name;

    if (!d || etl_decoder_decode(d, ev, &de) == ETL_FATAL || !(f = etl_decoded_field_find(&de, "ComputerName")) ||
        etl_field_string(f, &s) != ETL_OK)
        return NULL;
    name = utf8_copy(&s, &ok);
    if (name && !*name) {
        free(name);
        name = NULL;
    }
    return name;
}

/* Surveys path: 0, or -1 (the error set; a trace that cannot be read is the loader's to tell,
   which reads it next: only what stops the survey itself is said here). */
static int survey_trace(etl_clickhouse *c, const char *path, struct survey *sv)
{
    etl_merge_options mo;
    etl_merge *m = NULL;
    etl_merge_input_info mi;
    etl_merge_event me;
    etl_decoder *d = NULL;
    etl_decoder_options dopt;
    struct id_hash h = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    int64_t event = 0;
    int rc, ok = 1;

    memset(&mo, 0, sizeof mo);
    mo.on_message = quiet;
    if (etl_merge_open(&m, &path, 1, &mo) == ETL_FATAL) {
        set_error(c, "%s", m ? etl_merge_error(m) : "out of memory");
        etl_merge_close(m);
        return -1;
    }
    memset(&dopt, 0, sizeof dopt);
    dopt.flags = ETL_DECODER_NO_DEFAULTS; /* the kernel's classes are built in */
    if (!c->o.machine && etl_decoder_open(&d, &dopt) != ETL_OK) {
        etl_decoder_close(d);
        d = NULL;
    }
    if (etl_merge_input_get(m, 0, &mi) == ETL_OK && mi.info) {
        hash_header(&h, mi.info);
        sv->start_ns = etl_time_from_filetime(mi.info->clock.start_time);
    }
    while ((rc = etl_merge_next(m, &me)) == ETL_OK || rc == ETL_WARN) {
        const etl_event *ev = me.event;
        etl_kernel_event ke;
        if (++event <= 256) hash_event(&h, ev, c->o.read.no_payload);
        if (ev->kind != ETL_KIND_SYSTEM && ev->kind != ETL_KIND_COMPACT && ev->kind != ETL_KIND_PERFINFO) continue;
        if (!sv->machine && ev->kind == ETL_KIND_SYSTEM && ev->hook_id == 0x0B0A) /* SystemConfig/CPU */
            sv->machine = computer_name(d, ev);
        if (etl_kernel_decode(ev, &ke) != 1) continue;
        if (ke.kclass == ETL_KCLASS_PROCESS) {
            struct process_key *p;
            if (sv->nproc == sv->cap_proc) {
                size_t cap = sv->cap_proc ? 2 * sv->cap_proc : 256;
                if (!(p = realloc(sv->proc, cap * sizeof *p))) goto nomem;
                sv->proc = p;
                sv->cap_proc = cap;
            }
            p = &sv->proc[sv->nproc++];
            p->pid = ke.u.process.pid;
            p->time_ns = etl_clock_time_ns(etl_merge_clock(m), me.timestamp);
            p->event = event;
            p->name = utf8_copy(&ke.u.process.image_file_name, &ok);
            if (!ok) goto nomem;
        }
        else if (ke.kclass == ETL_KCLASS_SAMPLED_PROFILE)
            sv->samples++;
        else if (ke.kclass == ETL_KCLASS_STACK || ke.kclass == ETL_KCLASS_STACK_KEY)
            sv->kernel_stacks++;
        else if (ke.kclass == ETL_KCLASS_THREAD) {
            struct thread_key *t;
            if (sv->nthr == sv->cap_thr) {
                size_t cap = sv->cap_thr ? 2 * sv->cap_thr : 256;
                if (!(t = realloc(sv->thr, cap * sizeof *t))) goto nomem;
                sv->thr = t;
                sv->cap_thr = cap;
            }
            t = &sv->thr[sv->nthr++];
            t->tid = ke.u.thread.tid;
            t->event = event;
            t->pid = ke.u.thread.pid;
        }
        if ((event & 65535) == 0 && c->o.read.interrupted && c->o.read.interrupted(c->o.read.arg)) {
            set_error(c, "interrupted");
            goto fail;
        }
    }
    etl_merge_close(m);
    etl_decoder_close(d);
    if (sv->nproc) qsort(sv->proc, sv->nproc, sizeof *sv->proc, process_key_cmp);
    if (sv->nthr) qsort(sv->thr, sv->nthr, sizeof *sv->thr, thread_key_cmp);
    for (int i = 0; i < 8; i++) {
        sv->id[i] = (uint8_t)(h.h1 >> (56 - 8 * i));
        sv->id[8 + i] = (uint8_t)(h.h2 >> (56 - 8 * i));
    }
    sv->id[6] = (uint8_t)((sv->id[6] & 0x0f) | 0x80); /* version 8: made by its own rule (RFC 9562) */
    sv->id[8] = (uint8_t)((sv->id[8] & 0x3f) | 0x80); /* the RFC's variant */
    return 0;
nomem:
    set_error(c, "out of memory");
fail:
    etl_merge_close(m);
    etl_decoder_close(d);
    return -1;
}

/* NAME_AT: the program of process pid at (t, e): its last processes row at or before, else its
   first after; NULL when it has none. */
static const char *name_at(const struct survey *sv, int64_t pid, int64_t t, int64_t e)
{
    size_t lo = 0, hi = sv->nproc;

    while (lo < hi) { /* the first key after (pid, t, e) */
        size_t mid = lo + (hi - lo) / 2;
        const struct process_key *k = &sv->proc[mid];
        if (k->pid < pid || (k->pid == pid && (k->time_ns < t || (k->time_ns == t && k->event <= e)))) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && sv->proc[lo - 1].pid == pid) return sv->proc[lo - 1].name;
    if (lo < sv->nproc && sv->proc[lo].pid == pid) return sv->proc[lo].name;
    return NULL;
}

/* PID_AT: the process of thread tid at event e: its last threads row at or before, else its
   first after; -1 when it has none. */
static int64_t pid_at(const struct survey *sv, int64_t tid, int64_t e)
{
    size_t lo = 0, hi = sv->nthr;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct thread_key *k = &sv->thr[mid];
        if (k->tid < tid || (k->tid == tid && k->event <= e)) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && sv->thr[lo - 1].tid == tid) return sv->thr[lo - 1].pid;
    if (lo < sv->nthr && sv->thr[lo].tid == tid) return sv->thr[lo].pid;
    return -1;
}

/* ---------------------------------------------------------------- a load's rows in RowBinary */

/* A processor's running thread since its last context switch (cpu_intervals). */
struct running {
    int used;
    int64_t tid, start_ns, start_event;
};

/* One load: its rows as they are made (the row back end of the loader's two threads), and
   their streams. */
struct load_state {
    etl_clickhouse *c;
    struct survey sv;
    struct buf prefix;          /* machine, trace, load and day: the first columns of every row */
    struct buf rows[NTABLES];   /* each table's rows not yet queued */
    struct stream *st[NTABLES]; /* each table's INSERT, once its rows filled a chunk */
    uint64_t count[NTABLES];
    struct running *cpu;        /* by processor (the main thread's) */
    size_t ncpu;
    sqlite3 *views;             /* the processes and threads rows, for the ROWS_VIEW tables (main thread) */
    sqlite3_stmt *keep[2];      /* their inserts */
    sqlite3 *stacks;            /* the samples, stacks, stack_frames and functions rows, for the
                                   ROWS_STACKS tables (the kernel thread's, the main thread's at the end) */
    sqlite3_stmt *keep_stack[4]; /* their inserts, in stack_kept's order */
    sqlite3 *kernel;            /* the tcpip and file_io rows, for the ROWS_KERNEL tables (the main
                                   thread's, as the loader's sink of those rows) */
    sqlite3_stmt *keep_kernel[8]; /* their inserts, in kernel_kept's order */
    sqlite3_stmt *keep_name;    /* the insert of the events that name files there (hard_faults_view's) */
    uint64_t kernel_kept;       /* how many (none: the ROWS_KERNEL tables are empty) */
    /* A trace without kernel stacks: its samples before its first function (the symbols may
       name none) have no function and no stack, and count only as samples of their profile
       source (top_functions' shares). They wait here, as the values the views read, and go to
       the database at the first functions row, or when too many wait; none goes when the trace
       names no function (the function tables are then empty). */
    struct waiting_sample {
        int64_t event, trace, time_ns, cpu, tid, pid, ip, profile_source;
    } *waiting;
    size_t nwaiting, cap_waiting;
    int keeping_samples;        /* samples go to the database as they come */
    pthread_mutex_t lock;
    pthread_mutex_t kernel_lock; /* ls->kernel's inserts: rows of both threads go there */
    char *error;                /* the first failure's message */
    atomic_int failed;
};

static int load_fail(struct load_state *ls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int load_fail(struct load_state *ls, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;

    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    pthread_mutex_lock(&ls->lock);
    if (!ls->error) {
        ls->error = text;
        text = NULL;
    }
    pthread_mutex_unlock(&ls->lock);
    free(text);
    atomic_store(&ls->failed, 1);
    return -1;
}

/* A stream that ended before its rows did: its request's error. */
static int stream_failed(struct load_state *ls, const struct stream *s)
{
    return load_fail(ls, "%s", s->conn.error ? s->conn.error : "the server ended an INSERT early");
}

/* The stream's thread: its first request was refused. The loader's threads stop at their next
   row (they look at failed), with this as the load's error. */
static void stream_refused(struct load_state *ls, const struct stream *s)
{
    stream_failed(ls, s);
}

static int put_u8(struct buf *b, uint8_t v)
{
    return buf_add(b, &v, 1);
}

/* A value of type ty: 0, or -1 (NULL where the column takes none, a text for a number, no
   memory). */
static int put_value(struct buf *b, enum coltype ty, const struct rowval *v)
{
    if (ty == C_NI64 || ty == C_NSTR) {
        if (put_u8(b, v->type == 0) != 0) return -1;
        if (v->type == 0) return 0;
    }
    else if (v->type == 0)
        return -1;
    if (ty == C_I64 || ty == C_NI64) return v->type == 1 ? put_u64(b, (uint64_t)v->i) : -1;
    if (v->type == 1) { /* a number in a TEXT column: SQLite stores its text */
        char text[24];
        int n = snprintf(text, sizeof text, "%lld", (long long)v->i);
        return put_bytes(b, text, (size_t)n);
    }
    return put_bytes(b, v->t, v->type == 2 ? strlen(v->t) : (size_t)v->i);
}

static int put_nint(struct buf *b, int has, int64_t v)
{
    return has ? (put_u8(b, 0) == 0 && put_u64(b, (uint64_t)v) == 0 ? 0 : -1) : put_u8(b, 1);
}

static int put_nstr(struct buf *b, const char *s)
{
    return s ? (put_u8(b, 0) == 0 && put_bytes(b, s, strlen(s)) == 0 ? 0 : -1) : put_u8(b, 1);
}

/* The row's first columns, then its values but the trace number. */
static int put_row(struct load_state *ls, const struct table *t, struct buf *b, const struct rowval *r, int cols)
{
    unsigned k = 0;

    if (buf_add(b, ls->prefix.p, ls->prefix.n) != 0) return -1;
    for (int i = 0; i < cols; i++) {
        if (i == t->trace_col) continue;
        if (k >= t->nbase || put_value(b, t->col[k].type, &r[i]) != 0) return -1;
        k++;
    }
    return 0;
}

/* A row of table i is encoded: a full chunk goes to its stream (started on the first). */
static int row_done(struct load_state *ls, unsigned i)
{
    struct buf *b = &ls->rows[i];

    ls->count[i]++;
    if (b->n < STREAM_CHUNK) return 0;
    if (!ls->st[i] && !(ls->st[i] = stream_start(ls->c, ls, &ls->c->table[i])))
        return load_fail(ls, "cannot start a sending thread");
    if (stream_push(ls->st[i], b) != 0) return stream_failed(ls, ls->st[i]);
    return buf_reserve(b, STREAM_CHUNK + 65536) == 0 ? 0 : load_fail(ls, "out of memory");
}

static int encode_failed(struct load_state *ls, const struct table *t)
{
    return load_fail(ls, "out of memory, or a NULL the table %s does not take", t->def->name);
}

/* A cpu_intervals row: the thread of p on cpu, until end_ns and end_event (has_end: each is
   known). */
static int interval_row(struct load_state *ls, int64_t cpu, const struct running *p, int has_end_ns, int64_t end_ns,
                        int has_end_event, int64_t end_event)
{
    int ti = ls->c->intervals_at;
    struct buf *b = &ls->rows[ti];
    int64_t pid;

    pid = pid_at(&ls->sv, p->tid, p->start_event);
    if (buf_add(b, ls->prefix.p, ls->prefix.n) != 0 || put_u64(b, (uint64_t)cpu) != 0 ||
        put_u64(b, (uint64_t)p->tid) != 0 || put_nint(b, pid >= 0, pid) != 0 ||
        put_nstr(b, pid >= 0 ? name_at(&ls->sv, pid, p->start_ns, p->start_event) : NULL) != 0 ||
        put_u64(b, (uint64_t)p->start_ns) != 0 || put_nint(b, has_end_ns, end_ns) != 0 ||
        put_nint(b, has_end_ns, end_ns - p->start_ns) != 0 || put_u64(b, (uint64_t)p->start_event) != 0 ||
        put_nint(b, has_end_event, end_event) != 0)
        return encode_failed(ls, &ls->c->table[ti]);
    return row_done(ls, (unsigned)ti);
}

/* A context switch on cpu at (t, e) to thread tid: the interval it ends, and the one it starts. */
static int cswitch_interval(struct load_state *ls, int64_t cpu, int64_t tid, int64_t t, int64_t e)
{
    struct running *p;

    if (cpu < 0 || cpu > 65535) return 0;
    if ((size_t)cpu >= ls->ncpu) {
        size_t n = (size_t)cpu + 1;
        struct running *q = realloc(ls->cpu, n * sizeof *q);
        if (!q) return load_fail(ls, "out of memory");
        memset(q + ls->ncpu, 0, (n - ls->ncpu) * sizeof *q);
        ls->cpu = q;
        ls->ncpu = n;
    }
    p = &ls->cpu[cpu];
    if (p->used && interval_row(ls, cpu, p, 1, t, 1, e) != 0) return -1;
    p->used = 1;
    p->tid = tid;
    p->start_ns = t;
    p->start_event = e;
    return 0;
}

/* The statements whose rows the ROWS_STACKS tables are made of, and their inserts. */
static const struct {
    enum stmt_id id;
    const char *sql;
} stack_kept[4] = {
    { S_SAMPLE, "INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_STACK, "INSERT INTO stacks VALUES (?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_FRAME, "INSERT INTO stack_frames VALUES (?,?,?,?,?,?,?,?,?)" },
    { S_FUNCTION, "INSERT INTO functions VALUES (?,?,?,?,?)" },
};

/* The statements whose rows the ROWS_KERNEL tables are made of, and their inserts. */
static const struct {
    enum stmt_id id;
    const char *sql;
} kernel_kept[8] = {
    { S_TCPIP, "INSERT INTO tcpip VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_FILE_IO, "INSERT INTO file_io VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_HARD_FAULT, "INSERT INTO hard_faults VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_ISR_DPC, "INSERT INTO isr_dpc VALUES (?,?,?,?,?,?,?,?,?,?)" },
    { S_PAGE_FAULT, "INSERT INTO page_faults VALUES (?,?,?,?,?,?,?,?,?)" },
    { S_VIRTUAL_ALLOC, "INSERT INTO virtual_alloc VALUES (?,?,?,?,?,?,?,?,?,?)" },
    { S_MAP_FILE, "INSERT INTO file_maps VALUES (?,?,?,?,?,?,?,?,?,?,?,?)" },
    { S_PROCESS_COUNTERS, "INSERT INTO process_counters VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
};

/* Which of kernel_kept id is (its index), or -1: not kept. */
static int kernel_kept_index(enum stmt_id id)
{
    for (int k = 0; k < (int)(sizeof kernel_kept / sizeof kernel_kept[0]); k++)
        if (kernel_kept[k].id == id) return k;
    return -1;
}

/* A row of one of kernel_kept's tables (index k there), kept for the ROWS_KERNEL tables. */
static int keep_kernel_row(struct load_state *ls, int k, const struct rowval *r, int cols)
{
    sqlite3_stmt *st = ls->keep_kernel[k];
    int rc;

    pthread_mutex_lock(&ls->kernel_lock); /* (the kernel thread's rows; the main thread's names) */
    etl_sink_bind_row(st, r, cols);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    pthread_mutex_unlock(&ls->kernel_lock);
    if (rc != SQLITE_DONE) return load_fail(ls, "the kernel events kept for their views: %s", sqlite3_errmsg(ls->kernel));
    ls->kernel_kept++;
    return 0;
}

/* An events row that names a file (FileIO/Name, /FileCreate, /FileRundown: hook_id 1024, 1056,
   1060, with fields), kept for hard_faults_view's file names (its columns, but no payload). */
static int keep_name_event(struct load_state *ls, const struct event_row *er)
{
    sqlite3_stmt *st = ls->keep_name;
    int rc;

    pthread_mutex_lock(&ls->kernel_lock); /* (the main thread's; the kernel thread's rows) */
    for (int c = 0; c < EVENT_INT_COLUMNS; c++) {
        if (c && (er->nulls & (1u << c))) sqlite3_bind_null(st, c + 1);
        else sqlite3_bind_int64(st, c + 1, er->v[c]);
    }
    sqlite3_bind_text(st, EVENT_INT_COLUMNS + 1, er->fields, (int)er->fields_len, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    pthread_mutex_unlock(&ls->kernel_lock);
    if (rc != SQLITE_DONE) return load_fail(ls, "the FileIo names kept for hard_faults_view: %s", sqlite3_errmsg(ls->kernel));
    return 0;
}

/* The processes and threads rows (ls->views) copied to the temporary database, for the
   ROWS_KERNEL views' lookups of a process's program (at the end: the main thread's). */
static int copy_processes(struct load_state *ls)
{
    static const char *const tables[2] = { "processes", "threads" };

    for (unsigned k = 0; k < 2; k++) {
        sqlite3_stmt *from = NULL, *to = NULL;
        char q[64];
        int rc, n;
        snprintf(q, sizeof q, "SELECT * FROM %s", tables[k]);
        if (sqlite3_prepare_v2(ls->views, q, -1, &from, NULL) != SQLITE_OK) goto fail;
        n = sqlite3_column_count(from);
        {
            char ins[160];
            int o = snprintf(ins, sizeof ins, "INSERT INTO %s VALUES (?", tables[k]);
            for (int j = 1; j < n && o < (int)sizeof ins - 4; j++) o += snprintf(ins + o, sizeof ins - (size_t)o, ",?");
            snprintf(ins + o, sizeof ins - (size_t)o, ")");
            if (sqlite3_prepare_v2(ls->kernel, ins, -1, &to, NULL) != SQLITE_OK) goto fail;
        }
        while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
            for (int j = 0; j < n; j++) sqlite3_bind_value(to, j + 1, sqlite3_column_value(from, j));
            rc = sqlite3_step(to);
            sqlite3_reset(to);
            if (rc != SQLITE_DONE) break;
        }
        sqlite3_finalize(from);
        sqlite3_finalize(to);
        if (rc != SQLITE_DONE) return load_fail(ls, "the processes and threads kept for the views: %s", sqlite3_errmsg(ls->kernel));
        continue;
    fail:
        sqlite3_finalize(from);
        sqlite3_finalize(to);
        return load_fail(ls, "the processes and threads kept for the views: %s", sqlite3_errmsg(from ? ls->kernel : ls->views));
    }
    return 0;
}

#define WAITING_SAMPLES_MAX (1u << 20) /* 64 MiB of them at most */

/* The samples waiting go to the database, and the next ones as they come. */
static int keep_waiting_samples(struct load_state *ls)
{
    sqlite3_stmt *st = ls->keep_stack[0];

    ls->keeping_samples = 1;
    for (size_t k = 0; k < ls->nwaiting; k++) {
        const struct waiting_sample *w = &ls->waiting[k];
        struct rowval r[17];
        memset(r, 0, sizeof r); /* NULL */
        rv_i64(r, 1, w->event);
        rv_i64(r, 2, w->trace);
        rv_i64(r, 3, w->time_ns);
        rv_i64(r, 4, w->cpu);
        rv_i64(r, 5, w->tid);
        if (w->pid >= 0) rv_i64(r, 6, w->pid);
        rv_i64(r, 7, w->ip);
        rv_i64(r, 13, w->profile_source);
        etl_sink_bind_row(st, r, 17);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return load_fail(ls, "the samples kept for the function views: %s", sqlite3_errmsg(ls->stacks));
    }
    free(ls->waiting);
    ls->waiting = NULL;
    ls->nwaiting = ls->cap_waiting = 0;
    return 0;
}

/* A sample of a trace without kernel stacks, before its first function: waits (0), or -1. */
static int sample_waits(struct load_state *ls, const struct rowval *r)
{
    struct waiting_sample *w;

    if (ls->nwaiting == ls->cap_waiting) {
        size_t cap = ls->cap_waiting ? 2 * ls->cap_waiting : 4096;
        if (!(w = realloc(ls->waiting, cap * sizeof *w))) return load_fail(ls, "out of memory");
        ls->waiting = w;
        ls->cap_waiting = cap;
    }
    w = &ls->waiting[ls->nwaiting++];
    *w = (struct waiting_sample){ r[0].i, r[1].i, r[2].i, r[3].i, r[4].i, r[5].type == 1 ? r[5].i : -1, r[6].i, r[12].i };
    return ls->nwaiting >= WAITING_SAMPLES_MAX ? keep_waiting_samples(ls) : 0;
}

/* A row of a statement in stack_kept, kept for the ROWS_STACKS tables: those of a trace with
   samples, but the stacks of EVENT_HEADER events ('ext': their owner is that event, never a
   sample; their frames are kept, which a sample's stack may share), and no stack or frame of a
   trace without kernel stacks (no sample of it has one). */
static int keep_stack_row(struct load_state *ls, enum stmt_id id, const struct rowval *r, int cols)
{
    if (!ls->sv.samples || (id == S_STACK && r[4].type == 2 && strcmp(r[4].t, "ext") == 0) ||
        ((id == S_STACK || id == S_FRAME) && !ls->sv.kernel_stacks))
        return 0;
    if (!ls->keeping_samples) {
        if (id == S_SAMPLE && r[13].type == 0) return sample_waits(ls, r);
        if (keep_waiting_samples(ls) != 0) return -1; /* a function: the samples' shares count */
    }
    for (unsigned k = 0; k < sizeof stack_kept / sizeof stack_kept[0]; k++) {
        sqlite3_stmt *st = ls->keep_stack[k];
        int rc;
        if (stack_kept[k].id != id) continue;
        etl_sink_bind_row(st, r, cols);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return load_fail(ls, "the samples and stacks kept for the function views: %s", sqlite3_errmsg(ls->stacks));
        return 0;
    }
    return 0;
}

/* The loader's row back end: a row of its table id. */
static int on_row(void *arg, enum stmt_id id, const struct rowval *r, int cols)
{
    struct load_state *ls = arg;
    const struct survey *sv = &ls->sv;
    int i = ls->c->table_of[id];
    const struct table *t;
    struct buf *b;
    int64_t e, time_ns, pid, old_pid, new_pid;
    int kk;

    if (i < 0) return 0; /* no such table here */
    if (atomic_load(&ls->failed)) return -1;
    t = &ls->c->table[i];
    b = &ls->rows[i];
    if (put_row(ls, t, b, r, cols) != 0) return encode_failed(ls, t);
    if (id == S_PROCESS || id == S_THREAD) {
        sqlite3_stmt *st = ls->keep[id == S_THREAD];
        int rc;
        etl_sink_bind_row(st, r, cols);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return load_fail(ls, "the processes and threads kept for the views: %s", sqlite3_errmsg(ls->views));
    }
    if ((id == S_SAMPLE || id == S_STACK || id == S_FRAME || id == S_FUNCTION) && keep_stack_row(ls, id, r, cols) != 0)
        return -1;
    if ((kk = kernel_kept_index(id)) >= 0 && keep_kernel_row(ls, kk, r, cols) != 0) return -1;
    e = r[0].i;
    time_ns = r[2].i;
    switch (id) {
    case S_SAMPLE: /* pid (6) */
        if (put_nstr(b, r[5].type == 1 ? name_at(sv, r[5].i, time_ns, e) : NULL) != 0) return encode_failed(ls, t);
        break;
    case S_CSWITCH: /* cpu (4), new_tid (5), old_tid (6) */
        old_pid = pid_at(sv, r[5].i, e);
        new_pid = pid_at(sv, r[4].i, e);
        if (put_nint(b, old_pid >= 0, old_pid) != 0 || put_nint(b, new_pid >= 0, new_pid) != 0 ||
            put_nstr(b, old_pid >= 0 ? name_at(sv, old_pid, time_ns, e) : NULL) != 0 ||
            put_nstr(b, new_pid >= 0 ? name_at(sv, new_pid, time_ns, e) : NULL) != 0)
            return encode_failed(ls, t);
        if (row_done(ls, (unsigned)i) != 0) return -1;
        return cswitch_interval(ls, r[3].i, r[4].i, time_ns, e);
    case S_SYSCALL: /* tid (8) */
        pid = r[7].type == 1 ? pid_at(sv, r[7].i, e) : -1;
        if (put_nint(b, pid >= 0, pid) != 0 || put_nstr(b, pid >= 0 ? name_at(sv, pid, time_ns, e) : NULL) != 0)
            return encode_failed(ls, t);
        break;
    default:
        break;
    }
    return row_done(ls, (unsigned)i);
}

/* The loader's events rows. */
static int on_events(void *arg, const struct event_row *rows, unsigned n, int no_payload)
{
    struct load_state *ls = arg;
    int i = ls->c->table_of[S_EVENT];
    const struct table *t = &ls->c->table[i];
    struct buf *b = &ls->rows[i];

    if (atomic_load(&ls->failed)) return -1;
    for (unsigned r = 0; r < n; r++) {
        const struct event_row *er = &rows[r];
        unsigned k = 0;
        if (buf_reserve(b, ls->prefix.n + 16 * EVENT_COLUMNS + er->fields_len + er->payload_len) != 0 ||
            buf_add(b, ls->prefix.p, ls->prefix.n) != 0)
            return encode_failed(ls, t);
        for (int c = 0; c < EVENT_INT_COLUMNS; c++) {
            /* column 1, the event, is bound NULL for SQLite to number it: it has its number */
            struct rowval v = { er->v[c], NULL, c && (er->nulls & (1u << c)) ? 0 : 1 };
            if (c == t->trace_col) continue;
            if (put_value(b, t->col[k++].type, &v) != 0) return encode_failed(ls, t);
        }
        /* hook_id (10) */
        if (er->has_fields && !(er->nulls & (1u << 9)) && (er->v[9] == 1024 || er->v[9] == 1056 || er->v[9] == 1060) &&
            keep_name_event(ls, er) != 0)
            return -1;
        if (put_value(b, t->col[k++].type, &(struct rowval){ er->fields_len, er->fields, er->has_fields ? 4 : 0 }) != 0 ||
            put_value(b, t->col[k].type, &(struct rowval){ er->payload_len, er->payload_len ? (const char *)er->payload : "",
                                                         no_payload ? 0 : 3 }) != 0)
            return encode_failed(ls, t);
        if (row_done(ls, (unsigned)i) != 0) return -1;
    }
    return 0;
}

/* The in-memory database of the processes and threads rows, with etl2sqlite's schema and views. */
static int views_open(struct load_state *ls)
{
    if (sqlite3_open_v2(":memory:", &ls->views, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->views, etl_sqlite_schema_tables, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->views, etl_sqlite_schema_views, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ls->views, "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &ls->keep[0], NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ls->views, "INSERT INTO threads VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &ls->keep[1], NULL) != SQLITE_OK)
        return load_fail(ls, "the processes and threads kept for the views: %s", ls->views ? sqlite3_errmsg(ls->views) : "out of memory");
    /* a temporary database (""): SQLite keeps it in its cache and spills to a file it has
       unlinked already, so the memory stays bounded and nothing is left on disk; one transaction
       that is never committed, no journal */
    if (sqlite3_open_v2("", &ls->stacks, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->stacks, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768", NULL,
                     NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->stacks, etl_sqlite_schema_tables, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->stacks, etl_sqlite_schema_views, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->stacks, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return load_fail(ls, "the samples and stacks kept for the function views: %s",
                         ls->stacks ? sqlite3_errmsg(ls->stacks) : "out of memory");
    for (unsigned k = 0; k < sizeof stack_kept / sizeof stack_kept[0]; k++)
        if (sqlite3_prepare_v2(ls->stacks, stack_kept[k].sql, -1, &ls->keep_stack[k], NULL) != SQLITE_OK)
            return load_fail(ls, "the samples and stacks kept for the function views: %s", sqlite3_errmsg(ls->stacks));
    /* the same for the tcpip and file_io rows (another thread's) */
    if (sqlite3_open_v2("", &ls->kernel, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->kernel, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768", NULL,
                     NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->kernel, etl_sqlite_schema_tables, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->kernel, etl_sqlite_schema_views, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(ls->kernel, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return load_fail(ls, "the TcpIp and FileIo events kept for their views: %s",
                         ls->kernel ? sqlite3_errmsg(ls->kernel) : "out of memory");
    for (unsigned k = 0; k < sizeof kernel_kept / sizeof kernel_kept[0]; k++)
        if (sqlite3_prepare_v2(ls->kernel, kernel_kept[k].sql, -1, &ls->keep_kernel[k], NULL) != SQLITE_OK)
            return load_fail(ls, "the TcpIp and FileIo events kept for their views: %s", sqlite3_errmsg(ls->kernel));
    if (sqlite3_prepare_v2(ls->kernel, "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,NULL)", -1,
                           &ls->keep_name, NULL) != SQLITE_OK)
        return load_fail(ls, "the FileIo names kept for hard_faults_view: %s", sqlite3_errmsg(ls->kernel));
    return 0;
}

/* The ROWS_VIEW and ROWS_STACKS tables' rows, from etl2sqlite's views over the rows kept. */
static int view_rows(struct load_state *ls)
{
    int indexed = 0, kernel_indexed = 0;

    if (ls->kernel_kept && copy_processes(ls) != 0) return -1;
    for (size_t i = 0; i < NTABLES; i++) {
        const struct table *t = &ls->c->table[i];
        struct buf *b = &ls->rows[i];
        sqlite3_stmt *st;
        int rc;
        sqlite3 *db = t->def->rows == ROWS_VIEW ? ls->views : t->def->rows == ROWS_KERNEL ? ls->kernel : ls->stacks;
        /* the function tables of a trace without samples, or whose samples are all waiting
           (no kernel stack, no function), are empty */
        if (t->def->rows != ROWS_VIEW && (t->def->rows != ROWS_STACKS || !ls->sv.samples || !ls->keeping_samples) &&
            (t->def->rows != ROWS_KERNEL || !ls->kernel_kept))
            continue;
        /* the loader's indexes, which the views' lookups need, once the rows are in */
        if ((t->def->rows == ROWS_STACKS && !indexed) || (t->def->rows == ROWS_KERNEL && !kernel_indexed)) {
            if (sqlite3_exec(db, etl_sqlite_schema_indexes, NULL, NULL, NULL) != SQLITE_OK)
                return load_fail(ls, "%s: %s", t->def->name, sqlite3_errmsg(db));
            *(t->def->rows == ROWS_STACKS ? &indexed : &kernel_indexed) = 1;
        }
        if (sqlite3_prepare_v2(db, t->def->view_sql, -1, &st, NULL) != SQLITE_OK)
            return load_fail(ls, "%s: %s", t->def->name, sqlite3_errmsg(db));
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (buf_add(b, ls->prefix.p, ls->prefix.n) != 0) rc = SQLITE_NOMEM;
            for (unsigned k = 0; rc == SQLITE_ROW && k < t->ncols; k++) {
                struct rowval v = { 0, NULL, 0 };
                if (t->col[k].type == C_F64 || t->col[k].type == C_NF64) { /* a REAL, as its 8 bytes */
                    int null = sqlite3_column_type(st, (int)k) == SQLITE_NULL;
                    double d = sqlite3_column_double(st, (int)k);
                    uint64_t bits;
                    memcpy(&bits, &d, sizeof bits);
                    if ((t->col[k].type == C_NF64 && put_u8(b, (uint8_t)null) != 0) || (null && t->col[k].type == C_F64) ||
                        (!null && put_u64(b, bits) != 0))
                        rc = SQLITE_NOMEM;
                    continue;
                }
                switch (sqlite3_column_type(st, (int)k)) {
                case SQLITE_NULL: break;
                case SQLITE_INTEGER: v.type = 1; v.i = sqlite3_column_int64(st, (int)k); break;
                default:
                    v.type = 4;
                    v.t = (const char *)sqlite3_column_text(st, (int)k);
                    v.i = sqlite3_column_bytes(st, (int)k);
                }
                if (put_value(b, t->col[k].type, &v) != 0) rc = SQLITE_NOMEM;
            }
            if (rc != SQLITE_ROW) break;
            if (row_done(ls, (unsigned)i) != 0) {
                sqlite3_finalize(st);
                return -1;
            }
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return encode_failed(ls, t);
    }
    return 0;
}

/* The loader's traces row (the last): committed now; the intervals still running end with the
   trace's last event. */
static int on_trace(void *arg, const struct rowval *r, int cols)
{
    struct load_state *ls = arg;
    int i = ls->c->traces_at;
    struct timespec now;

    for (size_t cpu = 0; cpu < ls->ncpu; cpu++)
        if (ls->cpu[cpu].used && interval_row(ls, (int64_t)cpu, &ls->cpu[cpu], r[33].type == 1, r[33].i, 0, 0) != 0)
            return -1;
    if (view_rows(ls) != 0) return -1;
    clock_gettime(CLOCK_REALTIME, &now);
    if (put_row(ls, &ls->c->table[i], &ls->rows[i], r, cols) != 0 ||
        put_u64(&ls->rows[i], (uint64_t)((int64_t)now.tv_sec * 1000000000 + now.tv_nsec)) != 0)
        return encode_failed(ls, &ls->c->table[i]);
    ls->count[i]++;
    return 0;
}

/* ---------------------------------------------------------------- one trace */


/* The SQLite loader's callbacks, passed on with the caller's arg. */
static void read_message(void *arg, const etl_sqlite_message *m)
{
    etl_clickhouse *c = arg;
    if (c->o.read.on_message) c->o.read.on_message(c->o.read.arg, m);
}

static void read_progress(void *arg, const etl_sqlite_progress *p)
{
    etl_clickhouse *c = arg;
    progress(c, 0, p->bytes_done, p->bytes_total, p->events, p->final);
}

static int read_interrupted(void *arg)
{
    etl_clickhouse *c = arg;
    return c->o.read.interrupted ? c->o.read.interrupted(c->o.read.arg) : 0;
}

/* Stages path into dbpath: ETL_OK, ETL_WARN (damaged), ETL_FATAL (error set). */

/*
 * Deletes the rows of machine/trace whose load is (equal: 1) or is not (0) load, on the server
 * at url (where: its scheme://host:port, for messages): a mutation of each *_local table that
 * has such rows (found first by one query of them all, by the tables' key: none is asked for a
 * first load). 0, or -1 (the error set; the load's own error, when there is one, stays).
 */
static int delete_loads_at(etl_clickhouse *c, const char *url, const char *where, uint64_t load, int equal)
{
    struct buf q = { 0 }, a = { 0 };
    char *saved = c->conn.error ? strdup(c->conn.error) : NULL;
    char *saved_url = c->url, *saved_where = c->where;
    int rc = 0;

    c->url = (char *)url;
    c->where = (char *)where;
    for (size_t i = 0; i < NTABLES && rc == 0; i++)
        if (buf_printf(&q, "%sSELECT %zu, count() FROM `%s`.`%s_local` WHERE machine = ", i ? " UNION ALL " : "", i, c->database,
                       c->table[i].def->name) != 0 ||
            buf_literal(&q, c->machine) != 0 ||
            buf_printf(&q, " AND trace = '%s' AND load %s %llu", c->trace_id, equal ? "=" : "!=", (unsigned long long)load) != 0)
            rc = -1;
    if (rc == 0 && buf_printf(&q, " FORMAT TabSeparated") != 0) rc = -1;
    if (rc != 0) set_error(c, "out of memory");
    else rc = request(c, &c->conn, "finding a load's rows", q.p, NULL, NULL, &a);
    for (char *line = a.p; rc == 0 && line && *line;) {
        char *end;
        unsigned long i = strtoul(line, &end, 10);
        unsigned long long n = strtoull(end, &end, 10);
        if (i < NTABLES && n > 0) {
            q.n = 0;
            if (buf_printf(&q, "ALTER TABLE `%s`.`%s_local` DELETE WHERE machine = ", c->database, c->table[i].def->name) != 0 ||
                buf_literal(&q, c->machine) != 0 ||
                buf_printf(&q, " AND trace = '%s' AND load %s %llu", c->trace_id, equal ? "=" : "!=", (unsigned long long)load) != 0)
                rc = -1;
            else rc = exec_sql(c, "deleting a load's rows", q.p);
        }
        line = strchr(end, '\n');
        if (line) line++;
    }
    c->url = saved_url;
    c->where = saved_where;
    free(q.p);
    free(a.p);
    if (saved) { /* the load's own error stays the one told */
        free(c->conn.error);
        c->conn.error = saved;
    }
    return rc;
}

/* A URL as c->url, with its scheme, host and port those of where (scheme://host:port): malloc'd,
   NULL if where is not one. The credentials and parameters of --url go with it. */
static char *url_at(const etl_clickhouse *c, const char *where)
{
    CURLU *u = curl_url(), *w = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;

    if (u && w && curl_url_set(u, CURLUPART_URL, c->url, 0) == CURLUE_OK && curl_url_set(w, CURLUPART_URL, where, 0) == CURLUE_OK &&
        curl_url_get(w, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK && curl_url_get(w, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(w, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_SCHEME, scheme, 0) == CURLUE_OK && curl_url_set(u, CURLUPART_HOST, host, 0) == CURLUE_OK &&
        curl_url_set(u, CURLUPART_PORT, port, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_URL, &out, 0) == CURLUE_OK) {
        char *copy = strdup(out);
        curl_free(out);
        out = copy;
    }
    else out = NULL;
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    curl_url_cleanup(w);
    return out;
}

/*
 * The load's cleanup on a cluster: the same deletion, on each replica of the shard that holds
 * the machine's rows (Distributed's rule: cityHash64(machine) modulo the shards' weights, the
 * shards taking slots in order), at the HTTP address that replica's etl_meta gives ('http',
 * written by --create-schema run on it: a cluster's configuration names its nodes' TCP ports
 * only). A Distributed table takes no mutation, and ALTER ... ON CLUSTER needs ZooKeeper.
 * 0, or -1 (the error set).
 */
static int delete_loads(etl_clickhouse *c, uint64_t load, int equal)
{
    struct buf q = { 0 }, a = { 0 }, h = { 0 };
    unsigned long long slot = 0, weights = 0, at = 0;
    unsigned long shard = 0, prev = 0;
    char *saved = c->conn.error ? strdup(c->conn.error) : NULL;
    int rc = 0, found = 0;

    if (!c->cluster) {
        free(saved);
        return delete_loads_at(c, c->url, c->where, load, equal);
    }
    if (buf_printf(&q, "SELECT shard_num, shard_weight, host_address, port FROM system.clusters WHERE cluster = ") != 0 ||
        buf_literal(&q, c->cluster) != 0 || buf_printf(&q, " ORDER BY shard_num, replica_num FORMAT TabSeparated") != 0)
        goto nomem;
    if (request(c, &c->conn, "finding the machine's shard", q.p, NULL, NULL, &a) != 0) goto fail;
    /* the shards' weights, each counted once */
    for (char *line = a.p; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char *end;
        unsigned long n = strtoul(line, &end, 10);
        unsigned long long w = strtoull(end, &end, 10);
        if (n != prev) weights += w;
        prev = n;
    }
    if (!weights) {
        set_error(c, "%s: cluster %s has no shards (system.clusters)", c->where, c->cluster);
        goto fail;
    }
    q.n = 0;
    if (buf_printf(&q, "SELECT cityHash64(") != 0 || buf_literal(&q, c->machine) != 0 || buf_printf(&q, ") %% %llu", weights) != 0)
        goto nomem;
    if (request(c, &c->conn, "finding the machine's shard", q.p, NULL, NULL, &h) != 0) goto fail;
    slot = strtoull(h.p ? h.p : "0", NULL, 10);
    /* the shard whose slots hold slot, then each of its replicas */
    prev = 0;
    for (char *line = a.p; line && *line && rc == 0; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char *end, *host, *port_text, where_q[600];
        unsigned long n = strtoul(line, &end, 10);
        unsigned long long w = strtoull(end, &end, 10);
        if (n != prev) {
            if (!shard && slot < at + w) shard = n;
            at += w;
        }
        prev = n;
        if (n != shard) continue;
        host = end + (*end == '\t');
        if (!(port_text = strchr(host, '\t'))) continue;
        *port_text++ = '\0';
        snprintf(where_q, sizeof where_q, "%s%s%s:%lu", strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
                 strtoul(port_text, NULL, 10));
        /* its HTTP address, from its etl_meta (the last given) */
        q.n = 0;
        free(h.p);
        h = (struct buf){ 0 };
        if (buf_printf(&q, "SELECT value FROM remote('%s', `%s`, etl_meta) WHERE key = 'http' FORMAT TabSeparatedRaw", where_q,
                       c->database) != 0)
            goto nomem;
        if (request(c, &c->conn, "finding the shard's HTTP address", q.p, NULL, NULL, &h) != 0) {
            rc = -1;
            break;
        }
        {
            char *last = h.p ? strrchr(h.p, '\n') : NULL, *url;
            const char *http = last ? last + 1 : h.p;
            if (!http || !*http) {
                set_error(c, "%s: the etl_meta of shard %lu's node %s has no HTTP address (run etl2clickhouse --create-schema "
                             "--cluster %s with --url naming that node, once, to record it)", c->where, shard, where_q, c->cluster);
                rc = -1;
                break;
            }
            if (!(url = url_at(c, http))) {
                set_error(c, "%s: not a URL, in the etl_meta of shard %lu's node %s", http, shard, where_q);
                rc = -1;
                break;
            }
            rc = delete_loads_at(c, url, http, load, equal);
            free(url);
            found = 1;
        }
    }
    if (rc == 0 && !found) {
        set_error(c, "%s: no replica of the shard of machine %s in cluster %s (system.clusters)", c->where, c->machine, c->cluster);
        rc = -1;
    }
    goto out;
nomem:
    set_error(c, "out of memory");
fail:
    rc = -1;
out:
    free(q.p);
    free(a.p);
    free(h.p);
    if (saved) {
        free(c->conn.error);
        c->conn.error = saved;
    }
    return rc;
}

/* Sends what the streams have not: each table's last rows (the small tables' only ones, a
   request each, at once), waits for every stream, then the traces row, which commits the load.
   0, or -1 (the load's error set). */
static int send_rest(struct load_state *ls)
{
    etl_clickhouse *c = ls->c;
    unsigned traces = (unsigned)c->traces_at;
    uint64_t total = 0, done = 0;

    for (size_t i = 0; i < NTABLES; i++) total += ls->count[i];
    clock_gettime(CLOCK_MONOTONIC, &c->phase_start);
    for (unsigned i = 0; i < NTABLES; i++) {
        if (i == traces || !ls->rows[i].n) continue;
        if (!ls->st[i] && !(ls->st[i] = stream_start(c, ls, &c->table[i]))) return load_fail(ls, "cannot start a sending thread");
        if (stream_push(ls->st[i], &ls->rows[i]) != 0) return stream_failed(ls, ls->st[i]);
    }
    /* each ends on its own: one table's failure leaves the others' requests as they went */
    for (unsigned i = 0; i < NTABLES; i++) {
        if (!ls->st[i]) continue;
        if (stream_end(ls->st[i], 0) != 0) stream_failed(ls, ls->st[i]);
        done += ls->count[i];
        progress(c, 1, done, total, 0, 0);
    }
    if (atomic_load(&ls->failed)) return -1;
    if (c->o.read.interrupted && c->o.read.interrupted(c->o.read.arg)) return load_fail(ls, "interrupted");
    /* the commit: every other table is in */
    if (!(ls->st[traces] = stream_start(c, ls, &c->table[traces]))) return load_fail(ls, "cannot start a sending thread");
    if (stream_push(ls->st[traces], &ls->rows[traces]) != 0 || stream_end(ls->st[traces], 0) != 0)
        return stream_failed(ls, ls->st[traces]);
    progress(c, 1, total, total, 0, 1);
    return 0;
}

static void load_state_free(struct load_state *ls)
{
    for (size_t i = 0; i < NTABLES; i++) {
        stream_free(ls->st[i]);
        free(ls->rows[i].p);
    }
    survey_free(&ls->sv);
    sqlite3_finalize(ls->keep[0]);
    sqlite3_finalize(ls->keep[1]);
    sqlite3_close(ls->views);
    for (unsigned k = 0; k < sizeof ls->keep_stack / sizeof ls->keep_stack[0]; k++) sqlite3_finalize(ls->keep_stack[k]);
    for (unsigned k = 0; k < sizeof ls->keep_kernel / sizeof ls->keep_kernel[0]; k++) sqlite3_finalize(ls->keep_kernel[k]);
    sqlite3_finalize(ls->keep_name);
    sqlite3_close(ls->kernel);
    sqlite3_close(ls->stacks);
    free(ls->waiting);
    free(ls->prefix.p);
    free(ls->cpu);
    free(ls->error);
    pthread_mutex_destroy(&ls->lock);
    pthread_mutex_destroy(&ls->kernel_lock);
}

/* The first columns of every row: machine, trace, load, day. */
static int make_prefix(struct load_state *ls, uint64_t load)
{
    int64_t days = ls->sv.start_ns > 0 ? ls->sv.start_ns / 86400000000000LL : 0;
    uint16_t day = (uint16_t)(days > 65535 ? 65535 : days);
    uint8_t uuid[16];

    /* a UUID is two little-endian 64-bit halves, the first the text's first 16 digits */
    for (int i = 0; i < 8; i++) {
        uuid[i] = ls->sv.id[7 - i];
        uuid[8 + i] = ls->sv.id[15 - i];
    }
    return put_bytes(&ls->prefix, ls->c->machine, strlen(ls->c->machine)) == 0 && buf_add(&ls->prefix, uuid, 16) == 0 &&
                   put_u64(&ls->prefix, load) == 0 && buf_add(&ls->prefix, (uint8_t[2]){ (uint8_t)day, (uint8_t)(day >> 8) }, 2) == 0
               ? 0 : -1;
}

int etl_clickhouse_load(etl_clickhouse *c, const char *path)
{
    struct load_state ls;
    struct row_backend rows;
    etl_sqlite_options o = c->o.read;
    etl_sqlite_loader *l = NULL;
    const uint8_t *id;
    uint64_t load = 0;
    int rc, status = ETL_FATAL, sent = 0;

    memset(&ls, 0, sizeof ls);
    ls.c = c;
    pthread_mutex_init(&ls.lock, NULL);
    pthread_mutex_init(&ls.kernel_lock, NULL);
    atomic_init(&ls.failed, 0);
    c->path = path;
    c->trace_id[0] = '\0';
    free(c->machine);
    c->machine = NULL;
    if (!c->schema_ok) {
        rc = schema_check(c);
        if (rc == 0)
            set_error(c, "%s: database %s has no etl2clickhouse schema (--create-schema creates it)", c->where, c->database);
        if (rc != 1) goto fail;
        c->schema_ok = 1;
    }
    rows = (struct row_backend){ &ls, on_row, on_events, on_trace };
    o.append = o.replace = o.keep_partial = 0;
    o.on_message = read_message;
    o.on_progress = read_progress;
    o.interrupted = read_interrupted;
    o.arg = c;
    clock_gettime(CLOCK_MONOTONIC, &c->phase_start);
    /* the loader's reader first: what is wrong with the file, it says */
    if (etl_load_open_streamed(&l, path, &o, &rows, &rows) != ETL_OK || etl_sqlite_loader_add(l, path) != ETL_OK) {
        set_error(c, "%s", l ? etl_sqlite_loader_error(l) : "out of memory");
        goto fail;
    }
    if (survey_trace(c, path, &ls.sv) != 0) goto fail;
    id = ls.sv.id;
    snprintf(c->trace_id, sizeof c->trace_id,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", id[0], id[1], id[2], id[3], id[4],
             id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]);
    c->machine = c->o.machine ? strdup(c->o.machine) : ls.sv.machine ? strdup(ls.sv.machine) : NULL;
    if (!c->machine) {
        if (c->o.machine || ls.sv.machine) goto nomem;
        set_error(c, "%s: the trace records no machine name (no SystemConfig/CPU event with a ComputerName): "
                     "name it with --machine", path);
        goto fail;
    }
    if (getrandom(&load, sizeof load, 0) != (ssize_t)sizeof load) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        load = ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 40);
    }
    load |= 1; /* never 0, the default a missing value would have */
    if (make_prefix(&ls, load) != 0) goto nomem;
    ls.keeping_samples = ls.sv.kernel_stacks > 0;
    if (views_open(&ls) != 0) {
        set_error(c, "%s", ls.error);
        goto fail;
    }
    for (size_t i = 0; i < NTABLES; i++)
        if (buf_reserve(&ls.rows[i], 65536) != 0) goto nomem;
    sent = 1;
    status = etl_load_stream(l);
    if (status == ETL_FATAL || status == ETL_FAILED) {
        /* a stream's error is the cause; else the loader's (said already) */
        if (ls.error) set_error(c, "%s", ls.error);
        else set_error(c, "%s", etl_sqlite_loader_error(l));
        goto fail;
    }
    if (send_rest(&ls) != 0) {
        set_error(c, "%s", ls.error ? ls.error : "out of memory");
        goto fail;
    }
    /* committed: what an earlier or failed load of the trace left is no longer shown; it is
       deleted now (on a cluster, on the machine's shard) */
    if (delete_loads(c, load, 0) != 0) {
        etl_sqlite_message m = { ETL_WARN, 0, path, -1, c->conn.error };
        if (c->o.read.on_message) c->o.read.on_message(c->o.read.arg, &m);
    }
    goto out;
nomem:
    set_error(c, "out of memory");
fail:
    /* the streams still running are abandoned before anything is deleted */
    for (size_t i = 0; i < NTABLES; i++)
        if (ls.st[i] && ls.st[i]->started) stream_end(ls.st[i], 1);
    {
        char *msg = NULL;
        if (asprintf(&msg, "%s: %s; nothing of this load is visible", path, c->conn.error ? c->conn.error : "out of memory") >= 0) {
            free(c->conn.error);
            c->conn.error = msg;
        }
    }
    say_fatal(c);
    if (sent) delete_loads(c, load, 1); /* best effort: a later load of the trace deletes what stays */
    status = ETL_FATAL;
out:
    etl_sqlite_loader_close(l);
    load_state_free(&ls);
    return status;
}

/* ---------------------------------------------------------------- the handle */

static char *where_of(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *w = NULL;

    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
        if (asprintf(&w, "%s://%s%s%s", scheme, host, port ? ":" : "", port ? port : "") < 0) w = NULL;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return w;
}

static int plain_name(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

int etl_clickhouse_open(etl_clickhouse **out, const char *url, const etl_clickhouse_options *options)
{
    static int curl_ready;
    etl_clickhouse *c = calloc(1, sizeof *c);

    *out = c;
    if (!c) return ETL_FATAL;
    if (options) c->o = *options;
    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            set_error(c, "libcurl could not start");
            return ETL_FATAL;
        }
        curl_ready = 1;
    }
    c->url = strdup(url ? url : "");
    c->database = strdup(c->o.database ? c->o.database : "etl");
    c->cluster = c->o.cluster ? strdup(c->o.cluster) : NULL;
    c->conn.curl = curl_easy_init();
    if (!c->url || !c->database || (c->o.cluster && !c->cluster) || !c->conn.curl) {
        set_error(c, "out of memory");
        return ETL_FATAL;
    }
    c->where = where_of(c->url);
    if (!c->where) {
        set_error(c, "%s: not a URL (http://host:8123/)", c->url);
        return ETL_FATAL;
    }
    if (!plain_name(c->database) || (c->cluster && !plain_name(c->cluster))) {
        set_error(c, "%s: a database or cluster name is letters, digits and _", c->cluster && !plain_name(c->cluster) ? c->cluster : c->database);
        return ETL_FATAL;
    }
    if (c->o.machine && !*c->o.machine) {
        set_error(c, "the machine's name is empty");
        return ETL_FATAL;
    }
    if (tables_init(c) != 0) {
        set_error(c, "out of memory");
        return ETL_FATAL;
    }
    return ETL_OK;
}

const char *etl_clickhouse_trace_id(const etl_clickhouse *c)
{
    return c->trace_id;
}

const char *etl_clickhouse_machine(const etl_clickhouse *c)
{
    return c->machine ? c->machine : "";
}

const char *etl_clickhouse_error(const etl_clickhouse *c)
{
    return c->conn.error ? c->conn.error : "";
}

void etl_clickhouse_close(etl_clickhouse *c)
{
    if (!c) return;
    for (size_t i = 0; i < NTABLES; i++) {
        for (unsigned k = 0; k < c->table[i].ncols; k++) free(c->table[i].col[k].name);
        free(c->table[i].col);
    }
    if (c->conn.curl) curl_easy_cleanup(c->conn.curl);
    free(c->url);
    free(c->where);
    free(c->database);
    free(c->cluster);
    free(c->machine);
    free(c->conn.error);
    free(c);
}
