/* SPDX-License-Identifier: MIT */
/* Writes what browser.test opens: a flame as speedscope's JSON or an SVG, a trace's Chrome timeline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"

/*
 *   mkflame speedscope|svg OUT    a profile of two threads of "spin" whose hot functions are
 *                                 hot1 (55%), hot2 (24%) and hot3 (15%), with a memcpy
 *   mkflame broken OUT            the same speedscope JSON cut in the middle
 *   mkflame chrome TRACE OUT      the timeline of TRACE (etl_chrome_write, with a decoder)
 * Exit 0, or 1 with a message.
 */

static const struct { const char *profile, *stack; unsigned count; } stacks[] = {
    { "spin (4242) tid 4242", "_start;__libc_start_main;main;hot1;work", 300 },
    { "spin (4242) tid 4242", "_start;__libc_start_main;main;hot2;work", 200 },
    { "spin (4242) tid 4242", "_start;__libc_start_main;main;hot3", 120 },
    { "spin (4242) tid 4243", "start_thread;worker;hot1;work", 150 },
    { "spin (4242) tid 4243", "start_thread;worker;memcpy", 50 },
};

static etl_flame *example(void)
{
    etl_flame *fl = etl_flame_new();

    for (size_t i = 0; fl && i < sizeof stacks / sizeof *stacks; i++) {
        etl_flame_frame fr[8];
        char buf[200], *save = NULL;
        unsigned n = 0;
        snprintf(buf, sizeof buf, "%s", stacks[i].stack);
        for (char *t = strtok_r(buf, ";", &save); t && n < 8; t = strtok_r(NULL, ";", &save))
            fr[n++] = (etl_flame_frame){ t, NULL, 0 };
        if (etl_flame_add(fl, stacks[i].profile, fr, n, stacks[i].count) != ETL_OK) {
            etl_flame_free(fl);
            return NULL;
        }
    }
    return fl;
}

int main(int argc, char **argv)
{
    FILE *f;
    int rc;

    if (argc < 3 || (strcmp(argv[1], "chrome") == 0 && argc != 4)) {
        fprintf(stderr, "usage: mkflame speedscope|svg|broken OUT | mkflame chrome TRACE OUT\n");
        return 1;
    }
    if (!(f = fopen(argv[argc - 1], "w"))) {
        perror(argv[argc - 1]);
        return 1;
    }
    if (strcmp(argv[1], "chrome") == 0) {
        etl_reader *r = NULL;
        etl_decoder *dec = NULL;
        etl_chrome_options o;
        if (etl_reader_open_path(&r, argv[2], NULL) != ETL_OK) {
            fprintf(stderr, "mkflame: %s: %s\n", argv[2], r ? etl_reader_error(r) : "out of memory");
            return 1;
        }
        etl_decoder_open(&dec, NULL);
        etl_chrome_options_init(&o);
        o.decoder = dec;
        rc = etl_chrome_write(f, r, &o, NULL);
        etl_reader_close(r);
        etl_decoder_close(dec);
    } else {
        etl_flame *fl = example();
        if (!fl) return 1;
        if (strcmp(argv[1], "svg") == 0) {
            rc = etl_flame_write_svg(fl, f, "spin", 1200);
        } else {
            char *text = NULL;
            size_t n = 0;
            FILE *m = open_memstream(&text, &n);
            rc = m ? etl_flame_write_speedscope(fl, m, "spin") : ETL_FAILED;
            if (m) fclose(m);
            if (text) fwrite(text, 1, strcmp(argv[1], "broken") == 0 ? n / 2 : n, f);
            free(text);
        }
        etl_flame_free(fl);
    }
    if (fclose(f) != 0 || rc != ETL_OK) {
        fprintf(stderr, "mkflame: writing %s failed (%d)\n", argv[argc - 1], rc);
        return 1;
    }
    return 0;
}
