/* SPDX-License-Identifier: MIT */
/* libetl public API: kernel state over time, from decoded kernel events (included by etl.h). */
#ifndef LIBETL_ETL_KERNEL_STATE_H
#define LIBETL_ETL_KERNEL_STATE_H

#include "types.h"
#include "reader.h"
#include "kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What a stream of decoded kernel events (etl_kernel_decode) says beyond each event: which
 * DiskIo issue a completion finishes, which thread runs on each processor, the names of
 * processes and threads over time, and which run (image) of its process each Process event
 * is of. Beside the image map, which says which image held an address. Each is an opaque
 * object of its own; none keeps pointers into the events it is fed.
 */

/* ---- Disk I/O: each completion with its issue (the Init event of the same Irp) ---- */
typedef struct etl_disk_io_pairing etl_disk_io_pairing;

typedef struct etl_disk_io_issue {
    int64_t time;                 /* as given to etl_disk_io_pairing_add with the issue */
    int64_t tag;                  /* the same (an event number, an index: the caller's) */
} etl_disk_io_issue;

/* A new pairing, or NULL without memory. */
ETL_API etl_disk_io_pairing *etl_disk_io_pairing_new(void);
ETL_API void etl_disk_io_pairing_free(etl_disk_io_pairing *p);
/*
 * Feed the decoded kernel events in time order (other classes are ignored). An issue
 * (ETL_KCLASS_DISK_IO_INIT: ReadInit, WriteInit, FlushInit) is kept with time and tag until its
 * completion; a later issue of the same Irp replaces it (Windows reuses them). A completion
 * (ETL_KCLASS_DISK_IO: Read, Write, FlushBuffers) takes the issue of its Irp: returns 1 with
 * *issue filled. Returns 0 when ke is no completion or its issue was not seen (an Irp of 0 is
 * never paired), ETL_FAILED when memory ran out (the issue is then not kept).
 */
ETL_API int etl_disk_io_pairing_add(etl_disk_io_pairing *p, const etl_kernel_event *ke, int64_t time, int64_t tag,
                                    etl_disk_io_issue *issue);

/* ---- The thread running on each processor: the one its last CSwitch switched to ---- */
typedef struct etl_cpu_threads etl_cpu_threads;

/* A new table, or NULL without memory. */
ETL_API etl_cpu_threads *etl_cpu_threads_new(void);
ETL_API void etl_cpu_threads_free(etl_cpu_threads *t);
/* Feed the decoded kernel events in time order: a CSwitch (ETL_KCLASS_CSWITCH) on ev->cpu
   says its new thread runs there from now on; other classes are ignored. ETL_OK, or
   ETL_FAILED when memory ran out. */
ETL_API int etl_cpu_threads_add(etl_cpu_threads *t, const etl_event *ev, const etl_kernel_event *ke);
/* The thread running on processor cpu (tid 0 is the idle thread), or -1 when no CSwitch on
   it has been fed yet. This is how an event whose header names no thread (PerfInfo
   SysClEnter, SysClExit) is given one. */
ETL_API int64_t etl_cpu_threads_running(const etl_cpu_threads *t, unsigned cpu);

/* ---- Process and thread names over time ---- */
typedef struct etl_name_map etl_name_map;

/* A new, empty map, or NULL without memory. */
ETL_API etl_name_map *etl_name_map_new(void);
ETL_API void etl_name_map_free(etl_name_map *m);
/* Takes the names ev gives (Process events' ImageFileName, Thread events' ThreadName; other
   events and events without a name are ignored), in any order. ETL_OK, or ETL_FAILED when
   memory ran out. */
ETL_API int etl_name_map_add(etl_name_map *m, const etl_event *ev);
/*
 * The name (UTF-8) of process pid at raw time ts: that of its last named Process event at or
 * before ts, else of its first one after ts (rundowns at the end of a trace come after what
 * they describe), the rule of etl2sqlite's views; NULL when no Process event of pid has a name.
 * Of events at one time, an End, DCEnd or Defunct is taken as before the others: at an exec
 * (Linux's: the old program's Process End and the new one's Process Start at one time) the
 * new program's name is in force from the exec on. Other ties keep the order they were fed in.
 * The string is the map's: valid until the next etl_name_map_add or etl_name_map_free.
 */
ETL_API const char *etl_name_map_process(etl_name_map *m, uint32_t pid, int64_t ts);
/* The same for the ThreadName of thread tid. */
ETL_API const char *etl_name_map_thread(etl_name_map *m, uint32_t tid, int64_t ts);

/* ---- The runs of each process: one per image it ran ---- */
typedef struct etl_process_runs etl_process_runs;

/* A new table, or NULL without memory. */
ETL_API etl_process_runs *etl_process_runs_new(void);
ETL_API void etl_process_runs_free(etl_process_runs *r);
/*
 * A pid runs several images in turn (Linux's exec writes a Process End of the old program and
 * a Process Start of the new one, one pid) and is used again by other processes: a run is
 * what one pid ran from a Start to its End. Feed the decoded Process events
 * (ETL_KCLASS_PROCESS) of one trace in time order, each with a tag (an event number): returns
 * 1 with *run set to the tag of the event that began its run; 0 for other classes; ETL_FAILED
 * when memory ran out. A run begins at a pid's first event, at a Start (a fork's, an exec's, a
 * CreateProcess), at an event of another UniqueProcessKey, and after an End or Defunct (a pid
 * used again whose Start the trace lacks) unless it is the Defunct of the process that ended.
 * So an exec's End ends the old program's run, and rundowns (DCStart, DCEnd) join the run they
 * fall in.
 */
ETL_API int etl_process_runs_add(etl_process_runs *r, const etl_kernel_event *ke, int64_t tag, int64_t *run);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_KERNEL_STATE_H */
