/* SPDX-License-Identifier: MIT */
/* libetl public API, sessions: the capture engine, LBR configuration and capture, kernel events, session names. */
#ifndef LIBETL_ETL_SESSION_H
#define LIBETL_ETL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sessions: the capture engine (per-processor buffers, logging modes, flush thread) ---- */

typedef struct etl_session etl_session;

/* What starts a session, as EVENT_TRACE_PROPERTIES describes it. */
typedef struct etl_session_properties {
    const char *logger_name;       /* the session name (default "libetl") */
    const char *log_file_name;     /* the file; NULL in buffering mode and for real time only.
                                      NEWFILE: holds %d */
    uint32_t buffer_size_kb;       /* BufferSize in KB, 4 .. 16384 (default 64) */
    uint32_t minimum_buffers;      /* raised to at least 2 per processor (2 with
                                      ETL_MODE_NO_PER_PROCESSOR_BUFFERING) */
    uint32_t maximum_buffers;      /* raised to at least minimum_buffers (default: the minimum
                                      + 64 MB of buffers, at least + 64: the pool grows into
                                      it only when no buffer is free); ignored in buffering mode */
    uint32_t maximum_file_size_mb; /* 0: none; required for circular, NEWFILE, preallocate;
                                      in KB with ETL_MODE_USE_KBYTES_FOR_SIZE */
    uint32_t log_file_mode;        /* ETL_MODE_FILE_SEQUENTIAL (default), _CIRCULAR, _NEWFILE
                                      (| ETL_MODE_FILE_PREALLOCATE), or ETL_MODE_BUFFERING;
                                      | ETL_MODE_COMPRESSED; | ETL_MODE_REAL_TIME (with a file
                                      mode, or alone without a file; not with buffering);
                                      | ETL_MODE_FILE_APPEND (sequential only: continue the file,
                                      which must have the same buffer size, processors and
                                      clock, and for clocks counting from the boot the same
                                      boot); | ETL_MODE_USE_KBYTES_FOR_SIZE;
                                      | ETL_MODE_NO_PER_PROCESSOR_BUFFERING (one pool and one
                                      current buffer for every processor, events in the order
                                      written, every buffer on processor 0; not shared);
                                      | ETL_MODE_PRIVATE_LOGGER (the process-private logger: not
                                      shared, no controller, not NEWFILE or append; "_PID" is
                                      appended to log_file_name). A log file has one writer:
                                      a file another writer holds (an flock, through any path)
                                      is refused, untouched, naming the session writing it */
    uint32_t flush_timer_s;        /* flush non-empty buffers this often; 0: only when full,
                                      at stop, or on etl_session_flush (not in buffering mode;
                                      real-time mode: 0 means 1 s) */
    int clock_type;                /* ETL_CLOCK_PERFCOUNTER (default: CLOCK_MONOTONIC_RAW in ns),
                                      ETL_CLOCK_SYSTEMTIME (FILETIME) or ETL_CLOCK_CPUCYCLE (TSC) */
    uint32_t number_of_processors; /* default: the processors configured (NumberOfProcessors;
                                      with one pool, still what the header says) */
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
} etl_session_stats;

/*
 * Errors: a function that takes a session and fails puts its message on the session, where
 * etl_session_error reads it (the last error, until the next one). A refused request (a bad
 * update, LBR configuration or kernel flags, a snapshot that cannot be written) leaves the
 * session as it was. A session whose file could not be written has failed: its flushes then
 * fail, and its stop returns ETL_FATAL, each putting that failure back as the message.
 */

/* Start a session: allocate its buffers, create its file, start its flush thread.
   ETL_OK, or ETL_FATAL with *out holding only the message (etl_session_error, then
   etl_session_close), or NULL without memory. */
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
/* The same with an EVENT_TRACE_HEADER (a classic event of class class_guid: etl_record_encode_classic). */
ETL_API int etl_session_write_classic(etl_session *s, int64_t ts, const etl_guid *class_guid, uint8_t type,
                                      uint8_t level, uint16_t version, uint32_t pid, uint32_t tid,
                                      const etl_data *data, unsigned ndata);
/* An LBR event for the event with timestamp trigger_ts (the same timestamp, as Windows writes it). */
ETL_API int etl_session_write_lbr(etl_session *s, int64_t trigger_ts, uint32_t pid, uint32_t tid, uint32_t filters,
                                  const etl_lbr_entry *entries, unsigned count);
/*
 * Updates of a running session (ControlTrace's EVENT_TRACE_CONTROL_UPDATE), by its controller.
 * The flush timer takes effect at once (real-time mode: 0 means 1 s; not in buffering mode).
 * MaximumBuffers may be raised, not lowered, up to twice its value at the start (the room the
 * session's memory was laid out with). A shared session reserves a buffer's memory as its
 * pool grows into it (a full /dev/shm then costs events, counted in EventsLost); on a kernel
 * that cannot (before Linux 5.14) its file reserves the new buffers' memory now, so that a
 * full /dev/shm fails here. ETL_OK, or ETL_FAILED with the reason in
 * etl_session_error (the session goes on unchanged).
 */
ETL_API int etl_session_set_flush_timer(etl_session *s, uint32_t seconds);
ETL_API int etl_session_set_maximum_buffers(etl_session *s, uint32_t maximum_buffers);
/* Flush every non-empty buffer to the file now and wait until it is written (file modes).
   ETL_OK, or ETL_FAILED when the session's file could not be written (etl_session_error). */
ETL_API int etl_session_flush(etl_session *s);
/* Buffering mode: write what the buffers hold to path, in time order, without clearing them.
   ETL_OK, or ETL_FAILED with the reason in etl_session_error (the session goes on). */
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
/* The statistics now; after etl_session_stop, the final ones. */
ETL_API void etl_session_stats_get(const etl_session *s, etl_session_stats *out);
/* The properties in effect, defaults resolved (buffer size, minimum and maximum buffers,
   processors, clock, mode); the strings are the session's, valid until it is closed. */
ETL_API void etl_session_properties_get(const etl_session *s, etl_session_properties *out);
/* The last error's message ("" if none; "out of memory" for NULL, a session that could not
   be allocated). */
ETL_API const char *etl_session_error(const etl_session *s);
/*
 * Stop (as libarchive's archive_write_close): the hooks' stops, flush, finalise the file
 * (EndTime, BuffersWritten, EventsLost, BuffersLost), release the buffers and threads. Fills
 * *out (if not NULL) with the final statistics. ETL_OK, or ETL_FATAL when the session failed
 * (its file could not be written, or it never started: etl_session_error says why). The
 * handle stays for etl_session_error, etl_session_stats_get and etl_session_properties_get; a
 * second stop returns the same. Then etl_session_close.
 */
ETL_API int etl_session_stop(etl_session *s, etl_session_stats *out);
/* Free the session (as archive_write_free), stopping it first when it was not stopped.
   NULL is allowed. */
ETL_API void etl_session_close(etl_session *s);

/* ---- LBR configuration and capture (TraceConfigureLastBranchRecord; doc/libetl.md "LBR") ---- */

/* EVNTRACE_LBR_SAMPLED: ARM64's sampled branch records (SPE); not on this architecture. */
#define ETL_LBR_SAMPLED     0x400u
/* The flags etl_session_configure_lbr takes: ETL_LBR_FILTER_* and ETL_LBR_CALLSTACK. */
#define ETL_LBR_FLAGS_VALID 0x3FFu
/* EVNTRACE_MAX_LBR_EVENTS: at most this many triggering events (doc/format.md section 8.8). */
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
 * the reason in etl_session_error and the configuration unchanged: unknown flag bits (ETL_LBR_SAMPLED
 * included), more than ETL_LBR_MAX_EVENTS triggers, triggers NULL with count > 0, the same
 * trigger twice, a trigger not enabled. events is copied.
 */
ETL_API int etl_session_configure_lbr(etl_session *s, uint32_t flags, const etl_classic_event_id *events,
                                      unsigned count);

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
 * ETL_FAILED with *out NULL and the cause in etl_session_error(s) (no kernel events in s, no
 * branch-stack sampling on this processor or virtual machine, no permission, filters perf
 * cannot express).
 * Samples perf loses are counted in the session's EventsLost with the kernel events'.
 */
typedef struct etl_lbr_capture etl_lbr_capture;
ETL_API int etl_lbr_capture_start(etl_lbr_capture **out, etl_session *s);
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
#define ETL_KERNEL_PROCESS_COUNTERS 0x00000008u /* Process PerfCtr at each process's end (the kernel's taskstats),
                                                   PerfCtrRundown at the stop (/proc) */
#define ETL_KERNEL_IMAGE_LOAD 0x00000004u /* Image Load of executable mappings, Unload (munmap, exec, exit),
                                             DCStart/DCEnd rundown */
#define ETL_KERNEL_CSWITCH    0x00000010u /* CSwitch (sched:sched_switch) */
#define ETL_KERNEL_DPC        0x00000020u /* PerfInfo DPC/TimerDPC from softirqs (irq:softirq_entry/exit) */
#define ETL_KERNEL_INTERRUPT  0x00000040u /* PerfInfo ISR from hard interrupts (irq:irq_handler_entry/exit) */
#define ETL_KERNEL_SYSCALL    0x00000080u /* PerfInfo SysClEnter/SysClExit (raw_syscalls:sys_enter/sys_exit) */
#define ETL_KERNEL_DISK_IO    0x00000100u /* DiskIo Read/Write/FlushBuffers and their Init (block:block_rq_issue,
                                             block:block_rq_complete) */
#define ETL_KERNEL_DISPATCHER 0x00000800u /* ReadyThread (sched:sched_wakeup, sched:sched_wakeup_new) */
#define ETL_KERNEL_MEMORY_PAGE_FAULTS 0x00001000u /* PageFault DemandZeroFault (minor), HardPageFault (major):
                                                     perf's minor-faults and major-faults */
#define ETL_KERNEL_MEMORY_HARD_FAULTS 0x00002000u /* PageFault HardFault: each major fault of a file page, with the
                                                     file, offset, bytes read and start (filemap:mm_filemap_fault,
                                                     mm_filemap_add_to_page_cache, perf's major-faults) */
#define ETL_KERNEL_NETWORK_TCPIP 0x00010000u /* TcpIp and UdpIp Send/Recv (sock:sock_send_length, sock_recv_length),
                                                TcpIp Connect/Accept/Disconnect (sock:inet_sock_set_state),
                                                Retransmit/Reconnect (tcp:tcp_retransmit_skb) */
#define ETL_KERNEL_VIRTUAL_ALLOC 0x00004000u /* PageFault VirtualAlloc/VirtualFree: anonymous mmap, munmap,
                                                mremap and brk (the syscalls tracepoints of their entry and exit) */
#define ETL_KERNEL_VAMAP      0x00008000u /* FileIo MapFile/UnmapFile: file mmap, munmap, mremap (the same) */
#define ETL_KERNEL_PROFILE    0x01000000u /* SampledProfile (cpu-clock sampling) */
/* File I/O from BPF programs on the file system calls (doc/kernel-events.md): each operation's
   FileIo event at its start (file_io_init), its OperationEnd (file_io), the files' names
   (FileIo Name at each open, FileRundown of the open files at the stop: disk_file_io). */
#define ETL_KERNEL_DISK_FILE_IO 0x00000200u
#define ETL_KERNEL_FILE_IO      0x02000000u
#define ETL_KERNEL_FILE_IO_INIT 0x04000000u
#define ETL_KERNEL_FILEIO_ALL (ETL_KERNEL_DISK_FILE_IO | ETL_KERNEL_FILE_IO | ETL_KERNEL_FILE_IO_INIT)
#define ETL_KERNEL_ALL (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_CSWITCH | \
                        ETL_KERNEL_DISPATCHER | ETL_KERNEL_PROFILE | ETL_KERNEL_DISK_IO | ETL_KERNEL_SYSCALL | \
                        ETL_KERNEL_DPC | ETL_KERNEL_INTERRUPT | ETL_KERNEL_MEMORY_PAGE_FAULTS | \
                        ETL_KERNEL_NETWORK_TCPIP | ETL_KERNEL_FILEIO_ALL | ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP | \
                        ETL_KERNEL_PROCESS_COUNTERS | \
                        ETL_KERNEL_MEMORY_HARD_FAULTS)
/* Events that can have a StackWalk event (stackwalk_flags): these three. */
#define ETL_KERNEL_STACKWALK_ALL (ETL_KERNEL_PROFILE | ETL_KERNEL_CSWITCH | ETL_KERNEL_DISPATCHER)

/* The flag of a name ("process", "thread", "image_load", "cswitch", "dispatcher", "profile",
   "disk_io", "syscall", "dpc", "interrupt", "memory_page_faults", "network_tcpip", "file_io", "file_io_init",
   "disk_file_io", "virtual_alloc", "vamap", "process_counters", "memory_hard_faults"),
   or 0 when it names none; and the names of the bits of flags, ','-separated, into out. */
ETL_API uint32_t etl_kernel_flag_from_name(const char *name);
ETL_API char *etl_kernel_flags_format(uint32_t flags, char *out, size_t size);
/* A size of out that holds the names of every flag (ETL_KERNEL_ALL). */
#define ETL_KERNEL_FLAGS_NAMES_SIZE 512

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
 * kernel counted and wrote no sample of (doc/kernel-events.md). Once per session. ETL_OK, or
 * ETL_FAILED with the reason in etl_session_error (which event, on which processor, and the
 * system's error), nothing enabled: an unknown flag, a clock that is not PerfCounter, no
 * permission (root or CAP_PERFMON, or kernel.perf_event_paranoid), tracefs not mounted, a
 * perf event the kernel lacks; s NULL: errno EINVAL.
 */
ETL_API int etl_session_enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags,
                                      uint32_t profile_interval_100ns);
/* What etl_session_enable_kernel did to the system that its caller should tell: when tracefs
   was not mounted and the flags want tracepoints (cswitch, dispatcher, disk_io, syscall,
   process, image_load), it mounts it as trace-cmd does (tracefs at /sys/kernel/tracing, else
   debugfs at /sys/kernel/debug; root or CAP_SYS_ADMIN) and says "mounted tracefs at
   /sys/kernel/tracing"; it stays mounted. When that mount fails, the capture fails, saying why.
   "" when it did nothing of the kind, or s has no kernel capture. libetl prints nothing. */
ETL_API const char *etl_session_kernel_note(const etl_session *s);
/* Waits until the kernel capture of s has written into it every event that happened before
   the call, at most timeout_ms: its readers hold records back a while, for their time order
   and for the command lines of execs (up to 2 s when a processor's reader is slow to run),
   and a snapshot or a flush wants them first. ETL_OK (at once when s has no kernel capture),
   or ETL_FAILED with errno ETIMEDOUT. */
ETL_API int etl_session_kernel_sync(const etl_session *s, unsigned timeout_ms);

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
ETL_API int etl_session_runtime_dir(char *out, size_t size, char *err, size_t errsize);
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

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_SESSION_H */
