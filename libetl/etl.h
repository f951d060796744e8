/* SPDX-License-Identifier: MIT */
/* libetl public API: read Event Trace Log (.etl) files written by Event Tracing for Windows. */
#ifndef LIBETL_ETL_H
#define LIBETL_ETL_H

#include <signal.h> /* sig_atomic_t */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(ETL_NO_VISIBILITY)
#define ETL_API __attribute__((visibility("default")))
#else
#define ETL_API
#endif

/* Version of this header; etl_version_number() gives the library's. */
#define ETL_VERSION_MAJOR 0
#define ETL_VERSION_MINOR 1
#define ETL_VERSION_PATCH 0
#define ETL_VERSION_NUMBER (ETL_VERSION_MAJOR * 1000000 + ETL_VERSION_MINOR * 1000 + ETL_VERSION_PATCH)
#define ETL_VERSION_STRING "0.1.0"

/* The library's version as ETL_VERSION_NUMBER and as a string ("0.1.0"). */
ETL_API int etl_version_number(void);
ETL_API const char *etl_version(void);
/* "libetl 0.1.0 zlib/1.2.13": the library and the versions of what it links. Static storage. */
ETL_API const char *etl_version_details(void);

/*
 * Status codes, ordered by severity (as libarchive orders its own):
 *   ETL_OK      the call did what was asked.
 *   ETL_EOF     no more events.
 *   ETL_WARN    data was damaged and skipped; the call still did what was asked and reading
 *               goes on. etl_reader_error() says what and at which file offset.
 *   ETL_FAILED  this call could not do its work, but the handle can still be used.
 *   ETL_FATAL   the handle can no longer be used except to close it.
 */
enum etl_status {
    ETL_OK = 0,
    ETL_EOF = 1,
    ETL_WARN = -20,
    ETL_FAILED = -25,
    ETL_FATAL = -30
};

/* A GUID in its Windows layout: Data1..Data3 are host integers, Data4 raw bytes. */
typedef struct etl_guid {
    uint32_t data1;
    uint16_t data2;
    uint16_t data3;
    uint8_t data4[8];
} etl_guid;

#define ETL_GUID_STRING_SIZE 37 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" + NUL */

/* Writes the lowercase text form of g into out (ETL_GUID_STRING_SIZE bytes); returns out. */
ETL_API char *etl_guid_format(const etl_guid *g, char out[ETL_GUID_STRING_SIZE]);
/* Parses "xxxxxxxx-xxxx-..." (optionally in braces, any case); ETL_OK or ETL_FAILED. */
ETL_API int etl_guid_parse(const char *text, etl_guid *out);
/* 1 if equal, else 0. */
ETL_API int etl_guid_equal(const etl_guid *a, const etl_guid *b);
/* The name of a well-known provider or kernel event group ("Process", "EventTrace",
   "Microsoft-Windows-DotNETRuntime", ...), or NULL. Static storage. */
ETL_API const char *etl_guid_name(const etl_guid *g);
/* The GUID etl_guid_name gives name for (any case): ETL_OK, or ETL_FAILED when it names none. */
ETL_API int etl_guid_from_name(const char *name, etl_guid *out);

/* The kind of trace header an event record has (etl-format.md section 4.1). */
enum etl_event_kind {
    ETL_KIND_SYSTEM = 1,   /* SYSTEM_TRACE_HEADER, full (0x20 bytes) */
    ETL_KIND_COMPACT,      /* SYSTEM_TRACE_HEADER, compact (0x18 bytes) */
    ETL_KIND_PERFINFO,     /* PERFINFO_TRACE_HEADER (0x10 bytes) */
    ETL_KIND_CLASSIC,      /* EVENT_TRACE_HEADER (0x30 bytes) */
    ETL_KIND_INSTANCE,     /* EVENT_INSTANCE_GUID_HEADER (0x48 bytes) */
    ETL_KIND_EVENT,        /* EVENT_HEADER (0x50 bytes) */
    ETL_KIND_MESSAGE       /* MESSAGE_TRACE_HEADER (WPP, 8 bytes + optional items) */
};
/* "system", "compact", "perfinfo", "classic", "instance", "event", "message"; or "unknown". */
ETL_API const char *etl_event_kind_name(int kind);

/* Which fields an etl_event carries (bits of etl_event.has). */
#define ETL_HAS_ID       0x01u /* id, channel, task, keywords, activity_id (EVENT_HEADER) */
#define ETL_HAS_LEVEL    0x02u
#define ETL_HAS_PID_TID  0x04u
#define ETL_HAS_PROVIDER 0x08u /* provider is meaningful (not for groups >= 0x1F) */
#define ETL_HAS_CPU_TIME 0x10u /* kernel_time and user_time */
#define ETL_HAS_TIMESTAMP 0x20u /* WPP messages may lack one */

/*
 * One event record, as a view into the reader's buffer: every pointer stays valid until the
 * next call to etl_reader_next() or etl_reader_close() on the reader that returned it.
 */
typedef struct etl_event {
    int kind;                 /* enum etl_event_kind */
    unsigned has;             /* ETL_HAS_* */
    uint8_t header_type;      /* raw HeaderType byte (0x01, 0x02, ... 0x15; 0x90 for messages) */
    uint8_t pointer_size;     /* 4 or 8: the bitness of the code that logged this event */
    uint16_t cpu;             /* processor of the buffer the event was logged in */
    int64_t timestamp;        /* raw clock value (see etl_reader_time_ns) */
    uint32_t pid, tid;        /* valid when has & ETL_HAS_PID_TID */
    etl_guid provider;        /* provider, event class GUID, or the GUID of the kernel group */
    uint16_t hook_id;         /* system/compact/perfinfo: Group << 8 | Type; WPP: message number */
    uint16_t id;              /* EVENT_HEADER Id */
    uint16_t version;         /* event version (system/perfinfo: without PMC/PEBS flag bits) */
    uint8_t channel;
    uint8_t level;
    uint8_t opcode;           /* opcode, or the event type of system/perfinfo/classic headers */
    uint16_t task;
    uint64_t keywords;
    uint16_t flags;           /* EVENT_HEADER Flags; message: OptionFlags */
    uint16_t event_property;  /* EVENT_HEADER EventProperty */
    uint32_t kernel_time, user_time; /* CPU time ticks; valid when has & ETL_HAS_CPU_TIME */
    etl_guid activity_id;     /* EVENT_HEADER ActivityId */
    uint32_t instance_id, parent_instance_id; /* instance headers */
    etl_guid parent_guid;                     /* instance headers */
    uint32_t message_sequence;                /* WPP messages with TRACE_MESSAGE_SEQUENCE */
    const uint8_t *record;    /* the whole record, header included */
    uint32_t record_size;     /* its Size field (not rounded) */
    const uint8_t *payload;   /* the user data */
    uint32_t payload_len;
    const uint8_t *ext;       /* extended data items (EVENT_HEADER) or PEBS/PMC items (perfinfo) */
    uint32_t ext_len;
    uint16_t ext_count;       /* number of extended data items (PEBS and each PMC counts one) */
    uint32_t buffer_index;    /* index of the buffer in the file (0 = header buffer) */
    uint64_t buffer_offset;   /* file offset of that buffer */
    uint32_t record_offset;   /* offset of the record in the (decompressed) buffer */
} etl_event;

/* Extended data item types (EVENT_HEADER_EXT_TYPE_*), etl-format.md section 4.6. */
enum etl_ext_type {
    ETL_EXT_RELATED_ACTIVITYID = 1, ETL_EXT_SID = 2, ETL_EXT_TS_ID = 3, ETL_EXT_INSTANCE_INFO = 4,
    ETL_EXT_STACK_TRACE32 = 5, ETL_EXT_STACK_TRACE64 = 6, ETL_EXT_PEBS_INDEX = 7,
    ETL_EXT_PMC_COUNTERS = 8, ETL_EXT_PSM_KEY = 9, ETL_EXT_EVENT_KEY = 10,
    ETL_EXT_EVENT_SCHEMA_TL = 11, ETL_EXT_PROV_TRAITS = 12, ETL_EXT_PROCESS_START_KEY = 13,
    ETL_EXT_CONTROL_GUID = 14, ETL_EXT_QPC_DELTA = 15, ETL_EXT_CONTAINER_ID = 16,
    ETL_EXT_STACK_KEY32 = 17, ETL_EXT_STACK_KEY64 = 18
};
/* Name of an extended data item type ("STACK_TRACE64"), or "UNKNOWN". */
ETL_API const char *etl_ext_type_name(unsigned type);

/* One extended data item: a view, valid as long as the event it came from. */
typedef struct etl_ext_item {
    uint16_t type;        /* enum etl_ext_type */
    uint16_t size;        /* data bytes */
    const uint8_t *data;
} etl_ext_item;

/* The index-th extended data item of ev (0 <= index < ev->ext_count): ETL_OK or ETL_FAILED.
   The reader has already checked every item's bounds. */
ETL_API int etl_event_ext_item(const etl_event *ev, unsigned index, etl_ext_item *out);

/* Clock types (TRACE_LOGFILE_HEADER.ReservedFlags). */
enum etl_clock_type {
    ETL_CLOCK_RAW = 0,
    ETL_CLOCK_PERFCOUNTER = 1, /* QueryPerformanceCounter ticks at perf_freq per second */
    ETL_CLOCK_SYSTEMTIME = 2,  /* FILETIME units (100 ns) */
    ETL_CLOCK_CPUCYCLE = 3     /* CPU cycles at cpu_speed_mhz */
};
/* "perfcounter", "systemtime", "cpucycle", "raw"; "unknown" otherwise. */
ETL_API const char *etl_clock_type_name(int clock_type);

/*
 * The clock of a trace: how raw event timestamps map to absolute time. Every part of the
 * toolkit that converts time (reader, merge, SQLite, diff) goes through etl_clock_time_ns.
 */
typedef struct etl_clock {
    int type;                 /* enum etl_clock_type */
    int64_t perf_freq;        /* ticks per second for PerfCounter */
    uint32_t cpu_speed_mhz;   /* for CPU cycle */
    int64_t start_time;       /* FILETIME of session start (logfile header StartTime) */
    int64_t start_timestamp;  /* raw clock at StartTime (the logfile header event's timestamp) */
} etl_clock;

/* Nanoseconds since 1970-01-01 UTC of raw timestamp ts, exact in integer arithmetic
   (no floating point; rounding toward minus infinity). */
ETL_API int64_t etl_clock_time_ns(const etl_clock *c, int64_t ts);
/* The first raw timestamp whose time is at or after ns: the inverse of etl_clock_time_ns
   (etl_clock_timestamp(c, etl_clock_time_ns(c, ts)) == ts for clocks up to 1 GHz). */
ETL_API int64_t etl_clock_timestamp(const etl_clock *c, int64_t ns);
/* Ticks per second of the raw clock (perf_freq, 10 000 000, or MHz * 1e6); 0 if unknown. */
ETL_API int64_t etl_clock_frequency(const etl_clock *c);
/* FILETIME (100 ns since 1601) <-> nanoseconds since 1970. */
ETL_API int64_t etl_filetime_to_ns(int64_t filetime);
ETL_API int64_t etl_ns_to_filetime(int64_t ns);
/* Formats ns since 1970 as "2024-01-31T12:34:56.123456789Z" into out (at least 31 bytes). */
ETL_API char *etl_format_time_ns(int64_t ns, char *out, size_t size);
/* Parses "2024-01-31T12:34:56.123456789Z", the form etl_format_time_ns writes, into ns since
   1970 (UTC). The fraction and the Z may be left out; digits beyond nanoseconds are dropped.
   ETL_OK, or ETL_FAILED when text is not such a time or is out of range. */
ETL_API int etl_parse_time_ns(const char *text, int64_t *ns);

/*
 * One clock's raw timestamps as raw timestamps of another clock: the tick of the target clock
 * nearest to the source timestamp's absolute time (halves round up), in exact integer
 * arithmetic. When both clocks tick at the same frequency the mapping is a shift by a whole
 * number of ticks, so timestamps keep their exact differences. The fields are private: set
 * them with etl_clock_map_init.
 */
typedef struct etl_clock_map {
    int64_t from_timestamp;   /* the source clock's start_timestamp */
    int64_t base;             /* target ticks at the source anchor, whole part */
    int64_t remainder;        /* and its fraction, over denominator */
    int64_t numerator, denominator; /* target ticks per source tick */
    int same_frequency;       /* a shift: target = source + shift */
    int64_t shift;
} etl_clock_map;

/* Prepares m to map timestamps of clock from onto clock to. ETL_OK, or ETL_FAILED when a
   frequency is beyond 2^36 Hz (68.7 GHz) or the ticks between the two start times do not fit in
   64 bits: damaged headers, which this arithmetic does not handle. */
ETL_API int etl_clock_map_init(etl_clock_map *m, const etl_clock *from, const etl_clock *to);
/* The target clock's timestamp for source timestamp ts (saturating at the int64 range). */
ETL_API int64_t etl_clock_map_timestamp(const etl_clock_map *m, int64_t ts);

/* The trace info: what the logfile header says, plus what the reader counted. */
typedef struct etl_trace_info {
    const char *logger_name;   /* UTF-8, never NULL; valid until etl_reader_close() */
    const char *log_file_name; /* UTF-8, never NULL */
    uint32_t log_file_mode;    /* EVENT_TRACE_* mode flags as stored */
    etl_clock clock;
    int64_t end_time;          /* FILETIME; 0 while the session still logged */
    int64_t boot_time;         /* FILETIME */
    uint8_t os_major, os_minor; /* Version bytes 0 and 1 */
    uint8_t layout_major, layout_minor; /* log layout version, bytes 2 and 3 (1.5, 2.0) */
    uint32_t os_build;         /* ProviderVersion */
    uint32_t pointer_size;     /* of the session: 4 or 8 */
    uint32_t number_of_processors;
    uint32_t buffer_size;      /* logical buffer size in bytes */
    uint32_t maximum_file_size;
    uint32_t timer_resolution; /* 100 ns units */
    uint32_t buffers_written;  /* as the header says (includes the header buffer) */
    uint32_t events_lost;
    uint32_t buffers_lost;
    uint32_t start_buffers;
    int32_t timezone_bias;     /* minutes, UTC = local + bias */
    uint32_t buffers;          /* buffers found in the file (header buffer included) */
    uint32_t compressed_buffers; /* of those, XPRESS-compressed */
    uint32_t damaged_buffers;  /* buffers skipped or read only in part because of damage */
    uint64_t file_size;        /* bytes of the (decompressed, for .etl.gz) file */
} etl_trace_info;

/* Log file mode bits (etl-format.md section 3.4) that the toolkit uses by name. */
#define ETL_MODE_FILE_SEQUENTIAL 0x00000001u
#define ETL_MODE_FILE_CIRCULAR   0x00000002u
#define ETL_MODE_FILE_APPEND     0x00000004u
#define ETL_MODE_FILE_NEWFILE    0x00000008u
#define ETL_MODE_REAL_TIME       0x00000100u
#define ETL_MODE_BUFFERING       0x00000400u
#define ETL_MODE_ADD_HEADER      0x00001000u
#define ETL_MODE_RELOG           0x00010000u
#define ETL_MODE_SYSTEM_LOGGER   0x02000000u
#define ETL_MODE_COMPRESSED      0x04000000u
#define ETL_MODE_INDEPENDENT_SESSION 0x08000000u
#define ETL_MODE_NO_PER_PROCESSOR_BUFFERING 0x10000000u
/* Writes the names of the set bits of mode, '|'-separated ("SEQUENTIAL|NEWFILE"; "(0)" for 0;
   unnamed bits as hex) into out; returns out. */
ETL_API char *etl_log_file_mode_format(uint32_t mode, char *out, size_t size);

typedef struct etl_reader etl_reader;

/* How events are delivered. */
enum etl_order {
    ETL_ORDER_TIME = 0, /* default: each processor's buffers in SequenceNumber order, k-way
                           merged by timestamp; ties by processor, then position */
    ETL_ORDER_FILE = 1  /* buffer by buffer as stored, records in buffer order */
};

/* Options for opening; zero-initialise and set what you need. */
typedef struct etl_open_options {
    int order;             /* enum etl_order */
    const char *name;      /* name used in messages (default: the path, "<fd N>", "<memory>") */
    /* Called for every piece of damage found (while opening and while reading), in file
       order of discovery, with the file offset and the message (which names the file). */
    void (*on_damage)(void *arg, int64_t offset, const char *message);
    void *on_damage_arg;
} etl_open_options;

/*
 * The one way of opening: a source that reads at any offset.
 *   read_at(ctx, buf, n, offset) reads up to n bytes at offset and returns how many it read
 *   (0 at end of file) or -1 on error (errno set);
 *   size(ctx) returns the size in bytes, or -1 if unknown;
 *   close(ctx) releases ctx (may be NULL).
 */
typedef struct etl_source {
    void *ctx;
    ssize_t (*read_at)(void *ctx, void *buf, size_t n, uint64_t offset);
    int64_t (*size)(void *ctx);
    void (*close)(void *ctx);
} etl_source;

/*
 * Open a reader. On success returns ETL_OK (or ETL_WARN when damage was found while indexing
 * the buffers; the message is in etl_reader_error()) and sets *out. On failure returns
 * ETL_FATAL and sets *out to a reader that holds only the error message (read it, then close
 * it), or to NULL when memory ran out. The reader takes ownership of src in every case.
 * Gzip-compressed input (.etl.gz) is recognised by its magic bytes and decompressed to an
 * unlinked temporary file, so memory stays bounded.
 */
ETL_API int etl_reader_open(etl_reader **out, const etl_source *src, const etl_open_options *opt);
/* Open a file by path (the file is read in place, never loaded whole). */
ETL_API int etl_reader_open_path(etl_reader **out, const char *path, const etl_open_options *opt);
/* Open from a file descriptor that supports pread (a regular file); the caller keeps the fd. */
ETL_API int etl_reader_open_fd(etl_reader **out, int fd, const etl_open_options *opt);
/* Open from memory; the caller keeps data alive and unchanged until etl_reader_close(). */
ETL_API int etl_reader_open_memory(etl_reader **out, const void *data, size_t size,
                                   const etl_open_options *opt);
/*
 * Real-time consumers. etl_reader_open_session connects to the running session NAME of this
 * user (etlrecord start NAME --mode realtime) and consumes it; etl_reader_open_stream reads
 * the same stream from fd, a socket on which a session's etl_session_realtime_deliver answers
 * (the caller keeps fd). The buffers the session held for a consumer come first.
 * etl_reader_next waits for events and delivers them in time order within each batch of
 * buffers that arrive together, and batches in the order the session wrote its buffers. It
 * returns ETL_EOF once the session stopped and everything was delivered: etl_reader_info's
 * events_lost is then the session's EventsLost plus the events of the buffers no consumer got,
 * and buffers_lost their number (RealTimeBuffersLost). ETL_FATAL when the session went away
 * without stopping or the stream is damaged (the message gives the byte of the stream), or,
 * with errno EINTR, when a signal interrupted the wait (nothing was lost: call again to go
 * on). A stream cannot be rewound; an event's buffer_index and buffer_offset are within its
 * batch. etl_reader_open_session fails (ETL_FATAL, message in etl_reader_error) when no such
 * session runs, it is not in real-time mode, or it has a consumer already.
 */
ETL_API int etl_reader_open_session(etl_reader **out, const char *name, const etl_open_options *opt);
ETL_API int etl_reader_open_stream(etl_reader **out, int fd, const etl_open_options *opt);

/*
 * Deliver the next event into *ev: ETL_OK, ETL_WARN (the event is valid, and damage was
 * skipped before it: see etl_reader_error()), ETL_EOF, or ETL_FATAL (I/O error).
 * Every readable event is delivered: a damaged record or buffer is reported and skipped.
 */
ETL_API int etl_reader_next(etl_reader *r, etl_event *ev);

/* The trace info; valid until etl_reader_close(). Counts reflect the whole file from open. */
ETL_API const etl_trace_info *etl_reader_info(const etl_reader *r);

/* Absolute time (ns since 1970 UTC) of a raw timestamp of this trace. */
ETL_API int64_t etl_reader_time_ns(const etl_reader *r, int64_t ts);

/* The message of the last WARN/FAILED/FATAL, naming the file and the byte offset, or "" if
   none. Valid until the next call on r. */
ETL_API const char *etl_reader_error(const etl_reader *r);
/* The file offset the last message refers to, or -1. */
ETL_API int64_t etl_reader_error_offset(const etl_reader *r);
/* Number of damage reports so far (each WARN counts one). */
ETL_API unsigned etl_reader_warnings(const etl_reader *r);

/* Rewind to the first event (same order). */
ETL_API int etl_reader_rewind(etl_reader *r);

ETL_API void etl_reader_close(etl_reader *r);


/* ======================================================================== writing */

/* What describes an EVENT_HEADER event (EVENT_DESCRIPTOR). */
typedef struct etl_event_descriptor {
    uint16_t id;
    uint8_t version;
    uint8_t channel;
    uint8_t level;
    uint8_t opcode;
    uint16_t task;
    uint64_t keywords;
} etl_event_descriptor;

/* One piece of an event's user data (EVENT_DATA_DESCRIPTOR). */
typedef struct etl_data {
    const void *ptr;
    uint32_t size;
} etl_data;

/* Largest record: records have a 16-bit Size (ETW's limit of just under 64 KB). */
#define ETL_MAX_RECORD_SIZE 0xFFF8u
/* Records start 8-byte aligned: the space a record of size n takes in a buffer. */
#define ETL_RECORD_SPACE(n) (((uint32_t)(n) + 7u) & ~7u)

/* The optional parts of an EVENT_HEADER record. */
typedef struct etl_event_extras {
    const etl_guid *activity_id;          /* ActivityId, or NULL for zero */
    const etl_guid *related_activity_id;  /* RELATED_ACTIVITYID item, or NULL */
    const uint64_t *stack;                /* STACK_TRACE64 item: frames, or NULL */
    unsigned stack_frames;
    uint64_t stack_match_id;
    int64_t timestamp;                    /* the event's timestamp (the raw clock of the session
                                             it goes to), or 0: the one the caller passes, or
                                             for a session, taken when it is written */
} etl_event_extras;

/*
 * Record encoders: each returns the size of the record it would write (its Size field, not
 * rounded) and writes it to dst only when dst is not NULL and cap is large enough; 0 when
 * the record cannot exist (larger than ETL_MAX_RECORD_SIZE). The caller reserves
 * ETL_RECORD_SPACE(size) bytes; the padding is zeroed by the encoder.
 */
/* EVENT_HEADER (64-bit) with extended data items; its timestamp is ts, or x->timestamp when
   that is not 0. */
ETL_API uint32_t etl_encode_event(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                  const etl_guid *provider, const etl_event_descriptor *d,
                                  const etl_event_extras *x, const etl_data *data, unsigned ndata);
/* SYSTEM_TRACE_HEADER (64-bit) event of a kernel event class: hook = Group << 8 | Type. */
ETL_API uint32_t etl_encode_system(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                   uint32_t pid, uint32_t tid, const etl_data *data, unsigned ndata);
/* PERFINFO_TRACE_HEADER (64-bit) event of a kernel event class. */
ETL_API uint32_t etl_encode_perfinfo(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                     const etl_data *data, unsigned ndata);

/* ---- LBR (last branch record) events, etl-format.md section 8.8 ---- */

/* The LBR sample event: group 0x0C (GUID 99134383-5248-43fc-834b-529454e75df3), type 0x20. */
#define ETL_HOOK_LBR_SAMPLE 0x0C20
/* LbrFilterFlags (EVNTRACE_LBR_FILTER_*), as TraceConfigureLastBranchRecord takes them. */
#define ETL_LBR_FILTER_KERNEL         0x001u
#define ETL_LBR_FILTER_USER           0x002u
#define ETL_LBR_FILTER_JCC            0x004u
#define ETL_LBR_FILTER_NEAR_REL_CALL  0x008u
#define ETL_LBR_FILTER_NEAR_IND_CALL  0x010u
#define ETL_LBR_FILTER_NEAR_RET       0x020u
#define ETL_LBR_FILTER_NEAR_IND_JMP   0x040u
#define ETL_LBR_FILTER_NEAR_REL_JMP   0x080u
#define ETL_LBR_FILTER_FAR_BRANCH     0x100u
#define ETL_LBR_CALLSTACK             0x200u

/* One branch (ETW_LBR_ENTRY). */
typedef struct etl_lbr_entry {
    uint64_t from;
    uint64_t to;
    uint64_t reserved;
} etl_lbr_entry;

/* A decoded LBR event (LBR_TRACE_EVENT_DATA); the entries stay in the record. */
typedef struct etl_lbr {
    int64_t timestamp;   /* of the event that triggered it (raw clock) */
    uint32_t pid, tid;
    uint32_t filters;    /* ETL_LBR_FILTER_* and ETL_LBR_CALLSTACK */
    unsigned count;      /* entries, most recent branch first */
    unsigned pointer_size;
    const uint8_t *entries;
} etl_lbr;

/* Encodes an LBR event (PERFINFO64 header, version 2) whose payload is LBR_TRACE_EVENT_DATA
   followed by the entries; ts is the triggering event's timestamp. Same contract as the
   other encoders. */
ETL_API uint32_t etl_encode_lbr(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                uint32_t filters, const etl_lbr_entry *entries, unsigned count);
/* Decodes an LBR event into *out: 1 when ev is one, 0 when it is not an LBR event, and
   ETL_FAILED when it is one whose payload is malformed (not header + whole entries). */
ETL_API int etl_lbr_decode(const etl_event *ev, etl_lbr *out);
/* The index-th entry of a decoded LBR event. */
ETL_API etl_lbr_entry etl_lbr_entry_at(const etl_lbr *lbr, unsigned index);

/* ---- Kernel event classes decoded into typed records (etl-format.md section 8) ---- */

/*
 * The NT Kernel Logger's event classes, recognised by their hook (Group << 8 | Type) in
 * SYSTEM and PERFINFO headers, decoded from the payload in both pointer sizes (the record's
 * own header type says which) and in every version real files carry: doc/kernel-events.md
 * gives each layout and where it comes from. Every field points into the record or is
 * copied from it: the result is valid as long as the event it came from.
 */
enum etl_kclass {
    ETL_KCLASS_NONE = 0,
    ETL_KCLASS_PROCESS,          /* Process: Start 1, End 2, DCStart 3, DCEnd 4, Defunct 39 */
    ETL_KCLASS_THREAD,           /* Thread: Start 1, End 2, DCStart 3, DCEnd 4 */
    ETL_KCLASS_IMAGE,            /* Image: Load 10 (hook 0x030A), Unload 2, DCStart 3, DCEnd 4 */
    ETL_KCLASS_CSWITCH,          /* Thread 36 (0x0524) */
    ETL_KCLASS_READY_THREAD,     /* Thread 50 (0x0532) */
    ETL_KCLASS_SAMPLED_PROFILE,  /* PerfInfo 46 (0x0F2E) SampleProf, 47 (0x0F2F) PMCSample */
    ETL_KCLASS_STACK,            /* StackWalk 32 (0x1820): a stack and its frames */
    ETL_KCLASS_STACK_KEY,        /* StackWalk 37/38 (0x1825 kernel, 0x1826 user): a stack by its key */
    ETL_KCLASS_STACK_KEY_DEF,    /* StackWalk 35/36 (0x1823 delete, 0x1824 rundown): a key's frames */
    ETL_KCLASS_TRACE_HEADER,     /* EventTrace 0 (0x0000): a logfile header as an event */
    ETL_KCLASS_GROUP_MASKS,      /* EventTrace 5 / 32 (0x0005 extension, 0x0020 end extension) */
    ETL_KCLASS_RUNDOWN_COMPLETE, /* EventTrace 8 (0x0008) */
    ETL_KCLASS_LBR,              /* LBR 32 (0x0C20), as etl_lbr_decode */
    ETL_KCLASS_DISK_IO,          /* DiskIo completions: Read 10, Write 11, FlushBuffers 14 (0x010A, 0x010B, 0x010E) */
    ETL_KCLASS_DISK_IO_INIT,     /* DiskIo issues: ReadInit 12, WriteInit 13, FlushInit 15 (0x010C, 0x010D, 0x010F) */
    ETL_KCLASS_SYSCALL_ENTER,    /* PerfInfo 51 (0x0F33) */
    ETL_KCLASS_SYSCALL_EXIT      /* PerfInfo 52 (0x0F34) */
};
#define ETL_KCLASS_COUNT (ETL_KCLASS_SYSCALL_EXIT + 1)
/* "process", "thread", "image", "cswitch", "ready_thread", "sampled_profile", "stack",
   "stack_key", "stack_key_def", "trace_header", "group_masks", "rundown_complete", "lbr",
   "disk_io", "disk_io_init", "syscall_enter", "syscall_exit";
   "none" for ETL_KCLASS_NONE, "unknown" otherwise. */
ETL_API const char *etl_kclass_name(int kclass);

/* A string inside a record, without its terminator: 8-bit (ANSI) or UTF-16LE. */
typedef struct etl_string {
    const uint8_t *data;      /* NULL when the record does not carry it */
    uint32_t size;            /* bytes */
    uint8_t utf16;            /* 1: UTF-16LE code units; 0: 8-bit characters */
} etl_string;
/* Writes s as UTF-8 into out (NUL-terminated when size > 0, cut at a character boundary):
   UTF-16 surrogate pairs are joined and unpaired ones become U+FFFD; 8-bit strings pass
   through when they are valid UTF-8, else each byte is taken as Windows-1252. Returns the
   length of the whole conversion (without the NUL), as snprintf does. */
ETL_API size_t etl_string_utf8(const etl_string *s, char *out, size_t size);
/* Writes a binary SID (revision, count, authority, sub-authorities) as "S-1-5-18" into out;
   returns out, or "" in out when sid is not a whole SID. */
ETL_API char *etl_sid_format(const uint8_t *sid, uint32_t size, char *out, size_t out_size);

typedef struct etl_kprocess {
    uint64_t unique_process_key;    /* the EPROCESS address (version 2+; PageDirectoryBase in 1) */
    uint32_t pid, parent_pid;
    uint32_t session_id;            /* version 1+ */
    int32_t exit_status;            /* version 1+ */
    uint64_t directory_table_base;  /* version 3+ */
    uint32_t flags;                 /* version 4+: 1 APPLICATION_ID, 2 WOW64, 4 PROTECTED, 8 PACKAGED */
    const uint8_t *sid;             /* the user's SID (binary), or NULL */
    uint32_t sid_size;
    etl_string image_file_name;     /* 8-bit */
    etl_string command_line;        /* UTF-16, version 2+ */
    etl_string package_full_name;   /* UTF-16, version 4+ */
    etl_string application_id;      /* UTF-16, version 4+ */
} etl_kprocess;

typedef struct etl_kthread {
    uint32_t pid, tid;
    uint64_t stack_base, stack_limit;         /* kernel stack (version 1 End events: 0) */
    uint64_t user_stack_base, user_stack_limit;
    uint64_t start_address;                   /* StartAddr (version 1 too, per its MOF class) */
    uint64_t win32_start_address;
    uint64_t teb_base;                        /* version 2+ */
    uint32_t sub_process_tag;                 /* version 2+ */
    uint8_t base_priority, page_priority, io_priority, thread_flags; /* version 3+ */
    etl_string name;                          /* UTF-16, version 4+ when present */
} etl_kthread;

typedef struct etl_kimage {
    uint64_t image_base, image_size;
    uint32_t pid;
    uint32_t checksum, time_date_stamp;       /* version 2+ */
    uint8_t signature_level, signature_type;  /* version 3+ */
    uint64_t default_base;                    /* version 2+ */
    etl_string file_name;                     /* UTF-16, an NT path ("\Device\HarddiskVolume2\...") */
} etl_kimage;

typedef struct etl_kcswitch {
    uint32_t new_tid, old_tid;
    int8_t new_thread_priority, old_thread_priority;
    uint8_t previous_cstate;
    int8_t spare_byte;
    uint8_t old_thread_wait_reason;           /* KWAIT_REASON */
    uint8_t old_thread_wait_mode;             /* bit 0: user mode */
    uint8_t old_thread_state;                 /* KTHREAD_STATE */
    uint8_t old_thread_wait_ideal_processor;
    uint32_t new_thread_wait_time;
    int32_t old_thread_remaining_quantum;
} etl_kcswitch;

typedef struct etl_kready_thread {
    uint32_t tid;                 /* the thread made ready */
    int8_t adjust_reason, adjust_increment;
    uint8_t flags;
} etl_kready_thread;

typedef struct etl_ksample {
    uint64_t instruction_pointer;
    uint32_t tid;
    uint16_t count;
    uint8_t flags;                /* bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3..7 priority */
    uint8_t rank;
    uint16_t profile_source;      /* KPROFILE_SOURCE: 0 (ProfileTime) for SampleProf; a PMCSample's
                                     counter (6 branch instructions, ...), whose count, flags and rank are 0 */
} etl_ksample;

/* DiskIo: a completion (Read, Write, FlushBuffers) or an issue (ReadInit, WriteInit,
   FlushInit). An issue carries only irp and issuing_tid; a flush has no transfer_size,
   byte_offset or file_object (0). */
typedef struct etl_kdisk_io {
    uint32_t disk_number;
    uint32_t irp_flags;           /* IRP_* bits; bits 17..19: the I/O priority (0: not set) */
    uint32_t transfer_size;       /* bytes */
    int64_t byte_offset;          /* from the start of the disk */
    uint64_t file_object;
    uint64_t irp;                 /* the request: the same in its issue and its completion */
    uint64_t high_res_response_time; /* issue to completion, in ticks of the trace's clock */
    uint32_t issuing_tid;         /* version 3+ (0 in older records) */
} etl_kdisk_io;

/* PerfInfo SysClEnter (address) and SysClExit (nt_status). The PERFINFO header names no
   thread: it is the one running on the processor (the last CSwitch's new thread). */
typedef struct etl_ksyscall {
    uint64_t address;             /* SysClEnter: the system call's address */
    uint32_t nt_status;           /* SysClExit: its NTSTATUS */
} etl_ksyscall;

/* Stacks: frames stay in the record; read them with etl_kframe_at. */
typedef struct etl_kstack {
    int64_t event_timestamp;      /* raw clock of the event the stack belongs to */
    uint32_t pid, tid;
    uint64_t stack_key;           /* STACK_KEY and STACK_KEY_DEF */
    unsigned frame_count;         /* STACK and STACK_KEY_DEF */
    unsigned frame_size;          /* 4 or 8 */
    const uint8_t *frames;
} etl_kstack;
/* The index-th frame (0: the innermost) of a decoded stack. */
ETL_API uint64_t etl_kframe_at(const etl_kstack *s, unsigned index);

/* A TRACE_LOGFILE_HEADER carried as an event (the first event of every file, and one per
   input in merged files). */
typedef struct etl_ktrace_header {
    uint32_t buffer_size;
    uint8_t version[4];           /* OS major, minor, layout major, minor */
    uint32_t provider_version;    /* OS build */
    uint32_t number_of_processors;
    int64_t end_time;             /* FILETIME */
    uint32_t timer_resolution, maximum_file_size, log_file_mode, buffers_written;
    uint32_t pointer_size, events_lost, cpu_speed_mhz;
    int32_t timezone_bias;
    int64_t boot_time, perf_freq, start_time; /* FILETIME, Hz, FILETIME */
    uint32_t clock_type;          /* ReservedFlags */
    uint32_t buffers_lost;
    etl_string logger_name, log_file_name; /* UTF-16 */
} etl_ktrace_header;

typedef struct etl_kgroup_masks {
    uint32_t masks[8];            /* PERFINFO_GROUPMASK */
    uint32_t kernel_version;      /* 0 when the record ends before it */
} etl_kgroup_masks;

/* One decoded kernel event. */
typedef struct etl_kernel_event {
    int kclass;                   /* enum etl_kclass */
    const char *name;             /* "Process/Start", "Image/DCEnd", "Thread/CSwitch", ... */
    union {
        etl_kprocess process;
        etl_kthread thread;
        etl_kimage image;
        etl_kcswitch cswitch;
        etl_kready_thread ready_thread;
        etl_ksample sample;
        etl_kstack stack;         /* STACK, STACK_KEY, STACK_KEY_DEF */
        etl_ktrace_header header;
        etl_kgroup_masks group_masks;
        etl_lbr lbr;
        etl_kdisk_io disk_io;     /* DISK_IO, DISK_IO_INIT */
        etl_ksyscall syscall;     /* SYSCALL_ENTER, SYSCALL_EXIT */
    } u;
} etl_kernel_event;

/*
 * Decodes ev into *out: 1 when it is one of the classes above, 0 when it is not (out->kclass
 * is then ETL_KCLASS_NONE), ETL_FAILED when it is one whose payload is too short or malformed
 * for its version (out->kclass says which class; the fields are not valid). Fields past the
 * end of a shorter, older record are 0 or absent; bytes after the known fields are ignored.
 */
ETL_API int etl_kernel_decode(const etl_event *ev, etl_kernel_event *out);

/*
 * Which image an address falls in: a map of the images of every process over the trace's
 * time, built from the Image, Process and Thread events (Load/DCStart/DCEnd/Unload), so
 * that sample and stack addresses resolve to the image loaded at that address at that time.
 * Kernel addresses (the high half of the address space) resolve to the images of process 0
 * (and 4, System). Feed every event once (any order), then look up.
 */
typedef struct etl_image_map etl_image_map;

typedef struct etl_image_info {
    uint64_t base, size;
    uint32_t pid;
    const char *file_name;        /* UTF-8, as the event has it; owned by the map */
    const char *base_name;        /* the part after the last '\' or '/' */
    int64_t load_timestamp;       /* raw clock; INT64_MIN when loaded before the trace began */
    int64_t unload_timestamp;     /* INT64_MAX when still loaded at the end */
} etl_image_info;

/* A new, empty map, or NULL without memory. */
ETL_API etl_image_map *etl_image_map_new(void);
ETL_API void etl_image_map_free(etl_image_map *m);
/* Takes what ev says about images, processes and threads (other events are ignored).
   ETL_OK, or ETL_FAILED when memory ran out. */
ETL_API int etl_image_map_add(etl_image_map *m, const etl_event *ev);
/* The image of process pid that held addr at raw time ts: 1 found (*out filled), 0 not. */
ETL_API int etl_image_map_find(etl_image_map *m, uint32_t pid, uint64_t addr, int64_t ts, etl_image_info *out);
/* The process of thread tid at raw time ts (from Thread events), or -1 when unknown. */
ETL_API int64_t etl_image_map_thread_pid(etl_image_map *m, uint32_t tid, int64_t ts);

/* ---- The file writer: buffers in, an ETL file out (etl-format.md section 10) ---- */

typedef struct etl_writer etl_writer;

/* Log file mode bits the writer acts on, beside those above. */
#define ETL_MODE_FILE_PREALLOCATE 0x00000020u

typedef struct etl_writer_options {
    uint32_t buffer_size;        /* bytes, 4096 .. 16 MiB (default 65536) */
    uint32_t log_file_mode;      /* ETL_MODE_FILE_SEQUENTIAL (default), _CIRCULAR or _NEWFILE,
                                    with _PREALLOCATE, ETL_MODE_COMPRESSED; stored in the header */
    uint64_t maximum_file_size;  /* bytes; 0 for none (sequential only). A sequential file that
                                    reaches it takes no more buffers; a circular one wraps; a
                                    NEWFILE session goes on in the next file */
    uint32_t number_of_processors; /* default: the processors online */
    unsigned pointer_size;       /* 8 (default): 64-bit session; 4: the 32-bit logfile header */
    etl_clock clock;             /* type (default PerfCounter), perf_freq, cpu_speed_mhz,
                                    start_time (FILETIME), start_timestamp (raw clock then) */
    int64_t boot_time;           /* FILETIME */
    uint32_t timer_resolution;   /* 100 ns units (default 156250) */
    uint8_t os_major, os_minor;  /* Version bytes 0 and 1 (default 10.0) */
    uint32_t os_build;           /* ProviderVersion (default 19041) */
    const char *logger_name;     /* UTF-8 (default "libetl") */
    const char *log_file_name;   /* UTF-8, the LogFileName string of the header (default: the path) */
    uint32_t header_pid, header_tid; /* of the logfile header event */
    uint16_t logger_id;
    unsigned direct_io;          /* 1: write data buffers past the page cache (O_DIRECT) where the
                                    file system takes it and the buffers and the buffer size are
                                    aligned as it needs (page-aligned buffers of a multiple of 4
                                    KB); otherwise, and by default, through the page cache */
} etl_writer_options;

/* Statistics of a writer (the file part of EVENT_TRACE_PROPERTIES). */
typedef struct etl_writer_stats {
    uint32_t buffers_written;    /* data buffers written, in all files */
    uint32_t log_buffers_lost;   /* buffers refused because the file was full */
    uint32_t files;              /* files created (NEWFILE: how many) */
    uint64_t bytes_written;
    uint64_t bytes_direct;       /* of bytes_written, written past the page cache (direct_io) */
} etl_writer_stats;

/*
 * Create path and write its header buffer. For NEWFILE, path holds one "%d", replaced by
 * 1, 2, ... Returns ETL_OK, or ETL_FATAL with *out holding only the message (read it with
 * etl_writer_error, then etl_writer_close), or NULL without memory.
 */
ETL_API int etl_writer_open(etl_writer **out, const char *path, const etl_writer_options *opt);
/*
 * Write one data buffer of processor cpu: buffer holds buffer_size bytes whose records fill
 * [0x48, used); the writer fills the WMI_BUFFER_HEADER (SequenceNumber in call order) and the
 * 0xFF tail, so buffer is modified. A buffer with no records is not written; used is rounded
 * up to 8 (zero padding); in compressed mode a buffer that would not shrink is stored plain. flush_timestamp is the raw clock at the flush;
 * flush_marker marks the last buffer of a flush. ETL_OK; ETL_FAILED when a sequential file
 * with a maximum size is full (the buffer is counted in log_buffers_lost); ETL_FATAL on an I/O
 * error.
 */
ETL_API int etl_writer_write_buffer(etl_writer *w, uint8_t *buffer, uint32_t used, uint16_t cpu,
                                    int64_t flush_timestamp, int flush_marker);
/*
 * Batches: between etl_writer_batch_begin and etl_writer_batch_end, etl_writer_write_buffer
 * may keep a buffer it accepts (ETL_OK) instead of writing it at once, and write buffers that
 * follow each other in the file with one system call. The caller leaves every buffer it passed
 * untouched until etl_writer_batch_end, which writes what is kept and returns how many of the
 * buffers accepted in the batch did not reach the file after all (an I/O error: the writer is
 * then dead, and they are the last ones accepted); 0 when all did.
 */
ETL_API void etl_writer_batch_begin(etl_writer *w);
ETL_API uint32_t etl_writer_batch_end(etl_writer *w);
/* Events lost by the session, recorded in the header at close (and in every NEWFILE file). */
ETL_API void etl_writer_set_events_lost(etl_writer *w, uint32_t events_lost);
/* Buffers lost before the writer (a relogger: the sum of its inputs'), recorded in the header's
   BuffersLost with those the writer refused itself. */
ETL_API void etl_writer_set_buffers_lost(etl_writer *w, uint32_t buffers_lost);
ETL_API void etl_writer_stats_get(const etl_writer *w, etl_writer_stats *out);
ETL_API const char *etl_writer_error(const etl_writer *w);
/* The name of the file being written (NEWFILE: the current one). */
ETL_API const char *etl_writer_path(const etl_writer *w);
/*
 * Finalise the header (EndTime = end_time, a FILETIME; BuffersWritten, EventsLost,
 * BuffersLost), truncate a preallocated file, close. ETL_OK or ETL_FATAL; w is freed.
 */
ETL_API int etl_writer_close(etl_writer *w, int64_t end_time);

/* ---- Sessions: the capture engine (per-processor buffers, logging modes, flush thread) ---- */

typedef struct etl_session etl_session;

/* What starts a session, as EVENT_TRACE_PROPERTIES describes it. */
typedef struct etl_session_properties {
    const char *logger_name;       /* the session name (default "libetl") */
    const char *log_file_name;     /* the file; NULL in buffering mode and for real time only.
                                      NEWFILE: holds %d */
    uint32_t buffer_size_kb;       /* BufferSize in KB, 4 .. 16384 (default 64) */
    uint32_t minimum_buffers;      /* raised to at least 2 per processor */
    uint32_t maximum_buffers;      /* raised to at least minimum_buffers (default: minimum + 64);
                                      ignored in buffering mode */
    uint32_t maximum_file_size_mb; /* 0: none; required for circular, NEWFILE, preallocate */
    uint32_t log_file_mode;        /* ETL_MODE_FILE_SEQUENTIAL (default), _CIRCULAR, _NEWFILE
                                      (| ETL_MODE_FILE_PREALLOCATE), or ETL_MODE_BUFFERING;
                                      | ETL_MODE_COMPRESSED; | ETL_MODE_REAL_TIME (with a file
                                      mode, or alone without a file; not with buffering) */
    uint32_t flush_timer_s;        /* flush non-empty buffers this often; 0: only when full,
                                      at stop, or on etl_session_flush (not in buffering mode;
                                      real-time mode: 0 means 1 s) */
    int clock_type;                /* ETL_CLOCK_PERFCOUNTER (default: CLOCK_MONOTONIC_RAW in ns),
                                      ETL_CLOCK_SYSTEMTIME (FILETIME) or ETL_CLOCK_CPUCYCLE (TSC) */
    uint32_t number_of_processors; /* default: the processors configured */
    uint32_t engine_flags;         /* ETL_ENGINE_*: how the engine works, not what it writes */
} etl_session_properties;

/*
 * Engine flags. By default a writer appends to its processor's buffer inside a restartable
 * sequence (Linux rseq, x86-64: no atomic instruction), where the kernel offers one and the
 * session has a buffer for every processor; otherwise it reserves space with compare-and-swap.
 * The PerfCounter clock is CLOCK_MONOTONIC_RAW, read through the TSC (re-fitted to the kernel's
 * clock every 100 ms, within a few microseconds of it) where the TSC is invariant.
 */
#define ETL_ENGINE_ATOMIC_RESERVE 0x1u /* compare-and-swap reservation even where rseq works */
#define ETL_ENGINE_EXACT_CLOCK    0x2u /* every PerfCounter reading from clock_gettime() */
/*
 * A session shared with other processes: its buffers live in RUNTIME/KEY.shm (0600; RUNTIME
 * and KEY as for session names below), mapped at one address in every process, and any process
 * of the user that registers a provider the session enables writes into it without a lock or a
 * system call (doc/etlrecord-design.md). logger_name is the session's name, which the caller
 * must hold (etl_session_name_claim). Needs restartable sequences (x86-64 Linux 4.18 and
 * later); ETL_ENGINE_ATOMIC_RESERVE cannot be combined with it.
 */
#define ETL_ENGINE_SHARED         0x4u
/* Write the log file past the page cache (O_DIRECT, from the pool itself, where the file
   system takes it). It saves the flush thread the copy into the page cache, but each write
   then waits for the device, so it wants room to grow (maximum_buffers) for the device's slow
   moments: in provbench at 400 MB/s with room for 1024 buffers of 64 KB it lost nothing where
   the page cache lost 2-4%; with a fixed 4 MB pool at 220 MB/s it lost 2.6-4.3% where the page
   cache lost none. Off by default (etlrecord --direct-io). */
#define ETL_ENGINE_DIRECT_IO      0x8u

/* A session's statistics, as EVENT_TRACE_PROPERTIES reports them. */
typedef struct etl_session_stats {
    uint32_t number_of_buffers;    /* NumberOfBuffers: allocated to the pool */
    uint32_t free_buffers;         /* FreeBuffers */
    uint64_t events_lost;          /* EventsLost */
    uint32_t buffers_written;      /* BuffersWritten (real time only: delivered to a consumer) */
    uint32_t log_buffers_lost;     /* LogBuffersLost: buffers the file did not take */
    uint32_t real_time_buffers_lost; /* RealTimeBuffersLost: buffers no real-time consumer got */
    uint32_t engine_flags;         /* the ETL_ENGINE_* ways in effect (EXACT_CLOCK: the timestamps
                                      come from the kernel, or the clock is not PerfCounter) */
    uint32_t buffers_reclaimed;    /* shared sessions: buffers taken back from writer processes
                                      that died holding them (what they held was written) */
    uint32_t writers_refused;      /* shared sessions: processes that could not map the session
                                      (its address range was taken in them) */
    uint64_t real_time_events_lost; /* the events in the RealTimeBuffersLost buffers */
    char error[256];               /* the last error (file I/O), "" if none */
} etl_session_stats;

/* Start a session: allocate its buffers, create its file, start its flush thread.
   ETL_OK, or ETL_FATAL with *out holding only the message (etl_session_error, then
   etl_session_stop), or NULL without memory. */
ETL_API int etl_session_start(etl_session **out, const etl_session_properties *p);
/* The session clock now (the raw timestamp events get). */
ETL_API int64_t etl_session_timestamp(const etl_session *s);
/*
 * Log one event into the current buffer of the calling thread's processor: no lock, no
 * system call, never blocks (in buffering mode, a writer that must reuse the oldest buffer
 * while another takes one yields the processor a few times at most). ETL_OK, or ETL_FAILED when the event is lost and counted in
 * EventsLost, with errno E2BIG (larger than a buffer can hold: ETW's limit of just under
 * 64 KB), ENOBUFS (no free buffer), ENOSPC (a sequential file reached its maximum size) or
 * ENOTSUP (the session writes with restartable sequences and this thread has no rseq area);
 * or ETL_FAILED with errno ESHUTDOWN, not counted, when a shared session is stopping (the
 * event comes after its end).
 * Safe in signal handlers.
 * The event's process and thread ids are the caller's; its timestamp is taken now, or is
 * x->timestamp when x gives one (etl_session_timestamp of this session, taken earlier: an
 * event a caller must refer to by its timestamp, as an LBR record does).
 */
ETL_API int etl_session_write_event(etl_session *s, const etl_guid *provider, const etl_event_descriptor *d,
                                    const etl_event_extras *x, const etl_data *data, unsigned ndata);
/* The same for a kernel event class with a SYSTEM_TRACE_HEADER (ts: its timestamp, or 0 for now). */
ETL_API int etl_session_write_system(etl_session *s, int64_t ts, uint16_t hook, uint16_t version, uint32_t pid,
                                     uint32_t tid, const etl_data *data, unsigned ndata);
/* The same with a PERFINFO_TRACE_HEADER. */
ETL_API int etl_session_write_perfinfo(etl_session *s, int64_t ts, uint16_t hook, uint16_t version,
                                       const etl_data *data, unsigned ndata);
/* An LBR event for the event with timestamp trigger_ts (the same timestamp, as Windows writes it). */
ETL_API int etl_session_write_lbr(etl_session *s, int64_t trigger_ts, uint32_t pid, uint32_t tid, uint32_t filters,
                                  const etl_lbr_entry *entries, unsigned count);
/*
 * Updates of a running session (ControlTrace's EVENT_TRACE_CONTROL_UPDATE), by its controller.
 * The flush timer takes effect at once (real-time mode: 0 means 1 s; not in buffering mode).
 * MaximumBuffers may be raised, not lowered, up to twice its value at the start (the room the
 * session's memory was laid out with; a shared session's file reserves the new buffers'
 * memory now, so that a full /dev/shm fails here). ETL_OK, or ETL_FAILED with the reason in
 * err (the session goes on unchanged).
 */
ETL_API int etl_session_set_flush_timer(etl_session *s, uint32_t seconds, char *err, size_t errsize);
ETL_API int etl_session_set_maximum_buffers(etl_session *s, uint32_t maximum_buffers, char *err, size_t errsize);
/* Flush every non-empty buffer to the file now and wait until it is written (file modes). */
ETL_API int etl_session_flush(etl_session *s);
/* Buffering mode: write what the buffers hold to path, in time order, without clearing them. */
ETL_API int etl_session_snapshot(etl_session *s, const char *path);
/*
 * Real-time mode: a consumer. etl_session_realtime_attach takes the consumer on fd (a
 * connected stream socket), one at a time: ETL_OK, or ETL_FAILED after writing "error
 * MESSAGE" to fd, with errno EINVAL (not a real-time session), EBUSY (a consumer is attached
 * already) or ESHUTDOWN (the session is stopping). Then etl_session_realtime_deliver, which
 * must follow, from a thread of its own, serves it until the session stops or it goes: it
 * writes "ok" and the real-time stream that etl_reader_open_stream reads (the buffers held
 * before it came first, then each as the flush thread writes it, then the final statistics)
 * and detaches it; the caller closes fd after. etl_session_stop waits for the consumer to
 * take what is left (giving up on one that takes nothing for 5 s). A session holds its
 * written buffers for the consumer up to its maximum number of buffers less one per
 * processor and one; beyond that, and for what is still held at the stop, buffers are
 * dropped and counted in RealTimeBuffersLost (their events in real_time_events_lost).
 * deliver returns ETL_OK when the consumer got everything to the end, ETL_FAILED with errno
 * EPIPE when it went away (what it had not acknowledged stays held for the next consumer).
 */
ETL_API int etl_session_realtime_attach(etl_session *s, int fd);
ETL_API int etl_session_realtime_deliver(etl_session *s);
ETL_API void etl_session_query(const etl_session *s, etl_session_stats *out);
/* The properties in effect, defaults resolved (buffer size, minimum and maximum buffers,
   processors, clock, mode); the strings are the session's, valid until it stops. */
ETL_API void etl_session_properties_get(const etl_session *s, etl_session_properties *out);
ETL_API const char *etl_session_error(const etl_session *s);
/* Stop: flush, finalise the file (EndTime, BuffersWritten, EventsLost, BuffersLost), free.
   Fills *out (if not NULL) with the final statistics. ETL_OK, or ETL_FATAL when the file
   could not be written (out->error says why). */
ETL_API int etl_session_stop(etl_session *s, etl_session_stats *out);

/* ---- LBR configuration and capture (TraceConfigureLastBranchRecord; doc/libetl.md "LBR") ---- */

/* EVNTRACE_LBR_SAMPLED: ARM64's sampled branch records (SPE); not on this architecture. */
#define ETL_LBR_SAMPLED     0x400u
/* The flags etl_session_configure_lbr takes: ETL_LBR_FILTER_* and ETL_LBR_CALLSTACK. */
#define ETL_LBR_FLAGS_VALID 0x3FFu
/* EVNTRACE_MAX_LBR_EVENTS: at most this many triggering events (etl-format.md section 8.8). */
#define ETL_LBR_MAX_EVENTS  4

/* CLASSIC_EVENT_ID: an event named by its provider (or kernel group) GUID and its type (opcode). */
typedef struct etl_classic_event_id {
    etl_guid event_guid;
    uint8_t type;
    uint8_t reserved[7];
} etl_classic_event_id;

/*
 * TraceConfigureLastBranchRecord: every event of s that matches one of the count triggers
 * then gets an LBR record with the same timestamp (etl_session_write_lbr), its branches
 * chosen by flags. As on Windows, a set ETL_LBR_FILTER_* bit filters that kind of branch OUT
 * (the bits are those of the processor's LBR_SELECT register); 0 records every branch;
 * ETL_LBR_CALLSTACK keeps the branches as a call stack. count 0 clears the triggers and
 * disables LBR. A trigger must be enabled in s: a kernel group's event needs the kernel flag
 * that produces it among the session's kernel flags (doc/libetl.md lists them), any other
 * GUID needs that provider enabled (etl_session_enable_provider). ETL_OK, or ETL_FAILED with
 * the reason in err and the configuration unchanged: unknown flag bits (ETL_LBR_SAMPLED
 * included), more than ETL_LBR_MAX_EVENTS triggers, triggers NULL with count > 0, the same
 * trigger twice, a trigger not enabled. events is copied.
 */
ETL_API int etl_session_configure_lbr(etl_session *s, uint32_t flags, const etl_classic_event_id *events,
                                      unsigned count, char *err, size_t errsize);

/* A trigger by name: "profile" (PerfInfo SampledProfile, type 46), "pmc" (PerfInfo PMC
   interrupt, 47), "cswitch" (Thread CSwitch, 36), "readythread" (Thread, 50), or
   "GUID:TYPE" for any classic event (TYPE 0-255, decimal or 0x hex). ETL_OK or ETL_FAILED. */
ETL_API int etl_lbr_trigger_parse(const char *text, etl_classic_event_id *out);
/* "kernel,user,jcc,near_rel_call,near_ind_call,near_ret,near_ind_jmp,near_rel_jmp,far_branch,
   callstack" (any of them, comma-separated) into ETL_LBR_* flags: ETL_OK, or ETL_FAILED with
   err naming the first unknown name. "" is 0. */
ETL_API int etl_lbr_filter_parse(const char *list, uint32_t *flags, char *err, size_t errsize);

/*
 * Capture with Linux perf's branch-stack sampling (PERF_SAMPLE_BRANCH_STACK, which needs the
 * processor's LBR, BRBE or an equivalent exposed to this kernel). Linux takes branch stacks
 * only with samples of hardware counters, so the triggers it can sample are the kernel
 * session's "profile" (SampledProfile: cycles, at the profile interval's rate) and "pmc" (PMC
 * interrupt: branch instructions, every 65536); others fail with a message. The samples go
 * through the kernel capture's per-processor rings (etl_session_enable_kernel first), and
 * each writes, at its own timestamp, the triggering event (SampledProfile or PMCSample), its
 * StackWalk when the kernel session walks the profile's stacks, and its LBR record: the
 * "profile" trigger's event replaces the cpu-clock profile source. s must use the PerfCounter
 * clock and have LBR configured. Needs root (or kernel.perf_event_paranoid <= 0). ETL_OK, or
 * ETL_FAILED with *out NULL and the cause in err (no kernel events in s, no branch-stack
 * sampling on this processor or virtual machine, no permission, filters perf cannot express).
 * Samples perf loses are counted in the session's EventsLost with the kernel events'.
 */
typedef struct etl_lbr_capture etl_lbr_capture;
ETL_API int etl_lbr_capture_start(etl_lbr_capture **out, etl_session *s, char *err, size_t errsize);
/* Stops the capture (before etl_session_stop): its perf events are disabled; what the rings
   still hold is written when the session stops. NULL is allowed. */
ETL_API void etl_lbr_capture_stop(etl_lbr_capture *c);
/* Whether this machine can capture LBR with flags at all: ETL_OK, or ETL_FAILED with the
   cause in err, e.g. "LBR capture: this processor or virtual machine has no branch-stack
   sampling (perf_event_open: Operation not supported)". Opens nothing that outlives it. */
ETL_API int etl_lbr_capture_probe(uint32_t flags, char *err, size_t errsize);
/* ---- Kernel events: the NT Kernel Logger's classes from Linux perf events (doc/kernel-events.md) ---- */

/* What etl_session_enable_kernel captures, named and valued as EVENT_TRACE_FLAG_*. */
#define ETL_KERNEL_PROCESS    0x00000001u /* Process Start/End (fork, exec, exit), DCStart/DCEnd rundown */
#define ETL_KERNEL_THREAD     0x00000002u /* Thread Start/End, DCStart/DCEnd rundown */
#define ETL_KERNEL_IMAGE_LOAD 0x00000004u /* Image Load of executable mappings, Unload (munmap, exec, exit),
                                             DCStart/DCEnd rundown */
#define ETL_KERNEL_CSWITCH    0x00000010u /* CSwitch (sched:sched_switch) */
#define ETL_KERNEL_SYSCALL    0x00000080u /* PerfInfo SysClEnter/SysClExit (raw_syscalls:sys_enter/sys_exit) */
#define ETL_KERNEL_DISK_IO    0x00000100u /* DiskIo Read/Write/FlushBuffers and their Init (block:block_rq_issue,
                                             block:block_rq_complete) */
#define ETL_KERNEL_DISPATCHER 0x00000800u /* ReadyThread (sched:sched_wakeup, sched:sched_wakeup_new) */
#define ETL_KERNEL_PROFILE    0x01000000u /* SampledProfile (cpu-clock sampling) */
#define ETL_KERNEL_ALL (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_CSWITCH | \
                        ETL_KERNEL_DISPATCHER | ETL_KERNEL_PROFILE | ETL_KERNEL_DISK_IO | ETL_KERNEL_SYSCALL)
/* Events that can have a StackWalk event (stackwalk_flags): these three. */
#define ETL_KERNEL_STACKWALK_ALL (ETL_KERNEL_PROFILE | ETL_KERNEL_CSWITCH | ETL_KERNEL_DISPATCHER)

/* The flag of a name ("process", "thread", "image_load", "cswitch", "dispatcher", "profile",
   "disk_io", "syscall"),
   or 0 when it names none; and the names of the bits of flags, ','-separated, into out. */
ETL_API uint32_t etl_kernel_flag_from_name(const char *name);
ETL_API char *etl_kernel_flags_format(uint32_t flags, char *out, size_t size);

/*
 * Kernel events into s, a PerfCounter session, until it stops: perf events on every online
 * processor (a sideband event for tasks, comm and executable mmaps; the sched tracepoints;
 * cpu-clock sampling every profile_interval_100ns, 0 for 10000 = 1 ms), read by one thread
 * per processor, pinned to it, that writes each record into its processor's buffer on the
 * session's clock (perf's CLOCK_MONOTONIC_RAW), in time order within that buffer. First a
 * DCStart rundown of what runs (from /proc); at etl_session_stop the capture ends, then a
 * DCEnd rundown and RundownComplete are written. stackwalk_flags (ETL_KERNEL_STACKWALK_ALL
 * bits, a subset of flags) give those events a StackWalk event with their timestamp.
 * Records perf lost are counted in EventsLost, and so, at the stop, are tracepoint events the
 * kernel counted and wrote no sample of (doc/kernel-events.md). Once per session. ETL_OK, or ETL_FAILED with
 * the reason in err (which event, on which processor, and the system's error), nothing
 * enabled: an unknown flag, a clock that is not PerfCounter, no permission (root or
 * CAP_PERFMON, or kernel.perf_event_paranoid), tracefs not mounted, a perf event the kernel
 * lacks.
 */
ETL_API int etl_session_enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags,
                                      uint32_t profile_interval_100ns, char *err, size_t errsize);

/* ---- Providers: register, ask whether enabled, write (ETW's EventRegister/EventWrite) ---- */

/*
 * A provider writes its events into every session that enabled it (etl_session_enable_provider)
 * and whose filter the event passes: ETW's rules, where an event passes when the session's
 * level is 0 (all levels), or the event's level is 0 (always) or not above the session's; and
 * its keywords are 0, or share a bit with the session's MatchAnyKeyword (0: any) and contain
 * every bit of its MatchAllKeyword. Providers registered before or after a session enables
 * them are picked up either way; many sessions may enable one provider, and one session many.
 * Registration and enabling take a lock; writing and asking do not.
 */
typedef struct etl_provider etl_provider;

/* ETL_OK, or ETL_FAILED without memory (*out NULL). */
ETL_API int etl_provider_register(etl_provider **out, const etl_guid *guid);
/* No write through p may be running or start. NULL is allowed. */
ETL_API void etl_provider_unregister(etl_provider *p);
ETL_API const etl_guid *etl_provider_guid(const etl_provider *p);
/* 1 when an event of this level and these keywords would go to at least one session. */
ETL_API int etl_provider_enabled(etl_provider *p, uint8_t level, uint64_t keywords);

/* etl_provider_write flags */
#define ETL_WRITE_STACK 0x1u /* add the caller's stack (a STACK_TRACE64 extended item) */
#define ETL_PROVIDER_MAX_STACK 192 /* frames at most, as ETW's stack walks */

/* Writes the event into every session it passes: ETL_OK (also when it passes none), or
   ETL_FAILED when a session lost it (counted in that session's EventsLost), or when a shared
   session was stopping (errno ESHUTDOWN, not counted: the event came after its end). */
ETL_API int etl_provider_write(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                               unsigned ndata, unsigned flags);
/*
 * The same, and after the event, in every session that took it, an LBR record
 * (etl_session_write_lbr: LbrFilterFlags filters, count entries, most recent branch first)
 * whose trigger timestamp is the event's own, to the tick, and whose process and thread ids
 * are the caller's: the pair Windows writes for an event with LBR. ETL_OK, or ETL_FAILED
 * when a session lost the event or its LBR record (counted in its EventsLost) or was stopping
 * (ESHUTDOWN, as for etl_provider_write); a session that did not take the event gets no LBR
 * record for it.
 */
ETL_API int etl_provider_write_lbr(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                                   unsigned ndata, unsigned flags, uint32_t filters, const etl_lbr_entry *entries,
                                   unsigned count);

/* Enables provider (registered or not yet) in s with a level and keywords (replacing an
   earlier enable of it), or disables it (ETL_FAILED when it was not enabled). Stopping a
   session disables all its providers. */
ETL_API int etl_session_enable_provider(etl_session *s, const etl_guid *provider, uint8_t level,
                                        uint64_t match_any_keyword, uint64_t match_all_keyword);
/*
 * The same with EnableTraceEx2's enable properties: ETL_ENABLE_STACK_TRACE
 * (EVENT_ENABLE_PROPERTY_STACK_TRACE) gives every event of the provider that the session
 * takes the writer's stack (a STACK_TRACE64 extended item), as ETL_WRITE_STACK does for one
 * write; other sessions get the event without it. Other bits: ETL_FAILED, errno EINVAL.
 */
#define ETL_ENABLE_STACK_TRACE 0x4u
ETL_API int etl_session_enable_provider_ex(etl_session *s, const etl_guid *provider, uint8_t level,
                                           uint64_t match_any_keyword, uint64_t match_all_keyword,
                                           uint32_t enable_properties);
ETL_API int etl_session_disable_provider(etl_session *s, const etl_guid *provider);

/* ---- Session names: unique per user on the machine (doc/etlrecord-design.md) ---- */

/*
 * A session's controller claims its name for the life of the session: an flock on
 * RUNTIME/NAME.lock, where RUNTIME is $ETL_RUNTIME_DIR or /dev/shm/libetl-UID (mode 0700;
 * the lock files 0600). Names are compared without regard to ASCII case. A lock file whose
 * controller died marks an orphaned session; the next claim of the name removes what it
 * left and says so.
 */
#define ETL_SESSION_NAME_MAX 200
typedef struct etl_session_name etl_session_name;

/* The runtime directory into out, created 0700 when missing; ETL_FAILED (with a message in
   err) when it cannot be, or is not the calling user's with mode 0700. */
ETL_API int etl_runtime_dir(char *out, size_t size, char *err, size_t errsize);
/* The lower-case key of a name; ETL_FAILED when it is not a valid name (1 to
   ETL_SESSION_NAME_MAX bytes, no '/' and no control characters). */
ETL_API int etl_session_name_key(const char *name, char key[ETL_SESSION_NAME_MAX + 1]);
/* Claims name: ETL_OK, *orphan_removed telling whether a dead session of that name was
   cleaned up; ETL_FAILED with errno EEXIST when a live session holds it (err names its pid),
   EINVAL for a bad name, EACCES for a runtime directory that is not private. */
ETL_API int etl_session_name_claim(etl_session_name **out, const char *name, int *orphan_removed, char *err,
                                   size_t errsize);
ETL_API const char *etl_session_name_path(const etl_session_name *n);
/* Gives the name back: the lock file and the session's other objects are removed. */
ETL_API void etl_session_name_release(etl_session_name *n);
/* Calls cb for each session of the user: its name as claimed, its controller's pid, and
   whether it is orphaned (the controller died without releasing it). */
ETL_API int etl_session_name_list(void (*cb)(void *arg, const char *name, long pid, int orphaned), void *arg,
                                  char *err, size_t errsize);

/* ---- Session control: a session's controller and its clients (doc/etlrecord-design.md) ---- */

/*
 * A controller owns a named session for its life: it claims the name, starts the session,
 * enables its providers, and answers requests on the control socket RUNTIME/KEY.sock (AF_UNIX,
 * 0600; RUNTIME and KEY as for session names above), one line each: "query", "stop", "flush",
 * "flush PATH" (a buffering session's snapshot), "update provider SPEC flush-timer S
 * max-buffers N" and "consume" (the connection becomes the session's real-time consumer, served
 * by a thread of the controller). An answer is "KEY VALUE" lines, then "ok" or "error MESSAGE".
 * etlrecord is a controller and a client; etl_reader_open_session is a client.
 */

/* A provider as etlrecord's --provider gives it: GUID|NAME[:LEVEL[:KEYWORDS]]. */
typedef struct etl_provider_spec {
    etl_guid guid;
    uint8_t level;     /* 0: all */
    uint64_t keywords; /* MatchAnyKeyword; 0: all */
} etl_provider_spec;
/* ETL_OK, or ETL_FAILED with a message in err (not a GUID or a known name, a level above 255,
   keywords that are not a number). */
ETL_API int etl_provider_spec_parse(const char *spec, etl_provider_spec *out, char *err, size_t errsize);
/* Logging modes and clocks by the names etlrecord and the answers use: sequential, circular,
   newfile, buffering, realtime (and "sequential+realtime" from etl_session_mode_name);
   perfcounter, systemtime, cycle. The lookups give ETL_FAILED for an unknown name; the names
   "?" for an unknown value. */
ETL_API int etl_session_mode_from_name(const char *name, uint32_t *mode);
ETL_API const char *etl_session_mode_name(uint32_t mode);
ETL_API int etl_clock_from_name(const char *name, int *clock);
ETL_API const char *etl_clock_name(int clock);

/* What plugs into a controller's session (the kernel capture and LBR: etl_controller_capture). */
typedef struct etl_controller_hooks {
    /* After the providers are enabled, before the socket listens: ETL_OK, or ETL_FAILED with
       the message in err (the session is then stopped and the name released). */
    int (*start)(void *arg, etl_session *s, char *err, size_t errsize);
    /* Lines ("KEY VALUE\n") for the answers of query and update, after the properties, into
       out (size bytes, NUL-terminated, cut short when too small). */
    void (*describe)(void *arg, char *out, size_t size);
    /* Before the session stops. */
    void (*stop)(void *arg);
    void *arg;
} etl_controller_hooks;

typedef struct etl_controller_config {
    etl_session_properties properties;  /* logger_name: the session's name (required);
                                           log_file_name absolute (the controller may chdir) */
    const etl_provider_spec *providers; /* enabled at the start (copied) */
    unsigned provider_count;
    int stackwalk;                      /* providers enabled with ETL_ENABLE_STACK_TRACE */
    const etl_controller_hooks *hooks;  /* NULL: none; kept by the caller while the controller lives */
} etl_controller_config;

typedef struct etl_controller etl_controller;
typedef struct etl_control_answer etl_control_answer;

/*
 * Claims the name, starts the session, enables its providers, runs the start hook and listens
 * on the control socket. ETL_OK; or ETL_FAILED with *out holding only the message
 * (etl_controller_error, then etl_controller_close), or NULL without memory. *orphan_removed
 * (may be NULL) tells, in either case, whether a dead controller's session of the name was
 * cleaned up. The message names the session ("session NAME: ...") or the name taken.
 */
ETL_API int etl_controller_start(etl_controller **out, const etl_controller_config *cfg, int *orphan_removed);
ETL_API const char *etl_controller_error(const etl_controller *c);
/* The session (NULL once stopped), for its owner to write into. */
ETL_API etl_session *etl_controller_session(etl_controller *c);
/* Serves requests, one connection at a time, until one stops the session (1) or done(arg)
   is true (0); done is asked at least every 200 ms and whenever wake_fd (-1: none) is
   readable. Consumers are served by threads of their own meanwhile. */
ETL_API int etl_controller_serve(etl_controller *c, int (*done)(void *), void *arg, int wake_fd);
/* Stops the session (unless a request did) and releases the name; *answer (out may be NULL)
   gets what a stop request is answered, or NULL without memory or when a request stopped it.
   ETL_OK, or ETL_FAILED when the file could not be finished. */
ETL_API int etl_controller_stop(etl_controller *c, etl_control_answer **answer);
/* Stops the session as etl_controller_stop, if it runs, and frees c. NULL is allowed. */
ETL_API void etl_controller_close(etl_controller *c);

/*
 * A client: sends request to the controller of the session name and reads its answer into
 * *out. ETL_OK when it answered "ok"; ETL_FAILED when it answered "error MESSAGE"
 * (etl_control_answer_error gives MESSAGE); ETL_FATAL when no answer came: no session of that
 * name, an orphaned one, a controller that died in the middle, a runtime directory that
 * cannot be used; the message, naming the session, in etl_control_answer_error. A name that a live controller holds while its socket
 * is not there yet (the controller is starting its session) is waited for, up to 5 s.
 * *out is NULL only without memory; free it with etl_control_answer_free.
 */
ETL_API int etl_control_request(etl_control_answer **out, const char *name, const char *request);
ETL_API unsigned etl_control_answer_count(const etl_control_answer *a);
/* Line i, "KEY VALUE" (the value is the rest of the line). */
ETL_API const char *etl_control_answer_line(const etl_control_answer *a, unsigned i);
/* The value of the first line of key, or NULL. */
ETL_API const char *etl_control_answer_value(const etl_control_answer *a, const char *key);
ETL_API const char *etl_control_answer_error(const etl_control_answer *a);
ETL_API void etl_control_answer_free(etl_control_answer *a);

/* (The capture layer's, libetl/capture/controlhooks.c:) a controller's kernel capture
   (etl_session_enable_kernel) and LBR (etl_session_configure_lbr, etl_lbr_capture_start) as
   its hooks: fill cap, then etl_controller_capture_hooks fills hooks, which use cap (it must
   outlive the controller). The kernel capture starts after the providers are enabled. */
typedef struct etl_controller_capture {
    uint32_t kernel_flags, kernel_stackwalk; /* ETL_KERNEL_*; 0: not a kernel session */
    uint32_t profile_interval_us;            /* 0: 1000 */
    etl_classic_event_id lbr_events[ETL_LBR_MAX_EVENTS];
    unsigned lbr_count;                      /* 0: no LBR */
    uint32_t lbr_flags;
    const char *lbr_text, *lbr_filter_text;  /* as given, for the answers (kept by the caller) */
    etl_lbr_capture *lbr_capture;            /* the capture, while it runs */
} etl_controller_capture;
ETL_API void etl_controller_capture_hooks(etl_controller_capture *cap, etl_controller_hooks *hooks);

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
                               converts its timestamps: itself, or the earliest-starting input
                               that shares its clock source (same clock, frequency and boot) */
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
ETL_API int etl_merge_input(const etl_merge *m, unsigned index, etl_merge_input_info *out);
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
#endif /* LIBETL_ETL_H */
