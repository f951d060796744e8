/* SPDX-License-Identifier: MIT */
/* kfaults: the page-fault workload tests/kernel.test records: touches each of N pages of a new
   anonymous mapping (a minor fault each: huge pages refused), then reads each of N pages of a
   file in DIR mapped after its pages were dropped from the page cache (random access: no
   readahead, so a major fault each), and prints the ranges and its own getrusage counts:
     anon ADDR LEN MINFLT
     file ADDR LEN MAJFLT
   kfaults DIR [N] */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_NOHUGEPAGE */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static long faults(int major)
{
    struct rusage u;

    getrusage(RUSAGE_SELF, &u);
    return major ? u.ru_majflt : u.ru_minflt;
}

int main(int argc, char **argv)
{
    long page = sysconf(_SC_PAGESIZE), n = argc > 2 ? strtol(argv[2], NULL, 10) : 256, before;
    size_t len;
    char path[4096], *buf;
    volatile char *p;
    volatile char sink = 0;
    int fd;

    if (argc < 2 || n <= 0) {
        fprintf(stderr, "usage: kfaults DIR [N]\n");
        return 2;
    }
    len = (size_t)n * (size_t)page;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("kfaults: mmap");
        return 1;
    }
    madvise((void *)p, len, MADV_NOHUGEPAGE);
    before = faults(0);
    for (long i = 0; i < n; i++) p[i * page] = 1;
    printf("anon 0x%lx %zu %ld\n", (unsigned long)(uintptr_t)p, len, faults(0) - before);

    snprintf(path, sizeof path, "%s/kfaults.%ld", argv[1], (long)getpid());
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || !(buf = calloc(1, len))) {
        perror("kfaults: the file");
        return 1;
    }
    memset(buf, 'x', len);
    if (write(fd, buf, len) != (ssize_t)len || fsync(fd) != 0) {
        perror("kfaults: write");
        return 1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        perror("kfaults: mmap of the file");
        return 1;
    }
    madvise((void *)p, len, MADV_RANDOM);
    before = faults(1);
    for (long i = 0; i < n; i++) sink = (char)(sink + p[i * page]);
    printf("file 0x%lx %zu %ld\n", (unsigned long)(uintptr_t)p, len, faults(1) - before);
    munmap((void *)p, len);
    close(fd);
    unlink(path);
    free(buf);
    (void)sink; /* (volatile: the reads are made) */
    return 0;
}
