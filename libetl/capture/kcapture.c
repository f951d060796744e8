/* SPDX-License-Identifier: MIT */
/* Kernel capture: Linux perf events written as the NT Kernel Logger's event classes (doc/kernel-events.md). The session's side: the flags' names, the perf events of each processor opened, the readers started, LBR events added, the end. */
/* perf_event_open, sched_getaffinity, CPU_SET: Linux interfaces. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

/* The user stack pointer's place among perf's user registers, where the capture knows it: an
   exec's sample dumps the new program's stack from there (its command line, kexec.c). */
#if defined(__x86_64__) || defined(__i386__)
#include <asm/perf_regs.h>
#define EXEC_SP_REG PERF_REG_X86_SP
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
#define EXEC_SP_REG PERF_REG_ARM64_SP
#endif

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
    { "disk_io", ETL_KERNEL_DISK_IO },   { "syscall", ETL_KERNEL_SYSCALL },       { "dpc", ETL_KERNEL_DPC },
    { "interrupt", ETL_KERNEL_INTERRUPT }, { "memory_page_faults", ETL_KERNEL_MEMORY_PAGE_FAULTS },
    { "memory_hard_faults", ETL_KERNEL_MEMORY_HARD_FAULTS },
    { "network_tcpip", ETL_KERNEL_NETWORK_TCPIP },
    { "file_io", ETL_KERNEL_FILE_IO },   { "file_io_init", ETL_KERNEL_FILE_IO_INIT }, { "disk_file_io", ETL_KERNEL_DISK_FILE_IO },
    { "virtual_alloc", ETL_KERNEL_VIRTUAL_ALLOC }, { "vamap", ETL_KERNEL_VAMAP },
    { "process_counters", ETL_KERNEL_PROCESS_COUNTERS },
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

/* ------------------------------------------------------------------ capture */

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

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
                                                [EV_EXEC] = "sched:sched_process_exec",
                                                [EV_IRQ_ENTRY] = "irq:irq_handler_entry",
                                                [EV_IRQ_EXIT] = "irq:irq_handler_exit",
                                                [EV_SOFTIRQ_ENTRY] = "irq:softirq_entry",
                                                [EV_SOFTIRQ_EXIT] = "irq:softirq_exit",
                                                [EV_FAULT_MIN] = "minor-faults",
                                                [EV_FAULT_MAJ] = "major-faults",
                                                [EV_NET_STATE] = "sock:inet_sock_set_state",
                                                [EV_NET_SEND] = "sock:sock_send_length",
                                                [EV_NET_RECV] = "sock:sock_recv_length",
                                                [EV_NET_RETRANSMIT] = "tcp:tcp_retransmit_skb",
                                                [EV_NET_UDP] = "network_tcpip's UDP BPF programs' output",
                                                [EV_FILEIO] = "the file I/O BPF programs' output",
                                                [EV_VM_MMAP] = "syscalls:sys_enter_mmap",
                                                [EV_VM_MMAP_RET] = "syscalls:sys_exit_mmap",
                                                [EV_VM_MUNMAP] = "syscalls:sys_enter_munmap",
                                                [EV_VM_MUNMAP_RET] = "syscalls:sys_exit_munmap",
                                                [EV_VM_MREMAP] = "syscalls:sys_enter_mremap",
                                                [EV_VM_MREMAP_RET] = "syscalls:sys_exit_mremap",
                                                [EV_VM_BRK] = "syscalls:sys_enter_brk",
                                                [EV_VM_BRK_RET] = "syscalls:sys_exit_brk",
                                                [EV_HF_FAULT] = "filemap:mm_filemap_fault",
                                                [EV_HF_ADD] = "filemap:mm_filemap_add_to_page_cache",
                                                [EV_PF_USER] = "exceptions:page_fault_user",
                                                [EV_PF_KERNEL] = "exceptions:page_fault_kernel",
                                                [EV_PF_MAP] = "filemap:mm_filemap_map_pages",
                                                [EV_LBR_PROFILE] = "cycles with a branch stack",
                                                [EV_LBR_PMC] = "branch instructions with a branch stack" };

static long perf_open(struct perf_event_attr *a, int cpu)
{
    return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

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
    if (c->exec_ring) munmap(c->exec_ring, c->exec_ring_len);
    c->exec_ring = NULL;
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

    for (size_t i = 0; i < etl_kexit_unmap_ntps; i++)
        want[etl_kexit_unmap_tps[i].ev] = (k->flags & etl_kexit_unmap_tps[i].flag) && tp_ids[etl_kexit_unmap_tps[i].ev];
    want[EV_EXEC] = (k->flags & ETL_KERNEL_PROCESS) && tp_ids[EV_EXEC] && k->exec_args;
    want[EV_IRQ_ENTRY] = want[EV_IRQ_EXIT] = !!(k->flags & ETL_KERNEL_INTERRUPT);
    want[EV_SOFTIRQ_ENTRY] = want[EV_SOFTIRQ_EXIT] = !!(k->flags & ETL_KERNEL_DPC);
    want[EV_FAULT_MIN] = want[EV_FAULT_MAJ] = !!(k->flags & ETL_KERNEL_MEMORY_PAGE_FAULTS);
    /* memory_hard_faults: each file fault's attempts and the pages read, ended by its major fault */
    if (k->flags & ETL_KERNEL_MEMORY_HARD_FAULTS) want[EV_HF_FAULT] = want[EV_HF_ADD] = want[EV_FAULT_MAJ] = 1;
    /* memory_page_faults' kinds (where this kernel tells them): each fault's entry, and the
       file pages faulted on (kfaultkind.c) */
    if ((k->flags & ETL_KERNEL_MEMORY_PAGE_FAULTS) && k->pf_kinds)
        want[EV_PF_USER] = want[EV_PF_KERNEL] = want[EV_PF_MAP] = want[EV_HF_FAULT] = 1;
    want[EV_NET_STATE] = want[EV_NET_SEND] = want[EV_NET_RECV] = want[EV_NET_RETRANSMIT] =
        !!(k->flags & ETL_KERNEL_NETWORK_TCPIP);
    want[EV_NET_UDP] = (k->flags & ETL_KERNEL_NETWORK_TCPIP) && k->net_udp;
    want[EV_FILEIO] = !!(k->flags & ETL_KERNEL_FILEIO_ALL);
    for (int e = EV_VM_FIRST; e < EV_VM_FIRST + EV_VM_COUNT; e++)
        want[e] = !!(k->flags & (ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP));

    for (int e = 0; e < EV_COUNT; e++) {
        uint32_t sw_flag = e == EV_SWITCH ? ETL_KERNEL_CSWITCH : e == EV_PROFILE ? ETL_KERNEL_PROFILE
                         : e == EV_WAKEUP || e == EV_WAKEUP_NEW ? ETL_KERNEL_DISPATCHER : 0;
        uint64_t extra = e != EV_SIDEBAND && (k->stackwalk & sw_flag) ? PERF_SAMPLE_CALLCHAIN : 0;
        if (e == EV_RQ_ISSUE || e == EV_RQ_COMPLETE || e == EV_SYS_ENTER || e == EV_SYS_EXIT) extra = 0; /* no stack walks */
        if (e >= EV_VM_FIRST && e < EV_VM_FIRST + EV_VM_COUNT) extra = 0; /* (kvmem.c reads their records so) */
        if (e == EV_HF_FAULT || e == EV_HF_ADD) extra = 0;                  /* (and khardfault.c) */
        if (e == EV_PF_USER || e == EV_PF_KERNEL || e == EV_PF_MAP) extra = 0; /* (and kfaultkind.c) */
        if (!want[e]) continue;
        if (e == EV_SIDEBAND) {
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0);
            a.task = !!(k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD |
                                    ETL_KERNEL_PROCESS_COUNTERS));
            /* (thread: each rename, Thread/SetName) */
            a.comm = a.comm_exec = !!(k->flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD));
            a.mmap = a.mmap2 = !!(k->flags & ETL_KERNEL_IMAGE_LOAD);
            /* The switches, for those whose sched_switch sample a kernel may not write
               (kring.c, switch_record). */
            a.context_switch = !!(k->flags & ETL_KERNEL_CSWITCH);
            /* No attr.build_id: with it set, a perf record running at the same time (Debian's
               perf 6.1 on Linux 6.18) got MMAP2 records it took for build-id ones and died of a
               stack overflow in build_id__init; the capture reads each file's note itself
               (kimageid.c), once per file. */
            a.watermark = 1;
            a.wakeup_watermark = RING_PAGES * (uint32_t)c->page / 4;
        } else if (e == EV_PROFILE) {
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PERF_SAMPLE_IP | extra);
            a.sample_period = (uint64_t)interval_100ns * 100;
        } else if (e == EV_FAULT_MIN || e == EV_FAULT_MAJ) {
            /* every fault, counted where the kernel accounts it (its end, minor or major), with
               the faulting address */
            attr_base(&a, PERF_TYPE_SOFTWARE, e == EV_FAULT_MIN ? PERF_COUNT_SW_PAGE_FAULTS_MIN : PERF_COUNT_SW_PAGE_FAULTS_MAJ,
                      PERF_SAMPLE_IP | PERF_SAMPLE_ADDR);
            a.sample_period = 1;
        } else if (e == EV_FILEIO || e == EV_NET_UDP) {
            /* the BPF programs' records (kfileio.c, knet.c), stamped by perf on the session's clock */
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, PERF_SAMPLE_RAW);
            a.sample_period = 1;
        } else if (e == EV_EXEC) {
            /* The program's file name, and where it can be had the new stack pointer and
               stack (argc, argv, the arguments), in a ring of its own whose thread wakes at
               each exec (kexec.c): /proc is read at once for an exec whose dump stops short. */
            attr_base(&a, PERF_TYPE_TRACEPOINT, tp_ids[e], PERF_SAMPLE_RAW);
#ifdef EXEC_SP_REG
            a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            a.sample_regs_user = 1ull << EXEC_SP_REG;
            a.sample_stack_user = ETL_KEXEC_STACK_BYTES;
#endif
            a.sample_period = 1;
            a.wakeup_events = 1;
        } else {
            attr_base(&a, PERF_TYPE_TRACEPOINT, tp_ids[e], PERF_SAMPLE_RAW | extra);
            a.sample_period = 1;
        }
        k->sample_type[e] = a.sample_type;
        /* A tracepoint's count says how often it fired: with its lost samples (perf 6.0's
           PERF_FORMAT_LOST), what neither reached the ring nor was lost there is known. (The
           exec samples are no events of the trace.) */
        if (a.type == PERF_TYPE_TRACEPOINT && e != EV_EXEC) a.read_format = PERF_FORMAT_LOST;
        long fd = perf_open(&a, c->cpu);
        if (fd < 0 && errno == EINVAL && a.read_format) {
            a.read_format = 0; /* an older kernel */
            fd = perf_open(&a, c->cpu);
        }
        if (c == &k->cpus[0]) k->counted[e] = a.read_format != 0;
        if (fd < 0 && e == EV_EXEC) {
            /* Without it, command lines come from /proc when each exec's record is handled. */
            k->exec_args = 0;
            continue;
        }
        if (e == EV_EXEC) {
            void *m = mmap(NULL, (EXEC_RING_PAGES + 1) * c->page, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
            if (m == MAP_FAILED) { /* (kernel.perf_event_mlock_kb): as without it */
                close((int)fd);
                k->exec_args = 0;
                continue;
            }
            c->exec_ring = m;
            c->exec_ring_len = (EXEC_RING_PAGES + 1) * c->page;
            c->fd[e] = (int)fd;
            continue;
        }
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
        /* network_tcpip: only what the capture writes reaches the ring (the sockets of other
           families and protocols are left out in the kernel; a kernel that refuses the filter
           sends them, and the readers leave them out) */
        if ((e == EV_NET_SEND || e == EV_NET_RECV) && k->net_udp) /* (UDP's from the BPF programs) */
            ioctl(c->fd[e], PERF_EVENT_IOC_SET_FILTER, "(family == 2 || family == 10) && ret > 0 && protocol == 6");
        else if (e == EV_NET_SEND || e == EV_NET_RECV)
            ioctl(c->fd[e], PERF_EVENT_IOC_SET_FILTER, "(family == 2 || family == 10) && ret > 0");
        else if (e == EV_NET_STATE)
            ioctl(c->fd[e], PERF_EVENT_IOC_SET_FILTER, "protocol == 6");
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
        if (e == EV_FILEIO && etl_kfileio_set_cpu(k, c->cpu, c->fd[e], err, errsize) != 0) return -1;
        if (e == EV_NET_UDP && etl_knet_udp_set_cpu(k, c->cpu, c->fd[e], err, errsize) != 0) return -1;
    }
    return 0;
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
    etl_kpcache_free(k);
    etl_kbid_cache_free(k->bids);
    etl_kexec_free(k);
    pthread_mutex_destroy(&k->plock);
    etl_kdisk_free(k);
    etl_kvm_free(k);
    etl_khf_free(k);
    etl_kpf_free(k);
    etl_kcounters_free(k);
    if (k->switched)
        for (int i = 0; i < 64; i++) pthread_mutex_destroy(&k->switched_lock[i]);
    free(k->switched);
    etl_knames_free(k);
    pthread_mutex_destroy(&k->nlock);
    etl_knet_free(k);
    etl_kfileio_free(k);
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

/* The readers and the exec thread stop (that one first: the readers' last records may wait
   for what it notes last). */
static void stop_threads(struct etl_kcapture *k)
{
    set_enabled(k, 0);
    atomic_store(&k->stop, 1);
    if (k->exec_started) pthread_join(k->exec_thread, NULL);
    k->exec_started = 0;
    for (unsigned i = 0; i < k->ncpu; i++)
        if (k->cpus[i].started) pthread_join(k->cpus[i].thread, NULL);
    for (unsigned i = 0; i < k->ncpu; i++) k->cpus[i].started = 0;
}

/* With the profile: PerfInfo CollectionStart (in the start's rundown) or CollectionEnd (in the
   end's) of its source, the timer, with its interval (100 ns units) as NewInterval and
   OldInterval, as Windows writes them: what consumers weigh a sample with. */
static void write_collection(struct etl_kcapture *k, int64_t ts, uint16_t hook)
{
    uint8_t buf[64];
    size_t n;

    if (!(k->flags & ETL_KERNEL_PROFILE)) return;
    n = etl_kpayload_profile_interval(buf, sizeof buf, ETL_KPROFILE_TIME, k->interval_100ns, k->interval_100ns,
                                      "Timer");
    if (n <= sizeof buf) etl_kwrite_ev(k, ts, hook, 0, 0, buf, n);
}

/* With syscall: LinuxImageID SystemCalls, the names of this architecture's system call
   numbers (what SysClEnter's SysCallAddress holds), once, in the start's rundown. Nothing
   where the library has no table for its architecture, or a record could not hold it. */
static void write_system_calls(struct etl_kcapture *k, int64_t ts)
{
    uint16_t machine, count;
    const char *const *names = etl_ksyscall_names(&machine, &count);
    size_t n = etl_kpayload_system_calls(NULL, 0, machine, names, count);
    uint8_t *buf;

    if (!(k->flags & ETL_KERNEL_SYSCALL) || !count) return;
    if (n > etl_kallsyms_chunk_max(k)) {
        etl_knote(k, "system call names not recorded: the session's buffers are too small for them");
        return;
    }
    if (!(buf = malloc(n))) return;
    etl_kpayload_system_calls(buf, n, machine, names, count);
    etl_kwrite_image_id(k->s, ts, ETL_LINUX_IMAGE_ID_SYSTEM_CALLS, 0, 0, buf, n);
    free(buf);
}

/* SystemConfig PhyDisk, LogDisk and NIC events of the machine's disks, file systems and network
   adapters, each at ts (sysconfig_write's context). */
struct sysconfig_ctx {
    struct etl_kcapture *k;
    int64_t ts;
};
static void sysconfig_write(const struct sysconfig_ctx *x, uint16_t hook, const uint8_t *buf, size_t n, size_t cap)
{
    if (n <= cap) etl_kwrite_ev(x->k, x->ts, hook, (uint32_t)getpid(), (uint32_t)gettid(), buf, n);
}
static void write_phydisk(void *ctx, const etl_ksysconfig_phydisk *d)
{
    uint8_t buf[1024];
    sysconfig_write(ctx, ETL_HOOK_SYSCONFIG_PHYDISK, buf, etl_kpayload_sysconfig_phydisk(buf, sizeof buf, d), sizeof buf);
}
static void write_logdisk(void *ctx, const etl_ksysconfig_logdisk *d)
{
    uint8_t buf[256];
    sysconfig_write(ctx, ETL_HOOK_SYSCONFIG_LOGDISK, buf, etl_kpayload_sysconfig_logdisk(buf, sizeof buf, d), sizeof buf);
}
static void write_nic(void *ctx, const etl_ksysconfig_nic *n)
{
    uint8_t buf[4096];
    sysconfig_write(ctx, ETL_HOOK_SYSCONFIG_NIC, buf, etl_kpayload_sysconfig_nic(buf, sizeof buf, n), sizeof buf);
}

/* The system configuration Windows writes at a kernel session's end (unless NO_SYSCONFIG):
   SystemConfig/CPU, which names the machine (etl2clickhouse's --machine by default), then its
   physical disks, logical disks (mounted block file systems) and network adapters. */
static void write_sysconfig(struct etl_kcapture *k, int64_t ts)
{
    struct sysconfig_ctx x = { k, ts };
    etl_ksysconfig_cpu c;
    uint8_t buf[1024];
    size_t n;

    etl_ksysconfig_cpu_read(&c);
    n = etl_kpayload_sysconfig_cpu(buf, sizeof buf, &c);
    if (n <= sizeof buf) etl_kwrite_ev(k, ts, ETL_HOOK_SYSCONFIG_CPU, (uint32_t)getpid(), (uint32_t)gettid(), buf, n);
    etl_ksysconfig_phydisks(write_phydisk, &x);
    etl_ksysconfig_logdisks(write_logdisk, &x);
    etl_ksysconfig_nics(write_nic, &x);
}

void etl_kcapture_end(etl_session *s, struct etl_kcapture *k)
{
    int64_t ts;

    stop_threads(k);
    etl_kcounters_stop(k);
    etl_session_add_events_lost(s, unsampled(k));
    /* After every perf record: the profile's CollectionEnd, the DCEnd rundown of what still
       runs, then its end. */
    ts = etl_monoclock_exact();
    write_collection(k, ts, ETL_HOOK_PROFILE_COLLECTION_END);
    etl_krundown(k, ts, 1);
    etl_kfileio_rundown(k, ts);
    etl_kcounters_rundown(k, ts);
    write_sysconfig(k, etl_monoclock_exact());
    etl_kwrite_ev(k, etl_monoclock_exact(), ETL_HOOK_RUNDOWN_COMPLETE, 0, 0, NULL, 0);
    kcapture_free(k);
}

static int kcapture_start(etl_session *s, struct etl_kcapture *k, uint32_t interval_100ns, char *err, size_t errsize)
{
    uint64_t ids[EV_COUNT] = { 0 };
    long page = sysconf(_SC_PAGESIZE);
    cpu_set_t online;
    int64_t t0;

    if (etl_ktracepoints(k, ids, err, errsize) != 0) return -1;
    if (etl_kfileio_load(k, err, errsize) != 0) return -1;
    etl_knet_udp_load(k);
    if (etl_kcounters_start(k, err, errsize) != 0) return -1;
    /* The processors this process may run on: one reader each. */
    CPU_ZERO(&online);
    if (sched_getaffinity(0, sizeof online, &online) != 0) {
        snprintf(err, errsize, "kernel events: which processors are online: %s", strerror(errno));
        return -1;
    }
    k->exec_args = ids[EV_EXEC] != 0;
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
        c->irq_ts = c->softirq_ts = INT64_MIN;
        for (int e = 0; e < EV_COUNT; e++) c->fd[e] = -1;
        if (open_cpu(k, c, ids, interval_100ns, err, errsize) != 0) return -1;
    }
    /* Rundown events carry the time before the events were enabled: every perf record of a
       processor comes after them in its buffer (perf's clock is the session's, read exactly). */
    if (etl_kfileio_attach(k, err, errsize) != 0) return -1;
    t0 = etl_monoclock_exact();
    set_enabled(k, 1);
    etl_knet_rundown(k); /* (after: a listener opened meanwhile is seen there or here) */
    write_collection(k, t0, ETL_HOOK_PROFILE_COLLECTION_START);
    write_system_calls(k, t0);
    etl_krundown(k, t0, 0);
    for (unsigned i = 0; i < k->ncpu; i++) {
        atomic_store(&k->cpus[i].progress, t0);
        atomic_store(&k->cpus[i].stuck_at, INT64_MIN);
    }
    for (unsigned i = 0; i < k->ncpu; i++) {
        k->cpus[i].last_ts = t0;
        if (pthread_create(&k->cpus[i].thread, NULL, etl_kreader, &k->cpus[i]) != 0) {
            snprintf(err, errsize, "kernel events: cannot start the reader of processor %d: %s", k->cpus[i].cpu,
                     strerror(errno));
            return -1;
        }
        k->cpus[i].started = 1;
    }
    if (k->exec_args) {
        if (pthread_create(&k->exec_thread, NULL, etl_kexec_watcher, k) != 0) {
            snprintf(err, errsize, "kernel events: cannot start the thread of the exec events: %s", strerror(errno));
            return -1;
        }
        k->exec_started = 1;
    }
    (void)s;
    return 0;
}

static int enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags, uint32_t profile_interval_100ns,
                         char *err, size_t errsize)
{
    etl_session_properties p;
    struct etl_kcapture *k;
    char names[ETL_KERNEL_FLAGS_NAMES_SIZE];

    if (etl_session_kcapture(s)) {
        snprintf(err, errsize, "kernel events: already enabled in this session");
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
    k->bids = etl_kbid_cache_new(); /* (NULL: each file is read at each mapping) */
    k->stackwalk = stackwalk_flags;
    atomic_init(&k->stop, 0);
    pthread_mutex_init(&k->plock, NULL);
    pthread_mutex_init(&k->dlock, NULL);
    pthread_mutex_init(&k->nlock, NULL);
    pthread_mutex_init(&k->netlock, NULL);
    if ((flags & ETL_KERNEL_CSWITCH) && (k->switched = calloc(ETL_KSWITCHED_SLOTS, sizeof *k->switched)))
        for (int i = 0; i < 64; i++) pthread_mutex_init(&k->switched_lock[i], NULL);
    if (etl_kexec_init(k) != 0 || etl_kvm_init(k) != 0 || etl_khf_init(k) != 0 || etl_kpf_init(k) != 0) {
        snprintf(err, errsize, "kernel events: out of memory");
        kcapture_free(k);
        return ETL_FAILED;
    }
    k->interval_100ns = profile_interval_100ns ? profile_interval_100ns : 10000;
    int started = kcapture_start(s, k, k->interval_100ns, err, errsize) == 0;
    if (started && etl_session_hook_add(s, &kcapture_hook, k) != ETL_OK) {
        snprintf(err, errsize, "kernel events: %s", strerror(errno));
        started = 0;
    }
    if (!started) {
        stop_threads(k);
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

const char *etl_session_kernel_note(const etl_session *s)
{
    struct etl_kcapture *k = s ? etl_session_kcapture(s) : NULL;

    return k ? k->note : "";
}

int etl_session_kernel_sync(const etl_session *s, unsigned timeout_ms)
{
    struct etl_kcapture *k = s ? etl_session_kcapture(s) : NULL;
    int64_t now = etl_monoclock_exact(), until = now + (int64_t)timeout_ms * 1000000;

    for (;;) {
        unsigned i;
        for (i = 0; k && i < k->ncpu && atomic_load(&k->cpus[i].progress) >= now; i++) {}
        if (!k || i == k->ncpu) return ETL_OK;
        if (etl_monoclock_exact() >= until) {
            errno = ETIMEDOUT;
            return ETL_FAILED;
        }
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    }
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

static int enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags, uint32_t profile_interval_100ns,
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

const char *etl_session_kernel_note(const etl_session *s)
{
    (void)s;
    return "";
}

int etl_session_kernel_sync(const etl_session *s, unsigned timeout_ms)
{
    (void)s;
    (void)timeout_ms;
    return ETL_OK;
}

#endif

/* The message goes on the session (etl_session_error). */
int etl_session_enable_kernel(etl_session *s, uint32_t flags, uint32_t stackwalk_flags, uint32_t profile_interval_100ns)
{
    char err[1024];

    if (!s) {
        errno = EINVAL;
        return ETL_FAILED;
    }
    err[0] = '\0';
    if (enable_kernel(s, flags, stackwalk_flags, profile_interval_100ns, err, sizeof err) == ETL_OK) return ETL_OK;
    etl_session_set_error(s, "%s", err);
    return ETL_FAILED;
}
