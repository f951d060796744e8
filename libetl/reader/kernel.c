/* SPDX-License-Identifier: MIT */
/* Typed decoding of the NT Kernel Logger's event classes (doc/kernel-events.md, doc/format.md section 8). */
#include <stdio.h>
#include <string.h>

#include "format/format.h"

const char *etl_kclass_name(int kclass)
{
    static const char *const names[ETL_KCLASS_COUNT] = {
        "none", "process", "thread", "image", "cswitch", "ready_thread", "sampled_profile", "stack",
        "stack_key", "stack_key_def", "trace_header", "group_masks", "rundown_complete", "lbr",
        "disk_io", "disk_io_init", "syscall_enter", "syscall_exit"
    };
    return kclass >= 0 && kclass < ETL_KCLASS_COUNT ? names[kclass] : "unknown";
}

/* ---- strings and SIDs ---- */

/* Appends code point c as UTF-8 at out[*o] when it fits (with room for the NUL); counts it in *total.
   Once one character does not fit, nothing more is written (*full), so the cut is at a boundary. */
static void put_cp(uint32_t c, char *out, size_t size, size_t *o, size_t *total, int *full)
{
    uint8_t tmp[4];
    size_t len = etl_utf8_encode(c, tmp);

    *total += len;
    if (*full || *o + len >= size) {
        *full = 1;
        return;
    }
    memcpy(out + *o, tmp, len);
    *o += len;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when it is not one. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
    size_t len;
    uint32_t c;

    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) { len = 2; c = p[0] & 0x1Fu; }
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) { len = 3; c = p[0] & 0x0Fu; }
    else if (p[0] >= 0xF0 && p[0] <= 0xF4) { len = 4; c = p[0] & 0x07u; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (p[i] & 0x3Fu);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)))
        return 0;
    return len;
}

/* Windows-1252's 0x80..0x9F; the five undefined bytes map to the C1 controls (as WHATWG does). */
static const uint16_t cp1252_high[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D,
    0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
    0x0153, 0x009D, 0x017E, 0x0178
};

size_t etl_string_to_utf8(const etl_string *s, char *out, size_t size)
{
    size_t o = 0, total = 0, n = s && s->data ? s->size : 0;
    int full = size == 0;
    const uint8_t *p = n ? s->data : NULL;

    if (n && s->utf16) {
        for (size_t i = 0; i < n / 2;) {
            uint32_t c = etl_utf16_next(p, n / 2, &i);
            put_cp(c, out, size, &o, &total, &full);
        }
    } else if (n) {
        int valid = 1;
        for (size_t i = 0, len; i < n && valid; i += len) valid = (len = utf8_seq(p + i, n - i)) != 0;
        for (size_t i = 0; i < n;) {
            if (valid) {
                size_t len = utf8_seq(p + i, n - i);
                total += len;
                if (!full && o + len < size) {
                    memcpy(out + o, p + i, len);
                    o += len;
                } else {
                    full = 1;
                }
                i += len;
            } else {
                uint8_t b = p[i++];
                put_cp(b >= 0x80 && b < 0xA0 ? cp1252_high[b - 0x80] : b, out, size, &o, &total, &full);
            }
        }
    }
    if (size) out[o] = '\0';
    return total;
}

char *etl_sid_format(const uint8_t *sid, uint32_t size, char *out, size_t out_size)
{
    uint64_t authority = 0;
    unsigned count;
    size_t o;
    int n;

    if (!out_size) return out;
    out[0] = '\0';
    if (!sid || size < 8) return out;
    count = sid[1];
    if (count > 15 || size < 8u + 4u * count) return out;
    for (int i = 2; i < 8; i++) authority = authority << 8 | sid[i];
    /* As ConvertSidToStringSid: the authority in hex when it does not fit 32 bits. */
    n = authority >> 32 ? snprintf(out, out_size, "S-%u-0x%012llX", sid[0], (unsigned long long)authority)
                        : snprintf(out, out_size, "S-%u-%llu", sid[0], (unsigned long long)authority);
    if (n < 0 || (size_t)n >= out_size) goto too_small;
    o = (size_t)n;
    for (unsigned i = 0; i < count; i++) {
        n = snprintf(out + o, out_size - o, "-%lu", (unsigned long)etl_le32(sid + 8 + 4 * i));
        if (n < 0 || (size_t)n >= out_size - o) goto too_small;
        o += (size_t)n;
    }
    return out;
too_small:
    out[0] = '\0';
    return out;
}

/* ---- a bounds-checked cursor over a payload ---- */

struct cur {
    const uint8_t *p;
    uint32_t len, off;
    unsigned ptr;   /* pointer size, 4 or 8 */
};

static int has(const struct cur *c, uint32_t n) { return c->off <= c->len && c->len - c->off >= n; }
/* The readers below are only called after has() vouched for the bytes. */
static uint8_t u8(struct cur *c) { return c->p[c->off++]; }
static uint16_t u16(struct cur *c) { uint16_t v = etl_le16(c->p + c->off); c->off += 2; return v; }
static uint32_t u32(struct cur *c) { uint32_t v = etl_le32(c->p + c->off); c->off += 4; return v; }
static uint64_t u64(struct cur *c) { uint64_t v = etl_le64(c->p + c->off); c->off += 8; return v; }
static uint64_t ptr(struct cur *c) { return c->ptr == 8 ? u64(c) : u32(c); }

/* A NUL-terminated string at the cursor: up to its terminator or the payload's end (an absent
   terminator is fine); NULL data when the payload ends before it. */
static etl_string str(struct cur *c, int utf16)
{
    etl_string s = { NULL, 0, (uint8_t)(utf16 ? 1 : 0) };
    uint32_t unit = utf16 ? 2 : 1, n = 0;

    if (!has(c, unit)) {
        c->off = c->len;
        return s;
    }
    s.data = c->p + c->off;
    while (has(c, n + unit) && (utf16 ? etl_le16(s.data + n) != 0 : s.data[n] != 0)) n += unit;
    s.size = n;
    c->off += has(c, n + unit) ? n + unit : c->len - c->off;
    return s;
}

/* The UserSID field: a u32 0 (no SID), or TOKEN_USER (two pointer-sized words) and a SID. */
static int sid(struct cur *c, etl_kprocess *k)
{
    uint32_t n;

    if (!has(c, 4)) return ETL_FAILED;
    if (etl_le32(c->p + c->off) == 0) {
        c->off += 4;
        return ETL_OK;
    }
    if (!has(c, 2 * c->ptr + 8)) return ETL_FAILED;
    n = 8u + 4u * c->p[c->off + 2 * c->ptr + 1];
    if (!has(c, 2 * c->ptr + n)) return ETL_FAILED;
    k->sid = c->p + c->off + 2 * c->ptr;
    k->sid_size = n;
    c->off += 2 * c->ptr + n;
    return ETL_OK;
}

/* ---- the classes ---- */

static int decode_process(struct cur *c, unsigned v, etl_kprocess *k)
{
    unsigned p = c->ptr;
    /* The fixed part before UserSID, per version (doc/kernel-events.md). */
    uint32_t fixed = v == 0 ? 2 * p : v <= 2 ? p + 16 : v == 3 ? 2 * p + 16 : 2 * p + 20;

    if (!has(c, fixed)) return ETL_FAILED;
    if (v == 0) {
        k->pid = (uint32_t)ptr(c);
        k->parent_pid = (uint32_t)ptr(c);
    } else {
        k->unique_process_key = ptr(c);
        k->pid = u32(c);
        k->parent_pid = u32(c);
        k->session_id = u32(c);
        k->exit_status = (int32_t)u32(c);
        if (v >= 3) k->directory_table_base = ptr(c);
        if (v >= 4) k->flags = u32(c);
    }
    if (sid(c, k) != ETL_OK) return ETL_FAILED;
    k->image_file_name = str(c, 0);
    if (v >= 2) k->command_line = str(c, 1);
    if (v >= 4) {
        k->package_full_name = str(c, 1);
        k->application_id = str(c, 1);
    }
    return 1;
}

static int decode_thread(struct cur *c, unsigned v, etl_kthread *t)
{
    unsigned p = c->ptr;

    if (!has(c, v >= 3 ? 16 + 7 * p : v == 2 ? 12 + 7 * p : 8)) return ETL_FAILED;
    t->pid = u32(c);
    t->tid = u32(c);
    if (v < 2 && !has(c, 6 * p)) return 1; /* version 0/1 End events: the ids only */
    t->stack_base = ptr(c);
    t->stack_limit = ptr(c);
    t->user_stack_base = ptr(c);
    t->user_stack_limit = ptr(c);
    t->start_address = ptr(c);
    t->win32_start_address = ptr(c);
    if (v < 2) return 1;
    t->teb_base = ptr(c);
    t->sub_process_tag = u32(c);
    if (v < 3) return 1;
    t->base_priority = u8(c);
    t->page_priority = u8(c);
    t->io_priority = u8(c);
    t->thread_flags = u8(c);
    if (v >= 4) t->name = str(c, 1);
    return 1;
}

static int decode_image(struct cur *c, unsigned v, etl_kimage *k)
{
    unsigned p = c->ptr;

    if (!has(c, v >= 2 ? 3 * p + 32 : v == 1 ? 2 * p + 4 : 2 * p)) return ETL_FAILED;
    k->image_base = ptr(c);
    k->image_size = ptr(c);
    if (v >= 1) k->pid = u32(c);
    if (v >= 2) {
        k->checksum = u32(c);
        k->time_date_stamp = u32(c);
        k->signature_level = u8(c);
        k->signature_type = u8(c);
        c->off += 2; /* Reserved0 */
        k->default_base = ptr(c);
        c->off += 16; /* Reserved1..4 */
        if (v < 3) k->signature_level = k->signature_type = 0;
    }
    k->file_name = str(c, 1);
    return 1;
}

static int decode_cswitch(struct cur *c, etl_kcswitch *k)
{
    if (!has(c, 24)) return ETL_FAILED;
    k->new_tid = u32(c);
    k->old_tid = u32(c);
    k->new_thread_priority = (int8_t)u8(c);
    k->old_thread_priority = (int8_t)u8(c);
    k->previous_cstate = u8(c);
    k->spare_byte = (int8_t)u8(c);
    k->old_thread_wait_reason = u8(c);
    k->old_thread_wait_mode = u8(c);
    k->old_thread_state = u8(c);
    k->old_thread_wait_ideal_processor = u8(c);
    k->new_thread_wait_time = u32(c);
    k->old_thread_remaining_quantum = (int32_t)u32(c);
    return 1;
}

static int decode_ready_thread(struct cur *c, etl_kready_thread *k)
{
    if (!has(c, 8)) return ETL_FAILED;
    k->tid = u32(c);
    k->adjust_reason = (int8_t)u8(c);
    k->adjust_increment = (int8_t)u8(c);
    k->flags = u8(c);
    return 1;
}

static int decode_sample(struct cur *c, uint16_t hook, unsigned v, etl_ksample *k)
{
    if (hook == ETL_HOOK_PMC_SAMPLE) { /* IP, ThreadId, ProfileSource u16, reserved u16 */
        if (!has(c, c->ptr + 6)) return ETL_FAILED;
        k->instruction_pointer = ptr(c);
        k->tid = u32(c);
        k->profile_source = u16(c);
        return 1;
    }
    if (!has(c, c->ptr + (v >= 2 ? 8 : 4))) return ETL_FAILED;
    k->instruction_pointer = ptr(c);
    k->tid = u32(c);
    if (!has(c, 4)) return 1;
    k->count = u16(c);
    k->flags = u8(c);
    k->rank = u8(c);
    return 1;
}

/* Frames fill the rest of the record: a partial frame is malformed. */
static int frames(struct cur *c, etl_kstack *k)
{
    uint32_t rest = c->len - c->off;

    if (rest % c->ptr) return ETL_FAILED;
    k->frame_size = c->ptr;
    k->frame_count = rest / c->ptr;
    k->frames = rest ? c->p + c->off : NULL;
    return 1;
}

static int decode_stack(struct cur *c, uint16_t hook, int *kclass, etl_kstack *k)
{
    if (hook == ETL_HOOK_STACKWALK_KEY_DELETE || hook == ETL_HOOK_STACKWALK_KEY_RUNDOWN) {
        *kclass = ETL_KCLASS_STACK_KEY_DEF;
        if (!has(c, c->ptr)) return ETL_FAILED;
        k->stack_key = ptr(c);
        return frames(c, k);
    }
    *kclass = hook == ETL_HOOK_STACKWALK_STACK ? ETL_KCLASS_STACK : ETL_KCLASS_STACK_KEY;
    if (!has(c, *kclass == ETL_KCLASS_STACK ? 16 : 16 + c->ptr)) return ETL_FAILED;
    k->event_timestamp = (int64_t)u64(c);
    k->pid = u32(c);
    k->tid = u32(c);
    if (*kclass == ETL_KCLASS_STACK) return frames(c, k);
    k->stack_key = ptr(c);
    k->frame_size = c->ptr;
    return 1;
}

static int decode_header(struct cur *c, etl_ktrace_header *h)
{
    const uint8_t *p = c->p;
    unsigned w = c->ptr;

    if (!has(c, ETL_TLH_SIZE(w))) return ETL_FAILED;
    h->buffer_size = etl_le32(p + ETL_TLH_BUFFER_SIZE);
    memcpy(h->version, p + ETL_TLH_VERSION, 4);
    h->provider_version = etl_le32(p + ETL_TLH_PROVIDER_VERSION);
    h->number_of_processors = etl_le32(p + ETL_TLH_NUMBER_OF_PROCESSORS);
    h->end_time = etl_le64s(p + ETL_TLH_END_TIME);
    h->timer_resolution = etl_le32(p + ETL_TLH_TIMER_RESOLUTION);
    h->maximum_file_size = etl_le32(p + ETL_TLH_MAXIMUM_FILE_SIZE);
    h->log_file_mode = etl_le32(p + ETL_TLH_LOG_FILE_MODE);
    h->buffers_written = etl_le32(p + ETL_TLH_BUFFERS_WRITTEN);
    h->pointer_size = etl_le32(p + ETL_TLH_POINTER_SIZE);
    h->events_lost = etl_le32(p + ETL_TLH_EVENTS_LOST);
    h->cpu_speed_mhz = etl_le32(p + ETL_TLH_CPU_SPEED);
    h->timezone_bias = (int32_t)etl_le32(p + ETL_TLH_TIME_ZONE(w));
    h->boot_time = etl_le64s(p + ETL_TLH_BOOT_TIME(w));
    h->perf_freq = etl_le64s(p + ETL_TLH_PERF_FREQ(w));
    h->start_time = etl_le64s(p + ETL_TLH_START_TIME(w));
    h->clock_type = etl_le32(p + ETL_TLH_RESERVED_FLAGS(w));
    h->buffers_lost = etl_le32(p + ETL_TLH_BUFFERS_LOST(w));
    c->off = ETL_TLH_SIZE(w);
    h->logger_name = str(c, 1);
    h->log_file_name = str(c, 1);
    return 1;
}

static int decode_group_masks(struct cur *c, etl_kgroup_masks *g)
{
    if (!has(c, 32)) return ETL_FAILED;
    for (int i = 0; i < 8; i++) g->masks[i] = u32(c);
    if (has(c, 4)) g->kernel_version = u32(c);
    return 1;
}

/* DiskIo (DiskIo_TypeGroup1..3): a completion of a read or write (type 10, 11: DiskNumber,
   IrpFlags, TransferSize, Reserved, ByteOffset, FileObject, Irp, HighResResponseTime), a flush
   (14: DiskNumber, IrpFlags, HighResResponseTime, Irp) or an issue (12, 13, 15: Irp), each
   with IssuingThreadId after them from version 3 (doc/kernel-events.md). */
static int decode_disk_io(struct cur *c, unsigned type, unsigned v, etl_kdisk_io *d)
{
    unsigned p = c->ptr;
    uint32_t fixed = type == 10 || type == 11 ? 2 * p + 32 : type == 14 ? p + 16 : p;

    if (!has(c, fixed + (v >= 3 ? 4 : 0))) return ETL_FAILED;
    if (type == 10 || type == 11 || type == 14) {
        d->disk_number = u32(c);
        d->irp_flags = u32(c);
    }
    if (type == 10 || type == 11) {
        d->transfer_size = u32(c);
        c->off += 4; /* Reserved */
        d->byte_offset = (int64_t)u64(c);
        d->file_object = ptr(c);
        d->irp = ptr(c);
        d->high_res_response_time = u64(c);
    } else if (type == 14) {
        d->high_res_response_time = u64(c);
        d->irp = ptr(c);
    } else {
        d->irp = ptr(c);
    }
    if (v >= 3) d->issuing_tid = u32(c);
    return 1;
}

/* The class and name of a hook; ETL_KCLASS_NONE for hooks not decoded here. */
static int classify(uint16_t hook, const char **name)
{
    static const char *const process[] = { NULL, "Process/Start", "Process/End", "Process/DCStart", "Process/DCEnd" };
    static const char *const thread[] = { NULL, "Thread/Start", "Thread/End", "Thread/DCStart", "Thread/DCEnd" };
    static const char *const image[] = { NULL, NULL, "Image/Unload", "Image/DCStart", "Image/DCEnd" };
    unsigned group = hook >> 8, type = hook & 0xFF;

    switch (hook) {
    case ETL_HOOK_PROCESS_LOAD_IMAGE: case ETL_HOOK_IMAGE_LOAD: *name = "Image/Load"; return ETL_KCLASS_IMAGE;
    case ETL_HOOK_PROCESS_DEFUNCT: *name = "Process/Defunct"; return ETL_KCLASS_PROCESS;
    case ETL_HOOK_CSWITCH: *name = "Thread/CSwitch"; return ETL_KCLASS_CSWITCH;
    case ETL_HOOK_READY_THREAD: *name = "Thread/ReadyThread"; return ETL_KCLASS_READY_THREAD;
    case ETL_HOOK_SAMPLED_PROFILE: *name = "PerfInfo/SampleProf"; return ETL_KCLASS_SAMPLED_PROFILE;
    case ETL_HOOK_PMC_SAMPLE: *name = "PerfInfo/PMCSample"; return ETL_KCLASS_SAMPLED_PROFILE;
    case ETL_HOOK_STACKWALK_STACK: *name = "StackWalk/Stack"; return ETL_KCLASS_STACK;
    case ETL_HOOK_STACKWALK_KEY_KERNEL: *name = "StackWalk/StackKeyKernel"; return ETL_KCLASS_STACK_KEY;
    case ETL_HOOK_STACKWALK_KEY_USER: *name = "StackWalk/StackKeyUser"; return ETL_KCLASS_STACK_KEY;
    case ETL_HOOK_STACKWALK_KEY_DELETE: *name = "StackWalk/KeyDelete"; return ETL_KCLASS_STACK_KEY_DEF;
    case ETL_HOOK_STACKWALK_KEY_RUNDOWN: *name = "StackWalk/KeyRundown"; return ETL_KCLASS_STACK_KEY_DEF;
    case ETL_HOOK_HEADER: *name = "EventTrace/Header"; return ETL_KCLASS_TRACE_HEADER;
    case ETL_HOOK_HEADER_EXTENSION: *name = "EventTrace/Extension"; return ETL_KCLASS_GROUP_MASKS;
    case ETL_HOOK_GROUP_MASKS_END: *name = "EventTrace/EndExtension"; return ETL_KCLASS_GROUP_MASKS;
    case ETL_HOOK_RUNDOWN_COMPLETE: *name = "EventTrace/RDComplete"; return ETL_KCLASS_RUNDOWN_COMPLETE;
    case ETL_HOOK_LBR_SAMPLE: *name = "LBR/Sample"; return ETL_KCLASS_LBR;
    case ETL_HOOK_SYSCALL_ENTER: *name = "PerfInfo/SysClEnter"; return ETL_KCLASS_SYSCALL_ENTER;
    case ETL_HOOK_SYSCALL_EXIT: *name = "PerfInfo/SysClExit"; return ETL_KCLASS_SYSCALL_EXIT;
    default: break;
    }
    if (group == ETL_GROUP_DISK_IO && type >= 10 && type <= 15) {
        static const char *const disk[] = { "DiskIO/Read", "DiskIO/Write", "DiskIO/ReadInit", "DiskIO/WriteInit",
                                            "DiskIO/FlushBuffers", "DiskIO/FlushInit" };
        *name = disk[type - 10];
        return type == 10 || type == 11 || type == 14 ? ETL_KCLASS_DISK_IO : ETL_KCLASS_DISK_IO_INIT;
    }
    if (type < 1 || type > 4) return ETL_KCLASS_NONE;
    if (group == ETL_GROUP_PROCESS) { *name = process[type]; return ETL_KCLASS_PROCESS; }
    if (group == ETL_GROUP_THREAD) { *name = thread[type]; return ETL_KCLASS_THREAD; }
    if (group == ETL_GROUP_IMAGE && type >= 2) { *name = image[type]; return ETL_KCLASS_IMAGE; }
    return ETL_KCLASS_NONE;
}

int etl_kernel_decode(const etl_event *ev, etl_kernel_event *out)
{
    struct cur c;
    const char *name = NULL;
    int kclass;

    memset(out, 0, sizeof *out);
    if (ev->kind != ETL_KIND_SYSTEM && ev->kind != ETL_KIND_COMPACT && ev->kind != ETL_KIND_PERFINFO) return 0;
    kclass = classify(ev->hook_id, &name);
    if (kclass == ETL_KCLASS_NONE) return 0;
    out->kclass = kclass;
    out->name = name;
    c.p = ev->payload;
    c.len = ev->payload ? ev->payload_len : 0;
    c.off = 0;
    c.ptr = ev->pointer_size == 4 ? 4 : 8;
    switch (kclass) {
    case ETL_KCLASS_PROCESS: return decode_process(&c, ev->version, &out->u.process);
    case ETL_KCLASS_THREAD: return decode_thread(&c, ev->version, &out->u.thread);
    case ETL_KCLASS_IMAGE: return decode_image(&c, ev->version, &out->u.image);
    case ETL_KCLASS_CSWITCH: return decode_cswitch(&c, &out->u.cswitch);
    case ETL_KCLASS_READY_THREAD: return decode_ready_thread(&c, &out->u.ready_thread);
    case ETL_KCLASS_SAMPLED_PROFILE: return decode_sample(&c, ev->hook_id, ev->version, &out->u.sample);
    case ETL_KCLASS_TRACE_HEADER: return decode_header(&c, &out->u.header);
    case ETL_KCLASS_GROUP_MASKS: return decode_group_masks(&c, &out->u.group_masks);
    case ETL_KCLASS_RUNDOWN_COMPLETE: return 1;
    case ETL_KCLASS_LBR: return etl_lbr_decode(ev, &out->u.lbr) == 1 ? 1 : ETL_FAILED;
    case ETL_KCLASS_DISK_IO: case ETL_KCLASS_DISK_IO_INIT:
        return decode_disk_io(&c, ev->hook_id & 0xFF, ev->version, &out->u.disk_io);
    case ETL_KCLASS_SYSCALL_ENTER:
        if (!has(&c, c.ptr)) return ETL_FAILED;
        out->u.syscall.address = ptr(&c);
        return 1;
    case ETL_KCLASS_SYSCALL_EXIT:
        if (!has(&c, 4)) return ETL_FAILED;
        out->u.syscall.nt_status = u32(&c);
        return 1;
    default: return decode_stack(&c, ev->hook_id, &out->kclass, &out->u.stack);
    }
}

uint64_t etl_kstack_frame_at(const etl_kstack *s, unsigned index)
{
    if (!s->frames || index >= s->frame_count) return 0;
    return s->frame_size == 4 ? etl_le32(s->frames + 4 * (size_t)index) : etl_le64(s->frames + 8 * (size_t)index);
}

/* ---------------------------------------------------------------- LBR samples */

/* LBR_TRACE_EVENT_DATA: 24 bytes with 64-bit pointers (a pad after Options), 20 with 32-bit. */
static unsigned lbr_header_size(unsigned p) { return p == 8 ? 24 : 20; }

int etl_lbr_decode(const etl_event *ev, etl_lbr *out)
{
    unsigned p = ev->pointer_size == 4 ? 4 : 8, h = lbr_header_size(p);

    if ((ev->kind != ETL_KIND_PERFINFO && ev->kind != ETL_KIND_SYSTEM && ev->kind != ETL_KIND_COMPACT) ||
        ev->hook_id != ETL_HOOK_LBR_SAMPLE)
        return 0;
    if (ev->payload_len < h || (ev->payload_len - h) % (3 * p) != 0) return ETL_FAILED;
    out->timestamp = etl_le64s(ev->payload);
    out->pid = etl_le32(ev->payload + 8);
    out->tid = etl_le32(ev->payload + 12);
    out->filters = etl_le32(ev->payload + 16);
    out->pointer_size = p;
    out->count = (ev->payload_len - h) / (3 * p);
    out->entries = ev->payload + h;
    return 1;
}

etl_lbr_entry etl_lbr_entry_at(const etl_lbr *lbr, unsigned index)
{
    etl_lbr_entry e = { 0, 0, 0 };
    const uint8_t *p;

    if (index >= lbr->count) return e;
    p = lbr->entries + (size_t)index * 3 * lbr->pointer_size;
    if (lbr->pointer_size == 8) {
        e.from = etl_le64(p);
        e.to = etl_le64(p + 8);
        e.reserved = etl_le64(p + 16);
    } else {
        e.from = etl_le32(p);
        e.to = etl_le32(p + 4);
        e.reserved = etl_le32(p + 8);
    }
    return e;
}
