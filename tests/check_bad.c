/* SPDX-License-Identifier: MIT */
/* Each damaged file of testdata/bad/ reads as its README.md says: the damage reported at its byte offset, and every readable event before and after it delivered as the intact file has it. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "testutil.h"

/* What testdata/bad/README.md says a reader must do with a file. */
struct bad_file {
    const char *name;
    const char *intact;      /* the sample it was made from (under testdata/) */
    uint64_t intact_bytes;   /* how much of it (the first bytes) */
    int open_rc;             /* ETL_FATAL: refused; else opened and read to the end */
    const char *says;        /* the first message holds this (the file's name and the offset) */
    int64_t offset;          /* the first report's offset */
    unsigned reports;        /* how many pieces of damage are reported */
    uint64_t damaged_buffer; /* file offset of the buffer the damage is in */
    long before;             /* events delivered from the buffers before it */
    long in_damaged;         /* events delivered from it (those before the damage) */
    long after;              /* events delivered from the buffers after it */
    int compressed;          /* the damaged buffer is compressed: its record offsets are not the file's */
};

#define KRABS "samples/krabsetw_powershell.etl"
#define SELFDESC "samples/perfview_SelfDescribingSingleEvent.etl"

/* The krabsetw files are its first four 8 KiB buffers (2 + 5 + 6 + 7 events); buffer 2, at
   16384, has records at 16456, 18000, 19544, 19624, 20976 and 22344. */
static const struct bad_file files[] = {
    { "zero-length.etl", NULL, 0, ETL_FATAL, "zero-length.etl: not an ETL file: the file is empty", -1, 0, 0, 0, 0, 0, 0 },
    { "truncated-logfile-header.etl", NULL, 0, ETL_FATAL, "truncated-logfile-header.etl: logfile header event at offset 72",
      -1, 0, 0, 0, 0, 0, 0 },
    { "truncated-buffer-header.etl", KRABS, 32768, ETL_WARN, "40 bytes at offset 16384 after the last buffer", 16384, 1,
      16384, 7, 0, 0, 0 },
    { "truncated-in-buffer.etl", KRABS, 32768, ETL_WARN, "buffer 2 at offset 16384 is truncated", 16384, 2, 16384, 7, 3,
      0, 0 },
    { "event-length-past-buffer.etl", KRABS, 32768, ETL_OK,
      "buffer 2 at offset 16384: record overruns the buffer's used size at offset 19624", 19624, 1, 16384, 7, 3, 7, 0 },
    { "record-bad-marker.etl", KRABS, 32768, ETL_OK, "not a trace header (bad marker) at offset 19624", 19624, 1, 16384,
      7, 3, 7, 0 },
    { "used-size-past-buffer-size.etl", KRABS, 32768, ETL_WARN,
      "damaged buffer header at offset 16384: Offset (used size) exceeds BufferSize", 16384, 1, 16384, 7, 0, 7, 0 },
    { "buffer-size-not-power-of-two.etl", KRABS, 32768, ETL_WARN,
      "damaged buffer header at offset 16384: BufferSize differs from the logfile header's BufferSize", 16384, 1,
      16384, 7, 0, 7, 0 },
    { "bad-xpress-stream.etl", SELFDESC, 7403, ETL_OK,
      "compressed buffer 1 at offset 1024: XPRESS match refers before the start of the buffer at offset 1161", 1161, 2,
      1024, 2, 1, 1, 1 },
    /* The 0xFFFFFFFF fill marker at 19624, before the buffer's used size (7328) ends: damage,
       not the end of the buffer's records (issue 17, item 2). */
    { "record-header-0xffffffff-inside-used-area.etl", KRABS, 32768, ETL_OK,
      "buffer 2 at offset 16384: 0xFFFFFFFF fill before the buffer's used size at offset 19624", 19624, 1, 16384,
      7, 3, 7, 0 },
};

/* One delivered event: where it is and a digest of its record. */
struct pos {
    uint64_t buffer_offset;
    uint32_t record_offset;
    uint32_t size;
    uint32_t digest;
};

struct reading {
    int open_rc;
    char first[1024];   /* the first damage message (or the FATAL message) */
    int64_t first_offset;
    unsigned reports;
    struct pos *ev;
    long n, cap;
};

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static void on_damage(void *arg, int64_t offset, const char *message)
{
    struct reading *rd = arg;

    if (rd->reports++ == 0) {
        snprintf(rd->first, sizeof rd->first, "%s", message);
        rd->first_offset = offset;
    }
}

/* Reads size bytes of data (in memory, named name) in the given order into rd. */
static void read_bytes(const uint8_t *data, size_t size, const char *name, int order, struct reading *rd)
{
    etl_reader_options opt;
    etl_reader *r = NULL;
    etl_event ev;
    int rc;

    memset(rd, 0, sizeof *rd);
    rd->first_offset = -1;
    memset(&opt, 0, sizeof opt);
    opt.order = order;
    opt.name = name;
    opt.on_damage = on_damage;
    opt.on_damage_arg = rd;
    rd->open_rc = etl_reader_open_memory(&r, data, size, &opt);
    ck_assert_ptr_nonnull(r);
    if (rd->open_rc == ETL_FATAL) {
        snprintf(rd->first, sizeof rd->first, "%s", etl_reader_error(r));
        etl_reader_close(r);
        return;
    }
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (rd->n == rd->cap) {
            rd->cap = rd->cap ? 2 * rd->cap : 64;
            rd->ev = realloc(rd->ev, (size_t)rd->cap * sizeof *rd->ev);
            ck_assert_ptr_nonnull(rd->ev);
        }
        rd->ev[rd->n++] = (struct pos){ ev.buffer_offset, ev.record_offset, ev.record_size,
                                        fnv1a(ev.record, ev.record_size) };
    }
    ck_assert_msg(rc == ETL_EOF, "%s: next gave %d: %s", name, rc, etl_reader_error(r));
    ck_assert_uint_eq(etl_reader_warnings(r), rd->reports);
    etl_reader_close(r);
}

/* The file's bytes, read whole (a static buffer of the caller's). */
static uint8_t *load(const char *rel, size_t *size)
{
    uint8_t *d = test_read_file(testdata_path(rel), size);
    ck_assert_msg(d != NULL, "cannot read %s", testdata_path(rel));
    return d;
}

START_TEST(test_bad_file)
{
    const struct bad_file *f = &files[_i];
    char rel[256], num[32];
    size_t size, isize;
    uint8_t *data, *intact;
    struct reading rd, ok, timed;
    long before = 0, in_damaged = 0, after = 0;

    snprintf(rel, sizeof rel, "bad/%s", f->name);
    data = load(rel, &size);
    read_bytes(data, size, f->name, ETL_ORDER_FILE, &rd);

    ck_assert_msg(rd.open_rc == f->open_rc, "%s: open gave %d, want %d (%s)", f->name, rd.open_rc, f->open_rc,
                  rd.first);
    ck_assert_msg(strstr(rd.first, f->says) != NULL, "%s: the message is '%s', want '%s' in it", f->name, rd.first,
                  f->says);
    ck_assert_msg(strstr(rd.first, f->name) != NULL, "%s: the message does not name the file: %s", f->name, rd.first);
    if (f->open_rc == ETL_FATAL) {
        free(data);
        return;
    }
    /* The offset is where the damage is, and the message says it. */
    ck_assert_uint_eq(rd.reports, f->reports);
    ck_assert_int_eq(rd.first_offset, f->offset);
    snprintf(num, sizeof num, "offset %" PRId64, f->offset);
    ck_assert_msg(strstr(rd.first, num) != NULL, "%s: the message does not say '%s': %s", f->name, num, rd.first);

    /* Every event delivered is the intact file's, at the same place, byte for byte; in the
       damaged buffer, when the damage is in its records, only those before it (in file
       positions, which a compressed buffer's record offsets are not). */
    intact = load(f->intact, &isize);
    ck_assert_uint_ge(isize, f->intact_bytes);
    read_bytes(intact, f->intact_bytes, f->intact, ETL_ORDER_FILE, &ok);
    ck_assert_uint_eq(ok.reports, 0);
    for (long i = 0; i < rd.n; i++) {
        const struct pos *e = &rd.ev[i];
        long j;

        for (j = 0; j < ok.n; j++)
            if (ok.ev[j].buffer_offset == e->buffer_offset && ok.ev[j].record_offset == e->record_offset) break;
        ck_assert_msg(j < ok.n, "%s: event %ld (buffer %" PRIu64 ", record %u) is not in the intact file", f->name, i,
                      e->buffer_offset, e->record_offset);
        ck_assert_msg(ok.ev[j].size == e->size && ok.ev[j].digest == e->digest,
                      "%s: event %ld (buffer %" PRIu64 ", record %u) differs from the intact file's", f->name, i,
                      e->buffer_offset, e->record_offset);
        if (e->buffer_offset < f->damaged_buffer) before++;
        else if (e->buffer_offset == f->damaged_buffer) {
            in_damaged++;
            if (!f->compressed && f->offset > (int64_t)f->damaged_buffer) ck_assert_int_lt((int64_t)(e->buffer_offset + e->record_offset), f->offset);
        }
        else after++;
    }
    ck_assert_msg(before == f->before && in_damaged == f->in_damaged && after == f->after,
                  "%s: %ld events before the damaged buffer, %ld in it, %ld after; want %ld, %ld, %ld", f->name,
                  before, in_damaged, after, f->before, f->in_damaged, f->after);

    /* In time order: the same events, the same reports. */
    read_bytes(data, size, f->name, ETL_ORDER_TIME, &timed);
    ck_assert_int_eq(timed.n, rd.n);
    ck_assert_uint_eq(timed.reports, rd.reports);

    free(timed.ev);
    free(ok.ev);
    free(rd.ev);
    free(intact);
    free(data);
}
END_TEST

static Suite *bad_suite(void)
{
    Suite *s = suite_create("bad");
    TCase *tc = tcase_create("files");

    tcase_add_loop_test(tc, test_bad_file, 0, (int)(sizeof files / sizeof files[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(bad_suite());
}
