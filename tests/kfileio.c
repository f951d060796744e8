/* SPDX-License-Identifier: MIT */
/* kfileio DIR N: the file I/O workload of kfileio.test: creates N files in DIR, writes and reads known byte counts, renames some and deletes others (the odd ones by paths relative to DIR, its cwd), and prints its own figures (per path: bytes written and read, opens and closes (every fourth file read through a dup'ed descriptor; x0 opened by a child that exits without closing it; a pipe used after each file's last close); counts of opens, renames and deletes). kfileio --map FILE: kfilekey.test's: opens, writes, reads and maps the one FILE, and prints its pid and the view's address and size. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, const char *path)
{
    perror(what);
    fprintf(stderr, "kfileio: %s\n", path);
    return 1;
}

/* --map FILE: FILE created and written (8 pages), read back, mapped shared and touched, the view
   (and the descriptor) held 300 ms (the capture names it from /proc meanwhile), the descriptor
   closed, the view unmapped (the file released). */
static int map_one(const char *path)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = 8 * (size_t)page;
    char *buf = malloc(len), *view;
    volatile char sum = 0;
    int fd;

    if (!buf) return 1;
    memset(buf, 'm', len);
    if ((fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644)) < 0) return fail("open", path);
    if (write(fd, buf, len) != (ssize_t)len) return fail("write", path);
    if (pread(fd, buf, len, 0) != (ssize_t)len) return fail("pread", path);
    if ((view = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) return fail("mmap", path);
    for (size_t o = 0; o < len; o += (size_t)page) sum += view[o];
    (void)sum;
    printf("pid %ld view %llu %zu\n", (long)getpid(), (unsigned long long)(uintptr_t)view, len);
    fflush(stdout);
    nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
    close(fd); /* (the view holds the file: it is released at the munmap) */
    munmap(view, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    char path[4096], to[4096], name[64], toname[64], buf[1000];
    int n, opens = 0, renames = 0, deletes = 0;

    if (argc == 3 && strcmp(argv[1], "--map") == 0) return map_one(argv[2]);
    if (argc != 3 || (n = atoi(argv[2])) <= 0) {
        fprintf(stderr, "usage: kfileio DIR N | kfileio --map FILE\n");
        return 2;
    }
    memset(buf, 'x', sizeof buf);
    if (chdir(argv[1]) != 0) return fail("chdir", argv[1]);
    for (int i = 0; i < n; i++) {
        long want = 1000L * (i + 1) + i, wrote = 0, got = 0;
        ssize_t r;
        int fd;
        snprintf(path, sizeof path, "%s/f%d", argv[1], i);
        snprintf(name, sizeof name, "f%d", i);
        const char *p = i % 2 ? name : path; /* what the calls are given */
        /* written in writes of at most 1000 bytes */
        if ((fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644)) < 0) return fail("open", path);
        opens++;
        while (wrote < want) {
            size_t len = want - wrote < (long)sizeof buf ? (size_t)(want - wrote) : sizeof buf;
            if ((r = write(fd, buf, len)) <= 0) return fail("write", path);
            wrote += r;
        }
        if (i % 2 == 0 && fsync(fd) != 0) return fail("fsync", path);
        close(fd);
        /* read back in reads of 512 bytes, to the end (the last read gives 0); every fourth
           file through a dup of the descriptor, the first closed before (two closes, the
           file released at the second) */
        if ((fd = open(p, O_RDONLY)) < 0) return fail("open", path);
        opens++;
        if (i % 4 == 0) {
            int fd2 = dup(fd);
            if (fd2 < 0) return fail("dup", path);
            close(fd);
            fd = fd2;
        }
        while ((r = read(fd, buf, 512)) > 0) got += r;
        close(fd);
        /* a pipe (no Create: no path), whose struct files may be at the address the file's
           had: 7 bytes through it are no file's */
        {
            int pfd[2];
            char seven[7];
            if (pipe(pfd) != 0) return fail("pipe", path);
            if (write(pfd[1], "through", 7) != 7 || read(pfd[0], seven, 7) != 7) return fail("pipe I/O", path);
            close(pfd[0]);
            close(pfd[1]);
        }
        printf("%s written %ld read %ld\n", path, wrote, got);
        printf("%s opened 2 closed %d\n", path, i % 4 == 0 ? 3 : 2);
        if (i % 3 == 0) {
            snprintf(to, sizeof to, "%s/r%d", argv[1], i);
            snprintf(toname, sizeof toname, "r%d", i);
            if (rename(p, i % 2 ? toname : to) != 0) return fail("rename", path);
            renames++;
            printf("%s renamed %s\n", path, to);
        } else if (i % 3 == 1) {
            if (unlink(p) != 0) return fail("unlink", path);
            deletes++;
            printf("%s deleted\n", path);
        }
    }
    /* a child opens x0 and exits without closing it: its exit closes the descriptor (a
       Cleanup) and releases the file (a Close) */
    {
        pid_t child;
        int status;
        snprintf(path, sizeof path, "%s/x0", argv[1]);
        fflush(stdout);
        if ((child = fork()) < 0) return fail("fork", path);
        if (child == 0) _exit(open(path, O_CREAT | O_WRONLY, 0644) < 0 ? 1 : 0);
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return fail("open in a child", path);
        opens++;
        printf("%s opened 1 closed 1\n", path);
    }
    printf("opens %d renames %d deletes %d\n", opens, renames, deletes);
    return 0;
}
