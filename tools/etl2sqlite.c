/* SPDX-License-Identifier: MIT */
/* etl2sqlite: load ETL files into an SQLite database (schema: tools/sqlschema.c). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "etl.h"
#include "interrupt.h"
#include "sqlschema.h"

/* Exit codes (doc/etl2sqlite.1). */
#define EXIT_DAMAGED 1 /* loaded; an input had damaged parts, recorded in the lost table */
#define EXIT_ERROR   2 /* bad usage, an input could not be read, or the database could not be written */

static const char usage_text[] =
    "Usage: etl2sqlite [-o OUT.db] [OPTION]... IN.etl...\n"
    "Load Event Trace Log files (.etl, .etl.gz) into an SQLite database: one row per\n"
    "event, the kernel event classes decoded into their own tables, every input on\n"
    "one timeline (as etlmerge places them).\n"
    "\n"
    "  -o, --output=FILE    the database (default: the first input's name with .db\n"
    "                       in place of .etl or .etl.gz)\n"
    "  -a, --append         add the inputs to an existing database\n"
    "  -f, --force          replace an existing database\n"
    "      --no-payload     leave events.payload NULL (a smaller database)\n"
    "      --keep-partial   when an input cannot be read, keep what was loaded (from\n"
    "                       the inputs that could be) instead of writing nothing\n"
    "      --schema         print the schema (tables, indexes, views) and exit\n"
    "      --progress       show the progress bar even when stderr is not a terminal\n"
    "      --no-progress    never show it (default: shown when stderr is a terminal)\n"
    "  -q, --quiet          no warnings or progress on stderr (the exit status still\n"
    "                       tells)\n"
    "  -v, --verbose        tell on stderr what each phase of the load took\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the versions of etl2sqlite, libetl, zlib and SQLite\n"
    "\n"
    "An existing database is refused unless --append or --force. A new or replaced\n"
    "database is written under a temporary name beside it and renamed when complete;\n"
    "--append adds in one transaction, undone on failure.\n"
    "\n"
    "Exit status: 0 loaded; 1 loaded, but an input had damaged parts (stderr names\n"
    "the file and offset; the damage is recorded in the lost table and what was\n"
    "readable is loaded); 2 nothing loaded: bad usage, an input could not be read,\n"
    "the database exists, or it could not be written (with --keep-partial, what\n"
    "could be loaded is kept and the status is still 2).\n";

struct options {
    const char *output;
    int append, force, no_payload, keep_partial, quiet, verbose;
    int progress; /* -1: when stderr is a terminal */
};

/* ------------------------------------------------------------------ the loader's state */

/* What the loader keeps per input. */
struct input {
    const char *path;
    int64_t trace;              /* traces.trace */
    int merge_index;            /* index among the merge's inputs, -1 when not loaded */
    etl_reader *probe;          /* the first pass's reader (closed after it) */
    etl_image_map *map;
    uint64_t events;
    int64_t first_ns, last_ns;
    unsigned warnings;
    uint64_t progress_offset;   /* highest buffer offset delivered so far */
    uint64_t file_size;
    /* for the disk_io and syscalls rows (io_row) */
    int64_t perf_freq;          /* Hz of the trace's clock: DiskIo response times */
    uint32_t *running;          /* per processor, the thread CSwitch last switched to, + 1 (0: unknown) */
    unsigned nrunning;
    struct disk_init *inits;    /* DiskIo Init events not matched yet, by Irp (open addressing) */
    unsigned init_cap, init_used;
};

enum stmt_id {
    S_EVENT, S_EXT, S_PROVIDER, S_PROCESS, S_THREAD, S_IMAGE, S_CSWITCH, S_READY, S_SAMPLE, S_STACK,
    S_FRAME, S_LBR, S_LBR_ENTRY, S_LOST, S_DISK_IO, S_SYSCALL, S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
    [S_EVENT] = "INSERT INTO events VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
    [S_EXT] = "INSERT INTO event_ext VALUES (?1,?2,?3,?4,?5)",
    [S_PROVIDER] = "INSERT INTO providers VALUES (?1,?2,?3)",
    [S_PROCESS] = "INSERT INTO processes VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)",
    [S_THREAD] = "INSERT INTO threads VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)",
    [S_IMAGE] = "INSERT INTO images VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
    [S_CSWITCH] = "INSERT INTO cswitches VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
    [S_READY] = "INSERT INTO ready_threads VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
    [S_SAMPLE] = "INSERT INTO samples VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
    [S_STACK] = "INSERT INTO stacks VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    [S_FRAME] = "INSERT INTO stack_frames VALUES (?1,?2,?3,?4,?5)",
    [S_LBR] = "INSERT INTO lbr VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [S_LBR_ENTRY] = "INSERT INTO lbr_entries VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
    [S_LOST] = "INSERT INTO lost VALUES (?1,?2,?3,?4,?5)",
    [S_DISK_IO] = "INSERT INTO disk_io VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
    [S_SYSCALL] = "INSERT INTO syscalls VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
};

#define FRAME_SETS_MAX (1u << 22)

struct frame_set {
    uint64_t h1, h2;
    int64_t id;      /* 0: empty slot */
};

struct frame_sets {
    struct frame_set *slot;
    unsigned cap, count;
    int64_t next_id;
    /* the frames being stored: address, resolved image (NULL if none) and offset */
    uint64_t *addr, *offset;
    const char **image;
    unsigned frames_cap;
    struct name_hash { const char *name; uint64_t hash; } names[256];
};

/* Providers seen, by GUID: an open-addressing table of provider ids. */
struct provider_slot {
    etl_guid guid;
    int64_t id; /* 0: empty */
};

/* Rows of one table inserted ROW_BATCH at a time by one multi-row INSERT (the tables with about
   a row per event): values are integers, NULLs, or text that outlives the batch (string
   constants, and the image names the image maps own). */
#define ROW_BATCH 64
#define ROW_COLUMNS_MAX 16

struct rowval {
    int64_t i;
    const char *t;
    int type;                   /* 0 NULL, 1 integer, 2 text */
};

struct rowbuf {
    sqlite3_stmt *multi;
    int cols;
    unsigned n;
    struct rowval v[ROW_BATCH][ROW_COLUMNS_MAX];
};

/* One database connection and what is written through it. The main thread writes the
   events (main database); the kernel thread writes the decoded kernel tables into a database
   of its own, copied into the main one at the end. */
struct sink {
    const char *label;          /* the output's name, for messages */
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    char *scratch[4];           /* UTF-8 conversions bound with SQLITE_STATIC until the step */
    size_t scratch_cap[4];
    struct rowbuf *rows[S_COUNT]; /* the batched tables' rows waiting */
    int failed;                 /* an error was reported; the load stops */
};

/* What the kernel thread keeps per input. */
struct kinput {
    struct owner { int64_t ts; int64_t event; } *owners; /* per processor: the last event other
                                                            than a stack, which a stack follows */
    unsigned nowners;
    uint64_t undecoded;         /* kernel events whose payload did not decode */
};

struct loader;

struct kernel_side {
    struct loader *l;
    struct sink sink;
    char *path;                 /* its database file (temporary) */
    etl_merge *merge;
    struct kinput *kin;         /* per input */
    struct frame_sets frame_sets;
    int64_t next_event, next_stack, next_lbr;
    int rc;
    double cpu_s, map_s, rows_s; /* the thread's processor time at its end, after its first pass,
                                    after its rows (--verbose) */
};

/* One events row waiting to be inserted: columns 1..20 as integers (bit c of nulls: column
   c+1 is NULL), then a copy of the payload. */
#define EVENT_COLUMNS 21
#define EVENT_BATCH 64

struct event_row {
    int64_t v[EVENT_COLUMNS - 1];
    uint32_t nulls;
    uint32_t payload_len, payload_cap;
    uint8_t *payload;
};

struct loader {
    const struct options *o;
    const char *db_path;        /* the file SQLite writes (the temporary name for a new database) */
    struct sink sink;
    struct input *in;
    unsigned ninputs;
    const char **paths;         /* of the inputs loaded, in merge order */
    unsigned npaths;
    etl_merge *merge;
    const etl_clock *clock;
    struct provider_slot *providers;
    unsigned provider_cap, provider_count;
    int64_t next_provider, next_event;
    struct event_row batch[EVENT_BATCH];
    unsigned nbatch;
    sqlite3_stmt *event_batch;  /* the multi-row INSERT */
    struct kernel_side kernel;
    atomic_int stop;            /* either thread failed, or a signal came */
    int damaged;                /* an input had damage */
    int partial;                /* an input failed mid-way and --keep-partial keeps the rest */
    /* progress */
    int show_progress;
    struct timespec started, last_shown;
    uint64_t total_bytes;
};

/* Reports an SQLite error (once) and stops the load. */
static int create_indexes(struct sink *k);
static int build_image_maps(struct loader *l);
struct kinput;
struct kernel_side;
static int main_thread_class(int kclass);
static int insert_kernel(struct sink *k, struct kernel_side *ks, const struct input *in, struct kinput *ki,
                         const etl_event *ev, const etl_kernel_event *ke, int64_t event, int64_t time_ns);

static int db_error(struct sink *k, const char *what)
{
    if (!k->failed)
        fprintf(stderr, "etl2sqlite: %s: %s: %s\n", k->label, what, k->db ? sqlite3_errmsg(k->db) : "out of memory");
    k->failed = 1;
    return -1;
}

static int exec_sql(struct sink *k, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(k->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    if (!k->failed) fprintf(stderr, "etl2sqlite: %s: %s\n", k->label, msg ? msg : sqlite3_errmsg(k->db));
    sqlite3_free(msg);
    k->failed = 1;
    return -1;
}

/* Runs a prepared insert whose values are bound, and resets it. */
static int step(struct sink *k, enum stmt_id id)
{
    sqlite3_stmt *s = k->stmt[id];
    int rc = sqlite3_step(s);

    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return db_error(k, "insert");
    return 0;
}

/* The tables whose rows are batched, and their column counts. */
static const struct { enum stmt_id id; int cols; } batched[] = {
    { S_CSWITCH, 15 }, { S_READY, 8 }, { S_SAMPLE, 13 }, { S_STACK, 12 }, { S_FRAME, 5 }, { S_LBR_ENTRY, 8 },
    { S_DISK_IO, 15 }, { S_SYSCALL, 8 },
};

/* "INSERT INTO table VALUES (?,...),..." for ROW_BATCH rows, from the single-row statement. */
static char *multi_row_sql(const char *single, int cols)
{
    const char *values = strstr(single, " VALUES ");
    size_t head = (size_t)(values - single) + strlen(" VALUES "), cap = head + (size_t)ROW_BATCH * ((size_t)cols * 2 + 3) + 1;
    char *sql = malloc(cap);
    size_t n = head;

    if (!sql) return NULL;
    memcpy(sql, single, head);
    for (unsigned r = 0; r < ROW_BATCH; r++) {
        if (r) sql[n++] = ',';
        sql[n++] = '(';
        for (int c = 0; c < cols; c++) {
            if (c) sql[n++] = ',';
            sql[n++] = '?';
        }
        sql[n++] = ')';
    }
    sql[n] = '\0';
    return sql;
}

static int prepare_all(struct sink *k)
{
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v3(k->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &k->stmt[i], NULL) != SQLITE_OK)
            return db_error(k, "prepare");
    for (size_t i = 0; i < sizeof batched / sizeof batched[0]; i++) {
        struct rowbuf *rb = calloc(1, sizeof *rb);
        char *sql = multi_row_sql(stmt_sql[batched[i].id], batched[i].cols);
        int rc = rb && sql ? sqlite3_prepare_v3(k->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &rb->multi, NULL) : SQLITE_NOMEM;
        free(sql);
        if (rc != SQLITE_OK) {
            free(rb);
            return db_error(k, "prepare");
        }
        rb->cols = batched[i].cols;
        k->rows[batched[i].id] = rb;
    }
    return 0;
}

/* The next row of table id: set its columns (1-based) with rv_*, then call row_end. */
static struct rowval *row_begin(struct sink *k, enum stmt_id id)
{
    return k->rows[id]->v[k->rows[id]->n];
}

static void rv_i64(struct rowval *r, int col, int64_t v) { r[col - 1].type = 1; r[col - 1].i = v; }
static void rv_u64(struct rowval *r, int col, uint64_t v) { rv_i64(r, col, (int64_t)v); }
static void rv_null(struct rowval *r, int col) { r[col - 1].type = 0; }
static void rv_text(struct rowval *r, int col, const char *t) { r[col - 1].type = t ? 2 : 0; r[col - 1].t = t; }

static void bind_row(sqlite3_stmt *s, int base, const struct rowval *r, int cols)
{
    for (int c = 0; c < cols; c++) {
        if (r[c].type == 1) sqlite3_bind_int64(s, base + c + 1, r[c].i);
        else if (r[c].type == 2) sqlite3_bind_text(s, base + c + 1, r[c].t, -1, SQLITE_STATIC);
        else sqlite3_bind_null(s, base + c + 1);
    }
}

/* The row is complete; a full batch is inserted. */
static int row_end(struct sink *k, enum stmt_id id)
{
    struct rowbuf *rb = k->rows[id];
    int rc;

    if (++rb->n < ROW_BATCH) return 0;
    for (unsigned r = 0; r < ROW_BATCH; r++) bind_row(rb->multi, (int)r * rb->cols, rb->v[r], rb->cols);
    rc = sqlite3_step(rb->multi);
    sqlite3_reset(rb->multi);
    rb->n = 0;
    return rc == SQLITE_DONE ? 0 : db_error(k, "insert");
}

/* Inserts every row still waiting, one by one. */
static int rows_flush(struct sink *k)
{
    for (int id = 0; id < S_COUNT; id++) {
        struct rowbuf *rb = k->rows[id];
        for (unsigned r = 0; rb && r < rb->n; r++) {
            bind_row(k->stmt[id], 0, rb->v[r], rb->cols);
            if (step(k, (enum stmt_id)id) != 0) return -1;
        }
        if (rb) rb->n = 0;
    }
    return 0;
}

/* Finalizes the statements (before COMMIT, or at the end). */
static void sink_finalize(struct sink *k)
{
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(k->stmt[i]);
        k->stmt[i] = NULL;
        if (k->rows[i]) sqlite3_finalize(k->rows[i]->multi);
        free(k->rows[i]);
        k->rows[i] = NULL;
    }
}

static void sink_close(struct sink *k)
{
    sink_finalize(k);
    if (k->db) sqlite3_close(k->db);
    k->db = NULL;
    for (int i = 0; i < 4; i++) {
        free(k->scratch[i]);
        k->scratch[i] = NULL;
    }
}

static double elapsed_s(const struct timespec *from, const struct timespec *to)
{
    return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

/* Processor time of the calling thread so far. */
static double thread_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec / 1e9 : 0;
}

/* ------------------------------------------------------------------ binding helpers */

static void bind_i64(sqlite3_stmt *s, int i, int64_t v) { sqlite3_bind_int64(s, i, v); }
static void bind_u64(sqlite3_stmt *s, int i, uint64_t v) { sqlite3_bind_int64(s, i, (int64_t)v); }

/* An etl_string as UTF-8 text, NULL when the record does not carry it. */
static int bind_string(struct sink *k, sqlite3_stmt *s, int i, const etl_string *str, unsigned slot)
{
    size_t n;

    if (!str->data) return sqlite3_bind_null(s, i);
    n = etl_string_utf8(str, k->scratch[slot], k->scratch_cap[slot]);
    if (n >= k->scratch_cap[slot]) {
        size_t cap = n + 1 < 256 ? 256 : n + 1;
        char *p = realloc(k->scratch[slot], cap);
        if (!p) return SQLITE_NOMEM;
        k->scratch[slot] = p;
        k->scratch_cap[slot] = cap;
        n = etl_string_utf8(str, p, cap);
    }
    return sqlite3_bind_text(s, i, k->scratch[slot], (int)n, SQLITE_STATIC);
}

/* Sets image and image_offset at columns i, i+1 of a batched row for address addr of pid at
   raw time ts (the name is the image map's: it outlives the batch). */
static void rv_image(const struct input *in, struct rowval *r, int i, int64_t pid, uint64_t addr, int64_t ts)
{
    etl_image_info info;

    if (in->map && etl_image_map_find(in->map, pid < 0 ? 0 : (uint32_t)pid, addr, ts, &info) == 1) {
        rv_text(r, i, info.base_name);
        rv_u64(r, i + 1, addr - info.base);
    }
    else {
        rv_null(r, i);
        rv_null(r, i + 1);
    }
}

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
static int provider_room(struct loader *l)
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
static int64_t provider_id(struct loader *l, const etl_guid *g)
{
    uint32_t mask = l->provider_cap - 1, i = guid_hash(g) & mask;
    char text[ETL_GUID_STRING_SIZE];
    sqlite3_stmt *s = l->sink.stmt[S_PROVIDER];
    const char *name;
    int64_t id;

    for (; l->providers[i].id; i = (i + 1) & mask)
        if (etl_guid_equal(&l->providers[i].guid, g)) return l->providers[i].id;
    if (provider_room(l) != 0) return -1;
    id = l->next_provider++;
    provider_put(l->providers, l->provider_cap, g, id);
    l->provider_count++;
    name = etl_guid_name(g);
    bind_i64(s, 1, id);
    sqlite3_bind_text(s, 2, etl_guid_format(g, text), -1, SQLITE_TRANSIENT);
    if (name) sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 3);
    if (step(&l->sink, S_PROVIDER) != 0) return -1;
    return id;
}

/* Loads the providers an appended database already has. */
static int load_providers(struct loader *l)
{
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(l->sink.db, "SELECT provider, guid FROM providers", -1, &s, NULL) != SQLITE_OK)
        return db_error(&l->sink, "reading providers");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        etl_guid g;
        const char *text = (const char *)sqlite3_column_text(s, 1);
        if (!text || etl_guid_parse(text, &g) != ETL_OK) continue;
        if (provider_room(l) != 0) {
            sqlite3_finalize(s);
            return db_error(&l->sink, "out of memory");
        }
        provider_put(l->providers, l->provider_cap, &g, sqlite3_column_int64(s, 0));
        l->provider_count++;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : db_error(&l->sink, "reading providers");
}

/* ------------------------------------------------------------------ rows of the main database */

static int insert_lost(struct loader *l, int64_t trace, const char *kind, int64_t count, int64_t offset,
                       const char *message)
{
    sqlite3_stmt *s = l->sink.stmt[S_LOST];

    bind_i64(s, 1, trace);
    sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
    if (count >= 0) bind_i64(s, 3, count); else sqlite3_bind_null(s, 3);
    if (offset >= 0) bind_i64(s, 4, offset); else sqlite3_bind_null(s, 4);
    if (message) sqlite3_bind_text(s, 5, message, -1, SQLITE_TRANSIENT); else sqlite3_bind_null(s, 5);
    return step(&l->sink, S_LOST);
}

static int insert_ext(struct sink *k, const etl_event *ev, int64_t event)
{
    sqlite3_stmt *s = k->stmt[S_EXT];

    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        if (etl_event_ext_item(ev, i, &it) != ETL_OK) continue;
        bind_i64(s, 1, event);
        bind_i64(s, 2, i);
        bind_i64(s, 3, it.type);
        sqlite3_bind_text(s, 4, etl_ext_type_name(it.type), -1, SQLITE_STATIC);
        sqlite3_bind_blob(s, 5, it.size ? (const void *)it.data : "", (int)it.size, SQLITE_STATIC);
        if (step(k, S_EXT) != 0) return -1;
    }
    return 0;
}

/* Events rows are inserted EVENT_BATCH at a time, by one multi-row INSERT: SQLite's work per
   statement (start, halt, reset) is then shared by the rows. */
static char *event_batch_sql(void)
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
    for (int c = 0; c < EVENT_COLUMNS - 1; c++) {
        if (r->nulls & (1u << c)) sqlite3_bind_null(s, base + c + 1);
        else sqlite3_bind_int64(s, base + c + 1, r->v[c]);
    }
    if (no_payload) sqlite3_bind_null(s, base + EVENT_COLUMNS);
    else sqlite3_bind_blob(s, base + EVENT_COLUMNS, r->payload_len ? (const void *)r->payload : "",
                           (int)r->payload_len, SQLITE_STATIC);
}

/* Inserts the rows waiting: all of them in one statement when the batch is full, else one by one. */
static int flush_events(struct loader *l)
{
    sqlite3_stmt *s;
    int rc;

    if (l->nbatch == EVENT_BATCH) {
        s = l->event_batch;
        for (unsigned r = 0; r < EVENT_BATCH; r++)
            bind_event_row(s, (int)(r * EVENT_COLUMNS), &l->batch[r], l->o->no_payload);
        rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) return db_error(&l->sink, "insert");
    }
    else {
        for (unsigned r = 0; r < l->nbatch; r++) {
            bind_event_row(l->sink.stmt[S_EVENT], 0, &l->batch[r], l->o->no_payload);
            if (step(&l->sink, S_EVENT) != 0) return -1;
        }
    }
    l->nbatch = 0;
    return 0;
}

/* ------------------------------------------------------------------ disk_io and syscalls rows */

/* A DiskIo Init event waiting for its completion (irp 0: an empty slot; event 0: taken). */
struct disk_init {
    uint64_t irp;
    int64_t event, time_ns;
};

static uint64_t irp_hash(uint64_t irp)
{
    irp ^= irp >> 33;
    irp *= 0xFF51AFD7ED558CCDull;
    return irp ^ irp >> 33;
}

/* Keeps the Init of irp; a later Init of the same Irp (Windows reuses them) replaces it. */
static int init_put(struct input *in, uint64_t irp, int64_t event, int64_t time_ns)
{
    unsigned i;

    if (!irp) return 0;
    if ((in->init_used + 1) * 2 > in->init_cap) { /* grow, leaving taken slots behind */
        unsigned cap = in->init_cap ? in->init_cap * 2 : 1024;
        struct disk_init *old = in->inits, *n = calloc(cap, sizeof *n);
        unsigned old_cap = in->init_cap;
        if (!n) return -1;
        in->inits = n;
        in->init_cap = cap;
        in->init_used = 0;
        for (unsigned j = 0; j < old_cap; j++)
            if (old[j].irp && old[j].event && init_put(in, old[j].irp, old[j].event, old[j].time_ns) != 0) return -1;
        free(old);
    }
    for (i = (unsigned)irp_hash(irp) & (in->init_cap - 1); in->inits[i].irp && in->inits[i].irp != irp;
         i = (i + 1) & (in->init_cap - 1)) {}
    if (!in->inits[i].irp) in->init_used++;
    in->inits[i] = (struct disk_init){ irp, event, time_ns };
    return 0;
}

/* The Init of irp, taken: 1, or 0 when there is none. */
static int init_take(struct input *in, uint64_t irp, struct disk_init *out)
{
    if (!irp || !in->init_cap) return 0;
    for (unsigned i = (unsigned)irp_hash(irp) & (in->init_cap - 1); in->inits[i].irp; i = (i + 1) & (in->init_cap - 1))
        if (in->inits[i].irp == irp) {
            *out = in->inits[i];
            in->inits[i].event = 0;
            return out->event != 0;
        }
    return 0;
}

/*
 * What the main thread writes from the context of other events (in the merged order): a
 * CSwitch says which thread runs on its processor (the thread of the SysClEnter/SysClExit
 * that follow there: their PERFINFO header names none), a DiskIo Init is kept until its
 * completion's row, which carries it.
 */
static int io_row(struct loader *l, struct input *in, const etl_event *ev, const etl_kernel_event *ke, int64_t event,
                  int64_t time_ns)
{
    struct rowval *r;

    switch (ke->kclass) {
    case ETL_KCLASS_CSWITCH:
        if (ev->cpu >= in->nrunning) {
            unsigned n = ev->cpu + 64u;
            uint32_t *run = realloc(in->running, n * sizeof *run);
            if (!run) return db_error(&l->sink, "out of memory");
            memset(run + in->nrunning, 0, (n - in->nrunning) * sizeof *run);
            in->running = run;
            in->nrunning = n;
        }
        in->running[ev->cpu] = ke->u.cswitch.new_tid + 1;
        return 0;
    case ETL_KCLASS_DISK_IO_INIT:
        return init_put(in, ke->u.disk_io.irp, event, time_ns) != 0 ? db_error(&l->sink, "out of memory") : 0;
    case ETL_KCLASS_DISK_IO: {
        const etl_kdisk_io *d = &ke->u.disk_io;
        struct disk_init init;
        int matched = init_take(in, d->irp, &init);
        r = row_begin(&l->sink, S_DISK_IO);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name); rv_i64(r, 6, d->disk_number); rv_i64(r, 7, d->irp_flags);
        rv_i64(r, 8, d->transfer_size); rv_i64(r, 9, d->byte_offset); rv_u64(r, 10, d->file_object);
        rv_u64(r, 11, d->irp);
        if (in->perf_freq > 0)
            rv_i64(r, 12, (int64_t)((long double)d->high_res_response_time * 1e9L / (long double)in->perf_freq));
        else rv_null(r, 12);
        if (ev->version >= 3) rv_i64(r, 13, d->issuing_tid); else rv_null(r, 13);
        if (matched) { rv_i64(r, 14, init.event); rv_i64(r, 15, init.time_ns); }
        else { rv_null(r, 14); rv_null(r, 15); }
        return row_end(&l->sink, S_DISK_IO);
    }
    case ETL_KCLASS_SYSCALL_ENTER: case ETL_KCLASS_SYSCALL_EXIT:
        r = row_begin(&l->sink, S_SYSCALL);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_text(r, 5, ke->name);
        if (ke->kclass == ETL_KCLASS_SYSCALL_ENTER) { rv_u64(r, 6, ke->u.syscall.address); rv_null(r, 7); }
        else { rv_null(r, 6); rv_i64(r, 7, ke->u.syscall.nt_status); }
        if (ev->cpu < in->nrunning && in->running[ev->cpu]) rv_i64(r, 8, in->running[ev->cpu] - 1);
        else rv_null(r, 8);
        return row_end(&l->sink, S_SYSCALL);
    default:
        return 0;
    }
}

/* One event's events row (the main thread's part). */
static int insert_event(struct loader *l, struct input *in, const etl_merge_event *me)
{
    const etl_event *ev = me->event;
    struct event_row *r = &l->batch[l->nbatch];
    int64_t time_ns = etl_clock_time_ns(l->clock, me->timestamp);
    int has_id = (ev->has & ETL_HAS_ID) != 0, pt = (ev->has & ETL_HAS_PID_TID) != 0;
    uint32_t nulls = 1u << 0;

    r->v[0] = l->next_event++;  /* bound as NULL: SQLite numbers it so, max + 1, without a seek */
    r->v[1] = in->trace;
    r->v[2] = ev->timestamp;
    r->v[3] = time_ns;
    r->v[4] = ev->cpu;
    r->v[5] = ev->pid;
    r->v[6] = ev->tid;
    if (!pt) nulls |= 1u << 5 | 1u << 6;
    if (ev->has & ETL_HAS_PROVIDER) {
        int64_t p = provider_id(l, &ev->provider);
        if (p < 0) return db_error(&l->sink, "providers");
        r->v[7] = p;
    }
    else nulls |= 1u << 7;
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
    if (!l->o->no_payload && ev->payload_len) {
        if (ev->payload_len > r->payload_cap) {
            uint32_t cap = ev->payload_len < 256 ? 256 : ev->payload_len;
            uint8_t *p = realloc(r->payload, cap);
            if (!p) return db_error(&l->sink, "out of memory");
            r->payload = p;
            r->payload_cap = cap;
        }
        memcpy(r->payload, ev->payload, ev->payload_len);
        r->payload_len = ev->payload_len;
    }
    if (++l->nbatch == EVENT_BATCH && flush_events(l) != 0) return -1;
    if (ev->kind == ETL_KIND_SYSTEM || ev->kind == ETL_KIND_COMPACT || ev->kind == ETL_KIND_PERFINFO) {
        etl_kernel_event ke;
        if (etl_kernel_decode(ev, &ke) == 1 &&
            ((main_thread_class(ke.kclass) && insert_kernel(&l->sink, NULL, in, NULL, ev, &ke, r->v[0], time_ns) != 0) ||
             io_row(l, in, ev, &ke, r->v[0], time_ns) != 0))
            return -1;
    }

    if (!in->events++) in->first_ns = time_ns;
    in->last_ns = time_ns;
    if (ev->buffer_offset > in->progress_offset) in->progress_offset = ev->buffer_offset;
    return 0;
}

/* ------------------------------------------------------------------ rows of the kernel tables */

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
        if (frames_reserve(fs, count) != 0) return db_error(k, "out of memory");
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
        if (frame_set_id(fs, count, &frames_id, &fresh) != 0) return db_error(k, "out of memory");
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
    if (row_end(k, S_STACK) != 0) return -1;
    for (unsigned i = 0; fresh && i < count; i++) {
        r = row_begin(k, S_FRAME);
        rv_i64(r, 1, frames_id);
        rv_i64(r, 2, i);
        rv_u64(r, 3, fs->addr[i]);
        rv_text(r, 4, fs->image[i]);
        if (fs->image[i]) rv_u64(r, 5, fs->offset[i]); else rv_null(r, 5);
        if (row_end(k, S_FRAME) != 0) return -1;
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
        if (etl_event_ext_item(ev, i, &it) != ETL_OK) continue;
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

/* The owner slot of processor cpu of an input. */
static struct owner *owner_of(struct kinput *ki, unsigned cpu)
{
    if (cpu >= ki->nowners) {
        unsigned n = cpu + 1 < 64 ? 64 : 2 * (cpu + 1);
        struct owner *p = realloc(ki->owners, n * sizeof *p);
        if (!p) return NULL;
        for (unsigned i = ki->nowners; i < n; i++) p[i].ts = INT64_MIN, p[i].event = 0;
        ki->owners = p;
        ki->nowners = n;
    }
    return &ki->owners[cpu];
}


/* The row of a decoded kernel event in its class's table. */
/* Which thread writes which class: the main thread those that need no image map (processes,
   threads, images, context switches), straight into the database; the kernel thread those
   that do (samples, stacks, LBR), copied in at the end. Measured on a kernel trace, this
   shares the work about evenly and keeps the copy small. */
static int main_thread_class(int kclass)
{
    return kclass == ETL_KCLASS_PROCESS || kclass == ETL_KCLASS_THREAD || kclass == ETL_KCLASS_IMAGE ||
           kclass == ETL_KCLASS_CSWITCH || kclass == ETL_KCLASS_READY_THREAD;
}

static int insert_kernel(struct sink *k, struct kernel_side *ks, const struct input *in, struct kinput *ki,
                         const etl_event *ev, const etl_kernel_event *ke, int64_t event, int64_t time_ns)
{
    sqlite3_stmt *s;
    char sid[200];

    switch (ke->kclass) {
    case ETL_KCLASS_PROCESS: {
        const etl_kprocess *p = &ke->u.process;
        s = k->stmt[S_PROCESS];
        bind_i64(s, 1, event); bind_i64(s, 2, in->trace); bind_i64(s, 3, time_ns);
        sqlite3_bind_text(s, 4, ke->name, -1, SQLITE_STATIC);
        bind_i64(s, 5, p->pid); bind_i64(s, 6, p->parent_pid); bind_i64(s, 7, p->session_id);
        bind_i64(s, 8, p->exit_status); bind_u64(s, 9, p->unique_process_key);
        bind_u64(s, 10, p->directory_table_base); bind_i64(s, 11, p->flags);
        if (p->sid && etl_sid_format(p->sid, p->sid_size, sid, sizeof sid)[0])
            sqlite3_bind_text(s, 12, sid, -1, SQLITE_STATIC);
        else sqlite3_bind_null(s, 12);
        if (bind_string(k, s, 13, &p->image_file_name, 0) || bind_string(k, s, 14, &p->command_line, 1) ||
            bind_string(k, s, 15, &p->package_full_name, 2) || bind_string(k, s, 16, &p->application_id, 3))
            return db_error(k, "out of memory");
        return step(k, S_PROCESS);
    }
    case ETL_KCLASS_THREAD: {
        const etl_kthread *t = &ke->u.thread;
        s = k->stmt[S_THREAD];
        bind_i64(s, 1, event); bind_i64(s, 2, in->trace); bind_i64(s, 3, time_ns);
        sqlite3_bind_text(s, 4, ke->name, -1, SQLITE_STATIC);
        bind_i64(s, 5, t->pid); bind_i64(s, 6, t->tid);
        bind_u64(s, 7, t->stack_base); bind_u64(s, 8, t->stack_limit);
        bind_u64(s, 9, t->user_stack_base); bind_u64(s, 10, t->user_stack_limit);
        bind_u64(s, 11, t->start_address); bind_u64(s, 12, t->win32_start_address);
        bind_u64(s, 13, t->teb_base); bind_i64(s, 14, t->sub_process_tag);
        bind_i64(s, 15, t->base_priority); bind_i64(s, 16, t->page_priority);
        bind_i64(s, 17, t->io_priority); bind_i64(s, 18, t->thread_flags);
        if (bind_string(k, s, 19, &t->name, 0)) return db_error(k, "out of memory");
        return step(k, S_THREAD);
    }
    case ETL_KCLASS_IMAGE: {
        const etl_kimage *im = &ke->u.image;
        const char *base;
        s = k->stmt[S_IMAGE];
        bind_i64(s, 1, event); bind_i64(s, 2, in->trace); bind_i64(s, 3, time_ns);
        sqlite3_bind_text(s, 4, ke->name, -1, SQLITE_STATIC);
        bind_i64(s, 5, im->pid); bind_u64(s, 6, im->image_base); bind_u64(s, 7, im->image_size);
        bind_i64(s, 8, im->checksum); bind_i64(s, 9, im->time_date_stamp);
        bind_i64(s, 10, im->signature_level); bind_i64(s, 11, im->signature_type);
        bind_u64(s, 12, im->default_base);
        if (bind_string(k, s, 13, &im->file_name, 0)) return db_error(k, "out of memory");
        if (im->file_name.data) {
            const char *full = k->scratch[0];
            base = full;
            for (const char *c = full; *c; c++)
                if (*c == '\\' || *c == '/') base = c + 1;
            sqlite3_bind_text(s, 14, base, -1, SQLITE_STATIC);
        }
        else sqlite3_bind_null(s, 14);
        return step(k, S_IMAGE);
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
        return row_end(k, S_CSWITCH);
    }
    case ETL_KCLASS_READY_THREAD: {
        const etl_kready_thread *t = &ke->u.ready_thread;
        struct rowval *r = row_begin(k, S_READY);
        rv_i64(r, 1, event); rv_i64(r, 2, in->trace); rv_i64(r, 3, time_ns); rv_i64(r, 4, ev->cpu);
        rv_i64(r, 5, t->tid); rv_i64(r, 6, t->adjust_reason); rv_i64(r, 7, t->adjust_increment);
        rv_i64(r, 8, t->flags);
        return row_end(k, S_READY);
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
        rv_image(in, r, 11, pid, p->instruction_pointer, ev->timestamp);
        rv_i64(r, 13, p->profile_source);
        return row_end(k, S_SAMPLE);
    }
    case ETL_KCLASS_STACK: case ETL_KCLASS_STACK_KEY: case ETL_KCLASS_STACK_KEY_DEF: {
        const etl_kstack *st = &ke->u.stack;
        int def = ke->kclass == ETL_KCLASS_STACK_KEY_DEF;
        const char *kind = ke->kclass == ETL_KCLASS_STACK ? "stack"
                           : def ? "key_def"
                           : ev->hook_id == 0x1825 ? "key_kernel" : "key_user";
        int64_t owner = 0;
        if (!def) {
            struct owner *o = owner_of(ki, ev->cpu);
            if (!o) return db_error(k, "out of memory");
            if (o->event && o->ts == st->event_timestamp) owner = o->event;
        }
        return insert_stack(ks, in, event, time_ns, kind, owner, def ? INT64_MIN : st->event_timestamp,
                            def ? -1 : (int64_t)st->pid, def ? -1 : (int64_t)st->tid, ke->kclass != ETL_KCLASS_STACK,
                            st->stack_key, st->frames, st->frame_count, st->frame_size,
                            def ? ev->timestamp : st->event_timestamp);
    }
    case ETL_KCLASS_LBR: {
        const etl_lbr *b = &ke->u.lbr;
        int64_t id = ks->next_lbr++;
        s = k->stmt[S_LBR];
        bind_i64(s, 1, id); bind_i64(s, 2, event); bind_i64(s, 3, in->trace); bind_i64(s, 4, time_ns);
        bind_i64(s, 5, b->timestamp); bind_i64(s, 6, b->pid); bind_i64(s, 7, b->tid); bind_i64(s, 8, b->filters);
        bind_i64(s, 9, b->count);
        if (step(k, S_LBR) != 0) return -1;
        for (unsigned i = 0; i < b->count; i++) {
            etl_lbr_entry e = etl_lbr_entry_at(b, i);
            struct rowval *r = row_begin(k, S_LBR_ENTRY);
            rv_i64(r, 1, id); rv_i64(r, 2, i); rv_u64(r, 3, e.from); rv_u64(r, 4, e.to);
            rv_image(in, r, 5, b->pid, e.from, b->timestamp);
            rv_image(in, r, 7, b->pid, e.to, b->timestamp);
            if (row_end(k, S_LBR_ENTRY) != 0) return -1;
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

    if (krc == 1) {
        if (!main_thread_class(ke.kclass) && insert_kernel(&ks->sink, ks, in, ki, ev, &ke, event, time_ns) != 0)
            return -1;
    }
    else if (krc == ETL_FAILED)
        ki->undecoded++;
    if (ev->ext_count) {
        if (insert_ext(&ks->sink, ev, event) != 0) return -1;
        if (ev->kind == ETL_KIND_EVENT && insert_ext_stacks(ks, in, ev, event, time_ns) != 0) return -1;
    }
    /* A stack that follows on this processor with this event's timestamp belongs to it. */
    if (krc != 1 || (ke.kclass != ETL_KCLASS_STACK && ke.kclass != ETL_KCLASS_STACK_KEY &&
                     ke.kclass != ETL_KCLASS_STACK_KEY_DEF)) {
        struct owner *o = owner_of(ki, ev->cpu);
        if (!o) return db_error(&ks->sink, "out of memory");
        o->ts = ev->timestamp;
        o->event = event;
    }
    return 0;
}

static void quiet_message(void *arg, const etl_merge_message *msg)
{
    (void)arg, (void)msg;
}

/* The kernel thread: the same merge as the main thread's, event by event with the same event
   numbers, writing the decoded kernel tables into its own database. */
static void *kernel_thread(void *arg)
{
    struct kernel_side *ks = arg;
    struct loader *l = ks->l;
    etl_merge_options mo;
    etl_merge_event me;
    uint64_t n = 0;
    int rc;

    ks->rc = -1;
    memset(&mo, 0, sizeof mo);
    mo.on_message = quiet_message;
    if (build_image_maps(l) != 0) {
        if (!atomic_load(&l->stop)) fprintf(stderr, "etl2sqlite: out of memory\n");
        goto out;
    }
    ks->map_s = thread_cpu_s();
    if (exec_sql(&ks->sink, "BEGIN") != 0 || prepare_all(&ks->sink) != 0) goto out;
    if (etl_merge_open(&ks->merge, l->paths, l->npaths, &mo) == ETL_FATAL) {
        fprintf(stderr, "etl2sqlite: %s\n", ks->merge ? etl_merge_error(ks->merge) : "out of memory");
        goto out;
    }
    while ((rc = etl_merge_next(ks->merge, &me)) == ETL_OK || rc == ETL_WARN) {
        struct input *in = NULL;
        for (unsigned i = 0; i < l->ninputs && !in; i++)
            if (l->in[i].merge_index == (int)me.input) in = &l->in[i];
        if (!in || kernel_event(ks, in, &ks->kin[in - l->in], &me) != 0) goto out;
        if ((++n & 4095) == 0 && atomic_load(&l->stop)) goto out;
    }
    /* An input that fails mid-way: the main thread, reading the same, reports it. */
    if (rows_flush(&ks->sink) != 0) goto out;
    sink_finalize(&ks->sink);
    ks->rows_s = thread_cpu_s();
    if (create_indexes(&ks->sink) != 0 || exec_sql(&ks->sink, "COMMIT") != 0) goto out;
    ks->rc = 0;
out:
    if (ks->rc != 0) atomic_store(&l->stop, 1);
    sink_close(&ks->sink);
    ks->cpu_s = thread_cpu_s();
    return NULL;
}

/* ------------------------------------------------------------------ progress */

/* --verbose: what the phase that ends now took, since the previous one ended. */
static void phase_done(const struct options *o, const char *what, uint64_t rows)
{
    static struct timespec last;
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    if (o->verbose && last.tv_sec) {
        if (rows) fprintf(stderr, "etl2sqlite: %s: %.3f s, %llu events\n", what, elapsed_s(&last, &now),
                          (unsigned long long)rows);
        else fprintf(stderr, "etl2sqlite: %s: %.3f s\n", what, elapsed_s(&last, &now));
    }
    last = now;
}

static void show_progress(struct loader *l, uint64_t events, int final)
{
    struct timespec now;
    uint64_t done = 0;
    double t, frac, rate, left;
    char bar[31];
    int filled;

    if (!l->show_progress) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!final && elapsed_s(&l->last_shown, &now) < 0.2) return;
    l->last_shown = now;
    for (unsigned i = 0; i < l->ninputs; i++) done += l->in[i].progress_offset;
    if (final) done = l->total_bytes;
    frac = l->total_bytes ? (double)done / (double)l->total_bytes : 1.0;
    if (frac > 1.0) frac = 1.0;
    t = elapsed_s(&l->started, &now);
    rate = t > 0 ? (double)events / t : 0;
    left = frac > 0.001 ? t * (1 - frac) / frac : 0;
    filled = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : ' ';
    bar[30] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  %.2f M events/s  %s%.0f s left ", bar, (int)(frac * 100), rate / 1e6,
            final ? "" : "~", final ? 0.0 : left);
    if (final) fputs("\r\033[K", stderr);
    fflush(stderr);
}


/* ------------------------------------------------------------------ the load */

static void on_merge_message(void *arg, const etl_merge_message *msg)
{
    struct loader *l = arg;
    struct input *in = NULL;

    for (unsigned i = 0; msg->input >= 0 && i < l->ninputs; i++)
        if (l->in[i].merge_index == msg->input) in = &l->in[i];
    if (msg->damage) {
        l->damaged = 1;
        if (in) {
            in->warnings++;
            if (l->sink.stmt[S_LOST]) insert_lost(l, in->trace, "damage", -1, msg->offset, msg->text);
        }
    }
    if (l->o->quiet) return;
    if (l->show_progress) fputs("\r\033[K", stderr);
    if (!msg->path) fprintf(stderr, "etl2sqlite: %s\n", msg->text);
    else if (!msg->damage) fprintf(stderr, "etl2sqlite: %s: warning: %s\n", msg->path, msg->text);
    else if (msg->offset >= 0)
        fprintf(stderr, "etl2sqlite: %s: offset %lld: %s\n", msg->path, (long long)msg->offset, msg->text);
    else fprintf(stderr, "etl2sqlite: %s: %s\n", msg->path, msg->text);
}

/* The pragmas of a bulk load (a small page cache: a large one only costs page faults). */
static int set_load_pragmas(struct sink *k, int fresh)
{
    if (fresh && exec_sql(k, "PRAGMA page_size = 65536") != 0) return -1;
    return exec_sql(k, fresh ? "PRAGMA journal_mode = OFF" : "PRAGMA journal_mode = MEMORY") ||
           exec_sql(k, "PRAGMA synchronous = OFF; PRAGMA main.locking_mode = EXCLUSIVE; "
                       "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384")
               ? -1 : 0;
}

/* Those a database is left with: SQLite's defaults. */
static int restore_pragmas(struct sink *k)
{
    return exec_sql(k, "PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; PRAGMA temp_store = DEFAULT; "
                       "PRAGMA cache_size = -2000; PRAGMA locking_mode = NORMAL");
}

static int create_schema(struct sink *k)
{
    char sql[256];

    if (exec_sql(k, sqlschema_tables) != 0) return -1;
    for (int i = ETL_KIND_SYSTEM; i <= ETL_KIND_MESSAGE; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO kinds VALUES (%d, '%s')", i, etl_event_kind_name(i));
        if (exec_sql(k, sql) != 0) return -1;
    }
    snprintf(sql, sizeof sql,
             "INSERT INTO meta VALUES ('schema_version', '%d'), ('created_by', 'etl2sqlite %s'), "
             "('libetl_version', '%s'); PRAGMA user_version = %d",
             SQLSCHEMA_VERSION, etl_version(), etl_version(), SQLSCHEMA_VERSION);
    return exec_sql(k, sql);
}

/* Runs each "CREATE INDEX IF NOT EXISTS name ..." of the schema. */
static int create_indexes(struct sink *k)
{
    const char *p = sqlschema_indexes;
    char sql[512];

    while ((p = strstr(p, "CREATE INDEX ")) != NULL) {
        const char *end = strchr(p, ';');
        size_t n = (size_t)(end - p);
        if (n >= sizeof sql) return -1;
        memcpy(sql, p, n);
        sql[n] = '\0';
        if (exec_sql(k, sql) != 0) return -1;
        p = end;
    }
    return 0;
}

/* An appended database must be one etl2sqlite wrote, in this schema. */
static int check_schema(struct sink *k)
{
    sqlite3_stmt *s;
    int ok = 0;

    if (sqlite3_prepare_v2(k->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == SQLSCHEMA_VERSION) ok = 1;
        sqlite3_finalize(s);
    }
    if (!ok) {
        fprintf(stderr, "etl2sqlite: %s: not a database etl2sqlite wrote (schema version %d); nothing was added\n",
                k->label, SQLSCHEMA_VERSION);
        k->failed = 1;
        return -1;
    }
    return 0;
}

static int64_t max_of(struct sink *k, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = 0;

    if (sqlite3_prepare_v2(k->db, sql, -1, &s, NULL) != SQLITE_OK) return db_error(k, "reading");
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static int insert_trace(struct loader *l, struct input *in, const etl_trace_info *ti)
{
    sqlite3_stmt *s;
    char mode[512], v[32];
    int rc, i = 1;

    if (sqlite3_prepare_v2(l->sink.db,
                           "INSERT INTO traces VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                           "?,?,?,?,?)",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(&l->sink, "traces");
    in->perf_freq = ti->clock.perf_freq;
    bind_i64(s, i++, in->trace);
    sqlite3_bind_text(s, i++, in->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, i++, ti->logger_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, i++, ti->log_file_name, -1, SQLITE_STATIC);
    bind_i64(s, i++, ti->log_file_mode);
    sqlite3_bind_text(s, i++, etl_log_file_mode_format(ti->log_file_mode, mode, sizeof mode), -1, SQLITE_STATIC);
    sqlite3_bind_text(s, i++, etl_clock_type_name(ti->clock.type), -1, SQLITE_STATIC);
    bind_i64(s, i++, ti->clock.type);
    bind_i64(s, i++, ti->clock.perf_freq);
    bind_i64(s, i++, ti->clock.cpu_speed_mhz);
    bind_i64(s, i++, ti->clock.start_timestamp);
    bind_i64(s, i++, etl_filetime_to_ns(ti->clock.start_time));
    if (ti->end_time) bind_i64(s, i++, etl_filetime_to_ns(ti->end_time)); else sqlite3_bind_null(s, i++);
    if (ti->boot_time) bind_i64(s, i++, etl_filetime_to_ns(ti->boot_time)); else sqlite3_bind_null(s, i++);
    bind_i64(s, i++, ti->timezone_bias);
    snprintf(v, sizeof v, "%u.%u.%u", ti->os_major, ti->os_minor, (unsigned)ti->os_build);
    sqlite3_bind_text(s, i++, v, -1, SQLITE_TRANSIENT);
    snprintf(v, sizeof v, "%u.%u", ti->layout_major, ti->layout_minor);
    sqlite3_bind_text(s, i++, v, -1, SQLITE_TRANSIENT);
    bind_i64(s, i++, ti->pointer_size);
    bind_i64(s, i++, ti->number_of_processors);
    bind_i64(s, i++, ti->buffer_size);
    bind_i64(s, i++, ti->maximum_file_size);
    bind_i64(s, i++, ti->timer_resolution);
    bind_i64(s, i++, ti->start_buffers);
    bind_i64(s, i++, ti->buffers_written);
    bind_i64(s, i++, ti->events_lost);
    bind_i64(s, i++, ti->buffers_lost);
    bind_i64(s, i++, ti->buffers);
    bind_i64(s, i++, ti->compressed_buffers);
    bind_i64(s, i++, ti->damaged_buffers);
    bind_u64(s, i++, ti->file_size);
    while (i <= 35) sqlite3_bind_null(s, i++); /* clock_source .. warnings: after the load */
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return db_error(&l->sink, "traces");
    if (ti->events_lost && insert_lost(l, in->trace, "events_lost", ti->events_lost, -1,
                                       "EventsLost of the logfile header") != 0)
        return -1;
    if (ti->buffers_lost && insert_lost(l, in->trace, "buffers_lost", ti->buffers_lost, -1,
                                        "BuffersLost of the logfile header") != 0)
        return -1;
    return 0;
}

static int finish_trace(struct loader *l, struct input *in, uint64_t undecoded)
{
    sqlite3_stmt *s;
    etl_merge_input_info mi;
    int rc;

    if (undecoded) {
        char msg[128];
        snprintf(msg, sizeof msg, "%llu kernel events whose payload did not decode (their events rows are loaded)",
                 (unsigned long long)undecoded);
        if (insert_lost(l, in->trace, "undecoded", (int64_t)undecoded, -1, msg) != 0) return -1;
    }
    if (sqlite3_prepare_v2(l->sink.db,
                           "UPDATE traces SET clock_source = ?2, events = ?3, first_time_ns = ?4, last_time_ns = ?5, "
                           "warnings = ?6 WHERE trace = ?1",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(&l->sink, "traces");
    bind_i64(s, 1, in->trace);
    if (etl_merge_input(l->merge, (unsigned)in->merge_index, &mi) == ETL_OK)
        bind_i64(s, 2, l->in[0].trace + (int64_t)mi.clock_source);
    bind_u64(s, 3, in->events);
    if (in->events) {
        bind_i64(s, 4, in->first_ns);
        bind_i64(s, 5, in->last_ns);
    }
    bind_i64(s, 6, in->warnings);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : db_error(&l->sink, "traces");
}

static void ignore_damage(void *arg, int64_t offset, const char *message)
{
    (void)arg, (void)offset, (void)message;
}

/* Opens each input, telling which cannot be read; the readers stay open for the first pass. */
static int probe_inputs(struct loader *l, unsigned *readable)
{
    int status = 0;

    *readable = 0;
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        etl_open_options oo;

        memset(&oo, 0, sizeof oo);
        oo.order = ETL_ORDER_FILE;
        oo.on_damage = ignore_damage;
        if (etl_reader_open_path(&in->probe, in->path, &oo) == ETL_FATAL) {
            fprintf(stderr, "etl2sqlite: %s\n", in->probe ? etl_reader_error(in->probe) : "out of memory");
            etl_reader_close(in->probe);
            in->probe = NULL;
            in->merge_index = -1;
            status = EXIT_ERROR;
            continue;
        }
        in->file_size = etl_reader_info(in->probe)->file_size;
        l->total_bytes += in->file_size;
        in->merge_index = (int)(*readable)++;
    }
    return status;
}

/*
 * The first pass, in the kernel thread while the main thread loads the events: each input's
 * image map, from all its Image, Process and Thread events, so that addresses resolve even
 * against rundowns at the end of the trace. Damage is reported by the main thread's reading.
 */
static int build_image_maps(struct loader *l)
{
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        etl_event ev;
        uint64_t n = 0;
        int rc;

        if (!in->probe) continue;
        in->map = etl_image_map_new();
        if (!in->map) return -1;
        while ((rc = etl_reader_next(in->probe, &ev)) == ETL_OK || rc == ETL_WARN) {
            if (etl_image_map_add(in->map, &ev) != ETL_OK) return -1;
            if ((++n & 65535) == 0 && atomic_load(&l->stop)) return -1;
        }
        etl_reader_close(in->probe);
        in->probe = NULL;
    }
    return 0;
}

/* The kernel thread's database: a file beside the output with the same tables, attached to
   the main connection (before its transaction) so that its rows can be copied at the end. */
static int open_kernel_side(struct loader *l, int fresh)
{
    struct kernel_side *ks = &l->kernel;
    char *sql;
    int fd, rc;

    ks->l = l;
    ks->sink.label = l->o->output;
    ks->kin = calloc(l->ninputs, sizeof *ks->kin);
    ks->path = malloc(strlen(l->o->output) + 16);
    if (!ks->kin || !ks->path) return db_error(&l->sink, "out of memory");
    sprintf(ks->path, "%s.tmp-XXXXXX", l->o->output);
    fd = mkstemp(ks->path);
    if (fd < 0) {
        fprintf(stderr, "etl2sqlite: %s: cannot create a file beside it: %s\n", l->o->output, strerror(errno));
        free(ks->path);
        ks->path = NULL;
        l->sink.failed = 1;
        return -1;
    }
    close(fd);
    if (sqlite3_open_v2(ks->path, &ks->sink.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        exec_sql(&ks->sink, "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                            "PRAGMA cache_size = -16384") != 0 ||
        exec_sql(&ks->sink, sqlschema_tables) != 0) {
        db_error(&ks->sink, "kernel tables");
        l->sink.failed = 1;
        return -1;
    }
    if (!fresh) {
        ks->frame_sets.next_id = max_of(&l->sink, "SELECT max(frames) FROM stack_frames");
        ks->next_stack = max_of(&l->sink, "SELECT max(stack) FROM stacks") + 1;
        ks->next_lbr = max_of(&l->sink, "SELECT max(lbr) FROM lbr") + 1;
    }
    else ks->next_stack = ks->next_lbr = 1;
    sql = sqlite3_mprintf("ATTACH %Q AS kernel", ks->path);
    rc = sql ? exec_sql(&l->sink, sql) : db_error(&l->sink, "out of memory");
    sqlite3_free(sql);
    /* Attached: from now on only the kernel thread uses the file, until it closes it. */
    return rc == 0 ? exec_sql(&ks->sink, "PRAGMA locking_mode = EXCLUSIVE") : rc;
}

/* The tables the kernel thread fills, copied into the main database at the end. */
static const char *const kernel_tables[] = { "event_ext", "samples", "stacks", "stack_frames", "lbr", "lbr_entries" };

static int copy_kernel_tables(struct loader *l)
{
    char sql[256];

    for (size_t i = 0; i < sizeof kernel_tables / sizeof kernel_tables[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO main.%s SELECT * FROM kernel.%s", kernel_tables[i], kernel_tables[i]);
        if (exec_sql(&l->sink, sql) != 0) return -1;
    }
    return 0;
}

/* Loads every readable input; returns 0, or -1 when the load must be undone. */
static int load(struct loader *l, int fresh)
{
    struct kernel_side *ks = &l->kernel;
    etl_merge_options mo;
    etl_merge_event me;
    pthread_t kernel_tid;
    uint64_t events = 0;
    int rc;

    if (fresh ? create_schema(&l->sink) != 0 : check_schema(&l->sink) != 0) return -1;
    if (open_kernel_side(l, fresh) != 0) return -1;
    if (exec_sql(&l->sink, "BEGIN") != 0 || prepare_all(&l->sink) != 0) return -1;
    {
        char *sql = event_batch_sql();
        if (!sql || sqlite3_prepare_v3(l->sink.db, sql, -1, SQLITE_PREPARE_PERSISTENT, &l->event_batch, NULL) != SQLITE_OK) {
            free(sql);
            return db_error(&l->sink, "prepare");
        }
        free(sql);
    }
    l->next_event = fresh ? 1 : max_of(&l->sink, "SELECT max(event) FROM events") + 1;
    l->next_provider = fresh ? 1 : max_of(&l->sink, "SELECT max(provider) FROM providers") + 1;
    l->in[0].trace = fresh ? 1 : max_of(&l->sink, "SELECT max(trace) FROM traces") + 1;
    if (!fresh && load_providers(l) != 0) return -1;
    if (l->sink.failed) return -1;

    l->paths = calloc(l->ninputs, sizeof *l->paths);
    if (!l->paths) return db_error(&l->sink, "out of memory");
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        if (in->merge_index < 0) continue;
        in->trace = l->in[0].trace + in->merge_index;
        l->paths[l->npaths++] = in->path;
        if (insert_trace(l, in, etl_reader_info(in->probe)) != 0) return -1;
    }

    memset(&mo, 0, sizeof mo);
    mo.on_message = on_merge_message;
    mo.on_message_arg = l;
    rc = etl_merge_open(&l->merge, l->paths, l->npaths, &mo);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etl2sqlite: %s\n", l->merge ? etl_merge_error(l->merge) : "out of memory");
        return -1;
    }
    l->clock = etl_merge_clock(l->merge);
    ks->next_event = l->next_event;
    if (pthread_create(&kernel_tid, NULL, kernel_thread, ks) != 0) {
        fprintf(stderr, "etl2sqlite: cannot start a thread\n");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &l->started);
    l->last_shown = l->started;
    while ((rc = etl_merge_next(l->merge, &me)) == ETL_OK || rc == ETL_WARN) {
        struct input *in = NULL;
        for (unsigned i = 0; i < l->ninputs && !in; i++)
            if (l->in[i].merge_index == (int)me.input) in = &l->in[i];
        if (!in || insert_event(l, in, &me) != 0) break;
        if ((++events & 8191) == 0) {
            if (tool_interrupted) atomic_store(&l->stop, 1);
            if (atomic_load(&l->stop)) break;
            show_progress(l, events, 0);
        }
    }
    if (rc == ETL_FATAL) {
        if (l->show_progress) fputs("\r\033[K", stderr);
        fprintf(stderr, "etl2sqlite: %s\n", etl_merge_error(l->merge));
        if (l->o->keep_partial) l->partial = 1;
        else atomic_store(&l->stop, 1);
    }
    else if (rc == ETL_OK || rc == ETL_WARN)
        atomic_store(&l->stop, 1); /* the loop broke off: an error, or a signal */
    if (!atomic_load(&l->stop) && (flush_events(l) != 0 || rows_flush(&l->sink) != 0)) atomic_store(&l->stop, 1);
    pthread_join(kernel_tid, NULL);
    if (tool_interrupted) {
        fprintf(stderr, "%setl2sqlite: interrupted; nothing was written\n", l->show_progress ? "\r\033[K" : "");
        return -1;
    }
    if (atomic_load(&l->stop) || ks->rc != 0 || l->sink.failed) return -1;
    show_progress(l, events, 1);
    phase_done(l->o, "events and kernel tables, two threads", events);
    /* SQLite numbered the events (max + 1 each): they must be the numbers the kernel tables use. */
    if (max_of(&l->sink, "SELECT max(event) FROM main.events") != l->next_event - 1) {
        fprintf(stderr, "etl2sqlite: %s: the events were not numbered as expected\n", l->o->output);
        return -1;
    }
    if (l->o->verbose)
        fprintf(stderr, "etl2sqlite: processor time: main thread %.3f s; kernel thread %.3f s: first pass (image "
                "maps) %.3f s, rows %.3f s, indexes %.3f s\n", thread_cpu_s(), ks->cpu_s, ks->map_s,
                ks->rows_s - ks->map_s, ks->cpu_s - ks->rows_s);
    for (unsigned i = 0; i < l->ninputs; i++)
        if (l->in[i].merge_index >= 0 && finish_trace(l, &l->in[i], ks->kin[i].undecoded) != 0) return -1;
    /* Indexes first: into empty tables SQLite copies a table's rows and its index entries as
       they are (the kernel thread built its indexes); into an appended one it inserts. */
    if (create_indexes(&l->sink) != 0 || copy_kernel_tables(l) != 0) return -1;
    sink_finalize(&l->sink);
    sqlite3_finalize(l->event_batch);
    l->event_batch = NULL;
    if (exec_sql(&l->sink, "COMMIT") != 0 || exec_sql(&l->sink, "DETACH kernel") != 0) return -1;
    phase_done(l->o, "kernel tables copied", 0);
    if (fresh && exec_sql(&l->sink, sqlschema_views) != 0) return -1;
    if (exec_sql(&l->sink, "PRAGMA optimize") != 0) return -1;
    phase_done(l->o, "views", 0);
    return restore_pragmas(&l->sink);
}

static char *default_output(const char *input)
{
    size_t n = strlen(input);
    char *out = malloc(n + 4);

    if (!out) return NULL;
    memcpy(out, input, n + 1);
    if (n > 7 && strcmp(input + n - 7, ".etl.gz") == 0) out[n - 7] = '\0';
    else if (n > 4 && strcmp(input + n - 4, ".etl") == 0) out[n - 4] = '\0';
    strcat(out, ".db");
    return out;
}


static void loader_free(struct loader *l)
{
    struct kernel_side *ks = &l->kernel;

    sink_close(&l->sink);
    sink_close(&ks->sink);
    if (ks->path) unlink(ks->path);
    free(ks->path);
    for (unsigned i = 0; i < l->ninputs; i++) {
        etl_reader_close(l->in[i].probe);
        etl_image_map_free(l->in[i].map);
        free(l->in[i].running);
        free(l->in[i].inits);
        if (ks->kin) free(ks->kin[i].owners);
    }
    free(ks->kin);
    etl_merge_close(ks->merge);
    etl_merge_close(l->merge);
    free(l->paths);
    for (unsigned i = 0; i < EVENT_BATCH; i++) free(l->batch[i].payload);
    free(l->in);
    free(l->providers);
    free(ks->frame_sets.slot);
    free(ks->frame_sets.addr);
    free(ks->frame_sets.offset);
    free(ks->frame_sets.image);
}

static int run(const struct options *o, char **inputs, unsigned ninputs)
{
    struct loader l;
    struct stat st;
    char *tmp = NULL;
    int exists, fresh, status, rc = 0;
    unsigned readable = 0;

    memset(&l, 0, sizeof l);
    l.o = o;
    l.sink.label = o->output;
    atomic_init(&l.stop, 0);
    exists = stat(o->output, &st) == 0;
    if (exists && !o->append && !o->force) {
        fprintf(stderr, "etl2sqlite: %s exists (--append adds to it, --force replaces it); nothing was written\n",
                o->output);
        return EXIT_ERROR;
    }
    if (o->append && !exists) {
        fprintf(stderr, "etl2sqlite: %s: --append: no such database\n", o->output);
        return EXIT_ERROR;
    }
    fresh = !o->append;
    l.ninputs = ninputs;
    l.in = calloc(ninputs, sizeof *l.in);
    l.provider_cap = 1024;
    l.providers = calloc(l.provider_cap, sizeof *l.providers);
    if (!l.in || !l.providers) {
        fprintf(stderr, "etl2sqlite: out of memory\n");
        loader_free(&l);
        return EXIT_ERROR;
    }
    for (unsigned i = 0; i < ninputs; i++) l.in[i].path = inputs[i];
    l.show_progress = o->quiet ? 0 : o->progress >= 0 ? o->progress : isatty(2);
    tool_catch_signals();

    phase_done(o, "start", 0);
    status = probe_inputs(&l, &readable);
    phase_done(o, "inputs opened", 0);
    if (status < 0 || (status == EXIT_ERROR && !o->keep_partial) || readable == 0) {
        if (tool_interrupted) fprintf(stderr, "etl2sqlite: interrupted; nothing was written\n");
        else if (status >= 0) fprintf(stderr, "etl2sqlite: nothing was written\n");
        loader_free(&l);
        return EXIT_ERROR;
    }

    if (fresh) {
        int fd;
        tmp = malloc(strlen(o->output) + 16);
        if (!tmp) {
            loader_free(&l);
            return EXIT_ERROR;
        }
        sprintf(tmp, "%s.tmp-XXXXXX", o->output);
        fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "etl2sqlite: %s: cannot create a file beside it: %s\n", o->output, strerror(errno));
            free(tmp);
            loader_free(&l);
            return EXIT_ERROR;
        }
        close(fd);
        l.db_path = tmp;
    }
    else l.db_path = o->output;

    if (sqlite3_open_v2(l.db_path, &l.sink.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (fresh ? SQLITE_OPEN_CREATE : 0),
                        NULL) != SQLITE_OK) {
        db_error(&l.sink, "cannot open");
        rc = -1;
    }
    else if (set_load_pragmas(&l.sink, fresh) != 0)
        rc = -1;
    else
        rc = load(&l, fresh);

    sqlite3_finalize(l.event_batch);
    l.event_batch = NULL;
    sink_finalize(&l.sink);
    if (rc != 0 && !fresh && l.sink.db) sqlite3_exec(l.sink.db, "ROLLBACK", NULL, NULL, NULL);
    if (l.sink.db && sqlite3_close(l.sink.db) != SQLITE_OK && rc == 0) {
        fprintf(stderr, "etl2sqlite: %s: cannot close the database\n", o->output);
        rc = -1;
    }
    l.sink.db = NULL;
    if (fresh) {
        if (rc == 0 && rename(tmp, o->output) != 0) {
            fprintf(stderr, "etl2sqlite: %s: %s\n", o->output, strerror(errno));
            rc = -1;
        }
        if (rc != 0) unlink(tmp);
        free(tmp);
    }
    if (rc == 0 && l.partial) status = EXIT_ERROR;
    else if (rc == 0 && status != EXIT_ERROR && l.damaged) status = EXIT_DAMAGED;
    loader_free(&l);
    return rc != 0 ? EXIT_ERROR : status;
}

int main(int argc, char **argv)
{
    enum { OPT_NO_PAYLOAD = 256, OPT_KEEP_PARTIAL, OPT_SCHEMA, OPT_PROGRESS, OPT_NO_PROGRESS };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "append", no_argument, NULL, 'a' },
        { "force", no_argument, NULL, 'f' },
        { "no-payload", no_argument, NULL, OPT_NO_PAYLOAD },
        { "keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL },
        { "schema", no_argument, NULL, OPT_SCHEMA },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct options o;
    char *output = NULL;
    int c, status;

    /* One connection, used by one thread at a time: no allocation statistics, no mutexes. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    memset(&o, 0, sizeof o);
    o.progress = -1;
    while ((c = getopt_long(argc, argv, "o:afqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case 'a': o.append = 1; break;
        case 'f': o.force = 1; break;
        case 'q': o.quiet = 1; break;
        case 'v': o.verbose = 1; break;
        case OPT_NO_PAYLOAD: o.no_payload = 1; break;
        case OPT_KEEP_PARTIAL: o.keep_partial = 1; break;
        case OPT_PROGRESS: o.progress = 1; break;
        case OPT_NO_PROGRESS: o.progress = 0; break;
        case OPT_SCHEMA:
            fputs(sqlschema_tables, stdout);
            fputc('\n', stdout);
            fputs(sqlschema_indexes, stdout);
            fputc('\n', stdout);
            fputs(sqlschema_views, stdout);
            return 0;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V':
            printf("etl2sqlite %s (%s sqlite/%s)\n", etl_version(), etl_version_details(), sqlite3_libversion());
            return 0;
        default: fputs("Try 'etl2sqlite --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (o.append && o.force) {
        fputs("etl2sqlite: --append and --force exclude each other\nTry 'etl2sqlite --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (optind >= argc) {
        fputs("etl2sqlite: no input file\nTry 'etl2sqlite --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (!o.output) {
        output = default_output(argv[optind]);
        if (!output) return EXIT_ERROR;
        o.output = output;
    }
    status = run(&o, argv + optind, (unsigned)(argc - optind));
    free(output);
    return status;
}
