/* SPDX-License-Identifier: MIT */
/* libetl public API, decoding of the NT Kernel Logger's event classes (LBR samples included) and the image map. */
#ifndef LIBETL_ETL_KERNEL_H
#define LIBETL_ETL_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- LBR (last branch record) events, doc/format.md section 8.8 ---- */

/* The LBR sample event: group 0x0C (GUID 99134383-5248-43fc-834b-529454e75df3), type 0x20. */
#define ETL_HOOK_LBR_SAMPLE 0x0C20
/* LbrFilterFlags (EVNTRACE_LBR_FILTER_*), as TraceConfigureLastBranchRecord takes them. */
#define ETL_LBR_FILTER_KERNEL         0x001u
#define ETL_LBR_FILTER_USER           0x002u
#define ETL_LBR_FILTER_JCC            0x004u
#define ETL_LBR_FILTER_NEAR_REL_CALL  0x008u
#define ETL_LBR_FILTER_NEAR_IND_CALL  0x010u
#define ETL_LBR_FILTER_NEAR_RET       0x020u
#define ETL_LBR_FILTER_NEAR_IND_JMP   0x040u
#define ETL_LBR_FILTER_NEAR_REL_JMP   0x080u
#define ETL_LBR_FILTER_FAR_BRANCH     0x100u
#define ETL_LBR_CALLSTACK             0x200u

/* One branch (ETW_LBR_ENTRY). */
typedef struct etl_lbr_entry {
    uint64_t from;
    uint64_t to;
    uint64_t reserved;
} etl_lbr_entry;

/* A decoded LBR event (LBR_TRACE_EVENT_DATA); the entries stay in the record. */
typedef struct etl_lbr {
    int64_t timestamp;   /* of the event that triggered it (raw clock) */
    uint32_t pid, tid;
    uint32_t filters;    /* ETL_LBR_FILTER_* and ETL_LBR_CALLSTACK */
    unsigned count;      /* entries, most recent branch first */
    unsigned pointer_size;
    const uint8_t *entries;
} etl_lbr;

/* Decodes an LBR event into *out: 1 when ev is one, 0 when it is not an LBR event, and
   ETL_FAILED when it is one whose payload is malformed (not header + whole entries). */
ETL_API int etl_lbr_decode(const etl_event *ev, etl_lbr *out);
/* The index-th entry of a decoded LBR event. */
ETL_API etl_lbr_entry etl_lbr_entry_at(const etl_lbr *lbr, unsigned index);

/* ---- Kernel event classes decoded into typed records (doc/format.md section 8) ---- */

/*
 * The NT Kernel Logger's event classes, recognised by their hook (Group << 8 | Type) in
 * SYSTEM and PERFINFO headers, decoded from the payload in both pointer sizes (the record's
 * own header type says which) and in every version real files carry: doc/kernel-events.md
 * gives each layout and where it comes from. Every field points into the record or is
 * copied from it: the result is valid as long as the event it came from.
 */
enum etl_kclass {
    ETL_KCLASS_NONE = 0,
    ETL_KCLASS_PROCESS,          /* Process: Start 1, End 2, DCStart 3, DCEnd 4, Defunct 39 */
    ETL_KCLASS_THREAD,           /* Thread: Start 1, End 2, DCStart 3, DCEnd 4 */
    ETL_KCLASS_IMAGE,            /* Image: Load 10 (hook 0x030A), Unload 2, DCStart 3, DCEnd 4 */
    ETL_KCLASS_CSWITCH,          /* Thread 36 (0x0524) */
    ETL_KCLASS_READY_THREAD,     /* Thread 50 (0x0532) */
    ETL_KCLASS_SAMPLED_PROFILE,  /* PerfInfo 46 (0x0F2E) SampleProf, 47 (0x0F2F) PMCSample */
    ETL_KCLASS_STACK,            /* StackWalk 32 (0x1820): a stack and its frames */
    ETL_KCLASS_STACK_KEY,        /* StackWalk 37/38 (0x1825 kernel, 0x1826 user): a stack by its key */
    ETL_KCLASS_STACK_KEY_DEF,    /* StackWalk 35/36 (0x1823 delete, 0x1824 rundown): a key's frames */
    ETL_KCLASS_TRACE_HEADER,     /* EventTrace 0 (0x0000): a logfile header as an event */
    ETL_KCLASS_GROUP_MASKS,      /* EventTrace 5 / 32 (0x0005 extension, 0x0020 end extension) */
    ETL_KCLASS_RUNDOWN_COMPLETE, /* EventTrace 8 (0x0008) */
    ETL_KCLASS_LBR,              /* LBR 32 (0x0C20), as etl_lbr_decode */
    ETL_KCLASS_DISK_IO,          /* DiskIo completions: Read 10, Write 11, FlushBuffers 14 (0x010A, 0x010B, 0x010E) */
    ETL_KCLASS_DISK_IO_INIT,     /* DiskIo issues: ReadInit 12, WriteInit 13, FlushInit 15 (0x010C, 0x010D, 0x010F) */
    ETL_KCLASS_SYSCALL_ENTER,    /* PerfInfo 51 (0x0F33) */
    ETL_KCLASS_SYSCALL_EXIT,     /* PerfInfo 52 (0x0F34) */
    ETL_KCLASS_ISR,              /* PerfInfo 67 (0x0F43) ISR */
    ETL_KCLASS_DPC,              /* PerfInfo 66 ThreadedDPC, 68 DPC, 69 TimerDPC (0x0F42, 0x0F44, 0x0F45) */
    ETL_KCLASS_PAGE_FAULT,       /* PageFault 10..15 (0x020A..0x020F): Transition, DemandZero, CopyOnWrite,
                                    GuardPage, HardPage, AccessViolation */
    ETL_KCLASS_TCPIP,            /* TcpIp 10..16 (IPv4) and 26..32 (IPv6), version 2 (0x060A..0x0620): Send,
                                    Recv, Connect, Disconnect, Retransmit, Accept, Reconnect; UdpIp 10, 11,
                                    26, 27 (0x080A, 0x080B, 0x081A, 0x081B): Send, Recv */
    ETL_KCLASS_FILE_IO,          /* FileIo (group 4): Name 0, FileCreate 32, FileDelete 35, FileRundown 36,
                                    Create 64 ... FSControl 75, OperationEnd 76, DirNotify 77 (versions 2, 3) */
    ETL_KCLASS_VIRTUAL_ALLOC,    /* PageFault 98 VirtualAlloc, 99 VirtualFree (0x0262, 0x0263) */
    ETL_KCLASS_MAP_FILE,         /* FileIo 37 MapFile, 38 UnmapFile, 39 MapFileDCStart, 40 MapFileDCEnd
                                    (0x0425..0x0428) */
    ETL_KCLASS_PROCESS_COUNTERS, /* Process 32 PerfCtr, 33 PerfCtrRundown (0x0320, 0x0321) */
    ETL_KCLASS_HARD_FAULT        /* PageFault 32 HardFault (0x0220) */
};
#define ETL_KCLASS_COUNT (ETL_KCLASS_HARD_FAULT + 1)
/* "process", "thread", "image", "cswitch", "ready_thread", "sampled_profile", "stack",
   "stack_key", "stack_key_def", "trace_header", "group_masks", "rundown_complete", "lbr",
   "disk_io", "disk_io_init", "syscall_enter", "syscall_exit", "isr", "dpc", "page_fault", "tcpip", "file_io",
   "virtual_alloc", "map_file", "process_counters", "hard_fault";
   "none" for ETL_KCLASS_NONE, "unknown" otherwise. */
ETL_API const char *etl_kclass_name(int kclass);

/* A string inside a record, without its terminator: 8-bit (ANSI) or UTF-16LE. */
typedef struct etl_string {
    const uint8_t *data;      /* NULL when the record does not carry it */
    uint32_t size;            /* bytes */
    uint8_t utf16;            /* 1: UTF-16LE code units; 0: 8-bit characters */
} etl_string;
/* Writes s as UTF-8 into out (NUL-terminated when size > 0, cut at a character boundary):
   UTF-16 surrogate pairs are joined and unpaired ones become U+FFFD; 8-bit strings pass
   through when they are valid UTF-8, else each byte is taken as Windows-1252. Returns the
   length of the whole conversion (without the NUL), as snprintf does. */
ETL_API size_t etl_string_to_utf8(const etl_string *s, char *out, size_t size);
/* Writes a binary SID (revision, count, authority, sub-authorities) as "S-1-5-18" into out;
   returns out, or "" in out when sid is not a whole SID. */
ETL_API char *etl_sid_format(const uint8_t *sid, uint32_t size, char *out, size_t out_size);

typedef struct etl_kprocess {
    uint64_t unique_process_key;    /* the EPROCESS address (version 2+; PageDirectoryBase in 1) */
    uint32_t pid, parent_pid;
    uint32_t session_id;            /* version 1+ */
    int32_t exit_status;            /* version 1+ */
    uint64_t directory_table_base;  /* version 3+ */
    uint32_t flags;                 /* version 4+: 1 APPLICATION_ID, 2 WOW64, 4 PROTECTED, 8 PACKAGED */
    const uint8_t *sid;             /* the user's SID (binary), or NULL */
    uint32_t sid_size;
    etl_string image_file_name;     /* 8-bit */
    etl_string command_line;        /* UTF-16, version 2+ */
    etl_string package_full_name;   /* UTF-16, version 4+ */
    etl_string application_id;      /* UTF-16, version 4+ */
} etl_kprocess;

typedef struct etl_kthread {
    uint32_t pid, tid;
    uint64_t stack_base, stack_limit;         /* kernel stack (version 1 End events: 0) */
    uint64_t user_stack_base, user_stack_limit;
    uint64_t start_address;                   /* StartAddr (version 1 too, per its MOF class) */
    uint64_t win32_start_address;
    uint64_t teb_base;                        /* version 2+ */
    uint32_t sub_process_tag;                 /* version 2+ */
    uint8_t base_priority, page_priority, io_priority, thread_flags; /* version 3+ */
    etl_string name;                          /* UTF-16, version 4+ when present */
} etl_kthread;

typedef struct etl_kimage {
    uint64_t image_base, image_size;
    uint32_t pid;
    uint32_t checksum, time_date_stamp;       /* version 2+ */
    uint8_t signature_level, signature_type;  /* version 3+ */
    uint64_t default_base;                    /* version 2+ */
    etl_string file_name;                     /* UTF-16, an NT path ("\Device\HarddiskVolume2\...") */
} etl_kimage;

typedef struct etl_kcswitch {
    uint32_t new_tid, old_tid;
    int8_t new_thread_priority, old_thread_priority;
    uint8_t previous_cstate;
    int8_t spare_byte;
    uint8_t old_thread_wait_reason;           /* KWAIT_REASON */
    uint8_t old_thread_wait_mode;             /* bit 0: user mode */
    uint8_t old_thread_state;                 /* KTHREAD_STATE */
    uint8_t old_thread_wait_ideal_processor;
    uint32_t new_thread_wait_time;
    int32_t old_thread_remaining_quantum;
} etl_kcswitch;

typedef struct etl_kready_thread {
    uint32_t tid;                 /* the thread made ready */
    int8_t adjust_reason, adjust_increment;
    uint8_t flags;
} etl_kready_thread;

typedef struct etl_ksample {
    uint64_t instruction_pointer;
    uint32_t tid;
    uint16_t count;
    uint8_t flags;                /* bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3..7 priority */
    uint8_t rank;
    uint16_t profile_source;      /* KPROFILE_SOURCE: 0 (ProfileTime) for SampleProf; a PMCSample's
                                     counter (6 branch instructions, ...), whose count, flags and rank are 0 */
} etl_ksample;

/* DiskIo: a completion (Read, Write, FlushBuffers) or an issue (ReadInit, WriteInit,
   FlushInit). An issue carries only irp and issuing_tid; a flush has no transfer_size,
   byte_offset or file_object (0). */
typedef struct etl_kdisk_io {
    uint32_t disk_number;
    uint32_t irp_flags;           /* IRP_* bits; bits 17..19: the I/O priority (0: not set) */
    uint32_t transfer_size;       /* bytes */
    int64_t byte_offset;          /* from the start of the disk */
    uint64_t file_object;
    uint64_t irp;                 /* the request: the same in its issue and its completion */
    uint64_t high_res_response_time; /* issue to completion, in ticks of the trace's clock */
    uint32_t issuing_tid;         /* version 3+ (0 in older records) */
} etl_kdisk_io;

/* PerfInfo SysClEnter (address) and SysClExit (nt_status). The PERFINFO header names no
   thread: it is the one running on the processor (the last CSwitch's new thread). */
typedef struct etl_ksyscall {
    uint64_t address;             /* SysClEnter: the system call's address */
    uint32_t nt_status;           /* SysClExit: its NTSTATUS */
} etl_ksyscall;

/* PerfInfo ISR and DPC events, written at the routine's end: it ran from initial_time (the
   trace's raw clock) to the event's timestamp. */
typedef struct etl_kisr_dpc {
    int64_t initial_time;         /* raw clock of the routine's start */
    uint64_t routine;             /* its address */
    uint32_t return_value;        /* ISR: TRUE when the interrupt was its device's */
    uint8_t vector;               /* ISR (version 2+): the interrupt vector */
} etl_kisr_dpc;

/* PageFault TypeGroup1: the faulting address and the instruction that faulted; the event's
   name says what kind of fault it was. */
typedef struct etl_kpage_fault {
    uint64_t virtual_address;
    uint64_t program_counter;
} etl_kpage_fault;

/* TcpIp and UdpIp events: a connection's or datagram's ends, size and process; the event's name
   says what happened (TcpIp/Send, TcpIp/RecvIPV6, UdpIp/Send, ...). */
typedef struct etl_ktcpip {
    uint32_t pid;                 /* PID: the process of the connection (UINT32_MAX: not known) */
    uint32_t size;                /* bytes sent or received */
    uint8_t daddr[16], saddr[16]; /* as in the payload (network order); IPv4: the first 4 bytes */
    uint16_t dport, sport;
    uint8_t ip_version;           /* 4 or 6 */
    uint8_t protocol;             /* 6 (TcpIp) or 17 (UdpIp) */
    uint32_t seqnum;
    uint64_t connid;              /* the connection's id, the same in all its events */
    uint32_t startime, endtime;   /* SendIPV4/6 */
    uint16_t mss, sackopt, tsopt, wsopt; /* Connect, Accept */
    uint32_t rcvwin;
    int16_t rcvwinscale, sndwinscale;
} etl_ktcpip;

/* The source (saddr) or destination (daddr) address of t as text ("127.0.0.1", "::1") into out
   (ETL_KTCPIP_ADDR_SIZE bytes suffice); returns out. */
#define ETL_KTCPIP_ADDR_SIZE 46
ETL_API char *etl_ktcpip_addr_format(const etl_ktcpip *t, int source, char *out, size_t size);
/* FileIo events: what each holds (0 and an empty name where its class has no such field). A
   Name, FileCreate, FileDelete or FileRundown names the file of file_key (its FileObject field,
   which is the FileKey since Windows 8 [TE FileIONameTraceData]). */
typedef struct etl_kfile_io {
    uint64_t irp;                 /* IrpPtr: an operation and its OperationEnd share it */
    uint64_t file_object, file_key;
    uint64_t offset;              /* Read, Write */
    uint64_t extra_info;          /* Info: ExtraInfo; OperationEnd: the bytes moved, or the like */
    uint32_t ttid;                /* the thread that asked */
    uint32_t io_size, io_flags;   /* Read, Write */
    uint32_t info_class;          /* Info, DirEnum */
    uint32_t length, file_index;  /* DirEnum */
    uint32_t create_options, file_attributes, share_access; /* Create */
    uint32_t nt_status;           /* OperationEnd */
    etl_string file_name;         /* UTF-16: Name's FileName, Create's OpenPath, DirEnum's pattern */
} etl_kfile_io;
/* PageFault VirtualAlloc and VirtualFree: a region of a process's address space reserved,
   committed, decommitted or released (flags: MEM_COMMIT 0x1000, MEM_RESERVE 0x2000,
   MEM_DECOMMIT 0x4000, MEM_RELEASE 0x8000, as VirtualAlloc's and VirtualFree's). */
typedef struct etl_kvirtual_alloc {
    uint64_t base_address;
    uint64_t region_size;
    uint32_t pid;                 /* the process whose address space it is */
    uint32_t flags;
} etl_kvirtual_alloc;

/* FileIo MapFile, UnmapFile and their rundown: a view of a file mapped into a process. */
typedef struct etl_kmap_file {
    uint64_t view_base;
    uint64_t file_key;            /* the file (FileIo Name and FileRundown name its keys) */
    uint64_t misc_info;
    uint64_t view_size;
    uint64_t byte_offset;         /* version 3+: where in the file the view begins (0 before) */
    uint32_t pid;
} etl_kmap_file;

/* PageFault HardFault: a fault that read its page from a file (or the page file), written at
   its end: it began at initial_time (the trace's clock, as the event's timestamp) and read
   byte_count bytes from read_offset of the file file_object names (FileIo Name, FileRundown). */
typedef struct etl_khard_fault {
    int64_t initial_time;
    uint64_t read_offset;
    uint64_t virtual_address;
    uint64_t file_object;
    uint32_t tid;                 /* TThreadId: the faulting thread (the header has none) */
    uint32_t byte_count;
} etl_khard_fault;

/* Process PerfCtr (at a process's end) and PerfCtrRundown: its memory counters, in bytes. */
typedef struct etl_kprocess_counters {
    uint32_t pid;
    uint32_t page_fault_count;
    uint32_t handle_count;
    uint64_t peak_virtual_size, peak_working_set_size, peak_pagefile_usage;
    uint64_t quota_peak_paged_pool_usage, quota_peak_non_paged_pool_usage;
    uint64_t virtual_size, working_set_size, pagefile_usage;
    uint64_t quota_paged_pool_usage, quota_non_paged_pool_usage;
    uint64_t private_page_count;
} etl_kprocess_counters;

/* Stacks: frames stay in the record; read them with etl_kstack_frame_at. */
typedef struct etl_kstack {
    int64_t event_timestamp;      /* raw clock of the event the stack belongs to */
    uint32_t pid, tid;
    uint64_t stack_key;           /* STACK_KEY and STACK_KEY_DEF */
    unsigned frame_count;         /* STACK and STACK_KEY_DEF */
    unsigned frame_size;          /* 4 or 8 */
    const uint8_t *frames;
} etl_kstack;
/* The index-th frame (0: the innermost) of a decoded stack. */
ETL_API uint64_t etl_kstack_frame_at(const etl_kstack *s, unsigned index);

/* A TRACE_LOGFILE_HEADER carried as an event (the first event of every file, and one per
   input in merged files). */
typedef struct etl_ktrace_header {
    uint32_t buffer_size;
    uint8_t version[4];           /* OS major, minor, layout major, minor */
    uint32_t provider_version;    /* OS build */
    uint32_t number_of_processors;
    int64_t end_time;             /* FILETIME */
    uint32_t timer_resolution, maximum_file_size, log_file_mode, buffers_written;
    uint32_t pointer_size, events_lost, cpu_speed_mhz;
    int32_t timezone_bias;
    int64_t boot_time, perf_freq, start_time; /* FILETIME, Hz, FILETIME */
    uint32_t clock_type;          /* ReservedFlags */
    uint32_t buffers_lost;
    etl_string logger_name, log_file_name; /* UTF-16 */
} etl_ktrace_header;

typedef struct etl_kgroup_masks {
    uint32_t masks[8];            /* PERFINFO_GROUPMASK */
    uint32_t kernel_version;      /* 0 when the record ends before it */
} etl_kgroup_masks;

/* One decoded kernel event. */
typedef struct etl_kernel_event {
    int kclass;                   /* enum etl_kclass */
    const char *name;             /* "Process/Start", "Image/DCEnd", "Thread/CSwitch", ... */
    union {
        etl_kprocess process;
        etl_kthread thread;
        etl_kimage image;
        etl_kcswitch cswitch;
        etl_kready_thread ready_thread;
        etl_ksample sample;
        etl_kstack stack;         /* STACK, STACK_KEY, STACK_KEY_DEF */
        etl_ktrace_header header;
        etl_kgroup_masks group_masks;
        etl_lbr lbr;
        etl_kdisk_io disk_io;     /* DISK_IO, DISK_IO_INIT */
        etl_ksyscall syscall;     /* SYSCALL_ENTER, SYSCALL_EXIT */
        etl_kisr_dpc isr_dpc;     /* ISR, DPC */
        etl_kpage_fault page_fault; /* PAGE_FAULT */
        etl_ktcpip tcpip;         /* TCPIP */
        etl_kfile_io file_io;     /* FILE_IO */
        etl_kvirtual_alloc virtual_alloc; /* VIRTUAL_ALLOC */
        etl_kmap_file map_file;   /* MAP_FILE */
        etl_kprocess_counters process_counters; /* PROCESS_COUNTERS */
        etl_khard_fault hard_fault; /* HARD_FAULT */
    } u;
} etl_kernel_event;

/*
 * Decodes ev into *out: 1 when it is one of the classes above, 0 when it is not (out->kclass
 * is then ETL_KCLASS_NONE), ETL_FAILED when it is one whose payload is too short or malformed
 * for its version (out->kclass says which class; the fields are not valid). Fields past the
 * end of a shorter, older record are 0 or absent; bytes after the known fields are ignored.
 */
ETL_API int etl_kernel_decode(const etl_event *ev, etl_kernel_event *out);

/* ---- Samples with their stacks (doc/kernel-events.md, StackWalk) ---- */

/*
 * Which earlier event a StackWalk stack (or stack key reference) belongs to, in the manner the
 * kernel logs them: right after the event, on the same processor, with that event's timestamp
 * in the stack's EventTimeStamp. Feed every event in the order it was read, each with an id of
 * the caller's choosing (not 0). For a stack or stack key reference (ke decoded with
 * etl_kernel_decode, ETL_KCLASS_STACK or ETL_KCLASS_STACK_KEY), *owner is the id of the last
 * other event of its processor when that event's timestamp is the stack's event timestamp, else
 * 0; a key definition has no owner (0) and is not remembered. Any other event (ke NULL: not
 * decoded, or not decodable) becomes its processor's last event. ETL_OK, or ETL_FAILED when
 * memory ran out.
 */
typedef struct etl_stack_owners etl_stack_owners;
/* A new tracker, or NULL without memory. */
ETL_API etl_stack_owners *etl_stack_owners_new(void);
ETL_API void etl_stack_owners_free(etl_stack_owners *o);
ETL_API int etl_stack_owners_add(etl_stack_owners *o, const etl_event *ev, const etl_kernel_event *ke,
                                 int64_t id, int64_t *owner);

/*
 * Samples paired with their stacks. A sample (SampledProfile or PMCSample) and the StackWalk
 * stacks logged for it are matched by thread and the sample's timestamp (the stacks'
 * StackThread and EventTimeStamp; for thread 0, the idle threads, also by processor), in
 * whichever order they come: Windows logs the kernel half and the user half of a stack as two
 * events (the user half possibly later), both are joined, kernel frames first. A stack key
 * reference (StackWalk 37 kernel, 38 user) takes the frames of its key's next definition (35
 * delete, 36 rundown), which the kernel writes when the key leaves its cache or at the end; a
 * key defined again after a delete is a new stack. With ETL_STACKS_EVENTS, the EVENT_HEADER
 * events that carry a STACK_TRACE32/64 extended item are paired too, each with its own frames.
 *
 * Feed every event of a trace (etl_stack_pairer_add), then read the pairs in the order their
 * samples came (etl_stack_pairer_next). A sample whose stack never comes has one frame, its
 * instruction pointer. Memory grows with the samples and their frames until the pairer is freed.
 */
typedef struct etl_stack_pairer etl_stack_pairer;

#define ETL_STACKS_EVENTS 0x1u   /* pair EVENT_HEADER events' STACK_TRACE items too */
/* Most frames a pair has (more are cut: etl_stack_pairer_stats's frames_cut counts them). */
#define ETL_STACK_MAX_FRAMES 4096u

typedef struct etl_stack_pair {
    int64_t timestamp;            /* the sample's (or event's) raw timestamp */
    uint32_t pid;                 /* the stack's StackProcess (or the event's); UINT32_MAX when no
                                     stack or event says */
    uint32_t tid;
    uint16_t cpu;
    uint16_t profile_source;      /* the sample's KPROFILE_SOURCE (0 for events) */
    uint32_t count;               /* the sample's Count, at least 1 (1 for events) */
    uint64_t instruction_pointer; /* the sample's IP (events: their first frame, or 0) */
    unsigned frame_count;         /* >= 1 for samples */
    const uint64_t *frames;       /* innermost first; valid until the next call on the pairer */
    uint8_t has_stack;            /* 0: frames is just the instruction pointer */
    uint8_t from_ext;             /* 1: an EVENT_HEADER event's STACK_TRACE item */
    uint16_t ext_event_id;        /* its Id (from_ext) */
} etl_stack_pair;

typedef struct etl_stack_pairer_stats {
    uint64_t samples;             /* samples seen */
    uint64_t samples_with_stack;  /* those paired with at least one stack */
    uint64_t stacks;              /* StackWalk stacks and key references seen */
    uint64_t stacks_unpaired;     /* of those, the ones that matched no sample */
    uint64_t key_refs_undefined;  /* key references whose key was never defined */
    uint64_t frames_cut;          /* frames past ETL_STACK_MAX_FRAMES left out */
} etl_stack_pairer_stats;

/* A new pairer (flags: ETL_STACKS_*), or NULL without memory. */
ETL_API etl_stack_pairer *etl_stack_pairer_new(unsigned flags);
ETL_API void etl_stack_pairer_free(etl_stack_pairer *p);
/* Takes ev if it is a sample, a stack, a stack key reference or definition (or with
   ETL_STACKS_EVENTS an event with a STACK_TRACE item); other events are ignored. Malformed
   ones are ignored too (etl_kernel_decode fails on them). ETL_OK, or ETL_FAILED when memory ran
   out (ev is then not counted); ETL_FAILED too once reading has begun. */
ETL_API int etl_stack_pairer_add(etl_stack_pairer *p, const etl_event *ev);
/* The next pair into *out: ETL_OK, ETL_EOF after the last, ETL_FAILED when memory ran out. The
   first call ends the feeding. */
ETL_API int etl_stack_pairer_next(etl_stack_pairer *p, etl_stack_pair *out);
ETL_API void etl_stack_pairer_stats_get(const etl_stack_pairer *p, etl_stack_pairer_stats *out);

/*
 * Which image an address falls in: a map of the images of every process over the trace's
 * time, built from the Image, Process and Thread events (Load/DCStart/DCEnd/Unload), so
 * that sample and stack addresses resolve to the image loaded at that address at that time.
 * Kernel addresses (the high half of the address space) resolve to the images of process 0
 * (and 4, System). Feed every event once (any order), then look up.
 */
typedef struct etl_image_map etl_image_map;

typedef struct etl_image_info {
    uint64_t base, size;
    uint32_t pid;
    const char *file_name;        /* UTF-8, as the event has it; owned by the map */
    const char *base_name;        /* the part after the last '\' or '/' */
    int64_t load_timestamp;       /* raw clock; INT64_MIN when loaded before the trace began */
    int64_t unload_timestamp;     /* INT64_MAX when still loaded at the end */
} etl_image_info;

/* A new, empty map, or NULL without memory. */
ETL_API etl_image_map *etl_image_map_new(void);
ETL_API void etl_image_map_free(etl_image_map *m);
/* Takes what ev says about images, processes and threads (other events are ignored).
   ETL_OK, or ETL_FAILED when memory ran out. */
ETL_API int etl_image_map_add(etl_image_map *m, const etl_event *ev);
/* The image of process pid that held addr at raw time ts: 1 found (*out filled), 0 not. */
ETL_API int etl_image_map_find(etl_image_map *m, uint32_t pid, uint64_t addr, int64_t ts, etl_image_info *out);
/* The process of thread tid at raw time ts (from Thread events), or -1 when unknown. */
ETL_API int64_t etl_image_map_thread_pid(etl_image_map *m, uint32_t tid, int64_t ts);
/* The name of the system call a Linux capture's SysClEnter names by its number (its
   SysCallAddress), from the trace's LinuxImageID SystemCalls event: owned by the map (valid
   until etl_image_map_free), or NULL when the trace has no such event or the number no name. */
ETL_API const char *etl_image_map_syscall_name(const etl_image_map *m, uint64_t address);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_KERNEL_H */
