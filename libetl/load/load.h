/* SPDX-License-Identifier: MIT */
/* What the SQLite loader's files share (load/). Private to libetl. */
#ifndef LIBETL_LOAD_H
#define LIBETL_LOAD_H
#ifndef ETL_BUILDING_LIBRARY
#error "load/load.h is private to libetl: include <etl.h>"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <sqlite3.h>

#include "etl.h"

/* ---- the schema (schema.c): three parts, run at different points of a load */
extern const char etl_sqlite_schema_tables[];  /* CREATE TABLE statements, run before the load */
extern const char etl_sqlite_schema_indexes[]; /* CREATE INDEX statements, run after the rows are in */
extern const char etl_sqlite_schema_views[];   /* CREATE VIEW statements */

/* ---- the prepared inserts of a connection */
enum stmt_id {
    S_EVENT, S_EXT, S_PROVIDER, S_PROCESS, S_THREAD, S_IMAGE, S_CSWITCH, S_READY, S_SAMPLE, S_STACK,
    S_FRAME, S_LBR, S_LBR_ENTRY, S_LOST, S_DISK_IO, S_SYSCALL, S_ISR_DPC, S_PAGE_FAULT, S_TCPIP, S_FILE_IO, S_VIRTUAL_ALLOC, S_MAP_FILE, S_PROCESS_COUNTERS,
    S_HARD_FAULT, S_NAME, S_NAME_FIELD, S_FUNCTION, S_COUNT
};

/* Rows of one table inserted ROW_BATCH at a time by one multi-row INSERT (the tables with about
   a row per event): values are integers, NULLs, or text that outlives the batch (string
   constants, and the image names the image maps own). */
#define ROW_BATCH 64
#define ROW_COLUMNS_MAX 20

struct rowval {
    int64_t i;                  /* the integer; a blob's or counted text's length */
    const char *t;
    int type;                   /* 0 NULL, 1 integer, 2 text, 3 blob (i bytes), 4 text of i bytes */
};

/* The columns of each table's rows (its insert's values). */
extern const int etl_sink_columns[S_COUNT];

struct rowbuf {
    sqlite3_stmt *multi;        /* the multi-row INSERT of a batched table; NULL: each row inserted at its end */
    int cols;
    unsigned n;
    struct rowval v[ROW_BATCH][ROW_COLUMNS_MAX];
};

struct event_row;

/*
 * Where a sink's rows go when they do not go to SQLite (clickhouse.c): row() takes each row of
 * table id as it ends (its values valid for the call only), events() the events rows of a
 * batch. Each table's rows come from one thread (the main thread's sink or the kernel
 * thread's), so a back end needs no lock per table. They return 0, or -1 when the load must
 * stop (the back end keeps its own message).
 */
struct row_backend {
    void *arg;
    int (*row)(void *arg, enum stmt_id id, const struct rowval *r, int cols);
    int (*events)(void *arg, const struct event_row *rows, unsigned n, int no_payload);
    /* an input's traces row (35 values), once its rows are all made */
    int (*trace)(void *arg, const struct rowval *r, int cols);
};

/* One database connection, or one row back end, and what is written through it. The main
   thread writes the events (main database); the kernel thread writes the decoded kernel
   tables into a database of its own, copied into the main one at the end. */
struct sink {
    struct etl_sqlite_loader *l; /* whose messages these are */
    const char *label;          /* the output's name, for messages */
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    char *scratch[4];           /* UTF-8 conversions bound with SQLITE_STATIC until the step */
    size_t scratch_cap[4];
    struct rowbuf *rows[S_COUNT]; /* the batched tables' rows waiting */
    int failed;                 /* an error was reported; the load stops */
    const struct row_backend *backend; /* NULL: SQLite (db) */
};

/* What the loader keeps per input. */
struct input {
    char *path;
    int64_t trace;              /* traces.trace */
    int merge_index;            /* index among the merge's inputs */
    etl_reader *probe;          /* the first pass's reader (closed after it) */
    etl_image_map *map;
    etl_symbolizer *sym;        /* the functions at its addresses; NULL with no_symbols */
    uint64_t events;
    int64_t first_ns, last_ns;
    unsigned warnings;
    uint64_t progress_offset;   /* highest buffer offset delivered so far */
    uint64_t file_size;
    /* for the disk_io and syscalls rows (io_row) */
    int64_t perf_freq;          /* Hz of the trace's clock: DiskIo response times */
    etl_cpu_threads *running;   /* the thread each processor runs: SysClEnter/SysClExit's */
    etl_disk_io_pairing *issues; /* DiskIo issues waiting for their completions */
    etl_process_runs *runs;     /* the run of each pid: processes.run (main thread) */
    /* the lost rows of fields (fields.c), by providers.provider (0: events without one) */
    uint64_t *undecoded;        /* events with no schema */
    uint64_t *failed_rest;      /* events whose payload did not fit their schema, past the
                                   DECODE_FAILED_LISTED listed one by one */
    unsigned counts_cap;
    unsigned failed_listed;
    /* a streamed load (a row back end): the header, kept for the traces row at the end */
    etl_trace_info info;
    char *info_text[2];
};

/* Events of a trace whose payload did not fit their schema that get a lost row (and a message)
   each; the rest are counted per provider. */
#define DECODE_FAILED_LISTED 100

#define FRAME_SETS_MAX (1u << 22)

struct frame_set {
    uint64_t h1, h2;
    int64_t id;                 /* 0: empty slot */
};

struct frame_sets {
    struct frame_set *slot;
    unsigned cap, count;
    int64_t next_id;
    /* the frames being stored: address, resolved image (NULL if none) and offset */
    uint64_t *addr, *offset;
    const char **image;
    unsigned frames_cap;
    etl_symbol *symbols;        /* one address's frames (ETL_LOAD_SYMBOL_FRAMES) */
    struct name_hash { const char *name; uint64_t hash; } names[256];
};

/* Providers seen, by GUID: an open-addressing table of provider ids. */
struct provider_slot {
    etl_guid guid;
    int64_t id;                 /* 0: empty */
};

/* The frames one address may resolve to (inlined calls, then the function that holds them). */
#define ETL_LOAD_SYMBOL_FRAMES 16

/* The functions table's rows, by name, image path and source file: an open-addressing table
   of ids, and a small cache of the last ids by the symbolizer's interned pointers. */
struct function_slot {
    const char *name, *image, *image_path, *source_file; /* the symbolizer's strings, or owned
                                                            (an appended database's, owned_text) */
    uint64_t hash;
    int64_t id;                 /* 0: empty */
};

struct functions {
    struct function_slot *slot;
    unsigned cap, count;
    int64_t next_id;
    struct { const char *name, *image_path, *source_file; int64_t id; } recent[1024];
    char **owned_text;          /* strings read from an appended database */
    unsigned nowned, cap_owned;
};

/* What the kernel thread keeps per input. */
struct kinput {
    etl_stack_owners *owners;   /* which event a stack follows (reader/stacks.c) */
};

struct kernel_side {
    struct etl_sqlite_loader *l;
    struct sink sink;
    char *path;                 /* its database file (temporary) */
    etl_merge *merge;
    struct kinput *kin;         /* per input */
    struct frame_sets frame_sets;
    struct functions functions;
    int64_t next_event, next_stack, next_lbr;
    int rc;
    double cpu_s, rows_s;       /* the thread's processor time at its end, after its rows (verbose) */
};

/* One events row waiting to be inserted: columns 1..21 as integers (bit c of nulls: column
   c+1 is NULL), then the fields as JSON (written there by the decoder's formatting, no copy),
   then a copy of the payload. */
#define EVENT_COLUMNS 23
#define EVENT_INT_COLUMNS 21
#define EVENT_BATCH 64

struct event_row {
    int64_t v[EVENT_INT_COLUMNS];
    uint32_t nulls;
    int has_fields;
    uint32_t fields_len, fields_cap;
    char *fields;
    uint32_t payload_len, payload_cap;
    uint8_t *payload;
};

/* An event name of the database (event_names) and the top-level fields its events have had
   (event_name_fields): the columns of its view. */
struct event_name {
    int64_t id;                 /* event_names.name_id */
    int64_t provider;           /* providers.provider; 0: none */
    char *name;
    uint64_t hash;
    char **fields;
    uint8_t *hex;               /* event_name_fields.hex of each */
    unsigned nfields, cap_fields;
};

/* The JSON keys of a schema's top-level fields, '"Name":' as etl_decoded_format_json writes
   them, made once (fields.c). */
struct schema_key {
    const char *name;           /* the schema field's name (the decoded field's points to it) */
    char *text;
    uint32_t len;
};

struct schema_keys {
    unsigned n;
    struct schema_key key[];
};

/* A schema of the decoder, and the name its events have (fields.c). */
struct schema_slot {
    const void *schema;         /* the decoder's etl_schema_event; NULL: an empty slot */
    int64_t provider;
    unsigned name;              /* index in the names */
    struct schema_keys *keys;
};

/* Every name of the database, found by provider and text, and by the schema that gave it. */
struct event_names {
    struct event_name *v;
    unsigned n, cap;
    unsigned *by_text;          /* open addressing: index + 1; 0 empty */
    unsigned text_cap;
    struct schema_slot *by_schema;
    unsigned schema_cap, schema_count;
    const void *last_schema;    /* the last schema looked up, and its slot's name and keys */
    int64_t last_provider;
    unsigned last_name;
    struct schema_keys *last_keys;
    int64_t next_id;
};

struct etl_sqlite_loader {
    etl_sqlite_options o;
    char *output;               /* the database's path */
    char *db_path;              /* the file SQLite writes (the temporary name for a new database) */
    int exists, committed;
    int appended;               /* an append's transaction is committed: it is in the database */
    struct sink sink;
    struct input *in;           /* the inputs that could be opened, in merge order */
    unsigned ninputs, cap_inputs;
    const char **paths;         /* the same paths, for the merges */
    etl_merge *merge;
    const etl_clock *clock;
    struct provider_slot *providers;
    unsigned provider_cap, provider_count;
    int64_t next_provider, next_event;
    int64_t first_trace;        /* traces.trace of the first input */
    struct event_row batch[EVENT_BATCH];
    unsigned nbatch;
    etl_decoder *decoder;       /* every event's fields (main thread) */
    char **symbol_paths;        /* copies of options' symbol_paths (o.symbol_paths points here) */
    int decoder_quiet;          /* its warnings are the first pass's again: not repeated */
    struct event_names names;
    sqlite3_stmt *event_batch;  /* the multi-row INSERT */
    struct kernel_side kernel;
    atomic_int stop;            /* either thread failed, or the load was interrupted */
    int interrupted;
    int damaged;                /* an input had damage */
    int partial;                /* an input failed mid-way and keep_partial keeps the rest */
    uint64_t total_bytes;
    struct timespec started, phase; /* the events' start; the end of the last phase (verbose) */
    pthread_mutex_t message_lock; /* the two threads' messages, one at a time */
    int has_error;              /* error holds a message; error_fatal: a fatal one, kept */
    int error_fatal;
    char *error;
};

/* ---- messages (sqlite.c) */
/* Tells the caller (status as in etl_sqlite_message); a fatal or failure message becomes the
   handle's error. */
void etl_load_message(struct etl_sqlite_loader *l, int status, int damage, const char *path, int64_t offset,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- a streamed load (sqlite.c): the same rows handed to row back ends (the main thread's
   tables to main_rows, the kernel thread's to kernel_rows) while the traces are read, with no
   database; inputs added with etl_sqlite_loader_add, then etl_load_stream, which returns as
   etl_sqlite_loader_commit does. Each input's traces row comes last (the back end's trace()). */
int etl_load_open_streamed(etl_sqlite_loader **out, const char *label, const etl_sqlite_options *options,
                           const struct row_backend *main_rows, const struct row_backend *kernel_rows);
int etl_load_stream(etl_sqlite_loader *l);

/* ---- the connection (sink.c) */
/* Reports an SQLite error (once per connection) and stops the load: -1. */
int etl_sink_error(struct sink *k, const char *what);
int etl_sink_exec(struct sink *k, const char *sql);
/* Runs a prepared insert whose values are bound, and resets it. */
int etl_sink_step(struct sink *k, enum stmt_id id);
int etl_sink_prepare(struct sink *k);
/* The next row of batched table id: set its columns (1-based) with rv_*, then call etl_sink_row_end. */
static inline struct rowval *row_begin(struct sink *k, enum stmt_id id) { return k->rows[id]->v[k->rows[id]->n]; }
static inline void rv_i64(struct rowval *r, int col, int64_t v) { r[col - 1].type = 1; r[col - 1].i = v; }
static inline void rv_u64(struct rowval *r, int col, uint64_t v) { rv_i64(r, col, (int64_t)v); }
static inline void rv_null(struct rowval *r, int col) { r[col - 1].type = 0; }
static inline void rv_text(struct rowval *r, int col, const char *t) { r[col - 1].type = t ? 2 : 0; r[col - 1].t = t; }
static inline void rv_blob(struct rowval *r, int col, const void *p, size_t n)
{
    r[col - 1].type = 3; r[col - 1].t = n ? (const char *)p : ""; r[col - 1].i = (int64_t)n;
}
/* An etl_string as UTF-8 text (scratch slot, valid until the row's end), NULL when the record
   does not carry it: 0, or -1 without memory. */
int etl_sink_rv_string(struct sink *k, struct rowval *r, int col, const etl_string *str, unsigned slot);
int etl_sink_row_end(struct sink *k, enum stmt_id id);
/* Binds values r to parameters 1..cols of s. */
void etl_sink_bind_row(sqlite3_stmt *s, const struct rowval *r, int cols);
/* Inserts every row still waiting, one by one. */
int etl_sink_flush(struct sink *k);
/* Finalizes the statements (before COMMIT, or at the end). */
void etl_sink_finalize(struct sink *k);
void etl_sink_close(struct sink *k);
static inline void bind_i64(sqlite3_stmt *s, int i, int64_t v) { sqlite3_bind_int64(s, i, v); }
static inline void bind_u64(sqlite3_stmt *s, int i, uint64_t v) { sqlite3_bind_int64(s, i, (int64_t)v); }
/* Sets image and image_offset at columns i, i+1 of a batched row for address addr of pid at raw time ts. */
void etl_load_rv_image(const struct input *in, struct rowval *r, int i, int64_t pid, uint64_t addr, int64_t ts);
int64_t etl_sink_max(struct sink *k, const char *sql);
/* Processor time of the calling thread so far. */
double etl_load_thread_cpu_s(void);

/* The views' lookups (schema.c), and the ClickHouse loader's columns filled from them (clickhouse.c) at an event (trace tr, time t, number e), each by an index: the program
   (image_file_name), or the run, of process pid; the pid of thread tid. */
#define PROCESS_AT(col, tr, pid, t, e) \
    "coalesce((SELECT p." col " FROM processes p WHERE p.trace = " tr " AND p.pid = " pid "\n" \
    "                 AND (p.time_ns, p.event) <= (" t ", " e ") ORDER BY p.time_ns DESC, p.event DESC LIMIT 1),\n" \
    "                (SELECT p." col " FROM processes p WHERE p.trace = " tr " AND p.pid = " pid "\n" \
    "                 AND (p.time_ns, p.event) > (" t ", " e ") ORDER BY p.time_ns, p.event LIMIT 1))"
#define NAME_AT(tr, pid, t, e) PROCESS_AT("image_file_name", tr, pid, t, e)
#define RUN_AT(tr, pid, t, e) PROCESS_AT("run", tr, pid, t, e)
#define PID_AT(tr, tid, e) \
    "coalesce((SELECT h.pid FROM threads h WHERE h.trace = " tr " AND h.tid = " tid " AND h.event <= " e "\n" \
    "                 ORDER BY h.event DESC LIMIT 1),\n" \
    "                (SELECT h.pid FROM threads h WHERE h.trace = " tr " AND h.tid = " tid " AND h.event > " e "\n" \
    "                 ORDER BY h.event LIMIT 1))"

/* ---- the schema's statements (schema.c) */
int etl_load_create_schema(struct sink *k);
int etl_load_create_indexes(struct sink *k);
int etl_load_check_schema(struct sink *k);

/* ---- the main thread's rows (events.c) */
int etl_load_providers(struct etl_sqlite_loader *l);
/* The providers.provider of g, its row inserted on first sight (named by the decoder, else by
   etl_guid_name): -1 on error. */
int64_t etl_load_provider_id(struct etl_sqlite_loader *l, const etl_guid *g);
char *etl_load_event_batch_sql(void);
int etl_load_flush_events(struct etl_sqlite_loader *l);
int etl_load_event(struct etl_sqlite_loader *l, struct input *in, const etl_merge_event *me);
/* A lost row; provider 0 and count, offset -1 for NULL. */
int etl_load_lost(struct etl_sqlite_loader *l, int64_t trace, const char *kind, int64_t provider, int64_t count,
                  int64_t offset, const char *message);
int etl_load_trace(struct etl_sqlite_loader *l, struct input *in, const etl_trace_info *ti);
int etl_load_trace_finish(struct etl_sqlite_loader *l, struct input *in);
/* A back end's providers rows, at the end of a streamed load. */
int etl_load_providers_out(struct etl_sqlite_loader *l);
/* The providers' names as the decoder knows them at the end (TraceLogging names learnt from
   events too). */
int etl_load_provider_names(struct etl_sqlite_loader *l);

/* ---- every event's fields, names and views (fields.c) */
/* The decoder, with the defaults and the options' manifests: ETL_OK, or ETL_FATAL (said). */
int etl_load_decoder_open(struct etl_sqlite_loader *l);
/* The names an appended database has. */
int etl_load_names_read(struct etl_sqlite_loader *l);
/* Decodes ev into row r (its name, column 21, 0 when none; its fields), counting what has no
   schema or does not fit it, and sets *provider to the event's providers.provider (0: none;
   after the decoding: a TraceLogging event names its provider). 0, or -1 when the load must
   stop. */
int etl_load_fields(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, struct event_row *r,
                    int64_t *provider);
/* The lost rows of an input's fields: no schema, and the failures past those listed. */
int etl_load_fields_lost(struct etl_sqlite_loader *l, struct input *in);
/* (Re)creates the view of every event name (event_views). */
int etl_load_event_views(struct etl_sqlite_loader *l);
void etl_load_names_free(struct event_names *names);

/* ---- the decoded kernel tables and the kernel thread (kernel.c) */
/* Which thread writes a class's rows: 1 the main thread, 0 the kernel thread. */
int etl_load_main_thread_class(int kclass);
int etl_load_kernel_row(struct sink *k, struct kernel_side *ks, const struct input *in, int64_t owner,
                        const etl_event *ev, const etl_kernel_event *ke, int64_t event, int64_t time_ns);
int etl_load_kernel_open(struct etl_sqlite_loader *l, int fresh);
void *etl_load_kernel_thread(void *arg);
int etl_load_kernel_copy(struct etl_sqlite_loader *l);

/* ---- the functions at addresses (symbols.c) */
/* The symbolizer of an input (unless no_symbols), fed every event of it by the first pass:
   ETL_OK, or ETL_FATAL without memory (said). */
int etl_load_symbols_open(struct etl_sqlite_loader *l, struct input *in);
/* The functions an appended database has: 0, or -1 (said). */
int etl_load_functions_read(struct etl_sqlite_loader *l);
/* Sets the columns function, function_offset, outer_function and line at columns i .. i+3 of
   a batched row for address addr of pid at raw time ts; a return address (a stack's frame
   past its first) is looked up one byte before it, in the call. 0, or -1 (said). */
int etl_load_rv_function(struct kernel_side *ks, const struct input *in, struct rowval *r, int i, int64_t pid,
                         uint64_t addr, int64_t ts, int return_address);
/* What the symbolizers found (verbose), and what they have to say (a warning). */
void etl_load_symbols_report(struct etl_sqlite_loader *l);
void etl_load_functions_free(struct functions *f);

#endif
