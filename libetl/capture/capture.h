/* SPDX-License-Identifier: MIT */
/* The private header of libetl/capture/ (kernel capture with Linux perf events, LBR capture): what its files share. Private to libetl. */
#ifndef ETL_CAPTURE_H
#define ETL_CAPTURE_H
#ifndef ETL_BUILDING_LIBRARY
#error "capture/capture.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "etl.h"
#include "format/format.h"
#include "engine/engine.h"

/* ---- payloads, header forms and the Linux-to-Windows mappings (kpayload.c) ---- */

/* The header each hook kernel capture writes (ETL_HOOK_*, format/format.h) is written with:
   *system 1 for SYSTEM64, 0 for PERFINFO64, and its version. 0, or -1 for another hook. */
int etl_kcapture_form(uint16_t hook, int *system, uint16_t *version);

/* Windows' STILL_ACTIVE: the ExitStatus of a process that runs (Start, DCStart, DCEnd). */
#define ETL_KSTILL_ACTIVE 259

/* A process as Process V4 describes it (64-bit payload). */
typedef struct etl_kproc_desc {
    uint32_t pid, ppid;
    uint32_t uid;              /* the UserSID: S-1-22-1-uid (a Unix user as Windows names it) */
    int32_t exit_status;
    const char *name;          /* ImageFileName: the comm (8-bit) */
    const char *command_line;  /* UTF-8; "" when unknown */
} etl_kproc_desc;

/* What SystemConfig/CPU says of the machine (etl_ksysconfig_cpu_read fills it on Linux). */
typedef struct etl_ksysconfig_cpu {
    uint32_t mhz, processors, mem_mb, page_size, allocation_granularity;
    char computer_name[256], domain_name[256]; /* UTF-8; cut to fit 256 and 134 UTF-16 units */
    uint64_t hyper_threading_flag;  /* Windows: a mask; 0 here (not known) */
    uint64_t highest_user_address;
    uint16_t architecture;          /* PROCESSOR_ARCHITECTURE_*: 9 AMD64, 12 ARM64, 0 x86 */
    uint16_t level, revision;       /* x86: the family; model << 8 | stepping */
    uint8_t nx, pae;
    uint32_t memory_speed;          /* 0: not known */
} etl_ksysconfig_cpu;
/* The machine now: uname's node name (and the domain after its first '.', else the NIS
   domain unless "(none)"), processors online, MemTotal, the page size, /proc/cpuinfo's first
   processor (MHz, family, model, stepping). What cannot be read stays 0 or "". */
void etl_ksysconfig_cpu_read(etl_ksysconfig_cpu *c);

/* A physical disk (a block device not under /sys/devices/virtual: no loop, ram, zram, dm or md
   device) as SystemConfig/PhyDisk (version 2, 568 bytes) describes it. */
typedef struct etl_ksysconfig_phydisk {
    uint32_t disk_number;          /* the disk's dev_t as the block tracepoints give it (DiskIo's DiskNumber) */
    uint32_t bytes_per_sector, sectors_per_track, tracks_per_cylinder;
    uint64_t cylinders;
    uint32_t scsi_port, scsi_path, scsi_target, scsi_lun;
    char manufacturer[256];        /* UTF-8 */
    uint32_t partition_count;
    uint8_t write_cache_enabled;
    char name[64];                 /* its /sys/block name (not in the payload) */
} etl_ksysconfig_phydisk;
/* A mounted file system on a block device as SystemConfig/LogDisk (version 2, 112 bytes). */
typedef struct etl_ksysconfig_logdisk {
    uint64_t start_offset, partition_size;
    uint32_t disk_number, drive_type, partition_number, sectors_per_cluster, bytes_per_sector;
    int64_t free_clusters, total_clusters;
    char file_system[16];
    char mount_point[256];         /* (not in the payload) */
} etl_ksysconfig_logdisk;
/* A network interface with a device as SystemConfig/NIC (version 2). */
typedef struct etl_ksysconfig_nic {
    uint64_t physical_addr;        /* the address's bytes in order, from the lowest */
    uint32_t physical_addr_len, ipv4_index, ipv6_index;
    char description[256], ip_addresses[1024], dns_servers[512]; /* UTF-8; ';'-separated lists */
} etl_ksysconfig_nic;
/* Each of this machine's physical disks, mounted block file systems, network interfaces with
   a device, given to cb in turn: how many. */
unsigned etl_ksysconfig_phydisks(void (*cb)(void *ctx, const etl_ksysconfig_phydisk *d), void *ctx);
unsigned etl_ksysconfig_logdisks(void (*cb)(void *ctx, const etl_ksysconfig_logdisk *d), void *ctx);
unsigned etl_ksysconfig_nics(void (*cb)(void *ctx, const etl_ksysconfig_nic *n), void *ctx);
size_t etl_kpayload_sysconfig_phydisk(uint8_t *out, size_t cap, const etl_ksysconfig_phydisk *d);
size_t etl_kpayload_sysconfig_logdisk(uint8_t *out, size_t cap, const etl_ksysconfig_logdisk *d);
size_t etl_kpayload_sysconfig_nic(uint8_t *out, size_t cap, const etl_ksysconfig_nic *n);

/* The payload encoders: each writes the 64-bit payload into out (NULL: nowhere) and returns
   its size; when that is above cap, only what fitted was written, and out holds no payload. */
size_t etl_kpayload_process(uint8_t *out, size_t cap, const etl_kproc_desc *p);
size_t etl_kpayload_thread(uint8_t *out, size_t cap, uint32_t pid, uint32_t tid, uint8_t base_priority);
size_t etl_kpayload_image(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, const char *file_name);
/* SystemConfig/CPU version 3 (828 bytes). */
size_t etl_kpayload_sysconfig_cpu(uint8_t *out, size_t cap, const etl_ksysconfig_cpu *c);
/* Thread/SetName (version 2): ProcessId, TThreadId, ThreadName (UTF-8 in, UTF-16 out). */
size_t etl_kpayload_thread_name(uint8_t *out, size_t cap, uint32_t pid, uint32_t tid, const char *name);
/* CSwitch (version 4): new_wait_time is NewThreadWaitTime, in clock ticks (etl_kwait_ticks). */
size_t etl_kpayload_cswitch(uint8_t *out, size_t cap, uint32_t new_tid, uint32_t old_tid, int8_t new_priority,
                            int8_t old_priority, uint8_t wait_reason, uint8_t wait_mode, uint8_t state,
                            uint8_t wait_ideal_processor, uint32_t new_wait_time);
/* A thread's time off the processors (ns) as NewThreadWaitTime counts it: whole clock ticks of
   the trace's TimerResolution (156250 x 100 ns, 15.625 ms), at most UINT32_MAX; 0 for < 0. */
uint32_t etl_kwait_ticks(int64_t ns);
size_t etl_kpayload_ready_thread(uint8_t *out, size_t cap, uint32_t tid);
size_t etl_kpayload_sample(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid);
/* PMC interrupt: InstructionPointer, ThreadId, ProfileSource (KPROFILE_SOURCE), Reserved. */
size_t etl_kpayload_pmc(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid, uint16_t profile_source);
size_t etl_kpayload_stack(uint8_t *out, size_t cap, int64_t event_ts, uint32_t pid, uint32_t tid,
                          const uint64_t *frames, unsigned count);

/* LinuxImageID (libetl's classic class, format/format.h): BuildId (ImageBase, ImageSize,
   ProcessId, FileOffset, BuildIdSize, BuildId, FileName), KernelSymbols (Sequence, Text: n
   bytes of whole kallsyms lines, NUL-terminated in the payload) and KernelModule (ImageBase,
   ImageSize, BuildIdSize, BuildId, Name). */
#define ETL_BUILD_ID_MAX 64u /* the longest build-id kept (SHA-1's is 20 bytes) */
typedef struct etl_kbuild_id {
    uint8_t size;              /* 0: none known */
    uint8_t id[ETL_BUILD_ID_MAX];
} etl_kbuild_id;
size_t etl_kpayload_build_id(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, uint64_t file_offset,
                             const etl_kbuild_id *b, const char *file_name);
size_t etl_kpayload_kernel_symbols(uint8_t *out, size_t cap, uint32_t sequence, const char *text, size_t n);
size_t etl_kpayload_kernel_module(uint8_t *out, size_t cap, uint64_t base, uint64_t size, const etl_kbuild_id *b,
                                  const char *name);
/* LinuxImageID SystemCalls: Machine (ELF e_machine), Count, then count names (8-bit,
   NUL-terminated; NULL or "" for a number without a system call). */
size_t etl_kpayload_system_calls(uint8_t *out, size_t cap, uint16_t machine, const char *const *names, uint16_t count);
/* The system call names of the architecture the library was built for (its native ABI: the
   numbers raw_syscalls:sys_enter gives a native process): the table and its ELF e_machine
   (ksyscalls.c). 0 names when the library has no table for its architecture. */
const char *const *etl_ksyscall_names(uint16_t *machine, uint16_t *count);
/* Writes a LinuxImageID event (opcode ETL_LINUX_IMAGE_ID_*) to s: a classic event with pid and
   tid in its header. ETL_OK, or ETL_FAILED (the session lost it). */
int etl_kwrite_image_id(etl_session *s, int64_t ts, uint8_t opcode, uint32_t pid, uint32_t tid, const uint8_t *payload,
                        size_t n);

/* ---- build-ids and kallsyms (kimageid.c) ---- */

/* The NT_GNU_BUILD_ID of an ELF file (fd, read with pread: a bounded number of program
   headers and PT_NOTE segments of at most 64 KiB; 32- and 64-bit, either byte order) into
   out: its size, or 0 (not ELF, truncated, no such note, a note whose sizes overrun its
   segment, or a build-id longer than cap). */
size_t etl_elf_build_id(int fd, uint8_t *out, size_t cap);
/* The same in n bytes of notes (a note section: /sys/kernel/notes, a module's
   .note.gnu.build-id), each padded to align (4 or 8), in the host's byte order. */
size_t etl_elf_note_build_id(const uint8_t *notes, size_t n, unsigned align, uint8_t *out, size_t cap);
/* The length of the whole lines at the start of text (len bytes) that fit in max bytes: up to
   the last newline within them; with eof, the whole text when it fits (its last line need not
   end with a newline). 0: the first line does not fit. */
size_t etl_kallsyms_chunk(const char *text, size_t len, size_t max, int eof);
/* 1 when a line of kallsyms text shows an address other than 0 (kptr_restrict shows zeros). */
int etl_kallsyms_has_addresses(const char *text, size_t len);
/* The kernel's build-id (/sys/kernel/notes), size 0 when it cannot be read. */
void etl_kkernel_build_id(etl_kbuild_id *out);
/* Build-ids of files, by device, inode, size, mtime and ctime (an inode number reused by
   another file is another key), read once each (at most 65536 files kept; thread-safe). */
struct etl_kbid_cache;
struct etl_kbid_cache *etl_kbid_cache_new(void);
void etl_kbid_cache_free(struct etl_kbid_cache *c);
/* How many files c's lookups opened and read (the others came from c). */
uint64_t etl_kbid_cache_reads(struct etl_kbid_cache *c);
/*
 * The build-id of the file pid maps executable at [start, end) (path file; device dev and
 * inode ino as perf's MMAP2 or /proc/PID/maps give them, ino 0 when unknown): found through
 * /proc/PID/map_files while the process lives, else its root's path, else the path, each only
 * when stat says it is a regular file and (ino not 0) that very file; then from c (may be
 * NULL), else read. size 0 when none: not a file ([vdso]), gone, another file now, not ELF,
 * no note.
 */
void etl_kbuild_id_of_mapping(struct etl_kbid_cache *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t dev,
                              uint64_t ino, const char *file, etl_kbuild_id *out);

/* KPROFILE_SOURCE ProfileTime (the timer: SampledProfile's, "Timer" in Windows' list of
   profile sources) and ProfileBranchInstructions (the counter the "pmc" LBR trigger samples). */
#define ETL_KPROFILE_TIME 0
#define ETL_KPROFILE_BRANCH_INSTRUCTIONS 6

/* PerfInfo SampledProfileInterval (version 3: SetInterval, CollectionStart, CollectionEnd):
   Source (KPROFILE_SOURCE), NewInterval and OldInterval (100 ns units for the timer),
   SourceName (UTF-8 in, UTF-16 out). */
size_t etl_kpayload_profile_interval(uint8_t *out, size_t cap, uint32_t source, uint32_t new_interval,
                                     uint32_t old_interval, const char *source_name);

/* Writes one kernel event (payload n bytes) to s in the header kind and version of its hook
   (etl_kcapture_form; pid and tid go into a SYSTEM header, a PERFINFO one has none), in the
   buffer of the processor the caller runs on. ETL_OK, or ETL_FAILED (an unknown hook, or the
   session lost the event). */
int etl_kwrite(etl_session *s, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, const uint8_t *payload,
               size_t n);

/* DiskIo (version 3, 64-bit, padded to 8 bytes as Windows' structures are): a read or write
   completion (56 bytes), a flush completion (32), an issue (ReadInit/WriteInit/FlushInit, 16). */
typedef struct etl_kdisk_desc {
    uint32_t disk_number, irp_flags, transfer_size, issuing_tid;
    int64_t byte_offset;
    uint64_t irp, response_time;   /* response_time: issue to completion, in the session's ticks */
} etl_kdisk_desc;
size_t etl_kpayload_disk_io(uint8_t *out, size_t cap, const etl_kdisk_desc *d);
size_t etl_kpayload_disk_flush(uint8_t *out, size_t cap, const etl_kdisk_desc *d);
size_t etl_kpayload_disk_init(uint8_t *out, size_t cap, uint64_t irp, uint32_t issuing_tid);
/* PerfInfo ISR (version 2): InitialTime (the interrupt's start, the session's clock), Routine,
   ReturnValue, Vector, Reserved 0; DPC, ThreadedDPC and TimerDPC (version 2): InitialTime,
   Routine. */
size_t etl_kpayload_isr(uint8_t *out, size_t cap, int64_t initial_time, uint64_t routine, uint8_t return_value,
                        uint8_t vector);
size_t etl_kpayload_dpc(uint8_t *out, size_t cap, int64_t initial_time, uint64_t routine);
/* PageFault TypeGroup1 (version 2): VirtualAddress, ProgramCounter. */
size_t etl_kpayload_page_fault(uint8_t *out, size_t cap, uint64_t virtual_address, uint64_t program_counter);
/* PageFault HardFault (version 2, 40 bytes): a fault that read its page from a file. */
typedef struct etl_khard_fault_desc {
    int64_t initial_time;      /* when the fault began (the session's clock) */
    uint64_t read_offset;      /* where in the file its read began (bytes) */
    uint64_t virtual_address, file_object; /* file_object: the FileKey (etl_kfile_key) */
    uint32_t tid, byte_count;  /* byte_count: bytes read from read_offset (0: it waited for another's read) */
} etl_khard_fault_desc;
size_t etl_kpayload_hard_fault(uint8_t *out, size_t cap, const etl_khard_fault_desc *d);
/* TcpIp and UdpIp (version 2): what one event says of a connection or datagram. Addresses are
   in network order as the kernel keeps them (an IPv4 one in the first 4 bytes); ports in host
   order (written in network order). */
typedef struct etl_ktcpip_desc {
    uint32_t pid, size;
    int v6;                    /* 1: the IPv6 form (16-byte addresses) */
    uint8_t daddr[16], saddr[16];
    uint16_t dport, sport;
    uint32_t seqnum;
    uint64_t connid;
    /* Connect and Accept: the options negotiated (0: not known) */
    uint16_t mss, sackopt, tsopt, wsopt;
    uint32_t rcvwin;
    int16_t rcvwinscale, sndwinscale;
} etl_ktcpip_desc;
/* The payload of the TcpIp or UdpIp event hook (ETL_HOOK_TCPIP_*, ETL_HOOK_UDPIP_*, with
   ETL_HOOK_TCPIP_IPV6 for the IPv6 forms; d->v6 must agree): TypeGroup1's, SendIPV4/6's
   (startime, endtime 0) or Connect/Accept's layout as the hook wants. */
size_t etl_kpayload_tcpip(uint8_t *out, size_t cap, uint16_t hook, const etl_ktcpip_desc *d);
/* PageFault VirtualAlloc/VirtualFree (version 2): BaseAddress, RegionSize, ProcessId, Flags
   (ETL_MEM_*). */
size_t etl_kpayload_virtual_alloc(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, uint32_t flags);
/* FileIo MapFile/UnmapFile (version 3, 44 bytes). */
typedef struct etl_kmap_file_desc {
    uint64_t view_base, file_key, misc_info, view_size, byte_offset;
    uint32_t pid;
} etl_kmap_file_desc;
size_t etl_kpayload_map_file(uint8_t *out, size_t cap, const etl_kmap_file_desc *m);
/* The FileKey of a file, one for every source of the capture (FileIo, MapFile, HardFault): its
   device (major, minor) and inode number in one number, never 0. */
uint64_t etl_kfile_key(uint32_t dev_major, uint32_t dev_minor, uint64_t ino);
/* FileIo Name (version 2): FileObject (a FileKey here), FileName (UTF-8 in, UTF-16 out). */
size_t etl_kpayload_file_name(uint8_t *out, size_t cap, uint64_t file_object, const char *name);
/* Process PerfCtr and PerfCtrRundown (version 2, 104 bytes): the memory counters of a process
   (bytes; Windows' pool quotas, which Linux has not, are written 0). */
typedef struct etl_kproc_counters {
    uint32_t pid, page_fault_count, handle_count;
    uint64_t peak_virtual_size, peak_working_set_size, peak_pagefile_usage;
    uint64_t virtual_size, working_set_size, pagefile_usage, private_page_count;
} etl_kproc_counters;
size_t etl_kpayload_process_counters(uint8_t *out, size_t cap, const etl_kproc_counters *c);
/* Linux's softirqs (HI, TIMER, NET_TX, NET_RX, BLOCK, IRQ_POLL, TASKLET, SCHED, HRTIMER, RCU):
   the hook of the DPC a softirq of vector vec is written as (TimerDPC for the timers' two), and
   the names of their actions in kallsyms (the older name after a '|'). */
#define ETL_KSOFTIRQS 10
uint16_t etl_ksoftirq_hook(uint32_t vec);
extern const char *const etl_ksoftirq_actions[ETL_KSOFTIRQS];
/* PerfInfo SysClEnter (SysCallAddress) and SysClExit (SysCallNtStatus). */
size_t etl_kpayload_syscall_enter(uint8_t *out, size_t cap, uint64_t address);
size_t etl_kpayload_syscall_exit(uint8_t *out, size_t cap, uint32_t nt_status);

/* FileIo (version 3, 64-bit; kfileio.c): what an operation's event says. */
typedef struct etl_kfileio_desc {
    uint64_t irp, file_object, file_key, offset, extra_info;
    uint32_t tid, size, io_flags, info_class, mode;
    uint32_t create_options, file_attributes, share_access;
    const char *path;          /* Create's OpenPath (UTF-8); "" none */
} etl_kfileio_desc;
/* Create: IrpPtr, FileObject, TTID, CreateOptions, FileAttributes, ShareAccess, OpenPath;
   SimpleOp (Cleanup, Close, Flush): IrpPtr, FileObject, FileKey, TTID, padding; ReadWrite:
   Offset, IrpPtr, FileObject, FileKey, TTID, IoSize, IoFlags, padding; Info (SetInfo, Delete,
   Rename, QueryInfo, FSControl): IrpPtr, FileObject, FileKey, ExtraInfo, TTID, InfoClass;
   DirEnum: IrpPtr, FileObject, FileKey, TTID, Length (size), InfoClass, FileIndex 0, FileName
   (path); OpEnd: IrpPtr, ExtraInfo, NtStatus, padding; Name (Name, FileRundown): FileObject
   (the FileKey), FileName. */
size_t etl_kpayload_fileio_create(uint8_t *out, size_t cap, const etl_kfileio_desc *d);
size_t etl_kpayload_fileio_simple(uint8_t *out, size_t cap, const etl_kfileio_desc *d);
size_t etl_kpayload_fileio_rw(uint8_t *out, size_t cap, const etl_kfileio_desc *d);
size_t etl_kpayload_fileio_info(uint8_t *out, size_t cap, const etl_kfileio_desc *d);
size_t etl_kpayload_fileio_dir_enum(uint8_t *out, size_t cap, const etl_kfileio_desc *d);
size_t etl_kpayload_fileio_op_end(uint8_t *out, size_t cap, uint64_t irp, uint64_t extra_info, uint32_t nt_status);
/* NtCreateFile's CreateOptions, CreateDisposition in its top byte, from open(2)'s flags
   (O_CREAT|O_EXCL FILE_CREATE, O_CREAT|O_TRUNC FILE_OVERWRITE_IF, O_CREAT FILE_OPEN_IF, O_TRUNC
   FILE_OVERWRITE, else FILE_OPEN; O_DIRECTORY, O_SYNC/O_DSYNC, O_DIRECT as their options). */
uint32_t etl_kfileio_create_options(uint32_t oflags);

/* What a block request's rwbs (block tracepoints' "FWS", "R", ...; n bytes, NUL-padded) says:
   its kind (ETL_KIO_*) and Windows IRP flags (*irp_flags: IRP_READ_OPERATION 0x100,
   IRP_WRITE_OPERATION 0x200, IRP_SYNCHRONOUS_API 0x4 for 'S'). */
enum { ETL_KIO_OTHER, ETL_KIO_READ, ETL_KIO_WRITE, ETL_KIO_FLUSH };
int etl_kio_kind(const char *rwbs, size_t n, uint32_t *irp_flags);
/* A Linux system call's return value as an NTSTATUS: 0 (STATUS_SUCCESS) for 0 and above,
   0xE0000000 | errno for -errno (error severity, customer bit: no Windows code is one). */
uint32_t etl_kntstatus(int64_t ret);
#define ETL_KSWITCHED_SLOTS 65536u

/* A Linux priority (the kernel's prio: 0..99 real time, 100..139 nice -20..19) as a Windows
   thread priority (0..31: 16..31 real time, 8 normal). */
int8_t etl_kpriority(int prio);
/* KTHREAD_STATE, KWAIT_REASON and wait mode of a thread switched out in Linux task state
   prev_state (sched_switch's, TASK_REPORT bits). */
void etl_kstate(int64_t prev_state, uint8_t *state, uint8_t *wait_reason, uint8_t *wait_mode);

/* ---- image unloads (kexit.c) ---- */

/* The range [*lo, *hi) that munmap(addr, len) removes, len rounded up to whole pages: 0, or -1
   when the kernel refuses the call (EINVAL: addr not page-aligned, len 0, or a range that
   wraps). */
int etl_kunmap_range(uint64_t addr, uint64_t len, uint64_t page, uint64_t *lo, uint64_t *hi);
/* What mremap(addr, old_len, new_len, flags) removes at addr for certain: the tail of a
   mapping shrunk in place, or the whole old range when MREMAP_FIXED moves it (without
   MREMAP_DONTUNMAP): 0 and [*lo, *hi), or -1 (nothing: a growth, which may move the mapping
   or not, or a refused call). */
int etl_kmremap_range(uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags, uint64_t page,
                      uint64_t *lo, uint64_t *hi);

/* What removing [lo, hi) does to an image whose code (its executable mapping, what is left of
   it) is [*code_lo, *code_hi): */
enum {
    ETL_KUNMAP_KEPT,   /* untouched, or a hole punched inside: the code on both sides stays */
    ETL_KUNMAP_SHRUNK, /* one end cut off: *code_lo or *code_hi moved, the rest stays */
    ETL_KUNMAP_GONE,   /* all of what was left: the image unloads */
};
int etl_kunmap_image(uint64_t lo, uint64_t hi, uint64_t *code_lo, uint64_t *code_hi);

/* ---- exit status (kexit.c) ---- */

/* What decides the ExitStatus of a process (times on the session's clock). Each kind keeps
   its earliest event: the kernel takes the first group exit, and readers of different
   processors may bring events out of order. */
#define ETL_KEXIT_SIGNALS 8
typedef struct etl_kexit {
    int64_t group_ts;          /* exit_group(group_code) (INT64_MAX: none) */
    int group_code;
    int64_t fatal_ts;          /* a signal other than SIGKILL delivered to its default, fatal action */
    int fatal_sig;
    int64_t kill_ts;           /* SIGKILL delivered (default action): the group exit decided when a
                                  fatal signal was sent, or a real SIGKILL */
    int64_t leader_ts;         /* exit(leader_code) of the thread-group leader */
    int leader_code;
    /* The latest signals sent to the process whose default action kills it without a core
       dump (sig > 0), and deliveries of such signals to a handler or to SIG_IGN (sig < 0):
       most recent last. */
    unsigned nsent;
    struct { int64_t ts; int sig; } sent[ETL_KEXIT_SIGNALS];
} etl_kexit;

void etl_kexit_init(etl_kexit *x);
void etl_kexit_group(etl_kexit *x, int64_t ts, int64_t code);
void etl_kexit_leader(etl_kexit *x, int64_t ts, int64_t code);
/* An exec at ts: what was noted of the program before it (before ts) is forgotten; what was
   noted of the new program (read first, on another processor) is kept. */
void etl_kexit_forget(etl_kexit *x, int64_t ts);
/* A signal sent to the process (signal_generate, queued). */
void etl_kexit_sent(etl_kexit *x, int64_t ts, int sig);
/* A signal delivered to one of its threads (signal_deliver): to its default action (dfl), or
   to a handler or SIG_IGN. */
void etl_kexit_delivered(etl_kexit *x, int64_t ts, int sig, int dfl);
/* The ExitStatus of a process whose exit is at end_ts: the exit code (0..255) of exit_group,
   else 128 + N for a fatal signal N, else the leader's exit code: 1; 0 (and *status 0) when
   none of these was seen. */
int etl_kexit_status(const etl_kexit *x, int64_t end_ts, int32_t *status);
/* A signal's default action: 0 none, stop or continue; 1 terminate; 2 terminate with a core dump. */
int etl_ksignal_default(int sig);

/* ---- virtual_alloc and vamap: a process's address space as its system calls change it (kvmem.c) ---- */

/* A file view (an mmap of a file) the capture saw made: [base, base + size) at byte offset of
   the file known by file_key. */
typedef struct etl_kvm_view {
    uint64_t base, size, file_key, offset;
    int64_t ts;                /* when the call that made it was made (the space's now then) */
} etl_kvm_view;
/* What the capture knows of one process's address space: its break (0: not known yet) and
   the file views it saw made and not removed yet, by base. now: the time of the call being
   applied (the caller sets it), kept with what the call notes, so that an exec or exit
   forgets only what came before it (etl_kvm_space_forget), whatever order the processors'
   records are handled in. */
typedef struct etl_kvm_space {
    uint64_t brk;
    int64_t brk_ts, now;
    etl_kvm_view *views;
    size_t nviews, cap;
} etl_kvm_space;
/* What sp noted before ts is forgotten (an exec or exit at ts); what came after it stays. */
void etl_kvm_space_forget(etl_kvm_space *sp, int64_t ts);
/* What a system call did, as Windows says it: VirtualAlloc or VirtualFree of anonymous memory,
   MapFile or UnmapFile of a file view. */
enum { ETL_KVM_ALLOC, ETL_KVM_FREE, ETL_KVM_MAP, ETL_KVM_UNMAP };
typedef struct etl_kvm_event {
    int kind;
    uint64_t base, size;
    uint32_t flags;            /* ALLOC, FREE: ETL_MEM_* */
    uint64_t file_key, offset; /* MAP, UNMAP */
} etl_kvm_event;
typedef void (*etl_kvm_emit)(void *ctx, const etl_kvm_event *e);
/* Each of these calls emit (in address order) for what a call that returned ret did to sp,
   and updates sp. Nothing for a call that failed (ret -4095..-1), lengths rounded up to whole
   pages (page). 0, or -1 when it changed nothing or is not understood (no memory: sp keeps
   what it had). */
/* mmap(addr, len, prot, flags, fd, off) = ret: a file view (a mapping without MAP_ANONYMOUS)
   of file_key, else anonymous memory (MEM_RESERVE, with MEM_COMMIT unless PROT_NONE). Views
   that MAP_FIXED replaces are unmapped first. */
int etl_kvm_mmap(etl_kvm_space *sp, uint64_t ret, uint64_t len, uint64_t prot, uint64_t flags, uint64_t file_key,
                 uint64_t off, uint64_t page, etl_kvm_emit emit, void *ctx);
/* munmap(addr, len) = ret: UnmapFile for each view (or part of one) in the range, VirtualFree
   (MEM_RELEASE) for each stretch between them. */
int etl_kvm_munmap(etl_kvm_space *sp, uint64_t addr, uint64_t len, int64_t ret, uint64_t page, etl_kvm_emit emit,
                   void *ctx);
/* mremap(addr, old_len, new_len, flags) = ret: a view is unmapped and mapped again at ret with
   its new size; anonymous memory grown in place is a VirtualAlloc of the growth, shrunk a
   VirtualFree of the tail, moved a VirtualFree of the old range (unless MREMAP_DONTUNMAP) and
   a VirtualAlloc of the new. */
int etl_kvm_mremap(etl_kvm_space *sp, uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags, int64_t ret,
                   uint64_t page, etl_kvm_emit emit, void *ctx);
/* brk(arg) = ret (the break after the call): with the break before it known, a VirtualAlloc
   of the pages it grew by or a VirtualFree of those it shrank by; brk(0) (a query) and the
   first brk seen only learn the break. */
int etl_kvm_brk(etl_kvm_space *sp, uint64_t arg, uint64_t ret, uint64_t page, etl_kvm_emit emit, void *ctx);
void etl_kvm_space_free(etl_kvm_space *sp);

/* ---- memory_hard_faults: a major fault and what its thread did before it (khardfault.c) ---- */

/* What the capture notes of a thread: a file fault's attempt or pages it added to the page cache. */
typedef struct etl_khf_rec {
    int64_t ts;
    uint32_t dev;              /* the kernel's dev_t: major << 20 | minor */
    uint8_t add;               /* 0: a fault attempt (index: its page); 1: pages added (index, pages) */
    uint32_t pages;
    uint64_t ino, index;
} etl_khf_rec;
/* Of a thread's records (n, in time order) those up to ts end in a major fault at ts: 1 and the
   fault's file (*dev, *ino), its start (d->initial_time: the first attempt of the last page the
   thread faulted on, a retry after the read being the same page), and what it read (the run of
   pages it added to that file that holds its page: read_offset, byte_count; else its page's
   offset and 0); 0 when no attempt precedes ts (not a file page: swap, shmem). page: bytes. */
int etl_khf_pair(const etl_khf_rec *r, size_t n, int64_t ts, uint64_t page, uint32_t *dev, uint64_t *ino,
                 etl_khard_fault_desc *d);

/* ---- memory_page_faults: a minor fault's kind (kfaultkind.c) ---- */
/* The hook (ETL_HOOK_PAGE_FAULT_*) of a minor fault whose entry had error_code (x86's: bit 0
   the page was present, bit 1 a write), file: a file page was faulted on or mapped within it;
   paired 0 (no entry known): DemandZeroFault. A write to a present page or to a file page is
   CopyOnWrite, a file page or a present one otherwise TransitionFault, else DemandZeroFault. */
uint16_t etl_kpf_kind(int paired, uint64_t error_code, int file);

/* ---- the command line at an exec (kexec.c) ---- */
/* The command line of a program as exec left its stack: stack holds the n bytes from the user
   stack pointer sp at the new program's entry (argc, then argc pointers of word bytes: 8, or 4
   for a 32-bit process; the arguments themselves higher up the same stack), what perf's user
   stack dump of sched:sched_process_exec holds. Writes the arguments joined by spaces (as
   /proc/PID/cmdline, its NULs made spaces, trailing ones left out) into out (size > 0): 0, or
   -1 (out "") when argc or the first argument is not in the n bytes. An argument the n bytes
   cut off is kept as far as it goes, and those after it are left out. */
int etl_kexec_command_line(const uint8_t *stack, size_t n, uint64_t sp, unsigned word, char *out, size_t size);
/* How much of the stack an exec sample dumps: the arguments lie above argc, the pointers to
   them and to the environment, the auxiliary vector and up to 8 KiB of random alignment
   (x86-64). perf copies it without faulting pages in: a page of that alignment gap, which
   nothing wrote, ends the dump before the arguments (a quarter of execs or so; /proc is read
   for those). */
#define ETL_KEXEC_STACK_BYTES 16384u

/* ---- the kernel capture's hook in its session ---- */

/* The session's kernel capture (NULL: none): the context of the hook that
   etl_session_enable_kernel registers with the session (engine/engine.h). */
struct etl_kcapture;
struct etl_kcapture *etl_session_kcapture(const etl_session *s);
/* Ends a kernel capture: the readers drain and stop, the DCEnd rundown is written, k is freed.
   The hook's stop: etl_session_stop calls it before it flushes. */
void etl_kcapture_end(etl_session *s, struct etl_kcapture *k);

/* LBR (lbrcapture.c, kcapture.c): the kernel capture k samples the triggers of cfg with perf
   events that take branch stacks (branch_sample_type), in its own rings, each sample written with
   etl_lbr_write_perf_trigger; a "profile" trigger's event replaces the cpu-clock profile
   source. 0, or -1 with the cause in err (nothing changed). Stop: the LBR events disabled. */
struct etl_lbr_config;
int etl_kcapture_lbr_start(struct etl_kcapture *k, const struct etl_lbr_config *cfg, uint64_t branch_sample_type,
                           char *err, size_t errsize);
void etl_kcapture_lbr_stop(struct etl_kcapture *k);

/* ---- perf's branch stacks into LBR records (lbr.c) ---- */

/* perf's branch_sample_type for flags: 0, or -1 with the reason in err (filters perf cannot
   express, or every branch filtered out). */
int etl_lbr_perf_branch_type(uint32_t flags, uint64_t *out, char *err, size_t errsize);

/* What a PERF_RECORD_SAMPLE holds for LBR. */
typedef struct etl_lbr_perf_sample {
    uint32_t pid, tid, cpu;
    uint64_t time;            /* perf's clock (use_clockid: the session's) */
    uint64_t ip;              /* PERF_SAMPLE_IP; 0 without it */
    const uint8_t *callchain; /* PERF_SAMPLE_CALLCHAIN: callchain_nr u64 addresses inside the record */
    unsigned callchain_nr;
    unsigned count;           /* branches in the record */
    unsigned written;         /* of them, converted into the caller's array */
} etl_lbr_perf_sample;

/*
 * Decodes the PERF_RECORD_SAMPLE record rec (size bytes, perf_event_header first) of an event
 * opened with sample_type and branch_sample_type, and converts its branch stack into entries
 * (at most max; most recent first, as perf and Windows both order them): from and to, and in
 * reserved the LBR_INFO form of perf's flags (bit 63 mispredicted, 62 in transaction, 61
 * transaction abort, 15:0 cycles). Returns 0, or -1 with *why set when the record is not a
 * sample, its layout has a field this parser does not walk (PERF_SAMPLE_READ), or it is shorter
 * than its fields say. Reads nothing outside rec[0, size).
 */
int etl_lbr_perf_sample_decode(const uint8_t *rec, size_t size, uint64_t sample_type, uint64_t branch_sample_type,
                               etl_lbr_perf_sample *out, etl_lbr_entry *entries, unsigned max, const char **why);

/* How a perf sample of a trigger's branch-stack event is written (etl_lbr_write_perf_trigger). */
typedef struct etl_lbr_trigger_form {
    uint8_t trigger;          /* its PerfInfo type: 46 SampledProfile, 47 PMC interrupt (PMCSample) */
    uint16_t profile_source;  /* a PMC interrupt's KPROFILE_SOURCE */
    uint32_t filters;         /* the LBR record's LbrFilterFlags: the session's ETL_LBR_* flags */
    int stack;                /* 1: a StackWalk from the sample's call chain */
    uint64_t sample_type, branch_sample_type; /* the perf event's */
} etl_lbr_trigger_form;

/*
 * Decodes the sample rec as above and writes, at one timestamp, what the NT Kernel Logger
 * writes for a triggering event with LBR: the trigger (SampledProfile or PMCSample: the IP
 * and thread of the sample), its StackWalk when f->stack (the call chain's addresses, perf's
 * context markers left out), then its LBR record. The timestamp is the sample's time, or
 * min_ts when that is later (a processor's buffer never goes back in time); *used_ts (may be
 * NULL) gets it. ETL_OK, or ETL_FAILED (a bad record: nothing written; or the session lost
 * an event, which it counted).
 */
int etl_lbr_write_perf_trigger(etl_session *s, const etl_lbr_trigger_form *f, const uint8_t *rec, size_t size,
                               int64_t min_ts, int64_t *used_ts);

/* The frames of a perf call chain (nr u64 addresses at chain) as a StackWalk holds them:
   perf's context markers (PERF_CONTEXT_*) and the 0 ending a user stack left out, at most
   max. Returns how many went into frames. */
unsigned etl_perf_callchain_frames(const uint8_t *chain, uint64_t nr, uint64_t *frames, unsigned max);

/* "LBR capture: CAUSE (perf_event_open[ of what]: strerror(e))" in err, for perf_event_open's errno e. */
void etl_lbr_perf_cause(int e, const char *what, char *err, size_t errsize);

/* ---- inside the kernel capture: kcapture.c (the session's side: opening, starting, ending),
   kring.c (rings and records), kprocess.c (processes, threads, images), kexec.c (the command
   line of each exec), ktracepoint.c (tracepoints and their fields), kio.c (disk I/O and system
   calls), kimageid.c (build-ids, kallsyms, modules), kpayload.c (writing). Calls go one way:
   kcapture.c -> kring.c -> kprocess.c, kio.c, knet.c, khardfault.c -> kexec.c -> ktracepoint.c, kimageid.c,
   kpayload.c, kexit.c (and lbrcapture.c -> kcapture.c -> lbr.c
   -> kpayload.c). ---- */

#if defined(__linux__)
#include <linux/perf_event.h>
#endif
#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
#include <pthread.h>
#include <stdatomic.h>

/* The events of each processor. The LBR ones are opened later (etl_kcapture_lbr_start), while
   the reader runs: their fd is published last, with release. */
enum { EV_SIDEBAND, EV_SWITCH, EV_WAKEUP, EV_WAKEUP_NEW, EV_PROFILE, EV_RQ_ISSUE, EV_RQ_COMPLETE, EV_SYS_ENTER,
       EV_SYS_EXIT, EV_MUNMAP, EV_MREMAP, EV_EXIT_GROUP, EV_EXIT, EV_SIG_DELIVER, EV_SIG_GENERATE, EV_EXEC,
       EV_IRQ_ENTRY, EV_IRQ_EXIT, EV_SOFTIRQ_ENTRY, EV_SOFTIRQ_EXIT, EV_FAULT_MIN, EV_FAULT_MAJ,
       EV_NET_STATE, EV_NET_SEND, EV_NET_RECV, EV_NET_RETRANSMIT, EV_NET_UDP, EV_FILEIO,
       EV_VM_MMAP, EV_VM_MMAP_RET, EV_VM_MUNMAP, EV_VM_MUNMAP_RET, EV_VM_MREMAP, EV_VM_MREMAP_RET, EV_VM_BRK,
       EV_VM_BRK_RET, EV_HF_FAULT, EV_HF_ADD,
       EV_PF_USER, EV_PF_KERNEL, EV_PF_MAP,
       EV_LBR_PROFILE, EV_LBR_PMC, EV_COUNT };
/* memory_hard_faults: filemap:mm_filemap_fault (EV_HF_FAULT, each attempt of a file fault) and
   filemap:mm_filemap_add_to_page_cache (EV_HF_ADD), with major-faults (EV_FAULT_MAJ) at the end. */
/* memory_page_faults' kinds: exceptions:page_fault_user and page_fault_kernel (EV_PF_USER,
   EV_PF_KERNEL: each fault's entry), filemap:mm_filemap_map_pages (EV_PF_MAP) and
   mm_filemap_fault (EV_HF_FAULT: a file page), with minor-faults (EV_FAULT_MIN) at the end. */
/* virtual_alloc, vamap: the entries and returns of mmap, munmap, mremap and brk, in pairs. */
#define EV_VM_FIRST EV_VM_MMAP
#define EV_VM_COUNT 8

#define RING_PAGES 256u /* data pages per processor: 1 MiB */
#define EXEC_RING_PAGES 256u /* of the exec samples: 1 MiB, 63 dumps of the stack */

/* A reader's wait for the other readers to have handled their records before ts
   (etl_kothers_wait). */
struct kwait {
    int64_t ts;                /* the time waited for */
    int64_t start;             /* when the wait began (etl_monoclock_exact; 0: none yet) */
    int64_t moved;             /* when the least progress of those waited for last changed */
    int64_t behind;            /* that progress */
};

struct kcpu {
    struct etl_kcapture *k;
    int cpu;
    int fd[EV_COUNT];
    uint64_t got[EV_COUNT];    /* samples of each event read from the ring */
    uint64_t id[EV_COUNT];
    uint8_t *ring;
    size_t ring_len, page;
    pthread_t thread;
    int started;
    int64_t last_ts;           /* timestamps of this processor's buffer never go back */
    /* The NewThreadId of the last CSwitch written of this processor (0 at first: who ran
       before is not known), and the priorities of the threads its CSwitches named last
       (0: none), for the switches that the kernel writes no sample of (switch_record,
       kring.c). */
    uint32_t last_new_tid;
    struct { uint32_t tid; int8_t priority; } prio_seen[256];
    uint32_t out_tid;          /* the thread of the last switch OUT record, preempted or not */
    int out_preempted;
    /* interrupt, dpc: the hard interrupt and the softirq this processor is in (their entry's
       time, INT64_MIN: none seen), paired with their exit into ISR and DPC events */
    int64_t irq_ts, softirq_ts;
    int32_t irq;
    uint32_t softirq_vec;
    uint8_t rec[65536];        /* a record taken out of the ring (it may wrap) */
    /* Records read and not handled yet (see drain, kring.c): copies in q_bytes, in q their
       times and where they are. */
    struct queued { int64_t ts; uint64_t seq; uint32_t off, len; } *q;
    size_t qn, qcap;
    uint8_t *q_bytes;
    size_t q_used, q_bytes_cap;
    uint64_t q_seq;
    /* Image Unloads due later than the record being handled (its image was brought by this
       reader after another reader handled the munmap or exec that removed it): written in
       this processor's time order, when its records reach their time (flush_deferred). */
    struct kdeferred { int64_t ts; uint32_t pid, tid; uint64_t base, size; char *file; } *def;
    size_t ndef, defcap;
    unsigned exec_waited_ms;   /* at the end, how long it waited for execs' command lines */
    unsigned counters_waited_ms; /* how long it waited for the taskstats of exits (kcounters.c) */
    struct kwait exec_wait;    /* of the exec's COMM its handling waits at (etl_kexec_wait) */
    struct kwait task_wait;    /* of the fork or exit its handling waits at (etl_ktask_wait) */
    struct kwait net_wait;     /* of the connection its handling waits at (etl_knet_wait) */
    struct kwait hf_wait;      /* of the major fault its handling waits at (etl_khf_wait) */
    struct kwait pf_wait;      /* of the page fault its handling waits at (etl_kpf_wait) */
    struct kwait vm_wait;      /* of the system call's return its handling waits at (etl_kvm_wait) */
    struct kwait sw_wait;      /* of the context switch its handling waits at (etl_kswitch_wait) */
    struct kwait disk_wait;    /* of the disk completion its handling waits at (etl_kdisk_wait) */
    uint8_t *exec_ring;        /* EV_EXEC's own ring (EXEC_RING_PAGES), read by the exec thread */
    size_t exec_ring_len;
    _Atomic int64_t progress;  /* every record of this processor up to this time is handled */
    _Atomic int64_t stuck_at;  /* its progress when a reader stopped waiting for it */
};

/* Where a tracepoint's fields are in its raw data. */
struct tp_field {
    unsigned off, size;
};

/* What the capture knows of a process (kprocess.c), by pid. */
struct pentry;
/* An exec whose stack dump did not hold its arguments: /proc is read for it once the exec
   rings are (kexec.c). */
struct kexec_pending {
    uint32_t pid;
    int64_t ts;
    uint32_t ppid, uid;        /* /proc/PID/status's PPid and Uid when the sample was read (0 and
                                  UINT32_MAX: the process was gone) */
    char comm[16];
};
#define KEXEC_PENDING_MAX 256u
/* The command line of an exec, from its sample (sched:sched_process_exec), until its COMM
   record takes it (kexec.c). */
struct kexec_note {
    int64_t ts;
    uint32_t pid;
    uint32_t ppid, uid;        /* as the exec's sample was read (struct kexec_pending) */
    char *command_line;
};
#define PTAB_SIZE 1024u

/* The comm of each thread (kprocess.c: Thread/SetName). */
struct kname;
#define NTAB_SIZE 4096u

/* The file I/O BPF programs (kfileio.c). */
struct etl_kfileio;
/* A libbpf skeleton (kbpf.c). */
struct bpf_object_skeleton;

/* A block request issued and not completed yet (kio.c). */
struct disk_req;
/* The system calls entered, the processes' address spaces, the files named (kvmem.c). */
struct kvm_state;
#define DTAB_SIZE 4096u

/* network_tcpip (knet.c): the sockets seen, by their kernel address, and the listeners. */
struct knet_sock;
struct knet_listener;
struct etl_knet_udp_bpf;
#define NETTAB_SIZE 4096u
/* The fields read from the network tracepoints: inet_sock_set_state's ([0] skaddr, oldstate,
   newstate, sport, dport, family, protocol, saddr, daddr, saddr_v6, daddr_v6), sock_send_length's
   and sock_recv_length's ([0] sk, family, protocol, ret, flags), tcp_retransmit_skb's (skaddr,
   state, sport, dport, family, saddr, daddr, saddr_v6, daddr_v6). */
enum { KN_SK, KN_OLDSTATE, KN_NEWSTATE, KN_SPORT, KN_DPORT, KN_FAMILY, KN_PROTOCOL, KN_SADDR, KN_DADDR, KN_SADDR6,
       KN_DADDR6, KN_FIELDS };
enum { KL_SK, KL_FAMILY, KL_PROTOCOL, KL_RET, KL_FLAGS, KL_FIELDS };
enum { KR_SK, KR_STATE, KR_SPORT, KR_DPORT, KR_FAMILY, KR_SADDR, KR_DADDR, KR_SADDR6, KR_DADDR6, KR_FIELDS };

struct etl_kcapture {
    etl_session *s;
    pthread_mutex_t plock;     /* ptab and execs, shared by the readers and the exec thread */
    struct pentry *ptab[PTAB_SIZE];
    struct kexec_note *execs;  /* in the order they were noted */
    size_t nexecs, execs_cap;
    int exec_args;             /* sched_process_exec is sampled (EV_EXEC): command lines at execs
                                  (plock; set before the threads start) */
    struct tp_field exec_filename; /* its __data_loc filename */
    pthread_t exec_thread;     /* etl_kexec_watcher */
    int exec_started;
    /* The exec rings are read by their thread, or by a reader whose exec's COMM finds no note
       (that thread may wait for a processor): one at a time, with what reading needs. */
    pthread_mutex_t exec_lock;
    uint8_t *exec_rec;         /* a record taken out of an exec ring (65536 bytes) */
    struct kexec_pending *exec_pend; /* KEXEC_PENDING_MAX */
    uint32_t flags, stackwalk;
    uint64_t sample_type[EV_COUNT];
    uint8_t counted[EV_COUNT]; /* a tracepoint whose count (PERF_FORMAT_LOST) is checked at the end */
    uint32_t interval_100ns;   /* of the profile */
    etl_lbr_trigger_form lbr_form[2]; /* how EV_LBR_PROFILE and EV_LBR_PMC samples are written */
    unsigned ncpu;
    struct kcpu *cpus;
    atomic_int stop;
    struct tp_field prev_pid, prev_prio, prev_state, next_pid, next_prio, wakeup_pid, wakeup_new_pid;
    /* disk_io: the block tracepoints' fields ([0] block_rq_issue, [1] block_rq_complete), and
       the requests issued and not completed yet (see etl_kdisk_note_issue) */
    struct tp_field rq_dev[2], rq_sector[2], rq_nr_sector[2], rq_rwbs[2];
    pthread_mutex_t dlock;
    struct disk_req *dtab[DTAB_SIZE];
    /* thread: each thread's comm as last seen (the rundown, forks, COMM records) */
    pthread_mutex_t nlock;
    struct kname *ntab[NTAB_SIZE];
    /* interrupt: irq_handler_entry's irq, irq_handler_exit's irq and ret; dpc: softirq_entry's and
       softirq_exit's vec, and each softirq's action (kallsyms; 0 unknown) as the DPC's Routine */
    struct tp_field irq_irq[2], irq_ret, softirq_vec[2];
    uint64_t softirq_routine[ETL_KSOFTIRQS];
    /* file_io, file_io_init, disk_file_io: the BPF programs and what is written (kfileio.c;
       NULL: none of these flags) */
    struct etl_kfileio *fileio;
    /* syscall: raw_syscalls:sys_enter's id, sys_exit's ret */
    struct tp_field sys_id, sys_ret;
    /* network_tcpip: the tracepoints' fields (KN_*, KL_* for send [0] and recv [1], KR_*), the
       sockets (nettab) and listeners seen, and what /proc said of the sockets at the start */
    struct tp_field net_state[KN_FIELDS], net_len[2][KL_FIELDS], net_rtx[KR_FIELDS];
    pthread_mutex_t netlock;
    struct knet_sock *nettab[NETTAB_SIZE];
    struct knet_listener *listeners;
    unsigned net_socks;        /* in nettab */
    /* its UDP BPF programs (knet.bpf.c; NULL: not loaded, UdpIp events from sock_send_length and
       sock_recv_length without addresses) */
    struct etl_knet_udp_bpf *net_udp;
    /* virtual_alloc, vamap (kvmem.c): the fields of the syscalls tracepoints (vm_f[e - EV_VM_FIRST]:
       an entry's arguments, a return's ret) and what pairs them and follows each process */
    struct tp_field vm_f[EV_VM_COUNT][6];
    struct kvm_state *vm;
    struct khf_state *hf;      /* memory_hard_faults (khardfault.c; NULL: not asked) */
    struct kpf_state *pf;      /* memory_page_faults' kinds (kfaultkind.c; NULL: not asked) */
    int pf_kinds;              /* 1: this kernel has the tracepoints that tell them */
    struct kcounters *counters; /* process_counters (kcounters.c): the taskstats of exiting tasks */
    /* cswitch: when each thread (by tid, one slot each: another tid in the slot is not known)
       was switched out and in last, for NewThreadWaitTime (kring.c); NULL: no memory */
    struct kswitched { uint32_t tid; int64_t out_ts, in_ts; } *switched;
    pthread_mutex_t switched_lock[64];
    /* The fields of the unload and exit tracepoints (etl_kexit_unmap_tps), in their order. */
    struct tp_field tpf[EV_COUNT][4];
    struct etl_kbid_cache *bids; /* build-ids of the files mapped (kimageid.c; NULL: no memory) */
    /* What the start did to the system, for the caller to tell (etl_session_kernel_note). */
    char note[160];
};

/* A sample of the block or raw_syscalls events: which, its thread and time, its raw data. */
struct io_sample {
    int e;
    uint32_t tid;
    int64_t ts;
    const uint8_t *raw;
    uint32_t raw_len;
};

/* kpayload.c */
/* The time of an event in c's buffer: ts, or the latest time written there when ts is earlier. */
int64_t etl_korder_ts(struct kcpu *c, int64_t ts);
void etl_kwrite_ev(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid,
                   const uint8_t *payload, size_t n);
/* Adds text to what the capture tells its caller (k->note, "; " between notes). */
void etl_knote(struct etl_kcapture *k, const char *text);
/* LinuxImageID events of the capture: a BuildId after each Image Load and DCStart, and at
   the start's rundown the kernel's modules (KernelModule) and symbols (KernelSymbols). */
void etl_kwrite_build_id(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t base,
                         uint64_t size, uint64_t file_offset, const etl_kbuild_id *b, const char *file);
void etl_kwrite_kernel_module(struct etl_kcapture *k, int64_t ts, uint64_t base, uint64_t size,
                              const etl_kbuild_id *b, const char *name);
void etl_kwrite_kernel_symbols(struct etl_kcapture *k, int64_t ts, uint32_t sequence, const char *text, size_t n);
/* The largest Text a KernelSymbols event of the session holds (its buffers and ETW's record limit). */
size_t etl_kallsyms_chunk_max(struct etl_kcapture *k);

/* kimageid.c */
/* A KernelModule of each module /proc/modules lists with an address (its build-id from
   /sys/module/NAME/notes): how many. */
unsigned etl_kwrite_modules(struct etl_kcapture *k, int64_t ts);
/* /proc/kallsyms as KernelSymbols events of at most max bytes of text: 1 written, 0 nothing
   (its addresses are all 0: kptr_restrict), -1 not readable. */
int etl_kwrite_kallsyms(struct etl_kcapture *k, int64_t ts, size_t max);

/* kring.c */
/* A processor's reader thread (pthread_create's start routine; arg: its struct kcpu). */
void *etl_kreader(void *arg);

/* kprocess.c */
extern _Thread_local struct kcpu *etl_kthis_reader;
void etl_kdefer_unload(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t base,
                       uint64_t size, const char *file);
void etl_kflush_deferred(struct kcpu *c, int64_t ts);
/* An Image event of the mapping [start, start + len) at file offset pgoff; after a Load or
   DCStart, its BuildId (bid: the file's build-id, NULL or size 0 when none is known). */
void etl_kemit_image(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, uint64_t start,
                     uint64_t len, uint64_t pgoff, const char *file, const etl_kbuild_id *bid);
void etl_krundown(struct etl_kcapture *k, int64_t ts, int end);
void etl_kpcache_free(struct etl_kcapture *k);
/* kexec.c */
/* /proc/PID/cmdline into out: its arguments, NUL-separated there, separated by spaces (the
   trailing ones left out); "" when the process is gone. */
void etl_kproc_cmdline(uint32_t pid, char *out, size_t size);
/* /proc/PID/status: its Name into name (when name_size > 0), PPid into *ppid, the real Uid
   into *uid. 0, or -1 when the process is gone (*ppid 0, *uid UINT32_MAX). */
int etl_kproc_status(uint32_t pid, char *name, size_t name_size, uint32_t *ppid, uint32_t *uid);
/*
 * 1 while c is to wait for the readers of the other processors to have handled their records
 * before ts (what happened before a fork, exit or exec may be on another processor); 0 once they
 * have. A reader publishes how far it got before each record (drain), so two readers waiting
 * for each other do not deadlock: the one at the earlier record goes on. A loaded machine
 * keeps a reader behind by as much as hundreds of milliseconds: the wait lasts while the
 * readers waited for get on, and ends when none has for 0.5 s (a reader whose processor
 * something else holds: it is marked stuck, and not waited for again until it gets on), or
 * 2 s after w began. w holds the wait between calls (a new ts begins a new one).
 */
int etl_kothers_wait(struct kcpu *c, struct kwait *w, int64_t ts);
/* The exec samples' thread (pthread_create's start routine; arg: the capture): reads the
   processors' exec rings as each exec wakes it, and notes each exec's command line (pid,
   time) from its stack dump, else from /proc read at once if the process still runs what it
   started, else "". It stops with the readers (k->stop), after a last read. */
void *etl_kexec_watcher(void *arg);
/* The command line noted for pid's exec whose COMM is at ts (perf's time) into out, and the
   parent and user /proc gave then into *ppid and *uid (0, UINT32_MAX: not known): 1, or 0
   when none was noted. The note is taken. */
int etl_kexec_take(struct etl_kcapture *k, uint32_t pid, int64_t ts, char *out, size_t size, uint32_t *ppid,
                   uint32_t *uid);
/* 1 while the record r (an exec's COMM) is to wait: for its exec's note (20 ms at most, after
   the exec and after c found it; final: the readers are ending, 100 ms in all), and for the
   other readers to have handled what came before it (the process's fork, on another
   processor), as etl_kothers_wait says. Not final: returns at once (c comes back at its next
   poll); final: waits. */
int etl_kexec_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final);
/* What reading the exec rings needs (k->exec_rec, k->exec_pend): 0, or -1 (no memory: no
   exec events then). */
int etl_kexec_init(struct etl_kcapture *k);
void etl_kexec_free(struct etl_kcapture *k);
int etl_kexit_unmap_sample(struct kcpu *c, int e, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                           uint32_t raw_len);
/* PERF_RECORD_FORK (fork 1) or PERF_RECORD_EXIT, PERF_RECORD_COMM, PERF_RECORD_MMAP2. */
void etl_ktask_record(struct kcpu *c, const uint8_t *r, uint32_t size, int fork);
/* The kernel's prio of a thread (/proc's stat: priority + 100), or 120 (nice 0) when unknown. */
int etl_kthread_prio(uint32_t pid, uint32_t tid);
/* 1 while the record r (time ts, as the reader's queue has it) is a process's fork or exit
   whose handling is to wait for the other readers to have handled what came before it, as
   etl_kothers_wait says: the fork copies what its parent ran then (an exec another reader
   holds), the exit takes what decides its status and the images it has. Not final: returns
   at once (c comes back at its next poll); final: waits. */
int etl_ktask_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final);
void etl_kcomm_record(struct kcpu *c, const uint8_t *r, uint32_t size, uint16_t misc);
void etl_kmmap2_record(struct kcpu *c, const uint8_t *r, uint32_t size);
/* Frees the thread names (k->ntab). */
void etl_knames_free(struct etl_kcapture *k);

/* ktracepoint.c */
ssize_t etl_kread_small(const char *path, char *buf, size_t size);
/* A tracepoint field's value in raw (0 when it lies outside). */
int64_t etl_ktp_get(const uint8_t *raw, uint32_t raw_len, const struct tp_field *f);
/* The optional tracepoints of image unloads and exit statuses: each one's event, the kernel
   flag it is recorded for, its group and name, and the fields read from it. */
struct etl_ktp_optional {
    int ev;
    uint32_t flag;
    const char *group, *name, *fields[4];
};
extern const struct etl_ktp_optional etl_kexit_unmap_tps[];
extern const size_t etl_kexit_unmap_ntps;
int etl_ktracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize);
/* A tracepoint's id and format (event "group:name"): 0, or -1 with the reason in err. */
int etl_ktracepoint(const char *event, uint64_t *id, char *format, size_t fsize, char *err, size_t errsize);
/* The offset and size of field name (any size, "name[N]" arrays included) in a tracepoint's
   format: 0, or -1 (err says so). */
int etl_ktp_find_any(const char *format, const char *event, const char *name, struct tp_field *f, char *err,
                     size_t errsize);
/* An unsigned field of 1, 2, 4 or 8 bytes in raw (0 when it lies outside). */
uint64_t etl_ktp_uint(const uint8_t *raw, uint32_t raw_len, const struct tp_field *f);

/* knet.c */
/* The network tracepoints' fields (tracepoint fields of any size, arrays included): 0, or -1 (err:
   the tracepoint or field this kernel lacks). */
int etl_knet_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize);
/* The listening TCP sockets at the start (/proc/net/tcp, tcp6) and the processes whose file
   descriptors hold them, so that connections they accept name their process. */
void etl_knet_rundown(struct etl_kcapture *k);
/* 1 while r, a connection's change of state whose socket or listener no reader has noted, is to
   wait for the other readers to have handled what came before it (etl_kothers_wait). */
int etl_knet_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final);
void etl_knet_sample(struct kcpu *c, int e, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len);
void etl_knet_free(struct etl_kcapture *k);
/* network_tcpip's UDP BPF programs loaded (their UdpIp events name each datagram's ends); when
   the machine refuses them, k's note says why and UdpIp events come from the tracepoints, with
   no addresses. Then each processor's BPF_OUTPUT event given to them (0, or -1 with err). */
void etl_knet_udp_load(struct etl_kcapture *k);
int etl_knet_udp_set_cpu(struct etl_kcapture *k, int cpu, int fd, char *err, size_t errsize);

/* kio.c */
/* kvmem.c: virtual_alloc and vamap. The entries of mmap, munmap, mremap and brk are noted as
   their records are read from a ring (etl_kvm_note, before the records are sorted), as their
   returns may be on another processor; a return waits for its entry (etl_kvm_wait: while the
   other readers are not past it, etl_kothers_wait) and is handled with it (etl_kvm_record, in
   its processor's buffer). */
int etl_kvm_init(struct etl_kcapture *k);
void etl_kvm_free(struct etl_kcapture *k);
void etl_kvm_note(struct kcpu *c, const uint8_t *r, uint32_t size);
int etl_kvm_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final);
/* A sample of event e at sample_ts, written at ts (etl_korder_ts's: it may be later). */
void etl_kvm_record(struct kcpu *c, int e, int64_t sample_ts, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                    uint32_t raw_len);
/* A process's exit or exec at ts: what was known of its address space before it is forgotten. */
void etl_kvm_forget(struct etl_kcapture *k, uint32_t pid, int64_t ts);
/* kcounters.c: process_counters. The kernel's taskstats of each exiting thread (generic
   netlink, registered for every processor), read by a thread of its own as they come: its
   faults, and its process's peak resident and virtual sizes, taken before the memory goes.
   Start: 0, or -1 (err: no taskstats, or not allowed). A process's end (its leader's EXIT
   record, before Process End) writes PerfCtr from what its threads' exits said; the stop's
   rundown writes PerfCtrRundown of every process from /proc. */
int etl_kcounters_start(struct etl_kcapture *k, char *err, size_t errsize);
void etl_kcounters_stop(struct etl_kcapture *k);
void etl_kcounters_free(struct etl_kcapture *k);
void etl_kcounters_exit(struct kcpu *c, int64_t ts, uint32_t pid);
void etl_kcounters_rundown(struct etl_kcapture *k, int64_t ts);
/* A process's counters now, from /proc/PID/status (VmPeak, VmSize, VmHWM, VmRSS, VmData +
   VmStk), /proc/PID/stat (minflt + majflt) and /proc/PID/fd (its descriptors): 0, or -1 (gone). */
int etl_kproc_counters_read(uint32_t pid, etl_kproc_counters *pc);
/* ktracepoint.c: the ids and fields of the syscalls tracepoints virtual_alloc and vamap read:
   0, or -1 (err: this kernel has none, CONFIG_FTRACE_SYSCALLS). */
int etl_kvm_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize);
void etl_kdisk_note_issue(struct kcpu *c, const uint8_t *r, uint32_t size);
int etl_kdisk_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final);
void etl_kdisk_free(struct etl_kcapture *k);
void etl_kio_record(struct kcpu *c, const struct io_sample *s);

/* khardfault.c: memory_hard_faults. Each thread's file fault attempts (filemap:mm_filemap_fault)
   and the pages it added to the page cache are noted as their records are read (etl_khf_note,
   before the records are sorted: the fault's end may be on another processor); a major fault
   (perf's major-faults, at its end) waits for the other readers to be past it (etl_khf_wait)
   and is written with what its thread noted before it as a HardFault (etl_khf_fault), after a
   FileIo Name the first time its file is seen. */
int etl_khf_init(struct etl_kcapture *k);
void etl_khf_free(struct etl_kcapture *k);
/* The tracepoints' ids and fields: 0, or -1 (err: this kernel lacks them). */
int etl_khf_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize);
void etl_khf_note(struct kcpu *c, const uint8_t *r, uint32_t size);
int etl_khf_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final);
/* A major fault of thread tid of pid at address addr, at sample_ts (written at ts, etl_korder_ts's). */
void etl_khf_fault(struct kcpu *c, int64_t sample_ts, int64_t ts, uint32_t pid, uint32_t tid, uint64_t addr);
/* kfaultkind.c: memory_page_faults' kinds. Each thread's fault entries (exceptions tracepoints:
   address, error code) and file page faults (filemap's) are noted as their records are read
   (etl_kpf_note); a minor fault's end (perf's) whose entry was not noted by its own reader
   waits for the other readers to be past it (etl_kpf_wait), and its kind is that of its
   thread's last entry at its page, with whether a file page was faulted on since
   (etl_kpf_fault: an ETL_HOOK_PAGE_FAULT_*). Where this
   kernel lacks the tracepoints (non-x86), pf_kinds is 0 and each minor fault DemandZeroFault. */
int etl_kpf_init(struct etl_kcapture *k);
void etl_kpf_free(struct etl_kcapture *k);
int etl_kpf_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize);
void etl_kpf_note(struct kcpu *c, const uint8_t *r, uint32_t size);
int etl_kpf_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final);
/* kring.c: 1 while the context switch r (at ts) is to wait: its new thread's last switch out
   not handled yet (the reader of the processor the thread left may be behind this one), while
   the other readers are not past it (etl_kothers_wait), so that its NewThreadWaitTime is
   known. Not final: returns at once; final: waits. */
int etl_kswitch_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final);
uint16_t etl_kpf_fault(struct kcpu *c, int64_t sample_ts, uint32_t tid, uint64_t addr, int major);
/* kfileio.c: with any of the file I/O flags, their BPF programs loaded (0, or -1 with err);
   each processor's BPF output event given to them; the programs attached (before the events
   are enabled); a record (a sample of EV_FILEIO) written as FileIo events; the FileRundown of
   the open files at the stop (how many); freed. */
int etl_kfileio_load(struct etl_kcapture *k, char *err, size_t errsize);
int etl_kfileio_set_cpu(struct etl_kcapture *k, int cpu, int fd, char *err, size_t errsize);
int etl_kfileio_attach(struct etl_kcapture *k, char *err, size_t errsize);
void etl_kfileio_sample(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len);
unsigned etl_kfileio_rundown(struct etl_kcapture *k, int64_t ts);
void etl_kfileio_free(struct etl_kcapture *k);
/* kbpf.c: libbpf's messages kept (from now, the last in etl_kbpf_last, this thread's: libbpf
   prints nothing), for the errors of the BPF programs' loads; a skeleton's programs detached,
   by threads at once (they wait for RCU grace periods), before its destroy. */
extern _Thread_local char etl_kbpf_last[256];
void etl_kbpf_listen(void);
void etl_kbpf_detach_all(struct bpf_object_skeleton *s);

#endif /* Linux with perf events */

#endif
