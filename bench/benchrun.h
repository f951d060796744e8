/* SPDX-License-Identifier: MIT */
/* Running a program a benchmark measures: its redirections, its wall time, and its own processor time and peak memory (wait4). */
#ifndef ETL_BENCHRUN_H
#define ETL_BENCHRUN_H

#if !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE)
#error "benchrun.h needs _DEFAULT_SOURCE (wait4) defined before the first include"
#endif

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchstat.h"

/* What one run of a program cost: wall seconds, its processor seconds (user and system), its
   peak resident set. */
struct bench_cost {
    double wall, cpu;
    long maxrss_kb;
};

/*
 * Runs argv[0] with argv, stdin from in_path (NULL: as it is), stdout to out_path (NULL:
 * /dev/null), stderr to err_path (NULL: as it is), and waits for it. 0 with *c (may be NULL)
 * filled when it exited 0; -1 otherwise, said on stderr with who (the benchmark's name).
 */
static inline int bench_run(const char *who, char *const argv[], const char *in_path, const char *out_path,
                            const char *err_path, struct bench_cost *c)
{
    struct rusage ru;
    int status;
    double t0;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    t0 = bench_now_s();
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (in_path && !freopen(in_path, "r", stdin)) _exit(127);
        if (!freopen(out_path ? out_path : "/dev/null", "w", stdout)) _exit(127);
        if (err_path && !freopen(err_path, "w", stderr)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "%s: wait4: %s\n", who, strerror(errno));
            return -1;
        }
    if (c) {
        c->wall = bench_now_s() - t0;
        c->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
        c->maxrss_kb = ru.ru_maxrss;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: %s failed (%s %d)%s%s\n", who, argv[0], WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), err_path ? ", see " : "",
                err_path ? err_path : "");
        return -1;
    }
    return 0;
}

#endif /* ETL_BENCHRUN_H */
