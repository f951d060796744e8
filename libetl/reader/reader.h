/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the reader's files share (byte sources, the reader's state, its errors). */
#ifndef LIBETL_READER_H
#define LIBETL_READER_H
#ifndef ETL_BUILDING_LIBRARY
#error "reader/reader.h is private to libetl: include <etl.h>"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "etl.h"
#include "format/format.h"

/* ---------------------------------------------------------------- byte sources (source.c) */

/* Fill src to read fd with pread; close it on close when owned. 0, or -1 without memory. */
int etl_source_fd(etl_reader_source *src, int fd, int owned);
/* Fill src to read size bytes at data. 0, or -1 without memory. */
int etl_source_memory(etl_reader_source *src, const void *data, size_t size);
/* The n bytes at offset in place, when src is memory (etl_source_memory) that holds them;
   NULL otherwise (they are read with read_at). */
const uint8_t *etl_source_view(const etl_reader_source *src, size_t n, uint64_t offset);
/* 1 if the first bytes are a gzip member header. */
int etl_source_is_gzip(const uint8_t *magic, size_t n);
/* Replace src by the decompressed content of its gzip stream (in an unlinked temporary file).
   0 on success; 1 when the gzip data was damaged (what came before the damage is kept,
   the message is in err); -1 with a message in err (src still needs closing). */
int etl_source_gunzip(etl_reader_source *src, char *err, size_t errsize);

/* ---------------------------------------------------------------- limits */

/* Most memory the reader spends on buffers to read in time order (one per processor); a file
   that needs more (a damaged one, claiming thousands of processors) is read in file order. */
#define ETL_TIME_ORDER_MEMORY_LIMIT (1024ull * 1024 * 1024)
/* Most buffers the reader indexes at open (36 bytes each); a file with more is read by cursors
   that walk it, sharing a window of this many buffers walked last (40 bytes each). */
#ifndef ETL_READER_INDEX_LIMIT
#define ETL_READER_INDEX_LIMIT 16384u
#endif
/* The limit in force (tests lower it, or raise it to force the full index). */
extern uint32_t etl_reader_index_limit;
/* How the reader found its buffers: by cursors (streaming 1) or from the index of indexed
   buffers; the window's size and the most it held. For the tests. */
void etl_reader_index_stats(const etl_reader *r, int *streaming, uint32_t *indexed, uint32_t *window_cap,
                            uint32_t *window_peak);

/* ---------------------------------------------------------------- the reader's state */

/* One buffer of the file, as found by the index walk. */
struct buffer_entry {
    uint64_t offset;   /* file offset of the buffer header */
    int64_t sequence;  /* SequenceNumber (the header buffer sorts first) */
    uint32_t stored;   /* bytes of the buffer present in the file */
    uint32_t used;     /* logical used size (Offset), header included */
    uint32_t index;    /* position in the file, 0 = header buffer */
    uint16_t cpu;
    uint16_t flags;    /* BufferFlag */
};

/* A run of buffers read one after the other: one processor's (time order) or all (file order). */
struct stream {
    uint32_t *entries;   /* indexes into reader.buffers, in reading order */
    uint32_t count;
    uint32_t next;       /* next entry to load */
    uint32_t cap;        /* size of data */
    uint8_t *data;       /* room for the current buffer, decompressed, header included */
    const uint8_t *bytes; /* the current buffer: data, or where a memory source holds it */
    const struct buffer_entry *cur;
    uint32_t used;       /* valid bytes in bytes */
    uint32_t pos;        /* offset of the next record */
    uint32_t step;       /* size of the record last delivered, rounded */
    int64_t ts;          /* timestamp of the record at pos, for ordering */
    int64_t last_ts;     /* timestamp of the last record with one */
    uint32_t ordinal;    /* tie-break between streams */
    struct buffer_entry cur_entry; /* the current buffer's entry (cur points here) */
    /* Without the index (r->streaming): a cursor that finds its buffers by walking the file. */
    uint16_t cpu;        /* the processor whose buffers it takes */
    uint8_t any;         /* takes every buffer (file order) */
    uint8_t header;      /* delivers the header buffer first */
    uint8_t header_pending;
    uint64_t v, off;     /* position in the ring of data buffers (see ring_index) and where the walk to it starts */
    uint64_t v0, off0;   /* the same at the start */
    uint32_t left, total; /* data buffers still to deliver, and in all */
};

/* Per processor, from the open walk: is the file's order its SequenceNumber order? */
struct cpu_run {
    uint64_t start_offset; /* the buffer its time order starts with */
    int64_t first_seq, last_seq;
    uint32_t count, descents, start_index, max_used;
    uint16_t cpu;
};

/* One entry of the walk cache: a buffer, and where the walk goes on after it. */
struct walk_slot {
    struct buffer_entry e;
    uint64_t next;
};

struct live;

struct etl_reader {
    struct live *live;       /* a real-time stream (etl_reader_open_stream), or NULL */
    etl_reader_source src;
    char *name;
    etl_reader_options opt;
    etl_trace_info info;
    char *logger_name;
    char *log_file_name;
    etl_record_context rctx;
    struct buffer_entry *buffers;
    uint32_t nbuffers;
    uint32_t buffers_cap;
    struct stream *streams;
    uint32_t nstreams;
    uint32_t *entry_order;   /* storage for the streams' entries */
    struct stream **heap;    /* min-heap of streams by (ts, ordinal) */
    uint32_t heap_n;
    struct stream *last;     /* stream of the event last delivered */
    /* Without the index: the streams are cursors over the ring of data buffers, which share a
       window of the buffers walked last (cache[v % cache_cap] for v in [lo, hi)). */
    int streaming;
    int has_header;
    struct buffer_entry header;  /* the header buffer (offset 0) */
    uint32_t first_size;     /* BufferSize taken for the header buffer (0: its own) */
    uint64_t wrap_off;       /* where the walk to the first data buffer starts */
    uint32_t data0, ndata;   /* index of the first data buffer, and how many there are */
    struct walk_slot *cache;
    uint32_t cache_cap;
    uint32_t cache_peak;
    uint64_t lo, hi, hoff;   /* the window, and where the walk to hi starts */
    struct walk_slot priv;   /* a buffer walked to outside the window */
    struct cpu_run *runs;    /* per processor, by processor number */
    uint32_t nruns;
    uint32_t ring_start;     /* index of the data buffer with the lowest SequenceNumber */
    uint8_t *stream_memory;  /* one block holding every stream's buffer */
    uint8_t *scratch;        /* compressed bytes of one buffer */
    uint32_t scratch_cap;
    uint64_t file_size;
    int compressed_file;
    int pending_warn;
    int fatal;
    unsigned warnings;
    int64_t err_offset;
    char err[1024];
};

/* ---------------------------------------------------------------- errors and I/O (reader.c) */

/* The message on the handle, prefixed with the reader's name, and its file offset (-1: none). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_set_error(etl_reader *r, int64_t offset, const char *fmt, ...);
/* Damage found: recorded, counted and reported (on_damage); reading goes on. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_damage(etl_reader *r, int64_t offset, const char *fmt, ...);

/* Reads n bytes at offset; 0, or -1 (fatal, message set) on a read error or a short read.
   Inline: the buffers' loading and the walk call it for every buffer. */
static inline int etl_reader_read_exact(etl_reader *r, void *buf, size_t n, uint64_t offset)
{
    ssize_t k = r->src.read_at(r->src.ctx, buf, n, offset);

    if (k < 0) {
        etl_reader_set_error(r, (int64_t)offset, "read error at offset %llu: %s", (unsigned long long)offset,
                             strerror(errno));
        r->fatal = 1;
        return -1;
    }
    if ((size_t)k != n) {
        etl_reader_set_error(r, (int64_t)offset, "file shrank while reading: %zu of %zu bytes at offset %llu",
                             (size_t)k, n, (unsigned long long)offset);
        r->fatal = 1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- opening (reader.c) */

/* A reader over src with the options and its name (opt->name, else default_name); NULL
   without memory. */
etl_reader *etl_reader_new(const etl_reader_source *src, const etl_reader_options *opt, const char *default_name);
/* Parse the logfile header event at the start of the header buffer b (n bytes) into the trace
   info. 0, or -1 with the message set. */
int etl_reader_parse_logfile_header(etl_reader *r, const uint8_t *b, uint32_t n);

/* ---------------------------------------------------------------- the walk and the index (index.c) */

/* Walk the file, index its buffers (or, above etl_reader_index_limit, prepare cursors), report
   its damage. first_size: BufferSize taken for the header buffer (0: its own). 0, or -1. */
int etl_reader_index_buffers(etl_reader *r, uint32_t first_size);
/* The streams as cursors: one per processor in time order, one in file order. 0, or -1. */
int etl_reader_build_cursors(etl_reader *r);
/* The stream's next buffer: 1 with *e, 0 when it has none left, -1 on a fatal error. */
int etl_reader_stream_next_buffer(etl_reader *r, struct stream *s, struct buffer_entry *e);

/* ---------------------------------------------------------------- streams and their order (order.c) */

/* Build the streams (from the index, or cursors) and their buffers' memory. 0, or -1. */
int etl_reader_prepare_streams(etl_reader *r);
/* Position every stream on its first record. 0, or -1 on a fatal error. */
int etl_reader_streams_start(etl_reader *r);

/* ---------------------------------------------------------------- real-time streams (live.c) */

/* etl_reader_next of a real-time stream's reader. */
int etl_reader_live_next(etl_reader *r, etl_event *ev);
/* Frees the stream's state (NULL: nothing). */
void etl_reader_live_free(struct live *l);

/* The reader of a real-time stream on fd, whose "consume" request was sent (engine/control.c's
   etl_reader_open_session): the reader owns fd. With error, a reader holding only that message
   (fd unused). name names the reader unless opt does. */
int etl_reader_open_live(etl_reader **out, int fd, const etl_reader_options *opt, const char *name, const char *error);

/* ---------------------------------------------------------------- schemas and field decoding */
/* An event's schema, whatever it came from (a manifest, an EventSource manifest, TraceLogging
   metadata, a kernel MOF class): its names and its fields, decoded by one walk (fields.c).
   doc/format.md section 18 gives the rules. */

/* Blocks that are freed together (schema.c). */
struct etl_arena_chunk;
typedef struct etl_arena {
    struct etl_arena_chunk *head;
} etl_arena;
/* size bytes aligned for any field of a schema, or NULL without memory. */
void *etl_arena_alloc(etl_arena *a, size_t size);
/* A copy of n bytes of s, NUL-terminated, in a (NULL without memory). */
char *etl_arena_strndup(etl_arena *a, const char *s, size_t n);
char *etl_arena_strdup(etl_arena *a, const char *s);
void etl_arena_free(etl_arena *a);

/* How a value's length is found. */
enum etl_len_kind {
    ETL_LEN_TYPE = 0,   /* its in type's own: a fixed size, zero-terminated, a SID's, or a u16
                           byte count before it (the COUNTED types) */
    ETL_LEN_CONST,      /* length: characters of a string, bytes of binary */
    ETL_LEN_FIELD,      /* the value of an earlier field (length_ref) */
    ETL_LEN_PREFIX16,   /* a u16 byte count before it (TraceLogging's Binary) */
    ETL_LEN_REST        /* to the end of the payload */
};
/* How many values a field holds. */
enum etl_count_kind {
    ETL_COUNT_ONE = 0,  /* one: not an array */
    ETL_COUNT_CONST,    /* count */
    ETL_COUNT_FIELD,    /* the value of an earlier field (count_ref) */
    ETL_COUNT_PREFIX16, /* a u16 element count before the elements (TraceLogging's variable count) */
    ETL_COUNT_REST      /* as many whole elements as the rest of the payload holds */
};

struct etl_map_entry {
    uint64_t value;
    const char *name;
};
/* A valueMap or bitMap: entries sorted by value. */
struct etl_map {
    const char *name;
    int bitmap;
    uint32_t entry_count;
    const struct etl_map_entry *entries;
};

typedef struct etl_schema_field {
    const char *name;
    uint16_t in_type, out_type;     /* enum etl_in_type, enum etl_out_type */
    uint8_t length_kind;            /* enum etl_len_kind */
    uint8_t count_kind;             /* enum etl_count_kind */
    uint16_t span;                  /* schema entries this field takes: 1, or for a struct 1 plus
                                       its members' spans (its members follow it) */
    uint16_t members;               /* ETL_IN_STRUCT: its direct members */
    uint16_t length_ref, count_ref; /* index in the event's fields of the field giving them */
    uint32_t length, count;         /* ETL_LEN_CONST, ETL_COUNT_CONST */
    const etl_map *map;
    uint16_t slot;                  /* the kernel's typed decoding: where the value goes (0: nowhere) */
} etl_schema_field;

/* What identifies an event of a provider: the EVENT_HEADER's Id, or the event type (opcode)
   of the other headers (system, perfinfo, classic, instance: the MOF classes). */
enum etl_schema_key { ETL_KEY_ID = 0, ETL_KEY_OPCODE = 1 };
#define ETL_SCHEMA_HAS_REFS 0x1u /* a length or count is an earlier field's value */

typedef struct etl_schema_event {
    etl_guid provider;
    uint8_t key;                    /* enum etl_schema_key */
    uint8_t version;
    uint16_t id;                    /* Id (ETL_KEY_ID) or opcode (ETL_KEY_OPCODE) */
    uint8_t source;                 /* enum etl_schema_source */
    const char *provider_name, *task_name, *opcode_name, *event_name;
    uint16_t field_count;
    uint16_t max_depth;             /* deepest nesting of structs */
    uint16_t flags;                 /* ETL_SCHEMA_*, filled by etl_schema_event_prepare */
    /* The leading top-level fields of fixed size (scalars, one each), which the walk takes in
       one step once the payload holds them: how many, and their bytes, for 32- and 64-bit
       events ([0] and [1]); filled by etl_schema_event_prepare. */
    uint16_t prefix_fields[2];
    uint32_t prefix_bytes[2];
    const etl_schema_field *fields; /* depth first: a struct's members follow it */
} etl_schema_event;

typedef struct etl_schema_provider {
    etl_guid guid;
    const char *name;
    uint8_t source;                 /* enum etl_schema_source */
} etl_schema_provider;

/* What one manifest (or one built-in table) defines, in an arena of its own; a decoder adopts
   it whole or not at all (schema.c). */
typedef struct etl_schema_set {
    etl_arena arena;
    etl_schema_provider *providers;
    uint32_t provider_count, provider_cap;
    etl_schema_event **events;
    uint32_t event_count, event_cap;
} etl_schema_set;

void etl_schema_set_init(etl_schema_set *set);
void etl_schema_set_free(etl_schema_set *set);
/* Adds a provider (name copied): ETL_OK, or ETL_FAILED without memory. */
int etl_schema_set_add_provider(etl_schema_set *set, const etl_guid *guid, const char *name, int source);
/* Adds ev, whose fields and names the set's arena already holds (or static storage), and fills
   its span, members check and max_depth: ETL_OK, or ETL_FAILED without memory or when its
   fields do not form a well-made tree (a struct's members past the end, a reference to a
   field that is not before the one it sizes): the message in err. */
int etl_schema_set_add_event(etl_schema_set *set, etl_schema_event *ev, char *err, size_t errsize);
/* Checks the tree of fields and fills spans and max_depth (etl_schema_set_add_event calls it). */
int etl_schema_event_prepare(etl_schema_event *ev, char *err, size_t errsize);
/* The event name "Provider/Task/Opcode" (or what of it exists) in the arena. */
const char *etl_schema_event_name(etl_arena *a, const char *provider, const char *task, const char *opcode);

/* The kernel's classes built into libetl, adopted by every decoder (kclasses.c). */
int etl_decoder_add_builtin(etl_decoder *d);

/* ---------------------------------------------------------------- the kernel's classes (kclasses.c) */
/* The NT Kernel Logger's MOF classes (and KernelTraceControl's) as tables of schema fields,
   doc/format.md section 8.9. The same tables give the field decoder its schemas
   (etl_decoder_add_builtin) and the typed decoding of etl/kernel.h its layouts
   (etl_kernel_decode, kernel.c): a field's slot says where its value goes in etl_kernel_event. */

/* Where a field's value goes in etl_kernel_event (etl_schema_field.slot); 0: nowhere. */
enum etl_kslot {
    ETL_KSLOT_NONE = 0,
    ETL_KSLOT_PROCESS_KEY, ETL_KSLOT_PROCESS_PID, ETL_KSLOT_PROCESS_PPID, ETL_KSLOT_PROCESS_SESSION,
    ETL_KSLOT_PROCESS_EXIT, ETL_KSLOT_PROCESS_DTB, ETL_KSLOT_PROCESS_FLAGS, ETL_KSLOT_PROCESS_SID,
    ETL_KSLOT_PROCESS_IMAGE, ETL_KSLOT_PROCESS_CMDLINE, ETL_KSLOT_PROCESS_PACKAGE, ETL_KSLOT_PROCESS_APPID,
    ETL_KSLOT_THREAD_PID, ETL_KSLOT_THREAD_TID, ETL_KSLOT_THREAD_STACK_BASE, ETL_KSLOT_THREAD_STACK_LIMIT,
    ETL_KSLOT_THREAD_USTACK_BASE, ETL_KSLOT_THREAD_USTACK_LIMIT, ETL_KSLOT_THREAD_START,
    ETL_KSLOT_THREAD_WIN32_START, ETL_KSLOT_THREAD_TEB, ETL_KSLOT_THREAD_TAG, ETL_KSLOT_THREAD_BASE_PRIO,
    ETL_KSLOT_THREAD_PAGE_PRIO, ETL_KSLOT_THREAD_IO_PRIO, ETL_KSLOT_THREAD_FLAGS, ETL_KSLOT_THREAD_NAME,
    ETL_KSLOT_IMAGE_BASE, ETL_KSLOT_IMAGE_SIZE, ETL_KSLOT_IMAGE_PID, ETL_KSLOT_IMAGE_CHECKSUM,
    ETL_KSLOT_IMAGE_TIMESTAMP, ETL_KSLOT_IMAGE_SIG_LEVEL, ETL_KSLOT_IMAGE_SIG_TYPE, ETL_KSLOT_IMAGE_DEFAULT_BASE,
    ETL_KSLOT_IMAGE_FILE,
    ETL_KSLOT_CSWITCH_NEW_TID, ETL_KSLOT_CSWITCH_OLD_TID, ETL_KSLOT_CSWITCH_NEW_PRIO, ETL_KSLOT_CSWITCH_OLD_PRIO,
    ETL_KSLOT_CSWITCH_CSTATE, ETL_KSLOT_CSWITCH_SPARE, ETL_KSLOT_CSWITCH_WAIT_REASON, ETL_KSLOT_CSWITCH_WAIT_MODE,
    ETL_KSLOT_CSWITCH_STATE, ETL_KSLOT_CSWITCH_IDEAL, ETL_KSLOT_CSWITCH_WAIT_TIME, ETL_KSLOT_CSWITCH_QUANTUM,
    ETL_KSLOT_READY_TID, ETL_KSLOT_READY_REASON, ETL_KSLOT_READY_INCREMENT, ETL_KSLOT_READY_FLAGS,
    ETL_KSLOT_SAMPLE_IP, ETL_KSLOT_SAMPLE_TID, ETL_KSLOT_SAMPLE_COUNT, ETL_KSLOT_SAMPLE_FLAGS,
    ETL_KSLOT_SAMPLE_RANK, ETL_KSLOT_SAMPLE_SOURCE,
    ETL_KSLOT_STACK_TIMESTAMP, ETL_KSLOT_STACK_PID, ETL_KSLOT_STACK_TID,
    ETL_KSLOT_STACK_KEY,            /* the key, and the frame size (the record's pointer size) */
    ETL_KSLOT_STACK_FRAMES,         /* an array of pointers to the end: frames, their count and size */
    ETL_KSLOT_HEADER_BUFFER_SIZE, ETL_KSLOT_HEADER_VERSION, ETL_KSLOT_HEADER_PROVIDER_VERSION,
    ETL_KSLOT_HEADER_CPUS, ETL_KSLOT_HEADER_END_TIME, ETL_KSLOT_HEADER_TIMER_RESOLUTION,
    ETL_KSLOT_HEADER_MAX_FILE_SIZE, ETL_KSLOT_HEADER_MODE, ETL_KSLOT_HEADER_BUFFERS_WRITTEN,
    ETL_KSLOT_HEADER_POINTER_SIZE, ETL_KSLOT_HEADER_EVENTS_LOST, ETL_KSLOT_HEADER_CPU_SPEED,
    ETL_KSLOT_HEADER_TIMEZONE,      /* TIME_ZONE_INFORMATION: its Bias, the first 4 bytes */
    ETL_KSLOT_HEADER_BOOT_TIME, ETL_KSLOT_HEADER_PERF_FREQ, ETL_KSLOT_HEADER_START_TIME,
    ETL_KSLOT_HEADER_CLOCK, ETL_KSLOT_HEADER_BUFFERS_LOST, ETL_KSLOT_HEADER_LOGGER, ETL_KSLOT_HEADER_FILE,
    ETL_KSLOT_MASK1, ETL_KSLOT_MASK2, ETL_KSLOT_MASK3, ETL_KSLOT_MASK4, ETL_KSLOT_MASK5, ETL_KSLOT_MASK6,
    ETL_KSLOT_MASK7, ETL_KSLOT_MASK8, ETL_KSLOT_KERNEL_VERSION,
    ETL_KSLOT_LBR_TIMESTAMP, ETL_KSLOT_LBR_PID, ETL_KSLOT_LBR_TID, ETL_KSLOT_LBR_FILTERS,
    ETL_KSLOT_LBR_ENTRIES,          /* an array of structs to the end: entries, their count */
    ETL_KSLOT_DISK_NUMBER, ETL_KSLOT_DISK_IRP_FLAGS, ETL_KSLOT_DISK_TRANSFER_SIZE, ETL_KSLOT_DISK_OFFSET,
    ETL_KSLOT_DISK_FILE_OBJECT, ETL_KSLOT_DISK_IRP, ETL_KSLOT_DISK_RESPONSE_TIME, ETL_KSLOT_DISK_TID,
    ETL_KSLOT_SYSCALL_ADDRESS, ETL_KSLOT_SYSCALL_STATUS,
    ETL_KSLOT_ISR_DPC_INITIAL_TIME, ETL_KSLOT_ISR_DPC_ROUTINE, ETL_KSLOT_ISR_RETURN, ETL_KSLOT_ISR_VECTOR,
    ETL_KSLOT_PF_ADDRESS, ETL_KSLOT_PF_PC,
    ETL_KSLOT_NET_PID, ETL_KSLOT_NET_SIZE, ETL_KSLOT_NET_DADDR, ETL_KSLOT_NET_SADDR, ETL_KSLOT_NET_DPORT,
    ETL_KSLOT_NET_SPORT, ETL_KSLOT_NET_SEQNUM, ETL_KSLOT_NET_CONNID, ETL_KSLOT_NET_STARTIME, ETL_KSLOT_NET_ENDTIME,
    ETL_KSLOT_NET_MSS, ETL_KSLOT_NET_SACKOPT, ETL_KSLOT_NET_TSOPT, ETL_KSLOT_NET_WSOPT, ETL_KSLOT_NET_RCVWIN,
    ETL_KSLOT_NET_RCVWINSCALE, ETL_KSLOT_NET_SNDWINSCALE,
    ETL_KSLOT_FIO_IRP, ETL_KSLOT_FIO_FILE_OBJECT, ETL_KSLOT_FIO_FILE_KEY, ETL_KSLOT_FIO_OFFSET, ETL_KSLOT_FIO_EXTRA,
    ETL_KSLOT_FIO_TTID, ETL_KSLOT_FIO_IO_SIZE, ETL_KSLOT_FIO_IO_FLAGS, ETL_KSLOT_FIO_INFO_CLASS, ETL_KSLOT_FIO_LENGTH,
    ETL_KSLOT_FIO_FILE_INDEX, ETL_KSLOT_FIO_CREATE_OPTIONS, ETL_KSLOT_FIO_ATTRIBUTES, ETL_KSLOT_FIO_SHARE,
    ETL_KSLOT_FIO_STATUS, ETL_KSLOT_FIO_NAME,
    ETL_KSLOT_VA_BASE, ETL_KSLOT_VA_SIZE, ETL_KSLOT_VA_PID, ETL_KSLOT_VA_FLAGS,
    ETL_KSLOT_MF_BASE, ETL_KSLOT_MF_KEY, ETL_KSLOT_MF_MISC, ETL_KSLOT_MF_SIZE, ETL_KSLOT_MF_OFFSET, ETL_KSLOT_MF_PID,
    ETL_KSLOT_PC_PID, ETL_KSLOT_PC_FAULTS, ETL_KSLOT_PC_HANDLES, ETL_KSLOT_PC_PEAK_VS, ETL_KSLOT_PC_PEAK_WS,
    ETL_KSLOT_PC_PEAK_PF, ETL_KSLOT_PC_PEAK_QPP, ETL_KSLOT_PC_PEAK_QNP, ETL_KSLOT_PC_VS, ETL_KSLOT_PC_WS, ETL_KSLOT_PC_PF,
    ETL_KSLOT_PC_QPP, ETL_KSLOT_PC_QNP, ETL_KSLOT_PC_PRIVATE,
    ETL_KSLOT_HF_INITIAL_TIME, ETL_KSLOT_HF_OFFSET, ETL_KSLOT_HF_ADDRESS, ETL_KSLOT_HF_FILE, ETL_KSLOT_HF_TID,
    ETL_KSLOT_HF_BYTES,
    ETL_KSLOT_COUNT
};

/* One version of a kernel class: the layout its events have from version `version` on (until
   the family's next version). The typed decoding needs the first `required` fields (the record's
   fixed part); fields after them may be cut off in shorter, older records. */
typedef struct etl_kclass_version {
    uint8_t version;
    uint8_t required;               /* schema fields (indices) the typed decoding needs */
    uint16_t field_count;
    const etl_schema_field *fields; /* spans filled in: the tables are read-only */
} etl_kclass_version;

/* An event type of a family: its opcode and names. */
typedef struct etl_kclass_op {
    uint8_t opcode;
    const char *opcode_name;        /* "DCStart" */
    const char *event_name;         /* "Process/DCStart" */
} etl_kclass_op;

/* Event types of one provider that share their layouts, version by version (a MOF "type group"). */
typedef struct etl_kclass_family {
    uint8_t provider;               /* index in the providers the tables know (kclasses.c) */
    uint8_t kclass;                 /* enum etl_kclass of the typed decoding, or ETL_KCLASS_NONE */
    uint8_t op_count, version_count;
    const char *task;               /* "Process": the task and the provider's name */
    const etl_kclass_op *ops;
    const etl_kclass_version *versions; /* by rising version */
} etl_kclass_family;

/* The families the typed decoding uses (kernel.c's classification of hooks). */
extern const etl_kclass_family etl_kfam_process, etl_kfam_process_defunct, etl_kfam_thread_start,
    etl_kfam_thread_end, etl_kfam_image, etl_kfam_cswitch, etl_kfam_ready_thread, etl_kfam_sampled_profile,
    etl_kfam_pmc_sample, etl_kfam_stack, etl_kfam_stack_key, etl_kfam_stack_key_def, etl_kfam_trace_header,
    etl_kfam_group_masks, etl_kfam_rundown_complete, etl_kfam_lbr, etl_kfam_disk_io, etl_kfam_disk_flush,
    etl_kfam_disk_init, etl_kfam_syscall_enter, etl_kfam_syscall_exit, etl_kfam_thread_set_name,
    etl_kfam_isr, etl_kfam_dpc, etl_kfam_page_fault, etl_kfam_tcp_send4, etl_kfam_tcp_generic4,
    etl_kfam_tcp_connect4, etl_kfam_tcp_send6, etl_kfam_tcp_generic6, etl_kfam_tcp_connect6, etl_kfam_udp,
    etl_kfam_udp6, etl_kfam_fio_name, etl_kfam_fio_create, etl_kfam_fio_simple,
    etl_kfam_fio_rw, etl_kfam_fio_info, etl_kfam_fio_dir, etl_kfam_fio_opend,
    etl_kfam_virtual_alloc, etl_kfam_map_file, etl_kfam_process_counters, etl_kfam_hard_fault;

/* Every family of the tables, and how many. */
extern const etl_kclass_family *const etl_kclass_families[];
extern const unsigned etl_kclass_family_count;
/* The GUID and name of a family's provider. */
const etl_guid *etl_kclass_provider_guid(unsigned provider);
const char *etl_kclass_provider_name(unsigned provider);

/* The layout of version `version` in family f: the newest entry at or below it, else (an older
   version than any the tables know) the oldest. */
const etl_kclass_version *etl_kclass_version_of(const etl_kclass_family *f, unsigned version);

/* The size of a WBEM SID (ETL_IN_WBEM_SID) at p, with n bytes left and pointers of ptr bytes:
   ETL_OK with *skip (the TOKEN_USER before the SID) and *size (the SID's; 0 for none) set, so
   that the field takes *skip + *size bytes (4 for none); ETL_FAILED when the SID does not fit. */
int etl_wbem_sid_extent(const uint8_t *p, uint32_t n, unsigned ptr, uint32_t *skip, uint32_t *size);
/* The manifests of ETL_MANIFEST_PATH and the installed directory (manifest.c): ETL_OK, ETL_WARN
   (one did not load: the message is on d), ETL_FATAL without memory. */
int etl_decoder_add_defaults(etl_decoder *d);
/* Frees what etl_decoder_learn keeps (eventsource.c). */
void etl_decoder_learn_free(etl_decoder *d);
/* Where etl_decoder_learn keeps its state on d (NULL until it needs some). */
void **etl_decoder_learn_state(etl_decoder *d);
/* Reads the instrumentation manifest xml (size bytes; name in messages) into set: its providers
   and every version of their events, with the given source (ETL_SCHEMA_MANIFEST or
   ETL_SCHEMA_EVENTSOURCE). ETL_OK; ETL_FAILED with "name:line: what is wrong" in err (set then
   holds part of the manifest: free it); ETL_FATAL without memory. What it skips but does not
   refuse goes to d's warnings (d may be NULL). doc/format.md section 19. */
int etl_manifest_parse(etl_schema_set *set, const void *xml, size_t size, const char *name, int source,
                       etl_decoder *d, char *err, size_t errsize);
/* Reports a warning through the decoder's options. */
void etl_decoder_warn(etl_decoder *d, const char *message);

/* The decoder takes set (on ETL_OK it owns it and set is emptied; on ETL_FAILED, without
   memory, set is left to the caller). A provider of set replaces what the decoder had of it. */
int etl_decoder_adopt(etl_decoder *d, etl_schema_set *set);
/* The schema of the event the last etl_decoder_decode call found one for (its names and every
   field, whether or not the payload fit), or NULL when that event had none. Valid until
   etl_decoder_close: a schema is never freed before (the SQLite loader keys what it learns of an
   event's names and fields by it). */
const etl_schema_event *etl_decoder_last_schema(const etl_decoder *d);
/* Sets the decoder's message. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void etl_decoder_set_error(etl_decoder *d, const char *fmt, ...);

/* The in type's fixed size in bytes for the given pointer size, or 0 when its size varies. */
unsigned etl_in_type_fixed_size(unsigned in_type, unsigned pointer_size);

/* Where the walk stopped when the payload did not fit. */
typedef struct etl_fields_fault {
    const char *field;              /* the field that did not fit */
    uint32_t offset;                /* at this byte of the payload */
    const char *why;                /* "needs 8 bytes, 3 left", ... (static or in reason) */
    char reason[96];
} etl_fields_fault;

/* Growable storage of one walk's results (kept by the decoder between events). */
typedef struct etl_fields_buf {
    etl_field *fields;
    uint32_t count, cap;
    uint32_t used;                  /* payload bytes the fields covered */
    uint64_t *refs;                 /* the last integer value of each schema field (lengths, counts) */
    uint32_t refs_cap;
} etl_fields_buf;
void etl_fields_buf_free(etl_fields_buf *b);

/* Walks payload by schema s into b: ETL_OK, ETL_FAILED (the payload does not fit: *fault says
   where; b holds the fields before it), or ETL_FATAL without memory. */
int etl_fields_decode(const etl_schema_event *s, const uint8_t *payload, uint32_t len, unsigned pointer_size,
                      etl_fields_buf *b, etl_fields_fault *fault);

/* A TraceLogging event's schema from its EVENT_SCHEMA_TL item (meta, n bytes) and its provider's
   name, in arena a: the event, or NULL with the message in err (malformed metadata) or, when
   memory ran out, err "out of memory". */
etl_schema_event *etl_tracelogging_schema(etl_arena *a, const etl_guid *provider, const char *provider_name,
                                          const uint8_t *meta, uint32_t n, char *err, size_t errsize);
/* The provider name in a PROV_TRAITS item into out (NUL-terminated): ETL_OK or ETL_FAILED. */
int etl_tracelogging_provider_name(const uint8_t *traits, uint32_t n, char *out, size_t size);

#endif /* LIBETL_READER_H */
