/* SPDX-License-Identifier: MIT */
/* Kernel capture: Linux perf events written as the NT Kernel Logger's event classes (doc/kernel-events.md). */
/* perf_event_open, pthread_setaffinity_np, CPU_SET: Linux interfaces. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/perf_event.h>
#endif

#include "format/format.h"
#include "capture/kcapture.h"
#include "capture/lbr.h"
#include "engine/engine.h"

/* The session calls the kernel capture at its stop through this hook, registered by
   etl_session_enable_kernel: the capture's context is the hook's. */
static void kcapture_stop(etl_session *s, void *k) { etl_kcapture_end(s, k); }
static const struct etl_session_hook kcapture_hook = { "kernel capture", kcapture_stop };

struct etl_kcapture *etl_session_kcapture(const etl_session *s) { return etl_session_hook_context(s, &kcapture_hook); }

/* ------------------------------------------------------------------ flags and names */

static const struct {
    const char *name;
    uint32_t flag;
} kernel_flags[] = {
    { "process", ETL_KERNEL_PROCESS },   { "thread", ETL_KERNEL_THREAD },         { "image_load", ETL_KERNEL_IMAGE_LOAD },
    { "cswitch", ETL_KERNEL_CSWITCH },   { "dispatcher", ETL_KERNEL_DISPATCHER }, { "profile", ETL_KERNEL_PROFILE },
    { "disk_io", ETL_KERNEL_DISK_IO },   { "syscall", ETL_KERNEL_SYSCALL },
};

uint32_t etl_kernel_flag_from_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof kernel_flags / sizeof kernel_flags[0]; i++)
        if (strcmp(kernel_flags[i].name, name) == 0) return kernel_flags[i].flag;
    return 0;
}

char *etl_kernel_flags_format(uint32_t flags, char *out, size_t size)
{
    size_t o = 0;

    if (!size) return out;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof kernel_flags / sizeof kernel_flags[0]; i++) {
        if (!(flags & kernel_flags[i].flag)) continue;
        int n = snprintf(out + o, size - o, "%s%s", o ? "," : "", kernel_flags[i].name);
        if (n < 0 || (size_t)n >= size - o) {
            out[o] = '\0'; /* whole names only */
            break;
        }
        o += (size_t)n;
    }
    return out;
}

/* ------------------------------------------------------------------ payloads */

/* A payload being built: bytes go in while they fit; n counts them all. */
struct kp {
    uint8_t *p;
    size_t cap, n;
};

static void put(struct kp *b, const void *v, size_t len)
{
    if (b->p && b->n + len <= b->cap) memcpy(b->p + b->n, v, len);
    b->n += len;
}
static void put8(struct kp *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct kp *b, uint32_t v)
{
    uint8_t t[4];
    etl_put32(t, v);
    put(b, t, 4);
}
static void put64(struct kp *b, uint64_t v)
{
    uint8_t t[8];
    etl_put64(t, v);
    put(b, t, 8);
}
static void put_str8(struct kp *b, const char *s) { put(b, s ? s : "", strlen(s ? s : "") + 1); }
static void put_str16(struct kp *b, const char *s)
{
    size_t units = strlen(s ? s : "") + 4; /* UTF-16 takes at most one unit per UTF-8 byte */
    uint8_t stack[1024], *t = units * 2 <= sizeof stack ? stack : malloc(units * 2);

    if (!t) {
        put(b, "\0", 2); /* no memory: the string is left empty */
        return;
    }
    put(b, t, etl_utf8_to_utf16(t, s ? s : "", (uint32_t)units));
    if (t != stack) free(t);
}
static size_t done(const struct kp *b) { return b->n; }
static struct kp kp_start(uint8_t *out, size_t cap) { return (struct kp){ out, cap, 0 }; }

size_t etl_kpayload_process(uint8_t *out, size_t cap, const etl_kproc_desc *p)
{
    struct kp b = kp_start(out, cap);

    put64(&b, 0);              /* UniqueProcessKey: no EPROCESS */
    put32(&b, p->pid);
    put32(&b, p->ppid);
    put32(&b, 0);              /* SessionId */
    put32(&b, (uint32_t)p->exit_status);
    put64(&b, 0);              /* DirectoryTableBase */
    put32(&b, 0);              /* Flags */
    if (p->uid == UINT32_MAX) {
        put32(&b, 0);          /* no SID known */
    } else {
        /* TOKEN_USER {Sid, Attributes}: Sid is not an address here but the offset of the SID
           from the structure (it must not be 0, which would mean "no SID"). */
        put64(&b, 16);
        put64(&b, 0);
        /* S-1-22-1-uid: revision 1, two sub-authorities, authority 22 (big-endian, 6 bytes). */
        put8(&b, 1);
        put8(&b, 2);
        put(&b, "\0\0\0\0\0\x16", 6);
        put32(&b, 1);
        put32(&b, p->uid);
    }
    put_str8(&b, p->name);
    put_str16(&b, p->command_line);
    put_str16(&b, "");         /* PackageFullName */
    put_str16(&b, "");         /* ApplicationId */
    return done(&b);
}

size_t etl_kpayload_thread(uint8_t *out, size_t cap, uint32_t pid, uint32_t tid, uint8_t base_priority)
{
    struct kp b = kp_start(out, cap);

    put32(&b, pid);
    put32(&b, tid);
    /* StackBase, StackLimit, UserStackBase, UserStackLimit, StartAddr, Win32StartAddr, TebBase */
    for (int i = 0; i < 7; i++) put64(&b, 0);
    put32(&b, 0);              /* SubProcessTag */
    put8(&b, base_priority);
    put8(&b, 0);               /* PagePriority */
    put8(&b, 0);               /* IoPriority */
    put8(&b, 0);               /* ThreadFlags */
    return done(&b);
}

size_t etl_kpayload_image(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, const char *file_name)
{
    struct kp b = kp_start(out, cap);

    put64(&b, base);
    put64(&b, size);
    put32(&b, pid);
    put32(&b, 0);              /* ImageChecksum */
    put32(&b, 0);              /* TimeDateStamp */
    put32(&b, 0);              /* SignatureLevel, SignatureType, Reserved0 */
    put64(&b, 0);              /* DefaultBase */
    for (int i = 0; i < 4; i++) put32(&b, 0); /* Reserved1..4 */
    put_str16(&b, file_name);
    return done(&b);
}

size_t etl_kpayload_cswitch(uint8_t *out, size_t cap, uint32_t new_tid, uint32_t old_tid, int8_t new_priority,
                            int8_t old_priority, uint8_t wait_reason, uint8_t wait_mode, uint8_t state)
{
    struct kp b = kp_start(out, cap);

    put32(&b, new_tid);
    put32(&b, old_tid);
    put8(&b, (uint8_t)new_priority);
    put8(&b, (uint8_t)old_priority);
    put8(&b, 0);               /* PreviousCState */
    put8(&b, 0);               /* SpareByte */
    put8(&b, wait_reason);
    put8(&b, wait_mode);
    put8(&b, state);
    put8(&b, 0);               /* OldThreadWaitIdealProcessor */
    put32(&b, 0);              /* NewThreadWaitTime */
    put32(&b, 0);              /* OldThreadRemainingQuantum */
    return done(&b);
}

size_t etl_kpayload_ready_thread(uint8_t *out, size_t cap, uint32_t tid)
{
    struct kp b = kp_start(out, cap);

    put32(&b, tid);
    put32(&b, 0);              /* AdjustReason, AdjustIncrement, Flag, reserved */
    return done(&b);
}

size_t etl_kpayload_sample(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid)
{
    struct kp b = kp_start(out, cap);

    put64(&b, ip);
    put32(&b, tid);
    put8(&b, 1);               /* Count (u16): one sample */
    put8(&b, 0);
    put8(&b, 0);               /* Flags */
    put8(&b, 0);               /* Rank */
    return done(&b);
}

size_t etl_kpayload_pmc(uint8_t *out, size_t cap, uint64_t ip, uint32_t tid, uint16_t profile_source)
{
    struct kp b = kp_start(out, cap);

    put64(&b, ip);
    put32(&b, tid);
    put8(&b, (uint8_t)profile_source);
    put8(&b, (uint8_t)(profile_source >> 8));
    put8(&b, 0);
    put8(&b, 0);               /* Reserved */
    return done(&b);
}

size_t etl_kpayload_stack(uint8_t *out, size_t cap, int64_t event_ts, uint32_t pid, uint32_t tid,
                          const uint64_t *frames, unsigned count)
{
    struct kp b = kp_start(out, cap);

    put64(&b, (uint64_t)event_ts);
    put32(&b, pid);
    put32(&b, tid);
    for (unsigned i = 0; i < count; i++) put64(&b, frames[i]);
    return done(&b);
}

size_t etl_kpayload_disk_io(uint8_t *out, size_t cap, const etl_kdisk_desc *d)
{
    struct kp b = kp_start(out, cap);

    put32(&b, d->disk_number);
    put32(&b, d->irp_flags);
    put32(&b, d->transfer_size);
    put32(&b, 0);              /* Reserved */
    put64(&b, (uint64_t)d->byte_offset);
    put64(&b, 0);              /* FileObject: the block layer has no file */
    put64(&b, d->irp);
    put64(&b, d->response_time);
    put32(&b, d->issuing_tid);
    put32(&b, 0);              /* padding: Windows' ETW_DISKIO_READWRITE_V3 is 0x38 bytes */
    return done(&b);
}

size_t etl_kpayload_disk_flush(uint8_t *out, size_t cap, const etl_kdisk_desc *d)
{
    struct kp b = kp_start(out, cap);

    put32(&b, d->disk_number);
    put32(&b, d->irp_flags);
    put64(&b, d->response_time);
    put64(&b, d->irp);
    put32(&b, d->issuing_tid);
    put32(&b, 0);              /* padding: ETW_DISKIO_FLUSH_BUFFERS_V3 is 0x20 bytes */
    return done(&b);
}

size_t etl_kpayload_disk_init(uint8_t *out, size_t cap, uint64_t irp, uint32_t issuing_tid)
{
    struct kp b = kp_start(out, cap);

    put64(&b, irp);
    put32(&b, issuing_tid);
    put32(&b, 0);              /* padding: WMI_DISKIO_READWRITE_INIT is 0x10 bytes */
    return done(&b);
}

size_t etl_kpayload_syscall_enter(uint8_t *out, size_t cap, uint64_t address)
{
    struct kp b = kp_start(out, cap);

    put64(&b, address);
    return done(&b);
}

size_t etl_kpayload_syscall_exit(uint8_t *out, size_t cap, uint32_t nt_status)
{
    struct kp b = kp_start(out, cap);

    put32(&b, nt_status);
    return done(&b);
}

/* ------------------------------------------------------------------ header forms */

int etl_kcapture_form(uint16_t hook, int *system, uint16_t *version)
{
    static const struct {
        uint16_t hook;
        uint8_t system, version;
    } forms[] = {
        { ETL_KHOOK_PROCESS_START, 1, 4 },   { ETL_KHOOK_PROCESS_END, 1, 4 },     { ETL_KHOOK_PROCESS_DCSTART, 0, 4 },
        { ETL_KHOOK_PROCESS_DCEND, 0, 4 },   { ETL_KHOOK_THREAD_START, 1, 3 },    { ETL_KHOOK_THREAD_END, 1, 3 },
        { ETL_KHOOK_THREAD_DCSTART, 1, 3 },  { ETL_KHOOK_THREAD_DCEND, 1, 3 },    { ETL_KHOOK_IMAGE_LOAD, 1, 3 },
        { ETL_KHOOK_IMAGE_DCSTART, 1, 3 },   { ETL_KHOOK_IMAGE_DCEND, 1, 3 },     { ETL_KHOOK_CSWITCH, 0, 4 },
        { ETL_KHOOK_READY_THREAD, 0, 2 },    { ETL_KHOOK_SAMPLED_PROFILE, 0, 2 }, { ETL_KHOOK_STACK, 0, 2 },
        { ETL_KHOOK_RUNDOWN_COMPLETE, 0, 2 }, { ETL_KHOOK_PMC_SAMPLE, 0, 2 },
        { ETL_KHOOK_DISK_READ, 0, 3 },       { ETL_KHOOK_DISK_WRITE, 0, 3 },      { ETL_KHOOK_DISK_READ_INIT, 0, 3 },
        { ETL_KHOOK_DISK_WRITE_INIT, 0, 3 }, { ETL_KHOOK_DISK_FLUSH, 0, 3 },      { ETL_KHOOK_DISK_FLUSH_INIT, 0, 3 },
        { ETL_KHOOK_SYSCALL_ENTER, 0, 2 },   { ETL_KHOOK_SYSCALL_EXIT, 0, 2 },
        { ETL_KHOOK_IMAGE_UNLOAD, 1, 3 },
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (forms[i].hook == hook) {
            *system = forms[i].system;
            *version = forms[i].version;
            return 0;
        }
    return -1;
}

int etl_kwrite(etl_session *s, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, const uint8_t *payload,
               size_t n)
{
    etl_data d = { payload, (uint32_t)n };
    int system;
    uint16_t version;

    if (etl_kcapture_form(hook, &system, &version) != 0) return ETL_FAILED;
    if (system) return etl_session_write_system(s, ts, hook, version, pid, tid, &d, 1);
    return etl_session_write_perfinfo(s, ts, hook, version, &d, n ? 1 : 0);
}

/* ------------------------------------------------------------------ mappings */

int8_t etl_kpriority(int prio)
{
    if (prio < 0) return 0;
    if (prio < 100) return (int8_t)(16 + ((99 - prio) * 15 + 49) / 99); /* real time 1..99 -> 16..31 */
    if (prio > 139) prio = 139;
    return (int8_t)(8 - (prio - 120) * 7 / 20); /* nice -20..19 -> 15..2, nice 0 -> 8 */
}

/* KTHREAD_STATE and KWAIT_REASON values used below. */
enum { KS_READY = 1, KS_TERMINATED = 4, KS_WAITING = 5 };
enum { KW_EXECUTIVE = 0, KW_SUSPENDED = 5, KW_USER_REQUEST = 6, KW_WR_TERMINATED = 22, KW_WR_PREEMPTED = 32,
       KW_WR_YIELD_EXECUTION = 33 };

void etl_kstate(int64_t prev_state, uint8_t *state, uint8_t *wait_reason, uint8_t *wait_mode)
{
    uint64_t st = (uint64_t)prev_state;

    *wait_mode = 0;
    if (st & 0x100) { /* TASK_REPORT_MAX: preempted while runnable ("R+") */
        *state = KS_READY;
        *wait_reason = KW_WR_PREEMPTED;
    } else if ((st & 0xFF) == 0) { /* runnable, switched out without preemption (yield) */
        *state = KS_READY;
        *wait_reason = KW_WR_YIELD_EXECUTION;
    } else if (st & 0x30) { /* X (dead), Z (zombie) */
        *state = KS_TERMINATED;
        *wait_reason = KW_WR_TERMINATED;
    } else if (st & 0x0C) { /* T (stopped), t (traced) */
        *state = KS_WAITING;
        *wait_reason = KW_SUSPENDED;
    } else if (st & 0x01) { /* S: an interruptible sleep, what a user wait is */
        *state = KS_WAITING;
        *wait_reason = KW_USER_REQUEST;
        *wait_mode = 1;
    } else { /* D (uninterruptible), P (parked), I (idle kernel thread) */
        *state = KS_WAITING;
        *wait_reason = KW_EXECUTIVE;
    }
}

int etl_kio_kind(const char *rwbs, size_t n, uint32_t *irp_flags)
{
    size_t len = strnlen(rwbs, n), i = 0;
    int kind = ETL_KIO_OTHER;

    *irp_flags = 0;
    /* blk_fill_rwbs: 'F' for a preflush, then the operation (W, R, F flush, D discard, DE,
       N other), then F (FUA), A (readahead), S (sync), M (metadata). */
    if (len >= 2 && rwbs[0] == 'F' && strchr("WRFDN", rwbs[1])) i = 1;
    if (i < len) {
        if (rwbs[i] == 'R') kind = ETL_KIO_READ, *irp_flags |= 0x100;       /* IRP_READ_OPERATION */
        else if (rwbs[i] == 'W') kind = ETL_KIO_WRITE, *irp_flags |= 0x200; /* IRP_WRITE_OPERATION */
        else if (rwbs[i] == 'F') kind = ETL_KIO_FLUSH;
        i++;
    }
    if (memchr(rwbs + i, 'S', len - i)) *irp_flags |= 0x4;                 /* IRP_SYNCHRONOUS_API */
    return kind;
}

uint32_t etl_kntstatus(int64_t ret)
{
    if (ret >= 0) return 0;
    if (ret < -0xFFFF) return 0xE000FFFFu; /* not an errno */
    return 0xE0000000u | (uint32_t)-ret;
}

/* ------------------------------------------------------------------ unloads and exit status */

int etl_kunmap_range(uint64_t addr, uint64_t len, uint64_t page, uint64_t *lo, uint64_t *hi)
{
    uint64_t pages = len / page + (len % page != 0);

    if (!page || addr % page || !len || pages > (UINT64_MAX - addr) / page) return -1;
    *lo = addr;
    *hi = addr + pages * page;
    return 0;
}

int etl_kmremap_range(uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags, uint64_t page,
                      uint64_t *lo, uint64_t *hi)
{
    const uint64_t maymove = 1, fixed = 2, dontunmap = 4; /* MREMAP_* */
    uint64_t old_lo, old_hi, new_lo, new_hi;

    if ((flags & ~(maymove | fixed | dontunmap)) || ((flags & (fixed | dontunmap)) && !(flags & maymove)) ||
        (flags & dontunmap))
        return -1; /* refused, or the old range stays mapped */
    if (etl_kunmap_range(addr, old_len, page, &old_lo, &old_hi) != 0 ||
        etl_kunmap_range(addr, new_len, page, &new_lo, &new_hi) != 0)
        return -1; /* refused (or old_len 0: a copy of a shared mapping, nothing removed) */
    *lo = flags & fixed ? old_lo : new_hi;
    *hi = old_hi;
    return *lo < *hi ? 0 : -1;
}

int etl_kunmap_image(uint64_t lo, uint64_t hi, uint64_t *code_lo, uint64_t *code_hi)
{
    if (hi <= *code_lo || lo >= *code_hi) return ETL_KUNMAP_KEPT;
    if (lo <= *code_lo && hi >= *code_hi) return ETL_KUNMAP_GONE;
    if (lo <= *code_lo) *code_lo = hi;
    else if (hi >= *code_hi) *code_hi = lo;
    else return ETL_KUNMAP_KEPT; /* a hole: code on both sides */
    return ETL_KUNMAP_SHRUNK;
}

int etl_ksignal_default(int sig)
{
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:             /* ignored, or continue */
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: return 0; /* stop */
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE: case SIGSEGV:
    case SIGXCPU: case SIGXFSZ: case SIGSYS: return 2;
    default: return sig > 0 && sig <= 64 ? 1 : 0;
    }
}

void etl_kexit_init(etl_kexit *x)
{
    memset(x, 0, sizeof *x);
    x->group_ts = x->fatal_ts = x->kill_ts = x->leader_ts = INT64_MAX;
}

void etl_kexit_group(etl_kexit *x, int64_t ts, int64_t code)
{
    if (ts >= x->group_ts) return;
    x->group_ts = ts;
    x->group_code = (int)(code & 0xFF); /* what waitpid's WEXITSTATUS gives */
}

void etl_kexit_leader(etl_kexit *x, int64_t ts, int64_t code)
{
    if (ts >= x->leader_ts) return;
    x->leader_ts = ts;
    x->leader_code = (int)(code & 0xFF);
}

/* Keeps the ETL_KEXIT_SIGNALS latest of x->sent in time order. */
static void kexit_note(etl_kexit *x, int64_t ts, int sig)
{
    unsigned i;

    if (x->nsent == ETL_KEXIT_SIGNALS) {
        if (ts < x->sent[0].ts) return;
        memmove(x->sent, x->sent + 1, (ETL_KEXIT_SIGNALS - 1) * sizeof x->sent[0]);
        x->nsent--;
    }
    for (i = x->nsent; i > 0 && x->sent[i - 1].ts > ts; i--) x->sent[i] = x->sent[i - 1];
    x->sent[i].ts = ts;
    x->sent[i].sig = sig;
    x->nsent++;
}

void etl_kexit_sent(etl_kexit *x, int64_t ts, int sig)
{
    if (etl_ksignal_default(sig) == 1) kexit_note(x, ts, sig);
}

void etl_kexit_delivered(etl_kexit *x, int64_t ts, int sig, int dfl)
{
    int action = etl_ksignal_default(sig);

    if (!dfl) {
        if (action == 1) kexit_note(x, ts, -sig); /* caught or ignored: it decided nothing */
    } else if (action && sig == SIGKILL) {
        if (ts < x->kill_ts) x->kill_ts = ts;
    } else if (action && ts < x->fatal_ts) {
        x->fatal_ts = ts;
        x->fatal_sig = sig;
    }
}

/* The signal a SIGKILL delivered at ts stands for: when a signal whose default action kills is
   sent to a process that does not catch it, the kernel decides the group exit with that signal
   at once and the threads then die of SIGKILL. The latest such signal sent before ts and not
   delivered to a handler since; else SIGKILL itself. */
static int kexit_killer(const etl_kexit *x, int64_t ts)
{
    for (unsigned i = x->nsent; i-- > 0;) {
        int caught = 0;
        if (x->sent[i].ts > ts || x->sent[i].sig < 0) continue;
        for (unsigned j = i + 1; j < x->nsent && x->sent[j].ts <= ts; j++)
            if (x->sent[j].sig == -x->sent[i].sig) caught = 1;
        if (!caught) return x->sent[i].sig;
    }
    return SIGKILL;
}

int etl_kexit_status(const etl_kexit *x, int64_t end_ts, int32_t *status)
{
    int64_t first = x->group_ts;

    if (x->fatal_ts < first) first = x->fatal_ts;
    if (x->kill_ts < first) first = x->kill_ts;
    *status = 0;
    if (first <= end_ts) {
        if (first == x->group_ts) *status = x->group_code;
        else if (first == x->fatal_ts) *status = 128 + x->fatal_sig;
        else *status = 128 + kexit_killer(x, first);
        return 1;
    }
    if (x->leader_ts <= end_ts) {
        *status = x->leader_code;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ capture */

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* The events of each processor. The LBR ones are opened later (etl_kcapture_lbr_start), while
   the reader runs: their fd is published last, with release. */
enum { EV_SIDEBAND, EV_SWITCH, EV_WAKEUP, EV_WAKEUP_NEW, EV_PROFILE, EV_RQ_ISSUE, EV_RQ_COMPLETE, EV_SYS_ENTER,
       EV_SYS_EXIT, EV_MUNMAP, EV_MREMAP, EV_EXIT_GROUP, EV_EXIT, EV_SIG_DELIVER, EV_SIG_GENERATE, EV_LBR_PROFILE,
       EV_LBR_PMC, EV_COUNT };
static const char *const ev_names[EV_COUNT] = { "sideband (task, comm, mmap2)", "sched:sched_switch",
                                                "sched:sched_wakeup", "sched:sched_wakeup_new",
                                                "cpu-clock sampling", "block:block_rq_issue",
                                                "block:block_rq_complete", "raw_syscalls:sys_enter",
                                                "raw_syscalls:sys_exit",
                                                [EV_MUNMAP] = "syscalls:sys_enter_munmap",
                                                [EV_MREMAP] = "syscalls:sys_enter_mremap",
                                                [EV_EXIT_GROUP] = "syscalls:sys_enter_exit_group",
                                                [EV_EXIT] = "syscalls:sys_enter_exit",
                                                [EV_SIG_DELIVER] = "signal:signal_deliver",
                                                [EV_SIG_GENERATE] = "signal:signal_generate",
                                                [EV_LBR_PROFILE] = "cycles with a branch stack",
                                                [EV_LBR_PMC] = "branch instructions with a branch stack" };

#define RING_PAGES 256u /* data pages per processor: 1 MiB */
#define MAX_FRAMES ETL_PROVIDER_MAX_STACK

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
    uint8_t rec[65536];        /* a record taken out of the ring (it may wrap) */
    /* Records read and not handled yet (see drain): copies in q_bytes, in q their times and
       where they are. */
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
    unsigned disk_waited_ms;   /* at the end, how long it waited for other readers' issues */
    _Atomic int64_t progress;  /* every record of this processor up to this time is handled */
    _Atomic int64_t stuck_at;  /* its progress when a reader stopped waiting for it */
};

/* Where a tracepoint's fields are in its raw data. */
struct tp_field {
    unsigned off, size;
};

struct kimage {
    int64_t ts;                /* of its event */
    uint64_t base, size;
    char *file;
    uint64_t code_lo, code_hi; /* what is left of its executable mapping */
};

/* Mappings a process lost at ts (a munmap; all of them at an exec), kept a while for the
   images a reader of another processor brings after it. */
struct kremoval {
    int64_t ts;
    uint64_t lo, hi;
    uint32_t tid;
};

/* What the capture knows of a process between its events: perf's records name only pids,
   and a process may be gone from /proc by the time its records are read. */
struct pentry {
    int64_t ts;                /* of the record that said it: readers of other processors may
                                  bring older news later (a fork after the exec that followed it) */
    uint32_t pid, ppid, uid;
    char name[16];
    char *cmdline;
    /* Its images (Load and DCStart events), for the children it forks: a fork's child has
       its parent's mappings, which no MMAP2 record reports. */
    struct kimage *images;
    unsigned nimages, cap;
    struct pentry *next;
    struct kremoval *removals; /* in time order */
    unsigned nremovals, removals_cap;
    etl_kexit exit;            /* what decides its ExitStatus */
};
#define PTAB_SIZE 1024u

/* A block request issued (read from its processor's ring) and not completed yet. */
struct disk_req {
    uint32_t dev, tid;
    uint64_t sector;
    int64_t ts;
    struct disk_req *next;
};
#define DTAB_SIZE 4096u

struct etl_kcapture {
    etl_session *s;
    pthread_mutex_t plock;     /* ptab, shared by the readers */
    struct pentry *ptab[PTAB_SIZE];
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
       the requests issued and not completed yet (see disk_note_issue) */
    struct tp_field rq_dev[2], rq_sector[2], rq_nr_sector[2], rq_rwbs[2];
    pthread_mutex_t dlock;
    struct disk_req *dtab[DTAB_SIZE];
    /* syscall: raw_syscalls:sys_enter's id, sys_exit's ret */
    struct tp_field sys_id, sys_ret;
    /* The fields of the unload and exit tracepoints (exit_unmap_tps), in their order. */
    struct tp_field tpf[EV_COUNT][4];
};

static long perf_open(struct perf_event_attr *a, int cpu)
{
    return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Reads a small file whole into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;

    if (fd < 0) return -1;
    while (n + 1 < size) {
        ssize_t r = read(fd, buf + n, size - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* A tracepoint's id and format: 0, or -1 with the reason in err. event is "system:name", or a
   sched tracepoint's name alone. */
static int tracepoint(const char *event, uint64_t *id, char *format, size_t fsize, char *err, size_t errsize)
{
    char path[256], buf[64];
    int saved = ENOENT;
    const char *colon = strchr(event, ':');
    int syslen = colon ? (int)(colon - event) : 5;
    const char *sys = colon ? event : "sched", *name = colon ? colon + 1 : event;

    for (size_t i = 0; i < sizeof tracefs_dirs / sizeof tracefs_dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/events/%.*s/%s/id", tracefs_dirs[i], syslen, sys, name);
        if (read_small(path, buf, sizeof buf) <= 0) {
            if (errno != ENOENT) saved = errno;
            continue;
        }
        *id = strtoull(buf, NULL, 10);
        snprintf(path, sizeof path, "%s/events/%.*s/%s/format", tracefs_dirs[i], syslen, sys, name);
        if (read_small(path, format, fsize) <= 0) break;
        return 0;
    }
    if (saved == ENOENT)
        snprintf(err, errsize, "kernel events: tracepoint %.*s:%s: not found in /sys/kernel/tracing or "
                 "/sys/kernel/debug/tracing (is tracefs mounted? mount -t tracefs nodev /sys/kernel/tracing)",
                 syslen, sys, name);
    else
        snprintf(err, errsize, "kernel events: tracepoint %.*s:%s: %s/events/%.*s/%s/id: %s", syslen, sys, name,
                 tracefs_dirs[0], syslen, sys, name, strerror(saved));
    return -1;
}

/* The same for group:event. */
static int tracepoint_in(const char *group, const char *event, uint64_t *id, char *format, size_t fsize, char *err,
                         size_t errsize)
{
    char name[128];

    snprintf(name, sizeof name, "%s:%s", group, event);
    return tracepoint(name, id, format, fsize, err, errsize);
}

/* The offset and size of field name in a tracepoint's format: 0, or -1 (err says so). */
static int tp_find(const char *format, const char *event, const char *name, struct tp_field *f, char *err,
                   size_t errsize)
{
    size_t len = strlen(name);

    for (const char *p = strstr(format, "field:"); p; p = strstr(p + 1, "field:")) {
        const char *semi = strchr(p, ';');
        if (!semi || (size_t)(semi - p) < len + 1) continue;
        if (memcmp(semi - len, name, len) != 0 || (semi[-(ptrdiff_t)len - 1] != ' ' && semi[-(ptrdiff_t)len - 1] != '\t'))
            continue;
        const char *o = strstr(semi, "offset:"), *s = strstr(semi, "size:");
        if (!o || !s) break;
        f->off = (unsigned)strtoul(o + 7, NULL, 10);
        f->size = (unsigned)strtoul(s + 5, NULL, 10);
        if (f->size == 4 || f->size == 8) return 0;
        break;
    }
    snprintf(err, errsize, "kernel events: tracepoint %s%s has no 4- or 8-byte field '%s'", strchr(event, ':') ? "" : "sched:",
             event, name);
    return -1;
}

static int64_t tp_get(const uint8_t *raw, uint32_t raw_len, const struct tp_field *f)
{
    if (f->off + f->size > raw_len) return 0;
    return f->size == 8 ? (int64_t)etl_le64(raw + f->off) : (int32_t)etl_le32(raw + f->off);
}

/* The tracepoints of image unloads (image_load) and of exit statuses (process), and the
   fields read from them (into tpf[ev], in this order). Optional: a kernel without syscall
   tracepoints (CONFIG_FTRACE_SYSCALLS) records neither. */
static const struct {
    int ev;
    uint32_t flag;
    const char *group, *name, *fields[4];
} exit_unmap_tps[] = {
    { EV_MUNMAP, ETL_KERNEL_IMAGE_LOAD, "syscalls", "sys_enter_munmap", { "addr", "len" } },
    { EV_MREMAP, ETL_KERNEL_IMAGE_LOAD, "syscalls", "sys_enter_mremap", { "addr", "old_len", "new_len", "flags" } },
    { EV_EXIT_GROUP, ETL_KERNEL_PROCESS, "syscalls", "sys_enter_exit_group", { "error_code" } },
    { EV_EXIT, ETL_KERNEL_PROCESS, "syscalls", "sys_enter_exit", { "error_code" } },
    { EV_SIG_DELIVER, ETL_KERNEL_PROCESS, "signal", "signal_deliver", { "sig", "sa_handler" } },
    { EV_SIG_GENERATE, ETL_KERNEL_PROCESS, "signal", "signal_generate", { "sig", "pid", "group", "result" } },
};

/* The attributes every event shares: the session's clock, ids on every record, disabled. */
static void attr_base(struct perf_event_attr *a, uint32_t type, uint64_t config, uint64_t sample_type)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = type;
    a->config = config;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | sample_type;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC_RAW; /* the PerfCounter clock of the session (monoclock.h) */
    a->disabled = 1;
}

static void close_cpu(struct kcpu *c)
{
    if (c->ring) munmap(c->ring, c->ring_len);
    c->ring = NULL;
    for (int e = 0; e < EV_COUNT; e++)
        if (c->fd[e] >= 0) close(c->fd[e]);
    for (int e = 0; e < EV_COUNT; e++) c->fd[e] = -1;
    for (size_t i = 0; i < c->ndef; i++) free(c->def[i].file);
    free(c->def);
    c->def = NULL;
    c->ndef = c->defcap = 0;
    free(c->q);
    free(c->q_bytes);
    c->q = NULL;
    c->q_bytes = NULL;
    c->qn = c->qcap = c->q_used = c->q_bytes_cap = 0;
}

static const char *perf_hint(int e)
{
    if (e == EACCES || e == EPERM) return " (needs root or CAP_PERFMON, or a lower kernel.perf_event_paranoid)";
    if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) return " (this kernel or machine does not offer it)";
    return "";
}

/* Opens the events of one processor, the sideband event owning the ring: 0, or -1 (err). */
static int open_cpu(struct etl_kcapture *k, struct kcpu *c, const uint64_t tp_ids[EV_COUNT],
                    uint32_t interval_100ns, char *err, size_t errsize)
{
    struct perf_event_attr a;
    int want[EV_COUNT] = { 1, !!(k->flags & ETL_KERNEL_CSWITCH), !!(k->flags & ETL_KERNEL_DISPATCHER),
                           !!(k->flags & ETL_KERNEL_DISPATCHER), !!(k->flags & ETL_KERNEL_PROFILE),
                           !!(k->flags & ETL_KERNEL_DISK_IO), !!(k->flags & ETL_KERNEL_DISK_IO),
                           !!(k->flags & ETL_KERNEL_SYSCALL), !!(k->flags & ETL_KERNEL_SYSCALL) };

    for (size_t i = 0; i < sizeof exit_unmap_tps / sizeof exit_unmap_tps[0]; i++)
        want[exit_unmap_tps[i].ev] = (k->flags & exit_unmap_tps[i].flag) && tp_ids[exit_unmap_tps[i].ev];

    for (int e = 0; e < EV_COUNT; e++) {
        uint32_t sw_flag = e == EV_SWITCH ? ETL_KERNEL_CSWITCH : e == EV_PROFILE ? ETL_KERNEL_PROFILE
                         : e == EV_WAKEUP || e == EV_WAKEUP_NEW ? ETL_KERNEL_DISPATCHER : 0;
        uint64_t extra = e != EV_SIDEBAND && (k->stackwalk & sw_flag) ? PERF_SAMPLE_CALLCHAIN : 0;
        if (e == EV_RQ_ISSUE || e == EV_RQ_COMPLETE || e == EV_SYS_ENTER || e == EV_SYS_EXIT) extra = 0; /* no stack walks */
        if (!want[e]) continue;
        if (e == EV_SIDEBAND) {
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0);
            a.task = !!(k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD));
            a.comm = a.comm_exec = !!(k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD));
            a.mmap = a.mmap2 = !!(k->flags & ETL_KERNEL_IMAGE_LOAD);
            a.watermark = 1;
            a.wakeup_watermark = RING_PAGES * (uint32_t)c->page / 4;
        } else if (e == EV_PROFILE) {
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PERF_SAMPLE_IP | extra);
            a.sample_period = (uint64_t)interval_100ns * 100;
        } else {
            attr_base(&a, PERF_TYPE_TRACEPOINT, tp_ids[e], PERF_SAMPLE_RAW | extra);
            a.sample_period = 1;
        }
        k->sample_type[e] = a.sample_type;
        /* A tracepoint's count says how often it fired: with its lost samples (perf 6.0's
           PERF_FORMAT_LOST), what neither reached the ring nor was lost there is known. */
        if (a.type == PERF_TYPE_TRACEPOINT) a.read_format = PERF_FORMAT_LOST;
        long fd = perf_open(&a, c->cpu);
        if (fd < 0 && errno == EINVAL && a.read_format) {
            a.read_format = 0; /* an older kernel */
            fd = perf_open(&a, c->cpu);
        }
        if (c == &k->cpus[0]) k->counted[e] = a.read_format != 0;
        if (fd < 0) {
            int saved = errno;
            snprintf(err, errsize, "kernel events: perf_event_open of %s on processor %d: %s%s", ev_names[e], c->cpu,
                     strerror(saved), perf_hint(saved));
            return -1;
        }
        c->fd[e] = (int)fd;
        if (ioctl(c->fd[e], PERF_EVENT_IOC_ID, &c->id[e]) != 0) {
            snprintf(err, errsize, "kernel events: %s on processor %d: no event id: %s", ev_names[e], c->cpu,
                     strerror(errno));
            return -1;
        }
        if (e == EV_SIDEBAND) {
            c->ring_len = (RING_PAGES + 1) * c->page;
            void *m = mmap(NULL, c->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd[e], 0);
            if (m == MAP_FAILED) {
                int saved = errno;
                snprintf(err, errsize, "kernel events: the ring buffer of processor %d (%zu KiB): %s%s", c->cpu,
                         c->ring_len / 1024, strerror(saved),
                         saved == EPERM ? " (kernel.perf_event_mlock_kb is too low)" : "");
                return -1;
            }
            c->ring = m;
        } else if (ioctl(c->fd[e], PERF_EVENT_IOC_SET_OUTPUT, c->fd[EV_SIDEBAND]) != 0) {
            snprintf(err, errsize, "kernel events: %s on processor %d cannot share its ring: %s", ev_names[e], c->cpu,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* ---- writing ---- */

static int64_t order_ts(struct kcpu *c, int64_t ts)
{
    if (ts < c->last_ts) ts = c->last_ts;
    c->last_ts = ts;
    return ts;
}

/* One event of the capture's session (etl_kwrite). */
static void write_ev(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid,
                     const uint8_t *payload, size_t n)
{
    etl_kwrite(k->s, ts, hook, pid, tid, payload, n);
}

/* ---- what /proc says of a process ---- */

struct procinfo {
    uint32_t pid, ppid, uid;
    char name[64];
    char cmdline[4096];
};

/* Fills pi from /proc/PID: 0, or -1 when the process is gone. name_hint (or NULL) is the
   name to keep when /proc cannot tell. */
static int proc_info(uint32_t pid, struct procinfo *pi, const char *name_hint)
{
    char path[64], buf[4096];
    ssize_t n;

    memset(pi, 0, sizeof *pi);
    pi->pid = pid;
    pi->uid = UINT32_MAX;
    if (name_hint) snprintf(pi->name, sizeof pi->name, "%s", name_hint);
    snprintf(path, sizeof path, "/proc/%u/status", pid);
    if (read_small(path, buf, sizeof buf) <= 0) return -1;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "Name:\t", 6) == 0) {
            size_t len = strcspn(line + 6, "\n");
            if (len >= sizeof pi->name) len = sizeof pi->name - 1;
            memcpy(pi->name, line + 6, len);
            pi->name[len] = '\0';
        } else if (strncmp(line, "PPid:", 5) == 0) {
            pi->ppid = (uint32_t)strtoul(line + 5, NULL, 10);
        } else if (strncmp(line, "Uid:", 4) == 0) {
            pi->uid = (uint32_t)strtoul(line + 4, NULL, 10);
        }
    }
    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    n = read_small(path, pi->cmdline, sizeof pi->cmdline);
    /* The arguments are NUL-separated: a command line has them separated by spaces. */
    for (ssize_t i = 0; i < n; i++)
        if (pi->cmdline[i] == '\0') pi->cmdline[i] = ' ';
    while (n > 0 && pi->cmdline[n - 1] == ' ') pi->cmdline[--n] = '\0';
    return 0;
}

/* The kernel's prio of a thread (stat's priority + 100), or 120 (nice 0) when unknown. */
static int thread_prio(uint32_t pid, uint32_t tid)
{
    char path[96], buf[1024], *p;
    int field = 2;

    snprintf(path, sizeof path, "/proc/%u/task/%u/stat", pid, tid);
    if (read_small(path, buf, sizeof buf) <= 0 || !(p = strrchr(buf, ')'))) return 120;
    /* Fields after the name: 3 state ... 18 priority. */
    for (p++; *p && field < 18; p++)
        if (*p == ' ') field++;
    return field == 18 ? (int)strtol(p, NULL, 10) + 100 : 120;
}

static void emit_process(struct etl_kcapture *k, int64_t ts, uint16_t hook, const struct procinfo *pi,
                         int32_t exit_status, uint32_t hdr_pid, uint32_t hdr_tid)
{
    etl_kproc_desc d = { pi->pid, pi->ppid, pi->uid, exit_status, pi->name, pi->cmdline };
    uint8_t buf[16384];
    size_t n = etl_kpayload_process(buf, sizeof buf, &d);

    if (n > sizeof buf) {
        d.command_line = ""; /* a command line beyond what a record holds is left out */
        n = etl_kpayload_process(buf, sizeof buf, &d);
    }
    write_ev(k, ts, hook, hdr_pid, hdr_tid, buf, n);
}

static void emit_thread(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid,
                        uint32_t hdr_pid, uint32_t hdr_tid)
{
    uint8_t buf[128];
    size_t n = etl_kpayload_thread(buf, sizeof buf, pid, tid, (uint8_t)(tid ? etl_kpriority(thread_prio(pid, tid)) : 0));

    write_ev(k, ts, hook, hdr_pid, hdr_tid, buf, n);
}

static void pcache_add_image(struct etl_kcapture *k, uint32_t pid, int64_t ts, uint64_t base, uint64_t size,
                             uint64_t code, const char *file);

static void emit_image(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, uint64_t start,
                       uint64_t len, uint64_t pgoff, const char *file);

/* The reader this thread is (NULL: the controlling thread, writing the rundown). */
static _Thread_local struct kcpu *this_reader;

/* An Image Unload at ts, later than the record this thread handles: kept for its time (see
   struct kcpu's def), or written now where no reader runs. */
static void defer_unload(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t base,
                         uint64_t size, const char *file)
{
    struct kcpu *c = this_reader;
    size_t i;

    if (c && c->ndef == c->defcap) {
        size_t cap = c->defcap ? 2 * c->defcap : 16;
        struct kdeferred *n = realloc(c->def, cap * sizeof *n);
        if (n) {
            c->def = n;
            c->defcap = cap;
        }
    }
    if (!c || c->ndef == c->defcap) { /* no reader, or no memory: now, out of time order */
        emit_image(k, ts, ETL_KHOOK_IMAGE_UNLOAD, pid, tid, base, size, 0, file);
        return;
    }
    for (i = c->ndef; i > 0 && c->def[i - 1].ts > ts; i--) c->def[i] = c->def[i - 1];
    c->def[i] = (struct kdeferred){ ts, pid, tid, base, size, strdup(file) };
    c->ndef++;
}

/* Writes the deferred unloads of c due at or before ts (in time order). */
static void flush_deferred(struct kcpu *c, int64_t ts)
{
    size_t n = 0;

    while (n < c->ndef && c->def[n].ts <= ts) {
        struct kdeferred *d = &c->def[n++];
        emit_image(c->k, d->ts, ETL_KHOOK_IMAGE_UNLOAD, d->pid, d->tid, d->base, d->size, 0, d->file ? d->file : "");
        if (d->ts > c->last_ts) c->last_ts = d->ts;
        free(d->file);
    }
    if (n && n < c->ndef) memmove(c->def, c->def + n, (c->ndef - n) * sizeof *c->def);
    c->ndef -= n;
}

static void emit_image(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, uint64_t start,
                       uint64_t len, uint64_t pgoff, const char *file)
{
    uint8_t buf[8192];
    /* The image starts where the file's offset 0 is mapped, so that an address's offset from
       ImageBase is its offset in the file (what symbol lookups want). */
    uint64_t base = pgoff <= start ? start - pgoff : start;
    size_t n = etl_kpayload_image(buf, sizeof buf, base, len + (start - base), pid, file);

    if (n <= sizeof buf) write_ev(k, ts, hook, pid, tid, buf, n);
    if (hook == ETL_KHOOK_IMAGE_LOAD || hook == ETL_KHOOK_IMAGE_DCSTART)
        pcache_add_image(k, pid, ts, base, len + (start - base), start, file);
}

/* ---- the processes known ---- */

static void pentry_free(struct pentry *e)
{
    for (unsigned i = 0; i < e->nimages; i++) free(e->images[i].file);
    free(e->images);
    free(e->removals);
    free(e->cmdline);
    free(e);
}

static struct pentry **pfind(struct etl_kcapture *k, uint32_t pid)
{
    struct pentry **p = &k->ptab[pid % PTAB_SIZE];

    while (*p && (*p)->pid != pid) p = &(*p)->next;
    return p;
}

/* Records pi as what is known of its process at ts (replacing what was known before ts). */
static void pcache_put(struct etl_kcapture *k, int64_t ts, const struct procinfo *pi)
{
    struct pentry **p, *e;

    pthread_mutex_lock(&k->plock);
    p = pfind(k, pi->pid);
    e = *p ? *p : calloc(1, sizeof *e);
    if (e && !*p) etl_kexit_init(&e->exit);
    if (e && (*p != e || e->ts <= ts)) {
        e->ts = ts;
        char *cmd = strdup(pi->cmdline);
        e->pid = pi->pid;
        e->ppid = pi->ppid;
        e->uid = pi->uid;
        snprintf(e->name, sizeof e->name, "%.15s", pi->name);
        free(e->cmdline);
        e->cmdline = cmd;
        if (!*p) *p = e;
    }
    pthread_mutex_unlock(&k->plock);
}

/* What is known of pid into pi: 0, or -1 when nothing is (pi then holds only the pid). With
   drop, it is forgotten. */
static int pcache_get(struct etl_kcapture *k, uint32_t pid, struct procinfo *pi, int drop)
{
    struct pentry **p, *e;

    memset(pi, 0, sizeof *pi);
    pi->pid = pid;
    pi->uid = UINT32_MAX;
    pthread_mutex_lock(&k->plock);
    p = pfind(k, pid);
    e = *p;
    if (e && e->ts == INT64_MIN) { /* a placeholder (pcache_exec_images): nothing known */
        if (drop) {
            *p = e->next;
            pentry_free(e);
        }
        e = NULL;
    }
    if (e) {
        pi->ppid = e->ppid;
        pi->uid = e->uid;
        snprintf(pi->name, sizeof pi->name, "%s", e->name);
        snprintf(pi->cmdline, sizeof pi->cmdline, "%s", e->cmdline ? e->cmdline : "");
        if (drop) {
            *p = e->next;
            pentry_free(e);
        }
    }
    pthread_mutex_unlock(&k->plock);
    return e ? 0 : -1;
}

static void pcache_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < PTAB_SIZE; i++)
        while (k->ptab[i]) {
            struct pentry *e = k->ptab[i];
            k->ptab[i] = e->next;
            pentry_free(e);
        }
}

/* How long, and how many, removals a process keeps for images brought late (a reader lags
   the others by a few polls at most). */
#define REMOVAL_KEEP_NS 250000000
#define REMOVAL_MAX 1024u

/* Notes that e lost [lo, hi) at ts (plock held). */
static void pcache_removed(struct pentry *e, int64_t ts, uint64_t lo, uint64_t hi, uint32_t tid)
{
    unsigned i;

    if (e->nremovals == e->removals_cap) {
        /* Full: forget the old ones first; grow only when all are recent. */
        int64_t newest = e->nremovals ? e->removals[e->nremovals - 1].ts : ts;
        unsigned old = 0;
        while (old < e->nremovals && (e->removals[old].ts < newest - REMOVAL_KEEP_NS ||
                                      (e->nremovals == REMOVAL_MAX && old < REMOVAL_MAX / 4)))
            old++;
        if (old) memmove(e->removals, e->removals + old, (e->nremovals - old) * sizeof *e->removals);
        e->nremovals -= old;
    }
    if (e->nremovals == e->removals_cap) {
        unsigned cap = e->removals_cap ? 2 * e->removals_cap : 8;
        struct kremoval *n = realloc(e->removals, cap * sizeof *n);
        if (!n) return;
        e->removals = n;
        e->removals_cap = cap;
    }
    for (i = e->nremovals; i > 0 && e->removals[i - 1].ts > ts; i--) e->removals[i] = e->removals[i - 1];
    e->removals[i] = (struct kremoval){ ts, lo, hi, tid };
    e->nremovals++;
}

/* Applies to the code [*code_lo, *code_hi) of an image of e known since ts what e lost after
   ts: 1 and the removal that took the last of it into *gone, or 0 (plock held). */
static int removed_since(const struct pentry *e, int64_t ts, uint64_t *code_lo, uint64_t *code_hi,
                         struct kremoval *gone)
{
    for (unsigned i = 0; i < e->nremovals; i++) {
        if (e->removals[i].ts <= ts) continue;
        if (etl_kunmap_image(e->removals[i].lo, e->removals[i].hi, code_lo, code_hi) == ETL_KUNMAP_GONE) {
            *gone = e->removals[i];
            return 1;
        }
    }
    return 0;
}

static int by_base(const void *a, const void *b)
{
    const struct kimage *x = a, *y = b;

    return x->base < y->base ? -1 : x->base > y->base;
}

static void free_images(struct kimage *images, unsigned n);

/* Image Unload of each image (in the order of their bases, as Windows lists them), then
   frees them. */
static void unload_images(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, struct kimage *images,
                          unsigned n)
{
    if (n > 1) qsort(images, n, sizeof *images, by_base);
    for (unsigned i = 0; i < n; i++)
        emit_image(k, ts, ETL_KHOOK_IMAGE_UNLOAD, pid, tid, images[i].base, images[i].size, 0, images[i].file);
    free_images(images, n);
}

/* Thread tid of pid unmapped [lo, hi) at ts: the images whose code that took the last of
   unload; the others keep what is left (etl_kunmap_image). */
static void pcache_unmap(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t lo, uint64_t hi)
{
    struct pentry *e;
    struct kimage *gone = NULL;
    unsigned ngone = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (e && ts >= e->ts) { /* (an older program's images unloaded at its exec) */
        unsigned o = 0;
        for (unsigned i = 0; i < e->nimages; i++) {
            struct kimage *im = &e->images[i];
            if (im->ts > ts || etl_kunmap_image(lo, hi, &im->code_lo, &im->code_hi) != ETL_KUNMAP_GONE) {
                e->images[o++] = *im;
                continue;
            }
            if (!gone && !(gone = malloc(e->nimages * sizeof *gone))) {
                e->images[o++] = *im; /* no memory: it stays, and unloads at the exit */
                continue;
            }
            gone[ngone++] = *im;
        }
        e->nimages = o;
        pcache_removed(e, ts, lo, hi, tid);
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, gone, ngone);
}

/* Adds an image of pid, known since ts (a process not known has none kept, nor does one whose
   exec, later than ts, a reader of another processor brought first). */
static void pcache_add_image(struct etl_kcapture *k, uint32_t pid, int64_t ts, uint64_t base, uint64_t size,
                             uint64_t code, const char *file)
{
    struct pentry *e;
    struct kremoval gone = { 0, 0, 0, 0 };
    uint64_t code_lo = code, code_hi = base + size;
    int unloaded = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    /* Unmapped already, by what a reader of another processor brought first? */
    if (e) unloaded = removed_since(e, ts, &code_lo, &code_hi, &gone);
    if (e && (unloaded || ts < e->ts)) e = NULL;
    /* One image per address: one loaded where another is (the fork's copy of a DCStart the
       rundown also saw, a mapping over another) takes its place, as in the image map. */
    for (unsigned i = 0; e && i < e->nimages; i++)
        if (e->images[i].base == base) {
            if (e->images[i].ts > ts) e = NULL; /* brought late: the newer one stays */
            else {
                free(e->images[i].file);
                e->images[i] = e->images[--e->nimages];
            }
            break;
        }
    if (e && e->nimages == e->cap) {
        unsigned cap = e->cap ? 2 * e->cap : 16;
        struct kimage *n = realloc(e->images, cap * sizeof *n);
        if (n) {
            e->images = n;
            e->cap = cap;
        }
    }
    if (e && e->nimages < e->cap && (e->images[e->nimages].file = strdup(file))) {
        e->images[e->nimages].ts = ts;
        e->images[e->nimages].base = base;
        e->images[e->nimages].size = size;
        e->images[e->nimages].code_lo = code_lo;
        e->images[e->nimages].code_hi = code_hi;
        e->nimages++;
    }
    pthread_mutex_unlock(&k->plock);
    if (unloaded) defer_unload(k, gone.ts, pid, gone.tid, base, size, file);
}

/* An exec at ts by thread tid: the images pid had before it are gone (those since are the new
   program's), and unload; what decides the exit status starts anew. The exec is noted for
   images brought later. */
static void pcache_exec_images(struct etl_kcapture *k, uint32_t pid, uint32_t tid, int64_t ts)
{
    struct pentry *e;
    struct kimage *gone = NULL;
    unsigned ngone = 0;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (!e && (e = calloc(1, sizeof *e))) {
        /* Its fork is not read yet: a placeholder (ts INT64_MIN, which pcache_get does not
           report) holds the exec for the images the fork brings. */
        e->pid = pid;
        e->ts = INT64_MIN;
        etl_kexit_init(&e->exit);
        *pfind(k, pid) = e;
    }
    if (e) {
        unsigned o = 0;
        pcache_removed(e, ts, 0, UINT64_MAX, tid);
        if (e->nimages) gone = malloc(e->nimages * sizeof *gone);
        for (unsigned i = 0; i < e->nimages; i++) {
            if (e->images[i].ts >= ts) e->images[o++] = e->images[i];
            else if (gone) gone[ngone++] = e->images[i];
            else free(e->images[i].file);
        }
        e->nimages = o;
        if (e->ts <= ts) etl_kexit_init(&e->exit);
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, gone, ngone);
}

/* The images ppid had at ts, copied (to free with free_images); their number. */
static unsigned pcache_images_at(struct etl_kcapture *k, uint32_t ppid, int64_t ts, struct kimage **out)
{
    struct pentry *e;
    unsigned n = 0;

    *out = NULL;
    pthread_mutex_lock(&k->plock);
    e = *pfind(k, ppid);
    if (e && e->nimages && (*out = calloc(e->nimages, sizeof **out)))
        for (unsigned i = 0; i < e->nimages; i++) {
            if (e->images[i].ts > ts) continue; /* mapped after the fork */
            (*out)[n] = e->images[i];
            if (((*out)[n].file = strdup(e->images[i].file))) n++;
        }
    pthread_mutex_unlock(&k->plock);
    return n;
}

static void free_images(struct kimage *images, unsigned n)
{
    for (unsigned i = 0; i < n; i++) free(images[i].file);
    free(images);
}

/* ---- rundown ---- */

/* The executable mappings of pid, as Image events. */
static void rundown_images(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid)
{
    char path[64], line[4352];
    FILE *f;

    snprintf(path, sizeof path, "/proc/%u/maps", pid);
    f = fopen(path, "re");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long start, end, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pos) < 4 || !pos) continue;
        if (perms[2] != 'x') continue;
        line[strcspn(line, "\n")] = '\0';
        const char *file = line + pos;
        if (!*file) continue; /* anonymous code has no image */
        emit_image(k, ts, hook, pid, 0, start, end - start, off, file);
    }
    fclose(f);
}

/* The kernel's own image, in process 0 as Windows puts ntoskrnl.exe: [kernel.kallsyms] from
   _stext to _etext (when /proc/kallsyms shows addresses: root). */
static void rundown_kernel_image(struct etl_kcapture *k, int64_t ts, uint16_t hook)
{
    FILE *f = fopen("/proc/kallsyms", "re");
    char line[512];
    unsigned long long stext = 0, etext = 0;

    if (!f) return;
    while ((!stext || !etext) && fgets(line, sizeof line, f)) {
        unsigned long long a;
        char type, name[256];
        if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3) continue;
        if (strcmp(name, "_stext") == 0) stext = a;
        else if (strcmp(name, "_etext") == 0) etext = a;
    }
    fclose(f);
    if (stext && etext > stext) emit_image(k, ts, hook, 0, 0, stext, etext - stext, 0, "[kernel.kallsyms]");
}

/* DCStart (start) or DCEnd (end) of every process, thread and executable mapping /proc shows. */
static void rundown(struct etl_kcapture *k, int64_t ts, int end)
{
    DIR *d = opendir("/proc");
    struct dirent *e;

    /* Process 0, the idle task ("swapper", which /proc does not show), and its thread 0, as
       Windows' rundown has Idle: samples and switches of tid 0 then have a process. */
    if (k->flags & ETL_KERNEL_PROCESS) {
        struct procinfo idle = { .pid = 0, .ppid = 0, .uid = 0, .name = "swapper", .cmdline = "" };
        emit_process(k, ts, end ? ETL_KHOOK_PROCESS_DCEND : ETL_KHOOK_PROCESS_DCSTART, &idle, ETL_KSTILL_ACTIVE, 0, 0);
    }
    if (k->flags & ETL_KERNEL_THREAD) emit_thread(k, ts, end ? ETL_KHOOK_THREAD_DCEND : ETL_KHOOK_THREAD_DCSTART, 0, 0, 0, 0);
    if (k->flags & ETL_KERNEL_IMAGE_LOAD) rundown_kernel_image(k, ts, end ? ETL_KHOOK_IMAGE_DCEND : ETL_KHOOK_IMAGE_DCSTART);
    if (!d) return;
    while ((e = readdir(d))) {
        struct procinfo pi;
        uint32_t pid;
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (proc_info(pid, &pi, NULL) != 0) continue;
        if (!end) pcache_put(k, ts, &pi);
        if (k->flags & ETL_KERNEL_PROCESS)
            emit_process(k, ts, end ? ETL_KHOOK_PROCESS_DCEND : ETL_KHOOK_PROCESS_DCSTART, &pi, ETL_KSTILL_ACTIVE, 0, 0);
        if (k->flags & ETL_KERNEL_THREAD) {
            char path[64];
            DIR *t;
            struct dirent *te;
            snprintf(path, sizeof path, "/proc/%u/task", pid);
            if ((t = opendir(path))) {
                while ((te = readdir(t)))
                    if (isdigit((unsigned char)te->d_name[0]))
                        emit_thread(k, ts, end ? ETL_KHOOK_THREAD_DCEND : ETL_KHOOK_THREAD_DCSTART, pid,
                                    (uint32_t)strtoul(te->d_name, NULL, 10), 0, 0);
                closedir(t);
            }
        }
        if (k->flags & ETL_KERNEL_IMAGE_LOAD)
            rundown_images(k, ts, end ? ETL_KHOOK_IMAGE_DCEND : ETL_KHOOK_IMAGE_DCSTART, pid);
    }
    closedir(d);
}

/* ---- records ---- */

/* The sample_id trailer of a non-sample record (TID, TIME, CPU, IDENTIFIER: 32 bytes). */
struct trailer {
    uint32_t pid, tid;
    int64_t time;
};

static int trailer(const uint8_t *r, uint32_t size, uint32_t body, struct trailer *t)
{
    if (size < body + 32) return -1;
    t->pid = etl_le32(r + size - 32);
    t->tid = etl_le32(r + size - 28);
    t->time = (int64_t)etl_le64(r + size - 24);
    return 0;
}

/* How long a reader waits for another that does not get on (wait_readers), and at most. */
#define EXIT_STUCK_NS 500000000
#define EXIT_WAIT_NS 2000000000

/*
 * Waits until the readers of the other processors have handled their records older than ts
 * (an exit's: what decides its status and the images it has may have happened on another
 * processor). A reader publishes how far it got before each record (drain), so two readers
 * waiting for each other do not deadlock: the one at the earlier record goes on. A loaded
 * machine keeps a reader behind by as much as hundreds of milliseconds: the wait lasts while
 * the readers waited for get on, and ends when none has for EXIT_STUCK_NS (a reader whose
 * processor something else holds: it is not waited for again until it gets on), or after
 * EXIT_WAIT_NS.
 */
static void wait_readers(struct kcpu *c, int64_t ts)
{
    struct etl_kcapture *k = c->k;
    struct timespec nap = { 0, 1000000 };
    int64_t start = etl_monoclock_exact(), moved = start, behind = INT64_MIN;

    for (;;) {
        int64_t least = INT64_MAX, now;
        for (unsigned i = 0; i < k->ncpu; i++) {
            int64_t p = atomic_load(&k->cpus[i].progress);
            if (&k->cpus[i] != c && p < ts - 1 && p != atomic_load(&k->cpus[i].stuck_at) && p < least) least = p;
        }
        if (least == INT64_MAX) return;
        now = etl_monoclock_exact();
        if (least != behind) {
            behind = least;
            moved = now;
        }
        if (now - moved > EXIT_STUCK_NS || now - start > EXIT_WAIT_NS) {
            for (unsigned i = 0; i < k->ncpu; i++) {
                int64_t p = atomic_load(&k->cpus[i].progress);
                if (&k->cpus[i] != c && p < ts - 1) atomic_store(&k->cpus[i].stuck_at, p);
            }
            return;
        }
        nanosleep(&nap, NULL);
    }
}

/* The exit of pid at ts (its leader's, tid): Image Unload of the images it still has (as
   Windows writes them at a process's end, before its Process End); its ExitStatus. */
static int32_t process_exit(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid)
{
    struct etl_kcapture *k = c->k;
    struct pentry *e;
    struct kimage *images = NULL;
    unsigned n = 0;
    int32_t status = 0;

    wait_readers(c, ts);
    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (e && e->ts <= ts) {
        etl_kexit_status(&e->exit, ts, &status);
        images = e->images; /* the entry is dropped next: its images are handed over */
        n = e->nimages;
        e->images = NULL;
        e->nimages = e->cap = 0;
    }
    pthread_mutex_unlock(&k->plock);
    unload_images(k, ts, pid, tid, images, n);
    return status;
}

/* What the exit and signal tracepoints say of a process, noted for its exit. */
enum { XN_GROUP, XN_LEADER, XN_SENT, XN_DELIVERED, XN_CAUGHT };

static void pcache_exit_note(struct etl_kcapture *k, uint32_t pid, int64_t ts, int what, int64_t value)
{
    struct pentry *e;

    pthread_mutex_lock(&k->plock);
    e = *pfind(k, pid);
    if (e && ts >= e->ts) { /* (not of the program before an exec) */
        switch (what) {
        case XN_GROUP: etl_kexit_group(&e->exit, ts, value); break;
        case XN_LEADER: etl_kexit_leader(&e->exit, ts, value); break;
        case XN_SENT: etl_kexit_sent(&e->exit, ts, (int)value); break;
        default: etl_kexit_delivered(&e->exit, ts, (int)value, what == XN_DELIVERED); break;
        }
    }
    pthread_mutex_unlock(&k->plock);
}

/* A sample of the unload and exit tracepoints (exit_unmap_tps): 1, or 0 for another event. */
static int exit_unmap_sample(struct kcpu *c, int e, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                             uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    const struct tp_field *f = k->tpf[e];
    uint64_t lo, hi;

    switch (e) {
    case EV_MUNMAP:
        if (etl_kunmap_range((uint64_t)tp_get(raw, raw_len, &f[0]), (uint64_t)tp_get(raw, raw_len, &f[1]), c->page,
                             &lo, &hi) == 0)
            pcache_unmap(k, ts, pid, tid, lo, hi);
        return 1;
    case EV_MREMAP:
        if (etl_kmremap_range((uint64_t)tp_get(raw, raw_len, &f[0]), (uint64_t)tp_get(raw, raw_len, &f[1]),
                              (uint64_t)tp_get(raw, raw_len, &f[2]), (uint64_t)tp_get(raw, raw_len, &f[3]), c->page,
                              &lo, &hi) == 0)
            pcache_unmap(k, ts, pid, tid, lo, hi);
        return 1;
    case EV_EXIT_GROUP: pcache_exit_note(k, pid, ts, XN_GROUP, tp_get(raw, raw_len, &f[0])); return 1;
    case EV_EXIT:
        /* A thread's exit: the process's status when it is the leader's (what waitpid reports
           when no group exit came first). */
        if (pid == tid) pcache_exit_note(k, pid, ts, XN_LEADER, tp_get(raw, raw_len, &f[0]));
        return 1;
    case EV_SIG_DELIVER:
        pcache_exit_note(k, pid, ts, tp_get(raw, raw_len, &f[1]) == 0 ? XN_DELIVERED : XN_CAUGHT,
                         tp_get(raw, raw_len, &f[0]));
        return 1;
    case EV_SIG_GENERATE: {
        /* Queued (result 0, TRACE_SIGNAL_DELIVERED), to: the sending thread itself (raise,
           the kernel's own), a process (group: the pid is its leader's), or a leader by tid. */
        uint32_t target = (uint32_t)tp_get(raw, raw_len, &f[1]);
        if (tp_get(raw, raw_len, &f[3]) != 0) return 1;
        pcache_exit_note(k, target == tid ? pid : target, ts, XN_SENT, tp_get(raw, raw_len, &f[0]));
        return 1;
    }
    default: return 0;
    }
}

/* Process Start of a fork: the child is its parent's copy (name, user, command line) until it
   execs. */
static void process_fork(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t ppid, uint32_t ptid)
{
    struct procinfo pi;

    if (pcache_get(c->k, ppid, &pi, 0) != 0) proc_info(ppid, &pi, NULL);
    pi.pid = pid;
    pi.ppid = ppid;
    pcache_put(c->k, ts, &pi);
    if (c->k->flags & ETL_KERNEL_PROCESS)
        emit_process(c->k, ts, ETL_KHOOK_PROCESS_START, &pi, ETL_KSTILL_ACTIVE, ppid, ptid);
    if (c->k->flags & ETL_KERNEL_IMAGE_LOAD) {
        /* Windows has no fork: the child's copies of its parent's images load with it. */
        struct kimage *images;
        unsigned n = pcache_images_at(c->k, ppid, ts, &images);
        for (unsigned i = 0; i < n; i++)
            emit_image(c->k, ts, ETL_KHOOK_IMAGE_LOAD, pid, pid, images[i].code_lo, images[i].code_hi - images[i].code_lo,
                       images[i].code_lo - images[i].base, images[i].file);
        free_images(images, n);
    }
}

/* Process End of the program a process ran: at its exit (drop: it is forgotten; its images
   unload first) or its exec. */
static void process_end(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, int drop)
{
    struct procinfo pi;
    int32_t status = drop ? process_exit(c, ts, pid, tid) : 0;

    if (pcache_get(c->k, pid, &pi, drop) != 0 && proc_info(pid, &pi, NULL) == 0 && !drop) {
        /* An exec whose fork another processor's reader has not brought yet: until the exec
           the process was its parent's copy. */
        struct procinfo parent;
        if (pcache_get(c->k, pi.ppid, &parent, 0) == 0) {
            snprintf(pi.name, sizeof pi.name, "%s", parent.name);
            snprintf(pi.cmdline, sizeof pi.cmdline, "%s", parent.cmdline);
        }
    }
    if (c->k->flags & ETL_KERNEL_PROCESS) emit_process(c->k, ts, ETL_KHOOK_PROCESS_END, &pi, status, pid, tid);
}

/* Process Start at an exec: the new program's name (the exec's comm), its command line from
   /proc while the process is still there. */
static void process_exec(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const char *name)
{
    struct procinfo known, pi;
    int had = pcache_get(c->k, pid, &known, 0) == 0;

    if (proc_info(pid, &pi, name) != 0 && had) {
        pi = known;
        pi.cmdline[0] = '\0'; /* gone already: the old program's command line is not the new one's */
    }
    snprintf(pi.name, sizeof pi.name, "%s", name); /* what /proc says later may be another exec's */
    if (had && !pi.ppid) pi.ppid = known.ppid;
    if (had && pi.uid == UINT32_MAX) pi.uid = known.uid;
    pcache_put(c->k, ts, &pi);
    if (c->k->flags & ETL_KERNEL_PROCESS)
        emit_process(c->k, ts, ETL_KHOOK_PROCESS_START, &pi, ETL_KSTILL_ACTIVE, pid, tid);
}

static void task_record(struct kcpu *c, const uint8_t *r, uint32_t size, int fork)
{
    struct etl_kcapture *k = c->k;
    uint32_t pid, ppid, tid, ptid;
    int64_t ts;

    if (size < 8 + 24) return;
    pid = etl_le32(r + 8);
    ppid = etl_le32(r + 12);
    tid = etl_le32(r + 16);
    ptid = etl_le32(r + 20);
    ts = order_ts(c, (int64_t)etl_le64(r + 24));
    if (fork) {
        if (pid == tid && (k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD))) process_fork(c, ts, pid, ppid, ptid);
        if (k->flags & ETL_KERNEL_THREAD) emit_thread(k, ts, ETL_KHOOK_THREAD_START, pid, tid, ppid, ptid);
        return;
    }
    if (k->flags & ETL_KERNEL_THREAD) emit_thread(k, ts, ETL_KHOOK_THREAD_END, pid, tid, pid, tid);
    if (pid == tid && (k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_IMAGE_LOAD))) process_end(c, ts, pid, tid, 1);
}

static void comm_record(struct kcpu *c, const uint8_t *r, uint32_t size, uint16_t misc)
{
    struct trailer t;
    char name[17];
    uint32_t pid, tid;
    int64_t ts;

    if (!(misc & PERF_RECORD_MISC_COMM_EXEC) || trailer(r, size, 8 + 8, &t) != 0) return;
    pid = etl_le32(r + 8);
    tid = etl_le32(r + 12);
    snprintf(name, sizeof name, "%.*s", (int)(size - 32 - 16 < 16 ? size - 32 - 16 : 16), (const char *)r + 16);
    ts = order_ts(c, t.time);
    /* exec: the process ends as the program it was and starts as the new one (its mappings
       went with the old program; the new one's come as Image Loads). */
    pcache_exec_images(c->k, pid, tid, ts);
    process_end(c, ts, pid, tid, 0);
    process_exec(c, ts, pid, tid, name);
}

static void mmap2_record(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct trailer t;
    char file[4096];
    uint32_t body = 8 + 8 + 24 + 24 + 8;

    if (trailer(r, size, body, &t) != 0) return;
    if (!(etl_le32(r + 8 + 8 + 24 + 24) & PROT_EXEC)) return;
    snprintf(file, sizeof file, "%.*s", (int)(size - 32 - body), (const char *)r + body);
    emit_image(c->k, order_ts(c, t.time), ETL_KHOOK_IMAGE_LOAD, etl_le32(r + 8), etl_le32(r + 12), etl_le64(r + 16),
               etl_le64(r + 24), etl_le64(r + 32), file);
}

/* ---- disk I/O (block:block_rq_issue, block:block_rq_complete) and system calls (raw_syscalls) ---- */

/* The offset and size of a char array field ("char rwbs[10]", 8 bytes in older kernels) in a
   tracepoint's format: 0, or -1 (err says so). */
static int tp_find_chars(const char *format, const char *event, const char *name, struct tp_field *f, char *err,
                         size_t errsize)
{
    char pattern[64];
    const char *p, *end, *o, *sz;

    snprintf(pattern, sizeof pattern, "char %s[", name);
    p = strstr(format, pattern);
    end = p ? strchr(p, '\n') : NULL;
    o = p ? strstr(p, "offset:") : NULL;
    sz = p ? strstr(p, "size:") : NULL;
    if (o && sz && (!end || (o < end && sz < end))) {
        f->off = (unsigned)strtoul(o + 7, NULL, 10);
        f->size = (unsigned)strtoul(sz + 5, NULL, 10);
        if (f->size > 0 && f->size <= 16) return 0;
    }
    snprintf(err, errsize, "kernel events: tracepoint %s has no char array field '%s'", event, name);
    return -1;
}

/* A sample of the block or raw_syscalls events: which, its thread and time, its raw data. */
struct io_sample {
    int e;
    uint32_t tid;
    int64_t ts;
    const uint8_t *raw;
    uint32_t raw_len;
};

/* Reads r as such a sample (their sample_type is IDENTIFIER, TID, TIME, CPU, RAW: no IP and
   no callchain, see open_cpu): 1, or 0 when it is another record. */
static int io_sample_of(const struct kcpu *c, const uint8_t *r, uint32_t size, struct io_sample *s)
{
    static const int io_events[] = { EV_RQ_ISSUE, EV_RQ_COMPLETE, EV_SYS_ENTER, EV_SYS_EXIT };
    uint64_t id;

    if (size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return 0;
    id = etl_le64(r + 8);
    s->e = -1;
    for (size_t i = 0; i < sizeof io_events / sizeof io_events[0]; i++)
        if (c->fd[io_events[i]] >= 0 && c->id[io_events[i]] == id) s->e = io_events[i];
    if (s->e < 0) return 0;
    s->tid = etl_le32(r + 20);                /* after the pid */
    s->ts = (int64_t)etl_le64(r + 24);
    s->raw_len = etl_le32(r + 40);            /* after CPU and its reserved word */
    if (s->raw_len > size - 44) return 0;
    s->raw = r + 44;
    return 1;
}

/* What a block tracepoint says of its request. */
struct rq {
    uint32_t dev, nr_sector, irp_flags;
    uint64_t sector;
    int kind;                                 /* ETL_KIO_* */
};

static void rq_read(const struct etl_kcapture *k, int complete, const struct io_sample *s, struct rq *q)
{
    const struct tp_field *w = &k->rq_rwbs[complete];
    char rwbs[17] = { 0 };

    q->dev = (uint32_t)tp_get(s->raw, s->raw_len, &k->rq_dev[complete]);
    q->sector = (uint64_t)tp_get(s->raw, s->raw_len, &k->rq_sector[complete]);
    q->nr_sector = (uint32_t)tp_get(s->raw, s->raw_len, &k->rq_nr_sector[complete]);
    if (w->off + w->size <= s->raw_len) memcpy(rwbs, s->raw + w->off, w->size);
    q->kind = etl_kio_kind(rwbs, w->size, &q->irp_flags);
    /* A flush's sector is 0 at its issue and -1 at its completion: flushes are matched by
       disk. A read or write of no data is the tail of a flush sequence (its issue was the
       flush): not written. */
    if (q->kind == ETL_KIO_FLUSH) q->sector = 0;
    else if (q->nr_sector == 0) q->kind = ETL_KIO_OTHER;
}

/* The Irp of a request: a key made of its disk, sector and issue time, the same in its Init
   and its completion (issue_ts 0: a completion whose issue was not seen). */
static uint64_t disk_irp(uint32_t dev, uint64_t sector, int64_t issue_ts)
{
    uint64_t x = ((uint64_t)dev << 40) ^ sector ^ ((uint64_t)issue_ts * 0x9E3779B97F4A7C15ull);

    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x ? x : 1;
}

static unsigned disk_slot(uint32_t dev, uint64_t sector)
{
    return (unsigned)(((sector * 0x9E3779B97F4A7C15ull) >> 40) ^ dev) % DTAB_SIZE;
}

/*
 * A request's completion often runs on another processor than its issue (an interrupt), and
 * each processor's reader goes at its own pace. So issues are noted when their record is read
 * from the ring (before the records are sorted and handled), and a completion is handled once
 * its issue is noted, or when DISK_WAIT_NS old (its issue was before the session, or lost:
 * then it has no response time and no issuing thread). An issue whose completion never came is
 * forgotten after DISK_STALE_NS.
 */
#define DISK_WAIT_NS 100000000
#define DISK_STALE_NS 10000000000LL

static void disk_note_issue(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct etl_kcapture *k = c->k;
    struct io_sample s;
    struct rq q;
    struct disk_req *d;
    unsigned slot;

    if (!io_sample_of(c, r, size, &s) || s.e != EV_RQ_ISSUE) return;
    rq_read(k, 0, &s, &q);
    if (q.kind == ETL_KIO_OTHER || !(d = malloc(sizeof *d))) return;
    d->dev = q.dev;
    d->sector = q.sector;
    d->ts = s.ts;
    d->tid = s.tid;
    slot = disk_slot(q.dev, q.sector);
    pthread_mutex_lock(&k->dlock);
    d->next = k->dtab[slot];
    k->dtab[slot] = d;
    pthread_mutex_unlock(&k->dlock);
}

/* The latest issue of (dev, sector) at or before ts into *out: 1, or 0 when none is noted.
   With take, it leaves the table, with the older issues of that sector (their completions
   were lost) and any issue older than DISK_STALE_NS. */
static int disk_issue(struct etl_kcapture *k, uint32_t dev, uint64_t sector, int64_t ts, int take, struct disk_req *out)
{
    unsigned slot = disk_slot(dev, sector);
    struct disk_req *best = NULL;

    pthread_mutex_lock(&k->dlock);
    for (struct disk_req *d = k->dtab[slot]; d; d = d->next)
        if (d->dev == dev && d->sector == sector && d->ts <= ts && (!best || d->ts > best->ts)) best = d;
    if (best) *out = *best;
    for (struct disk_req **p = &k->dtab[slot]; best && take && *p;) {
        struct disk_req *d = *p;
        if ((d->dev == dev && d->sector == sector && d->ts <= out->ts) || d->ts < ts - DISK_STALE_NS) {
            *p = d->next;
            free(d);
        } else {
            p = &d->next;
        }
    }
    pthread_mutex_unlock(&k->dlock);
    return best != NULL;
}

/* Whether the record r must wait before it is handled: a completion whose issue no reader has
   noted yet, younger than DISK_WAIT_NS. At the end (final) the other readers are reading their
   last records: it waits for them, 100 ms at most in all. */
static int disk_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final)
{
    struct io_sample s;
    struct disk_req d;
    struct rq q;

    if (!io_sample_of(c, r, size, &s) || s.e != EV_RQ_COMPLETE) return 0;
    rq_read(c->k, 1, &s, &q);
    if (q.kind == ETL_KIO_OTHER) return 0;
    while (!disk_issue(c->k, q.dev, q.sector, s.ts, 0, &d)) {
        if (!final) return etl_monoclock_exact() - s.ts < DISK_WAIT_NS;
        if (c->disk_waited_ms >= 100) return 0;
        usleep(1000);
        c->disk_waited_ms++;
    }
    return 0;
}

static void disk_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < DTAB_SIZE; i++)
        while (k->dtab[i]) {
            struct disk_req *d = k->dtab[i];
            k->dtab[i] = d->next;
            free(d);
        }
    pthread_mutex_destroy(&k->dlock);
}

/* DiskIo ReadInit, WriteInit or FlushInit at a request's issue. */
static void disk_issue_record(struct kcpu *c, const struct io_sample *s, int64_t ts)
{
    uint8_t buf[32];
    struct rq q;
    size_t n;

    rq_read(c->k, 0, s, &q);
    if (q.kind == ETL_KIO_OTHER) return; /* discards, secure erases, driver-private requests */
    n = etl_kpayload_disk_init(buf, sizeof buf, disk_irp(q.dev, q.sector, s->ts), s->tid);
    write_ev(c->k, ts,
             q.kind == ETL_KIO_READ ? ETL_KHOOK_DISK_READ_INIT
             : q.kind == ETL_KIO_WRITE ? ETL_KHOOK_DISK_WRITE_INIT : ETL_KHOOK_DISK_FLUSH_INIT,
             0, 0, buf, n);
}

/* DiskIo Read, Write or FlushBuffers at its completion, with what its issue said. */
static void disk_complete_record(struct kcpu *c, const struct io_sample *s, int64_t ts)
{
    etl_kdisk_desc d;
    struct disk_req issue;
    uint8_t buf[64];
    struct rq q;
    size_t n;

    rq_read(c->k, 1, s, &q);
    if (q.kind == ETL_KIO_OTHER) return;
    memset(&d, 0, sizeof d);
    d.disk_number = q.dev;
    d.irp_flags = q.irp_flags;
    d.transfer_size = q.nr_sector * 512u;
    d.byte_offset = (int64_t)(q.sector * 512u);
    d.irp = disk_irp(q.dev, q.sector, 0);
    if (disk_issue(c->k, q.dev, q.sector, s->ts, 1, &issue)) {
        d.irp = disk_irp(q.dev, q.sector, issue.ts);
        d.response_time = (uint64_t)(s->ts - issue.ts); /* ns: the PerfCounter clock's ticks */
        d.issuing_tid = issue.tid;
    }
    if (q.kind == ETL_KIO_FLUSH) {
        n = etl_kpayload_disk_flush(buf, sizeof buf, &d);
        write_ev(c->k, ts, ETL_KHOOK_DISK_FLUSH, 0, 0, buf, n);
    } else {
        n = etl_kpayload_disk_io(buf, sizeof buf, &d);
        write_ev(c->k, ts, q.kind == ETL_KIO_READ ? ETL_KHOOK_DISK_READ : ETL_KHOOK_DISK_WRITE, 0, 0, buf, n);
    }
}

/* A block or raw_syscalls sample, in its processor's buffer. PerfInfo's SysClEnter and
   SysClExit name no thread (Windows' consumers take the one CSwitch says is running). */
static void io_record(struct kcpu *c, const struct io_sample *s)
{
    struct etl_kcapture *k = c->k;
    int64_t ts = order_ts(c, s->ts);
    uint8_t buf[16];
    size_t n;

    if (s->e == EV_SYS_ENTER) {
        /* Linux has no system-call address a Windows consumer could resolve: the number. */
        n = etl_kpayload_syscall_enter(buf, sizeof buf, (uint64_t)tp_get(s->raw, s->raw_len, &k->sys_id));
        write_ev(k, ts, ETL_KHOOK_SYSCALL_ENTER, 0, 0, buf, n);
    } else if (s->e == EV_SYS_EXIT) {
        n = etl_kpayload_syscall_exit(buf, sizeof buf, etl_kntstatus(tp_get(s->raw, s->raw_len, &k->sys_ret)));
        write_ev(k, ts, ETL_KHOOK_SYSCALL_EXIT, 0, 0, buf, n);
    } else if (s->e == EV_RQ_ISSUE) {
        disk_issue_record(c, s, ts);
    } else {
        disk_complete_record(c, s, ts);
    }
}

/* The block and raw_syscalls tracepoints' ids and the fields read from them: 0, or -1 (err). */
static int io_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    char format[8192];

    for (int i = 0; i < 2 && (k->flags & ETL_KERNEL_DISK_IO); i++) {
        const char *ev = i ? "block:block_rq_complete" : "block:block_rq_issue";
        if (tracepoint(ev, &ids[i ? EV_RQ_COMPLETE : EV_RQ_ISSUE], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, ev, "dev", &k->rq_dev[i], err, errsize) != 0 ||
            tp_find(format, ev, "sector", &k->rq_sector[i], err, errsize) != 0 ||
            tp_find(format, ev, "nr_sector", &k->rq_nr_sector[i], err, errsize) != 0 ||
            tp_find_chars(format, ev, "rwbs", &k->rq_rwbs[i], err, errsize) != 0)
            return -1;
    }
    if (k->flags & ETL_KERNEL_SYSCALL) {
        if (tracepoint("raw_syscalls:sys_enter", &ids[EV_SYS_ENTER], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "raw_syscalls:sys_enter", "id", &k->sys_id, err, errsize) != 0 ||
            tracepoint("raw_syscalls:sys_exit", &ids[EV_SYS_EXIT], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "raw_syscalls:sys_exit", "ret", &k->sys_ret, err, errsize) != 0)
            return -1;
    }
    return 0;
}

/* A sample record: its event by id, then the fields its sample_type gives, in perf's order. */
/* Which of c's events has perf id id; EV_COUNT: none. */
static int event_of(const struct kcpu *c, uint64_t id)
{
    int e;

    for (e = 0; e < EV_COUNT && (__atomic_load_n(&c->fd[e], __ATOMIC_ACQUIRE) < 0 || c->id[e] != id); e++) {}
    return e;
}

static void sample_record(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    struct etl_kcapture *k = c->k;
    uint32_t o = 8, pid = 0, tid = 0, raw_len = 0, nframes = 0;
    uint64_t id, ip = 0, st, frames[MAX_FRAMES];
    const uint8_t *raw = NULL;
    int64_t ts = 0;
    int e;
    uint8_t buf[64];
    size_t n;

    if (size < o + 8) return;
    id = etl_le64(r + o);
    o += 8;
    e = event_of(c, id);
    if (e == EV_COUNT || e == EV_SIDEBAND) return;
    c->got[e]++;
    if (e == EV_LBR_PROFILE || e == EV_LBR_PMC) {
        etl_lbr_write_perf_trigger(k->s, &k->lbr_form[e - EV_LBR_PROFILE], r, size, c->last_ts, &c->last_ts);
        return;
    }
    st = k->sample_type[e];
    if (st & PERF_SAMPLE_IP) { if (size < o + 8) return; ip = etl_le64(r + o); o += 8; }
    if (size < o + 24) return;
    pid = etl_le32(r + o);
    tid = etl_le32(r + o + 4);
    ts = (int64_t)etl_le64(r + o + 8);
    o += 24; /* TID, TIME, CPU */
    if (st & PERF_SAMPLE_CALLCHAIN) {
        uint64_t nr;
        if (size < o + 8) return;
        nr = etl_le64(r + o);
        o += 8;
        if (nr > (size - o) / 8) return;
        nframes = etl_perf_callchain_frames(r + o, nr, frames, MAX_FRAMES);
        o += (uint32_t)(8 * nr);
    }
    if (st & PERF_SAMPLE_RAW) {
        if (size < o + 4) return;
        raw_len = etl_le32(r + o);
        if (raw_len > size - o - 4) return;
        raw = r + o + 4;
    }
    if (e == EV_RQ_ISSUE || e == EV_RQ_COMPLETE || e == EV_SYS_ENTER || e == EV_SYS_EXIT) {
        struct io_sample io = { e, tid, ts, raw, raw_len };
        io_record(c, &io);
        return;
    }
    ts = order_ts(c, ts);
    if (exit_unmap_sample(c, e, ts, pid, tid, raw, raw_len)) return;
    if (e == EV_PROFILE) {
        n = etl_kpayload_sample(buf, sizeof buf, ip, tid);
        write_ev(k, ts, ETL_KHOOK_SAMPLED_PROFILE, 0, 0, buf, n);
    } else if (e == EV_SWITCH) {
        uint8_t state, reason, mode;
        uint32_t prev = (uint32_t)tp_get(raw, raw_len, &k->prev_pid), next = (uint32_t)tp_get(raw, raw_len, &k->next_pid);
        etl_kstate(tp_get(raw, raw_len, &k->prev_state), &state, &reason, &mode);
        n = etl_kpayload_cswitch(buf, sizeof buf, next, prev,
                                 next ? etl_kpriority((int)tp_get(raw, raw_len, &k->next_prio)) : 0,
                                 prev ? etl_kpriority((int)tp_get(raw, raw_len, &k->prev_prio)) : 0, reason, mode, state);
        write_ev(k, ts, ETL_KHOOK_CSWITCH, 0, 0, buf, n);
    } else {
        const struct tp_field *f = e == EV_WAKEUP ? &k->wakeup_pid : &k->wakeup_new_pid;
        n = etl_kpayload_ready_thread(buf, sizeof buf, (uint32_t)tp_get(raw, raw_len, f));
        write_ev(k, ts, ETL_KHOOK_READY_THREAD, 0, 0, buf, n);
    }
    if (st & PERF_SAMPLE_CALLCHAIN) {
        uint8_t sbuf[16 + 8 * MAX_FRAMES];
        n = etl_kpayload_stack(sbuf, sizeof sbuf, ts, pid, tid, frames, nframes);
        write_ev(k, ts, ETL_KHOOK_STACK, 0, 0, sbuf, n);
    }
}

static void handle(struct kcpu *c, const uint8_t *r, uint32_t size)
{
    uint32_t type = etl_le32(r);
    uint16_t misc = etl_le16(r + 4);

    switch (type) {
    case PERF_RECORD_SAMPLE: sample_record(c, r, size); break;
    case PERF_RECORD_FORK: task_record(c, r, size, 1); break;
    case PERF_RECORD_EXIT: task_record(c, r, size, 0); break;
    case PERF_RECORD_COMM: comm_record(c, r, size, misc); break;
    case PERF_RECORD_MMAP2: mmap2_record(c, r, size); break;
    case PERF_RECORD_LOST:
        if (size >= 24) etl_session_add_events_lost(c->k->s, etl_le64(r + 16));
        break;
    case PERF_RECORD_LOST_SAMPLES:
        if (size >= 16) etl_session_add_events_lost(c->k->s, etl_le64(r + 8));
        break;
    default: break;
    }
}

/* The time of a record: a sample's TIME field, another's sample_id trailer (INT64_MIN when
   it has none it can be read from: handled in ring order). */
static int64_t record_time(const struct kcpu *c, const uint8_t *r, uint32_t size)
{
    uint32_t type = etl_le32(r), o = 8;

    if (type == PERF_RECORD_SAMPLE) {
        uint64_t id;
        int e;
        if (size < o + 8) return INT64_MIN;
        id = etl_le64(r + o);
        o += 8;
        e = event_of(c, id);
        if (e == EV_COUNT) return INT64_MIN;
        if (c->k->sample_type[e] & PERF_SAMPLE_IP) o += 8;
        return size >= o + 16 ? (int64_t)etl_le64(r + o + 8) : INT64_MIN;
    }
    return size >= 8 + 32 ? (int64_t)etl_le64(r + size - 24) : INT64_MIN;
}

static int queue_add(struct kcpu *c, const uint8_t *r, uint32_t len)
{
    if (c->qn == c->qcap) {
        size_t cap = c->qcap ? 2 * c->qcap : 1024;
        void *q = realloc(c->q, cap * sizeof *c->q);
        if (!q) return -1;
        c->q = q;
        c->qcap = cap;
    }
    if (c->q_used + len > c->q_bytes_cap) {
        size_t cap = c->q_bytes_cap ? 2 * c->q_bytes_cap : 1u << 20;
        void *b;
        while (cap < c->q_used + len) cap *= 2;
        b = realloc(c->q_bytes, cap);
        if (!b) return -1;
        c->q_bytes = b;
        c->q_bytes_cap = cap;
    }
    memcpy(c->q_bytes + c->q_used, r, len);
    c->q[c->qn].ts = record_time(c, r, len);
    c->q[c->qn].seq = c->q_seq++;
    c->q[c->qn].off = (uint32_t)c->q_used;
    c->q[c->qn].len = len;
    if (c->q[c->qn].ts == INT64_MIN) c->q[c->qn].ts = c->qn ? c->q[c->qn - 1].ts : c->last_ts;
    c->qn++;
    c->q_used += len;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct queued *x = a, *y = b;

    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What the ring of c holds now, handled in time order. The perf events of a processor share
 * its ring, but a record is written after its time is taken, so one that interrupted the
 * writing of another comes before it with a later time. The records read are sorted and
 * those older than REORDER_NS handled; the younger ones wait for the next round (all of
 * them at the end: final), as a record of that age has been written by then.
 */
#define REORDER_NS 5000000

static void drain(struct kcpu *c, int final)
{
    struct perf_event_mmap_page *m = (struct perf_event_mmap_page *)(void *)c->ring;
    const uint8_t *data = c->ring + c->page;
    uint64_t size = (uint64_t)RING_PAGES * c->page;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
    int64_t horizon = final ? INT64_MAX : etl_monoclock_exact() - REORDER_NS;
    size_t done = 0, keep = 0;

    while (tail + 8 <= head) {
        uint64_t at = tail % size;
        uint16_t len;
        uint32_t first;
        for (unsigned i = 0; i < 8; i++) c->rec[i] = data[(at + i) % size];
        len = etl_le16(c->rec + 6);
        if (len < 8 || tail + len > head) break;
        first = (uint32_t)(size - at < len ? size - at : len);
        memcpy(c->rec, data + at, first);
        memcpy(c->rec + first, data, len - first);
        disk_note_issue(c, c->rec, len);
        if (queue_add(c, c->rec, len) != 0) handle(c, c->rec, len); /* no memory: in ring order */
        tail += len;
    }
    __atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
    if (!c->qn) {
        flush_deferred(c, horizon);
        atomic_store(&c->progress, horizon);
        return;
    }
    qsort(c->q, c->qn, sizeof *c->q, by_time);
    while (done < c->qn && c->q[done].ts <= horizon && !disk_wait(c, c->q_bytes + c->q[done].off, c->q[done].len, final)) {
        atomic_store(&c->progress, c->q[done].ts - 1); /* (for wait_readers) */
        flush_deferred(c, c->q[done].ts);
        handle(c, c->q_bytes + c->q[done].off, c->q[done].len);
        done++;
    }
    /* Handled up to the first record left (a completion waiting for its issue, or one within
       the horizon's reach of records still to come), or to the horizon. */
    {
        int64_t upto = done < c->qn && c->q[done].ts - 1 < horizon ? c->q[done].ts - 1 : horizon;
        flush_deferred(c, upto);
        atomic_store(&c->progress, upto);
    }
    /* The rest, to the front (their bytes too). */
    if (done) {
        size_t used = 0;
        uint8_t *tmp = c->qn > done ? malloc(c->q_used) : NULL;
        if (c->qn > done && !tmp) { /* no memory: handle them now */
            for (; done < c->qn; done++) handle(c, c->q_bytes + c->q[done].off, c->q[done].len);
        }
        for (size_t i = done; i < c->qn; i++) {
            memcpy(tmp + used, c->q_bytes + c->q[i].off, c->q[i].len);
            c->q[keep] = c->q[i];
            c->q[keep++].off = (uint32_t)used;
            used += c->q[i].len;
        }
        if (tmp) memcpy(c->q_bytes, tmp, used);
        free(tmp);
        c->qn = keep;
        c->q_used = used;
    }
}

/* One processor's reader, on that processor, so that its records go to its buffer. */
static void *reader(void *arg)
{
    struct kcpu *c = arg;
    cpu_set_t set;

    this_reader = c;
    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    while (!atomic_load(&c->k->stop)) {
        struct pollfd p = { c->fd[EV_SIDEBAND], POLLIN, 0 };
        poll(&p, 1, 20);
        drain(c, 0);
    }
    drain(c, 1); /* the events were disabled before the stop was asked: this is the rest */
    return NULL;
}

static void set_enabled(struct etl_kcapture *k, int on)
{
    for (unsigned i = 0; i < k->ncpu; i++)
        for (int e = 0; e < EV_COUNT; e++)
            if (k->cpus[i].fd[e] >= 0) ioctl(k->cpus[i].fd[e], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static void kcapture_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < k->ncpu; i++) close_cpu(&k->cpus[i]);
    free(k->cpus);
    pcache_free(k);
    pthread_mutex_destroy(&k->plock);
    disk_free(k);
    free(k);
}

/*
 * The tracepoint events that fired and left no sample: each one's count (how often it fired
 * while enabled) less the samples read from the ring and those perf lost there (counted
 * already, from PERF_RECORD_LOST). Some kernels count an event and write no sample of it: the
 * one this project is tested on drops the samples of events that fire while the processor
 * runs its idle task (doc/kernel-events.md). Read once the readers are done.
 */
static uint64_t unsampled(struct etl_kcapture *k)
{
    uint64_t n = 0;

    for (unsigned i = 0; i < k->ncpu; i++)
        for (int e = 0; e < EV_COUNT; e++) {
            uint64_t v[2]; /* value, lost */
            if (!k->counted[e] || k->cpus[i].fd[e] < 0 || read(k->cpus[i].fd[e], v, sizeof v) != (ssize_t)sizeof v)
                continue;
            if (v[0] > k->cpus[i].got[e] + v[1]) n += v[0] - k->cpus[i].got[e] - v[1];
        }
    return n;
}

void etl_kcapture_end(etl_session *s, struct etl_kcapture *k)
{
    set_enabled(k, 0);
    atomic_store(&k->stop, 1);
    for (unsigned i = 0; i < k->ncpu; i++)
        if (k->cpus[i].started) pthread_join(k->cpus[i].thread, NULL);
    etl_session_add_events_lost(s, unsampled(k));
    /* After every perf record: the DCEnd rundown of what still runs, then its end. */
    rundown(k, etl_monoclock_exact(), 1);
    write_ev(k, etl_monoclock_exact(), ETL_KHOOK_RUNDOWN_COMPLETE, 0, 0, NULL, 0);
    kcapture_free(k);
}

/* The ids of exit_unmap_tps and their fields, for the flags asked; 0 for those this kernel
   lacks (their events are not recorded). */
static void exit_unmap_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT])
{
    char format[8192], ignored[512];

    for (size_t i = 0; i < sizeof exit_unmap_tps / sizeof exit_unmap_tps[0]; i++) {
        int e = exit_unmap_tps[i].ev;
        if (!(k->flags & exit_unmap_tps[i].flag) ||
            tracepoint_in(exit_unmap_tps[i].group, exit_unmap_tps[i].name, &ids[e], format, sizeof format, ignored,
                          sizeof ignored) != 0) {
            ids[e] = 0;
            continue;
        }
        for (int f = 0; f < 4 && exit_unmap_tps[i].fields[f]; f++)
            if (tp_find(format, exit_unmap_tps[i].name, exit_unmap_tps[i].fields[f], &k->tpf[e][f], ignored,
                        sizeof ignored) != 0)
                ids[e] = 0;
    }
}

/* The tracepoints' ids and the fields read from them: 0, or -1 (err). */
static int tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    char format[8192];

    if (k->flags & ETL_KERNEL_CSWITCH) {
        if (tracepoint("sched_switch", &ids[EV_SWITCH], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "sched_switch", "prev_pid", &k->prev_pid, err, errsize) != 0 ||
            tp_find(format, "sched_switch", "prev_prio", &k->prev_prio, err, errsize) != 0 ||
            tp_find(format, "sched_switch", "prev_state", &k->prev_state, err, errsize) != 0 ||
            tp_find(format, "sched_switch", "next_pid", &k->next_pid, err, errsize) != 0 ||
            tp_find(format, "sched_switch", "next_prio", &k->next_prio, err, errsize) != 0)
            return -1;
    }
    if (k->flags & ETL_KERNEL_DISPATCHER) {
        if (tracepoint("sched_wakeup", &ids[EV_WAKEUP], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "sched_wakeup", "pid", &k->wakeup_pid, err, errsize) != 0 ||
            tracepoint("sched_wakeup_new", &ids[EV_WAKEUP_NEW], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "sched_wakeup_new", "pid", &k->wakeup_new_pid, err, errsize) != 0)
            return -1;
    }
    if (io_tracepoints(k, ids, err, errsize) != 0) return -1;
    exit_unmap_tracepoints(k, ids);
    return 0;
}

static int kcapture_start(etl_session *s, struct etl_kcapture *k, uint32_t interval_100ns, char *err, size_t errsize)
{
    uint64_t ids[EV_COUNT] = { 0 };
    long page = sysconf(_SC_PAGESIZE);
    cpu_set_t online;
    int64_t t0;

    if (tracepoints(k, ids, err, errsize) != 0) return -1;
    /* The processors this process may run on: one reader each. */
    CPU_ZERO(&online);
    if (sched_getaffinity(0, sizeof online, &online) != 0) {
        snprintf(err, errsize, "kernel events: which processors are online: %s", strerror(errno));
        return -1;
    }
    k->cpus = calloc((size_t)CPU_COUNT(&online), sizeof *k->cpus);
    if (!k->cpus) {
        snprintf(err, errsize, "kernel events: out of memory");
        return -1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && k->ncpu < (unsigned)CPU_COUNT(&online); cpu++) {
        struct kcpu *c;
        if (!CPU_ISSET(cpu, &online)) continue;
        c = &k->cpus[k->ncpu++];
        c->k = k;
        c->cpu = cpu;
        c->page = (size_t)(page > 0 ? page : 4096);
        for (int e = 0; e < EV_COUNT; e++) c->fd[e] = -1;
        if (open_cpu(k, c, ids, interval_100ns, err, errsize) != 0) return -1;
    }
    /* Rundown events carry the time before the events were enabled: every perf record of a
       processor comes after them in its buffer (perf's clock is the session's, read exactly). */
    t0 = etl_monoclock_exact();
    set_enabled(k, 1);
    rundown(k, t0, 0);
    for (unsigned i = 0; i < k->ncpu; i++) {
        atomic_store(&k->cpus[i].progress, t0);
        atomic_store(&k->cpus[i].stuck_at, INT64_MIN);
    }
    for (unsigned i = 0; i < k->ncpu; i++) {
        k->cpus[i].last_ts = t0;
        if (pthread_create(&k->cpus[i].thread, NULL, reader, &k->cpus[i]) != 0) {
            snprintf(err, errsize, "kernel events: cannot start the reader of processor %d: %s", k->cpus[i].cpu,
                     strerror(errno));
            return -1;
        }
        k->cpus[i].started = 1;
    }
    (void)s;
    return 0;
}

int etl_session_enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags, uint32_t profile_interval_100ns,
                              char *err, size_t errsize)
{
    etl_session_properties p;
    struct etl_kcapture *k;
    char names[128];

    if (!s || etl_session_kcapture(s)) {
        snprintf(err, errsize, "kernel events: %s", s ? "already enabled in this session" : "no session");
        return ETL_FAILED;
    }
    if (!flags || (flags & ~ETL_KERNEL_ALL)) {
        snprintf(err, errsize, "kernel events: flags 0x%" PRIx32 " are not a non-empty set of %s", flags,
                 etl_kernel_flags_format(ETL_KERNEL_ALL, names, sizeof names));
        return ETL_FAILED;
    }
    if ((stackwalk_flags & ~ETL_KERNEL_STACKWALK_ALL) || (stackwalk_flags & ~flags)) {
        snprintf(err, errsize, "kernel events: stack walks are for profile, cswitch and dispatcher events that "
                 "are enabled (0x%" PRIx32 " asked, 0x%" PRIx32 " enabled)", stackwalk_flags, flags);
        return ETL_FAILED;
    }
    etl_session_properties_get(s, &p);
    if (p.clock_type != ETL_CLOCK_PERFCOUNTER) {
        snprintf(err, errsize, "kernel events: the session's clock must be PerfCounter (perf's CLOCK_MONOTONIC_RAW)");
        return ETL_FAILED;
    }
    k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errsize, "kernel events: out of memory");
        return ETL_FAILED;
    }
    k->s = s;
    k->flags = flags;
    k->stackwalk = stackwalk_flags;
    atomic_init(&k->stop, 0);
    pthread_mutex_init(&k->plock, NULL);
    pthread_mutex_init(&k->dlock, NULL);
    k->interval_100ns = profile_interval_100ns ? profile_interval_100ns : 10000;
    int started = kcapture_start(s, k, k->interval_100ns, err, errsize) == 0;
    if (started && etl_session_hook_add(s, &kcapture_hook, k) != ETL_OK) {
        snprintf(err, errsize, "kernel events: %s", strerror(errno));
        started = 0;
    }
    if (!started) {
        set_enabled(k, 0);
        atomic_store(&k->stop, 1);
        for (unsigned i = 0; i < k->ncpu; i++)
            if (k->cpus[i].started) pthread_join(k->cpus[i].thread, NULL);
        kcapture_free(k);
        return ETL_FAILED;
    }
    etl_session_set_kernel_flags(s, flags); /* the kernel triggers etl_session_configure_lbr takes */
    return ETL_OK;
}

/* ---- LBR: triggers sampled with branch stacks, in the processors' own rings ---- */

/* The perf event that samples a PerfInfo trigger (46 SampledProfile, 47 PMC interrupt) with a
   branch stack, into a; returns its slot. */
static int lbr_source(const struct etl_kcapture *k, uint8_t type, uint64_t branch_type, struct perf_event_attr *a)
{
    uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK;
    int slot;

    if (type == 46) { /* SampledProfile: cycles, as often as the profile's interval asks */
        uint32_t per_second = 10000000u / k->interval_100ns;
        if (k->stackwalk & ETL_KERNEL_PROFILE) st |= PERF_SAMPLE_CALLCHAIN;
        attr_base(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, st);
        a->freq = 1;
        a->sample_freq = per_second ? per_second : 1;
        slot = EV_LBR_PROFILE;
    } else { /* PMC interrupt: branch instructions, every 65536 (the seed's example) */
        attr_base(a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, st);
        a->sample_period = 65536;
        slot = EV_LBR_PMC;
    }
    a->branch_sample_type = branch_type;
    return slot;
}

int etl_kcapture_lbr_start(struct etl_kcapture *k, const struct etl_lbr_config *cfg, uint64_t branch_sample_type,
                           char *err, size_t errsize)
{
    struct perf_event_attr attr[2];
    int want[2] = { 0, 0 };
    int (*fds)[2];

    memset(attr, 0, sizeof attr);
    for (unsigned t = 0; t < cfg->count; t++) {
        const etl_classic_event_id *e = &cfg->events[t];
        if (!etl_guid_equal(&e->event_guid, etl_group_guid(ETL_GROUP_PERFINFO)) || (e->type != 46 && e->type != 47)) {
            char g[ETL_GUID_STRING_SIZE];
            snprintf(err, errsize, "LBR capture: trigger %s:%u has no perf event with branch stacks (Linux takes them "
                     "only with hardware counter samples: the triggers 'profile' and 'pmc')",
                     etl_guid_format(&e->event_guid, g), e->type);
            return -1;
        }
    }
    if (!k || !cfg->count) {
        snprintf(err, errsize, "LBR capture: %s", k ? "the session has no LBR triggers (etl_session_configure_lbr)"
                                                    : "the session has no kernel events (etl_session_enable_kernel)");
        return -1;
    }
    for (unsigned t = 0; t < cfg->count; t++) {
        struct perf_event_attr a;
        int slot = lbr_source(k, cfg->events[t].type, branch_sample_type, &a);
        attr[slot - EV_LBR_PROFILE] = a;
        want[slot - EV_LBR_PROFILE] = 1;
    }
    if (k->cpus[0].fd[EV_LBR_PROFILE] >= 0 || k->cpus[0].fd[EV_LBR_PMC] >= 0) {
        snprintf(err, errsize, "LBR capture: already started in this session");
        return -1;
    }
    fds = malloc(k->ncpu * sizeof *fds);
    if (!fds) {
        snprintf(err, errsize, "LBR capture: out of memory");
        return -1;
    }
    /* Everything opened and tied to the processors' rings before anything is published. */
    for (unsigned i = 0; i < k->ncpu; i++) fds[i][0] = fds[i][1] = -1;
    for (unsigned i = 0; i < k->ncpu; i++) {
        struct kcpu *c = &k->cpus[i];
        for (int j = 0; j < 2; j++) {
            if (!want[j]) continue;
            long fd = perf_open(&attr[j], c->cpu);
            if (fd < 0) {
                char what[96];
                snprintf(what, sizeof what, "%s on processor %d", ev_names[EV_LBR_PROFILE + j], c->cpu);
                etl_lbr_perf_cause(errno, what, err, errsize);
                goto fail;
            }
            fds[i][j] = (int)fd;
            if (ioctl(fds[i][j], PERF_EVENT_IOC_SET_OUTPUT, c->fd[EV_SIDEBAND]) != 0 ||
                ioctl(fds[i][j], PERF_EVENT_IOC_ID, &c->id[EV_LBR_PROFILE + j]) != 0) {
                snprintf(err, errsize, "LBR capture: %s on processor %d cannot share the kernel events' ring: %s",
                         ev_names[EV_LBR_PROFILE + j], c->cpu, strerror(errno));
                goto fail;
            }
        }
    }
    for (int j = 0; j < 2; j++) {
        etl_lbr_trigger_form *f = &k->lbr_form[j];
        memset(f, 0, sizeof *f);
        f->trigger = j ? 47 : 46;
        f->profile_source = j ? ETL_KPROFILE_BRANCH_INSTRUCTIONS : 0;
        f->filters = cfg->flags;
        f->stack = !j && (k->stackwalk & ETL_KERNEL_PROFILE);
        f->sample_type = attr[j].sample_type;
        f->branch_sample_type = branch_sample_type;
        k->sample_type[EV_LBR_PROFILE + j] = attr[j].sample_type;
    }
    for (unsigned i = 0; i < k->ncpu; i++)
        for (int j = 0; j < 2; j++)
            if (fds[i][j] >= 0) __atomic_store_n(&k->cpus[i].fd[EV_LBR_PROFILE + j], fds[i][j], __ATOMIC_RELEASE);
    /* The profile's samples now come from cycles, with their branch stacks: the cpu-clock
       source stops first (its samples have none), then the LBR events start. */
    for (unsigned i = 0; i < k->ncpu; i++) {
        struct kcpu *c = &k->cpus[i];
        if (want[0] && c->fd[EV_PROFILE] >= 0) ioctl(c->fd[EV_PROFILE], PERF_EVENT_IOC_DISABLE, 0);
        for (int j = 0; j < 2; j++)
            if (fds[i][j] >= 0) ioctl(fds[i][j], PERF_EVENT_IOC_ENABLE, 0);
    }
    free(fds);
    return 0;
fail:
    for (unsigned i = 0; i < k->ncpu; i++)
        for (int j = 0; j < 2; j++)
            if (fds[i][j] >= 0) close(fds[i][j]);
    free(fds);
    return -1;
}

void etl_kcapture_lbr_stop(struct etl_kcapture *k)
{
    for (unsigned i = 0; k && i < k->ncpu; i++)
        for (int e = EV_LBR_PROFILE; e <= EV_LBR_PMC; e++)
            if (k->cpus[i].fd[e] >= 0) ioctl(k->cpus[i].fd[e], PERF_EVENT_IOC_DISABLE, 0);
}

#else /* not Linux with perf events */

void etl_kcapture_end(etl_session *s, struct etl_kcapture *k)
{
    (void)s;
    (void)k;
}

int etl_session_enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags, uint32_t profile_interval_100ns,
                              char *err, size_t errsize)
{
    (void)s; (void)flags; (void)stackwalk_flags; (void)profile_interval_100ns;
    snprintf(err, errsize, "kernel events: this system has no perf events (Linux only)");
    return ETL_FAILED;
}

int etl_kcapture_lbr_start(struct etl_kcapture *k, const struct etl_lbr_config *cfg, uint64_t branch_sample_type,
                           char *err, size_t errsize)
{
    (void)k; (void)cfg; (void)branch_sample_type;
    snprintf(err, errsize, "LBR capture: this system has no perf events (Linux only)");
    return -1;
}

void etl_kcapture_lbr_stop(struct etl_kcapture *k) { (void)k; }

#endif
