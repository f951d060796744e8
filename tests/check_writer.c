/* SPDX-License-Identifier: MIT */
/* Writer tests: encoded records and every file mode read back through the reader. */
#define _GNU_SOURCE /* O_DIRECT */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "format/format.h"
#include "writer/writer.h"
#include "testutil.h"

static const etl_guid prov = { 0x0a0b0c0d, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }
static const char *in_dir(const char *name) { return test_dir_path(name); }

/* A buffer of bs bytes filled with EVENT_HEADER events n0.. (id = number, payload = number);
   returns the used size, *next = the first number that did not fit. */
static uint32_t fill_buffer(uint8_t *b, uint32_t bs, int64_t ts0, uint32_t n0, uint32_t count, uint32_t *next)
{
    uint32_t used = ETL_BUFFER_HEADER_SIZE, i;

    for (i = 0; i < count; i++) {
        uint32_t n = n0 + i, size;
        etl_event_descriptor d = { (uint16_t)n, 1, 0, 4, 0, 7, 0x10 };
        etl_data data = { &n, sizeof n };
        size = etl_record_encode_event(NULL, 0, 0, 0, 0, &prov, &d, NULL, &data, 1);
        if (used + ETL_RECORD_SPACE(size) > bs) break;
        ck_assert_uint_eq(etl_record_encode_event(b + used, bs - used, ts0 + n, 100, 200, &prov, &d, NULL, &data, 1),
                          size);
        used += ETL_RECORD_SPACE(size);
    }
    *next = n0 + i;
    return used;
}

static etl_writer *open_writer(const char *name, etl_writer_options *o)
{
    etl_writer *w = NULL;
    int rc = etl_writer_open(&w, in_dir(name), o);
    ck_assert_msg(rc == ETL_OK, "open: %s", etl_writer_error(w));
    return w;
}

/* Numbers of the EVENT_HEADER events of a file, in time order; checks time order. */
static long read_numbers(const char *path, uint32_t *out, long max, etl_trace_info *info)
{
    etl_reader *r = NULL;
    etl_event ev;
    long n = 0;
    int64_t last = INT64_MIN;
    int rc = etl_reader_open_path(&r, path, NULL);

    ck_assert_msg(rc == ETL_OK, "%s: %s", path, etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        ck_assert_int_ge(ev.timestamp, last);
        last = ev.timestamp;
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &prov)) continue;
        ck_assert_uint_eq(ev.payload_len, 4);
        ck_assert_int_lt(n, max);
        out[n++] = etl_le32(ev.payload);
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_uint_eq(etl_reader_warnings(r), 0);
    if (info) {
        /* The names live in the reader: keep copies past its close. */
        static char logger[256], file[512];
        *info = *etl_reader_info(r);
        snprintf(logger, sizeof logger, "%s", info->logger_name);
        snprintf(file, sizeof file, "%s", info->log_file_name);
        info->logger_name = logger;
        info->log_file_name = file;
    }
    etl_reader_close(r);
    return n;
}

/* Sequential: every buffer of every processor reads back, with the header finalised. */
START_TEST(sequential_round_trip)
{
    etl_writer_options o = { .buffer_size = 4096, .number_of_processors = 3, .logger_name = "RoundTrip",
                             .clock = { ETL_CLOCK_PERFCOUNTER, 1000000000, 0, 133485408000000000LL, 5000 } };
    etl_writer *w;
    uint8_t *b = malloc(4096);
    uint32_t next = 0, nums[20000];
    etl_trace_info info;
    etl_writer_stats st;
    long n;

    make_dir();
    w = open_writer("seq.etl", &o);
    for (int i = 0; i < 30; i++) {
        uint32_t used = fill_buffer(b, 4096, 10000, next, 1000, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, (uint16_t)(i % 3), 10000 + next, i == 29), ETL_OK);
    }
    etl_writer_set_events_lost(w, 42);
    etl_writer_stats_get(w, &st);
    ck_assert_uint_eq(st.buffers_written, 30);
    ck_assert_int_eq(etl_writer_close(w, 133485408000000000LL + 10000000), ETL_OK);
    n = read_numbers(in_dir("seq.etl"), nums, 20000, &info);
    ck_assert_int_eq(n, next);
    for (long i = 0; i < n; i++) ck_assert_uint_eq(nums[i], i);
    ck_assert_str_eq(info.logger_name, "RoundTrip");
    ck_assert_str_eq(info.log_file_name, in_dir("seq.etl"));
    ck_assert_uint_eq(info.buffers, 31);
    ck_assert_uint_eq(info.buffers_written, 31);
    ck_assert_uint_eq(info.events_lost, 42);
    ck_assert_uint_eq(info.buffer_size, 4096);
    ck_assert_uint_eq(info.number_of_processors, 3);
    ck_assert_uint_eq(info.pointer_size, 8);
    ck_assert_uint_eq(info.layout_major, 1);
    ck_assert_uint_eq(info.layout_minor, 5);
    ck_assert_int_eq(info.end_time, 133485408000000000LL + 10000000);
    ck_assert_int_eq(info.clock.perf_freq, 1000000000);
    ck_assert_int_eq(info.clock.start_timestamp, 5000);
    ck_assert_uint_eq(info.log_file_mode, ETL_MODE_FILE_SEQUENTIAL);
    free(b);
    remove_dir();
}
END_TEST

/* Whether the test directory's file system takes O_DIRECT. */
static int takes_direct_io(void)
{
    int fd = open(in_dir("probe"), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);

    if (fd < 0) return 0;
    close(fd);
    unlink(in_dir("probe"));
    return 1;
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    long n;

    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    b = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return b;
}

/* Writes 40 buffers of 4 KB (3 processors) to name, from memory at offset `skew` of page-aligned
   memory, one at a time (batch 0) or in batches of `batch`; returns the stats. */
static void write_forty(const char *name, etl_writer_options *o, unsigned batch, size_t skew, etl_writer_stats *st)
{
    uint8_t *mem = aligned_alloc(4096, 41 * 4096);
    uint32_t next = 0;
    etl_writer *w = open_writer(name, o);

    for (int i = 0; i < 40; i++) {
        uint8_t *b = mem + skew + (size_t)i * 4096;
        uint32_t used = fill_buffer(b, 4096, 10000, next, 60 + (uint32_t)i * 7, &next);
        if (batch && i % batch == 0) etl_writer_batch_begin(w);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, (uint16_t)(i % 3), 10000 + next, 0), ETL_OK);
        if (batch && (i % batch == batch - 1 || i == 39)) ck_assert_uint_eq(etl_writer_batch_end(w), 0);
    }
    etl_writer_stats_get(w, st);
    ck_assert_int_eq(etl_writer_close(w, 133485408000000000LL), ETL_OK);
    free(mem);
}

/* Direct I/O and batches change how the file is written, not what: past the page cache, in
   batches (a circular file's wrap breaks one), it is byte for byte the file written through
   the page cache one buffer at a time. Buffers the file system cannot take directly (not
   aligned) go through the page cache. */
START_TEST(direct_batches_match_buffered)
{
    etl_writer_options plain = { .buffer_size = 4096, .number_of_processors = 3, .logger_name = "Direct",
                                 .log_file_name = "same.etl",
                                 .clock = { ETL_CLOCK_PERFCOUNTER, 1000000000, 0, 133485408000000000LL, 5000 } };
    etl_writer_options direct = plain;
    etl_writer_stats a, b, c;
    size_t na, nb, nc;
    uint8_t *fa, *fb, *fc;
    int can;

    make_dir();
    can = takes_direct_io();
    direct.direct_io = 1;
    for (int circular = 0; circular < 2; circular++) {
        if (circular) {
            plain.log_file_mode = direct.log_file_mode = ETL_MODE_FILE_CIRCULAR;
            plain.maximum_file_size = direct.maximum_file_size = 4096 + 25 * 4096; /* wraps after 25 */
        }
        write_forty("a.etl", &plain, 0, 0, &a);
        write_forty("b.etl", &direct, 7, 0, &b);
        write_forty("c.etl", &direct, 7, 8, &c);
        fa = read_file(in_dir("a.etl"), &na);
        fb = read_file(in_dir("b.etl"), &nb);
        fc = read_file(in_dir("c.etl"), &nc);
        ck_assert_uint_eq(na, circular ? 4096 + 25 * 4096 : 41 * 4096);
        ck_assert_uint_eq(nb, na);
        ck_assert_uint_eq(nc, na);
        ck_assert(memcmp(fa, fb, na) == 0);
        ck_assert(memcmp(fa, fc, na) == 0);
        ck_assert_uint_eq(a.buffers_written, 40);
        ck_assert_uint_eq(b.buffers_written, 40);
        ck_assert_uint_eq(a.bytes_direct, 0);
        /* All of it direct where the file system takes it (the header buffer first); at most
           the header where the buffers were not aligned. */
        ck_assert_uint_eq(b.bytes_direct, can ? b.bytes_written : 0);
        ck_assert_uint_le(c.bytes_direct, 4096);
        free(fa);
        free(fb);
        free(fc);
    }
    remove_dir();
}
END_TEST

/* A batch that the file stops taking part of the way (the file size limit): the buffers
   accepted and not written are counted, the last ones, and the writer stops with the offset. */
START_TEST(batch_write_error)
{
    etl_writer_options o = { .buffer_size = 4096, .direct_io = 1 };
    struct rlimit lim = { 4096 + 10 * 4096, 4096 + 10 * 4096 };
    uint8_t *mem = aligned_alloc(4096, 20 * 4096);
    uint32_t next = 0;
    etl_writer_stats st;
    etl_writer *w;

    make_dir();
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    w = open_writer("limit.etl", &o);
    etl_writer_batch_begin(w);
    for (int i = 0; i < 16; i++) {
        uint32_t used = fill_buffer(mem + (size_t)i * 4096, 4096, 1, next, 50, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, mem + (size_t)i * 4096, used, 0, 1 + next, 0), ETL_OK);
    }
    ck_assert_uint_eq(etl_writer_batch_end(w), 6);
    etl_writer_stats_get(w, &st);
    ck_assert_uint_eq(st.buffers_written, 10);
    ck_assert_msg(strstr(etl_writer_error(w), "write error at offset 45056"), "%s", etl_writer_error(w));
    ck_assert_int_eq(etl_writer_write_buffer(w, mem, 200, 0, 1, 0), ETL_FATAL);
    etl_writer_close(w, 0);
    free(mem);
    remove_dir();
}
END_TEST

/* The bytes of a written data buffer follow the writer checklist (doc/format.md section 10). */
START_TEST(buffer_header_bytes)
{
    etl_writer_options o = { .buffer_size = 8192, .logger_id = 0x12 };
    etl_writer *w;
    uint8_t *b = malloc(8192), *f;
    uint32_t next, used;
    size_t size;

    make_dir();
    w = open_writer("bytes.etl", &o);
    used = fill_buffer(b, 8192, 1, 0, 10, &next);
    ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 5, 777, 1), ETL_OK);
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    f = test_read_file(in_dir("bytes.etl"), &size);
    ck_assert_uint_eq(size, 2 * 8192);
    /* Header buffer. */
    ck_assert_uint_eq(etl_le32(f + ETL_BH_BUFFER_SIZE), 8192);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_BUFFER_TYPE), ETL_BUFFER_TYPE_HEADER);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_BUFFER_FLAG), 0x21);
    ck_assert_uint_eq(etl_le32(f + 0x48), 0xC0020002u);
    ck_assert_uint_eq(f[8191], 0xFF);
    /* Data buffer. */
    f += 8192;
    ck_assert_uint_eq(etl_le32(f + ETL_BH_BUFFER_SIZE), 8192);
    ck_assert_uint_eq(etl_le32(f + ETL_BH_SAVED_OFFSET), used);
    ck_assert_uint_eq(etl_le32(f + ETL_BH_OFFSET), used);
    ck_assert_uint_eq(etl_le32(f + ETL_BH_CURRENT_OFFSET), 8192 + used);
    ck_assert_int_eq(etl_le64s(f + ETL_BH_TIMESTAMP), 777);
    ck_assert_int_eq(etl_le64s(f + ETL_BH_SEQUENCE_NUMBER), 1);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_CLIENT_CONTEXT), 5);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_LOGGER_ID), 0x12);
    ck_assert_uint_eq(etl_le32(f + ETL_BH_STATE), 3);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_BUFFER_FLAG), 0x21);
    ck_assert_uint_eq(etl_le16(f + ETL_BH_BUFFER_TYPE), 0);
    for (uint32_t i = used; i < 8192; i++) ck_assert_uint_eq(f[i], 0xFF);
    free(f - 8192);
    free(b);
    remove_dir();
}
END_TEST

/* A sequential file with a maximum size takes no buffer beyond it and counts them lost. */
START_TEST(sequential_maximum_size)
{
    etl_writer_options o = { .buffer_size = 4096, .maximum_file_size = 10 * 4096 };
    etl_writer *w;
    uint8_t *b = malloc(4096);
    uint32_t next = 0, nums[4000];
    etl_trace_info info;
    etl_writer_stats st;
    int ok = 0, failed = 0;

    make_dir();
    w = open_writer("max.etl", &o);
    for (int i = 0; i < 15; i++) {
        uint32_t used = fill_buffer(b, 4096, 0, next, 100000, &next);
        int rc = etl_writer_write_buffer(w, b, used, 0, next, 0);
        if (rc == ETL_OK) ok++;
        else if (rc == ETL_FAILED) failed++;
    }
    ck_assert_int_eq(ok, 9);
    ck_assert_int_eq(failed, 6);
    etl_writer_stats_get(w, &st);
    ck_assert_uint_eq(st.log_buffers_lost, 6);
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    ck_assert_int_eq(read_numbers(in_dir("max.etl"), nums, 4000, &info) > 0, 1);
    ck_assert_uint_eq(info.buffers, 10);
    ck_assert_uint_eq(info.buffers_lost, 6);
    ck_assert_uint_eq(info.file_size, 10 * 4096);
    free(b);
    remove_dir();
}
END_TEST

/* A circular file keeps the newest whole buffers and reads back in time order. */
START_TEST(circular_keeps_newest)
{
    etl_writer_options o = { .buffer_size = 4096, .log_file_mode = ETL_MODE_FILE_CIRCULAR,
                             .maximum_file_size = 9 * 4096, .number_of_processors = 2 };
    etl_writer *w;
    uint8_t *b = malloc(4096);
    uint32_t next = 0, starts[40], nums[8000];
    etl_trace_info info;
    long n;

    make_dir();
    w = open_writer("circ.etl", &o);
    for (int i = 0; i < 37; i++) {
        starts[i] = next;
        uint32_t used = fill_buffer(b, 4096, 0, next, 50, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, (uint16_t)(i % 2), next, 0), ETL_OK);
    }
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    n = read_numbers(in_dir("circ.etl"), nums, 8000, &info);
    /* 8 slots: the last 8 buffers (29..36), whole. */
    ck_assert_int_eq(n, next - starts[29]);
    for (long i = 0; i < n; i++) ck_assert_uint_eq(nums[i], starts[29] + i);
    ck_assert_uint_eq(info.file_size, 9 * 4096);
    ck_assert_uint_eq(info.buffers, 9);
    ck_assert_uint_eq(info.log_file_mode, ETL_MODE_FILE_CIRCULAR);
    free(b);
    remove_dir();
}
END_TEST

/* NEWFILE: a new complete file each maximum size; together they hold every event. */
START_TEST(newfile_rotates)
{
    etl_writer_options o = { .buffer_size = 4096, .log_file_mode = ETL_MODE_FILE_NEWFILE,
                             .maximum_file_size = 5 * 4096 };
    etl_writer *w;
    uint8_t *b = malloc(4096);
    uint32_t next = 0, nums[4000], expect = 0;
    etl_writer_stats st;
    char name[64];

    make_dir();
    w = open_writer("part-%d.etl", &o);
    for (int i = 0; i < 13; i++) {
        uint32_t used = fill_buffer(b, 4096, 0, next, 40, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 0, next, 0), ETL_OK);
    }
    etl_writer_stats_get(w, &st);
    ck_assert_uint_eq(st.files, 4); /* 4 data buffers per file: 4 + 4 + 4 + 1 */
    ck_assert_str_eq(etl_writer_path(w), in_dir("part-4.etl"));
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    for (int f = 1; f <= 4; f++) {
        etl_trace_info info;
        long n;
        snprintf(name, sizeof name, "part-%d.etl", f);
        n = read_numbers(in_dir(name), nums, 4000, &info);
        ck_assert_uint_eq(info.buffers, f < 4 ? 5 : 2);
        for (long i = 0; i < n; i++) ck_assert_uint_eq(nums[i], expect++);
    }
    ck_assert_uint_eq(expect, next);
    free(b);
    remove_dir();
}
END_TEST

/* Preallocation reserves the maximum size while writing and is cut back at close. */
START_TEST(preallocate_truncates)
{
    etl_writer_options o = { .buffer_size = 4096, .log_file_mode = ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_FILE_PREALLOCATE,
                             .maximum_file_size = 64 * 4096 };
    etl_writer *w;
    uint8_t *b = malloc(4096);
    uint32_t next = 0, nums[1000];
    struct stat st;

    make_dir();
    w = open_writer("pre.etl", &o);
    ck_assert_int_eq(stat(in_dir("pre.etl"), &st), 0);
    ck_assert_int_eq(st.st_size, 64 * 4096);
    for (int i = 0; i < 3; i++) {
        uint32_t used = fill_buffer(b, 4096, 0, next, 30, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 0, next, 0), ETL_OK);
    }
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    ck_assert_int_eq(stat(in_dir("pre.etl"), &st), 0);
    ck_assert_int_eq(st.st_size, 4 * 4096);
    ck_assert_int_eq(read_numbers(in_dir("pre.etl"), nums, 1000, NULL), next);
    free(b);
    remove_dir();
}
END_TEST

/* Compressed mode: relogger-style header buffer, XPRESS data buffers, same events. */
START_TEST(compressed_round_trip)
{
    etl_writer_options o = { .buffer_size = 65536, .log_file_mode = ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_COMPRESSED };
    etl_writer *w;
    uint8_t *b = malloc(65536);
    uint32_t next = 0, *nums = malloc(40000 * sizeof *nums);
    etl_trace_info info;
    long n;

    make_dir();
    w = open_writer("z.etl", &o);
    for (int i = 0; i < 8; i++) {
        uint32_t used = fill_buffer(b, 65536, 0, next, 100000, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, (uint16_t)(i % 4), next, i == 7), ETL_OK);
    }
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    n = read_numbers(in_dir("z.etl"), nums, 40000, &info);
    ck_assert_int_eq(n, next);
    for (long i = 0; i < n; i++) ck_assert_uint_eq(nums[i], i);
    ck_assert_uint_eq(info.compressed_buffers, 8);
    ck_assert_uint_eq(info.layout_major, 2);
    ck_assert_uint_lt(info.file_size, 8 * 65536 / 2);
    free(b);
    free(nums);
    remove_dir();
}
END_TEST

/* A 32-bit session: SYSTEM32 logfile header event and the 0x110-byte TRACE_LOGFILE_HEADER. */
START_TEST(thirty_two_bit_header)
{
    etl_writer_options o = { .buffer_size = 4096, .pointer_size = 4, .logger_name = "Wow64Session" };
    etl_writer *w;
    uint8_t *b = malloc(4096), head[0x50];
    uint32_t next = 0, nums[100];
    etl_trace_info info;
    FILE *f;

    make_dir();
    w = open_writer("x86.etl", &o);
    uint32_t used = fill_buffer(b, 4096, 0, 0, 20, &next);
    ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 0, next, 1), ETL_OK);
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    f = fopen(in_dir("x86.etl"), "rb");
    ck_assert_int_eq(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    ck_assert_uint_eq(etl_le32(head + 0x48), 0xC0010002u);
    ck_assert_int_eq(read_numbers(in_dir("x86.etl"), nums, 100, &info), 20);
    ck_assert_uint_eq(info.pointer_size, 4);
    ck_assert_str_eq(info.logger_name, "Wow64Session");
    ck_assert_str_eq(info.log_file_name, in_dir("x86.etl"));
    free(b);
    remove_dir();
}
END_TEST

/* What independent parsers need of every file (dissect.etl, etl-parser; doc/format-notes.md):
   a CpuSpeedInMHz they can divide by, no empty data buffer, used sizes on the 8-byte grid,
   a compressed buffer never larger than the records it holds, clean Version words. */
START_TEST(parser_compatibility)
{
    etl_writer_options o = { .buffer_size = 4096, .log_file_mode = ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_COMPRESSED };
    etl_writer *w;
    uint8_t *b = malloc(4096), *f, rec[64];
    uint32_t next = 0, nums[100], used;
    etl_trace_info info;
    size_t size, off;
    etl_data noise = { NULL, 0 };
    uint8_t random_bytes[3000];
    etl_event ev;
    uint32_t step;
    const char *why;

    make_dir();
    w = open_writer("compat.etl", &o);
    /* An empty buffer: nothing to write. */
    ck_assert_int_eq(etl_writer_write_buffer(w, b, ETL_BUFFER_HEADER_SIZE, 0, 1, 0), ETL_OK);
    /* Incompressible records: the buffer goes out uncompressed. */
    {
        uint64_t x = 0x9E3779B97F4A7C15ull; /* xorshift64: bytes XPRESS cannot shrink */
        for (size_t i = 0; i < sizeof random_bytes; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            random_bytes[i] = (uint8_t)(x >> 24);
        }
    }
    noise.ptr = random_bytes;
    noise.size = sizeof random_bytes;
    {
        static const etl_guid other = { 0x0bad, 0, 0, { 0 } };
        etl_event_descriptor d = { 7, 0, 0, 4, 0, 0, 0 };
        used = ETL_BUFFER_HEADER_SIZE;
        used += ETL_RECORD_SPACE(etl_record_encode_event(b + used, 4096 - used, 5, 1, 2, &other, &d, NULL, &noise, 1));
    }
    ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 0, 2, 0), ETL_OK);
    /* A used size off the 8-byte grid is rounded up (the padding is zero). */
    used = fill_buffer(b, 4096, 0, 0, 3, &next);
    b[used] = 0;
    ck_assert_int_eq(etl_writer_write_buffer(w, b, used - 4, 1, 3, 1), ETL_OK);
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);

    f = test_read_file(in_dir("compat.etl"), &size);
    off = etl_le32(f);
    ck_assert_uint_eq(etl_le32(f + 0x48 + 0x20 + ETL_TLH_CPU_SPEED) > 0, 1);
    /* First data buffer: the incompressible one, stored plain. */
    ck_assert_uint_eq(etl_le16(f + off + ETL_BH_BUFFER_FLAG) & ETL_BUFFER_FLAG_COMPRESSED, 0);
    ck_assert_uint_eq(etl_le32(f + off + ETL_BH_BUFFER_SIZE), 4096);
    off += 4096;
    /* Second: compressed, Offset on the grid. */
    ck_assert_uint_ne(etl_le16(f + off + ETL_BH_BUFFER_FLAG) & ETL_BUFFER_FLAG_COMPRESSED, 0);
    ck_assert_uint_eq(etl_le32(f + off + ETL_BH_OFFSET) % 8, 0);
    ck_assert_uint_eq(off + etl_le32(f + off + ETL_BH_BUFFER_SIZE), size); /* and no third buffer */
    free(f);
    ck_assert_int_eq(read_numbers(in_dir("compat.etl"), nums, 100, &info), 3);
    ck_assert_uint_eq(info.buffers, 3);

    /* Version words carry no PEBS/PMC flag bits, whatever the caller passes. */
    etl_record_encode_system(rec, sizeof rec, 1, 0x0501, 0x8702, 0, 0, NULL, 0);
    ck_assert_uint_eq(etl_le16(rec), 2);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    free(b);
    remove_dir();
}
END_TEST

/* A relogger's header: the LogFileName it is given, and BuffersLost before it added to those
   the file refused. */
START_TEST(relogger_header)
{
    etl_writer_options o = { .buffer_size = 4096, .maximum_file_size = 3 * 4096, .log_file_name = "[multiple files]",
                             .log_file_mode = ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_RELOG };
    uint8_t *b = malloc(4096);
    uint32_t nums[200], next = 0, used;
    etl_trace_info info;
    etl_writer *w;

    make_dir();
    w = open_writer("relog.etl", &o);
    etl_writer_set_events_lost(w, 11);
    etl_writer_set_buffers_lost(w, 4);
    for (int i = 0; i < 3; i++) {
        used = fill_buffer(b, 4096, 0, next, 50, &next);
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, 0, next, 0), i < 2 ? ETL_OK : ETL_FAILED);
    }
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    read_numbers(in_dir("relog.etl"), nums, 200, &info);
    ck_assert_str_eq(info.log_file_name, "[multiple files]");
    ck_assert_uint_eq(info.log_file_mode, ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_RELOG);
    ck_assert_uint_eq(info.events_lost, 11);
    ck_assert_uint_eq(info.buffers_lost, 5); /* 4 before the writer, 1 refused by the full file */
    free(b);
    remove_dir();
}
END_TEST

START_TEST(bad_options)
{
    etl_writer *w = NULL;
    etl_writer_options circ = { .log_file_mode = ETL_MODE_FILE_CIRCULAR };
    etl_writer_options newf = { .log_file_mode = ETL_MODE_FILE_NEWFILE, .maximum_file_size = 1 << 20 };
    etl_writer_options small = { .buffer_size = 1024 };
    etl_writer_options both = { .log_file_mode = ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_SEQUENTIAL,
                                .maximum_file_size = 1 << 20 };

    make_dir();
    ck_assert_int_eq(etl_writer_open(&w, in_dir("a.etl"), &circ), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_writer_error(w), "maximum file size"));
    etl_writer_close(w, 0);
    ck_assert_int_eq(etl_writer_open(&w, in_dir("b.etl"), &newf), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_writer_error(w), "%d"));
    etl_writer_close(w, 0);
    ck_assert_int_eq(etl_writer_open(&w, in_dir("c-%d-%s.etl"), &newf), ETL_FATAL);
    etl_writer_close(w, 0);
    ck_assert_int_eq(etl_writer_open(&w, in_dir("d.etl"), &small), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_writer_error(w), "buffer size"));
    etl_writer_close(w, 0);
    ck_assert_int_eq(etl_writer_open(&w, in_dir("e.etl"), &both), ETL_FATAL);
    etl_writer_close(w, 0);
    ck_assert_int_eq(etl_writer_open(&w, "/nonexistent/dir/f.etl", NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_writer_error(w), "/nonexistent/dir/f.etl: cannot create"));
    etl_writer_close(w, 0);
    remove_dir();
}
END_TEST

/* Encoders: every kind, extended items, and the size limit. */
START_TEST(encoders_round_trip)
{
    uint8_t rec[0x10000];
    uint64_t stack[3] = { 0x1000, 0x2000, 0x3000 };
    etl_guid act = { 1, 2, 3, { 4 } }, rel = { 5, 6, 7, { 8 } };
    etl_event_extras x = { &act, &rel, stack, 3, 99, 0, NULL, 0 };
    etl_event_descriptor d = { 300, 2, 16, 5, 11, 9, 0xF0 };
    etl_data data[2] = { { "hello", 5 }, { "world!", 6 } };
    etl_event ev;
    etl_ext_item item;
    uint32_t size, step;
    const char *why;
    static uint8_t big[ETL_MAX_RECORD_SIZE];
    etl_data bigdata = { big, 0 };

    size = etl_record_encode_event(rec, sizeof rec, 1234, 10, 20, &prov, &d, &x, data, 2);
    ck_assert_uint_eq(size, 0x50 + 24 + (8 + 32) + 11);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.id, 300);
    ck_assert_uint_eq(ev.channel, 16);
    ck_assert_uint_eq(ev.keywords, 0xF0);
    ck_assert_int_eq(ev.timestamp, 1234);
    ck_assert(etl_guid_equal(&ev.activity_id, &act));
    ck_assert_uint_eq(ev.ext_count, 2);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 0, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_RELATED_ACTIVITYID);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 1, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_STACK_TRACE64);
    ck_assert_uint_eq(item.size, 32);
    ck_assert_uint_eq(etl_le64(item.data), 99);
    ck_assert_uint_eq(etl_le64(item.data + 24), 0x3000);
    ck_assert_uint_eq(ev.payload_len, 11);
    ck_assert_mem_eq(ev.payload, "helloworld!", 11);
    for (uint32_t i = size; i < ETL_RECORD_SPACE(size); i++) ck_assert_uint_eq(rec[i], 0);
    /* A timestamp in the extras takes the place of the argument's. */
    x.timestamp = 5678;
    etl_record_encode_event(rec, sizeof rec, 1234, 10, 20, &prov, &d, &x, data, 2);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(ev.timestamp, 5678);

    size = etl_record_encode_system(rec, sizeof rec, 55, 0x0501, 3, 4, 5, data, 1);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(ev.hook_id, 0x0501);
    ck_assert_uint_eq(ev.pid, 4);
    ck_assert_uint_eq(ev.payload_len, 5);
    size = etl_record_encode_perfinfo(rec, sizeof rec, 56, 0x0F2E, 2, data, 2);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_PERFINFO);
    ck_assert_uint_eq(ev.payload_len, 11);
    ck_assert_int_eq(ev.timestamp, 56);

    /* Up to the limit, and one byte more. */
    bigdata.size = ETL_MAX_RECORD_SIZE - 0x50;
    ck_assert_uint_eq(etl_record_encode_event(NULL, 0, 0, 0, 0, &prov, &d, NULL, &bigdata, 1), ETL_MAX_RECORD_SIZE);
    bigdata.size++;
    ck_assert_uint_eq(etl_record_encode_event(NULL, 0, 0, 0, 0, &prov, &d, NULL, &bigdata, 1), 0);
    /* Too small a destination: the size, nothing written. */
    memset(rec, 0xAB, 16);
    ck_assert_uint_eq(etl_record_encode_event(rec, 16, 0, 0, 0, &prov, &d, NULL, data, 2), 0x50 + 11);
    ck_assert_uint_eq(rec[0], 0xAB);
}
END_TEST

/* A classic event (EVENT_TRACE_HEADER, FULL_HEADER64) reads back with its class GUID, type,
   level, version, ids, timestamp and payload, every header byte where doc/format.md 4.4 puts
   it; the padding is zeroed; the limit is ETL_MAX_RECORD_SIZE. */
START_TEST(classic_encoder_round_trip)
{
    uint8_t rec[256];
    const etl_guid g = { 0xf6235471, 0x690f, 0x4985, { 0xa2, 0x5e, 0x2d, 0x98, 0xbc, 0x95, 0x91, 0x97 } };
    etl_data data[2] = { { "abc", 3 }, { "defgh", 5 } }, big = { NULL, 0 };
    uint32_t size, step;
    etl_event ev;
    const char *why;

    memset(rec, 0xAB, sizeof rec);
    size = etl_record_encode_classic(rec, sizeof rec, 0x123456789A, &g, 2, 4, 7, 1000, 1001, data, 2);
    ck_assert_uint_eq(size, 0x30 + 8);
    ck_assert_uint_eq(etl_le16(rec), size);
    ck_assert_uint_eq(rec[2], 0x14);
    ck_assert_uint_eq(rec[3], 0xC0);
    ck_assert_uint_eq(rec[4], 2);
    ck_assert_uint_eq(rec[5], 4);
    ck_assert_uint_eq(etl_le16(rec + 6), 7);
    ck_assert_uint_eq(etl_le32(rec + 8), 1001);
    ck_assert_uint_eq(etl_le32(rec + 12), 1000);
    ck_assert_mem_eq(rec + 0x18, "\x71\x54\x23\xf6\x0f\x69\x85\x49\xa2\x5e\x2d\x98\xbc\x95\x91\x97", 16);
    ck_assert_uint_eq(etl_le64(rec + 0x28), 0);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_CLASSIC);
    ck_assert_uint_eq(ev.pointer_size, 8);
    ck_assert(etl_guid_equal(&ev.provider, &g));
    ck_assert_uint_eq(ev.opcode, 2);
    ck_assert_uint_eq(ev.level, 4);
    ck_assert_uint_eq(ev.version, 7);
    ck_assert_uint_eq(ev.pid, 1000);
    ck_assert_uint_eq(ev.tid, 1001);
    ck_assert_int_eq(ev.timestamp, 0x123456789A);
    ck_assert_uint_eq(ev.payload_len, 8);
    ck_assert_mem_eq(ev.payload, "abcdefgh", 8);
    ck_assert_uint_eq(step, 0x38);
    /* Padding after an odd size is zeroed. */
    size = etl_record_encode_classic(rec, sizeof rec, 1, &g, 0, 0, 0, 0, 0, data, 1);
    ck_assert_uint_eq(size, 0x33);
    for (uint32_t i = size; i < ETL_RECORD_SPACE(size); i++) ck_assert_uint_eq(rec[i], 0);
    /* Too small a destination: the size, nothing written; over the limit: 0. */
    memset(rec, 0xAB, sizeof rec);
    ck_assert_uint_eq(etl_record_encode_classic(rec, 0x30, 1, &g, 0, 0, 0, 0, 0, data, 2), 0x38);
    ck_assert_uint_eq(rec[0], 0xAB);
    big.size = ETL_MAX_RECORD_SIZE - 0x30;
    ck_assert_uint_eq(etl_record_encode_classic(NULL, 0, 1, &g, 0, 0, 0, 0, 0, &big, 1), ETL_MAX_RECORD_SIZE);
    big.size++;
    ck_assert_uint_eq(etl_record_encode_classic(NULL, 0, 1, &g, 0, 0, 0, 0, 0, &big, 1), 0);
}
END_TEST

/* Extended items given ready-made (a TraceLogging event's) follow the encoder's own, and
   every item but the last says another follows; their size must be a multiple of 8. */
START_TEST(encoder_ready_made_items)
{
    uint8_t rec[1024], rec2[1024], items[128], traits[64], meta[64];
    uint64_t stack[2] = { 0x1000, 0x2000 };
    etl_guid rel = { 5, 6, 7, { 8 } };
    const etl_tlg_field f[2] = { { "A", ETL_TLG_UINT16, 0, 0, 0 }, { "B", ETL_TLG_UTF8, ETL_TLG_FIXED, 0, 2 } };
    etl_event_extras x = { NULL, &rel, stack, 2, 0, 0, NULL, 0 };
    etl_event_descriptor d = { 1, 0, 11, 5, 0, 0, 0 };
    etl_data data = { "\x01\x02x\0y\0", 6 };
    uint32_t ts, ms, n, step;
    etl_event ev;
    etl_ext_item item;
    const char *why;
    static const uint8_t want_meta[] = { 14, 0, 0, 'E', 0, 'A', 0, ETL_IN_UINT16, 'B', 0,
                                         ETL_IN_ANSI_STRING | 0x20 | 0x80, ETL_TLG_OUT_UTF8, 2, 0 };

    ts = etl_tlg_traits_encode(traits, sizeof traits, "Prov", NULL);
    ck_assert_uint_eq(ts, 7);
    ck_assert_mem_eq(traits, "\x07\x00Prov", 7);
    ck_assert_uint_eq(etl_tlg_traits_encode(NULL, 0, "", NULL), 0);
    ms = etl_tlg_metadata_encode(meta, sizeof meta, "E", f, 2, NULL, 0);
    ck_assert_uint_eq(ms, sizeof want_meta);
    ck_assert_mem_eq(meta, want_meta, ms);
    /* Measured with no buffer first, the same size. */
    ck_assert_uint_eq(etl_tlg_metadata_encode(NULL, 0, "E", f, 2, NULL, 0), ms);
    n = etl_tlg_ext_items_encode(items, sizeof items, traits, ts, meta, ms);
    ck_assert_uint_eq(n, (8 + 8) + (8 + 16));
    ck_assert_uint_eq(etl_le16(items), 16);             /* the item's whole size */
    ck_assert_uint_eq(etl_le16(items + 2), ETL_EXT_PROV_TRAITS);
    ck_assert_uint_eq(etl_le16(items + 4), 1);          /* another follows */
    ck_assert_uint_eq(etl_le16(items + 6), 7);
    ck_assert_uint_eq(items[15], 0);                    /* padding */
    ck_assert_uint_eq(etl_le16(items + 16), 24);
    ck_assert_uint_eq(etl_le16(items + 18), ETL_EXT_EVENT_SCHEMA_TL);
    ck_assert_uint_eq(etl_le16(items + 20), 0);         /* the last */
    ck_assert_uint_eq(etl_le16(items + 22), ms);

    x.ext_items = items;
    x.ext_items_size = n;
    ck_assert_uint_eq(etl_record_encode_event(rec, sizeof rec, 1, 2, 3, &prov, &d, &x, &data, 1),
                      0x50 + 24 + 32 + n + 6);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.ext_count, 4);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 0, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_RELATED_ACTIVITYID);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 1, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_STACK_TRACE64);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 2, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_PROV_TRAITS);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 3, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_EVENT_SCHEMA_TL);
    ck_assert_uint_eq(item.size, ms);
    ck_assert_mem_eq(item.data, want_meta, ms);
    ck_assert_uint_eq(ev.payload_len, 6);
    /* Alone, too; and the TraceLogging write path's encoder writes the same bytes. */
    x.related_activity_id = NULL;
    x.stack = NULL;
    memset(rec, 0xAB, sizeof rec);
    memset(rec2, 0xCD, sizeof rec2);
    ck_assert_uint_eq(etl_record_encode_event(rec, sizeof rec, 1, 2, 3, &prov, &d, &x, &data, 1), 0x50 + n + 6);
    ck_assert_uint_eq(etl_record_encode_event_items(rec2, sizeof rec2, 1, 2, 3, &prov, &d, items, n, &data, 1),
                      0x50 + n + 6);
    ck_assert_mem_eq(rec, rec2, ETL_RECORD_SPACE(0x50 + n + 6));
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.ext_count, 2);
    /* Not whole words: no record. */
    x.ext_items_size = n - 4;
    ck_assert_uint_eq(etl_record_encode_event(rec, sizeof rec, 1, 2, 3, &prov, &d, &x, &data, 1), 0);
    ck_assert_uint_eq(etl_record_encode_event_items(rec2, sizeof rec2, 1, 2, 3, &prov, &d, items, n - 4, &data, 1), 0);
}
END_TEST

/* LBR events: encoded with their entries, decoded back. */
START_TEST(lbr_round_trip)
{
    uint8_t rec[4096];
    etl_lbr_entry e[16];
    etl_event ev;
    etl_lbr lbr;
    uint32_t step;
    const char *why;
    char g[ETL_GUID_STRING_SIZE];

    for (unsigned i = 0; i < 16; i++) {
        e[i].from = 0x7ff600001000ull + i;
        e[i].to = 0x7ff600002000ull + i;
        e[i].reserved = i;
    }
    ck_assert_uint_eq(
        etl_record_encode_lbr(rec, sizeof rec, 987654, 11, 22, ETL_LBR_FILTER_USER | ETL_LBR_CALLSTACK, e, 16),
        16 + 24 + 16 * 24);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_PERFINFO);
    ck_assert_int_eq(ev.timestamp, 987654);
    ck_assert_uint_eq(ev.opcode, 0x20);
    ck_assert_str_eq(etl_guid_format(&ev.provider, g), "99134383-5248-43fc-834b-529454e75df3");
    ck_assert_int_eq(etl_lbr_decode(&ev, &lbr), 1);
    ck_assert_int_eq(lbr.timestamp, 987654);
    ck_assert_uint_eq(lbr.pid, 11);
    ck_assert_uint_eq(lbr.tid, 22);
    ck_assert_uint_eq(lbr.filters, ETL_LBR_FILTER_USER | ETL_LBR_CALLSTACK);
    ck_assert_uint_eq(lbr.count, 16);
    for (unsigned i = 0; i < 16; i++) {
        etl_lbr_entry x = etl_lbr_entry_at(&lbr, i);
        ck_assert_uint_eq(x.from, e[i].from);
        ck_assert_uint_eq(x.to, e[i].to);
        ck_assert_uint_eq(x.reserved, i);
    }
    /* A payload that is not header + whole entries. */
    ev.payload_len -= 8;
    ck_assert_int_eq(etl_lbr_decode(&ev, &lbr), ETL_FAILED);
    /* Not an LBR event. */
    etl_record_encode_perfinfo(rec, sizeof rec, 1, 0x0F2E, 2, NULL, 0);
    ck_assert_int_eq(etl_record_decode(NULL, rec, sizeof rec, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_int_eq(etl_lbr_decode(&ev, &lbr), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("writer");
    TCase *tc = tcase_create("files");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sequential_round_trip);
    tcase_add_test(tc, buffer_header_bytes);
    tcase_add_test(tc, sequential_maximum_size);
    tcase_add_test(tc, circular_keeps_newest);
    tcase_add_test(tc, newfile_rotates);
    tcase_add_test(tc, preallocate_truncates);
    tcase_add_test(tc, compressed_round_trip);
    tcase_add_test(tc, thirty_two_bit_header);
    tcase_add_test(tc, parser_compatibility);
    tcase_add_test(tc, bad_options);
    tcase_add_test(tc, relogger_header);
    tcase_add_test(tc, encoders_round_trip);
    tcase_add_test(tc, encoder_ready_made_items);
    tcase_add_test(tc, classic_encoder_round_trip);
    tcase_add_test(tc, lbr_round_trip);
    tcase_add_test(tc, direct_batches_match_buffered);
    tcase_add_test(tc, batch_write_error);
    suite_add_tcase(s, tc);
    return check_run(s);
}
