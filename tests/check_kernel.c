/* SPDX-License-Identifier: MIT */
/* Tests of the kernel event decoders (every class, both pointer sizes, truncation) and the image map. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "synth.h"
#include "testutil.h"

#define DIAGHUB "samples/perfview_diaghub.kernel.1.etl"

/* ---- payload building ---- */

/* TOKEN_USER (two pointer-sized words) and S-1-5-21-7-8. */
static void psid(struct synth_payload *p)
{
    static const uint8_t sid[] = { 1, 3, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0 };
    spp(p, 0x1234);
    spp(p, 0);
    for (size_t i = 0; i < sizeof sid; i++) sp8(p, sid[i]);
}

static void str_is(const etl_string *s, const char *want)
{
    char buf[256];
    ck_assert_ptr_nonnull(s->data);
    etl_string_to_utf8(s, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
}

static void sid_is(const etl_kprocess *k, const char *want)
{
    char buf[128];
    ck_assert_str_eq(etl_sid_format(k->sid, k->sid_size, buf, sizeof buf), want);
}

/* ---- a synthetic file with one record of every class, for one pointer size ---- */

struct rec {
    uint8_t b[1200];
    uint32_t n;
    uint32_t min; /* payload bytes the decoder needs (its version's fixed part) */
    uint32_t unit; /* frames or entries: the rest must be whole ones of this size (0: anything) */
};

enum { R_PROC2, R_PROC3, R_PROC4, R_PROC5, R_PROC1, R_PROC0, R_THR2, R_THR3, R_THR4, R_THR1END, R_IMG2, R_IMG3,
       R_CSW, R_READY, R_SAMPLE, R_STACK, R_KEY, R_KEYDEF, R_MASKS, R_MASKS_END, R_RUNDOWN, R_LBR, R_DISK_READ3,
       R_DISK_WRITE2, R_DISK_INIT3, R_DISK_INIT2, R_DISK_FLUSH3, R_SYSCALL_ENTER, R_SYSCALL_EXIT, R_COUNT };

static void build_records(unsigned ptr, struct rec *r)
{
    int w = ptr == 8;
    uint64_t hi = ptr == 8 ? 0xFFFFF80000000000ull : 0x80000000ull;
    struct synth_payload p;

    /* Process v2: UniqueProcessKey, pid, ppid, session, exit, no SID, name, command line. */
    sp_init(&p, ptr); spp(&p, hi + 0x100); sp32(&p, 100); sp32(&p, 4); sp32(&p, 1); sp32(&p, 0); sp32(&p, 0);
    sp_str8(&p, "a.exe"); sp_str16(&p, "a.exe -x");
    r[R_PROC2].min = ptr + 16 + 4;
    r[R_PROC2].n = synth_system(r[R_PROC2].b, w, 0, 2000000, 0x0301, 2, 100, 1, p.b, p.n);
    /* v3: + DirectoryTableBase, SID. */
    sp_init(&p, ptr); spp(&p, hi + 0x200); sp32(&p, 200); sp32(&p, 100); sp32(&p, 2); sp32(&p, 0); spp(&p, 0x1aa000);
    psid(&p); sp_str8(&p, "b.exe"); sp_str16(&p, "");
    r[R_PROC3].min = 2 * ptr + 16 + 2 * ptr + 20;
    r[R_PROC3].n = synth_perfinfo(r[R_PROC3].b, w, 2000001, 0x0303, 3, NULL, NULL, 0, p.b, p.n);
    /* v4: + Flags, package and application id. */
    sp_init(&p, ptr); spp(&p, hi + 0x300); sp32(&p, 300); sp32(&p, 200); sp32(&p, 3); sp32(&p, (uint32_t)-5);
    spp(&p, 0x2000); sp32(&p, 8); psid(&p); sp_str8(&p, "c.exe"); sp_str16(&p, "c"); sp_str16(&p, "Pkg_1"); sp_str16(&p, "App");
    r[R_PROC4].min = 2 * ptr + 20 + 2 * ptr + 20;
    r[R_PROC4].n = synth_system(r[R_PROC4].b, w, 0, 2000002, 0x0302, 4, 300, 3, p.b, p.n);
    /* v5 (Defunct): v4 and 8 bytes more. */
    sp_init(&p, ptr); spp(&p, hi + 0x400); sp32(&p, 400); sp32(&p, 4); sp32(&p, 0); sp32(&p, 0); spp(&p, 0); sp32(&p, 0);
    sp32(&p, 0); sp_str8(&p, "d.exe"); sp_str16(&p, ""); sp_str16(&p, ""); sp_str16(&p, ""); sp64(&p, 0x1122334455667788ull);
    r[R_PROC5].min = 2 * ptr + 20 + 4;
    r[R_PROC5].n = synth_perfinfo(r[R_PROC5].b, w, 2000003, 0x0327, 5, NULL, NULL, 0, p.b, p.n);
    /* v1: PageDirectoryBase, pid, ppid, session, exit, SID, name (no command line). */
    sp_init(&p, ptr); spp(&p, 0x5000); sp32(&p, 500); sp32(&p, 4); sp32(&p, 6); sp32(&p, 7); sp32(&p, 0); sp_str8(&p, "e.exe");
    r[R_PROC1].min = ptr + 16 + 4;
    r[R_PROC1].n = synth_system(r[R_PROC1].b, w, 0, 2000004, 0x0303, 1, 0, 0, p.b, p.n);
    /* v0: pid and ppid as pointer-sized words, SID, name. */
    sp_init(&p, ptr); spp(&p, 600); spp(&p, 500); sp32(&p, 0); sp_str8(&p, "f.exe");
    r[R_PROC0].min = 2 * ptr + 4;
    r[R_PROC0].n = synth_system(r[R_PROC0].b, w, 0, 2000005, 0x0301, 0, 0, 0, p.b, p.n);

    /* Thread v2: pid, tid, 7 pointers, SubProcessTag. */
    sp_init(&p, ptr); sp32(&p, 100); sp32(&p, 1000);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0x77);
    r[R_THR2].min = 12 + 7 * ptr;
    r[R_THR2].n = synth_system(r[R_THR2].b, w, 0, 2000010, 0x0501, 2, 100, 1000, p.b, p.n);
    /* v3: + priorities. */
    sp_init(&p, ptr); sp32(&p, 200); sp32(&p, 2000);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x20000 * i);
    sp32(&p, 0); sp8(&p, 8); sp8(&p, 5); sp8(&p, 2); sp8(&p, 1);
    r[R_THR3].min = 16 + 7 * ptr;
    r[R_THR3].n = synth_system(r[R_THR3].b, w, 0, 2000011, 0x0503, 3, 0, 0, p.b, p.n);
    /* v4: + name. */
    sp_init(&p, ptr); sp32(&p, 300); sp32(&p, 3000);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x30000 * i);
    sp32(&p, 0); sp8(&p, 9); sp8(&p, 5); sp8(&p, 2); sp8(&p, 0); sp_str16(&p, "worker");
    r[R_THR4].min = 16 + 7 * ptr;
    r[R_THR4].n = synth_system(r[R_THR4].b, w, 0, 2000012, 0x0501, 4, 300, 3000, p.b, p.n);
    /* v1 End: the ids only. */
    sp_init(&p, ptr); sp32(&p, 100); sp32(&p, 1001);
    r[R_THR1END].min = 8;
    r[R_THR1END].n = synth_system(r[R_THR1END].b, w, 0, 2000013, 0x0502, 1, 100, 1001, p.b, p.n);

    /* Image v2 (Load, 0x030A) and v3 (DCStart). */
    sp_init(&p, ptr); spp(&p, 0x400000); spp(&p, 0x3000); sp32(&p, 100); sp32(&p, 0xABCD); sp32(&p, 0x5F000000);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, 0x400000); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, "\\Device\\HarddiskVolume2\\a.exe");
    r[R_IMG2].min = 3 * ptr + 32;
    r[R_IMG2].n = synth_system(r[R_IMG2].b, w, 0, 2000020, 0x030A, 2, 100, 1000, p.b, p.n);
    sp_init(&p, ptr); spp(&p, hi + 0x100000); spp(&p, 0x80000); sp32(&p, 0); sp32(&p, 1); sp32(&p, 2);
    sp8(&p, 12); sp8(&p, 1); sp16(&p, 0); spp(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, "\\SystemRoot\\system32\\ntoskrnl.exe");
    r[R_IMG3].min = 3 * ptr + 32;
    r[R_IMG3].n = synth_perfinfo(r[R_IMG3].b, w, 2000021, 0x1403, 3, NULL, NULL, 0, p.b, p.n);

    sp_init(&p, ptr); sp32(&p, 1000); sp32(&p, 2000); sp8(&p, 9); sp8(&p, (uint8_t)-2); sp8(&p, 1); sp8(&p, 0);
    sp8(&p, 6); sp8(&p, 1); sp8(&p, 5); sp8(&p, 3); sp32(&p, 77); sp32(&p, (uint32_t)-9);
    r[R_CSW].min = 24;
    r[R_CSW].n = synth_perfinfo(r[R_CSW].b, w, 2000030, 0x0524, 4, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); sp32(&p, 3000); sp8(&p, 1); sp8(&p, (uint8_t)-1); sp8(&p, 3); sp8(&p, 0);
    r[R_READY].min = 8;
    r[R_READY].n = synth_perfinfo(r[R_READY].b, w, 2000031, 0x0532, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); spp(&p, 0x401234); sp32(&p, 1000); sp16(&p, 1); sp8(&p, 0x41); sp8(&p, 2);
    r[R_SAMPLE].min = ptr + 8;
    r[R_SAMPLE].n = synth_perfinfo(r[R_SAMPLE].b, w, 2000032, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); sp64(&p, 2000032); sp32(&p, 100); sp32(&p, 1000);
    spp(&p, 0x401234); spp(&p, hi + 0x100010); spp(&p, 0x999999);
    r[R_STACK].min = 16;
    r[R_STACK].unit = ptr;
    r[R_STACK].n = synth_perfinfo(r[R_STACK].b, w, 2000033, 0x1820, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); sp64(&p, 2000032); sp32(&p, 100); sp32(&p, 1000); spp(&p, 0xCAFE);
    r[R_KEY].min = 16 + ptr;
    r[R_KEY].n = synth_perfinfo(r[R_KEY].b, w, 2000034, 0x1826, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); spp(&p, 0xCAFE); spp(&p, 0x401000); spp(&p, 0x402000);
    r[R_KEYDEF].min = ptr;
    r[R_KEYDEF].unit = ptr;
    r[R_KEYDEF].n = synth_perfinfo(r[R_KEYDEF].b, w, 2000035, 0x1824, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr);
    for (uint32_t i = 0; i < 8; i++) sp32(&p, 0x100 + i);
    sp32(&p, 80);
    r[R_MASKS].min = 32;
    r[R_MASKS].n = synth_perfinfo(r[R_MASKS].b, w, 2000036, 0x0005, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr);
    for (uint32_t i = 0; i < 8; i++) sp32(&p, 0x200 + i);
    r[R_MASKS_END].min = 32;
    r[R_MASKS_END].n = synth_perfinfo(r[R_MASKS_END].b, w, 2000037, 0x0020, 2, NULL, NULL, 0, p.b, p.n);
    r[R_RUNDOWN].min = 0;
    r[R_RUNDOWN].n = synth_perfinfo(r[R_RUNDOWN].b, w, 2000038, 0x0008, 2, NULL, NULL, 0, NULL, 0);
    /* LBR_TRACE_EVENT_DATA (a pad after Options with 64-bit pointers) and one entry. */
    sp_init(&p, ptr); sp64(&p, 2000032); sp32(&p, 100); sp32(&p, 1000); sp32(&p, 0x3);
    if (ptr == 8) sp32(&p, 0);
    spp(&p, 0x401000); spp(&p, 0x402000); spp(&p, 0);
    r[R_LBR].min = ptr == 8 ? 24 : 20;
    r[R_LBR].unit = 3 * ptr;
    r[R_LBR].n = synth_perfinfo(r[R_LBR].b, w, 2000039, 0x0C20, 2, NULL, NULL, 0, p.b, p.n);

    /* DiskIo Read v3 (DiskIo_TypeGroup1 with IssuingThreadId, padded to 8 as Windows' struct). */
    sp_init(&p, ptr); sp32(&p, 2); sp32(&p, 0x60100); sp32(&p, 4096); sp32(&p, 0); sp64(&p, 0x12345000);
    spp(&p, hi + 0x5550); spp(&p, hi + 0x6660); sp64(&p, 250000); sp32(&p, 4242);
    if (ptr == 8) sp32(&p, 0);
    r[R_DISK_READ3].min = 2 * ptr + 36;
    r[R_DISK_READ3].n = synth_perfinfo(r[R_DISK_READ3].b, w, 2000040, 0x010A, 3, NULL, NULL, 0, p.b, p.n);
    /* Write v2: no IssuingThreadId (a SYSTEM header then carried the thread). */
    sp_init(&p, ptr); sp32(&p, 0); sp32(&p, 0x200); sp32(&p, 512); sp32(&p, 0); sp64(&p, 1024);
    spp(&p, 0); spp(&p, hi + 0x7770); sp64(&p, 99);
    r[R_DISK_WRITE2].min = 2 * ptr + 32;
    r[R_DISK_WRITE2].n = synth_system(r[R_DISK_WRITE2].b, w, 0, 2000041, 0x010B, 2, 100, 1000, p.b, p.n);
    /* WriteInit v3: Irp, IssuingThreadId. */
    sp_init(&p, ptr); spp(&p, hi + 0x6660); sp32(&p, 4242);
    if (ptr == 8) sp32(&p, 0);
    r[R_DISK_INIT3].min = ptr + 4;
    r[R_DISK_INIT3].n = synth_perfinfo(r[R_DISK_INIT3].b, w, 2000042, 0x010D, 3, NULL, NULL, 0, p.b, p.n);
    /* FlushInit v2: Irp only. */
    sp_init(&p, ptr); spp(&p, hi + 0x8880);
    r[R_DISK_INIT2].min = ptr;
    r[R_DISK_INIT2].n = synth_system(r[R_DISK_INIT2].b, w, 0, 2000043, 0x010F, 2, 100, 1000, p.b, p.n);
    /* FlushBuffers v3 (DiskIo_TypeGroup3). */
    sp_init(&p, ptr); sp32(&p, 1); sp32(&p, 0x4); sp64(&p, 777); spp(&p, hi + 0x8880); sp32(&p, 4343);
    if (ptr == 8) sp32(&p, 0);
    r[R_DISK_FLUSH3].min = ptr + 20;
    r[R_DISK_FLUSH3].n = synth_perfinfo(r[R_DISK_FLUSH3].b, w, 2000044, 0x010E, 3, NULL, NULL, 0, p.b, p.n);
    /* PerfInfo SysClEnter (SysCallAddress) and SysClExit (SysCallNtStatus), version 2. */
    sp_init(&p, ptr); spp(&p, hi + 0x123450);
    r[R_SYSCALL_ENTER].min = ptr;
    r[R_SYSCALL_ENTER].n = synth_perfinfo(r[R_SYSCALL_ENTER].b, w, 2000045, 0x0F33, 2, NULL, NULL, 0, p.b, p.n);
    sp_init(&p, ptr); sp32(&p, 0xC0000034);
    r[R_SYSCALL_EXIT].min = 4;
    r[R_SYSCALL_EXIT].n = synth_perfinfo(r[R_SYSCALL_EXIT].b, w, 2000046, 0x0F34, 2, NULL, NULL, 0, p.b, p.n);
}

/* The synthetic file of pointer size ptr holding recs (filled here) after its logfile header;
   the caller frees it. */
static uint8_t *synth_file(unsigned ptr, size_t *size, struct rec *recs)
{
    struct synth_options o;
    struct synth *s;

    memset(&o, 0, sizeof o);
    o.pointer_size = ptr;
    o.cpus = 1;
    s = synth_new(&o);
    ck_assert_ptr_nonnull(s);
    build_records(ptr, recs);
    for (int i = 0; i < R_COUNT; i++) ck_assert_int_eq(synth_add(s, 0, recs[i].b, recs[i].n), 0);
    return synth_finish(s, size);
}

static void check_classes(unsigned ptr)
{
    struct rec recs[R_COUNT] = { { { 0 }, 0, 0, 0 } };
    size_t size;
    uint8_t *file = synth_file(ptr, &size, recs);
    uint64_t hi = ptr == 8 ? 0xFFFFF80000000000ull : 0x80000000ull;
    etl_reader *r = NULL;
    etl_event ev;
    etl_kernel_event k;
    const etl_trace_info *info;
    int i = -1;

    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    info = etl_reader_info(r);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        ck_assert_int_eq(ev.pointer_size, ptr);
        if (ev.hook_id == 0x0050) continue; /* the header buffer's PartitionInfoExtension: not decoded */
        ck_assert_msg(etl_kernel_decode(&ev, &k) == 1, "event %d hook 0x%04x kind %d", i, ev.hook_id, ev.kind);
        if (i < 0) { /* the logfile header event */
            const etl_ktrace_header *h = &k.u.header;
            ck_assert_int_eq(k.kclass, ETL_KCLASS_TRACE_HEADER);
            ck_assert_str_eq(k.name, "EventTrace/Header");
            ck_assert_uint_eq(h->buffer_size, info->buffer_size);
            ck_assert_uint_eq(h->pointer_size, ptr);
            ck_assert_uint_eq(h->number_of_processors, info->number_of_processors);
            ck_assert_int_eq(h->start_time, info->clock.start_time);
            ck_assert_int_eq(h->perf_freq, info->clock.perf_freq);
            ck_assert_int_eq(h->boot_time, info->boot_time);
            ck_assert_uint_eq(h->clock_type, (uint32_t)info->clock.type);
            ck_assert_uint_eq(h->cpu_speed_mhz, info->clock.cpu_speed_mhz);
            ck_assert_uint_eq(h->log_file_mode, info->log_file_mode);
            ck_assert_uint_eq(h->provider_version, info->os_build);
            ck_assert_uint_eq(h->version[0], info->os_major);
            ck_assert_uint_eq(h->version[2], info->layout_major);
            ck_assert_int_eq(h->timezone_bias, info->timezone_bias);
            str_is(&h->logger_name, "SynthSession");
            str_is(&h->log_file_name, "C:\\synth.etl");
            i++;
            continue;
        }
        ck_assert_int_lt(i, R_COUNT);
        switch (i) {
        case R_PROC2: {
            etl_kprocess *p = &k.u.process;
            ck_assert_str_eq(k.name, "Process/Start");
            ck_assert_uint_eq(p->unique_process_key, hi + 0x100);
            ck_assert_uint_eq(p->pid, 100);
            ck_assert_uint_eq(p->parent_pid, 4);
            ck_assert_uint_eq(p->session_id, 1);
            ck_assert_ptr_null(p->sid);
            str_is(&p->image_file_name, "a.exe");
            str_is(&p->command_line, "a.exe -x");
            ck_assert_ptr_null(p->package_full_name.data);
            break;
        }
        case R_PROC3: {
            etl_kprocess *p = &k.u.process;
            ck_assert_str_eq(k.name, "Process/DCStart");
            ck_assert_uint_eq(p->pid, 200);
            ck_assert_uint_eq(p->parent_pid, 100);
            ck_assert_uint_eq(p->directory_table_base, 0x1aa000);
            ck_assert_uint_eq(p->flags, 0);
            sid_is(p, "S-1-5-21-7-8");
            str_is(&p->image_file_name, "b.exe");
            str_is(&p->command_line, "");
            break;
        }
        case R_PROC4: {
            etl_kprocess *p = &k.u.process;
            ck_assert_str_eq(k.name, "Process/End");
            ck_assert_uint_eq(p->unique_process_key, hi + 0x300);
            ck_assert_uint_eq(p->pid, 300);
            ck_assert_int_eq(p->exit_status, -5);
            ck_assert_uint_eq(p->directory_table_base, 0x2000);
            ck_assert_uint_eq(p->flags, 8);
            ck_assert_uint_eq(p->sid_size, 20);
            sid_is(p, "S-1-5-21-7-8");
            str_is(&p->image_file_name, "c.exe");
            str_is(&p->command_line, "c");
            str_is(&p->package_full_name, "Pkg_1");
            str_is(&p->application_id, "App");
            break;
        }
        case R_PROC5:
            ck_assert_str_eq(k.name, "Process/Defunct");
            ck_assert_uint_eq(k.u.process.pid, 400);
            str_is(&k.u.process.image_file_name, "d.exe");
            str_is(&k.u.process.application_id, "");
            break;
        case R_PROC1:
            ck_assert_str_eq(k.name, "Process/DCStart");
            ck_assert_uint_eq(k.u.process.unique_process_key, 0x5000);
            ck_assert_uint_eq(k.u.process.pid, 500);
            ck_assert_uint_eq(k.u.process.session_id, 6);
            ck_assert_int_eq(k.u.process.exit_status, 7);
            str_is(&k.u.process.image_file_name, "e.exe");
            ck_assert_ptr_null(k.u.process.command_line.data);
            break;
        case R_PROC0:
            ck_assert_uint_eq(k.u.process.pid, 600);
            ck_assert_uint_eq(k.u.process.parent_pid, 500);
            str_is(&k.u.process.image_file_name, "f.exe");
            break;
        case R_THR2: case R_THR3: case R_THR4: {
            etl_kthread *t = &k.u.thread;
            unsigned n = (unsigned)(i - R_THR2 + 1);
            ck_assert_str_eq(k.name, i == R_THR3 ? "Thread/DCStart" : "Thread/Start");
            ck_assert_uint_eq(t->pid, 100 * n);
            ck_assert_uint_eq(t->tid, 1000 * n);
            ck_assert_uint_eq(t->stack_base, 0x10000 * n);
            ck_assert_uint_eq(t->stack_limit, 0x20000 * n);
            ck_assert_uint_eq(t->user_stack_base, 0x30000 * n);
            ck_assert_uint_eq(t->user_stack_limit, 0x40000 * n);
            ck_assert_uint_eq(t->start_address, 0x50000 * n);
            ck_assert_uint_eq(t->win32_start_address, 0x60000 * n);
            ck_assert_uint_eq(t->teb_base, 0x70000 * n);
            ck_assert_uint_eq(t->sub_process_tag, i == R_THR2 ? 0x77 : 0);
            ck_assert_uint_eq(t->base_priority, i == R_THR2 ? 0 : i == R_THR3 ? 8 : 9);
            ck_assert_uint_eq(t->page_priority, i == R_THR2 ? 0 : 5);
            ck_assert_uint_eq(t->io_priority, i == R_THR2 ? 0 : 2);
            ck_assert_uint_eq(t->thread_flags, i == R_THR3 ? 1 : 0);
            if (i == R_THR4) str_is(&t->name, "worker");
            else ck_assert_ptr_null(t->name.data);
            break;
        }
        case R_THR1END:
            ck_assert_str_eq(k.name, "Thread/End");
            ck_assert_uint_eq(k.u.thread.pid, 100);
            ck_assert_uint_eq(k.u.thread.tid, 1001);
            ck_assert_uint_eq(k.u.thread.stack_base, 0);
            break;
        case R_IMG2: {
            etl_kimage *m = &k.u.image;
            ck_assert_int_eq(k.kclass, ETL_KCLASS_IMAGE);
            ck_assert_str_eq(k.name, "Image/Load");
            ck_assert_uint_eq(m->image_base, 0x400000);
            ck_assert_uint_eq(m->image_size, 0x3000);
            ck_assert_uint_eq(m->pid, 100);
            ck_assert_uint_eq(m->checksum, 0xABCD);
            ck_assert_uint_eq(m->time_date_stamp, 0x5F000000);
            ck_assert_uint_eq(m->default_base, 0x400000);
            str_is(&m->file_name, "\\Device\\HarddiskVolume2\\a.exe");
            break;
        }
        case R_IMG3:
            ck_assert_str_eq(k.name, "Image/DCStart");
            ck_assert_uint_eq(k.u.image.image_base, hi + 0x100000);
            ck_assert_uint_eq(k.u.image.image_size, 0x80000);
            ck_assert_uint_eq(k.u.image.checksum, 1);
            ck_assert_uint_eq(k.u.image.time_date_stamp, 2);
            ck_assert_uint_eq(k.u.image.signature_level, 12);
            ck_assert_uint_eq(k.u.image.signature_type, 1);
            str_is(&k.u.image.file_name, "\\SystemRoot\\system32\\ntoskrnl.exe");
            break;
        case R_CSW: {
            etl_kcswitch *c = &k.u.cswitch;
            ck_assert_int_eq(k.kclass, ETL_KCLASS_CSWITCH);
            ck_assert_str_eq(k.name, "Thread/CSwitch");
            ck_assert_uint_eq(c->new_tid, 1000);
            ck_assert_uint_eq(c->old_tid, 2000);
            ck_assert_int_eq(c->new_thread_priority, 9);
            ck_assert_int_eq(c->old_thread_priority, -2);
            ck_assert_uint_eq(c->previous_cstate, 1);
            ck_assert_uint_eq(c->old_thread_wait_reason, 6);
            ck_assert_uint_eq(c->old_thread_wait_mode, 1);
            ck_assert_uint_eq(c->old_thread_state, 5);
            ck_assert_uint_eq(c->old_thread_wait_ideal_processor, 3);
            ck_assert_uint_eq(c->new_thread_wait_time, 77);
            ck_assert_int_eq(c->old_thread_remaining_quantum, -9);
            break;
        }
        case R_READY:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_READY_THREAD);
            ck_assert_str_eq(k.name, "Thread/ReadyThread");
            ck_assert_uint_eq(k.u.ready_thread.tid, 3000);
            ck_assert_int_eq(k.u.ready_thread.adjust_reason, 1);
            ck_assert_int_eq(k.u.ready_thread.adjust_increment, -1);
            ck_assert_uint_eq(k.u.ready_thread.flags, 3);
            break;
        case R_SAMPLE:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_SAMPLED_PROFILE);
            ck_assert_str_eq(k.name, "PerfInfo/SampleProf");
            ck_assert_uint_eq(k.u.sample.instruction_pointer, 0x401234);
            ck_assert_uint_eq(k.u.sample.tid, 1000);
            ck_assert_uint_eq(k.u.sample.count, 1);
            ck_assert_uint_eq(k.u.sample.flags, 0x41);
            ck_assert_uint_eq(k.u.sample.rank, 2);
            break;
        case R_STACK:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_STACK);
            ck_assert_str_eq(k.name, "StackWalk/Stack");
            ck_assert_int_eq(k.u.stack.event_timestamp, 2000032);
            ck_assert_uint_eq(k.u.stack.pid, 100);
            ck_assert_uint_eq(k.u.stack.tid, 1000);
            ck_assert_uint_eq(k.u.stack.frame_count, 3);
            ck_assert_uint_eq(k.u.stack.frame_size, ptr);
            ck_assert_uint_eq(etl_kstack_frame_at(&k.u.stack, 0), 0x401234);
            ck_assert_uint_eq(etl_kstack_frame_at(&k.u.stack, 1), hi + 0x100010);
            ck_assert_uint_eq(etl_kstack_frame_at(&k.u.stack, 2), 0x999999);
            ck_assert_uint_eq(etl_kstack_frame_at(&k.u.stack, 3), 0);
            break;
        case R_KEY:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_STACK_KEY);
            ck_assert_str_eq(k.name, "StackWalk/StackKeyUser");
            ck_assert_int_eq(k.u.stack.event_timestamp, 2000032);
            ck_assert_uint_eq(k.u.stack.pid, 100);
            ck_assert_uint_eq(k.u.stack.tid, 1000);
            ck_assert_uint_eq(k.u.stack.stack_key, 0xCAFE);
            ck_assert_uint_eq(k.u.stack.frame_count, 0);
            break;
        case R_KEYDEF:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_STACK_KEY_DEF);
            ck_assert_str_eq(k.name, "StackWalk/KeyRundown");
            ck_assert_uint_eq(k.u.stack.stack_key, 0xCAFE);
            ck_assert_uint_eq(k.u.stack.frame_count, 2);
            ck_assert_uint_eq(etl_kstack_frame_at(&k.u.stack, 1), 0x402000);
            break;
        case R_MASKS: case R_MASKS_END:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_GROUP_MASKS);
            ck_assert_str_eq(k.name, i == R_MASKS ? "EventTrace/Extension" : "EventTrace/EndExtension");
            for (uint32_t j = 0; j < 8; j++) ck_assert_uint_eq(k.u.group_masks.masks[j], (i == R_MASKS ? 0x100 : 0x200) + j);
            ck_assert_uint_eq(k.u.group_masks.kernel_version, i == R_MASKS ? 80 : 0);
            break;
        case R_RUNDOWN:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_RUNDOWN_COMPLETE);
            ck_assert_str_eq(k.name, "EventTrace/RDComplete");
            break;
        case R_LBR:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_LBR);
            ck_assert_str_eq(k.name, "LBR/Sample");
            ck_assert_uint_eq(k.u.lbr.pid, 100);
            ck_assert_uint_eq(k.u.lbr.count, 1);
            ck_assert_uint_eq(etl_lbr_entry_at(&k.u.lbr, 0).to, 0x402000);
            break;
        case R_DISK_READ3: {
            etl_kdisk_io *d = &k.u.disk_io;
            ck_assert_int_eq(k.kclass, ETL_KCLASS_DISK_IO);
            ck_assert_str_eq(k.name, "DiskIO/Read");
            ck_assert_uint_eq(d->disk_number, 2);
            ck_assert_uint_eq(d->irp_flags, 0x60100);
            ck_assert_uint_eq(d->transfer_size, 4096);
            ck_assert_int_eq(d->byte_offset, 0x12345000);
            ck_assert_uint_eq(d->file_object, hi + 0x5550);
            ck_assert_uint_eq(d->irp, hi + 0x6660);
            ck_assert_uint_eq(d->high_res_response_time, 250000);
            ck_assert_uint_eq(d->issuing_tid, 4242);
            break;
        }
        case R_DISK_WRITE2:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_DISK_IO);
            ck_assert_str_eq(k.name, "DiskIO/Write");
            ck_assert_uint_eq(k.u.disk_io.transfer_size, 512);
            ck_assert_int_eq(k.u.disk_io.byte_offset, 1024);
            ck_assert_uint_eq(k.u.disk_io.irp, hi + 0x7770);
            ck_assert_uint_eq(k.u.disk_io.high_res_response_time, 99);
            ck_assert_uint_eq(k.u.disk_io.issuing_tid, 0);
            break;
        case R_DISK_INIT3: case R_DISK_INIT2:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_DISK_IO_INIT);
            ck_assert_str_eq(k.name, i == R_DISK_INIT3 ? "DiskIO/WriteInit" : "DiskIO/FlushInit");
            ck_assert_uint_eq(k.u.disk_io.irp, hi + (i == R_DISK_INIT3 ? 0x6660 : 0x8880));
            ck_assert_uint_eq(k.u.disk_io.issuing_tid, i == R_DISK_INIT3 ? 4242 : 0);
            break;
        case R_DISK_FLUSH3:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_DISK_IO);
            ck_assert_str_eq(k.name, "DiskIO/FlushBuffers");
            ck_assert_uint_eq(k.u.disk_io.disk_number, 1);
            ck_assert_uint_eq(k.u.disk_io.irp_flags, 4);
            ck_assert_uint_eq(k.u.disk_io.high_res_response_time, 777);
            ck_assert_uint_eq(k.u.disk_io.irp, hi + 0x8880);
            ck_assert_uint_eq(k.u.disk_io.issuing_tid, 4343);
            ck_assert_uint_eq(k.u.disk_io.transfer_size, 0);
            break;
        case R_SYSCALL_ENTER:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_SYSCALL_ENTER);
            ck_assert_str_eq(k.name, "PerfInfo/SysClEnter");
            ck_assert_uint_eq(k.u.syscall.address, hi + 0x123450);
            break;
        case R_SYSCALL_EXIT:
            ck_assert_int_eq(k.kclass, ETL_KCLASS_SYSCALL_EXIT);
            ck_assert_str_eq(k.name, "PerfInfo/SysClExit");
            ck_assert_uint_eq(k.u.syscall.nt_status, 0xC0000034);
            break;
        }
        i++;
    }
    ck_assert_int_eq(i, R_COUNT);
    etl_reader_close(r);
    free(file);
}

START_TEST(classes_64) { check_classes(8); }
END_TEST
START_TEST(classes_32) { check_classes(4); }
END_TEST

/* Every record cut short byte by byte, its payload in a buffer of exactly that size (so ASan
   sees any read past it): below its fixed part ETL_FAILED, never a crash, and every string
   inside the payload. */
static void check_truncated(unsigned ptr)
{
    struct rec recs[R_COUNT] = { { { 0 }, 0, 0, 0 } };
    size_t size;
    uint8_t *file = synth_file(ptr, &size, recs);
    etl_reader *r = NULL;
    etl_event ev;
    int i = -1;

    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        uint32_t min, unit;
        if (ev.hook_id == 0x0050) continue; /* PartitionInfoExtension, not decoded */
        min = i < 0 ? (ptr == 8 ? 0x118 : 0x110) : recs[i].min;
        unit = i < 0 ? 0 : recs[i].unit;
        for (uint32_t cut = 0; cut <= ev.payload_len; cut++) {
            etl_event t = ev;
            etl_kernel_event k;
            uint8_t *copy = malloc(cut ? cut : 1);
            int rc;
            memcpy(copy, ev.payload, cut);
            t.payload = copy;
            t.payload_len = cut;
            rc = etl_kernel_decode(&t, &k);
            if (cut < min || (unit && (cut - min) % unit)) ck_assert_msg(rc == ETL_FAILED, "record %d cut at %u of %u: %d", i, cut, ev.payload_len, rc);
            else ck_assert_msg(rc == 1, "record %d cut at %u of %u: %d", i, cut, ev.payload_len, rc);
            if (rc == 1 && k.kclass == ETL_KCLASS_PROCESS) {
                const etl_string *s[] = { &k.u.process.image_file_name, &k.u.process.command_line,
                                          &k.u.process.package_full_name, &k.u.process.application_id };
                for (int j = 0; j < 4; j++)
                    if (s[j]->data) ck_assert(s[j]->data >= copy && s[j]->data + s[j]->size <= copy + cut);
            }
            free(copy);
        }
        i++;
    }
    ck_assert_int_eq(i, R_COUNT);
    etl_reader_close(r);
    free(file);
}

START_TEST(truncated_64) { check_truncated(8); }
END_TEST
START_TEST(truncated_32) { check_truncated(4); }
END_TEST

START_TEST(malformed_frames_and_sids)
{
    uint8_t pl[64];
    etl_event ev;
    etl_kernel_event k;

    memset(&ev, 0, sizeof ev);
    memset(pl, 0, sizeof pl);
    ev.kind = ETL_KIND_PERFINFO;
    ev.pointer_size = 8;
    ev.payload = pl;
    /* A stack whose frames do not fill whole words. */
    ev.hook_id = 0x1820;
    ev.payload_len = 16 + 8 + 3;
    ck_assert_int_eq(etl_kernel_decode(&ev, &k), ETL_FAILED);
    ck_assert_int_eq(k.kclass, ETL_KCLASS_STACK);
    /* A process whose SID claims more sub-authorities than the record holds. */
    ev.hook_id = 0x0303;
    ev.version = 2;
    pl[24] = 1;        /* TOKEN_USER present */
    pl[24 + 16 + 1] = 15; /* 15 sub-authorities: 68 bytes */
    ev.payload_len = 64;
    ck_assert_int_eq(etl_kernel_decode(&ev, &k), ETL_FAILED);
    /* Not a kernel class, or not a kernel header. */
    ev.hook_id = 0x0B0F;
    ck_assert_int_eq(etl_kernel_decode(&ev, &k), 0);
    ck_assert_int_eq(k.kclass, ETL_KCLASS_NONE);
    ev.hook_id = 0x0303;
    ev.kind = ETL_KIND_EVENT;
    ck_assert_int_eq(etl_kernel_decode(&ev, &k), 0);
    ck_assert_str_eq(etl_kclass_name(ETL_KCLASS_SAMPLED_PROFILE), "sampled_profile");
    ck_assert_str_eq(etl_kclass_name(ETL_KCLASS_NONE), "none");
    ck_assert_str_eq(etl_kclass_name(99), "unknown");
}
END_TEST

START_TEST(strings_to_utf8)
{
    static const uint8_t u16[] = { 'A', 0, 0x3D, 0xD8, 0x00, 0xDE, 0x00, 0xD8, 'B', 0, 0xE9, 0 }; /* A 😀 ? B é */
    static const uint8_t cp[] = { 'x', 0x80, 0xE9 };
    static const uint8_t u8[] = { 'x', 0xC3, 0xA9 };
    etl_string s = { u16, sizeof u16, 1 };
    char out[32];

    ck_assert_uint_eq(etl_string_to_utf8(&s, out, sizeof out), 11);
    ck_assert_str_eq(out, "A\xF0\x9F\x98\x80\xEF\xBF\xBD" "B\xC3\xA9");
    /* Cut at a character boundary; the whole length returned. */
    ck_assert_uint_eq(etl_string_to_utf8(&s, out, 4), 11);
    ck_assert_str_eq(out, "A");
    ck_assert_uint_eq(etl_string_to_utf8(&s, NULL, 0), 11);
    s.data = cp; s.size = sizeof cp; s.utf16 = 0;
    ck_assert_uint_eq(etl_string_to_utf8(&s, out, sizeof out), 6);
    ck_assert_str_eq(out, "x\xE2\x82\xAC\xC3\xA9");
    s.data = u8; s.size = sizeof u8;
    ck_assert_uint_eq(etl_string_to_utf8(&s, out, sizeof out), 3);
    ck_assert_str_eq(out, "x\xC3\xA9");
    s.data = NULL; s.size = 0;
    ck_assert_uint_eq(etl_string_to_utf8(&s, out, sizeof out), 0);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(sid_text)
{
    static const uint8_t sid[] = { 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
    static const uint8_t big[] = { 1, 0, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC };
    char out[64];

    ck_assert_str_eq(etl_sid_format(sid, sizeof sid, out, sizeof out), "S-1-5-18");
    ck_assert_str_eq(etl_sid_format(sid, sizeof sid - 1, out, sizeof out), "");
    ck_assert_str_eq(etl_sid_format(big, sizeof big, out, sizeof out), "S-1-0x123456789ABC");
    ck_assert_str_eq(etl_sid_format(sid, sizeof sid, out, 6), "");
}
END_TEST

/* ---- the diaghub sample ---- */

/* How many events of the expected table (independent parser) have this provider and an opcode in ops. */
static long expected_count(const char *provider, const int *ops, int nops)
{
    struct expected_event *rows;
    long n = test_read_expected(testdata_path("samples/expected/perfview_diaghub.kernel.1.events.tsv.gz"), &rows), c = 0;

    ck_assert_int_gt(n, 0);
    for (long i = 0; i < n; i++) {
        if (strcmp(rows[i].provider, provider) != 0) continue;
        for (int j = 0; j < nops; j++)
            if (rows[i].opcode == ops[j]) c++;
    }
    free(rows);
    return c;
}

START_TEST(diaghub_every_event)
{
    static const int process_ops[] = { 1, 2, 3, 4, 39 }, image_ops[] = { 2, 3, 4, 10 };
    etl_reader *r = NULL;
    etl_event ev;
    etl_kernel_event k;
    long counts[ETL_KCLASS_COUNT] = { 0 }, failed = 0, total = 0;
    int seen_system = 0, seen_load = 0;
    char text[512];

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(DIAGHUB), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        int rc = etl_kernel_decode(&ev, &k);
        total++;
        if (rc == ETL_FAILED) failed++;
        if (rc != 1) continue;
        counts[k.kclass]++;
        /* Buffer 8 (0x80000), record 0x118: 04 00 11 c0 5d 00 03 03 ... (PERFINFO64, v4, hook 0x0303). */
        if (ev.buffer_offset == 0x80000 && ev.record_offset == 0x118) {
            const etl_kprocess *p = &k.u.process;
            ck_assert_str_eq(k.name, "Process/DCStart");
            ck_assert_uint_eq(p->unique_process_key, 0xffffa804db26a1c0ull);
            ck_assert_uint_eq(p->pid, 4);
            ck_assert_uint_eq(p->parent_pid, 0);
            ck_assert_uint_eq(p->session_id, 0xFFFFFFFFu);
            ck_assert_int_eq(p->exit_status, 259);
            ck_assert_uint_eq(p->directory_table_base, 0x1aa000);
            ck_assert_uint_eq(p->flags, 4);
            sid_is(p, "S-1-5-18");
            str_is(&p->image_file_name, "System");
            str_is(&p->command_line, "");
            seen_system = 1;
        }
        /* File offset 0x36d78: SYSTEM64 v3 hook 0x030A, pid 0x85c, base 0x7ffd77a90000, size 0x1f5000. */
        if (ev.buffer_offset == 0x30000 && ev.record_offset == 0x6d78) {
            const etl_kimage *m = &k.u.image;
            ck_assert_str_eq(k.name, "Image/Load");
            ck_assert_uint_eq(m->image_base, 0x7ffd77a90000ull);
            ck_assert_uint_eq(m->image_size, 0x1f5000);
            ck_assert_uint_eq(m->pid, 2140);
            ck_assert_uint_eq(m->checksum, 0x1f3afa);
            ck_assert_uint_eq(m->time_date_stamp, 0x06701e03);
            ck_assert_uint_eq(m->default_base, 0x7ffd77a90000ull);
            etl_string_to_utf8(&m->file_name, text, sizeof text);
            ck_assert_str_eq(text, "\\Device\\HarddiskVolume1\\Windows\\System32\\ntdll.dll");
            seen_load = 1;
        }
        if (k.kclass == ETL_KCLASS_TRACE_HEADER) {
            const etl_trace_info *in = etl_reader_info(r);
            ck_assert_uint_eq(k.u.header.buffer_size, in->buffer_size);
            ck_assert_uint_eq(k.u.header.provider_version, in->os_build);
            ck_assert_uint_eq(k.u.header.number_of_processors, in->number_of_processors);
            ck_assert_uint_eq(k.u.header.pointer_size, in->pointer_size);
            ck_assert_uint_eq(k.u.header.log_file_mode, in->log_file_mode);
            ck_assert_int_eq(k.u.header.start_time, in->clock.start_time);
            ck_assert_int_eq(k.u.header.end_time, in->end_time);
            ck_assert_int_eq(k.u.header.boot_time, in->boot_time);
            ck_assert_int_eq(k.u.header.perf_freq, in->clock.perf_freq);
            ck_assert_uint_eq(k.u.header.clock_type, (uint32_t)in->clock.type);
            ck_assert_uint_eq(k.u.header.buffers_written, in->buffers_written);
            etl_string_to_utf8(&k.u.header.logger_name, text, sizeof text);
            ck_assert_str_eq(text, in->logger_name);
            etl_string_to_utf8(&k.u.header.log_file_name, text, sizeof text);
            ck_assert_str_eq(text, in->log_file_name);
        }
    }
    etl_reader_close(r);
    ck_assert_int_eq(total, 16335);
    ck_assert_int_eq(failed, 0);
    ck_assert(seen_system && seen_load);
    ck_assert_int_eq(counts[ETL_KCLASS_PROCESS], 476);
    ck_assert_int_eq(counts[ETL_KCLASS_PROCESS], expected_count("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c", process_ops, 5));
    ck_assert_int_eq(counts[ETL_KCLASS_IMAGE], 15434);
    ck_assert_int_eq(counts[ETL_KCLASS_IMAGE], expected_count("2cb15d1d-5fc1-11d2-abe1-00a0c911f518", image_ops, 4));
    /* The file holds no Thread, SampledProfile, StackWalk or LBR events at all. */
    ck_assert_int_eq(expected_count("3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c", (const int[]){ 1, 2, 3, 4, 36, 50 }, 6), 0);
    ck_assert_int_eq(expected_count("ce1dbfb4-137e-4da6-87b0-3f59aa102cbc", (const int[]){ 46 }, 1), 0);
    ck_assert_int_eq(expected_count("def2fe46-7bd6-4b80-bd94-f57fe20d0ce3", (const int[]){ 32, 35, 36, 37, 38 }, 5), 0);
    ck_assert_int_eq(counts[ETL_KCLASS_THREAD] + counts[ETL_KCLASS_CSWITCH] + counts[ETL_KCLASS_READY_THREAD], 0);
    ck_assert_int_eq(counts[ETL_KCLASS_SAMPLED_PROFILE] + counts[ETL_KCLASS_LBR], 0);
    ck_assert_int_eq(counts[ETL_KCLASS_STACK] + counts[ETL_KCLASS_STACK_KEY] + counts[ETL_KCLASS_STACK_KEY_DEF], 0);
    ck_assert_int_eq(counts[ETL_KCLASS_TRACE_HEADER], 1);
    ck_assert_int_eq(counts[ETL_KCLASS_GROUP_MASKS], 8);
    ck_assert_int_eq(counts[ETL_KCLASS_RUNDOWN_COMPLETE], 4);
}
END_TEST

START_TEST(diaghub_image_map)
{
    etl_reader *r = NULL;
    etl_event ev;
    etl_image_map *m = etl_image_map_new();
    etl_image_info in;

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(DIAGHUB), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_image_map_add(m, &ev), ETL_OK);
    etl_reader_close(r);
    /* Image/DCEnd at 0x244d8 (PERFINFO64 v3 hook 0x1404): pid 4, base 0x778c0000, size 0x1a3000. */
    ck_assert_int_eq(etl_image_map_find(m, 4, 0x778c0000 + 0x1234, 13888506383, &in), 1);
    ck_assert_uint_eq(in.base, 0x778c0000);
    ck_assert_uint_eq(in.size, 0x1a3000);
    ck_assert_uint_eq(in.pid, 4);
    ck_assert_str_eq(in.file_name, "\\Device\\HarddiskVolume1\\Windows\\SysWOW64\\ntdll.dll");
    ck_assert_str_eq(in.base_name, "ntdll.dll");
    ck_assert_int_eq(in.unload_timestamp, INT64_MAX);
    ck_assert_int_eq(in.load_timestamp, INT64_MIN);
    ck_assert_int_eq(etl_image_map_find(m, 4, 0x778c0000 + 0x1a3000, 13888506383, &in), 0);
    /* ntdll.dll in process 2140: loaded at 13789791806, unloaded at 13874886933. */
    ck_assert_int_eq(etl_image_map_find(m, 2140, 0x7ffd77a90000ull + 0x100, 13800000000, &in), 1);
    ck_assert_int_eq(in.load_timestamp, 13789791806);
    ck_assert_int_eq(in.unload_timestamp, 13874886933);
    ck_assert_int_eq(etl_image_map_find(m, 2140, 0x7ffd77a90000ull + 0x100, 13789791805, &in), 0);
    ck_assert_int_eq(etl_image_map_find(m, 2140, 0x7ffd77a90000ull + 0x100, 13874886933, &in), 0);
    /* A kernel address of any process: ntoskrnl.exe, a DCStart image of process 0. */
    ck_assert_int_eq(etl_image_map_find(m, 2140, 0xfffff8016aa00000ull + 0x5000, 13800000000, &in), 1);
    ck_assert_str_eq(in.base_name, "ntoskrnl.exe");
    ck_assert_uint_eq(in.pid, 0);
    etl_image_map_free(m);
}
END_TEST

/* A real 32-bit logfile header (perfview_smallEtlFile.etl: SYSTEM32, 0x110-byte form): every
   field as the reader's own parse of the header buffer has it. */
START_TEST(header_32bit_sample)
{
    etl_reader *r = NULL;
    etl_event ev;
    etl_kernel_event k;
    const etl_trace_info *in;
    char text[256];

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_smallEtlFile.etl"), NULL), ETL_OK);
    in = etl_reader_info(r);
    ck_assert_int_eq(etl_reader_next(r, &ev), ETL_OK);
    ck_assert_int_eq(ev.pointer_size, 4);
    ck_assert_int_eq(etl_kernel_decode(&ev, &k), 1);
    ck_assert_int_eq(k.kclass, ETL_KCLASS_TRACE_HEADER);
    ck_assert_uint_eq(k.u.header.pointer_size, 4);
    ck_assert_uint_eq(k.u.header.buffer_size, in->buffer_size);
    ck_assert_uint_eq(k.u.header.version[0], in->os_major);
    ck_assert_uint_eq(k.u.header.version[1], in->os_minor);
    ck_assert_uint_eq(k.u.header.version[2], in->layout_major);
    ck_assert_uint_eq(k.u.header.version[3], in->layout_minor);
    ck_assert_uint_eq(k.u.header.provider_version, in->os_build);
    ck_assert_uint_eq(k.u.header.number_of_processors, in->number_of_processors);
    ck_assert_int_eq(k.u.header.end_time, in->end_time);
    ck_assert_uint_eq(k.u.header.timer_resolution, in->timer_resolution);
    ck_assert_uint_eq(k.u.header.maximum_file_size, in->maximum_file_size);
    ck_assert_uint_eq(k.u.header.log_file_mode, in->log_file_mode);
    ck_assert_uint_eq(k.u.header.buffers_written, in->buffers_written);
    ck_assert_uint_eq(k.u.header.events_lost, in->events_lost);
    ck_assert_uint_eq(k.u.header.cpu_speed_mhz, in->clock.cpu_speed_mhz);
    ck_assert_int_eq(k.u.header.timezone_bias, in->timezone_bias);
    ck_assert_int_eq(k.u.header.timezone_bias, 480);
    ck_assert_int_eq(k.u.header.boot_time, in->boot_time);
    ck_assert_int_eq(k.u.header.perf_freq, in->clock.perf_freq);
    ck_assert_int_eq(k.u.header.perf_freq, 3117777);
    ck_assert_int_eq(k.u.header.start_time, in->clock.start_time);
    ck_assert_uint_eq(k.u.header.clock_type, (uint32_t)in->clock.type);
    ck_assert_uint_eq(k.u.header.buffers_lost, in->buffers_lost);
    etl_string_to_utf8(&k.u.header.logger_name, text, sizeof text);
    ck_assert_str_eq(text, "PerfWatsonGCHeapETLSession688");
    etl_string_to_utf8(&k.u.header.log_file_name, text, sizeof text);
    ck_assert_str_eq(text, in->log_file_name);
    etl_reader_close(r);
}
END_TEST

/* Every sample: no kernel event fails to decode, and the logfile header event agrees with the
   reader's parse of the header (32- and 64-bit, kernel and user sessions, relogged files). */
START_TEST(every_sample_decodes)
{
    DIR *d = opendir(testdata_path("samples"));
    struct dirent *de;
    int files = 0;

    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d)) != NULL) {
        char rel[300];
        etl_reader *r = NULL;
        etl_event ev;
        etl_kernel_event k;
        int headers = 0;
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".etl") != 0) continue;
        snprintf(rel, sizeof rel, "samples/%s", de->d_name);
        ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(rel), NULL), ETL_OK);
        while (etl_reader_next(r, &ev) == ETL_OK) {
            int rc = etl_kernel_decode(&ev, &k);
            ck_assert_msg(rc != ETL_FAILED, "%s: hook 0x%04x v%u len %u failed", rel, ev.hook_id, ev.version,
                          ev.payload_len);
            if (rc == 1 && k.kclass == ETL_KCLASS_TRACE_HEADER) {
                ck_assert_uint_eq(k.u.header.buffer_size, etl_reader_info(r)->buffer_size);
                ck_assert_uint_eq(k.u.header.pointer_size, etl_reader_info(r)->pointer_size);
                ck_assert_int_eq(k.u.header.start_time, etl_reader_info(r)->clock.start_time);
                headers++;
            }
        }
        ck_assert_msg(headers == 1, "%s: %d header events", rel, headers);
        etl_reader_close(r);
        files++;
    }
    closedir(d);
    ck_assert_int_ge(files, 14);
}
END_TEST

/* ---- the image map on synthetic events ---- */

static etl_event image_event(uint8_t *buf, unsigned ptr, uint16_t hook, int64_t ts, uint32_t pid, uint64_t base,
                             uint64_t size, const char *name)
{
    struct synth_payload p;
    etl_event ev;

    sp_init(&p, ptr);
    spp(&p, base); spp(&p, size); sp32(&p, pid); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); spp(&p, 0);
    sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp_str16(&p, name);
    memcpy(buf, p.b, p.n);
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_KIND_PERFINFO;
    ev.pointer_size = (uint8_t)ptr;
    ev.hook_id = hook;
    ev.opcode = (uint8_t)hook;
    ev.version = 3;
    ev.timestamp = ts;
    ev.payload = buf;
    ev.payload_len = p.n;
    return ev;
}

static void add_image(etl_image_map *m, unsigned ptr, uint16_t hook, int64_t ts, uint32_t pid, uint64_t base,
                      uint64_t size, const char *name)
{
    uint8_t buf[512];
    etl_event ev = image_event(buf, ptr, hook, ts, pid, base, size, name);
    ck_assert_int_eq(etl_image_map_add(m, &ev), ETL_OK);
}

static void add_small(etl_image_map *m, unsigned ptr, uint16_t hook, int64_t ts, uint32_t a, uint32_t b)
{
    uint8_t buf[128];
    struct synth_payload p;
    etl_event ev;

    sp_init(&p, ptr);
    if (hook >> 8 == 5) { /* Thread v2: pid a, tid b */
        sp32(&p, a); sp32(&p, b);
        for (int i = 0; i < 7; i++) spp(&p, 0);
        sp32(&p, 0);
    } else { /* Process v2: pid a */
        spp(&p, 0); sp32(&p, a); sp32(&p, b); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp_str8(&p, "x"); sp_str16(&p, "");
    }
    memcpy(buf, p.b, p.n);
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_KIND_SYSTEM;
    ev.pointer_size = (uint8_t)ptr;
    ev.hook_id = hook;
    ev.opcode = (uint8_t)hook;
    ev.version = 2;
    ev.timestamp = ts;
    ev.payload = buf;
    ev.payload_len = p.n;
    ck_assert_int_eq(etl_image_map_add(m, &ev), ETL_OK);
}

static const char *found(etl_image_map *m, uint32_t pid, uint64_t addr, int64_t ts)
{
    static etl_image_info in;
    return etl_image_map_find(m, pid, addr, ts, &in) == 1 ? in.base_name : NULL;
}

START_TEST(map_time_and_reuse)
{
    etl_image_map *m = etl_image_map_new();
    etl_image_info in;

    /* Fed out of order on purpose: the map sorts on its first lookup. */
    add_image(m, 8, 0x1402, 500, 10, 0x10000, 0x1000, "\\x\\a.dll");       /* a.dll unloaded at 500 */
    add_image(m, 8, 0x030A, 600, 10, 0x10000, 0x2000, "\\x\\b.dll");       /* b.dll reuses the address */
    add_image(m, 8, 0x030A, 100, 10, 0x10000, 0x1000, "\\x\\a.dll");       /* a.dll loaded at 100 */
    add_image(m, 8, 0x1403, 1, 10, 0x7000000, 0x100000, "\\x\\app.exe");   /* since before the trace */
    add_image(m, 8, 0x1404, 900, 10, 0x7000000, 0x100000, "\\x\\app.exe"); /* ... and at its end: one image */
    add_image(m, 8, 0x1403, 1, 0, 0xFFFFF80000000000ull, 0x800000, "\\SystemRoot\\ntoskrnl.exe");
    add_image(m, 8, 0x1404, 900, 20, 0x30000, 0x1000, "c:/y/c.dll");        /* DCEnd only */
    add_image(m, 8, 0x030A, 50, 30, 0x40000, 0x1000, "d.dll");              /* process 30 ends at 300 */
    add_small(m, 8, 0x0302, 300, 30, 4);
    add_small(m, 8, 0x0501, 200, 10, 77);  /* thread 77 of process 10 from 200 ... */
    add_small(m, 8, 0x0502, 400, 10, 77);  /* ... to 400 */
    add_small(m, 8, 0x0501, 450, 20, 77);  /* then reused by process 20 */
    add_small(m, 8, 0x0503, 1, 30, 88);    /* thread 88 running when the trace began */

    ck_assert_ptr_null(found(m, 10, 0x10010, 99));
    ck_assert_str_eq(found(m, 10, 0x10010, 100), "a.dll");
    ck_assert_str_eq(found(m, 10, 0x10FFF, 499), "a.dll");
    ck_assert_ptr_null(found(m, 10, 0x11000, 499));  /* past a.dll's end */
    ck_assert_ptr_null(found(m, 10, 0x10010, 500));  /* unloaded */
    ck_assert_ptr_null(found(m, 10, 0x10010, 599));
    ck_assert_str_eq(found(m, 10, 0x11000, 600), "b.dll");
    ck_assert_int_eq(etl_image_map_find(m, 10, 0x11000, 2000, &in), 1);
    ck_assert_int_eq(in.load_timestamp, 600);
    ck_assert_int_eq(in.unload_timestamp, INT64_MAX);
    ck_assert_int_eq(etl_image_map_find(m, 10, 0x7000100, -5, &in), 1);
    ck_assert_str_eq(in.file_name, "\\x\\app.exe");
    ck_assert_int_eq(in.load_timestamp, INT64_MIN);
    ck_assert_int_eq(in.unload_timestamp, INT64_MAX);
    ck_assert_ptr_null(found(m, 11, 0x7000100, 10)); /* another process */
    /* Kernel addresses resolve in process 0 whatever the process. */
    ck_assert_str_eq(found(m, 10, 0xFFFFF80000001234ull, 10), "ntoskrnl.exe");
    ck_assert_str_eq(found(m, 12345, 0xFFFFF80000001234ull, 10), "ntoskrnl.exe");
    ck_assert_ptr_null(found(m, 10, 0xFFFFF80000800000ull, 10));
    /* DCEnd alone: loaded before the trace, still loaded at its end. */
    ck_assert_str_eq(found(m, 20, 0x30001, INT64_MIN + 1), "c.dll");
    /* A process's end unloads its images. */
    ck_assert_str_eq(found(m, 30, 0x40000, 299), "d.dll");
    ck_assert_ptr_null(found(m, 30, 0x40000, 300));
    /* Threads. */
    ck_assert_int_eq(etl_image_map_thread_pid(m, 77, 199), -1);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 77, 200), 10);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 77, 400), 10);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 77, 420), -1);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 77, 450), 20);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 88, 0), 30);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 88, 5000), 30);
    ck_assert_int_eq(etl_image_map_thread_pid(m, 99, 5), -1);
    /* Events added after a lookup are taken in on the next. */
    add_image(m, 8, 0x030A, 700, 10, 0x90000, 0x1000, "late.dll");
    ck_assert_str_eq(found(m, 10, 0x90000, 701), "late.dll");
    etl_image_map_free(m);
}
END_TEST

START_TEST(map_32bit_kernel_addresses)
{
    etl_image_map *m = etl_image_map_new();

    add_image(m, 4, 0x1403, 1, 0, 0x80400000, 0x400000, "\\SystemRoot\\system32\\ntkrnlpa.exe");
    add_image(m, 4, 0x1403, 1, 4, 0x8a000000, 0x10000, "\\SystemRoot\\system32\\drivers\\x.sys");
    add_image(m, 4, 0x030A, 10, 50, 0x400000, 0x10000, "a.exe");
    ck_assert_str_eq(found(m, 50, 0x80400010, 20), "ntkrnlpa.exe");
    ck_assert_str_eq(found(m, 50, 0x8a000010, 20), "x.sys");   /* pid 4's images too */
    ck_assert_str_eq(found(m, 50, 0x400010, 20), "a.exe");
    ck_assert_ptr_null(found(m, 50, 0x80000000, 20));
    etl_image_map_free(m);
    /* In a 64-bit map the upper 2 GB of 32-bit space are user space (WOW64). */
    m = etl_image_map_new();
    add_image(m, 8, 0x030A, 10, 50, 0x80400000, 0x10000, "wow.dll");
    add_image(m, 8, 0x1403, 1, 0, 0x80400000, 0x400000, "not-this.exe");
    ck_assert_str_eq(found(m, 50, 0x80400010, 20), "wow.dll");
    etl_image_map_free(m);
}
END_TEST

/* A map of many images answers as a sorted table does (and quickly: a linear scan per lookup over
   20000 images and 20000 lookups would be 4e8 steps). */
START_TEST(map_many_images)
{
    etl_image_map *m = etl_image_map_new();
    etl_image_info in;

    for (uint32_t i = 0; i < 20000; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%u.dll", i);
        add_image(m, 8, 0x1404, 5, 100 + i % 20, 0x100000ull * (i + 1), 0x10000, name);
        add_image(m, 8, 0x1403, 1, 100 + i % 20, 0x100000ull * (i + 1), 0x10000, name); /* merges */
    }
    for (uint32_t i = 0; i < 20000; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%u.dll", i);
        ck_assert_int_eq(etl_image_map_find(m, 100 + i % 20, 0x100000ull * (i + 1) + 0xFFFF, 3, &in), 1);
        ck_assert_str_eq(in.base_name, name);
        ck_assert_int_eq(in.load_timestamp, INT64_MIN);
        ck_assert_int_eq(in.unload_timestamp, INT64_MAX);
        ck_assert_int_eq(etl_image_map_find(m, 100 + (i + 1) % 20, 0x100000ull * (i + 1), 3, &in), 0);
    }
    etl_image_map_free(m);
}
END_TEST

static Suite *kernel_suite(void)
{
    Suite *s = suite_create("kernel");
    TCase *tc = tcase_create("decode");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, classes_64);
    tcase_add_test(tc, classes_32);
    tcase_add_test(tc, truncated_64);
    tcase_add_test(tc, truncated_32);
    tcase_add_test(tc, malformed_frames_and_sids);
    tcase_add_test(tc, strings_to_utf8);
    tcase_add_test(tc, sid_text);
    tcase_add_test(tc, diaghub_every_event);
    tcase_add_test(tc, header_32bit_sample);
    tcase_add_test(tc, every_sample_decodes);
    suite_add_tcase(s, tc);
    tc = tcase_create("image_map");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, diaghub_image_map);
    tcase_add_test(tc, map_time_and_reuse);
    tcase_add_test(tc, map_32bit_kernel_addresses);
    tcase_add_test(tc, map_many_images);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(kernel_suite());
}
