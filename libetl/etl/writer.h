/* SPDX-License-Identifier: MIT */
/* libetl public API, writing: the record encoders and the file writer. */
#ifndef LIBETL_ETL_WRITER_H
#define LIBETL_ETL_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    const uint8_t *ext_items;             /* extended items already encoded, as a record holds
                                             them (each an 8-byte item header and its data padded
                                             to 8 bytes, the last one's linkage bit 0), placed
                                             after the items above; or NULL. A TraceLogging
                                             event's PROV_TRAITS and EVENT_SCHEMA_TL */
    uint32_t ext_items_size;              /* their bytes: a multiple of 8 */
} etl_event_extras;

/*
 * Record encoders: each returns the size of the record it would write (its Size field, not
 * rounded) and writes it to dst only when dst is not NULL and cap is large enough; 0 when
 * the record cannot exist (larger than ETL_MAX_RECORD_SIZE). The caller reserves
 * ETL_RECORD_SPACE(size) bytes; the padding is zeroed by the encoder.
 */
/* EVENT_HEADER (64-bit) with extended data items; its timestamp is ts, or x->timestamp when
   that is not 0. 0 also when x->ext_items_size is not a multiple of 8. */
ETL_API uint32_t etl_record_encode_event(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                         const etl_guid *provider, const etl_event_descriptor *d,
                                         const etl_event_extras *x, const etl_data *data, unsigned ndata);
/* SYSTEM_TRACE_HEADER (64-bit) event of a kernel event class: hook = Group << 8 | Type. */
ETL_API uint32_t etl_record_encode_system(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                          uint32_t pid, uint32_t tid, const etl_data *data, unsigned ndata);
/* PERFINFO_TRACE_HEADER (64-bit) event of a kernel event class. */
ETL_API uint32_t etl_record_encode_perfinfo(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                            const etl_data *data, unsigned ndata);

/* EVENT_TRACE_HEADER (FULL_HEADER64) event of a classic event class: its class GUID, Class.Type
   (the opcode), Class.Level and Class.Version; KernelTime and UserTime 0, as merges write them. */
ETL_API uint32_t etl_record_encode_classic(uint8_t *dst, uint32_t cap, int64_t ts, const etl_guid *class_guid,
                                           uint8_t type, uint8_t level, uint16_t version, uint32_t pid,
                                           uint32_t tid, const etl_data *data, unsigned ndata);

/* Encodes an LBR event (PERFINFO64 header, version 2) whose payload is LBR_TRACE_EVENT_DATA
   followed by the entries; ts is the triggering event's timestamp. Same contract as the
   other encoders. */
ETL_API uint32_t etl_record_encode_lbr(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                       uint32_t filters, const etl_lbr_entry *entries, unsigned count);

/* ---- The file writer: buffers in, an ETL file out (doc/format.md section 10) ---- */

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
 * 1, 2, ... A log file has one writer: the writer holds an flock (LOCK_EX) on each file while
 * it writes it, taken before the file is emptied; a file another writer holds (through any
 * path: a link, a relative name) is refused with errno EBUSY, its message naming the file and
 * the holder's pid where /proc/locks tells it, and left untouched. Returns ETL_OK, or
 * ETL_FATAL with *out holding only the message (read it with etl_writer_error, then
 * etl_writer_close), or NULL without memory.
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

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_WRITER_H */
