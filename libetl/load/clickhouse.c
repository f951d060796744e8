/* SPDX-License-Identifier: MIT */
/* The ClickHouse loader: a trace staged by the SQLite loader, streamed table by table to ClickHouse over HTTP (libcurl) in RowBinary, committed by its traces row. */
#define _GNU_SOURCE /* mkdtemp, getrandom */
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
 * columns come from the SQLite schema itself (PRAGMA table_info: INTEGER is Int64, TEXT and
 * BLOB are String, Nullable unless NOT NULL), less its trace number; a few get columns the
 * SQLite views compute with correlated subqueries, filled here from the same expressions
 * (ClickHouse 18's SQL has neither correlated subqueries nor window functions).
 */
struct extra {
    const char *name, *type, *expr; /* expr NULL: set by the loader (traces.committed_ns) */
};

struct table_def {
    const char *name;           /* the ClickHouse table's name (and its SQLite table's) */
    const char *sqlite_table;   /* whose columns it has; NULL: only its extras */
    const char *source;         /* the SQLite FROM clause, its rows named x */
    const char *order;          /* ORDER BY after machine, trace */
    const struct extra *extra;
};

static const struct extra traces_extra[] = { { "committed_ns", "Int64", NULL }, { NULL, NULL, NULL } };
static const struct extra samples_extra[] = {
    { "process_name", "Nullable(String)", NAME_AT("x.trace", "x.pid", "x.time_ns", "x.event") },
    { NULL, NULL, NULL },
};
static const struct extra cswitches_extra[] = {
    { "old_pid", "Nullable(Int64)", "x.old_pid" },
    { "new_pid", "Nullable(Int64)", "x.new_pid" },
    { "old_process", "Nullable(String)", NAME_AT("x.trace", "x.old_pid", "x.time_ns", "x.event") },
    { "new_process", "Nullable(String)", NAME_AT("x.trace", "x.new_pid", "x.time_ns", "x.event") },
    { NULL, NULL, NULL },
};
static const struct extra syscalls_extra[] = {
    { "pid", "Nullable(Int64)", "x.pid" },
    { "process_name", "Nullable(String)", NAME_AT("x.trace", "x.pid", "x.time_ns", "x.event") },
    { NULL, NULL, NULL },
};
static const struct extra intervals_extra[] = {
    { "cpu", "Int64", "x.cpu" }, { "tid", "Int64", "x.tid" }, { "pid", "Nullable(Int64)", "x.pid" },
    { "process_name", "Nullable(String)", "x.process_name" }, { "start_ns", "Int64", "x.start_ns" },
    { "end_ns", "Nullable(Int64)", "x.end_ns" }, { "ns", "Nullable(Int64)", "x.ns" },
    { "start_event", "Int64", "x.start_event" }, { "end_event", "Nullable(Int64)", "x.end_event" },
    { NULL, NULL, NULL },
};

/* traces last: its row commits the load. */
static const struct table_def table_defs[] = {
    { "providers", "providers", "providers x", "provider", NULL },
    { "event_names", "event_names", "event_names x", "name_id", NULL },
    { "event_name_fields", "event_name_fields", "event_name_fields x", "name_id, idx", NULL },
    { "events", "events", "events x", "time_ns, event", NULL },
    { "event_ext", "event_ext", "event_ext x", "event, idx", NULL },
    { "processes", "processes", "processes x", "time_ns, event", NULL },
    { "threads", "threads", "threads x", "time_ns, event", NULL },
    { "images", "images", "images x", "time_ns, event", NULL },
    { "cswitches", "cswitches",
      "(SELECT c.*, " PID_AT("c.trace", "c.old_tid", "c.event") " AS old_pid, "
      PID_AT("c.trace", "c.new_tid", "c.event") " AS new_pid FROM cswitches c) x",
      "time_ns, event", cswitches_extra },
    { "ready_threads", "ready_threads", "ready_threads x", "time_ns, event", NULL },
    { "disk_io", "disk_io", "disk_io x", "time_ns, event", NULL },
    { "syscalls", "syscalls", "(SELECT s.*, " PID_AT("s.trace", "s.tid", "s.event") " AS pid FROM syscalls s) x",
      "time_ns, event", syscalls_extra },
    { "samples", "samples", "samples x", "time_ns, event", samples_extra },
    { "stacks", "stacks", "stacks x", "time_ns, stack", NULL },
    { "stack_frames", "stack_frames", "stack_frames x", "frames, depth", NULL },
    { "functions", "functions", "functions x", "function", NULL },
    { "lbr", "lbr", "lbr x", "time_ns, lbr", NULL },
    { "lbr_entries", "lbr_entries", "lbr_entries x", "lbr, idx", NULL },
    { "lost", "lost", "lost x", "kind", NULL },
    { "cpu_intervals", NULL, "cpu_intervals x", "start_ns, cpu", intervals_extra },
    { "traces", "traces", "traces x", "", traces_extra },
};
#define NTABLES (sizeof table_defs / sizeof table_defs[0])

/* Column types as RowBinary writes them. */
enum coltype { C_I64, C_NI64, C_STR, C_NSTR };

struct column {
    char *name;
    enum coltype type;
};

struct table {
    const struct table_def *def;
    struct column *col;
    unsigned ncols;
    char *select;               /* the SQLite SELECT of its rows (traces: committed_ns bound to ?1) */
};

struct buf {
    char *p;
    size_t n, cap, pos;
};

/* A connection to the server: the handle and its last error. The sending threads have one each. */
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
    int schema_ok;              /* etl_meta was checked */
    char trace_id[40];
    char *machine;
    const char *path;           /* the input being loaded */
    struct timespec phase_start;
};

/* ---------------------------------------------------------------- small helpers */

static int buf_reserve(struct buf *b, size_t more)
{
    if (b->n + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_add(struct buf *b, const void *data, size_t n)
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
struct send_state {
    etl_clickhouse *c;
    const char *dbpath;
    const uint8_t *trace;       /* 16 bytes */
    uint64_t load;
    uint16_t day;
    int64_t committed;
    atomic_uint next;           /* index of the next table to send (traces, the last, is not theirs) */
    _Atomic uint64_t done;      /* rows sent */
    atomic_int stop;            /* a sender failed, or the load was interrupted */
    atomic_int finished;        /* senders that are done */
    pthread_mutex_t lock;
    char *error;                /* the first sender's error */
};

/* What a streamed INSERT reads its body from. */
struct stream {
    struct send_state *ss;
    struct conn *k;
    sqlite3_stmt *st;
    const struct table *t;
    struct buf row;             /* encoded rows not yet handed to curl */
    int done_rows, failed, interrupted;
};

static size_t stream_read(char *out, size_t size, size_t n, void *arg);

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
    }
    else {
        curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, sql);
        curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(sql));
    }
    rc = curl_easy_perform(k->curl);
    curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &code);
    while (body.n && (body.p[body.n - 1] == '\n' || body.p[body.n - 1] == '\r')) body.p[--body.n] = '\0';
    if (rc != CURLE_OK || code != 200) squeeze(&body);
    if (s && s->failed) {
        /* the error is set (the staged database, or memory) */
    }
    else if (s && s->interrupted) conn_error(k, "stopped");
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
    return str ? (nullable ? C_NSTR : C_STR) : (nullable ? C_NI64 : C_I64);
}

static const char *type_name(enum coltype t)
{
    static const char *const names[] = { "Int64", "Nullable(Int64)", "String", "Nullable(String)" };
    return names[t];
}

/* Each table's columns, from the SQLite schema made in memory, and its SELECT. */
static int tables_init(etl_clickhouse *c)
{
    sqlite3 *db = NULL;
    int rc = -1;

    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK ||
        sqlite3_exec(db, etl_sqlite_schema_tables, NULL, NULL, NULL) != SQLITE_OK)
        goto out;
    for (size_t i = 0; i < NTABLES; i++) {
        struct table *t = &c->table[i];
        struct buf sel = { 0 };
        t->def = &table_defs[i];
        if (buf_printf(&sel, "SELECT ") != 0) goto out;
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
                if (strcmp(name, "trace") == 0) continue;
                if (add_column(t, name, str ? (notnull ? C_STR : C_NSTR) : (notnull ? C_I64 : C_NI64)) != 0 ||
                    buf_printf(&sel, "%sx.\"%s\"", t->ncols > 1 ? ", " : "", name) != 0) {
                    sqlite3_finalize(st);
                    free(sel.p);
                    goto out;
                }
            }
            sqlite3_finalize(st);
        }
        for (const struct extra *e = t->def->extra; e && e->name; e++) {
            if (add_column(t, e->name, type_of(e->type)) != 0 ||
                buf_printf(&sel, "%s%s", t->ncols > 1 ? ", " : "", e->expr ? e->expr : "?1") != 0) {
                free(sel.p);
                goto out;
            }
        }
        if (buf_printf(&sel, " FROM %s", t->def->source) != 0) {
            free(sel.p);
            goto out;
        }
        t->select = sel.p;
    }
    rc = 0;
out:
    sqlite3_close(db);
    return rc;
}

/* The DDL of one node: its local tables, the views of committed loads, with a cluster the
   Distributed tables, then the kinds, the summary views and etl_meta (last: a schema is
   complete once etl_meta is there). */
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

/* The next row of the staged table, encoded: 1, 0 at the end, -1 on error (said). */
static int encode_row(struct stream *s)
{
    const struct table *t = s->t;
    struct buf *b = &s->row;
    int rc = sqlite3_step(s->st);
    uint8_t uuid[16];
    uint16_t day = s->ss->day;

    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) {
        conn_error(s->k, "the staged database: %s: %s", t->def->name, sqlite3_errmsg(sqlite3_db_handle(s->st)));
        return -1;
    }
    /* a UUID is two little-endian 64-bit halves, the first the text's first 16 digits */
    for (int i = 0; i < 8; i++) {
        uuid[i] = s->ss->trace[7 - i];
        uuid[8 + i] = s->ss->trace[15 - i];
    }
    if (put_bytes(b, s->ss->c->machine, strlen(s->ss->c->machine)) != 0 || buf_add(b, uuid, 16) != 0 ||
        put_u64(b, s->ss->load) != 0 || buf_add(b, (uint8_t[2]){ (uint8_t)day, (uint8_t)(day >> 8) }, 2) != 0)
        goto nomem;
    for (unsigned k = 0; k < t->ncols; k++) {
        int null = sqlite3_column_type(s->st, (int)k) == SQLITE_NULL;
        switch (t->col[k].type) {
        case C_NI64:
        case C_NSTR:
            if (buf_add(b, null ? "\1" : "\0", 1) != 0) goto nomem;
            if (null) continue;
            break;
        default:
            if (null) {
                conn_error(s->k, "the staged database: %s.%s is NULL", t->def->name, t->col[k].name);
                return -1;
            }
        }
        if (t->col[k].type == C_I64 || t->col[k].type == C_NI64) {
            if (put_u64(b, (uint64_t)sqlite3_column_int64(s->st, (int)k)) != 0) goto nomem;
        }
        else {
            const void *p = sqlite3_column_type(s->st, (int)k) == SQLITE_BLOB ? sqlite3_column_blob(s->st, (int)k)
                                                                                : (const void *)sqlite3_column_text(s->st, (int)k);
            if (put_bytes(b, p, (size_t)sqlite3_column_bytes(s->st, (int)k)) != 0) goto nomem;
        }
    }
    return 1;
nomem:
    conn_error(s->k, "out of memory");
    return -1;
}

static void progress(etl_clickhouse *c, int phase, uint64_t done, uint64_t total, uint64_t events, int final)
{
    etl_clickhouse_progress p = { c->path, phase, done, total, events, since(&c->phase_start), final };
    if (c->o.on_progress) c->o.on_progress(c->o.read.arg, &p);
}

static size_t stream_read(char *out, size_t size, size_t n, void *arg)
{
    struct stream *s = arg;
    size_t want = size * n, got = 0;

    while (got < want) {
        if (s->row.pos == s->row.n) {
            int rc = 0;
            unsigned rows = 0;
            s->row.n = s->row.pos = 0;
            if (s->done_rows) break;
            if (atomic_load(&s->ss->stop)) {
                s->interrupted = 1;
                return CURL_READFUNC_ABORT;
            }
            /* a few rows at a time, so that a chunk is not a row */
            while (s->row.n < 65536 && (rc = encode_row(s)) == 1) rows++;
            atomic_fetch_add(&s->ss->done, rows);
            if (rc < 0) {
                s->failed = 1;
                return CURL_READFUNC_ABORT;
            }
            if (rc == 0) s->done_rows = 1;
            continue;
        }
        size_t k = s->row.n - s->row.pos;
        if (k > want - got) k = want - got;
        memcpy(out + got, s->row.p + s->row.pos, k);
        s->row.pos += k;
        got += k;
    }
    return got;
}

/* ---------------------------------------------------------------- one trace */

/* 128 bits of the trace's identity: its logfile header and its first events (not what a
   header rewritten at the end changes: end time, buffers written). */
static int trace_identity(sqlite3 *db, uint8_t id[16])
{
    static const char *const sql[] = {
        "SELECT logger_name, log_file_name, log_file_mode, clock_type, perf_freq, cpu_speed_mhz, start_timestamp,"
        " start_time_ns, boot_time_ns, timezone_bias, os_version, pointer_size, processors, buffer_size FROM traces",
        "SELECT ts, cpu, pid, tid, kind, hook_id, id, version, opcode, payload_len, payload FROM events ORDER BY event LIMIT 256",
    };
    uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;

    for (size_t q = 0; q < 2; q++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql[q], -1, &st, NULL) != SQLITE_OK) return -1;
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int k = 0; k < sqlite3_column_count(st); k++) {
                const uint8_t *p = sqlite3_column_blob(st, k);
                int n = sqlite3_column_bytes(st, k);
                uint8_t tag = (uint8_t)sqlite3_column_type(st, k);
                h1 = (h1 ^ tag) * 0x100000001b3ull;
                h2 = (h2 ^ tag) * 0x9e3779b97f4a7c15ull;
                for (int i = 0; p && i < n; i++) {
                    h1 = (h1 ^ p[i]) * 0x100000001b3ull;
                    h2 = ((h2 ^ p[i]) * 0x9e3779b97f4a7c15ull) ^ (h2 >> 29);
                }
            }
        }
        sqlite3_finalize(st);
    }
    for (int i = 0; i < 8; i++) {
        id[i] = (uint8_t)(h1 >> (56 - 8 * i));
        id[8 + i] = (uint8_t)(h2 >> (56 - 8 * i));
    }
    id[6] = (uint8_t)((id[6] & 0x0f) | 0x80); /* version 8: made by its own rule (RFC 9562) */
    id[8] = (uint8_t)((id[8] & 0x3f) | 0x80); /* the RFC's variant */
    return 0;
}

static char *first_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

static int64_t first_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = 0;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return 0;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

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
static int stage(etl_clickhouse *c, const char *path, const char *dbpath)
{
    etl_sqlite_options o = c->o.read;
    etl_sqlite_loader *l = NULL;
    int rc;

    o.append = o.replace = o.keep_partial = 0;
    o.on_message = read_message;
    o.on_progress = read_progress;
    o.interrupted = read_interrupted;
    o.arg = c;
    clock_gettime(CLOCK_MONOTONIC, &c->phase_start);
    rc = etl_sqlite_loader_open(&l, dbpath, &o);
    if (rc == ETL_OK) {
        rc = etl_sqlite_loader_add(l, path);
        if (rc == ETL_OK) rc = etl_sqlite_loader_commit(l);
        else rc = ETL_FATAL;
    }
    /* the SQLite loader has said its fatal message already */
    if (rc == ETL_FATAL || rc == ETL_FAILED) {
        set_error(c, "%s", l ? etl_sqlite_loader_error(l) : "out of memory");
        rc = ETL_FATAL;
    }
    etl_sqlite_loader_close(l);
    return rc;
}

/* Deletes the rows of machine/trace whose load is (equal: 1) or is not (0) load: mutations,
   on one server only (a Distributed table takes none). Best effort: -1 if refused. */
static int delete_loads(etl_clickhouse *c, uint64_t load, int equal)
{
    struct buf q = { 0 };
    int rc = 0;
    char *saved = c->conn.error ? strdup(c->conn.error) : NULL;

    for (size_t i = 0; i < NTABLES && rc == 0; i++) {
        q.n = 0;
        if (buf_printf(&q, "ALTER TABLE `%s`.`%s_local` DELETE WHERE machine = ", c->database, c->table[i].def->name) != 0 ||
            buf_literal(&q, c->machine) != 0 ||
            buf_printf(&q, " AND trace = '%s' AND load %s %llu", c->trace_id, equal ? "=" : "!=",
                       (unsigned long long)load) != 0 ||
            exec_sql(c, "deleting a load's rows", q.p) != 0)
            rc = -1;
    }
    free(q.p);
    if (saved) { /* the load's own error stays the one told */
        free(c->conn.error);
        c->conn.error = saved;
    }
    return rc;
}

/* Whether the server has rows of an earlier committed load of the trace (a mutation costs a
   rewrite of the parts it touches: none is asked for a first load). */
static int earlier_loads(etl_clickhouse *c, uint64_t load)
{
    struct buf q = { 0 }, a = { 0 };
    int n = 0;

    if (buf_printf(&q, "SELECT count() FROM `%s`.traces_local WHERE machine = ", c->database) == 0 &&
        buf_literal(&q, c->machine) == 0 &&
        buf_printf(&q, " AND trace = '%s' AND load != %llu", c->trace_id, (unsigned long long)load) == 0 &&
        request(c, &c->conn, "reading the traces", q.p, NULL, NULL, &a) == 0)
        n = a.p ? atoi(a.p) : 0;
    else
        n = 1; /* not known: delete */
    free(q.p);
    free(a.p);
    return n > 0;
}

/* One table of the staged database db over connection k: 0, or -1 (k's error set). */
static int send_table(struct send_state *ss, struct conn *k, sqlite3 *db, const struct table *t)
{
    etl_clickhouse *c = ss->c;
    struct stream s = { .ss = ss, .k = k, .t = t };
    struct buf insert = { 0 };
    char what[96];
    int rc;

    if (sqlite3_prepare_v2(db, t->select, -1, &s.st, NULL) != SQLITE_OK) {
        conn_error(k, "the staged database: %s: %s", t->def->name, sqlite3_errmsg(db));
        return -1;
    }
    if (sqlite3_bind_parameter_count(s.st) == 1) sqlite3_bind_int64(s.st, 1, ss->committed);
    if (buf_printf(&insert, "INSERT INTO `%s`.`%s_%s` FORMAT RowBinary", c->database, t->def->name,
                   c->cluster ? "rows" : "local") != 0) {
        sqlite3_finalize(s.st);
        conn_error(k, "out of memory");
        return -1;
    }
    snprintf(what, sizeof what, "inserting into %s", t->def->name);
    rc = request(c, k, what, insert.p, c->cluster ? "insert_distributed_sync=1" : NULL, &s, NULL);
    sqlite3_finalize(s.st);
    free(insert.p);
    free(s.row.p);
    return rc;
}

/* The server writes a table's part with one thread: a few tables at once keep more of its
   processors busy, each sender with its own connection to the server and to the staged
   database. */
#define SENDERS 3

struct sender {
    struct send_state *ss;
    struct conn conn;
    pthread_t thread;
};

static void *sender_main(void *arg)
{
    struct sender *w = arg;
    struct send_state *ss = w->ss;
    sqlite3 *db = NULL;
    unsigned i;

    if (sqlite3_open_v2(ss->dbpath, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        conn_error(&w->conn, "%s: the staged database: %s", ss->dbpath, db ? sqlite3_errmsg(db) : "out of memory");
    else
        while (!atomic_load(&ss->stop) && (i = atomic_fetch_add(&ss->next, 1)) < NTABLES - 1)
            if (send_table(ss, &w->conn, db, &ss->c->table[i]) != 0) break;
    if (w->conn.error) {
        pthread_mutex_lock(&ss->lock);
        if (!ss->error) {
            ss->error = w->conn.error;
            w->conn.error = NULL;
        }
        pthread_mutex_unlock(&ss->lock);
        atomic_store(&ss->stop, 1);
    }
    sqlite3_close(db);
    atomic_fetch_add(&ss->finished, 1);
    return NULL;
}

/* Streams the staged trace's tables (SENDERS at once), then its traces row. 0, or -1 (error set). */
static int send_trace(etl_clickhouse *c, sqlite3 *db, const char *dbpath, const uint8_t trace[16], uint64_t load,
                      uint16_t day)
{
    struct send_state ss = { .c = c, .dbpath = dbpath, .trace = trace, .load = load, .day = day };
    struct sender w[SENDERS];
    uint64_t total = 0;
    unsigned started = 0;
    struct timespec now, nap = { 0, 50000000 };

    clock_gettime(CLOCK_REALTIME, &now);
    ss.committed = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    atomic_init(&ss.next, 0);
    atomic_init(&ss.done, 0);
    atomic_init(&ss.stop, 0);
    atomic_init(&ss.finished, 0);
    pthread_mutex_init(&ss.lock, NULL);
    for (size_t i = 0; i < NTABLES; i++) {
        char q[96];
        snprintf(q, sizeof q, "SELECT count(*) FROM %s", c->table[i].def->sqlite_table ? c->table[i].def->sqlite_table : "cswitches");
        total += (uint64_t)first_int(db, q);
    }
    clock_gettime(CLOCK_MONOTONIC, &c->phase_start);
    progress(c, 1, 0, total, 0, 0);
    for (unsigned i = 0; i < SENDERS; i++) {
        w[i] = (struct sender){ .ss = &ss };
        w[i].conn.curl = curl_easy_init();
        if (!w[i].conn.curl || pthread_create(&w[i].thread, NULL, sender_main, &w[i]) != 0) {
            if (w[i].conn.curl) curl_easy_cleanup(w[i].conn.curl);
            pthread_mutex_lock(&ss.lock);
            if (!ss.error) ss.error = strdup("cannot start a sending thread");
            pthread_mutex_unlock(&ss.lock);
            atomic_store(&ss.stop, 1);
            break;
        }
        started++;
    }
    /* the caller's callbacks from this thread only */
    while ((unsigned)atomic_load(&ss.finished) < started) {
        nanosleep(&nap, NULL);
        progress(c, 1, atomic_load(&ss.done), total, 0, 0);
        if (c->o.read.interrupted && c->o.read.interrupted(c->o.read.arg) && !atomic_load(&ss.stop)) {
            pthread_mutex_lock(&ss.lock);
            if (!ss.error) ss.error = strdup("interrupted");
            pthread_mutex_unlock(&ss.lock);
            atomic_store(&ss.stop, 1);
        }
    }
    for (unsigned i = 0; i < started; i++) {
        pthread_join(w[i].thread, NULL);
        curl_easy_cleanup(w[i].conn.curl);
        free(w[i].conn.error);
    }
    pthread_mutex_destroy(&ss.lock);
    if (ss.error || started < SENDERS) {
        set_error(c, "%s", ss.error ? ss.error : "out of memory");
        free(ss.error);
        return -1;
    }
    /* the commit: every other table is in */
    if (send_table(&ss, &c->conn, db, &c->table[NTABLES - 1]) != 0) return -1;
    progress(c, 1, atomic_load(&ss.done), total, 0, 1);
    return 0;
}

int etl_clickhouse_load(etl_clickhouse *c, const char *path)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = NULL, *dbpath = NULL;
    sqlite3 *db = NULL;
    uint8_t trace[16];
    uint64_t load = 0;
    int64_t start_ns;
    int rc, status = ETL_FATAL, sent = 0;

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
    if (asprintf(&dir, "%s/etl2clickhouse.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
        dir = NULL;
        goto nomem;
    }
    if (!mkdtemp(dir)) {
        set_error(c, "%s: cannot make a staging directory: %s", dir, strerror(errno));
        free(dir);
        dir = NULL;
        goto fail;
    }
    if (asprintf(&dbpath, "%s/trace.db", dir) < 0) {
        dbpath = NULL;
        goto nomem;
    }
    status = stage(c, path, dbpath);
    if (status == ETL_FATAL) goto out;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        set_error(c, "%s: the staged database: %s", dbpath, db ? sqlite3_errmsg(db) : "out of memory");
        goto fail;
    }
    if (trace_identity(db, trace) != 0) {
        set_error(c, "%s: the staged database: %s", dbpath, sqlite3_errmsg(db));
        goto fail;
    }
    snprintf(c->trace_id, sizeof c->trace_id,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", trace[0], trace[1], trace[2],
             trace[3], trace[4], trace[5], trace[6], trace[7], trace[8], trace[9], trace[10], trace[11], trace[12],
             trace[13], trace[14], trace[15]);
    c->machine = c->o.machine ? strdup(c->o.machine)
                              : first_text(db, "SELECT json_extract(e.fields, '$.ComputerName') FROM events e "
                                               "JOIN event_names n ON n.name_id = e.name "
                                               "WHERE n.name = 'SystemConfig/CPU' AND json_extract(e.fields, '$.ComputerName') <> '' "
                                               "ORDER BY e.event LIMIT 1");
    if (!c->machine) {
        set_error(c, "%s: the trace records no machine name (no SystemConfig/CPU event with a ComputerName): "
                     "name it with --machine", path);
        goto fail;
    }
    start_ns = first_int(db, "SELECT coalesce(start_time_ns, first_time_ns, 0) FROM traces");
    if (getrandom(&load, sizeof load, 0) != (ssize_t)sizeof load) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        load = ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 40);
    }
    load |= 1; /* never 0, the default a missing value would have */
    sent = 1;
    {
        int64_t days = start_ns > 0 ? start_ns / 86400000000000LL : 0;
        if (send_trace(c, db, dbpath, trace, load, (uint16_t)(days > 65535 ? 65535 : days)) != 0) goto fail;
    }
    /* committed: what an earlier load of the trace left is no longer shown; on one server it is
       deleted now */
    if (!c->cluster && earlier_loads(c, load) && delete_loads(c, load, 0) != 0) {
        etl_sqlite_message m = { ETL_WARN, 0, path, -1, c->conn.error };
        if (c->o.read.on_message) c->o.read.on_message(c->o.read.arg, &m);
    }
    goto out;
nomem:
    set_error(c, "out of memory");
fail:
    {
        char *msg = NULL;
        if (asprintf(&msg, "%s: %s; nothing of this load is visible", path, c->conn.error ? c->conn.error : "out of memory") >= 0) {
            free(c->conn.error);
            c->conn.error = msg;
        }
    }
    say_fatal(c);
    if (sent && !c->cluster) delete_loads(c, load, 1);
    status = ETL_FATAL;
out:
    sqlite3_close(db);
    if (dbpath) {
        unlink(dbpath);
        for (const char *suffix = "-journal"; suffix; suffix = NULL) {
            char *p = NULL;
            if (asprintf(&p, "%s%s", dbpath, suffix) >= 0) unlink(p);
            free(p);
        }
    }
    if (dir) rmdir(dir);
    free(dbpath);
    free(dir);
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
        free(c->table[i].select);
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
