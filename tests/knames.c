/* SPDX-License-Identifier: MIT */
/* knames: the naming workload tests/kernel.test records: its main thread renames itself
   "knames-main" (prctl PR_SET_NAME), starts a thread that renames itself "knames-worker"
   (pthread_setname_np) and calls getppid N times through syscall(2) (no library cache), waits
   for it, and prints the worker's tid and N:  knames [N] */
#define _GNU_SOURCE /* pthread_setname_np, gettid */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls = 1000;
static long worker_tid;

static void *work(void *arg)
{
    (void)arg;
    worker_tid = syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), "knames-worker");
    for (long i = 0; i < calls; i++) syscall(SYS_getppid);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;

    if (argc > 1) calls = strtol(argv[1], NULL, 10);
    if (prctl(PR_SET_NAME, "knames-main") != 0 || pthread_create(&t, NULL, work, NULL) != 0) {
        perror("knames");
        return 1;
    }
    pthread_join(t, NULL);
    printf("%ld %ld\n", worker_tid, calls);
    return 0;
}
