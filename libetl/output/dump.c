/* SPDX-License-Identifier: MIT */
/* Events as text, JSON lines or CSV (etl/output.h): one line each, decoded kernel events and LBR
   branches shown, addresses resolved through an image map. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

int etl_dump_format_parse(const char *name)
{
    if (strcmp(name, "text") == 0) return ETL_DUMP_TEXT;
    if (strcmp(name, "jsonl") == 0 || strcmp(name, "json") == 0) return ETL_DUMP_JSONL;
    if (strcmp(name, "csv") == 0) return ETL_DUMP_CSV;
    return -1;
}

int etl_dump_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
    return output_status(f);
}

static const char *const columns[] = { "ts", "time", "cpu", "pid", "tid", "provider", "kind", "id",
                                       "version", "opcode", "level", "task", "keywords", "payload_len", "ext" };

int etl_dump_csv_header(FILE *f)
{
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        fprintf(f, "%s%s", i ? "," : "", columns[i]);
    fputs(",event_name,fields\n", f);
    return output_status(f);
}

/* ---- decoded fields ---- */

/* What the decoder made of an event: rc 1 decoded, 0 no schema, ETL_FAILED partly. */
struct decoded {
    int rc;
    etl_decoded_event e;
};

static void decode(etl_decoder *dec, const etl_event *ev, struct decoded *d)
{
    memset(d, 0, sizeof *d);
    if (dec) d->rc = etl_decoder_decode(dec, ev, &d->e);
}

/* The fields as text or JSON in buf (size bytes), or in memory the caller frees (*heap). */
static const char *fields_text(const etl_decoded_event *e, int json, char *buf, size_t size, char **heap)
{
    size_t n = json ? etl_decoded_format_json(e, buf, size) : etl_decoded_format_text(e, buf, size);

    *heap = NULL;
    if (n < size) return buf;
    if (!(*heap = malloc(n + 1))) return "";
    if (json) etl_decoded_format_json(e, *heap, n + 1);
    else etl_decoded_format_text(e, *heap, n + 1);
    return *heap;
}

/* s as a CSV field: quoted, quotes doubled. */
static void csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void provider_text(const etl_event *ev, char *out)
{
    if (ev->has & ETL_HAS_PROVIDER) etl_guid_format(&ev->provider, out);
    else out[0] = '\0';
}

/* One column's value: a number, a string, or null (absent from the header kind). */
struct field {
    enum { F_NULL, F_INT, F_UINT, F_STR } type;
    int64_t i;
    uint64_t u;
    const char *s;
};

static struct field fnull(void) { struct field v = { F_NULL, 0, 0, NULL }; return v; }
static struct field fint(int64_t i) { struct field v = { F_INT, i, 0, NULL }; return v; }
static struct field fuint(uint64_t u) { struct field v = { F_UINT, 0, u, NULL }; return v; }
static struct field fstr(const char *s) { struct field v = { F_STR, 0, 0, s }; return v; }

/* LBR events carry their branches: "lbr":{"pid":..,"tid":..,"filters":..,"entries":[[from,to],...]}. */
static void dump_lbr_json(FILE *f, const etl_event *ev)
{
    etl_lbr lbr;

    if (etl_lbr_decode(ev, &lbr) != 1) return;
    fprintf(f, ",\"lbr\":{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"filters\":%" PRIu32 ",\"entries\":[",
            lbr.pid, lbr.tid, lbr.filters);
    for (unsigned i = 0; i < lbr.count; i++) {
        etl_lbr_entry e = etl_lbr_entry_at(&lbr, i);
        fprintf(f, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", e.from, e.to);
    }
    fputs("]}", f);
}

/* ---- decoded kernel events (doc/kernel-events.md) ---- */

/* A record's string as UTF-8 (caller frees), or NULL without memory. */
static char *kstring(const etl_string *s)
{
    size_t n = etl_string_to_utf8(s, NULL, 0);
    char *out = malloc(n + 1);

    if (out) etl_string_to_utf8(s, out, n + 1);
    return out;
}

/* Where addresses resolve: the image map, and the symbolizer (NULL: no function names). */
struct where {
    etl_image_map *map;
    etl_symbolizer *sym;
};

/* Where an address of process pid (or of the kernel) was at ts: 1 and *in filled, or 0. */
static int resolve(const struct where *map, uint32_t pid, uint64_t addr, int64_t ts, etl_image_info *in)
{
    return map && map->map && etl_image_map_find(map->map, pid, addr, ts, in) == 1;
}

/* The function at an address (a return address, past a stack's first frame, is looked up a
   byte before it: in the call): 1 and *out (the innermost frame: an inlined function where
   code was inlined) with its offset from the address itself in *offset, or 0. */
static int function_at(const struct where *map, uint32_t pid, uint64_t addr, int64_t ts, int return_address,
                       etl_symbol *out, uint64_t *offset)
{
    uint64_t at = return_address && addr ? addr - 1 : addr;

    if (!map || !map->sym || etl_symbolizer_resolve(map->sym, pid, at, ts, out, 1) < 1 || !out->function) return 0;
    *offset = out->function_offset + (addr - at);
    return 1;
}

/* The process of a sample's thread, or UINT32_MAX (then only kernel addresses resolve). */
static uint32_t thread_pid(const struct where *map, uint32_t tid, int64_t ts)
{
    int64_t pid = map && map->map ? etl_image_map_thread_pid(map->map, tid, ts) : -1;
    return pid < 0 ? UINT32_MAX : (uint32_t)pid;
}

/* ---- text: name and key=value pairs; strings quoted, control characters as '?' ---- */

static void text_str(FILE *f, const char *key, const etl_string *s)
{
    char *u = kstring(s);

    fprintf(f, " %s=\"", key);
    for (const unsigned char *p = (const unsigned char *)(u ? u : ""); *p; p++) {
        if (*p == '"') fputs("\\\"", f);
        else fputc(*p < 0x20 ? '?' : *p, f);
    }
    fputc('"', f);
    free(u);
}

/* An address as text: function+0x1a (image) where a function is known, image+0x1234 where
   only the image is, else '?'. */
static void text_addr(FILE *f, const struct where *map, uint32_t pid, uint64_t addr, int64_t ts, int return_address)
{
    etl_image_info in;
    etl_symbol sym;
    uint64_t off;
    int has_image = resolve(map, pid, addr, ts, &in);

    if (function_at(map, pid, addr, ts, return_address, &sym, &off)) {
        const char *image = sym.image ? sym.image : has_image ? in.base_name : NULL;
        fprintf(f, "%s+0x%" PRIx64, sym.function, off);
        if (image) fprintf(f, " (%s)", image);
    }
    else if (has_image)
        fprintf(f, "%s+0x%" PRIx64, in.base_name, addr - in.base);
    else
        fputc('?', f);
}

static void text_frames(FILE *f, const etl_kstack *s, const struct where *map, uint32_t pid, int64_t ts)
{
    fprintf(f, " frames=%u", s->frame_count);
    for (unsigned i = 0; i < s->frame_count; i++) {
        uint64_t a = etl_kstack_frame_at(s, i);
        fprintf(f, " 0x%" PRIx64 "=", a);
        text_addr(f, map, pid, a, ts, i > 0);
    }
}

static void text_process(FILE *f, const etl_kprocess *p)
{
    char sid[200];

    fprintf(f, " pid=%" PRIu32 " ppid=%" PRIu32, p->pid, p->parent_pid);
    text_str(f, "name", &p->image_file_name);
    text_str(f, "cmd", &p->command_line);
    if (p->sid) fprintf(f, " sid=%s", etl_sid_format(p->sid, p->sid_size, sid, sizeof sid));
}

/* Prints what a decoded kernel event holds (LBR keeps its own form); 1 if it did. */
static int dump_kernel_text(FILE *f, const etl_event *ev, const struct where *map)
{
    etl_kernel_event k;

    /* (LBR keeps its own form; FileIo's fields are printed by name, as the field decoder has them) */
    if (etl_kernel_decode(ev, &k) != 1 || k.kclass == ETL_KCLASS_LBR || k.kclass == ETL_KCLASS_FILE_IO) return 0;
    fprintf(f, " %s", k.name);
    switch (k.kclass) {
    case ETL_KCLASS_PROCESS: text_process(f, &k.u.process); break;
    case ETL_KCLASS_THREAD:
        fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32 " start=0x%" PRIx64 " win32_start=0x%" PRIx64, k.u.thread.pid,
                k.u.thread.tid, k.u.thread.start_address, k.u.thread.win32_start_address);
        if (k.u.thread.name.data) text_str(f, "name", &k.u.thread.name);
        break;
    case ETL_KCLASS_IMAGE:
        fprintf(f, " pid=%" PRIu32 " base=0x%" PRIx64 " size=0x%" PRIx64, k.u.image.pid, k.u.image.image_base,
                k.u.image.image_size);
        text_str(f, "file", &k.u.image.file_name);
        break;
    case ETL_KCLASS_CSWITCH:
        fprintf(f, " new_tid=%" PRIu32 " old_tid=%" PRIu32 " new_pri=%d old_pri=%d wait_reason=%u wait_mode=%u state=%u",
                k.u.cswitch.new_tid, k.u.cswitch.old_tid, k.u.cswitch.new_thread_priority,
                k.u.cswitch.old_thread_priority, k.u.cswitch.old_thread_wait_reason,
                k.u.cswitch.old_thread_wait_mode, k.u.cswitch.old_thread_state);
        break;
    case ETL_KCLASS_READY_THREAD:
        fprintf(f, " tid=%" PRIu32 " reason=%d increment=%d flags=0x%x", k.u.ready_thread.tid,
                k.u.ready_thread.adjust_reason, k.u.ready_thread.adjust_increment, k.u.ready_thread.flags);
        break;
    case ETL_KCLASS_SAMPLED_PROFILE:
        fprintf(f, " ip=0x%" PRIx64 " tid=%" PRIu32, k.u.sample.instruction_pointer, k.u.sample.tid);
        if (k.u.sample.profile_source) fprintf(f, " source=%u", k.u.sample.profile_source);
        fputs(" image=", f);
        text_addr(f, map, thread_pid(map, k.u.sample.tid, ev->timestamp), k.u.sample.instruction_pointer,
                  ev->timestamp, 0);
        break;
    case ETL_KCLASS_STACK:
        fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32 " event_ts=%" PRId64, k.u.stack.pid, k.u.stack.tid,
                k.u.stack.event_timestamp);
        text_frames(f, &k.u.stack, map, k.u.stack.pid, k.u.stack.event_timestamp);
        break;
    case ETL_KCLASS_STACK_KEY:
        fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32 " event_ts=%" PRId64 " key=0x%" PRIx64, k.u.stack.pid,
                k.u.stack.tid, k.u.stack.event_timestamp, k.u.stack.stack_key);
        break;
    case ETL_KCLASS_STACK_KEY_DEF:
        fprintf(f, " key=0x%" PRIx64, k.u.stack.stack_key);
        text_frames(f, &k.u.stack, map, UINT32_MAX, ev->timestamp);
        break;
    case ETL_KCLASS_TRACE_HEADER:
        fprintf(f, " os=%u.%u.%" PRIu32 " pointer_size=%" PRIu32 " cpus=%" PRIu32 " clock_type=%" PRIu32
                   " perf_freq=%" PRId64,
                k.u.header.version[0], k.u.header.version[1], k.u.header.provider_version, k.u.header.pointer_size,
                k.u.header.number_of_processors, k.u.header.clock_type, k.u.header.perf_freq);
        text_str(f, "logger", &k.u.header.logger_name);
        text_str(f, "file", &k.u.header.log_file_name);
        break;
    case ETL_KCLASS_GROUP_MASKS:
        fputs(" masks=", f);
        for (int i = 0; i < 8; i++) fprintf(f, "%s0x%" PRIx32, i ? "," : "", k.u.group_masks.masks[i]);
        fprintf(f, " kernel_version=%" PRIu32, k.u.group_masks.kernel_version);
        break;
    case ETL_KCLASS_DISK_IO:
        fprintf(f, " disk=%" PRIu32 " flags=0x%" PRIx32 " size=%" PRIu32 " offset=%" PRId64 " irp=0x%" PRIx64
                   " response=%" PRIu64 " issuing_tid=%" PRIu32,
                k.u.disk_io.disk_number, k.u.disk_io.irp_flags, k.u.disk_io.transfer_size, k.u.disk_io.byte_offset,
                k.u.disk_io.irp, k.u.disk_io.high_res_response_time, k.u.disk_io.issuing_tid);
        break;
    case ETL_KCLASS_DISK_IO_INIT:
        fprintf(f, " irp=0x%" PRIx64 " issuing_tid=%" PRIu32, k.u.disk_io.irp, k.u.disk_io.issuing_tid);
        break;
    case ETL_KCLASS_SYSCALL_ENTER: {
        const char *name = map && map->map ? etl_image_map_syscall_name(map->map, k.u.syscall.address) : NULL;
        fprintf(f, " address=0x%" PRIx64, k.u.syscall.address);
        if (name) fprintf(f, " syscall=%s", name); /* a Linux capture's number, named */
        break;
    }
    case ETL_KCLASS_SYSCALL_EXIT: fprintf(f, " status=0x%08" PRIx32, k.u.syscall.nt_status); break;
    case ETL_KCLASS_PAGE_FAULT:
        fprintf(f, " address=0x%" PRIx64 " pc=0x%" PRIx64, k.u.page_fault.virtual_address,
                k.u.page_fault.program_counter);
        break;
    case ETL_KCLASS_TCPIP: {
        char sa[ETL_KTCPIP_ADDR_SIZE], da[ETL_KTCPIP_ADDR_SIZE];
        fprintf(f, " pid=%" PRIu32 " size=%" PRIu32 " saddr=%s sport=%u daddr=%s dport=%u connid=0x%" PRIx64,
                k.u.tcpip.pid, k.u.tcpip.size, etl_ktcpip_addr_format(&k.u.tcpip, 1, sa, sizeof sa), k.u.tcpip.sport,
                etl_ktcpip_addr_format(&k.u.tcpip, 0, da, sizeof da), k.u.tcpip.dport, k.u.tcpip.connid);
        break;
    }
    case ETL_KCLASS_VIRTUAL_ALLOC:
        fprintf(f, " pid=%" PRIu32 " base=0x%" PRIx64 " size=%" PRIu64 " flags=0x%" PRIx32, k.u.virtual_alloc.pid,
                k.u.virtual_alloc.base_address, k.u.virtual_alloc.region_size, k.u.virtual_alloc.flags);
        break;
    case ETL_KCLASS_MAP_FILE:
        fprintf(f, " pid=%" PRIu32 " base=0x%" PRIx64 " size=%" PRIu64 " key=0x%" PRIx64 " offset=%" PRIu64,
                k.u.map_file.pid, k.u.map_file.view_base, k.u.map_file.view_size, k.u.map_file.file_key,
                k.u.map_file.byte_offset);
        break;
    case ETL_KCLASS_HARD_FAULT:
        fprintf(f, " initial_time=%" PRId64 " offset=0x%" PRIx64 " address=0x%" PRIx64 " file=0x%" PRIx64
                   " tid=%" PRIu32 " bytes=%" PRIu32, k.u.hard_fault.initial_time, k.u.hard_fault.read_offset,
                k.u.hard_fault.virtual_address, k.u.hard_fault.file_object, k.u.hard_fault.tid,
                k.u.hard_fault.byte_count);
        break;
    case ETL_KCLASS_PROCESS_COUNTERS:
        fprintf(f, " pid=%" PRIu32 " faults=%" PRIu32 " peak_vm=%" PRIu64 " peak_ws=%" PRIu64 " vm=%" PRIu64 " ws=%" PRIu64,
                k.u.process_counters.pid, k.u.process_counters.page_fault_count, k.u.process_counters.peak_virtual_size,
                k.u.process_counters.peak_working_set_size, k.u.process_counters.virtual_size,
                k.u.process_counters.working_set_size);
        break;
    case ETL_KCLASS_ISR: case ETL_KCLASS_DPC:
        fprintf(f, " initial_time=%" PRId64 " routine=0x%" PRIx64, k.u.isr_dpc.initial_time, k.u.isr_dpc.routine);
        if (k.kclass == ETL_KCLASS_ISR)
            fprintf(f, " return=%" PRIu32 " vector=%u", k.u.isr_dpc.return_value, k.u.isr_dpc.vector);
        break;
    default: break;
    }
    return 1;
}

/* ---- JSON: "kernel":{"class":..,"name":..,fields} ---- */

static void json_u(FILE *f, const char *key, uint64_t v) { fprintf(f, ",\"%s\":%" PRIu64, key, v); }
static void json_i(FILE *f, const char *key, int64_t v) { fprintf(f, ",\"%s\":%" PRId64, key, v); }

static void json_str(FILE *f, const char *key, const etl_string *s)
{
    char *u;

    fprintf(f, ",\"%s\":", key);
    if (!s->data) {
        fputs("null", f);
        return;
    }
    u = kstring(s);
    etl_dump_json_string(f, u ? u : "");
    free(u);
}

/* "image":"ntdll.dll","offset":N when addr resolves to an image; "function":"RtlUserThreadStart",
   "function_offset":N and "source":"file:line" (where known) when a function is known. */
static void json_image(FILE *f, const struct where *map, uint32_t pid, uint64_t addr, int64_t ts, int return_address)
{
    etl_image_info in;
    etl_symbol sym;
    uint64_t off;

    if (resolve(map, pid, addr, ts, &in)) {
        fputs(",\"image\":", f);
        etl_dump_json_string(f, in.base_name);
        json_u(f, "offset", addr - in.base);
    }
    if (!function_at(map, pid, addr, ts, return_address, &sym, &off)) return;
    fputs(",\"function\":", f);
    etl_dump_json_string(f, sym.function);
    json_u(f, "function_offset", off);
    if (sym.source_file) {
        fputs(",\"source\":\"", f);
        /* the file name as a JSON string's inside, then :line */
        for (const unsigned char *c = (const unsigned char *)sym.source_file; *c; c++) {
            if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
            else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
            else fputc(*c, f);
        }
        if (sym.line) fprintf(f, ":%" PRIu32, sym.line);
        fputc('"', f);
    }
}

static void json_frames(FILE *f, const etl_kstack *s, const struct where *map, uint32_t pid, int64_t ts)
{
    fputs(",\"frames\":[", f);
    for (unsigned i = 0; i < s->frame_count; i++) {
        uint64_t a = etl_kstack_frame_at(s, i);
        fprintf(f, "%s{\"addr\":%" PRIu64, i ? "," : "", a);
        json_image(f, map, pid, a, ts, i > 0);
        fputc('}', f);
    }
    fputc(']', f);
}

static void json_process(FILE *f, const etl_kprocess *p)
{
    char sid[200];

    json_u(f, "unique_process_key", p->unique_process_key);
    json_u(f, "pid", p->pid);
    json_u(f, "parent_pid", p->parent_pid);
    json_u(f, "session_id", p->session_id);
    json_i(f, "exit_status", p->exit_status);
    json_u(f, "directory_table_base", p->directory_table_base);
    json_u(f, "flags", p->flags);
    fputs(",\"sid\":", f);
    if (p->sid) etl_dump_json_string(f, etl_sid_format(p->sid, p->sid_size, sid, sizeof sid));
    else fputs("null", f);
    json_str(f, "image_file_name", &p->image_file_name);
    json_str(f, "command_line", &p->command_line);
    json_str(f, "package_full_name", &p->package_full_name);
    json_str(f, "application_id", &p->application_id);
}

static void json_thread(FILE *f, const etl_kthread *t)
{
    json_u(f, "pid", t->pid);
    json_u(f, "tid", t->tid);
    json_u(f, "stack_base", t->stack_base);
    json_u(f, "stack_limit", t->stack_limit);
    json_u(f, "user_stack_base", t->user_stack_base);
    json_u(f, "user_stack_limit", t->user_stack_limit);
    json_u(f, "start_address", t->start_address);
    json_u(f, "win32_start_address", t->win32_start_address);
    json_u(f, "teb_base", t->teb_base);
    json_u(f, "sub_process_tag", t->sub_process_tag);
    json_u(f, "base_priority", t->base_priority);
    json_u(f, "page_priority", t->page_priority);
    json_u(f, "io_priority", t->io_priority);
    json_u(f, "thread_flags", t->thread_flags);
    json_str(f, "name", &t->name);
}

static void json_image_event(FILE *f, const etl_kimage *m)
{
    json_u(f, "image_base", m->image_base);
    json_u(f, "image_size", m->image_size);
    json_u(f, "pid", m->pid);
    json_u(f, "checksum", m->checksum);
    json_u(f, "time_date_stamp", m->time_date_stamp);
    json_u(f, "signature_level", m->signature_level);
    json_u(f, "signature_type", m->signature_type);
    json_u(f, "default_base", m->default_base);
    json_str(f, "file_name", &m->file_name);
}

static void json_cswitch(FILE *f, const etl_kcswitch *c)
{
    json_u(f, "new_tid", c->new_tid);
    json_u(f, "old_tid", c->old_tid);
    json_i(f, "new_thread_priority", c->new_thread_priority);
    json_i(f, "old_thread_priority", c->old_thread_priority);
    json_u(f, "previous_cstate", c->previous_cstate);
    json_i(f, "spare_byte", c->spare_byte);
    json_u(f, "old_thread_wait_reason", c->old_thread_wait_reason);
    json_u(f, "old_thread_wait_mode", c->old_thread_wait_mode);
    json_u(f, "old_thread_state", c->old_thread_state);
    json_u(f, "old_thread_wait_ideal_processor", c->old_thread_wait_ideal_processor);
    json_u(f, "new_thread_wait_time", c->new_thread_wait_time);
    json_i(f, "old_thread_remaining_quantum", c->old_thread_remaining_quantum);
}

static void json_header(FILE *f, const etl_ktrace_header *h)
{
    json_u(f, "buffer_size", h->buffer_size);
    fprintf(f, ",\"version\":[%u,%u,%u,%u]", h->version[0], h->version[1], h->version[2], h->version[3]);
    json_u(f, "provider_version", h->provider_version);
    json_u(f, "number_of_processors", h->number_of_processors);
    json_i(f, "end_time", h->end_time);
    json_u(f, "timer_resolution", h->timer_resolution);
    json_u(f, "maximum_file_size", h->maximum_file_size);
    json_u(f, "log_file_mode", h->log_file_mode);
    json_u(f, "buffers_written", h->buffers_written);
    json_u(f, "pointer_size", h->pointer_size);
    json_u(f, "events_lost", h->events_lost);
    json_u(f, "cpu_speed_mhz", h->cpu_speed_mhz);
    json_i(f, "timezone_bias", h->timezone_bias);
    json_i(f, "boot_time", h->boot_time);
    json_i(f, "perf_freq", h->perf_freq);
    json_i(f, "start_time", h->start_time);
    json_u(f, "clock_type", h->clock_type);
    json_u(f, "buffers_lost", h->buffers_lost);
    json_str(f, "logger_name", &h->logger_name);
    json_str(f, "log_file_name", &h->log_file_name);
}

static void dump_kernel_json(FILE *f, const etl_event *ev, const struct where *map)
{
    etl_kernel_event k;
    const etl_kstack *s = &k.u.stack;

    if (etl_kernel_decode(ev, &k) != 1) return;
    fprintf(f, ",\"kernel\":{\"class\":\"%s\",\"name\":\"%s\"", etl_kclass_name(k.kclass), k.name);
    switch (k.kclass) {
    case ETL_KCLASS_PROCESS: json_process(f, &k.u.process); break;
    case ETL_KCLASS_THREAD: json_thread(f, &k.u.thread); break;
    case ETL_KCLASS_IMAGE: json_image_event(f, &k.u.image); break;
    case ETL_KCLASS_CSWITCH: json_cswitch(f, &k.u.cswitch); break;
    case ETL_KCLASS_READY_THREAD:
        json_u(f, "tid", k.u.ready_thread.tid);
        json_i(f, "adjust_reason", k.u.ready_thread.adjust_reason);
        json_i(f, "adjust_increment", k.u.ready_thread.adjust_increment);
        json_u(f, "flags", k.u.ready_thread.flags);
        break;
    case ETL_KCLASS_SAMPLED_PROFILE:
        json_u(f, "instruction_pointer", k.u.sample.instruction_pointer);
        json_u(f, "tid", k.u.sample.tid);
        json_u(f, "count", k.u.sample.count);
        json_u(f, "flags", k.u.sample.flags);
        json_u(f, "rank", k.u.sample.rank);
        if (k.u.sample.profile_source) json_u(f, "profile_source", k.u.sample.profile_source);
        json_image(f, map, thread_pid(map, k.u.sample.tid, ev->timestamp), k.u.sample.instruction_pointer,
                   ev->timestamp, 0);
        break;
    case ETL_KCLASS_STACK: case ETL_KCLASS_STACK_KEY:
        json_i(f, "event_timestamp", s->event_timestamp);
        json_u(f, "pid", s->pid);
        json_u(f, "tid", s->tid);
        if (k.kclass == ETL_KCLASS_STACK) json_frames(f, s, map, s->pid, s->event_timestamp);
        else json_u(f, "stack_key", s->stack_key);
        break;
    case ETL_KCLASS_STACK_KEY_DEF:
        json_u(f, "stack_key", s->stack_key);
        json_frames(f, s, map, UINT32_MAX, ev->timestamp);
        break;
    case ETL_KCLASS_TRACE_HEADER: json_header(f, &k.u.header); break;
    case ETL_KCLASS_GROUP_MASKS:
        fputs(",\"masks\":[", f);
        for (int i = 0; i < 8; i++) fprintf(f, "%s%" PRIu32, i ? "," : "", k.u.group_masks.masks[i]);
        fputc(']', f);
        json_u(f, "kernel_version", k.u.group_masks.kernel_version);
        break;
    case ETL_KCLASS_LBR:
        json_u(f, "pid", k.u.lbr.pid);
        json_u(f, "tid", k.u.lbr.tid);
        json_u(f, "count", k.u.lbr.count);
        break;
    case ETL_KCLASS_DISK_IO:
        json_u(f, "disk_number", k.u.disk_io.disk_number);
        json_u(f, "irp_flags", k.u.disk_io.irp_flags);
        json_u(f, "transfer_size", k.u.disk_io.transfer_size);
        json_i(f, "byte_offset", k.u.disk_io.byte_offset);
        json_u(f, "file_object", k.u.disk_io.file_object);
        json_u(f, "high_res_response_time", k.u.disk_io.high_res_response_time);
        json_u(f, "irp", k.u.disk_io.irp);
        json_u(f, "issuing_tid", k.u.disk_io.issuing_tid);
        break;
    case ETL_KCLASS_DISK_IO_INIT:
        json_u(f, "irp", k.u.disk_io.irp);
        json_u(f, "issuing_tid", k.u.disk_io.issuing_tid);
        break;
    case ETL_KCLASS_SYSCALL_ENTER: {
        const char *name = map && map->map ? etl_image_map_syscall_name(map->map, k.u.syscall.address) : NULL;
        json_u(f, "address", k.u.syscall.address);
        if (name) {
            fputs(",\"syscall\":", f);
            etl_dump_json_string(f, name);
        }
        break;
    }
    case ETL_KCLASS_SYSCALL_EXIT: json_u(f, "nt_status", k.u.syscall.nt_status); break;
    case ETL_KCLASS_TCPIP: {
        char sa[ETL_KTCPIP_ADDR_SIZE], da[ETL_KTCPIP_ADDR_SIZE];
        json_u(f, "pid", k.u.tcpip.pid);
        json_u(f, "size", k.u.tcpip.size);
        fprintf(f, ",\"saddr\":\"%s\",\"daddr\":\"%s\"", etl_ktcpip_addr_format(&k.u.tcpip, 1, sa, sizeof sa),
                etl_ktcpip_addr_format(&k.u.tcpip, 0, da, sizeof da));
        json_u(f, "sport", k.u.tcpip.sport);
        json_u(f, "dport", k.u.tcpip.dport);
        json_u(f, "connid", k.u.tcpip.connid);
        break;
    }
    case ETL_KCLASS_PAGE_FAULT:
        json_u(f, "virtual_address", k.u.page_fault.virtual_address);
        json_u(f, "program_counter", k.u.page_fault.program_counter);
        json_image(f, map, ev->pid, k.u.page_fault.program_counter, ev->timestamp, 0);
        break;
    case ETL_KCLASS_VIRTUAL_ALLOC:
        json_u(f, "pid", k.u.virtual_alloc.pid);
        json_u(f, "base_address", k.u.virtual_alloc.base_address);
        json_u(f, "region_size", k.u.virtual_alloc.region_size);
        json_u(f, "flags", k.u.virtual_alloc.flags);
        break;
    case ETL_KCLASS_MAP_FILE:
        json_u(f, "pid", k.u.map_file.pid);
        json_u(f, "view_base", k.u.map_file.view_base);
        json_u(f, "view_size", k.u.map_file.view_size);
        json_u(f, "file_key", k.u.map_file.file_key);
        json_u(f, "byte_offset", k.u.map_file.byte_offset);
        break;
    case ETL_KCLASS_HARD_FAULT:
        json_i(f, "initial_time", k.u.hard_fault.initial_time);
        json_u(f, "read_offset", k.u.hard_fault.read_offset);
        json_u(f, "virtual_address", k.u.hard_fault.virtual_address);
        json_u(f, "file_object", k.u.hard_fault.file_object);
        json_u(f, "tid", k.u.hard_fault.tid);
        json_u(f, "byte_count", k.u.hard_fault.byte_count);
        break;
    case ETL_KCLASS_PROCESS_COUNTERS:
        json_u(f, "pid", k.u.process_counters.pid);
        json_u(f, "page_fault_count", k.u.process_counters.page_fault_count);
        json_u(f, "handle_count", k.u.process_counters.handle_count);
        json_u(f, "peak_virtual_size", k.u.process_counters.peak_virtual_size);
        json_u(f, "peak_working_set_size", k.u.process_counters.peak_working_set_size);
        json_u(f, "virtual_size", k.u.process_counters.virtual_size);
        json_u(f, "working_set_size", k.u.process_counters.working_set_size);
        json_u(f, "private_page_count", k.u.process_counters.private_page_count);
        break;
    case ETL_KCLASS_ISR: case ETL_KCLASS_DPC:
        json_i(f, "initial_time", k.u.isr_dpc.initial_time);
        json_u(f, "routine", k.u.isr_dpc.routine);
        if (k.kclass == ETL_KCLASS_ISR) {
            json_u(f, "return_value", k.u.isr_dpc.return_value);
            json_u(f, "vector", k.u.isr_dpc.vector);
        }
        break;
    default: break;
    }
    fputc('}', f);
}

/* The row of an event, in the order of columns[]: the same for JSON and CSV. */
static void dump_row(FILE *f, etl_dump_format format, const etl_reader *r, const etl_event *ev, const struct where *map,
                     const struct decoded *d)
{
    char t[40], g[ETL_GUID_STRING_SIZE];
    int has_id = (ev->has & ETL_HAS_ID) != 0, pt = (ev->has & ETL_HAS_PID_TID) != 0;
    struct field v[sizeof columns / sizeof columns[0]];

    etl_time_format(etl_reader_time_ns(r, ev->timestamp), t, sizeof t);
    provider_text(ev, g);
    v[0] = fint(ev->timestamp);
    v[1] = fstr(t);
    v[2] = fuint(ev->cpu);
    v[3] = pt ? fuint(ev->pid) : fnull();
    v[4] = pt ? fuint(ev->tid) : fnull();
    v[5] = g[0] ? fstr(g) : fnull();
    v[6] = fstr(etl_event_kind_name(ev->kind));
    v[7] = has_id ? fuint(ev->id) : fnull();
    v[8] = fuint(ev->version);
    v[9] = fuint(ev->opcode);
    v[10] = (ev->has & ETL_HAS_LEVEL) ? fuint(ev->level) : fnull();
    v[11] = has_id ? fuint(ev->task) : fnull();
    v[12] = has_id ? fuint(ev->keywords) : fnull();
    v[13] = fuint(ev->payload_len);
    v[14] = fuint(ev->ext_count);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (format == ETL_DUMP_JSONL) fprintf(f, "%s\"%s\":", i ? "," : "{", columns[i]);
        else if (i) fputc(',', f);
        switch (v[i].type) {
        case F_NULL: if (format == ETL_DUMP_JSONL) fputs("null", f); break;
        case F_INT: fprintf(f, "%" PRId64, v[i].i); break;
        case F_UINT: fprintf(f, "%" PRIu64, v[i].u); break;
        case F_STR: fprintf(f, format == ETL_DUMP_JSONL ? "\"%s\"" : "%s", v[i].s); break;
        }
    }
    if (d->rc != 0 || d->e.provider_name) {
        char buf[2048], *heap;
        const char *json = d->e.source ? fields_text(&d->e, 1, buf, sizeof buf, &heap) : NULL;
        if (format == ETL_DUMP_JSONL) {
            fputs(",\"provider_name\":", f);
            if (d->e.provider_name) etl_dump_json_string(f, d->e.provider_name);
            else fputs("null", f);
            fputs(",\"event_name\":", f);
            if (d->e.event_name) etl_dump_json_string(f, d->e.event_name);
            else fputs("null", f);
            fprintf(f, ",\"fields\":%s", json ? json : "null");
        } else {
            fputc(',', f);
            if (d->e.event_name) csv_string(f, d->e.event_name);
            fputc(',', f);
            if (json) csv_string(f, json);
        }
        if (json) free(heap);
    } else if (format == ETL_DUMP_CSV) {
        fputs(",,", f);
    }
    if (format == ETL_DUMP_JSONL) {
        dump_lbr_json(f, ev);
        dump_kernel_json(f, ev, map);
    }
    fputs(format == ETL_DUMP_JSONL ? "}\n" : "\n", f);
}

/* What libetl adds to a decoded sample's or stack's fields: where the addresses are; to a
   Linux capture's SysClEnter, the system call's name. */
static void text_resolved(FILE *f, const etl_event *ev, const struct where *map)
{
    etl_kernel_event k;
    const char *call;

    if (!map || (!map->map && !map->sym) || etl_kernel_decode(ev, &k) != 1) return;
    if (k.kclass == ETL_KCLASS_SYSCALL_ENTER) {
        if (map->map && (call = etl_image_map_syscall_name(map->map, k.u.syscall.address)))
            fprintf(f, " syscall=%s", call);
    } else if (k.kclass == ETL_KCLASS_SAMPLED_PROFILE) {
        fputs(" image=", f);
        text_addr(f, map, thread_pid(map, k.u.sample.tid, ev->timestamp), k.u.sample.instruction_pointer,
                  ev->timestamp, 0);
    } else if (k.kclass == ETL_KCLASS_STACK || k.kclass == ETL_KCLASS_STACK_KEY_DEF) {
        uint32_t pid = k.kclass == ETL_KCLASS_STACK ? k.u.stack.pid : UINT32_MAX;
        int64_t ts = k.kclass == ETL_KCLASS_STACK ? k.u.stack.event_timestamp : ev->timestamp;
        fputs(" images=[", f);
        for (unsigned i = 0; i < k.u.stack.frame_count; i++) {
            if (i) fputc(',', f);
            text_addr(f, map, pid, etl_kstack_frame_at(&k.u.stack, i), ts, i > 0);
        }
        fputc(']', f);
    }
}

static void dump_text(FILE *f, const etl_reader *r, const etl_event *ev, const struct where *map, const struct decoded *d)
{
    char t[40], g[ETL_GUID_STRING_SIZE];
    const char *name = d->e.provider_name ? d->e.provider_name
                     : (ev->has & ETL_HAS_PROVIDER) ? etl_guid_name(&ev->provider) : NULL;
    uint32_t preview = ev->payload_len < 16 ? ev->payload_len : 16;
    etl_lbr lbr;

    etl_time_format(etl_reader_time_ns(r, ev->timestamp), t, sizeof t);
    provider_text(ev, g);
    fprintf(f, "%s cpu=%u ", t, ev->cpu);
    if (ev->has & ETL_HAS_PID_TID) fprintf(f, "pid=%" PRIu32 " tid=%" PRIu32 " ", ev->pid, ev->tid);
    else fputs("pid=- tid=- ", f);
    fprintf(f, "%s %s ", name ? name : g[0] ? g : "-", etl_event_kind_name(ev->kind));
    if (ev->has & ETL_HAS_ID) fprintf(f, "id=%u ", ev->id);
    fprintf(f, "v=%u op=%u ", ev->version, ev->opcode);
    if (ev->has & ETL_HAS_LEVEL) fprintf(f, "level=%u ", ev->level);
    fprintf(f, "len=%" PRIu32, ev->payload_len);
    if (ev->ext_count) fprintf(f, " ext=%u", ev->ext_count);
    if (etl_lbr_decode(ev, &lbr) == 1) {
        fprintf(f, " lbr pid=%" PRIu32 " tid=%" PRIu32 " filters=0x%" PRIx32 " branches=%u", lbr.pid, lbr.tid,
                lbr.filters, lbr.count);
        for (unsigned i = 0; i < lbr.count; i++) {
            etl_lbr_entry e = etl_lbr_entry_at(&lbr, i);
            fprintf(f, " %" PRIx64 "->%" PRIx64, e.from, e.to);
        }
        fputc('\n', f);
        return;
    }
    if (d->rc != 0 && d->e.source) {
        char buf[2048], *heap;
        fprintf(f, " %s", d->e.event_name ? d->e.event_name : "?");
        if (d->e.field_count) {
            fputc(' ', f);
            fputs(fields_text(&d->e, 0, buf, sizeof buf, &heap), f);
            free(heap);
        }
        text_resolved(f, ev, map);
        if (d->rc == 1) {
            fputc('\n', f);
            return;
        }
    } else if (dump_kernel_text(f, ev, map)) {
        fputc('\n', f);
        return;
    }
    if (preview) {
        fputs(" [", f);
        for (uint32_t i = 0; i < preview; i++) fprintf(f, "%s%02x", i ? " " : "", ev->payload[i]);
        fputs(preview < ev->payload_len ? " ...]" : "]", f);
    }
    fputc('\n', f);
}

int etl_dump_event(FILE *f, etl_dump_format format, const etl_reader *r, const etl_event *ev,
                   etl_image_map *map, etl_decoder *dec)
{
    return etl_dump_event_symbols(f, format, r, ev, map, dec, NULL);
}

int etl_dump_event_symbols(FILE *f, etl_dump_format format, const etl_reader *r, const etl_event *ev,
                           etl_image_map *map, etl_decoder *dec, etl_symbolizer *sym)
{
    struct where w = { map, sym };
    struct decoded d;
    int rc;

    decode(dec, ev, &d);
    if (format == ETL_DUMP_JSONL || format == ETL_DUMP_CSV) dump_row(f, format, r, ev, map || sym ? &w : NULL, &d);
    else dump_text(f, r, ev, map || sym ? &w : NULL, &d);
    rc = output_status(f);
    return rc == ETL_OK && d.rc == ETL_FAILED ? ETL_WARN : rc;
}

int etl_dump_first_pass(etl_reader *r, etl_image_map *map, etl_decoder *dec)
{
    return etl_dump_first_pass_symbols(r, map, dec, NULL);
}

int etl_dump_first_pass_symbols(etl_reader *r, etl_image_map *map, etl_decoder *dec, etl_symbolizer *sym)
{
    etl_event ev;
    int rc;

    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (map && etl_image_map_add(map, &ev) != ETL_OK) return ETL_FAILED;
        if (sym && etl_symbolizer_add(sym, &ev) != ETL_OK) return ETL_FAILED;
        if (dec && etl_decoder_learn(dec, &ev) == ETL_FATAL) return ETL_FAILED;
    }
    if (rc == ETL_FATAL || etl_reader_rewind(r) != ETL_OK) return ETL_FATAL;
    return ETL_OK;
}
