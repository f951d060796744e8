/* SPDX-License-Identifier: MIT */
/* kspin: the workload tests/kernel.test records: two threads that spin, then sleep, then spin, for about MS ms:  kspin [MS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long duration_ms = 300;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Kept out of line so that samples land in a function of this program. */
__attribute__((noinline)) static unsigned long spin(double until)
{
    volatile unsigned long n = 0;

    while (now_ms() < until)
        for (int i = 0; i < 10000; i++) n += (unsigned long)i;
    return n;
}

static void *worker(void *arg)
{
    struct timespec nap = { 0, 5000000 };
    unsigned long total = 0;
    double end = now_ms() + (double)duration_ms;

    (void)arg;
    /* Spin and sleep in turns, so that the thread is switched out and readied again. */
    while (now_ms() < end) {
        total += spin(now_ms() + 20);
        nanosleep(&nap, NULL);
    }
    return (void *)total;
}

int main(int argc, char **argv)
{
    pthread_t t[2];

    if (argc > 1) duration_ms = strtol(argv[1], NULL, 10);
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            fprintf(stderr, "kspin: cannot start a thread\n");
            return 1;
        }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
