/* SPDX-License-Identifier: MIT */
/*
 * mkfields: writes a small trace of network and process events, whose fields the worked examples
 * of doc/etl2sqlite-schema.md query (no bundled sample has such events):  mkfields OUT.etl
 *
 * In time order, 2.5 ms apart (64-bit, raw clock 10 MHz from 1 000 000, processor 0):
 *   Microsoft-Windows-Kernel-Process ProcessStart (id 1, version 1): 1000 "curl.exe" (parent 4),
 *     1001 "svc.exe" (parent 4)
 *   TcpIp Send (version 2): 1000 to 93.184.216.34:443, 517 and 1200 bytes; 1001 to
 *     10.0.0.5:8080, 300 bytes three times
 *   TcpIp Recv: 1000 from 93.184.216.34:443, 1460, 1460 and 800 bytes
 *   TcpIp SendIPV6: 1001 to [2001:db8::1]:53, 64 bytes; RecvIPV6: 1001 from it, 128 bytes
 *   ProcessStop (id 2, version 1): 1000 (exit code 0), 1001 (exit code 3)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

/* Microsoft-Windows-Kernel-Process */
static const etl_guid kernel_process = { 0x22fb2cd6, 0x0e7b, 0x422b, { 0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16 } };

#define START_FILETIME 133485408000000000LL /* 2024-01-01, synth's default start */

static struct synth *s;
static int64_t ts = 1000010;
static uint8_t rec[4096];

static void add(uint32_t n)
{
    if (synth_add(s, 0, rec, n) != 0) {
        fprintf(stderr, "mkfields: a record does not fit\n");
        exit(1);
    }
    ts += 25000; /* 2.5 ms */
}

/* The FILETIME of raw timestamp t (10 MHz from 1 000 000 at the start: 100 ns ticks). */
static uint64_t filetime(int64_t t) { return (uint64_t)(START_FILETIME + (t - 1000000)); }

static void process_start(uint32_t pid, uint32_t ppid, const char *image)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid);
    sp64(&p, filetime(ts));
    sp32(&p, ppid);
    sp32(&p, 1);  /* SessionID */
    sp32(&p, 0);  /* Flags */
    sp_str16(&p, image);
    add(synth_event_header(rec, 1, ts, &kernel_process, 1, 1, 4, 1, 1, 0x10, pid, pid, NULL, 0, p.b, p.n));
}

static void process_stop(uint32_t pid, int64_t started, uint32_t exit_code, const char *image)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid);
    sp64(&p, filetime(started));
    sp64(&p, filetime(ts));
    sp32(&p, exit_code);
    sp32(&p, 1);              /* TokenElevationType */
    sp32(&p, 40);             /* HandleCount */
    sp64(&p, 4096 * 100);     /* CommitCharge */
    sp64(&p, 4096 * 200);     /* CommitPeak */
    sp64(&p, 123456789);      /* CPUCycleCount */
    for (int i = 0; i < 5; i++) sp32(&p, 0); /* read and write counts, KiB, hard faults */
    sp_str8(&p, image);
    add(synth_event_header(rec, 1, ts, &kernel_process, 2, 1, 4, 2, 2, 0x10, pid, pid, NULL, 0, p.b, p.n));
}

/* A TcpIp event of version 2 (Send 10, Recv 11): PID, size, daddr, saddr, dport, sport, then for
   Send startime and endtime, then seqnum and connid. Addresses and ports in network order. */
static void tcp(uint8_t opcode, uint32_t pid, uint32_t size, const uint8_t daddr[4], uint16_t dport)
{
    static const uint8_t saddr[4] = { 192, 168, 1, 20 };
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid);
    sp32(&p, size);
    for (int i = 0; i < 4; i++) sp8(&p, daddr[i]);
    for (int i = 0; i < 4; i++) sp8(&p, saddr[i]);
    sp8(&p, (uint8_t)(dport >> 8));
    sp8(&p, (uint8_t)dport);
    sp8(&p, 0xC3); /* sport 50000 */
    sp8(&p, 0x50);
    if (opcode == 10) {
        sp32(&p, 100);
        sp32(&p, 200);
    }
    sp32(&p, 7);                            /* seqnum */
    sp64(&p, 0xFFFFA00000000000ull + pid);  /* connid */
    add(synth_system(rec, 1, 0, ts, (uint16_t)(0x0600 | opcode), 2, pid, pid, p.b, p.n));
}

/* SendIPV6 (26), RecvIPV6 (27): the same with 16-byte addresses. */
static void tcp6(uint8_t opcode, uint32_t pid, uint32_t size, const uint8_t daddr[16], uint16_t dport)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid);
    sp32(&p, size);
    for (int i = 0; i < 16; i++) sp8(&p, daddr[i]);
    for (int i = 0; i < 16; i++) sp8(&p, i == 15 ? 2 : i == 0 ? 0xfe : i == 1 ? 0x80 : 0); /* fe80::2 */
    sp8(&p, (uint8_t)(dport >> 8));
    sp8(&p, (uint8_t)dport);
    sp8(&p, 0xC3);
    sp8(&p, 0x51);
    if (opcode == 26) {
        sp32(&p, 100);
        sp32(&p, 200);
    }
    sp32(&p, 9);
    sp64(&p, 0xFFFFA00000000100ull + pid);
    add(synth_system(rec, 1, 0, ts, (uint16_t)(0x0600 | opcode), 2, pid, pid, p.b, p.n));
}

int main(int argc, char **argv)
{
    static const uint8_t web[4] = { 93, 184, 216, 34 }, local[4] = { 10, 0, 0, 5 };
    static const uint8_t dns6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
    struct synth_options o;
    int64_t t1000, t1001;
    uint8_t *file;
    size_t size;
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: mkfields OUT.etl\n");
        return 2;
    }
    memset(&o, 0, sizeof o);
    s = synth_new(&o);
    if (!s) return 1;
    t1000 = ts;
    process_start(1000, 4, "curl.exe");
    t1001 = ts;
    process_start(1001, 4, "svc.exe");
    tcp(10, 1000, 517, web, 443);
    tcp(10, 1001, 300, local, 8080);
    tcp(11, 1000, 1460, web, 443);
    tcp(10, 1000, 1200, web, 443);
    tcp(10, 1001, 300, local, 8080);
    tcp(11, 1000, 1460, web, 443);
    tcp(10, 1001, 300, local, 8080);
    tcp(11, 1000, 800, web, 443);
    tcp6(26, 1001, 64, dns6, 53);
    tcp6(27, 1001, 128, dns6, 53);
    process_stop(1000, t1000, 0, "curl.exe");
    process_stop(1001, t1001, 3, "svc.exe");

    file = synth_finish(s, &size);
    if (!file) return 1;
    f = fopen(argv[1], "wb");
    if (!f || fwrite(file, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "mkfields: cannot write %s\n", argv[1]);
        free(file);
        return 1;
    }
    free(file);
    return 0;
}
