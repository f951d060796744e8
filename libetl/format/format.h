/* SPDX-License-Identifier: MIT */
/* The ETL format's bytes: layouts, constants, GUIDs, little-endian decoding, the XPRESS codec and
   the real-time stream's frames. The private header of libetl/format/ (no I/O here). */
#ifndef LIBETL_FORMAT_H
#define LIBETL_FORMAT_H
#ifndef ETL_BUILDING_LIBRARY
#error "format/format.h is private to libetl: include <etl.h>"
#endif

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "etl.h"

/* Little-endian loads and stores at any alignment (doc/format.md: all integers little-endian).
   On a little-endian host they are single unaligned moves: the encoders' stores must be whole
   words, or the copy of a staged record that follows stalls on store forwarding. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint16_t etl_le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t etl_le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t etl_le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void etl_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void etl_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void etl_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
#else
static inline uint16_t etl_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t etl_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t etl_le64(const uint8_t *p) { return etl_le32(p) | ((uint64_t)etl_le32(p + 4) << 32); }
static inline void etl_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void etl_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void etl_put64(uint8_t *p, uint64_t v) { etl_put32(p, (uint32_t)v); etl_put32(p + 4, (uint32_t)(v >> 32)); }
#endif
static inline int64_t etl_le64s(const uint8_t *p) { return (int64_t)etl_le64(p); }

/* GUID in the Windows layout (16 bytes). */
void etl_guid_read(const uint8_t *p, etl_guid *g);
void etl_guid_write(uint8_t *p, const etl_guid *g);

/* ---- WMI_BUFFER_HEADER (0x48 bytes), doc/format.md section 2 ---- */
#define ETL_BUFFER_HEADER_SIZE 0x48
#define ETL_BH_BUFFER_SIZE     0x00 /* u32: bytes the buffer occupies in the file */
#define ETL_BH_SAVED_OFFSET    0x04 /* u32 */
#define ETL_BH_CURRENT_OFFSET  0x08 /* u32 */
#define ETL_BH_REFERENCE_COUNT 0x0C /* i32 */
#define ETL_BH_TIMESTAMP       0x10 /* i64: flush time */
#define ETL_BH_SEQUENCE_NUMBER 0x18 /* i64 */
#define ETL_BH_CLOCK           0x20 /* u64: stale pointers in files; not interpreted */
#define ETL_BH_CLIENT_CONTEXT  0x28 /* u8 ProcessorNumber, u8 Alignment | u16 ProcessorIndex; u16 LoggerId */
#define ETL_BH_LOGGER_ID       0x2A /* u16 */
#define ETL_BH_STATE           0x2C /* u32 ETW_BUFFER_STATE */
#define ETL_BH_OFFSET          0x30 /* u32: used bytes, header included */
#define ETL_BH_BUFFER_FLAG     0x34 /* u16 */
#define ETL_BH_BUFFER_TYPE     0x36 /* u16 */
#define ETL_BH_REFERENCE_TIME  0x38 /* 16 bytes, not interpreted */

#define ETL_BUFFER_FLAG_FLUSH_MARKER 0x0001
#define ETL_BUFFER_FLAG_EVENTS_LOST  0x0002
#define ETL_BUFFER_FLAG_BUFFER_LOST  0x0004
#define ETL_BUFFER_FLAG_PROC_INDEX   0x0020
#define ETL_BUFFER_FLAG_COMPRESSED   0x0040

#define ETL_BUFFER_TYPE_GENERIC 0
#define ETL_BUFFER_TYPE_HEADER  4
#define ETL_BUFFER_TYPE_MAXIMUM 8

#define ETL_BUFFER_STATE_FLUSH 3

/* Limits of the logical buffer size (MIN/MAX_ETW_BUFFER_SIZE, doc/format.md section 1.1). */
#define ETL_MIN_BUFFER_SIZE 512u /* relogger header buffers are 512 bytes */
#define ETL_MAX_BUFFER_SIZE (16u * 1024 * 1024)

/* Decoded WMI_BUFFER_HEADER fields the reader uses. */
typedef struct etl_buffer_header {
    uint32_t buffer_size;
    uint32_t saved_offset;
    uint32_t offset;
    int64_t timestamp;
    int64_t sequence_number;
    uint16_t processor;    /* ProcessorIndex with PROC_INDEX, else ProcessorNumber */
    uint16_t logger_id;
    uint32_t state;
    uint16_t buffer_flag;
    uint16_t buffer_type;
} etl_buffer_header;

void etl_buffer_header_read(const uint8_t *p, etl_buffer_header *bh);

/* ---- Trace headers, doc/format.md section 4 ---- */
#define ETL_TRACE_HEADER_FLAG   0x80u /* bit 31 of the first dword */
#define ETL_HT_SYSTEM32     0x01
#define ETL_HT_SYSTEM64     0x02
#define ETL_HT_COMPACT32    0x03
#define ETL_HT_COMPACT64    0x04
#define ETL_HT_FULL32       0x0A
#define ETL_HT_INSTANCE32   0x0B
#define ETL_HT_TIMED        0x0C
#define ETL_HT_ERROR        0x0D
#define ETL_HT_WNODE        0x0E
#define ETL_HT_MESSAGE      0x0F
#define ETL_HT_PERFINFO32   0x10
#define ETL_HT_PERFINFO64   0x11
#define ETL_HT_EVENT32      0x12
#define ETL_HT_EVENT64      0x13
#define ETL_HT_FULL64       0x14
#define ETL_HT_INSTANCE64   0x15

#define ETL_SYSTEM_HEADER_SIZE   0x20
#define ETL_COMPACT_HEADER_SIZE  0x18
#define ETL_PERFINFO_HEADER_SIZE 0x10
#define ETL_CLASSIC_HEADER_SIZE  0x30
#define ETL_INSTANCE_HEADER_SIZE 0x48 /* EVENT_INSTANCE_GUID_HEADER */
#define ETL_OLD_INSTANCE_HEADER_SIZE 0x38 /* EVENT_INSTANCE_HEADER, layout version < 1.1 */
#define ETL_EVENT_HEADER_SIZE    0x50
#define ETL_MESSAGE_HEADER_SIZE  8

/* PERFINFO/SYSTEM Version word flags (section 4.3). */
#define ETL_TRACE_HEADER_PEBS_INDEX_FLAG 0x8000u
#define ETL_TRACE_HEADER_PMC_MASK        0x0700u
#define ETL_TRACE_HEADER_PMC_SHIFT       8

/* EVENT_HEADER flags. */
#define ETL_EVENT_HEADER_FLAG_EXTENDED_INFO 0x0001u

/* MESSAGE_TRACE_HEADER OptionFlags (section 4.7). */
#define ETL_MSG_SEQUENCE        0x0001u
#define ETL_MSG_GUID            0x0002u
#define ETL_MSG_COMPONENTID     0x0004u
#define ETL_MSG_TIMESTAMP       0x0008u
#define ETL_MSG_PERF_TIMESTAMP  0x0010u
#define ETL_MSG_SYSTEMINFO      0x0020u

/* The record alignment (DEFAULT_TRACE_ALIGNMENT). */
#define ETL_RECORD_ALIGN 8u
static inline uint32_t etl_align8(uint32_t n) { return (n + 7u) & ~7u; }

/* ---- Kernel groups and well-known GUIDs, section 4.10 ---- */
#define ETL_GROUP_HEADER   0x00
#define ETL_GROUP_DISK_IO  0x01
#define ETL_GROUP_PROCESS  0x03
#define ETL_GROUP_FILE_IO  0x04
#define ETL_GROUP_THREAD   0x05
#define ETL_GROUP_CONFIG   0x0B
#define ETL_GROUP_LBR      0x0C
#define ETL_GROUP_PERFINFO 0x0F
#define ETL_GROUP_IMAGE    0x14
#define ETL_GROUP_STACKWALK 0x18
#define ETL_GROUP_COUNT    0x1F

/* ---- Hooks (Group << 8 | Type) of the kernel classes libetl decodes (reader/kernel.c) and
   kernel capture writes (capture/; the header and version of each: etl_kcapture_form), as
   doc/format.md section 8 and perfview_diaghub.kernel.1.etl have them. LBR's is public
   (ETL_HOOK_LBR_SAMPLE, etl.h). ---- */
#define ETL_HOOK_HEADER             0x0000 /* EventTrace */
#define ETL_HOOK_HEADER_EXTENSION   0x0005
#define ETL_HOOK_RUNDOWN_COMPLETE   0x0008
#define ETL_HOOK_GROUP_MASKS_END    0x0020
#define ETL_HOOK_DISK_READ          0x010A /* DiskIo: Read 10 ... FlushInit 15 */
#define ETL_HOOK_DISK_WRITE         0x010B
#define ETL_HOOK_DISK_READ_INIT     0x010C
#define ETL_HOOK_DISK_WRITE_INIT    0x010D
#define ETL_HOOK_DISK_FLUSH         0x010E
#define ETL_HOOK_DISK_FLUSH_INIT    0x010F
/* PageFault (group 2), TypeGroup1 (VirtualAddress P, ProgramCounter P): a fault resolved
   without I/O as a new zero page, and one that read its page (a hard fault). */
#define ETL_HOOK_PAGE_FAULT_TRANSITION  0x020A
#define ETL_HOOK_PAGE_FAULT_DEMAND_ZERO 0x020B
#define ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE 0x020C
#define ETL_HOOK_PAGE_FAULT_GUARD       0x020D
#define ETL_HOOK_PAGE_FAULT_HARD        0x020E
#define ETL_HOOK_PAGE_FAULT_ACCESS_VIOLATION 0x020F
/* TcpIp (group 6) and UdpIp (group 8), version 2: the IPv4 forms (Send 10 .. Reconnect 16) and
   the IPv6 ones (26 .. 32); PID u32, size u32, daddr, saddr (4 or 16 bytes), dport, sport (u16,
   network order), then SendIPV4/6 startime u32, endtime u32; Connect and Accept mss, sackopt,
   tsopt, wsopt u16, rcvwin u32, rcvwinscale, sndwinscale s16; then seqnum u32, connid P. */
#define ETL_HOOK_TCPIP_SEND         0x060A
#define ETL_HOOK_TCPIP_RECV         0x060B
#define ETL_HOOK_TCPIP_CONNECT      0x060C
#define ETL_HOOK_TCPIP_DISCONNECT   0x060D
#define ETL_HOOK_TCPIP_RETRANSMIT   0x060E
#define ETL_HOOK_TCPIP_ACCEPT       0x060F
#define ETL_HOOK_TCPIP_RECONNECT    0x0610
#define ETL_HOOK_TCPIP_TCP_COPY     0x0612 /* (decoded, not written) */
#define ETL_HOOK_TCPIP_IPV6         0x0010 /* added to an IPv4 hook (+16): its IPv6 form, SendIPV6 0x061A ... */
#define ETL_HOOK_UDPIP_SEND         0x080A
#define ETL_HOOK_UDPIP_RECV         0x080B
/* FileIo (group 4), version 3 (doc/format.md section 8.9): a file's name (Name 0, FileRundown 36:
   FileObject P (the FileKey), FileName W), each operation at its start (Create 64, Cleanup 65,
   Close 66, Read 67, Write 68, SetInfo 69, Delete 70, Rename 71, DirEnum 72, Flush 73,
   QueryInfo 74, FSControl 75) and its end (OperationEnd 76: IrpPtr P, ExtraInfo P, NtStatus). */
#define ETL_HOOK_FILEIO_NAME        0x0400
#define ETL_HOOK_FILEIO_RUNDOWN     0x0424
#define ETL_HOOK_FILEIO_CREATE      0x0440
#define ETL_HOOK_FILEIO_DIR_NOTIFY  0x044D
#define ETL_HOOK_FILEIO_OP_END      0x044C
/* virtual_alloc: PageFault VirtualAlloc (98) and VirtualFree (99), version 2: BaseAddress P,
   RegionSize P, ProcessId u32, Flags u32 (MEM_COMMIT 0x1000, MEM_RESERVE 0x2000, MEM_RELEASE
   0x8000). vamap: FileIo MapFile (37) and UnmapFile (38), version 3: ViewBase P, FileKey P,
   MiscInfo u64, ViewSize P, ByteOffset u64, ProcessId u32; FileIo Name (0), version 2:
   FileObject P, FileName W (the name of a FileKey). */
#define ETL_HOOK_VIRTUAL_ALLOC      0x0262
#define ETL_HOOK_VIRTUAL_FREE       0x0263
#define ETL_HOOK_MAP_FILE           0x0425
#define ETL_HOOK_UNMAP_FILE         0x0426
#define ETL_HOOK_MAP_FILE_DCSTART   0x0427
#define ETL_HOOK_MAP_FILE_DCEND     0x0428
#define ETL_HOOK_FILEIO_NAME        0x0400
#define ETL_MEM_COMMIT              0x1000u
#define ETL_MEM_RESERVE             0x2000u
#define ETL_MEM_DECOMMIT            0x4000u
#define ETL_MEM_RELEASE             0x8000u
/* memory_hard_faults: PageFault HardFault (32), version 2, a PERFINFO header (no thread in it):
   InitialTime u64 (when the fault began), ReadOffset u64 (where in the file its read began),
   VirtualAddress P, FileObject P (the FileKey: FileIo Name names it), TThreadId u32, ByteCount
   u32 (bytes read from ReadOffset). */
#define ETL_HOOK_PAGE_FAULT_HARD_FAULT 0x0220
#define ETL_HOOK_PROCESS_START      0x0301 /* Process */
#define ETL_HOOK_PROCESS_END        0x0302
#define ETL_HOOK_PROCESS_DCSTART    0x0303
#define ETL_HOOK_PROCESS_DCEND      0x0304
#define ETL_HOOK_PROCESS_LOAD_IMAGE 0x030A /* an Image Load, presented under the ImageLoad GUID */
#define ETL_HOOK_PROCESS_DEFUNCT    0x0327
/* process_counters: Process PerfCtr (32) and PerfCtrRundown (33), version 2: ProcessId,
   PageFaultCount, HandleCount, Reserved (u32 each), then 11 SIZE_T: PeakVirtualSize,
   PeakWorkingSetSize, PeakPagefileUsage, QuotaPeakPagedPoolUsage, QuotaPeakNonPagedPoolUsage,
   VirtualSize, WorkingSetSize, PagefileUsage, QuotaPagedPoolUsage, QuotaNonPagedPoolUsage,
   PrivatePageCount. */
#define ETL_HOOK_PROCESS_PERF_CTR   0x0320
#define ETL_HOOK_PROCESS_PERF_CTR_RUNDOWN 0x0321
#define ETL_HOOK_THREAD_START       0x0501 /* Thread */
#define ETL_HOOK_THREAD_END         0x0502
#define ETL_HOOK_THREAD_DCSTART     0x0503
#define ETL_HOOK_THREAD_DCEND       0x0504
#define ETL_HOOK_CSWITCH            0x0524
#define ETL_HOOK_READY_THREAD       0x0532
#define ETL_HOOK_THREAD_SET_NAME    0x0548 /* Thread/SetName (72): ProcessId, TThreadId, ThreadName W */
/* SystemConfig/CPU (group 0x0B, type 10), version 3: the machine (MHz, processors, memory,
   page size, ComputerName W[256], DomainName W[134], ...; doc/format.md section 8). */
#define ETL_HOOK_SYSCONFIG_CPU      0x0B0A
/* SystemConfig PhyDisk (11), LogDisk (12), NIC (13), version 2 (their layouts: kclasses.c). */
#define ETL_HOOK_SYSCONFIG_PHYDISK  0x0B0B
#define ETL_HOOK_SYSCONFIG_LOGDISK  0x0B0C
#define ETL_HOOK_SYSCONFIG_NIC      0x0B0D
#define ETL_HOOK_SAMPLED_PROFILE    0x0F2E /* PerfInfo */
#define ETL_HOOK_PMC_SAMPLE         0x0F2F /* a PMC interrupt (an LBR trigger's sample) */
#define ETL_HOOK_SYSCALL_ENTER      0x0F33
#define ETL_HOOK_SYSCALL_EXIT       0x0F34
/* Interrupts and deferred procedure calls, each written at its end with its start (InitialTime,
   the trace's clock): ISR (InitialTime, Routine P, ReturnValue u8, Vector u8, Reserved u16),
   DPC, ThreadedDPC and TimerDPC (InitialTime, Routine P). */
#define ETL_HOOK_THREADED_DPC       0x0F42
#define ETL_HOOK_ISR                0x0F43
#define ETL_HOOK_DPC                0x0F44
#define ETL_HOOK_TIMER_DPC          0x0F45
/* SampledProfileInterval: a profile source's interval (Source, NewInterval, OldInterval in
   100 ns units; version 3 adds SourceName), when it is set and at the start and end of a
   session's collection. */
#define ETL_HOOK_PROFILE_SET_INTERVAL      0x0F48
#define ETL_HOOK_PROFILE_COLLECTION_START  0x0F49
#define ETL_HOOK_PROFILE_COLLECTION_END    0x0F4A
#define ETL_HOOK_IMAGE_UNLOAD       0x1402 /* Image */
#define ETL_HOOK_IMAGE_DCSTART      0x1403
#define ETL_HOOK_IMAGE_DCEND        0x1404
#define ETL_HOOK_IMAGE_LOAD         0x140A /* the Image group's own form of 0x030A */
/* StackWalk events whose payload starts with the raw-clock timestamp of the event they belong to
   (doc/format.md section 8.6). */
#define ETL_HOOK_STACKWALK_STACK    0x1820
#define ETL_HOOK_STACKWALK_KEY_DELETE  0x1823
#define ETL_HOOK_STACKWALK_KEY_RUNDOWN 0x1824
#define ETL_HOOK_STACKWALK_KEY_KERNEL  0x1825
#define ETL_HOOK_STACKWALK_KEY_USER    0x1826

/* GUID of a kernel group (NULL for groups >= 0x1F). */
const etl_guid *etl_group_guid(unsigned group);
extern const etl_guid etl_guid_event_trace; /* 68fdd900-4a3e-11d1-84f4-0000f80464e3 */

/* ---- LinuxImageID: libetl's own classic event class (doc/format.md section 8.9): what
   symbolizing a Linux capture needs, written by capture/ (doc/kernel-events.md) ---- */
extern const etl_guid etl_guid_linux_image_id; /* f6235471-690f-4985-a25e-2d98bc959197 */
#define ETL_LINUX_IMAGE_ID_VERSION        0
#define ETL_LINUX_IMAGE_ID_BUILD_ID       0 /* ImageBase P, ImageSize P, ProcessId u32, FileOffset u64,
                                               BuildIdSize u16, BuildId, FileName A */
#define ETL_LINUX_IMAGE_ID_KERNEL_SYMBOLS 1 /* Sequence u32, Text A (whole lines of /proc/kallsyms) */
#define ETL_LINUX_IMAGE_ID_KERNEL_MODULE  2 /* ImageBase P, ImageSize P, BuildIdSize u16, BuildId, Name A */
#define ETL_LINUX_IMAGE_ID_SYSTEM_CALLS   3 /* Machine u16 (ELF e_machine), Count u16, Names A[Count]: the
                                               name of system call number i (SysClEnter's
                                               SysCallAddress), "" for an unused number */

/* ---- TRACE_LOGFILE_HEADER, section 3.2 (offsets for the 32-bit / 64-bit forms) ---- */
#define ETL_TLH_BUFFER_SIZE        0x00
#define ETL_TLH_VERSION            0x04
#define ETL_TLH_PROVIDER_VERSION   0x08
#define ETL_TLH_NUMBER_OF_PROCESSORS 0x0C
#define ETL_TLH_END_TIME           0x10
#define ETL_TLH_TIMER_RESOLUTION   0x18
#define ETL_TLH_MAXIMUM_FILE_SIZE  0x1C
#define ETL_TLH_LOG_FILE_MODE      0x20
#define ETL_TLH_BUFFERS_WRITTEN    0x24
#define ETL_TLH_START_BUFFERS      0x28
#define ETL_TLH_POINTER_SIZE       0x2C
#define ETL_TLH_EVENTS_LOST        0x30
#define ETL_TLH_CPU_SPEED          0x34
#define ETL_TLH_LOGGER_NAME        0x38
#define ETL_TLH_TIME_ZONE(p)       ((p) == 8 ? 0x48 : 0x40)
#define ETL_TLH_BOOT_TIME(p)       ((p) == 8 ? 0xF8 : 0xF0)
#define ETL_TLH_PERF_FREQ(p)       ((p) == 8 ? 0x100 : 0xF8)
#define ETL_TLH_START_TIME(p)      ((p) == 8 ? 0x108 : 0x100)
#define ETL_TLH_RESERVED_FLAGS(p)  ((p) == 8 ? 0x110 : 0x108)
#define ETL_TLH_BUFFERS_LOST(p)    ((p) == 8 ? 0x114 : 0x10C)
#define ETL_TLH_SIZE(p)            ((p) == 8 ? 0x118u : 0x110u)
#define ETL_TIME_ZONE_INFORMATION_SIZE 0xAC

/* ---- TraceLogging's metadata (EVENT_SCHEMA_TL and PROV_TRAITS items), doc/format.md section 18.3 ---- */
#define ETL_TLG_CHANNEL            11   /* the channel TraceLogging events are written on */
#define ETL_TLG_IN_TYPE_MASK       0x1F /* in type byte: the type (enum etl_in_type 1..25) */
#define ETL_TLG_IN_CCOUNT          0x20 /*   a constant count: u16 in the metadata */
#define ETL_TLG_IN_VCOUNT          0x40 /*   a variable count: u16 in the data before the elements */
#define ETL_TLG_IN_CUSTOM          0x60 /*   a custom serializer: u16 size and schema bytes in the metadata */
#define ETL_TLG_IN_COUNT_MASK      0x60
#define ETL_TLG_IN_CHAIN           0x80 /*   an out type byte follows */
#define ETL_TLG_IN_POINTER_UNSUPPORTED 16 /* written by old compilers for pointers: the event's size */
#define ETL_TLG_OUT_TYPE_MASK      0x7F /* out type byte: the type, or a struct's member count */
#define ETL_TLG_OUT_CHAIN          0x80 /*   a field tag follows (up to 4 chained bytes) */
/* The out types (ETL_TLG_OUT_*) are public: enum etl_tlg_out, etl/provider.h. */
#define ETL_TLG_TRAIT_PROVIDER_GROUP 1 /* a provider trait: the provider group's GUID */

/* ---- Record decoding ---- */

/* What decoding one record found. */
enum etl_record_result {
    ETL_RECORD_OK = 0,
    ETL_RECORD_END = 1,      /* 0xFFFFFFFF fill: no more records in this buffer */
    ETL_RECORD_BAD = -1      /* damaged: the rest of the buffer cannot be walked */
};

/* Context a record needs from its file. */
typedef struct etl_record_context {
    int old_instance_header; /* layout version < 1.1: type 0x0B is EVENT_INSTANCE_HEADER */
} etl_record_context;

/*
 * Decode the record at p, with avail bytes left before the buffer's used size, into ev
 * (header fields, payload and extended item views; not cpu, buffer_* or record_offset).
 * Returns ETL_RECORD_OK and *step = bytes to the next record (size rounded up to 8),
 * ETL_RECORD_END, or ETL_RECORD_BAD with *why set to a static explanation.
 * Checks every size against avail; never reads beyond it.
 */
int etl_record_decode(const etl_record_context *ctx, const uint8_t *p, uint32_t avail,
                      etl_event *ev, uint32_t *step, const char **why);

/*
 * The timestamp of the record at p (which etl_record_decode accepted or will examine), cheaply,
 * for ordering. Returns 1 and *ts when the record carries one, 0 when it has none (a WPP
 * message without a timestamp) or cannot be examined (decoding will report why).
 */
int etl_record_peek_timestamp(const uint8_t *p, uint32_t avail, int64_t *ts);

/* Most raw-clock timestamp fields one record holds: its header's and one in its payload. */
#define ETL_RECORD_TIMESTAMP_FIELDS 2

/*
 * Where the decoded record ev (from etl_record_decode) keeps raw-clock timestamps
 * (doc/format.md section 5.1): the offsets from ev->record of its trace header's TimeStamp,
 * when it has one (a WPP message may not), and of the payload field that repeats the clock
 * in StackWalk stacks and stack-key references (EventTimeStamp) and in LBR events
 * (TimeStamp). Returns how many offsets it wrote to off (0 to ETL_RECORD_TIMESTAMP_FIELDS);
 * each names 8 bytes inside the record.
 */
unsigned etl_record_timestamp_fields(const etl_event *ev, uint32_t off[ETL_RECORD_TIMESTAMP_FIELDS]);

/* UTF-16LE (n code units at most, stops at NUL) to UTF-8 in out (size bytes, always
   NUL-terminated). Invalid surrogates become U+FFFD. Returns the number of code units read,
   including the terminator if one was found. */
size_t etl_utf16_to_utf8(const uint8_t *p, size_t n, char *out, size_t size);
/* The code point at UTF-16LE unit *i of p (n units), a surrogate pair joined (an unpaired
   surrogate is U+FFFD); *i moves past it. */
uint32_t etl_utf16_next(const uint8_t *p, size_t n, size_t *i);
/* Code point c as UTF-8 in out; returns its length (1 to 4). */
unsigned etl_utf8_encode(uint32_t c, uint8_t out[4]);
/* UTF-8 s to UTF-16LE at p, NUL-terminated, max_units code units at most (the NUL included;
   at least 4); returns the bytes written. Invalid bytes become U+FFFD. */
uint32_t etl_utf8_to_utf16(uint8_t *p, const char *s, uint32_t max_units);

/* ---- XPRESS: the plain LZ77 codec (MS-XCA 2.3/2.4) of compressed ETL buffers (xpress.c) ---- */

/* Status of etl_xpress_decompress. */
enum etl_xpress_status {
    ETL_XPRESS_OK = 0,
    ETL_XPRESS_TRUNCATED = -1,  /* input ended in the middle of a flag word, literal, or match */
    ETL_XPRESS_BAD_OFFSET = -2, /* a match refers to before the start of the output */
    ETL_XPRESS_OVERFLOW = -3,   /* output would exceed out_cap */
    ETL_XPRESS_BAD_LENGTH = -4  /* a 16/32-bit length escape is below 22 (MS-XCA 2.4.4 "Return error") */
};

/* Decompress a plain LZ77 (MS-XCA 2.3/2.4, "XPRESS") stream of in_len bytes into out (capacity
   out_cap). On success returns ETL_XPRESS_OK and *out_len = bytes produced. On error returns the
   status and *err_pos = offset in the INPUT where the bad element starts, and *out_len = bytes
   produced so far (all valid). Never reads in[] beyond in_len or writes out[] beyond out_cap.
   The stream ends normally when the input is exhausted where the next element (flag word,
   literal or match) would start. Bytes of out[] past *out_len (but below out_cap) may be
   overwritten with scratch data. */
int etl_xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                          size_t *out_len, size_t *err_pos);

/* A short English description of a status ("stream ends early"). */
const char *etl_xpress_strerror(int status);

/* Largest output etl_xpress_compress can produce for n input bytes. */
size_t etl_xpress_compress_bound(size_t n);

/* Compress n bytes into out (cap >= etl_xpress_compress_bound(n)); returns the compressed size,
   or 0 if cap is smaller than etl_xpress_compress_bound(n). The output decodes with any
   conforming MS-XCA plain LZ77 decoder; it ends with the all-ones flag padding of MS-XCA 2.3.
   Thread-safe; uses about 48 KiB of stack and no heap. */
size_t etl_xpress_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

/* ---- Growing arrays ----
 * Room for need elements of elem bytes in the array *p of *cap elements: doubled from 16 (or
 * *cap) until it holds need. 0, or -1 without memory or when the size would overflow; *p and
 * *cap are unchanged on failure. */
int etl_grow(void **p, size_t *cap, size_t need, size_t elem);

/* ---- Error messages into a caller's buffer ----
 * The message fmt gives into err (errsize bytes, cut short when too small; nothing when err is
 * NULL or errsize 0); returns ETL_FAILED. etl_vfail_at writes "NAME:LINE: message" (a line of
 * the text file name, as XML parsers count them). */
int etl_fail(char *err, size_t errsize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int etl_vfail_at(char *err, size_t errsize, const char *name, long line, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* ---- The real-time stream (doc/format.md section 14) ----
 * What a session in real-time mode sends its consumer once it has
 * answered "ok" to the request "consume" (doc/etlrecord-design.md, "Real-time mode as built").
 * Frames, each a 12-byte head (magic, kind, length: little-endian 32-bit) and length bytes:
 * one HEADER (the logfile header buffer, up to its used size), then a BUFFER per data buffer
 * (its WMI_BUFFER_HEADER filled, up to its used size), then END (the final statistics as
 * "KEY VALUE" lines) when the session stopped and every buffer was acknowledged. The
 * consumer acknowledges the buffers it has taken with a little-endian 32-bit count (one per
 * batch); a buffer leaves the session's held queue only then.
 */
#define ETL_RT_MAGIC 0x31525445u /* "ETR1" */
#define ETL_RT_FRAME_HEAD 12u
#define ETL_RT_END_MAX 4096u     /* the END frame's text */

enum { ETL_RT_HEADER = 1, ETL_RT_BUFFER = 2, ETL_RT_END = 3 };

#endif /* LIBETL_FORMAT_H */
