/* SPDX-License-Identifier: MIT */
/* kvmem: the workload tests/kmemory.test records for virtual_alloc and vamap: N anonymous
   mappings of PAGES pages each, unmapped; N views of a file in DIR of PAGES pages, held a
   while (so that the capture sees them in /proc) and unmapped; the break grown N times by
   PAGES pages and shrunk back once; one anonymous mapping grown in place or moved by mremap.
   It prints what it did, one line each:
     anon ADDR LEN
     file ADDR LEN PATH
     brk FROM TO
     mremap OLD OLDLEN NEW NEWLEN
   kvmem DIR [N [PAGES]] */
#define _GNU_SOURCE /* MAP_ANONYMOUS, mremap */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long page = sysconf(_SC_PAGESIZE), n = argc > 2 ? strtol(argv[2], NULL, 10) : 16,
         pages = argc > 3 ? strtol(argv[3], NULL, 10) : 37;
    size_t len;
    char path[4096];
    void **views;
    int fd;

    if (argc < 2 || n <= 0 || n > 4096 || pages <= 0 || pages > 4096) {
        fprintf(stderr, "usage: kvmem DIR [N [PAGES]]\n");
        return 2;
    }
    len = (size_t)pages * (size_t)page;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16); /* before anything is printed: its buffer allocated now */
    for (long i = 0; i < n; i++) {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("kvmem: mmap"); return 1; }
        p[0] = 1;
        printf("anon %llu %zu\n", (unsigned long long)(uintptr_t)p, len);
        munmap(p, len);
    }

    snprintf(path, sizeof path, "%s/kvmem.%ld", argv[1], (long)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) { perror(path); return 1; }
    views = calloc((size_t)n, sizeof *views);
    if (!views) return 1;
    for (long i = 0; i < n; i++) {
        views[i] = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        if (views[i] == MAP_FAILED) { perror("kvmem: mmap of the file"); return 1; }
        printf("file %llu %zu %s\n", (unsigned long long)(uintptr_t)views[i], len, path);
    }
    close(fd);
    nanosleep(&(struct timespec){ 0, 300000000 }, NULL); /* the views stay while the capture reads /proc */
    for (long i = 0; i < n; i++) munmap(views[i], len);
    free(views);
    unlink(path);

    {
        char *start = sbrk(0), *at = start;
        for (long i = 0; i < n; i++) {
            if (sbrk((intptr_t)len) == (void *)-1) { perror("kvmem: sbrk"); return 1; }
            printf("brk %llu %llu\n", (unsigned long long)(uintptr_t)at, (unsigned long long)(uintptr_t)(at + len));
            at += len;
        }
        if (brk(start) != 0) { perror("kvmem: brk"); return 1; }
        printf("brk %llu %llu\n", (unsigned long long)(uintptr_t)at, (unsigned long long)(uintptr_t)start);
    }

    {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;
        if (p == MAP_FAILED) { perror("kvmem: mmap"); return 1; }
        printf("anon %llu %zu\n", (unsigned long long)(uintptr_t)p, len);
        q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
        if (q == MAP_FAILED) { perror("kvmem: mremap"); return 1; }
        printf("mremap %llu %zu %llu %zu\n", (unsigned long long)(uintptr_t)p, len, (unsigned long long)(uintptr_t)q,
               2 * len);
        munmap(q, 2 * len);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
