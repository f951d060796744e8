/* SPDX-License-Identifier: MIT */
/* Capture engine tests: every logging mode and clock through the reader, exact EventsLost, snapshots, crashes. */
#define _GNU_SOURCE /* usleep, kill */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "format/format.h"
#include "engine/engine.h"
#include "testutil.h"

static const etl_guid prov = { 0x5eed0001, 0xabcd, 0x4ef0, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }
static const char *in_dir(const char *name) { return test_dir_path(name); }

/* The engine under test: each test runs once with restartable sequences (where the machine
   has them) and once with compare-and-swap reservation (the "atomic" test case). */
static uint32_t engine;
static void use_atomic_engine(void) { engine = ETL_ENGINE_ATOMIC_RESERVE; }

static etl_session *start(etl_session_properties *p)
{
    etl_session *s = NULL;
    int rc;

    p->engine_flags |= engine;
    rc = etl_session_start(&s, p);
    ck_assert_msg(rc == ETL_OK, "start: %s", etl_session_error(s));
    return s;
}

/* Event `value` of `thread`: id = thread, payload = the 64-bit value then `pad` bytes. */
static int write_one(etl_session *s, uint16_t thread, uint64_t value, uint32_t pad)
{
    static const uint8_t zeros[65536];
    etl_event_descriptor d = { thread, 0, 0, 4, 0, 0, 0 };
    etl_data data[2] = { { &value, 8 }, { zeros, pad } };
    return etl_session_write_event(s, &prov, &d, NULL, data, 2);
}

/* Reads a file's EVENT_HEADER events of our provider: values[thread][...] in time order. */
struct readback {
    long n;
    uint64_t *value;
    uint16_t *thread;
    etl_trace_info info;
    char logger[128];
    unsigned warnings;
};

static void read_back(const char *path, struct readback *rb)
{
    etl_reader *r = NULL;
    etl_event ev;
    long cap = 1024;
    int rc = etl_reader_open_path(&r, path, NULL);

    ck_assert_msg(rc == ETL_OK, "%s: %s", path, etl_reader_error(r));
    memset(rb, 0, sizeof *rb);
    rb->value = malloc((size_t)cap * sizeof *rb->value);
    rb->thread = malloc((size_t)cap * sizeof *rb->thread);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &prov)) continue;
        if (rb->n == cap) {
            cap *= 2;
            rb->value = realloc(rb->value, (size_t)cap * sizeof *rb->value);
            rb->thread = realloc(rb->thread, (size_t)cap * sizeof *rb->thread);
        }
        rb->value[rb->n] = etl_le64(ev.payload);
        rb->thread[rb->n++] = ev.id;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    rb->warnings = etl_reader_warnings(r);
    rb->info = *etl_reader_info(r);
    snprintf(rb->logger, sizeof rb->logger, "%s", rb->info.logger_name);
    rb->info.logger_name = rb->logger;
    rb->info.log_file_name = "";
    etl_reader_close(r);
}

static void free_back(struct readback *rb)
{
    free(rb->value);
    free(rb->thread);
}

/* One thread, a sequential file: every event in order, statistics and header agree. */
START_TEST(sequential_one_thread)
{
    etl_session_properties p = { .logger_name = "OneThread", .buffer_size_kb = 4, .maximum_buffers = 4096 };
    etl_session_stats st;
    struct readback rb;
    etl_session *s;

    make_dir();
    p.log_file_name = in_dir("one.etl");
    s = start(&p);
    for (uint64_t i = 0; i < 20000; i++) ck_assert_int_eq(write_one(s, 1, i, (uint32_t)(i % 50)), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(st.events_lost, 0);
    read_back(in_dir("one.etl"), &rb);
    ck_assert_int_eq(rb.n, 20000);
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], (uint64_t)i);
    ck_assert_uint_eq(rb.warnings, 0);
    ck_assert_str_eq(rb.info.logger_name, "OneThread");
    ck_assert_uint_eq(rb.info.buffers, st.buffers_written + 1);
    ck_assert_uint_eq(rb.info.buffers_written, st.buffers_written + 1);
    ck_assert_uint_eq(rb.info.events_lost, 0);
    ck_assert_uint_eq(rb.info.buffer_size, 4096);
    ck_assert_int_ne(rb.info.end_time, 0);
    ck_assert_int_ge(rb.info.end_time, rb.info.clock.start_time);
    free_back(&rb);
    remove_dir();
}
END_TEST

struct producer {
    etl_session *s;
    uint16_t thread;
    uint64_t count, ok, lost;
};

static void *produce(void *arg)
{
    struct producer *pr = arg;
    for (uint64_t i = 0; i < pr->count; i++) {
        if (write_one(pr->s, pr->thread, i, (uint32_t)(i % 24)) == ETL_OK) pr->ok++;
        else {
            ck_assert(errno == ENOBUFS || errno == ENOSPC);
            pr->lost++;
        }
    }
    return NULL;
}

/* Runs n threads of count events each; checks written + lost = produced, exactly. */
static void overrun(etl_session_properties *p, int threads, uint64_t count, int expect_loss)
{
    struct producer pr[8];
    pthread_t t[8];
    etl_session_stats st;
    struct readback rb;
    etl_session *s = start(p);
    uint64_t ok = 0, lost = 0;
    char *seen[8];

    for (int i = 0; i < threads; i++) {
        pr[i] = (struct producer){ s, (uint16_t)(i + 1), count, 0, 0 };
        pthread_create(&t[i], NULL, produce, &pr[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        ok += pr[i].ok;
        lost += pr[i].lost;
    }
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    read_back(p->log_file_name, &rb);
    /* Written + lost = produced: what the callers were told was lost, plus what was in
       buffers the file refused, is EventsLost. */
    ck_assert_uint_eq(ok + lost, (uint64_t)threads * count);
    ck_assert_uint_eq((uint64_t)rb.n + st.events_lost, (uint64_t)threads * count);
    ck_assert_uint_eq(rb.info.events_lost, (uint32_t)st.events_lost);
    ck_assert_uint_ge(st.events_lost, lost);
    if (!st.log_buffers_lost) ck_assert_uint_eq((uint64_t)rb.n, ok);
    if (expect_loss) ck_assert_uint_gt(lost, 0);
    /* Each written event once, no event twice. */
    for (int i = 0; i < threads; i++) seen[i] = calloc(count, 1);
    for (long i = 0; i < rb.n; i++) {
        ck_assert_uint_ge(rb.thread[i], 1);
        ck_assert_uint_le(rb.thread[i], (unsigned)threads);
        ck_assert_uint_lt(rb.value[i], count);
        ck_assert(!seen[rb.thread[i] - 1][rb.value[i]]);
        seen[rb.thread[i] - 1][rb.value[i]] = 1;
    }
    for (int i = 0; i < threads; i++) free(seen[i]);
    ck_assert_uint_eq(rb.warnings, 0);
    free_back(&rb);
}

/* Many threads on a pool as small as allowed: events are lost, and counted exactly. */
START_TEST(events_lost_exact_under_overrun)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 1, .maximum_buffers = 1,
                                 .number_of_processors = 2 };
    make_dir();
    p.log_file_name = in_dir("overrun.etl");
    overrun(&p, 4, 200000, 0);
    remove_dir();
}
END_TEST

/* A sequential file with a maximum size: logging stops there, and the rest is counted lost.
   The pool is held to 64 buffers (256 KiB), so that the writers cannot run more than that ahead
   of the flush thread: the file is full long before they are done, whatever the scheduler does.
   With the default maximum (64 MiB more) a starved flush thread let the writers put all 90,000
   events in memory before the file filled, and no writer was refused. */
START_TEST(sequential_file_full)
{
    etl_session_properties p = { .buffer_size_kb = 4, .maximum_file_size_mb = 1, .minimum_buffers = 64,
                                 .maximum_buffers = 64 };
    make_dir();
    p.log_file_name = in_dir("full.etl");
    overrun(&p, 3, 30000, 1);
    remove_dir();
}
END_TEST

/* Many threads on one processor, small buffers: a thread preempted between swapping a full
   buffer out of the processor's slot and handing it to the flush thread must not let the
   next buffer of that processor reach the file before it. Each thread's events read back in
   the order it wrote them. */
static void *produce_pinned(void *arg)
{
    struct producer *pr = arg;
    cpu_set_t one;

    CPU_ZERO(&one);
    CPU_SET(0, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    for (uint64_t i = 0; i < pr->count; i++) {
        while (write_one(pr->s, pr->thread, i, 200) != ETL_OK) sched_yield(); /* each event, in order */
        pr->ok++;
    }
    return NULL;
}

START_TEST(buffers_of_a_processor_in_order)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 64, .maximum_buffers = 64 };
    struct producer pr[8];
    pthread_t t[8];
    struct readback rb;
    uint64_t next[8] = { 0 };
    long late = 0;
    etl_session *s;

    make_dir();
    p.log_file_name = in_dir("order.etl");
    s = start(&p);
    for (int i = 0; i < 8; i++) {
        pr[i] = (struct producer){ s, (uint16_t)(i + 1), 40000, 0, 0 };
        pthread_create(&t[i], NULL, produce_pinned, &pr[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_back(p.log_file_name, &rb);
    ck_assert_int_eq(rb.n, 8 * 40000);
    for (long i = 0; i < rb.n; i++) {
        uint16_t th = rb.thread[i] - 1;
        if (rb.value[i] != next[th]) late++;
        next[th] = rb.value[i] + 1;
    }
    ck_assert_msg(late == 0, "%ld events out of their thread's order", late);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* MaximumBuffers is room for peaks: a writer well below what the flush thread writes keeps the
   pool near its minimum, because the flush thread is woken as the free buffers run low, not
   when the room to grow does. */
START_TEST(pool_grows_only_for_peaks)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 8, .maximum_buffers = 512,
                                 .number_of_processors = 2 };
    etl_session_stats st;
    etl_session *s;

    make_dir();
    p.log_file_name = in_dir("peaks.etl");
    s = start(&p);
    /* 300 buffers' worth (30 events a buffer), written while the file keeps up: two buffers'
       worth, then the flush waited for (not a pace of writes, which a loaded machine's flush
       thread may not keep: the pool then rightly grows). */
    for (uint64_t i = 0; i < 300 * 30; i++) {
        ck_assert_int_eq(write_one(s, 1, i, 100), ETL_OK);
        if (i % 60 == 59) ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    }
    etl_session_stats_get(s, &st);
    ck_assert_msg(st.number_of_buffers == 8, "the pool grew to %u buffers", st.number_of_buffers);
    ck_assert_uint_eq(st.events_lost, 0);
    /* A peak the file cannot take at once (its flush held): the pool grows into its room. */
    etl_session_hold_flush(s, 1);
    for (uint64_t i = 0; i < 100 * 30; i++) ck_assert_int_eq(write_one(s, 1, 300 * 30 + i, 100), ETL_OK);
    etl_session_stats_get(s, &st);
    ck_assert_msg(st.number_of_buffers >= 100 && st.number_of_buffers <= 512, "the pool has %u buffers",
                  st.number_of_buffers);
    ck_assert_uint_eq(st.events_lost, 0);
    etl_session_hold_flush(s, 0);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(st.events_lost, 0);
    remove_dir();
}
END_TEST

/* Default buffer settings ride out a write that stalls for 250 ms at 2 million events a second
   of 112-byte records (issue 17): the flush thread is held while 500 000 such events are
   written, as if its write had not returned, and none is lost. At rest the pool is its
   minimum, 2 buffers per processor, as before; it grows only while the write is held. */
START_TEST(defaults_ride_out_a_stalled_write)
{
    etl_session_properties p = { 0 }, got;
    const uint64_t total = 500000; /* 250 ms at 2 M/s */
    etl_session_stats st;
    struct readback rb;
    etl_session *s;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);

    make_dir();
    p.log_file_name = in_dir("stall.etl");
    s = start(&p);
    etl_session_properties_get(s, &got);
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(got.minimum_buffers, 2 * ncpu);
    ck_assert_uint_eq(st.number_of_buffers, 2 * ncpu);
    ck_assert_uint_eq(got.maximum_buffers, 2 * ncpu + 1024);
    etl_session_hold_flush(s, 1);
    for (uint64_t i = 0; i < total; i++) ck_assert_int_eq(write_one(s, 1, i, 24), ETL_OK); /* 112 bytes */
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(st.events_lost, 0);
    ck_assert_uint_eq(st.buffers_written, 0); /* nothing went out while held */
    ck_assert_uint_le(st.number_of_buffers, got.maximum_buffers);
    etl_session_hold_flush(s, 0);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(st.events_lost, 0);
    read_back(p.log_file_name, &rb);
    ck_assert_int_eq(rb.n, (long)total);
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], (uint64_t)i);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* A file that stops taking writes (the file size limit, as a full disk would): the flush
   thread's batches of buffers stop in the middle, and every event is in the file or counted
   in EventsLost, exactly; the error says where. */
START_TEST(write_error_counted_exactly)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 64, .maximum_buffers = 256 };
    struct rlimit lim = { 4096 + 100 * 4096, 4096 + 100 * 4096 }; /* the header and 100 buffers */
    etl_session_stats st;
    etl_session *s;
    etl_reader *r = NULL;
    etl_event ev;
    uint64_t ok = 0, n = 0, total = 60000;
    int rc;

    make_dir();
    p.log_file_name = in_dir("limit.etl");
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    s = start(&p);
    for (uint64_t i = 0; i < total; i++) {
        ok += write_one(s, 1, i, 40) == ETL_OK;
        if (i % 500 == 0) etl_session_flush(s);
    }
    /* A refused update after the failure: the stop gives the file's failure back. */
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 1), ETL_FAILED);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_FATAL);
    ck_assert_msg(strstr(etl_session_error(s), "write error at offset 413696"), "%s", etl_session_error(s));
    etl_session_close(s);
    ck_assert_uint_gt(st.log_buffers_lost, 0);
    ck_assert_uint_eq(st.buffers_written, 100);
    ck_assert_int_eq(etl_reader_open_path(&r, p.log_file_name, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN)
        if (ev.kind == ETL_KIND_EVENT && etl_guid_equal(&ev.provider, &prov)) {
            ck_assert_uint_eq(etl_le64(ev.payload), n);
            n++;
        }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(n + st.events_lost, total);
    ck_assert_uint_le(total - ok, st.events_lost);
    remove_dir();
}
END_TEST

/* Larger than a buffer can hold: refused, E2BIG, counted; every size below goes through. */
START_TEST(event_sizes_up_to_the_limit)
{
    etl_session_properties p = { .buffer_size_kb = 64, .maximum_buffers = 1024 };
    etl_session_stats st;
    struct readback rb;
    etl_session *s;
    /* Record = 0x50 header + 8 value + pad; space rounded to 8 must fit 65536 - 0x48. */
    uint32_t max_pad = 65536 - 0x48 - 0x50 - 8, n = 0;

    make_dir();
    p.log_file_name = in_dir("sizes.etl");
    s = start(&p);
    for (uint32_t pad = 0; pad <= max_pad; pad += pad < 64 ? 1 : 509, n++)
        ck_assert_int_eq(write_one(s, 1, pad, pad), ETL_OK);
    ck_assert_int_eq(write_one(s, 1, max_pad, max_pad), ETL_OK);
    errno = 0;
    ck_assert_int_eq(write_one(s, 1, 0, max_pad + 1), ETL_FAILED);
    ck_assert_int_eq(errno, E2BIG);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(st.events_lost, 1);
    read_back(in_dir("sizes.etl"), &rb);
    ck_assert_int_eq(rb.n, n + 1);
    ck_assert_uint_eq(rb.value[rb.n - 1], max_pad);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* A circular file keeps the newest events: the last ones written are all there, in order. */
START_TEST(circular_file_keeps_newest)
{
    etl_session_properties p = { .buffer_size_kb = 4, .maximum_file_size_mb = 1,
                                 .log_file_mode = ETL_MODE_FILE_CIRCULAR, .number_of_processors = 1,
                                 .maximum_buffers = 4096 };
    struct readback rb;
    etl_session *s;
    const uint64_t total = 200000;

    make_dir();
    p.log_file_name = in_dir("circ.etl");
    s = start(&p);
    for (uint64_t i = 0; i < total; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_back(in_dir("circ.etl"), &rb);
    ck_assert_int_gt(rb.n, 10000);
    ck_assert_int_lt(rb.n, (long)total);
    /* Contiguous and ending with the last event: whole oldest buffers were dropped. */
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], total - (uint64_t)rb.n + (uint64_t)i);
    ck_assert_uint_eq(rb.info.file_size, 1 << 20);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* NEWFILE: consecutive files, each complete; together every event. */
START_TEST(newfile_session)
{
    etl_session_properties p = { .buffer_size_kb = 4, .maximum_file_size_mb = 1,
                                 .log_file_mode = ETL_MODE_FILE_NEWFILE, .number_of_processors = 1,
                                 .maximum_buffers = 4096 };
    etl_session *s;
    uint64_t expect = 0;
    int files = 0;

    make_dir();
    p.log_file_name = in_dir("part%d.etl");
    s = start(&p);
    for (uint64_t i = 0; i < 60000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    for (int f = 1; access(in_dir("part1.etl"), F_OK) == 0; f++) {
        char name[32];
        struct readback rb;
        snprintf(name, sizeof name, "part%d.etl", f);
        if (access(in_dir(name), F_OK) != 0) break;
        read_back(in_dir(name), &rb);
        for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], expect++);
        ck_assert_uint_le(rb.info.file_size, 1 << 20);
        free_back(&rb);
        files++;
    }
    ck_assert_int_ge(files, 2);
    ck_assert_uint_eq(expect, 60000);
    remove_dir();
}
END_TEST

/* Buffering mode: snapshots without clearing; the oldest buffers are reused when full. */
START_TEST(buffering_snapshots)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 100, .log_file_mode = ETL_MODE_BUFFERING,
                                 .number_of_processors = 1 };
    struct readback a, b, c;
    etl_session *s;

    make_dir();
    s = start(&p);
    for (uint64_t i = 0; i < 1000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("snap1.etl")), ETL_OK);
    for (uint64_t i = 1000; i < 2000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("snap2.etl")), ETL_OK);
    read_back(in_dir("snap1.etl"), &a);
    read_back(in_dir("snap2.etl"), &b);
    ck_assert_int_eq(a.n, 1000);
    ck_assert_int_eq(b.n, 2000);
    for (long i = 0; i < b.n; i++) ck_assert_uint_eq(b.value[i], (uint64_t)i);
    ck_assert(a.info.log_file_mode & ETL_MODE_BUFFERING);
    /* Far more than 100 buffers hold: the newest survive, contiguous up to the last. */
    for (uint64_t i = 2000; i < 100000; i++) {
        while (write_one(s, 1, i, 8) != ETL_OK) {
            ck_assert_int_eq(errno, ENOBUFS);
            usleep(100);
        }
    }
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("snap3.etl")), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_back(in_dir("snap3.etl"), &c);
    ck_assert_int_gt(c.n, 1000);
    ck_assert_int_lt(c.n, 100 * 4096 / 96 + 1);
    for (long i = 0; i < c.n; i++) ck_assert_uint_eq(c.value[i], 100000 - (uint64_t)c.n + (uint64_t)i);
    free_back(&a);
    free_back(&b);
    free_back(&c);
    remove_dir();
}
END_TEST

/* Buffering mode with default properties keeps what its pool holds (it once recycled every
   buffer at once), and a backlog of more than a thousand sealed buffers keeps its order. */
START_TEST(buffering_defaults_and_large_backlog)
{
    etl_session_properties dflt = { .log_file_mode = ETL_MODE_BUFFERING, .number_of_processors = 1 };
    etl_session_properties big = { .log_file_mode = ETL_MODE_BUFFERING, .number_of_processors = 1,
                                   .buffer_size_kb = 4, .minimum_buffers = 6000 };
    struct readback rb;
    etl_session *s;

    make_dir();
    s = start(&dflt);
    for (uint64_t i = 0; i < 5000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("dflt.etl")), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_back(in_dir("dflt.etl"), &rb);
    ck_assert_int_eq(rb.n, 5000);
    free_back(&rb);

    s = start(&big); /* 200 000 events: about 4 700 buffers sealed between two collections */
    for (uint64_t i = 0; i < 200000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("big.etl")), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_back(in_dir("big.etl"), &rb);
    ck_assert_int_eq(rb.n, 200000);
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], (uint64_t)i);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* Every clock: event times fall between the session's start and end. */
START_TEST(clock_types)
{
    static const int clocks[] = { ETL_CLOCK_PERFCOUNTER, ETL_CLOCK_SYSTEMTIME, ETL_CLOCK_CPUCYCLE };
    int64_t first_boot = 0;
    make_dir();
    for (int c = 0; c < 3; c++) {
        etl_session_properties p = { .clock_type = clocks[c] };
        etl_session *s;
        etl_reader *r = NULL;
        etl_event ev;
        int events = 0;
        p.log_file_name = in_dir("clock.etl");
        s = start(&p);
        for (int i = 0; i < 100; i++) ck_assert_int_eq(write_one(s, 1, (uint64_t)i, 0), ETL_OK);
        usleep(20000);
        ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
        etl_session_close(s);
        ck_assert_int_eq(etl_reader_open_path(&r, in_dir("clock.etl"), NULL), ETL_OK);
        ck_assert_int_eq(etl_reader_info(r)->clock.type, clocks[c]);
        /* BootTime: the same in every session of this boot, when the clock says it was. */
        {
            struct timespec rt, bt;
            int64_t boot = etl_time_from_filetime(etl_reader_info(r)->boot_time);
            clock_gettime(CLOCK_REALTIME, &rt);
            clock_gettime(CLOCK_BOOTTIME, &bt);
            int64_t expect = (int64_t)(rt.tv_sec - bt.tv_sec) * 1000000000 + (rt.tv_nsec - bt.tv_nsec);
            ck_assert_int_ne(etl_reader_info(r)->boot_time, 0);
            ck_assert_int_lt(boot > expect ? boot - expect : expect - boot, 2000000000);
            if (c > 0) ck_assert_int_eq(etl_reader_info(r)->boot_time, first_boot);
            first_boot = etl_reader_info(r)->boot_time;
        }
        while (etl_reader_next(r, &ev) == ETL_OK) {
            int64_t t = etl_reader_time_ns(r, ev.timestamp);
            /* within the session, allowing the clocks' calibration 1 ms of slack */
            ck_assert_int_ge(t, etl_time_from_filetime(etl_reader_info(r)->clock.start_time) - 1000000);
            ck_assert_int_le(t, etl_time_from_filetime(etl_reader_info(r)->end_time) + 1000000);
            events++;
        }
        ck_assert_int_eq(events, 102);
        etl_reader_close(r);
    }
    remove_dir();
}
END_TEST

/* An explicit flush and the flush timer put events in the file while the session runs. */
START_TEST(flush_and_flush_timer)
{
    etl_session_properties p = { .flush_timer_s = 1 };
    etl_session *s;
    struct readback rb;

    make_dir();
    p.log_file_name = in_dir("flush.etl");
    s = start(&p);
    for (uint64_t i = 0; i < 10; i++) ck_assert_int_eq(write_one(s, 1, i, 0), ETL_OK);
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    read_back(in_dir("flush.etl"), &rb);
    ck_assert_int_eq(rb.n, 10);
    free_back(&rb);
    for (uint64_t i = 10; i < 15; i++) ck_assert_int_eq(write_one(s, 1, i, 0), ETL_OK);
    usleep(1600000);
    read_back(in_dir("flush.etl"), &rb);
    ck_assert_int_eq(rb.n, 15);
    free_back(&rb);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    remove_dir();
}
END_TEST

/* LBR records through a session: same timestamp as their trigger, entries intact. */
START_TEST(lbr_through_a_session)
{
    etl_session_properties p = { 0 };
    etl_session *s;
    etl_lbr_entry e[32];
    etl_reader *r = NULL;
    etl_event ev;
    int64_t trigger = 0;
    int found = 0;

    make_dir();
    p.log_file_name = in_dir("lbr.etl");
    s = start(&p);
    for (unsigned i = 0; i < 32; i++) e[i] = (etl_lbr_entry){ 0x1000 + i, 0x2000 + i, 0 };
    trigger = etl_session_timestamp(s);
    ck_assert_int_eq(etl_session_write_perfinfo(s, trigger, 0x0F2F, 2, NULL, 0), ETL_OK);
    ck_assert_int_eq(etl_session_write_lbr(s, trigger, 42, 43, ETL_LBR_FILTER_KERNEL, e, 32), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_int_eq(etl_reader_open_path(&r, in_dir("lbr.etl"), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_lbr lbr;
        if (etl_lbr_decode(&ev, &lbr) != 1) continue;
        ck_assert_int_eq(ev.timestamp, trigger);
        ck_assert_int_eq(lbr.timestamp, trigger);
        ck_assert_uint_eq(lbr.count, 32);
        ck_assert_uint_eq(etl_lbr_entry_at(&lbr, 31).to, 0x2000 + 31);
        found++;
    }
    ck_assert_int_eq(found, 1);
    etl_reader_close(r);
    remove_dir();
}
END_TEST

/* A process killed mid-capture: every buffer it flushed reads back, without damage. */
START_TEST(killed_mid_capture)
{
    pid_t child;
    int status;
    struct readback rb;

    make_dir();
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        etl_session_properties p = { .buffer_size_kb = 4, .maximum_buffers = 4096 };
        etl_session *s = NULL;
        p.log_file_name = in_dir("killed.etl");
        if (etl_session_start(&s, &p) != ETL_OK) _exit(3);
        for (uint64_t i = 0; i < 5000; i++) write_one(s, 1, i, 16);
        if (etl_session_flush(s) != ETL_OK) _exit(4);
        for (uint64_t i = 5000; i < 5100; i++) write_one(s, 1, i, 16);
        kill(getpid(), SIGKILL);
        _exit(5);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    read_back(in_dir("killed.etl"), &rb);
    ck_assert_uint_eq(rb.warnings, 0);
    ck_assert_int_ge(rb.n, 5000);
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], (uint64_t)i);
    ck_assert_int_eq(rb.info.end_time, 0); /* never finalised */
    free_back(&rb);
    remove_dir();
}
END_TEST

START_TEST(bad_properties)
{
    etl_session *s = NULL;
    etl_session_properties small = { .buffer_size_kb = 2, .log_file_name = "/tmp/x.etl" };
    etl_session_properties nofile = { 0 };
    etl_session_properties circ = { .log_file_mode = ETL_MODE_FILE_CIRCULAR, .log_file_name = "/tmp/x.etl" };
    etl_session_stats st;

    ck_assert_int_eq(etl_session_start(&s, &small), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "buffer size 2 KB"));
    etl_session_close(s);
    ck_assert_int_eq(etl_session_start(&s, &nofile), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "log file name"));
    etl_session_close(s);
    ck_assert_int_eq(etl_session_start(&s, &circ), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "maximum file size"));
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_FATAL);
    etl_session_close(s);
}
END_TEST

/* Statistics as EVENT_TRACE_PROPERTIES reports them: buffers, free buffers, growth to the maximum. */
START_TEST(statistics)
{
    etl_session_properties p = { .buffer_size_kb = 4, .minimum_buffers = 2, .maximum_buffers = 64,
                                 .number_of_processors = 2 };
    etl_session_stats st;
    etl_session *s;

    make_dir();
    p.log_file_name = in_dir("stats.etl");
    s = start(&p);
    {
        etl_session_properties in_effect;
        etl_session_properties_get(s, &in_effect);
        ck_assert_uint_eq(in_effect.minimum_buffers, 4); /* raised to 2 per processor */
        ck_assert_uint_eq(in_effect.maximum_buffers, 64);
        ck_assert_uint_eq(in_effect.buffer_size_kb, 4);
        ck_assert_uint_eq(in_effect.number_of_processors, 2);
        ck_assert_int_eq(in_effect.clock_type, ETL_CLOCK_PERFCOUNTER);
        ck_assert_uint_eq(in_effect.log_file_mode, ETL_MODE_FILE_SEQUENTIAL);
        ck_assert_str_eq(in_effect.logger_name, "libetl");
    }
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(st.number_of_buffers, 4); /* raised to 2 per processor */
    ck_assert_uint_eq(st.free_buffers, 4);
    ck_assert_uint_eq(st.events_lost, 0);
    for (uint64_t i = 0; i < 100000; i++) write_one(s, 1, i, 100);
    etl_session_stats_get(s, &st);
    ck_assert_uint_ge(st.number_of_buffers, 4);
    ck_assert_uint_le(st.number_of_buffers, 64);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_gt(st.buffers_written, 0);
    ck_assert_uint_eq(st.log_buffers_lost, 0);
    {
        struct readback rb;
        read_back(in_dir("stats.etl"), &rb);
        ck_assert_uint_eq(rb.info.buffers, st.buffers_written + 1);
        ck_assert_uint_eq((uint64_t)rb.n + st.events_lost, 100000);
        free_back(&rb);
    }
    remove_dir();
}
END_TEST

/*
 * Writers interrupted by signal handlers that write too: a handler that lands inside a
 * writer's sequence restarts it, a handler that lands between reservation and commit (atomic
 * engine) writes around it. Every event of both arrives once, nothing is damaged.
 */
static etl_session *signal_session;
static volatile sig_atomic_t handled, handler_failed;

static void on_signal(int sig)
{
    int saved = errno;
    (void)sig;
    if (write_one(signal_session, 2, (uint64_t)handled, 8) != ETL_OK) handler_failed = 1;
    handled++;
    errno = saved;
}

static void *send_signals(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    for (int i = 0; i < 3000; i++) {
        pthread_kill(target, SIGUSR1);
        if (i % 16 == 0) sched_yield();
    }
    return NULL;
}

START_TEST(writers_in_signal_handlers)
{
    etl_session_properties p = { .buffer_size_kb = 4, .maximum_buffers = 8192 };
    struct sigaction sa;
    pthread_t self = pthread_self(), sender;
    struct readback rb;
    uint64_t main_events = 0;
    char *seen_main, *seen_handler;

    make_dir();
    p.log_file_name = in_dir("signals.etl");
    signal_session = start(&p);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    pthread_create(&sender, NULL, send_signals, &self);
    /* Write until the sender is done and a while after, so that signals land mid-write. */
    for (int done = 0; !done;) {
        for (int i = 0; i < 1000; i++, main_events++)
            ck_assert_int_eq(write_one(signal_session, 1, main_events, (uint32_t)(main_events % 40)), ETL_OK);
        done = pthread_tryjoin_np(sender, NULL) == 0;
    }
    for (int i = 0; i < 1000; i++) ck_assert_int_eq(write_one(signal_session, 1, main_events++, 0), ETL_OK);
    signal(SIGUSR1, SIG_DFL);
    ck_assert_int_eq(etl_session_stop(signal_session, NULL), ETL_OK);
    etl_session_close(signal_session);
    ck_assert_int_eq(handler_failed, 0);
    ck_assert_int_gt(handled, 0);
    read_back(in_dir("signals.etl"), &rb);
    ck_assert_uint_eq(rb.warnings, 0);
    ck_assert_int_eq(rb.n, (long)main_events + handled);
    seen_main = calloc(main_events, 1);
    seen_handler = calloc((size_t)handled, 1);
    for (long i = 0; i < rb.n; i++) {
        if (rb.thread[i] == 1) {
            ck_assert_uint_lt(rb.value[i], main_events);
            ck_assert(!seen_main[rb.value[i]]);
            seen_main[rb.value[i]] = 1;
        } else {
            ck_assert_uint_eq(rb.thread[i], 2);
            ck_assert_uint_lt(rb.value[i], (uint64_t)handled);
            ck_assert(!seen_handler[rb.value[i]]);
            seen_handler[rb.value[i]] = 1;
        }
    }
    free(seen_main);
    free(seen_handler);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* Eight threads on the machine's processors (more threads than processors: writers are
   preempted and moved mid-write), no loss allowed: each event once, each thread's in order. */
START_TEST(more_threads_than_processors)
{
    etl_session_properties p = { .buffer_size_kb = 4, .maximum_buffers = 16384 };
    make_dir();
    p.log_file_name = in_dir("threads.etl");
    overrun(&p, 8, 50000, 0);
    remove_dir();
}
END_TEST

/* One error channel: a refused request leaves its message on the session (etl_session_error)
   and the session as it was; it records, flushes and stops with ETL_OK. The stopped handle
   keeps the message and the final statistics until it is closed. */
START_TEST(refused_requests_leave_the_session_running)
{
    etl_session_properties p = { .logger_name = "Refused", .buffer_size_kb = 4, .maximum_buffers = 64 };
    etl_session_properties got;
    etl_session_stats st, after;
    struct readback rb;
    etl_session *s;

    make_dir();
    p.log_file_name = in_dir("refused.etl");
    s = start(&p);
    ck_assert_str_eq(etl_session_error(s), "");
    for (uint64_t i = 0; i < 1000; i++) ck_assert_int_eq(write_one(s, 1, i, 40), ETL_OK);
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 1), ETL_FAILED);
    ck_assert_msg(strstr(etl_session_error(s), "MaximumBuffers 1: it can be raised from 64") != NULL, "%s",
                  etl_session_error(s));
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("snap.etl")), ETL_FAILED);
    ck_assert_msg(strstr(etl_session_error(s), "snapshots are for buffering mode") != NULL, "%s", etl_session_error(s));
    for (uint64_t i = 1000; i < 2000; i++) ck_assert_int_eq(write_one(s, 1, i, 40), ETL_OK);
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 100000), ETL_FAILED);
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 128), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    ck_assert_uint_eq(st.events_lost, 0);
    ck_assert_uint_gt(st.buffers_written, 0);
    /* Stopped, not yet closed: the last message, the final statistics and properties. */
    ck_assert_msg(strstr(etl_session_error(s), "MaximumBuffers 100000") != NULL, "%s", etl_session_error(s));
    etl_session_stats_get(s, &after);
    ck_assert_mem_eq(&after, &st, sizeof st);
    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.maximum_buffers, 128);
    ck_assert_str_eq(got.logger_name, "Refused");
    memset(&after, 0xff, sizeof after);
    ck_assert_int_eq(etl_session_stop(s, &after), ETL_OK); /* a second stop: the same */
    ck_assert_mem_eq(&after, &st, sizeof st);
    etl_session_close(s);
    etl_session_close(NULL);
    read_back(p.log_file_name, &rb);
    ck_assert_int_eq(rb.n, 2000);
    for (long i = 0; i < rb.n; i++) ck_assert_uint_eq(rb.value[i], (uint64_t)i);
    free_back(&rb);
    remove_dir();
}
END_TEST

/* The same in buffering mode, where no file can fail; and etl_session_close alone stops. */
START_TEST(refused_requests_buffering)
{
    etl_session_properties p = { .log_file_mode = ETL_MODE_BUFFERING, .buffer_size_kb = 4 };
    etl_session_stats st;
    etl_session *s;

    make_dir();
    s = start(&p);
    for (uint64_t i = 0; i < 100; i++) ck_assert_int_eq(write_one(s, 1, i, 40), ETL_OK);
    ck_assert_int_eq(etl_session_set_flush_timer(s, 5), ETL_FAILED);
    ck_assert_msg(strstr(etl_session_error(s), "no flush timer") != NULL, "%s", etl_session_error(s));
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 1000), ETL_FAILED);
    ck_assert_msg(strstr(etl_session_error(s), "ring cannot grow") != NULL, "%s", etl_session_error(s));
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("no/such/dir/snap.etl")), ETL_FAILED);
    ck_assert_msg(etl_session_error(s)[0] != '\0', "no message");
    ck_assert_int_eq(etl_session_snapshot(s, in_dir("snap.etl")), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    ck_assert_uint_eq(st.events_lost, 0);
    etl_session_close(s);
    s = start(&p); /* closed without a stop: close stops it */
    ck_assert_int_eq(write_one(s, 1, 0, 0), ETL_OK);
    etl_session_close(s);
    remove_dir();
}
END_TEST

/* Which engine a session runs: sequences where this thread has an rseq area and the session a
   buffer for every processor, compare-and-swap otherwise or when asked. */
START_TEST(engine_choice)
{
    etl_session_properties p = { .log_file_mode = ETL_MODE_BUFFERING };
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    int have_rseq = etl_rseq_thread_area() != NULL;
    etl_session_stats st;
    etl_session *s;

    s = start(&p);
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(st.engine_flags & ETL_ENGINE_ATOMIC_RESERVE, have_rseq ? 0 : ETL_ENGINE_ATOMIC_RESERVE);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    p.engine_flags = ETL_ENGINE_ATOMIC_RESERVE | ETL_ENGINE_EXACT_CLOCK;
    s = start(&p);
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(st.engine_flags, ETL_ENGINE_ATOMIC_RESERVE | ETL_ENGINE_EXACT_CLOCK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    if (cpus > 1) { /* fewer buffers than processors: writers of several share one */
        etl_session_properties one = { .log_file_mode = ETL_MODE_BUFFERING, .number_of_processors = 1 };
        s = start(&one);
        etl_session_stats_get(s, &st);
        ck_assert_uint_eq(st.engine_flags & ETL_ENGINE_ATOMIC_RESERVE, ETL_ENGINE_ATOMIC_RESERVE);
        ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
        etl_session_close(s);
    }
}
END_TEST

static void add_engine_tests(TCase *tc)
{
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sequential_one_thread);
    tcase_add_test(tc, events_lost_exact_under_overrun);
    tcase_add_test(tc, sequential_file_full);
    tcase_add_test(tc, write_error_counted_exactly);
    tcase_add_test(tc, pool_grows_only_for_peaks);
    tcase_add_test(tc, defaults_ride_out_a_stalled_write);
    tcase_add_test(tc, buffers_of_a_processor_in_order);
    tcase_add_test(tc, event_sizes_up_to_the_limit);
    tcase_add_test(tc, circular_file_keeps_newest);
    tcase_add_test(tc, newfile_session);
    tcase_add_test(tc, buffering_snapshots);
    tcase_add_test(tc, buffering_defaults_and_large_backlog);
    tcase_add_test(tc, clock_types);
    tcase_add_test(tc, flush_and_flush_timer);
    tcase_add_test(tc, lbr_through_a_session);
    tcase_add_test(tc, killed_mid_capture);
    tcase_add_test(tc, bad_properties);
    tcase_add_test(tc, statistics);
    tcase_add_test(tc, writers_in_signal_handlers);
    tcase_add_test(tc, more_threads_than_processors);
}

int main(void)
{
    Suite *s = suite_create("session");
    TCase *tc = tcase_create("engine");
    TCase *atomic = tcase_create("atomic");
    TCase *choice = tcase_create("choice");

    add_engine_tests(tc);
    add_engine_tests(atomic);
    tcase_add_checked_fixture(atomic, use_atomic_engine, NULL);
    tcase_add_test(choice, engine_choice);
    tcase_add_test(choice, refused_requests_leave_the_session_running);
    tcase_add_test(choice, refused_requests_buffering);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, atomic);
    suite_add_tcase(s, choice);
    return check_run(s);
}
