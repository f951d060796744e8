/* SPDX-License-Identifier: MIT */
/* libetl public API, the types every part shares: version, status codes, GUIDs, events, clocks, trace info. */
#ifndef LIBETL_ETL_TYPES_H
#define LIBETL_ETL_TYPES_H

#include <stddef.h>
#include <stdint.h>

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
/* A provider as a command line or a filter names it: a GUID, or a name etl_guid_name knows
   ("Process"). ETL_OK, or ETL_FAILED when text is neither. */
ETL_API int etl_guid_parse_provider(const char *text, etl_guid *out);

/* The kind of trace header an event record has (doc/format.md section 4.1). */
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

/* Extended data item types (EVENT_HEADER_EXT_TYPE_*), doc/format.md section 4.6. */
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
ETL_API int etl_event_ext_item_get(const etl_event *ev, unsigned index, etl_ext_item *out);

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
ETL_API int64_t etl_time_from_filetime(int64_t filetime);
ETL_API int64_t etl_time_to_filetime(int64_t ns);
/* Formats ns since 1970 as "2024-01-31T12:34:56.123456789Z" into out (at least 31 bytes). */
ETL_API char *etl_time_format(int64_t ns, char *out, size_t size);
/* Parses "2024-01-31T12:34:56.123456789Z", the form etl_time_format writes, into ns since
   1970 (UTC). The fraction and the Z may be left out; digits beyond nanoseconds are dropped.
   ETL_OK, or ETL_FAILED when text is not such a time or is out of range. */
ETL_API int etl_time_parse(const char *text, int64_t *ns);

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

/* Log file mode bits (doc/format.md section 3.4) that the toolkit uses by name. */
#define ETL_MODE_FILE_SEQUENTIAL 0x00000001u
#define ETL_MODE_FILE_CIRCULAR   0x00000002u
#define ETL_MODE_FILE_APPEND     0x00000004u
#define ETL_MODE_FILE_NEWFILE    0x00000008u
#define ETL_MODE_REAL_TIME       0x00000100u
#define ETL_MODE_BUFFERING       0x00000400u
#define ETL_MODE_PRIVATE_LOGGER  0x00000800u /* EVENT_TRACE_PRIVATE_LOGGER_MODE */
#define ETL_MODE_ADD_HEADER      0x00001000u
#define ETL_MODE_USE_KBYTES_FOR_SIZE 0x00002000u /* MaximumFileSize in KB, not MB */
#define ETL_MODE_RELOG           0x00010000u
#define ETL_MODE_SYSTEM_LOGGER   0x02000000u
#define ETL_MODE_COMPRESSED      0x04000000u
#define ETL_MODE_INDEPENDENT_SESSION 0x08000000u
#define ETL_MODE_NO_PER_PROCESSOR_BUFFERING 0x10000000u
/* Writes the names of the set bits of mode, '|'-separated ("SEQUENTIAL|NEWFILE"; "(0)" for 0;
   unnamed bits as hex) into out; returns out. */
ETL_API char *etl_log_file_mode_format(uint32_t mode, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_TYPES_H */
