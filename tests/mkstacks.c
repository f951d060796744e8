/* SPDX-License-Identifier: MIT */
/*
 * mkstacks: writes a synthetic kernel trace of process "app"'s samples with their stacks
 * (tests/stacks.h), for etldiff --stacks's tests:
 *     mkstacks OUT.etl [COUNT:ADDR,ADDR,...]...
 * each argument COUNT samples with the stack of those addresses in hex, innermost first
 * ("30:0x401000,0x402000": 30 samples that hit app.exe+0x1000, called from app.exe+0x2000).
 * No argument: the process and its image, no sample.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

static int parse(const char *text, struct stacks_sample *out)
{
    char *end;
    unsigned long count;
    const char *p;

    memset(out, 0, sizeof *out);
    errno = 0;
    count = strtoul(text, &end, 10);
    if (errno || end == text || *end != ':' || count == 0 || count > 0xFFFF) return -1;
    out->count = (uint16_t)count;
    for (p = end + 1;; p = end + 1) {
        unsigned long long a;
        if (out->nframes == STACKS_MAX_FRAMES) return -1;
        errno = 0;
        a = strtoull(p, &end, 16);
        if (errno || end == p) return -1;
        out->frames[out->nframes++] = a;
        if (*end == '\0') return 0;
        if (*end != ',') return -1;
    }
}

int main(int argc, char **argv)
{
    struct stacks_sample *samples;
    uint8_t *file;
    size_t size, n = argc > 2 ? (size_t)argc - 2 : 0;
    FILE *f;

    if (argc < 2) {
        fputs("usage: mkstacks OUT.etl [COUNT:ADDR,ADDR,...]...\n", stderr);
        return 2;
    }
    samples = calloc(n ? n : 1, sizeof *samples);
    if (!samples) return 2;
    for (size_t i = 0; i < n; i++)
        if (parse(argv[i + 2], &samples[i]) != 0) {
            fprintf(stderr, "mkstacks: '%s' is not COUNT:ADDR,ADDR,... (hex addresses, innermost first)\n", argv[i + 2]);
            free(samples);
            return 2;
        }
    file = stacks_trace(samples, n, &size);
    free(samples);
    if (!file) {
        fputs("mkstacks: out of memory\n", stderr);
        return 2;
    }
    f = fopen(argv[1], "wb");
    if (!f || fwrite(file, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "mkstacks: %s: cannot write\n", argv[1]);
        free(file);
        return 2;
    }
    free(file);
    return 0;
}
