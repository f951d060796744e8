/* SPDX-License-Identifier: MIT */
/* mkkstory: writes one of tests/kstory.h's synthetic kernel traces (processes, context switches, disk I/O, system calls, samples):  mkkstory story|exec OUT.etl */
#include <stdio.h>
#include <string.h>

#include "kstory.h"

int main(int argc, char **argv)
{
    int rc;

    if (argc != 3 || (strcmp(argv[1], "story") != 0 && strcmp(argv[1], "exec") != 0)) {
        fputs("usage: mkkstory story|exec OUT.etl\n", stderr);
        return 2;
    }
    rc = strcmp(argv[1], "story") == 0 ? kstory_write(argv[2]) : kstory_exec_write(argv[2]);
    if (rc != 0) {
        fprintf(stderr, "mkkstory: %s: cannot write\n", argv[2]);
        return 1;
    }
    return 0;
}
