/* SPDX-License-Identifier: MIT */
/*
 * Real-time mode: a session's buffers go to a consumer (etl_session_realtime_attach and
 * _deliver on one end of a socket pair, etl_reader_open_stream on the other). Every event
 * delivered once, with a file beside or none; buffers held while no consumer is attached,
 * then dropped and counted exactly; a consumer that leaves and the next one; refusals; and
 * damaged, cut and hostile streams read up to the damage with the stream's byte offset.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "format/format.h"
#include "format/format.h"
#include "testutil.h"

static const etl_guid prov = { 0x5eed0077, 0xabcd, 0x4ef0, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static etl_session *start_rt(uint32_t kb, uint32_t min, uint32_t max, const char *file)
{
    etl_session_properties p = { .logger_name = "RealTime", .buffer_size_kb = kb, .minimum_buffers = min,
                                 .maximum_buffers = max, .log_file_mode = ETL_MODE_REAL_TIME };
    etl_session *s = NULL;

    if (file) {
        p.log_file_name = file;
        p.log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
    }
    ck_assert_msg(etl_session_start(&s, &p) == ETL_OK, "start: %s", etl_session_error(s));
    return s;
}

/* Event `value` of `thread`: id = thread, payload = the 64-bit value then `pad` zero bytes. */
static int write_one(etl_session *s, uint16_t thread, uint64_t value, uint32_t pad)
{
    static const uint8_t zeros[4096];
    etl_event_descriptor d = { thread, 0, 0, 4, 0, 0, 0 };
    etl_data data[2] = { { &value, 8 }, { zeros, pad } };
    return etl_session_write_event(s, &prov, &d, NULL, data, 2);
}

/* The session's end of a consumer: attach, then deliver in a thread. */
struct server {
    etl_session *s;
    int fd;
    int rc, err;
    pthread_t t;
};

static void *serve(void *arg)
{
    struct server *sv = arg;
    sv->rc = etl_session_realtime_deliver(sv->s);
    sv->err = errno;
    return NULL;
}

static void serve_start(struct server *sv, etl_session *s, int fd)
{
    sv->s = s;
    sv->fd = fd;
    ck_assert_int_eq(etl_session_realtime_attach(s, fd), ETL_OK);
    ck_assert_int_eq(pthread_create(&sv->t, NULL, serve, sv), 0);
}

/* The consumer: every event of our provider, (thread, value), until the end or a failure. */
struct consumer {
    int fd;
    long n, cap;
    uint16_t *thread;
    uint64_t *value;
    int rc;                  /* the last etl_reader_next result */
    long max;                /* stop after this many (0: no limit) */
    etl_trace_info info;
    char err[1024];
    unsigned warnings;
    pthread_t t;
};

static void *consume(void *arg)
{
    struct consumer *c = arg;
    etl_reader *r = NULL;
    etl_event ev;

    c->rc = etl_reader_open_stream(&r, c->fd, NULL);
    if (c->rc == ETL_OK) {
        while ((c->rc = etl_reader_next(r, &ev)) == ETL_OK || c->rc == ETL_WARN) {
            if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &prov)) continue;
            if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 4096;
                c->thread = realloc(c->thread, (size_t)c->cap * sizeof *c->thread);
                c->value = realloc(c->value, (size_t)c->cap * sizeof *c->value);
            }
            c->thread[c->n] = ev.id;
            c->value[c->n] = etl_le64(ev.payload);
            __atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE); /* the test watches it */
            if (c->max && c->n >= c->max) break;
        }
    }
    c->info = *etl_reader_info(r);
    c->info.logger_name = c->info.log_file_name = "";
    c->warnings = etl_reader_warnings(r);
    snprintf(c->err, sizeof c->err, "%s", etl_reader_error(r));
    etl_reader_close(r);
    return NULL;
}

static void consumer_start(struct consumer *c, int fd)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    ck_assert_int_eq(pthread_create(&c->t, NULL, consume, c), 0);
}

static void consumer_free(struct consumer *c)
{
    free(c->thread);
    free(c->value);
}

/* Each (thread, value) of threads × count once. */
static void assert_each_once(const struct consumer *c, int threads, uint64_t count)
{
    char *seen = calloc((size_t)threads * count, 1);

    for (long i = 0; i < c->n; i++) {
        ck_assert_uint_ge(c->thread[i], 1);
        ck_assert_uint_le(c->thread[i], (unsigned)threads);
        ck_assert_uint_lt(c->value[i], count);
        ck_assert_msg(!seen[(c->thread[i] - 1) * count + c->value[i]], "event %u/%llu twice", c->thread[i],
                      (unsigned long long)c->value[i]);
        seen[(c->thread[i] - 1) * count + c->value[i]] = 1;
    }
    free(seen);
}

struct producer {
    etl_session *s;
    uint16_t thread;
    uint64_t count, ok;
};

static void *produce(void *arg)
{
    struct producer *pr = arg;
    for (uint64_t i = 0; i < pr->count; i++)
        if (write_one(pr->s, pr->thread, i, (uint32_t)(i % 40)) == ETL_OK) pr->ok++;
    return NULL;
}

/* Real time only, a consumer attached from the start: every event once, nothing lost. */
START_TEST(every_event_delivered)
{
    etl_session *s = start_rt(4, 0, 4096, NULL);
    struct producer pr[3];
    pthread_t t[3];
    struct server sv;
    struct consumer c;
    etl_session_stats st;
    int sp[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    serve_start(&sv, s, sp[0]);
    consumer_start(&c, sp[1]);
    for (int i = 0; i < 3; i++) {
        pr[i] = (struct producer){ s, (uint16_t)(i + 1), 30000, 0 };
        pthread_create(&t[i], NULL, produce, &pr[i]);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        ck_assert_uint_eq(pr[i].ok, 30000);
    }
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_int_eq(sv.rc, ETL_OK);
    ck_assert_msg(c.rc == ETL_EOF, "consumer: %d %s", c.rc, c.err);
    ck_assert_int_eq(c.n, 90000);
    assert_each_once(&c, 3, 30000);
    ck_assert_uint_eq(c.warnings, 0);
    ck_assert_uint_eq(st.events_lost, 0);
    ck_assert_uint_eq(st.real_time_buffers_lost, 0);
    ck_assert_uint_eq(st.real_time_events_lost, 0);
    ck_assert_uint_gt(st.buffers_written, 60); /* delivered: 90000 events of 4 KB buffers */
    ck_assert_uint_eq(c.info.events_lost, 0);
    ck_assert_uint_eq(c.info.buffers_lost, 0);
    ck_assert_uint_eq(c.info.buffer_size, 4096);
    consumer_free(&c);
    close(sp[0]);
    close(sp[1]);
}
END_TEST

/* Beside a file: the consumer gets what the file holds, event for event, in the same order
   per thread; the flush timer (1 s by default) delivers without the stop. */
START_TEST(beside_a_file)
{
    const char *path;
    etl_session *s;
    struct server sv;
    struct consumer c;
    etl_session_properties got;
    etl_session_stats st;
    etl_reader *r = NULL;
    etl_event ev;
    long n = 0, at = 0;
    int sp[2], rc;

    ck_assert_ptr_nonnull(test_dir_create());
    path = test_dir_path("beside.etl");
    s = start_rt(64, 0, 0, path);
    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.flush_timer_s, 1);
    ck_assert_uint_eq(got.log_file_mode & (ETL_MODE_REAL_TIME | ETL_MODE_FILE_SEQUENTIAL),
                      ETL_MODE_REAL_TIME | ETL_MODE_FILE_SEQUENTIAL);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    serve_start(&sv, s, sp[0]);
    consumer_start(&c, sp[1]);
    c.max = 0;
    for (uint64_t i = 0; i < 500; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    /* No buffer is full: the flush timer delivers them within about a second. */
    for (int waited = 0; waited < 50 && __atomic_load_n(&c.n, __ATOMIC_ACQUIRE) < 500; waited++) usleep(100000);
    ck_assert_int_eq(__atomic_load_n(&c.n, __ATOMIC_ACQUIRE), 500);
    for (uint64_t i = 500; i < 1000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_int_eq(c.rc, ETL_EOF);
    ck_assert_int_eq(c.n, 1000);
    for (long i = 0; i < c.n; i++) ck_assert_uint_eq(c.value[i], (uint64_t)i);
    rc = etl_reader_open_path(&r, path, NULL);
    ck_assert_msg(rc == ETL_OK, "%s", etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &prov)) continue;
        ck_assert_uint_eq(etl_le64(ev.payload), c.value[at++]);
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(n, 1000);
    ck_assert_uint_eq(etl_reader_info(r)->buffers_written, st.buffers_written + 1);
    etl_reader_close(r);
    consumer_free(&c);
    close(sp[0]);
    close(sp[1]);
    ck_assert_int_eq(test_dir_remove(), 0);
}
END_TEST

static void pin_to_cpu0(void)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(0, &set);
    ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof set, &set), 0);
}

/* No consumer: the session holds the oldest buffers up to its limit and drops the newer,
   counted exactly; the consumer that comes gets the held ones, oldest first. */
START_TEST(held_then_dropped_exactly)
{
    etl_session *s;
    struct server sv;
    struct consumer c;
    etl_session_stats mid, st;
    uint64_t written = 0, refused = 0;
    int sp[2];

    pin_to_cpu0(); /* one processor's buffers: sealed in the order written */
    s = start_rt(4, 4, 8, NULL);
    for (uint64_t i = 0; i < 20000; i++) {
        if (write_one(s, 1, i, 100) == ETL_OK) written++;
        else {
            ck_assert_int_eq(errno, ENOBUFS);
            refused++;
        }
        if (i % 64 == 0) usleep(200); /* let the flush thread keep the pool free */
    }
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    etl_session_stats_get(s, &mid);
    ck_assert_uint_gt(mid.real_time_buffers_lost, 0);
    ck_assert_uint_gt(mid.real_time_events_lost, 0);
    ck_assert_uint_eq(mid.buffers_written, 0); /* none delivered yet */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    serve_start(&sv, s, sp[0]);
    consumer_start(&c, sp[1]);
    for (int waited = 0; waited < 100 && __atomic_load_n(&c.n, __ATOMIC_ACQUIRE) == 0; waited++) usleep(20000);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_msg(c.rc == ETL_EOF, "consumer: %s", c.err);
    /* Held: 8 buffers less 2 processors and one. */
    ck_assert_uint_eq(st.buffers_written, 5);
    ck_assert_uint_eq(st.real_time_buffers_lost, mid.real_time_buffers_lost);
    ck_assert_uint_eq(st.events_lost, refused);
    /* Every event written is the consumer's or counted, and it knows how many it missed. */
    ck_assert_uint_eq((uint64_t)c.n + st.real_time_events_lost, written);
    ck_assert_uint_eq((uint64_t)c.n + c.info.events_lost, 20000);
    ck_assert_uint_eq(c.info.buffers_lost, st.real_time_buffers_lost);
    /* The oldest, in order. */
    ck_assert_int_gt(c.n, 0);
    ck_assert_uint_eq(c.value[0], 0);
    for (long i = 1; i < c.n; i++) ck_assert_uint_gt(c.value[i], c.value[i - 1]);
    consumer_free(&c);
    close(sp[0]);
    close(sp[1]);
}
END_TEST

/* One consumer at a time; one that leaves makes room for the next, which gets what follows. */
START_TEST(consumers_one_after_another)
{
    etl_session *s = start_rt(4, 0, 512, NULL);
    struct server sv;
    struct consumer c1, c2;
    etl_session_stats st;
    etl_reader *r = NULL;
    int a[2], b[2];
    long before;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
    serve_start(&sv, s, a[0]);
    consumer_start(&c1, a[1]);
    c1.max = 100;
    for (uint64_t i = 0; i < 1000; i++) ck_assert_int_eq(write_one(s, 1, i, 0), ETL_OK);
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    /* A second consumer meanwhile is refused, and told why. */
    ck_assert_int_eq(etl_session_realtime_attach(s, b[0]), ETL_FAILED);
    ck_assert_int_eq(errno, EBUSY);
    ck_assert_int_eq(etl_reader_open_stream(&r, b[1], NULL), ETL_FATAL);
    ck_assert_msg(strstr(etl_reader_error(r), "session RealTime already has a real-time consumer"), "%s",
                  etl_reader_error(r));
    etl_reader_close(r);
    pthread_join(c1.t, NULL);
    ck_assert_int_eq(c1.n, 100);
    close(a[1]); /* the first consumer leaves */
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.rc, ETL_FAILED);
    ck_assert_int_eq(sv.err, EPIPE);
    close(a[0]);
    close(b[0]);
    close(b[1]);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
    serve_start(&sv, s, b[0]);
    consumer_start(&c2, b[1]);
    for (uint64_t i = 1000; i < 2000; i++) ck_assert_int_eq(write_one(s, 1, i, 0), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c2.t, NULL);
    ck_assert_int_eq(sv.rc, ETL_OK);
    ck_assert_int_eq(c2.rc, ETL_EOF);
    /* The second got every event written after it came, in order, and nothing twice. */
    before = 0;
    for (long i = 0; i < c2.n; i++) {
        if (i) ck_assert_uint_gt(c2.value[i], c2.value[i - 1]);
        before += c2.value[i] < 1000;
    }
    ck_assert_int_ge(c2.n - before, 1000);
    ck_assert_uint_eq(c2.value[c2.n - 1], 1999);
    ck_assert_uint_eq(st.events_lost, 0);
    consumer_free(&c1);
    consumer_free(&c2);
    close(b[0]);
    close(b[1]);
}
END_TEST

/* A consumer that goes without saying it took its buffers (killed with them still in its
   socket) leaves them to the next: nothing lost, nothing counted twice. */
START_TEST(unacknowledged_buffers_go_to_the_next)
{
    etl_session *s = start_rt(4, 0, 512, NULL);
    struct server sv;
    struct consumer c;
    etl_session_stats st;
    uint8_t some[20000];
    int a[2], b[2];
    size_t got = 0;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
    serve_start(&sv, s, a[0]);
    for (uint64_t i = 0; i < 2000; i++) ck_assert_int_eq(write_one(s, 1, i, 8), ETL_OK);
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    /* It reads a few buffers' bytes, and goes. */
    while (got < sizeof some) {
        ssize_t k = read(a[1], some + got, sizeof some - got);
        ck_assert_int_gt(k, 0);
        got += (size_t)k;
    }
    close(a[1]);
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.rc, ETL_FAILED);
    close(a[0]);
    /* The next, at once: every event, from the first. */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
    serve_start(&sv, s, b[0]);
    consumer_start(&c, b[1]);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_msg(c.rc == ETL_EOF, "%s", c.err);
    ck_assert_int_eq(c.n, 2000);
    for (long i = 0; i < c.n; i++) ck_assert_uint_eq(c.value[i], (uint64_t)i);
    ck_assert_uint_eq(st.real_time_buffers_lost, 0);
    ck_assert_uint_eq(c.info.events_lost, 0);
    consumer_free(&c);
    close(b[0]);
    close(b[1]);
}
END_TEST

/* Updates of a running session: a raised MaximumBuffers holds more for the consumer to come
   (the pool grows to it), and a new flush timer delivers without a flush. */
START_TEST(updates_take_effect)
{
    etl_session *s;
    struct server sv;
    struct consumer c;
    etl_session_properties got;
    etl_session_stats st;
    int sp[2];

    pin_to_cpu0();
    s = start_rt(4, 4, 8, NULL);
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 7), ETL_FAILED);
    ck_assert_msg(strstr(etl_session_error(s), "MaximumBuffers 7: it can be raised from 8 up to 16"), "%s",
                  etl_session_error(s));
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 17), ETL_FAILED);
    ck_assert_int_eq(etl_session_set_maximum_buffers(s, 16), ETL_OK);
    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.maximum_buffers, 16);
    for (uint64_t i = 0; i < 20000; i++) {
        write_one(s, 1, i, 100);
        if (i % 64 == 0) usleep(200);
    }
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    /* Held: 16 buffers less 2 processors and one, where 8 held 5. */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    ck_assert_int_eq(etl_session_set_flush_timer(s, 30), ETL_OK);
    serve_start(&sv, s, sp[0]);
    consumer_start(&c, sp[1]);
    /* Every held event first (not just the first batch: under ThreadSanitizer the rest came
       during the wait below and looked like the timer's delivery). */
    {
        etl_session_stats now;
        long held;

        etl_session_stats_get(s, &now);
        held = 20000 - (long)now.real_time_events_lost - (long)now.events_lost;
        ck_assert_int_gt(held, 0);
        for (int waited = 0; waited < 3000 && __atomic_load_n(&c.n, __ATOMIC_ACQUIRE) < held; waited++)
            usleep(10000);
        ck_assert_int_eq(__atomic_load_n(&c.n, __ATOMIC_ACQUIRE), held);
    }
    /* With a 30 s timer a lone event waits; with 1 s it comes within about a second. */
    {
        long before = __atomic_load_n(&c.n, __ATOMIC_ACQUIRE);
        ck_assert_int_eq(write_one(s, 2, 0, 0), ETL_OK);
        usleep(1500000);
        ck_assert_int_eq(__atomic_load_n(&c.n, __ATOMIC_ACQUIRE), before);
        ck_assert_int_eq(etl_session_set_flush_timer(s, 1), ETL_OK);
        for (int waited = 0; waited < 50 && __atomic_load_n(&c.n, __ATOMIC_ACQUIRE) == before; waited++)
            usleep(100000);
        ck_assert_int_eq(__atomic_load_n(&c.n, __ATOMIC_ACQUIRE), before + 1);
    }
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    pthread_join(c.t, NULL);
    ck_assert_uint_eq(st.buffers_written, 13 + 1);
    consumer_free(&c);
    close(sp[0]);
    close(sp[1]);
}
END_TEST

/* A session that is not in real-time mode refuses a consumer, and the reader says why. */
START_TEST(not_a_real_time_session)
{
    etl_session_properties p = { .logger_name = "Plain", .buffer_size_kb = 4 };
    etl_session *s = NULL;
    etl_reader *r = NULL;
    int sp[2];

    ck_assert_ptr_nonnull(test_dir_create());
    p.log_file_name = test_dir_path("plain.etl");
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_OK);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    ck_assert_int_eq(etl_session_realtime_attach(s, sp[0]), ETL_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(etl_reader_open_stream(&r, sp[1], NULL), ETL_FATAL);
    ck_assert_msg(strstr(etl_reader_error(r), "session Plain is not in real-time mode"), "%s", etl_reader_error(r));
    ck_assert_int_eq(etl_reader_rewind(r), ETL_FATAL);
    etl_reader_close(r);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    close(sp[0]);
    close(sp[1]);
    /* Real time and buffering do not go together. */
    memset(&p, 0, sizeof p);
    p.log_file_mode = ETL_MODE_REAL_TIME | ETL_MODE_BUFFERING;
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "real-time mode cannot be combined with buffering"));
    etl_session_close(s);
    ck_assert_int_eq(test_dir_remove(), 0);
}
END_TEST

/* ---- damaged streams: a real one, recorded, then cut and spoiled */

static uint8_t *stream;
static size_t stream_size;
static long stream_events;

struct sink {
    int fd;
    uint8_t *data;
    size_t n, cap;
};

/* Reads exactly n bytes into the sink; 0, or -1 at the end. */
static int sink_read(struct sink *k, size_t n)
{
    while (k->n + n > k->cap) k->data = realloc(k->data, k->cap = k->cap ? 2 * k->cap : 65536);
    for (size_t got = 0; got < n;) {
        ssize_t r = read(k->fd, k->data + k->n + got, n - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    k->n += n;
    return 0;
}

/* Keeps the stream's bytes, frame by frame, acknowledging each buffer as a consumer does. */
static void *drain_all(void *arg)
{
    struct sink *k = arg;

    if (sink_read(k, 3) != 0) return NULL;
    while (sink_read(k, ETL_RT_FRAME_HEAD) == 0) {
        uint32_t kind = etl_le32(k->data + k->n - 8), length = etl_le32(k->data + k->n - 4);
        uint8_t one[4];
        if (sink_read(k, length) != 0) break;
        etl_put32(one, 1);
        if (kind == ETL_RT_BUFFER) ck_assert_int_eq(write(k->fd, one, 4), 4);
    }
    return NULL;
}

/* Records a session's stream: 3000 events over many 4 KB buffers, into memory. */
static void record_stream(void)
{
    etl_session *s = start_rt(4, 0, 1024, NULL);
    struct server sv;
    struct sink k = { 0 };
    pthread_t t;
    int sp[2];

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
    k.fd = sp[1];
    pthread_create(&t, NULL, drain_all, &k);
    serve_start(&sv, s, sp[0]);
    for (uint64_t i = 0; i < 3000; i++) ck_assert_int_eq(write_one(s, 1, i, 16), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.rc, ETL_OK);
    close(sp[0]);
    pthread_join(t, NULL);
    close(sp[1]);
    stream = k.data;
    stream_size = k.n;
    stream_events = 3000;
    /* ETL_STREAM_OUT=PATH keeps it (testdata/realtime.stream, the fuzzer's seed, came so). */
    if (getenv("ETL_STREAM_OUT")) {
        FILE *f = fopen(getenv("ETL_STREAM_OUT"), "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(stream, 1, stream_size, f), stream_size);
        fclose(f);
    }
}

/* Reads bytes as a stream (through a file: read and poll work on it as on a socket). */
static void read_stream(const uint8_t *data, size_t n, struct consumer *c)
{
    FILE *f = tmpfile();

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fflush(f);
    rewind(f);
    memset(c, 0, sizeof *c);
    c->fd = fileno(f);
    consume(c);
    fclose(f);
}

/* The offsets of the frames: the answer line, then 12-byte heads and their lengths. */
static size_t frame_at(size_t k)
{
    size_t at = 3; /* "ok\n" */
    for (size_t i = 0; i < k; i++) at += ETL_RT_FRAME_HEAD + etl_le32(stream + at + 8);
    return at;
}

START_TEST(damaged_streams)
{
    struct consumer c;
    size_t third, last;
    uint8_t *copy;
    long frames = 0;

    record_stream();
    third = frame_at(3);
    ck_assert_mem_eq(stream, "ok\n", 3);
    /* Whole: everything, then the end. */
    read_stream(stream, stream_size, &c);
    ck_assert_msg(c.rc == ETL_EOF, "%s", c.err);
    ck_assert_int_eq(c.n, stream_events);
    consumer_free(&c);
    while (frame_at((size_t)frames) < stream_size) frames++;
    ck_assert_int_gt(frames, 10);
    last = frame_at((size_t)frames - 1); /* the END frame */
    ck_assert_uint_eq(etl_le32(stream + last + 4), ETL_RT_END);

    /* Cut in the middle of the third frame: the buffer before it is delivered, then the
       failure, at the byte where the stream ended. */
    read_stream(stream, third + 100, &c);
    ck_assert_int_eq(c.rc, ETL_FATAL);
    ck_assert_int_gt(c.n, 0);
    for (long i = 0; i < c.n; i++) ck_assert_uint_eq(c.value[i], (uint64_t)i);
    ck_assert_msg(strstr(c.err, "the session went away"), "%s", c.err);
    consumer_free(&c);
    /* Cut just before the END frame: every event, then "went away", not the end. */
    read_stream(stream, last, &c);
    ck_assert_int_eq(c.rc, ETL_FATAL);
    ck_assert_int_eq(c.n, stream_events);
    consumer_free(&c);

    copy = malloc(stream_size);
    /* A frame head spoiled: what came before it, then the error at its byte. */
    memcpy(copy, stream, stream_size);
    copy[third] ^= 0x55;
    read_stream(copy, stream_size, &c);
    ck_assert_int_eq(c.rc, ETL_FATAL);
    {
        char want[64];
        snprintf(want, sizeof want, "not a real-time stream frame at byte %zu", third);
        ck_assert_msg(strstr(c.err, want), "%s (want %s)", c.err, want);
    }
    consumer_free(&c);
    /* A length beyond the buffer size. */
    memcpy(copy, stream, stream_size);
    etl_put32(copy + third + 8, 1u << 20);
    read_stream(copy, stream_size, &c);
    ck_assert_int_eq(c.rc, ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(c.err, "length 1048576"));
    consumer_free(&c);
    /* A record spoiled inside a buffer: damage reported at the stream's byte, the rest read. */
    memcpy(copy, stream, stream_size);
    memset(copy + third + ETL_RT_FRAME_HEAD + ETL_BUFFER_HEADER_SIZE, 0xEE, 8);
    read_stream(copy, stream_size, &c);
    ck_assert_msg(c.rc == ETL_EOF, "%s", c.err);
    ck_assert_uint_ge(c.warnings, 1);
    ck_assert_int_lt(c.n, stream_events);
    ck_assert_int_gt(c.n, stream_events - 200);
    consumer_free(&c);
    /* The header frame not a logfile header. */
    memcpy(copy, stream, stream_size);
    memset(copy + 3 + ETL_RT_FRAME_HEAD + ETL_BUFFER_HEADER_SIZE, 0, 8);
    read_stream(copy, stream_size, &c);
    ck_assert_int_eq(c.rc, ETL_FATAL);
    ck_assert_int_eq(c.n, 0);
    consumer_free(&c);
    /* Spoiled at random, many times: never a crash, never more events than written. */
    srand(7);
    for (int round = 0; round < 400; round++) {
        memcpy(copy, stream, stream_size);
        for (int k = 0; k < 1 + round % 8; k++) copy[(size_t)rand() % stream_size] = (uint8_t)rand();
        read_stream(copy, (size_t)rand() % 8 ? stream_size : (size_t)rand() % stream_size, &c);
        ck_assert_int_le(c.n, stream_events);
        ck_assert(c.rc == ETL_EOF || c.rc == ETL_FATAL);
        consumer_free(&c);
    }
    free(copy);
    free(stream);
}
END_TEST

/* The stream kept in testdata (the fuzzer's seed): its format is the one this reader reads. */
START_TEST(kept_stream)
{
    size_t size;
    uint8_t *data = test_read_file(testdata_path("realtime.stream"), &size);
    struct consumer c;

    ck_assert_ptr_nonnull(data);
    read_stream(data, size, &c);
    ck_assert_msg(c.rc == ETL_EOF, "%s", c.err);
    ck_assert_int_gt(c.n, 100);
    for (long i = 0; i < c.n; i++) ck_assert_uint_eq(c.value[i], (uint64_t)i);
    ck_assert_uint_eq(c.info.events_lost, 0);
    ck_assert_uint_eq(c.info.buffer_size, 4096);
    consumer_free(&c);
    free(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("realtime");
    TCase *tc = tcase_create("realtime");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_event_delivered);
    tcase_add_test(tc, beside_a_file);
    tcase_add_test(tc, held_then_dropped_exactly);
    tcase_add_test(tc, consumers_one_after_another);
    tcase_add_test(tc, unacknowledged_buffers_go_to_the_next);
    tcase_add_test(tc, updates_take_effect);
    tcase_add_test(tc, not_a_real_time_session);
    tcase_add_test(tc, damaged_streams);
    tcase_add_test(tc, kept_stream);
    suite_add_tcase(s, tc);
    return check_run(s);
}
