/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the reader's files share (byte sources, the reader's state, its errors). */
#ifndef LIBETL_READER_H
#define LIBETL_READER_H
#ifndef ETL_BUILDING_LIBRARY
#error "reader/reader.h is private to libetl: include <etl.h>"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "etl.h"
#include "format/format.h"

/* ---------------------------------------------------------------- byte sources (source.c) */

/* Fill src to read fd with pread; close it on close when owned. 0, or -1 without memory. */
int etl_source_fd(etl_reader_source *src, int fd, int owned);
/* Fill src to read size bytes at data. 0, or -1 without memory. */
int etl_source_memory(etl_reader_source *src, const void *data, size_t size);
/* The n bytes at offset in place, when src is memory (etl_source_memory) that holds them;
   NULL otherwise (they are read with read_at). */
const uint8_t *etl_source_view(const etl_reader_source *src, size_t n, uint64_t offset);
/* 1 if the first bytes are a gzip member header. */
int etl_source_is_gzip(const uint8_t *magic, size_t n);
/* Replace src by the decompressed content of its gzip stream (in an unlinked temporary file).
   0 on success; 1 when the gzip data was damaged (what came before the damage is kept,
   the message is in err); -1 with a message in err (src still needs closing). */
int etl_source_gunzip(etl_reader_source *src, char *err, size_t errsize);

/* ---------------------------------------------------------------- limits */

/* Most memory the reader spends on buffers to read in time order (one per processor); a file
   that needs more (a damaged one, claiming thousands of processors) is read in file order. */
#define ETL_TIME_ORDER_MEMORY_LIMIT (1024ull * 1024 * 1024)
/* Most buffers the reader indexes at open (36 bytes each); a file with more is read by cursors
   that walk it, sharing a window of this many buffers walked last (40 bytes each). */
#ifndef ETL_READER_INDEX_LIMIT
#define ETL_READER_INDEX_LIMIT 16384u
#endif
/* The limit in force (tests lower it, or raise it to force the full index). */
extern uint32_t etl_reader_index_limit;
/* How the reader found its buffers: by cursors (streaming 1) or from the index of indexed
   buffers; the window's size and the most it held. For the tests. */
void etl_reader_index_stats(const etl_reader *r, int *streaming, uint32_t *indexed, uint32_t *window_cap,
                            uint32_t *window_peak);

/* ---------------------------------------------------------------- the reader's state */

/* One buffer of the file, as found by the index walk. */
struct buffer_entry {
    uint64_t offset;   /* file offset of the buffer header */
    int64_t sequence;  /* SequenceNumber (the header buffer sorts first) */
    uint32_t stored;   /* bytes of the buffer present in the file */
    uint32_t used;     /* logical used size (Offset), header included */
    uint32_t index;    /* position in the file, 0 = header buffer */
    uint16_t cpu;
    uint16_t flags;    /* BufferFlag */
};

/* A run of buffers read one after the other: one processor's (time order) or all (file order). */
struct stream {
    uint32_t *entries;   /* indexes into reader.buffers, in reading order */
    uint32_t count;
    uint32_t next;       /* next entry to load */
    uint32_t cap;        /* size of data */
    uint8_t *data;       /* room for the current buffer, decompressed, header included */
    const uint8_t *bytes; /* the current buffer: data, or where a memory source holds it */
    const struct buffer_entry *cur;
    uint32_t used;       /* valid bytes in bytes */
    uint32_t pos;        /* offset of the next record */
    uint32_t step;       /* size of the record last delivered, rounded */
    int64_t ts;          /* timestamp of the record at pos, for ordering */
    int64_t last_ts;     /* timestamp of the last record with one */
    uint32_t ordinal;    /* tie-break between streams */
    struct buffer_entry cur_entry; /* the current buffer's entry (cur points here) */
    /* Without the index (r->streaming): a cursor that finds its buffers by walking the file. */
    uint16_t cpu;        /* the processor whose buffers it takes */
    uint8_t any;         /* takes every buffer (file order) */
    uint8_t header;      /* delivers the header buffer first */
    uint8_t header_pending;
    uint64_t v, off;     /* position in the ring of data buffers (see ring_index) and where the walk to it starts */
    uint64_t v0, off0;   /* the same at the start */
    uint32_t left, total; /* data buffers still to deliver, and in all */
};

/* Per processor, from the open walk: is the file's order its SequenceNumber order? */
struct cpu_run {
    uint64_t start_offset; /* the buffer its time order starts with */
    int64_t first_seq, last_seq;
    uint32_t count, descents, start_index, max_used;
    uint16_t cpu;
};

/* One entry of the walk cache: a buffer, and where the walk goes on after it. */
struct walk_slot {
    struct buffer_entry e;
    uint64_t next;
};

struct live;

struct etl_reader {
    struct live *live;       /* a real-time stream (etl_reader_open_stream), or NULL */
    etl_reader_source src;
    char *name;
    etl_reader_options opt;
    etl_trace_info info;
    char *logger_name;
    char *log_file_name;
    etl_record_context rctx;
    struct buffer_entry *buffers;
    uint32_t nbuffers;
    uint32_t buffers_cap;
    struct stream *streams;
    uint32_t nstreams;
    uint32_t *entry_order;   /* storage for the streams' entries */
    struct stream **heap;    /* min-heap of streams by (ts, ordinal) */
    uint32_t heap_n;
    struct stream *last;     /* stream of the event last delivered */
    /* Without the index: the streams are cursors over the ring of data buffers, which share a
       window of the buffers walked last (cache[v % cache_cap] for v in [lo, hi)). */
    int streaming;
    int has_header;
    struct buffer_entry header;  /* the header buffer (offset 0) */
    uint32_t first_size;     /* BufferSize taken for the header buffer (0: its own) */
    uint64_t wrap_off;       /* where the walk to the first data buffer starts */
    uint32_t data0, ndata;   /* index of the first data buffer, and how many there are */
    struct walk_slot *cache;
    uint32_t cache_cap;
    uint32_t cache_peak;
    uint64_t lo, hi, hoff;   /* the window, and where the walk to hi starts */
    struct walk_slot priv;   /* a buffer walked to outside the window */
    struct cpu_run *runs;    /* per processor, by processor number */
    uint32_t nruns;
    uint32_t ring_start;     /* index of the data buffer with the lowest SequenceNumber */
    uint8_t *stream_memory;  /* one block holding every stream's buffer */
    uint8_t *scratch;        /* compressed bytes of one buffer */
    uint32_t scratch_cap;
    uint64_t file_size;
    int compressed_file;
    int pending_warn;
    int fatal;
    unsigned warnings;
    int64_t err_offset;
    char err[1024];
};

/* ---------------------------------------------------------------- errors and I/O (reader.c) */

/* The message on the handle, prefixed with the reader's name, and its file offset (-1: none). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_set_error(etl_reader *r, int64_t offset, const char *fmt, ...);
/* Damage found: recorded, counted and reported (on_damage); reading goes on. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_damage(etl_reader *r, int64_t offset, const char *fmt, ...);

/* Reads n bytes at offset; 0, or -1 (fatal, message set) on a read error or a short read.
   Inline: the buffers' loading and the walk call it for every buffer. */
static inline int etl_reader_read_exact(etl_reader *r, void *buf, size_t n, uint64_t offset)
{
    ssize_t k = r->src.read_at(r->src.ctx, buf, n, offset);

    if (k < 0) {
        etl_reader_set_error(r, (int64_t)offset, "read error at offset %llu: %s", (unsigned long long)offset,
                             strerror(errno));
        r->fatal = 1;
        return -1;
    }
    if ((size_t)k != n) {
        etl_reader_set_error(r, (int64_t)offset, "file shrank while reading: %zu of %zu bytes at offset %llu",
                             (size_t)k, n, (unsigned long long)offset);
        r->fatal = 1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- opening (reader.c) */

/* A reader over src with the options and its name (opt->name, else default_name); NULL
   without memory. */
etl_reader *etl_reader_new(const etl_reader_source *src, const etl_reader_options *opt, const char *default_name);
/* Parse the logfile header event at the start of the header buffer b (n bytes) into the trace
   info. 0, or -1 with the message set. */
int etl_reader_parse_logfile_header(etl_reader *r, const uint8_t *b, uint32_t n);

/* ---------------------------------------------------------------- the walk and the index (index.c) */

/* Walk the file, index its buffers (or, above etl_reader_index_limit, prepare cursors), report
   its damage. first_size: BufferSize taken for the header buffer (0: its own). 0, or -1. */
int etl_reader_index_buffers(etl_reader *r, uint32_t first_size);
/* The streams as cursors: one per processor in time order, one in file order. 0, or -1. */
int etl_reader_build_cursors(etl_reader *r);
/* The stream's next buffer: 1 with *e, 0 when it has none left, -1 on a fatal error. */
int etl_reader_stream_next_buffer(etl_reader *r, struct stream *s, struct buffer_entry *e);

/* ---------------------------------------------------------------- streams and their order (order.c) */

/* Build the streams (from the index, or cursors) and their buffers' memory. 0, or -1. */
int etl_reader_prepare_streams(etl_reader *r);
/* Position every stream on its first record. 0, or -1 on a fatal error. */
int etl_reader_streams_start(etl_reader *r);

/* ---------------------------------------------------------------- real-time streams (live.c) */

/* etl_reader_next of a real-time stream's reader. */
int etl_reader_live_next(etl_reader *r, etl_event *ev);
/* Frees the stream's state (NULL: nothing). */
void etl_reader_live_free(struct live *l);

/* The reader of a real-time stream on fd, whose "consume" request was sent (engine/control.c's
   etl_reader_open_session): the reader owns fd. With error, a reader holding only that message
   (fd unused). name names the reader unless opt does. */
int etl_reader_open_live(etl_reader **out, int fd, const etl_reader_options *opt, const char *name, const char *error);

#endif /* LIBETL_READER_H */
