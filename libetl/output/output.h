/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the output formats' files share (the public face is etl/output.h).
   One file per format family: dump.c (event lines), summary.c, normalize.c, and the
   comparison: diff.c, diffthreads.c (the threads matched), diffselect.c (who an event belongs
   to, the processes kept) and diffwrite.c (its output), diffstacks.c (two profiles' functions'
   shares of the samples); chrome.c (the timeline in Chrome's
   trace-event JSON), flame.c (stacks and counts) with speedscope.c and flamegraph.c (their
   writers), and escape.c (JSON and XML quoting); a new one goes beside them, uses
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

/* ---- escape.c: text in the formats' own quoting, always valid UTF-8 ---- */

/* s as a JSON string literal: quotes, backslashes and control characters escaped, and each
   byte that is not part of valid UTF-8 written as U+FFFD, so that strict parsers take it. */
void output_json_string(FILE *f, const char *s);
/* s as XML character data or an attribute value: & < > " ' as references, control
   characters XML 1.0 does not allow and invalid UTF-8 as U+FFFD. */
void output_xml_text(FILE *f, const char *s);
/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when s does not start one. */
size_t output_utf8_length(const unsigned char *s);

/* ---- flame.c: the flame's tree; speedscope.c and flamegraph.c write it ---- */

/* A distinct frame (name, file, line), interned. */
struct flame_frame {
    char *name, *file;
    uint32_t line;
};

/* A node: one call path. Node 0 is the root; its children are the profiles (frame: the
   profile's name), theirs the outermost callers. */
struct flame_node {
    uint32_t frame;             /* index in frames; the root's is unused */
    uint32_t parent;
    uint32_t depth;             /* 0 the root, 1 a profile */
    uint64_t total;             /* samples of this path and all below */
    uint64_t self;              /* samples that ended here */
};

struct etl_flame {
    struct flame_frame *frames;
    size_t nframes, frames_cap;
    uint32_t *frame_table;      /* open addressing: frame index + 1 */
    size_t frame_table_cap;
    struct flame_node *nodes;
    size_t nnodes, nodes_cap;
    uint32_t *node_table;       /* (parent, frame) -> node index + 1 */
    size_t node_table_cap;
};

/* The children of every node, each node's sorted by its frame's name (then file, line):
   child[first[i] .. first[i + 1]) are node i's. Both malloc'ed; -1 without memory. */
int flame_children(const etl_flame *fl, uint32_t **first, uint32_t **child);
/* Visits start and every node below it, parents before children, children in their order:
   path[0..depth] are the nodes from start to node. Stops at the first visit that does not
   return 0 and returns what it returned; -1 without memory. */
int flame_walk(const etl_flame *fl, const uint32_t *first, const uint32_t *child, uint32_t start,
               int (*visit)(void *arg, uint32_t node, const uint32_t *path, size_t depth), void *arg);

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
   events' 0-based numbers in the compared sequences (a thread's, or the whole trace's). */
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

/* Who an event belongs to: its header's process and thread, or what its payload (stacks,
   samples) or the processor's running thread (system calls) says. */
struct diff_owner {
    int has_pid, has_tid;
    uint32_t pid, tid;
};

/* One thread of a trace: the compared events of one (process, thread), in time order; the
   events no process or thread could be given form a thread of their own. */
struct diff_thread {
    struct diff_owner owner;
    size_t first;               /* its events in the side's by_thread and thread_hash arrays */
    size_t n;
    int64_t first_ts;           /* raw time of its first compared event (for its names) */
    uint64_t signature;         /* of its sequence of lines */
    int partner;                /* the thread of the other trace it is compared with, or -1 */
    unsigned number;            /* its name T<number> in the output */
};

/* What the comparison compares: a pair of matched threads, a thread only one trace has, or
   (in global order) the two whole traces. Its steps are [from, to) of the script. */
struct diff_pair {
    int t[2];                   /* the thread of A, of B; -1: none (in global order: the whole trace) */
    unsigned number;            /* T<number>; 0 in global order */
    size_t from, to;
    size_t differences;
};

/* One trace. */
struct diff_side {
    char *path;
    etl_reader *r;
    etl_normalizer *nz;
    uint64_t *hash;             /* of each compared event's line */
    size_t n, cap;
    int damaged;
    int prepass;                /* reading to choose processes: damage is reported later */
    etl_diff *d;
    /* Per thread (not in global order): each compared event's thread while reading, then the
       events' numbers grouped by thread (each thread's in time order) and their hashes. */
    uint32_t *thread_of;
    size_t thread_of_cap;
    size_t *by_thread;
    uint64_t *thread_hash;
    struct diff_thread *threads;
    size_t nthreads, threads_cap;
    uint32_t *thread_table;     /* open addressing: thread index + 1, 0 empty */
    size_t thread_table_cap;
    etl_name_map *names;        /* process and thread names, for the output */
    etl_image_map *image_map;   /* which process a thread belongs to (samples) */
    etl_cpu_threads *running;   /* which thread runs on each processor (system calls) */
    /* --process: the processes whose events are compared (sorted), and which of the events
       the reader returned were given to the normalizer (a bit each), for reading them again. */
    uint32_t *pids;
    size_t npids;
    uint8_t *passed;
    size_t passed_cap;
    uint64_t read_count;
};

struct etl_diff {
    etl_diff_options o;         /* its normalize lists are not kept (the normalizers copied them) */
    etl_diff_process *processes; /* a copy of o.processes, names too */
    struct diff_side side[2];
    struct diff_count_row *table; /* counts of both traces, open addressing */
    unsigned table_cap, table_used;
    struct diff_count_row *rows;  /* the rows that differ, sorted */
    size_t nrows;
    struct diff_script script;
    struct diff_pair *pairs;    /* in the order shown: A's threads, then the threads only B has */
    size_t npairs;
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
/* The number among side k's compared events of event i of the sequence pair p compares. */
size_t diff_event_number(const etl_diff *d, const struct diff_pair *p, int k, size_t i);

/* ---- diffselect.c: who an event belongs to, and which processes --process keeps ---- */

/* ev's owner, from its header, else its payload or the processor's running thread (s's maps
   are fed with ev first). -1 without memory. */
int diff_event_owner(struct diff_side *s, const etl_event *ev, struct diff_owner *out);
/* The first pass over side k when d compares only some processes: s->pids. 0, or -1 with
   the error set (a process that is not in the trace, memory, a trace that cannot be read). */
int diff_select_processes(etl_diff *d, int k);
/* Whether the events of pid are compared (always when no process was named). */
int diff_selected(const struct diff_side *s, uint32_t pid);

/* ---- diffthreads.c: each trace's threads, and which thread of B goes with which of A ---- */

/* Event number i of s (its line's hash h) belongs to thread owner o, whose first event is at
   raw time ts. -1 without memory. */
int diff_thread_add(struct diff_side *s, const struct diff_owner *o, size_t i, int64_t ts);
/* After both traces are read: each thread's events grouped, the threads of the two traces
   matched, d->pairs in the order shown. -1 without memory. */
int diff_threads_match(etl_diff *d);
/* The thread's process and thread ids, and their names where the trace has them, as "pid 12
   (name), tid 34" into buf. */
const char *diff_thread_text(const struct diff_side *s, const struct diff_thread *t, char *buf, size_t size);

/* ---------------------------------------------------------------- profiles (profile.c, pprof.c) */

/* An address's place in a profile: its frames (innermost first, indexes of etl_profile.frames
   in etl_profile.loc_frames) and its image's mapping (0: none, else index + 1). */
struct profile_location {
    uint64_t address;             /* as sampled (the first process it was seen in) */
    uint32_t first, count;        /* in loc_frames */
    uint32_t mapping;
    const char *key_path;         /* what the location is known by: the image's path and the
                                     offset looked up, or (no image) the process and address */
    uint64_t key_offset;
    uint32_t key_pid;
};
struct profile_mapping {
    const char *image, *path, *build_id;
    uint64_t start, limit;        /* the image's base and end in the first process it was seen in */
};
struct profile_stack {
    uint32_t process;             /* index of processes */
    uint32_t pid, tid;
    uint32_t first, count;        /* locations, leaf first, in stack_locs */
    uint64_t samples, weight_ns;
};
/* An open-addressing table of indexes by hash; callers compare the candidates. */
struct profile_table {
    uint64_t *hash;
    uint32_t *index;              /* UINT32_MAX: empty */
    size_t cap, count;
};
struct etl_profile {
    etl_profile_options o;
    char **process_filters;
    uint32_t *thread_filters;
    etl_symbolizer_options so;
    char **so_paths;
    char *so_llvm;
    int has_so;
    char **strings; size_t nstrings, cstrings;          /* interned, each its own allocation */
    struct profile_table string_table;
    etl_profile_frame *frames; size_t nframes, cframes;
    struct profile_table frame_table;
    uint32_t *loc_frames; size_t nloc_frames, cloc_frames;
    struct profile_location *locations; size_t nlocations, clocations;
    struct profile_table location_table;
    struct profile_mapping *mappings; size_t nmappings, cmappings;
    struct profile_table mapping_table;
    struct profile_stack *stacks; size_t nstacks, cstacks;
    uint32_t *stack_locs; size_t nstack_locs, cstack_locs;
    struct profile_table stack_table;
    const char **processes; size_t nprocesses, cprocesses; /* interned names */
    uint32_t *expanded;           /* etl_profile_stack_get's frames */
    size_t cexpanded;
    etl_profile_stats stats;
    int64_t first_ns, last_ns;
    int have_time;
    char error[512];
};

#endif
