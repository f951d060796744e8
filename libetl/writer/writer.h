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

/* When the writer could not open its file because another writer holds it (the file's flock):
   that writer's pid, or -1 when it cannot be told; 0 otherwise. */
long etl_writer_busy_pid(const etl_writer *w);

/* etl_record_encode_event for an event whose only extended items are ready-made (items_size
   bytes, a multiple of 8; a TraceLogging event's): the same record as with etl_event_extras
   holding just those, with fewer tests on the way (the TraceLogging write path's). */
uint32_t etl_record_encode_event_items(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                       const etl_guid *provider, const etl_event_descriptor *d, const uint8_t *items,
                                       uint32_t items_size, const etl_data *data, unsigned ndata);

/* ---- TraceLogging's metadata (tracelogging.c; doc/format.md section 4.11) ---- */

#define ETL_TLG_MAX_PROVIDER_NAME 255  /* bytes of a provider's name (what readers take) */
#define ETL_TLG_MAX_DEPTH 32           /* structs nested in structs, at most */
#define ETL_TLG_MAX_ITEM_DATA 0xFFF0u  /* an extended item's data: its padded size and header fit a u16 */

/*
 * The encoders below write at most cap bytes to dst (nothing when dst is NULL) and return the
 * size of the whole, so that a first call with no buffer measures; the caller gives cap at
 * least that size for the real one.
 */
/* The provider traits (PROV_TRAITS data): u16 TotalSize, the name with its NUL, and the
   provider group trait when group is not NULL. 0 when name is empty or longer than
   ETL_TLG_MAX_PROVIDER_NAME. */
uint32_t etl_tlg_traits_encode(uint8_t *dst, uint32_t cap, const char *name, const etl_guid *group);
/* An event's metadata (EVENT_SCHEMA_TL data): u16 MetadataSize, one tag byte 0, the name with
   its NUL, then each field: its name with its NUL, its in type byte (array flags, and the
   chain bit when an out type follows), its out type byte (a struct's: its member count), and
   a fixed array's u16 count. 0 with the reason in err when the fields are not a well-made
   tree of types TraceLogging writes, or the metadata passes 65535 bytes. */
uint32_t etl_tlg_metadata_encode(uint8_t *dst, uint32_t cap, const char *name, const etl_tlg_field *fields,
                                 unsigned count, char *err, size_t errsize);
/* The PROV_TRAITS item (linkage 1) and the EVENT_SCHEMA_TL item (linkage 0) as a record holds
   them: 8-byte headers, the data padded with zeros to 8 bytes. 0 when either passes
   ETL_TLG_MAX_ITEM_DATA. */
uint32_t etl_tlg_ext_items_encode(uint8_t *dst, uint32_t cap, const uint8_t *traits, uint32_t traits_size,
                                  const uint8_t *meta, uint32_t meta_size);

#endif
