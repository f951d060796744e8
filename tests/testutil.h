/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests: test data paths, whole-file reads, expected event tables. */
#ifndef ETL_TESTUTIL_H
#define ETL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* $ETL_TESTDATA/rel (static buffer, overwritten by the next call). */
const char *testdata_path(const char *rel);
/* Reads a whole file (gunzipped if it is .gz); NULL on failure. Free with free(). */
uint8_t *test_read_file(const char *path, size_t *size);

/* One line of expected/NAME.events.tsv.gz; -1 for an empty column. */
struct expected_event {
    int64_t buf, ts, cpu;
    char kind[16];
    char provider[40];
    int64_t id, version, opcode, level, pid, tid, payload_len;
};
/* Parses the table; returns the number of events, or -1. *out is malloc'ed. */
long test_read_expected(const char *path, struct expected_event **out);
/* The same columns for an event the reader delivered. */
void test_event_row(const etl_event *ev, struct expected_event *row);
/* Formats a row as the table's line (for messages). */
void test_row_format(const struct expected_event *row, char *out, size_t size);
int test_row_cmp(const void *a, const void *b);

/* Reads every event of a reader; returns how many, counts WARN results in *warns. */
long test_count_events(etl_reader *r, unsigned *warns);

/* A source over memory that counts what the reader asks of it. */
struct test_counting_source {
    const uint8_t *data;
    size_t size;
    uint64_t bytes, calls;
    size_t largest;
    int closed;
};
/* Fills src to read c (whose data and size are set; the counters are zeroed). */
void test_counting_source(struct test_counting_source *c, etl_reader_source *src);

/* A fresh directory under $TMPDIR (or /tmp) for one test; test_dir_path names a file in it
   (four rotating static buffers); test_dir_remove deletes it and what it holds. */
const char *test_dir_create(void);
const char *test_dir_path(const char *name);
int test_dir_remove(void);

/* Whether text[0..n) is one JSON value (RFC 8259: objects, arrays, strings with their escapes,
   numbers, true, false, null; whitespace around) in valid UTF-8 with nothing after it: 0, or -1
   with what is wrong and where in err. */
int test_json_check(const char *text, size_t n, char *err, size_t err_size);
/* Reads the file at path into memory (NUL-terminated; *size without the NUL): NULL on failure. */
char *test_read_text(const char *path, size_t *size);

#endif
