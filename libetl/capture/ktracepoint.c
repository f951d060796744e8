/* SPDX-License-Identifier: MIT */
/* Kernel capture's tracepoints: which it records for which flags, their ids in tracefs, and where their fields are in a sample's raw data. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* Reads a small file whole into buf (NUL-terminated); its length, or -1. */
ssize_t etl_kread_small(const char *path, char *buf, size_t size)
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

/* The first tracefs events directory there is into path: 1, or 0 (none: tracefs is not mounted). */
static int events_dir(char *path, size_t size)
{
    struct stat st;

    for (size_t i = 0; i < sizeof tracefs_dirs / sizeof tracefs_dirs[0]; i++) {
        snprintf(path, size, "%s/events", tracefs_dirs[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
    }
    return 0;
}

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
        if (etl_kread_small(path, buf, sizeof buf) <= 0) {
            if (errno != ENOENT) saved = errno;
            continue;
        }
        *id = strtoull(buf, NULL, 10);
        snprintf(path, sizeof path, "%s/events/%.*s/%s/format", tracefs_dirs[i], syslen, sys, name);
        if (etl_kread_small(path, format, fsize) <= 0) break;
        return 0;
    }
    if (saved == ENOENT && events_dir(path, sizeof path))
        snprintf(err, errsize, "kernel events: tracepoint %.*s:%s: not in %s (this kernel does not have it)", syslen,
                 sys, name, path);
    else if (saved == ENOENT)
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

int etl_ktracepoint(const char *event, uint64_t *id, char *format, size_t fsize, char *err, size_t errsize)
{
    return tracepoint(event, id, format, fsize, err, errsize);
}

int etl_ktp_find_any(const char *format, const char *event, const char *name, struct tp_field *f, char *err,
                     size_t errsize)
{
    size_t len = strlen(name);

    for (const char *p = strstr(format, "field:"); p; p = strstr(p + 1, "field:")) {
        const char *semi = strchr(p, ';'), *end = semi, *o, *s;
        if (!semi) break;
        if (end > p && end[-1] == ']') /* name[N] */
            while (end > p && *end != '[') end--;
        if ((size_t)(end - p) < len + 1 || memcmp(end - len, name, len) != 0 ||
            (end[-(ptrdiff_t)len - 1] != ' ' && end[-(ptrdiff_t)len - 1] != '\t' && end[-(ptrdiff_t)len - 1] != '*'))
            continue;
        o = strstr(semi, "offset:");
        s = strstr(semi, "size:");
        if (!o || !s) break;
        f->off = (unsigned)strtoul(o + 7, NULL, 10);
        f->size = (unsigned)strtoul(s + 5, NULL, 10);
        if (f->size > 0 && f->size <= 64) return 0;
        break;
    }
    snprintf(err, errsize, "kernel events: tracepoint %s has no field '%s'", event, name);
    return -1;
}

uint64_t etl_ktp_uint(const uint8_t *raw, uint32_t raw_len, const struct tp_field *f)
{
    if (f->off + f->size > raw_len) return 0;
    switch (f->size) {
    case 1: return raw[f->off];
    case 2: return etl_le16(raw + f->off);
    case 4: return etl_le32(raw + f->off);
    case 8: return etl_le64(raw + f->off);
    default: return 0;
    }
}

int64_t etl_ktp_get(const uint8_t *raw, uint32_t raw_len, const struct tp_field *f)
{
    if (f->off + f->size > raw_len) return 0;
    return f->size == 8 ? (int64_t)etl_le64(raw + f->off) : (int32_t)etl_le32(raw + f->off);
}

/* The tracepoints of image unloads (image_load) and of exit statuses (process), and the
   fields read from them (into tpf[ev], in this order). Optional: a kernel without syscall
   tracepoints (CONFIG_FTRACE_SYSCALLS) records neither. */
const struct etl_ktp_optional etl_kexit_unmap_tps[] = {
    { EV_MUNMAP, ETL_KERNEL_IMAGE_LOAD, "syscalls", "sys_enter_munmap", { "addr", "len" } },
    { EV_MREMAP, ETL_KERNEL_IMAGE_LOAD, "syscalls", "sys_enter_mremap", { "addr", "old_len", "new_len", "flags" } },
    { EV_EXIT_GROUP, ETL_KERNEL_PROCESS, "syscalls", "sys_enter_exit_group", { "error_code" } },
    { EV_EXIT, ETL_KERNEL_PROCESS, "syscalls", "sys_enter_exit", { "error_code" } },
    { EV_SIG_DELIVER, ETL_KERNEL_PROCESS, "signal", "signal_deliver", { "sig", "sa_handler" } },
    { EV_SIG_GENERATE, ETL_KERNEL_PROCESS, "signal", "signal_generate", { "sig", "pid", "group", "result" } },
};
const size_t etl_kexit_unmap_ntps = sizeof etl_kexit_unmap_tps / sizeof etl_kexit_unmap_tps[0];

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

/* The ids of etl_kexit_unmap_tps and their fields, for the flags asked; 0 for those this kernel
   lacks (their events are not recorded). */
static void exit_unmap_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT])
{
    char format[8192], ignored[512];

    for (size_t i = 0; i < sizeof etl_kexit_unmap_tps / sizeof etl_kexit_unmap_tps[0]; i++) {
        int e = etl_kexit_unmap_tps[i].ev;
        if (!(k->flags & etl_kexit_unmap_tps[i].flag) ||
            tracepoint_in(etl_kexit_unmap_tps[i].group, etl_kexit_unmap_tps[i].name, &ids[e], format, sizeof format, ignored,
                          sizeof ignored) != 0) {
            ids[e] = 0;
            continue;
        }
        for (int f = 0; f < 4 && etl_kexit_unmap_tps[i].fields[f]; f++)
            if (tp_find(format, etl_kexit_unmap_tps[i].name, etl_kexit_unmap_tps[i].fields[f], &k->tpf[e][f], ignored,
                        sizeof ignored) != 0)
                ids[e] = 0;
    }
}

/* The flags whose events come from tracepoints (those of process and image_load optional). */
#define TRACEPOINT_FLAGS                                                                                       \
    (ETL_KERNEL_CSWITCH | ETL_KERNEL_DISPATCHER | ETL_KERNEL_DISK_IO | ETL_KERNEL_SYSCALL | ETL_KERNEL_PROCESS | \
     ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_INTERRUPT | ETL_KERNEL_DPC | ETL_KERNEL_NETWORK_TCPIP | ETL_KERNEL_VIRTUAL_ALLOC | \
     ETL_KERNEL_VAMAP | ETL_KERNEL_MEMORY_HARD_FAULTS)

/* The irq tracepoints' ids and fields (interrupt: irq_handler_entry/exit; dpc: softirq_entry/
   exit), and for dpc each softirq's action in /proc/kallsyms (0 where it shows no addresses,
   or has no such symbol): 0, or -1 (err). */
static int irq_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    char format[8192], line[512];
    FILE *f;

    if (k->flags & ETL_KERNEL_INTERRUPT) {
        if (tracepoint("irq:irq_handler_entry", &ids[EV_IRQ_ENTRY], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "irq:irq_handler_entry", "irq", &k->irq_irq[0], err, errsize) != 0 ||
            tracepoint("irq:irq_handler_exit", &ids[EV_IRQ_EXIT], format, sizeof format, err, errsize) != 0 ||
            tp_find(format, "irq:irq_handler_exit", "irq", &k->irq_irq[1], err, errsize) != 0 ||
            tp_find(format, "irq:irq_handler_exit", "ret", &k->irq_ret, err, errsize) != 0)
            return -1;
    }
    if (!(k->flags & ETL_KERNEL_DPC)) return 0;
    if (tracepoint("irq:softirq_entry", &ids[EV_SOFTIRQ_ENTRY], format, sizeof format, err, errsize) != 0 ||
        tp_find(format, "irq:softirq_entry", "vec", &k->softirq_vec[0], err, errsize) != 0 ||
        tracepoint("irq:softirq_exit", &ids[EV_SOFTIRQ_EXIT], format, sizeof format, err, errsize) != 0 ||
        tp_find(format, "irq:softirq_exit", "vec", &k->softirq_vec[1], err, errsize) != 0)
        return -1;
    if (!(f = fopen("/proc/kallsyms", "re"))) return 0;
    while (fgets(line, sizeof line, f)) {
        char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL, *name, *end;
        if (!sp2) continue;
        name = sp2 + 1;
        end = name + strcspn(name, "\t\n");
        for (unsigned v = 0; v < ETL_KSOFTIRQS; v++) {
            const char *a = etl_ksoftirq_actions[v];
            while (a && *a) { /* each of its names, '|'-separated */
                size_t len = strcspn(a, "|");
                if ((size_t)(end - name) == len && memcmp(name, a, len) == 0 && !k->softirq_routine[v])
                    k->softirq_routine[v] = strtoull(line, NULL, 16);
                a += len + (a[len] == '|');
            }
        }
    }
    fclose(f);
    return 0;
}

int etl_kvm_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    static const struct {
        const char *name;
        const char *fields[6];
    } tps[EV_VM_COUNT] = {
        { "sys_enter_mmap", { "addr", "len", "prot", "flags", "fd", "off" } }, { "sys_exit_mmap", { "ret" } },
        { "sys_enter_munmap", { "addr", "len" } },                             { "sys_exit_munmap", { "ret" } },
        { "sys_enter_mremap", { "addr", "old_len", "new_len", "flags" } },     { "sys_exit_mremap", { "ret" } },
        { "sys_enter_brk", { "brk" } },                                        { "sys_exit_brk", { "ret" } },
    };
    char format[8192];

    if (!(k->flags & (ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP))) return 0;
    for (int i = 0; i < EV_VM_COUNT; i++) {
        if (tracepoint_in("syscalls", tps[i].name, &ids[EV_VM_FIRST + i], format, sizeof format, err, errsize) != 0) {
            size_t n = strlen(err);
            snprintf(err + n, errsize - n, "; virtual_alloc and vamap need the syscalls tracepoints "
                     "(a kernel built with CONFIG_FTRACE_SYSCALLS)");
            return -1;
        }
        for (int f = 0; f < 6 && tps[i].fields[f]; f++)
            if (tp_find(format, tps[i].name, tps[i].fields[f], &k->vm_f[i][f], err, errsize) != 0) return -1;
    }
    return 0;
}

/* 1 when tracefs is not mounted: neither tracefs directory has an events directory; 0 when one
   has, or cannot be looked at (no permission: the tracepoints' own errors then tell). */
static int tracefs_missing(void)
{
    char path[64];
    struct stat st;

    for (size_t i = 0; i < sizeof tracefs_dirs / sizeof tracefs_dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/events", tracefs_dirs[i]);
        if (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) return 0;
    }
    return 1;
}

/* Mounts tracefs as trace-cmd does: tracefs at /sys/kernel/tracing, else debugfs at
   /sys/kernel/debug (its tracing directory is tracefs). 0 with what it mounted in note, or -1
   (err, with why tracefs's mount failed). It stays mounted. */
static int tracefs_mount(char *note, size_t nsize, char *err, size_t errsize)
{
    struct stat st;
    int saved;

    if (mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) == 0) {
        snprintf(note, nsize, "mounted tracefs at %s", tracefs_dirs[0]);
        return 0;
    }
    saved = errno;
    if (mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL) == 0) {
        char path[64];
        snprintf(path, sizeof path, "%s/events", tracefs_dirs[1]);
        if (stat(path, &st) == 0) {
            snprintf(note, nsize, "mounted debugfs at /sys/kernel/debug (tracefs at %s)", tracefs_dirs[1]);
            return 0;
        }
        umount2("/sys/kernel/debug", MNT_DETACH); /* no tracing in it: as it was */
    }
    snprintf(err, errsize,
             "kernel events: tracefs is not mounted (no %s/events, no %s/events) and mounting it failed: "
             "mount -t tracefs nodev %s: %s%s",
             tracefs_dirs[0], tracefs_dirs[1], tracefs_dirs[0], strerror(saved),
             saved == EPERM ? " (mounting needs root or CAP_SYS_ADMIN)" : "");
    return -1;
}

/* The tracepoints' ids and the fields read from them: 0, or -1 (err). tracefs, when it is not
   mounted and a flag wants tracepoints, is mounted first (k->note says so), or the capture
   fails. */
int etl_ktracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    char format[8192];

    k->note[0] = '\0';
    if ((k->flags & TRACEPOINT_FLAGS) && tracefs_missing() &&
        tracefs_mount(k->note, sizeof k->note, err, errsize) != 0)
        return -1;
    /* memory_page_faults' kinds want tracefs too, and go without (DemandZeroFault) */
    if ((k->flags & ETL_KERNEL_MEMORY_PAGE_FAULTS) && tracefs_missing() &&
        tracefs_mount(k->note, sizeof k->note, err, errsize) != 0)
        err[0] = '\0';

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
    if (irq_tracepoints(k, ids, err, errsize) != 0) return -1;
    if ((k->flags & ETL_KERNEL_NETWORK_TCPIP) && etl_knet_tracepoints(k, ids, err, errsize) != 0) return -1;
    if (etl_kvm_tracepoints(k, ids, err, errsize) != 0) return -1;
    if (etl_khf_tracepoints(k, ids, err, errsize) != 0) return -1;
    if (etl_kpf_tracepoints(k, ids, err, errsize) != 0) return -1;
    exit_unmap_tracepoints(k, ids);
    /* process: each exec's command line, from the new program's stack (optional: without it,
       /proc gives what it can when the exec's record is read) */
    if (!(k->flags & ETL_KERNEL_PROCESS) ||
        tracepoint("sched_process_exec", &ids[EV_EXEC], format, sizeof format, err, errsize) != 0 ||
        tp_find(format, "sched_process_exec", "filename", &k->exec_filename, err, errsize) != 0) {
        ids[EV_EXEC] = 0;
        err[0] = '\0';
    }
    return 0;
}

#endif
