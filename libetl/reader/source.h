/* SPDX-License-Identifier: MIT */
/* Byte sources behind etl_reader_open: file descriptor, memory, gzip. Private to libetl. */
#ifndef LIBETL_SOURCE_H
#define LIBETL_SOURCE_H
#ifndef ETL_BUILDING_LIBRARY
#error "reader/source.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* Fill src to read fd with pread; close it on close when owned. 0, or -1 without memory. */
int etl_source_fd(etl_source *src, int fd, int owned);
/* Fill src to read size bytes at data. 0, or -1 without memory. */
int etl_source_memory(etl_source *src, const void *data, size_t size);
/* 1 if the first bytes are a gzip member header. */
int etl_source_is_gzip(const uint8_t *magic, size_t n);
/* Replace src by the decompressed content of its gzip stream (in an unlinked temporary file).
   0 on success; 1 when the gzip data was damaged (what came before the damage is kept,
   the message is in err); -1 with a message in err (src still needs closing). */
int etl_source_gunzip(etl_source *src, char *err, size_t errsize);

/* The reader of a real-time stream on fd, whose "consume" request was sent (engine/control.c's
   etl_reader_open_session): the reader owns fd. With error, a reader holding only that message
   (fd unused). name names the reader unless opt does. */
int etl_reader_open_live(etl_reader **out, int fd, const etl_open_options *opt, const char *name, const char *error);

#endif /* LIBETL_SOURCE_H */
