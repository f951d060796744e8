/* SPDX-License-Identifier: MIT */
/* kfaultkinds: the page fault kinds workload tests/kfaultkinds.test records: N anonymous pages
   first touched (a write each: N DemandZeroFaults), M pages of a private anonymous mapping it
   wrote, written again by a child after a fork (M CopyOnWrites in the child), K pages of a file
   in the page cache read through a new view (K TransitionFaults), and K pages of that file
   written through a new private view (K CopyOnWrites: the page cache's page copied). The file's
   pages touched are STRIDE (16) apart: a read fault maps the pages around its own that are in
   the page cache (fault-around, 64 KiB by default), and MADV_RANDOM does not stop that (Linux
   6.18: 7 minor faults for 100 pages read in a row). It prints what it did, each region's
   address (decimal) and getrusage's minor faults over its touches:
     pid PID
     dz_base ADDR  dz_pages N  dz_minflt F
     cow_base ADDR cow_pages M cow_pid CHILD cow_minflt F   (the child's)
     tr_base ADDR  tr_pages K*STRIDE  tr_touched K  tr_minflt F  tr_resident R   (mincore: of those touched, in memory before)
     pw_base ADDR  pw_pages K*STRIDE  pw_touched K  pw_minflt F
   kfaultkinds DIR N M K */
#define _GNU_SOURCE /* MADV_NOHUGEPAGE */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define STRIDE 16

static long minflt(void)
{
    struct rusage u;

    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static char *anon(long pages, long page)
{
    char *p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED) {
        perror("kfaultkinds: mmap");
        exit(1);
    }
    madvise(p, (size_t)(pages * page), MADV_NOHUGEPAGE); /* one fault a page */
    return p;
}

int main(int argc, char **argv)
{
    long page = sysconf(_SC_PAGESIZE), n, m, k, before, resident = 0;
    char path[4096], *dz, *cow, *buf;
    volatile char *tr, *pw;
    size_t len;
    unsigned char *vec;
    int fd, pipefd[2], status;
    pid_t child;

    if (argc != 5 || (n = atol(argv[2])) <= 0 || (m = atol(argv[3])) <= 0 || (k = atol(argv[4])) <= 0) {
        fprintf(stderr, "usage: kfaultkinds DIR N M K\n");
        return 2;
    }
    printf("pid %ld\n", (long)getpid());

    /* DemandZeroFault: a write to each of N new anonymous pages */
    dz = anon(n, page);
    before = minflt();
    for (long i = 0; i < n; i++) dz[i * page] = 1;
    printf("dz_base %lu\ndz_pages %ld\ndz_minflt %ld\n", (unsigned long)(uintptr_t)dz, n, minflt() - before);

    /* CopyOnWrite: M pages written here, written again by a child */
    cow = anon(m, page);
    for (long i = 0; i < m; i++) cow[i * page] = 1;
    if (pipe(pipefd) != 0) return 1;
    fflush(stdout);
    if ((child = fork()) < 0) return 1;
    if (child == 0) {
        long f;
        close(pipefd[0]);
        before = minflt();
        for (long i = 0; i < m; i++) cow[i * page] = 2;
        f = minflt() - before;
        if (write(pipefd[1], &f, sizeof f) != (ssize_t)sizeof f) _exit(1);
        _exit(0);
    }
    close(pipefd[1]);
    {
        long f = -1;
        if (read(pipefd[0], &f, sizeof f) != (ssize_t)sizeof f) f = -1;
        waitpid(child, &status, 0);
        printf("cow_base %lu\ncow_pages %ld\ncow_pid %ld\ncow_minflt %ld\n", (unsigned long)(uintptr_t)cow, m,
               (long)child, f);
    }

    /* TransitionFault: K pages of a file written (in the page cache), read through a new view */
    snprintf(path, sizeof path, "%s/kfaultkinds.%ld", argv[1], (long)getpid());
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || !(buf = calloc(1, (size_t)page))) {
        perror("kfaultkinds: open");
        return 1;
    }
    for (long i = 0; i < k * STRIDE; i++) {
        memset(buf, (int)('a' + i % 26), (size_t)page);
        if (write(fd, buf, (size_t)page) != (ssize_t)page) {
            perror("kfaultkinds: write");
            return 1;
        }
    }
    len = (size_t)(k * STRIDE * page);
    tr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (tr == MAP_FAILED || !(vec = calloc((size_t)(k * STRIDE), 1))) {
        perror("kfaultkinds: mmap of the file");
        return 1;
    }
    if (mincore((void *)tr, len, vec) == 0)
        for (long i = 0; i < k; i++) resident += vec[i * STRIDE] & 1;
    before = minflt();
    for (long i = 0; i < k; i++) (void)tr[i * STRIDE * page];
    printf("tr_base %lu\ntr_pages %ld\ntr_touched %ld\ntr_minflt %ld\ntr_resident %ld\n", (unsigned long)(uintptr_t)tr,
           k * STRIDE, k, minflt() - before, resident);
    /* CopyOnWrite: K pages of it written through a private view (the page cache's page copied) */
    pw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (pw == MAP_FAILED) {
        perror("kfaultkinds: mmap of the file");
        return 1;
    }
    before = minflt();
    for (long i = 0; i < k; i++) pw[i * STRIDE * page] = 'z';
    printf("pw_base %lu\npw_pages %ld\npw_touched %ld\npw_minflt %ld\n", (unsigned long)(uintptr_t)pw, k * STRIDE, k,
           minflt() - before);
    munmap((void *)pw, len);
    munmap((void *)tr, len);
    close(fd);
    unlink(path);
    free(buf);
    free(vec);
    return 0;
}
