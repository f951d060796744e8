/* SPDX-License-Identifier: MIT */
/* kspin: the workload tests/kernel.test records: two threads that spin, then sleep, then spin, for about MS ms,
   after mapping its own program as code once more and unmapping it in two steps (what dlopen and dlclose
   do), printing where, and at its end the processor time it used (all threads, from getrusage); it exits
   with STATUS:  kspin [MS [STATUS]] */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

/* Maps the first three pages of the program as code, unmaps the first (the rest of the code
   stays: no unload) and then the rest (the image unloads). Prints the address. */
static int map_and_unmap(void)
{
    long page = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    char *m;

    if (fd < 0) return -1;
    m = mmap(NULL, (size_t)(3 * page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    printf("kspin: mapped %p\n", (void *)m);
    fflush(stdout);
    if (munmap(m, (size_t)page) != 0 || munmap(m + page, (size_t)(2 * page)) != 0) return -1;
    return 0;
}

int main(int argc, char **argv)
{
    pthread_t t[2];
    struct rusage ru;

    if (argc > 1) duration_ms = strtol(argv[1], NULL, 10);
    if (map_and_unmap() != 0) {
        perror("kspin: mapping its program");
        return 1;
    }
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
            fprintf(stderr, "kspin: cannot start a thread\n");
            return 1;
        }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("kspin: cpu %lld us\n", (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
                                         ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    return argc > 2 ? (int)strtol(argv[2], NULL, 10) : 0;
}
