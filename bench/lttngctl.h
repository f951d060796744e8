/* SPDX-License-Identifier: MIT */
/* Drives LTTng for the benchmarks that compare with LTTng-UST: the session daemon, the lttng command, the counts. */
#ifndef ETL_BENCH_LTTNGCTL_H
#define ETL_BENCH_LTTNGCTL_H

#include <stdint.h>
#include <sys/types.h>

#define LTTNG_PATH_SIZE 1280
#define LTTNG_MSG_SIZE 2048
#define LTTNG_LIVE_PORT 5344 /* the relay daemon's default live port */

struct lttng_ctl {
    int available;           /* built with it, and the lttng command and a session daemon work */
    int started_sessiond;    /* we started the session daemon (and stop it at exit) */
    pid_t sessiond_pid;
    char session[64];
    char dir[LTTNG_PATH_SIZE]; /* trace output of the current run */
    char log[LTTNG_PATH_SIZE]; /* what the lttng commands printed */
    char why[LTTNG_MSG_SIZE];  /* why LTTng-UST is not measured */
    /* LTTng live (lttng_live_setup): a relay daemon on this machine's default ports. */
    int live_available;
    pid_t relayd_pid;        /* the relay daemon we started (stopped at teardown); 0: one ran already */
    char relayd_dir[LTTNG_PATH_SIZE]; /* its output directory; "" when the relay daemon is not ours */
    char live_why[LTTNG_MSG_SIZE];    /* why LTTng live is not measured */
};

/* A live consumer: babeltrace2 reading one live session from the relay daemon
   (source.ctf.lttng-live) into its counter sink (sink.utils.counter). */
struct lttng_live {
    pid_t pid;
    int out;                 /* read end of its standard output (the counts, at its end) */
    char url[512];           /* net://127.0.0.1/host/HOSTNAME/SESSION */
    uint64_t events;         /* the events it got */
    int64_t end_ns;          /* when it ended (CLOCK_MONOTONIC) */
    int64_t cpu_ns;          /* its CPU time, user and system */
};

/* Finds a session daemon, or starts one (without kernel tracing); names the session PROG-PID
   and the command log PROG-lttng-log-XXXXXX in tmpdir. 0, or -1 with l->why. */
int lttng_setup(struct lttng_ctl *l, const char *tmpdir, const char *prog);
/* LTTng live: finds a relay daemon (something listens on 127.0.0.1:5344, the live port), or
   starts one, its output in tmpdir/PROG-relayd-XXXXXX, and waits until it listens. 0, or -1
   with l->live_why. */
int lttng_live_setup(struct lttng_ctl *l, const char *tmpdir, const char *prog);
/* Starts babeltrace2 on the live session SESSION (created, with --live, and started), which
   ends when the session is destroyed (session-not-found-action=end), and waits (up to 10 s)
   until the relay daemon counts it as the session's client. 0, or -1 with why (v->pid is then
   0: nothing to end). */
int lttng_live_attach(struct lttng_ctl *l, const char *session, struct lttng_live *v, char *why, size_t size);
/* Waits (up to timeout_s) for babeltrace2 to end, after the session was destroyed, and reads
   its counts; kills it after the timeout. 0, or -1 with why. */
int lttng_live_end(struct lttng_ctl *l, struct lttng_live *v, int timeout_s, char *why, size_t size);
/* The directory of the trace of live session SESSION that our relay daemon wrote
   (relayd_dir/HOSTNAME/SESSION-DATETIME, HOSTNAME from v->url). 0, or -1. */
int lttng_live_trace_dir(const struct lttng_ctl *l, const struct lttng_live *v, const char *session, char *out,
                         size_t size);
/* Stops the relay daemon and the session daemon if lttng_live_setup and lttng_setup started
   them, removes the relay daemon's output directory unless keep_log; removes the command log,
   or says where it is kept. */
void lttng_teardown(struct lttng_ctl *l, int keep_log);
/* Runs "lttng ARGS", its output appended to l->log: the exit status, or -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int lttng_cmd(struct lttng_ctl *l, const char *fmt, ...);
/* Events the channels of the session discarded (lttng --mi=xml list). 0, or -1. */
int lttng_discarded(struct lttng_ctl *l, const char *session, uint64_t *out);
/* Events discarded by the streams of the trace below dir, from its CTF index files (each
   stream's last packet's events_discarded). 0, or -1 when an index cannot be read. */
int lttng_trace_discarded(const char *dir, uint64_t *out);
/* Waits (up to 10 s) until the session daemon has told this process to turn the tracepoint
   libetl_bench:event32 on (on = 1) or off. 0, or -1. */
int lttng_wait_tracepoint(int on);
/* The bytes of the regular files below dir; removes dir and all below it. */
uint64_t tree_size(const char *dir);
void tree_remove(const char *dir);

#endif
