/* SPDX-License-Identifier: MIT */
/* The reader without its full index: cursors that walk the file, sharing a bounded window of
   buffer headers, deliver exactly what the full index delivers (events, order, damage). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "reader/reader.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

static const etl_guid prov = { 0x11223344, 0x5566, 0x7788, { 1, 2, 3, 4, 5, 6, 7, 8 } };

#define FULL_INDEX UINT32_MAX

/* What a reading gives: a hash of every event's fields and payload, of the damage messages
   with their offsets, of the return codes and of the trace info counts. */
struct digest {
    uint64_t hash;
    long events;
    int open_rc;
    int streaming;
    uint32_t window_cap, window_peak;
};

static void mix(uint64_t *h, const void *p, size_t n)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}

static void on_damage(void *arg, int64_t offset, const char *message)
{
    uint64_t *h = arg;

    mix(h, &offset, sizeof offset);
    mix(h, message, strlen(message));
}

static uint64_t read_events(etl_reader *r, uint64_t *h, long *n)
{
    etl_event ev;
    int rc;

    *n = 0;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        int64_t f[7] = { rc, ev.timestamp, ev.cpu, ev.buffer_index, (int64_t)ev.buffer_offset, ev.record_offset,
                         ev.kind };
        mix(h, f, sizeof f);
        mix(h, ev.payload, ev.payload_len);
        ++*n;
    }
    mix(h, &rc, sizeof rc);
    return *h;
}

static struct digest digest(const uint8_t *data, size_t size, int order, uint32_t limit)
{
    struct digest d;
    uint64_t h = 14695981039346656037ull, h2;
    etl_reader_options o = { .order = order, .name = "index.etl", .on_damage = on_damage, .on_damage_arg = &h };
    etl_reader *r = NULL;
    uint32_t indexed;
    long n2;

    memset(&d, 0, sizeof d);
    etl_reader_index_limit = limit;
    d.open_rc = etl_reader_open_memory(&r, data, size, &o);
    etl_reader_index_limit = ETL_READER_INDEX_LIMIT;
    ck_assert_ptr_nonnull(r);
    mix(&h, &d.open_rc, sizeof d.open_rc);
    if (d.open_rc != ETL_FATAL) {
        const etl_trace_info *in = etl_reader_info(r);
        uint32_t counts[3] = { in->buffers, in->damaged_buffers, in->compressed_buffers };
        mix(&h, counts, sizeof counts);
        read_events(r, &h, &d.events);
        etl_reader_index_stats(r, &d.streaming, &indexed, &d.window_cap, &d.window_peak);
        /* Memory stays bounded: the window never holds more than its cap, nor the cap more
           than the limit; an indexed file has at most limit buffers unless it is out of order. */
        ck_assert_uint_le(d.window_peak, d.window_cap);
        if (d.streaming) ck_assert_uint_le(d.window_cap, limit);
        if (etl_reader_rewind(r) == ETL_OK) {
            h2 = 0;
            read_events(r, &h2, &n2);
            ck_assert_int_eq(n2, d.events);
            mix(&h, &h2, sizeof h2);
        }
    }
    mix(&h, etl_reader_error(r), strlen(etl_reader_error(r)));
    etl_reader_close(r);
    d.hash = h;
    return d;
}

/* The cursors read as the index does, and do use cursors (streaming) when asked. */
static void same_as_index(const uint8_t *data, size_t size, uint32_t limit, int expect_streaming)
{
    for (int order = 0; order < 2; order++) {
        struct digest a = digest(data, size, order, FULL_INDEX), b = digest(data, size, order, limit);
        ck_assert_int_eq(a.streaming, 0);
        ck_assert_int_eq(a.open_rc, b.open_rc);
        ck_assert_int_eq(a.events, b.events);
        ck_assert_msg(a.hash == b.hash, "order %d limit %u: cursors read differently from the index", order, limit);
        if (expect_streaming >= 0 && order == ETL_ORDER_TIME)
            ck_assert_int_eq(b.streaming, expect_streaming);
        if (expect_streaming > 0 && order == ETL_ORDER_FILE) ck_assert_int_eq(b.streaming, 1);
    }
}

/* n events over cpus processors; cpu idle gets only the first and the last event. */
static uint8_t *build(struct synth_options *o, int n, int idle, size_t *size)
{
    struct synth *s = synth_new(o);
    uint8_t rec[512];

    for (int i = 0; i < n; i++) {
        uint32_t payload[8] = { (uint32_t)i };
        unsigned cpu = (unsigned)(i * 7 + i / 3) % o->cpus;
        int64_t ts = 2000000 + (i / 5) * 10;
        uint32_t len;
        if (idle >= 0 && cpu == (unsigned)idle && i > 0 && i < n - 1) cpu = (cpu + 1) % o->cpus;
        if (idle >= 0 && (i == 0 || i == n - 1)) cpu = (unsigned)idle;
        len = synth_event_header(rec, 1, ts, &prov, (uint16_t)i, 0, 4, 0, 0, 0, 1, 2, NULL, 0, payload,
                                 4 + (uint32_t)(i % 8) * 4);
        ck_assert_int_eq(synth_add(s, cpu, rec, len), 0);
    }
    return synth_finish(s, size);
}

/* More buffers than the default limit, many processors: the default reader streams. */
START_TEST(large_file_streams_like_the_index)
{
    struct synth_options o = { .buffer_size = 1024, .cpus = 16 };
    size_t size;
    uint8_t *data = build(&o, 200000, -1, &size);
    struct digest d;

    same_as_index(data, size, ETL_READER_INDEX_LIMIT, 1);
    same_as_index(data, size, 64, 1);
    d = digest(data, size, ETL_ORDER_TIME, ETL_READER_INDEX_LIMIT);
    ck_assert_int_eq(d.events, 200002);
    ck_assert_uint_le(d.window_peak, ETL_READER_INDEX_LIMIT);
    free(data);
}
END_TEST

/* A circular file whose ring wraps in the middle of the file. */
START_TEST(circular_ring_wraps)
{
    for (int rot = 1; rot < 200; rot += 37) {
        struct synth_options o = { .buffer_size = 1024, .cpus = 4, .rotate = rot,
                                   .log_file_mode = ETL_MODE_FILE_CIRCULAR };
        size_t size;
        uint8_t *data = build(&o, 5000, -1, &size);
        same_as_index(data, size, 16, 1);
        same_as_index(data, size, 1, 1);
        free(data);
    }
}
END_TEST

/* One processor idle for most of the file: its cursor scans far ahead of the others. */
START_TEST(idle_processor_scans_ahead)
{
    struct synth_options o = { .buffer_size = 1024, .cpus = 6 };
    size_t size;
    uint8_t *data = build(&o, 20000, 3, &size);

    same_as_index(data, size, 32, 1);
    same_as_index(data, size, 3, 1);
    free(data);
}
END_TEST

/* Two buffers of one processor swapped: the file is not in SequenceNumber order, the reader
   indexes it whole and reads it as before. */
START_TEST(out_of_order_falls_back_to_the_index)
{
    struct synth_options o = { .buffer_size = 1024, .cpus = 3 };
    size_t size, a = 0, b = 0;
    uint8_t *data = build(&o, 3000, -1, &size), tmp[1024];

    for (size_t off = 1024; off + 1024 <= size && !b; off += 1024) {
        etl_buffer_header bh, first;
        etl_buffer_header_read(data + off, &bh);
        if (bh.processor != 1) continue;
        if (!a) a = off;
        else {
            etl_buffer_header_read(data + a, &first);
            if (first.sequence_number + 2 < bh.sequence_number) b = off;
        }
    }
    ck_assert_uint_ne(b, 0);
    memcpy(tmp, data + a, 1024);
    memcpy(data + a, data + b, 1024);
    memcpy(data + b, tmp, 1024);
    same_as_index(data, size, 4, 0);
    free(data);
}
END_TEST

START_TEST(compressed_streams_like_the_index)
{
    struct synth_options o = { .buffer_size = 4096, .cpus = 4, .compressed = 1 };
    size_t size;
    uint8_t *data = build(&o, 20000, 2, &size);

    same_as_index(data, size, 8, 1);
    free(data);
}
END_TEST

/* Damage anywhere: the same events, messages and offsets with cursors as with the index. */
START_TEST(random_damage_reads_the_same)
{
    for (int compressed = 0; compressed < 2; compressed++) {
        struct synth_options o = { .buffer_size = 2048, .cpus = 3, .compressed = compressed,
                                   .rotate = compressed ? 0 : 7 };
        size_t full, size;
        uint8_t *clean = build(&o, 4000, -1, &full), *data = malloc(full);
        srand(1234 + compressed);
        for (int iter = 0; iter < 150; iter++) {
            size = full;
            memcpy(data, clean, size);
            int hits = 1 + rand() % 4;
            for (int k = 0; k < hits; k++) {
                size_t at = 2048 + (size_t)rand() % (size - 2048);
                size_t len = 1 + (size_t)rand() % (k == 0 ? 3000 : 8);
                for (size_t i = 0; i < len && at + i < size; i++)
                    data[at + i] = (rand() % 3 == 0) ? 0 : (rand() % 2 ? 0xFF : (uint8_t)rand());
            }
            if (rand() % 5 == 0) size = size - (size_t)rand() % 3000;
            same_as_index(data, size, 1 + (uint32_t)(rand() % 6), -1);
        }
        free(data);
        free(clean);
    }
}
END_TEST

/* Cursors that keep together share the window: each buffer header is read once at open and
   once more while reading, and each buffer's used bytes once. */
START_TEST(window_reads_each_header_twice)
{
    struct synth_options o = { .buffer_size = 8192, .cpus = 8 };
    size_t size;
    uint8_t *data = build(&o, 20000, -1, &size);
    struct test_counting_source c = { data, size, 0, 0, 0, 0 };
    etl_reader_source src;
    etl_reader *r = NULL;
    etl_reader_options opt = { .order = ETL_ORDER_TIME };
    int streaming;
    uint32_t indexed, cap, peak;
    unsigned w;

    test_counting_source(&c, &src);
    etl_reader_index_limit = 64;
    ck_assert_int_eq(etl_reader_open(&r, &src, &opt), ETL_OK);
    etl_reader_index_limit = ETL_READER_INDEX_LIMIT;
    ck_assert_int_eq(test_count_events(r, &w), 20002);
    etl_reader_index_stats(r, &streaming, &indexed, &cap, &peak);
    ck_assert_int_eq(streaming, 1);
    ck_assert_uint_eq(cap, 64);
    ck_assert_uint_le(peak, 64);
    ck_assert_uint_le(c.bytes, size + 0x10048 + 2 * 0x48 * etl_reader_info(r)->buffers);
    ck_assert_uint_le(c.largest, 0x10048);
    etl_reader_close(r);
    free(data);
}
END_TEST

/* Every sample reads the same with a tiny window as with the index. */
START_TEST(samples_read_the_same)
{
    const char *dir = testdata_path("samples");
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), size;
        uint8_t *data;
        if (len < 5 || strcmp(e->d_name + len - 4, ".etl") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = test_read_file(path, &size);
        ck_assert_ptr_nonnull(data);
        same_as_index(data, size, 2, -1);
        same_as_index(data, size, 1, -1);
        free(data);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 14);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("cursors");

    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, large_file_streams_like_the_index);
    tcase_add_test(tc, circular_ring_wraps);
    tcase_add_test(tc, idle_processor_scans_ahead);
    tcase_add_test(tc, out_of_order_falls_back_to_the_index);
    tcase_add_test(tc, compressed_streams_like_the_index);
    tcase_add_test(tc, random_damage_reads_the_same);
    tcase_add_test(tc, samples_read_the_same);
    tcase_add_test(tc, window_reads_each_header_twice);
    suite_add_tcase(s, tc);
    return check_run(s);
}
