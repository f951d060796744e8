/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the output formats' files share (the public face is etl/output.h).
   One file per format family: dump.c (event lines), summary.c, normalize.c, diff.c and
   diffwrite.c (the comparison); a new one (flame graph, pprof, timeline) goes beside them, uses
   reader/ and format/ only, and writes to the caller's FILE *. */
#ifndef LIBETL_OUTPUT_H
#define LIBETL_OUTPUT_H
#ifndef ETL_BUILDING_LIBRARY
#error "output/output.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "etl.h"

/* What a writer of the output formats returns: ETL_FATAL once a write to f has failed. */
static inline int output_status(FILE *f)
{
    return ferror(f) ? ETL_FATAL : ETL_OK;
}

/* ---- The comparison of two traces: diff.c compares, diffwrite.c writes the result ---- */

/* Beyond this many differences between the common head and tail, the middle is shown as
   replaced as a whole: the edit-distance search keeps (D + 1)^2 positions. */
#define DIFF_MAX_EDIT_DISTANCE 3000

/* A row of the count table: one (provider, kind, id, opcode). */
struct diff_count_row {
    etl_guid provider;
    int has_provider;
    int kind;
    int32_t id;                 /* -1: the header has no id */
    uint8_t opcode;
    uint64_t n[2];              /* in A, in B */
    int used;
};

/* One step of the edit script: '=' both, '-' only in A, '+' only in B; a and b are the
   events' 0-based numbers among the compared ones. */
struct diff_edit {
    char op;
    size_t a, b;
};

struct diff_script {
    struct diff_edit *e;
    size_t n, cap;
    size_t differences;         /* '-' and '+' steps */
    int approximate;            /* the middle was too different: shown as replaced */
};

/* One trace. */
struct diff_side {
    char *path;
    etl_reader *r;
    etl_normalizer *nz;
    uint64_t *hash;             /* of each compared event's line */
    size_t n, cap;
    int damaged;
    etl_diff *d;
};

struct etl_diff {
    etl_diff_options o;         /* its normalize lists are not kept (the normalizers copied them) */
    struct diff_side side[2];
    struct diff_count_row *table; /* counts of both traces, open addressing */
    unsigned table_cap, table_used;
    struct diff_count_row *rows;  /* the rows that differ, sorted */
    size_t nrows;
    struct diff_script script;
    const char *error;          /* error_copy, or a constant when even the copy failed */
    char *error_copy;
};

/* Keeps a copy of message as d's error ("out of memory" when even the copy fails). */
void diff_set_error(etl_diff *d, const char *message);
/* What etldiff has always said when the comparison, or the lines it shows, ran out of memory. */
#define DIFF_OUT_OF_MEMORY_OR_REREAD "out of memory, or a trace could not be read again"

/* The lines of the compared events of side k whose numbers are in want[0..n) (sorted), read
   again; out[i] is malloc'ed. 0, or -1 without memory or when the trace cannot be read again. */
int diff_side_lines(etl_diff *d, int k, const size_t *want, size_t n, char **out);

#endif
