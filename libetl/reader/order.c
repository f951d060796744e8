/* SPDX-License-Identifier: MIT */
/* The reader's streams: each processor's buffers loaded (and decompressed) in turn, merged into time
   order by a heap, and the events delivered. */
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

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
        etl_reader_set_error(r, -1, "out of memory");
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
        etl_reader_set_error(r, -1, "out of memory");
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
int etl_reader_prepare_streams(etl_reader *r)
{
    uint64_t total;
    uint8_t *p;

    if ((r->streaming ? etl_reader_build_cursors(r) : build_streams(r)) != 0) return -1;
    total = streams_memory(r);
    if (r->opt.order != ETL_ORDER_FILE && total > ETL_TIME_ORDER_MEMORY_LIMIT) {
        etl_reader_damage(r, -1, "%u processors' buffers would need %llu MiB to be read in time order; "
                          "the events are delivered in file order", r->nstreams, (unsigned long long)(total >> 20));
        free(r->entry_order);
        free(r->streams);
        free(r->heap);
        r->entry_order = NULL;
        r->streams = NULL;
        r->heap = NULL;
        r->nstreams = 0;
        r->opt.order = ETL_ORDER_FILE;
        if ((r->streaming ? etl_reader_build_cursors(r) : build_streams(r)) != 0) return -1;
        total = streams_memory(r);
    }
    r->stream_memory = p = malloc(total ? (size_t)total : 1);
    if (!p) {
        etl_reader_set_error(r, -1, "out of memory (%llu bytes for the buffers being read)", (unsigned long long)total);
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
        /* From memory (a real-time batch, etl_reader_open_memory) the records are read where
           they are: a copy of every buffer cost the real-time consumer a fifth of its time. */
        s->bytes = etl_source_view(&r->src, e->used, e->offset);
        if (!s->bytes) {
            if (etl_reader_read_exact(r, s->data, e->used, e->offset) != 0) return -1;
            s->bytes = s->data;
        }
        s->used = e->used;
        return 0;
    }
    s->bytes = s->data;

    uint32_t in_len = e->stored - ETL_BUFFER_HEADER_SIZE;
    size_t out_len = 0, err_pos = 0;
    int rc;

    if (in_len > r->scratch_cap) {
        uint8_t *p = realloc(r->scratch, in_len);
        if (!p) {
            etl_reader_set_error(r, -1, "out of memory");
            r->fatal = 1;
            return -1;
        }
        r->scratch = p;
        r->scratch_cap = in_len;
    }
    if (etl_reader_read_exact(r, s->data, ETL_BUFFER_HEADER_SIZE, e->offset) != 0 ||
        etl_reader_read_exact(r, r->scratch, in_len, e->offset + ETL_BUFFER_HEADER_SIZE) != 0)
        return -1;
    rc = etl_xpress_decompress(r->scratch, in_len, s->data + ETL_BUFFER_HEADER_SIZE,
                               e->used - ETL_BUFFER_HEADER_SIZE, &out_len, &err_pos);
    s->used = ETL_BUFFER_HEADER_SIZE + (uint32_t)out_len;
    if (rc != ETL_XPRESS_OK) {
        uint64_t at = e->offset + ETL_BUFFER_HEADER_SIZE + err_pos;
        etl_reader_damage(r, (int64_t)at,
                          "compressed buffer %u at offset %llu: %s at offset %llu; %zu of %u bytes recovered", e->index,
                          (unsigned long long)e->offset, etl_xpress_strerror(rc), (unsigned long long)at, out_len,
                          e->used - ETL_BUFFER_HEADER_SIZE);
        r->info.damaged_buffers++;
    } else if (s->used != e->used) {
        etl_reader_damage(r, (int64_t)e->offset,
                          "compressed buffer %u at offset %llu decompresses to %zu bytes; its header says %u", e->index,
                          (unsigned long long)e->offset, out_len, e->used - ETL_BUFFER_HEADER_SIZE);
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
            const uint8_t *p = s->bytes + s->pos;
            uint32_t avail = s->used - s->pos;
            /* Not a record (fill, damage) is found, and reported, by etl_reader_next. Only a
               merge needs the next timestamp. */
            if (r->nstreams > 1 && !etl_record_peek_timestamp(p, avail, &s->ts)) s->ts = s->last_ts;
            return 1;
        }
        struct buffer_entry e;
        int rc = etl_reader_stream_next_buffer(r, s, &e);
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
int etl_reader_streams_start(etl_reader *r)
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

int etl_reader_next(etl_reader *r, etl_event *ev)
{
    if (r->fatal) return ETL_FATAL;
    if (r->live) return etl_reader_live_next(r, ev);
    if (r->last) {
        struct stream *s = r->last;
        r->last = NULL;
        if (heap_top_advance(r, s, s->pos + s->step) < 0) return ETL_FATAL;
    }
    while (r->heap_n > 0) {
        struct stream *s = r->heap[0];
        const uint8_t *p = s->bytes + s->pos;
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
        /* Records fill the buffer up to its used size (doc/format.md section 2.3): the
           0xFFFFFFFF fill (ETL_RECORD_END) belongs after it, so seen here, before the used
           size, it is damage like any other bad record header (section 15). */
        if (rc == ETL_RECORD_END) {
            rc = ETL_RECORD_BAD;
            why = "0xFFFFFFFF fill before the buffer's used size";
        }
        if (rc == ETL_RECORD_BAD) {
            const struct buffer_entry *e = s->cur;
            uint64_t at = (e->flags & ETL_BUFFER_FLAG_COMPRESSED) ? e->offset : e->offset + s->pos;
            uint32_t left = s->used - s->pos;
            if (e->flags & ETL_BUFFER_FLAG_COMPRESSED)
                etl_reader_damage(r, (int64_t)at,
                                  "buffer %u at offset %llu (compressed): %s at offset %u of the decompressed "
                                  "buffer (first dword 0x%08x); %u bytes of this buffer skipped", e->index,
                                  (unsigned long long)e->offset, why, s->pos, avail >= 4 ? (unsigned)etl_le32(p) : 0u,
                                  left);
            else
                etl_reader_damage(r, (int64_t)at, "buffer %u at offset %llu: %s at offset %llu (first dword 0x%08x); "
                                  "%u bytes of this buffer skipped", e->index, (unsigned long long)e->offset, why,
                                  (unsigned long long)at, avail >= 4 ? (unsigned)etl_le32(p) : 0u, left);
        }
        /* A bad record: the rest of this buffer cannot be walked. */
        if (heap_top_advance(r, s, s->used) < 0) return ETL_FATAL;
    }
    return ETL_EOF;
}

int etl_reader_rewind(etl_reader *r)
{
    if (r->fatal) return ETL_FATAL;
    if (r->live) {
        etl_reader_set_error(r, -1, "a real-time stream cannot be rewound");
        return ETL_FATAL;
    }
    r->pending_warn = 0;
    return etl_reader_streams_start(r) == 0 ? ETL_OK : ETL_FATAL;
}
