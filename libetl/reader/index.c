/* SPDX-License-Identifier: MIT */
/* The reader's walk of the file: buffer headers checked, resynchronization after damage, the buffer
   index, and the cursors that read a file too large to index. */
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

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
        /* Without COMPRESSED_MODE every buffer has the logical size (doc/format.md section
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
            etl_reader_set_error(r, -1, "out of memory");
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
            if (etl_reader_read_exact(r, hdr, sizeof hdr, c) != 0) { *io_error = 1; return size; }
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
            if (!w) {
                free(win);
                etl_reader_set_error(r, -1, "out of memory");
                r->fatal = 1;
                *io_error = 1;
                return size;
            }
            win = w;
            cap = n;
        }
        if (etl_reader_read_exact(r, win, n, base) != 0) { free(win); *io_error = 1; return size; }
        for (size_t i = 0; i + ETL_BUFFER_HEADER_SIZE <= n && i < step; i++) {
            const uint8_t *h = win + i;
            /* Cheap filter first: a compressed data buffer of type GENERIC. */
            if (!(etl_le16(h + ETL_BH_BUFFER_FLAG) & ETL_BUFFER_FLAG_COMPRESSED) || h[ETL_BH_BUFFER_TYPE] != 0 ||
                h[ETL_BH_BUFFER_TYPE + 1] != 0)
                continue;
            etl_buffer_header_read(h, &bh);
            /* SavedOffset = Offset in compressed buffers (doc/format.md section 7): a check
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
        if (etl_reader_read_exact(r, chunk, n, off) != 0) return -1;
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
    if (etl_reader_read_exact(r, hdr, sizeof hdr, pos) != 0) {
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

    if (!in || !out) etl_reader_set_error(r, -1, "out of memory");
    else if (etl_reader_read_exact(r, in, in_len, off + ETL_BUFFER_HEADER_SIZE) == 0)
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
            if (etl_reader_read_exact(r, hdr, n, off) != 0) return -1;
            /* Only 0xFF is fill: zeros are as likely the start of a buffer header cut short
               (a BufferSize of 65536 begins with two zero bytes). */
            if (!quiet && !is_fill(hdr, n, 0xFF))
                etl_reader_damage(r, (int64_t)off,
                                  "%zu bytes at offset %llu after the last buffer are not a buffer (ignored)", n,
                                  (unsigned long long)off);
            return 0;
        }
        if (etl_reader_read_exact(r, hdr, sizeof hdr, off) != 0) return -1;
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
                etl_reader_damage(r, (int64_t)off,
                                  "no buffer header at offset %llu (%s-filled); skipped %llu bytes to %s",
                                  (unsigned long long)off, hdr[0] ? "0xFF" : "zero", (unsigned long long)(nx - off),
                                  nx < size ? "the next buffer" : "the end of the file");
            else
                etl_reader_damage(r, (int64_t)off,
                                  "damaged buffer header at offset %llu: %s (BufferSize %u, Offset %u); "
                                  "skipped %llu bytes to %s", (unsigned long long)off, why, bh.buffer_size, bh.offset,
                                  (unsigned long long)(nx - off),
                                  nx < size ? "the next buffer" : "the end of the file");
            if (!quiet) r->info.damaged_buffers++;
            off = nx;
            continue;
        }
        if (r->compressed_file) {
            uint32_t extent = compressed_extent(r, off, &bh, &io_error);
            if (io_error) return -1;
            if (extent != bh.buffer_size) {
                if (!quiet) {
                    etl_reader_damage(r, (int64_t)off,
                                      "buffer %u at offset %llu: its BufferSize %u leads to no buffer; the "
                                      "next buffer starts at offset %llu", index, (unsigned long long)off,
                                      bh.buffer_size, (unsigned long long)(off + extent));
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
                etl_reader_damage(r, (int64_t)off,
                                  "buffer %u at offset %llu is truncated: %u of its %u bytes are in the file", e->index,
                                  (unsigned long long)off, e->stored, bh.buffer_size);
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
int etl_reader_index_buffers(etl_reader *r, uint32_t first_size)
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
            etl_reader_set_error(r, -1, "the file changed while being read: %u buffers, then %u", count, r->nbuffers);
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
    etl_reader_set_error(r, -1, "out of memory");
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
        etl_reader_set_error(r, -1, "the file changed while being read: buffer %u is no longer found",
                             ring_index(r, v));
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
int etl_reader_stream_next_buffer(etl_reader *r, struct stream *s, struct buffer_entry *e)
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
int etl_reader_build_cursors(etl_reader *r)
{
    uint32_t n = r->opt.order == ETL_ORDER_FILE ? 1 : r->nruns;

    r->streams = calloc(n ? n : 1, sizeof *r->streams);
    r->heap = malloc((n ? n : 1) * sizeof *r->heap);
    if (!r->streams || !r->heap) {
        etl_reader_set_error(r, -1, "out of memory");
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
            etl_reader_set_error(r, -1, "out of memory");
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
