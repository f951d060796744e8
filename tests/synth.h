/* SPDX-License-Identifier: MIT */
/* A small in-memory builder of synthetic ETL files for the tests and the benchmark. */
#ifndef ETL_SYNTH_H
#define ETL_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

struct synth_options {
    uint32_t buffer_size;     /* logical buffer size (default 65536) */
    unsigned pointer_size;    /* 4 or 8 (default 8): logfile header form */
    unsigned cpus;            /* NumberOfProcessors (default 4) */
    int clock_type;           /* default ETL_CLOCK_PERFCOUNTER */
    int64_t perf_freq;        /* default 10 000 000 */
    uint32_t cpu_speed_mhz;   /* default 3000 */
    int64_t start_time;       /* FILETIME (default 2024-01-01) */
    int64_t start_timestamp;  /* raw clock at start (default 1 000 000) */
    int compressed;           /* XPRESS-compressed data buffers (relogger style) */
    uint32_t log_file_mode;   /* default SEQUENTIAL (| COMPRESSED when compressed) */
    uint8_t layout_major, layout_minor; /* default 1.5 (2.0 when compressed) */
    int rotate;               /* write data buffers rotated by this many places (circular-like) */
    const char *logger_name, *log_file_name;
    uint32_t events_lost;
    int64_t boot_time;        /* FILETIME (default: an hour before start_time) */
    uint32_t buffers_lost;
};

struct synth;

struct synth *synth_new(const struct synth_options *o);
/* Append an encoded record (its Size field set) to cpu's current buffer; a full buffer is
   flushed first. Returns 0, or -1 if the record cannot fit any buffer. */
int synth_add(struct synth *s, unsigned cpu, const uint8_t *record, uint32_t size);
/* Flush every processor's buffer and build the file; *size is its length. The caller frees
   the result with free(); s is freed. */
uint8_t *synth_finish(struct synth *s, size_t *size);
/* Number of data buffers flushed so far. */
uint32_t synth_buffers(const struct synth *s);

/* Record encoders: write into out (large enough) and return the record size. */
uint32_t synth_event_header(uint8_t *out, int ptr64, int64_t ts, const etl_guid *provider, uint16_t id,
                            uint8_t version, uint8_t level, uint8_t opcode, uint16_t task, uint64_t keywords,
                            uint32_t pid, uint32_t tid, const void *ext, uint32_t ext_len,
                            const void *payload, uint32_t len);
/* One extended data item (on-disk form) appended at out; returns its size (8 + data rounded). */
uint32_t synth_ext_item(uint8_t *out, uint16_t type, const void *data, uint16_t len, int more);
uint32_t synth_system(uint8_t *out, int ptr64, int compact, int64_t ts, uint16_t hook, uint16_t version,
                      uint32_t pid, uint32_t tid, const void *payload, uint32_t len);
uint32_t synth_perfinfo(uint8_t *out, int ptr64, int64_t ts, uint16_t hook, uint16_t version,
                        const uint64_t *pebs, const uint64_t *pmc, unsigned npmc, const void *payload, uint32_t len);
uint32_t synth_classic(uint8_t *out, int ptr64, int instance, int64_t ts, const etl_guid *guid, uint8_t type,
                       uint8_t level, uint16_t version, uint32_t pid, uint32_t tid, const void *payload, uint32_t len);
uint32_t synth_message(uint8_t *out, uint16_t number, uint16_t flags, uint32_t seq, const etl_guid *guid,
                       int64_t ts, uint32_t pid, uint32_t tid, const void *payload, uint32_t len);

/* A payload being built: little-endian fields, pointer-sized ones of ptr (4 or 8) bytes. */
struct synth_payload {
    uint8_t b[2048];
    uint32_t n;
    unsigned ptr;
};

void sp_init(struct synth_payload *p, unsigned ptr);
void sp8(struct synth_payload *p, uint8_t v);
void sp16(struct synth_payload *p, uint16_t v);
void sp32(struct synth_payload *p, uint32_t v);
void sp64(struct synth_payload *p, uint64_t v);
void spp(struct synth_payload *p, uint64_t v);              /* pointer-sized */
void sp_str8(struct synth_payload *p, const char *s);       /* 8-bit, with its NUL */
void sp_str16(struct synth_payload *p, const char *ascii);  /* UTF-16LE, with its NUL */

#endif
