/* SPDX-License-Identifier: MIT */
/* libetl's output formats: events as text, JSON lines or CSV, a file's summary, events as
   normalized lines, the comparison of two traces (what etldump and etldiff print), and a
   timeline in Chrome's trace-event JSON and flame graphs (etlprof). */
#ifndef LIBETL_ETL_OUTPUT_H
#define LIBETL_ETL_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "types.h"
#include "reader.h"
#include "symbols.h"
#include "kernel.h"
#include "decode.h"
#include "symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Everything here writes to a FILE * the caller opened and still owns; nothing is flushed or
 * closed. The writers return ETL_OK, or ETL_FATAL when the stream's error indicator is set
 * afterwards (a write failed, in this call or an earlier one: see ferror(3)).
 */

/* ---- Events as text, JSON lines or CSV (etldump, doc/etldump.1) ---- */

typedef enum etl_dump_format {
    ETL_DUMP_TEXT = 0,   /* one readable line: time, cpu, pid, tid, provider, kind, ... */
    ETL_DUMP_JSONL,      /* one JSON object per line */
    ETL_DUMP_CSV         /* one row of the columns etl_dump_csv_header names */
} etl_dump_format;

/* The format named "text", "jsonl" (or "json") or "csv"; -1 when name is none of these. */
ETL_API int etl_dump_format_parse(const char *name);

/* The CSV column line (with its newline). */
ETL_API int etl_dump_csv_header(FILE *f);

/*
 * One event as one line (text, JSON object or CSV row) with its newline. r is the reader
 * that delivered ev (for its clock). With a decoder (dec not NULL) the event's fields are
 * shown: text ends with the event name and Name=value pairs in schema order, JSON adds
 * "provider_name", "event_name" and "fields" (an object; null when the event has no schema),
 * CSV the columns event_name and fields (that JSON). Decoded kernel events keep their typed
 * "kernel" object in JSON; LBR events show their branches; map (NULL: none) resolves sample
 * and stack addresses to the image loaded there at that time (text: image=, images=; JSON:
 * in the "kernel" object). Returns ETL_OK; ETL_WARN when the event's payload did not fit its
 * schema (it is shown with the fields that did, and etl_decoder_error(dec) says where);
 * ETL_FATAL on a write error. Nothing of ev, r or map is kept.
 */
ETL_API int etl_dump_event(FILE *f, etl_dump_format format, const etl_reader *r, const etl_event *ev,
                           etl_image_map *map, etl_decoder *dec);

/*
 * etl_dump_event with the functions of sample and stack frame addresses named by sym (NULL:
 * none; fed every event of the trace first, as etl_dump_first_pass_symbols does): text shows
 * an address as "function+0x1a (image)" where a function is known (else "image+0x1a", else
 * "?"); JSON adds "function", "function_offset" and, where known, "source" ("file:line")
 * beside the address's "image" and "offset"; CSV, which shows no addresses, is unchanged. A
 * frame past a stack's first is a return address: its function is the call's, looked up a
 * byte before it. Returns as etl_dump_event.
 */
ETL_API int etl_dump_event_symbols(FILE *f, etl_dump_format format, const etl_reader *r, const etl_event *ev,
                                   etl_image_map *map, etl_decoder *dec, etl_symbolizer *sym);

/* s as a JSON string literal: quotes and backslashes escaped, control characters as \u00XX,
   other bytes (UTF-8) as they are. */
ETL_API int etl_dump_json_string(FILE *f, const char *s);

/*
 * The first pass that output makes over a file: every event of r into map (see
 * etl_image_map_add; map may be NULL) and into dec (etl_decoder_learn: the EventSource
 * manifests a trace carries, so that events before them decode; dec may be NULL), then r
 * rewound to its first event. Damage is reported to r's on_damage as the events are read.
 * Returns ETL_OK; ETL_FAILED when memory ran out (r is left part-way: rewind it to read on);
 * ETL_FATAL when r could not be read to its end or rewound (etl_reader_error(r) says why).
 */
ETL_API int etl_dump_first_pass(etl_reader *r, etl_image_map *map, etl_decoder *dec);
/* The same, every event also into sym (etl_symbolizer_add; NULL: none). */
ETL_API int etl_dump_first_pass_symbols(etl_reader *r, etl_image_map *map, etl_decoder *dec, etl_symbolizer *sym);

/* ---- A file's summary: trace info and counts, one JSON object (etldump --summary) ---- */

typedef struct etl_summary etl_summary;

/* A new summary with nothing counted, or NULL without memory. Free it with etl_summary_free. */
ETL_API etl_summary *etl_summary_new(void);
/* Counts ev (by kind, by provider, its payload bytes, its time). ETL_OK, or ETL_FAILED when
   memory ran out (ev is then counted except by provider). */
ETL_API int etl_summary_add(etl_summary *s, const etl_event *ev);
/* The summary of the file at path (as given: only printed) that r read: r's trace info, its
   warnings and what s counted, as one JSON object on one line. With the decoder that decoded
   the file's events (dec not NULL): "provider_names" (each provider's name where known) and
   "decoded", "undecoded" and "decode_failed" counts, the last two per provider as well. */
ETL_API int etl_summary_write(const etl_summary *s, FILE *f, const char *path, const etl_reader *r,
                              const etl_decoder *dec);
/* NULL is allowed. */
ETL_API void etl_summary_free(etl_summary *s);

/* ---- Events as normalized lines (etldump --normalize; what etldiff compares) ----
 *
 * A normalized line says what a build decides about an event, without what differs on every
 * run: "PROVIDER KIND [id=N] v=N op=N [level=N] [task=N kw=0xN] [pid=P1 tid=T1] [ts=+NS]
 * [cpu=N] [ext=TYPE,...] len=N [payload=HEX]", or for an event its decoder decoded "... len=N
 * event=NAME [fields: Name=value ...]". The provider is its name where libetl knows one;
 * process and thread ids are renumbered P1, P2, ... and T1, T2, ... in first-seen order.
 */

/* Fields, as bits of etl_normalize_options.ignore and .raw. */
#define ETL_NORMALIZE_TS      0x01u /* the time since the first compared event */
#define ETL_NORMALIZE_PID     0x02u
#define ETL_NORMALIZE_TID     0x04u
#define ETL_NORMALIZE_CPU     0x08u
#define ETL_NORMALIZE_PAYLOAD 0x10u

/* An event left out: of that provider, with that id (EVENT_HEADER events) or opcode (others). */
typedef struct etl_normalize_event_key {
    etl_guid provider;
    uint16_t id;
} etl_normalize_event_key;

typedef struct etl_normalize_options {
    unsigned ignore;            /* ETL_NORMALIZE_*: left out of the line */
    unsigned raw;               /* ETL_NORMALIZE_PID, _TID: raw values instead of P1, T1, ... */
    int all_events;             /* keep the session's header events (EventTrace group) */
    const etl_guid *only;       /* compare only these providers (nonly 0: all) */
    unsigned nonly;
    const etl_guid *skip;       /* leave these providers out */
    unsigned nskip;
    const etl_normalize_event_key *skip_events; /* leave these events out */
    unsigned nskip_events;
    int64_t from_ns, to_ns;     /* window: ns after the first compared event, both included */
    /* With a decoder, a decoded event's line shows its event name and fields instead of its
       payload's bytes (ETL_NORMALIZE_PAYLOAD leaves both out), and providers are named as the
       decoder names them. The normalizer uses it, never closes it; NULL: payload bytes. */
    etl_decoder *decoder;
    const char *const *ignore_fields; /* top-level fields left out of the line, by name */
    unsigned nignore_fields;
    const char *const *only_names;  /* compare only providers the decoder names so (any case) */
    unsigned nonly_names;
    const char *const *skip_names;  /* leave out providers the decoder names so */
    unsigned nskip_names;
} etl_normalize_options;

/* The defaults: timestamps and processors ignored, pids and tids renumbered, the header events
   left out, no provider lists, an open window (INT64_MIN, INT64_MAX), no decoder. */
ETL_API void etl_normalize_options_init(etl_normalize_options *o);

/*
 * Field names "ts", "pid", "tid", "cpu", "payload", comma-separated (empty names are skipped),
 * into ETL_NORMALIZE_* bits in *out. ETL_OK, or ETL_FAILED when a name is unknown: *bad then
 * points at it, inside list (it ends at the next ',' or at the end).
 */
ETL_API int etl_normalize_fields_parse(const char *list, unsigned *out, const char **bad);

typedef struct etl_normalizer etl_normalizer;

/* The normalization of one trace, with a copy of o (its lists too: the caller keeps its own).
   NULL without memory. Free it with etl_normalizer_free. */
ETL_API etl_normalizer *etl_normalizer_new(const etl_normalize_options *o);
/*
 * ev's normalized line. time_ns is ev's absolute time (etl_reader_time_ns). Returns 1: ev is
 * compared, *line (NUL-terminated, *len bytes; len may be NULL) holds its line, owned by n and
 * valid until the next call on n; 0: ev is left out (a filter, the window); ETL_FAILED: memory
 * ran out (n can still be used).
 */
ETL_API int etl_normalizer_format(etl_normalizer *n, const etl_event *ev, int64_t time_ns, const char **line,
                                  size_t *len);
/* Back to before the first event (after etl_reader_rewind): the numbering starts again. */
ETL_API void etl_normalizer_rewind(etl_normalizer *n);
/* NULL is allowed. */
ETL_API void etl_normalizer_free(etl_normalizer *n);

/* ---- The comparison of two traces (etldiff, doc/etldiff.1) ----
 *
 * Each trace's events, in time order, as normalized lines. By default each thread's own
 * sequence is compared with that of the thread of the other trace that does the same (the
 * threads are matched by their lines, not by their ids or by when they first appear), so
 * that how the threads of a program interleave does not count; with global_order the two
 * traces are compared as one sequence each, as before. Then either the shortest edit script
 * between the sequences (a unified diff of events), the lines one has more often than the
 * other (unordered), or only the number of events per provider, kind, id and opcode.
 */

typedef struct etl_diff etl_diff;

/* A process whose events are compared (etldiff --process, --process-tree). */
typedef struct etl_diff_process {
    /* Its name, as the trace's Process events give it (the image file name; on Linux the
       command's name, 15 bytes at most), matched ignoring ASCII case and a final ".exe"; a
       process that ran several images (exec) has each of their names. NULL: pid. */
    const char *name;
    uint32_t pid;
    /* And the processes it started, directly or not: by the parent process id that Process
       Start and DCStart events give. */
    int tree;
} etl_diff_process;

typedef struct etl_diff_options {
    etl_normalize_options normalize;
    int unordered;              /* compare as multisets: order does not matter */
    int counts;                 /* compare only the counts per provider, kind, id and opcode */
    double tolerance;           /* counts: the difference allowed per row ... */
    int tolerance_percent;      /* ... as a percentage of A's count when set */
    long max_diffs;             /* etl_diff_write shows at most this many differing events */
    long context;               /* and this many events around each (ordered only) */
    /* Damage in either trace, as etl_reader_options.on_damage (the message names the file). */
    void (*on_damage)(void *arg, int64_t offset, const char *message);
    void *on_damage_arg;
    /* Compare each trace as one sequence in time order, across threads and processes (pids
       and tids then in the lines, renumbered by first appearance), instead of thread by
       thread (where the lines leave them out unless normalize.raw asks for them). */
    int global_order;
    /* Compare only the events of these processes (nprocesses 0: all), in each trace: the
       events whose header names one of them, and those whose payload (stacks, samples) or
       processor (system calls) gives them to one of its threads. Copied (names too). */
    const etl_diff_process *processes;
    unsigned nprocesses;
} etl_diff_options;

/* The defaults: etl_normalize_options_init's, thread by thread, ordered, every event and
   process, 20 differences shown with 3 events of context. */
ETL_API void etl_diff_options_init(etl_diff_options *o);

/*
 * Opens the traces at path_a (A) and path_b (B); o is copied. Returns ETL_OK, or ETL_FATAL
 * when one cannot be opened: etl_diff_error says which and why. *out is set either way (NULL
 * only when memory ran out); close it with etl_diff_close.
 */
ETL_API int etl_diff_open(etl_diff **out, const char *path_a, const char *path_b, const etl_diff_options *o);
/* Reads both traces and compares them. ETL_OK, or ETL_FATAL (etl_diff_error says why: a
   trace that cannot be read, memory, or a process of o.processes that a trace does not have). */
ETL_API int etl_diff_compare(etl_diff *d);

typedef struct etl_diff_stats {
    uint64_t events_a, events_b;    /* compared events of each trace */
    uint64_t differences;           /* events only in A or only in B; with counts, differing rows */
    int approximate;                /* the middle differed too much: shown as replaced as a whole */
    int damaged;                    /* damage was reported in a trace */
    uint64_t threads_a, threads_b;  /* threads with compared events (0 in global order, with counts) */
    uint64_t threads_differ;        /* the threads (etl_diff_thread_get) with a difference */
} etl_diff_stats;

/* What etl_diff_compare found (the traces match when differences is 0). */
ETL_API void etl_diff_stats_get(const etl_diff *d, etl_diff_stats *out);

/* One thread of a trace, as etl_diff_thread_get describes it. */
typedef struct etl_diff_thread_side {
    int present;                    /* 0: the other trace has no thread like it */
    int has_pid, has_tid;           /* 0: no event of the thread named one */
    uint32_t pid, tid;              /* as in the trace */
    uint64_t events;                /* its compared events */
} etl_diff_thread_side;

typedef struct etl_diff_thread {
    unsigned number;                /* its name in the output: T<number> */
    etl_diff_thread_side a, b;
    uint64_t differences;           /* of the comparison of its two sequences */
} etl_diff_thread;

/*
 * The threads etl_diff_compare compared (0 in global order and with counts), in the order
 * etl_diff_write shows them: A's in the order they first appear, each with the thread of B
 * that does the most the same (the most lines in common; those whose whole sequences are
 * equal first; ties to the first to appear), then the threads only B has. A's threads are
 * numbered 1, 2, ... in that order, B's take the number of theirs, and those only B has the
 * numbers after. etl_diff_thread_get fills *out for index i < etl_diff_thread_count(d):
 * ETL_OK, or ETL_FAILED for another i.
 */
ETL_API size_t etl_diff_thread_count(const etl_diff *d);
ETL_API int etl_diff_thread_get(const etl_diff *d, size_t i, etl_diff_thread *out);

typedef enum etl_diff_format {
    ETL_DIFF_TEXT = 0,          /* a unified diff of normalized lines, the counts that differ, a summary line */
    ETL_DIFF_JSON               /* one JSON object */
} etl_diff_format;

/*
 * The result of etl_diff_compare in the format doc/etldiff.1 describes, for matching traces
 * too (etldiff then prints nothing in text). The lines shown are read again from the traces
 * (their damage is reported again). Returns ETL_OK; ETL_FAILED when memory ran out or a trace
 * could not be read again (etl_diff_error; d can still be closed); ETL_FATAL on a write error.
 */
ETL_API int etl_diff_write(etl_diff *d, FILE *f, etl_diff_format format);
/* The last error; "" if none; "out of memory" for d NULL (a failed etl_diff_open). Valid until
   the next call on d. */
ETL_API const char *etl_diff_error(const etl_diff *d);
/* Closes the traces and frees d (NULL is allowed). */
ETL_API void etl_diff_close(etl_diff *d);

/* ---- CPU profiles: samples with their stacks and function names (etlprof, doc/etlprof.1) ---- */

/*
 * A profile: the samples of one or more traces (SampledProfile and PMCSample, each with its
 * stack: etl_stack_pairer) counted per distinct stack of a thread of a process, each frame
 * named by a symbolizer (etl/symbols.h) made for each trace. A frame is its function where a
 * symbol covers the address ("main"), else its image and offset ("libc.so.6+0x1a2b"), else its
 * address ("0xffffffff81000000"); an address in inlined code gives the inlined functions as
 * frames of their own. Return addresses (every frame of a stack but the first) are looked up
 * one byte back, inside the call that made them. A sample whose stack never came has the one
 * frame of its instruction pointer.
 *
 * Each sample counts its Count (SampledProfile's, at least 1) and a weight in nanoseconds: the
 * count times the profile interval in force (PerfInfo SetInterval or CollectionStart events of
 * profile source 0, whose NewInterval is in 100 ns units; 1 ms, Windows' and etlrecord's
 * default, where the trace has none). PMCSample samples have no time weight (0).
 */
typedef struct etl_profile etl_profile;

typedef struct etl_profile_options {
    /* Only these processes (none: every one): each a process's name (its image file name, as
       its Process events give it; compared without case) or a pid in decimal. */
    const char *const *processes;
    size_t nprocesses;
    const uint32_t *threads;      /* only these threads (none: every one) */
    size_t nthreads;
    /* Only samples from time_from_ns up to (not including) time_to_ns, counted from the start
       of each trace (its logfile header's StartTime). */
    int has_time_range;
    int64_t time_from_ns, time_to_ns;
    const etl_symbolizer_options *symbols; /* for each trace's symbolizer; NULL: the defaults */
} etl_profile_options;

/* A new, empty profile in *out (o may be NULL: everything): ETL_OK, or ETL_FAILED without
   memory. o's strings and arrays are copied. */
ETL_API int etl_profile_new(etl_profile **out, const etl_profile_options *o);
ETL_API void etl_profile_free(etl_profile *p);
/*
 * Reads r from where it is to its end and adds its samples. ETL_OK; ETL_WARN when r skipped
 * damage (the samples read are added; etl_profile_error says what the reader said);
 * ETL_FAILED when memory ran out or the symbolizer could not be made; ETL_FATAL when r failed
 * (etl_profile_error says why). Nothing of r is kept.
 */
ETL_API int etl_profile_add_trace(etl_profile *p, etl_reader *r);
/* The last problem's message (damage or failure), or "" when none. */
ETL_API const char *etl_profile_error(const etl_profile *p);

/* One frame of the profile; its strings belong to the profile. */
typedef struct etl_profile_frame {
    const char *name;             /* function, image+0xOFF or 0xADDR (see above) */
    const char *function;         /* NULL when no symbol covers the address */
    const char *image;            /* image base name; NULL: no image */
    const char *image_path;
    const char *build_id;         /* the image's build-id in hex (ELF) where known, else NULL */
    const char *source_file;      /* NULL when unknown */
    uint32_t line;                /* 0 when unknown */
    uint8_t inlined;              /* 1: inlined into the next frame outwards */
} etl_profile_frame;

/* One distinct stack of a thread and how often it was sampled. */
typedef struct etl_profile_stack {
    const char *process;          /* the process's name; "[pid N]" when no Process event named it,
                                     "[unknown]" when the pid is not known either */
    uint32_t pid, tid;            /* pid UINT32_MAX when unknown */
    unsigned frame_count;
    const uint32_t *frames;       /* etl_profile_frame_get indexes, root first */
    uint64_t samples;             /* the samples' counts */
    uint64_t weight_ns;
} etl_profile_stack;

typedef struct etl_profile_stats {
    uint64_t sample_events;       /* sample events read */
    uint64_t samples;             /* counts of those in the profile (after the filters) */
    uint64_t samples_with_stack;  /* of those, the ones whose stack came */
    uint64_t weight_ns;
    uint64_t frames, frames_named;/* addresses looked up, and those a function was found for */
    size_t stacks;                /* distinct stacks */
    int64_t time_ns;              /* the first trace's start, ns since 1970 UTC */
    int64_t duration_ns;          /* from the first to the last sample counted */
    uint64_t period_ns;           /* the first profile interval (default 1 ms) */
    /* The traces' symbolizers' etl_symbolizer_stats, summed: lookups (one a frame), those
       answered from the symbolizer's cache, and those that named a function. */
    uint64_t symbol_lookups, symbol_cache_hits, symbol_resolved;
} etl_profile_stats;

ETL_API void etl_profile_stats_get(const etl_profile *p, etl_profile_stats *out);
/* The number of distinct stacks, and the index-th of them (in the order first sampled):
   ETL_OK, or ETL_FAILED when index is past the end. out->frames is valid until the next call
   of etl_profile_stack_get or a change of the profile. */
ETL_API size_t etl_profile_stack_count(const etl_profile *p);
ETL_API int etl_profile_stack_get(const etl_profile *p, size_t index, etl_profile_stack *out);
/* The frame of an index a stack gives, or NULL when there is no such frame. */
ETL_API const etl_profile_frame *etl_profile_frame_get(const etl_profile *p, uint32_t index);

/*
 * FlameGraph's collapsed stacks: one line per distinct stack (threads and processes of the
 * same name merged), the process's name as the root frame, then the frames root first, joined
 * by ';', a space and the samples' count ("hot3;main;hot_a 71"), lines sorted in byte order.
 * In names, ';' becomes ':' and control characters (newlines, tabs) become spaces, so that a
 * line always parses back. ETL_OK, ETL_FAILED without memory, ETL_FATAL on a write error.
 */
ETL_API int etl_profile_write_folded(FILE *f, const etl_profile *p);
/*
 * pprof's profile.proto (libetl/output/profile.proto), gzip-compressed: sample types
 * samples/count and cpu/nanoseconds, one Sample per distinct stack (labels pid, tid and
 * process), a Location per address (inlined functions as several lines of it), a Function per
 * name and source file, a Mapping per image (its path and build-id), time, duration and the
 * profile interval as period (cpu/nanoseconds). ETL_OK, ETL_FAILED without memory, ETL_FATAL
 * on a write error.
 */
ETL_API int etl_profile_write_pprof(FILE *f, const etl_profile *p);
/*
 * The profile as a flame (see etl_flame below), then written: speedscope's JSON with one
 * sampled profile per thread ("hot3 (pid 4242) tid 4243"), or the SVG flame graph with one
 * profile per process name (as folded's root frame), titled title (NULL: "etlprof"). ETL_OK,
 * ETL_FAILED without memory, ETL_FATAL on a write error.
 */
ETL_API int etl_profile_write_speedscope(FILE *f, const etl_profile *p);
ETL_API int etl_profile_write_svg(FILE *f, const etl_profile *p, const char *title);


/* ---- Per-function sample shares of two profiles (etldiff --stacks, doc/etldiff.1) ----
 *
 * "Did this change make function X hotter?": each function's share of the samples in profile
 * A and in profile B, in percentage points, and whether it moved more than a tolerance. A
 * function is a profile frame's name (etl_profile_frame.name) and, for a named function, its
 * image: "main" of two programs are two functions. An unnamed frame ("libc.so.6+0x1a2b")
 * compares only with the same offset of an image of the same name, which is the same code only
 * for the same build. The shares count samples (etl_profile_stack.samples), not time.
 *   - self: the samples whose innermost frame (where the sample hit) is the function;
 *   - total: the samples with the function anywhere on the stack, counted once per sample
 *     however often recursion puts it there.
 * The shares of self add up to 100 per side; those of total do not.
 */
typedef struct etl_profile_diff etl_profile_diff;

typedef enum etl_profile_measure {
    ETL_PROFILE_SELF = 0,       /* exclusive: samples that hit the function itself */
    ETL_PROFILE_TOTAL           /* inclusive: samples with the function on the stack */
} etl_profile_measure;

/* One function of the comparison; [0] is A, [1] is B. */
typedef struct etl_profile_diff_function {
    const char *name;           /* the frame's name: function, image+0xOFF or 0xADDR */
    const char *image;          /* a named function's image base name; NULL for the others */
    uint64_t self[2], total[2]; /* samples */
    double self_share[2], total_share[2]; /* percent of the side's samples (0 when it has none) */
    double delta;               /* B's share minus A's, in points, of the measure judged */
    int verdict;                /* 1: hotter by more than the tolerance; -1: cooler; 0: within */
} etl_profile_diff_function;

typedef struct etl_profile_diff_stats {
    uint64_t samples_a, samples_b; /* every sample of each profile */
    size_t functions;           /* functions with a share of the measure on either side */
    size_t moved;               /* of those, how many moved more than the tolerance ... */
    size_t hotter, cooler;      /* ... up, and down */
    etl_profile_measure measure;
    double tolerance;
} etl_profile_diff_stats;

/*
 * Compares profiles a and b on measure, with tolerance points allowed (a move equal to it
 * passes). Nothing is judged when a side has no samples: moved is 0, and the caller says so
 * (etldiff: exit 2). ETL_OK with *out set, or ETL_FAILED without memory or for a bad argument
 * (tolerance below 0, not finite, an unknown measure). The names *out gives belong to a and b: keep them
 * until the comparison is freed.
 */
ETL_API int etl_profile_diff_new(etl_profile_diff **out, const etl_profile *a, const etl_profile *b,
                                 etl_profile_measure measure, double tolerance);
ETL_API void etl_profile_diff_free(etl_profile_diff *d);
ETL_API void etl_profile_diff_stats_get(const etl_profile_diff *d, etl_profile_diff_stats *out);
/* The functions the measure sees, the largest move first (then the larger share in B, then in
   A, then by name); etl_profile_diff_get fills *out for index < etl_profile_diff_count(d): ETL_OK,
   or ETL_FAILED past the end. */
ETL_API size_t etl_profile_diff_count(const etl_profile_diff *d);
ETL_API int etl_profile_diff_get(const etl_profile_diff *d, size_t index, etl_profile_diff_function *out);
/*
 * The comparison as doc/etldiff.1 describes for --stacks: a table (A %, B %, DELTA, VERDICT,
 * FUNCTION) and a summary line, or one JSON object; at most max_rows functions (below 0: all),
 * the summary counts them all. name_a and name_b name the sides (their paths). ETL_OK, or
 * ETL_FATAL on a write error.
 */
ETL_API int etl_profile_diff_write(FILE *f, const etl_profile_diff *d, const char *name_a, const char *name_b,
                                   etl_diff_format format, long max_rows);

/* ---- A timeline in Chrome's trace-event JSON (etlprof --format=chrome, doc/etlprof.1) ----
 *
 * The "JSON Object Format" of the Trace Event Format that chrome://tracing and Perfetto's UI
 * open: {"traceEvents":[...],"displayTimeUnit":"ms","otherData":{...}}, one event a line.
 * Timestamps ("ts", "dur") are microseconds since the origin (the earliest event), with three
 * decimals (nanoseconds). Per thread (pid and tid as integers; names as "process_name" and
 * "thread_name" metadata events, from the Process and Thread events at the thread's first
 * event: etl_name_map):
 *   - its states as complete ("X") slices, category "sched", which never overlap on a thread:
 *     "Running" from the CSwitch that switched it in to the one that switched it out (args cpu,
 *     priority); "Ready" from its ReadyThread (args readied_by: the thread running on that
 *     processor), or from a switch-out that left it ready (preempted: args wait_reason), to the
 *     CSwitch that switched it in; "Waiting (REASON)" from a switch-out that left it waiting
 *     (args wait_reason, wait_mode) to its ReadyThread, or to the CSwitch that switched it in
 *     when no ReadyThread came. A thread switched out by a processor's first CSwitch ran there
 *     since that processor's first event. A state still in force at the end lasts to the last
 *     event (args unfinished). The idle thread (tid 0) has none: a processor's idle time is
 *     where no thread runs;
 *   - its samples (SampledProfile, PMC samples) as thread instants ("i"), category "sample",
 *     args cpu, ip and, with an image map, image ("name+0xOFFSET");
 *   - its user events (EVENT_HEADER, TraceLogging, manifest and classic events whose header
 *     names the thread; not the kernel's classes) as thread instants named as the decoder names
 *     them without the provider ("Task/Opcode", TraceLogging's event name; else "id N" or
 *     "opcode N"), category the provider's name (else its GUID), args the decoded fields;
 *   - and where a manifest, EventSource or TraceLogging schema gives an event opcode 1 (Start)
 *     or 2 (Stop), a slice instead: nestable async events ("b" at the Start, "e" at the Stop)
 *     of one id per thread, provider and task (TraceLogging: and event name), so that a Stop
 *     ends the last open Start of its thread and task. They are drawn under the process (in
 *     Perfetto, a track per thread and task), never on the thread's own track, where they
 *     would cross its states. A Stop with no open Start is an instant (args unmatched); a
 *     Start still open at the end is ended at the last event (args unmatched).
 * A thread whose process no Thread event, event header or image map names is drawn in the
 * process 4294967295, named "(unknown process)". Time running backwards (damage) never makes a
 * slice end before it starts or overlap the one before: such a slice is cut or left out and
 * counted (out_of_order).
 *
 * Memory holds per thread, processor, process and open task, never per event: feed the events
 * in time order once (etl_chrome_writer_add); a first pass (etl_chrome_writer_learn) over the
 * same events beforehand gives threads their processes and the events their names even where
 * the trace tells them later (rundowns at the end), and fixes the origin.
 */

typedef struct etl_chrome_writer etl_chrome_writer;

typedef struct etl_chrome_options {
    etl_decoder *decoder;       /* names and fields of user events; NULL: ids and no fields */
    etl_image_map *images;      /* sample addresses as image+offset, and which process a thread
                                   is of (see etl_image_map_thread_pid); NULL: the writer keeps its
                                   own, fed by etl_chrome_writer_learn. Not closed by the writer */
    /* The events kept: of these processes, by pid or by name (the name at the process's first
       event; ASCII case and a final ".exe" ignored), none given: all; and of these threads
       (none: all). */
    const uint32_t *pids;
    unsigned npids;
    const char *const *process_names;
    unsigned nprocess_names;
    const uint32_t *tids;
    unsigned ntids;
    int64_t from_ns, to_ns;     /* absolute times (ns since 1970): slices are cut to them */
    int64_t origin_ns;          /* ts 0; INT64_MIN: the earliest event learned, else the first added */
    int no_states, no_samples, no_user_events; /* leave these out */
} etl_chrome_options;

/* The defaults: no decoder, no image map, every process and thread, all the time, origin at
   the earliest event, everything written. */
ETL_API void etl_chrome_options_init(etl_chrome_options *o);

/* What a writer wrote. */
typedef struct etl_chrome_stats {
    uint64_t trace_events;      /* elements of traceEvents */
    uint64_t slices;            /* thread state slices */
    uint64_t samples;
    uint64_t instants;          /* user events as instants */
    uint64_t spans;             /* Start/Stop slices (matched or ended at the end) */
    uint64_t unmatched_stops;   /* Stops with no open Start */
    uint64_t unmatched_starts;  /* Starts still open at the end */
    uint64_t out_of_order;      /* slices cut or left out because time ran backwards */
    uint64_t unknown_threads;   /* threads drawn in the unknown process */
} etl_chrome_stats;

/*
 * A writer to f (the caller's; only written to) with a copy of o (lists too; NULL: defaults).
 * ETL_OK, or ETL_FAILED without memory (*out NULL). Nothing is written before the first
 * etl_chrome_writer_add or etl_chrome_writer_finish.
 */
ETL_API int etl_chrome_writer_new(etl_chrome_writer **out, FILE *f, const etl_chrome_options *o);
/* The first pass: what ev says of processes, threads, their names and images (and, with a
   decoder, EventSource manifests: etl_decoder_learn); time_ns is its absolute time. Any order.
   ETL_OK or ETL_FAILED without memory. */
ETL_API int etl_chrome_writer_learn(etl_chrome_writer *w, const etl_event *ev, int64_t time_ns);
/* The second pass, in time order: what ev adds to the timeline, written as it closes. ev's raw
   timestamp is only compared with other raw timestamps of its trace (names, images); time_ns
   places it. ETL_OK; ETL_FAILED without memory (w can go on); ETL_FATAL on a write error. */
ETL_API int etl_chrome_writer_add(etl_chrome_writer *w, const etl_event *ev, int64_t time_ns);
/* Ends what is open at the last event, writes the names and closes the JSON. ETL_OK, ETL_FAILED
   without memory, ETL_FATAL on a write error. Call it once; then only free w. */
ETL_API int etl_chrome_writer_finish(etl_chrome_writer *w);
ETL_API void etl_chrome_writer_stats(const etl_chrome_writer *w, etl_chrome_stats *out);
/* NULL is allowed. */
ETL_API void etl_chrome_writer_free(etl_chrome_writer *w);

/*
 * The whole timeline of the trace r reads: the first pass, r rewound, the second pass, finish
 * (stats may be NULL). ETL_OK; ETL_FAILED without memory; ETL_FATAL when r could not be read
 * to its end or rewound (etl_reader_error(r)) or a write failed. Damage is reported through
 * r's on_damage and what is readable is written.
 */
ETL_API int etl_chrome_write(FILE *f, etl_reader *r, const etl_chrome_options *o, etl_chrome_stats *stats);


/* ---- Flame graphs: stacks and their sample counts, as speedscope's JSON or an SVG ----
 *
 * A flame holds profiles (one a thread, or a process: the caller's grouping), each a tree of
 * call stacks with the samples that ended in each: memory per distinct stack, never per sample.
 * Fill it from the profile model (or any stacks with counts), then write it:
 *   - speedscope's file format (https://www.speedscope.app/file-format-schema.json): one
 *     "sampled" profile per profile of the flame, the heaviest first, frames shared between
 *     them ("shared":{"frames":[...]}, with "file" and "line" where known), each distinct stack
 *     once with its count as its weight (unit "none");
 *   - an SVG flame graph that a browser shows with no other tool: the root "all", the profiles
 *     on it, their stacks above (the callee on its caller), one rectangle per frame of each
 *     distinct call path, as wide as its samples, siblings in name order, colored from a hash
 *     of the name (the same name, the same color, in every file); a title with each frame's name
 *     and samples; a small script: click a frame to zoom to it (click "all" or "Reset zoom" to
 *     come back), type in the search box to highlight the frames whose name holds the text and
 *     see the share of samples they hold ("Matched: 12.5%"). The URL's fragment may carry a
 *     search ("#s=TEXT"). Names are escaped for XML. The same flame gives the same bytes.
 */
typedef struct etl_flame etl_flame;

/* One frame of a stack: its function (or "image+0x1a", or an address), and where known its
   source file and line. */
typedef struct etl_flame_frame {
    const char *name;
    const char *file;   /* NULL: unknown */
    uint32_t line;      /* 0: unknown */
} etl_flame_frame;

/* A new, empty flame, or NULL without memory. */
ETL_API etl_flame *etl_flame_new(void);
/* NULL is allowed. */
ETL_API void etl_flame_free(etl_flame *fl);
/* count samples of the stack frames[0..nframes) (the outermost caller first, the frame the
   sample hit last) in the profile named profile (a thread: "app (1000) tid 1001"; "" is a
   name too). Everything is copied. A stack of no frames counts for the profile itself. ETL_OK,
   or ETL_FAILED without memory (nothing of this stack is counted). */
ETL_API int etl_flame_add(etl_flame *fl, const char *profile, const etl_flame_frame *frames, unsigned nframes,
                          uint64_t count);
/* The samples added so far. */
ETL_API uint64_t etl_flame_total(const etl_flame *fl);
/* speedscope's JSON, named name (NULL: "libetl profile"). ETL_OK, ETL_FAILED without memory,
   ETL_FATAL on a write error. */
ETL_API int etl_flame_write_speedscope(const etl_flame *fl, FILE *f, const char *name);
/* The SVG flame graph, titled title (NULL: "Flame graph"), width pixels wide (0: 1200).
   ETL_OK, ETL_FAILED without memory, ETL_FATAL on a write error. */
ETL_API int etl_flame_write_svg(const etl_flame *fl, FILE *f, const char *title, unsigned width);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_OUTPUT_H */
