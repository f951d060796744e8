/* SPDX-License-Identifier: MIT */
/* Measures the cost of etl_session_write_event per event, and of the same event through the provider API, plain and as a TraceLogging event, against LTTng-UST in the same run, and checks for loss at a paced rate. */
/* pthread_setaffinity_np, CPU_SET, sched_getcpu: Linux interfaces the benchmark pins threads with. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "etl.h"
#include "engine/engine.h" /* the default clock, as a reference point (libetl private) */
#ifdef HAVE_LTTNG_UST
#include "lttng_tp.h"
#endif
#include "benchevent.h"
#include "benchstat.h"
#include "lttngctl.h"

#define MAX_RUNS 25
#define MAX_THREADS 2
#define GOAL_NS 50.0          /* per event, per thread */
#define GOAL_LTTNG_RATIO 3.0  /* LTTng-UST ns per event / libetl ns per event */
#define GOAL_TLG_RATIO 1.5    /* TraceLogging event ns / plain event ns, at most */
#define GOAL_RATE 2000000     /* events per second without loss, sequential file, default buffers */
#define TMPDIR_SIZE 1024      /* $TMPDIR, and the paths made in it */
#define PATH_SIZE 1280
#define MSG_SIZE 2048

struct config {
    unsigned runs;       /* measured rounds after one warm-up round */
    uint64_t events;     /* per thread and run */
    uint64_t pool_events; /* per thread and run, when the pool holds the run (at most events) */
    uint64_t rate;       /* no-loss check: events per second */
    double pace_s;       /* no-loss check: seconds */
    int lttng;           /* measure LTTng-UST (when built with it) */
    int keep, quick;
    char tmpdir[TMPDIR_SIZE];
};

/* ------------------------------------------------------------------ clocks, statistics */

/* ------------------------------------------------------------------ producer threads */

enum kind { KIND_ETL_BUFFERING, KIND_ETL_FILE, KIND_LTTNG };

/* How a libetl case writes its event: etl_session_write_event, or through the provider API the
   same event, or a TraceLogging event of the same payload (four UInt64 fields). */
enum write_path { PATH_SESSION, PATH_PROVIDER, PATH_TLG };
static etl_provider *bench_prov;
static etl_tlg_event *bench_tlg;
static const etl_tlg_field bench_tlg_fields[4] = {
    { "Sequence", ETL_TLG_UINT64, 0, 0, 0 }, { "Writer", ETL_TLG_UINT64, 0, 0, 0 },
    { "A", ETL_TLG_HEXINT64, 0, 0, 0 },       { "B", ETL_TLG_HEXINT64, 0, 0, 0 },
};

struct worker {
    pthread_t thread;
    unsigned index;
    int cpu;                /* the processor it is pinned to, or -1 */
    int kind;
    int path;               /* enum write_path */
    etl_session *session;
    uint64_t n;             /* events to log */
    uint64_t failed;        /* calls that returned an error (events lost) */
    int64_t start_ns, end_ns, cpu_ns;
    int pinned;
};

static _Atomic unsigned workers_ready;
static _Atomic int pin_failed;
static _Atomic int workers_go;
static int allowed_cpus[MAX_THREADS];
static unsigned n_allowed_cpus;
static cpu_set_t process_cpus; /* the affinity the process started with */
static int have_process_cpus;

/* The first MAX_THREADS processors this process may run on: thread i is pinned to the i-th. */
static void find_cpus(void)
{
    n_allowed_cpus = 0;
    if (sched_getaffinity(0, sizeof process_cpus, &process_cpus) != 0) return;
    have_process_cpus = 1;
    for (int c = 0; c < CPU_SETSIZE && n_allowed_cpus < MAX_THREADS; c++)
        if (CPU_ISSET(c, &process_cpus)) allowed_cpus[n_allowed_cpus++] = c;
}

/* Back to the processors the process started with (a session started now gives its flush
   thread the caller's affinity). */
static void unpin_self(void)
{
    if (have_process_cpus) pthread_setaffinity_np(pthread_self(), sizeof process_cpus, &process_cpus);
}

static void etl_loop(struct worker *w)
{
    uint64_t payload[4] = { 0, w->index, 0x5eb1c0de5eb1c0deULL, 0x0123456789abcdefULL };
    etl_data data = { payload, BENCH_PAYLOAD_SIZE };
    uint64_t failed = 0;

    switch (w->path) {
    case PATH_SESSION:
        for (uint64_t i = 0; i < w->n; i++) {
            payload[0] = i;
            if (etl_session_write_event(w->session, &bench_provider, &bench_descriptor, NULL, &data, 1) != ETL_OK)
                failed++;
        }
        break;
    case PATH_PROVIDER:
        for (uint64_t i = 0; i < w->n; i++) {
            payload[0] = i;
            if (etl_provider_write(bench_prov, &bench_descriptor, &data, 1, 0) != ETL_OK) failed++;
        }
        break;
    default:
        for (uint64_t i = 0; i < w->n; i++) {
            payload[0] = i;
            if (etl_tlg_event_write(bench_tlg, &data, 1, 0) != ETL_OK) failed++;
        }
    }
    w->failed = failed;
}

#ifdef HAVE_LTTNG_UST
static void lttng_loop(struct worker *w)
{
    uint64_t payload[4] = { 0, w->index, 0x5eb1c0de5eb1c0deULL, 0x0123456789abcdefULL };

    for (uint64_t i = 0; i < w->n; i++) {
        payload[0] = i;
        lttng_ust_tracepoint(libetl_bench, event32, payload);
    }
    w->failed = 0;
}
#endif

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int64_t cpu0;

    w->pinned = bench_pin_self(w->cpu);
    if (!w->pinned) atomic_store(&pin_failed, 1);
    atomic_fetch_add(&workers_ready, 1);
    while (!atomic_load_explicit(&workers_go, memory_order_acquire)) sched_yield();
    cpu0 = bench_thread_cpu_ns();
    w->start_ns = bench_now_ns();
    if (w->kind == KIND_LTTNG) {
#ifdef HAVE_LTTNG_UST
        lttng_loop(w);
#endif
    } else {
        etl_loop(w);
    }
    w->end_ns = bench_now_ns();
    w->cpu_ns = bench_thread_cpu_ns() - cpu0;
    return NULL;
}

struct timing {
    double wall_s;      /* first start to last end */
    double ns_per_event; /* wall time / events per thread */
    double cpu_share;   /* producers' CPU time / (threads * wall time) */
    uint64_t failed;
    int pinned;
};

/* Run threads producers of n events each, released together. 0, or -1 if a thread could not start. */
static int run_producers(int kind, int path, etl_session *s, unsigned threads, uint64_t n, struct timing *t)
{
    struct worker w[MAX_THREADS];
    int64_t first = INT64_MAX, last = 0, cpu = 0;

    memset(w, 0, sizeof w);
    memset(t, 0, sizeof *t);
    atomic_store(&workers_ready, 0);
    atomic_store(&workers_go, 0);
    for (unsigned i = 0; i < threads; i++) {
        w[i].index = i;
        w[i].cpu = n_allowed_cpus >= threads ? allowed_cpus[i] : -1;
        w[i].kind = kind;
        w[i].path = path;
        w[i].session = s;
        w[i].n = n;
        if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0) {
            atomic_store(&workers_go, 1);
            for (unsigned j = 0; j < i; j++) pthread_join(w[j].thread, NULL);
            return -1;
        }
    }
    while (atomic_load(&workers_ready) < threads) sched_yield();
    atomic_store_explicit(&workers_go, 1, memory_order_release);
    t->pinned = 1;
    for (unsigned i = 0; i < threads; i++) {
        pthread_join(w[i].thread, NULL);
        if (w[i].start_ns < first) first = w[i].start_ns;
        if (w[i].end_ns > last) last = w[i].end_ns;
        cpu += w[i].cpu_ns;
        t->failed += w[i].failed;
        t->pinned &= w[i].pinned;
    }
    t->wall_s = (double)(last - first) * 1e-9;
    t->ns_per_event = (double)(last - first) / (double)n;
    t->cpu_share = (double)cpu / ((double)threads * (double)(last - first));
    return 0;
}

/* ------------------------------------------------------------------ LTTng-UST control */

#ifdef HAVE_LTTNG_UST
/*
 * One run with LTTng-UST: create a session (recording to disk, or in snapshot mode: in
 * memory, overwriting), enable the tracepoint, start, log, stop (which waits until the
 * consumer daemon has the data), count what was discarded and written, destroy.
 */
static int lttng_run(const struct config *cfg, struct lttng_ctl *l, int snapshot, unsigned threads, uint64_t n,
                     struct timing *t, uint64_t *discarded, uint64_t *bytes)
{
    int rc = -1;

    snprintf(l->dir, sizeof l->dir, "%s/sessionbench-lttng-XXXXXX", cfg->tmpdir);
    if (!mkdtemp(l->dir)) {
        snprintf(l->why, sizeof l->why, "cannot create a directory in %s", cfg->tmpdir);
        return -1;
    }
    if (lttng_cmd(l, "create '%s' %s--output='%s/trace'", l->session, snapshot ? "--snapshot " : "", l->dir) != 0) {
        snprintf(l->why, sizeof l->why, "lttng create failed (see %s)", l->log);
        goto out;
    }
    if (lttng_cmd(l, "enable-event --userspace --session='%s' 'libetl_bench:*'", l->session) != 0 ||
        lttng_cmd(l, "start '%s'", l->session) != 0) {
        snprintf(l->why, sizeof l->why, "lttng enable-event / start failed (see %s)", l->log);
        goto destroy;
    }
    /* The session daemon tells the process asynchronously. */
    if (lttng_wait_tracepoint(1) != 0) {
        snprintf(l->why, sizeof l->why, "the tracepoint was not enabled 10 s after lttng start: this process did "
                                        "not register with the session daemon");
        goto destroy;
    }
    if (run_producers(KIND_LTTNG, PATH_SESSION, NULL, threads, n, t) != 0) {
        snprintf(l->why, sizeof l->why, "cannot start the producer threads");
        goto destroy;
    }
    if (lttng_cmd(l, "stop '%s'", l->session) != 0) {
        snprintf(l->why, sizeof l->why, "lttng stop failed (see %s)", l->log);
        goto destroy;
    }
    if (lttng_discarded(l, l->session, discarded) != 0) {
        snprintf(l->why, sizeof l->why, "cannot read the discarded-events count (see %s)", l->log);
        goto destroy;
    }
    rc = 0;
destroy:
    if (lttng_cmd(l, "destroy '%s'", l->session) != 0 || lttng_wait_tracepoint(0) != 0) {
        snprintf(l->why, sizeof l->why, "lttng destroy failed (see %s)", l->log);
        rc = -1;
    }
out:
    *bytes = tree_size(l->dir);
    if (!cfg->keep) tree_remove(l->dir);
    return rc;
}
#endif /* HAVE_LTTNG_UST */

/* ------------------------------------------------------------------ cases */

enum pool { POOL_DEFAULT, POOL_WHOLE_RUN };

struct bench_case {
    const char *label;
    int kind;
    int path;                    /* libetl: enum write_path */
    unsigned threads;
    int pool;                    /* libetl: enum pool */
    int snapshot;                /* LTTng-UST: snapshot mode instead of recording to disk */
    uint64_t events;             /* per thread and run */
    int clock_type;              /* libetl: etl_session_properties.clock_type (0: default) */
    uint32_t engine_flags;       /* libetl: etl_session_properties.engine_flags (0: default) */
    uint32_t engine_used;        /* libetl: the engine flags in effect (etl_session_stats) */
    unsigned n;                  /* measured runs so far */
    double ns[MAX_RUNS];         /* wall time / events per thread */
    double cpu_ns[MAX_RUNS];     /* producers' CPU time / events */
    double mevps[MAX_RUNS];      /* all threads' events per wall second, millions */
    double cpu[MAX_RUNS];        /* producers' CPU share */
    double stop_ms[MAX_RUNS];    /* etl_session_stop (flush the rest, finalise) */
    uint64_t lost_total, events_total, kept_total, bytes_total;
    uint32_t max_buffers;        /* largest pool of a run */
    int measured;
    char note[4096];
};

static void record(struct bench_case *c, int warmup, const struct timing *t, uint64_t logged, uint64_t lost,
                   uint64_t kept, uint64_t bytes, double stop_ms)
{
    if (warmup) return;
    c->ns[c->n] = t->ns_per_event;
    c->cpu_ns[c->n] = t->ns_per_event * t->cpu_share;
    c->mevps[c->n] = (double)logged / t->wall_s * 1e-6;
    c->cpu[c->n] = t->cpu_share;
    c->stop_ms[c->n] = stop_ms;
    c->n++;
    c->events_total += logged;
    c->lost_total += lost;
    c->kept_total += kept;
    c->bytes_total += bytes;
}

static void temp_path(const struct config *cfg, char *out, size_t size, const char *what)
{
    snprintf(out, size, "%s/sessionbench-%s-%ld.etl", cfg->tmpdir, what, (long)getpid());
}


/*
 * A buffering-mode pool that holds every event of a run, so that the flush thread never has
 * to recycle a buffer: what the threads fill, plus each processor's current buffer, plus the
 * processors + 1 buffers the flush thread keeps free, plus one spare.
 */
/* The bytes an event of a write path takes in a buffer: a TraceLogging event carries its
   provider's traits and its metadata. */
static uint32_t path_record_space(int path)
{
    uint32_t items = ETL_MAX_RECORD_SIZE - ETL_EVENT_HEADER_SIZE - etl_tlg_event_max_payload(bench_tlg);

    return bench_record_space() + (path == PATH_TLG ? items : 0);
}

static uint32_t whole_run_buffers(uint64_t events, unsigned threads, int path)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    uint32_t ncpu = conf > 0 ? (uint32_t)conf : 1, per_buffer = (64 * 1024 - 0x48) / path_record_space(path);

    return threads * (uint32_t)((events + per_buffer - 1) / per_buffer) + 2 * ncpu + 2;
}

/* The TraceLogging events of path, every one decoded by etl_decoder from its own metadata:
   four fields of the names defined, whose values are the payload's four integers. */
static void tlg_decode_all(const char *path, struct readback *rb)
{
    etl_decoder_options o = { .flags = ETL_DECODER_NO_DEFAULTS };
    etl_decoder *d = NULL;
    etl_reader *r = NULL;
    etl_event ev;
    uint64_t n = 0;

    if (etl_reader_open_path(&r, path, NULL) != ETL_OK || etl_decoder_open(&d, &o) != ETL_OK) {
        snprintf(rb->why, sizeof rb->why, "decoding: cannot open the file or a decoder");
        goto out;
    }
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_decoded_event de;
        if (ev.kind != ETL_KIND_EVENT) continue;
        if (etl_decoder_decode(d, &ev, &de) != 1 || de.field_count != 4) {
            snprintf(rb->why, sizeof rb->why, "event %llu does not decode: %s", (unsigned long long)n,
                     etl_decoder_error(d));
            goto out;
        }
        for (unsigned i = 0; i < 4; i++) {
            uint64_t v, want;
            memcpy(&want, ev.payload + 8 * i, 8);
            if (strcmp(de.fields[i].name, bench_tlg_fields[i].name) != 0 || etl_field_uint(&de.fields[i], &v) != ETL_OK ||
                v != want) {
                snprintf(rb->why, sizeof rb->why, "event %llu: field %u is not %s=%llu", (unsigned long long)n, i,
                         bench_tlg_fields[i].name, (unsigned long long)want);
                goto out;
            }
        }
        n++;
    }
    if (n != rb->events)
        snprintf(rb->why, sizeof rb->why, "%llu events decoded of %llu", (unsigned long long)n,
                 (unsigned long long)rb->events);
out:
    rb->ok = !rb->why[0];
    etl_decoder_close(d);
    etl_reader_close(r);
}

/* One run of a libetl case: start a session, log, stop it, read what it wrote back. */
static int etl_run(const struct config *cfg, struct bench_case *c, int warmup)
{
    etl_session_properties p;
    etl_session_stats st;
    etl_session *s = NULL;
    struct timing t;
    struct readback rb;
    struct stat sb;
    char path[PATH_SIZE];
    uint64_t logged = (uint64_t)c->threads * c->events, bytes;
    int64_t t0;
    double stop_ms;

    memset(&p, 0, sizeof p);
    temp_path(cfg, path, sizeof path, c->kind == KIND_ETL_FILE ? "file" : "snapshot");
    if (c->kind == KIND_ETL_BUFFERING) p.log_file_mode = ETL_MODE_BUFFERING;
    else p.log_file_name = path; /* everything else default: sequential, 64 KB buffers */
    if (c->pool == POOL_WHOLE_RUN) p.minimum_buffers = whole_run_buffers(c->events, c->threads, c->path);
    p.clock_type = c->clock_type;
    p.engine_flags = c->engine_flags;
    if (etl_session_start(&s, &p) != ETL_OK) {
        snprintf(c->note, sizeof c->note, "etl_session_start: %s", etl_session_error(s));
        etl_session_close(s);
        return -1;
    }
    if (c->path != PATH_SESSION && etl_session_enable_provider(s, &bench_provider, 0, 0, 0) != ETL_OK) {
        snprintf(c->note, sizeof c->note, "etl_session_enable_provider: %s", etl_session_error(s));
        etl_session_close(s);
        return -1;
    }
    if (run_producers(c->kind, c->path, s, c->threads, c->events, &t) != 0) {
        snprintf(c->note, sizeof c->note, "cannot start the producer threads");
        etl_session_close(s);
        return -1;
    }
    if (c->kind == KIND_ETL_BUFFERING && etl_session_snapshot(s, path) != ETL_OK) {
        snprintf(c->note, sizeof c->note, "etl_session_snapshot: %s", etl_session_error(s));
        etl_session_close(s);
        unlink(path);
        return -1;
    }
    t0 = bench_now_ns();
    if (etl_session_stop(s, &st) != ETL_OK) {
        snprintf(c->note, sizeof c->note, "etl_session_stop: %s", etl_session_error(s));
        etl_session_close(s);
        unlink(path);
        return -1;
    }
    stop_ms = (double)(bench_now_ns() - t0) * 1e-6;
    etl_session_close(s);
    c->engine_used = st.engine_flags;
    if (st.number_of_buffers > c->max_buffers) c->max_buffers = st.number_of_buffers;
    bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    if (st.events_lost != t.failed) {
        snprintf(c->note, sizeof c->note, "EventsLost %llu, but %llu calls failed", (unsigned long long)st.events_lost,
                 (unsigned long long)t.failed);
        unlink(path);
        return -1;
    }
    bench_read_back(path, c->threads, NULL, &rb);
    if (rb.ok && c->path == PATH_TLG && !warmup) tlg_decode_all(path, &rb);
    if (!cfg->keep) unlink(path);
    if (!rb.ok) {
        snprintf(c->note, sizeof c->note, "reading %s back: %s", path, rb.why);
        return -1;
    }
    if (c->kind == KIND_ETL_FILE || c->pool == POOL_WHOLE_RUN) {
        /* Every event logged and not lost is there; a file's header says how many were lost. */
        if (rb.events != logged - st.events_lost ||
            (c->kind == KIND_ETL_FILE && rb.header_events_lost != st.events_lost)) {
            snprintf(c->note, sizeof c->note, "read back %llu events (header EventsLost %u), expected %llu - %llu",
                     (unsigned long long)rb.events, rb.header_events_lost, (unsigned long long)logged,
                     (unsigned long long)st.events_lost);
            return -1;
        }
    } else if (rb.events > logged - st.events_lost) {
        /* A snapshot of the default pool holds only the newest few buffers. */
        snprintf(c->note, sizeof c->note, "the snapshot holds %llu events, more than the %llu logged and not lost",
                 (unsigned long long)rb.events, (unsigned long long)(logged - st.events_lost));
        return -1;
    }
    record(c, warmup, &t, logged, st.events_lost, rb.events, bytes, stop_ms);
    return 0;
}

#ifdef HAVE_LTTNG_UST
static int lttng_case_run(const struct config *cfg, struct lttng_ctl *l, struct bench_case *c, int warmup)
{
    struct timing t;
    uint64_t discarded = 0, bytes = 0, logged = (uint64_t)c->threads * c->events;

    if (lttng_run(cfg, l, c->snapshot, c->threads, c->events, &t, &discarded, &bytes) != 0) {
        snprintf(c->note, sizeof c->note, "%s", l->why);
        return -1;
    }
    record(c, warmup, &t, logged, discarded, logged - discarded, bytes, 0);
    return 0;
}
#endif

/* ------------------------------------------------------------------ reference points */

static volatile uint64_t sink;

static uint64_t cycle_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_nsec;
#endif
}

/* Median ns per call of what the hot path is made of (and of a system call), 3 runs each. */
static void reference_points(void)
{
    enum { RUNS = 3 };
    static const struct { const char *name; int calls; } refs[] = {
        { "clock_gettime(CLOCK_MONOTONIC_RAW): ETL_ENGINE_EXACT_CLOCK", 2000000 },
        { "clock_gettime(CLOCK_MONOTONIC): LTTng-UST's clock", 2000000 },
        { "rdtsc: the ETL_CLOCK_CPUCYCLE session clock", 2000000 },
        { "sched_getcpu()", 2000000 },
        { "etl_record_encode_event, size only (dst NULL)", 2000000 },
        { "etl_record_encode_event of a 32-byte event into a buffer", 2000000 },
        { "a system call (getppid)", 20000 },
        { "CLOCK_MONOTONIC_RAW through the TSC line: the default clock", 2000000 },
    };
    uint64_t payload[4] = { 1, 2, 3, 4 };
    etl_data data = { payload, BENCH_PAYLOAD_SIZE };
    _Alignas(8) uint8_t rec[256];

    etl_monoclock_init();
    printf("\nreference points (ns per call, median of %d runs, pinned to one processor):\n", RUNS);
    bench_pin_self(n_allowed_cpus ? allowed_cpus[0] : -1);
    for (unsigned k = 0; k < sizeof refs / sizeof refs[0]; k++) {
        double v[RUNS];
        for (int r = 0; r < RUNS; r++) {
            etl_monoclock_init(); /* no session runs: fit the line now, or its readings are the kernel's */
            int64_t t0 = bench_now_ns();
            uint64_t acc = 0;
            struct timespec ts;
            for (int i = 0; i < refs[k].calls; i++) {
                switch (k) {
                case 0: clock_gettime(CLOCK_MONOTONIC_RAW, &ts); acc += (uint64_t)ts.tv_nsec; break;
                case 1: clock_gettime(CLOCK_MONOTONIC, &ts); acc += (uint64_t)ts.tv_nsec; break;
                case 2: acc += cycle_counter(); break;
                case 3: acc += (uint64_t)sched_getcpu(); break;
                case 4:
                    acc += etl_record_encode_event(NULL, 0, 0, 0, 0, &bench_provider, &bench_descriptor, NULL,
                                                   &data, 1);
                    break;
                case 5:
                    payload[0] = (uint64_t)i;
                    acc += etl_record_encode_event(rec, sizeof rec, i, 1, 2, &bench_provider, &bench_descriptor,
                                                   NULL, &data, 1);
                    break;
                case 6: acc += (uint64_t)syscall(SYS_getppid); break;
                default: acc += (uint64_t)etl_monoclock_now(); break; /* fitted just before */
                }
            }
            sink = acc;
            v[r] = (double)(bench_now_ns() - t0) / refs[k].calls;
        }
        printf("  %-62s %7.1f\n", refs[k].name, stats_of(v, RUNS).med);
    }
    unpin_self();
}

/* ------------------------------------------------------------------ no-loss check */

struct paced {
    uint64_t logged, failed, lost, read, buffers, max_buffers;
    double seconds, achieved, max_lag_us, file_mb;
    int ok;
    char why[MSG_SIZE];
};

/*
 * One producer, pinned, logs cfg->rate events per second for cfg->pace_s seconds into a
 * sequential file session with default buffer settings: batches of 100 events, each batch
 * started when its deadline comes (spinning on the clock until then).
 */
static void paced_check(const struct config *cfg, struct paced *r)
{
    enum { BATCH = 100 };
    etl_session_properties p;
    etl_session_stats st;
    etl_session *s = NULL;
    struct readback rb;
    struct stat sb;
    char path[PATH_SIZE];
    uint64_t payload[4] = { 0, 0, 0x5eb1c0de5eb1c0deULL, 0x0123456789abcdefULL };
    etl_data data = { payload, BENCH_PAYLOAD_SIZE };
    uint64_t total = (uint64_t)(cfg->rate * cfg->pace_s), i = 0;
    int64_t t0, max_lag = 0;

    memset(r, 0, sizeof *r);
    memset(&p, 0, sizeof p);
    temp_path(cfg, path, sizeof path, "paced");
    p.log_file_name = path;
    if (etl_session_start(&s, &p) != ETL_OK) {
        snprintf(r->why, sizeof r->why, "etl_session_start: %s", etl_session_error(s));
        etl_session_close(s);
        return;
    }
    bench_pin_self(n_allowed_cpus ? allowed_cpus[0] : -1);
    t0 = bench_now_ns();
    while (i < total) {
        int64_t due = t0 + (int64_t)((double)i * 1e9 / (double)cfg->rate), now;
        while ((now = bench_now_ns()) < due) {
        }
        if (now - due > max_lag) max_lag = now - due;
        for (unsigned k = 0; k < BATCH && i < total; k++, i++) {
            payload[0] = i;
            if (etl_session_write_event(s, &bench_provider, &bench_descriptor, NULL, &data, 1) != ETL_OK) r->failed++;
        }
        if ((i & 0xFFFF) < BATCH) {
            etl_session_stats q;
            etl_session_stats_get(s, &q);
            if (q.number_of_buffers > r->max_buffers) r->max_buffers = q.number_of_buffers;
        }
    }
    r->seconds = (double)(bench_now_ns() - t0) * 1e-9;
    unpin_self();
    r->logged = total;
    r->achieved = (double)total / r->seconds;
    r->max_lag_us = (double)max_lag * 1e-3;
    if (etl_session_stop(s, &st) != ETL_OK) {
        snprintf(r->why, sizeof r->why, "etl_session_stop: %s", etl_session_error(s));
        etl_session_close(s);
        unlink(path);
        return;
    }
    etl_session_close(s);
    r->lost = st.events_lost;
    r->buffers = st.number_of_buffers;
    if (st.number_of_buffers > r->max_buffers) r->max_buffers = st.number_of_buffers;
    r->file_mb = stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
    bench_read_back(path, 1, NULL, &rb);
    if (!cfg->keep) unlink(path);
    r->read = rb.events;
    if (!rb.ok) {
        snprintf(r->why, sizeof r->why, "reading back: %s", rb.why);
        return;
    }
    if (rb.events != total - st.events_lost || st.events_lost != r->failed) {
        snprintf(r->why, sizeof r->why, "read back %llu events, expected %llu - %llu",
                 (unsigned long long)rb.events, (unsigned long long)total, (unsigned long long)st.events_lost);
        return;
    }
    r->ok = 1;
}

/* ------------------------------------------------------------------ options, machine */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: sessionbench [options]\n"
            "  --runs N         measured rounds after one warm-up round (default 5, at most %d)\n"
            "  --events N       events per thread and run, in millions (default 5)\n"
            "  --pool-events N  the same where the pool holds the whole run (default 2; at most --events)\n"
            "  --rate N         no-loss check: events per second (default %d)\n"
            "  --seconds S      no-loss check: how long (default 5)\n"
            "  --no-lttng       do not measure LTTng-UST\n"
            "  --keep           keep the ETL files and the LTTng trace in $TMPDIR (default /tmp)\n"
            "  --quick          few, short runs: a smoke test\n"
            "  -h, --help       show this help\n",
            MAX_RUNS, GOAL_RATE);
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
    const char *dir = getenv("TMPDIR");

    memset(cfg, 0, sizeof *cfg);
    cfg->runs = 5;
    cfg->events = 5000000;
    cfg->pool_events = 2000000;
    cfg->rate = GOAL_RATE;
    cfg->pace_s = 5;
    cfg->lttng = 1;
    if (dir && (strlen(dir) >= sizeof cfg->tmpdir - 64 || strchr(dir, '\''))) {
        fprintf(stderr, "sessionbench: $TMPDIR is too long or holds a quote\n");
        return -1;
    }
    snprintf(cfg->tmpdir, sizeof cfg->tmpdir, "%s", dir && *dir ? dir : "/tmp");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--runs") == 0 && value) {
            cfg->runs = (unsigned)strtoul(value, NULL, 10);
            i++;
        } else if (strcmp(a, "--events") == 0 && value) {
            cfg->events = (uint64_t)(strtod(value, NULL) * 1e6);
            i++;
        } else if (strcmp(a, "--pool-events") == 0 && value) {
            cfg->pool_events = (uint64_t)(strtod(value, NULL) * 1e6);
            i++;
        } else if (strcmp(a, "--rate") == 0 && value) {
            cfg->rate = strtoull(value, NULL, 10);
            i++;
        } else if (strcmp(a, "--seconds") == 0 && value) {
            cfg->pace_s = strtod(value, NULL);
            i++;
        } else if (strcmp(a, "--no-lttng") == 0) {
            cfg->lttng = 0;
        } else if (strcmp(a, "--keep") == 0) {
            cfg->keep = 1;
        } else if (strcmp(a, "--quick") == 0) {
            cfg->quick = 1;
            cfg->runs = 3;
            cfg->events = 500000;
            cfg->pace_s = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "sessionbench: unknown option or missing value: %s\n", a);
            return -1;
        }
    }
    if (cfg->runs < 1 || cfg->runs > MAX_RUNS || cfg->events < 1000 || cfg->pool_events < 1000 || cfg->rate < 1 ||
        cfg->pace_s <= 0) {
        fprintf(stderr, "sessionbench: --runs must be 1 to %d, --events and --pool-events at least 0.001, --rate and "
                        "--seconds positive\n", MAX_RUNS);
        return -1;
    }
    if (cfg->pool_events > cfg->events) cfg->pool_events = cfg->events;
    return 0;
}

/* ------------------------------------------------------------------ report */

static void print_case(const struct bench_case *c)
{
    struct stats ns = stats_of(c->ns, c->n), mevps = stats_of(c->mevps, c->n), cpu_ns = stats_of(c->cpu_ns, c->n);

    if (!c->measured) {
        printf("  %-56s not measured: %s\n", c->label, c->note);
        return;
    }
    printf("  %-56s %6.1f [%5.1f-%5.1f]  %6.1f  %6.2f [%5.2f-%5.2f]  %6.2f%%", c->label, ns.med, ns.min, ns.max,
           cpu_ns.med, mevps.med, mevps.min, mevps.max,
           c->events_total ? 100.0 * (double)c->lost_total / (double)c->events_total : 0.0);
    if (c->kind == KIND_LTTNG) {
        if (!c->snapshot && c->kept_total)
            printf("  %.1f B/event on disk", (double)c->bytes_total / (double)c->kept_total);
    } else if (c->kind == KIND_ETL_FILE) {
        printf("  %.1f B/event on disk; pool up to %u buffers; stop %.0f ms", (double)c->bytes_total /
               (double)(c->kept_total ? c->kept_total : 1), c->max_buffers, stats_of(c->stop_ms, c->n).med);
    } else {
        printf("  pool %u buffers; snapshot kept %.1f%% of the events", c->max_buffers,
               100.0 * (double)c->kept_total / (double)c->events_total);
    }
    if (c->kind != KIND_LTTNG)
        printf("; %s, %s", c->engine_used & ETL_ENGINE_ATOMIC_RESERVE ? "compare-and-swap" : "rseq",
               c->clock_type ? etl_clock_type_name(c->clock_type)
                             : c->engine_used & ETL_ENGINE_EXACT_CLOCK ? "clock_gettime" : "TSC line");
    printf("\n");
}

int main(int argc, char **argv)
{
    enum { BUF1, BUF2, RUN1, RUN2, FILE1, FILE2, PROV1, PROV2, TLG1, TLG2, CAS1, CAS2, CYC1, CYC2, DISK1, DISK2, SNAP1,
           SNAP2, NCASES };
    struct config cfg;
    struct bench_case cases[NCASES] = {
        [BUF1] = { .label = "libetl buffering, default pool, 1 thread", .kind = KIND_ETL_BUFFERING, .threads = 1 },
        [BUF2] = { .label = "libetl buffering, default pool, 2 threads", .kind = KIND_ETL_BUFFERING, .threads = 2 },
        [RUN1] = { .label = "libetl buffering, pool holds run, 1 thread", .kind = KIND_ETL_BUFFERING, .threads = 1,
                   .pool = POOL_WHOLE_RUN },
        [RUN2] = { .label = "libetl buffering, pool holds run, 2 threads", .kind = KIND_ETL_BUFFERING, .threads = 2,
                   .pool = POOL_WHOLE_RUN },
        [FILE1] = { .label = "libetl sequential file, default, 1 thread", .kind = KIND_ETL_FILE, .threads = 1 },
        [FILE2] = { .label = "libetl sequential file, default, 2 threads", .kind = KIND_ETL_FILE, .threads = 2 },
        /* The same event through the provider API, and a TraceLogging event of the same payload
           (its provider's traits and its metadata in every record): the TraceLogging goal. */
        [PROV1] = { .label = "libetl provider API, plain event, pool holds run, 1 thread", .kind = KIND_ETL_BUFFERING,
                    .path = PATH_PROVIDER, .threads = 1, .pool = POOL_WHOLE_RUN },
        [PROV2] = { .label = "libetl provider API, plain event, pool holds run, 2 threads", .kind = KIND_ETL_BUFFERING,
                    .path = PATH_PROVIDER, .threads = 2, .pool = POOL_WHOLE_RUN },
        [TLG1] = { .label = "libetl provider API, TraceLogging event, pool holds run, 1 thread",
                   .kind = KIND_ETL_BUFFERING, .path = PATH_TLG, .threads = 1, .pool = POOL_WHOLE_RUN },
        [TLG2] = { .label = "libetl provider API, TraceLogging event, pool holds run, 2 threads",
                   .kind = KIND_ETL_BUFFERING, .path = PATH_TLG, .threads = 2, .pool = POOL_WHOLE_RUN },
        /* Not goals, for comparison: the engine without sequences nor the TSC line (what
           ETL_ENGINE_ATOMIC_RESERVE | ETL_ENGINE_EXACT_CLOCK asks for), and the cycle clock. */
        [CAS1] = { .label = "libetl hot path, compare-and-swap, kernel clock, 1 thread", .kind = KIND_ETL_BUFFERING,
                   .threads = 1, .pool = POOL_WHOLE_RUN,
                   .engine_flags = ETL_ENGINE_ATOMIC_RESERVE | ETL_ENGINE_EXACT_CLOCK },
        [CAS2] = { .label = "libetl hot path, compare-and-swap, kernel clock, 2 threads", .kind = KIND_ETL_BUFFERING,
                   .threads = 2, .pool = POOL_WHOLE_RUN,
                   .engine_flags = ETL_ENGINE_ATOMIC_RESERVE | ETL_ENGINE_EXACT_CLOCK },
        [CYC1] = { .label = "libetl buffering, pool holds run, cycle clock, 1 thread", .kind = KIND_ETL_BUFFERING,
                   .threads = 1, .pool = POOL_WHOLE_RUN, .clock_type = ETL_CLOCK_CPUCYCLE },
        [CYC2] = { .label = "libetl buffering, pool holds run, cycle clock, 2 threads", .kind = KIND_ETL_BUFFERING,
                   .threads = 2, .pool = POOL_WHOLE_RUN, .clock_type = ETL_CLOCK_CPUCYCLE },
        [DISK1] = { .label = "LTTng-UST recording to disk, 1 thread", .kind = KIND_LTTNG, .threads = 1 },
        [DISK2] = { .label = "LTTng-UST recording to disk, 2 threads", .kind = KIND_LTTNG, .threads = 2 },
        [SNAP1] = { .label = "LTTng-UST snapshot mode, 1 thread", .kind = KIND_LTTNG, .threads = 1, .snapshot = 1 },
        [SNAP2] = { .label = "LTTng-UST snapshot mode, 2 threads", .kind = KIND_LTTNG, .threads = 2, .snapshot = 1 },
    };
    /* LTTng-UST against libetl: the pairs whose ratio is reported, per round and of the medians. */
    static const struct { int lttng, etl; const char *what; } pairs[] = {
        { DISK1, RUN1, "to disk / libetl hot path (pool holds the run), 1 thread" },
        { DISK2, RUN2, "to disk / libetl hot path (pool holds the run), 2 threads" },
        { DISK1, FILE1, "to disk / libetl sequential file, both default, 1 thread" },
        { DISK2, FILE2, "to disk / libetl sequential file, both default, 2 threads" },
        { SNAP1, RUN1, "snapshot mode / libetl hot path (pool holds the run), 1 thread" },
        { SNAP2, RUN2, "snapshot mode / libetl hot path (pool holds the run), 2 threads" },
        { DISK1, CYC1, "to disk / libetl hot path, cycle clock, 1 thread" },
        { DISK2, CYC2, "to disk / libetl hot path, cycle clock, 2 threads" },
    };
    enum { NPAIRS = sizeof pairs / sizeof pairs[0] };
    double ratio[NPAIRS][MAX_RUNS];
    unsigned nratio[NPAIRS];
    /* The TraceLogging event against the plain one (goal: at most GOAL_TLG_RATIO), and what
       LTTng-UST takes for the same payload against the TraceLogging event (not a goal). */
    static const struct { int slow, fast, goal; const char *what; } tpairs[] = {
        { TLG1, RUN1, 1, "TraceLogging event / plain event (etl_session_write_event), 1 thread" },
        { TLG2, RUN2, 1, "TraceLogging event / plain event (etl_session_write_event), 2 threads" },
        { TLG1, PROV1, 1, "TraceLogging event / plain event, both through the provider API, 1 thread" },
        { TLG2, PROV2, 1, "TraceLogging event / plain event, both through the provider API, 2 threads" },
        { PROV1, RUN1, 0, "plain event through the provider API / etl_session_write_event, 1 thread" },
        { PROV2, RUN2, 0, "plain event through the provider API / etl_session_write_event, 2 threads" },
        { DISK1, TLG1, 0, "LTTng-UST to disk / TraceLogging event, 1 thread" },
        { DISK2, TLG2, 0, "LTTng-UST to disk / TraceLogging event, 2 threads" },
        { SNAP1, TLG1, 0, "LTTng-UST snapshot mode / TraceLogging event, 1 thread" },
        { SNAP2, TLG2, 0, "LTTng-UST snapshot mode / TraceLogging event, 2 threads" },
    };
    enum { NTPAIRS = sizeof tpairs / sizeof tpairs[0] };
    double tratio[NTPAIRS][MAX_RUNS];
    unsigned ntratio[NTPAIRS];
    char err[256], rundir[PATH_SIZE];
    struct lttng_ctl lt;
    struct paced paced;
    int status = 0, lttng_ok = 0;
    unsigned met = 0, goals = 0;
    int64_t t_start = bench_now_ns();

    if (parse_args(argc, argv, &cfg) != 0) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    find_cpus();
    memset(&lt, 0, sizeof lt);
    memset(nratio, 0, sizeof nratio);
    memset(ntratio, 0, sizeof ntratio);
    /* The provider registers in a runtime directory of its own: the shared sessions of other
       processes of the user (another benchmark, a test) are not this one's to write into. */
    snprintf(rundir, sizeof rundir, "%s/sessionbench-run-XXXXXX", cfg.tmpdir);
    if (!mkdtemp(rundir) || setenv("ETL_RUNTIME_DIR", rundir, 1) != 0) {
        fprintf(stderr, "sessionbench: cannot make a runtime directory in %s\n", cfg.tmpdir);
        return 2;
    }
    if (etl_provider_register_named(&bench_prov, "libetl-bench", &bench_provider, NULL) != ETL_OK ||
        etl_tlg_event_define(&bench_tlg, bench_prov, "Event32", &bench_descriptor, bench_tlg_fields, 4, err,
                             sizeof err) != ETL_OK) {
        fprintf(stderr, "sessionbench: the benchmark's provider or TraceLogging event: %s\n",
                bench_prov ? err : "out of memory");
        return 2;
    }
    printf("sessionbench: etl_session_write_event with one %d-byte etl_data (a %u-byte EVENT_HEADER record); the same "
           "through etl_provider_write, and etl_tlg_event_write of a TraceLogging event with the same payload as four "
           "UInt64 fields (a %u-byte record with its traits and metadata)\n",
           BENCH_PAYLOAD_SIZE, bench_record_space(), path_record_space(PATH_TLG));
    bench_print_machine();
#ifndef __OPTIMIZE__
    printf("WARNING: sessionbench was built without optimisation; its figures mean little\n");
#endif
    printf("%llu events per thread and run (%llu where the pool holds the run); 1 warm-up round, then %u rounds that "
           "each run every case once, in turn; threads pinned to processors",
           (unsigned long long)cfg.events, (unsigned long long)cfg.pool_events, cfg.runs);
    for (unsigned i = 0; i < n_allowed_cpus; i++) printf(i ? ",%d" : " %d", allowed_cpus[i]);
    printf("; files in %s\n", cfg.tmpdir);
    printf("libetl pools: default = 2 buffers per processor of 64 KB (buffering: fixed; file: may grow by 64 MB, "
           "1024 buffers); "
           "\"pool holds the run\" = %u (1 thread) / %u (2 threads) buffers\n",
           whole_run_buffers(cfg.pool_events, 1, PATH_SESSION), whole_run_buffers(cfg.pool_events, 2, PATH_SESSION));

#ifdef HAVE_LTTNG_UST
    if (!cfg.lttng) {
        snprintf(lt.why, sizeof lt.why, "--no-lttng");
    } else if (lttng_setup(&lt, cfg.tmpdir, "sessionbench") == 0) {
        lttng_ok = 1;
        printf("LTTng-UST %s: tracepoint libetl_bench:event32 (four 64-bit integers), a fresh session per run with "
               "the default channel (per-user buffers, 4 x 512 KiB per processor; to disk: discard mode; snapshot "
               "mode: overwrite, nothing written)\n",
               LTTNG_UST_VERSION);
    }
#else
    snprintf(lt.why, sizeof lt.why, "this build has no LTTng-UST (configure found no lttng-ust >= 2.13, or was given --without-lttng-ust)");
#endif
    if (!lttng_ok) printf("LTTng-UST NOT MEASURED: %s\n", lt.why);
    for (unsigned i = 0; i < NCASES; i++) {
        cases[i].events = cases[i].pool == POOL_WHOLE_RUN ? cfg.pool_events : cfg.events;
        cases[i].measured = cases[i].kind != KIND_LTTNG || lttng_ok;
        if (!cases[i].measured) snprintf(cases[i].note, sizeof cases[i].note, "%s", lt.why);
    }

    for (unsigned round = 0; round <= cfg.runs; round++) {
        int warmup = round == 0;
        if (warmup) printf("warm-up round...");
        else printf(" round %u...", round);
        for (unsigned i = 0; i < NCASES; i++) {
            struct bench_case *c = &cases[i];
            int rc = 0;
            if (!c->measured) continue;
            if (c->kind == KIND_LTTNG) {
#ifdef HAVE_LTTNG_UST
                rc = lttng_case_run(&cfg, &lt, c, warmup);
#endif
            } else {
                rc = etl_run(&cfg, c, warmup);
            }
            if (rc != 0) {
                printf("\n%s: FAILED: %s\n", c->label, c->note);
                c->measured = 0;
                if (c->kind != KIND_LTTNG) status = 1;
            }
        }
        for (unsigned k = 0; k < NPAIRS && !warmup; k++) {
            const struct bench_case *l = &cases[pairs[k].lttng], *e = &cases[pairs[k].etl];
            if (l->measured && e->measured) ratio[k][nratio[k]++] = l->ns[l->n - 1] / e->ns[e->n - 1];
        }
        for (unsigned k = 0; k < NTPAIRS && !warmup; k++) {
            const struct bench_case *a = &cases[tpairs[k].slow], *b = &cases[tpairs[k].fast];
            if (a->measured && b->measured) tratio[k][ntratio[k]++] = a->ns[a->n - 1] / b->ns[b->n - 1];
        }
    }
    printf("\n");

    printf("\nns per event and thread = wall time / events per thread: median [min-max] of %u runs; cpu ns = the "
           "producers' CPU time / events; M/s = all threads' events per wall second; lost = events lost "
           "(libetl: EventsLost; LTTng-UST: discarded)\n",
           cfg.runs);
    printf("  %-56s %-20s  %6s  %-20s  %7s\n", "case", "ns/event [min-max]", "cpu ns", "M events/s [min-max]",
           "lost");
    for (unsigned i = 0; i < NCASES; i++) print_case(&cases[i]);
    if (atomic_load(&pin_failed)) printf("WARNING: a producer thread could not be pinned to its processor\n");
    printf("every libetl run was read back with etl_reader, each thread's events in order: a file, and a snapshot "
           "of a pool that holds the run, hold exactly the events logged minus EventsLost; every TraceLogging event of "
           "the measured rounds decoded by etl_decoder from its own metadata, its four fields the payload's\n");

    reference_points();

    printf("\nno-loss check: sequential file, default buffer settings, 1 producer paced at %llu events/s for %g s\n",
           (unsigned long long)cfg.rate, cfg.pace_s);
    paced_check(&cfg, &paced);
    if (paced.why[0]) {
        printf("  FAILED: %s\n", paced.why);
        status = 1;
    }
    printf("  logged %llu events in %.2f s (%.0f events/s; at most %.0f us behind schedule); EventsLost %llu; "
           "read back %llu; file %.0f MB; pool grew to %llu buffers\n",
           (unsigned long long)paced.logged, paced.seconds, paced.achieved, paced.max_lag_us,
           (unsigned long long)paced.lost, (unsigned long long)paced.read, paced.file_mb,
           (unsigned long long)paced.max_buffers);

    printf("\ngoals (medians of ns per event and thread):\n");
    for (unsigned i = BUF1; i <= FILE2; i++) {
        const struct bench_case *c = &cases[i];
        struct stats ns = stats_of(c->ns, c->n);
        int ok;
        if (!c->measured) continue;
        ok = ns.med <= GOAL_NS;
        goals++;
        met += (unsigned)ok;
        printf("  %-56s %6.1f ns   <= %.0f ns: %-7s (%.2fx the goal)%s\n", c->label, ns.med, GOAL_NS,
               ok ? "met" : "NOT met", ns.med / GOAL_NS,
               c->lost_total ? "  (with events lost: see above)" : "");
    }
    if (lttng_ok) {
        for (unsigned k = 0; k < NPAIRS; k++) {
            const struct bench_case *l = &cases[pairs[k].lttng], *e = &cases[pairs[k].etl];
            struct stats pr = stats_of(ratio[k], nratio[k]);
            double r;
            int ok;
            if (!l->measured || !e->measured) continue;
            r = stats_of(l->ns, l->n).med / stats_of(e->ns, e->n).med;
            ok = r >= GOAL_LTTNG_RATIO;
            goals++;
            met += (unsigned)ok;
            printf("  LTTng-UST %-64s %5.2fx (per round %.2f [%.2f-%.2f])   >= %.0fx: %s\n", pairs[k].what, r, pr.med,
                   pr.min, pr.max, GOAL_LTTNG_RATIO, ok ? "met" : "NOT met");
        }
    } else {
        printf("  LTTng-UST comparison: NOT MEASURED (%s)\n", lt.why);
    }
    for (unsigned k = 0; k < NTPAIRS; k++) {
        const struct bench_case *a = &cases[tpairs[k].slow], *b = &cases[tpairs[k].fast];
        struct stats pr = stats_of(tratio[k], ntratio[k]);
        double r;
        int ok;
        if (!a->measured || !b->measured) continue;
        r = stats_of(a->ns, a->n).med / stats_of(b->ns, b->n).med;
        if (!tpairs[k].goal) {
            printf("  (not a goal) %-73s %5.2fx (per round %.2f [%.2f-%.2f])\n", tpairs[k].what, r, pr.med, pr.min,
                   pr.max);
            continue;
        }
        ok = r <= GOAL_TLG_RATIO;
        goals++;
        met += (unsigned)ok;
        printf("  %-77s %5.2fx (per round %.2f [%.2f-%.2f]; cpu ns %.2fx)   <= %.1fx: %s\n", tpairs[k].what, r, pr.med,
               pr.min, pr.max, stats_of(a->cpu_ns, a->n).med / stats_of(b->cpu_ns, b->n).med, GOAL_TLG_RATIO,
               ok ? "met" : "NOT met");
    }
    if (!paced.why[0]) {
        int ok = paced.lost == 0 && paced.achieved >= 0.99 * (double)cfg.rate;
        goals++;
        met += (unsigned)ok;
        printf("  no loss at %llu events/s, sequential file, default buffers: %llu lost: %s\n",
               (unsigned long long)cfg.rate, (unsigned long long)paced.lost, ok ? "met" : "NOT met");
    }
    printf("%u of %u goals met%s; %.0f s in all\n", met, goals,
           cfg.quick ? " (--quick: a smoke test, not a measurement)" : "", (double)(bench_now_ns() - t_start) * 1e-9);

#ifdef HAVE_LTTNG_UST
    {
        int failed = 0;
        for (unsigned i = 0; i < NCASES; i++) failed |= cases[i].kind == KIND_LTTNG && !cases[i].measured;
        lttng_teardown(&lt, cfg.keep || failed);
    }
#endif
    etl_provider_unregister(bench_prov);
    rmdir(rundir); /* empty: no session of this benchmark is shared */
    return status;
}
