/* SPDX-License-Identifier: MIT */
/* LBR capture with Linux perf's branch-stack sampling: the probe, and the triggers handed to the kernel capture's rings. */
#define _GNU_SOURCE /* syscall */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

struct etl_lbr_capture {
    etl_session *s;
};

int etl_lbr_capture_probe(uint32_t flags, char *err, size_t errsize)
{
    struct perf_event_attr a;
    uint64_t bt;
    long fd;

    if (etl_lbr_perf_branch_type(flags, &bt, err, errsize) != 0) return ETL_FAILED;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.sample_period = 1000000;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_BRANCH_STACK;
    a.branch_sample_type = bt;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC_RAW; /* the PerfCounter clock of sessions */
    a.disabled = 1;
    fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC); /* this process, never enabled */
    if (fd < 0) {
        etl_lbr_perf_cause(errno, NULL, err, errsize);
        return ETL_FAILED;
    }
    close((int)fd);
    return ETL_OK;
}

static int capture_start(etl_lbr_capture **out, etl_session *s, char *err, size_t errsize)
{
    etl_session_properties props;
    etl_lbr_config cfg;
    etl_lbr_capture *c;
    uint64_t branch_type;

    *out = NULL;
    etl_session_lbr_config(s, &cfg);
    if (!cfg.count) {
        snprintf(err, errsize, "LBR capture: the session has no LBR triggers (etl_session_configure_lbr)");
        return ETL_FAILED;
    }
    etl_session_properties_get(s, &props);
    if (props.clock_type != ETL_CLOCK_PERFCOUNTER) {
        snprintf(err, errsize, "LBR capture: the session's clock must be PerfCounter (perf's samples are timed "
                 "with CLOCK_MONOTONIC_RAW)");
        return ETL_FAILED;
    }
    if (etl_lbr_perf_branch_type(cfg.flags, &branch_type, err, errsize) != 0) return ETL_FAILED;
    c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errsize, "LBR capture: out of memory");
        return ETL_FAILED;
    }
    /* The triggers are kernel events (SampledProfile, PMC interrupt): their samples go through
       the kernel capture's per-processor rings, in time order with its other events. */
    if (etl_kcapture_lbr_start(etl_session_kcapture(s), &cfg, branch_type, err, errsize) != 0) {
        free(c);
        return ETL_FAILED;
    }
    c->s = s;
    *out = c;
    return ETL_OK;
}

/* The message goes on the session (etl_session_error). */
int etl_lbr_capture_start(etl_lbr_capture **out, etl_session *s)
{
    char err[1024];

    err[0] = '\0';
    if (capture_start(out, s, err, sizeof err) == ETL_OK) return ETL_OK;
    etl_session_set_error(s, "%s", err);
    return ETL_FAILED;
}

void etl_lbr_capture_stop(etl_lbr_capture *c)
{
    if (!c) return;
    etl_kcapture_lbr_stop(etl_session_kcapture(c->s));
    free(c);
}
