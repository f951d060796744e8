/* SPDX-License-Identifier: MIT */
/*
 * mkscenario: records one scenario with libetl's capture engine, as a program traced by the
 * future etlrecord would:  mkscenario [--variant NAME] OUT.etl
 *
 * Every run is "the same scenario recorded again": the events, their order and their payloads
 * are the same, and only what a new recording changes differs (process and thread ids,
 * timestamps, processors, and the stack addresses, which ASLR moves). tests/etldiff.test
 * compares such recordings, and variants that differ from the base on purpose.
 *
 * The base scenario, in this order (a sequential file, the default clock):
 *   main thread:   events 0..99, with a Registry system event after event 49
 *   a worker:      events 100..149, then it is joined
 *   main thread:   (after a 200 ms pause) events 150..199, with a Registry system event after 179
 * Event i: provider B (SCENARIO_B) when i % 4 == 3, with id 10 + (i / 4) % 2; else provider A
 * (SCENARIO_A) with id 1 + i % 3. Level, version, opcode, task and keywords follow the id; the
 * payload is i (32 bits), the id (16 bits), the provider's letter and i % 5 bytes that follow i.
 * Events 20 (main) and 130 (worker) carry a STACK_TRACE64 item of three real addresses.
 *
 * Variants (each changes one thing of the base; event numbers are the base's):
 *   base      the above
 *   extra     one more A event (id 2, payload "EXTRA") after event 60
 *   missing   event 70 left out
 *   swap      events 80 (A id 3) and 81 (A id 1) swapped
 *   payload   event 90's payload byte 4 changed
 *   provider  five events of provider C (SCENARIO_C, id 7) after events 30, 55, 120, 160, 190
 *   more      five more B id-10 events (25 in the base: +20%) after events 10, 40, 110, 170, 195
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"

#define SCENARIO_A "6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001"
#define SCENARIO_B "6a1b2c3d-0002-4d1f-8e7a-5ce4a0000002"
#define SCENARIO_C "6a1b2c3d-0003-4d1f-8e7a-5ce4a0000003"
#define REGISTRY_HOOK(type) (0x0900 | (type)) /* the Registry group: a class nothing decodes */

enum { MAIN_FIRST, WORKER, MAIN_LAST }; /* who logs an entry, in this order */

struct entry {
    int phase;
    int system;          /* a SYSTEM_TRACE_HEADER event (hook = id) */
    int stack;           /* with a STACK_TRACE64 item */
    const etl_guid *provider;
    etl_event_descriptor d;
    uint8_t payload[16];
    uint32_t len;
};

static etl_guid prov_a, prov_b, prov_c;
static struct entry list[256];
static unsigned count;
static etl_session *session;
static int64_t last_ts;
static int failed;

static struct entry *append(void)
{
    if (count == sizeof list / sizeof list[0]) {
        fprintf(stderr, "mkscenario: too many events\n");
        exit(1);
    }
    memset(&list[count], 0, sizeof list[count]);
    return &list[count++];
}

static void put_payload(struct entry *e, uint32_t i, const char *tag, unsigned extra)
{
    size_t n = strlen(tag);

    e->payload[0] = (uint8_t)i; e->payload[1] = (uint8_t)(i >> 8); e->payload[2] = (uint8_t)(i >> 16);
    e->payload[3] = (uint8_t)(i >> 24);
    e->payload[4] = (uint8_t)e->d.id; e->payload[5] = (uint8_t)(e->d.id >> 8);
    memcpy(e->payload + 6, tag, n);
    for (unsigned k = 0; k < extra; k++) e->payload[6 + n + k] = (uint8_t)(i * 37 + k);
    e->len = (uint32_t)(6 + n + extra);
}

/* An EVENT_HEADER event of provider p, id `id`, numbered i. */
static void add_event(int phase, uint32_t i, const etl_guid *p, uint16_t id, const char *tag)
{
    struct entry *e = append();

    e->phase = phase;
    e->provider = p;
    e->d.id = id;
    e->d.version = id == 3 ? 1 : 0;
    e->d.level = id == 2 ? 5 : id == 3 ? 3 : id == 11 ? 2 : 4;
    e->d.opcode = id == 11 ? 1 : 0;
    e->d.task = id;
    e->d.keywords = (1ull << (id % 8)) | (p == &prov_b ? 0x800000000000ull : 0);
    put_payload(e, i, tag, i % 5);
}

static int phase_of(uint32_t i) { return i < 100 ? MAIN_FIRST : i < 150 ? WORKER : MAIN_LAST; }

static void add_base(uint32_t i)
{
    if (i % 4 == 3) add_event(phase_of(i), i, &prov_b, (uint16_t)(10 + (i / 4) % 2), "B");
    else add_event(phase_of(i), i, &prov_a, (uint16_t)(1 + i % 3), "A");
    list[count - 1].stack = i == 20 || i == 130;
    if (i == 49 || i == 179) {
        struct entry *e = append();
        e->phase = phase_of(i);
        e->system = 1;
        e->d.id = REGISTRY_HOOK(i == 49 ? 0x10 : 0x11);
        put_payload(e, i, "SYS", 2);
    }
}

static int in(uint32_t i, const uint32_t *set, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (set[k] == i) return 1;
    return 0;
}

static int build(const char *variant)
{
    static const uint32_t provider_after[] = { 30, 55, 120, 160, 190 };
    static const uint32_t more_after[] = { 10, 40, 110, 170, 195 };
    int v_extra = !strcmp(variant, "extra"), v_missing = !strcmp(variant, "missing");
    int v_swap = !strcmp(variant, "swap"), v_payload = !strcmp(variant, "payload");
    int v_provider = !strcmp(variant, "provider"), v_more = !strcmp(variant, "more");

    if (!v_extra && !v_missing && !v_swap && !v_payload && !v_provider && !v_more && strcmp(variant, "base") != 0)
        return -1;
    for (uint32_t i = 0; i < 200; i++) {
        if (v_missing && i == 70) continue;
        if (v_swap && (i == 80 || i == 81)) {
            add_base(i == 80 ? 81 : 80);
            continue;
        }
        add_base(i);
        if (v_payload && i == 90) list[count - 1].payload[4] ^= 0x5a;
        if (v_extra && i == 60) add_event(phase_of(i), 1000, &prov_a, 2, "EXTRA");
        if (v_provider && in(i, provider_after, 5)) add_event(phase_of(i), 2000 + i, &prov_c, 7, "C");
        if (v_more && in(i, more_after, 5)) add_event(phase_of(i), 3000 + i, &prov_b, 10, "B");
    }
    return 0;
}

/* Waits until the session clock has passed the last event's, so that no two events share a
   timestamp: the time order then is the order they were logged in, whatever processor. */
static void next_tick(void)
{
    while (etl_session_timestamp(session) <= last_ts) {}
}

static __attribute__((noinline)) void log_entry(const struct entry *e)
{
    uint64_t frames[3];
    etl_event_extras x = { 0 };
    etl_data data = { e->payload, e->len };
    int rc;

    next_tick();
    if (e->system)
        rc = etl_session_write_system(session, 0, e->d.id, 2, (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid),
                                      &data, 1);
    else {
        if (e->stack) { /* real addresses: a return address, a function, a stack slot */
            frames[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
            frames[1] = (uint64_t)(uintptr_t)&log_entry;
            frames[2] = (uint64_t)(uintptr_t)&frames;
            x.stack = frames;
            x.stack_frames = 3;
        }
        rc = etl_session_write_event(session, e->provider, &e->d, e->stack ? &x : NULL, &data, 1);
    }
    if (rc != ETL_OK) {
        fprintf(stderr, "mkscenario: an event was lost: %s\n", strerror(errno));
        failed = 1;
    }
    last_ts = etl_session_timestamp(session);
}

static void log_phase(int phase)
{
    for (unsigned k = 0; k < count; k++)
        if (list[k].phase == phase) log_entry(&list[k]);
}

static void *worker(void *arg)
{
    (void)arg;
    log_phase(WORKER);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *variant = "base", *out;
    etl_session_properties p = { .logger_name = "mkscenario" };
    etl_session_stats st;
    struct timespec pause = { 0, 200000000 };
    pthread_t t;

    if (argc == 4 && !strcmp(argv[1], "--variant")) variant = argv[2];
    else if (argc != 2) variant = NULL;
    if (!variant || argv[argc - 1][0] == '-' ||
        etl_guid_parse(SCENARIO_A, &prov_a) != ETL_OK || etl_guid_parse(SCENARIO_B, &prov_b) != ETL_OK ||
        etl_guid_parse(SCENARIO_C, &prov_c) != ETL_OK || build(variant) != 0) {
        fprintf(stderr, "usage: mkscenario [--variant base|extra|missing|swap|payload|provider|more] OUT.etl\n");
        return 2;
    }
    out = argv[argc - 1];
    p.log_file_name = out;
    if (etl_session_start(&session, &p) != ETL_OK) {
        fprintf(stderr, "mkscenario: %s: %s\n", out, session ? etl_session_error(session) : "out of memory");
        etl_session_close(session);
        return 1;
    }
    log_phase(MAIN_FIRST);
    if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "mkscenario: cannot run the worker thread\n");
        failed = 1;
    }
    nanosleep(&pause, NULL); /* a gap that --time-range tests can cut at 0.1 s */
    log_phase(MAIN_LAST);
    if (etl_session_stop(session, &st) != ETL_OK) {
        fprintf(stderr, "mkscenario: %s: %s\n", out, etl_session_error(session));
        etl_session_close(session);
        return 1;
    }
    etl_session_close(session);
    if (st.events_lost) {
        fprintf(stderr, "mkscenario: %s: %llu events lost\n", out, (unsigned long long)st.events_lost);
        return 1;
    }
    return failed;
}
