/* SPDX-License-Identifier: MIT */
/* Reader tests on synthetic traces: time order across processors, circular files, compression, clocks. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

static const etl_guid prov = { 0x11223344, 0x5566, 0x7788, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* A trace of n events spread over cpus processors in small buffers; event i carries i in its
   payload and id, and its timestamp interleaves the processors (ties on every 5th event). */
static uint8_t *build(struct synth_options *o, int n, size_t *size)
{
    struct synth *s = synth_new(o);
    uint8_t rec[512];

    for (int i = 0; i < n; i++) {
        uint32_t payload[8] = { (uint32_t)i };
        unsigned cpu = (unsigned)(i * 7 + i / 3) % o->cpus;
        int64_t ts = 2000000 + (i / 5) * 10;
        uint32_t len = synth_event_header(rec, 1, ts, &prov, (uint16_t)i, 0, 4, 0, 0, 0, 1, 2, NULL, 0, payload,
                                          4 + (uint32_t)(i % 8) * 4);
        ck_assert_int_eq(synth_add(s, cpu, rec, len), 0);
    }
    return synth_finish(s, size);
}

static etl_reader *open_mem(const uint8_t *data, size_t size, int order)
{
    etl_reader_options o = { .order = order, .name = "synthetic.etl" };
    etl_reader *r = NULL;
    int rc = etl_reader_open_memory(&r, data, size, &o);
    ck_assert_msg(rc == ETL_OK, "open: %d %s", rc, etl_reader_error(r));
    return r;
}

/* Time order: all events, sorted by timestamp; ties by processor, then position in the stream. */
START_TEST(time_order_merges_processors)
{
    struct synth_options o = { .buffer_size = 1024, .cpus = 4 };
    size_t size;
    uint8_t *data = build(&o, 2000, &size);
    etl_reader *r = open_mem(data, size, ETL_ORDER_TIME);
    etl_event ev;
    int seen[2000] = { 0 };
    int n = 0, rc, last_id[4] = { -1, -1, -1, -1 };
    int64_t last_ts = 0;
    unsigned last_cpu = 0;

    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        int id = (int)etl_le32(ev.payload);
        if (ev.kind != ETL_KIND_EVENT) continue; /* the logfile header and PartitionInfo */
        ck_assert_int_eq(id, ev.id);
        ck_assert(!seen[id]);
        seen[id] = 1;
        ck_assert_uint_eq(ev.cpu, (unsigned)(id * 7 + id / 3) % 4);
        ck_assert(ev.timestamp >= last_ts);
        if (ev.timestamp == last_ts) ck_assert_uint_ge(ev.cpu, last_cpu);
        ck_assert_int_gt(id, last_id[ev.cpu]); /* each processor's events in their order */
        last_id[ev.cpu] = id;
        last_ts = ev.timestamp;
        last_cpu = ev.cpu;
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(n, 2000);
    ck_assert_uint_gt(etl_reader_info(r)->buffers, 20);
    etl_reader_close(r);
    free(data);
}
END_TEST

/* File order: buffer by buffer as stored, header buffer first. */
START_TEST(file_order_is_storage_order)
{
    struct synth_options o = { .buffer_size = 1024, .cpus = 3, .rotate = 5 };
    size_t size;
    uint8_t *data = build(&o, 500, &size);
    etl_reader *r = open_mem(data, size, ETL_ORDER_FILE);
    etl_event ev;
    uint64_t last_off = 0;
    uint32_t last_rec = 0;
    int n = 0;

    while (etl_reader_next(r, &ev) == ETL_OK) {
        ck_assert(ev.buffer_offset > last_off || (ev.buffer_offset == last_off && ev.record_offset > last_rec) || n == 0);
        ck_assert_uint_eq(ev.buffer_offset % 1024, 0);
        ck_assert_uint_eq(ev.buffer_index, ev.buffer_offset / 1024);
        last_off = ev.buffer_offset;
        last_rec = ev.record_offset;
        n++;
    }
    ck_assert_int_eq(n, 502);
    etl_reader_close(r);
    free(data);
}
END_TEST

/* A circular file: data buffers stored rotated (oldest in the middle of the file). Time
   order is rebuilt from the SequenceNumbers, whatever the rotation. */
START_TEST(circular_rotation_reads_in_time_order)
{
    for (int rot = 0; rot < 7; rot++) {
        struct synth_options o = { .buffer_size = 1024, .cpus = 2, .rotate = rot * 3,
                                   .log_file_mode = ETL_MODE_FILE_CIRCULAR };
        size_t size;
        uint8_t *data = build(&o, 700, &size);
        etl_reader *r = open_mem(data, size, ETL_ORDER_TIME);
        etl_event ev;
        int64_t last = 0;
        int n = 0;

        while (etl_reader_next(r, &ev) == ETL_OK) {
            ck_assert_msg(ev.timestamp >= last, "rotation %d: event %d out of order", rot * 3, n);
            last = ev.timestamp;
            n++;
        }
        ck_assert_int_eq(n, 702);
        ck_assert_uint_eq(etl_reader_info(r)->log_file_mode, ETL_MODE_FILE_CIRCULAR);
        etl_reader_close(r);
        free(data);
    }
}
END_TEST

/* XPRESS-compressed buffers give the same events as the plain file. */
START_TEST(compressed_equals_uncompressed)
{
    struct synth_options plain = { .buffer_size = 4096, .cpus = 4 };
    struct synth_options comp = { .buffer_size = 4096, .cpus = 4, .compressed = 1 };
    size_t n1, n2;
    uint8_t *a = build(&plain, 3000, &n1), *b = build(&comp, 3000, &n2);
    etl_reader *ra = open_mem(a, n1, ETL_ORDER_TIME), *rb = open_mem(b, n2, ETL_ORDER_TIME);
    etl_event ea, eb;
    int n = 0, rc;

    ck_assert_uint_lt(n2, n1);
    ck_assert_uint_eq(etl_reader_info(rb)->compressed_buffers, etl_reader_info(rb)->buffers - 1);
    ck_assert(etl_reader_info(rb)->log_file_mode & ETL_MODE_COMPRESSED);
    ck_assert_uint_eq(etl_reader_info(rb)->layout_major, 2);
    while ((rc = etl_reader_next(ra, &ea)) == ETL_OK) {
        ck_assert_int_eq(etl_reader_next(rb, &eb), ETL_OK);
        ck_assert_int_eq(ea.timestamp, eb.timestamp);
        ck_assert_uint_eq(ea.cpu, eb.cpu);
        ck_assert_uint_eq(ea.record_size, eb.record_size);
        if (ea.buffer_index > 0) /* the logfile headers differ in mode and layout version */
            ck_assert_mem_eq(ea.record, eb.record, ea.record_size);
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(etl_reader_next(rb, &eb), ETL_EOF);
    ck_assert_int_eq(n, 3002);
    etl_reader_close(ra);
    etl_reader_close(rb);
    free(a);
    free(b);
}
END_TEST

/* From memory the records are read where they are (a real-time batch is read so, issue 17):
   each event's record points into the caller's bytes, at its buffer's offset plus its own,
   in time order as from a file; a compressed buffer's are decompressed, so not there. */
START_TEST(memory_records_read_in_place)
{
    struct synth_options plain = { .buffer_size = 4096, .cpus = 4 };
    struct synth_options comp = { .buffer_size = 4096, .cpus = 4, .compressed = 1 };
    size_t n1, n2;
    uint8_t *a = build(&plain, 3000, &n1), *b = build(&comp, 3000, &n2);
    etl_reader *ra = open_mem(a, n1, ETL_ORDER_TIME), *rb = open_mem(b, n2, ETL_ORDER_TIME);
    etl_event ev;
    int n = 0, rc;

    while ((rc = etl_reader_next(ra, &ev)) == ETL_OK) {
        ck_assert_ptr_eq(ev.record, a + ev.buffer_offset + ev.record_offset);
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(n, 3002);
    while ((rc = etl_reader_next(rb, &ev)) == ETL_OK)
        if (ev.buffer_index > 0) ck_assert(ev.record < b || ev.record >= b + n2);
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(ra);
    etl_reader_close(rb);
    free(a);
    free(b);
}
END_TEST

/* The trace info of a 32-bit session, with every clock type. */
START_TEST(trace_info_32_bit_and_clocks)
{
    static const int clocks[] = { ETL_CLOCK_PERFCOUNTER, ETL_CLOCK_SYSTEMTIME, ETL_CLOCK_CPUCYCLE };
    for (int i = 0; i < 3; i++) {
        struct synth_options o = { .pointer_size = i == 1 ? 8 : 4, .cpus = 2, .clock_type = clocks[i],
                                   .perf_freq = 3579545, .cpu_speed_mhz = 2400, .start_timestamp = 777,
                                   .logger_name = "Sess\xc3\xa9" /* UTF-8 through UTF-16 and back */,
                                   .log_file_name = "C:\\x.etl", .events_lost = 17 };
        size_t size;
        uint8_t *data = build(&o, 10, &size);
        etl_reader *r = open_mem(data, size, ETL_ORDER_TIME);
        const etl_trace_info *in = etl_reader_info(r);
        etl_event ev;

        ck_assert_uint_eq(in->pointer_size, o.pointer_size);
        ck_assert_int_eq(in->clock.type, clocks[i]);
        ck_assert_int_eq(in->clock.perf_freq, 3579545);
        ck_assert_uint_eq(in->clock.cpu_speed_mhz, 2400);
        ck_assert_int_eq(in->clock.start_time, 133485408000000000LL);
        ck_assert_int_eq(in->clock.start_timestamp, 777);
        ck_assert_str_eq(in->logger_name, "Sess\xc3\xa9");
        ck_assert_str_eq(in->log_file_name, "C:\\x.etl");
        ck_assert_uint_eq(in->events_lost, 17);
        ck_assert_uint_eq(in->buffers, 3);
        ck_assert_uint_eq(in->buffers_written, 3);
        ck_assert_uint_eq(in->number_of_processors, 2);
        ck_assert_uint_eq(in->buffer_size, 65536);
        ck_assert_uint_eq(in->layout_major, 1);
        ck_assert_uint_eq(in->layout_minor, 5);
        ck_assert_uint_eq(in->os_build, 19041);
        ck_assert_int_eq(etl_reader_next(r, &ev), ETL_OK);
        ck_assert_int_eq(ev.kind, ETL_KIND_SYSTEM);
        ck_assert_uint_eq(ev.pointer_size, o.pointer_size);
        ck_assert_int_eq(etl_reader_time_ns(r, ev.timestamp), etl_time_from_filetime(in->clock.start_time));
        /* The first data event is 2000000 - 777 ticks later. */
        while (ev.kind != ETL_KIND_EVENT) ck_assert_int_eq(etl_reader_next(r, &ev), ETL_OK);
        {
            int64_t freq = clocks[i] == ETL_CLOCK_PERFCOUNTER ? 3579545 : clocks[i] == ETL_CLOCK_SYSTEMTIME ? 10000000
                                                                                                          : 2400000000LL;
            __int128 want = (__int128)(2000000 - 777) * 1000000000 / freq;
            ck_assert_int_eq(etl_reader_time_ns(r, ev.timestamp) - etl_time_from_filetime(in->clock.start_time),
                             (int64_t)want);
        }
        etl_reader_close(r);
        free(data);
    }
}
END_TEST

/* Rewind delivers the same sequence again. */
START_TEST(rewind_repeats)
{
    struct synth_options o = { .buffer_size = 2048, .cpus = 3 };
    size_t size;
    uint8_t *data = build(&o, 400, &size);
    etl_reader *r = open_mem(data, size, ETL_ORDER_TIME);
    etl_event ev;
    int64_t first[402];
    int n = 0;

    while (etl_reader_next(r, &ev) == ETL_OK) first[n++] = ev.timestamp * 1000 + ev.id;
    ck_assert_int_eq(n, 402);
    ck_assert_int_eq(etl_reader_rewind(r), ETL_OK);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(etl_reader_next(r, &ev), ETL_OK);
        ck_assert_int_eq(ev.timestamp * 1000 + ev.id, first[i]);
    }
    ck_assert_int_eq(etl_reader_next(r, &ev), ETL_EOF);
    etl_reader_close(r);
    free(data);
}
END_TEST

/* Every header kind in one buffer, in both orders; a WPP message without a timestamp keeps
   its place (it takes the time of the event before it). */
START_TEST(every_kind_in_a_file)
{
    struct synth_options o = { .cpus = 1 };
    struct synth *s = synth_new(&o);
    uint8_t rec[512], ext[32];
    uint64_t pmc = 5;
    uint32_t n, ext_len = synth_ext_item(ext, ETL_EXT_TS_ID, "\1\0\0\0", 4, 0);
    size_t size;
    uint8_t *data;
    etl_reader *r;
    etl_event ev;
    int kinds[16], k = 0;

    n = synth_system(rec, 1, 0, 2000000, 0x0501, 3, 4, 5, "abcd", 4);             synth_add(s, 0, rec, n);
    n = synth_system(rec, 0, 1, 2000001, 0x0524, 2, 4, 5, "abcd", 4);             synth_add(s, 0, rec, n);
    n = synth_perfinfo(rec, 1, 2000002, 0x0F2E, 2, NULL, &pmc, 1, "12345678", 8); synth_add(s, 0, rec, n);
    n = synth_classic(rec, 0, 0, 2000003, &prov, 1, 4, 0, 1, 2, "x", 1);          synth_add(s, 0, rec, n);
    n = synth_classic(rec, 1, 1, 2000004, &prov, 1, 4, 0, 1, 2, "x", 1);          synth_add(s, 0, rec, n);
    n = synth_event_header(rec, 1, 2000005, &prov, 9, 0, 4, 0, 0, 0, 1, 2, ext, ext_len, "y", 1);
    synth_add(s, 0, rec, n);
    n = synth_message(rec, 7, ETL_MSG_GUID, 0, &prov, 0, 0, 0, "z", 1);           synth_add(s, 0, rec, n);
    n = synth_message(rec, 8, ETL_MSG_GUID | ETL_MSG_TIMESTAMP, 0, &prov, 2000006, 0, 0, "z", 1);
    synth_add(s, 0, rec, n);
    data = synth_finish(s, &size);
    for (int order = 0; order < 2; order++) {
        int64_t last = 0;
        r = open_mem(data, size, order);
        k = 0;
        while (etl_reader_next(r, &ev) == ETL_OK) {
            ck_assert_int_ge(ev.timestamp, last);
            last = ev.timestamp;
            if (k == 8) ck_assert_int_eq(ev.timestamp, 2000005);
            kinds[k++] = ev.kind;
        }
        ck_assert_int_eq(k, 10);
        ck_assert_int_eq(kinds[2], ETL_KIND_SYSTEM);
        ck_assert_int_eq(kinds[3], ETL_KIND_COMPACT);
        ck_assert_int_eq(kinds[4], ETL_KIND_PERFINFO);
        ck_assert_int_eq(kinds[5], ETL_KIND_CLASSIC);
        ck_assert_int_eq(kinds[6], ETL_KIND_INSTANCE);
        ck_assert_int_eq(kinds[7], ETL_KIND_EVENT);
        ck_assert_int_eq(kinds[8], ETL_KIND_MESSAGE);
        ck_assert_int_eq(kinds[9], ETL_KIND_MESSAGE);
        etl_reader_close(r);
    }
    free(data);
}
END_TEST

/* Every buffer is read once, and no read is larger than a buffer. */
START_TEST(source_reads_each_buffer_once)
{
    struct synth_options o = { .buffer_size = 8192, .cpus = 8 };
    size_t size;
    uint8_t *data = build(&o, 20000, &size);
    struct test_counting_source c = { data, size, 0, 0, 0, 0 };
    etl_reader_source src;
    etl_reader *r = NULL;
    unsigned w;

    test_counting_source(&c, &src);
    ck_assert_int_eq(etl_reader_open(&r, &src, NULL), ETL_OK);
    ck_assert_int_eq(test_count_events(r, &w), 20002);
    /* Index walk: one buffer header per buffer (plus the first 64 KiB once); reading: each
       buffer's used bytes once. */
    ck_assert_uint_le(c.bytes, size + 0x10048 + 0x48 * etl_reader_info(r)->buffers);
    ck_assert_uint_le(c.largest, 0x10048);
    etl_reader_close(r);
    ck_assert_int_eq(c.closed, 1);
    free(data);
}
END_TEST

static void count_damage(void *arg, int64_t offset, const char *message)
{
    (void)offset;
    if (strstr(message, "file order")) ++*(int *)arg;
}

/* A damaged file whose buffers claim many processors with 16 MiB of data each would need
   more than the memory limit in time order: it is read in file order, with a warning. */
START_TEST(too_many_processors_for_time_order)
{
    struct synth_options o = { .buffer_size = 16u << 20, .cpus = 65, .compressed = 1 };
    struct synth *s = synth_new(&o);
    uint8_t rec[256];
    size_t size, off;
    uint8_t *data;
    etl_reader *r = NULL;
    etl_reader_options oo = { .order = ETL_ORDER_TIME, .on_damage = count_damage };
    int notes = 0;
    unsigned w;

    oo.on_damage_arg = &notes;
    for (unsigned cpu = 0; cpu < 65; cpu++) {
        uint32_t n = synth_event_header(rec, 1, 2000000 + cpu, &prov, 1, 0, 4, 0, 0, 0, 1, 2, NULL, 0, "abc", 3);
        ck_assert_int_eq(synth_add(s, cpu, rec, n), 0);
    }
    data = synth_finish(s, &size);
    /* Every data buffer claims to hold 16 MiB. */
    off = etl_le32(data);
    for (int i = 0; i < 65; i++) {
        etl_put32(data + off + ETL_BH_OFFSET, 16u << 20);
        off += etl_le32(data + off);
    }
    ck_assert_uint_eq(off, size);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, &oo), ETL_WARN);
    ck_assert_int_eq(notes, 1);
    ck_assert_int_eq(test_count_events(r, &w), 67);
    etl_reader_close(r);
    free(data);
}
END_TEST

START_TEST(open_errors_name_the_file)
{
    etl_reader *r = NULL;

    ck_assert_int_eq(etl_reader_open_path(&r, "/nonexistent/dir/trace.etl", NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(etl_reader_error(r), "/nonexistent/dir/trace.etl"));
    ck_assert_ptr_nonnull(strstr(etl_reader_error(r), strerror(ENOENT)));
    ck_assert_int_eq(etl_reader_next(r, NULL), ETL_FATAL);
    etl_reader_close(r);
    ck_assert_int_eq(etl_reader_open_path(&r, "/", NULL), ETL_FATAL);
    etl_reader_close(r);
}
END_TEST

START_TEST(versions)
{
    ck_assert_int_eq(etl_version_number(), ETL_VERSION_NUMBER);
    ck_assert_str_eq(etl_version(), ETL_VERSION_STRING);
    ck_assert_ptr_nonnull(strstr(etl_version_details(), "zlib/"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("synthetic");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, time_order_merges_processors);
    tcase_add_test(tc, file_order_is_storage_order);
    tcase_add_test(tc, circular_rotation_reads_in_time_order);
    tcase_add_test(tc, compressed_equals_uncompressed);
    tcase_add_test(tc, memory_records_read_in_place);
    tcase_add_test(tc, trace_info_32_bit_and_clocks);
    tcase_add_test(tc, rewind_repeats);
    tcase_add_test(tc, every_kind_in_a_file);
    tcase_add_test(tc, source_reads_each_buffer_once);
    tcase_add_test(tc, too_many_processors_for_time_order);
    tcase_add_test(tc, open_errors_name_the_file);
    tcase_add_test(tc, versions);
    suite_add_tcase(s, tc);
    return check_run(s);
}
