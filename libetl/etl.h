/* SPDX-License-Identifier: MIT */
/* libetl public API: read Event Trace Log (.etl) files written by Event Tracing for Windows. */
/* One header for all of it; each part under etl/ can also be included on its own. */
#ifndef LIBETL_ETL_H
#define LIBETL_ETL_H

#include "etl/types.h"    /* version, status codes, GUIDs, events, clocks, trace info */
#include "etl/reader.h"   /* reading files and real-time streams */
#include "etl/kernel.h"   /* kernel event classes, LBR samples, the image map */
#include "etl/decode.h"   /* every event's fields by name: manifests, TraceLogging, EventSource, kernel classes */
#include "etl/symbols.h"  /* the function and source line at an address: ELF (elfutils), PDB, kallsyms, .NET */
#include "etl/writer.h"   /* record encoders, the file writer */
#include "etl/session.h"  /* sessions, LBR capture, kernel events, session names */
#include "etl/provider.h" /* providers */
#include "etl/merge.h"    /* merging */
#include "etl/control.h"  /* session control: a named session's controller and its clients */
#include "etl/output.h"   /* events as text, JSON lines, CSV; summaries; normalized lines; comparing traces */
#include "etl/kernel-state.h" /* DiskIo pairing, the thread on each processor, names over time */
#include "etl/load.h"     /* the SQLite loader */
#include "etl/clickhouse.h" /* the ClickHouse loader */
#include "etl/profiles.h" /* recording profiles: WPR's .wprp files and the built-in ones */
#include "etl/recording.h" /* recordings of profiles: their collectors' sessions, stopped and merged into one file */

#endif /* LIBETL_ETL_H */
