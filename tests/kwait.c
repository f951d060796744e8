/* SPDX-License-Identifier: MIT */
/* kwait: the workload tests/kmemory.test records for CSwitch's wait fields: sleeps N times for
   MS milliseconds (nanosleep: an interruptible sleep), spinning 2 ms after each, and prints its
   thread and how long each sleep took by its own monotonic clock:
     thread TID
     slept NS
   kwait [N [MS]] */
#define _GNU_SOURCE /* gettid */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
    double ms = argc > 2 ? strtod(argv[2], NULL) : 257.8;
    struct timespec d;

    if (n <= 0 || n > 1000 || !(ms > 0) || ms > 10000) {
        fprintf(stderr, "usage: kwait [N [MS]]\n");
        return 2;
    }
    d.tv_sec = (time_t)(ms / 1000);
    d.tv_nsec = (long)((ms - (double)d.tv_sec * 1000) * 1e6);
    printf("thread %d\n", (int)gettid());
    for (long i = 0; i < n; i++) {
        long long t0 = now_ns(), t1, end;
        nanosleep(&d, NULL);
        t1 = now_ns();
        printf("slept %lld\n", t1 - t0);
        for (end = t1 + 2000000; now_ns() < end;) {}
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
