/* SPDX-License-Identifier: MIT */
/* libetl public API, merging: several traces on one PerfCounter clock, read or written as one. */
#ifndef LIBETL_ETL_MERGE_H
#define LIBETL_ETL_MERGE_H

#include <signal.h> /* sig_atomic_t */
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Merging: several traces on one PerfCounter clock (what etlmerge does) ---- */

/*
 * A merge reads any number of ETL files (each as etl_reader_open_path reads it) and delivers
 * their events in one time order on one clock, or writes them to one ETL file. Memory is one
 * reader per input (processors x buffer size each) and, while writing, one buffer per output
 * processor, whatever the file sizes. doc/libetl.md ("Merging") describes the clock rules.
 */
typedef struct etl_merge etl_merge;

/* What a merge reports while it works: damage in an input, or a note. */
typedef struct etl_merge_message {
    int damage;            /* 1: data of an input was damaged or could not be carried into
                              the output (what is readable is still merged); 0: a note */
    int input;             /* index of the input it is about, or -1 */
    const char *path;      /* that input's path, or NULL */
    int64_t offset;        /* file offset in that input, or -1 */
    const char *text;      /* what happened (without the path and offset) */
} etl_merge_message;

typedef struct etl_merge_options {
    int compress;          /* etl_merge_write: XPRESS-compressed data buffers (COMPRESSED_MODE) */
    uint32_t buffer_size;  /* etl_merge_write: output buffer size, 4 KiB .. 16 MiB; 0: the largest
                              input's logical buffer size, at least 64 KiB */
    /* Called for every message, in order; the strings are valid during the call only. */
    void (*on_message)(void *arg, const etl_merge_message *msg);
    void *on_message_arg;
    /* When *cancel turns non-zero (a signal handler may set it), etl_merge_write stops, removes
       what it wrote and returns ETL_FATAL ("interrupted"). NULL: never. */
    volatile const sig_atomic_t *cancel;
} etl_merge_options;

/* One event of the merged stream. */
typedef struct etl_merge_event {
    unsigned input;        /* index of the input it comes from */
    int64_t timestamp;     /* on the merge's clock (etl_merge_clock) */
    const etl_event *event; /* as that input's reader delivered it: raw timestamp of its own
                              clock, record and payload views. Valid until the next call of
                              etl_merge_next, etl_merge_write or etl_merge_close */
} etl_merge_event;

/* How one input is placed on the merge's clock. */
typedef struct etl_merge_input_info {
    const char *path;
    const etl_trace_info *info; /* its logfile header and what its reader counted */
    unsigned clock_source;  /* index of the input whose anchor (StartTime and header timestamp)
                               converts its timestamps: itself (its own header), or the
                               earliest-starting input of its clock source (same clock,
                               frequency and boot) that it was recorded together with: time
                               ranges that overlap or leave at most 10 s between them, directly
                               or through other inputs of the source */
    unsigned same_clock_as; /* the earliest-starting input of its clock source, recorded together
                               with it or not; itself when it is the first */
    int64_t anchor_offset_ns; /* its absolute times through clock_source's anchor minus through
                               its own header (the same for every event), or, when placed by its
                               own header, what same_clock_as's anchor would have made of them;
                               0 when neither applies */
    etl_clock_map map;      /* its raw timestamps -> the merge's clock */
} etl_merge_input_info;

/* Counts of a merge so far. */
typedef struct etl_merge_stats {
    uint64_t events_read;      /* events the inputs delivered */
    uint64_t events_merged;    /* events delivered by etl_merge_next or written */
    uint64_t events_dropped;   /* events that could not be carried into the output */
    uint64_t bytes_read;       /* sum of the inputs' file sizes (decompressed, for .etl.gz) */
    uint64_t bytes_written;    /* by etl_merge_write */
    uint32_t buffers_written;  /* data buffers, by etl_merge_write */
    unsigned damage_reports;   /* messages with damage set */
} etl_merge_stats;

/*
 * Open the inputs (paths[0 .. count-1]) and choose the merge's clock: PerfCounter at the
 * highest PerfFreq among the PerfCounter inputs (10 MHz when there is none), StartTime the
 * earliest input's. Returns ETL_OK; ETL_WARN when damage was found in an input (reported
 * through on_message; the merge goes on with what is readable); or ETL_FATAL when an input
 * cannot be read or its clock cannot be converted: *out then holds only the message
 * (etl_merge_error, which names the input), or is NULL without memory. Close it in every case.
 */
ETL_API int etl_merge_open(etl_merge **out, const char *const *paths, unsigned count,
                           const etl_merge_options *opt);
/* The merge's clock (valid until etl_merge_close). */
ETL_API const etl_clock *etl_merge_clock(const etl_merge *m);
ETL_API unsigned etl_merge_input_count(const etl_merge *m);
/* How input index is placed on the clock: ETL_OK, or ETL_FAILED for an index out of range. */
ETL_API int etl_merge_input_get(const etl_merge *m, unsigned index, etl_merge_input_info *out);
/*
 * Deliver only events whose time on the merge's clock lies in [from_ns, to_ns] (ns since 1970
 * UTC, both ends included; INT64_MIN and INT64_MAX leave an end open). Each input's logfile
 * header event is delivered whatever its time: it records what was merged.
 */
ETL_API void etl_merge_set_time_range(etl_merge *m, int64_t from_ns, int64_t to_ns);
/*
 * The next event of all inputs in time order on the merge's clock; ties go to the lower input
 * index, then to each input's own time order. Returns ETL_OK; ETL_WARN (the event is valid,
 * and damage was reported since the previous call); ETL_EOF; or ETL_FATAL (an input could not
 * be read on: etl_merge_error says which).
 */
ETL_API int etl_merge_next(etl_merge *m, etl_merge_event *ev);
/*
 * Write the events still to come (all of them on a fresh merge) to one ETL file at path: each
 * event in a buffer of its own processor, its timestamps (the header's, and the payload's of
 * StackWalk and LBR events) converted to the merge's clock, every input's logfile header kept
 * as an EventTrace header event. The header gives the merge's clock, the earliest StartTime,
 * the latest EndTime, the largest NumberOfProcessors and the summed EventsLost and BuffersLost;
 * LogFileMode is SEQUENTIAL | RELOG (| COMPRESSED). The file is written under a temporary name
 * beside path and renamed at the end. Returns ETL_OK, ETL_WARN (written; an input was
 * damaged), or ETL_FATAL (nothing is left at path, nor under the temporary name; an existing
 * file at path is untouched).
 */
ETL_API int etl_merge_write(etl_merge *m, const char *path);
ETL_API void etl_merge_stats_get(const etl_merge *m, etl_merge_stats *out);
/* The last fatal error, naming the file it concerns; "" if none. */
ETL_API const char *etl_merge_error(const etl_merge *m);
/* Close the inputs and free m (NULL is allowed). */
ETL_API void etl_merge_close(etl_merge *m);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_MERGE_H */
