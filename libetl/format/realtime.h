/* SPDX-License-Identifier: MIT */
/*
 * The real-time stream: what a session in real-time mode sends its consumer once it has
 * answered "ok" to the request "consume" (doc/etlrecord-design.md, "Real-time mode as built").
 * Frames, each a 12-byte head (magic, kind, length: little-endian 32-bit) and length bytes:
 * one HEADER (the logfile header buffer, up to its used size), then a BUFFER per data buffer
 * (its WMI_BUFFER_HEADER filled, up to its used size), then END (the final statistics as
 * "KEY VALUE" lines) when the session stopped and every buffer was acknowledged. The
 * consumer acknowledges the buffers it has taken with a little-endian 32-bit count (one per
 * batch); a buffer leaves the session's held queue only then. Private to libetl.
 */
#ifndef LIBETL_REALTIME_H
#define LIBETL_REALTIME_H
#ifndef ETL_BUILDING_LIBRARY
#error "format/realtime.h is private to libetl: include <etl.h>"
#endif

#define ETL_RT_MAGIC 0x31525445u /* "ETR1" */
#define ETL_RT_FRAME_HEAD 12u
#define ETL_RT_END_MAX 4096u     /* the END frame's text */

enum { ETL_RT_HEADER = 1, ETL_RT_BUFFER = 2, ETL_RT_END = 3 };

#endif
