/* SPDX-License-Identifier: MIT */
/* mkfnstory: builds tests/fnstory.h's program in DIR and writes the trace of its samples and stacks (with --no-stacks, its samples alone), whose symbols etl2sqlite and etl2clickhouse resolve:  mkfnstory [--no-stacks] DIR OUT.etl */
#include <stdio.h>
#include <string.h>

#include "fnstory.h"

int main(int argc, char **argv)
{
    struct fnstory g;
    int flat = argc == 4 && strcmp(argv[1], "--no-stacks") == 0;

    argv += flat;
    argc -= flat;
    if (argc != 3) {
        fputs("usage: mkfnstory [--no-stacks] DIR OUT.etl\n", stderr);
        return 2;
    }
    if (fnstory_build(argv[1], &g) != 0) {
        fprintf(stderr, "mkfnstory: %s: cannot build the program\n", argv[1]);
        return 1;
    }
    if ((flat ? fnstory_write_flat : fnstory_write)(argv[2], &g, 0x555500000000ull) != 0) {
        fprintf(stderr, "mkfnstory: %s: cannot write\n", argv[2]);
        return 1;
    }
    return 0;
}
