/* SPDX-License-Identifier: MIT */
/* The synthetic kernel trace of tests/kstory.h, built with tests/synth.c. */
#include <stdio.h>
#include <stdlib.h>

#include "kstory.h"
#include "synth.h"

static struct synth *s;
static uint8_t rec[4096];
static int failed;

static void add(unsigned cpu, uint32_t n)
{
    if (synth_add(s, cpu, rec, n) != 0) failed = 1;
}

/* A Process event (v4) on processor cpu: hook 0x0301 Start, 0x0302 End, 0x0303 DCStart, 0x0304 DCEnd. */
static void process_on(unsigned cpu, int64_t ts, uint16_t hook, uint32_t pid, uint32_t ppid, int32_t exit_status,
                       const char *name, const char *cmd)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, 0xFFFFA00000000000ull + pid);
    sp32(&p, pid); sp32(&p, ppid); sp32(&p, 1); sp32(&p, (uint32_t)exit_status);
    spp(&p, 0x1AA000); sp32(&p, 0);
    sp32(&p, 0); /* no SID */
    sp_str8(&p, name); sp_str16(&p, cmd); sp_str16(&p, ""); sp_str16(&p, "");
    add(cpu, synth_system(rec, 1, 0, ts, hook, 4, pid, 0, p.b, p.n));
}

static void process(int64_t ts, uint16_t hook, uint32_t pid, const char *name)
{
    process_on(0, ts, hook, pid, 4, 0, name, name);
}

/* A Thread event on processor cpu: hook 0x0501 Start, 0x0502 End; version 4 with a name. */
static void thread_on(unsigned cpu, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, const char *name)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0); sp8(&p, 8); sp8(&p, 5); sp8(&p, 2); sp8(&p, 0);
    if (name) sp_str16(&p, name);
    add(cpu, synth_system(rec, 1, 0, ts, hook, name ? 4 : 3, pid, tid, p.b, p.n));
}

static void thread(int64_t ts, uint32_t pid, uint32_t tid, const char *name)
{
    thread_on(0, ts, 0x0501, pid, tid, name);
}

/* SampledProfile of thread tid at ip. */
static void sample(int64_t ts, unsigned cpu, uint64_t ip, uint32_t tid)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, ip); sp32(&p, tid); sp16(&p, 1); sp8(&p, 0x40); sp8(&p, 0);
    add(cpu, synth_perfinfo(rec, 1, ts, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n));
}

static void cswitch(int64_t ts, unsigned cpu, uint32_t new_tid, uint32_t old_tid)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, new_tid); sp32(&p, old_tid);
    for (unsigned i = 0; i < 8; i++) sp8(&p, 0);
    sp32(&p, 0); sp32(&p, 0);
    add(cpu, synth_system(rec, 1, 1, ts, 0x0524, 2, 0, 0, p.b, p.n));
}

static void syscall_enter(int64_t ts, unsigned cpu, uint64_t address)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, address);
    add(cpu, synth_perfinfo(rec, 1, ts, 0x0F33, 2, NULL, NULL, 0, p.b, p.n));
}

static void syscall_exit(int64_t ts, unsigned cpu, uint32_t status)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, status);
    add(cpu, synth_perfinfo(rec, 1, ts, 0x0F34, 2, NULL, NULL, 0, p.b, p.n));
}

/* hook: 0x010C ReadInit, 0x010D WriteInit (Irp, IssuingThreadId). */
static void disk_init(int64_t ts, unsigned cpu, uint16_t hook, uint64_t irp)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, irp); sp32(&p, 4001); sp32(&p, 0);
    add(cpu, synth_perfinfo(rec, 1, ts, hook, 3, NULL, NULL, 0, p.b, p.n));
}

/* hook: 0x010A Read, 0x010B Write (DiskIo_TypeGroup1, version 3). */
static void disk_done(int64_t ts, unsigned cpu, uint16_t hook, uint64_t irp, uint32_t size)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, 2); sp32(&p, hook == 0x010A ? 0x100 : 0x200); sp32(&p, size); sp32(&p, 0); sp64(&p, 0x12345000);
    spp(&p, 0xFFFFB00000005550ull); spp(&p, irp); sp64(&p, 250000); sp32(&p, 4001); sp32(&p, 0);
    add(cpu, synth_perfinfo(rec, 1, ts, hook, 3, NULL, NULL, 0, p.b, p.n));
}

uint8_t *kstory_file(size_t *size)
{
    struct synth_options o = { 0 };
    int64_t t = KS_T0;

    o.logger_name = "NT Kernel Logger";
    s = synth_new(&o);
    if (!s) return NULL;
    failed = 0;
    process(t + 0, 0x0303, 4, "System");
    process(t + 1, 0x0301, 1000, "app.exe");
    thread(t + 2, 1000, 4001, "worker");
    thread(t + 3, 1000, 4002, NULL);
    syscall_enter(t + 4, 1, 0xFFFFF80000123450ull);
    cswitch(t + 5, 0, 4001, 0);
    cswitch(t + 6, 1, 0, 4002);
    syscall_enter(t + 7, 0, 0xFFFFF80000123450ull);
    syscall_exit(t + 8, 1, 0xC0000034u);
    disk_init(t + 9, 0, 0x010C, 0xA1);
    disk_init(t + 10, 0, 0x010D, 0xB2);
    disk_done(t + 11, 2, 0x010A, 0xA1, 4096);
    disk_done(t + 12, 0, 0x010B, 0xC3, 512);
    disk_done(t + 13, 0, 0x010A, 0xA1, 4096);
    disk_init(t + 14, 0, 0x010D, 0xB2);
    disk_done(t + 15, 0, 0x010B, 0xB2, 8192);
    thread(t + 16, 1000, 4001, "renamed");
    process(t + 17, 0x0302, 1000, "app.exe");
    process(t + 18, 0x0304, 1000, "app2.exe");
    process(t + 19, 0x0304, 2000, "late.exe");
    if (failed) {
        free(synth_finish(s, size));
        return NULL;
    }
    return synth_finish(s, size);
}

uint8_t *kstory_exec_file(size_t *size)
{
    struct synth_options o = { 0 };
    int64_t t = KS_T0;
    const char *rec_cmd = KSX_REC, *sh_cmd = KSX_SH, *demo_cmd = KSX_DEMO, *dd_cmd = KSX_DD;

    o.logger_name = "NT Kernel Logger";
    s = synth_new(&o);
    if (!s) return NULL;
    failed = 0;
    process_on(0, t + 0, 0x0303, 2990, 1, 259, "etlrecord", rec_cmd);
    process_on(0, t + 1, 0x0301, 3000, 2990, 259, "etlrecord", rec_cmd);
    thread_on(0, t + 2, 0x0501, 3000, 3000, NULL);
    cswitch(t + 3, 1, 3000, 0);
    syscall_enter(t + 4, 1, 0x3B);
    sample(t + 5, 1, 0x401000, 3000);
    process_on(1, t + 6, 0x0302, 3000, 2990, 0, "etlrecord", rec_cmd);
    process_on(1, t + 6, 0x0301, 3000, 2990, 259, "sh", sh_cmd);
    syscall_enter(t + 7, 1, 0x3B);
    process_on(1, t + 8, 0x0302, 3000, 2990, 0, "sh", sh_cmd);
    process_on(1, t + 8, 0x0301, 3000, 2990, 259, "demo", demo_cmd);
    cswitch(t + 9, 1, 0, 3000);
    cswitch(t + 10, 1, 3000, 0);
    syscall_enter(t + 11, 1, 0x01);
    sample(t + 12, 1, 0x402000, 3000);
    thread_on(0, t + 13, 0x0501, 3000, 3001, NULL);
    process_on(0, t + 14, 0x0301, 3002, 3000, 259, "demo", demo_cmd);
    thread_on(0, t + 15, 0x0501, 3002, 3002, NULL);
    cswitch(t + 16, 2, 3002, 0);
    process_on(2, t + 17, 0x0302, 3002, 3000, 0, "demo", demo_cmd);
    process_on(2, t + 17, 0x0301, 3002, 3000, 259, "dd", dd_cmd);
    syscall_enter(t + 18, 2, 0x00);
    syscall_exit(t + 19, 2, 0);
    thread_on(0, t + 20, 0x0502, 3000, 3001, NULL);
    thread_on(2, t + 21, 0x0502, 3002, 3002, NULL);
    process_on(2, t + 21, 0x0302, 3002, 3000, 0, "dd", dd_cmd);
    thread_on(1, t + 22, 0x0502, 3000, 3000, NULL);
    process_on(1, t + 22, 0x0302, 3000, 2990, 3, "demo", demo_cmd);
    process_on(0, t + 23, 0x0304, 2990, 1, 259, "etlrecord", rec_cmd);
    if (failed) {
        free(synth_finish(s, size));
        return NULL;
    }
    return synth_finish(s, size);
}

uint8_t *kstory_cpu_file(size_t *size)
{
    struct synth_options o = { 0 };
    int64_t t = KS_T0;

    o.logger_name = "NT Kernel Logger";
    s = synth_new(&o);
    if (!s) return NULL;
    failed = 0;
    process(t + 0, 0x0303, 0, "Idle");
    process(t + 1, 0x0303, 100, "a.exe");
    process(t + 2, 0x0303, 200, "b.exe");
    thread_on(0, t + 3, 0x0503, 0, 0, NULL);
    thread_on(0, t + 4, 0x0503, 100, 101, NULL);
    thread_on(0, t + 5, 0x0503, 100, 102, NULL);
    thread_on(0, t + 6, 0x0503, 200, 201, NULL);
    cswitch(t + 10, 0, 101, 0);
    cswitch(t + 12, 1, 102, 0);
    cswitch(t + 30, 0, 201, 101);
    cswitch(t + 35, 0, 101, 201);
    cswitch(t + 52, 1, 0, 102);
    cswitch(t + 60, 0, 0, 101);
    cswitch(t + 70, 1, 201, 0);
    process(t + 100, 0x0304, 200, "b.exe");
    if (failed) {
        free(synth_finish(s, size));
        return NULL;
    }
    return synth_finish(s, size);
}

static int write_file(const char *path, uint8_t *b, size_t size)
{
    FILE *f;
    int rc = -1;

    if (!b) return -1;
    f = fopen(path, "wb");
    if (f && fwrite(b, 1, size, f) == size) rc = 0;
    if (f && fclose(f) != 0) rc = -1;
    free(b);
    return rc;
}

int kstory_exec_write(const char *path)
{
    size_t size = 0;
    uint8_t *b = kstory_exec_file(&size);

    return write_file(path, b, size);
}

int kstory_write(const char *path)
{
    size_t size = 0;
    uint8_t *b = kstory_file(&size);

    return write_file(path, b, size);
}

int kstory_cpu_write(const char *path)
{
    size_t size = 0;
    uint8_t *b = kstory_cpu_file(&size);

    return write_file(path, b, size);
}
