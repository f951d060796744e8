/* SPDX-License-Identifier: MIT */
/* khardfault: the hard-fault workload tests/khardfault.test records: makes a file of N pages in
   DIR, drops it from the page cache, maps it and reads every STRIDE-th page from the last to the
   first (MODE random: MADV_RANDOM, one page read per fault; seq: the kernel's readahead), then
   keeps the view for a second (the capture names a file from the views of it that are there
   when it handles the fault) and prints what it did:
     file PATH
     tid TID
     base ADDR            (the view's address, decimal)
     page OFFSET          (each page touched, in bytes, in the order touched)
     touched K
     resident_before R    (of the pages touched, those mincore said were in memory first)
     majflt M             (getrusage's major faults over the touches)
   khardfault DIR N STRIDE random|seq */
#define _GNU_SOURCE /* gettid, MADV_RANDOM */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long majflt(void)
{
    struct rusage u;

    getrusage(RUSAGE_SELF, &u);
    return u.ru_majflt;
}

int main(int argc, char **argv)
{
    long page = sysconf(_SC_PAGESIZE), n, stride, before, resident = 0, touched = 0;
    size_t len;
    char path[4096], *buf;
    unsigned char *vec;
    volatile char *p;
    volatile char sink = 0;
    struct timespec second = { 1, 0 };
    int fd, random_access;

    if (argc != 5 || (n = strtol(argv[2], NULL, 10)) <= 0 || (stride = strtol(argv[3], NULL, 10)) <= 0 ||
        (strcmp(argv[4], "random") != 0 && strcmp(argv[4], "seq") != 0)) {
        fprintf(stderr, "usage: khardfault DIR N STRIDE random|seq\n");
        return 2;
    }
    random_access = strcmp(argv[4], "random") == 0;
    len = (size_t)n * (size_t)page;
    snprintf(path, sizeof path, "%s/khardfault.%ld", argv[1], (long)getpid());
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || !(buf = malloc(len)) ||
        !(vec = malloc((size_t)n))) {
        perror("khardfault: the file");
        return 1;
    }
    for (long i = 0; i < n; i++) memset(buf + i * page, 'a' + (int)(i % 26), (size_t)page);
    if (write(fd, buf, len) != (ssize_t)len || fsync(fd) != 0) {
        perror("khardfault: write");
        return 1;
    }
    /* written back (fsync), its clean pages can be dropped */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("khardfault: mmap");
        return 1;
    }
    madvise((void *)p, len, random_access ? MADV_RANDOM : MADV_NORMAL);
    if (mincore((void *)p, len, vec) != 0) {
        perror("khardfault: mincore");
        return 1;
    }
    printf("file %s\ntid %ld\nbase %lu\n", path, (long)gettid(), (unsigned long)(uintptr_t)p);
    for (long i = (n - 1) / stride * stride; i >= 0; i -= stride) resident += vec[i] & 1;
    before = majflt();
    for (long i = (n - 1) / stride * stride; i >= 0; i -= stride) {
        sink = (char)(sink + p[i * page]);
        touched++;
    }
    before = majflt() - before;
    for (long i = (n - 1) / stride * stride; i >= 0; i -= stride) printf("page %ld\n", i * page);
    printf("touched %ld\nresident_before %ld\nmajflt %ld\n", touched, resident, before);
    fflush(stdout);
    nanosleep(&second, NULL);
    munmap((void *)p, len);
    close(fd);
    unlink(path);
    free(buf);
    free(vec);
    (void)sink; /* (volatile: the reads are made) */
    return 0;
}
