/* SPDX-License-Identifier: MIT */
/* etldemo: the provider "etldemo", writing TraceLogging events (and LBR records) from several
   threads through libetl's provider API, for sessions to record (doc/etldemo.1). */
#define _GNU_SOURCE /* clock_nanosleep with TIMER_ABSTIME */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmdline.h"
#include "etl.h"

/* Exit codes (doc/etldemo.1). */
#define EXIT_REFUSED 1 /* a session lost some of the events */
#define EXIT_ERROR   2 /* bad usage, or the provider or a thread could not be started */

#define MAX_THREADS 1024
#define PAYLOAD_MIN 8  /* the sequence number and the thread's index */
#define LBR_MAX_ENTRIES 8

/* --size's largest value: what a record of the events with a Text field can carry
   (etl_tlg_event_max_payload; main checks that it is so). */
#define PAYLOAD_MAX 65376u

static const char usage_text[] =
    "Usage: etldemo [OPTION]...\n"
    "Register the provider etldemo (458d4a63-7cc9-5239-62c4-f8aebbe597ac) and write\n"
    "TraceLogging events from several threads through libetl's provider API, into\n"
    "every session that enables it (etlrecord run --provider etldemo -o FILE --\n"
    "etldemo).\n"
    "\n"
    "  -t, --threads=N       threads that write (default 4, at most 1024)\n"
    "  -n, --events=N        events each thread writes (default 1000)\n"
    "  -r, --rate=N          at most N events per second in all (default 0: no limit)\n"
    "  -s, --size=BYTES      payload bytes of each event, 8 to 65376 (default 8): the\n"
    "                        fields Sequence and Thread (the sequence number and the\n"
    "                        thread's index, UInt32 each), then from 9 bytes on the\n"
    "                        field Text, 'etldemo ' repeated and a NUL (UTF-8)\n"
    "      --lbr             write an LBR record (made-up branches) after each event\n"
    "      --level=L         give every event level L (0 to 255) instead of its own\n"
    "      --keywords=K      give every event keywords K (0x8) instead of its own\n"
    "  -h, --help            show this help and exit\n"
    "  -V, --version         show the versions of etldemo, libetl and zlib and exit\n"
    "\n"
    "Events, by sequence number modulo 4: Info (id 1, level 4, keywords 0x1),\n"
    "Verbose (id 2, level 5, 0x2), Warning (id 3, level 3, 0x4), Error (id 4, level\n"
    "2, 0x8). Each carries its names and field types (TraceLogging), so that\n"
    "decoders (libetl's, Windows' tools) show its fields with no manifest. An event\n"
    "no session enables is not written (etl_tlg_event_enabled). At the end etldemo\n"
    "prints on stdout 'etldemo: W events written by T threads (R refused, S not\n"
    "enabled)'.\n"
    "\n"
    "Exit status: 0 done; 1 a session refused (lost) some events; 2 bad usage, or\n"
    "the provider or a thread could not be started.\n";

/* The events etldemo writes, by sequence number modulo 4 (doc/etldemo.1). */
static const struct {
    const char *name;
    etl_event_descriptor d;
} kinds[4] = {
    { "Info", { .id = 1, .level = 4, .keywords = 0x1 } },
    { "Verbose", { .id = 2, .level = 5, .keywords = 0x2 } },
    { "Warning", { .id = 3, .level = 3, .keywords = 0x4 } },
    { "Error", { .id = 4, .level = 2, .keywords = 0x8 } },
};

/* Their fields: the payload's first 8 bytes, and the text after them when --size gives room. */
static const etl_tlg_field fields[3] = {
    { "Sequence", ETL_TLG_UINT32, ETL_TLG_SCALAR, 0, 0 },
    { "Thread", ETL_TLG_UINT32, ETL_TLG_SCALAR, 0, 0 },
    { "Text", ETL_TLG_UTF8, ETL_TLG_SCALAR, 0, 0 },
};

struct demo {
    etl_provider *provider;
    etl_tlg_event *kind[4];       /* the four events, by sequence number modulo 4 */
    uint32_t threads, events, rate, size;
    int lbr;
    int has_level, has_keywords;
    uint8_t level;
    uint64_t keywords;
    struct timespec start;
};

struct worker {
    const struct demo *demo;
    uint32_t index;
    uint64_t written, refused, not_enabled;
    pthread_t thread;
};

/*
 * Sleeps until event k of thread index is due: the threads' events evenly spread, rate a
 * second. Only when it is due more than 100 us from now: a sleep costs a timer in the kernel
 * (17 us of system time each in a VM, measured), and one per event at a high rate made
 * --rate 500000 write 55 000 a second; an event a little early instead is a burst of at
 * most 100 us' worth.
 */
static void pace(const struct demo *d, uint32_t index, uint64_t k)
{
    uint64_t slot = k * d->threads + index;
    uint64_t ns = (uint64_t)d->start.tv_nsec + slot % d->rate * 1000000000u / d->rate;
    struct timespec due, now;

    due.tv_sec = d->start.tv_sec + (time_t)(slot / d->rate) + (time_t)(ns / 1000000000u);
    due.tv_nsec = (long)(ns % 1000000000u);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((int64_t)(due.tv_sec - now.tv_sec) * 1000000000 + (due.tv_nsec - now.tv_nsec) <= 100000) return;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR) {}
}

/* Made-up user-mode branches for event seq of thread index: 1 to 8 of them, most recent first. */
static unsigned branches(uint32_t index, uint32_t seq, etl_lbr_entry *out)
{
    uint64_t base = 0x00007ff6c0000000ull + ((uint64_t)index << 20);
    unsigned n = 1 + seq % LBR_MAX_ENTRIES;

    for (unsigned j = 0; j < n; j++) {
        out[j].from = base + (seq + j) % 256 * 0x40 + 0x10;
        out[j].to = base + (seq + 7 * j + 3) % 256 * 0x40;
        out[j].reserved = 0;
    }
    return n;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    const struct demo *d = w->demo;
    uint8_t *payload = malloc(d->size);
    etl_lbr_entry lbr[LBR_MAX_ENTRIES];
    etl_data data = { payload, d->size };

    if (!payload) return "out of memory";
    for (uint32_t i = PAYLOAD_MIN; i < d->size; i++) payload[i] = (uint8_t)"etldemo "[(i - PAYLOAD_MIN) % 8];
    if (d->size > PAYLOAD_MIN) payload[d->size - 1] = '\0'; /* the end of Text */
    memcpy(payload + 4, &w->index, 4); /* both little-endian on the hosts libetl runs on */
    for (uint32_t seq = 0; seq < d->events; seq++) {
        const etl_tlg_event *ev = d->kind[seq % 4];
        int rc;
        if (d->rate) pace(d, w->index, seq);
        if (!etl_tlg_event_enabled(ev)) {
            w->not_enabled++;
            continue;
        }
        memcpy(payload, &seq, 4);
        if (d->lbr)
            rc = etl_tlg_event_write_lbr(ev, &data, 1, 0, ETL_LBR_FILTER_USER, lbr, branches(w->index, seq, lbr));
        else
            rc = etl_tlg_event_write(ev, &data, 1, 0);
        if (rc != ETL_OK && errno == ESHUTDOWN) { /* the session was stopping: not lost, not taken */
            w->not_enabled++;
            continue;
        }
        w->written++;
        if (rc != ETL_OK) w->refused++;
    }
    free(payload);
    return NULL;
}

/* Runs the threads and prints what they did; the exit status. */
static int run(struct demo *d)
{
    struct worker *w = calloc(d->threads, sizeof *w);
    uint64_t written = 0, refused = 0, not_enabled = 0;
    const char *failure = NULL;
    etl_guid guid;
    uint32_t started;
    int rc;

    if (!w || etl_guid_from_name("etldemo", &guid) != ETL_OK ||
        etl_provider_register_named(&d->provider, "etldemo", &guid, NULL) != ETL_OK) {
        fputs("etldemo: the provider etldemo could not be registered: out of memory\n", stderr);
        free(w);
        return EXIT_ERROR;
    }
    for (unsigned k = 0; k < 4; k++) {
        etl_event_descriptor desc = kinds[k].d;
        char err[256];
        if (d->has_level) desc.level = d->level;
        if (d->has_keywords) desc.keywords = d->keywords;
        if (etl_tlg_event_define(&d->kind[k], d->provider, kinds[k].name, &desc, fields,
                                 d->size > PAYLOAD_MIN ? 3 : 2, err, sizeof err) != ETL_OK) {
            fprintf(stderr, "etldemo: the event %s could not be defined: %s\n", kinds[k].name, err);
            etl_provider_unregister(d->provider);
            free(w);
            return EXIT_ERROR;
        }
        if (d->size > etl_tlg_event_max_payload(d->kind[k])) { /* PAYLOAD_MAX out of step with the library */
            fprintf(stderr, "etldemo: the event %s carries at most %u bytes of payload\n", kinds[k].name,
                    etl_tlg_event_max_payload(d->kind[k]));
            etl_provider_unregister(d->provider);
            free(w);
            return EXIT_ERROR;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &d->start);
    for (started = 0; started < d->threads; started++) {
        w[started].demo = d;
        w[started].index = started;
        if ((rc = pthread_create(&w[started].thread, NULL, work, &w[started])) != 0) {
            fprintf(stderr, "etldemo: thread %u could not be started: %s\n", started, strerror(rc));
            break;
        }
    }
    for (uint32_t i = 0; i < started; i++) {
        void *why = NULL;
        pthread_join(w[i].thread, &why);
        if (why) failure = why;
        written += w[i].written;
        refused += w[i].refused;
        not_enabled += w[i].not_enabled;
    }
    etl_provider_unregister(d->provider); /* and its events */
    free(w);
    printf("etldemo: %llu events written by %u threads (%llu refused, %llu not enabled)\n",
           (unsigned long long)written, started, (unsigned long long)refused, (unsigned long long)not_enabled);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "etldemo: write error: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    if (failure) fprintf(stderr, "etldemo: a thread stopped early: %s\n", failure);
    if (failure || started < d->threads) return EXIT_ERROR;
    return refused ? EXIT_REFUSED : 0;
}

static int bad_number(const char *option, const char *value, unsigned long min, unsigned long max)
{
    fprintf(stderr, "etldemo: --%s: '%s' is not a number from %lu to %lu\nTry 'etldemo --help'.\n", option, value,
            min, max);
    return EXIT_ERROR;
}

int main(int argc, char **argv)
{
    enum { OPT_LBR = 256, OPT_LEVEL, OPT_KEYWORDS };
    static const struct option longopts[] = {
        { "threads", required_argument, NULL, 't' }, { "events", required_argument, NULL, 'n' },
        { "rate", required_argument, NULL, 'r' },    { "size", required_argument, NULL, 's' },
        { "lbr", no_argument, NULL, OPT_LBR },       { "level", required_argument, NULL, OPT_LEVEL },
        { "keywords", required_argument, NULL, OPT_KEYWORDS },
        { "help", no_argument, NULL, 'h' },          { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct demo d;
    uint32_t level;
    int c;

    memset(&d, 0, sizeof d);
    d.threads = 4;
    d.events = 1000;
    d.size = PAYLOAD_MIN;
    while ((c = tool_getopt_long("etldemo", argc, argv, "t:n:r:s:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (tool_parse_u32(optarg, MAX_THREADS, &d.threads) != 0 || d.threads == 0)
                return bad_number("threads", optarg, 1, MAX_THREADS);
            break;
        case 'n':
            if (tool_parse_u32(optarg, UINT32_MAX, &d.events) != 0) return bad_number("events", optarg, 0, UINT32_MAX);
            break;
        case 'r':
            if (tool_parse_u32(optarg, UINT32_MAX, &d.rate) != 0) return bad_number("rate", optarg, 0, UINT32_MAX);
            break;
        case 's':
            if (tool_parse_u32(optarg, PAYLOAD_MAX, &d.size) != 0 || d.size < PAYLOAD_MIN)
                return bad_number("size", optarg, PAYLOAD_MIN, PAYLOAD_MAX);
            break;
        case OPT_LBR: d.lbr = 1; break;
        case OPT_LEVEL:
            if (tool_parse_u32(optarg, 255, &level) != 0) return bad_number("level", optarg, 0, 255);
            d.level = (uint8_t)level;
            d.has_level = 1;
            break;
        case OPT_KEYWORDS:
            if (tool_parse_u64(optarg, &d.keywords) != 0) {
                fprintf(stderr, "etldemo: --keywords: '%s' is not a number (decimal, or 0x hexadecimal)\n"
                        "Try 'etldemo --help'.\n", optarg);
                return EXIT_ERROR;
            }
            d.has_keywords = 1;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("etldemo %s (%s)\n", etl_version(), etl_version_details()); return 0;
        default: fputs("Try 'etldemo --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "etldemo: unexpected argument '%s'\nTry 'etldemo --help'.\n", argv[optind]);
        return EXIT_ERROR;
    }
    return run(&d);
}
