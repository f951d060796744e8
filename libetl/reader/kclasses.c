/* SPDX-License-Identifier: MIT */
/* The NT Kernel Logger's MOF classes and KernelTraceControl's, field by field, version by version: schemas for the field decoder and layouts for the typed decoding (doc/format.md section 8.9). */
#include <stddef.h>
#include <string.h>

#include "reader/reader.h"

/*
 * Each table below is one MOF class (a "type group": event types that share a layout) in one
 * version. Its sources are named in doc/format.md section 8.9, class by class:
 * [MOF] the kernel's MOF classes as Windows declares them (Microsoft's pages "Process_TypeGroup1
 * class", ..., and the Vista MOF kept with TraceEvent), [TE] TraceEvent's KernelTraceEventParser
 * and SymbolTraceEventParser (microsoft/perfview), [PDB] structure layouts taken from the
 * kernel's symbols (WMI_*), [OBS] the bytes of the real traces in testdata/samples.
 *
 * The typed decoding reads the same tables (kernel.c): a field's slot names where its value
 * goes in etl_kernel_event, and a version's `required` count is the fixed part a record of that
 * version must hold (fields after it may be cut off in older, shorter records).
 */

/* ---------------------------------------------------------------- field macros */

#define FLD(n, in, out, s) { .name = (n), .in_type = (in), .out_type = (out), .span = 1, .slot = (s) }
#define U8(n, s) FLD(n, ETL_IN_UINT8, ETL_OUT_NULL, s)
#define I8(n, s) FLD(n, ETL_IN_INT8, ETL_OUT_NULL, s)
#define X8(n, s) FLD(n, ETL_IN_UINT8, ETL_OUT_HEXINT8, s)
#define U16(n, s) FLD(n, ETL_IN_UINT16, ETL_OUT_NULL, s)
#define I16(n, s) FLD(n, ETL_IN_INT16, ETL_OUT_NULL, s)
#define X16(n, s) FLD(n, ETL_IN_UINT16, ETL_OUT_HEXINT16, s)
#define U32(n, s) FLD(n, ETL_IN_UINT32, ETL_OUT_NULL, s)
#define I32(n, s) FLD(n, ETL_IN_INT32, ETL_OUT_NULL, s)
#define X32(n, s) FLD(n, ETL_IN_UINT32, ETL_OUT_HEXINT32, s)
#define ST32(n, s) FLD(n, ETL_IN_UINT32, ETL_OUT_NTSTATUS, s)
#define U64(n, s) FLD(n, ETL_IN_UINT64, ETL_OUT_NULL, s)
#define I64(n, s) FLD(n, ETL_IN_INT64, ETL_OUT_NULL, s)
#define X64(n, s) FLD(n, ETL_IN_UINT64, ETL_OUT_HEXINT64, s)
#define PTR(n, s) FLD(n, ETL_IN_POINTER, ETL_OUT_NULL, s)     /* an address: the event's pointer size */
#define SZT(n, s) FLD(n, ETL_IN_SIZET, ETL_OUT_NULL, s)       /* a size or an id of the pointer size */
#define XSZT(n, s) FLD(n, ETL_IN_SIZET, ETL_OUT_HEXINT64, s)
#define FT(n, s) FLD(n, ETL_IN_FILETIME, ETL_OUT_NULL, s)
#define GUIDF(n) FLD(n, ETL_IN_GUID, ETL_OUT_NULL, 0)
#define WSTR(n, s) FLD(n, ETL_IN_UNICODE_STRING, ETL_OUT_NULL, s) /* NUL-terminated UTF-16 */
#define ASTR(n, s) FLD(n, ETL_IN_ANSI_STRING, ETL_OUT_NULL, s)    /* NUL-terminated 8-bit */
#define SID(n, s) FLD(n, ETL_IN_WBEM_SID, ETL_OUT_NULL, s)      /* MOF extension("Sid") */
#define PORT(n) FLD(n, ETL_IN_UINT16, ETL_OUT_PORT, 0)          /* MOF extension("Port") */
#define IP4(n) FLD(n, ETL_IN_UINT32, ETL_OUT_IPV4, 0)           /* MOF extension("IPAddr", "IPAddrV4") */
#define PORTS(n, s) FLD(n, ETL_IN_UINT16, ETL_OUT_PORT, s)      /* the same, with a typed slot */
#define IP4S(n, s) FLD(n, ETL_IN_UINT32, ETL_OUT_IPV4, s)
/* MOF char16 Name[c]: c UTF-16 code units, the string up to the first NUL */
#define WCHARS(n, c) { .name = (n), .in_type = ETL_IN_UNICODE_STRING, .length_kind = ETL_LEN_CONST, .length = (c), .span = 1 }
/* MOF extension("IPAddrV6"): 16 bytes */
#define IP6(n) { .name = (n), .in_type = ETL_IN_BINARY, .out_type = ETL_OUT_IPV6, .length_kind = ETL_LEN_CONST, .length = 16, .span = 1 }
#define IP6S(n, s) { .name = (n), .in_type = ETL_IN_BINARY, .out_type = ETL_OUT_IPV6, .length_kind = ETL_LEN_CONST, .length = 16, .span = 1, .slot = (s) }
#define BIN(n, c, s) { .name = (n), .in_type = ETL_IN_BINARY, .length_kind = ETL_LEN_CONST, .length = (c), .span = 1, .slot = (s) }
/* bytes, as many as the earlier field `ref` says */
#define BINF(n, ref) { .name = (n), .in_type = ETL_IN_BINARY, .length_kind = ETL_LEN_FIELD, .length_ref = (ref), .span = 1 }
#define BINREST(n) { .name = (n), .in_type = ETL_IN_BINARY, .length_kind = ETL_LEN_REST, .span = 1 }
/* pointers to the end of the payload */
#define PTRS(n, s) { .name = (n), .in_type = ETL_IN_POINTER, .count_kind = ETL_COUNT_REST, .span = 1, .slot = (s) }
/* UTF-16 strings, as many as the earlier field `ref` says */
#define WSTRS(n, ref) { .name = (n), .in_type = ETL_IN_UNICODE_STRING, .count_kind = ETL_COUNT_FIELD, .count_ref = (ref), .span = 1 }
/* 8-bit strings, as many as the earlier field `ref` says */
#define ASTRS(n, ref) { .name = (n), .in_type = ETL_IN_ANSI_STRING, .count_kind = ETL_COUNT_FIELD, .count_ref = (ref), .span = 1 }

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* A version whose layout is the whole table a, or its first n fields. */
#define KV(v, req, a) { (v), (req), (uint16_t)N(a), (a) }
#define KVN(v, req, a, n) { (v), (req), (n), (a) }
#define OP(task, code, name) { (code), (name), task "/" name }
#define FAMILY(var, prov, kc, task, ops, vers) \
    var = { (prov), (kc), (uint8_t)N(ops), (uint8_t)N(vers), (task), (ops), (vers) }

/* ---------------------------------------------------------------- providers */

enum {
    P_EVENTTRACE, P_DISKIO, P_PAGEFAULT, P_PROCESS, P_FILEIO, P_THREAD, P_TCPIP, P_UDPIP, P_REGISTRY,
    P_SYSCONFIG, P_LBR, P_PERFINFO, P_IMAGE, P_STACKWALK, P_ALPC, P_SPLITIO,
    P_IMAGEID, P_SYSCONFIGEX, P_WINSAT, P_LOST_EVENT, P_LINUX_IMAGEID, P_COUNT
};

#define G(d1, d2, d3, a, b, c, d, e, f, g, h) { d1, d2, d3, { a, b, c, d, e, f, g, h } }

/* The kernel's groups have their GUIDs in format.c (etl_group_guid); the others are the class
   GUIDs of classic events: KernelTraceControl's ImageID, SysConfigEx and WinSat (added by xperf
   and PerfView merges) [TE: SymbolTraceEventParser, KernelTraceEventParser], Lost_Event [MOF], and
   libetl's own LinuxImageID (etl_guid_linux_image_id, format/format.h). */
static const struct {
    int group;              /* ETL_GROUP_*, or -1: guid */
    etl_guid guid;
    const char *name;
} providers[P_COUNT] = {
    [P_EVENTTRACE] = { ETL_GROUP_HEADER, { 0, 0, 0, { 0 } }, "EventTrace" },
    [P_DISKIO] = { ETL_GROUP_DISK_IO, { 0, 0, 0, { 0 } }, "DiskIO" },
    [P_PAGEFAULT] = { 0x02, { 0, 0, 0, { 0 } }, "PageFault" },
    [P_PROCESS] = { ETL_GROUP_PROCESS, { 0, 0, 0, { 0 } }, "Process" },
    [P_FILEIO] = { 0x04, { 0, 0, 0, { 0 } }, "FileIO" },
    [P_THREAD] = { ETL_GROUP_THREAD, { 0, 0, 0, { 0 } }, "Thread" },
    [P_TCPIP] = { 0x06, { 0, 0, 0, { 0 } }, "TcpIp" },
    [P_UDPIP] = { 0x08, { 0, 0, 0, { 0 } }, "UdpIp" },
    [P_REGISTRY] = { 0x09, { 0, 0, 0, { 0 } }, "Registry" },
    [P_SYSCONFIG] = { ETL_GROUP_CONFIG, { 0, 0, 0, { 0 } }, "SystemConfig" },
    [P_LBR] = { ETL_GROUP_LBR, { 0, 0, 0, { 0 } }, "LBR" },
    [P_PERFINFO] = { ETL_GROUP_PERFINFO, { 0, 0, 0, { 0 } }, "PerfInfo" },
    [P_IMAGE] = { ETL_GROUP_IMAGE, { 0, 0, 0, { 0 } }, "Image" },
    [P_STACKWALK] = { ETL_GROUP_STACKWALK, { 0, 0, 0, { 0 } }, "StackWalk" },
    [P_ALPC] = { 0x1A, { 0, 0, 0, { 0 } }, "ALPC" },
    [P_SPLITIO] = { 0x1B, { 0, 0, 0, { 0 } }, "SplitIo" },
    [P_IMAGEID] = { -1, G(0xb3e675d7, 0x2554, 0x4f18, 0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde), "ImageID" },
    [P_SYSCONFIGEX] = { -1, G(0x9b79ee91, 0xb5fd, 0x41c0, 0xa2, 0x43, 0x42, 0x48, 0xe2, 0x66, 0xe9, 0xd0), "SysConfigEx" },
    [P_WINSAT] = { -1, G(0xed54dff8, 0xc409, 0x4cf6, 0xbf, 0x83, 0x05, 0xe1, 0xe6, 0x1a, 0x09, 0xc4), "WinSat" },
    [P_LOST_EVENT] = { -1, G(0x6a399ae0, 0x4bc6, 0x4de9, 0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e, 0x7e), "Lost_Event" },
    [P_LINUX_IMAGEID] = { -1, G(0xf6235471, 0x690f, 0x4985, 0xa2, 0x5e, 0x2d, 0x98, 0xbc, 0x95, 0x91, 0x97),
                          "LinuxImageID" },
};

const etl_guid *etl_kclass_provider_guid(unsigned provider)
{
    if (provider >= P_COUNT) return NULL;
    return providers[provider].group >= 0 ? etl_group_guid((unsigned)providers[provider].group)
                                          : &providers[provider].guid;
}

const char *etl_kclass_provider_name(unsigned provider)
{
    return provider < P_COUNT ? providers[provider].name : NULL;
}

/* ================================================================ EventTrace (group 0) */

/* The logfile header as an event [MOF EventTrace_Header][doc/format.md 3.2]: TRACE_LOGFILE_HEADER
   and its two strings. Names as TraceEvent gives them (SessionName, LogFileName for the strings);
   the two pointer-sized fields the MOF calls LoggerName and LogFileName hold no value of use. */
static const etl_schema_field ev_header[] = {
    U32("BufferSize", ETL_KSLOT_HEADER_BUFFER_SIZE),
    U32("Version", ETL_KSLOT_HEADER_VERSION),
    U32("ProviderVersion", ETL_KSLOT_HEADER_PROVIDER_VERSION),
    U32("NumberOfProcessors", ETL_KSLOT_HEADER_CPUS),
    FT("EndTime", ETL_KSLOT_HEADER_END_TIME),
    U32("TimerResolution", ETL_KSLOT_HEADER_TIMER_RESOLUTION),
    U32("MaxFileSize", ETL_KSLOT_HEADER_MAX_FILE_SIZE),
    X32("LogFileMode", ETL_KSLOT_HEADER_MODE),
    U32("BuffersWritten", ETL_KSLOT_HEADER_BUFFERS_WRITTEN),
    U32("StartBuffers", 0),
    U32("PointerSize", ETL_KSLOT_HEADER_POINTER_SIZE),
    U32("EventsLost", ETL_KSLOT_HEADER_EVENTS_LOST),
    U32("CPUSpeed", ETL_KSLOT_HEADER_CPU_SPEED),
    PTR("LoggerNamePointer", 0),
    PTR("LogFileNamePointer", 0),
    BIN("TimeZoneInformation", 176, ETL_KSLOT_HEADER_TIMEZONE),
    FT("BootTime", ETL_KSLOT_HEADER_BOOT_TIME),
    U64("PerfFreq", ETL_KSLOT_HEADER_PERF_FREQ),
    FT("StartTime", ETL_KSLOT_HEADER_START_TIME),
    X32("ReservedFlags", ETL_KSLOT_HEADER_CLOCK),
    U32("BuffersLost", ETL_KSLOT_HEADER_BUFFERS_LOST),
    WSTR("SessionName", ETL_KSLOT_HEADER_LOGGER),
    WSTR("LogFileName", ETL_KSLOT_HEADER_FILE),
};
static const etl_kclass_op ev_header_ops[] = { OP("EventTrace", 0, "Header") };
static const etl_kclass_version ev_header_v[] = { KV(0, 21, ev_header) };
const etl_kclass_family FAMILY(etl_kfam_trace_header, P_EVENTTRACE, ETL_KCLASS_TRACE_HEADER, "EventTrace",
                               ev_header_ops, ev_header_v);

/* Header_Extension_TypeGroup [MOF]: PERFINFO_GROUPMASK; KernelEventVersion from version 2 [TE]. */
static const etl_schema_field ev_masks[] = {
    X32("GroupMask1", ETL_KSLOT_MASK1), X32("GroupMask2", ETL_KSLOT_MASK2), X32("GroupMask3", ETL_KSLOT_MASK3),
    X32("GroupMask4", ETL_KSLOT_MASK4), X32("GroupMask5", ETL_KSLOT_MASK5), X32("GroupMask6", ETL_KSLOT_MASK6),
    X32("GroupMask7", ETL_KSLOT_MASK7), X32("GroupMask8", ETL_KSLOT_MASK8),
    X32("KernelEventVersion", ETL_KSLOT_KERNEL_VERSION),
};
static const etl_kclass_op ev_masks_ops[] = { OP("EventTrace", 5, "Extension"), OP("EventTrace", 32, "EndExtension") };
static const etl_kclass_version ev_masks_v[] = { KVN(0, 8, ev_masks, 8), KV(2, 8, ev_masks) };
const etl_kclass_family FAMILY(etl_kfam_group_masks, P_EVENTTRACE, ETL_KCLASS_GROUP_MASKS, "EventTrace", ev_masks_ops,
                               ev_masks_v);

/* RDComplete [MOF]: no data. */
static const etl_schema_field no_fields[1] = { U8("", 0) }; /* never read: versions of 0 fields */
static const etl_kclass_op ev_rundown_ops[] = { OP("EventTrace", 8, "RDComplete") };
static const etl_kclass_version ev_rundown_v[] = { KVN(0, 0, no_fields, 0) };
const etl_kclass_family FAMILY(etl_kfam_rundown_complete, P_EVENTTRACE, ETL_KCLASS_RUNDOWN_COMPLETE, "EventTrace",
                               ev_rundown_ops, ev_rundown_v);

/* The partition the trace was taken in: ETW_TRACE_PARTITION_INFORMATION [MS: evntrace.h] padded
   to 48 bytes [OBS: every sample's header buffer, version 2]. */
static const etl_schema_field ev_partition[] = {
    GUIDF("PartitionId"), GUIDF("ParentId"), X64("Reserved", 0), U32("PartitionType", 0),
};
static const etl_kclass_op ev_partition_ops[] = { OP("EventTrace", 80, "PartitionInfo") };
static const etl_kclass_version ev_partition_v[] = { KV(2, 4, ev_partition) };
static const etl_kclass_family FAMILY(ev_partition_fam, P_EVENTTRACE, ETL_KCLASS_NONE, "EventTrace", ev_partition_ops,
                                      ev_partition_v);

/* ================================================================ Process (group 3) */

/* Process_V0_TypeGroup1 [MOF]: the ids are pointer-sized. */
static const etl_schema_field proc_v0[] = {
    SZT("ProcessId", ETL_KSLOT_PROCESS_PID), SZT("ParentId", ETL_KSLOT_PROCESS_PPID),
    SID("UserSID", ETL_KSLOT_PROCESS_SID), ASTR("ImageFileName", ETL_KSLOT_PROCESS_IMAGE),
};
/* Process_V1_TypeGroup1 [MOF][OBS: syzygy_log_lib_process_data_32_v1.etl] */
static const etl_schema_field proc_v1[] = {
    PTR("PageDirectoryBase", ETL_KSLOT_PROCESS_KEY), U32("ProcessId", ETL_KSLOT_PROCESS_PID),
    U32("ParentId", ETL_KSLOT_PROCESS_PPID), U32("SessionId", ETL_KSLOT_PROCESS_SESSION),
    I32("ExitStatus", ETL_KSLOT_PROCESS_EXIT), SID("UserSID", ETL_KSLOT_PROCESS_SID),
    ASTR("ImageFileName", ETL_KSLOT_PROCESS_IMAGE),
};
/* Process_V2_TypeGroup1 [MOF] */
static const etl_schema_field proc_v2[] = {
    PTR("UniqueProcessKey", ETL_KSLOT_PROCESS_KEY), U32("ProcessId", ETL_KSLOT_PROCESS_PID),
    U32("ParentId", ETL_KSLOT_PROCESS_PPID), U32("SessionId", ETL_KSLOT_PROCESS_SESSION),
    I32("ExitStatus", ETL_KSLOT_PROCESS_EXIT), SID("UserSID", ETL_KSLOT_PROCESS_SID),
    ASTR("ImageFileName", ETL_KSLOT_PROCESS_IMAGE), WSTR("CommandLine", ETL_KSLOT_PROCESS_CMDLINE),
};
/* Process_V3_TypeGroup1 [MOF Process_TypeGroup1][TE] */
static const etl_schema_field proc_v3[] = {
    PTR("UniqueProcessKey", ETL_KSLOT_PROCESS_KEY), U32("ProcessId", ETL_KSLOT_PROCESS_PID),
    U32("ParentId", ETL_KSLOT_PROCESS_PPID), U32("SessionId", ETL_KSLOT_PROCESS_SESSION),
    I32("ExitStatus", ETL_KSLOT_PROCESS_EXIT), PTR("DirectoryTableBase", ETL_KSLOT_PROCESS_DTB),
    SID("UserSID", ETL_KSLOT_PROCESS_SID), ASTR("ImageFileName", ETL_KSLOT_PROCESS_IMAGE),
    WSTR("CommandLine", ETL_KSLOT_PROCESS_CMDLINE),
};
/* Version 4 [TE][PDB WMI_PROCESS_INFORMATION][OBS: perfview_diaghub.kernel.1.etl]; version 5
   (Defunct) adds a FILETIME after the strings [OBS; TE: "8 bytes after it"]. */
static const etl_schema_field proc_v4[] = {
    PTR("UniqueProcessKey", ETL_KSLOT_PROCESS_KEY), U32("ProcessId", ETL_KSLOT_PROCESS_PID),
    U32("ParentId", ETL_KSLOT_PROCESS_PPID), U32("SessionId", ETL_KSLOT_PROCESS_SESSION),
    I32("ExitStatus", ETL_KSLOT_PROCESS_EXIT), PTR("DirectoryTableBase", ETL_KSLOT_PROCESS_DTB),
    X32("Flags", ETL_KSLOT_PROCESS_FLAGS), SID("UserSID", ETL_KSLOT_PROCESS_SID),
    ASTR("ImageFileName", ETL_KSLOT_PROCESS_IMAGE), WSTR("CommandLine", ETL_KSLOT_PROCESS_CMDLINE),
    WSTR("PackageFullName", ETL_KSLOT_PROCESS_PACKAGE), WSTR("ApplicationId", ETL_KSLOT_PROCESS_APPID),
    FT("ExitTime", 0),
};
static const etl_kclass_op proc_ops[] = {
    OP("Process", 1, "Start"), OP("Process", 2, "End"), OP("Process", 3, "DCStart"), OP("Process", 4, "DCEnd"),
};
static const etl_kclass_version proc_versions[] = {
    KV(0, 3, proc_v0), KV(1, 6, proc_v1), KV(2, 6, proc_v2), KV(3, 7, proc_v3), KVN(4, 8, proc_v4, 12),
};
const etl_kclass_family FAMILY(etl_kfam_process, P_PROCESS, ETL_KCLASS_PROCESS, "Process", proc_ops, proc_versions);
static const etl_kclass_op proc_defunct_ops[] = { OP("Process", 39, "Defunct") };
static const etl_kclass_version proc_defunct_v[] = {
    KV(2, 6, proc_v2), KV(3, 7, proc_v3), KVN(4, 8, proc_v4, 12), KV(5, 8, proc_v4),
};
const etl_kclass_family FAMILY(etl_kfam_process_defunct, P_PROCESS, ETL_KCLASS_PROCESS, "Process", proc_defunct_ops,
                               proc_defunct_v);

/* Process_TypeGroup2 [MOF][TE ProcessCtrTraceData] */
static const etl_schema_field proc_perfctr[] = {
    U32("ProcessId", ETL_KSLOT_PC_PID), U32("PageFaultCount", ETL_KSLOT_PC_FAULTS), U32("HandleCount", ETL_KSLOT_PC_HANDLES),
    U32("Reserved", 0), SZT("PeakVirtualSize", ETL_KSLOT_PC_PEAK_VS), SZT("PeakWorkingSetSize", ETL_KSLOT_PC_PEAK_WS),
    SZT("PeakPagefileUsage", ETL_KSLOT_PC_PEAK_PF), SZT("QuotaPeakPagedPoolUsage", ETL_KSLOT_PC_PEAK_QPP),
    SZT("QuotaPeakNonPagedPoolUsage", ETL_KSLOT_PC_PEAK_QNP), SZT("VirtualSize", ETL_KSLOT_PC_VS),
    SZT("WorkingSetSize", ETL_KSLOT_PC_WS), SZT("PagefileUsage", ETL_KSLOT_PC_PF), SZT("QuotaPagedPoolUsage", ETL_KSLOT_PC_QPP),
    SZT("QuotaNonPagedPoolUsage", ETL_KSLOT_PC_QNP), SZT("PrivatePageCount", ETL_KSLOT_PC_PRIVATE),
};
static const etl_kclass_op proc_perfctr_ops[] = { OP("Process", 32, "PerfCtr"), OP("Process", 33, "PerfCtrRundown") };
static const etl_kclass_version proc_perfctr_v[] = { KV(2, 15, proc_perfctr) };
const etl_kclass_family FAMILY(etl_kfam_process_counters, P_PROCESS, ETL_KCLASS_PROCESS_COUNTERS, "Process",
                               proc_perfctr_ops, proc_perfctr_v);

/* The process a TerminateProcess targets [TE][OBS: perfview_diaghub.kernel.1.etl, 4 bytes]. */
static const etl_schema_field proc_terminate[] = { U32("ProcessId", 0) };
static const etl_kclass_op proc_terminate_ops[] = { OP("Process", 11, "Terminate") };
static const etl_kclass_version proc_terminate_v[] = { KV(2, 1, proc_terminate) };
static const etl_kclass_family FAMILY(proc_terminate_fam, P_PROCESS, ETL_KCLASS_NONE, "Process", proc_terminate_ops,
                                      proc_terminate_v);

/* ================================================================ Thread (group 5) */

/* Thread_V0_TypeGroup1 [MOF]: the thread first. */
static const etl_schema_field thr_v0[] = { U32("TThreadId", ETL_KSLOT_THREAD_TID), U32("ProcessId", ETL_KSLOT_THREAD_PID) };
/* Thread_V1_TypeGroup1 (Start, DCStart) and _TypeGroup2 (End, DCEnd: the ids only) [MOF] */
static const etl_schema_field thr_v1[] = {
    U32("ProcessId", ETL_KSLOT_THREAD_PID), U32("TThreadId", ETL_KSLOT_THREAD_TID),
    PTR("StackBase", ETL_KSLOT_THREAD_STACK_BASE), PTR("StackLimit", ETL_KSLOT_THREAD_STACK_LIMIT),
    PTR("UserStackBase", ETL_KSLOT_THREAD_USTACK_BASE), PTR("UserStackLimit", ETL_KSLOT_THREAD_USTACK_LIMIT),
    PTR("StartAddr", ETL_KSLOT_THREAD_START), PTR("Win32StartAddr", ETL_KSLOT_THREAD_WIN32_START),
    I8("WaitMode", 0),
};
/* Thread_V2_TypeGroup1 [MOF]; version 3 adds the priorities and the thread's name [TE][PDB
   WMI_EXTENDED_THREAD_INFORMATION] (a record without a name ends before it). */
static const etl_schema_field thr_v3[] = {
    U32("ProcessId", ETL_KSLOT_THREAD_PID), U32("TThreadId", ETL_KSLOT_THREAD_TID),
    PTR("StackBase", ETL_KSLOT_THREAD_STACK_BASE), PTR("StackLimit", ETL_KSLOT_THREAD_STACK_LIMIT),
    PTR("UserStackBase", ETL_KSLOT_THREAD_USTACK_BASE), PTR("UserStackLimit", ETL_KSLOT_THREAD_USTACK_LIMIT),
    PTR("StartAddr", ETL_KSLOT_THREAD_START), PTR("Win32StartAddr", ETL_KSLOT_THREAD_WIN32_START),
    PTR("TebBase", ETL_KSLOT_THREAD_TEB), X32("SubProcessTag", ETL_KSLOT_THREAD_TAG),
    U8("BasePriority", ETL_KSLOT_THREAD_BASE_PRIO), U8("PagePriority", ETL_KSLOT_THREAD_PAGE_PRIO),
    U8("IoPriority", ETL_KSLOT_THREAD_IO_PRIO), X8("ThreadFlags", ETL_KSLOT_THREAD_FLAGS),
    WSTR("ThreadName", ETL_KSLOT_THREAD_NAME),
};
static const etl_kclass_op thr_start_ops[] = { OP("Thread", 1, "Start"), OP("Thread", 3, "DCStart") };
static const etl_kclass_op thr_end_ops[] = { OP("Thread", 2, "End"), OP("Thread", 4, "DCEnd") };
static const etl_kclass_version thr_start_v[] = {
    KV(0, 2, thr_v0), KV(1, 2, thr_v1), KVN(2, 10, thr_v3, 10), KV(3, 14, thr_v3),
};
static const etl_kclass_version thr_end_v[] = {
    KV(0, 2, thr_v0), KVN(1, 2, thr_v1, 2), KVN(2, 10, thr_v3, 10), KV(3, 14, thr_v3),
};
const etl_kclass_family FAMILY(etl_kfam_thread_start, P_THREAD, ETL_KCLASS_THREAD, "Thread", thr_start_ops, thr_start_v);
const etl_kclass_family FAMILY(etl_kfam_thread_end, P_THREAD, ETL_KCLASS_THREAD, "Thread", thr_end_ops, thr_end_v);

/* CSwitch_V1 [MOF] (20 bytes); CSwitch (version 2 on, 24 bytes) [MOF][PDB WMI_CONTEXTSWAP][TE]:
   the MOF calls the last field Reserved; it is the old thread's remaining quantum [GC]. */
static const etl_schema_field csw_v1[] = {
    U32("NewThreadId", ETL_KSLOT_CSWITCH_NEW_TID), U32("OldThreadId", ETL_KSLOT_CSWITCH_OLD_TID),
    I8("NewThreadPriority", ETL_KSLOT_CSWITCH_NEW_PRIO), I8("OldThreadPriority", ETL_KSLOT_CSWITCH_OLD_PRIO),
    I8("NewThreadQuantum", 0), I8("OldThreadQuantum", 0),
    I8("OldThreadWaitReason", ETL_KSLOT_CSWITCH_WAIT_REASON), I8("OldThreadWaitMode", ETL_KSLOT_CSWITCH_WAIT_MODE),
    I8("OldThreadState", ETL_KSLOT_CSWITCH_STATE), I8("OldThreadWaitIdealProcessor", ETL_KSLOT_CSWITCH_IDEAL),
    X32("NewThreadWaitTime", ETL_KSLOT_CSWITCH_WAIT_TIME),
};
static const etl_schema_field csw_v2[] = {
    U32("NewThreadId", ETL_KSLOT_CSWITCH_NEW_TID), U32("OldThreadId", ETL_KSLOT_CSWITCH_OLD_TID),
    I8("NewThreadPriority", ETL_KSLOT_CSWITCH_NEW_PRIO), I8("OldThreadPriority", ETL_KSLOT_CSWITCH_OLD_PRIO),
    U8("PreviousCState", ETL_KSLOT_CSWITCH_CSTATE), I8("SpareByte", ETL_KSLOT_CSWITCH_SPARE),
    I8("OldThreadWaitReason", ETL_KSLOT_CSWITCH_WAIT_REASON), I8("OldThreadWaitMode", ETL_KSLOT_CSWITCH_WAIT_MODE),
    I8("OldThreadState", ETL_KSLOT_CSWITCH_STATE), I8("OldThreadWaitIdealProcessor", ETL_KSLOT_CSWITCH_IDEAL),
    X32("NewThreadWaitTime", ETL_KSLOT_CSWITCH_WAIT_TIME), I32("OldThreadRemainingQuantum", ETL_KSLOT_CSWITCH_QUANTUM),
};
static const etl_kclass_op csw_ops[] = { OP("Thread", 36, "CSwitch") };
static const etl_kclass_version csw_v[] = { KV(1, 11, csw_v1), KV(2, 12, csw_v2) };
const etl_kclass_family FAMILY(etl_kfam_cswitch, P_THREAD, ETL_KCLASS_CSWITCH, "Thread", csw_ops, csw_v);

/* ReadyThread [MOF: ReadyThread class, version 2][PDB WMI_READY_THREAD][TE] */
static const etl_schema_field ready[] = {
    U32("TThreadId", ETL_KSLOT_READY_TID), I8("AdjustReason", ETL_KSLOT_READY_REASON),
    I8("AdjustIncrement", ETL_KSLOT_READY_INCREMENT), X8("Flag", ETL_KSLOT_READY_FLAGS), U8("Reserved", 0),
};
static const etl_kclass_op ready_ops[] = { OP("Thread", 50, "ReadyThread") };
static const etl_kclass_version ready_v[] = { KV(2, 5, ready) };
const etl_kclass_family FAMILY(etl_kfam_ready_thread, P_THREAD, ETL_KCLASS_READY_THREAD, "Thread", ready_ops, ready_v);

/* A thread's name set after its start [TE ThreadSetNameTraceData]; typed as a Thread event
   with its ids and name. */
static const etl_schema_field thr_setname[] = {
    U32("ProcessId", ETL_KSLOT_THREAD_PID), U32("TThreadId", ETL_KSLOT_THREAD_TID),
    WSTR("ThreadName", ETL_KSLOT_THREAD_NAME),
};
static const etl_kclass_op thr_setname_ops[] = { OP("Thread", 72, "SetName") };
static const etl_kclass_version thr_setname_v[] = { KV(2, 2, thr_setname) };
const etl_kclass_family FAMILY(etl_kfam_thread_set_name, P_THREAD, ETL_KCLASS_THREAD, "Thread", thr_setname_ops,
                               thr_setname_v);

/* WorkerThread_V1, WorkerThread [MOF] */
static const etl_schema_field thr_worker[] = { U32("TThreadId", 0), U64("StartTime", 0), PTR("ThreadRoutine", 0) };
static const etl_kclass_op thr_worker_ops[] = { OP("Thread", 57, "WorkerThread") };
static const etl_kclass_version thr_worker_v[] = { KV(1, 3, thr_worker) };
static const etl_kclass_family FAMILY(thr_worker_fam, P_THREAD, ETL_KCLASS_NONE, "Thread", thr_worker_ops, thr_worker_v);

/* ================================================================ Image (group 0x14) */

/* Image_V0_Load [MOF][OBS: syzygy_log_lib_image_data_*_v0.etl, also as DCStart and Unload];
   Image_V1_Load [MOF][OBS: syzygy_viewer_test_data_32_v1.etl]; Image_Load, version 2 [MOF];
   version 3 splits Reserved0 into the signature level and type [PDB WMI_IMAGELOAD_INFORMATION][TE]
   [OBS: perfview_diaghub.kernel.1.etl]. The MOF spells Unload "UnLoad". */
static const etl_schema_field img_v0[] = {
    PTR("BaseAddress", ETL_KSLOT_IMAGE_BASE), U32("ModuleSize", ETL_KSLOT_IMAGE_SIZE),
    WSTR("ImageFileName", ETL_KSLOT_IMAGE_FILE),
};
static const etl_schema_field img_v1[] = {
    PTR("ImageBase", ETL_KSLOT_IMAGE_BASE), SZT("ImageSize", ETL_KSLOT_IMAGE_SIZE), U32("ProcessId", ETL_KSLOT_IMAGE_PID),
    WSTR("FileName", ETL_KSLOT_IMAGE_FILE),
};
static const etl_schema_field img_v2[] = {
    PTR("ImageBase", ETL_KSLOT_IMAGE_BASE), SZT("ImageSize", ETL_KSLOT_IMAGE_SIZE), U32("ProcessId", ETL_KSLOT_IMAGE_PID),
    X32("ImageChecksum", ETL_KSLOT_IMAGE_CHECKSUM), X32("TimeDateStamp", ETL_KSLOT_IMAGE_TIMESTAMP),
    U32("Reserved0", 0), PTR("DefaultBase", ETL_KSLOT_IMAGE_DEFAULT_BASE), U32("Reserved1", 0), U32("Reserved2", 0),
    U32("Reserved3", 0), U32("Reserved4", 0), WSTR("FileName", ETL_KSLOT_IMAGE_FILE),
};
static const etl_schema_field img_v3[] = {
    PTR("ImageBase", ETL_KSLOT_IMAGE_BASE), SZT("ImageSize", ETL_KSLOT_IMAGE_SIZE), U32("ProcessId", ETL_KSLOT_IMAGE_PID),
    X32("ImageChecksum", ETL_KSLOT_IMAGE_CHECKSUM), X32("TimeDateStamp", ETL_KSLOT_IMAGE_TIMESTAMP),
    U8("SignatureLevel", ETL_KSLOT_IMAGE_SIG_LEVEL), U8("SignatureType", ETL_KSLOT_IMAGE_SIG_TYPE), U16("Reserved0", 0),
    PTR("DefaultBase", ETL_KSLOT_IMAGE_DEFAULT_BASE), U32("Reserved1", 0), U32("Reserved2", 0), U32("Reserved3", 0),
    U32("Reserved4", 0), WSTR("FileName", ETL_KSLOT_IMAGE_FILE),
};
static const etl_kclass_op img_ops[] = {
    OP("Image", 10, "Load"), OP("Image", 2, "Unload"), OP("Image", 3, "DCStart"), OP("Image", 4, "DCEnd"),
};
static const etl_kclass_version img_v[] = {
    KV(0, 2, img_v0), KV(1, 3, img_v1), KV(2, 11, img_v2), KV(3, 13, img_v3),
};
const etl_kclass_family FAMILY(etl_kfam_image, P_IMAGE, ETL_KCLASS_IMAGE, "Image", img_ops, img_v);

/* Where the kernel and the hypercall page are mapped [PDB: the WMI log types IMAGE_KERNEL_BASE
   and IMAGE_HYPERCALL_PAGE][OBS: perfview_diaghub.kernel.1.etl, one pointer each]. */
static const etl_schema_field img_kernel_base[] = { PTR("ImageBase", 0) };
static const etl_schema_field img_hypercall[] = { PTR("HypercallPageVa", 0) };
static const etl_kclass_op img_kernel_base_ops[] = { OP("Image", 33, "KernelBase") };
static const etl_kclass_op img_hypercall_ops[] = { OP("Image", 34, "HypercallPage") };
static const etl_kclass_version img_kernel_base_v[] = { KV(2, 1, img_kernel_base) };
static const etl_kclass_version img_hypercall_v[] = { KV(2, 1, img_hypercall) };
static const etl_kclass_family FAMILY(img_kernel_base_fam, P_IMAGE, ETL_KCLASS_NONE, "Image", img_kernel_base_ops,
                                      img_kernel_base_v);
static const etl_kclass_family FAMILY(img_hypercall_fam, P_IMAGE, ETL_KCLASS_NONE, "Image", img_hypercall_ops,
                                      img_hypercall_v);

/* ================================================================ PerfInfo (group 0x0F) */

/* SampledProfile [MOF: version 2, IP, ThreadId and a u32 Count]; Windows 8 on splits the count
   into Count, Flags (bit 0 in a DPC, bit 1 in an ISR, bits 3 to 7 the priority) and Rank [TE]
   [PDB PERFINFO_SAMPLED_PROFILE_INFORMATION]. Older records hold the IP and thread only. */
static const etl_schema_field sample[] = {
    PTR("InstructionPointer", ETL_KSLOT_SAMPLE_IP), U32("ThreadId", ETL_KSLOT_SAMPLE_TID),
    U16("Count", ETL_KSLOT_SAMPLE_COUNT), X8("Flags", ETL_KSLOT_SAMPLE_FLAGS), U8("Rank", ETL_KSLOT_SAMPLE_RANK),
};
static const etl_kclass_op sample_ops[] = { OP("PerfInfo", 46, "SampleProf") };
static const etl_kclass_version sample_v[] = { KV(0, 2, sample), KV(2, 5, sample) };
const etl_kclass_family FAMILY(etl_kfam_sampled_profile, P_PERFINFO, ETL_KCLASS_SAMPLED_PROFILE, "PerfInfo", sample_ops,
                               sample_v);

/* A PMC counter's interrupt [TE PMCCounterProfTraceData][PDB PERFINFO_PMC_SAMPLE]. */
static const etl_schema_field pmc[] = {
    PTR("InstructionPointer", ETL_KSLOT_SAMPLE_IP), U32("ThreadId", ETL_KSLOT_SAMPLE_TID),
    U16("ProfileSource", ETL_KSLOT_SAMPLE_SOURCE), U16("Reserved", 0),
};
static const etl_kclass_op pmc_ops[] = { OP("PerfInfo", 47, "PMCSample") };
static const etl_kclass_version pmc_v[] = { KV(2, 3, pmc) };
const etl_kclass_family FAMILY(etl_kfam_pmc_sample, P_PERFINFO, ETL_KCLASS_SAMPLED_PROFILE, "PerfInfo", pmc_ops, pmc_v);

/* SysCallEnter, SysCallExit [MOF] */
static const etl_schema_field sysenter[] = { PTR("SysCallAddress", ETL_KSLOT_SYSCALL_ADDRESS) };
static const etl_schema_field sysexit[] = { ST32("SysCallNtStatus", ETL_KSLOT_SYSCALL_STATUS) };
static const etl_kclass_op sysenter_ops[] = { OP("PerfInfo", 51, "SysClEnter") };
static const etl_kclass_op sysexit_ops[] = { OP("PerfInfo", 52, "SysClExit") };
static const etl_kclass_version sysenter_v[] = { KV(2, 1, sysenter) };
static const etl_kclass_version sysexit_v[] = { KV(2, 1, sysexit) };
const etl_kclass_family FAMILY(etl_kfam_syscall_enter, P_PERFINFO, ETL_KCLASS_SYSCALL_ENTER, "PerfInfo", sysenter_ops,
                               sysenter_v);
const etl_kclass_family FAMILY(etl_kfam_syscall_exit, P_PERFINFO, ETL_KCLASS_SYSCALL_EXIT, "PerfInfo", sysexit_ops,
                               sysexit_v);

/* ISR_V1, ISR (version 2) [MOF]: InitialTime is a raw clock value (extension "WmiTime"). */
static const etl_schema_field isr_v1[] = {
    U64("InitialTime", ETL_KSLOT_ISR_DPC_INITIAL_TIME), PTR("Routine", ETL_KSLOT_ISR_DPC_ROUTINE),
    U32("ReturnValue", ETL_KSLOT_ISR_RETURN),
};
static const etl_schema_field isr_v2[] = {
    U64("InitialTime", ETL_KSLOT_ISR_DPC_INITIAL_TIME), PTR("Routine", ETL_KSLOT_ISR_DPC_ROUTINE),
    U8("ReturnValue", ETL_KSLOT_ISR_RETURN), U8("Vector", ETL_KSLOT_ISR_VECTOR), U16("Reserved", 0),
};
static const etl_kclass_op isr_ops[] = { OP("PerfInfo", 67, "ISR") };
static const etl_kclass_version isr_v[] = { KV(1, 3, isr_v1), KV(2, 5, isr_v2) };
const etl_kclass_family FAMILY(etl_kfam_isr, P_PERFINFO, ETL_KCLASS_ISR, "PerfInfo", isr_ops, isr_v);

/* DPC_V1 (68, 69), DPC (66, 68, 69) [MOF] */
static const etl_schema_field dpc[] = {
    U64("InitialTime", ETL_KSLOT_ISR_DPC_INITIAL_TIME), PTR("Routine", ETL_KSLOT_ISR_DPC_ROUTINE),
};
static const etl_kclass_op dpc_ops[] = {
    OP("PerfInfo", 66, "ThreadedDPC"), OP("PerfInfo", 68, "DPC"), OP("PerfInfo", 69, "TimerDPC"),
};
static const etl_kclass_version dpc_v[] = { KV(1, 2, dpc) };
const etl_kclass_family FAMILY(etl_kfam_dpc, P_PERFINFO, ETL_KCLASS_DPC, "PerfInfo", dpc_ops, dpc_v);

/* SampledProfileInterval [MOF][TE]; version 3 names the source [TE: CollectionStart/End]. */
static const etl_schema_field interval[] = {
    U32("Source", 0), U32("NewInterval", 0), U32("OldInterval", 0), WSTR("SourceName", 0),
};
static const etl_kclass_op interval_ops[] = {
    OP("PerfInfo", 72, "SetInterval"), OP("PerfInfo", 73, "CollectionStart"), OP("PerfInfo", 74, "CollectionEnd"),
};
static const etl_kclass_version interval_v[] = { KVN(2, 3, interval, 3), KV(3, 3, interval) };
static const etl_kclass_family FAMILY(interval_fam, P_PERFINFO, ETL_KCLASS_NONE, "PerfInfo", interval_ops, interval_v);

/* DebuggerEnabled [MOF]: no data. */
static const etl_kclass_op debugger_ops[] = { OP("PerfInfo", 58, "DebuggerEnabled") };
static const etl_kclass_version debugger_v[] = { KVN(2, 0, no_fields, 0) };
static const etl_kclass_family FAMILY(debugger_fam, P_PERFINFO, ETL_KCLASS_NONE, "PerfInfo", debugger_ops, debugger_v);

/* ================================================================ StackWalk (group 0x18) */

/* StackWalk_Event [MOF: Stack1 to Stack32; as many as the record holds][PDB STACK_WALK_EVENT_DATA];
   the cached stacks of Windows 8 on [TE StackWalkRefTraceData, StackWalkDefTraceData]. */
static const etl_schema_field stack[] = {
    U64("EventTimeStamp", ETL_KSLOT_STACK_TIMESTAMP), U32("StackProcess", ETL_KSLOT_STACK_PID),
    U32("StackThread", ETL_KSLOT_STACK_TID), PTRS("Stack", ETL_KSLOT_STACK_FRAMES),
};
static const etl_schema_field stack_key_def[] = { PTR("StackKey", ETL_KSLOT_STACK_KEY), PTRS("Stack", ETL_KSLOT_STACK_FRAMES) };
static const etl_schema_field stack_key[] = {
    U64("EventTimeStamp", ETL_KSLOT_STACK_TIMESTAMP), U32("StackProcess", ETL_KSLOT_STACK_PID),
    U32("StackThread", ETL_KSLOT_STACK_TID), PTR("StackKey", ETL_KSLOT_STACK_KEY),
};
static const etl_kclass_op stack_ops[] = { OP("StackWalk", 32, "Stack") };
static const etl_kclass_op stack_key_def_ops[] = { OP("StackWalk", 35, "KeyDelete"), OP("StackWalk", 36, "KeyRundown") };
static const etl_kclass_op stack_key_ops[] = { OP("StackWalk", 37, "StackKeyKernel"), OP("StackWalk", 38, "StackKeyUser") };
static const etl_kclass_version stack_v[] = { KV(0, 3, stack) };
static const etl_kclass_version stack_key_def_v[] = { KV(0, 1, stack_key_def) };
static const etl_kclass_version stack_key_v[] = { KV(0, 4, stack_key) };
const etl_kclass_family FAMILY(etl_kfam_stack, P_STACKWALK, ETL_KCLASS_STACK, "StackWalk", stack_ops, stack_v);
const etl_kclass_family FAMILY(etl_kfam_stack_key_def, P_STACKWALK, ETL_KCLASS_STACK_KEY_DEF, "StackWalk",
                               stack_key_def_ops, stack_key_def_v);
const etl_kclass_family FAMILY(etl_kfam_stack_key, P_STACKWALK, ETL_KCLASS_STACK_KEY, "StackWalk", stack_key_ops,
                               stack_key_v);

/* ================================================================ LBR (group 0x0C) */

/* LBR_TRACE_EVENT_DATA and its ETW_LBR_ENTRY items [TE LastBranchRecordTraceData][PDB]: Options
   is a u32 followed, with 64-bit pointers, by 4 bytes of padding; as one pointer-sized value it
   is the same number in both forms. */
static const etl_schema_field lbr[] = {
    U64("TimeStamp", ETL_KSLOT_LBR_TIMESTAMP), U32("ProcessId", ETL_KSLOT_LBR_PID), U32("ThreadId", ETL_KSLOT_LBR_TID),
    { .name = "Options", .in_type = ETL_IN_SIZET, .out_type = ETL_OUT_HEXINT32, .span = 1, .slot = ETL_KSLOT_LBR_FILTERS },
    { .name = "Entries", .in_type = ETL_IN_STRUCT, .count_kind = ETL_COUNT_REST, .members = 3, .span = 4,
      .slot = ETL_KSLOT_LBR_ENTRIES },
    PTR("FromAddress", 0), PTR("ToAddress", 0), PTR("Reserved", 0),
};
static const etl_kclass_op lbr_ops[] = { OP("LBR", 32, "Sample") };
static const etl_kclass_version lbr_v[] = { KV(0, 4, lbr) };
const etl_kclass_family FAMILY(etl_kfam_lbr, P_LBR, ETL_KCLASS_LBR, "LBR", lbr_ops, lbr_v);

/* ================================================================ DiskIo (group 1) */

/* DiskIo_TypeGroup1 to 3 [MOF]; version 3 adds the issuing thread [TE][PDB WMI_DISKIO_READWRITE
   etc.]; on x64 the records are padded to 8 bytes after it (left out). */
static const etl_schema_field disk_rw[] = {
    U32("DiskNumber", ETL_KSLOT_DISK_NUMBER), X32("IrpFlags", ETL_KSLOT_DISK_IRP_FLAGS),
    U32("TransferSize", ETL_KSLOT_DISK_TRANSFER_SIZE), U32("Reserved", 0), U64("ByteOffset", ETL_KSLOT_DISK_OFFSET),
    PTR("FileObject", ETL_KSLOT_DISK_FILE_OBJECT), PTR("Irp", ETL_KSLOT_DISK_IRP),
    U64("HighResResponseTime", ETL_KSLOT_DISK_RESPONSE_TIME), U32("IssuingThreadId", ETL_KSLOT_DISK_TID),
};
static const etl_schema_field disk_init[] = { PTR("Irp", ETL_KSLOT_DISK_IRP), U32("IssuingThreadId", ETL_KSLOT_DISK_TID) };
static const etl_schema_field disk_flush[] = {
    U32("DiskNumber", ETL_KSLOT_DISK_NUMBER), X32("IrpFlags", ETL_KSLOT_DISK_IRP_FLAGS),
    U64("HighResResponseTime", ETL_KSLOT_DISK_RESPONSE_TIME), PTR("Irp", ETL_KSLOT_DISK_IRP),
    U32("IssuingThreadId", ETL_KSLOT_DISK_TID),
};
static const etl_kclass_op disk_rw_ops[] = { OP("DiskIO", 10, "Read"), OP("DiskIO", 11, "Write") };
static const etl_kclass_op disk_init_ops[] = {
    OP("DiskIO", 12, "ReadInit"), OP("DiskIO", 13, "WriteInit"), OP("DiskIO", 15, "FlushInit"),
};
static const etl_kclass_op disk_flush_ops[] = { OP("DiskIO", 14, "FlushBuffers") };
static const etl_kclass_version disk_rw_v[] = { KVN(0, 8, disk_rw, 8), KV(3, 9, disk_rw) };
static const etl_kclass_version disk_init_v[] = { KVN(0, 1, disk_init, 1), KV(3, 2, disk_init) };
static const etl_kclass_version disk_flush_v[] = { KVN(0, 4, disk_flush, 4), KV(3, 5, disk_flush) };
const etl_kclass_family FAMILY(etl_kfam_disk_io, P_DISKIO, ETL_KCLASS_DISK_IO, "DiskIO", disk_rw_ops, disk_rw_v);
const etl_kclass_family FAMILY(etl_kfam_disk_init, P_DISKIO, ETL_KCLASS_DISK_IO_INIT, "DiskIO", disk_init_ops,
                               disk_init_v);
const etl_kclass_family FAMILY(etl_kfam_disk_flush, P_DISKIO, ETL_KCLASS_DISK_IO, "DiskIO", disk_flush_ops,
                               disk_flush_v);

/* The driver events of the DiskIo group [MOF DriverMajorFunctionCall, ...] */
static const etl_schema_field drv_call[] = {
    U32("MajorFunction", 0), U32("MinorFunction", 0), PTR("RoutineAddr", 0), PTR("FileObject", 0), PTR("Irp", 0),
    U32("UniqMatchId", 0),
};
static const etl_schema_field drv_ret[] = { PTR("Irp", 0), U32("UniqMatchId", 0) };
static const etl_schema_field drv_routine[] = { PTR("Routine", 0), PTR("IrpPtr", 0), U32("UniqMatchId", 0) };
static const etl_schema_field drv_req[] = { PTR("RoutineAddr", 0), PTR("Irp", 0), U32("UniqMatchId", 0) };
static const etl_kclass_op drv_call_ops[] = { OP("DiskIO", 34, "DrvMjFnCall") };
static const etl_kclass_op drv_ret_ops[] = { OP("DiskIO", 35, "DrvMjFnRet"), OP("DiskIO", 53, "DrvComplReqRet") };
static const etl_kclass_op drv_routine_ops[] = { OP("DiskIO", 37, "DrvComplRout") };
static const etl_kclass_op drv_req_ops[] = { OP("DiskIO", 52, "DrvComplReq") };
static const etl_kclass_version drv_call_v[] = { KV(0, 6, drv_call) };
static const etl_kclass_version drv_ret_v[] = { KV(0, 2, drv_ret) };
static const etl_kclass_version drv_routine_v[] = { KV(0, 3, drv_routine) };
static const etl_kclass_version drv_req_v[] = { KV(0, 3, drv_req) };
static const etl_kclass_family FAMILY(drv_call_fam, P_DISKIO, ETL_KCLASS_NONE, "DiskIO", drv_call_ops, drv_call_v);
static const etl_kclass_family FAMILY(drv_ret_fam, P_DISKIO, ETL_KCLASS_NONE, "DiskIO", drv_ret_ops, drv_ret_v);
static const etl_kclass_family FAMILY(drv_routine_fam, P_DISKIO, ETL_KCLASS_NONE, "DiskIO", drv_routine_ops,
                                      drv_routine_v);
static const etl_kclass_family FAMILY(drv_req_fam, P_DISKIO, ETL_KCLASS_NONE, "DiskIO", drv_req_ops, drv_req_v);

/* ================================================================ SplitIo (group 0x1B) */

static const etl_schema_field splitio[] = { PTR("ParentIrp", 0), PTR("ChildIrp", 0) }; /* SplitIo_Info [MOF] */
static const etl_kclass_op splitio_ops[] = { OP("SplitIo", 32, "VolMgr") };
static const etl_kclass_version splitio_v[] = { KV(0, 2, splitio) };
static const etl_kclass_family FAMILY(splitio_fam, P_SPLITIO, ETL_KCLASS_NONE, "SplitIo", splitio_ops, splitio_v);

/* ================================================================ FileIo (group 4) */

/* FileIo_V0_Name, FileIo_V1_Name, FileIo_Name [MOF] (TraceEvent calls FileObject FileKey here). */
static const etl_schema_field fio_name[] = { PTR("FileObject", ETL_KSLOT_FIO_FILE_KEY), WSTR("FileName", ETL_KSLOT_FIO_NAME) };
static const etl_kclass_op fio_name_ops[] = {
    OP("FileIO", 0, "Name"), OP("FileIO", 32, "FileCreate"), OP("FileIO", 35, "FileDelete"),
    OP("FileIO", 36, "FileRundown"),
};
static const etl_kclass_version fio_name_v[] = { KV(0, 1, fio_name) };
const etl_kclass_family FAMILY(etl_kfam_fio_name, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_name_ops, fio_name_v);

/* Version 2: FileIo_Create, _SimpleOp, _ReadWrite, _Info, _DirEnum, _OpEnd [MOF] with the thread
   (TTID) a pointer-sized value second; version 3 (Windows 8 on) moves the thread, a u32, after
   the file fields [TE FileIOCreateTraceData, ...]. */
static const etl_schema_field fio_create_v2[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), SZT("TTID", ETL_KSLOT_FIO_TTID), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), X32("CreateOptions", ETL_KSLOT_FIO_CREATE_OPTIONS), X32("FileAttributes", ETL_KSLOT_FIO_ATTRIBUTES),
    X32("ShareAccess", ETL_KSLOT_FIO_SHARE), WSTR("OpenPath", ETL_KSLOT_FIO_NAME),
};
static const etl_schema_field fio_create_v3[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), U32("TTID", ETL_KSLOT_FIO_TTID), X32("CreateOptions", ETL_KSLOT_FIO_CREATE_OPTIONS), X32("FileAttributes", ETL_KSLOT_FIO_ATTRIBUTES),
    X32("ShareAccess", ETL_KSLOT_FIO_SHARE), WSTR("OpenPath", ETL_KSLOT_FIO_NAME),
};
static const etl_kclass_op fio_create_ops[] = { OP("FileIO", 64, "Create") };
static const etl_kclass_version fio_create_v[] = { KV(2, 6, fio_create_v2), KV(3, 6, fio_create_v3) };
const etl_kclass_family FAMILY(etl_kfam_fio_create, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_create_ops, fio_create_v);

static const etl_schema_field fio_simple_v2[] = { PTR("IrpPtr", ETL_KSLOT_FIO_IRP), SZT("TTID", ETL_KSLOT_FIO_TTID), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY) };
static const etl_schema_field fio_simple_v3[] = { PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), U32("TTID", ETL_KSLOT_FIO_TTID) };
static const etl_kclass_op fio_simple_ops[] = {
    OP("FileIO", 65, "Cleanup"), OP("FileIO", 66, "Close"), OP("FileIO", 73, "Flush"),
};
static const etl_kclass_version fio_simple_v[] = { KV(2, 4, fio_simple_v2), KV(3, 4, fio_simple_v3) };
const etl_kclass_family FAMILY(etl_kfam_fio_simple, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_simple_ops, fio_simple_v);

static const etl_schema_field fio_rw_v2[] = {
    U64("Offset", ETL_KSLOT_FIO_OFFSET), PTR("IrpPtr", ETL_KSLOT_FIO_IRP), SZT("TTID", ETL_KSLOT_FIO_TTID), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), U32("IoSize", ETL_KSLOT_FIO_IO_SIZE),
    X32("IoFlags", ETL_KSLOT_FIO_IO_FLAGS),
};
static const etl_schema_field fio_rw_v3[] = {
    U64("Offset", ETL_KSLOT_FIO_OFFSET), PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), U32("TTID", ETL_KSLOT_FIO_TTID), U32("IoSize", ETL_KSLOT_FIO_IO_SIZE),
    X32("IoFlags", ETL_KSLOT_FIO_IO_FLAGS),
};
static const etl_kclass_op fio_rw_ops[] = { OP("FileIO", 67, "Read"), OP("FileIO", 68, "Write") };
static const etl_kclass_version fio_rw_v[] = { KV(2, 7, fio_rw_v2), KV(3, 7, fio_rw_v3) };
const etl_kclass_family FAMILY(etl_kfam_fio_rw, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_rw_ops, fio_rw_v);

static const etl_schema_field fio_info_v2[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), SZT("TTID", ETL_KSLOT_FIO_TTID), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), PTR("ExtraInfo", ETL_KSLOT_FIO_EXTRA), U32("InfoClass", ETL_KSLOT_FIO_INFO_CLASS),
};
static const etl_schema_field fio_info_v3[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), PTR("ExtraInfo", ETL_KSLOT_FIO_EXTRA), U32("TTID", ETL_KSLOT_FIO_TTID), U32("InfoClass", ETL_KSLOT_FIO_INFO_CLASS),
};
static const etl_kclass_op fio_info_ops[] = {
    OP("FileIO", 69, "SetInfo"), OP("FileIO", 70, "Delete"), OP("FileIO", 71, "Rename"), OP("FileIO", 74, "QueryInfo"),
    OP("FileIO", 75, "FSControl"),
};
static const etl_kclass_version fio_info_v[] = { KV(2, 6, fio_info_v2), KV(3, 6, fio_info_v3) };
const etl_kclass_family FAMILY(etl_kfam_fio_info, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_info_ops, fio_info_v);

static const etl_schema_field fio_dir_v2[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), SZT("TTID", ETL_KSLOT_FIO_TTID), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), U32("Length", ETL_KSLOT_FIO_LENGTH), U32("InfoClass", ETL_KSLOT_FIO_INFO_CLASS),
    U32("FileIndex", ETL_KSLOT_FIO_FILE_INDEX), WSTR("FileName", ETL_KSLOT_FIO_NAME),
};
static const etl_schema_field fio_dir_v3[] = {
    PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("FileObject", ETL_KSLOT_FIO_FILE_OBJECT), PTR("FileKey", ETL_KSLOT_FIO_FILE_KEY), U32("TTID", ETL_KSLOT_FIO_TTID), U32("Length", ETL_KSLOT_FIO_LENGTH), U32("InfoClass", ETL_KSLOT_FIO_INFO_CLASS),
    U32("FileIndex", ETL_KSLOT_FIO_FILE_INDEX), WSTR("FileName", ETL_KSLOT_FIO_NAME),
};
static const etl_kclass_op fio_dir_ops[] = { OP("FileIO", 72, "DirEnum"), OP("FileIO", 77, "DirNotify") };
static const etl_kclass_version fio_dir_v[] = { KV(2, 7, fio_dir_v2), KV(3, 7, fio_dir_v3) };
const etl_kclass_family FAMILY(etl_kfam_fio_dir, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_dir_ops, fio_dir_v);

static const etl_schema_field fio_opend[] = { PTR("IrpPtr", ETL_KSLOT_FIO_IRP), PTR("ExtraInfo", ETL_KSLOT_FIO_EXTRA), ST32("NtStatus", ETL_KSLOT_FIO_STATUS) };
static const etl_kclass_op fio_opend_ops[] = { OP("FileIO", 76, "OperationEnd") };
static const etl_kclass_version fio_opend_v[] = { KV(2, 3, fio_opend) };
const etl_kclass_family FAMILY(etl_kfam_fio_opend, P_FILEIO, ETL_KCLASS_FILE_IO, "FileIO", fio_opend_ops, fio_opend_v);

/* FileIo_V2_MapFile [MOF] (version 2: ViewBase, FileObject, MiscInfo, ViewSize, ProcessId);
   version 3 adds ByteOffset before ProcessId [TE MapFileTraceData][OBS: a 44-byte MapFile of
   Windows 11 with ETWAnalyzer's dump]. FileObject is TraceEvent's FileKey. */
static const etl_schema_field fio_map_v2[] = {
    PTR("ViewBase", ETL_KSLOT_MF_BASE), PTR("FileKey", ETL_KSLOT_MF_KEY), X64("MiscInfo", ETL_KSLOT_MF_MISC),
    SZT("ViewSize", ETL_KSLOT_MF_SIZE), U32("ProcessId", ETL_KSLOT_MF_PID),
};
static const etl_schema_field fio_map_v3[] = {
    PTR("ViewBase", ETL_KSLOT_MF_BASE), PTR("FileKey", ETL_KSLOT_MF_KEY), X64("MiscInfo", ETL_KSLOT_MF_MISC),
    SZT("ViewSize", ETL_KSLOT_MF_SIZE), X64("ByteOffset", ETL_KSLOT_MF_OFFSET), U32("ProcessId", ETL_KSLOT_MF_PID),
};
static const etl_kclass_op fio_map_ops[] = {
    OP("FileIO", 37, "MapFile"), OP("FileIO", 38, "UnmapFile"), OP("FileIO", 39, "MapFileDCStart"),
    OP("FileIO", 40, "MapFileDCEnd"),
};
static const etl_kclass_version fio_map_v[] = { KV(2, 5, fio_map_v2), KV(3, 6, fio_map_v3) };
const etl_kclass_family FAMILY(etl_kfam_map_file, P_FILEIO, ETL_KCLASS_MAP_FILE, "FileIO", fio_map_ops, fio_map_v);

/* ================================================================ TcpIp (group 6), UdpIp (group 8) */

/* TcpIp_V0_TypeGroup1, TcpIp_V1_*, TcpIp_* (version 2) [MOF]; the opcode names of version 2 are
   TraceEvent's (the MOF appends "IPV4" to the IPv4 ones). Addresses and ports in network order. */
static const etl_schema_field tcp_v0[] = {
    IP4("daddr"), IP4("saddr"), PORT("dport"), PORT("sport"), U32("size", 0), U32("PID", 0),
};
static const etl_kclass_op tcp_v0_ops[] = {
    OP("TcpIp", 10, "Send"), OP("TcpIp", 11, "Recv"), OP("TcpIp", 12, "Connect"), OP("TcpIp", 13, "Disconnect"),
    OP("TcpIp", 14, "Retransmit"), OP("TcpIp", 15, "Accept"),
};
static const etl_kclass_version tcp_v0_v[] = { KV(0, 6, tcp_v0) };
static const etl_kclass_family FAMILY(tcp_v0_fam, P_TCPIP, ETL_KCLASS_NONE, "TcpIp", tcp_v0_ops, tcp_v0_v);

static const etl_schema_field tcp_v1_send[] = {
    U32("PID", 0), U32("size", 0), IP4("daddr"), IP4("saddr"), PORT("dport"), PORT("sport"), U32("startime", 0),
    U32("endtime", 0), PTR("connid", 0), U32("seqnum", 0),
};
static const etl_schema_field tcp_v1_generic[] = {
    U32("PID", 0), U32("size", 0), IP4("daddr"), IP4("saddr"), PORT("dport"), PORT("sport"), PTR("connid", 0),
    U32("seqnum", 0),
};
static const etl_schema_field tcp_v1_connect[] = {
    U32("PID", 0), U32("size", 0), IP4("daddr"), IP4("saddr"), PORT("dport"), PORT("sport"), U16("mss", 0),
    U16("sackopt", 0), U16("tsopt", 0), U16("wsopt", 0), U32("rcvwin", 0), I16("rcvwinscale", 0),
    I16("sndwinscale", 0), PTR("connid", 0), U32("seqnum", 0),
};
static const etl_schema_field tcp_v1_fail[] = { U32("Proto", 0) };
static const etl_kclass_op tcp_v1_send_ops[] = { OP("TcpIp", 10, "Send") };
static const etl_kclass_op tcp_v1_generic_ops[] = {
    OP("TcpIp", 11, "Recv"), OP("TcpIp", 13, "Disconnect"), OP("TcpIp", 14, "Retransmit"), OP("TcpIp", 16, "Reconnect"),
    OP("TcpIp", 18, "TCPCopy"), OP("TcpIp", 19, "ARPCopy"), OP("TcpIp", 20, "FullACK"), OP("TcpIp", 21, "PartACK"),
    OP("TcpIp", 22, "DupACK"),
};
static const etl_kclass_op tcp_v1_connect_ops[] = { OP("TcpIp", 12, "Connect"), OP("TcpIp", 15, "Accept") };
static const etl_kclass_op tcp_fail_ops[] = { OP("TcpIp", 17, "Fail") };
static const etl_kclass_version tcp_v1_send_v[] = { KV(1, 10, tcp_v1_send) };
static const etl_kclass_version tcp_v1_generic_v[] = { KV(1, 8, tcp_v1_generic) };
static const etl_kclass_version tcp_v1_connect_v[] = { KV(1, 15, tcp_v1_connect) };
static const etl_kclass_family FAMILY(tcp_v1_send_fam, P_TCPIP, ETL_KCLASS_NONE, "TcpIp", tcp_v1_send_ops, tcp_v1_send_v);
static const etl_kclass_family FAMILY(tcp_v1_generic_fam, P_TCPIP, ETL_KCLASS_NONE, "TcpIp", tcp_v1_generic_ops,
                                      tcp_v1_generic_v);
static const etl_kclass_family FAMILY(tcp_v1_connect_fam, P_TCPIP, ETL_KCLASS_NONE, "TcpIp", tcp_v1_connect_ops,
                                      tcp_v1_connect_v);

static const etl_schema_field tcp_v2_send4[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR),
    IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("startime", ETL_KSLOT_NET_STARTIME),
    U32("endtime", ETL_KSLOT_NET_ENDTIME), U32("seqnum", ETL_KSLOT_NET_SEQNUM), PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field tcp_v2_generic4[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR),
    IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("seqnum", ETL_KSLOT_NET_SEQNUM),
    PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field tcp_v2_connect4[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR),
    IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U16("mss", ETL_KSLOT_NET_MSS),
    U16("sackopt", ETL_KSLOT_NET_SACKOPT), U16("tsopt", ETL_KSLOT_NET_TSOPT), U16("wsopt", ETL_KSLOT_NET_WSOPT),
    U32("rcvwin", ETL_KSLOT_NET_RCVWIN), I16("rcvwinscale", ETL_KSLOT_NET_RCVWINSCALE),
    I16("sndwinscale", ETL_KSLOT_NET_SNDWINSCALE), U32("seqnum", ETL_KSLOT_NET_SEQNUM), PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field tcp_v2_send6[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP6S("daddr", ETL_KSLOT_NET_DADDR),
    IP6S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("startime", ETL_KSLOT_NET_STARTIME),
    U32("endtime", ETL_KSLOT_NET_ENDTIME), U32("seqnum", ETL_KSLOT_NET_SEQNUM), PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field tcp_v2_generic6[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP6S("daddr", ETL_KSLOT_NET_DADDR),
    IP6S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("seqnum", ETL_KSLOT_NET_SEQNUM),
    PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field tcp_v2_connect6[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP6S("daddr", ETL_KSLOT_NET_DADDR),
    IP6S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U16("mss", ETL_KSLOT_NET_MSS),
    U16("sackopt", ETL_KSLOT_NET_SACKOPT), U16("tsopt", ETL_KSLOT_NET_TSOPT), U16("wsopt", ETL_KSLOT_NET_WSOPT),
    U32("rcvwin", ETL_KSLOT_NET_RCVWIN), I16("rcvwinscale", ETL_KSLOT_NET_RCVWINSCALE),
    I16("sndwinscale", ETL_KSLOT_NET_SNDWINSCALE), U32("seqnum", ETL_KSLOT_NET_SEQNUM), PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field ip_v2_fail[] = { U16("Proto", 0), U16("FailureCode", 0) };
static const etl_kclass_op tcp_v2_generic4_ops[] = {
    OP("TcpIp", 11, "Recv"), OP("TcpIp", 13, "Disconnect"), OP("TcpIp", 14, "Retransmit"), OP("TcpIp", 16, "Reconnect"),
    OP("TcpIp", 18, "TCPCopy"),
};
static const etl_kclass_op tcp_v2_send6_ops[] = { OP("TcpIp", 26, "SendIPV6") };
static const etl_kclass_op tcp_v2_generic6_ops[] = {
    OP("TcpIp", 27, "RecvIPV6"), OP("TcpIp", 29, "DisconnectIPV6"), OP("TcpIp", 30, "RetransmitIPV6"),
    OP("TcpIp", 32, "ReconnectIPV6"), OP("TcpIp", 34, "TCPCopyIPV6"),
};
static const etl_kclass_op tcp_v2_connect6_ops[] = { OP("TcpIp", 28, "ConnectIPV6"), OP("TcpIp", 31, "AcceptIPV6") };
static const etl_kclass_version tcp_v2_send4_v[] = { KV(2, 10, tcp_v2_send4) };
static const etl_kclass_version tcp_v2_generic4_v[] = { KV(2, 8, tcp_v2_generic4) };
static const etl_kclass_version tcp_v2_connect4_v[] = { KV(2, 15, tcp_v2_connect4) };
static const etl_kclass_version tcp_fail_v[] = { KV(1, 1, tcp_v1_fail), KV(2, 2, ip_v2_fail) };
static const etl_kclass_version tcp_v2_send6_v[] = { KV(2, 10, tcp_v2_send6) };
static const etl_kclass_version tcp_v2_generic6_v[] = { KV(2, 8, tcp_v2_generic6) };
static const etl_kclass_version tcp_v2_connect6_v[] = { KV(2, 15, tcp_v2_connect6) };
const etl_kclass_family FAMILY(etl_kfam_tcp_send4, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v1_send_ops,
                                      tcp_v2_send4_v);
const etl_kclass_family FAMILY(etl_kfam_tcp_generic4, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v2_generic4_ops,
                                      tcp_v2_generic4_v);
const etl_kclass_family FAMILY(etl_kfam_tcp_connect4, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v1_connect_ops,
                                      tcp_v2_connect4_v);
static const etl_kclass_family FAMILY(tcp_fail_fam, P_TCPIP, ETL_KCLASS_NONE, "TcpIp", tcp_fail_ops, tcp_fail_v);
const etl_kclass_family FAMILY(etl_kfam_tcp_send6, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v2_send6_ops,
                                      tcp_v2_send6_v);
const etl_kclass_family FAMILY(etl_kfam_tcp_generic6, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v2_generic6_ops,
                                      tcp_v2_generic6_v);
const etl_kclass_family FAMILY(etl_kfam_tcp_connect6, P_TCPIP, ETL_KCLASS_TCPIP, "TcpIp", tcp_v2_connect6_ops,
                                      tcp_v2_connect6_v);

/* UdpIp_V0_TypeGroup1, UdpIp_V1_TypeGroup1, UdpIp_TypeGroup1 and 2, UdpIp_Fail [MOF] */
static const etl_schema_field udp_v0[] = {
    SZT("context", 0), IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("sport", ETL_KSLOT_NET_SPORT),
    U16("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR), PORTS("dport", ETL_KSLOT_NET_DPORT),
    U16("dsize", 0),
};
static const etl_schema_field udp_v1[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR),
    IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT),
};
static const etl_schema_field udp_v2_4[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP4S("daddr", ETL_KSLOT_NET_DADDR),
    IP4S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("seqnum", ETL_KSLOT_NET_SEQNUM),
    PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_schema_field udp_v2_6[] = {
    U32("PID", ETL_KSLOT_NET_PID), U32("size", ETL_KSLOT_NET_SIZE), IP6S("daddr", ETL_KSLOT_NET_DADDR),
    IP6S("saddr", ETL_KSLOT_NET_SADDR), PORTS("dport", ETL_KSLOT_NET_DPORT), PORTS("sport", ETL_KSLOT_NET_SPORT), U32("seqnum", ETL_KSLOT_NET_SEQNUM),
    PTR("connid", ETL_KSLOT_NET_CONNID),
};
static const etl_kclass_op udp_ops[] = { OP("UdpIp", 10, "Send"), OP("UdpIp", 11, "Recv") };
static const etl_kclass_op udp6_ops[] = { OP("UdpIp", 26, "SendIPV6"), OP("UdpIp", 27, "RecvIPV6") };
static const etl_kclass_op udp_fail_ops[] = { OP("UdpIp", 17, "Fail") };
static const etl_kclass_version udp_v[] = { KV(0, 7, udp_v0), KV(1, 6, udp_v1), KV(2, 8, udp_v2_4) };
static const etl_kclass_version udp6_v[] = { KV(2, 8, udp_v2_6) };
static const etl_kclass_version udp_fail_v[] = { KV(2, 2, ip_v2_fail) };
const etl_kclass_family FAMILY(etl_kfam_udp, P_UDPIP, ETL_KCLASS_TCPIP, "UdpIp", udp_ops, udp_v);
const etl_kclass_family FAMILY(etl_kfam_udp6, P_UDPIP, ETL_KCLASS_TCPIP, "UdpIp", udp6_ops, udp6_v);
static const etl_kclass_family FAMILY(udp_fail_fam, P_UDPIP, ETL_KCLASS_NONE, "UdpIp", udp_fail_ops, udp_fail_v);

/* ================================================================ PageFault (group 2) */

/* PageFault_TypeGroup1, _HardFault, _VirtualAlloc, the heap ranges and ImageLoadBacked [MOF][TE
   VirtualAllocTraceData][PDB WMI_PAGE_FAULT]. */
static const etl_schema_field pf_fault[] = {
    PTR("VirtualAddress", ETL_KSLOT_PF_ADDRESS), PTR("ProgramCounter", ETL_KSLOT_PF_PC),
};
static const etl_kclass_op pf_fault_ops[] = {
    OP("PageFault", 10, "TransitionFault"), OP("PageFault", 11, "DemandZeroFault"), OP("PageFault", 12, "CopyOnWrite"),
    OP("PageFault", 13, "GuardPageFault"), OP("PageFault", 14, "HardPageFault"), OP("PageFault", 15, "AccessViolation"),
};
static const etl_kclass_version pf_fault_v[] = { KV(0, 2, pf_fault) };
const etl_kclass_family FAMILY(etl_kfam_page_fault, P_PAGEFAULT, ETL_KCLASS_PAGE_FAULT, "PageFault", pf_fault_ops,
                               pf_fault_v);

/* [MOF PageFault_HardFault][TE MemoryHardFaultTraceData]: ByteCount is what was read from
   ReadOffset to resolve the fault, InitialTime when the fault began. */
static const etl_schema_field pf_hard[] = {
    U64("InitialTime", ETL_KSLOT_HF_INITIAL_TIME), X64("ReadOffset", ETL_KSLOT_HF_OFFSET),
    PTR("VirtualAddress", ETL_KSLOT_HF_ADDRESS), PTR("FileObject", ETL_KSLOT_HF_FILE), U32("TThreadId", ETL_KSLOT_HF_TID),
    U32("ByteCount", ETL_KSLOT_HF_BYTES),
};
static const etl_kclass_op pf_hard_ops[] = { OP("PageFault", 32, "HardFault") };
static const etl_kclass_version pf_hard_v[] = { KV(0, 6, pf_hard) };
const etl_kclass_family FAMILY(etl_kfam_hard_fault, P_PAGEFAULT, ETL_KCLASS_HARD_FAULT, "PageFault", pf_hard_ops,
                               pf_hard_v);

static const etl_schema_field pf_valloc[] = {
    PTR("BaseAddress", ETL_KSLOT_VA_BASE), SZT("RegionSize", ETL_KSLOT_VA_SIZE), U32("ProcessId", ETL_KSLOT_VA_PID),
    X32("Flags", ETL_KSLOT_VA_FLAGS),
};
static const etl_kclass_op pf_valloc_ops[] = { OP("PageFault", 98, "VirtualAlloc"), OP("PageFault", 99, "VirtualFree") };
static const etl_kclass_version pf_valloc_v[] = { KV(0, 4, pf_valloc) };
const etl_kclass_family FAMILY(etl_kfam_virtual_alloc, P_PAGEFAULT, ETL_KCLASS_VIRTUAL_ALLOC, "PageFault", pf_valloc_ops,
                               pf_valloc_v);

static const etl_schema_field pf_hr_rundown[] = { PTR("HeapHandle", 0), X32("HRFlags", 0), U32("HRPid", 0), U32("HRRangeCount", 0) };
static const etl_schema_field pf_hr_create[] = { PTR("HeapHandle", 0), SZT("FirstRangeSize", 0), X32("HRCreateFlags", 0) };
static const etl_schema_field pf_hr_range[] = { PTR("HeapHandle", 0), PTR("HRAddress", 0), SZT("HRSize", 0) };
static const etl_schema_field pf_hr_destroy[] = { PTR("HeapHandle", 0) };
static const etl_schema_field pf_backed[] = { PTR("FileObject", 0), X32("DeviceChar", 0), X16("FileChar", 0), X16("LoadFlags", 0) };
static const etl_kclass_op pf_hr_rundown_ops[] = { OP("PageFault", 100, "HRRundown") };
static const etl_kclass_op pf_hr_create_ops[] = { OP("PageFault", 101, "HRCreate") };
static const etl_kclass_op pf_hr_range_ops[] = { OP("PageFault", 102, "HRReserve"), OP("PageFault", 103, "HRRelease") };
static const etl_kclass_op pf_hr_destroy_ops[] = { OP("PageFault", 104, "HRDestroy") };
static const etl_kclass_op pf_backed_ops[] = { OP("PageFault", 105, "ImageLoadBacked") };
static const etl_kclass_version pf_hr_rundown_v[] = { KV(0, 4, pf_hr_rundown) };
static const etl_kclass_version pf_hr_create_v[] = { KV(0, 3, pf_hr_create) };
static const etl_kclass_version pf_hr_range_v[] = { KV(0, 3, pf_hr_range) };
static const etl_kclass_version pf_hr_destroy_v[] = { KV(0, 1, pf_hr_destroy) };
static const etl_kclass_version pf_backed_v[] = { KV(0, 4, pf_backed) };
static const etl_kclass_family FAMILY(pf_hr_rundown_fam, P_PAGEFAULT, ETL_KCLASS_NONE, "PageFault", pf_hr_rundown_ops,
                                      pf_hr_rundown_v);
static const etl_kclass_family FAMILY(pf_hr_create_fam, P_PAGEFAULT, ETL_KCLASS_NONE, "PageFault", pf_hr_create_ops,
                                      pf_hr_create_v);
static const etl_kclass_family FAMILY(pf_hr_range_fam, P_PAGEFAULT, ETL_KCLASS_NONE, "PageFault", pf_hr_range_ops,
                                      pf_hr_range_v);
static const etl_kclass_family FAMILY(pf_hr_destroy_fam, P_PAGEFAULT, ETL_KCLASS_NONE, "PageFault", pf_hr_destroy_ops,
                                      pf_hr_destroy_v);
static const etl_kclass_family FAMILY(pf_backed_fam, P_PAGEFAULT, ETL_KCLASS_NONE, "PageFault", pf_backed_ops, pf_backed_v);

/* ================================================================ Registry (group 9) */

/* Registry_V0_TypeGroup1, Registry_V1_TypeGroup1, Registry_TypeGroup1 (version 2) [MOF]: opcode 22
   is RunDown in version 1 and KCBCreate in version 2. */
static const etl_schema_field reg_v0[] = { PTR("Status", 0), PTR("KeyHandle", 0), I64("ElapsedTime", 0), WSTR("KeyName", 0) };
static const etl_schema_field reg_v1[] = {
    PTR("Status", 0), PTR("KeyHandle", 0), I64("ElapsedTime", 0), U32("Index", 0), WSTR("KeyName", 0),
};
static const etl_schema_field reg_v2[] = {
    I64("InitialTime", 0), ST32("Status", 0), U32("Index", 0), PTR("KeyHandle", 0), WSTR("KeyName", 0),
};
#define REG_OPS                                                                                                       \
    OP("Registry", 10, "Create"), OP("Registry", 11, "Open"), OP("Registry", 12, "Delete"), OP("Registry", 13, "Query"), \
    OP("Registry", 14, "SetValue"), OP("Registry", 15, "DeleteValue"), OP("Registry", 16, "QueryValue"),             \
    OP("Registry", 17, "EnumerateKey"), OP("Registry", 18, "EnumerateValueKey"),                                    \
    OP("Registry", 19, "QueryMultipleValue"), OP("Registry", 20, "SetInformation"), OP("Registry", 21, "Flush")
static const etl_kclass_op reg_v0_ops[] = { REG_OPS };
static const etl_kclass_op reg_v1_ops[] = { REG_OPS, OP("Registry", 22, "RunDown") };
static const etl_kclass_op reg_v2_ops[] = {
    REG_OPS, OP("Registry", 22, "KCBCreate"), OP("Registry", 23, "KCBDelete"), OP("Registry", 24, "KCBRundownBegin"),
    OP("Registry", 25, "KCBRundownEnd"), OP("Registry", 26, "Virtualize"), OP("Registry", 27, "Close"),
};
static const etl_kclass_version reg_v0_v[] = { KV(0, 3, reg_v0) };
static const etl_kclass_version reg_v1_v[] = { KV(1, 4, reg_v1) };
static const etl_kclass_version reg_v2_v[] = { KV(2, 4, reg_v2) };
static const etl_kclass_family FAMILY(reg_v0_fam, P_REGISTRY, ETL_KCLASS_NONE, "Registry", reg_v0_ops, reg_v0_v);
static const etl_kclass_family FAMILY(reg_v1_fam, P_REGISTRY, ETL_KCLASS_NONE, "Registry", reg_v1_ops, reg_v1_v);
static const etl_kclass_family FAMILY(reg_v2_fam, P_REGISTRY, ETL_KCLASS_NONE, "Registry", reg_v2_ops, reg_v2_v);

/* ================================================================ ALPC (group 0x1A) */

static const etl_schema_field alpc_msg[] = { U32("MessageID", 0) }; /* [MOF ALPC_Send_Message, ...] */
static const etl_schema_field alpc_wait_new[] = { U32("IsServerPort", 0), ASTR("PortName", 0) };
static const etl_schema_field alpc_unwait[] = { ST32("Status", 0) };
static const etl_kclass_op alpc_msg_ops[] = {
    OP("ALPC", 33, "ALPC-Send-Message"), OP("ALPC", 34, "ALPC-Receive-Message"), OP("ALPC", 35, "ALPC-Wait-For-Reply"),
};
static const etl_kclass_op alpc_wait_new_ops[] = { OP("ALPC", 36, "ALPC-Wait-For-New-Message") };
static const etl_kclass_op alpc_unwait_ops[] = { OP("ALPC", 37, "ALPC-Unwait") };
static const etl_kclass_version alpc_msg_v[] = { KV(0, 1, alpc_msg) };
static const etl_kclass_version alpc_wait_new_v[] = { KV(0, 1, alpc_wait_new) };
static const etl_kclass_version alpc_unwait_v[] = { KV(0, 1, alpc_unwait) };
static const etl_kclass_family FAMILY(alpc_msg_fam, P_ALPC, ETL_KCLASS_NONE, "ALPC", alpc_msg_ops, alpc_msg_v);
static const etl_kclass_family FAMILY(alpc_wait_new_fam, P_ALPC, ETL_KCLASS_NONE, "ALPC", alpc_wait_new_ops,
                                      alpc_wait_new_v);
static const etl_kclass_family FAMILY(alpc_unwait_fam, P_ALPC, ETL_KCLASS_NONE, "ALPC", alpc_unwait_ops, alpc_unwait_v);

/* ================================================================ SystemConfig (group 0x0B) */

/* SystemConfig_V0_* and _V1_* (the same layouts), SystemConfig_* (version 2) [MOF]; version 3
   of CPU, Services and IRQ, versions 4 and 5 of PnP, and the event types after IDEChannel:
   [OBS: perfview_diaghub.kernel.1.etl, the order of the fields][TE][PDB WMI_IRQ_RECORD,
   WMI_PNP_RECORD_V4, _V5] and names from the classes Windows registers in WMI
   (SystemConfig_V3_CPU, SystemConfig_V2_Platform, ...). */
static const etl_schema_field sc_cpu_v0[] = {
    U32("MHz", 0), U32("NumberOfProcessors", 0), U32("MemSize", 0), U32("PageSize", 0), U32("AllocationGranularity", 0),
    WCHARS("ComputerName", 256), WCHARS("DomainName", 132), XSZT("HyperThreadingFlag", 0),
};
static const etl_schema_field sc_cpu_v2[] = {
    U32("MHz", 0), U32("NumberOfProcessors", 0), U32("MemSize", 0), U32("PageSize", 0), U32("AllocationGranularity", 0),
    WCHARS("ComputerName", 256), WCHARS("DomainName", 134), XSZT("HyperThreadingFlag", 0), PTR("HighestUserAddress", 0),
    U16("ProcessorArchitecture", 0), U16("ProcessorLevel", 0), X16("ProcessorRevision", 0), U8("NxEnabled", 0),
    U8("PaeEnabled", 0), U32("MemorySpeed", 0),
};
static const etl_kclass_op sc_cpu_ops[] = { OP("SystemConfig", 10, "CPU") };
static const etl_kclass_version sc_cpu_v[] = { KV(0, 8, sc_cpu_v0), KVN(2, 8, sc_cpu_v2, 8), KV(3, 15, sc_cpu_v2) };
static const etl_kclass_family FAMILY(sc_cpu_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_cpu_ops, sc_cpu_v);

static const etl_schema_field sc_phydisk[] = {
    U32("DiskNumber", 0), U32("BytesPerSector", 0), U32("SectorsPerTrack", 0), U32("TracksPerCylinder", 0),
    U64("Cylinders", 0), U32("SCSIPort", 0), U32("SCSIPath", 0), U32("SCSITarget", 0), U32("SCSILun", 0),
    WCHARS("Manufacturer", 256), U32("PartitionCount", 0), U8("WriteCacheEnabled", 0), U8("Pad", 0),
    WCHARS("BootDriveLetter", 3), WCHARS("Spare", 2),
};
static const etl_kclass_op sc_phydisk_ops[] = { OP("SystemConfig", 11, "PhyDisk") };
static const etl_kclass_version sc_phydisk_v[] = { KV(0, 15, sc_phydisk) };
static const etl_kclass_family FAMILY(sc_phydisk_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_phydisk_ops,
                                      sc_phydisk_v);

static const etl_schema_field sc_logdisk[] = {
    U64("StartOffset", 0), U64("PartitionSize", 0), U32("DiskNumber", 0), U32("Size", 0), U32("DriveType", 0),
    WCHARS("DriveLetterString", 4), U32("Pad1", 0), U32("PartitionNumber", 0), U32("SectorsPerCluster", 0),
    U32("BytesPerSector", 0), U32("Pad2", 0), I64("NumberOfFreeClusters", 0), I64("TotalNumberOfClusters", 0),
    WCHARS("FileSystem", 16), U32("VolumeExt", 0), U32("Pad3", 0),
};
static const etl_kclass_op sc_logdisk_ops[] = { OP("SystemConfig", 12, "LogDisk") };
static const etl_kclass_version sc_logdisk_v[] = { KVN(0, 15, sc_logdisk, 15), KV(2, 16, sc_logdisk) };
static const etl_kclass_family FAMILY(sc_logdisk_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_logdisk_ops,
                                      sc_logdisk_v);

static const etl_schema_field sc_nic_v0[] = {
    WCHARS("NICName", 256), U32("Index", 0), U32("PhysicalAddrLen", 0), WCHARS("PhysicalAddr", 8), U32("Size", 0),
    I32("IpAddress", 0), I32("SubnetMask", 0), I32("DhcpServer", 0), I32("Gateway", 0), I32("PrimaryWinsServer", 0),
    I32("SecondaryWinsServer", 0), I32("DnsServer1", 0), I32("DnsServer2", 0), I32("DnsServer3", 0),
    I32("DnsServer4", 0), U32("Data", 0),
};
static const etl_schema_field sc_nic_v2[] = {
    X64("PhysicalAddr", 0), U32("PhysicalAddrLen", 0), U32("Ipv4Index", 0), U32("Ipv6Index", 0),
    WSTR("NICDescription", 0), WSTR("IpAddresses", 0), WSTR("DnsServerAddresses", 0),
};
static const etl_kclass_op sc_nic_ops[] = { OP("SystemConfig", 13, "NIC") };
static const etl_kclass_version sc_nic_v[] = { KV(0, 16, sc_nic_v0), KV(2, 4, sc_nic_v2) };
static const etl_kclass_family FAMILY(sc_nic_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_nic_ops, sc_nic_v);

static const etl_schema_field sc_video[] = {
    U32("MemorySize", 0), U32("XResolution", 0), U32("YResolution", 0), U32("BitsPerPixel", 0), U32("VRefresh", 0),
    WCHARS("ChipType", 256), WCHARS("DACType", 256), WCHARS("AdapterString", 256), WCHARS("BiosString", 256),
    WCHARS("DeviceId", 256), X32("StateFlags", 0),
};
static const etl_kclass_op sc_video_ops[] = { OP("SystemConfig", 14, "Video") };
static const etl_kclass_version sc_video_v[] = { KV(0, 11, sc_video) };
static const etl_kclass_family FAMILY(sc_video_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_video_ops, sc_video_v);

static const etl_schema_field sc_services_v0[] = {
    WCHARS("ServiceName", 34), WCHARS("DisplayName", 256), WCHARS("ProcessName", 34), U32("ProcessId", 0),
};
static const etl_schema_field sc_services_v2[] = {
    U32("ProcessId", 0), X32("ServiceState", 0), X32("SubProcessTag", 0), WSTR("ServiceName", 0),
    WSTR("DisplayName", 0), WSTR("ProcessName", 0), WSTR("LoadOrderGroup", 0), WSTR("SvchostGroup", 0),
};
static const etl_kclass_op sc_services_ops[] = { OP("SystemConfig", 15, "Services") };
static const etl_kclass_version sc_services_v[] = {
    KV(0, 4, sc_services_v0), KVN(2, 3, sc_services_v2, 6), KV(3, 3, sc_services_v2),
};
static const etl_kclass_family FAMILY(sc_services_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_services_ops,
                                      sc_services_v);

static const etl_schema_field sc_power[] = {
    U8("S1", 0), U8("S2", 0), U8("S3", 0), U8("S4", 0), U8("S5", 0), U8("Pad1", 0), U8("Pad2", 0), U8("Pad3", 0),
};
static const etl_kclass_op sc_power_ops[] = { OP("SystemConfig", 16, "Power") };
static const etl_kclass_version sc_power_v[] = { KV(0, 8, sc_power) };
static const etl_kclass_family FAMILY(sc_power_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_power_ops, sc_power_v);

static const etl_schema_field sc_network[] = {
    U32("TcbTablePartitions", 0), U32("MaxHashTableSize", 0), U32("MaxUserPort", 0), U32("TcpTimedWaitDelay", 0),
};
static const etl_kclass_op sc_network_ops[] = { OP("SystemConfig", 17, "Network") };
static const etl_kclass_version sc_network_v[] = { KV(2, 4, sc_network) };
static const etl_kclass_family FAMILY(sc_network_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_network_ops,
                                      sc_network_v);

static const etl_schema_field sc_irq_v0[] = {
    X64("IRQAffinity", 0), U32("IRQNum", 0), U32("DeviceDescriptionLen", 0), WSTR("DeviceDescription", 0),
};
static const etl_schema_field sc_irq_v3[] = {
    X64("IRQAffinity", 0), U16("IRQGroup", 0), U16("Reserved", 0), U32("IRQNum", 0), U32("DeviceDescriptionLen", 0),
    WSTR("DeviceDescription", 0),
};
static const etl_kclass_op sc_irq_ops[] = { OP("SystemConfig", 21, "IRQ") };
static const etl_kclass_version sc_irq_v[] = { KV(0, 3, sc_irq_v0), KV(3, 5, sc_irq_v3) };
static const etl_kclass_family FAMILY(sc_irq_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_irq_ops, sc_irq_v);

/* PnP: three lengths, then the strings (to version 3); the device's class and its filters'
   counts (version 4) and its status and problem (version 5), then five strings and the
   filters' names [TE SystemConfigPnPTraceData][PDB WMI_PNP_RECORD_V3 to _V5][OBS]. */
static const etl_schema_field sc_pnp_v0[] = {
    U32("IDLength", 0), U32("DescriptionLength", 0), U32("FriendlyNameLength", 0), WSTR("DeviceID", 0),
    WSTR("DeviceDescription", 0), WSTR("FriendlyName", 0),
};
static const etl_schema_field sc_pnp_v4[] = {
    GUIDF("ClassGuid"), U32("UpperFilterCount", 0), U32("LowerFilterCount", 0), WSTR("DeviceID", 0),
    WSTR("DeviceDescription", 0), WSTR("FriendlyName", 0), WSTR("PdoName", 0), WSTR("ServiceName", 0),
    WSTRS("UpperFilters", 1), WSTRS("LowerFilters", 2),
};
static const etl_schema_field sc_pnp_v5[] = {
    GUIDF("ClassGuid"), U32("UpperFilterCount", 0), U32("LowerFilterCount", 0), X32("DevStatus", 0),
    U32("DevProblem", 0), WSTR("DeviceID", 0), WSTR("DeviceDescription", 0), WSTR("FriendlyName", 0),
    WSTR("PdoName", 0), WSTR("ServiceName", 0), WSTRS("UpperFilters", 1), WSTRS("LowerFilters", 2),
};
static const etl_kclass_op sc_pnp_ops[] = { OP("SystemConfig", 22, "PnP") };
static const etl_kclass_version sc_pnp_v[] = { KV(0, 3, sc_pnp_v0), KV(4, 3, sc_pnp_v4), KV(5, 5, sc_pnp_v5) };
static const etl_kclass_family FAMILY(sc_pnp_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_pnp_ops, sc_pnp_v);

static const etl_schema_field sc_ide[] = {
    U32("TargetId", 0), X32("DeviceType", 0), X32("DeviceTimingMode", 0), U32("LocationInformationLen", 0),
    WSTR("LocationInformation", 0),
};
static const etl_kclass_op sc_ide_ops[] = { OP("SystemConfig", 23, "IDEChannel") };
static const etl_kclass_version sc_ide_v[] = { KV(2, 4, sc_ide) };
static const etl_kclass_family FAMILY(sc_ide_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_ide_ops, sc_ide_v);

static const etl_schema_field sc_platform[] = {
    WSTR("SystemManufacturer", 0), WSTR("SystemProductName", 0), WSTR("BiosDate", 0), WSTR("BiosVersion", 0),
};
static const etl_schema_field sc_dpi[] = { U32("MachineDPI", 0), U32("UserDPI", 0) };
static const etl_schema_field sc_ci[] = { X32("CodeIntegrityInfo", 0) };
static const etl_schema_field sc_telemetry[] = { GUIDF("MachineId") };
static const etl_schema_field sc_family[] = { X64("UAPInfo", 0), U32("DeviceFamily", 0), U32("DeviceForm", 0) };
static const etl_schema_field sc_flights[] = { WSTR("UpdateId", 0), WSTR("FlightIdList", 0) };
static const etl_schema_field sc_processors[] = {
    U32("ProcessorIndex", 0), X32("FeatureSet", 0), U32("ProcessorSpeed", 0), WCHARS("ProcessorName", 64),
    WCHARS("ProcessorIdentifier", 128), WCHARS("VendorIdentifier", 16),
};
static const etl_kclass_op sc_platform_ops[] = { OP("SystemConfig", 25, "Platform") };
static const etl_kclass_op sc_dpi_ops[] = { OP("SystemConfig", 28, "DPI") };
static const etl_kclass_op sc_ci_ops[] = { OP("SystemConfig", 29, "CodeIntegrity") };
static const etl_kclass_op sc_telemetry_ops[] = { OP("SystemConfig", 30, "TelemetryInfo") };
static const etl_kclass_op sc_family_ops[] = { OP("SystemConfig", 33, "DeviceFamily") };
static const etl_kclass_op sc_flights_ops[] = { OP("SystemConfig", 34, "FlightIds") };
static const etl_kclass_op sc_processors_ops[] = { OP("SystemConfig", 35, "Processors") };
static const etl_kclass_version sc_platform_v[] = { KV(2, 0, sc_platform) };
static const etl_kclass_version sc_dpi_v[] = { KV(2, 2, sc_dpi) };
static const etl_kclass_version sc_ci_v[] = { KV(2, 1, sc_ci) };
static const etl_kclass_version sc_telemetry_v[] = { KV(2, 1, sc_telemetry) };
static const etl_kclass_version sc_family_v[] = { KV(2, 3, sc_family) };
static const etl_kclass_version sc_flights_v[] = { KV(2, 0, sc_flights) };
static const etl_kclass_version sc_processors_v[] = { KV(2, 6, sc_processors) };
static const etl_kclass_family FAMILY(sc_platform_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_platform_ops,
                                      sc_platform_v);
static const etl_kclass_family FAMILY(sc_dpi_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_dpi_ops, sc_dpi_v);
static const etl_kclass_family FAMILY(sc_ci_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_ci_ops, sc_ci_v);
static const etl_kclass_family FAMILY(sc_telemetry_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_telemetry_ops,
                                      sc_telemetry_v);
static const etl_kclass_family FAMILY(sc_family_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_family_ops,
                                      sc_family_v);
static const etl_kclass_family FAMILY(sc_flights_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig", sc_flights_ops,
                                      sc_flights_v);
static const etl_kclass_family FAMILY(sc_processors_fam, P_SYSCONFIG, ETL_KCLASS_NONE, "SystemConfig",
                                      sc_processors_ops, sc_processors_v);

/* ================================================================ KernelTraceControl (classic events) */

/* SysConfigEx, added by merges [TE: BuildInfo, SystemPaths, UnknownVolume, VolumeMapping]
   [OBS: perfview_SelfDescribingSingleEvent.etl]; its type 37 holds what SystemConfig's
   DeviceFamily does [OBS: the same 16 bytes]. */
static const etl_schema_field scx_build[] = { FT("InstallDate", 0), WSTR("BuildLab", 0), WSTR("ProductName", 0) };
static const etl_schema_field scx_paths[] = { WSTR("SystemDirectory", 0), WSTR("SystemWindowsDirectory", 0) };
static const etl_schema_field scx_unknown[] = { WSTR("NtPath", 0) };
static const etl_schema_field scx_volume[] = { WSTR("NtPath", 0), WSTR("DosPath", 0) };
static const etl_kclass_op scx_build_ops[] = { OP("SysConfigEx", 32, "BuildInfo") };
static const etl_kclass_op scx_paths_ops[] = { OP("SysConfigEx", 33, "SystemPaths") };
static const etl_kclass_op scx_unknown_ops[] = { OP("SysConfigEx", 34, "UnknownVolume") };
static const etl_kclass_op scx_volume_ops[] = { OP("SysConfigEx", 35, "VolumeMapping") };
static const etl_kclass_op scx_family_ops[] = { OP("SysConfigEx", 37, "DeviceFamily") };
static const etl_kclass_version scx_build_v[] = { KV(0, 1, scx_build) };
static const etl_kclass_version scx_paths_v[] = { KV(0, 0, scx_paths) };
static const etl_kclass_version scx_unknown_v[] = { KV(0, 0, scx_unknown) };
static const etl_kclass_version scx_volume_v[] = { KV(0, 0, scx_volume) };
static const etl_kclass_version scx_family_v[] = { KV(0, 3, sc_family) };
static const etl_kclass_family FAMILY(scx_build_fam, P_SYSCONFIGEX, ETL_KCLASS_NONE, "SysConfigEx", scx_build_ops,
                                      scx_build_v);
static const etl_kclass_family FAMILY(scx_paths_fam, P_SYSCONFIGEX, ETL_KCLASS_NONE, "SysConfigEx", scx_paths_ops,
                                      scx_paths_v);
static const etl_kclass_family FAMILY(scx_unknown_fam, P_SYSCONFIGEX, ETL_KCLASS_NONE, "SysConfigEx", scx_unknown_ops,
                                      scx_unknown_v);
static const etl_kclass_family FAMILY(scx_volume_fam, P_SYSCONFIGEX, ETL_KCLASS_NONE, "SysConfigEx", scx_volume_ops,
                                      scx_volume_v);
static const etl_kclass_family FAMILY(scx_family_fam, P_SYSCONFIGEX, ETL_KCLASS_NONE, "SysConfigEx", scx_family_ops,
                                      scx_family_v);

/* WinSat's assessment as LZNT1-compressed UTF-16 XML [TE WinSatXmlTraceData][OBS]. */
static const etl_schema_field winsat[] = { U32("State", 0), U32("UncompressedLength", 0), BINREST("CompressedXml") };
static const etl_kclass_op winsat_ops[] = {
    OP("WinSat", 33, "WinSPR"), OP("WinSat", 35, "Metrics"), OP("WinSat", 37, "SystemConfig"),
};
static const etl_kclass_version winsat_v[] = { KV(0, 2, winsat) };
static const etl_kclass_family FAMILY(winsat_fam, P_WINSAT, ETL_KCLASS_NONE, "WinSat", winsat_ops, winsat_v);

/* ImageID: what identifies an image's symbols, added by merges [TE SymbolTraceEventParser]
   [PDB WMI_IMAGEID_INFORMATION]. */
static const etl_schema_field iid_info[] = {
    PTR("ImageBase", 0), SZT("ImageSize", 0), U32("ProcessId", 0), X32("TimeDateStamp", 0), WSTR("OriginalFileName", 0),
};
static const etl_schema_field iid_rsds[] = {
    PTR("ImageBase", 0), U32("ProcessId", 0), GUIDF("GuidSig"), U32("Age", 0), ASTR("PdbFileName", 0),
};
static const etl_schema_field iid_ppdb[] = {
    PTR("ImageBase", 0), U32("ProcessId", 0), X32("TimeDateStamp", 0), U16("MajorVersion", 0), U16("MinorVersion", 0),
};
static const etl_schema_field iid_determ[] = { PTR("ImageBase", 0), U32("ProcessId", 0) };
static const etl_schema_field iid_version[] = {
    U32("ImageSize", 0), X32("TimeDateStamp", 0), WSTR("OrigFileName", 0), WSTR("FileDescription", 0),
    WSTR("FileVersion", 0), WSTR("BinFileVersion", 0), WSTR("VerLanguage", 0), WSTR("ProductName", 0),
    WSTR("CompanyName", 0), WSTR("ProductVersion", 0), WSTR("FileId", 0), WSTR("ProgramId", 0),
};
static const etl_kclass_op iid_info_ops[] = { OP("ImageID", 0, "Info") };
static const etl_kclass_op iid_none_ops[] = { OP("ImageID", 32, "None") };
static const etl_kclass_op iid_rsds_ops[] = { OP("ImageID", 36, "DbgID_RSDS"), OP("ImageID", 37, "DbgID_ILRSDS") };
static const etl_kclass_op iid_ppdb_ops[] = { OP("ImageID", 38, "DbgPPDB") };
static const etl_kclass_op iid_determ_ops[] = { OP("ImageID", 40, "DbgDeterm") };
static const etl_kclass_op iid_version_ops[] = { OP("ImageID", 64, "FileVersion") };
static const etl_kclass_version iid_info_v[] = { KV(0, 4, iid_info) };
static const etl_kclass_version iid_none_v[] = { KVN(0, 0, no_fields, 0) };
static const etl_kclass_version iid_rsds_v[] = { KV(0, 4, iid_rsds) };
static const etl_kclass_version iid_ppdb_v[] = { KV(0, 5, iid_ppdb) };
static const etl_kclass_version iid_determ_v[] = { KV(0, 2, iid_determ) };
static const etl_kclass_version iid_version_v[] = { KV(0, 2, iid_version) };
static const etl_kclass_family FAMILY(iid_info_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_info_ops, iid_info_v);
static const etl_kclass_family FAMILY(iid_none_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_none_ops, iid_none_v);
static const etl_kclass_family FAMILY(iid_rsds_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_rsds_ops, iid_rsds_v);
static const etl_kclass_family FAMILY(iid_ppdb_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_ppdb_ops, iid_ppdb_v);
static const etl_kclass_family FAMILY(iid_determ_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_determ_ops,
                                      iid_determ_v);
static const etl_kclass_family FAMILY(iid_version_fam, P_IMAGEID, ETL_KCLASS_NONE, "ImageID", iid_version_ops,
                                      iid_version_v);

/* Lost_Event: what a real-time consumer lost [MOF RT_LostEvent]: no data. */
static const etl_kclass_op lost_ops[] = {
    OP("Lost_Event", 32, "RTLostEvent"), OP("Lost_Event", 33, "RTLostBuffer"), OP("Lost_Event", 34, "RTLostFile"),
};
static const etl_kclass_version lost_v[] = { KVN(0, 0, no_fields, 0) };
static const etl_kclass_family FAMILY(lost_fam, P_LOST_EVENT, ETL_KCLASS_NONE, "Lost_Event", lost_ops, lost_v);

/* ================================================================ LinuxImageID (libetl's own classic events) */

/* What symbolizing a Linux kernel capture needs, written by libetl's capture (doc/kernel-events.md,
   doc/format.md 8.9): an image's ELF build-id after its Image Load or DCStart, /proc/kallsyms in
   chunks of whole lines, and the kernel's and its modules' ranges and build-ids. */
static const etl_schema_field lid_build_id[] = {
    PTR("ImageBase", 0), PTR("ImageSize", 0), U32("ProcessId", 0), U64("FileOffset", 0), U16("BuildIdSize", 0),
    BINF("BuildId", 4), ASTR("FileName", 0),
};
static const etl_schema_field lid_kallsyms[] = { U32("Sequence", 0), ASTR("Text", 0) };
static const etl_schema_field lid_module[] = {
    PTR("ImageBase", 0), PTR("ImageSize", 0), U16("BuildIdSize", 0), BINF("BuildId", 2), ASTR("Name", 0),
};
/* SystemCalls: the names of the recording machine's system call numbers (ELF e_machine). */
static const etl_schema_field lid_syscalls[] = { U16("Machine", 0), U16("Count", 0), ASTRS("Names", 1) };
static const etl_kclass_op lid_build_id_ops[] = { OP("LinuxImageID", 0, "BuildId") };
static const etl_kclass_op lid_kallsyms_ops[] = { OP("LinuxImageID", 1, "KernelSymbols") };
static const etl_kclass_op lid_module_ops[] = { OP("LinuxImageID", 2, "KernelModule") };
static const etl_kclass_op lid_syscalls_ops[] = { OP("LinuxImageID", 3, "SystemCalls") };
static const etl_kclass_version lid_build_id_v[] = { KV(0, 6, lid_build_id) };
static const etl_kclass_version lid_kallsyms_v[] = { KV(0, 1, lid_kallsyms) };
static const etl_kclass_version lid_module_v[] = { KV(0, 4, lid_module) };
static const etl_kclass_version lid_syscalls_v[] = { KV(0, 3, lid_syscalls) };
static const etl_kclass_family FAMILY(lid_build_id_fam, P_LINUX_IMAGEID, ETL_KCLASS_NONE, "LinuxImageID",
                                      lid_build_id_ops, lid_build_id_v);
static const etl_kclass_family FAMILY(lid_kallsyms_fam, P_LINUX_IMAGEID, ETL_KCLASS_NONE, "LinuxImageID",
                                      lid_kallsyms_ops, lid_kallsyms_v);
static const etl_kclass_family FAMILY(lid_module_fam, P_LINUX_IMAGEID, ETL_KCLASS_NONE, "LinuxImageID",
                                      lid_module_ops, lid_module_v);
static const etl_kclass_family FAMILY(lid_syscalls_fam, P_LINUX_IMAGEID, ETL_KCLASS_NONE, "LinuxImageID",
                                      lid_syscalls_ops, lid_syscalls_v);

/* ---------------------------------------------------------------- every family */

const etl_kclass_family *const etl_kclass_families[] = {
    &etl_kfam_trace_header, &etl_kfam_group_masks, &etl_kfam_rundown_complete, &ev_partition_fam,
    &etl_kfam_process, &etl_kfam_process_defunct, &etl_kfam_process_counters, &proc_terminate_fam,
    &etl_kfam_thread_start, &etl_kfam_thread_end, &etl_kfam_cswitch, &etl_kfam_ready_thread,
    &etl_kfam_thread_set_name, &thr_worker_fam,
    &etl_kfam_image, &img_kernel_base_fam, &img_hypercall_fam,
    &etl_kfam_sampled_profile, &etl_kfam_pmc_sample, &etl_kfam_syscall_enter, &etl_kfam_syscall_exit, &etl_kfam_isr,
    &etl_kfam_dpc, &interval_fam, &debugger_fam,
    &etl_kfam_stack, &etl_kfam_stack_key_def, &etl_kfam_stack_key, &etl_kfam_lbr,
    &etl_kfam_disk_io, &etl_kfam_disk_init, &etl_kfam_disk_flush, &drv_call_fam, &drv_ret_fam, &drv_routine_fam,
    &drv_req_fam, &splitio_fam,
    &etl_kfam_fio_name, &etl_kfam_fio_create, &etl_kfam_fio_simple, &etl_kfam_fio_rw, &etl_kfam_fio_info, &etl_kfam_fio_dir, &etl_kfam_fio_opend,
    &etl_kfam_map_file,
    &tcp_v0_fam, &tcp_v1_send_fam, &tcp_v1_generic_fam, &tcp_v1_connect_fam, &etl_kfam_tcp_send4, &etl_kfam_tcp_generic4,
    &etl_kfam_tcp_connect4, &tcp_fail_fam, &etl_kfam_tcp_send6, &etl_kfam_tcp_generic6, &etl_kfam_tcp_connect6,
    &etl_kfam_udp, &etl_kfam_udp6, &udp_fail_fam,
    &etl_kfam_page_fault, &etl_kfam_hard_fault, &etl_kfam_virtual_alloc, &pf_hr_rundown_fam, &pf_hr_create_fam, &pf_hr_range_fam,
    &pf_hr_destroy_fam, &pf_backed_fam,
    &reg_v0_fam, &reg_v1_fam, &reg_v2_fam,
    &alpc_msg_fam, &alpc_wait_new_fam, &alpc_unwait_fam,
    &sc_cpu_fam, &sc_phydisk_fam, &sc_logdisk_fam, &sc_nic_fam, &sc_video_fam, &sc_services_fam, &sc_power_fam,
    &sc_network_fam, &sc_irq_fam, &sc_pnp_fam, &sc_ide_fam, &sc_platform_fam, &sc_dpi_fam, &sc_ci_fam,
    &sc_telemetry_fam, &sc_family_fam, &sc_flights_fam, &sc_processors_fam,
    &scx_build_fam, &scx_paths_fam, &scx_unknown_fam, &scx_volume_fam, &scx_family_fam, &winsat_fam,
    &iid_info_fam, &iid_none_fam, &iid_rsds_fam, &iid_ppdb_fam, &iid_determ_fam, &iid_version_fam,
    &lost_fam, &lid_build_id_fam, &lid_kallsyms_fam, &lid_module_fam, &lid_syscalls_fam,
};
const unsigned etl_kclass_family_count = (unsigned)N(etl_kclass_families);

const etl_kclass_version *etl_kclass_version_of(const etl_kclass_family *f, unsigned version)
{
    const etl_kclass_version *v = &f->versions[0];

    for (unsigned i = 1; i < f->version_count && f->versions[i].version <= version; i++) v = &f->versions[i];
    return v;
}

/* ---------------------------------------------------------------- the decoder's schemas */

int etl_decoder_add_builtin(etl_decoder *d)
{
    etl_schema_set set;
    char err[256];

    etl_schema_set_init(&set);
    for (unsigned p = 0; p < P_COUNT; p++)
        if (etl_schema_set_add_provider(&set, etl_kclass_provider_guid(p), providers[p].name, ETL_SCHEMA_KERNEL) != ETL_OK)
            goto fail;
    for (unsigned i = 0; i < etl_kclass_family_count; i++) {
        const etl_kclass_family *f = etl_kclass_families[i];
        for (unsigned o = 0; o < f->op_count; o++) {
            for (unsigned v = 0; v < f->version_count; v++) {
                etl_schema_event *e = etl_arena_alloc(&set.arena, sizeof *e);
                if (!e) goto fail;
                memset(e, 0, sizeof *e);
                e->provider = *etl_kclass_provider_guid(f->provider);
                e->key = ETL_KEY_OPCODE;
                e->version = f->versions[v].version;
                e->id = f->ops[o].opcode;
                e->source = ETL_SCHEMA_KERNEL;
                e->provider_name = providers[f->provider].name;
                e->task_name = f->task;
                e->opcode_name = f->ops[o].opcode_name;
                e->event_name = f->ops[o].event_name;
                e->field_count = f->versions[v].field_count;
                e->fields = f->versions[v].fields;
                if (etl_schema_set_add_event(&set, e, err, sizeof err) != ETL_OK) goto fail;
            }
        }
    }
    if (etl_decoder_adopt(d, &set) != ETL_OK) goto fail;
    return ETL_OK;
fail:
    etl_schema_set_free(&set);
    return ETL_FATAL;
}
