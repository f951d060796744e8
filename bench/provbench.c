/* SPDX-License-Identifier: MIT */
/*
 * Providers in several processes writing into one session (issue 7): libetl's shared session,
 * written through the provider API, against LTTng-UST with per-user buffers of the same sizes,
 * in the same run; events/s, ns/event, loss, and whether the loss counters are exact. Also in
 * real time: the session's buffers to a consumer in the controller (etl_reader_open_stream)
 * against an LTTng live session read by babeltrace2 through a relay daemon.
 */
/* pthread_setaffinity_np, CPU_SET, pipe2: Linux interfaces the benchmark uses. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"
#ifdef HAVE_LTTNG_UST
#include "lttng_tp.h"
#endif
#include "benchevent.h"
#include "benchstat.h"
#include "lttngctl.h"

#define MAX_RUNS 25
#define MAX_PROCS 8
#define MAX_THREADS 8 /* per process */
#define MAX_WRITERS (MAX_PROCS * MAX_THREADS) /* at most BENCH_MAX_WRITERS */
#define GOAL_RATIO 3.0          /* libetl's events/s over LTTng-UST's */
#define ENABLE_TIMEOUT_S 10     /* a writer waits this long for its provider or tracepoint to be enabled */
#define READY_TIMEOUT_S 20      /* the controller waits this long for every writer process to be ready */
#define LIVE_TIMER_US 1000000   /* LTTng live: the live timer, as libetl's real-time flush timer (1 s) */
#define LIVE_END_TIMEOUT_S 60   /* babeltrace2 must end this long after its live session was destroyed */
#define PATH_SIZE 1280
#define MSG_SIZE 2048

enum kind { KIND_ETL, KIND_LTTNG };

struct config {
    unsigned processes, threads, runs;
    uint64_t events;     /* per writer thread and run */
    unsigned buffer_kb;  /* both: the ETL buffer size and LTTng's sub-buffer size */
    unsigned buffers;    /* per processor: ETL pool = buffers x processors; LTTng --num-subbuf */
    unsigned peak_buffers; /* paced runs, per processor: ETL MaximumBuffers = this x processors (the
                            pool starts at buffers x processors and grows under pressure); LTTng
                            --num-subbuf (preallocated) */
    uint64_t rate;       /* paced runs: events/s of all writers together; 0: from the disk's bandwidth */
    double pace_s;       /* paced runs: seconds */
    unsigned disk_mb;    /* the disk bandwidth measurement writes this much */
    int lttng, in_process, keep, quick;
    int direct_io;       /* libetl: ETL_ENGINE_DIRECT_IO (the file past the page cache) */
    char tmpdir[1024];
    char self[PATH_SIZE]; /* this program, which the writer processes run */
};

/* ------------------------------------------------------------------ the writer processes */

/* What one writer process (or, with --in-process, one group of threads of the controller) does. */
struct group {
    int kind;
    unsigned proc;       /* its index */
    unsigned threads;
    uint64_t events;     /* per thread */
    uint64_t rate;       /* per thread, events/s; 0: as fast as it can */
    int result_fd;       /* lines to the controller: ready, error, writer, done */
    int go_fd;           /* read end of the start barrier: EOF = go */
};

struct writer {
    pthread_t thread;
    const struct group *g;
    etl_provider *provider;
    unsigned index;      /* among all writers: proc * threads + thread */
    int cpu;
    uint64_t failed;     /* calls that returned an error (ETL: events lost) */
    int64_t start_ns, end_ns, cpu_ns, max_lag_ns;
    long tid;
    int pinned;
    _Atomic unsigned *ready; /* the group's threads that are ready */
};

/* The i-th processor this process may run on (cyclically), or -1. */
static int nth_cpu(unsigned i)
{
    cpu_set_t set;
    unsigned n = 0;
    int cpus[CPU_SETSIZE];

    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n ? cpus[i % n] : -1;
}

static inline void write_one(struct writer *w, const uint64_t *payload, const etl_data *data)
{
    if (w->g->kind == KIND_ETL) {
        if (etl_provider_write(w->provider, &bench_descriptor, data, 1, 0) != ETL_OK) w->failed++;
    } else {
#ifdef HAVE_LTTNG_UST
        lttng_ust_tracepoint(libetl_bench, event32, payload);
#endif
    }
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    const struct group *g = w->g;
    uint64_t payload[4] = { 0, w->index, 0x5eb1c0de5eb1c0deULL, 0x0123456789abcdefULL };
    etl_data data = { payload, BENCH_PAYLOAD_SIZE };
    int64_t cpu0;
    char c;

    w->tid = (long)syscall(SYS_gettid);
    w->pinned = bench_pin_self(w->cpu);
    atomic_fetch_add(w->ready, 1);
    /* The start barrier: every thread of every writer process reads the pipe the controller
       closes to start them. */
    while (read(g->go_fd, &c, 1) < 0 && errno == EINTR) {
    }
    cpu0 = bench_thread_cpu_ns();
    w->start_ns = bench_now_ns();
    if (!g->rate) {
        for (uint64_t i = 0; i < g->events; i++) {
            payload[0] = i;
            write_one(w, payload, &data);
        }
    } else {
        /* Paced: batches of about a millisecond, each started at its time (sleeping until then). */
        uint64_t batch = g->rate / 1000 ? g->rate / 1000 : 1, i = 0;
        while (i < g->events) {
            int64_t due = w->start_ns + (int64_t)((double)i * 1e9 / (double)g->rate), now = bench_now_ns();
            if (now < due) {
                struct timespec ts = { (time_t)(due / 1000000000), (long)(due % 1000000000) };
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
                }
            } else if (now - due > w->max_lag_ns) {
                w->max_lag_ns = now - due;
            }
            for (uint64_t k = 0; k < batch && i < g->events; k++, i++) {
                payload[0] = i;
                write_one(w, payload, &data);
            }
        }
    }
    w->end_ns = bench_now_ns();
    w->cpu_ns = bench_thread_cpu_ns() - cpu0;
    return NULL;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(int fd, const char *fmt, ...)
{
    char line[MSG_SIZE];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
    for (int off = 0; off < n;) {
        ssize_t k = write(fd, line + off, (size_t)(n - off));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        off += (int)k;
    }
}

/*
 * One writer process: register (ETL: the provider; LTTng-UST: the tracepoint registers at
 * load), wait until a session enables it, start the threads, say "ready", wait for the start
 * barrier, write, report each thread's counts and times. 0, or 1 after an "error" line.
 */
static int run_group(const struct group *g)
{
    struct writer w[MAX_THREADS];
    etl_provider *prov = NULL;
    _Atomic unsigned ready = 0;
    unsigned started = 0;
    int64_t deadline = bench_now_ns() + (int64_t)ENABLE_TIMEOUT_S * 1000000000;

    memset(w, 0, sizeof w);
    if (g->kind == KIND_ETL) {
        if (etl_provider_register(&prov, &bench_provider) != ETL_OK) {
            say(g->result_fd, "error etl_provider_register failed (out of memory)\n");
            return 1;
        }
        /* The clock starts only once the provider writes somewhere. */
        while (etl_provider_enabled(prov, bench_descriptor.level, bench_descriptor.keywords) != 1) {
            if (bench_now_ns() > deadline) {
                say(g->result_fd, "error process %ld: the provider was not enabled %d s after it registered: it did "
                                  "not attach to the shared session\n", (long)getpid(), ENABLE_TIMEOUT_S);
                etl_provider_unregister(prov);
                return 1;
            }
            usleep(1000);
        }
    } else {
#ifdef HAVE_LTTNG_UST
        if (lttng_wait_tracepoint(1) != 0) {
            say(g->result_fd, "error process %ld: the tracepoint was not enabled %d s after lttng start: the process "
                              "did not register with the session daemon\n", (long)getpid(), ENABLE_TIMEOUT_S);
            return 1;
        }
#endif
    }
    for (; started < g->threads; started++) {
        struct writer *x = &w[started];
        x->g = g;
        x->provider = prov;
        x->ready = &ready;
        x->index = g->proc * g->threads + started;
        x->cpu = nth_cpu(x->index);
        if (pthread_create(&x->thread, NULL, writer_main, x) != 0) break;
    }
    if (started < g->threads) {
        say(g->result_fd, "error process %ld: cannot start writer thread %u\n", (long)getpid(), started);
    } else {
        while (atomic_load(&ready) < g->threads) usleep(100);
        say(g->result_fd, "ready %ld\n", (long)getpid());
    }
    /* On an error the controller closes the barrier too: the threads that started run, unreported. */
    for (unsigned i = 0; i < started; i++) pthread_join(w[i].thread, NULL);
    if (started == g->threads) {
        for (unsigned i = 0; i < started; i++)
            say(g->result_fd, "writer %u %llu %llu %lld %lld %lld %lld %ld %d\n", w[i].index,
                (unsigned long long)g->events, (unsigned long long)w[i].failed, (long long)w[i].start_ns,
                (long long)w[i].end_ns, (long long)w[i].cpu_ns, (long long)w[i].max_lag_ns, w[i].tid, w[i].pinned);
        say(g->result_fd, "done\n");
    }
    etl_provider_unregister(prov);
    return started == g->threads ? 0 : 1;
}

/* provbench --writer KIND PROC THREADS EVENTS RATE RESULT_FD GO_FD: a writer process. */
static int writer_process(int argc, char **argv)
{
    struct group g;

    if (argc != 9) {
        fprintf(stderr, "provbench --writer: internal use only\n");
        return 2;
    }
    g.kind = atoi(argv[2]);
    g.proc = (unsigned)strtoul(argv[3], NULL, 10);
    g.threads = (unsigned)strtoul(argv[4], NULL, 10);
    g.events = strtoull(argv[5], NULL, 10);
    g.rate = strtoull(argv[6], NULL, 10);
    g.result_fd = atoi(argv[7]);
    g.go_fd = atoi(argv[8]);
    if (g.threads < 1 || g.threads > MAX_THREADS) return 2;
    return run_group(&g);
}

static void *group_thread(void *arg)
{
    run_group(arg);
    return NULL;
}

/* ------------------------------------------------------------------ the controller's side of a run */

/* A writer process (or group thread) as the controller sees it. */
struct member {
    struct group g;
    pid_t pid;            /* the process (0: a thread of the controller) */
    pthread_t thread;
    int fd;               /* read end of its result pipe */
    char buf[8192];
    size_t len;
    int ready, done, eof;
    long reported_pid;
};

struct run {
    double wall_s;                /* first start to last end, over all writers */
    uint64_t written;             /* calls made by the writers */
    uint64_t failed;              /* calls that returned an error */
    double cpu_ns;                /* the writers' CPU time / events written */
    double max_lag_ms;            /* paced: the furthest behind schedule a writer was */
    long pid[MAX_WRITERS];        /* the process each writer reported */
    int pinned;
    uint64_t lost;                /* ETL: EventsLost; LTTng-UST: discarded (the trace's count) */
    uint64_t listed;              /* LTTng-UST: discarded, as lttng list says */
    uint64_t kept;                /* events in the file or trace */
    uint64_t bytes;               /* of the file or trace */
    double stop_ms;               /* etl_session_stop, or lttng stop */
    int64_t end_ns;               /* the last writer's end */
    double drain_ms;              /* real time: the consumer's end (of stream) after the last writer's end */
    double consumer_cpu_ns;       /* real time: the consumer's CPU time / events it got */
    uint64_t real_time_lost;      /* ETL real time: RealTimeEventsLost (in lost) */
    uint32_t engine_used;
    uint32_t pool_peak;           /* ETL: NumberOfBuffers at the stop (the pool only grows) */
    char why[MSG_SIZE];
};

static int spawn(const struct config *cfg, struct member *m, int go_fd)
{
    int p[2];

    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    m->fd = p[0];
    m->g.result_fd = p[1];
    m->g.go_fd = go_fd;
    if (cfg->in_process) {
        if (pthread_create(&m->thread, NULL, group_thread, &m->g) != 0) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
        return 0;
    }
    m->pid = fork();
    if (m->pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (m->pid == 0) {
        char a[7][32];
        fcntl(p[1], F_SETFD, 0);
        fcntl(go_fd, F_SETFD, 0);
        snprintf(a[0], sizeof a[0], "%d", m->g.kind);
        snprintf(a[1], sizeof a[1], "%u", m->g.proc);
        snprintf(a[2], sizeof a[2], "%u", m->g.threads);
        snprintf(a[3], sizeof a[3], "%llu", (unsigned long long)m->g.events);
        snprintf(a[4], sizeof a[4], "%llu", (unsigned long long)m->g.rate);
        snprintf(a[5], sizeof a[5], "%d", p[1]);
        snprintf(a[6], sizeof a[6], "%d", go_fd);
        execl(cfg->self, "provbench", "--writer", a[0], a[1], a[2], a[3], a[4], a[5], a[6], (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    m->g.result_fd = -1;
    return 0;
}

/* The next line from m (without its newline) before deadline: 1, 0 at EOF, -1 on timeout. */
static int next_line(struct member *m, char *line, size_t size, int64_t deadline)
{
    for (;;) {
        char *nl = memchr(m->buf, '\n', m->len);
        if (nl) {
            size_t n = (size_t)(nl - m->buf);
            snprintf(line, size, "%.*s", (int)n, m->buf);
            memmove(m->buf, nl + 1, m->len - n - 1);
            m->len -= n + 1;
            return 1;
        }
        if (m->eof || m->len == sizeof m->buf) return 0;
        struct pollfd pfd = { m->fd, POLLIN, 0 };
        int64_t left = (deadline - bench_now_ns()) / 1000000;
        if (left <= 0) return -1;
        int rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (rc < 0 && errno != EINTR) return -1;
        if (rc <= 0) continue;
        ssize_t k = read(m->fd, m->buf + m->len, sizeof m->buf - m->len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) m->eof = 1;
        else m->len += (size_t)k;
    }
}

/* Waits for a member's end; a process's exit status is described in why (when it failed). */
static void reap(struct member *m, char *why, size_t size)
{
    int st = 0;

    if (m->fd >= 0) close(m->fd);
    m->fd = -1;
    if (!m->pid) {
        pthread_join(m->thread, NULL);
        close(m->g.result_fd);
        return;
    }
    while (waitpid(m->pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (why && !why[0] && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        if (WIFSIGNALED(st)) snprintf(why, size, "writer process %u (pid %ld) was killed by signal %d", m->g.proc,
                                      (long)m->pid, WTERMSIG(st));
        else snprintf(why, size, "writer process %u (pid %ld) exited with status %d", m->g.proc, (long)m->pid,
                      WEXITSTATUS(st));
    }
}

/* How a run's session is started and stopped: libetl's or LTTng's. */
struct session_ops {
    int (*start)(void *ctx, char *why, size_t size);
    void *ctx;
};

/*
 * One run: start the writer processes (they register, then wait to be enabled), start the
 * session (start(ctx)), wait until every writer process is ready, release them all at once
 * by closing the barrier, collect their counts. The session is the caller's to stop.
 */
static int run_writers(const struct config *cfg, int kind, uint64_t events, uint64_t rate, const struct session_ops *ops,
                       struct run *r)
{
    struct member m[MAX_PROCS];
    int go[2], rc = -1, session_started = 0;
    unsigned spawned = 0, nw = cfg->processes * cfg->threads;
    int64_t first = INT64_MAX, last = 0, cpu = 0, lag = 0, deadline;
    char line[MSG_SIZE];

    memset(m, 0, sizeof m);
    r->written = r->failed = 0;
    r->pinned = 1;
    if (pipe2(go, O_CLOEXEC) != 0) {
        snprintf(r->why, sizeof r->why, "pipe: %s", strerror(errno));
        return -1;
    }
    for (; spawned < cfg->processes; spawned++) {
        struct member *x = &m[spawned];
        x->g.kind = kind;
        x->g.proc = spawned;
        x->g.threads = cfg->threads;
        x->g.events = events;
        x->g.rate = rate / nw;
        if (spawn(cfg, x, go[0]) != 0) {
            snprintf(r->why, sizeof r->why, "cannot start writer process %u: %s", spawned, strerror(errno));
            goto out;
        }
    }
    if (ops->start(ops->ctx, r->why, sizeof r->why) != 0) goto out;
    session_started = 1;
    deadline = bench_now_ns() + (int64_t)READY_TIMEOUT_S * 1000000000;
    for (unsigned i = 0; i < spawned; i++) {
        int k = next_line(&m[i], line, sizeof line, deadline);
        if (k == 1 && strncmp(line, "ready ", 6) == 0) {
            m[i].reported_pid = strtol(line + 6, NULL, 10);
            continue;
        }
        if (k == 1 && strncmp(line, "error ", 6) == 0) snprintf(r->why, sizeof r->why, "%s", line + 6);
        else if (k < 0) snprintf(r->why, sizeof r->why, "writer process %u was not ready %d s after the session "
                                                        "started", i, READY_TIMEOUT_S);
        else snprintf(r->why, sizeof r->why, "writer process %u ended before it was ready", i);
        goto out;
    }
    close(go[1]); /* go */
    go[1] = -1;
    deadline = bench_now_ns() + (int64_t)3600 * 1000000000;
    for (unsigned i = 0; i < spawned; i++) {
        int k;
        while ((k = next_line(&m[i], line, sizeof line, deadline)) == 1 && strncmp(line, "writer ", 7) == 0) {
            unsigned idx;
            unsigned long long n, failed;
            long long s, e, c, lg;
            long tid;
            int pinned;
            if (sscanf(line + 7, "%u %llu %llu %lld %lld %lld %lld %ld %d", &idx, &n, &failed, &s, &e, &c, &lg, &tid,
                       &pinned) != 9 || idx >= nw)
                break;
            r->written += n;
            r->failed += failed;
            r->pid[idx] = m[i].reported_pid;
            r->pinned &= pinned;
            if (s < first) first = s;
            if (e > last) last = e;
            if (lg > lag) lag = lg;
            cpu += c;
        }
        if (k != 1 || strcmp(line, "done") != 0) {
            snprintf(r->why, sizeof r->why, "writer process %u: %.1900s", i,
                     k == 1 ? line : "ended without reporting its counts");
            goto out;
        }
        m[i].done = 1;
    }
    r->wall_s = (double)(last - first) * 1e-9;
    r->end_ns = last;
    r->cpu_ns = (double)cpu / (double)r->written;
    r->max_lag_ms = (double)lag * 1e-6;
    rc = 0;
out:
    if (go[1] >= 0) close(go[1]); /* releases writers that are waiting, so that they end */
    close(go[0]);
    for (unsigned i = 0; i < spawned; i++) reap(&m[i], r->why, sizeof r->why);
    if (rc == 0 && r->why[0]) rc = -1; /* a process that reported, then failed */
    return rc == 0 ? 0 : session_started ? -2 : -1;
}

/* ------------------------------------------------------------------ libetl's run */

/*
 * Real time: the controller's consumer. The session's end of a socket pair is attached
 * (etl_session_realtime_attach) and served by a delivery thread (etl_session_realtime_deliver,
 * until the session stops); a reader thread reads the other end (etl_reader_open_stream) from
 * before the writers start to ETL_EOF after the stop, counting the benchmark's events.
 */
struct consumer {
    int fd[2];                /* [0] the session's end, [1] the consumer's */
    unsigned writers;
    pthread_t deliverer, reader;
    int delivering, reading;
    uint64_t events;          /* the benchmark's events it read */
    uint64_t next_seq[MAX_WRITERS];
    uint64_t events_lost;     /* etl_reader_info's events_lost at ETL_EOF: EventsLost + RealTimeEventsLost */
    int64_t end_ns;           /* when it read ETL_EOF (or failed) */
    int64_t cpu_ns;           /* the reader thread's CPU time */
    atomic_int opened;        /* the reader has read the stream's start */
    int rc;                   /* etl_reader_next's last result */
    char why[512];
};

static void *deliver_main(void *arg)
{
    etl_session_realtime_deliver(arg);
    return NULL;
}

static void *consume_main(void *arg)
{
    struct consumer *c = arg;
    etl_reader *r = NULL;
    etl_event ev;
    int64_t cpu0 = bench_thread_cpu_ns();

    c->rc = etl_reader_open_stream(&r, c->fd[1], NULL);
    atomic_store(&c->opened, 1);
    if (c->rc != ETL_OK) {
        snprintf(c->why, sizeof c->why, "etl_reader_open_stream: %s", r ? etl_reader_error(r) : "out of memory");
        etl_reader_close(r);
        c->end_ns = bench_now_ns();
        return NULL;
    }
    while ((c->rc = etl_reader_next(r, &ev)) == ETL_OK || c->rc == ETL_WARN) {
        uint64_t seq, w;
        if (c->rc == ETL_WARN && !c->why[0]) snprintf(c->why, sizeof c->why, "damage: %s", etl_reader_error(r));
        if (ev.kind != ETL_KIND_EVENT) continue; /* the logfile header event */
        if (!etl_guid_equal(&ev.provider, &bench_provider) || ev.payload_len != BENCH_PAYLOAD_SIZE) {
            snprintf(c->why, sizeof c->why, "a foreign event in the stream");
            break;
        }
        memcpy(&seq, ev.payload, sizeof seq);
        memcpy(&w, ev.payload + 8, sizeof w);
        if (w >= c->writers) {
            snprintf(c->why, sizeof c->why, "an event of writer %llu, of %u", (unsigned long long)w, c->writers);
            break;
        }
        /* A writer is pinned to one processor: its events come in its buffers' order. */
        if (seq < c->next_seq[w]) {
            snprintf(c->why, sizeof c->why, "writer %llu: sequence %llu after %llu", (unsigned long long)w,
                     (unsigned long long)seq, (unsigned long long)c->next_seq[w] - 1);
            break;
        }
        c->next_seq[w] = seq + 1;
        c->events++;
    }
    c->end_ns = bench_now_ns();
    c->cpu_ns = bench_thread_cpu_ns() - cpu0;
    c->events_lost = etl_reader_info(r)->events_lost;
    if (c->rc != ETL_EOF && !c->why[0]) snprintf(c->why, sizeof c->why, "etl_reader_next: %s", etl_reader_error(r));
    etl_reader_close(r);
    return NULL;
}

/* Attaches the consumer to s and starts its two threads. 0, or -1 with why. */
static int consumer_start(struct consumer *c, etl_session *s, unsigned writers, char *why, size_t size)
{
    memset(c, 0, sizeof *c);
    c->writers = writers;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->fd) != 0) {
        snprintf(why, size, "socketpair: %s", strerror(errno));
        c->fd[0] = c->fd[1] = -1;
        return -1;
    }
    if (etl_session_realtime_attach(s, c->fd[0]) != ETL_OK) {
        snprintf(why, size, "etl_session_realtime_attach: %s", strerror(errno));
        return -1;
    }
    /* Attached: the session's stop waits for the delivery thread, which must run then. */
    c->delivering = pthread_create(&c->deliverer, NULL, deliver_main, s) == 0;
    if (!c->delivering) {
        snprintf(why, size, "cannot start the delivery thread");
        return -1;
    }
    c->reading = pthread_create(&c->reader, NULL, consume_main, c) == 0;
    if (!c->reading) {
        snprintf(why, size, "cannot start the consumer thread");
        return -1;
    }
    /* The writers go once the consumer reads, as LTTng-UST's wait for babeltrace2 to connect. */
    for (int i = 0; i < 5000 && !atomic_load(&c->opened); i++) usleep(1000);
    return 0;
}

/* After etl_session_stop: joins the threads, closes the socket pair. */
static void consumer_end(struct consumer *c)
{
    if (c->delivering) pthread_join(c->deliverer, NULL);
    if (c->fd[0] >= 0) shutdown(c->fd[0], SHUT_RDWR); /* a consumer never served ends */
    if (c->reading) pthread_join(c->reader, NULL);
    if (c->fd[0] >= 0) close(c->fd[0]);
    if (c->fd[1] >= 0) close(c->fd[1]);
    c->fd[0] = c->fd[1] = -1;
    c->delivering = c->reading = 0;
}

struct etl_ctx {
    const struct config *cfg;
    int memory;          /* buffering mode (in memory), not a sequential file */
    int real_time;       /* real-time mode without a file, to the consumer */
    int paced;           /* a paced run: MaximumBuffers from --paced-buffers */
    const char *path;
    etl_session_name *name;
    etl_session *s;
    struct consumer *consumer;
};

static int etl_start(void *arg, char *why, size_t size)
{
    struct etl_ctx *x = arg;
    etl_session_properties p;
    char err[512], name[64];
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    int orphan = 0;

    snprintf(name, sizeof name, "provbench-%ld", (long)getpid());
    memset(&p, 0, sizeof p);
    p.logger_name = name;
    if (x->memory) p.log_file_mode = ETL_MODE_BUFFERING;
    else if (x->real_time) p.log_file_mode = ETL_MODE_REAL_TIME;
    else p.log_file_name = x->path;
    p.buffer_size_kb = x->cfg->buffer_kb;
    p.minimum_buffers = p.maximum_buffers = x->cfg->buffers * (uint32_t)(ncpu > 0 ? ncpu : 1);
    if (x->paced) p.maximum_buffers = x->cfg->peak_buffers * (uint32_t)(ncpu > 0 ? ncpu : 1);
    if (x->cfg->direct_io) p.engine_flags |= ETL_ENGINE_DIRECT_IO;
    if (!x->cfg->in_process) {
        p.engine_flags |= ETL_ENGINE_SHARED;
        if (etl_session_name_claim(&x->name, name, &orphan, err, sizeof err) != ETL_OK) {
            snprintf(why, size, "etl_session_name_claim: %s", err);
            return -1;
        }
    }
    if (etl_session_start(&x->s, &p) != ETL_OK) {
        snprintf(why, size, "etl_session_start: %s", etl_session_error(x->s));
        etl_session_close(x->s);
        x->s = NULL;
        return -1;
    }
    /* The consumer reads from before the writers start. */
    if (x->real_time &&
        consumer_start(x->consumer, x->s, x->cfg->processes * x->cfg->threads, why, size) != 0)
        return -1;
    if (etl_session_enable_provider(x->s, &bench_provider, bench_descriptor.level, 0, 0) != ETL_OK) {
        snprintf(why, size, "etl_session_enable_provider: %s", etl_session_error(x->s));
        return -1;
    }
    return 0;
}

/* One libetl run: a shared session writing a sequential file (or buffering in memory, or in
   real time to the consumer), the writers' processes' providers writing into it; then stop,
   read the file back, check that written = in the file + EventsLost (in memory: that
   EventsLost = the calls that failed; real time: that written = consumed + the consumer's
   events_lost, which is EventsLost + RealTimeEventsLost, and EventsLost = the calls that failed). */
static int etl_run(const struct config *cfg, int memory, int real_time, uint64_t events, uint64_t rate,
                   struct run *r)
{
    struct consumer consumer;
    struct etl_ctx x = { cfg, memory, real_time, rate != 0, NULL, NULL, NULL, &consumer };
    struct session_ops ops = { etl_start, &x };
    etl_session_stats st;
    struct readback rb;
    struct stat sb;
    char path[PATH_SIZE];
    unsigned nw = cfg->processes * cfg->threads;
    int rc;
    int64_t t0;

    memset(r, 0, sizeof *r);
    memset(&consumer, 0, sizeof consumer);
    consumer.fd[0] = consumer.fd[1] = -1;
    snprintf(path, sizeof path, "%s/provbench-%ld.etl", cfg->tmpdir, (long)getpid());
    x.path = path;
    rc = run_writers(cfg, KIND_ETL, events, rate, &ops, r);
    t0 = bench_now_ns();
    if (x.s && etl_session_stop(x.s, &st) != ETL_OK && rc == 0) {
        snprintf(r->why, sizeof r->why, "etl_session_stop: %s", etl_session_error(x.s));
        rc = -1;
    }
    r->stop_ms = (double)(bench_now_ns() - t0) * 1e-6;
    consumer_end(&consumer);
    etl_session_close(x.s);
    etl_session_name_release(x.name);
    if (rc != 0) {
        unlink(path);
        return -1;
    }
    r->lost = st.events_lost;
    r->engine_used = st.engine_flags;
    r->pool_peak = st.number_of_buffers;
    if (real_time) {
        r->kept = consumer.events;
        r->lost = consumer.events_lost;
        r->real_time_lost = st.real_time_events_lost;
        r->drain_ms = (double)(consumer.end_ns - r->end_ns) * 1e-6;
        r->consumer_cpu_ns = consumer.events ? (double)consumer.cpu_ns / (double)consumer.events : 0;
        if (consumer.rc != ETL_EOF || consumer.why[0]) {
            snprintf(r->why, sizeof r->why, "the real-time consumer: %s", consumer.why);
            return -1;
        }
        if (consumer.events + consumer.events_lost == r->written && st.events_lost == r->failed &&
            consumer.events_lost == st.events_lost + st.real_time_events_lost)
            return 0;
        snprintf(r->why, sizeof r->why, "the loss count is not exact: written %llu, consumed %llu, the consumer's "
                 "events_lost %llu, EventsLost %llu, RealTimeEventsLost %llu (RealTimeBuffersLost %u), calls failed "
                 "%llu", (unsigned long long)r->written, (unsigned long long)consumer.events,
                 (unsigned long long)consumer.events_lost, (unsigned long long)st.events_lost,
                 (unsigned long long)st.real_time_events_lost, st.real_time_buffers_lost,
                 (unsigned long long)r->failed);
        return -1;
    }
    if (memory) {
        r->kept = r->written - st.events_lost;
        if (st.events_lost == r->failed) return 0;
        snprintf(r->why, sizeof r->why, "EventsLost %llu, but %llu calls failed", (unsigned long long)st.events_lost,
                 (unsigned long long)r->failed);
        return -1;
    }
    r->bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    bench_read_back(path, nw, r->pid, &rb);
    if (!cfg->keep) unlink(path);
    r->kept = rb.events;
    if (!rb.ok) {
        snprintf(r->why, sizeof r->why, "reading %s back: %s", path, rb.why);
        return -1;
    }
    if (st.events_lost != r->failed || rb.events + st.events_lost != r->written ||
        rb.header_events_lost != (uint32_t)st.events_lost) {
        snprintf(r->why, sizeof r->why, "the loss count is not exact: written %llu, in the file %llu, EventsLost %llu "
                 "(file header %u), calls failed %llu", (unsigned long long)r->written, (unsigned long long)rb.events,
                 (unsigned long long)st.events_lost, rb.header_events_lost, (unsigned long long)r->failed);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ LTTng-UST's run */

#ifdef HAVE_LTTNG_UST
struct lttng_ctx {
    const struct config *cfg;
    int memory;          /* snapshot mode (in memory, overwriting), not recording to disk */
    int live;            /* a live session (through the relay daemon) with a live consumer */
    int paced;           /* a paced run: --num-subbuf from --paced-buffers */
    struct lttng_ctl *l;
    const char *session;
    int created;
    struct lttng_live consumer;
};

/* A session recording to disk with one channel of per-user buffers, in discard mode, with the
   sub-buffers of the ETL session's size and count per processor; or, in memory, a snapshot
   session with such a channel in overwrite mode; or a live session, the same channel sent to
   the relay daemon, with babeltrace2 reading it live from before the writers start. */
static int lttng_start(void *arg, char *why, size_t size)
{
    struct lttng_ctx *x = arg;
    struct lttng_ctl *l = x->l;
    int rc;

    if (x->live)
        rc = lttng_cmd(l, "create '%s' --live=%u --set-url=net://127.0.0.1", x->session, LIVE_TIMER_US);
    else
        rc = lttng_cmd(l, "create '%s' %s--output='%s/trace'", x->session, x->memory ? "--snapshot " : "", l->dir);
    if (rc != 0) {
        snprintf(why, size, "lttng create failed (see %s)", l->log);
        return -1;
    }
    x->created = 1;
    if (lttng_cmd(l, "enable-channel --userspace --session='%s' --buffers-uid %s --subbuf-size=%uK --num-subbuf=%u "
                     "bench", x->session, x->memory ? "--overwrite" : "--discard", x->cfg->buffer_kb,
                     x->paced ? x->cfg->peak_buffers : x->cfg->buffers) != 0 ||
        lttng_cmd(l, "enable-event --userspace --session='%s' --channel=bench 'libetl_bench:*'", x->session) != 0 ||
        lttng_cmd(l, "start '%s'", x->session) != 0) {
        snprintf(why, size, "lttng enable-channel / enable-event / start failed (see %s)", l->log);
        return -1;
    }
    if (x->live && lttng_live_attach(l, x->session, &x->consumer, why, size) != 0) return -1;
    return 0;
}

/* Events in the trace below dir (babeltrace2's counter sink). 0, or -1. */
static int lttng_recorded(const struct lttng_ctl *l, uint64_t *out)
{
    char cmd[2 * LTTNG_PATH_SIZE + 128], line[512];
    FILE *f;
    int found = 0;

    snprintf(cmd, sizeof cmd, "babeltrace2 '%s/trace' -c sink.utils.counter --params=step=+0 2>>'%s'", l->dir, l->log);
    f = popen(cmd, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long n;
        char what[64];
        if (sscanf(line, " %llu %63s", &n, what) == 2 && strcmp(what, "Event") == 0) {
            *out = n;
            found = 1;
        }
    }
    return pclose(f) == 0 && found ? 0 : -1;
}

/* A live run's counts: the live consumer's events (recorded), and what was discarded: from
   the trace the relay daemon wrote, when the relay daemon is ours (else lttng list's count). */
static int lttng_live_counts(const struct config *cfg, struct lttng_ctl *l, struct lttng_ctx *x, struct run *r)
{
    char dir[LTTNG_PATH_SIZE];
    int rc = lttng_live_end(l, &x->consumer, LIVE_END_TIMEOUT_S, r->why, sizeof r->why);

    if (rc == 0) {
        r->kept = x->consumer.events;
        r->drain_ms = (double)(x->consumer.end_ns - r->end_ns) * 1e-6;
        r->consumer_cpu_ns = r->kept ? (double)x->consumer.cpu_ns / (double)r->kept : 0;
    }
    if (!l->relayd_dir[0]) {
        r->lost = r->listed;
        return rc;
    }
    if (lttng_live_trace_dir(l, &x->consumer, x->session, dir, sizeof dir) != 0) {
        if (rc == 0) snprintf(r->why, sizeof r->why, "the relay daemon wrote no trace of %s below %.900s", x->session,
                              l->relayd_dir);
        return -1;
    }
    if (rc == 0 && lttng_trace_discarded(dir, &r->lost) != 0) {
        snprintf(r->why, sizeof r->why, "cannot read the CTF index files below %.900s", dir);
        rc = -1;
    }
    r->bytes = tree_size(dir);
    if (!cfg->keep) tree_remove(dir);
    return rc;
}

/* One LTTng-UST run: the same writer processes with the tracepoint; then stop, count what was
   discarded (the trace's index; lttng list) and recorded (babeltrace2; live: the live
   consumer, which ends when the session is destroyed). Nothing to count in memory. */
static int lttng_run(const struct config *cfg, struct lttng_ctl *l, int memory, int live, uint64_t events,
                     uint64_t rate, struct run *r)
{
    static unsigned live_runs;
    char live_session[96];
    struct lttng_ctx x = { cfg, memory, live, rate != 0, l, l->session, 0, { .out = -1 } };
    struct session_ops ops = { lttng_start, &x };
    int rc;
    int64_t t0;

    memset(r, 0, sizeof *r);
    if (live) {
        /* A name of its own for every live session: the relay daemon may still hold the last one. */
        snprintf(live_session, sizeof live_session, "%s-live%u", l->session, ++live_runs);
        x.session = live_session;
    }
    snprintf(l->dir, sizeof l->dir, "%s/provbench-lttng-XXXXXX", cfg->tmpdir);
    if (!live && !mkdtemp(l->dir)) {
        snprintf(r->why, sizeof r->why, "cannot create a directory in %s", cfg->tmpdir);
        return -1;
    }
    rc = run_writers(cfg, KIND_LTTNG, events, rate, &ops, r);
    t0 = bench_now_ns();
    if (x.created && lttng_cmd(l, "stop '%s'", x.session) != 0 && rc == 0) {
        snprintf(r->why, sizeof r->why, "lttng stop failed (see %s)", l->log);
        rc = -1;
    }
    r->stop_ms = (double)(bench_now_ns() - t0) * 1e-6;
    if (memory) r->kept = r->written;
    if (rc == 0 && !memory && lttng_discarded(l, x.session, &r->listed) != 0) {
        snprintf(r->why, sizeof r->why, "cannot read the discarded-events count (see %s)", l->log);
        rc = -1;
    }
    if (x.created && lttng_cmd(l, "destroy '%s'", x.session) != 0 && rc == 0) {
        snprintf(r->why, sizeof r->why, "lttng destroy failed (see %s)", l->log);
        rc = -1;
    }
    if (live) {
        /* The consumer ends once the session is gone (or is killed at once when the run failed). */
        if (x.consumer.pid && rc != 0) lttng_live_end(l, &x.consumer, 0, NULL, 0);
        if (rc == 0) rc = lttng_live_counts(cfg, l, &x, r);
        if (x.consumer.out >= 0) close(x.consumer.out);
        return rc;
    }
    if (rc == 0 && !memory && lttng_recorded(l, &r->kept) != 0) {
        snprintf(r->why, sizeof r->why, "babeltrace2 could not count the events of %.900s/trace (see %.900s)", l->dir, l->log);
        rc = -1;
    }
    if (rc == 0 && !memory && lttng_trace_discarded(l->dir, &r->lost) != 0) {
        snprintf(r->why, sizeof r->why, "cannot read the CTF index files below %s/trace", l->dir);
        rc = -1;
    }
    r->bytes = tree_size(l->dir);
    if (!cfg->keep) tree_remove(l->dir);
    return rc;
}
#endif

/* ------------------------------------------------------------------ the disk */

/* Sequential write bandwidth of tmpdir, MB/s: mb MB in buffer-sized write() calls, then
   fdatasync; *cached_mbps the rate of the write() calls alone (into the page cache). */
static double disk_bandwidth(const struct config *cfg, double *cached_mbps, char *why, size_t size)
{
    char path[PATH_SIZE];
    size_t block = (size_t)cfg->buffer_kb * 1024;
    uint64_t total = (uint64_t)cfg->disk_mb * 1000000, done = 0;
    unsigned char *buf = malloc(block);
    int64_t t0, t1, t2;
    int fd;

    snprintf(path, sizeof path, "%s/provbench-disk-%ld", cfg->tmpdir, (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || !buf) {
        snprintf(why, size, "cannot create %s: %s", path, strerror(errno));
        free(buf);
        if (fd >= 0) close(fd);
        return 0;
    }
    for (size_t i = 0; i < block; i++) buf[i] = (unsigned char)(i * 131);
    t0 = bench_now_ns();
    while (done < total) {
        ssize_t k = write(fd, buf, block);
        if (k <= 0) break;
        done += (uint64_t)k;
    }
    t1 = bench_now_ns();
    fdatasync(fd);
    t2 = bench_now_ns();
    close(fd);
    unlink(path);
    free(buf);
    if (done < total) {
        snprintf(why, size, "writing %s failed after %llu bytes", path, (unsigned long long)done);
        return 0;
    }
    *cached_mbps = (double)done / ((double)(t1 - t0) * 1e-9) * 1e-6;
    return (double)done / ((double)(t2 - t0) * 1e-9) * 1e-6;
}

/* ------------------------------------------------------------------ cases, report */

struct bench_case {
    const char *label;
    int kind;
    int memory;               /* libetl buffering mode, LTTng-UST snapshot mode: nothing written */
    int real_time;            /* libetl real-time mode to a consumer, LTTng live with a live consumer */
    int paced;
    unsigned n;
    double ns[MAX_RUNS];      /* wall time / events per writer */
    double mevps[MAX_RUNS];   /* events written per wall second, all writers, millions */
    double kept_mevps[MAX_RUNS]; /* events recorded per wall second */
    double cpu_ns[MAX_RUNS];  /* the writers' CPU time / events */
    double stop_ms[MAX_RUNS];
    double drain_ms[MAX_RUNS]; /* real time: the consumer's end after the last writer's */
    double consumer_cpu_ns[MAX_RUNS]; /* real time: its CPU time / events it got */
    uint64_t written, lost, kept, bytes;
    uint64_t real_time_lost;  /* libetl real time: RealTimeEventsLost (in lost) */
    double max_lag_ms;
    uint32_t engine_used;
    uint32_t pool_peak;       /* ETL: the largest NumberOfBuffers at a stop */
    int measured, pinned;
    unsigned listed_wrong;    /* LTTng-UST: runs where lttng list's discarded count was not the trace's */
    char listed_example[128];
    char note[MSG_SIZE];
};

static void record(struct bench_case *c, const struct config *cfg, const struct run *r)
{
    c->ns[c->n] = r->wall_s * 1e9 / (double)(r->written / (cfg->processes * cfg->threads));
    c->mevps[c->n] = (double)r->written / r->wall_s * 1e-6;
    c->kept_mevps[c->n] = (double)r->kept / r->wall_s * 1e-6;
    c->cpu_ns[c->n] = r->cpu_ns;
    c->stop_ms[c->n] = r->stop_ms;
    c->drain_ms[c->n] = r->drain_ms;
    c->consumer_cpu_ns[c->n] = r->consumer_cpu_ns;
    c->n++;
    c->real_time_lost += r->real_time_lost;
    c->written += r->written;
    c->lost += r->lost;
    c->kept += r->kept;
    c->bytes += r->bytes;
    c->pinned &= r->pinned;
    if (r->max_lag_ms > c->max_lag_ms) c->max_lag_ms = r->max_lag_ms;
    c->engine_used = r->engine_used;
    if (r->pool_peak > c->pool_peak) c->pool_peak = r->pool_peak;
}

static int run_case(const struct config *cfg, struct lttng_ctl *lt, struct bench_case *c, uint64_t events,
                    uint64_t rate, int warmup)
{
    struct run r;
    int rc = -1;

    if (c->kind == KIND_ETL) {
        rc = etl_run(cfg, c->memory, c->real_time, events, rate, &r);
    } else {
#ifdef HAVE_LTTNG_UST
        rc = lttng_run(cfg, lt, c->memory, c->real_time, events, rate, &r);
#endif
    }
    if (rc != 0) {
        snprintf(c->note, sizeof c->note, "%s", r.why);
        return -1;
    }
    if (c->kind != KIND_ETL && r.kept + r.lost != r.written)
        printf("\n%s: written %llu != recorded %llu + discarded %llu\n", c->label, (unsigned long long)r.written,
               (unsigned long long)r.kept, (unsigned long long)r.lost);
    if (c->kind != KIND_ETL && r.listed != r.lost) {
        c->listed_wrong++;
        snprintf(c->listed_example, sizeof c->listed_example, "%llu where the trace holds %llu",
                 (unsigned long long)r.listed, (unsigned long long)r.lost);
    }
    if (!warmup) record(c, cfg, &r);
    return 0;
}

static void print_case(const struct bench_case *c)
{
    struct stats ns = stats_of(c->ns, c->n), mevps = stats_of(c->mevps, c->n), kept = stats_of(c->kept_mevps, c->n);
    struct stats cpu = stats_of(c->cpu_ns, c->n);

    if (!c->measured) {
        printf("  %-46s not measured: %s\n", c->label, c->note);
        return;
    }
    printf("  %-46s %7.1f [%6.1f-%6.1f]  %6.2f [%5.2f-%5.2f]  ", c->label, ns.med, ns.min, ns.max, mevps.med,
           mevps.min, mevps.max);
    if (c->memory) {
        printf("%6s  %6.1f  %6.2f%%  in memory: nothing written%s\n", "-", cpu.med,
               c->written ? 100.0 * (double)c->lost / (double)c->written : 0.0,
               c->kind == KIND_ETL ? "; EventsLost = the calls that failed" : "");
        return;
    }
    printf("%6.2f  %6.1f  %6.2f%%  %llu = %llu + %llu: %s\n", kept.med, cpu.med,
           c->written ? 100.0 * (double)c->lost / (double)c->written : 0.0, (unsigned long long)c->written,
           (unsigned long long)c->kept, (unsigned long long)c->lost, c->kept + c->lost == c->written ? "exact" : "NOT exact");
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: provbench [options]\n"
            "  --processes N    writer processes (default 2, at most %d)\n"
            "  --threads N      writer threads per process (default 2, at most %d)\n"
            "  --events N       events per writer thread and run, in millions (default 5)\n"
            "  --runs N         measured rounds after one warm-up round (default 5, at most %d)\n"
            "  --buffer-size KB buffer size: the ETL session's and LTTng's sub-buffers (default 64; a power of 2)\n"
            "  --buffers N      buffers per processor: the ETL pool is N x processors, LTTng --num-subbuf N\n"
            "                   (default 32; a power of 2)\n"
            "  --paced-buffers N  paced runs: buffers per processor at most: the ETL pool starts at --buffers\n"
            "                   and may grow to N x processors (MaximumBuffers), LTTng --num-subbuf N\n"
            "                   (default 512; a power of 2)\n"
            "  --rate N         one paced run at N events/s of all writers together (default: two, at a\n"
            "                   quarter and at half the disk's bandwidth, measured first, in ETL records)\n"
            "  --seconds S      paced runs: how long (default 5)\n"
            "  --disk-mb N      the disk bandwidth measurement writes N MB (default 2000)\n"
            "  --in-process     the writers as threads of the controller, not processes (for comparison)\n"
            "  --direct-io      libetl writes its files past the page cache (ETL_ENGINE_DIRECT_IO), for\n"
            "                   comparison\n"
            "  --no-lttng       do not measure LTTng-UST\n"
            "  --keep           keep the ETL files and LTTng traces in $TMPDIR (default /tmp)\n"
            "  --quick          few, short runs: a smoke test\n"
            "  -h, --help       show this help\n",
            MAX_PROCS, MAX_THREADS, MAX_RUNS);
}

static int power_of_two(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* The options and where they go in struct config: u unsigned, U uint64_t, M uint64_t given in
   millions, d double, f a flag (an int set to flag). */
static const struct option {
    const char *name;
    char type;
    size_t offset;
    int flag;
} options[] = {
    { "--processes", 'u', offsetof(struct config, processes), 0 },
    { "--threads", 'u', offsetof(struct config, threads), 0 },
    { "--events", 'M', offsetof(struct config, events), 0 },
    { "--runs", 'u', offsetof(struct config, runs), 0 },
    { "--buffer-size", 'u', offsetof(struct config, buffer_kb), 0 },
    { "--buffers", 'u', offsetof(struct config, buffers), 0 },
    { "--paced-buffers", 'u', offsetof(struct config, peak_buffers), 0 },
    { "--rate", 'U', offsetof(struct config, rate), 0 },
    { "--seconds", 'd', offsetof(struct config, pace_s), 0 },
    { "--disk-mb", 'u', offsetof(struct config, disk_mb), 0 },
    { "--in-process", 'f', offsetof(struct config, in_process), 1 },
    { "--direct-io", 'f', offsetof(struct config, direct_io), 1 },
    { "--no-lttng", 'f', offsetof(struct config, lttng), 0 },
    { "--keep", 'f', offsetof(struct config, keep), 1 },
    { "--quick", 'f', offsetof(struct config, quick), 1 },
    { NULL, 0, 0, 0 },
};

static int parse_args(int argc, char **argv, struct config *cfg)
{
    const char *dir = getenv("TMPDIR");
    ssize_t n;

    memset(cfg, 0, sizeof *cfg);
    cfg->processes = 2;
    cfg->threads = 2;
    cfg->runs = 5;
    cfg->events = 5000000;
    cfg->buffer_kb = 64;
    cfg->buffers = 32;
    cfg->peak_buffers = 512;
    cfg->pace_s = 5;
    cfg->disk_mb = 2000;
    cfg->lttng = 1;
    if (dir && (strlen(dir) >= sizeof cfg->tmpdir - 64 || strchr(dir, '\''))) {
        fprintf(stderr, "provbench: $TMPDIR is too long or holds a quote\n");
        return -1;
    }
    snprintf(cfg->tmpdir, sizeof cfg->tmpdir, "%s", dir && *dir ? dir : "/tmp");
    n = readlink("/proc/self/exe", cfg->self, sizeof cfg->self - 1);
    if (n <= 0) {
        fprintf(stderr, "provbench: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
        return -1;
    }
    cfg->self[n] = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        const struct option *o = options;
        while (o->name && strcmp(o->name, a) != 0) o++;
        if (!o->name && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            usage(stdout);
            exit(0);
        }
        if (!o->name || (o->type != 'f' && !value)) {
            fprintf(stderr, "provbench: unknown option or missing value: %s\n", a);
            return -1;
        }
        if (o->type != 'f') i++;
        switch (o->type) {
        case 'u': *(unsigned *)((char *)cfg + o->offset) = (unsigned)strtoul(value, NULL, 10); break;
        case 'U': *(uint64_t *)((char *)cfg + o->offset) = strtoull(value, NULL, 10); break;
        case 'M': *(uint64_t *)((char *)cfg + o->offset) = (uint64_t)(strtod(value, NULL) * 1e6); break;
        case 'd': *(double *)((char *)cfg + o->offset) = strtod(value, NULL); break;
        default: *(int *)((char *)cfg + o->offset) = o->flag; break;
        }
        if (cfg->quick == 1) { /* --quick: few, short runs */
            cfg->quick = 2;
            cfg->runs = 3;
            cfg->events = 200000;
            cfg->pace_s = 1;
            cfg->disk_mb = 200;
        }
    }
    if (cfg->processes < 1 || cfg->processes > MAX_PROCS || cfg->threads < 1 || cfg->threads > MAX_THREADS ||
        cfg->runs < 1 || cfg->runs > MAX_RUNS || cfg->events < 1000 || cfg->pace_s <= 0 || cfg->disk_mb < 1 ||
        !power_of_two(cfg->buffer_kb) || cfg->buffer_kb < 4 || cfg->buffer_kb > 16384 || !power_of_two(cfg->buffers) ||
        cfg->buffers < 2 || !power_of_two(cfg->peak_buffers) || cfg->peak_buffers < cfg->buffers) {
        fprintf(stderr, "provbench: --processes must be 1 to %d, --threads 1 to %d, --runs 1 to %d, --events at least "
                        "0.001, --seconds and --disk-mb positive, --buffer-size a power of 2 from 4 to 16384, "
                        "--buffers a power of 2 from 2, --paced-buffers a power of 2 from --buffers\n", MAX_PROCS, MAX_THREADS, MAX_RUNS);
        return -1;
    }
    return 0;
}


int main(int argc, char **argv)
{
    /* The unpaced cases (ETL_FILE to LTTNG_LIVE) run in every round; the paced ones after. */
    enum { ETL_FILE, LTTNG_DISK, ETL_MEM, LTTNG_MEM, ETL_RT, LTTNG_LIVE, ETL_PACED, LTTNG_PACED, ETL_PACED2,
           LTTNG_PACED2, ETL_RT_PACED, LTTNG_LIVE_PACED, ETL_RT_PACED2, LTTNG_LIVE_PACED2, NCASES };
    struct bench_case cases[NCASES] = {
        [ETL_FILE] = { .label = "libetl shared session, sequential file", .kind = KIND_ETL },
        [LTTNG_DISK] = { .label = "LTTng-UST per-user buffers, to disk", .kind = KIND_LTTNG },
        [ETL_MEM] = { .label = "libetl shared session, buffering (memory)", .kind = KIND_ETL, .memory = 1 },
        [LTTNG_MEM] = { .label = "LTTng-UST per-user buffers, snapshot mode", .kind = KIND_LTTNG, .memory = 1 },
        [ETL_RT] = { .label = "libetl shared session, real-time to a consumer", .kind = KIND_ETL, .real_time = 1 },
        [LTTNG_LIVE] = { .label = "LTTng-UST per-user buffers, live (babeltrace2)", .kind = KIND_LTTNG,
                         .real_time = 1 },
        [ETL_PACED] = { .kind = KIND_ETL, .paced = 1 },
        [LTTNG_PACED] = { .kind = KIND_LTTNG, .paced = 1 },
        [ETL_PACED2] = { .kind = KIND_ETL, .paced = 2 },
        [LTTNG_PACED2] = { .kind = KIND_LTTNG, .paced = 2 },
        [ETL_RT_PACED] = { .kind = KIND_ETL, .real_time = 1, .paced = 1 },
        [LTTNG_LIVE_PACED] = { .kind = KIND_LTTNG, .real_time = 1, .paced = 1 },
        [ETL_RT_PACED2] = { .kind = KIND_ETL, .real_time = 1, .paced = 2 },
        [LTTNG_LIVE_PACED2] = { .kind = KIND_LTTNG, .real_time = 1, .paced = 2 },
    };
    struct config cfg;
    struct lttng_ctl lt;
    /* libetl against LTTng-UST: the pairs whose throughput ratio is reported, per round and of the medians. */
    static const struct { int etl, lttng; const char *what; } pairs[] = {
        { ETL_FILE, LTTNG_DISK, "sequential file / to disk" },
        { ETL_MEM, LTTNG_MEM, "buffering / snapshot mode (in memory)" },
        { ETL_RT, LTTNG_LIVE, "real time / live, to a consumer" },
    };
    enum { NPAIRS = sizeof pairs / sizeof pairs[0], RT_PAIR = 2 };
    double ratio[NPAIRS][MAX_RUNS], kept_ratio[NPAIRS][MAX_RUNS], disk, cached = 0;
    unsigned nratio[NPAIRS] = { 0 }, nw;
    static const double pace_share[2] = { 0.25, 0.5 }; /* the paced runs' rates, of the disk's bandwidth */
    uint64_t rate[2];
    unsigned npaced = 2;
    char paced_label[NCASES][64];
    int status = 0, lttng_ok = 0, live_ok = 0, lttng_failed = 0;
    char why[MSG_SIZE] = "";
    int64_t t_start = bench_now_ns();

    if (argc > 1 && strcmp(argv[1], "--writer") == 0) return writer_process(argc, argv);
    if (parse_args(argc, argv, &cfg) != 0) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(&lt, 0, sizeof lt);
    nw = cfg.processes * cfg.threads;
    if (cfg.in_process) {
        cases[ETL_FILE].label = "libetl, writers in-process, sequential file";
        cases[ETL_MEM].label = "libetl, writers in-process, buffering (memory)";
        cases[ETL_RT].label = "libetl, writers in-process, real-time";
    }
    printf("provbench: %u %s x %u threads writing one session; each event a %d-byte payload (libetl: a %u-byte "
           "EVENT_HEADER record through etl_provider_write; LTTng-UST: libetl_bench:event32)\n",
           cfg.processes, cfg.in_process ? "thread groups of the controller" : "writer processes", cfg.threads,
           BENCH_PAYLOAD_SIZE, bench_record_space());
    bench_print_machine();
#ifndef __OPTIMIZE__
    printf("WARNING: provbench was built without optimisation; its figures mean little\n");
#endif
    printf("buffers: %u KB, %u per processor (libetl: a pool of %ld, minimum = maximum; LTTng-UST: one channel of "
           "per-user buffers, --subbuf-size %uK --num-subbuf %u, discard mode); files in %s\n",
           cfg.buffer_kb, cfg.buffers, (long)cfg.buffers * sysconf(_SC_NPROCESSORS_CONF), cfg.buffer_kb, cfg.buffers,
           cfg.tmpdir);
    printf("paced runs: up to %u buffers per processor (libetl: the pool starts at %ld and may grow to %ld, "
           "MaximumBuffers, as ETW's documentation advises for event rate peaks; LTTng-UST: --num-subbuf %u, "
           "preallocated)\n", cfg.peak_buffers, (long)cfg.buffers * sysconf(_SC_NPROCESSORS_CONF),
           (long)cfg.peak_buffers * sysconf(_SC_NPROCESSORS_CONF), cfg.peak_buffers);

    disk = disk_bandwidth(&cfg, &cached, why, sizeof why);
    if (disk <= 0) {
        printf("disk bandwidth: NOT MEASURED: %s\n", why);
        if (!cfg.rate) cfg.rate = 2000000; /* sessionbench's no-loss rate */
    } else {
        printf("disk bandwidth of %s: %.0f MB/s with fdatasync (%u MB in %u KB writes; %.0f MB/s into the page "
               "cache)\n", cfg.tmpdir, disk, cfg.disk_mb, cfg.buffer_kb, cached);
    }
    if (cfg.rate) npaced = 1;
    for (unsigned k = 0; k < npaced; k++) {
        rate[k] = cfg.rate ? cfg.rate : (uint64_t)(disk * 1e6 * pace_share[k] / bench_record_space());
        rate[k] -= rate[k] % nw;
    }
    for (unsigned i = ETL_PACED; i < NCASES; i++) {
        struct bench_case *c = &cases[i];
        uint64_t r = rate[c->paced - 1];
        snprintf(paced_label[i], sizeof paced_label[i], "%s, paced at %.2f M/s (%.0f MB/s)",
                 c->kind == KIND_ETL ? c->real_time ? "libetl real-time" : "libetl"
                                     : c->real_time ? "LTTng-UST live" : "LTTng-UST",
                 (double)r * 1e-6, (double)r * bench_record_space() * 1e-6);
        c->label = paced_label[i];
    }

#ifdef HAVE_LTTNG_UST
    if (!cfg.lttng) {
        snprintf(lt.why, sizeof lt.why, "--no-lttng");
    } else if (lttng_setup(&lt, cfg.tmpdir, "provbench") == 0) {
        lttng_ok = 1;
        printf("LTTng-UST %s\n", LTTNG_UST_VERSION);
    }
#else
    snprintf(lt.why, sizeof lt.why, "this build has no LTTng-UST (configure found no lttng-ust >= 2.13, or was given "
                                    "--without-lttng-ust)");
#endif
    if (!lttng_ok) printf("LTTng-UST NOT MEASURED: %s\n", lt.why);
#ifdef HAVE_LTTNG_UST
    if (lttng_ok && lttng_live_setup(&lt, cfg.tmpdir, "provbench") == 0) live_ok = 1;
    if (lttng_ok && !live_ok) printf("LTTng live NOT MEASURED: %s\n", lt.live_why);
#endif
    for (unsigned i = 0; i < NCASES; i++) {
        struct bench_case *c = &cases[i];
        c->measured = c->kind == KIND_ETL || (lttng_ok && (!c->real_time || live_ok));
        c->pinned = 1;
        if (!c->measured) snprintf(c->note, sizeof c->note, "%s", lttng_ok ? lt.live_why : lt.why);
    }
    printf("real time: libetl's session in real-time mode without a file (flush timer 1 s), its buffers through a "
           "socket pair to a consumer thread of the controller (etl_reader_open_stream)");
    if (live_ok)
        printf("; LTTng-UST: a live session (--live=%u, the same channel) through a relay daemon, which also writes it "
               "to disk, read by babeltrace2 (source.ctf.lttng-live to sink.utils.counter)", LIVE_TIMER_US);
    printf("; the consumer%s start before the writers and end after the session\n", live_ok ? "s" : "");
    printf("unpaced: %llu events per writer and run (%llu in all); 1 warm-up round, then %u rounds that each run "
           "every case once, in turn\n", (unsigned long long)cfg.events, (unsigned long long)cfg.events * nw, cfg.runs);

    for (unsigned round = 0; round <= cfg.runs; round++) {
        printf(round ? " round %u..." : "warm-up round...", round);
        for (unsigned i = ETL_FILE; i <= LTTNG_LIVE; i++) {
            struct bench_case *c = &cases[i];
            if (c->measured && run_case(&cfg, &lt, c, cfg.events, 0, round == 0) != 0) {
                printf("\n%s: FAILED: %s\n", c->label, c->note);
                c->measured = 0;
                if (c->kind == KIND_ETL) status = 1;
                else lttng_failed = 1;
            }
        }
        for (unsigned k = 0; k < NPAIRS && round; k++) {
            const struct bench_case *e = &cases[pairs[k].etl], *l = &cases[pairs[k].lttng];
            if (!e->measured || !l->measured) continue;
            kept_ratio[k][nratio[k]] = e->kept_mevps[e->n - 1] / l->kept_mevps[l->n - 1];
            ratio[k][nratio[k]++] = e->mevps[e->n - 1] / l->mevps[l->n - 1];
        }
    }
    for (unsigned i = ETL_PACED; i < NCASES; i++) {
        struct bench_case *c = &cases[i];
        uint64_t r = rate[c->paced - 1];
        if (c->paced > (int)npaced) {
            c->measured = 0;
            snprintf(c->note, sizeof c->note, "--rate gives one paced rate");
            continue;
        }
        if (c->kind == KIND_ETL)
            printf("\npaced%s: %llu events/s of all writers (%.0f MB/s of ETL records, %.0f%% of the disk's bandwidth) "
                   "for %g s...", c->real_time ? ", real time" : "", (unsigned long long)r,
                   (double)r * bench_record_space() * 1e-6,
                   disk > 0 ? 100.0 * (double)r * bench_record_space() * 1e-6 / disk : 0.0, cfg.pace_s);
        if (c->measured && run_case(&cfg, &lt, c, (uint64_t)((double)r / nw * cfg.pace_s), r, 0) != 0) {
            printf("\n%s: FAILED: %s\n", c->label, c->note);
            c->measured = 0;
            if (c->kind == KIND_ETL) status = 1;
            else lttng_failed = 1;
        }
    }
    printf("\n");

    printf("\nns/event = wall time (first start to last end) / events per writer: median [min-max] of %u runs; "
           "M/s = events written per wall second by all writers [min-max], then those recorded (real time: those the "
           "consumer got, per the writers' wall second); cpu ns = the writers' CPU time / events written (medians); "
           "lost = libetl's EventsLost (real time: the consumer's events_lost, EventsLost + RealTimeEventsLost), "
           "LTTng-UST's discarded events; written = recorded + lost, summed over the runs\n", cfg.runs);
    printf("  %-46s %-22s  %-21s  %6s  %6s  %7s  %s\n", "case", "ns/event [min-max]", "M/s written [min-max]",
           "M/s rec", "cpu ns", "lost", "written = recorded + lost");
    for (unsigned i = 0; i < NCASES; i++) print_case(&cases[i]);
    if (!cases[ETL_FILE].pinned || !cases[LTTNG_DISK].pinned)
        printf("WARNING: a writer thread could not be pinned to its processor\n");
    for (unsigned i = 0; i < NCASES; i++)
        if (cases[i].listed_wrong)
            printf("%s: in %u run(s) lttng list's discarded count was not the trace's (e.g. %s); the table has the "
                   "trace's\n", cases[i].label, cases[i].listed_wrong, cases[i].listed_example);
    for (unsigned i = ETL_PACED; i < NCASES; i++)
        if (cases[i].measured)
        {
            printf("%s: the writers were at most %.1f ms behind schedule", cases[i].label, cases[i].max_lag_ms);
            if (cases[i].kind == KIND_ETL)
                printf("; the pool grew to %u buffers (%.1f MB) of %ld at most", cases[i].pool_peak,
                       (double)cases[i].pool_peak * cfg.buffer_kb / 1024.0,
                       (long)cfg.peak_buffers * sysconf(_SC_NPROCESSORS_CONF));
            printf("\n");
        }
    for (unsigned i = 0; i < NCASES; i++) {
        const struct bench_case *c = &cases[i];
        struct stats d = stats_of(c->drain_ms, c->n), cpu = stats_of(c->consumer_cpu_ns, c->n);
        if (!c->measured || !c->real_time) continue;
        printf("%s: the consumer ended %.0f ms [%.0f-%.0f] after the last writer, its CPU time %.0f ns an event it "
               "got (%s)", c->label, d.med, d.min, d.max, cpu.med,
               c->kind == KIND_ETL ? "the reader thread" : "babeltrace2, not the relay and consumer daemons");
        if (c->kind == KIND_ETL && c->lost)
            printf("; lost: %llu EventsLost (no free buffer) + %llu RealTimeEventsLost (held buffers beyond the "
                   "limit)", (unsigned long long)(c->lost - c->real_time_lost), (unsigned long long)c->real_time_lost);
        printf("\n");
    }
    printf("every libetl run was read back with etl_reader: each writer's events in order, with its process's pid, "
           "and exactly the events written minus EventsLost (real time: the consumer, each writer's events in order, "
           "and exactly the events written minus its events_lost); LTTng-UST's recorded events are babeltrace2's "
           "count, its lost ones the sum of each stream's last events_discarded (CTF index files; live: of the trace "
           "the relay daemon wrote)\n");

    printf("\ngoals:\n");
    for (unsigned k = 0; k < RT_PAIR; k++) {
        const struct bench_case *e = &cases[pairs[k].etl], *l = &cases[pairs[k].lttng];
        struct stats pr = stats_of(ratio[k], nratio[k]), kr = stats_of(kept_ratio[k], nratio[k]);
        double r = stats_of(e->mevps, e->n).med / stats_of(l->mevps, l->n).med;
        if (!nratio[k]) {
            printf("  throughput against LTTng-UST, %s: NOT MEASURED\n", pairs[k].what);
            continue;
        }
        printf("  throughput (events written/s), libetl / LTTng-UST, %-38s %5.2fx of the medians (per round %.2f "
               "[%.2f-%.2f])   >= %.0fx: %s\n", pairs[k].what, r, pr.med, pr.min, pr.max, GOAL_RATIO,
               r >= GOAL_RATIO ? "met" : "NOT met");
        if (k == 0)
            printf("    (events recorded/s: %.2fx of the medians, per round %.2f [%.2f-%.2f])\n",
                   stats_of(e->kept_mevps, e->n).med / stats_of(l->kept_mevps, l->n).med, kr.med, kr.min, kr.max);
    }
    for (unsigned i = ETL_PACED; i < ETL_RT_PACED; i += 2)
        if (cases[i].measured)
            printf("  no event lost below the disk's bandwidth, sequential file, at %.0f%% of it (%s): %llu lost: %s\n",
                   disk > 0 ? 100.0 * (double)rate[cases[i].paced - 1] * bench_record_space() * 1e-6 / disk : 0.0,
                   cases[i].label, (unsigned long long)cases[i].lost, cases[i].lost ? "NOT met" : "met");
    if (cases[ETL_FILE].measured)
        printf("  loss counter exact beyond it (written = in the file + EventsLost, in every run): met\n");
    printf("real time:\n");
    if (nratio[RT_PAIR]) {
        const struct bench_case *e = &cases[ETL_RT], *l = &cases[LTTNG_LIVE];
        struct stats pr = stats_of(ratio[RT_PAIR], nratio[RT_PAIR]);
        struct stats kr = stats_of(kept_ratio[RT_PAIR], nratio[RT_PAIR]);
        printf("  throughput (events consumed/s), libetl real time / LTTng-UST live, to a consumer: %5.2fx of the "
               "medians (per round %.2f [%.2f-%.2f]); events written/s: %.2fx (per round %.2f [%.2f-%.2f])\n",
               stats_of(e->kept_mevps, e->n).med / stats_of(l->kept_mevps, l->n).med, kr.med, kr.min, kr.max,
               stats_of(e->mevps, e->n).med / stats_of(l->mevps, l->n).med, pr.med, pr.min, pr.max);
    } else {
        printf("  throughput against LTTng-UST live, to a consumer: NOT MEASURED\n");
    }
    for (unsigned i = ETL_RT_PACED; i < NCASES; i += 2) {
        const struct bench_case *e = &cases[i], *l = &cases[i + 1];
        if (!e->measured) continue;
        printf("  no event lost to the consumer at %.0f%% of the disk's bandwidth (%.2f M/s): libetl %llu lost: %s; "
               "LTTng-UST live ", disk > 0 ? 100.0 * (double)rate[e->paced - 1] * bench_record_space() * 1e-6 / disk
                                           : 0.0, (double)rate[e->paced - 1] * 1e-6,
               (unsigned long long)e->lost, e->lost ? "NOT met" : "met");
        if (l->measured) printf("%llu lost: %s\n", (unsigned long long)l->lost, l->lost ? "NOT met" : "met");
        else printf("NOT MEASURED\n");
    }
    if (cases[ETL_RT].measured)
        printf("  real-time loss count exact (written = consumed + the consumer's events_lost, = EventsLost + "
               "RealTimeEventsLost, EventsLost = the calls that failed, in every run): met\n");
    printf("%.0f s in all%s\n", (double)(bench_now_ns() - t_start) * 1e-9,
           cfg.quick ? " (--quick: a smoke test, not a measurement)" : "");
#ifdef HAVE_LTTNG_UST
    lttng_teardown(&lt, cfg.keep || lttng_failed || (lttng_ok && !live_ok));
#else
    (void)lttng_failed; /* no LTTng case ran */
#endif
    return status;
}
