/* SPDX-License-Identifier: MIT */
/*
 * mkkernel: writes a small kernel trace whose every event tests/etl2sqlite.test knows, for one
 * pointer size:  mkkernel 32|64 OUT.etl
 *
 * The story, in time order (raw clock 10 MHz; every event on processor 0 unless said):
 *   Process DCStart 4 "System" (S-1-5-18); Process Start 1000 "app.exe" "app.exe -x"
 *   Thread DCStart 8 (pid 4); Thread Start 4001 (pid 1000)
 *   Image DCStart ntoskrnl.exe in pid 0 (kernel half); Image Load app.exe and ntdll.dll in 1000
 *   SampledProfile tid 4001 at app.exe+0x123, then its StackWalk (kernel, ntdll, app frames)
 *   SampledProfile tid 4001 at ntoskrnl.exe+0x5000 (processor 1), then the same StackWalk
 *   SampledProfile tid 4001 at an address no image holds
 *   CSwitch new 4001 old 0 (wait reason 6, state 5); ReadyThread 4001 (reason 1, increment 2)
 *   stack key reference (user) 0xCAFE, and its definition (KeyRundown) with two frames
 *   LBR: two branches app.exe+0x40 -> ntdll.dll+0x50, app.exe+0x60 -> app.exe+0x70
 *   an EVENT_HEADER event of pid 1000 / tid 4001 with a STACK_TRACE item (app, ntdll)
 *   Image Unload ntdll.dll; SampledProfile at the address ntdll.dll had: no image now
 *   Process End 1000 (exit status 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static struct synth *s;
static int w;
static int64_t ts = 2000000;
static uint8_t rec[4096];

static void add(unsigned cpu, uint32_t n)
{
    if (synth_add(s, cpu, rec, n) != 0) {
        fprintf(stderr, "mkkernel: a record does not fit\n");
        exit(1);
    }
}

static void process(unsigned ptr, uint16_t hook, uint32_t pid, uint32_t ppid, int32_t exit_status, int sid,
                    const char *name, const char *cmd)
{
    struct synth_payload p;

    sp_init(&p, ptr);
    spp(&p, (ptr == 8 ? 0xFFFFA00000000000ull : 0x85000000ull) + pid);
    sp32(&p, pid); sp32(&p, ppid); sp32(&p, 1); sp32(&p, (uint32_t)exit_status);
    spp(&p, 0x1AA000); sp32(&p, 0);
    if (sid) { /* TOKEN_USER, then S-1-5-18 */
        spp(&p, 0x1234); spp(&p, 0);
        sp8(&p, 1); sp8(&p, 1); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0); sp8(&p, 5); sp32(&p, 18);
    }
    else sp32(&p, 0);
    sp_str8(&p, name); sp_str16(&p, cmd); sp_str16(&p, ""); sp_str16(&p, "");
    add(0, synth_system(rec, w, 0, ts++, hook, 4, pid, 0, p.b, p.n));
}

static void thread(unsigned ptr, uint16_t hook, uint32_t pid, uint32_t tid)
{
    struct synth_payload p;

    sp_init(&p, ptr);
    sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0); sp8(&p, 8); sp8(&p, 5); sp8(&p, 2); sp8(&p, 0);
    add(0, synth_system(rec, w, 0, ts++, hook, 3, pid, tid, p.b, p.n));
}

static void image(unsigned ptr, uint16_t hook, uint32_t pid, uint64_t base, uint64_t size, const char *file)
{
    struct synth_payload p;

    sp_init(&p, ptr);
    spp(&p, base); spp(&p, size); sp32(&p, pid); sp32(&p, 0xABCD); sp32(&p, 0x5F000000);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, base); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, file);
    add(0, synth_system(rec, w, 0, ts++, hook, 3, pid, 0, p.b, p.n));
}

static void sample(unsigned ptr, unsigned cpu, uint64_t ip, uint32_t tid)
{
    struct synth_payload p;

    sp_init(&p, ptr);
    spp(&p, ip); sp32(&p, tid); sp16(&p, 1); sp8(&p, 0x40); sp8(&p, 0);
    add(cpu, synth_perfinfo(rec, w, ts, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n));
}

static void stack(unsigned ptr, unsigned cpu, int64_t event_ts, uint32_t pid, uint32_t tid, const uint64_t *frames,
                  unsigned n)
{
    struct synth_payload p;

    sp_init(&p, ptr);
    sp64(&p, (uint64_t)event_ts); sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 0; i < n; i++) spp(&p, frames[i]);
    add(cpu, synth_perfinfo(rec, w, event_ts, 0x1820, 2, NULL, NULL, 0, p.b, p.n));
}

int main(int argc, char **argv)
{
    struct synth_options o;
    struct synth_payload p;
    unsigned ptr;
    uint64_t kbase, app = 0x400000, ntdll = 0x7FF00000;
    uint8_t *file;
    size_t size;
    FILE *f;

    if (argc != 3 || (strcmp(argv[1], "32") != 0 && strcmp(argv[1], "64") != 0)) {
        fprintf(stderr, "Usage: mkkernel 32|64 OUT.etl\n");
        return 2;
    }
    ptr = argv[1][0] == '6' ? 8 : 4;
    w = ptr == 8;
    kbase = ptr == 8 ? 0xFFFFF80000000000ull : 0x80400000ull;
    memset(&o, 0, sizeof o);
    o.pointer_size = ptr;
    o.cpus = 2;
    o.buffer_size = 8192;
    o.start_timestamp = 1999999;
    o.logger_name = "NT Kernel Logger";
    s = synth_new(&o);
    if (!s) return 1;

    process(ptr, 0x0303, 4, 0, 0, 1, "System", "");
    process(ptr, 0x0301, 1000, 4, 0, 0, "app.exe", "app.exe -x");
    thread(ptr, 0x0503, 4, 8);
    thread(ptr, 0x0501, 1000, 4001);
    image(ptr, 0x1403, 0, kbase, 0x1000000, "\\SystemRoot\\system32\\ntoskrnl.exe");
    image(ptr, 0x030A, 1000, app, 0x10000, "\\Device\\HarddiskVolume2\\app\\app.exe");
    image(ptr, 0x030A, 1000, ntdll, 0x100000, "\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll");
    {
        uint64_t frames[3] = { kbase + 0x10, ntdll + 0x20, app + 0x30 };
        int64_t t1 = ++ts;
        sample(ptr, 0, app + 0x123, 4001);
        stack(ptr, 0, t1, 1000, 4001, frames, 3);
        ts += 10;
        t1 = ts;
        sample(ptr, 1, kbase + 0x5000, 4001);
        stack(ptr, 1, t1, 1000, 4001, frames, 3);
        ts += 10;
        sample(ptr, 0, 0x12345678, 4001);
        ts++;
    }
    sp_init(&p, ptr);
    sp32(&p, 4001); sp32(&p, 0); sp8(&p, 9); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0); sp8(&p, 6); sp8(&p, 0); sp8(&p, 5); sp8(&p, 0);
    sp32(&p, 0); sp32(&p, 0);
    add(0, synth_perfinfo(rec, w, ts++, 0x0524, 4, NULL, NULL, 0, p.b, p.n));
    sp_init(&p, ptr);
    sp32(&p, 4001); sp8(&p, 1); sp8(&p, 2); sp8(&p, 0); sp8(&p, 0);
    add(0, synth_perfinfo(rec, w, ts++, 0x0532, 2, NULL, NULL, 0, p.b, p.n));
    sp_init(&p, ptr);
    sp64(&p, (uint64_t)ts - 1); sp32(&p, 1000); sp32(&p, 4001); spp(&p, 0xCAFE);
    add(0, synth_perfinfo(rec, w, ts++, 0x1826, 2, NULL, NULL, 0, p.b, p.n));
    sp_init(&p, ptr);
    spp(&p, 0xCAFE); spp(&p, app + 0x100); spp(&p, app + 0x200);
    add(0, synth_perfinfo(rec, w, ts++, 0x1824, 2, NULL, NULL, 0, p.b, p.n));
    sp_init(&p, ptr);
    sp64(&p, (uint64_t)ts); sp32(&p, 1000); sp32(&p, 4001); sp32(&p, 0x3);
    if (ptr == 8) sp32(&p, 0);
    spp(&p, app + 0x40); spp(&p, ntdll + 0x50); spp(&p, 0);
    spp(&p, app + 0x60); spp(&p, app + 0x70); spp(&p, 0);
    add(0, synth_perfinfo(rec, w, ts++, 0x0C20, 2, NULL, NULL, 0, p.b, p.n));
    {
        static const etl_guid provider = { 0x1b2c3d4e, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
        uint8_t item[64], data[40];
        struct synth_payload fr;
        uint32_t n;
        sp_init(&fr, ptr);
        sp64(&fr, 77); /* MatchId */
        spp(&fr, app + 0x300); spp(&fr, ntdll + 0x400);
        memcpy(data, fr.b, fr.n);
        n = synth_ext_item(item, ptr == 8 ? ETL_EXT_STACK_TRACE64 : ETL_EXT_STACK_TRACE32, data, (uint16_t)fr.n, 0);
        add(0, synth_event_header(rec, w, ts++, &provider, 7, 1, 4, 0, 0, 0, 1000, 4001, item, n, "hi", 2));
    }
    image(ptr, 0x1402, 1000, ntdll, 0x100000, "\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll");
    ts++;
    sample(ptr, 0, ntdll + 0x20, 4001);
    ts++;
    process(ptr, 0x0302, 1000, 4, 1, 0, "app.exe", "app.exe -x");

    file = synth_finish(s, &size);
    if (!file) return 1;
    f = fopen(argv[2], "wb");
    if (!f || fwrite(file, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "mkkernel: cannot write %s\n", argv[2]);
        free(file);
        return 1;
    }
    free(file);
    return 0;
}
