/* SPDX-License-Identifier: MIT */
/* Damaged input never crashes the reader: each damage is reported at its offset, and every undamaged buffer is read. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check_run.h"
#include "format/format.h"
#include "synth.h"
#include "testutil.h"
#include "format/format.h"

/* ------------------------------------------------------------------------------------------ */
/* Reading a file and keeping what it gave */

/* One delivered event: where it came from and a digest of its bytes. */
struct rec {
    uint64_t buf;       /* buffer_offset */
    uint32_t index;     /* buffer_index */
    uint32_t off;       /* record_offset */
    uint32_t size;      /* record_size */
    uint32_t digest;    /* FNV-1a of the whole record */
    uint16_t ext_count;
    int64_t ts;
};

/* ck_assert_msg reports every passing check to the runner (a write() each): too slow per event. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

#define MAX_REPORTS 64

/* Everything a read of one file gave. */
struct outcome {
    const char *name;           /* the name the reader was given (messages must contain it) */
    const char *ctx;            /* what is being read, for failure messages */
    int open_rc;
    char error[1024];           /* etl_reader_error() at the end (the FATAL message) */
    struct rec *ev;
    long n, cap;
    long warn_returns;          /* next() calls that returned ETL_WARN */
    unsigned warnings;          /* etl_reader_warnings() at the end */
    unsigned reports;           /* on_damage calls */
    int64_t report_off[MAX_REPORTS];
    char first_report[1024];
    char bad_report[1024];      /* first report that does not name the file and its offset */
    int pending;                /* a report came after the last event was delivered */
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    REQUIRE(p != NULL, "out of memory");
    return p;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    uint8_t *q = xmalloc(n);
    if (n) memcpy(q, p, n);
    return q;
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static void on_damage(void *arg, int64_t offset, const char *msg)
{
    struct outcome *o = arg;
    char num[32];

    if (o->reports < MAX_REPORTS) o->report_off[o->reports] = offset;
    if (o->reports == 0) snprintf(o->first_report, sizeof o->first_report, "%s", msg);
    o->reports++;
    o->pending = 1;
    snprintf(num, sizeof num, "%lld", (long long)offset);
    if (!o->bad_report[0] && (!strstr(msg, o->name) || !strstr(msg, "offset") || (offset >= 0 && !strstr(msg, num))))
        snprintf(o->bad_report, sizeof o->bad_report, "[%lld] %s", (long long)offset, msg);
}

/* Every pointer of ev lies inside its record, and the record inside its buffer; reads every
   byte of the record (so that AddressSanitizer sees any over-read) and every extended item. */
static void check_event(struct outcome *o, const etl_trace_info *in, const etl_event *ev)
{
    const uint8_t *rec = ev->record, *end;
    struct rec *r;

    REQUIRE(rec != NULL && ev->record_size >= ETL_MESSAGE_HEADER_SIZE, "%s: event %ld has no record (size %u)",
            o->ctx, o->n, ev->record_size);
    end = rec + ev->record_size;
    REQUIRE(ev->record_offset >= ETL_BUFFER_HEADER_SIZE &&
            (uint64_t)ev->record_offset + ev->record_size <= in->buffer_size,
            "%s: event %ld: record at %u, size %u, outside a %u-byte buffer", o->ctx, o->n,
            ev->record_offset, ev->record_size, in->buffer_size);
    REQUIRE(ev->buffer_offset + ETL_BUFFER_HEADER_SIZE <= in->file_size,
            "%s: event %ld: buffer offset %llu beyond the file (%llu bytes)", o->ctx, o->n,
            (unsigned long long)ev->buffer_offset, (unsigned long long)in->file_size);
    REQUIRE(ev->payload_len == 0 ||
            (ev->payload >= rec && ev->payload <= end && ev->payload_len <= (size_t)(end - ev->payload)),
            "%s: event %ld: payload (%u bytes) outside its record", o->ctx, o->n, ev->payload_len);
    REQUIRE(ev->ext_len == 0 || (ev->ext >= rec && ev->ext <= end && ev->ext_len <= (size_t)(end - ev->ext)),
            "%s: event %ld: extended items (%u bytes) outside their record", o->ctx, o->n, ev->ext_len);
    REQUIRE(ev->ext_count == 0 || ev->ext_len > 0, "%s: event %ld: %u items in 0 bytes", o->ctx, o->n,
            ev->ext_count);
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        REQUIRE(etl_event_ext_item_get(ev, i, &it) == ETL_OK, "%s: event %ld: item %u unreadable", o->ctx, o->n, i);
        REQUIRE(it.data >= ev->ext && it.data <= ev->ext + ev->ext_len &&
                it.size <= (size_t)(ev->ext + ev->ext_len - it.data),
                "%s: event %ld: item %u (%u bytes) outside the items", o->ctx, o->n, i, it.size);
    }
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 256;
        o->ev = realloc(o->ev, (size_t)o->cap * sizeof *o->ev);
        REQUIRE(o->ev != NULL, "out of memory");
    }
    r = &o->ev[o->n++];
    r->buf = ev->buffer_offset;
    r->index = ev->buffer_index;
    r->off = ev->record_offset;
    r->size = ev->record_size;
    r->digest = fnv1a(rec, ev->record_size);
    r->ext_count = ev->ext_count;
    r->ts = ev->timestamp;
}

/* Reads every event of r (opened with result open_rc) into o, checking the reader's contract. */
/* Every field of every event decoded, as text and as JSON: no read outside the payload (ASan),
   and a payload that does not fit its schema said with the event's offset. */
static etl_decoder *decoder;

static void decode_fields(struct outcome *o, const etl_event *ev)
{
    static char text[1 << 16];
    etl_decoded_event e;
    int rc;

    if (!decoder) REQUIRE(etl_decoder_open(&decoder, NULL) >= ETL_WARN && decoder, "no decoder");
    rc = etl_decoder_decode(decoder, ev, &e);
    REQUIRE(rc == 1 || rc == 0 || rc == ETL_FAILED, "%s: decode gave %d", o->ctx, rc);
    if (rc == ETL_FAILED)
        REQUIRE(strstr(etl_decoder_error(decoder), "offset") != NULL, "%s: a decoding failure names no offset: %s",
                o->ctx, etl_decoder_error(decoder));
    REQUIRE(e.field_count == 0 || e.fields[e.field_count - 1].end <= e.field_count, "%s: a field's end is past the last",
            o->ctx);
    etl_decoded_format_text(&e, text, sizeof text);
    etl_decoded_format_json(&e, text, sizeof text);
}

static void consume(etl_reader *r, struct outcome *o)
{
    const etl_trace_info *in;
    etl_event ev;
    uint64_t bound;
    int rc;

    REQUIRE(r != NULL, "%s: open gave no handle", o->ctx);
    if (o->open_rc == ETL_FATAL) {
        snprintf(o->error, sizeof o->error, "%s", etl_reader_error(r));
        REQUIRE(strstr(o->error, o->name) != NULL, "%s: the FATAL message does not name the file: %s", o->ctx,
                o->error);
        REQUIRE(strstr(o->error, "not an ETL file") || strstr(o->error, "offset"),
                "%s: the FATAL message names no offset: %s", o->ctx, o->error);
        ck_assert_int_eq(etl_reader_next(r, &ev), ETL_FATAL);
        etl_reader_close(r);
        return;
    }
    REQUIRE(o->open_rc == ETL_OK || o->open_rc == ETL_WARN, "%s: open gave %d", o->ctx, o->open_rc);
    REQUIRE((o->open_rc == ETL_WARN) == (o->reports > 0), "%s: open gave %d after %u damage reports", o->ctx,
            o->open_rc, o->reports);
    o->pending = 0;
    in = etl_reader_info(r);
    /* Every record takes at least 8 bytes of a buffer: more events than that is a loop. */
    bound = (in->file_size + (uint64_t)in->buffers * in->buffer_size) / 8 + 100;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        REQUIRE((rc == ETL_WARN) == (o->pending != 0), "%s: event %ld: next gave %d, damage reported before it: %d",
                o->ctx, o->n, rc, o->pending);
        if (rc == ETL_WARN) o->warn_returns++;
        o->pending = 0;
        check_event(o, in, &ev);
        decode_fields(o, &ev);
        REQUIRE((uint64_t)o->n <= bound, "%s: more than %llu events: the reader does not stop", o->ctx,
                (unsigned long long)bound);
    }
    REQUIRE(rc == ETL_EOF, "%s: next gave %d: %s", o->ctx, rc, etl_reader_error(r));
    ck_assert_int_eq(etl_reader_next(r, &ev), ETL_EOF);
    o->warnings = etl_reader_warnings(r);
    snprintf(o->error, sizeof o->error, "%s", etl_reader_error(r));
    REQUIRE(o->warnings == o->reports, "%s: %u warnings counted, %u reported", o->ctx, o->warnings, o->reports);
    REQUIRE(!o->bad_report[0], "%s: a damage message does not name the file and the offset: %s", o->ctx,
            o->bad_report);
    etl_reader_close(r);
}

/* A fresh outcome, and open options that report damage into it. */
static void start_outcome(struct outcome *o, etl_reader_options *opt, int order, const char *name, const char *ctx)
{
    memset(o, 0, sizeof *o);
    o->name = name;
    o->ctx = ctx;
    memset(opt, 0, sizeof *opt);
    opt->order = order;
    opt->name = name;
    opt->on_damage = on_damage;
    opt->on_damage_arg = o;
}

/* Reads the size bytes at data, which must be a whole allocation, so that over-reads are caught. */
static void read_allocation(const uint8_t *data, size_t size, int order, const char *name, const char *ctx,
                            struct outcome *o)
{
    etl_reader_options opt;
    etl_reader *r = NULL;

    start_outcome(o, &opt, order, name, ctx);
    o->open_rc = etl_reader_open_memory(&r, data, size, &opt);
    consume(r, o);
}

/* Reads size bytes at data from memory (an exact copy). */
static void read_memory(const uint8_t *data, size_t size, int order, const char *name, const char *ctx,
                        struct outcome *o)
{
    uint8_t *copy = dup_bytes(data, size);
    read_allocation(copy, size, order, name, ctx, o);
    free(copy);
}

static void read_counting(struct test_counting_source *c, int order, const char *name, const char *ctx,
                          struct outcome *o)
{
    etl_reader_options opt;
    etl_reader_source src;
    etl_reader *r = NULL;

    start_outcome(o, &opt, order, name, ctx);
    test_counting_source(c, &src);
    o->open_rc = etl_reader_open(&r, &src, &opt);
    consume(r, o);
}

static void read_path(const char *path, int order, const char *name, const char *ctx, struct outcome *o)
{
    etl_reader_options opt;
    etl_reader *r = NULL;

    memset(o, 0, sizeof *o);
    o->name = name;
    o->ctx = ctx;
    memset(&opt, 0, sizeof opt);
    opt.order = order;
    opt.name = name;
    opt.on_damage = on_damage;
    opt.on_damage_arg = o;
    o->open_rc = etl_reader_open_path(&r, path, &opt);
    consume(r, o);
}

static void outcome_free(struct outcome *o)
{
    free(o->ev);
    o->ev = NULL;
    o->n = o->cap = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Comparing what was delivered */

static int by_offset(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->buf != y->buf) return x->buf < y->buf ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int by_index(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* got holds exactly the events of want (in any order); buffers are told apart by file offset,
   or by buffer index when key_index (for files whose buffers moved). */
static void expect_events(const char *ctx, const struct rec *got, long ngot, const struct rec *want, long nwant,
                          int key_index)
{
    struct rec *g = xmalloc((size_t)ngot * sizeof *g), *w = xmalloc((size_t)nwant * sizeof *w);
    int (*cmp)(const void *, const void *) = key_index ? by_index : by_offset;
    long i;

    memcpy(g, got, (size_t)ngot * sizeof *g);
    memcpy(w, want, (size_t)nwant * sizeof *w);
    qsort(g, (size_t)ngot, sizeof *g, cmp);
    qsort(w, (size_t)nwant, sizeof *w, cmp);
    for (i = 0; i < ngot && i < nwant; i++) {
        const struct rec *x = &g[i], *y = &w[i];
        REQUIRE(cmp(x, y) == 0 && x->size == y->size && x->digest == y->digest,
                "%s: event %ld: got buffer %llu (#%u) record %u size %u, want buffer %llu (#%u) record %u "
                "size %u%s", ctx, i, (unsigned long long)x->buf, x->index, x->off, x->size,
                (unsigned long long)y->buf, y->index, y->off, y->size,
                cmp(x, y) == 0 ? " (other bytes)" : "");
    }
    REQUIRE(ngot == nwant, "%s: %ld events delivered, want %ld", ctx, ngot, nwant);
    free(g);
    free(w);
}

/* The events of o that pass keep(rec, arg), in a new array. */
static struct rec *select_events(const struct outcome *o, int (*keep)(const struct rec *, const void *),
                                 const void *arg, long *n)
{
    struct rec *v = xmalloc((size_t)o->n * sizeof *v);
    *n = 0;
    for (long i = 0; i < o->n; i++)
        if (keep(&o->ev[i], arg)) v[(*n)++] = o->ev[i];
    return v;
}

/* Every event of got that came from buffer (offset buf, or index when key_index) is one of
   orig's events of that buffer, byte for byte; returns how many there were. */
static long events_are_genuine(const char *ctx, const struct outcome *got, const struct outcome *orig, uint64_t buf,
                               int key_index)
{
    long n = 0;
    for (long i = 0; i < got->n; i++) {
        const struct rec *x = &got->ev[i];
        int found = 0;
        if (key_index ? x->index != buf : x->buf != buf) continue;
        n++;
        for (long j = 0; j < orig->n && !found; j++) {
            const struct rec *y = &orig->ev[j];
            found = (key_index ? y->index == x->index : y->buf == x->buf) && y->off == x->off &&
                    y->size == x->size && y->digest == x->digest;
        }
        REQUIRE(found, "%s: event from buffer %llu record %u (size %u) is not in the undamaged file", ctx,
                (unsigned long long)buf, x->off, x->size);
    }
    return n;
}

static long count_in_buffer(const struct outcome *o, uint64_t buf, int key_index)
{
    long n = 0;
    for (long i = 0; i < o->n; i++) n += key_index ? o->ev[i].index == buf : o->ev[i].buf == buf;
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Samples and their buffers */

#define MAX_BUFFERS 8192

/* Where the buffers of an undamaged file are: each BufferSize leads to the next. */
struct bufmap {
    int n;
    uint64_t off[MAX_BUFFERS];
    uint32_t size[MAX_BUFFERS];
    int compressed[MAX_BUFFERS];
};

static void map_buffers(const uint8_t *data, size_t size, struct bufmap *m)
{
    uint64_t off = 0;

    m->n = 0;
    while (off + ETL_BUFFER_HEADER_SIZE <= size) {
        uint32_t bs = etl_le32(data + off);
        ck_assert_int_lt(m->n, MAX_BUFFERS);
        ck_assert_uint_ge(bs, ETL_BUFFER_HEADER_SIZE);
        m->off[m->n] = off;
        m->size[m->n] = bs;
        m->compressed[m->n] = (etl_le16(data + off + ETL_BH_BUFFER_FLAG) & ETL_BUFFER_FLAG_COMPRESSED) != 0;
        m->n++;
        off += bs;
    }
    ck_assert_uint_eq(off, size);
}

/* The buffer (index into m) that holds file offset pos, or -1. */
static int buffer_at(const struct bufmap *m, uint64_t pos)
{
    for (int i = 0; i < m->n; i++)
        if (pos >= m->off[i] && pos < m->off[i] + m->size[i]) return i;
    return -1;
}

/* A sample, its buffers, and its events read in file order. */
struct sample {
    const char *name;
    uint8_t *data;
    size_t size;
    struct bufmap map;
    struct outcome full;
    char ctx[128];
};

static struct sample *sample_load(const char *name)
{
    struct sample *s = calloc(1, sizeof *s);
    char rel[256];

    ck_assert_ptr_nonnull(s);
    snprintf(rel, sizeof rel, "samples/%s", name);
    s->name = name;
    s->data = test_read_file(testdata_path(rel), &s->size);
    REQUIRE(s->data != NULL, "cannot read %s", testdata_path(rel));
    map_buffers(s->data, s->size, &s->map);
    snprintf(s->ctx, sizeof s->ctx, "%s (undamaged)", name);
    read_memory(s->data, s->size, ETL_ORDER_FILE, name, s->ctx, &s->full);
    ck_assert_int_eq(s->full.open_rc, ETL_OK);
    ck_assert_uint_eq(s->full.warnings, 0);
    ck_assert_int_gt(s->full.n, 0);
    return s;
}

static void sample_free(struct sample *s)
{
    outcome_free(&s->full);
    free(s->data);
    free(s);
}

/* Predicates for select_events. */
struct range { uint64_t lo, hi; };
struct cut { const struct bufmap *m; uint64_t at; };
static int before_cut(const struct rec *r, const void *arg)
{
    /* the whole buffer lies before the cut */
    const struct cut *a = arg;
    int i = buffer_at(a->m, r->buf);
    return i >= 0 && a->m->off[i] + a->m->size[i] <= a->at;
}
static int not_in_buffer(const struct rec *r, const void *arg)
{
    return r->buf != *(const uint64_t *)arg;
}
static int not_in_buffer_index(const struct rec *r, const void *arg)
{
    return r->index != *(const uint32_t *)arg;
}
static int before_record(const struct rec *r, const void *arg)
{
    /* not in buffer lo at or after record hi */
    const struct range *a = arg;
    return r->buf != a->lo || r->off < a->hi;
}
static int keep_all(const struct rec *r, const void *arg)
{
    (void)r;
    (void)arg;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Not ETL at all */

static void expect_fatal(const uint8_t *data, size_t size, const char *name, const char *want)
{
    struct outcome o;
    read_memory(data, size, ETL_ORDER_FILE, name, name, &o);
    REQUIRE(o.open_rc == ETL_FATAL, "%s: open gave %d, want ETL_FATAL", name, o.open_rc);
    REQUIRE(strstr(o.error, want) != NULL, "%s: message \"%s\" lacks \"%s\"", name, o.error, want);
    REQUIRE(strstr(o.error, name) == o.error, "%s: message \"%s\" does not start with the name", name, o.error);
    outcome_free(&o);
}

START_TEST(not_etl_files)
{
    static const uint8_t png[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
    uint8_t *buf = xmalloc(4096);
    size_t n = 0;

    expect_fatal((const uint8_t *)"", 0, "empty.etl", "not an ETL file: the file is empty");
    expect_fatal((const uint8_t *)"0123456789", 10, "ten-bytes.etl", "not an ETL file: 10 bytes");
    while (n + 40 <= 4096) {
        memcpy(buf + n, "This is a text file, not a trace log.\n", 38);
        n += 38;
    }
    expect_fatal(buf, n, "text.etl", "not an ETL file: the buffer at offset 0 is not a header buffer");
    memset(buf, 0, 4096);
    memcpy(buf, png, sizeof png);
    expect_fatal(buf, 4096, "image.png", "not an ETL file");
    /* A plausible header buffer whose first record is not the logfile header event. */
    memset(buf, 0xFF, 4096);
    memset(buf, 0, ETL_BUFFER_HEADER_SIZE);
    etl_put32(buf, 4096);
    etl_put32(buf + ETL_BH_OFFSET, 0x100);
    etl_put16(buf + ETL_BH_BUFFER_TYPE, ETL_BUFFER_TYPE_HEADER);
    expect_fatal(buf, 4096, "no-logfile-header.etl", "not an ETL file: the record at offset 72");
    free(buf);
}
END_TEST

/* A real file damaged at its start: the header buffer is not one. */
START_TEST(header_buffer_damaged)
{
    struct sample *s = sample_load("tx_HTTP_Server.etl");
    uint8_t *d = dup_bytes(s->data, s->size);

    etl_put16(d + ETL_BH_BUFFER_TYPE, ETL_BUFFER_TYPE_GENERIC);
    expect_fatal(d, s->size, "type-generic.etl", "not an ETL file: the buffer at offset 0 is not a header buffer");
    memcpy(d, s->data, s->size);
    etl_put16(d + ETL_BH_BUFFER_FLAG, ETL_BUFFER_FLAG_COMPRESSED);
    expect_fatal(d, s->size, "header-compressed.etl", "offset 0");
    /* Without its header buffer the file starts with a data buffer. */
    expect_fatal(s->data + s->map.off[1], s->size - s->map.off[1], "headless.etl", "not an ETL file");
    /* The logfile header event's Size cut below a TRACE_LOGFILE_HEADER. */
    memcpy(d, s->data, s->size);
    etl_put16(d + ETL_BUFFER_HEADER_SIZE + 4, 0x40);
    expect_fatal(d, s->size, "short-logfile-header.etl", "offset 72");
    /* A gzip header followed by garbage. */
    memcpy(d, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", 17);
    expect_fatal(d, 17, "garbage.etl.gz", "not an ETL file: the file is empty");
    free(d);
    sample_free(s);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Truncation */

static const char *const cut_samples[] = {
    "tx_HTTP_Server.etl", "perfview_SelfDescribingSingleEvent.etl", "krabsetw_powershell.etl",
    "airbus_AMSITrace.etl", "perfview_smallEtlFile.etl",
};
#define N_CUT_SAMPLES ((int)(sizeof cut_samples / sizeof cut_samples[0]))

/* Cut exactly where a buffer ends: the file is only shorter. */
START_TEST(cut_at_buffer_boundaries)
{
    struct sample *s = sample_load(cut_samples[_i]);

    for (int i = 1; i <= s->map.n; i++) {
        uint64_t cut = i < s->map.n ? s->map.off[i] : s->size;
        struct cut arg = { &s->map, cut };
        struct outcome o, t;
        struct rec *want;
        long nwant;
        char ctx[256];

        snprintf(ctx, sizeof ctx, "%s cut at %llu (buffer boundary)", s->name, (unsigned long long)cut);
        read_memory(s->data, cut, ETL_ORDER_FILE, "cut.etl", ctx, &o);
        REQUIRE(o.open_rc == ETL_OK && o.warnings == 0, "%s: open %d, %u warnings: %s", ctx, o.open_rc,
                o.warnings, o.first_report);
        want = select_events(&s->full, before_cut, &arg, &nwant);
        expect_events(ctx, o.ev, o.n, want, nwant, 0);
        read_memory(s->data, cut, ETL_ORDER_TIME, "cut.etl", ctx, &t);
        ck_assert_uint_eq(t.warnings, 0);
        expect_events(ctx, t.ev, t.n, want, nwant, 0);
        free(want);
        outcome_free(&o);
        outcome_free(&t);
    }
    sample_free(s);
}
END_TEST

/* Cut inside a buffer: a warning naming the offset; every complete buffer delivered, and of the
   cut buffer only records that are wholly present (exactly those, when it is not compressed). */
START_TEST(cut_inside_buffers)
{
    struct sample *s = sample_load(cut_samples[_i]);
    long cuts = 0;

    for (int i = 0; i < s->map.n; i++) {
        uint64_t start = s->map.off[i], end = start + s->map.size[i];
        uint64_t at[] = { start + 1, start + 2, start + 0x47, start + 0x48, start + 0x49, start + 0x1234,
                          start + (end - start) / 2, end - 1 };
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            uint64_t cut = at[k];
            struct cut arg = { &s->map, start };
            struct outcome o;
            struct rec *want;
            long nwant, partial, whole = 0;
            char ctx[256];

            if (cut <= start || cut >= end) continue;
            cuts++;
            snprintf(ctx, sizeof ctx, "%s cut at %llu (buffer %d at %llu + %llu)", s->name, (unsigned long long)cut,
                     i, (unsigned long long)start, (unsigned long long)(cut - start));
            read_memory(s->data, cut, ETL_ORDER_FILE, "cut.etl", ctx, &o);
            if (i == 0) {
                /* Inside the header buffer: not an ETL file, or the logfile header survives. */
                REQUIRE(o.open_rc == ETL_FATAL || o.open_rc == ETL_WARN, "%s: open gave %d", ctx, o.open_rc);
                if (o.open_rc == ETL_WARN) events_are_genuine(ctx, &o, &s->full, 0, 0);
                outcome_free(&o);
                continue;
            }
            REQUIRE(o.open_rc == ETL_WARN && o.warnings >= 1, "%s: open gave %d, %u warnings", ctx, o.open_rc,
                    o.warnings);
            for (unsigned w = 0; w < o.reports && w < MAX_REPORTS; w++)
                REQUIRE(o.report_off[w] >= (int64_t)start && o.report_off[w] < (int64_t)cut,
                        "%s: damage reported at offset %lld, outside the cut buffer", ctx,
                        (long long)o.report_off[w]);
            /* The complete buffers before the cut, exactly... */
            want = select_events(&s->full, before_cut, &arg, &nwant);
            {
                long nbefore;
                struct rec *before = select_events(&o, before_cut, &arg, &nbefore);
                expect_events(ctx, before, nbefore, want, nwant, 0);
                free(before);
            }
            /* ...and of the cut buffer only genuine records that are wholly in the file. */
            partial = events_are_genuine(ctx, &o, &s->full, start, 0);
            REQUIRE(o.n == nwant + partial, "%s: %ld events, %ld of them from complete buffers and %ld from the "
                    "cut one", ctx, o.n, nwant, partial);
            for (long j = 0; j < s->full.n; j++) {
                const struct rec *r = &s->full.ev[j];
                if (r->buf == start && start + r->off + r->size <= cut) whole++;
            }
            if (s->map.compressed[i]) /* record offsets are in the decompressed buffer */
                REQUIRE(partial <= count_in_buffer(&s->full, start, 0), "%s: %ld events of the cut buffer", ctx,
                        partial);
            else
                REQUIRE(partial == whole, "%s: %ld events of the cut buffer, want the %ld wholly present", ctx,
                        partial, whole);
            free(want);
            outcome_free(&o);
        }
    }
    ck_assert_int_gt(cuts, s->map.n);
    sample_free(s);
}
END_TEST

/* .etl.gz cut short: the readable prefix is read, with a warning. */
START_TEST(cut_gzip)
{
    struct sample *s = sample_load("tx_HTTP_Server.etl");
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096], ctx[256];
    uint8_t *gz;
    size_t gzsize;
    gzFile g;
    FILE *f;
    struct outcome o;

    snprintf(path, sizeof path, "%s/libetl-damage-%ld.etl.gz", dir, (long)getpid());
    g = gzopen(path, "wb");
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(gzwrite(g, s->data, (unsigned)s->size), (int)s->size);
    gzclose(g);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    gz = xmalloc(s->size + 1024);
    gzsize = fread(gz, 1, s->size + 1024, f);
    fclose(f);
    ck_assert_uint_gt(gzsize, 1000);

    {
        size_t cut = gzsize / 2;
        struct cut arg = { &s->map, 0 };
        struct rec *want;
        long nwant, partial, nbefore;
        struct rec *before;
        uint64_t got_size, start;
        etl_reader *r = NULL;

        f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(gz, 1, cut, f), cut);
        fclose(f);
        snprintf(ctx, sizeof ctx, "%s gzipped and cut at %zu of %zu bytes", s->name, cut, gzsize);
        read_path(path, ETL_ORDER_FILE, "cut.etl.gz", ctx, &o);
        REQUIRE(o.open_rc == ETL_WARN, "%s: open gave %d", ctx, o.open_rc);
        REQUIRE(strstr(o.first_report, "gzip") && strstr(o.first_report, "truncated"),
                "%s: first report: %s", ctx, o.first_report);
        /* What gunzip gave: a prefix of the file; its complete buffers are all read. */
        ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_WARN);
        got_size = etl_reader_info(r)->file_size;
        etl_reader_close(r);
        REQUIRE(got_size > 0 && got_size < s->size, "%s: %llu bytes after gunzip", ctx,
                (unsigned long long)got_size);
        start = s->map.off[buffer_at(&s->map, got_size)];
        arg.at = start;
        want = select_events(&s->full, before_cut, &arg, &nwant);
        before = select_events(&o, before_cut, &arg, &nbefore);
        ck_assert_int_gt(nwant, 0);
        expect_events(ctx, before, nbefore, want, nwant, 0);
        partial = events_are_genuine(ctx, &o, &s->full, start, 0);
        ck_assert_int_eq(o.n, nwant + partial);
        /* of the cut buffer, exactly the records wholly present */
        for (long j = 0; j < s->full.n; j++) {
            const struct rec *x = &s->full.ev[j];
            partial -= x->buf == start && start + x->off + x->size <= got_size;
        }
        REQUIRE(partial == 0, "%s: %ld events of the cut buffer too many", ctx, partial);
        free(want);
        free(before);
        outcome_free(&o);
    }
    /* Cut inside the gzip header: nothing to read. */
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(gz, 1, 6, f), 6);
    fclose(f);
    snprintf(ctx, sizeof ctx, "%s gzipped and cut at 6 bytes", s->name);
    read_path(path, ETL_ORDER_FILE, "cut.etl.gz", ctx, &o);
    ck_assert_int_eq(o.open_rc, ETL_FATAL);
    outcome_free(&o);
    unlink(path);
    free(gz);
    sample_free(s);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Damaged buffer headers: the damaged buffer is lost, nothing else */

/* Reads d (s damaged) in both orders: warnings == nwarn, the first at offset at, and the
   events of s except those of buffer lost (file offset; UINT64_MAX: none). */
static void expect_buffer_lost(const struct sample *s, const uint8_t *d, size_t size, const char *ctx, uint64_t lost,
                               unsigned nwarn, int64_t at)
{
    struct rec *want;
    long nwant;

    want = lost == UINT64_MAX ? select_events(&s->full, keep_all, NULL, &nwant)
                              : select_events(&s->full, not_in_buffer, &lost, &nwant);
    ck_assert_int_lt(nwant, s->full.n + (lost == UINT64_MAX));
    /* A record the damage changed (the logfile header event) has other bytes now. */
    for (long j = 0; j < nwant; j++) {
        int b = buffer_at(&s->map, want[j].buf);
        if (!s->map.compressed[b]) want[j].digest = fnv1a(d + want[j].buf + want[j].off, want[j].size);
    }
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        struct outcome o;
        read_memory(d, size, order, "damaged.etl", ctx, &o);
        REQUIRE(o.open_rc == ETL_WARN, "%s: open gave %d", ctx, o.open_rc);
        REQUIRE(o.warnings == nwarn, "%s: %u warnings, want %u; first: %s", ctx, o.warnings, nwarn,
                o.first_report);
        REQUIRE(o.report_off[0] == at, "%s: damage reported at offset %lld, want %lld: %s", ctx,
                (long long)o.report_off[0], (long long)at, o.first_report);
        expect_events(ctx, o.ev, o.n, want, nwant, 0);
        outcome_free(&o);
    }
    free(want);
}

/* Whether a compressed buffer's BufferSize could be right: the reader then reads the buffer up to
   where the next one starts, else it skips the buffer. */
static int plausible_compressed_size(uint32_t v, uint32_t logical)
{
    return v >= ETL_BUFFER_HEADER_SIZE &&
           v - ETL_BUFFER_HEADER_SIZE <= etl_xpress_compress_bound(logical - ETL_BUFFER_HEADER_SIZE);
}

START_TEST(buffer_size_damaged)
{
    static const char *const names[] = { "tx_HTTP_Server.etl", "airbus_AMSITrace.etl",
                                         "perfview_SelfDescribingSingleEvent.etl" };
    struct sample *s = sample_load(names[_i]);
    uint8_t *d = dup_bytes(s->data, s->size);
    int mid = s->map.n > 3 ? s->map.n / 2 : 1, last = s->map.n - 1;
    uint64_t m = s->map.off[mid], l = s->map.off[last];
    uint32_t logical = etl_le32(s->data + ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_BUFFER_SIZE);
    const uint32_t bad[] = { 0, 1, ETL_BUFFER_HEADER_SIZE - 1, (uint32_t)(s->size - m + 1),
                             (uint32_t)(s->size - m) + 8192, 0x7FFFFFFFu, 0xFFFFFFFFu };
    char ctx[256];

    ck_assert_int_gt(count_in_buffer(&s->full, m, 0), 0);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint32_t v = bad[k];
        /* A middle buffer: the reader finds the next one; a compressed buffer whose BufferSize
           could be right is read up to there. */
        memcpy(d, s->data, s->size);
        etl_put32(d + m, v);
        snprintf(ctx, sizeof ctx, "%s: BufferSize %u in buffer %d at %llu", s->name, v, mid, (unsigned long long)m);
        expect_buffer_lost(s, d, s->size, ctx,
                           s->map.compressed[mid] && plausible_compressed_size(v, logical) ? UINT64_MAX : m, 1,
                           (int64_t)m);
        /* The last buffer: beyond the end of the file, or too small. */
        if (v == (uint32_t)(s->size - m + 1)) v = (uint32_t)(s->size - l + 1);
        memcpy(d, s->data, s->size);
        etl_put32(d + l, v);
        snprintf(ctx, sizeof ctx, "%s: BufferSize %u in the last buffer at %llu", s->name, v, (unsigned long long)l);
        expect_buffer_lost(s, d, s->size, ctx,
                           s->map.compressed[last] && plausible_compressed_size(v, logical) ? UINT64_MAX : l, 1,
                           (int64_t)l);
    }
    /* The header buffer's BufferSize, and the logfile header's: nothing is lost. */
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memcpy(d, s->data, s->size);
        etl_put32(d, bad[k]);
        snprintf(ctx, sizeof ctx, "%s: BufferSize %u in the header buffer", s->name, bad[k]);
        expect_buffer_lost(s, d, s->size, ctx, UINT64_MAX, 1, 0);
        if (bad[k] >= ETL_MIN_BUFFER_SIZE && bad[k] <= ETL_MAX_BUFFER_SIZE) continue;
        memcpy(d, s->data, s->size);
        etl_put32(d + ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_BUFFER_SIZE, bad[k]);
        snprintf(ctx, sizeof ctx, "%s: BufferSize %u in the logfile header", s->name, bad[k]);
        expect_buffer_lost(s, d, s->size, ctx, UINT64_MAX, 1, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE);
    }
    free(d);
    sample_free(s);
}
END_TEST

/* Other damaged header fields of a middle buffer: that buffer is lost, nothing else. */
START_TEST(buffer_header_fields_damaged)
{
    struct sample *s = sample_load("tx_HTTP_Server.etl");
    uint8_t *d = dup_bytes(s->data, s->size);
    int mid = s->map.n / 2;
    uint64_t m = s->map.off[mid];
    char ctx[256];

    etl_put32(d + m + ETL_BH_OFFSET, 0x10); /* used size below a buffer header */
    snprintf(ctx, sizeof ctx, "%s: Offset 16 in buffer %d", s->name, mid);
    expect_buffer_lost(s, d, s->size, ctx, m, 1, (int64_t)m);
    memcpy(d, s->data, s->size);
    etl_put32(d + m + ETL_BH_OFFSET, s->map.size[mid] + 8); /* used size beyond the buffer */
    snprintf(ctx, sizeof ctx, "%s: Offset beyond BufferSize in buffer %d", s->name, mid);
    expect_buffer_lost(s, d, s->size, ctx, m, 1, (int64_t)m);
    memcpy(d, s->data, s->size);
    etl_put16(d + m + ETL_BH_BUFFER_TYPE, 0x77);
    snprintf(ctx, sizeof ctx, "%s: BufferType 0x77 in buffer %d", s->name, mid);
    expect_buffer_lost(s, d, s->size, ctx, m, 1, (int64_t)m);
    memcpy(d, s->data, s->size);
    /* flagged compressed, with a BufferSize that leads 8 bytes into the next buffer */
    etl_put16(d + m + ETL_BH_BUFFER_FLAG, etl_le16(d + m + ETL_BH_BUFFER_FLAG) | ETL_BUFFER_FLAG_COMPRESSED);
    etl_put32(d + m, s->map.size[mid] + 8);
    snprintf(ctx, sizeof ctx, "%s: buffer %d flagged compressed, BufferSize 8 too large", s->name, mid);
    expect_buffer_lost(s, d, s->size, ctx, m, 1, (int64_t)m);
    memcpy(d, s->data, s->size);
    memset(d + m, 0, ETL_BUFFER_HEADER_SIZE); /* a zeroed buffer header */
    snprintf(ctx, sizeof ctx, "%s: zeroed header of buffer %d", s->name, mid);
    expect_buffer_lost(s, d, s->size, ctx, m, 1, (int64_t)m);
    free(d);
    sample_free(s);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Damaged records */

/* Sets a record's Size field, wherever its kind keeps it (doc/format.md section 4.1). */
static void set_record_size(uint8_t *p, uint16_t size)
{
    unsigned type = p[2];
    if (p[3] == 0xC0 && (type <= ETL_HT_COMPACT64 || type == ETL_HT_PERFINFO32 || type == ETL_HT_PERFINFO64))
        etl_put16(p + 4, size);
    else
        etl_put16(p, size);
}

enum record_damage { REC_OVERRUN, REC_ZERO_SIZE, REC_SMALL_SIZE, REC_UNKNOWN_TYPE, REC_BAD_MARKER, REC_FILL,
                     REC_EXT_SIZE, REC_EXT_OVERRUN, REC_EXT_CHAIN, REC_DAMAGE_KINDS };
static const char *const record_damage_names[] = {
    "Size overruns the used size", "Size 0", "Size 12", "unknown header type 0x7F", "marker 0x00",
    "first dword 0xFFFFFFFF (the fill, before the used size)",
    "extended item size 3", "extended item overruns the record", "extended item chain runs off the record",
};
/* What the report says of each. */
static const char *const record_damage_reports[] = {
    "record overruns the buffer's used size", "record smaller than its header", "record smaller than its header",
    "unknown trace header type", "not a trace header",
    "0xFFFFFFFF fill before the buffer's used size", "extended data item size is invalid",
    "extended data item size is invalid", "extended data item header overruns the record",
};

/* One record of a middle buffer damaged: reported at the record's file offset; the records
   before it in that buffer and all other buffers are delivered. */
START_TEST(record_damaged)
{
    struct sample *s = sample_load("tx_HTTP_Server.etl");
    uint8_t *d = dup_bytes(s->data, s->size);
    const struct rec *victim = NULL;
    int kind = _i;
    uint8_t *p;
    uint64_t at;
    uint32_t used;
    struct range arg;
    struct rec *want;
    long nwant;
    char ctx[256];

    /* A record in the middle of a middle buffer; one with extended items for those kinds. */
    for (long j = s->full.n / 2; j < s->full.n && !victim; j++) {
        const struct rec *r = &s->full.ev[j];
        if (r->off > ETL_BUFFER_HEADER_SIZE && (kind < REC_EXT_SIZE || r->ext_count > 0)) victim = r;
    }
    ck_assert_ptr_nonnull(victim);
    at = victim->buf + victim->off;
    p = d + at;
    used = etl_le32(d + victim->buf + ETL_BH_OFFSET);
    switch (kind) {
    case REC_OVERRUN: set_record_size(p, (uint16_t)(used - victim->off + 8)); break;
    case REC_ZERO_SIZE: set_record_size(p, 0); break;
    case REC_SMALL_SIZE: set_record_size(p, 12); break;
    case REC_UNKNOWN_TYPE: p[2] = 0x7F; break;
    case REC_BAD_MARKER: p[3] = 0x00; break;
    case REC_FILL: etl_put32(p, 0xFFFFFFFFu); break;
    case REC_EXT_SIZE: etl_put16(p + ETL_EVENT_HEADER_SIZE, 3); break;
    case REC_EXT_OVERRUN:
        etl_put16(p + ETL_EVENT_HEADER_SIZE, (uint16_t)(victim->size - ETL_EVENT_HEADER_SIZE + 8));
        break;
    case REC_EXT_CHAIN: {
        /* The last item says another follows and takes the rest of the record: the chain runs
           off its end. */
        uint32_t pos = ETL_EVENT_HEADER_SIZE;
        while (etl_le16(p + pos + 4) & 1) pos += etl_le16(p + pos);
        etl_put16(p + pos + 4, 1);
        etl_put16(p + pos, (uint16_t)(victim->size - pos));
        break;
    }
    default: ck_abort();
    }
    snprintf(ctx, sizeof ctx, "%s: %s, record at %llu (buffer %llu + %u)", s->name, record_damage_names[kind],
             (unsigned long long)at, (unsigned long long)victim->buf, victim->off);
    arg.lo = victim->buf;
    arg.hi = victim->off;
    want = select_events(&s->full, before_record, &arg, &nwant);
    ck_assert_int_lt(nwant, s->full.n);
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        struct outcome o;
        read_memory(d, s->size, order, "damaged.etl", ctx, &o);
        REQUIRE(o.open_rc == ETL_OK, "%s: open gave %d: %s", ctx, o.open_rc, o.first_report);
        REQUIRE(o.warnings == 1 && o.warn_returns == 1, "%s: %u warnings, %ld WARN results", ctx, o.warnings,
                o.warn_returns);
        REQUIRE(o.report_off[0] == (int64_t)at, "%s: reported at offset %lld: %s", ctx,
                (long long)o.report_off[0], o.first_report);
        REQUIRE(strstr(o.first_report, record_damage_reports[kind]) != NULL, "%s: reported \"%s\"", ctx,
                o.first_report);
        expect_events(ctx, o.ev, o.n, want, nwant, 0);
        outcome_free(&o);
    }
    free(want);
    free(d);
    sample_free(s);
}
END_TEST

/* A buffer whose used size (Offset) ends 4 bytes into a SYSTEM_TRACE_HEADER: the record is
   reported, and nothing past the used size is read (its Size field at +4 lies beyond it; the
   random test found the over-read under AddressSanitizer). */
START_TEST(record_header_cut_by_used_size)
{
    struct synth_options so;
    struct synth *sy;
    uint8_t rec[64], payload[16] = { 0 }, *file;
    size_t size;
    struct bufmap *m = xmalloc(sizeof *m);
    struct outcome g;
    uint32_t n = 0, cut;
    char ctx[] = "synthetic trace, Offset 4 bytes into the 20th record";

    memset(&so, 0, sizeof so);
    so.buffer_size = 4096;
    so.cpus = 2;
    sy = synth_new(&so);
    for (int i = 0; i < 20; i++) {
        n = synth_system(rec, 1, 0, 1000000 + i, 0x0524, 2, 4, 8, payload, sizeof payload);
        ck_assert_int_eq(synth_add(sy, 1, rec, n), 0);
    }
    file = synth_finish(sy, &size);
    map_buffers(file, size, m);
    ck_assert_int_eq(m->n, 2);
    read_memory(file, size, ETL_ORDER_FILE, "synth.etl", "synthetic trace", &g);
    ck_assert_int_eq(g.n, 2 + 20);
    /* the 20th record starts at 72 + 19 * 48; the used size keeps only its first 4 bytes, and
       is the largest in the file, so that the reader's buffer ends there */
    cut = ETL_BUFFER_HEADER_SIZE + 19 * etl_align8(n);
    ck_assert_uint_gt(cut, etl_le32(file + ETL_BH_OFFSET));
    etl_put32(file + m->off[1] + ETL_BH_OFFSET, cut + 4);
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        struct outcome o;
        read_memory(file, size, order, "damaged.etl", ctx, &o);
        REQUIRE(o.warnings == 1 && o.report_off[0] == (int64_t)(m->off[1] + cut), "%s: %u warnings, first at %lld: %s",
                ctx, o.warnings, (long long)o.report_off[0], o.first_report);
        REQUIRE(strstr(o.first_report, "record overruns the buffer's used size") != NULL, "%s: %s", ctx,
                o.first_report);
        expect_events(ctx, o.ev, o.n, g.ev, g.n - 1, 0);
        outcome_free(&o);
    }
    outcome_free(&g);
    free(m);
    free(file);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Garbage after the last buffer */

START_TEST(garbage_after_last_buffer)
{
    static const char *const names[] = { "tx_HTTP_Server.etl", "perfview_SelfDescribingSingleEvent.etl" };
    struct sample *s = sample_load(names[_i]);
    /* warnings -1: at least one */
    struct { const char *what; size_t n; int fill; int warnings; } cases[] = {
        { "100 random bytes", 100, -1, 1 },
        { "20000 random bytes", 20000, -1, 1 },
        { "10 bytes of 0xFF", 10, 0xFF, 0 },
        { "100 bytes of 0xFF", 100, 0xFF, 0 },
        { "70000 bytes of 0xFF", 70000, 0xFF, 0 },
        { "20 zero bytes", 20, 0, 1 },
        { "20000 zero bytes", 20000, 0, 1 },
        { "the first 48 bytes of a buffer header", 48, -2, 1 },
        { "a buffer header alone", ETL_BUFFER_HEADER_SIZE, -3, -1 },
    };
    uint64_t seed = 12345;

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t size = s->size + cases[k].n;
        uint8_t *d = xmalloc(size);
        struct rec *want;
        long nwant;
        char ctx[256];

        memcpy(d, s->data, s->size);
        for (size_t i = 0; i < cases[k].n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            d[s->size + i] = cases[k].fill >= 0 ? (uint8_t)cases[k].fill : (uint8_t)(seed >> 56);
        }
        if (cases[k].fill <= -2) memcpy(d + s->size, s->data + s->map.off[1], cases[k].n);
        snprintf(ctx, sizeof ctx, "%s followed by %s", s->name, cases[k].what);
        want = select_events(&s->full, keep_all, NULL, &nwant);
        for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
            struct outcome o;
            read_memory(d, size, order, "garbage.etl", ctx, &o);
            REQUIRE(cases[k].warnings < 0 ? o.warnings >= 1 : o.warnings == (unsigned)cases[k].warnings,
                    "%s: %u warnings, want %d: %s", ctx, o.warnings, cases[k].warnings, o.first_report);
            if (o.warnings)
                REQUIRE(o.report_off[0] == (int64_t)s->size, "%s: reported at %lld: %s", ctx,
                        (long long)o.report_off[0], o.first_report);
            expect_events(ctx, o.ev, o.n, want, nwant, 0);
            outcome_free(&o);
        }
        free(want);
        free(d);
    }
    sample_free(s);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Compressed buffers */

static const etl_guid synth_provider = { 0x12345678, 0x1234, 0x5678, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* A compressed trace of 2 processors with small buffers; record bad_at (if >= 0) lies about its
   Size (0). */
static uint8_t *synth_compressed(int bad_at, size_t *size)
{
    struct synth_options so;
    struct synth *s;
    uint8_t rec[1024], payload[600];

    memset(&so, 0, sizeof so);
    so.buffer_size = 4096;
    so.cpus = 2;
    so.compressed = 1;
    s = synth_new(&so);
    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < 240; i++) {
        uint32_t len = 16 + (uint32_t)(i * 37) % 500, n;
        for (uint32_t j = 0; j < len; j++) payload[j] = (uint8_t)(i + j / 7);
        n = synth_event_header(rec, 1, 1000000 + i * 100, &synth_provider, (uint16_t)(i % 50), 0, 4, 0, 0, 0, 1234,
                               5678, NULL, 0, payload, len);
        if (i == bad_at) set_record_size(rec, 0);
        ck_assert_int_eq(synth_add(s, (unsigned)i % 2, rec, n), 0);
    }
    return synth_finish(s, size);
}

enum compressed_damage { XP_TRUNCATED, XP_MATCH_BEFORE_START, XP_OFFSET_SHORT, XP_APPENDED, XP_GARBAGE,
                         XP_ZEROED, XP_DAMAGE_KINDS };
static const char *const compressed_damage_names[] = {
    "stream cut in half", "a match before the start", "Offset 64 bytes short (stream too long)",
    "bytes appended to the stream", "32 garbage bytes in the stream", "the stream zeroed",
};

/* Replaces buffer k's compressed stream by its first keep bytes and then extra bytes; returns
   the new file. */
static uint8_t *splice_stream(const uint8_t *data, size_t size, const struct bufmap *m, int k, uint32_t keep,
                              const uint8_t *extra, uint32_t nextra, size_t *out_size)
{
    uint64_t start = m->off[k], end = start + m->size[k];
    size_t n = (size_t)(start + ETL_BUFFER_HEADER_SIZE + keep + nextra + (size - end));
    uint8_t *d = xmalloc(n), *p = d;

    memcpy(p, data, start + ETL_BUFFER_HEADER_SIZE + keep);
    p += start + ETL_BUFFER_HEADER_SIZE + keep;
    if (nextra) memcpy(p, extra, nextra);
    p += nextra;
    memcpy(p, data + end, size - end);
    etl_put32(d + start, ETL_BUFFER_HEADER_SIZE + keep + nextra);
    *out_size = n;
    return d;
}

/* One compressed buffer damaged: the damage is reported inside it; all other buffers' events
   are delivered, and of the damaged buffer only genuine ones. _i: damage kind, and which file. */
START_TEST(compressed_buffer_damaged)
{
    int kind = _i % XP_DAMAGE_KINDS, real = _i / XP_DAMAGE_KINDS;
    struct sample *s = real ? sample_load("perfview_SelfDescribingSingleEvent.etl") : xmalloc(sizeof *s);
    struct outcome *orig = &s->full;
    uint8_t *d, extra[64];
    size_t size;
    struct bufmap *dm = xmalloc(sizeof *dm);
    int k;
    uint32_t lost_index, clen;
    struct rec *want;
    long nwant;
    char ctx[256];

    if (!real) {
        memset(s, 0, sizeof *s);
        s->name = "synthetic compressed trace";
        s->data = synth_compressed(-1, &s->size);
        map_buffers(s->data, s->size, &s->map);
        read_memory(s->data, s->size, ETL_ORDER_FILE, "synth.etl", s->name, &s->full);
        ck_assert_int_eq(s->full.open_rc, ETL_OK);
        ck_assert_int_ge(s->map.n, 8);
    }
    k = real ? 1 : s->map.n / 2;
    ck_assert(s->map.compressed[k]);
    clen = s->map.size[k] - ETL_BUFFER_HEADER_SIZE;
    for (size_t i = 0; i < sizeof extra; i++) extra[i] = (uint8_t)(0x5A + 13 * i);
    switch (kind) {
    case XP_TRUNCATED: d = splice_stream(s->data, s->size, &s->map, k, clen / 2, NULL, 0, &size); break;
    case XP_APPENDED: d = splice_stream(s->data, s->size, &s->map, k, clen, extra, sizeof extra, &size); break;
    default:
        d = dup_bytes(s->data, s->size);
        size = s->size;
        break;
    }
    {
        uint8_t *z = d + s->map.off[k] + ETL_BUFFER_HEADER_SIZE;
        switch (kind) {
        case XP_MATCH_BEFORE_START:
            /* Flag word: a match first; the match: offset 1, length 3, at output position 0. */
            etl_put32(z, 0x80000000u);
            etl_put16(z + 4, 0);
            break;
        case XP_OFFSET_SHORT:
            etl_put32(d + s->map.off[k] + ETL_BH_OFFSET, etl_le32(d + s->map.off[k] + ETL_BH_OFFSET) - 64);
            break;
        case XP_GARBAGE: memcpy(z + clen / 2, extra, 32); break;
        case XP_ZEROED: memset(z, 0, clen); break;
        default: break;
        }
    }
    map_buffers(d, size, dm);
    snprintf(ctx, sizeof ctx, "%s: %s in buffer %d at %llu", s->name, compressed_damage_names[kind], k,
             (unsigned long long)s->map.off[k]);
    lost_index = (uint32_t)k;
    want = select_events(orig, not_in_buffer_index, &lost_index, &nwant);
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        struct outcome o;
        long partial;
        read_memory(d, size, order, "damaged.etl", ctx, &o);
        REQUIRE(o.warnings >= 1, "%s: no warning", ctx);
        for (unsigned w = 0; w < o.reports && w < MAX_REPORTS; w++)
            REQUIRE(o.report_off[w] >= (int64_t)dm->off[k] && o.report_off[w] < (int64_t)(dm->off[k] + dm->size[k]),
                    "%s: damage reported at %lld, outside the buffer [%llu, %llu): %s", ctx,
                    (long long)o.report_off[w], (unsigned long long)dm->off[k],
                    (unsigned long long)(dm->off[k] + dm->size[k]), o.first_report);
        {
            long nother;
            struct rec *other = select_events(&o, not_in_buffer_index, &lost_index, &nother);
            expect_events(ctx, other, nother, want, nwant, 1);
            free(other);
        }
        if (kind == XP_MATCH_BEFORE_START) /* at the match, after the first flag word */
            REQUIRE(o.report_off[0] == (int64_t)(dm->off[k] + ETL_BUFFER_HEADER_SIZE + 4), "%s: reported at %lld: %s",
                    ctx, (long long)o.report_off[0], o.first_report);
        partial = events_are_genuine(ctx, &o, orig, (uint64_t)k, 1);
        ck_assert_int_le(partial, count_in_buffer(orig, (uint64_t)k, 1));
        if (kind == XP_MATCH_BEFORE_START || kind == XP_ZEROED) ck_assert_int_eq(partial, 0);
        outcome_free(&o);
    }
    free(want);
    free(dm);
    free(d);
    sample_free(s);
}
END_TEST

/* A bad record inside a compressed buffer: reported at that buffer's offset; the records before
   it and all other buffers are delivered. */
START_TEST(compressed_record_damaged)
{
    const int bad_at = 121;
    size_t size, bad_size;
    uint8_t *good = synth_compressed(-1, &size), *bad = synth_compressed(bad_at, &bad_size);
    struct bufmap *m = xmalloc(sizeof *m);
    struct outcome g, o;
    struct range arg;
    struct rec *want, victim = { 0 };
    long nwant;
    char ctx[] = "synthetic compressed trace: record 121 with Size 0";

    read_memory(good, size, ETL_ORDER_FILE, "synth.etl", "synthetic compressed trace", &g);
    ck_assert_int_eq(g.n, 240 + 2);
    for (long j = 0; j < g.n; j++)
        if (g.ev[j].ts == 1000000 + bad_at * 100) victim = g.ev[j];
    ck_assert_int_gt(victim.off, ETL_BUFFER_HEADER_SIZE);
    /* The victim is found by index: compressed sizes (and so offsets) differ between the files. */
    for (long j = 0; j < g.n; j++) g.ev[j].buf = g.ev[j].index;
    arg.lo = victim.index;
    arg.hi = victim.off;
    want = select_events(&g, before_record, &arg, &nwant);
    ck_assert_int_lt(nwant, g.n - 1);
    map_buffers(bad, bad_size, m);
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        read_memory(bad, bad_size, order, "damaged.etl", ctx, &o);
        REQUIRE(o.warnings == 1, "%s: %u warnings", ctx, o.warnings);
        REQUIRE(o.report_off[0] == (int64_t)m->off[victim.index], "%s: reported at %lld, want %llu: %s", ctx,
                (long long)o.report_off[0], (unsigned long long)m->off[victim.index], o.first_report);
        REQUIRE(strstr(o.first_report, "record smaller than its header") != NULL, "%s: %s", ctx,
                o.first_report);
        for (long j = 0; j < o.n; j++) o.ev[j].buf = o.ev[j].index;
        expect_events(ctx, o.ev, o.n, want, nwant, 1);
        outcome_free(&o);
    }
    free(want);
    free(m);
    outcome_free(&g);
    free(good);
    free(bad);
}
END_TEST

/* Thousands of compressed buffers whose BufferSize leads 8 bytes too far: each next buffer is
   found again, and finding it reads a few kilobytes, not a megabyte each time (a 2 MB fuzzed
   file took 30 s under AddressSanitizer). */
START_TEST(many_damaged_compressed_buffers)
{
    struct synth_options so;
    struct synth *sy;
    struct bufmap *m = xmalloc(sizeof *m);
    struct test_counting_source c;
    struct outcome g, o;
    uint8_t rec[256], payload[64];
    uint8_t *file;
    size_t size;
    char ctx[] = "synthetic compressed trace, every BufferSize 8 too large";

    memset(&so, 0, sizeof so);
    so.buffer_size = 1024;
    so.cpus = 1;
    so.compressed = 1;
    sy = synth_new(&so);
    for (int i = 0; i < 36000; i++) {
        uint32_t n;
        for (size_t j = 0; j < sizeof payload; j++) payload[j] = (uint8_t)(i * 7 + j * 13);
        n = synth_event_header(rec, 1, 1000000 + i, &synth_provider, 1, 0, 4, 0, 0, 0, 1, 2, NULL, 0, payload,
                               (uint32_t)(i % 64));
        ck_assert_int_eq(synth_add(sy, 0, rec, n), 0);
    }
    file = synth_finish(sy, &size);
    map_buffers(file, size, m);
    ck_assert_int_gt(m->n, 3000);
    read_memory(file, size, ETL_ORDER_FILE, "synth.etl", "synthetic compressed trace", &g);
    ck_assert_int_eq(g.n, 36000 + 2);
    for (int k = 1; k < m->n; k++) etl_put32(file + m->off[k], m->size[k] + 8);
    c.data = file;
    c.size = size;
    c.bytes = 0;
    read_counting(&c, ETL_ORDER_FILE, "damaged.etl", ctx, &o);
    REQUIRE(o.warnings == (unsigned)m->n - 1, "%s: %u warnings, want %d", ctx, o.warnings, m->n - 1);
    expect_events(ctx, o.ev, o.n, g.ev, g.n, 1);
    REQUIRE(c.bytes <= 32 * (uint64_t)size, "%s: %llu bytes read for a file of %zu", ctx,
            (unsigned long long)c.bytes, size);
    outcome_free(&o);
    outcome_free(&g);
    free(file);
    free(m);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Random corruption of the samples */

static uint64_t rng;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

/* The file bytes an iteration changed: a list of ranges, and where the file was cut. */
struct damage_log {
    struct range r[16];
    int n;
    uint64_t cut;
    char what[512];
    size_t len;
};

static void log_range(struct damage_log *dl, uint64_t lo, uint64_t hi, const char *what)
{
    int k;
    if (dl->n < 16) {
        dl->r[dl->n].lo = lo;
        dl->r[dl->n].hi = hi;
        dl->n++;
    }
    k = snprintf(dl->what + dl->len, sizeof dl->what - dl->len, " %s@%llu+%llu", what, (unsigned long long)lo,
                 (unsigned long long)(hi - lo));
    if (k > 0 && (size_t)k < sizeof dl->what - dl->len) dl->len += (size_t)k;
}

static int touched(const struct damage_log *dl, uint64_t lo, uint64_t hi)
{
    for (int i = 0; i < dl->n; i++)
        if (dl->r[i].lo < hi && lo < dl->r[i].hi) return 1;
    return hi > dl->cut;
}

/* Damages d (a copy of s) at random: bit flips, overwritten bytes and runs, buffer header
   fields, record headers, and a cut. Returns the new size. */
static size_t corrupt(const struct sample *s, uint8_t *d, struct damage_log *dl)
{
    int n = 1 + (int)below(4);
    size_t size = s->size;

    memset(dl, 0, sizeof *dl);
    dl->cut = size;
    for (int i = 0; i < n; i++) {
        uint64_t pos, len;
        int b = (int)below((uint64_t)s->map.n);
        switch (below(8)) {
        case 0:
            pos = below(size);
            d[pos] ^= (uint8_t)(1u << below(8));
            log_range(dl, pos, pos + 1, "flip");
            break;
        case 1:
            pos = below(size);
            d[pos] = (uint8_t)rnd();
            log_range(dl, pos, pos + 1, "byte");
            break;
        case 2:
        case 3: {
            int mode = (int)below(3); /* random bytes, zeros, 0xFF */
            pos = below(size);
            len = 1 + below(below(4) ? 64 : 4096);
            if (pos + len > size) len = size - pos;
            for (uint64_t j = 0; j < len; j++) d[pos + j] = mode == 0 ? (uint8_t)rnd() : mode == 1 ? 0 : 0xFF;
            log_range(dl, pos, pos + len, mode == 0 ? "run" : mode == 1 ? "zeros" : "ffs");
            break;
        }
        case 4: case 5: {
            /* A buffer header field (the header buffer's less often). */
            static const unsigned fields[] = { ETL_BH_BUFFER_SIZE, ETL_BH_OFFSET, ETL_BH_BUFFER_FLAG,
                                               ETL_BH_SEQUENCE_NUMBER, ETL_BH_CLIENT_CONTEXT, ETL_BH_SAVED_OFFSET };
            unsigned f = fields[below(sizeof fields / sizeof fields[0])];
            uint32_t v;
            if (b == 0 && s->map.n > 1 && below(4)) b = 1 + (int)below((uint64_t)s->map.n - 1);
            pos = s->map.off[b] + f;
            v = etl_le32(d + pos);
            switch (below(5)) {
            case 0: v = 0; break;
            case 1: v = (uint32_t)rnd(); break;
            case 2: v += (uint32_t)below(17) - 8; break;
            case 3: v ^= 1u << below(32); break;
            default: v = (uint32_t)(s->size - s->map.off[b] + below(3) - 1); break;
            }
            etl_put32(d + pos, v);
            log_range(dl, pos, pos + 4, "field");
            break;
        }
        default: {
            /* The header of a record (or, in a compressed buffer, some of its stream). */
            const struct rec *r = &s->full.ev[below((uint64_t)s->full.n)];
            int k = buffer_at(&s->map, r->buf);
            if (s->map.compressed[k]) {
                pos = r->buf + ETL_BUFFER_HEADER_SIZE + below(s->map.size[k] - ETL_BUFFER_HEADER_SIZE);
                len = 1 + below(8);
            } else {
                pos = r->buf + r->off + below(8);
                len = 1 + below(4);
            }
            if (pos + len > size) len = size - pos;
            for (uint64_t j = 0; j < len; j++) d[pos + j] = below(2) ? (uint8_t)rnd() : (uint8_t)(d[pos + j] ^ 0x80);
            log_range(dl, pos, pos + len, "record");
            break;
        }
        }
    }
    if (below(4) == 0) {
        /* A cut, often near a buffer boundary. */
        int b = (int)below((uint64_t)s->map.n);
        uint64_t cut = below(2) ? below(size) : s->map.off[b] + below(0x100);
        if (cut < size) {
            size = (size_t)cut;
            dl->cut = cut;
            {
                int k = snprintf(dl->what + dl->len, sizeof dl->what - dl->len, " cut@%llu", (unsigned long long)cut);
                if (k > 0 && (size_t)k < sizeof dl->what - dl->len) dl->len += (size_t)k;
            }
        }
    }
    return size;
}

static const char *const random_samples[] = {
    "airbus_AMSITrace.etl", "airbus_lxcore_kernel.etl", "krabsetw_powershell.etl",
    "perfview_SelfDescribingSingleEvent.etl", "perfview_diaghub.kernel.1.etl", "perfview_gcevents_PerfViewData.etl",
    "perfview_primitive-types.etl", "perfview_smallEtlFile.etl", "syzygy_log_lib_image_data_32_v0.etl",
    "syzygy_log_lib_image_data_64_v0.etl", "syzygy_log_lib_process_data_32_v1.etl",
    "syzygy_viewer_test_data_32_v1.etl", "tx_BondEtwSample.etl", "tx_HTTP_Server.etl",
};
#define N_RANDOM_SAMPLES ((int)(sizeof random_samples / sizeof random_samples[0]))

/* ETL_DAMAGE_SEED=N picks other rounds, ETL_DAMAGE_ROUNDS=K runs K times as many. */
static uint64_t base_seed = 0x5EED0E7Cu;
static long round_factor = 1;

/* The events of v (sorted by offset) from the buffer at file offset buf: *n of them from the
   returned one. */
static const struct rec *events_of_buffer(const struct rec *v, long nv, uint64_t buf, long *n)
{
    long lo = 0, hi = nv, first;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (v[mid].buf < buf) lo = mid + 1; else hi = mid;
    }
    first = lo;
    while (lo < nv && v[lo].buf == buf) lo++;
    *n = lo - first;
    return v + first;
}

/* One round: s corrupted as seed says, read in both orders. Never a crash, a loop or a FATAL
   with the header buffer intact; every buffer the corruption left alone delivers all its events.
   Counts reads that warned and buffers compared. */
static void random_round(const struct sample *s, uint8_t *d, uint64_t seed, long round, long *warned, long *checked)
{
    struct damage_log dl;
    size_t size;
    int header_intact;
    uint8_t *cut;
    char ctx[768];

    rng = seed;
    memcpy(d, s->data, s->size);
    size = corrupt(s, d, &dl);
    snprintf(ctx, sizeof ctx, "%s, seed 0x%llx (ETL_DAMAGE_SEED=0x%llx, round %ld):%s", s->name,
             (unsigned long long)seed, (unsigned long long)base_seed, round, dl.what);
    header_intact = !touched(&dl, 0, s->map.size[0]);
    cut = size < s->size ? dup_bytes(d, size) : d; /* d is as large as the sample */
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        struct outcome o;
        read_allocation(cut, size, order, s->name, ctx, &o);
        if (o.open_rc == ETL_FATAL) {
            REQUIRE(!header_intact, "%s: FATAL with the header buffer intact: %s", ctx, o.error);
            continue;
        }
        *warned += o.warnings > 0;
        if (header_intact) {
            qsort(o.ev, (size_t)o.n, sizeof *o.ev, by_offset);
            for (int b = 0; b < s->map.n; b++) {
                uint64_t lo = s->map.off[b];
                const struct rec *g, *w;
                long ng, nw;
                char c2[2048];
                if (touched(&dl, lo, lo + s->map.size[b])) continue;
                g = events_of_buffer(o.ev, o.n, lo, &ng);
                w = events_of_buffer(s->full.ev, s->full.n, lo, &nw);
                snprintf(c2, sizeof c2, "%s [untouched buffer %d at %llu, %s order; %u warnings, first: %s]", ctx, b,
                         (unsigned long long)lo, order == ETL_ORDER_FILE ? "file" : "time", o.warnings,
                         o.first_report);
                expect_events(c2, g, ng, w, nw, 0);
                (*checked)++;
            }
        }
        outcome_free(&o);
    }
    if (cut != d) free(cut);
}

/* Random corruption, many times per sample. */
START_TEST(random_corruption)
{
    struct sample *s = sample_load(random_samples[_i]);
    uint8_t *d = xmalloc(s->size);
    /* About the same work for every sample: more rounds for small files. */
    long rounds = (s->size < 100000 ? 6000 : s->size < 1000000 ? 3000 : 400) * round_factor;
    long warned = 0, checked = 0;

    for (long it = 0; it < rounds; it++) {
        rng = base_seed ^ ((uint64_t)_i << 40);
        rng ^= rnd() + (uint64_t)it; /* each base seed its own rounds */
        random_round(s, d, rnd(), it, &warned, &checked);
    }
    /* The corruption must reach the reader: many reads warn, and undamaged buffers were compared. */
    REQUIRE(warned > rounds / 4, "%s: only %ld of %ld reads warned", s->name, warned, 2 * rounds);
    REQUIRE(checked > rounds / 4, "%s: only %ld undamaged buffers compared", s->name, checked);
    free(d);
    sample_free(s);
}
END_TEST

/* Rounds that found bugs, whatever ETL_DAMAGE_SEED says. */
static const struct { const char *sample; uint64_t seed; const char *bug; } random_regressions[] = {
    /* BufferSize of a compressed buffer leading into the next one: that buffer was lost. */
    { "perfview_SelfDescribingSingleEvent.etl", 0x3005eed0e6aull, "compressed BufferSize too large" },
    /* BufferSize leading to 1 byte before the end: the last buffer was swallowed. */
    { "perfview_SelfDescribingSingleEvent.etl", 0x3005eed0e3eull, "compressed BufferSize to a partial header" },
    /* BufferSize leading exactly to the end of the file: the last buffer was swallowed. */
    { "perfview_SelfDescribingSingleEvent.etl", 0x3005eed01d2ull, "compressed BufferSize to the end of the file" },
    /* Offset of a compressed buffer damaged: a header seen one byte earlier, overlapping it,
       was taken for the next buffer, and the buffer before lost its last byte. */
    { "perfview_SelfDescribingSingleEvent.etl", 0x300000043beull, "shifted header across a damaged one" },
    /* An uncompressed file's buffer header damaged to say COMPRESSED and another BufferSize:
       the walk left the buffers' grid and lost the next buffer. */
    { "syzygy_log_lib_image_data_64_v0.etl", 0xd3dc3dca2f80ae06ull, "uncompressed file, buffer flagged compressed" },
    /* A buffer found inside the header of the one before it: a size below 0x48 read 4 GiB. */
    { "perfview_SelfDescribingSingleEvent.etl", 0x3005eed0f4dull, "next buffer inside this buffer's header" },
};

START_TEST(random_corruption_regressions)
{
    for (size_t k = 0; k < sizeof random_regressions / sizeof random_regressions[0]; k++) {
        struct sample *s = sample_load(random_regressions[k].sample);
        uint8_t *d = xmalloc(s->size);
        long warned = 0, checked = 0;
        random_round(s, d, random_regressions[k].seed, -1, &warned, &checked);
        REQUIRE(warned == 2, "%s (%s): %ld reads warned", s->name, random_regressions[k].bug, warned);
        free(d);
        sample_free(s);
    }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("damage");
    TCase *tc = tcase_create("targeted"), *tr = tcase_create("random");
    const char *seed = getenv("ETL_DAMAGE_SEED"), *rounds = getenv("ETL_DAMAGE_ROUNDS");

    if (seed && *seed) base_seed = strtoull(seed, NULL, 0);
    if (rounds && atol(rounds) > 0) round_factor = atol(rounds);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, not_etl_files);
    tcase_add_test(tc, header_buffer_damaged);
    tcase_add_loop_test(tc, cut_at_buffer_boundaries, 0, N_CUT_SAMPLES);
    tcase_add_loop_test(tc, cut_inside_buffers, 0, N_CUT_SAMPLES);
    tcase_add_test(tc, cut_gzip);
    tcase_add_loop_test(tc, buffer_size_damaged, 0, 3);
    tcase_add_test(tc, buffer_header_fields_damaged);
    tcase_add_loop_test(tc, record_damaged, 0, REC_DAMAGE_KINDS);
    tcase_add_test(tc, record_header_cut_by_used_size);
    tcase_add_loop_test(tc, garbage_after_last_buffer, 0, 2);
    tcase_add_loop_test(tc, compressed_buffer_damaged, 0, 2 * XP_DAMAGE_KINDS);
    tcase_add_test(tc, compressed_record_damaged);
    tcase_add_test(tc, many_damaged_compressed_buffers);
    suite_add_tcase(su, tc);
    tcase_set_timeout(tr, 600);
    tcase_add_test(tr, random_corruption_regressions);
    tcase_add_loop_test(tr, random_corruption, 0, N_RANDOM_SAMPLES);
    suite_add_tcase(su, tr);
    return check_run(su);
}
