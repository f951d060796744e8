/* SPDX-License-Identifier: MIT */
/* Drives LTTng for the benchmarks that compare with LTTng-UST: the session daemon, the lttng command, the counts. */
#ifndef ETL_BENCH_LTTNGCTL_H
#define ETL_BENCH_LTTNGCTL_H

#include <stdint.h>
#include <sys/types.h>

#define LTTNG_PATH_SIZE 1280
#define LTTNG_MSG_SIZE 2048

struct lttng_ctl {
    int available;           /* built with it, and the lttng command and a session daemon work */
    int started_sessiond;    /* we started the session daemon (and stop it at exit) */
    pid_t sessiond_pid;
    char session[64];
    char dir[LTTNG_PATH_SIZE]; /* trace output of the current run */
    char log[LTTNG_PATH_SIZE]; /* what the lttng commands printed */
    char why[LTTNG_MSG_SIZE];  /* why LTTng-UST is not measured */
};

/* Finds a session daemon, or starts one (without kernel tracing); names the session PROG-PID
   and the command log PROG-lttng-log-XXXXXX in tmpdir. 0, or -1 with l->why. */
int lttng_setup(struct lttng_ctl *l, const char *tmpdir, const char *prog);
/* Stops the session daemon if lttng_setup started it; removes the command log, or says where
   it is kept. */
void lttng_teardown(struct lttng_ctl *l, int keep_log);
/* Runs "lttng ARGS", its output appended to l->log: the exit status, or -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int lttng_cmd(struct lttng_ctl *l, const char *fmt, ...);
/* Events the channels of session l->session discarded (lttng --mi=xml list). 0, or -1. */
int lttng_discarded(struct lttng_ctl *l, uint64_t *out);
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
