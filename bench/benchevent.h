/* SPDX-License-Identifier: MIT */
/* The event sessionbench and provbench log, reading it back, and their clocks and pinning. */
#ifndef ETL_BENCH_BENCHEVENT_H
#define ETL_BENCH_BENCHEVENT_H

#include <stdint.h>

#include "etl.h"

/* Every ETL event of the two benchmarks: this provider and event, and 32 bytes of payload,
   four 64-bit integers: a sequence number, the writer's index and two constants. */
#define BENCH_PAYLOAD_SIZE 32
#define BENCH_MAX_WRITERS 64
extern const etl_guid bench_provider;
extern const etl_event_descriptor bench_descriptor;

/* The bytes an event of the benchmark takes in an ETL buffer. */
uint32_t bench_record_space(void);

/* CLOCK_MONOTONIC, and the calling thread's CPU time, in ns. */
int64_t bench_now_ns(void);
int64_t bench_thread_cpu_ns(void);

/* Pins the calling thread to cpu (nothing for -1): 1 if it is pinned. */
int bench_pin_self(int cpu);

struct readback {
    uint64_t events;                     /* benchmark events found */
    uint64_t per_writer[BENCH_MAX_WRITERS];
    uint64_t next_seq[BENCH_MAX_WRITERS]; /* the last sequence number seen + 1; 0 if none */
    uint32_t header_events_lost;
    int ok;
    char why[512];
};

/*
 * Reads path back with etl_reader (time order) and checks every event: the benchmark's
 * provider and payload size, each writer's sequence numbers rising, and, when pid is not NULL,
 * each writer's events carrying pid[writer].
 */
void bench_read_back(const char *path, unsigned writers, const long *pid, struct readback *rb);

#endif
