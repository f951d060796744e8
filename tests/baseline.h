/* SPDX-License-Identifier: MIT */
/* Reading TraceEvent's decoded listings (testdata/baselines): its numbers, cut texts and times, and one listed field against a decoded one. */
#ifndef ETL_TEST_BASELINE_H
#define ETL_TEST_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* A number as TraceEvent prints it ("65,536", "-120", "0x1b0f1000028"): 1 and *out (a negative
   one as its two's complement), or 0 when s is not one. */
int baseline_number(const char *s, uint64_t *out);
/* ours equals a listed text, which TraceEvent cuts at 20 characters and ends with "...". */
int baseline_text_equal(const char *ours, const char *listed);
/* A FILETIME as TraceEvent lists it: "yy/MM/dd HH:mm:ss.ff" (UTC, as the listings show). */
void baseline_time(uint64_t filetime, char *out, size_t size);
/*
 * A decoded field against its listed value: integers equal modulo 2^bits (TraceEvent prints
 * unsigned integers as signed ones), booleans True/False, a mapped value by its names (bit
 * names joined with ", "), FILETIME to the hundredth, SYSTEMTIME to the second (TraceEvent
 * shows its milliseconds wrong), strings and GUIDs as cut texts. 1 when equal; else 0 and a
 * message in why.
 */
int baseline_field_equal(const etl_field *f, const char *listed, char *why, size_t size);

#endif
