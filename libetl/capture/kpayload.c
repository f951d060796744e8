/* SPDX-License-Identifier: MIT */
/* Kernel capture's payload encoders (the kernel classes' 64-bit payloads), the header each hook is written with, and the Linux-to-Windows mappings (priorities, thread states, block requests, NTSTATUS). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

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
/* A WCHAR[units] field: s cut to units - 1 code units as UTF-16LE, NUL-padded. */
static void put_wchars(struct kp *b, const char *s, uint32_t units)
{
    uint8_t t[1024];

    if (units * 2 > sizeof t || units < 4) return;
    memset(t, 0, units * 2);
    etl_utf8_to_utf16(t, s ? s : "", units);
    put(b, t, units * 2);
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

size_t etl_kpayload_sysconfig_phydisk(uint8_t *out, size_t cap, const etl_ksysconfig_phydisk *d)
{
    struct kp b = kp_start(out, cap);

    put32(&b, d->disk_number);
    put32(&b, d->bytes_per_sector);
    put32(&b, d->sectors_per_track);
    put32(&b, d->tracks_per_cylinder);
    put64(&b, d->cylinders);
    put32(&b, d->scsi_port);
    put32(&b, d->scsi_path);
    put32(&b, d->scsi_target);
    put32(&b, d->scsi_lun);
    put_wchars(&b, d->manufacturer, 256);
    put32(&b, d->partition_count);
    put8(&b, d->write_cache_enabled);
    put8(&b, 0);               /* Pad */
    put(&b, "\0\0\0\0\0\0\0\0\0\0", 10); /* BootDriveLetter W[3], Spare W[2]: no drive letters */
    return done(&b);
}

size_t etl_kpayload_sysconfig_logdisk(uint8_t *out, size_t cap, const etl_ksysconfig_logdisk *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->start_offset);
    put64(&b, d->partition_size);
    put32(&b, d->disk_number);
    put32(&b, 0);              /* Size */
    put32(&b, d->drive_type);
    put(&b, "\0\0\0\0\0\0\0\0", 8); /* DriveLetterString W[4]: no drive letters */
    put32(&b, 0);              /* Pad1 */
    put32(&b, d->partition_number);
    put32(&b, d->sectors_per_cluster);
    put32(&b, d->bytes_per_sector);
    put32(&b, 0);              /* Pad2 */
    put64(&b, (uint64_t)d->free_clusters);
    put64(&b, (uint64_t)d->total_clusters);
    put_wchars(&b, d->file_system, 16);
    put32(&b, 0);              /* VolumeExt */
    put32(&b, 0);              /* Pad3 */
    return done(&b);
}

size_t etl_kpayload_sysconfig_nic(uint8_t *out, size_t cap, const etl_ksysconfig_nic *n)
{
    struct kp b = kp_start(out, cap);

    put64(&b, n->physical_addr);
    put32(&b, n->physical_addr_len);
    put32(&b, n->ipv4_index);
    put32(&b, n->ipv6_index);
    put_str16(&b, n->description);
    put_str16(&b, n->ip_addresses);
    put_str16(&b, n->dns_servers);
    return done(&b);
}

size_t etl_kpayload_thread_name(uint8_t *out, size_t cap, uint32_t pid, uint32_t tid, const char *name)
{
    struct kp b = kp_start(out, cap);

    put32(&b, pid);
    put32(&b, tid);
    put_str16(&b, name);
    return done(&b);
}

size_t etl_kpayload_sysconfig_cpu(uint8_t *out, size_t cap, const etl_ksysconfig_cpu *c)
{
    struct kp b = kp_start(out, cap);
    uint8_t t[2];

    put32(&b, c->mhz);
    put32(&b, c->processors);
    put32(&b, c->mem_mb);
    put32(&b, c->page_size);
    put32(&b, c->allocation_granularity);
    put_wchars(&b, c->computer_name, 256);
    put_wchars(&b, c->domain_name, 134);
    put64(&b, c->hyper_threading_flag);
    put64(&b, c->highest_user_address);
    etl_put16(t, c->architecture);
    put(&b, t, 2);
    etl_put16(t, c->level);
    put(&b, t, 2);
    etl_put16(t, c->revision);
    put(&b, t, 2);
    put8(&b, c->nx);
    put8(&b, c->pae);
    put32(&b, c->memory_speed);
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
                            int8_t old_priority, uint8_t wait_reason, uint8_t wait_mode, uint8_t state,
                            uint8_t wait_ideal_processor, uint32_t new_wait_time)
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
    put8(&b, wait_ideal_processor);
    put32(&b, new_wait_time);
    put32(&b, 0);              /* OldThreadRemainingQuantum */
    return done(&b);
}

uint32_t etl_kwait_ticks(int64_t ns)
{
    const int64_t tick = 15625000; /* ns: the TimerResolution a libetl file's header says */

    if (ns <= 0) return 0;
    return ns / tick > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / tick);
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

size_t etl_kpayload_isr(uint8_t *out, size_t cap, int64_t initial_time, uint64_t routine, uint8_t return_value,
                        uint8_t vector)
{
    struct kp b = kp_start(out, cap);

    put64(&b, (uint64_t)initial_time);
    put64(&b, routine);
    put8(&b, return_value);
    put8(&b, vector);
    put8(&b, 0);               /* Reserved u16 */
    put8(&b, 0);
    return done(&b);
}

size_t etl_kpayload_dpc(uint8_t *out, size_t cap, int64_t initial_time, uint64_t routine)
{
    struct kp b = kp_start(out, cap);

    put64(&b, (uint64_t)initial_time);
    put64(&b, routine);
    return done(&b);
}

size_t etl_kpayload_page_fault(uint8_t *out, size_t cap, uint64_t virtual_address, uint64_t program_counter)
{
    struct kp b = kp_start(out, cap);

    put64(&b, virtual_address);
    put64(&b, program_counter);
    return done(&b);
}

size_t etl_kpayload_hard_fault(uint8_t *out, size_t cap, const etl_khard_fault_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, (uint64_t)d->initial_time);
    put64(&b, d->read_offset);
    put64(&b, d->virtual_address);
    put64(&b, d->file_object);
    put32(&b, d->tid);
    put32(&b, d->byte_count);
    return done(&b);
}

size_t etl_kpayload_tcpip(uint8_t *out, size_t cap, uint16_t hook, const etl_ktcpip_desc *d)
{
    struct kp b = kp_start(out, cap);
    unsigned alen = d->v6 ? 16 : 4;
    uint16_t base = (uint16_t)(d->v6 ? hook - ETL_HOOK_TCPIP_IPV6 : hook);

    put32(&b, d->pid);
    put32(&b, d->size);
    put(&b, d->daddr, alen);
    put(&b, d->saddr, alen);
    put8(&b, (uint8_t)(d->dport >> 8)); /* network order */
    put8(&b, (uint8_t)d->dport);
    put8(&b, (uint8_t)(d->sport >> 8));
    put8(&b, (uint8_t)d->sport);
    if (base == ETL_HOOK_TCPIP_SEND) {
        put32(&b, 0); /* startime, endtime: not known */
        put32(&b, 0);
    } else if (base == ETL_HOOK_TCPIP_CONNECT || base == ETL_HOOK_TCPIP_ACCEPT) {
        uint16_t opt[4] = { d->mss, d->sackopt, d->tsopt, d->wsopt };
        for (int i = 0; i < 4; i++) {
            put8(&b, (uint8_t)opt[i]);
            put8(&b, (uint8_t)(opt[i] >> 8));
        }
        put32(&b, d->rcvwin);
        put8(&b, (uint8_t)(uint16_t)d->rcvwinscale);
        put8(&b, (uint8_t)((uint16_t)d->rcvwinscale >> 8));
        put8(&b, (uint8_t)(uint16_t)d->sndwinscale);
        put8(&b, (uint8_t)((uint16_t)d->sndwinscale >> 8));
    }
    put32(&b, d->seqnum);
    put64(&b, d->connid);
    return done(&b);
}

size_t etl_kpayload_virtual_alloc(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, uint32_t flags)
{
    struct kp b = kp_start(out, cap);

    put64(&b, base);
    put64(&b, size);
    put32(&b, pid);
    put32(&b, flags);
    return done(&b);
}

uint64_t etl_kfile_key(uint32_t dev_major, uint32_t dev_minor, uint64_t ino)
{
    uint64_t dev = (uint64_t)dev_major << 32 | dev_minor;
    uint64_t x = (dev * 0x9E3779B97F4A7C15ull) ^ ino;

    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x ? x : 1;
}

size_t etl_kpayload_map_file(uint8_t *out, size_t cap, const etl_kmap_file_desc *m)
{
    struct kp b = kp_start(out, cap);

    put64(&b, m->view_base);
    put64(&b, m->file_key);
    put64(&b, m->misc_info);
    put64(&b, m->view_size);
    put64(&b, m->byte_offset);
    put32(&b, m->pid);
    return done(&b);
}

size_t etl_kpayload_file_name(uint8_t *out, size_t cap, uint64_t file_object, const char *name)
{
    struct kp b = kp_start(out, cap);

    put64(&b, file_object);
    put_str16(&b, name);
    return done(&b);
}

size_t etl_kpayload_process_counters(uint8_t *out, size_t cap, const etl_kproc_counters *c)
{
    struct kp b = kp_start(out, cap);

    put32(&b, c->pid);
    put32(&b, c->page_fault_count);
    put32(&b, c->handle_count);
    put32(&b, 0); /* Reserved */
    put64(&b, c->peak_virtual_size);
    put64(&b, c->peak_working_set_size);
    put64(&b, c->peak_pagefile_usage);
    put64(&b, 0); /* QuotaPeakPagedPoolUsage */
    put64(&b, 0); /* QuotaPeakNonPagedPoolUsage */
    put64(&b, c->virtual_size);
    put64(&b, c->working_set_size);
    put64(&b, c->pagefile_usage);
    put64(&b, 0); /* QuotaPagedPoolUsage */
    put64(&b, 0); /* QuotaNonPagedPoolUsage */
    put64(&b, c->private_page_count);
    return done(&b);
}

const char *const etl_ksoftirq_actions[ETL_KSOFTIRQS] = {
    "tasklet_hi_action", "run_timer_softirq", "net_tx_action", "net_rx_action", "blk_done_softirq",
    "irq_poll_softirq", "tasklet_action", "sched_balance_softirq|run_rebalance_domains", "hrtimer_run_softirq",
    "rcu_core_si",
};

uint16_t etl_ksoftirq_hook(uint32_t vec)
{
    return vec == 1 || vec == 8 ? ETL_HOOK_TIMER_DPC : ETL_HOOK_DPC; /* TIMER, HRTIMER */
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

size_t etl_kpayload_profile_interval(uint8_t *out, size_t cap, uint32_t source, uint32_t new_interval,
                                     uint32_t old_interval, const char *source_name)
{
    struct kp b = kp_start(out, cap);

    put32(&b, source);
    put32(&b, new_interval);
    put32(&b, old_interval);
    put_str16(&b, source_name);
    return done(&b);
}

size_t etl_kpayload_build_id(uint8_t *out, size_t cap, uint64_t base, uint64_t size, uint32_t pid, uint64_t file_offset,
                             const etl_kbuild_id *b, const char *file_name)
{
    struct kp b_ = kp_start(out, cap);
    uint16_t n = b ? b->size : 0;

    put64(&b_, base);
    put64(&b_, size);
    put32(&b_, pid);
    put64(&b_, file_offset);
    put8(&b_, (uint8_t)n);
    put8(&b_, (uint8_t)(n >> 8));
    if (n) put(&b_, b->id, n);
    put_str8(&b_, file_name);
    return done(&b_);
}

size_t etl_kpayload_kernel_symbols(uint8_t *out, size_t cap, uint32_t sequence, const char *text, size_t n)
{
    struct kp b = kp_start(out, cap);

    put32(&b, sequence);
    put(&b, text, n);
    put8(&b, 0);
    return done(&b);
}

size_t etl_kpayload_kernel_module(uint8_t *out, size_t cap, uint64_t base, uint64_t size, const etl_kbuild_id *b,
                                  const char *name)
{
    struct kp p = kp_start(out, cap);
    uint16_t n = b ? b->size : 0;

    put64(&p, base);
    put64(&p, size);
    put8(&p, (uint8_t)n);
    put8(&p, (uint8_t)(n >> 8));
    if (n) put(&p, b->id, n);
    put_str8(&p, name);
    return done(&p);
}

size_t etl_kpayload_system_calls(uint8_t *out, size_t cap, uint16_t machine, const char *const *names, uint16_t count)
{
    struct kp b = kp_start(out, cap);

    put8(&b, (uint8_t)machine);
    put8(&b, (uint8_t)(machine >> 8));
    put8(&b, (uint8_t)count);
    put8(&b, (uint8_t)(count >> 8));
    for (unsigned i = 0; i < count; i++) put_str8(&b, names[i]);
    return done(&b);
}

int etl_kwrite_image_id(etl_session *s, int64_t ts, uint8_t opcode, uint32_t pid, uint32_t tid, const uint8_t *payload,
                        size_t n)
{
    etl_data d = { payload, (uint32_t)n };

    return etl_session_write_classic(s, ts, &etl_guid_linux_image_id, opcode, 0, ETL_LINUX_IMAGE_ID_VERSION, pid, tid,
                                     &d, 1);
}

/* ------------------------------------------------------------------ header forms */

int etl_kcapture_form(uint16_t hook, int *system, uint16_t *version)
{
    static const struct {
        uint16_t hook;
        uint8_t system, version;
    } forms[] = {
        { ETL_HOOK_PROCESS_START, 1, 4 },   { ETL_HOOK_PROCESS_END, 1, 4 },     { ETL_HOOK_PROCESS_DCSTART, 0, 4 },
        { ETL_HOOK_PROCESS_DCEND, 0, 4 },   { ETL_HOOK_THREAD_START, 1, 3 },    { ETL_HOOK_THREAD_END, 1, 3 },
        { ETL_HOOK_THREAD_DCSTART, 1, 3 },  { ETL_HOOK_THREAD_DCEND, 1, 3 },    { ETL_HOOK_PROCESS_LOAD_IMAGE, 1, 3 },
        { ETL_HOOK_IMAGE_DCSTART, 1, 3 },   { ETL_HOOK_IMAGE_DCEND, 1, 3 },     { ETL_HOOK_CSWITCH, 0, 4 },
        { ETL_HOOK_READY_THREAD, 0, 2 },    { ETL_HOOK_THREAD_SET_NAME, 1, 2 },
        { ETL_HOOK_SAMPLED_PROFILE, 0, 2 }, { ETL_HOOK_STACKWALK_STACK, 0, 2 },
        { ETL_HOOK_RUNDOWN_COMPLETE, 0, 2 }, { ETL_HOOK_PMC_SAMPLE, 0, 2 },
        { ETL_HOOK_DISK_READ, 0, 3 },       { ETL_HOOK_DISK_WRITE, 0, 3 },      { ETL_HOOK_DISK_READ_INIT, 0, 3 },
        { ETL_HOOK_DISK_WRITE_INIT, 0, 3 }, { ETL_HOOK_DISK_FLUSH, 0, 3 },      { ETL_HOOK_DISK_FLUSH_INIT, 0, 3 },
        { ETL_HOOK_SYSCALL_ENTER, 0, 2 },   { ETL_HOOK_SYSCALL_EXIT, 0, 2 },
        { ETL_HOOK_ISR, 0, 2 },             { ETL_HOOK_DPC, 0, 2 },             { ETL_HOOK_TIMER_DPC, 0, 2 },
        { ETL_HOOK_PAGE_FAULT_DEMAND_ZERO, 1, 2 }, { ETL_HOOK_PAGE_FAULT_HARD, 1, 2 },
        { ETL_HOOK_TCPIP_SEND, 1, 2 },      { ETL_HOOK_TCPIP_RECV, 1, 2 },      { ETL_HOOK_TCPIP_CONNECT, 1, 2 },
        { ETL_HOOK_TCPIP_DISCONNECT, 1, 2 }, { ETL_HOOK_TCPIP_RETRANSMIT, 1, 2 }, { ETL_HOOK_TCPIP_ACCEPT, 1, 2 },
        { ETL_HOOK_TCPIP_RECONNECT, 1, 2 },
        { ETL_HOOK_TCPIP_SEND + ETL_HOOK_TCPIP_IPV6, 1, 2 }, { ETL_HOOK_TCPIP_RECV + ETL_HOOK_TCPIP_IPV6, 1, 2 },
        { ETL_HOOK_TCPIP_CONNECT + ETL_HOOK_TCPIP_IPV6, 1, 2 }, { ETL_HOOK_TCPIP_DISCONNECT + ETL_HOOK_TCPIP_IPV6, 1, 2 },
        { ETL_HOOK_TCPIP_RETRANSMIT + ETL_HOOK_TCPIP_IPV6, 1, 2 }, { ETL_HOOK_TCPIP_ACCEPT + ETL_HOOK_TCPIP_IPV6, 1, 2 },
        { ETL_HOOK_TCPIP_RECONNECT + ETL_HOOK_TCPIP_IPV6, 1, 2 },
        { ETL_HOOK_UDPIP_SEND, 1, 2 },      { ETL_HOOK_UDPIP_RECV, 1, 2 },
        { ETL_HOOK_UDPIP_SEND + ETL_HOOK_TCPIP_IPV6, 1, 2 }, { ETL_HOOK_UDPIP_RECV + ETL_HOOK_TCPIP_IPV6, 1, 2 },
        { ETL_HOOK_IMAGE_UNLOAD, 1, 3 },    { ETL_HOOK_SYSCONFIG_CPU, 1, 3 },
        { ETL_HOOK_PROFILE_COLLECTION_START, 0, 3 }, { ETL_HOOK_PROFILE_COLLECTION_END, 0, 3 },
        { ETL_HOOK_VIRTUAL_ALLOC, 1, 2 },   { ETL_HOOK_VIRTUAL_FREE, 1, 2 },
        { ETL_HOOK_MAP_FILE, 1, 3 },        { ETL_HOOK_UNMAP_FILE, 1, 3 },      { ETL_HOOK_FILEIO_NAME, 1, 2 },
        { ETL_HOOK_PROCESS_PERF_CTR, 1, 2 }, { ETL_HOOK_PROCESS_PERF_CTR_RUNDOWN, 1, 2 },
        { ETL_HOOK_SYSCONFIG_PHYDISK, 1, 2 }, { ETL_HOOK_SYSCONFIG_LOGDISK, 1, 2 }, { ETL_HOOK_SYSCONFIG_NIC, 1, 2 },
        { ETL_HOOK_PAGE_FAULT_HARD_FAULT, 0, 2 },
        { ETL_HOOK_PAGE_FAULT_TRANSITION, 1, 2 }, { ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE, 1, 2 },
    };
    /* FileIo: version 3 of the operations (Windows 8 on), 2 of the names (the MOF's), with the
       process and thread in a SYSTEM header */
    if (hook >> 8 == ETL_GROUP_FILE_IO && ((hook & 0xFF) == 0 || (hook & 0xFF) == 0x24 ||
                                           ((hook & 0xFF) >= 0x40 && (hook & 0xFF) <= 0x4D))) {
        *system = 1;
        *version = (hook & 0xFF) < 0x40 ? 2 : 3;
        return 0;
    }
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

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

/* ---- writing ---- */

int64_t etl_korder_ts(struct kcpu *c, int64_t ts)
{
    if (ts < c->last_ts) ts = c->last_ts;
    c->last_ts = ts;
    return ts;
}

/* One event of the capture's session (etl_kwrite). */
void etl_kwrite_ev(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid,
                   const uint8_t *payload, size_t n)
{
    etl_kwrite(k->s, ts, hook, pid, tid, payload, n);
}

void etl_kwrite_build_id(struct etl_kcapture *k, int64_t ts, uint32_t pid, uint32_t tid, uint64_t base,
                         uint64_t size, uint64_t file_offset, const etl_kbuild_id *b, const char *file)
{
    uint8_t buf[8192];
    size_t n = etl_kpayload_build_id(buf, sizeof buf, base, size, pid, file_offset, b, file);

    if (n > sizeof buf) /* a path beyond what a record holds (PATH_MAX is less): the build-id stays */
        n = etl_kpayload_build_id(buf, sizeof buf, base, size, pid, file_offset, b, "");
    etl_kwrite_image_id(k->s, ts, ETL_LINUX_IMAGE_ID_BUILD_ID, pid, tid, buf, n);
}

void etl_kwrite_kernel_module(struct etl_kcapture *k, int64_t ts, uint64_t base, uint64_t size,
                              const etl_kbuild_id *b, const char *name)
{
    uint8_t buf[512];
    size_t n = etl_kpayload_kernel_module(buf, sizeof buf, base, size, b, name);

    if (n <= sizeof buf) etl_kwrite_image_id(k->s, ts, ETL_LINUX_IMAGE_ID_KERNEL_MODULE, 0, 0, buf, n);
}

void etl_kwrite_kernel_symbols(struct etl_kcapture *k, int64_t ts, uint32_t sequence, const char *text, size_t n)
{
    uint8_t *buf = malloc(n + 5);

    if (!buf) {
        etl_session_add_events_lost(k->s, 1);
        return;
    }
    etl_kwrite_image_id(k->s, ts, ETL_LINUX_IMAGE_ID_KERNEL_SYMBOLS, 0, 0, buf,
                        etl_kpayload_kernel_symbols(buf, n + 5, sequence, text, n));
    free(buf);
}

void etl_knote(struct etl_kcapture *k, const char *text)
{
    size_t n = strlen(k->note);

    snprintf(k->note + n, sizeof k->note - n, "%s%s", n ? "; " : "", text);
}

size_t etl_kallsyms_chunk_max(struct etl_kcapture *k)
{
    etl_session_properties p;
    size_t bsize, record;

    etl_session_properties_get(k->s, &p);
    bsize = (size_t)(p.buffer_size_kb ? p.buffer_size_kb : 64) * 1024;
    /* A record's space (8-aligned) must fit in a buffer after its header, and its Size in 16 bits. */
    record = bsize - ETL_BUFFER_HEADER_SIZE < ETL_MAX_RECORD_SIZE ? bsize - ETL_BUFFER_HEADER_SIZE : ETL_MAX_RECORD_SIZE;
    return (record & ~(size_t)7) - ETL_CLASSIC_HEADER_SIZE - 4 - 1;
}

/* FileIo version 3: the operations (Create, the simple ones, Read/Write, the Info ones, DirEnum)
   and their OperationEnd. */
size_t etl_kpayload_fileio_create(uint8_t *out, size_t cap, const etl_kfileio_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->irp);
    put64(&b, d->file_object);
    put32(&b, d->tid);
    put32(&b, d->create_options);
    put32(&b, d->file_attributes);
    put32(&b, d->share_access);
    put_str16(&b, d->path);
    return done(&b);
}

size_t etl_kpayload_fileio_simple(uint8_t *out, size_t cap, const etl_kfileio_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->irp);
    put64(&b, d->file_object);
    put64(&b, d->file_key);
    put32(&b, d->tid);
    put32(&b, 0); /* padding to 8, as Windows' 64-bit structures */
    return done(&b);
}

size_t etl_kpayload_fileio_rw(uint8_t *out, size_t cap, const etl_kfileio_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->offset);
    put64(&b, d->irp);
    put64(&b, d->file_object);
    put64(&b, d->file_key);
    put32(&b, d->tid);
    put32(&b, d->size);
    put32(&b, d->io_flags);
    put32(&b, 0);
    return done(&b);
}

size_t etl_kpayload_fileio_info(uint8_t *out, size_t cap, const etl_kfileio_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->irp);
    put64(&b, d->file_object);
    put64(&b, d->file_key);
    put64(&b, d->extra_info);
    put32(&b, d->tid);
    put32(&b, d->info_class);
    return done(&b);
}

size_t etl_kpayload_fileio_dir_enum(uint8_t *out, size_t cap, const etl_kfileio_desc *d)
{
    struct kp b = kp_start(out, cap);

    put64(&b, d->irp);
    put64(&b, d->file_object);
    put64(&b, d->file_key);
    put32(&b, d->tid);
    put32(&b, d->size);
    put32(&b, d->info_class);
    put32(&b, 0); /* FileIndex */
    put_str16(&b, d->path);
    return done(&b);
}

size_t etl_kpayload_fileio_op_end(uint8_t *out, size_t cap, uint64_t irp, uint64_t extra_info, uint32_t nt_status)
{
    struct kp b = kp_start(out, cap);

    put64(&b, irp);
    put64(&b, extra_info);
    put32(&b, nt_status);
    put32(&b, 0);
    return done(&b);
}

#endif
