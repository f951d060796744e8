/* SPDX-License-Identifier: MIT */
/* Measures field decoding: every field of every event of a large real-like trace (the real samples merged many times over), against the plain reader pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"
#include "benchstat.h"

#define MAX_RUNS 25
#define GOAL_EVPS 5e6     /* decoding every field: events per second */
#define GOAL_RATIO 3.0    /* decoding's time over the plain reader pass's */

/* The samples the trace is made of, each taken copies times (kernel, .NET, HTTP Server,
   TraceLogging, EventSource, classic MOF: every kind of schema). */
static const struct { const char *name; unsigned copies; } parts[] = {
    { "perfview_diaghub.kernel.1.etl", 48 }, { "tx_HTTP_Server.etl", 96 }, { "perfview_gcevents_PerfViewData.etl", 96 },
    { "perfview_primitive-types.etl", 96 }, { "perfview_SelfDescribingSingleEvent.etl", 96 },
    { "airbus_AMSITrace.etl", 96 }, { "tx_BondEtwSample.etl", 96 }, { "syzygy_viewer_test_data_32_v1.etl", 96 },
    { "krabsetw_powershell.etl", 96 },
};

enum pass { PASS_READ, PASS_FIELDS, PASS_JSON, PASSES };
static const char *const pass_name[PASSES] = { "read", "fields", "json" };

struct tally {
    uint64_t events, fields, decoded, undecoded, failed, text_bytes;
    uint64_t by_source[ETL_SCHEMA_KERNEL + 1];
};

static etl_decoder *decoder;

/* One pass over the file: read every event; decode each (fields) and show it as JSON (json). */
static int one_pass(const char *path, int pass, struct tally *t)
{
    static char json[1 << 16];
    etl_reader_options o;
    etl_reader *r;
    etl_event ev;
    int rc;

    memset(&o, 0, sizeof o);
    o.order = ETL_ORDER_FILE;
    if (etl_reader_open_path(&r, path, &o) == ETL_FATAL) {
        fprintf(stderr, "decodebench: %s\n", etl_reader_error(r));
        etl_reader_close(r);
        return -1;
    }
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        t->events++;
        if (pass == PASS_READ) {
            t->text_bytes += ev.payload_len ? ev.payload[0] : 0; /* touch the payload */
            continue;
        } else {
            etl_decoded_event e;
            int k = etl_decoder_decode(decoder, &ev, &e);
            t->decoded += k == 1;
            t->undecoded += k == 0;
            t->failed += k == ETL_FAILED;
            t->fields += e.field_count;
            t->by_source[e.source]++;
            if (pass == PASS_JSON && k != 0) t->text_bytes += etl_decoded_format_json(&e, json, sizeof json);
        }
    }
    etl_reader_close(r);
    return rc == ETL_EOF ? 0 : -1;
}

/* Builds the trace: every part's copies merged on one clock into path. Returns its events. */
static long build(const char *dir, const char *path)
{
    unsigned n = 0, k = 0;
    const char **paths;
    char (*names)[4096];
    etl_merge *m = NULL;
    etl_merge_stats st;
    int rc;

    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) n += parts[i].copies;
    paths = calloc(n, sizeof *paths);
    names = calloc(sizeof parts / sizeof *parts, sizeof *names);
    if (!paths || !names) return -1;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        snprintf(names[i], sizeof names[i], "%s/samples/%s", dir, parts[i].name);
        for (unsigned c = 0; c < parts[i].copies; c++) paths[k++] = names[i];
    }
    rc = etl_merge_open(&m, paths, n, NULL);
    if (rc == ETL_FATAL || etl_merge_write(m, path) == ETL_FATAL) {
        fprintf(stderr, "decodebench: merging the samples: %s\n", m ? etl_merge_error(m) : "out of memory");
        etl_merge_close(m);
        free(paths);
        free(names);
        return -1;
    }
    etl_merge_stats_get(m, &st);
    etl_merge_close(m);
    free(paths);
    free(names);
    return (long)st.events_merged;
}

int main(int argc, char **argv)
{
    char path[] = "/tmp/decodebench.XXXXXX";
    double secs[PASSES][MAX_RUNS], cpu[PASSES][MAX_RUNS];
    struct tally first[PASSES];
    unsigned runs = 5;
    double min_run_s = 0.5;
    unsigned reps[PASSES];
    long events;
    int fd, status = 0;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: decodebench TESTDATA_DIR [RUNS]\n");
        return 2;
    }
    if (argc == 3) runs = (unsigned)atoi(argv[2]);
    if (runs < 1 || runs > MAX_RUNS) runs = 5;
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_print_machine();
    if ((fd = mkstemp(path)) < 0) {
        perror("decodebench: mkstemp");
        return 1;
    }
    close(fd);
    unlink(path);
    if ((events = build(argv[1], path)) < 0) return 1;
    if (etl_decoder_open(&decoder, NULL) == ETL_FATAL) {
        fprintf(stderr, "decodebench: out of memory\n");
        unlink(path);
        return 1;
    }
    printf("trace: the samples merged on one clock (%ld events):", events);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) printf(" %s x%u", parts[i].name, parts[i].copies);
    printf("\ndecoder: the installed manifests and ETL_MANIFEST_PATH (%s)\n",
           getenv("ETL_MANIFEST_PATH") ? getenv("ETL_MANIFEST_PATH") : "unset");
    /* warm-up: the page cache, the decoder's caches, and how many passes make a run */
    for (int p = 0; p < PASSES; p++) {
        double t0 = bench_now_s(), w;
        memset(&first[p], 0, sizeof first[p]);
        if (one_pass(path, p, &first[p]) != 0) goto fail;
        w = bench_now_s() - t0;
        reps[p] = w >= min_run_s ? 1 : (unsigned)(min_run_s / (w > 1e-6 ? w : 1e-6)) + 1;
    }
    /* the passes take turns, so that load from other tenants falls on all alike */
    for (unsigned i = 0; i < runs; i++) {
        for (int p = 0; p < PASSES; p++) {
            struct tally t;
            double t0 = bench_now_s(), c0 = bench_cpu_s();
            memset(&t, 0, sizeof t);
            for (unsigned k = 0; k < reps[p]; k++)
                if (one_pass(path, p, &t) != 0) goto fail;
            secs[p][i] = (bench_now_s() - t0) / reps[p];
            cpu[p][i] = (bench_cpu_s() - c0) / reps[p];
            if (t.events != first[p].events * reps[p] || t.decoded != first[p].decoded * reps[p]) {
                fprintf(stderr, "decodebench: the passes delivered different results\n");
                status = 1;
            }
        }
    }
    {
        const struct tally *f = &first[PASS_FIELDS];
        printf("events: %llu; decoded %llu (kernel %llu, manifest %llu, eventsource %llu, tracelogging %llu), "
               "no schema %llu, failed %llu; %.1f fields per event\n",
               (unsigned long long)f->events, (unsigned long long)f->decoded,
               (unsigned long long)f->by_source[ETL_SCHEMA_KERNEL], (unsigned long long)f->by_source[ETL_SCHEMA_MANIFEST],
               (unsigned long long)f->by_source[ETL_SCHEMA_EVENTSOURCE],
               (unsigned long long)f->by_source[ETL_SCHEMA_TRACELOGGING], (unsigned long long)f->undecoded,
               (unsigned long long)f->failed, f->events ? (double)f->fields / (double)f->events : 0.0);
        if (f->failed) status = 1;
    }
    /* Wall time, then processor time: the machine is shared, and the processor time of this
       one-threaded work is what other tenants disturb least. */
    for (int clock = 0; clock < 2; clock++) {
        struct stats s[PASSES];
        printf("%s\n%-7s %5s  %-28s  %s\n", clock ? "processor time:" : "wall time:", "pass", "reps",
               "M events/s med [min-max]", "ns/event med");
        for (int p = 0; p < PASSES; p++) {
            double v[MAX_RUNS];
            for (unsigned i = 0; i < runs; i++)
                v[i] = (double)first[p].events / (clock ? cpu[p][i] : secs[p][i]) / 1e6;
            s[p] = stats_of(v, runs);
            printf("%-7s %5u  %7.2f [%.2f-%.2f]%*s  %.1f\n", pass_name[p], reps[p], s[p].med, s[p].min, s[p].max, 8, "",
                   1e3 / s[p].med);
        }
        {
            double ratio = s[PASS_READ].med / s[PASS_FIELDS].med;
            int met = s[PASS_FIELDS].med * 1e6 >= GOAL_EVPS && ratio <= GOAL_RATIO;
            printf("goal (%s): decoding every field at %.2f M events/s (goal >= %.0f M) and %.2fx the plain reader "
                   "pass's time (goal <= %.1fx): %s\n",
                   clock ? "processor time" : "wall time", s[PASS_FIELDS].med, GOAL_EVPS / 1e6, ratio, GOAL_RATIO,
                   met ? "met" : "NOT met");
            printf("with JSON text of every decoded event: %.2f M events/s, %.2fx the plain pass\n", s[PASS_JSON].med,
                   s[PASS_READ].med / s[PASS_JSON].med);
        }
    }
    etl_decoder_close(decoder);
    unlink(path);
    return status;
fail:
    etl_decoder_close(decoder);
    unlink(path);
    return 1;
}
