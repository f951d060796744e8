/* SPDX-License-Identifier: MIT */
/* Event and trace formatting shared by the tools (text, JSON lines, CSV, summary). Private to tools/. */
#ifndef ETL_TOOLS_DUMP_H
#define ETL_TOOLS_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "etl.h"

enum dump_format { DUMP_TEXT = 0, DUMP_JSONL, DUMP_CSV };

/* Parses "text", "jsonl" (or "json"), "csv"; -1 if unknown. */
int dump_format_parse(const char *name);

/* The column line of the CSV format (with newline). */
void dump_csv_header(FILE *f);

/* One event as one line (text, JSON object or CSV row) with newline. Decoded kernel events show
   their fields (text, JSON); map (may be NULL) resolves sample and stack addresses to images. */
void dump_event(FILE *f, int format, const etl_reader *r, const etl_event *ev, etl_image_map *map);

/* What --summary counts while reading. */
struct dump_counts {
    uint64_t events;
    uint64_t by_kind[8];      /* indexed by enum etl_event_kind */
    uint64_t payload_bytes;
    int64_t min_ts, max_ts;
    unsigned nproviders, providers_cap;
    struct dump_provider_count { etl_guid guid; uint64_t events; } *providers;
};

void dump_counts_init(struct dump_counts *c);
/* Counts ev; returns 0, or -1 when out of memory. */
int dump_counts_add(struct dump_counts *c, const etl_event *ev);
void dump_counts_free(struct dump_counts *c);

/* The --summary JSON object (one line) for a file. */
void dump_summary(FILE *f, const char *path, const etl_reader *r, const struct dump_counts *c);

/* JSON string literal of s (UTF-8 passes through, control characters escaped). */
void dump_json_string(FILE *f, const char *s);

#endif
