/* SPDX-License-Identifier: MIT */
/* libetl public API: loading traces into ClickHouse over its HTTP interface (included by etl.h). */
#ifndef LIBETL_ETL_CLICKHOUSE_H
#define LIBETL_ETL_CLICKHOUSE_H

#include "types.h"
#include "load.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The ClickHouse loader: each ETL file becomes one trace of a ClickHouse database, in tables
 * that mirror the SQLite loader's (doc/clickhouse.md), every row carrying the machine's name
 * and the trace's id (a UUID made from the trace's content, so that loading the same trace
 * again replaces it). The rows are the SQLite loader's (etl/load.h), made by its code but
 * encoded in RowBinary as they are made and streamed to the server while the trace is read,
 * each table's by an INSERT of its own (no database is written; memory is bounded whatever the
 * trace's size); the trace's row of `traces` is written last, once every other table is in:
 * the views queries read show a trace only once that row is in. Use:
 *
 *   etl_clickhouse_open(&c, "http://localhost:8123/", &options);
 *   etl_clickhouse_create_schema(c);            (once per server, idempotent)
 *   rc = etl_clickhouse_load(c, "a.etl");       (each trace whole or not at all)
 *   etl_clickhouse_close(c);
 */
typedef struct etl_clickhouse etl_clickhouse;

/* The version of the ClickHouse schema (etl_meta.schema_version). */
#define ETL_CLICKHOUSE_SCHEMA_VERSION 1

/* How far a load has come. */
typedef struct etl_clickhouse_progress {
    const char *path;      /* the input */
    int phase;             /* 0: reading the trace (done and total: bytes); 1: sending rows (rows) */
    uint64_t done, total;
    uint64_t events;       /* phase 0: events read so far */
    double seconds;        /* since the phase began */
    int final;             /* 1: the phase's last call */
} etl_clickhouse_progress;

typedef struct etl_clickhouse_options {
    const char *cluster;   /* NULL: one server; else the cluster (remote_servers) whose shards
                              hold the rows, sharded by machine (doc/clickhouse.md) */
    const char *database;  /* NULL: "etl" */
    const char *machine;   /* every trace's machine; NULL: the name the trace records (the
                              ComputerName of its SystemConfig/CPU event) */
    /* How traces are read (etl_sqlite_options): manifests, symbol_paths, no_symbols,
       no_payload; on_message gets the reading's messages and the loader's own (ETL_FATAL:
       the load of a trace failed, and the text says why); interrupted is polled while
       reading and sending; arg is passed to the callbacks. Its on_progress is not used. */
    etl_sqlite_options read;
    /* Called every few thousand events or rows, and once at the end of each phase. */
    void (*on_progress)(void *arg, const etl_clickhouse_progress *p);
} etl_clickhouse_options;

/*
 * A loader for the server at url (http://host:8123/, with user and password in the URL or its
 * query string as ClickHouse takes them). Nothing is sent yet. ETL_OK, or ETL_FATAL (bad
 * options, no memory: etl_clickhouse_error; *out is NULL only without memory).
 */
ETL_API int etl_clickhouse_open(etl_clickhouse **out, const char *url, const etl_clickhouse_options *options);
/*
 * Creates the database and whatever of the schema is missing on the server of the url (with a
 * cluster: that node's local tables, views and Distributed tables; run it on every node).
 * ETL_OK; ETL_FATAL when the server cannot be reached, refuses, or has the schema in another
 * version or for another cluster (nothing is changed then).
 */
ETL_API int etl_clickhouse_create_schema(etl_clickhouse *c);
/*
 * Loads one trace (.etl or .etl.gz). ETL_OK; ETL_WARN: loaded, and the trace had damaged parts
 * (messages name them; the lost table records them); ETL_FATAL: nothing of this load is
 * visible (a previous load of the same trace stays) and etl_clickhouse_error says why (the
 * input, the server's message, a shard down, no machine name). Rows of a failed load that did
 * reach a server stay invisible; with one server they are deleted at once (with a cluster, by
 * the next load of the trace on its shard, see doc/clickhouse.md).
 */
ETL_API int etl_clickhouse_load(etl_clickhouse *c, const char *path);
/* The id (UUID text) and machine of the trace last loaded (or attempted); "" if none. Valid
   until the next call on c. */
ETL_API const char *etl_clickhouse_trace_id(const etl_clickhouse *c);
ETL_API const char *etl_clickhouse_machine(const etl_clickhouse *c);
/* The last error ("http://...: Code: 60, ...: Table etl.events doesn't exist"); "" if none. */
ETL_API const char *etl_clickhouse_error(const etl_clickhouse *c);
/* The schema create_schema runs, as SQL text (malloc'd; free() it), or NULL without memory. */
ETL_API char *etl_clickhouse_schema(const etl_clickhouse *c);
/* Frees c (NULL is allowed). */
ETL_API void etl_clickhouse_close(etl_clickhouse *c);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_CLICKHOUSE_H */
