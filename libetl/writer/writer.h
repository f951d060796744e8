/* SPDX-License-Identifier: MIT */
/* The header buffer of an ETL file, shared by the file writer and the test builder. Private to libetl. */
#ifndef LIBETL_WRITER_H
#define LIBETL_WRITER_H
#ifndef ETL_BUILDING_LIBRARY
#error "writer/writer.h is private to libetl: include <etl.h>"
#endif

#include <stdint.h>

#include "etl.h"

/* What the header records that is only known at the end (or changes while writing). */
typedef struct etl_header_counts {
    int64_t end_time;        /* FILETIME, 0 while logging */
    uint32_t buffers_written; /* buffers in the file, the header buffer included */
    uint32_t events_lost;
    uint32_t buffers_lost;
} etl_header_counts;

/* Fills o's defaults (buffer size, clock, OS version, processors, names) in place. */
void etl_writer_options_defaults(etl_writer_options *o);

/*
 * Builds the header buffer (doc/format.md section 10, items 2 and 3) into b, which holds
 * o->buffer_size bytes: the logfile header event (SYSTEM64, TRACE_LOGFILE_HEADER 64-bit form,
 * layout version 1.5, or 2.0 when compressed or larger than 1 MiB), the logger and file names,
 * and a PartitionInfoExtension event. Returns the bytes the header buffer occupies on disk:
 * o->buffer_size, or for compressed files its used size rounded up to 512 (as the relogger
 * writes it).
 */
uint32_t etl_header_buffer_build(const etl_writer_options *o, const char *file_name,
                                 const etl_header_counts *c, uint8_t *b);

/*
 * Fills the WMI_BUFFER_HEADER of a data buffer of buffer_size bytes whose records end at used
 * (doc/format.md section 10, item 4): the file writer's and the real-time stream's.
 */
void etl_buffer_header_fill(uint8_t *b, uint32_t buffer_size, uint32_t used, uint16_t cpu, int64_t ts,
                            int64_t sequence, uint16_t logger_id, int marker);

#endif
