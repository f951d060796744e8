/* SPDX-License-Identifier: MIT */
/* libetl public API: loading traces into an SQLite database (included by etl.h). */
#ifndef LIBETL_ETL_LOAD_H
#define LIBETL_ETL_LOAD_H

#include "types.h"
#include "reader.h"
#include "kernel.h"
#include "merge.h"
#include "symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The SQLite loader: ETL files into one database in the schema of doc/etl2sqlite-schema.md
 * (what etl2sqlite writes): one row per event with its fields decoded (etl/decode.h) as JSON,
 * a view per event name with a column per field, the kernel classes decoded into their own
 * tables, every input on one timeline (as etl_merge places them). Use:
 *
 *   etl_sqlite_loader_open(&l, "out.db", &options);
 *   etl_sqlite_loader_add(l, "a.etl"); etl_sqlite_loader_add(l, "b.etl.gz");
 *   rc = etl_sqlite_loader_commit(l);
 *   etl_sqlite_loader_close(l);
 *
 * A new (or replaced) database is written under a temporary name beside it and renamed when
 * complete; an appended one gets the inputs in one transaction, undone on failure. The load
 * runs in two threads (the caller's and one of its own).
 */
typedef struct etl_sqlite_loader etl_sqlite_loader;

/* The version of the schema (meta.schema_version, PRAGMA user_version). */
#define ETL_SQLITE_SCHEMA_VERSION 5

/* The schema: its tables, indexes and views as SQL text, exactly as `etl2sqlite --schema`
   prints it. Static storage. */
ETL_API const char *etl_sqlite_schema(void);

/* Something the load has to tell a person. */
typedef struct etl_sqlite_message {
    int status;            /* ETL_OK: what a phase took (only with the verbose option);
                              ETL_WARN: a note, or damage in an input (what is readable is loaded);
                              ETL_FAILED: an input could not be read or read on;
                              ETL_FATAL: the load stops (the same text is then etl_sqlite_loader_error) */
    int damage;            /* ETL_WARN: 1 when data of an input was damaged (a lost row records it) */
    const char *path;      /* the input it is about, or NULL */
    int64_t offset;        /* file offset in that input, or -1 */
    const char *text;      /* the whole message, path and offset included: "a.etl: offset 4096: ..." */
} etl_sqlite_message;

/* How far the load has come (the events, in time order). */
typedef struct etl_sqlite_progress {
    uint64_t events;       /* events loaded so far */
    uint64_t bytes_done;   /* of the inputs' bytes: the furthest buffer reached in each, summed */
    uint64_t bytes_total;  /* the inputs' sizes (decompressed), summed */
    double seconds;        /* since the events began to load */
    int final;             /* 1: the last call, every event loaded */
} etl_sqlite_progress;

typedef struct etl_sqlite_options {
    int append;            /* add to an existing database (one the loader wrote, in this schema) */
    int replace;           /* replace an existing database (without append or replace, one is refused) */
    int no_payload;        /* leave events.payload NULL */
    int keep_partial;      /* an input that fails mid-way: keep what was loaded, commit returns ETL_FAILED */
    int verbose;           /* ETL_OK messages: what each phase of the load took */
    /* The events' fields are decoded with the manifests installed with libetl and those of
       ETL_MANIFEST_PATH (etl_decoder_open), then these: instrumentation manifests or directories
       of them (etl_decoder_add_manifest), nmanifests of them, read by etl_sqlite_loader_open. */
    const char *const *manifests;
    unsigned nmanifests;
    /* Every message, in the order they arise, from either of the load's threads (never two
       at once); NULL: none (the fatal one is still etl_sqlite_loader_error). */
    void (*on_message)(void *arg, const etl_sqlite_message *msg);
    /* Called every few thousand events while the events load, and once at the end. */
    void (*on_progress)(void *arg, const etl_sqlite_progress *p);
    /* Polled as often (and once when the threads are done): nonzero stops the load, which then
       writes nothing ("interrupted; nothing was written"). */
    int (*interrupted)(void *arg);
    void *arg;             /* passed to the three above */
    /* Symbols (etl/symbols.h): the function at each sample's and stack frame's address, with
       its source line where DWARF (or a PDB) gives it: the functions table and the function
       columns of samples and stack_frames, NULL where no symbol covers an address. Looked up
       in the symbol directories symbol_paths (nsymbol_paths of them, searched in order; copied
       by etl_sqlite_loader_add), then in the system's places (etl_symbolizer_options). */
    const char *const *symbol_paths;
    unsigned nsymbol_paths;
    int no_symbols;        /* leave the function columns NULL and the functions table empty
                              (no symbol lookups: the load costs what it did without them) */
} etl_sqlite_options;

/*
 * A loader for the database at path. Nothing is written yet; the field decoder's manifests are
 * read. Returns ETL_OK, or ETL_FATAL: the database exists and neither append nor replace was
 * asked, append was asked and there is no database, one of options->manifests cannot be read
 * ("FILE:LINE: what is wrong"), or memory ran out (etl_sqlite_loader_error says which; *out is
 * NULL only without memory). A default manifest that does not load is a warning (on_message,
 * ETL_WARN). options may be NULL (all zero).
 */
ETL_API int etl_sqlite_loader_open(etl_sqlite_loader **out, const char *path, const etl_sqlite_options *options);
/*
 * Adds an input (.etl or .etl.gz; path is copied, and is the traces.path of its row). The file
 * is opened now: ETL_OK, or ETL_FAILED when it cannot be read (the message says why; the
 * loader goes on without it), or ETL_FATAL after commit or without memory.
 */
ETL_API int etl_sqlite_loader_add(etl_sqlite_loader *l, const char *path);
/* The inputs added that could be opened. */
ETL_API unsigned etl_sqlite_loader_inputs(const etl_sqlite_loader *l);
/*
 * Loads every input that could be opened and completes the database (once). Returns ETL_OK;
 * ETL_WARN (loaded, and an input had damaged parts: messages name them, the lost table records
 * them); ETL_FAILED (keep_partial: an input could not be read on, what was loaded is kept); or
 * ETL_FATAL: nothing was written (a new database is not left behind, an appended one is as it
 * was) and etl_sqlite_loader_error says why.
 */
ETL_API int etl_sqlite_loader_commit(etl_sqlite_loader *l);
/* The first fatal error, else the last failure (an input that could not be read), without a
   leading program name ("out.db: insert: disk I/O error"); "" if none. Valid until the next
   call on l. */
ETL_API const char *etl_sqlite_loader_error(const etl_sqlite_loader *l);
/* Frees l (NULL is allowed); a load not committed leaves nothing. */
ETL_API void etl_sqlite_loader_close(etl_sqlite_loader *l);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_LOAD_H */
