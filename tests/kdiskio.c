/* SPDX-License-Identifier: MIT */
/* kdiskio: the disk workload tests/kernel.test records: writes MB MiB to DIR/kdiskio.PID with
   O_DIRECT from its main thread (through the page cache with an fsync after each write where
   the file system refuses O_DIRECT), then removes the file; with "busy", a thread spins on
   each processor meanwhile, so that none is idle when a disk interrupt comes (some kernels
   write no perf sample of an event that fires in the idle task):  kdiskio DIR [MB [busy]] */
#define _GNU_SOURCE /* O_DIRECT, CPU_SET */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

static atomic_int done;

/* Spins on processor (long)arg until the writes are done. */
static void *spin(void *arg)
{
    cpu_set_t set;
    volatile unsigned long n = 0;

    CPU_ZERO(&set);
    CPU_SET((int)(long)arg, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    while (!atomic_load_explicit(&done, memory_order_relaxed)) n++;
    return NULL;
}

int main(int argc, char **argv)
{
    char path[4096];
    void *buf = NULL;
    long mb = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
    int direct = 1, fd, busy = argc > 3 && strcmp(argv[3], "busy") == 0;
    pthread_t spinners[CPU_SETSIZE];
    int nspin = 0;
    cpu_set_t cpus;

    if (argc < 2 || mb < 1 || mb > 1024 || (argc > 3 && !busy)) {
        fprintf(stderr, "usage: kdiskio DIR [MB [busy]]\n");
        return 2;
    }
    CPU_ZERO(&cpus);
    if (busy && sched_getaffinity(0, sizeof cpus, &cpus) == 0)
        for (long cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &cpus) && pthread_create(&spinners[nspin], NULL, spin, (void *)cpu) == 0) nspin++;
    snprintf(path, sizeof path, "%s/kdiskio.%ld", argv[1], (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
    if (fd < 0 && errno == EINVAL) {
        direct = 0;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    }
    if (fd < 0 || posix_memalign(&buf, 4096, CHUNK) != 0) {
        fprintf(stderr, "kdiskio: %s: %s\n", path, strerror(errno));
        return 1;
    }
    memset(buf, 0x5A, CHUNK);
    for (long i = 0; i < mb * (1024 * 1024 / CHUNK); i++)
        if (write(fd, buf, CHUNK) != CHUNK || (!direct && fsync(fd) != 0)) {
            fprintf(stderr, "kdiskio: writing %s: %s\n", path, strerror(errno));
            unlink(path);
            return 1;
        }
    if (fsync(fd) != 0 || close(fd) != 0) fprintf(stderr, "kdiskio: %s: %s\n", path, strerror(errno));
    atomic_store(&done, 1);
    for (int i = 0; i < nspin; i++) pthread_join(spinners[i], NULL);
    unlink(path);
    free(buf);
    printf("kdiskio: %ld MiB written to %s (%s)\n", mb, argv[1], direct ? "O_DIRECT" : "fsync");
    return 0;
}
