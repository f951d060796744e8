/* SPDX-License-Identifier: MIT */
/* The ETL reader: indexes the buffers, decompresses them, and delivers events in time or file order. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/format.h"
#include "format/format.h"
#include "reader/source.h"
#include "format/format.h"

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
    uint8_t *data;       /* the current buffer, decompressed, header included */
    const struct buffer_entry *cur;
    uint32_t used;       /* valid bytes in data */
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
    etl_source src;
    char *name;
    etl_open_options opt;
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

/* ---------------------------------------------------------------- errors */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_error(etl_reader *r, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    int n;

    n = snprintf(r->err, sizeof r->err, "%s: ", r->name ? r->name : "<etl>");
    if (n < 0 || (size_t)n >= sizeof r->err) n = 0;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    r->err_offset = offset;
}

/* Damage found: recorded, counted and reported; reading goes on. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void damage(etl_reader *r, int64_t offset, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    set_error(r, offset, "%s", msg);
    r->warnings++;
    r->pending_warn = 1;
    if (r->opt.on_damage) r->opt.on_damage(r->opt.on_damage_arg, offset, r->err);
}

const char *etl_reader_error(const etl_reader *r) { return r ? r->err : "out of memory"; }
int64_t etl_reader_error_offset(const etl_reader *r) { return r ? r->err_offset : -1; }
unsigned etl_reader_warnings(const etl_reader *r) { return r ? r->warnings : 0; }
const etl_trace_info *etl_reader_info(const etl_reader *r) { return &r->info; }
int64_t etl_reader_time_ns(const etl_reader *r, int64_t ts) { return etl_clock_time_ns(&r->info.clock, ts); }

/* ---------------------------------------------------------------- I/O */

static int read_exact(etl_reader *r, void *buf, size_t n, uint64_t offset)
{
    ssize_t k = r->src.read_at(r->src.ctx, buf, n, offset);

    if (k < 0) {
        set_error(r, (int64_t)offset, "read error at offset %llu: %s", (unsigned long long)offset, strerror(errno));
        r->fatal = 1;
        return -1;
    }
    if ((size_t)k != n) {
        set_error(r, (int64_t)offset, "file shrank while reading: %zu of %zu bytes at offset %llu",
                  (size_t)k, n, (unsigned long long)offset);
        r->fatal = 1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- logfile header */

static char *dup_utf16(const uint8_t *p, size_t units, size_t *consumed)
{
    size_t cap = units * 3 + 1;
    char *s = malloc(cap);

    if (!s) return NULL;
    *consumed = etl_utf16_to_utf8(p, units, s, cap);
    return s;
}

/* Parse the logfile header event at the start of buffer 0 (etl-format.md section 3). */
static int parse_logfile_header(etl_reader *r, const uint8_t *b, uint32_t n)
{
    etl_trace_info *in = &r->info;
    uint32_t m, size, psize, tlh;
    const uint8_t *t;
    unsigned type;
    size_t consumed, units;

    if (n < ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE) {
        set_error(r, ETL_BUFFER_HEADER_SIZE, "not an ETL file: no logfile header event at offset 72");
        return -1;
    }
    m = etl_le32(b + ETL_BUFFER_HEADER_SIZE);
    type = (m >> 16) & 0xFF;
    if ((m >> 24) != 0xC0 || (type != ETL_HT_SYSTEM32 && type != ETL_HT_SYSTEM64) ||
        etl_le16(b + ETL_BUFFER_HEADER_SIZE + 6) != 0) {
        set_error(r, ETL_BUFFER_HEADER_SIZE,
                  "not an ETL file: the record at offset 72 is not a logfile header event (first dword 0x%08x)",
                  (unsigned)m);
        return -1;
    }
    psize = type == ETL_HT_SYSTEM64 ? 8 : 4;
    tlh = ETL_TLH_SIZE(psize);
    size = etl_le16(b + ETL_BUFFER_HEADER_SIZE + 4);
    if (size < ETL_SYSTEM_HEADER_SIZE + tlh || ETL_BUFFER_HEADER_SIZE + size > n) {
        set_error(r, ETL_BUFFER_HEADER_SIZE,
                  "logfile header event at offset 72 has size %u; a %u-bit TRACE_LOGFILE_HEADER needs %u bytes "
                  "and the buffer holds %u",
                  size, psize * 8, ETL_SYSTEM_HEADER_SIZE + tlh, n - ETL_BUFFER_HEADER_SIZE);
        return -1;
    }
    t = b + ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE;
    in->buffer_size = etl_le32(t + ETL_TLH_BUFFER_SIZE);
    in->os_major = t[ETL_TLH_VERSION];
    in->os_minor = t[ETL_TLH_VERSION + 1];
    in->layout_major = t[ETL_TLH_VERSION + 2];
    in->layout_minor = t[ETL_TLH_VERSION + 3];
    in->os_build = etl_le32(t + ETL_TLH_PROVIDER_VERSION);
    in->number_of_processors = etl_le32(t + ETL_TLH_NUMBER_OF_PROCESSORS);
    in->end_time = etl_le64s(t + ETL_TLH_END_TIME);
    in->timer_resolution = etl_le32(t + ETL_TLH_TIMER_RESOLUTION);
    in->maximum_file_size = etl_le32(t + ETL_TLH_MAXIMUM_FILE_SIZE);
    in->log_file_mode = etl_le32(t + ETL_TLH_LOG_FILE_MODE);
    in->buffers_written = etl_le32(t + ETL_TLH_BUFFERS_WRITTEN);
    in->start_buffers = etl_le32(t + ETL_TLH_START_BUFFERS);
    in->pointer_size = etl_le32(t + ETL_TLH_POINTER_SIZE);
    in->events_lost = etl_le32(t + ETL_TLH_EVENTS_LOST);
    in->clock.cpu_speed_mhz = etl_le32(t + ETL_TLH_CPU_SPEED);
    in->timezone_bias = (int32_t)etl_le32(t + ETL_TLH_TIME_ZONE(psize));
    in->boot_time = etl_le64s(t + ETL_TLH_BOOT_TIME(psize));
    in->clock.perf_freq = etl_le64s(t + ETL_TLH_PERF_FREQ(psize));
    in->clock.start_time = etl_le64s(t + ETL_TLH_START_TIME(psize));
    in->clock.type = (int)etl_le32(t + ETL_TLH_RESERVED_FLAGS(psize));
    in->buffers_lost = etl_le32(t + ETL_TLH_BUFFERS_LOST(psize));
    in->clock.start_timestamp = etl_le64s(b + ETL_BUFFER_HEADER_SIZE + 0x10);
    if (in->pointer_size != 4 && in->pointer_size != 8) in->pointer_size = psize;

    /* The session name and the log file name follow, each NUL-terminated UTF-16. */
    units = (size - ETL_SYSTEM_HEADER_SIZE - tlh) / 2;
    r->logger_name = dup_utf16(t + tlh, units, &consumed);
    if (!r->logger_name) return -1;
    r->log_file_name = dup_utf16(t + tlh + 2 * consumed, units - consumed, &consumed);
    if (!r->log_file_name) return -1;
    in->logger_name = r->logger_name;
    in->log_file_name = r->log_file_name;

    r->rctx.old_instance_header = in->layout_major < 1 || (in->layout_major == 1 && in->layout_minor < 1);
    r->compressed_file = (in->log_file_mode & ETL_MODE_COMPRESSED) != 0;
    return 0;
}

/* ---------------------------------------------------------------- index walk */

/* Why a buffer header cannot be a buffer of this file, or NULL if it can. */
static const char *buffer_header_problem(const etl_reader *r, const etl_buffer_header *bh, int first)
{
    uint32_t logical = r->info.buffer_size;

    if (bh->buffer_size < ETL_BUFFER_HEADER_SIZE) return "BufferSize is smaller than a buffer header";
    if (bh->buffer_type >= ETL_BUFFER_TYPE_MAXIMUM) return "BufferType is out of range";
    if (bh->offset < ETL_BUFFER_HEADER_SIZE) return "Offset (used size) is smaller than a buffer header";
    if (bh->buffer_flag & ETL_BUFFER_FLAG_COMPRESSED) {
        if (first) return "the header buffer is compressed";
        if (bh->offset > logical) return "Offset (used size) exceeds the logfile header's BufferSize";
        if (bh->buffer_size - ETL_BUFFER_HEADER_SIZE > etl_xpress_compress_bound(logical - ETL_BUFFER_HEADER_SIZE))
            return "BufferSize is larger than any compressed buffer can be";
        /* Without COMPRESSED_MODE every buffer has the logical size (etl-format.md section
           1.1), so that a damaged header cannot lead the walk off the buffers' grid. */
        if (!r->compressed_file && bh->buffer_size != logical)
            return "BufferSize differs from the logfile header's BufferSize (the file is not in compressed mode)";
        return NULL;
    }
    if (bh->offset > bh->buffer_size) return "Offset (used size) exceeds BufferSize";
    if (first) return bh->buffer_size > logical ? "BufferSize exceeds the logfile header's BufferSize" : NULL;
    if (bh->buffer_size != logical) return "BufferSize differs from the logfile header's BufferSize";
    return NULL;
}

static int add_buffer(etl_reader *r, const struct buffer_entry *e)
{
    if (r->nbuffers == r->buffers_cap) {
        uint32_t cap = r->buffers_cap ? r->buffers_cap * 2 : 64;
        struct buffer_entry *b = realloc(r->buffers, cap * sizeof *b);
        if (!b) {
            set_error(r, -1, "out of memory");
            return -1;
        }
        r->buffers = b;
        r->buffers_cap = cap;
    }
    r->buffers[r->nbuffers++] = *e;
    return 0;
}

/*
 * After a damaged buffer header at off, find where the next good buffer starts: uncompressed
 * buffers sit at multiples of BufferSize; compressed ones anywhere, so every byte is tried.
 * Returns the offset, or the file size when no buffer follows.
 */
static uint64_t resync(etl_reader *r, uint64_t off, int *io_error)
{
    enum { WINDOW = 1 << 20 };
    uint8_t hdr[ETL_BUFFER_HEADER_SIZE];
    etl_buffer_header bh;
    uint64_t size = r->file_size;

    if (!r->compressed_file) {
        uint64_t bs = r->info.buffer_size;
        for (uint64_t c = (off / bs + 1) * bs; c + ETL_BUFFER_HEADER_SIZE <= size; c += bs) {
            if (read_exact(r, hdr, sizeof hdr, c) != 0) { *io_error = 1; return size; }
            etl_buffer_header_read(hdr, &bh);
            if (!buffer_header_problem(r, &bh, 0)) return c;
        }
        return size;
    }
    /* The next buffer is usually near: the window grows from 4 KiB, so that a file with many
       damaged buffers is not read a megabyte per damage. */
    uint8_t *win = NULL;
    size_t step = 4096, cap = 0;
    uint64_t base = off + 1;
    while (base + ETL_BUFFER_HEADER_SIZE <= size) {
        size_t n = (size_t)(size - base < step + ETL_BUFFER_HEADER_SIZE ? size - base : step + ETL_BUFFER_HEADER_SIZE);
        if (n > cap) {
            uint8_t *w = realloc(win, n);
            if (!w) { free(win); set_error(r, -1, "out of memory"); r->fatal = 1; *io_error = 1; return size; }
            win = w;
            cap = n;
        }
        if (read_exact(r, win, n, base) != 0) { free(win); *io_error = 1; return size; }
        for (size_t i = 0; i + ETL_BUFFER_HEADER_SIZE <= n && i < step; i++) {
            const uint8_t *h = win + i;
            /* Cheap filter first: a compressed data buffer of type GENERIC. */
            if (!(etl_le16(h + ETL_BH_BUFFER_FLAG) & ETL_BUFFER_FLAG_COMPRESSED) || h[ETL_BH_BUFFER_TYPE] != 0 ||
                h[ETL_BH_BUFFER_TYPE + 1] != 0)
                continue;
            etl_buffer_header_read(h, &bh);
            /* SavedOffset = Offset in compressed buffers (etl-format.md section 7): a check
               that a header seen at a shifted position, across a damaged one, fails. */
            if (!buffer_header_problem(r, &bh, 0) && bh.sequence_number > 0 && bh.saved_offset == bh.offset) {
                free(win);
                return base + i;
            }
        }
        base += step;
        if (step < WINDOW) step *= 2;
    }
    free(win);
    return size;
}

static int is_fill(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

/* 1 if every byte from off to the end of the file is 0xFF fill, 0 if not, -1 on a read error. */
static int tail_is_fill(etl_reader *r, uint64_t off)
{
    uint8_t chunk[4096];

    while (off < r->file_size) {
        size_t n = r->file_size - off < sizeof chunk ? (size_t)(r->file_size - off) : sizeof chunk;
        if (read_exact(r, chunk, n, off) != 0) return -1;
        if (!is_fill(chunk, n, 0xFF)) return 0;
        off += n;
    }
    return 1;
}

/* 1 if a buffer header that can belong to this file starts at pos (read into *bh), else 0. */
static int buffer_header_at(etl_reader *r, uint64_t pos, etl_buffer_header *bh, int *io_error)
{
    uint8_t hdr[ETL_BUFFER_HEADER_SIZE];

    if (pos + ETL_BUFFER_HEADER_SIZE > r->file_size) return 0;
    if (read_exact(r, hdr, sizeof hdr, pos) != 0) {
        *io_error = 1;
        return 0;
    }
    etl_buffer_header_read(hdr, bh);
    return buffer_header_problem(r, bh, 0) == NULL;
}

/* 1 if the compressed bytes of the buffer at off, taken to end at end, decompress to exactly its
   used size; 0 if not; -1 on a read error or without memory. */
static int stream_ends_at(etl_reader *r, uint64_t off, uint32_t used, uint64_t end)
{
    size_t in_len = (size_t)(end - off - ETL_BUFFER_HEADER_SIZE), out_len = 0, err_pos = 0;
    uint8_t *in = malloc(in_len ? in_len : 1), *out = malloc(used - ETL_BUFFER_HEADER_SIZE + 1u);
    int rc = -1;

    if (!in || !out) set_error(r, -1, "out of memory");
    else if (read_exact(r, in, in_len, off + ETL_BUFFER_HEADER_SIZE) == 0)
        rc = etl_xpress_decompress(in, in_len, out, used - ETL_BUFFER_HEADER_SIZE, &out_len, &err_pos) ==
                 ETL_XPRESS_OK && out_len == used - ETL_BUFFER_HEADER_SIZE;
    free(in);
    free(out);
    return rc;
}

/*
 * In a compressed file BufferSize is all that leads from one buffer to the next. When it leads
 * to bytes that are no buffer header, or to the end of the file or beyond (so that a damaged
 * BufferSize can swallow every buffer after it), the first buffer found among this one's bytes
 * ends it. Compressed bytes, or a header seen a byte off across a damaged one, can look like a
 * header by chance: only one is taken where this buffer's stream decompresses to exactly its
 * Offset, or that leads exactly to another buffer or to the end of the file. Returns the size
 * to take.
 */
static uint32_t compressed_extent(etl_reader *r, uint64_t off, const etl_buffer_header *this_bh, int *io_error)
{
    enum { MAX_TRIES = 8 }; /* decompressions: a hostile file may hold many look-alikes */
    uint64_t next = off + this_bh->buffer_size, size = r->file_size, end = next < size ? next : size, found;
    etl_buffer_header bh;
    int tries = 0;

    if (next < size && (buffer_header_at(r, next, &bh, io_error) || *io_error)) return this_bh->buffer_size;
    /* a buffer holds at least its header */
    for (found = resync(r, off + ETL_BUFFER_HEADER_SIZE - 1, io_error); !*io_error && found < end;
         found = resync(r, found, io_error)) {
        uint64_t after;
        if (!buffer_header_at(r, found, &bh, io_error)) continue;
        if ((this_bh->buffer_flag & ETL_BUFFER_FLAG_COMPRESSED) && tries < MAX_TRIES) {
            int fits = stream_ends_at(r, off, this_bh->offset, found);
            tries++;
            if (fits < 0) {
                *io_error = 1;
                break;
            }
            if (fits) return (uint32_t)(found - off);
        }
        /* to the end of the file, into a header cut short there, or to another buffer */
        after = found + bh.buffer_size;
        if (after == size || (after < size && after + ETL_BUFFER_HEADER_SIZE > size) ||
            buffer_header_at(r, after, &bh, io_error))
            return *io_error ? this_bh->buffer_size : (uint32_t)(found - off);
    }
    return this_bh->buffer_size;
}

/*
 * One step of the buffer walk: the buffer at off, or past damage the next one found. Fills *e
 * (its index is index) and *next (where the walk goes on) and returns 1; returns 0 at the end
 * of the file and -1 on an I/O error. The open walk reports the damage it crosses and counts
 * it (quiet 0); the readers' walks, which cross the same damage again, are quiet.
 */
static int walk_next(etl_reader *r, uint64_t off, uint32_t first_size, uint32_t index, int quiet,
                     struct buffer_entry *e, uint64_t *next)
{
    uint8_t hdr[ETL_BUFFER_HEADER_SIZE];
    uint64_t size = r->file_size;
    int io_error = 0;

    while (off < size) {
        etl_buffer_header bh;
        const char *why;

        if (size - off < ETL_BUFFER_HEADER_SIZE) {
            size_t n = (size_t)(size - off);
            if (read_exact(r, hdr, n, off) != 0) return -1;
            /* Only 0xFF is fill: zeros are as likely the start of a buffer header cut short
               (a BufferSize of 65536 begins with two zero bytes). */
            if (!quiet && !is_fill(hdr, n, 0xFF))
                damage(r, (int64_t)off, "%zu bytes at offset %llu after the last buffer are not a buffer (ignored)",
                       n, (unsigned long long)off);
            return 0;
        }
        if (read_exact(r, hdr, sizeof hdr, off) != 0) return -1;
        etl_buffer_header_read(hdr, &bh);
        if (off == 0 && first_size) bh.buffer_size = first_size;
        why = buffer_header_problem(r, &bh, off == 0);
        if (why && is_fill(hdr, sizeof hdr, 0xFF)) {
            int fill = tail_is_fill(r, off);
            if (fill < 0) return -1;
            if (fill) return 0; /* 0xFF fill up to the end of the file: nothing is lost */
        }
        if (why) {
            uint64_t nx = resync(r, off, &io_error);
            if (io_error) return -1;
            if (quiet)
                ;
            else if (is_fill(hdr, sizeof hdr, 0) || is_fill(hdr, sizeof hdr, 0xFF))
                damage(r, (int64_t)off, "no buffer header at offset %llu (%s-filled); skipped %llu bytes to %s",
                       (unsigned long long)off, hdr[0] ? "0xFF" : "zero", (unsigned long long)(nx - off),
                       nx < size ? "the next buffer" : "the end of the file");
            else
                damage(r, (int64_t)off, "damaged buffer header at offset %llu: %s (BufferSize %u, Offset %u); "
                       "skipped %llu bytes to %s", (unsigned long long)off, why, bh.buffer_size, bh.offset,
                       (unsigned long long)(nx - off), nx < size ? "the next buffer" : "the end of the file");
            if (!quiet) r->info.damaged_buffers++;
            off = nx;
            continue;
        }
        if (r->compressed_file) {
            uint32_t extent = compressed_extent(r, off, &bh, &io_error);
            if (io_error) return -1;
            if (extent != bh.buffer_size) {
                if (!quiet) {
                    damage(r, (int64_t)off, "buffer %u at offset %llu: its BufferSize %u leads to no buffer; the "
                           "next buffer starts at offset %llu", index, (unsigned long long)off, bh.buffer_size,
                           (unsigned long long)(off + extent));
                    r->info.damaged_buffers++;
                }
                bh.buffer_size = extent;
            }
        }
        memset(e, 0, sizeof *e);
        e->offset = off;
        e->sequence = off == 0 ? INT64_MIN : bh.sequence_number;
        e->stored = bh.buffer_size;
        e->used = bh.offset;
        e->index = index;
        e->cpu = off == 0 ? 0 : bh.processor;
        e->flags = bh.buffer_flag;
        if (bh.buffer_size > size - off) {
            e->stored = (uint32_t)(size - off);
            if (!quiet) {
                damage(r, (int64_t)off, "buffer %u at offset %llu is truncated: %u of its %u bytes are in the file",
                       e->index, (unsigned long long)off, e->stored, bh.buffer_size);
                r->info.damaged_buffers++;
            }
            if (!(e->flags & ETL_BUFFER_FLAG_COMPRESSED) && e->used > e->stored) e->used = e->stored;
        }
        if (!quiet && (e->flags & ETL_BUFFER_FLAG_COMPRESSED)) r->info.compressed_buffers++;
        *next = off + bh.buffer_size;
        return 1;
    }
    return 0;
}

/* Most buffers whose entries the reader keeps (the full index); a file with more is read by
   cursors sharing a window of this many walked buffers. Tests lower it. */
uint32_t etl_reader_index_limit = ETL_READER_INDEX_LIMIT;

static struct cpu_run *cpu_run_of(etl_reader *r, uint32_t **slot, struct cpu_run **runs, uint32_t *nruns,
                                  uint16_t cpu)
{
    if (!*slot) {
        *slot = calloc(65536, sizeof **slot);
        if (!*slot) return NULL;
    }
    if (!(*slot)[cpu]) {
        struct cpu_run *p = *runs;
        if ((*nruns & (*nruns - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to the next power of two */
            p = realloc(*runs, (*nruns ? 2 * *nruns : 1) * sizeof *p);
            if (!p) return NULL;
        }
        *runs = p;
        memset(&p[*nruns], 0, sizeof *p);
        p[*nruns].cpu = cpu;
        (*slot)[cpu] = ++*nruns;
    }
    (void)r;
    return &(*runs)[(*slot)[cpu] - 1];
}

static int cmp_cpu_run(const void *a, const void *b)
{
    const struct cpu_run *x = a, *y = b;

    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/*
 * Walk the file buffer by buffer: check it, count its buffers and report its damage. The
 * entries are kept while there are at most etl_reader_index_limit of them (the full index);
 * with more, each processor's run is checked to be in SequenceNumber order in the file (up to
 * one wrap, as in a circular file), so that cursors walking the file deliver the buffers in
 * the order the index would have; a file that is not is indexed whole after all.
 */
static int index_buffers(etl_reader *r, uint32_t first_size)
{
    uint64_t off = 0, next;
    uint32_t *slot = NULL, nruns = 0, limit = etl_reader_index_limit ? etl_reader_index_limit : 1, count = 0;
    struct cpu_run *runs = NULL;
    int full = 1, rc;
    int64_t min_seq = INT64_MAX;
    uint32_t min_index = 0;

    r->first_size = first_size;
    r->wrap_off = 0;
    for (;;) {
        struct buffer_entry e;
        struct cpu_run *run;

        rc = walk_next(r, off, first_size, count, 0, &e, &next);
        if (rc < 0) goto fail;
        if (rc == 0) break;
        if (e.offset == 0) {
            r->has_header = 1;
            r->header = e;
            r->wrap_off = next;
            run = cpu_run_of(r, &slot, &runs, &nruns, 0);
            if (!run) goto oom;
            if (e.used > run->max_used) run->max_used = e.used;
        } else {
            run = cpu_run_of(r, &slot, &runs, &nruns, e.cpu);
            if (!run) goto oom;
            if (e.used > run->max_used) run->max_used = e.used;
            if (run->count == 0) {
                run->first_seq = e.sequence;
                run->start_index = e.index;
                run->start_offset = e.offset;
            } else if (e.sequence < run->last_seq) {
                run->descents++;
                run->start_index = e.index;
                run->start_offset = e.offset;
            }
            run->last_seq = e.sequence;
            run->count++;
            if (e.sequence < min_seq) {
                min_seq = e.sequence;
                min_index = e.index;
            }
        }
        if (full && count < limit) {
            if (add_buffer(r, &e) != 0) goto fail;
        } else if (full) {
            full = 0;
            free(r->buffers);
            r->buffers = NULL;
            r->buffers_cap = 0;
        }
        count++;
        off = next;
    }
    free(slot);
    slot = NULL;
    r->nbuffers = count;
    r->info.buffers = count;
    r->data0 = r->has_header ? 1 : 0;
    r->ndata = count - r->data0;
    if (full) {
        free(runs);
        return 0;
    }
    if (r->opt.order != ETL_ORDER_FILE) {
        for (uint32_t i = 0; i < nruns && full == 0; i++) {
            const struct cpu_run *c = &runs[i];
            if (c->count && !(c->descents == 0 || (c->descents == 1 && c->last_seq < c->first_seq))) full = 1;
        }
    }
    if (full) {
        /* Out of order: index every buffer, as a file with few buffers is. */
        free(runs);
        off = 0;
        r->nbuffers = 0;
        for (;;) {
            struct buffer_entry e;
            rc = walk_next(r, off, first_size, r->nbuffers, 1, &e, &next);
            if (rc < 0) return -1;
            if (rc == 0) break;
            if (add_buffer(r, &e) != 0) return -1;
            off = next;
        }
        if (r->nbuffers != count) {
            set_error(r, -1, "the file changed while being read: %u buffers, then %u", count, r->nbuffers);
            r->fatal = 1;
            return -1;
        }
        return 0;
    }
    qsort(runs, nruns, sizeof *runs, cmp_cpu_run);
    r->streaming = 1;
    r->runs = runs;
    r->nruns = nruns;
    /* The ring of data buffers starts at the one with the lowest SequenceNumber (the oldest
       of a circular file): every cursor starts within one turn of it. */
    r->ring_start = min_index;
    return 0;
oom:
    set_error(r, -1, "out of memory");
fail:
    free(slot);
    free(runs);
    return -1;
}


/* ---------------------------------------------------------------- cursors */

/* The file index of ring position v: the data buffers in file order, then again (a circular
   file's cursors start within one turn of ring_start and go round once). */
static inline uint32_t ring_index(const etl_reader *r, uint64_t v)
{
    return r->data0 + (uint32_t)((v - r->data0) % r->ndata);
}

/* Where the walk goes on after the buffer e: after the last one, round to the first. */
static inline uint64_t walk_on(const etl_reader *r, const struct walk_slot *w)
{
    return w->e.index == r->data0 + r->ndata - 1 ? r->wrap_off : w->next;
}

static int walk_lost(etl_reader *r, int rc, uint64_t v)
{
    if (rc == 0) {
        set_error(r, -1, "the file changed while being read: buffer %u is no longer found", ring_index(r, v));
        r->fatal = 1;
    }
    return -1;
}

/*
 * The buffer at the stream's ring position: from the window when it holds it; walked to and
 * added when the window ends there (making room by dropping what every cursor has passed);
 * else (a cursor far behind or ahead of the others) walked to without the window.
 */
static const struct walk_slot *ring_get(etl_reader *r, struct stream *s)
{
    uint64_t v = s->v;
    uint32_t cap = r->cache_cap;
    struct walk_slot *w;
    int rc;

    if (v >= r->lo && v < r->hi) return &r->cache[v % cap];
    if (r->lo == r->hi) {
        r->lo = r->hi = v;
        r->hoff = s->off;
    }
    if (v == r->hi && r->hi - r->lo == cap) {
        uint64_t m = UINT64_MAX;
        for (uint32_t i = 0; i < r->nstreams; i++) {
            const struct stream *o = &r->streams[i];
            if ((o->left || o->header_pending) && o->v < m) m = o->v;
        }
        if (m > r->lo) r->lo = m < r->hi ? m : r->hi;
    }
    if (v == r->hi && r->hi - r->lo < cap) {
        w = &r->cache[v % cap];
        rc = walk_next(r, r->hoff, r->first_size, ring_index(r, v), 1, &w->e, &w->next);
        if (rc <= 0) return walk_lost(r, rc, v), NULL;
        r->hi++;
        r->hoff = walk_on(r, w);
        if (r->hi - r->lo > r->cache_peak) r->cache_peak = (uint32_t)(r->hi - r->lo);
        return w;
    }
    w = &r->priv;
    rc = walk_next(r, s->off, r->first_size, ring_index(r, v), 1, &w->e, &w->next);
    if (rc <= 0) return walk_lost(r, rc, v), NULL;
    return w;
}

/* The stream's next buffer: 1 with *e, 0 when it has none left, -1 on a fatal error. */
static int stream_next_buffer(etl_reader *r, struct stream *s, struct buffer_entry *e)
{
    if (!r->streaming) {
        if (s->next >= s->count) return 0;
        *e = r->buffers[s->entries[s->next++]];
        return 1;
    }
    if (s->header_pending) {
        s->header_pending = 0;
        *e = r->header;
        return 1;
    }
    while (s->left > 0) {
        const struct walk_slot *w = ring_get(r, s);
        if (!w) return -1;
        s->v++;
        s->off = walk_on(r, w);
        if (s->any || w->e.cpu == s->cpu) {
            *e = w->e;
            s->left--;
            return 1;
        }
    }
    return 0;
}

/* The streams as cursors: one per processor in time order, one in file order. */
static int build_cursors(etl_reader *r)
{
    uint32_t n = r->opt.order == ETL_ORDER_FILE ? 1 : r->nruns;

    r->streams = calloc(n ? n : 1, sizeof *r->streams);
    r->heap = malloc((n ? n : 1) * sizeof *r->heap);
    if (!r->streams || !r->heap) {
        set_error(r, -1, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct stream *s = &r->streams[i];
        s->ordinal = i;
        if (r->opt.order == ETL_ORDER_FILE) {
            s->any = 1;
            s->header = (uint8_t)r->has_header;
            s->v0 = r->data0;
            s->off0 = r->wrap_off;
            s->total = r->ndata;
            for (uint32_t k = 0; k < r->nruns; k++)
                if (r->runs[k].max_used > s->cap) s->cap = r->runs[k].max_used;
        } else {
            const struct cpu_run *c = &r->runs[i];
            s->cpu = c->cpu;
            s->header = r->has_header && c->cpu == 0;
            s->total = c->count;
            s->cap = c->max_used;
            if (c->count) {
                s->v0 = c->start_index >= r->ring_start ? c->start_index : (uint64_t)c->start_index + r->ndata;
                s->off0 = c->start_offset;
            }
        }
    }
    r->nstreams = n;
    if (!r->cache) {
        r->cache_cap = r->ndata < etl_reader_index_limit ? r->ndata : etl_reader_index_limit;
        if (!r->cache_cap) r->cache_cap = 1;
        r->cache = malloc(r->cache_cap * sizeof *r->cache);
        if (!r->cache) {
            set_error(r, -1, "out of memory");
            return -1;
        }
    }
    return 0;
}

void etl_reader_index_stats(const etl_reader *r, int *streaming, uint32_t *indexed, uint32_t *window_cap,
                            uint32_t *window_peak)
{
    *streaming = r->streaming;
    *indexed = r->streaming ? 0 : r->nbuffers;
    *window_cap = r->cache_cap;
    *window_peak = r->cache_peak;
}

/* ---------------------------------------------------------------- streams */

/* Sort key of a buffer in time order: its processor's run, then SequenceNumber, then position. */
struct order_key {
    int64_t sequence;
    uint32_t index;
    uint16_t cpu;
};

static int cmp_order_key(const void *a, const void *b)
{
    const struct order_key *x = a, *y = b;

    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    if (x->sequence != y->sequence) return x->sequence < y->sequence ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int add_stream(etl_reader *r, uint32_t first, uint32_t count)
{
    struct stream *s = &r->streams[r->nstreams];

    memset(s, 0, sizeof *s);
    s->entries = r->entry_order + first;
    s->count = count;
    s->ordinal = r->nstreams++;
    for (uint32_t i = 0; i < count; i++) {
        const struct buffer_entry *e = &r->buffers[s->entries[i]];
        if (e->used > s->cap) s->cap = e->used;
    }
    return 0;
}

/* Group the buffers into streams: one per processor in time order, one in file order. */
static int build_streams(etl_reader *r)
{
    uint32_t n = r->nbuffers, start = 0;
    struct order_key *keys;

    uint32_t nstreams = n ? 1 : 0;

    r->entry_order = malloc((n ? n : 1) * sizeof *r->entry_order);
    keys = malloc((n ? n : 1) * sizeof *keys);
    if (!r->entry_order || !keys) {
        free(keys);
        set_error(r, -1, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        keys[i].sequence = r->buffers[i].sequence;
        keys[i].index = i;
        keys[i].cpu = r->opt.order == ETL_ORDER_FILE ? 0 : r->buffers[i].cpu;
        if (r->opt.order == ETL_ORDER_FILE) keys[i].sequence = 0;
    }
    qsort(keys, n, sizeof *keys, cmp_order_key);
    for (uint32_t i = 1; i < n; i++) nstreams += keys[i].cpu != keys[i - 1].cpu;
    /* one stream per processor, not per buffer */
    r->streams = malloc((nstreams ? nstreams : 1) * sizeof *r->streams);
    r->heap = malloc((nstreams ? nstreams : 1) * sizeof *r->heap);
    if (!r->streams || !r->heap) {
        free(keys);
        set_error(r, -1, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) r->entry_order[i] = keys[i].index;
    for (uint32_t i = 1; i <= n; i++) {
        if (i == n || keys[i].cpu != keys[start].cpu) {
            add_stream(r, start, i - start);
            start = i;
        }
    }
    free(keys);
    return 0;
}

/* Bytes of one buffer per stream. */
static uint64_t streams_memory(const etl_reader *r)
{
    uint64_t total = 0;

    for (uint32_t i = 0; i < r->nstreams; i++) total += r->streams[i].cap;
    return total;
}

/*
 * Build the streams and give each its buffer, all in one block (opening many small files
 * one after another then costs no heap growth and shrinking per file). Time order holds one
 * buffer per processor; a damaged file can claim so many processors that this exceeds
 * ETL_TIME_ORDER_MEMORY_LIMIT, and is then read in file order, with a warning.
 */
static int prepare_streams(etl_reader *r)
{
    uint64_t total;
    uint8_t *p;

    if ((r->streaming ? build_cursors(r) : build_streams(r)) != 0) return -1;
    total = streams_memory(r);
    if (r->opt.order != ETL_ORDER_FILE && total > ETL_TIME_ORDER_MEMORY_LIMIT) {
        damage(r, -1, "%u processors' buffers would need %llu MiB to be read in time order; "
               "the events are delivered in file order", r->nstreams, (unsigned long long)(total >> 20));
        free(r->entry_order);
        free(r->streams);
        free(r->heap);
        r->entry_order = NULL;
        r->streams = NULL;
        r->heap = NULL;
        r->nstreams = 0;
        r->opt.order = ETL_ORDER_FILE;
        if ((r->streaming ? build_cursors(r) : build_streams(r)) != 0) return -1;
        total = streams_memory(r);
    }
    r->stream_memory = p = malloc(total ? (size_t)total : 1);
    if (!p) {
        set_error(r, -1, "out of memory (%llu bytes for the buffers being read)", (unsigned long long)total);
        return -1;
    }
    for (uint32_t i = 0; i < r->nstreams; i++) {
        r->streams[i].data = p;
        p += r->streams[i].cap;
    }
    return 0;
}

/* ---------------------------------------------------------------- buffer loading */

/* Read (and decompress) the buffer e into s. Damage is reported; what is readable is kept. */
static int load_buffer(etl_reader *r, struct stream *s, const struct buffer_entry *entry)
{
    const struct buffer_entry *e = &s->cur_entry;

    s->cur_entry = *entry;
    s->cur = e;
    s->pos = ETL_BUFFER_HEADER_SIZE;
    if (!(e->flags & ETL_BUFFER_FLAG_COMPRESSED)) {
        if (read_exact(r, s->data, e->used, e->offset) != 0) return -1;
        s->used = e->used;
        return 0;
    }

    uint32_t in_len = e->stored - ETL_BUFFER_HEADER_SIZE;
    size_t out_len = 0, err_pos = 0;
    int rc;

    if (in_len > r->scratch_cap) {
        uint8_t *p = realloc(r->scratch, in_len);
        if (!p) {
            set_error(r, -1, "out of memory");
            r->fatal = 1;
            return -1;
        }
        r->scratch = p;
        r->scratch_cap = in_len;
    }
    if (read_exact(r, s->data, ETL_BUFFER_HEADER_SIZE, e->offset) != 0 ||
        read_exact(r, r->scratch, in_len, e->offset + ETL_BUFFER_HEADER_SIZE) != 0)
        return -1;
    rc = etl_xpress_decompress(r->scratch, in_len, s->data + ETL_BUFFER_HEADER_SIZE,
                               e->used - ETL_BUFFER_HEADER_SIZE, &out_len, &err_pos);
    s->used = ETL_BUFFER_HEADER_SIZE + (uint32_t)out_len;
    if (rc != ETL_XPRESS_OK) {
        uint64_t at = e->offset + ETL_BUFFER_HEADER_SIZE + err_pos;
        damage(r, (int64_t)at, "compressed buffer %u at offset %llu: %s at offset %llu; %zu of %u bytes recovered",
               e->index, (unsigned long long)e->offset,
               etl_xpress_strerror(rc),
               (unsigned long long)at, out_len, e->used - ETL_BUFFER_HEADER_SIZE);
        r->info.damaged_buffers++;
    } else if (s->used != e->used) {
        damage(r, (int64_t)e->offset, "compressed buffer %u at offset %llu decompresses to %zu bytes; its header says %u",
               e->index, (unsigned long long)e->offset, out_len, e->used - ETL_BUFFER_HEADER_SIZE);
        r->info.damaged_buffers++;
    }
    return 0;
}

/*
 * Make the stream's next record ready: load buffers until one has a record left, and take
 * its timestamp for ordering. Returns 1 if a record is ready, 0 when the stream is done,
 * -1 on a fatal error.
 */
static int stream_prepare(etl_reader *r, struct stream *s)
{
    for (;;) {
        if (s->cur && s->pos < s->used) {
            const uint8_t *p = s->data + s->pos;
            uint32_t avail = s->used - s->pos;
            if (avail >= 4 && etl_le32(p) == 0xFFFFFFFFu) {
                s->pos = s->used; /* fill before the used size: the buffer ends here */
                continue;
            }
            /* Only a merge needs the next timestamp. */
            if (r->nstreams > 1 && !etl_record_peek_timestamp(p, avail, &s->ts)) s->ts = s->last_ts;
            return 1;
        }
        struct buffer_entry e;
        int rc = stream_next_buffer(r, s, &e);
        if (rc <= 0) {
            s->cur = NULL;
            return rc;
        }
        if (load_buffer(r, s, &e) != 0) return -1;
    }
}

static inline int stream_before(const struct stream *a, const struct stream *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->ordinal < b->ordinal);
}

static void heap_sift_down(struct stream **h, uint32_t n, uint32_t i)
{
    struct stream *x = h[i];

    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && stream_before(h[c + 1], h[c])) c++;
        if (!stream_before(h[c], x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void heap_push(etl_reader *r, struct stream *s)
{
    struct stream **h = r->heap;
    uint32_t i = r->heap_n++;

    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!stream_before(s, h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = s;
}

/* Position every stream on its first record. */
static int streams_start(etl_reader *r)
{
    r->heap_n = 0;
    r->last = NULL;
    r->lo = r->hi = 0;
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct stream *s = &r->streams[i];
        s->v = s->v0;
        s->off = s->off0;
        s->left = s->total;
        s->header_pending = s->header;
    }
    for (uint32_t i = 0; i < r->nstreams; i++) {
        struct stream *s = &r->streams[i];
        int rc;
        s->cur = NULL;
        s->next = 0;
        s->pos = s->used = 0;
        s->last_ts = INT64_MIN;
        rc = stream_prepare(r, s);
        if (rc < 0) return -1;
        if (rc > 0) heap_push(r, s);
    }
    return 0;
}

/* ---------------------------------------------------------------- iteration */

/* Move the stream at the top of the heap to pos and restore the heap order (dropping the
   stream when it is done). Returns -1 on a fatal error. */
static int heap_top_advance(etl_reader *r, struct stream *s, uint32_t pos)
{
    int rc;

    s->pos = pos;
    rc = stream_prepare(r, s);
    if (rc < 0) return -1;
    if (rc == 0) r->heap[0] = r->heap[--r->heap_n];
    if (r->heap_n) heap_sift_down(r->heap, r->heap_n, 0);
    return 0;
}

static int live_next(etl_reader *r, etl_event *ev);

int etl_reader_next(etl_reader *r, etl_event *ev)
{
    if (r->fatal) return ETL_FATAL;
    if (r->live) return live_next(r, ev);
    if (r->last) {
        struct stream *s = r->last;
        r->last = NULL;
        if (heap_top_advance(r, s, s->pos + s->step) < 0) return ETL_FATAL;
    }
    while (r->heap_n > 0) {
        struct stream *s = r->heap[0];
        const uint8_t *p = s->data + s->pos;
        uint32_t avail = s->used - s->pos, step = 0;
        const char *why = NULL;
        int rc = etl_record_decode(&r->rctx, p, avail, ev, &step, &why);

        if (rc == ETL_RECORD_OK) {
            const struct buffer_entry *e = s->cur;
            if (ev->has & ETL_HAS_TIMESTAMP)
                s->last_ts = ev->timestamp;
            else
                ev->timestamp = s->last_ts == INT64_MIN ? 0 : s->last_ts;
            ev->cpu = e->cpu;
            ev->buffer_index = e->index;
            ev->buffer_offset = e->offset;
            ev->record_offset = s->pos;
            s->step = step;
            r->last = s;
            if (r->pending_warn) {
                r->pending_warn = 0;
                return ETL_WARN;
            }
            return ETL_OK;
        }
        if (rc == ETL_RECORD_BAD) {
            const struct buffer_entry *e = s->cur;
            uint64_t at = (e->flags & ETL_BUFFER_FLAG_COMPRESSED) ? e->offset : e->offset + s->pos;
            uint32_t left = s->used - s->pos;
            if (e->flags & ETL_BUFFER_FLAG_COMPRESSED)
                damage(r, (int64_t)at, "buffer %u at offset %llu (compressed): %s at offset %u of the decompressed "
                       "buffer (first dword 0x%08x); %u bytes of this buffer skipped", e->index,
                       (unsigned long long)e->offset, why, s->pos, avail >= 4 ? (unsigned)etl_le32(p) : 0u, left);
            else
                damage(r, (int64_t)at, "buffer %u at offset %llu: %s at offset %llu (first dword 0x%08x); "
                       "%u bytes of this buffer skipped", e->index, (unsigned long long)e->offset, why,
                       (unsigned long long)at, avail >= 4 ? (unsigned)etl_le32(p) : 0u, left);
        }
        /* Bad record or fill: the rest of this buffer cannot be walked. */
        if (heap_top_advance(r, s, s->used) < 0) return ETL_FATAL;
    }
    return ETL_EOF;
}

int etl_reader_rewind(etl_reader *r)
{
    if (r->fatal) return ETL_FATAL;
    if (r->live) {
        set_error(r, -1, "a real-time stream cannot be rewound");
        return ETL_FATAL;
    }
    r->pending_warn = 0;
    return streams_start(r) == 0 ? ETL_OK : ETL_FATAL;
}

/* ---------------------------------------------------------------- open / close */

static etl_reader *reader_new(const etl_source *src, const etl_open_options *opt, const char *default_name)
{
    etl_reader *r = calloc(1, sizeof *r);

    if (!r) return NULL;
    r->src = *src;
    if (opt) r->opt = *opt;
    r->name = strdup(opt && opt->name ? opt->name : default_name);
    r->err_offset = -1;
    r->info.logger_name = "";
    r->info.log_file_name = "";
    if (!r->name) {
        free(r);
        return NULL;
    }
    return r;
}

static int open_reader(etl_reader *r)
{
    uint8_t magic[4];
    uint8_t *first = NULL;
    int64_t size;
    ssize_t k;
    uint32_t first_size = 0, n;
    etl_buffer_header bh;

    k = r->src.read_at(r->src.ctx, magic, sizeof magic, 0);
    if (k < 0) {
        set_error(r, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (etl_source_is_gzip(magic, (size_t)k)) {
        char msg[512];
        int rc = etl_source_gunzip(&r->src, msg, sizeof msg);
        if (rc < 0) {
            set_error(r, -1, "%s", msg);
            return -1;
        }
        if (rc > 0) damage(r, -1, "%s; the data before the damage is read", msg);
    }
    size = r->src.size(r->src.ctx);
    if (size < 0) {
        set_error(r, -1, "cannot tell the size (not a regular file?)");
        return -1;
    }
    r->file_size = (uint64_t)size;
    r->info.file_size = r->file_size;
    if (size == 0) {
        set_error(r, 0, "not an ETL file: the file is empty");
        return -1;
    }
    if (size < ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE) {
        set_error(r, 0, "not an ETL file: %lld bytes is too small for a header buffer", (long long)size);
        return -1;
    }

    /* Buffer 0: the header buffer, whose first record is the logfile header event. */
    n = (uint32_t)(size < ETL_BUFFER_HEADER_SIZE + 0x10000 ? size : ETL_BUFFER_HEADER_SIZE + 0x10000);
    first = malloc(n);
    if (!first) {
        set_error(r, -1, "out of memory");
        return -1;
    }
    if (read_exact(r, first, n, 0) != 0) goto fail;
    etl_buffer_header_read(first, &bh);
    if (bh.buffer_type != ETL_BUFFER_TYPE_HEADER || (bh.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED)) {
        set_error(r, 0, "not an ETL file: the buffer at offset 0 is not a header buffer (BufferType %u, BufferFlag 0x%04x)",
                  bh.buffer_type, bh.buffer_flag);
        goto fail;
    }
    if (parse_logfile_header(r, first, n) != 0) goto fail;

    /* The logical buffer size: the logfile header's; if that is damaged, the header buffer's
       (uncompressed buffers all have one size) or, for compressed buffers, whose header buffer
       is short, the largest size allowed (each buffer's Offset then says how much it holds). */
    if (r->info.buffer_size < ETL_MIN_BUFFER_SIZE || r->info.buffer_size > ETL_MAX_BUFFER_SIZE) {
        uint32_t fallback = r->compressed_file ? ETL_MAX_BUFFER_SIZE : bh.buffer_size;
        if (fallback < ETL_MIN_BUFFER_SIZE || fallback > ETL_MAX_BUFFER_SIZE) {
            set_error(r, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE,
                      "the logfile header's BufferSize %u (offset 104) is out of range and the header buffer's "
                      "BufferSize %u cannot replace it", r->info.buffer_size, fallback);
            goto fail;
        }
        damage(r, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE,
               "the logfile header's BufferSize %u (offset 104) is out of range; using %s %u",
               r->info.buffer_size, r->compressed_file ? "the largest allowed," : "the header buffer's", fallback);
        r->info.buffer_size = fallback;
    }
    /* A damaged BufferSize in the header buffer itself: the events after the logfile header
       still tell how much of it is used, and uncompressed files have one buffer size. */
    if (bh.buffer_size < ETL_BUFFER_HEADER_SIZE || bh.buffer_size > r->info.buffer_size) {
        first_size = r->compressed_file ? (uint32_t)((bh.offset + 511u) & ~511u) : r->info.buffer_size;
        if (first_size < ETL_BUFFER_HEADER_SIZE || first_size > r->info.buffer_size) first_size = r->info.buffer_size;
        damage(r, 0, "the header buffer's BufferSize %u (offset 0) is invalid; taking %u", bh.buffer_size, first_size);
    }
    free(first);
    first = NULL;

    if (index_buffers(r, first_size) != 0) return -1;
    if (prepare_streams(r) != 0) return -1;
    if (streams_start(r) != 0) return -1;
    return 0;
fail:
    free(first);
    return -1;
}

int etl_reader_open(etl_reader **out, const etl_source *src, const etl_open_options *opt)
{
    etl_reader *r = reader_new(src, opt, "<etl>");

    *out = r;
    if (!r) {
        if (src->close) src->close(src->ctx);
        return ETL_FATAL;
    }
    if (open_reader(r) != 0) {
        r->fatal = 1;
        return ETL_FATAL;
    }
    if (r->warnings) {
        r->pending_warn = 0;
        return ETL_WARN;
    }
    return ETL_OK;
}

int etl_reader_open_path(etl_reader **out, const char *path, const etl_open_options *opt)
{
    etl_open_options o;
    etl_source src;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    if (!o.name) o.name = path;
    if (fd < 0) {
        int e = errno;
        etl_source none;
        memset(&none, 0, sizeof none);
        etl_reader *r = reader_new(&none, &o, path);
        *out = r;
        if (r) {
            set_error(r, -1, "cannot open: %s", strerror(e));
            r->fatal = 1;
        }
        return ETL_FATAL;
    }
    if (etl_source_fd(&src, fd, 1) != 0) {
        close(fd);
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

int etl_reader_open_fd(etl_reader **out, int fd, const etl_open_options *opt)
{
    char name[32];
    etl_open_options o;
    etl_source src;

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    snprintf(name, sizeof name, "<fd %d>", fd);
    if (!o.name) o.name = name;
    if (etl_source_fd(&src, fd, 0) != 0) {
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

int etl_reader_open_memory(etl_reader **out, const void *data, size_t size, const etl_open_options *opt)
{
    etl_open_options o;
    etl_source src;

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    if (!o.name) o.name = "<memory>";
    if (etl_source_memory(&src, data, size) != 0) {
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

static void live_free(struct live *l);

void etl_reader_close(etl_reader *r)
{
    if (!r) return;
    live_free(r->live);
    if (r->src.close) r->src.close(r->src.ctx);
    free(r->stream_memory);
    free(r->streams);
    free(r->heap);
    free(r->entry_order);
    free(r->buffers);
    free(r->cache);
    free(r->runs);
    free(r->scratch);
    free(r->logger_name);
    free(r->log_file_name);
    free(r->name);
    free(r);
}

/* ---------------------------------------------------------------- real-time streams */

/*
 * A real-time stream (libetl/format/realtime.h) is read a batch at a time: the buffers that have
 * arrived together, after the header buffer, make an image of an ETL file in memory, which a
 * reader of its own delivers in time order. Offsets in messages are bytes of the stream.
 */
#define LIVE_BATCH_BYTES (16u << 20)
#define LIVE_INPUT (256u << 10)

struct live {
    int fd, owned;
    uint32_t bsize, header_used;
    uint8_t *header;           /* the header buffer frame */
    uint8_t *image;            /* header buffer, then the batch's buffers, bsize apart */
    uint32_t cap, n;           /* buffers the image may hold, and holds now (header included) */
    uint32_t room;             /* buffers it has memory for (it grows to cap) */
    uint64_t *at;              /* stream offset of each buffer's bytes */
    uint64_t offset;           /* bytes of the stream read */
    uint8_t *in;               /* what read() brought and the frames have not taken yet */
    size_t in_pos, in_len;
    uint32_t unacked;          /* buffers taken that the session has not been told of */
    uint64_t batches;
    etl_reader *batch;
    int ended;
    int broken;                /* the stream failed after the batch's last whole buffer */
    char why[1024];            /* and why, for when the batch is delivered */
    int64_t why_offset;
};

static void live_free(struct live *l)
{
    if (!l) return;
    etl_reader_close(l->batch);
    if (l->owned && l->fd >= 0) close(l->fd);
    free(l->header);
    free(l->in);
    free(l->image);
    free(l->at);
    free(l);
}

/*
 * Tells the session that the buffers read so far are taken (it may let them go; those a
 * consumer that goes has not acknowledged go to the next one). Before every read that may
 * wait, so that the session's held buffers do not wait for a whole batch: a batch may be as
 * large as the session's pool. Not a socket (a file read as a stream): nobody to tell.
 */
static void live_ack(struct live *l)
{
    uint8_t ack[4];

    if (!l->unacked) return;
    etl_put32(ack, l->unacked);
    l->unacked = 0;
    if (send(l->fd, ack, sizeof ack, MSG_NOSIGNAL) < 0) {}
}

/* Reads n bytes; 0, or -1 (message set; fatal) when the stream ends or fails. */
static int live_read(etl_reader *r, void *buf, size_t n, const char *what)
{
    struct live *l = r->live;
    uint8_t *p = buf;
    size_t got = 0;

    while (got < n) {
        ssize_t k;
        if (l->in_pos < l->in_len) { /* what came already */
            size_t take = l->in_len - l->in_pos < n - got ? l->in_len - l->in_pos : n - got;
            memcpy(p + got, l->in + l->in_pos, take);
            l->in_pos += take;
            got += take;
            continue;
        }
        /* A large read straight into place; a small one through the input buffer, which takes
           the frames that follow with it (one system call for many small reads). */
        live_ack(l);
        if (n - got >= LIVE_INPUT) k = read(l->fd, p + got, n - got);
        else if ((k = read(l->fd, l->in, LIVE_INPUT)) > 0) {
            l->in_pos = 0;
            l->in_len = (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0)
                set_error(r, (int64_t)(l->offset + got), "the session went away: the stream ended at byte %llu, "
                          "in %s, before the session's end", (unsigned long long)(l->offset + got), what);
            else
                set_error(r, (int64_t)(l->offset + got), "cannot read the stream at byte %llu: %s",
                          (unsigned long long)(l->offset + got), strerror(errno));
            r->fatal = 1;
            return -1;
        }
        got += (size_t)k;
    }
    l->offset += n;
    return 0;
}

/* Reads a frame's head: its kind and length, checked. 0, or -1 (fatal, message set). */
static int live_frame(etl_reader *r, uint32_t *kind, uint32_t *length)
{
    struct live *l = r->live;
    uint64_t at = l->offset;
    uint8_t head[ETL_RT_FRAME_HEAD];
    uint32_t max;

    if (live_read(r, head, sizeof head, "a frame's head") != 0) return -1;
    *kind = etl_le32(head + 4);
    *length = etl_le32(head + 8);
    max = *kind == ETL_RT_END ? ETL_RT_END_MAX : l->bsize ? l->bsize : ETL_MAX_BUFFER_SIZE;
    if (etl_le32(head) != ETL_RT_MAGIC || *kind < ETL_RT_HEADER || *kind > ETL_RT_END ||
        (l->bsize != 0) != (*kind != ETL_RT_HEADER) || *length > max ||
        (*kind != ETL_RT_END && *length < ETL_BUFFER_HEADER_SIZE)) {
        set_error(r, (int64_t)at, "not a real-time stream frame at byte %llu (magic 0x%08x, kind %u, length %u)",
                  (unsigned long long)at, (unsigned)etl_le32(head), (unsigned)*kind, (unsigned)*length);
        r->fatal = 1;
        return -1;
    }
    return 0;
}

/* The END frame: the session's final counts, for the consumer's trace info. */
static int live_end(etl_reader *r, uint32_t length)
{
    char text[ETL_RT_END_MAX + 1];
    unsigned long long lost = 0, rt_events = 0;
    unsigned rt_buffers = 0;

    if (live_read(r, text, length, "the final statistics") != 0) return -1;
    text[length] = '\0';
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        sscanf(line, "EventsLost %llu", &lost);
        sscanf(line, "RealTimeBuffersLost %u", &rt_buffers);
        sscanf(line, "RealTimeEventsLost %llu", &rt_events);
    }
    lost += rt_events;
    r->info.events_lost = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
    r->info.buffers_lost = rt_buffers;
    r->live->ended = 1;
    return 0;
}

/* Damage in a batch: reported as the outer reader's, at the byte of the stream. */
static void live_damage(void *arg, int64_t offset, const char *message)
{
    etl_reader *r = arg;
    struct live *l = r->live;
    size_t skip = strlen(r->name);
    uint64_t at = offset < 0 ? l->offset : l->at[(uint64_t)offset / l->bsize % l->cap] + (uint64_t)offset % l->bsize;

    if (strncmp(message, r->name, skip) == 0 && message[skip] == ':') message += skip + 2;
    damage(r, (int64_t)at, "%s (byte %llu of the stream)", message, (unsigned long long)at);
}

/*
 * The next batch: waits for a frame (ETL_FATAL with errno EINTR when a signal comes first,
 * nothing read), then takes every frame that has arrived, up to the image's room. ETL_OK with
 * l->batch open, ETL_EOF at the session's end, ETL_FATAL.
 */
static int live_batch(etl_reader *r)
{
    struct live *l = r->live;
    struct pollfd pf = { l->fd, POLLIN, 0 };
    etl_open_options o;
    int rc;

    etl_reader_close(l->batch);
    l->batch = NULL;
    if (l->broken) { /* the buffers before the failure were delivered: now the failure */
        snprintf(r->err, sizeof r->err, "%s", l->why);
        r->err_offset = l->why_offset;
        r->fatal = 1;
        return ETL_FATAL;
    }
    if (l->ended) return ETL_EOF;
    if (l->in_pos == l->in_len && poll(&pf, 1, -1) < 0) {
        int e = errno;
        set_error(r, -1, "waiting for events: %s", strerror(e));
        errno = e;
        return ETL_FATAL; /* not fatal for the reader: call again */
    }
    l->n = 1;
    do {
        uint32_t kind, length;
        uint8_t *b;
        if (l->n == l->room) {
            uint32_t more = l->room * 2 < l->cap ? l->room * 2 : l->cap;
            uint8_t *image = realloc(l->image, (size_t)more * l->bsize);
            if (!image) {
                set_error(r, -1, "out of memory");
                r->fatal = 1;
                return ETL_FATAL;
            }
            l->image = image;
            l->room = more;
        }
        b = l->image + (size_t)l->n * l->bsize;
        if (live_frame(r, &kind, &length) != 0 ||
            (kind == ETL_RT_END && live_end(r, length) != 0) ||
            (kind == ETL_RT_BUFFER && (l->at[l->n] = l->offset, live_read(r, b, length, "a buffer") != 0))) {
            if (l->n == 1) return ETL_FATAL;
            /* What came whole before is delivered first. */
            l->broken = 1;
            r->fatal = 0;
            snprintf(l->why, sizeof l->why, "%s", r->err);
            l->why_offset = r->err_offset;
            break;
        }
        if (kind == ETL_RT_END) break;
        memset(b + length, 0xFF, l->bsize - length);
        l->n++;
        l->unacked++;
        pf.revents = 0;
    } while (l->n < l->cap && (l->in_pos < l->in_len || (poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN))));
    live_ack(l);
    if (l->n == 1) return ETL_EOF;
    l->batches++;
    memset(&o, 0, sizeof o);
    o.order = r->opt.order;
    o.name = r->name;
    o.on_damage = live_damage;
    o.on_damage_arg = r;
    rc = etl_reader_open_memory(&l->batch, l->image, (size_t)l->n * l->bsize, &o);
    if (rc == ETL_FATAL) {
        set_error(r, (int64_t)l->at[1], "buffers of the stream from byte %llu: %s",
                  (unsigned long long)l->at[1], l->batch ? etl_reader_error(l->batch) : "out of memory");
        r->fatal = 1;
        return ETL_FATAL;
    }
    return ETL_OK;
}

static int live_next(etl_reader *r, etl_event *ev)
{
    struct live *l = r->live;

    for (;;) {
        if (l->batch) {
            int rc = etl_reader_next(l->batch, ev);
            /* Every batch starts with the header buffer: its events are delivered once. */
            if ((rc == ETL_OK || rc == ETL_WARN) && ev->buffer_index == 0 && l->batches > 1) continue;
            if (rc == ETL_OK || rc == ETL_WARN) {
                r->info.buffers = (uint32_t)(l->batches + 1);
                return rc;
            }
            if (rc == ETL_FATAL) {
                set_error(r, -1, "%s", etl_reader_error(l->batch));
                r->fatal = 1;
                return ETL_FATAL;
            }
        }
        int rc = live_batch(r);
        if (rc != ETL_OK) return rc;
    }
}

/* Reads the answer to "consume" (lines, up to "ok" or "error MESSAGE") and the header frame. */
static int live_start(etl_reader *r)
{
    struct live *l = r->live;
    char line[1024];
    size_t n = 0;
    uint32_t kind, length;

    for (;;) { /* byte by byte: what follows the answer is the stream */
        char c;
        if (live_read(r, &c, 1, "the answer to 'consume'") != 0) return -1;
        if (c != '\n') {
            if (n + 1 < sizeof line) line[n++] = c;
            continue;
        }
        line[n] = '\0';
        if (strcmp(line, "ok") == 0) break;
        if (strncmp(line, "error ", 6) == 0) {
            size_t k = strlen(r->name);
            /* The controller names the session itself ("session NAME is ..."). */
            if (strncasecmp(line + 6, r->name, k) == 0 && line[6 + k] == ' ') {
                snprintf(r->err, sizeof r->err, "%s", line + 6);
                r->err_offset = -1;
            } else {
                set_error(r, -1, "%s", line + 6);
            }
            return -1;
        }
        n = 0; /* an answer line this reader does not need */
    }
    if (live_frame(r, &kind, &length) != 0) return -1;
    l->header = malloc(length);
    if (!l->header) {
        set_error(r, -1, "out of memory");
        return -1;
    }
    if (live_read(r, l->header, length, "the header buffer") != 0) return -1;
    if (parse_logfile_header(r, l->header, length) != 0) return -1;
    if (r->info.buffer_size < length || r->info.buffer_size < ETL_MIN_BUFFER_SIZE ||
        r->info.buffer_size > ETL_MAX_BUFFER_SIZE) {
        set_error(r, ETL_RT_FRAME_HEAD, "the stream's logfile header gives BufferSize %u, which cannot be",
                  r->info.buffer_size);
        return -1;
    }
    l->bsize = r->info.buffer_size;
    l->cap = LIVE_BATCH_BYTES / l->bsize > 2 ? LIVE_BATCH_BYTES / l->bsize : 2;
    /* Room for 4 MB of buffers from the start, touched now: the page faults of a growing image
       slowed the first batches enough for a busy session to drop buffers. */
    l->room = (4u << 20) / l->bsize > 2 ? (4u << 20) / l->bsize : 2;
    if (l->room > l->cap) l->room = l->cap;
    l->image = malloc((size_t)l->room * l->bsize);
    if (l->image) memset(l->image, 0xFF, (size_t)l->room * l->bsize);
    l->at = calloc(l->cap, sizeof *l->at);
    if (!l->image || !l->at) {
        set_error(r, -1, "out of memory");
        return -1;
    }
    memcpy(l->image, l->header, length);
    memset(l->image + length, 0xFF, l->bsize - length);
    l->at[0] = ETL_RT_FRAME_HEAD;
    r->info.buffers = 1;
    return 0;
}

static int live_open(etl_reader **out, int fd, int owned, const etl_open_options *opt, const char *name,
                     const char *request)
{
    etl_source none;
    etl_reader *r;

    memset(&none, 0, sizeof none);
    r = reader_new(&none, opt, name);
    *out = r;
    if (r) r->live = calloc(1, sizeof *r->live);
    if (r && r->live) r->live->in = malloc(LIVE_INPUT);
    if (!r || !r->live || !r->live->in) {
        if (owned && fd >= 0) close(fd);
        if (r) {
            set_error(r, -1, "out of memory");
            r->fatal = 1;
        }
        return ETL_FATAL;
    }
    r->live->fd = fd;
    r->live->owned = owned;
    if (fd < 0 || (request && write(fd, request, strlen(request)) != (ssize_t)strlen(request)) ||
        live_start(r) != 0) {
        if (fd < 0 || !r->err[0]) set_error(r, -1, "%s", strerror(errno));
        r->fatal = 1;
        return ETL_FATAL;
    }
    return ETL_OK;
}

int etl_reader_open_stream(etl_reader **out, int fd, const etl_open_options *opt)
{
    char name[32];

    snprintf(name, sizeof name, "<stream %d>", fd);
    return live_open(out, fd, 0, opt, opt && opt->name ? opt->name : name, NULL);
}

int etl_reader_open_live(etl_reader **out, int fd, const etl_open_options *opt, const char *name, const char *error)
{
    if (error) {
        etl_source none;
        etl_reader *r;
        memset(&none, 0, sizeof none);
        r = reader_new(&none, opt, name);
        *out = r;
        if (!r) return ETL_FATAL;
        set_error(r, -1, "%s", error);
        r->fatal = 1;
        return ETL_FATAL;
    }
    return live_open(out, fd, 1, opt, opt && opt->name ? opt->name : name, NULL);
}
