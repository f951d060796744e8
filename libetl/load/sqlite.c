/* SPDX-License-Identifier: MIT */
/* The SQLite loader (etl/load.h): inputs opened, then loaded by two threads into a new or appended
   database. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/load.h"

/* ------------------------------------------------------------------ messages */

void etl_load_message(struct etl_sqlite_loader *l, int status, int damage, const char *path, int64_t offset,
                      const char *fmt, ...)
{
    etl_sqlite_message m;
    char small[512], *text = small;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!text) text = small; /* cut short rather than lost */
    pthread_mutex_lock(&l->message_lock);
    if (status <= ETL_FAILED && !l->error_fatal) {
        char *copy = strdup(text);
        if (copy) {
            free(l->error);
            l->error = copy;
            l->error_fatal = status == ETL_FATAL;
        }
    }
    if (l->o.on_message) {
        m.status = status;
        m.damage = damage;
        m.path = path;
        m.offset = offset;
        m.text = text;
        l->o.on_message(l->o.arg, &m);
    }
    pthread_mutex_unlock(&l->message_lock);
    if (text != small) free(text);
}

static double elapsed_s(const struct timespec *from, const struct timespec *to)
{
    return (double)(to->tv_sec - from->tv_sec) + (double)(to->tv_nsec - from->tv_nsec) / 1e9;
}

/* verbose: what the phase that ends now took, since the previous one ended. */
static void phase_done(struct etl_sqlite_loader *l, const char *what, uint64_t rows)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    if (l->o.verbose) {
        if (rows)
            etl_load_message(l, ETL_OK, 0, NULL, -1, "%s: %.3f s, %llu events", what, elapsed_s(&l->phase, &now),
                             (unsigned long long)rows);
        else etl_load_message(l, ETL_OK, 0, NULL, -1, "%s: %.3f s", what, elapsed_s(&l->phase, &now));
    }
    l->phase = now;
}

static void progress(struct etl_sqlite_loader *l, uint64_t events, int final)
{
    etl_sqlite_progress p;
    struct timespec now;

    if (!l->o.on_progress) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    memset(&p, 0, sizeof p);
    p.events = events;
    for (unsigned i = 0; i < l->ninputs; i++) p.bytes_done += l->in[i].progress_offset;
    p.bytes_total = l->total_bytes;
    if (final) p.bytes_done = l->total_bytes;
    p.seconds = elapsed_s(&l->started, &now);
    p.final = final;
    l->o.on_progress(l->o.arg, &p);
}

static int poll_interrupted(struct etl_sqlite_loader *l)
{
    if (!l->interrupted && l->o.interrupted && l->o.interrupted(l->o.arg)) l->interrupted = 1;
    return l->interrupted;
}

static void on_merge_message(void *arg, const etl_merge_message *msg)
{
    struct etl_sqlite_loader *l = arg;
    struct input *in = msg->input >= 0 && (unsigned)msg->input < l->ninputs ? &l->in[msg->input] : NULL;

    if (msg->damage) {
        l->damaged = 1;
        if (in) {
            in->warnings++;
            if (l->sink.rows[S_LOST]) etl_load_lost(l, in->trace, "damage", 0, -1, msg->offset, msg->text);
        }
    }
    if (!msg->path) etl_load_message(l, ETL_WARN, msg->damage, NULL, msg->offset, "%s", msg->text);
    else if (!msg->damage)
        etl_load_message(l, ETL_WARN, 0, msg->path, msg->offset, "%s: warning: %s", msg->path, msg->text);
    else if (msg->offset >= 0)
        etl_load_message(l, ETL_WARN, 1, msg->path, msg->offset, "%s: offset %lld: %s", msg->path,
                         (long long)msg->offset, msg->text);
    else etl_load_message(l, ETL_WARN, 1, msg->path, -1, "%s: %s", msg->path, msg->text);
}

/* ------------------------------------------------------------------ the load */

/* The pragmas of a bulk load (a small page cache: a large one only costs page faults). A new
   database needs no journal (it is a temporary file until complete); an append keeps a rollback
   journal on disk beside the database: an append larger than the page cache writes pages into the
   file before the commit, and when a write fails (a full disk, an I/O error) SQLite cannot replay
   a journal kept in memory (it discards it), while one on disk is replayed (undo_append). */
static int set_load_pragmas(struct sink *k, int fresh)
{
    if (fresh && etl_sink_exec(k, "PRAGMA page_size = 65536") != 0) return -1;
    return etl_sink_exec(k, fresh ? "PRAGMA journal_mode = OFF" : "PRAGMA journal_mode = DELETE") ||
           etl_sink_exec(k, "PRAGMA synchronous = OFF; PRAGMA main.locking_mode = EXCLUSIVE; "
                            "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384")
               ? -1 : 0;
}

/* Those a database is left with: SQLite's defaults. */
static int restore_pragmas(struct sink *k)
{
    return etl_sink_exec(k, "PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; PRAGMA temp_store = DEFAULT; "
                            "PRAGMA cache_size = -2000; PRAGMA locking_mode = NORMAL");
}

/*
 * The first pass, before the events: each input's image map, from all its Image, Process and
 * Thread events (for the kernel thread: addresses resolve even against rundowns at the end of the
 * trace), and every EventSource manifest the inputs carry (so that events before their manifest
 * decode). Damage is reported by the events' reading. 0, or -1 (out of memory, interrupted).
 */
static int first_pass(struct etl_sqlite_loader *l)
{
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        etl_event ev;
        uint64_t n = 0;
        int rc;

        if (!in->probe) continue;
        if (!(in->map = etl_image_map_new())) goto nomem;
        while ((rc = etl_reader_next(in->probe, &ev)) == ETL_OK || rc == ETL_WARN) {
            if (etl_image_map_add(in->map, &ev) != ETL_OK || etl_decoder_learn(l->decoder, &ev) == ETL_FATAL) goto nomem;
            if (in->sym && etl_symbolizer_add(in->sym, &ev) != ETL_OK) goto nomem;
            if ((++n & 65535) == 0 && poll_interrupted(l)) return -1;
        }
        etl_reader_close(in->probe);
        in->probe = NULL;
    }
    /* The decoding learns the manifests again as it meets them: what it would say is said. */
    l->decoder_quiet = 1;
    return 0;
nomem:
    etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
    return -1;
}

/* The main thread's setup: schema, the kernel thread's database, statements, numbering, traces. */
static int load_begin(struct etl_sqlite_loader *l, int fresh)
{
    char *sql;

    if (l->sink.backend) { /* streamed: no database */
        if (etl_load_kernel_open(l, 1) != 0 || etl_sink_prepare(&l->sink) != 0) return -1;
        l->next_event = l->next_provider = l->first_trace = 1;
        for (unsigned i = 0; i < l->ninputs; i++) {
            struct input *in = &l->in[i];
            in->trace = l->first_trace + in->merge_index;
            if (etl_load_trace(l, in, etl_reader_info(in->probe)) != 0) return -1;
        }
        return 0;
    }
    if (fresh ? etl_load_create_schema(&l->sink) != 0 : etl_load_check_schema(&l->sink) != 0) return -1;
    if (etl_load_kernel_open(l, fresh) != 0) return -1;
    if (etl_sink_exec(&l->sink, "BEGIN") != 0 || etl_sink_prepare(&l->sink) != 0) return -1;
    sql = etl_load_event_batch_sql();
    if (!sql || sqlite3_prepare_v3(l->sink.db, sql, -1, SQLITE_PREPARE_PERSISTENT, &l->event_batch, NULL) != SQLITE_OK) {
        free(sql);
        return etl_sink_error(&l->sink, "prepare");
    }
    free(sql);
    l->next_event = fresh ? 1 : etl_sink_max(&l->sink, "SELECT max(event) FROM events") + 1;
    l->next_provider = fresh ? 1 : etl_sink_max(&l->sink, "SELECT max(provider) FROM providers") + 1;
    l->first_trace = fresh ? 1 : etl_sink_max(&l->sink, "SELECT max(trace) FROM traces") + 1;
    if (!fresh && (etl_load_providers(l) != 0 || etl_load_names_read(l) != 0)) return -1;
    if (l->sink.failed) return -1;
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        in->trace = l->first_trace + in->merge_index;
        if (etl_load_trace(l, in, etl_reader_info(in->probe)) != 0) return -1;
    }
    return 0;
}

/* Loads every input; returns 0, or -1 when the load must be undone. */
static int load(struct etl_sqlite_loader *l, int fresh)
{
    struct kernel_side *ks = &l->kernel;
    etl_merge_options mo;
    etl_merge_event me;
    pthread_t kernel_tid;
    uint64_t events = 0;
    int rc;

    if (load_begin(l, fresh) != 0) return -1;
    if (first_pass(l) != 0) {
        if (l->interrupted) etl_load_message(l, ETL_FATAL, 0, NULL, -1, "interrupted; nothing was written");
        return -1;
    }
    phase_done(l, l->o.no_symbols ? "first pass (image maps, EventSource manifests)"
                                  : "first pass (image maps, EventSource manifests, symbols)", 0);
    memset(&mo, 0, sizeof mo);
    mo.on_message = on_merge_message;
    mo.on_message_arg = l;
    rc = etl_merge_open(&l->merge, l->paths, l->ninputs, &mo);
    if (rc == ETL_FATAL) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s", l->merge ? etl_merge_error(l->merge) : "out of memory");
        return -1;
    }
    l->clock = etl_merge_clock(l->merge);
    ks->next_event = l->next_event;
    if (pthread_create(&kernel_tid, NULL, etl_load_kernel_thread, ks) != 0) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "cannot start a thread");
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &l->started);
    while ((rc = etl_merge_next(l->merge, &me)) == ETL_OK || rc == ETL_WARN) {
        struct input *in = me.input < l->ninputs ? &l->in[me.input] : NULL;
        if (!in || etl_load_event(l, in, &me) != 0) break;
        if ((++events & 8191) == 0) {
            if (poll_interrupted(l)) atomic_store(&l->stop, 1);
            if (atomic_load(&l->stop)) break;
            progress(l, events, 0);
        }
    }
    if (rc == ETL_FATAL) {
        etl_load_message(l, ETL_FAILED, 0, NULL, -1, "%s", etl_merge_error(l->merge));
        if (l->o.keep_partial) l->partial = 1;
        else atomic_store(&l->stop, 1);
    }
    else if (rc == ETL_OK || rc == ETL_WARN)
        atomic_store(&l->stop, 1); /* the loop broke off: an error, or an interruption */
    if (!atomic_load(&l->stop) && (etl_load_flush_events(l) != 0 || etl_sink_flush(&l->sink) != 0)) atomic_store(&l->stop, 1);
    pthread_join(kernel_tid, NULL);
    if (poll_interrupted(l)) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "interrupted; nothing was written");
        return -1;
    }
    if (atomic_load(&l->stop) || ks->rc != 0 || l->sink.failed) return -1;
    progress(l, events, 1);
    phase_done(l, "events and kernel tables, two threads", events);
    etl_load_symbols_report(l);
    /* SQLite numbered the events (max + 1 each): they must be the numbers the kernel tables use. */
    if (!l->sink.backend && etl_sink_max(&l->sink, "SELECT max(event) FROM main.events") != l->next_event - 1) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: the events were not numbered as expected", l->output);
        return -1;
    }
    if (l->o.verbose)
        etl_load_message(l, ETL_OK, 0, NULL, -1,
                         "processor time: main thread %.3f s; kernel thread %.3f s: rows %.3f s, indexes %.3f s",
                         etl_load_thread_cpu_s(), ks->cpu_s, ks->rows_s, ks->cpu_s - ks->rows_s);
    /* streamed: the providers, then the traces rows (the back end's commit) */
    if (l->sink.backend && etl_load_providers_out(l) != 0) return -1;
    for (unsigned i = 0; i < l->ninputs; i++)
        if (etl_load_trace_finish(l, &l->in[i]) != 0) return -1;
    if (l->sink.backend) return 0;
    /* Indexes first: into empty tables SQLite copies a table's rows and its index entries as
       they are (the kernel thread built its indexes); into an appended one it inserts. */
    if (etl_load_create_indexes(&l->sink) != 0 || etl_load_kernel_copy(l) != 0) return -1;
    if (etl_load_provider_names(l) != 0 || etl_load_event_views(l) != 0) return -1;
    etl_sink_finalize(&l->sink);
    sqlite3_finalize(l->event_batch);
    l->event_batch = NULL;
    /* An append writes nothing once committed (what could fail then would report a failure of
       an append that is in): its statistics are written in the transaction. */
    if (!fresh && etl_sink_exec(&l->sink, "PRAGMA main.optimize") != 0) return -1;
    if (etl_sink_exec(&l->sink, "COMMIT") != 0) return -1;
    l->appended = !fresh;
    if (etl_sink_exec(&l->sink, "DETACH kernel") != 0) return -1;
    phase_done(l, "kernel tables copied", 0);
    if (fresh && (etl_sink_exec(&l->sink, etl_sqlite_schema_views) != 0 || etl_sink_exec(&l->sink, "PRAGMA optimize") != 0))
        return -1;
    phase_done(l, "views", 0);
    return restore_pragmas(&l->sink);
}

/* A failed append: undone, and the database checked to be as it was. SQLite rolls back what it
   can on its connection; after a failed write (a full disk, an I/O error) its pager keeps the
   journal beside the database for the next connection to replay, which a second connection,
   opened here, does. */
static void undo_append(struct etl_sqlite_loader *l)
{
    char *journal = sqlite3_mprintf("%s-journal", l->db_path);
    sqlite3 *db = NULL;
    struct stat st;
    int rc;

    if (l->sink.db) sqlite3_exec(l->sink.db, "ROLLBACK", NULL, NULL, NULL);
    if (l->sink.db) sqlite3_close(l->sink.db);
    l->sink.db = NULL;
    if (!journal) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return;
    }
    if (stat(journal, &st) == 0) {
        rc = sqlite3_open_v2(l->db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
        if (rc != SQLITE_OK || stat(journal, &st) == 0)
            etl_load_message(l, ETL_FATAL, 0, NULL, -1,
                             "%s: the append could not be undone (%s); SQLite undoes it when the database is next "
                             "opened, from %s: keep that file beside it",
                             l->output, db ? sqlite3_errmsg(db) : "out of memory", journal);
        sqlite3_close(db);
    }
    sqlite3_free(journal);
}

/* A new database's temporary name beside it: "" and a message when it cannot be made. */
static char *temporary_beside(struct etl_sqlite_loader *l)
{
    char *tmp = malloc(strlen(l->output) + 16);
    int fd;

    if (!tmp) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return NULL;
    }
    sprintf(tmp, "%s.tmp-XXXXXX", l->output);
    fd = mkstemp(tmp);
    if (fd < 0) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: cannot create a file beside it: %s", l->output, strerror(errno));
        free(tmp);
        return NULL;
    }
    close(fd);
    return tmp;
}

/* What a commit and a streamed load both begin with: one per loader, and inputs to load. */
static int commit_begin(etl_sqlite_loader *l)
{
    if (l->committed) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: the load is done already", l->output);
        return ETL_FATAL;
    }
    l->committed = 1;
    clock_gettime(CLOCK_MONOTONIC, &l->phase);
    if (!l->ninputs) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "nothing was written");
        return ETL_FATAL;
    }
    return ETL_OK;
}

int etl_sqlite_loader_commit(etl_sqlite_loader *l)
{
    int fresh, rc;

    if (commit_begin(l) != ETL_OK) return ETL_FATAL;
    fresh = !l->o.append;
    if (fresh) {
        l->db_path = temporary_beside(l);
        if (!l->db_path) return ETL_FATAL;
    }
    else if (!(l->db_path = strdup(l->output))) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return ETL_FATAL;
    }

    if (sqlite3_open_v2(l->db_path, &l->sink.db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (fresh ? SQLITE_OPEN_CREATE : 0), NULL) != SQLITE_OK) {
        etl_sink_error(&l->sink, "cannot open");
        rc = -1;
    }
    else if (set_load_pragmas(&l->sink, fresh) != 0)
        rc = -1;
    else
        rc = load(l, fresh);

    sqlite3_finalize(l->event_batch);
    l->event_batch = NULL;
    etl_sink_finalize(&l->sink);
    if (rc != 0 && !fresh && !l->appended) undo_append(l);
    if (l->sink.db && sqlite3_close(l->sink.db) != SQLITE_OK && rc == 0) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: cannot close the database", l->output);
        rc = -1;
    }
    l->sink.db = NULL;
    if (fresh) {
        if (rc == 0 && rename(l->db_path, l->output) != 0) {
            etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: %s", l->output, strerror(errno));
            rc = -1;
        }
        if (rc != 0) unlink(l->db_path);
    }
    if (rc != 0) return ETL_FATAL;
    return l->partial ? ETL_FAILED : l->damaged ? ETL_WARN : ETL_OK;
}

/* ------------------------------------------------------------------ the handle */

static int loader_setup(etl_sqlite_loader *l);

/* A loader for output path (a database, or a back end's name for messages): ETL_OK, or
   ETL_FATAL (said; *out NULL only without memory). */
static int loader_new(etl_sqlite_loader **out, const char *path, const etl_sqlite_options *options)
{
    etl_sqlite_loader *l = calloc(1, sizeof *l);

    *out = NULL;
    if (!l) return ETL_FATAL;
    if (options) l->o = *options;
    pthread_mutex_init(&l->message_lock, NULL);
    atomic_init(&l->stop, 0);
    l->sink.l = l;
    l->output = strdup(path);
    l->provider_cap = 1024;
    l->providers = calloc(l->provider_cap, sizeof *l->providers);
    *out = l;
    if (!l->output || !l->providers) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return ETL_FATAL;
    }
    l->sink.label = l->output;
    return ETL_OK;
}

int etl_sqlite_loader_open(etl_sqlite_loader **out, const char *path, const etl_sqlite_options *options)
{
    etl_sqlite_loader *l;
    struct stat st;

    if (loader_new(out, path, options) != ETL_OK) return ETL_FATAL;
    l = *out;
    l->exists = stat(path, &st) == 0;
    if (l->exists && !l->o.append && !l->o.replace) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s exists; nothing was written", path);
        return ETL_FATAL;
    }
    if (l->o.append && !l->exists) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: no such database", path);
        return ETL_FATAL;
    }
    return loader_setup(l);
}

int etl_load_open_streamed(etl_sqlite_loader **out, const char *label, const etl_sqlite_options *options,
                           const struct row_backend *main_rows, const struct row_backend *kernel_rows)
{
    if (loader_new(out, label, options) != ETL_OK) return ETL_FATAL;
    (*out)->o.append = (*out)->o.replace = 0;
    (*out)->sink.backend = main_rows;
    (*out)->kernel.sink.backend = kernel_rows;
    return loader_setup(*out);
}

int etl_load_stream(etl_sqlite_loader *l)
{
    int rc;

    if (commit_begin(l) != ETL_OK) return ETL_FATAL;
    rc = load(l, 1);
    if (rc != 0) return ETL_FATAL;
    return l->partial ? ETL_FAILED : l->damaged ? ETL_WARN : ETL_OK;
}

/* What either kind of loader sets up after its output: the decoder, the symbol directories. */
static int loader_setup(etl_sqlite_loader *l)
{
    if (etl_load_decoder_open(l) != ETL_OK) return ETL_FATAL;
    l->o.manifests = NULL; /* read: the caller's strings are not kept */
    l->o.nmanifests = 0;
    /* The symbol directories, for the inputs' symbolizers (made as they are added). */
    if (l->o.nsymbol_paths && !l->o.no_symbols) {
        if (!(l->symbol_paths = calloc(l->o.nsymbol_paths, sizeof *l->symbol_paths))) goto nomem;
        for (unsigned i = 0; i < l->o.nsymbol_paths; i++)
            if (!(l->symbol_paths[i] = strdup(l->o.symbol_paths[i]))) goto nomem;
        l->o.symbol_paths = (const char *const *)l->symbol_paths;
    }
    else {
        l->o.symbol_paths = NULL;
        l->o.nsymbol_paths = 0;
    }
    return ETL_OK;
nomem:
    etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
    return ETL_FATAL;
    return ETL_OK;
}

static void ignore_damage(void *arg, int64_t offset, const char *message)
{
    (void)arg, (void)offset, (void)message;
}

int etl_sqlite_loader_add(etl_sqlite_loader *l, const char *path)
{
    etl_reader_options oo;
    etl_reader *r = NULL;
    struct input *in;

    if (l->committed || l->error_fatal) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s: no more inputs can be added", l->output);
        return ETL_FATAL;
    }
    if (l->ninputs == l->cap_inputs) {
        unsigned cap = l->cap_inputs ? 2 * l->cap_inputs : 8;
        struct input *n = realloc(l->in, cap * sizeof *n);
        const char **p = n ? realloc(l->paths, cap * sizeof *p) : NULL;
        if (n) l->in = n;
        if (p) l->paths = p;
        if (!n || !p) {
            etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
            return ETL_FATAL;
        }
        l->cap_inputs = cap;
    }
    /* The first pass reads the file in file order (the image maps need no time order). */
    memset(&oo, 0, sizeof oo);
    oo.order = ETL_ORDER_FILE;
    oo.on_damage = ignore_damage;
    if (etl_reader_open_path(&r, path, &oo) == ETL_FATAL) {
        etl_load_message(l, ETL_FAILED, 0, path, -1, "%s", r ? etl_reader_error(r) : "out of memory");
        etl_reader_close(r);
        return ETL_FAILED;
    }
    in = &l->in[l->ninputs];
    memset(in, 0, sizeof *in);
    in->path = strdup(path);
    in->running = etl_cpu_threads_new();
    in->issues = etl_disk_io_pairing_new();
    in->runs = etl_process_runs_new();
    in->probe = r;
    if (!in->path || !in->running || !in->issues || !in->runs) {
        free(in->path);
        etl_cpu_threads_free(in->running);
        etl_disk_io_pairing_free(in->issues);
        etl_process_runs_free(in->runs);
        etl_reader_close(r);
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return ETL_FATAL;
    }
    if (etl_load_symbols_open(l, in) != ETL_OK) {
        free(in->path);
        etl_cpu_threads_free(in->running);
        etl_disk_io_pairing_free(in->issues);
        etl_process_runs_free(in->runs);
        etl_reader_close(r);
        return ETL_FATAL;
    }
    in->file_size = etl_reader_info(r)->file_size;
    in->merge_index = (int)l->ninputs;
    l->total_bytes += in->file_size;
    l->paths[l->ninputs++] = in->path;
    return ETL_OK;
}

unsigned etl_sqlite_loader_inputs(const etl_sqlite_loader *l)
{
    return l->ninputs;
}

const char *etl_sqlite_loader_error(const etl_sqlite_loader *l)
{
    return l->error ? l->error : "";
}

void etl_sqlite_loader_close(etl_sqlite_loader *l)
{
    struct kernel_side *ks;

    if (!l) return;
    ks = &l->kernel;
    sqlite3_finalize(l->event_batch);
    etl_sink_close(&l->sink);
    etl_sink_close(&ks->sink);
    if (ks->path) unlink(ks->path);
    free(ks->path);
    for (unsigned i = 0; i < l->ninputs; i++) {
        etl_reader_close(l->in[i].probe);
        etl_image_map_free(l->in[i].map);
        etl_symbolizer_close(l->in[i].sym);
        etl_cpu_threads_free(l->in[i].running);
        etl_disk_io_pairing_free(l->in[i].issues);
        etl_process_runs_free(l->in[i].runs);
        free(l->in[i].undecoded);
        free(l->in[i].failed_rest);
        free(l->in[i].path);
        free(l->in[i].info_text[0]);
        free(l->in[i].info_text[1]);
        if (ks->kin) etl_stack_owners_free(ks->kin[i].owners);
    }
    free(ks->kin);
    etl_merge_close(ks->merge);
    etl_merge_close(l->merge);
    free(l->paths);
    for (unsigned i = 0; i < EVENT_BATCH; i++) {
        free(l->batch[i].payload);
        free(l->batch[i].fields);
    }
    etl_load_names_free(&l->names);
    etl_decoder_close(l->decoder);
    free(l->in);
    free(l->providers);
    free(ks->frame_sets.slot);
    free(ks->frame_sets.addr);
    free(ks->frame_sets.offset);
    free(ks->frame_sets.image);
    free(ks->frame_sets.symbols);
    etl_load_functions_free(&ks->functions);
    if (l->symbol_paths)
        for (unsigned i = 0; i < l->o.nsymbol_paths; i++) free(l->symbol_paths[i]);
    free(l->symbol_paths);
    free(l->db_path);
    free(l->output);
    free(l->error);
    pthread_mutex_destroy(&l->message_lock);
    free(l);
}
