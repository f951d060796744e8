/* SPDX-License-Identifier: MIT */
/* The event sessionbench and provbench log, reading it back, and their clocks and pinning. */
/* pthread_setaffinity_np, CPU_SET: Linux interfaces. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "benchevent.h"

const etl_guid bench_provider = { 0x5eb1c0de, 0x00be, 0x4c11, { 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x32 } };
const etl_event_descriptor bench_descriptor = { .id = 1, .version = 0, .level = 4, .keywords = 1 };

uint32_t bench_record_space(void)
{
    etl_data data = { NULL, BENCH_PAYLOAD_SIZE };
    return ETL_RECORD_SPACE(
        etl_record_encode_event(NULL, 0, 0, 0, 0, &bench_provider, &bench_descriptor, NULL, &data, 1));
}

int64_t bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t bench_thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int bench_pin_self(int cpu)
{
    cpu_set_t set;

    if (cpu < 0) return 0;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v); /* written natively on this machine */
    return v;
}

void bench_read_back(const char *path, unsigned writers, const long *pid, struct readback *rb)
{
    etl_reader *r = NULL;
    etl_event ev;
    int rc;

    memset(rb, 0, sizeof *rb);
    if (etl_reader_open_path(&r, path, NULL) != ETL_OK) {
        snprintf(rb->why, sizeof rb->why, "open: %s", r ? etl_reader_error(r) : "out of memory");
        etl_reader_close(r);
        return;
    }
    rb->header_events_lost = etl_reader_info(r)->events_lost;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        uint64_t seq, w;
        if (ev.kind != ETL_KIND_EVENT) continue; /* the logfile header event */
        if (!etl_guid_equal(&ev.provider, &bench_provider) || ev.payload_len != BENCH_PAYLOAD_SIZE) {
            snprintf(rb->why, sizeof rb->why, "a foreign event at buffer %u offset %u", ev.buffer_index,
                     ev.record_offset);
            break;
        }
        seq = load64(ev.payload);
        w = load64(ev.payload + 8);
        if (w >= writers || w >= BENCH_MAX_WRITERS) {
            snprintf(rb->why, sizeof rb->why, "an event of writer %llu, of %u", (unsigned long long)w, writers);
            break;
        }
        if (seq < rb->next_seq[w]) {
            snprintf(rb->why, sizeof rb->why, "writer %llu: sequence %llu after %llu", (unsigned long long)w,
                     (unsigned long long)seq, (unsigned long long)rb->next_seq[w] - 1);
            break;
        }
        if (pid && (!(ev.has & ETL_HAS_PID_TID) || (long)ev.pid != pid[w])) {
            snprintf(rb->why, sizeof rb->why, "writer %llu: an event with pid %u, not %ld", (unsigned long long)w,
                     ev.pid, pid[w]);
            break;
        }
        rb->next_seq[w] = seq + 1;
        rb->per_writer[w]++;
        rb->events++;
    }
    if (!rb->why[0] && rc != ETL_EOF) snprintf(rb->why, sizeof rb->why, "read: %s", etl_reader_error(r));
    rb->ok = !rb->why[0];
    etl_reader_close(r);
}
