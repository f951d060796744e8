/* SPDX-License-Identifier: MIT */
/* Typed decoding of the NT Kernel Logger's event classes, by the layouts of the class tables (kclasses.c; doc/kernel-events.md, doc/format.md section 8). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "reader/reader.h"

const char *etl_kclass_name(int kclass)
{
    static const char *const names[ETL_KCLASS_COUNT] = {
        "none", "process", "thread", "image", "cswitch", "ready_thread", "sampled_profile", "stack",
        "stack_key", "stack_key_def", "trace_header", "group_masks", "rundown_complete", "lbr",
        "disk_io", "disk_io_init", "syscall_enter", "syscall_exit", "isr", "dpc", "page_fault", "tcpip", "file_io",
        "virtual_alloc", "map_file", "process_counters", "hard_fault"
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

/* ---- the typed decoding: a walk over the kernel's class tables (kclasses.c) ---- */

/* How a slot's value is stored: integers by their member's size (1, 2, 4, 8); the rest by kind. */
enum { KS_STRING = 16, KS_SID, KS_RAW4, KS_STACK_KEY, KS_FRAMES, KS_LBR_ENTRIES, KS_ADDR, KS_PORT };

struct slot {
    uint16_t offset;    /* in etl_kernel_event */
    uint8_t how;        /* an integer's size, or KS_* */
};

#define MEMBER(m) (((etl_kernel_event *)0)->u.m)
#define INT(id, m) [ETL_KSLOT_##id] = { (uint16_t)offsetof(etl_kernel_event, u.m), (uint8_t)sizeof(MEMBER(m)) }
#define KIND(id, m, k) [ETL_KSLOT_##id] = { (uint16_t)offsetof(etl_kernel_event, u.m), (k) }

static const struct slot slots[ETL_KSLOT_COUNT] = {
    INT(PROCESS_KEY, process.unique_process_key), INT(PROCESS_PID, process.pid), INT(PROCESS_PPID, process.parent_pid),
    INT(PROCESS_SESSION, process.session_id), INT(PROCESS_EXIT, process.exit_status),
    INT(PROCESS_DTB, process.directory_table_base), INT(PROCESS_FLAGS, process.flags),
    KIND(PROCESS_SID, process.sid, KS_SID), KIND(PROCESS_IMAGE, process.image_file_name, KS_STRING),
    KIND(PROCESS_CMDLINE, process.command_line, KS_STRING), KIND(PROCESS_PACKAGE, process.package_full_name, KS_STRING),
    KIND(PROCESS_APPID, process.application_id, KS_STRING),
    INT(THREAD_PID, thread.pid), INT(THREAD_TID, thread.tid), INT(THREAD_STACK_BASE, thread.stack_base),
    INT(THREAD_STACK_LIMIT, thread.stack_limit), INT(THREAD_USTACK_BASE, thread.user_stack_base),
    INT(THREAD_USTACK_LIMIT, thread.user_stack_limit), INT(THREAD_START, thread.start_address),
    INT(THREAD_WIN32_START, thread.win32_start_address), INT(THREAD_TEB, thread.teb_base),
    INT(THREAD_TAG, thread.sub_process_tag), INT(THREAD_BASE_PRIO, thread.base_priority),
    INT(THREAD_PAGE_PRIO, thread.page_priority), INT(THREAD_IO_PRIO, thread.io_priority),
    INT(THREAD_FLAGS, thread.thread_flags), KIND(THREAD_NAME, thread.name, KS_STRING),
    INT(IMAGE_BASE, image.image_base), INT(IMAGE_SIZE, image.image_size), INT(IMAGE_PID, image.pid),
    INT(IMAGE_CHECKSUM, image.checksum), INT(IMAGE_TIMESTAMP, image.time_date_stamp),
    INT(IMAGE_SIG_LEVEL, image.signature_level), INT(IMAGE_SIG_TYPE, image.signature_type),
    INT(IMAGE_DEFAULT_BASE, image.default_base), KIND(IMAGE_FILE, image.file_name, KS_STRING),
    INT(CSWITCH_NEW_TID, cswitch.new_tid), INT(CSWITCH_OLD_TID, cswitch.old_tid),
    INT(CSWITCH_NEW_PRIO, cswitch.new_thread_priority), INT(CSWITCH_OLD_PRIO, cswitch.old_thread_priority),
    INT(CSWITCH_CSTATE, cswitch.previous_cstate), INT(CSWITCH_SPARE, cswitch.spare_byte),
    INT(CSWITCH_WAIT_REASON, cswitch.old_thread_wait_reason), INT(CSWITCH_WAIT_MODE, cswitch.old_thread_wait_mode),
    INT(CSWITCH_STATE, cswitch.old_thread_state), INT(CSWITCH_IDEAL, cswitch.old_thread_wait_ideal_processor),
    INT(CSWITCH_WAIT_TIME, cswitch.new_thread_wait_time), INT(CSWITCH_QUANTUM, cswitch.old_thread_remaining_quantum),
    INT(READY_TID, ready_thread.tid), INT(READY_REASON, ready_thread.adjust_reason),
    INT(READY_INCREMENT, ready_thread.adjust_increment), INT(READY_FLAGS, ready_thread.flags),
    INT(SAMPLE_IP, sample.instruction_pointer), INT(SAMPLE_TID, sample.tid), INT(SAMPLE_COUNT, sample.count),
    INT(SAMPLE_FLAGS, sample.flags), INT(SAMPLE_RANK, sample.rank), INT(SAMPLE_SOURCE, sample.profile_source),
    INT(STACK_TIMESTAMP, stack.event_timestamp), INT(STACK_PID, stack.pid), INT(STACK_TID, stack.tid),
    KIND(STACK_KEY, stack, KS_STACK_KEY), KIND(STACK_FRAMES, stack, KS_FRAMES),
    INT(HEADER_BUFFER_SIZE, header.buffer_size), KIND(HEADER_VERSION, header.version, KS_RAW4),
    INT(HEADER_PROVIDER_VERSION, header.provider_version), INT(HEADER_CPUS, header.number_of_processors),
    INT(HEADER_END_TIME, header.end_time), INT(HEADER_TIMER_RESOLUTION, header.timer_resolution),
    INT(HEADER_MAX_FILE_SIZE, header.maximum_file_size), INT(HEADER_MODE, header.log_file_mode),
    INT(HEADER_BUFFERS_WRITTEN, header.buffers_written), INT(HEADER_POINTER_SIZE, header.pointer_size),
    INT(HEADER_EVENTS_LOST, header.events_lost), INT(HEADER_CPU_SPEED, header.cpu_speed_mhz),
    INT(HEADER_TIMEZONE, header.timezone_bias), INT(HEADER_BOOT_TIME, header.boot_time),
    INT(HEADER_PERF_FREQ, header.perf_freq), INT(HEADER_START_TIME, header.start_time),
    INT(HEADER_CLOCK, header.clock_type), INT(HEADER_BUFFERS_LOST, header.buffers_lost),
    KIND(HEADER_LOGGER, header.logger_name, KS_STRING), KIND(HEADER_FILE, header.log_file_name, KS_STRING),
    INT(MASK1, group_masks.masks[0]), INT(MASK2, group_masks.masks[1]), INT(MASK3, group_masks.masks[2]),
    INT(MASK4, group_masks.masks[3]), INT(MASK5, group_masks.masks[4]), INT(MASK6, group_masks.masks[5]),
    INT(MASK7, group_masks.masks[6]), INT(MASK8, group_masks.masks[7]), INT(KERNEL_VERSION, group_masks.kernel_version),
    INT(LBR_TIMESTAMP, lbr.timestamp), INT(LBR_PID, lbr.pid), INT(LBR_TID, lbr.tid), INT(LBR_FILTERS, lbr.filters),
    KIND(LBR_ENTRIES, lbr, KS_LBR_ENTRIES),
    INT(DISK_NUMBER, disk_io.disk_number), INT(DISK_IRP_FLAGS, disk_io.irp_flags),
    INT(DISK_TRANSFER_SIZE, disk_io.transfer_size), INT(DISK_OFFSET, disk_io.byte_offset),
    INT(DISK_FILE_OBJECT, disk_io.file_object), INT(DISK_IRP, disk_io.irp),
    INT(DISK_RESPONSE_TIME, disk_io.high_res_response_time), INT(DISK_TID, disk_io.issuing_tid),
    INT(SYSCALL_ADDRESS, syscall.address), INT(SYSCALL_STATUS, syscall.nt_status),
    INT(ISR_DPC_INITIAL_TIME, isr_dpc.initial_time), INT(ISR_DPC_ROUTINE, isr_dpc.routine),
    INT(ISR_RETURN, isr_dpc.return_value), INT(ISR_VECTOR, isr_dpc.vector),
    INT(PF_ADDRESS, page_fault.virtual_address), INT(PF_PC, page_fault.program_counter),
    INT(NET_PID, tcpip.pid), INT(NET_SIZE, tcpip.size), KIND(NET_DADDR, tcpip.daddr, KS_ADDR),
    KIND(NET_SADDR, tcpip.saddr, KS_ADDR), KIND(NET_DPORT, tcpip.dport, KS_PORT), KIND(NET_SPORT, tcpip.sport, KS_PORT),
    INT(NET_SEQNUM, tcpip.seqnum), INT(NET_CONNID, tcpip.connid), INT(NET_STARTIME, tcpip.startime),
    INT(NET_ENDTIME, tcpip.endtime), INT(NET_MSS, tcpip.mss), INT(NET_SACKOPT, tcpip.sackopt),
    INT(NET_TSOPT, tcpip.tsopt), INT(NET_WSOPT, tcpip.wsopt), INT(NET_RCVWIN, tcpip.rcvwin),
    INT(NET_RCVWINSCALE, tcpip.rcvwinscale), INT(NET_SNDWINSCALE, tcpip.sndwinscale),
    INT(FIO_IRP, file_io.irp), INT(FIO_FILE_OBJECT, file_io.file_object), INT(FIO_FILE_KEY, file_io.file_key),
    INT(FIO_OFFSET, file_io.offset), INT(FIO_EXTRA, file_io.extra_info), INT(FIO_TTID, file_io.ttid),
    INT(FIO_IO_SIZE, file_io.io_size), INT(FIO_IO_FLAGS, file_io.io_flags), INT(FIO_INFO_CLASS, file_io.info_class),
    INT(FIO_LENGTH, file_io.length), INT(FIO_FILE_INDEX, file_io.file_index),
    INT(FIO_CREATE_OPTIONS, file_io.create_options), INT(FIO_ATTRIBUTES, file_io.file_attributes),
    INT(FIO_SHARE, file_io.share_access), INT(FIO_STATUS, file_io.nt_status),
    KIND(FIO_NAME, file_io.file_name, KS_STRING),
    INT(VA_BASE, virtual_alloc.base_address), INT(VA_SIZE, virtual_alloc.region_size), INT(VA_PID, virtual_alloc.pid),
    INT(VA_FLAGS, virtual_alloc.flags),
    INT(MF_BASE, map_file.view_base), INT(MF_KEY, map_file.file_key), INT(MF_MISC, map_file.misc_info),
    INT(MF_SIZE, map_file.view_size), INT(MF_OFFSET, map_file.byte_offset), INT(MF_PID, map_file.pid),
    INT(PC_PID, process_counters.pid), INT(PC_FAULTS, process_counters.page_fault_count),
    INT(PC_HANDLES, process_counters.handle_count), INT(PC_PEAK_VS, process_counters.peak_virtual_size),
    INT(PC_PEAK_WS, process_counters.peak_working_set_size), INT(PC_PEAK_PF, process_counters.peak_pagefile_usage),
    INT(PC_PEAK_QPP, process_counters.quota_peak_paged_pool_usage),
    INT(PC_PEAK_QNP, process_counters.quota_peak_non_paged_pool_usage), INT(PC_VS, process_counters.virtual_size),
    INT(PC_WS, process_counters.working_set_size), INT(PC_PF, process_counters.pagefile_usage),
    INT(PC_QPP, process_counters.quota_paged_pool_usage), INT(PC_QNP, process_counters.quota_non_paged_pool_usage),
    INT(PC_PRIVATE, process_counters.private_page_count),
    INT(HF_INITIAL_TIME, hard_fault.initial_time), INT(HF_OFFSET, hard_fault.read_offset),
    INT(HF_ADDRESS, hard_fault.virtual_address), INT(HF_FILE, hard_fault.file_object), INT(HF_TID, hard_fault.tid),
    INT(HF_BYTES, hard_fault.byte_count),
};

/* The fixed size of an in type (TDH numbering) with pointers of ptr bytes, or 0 when it varies. */
static unsigned fixed_size(unsigned t, unsigned ptr)
{
    static const uint8_t size[ETL_IN_COUNTED_BINARY + 1] = {
        [ETL_IN_INT8] = 1, [ETL_IN_UINT8] = 1, [ETL_IN_INT16] = 2, [ETL_IN_UINT16] = 2, [ETL_IN_INT32] = 4,
        [ETL_IN_UINT32] = 4, [ETL_IN_INT64] = 8, [ETL_IN_UINT64] = 8, [ETL_IN_FLOAT] = 4, [ETL_IN_DOUBLE] = 8,
        [ETL_IN_BOOLEAN] = 4, [ETL_IN_GUID] = 16, [ETL_IN_POINTER] = 0xFF, [ETL_IN_FILETIME] = 8,
        [ETL_IN_SYSTEMTIME] = 16, [ETL_IN_HEXINT32] = 4, [ETL_IN_HEXINT64] = 8,
    };

    if (t <= ETL_IN_COUNTED_BINARY) return size[t] == 0xFF ? ptr : size[t];
    return t == ETL_IN_SIZET ? ptr : etl_in_type_fixed_size(t, ptr);
}

static uint64_t read_le(const uint8_t *p, unsigned size)
{
    switch (size) {
    case 1: return p[0];
    case 2: return etl_le16(p);
    case 4: return etl_le32(p);
    default: return etl_le64(p);
    }
}

/* Stores the value at p (size bytes) at dst, as `how` says (slots[].how). */
static inline void store_at(etl_kernel_event *out, uint8_t *dst, unsigned how, const uint8_t *p, unsigned size,
                            unsigned ptr)
{
    uint64_t v = how == KS_RAW4 ? 0 : read_le(p, size);

    switch (how) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); return; }
    case 8: memcpy(dst, &v, 8); return;
    case KS_RAW4: memcpy(dst, p, 4); return;
    case KS_ADDR: /* an IPv4 or IPv6 address, as its bytes: its size says which */
        memcpy(dst, p, size < 16 ? size : 16);
        out->u.tcpip.ip_version = size == 16 ? 6 : 4;
        return;
    case KS_PORT: { uint16_t x = (uint16_t)(p[0] << 8 | p[1]); memcpy(dst, &x, 2); return; } /* network order */
    case KS_STACK_KEY:
        out->u.stack.stack_key = v;
        out->u.stack.frame_size = ptr;
        return;
    default: return;
    }
}

/* Stores the value at p (size bytes) where slot s says. */
static void store(etl_kernel_event *out, unsigned s, const uint8_t *p, unsigned size, unsigned ptr)
{
    store_at(out, (uint8_t *)out + slots[s].offset, slots[s].how, p, size, ptr);
}

static void store_string(etl_kernel_event *out, unsigned s, const uint8_t *p, uint32_t n, int utf16)
{
    etl_string *str = (etl_string *)(void *)((uint8_t *)out + slots[s].offset);

    str->data = p;
    str->size = n;
    str->utf16 = (uint8_t)(utf16 ? 1 : 0);
}

/* The array at the end of the record: count elements at p. */
static void store_rest(etl_kernel_event *out, unsigned s, const uint8_t *p, uint32_t count, unsigned ptr)
{
    if (slots[s].how == KS_FRAMES) {
        out->u.stack.frame_size = ptr;
        out->u.stack.frame_count = count;
        out->u.stack.frames = count ? p : NULL;
    } else if (slots[s].how == KS_LBR_ENTRIES) {
        out->u.lbr.pointer_size = ptr;
        out->u.lbr.count = count;
        out->u.lbr.entries = p;
    }
}

/* A NUL-terminated string at p (n bytes left, at least one unit): its length in bytes without
   the terminator; *used is what it takes (its terminator, or everything left when it has none).
   UTF-16 is searched eight code units at a time (a 64-bit word has a zero unit when
   (x - 0x0001...) & ~x & 0x8000... is not 0), then unit by unit from the words that have one. */
static uint32_t zstring(const uint8_t *p, uint32_t n, unsigned unit, uint32_t *used)
{
    uint32_t i = 0;

    if (unit == 1) {
        const uint8_t *z = memchr(p, 0, n);
        i = z ? (uint32_t)(z - p) : n;
        *used = z ? i + 1 : n;
        return i;
    }
    for (; i + 16 <= n; i += 16) {
        uint64_t x, y;
        memcpy(&x, p + i, 8);
        memcpy(&y, p + i + 8, 8);
        if ((((x - 0x0001000100010001ull) & ~x) | ((y - 0x0001000100010001ull) & ~y)) & 0x8000800080008000ull) break;
    }
    for (; i + 1 < n; i += 2) {
        if (p[i] == 0 && p[i + 1] == 0) {
            *used = i + 2;
            return i;
        }
    }
    *used = n;
    return n & ~1u;
}

/*
 * Walks payload p (len bytes) by layout v into *out, from field `first` at byte off (0, 0 for
 * all of it): 1, or ETL_FAILED when the record ends
 * inside the fields it must hold (v->required) or its array at the end is not of whole elements.
 * Fields after the required ones may be cut off (they stay 0, strings absent: data NULL);
 * strings end at their terminator or at the payload's end; bytes after the fields are ignored.
 */
#if defined(__GNUC__)
__attribute__((noinline)) /* apart from the planned path, which stays small */
#endif
static int walk(const etl_kclass_version *v, unsigned first, uint32_t off, const uint8_t *p, uint32_t len, unsigned ptr,
                etl_kernel_event *out)
{
    const etl_schema_field *fields = v->fields;

    for (unsigned i = first; i < v->field_count; i += fields[i].span) {
        const etl_schema_field *f = &fields[i];
        uint32_t left = len - off, used, skip, size;
        int required = i < v->required;
        unsigned fixed;

        if (f->count_kind == ETL_COUNT_REST) { /* frames, branches: whole ones to the end */
            uint32_t elem = 0;
            if (f->in_type == ETL_IN_STRUCT)
                for (unsigned m = 1; m <= f->members; m++) elem += fixed_size(fields[i + m].in_type, ptr);
            else
                elem = fixed_size(f->in_type, ptr);
            if (!elem || left % elem) return ETL_FAILED;
            if (f->slot) store_rest(out, f->slot, p + off, left / elem, ptr);
            off = len;
            continue;
        }
        if (f->count_kind != ETL_COUNT_ONE) return 1; /* no typed field comes after another array */
        fixed = fixed_size(f->in_type, ptr);
        if (fixed) {
            if (left < fixed) return required ? ETL_FAILED : 1;
            if (f->slot) store(out, f->slot, p + off, fixed, ptr);
            off += fixed;
            continue;
        }
        switch (f->in_type) {
        case ETL_IN_UNICODE_STRING: case ETL_IN_ANSI_STRING: {
            unsigned unit = f->in_type == ETL_IN_UNICODE_STRING ? 2 : 1;
            if (f->length_kind == ETL_LEN_CONST) { /* characters of a given number */
                if (left < f->length * unit) return required ? ETL_FAILED : 1;
                off += f->length * unit;
                break;
            }
            if (left < unit) { /* absent: the record ends before it */
                if (required) return ETL_FAILED;
                off = len;
                break;
            }
            size = zstring(p + off, left, unit, &used);
            if (f->slot) store_string(out, f->slot, p + off, size, unit == 2);
            off += used;
            break;
        }
        case ETL_IN_WBEM_SID:
            if (etl_wbem_sid_extent(p + off, left, ptr, &skip, &size) != ETL_OK) return required ? ETL_FAILED : 1;
            if (f->slot && size) {
                out->u.process.sid = p + off + skip;
                out->u.process.sid_size = size;
            }
            off += skip + size;
            break;
        case ETL_IN_BINARY: /* of a given size: TIME_ZONE_INFORMATION, whose Bias comes first */
            if (f->length_kind != ETL_LEN_CONST || left < f->length) return required ? ETL_FAILED : 1;
            if (f->slot && slots[f->slot].how == KS_ADDR) store(out, f->slot, p + off, f->length, ptr);
            else if (f->slot && f->length >= 4) store(out, f->slot, p + off, 4, ptr);
            off += f->length;
            break;
        default:
            return required ? ETL_FAILED : 1;
        }
    }
    return 1;
}

/* ---- the typed families and their plans ---- */

/* The families the typed decoding knows, by the hooks it recognises. */
enum {
    T_PROCESS, T_DEFUNCT, T_THREAD_START, T_THREAD_END, T_IMAGE, T_CSWITCH, T_READY, T_SAMPLE, T_PMC, T_STACK,
    T_STACK_KEY, T_STACK_KEY_DEF, T_HEADER, T_MASKS, T_RUNDOWN, T_LBR, T_DISK_IO, T_DISK_FLUSH, T_DISK_INIT,
    T_SYSCALL_ENTER, T_SYSCALL_EXIT, T_THREAD_SET_NAME, T_ISR, T_DPC, T_PAGE_FAULT,
    T_TCP_SEND4, T_TCP_GENERIC4, T_TCP_CONNECT4, T_TCP_SEND6, T_TCP_GENERIC6, T_TCP_CONNECT6, T_UDP, T_UDP6,
    T_FIO_NAME, T_FIO_CREATE, T_FIO_SIMPLE, T_FIO_RW, T_FIO_INFO, T_FIO_DIR, T_FIO_OPEND, T_VIRTUAL_ALLOC, T_MAP_FILE, T_PROCESS_COUNTERS,
    T_HARD_FAULT, T_COUNT,
    T_NONE = T_COUNT
};
static const etl_kclass_family *const typed[T_COUNT] = {
    [T_PROCESS] = &etl_kfam_process, [T_DEFUNCT] = &etl_kfam_process_defunct,
    [T_THREAD_START] = &etl_kfam_thread_start, [T_THREAD_END] = &etl_kfam_thread_end, [T_IMAGE] = &etl_kfam_image,
    [T_CSWITCH] = &etl_kfam_cswitch, [T_READY] = &etl_kfam_ready_thread, [T_SAMPLE] = &etl_kfam_sampled_profile,
    [T_PMC] = &etl_kfam_pmc_sample, [T_STACK] = &etl_kfam_stack, [T_STACK_KEY] = &etl_kfam_stack_key,
    [T_STACK_KEY_DEF] = &etl_kfam_stack_key_def, [T_HEADER] = &etl_kfam_trace_header, [T_MASKS] = &etl_kfam_group_masks,
    [T_RUNDOWN] = &etl_kfam_rundown_complete, [T_LBR] = &etl_kfam_lbr, [T_DISK_IO] = &etl_kfam_disk_io,
    [T_DISK_FLUSH] = &etl_kfam_disk_flush, [T_DISK_INIT] = &etl_kfam_disk_init,
    [T_SYSCALL_ENTER] = &etl_kfam_syscall_enter, [T_SYSCALL_EXIT] = &etl_kfam_syscall_exit,
    [T_THREAD_SET_NAME] = &etl_kfam_thread_set_name, [T_ISR] = &etl_kfam_isr, [T_DPC] = &etl_kfam_dpc,
    [T_PAGE_FAULT] = &etl_kfam_page_fault,
    [T_TCP_SEND4] = &etl_kfam_tcp_send4, [T_TCP_GENERIC4] = &etl_kfam_tcp_generic4,
    [T_TCP_CONNECT4] = &etl_kfam_tcp_connect4, [T_TCP_SEND6] = &etl_kfam_tcp_send6,
    [T_TCP_GENERIC6] = &etl_kfam_tcp_generic6, [T_TCP_CONNECT6] = &etl_kfam_tcp_connect6, [T_UDP] = &etl_kfam_udp,
    [T_UDP6] = &etl_kfam_udp6,
    [T_FIO_NAME] = &etl_kfam_fio_name, [T_FIO_CREATE] = &etl_kfam_fio_create, [T_FIO_SIMPLE] = &etl_kfam_fio_simple,
    [T_FIO_RW] = &etl_kfam_fio_rw, [T_FIO_INFO] = &etl_kfam_fio_info, [T_FIO_DIR] = &etl_kfam_fio_dir,
    [T_FIO_OPEND] = &etl_kfam_fio_opend,
    [T_VIRTUAL_ALLOC] = &etl_kfam_virtual_alloc, [T_MAP_FILE] = &etl_kfam_map_file,
    [T_PROCESS_COUNTERS] = &etl_kfam_process_counters,
    [T_HARD_FAULT] = &etl_kfam_hard_fault,
};

/* The typed family of a hook (Group << 8 | Type), or T_NONE. */
static unsigned classify(uint16_t hook)
{
    switch (hook) {
    case ETL_HOOK_PROCESS_START: case ETL_HOOK_PROCESS_END: case ETL_HOOK_PROCESS_DCSTART: case ETL_HOOK_PROCESS_DCEND:
        return T_PROCESS;
    case ETL_HOOK_PROCESS_DEFUNCT: return T_DEFUNCT;
    case ETL_HOOK_THREAD_START: case ETL_HOOK_THREAD_DCSTART: return T_THREAD_START;
    case ETL_HOOK_THREAD_END: case ETL_HOOK_THREAD_DCEND: return T_THREAD_END;
    case ETL_HOOK_THREAD_SET_NAME: return T_THREAD_SET_NAME;
    case ETL_HOOK_PROCESS_LOAD_IMAGE: case ETL_HOOK_IMAGE_LOAD: case ETL_HOOK_IMAGE_UNLOAD: case ETL_HOOK_IMAGE_DCSTART:
    case ETL_HOOK_IMAGE_DCEND:
        return T_IMAGE;
    case ETL_HOOK_CSWITCH: return T_CSWITCH;
    case ETL_HOOK_READY_THREAD: return T_READY;
    case ETL_HOOK_SAMPLED_PROFILE: return T_SAMPLE;
    case ETL_HOOK_PMC_SAMPLE: return T_PMC;
    case ETL_HOOK_STACKWALK_STACK: return T_STACK;
    case ETL_HOOK_STACKWALK_KEY_KERNEL: case ETL_HOOK_STACKWALK_KEY_USER: return T_STACK_KEY;
    case ETL_HOOK_STACKWALK_KEY_DELETE: case ETL_HOOK_STACKWALK_KEY_RUNDOWN: return T_STACK_KEY_DEF;
    case ETL_HOOK_HEADER: return T_HEADER;
    case ETL_HOOK_HEADER_EXTENSION: case ETL_HOOK_GROUP_MASKS_END: return T_MASKS;
    case ETL_HOOK_RUNDOWN_COMPLETE: return T_RUNDOWN;
    case ETL_HOOK_LBR_SAMPLE: return T_LBR;
    case ETL_HOOK_DISK_READ: case ETL_HOOK_DISK_WRITE: return T_DISK_IO;
    case ETL_HOOK_DISK_FLUSH: return T_DISK_FLUSH;
    case ETL_HOOK_DISK_READ_INIT: case ETL_HOOK_DISK_WRITE_INIT: case ETL_HOOK_DISK_FLUSH_INIT: return T_DISK_INIT;
    case ETL_HOOK_SYSCALL_ENTER: return T_SYSCALL_ENTER;
    case ETL_HOOK_SYSCALL_EXIT: return T_SYSCALL_EXIT;
    case ETL_HOOK_ISR: return T_ISR;
    case ETL_HOOK_THREADED_DPC: case ETL_HOOK_DPC: case ETL_HOOK_TIMER_DPC: return T_DPC;
    case ETL_HOOK_PAGE_FAULT_TRANSITION: case ETL_HOOK_PAGE_FAULT_DEMAND_ZERO: case ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE:
    case ETL_HOOK_PAGE_FAULT_GUARD: case ETL_HOOK_PAGE_FAULT_HARD: case ETL_HOOK_PAGE_FAULT_ACCESS_VIOLATION:
        return T_PAGE_FAULT;
    /* TcpIp (version 2: etl_kernel_decode leaves the older layouts to the field decoder), UdpIp */
#define V6(h) ((h) + ETL_HOOK_TCPIP_IPV6)
    case ETL_HOOK_TCPIP_SEND: return T_TCP_SEND4;
    case ETL_HOOK_TCPIP_RECV: case ETL_HOOK_TCPIP_DISCONNECT: case ETL_HOOK_TCPIP_RETRANSMIT:
    case ETL_HOOK_TCPIP_RECONNECT: case ETL_HOOK_TCPIP_TCP_COPY:
        return T_TCP_GENERIC4;
    case ETL_HOOK_TCPIP_CONNECT: case ETL_HOOK_TCPIP_ACCEPT: return T_TCP_CONNECT4;
    case V6(ETL_HOOK_TCPIP_SEND): return T_TCP_SEND6;
    case V6(ETL_HOOK_TCPIP_RECV): case V6(ETL_HOOK_TCPIP_DISCONNECT): case V6(ETL_HOOK_TCPIP_RETRANSMIT):
    case V6(ETL_HOOK_TCPIP_RECONNECT): case V6(ETL_HOOK_TCPIP_TCP_COPY):
        return T_TCP_GENERIC6;
    case V6(ETL_HOOK_TCPIP_CONNECT): case V6(ETL_HOOK_TCPIP_ACCEPT): return T_TCP_CONNECT6;
    case ETL_HOOK_UDPIP_SEND: case ETL_HOOK_UDPIP_RECV: return T_UDP;
    case V6(ETL_HOOK_UDPIP_SEND): case V6(ETL_HOOK_UDPIP_RECV): return T_UDP6;
#undef V6
    case 0x0400: case 0x0420: case 0x0423: case 0x0424: return T_FIO_NAME; /* FileIo */
    case 0x0440: return T_FIO_CREATE;
    case 0x0441: case 0x0442: case 0x0449: return T_FIO_SIMPLE;
    case 0x0443: case 0x0444: return T_FIO_RW;
    case 0x0445: case 0x0446: case 0x0447: case 0x044A: case 0x044B: return T_FIO_INFO;
    case 0x0448: case 0x044D: return T_FIO_DIR;
    case 0x044C: return T_FIO_OPEND;
    case ETL_HOOK_VIRTUAL_ALLOC: case ETL_HOOK_VIRTUAL_FREE: return T_VIRTUAL_ALLOC;
    case ETL_HOOK_MAP_FILE: case ETL_HOOK_UNMAP_FILE: case ETL_HOOK_MAP_FILE_DCSTART: case ETL_HOOK_MAP_FILE_DCEND:
        return T_MAP_FILE;
    case ETL_HOOK_PROCESS_PERF_CTR: case ETL_HOOK_PROCESS_PERF_CTR_RUNDOWN: return T_PROCESS_COUNTERS;
    case ETL_HOOK_PAGE_FAULT_HARD_FAULT: return T_HARD_FAULT;
    default: return T_NONE;
    }
}

/*
 * A plan of a layout for one pointer size: its leading fixed-size fields (up to the first
 * string, SID or array) with the offsets the table gives them, the slotted ones listed, so that a
 * record that holds them all is read without walking field by field. Where the payload and the
 * typed record lay consecutive fields out alike (CSwitch's 24 bytes, a Thread's ids and pointers
 * with 64-bit pointers), one copy takes them all. Computed once from the tables (the first
 * decoding builds every plan).
 */
#define PLAN_STORES 24
#define PLAN_VERSIONS 6
#define PLAN_VERSION_INDEX 16       /* versions below this have their layout's index looked up */
struct plan {
    uint32_t fixed_len;             /* bytes of the leading fixed-size fields */
    uint32_t required_len;          /* of those, the bytes of the required ones: a shorter record fails */
    uint16_t next;                  /* index of the first field after them */
    uint8_t stores;
    uint8_t rest;                   /* fields follow the fixed ones: walk them */
    const etl_kclass_version *v;    /* the layout planned */
    /* from the payload to etl_kernel_event: copy is the size of a plain copy (on a
       little-endian host, values whose size is their member's, consecutive ones merged), else
       0: store_at */
    struct { uint16_t at, dst; uint8_t size, how, copy; } st[PLAN_STORES];
};
static struct plan plans[T_COUNT][PLAN_VERSIONS][2];
static uint8_t version_index[T_COUNT][PLAN_VERSION_INDEX]; /* a version's layout in its family */
/* What a hook (group, type) decodes as: its typed family, class, event name and whether its
   typed record fits in 32 bytes; hook_entry[group][type] is its index in hooks (0: none). By
   family, version and pointer size: the plan. */
#define HOOKS_MAX 128
static struct hook { const char *name; uint8_t t, kclass, small; } hooks[HOOKS_MAX];
static uint8_t hook_entry[ETL_GROUP_COUNT + 1][256];
static const struct plan *plan_of[T_COUNT][PLAN_VERSION_INDEX][2];
static pthread_once_t plans_once = PTHREAD_ONCE_INIT;
static int plans_ready;                                    /* set (release) when plan_all is done */

static int little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;

    memcpy(&b, &one, 1);
    return b == 1;
}

static void plan_one(const etl_kclass_version *v, unsigned ptr, struct plan *pl)
{
    uint32_t off = 0;
    unsigned i = 0, k = 0;

    for (; i < v->field_count; i += v->fields[i].span) {
        const etl_schema_field *f = &v->fields[i];
        unsigned fixed = f->count_kind == ETL_COUNT_ONE ? fixed_size(f->in_type, ptr) : 0;
        if (!fixed || (f->slot && k == PLAN_STORES) || off + fixed > UINT16_MAX) break;
        if (f->slot) {
            unsigned copy = little_endian() && slots[f->slot].how == fixed ? fixed : 0;
            if (copy && k && pl->st[k - 1].copy && pl->st[k - 1].at + pl->st[k - 1].copy == off &&
                pl->st[k - 1].dst + pl->st[k - 1].copy == slots[f->slot].offset && pl->st[k - 1].copy + copy <= 255) {
                pl->st[k - 1].copy = (uint8_t)(pl->st[k - 1].copy + copy); /* the run goes on */
            } else {
                pl->st[k].at = (uint16_t)off;
                pl->st[k].dst = slots[f->slot].offset;
                pl->st[k].size = (uint8_t)fixed;
                pl->st[k].how = slots[f->slot].how;
                pl->st[k].copy = (uint8_t)copy;
                k++;
            }
        }
        off += fixed;
        if (i + v->fields[i].span <= v->required) pl->required_len = off;
    }
    pl->fixed_len = off;
    pl->next = (uint16_t)i;
    pl->stores = (uint8_t)k;
    pl->rest = i < v->field_count;
    pl->v = v;
}

/* The size of the typed record of class kclass in etl_kernel_event's union. */
static size_t member_size(int kclass)
{
    etl_kernel_event k;

    switch (kclass) {
    case ETL_KCLASS_PROCESS: return sizeof k.u.process;
    case ETL_KCLASS_THREAD: return sizeof k.u.thread;
    case ETL_KCLASS_IMAGE: return sizeof k.u.image;
    case ETL_KCLASS_CSWITCH: return sizeof k.u.cswitch;
    case ETL_KCLASS_READY_THREAD: return sizeof k.u.ready_thread;
    case ETL_KCLASS_SAMPLED_PROFILE: return sizeof k.u.sample;
    case ETL_KCLASS_TRACE_HEADER: return sizeof k.u.header;
    case ETL_KCLASS_GROUP_MASKS: return sizeof k.u.group_masks;
    case ETL_KCLASS_LBR: return sizeof k.u.lbr;
    case ETL_KCLASS_DISK_IO: case ETL_KCLASS_DISK_IO_INIT: return sizeof k.u.disk_io;
    case ETL_KCLASS_SYSCALL_ENTER: case ETL_KCLASS_SYSCALL_EXIT: return sizeof k.u.syscall;
    case ETL_KCLASS_ISR: case ETL_KCLASS_DPC: return sizeof k.u.isr_dpc;
    case ETL_KCLASS_PAGE_FAULT: return sizeof k.u.page_fault;
    case ETL_KCLASS_TCPIP: return sizeof k.u.tcpip;
    case ETL_KCLASS_FILE_IO: return sizeof k.u.file_io;
    case ETL_KCLASS_VIRTUAL_ALLOC: return sizeof k.u.virtual_alloc;
    case ETL_KCLASS_MAP_FILE: return sizeof k.u.map_file;
    case ETL_KCLASS_PROCESS_COUNTERS: return sizeof k.u.process_counters;
    case ETL_KCLASS_HARD_FAULT: return sizeof k.u.hard_fault;
    case ETL_KCLASS_STACK: case ETL_KCLASS_STACK_KEY: case ETL_KCLASS_STACK_KEY_DEF: return sizeof k.u.stack;
    default: return sizeof k.u;
    }
}

static void plan_all(void)
{
    unsigned n = 1;

    for (unsigned t = 0; t < T_COUNT; t++) {
        const etl_kclass_family *f = typed[t];
        /* (every typed family has at most PLAN_VERSIONS versions: check_kclasses) */
        for (unsigned v = 0; v < f->version_count && v < PLAN_VERSIONS; v++)
            for (unsigned w = 0; w < 2; w++) plan_one(&f->versions[v], w ? 8 : 4, &plans[t][v][w]);
        for (unsigned v = 0; v < PLAN_VERSION_INDEX; v++)
            version_index[t][v] = (uint8_t)(etl_kclass_version_of(f, v) - f->versions);
        for (unsigned v = 0; v < PLAN_VERSION_INDEX; v++)
            for (unsigned w = 0; w < 2; w++)
                plan_of[t][v][w] = version_index[t][v] < PLAN_VERSIONS ? &plans[t][version_index[t][v]][w] : NULL;
    }
    for (unsigned g = 0; g <= ETL_GROUP_COUNT; g++) {
        for (unsigned type = 0; type < 256; type++) {
            unsigned t = classify((uint16_t)(g << 8 | type)), o;
            const etl_kclass_family *f;
            if (t == T_NONE || n == HOOKS_MAX) continue;
            f = typed[t];
            for (o = 0; o < f->op_count && f->ops[o].opcode != type; o++) continue;
            hooks[n].name = o < f->op_count ? f->ops[o].event_name : f->ops[0].event_name;
            hooks[n].t = (uint8_t)t;
            hooks[n].kclass = (uint8_t)f->kclass;
            hooks[n].small = member_size(f->kclass) <= 32;
            hook_entry[g][type] = (uint8_t)n++;
        }
    }
    __atomic_store_n(&plans_ready, 1, __ATOMIC_RELEASE);
}

_Static_assert(sizeof(((etl_kernel_event *)0)->u) >= 32, "the typed records' union holds 32 bytes");

/* The plans, built by the first call. */
static inline void plans_need(void)
{
    if (!__atomic_load_n(&plans_ready, __ATOMIC_ACQUIRE)) pthread_once(&plans_once, plan_all);
}

/* Decodes payload p by version `version` of typed family t. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int decode_typed(unsigned t, unsigned version, const uint8_t *p, uint32_t len, unsigned ptr,
                               etl_kernel_event *out)
{
    const struct plan *pl;

    if (version < PLAN_VERSION_INDEX) {
        pl = plan_of[t][version][ptr == 8];
    } else {
        unsigned vi = (unsigned)(etl_kclass_version_of(typed[t], version) - typed[t]->versions);
        pl = vi < PLAN_VERSIONS ? &plans[t][vi][ptr == 8] : NULL;
    }
    if (!pl) return walk(etl_kclass_version_of(typed[t], version), 0, 0, p, len, ptr, out); /* not planned */

    if (len < pl->fixed_len) return len < pl->required_len ? ETL_FAILED : walk(pl->v, 0, 0, p, len, ptr, out);
    for (unsigned k = 0; k < pl->stores; k++) {
        uint8_t *dst = (uint8_t *)out + pl->st[k].dst;
        const uint8_t *src = p + pl->st[k].at;
        switch (pl->st[k].copy) {
        case 0: store_at(out, dst, pl->st[k].how, src, pl->st[k].size, ptr); break;
        case 1: *dst = *src; break;
        case 2: memcpy(dst, src, 2); break;
        case 4: memcpy(dst, src, 4); break;
        case 8: memcpy(dst, src, 8); break;
        case 16: memcpy(dst, src, 16); break; /* SampledProfile's 16 bytes with 64-bit pointers */
        case 24: memcpy(dst, src, 24); break; /* CSwitch */
        default: memcpy(dst, src, pl->st[k].copy); break;
        }
    }
    return pl->rest ? walk(pl->v, pl->next, pl->fixed_len, p, len, ptr, out) : 1;
}

static int kernel_kind(int kind)
{
    return kind == ETL_KIND_SYSTEM || kind == ETL_KIND_COMPACT || kind == ETL_KIND_PERFINFO;
}

int etl_kernel_decode(const etl_event *ev, etl_kernel_event *out)
{
    const struct hook *h;
    unsigned group = ev->hook_id >> 8, type = ev->hook_id & 0xFF, e;

    if (!kernel_kind(ev->kind) || group > ETL_GROUP_COUNT) goto none;
    plans_need();
    if (!(e = hook_entry[group][type])) goto none;
    h = &hooks[e];
    if (h->kclass == ETL_KCLASS_TCPIP && group == 0x06 && ev->version < 2) goto none; /* TcpIp_V0, _V1 */
    /* the class's record: what the payload does not hold is 0 */
    if (h->small) memset(&out->u, 0, 32);
    else memset(&out->u, 0, sizeof out->u);
    out->kclass = h->kclass;
    out->name = h->name;
    if (h->kclass == ETL_KCLASS_TCPIP) out->u.tcpip.protocol = group == 0x06 ? 6 : 17;
    return decode_typed(h->t, ev->version, ev->payload, ev->payload ? ev->payload_len : 0, ev->pointer_size == 4 ? 4 : 8,
                        out);
none:
    memset(out, 0, sizeof *out);
    return 0;
}

char *etl_ktcpip_addr_format(const etl_ktcpip *t, int source, char *out, size_t size)
{
    const uint8_t *a = source ? t->saddr : t->daddr;

    if (!size) return out;
    if (!inet_ntop(t->ip_version == 6 ? AF_INET6 : AF_INET, a, out, (socklen_t)size)) out[0] = '\0';
    return out;
}

uint64_t etl_kstack_frame_at(const etl_kstack *s, unsigned index)
{
    if (!s->frames || index >= s->frame_count) return 0;
    return s->frame_size == 4 ? etl_le32(s->frames + 4 * (size_t)index) : etl_le64(s->frames + 8 * (size_t)index);
}


/* ---------------------------------------------------------------- LBR samples */

int etl_lbr_decode(const etl_event *ev, etl_lbr *out)
{
    etl_kernel_event k;
    int rc;

    if (!kernel_kind(ev->kind) || ev->hook_id != ETL_HOOK_LBR_SAMPLE) return 0;
    plans_need();
    memset(&k, 0, sizeof k);
    rc = decode_typed(T_LBR, ev->version, ev->payload, ev->payload ? ev->payload_len : 0, ev->pointer_size == 4 ? 4 : 8,
                      &k);
    if (rc != 1) return ETL_FAILED;
    *out = k.u.lbr;
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
