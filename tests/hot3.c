/* SPDX-License-Identifier: MIT */
/* hot3: the workload tests/etlprof.test profiles: one thread that spends about MS ms in three functions of its own, hot_a, hot_b and hot_c, in shares of 5:3:2:  hot3 [MS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
/* The batch sizes, read at run time so that the compiler makes no copy of a function per size. */
static volatile unsigned long rounds_a = 5000, rounds_b = 3000, rounds_c = 2000;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Each kept out of line, each spinning a given number of rounds of plain arithmetic (no calls:
   a sample's innermost frame is the function itself). The variable on the stack makes GCC set
   up the function's frame, which it leaves out of a leaf function that uses no stack even with
   -fno-omit-frame-pointer: without it, a walk of the frame pointers skips main. */
__attribute__((noinline)) static void hot_a(unsigned long rounds)
{
    volatile unsigned long n = sink;
    for (unsigned long i = 0; i < rounds; i++) n = n * 6364136223846793005ul + i;
    sink = n;
}

__attribute__((noinline)) static void hot_b(unsigned long rounds)
{
    volatile unsigned long n = sink;
    for (unsigned long i = 0; i < rounds; i++) n = n * 2862933555777941757ul + i;
    sink = n;
}

__attribute__((noinline)) static void hot_c(unsigned long rounds)
{
    volatile unsigned long n = sink;
    for (unsigned long i = 0; i < rounds; i++) n = n * 3202034522624059733ul + i;
    sink = n;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 2000;
    double until = now_ms() + (double)ms;

    /* Rounds in the ratio 5:3:2, each batch a few microseconds: far shorter than a sampling
       period (250 us in etlprof.test), so that periodic sampling does not beat with the loop.
       With batches ten times longer (near one period), perf's samples and etlprof's of the
       same run differed by 2.6 points for hot_a (46.56% against 49.16%). */
    while (now_ms() < until) {
        hot_a(rounds_a);
        hot_b(rounds_b);
        hot_c(rounds_c);
    }
    printf("%lu\n", sink & 1);
    return 0;
}
