/* SPDX-License-Identifier: MIT */
/* kdiskio: the disk workload tests/kernel.test records: writes MB MiB to DIR/kdiskio.PID with
   O_DIRECT from its main thread (through the page cache with an fsync after each write where
   the file system refuses O_DIRECT), then removes the file:  kdiskio DIR [MB] */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (256 * 1024)

int main(int argc, char **argv)
{
    char path[4096];
    void *buf = NULL;
    long mb = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
    int direct = 1, fd;

    if (argc < 2 || mb < 1 || mb > 1024) {
        fprintf(stderr, "usage: kdiskio DIR [MB]\n");
        return 2;
    }
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
    unlink(path);
    free(buf);
    printf("kdiskio: %ld MiB written to %s (%s)\n", mb, argv[1], direct ? "O_DIRECT" : "fsync");
    return 0;
}
