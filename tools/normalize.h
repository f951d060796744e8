/* SPDX-License-Identifier: MIT */
/* Events as normalized lines, the form etldiff compares and `etldump --normalize` prints:
   what a build decides about an event, without what differs on every run. Private to tools/. */
#ifndef ETL_TOOLS_NORMALIZE_H
#define ETL_TOOLS_NORMALIZE_H

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* Fields (bits of norm_options.ignore and .raw). */
#define NORM_TS      0x01u /* the time since the first compared event */
#define NORM_PID     0x02u
#define NORM_TID     0x04u
#define NORM_CPU     0x08u
#define NORM_PAYLOAD 0x10u

/* Parses "ts,pid,payload" into bits; -1 when a name is unknown (*bad then points at it). */
int norm_fields_parse(const char *list, unsigned *out, const char **bad);

/* A provider given on the command line: a GUID, or a name etl_guid_name knows. */
int norm_provider_parse(const char *text, etl_guid *out);

struct norm_event_key {
    etl_guid provider;
    uint16_t id; /* EVENT_HEADER events: the id; others: the opcode */
};

typedef struct norm_options {
    unsigned ignore;            /* NORM_*: left out of the line. Default NORM_TS | NORM_CPU */
    unsigned raw;               /* NORM_PID, NORM_TID: raw values instead of P1, T1, ... */
    int all_events;             /* keep the session's header events (EventTrace group) */
    etl_guid *only;             /* compare only these providers (none: all) */
    unsigned nonly;
    etl_guid *skip;             /* leave these providers out */
    unsigned nskip;
    struct norm_event_key *skip_events; /* leave these events out */
    unsigned nskip_events;
    int64_t from_ns, to_ns;     /* window, ns after the first compared event (INT64_MIN/MAX: open) */
} norm_options;

/* The defaults: timestamps and processors ignored, pids and tids renumbered, header events out. */
void norm_options_init(norm_options *o);
void norm_options_free(norm_options *o);

/* The state of one trace's normalization (the renumbering, the first event's time). */
typedef struct normalizer {
    const norm_options *o;
    int started;
    int64_t first_ns;
    struct norm_id { uint32_t raw, seq; } *ids[2]; /* pid and tid numbering, open addressing */
    unsigned id_cap[2], id_count[2];
    char *line;                 /* the last line (NUL-terminated), valid until the next call */
    size_t len, cap;
} normalizer;

void normalizer_init(normalizer *n, const norm_options *o);
void normalizer_reset(normalizer *n);   /* back to the first event (after a rewind) */
void normalizer_free(normalizer *n);

/* 1: ev is compared and n->line holds its line; 0: ev is left out; -1: out of memory.
   time_ns is the event's absolute time (etl_reader_time_ns). */
int norm_event(normalizer *n, const etl_event *ev, int64_t time_ns);

#endif
