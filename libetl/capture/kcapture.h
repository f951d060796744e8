/* SPDX-License-Identifier: MIT */
/* Kernel capture's payload encoders and Linux-to-Windows mappings, and its hooks in the session engine. Private to libetl. */
#ifndef ETL_KCAPTURE_H
#define ETL_KCAPTURE_H
#ifndef ETL_BUILDING_LIBRARY
#error "capture/kcapture.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* Hooks and versions of what kernel capture writes (etl-format.md section 8, as
   perfview_diaghub.kernel.1.etl has them). */
#define ETL_KHOOK_PROCESS_START   0x0301 /* SYSTEM, v4 */
#define ETL_KHOOK_PROCESS_END     0x0302 /* SYSTEM, v4 */
#define ETL_KHOOK_PROCESS_DCSTART 0x0303 /* PERFINFO, v4 */
#define ETL_KHOOK_PROCESS_DCEND   0x0304 /* PERFINFO, v4 */
#define ETL_KHOOK_THREAD_START    0x0501 /* SYSTEM, v3 (and the three below) */
#define ETL_KHOOK_THREAD_END      0x0502
#define ETL_KHOOK_THREAD_DCSTART  0x0503
#define ETL_KHOOK_THREAD_DCEND    0x0504
#define ETL_KHOOK_IMAGE_LOAD      0x030A /* SYSTEM, v3 (and the two below) */
#define ETL_KHOOK_IMAGE_DCSTART   0x1403
#define ETL_KHOOK_IMAGE_DCEND     0x1404
#define ETL_KHOOK_CSWITCH         0x0524 /* PERFINFO, v4 */
#define ETL_KHOOK_READY_THREAD    0x0532 /* PERFINFO, v2 (and the three below) */
#define ETL_KHOOK_SAMPLED_PROFILE 0x0F2E
#define ETL_KHOOK_PMC_SAMPLE      0x0F2F /* PERFINFO, v2: a PMC interrupt (an LBR trigger's sample) */
#define ETL_KHOOK_STACK           0x1820
#define ETL_KHOOK_RUNDOWN_COMPLETE 0x0008
#define ETL_KHOOK_DISK_READ       0x010A /* PERFINFO, v3 (and the five below) */
#define ETL_KHOOK_DISK_WRITE      0x010B
#define ETL_KHOOK_DISK_READ_INIT  0x010C
#define ETL_KHOOK_DISK_WRITE_INIT 0x010D
#define ETL_KHOOK_DISK_FLUSH      0x010E
#define ETL_KHOOK_DISK_FLUSH_INIT 0x010F
#define ETL_KHOOK_SYSCALL_ENTER   0x0F33 /* PERFINFO, v2 (and the one below) */
#define ETL_KHOOK_SYSCALL_EXIT    0x0F34
#define ETL_KHOOK_IMAGE_UNLOAD    0x1402 /* SYSTEM, v3 */

/* The header each hook above is written with: *system 1 for SYSTEM64, 0 for PERFINFO64, and
   its version. 0, or -1 for another hook. */
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

/* The payload encoders: each writes the 64-bit payload into out (NULL: nowhere) and returns
   its size; when that is above cap, only what fitted was written, and out holds no payload. */
size_t etl_kpayload_process(uint8_t *out, size_t cap, const etl_kproc_desc *p);
size_t etl_kpayload_thread(uint8_t *out, size_t cap, uint32_t pid, uint32_t tid, uint8_t base_priority);
size_t etl_kpayload_image(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, const char *file_name);
size_t etl_kpayload_cswitch(uint8_t *out, size_t cap, uint32_t new_tid, uint32_t old_tid, int8_t new_priority,
                            int8_t old_priority, uint8_t wait_reason, uint8_t wait_mode, uint8_t state);
size_t etl_kpayload_ready_thread(uint8_t *out, size_t cap, uint32_t tid);
size_t etl_kpayload_sample(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid);
/* PMC interrupt: InstructionPointer, ThreadId, ProfileSource (KPROFILE_SOURCE), Reserved. */
size_t etl_kpayload_pmc(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid, uint16_t profile_source);
size_t etl_kpayload_stack(uint8_t *out, size_t cap, int64_t event_ts, uint32_t pid, uint32_t tid,
                          const uint64_t *frames, unsigned count);

/* KPROFILE_SOURCE ProfileBranchInstructions: the counter the "pmc" LBR trigger samples. */
#define ETL_KPROFILE_BRANCH_INSTRUCTIONS 6

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
/* PerfInfo SysClEnter (SysCallAddress) and SysClExit (SysCallNtStatus). */
size_t etl_kpayload_syscall_enter(uint8_t *out, size_t cap, uint64_t address);
size_t etl_kpayload_syscall_exit(uint8_t *out, size_t cap, uint32_t nt_status);

/* What a block request's rwbs (block tracepoints' "FWS", "R", ...; n bytes, NUL-padded) says:
   its kind (ETL_KIO_*) and Windows IRP flags (*irp_flags: IRP_READ_OPERATION 0x100,
   IRP_WRITE_OPERATION 0x200, IRP_SYNCHRONOUS_API 0x4 for 'S'). */
enum { ETL_KIO_OTHER, ETL_KIO_READ, ETL_KIO_WRITE, ETL_KIO_FLUSH };
int etl_kio_kind(const char *rwbs, size_t n, uint32_t *irp_flags);
/* A Linux system call's return value as an NTSTATUS: 0 (STATUS_SUCCESS) for 0 and above,
   0xE0000000 | errno for -errno (error severity, customer bit: no Windows code is one). */
uint32_t etl_kntstatus(int64_t ret);

/* A Linux priority (the kernel's prio: 0..99 real time, 100..139 nice -20..19) as a Windows
   thread priority (0..31: 16..31 real time, 8 normal). */
int8_t etl_kpriority(int prio);
/* KTHREAD_STATE, KWAIT_REASON and wait mode of a thread switched out in Linux task state
   prev_state (sched_switch's, TASK_REPORT bits). */
void etl_kstate(int64_t prev_state, uint8_t *state, uint8_t *wait_reason, uint8_t *wait_mode);

/* ---- image unloads ---- */

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

/* ---- exit status ---- */

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

/* ---- the session engine's side (engine/pool.c) ---- */

/* Adds n to the session's EventsLost. */
void etl_session_add_events_lost(etl_session *s, uint64_t n);

/* ---- the kernel capture's hook in its session ---- */

/* The session's kernel capture (NULL: none): the context of the hook that
   etl_session_enable_kernel registers with the session (engine/engine.h). */
struct etl_kcapture;
struct etl_kcapture *etl_session_kcapture(const etl_session *s);
/* Ends a kernel capture: the readers drain and stop, the DCEnd rundown is written, k is freed.
   The hook's stop: etl_session_stop calls it before it flushes. */
void etl_kcapture_end(etl_session *s, struct etl_kcapture *k);

/* LBR (lbrcapture.c): the kernel capture k samples the triggers of cfg with perf events that
   take branch stacks (branch_sample_type), in its own rings, each sample written with
   etl_lbr_write_perf_trigger; a "profile" trigger's event replaces the cpu-clock profile
   source. 0, or -1 with the cause in err (nothing changed). Stop: the LBR events disabled. */
struct etl_lbr_config;
int etl_kcapture_lbr_start(struct etl_kcapture *k, const struct etl_lbr_config *cfg, uint64_t branch_sample_type,
                           char *err, size_t errsize);
void etl_kcapture_lbr_stop(struct etl_kcapture *k);

#endif
