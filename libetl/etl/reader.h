/* SPDX-License-Identifier: MIT */
/* libetl public API, the reader: ETL files, descriptors, memory and real-time streams, event by event. */
#ifndef LIBETL_ETL_READER_H
#define LIBETL_ETL_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* ssize_t */

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etl_reader etl_reader;

/* How events are delivered. */
enum etl_reader_order {
    ETL_ORDER_TIME = 0, /* default: each processor's buffers in SequenceNumber order, k-way
                           merged by timestamp; ties by processor, then position */
    ETL_ORDER_FILE = 1  /* buffer by buffer as stored, records in buffer order */
};

/* Options for opening; zero-initialise and set what you need. */
typedef struct etl_reader_options {
    int order;             /* enum etl_reader_order */
    const char *name;      /* name used in messages (default: the path, "<fd N>", "<memory>") */
    /* Called for every piece of damage found (while opening and while reading), in file
       order of discovery, with the file offset and the message (which names the file). */
    void (*on_damage)(void *arg, int64_t offset, const char *message);
    void *on_damage_arg;
} etl_reader_options;

/*
 * The one way of opening: a source that reads at any offset.
 *   read_at(ctx, buf, n, offset) reads up to n bytes at offset and returns how many it read
 *   (0 at end of file) or -1 on error (errno set);
 *   size(ctx) returns the size in bytes, or -1 if unknown;
 *   close(ctx) releases ctx (may be NULL).
 */
typedef struct etl_reader_source {
    void *ctx;
    ssize_t (*read_at)(void *ctx, void *buf, size_t n, uint64_t offset);
    int64_t (*size)(void *ctx);
    void (*close)(void *ctx);
} etl_reader_source;

/*
 * Open a reader. On success returns ETL_OK (or ETL_WARN when damage was found while indexing
 * the buffers; the message is in etl_reader_error()) and sets *out. On failure returns
 * ETL_FATAL and sets *out to a reader that holds only the error message (read it, then close
 * it), or to NULL when memory ran out. The reader takes ownership of src in every case.
 * Gzip-compressed input (.etl.gz) is recognised by its magic bytes and decompressed to an
 * unlinked temporary file, so memory stays bounded.
 */
ETL_API int etl_reader_open(etl_reader **out, const etl_reader_source *src, const etl_reader_options *opt);
/* Open a file by path (the file is read in place, never loaded whole). */
ETL_API int etl_reader_open_path(etl_reader **out, const char *path, const etl_reader_options *opt);
/* Open from a file descriptor that supports pread (a regular file); the caller keeps the fd. */
ETL_API int etl_reader_open_fd(etl_reader **out, int fd, const etl_reader_options *opt);
/* Open from memory; the caller keeps data alive and unchanged until etl_reader_close(). */
ETL_API int etl_reader_open_memory(etl_reader **out, const void *data, size_t size,
                                   const etl_reader_options *opt);
/*
 * Real-time consumers. etl_reader_open_session connects to the running session NAME of this
 * user (etlrecord start NAME --mode realtime) and consumes it; etl_reader_open_stream reads
 * the same stream from fd, a socket on which a session's etl_session_realtime_deliver answers
 * (the caller keeps fd). The buffers the session held for a consumer come first.
 * etl_reader_next waits for events and delivers them in time order within each batch of
 * buffers that arrive together, and batches in the order the session wrote its buffers. It
 * returns ETL_EOF once the session stopped and everything was delivered: etl_reader_info's
 * events_lost is then the session's EventsLost plus the events of the buffers no consumer got,
 * and buffers_lost their number (RealTimeBuffersLost). ETL_FATAL when the session went away
 * without stopping or the stream is damaged (the message gives the byte of the stream), or,
 * with errno EINTR, when a signal interrupted the wait (nothing was lost: call again to go
 * on). A stream cannot be rewound; an event's buffer_index and buffer_offset are within its
 * batch. etl_reader_open_session fails (ETL_FATAL, message in etl_reader_error) when no such
 * session runs, it is not in real-time mode, or it has a consumer already.
 */
ETL_API int etl_reader_open_session(etl_reader **out, const char *name, const etl_reader_options *opt);
ETL_API int etl_reader_open_stream(etl_reader **out, int fd, const etl_reader_options *opt);

/*
 * Deliver the next event into *ev: ETL_OK, ETL_WARN (the event is valid, and damage was
 * skipped before it: see etl_reader_error()), ETL_EOF, or ETL_FATAL (I/O error).
 * Every readable event is delivered: a damaged record or buffer is reported and skipped.
 */
ETL_API int etl_reader_next(etl_reader *r, etl_event *ev);

/* The trace info; valid until etl_reader_close(). Counts reflect the whole file from open. */
ETL_API const etl_trace_info *etl_reader_info(const etl_reader *r);

/* Absolute time (ns since 1970 UTC) of a raw timestamp of this trace. */
ETL_API int64_t etl_reader_time_ns(const etl_reader *r, int64_t ts);

/* The message of the last WARN/FAILED/FATAL, naming the file and the byte offset, or "" if
   none. Valid until the next call on r. */
ETL_API const char *etl_reader_error(const etl_reader *r);
/* The file offset the last message refers to, or -1. */
ETL_API int64_t etl_reader_error_offset(const etl_reader *r);
/* Number of damage reports so far (each WARN counts one). */
ETL_API unsigned etl_reader_warnings(const etl_reader *r);

/* Rewind to the first event (same order). */
ETL_API int etl_reader_rewind(etl_reader *r);

ETL_API void etl_reader_close(etl_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_READER_H */
