/* SPDX-License-Identifier: MIT */
/* Tests of kernel capture's pure parts: payloads round-tripping through etl_kernel_decode, the Linux-to-Windows mappings, flag names, refusals, the command line on an exec's stack. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "capture/capture.h"
#include "capture/knet.h"
#include "synth.h"
#include "testutil.h"

/* ---- one record at a time: encoded as kcapture writes it, read back by the reader ---- */

struct decoded {
    uint8_t *file;
    etl_reader *r;
    etl_event ev;
    etl_kernel_event k;
};

/* Writes a file holding the record of payload p (n bytes) as kcapture writes it (the header
   kind and version etl_kcapture_form gives) and reads the event back. */
static void record_back(struct decoded *d, uint16_t hook, const uint8_t *p, size_t n)
{
    int system;
    uint16_t version;
    struct synth_options o;
    struct synth *s;
    uint8_t rec[8192];
    etl_data data = { p, (uint32_t)n };
    uint32_t size;
    size_t fsize;

    ck_assert_int_eq(etl_kcapture_form(hook, &system, &version), 0);
    memset(&o, 0, sizeof o);
    o.cpus = 1;
    o.logger_name = "NT Kernel Logger";
    s = synth_new(&o);
    ck_assert_ptr_nonnull(s);
    size = system ? etl_record_encode_system(rec, sizeof rec, 2000000, hook, version, 10, 11, &data, n ? 1 : 0)
                  : etl_record_encode_perfinfo(rec, sizeof rec, 2000000, hook, version, &data, n ? 1 : 0);
    ck_assert_uint_gt(size, 0);
    ck_assert_int_eq(synth_add(s, 0, rec, size), 0);
    d->file = synth_finish(s, &fsize);
    ck_assert_ptr_nonnull(d->file);
    ck_assert_int_eq(etl_reader_open_memory(&d->r, d->file, fsize, NULL), ETL_OK);
    /* Past the logfile header and what the file's start holds. */
    do ck_assert_int_eq(etl_reader_next(d->r, &d->ev), ETL_OK);
    while (d->ev.kind != (system ? ETL_KIND_SYSTEM : ETL_KIND_PERFINFO) || d->ev.hook_id != hook);
    ck_assert_uint_eq(d->ev.version, version);
    ck_assert_uint_eq(d->ev.payload_len, n);
}

/* record_back, then the typed decoding (must be 1). */
static void roundtrip(struct decoded *d, uint16_t hook, const uint8_t *p, size_t n)
{
    record_back(d, hook, p, n);
    ck_assert_int_eq(etl_kernel_decode(&d->ev, &d->k), 1);
}

static void done(struct decoded *d)
{
    etl_reader_close(d->r);
    free(d->file);
}

static void str_is(const etl_string *s, const char *want)
{
    char buf[512];
    ck_assert_ptr_nonnull(s->data);
    etl_string_to_utf8(s, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
}

START_TEST(process_v4)
{
    etl_kproc_desc p = { 4242, 1, 1000, ETL_KSTILL_ACTIVE, "kspin", "./kspin 300 \xc3\xa9t\xc3\xa9" };
    uint8_t buf[512];
    size_t n = etl_kpayload_process(buf, sizeof buf, &p);
    struct decoded d;
    char sid[64];

    roundtrip(&d, ETL_HOOK_PROCESS_START, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_PROCESS);
    ck_assert_str_eq(d.k.name, "Process/Start");
    ck_assert_uint_eq(d.k.u.process.pid, 4242);
    ck_assert_uint_eq(d.k.u.process.parent_pid, 1);
    ck_assert_int_eq(d.k.u.process.exit_status, 259);
    ck_assert_uint_eq(d.k.u.process.unique_process_key, 0);
    ck_assert_uint_eq(d.k.u.process.session_id, 0);
    ck_assert_uint_eq(d.k.u.process.flags, 0);
    ck_assert_str_eq(etl_sid_format(d.k.u.process.sid, d.k.u.process.sid_size, sid, sizeof sid), "S-1-22-1-1000");
    str_is(&d.k.u.process.image_file_name, "kspin");
    str_is(&d.k.u.process.command_line, "./kspin 300 \xc3\xa9t\xc3\xa9");
    str_is(&d.k.u.process.package_full_name, "");
    str_is(&d.k.u.process.application_id, "");
    ck_assert_uint_eq(d.ev.pid, 10);
    done(&d);

    /* No user known: the 4-byte "no SID"; and DCStart's PERFINFO header. */
    p.uid = UINT32_MAX;
    n = etl_kpayload_process(buf, sizeof buf, &p);
    roundtrip(&d, ETL_HOOK_PROCESS_DCSTART, buf, n);
    ck_assert_str_eq(d.k.name, "Process/DCStart");
    ck_assert_ptr_null(d.k.u.process.sid);
    str_is(&d.k.u.process.image_file_name, "kspin");
    done(&d);
}
END_TEST

START_TEST(thread_v3)
{
    uint8_t buf[128];
    size_t n = etl_kpayload_thread(buf, sizeof buf, 4242, 4243, 8);
    struct decoded d;

    ck_assert_uint_eq(n, 72); /* as Windows' 64-bit Thread V3 */
    roundtrip(&d, ETL_HOOK_THREAD_DCSTART, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_THREAD);
    ck_assert_str_eq(d.k.name, "Thread/DCStart");
    ck_assert_uint_eq(d.k.u.thread.pid, 4242);
    ck_assert_uint_eq(d.k.u.thread.tid, 4243);
    ck_assert_uint_eq(d.k.u.thread.base_priority, 8);
    ck_assert_uint_eq(d.k.u.thread.start_address, 0);
    ck_assert_ptr_null(d.k.u.thread.name.data);
    done(&d);
}
END_TEST

/* SystemConfig/CPU version 3 as Windows writes it (828 bytes: perfview_diaghub.kernel.1.etl's),
   read back by the field decoder; and the machine it describes here. */
START_TEST(sysconfig_cpu_v3)
{
    etl_ksysconfig_cpu c, here;
    uint8_t buf[1024];
    struct decoded d;
    size_t n;
    char name[300];

    memset(&c, 0, sizeof c);
    c.mhz = 2596;
    c.processors = 2;
    c.mem_mb = 24000;
    c.page_size = c.allocation_granularity = 4096;
    memset(name, 'n', sizeof c.computer_name - 1); /* as long as the field: cut */
    name[sizeof c.computer_name - 1] = '\0';
    memcpy(name, "h\xc3\xb6st", 5);
    memcpy(c.computer_name, name, sizeof c.computer_name);
    snprintf(c.domain_name, sizeof c.domain_name, "example.org");
    c.highest_user_address = 0x7fffffffefffull;
    c.architecture = 9;
    c.level = 25;
    c.revision = 0x1101;
    c.nx = c.pae = 1;
    n = etl_kpayload_sysconfig_cpu(buf, sizeof buf, &c);
    ck_assert_uint_eq(n, 828);
    ck_assert_uint_eq(etl_kpayload_sysconfig_cpu(NULL, 0, &c), 828);
    ck_assert_uint_eq(etl_le32(buf + 4), 2);
    ck_assert_uint_eq(buf[20], 'h'); /* ComputerName at 20, UTF-16LE */
    ck_assert_uint_eq(etl_le16(buf + 22), 0xF6);
    ck_assert_uint_eq(etl_le16(buf + 20 + 2 * 252), 'n'); /* 254 units given: cut to 253, NUL-terminated */
    ck_assert_uint_eq(etl_le16(buf + 20 + 2 * 253), 0);
    ck_assert_uint_eq(etl_le16(buf + 20 + 2 * 255), 0);
    ck_assert_uint_eq(buf[532], 'e'); /* DomainName at 532 */
    ck_assert_uint_eq(etl_le64(buf + 0x328), 0x7fffffffefffull);
    ck_assert_uint_eq(etl_le16(buf + 0x330), 9);
    record_back(&d, ETL_HOOK_SYSCONFIG_CPU, buf, n);
    ck_assert_uint_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 3);
    done(&d);

    etl_ksysconfig_cpu_read(&here);
    ck_assert_uint_eq(here.processors, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_eq(here.page_size, (uint32_t)sysconf(_SC_PAGESIZE));
    ck_assert_uint_gt(here.mem_mb, 0);
    ck_assert_uint_gt(strlen(here.computer_name), 0);
    ck_assert_ptr_null(strchr(here.computer_name, '.'));
}
END_TEST

START_TEST(image_v3)
{
    uint8_t buf[512];
    size_t n = etl_kpayload_image(buf, sizeof buf, 0x7f0000000000ull, 0x1c5000, 4242,
                                  "/usr/lib/x86_64-linux-gnu/libc.so.6");
    struct decoded d;

    roundtrip(&d, ETL_HOOK_PROCESS_LOAD_IMAGE, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_IMAGE);
    ck_assert_str_eq(d.k.name, "Image/Load");
    ck_assert_uint_eq(d.k.u.image.image_base, 0x7f0000000000ull);
    ck_assert_uint_eq(d.k.u.image.image_size, 0x1c5000);
    ck_assert_uint_eq(d.k.u.image.pid, 4242);
    ck_assert_uint_eq(d.k.u.image.checksum, 0);
    ck_assert_uint_eq(d.k.u.image.default_base, 0);
    str_is(&d.k.u.image.file_name, "/usr/lib/x86_64-linux-gnu/libc.so.6");
    done(&d);
}
END_TEST

START_TEST(cswitch_ready_sample_stack)
{
    uint8_t buf[256];
    uint64_t frames[3] = { 0xffffffff81000010ull, 0x55d626850123ull, 0x7f0000001234ull };
    size_t n = etl_kpayload_cswitch(buf, sizeof buf, 4243, 4244, 9, 8, 6, 1, 5, 3, 13);
    struct decoded d;

    ck_assert_uint_eq(n, 24);
    roundtrip(&d, ETL_HOOK_CSWITCH, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_CSWITCH);
    ck_assert_uint_eq(d.k.u.cswitch.new_tid, 4243);
    ck_assert_uint_eq(d.k.u.cswitch.old_tid, 4244);
    ck_assert_int_eq(d.k.u.cswitch.new_thread_priority, 9);
    ck_assert_int_eq(d.k.u.cswitch.old_thread_priority, 8);
    ck_assert_uint_eq(d.k.u.cswitch.old_thread_wait_reason, 6);
    ck_assert_uint_eq(d.k.u.cswitch.old_thread_wait_mode, 1);
    ck_assert_uint_eq(d.k.u.cswitch.old_thread_state, 5);
    ck_assert_uint_eq(d.k.u.cswitch.old_thread_wait_ideal_processor, 3);
    ck_assert_uint_eq(d.k.u.cswitch.new_thread_wait_time, 13);
    done(&d);
    /* NewThreadWaitTime's ticks: whole 15.625 ms */
    ck_assert_uint_eq(etl_kwait_ticks(-5), 0);
    ck_assert_uint_eq(etl_kwait_ticks(15624999), 0);
    ck_assert_uint_eq(etl_kwait_ticks(15625000), 1);
    ck_assert_uint_eq(etl_kwait_ticks(200000000), 12);
    ck_assert_uint_eq(etl_kwait_ticks(INT64_MAX), UINT32_MAX);

    n = etl_kpayload_ready_thread(buf, sizeof buf, 4245);
    ck_assert_uint_eq(n, 8);
    roundtrip(&d, ETL_HOOK_READY_THREAD, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_READY_THREAD);
    ck_assert_uint_eq(d.k.u.ready_thread.tid, 4245);
    done(&d);

    n = etl_kpayload_sample(buf, sizeof buf, 0x55d626850123ull, 4243);
    ck_assert_uint_eq(n, 16);
    roundtrip(&d, ETL_HOOK_SAMPLED_PROFILE, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_SAMPLED_PROFILE);
    ck_assert_uint_eq(d.k.u.sample.instruction_pointer, 0x55d626850123ull);
    ck_assert_uint_eq(d.k.u.sample.tid, 4243);
    ck_assert_uint_eq(d.k.u.sample.count, 1);
    done(&d);

    n = etl_kpayload_pmc(buf, sizeof buf, 0x55d626850456ull, 4244, ETL_KPROFILE_BRANCH_INSTRUCTIONS);
    ck_assert_uint_eq(n, 16);
    roundtrip(&d, ETL_HOOK_PMC_SAMPLE, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_SAMPLED_PROFILE);
    ck_assert_str_eq(d.k.name, "PerfInfo/PMCSample");
    ck_assert_uint_eq(d.k.u.sample.instruction_pointer, 0x55d626850456ull);
    ck_assert_uint_eq(d.k.u.sample.tid, 4244);
    ck_assert_uint_eq(d.k.u.sample.profile_source, ETL_KPROFILE_BRANCH_INSTRUCTIONS);
    ck_assert_uint_eq(d.k.u.sample.count, 0);
    done(&d);

    n = etl_kpayload_stack(buf, sizeof buf, 2000000, 4242, 4243, frames, 3);
    ck_assert_uint_eq(n, 16 + 24);
    roundtrip(&d, ETL_HOOK_STACKWALK_STACK, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_STACK);
    ck_assert_int_eq(d.k.u.stack.event_timestamp, d.ev.timestamp); /* the event's own timestamp */
    ck_assert_uint_eq(d.k.u.stack.pid, 4242);
    ck_assert_uint_eq(d.k.u.stack.tid, 4243);
    ck_assert_uint_eq(d.k.u.stack.frame_count, 3);
    for (unsigned i = 0; i < 3; i++) ck_assert_uint_eq(etl_kstack_frame_at(&d.k.u.stack, i), frames[i]);
    done(&d);

    roundtrip(&d, ETL_HOOK_RUNDOWN_COMPLETE, NULL, 0);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_RUNDOWN_COMPLETE);
    done(&d);
}
END_TEST

/* DiskIo as kcapture writes it (version 3, PERFINFO, Windows' padded sizes) reads back. */
START_TEST(disk_io_v3)
{
    etl_kdisk_desc w = { 0x0FE00000, 0x204, 262144, 4242, 107111776256, 0x9d081f994996ba6bull, 407273 };
    uint8_t buf[64];
    size_t n = etl_kpayload_disk_io(buf, sizeof buf, &w);
    struct decoded d;

    ck_assert_uint_eq(n, 56);
    for (int write = 0; write < 2; write++) {
        roundtrip(&d, write ? ETL_HOOK_DISK_WRITE : ETL_HOOK_DISK_READ, buf, n);
        ck_assert_int_eq(d.ev.kind, ETL_KIND_PERFINFO);
        ck_assert_int_eq(d.k.kclass, ETL_KCLASS_DISK_IO);
        ck_assert_str_eq(d.k.name, write ? "DiskIO/Write" : "DiskIO/Read");
        ck_assert_uint_eq(d.k.u.disk_io.disk_number, 0x0FE00000);
        ck_assert_uint_eq(d.k.u.disk_io.irp_flags, 0x204);
        ck_assert_uint_eq(d.k.u.disk_io.transfer_size, 262144);
        ck_assert_int_eq(d.k.u.disk_io.byte_offset, 107111776256);
        ck_assert_uint_eq(d.k.u.disk_io.file_object, 0);
        ck_assert_uint_eq(d.k.u.disk_io.irp, 0x9d081f994996ba6bull);
        ck_assert_uint_eq(d.k.u.disk_io.high_res_response_time, 407273);
        ck_assert_uint_eq(d.k.u.disk_io.issuing_tid, 4242);
        done(&d);
    }
    n = etl_kpayload_disk_flush(buf, sizeof buf, &w);
    ck_assert_uint_eq(n, 32);
    roundtrip(&d, ETL_HOOK_DISK_FLUSH, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_DISK_IO);
    ck_assert_str_eq(d.k.name, "DiskIO/FlushBuffers");
    ck_assert_uint_eq(d.k.u.disk_io.disk_number, 0x0FE00000);
    ck_assert_uint_eq(d.k.u.disk_io.irp_flags, 0x204);
    ck_assert_uint_eq(d.k.u.disk_io.high_res_response_time, 407273);
    ck_assert_uint_eq(d.k.u.disk_io.irp, 0x9d081f994996ba6bull);
    ck_assert_uint_eq(d.k.u.disk_io.issuing_tid, 4242);
    ck_assert_uint_eq(d.k.u.disk_io.transfer_size, 0);
    done(&d);
    n = etl_kpayload_disk_init(buf, sizeof buf, 0x9d081f994996ba6bull, 4242);
    ck_assert_uint_eq(n, 16);
    for (uint16_t hook = ETL_HOOK_DISK_READ_INIT; hook <= ETL_HOOK_DISK_FLUSH_INIT; hook++) {
        if (hook == ETL_HOOK_DISK_FLUSH) continue;
        roundtrip(&d, hook, buf, n);
        ck_assert_int_eq(d.k.kclass, ETL_KCLASS_DISK_IO_INIT);
        ck_assert_str_eq(d.k.name, hook == ETL_HOOK_DISK_READ_INIT ? "DiskIO/ReadInit"
                                   : hook == ETL_HOOK_DISK_WRITE_INIT ? "DiskIO/WriteInit" : "DiskIO/FlushInit");
        ck_assert_uint_eq(d.k.u.disk_io.irp, 0x9d081f994996ba6bull);
        ck_assert_uint_eq(d.k.u.disk_io.issuing_tid, 4242);
        done(&d);
    }
}
END_TEST

/* Thread/SetName (72), version 2 with a SYSTEM64 header as the Thread group's other events:
   ProcessId, TThreadId, ThreadName (UTF-16), decoded as a Thread event with its name. */
START_TEST(thread_set_name_v2)
{
    uint8_t buf[128];
    size_t n = etl_kpayload_thread_name(buf, sizeof buf, 4242, 4243, "kn\xc3\xa9mes-worker");
    struct decoded d;

    ck_assert_uint_eq(n, 4 + 4 + 2 * 14);
    roundtrip(&d, ETL_HOOK_THREAD_SET_NAME, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_THREAD);
    ck_assert_str_eq(d.k.name, "Thread/SetName");
    ck_assert_uint_eq(d.k.u.thread.pid, 4242);
    ck_assert_uint_eq(d.k.u.thread.tid, 4243);
    str_is(&d.k.u.thread.name, "kn\xc3\xa9mes-worker");
    done(&d);
    /* cut inside the ids: a failure, not a read past the payload */
    record_back(&d, ETL_HOOK_THREAD_SET_NAME, buf, 7);
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
}
END_TEST

/* PerfInfo ISR and DPC/TimerDPC (version 2, PERFINFO64), as the interrupt and dpc flags write
   them at a hard interrupt's or softirq's exit: InitialTime (its entry), Routine; an ISR's
   ReturnValue and Vector. TIMER (1) and HRTIMER (8) are TimerDPCs, the other softirqs DPCs. */
START_TEST(isr_dpc_v2)
{
    uint8_t buf[32];
    size_t n = etl_kpayload_isr(buf, sizeof buf, 123456789, 0, 1, 36);
    struct decoded d;

    ck_assert_uint_eq(n, 20);
    roundtrip(&d, ETL_HOOK_ISR, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_PERFINFO);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_ISR);
    ck_assert_str_eq(d.k.name, "PerfInfo/ISR");
    ck_assert_int_eq(d.k.u.isr_dpc.initial_time, 123456789);
    ck_assert_uint_eq(d.k.u.isr_dpc.routine, 0);
    ck_assert_uint_eq(d.k.u.isr_dpc.return_value, 1);
    ck_assert_uint_eq(d.k.u.isr_dpc.vector, 36);
    done(&d);
    n = etl_kpayload_dpc(buf, sizeof buf, 987654321, 0xffffffff8141cec0ull);
    ck_assert_uint_eq(n, 16);
    roundtrip(&d, etl_ksoftirq_hook(1), buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_DPC);
    ck_assert_str_eq(d.k.name, "PerfInfo/TimerDPC");
    ck_assert_int_eq(d.k.u.isr_dpc.initial_time, 987654321);
    ck_assert_uint_eq(d.k.u.isr_dpc.routine, 0xffffffff8141cec0ull);
    done(&d);
    record_back(&d, etl_ksoftirq_hook(9), buf, n);
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), 1);
    ck_assert_str_eq(d.k.name, "PerfInfo/DPC");
    done(&d);
    record_back(&d, ETL_HOOK_DPC, buf, 15); /* cut in Routine */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
    for (uint32_t v = 0; v < 12; v++)
        ck_assert_uint_eq(etl_ksoftirq_hook(v), v == 1 || v == 8 ? ETL_HOOK_TIMER_DPC : ETL_HOOK_DPC);
    ck_assert_str_eq(etl_ksoftirq_actions[1], "run_timer_softirq");
    ck_assert_str_eq(etl_ksoftirq_actions[3], "net_rx_action");
}
END_TEST

/* TcpIp and UdpIp (version 2, SYSTEM64), as network_tcpip writes them: SendIPV4 (40 bytes with
   64-bit pointers), ConnectIPV4 with its options (48), RecvIPV6 (56), UdpIp SendIPV6 (56); ports
   in network order, decoded back to the same values; a record cut in connid fails. */
START_TEST(tcpip_v2)
{
    uint8_t buf[96];
    etl_ktcpip_desc t;
    char a[ETL_KTCPIP_ADDR_SIZE];
    struct decoded d;
    size_t n;

    memset(&t, 0, sizeof t);
    t.pid = 4242;
    t.size = 1000;
    memcpy(t.saddr, (const uint8_t[]){ 127, 0, 0, 1 }, 4);
    memcpy(t.daddr, (const uint8_t[]){ 10, 1, 2, 3 }, 4);
    t.sport = 50444;
    t.dport = 443;
    t.connid = 0xffff88811d2e9280ull;
    n = etl_kpayload_tcpip(buf, sizeof buf, ETL_HOOK_TCPIP_SEND, &t);
    ck_assert_uint_eq(n, 40);
    ck_assert_uint_eq(buf[16], 443 >> 8); /* dport, network order */
    ck_assert_uint_eq(buf[17], 443 & 0xFF);
    roundtrip(&d, ETL_HOOK_TCPIP_SEND, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_TCPIP);
    ck_assert_str_eq(d.k.name, "TcpIp/Send");
    ck_assert_uint_eq(d.k.u.tcpip.pid, 4242);
    ck_assert_uint_eq(d.k.u.tcpip.size, 1000);
    ck_assert_uint_eq(d.k.u.tcpip.sport, 50444);
    ck_assert_uint_eq(d.k.u.tcpip.dport, 443);
    ck_assert_uint_eq(d.k.u.tcpip.ip_version, 4);
    ck_assert_uint_eq(d.k.u.tcpip.protocol, 6);
    ck_assert_uint_eq(d.k.u.tcpip.connid, 0xffff88811d2e9280ull);
    ck_assert_str_eq(etl_ktcpip_addr_format(&d.k.u.tcpip, 1, a, sizeof a), "127.0.0.1");
    ck_assert_str_eq(etl_ktcpip_addr_format(&d.k.u.tcpip, 0, a, sizeof a), "10.1.2.3");
    done(&d);

    t.mss = 1460;
    t.rcvwin = 65535;
    t.sndwinscale = -1;
    n = etl_kpayload_tcpip(buf, sizeof buf, ETL_HOOK_TCPIP_CONNECT, &t);
    ck_assert_uint_eq(n, 48);
    roundtrip(&d, ETL_HOOK_TCPIP_CONNECT, buf, n);
    ck_assert_str_eq(d.k.name, "TcpIp/Connect");
    ck_assert_uint_eq(d.k.u.tcpip.mss, 1460);
    ck_assert_uint_eq(d.k.u.tcpip.rcvwin, 65535);
    ck_assert_int_eq(d.k.u.tcpip.sndwinscale, -1);
    ck_assert_uint_eq(d.k.u.tcpip.connid, 0xffff88811d2e9280ull);
    done(&d);

    t.v6 = 1;
    memset(t.saddr, 0, 16);
    t.saddr[15] = 1;
    memcpy(t.daddr, (const uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42 }, 16);
    n = etl_kpayload_tcpip(buf, sizeof buf, ETL_HOOK_TCPIP_RECV + ETL_HOOK_TCPIP_IPV6, &t);
    ck_assert_uint_eq(n, 56);
    roundtrip(&d, ETL_HOOK_TCPIP_RECV + ETL_HOOK_TCPIP_IPV6, buf, n);
    ck_assert_str_eq(d.k.name, "TcpIp/RecvIPV6");
    ck_assert_uint_eq(d.k.u.tcpip.ip_version, 6);
    ck_assert_str_eq(etl_ktcpip_addr_format(&d.k.u.tcpip, 1, a, sizeof a), "::1");
    ck_assert_str_eq(etl_ktcpip_addr_format(&d.k.u.tcpip, 0, a, sizeof a), "2001:db8::42");
    ck_assert_uint_eq(d.k.u.tcpip.sport, 50444);
    ck_assert_uint_eq(d.k.u.tcpip.connid, 0xffff88811d2e9280ull);
    done(&d);
    n = etl_kpayload_tcpip(buf, sizeof buf, ETL_HOOK_TCPIP_RECONNECT + ETL_HOOK_TCPIP_IPV6, &t);
    roundtrip(&d, ETL_HOOK_TCPIP_RECONNECT + ETL_HOOK_TCPIP_IPV6, buf, n);
    ck_assert_str_eq(d.k.name, "TcpIp/ReconnectIPV6");
    done(&d);

    n = etl_kpayload_tcpip(buf, sizeof buf, ETL_HOOK_UDPIP_SEND + ETL_HOOK_TCPIP_IPV6, &t);
    ck_assert_uint_eq(n, 56);
    roundtrip(&d, ETL_HOOK_UDPIP_SEND + ETL_HOOK_TCPIP_IPV6, buf, n);
    ck_assert_str_eq(d.k.name, "UdpIp/SendIPV6");
    ck_assert_uint_eq(d.k.u.tcpip.protocol, 17);
    ck_assert_uint_eq(d.k.u.tcpip.size, 1000);
    done(&d);
    record_back(&d, ETL_HOOK_UDPIP_SEND + ETL_HOOK_TCPIP_IPV6, buf, 50); /* cut in connid */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
}
END_TEST

/* PageFault TypeGroup1 (version 2, SYSTEM64 with the faulting thread): DemandZeroFault for a
   minor fault, HardPageFault for a major one; VirtualAddress, ProgramCounter. */
START_TEST(page_fault_v2)
{
    uint8_t buf[32];
    size_t n = etl_kpayload_page_fault(buf, sizeof buf, 0x7f0000123000ull, 0x401234);
    struct decoded d;

    ck_assert_uint_eq(n, 16);
    roundtrip(&d, ETL_HOOK_PAGE_FAULT_DEMAND_ZERO, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_uint_eq(d.ev.tid, 11);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_PAGE_FAULT);
    ck_assert_str_eq(d.k.name, "PageFault/DemandZeroFault");
    ck_assert_uint_eq(d.k.u.page_fault.virtual_address, 0x7f0000123000ull);
    ck_assert_uint_eq(d.k.u.page_fault.program_counter, 0x401234);
    done(&d);
    roundtrip(&d, ETL_HOOK_PAGE_FAULT_HARD, buf, n);
    ck_assert_str_eq(d.k.name, "PageFault/HardPageFault");
    done(&d);
    record_back(&d, ETL_HOOK_PAGE_FAULT_HARD, buf, 12); /* cut in ProgramCounter */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
}
END_TEST

/* FileIo version 3 (SYSTEM64), as the file I/O capture writes them, read back as the file_io
   class: Create (OpenPath), Read (Offset, IoSize), Info (ExtraInfo, InfoClass), OperationEnd
   (ExtraInfo, NtStatus), Name (the FileKey in its FileObject field, FileName); cut ones fail. */
START_TEST(file_io_v3)
{
    uint8_t buf[256];
    char name[64];
    etl_kfileio_desc f = { 0 };
    size_t n;
    struct decoded d;

    f.irp = 0x8000000000000042ull;
    f.file_object = 0xffff888100001000ull;
    f.file_key = 0xffff888100002000ull;
    f.tid = 11;
    f.create_options = etl_kfileio_create_options(0100 | 01000 | 01); /* O_CREAT|O_TRUNC|O_WRONLY */
    f.file_attributes = 0x80;
    f.share_access = 7;
    f.path = "/tmp/f\xc3\xa9";
    n = etl_kpayload_fileio_create(buf, sizeof buf, &f);
    ck_assert_uint_eq(n, 32 + 2 * 8); /* IrpPtr, FileObject, TTID, options, attributes, share; 8 units */
    roundtrip(&d, ETL_HOOK_FILEIO_CREATE, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 3);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_FILE_IO);
    ck_assert_str_eq(d.k.name, "FileIO/Create");
    ck_assert_uint_eq(d.k.u.file_io.irp, f.irp);
    ck_assert_uint_eq(d.k.u.file_io.file_object, f.file_object);
    ck_assert_uint_eq(d.k.u.file_io.ttid, 11);
    ck_assert_uint_eq(d.k.u.file_io.create_options, 0x05000020); /* FILE_OVERWRITE_IF, synchronous */
    etl_string_to_utf8(&d.k.u.file_io.file_name, name, sizeof name);
    ck_assert_str_eq(name, "/tmp/f\xc3\xa9");
    done(&d);

    f.offset = 4096;
    f.size = 1000;
    f.io_flags = 4;
    n = etl_kpayload_fileio_rw(buf, sizeof buf, &f);
    ck_assert_uint_eq(n, 48);
    roundtrip(&d, 0x0444, buf, n);
    ck_assert_str_eq(d.k.name, "FileIO/Write");
    ck_assert_uint_eq(d.k.u.file_io.offset, 4096);
    ck_assert_uint_eq(d.k.u.file_io.file_key, f.file_key);
    ck_assert_uint_eq(d.k.u.file_io.io_size, 1000);
    ck_assert_uint_eq(d.k.u.file_io.io_flags, 4);
    done(&d);
    record_back(&d, 0x0444, buf, 36); /* cut in TTID */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);

    f.extra_info = 1;
    f.info_class = 13;
    n = etl_kpayload_fileio_info(buf, sizeof buf, &f);
    ck_assert_uint_eq(n, 40);
    roundtrip(&d, 0x0446, buf, n);
    ck_assert_str_eq(d.k.name, "FileIO/Delete");
    ck_assert_uint_eq(d.k.u.file_io.extra_info, 1);
    ck_assert_uint_eq(d.k.u.file_io.info_class, 13);
    done(&d);

    n = etl_kpayload_fileio_op_end(buf, sizeof buf, f.irp, 1000, etl_kntstatus(-2));
    ck_assert_uint_eq(n, 24);
    roundtrip(&d, ETL_HOOK_FILEIO_OP_END, buf, n);
    ck_assert_str_eq(d.k.name, "FileIO/OperationEnd");
    ck_assert_uint_eq(d.k.u.file_io.irp, f.irp);
    ck_assert_uint_eq(d.k.u.file_io.extra_info, 1000);
    ck_assert_uint_eq(d.k.u.file_io.nt_status, 0xE0000002u);
    done(&d);

    n = etl_kpayload_file_name(buf, sizeof buf, f.file_key, "/a/b");
    roundtrip(&d, ETL_HOOK_FILEIO_RUNDOWN, buf, n);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_str_eq(d.k.name, "FileIO/FileRundown");
    ck_assert_uint_eq(d.k.u.file_io.file_key, f.file_key);
    etl_string_to_utf8(&d.k.u.file_io.file_name, name, sizeof name);
    ck_assert_str_eq(name, "/a/b");
    done(&d);
}
END_TEST

/* open(2)'s flags as NtCreateFile's CreateDisposition (top byte) and CreateOptions. */
START_TEST(file_io_create_options)
{
    ck_assert_uint_eq(etl_kfileio_create_options(0), 0x01000020);                  /* FILE_OPEN */
    ck_assert_uint_eq(etl_kfileio_create_options(0100), 0x03000020);               /* O_CREAT: FILE_OPEN_IF */
    ck_assert_uint_eq(etl_kfileio_create_options(0100 | 0200), 0x02000020);        /* O_EXCL: FILE_CREATE */
    ck_assert_uint_eq(etl_kfileio_create_options(01000), 0x04000020);              /* O_TRUNC: FILE_OVERWRITE */
    ck_assert_uint_eq(etl_kfileio_create_options(0100 | 01000), 0x05000020);       /* FILE_OVERWRITE_IF */
    ck_assert_uint_eq(etl_kfileio_create_options(0200000) & 0xFFFFFF, 0x21);       /* O_DIRECTORY */
}
END_TEST

START_TEST(syscall_v2)
{
    uint8_t buf[16];
    size_t n = etl_kpayload_syscall_enter(buf, sizeof buf, 231);
    struct decoded d;

    ck_assert_uint_eq(n, 8);
    roundtrip(&d, ETL_HOOK_SYSCALL_ENTER, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_PERFINFO);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_SYSCALL_ENTER);
    ck_assert_str_eq(d.k.name, "PerfInfo/SysClEnter");
    ck_assert_uint_eq(d.k.u.syscall.address, 231);
    done(&d);
    n = etl_kpayload_syscall_exit(buf, sizeof buf, etl_kntstatus(-2));
    ck_assert_uint_eq(n, 4);
    roundtrip(&d, ETL_HOOK_SYSCALL_EXIT, buf, n);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_SYSCALL_EXIT);
    ck_assert_str_eq(d.k.name, "PerfInfo/SysClExit");
    ck_assert_uint_eq(d.k.u.syscall.nt_status, 0xE0000002u);
    done(&d);
}
END_TEST

/* PerfInfo CollectionStart and CollectionEnd (SampledProfileInterval v3, PERFINFO64) for the
   timer (KPROFILE_SOURCE 0, "Timer") at 250 us: Source, NewInterval and OldInterval in 100 ns
   units, SourceName; the field decoder's kernel tables name them. */
START_TEST(profile_interval_v3)
{
    static const uint8_t want[] = { 0, 0, 0, 0, 0xC4, 0x09, 0, 0, 0xC4, 0x09, 0, 0,
                                    'T', 0, 'i', 0, 'm', 0, 'e', 0, 'r', 0, 0, 0 };
    static const uint16_t hooks[] = { ETL_HOOK_PROFILE_COLLECTION_START, ETL_HOOK_PROFILE_COLLECTION_END };
    static const char *const names[] = { "PerfInfo/CollectionStart", "PerfInfo/CollectionEnd" };
    uint8_t buf[64];
    char text[256];
    size_t n;

    memset(buf, 0xAA, sizeof buf);
    n = etl_kpayload_profile_interval(buf, sizeof buf, ETL_KPROFILE_TIME, 2500, 2500, "Timer");
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(buf, want, n);
    ck_assert_uint_eq(buf[n], 0xAA);
    ck_assert_uint_eq(etl_kpayload_profile_interval(buf, 10, ETL_KPROFILE_TIME, 2500, 2500, "Timer"), sizeof want);
    for (size_t i = 0; i < 2; i++) {
        struct decoded d;
        etl_decoder_options o;
        etl_decoder *dec;
        etl_decoded_event de;
        int system;
        uint16_t version;

        ck_assert_int_eq(etl_kcapture_form(hooks[i], &system, &version), 0);
        ck_assert_int_eq(system, 0);
        ck_assert_uint_eq(version, 3);
        record_back(&d, hooks[i], want, sizeof want);
        ck_assert_int_eq(d.ev.kind, ETL_KIND_PERFINFO);
        ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), 0); /* no typed class: the fields' */
        memset(&o, 0, sizeof o);
        o.flags = ETL_DECODER_NO_DEFAULTS;
        ck_assert_int_eq(etl_decoder_open(&dec, &o), ETL_OK);
        ck_assert_int_eq(etl_decoder_decode(dec, &d.ev, &de), 1);
        ck_assert_str_eq(de.event_name, names[i]);
        ck_assert_uint_eq(de.payload_used, sizeof want);
        etl_decoded_format_text(&de, text, sizeof text);
        ck_assert_str_eq(text, "Source=0 NewInterval=2500 OldInterval=2500 SourceName=\"Timer\"");
        etl_decoder_close(dec);
        done(&d);
    }
}
END_TEST

/* rwbs (blk_fill_rwbs) to the DiskIo event and IRP flags; return values to NTSTATUS. */
START_TEST(io_mappings)
{
    static const struct {
        const char *rwbs;
        int kind;
        uint32_t flags;
    } t[] = {
        { "R", ETL_KIO_READ, 0x100 },    { "RS", ETL_KIO_READ, 0x104 },   { "RA", ETL_KIO_READ, 0x100 },
        { "W", ETL_KIO_WRITE, 0x200 },   { "WS", ETL_KIO_WRITE, 0x204 },  { "WFS", ETL_KIO_WRITE, 0x204 },
        { "FWS", ETL_KIO_WRITE, 0x204 }, { "WSM", ETL_KIO_WRITE, 0x204 }, { "F", ETL_KIO_FLUSH, 0 },
        { "FF", ETL_KIO_FLUSH, 0 },      { "FFS", ETL_KIO_FLUSH, 0x4 },   { "D", ETL_KIO_OTHER, 0 },
        { "DE", ETL_KIO_OTHER, 0 },      { "N", ETL_KIO_OTHER, 0 },       { "", ETL_KIO_OTHER, 0 },
    };
    char rwbs[10];

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint32_t flags = 0xFFFF;
        memset(rwbs, 0, sizeof rwbs);
        memcpy(rwbs, t[i].rwbs, strlen(t[i].rwbs));
        ck_assert_msg(etl_kio_kind(rwbs, sizeof rwbs, &flags) == t[i].kind, "%s", t[i].rwbs);
        ck_assert_msg(flags == t[i].flags, "%s: 0x%x", t[i].rwbs, flags);
    }
    /* A full 8-byte field without a NUL stays inside it. */
    ck_assert_int_eq(etl_kio_kind("WSMWSMWSxxxx", 8, &(uint32_t){ 0 }), ETL_KIO_WRITE);
    ck_assert_uint_eq(etl_kntstatus(0), 0);
    ck_assert_uint_eq(etl_kntstatus(4096), 0);
    ck_assert_uint_eq(etl_kntstatus(-1), 0xE0000001u);   /* EPERM */
    ck_assert_uint_eq(etl_kntstatus(-4095), 0xE0000FFFu);
    ck_assert_uint_eq(etl_kntstatus(INT64_MIN), 0xE000FFFFu);
}
END_TEST

/* An encoder given too little room stays within it and says what it needs. */
START_TEST(too_small)
{
    etl_kproc_desc p = { 1, 0, 0, 0, "init", "/sbin/init splash" };
    uint8_t buf[200];
    size_t need = etl_kpayload_process(NULL, 0, &p);

    memset(buf, 0xAA, sizeof buf);
    ck_assert_uint_eq(etl_kpayload_process(buf, need - 1, &p), need);
    for (size_t i = need - 1; i < sizeof buf; i++) ck_assert_uint_eq(buf[i], 0xAA);
    ck_assert_uint_eq(etl_kpayload_process(buf, need, &p), need);
    ck_assert_uint_eq(etl_kpayload_image(buf, 10, 1, 2, 3, "x"), 56 + 4);
    ck_assert_uint_eq(etl_kpayload_thread(NULL, 0, 1, 2, 8), 72);
    memset(buf, 0xAA, sizeof buf);
    ck_assert_uint_eq(etl_kpayload_disk_io(buf, 10, &(etl_kdisk_desc){ 0 }), 56);
    ck_assert_uint_eq(buf[10], 0xAA);
}
END_TEST

START_TEST(priorities)
{
    ck_assert_int_eq(etl_kpriority(120), 8);  /* nice 0: normal */
    ck_assert_int_eq(etl_kpriority(100), 15); /* nice -20 */
    ck_assert_int_eq(etl_kpriority(139), 2);  /* nice 19 */
    ck_assert_int_eq(etl_kpriority(98), 16);  /* real time 1 */
    ck_assert_int_eq(etl_kpriority(0), 31);   /* real time 99 */
    ck_assert_int_eq(etl_kpriority(-1), 0);   /* deadline tasks */
    for (int prio = 0; prio < 140; prio++) {
        int w = etl_kpriority(prio);
        ck_assert_int_ge(w, 1);
        ck_assert_int_le(w, 31);
        if (prio) ck_assert_int_le(w, etl_kpriority(prio - 1)); /* a lower prio number is higher */
    }
}
END_TEST

START_TEST(thread_states)
{
    static const struct {
        int64_t linux_state;
        uint8_t state, reason, mode;
    } t[] = {
        { 0x000, 1, 33, 0 },  /* R: yielded, Ready / WrYieldExecution */
        { 0x100, 1, 32, 0 },  /* R+: preempted, Ready / WrPreempted */
        { 0x001, 5, 6, 1 },   /* S: Waiting / UserRequest, user mode */
        { 0x002, 5, 0, 0 },   /* D: Waiting / Executive */
        { 0x004, 5, 5, 0 },   /* T: Waiting / Suspended */
        { 0x008, 5, 5, 0 },   /* t: traced */
        { 0x010, 4, 22, 0 },  /* X: Terminated / WrTerminated */
        { 0x020, 4, 22, 0 },  /* Z */
        { 0x040, 5, 0, 0 },   /* P: parked */
        { 0x080, 5, 0, 0 },   /* I: idle kernel thread */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t state, reason, mode;
        etl_kstate(t[i].linux_state, &state, &reason, &mode);
        ck_assert_uint_eq(state, t[i].state);
        ck_assert_uint_eq(reason, t[i].reason);
        ck_assert_uint_eq(mode, t[i].mode);
    }
}
END_TEST

/* virtual_alloc and vamap: VirtualAlloc/VirtualFree (SYSTEM v2, 24 bytes) and MapFile/UnmapFile
   (SYSTEM v3, 44 bytes) as TraceEvent's VirtualAllocTraceData and MapFileTraceData lay them out. */
START_TEST(virtual_alloc_map_file)
{
    uint8_t buf[64];
    etl_kmap_file_desc m = { 0x7f0000200000ull, 0x1234567890abcdefull, 0, 3 * 4096, 8192, 4321 };
    size_t n = etl_kpayload_virtual_alloc(buf, sizeof buf, 0x7f0000100000ull, 37 * 4096, 4321, 0x3000);
    struct decoded d;

    ck_assert_uint_eq(n, 24);
    roundtrip(&d, ETL_HOOK_VIRTUAL_ALLOC, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_VIRTUAL_ALLOC);
    ck_assert_str_eq(d.k.name, "PageFault/VirtualAlloc");
    ck_assert_uint_eq(d.k.u.virtual_alloc.base_address, 0x7f0000100000ull);
    ck_assert_uint_eq(d.k.u.virtual_alloc.region_size, 37 * 4096);
    ck_assert_uint_eq(d.k.u.virtual_alloc.pid, 4321);
    ck_assert_uint_eq(d.k.u.virtual_alloc.flags, 0x3000);
    done(&d);
    roundtrip(&d, ETL_HOOK_VIRTUAL_FREE, buf, n);
    ck_assert_str_eq(d.k.name, "PageFault/VirtualFree");
    done(&d);
    record_back(&d, ETL_HOOK_VIRTUAL_FREE, buf, 20); /* cut in Flags */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);

    n = etl_kpayload_map_file(buf, sizeof buf, &m);
    ck_assert_uint_eq(n, 44);
    roundtrip(&d, ETL_HOOK_MAP_FILE, buf, n);
    ck_assert_uint_eq(d.ev.version, 3);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_MAP_FILE);
    ck_assert_str_eq(d.k.name, "FileIO/MapFile");
    ck_assert_uint_eq(d.k.u.map_file.view_base, 0x7f0000200000ull);
    ck_assert_uint_eq(d.k.u.map_file.file_key, 0x1234567890abcdefull);
    ck_assert_uint_eq(d.k.u.map_file.view_size, 3 * 4096);
    ck_assert_uint_eq(d.k.u.map_file.byte_offset, 8192);
    ck_assert_uint_eq(d.k.u.map_file.pid, 4321);
    done(&d);
    roundtrip(&d, ETL_HOOK_UNMAP_FILE, buf, n);
    ck_assert_str_eq(d.k.name, "FileIO/UnmapFile");
    done(&d);
    record_back(&d, ETL_HOOK_UNMAP_FILE, buf, 40); /* cut in ProcessId */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);

    n = etl_kpayload_file_name(buf, sizeof buf, 0x1234567890abcdefull, "/tmp/f");
    ck_assert_uint_eq(n, 8 + 14);
    record_back(&d, ETL_HOOK_FILEIO_NAME, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    done(&d);
}
END_TEST

/* memory_hard_faults: HardFault (PERFINFO v2, 40 bytes) as MOF PageFault_HardFault and
   TraceEvent's MemoryHardFaultTraceData lay it out. */
START_TEST(hard_fault_v2)
{
    uint8_t buf[64];
    etl_khard_fault_desc h = { 123456789, 5 * 4096, 0x7f0000305000ull, 0x1234567890abcdefull, 4321, 3 * 4096 };
    size_t n = etl_kpayload_hard_fault(buf, sizeof buf, &h);
    struct decoded d;

    ck_assert_uint_eq(n, 40);
    roundtrip(&d, ETL_HOOK_PAGE_FAULT_HARD_FAULT, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_PERFINFO);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_HARD_FAULT);
    ck_assert_str_eq(d.k.name, "PageFault/HardFault");
    ck_assert_int_eq(d.k.u.hard_fault.initial_time, 123456789);
    ck_assert_uint_eq(d.k.u.hard_fault.read_offset, 5 * 4096);
    ck_assert_uint_eq(d.k.u.hard_fault.virtual_address, 0x7f0000305000ull);
    ck_assert_uint_eq(d.k.u.hard_fault.file_object, 0x1234567890abcdefull);
    ck_assert_uint_eq(d.k.u.hard_fault.tid, 4321);
    ck_assert_uint_eq(d.k.u.hard_fault.byte_count, 3 * 4096);
    done(&d);
    record_back(&d, ETL_HOOK_PAGE_FAULT_HARD_FAULT, buf, 36); /* cut in ByteCount */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
}
END_TEST

/* A major fault paired with what its thread noted before it (etl_khf_pair): its start, file,
   and the read that holds its page. */
#define F(ts, idx) { ts, 0x800001, 0, 0, 77, idx }           /* an attempt at page idx of file 8:1/77 */
#define A(ts, idx, n) { ts, 0x800001, 1, n, 77, idx }        /* n pages added from idx */
START_TEST(hard_fault_pairing)
{
    const uint64_t P = 4096;
    etl_khard_fault_desc d;
    uint32_t dev;
    uint64_t ino;

    { /* one page read (MADV_RANDOM), the fault tried again after it: timed from its first try */
        const etl_khf_rec r[] = { F(100, 9), A(110, 9, 1), F(300, 9) };
        ck_assert_int_eq(etl_khf_pair(r, 3, 310, P, &dev, &ino, &d), 1);
        ck_assert_uint_eq(dev, 0x800001);
        ck_assert_uint_eq(ino, 77);
        ck_assert_int_eq(d.initial_time, 100);
        ck_assert_uint_eq(d.read_offset, 9 * P);
        ck_assert_uint_eq(d.byte_count, P);
    }
    { /* readahead around page 40: runs of pages next to each other are one read; a run apart
         from it is not its read; an earlier fault's pages and another page's attempt neither */
        const etl_khf_rec r[] = { F(10, 3), A(11, 3, 1), F(20, 5), F(100, 40), A(101, 32, 4), A(102, 36, 8),
                                  A(103, 44, 4), A(104, 60, 2), { 105, 0x800002, 1, 8, 77, 48 } };
        ck_assert_int_eq(etl_khf_pair(r, 9, 200, P, &dev, &ino, &d), 1);
        ck_assert_int_eq(d.initial_time, 100);
        ck_assert_uint_eq(d.read_offset, 32 * P);
        ck_assert_uint_eq(d.byte_count, 16 * P);
    }
    { /* it waited for another's read of its page: nothing read, its page's offset */
        const etl_khf_rec r[] = { F(100, 7), F(150, 7) };
        ck_assert_int_eq(etl_khf_pair(r, 2, 160, P, &dev, &ino, &d), 1);
        ck_assert_int_eq(d.initial_time, 100);
        ck_assert_uint_eq(d.read_offset, 7 * P);
        ck_assert_uint_eq(d.byte_count, 0);
    }
    { /* what comes after the fault's end is not its own (the thread's next fault) */
        const etl_khf_rec r[] = { F(100, 7), A(101, 7, 1), F(400, 8), A(401, 8, 1) };
        ck_assert_int_eq(etl_khf_pair(r, 4, 200, P, &dev, &ino, &d), 1);
        ck_assert_int_eq(d.initial_time, 100);
        ck_assert_uint_eq(d.read_offset, 7 * P);
        ck_assert_uint_eq(d.byte_count, P);
    }
    { /* no file attempt before it (swap, shared memory): none */
        const etl_khf_rec r[] = { A(50, 1, 1), F(400, 8) };
        ck_assert_int_eq(etl_khf_pair(r, 2, 200, P, &dev, &ino, &d), 0);
        ck_assert_int_eq(etl_khf_pair(r, 0, 200, P, &dev, &ino, &d), 0);
    }
}
END_TEST

/* A minor fault's kind from its entry's error code (x86: bit 0 present, bit 1 write) and whether
   a file page was faulted on in it (etl_kpf_kind). */
START_TEST(page_fault_kinds)
{
    ck_assert_uint_eq(etl_kpf_kind(1, 0x6, 0), ETL_HOOK_PAGE_FAULT_DEMAND_ZERO);   /* write, not present, anonymous */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x4, 0), ETL_HOOK_PAGE_FAULT_DEMAND_ZERO);   /* read, not present, anonymous */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x7, 0), ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE); /* write to a present page */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x6, 1), ETL_HOOK_PAGE_FAULT_COPY_ON_WRITE); /* write, file page not mapped */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x4, 1), ETL_HOOK_PAGE_FAULT_TRANSITION);    /* read of a file page */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x0, 1), ETL_HOOK_PAGE_FAULT_TRANSITION);    /* (the kernel's, on a user page) */
    ck_assert_uint_eq(etl_kpf_kind(1, 0x5, 0), ETL_HOOK_PAGE_FAULT_TRANSITION);    /* read of a present page */
    ck_assert_uint_eq(etl_kpf_kind(0, 0x7, 1), ETL_HOOK_PAGE_FAULT_DEMAND_ZERO);   /* no entry known */
}
END_TEST
#undef F
#undef A

/* process_counters: PerfCtr and PerfCtrRundown (SYSTEM v2, 104 bytes) as TraceEvent's
   ProcessCtrTraceData lays them out; a process's counters from /proc. */
START_TEST(process_counters_v2)
{
    uint8_t buf[128];
    etl_kproc_counters pc = { 77, 1234, 9, 300u << 20, 64u << 20, 0, 200u << 20, 60u << 20, 5u << 20, 5u << 20 };
    size_t n = etl_kpayload_process_counters(buf, sizeof buf, &pc);
    struct decoded d;

    ck_assert_uint_eq(n, 104);
    roundtrip(&d, ETL_HOOK_PROCESS_PERF_CTR, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 2);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_PROCESS_COUNTERS);
    ck_assert_str_eq(d.k.name, "Process/PerfCtr");
    ck_assert_uint_eq(d.k.u.process_counters.pid, 77);
    ck_assert_uint_eq(d.k.u.process_counters.page_fault_count, 1234);
    ck_assert_uint_eq(d.k.u.process_counters.handle_count, 9);
    ck_assert_uint_eq(d.k.u.process_counters.peak_virtual_size, 300u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.peak_working_set_size, 64u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.virtual_size, 200u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.working_set_size, 60u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.pagefile_usage, 5u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.private_page_count, 5u << 20);
    ck_assert_uint_eq(d.k.u.process_counters.quota_peak_non_paged_pool_usage, 0);
    done(&d);
    roundtrip(&d, ETL_HOOK_PROCESS_PERF_CTR_RUNDOWN, buf, n);
    ck_assert_str_eq(d.k.name, "Process/PerfCtrRundown");
    done(&d);
    record_back(&d, ETL_HOOK_PROCESS_PERF_CTR, buf, 100); /* cut in PrivatePageCount */
    ck_assert_int_eq(etl_kernel_decode(&d.ev, &d.k), ETL_FAILED);
    done(&d);
#if defined(__linux__)
    memset(&pc, 0, sizeof pc);
    ck_assert_int_eq(etl_kproc_counters_read((uint32_t)getpid(), &pc), 0);
    ck_assert_uint_eq(pc.pid, (uint32_t)getpid());
    ck_assert_uint_gt(pc.virtual_size, 0);
    ck_assert_uint_ge(pc.peak_virtual_size, pc.virtual_size);
    ck_assert_uint_ge(pc.peak_working_set_size, pc.working_set_size);
    ck_assert_uint_gt(pc.working_set_size, 0);
    ck_assert_uint_ge(pc.handle_count, 3); /* stdin, stdout, stderr at least */
    ck_assert_uint_gt(pc.page_fault_count, 0);
    ck_assert_int_eq(etl_kproc_counters_read(UINT32_MAX - 1, &pc), -1); /* no such process */
#endif
}
END_TEST

/* SystemConfig PhyDisk, LogDisk (fixed sizes: 568, 112) and NIC (three strings) as the reader's
   tables lay them out, and their header form. */
START_TEST(sysconfig_disks_nic)
{
    static uint8_t buf[4096];
    etl_ksysconfig_phydisk pd = { .disk_number = 266338304, .bytes_per_sector = 512, .cylinders = 33418 };
    etl_ksysconfig_logdisk ld = { .disk_number = 266338304, .total_clusters = 1000, .file_system = "ext4" };
    etl_ksysconfig_nic nic = { .physical_addr = 0x010000fc02ull, .physical_addr_len = 6, .ipv4_index = 4 };
    int system;
    uint16_t version;

    snprintf(pd.manufacturer, sizeof pd.manufacturer, "ACME disk");
    snprintf(nic.description, sizeof nic.description, "eth0");
    snprintf(nic.ip_addresses, sizeof nic.ip_addresses, "192.0.2.2;fd00::2");
    ck_assert_uint_eq(etl_kpayload_sysconfig_phydisk(buf, sizeof buf, &pd), 568);
    ck_assert_uint_eq(etl_le32(buf), 266338304);
    ck_assert_uint_eq(etl_le64(buf + 16), 33418);
    ck_assert_uint_eq(etl_le16(buf + 40), 'A'); /* Manufacturer, UTF-16 */
    ck_assert_uint_eq(etl_kpayload_sysconfig_logdisk(buf, sizeof buf, &ld), 112);
    ck_assert_uint_eq(etl_le32(buf + 16), 266338304);
    ck_assert_uint_eq(etl_le64(buf + 64), 1000);   /* TotalNumberOfClusters */
    ck_assert_uint_eq(etl_le16(buf + 72), 'e');    /* FileSystem */
    ck_assert_uint_eq(etl_kpayload_sysconfig_nic(buf, sizeof buf, &nic), 20 + 2 * 5 + 2 * 18 + 2);
    ck_assert_uint_eq(etl_le64(buf), 0x010000fc02ull);
    ck_assert_uint_eq(etl_le16(buf + 20), 'e');
    for (uint16_t h = ETL_HOOK_SYSCONFIG_PHYDISK; h <= ETL_HOOK_SYSCONFIG_NIC; h++) {
        ck_assert_int_eq(etl_kcapture_form(h, &system, &version), 0);
        ck_assert_int_eq(system, 1);
        ck_assert_uint_eq(version, 2);
    }
}
END_TEST

/* What the address-space calls say, collected. */
struct vm_seen {
    unsigned n;
    etl_kvm_event e[16];
};
static void vm_collect(void *ctx, const etl_kvm_event *e)
{
    struct vm_seen *s = ctx;
    if (s->n < 16) s->e[s->n] = *e;
    s->n++;
}
static void vm_is(const struct vm_seen *s, unsigned i, int kind, uint64_t base, uint64_t size)
{
    ck_assert_uint_gt(s->n, i);
    ck_assert_int_eq(s->e[i].kind, kind);
    ck_assert_uint_eq(s->e[i].base, base);
    ck_assert_uint_eq(s->e[i].size, size);
}

START_TEST(vm_spaces)
{
    const uint64_t P = 4096, anon = 0x22, shared = 0x01, fixed = 0x10, rw = 3;
    etl_kvm_space sp;
    struct vm_seen s;

    memset(&sp, 0, sizeof sp);
    /* anonymous: reserved and committed, PROT_NONE only reserved; a failed mmap says nothing */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x10000, 3 * P - 100, rw, anon, 0, 0, P, vm_collect, &s), 0);
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x20000, P, 0, anon, 0, 0, P, vm_collect, &s), 0);
    ck_assert_int_eq(etl_kvm_mmap(&sp, (uint64_t)-12, P, rw, anon, 0, 0, P, vm_collect, &s), -1);
    ck_assert_uint_eq(s.n, 2);
    vm_is(&s, 0, ETL_KVM_ALLOC, 0x10000, 3 * P);
    ck_assert_uint_eq(s.e[0].flags, 0x3000);
    ck_assert_uint_eq(s.e[1].flags, 0x2000);
    /* a file view, then a munmap across it and anonymous memory on both sides: a VirtualFree,
       the view's UnmapFile, a VirtualFree */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x40000, 4 * P, 1, shared, 77, 2 * P, P, vm_collect, &s), 0);
    vm_is(&s, 0, ETL_KVM_MAP, 0x40000, 4 * P);
    ck_assert_uint_eq(s.e[0].file_key, 77);
    ck_assert_uint_eq(s.e[0].offset, 2 * P);
    ck_assert_uint_eq(sp.nviews, 1);
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_munmap(&sp, 0x3f000, 3 * P, 0, P, vm_collect, &s), 0); /* [0x3f000, 0x42000) */
    ck_assert_uint_eq(s.n, 2);
    vm_is(&s, 0, ETL_KVM_FREE, 0x3f000, P);
    ck_assert_uint_eq(s.e[0].flags, 0x8000);
    vm_is(&s, 1, ETL_KVM_UNMAP, 0x40000, 2 * P);
    ck_assert_uint_eq(s.e[1].offset, 2 * P);
    ck_assert_uint_eq(sp.nviews, 1); /* its last two pages stay, at their offset */
    ck_assert_uint_eq(sp.views[0].base, 0x42000);
    ck_assert_uint_eq(sp.views[0].offset, 4 * P);
    /* a hole in a view: both sides stay */
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x80000, 8 * P, 1, shared, 78, 0, P, NULL, NULL), 0);
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_munmap(&sp, 0x82000, 2 * P, 0, P, vm_collect, &s), 0);
    ck_assert_uint_eq(s.n, 1);
    vm_is(&s, 0, ETL_KVM_UNMAP, 0x82000, 2 * P);
    ck_assert_uint_eq(sp.nviews, 3);
    ck_assert_uint_eq(sp.views[2].base, 0x84000);
    ck_assert_uint_eq(sp.views[2].offset, 4 * P);
    /* a failed munmap, an unaligned one: nothing */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_munmap(&sp, 0x80000, P, -22, P, vm_collect, &s), -1);
    ck_assert_int_eq(etl_kvm_munmap(&sp, 0x80001, P, 0, P, vm_collect, &s), -1);
    ck_assert_uint_eq(s.n, 0);
    /* MAP_FIXED over a view: its UnmapFile first, then the new anonymous memory */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x80000, P, rw, anon | fixed, 0, 0, P, vm_collect, &s), 0);
    ck_assert_uint_eq(s.n, 2);
    vm_is(&s, 0, ETL_KVM_UNMAP, 0x80000, P);
    vm_is(&s, 1, ETL_KVM_ALLOC, 0x80000, P);
    /* mremap: anonymous grown in place, shrunk, moved; a view moved */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_mremap(&sp, 0x10000, 3 * P, 5 * P, 1, 0x10000, P, vm_collect, &s), 0);
    ck_assert_int_eq(etl_kvm_mremap(&sp, 0x10000, 5 * P, 2 * P, 0, 0x10000, P, vm_collect, &s), 0);
    ck_assert_int_eq(etl_kvm_mremap(&sp, 0x10000, 2 * P, 4 * P, 1, 0x90000, P, vm_collect, &s), 0);
    ck_assert_uint_eq(s.n, 4);
    vm_is(&s, 0, ETL_KVM_ALLOC, 0x13000, 2 * P);
    vm_is(&s, 1, ETL_KVM_FREE, 0x12000, 3 * P);
    vm_is(&s, 2, ETL_KVM_FREE, 0x10000, 2 * P);
    vm_is(&s, 3, ETL_KVM_ALLOC, 0x90000, 4 * P);
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_mremap(&sp, 0x42000, 2 * P, 3 * P, 1, 0xa0000, P, vm_collect, &s), 0);
    ck_assert_uint_eq(s.n, 2);
    vm_is(&s, 0, ETL_KVM_UNMAP, 0x42000, 2 * P);
    vm_is(&s, 1, ETL_KVM_MAP, 0xa0000, 3 * P);
    ck_assert_uint_eq(s.e[1].file_key, 77);
    ck_assert_uint_eq(s.e[1].offset, 4 * P);
    /* brk: the first call only learns the break; growth and shrinking by whole pages */
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(etl_kvm_brk(&sp, 0, 0x500100, P, vm_collect, &s), -1);
    ck_assert_int_eq(etl_kvm_brk(&sp, 0x500100 + 2 * P, 0x500100 + 2 * P, P, vm_collect, &s), 0);
    ck_assert_int_eq(etl_kvm_brk(&sp, 0x500100 + 3 * P, 0x500100 + 2 * P, P, vm_collect, &s), -1); /* refused */
    ck_assert_int_eq(etl_kvm_brk(&sp, 0x500100, 0x500100, P, vm_collect, &s), 0);
    ck_assert_uint_eq(s.n, 2);
    vm_is(&s, 0, ETL_KVM_ALLOC, 0x501000, 2 * P);
    vm_is(&s, 1, ETL_KVM_FREE, 0x501000, 2 * P);
    etl_kvm_space_free(&sp);

    /* an exec at 100 handled after a view made at 150 (another processor's record): the view
       and break from before it go, the view after it stays */
    memset(&sp, 0, sizeof sp);
    sp.now = 50;
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x40000, P, 1, shared, 7, 0, P, NULL, NULL), 0);
    ck_assert_int_eq(etl_kvm_brk(&sp, 0, 0x500000, P, NULL, NULL), -1);
    sp.now = 150;
    ck_assert_int_eq(etl_kvm_mmap(&sp, 0x50000, P, 1, shared, 8, 0, P, NULL, NULL), 0);
    etl_kvm_space_forget(&sp, 100);
    ck_assert_uint_eq(sp.nviews, 1);
    ck_assert_uint_eq(sp.views[0].file_key, 8);
    ck_assert_uint_eq(sp.brk, 0);
    etl_kvm_space_free(&sp);
}
END_TEST

START_TEST(flag_names)
{
    char buf[ETL_KERNEL_FLAGS_NAMES_SIZE];

    ck_assert_uint_eq(etl_kernel_flag_from_name("process"), 0x1);
    ck_assert_uint_eq(etl_kernel_flag_from_name("image_load"), 0x4);
    ck_assert_uint_eq(etl_kernel_flag_from_name("dispatcher"), 0x800);
    ck_assert_uint_eq(etl_kernel_flag_from_name("profile"), 0x01000000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("disk_io"), 0x100);
    ck_assert_uint_eq(etl_kernel_flag_from_name("syscall"), 0x80);
    ck_assert_uint_eq(etl_kernel_flag_from_name("dpc"), 0x20);
    ck_assert_uint_eq(etl_kernel_flag_from_name("interrupt"), 0x40);
    ck_assert_uint_eq(etl_kernel_flag_from_name("memory_page_faults"), 0x1000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("network_tcpip"), 0x10000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("file_io"), 0x02000000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("file_io_init"), 0x04000000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("disk_file_io"), 0x200);
    ck_assert_uint_eq(etl_kernel_flag_from_name("virtual_alloc"), 0x4000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("vamap"), 0x8000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("process_counters"), 0x8);
    ck_assert_uint_eq(etl_kernel_flag_from_name("memory_hard_faults"), 0x2000);
    ck_assert_uint_eq(etl_kernel_flag_from_name("file"), 0);
    ck_assert_uint_eq(etl_kernel_flag_from_name(NULL), 0);
    ck_assert_str_eq(etl_kernel_flags_format(ETL_KERNEL_ALL, buf, sizeof buf),
                     "process,thread,image_load,cswitch,dispatcher,profile,disk_io,syscall,dpc,interrupt,memory_page_faults,"
                     "memory_hard_faults,"
                     "network_tcpip,file_io,file_io_init,disk_file_io,virtual_alloc,vamap,process_counters");
    ck_assert_str_eq(etl_kernel_flags_format(ETL_KERNEL_PROFILE | ETL_KERNEL_CSWITCH, buf, sizeof buf),
                     "cswitch,profile");
    ck_assert_str_eq(etl_kernel_flags_format(0, buf, sizeof buf), "");
    ck_assert_str_eq(etl_kernel_flags_format(ETL_KERNEL_ALL, buf, 12), "process"); /* whole names only */
}
END_TEST

/* What is refused before any perf event is opened (no root needed). */
START_TEST(refusals)
{
    etl_session_properties p;
    etl_session *s;

    memset(&p, 0, sizeof p);
    p.log_file_mode = ETL_MODE_BUFFERING;
    p.clock_type = ETL_CLOCK_SYSTEMTIME;
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_OK);
    ck_assert_int_eq(etl_session_enable_kernel(s, 0, 0, 0), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "are not a non-empty set of process,thread"));
    ck_assert_int_eq(etl_session_enable_kernel(s, 0x8000, 0, 0), ETL_FAILED);
    ck_assert_int_eq(etl_session_enable_kernel(s, ETL_KERNEL_PROCESS, ETL_KERNEL_PROCESS, 0),
                     ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "stack walks are for profile, cswitch and dispatcher"));
    ck_assert_int_eq(etl_session_enable_kernel(s, ETL_KERNEL_CSWITCH, ETL_KERNEL_PROFILE, 0),
                     ETL_FAILED);
    ck_assert_int_eq(etl_session_enable_kernel(s, ETL_KERNEL_PROCESS, 0, 0), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_session_error(s), "clock must be PerfCounter"));
    /* No kernel capture: nothing was mounted, nothing to tell (tests/tracefs.test: a mount). */
    ck_assert_str_eq(etl_session_kernel_note(s), "");
    ck_assert_str_eq(etl_session_kernel_note(NULL), "");
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
}
END_TEST

/* A kernel session's flags enable the kernel events that produce them as LBR triggers
   (etl_session_configure_lbr): refused before the capture starts, taken after. Root only. */
START_TEST(kernel_flags_enable_lbr_triggers)
{
    etl_session_properties p;
    etl_classic_event_id cswitch;
    etl_session *s;

    if (geteuid() != 0) {
        fprintf(stderr, "kernel_flags_enable_lbr_triggers: not root, not run\n");
        return;
    }
    memset(&p, 0, sizeof p);
    p.log_file_mode = ETL_MODE_BUFFERING;
    ck_assert_int_eq(etl_lbr_trigger_parse("cswitch", &cswitch), ETL_OK);
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_OK);
    ck_assert_int_eq(etl_session_configure_lbr(s, 0, &cswitch, 1), ETL_FAILED);
    ck_assert_msg(etl_session_enable_kernel(s, ETL_KERNEL_CSWITCH, 0, 0) == ETL_OK, "%s", etl_session_error(s));
    ck_assert_msg(etl_session_configure_lbr(s, 0, &cswitch, 1) == ETL_OK, "%s", etl_session_error(s));
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
}
END_TEST

static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* LBR capture runs in the kernel session's rings. Where this machine has no branch-stack
   sampling (this VM), starting it fails with the cause and the processor, and the kernel
   session's own profile goes on; where it has, each LBR record has its SampledProfile at its
   timestamp in the same processor's buffer, and every sample of a processor after its first
   LBR record has one. Root only. */
#define MAX_SEEN 65536
struct seen { int64_t ts; uint32_t cpu; };
static int seen_cmp(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

START_TEST(lbr_in_the_kernel_rings)
{
    etl_session_properties p;
    etl_classic_event_id profile;
    etl_lbr_capture *c = NULL;
    etl_session *s;
    etl_reader *r;
    etl_event ev;
    char probe_err[512];
    int rc, probe;
    struct seen *smp = calloc(MAX_SEEN, sizeof *smp), *lbr = calloc(MAX_SEEN, sizeof *lbr);
    unsigned nsmp = 0, nlbr = 0;
    volatile unsigned long spin = 0;

    if (geteuid() != 0) {
        fprintf(stderr, "lbr_in_the_kernel_rings: not root, not run\n");
        free(smp);
        free(lbr);
        return;
    }
    ck_assert(smp && lbr);
    memset(&p, 0, sizeof p);
    p.log_file_name = test_dir_path("lbr.etl");
    ck_assert_int_eq(etl_lbr_trigger_parse("profile", &profile), ETL_OK);
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_OK);
    ck_assert_msg(etl_session_enable_kernel(s, ETL_KERNEL_PROFILE, ETL_KERNEL_PROFILE, 10000) == ETL_OK,
                  "%s", etl_session_error(s));
    ck_assert_msg(etl_session_configure_lbr(s, 0, &profile, 1) == ETL_OK, "%s", etl_session_error(s));
    probe = etl_lbr_capture_probe(0, probe_err, sizeof probe_err);
    rc = etl_lbr_capture_start(&c, s);
    if (probe != ETL_OK) {
        ck_assert_int_eq(rc, ETL_FAILED);
        ck_assert_ptr_null(c);
        const char *why = etl_session_error(s);
        ck_assert_msg(strncmp(why, "LBR capture: ", 13) == 0 &&
                      strstr(why, "(perf_event_open of cycles with a branch stack on processor ") != NULL, "%s", why);
    } else {
        ck_assert_msg(rc == ETL_OK, "%s", etl_session_error(s));
    }
    for (double t0 = now_s(); now_s() - t0 < 0.2;) spin++;
    etl_lbr_capture_stop(c);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path("lbr.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        etl_kernel_event k;
        if (etl_kernel_decode(&ev, &k) != 1) continue;
        if (k.kclass == ETL_KCLASS_LBR && nlbr < MAX_SEEN) {
            ck_assert_int_eq(k.u.lbr.timestamp, ev.timestamp);
            lbr[nlbr++] = (struct seen){ ev.timestamp, ev.cpu };
        } else if (k.kclass == ETL_KCLASS_SAMPLED_PROFILE && nsmp < MAX_SEEN) {
            smp[nsmp++] = (struct seen){ ev.timestamp, ev.cpu };
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_uint_gt(nsmp, 0); /* the profile went on, whichever source it had */
    if (probe != ETL_OK) ck_assert_uint_eq(nlbr, 0);
    else {
        unsigned j = 0;
        ck_assert_uint_gt(nlbr, 0);
        qsort(smp, nsmp, sizeof *smp, seen_cmp);
        qsort(lbr, nlbr, sizeof *lbr, seen_cmp);
        /* Walk both per processor: from a processor's first LBR on, samples and LBRs pair up. */
        for (unsigned i = 0; i < nsmp; i++) {
            int started = j < nlbr && lbr[j].cpu == smp[i].cpu && lbr[j].ts <= smp[i].ts;
            if (j > 0 && lbr[j - 1].cpu == smp[i].cpu) started = 1;
            if (!started) continue;
            ck_assert_msg(j < nlbr && lbr[j].cpu == smp[i].cpu && lbr[j].ts == smp[i].ts,
                          "processor %u: the sample at %lld has no LBR record", smp[i].cpu, (long long)smp[i].ts);
            j++;
        }
        ck_assert_uint_eq(j, nlbr); /* and no LBR record without its sample */
    }
    free(smp);
    free(lbr);
}
END_TEST

/* Each hook kcapture writes has, in perfview_diaghub.kernel.1.etl (a Windows 10 kernel
   trace), events of the header kind and version kcapture gives it, where the sample has it. */
START_TEST(forms_as_windows)
{
    static const uint16_t hooks[] = { ETL_HOOK_PROCESS_START, ETL_HOOK_PROCESS_END, ETL_HOOK_PROCESS_DCSTART,
                                      ETL_HOOK_PROCESS_DCEND, ETL_HOOK_PROCESS_LOAD_IMAGE, ETL_HOOK_IMAGE_DCSTART,
                                      ETL_HOOK_IMAGE_DCEND, ETL_HOOK_RUNDOWN_COMPLETE, ETL_HOOK_IMAGE_UNLOAD };
    unsigned seen[sizeof hooks / sizeof hooks[0]] = { 0 }, same[sizeof hooks / sizeof hooks[0]] = { 0 };
    etl_reader *r;
    etl_event ev;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_diaghub.kernel.1.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
            int system;
            uint16_t version;
            if (ev.kind != ETL_KIND_SYSTEM && ev.kind != ETL_KIND_PERFINFO) continue;
            if (ev.hook_id != hooks[i] || ev.pointer_size != 8) continue;
            etl_kcapture_form(hooks[i], &system, &version);
            seen[i]++;
            if (ev.kind == (system ? ETL_KIND_SYSTEM : ETL_KIND_PERFINFO) && ev.version == version) same[i]++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        ck_assert_msg(seen[i] > 0, "hook 0x%04x is not in the sample", hooks[i]);
        ck_assert_msg(same[i] > 0, "hook 0x%04x: none of the sample's %u events has kcapture's header and version",
                      hooks[i], seen[i]);
    }
}
END_TEST

/* Image Unload: the Load's payload under hook 0x1402, which decodes as Image/Unload. */
START_TEST(image_unload)
{
    uint8_t buf[512];
    size_t n = etl_kpayload_image(buf, sizeof buf, 0x7f0000000000ull, 0x1c5000, 4242, "/usr/lib/libz.so.1");
    struct decoded d;

    roundtrip(&d, ETL_HOOK_IMAGE_UNLOAD, buf, n);
    ck_assert_int_eq(d.ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(d.ev.version, 3);
    ck_assert_int_eq(d.k.kclass, ETL_KCLASS_IMAGE);
    ck_assert_str_eq(d.k.name, "Image/Unload");
    ck_assert_uint_eq(d.k.u.image.image_base, 0x7f0000000000ull);
    ck_assert_uint_eq(d.k.u.image.pid, 4242);
    done(&d);
}
END_TEST

/* What munmap and mremap remove, as the kernel checks and rounds their arguments. */
START_TEST(unmap_ranges)
{
    uint64_t lo, hi;

    ck_assert_int_eq(etl_kunmap_range(0x10000, 0x1000, 4096, &lo, &hi), 0);
    ck_assert_uint_eq(lo, 0x10000);
    ck_assert_uint_eq(hi, 0x11000);
    ck_assert_int_eq(etl_kunmap_range(0x10000, 1, 4096, &lo, &hi), 0); /* rounded up to a page */
    ck_assert_uint_eq(hi, 0x11000);
    ck_assert_int_eq(etl_kunmap_range(0x10010, 0x1000, 4096, &lo, &hi), -1); /* EINVAL: not aligned */
    ck_assert_int_eq(etl_kunmap_range(0x10000, 0, 4096, &lo, &hi), -1);      /* EINVAL: empty */
    ck_assert_int_eq(etl_kunmap_range(UINT64_MAX - 0xFFF, 0x2000, 4096, &lo, &hi), -1); /* wraps */
    ck_assert_int_eq(etl_kunmap_range(0x10000, UINT64_MAX, 4096, &lo, &hi), -1);

    /* mremap: a shrink in place removes the tail; MREMAP_FIXED moves (removes) the whole old
       range; a growth, MREMAP_DONTUNMAP and refused calls remove nothing known. */
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x1001, 0, 4096, &lo, &hi), 0);
    ck_assert_uint_eq(lo, 0x12000);
    ck_assert_uint_eq(hi, 0x14000);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x8000, 3, 4096, &lo, &hi), 0);
    ck_assert_uint_eq(lo, 0x10000);
    ck_assert_uint_eq(hi, 0x14000);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x8000, 1, 4096, &lo, &hi), -1);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x4000, 0, 4096, &lo, &hi), -1);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x4000, 5, 4096, &lo, &hi), -1);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0x1000, 2, 4096, &lo, &hi), -1); /* FIXED without MAYMOVE */
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0x4000, 0, 0, 4096, &lo, &hi), -1);
    ck_assert_int_eq(etl_kmremap_range(0x10000, 0, 0x1000, 1, 4096, &lo, &hi), -1);
    ck_assert_int_eq(etl_kmremap_range(0x10800, 0x4000, 0x1000, 0, 4096, &lo, &hi), -1);
}
END_TEST

/* Which images an unmapped range removes: an image unloads when the last of its code goes. */
START_TEST(unmap_images)
{
    static const struct {
        uint64_t lo, hi;       /* removed */
        int result;
        uint64_t code_lo, code_hi; /* what is left of code [0x10000, 0x20000) */
    } t[] = {
        { 0x10000, 0x20000, ETL_KUNMAP_GONE, 0x10000, 0x20000 },   /* exactly */
        { 0x0, 0x30000, ETL_KUNMAP_GONE, 0x10000, 0x20000 },       /* and more (dlclose's whole span) */
        { 0x0, 0x10000, ETL_KUNMAP_KEPT, 0x10000, 0x20000 },       /* just below (headers before the code) */
        { 0x20000, 0x21000, ETL_KUNMAP_KEPT, 0x10000, 0x20000 },   /* just above */
        { 0x0, 0x11000, ETL_KUNMAP_SHRUNK, 0x11000, 0x20000 },     /* the head */
        { 0x1f000, 0x30000, ETL_KUNMAP_SHRUNK, 0x10000, 0x1f000 }, /* the tail */
        { 0x14000, 0x15000, ETL_KUNMAP_KEPT, 0x10000, 0x20000 },   /* a hole: code on both sides */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t lo = 0x10000, hi = 0x20000;
        ck_assert_int_eq(etl_kunmap_image(t[i].lo, t[i].hi, &lo, &hi), t[i].result);
        ck_assert_uint_eq(lo, t[i].code_lo);
        ck_assert_uint_eq(hi, t[i].code_hi);
    }
    /* Cut from both ends in turns, the last piece takes it. */
    {
        uint64_t lo = 0x10000, hi = 0x20000;
        ck_assert_int_eq(etl_kunmap_image(0x10000, 0x18000, &lo, &hi), ETL_KUNMAP_SHRUNK);
        ck_assert_int_eq(etl_kunmap_image(0x1c000, 0x20000, &lo, &hi), ETL_KUNMAP_SHRUNK);
        ck_assert_int_eq(etl_kunmap_image(0x18000, 0x1c000, &lo, &hi), ETL_KUNMAP_GONE);
    }
}
END_TEST

START_TEST(signal_defaults)
{
    ck_assert_int_eq(etl_ksignal_default(SIGKILL), 1);
    ck_assert_int_eq(etl_ksignal_default(SIGTERM), 1);
    ck_assert_int_eq(etl_ksignal_default(SIGPIPE), 1);
    ck_assert_int_eq(etl_ksignal_default(SIGUSR1), 1);
    ck_assert_int_eq(etl_ksignal_default(SIGRTMIN), 1);
    ck_assert_int_eq(etl_ksignal_default(SIGSEGV), 2);
    ck_assert_int_eq(etl_ksignal_default(SIGABRT), 2);
    ck_assert_int_eq(etl_ksignal_default(SIGCHLD), 0);
    ck_assert_int_eq(etl_ksignal_default(SIGCONT), 0);
    ck_assert_int_eq(etl_ksignal_default(SIGSTOP), 0);
    ck_assert_int_eq(etl_ksignal_default(SIGWINCH), 0);
    ck_assert_int_eq(etl_ksignal_default(0), 0);
    ck_assert_int_eq(etl_ksignal_default(65), 0);
}
END_TEST

/* The ExitStatus from what the tracepoints said, in any order they are brought. */
START_TEST(exit_status)
{
    etl_kexit x;
    int32_t st;

    etl_kexit_init(&x); /* nothing seen (records lost): 0, not known */
    ck_assert_int_eq(etl_kexit_status(&x, 100, &st), 0);
    ck_assert_int_eq(st, 0);

    etl_kexit_init(&x); /* exit(3) */
    etl_kexit_group(&x, 50, 3);
    ck_assert_int_eq(etl_kexit_status(&x, 100, &st), 1);
    ck_assert_int_eq(st, 3);
    ck_assert_int_eq(etl_kexit_status(&x, 40, &st), 0); /* not before it happened */

    etl_kexit_init(&x); /* exit(-1) as waitpid sees it; the other threads then die of SIGKILL */
    etl_kexit_delivered(&x, 60, SIGKILL, 1);
    etl_kexit_group(&x, 50, -1);
    ck_assert_int_eq(etl_kexit_status(&x, 100, &st), 1);
    ck_assert_int_eq(st, 255);

    etl_kexit_init(&x); /* kill -9 */
    etl_kexit_sent(&x, 40, SIGKILL);
    etl_kexit_delivered(&x, 50, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGKILL);

    etl_kexit_init(&x); /* kill -TERM: the group exit is decided when it is sent; threads see SIGKILL */
    etl_kexit_delivered(&x, 50, SIGKILL, 1);
    etl_kexit_sent(&x, 40, SIGTERM);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGTERM);

    etl_kexit_init(&x); /* SIGTERM caught by a handler, later killed by an exit_group's SIGKILL: 0 */
    etl_kexit_sent(&x, 10, SIGTERM);
    etl_kexit_delivered(&x, 11, SIGTERM, 0);
    etl_kexit_group(&x, 50, 0);
    etl_kexit_delivered(&x, 51, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 0);

    etl_kexit_init(&x); /* SIGTERM caught, then SIGKILL from nowhere traced (another exec's): 137 */
    etl_kexit_sent(&x, 10, SIGTERM);
    etl_kexit_delivered(&x, 11, SIGTERM, 0);
    etl_kexit_delivered(&x, 51, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGKILL);

    etl_kexit_init(&x); /* a segfault: delivered as itself (it dumps core: not decided when sent) */
    etl_kexit_sent(&x, 40, SIGSEGV);
    etl_kexit_delivered(&x, 45, SIGSEGV, 1);
    etl_kexit_delivered(&x, 46, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGSEGV);

    etl_kexit_init(&x); /* the leader's exit(2) after its threads: what waitpid reports */
    etl_kexit_leader(&x, 50, 2);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 2);
    etl_kexit_group(&x, 60, 9); /* another thread's exit_group before the end: waitpid says 9 */
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 9);
    etl_kexit_status(&x, 55, &st); /* the end written at the leader's exit, before it */
    ck_assert_int_eq(st, 2);
    etl_kexit_group(&x, 40, 7); /* the first group exit counts */
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 7);

    /* An exec forgets what the program before it was sent, not what its successor was: the
       successor's kill -9 can be read (on another processor) before the exec is. */
    etl_kexit_init(&x);
    etl_kexit_sent(&x, 10, SIGTERM);   /* the program before the exec at 20 caught these */
    etl_kexit_delivered(&x, 11, SIGTERM, 0);
    etl_kexit_group(&x, 12, 4);        /* (a thread's exit_group, not the process's end) */
    etl_kexit_sent(&x, 30, SIGKILL);   /* the new program's kill -9, read first */
    etl_kexit_delivered(&x, 31, SIGKILL, 1);
    etl_kexit_forget(&x, 20);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGKILL);
    etl_kexit_init(&x);
    etl_kexit_sent(&x, 10, SIGHUP);    /* sent before the exec: decides nothing after it */
    etl_kexit_delivered(&x, 11, SIGKILL, 1);
    etl_kexit_leader(&x, 12, 6);
    etl_kexit_forget(&x, 20);
    ck_assert_int_eq(etl_kexit_status(&x, 100, &st), 0);
    etl_kexit_delivered(&x, 40, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGKILL);
    etl_kexit_init(&x);
    etl_kexit_sent(&x, 25, SIGTERM);   /* after the exec: kept */
    etl_kexit_sent(&x, 15, SIGUSR1);
    etl_kexit_forget(&x, 20);
    etl_kexit_delivered(&x, 40, SIGKILL, 1);
    etl_kexit_status(&x, 100, &st);
    ck_assert_int_eq(st, 128 + SIGTERM);

    etl_kexit_init(&x); /* more signals than kept: the latest count */
    for (int i = 0; i < 3 * ETL_KEXIT_SIGNALS; i++) etl_kexit_sent(&x, 10 + i, i % 2 ? SIGHUP : SIGUSR2);
    etl_kexit_sent(&x, 1, SIGINT); /* older than all kept: dropped */
    etl_kexit_delivered(&x, 100, SIGKILL, 1);
    etl_kexit_status(&x, 200, &st);
    ck_assert_int_eq(st, 128 + SIGHUP);
}
END_TEST

/* A new program's stack as exec leaves it (at sp: argc, argv[], NULL, envp[], NULL; the
   strings higher up, after a gap), word bytes a pointer; the arguments args (n of them). */
static size_t exec_stack(uint8_t *b, size_t size, uint64_t sp, unsigned word, const char *const *args, unsigned n,
                         size_t gap)
{
    size_t o = 0, s = word * (n + 4) + gap;

    memset(b, 0xAA, size);
    for (unsigned i = 0; i < word; i++) b[o + i] = (uint8_t)((uint64_t)n >> (8 * i));
    o += word;
    for (unsigned a = 0; a < n; a++) {
        uint64_t at = sp + s;
        for (unsigned i = 0; i < word; i++) b[o + i] = (uint8_t)(at >> (8 * i));
        o += word;
        memcpy(b + s, args[a], strlen(args[a]) + 1);
        s += strlen(args[a]) + 1;
    }
    memset(b + o, 0, 3 * word); /* argv's NULL, an empty environment, its NULL */
    return s;
}

START_TEST(exec_command_line)
{
    static const char *const args[] = { "dd", "if=/dev/zero", "", "of=/dev/null" };
    uint8_t b[512];
    char out[64];
    uint64_t sp = 0x7ffd12340000ull;
    size_t end;

    end = exec_stack(b, sizeof b, sp, 8, args, 4, 100);
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp, 8, out, sizeof out), 0);
    ck_assert_str_eq(out, "dd if=/dev/zero  of=/dev/null"); /* an empty argument: two spaces, as /proc */
    /* a 32-bit process: 4-byte words */
    end = exec_stack(b, sizeof b, 0xffd00000u, 4, args, 2, 8);
    ck_assert_int_eq(etl_kexec_command_line(b, end, 0xffd00000u, 4, out, sizeof out), 0);
    ck_assert_str_eq(out, "dd if=/dev/zero");
    /* the dump ends inside the second argument: what it holds */
    end = exec_stack(b, sizeof b, sp, 8, args, 4, 100);
    ck_assert_int_eq(etl_kexec_command_line(b, end - 20, sp, 8, out, sizeof out), 0);
    ck_assert_str_eq(out, "dd if=/dev");
    /* ... before the first argument (a page of the gap nothing touched): none */
    ck_assert_int_eq(etl_kexec_command_line(b, 8 * 8 + 50, sp, 8, out, sizeof out), -1);
    ck_assert_str_eq(out, "");
    /* a small out: cut, terminated */
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp, 8, out, 8), 0);
    ck_assert_str_eq(out, "dd if=/");
    /* argc beyond the dump, 0, a pointer below sp, a word size that is none, no room for argc */
    memset(b, 0xFF, 8);
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp, 8, out, sizeof out), -1);
    memset(b, 0, 8);
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp, 8, out, sizeof out), -1);
    end = exec_stack(b, sizeof b, sp, 8, args, 4, 100);
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp + 0x10000, 8, out, sizeof out), -1);
    ck_assert_int_eq(etl_kexec_command_line(b, end, sp, 2, out, sizeof out), -1);
    ck_assert_int_eq(etl_kexec_command_line(b, 4, sp, 8, out, sizeof out), -1);
}
END_TEST

/* ---- the readers' records handed over by hand, in an order the test chooses ---- */

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
/* A kernel capture of two processors without perf events: what the readers would hand to its
   record handlers is handed by the test (cpus[0] and [1] are the readers; their progress is
   set by the test). */
static struct etl_kcapture *fake_capture(etl_session *s, uint32_t flags)
{
    struct etl_kcapture *k = calloc(1, sizeof *k);

    ck_assert_ptr_nonnull(k);
    k->s = s;
    k->flags = flags;
    atomic_init(&k->stop, 0);
    pthread_mutex_init(&k->plock, NULL);
    pthread_mutex_init(&k->dlock, NULL);
    pthread_mutex_init(&k->nlock, NULL);
    ck_assert_int_eq(etl_kexec_init(k), 0);
    k->ncpu = 2;
    k->cpus = calloc(2, sizeof *k->cpus);
    ck_assert_ptr_nonnull(k->cpus);
    for (unsigned i = 0; i < 2; i++) {
        struct kcpu *c = &k->cpus[i];
        c->k = k;
        c->cpu = (int)i;
        c->page = 4096;
        for (int e = 0; e < EV_COUNT; e++) c->fd[e] = -1;
        atomic_store(&c->progress, INT64_MIN);
        atomic_store(&c->stuck_at, INT64_MIN);
        c->last_ts = INT64_MIN;
    }
    return k;
}

static void fake_capture_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < k->ncpu; i++) {
        free(k->cpus[i].exec_ring);
        free(k->cpus[i].def);
    }
    free(k->cpus);
    etl_kpcache_free(k);
    etl_kexec_free(k);
    etl_kdisk_free(k);
    etl_knames_free(k);
    pthread_mutex_destroy(&k->plock);
    pthread_mutex_destroy(&k->dlock);
    pthread_mutex_destroy(&k->nlock);
    free(k);
}

static void put32(uint8_t *p, uint32_t v) { for (unsigned i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (unsigned i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* A perf record's header and its sample_id trailer (TID, TIME, CPU, IDENTIFIER). */
static void perf_header(uint8_t *r, uint32_t type, uint16_t misc, uint16_t size)
{
    put32(r, type);
    r[4] = (uint8_t)misc;
    r[5] = (uint8_t)(misc >> 8);
    r[6] = (uint8_t)size;
    r[7] = (uint8_t)(size >> 8);
}

static void perf_trailer(uint8_t *r, uint16_t size, uint32_t pid, uint32_t tid, int64_t ts, uint32_t cpu)
{
    put32(r + size - 32, pid);
    put32(r + size - 28, tid);
    put64(r + size - 24, (uint64_t)ts);
    put64(r + size - 16, cpu);
    put64(r + size - 8, 0);
}

/* PERF_RECORD_COMM of an exec (pid's new comm); its size. */
static uint16_t comm_exec_record(uint8_t *r, uint32_t pid, const char *comm, int64_t ts, uint32_t cpu)
{
    uint16_t size = 8 + 8 + 16 + 32;

    memset(r, 0, size);
    perf_header(r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, size);
    put32(r + 8, pid);
    put32(r + 12, pid);
    snprintf((char *)r + 16, 16, "%s", comm);
    perf_trailer(r, size, pid, pid, ts, cpu);
    return size;
}

/* PERF_RECORD_FORK (fork) or PERF_RECORD_EXIT of process pid; its size. */
static uint16_t task_record(uint8_t *r, int fork, uint32_t pid, uint32_t ppid, int64_t ts, uint32_t cpu)
{
    uint16_t size = 8 + 24 + 32;

    memset(r, 0, size);
    perf_header(r, fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT, 0, size);
    put32(r + 8, pid);
    put32(r + 12, ppid);
    put32(r + 16, pid);
    put32(r + 20, ppid);
    put64(r + 24, (uint64_t)ts);
    perf_trailer(r, size, fork ? ppid : pid, fork ? ppid : pid, ts, cpu);
    return size;
}

/* An exec whose COMM record a reader finds while the reader of another processor, which holds
   the process's fork, is behind. The COMM waits for it, however late its own reader got to it
   (a loaded machine: the reader had no processor for 100 ms), while that reader gets on; it
   goes once the other has handled what came before it, or when the other does not get on
   (stuck: its processor held by something else), and then the next exec does not wait for it. */
START_TEST(exec_waits_for_the_fork)
{
    struct etl_kcapture *k = fake_capture(NULL, ETL_KERNEL_PROCESS);
    struct kcpu *fork_reader = &k->cpus[0], *reader = &k->cpus[1];
    uint8_t r[128];
    int64_t ts = etl_monoclock_exact() - 100000000, t0;
    uint16_t n = comm_exec_record(r, 4242, "dd", ts, 1);
    unsigned polls = 0;

    k->exec_args = 0; /* no exec samples: the COMM waits for the others only */
    atomic_store(&reader->progress, ts - 1);
    atomic_store(&fork_reader->progress, ts - 5000000); /* the fork, 3 ms before, not handled yet */
    ck_assert_msg(etl_kexec_wait(reader, r, n, 0) == 1, "the exec went before the fork another reader holds");
    atomic_store(&fork_reader->progress, ts - 2000000); /* it gets on */
    ck_assert_int_eq(etl_kexec_wait(reader, r, n, 0), 1);
    atomic_store(&fork_reader->progress, ts);           /* past the exec: the fork is handled */
    ck_assert_int_eq(etl_kexec_wait(reader, r, n, 0), 0);

    /* A reader that does not get on: waited for while it might, then not. */
    ts = etl_monoclock_exact() - 100000000;
    n = comm_exec_record(r, 4243, "dd", ts, 1);
    atomic_store(&fork_reader->progress, ts - 1000000);
    t0 = etl_monoclock_exact();
    while (etl_kexec_wait(reader, r, n, 0)) {
        ck_assert_msg(etl_monoclock_exact() - t0 < 5000000000, "an exec waits forever for a reader that is stuck");
        nanosleep(&(struct timespec){ 0, 20000000 }, NULL); /* a reader's poll */
        polls++;
    }
    ck_assert_int_ge(etl_monoclock_exact() - t0, 400000000);
    ck_assert_uint_gt(polls, 1); /* (however long a loaded machine makes each poll) */
    ck_assert_int_eq(atomic_load(&fork_reader->stuck_at), ts - 1000000);
    n = comm_exec_record(r, 4244, "dd", ts + 1000, 1);
    ck_assert_int_eq(etl_kexec_wait(reader, r, n, 0), 0); /* the stuck one is not waited for again */
    fake_capture_free(k);
}
END_TEST

/* A munmap's return found by a reader late (the machine loaded: the return 200 ms old when read)
   while its entry is on a processor whose reader is behind: the return waits for that reader to
   get past it, however old it is (it gave up at 100 ms of age before, and the munmap was lost:
   kmemory.test lost every VirtualFree of a run so), and goes once the other has handled what came
   before it, its entry noted or not. */
static uint16_t vm_sample(uint8_t *r, uint64_t id, uint32_t tid, int64_t ts)
{
    uint16_t size = 48;

    memset(r, 0, size);
    perf_header(r, PERF_RECORD_SAMPLE, 0, size);
    put64(r + 8, id);
    put32(r + 16, tid);
    put32(r + 20, tid);
    put64(r + 24, (uint64_t)ts);
    put32(r + 40, 4);
    return size;
}

START_TEST(vm_return_waits_for_its_entry)
{
    struct etl_kcapture *k = fake_capture(NULL, ETL_KERNEL_VIRTUAL_ALLOC);
    struct kcpu *entry_reader = &k->cpus[0], *reader = &k->cpus[1];
    uint8_t r[64], e[64];
    int64_t ts = etl_monoclock_exact() - 200000000;
    uint16_t n, ne;

    ck_assert_int_eq(etl_kvm_init(k), 0);
    for (unsigned i = 0; i < 2; i++) {
        k->cpus[i].fd[EV_VM_MUNMAP] = 3;
        k->cpus[i].id[EV_VM_MUNMAP] = 71;
        k->cpus[i].fd[EV_VM_MUNMAP_RET] = 4;
        k->cpus[i].id[EV_VM_MUNMAP_RET] = 72;
    }
    n = vm_sample(r, 72, 4242, ts);
    atomic_store(&reader->progress, ts - 1);
    atomic_store(&entry_reader->progress, ts - 5000000); /* the entry, 1 ms before, not read yet */
    ck_assert_msg(etl_kvm_wait(reader, r, n, 0) == 1, "a return 200 ms old did not wait for its entry's reader");
    ne = vm_sample(e, 71, 4242, ts - 1000000);
    etl_kvm_note(entry_reader, e, ne); /* the entry read */
    ck_assert_int_eq(etl_kvm_wait(reader, r, n, 0), 0);

    /* an entry lost (or before the session): the return goes once the other reader is past it */
    n = vm_sample(r, 72, 4243, ts + 1000);
    ck_assert_int_eq(etl_kvm_wait(reader, r, n, 0), 1);
    atomic_store(&entry_reader->progress, ts + 1000);
    ck_assert_int_eq(etl_kvm_wait(reader, r, n, 0), 0);
    etl_kvm_free(k);
    fake_capture_free(k);
}
END_TEST

/* A context switch to a thread whose last switch out is on a processor whose reader is behind
   this one: the switch waits for that reader to be past it, so that its NewThreadWaitTime is
   the thread's wait (it was 0 before: kmemory.test's 'kwait's waits' got a first wait of 0 ticks
   on a loaded machine); once the switch out is handled, or the others are past it, it goes. */
static uint16_t switch_sample(uint8_t *r, uint64_t id, int64_t ts, uint32_t next)
{
    uint16_t size = 8 + 8 + 8 + 8 + 8 + 4 + 8;

    memset(r, 0, size);
    perf_header(r, PERF_RECORD_SAMPLE, 0, size);
    put64(r + 8, id);               /* IDENTIFIER */
    put64(r + 24, (uint64_t)ts);    /* TID at 16, TIME */
    put32(r + 40, 8);               /* CPU at 32; RAW: 8 bytes */
    put32(r + 44 + 4, next);        /* next_pid at 4 */
    return size;
}

START_TEST(switch_waits_for_the_switch_out)
{
    struct etl_kcapture *k = fake_capture(NULL, ETL_KERNEL_CSWITCH);
    struct kcpu *out_reader = &k->cpus[0], *reader = &k->cpus[1];
    uint8_t r[64];
    int64_t ts = etl_monoclock_exact() - 200000000;
    uint16_t n;

    k->switched = calloc(ETL_KSWITCHED_SLOTS, sizeof *k->switched);
    ck_assert_ptr_nonnull(k->switched);
    for (int i = 0; i < 64; i++) pthread_mutex_init(&k->switched_lock[i], NULL);
    k->next_pid = (struct tp_field){ 4, 4 };
    k->sample_type[EV_SWITCH] = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                PERF_SAMPLE_RAW;
    for (unsigned i = 0; i < 2; i++) {
        k->cpus[i].fd[EV_SWITCH] = 3;
        k->cpus[i].id[EV_SWITCH] = 81;
    }
    /* thread 4242 switched in (at ts - 10 ms), its switch out not handled yet */
    k->switched[4242 % ETL_KSWITCHED_SLOTS] = (struct kswitched){ 4242, INT64_MIN, ts - 10000000 };
    n = switch_sample(r, 81, ts, 4242);
    atomic_store(&reader->progress, ts - 1);
    atomic_store(&out_reader->progress, ts - 5000000);
    ck_assert_msg(etl_kswitch_wait(reader, r, n, ts, 0) == 1, "a switch went before its thread's switch out");
    k->switched[4242 % ETL_KSWITCHED_SLOTS].out_ts = ts - 4000000; /* the switch out handled */
    ck_assert_int_eq(etl_kswitch_wait(reader, r, n, ts, 0), 0);
    /* a thread whose switch out is known does not wait; one not known goes once the others are
       past it */
    n = switch_sample(r, 81, ts + 1000, 4243);
    k->switched[4243 % ETL_KSWITCHED_SLOTS] = (struct kswitched){ 4243, ts - 3000000, ts - 9000000 };
    ck_assert_int_eq(etl_kswitch_wait(reader, r, n, ts + 1000, 0), 0);
    n = switch_sample(r, 81, ts + 2000, 4244);
    ck_assert_int_eq(etl_kswitch_wait(reader, r, n, ts + 2000, 0), 1);
    atomic_store(&out_reader->progress, ts + 2000);
    ck_assert_int_eq(etl_kswitch_wait(reader, r, n, ts + 2000, 0), 0);
    n = switch_sample(r, 81, ts + 3000, 0); /* to the idle task: no wait */
    atomic_store(&out_reader->progress, ts);
    ck_assert_int_eq(etl_kswitch_wait(reader, r, n, ts + 3000, 0), 0);
    for (int i = 0; i < 64; i++) pthread_mutex_destroy(&k->switched_lock[i]);
    free(k->switched);
    fake_capture_free(k);
}
END_TEST

/* A disk completion found by a reader late (200 ms old when read) while its issue is on a
   processor whose reader is behind: the completion waits for that reader to get past it (it
   gave up at 100 ms of age before, and was written without its issue: no response time, no
   issuing thread), and goes once the issue is noted, or once the other reader is past it. */
static uint16_t rq_sample(uint8_t *r, uint64_t id, int64_t ts, uint32_t dev, uint64_t sector)
{
    uint16_t size = 44 + 28;

    memset(r, 0, size);
    perf_header(r, PERF_RECORD_SAMPLE, 0, size);
    put64(r + 8, id);
    put64(r + 24, (uint64_t)ts);
    put32(r + 40, 28);
    put32(r + 44, dev);
    put64(r + 44 + 4, sector);
    put32(r + 44 + 12, 8);                   /* nr_sector */
    memcpy(r + 44 + 16, "W", 1);             /* rwbs */
    return size;
}

START_TEST(disk_completion_waits_for_its_issue)
{
    struct etl_kcapture *k = fake_capture(NULL, ETL_KERNEL_DISK_IO);
    struct kcpu *issue_reader = &k->cpus[0], *reader = &k->cpus[1];
    uint8_t r[128], q[128];
    int64_t ts = etl_monoclock_exact() - 200000000;
    uint16_t n, nq;

    for (unsigned i = 0; i < 2; i++) {
        k->rq_dev[i] = (struct tp_field){ 0, 4 };
        k->rq_sector[i] = (struct tp_field){ 4, 8 };
        k->rq_nr_sector[i] = (struct tp_field){ 12, 4 };
        k->rq_rwbs[i] = (struct tp_field){ 16, 8 };
        k->cpus[i].fd[EV_RQ_ISSUE] = 3;
        k->cpus[i].id[EV_RQ_ISSUE] = 91;
        k->cpus[i].fd[EV_RQ_COMPLETE] = 4;
        k->cpus[i].id[EV_RQ_COMPLETE] = 92;
    }
    n = rq_sample(r, 92, ts, 0x800001, 4096);
    atomic_store(&reader->progress, ts - 1);
    atomic_store(&issue_reader->progress, ts - 5000000); /* the issue, 1 ms before, not read yet */
    ck_assert_msg(etl_kdisk_wait(reader, r, n, 0) == 1, "a completion 200 ms old did not wait for its issue's reader");
    nq = rq_sample(q, 91, ts - 1000000, 0x800001, 4096);
    etl_kdisk_note_issue(issue_reader, q, nq);
    ck_assert_int_eq(etl_kdisk_wait(reader, r, n, 0), 0);

    /* an issue lost (or before the session): the completion goes once the other is past it */
    n = rq_sample(r, 92, ts + 1000, 0x800001, 8192);
    ck_assert_int_eq(etl_kdisk_wait(reader, r, n, 0), 1);
    atomic_store(&issue_reader->progress, ts + 1000);
    ck_assert_int_eq(etl_kdisk_wait(reader, r, n, 0), 0);
    fake_capture_free(k);
}
END_TEST

/* An exec handled before its fork (a reader that did not get on in time, or a fork record
   lost): its Process Start has the process's parent, which /proc gave while it ran (it is gone
   when the COMM is handled), and the fork's Process Start, handled late, is still written,
   at its time, as its parent's copy. */
struct pev { int64_t ts; char name[16]; uint32_t ppid; char image[16]; };

START_TEST(exec_before_its_fork)
{
    etl_session_properties p;
    etl_session *s;
    etl_reader *rd;
    etl_event ev;
    struct etl_kcapture *k;
    uint8_t r[256], *ring;
    char comm[64] = "", path[64];
    struct pev got[8];
    unsigned ngot = 0;
    int pipefd[2], rc;
    pid_t child;
    int64_t t0, t_fork, t_exec, t_exit;
    uint16_t n;

    memset(&p, 0, sizeof p);
    p.log_file_name = test_dir_path("exec.etl");
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_OK);
    k = fake_capture(s, ETL_KERNEL_PROCESS);
    t0 = etl_monoclock_exact();
    etl_krundown(k, t0, 0); /* this process among those known */
    ck_assert_int_eq(pipe(pipefd), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char c;
        close(pipefd[1]);
        _exit(read(pipefd[0], &c, 1) < 0 ? 1 : 0);
    }
    close(pipefd[0]);
    t_fork = etl_monoclock_exact();
    t_exec = t_fork + 1000000;
    t_exit = t_exec + 1000000;
    snprintf(path, sizeof path, "/proc/%d/comm", (int)getpid());
    ck_assert_int_gt(etl_kread_small(path, comm, sizeof comm), 0);
    comm[strcspn(comm, "\n")] = '\0';

    /* The exec's sample in processor 1's exec ring (its filename: "/usr/bin/kexecd"). */
    k->exec_args = 1;
    k->sample_type[EV_EXEC] = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                              PERF_SAMPLE_RAW;
    k->exec_filename = (struct tp_field){ 8, 4 };
    ring = calloc(EXEC_RING_PAGES + 1, 4096);
    ck_assert_ptr_nonnull(ring);
    k->cpus[1].exec_ring = ring;
    {
        static const char file[] = "/usr/bin/kexecd";
        uint8_t *rec = ring + 4096, raw[8 + 16 + 4];
        uint16_t size = 40 + 4 + (uint16_t)sizeof raw;
        memset(raw, 0, sizeof raw);
        put32(raw + 8, (uint32_t)(sizeof file << 16 | 12)); /* __data_loc: at 12, its length */
        memcpy(raw + 12, file, sizeof file);
        perf_header(rec, PERF_RECORD_SAMPLE, 0, size);
        put64(rec + 8, 0);
        put32(rec + 16, (uint32_t)child);
        put32(rec + 20, (uint32_t)child);
        put64(rec + 24, (uint64_t)t_exec + 2000);
        put64(rec + 32, 1);
        put32(rec + 40, sizeof raw);
        memcpy(rec + 44, raw, sizeof raw);
        ((struct perf_event_mmap_page *)(void *)ring)->data_head = size;
    }
    /* Processor 1's reader finds the exec (its sample read while the child runs); the reader of
       processor 0, which has the fork, is stuck. */
    n = comm_exec_record(r, (uint32_t)child, "kexecd", t_exec, 1);
    atomic_store(&k->cpus[0].progress, t_fork - 1);
    atomic_store(&k->cpus[0].stuck_at, t_fork - 1);
    atomic_store(&k->cpus[1].progress, t_exec - 1);
    ck_assert_int_eq(etl_kexec_wait(&k->cpus[1], r, n, 0), 0);
    close(pipefd[1]); /* the child ends, and is gone before its exec is handled */
    ck_assert_int_eq(waitpid(child, &rc, 0), child);
    etl_kcomm_record(&k->cpus[1], r, n, PERF_RECORD_MISC_COMM_EXEC);
    n = task_record(r, 1, (uint32_t)child, (uint32_t)getpid(), t_fork, 0); /* the fork, late */
    etl_ktask_record(&k->cpus[0], r, n, 1);
    atomic_store(&k->cpus[0].progress, INT64_MAX);
    n = task_record(r, 0, (uint32_t)child, (uint32_t)getpid(), t_exit, 1);
    etl_ktask_record(&k->cpus[1], r, n, 0);
    fake_capture_free(k);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);

    ck_assert_int_eq(etl_reader_open_path(&rd, test_dir_path("exec.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(rd, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        if (etl_kernel_decode(&ev, &ke) != 1 || ke.kclass != ETL_KCLASS_PROCESS || ke.u.process.pid != (uint32_t)child)
            continue;
        ck_assert_uint_lt(ngot, 8);
        got[ngot].ts = ev.timestamp;
        snprintf(got[ngot].name, sizeof got[ngot].name, "%s", ke.name);
        got[ngot].ppid = ke.u.process.parent_pid;
        etl_string_to_utf8(&ke.u.process.image_file_name, got[ngot].image, sizeof got[ngot].image);
        ngot++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(rd);
    /* In time order (the file's buffers are a processor's each; one writer here). */
    for (unsigned i = 1; i < ngot; i++)
        for (unsigned j = i; j > 0 && got[j - 1].ts > got[j].ts; j--) {
            struct pev t = got[j];
            got[j] = got[j - 1];
            got[j - 1] = t;
        }
    ck_assert_uint_eq(ngot, 4);
    ck_assert_str_eq(got[0].name, "Process/Start"); /* the fork: the parent's copy */
    ck_assert_int_eq(got[0].ts, t_fork);
    ck_assert_str_eq(got[0].image, comm);
    ck_assert_uint_eq(got[0].ppid, (uint32_t)getpid());
    ck_assert_str_eq(got[1].name, "Process/End");   /* the exec: what it ran until then */
    ck_assert_int_eq(got[1].ts, t_exec);
    ck_assert_str_eq(got[1].image, comm);
    ck_assert_uint_eq(got[1].ppid, (uint32_t)getpid());
    ck_assert_str_eq(got[2].name, "Process/Start"); /* and the new program */
    ck_assert_int_eq(got[2].ts, t_exec);
    ck_assert_str_eq(got[2].image, "kexecd");
    ck_assert_uint_eq(got[2].ppid, (uint32_t)getpid());
    ck_assert_str_eq(got[3].name, "Process/End");
    ck_assert_str_eq(got[3].image, "kexecd");
    ck_assert_uint_eq(got[3].ppid, (uint32_t)getpid());
}
END_TEST

/* network_tcpip's samples as the 6.18 tracepoints lay them out (sock:inet_sock_set_state,
   sock:sock_recv_length): a sample record (IDENTIFIER, TID, TIME, CPU, RAW) of event e. */
static uint16_t net_sample(uint8_t *r, uint64_t id, uint32_t pid, int64_t ts, uint32_t cpu, const uint8_t *raw,
                           uint32_t raw_len)
{
    uint16_t size = (uint16_t)((44 + raw_len + 7) & ~7u);

    memset(r, 0, size);
    perf_header(r, PERF_RECORD_SAMPLE, 0, size);
    put64(r + 8, id);
    put32(r + 16, pid);
    put32(r + 20, pid);
    put64(r + 24, (uint64_t)ts);
    put64(r + 32, cpu);
    put32(r + 40, raw_len);
    memcpy(r + 44, raw, raw_len);
    return size;
}

/* inet_sock_set_state's 72 bytes: an IPv6 socket (family 10) with IPv4-mapped ends, or the
   listener on :: (dual-stack) when dport is 0. */
static void state_raw(uint8_t raw[72], uint64_t sk, int old, int new, uint16_t sport, uint16_t dport)
{
    memset(raw, 0, 72);
    put64(raw + 8, sk);
    put32(raw + 16, (uint32_t)old);
    put32(raw + 20, (uint32_t)new);
    raw[24] = (uint8_t)sport, raw[25] = (uint8_t)(sport >> 8);
    raw[26] = (uint8_t)dport, raw[27] = (uint8_t)(dport >> 8);
    raw[28] = 10;
    raw[30] = 6;
    if (dport) {
        static const uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1 };
        memcpy(raw + 40, mapped, 16);
        memcpy(raw + 56, mapped, 16);
    }
}

/* A session writing FILE (in the test's directory) and a fake capture of network_tcpip in it,
   the tracepoints' fields as 6.18 lays them out (state_raw, len_raw); net_capture_end frees the
   capture and stops and closes the session. */
static struct etl_kcapture *net_capture(etl_session **s, const char *file)
{
    static const struct tp_field st[KN_FIELDS] = { { 8, 8 }, { 16, 4 }, { 20, 4 }, { 24, 2 }, { 26, 2 }, { 28, 2 },
                                                   { 30, 2 }, { 32, 4 }, { 36, 4 }, { 40, 16 }, { 56, 16 } };
    static const struct tp_field len[KL_FIELDS] = { { 8, 8 }, { 16, 2 }, { 18, 2 }, { 20, 4 }, { 24, 4 } };
    etl_session_properties p;
    struct etl_kcapture *k;

    memset(&p, 0, sizeof p);
    p.log_file_name = test_dir_path(file);
    ck_assert_int_eq(etl_session_start(s, &p), ETL_OK);
    k = fake_capture(*s, ETL_KERNEL_NETWORK_TCPIP);
    pthread_mutex_init(&k->netlock, NULL);
    memcpy(k->net_state, st, sizeof st);
    memcpy(k->net_len[0], len, sizeof len);
    memcpy(k->net_len[1], len, sizeof len);
    return k;
}

static void net_capture_end(etl_session *s, struct etl_kcapture *k)
{
    etl_knet_free(k);
    fake_capture_free(k);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
}

/* sock_send_length's or sock_recv_length's 28 bytes: a socket's call of ret bytes. */
static void len_raw(uint8_t raw[28], uint64_t sk, uint16_t family, uint16_t protocol, int32_t ret)
{
    memset(raw, 0, 28);
    put64(raw + 8, sk);
    raw[16] = (uint8_t)family, raw[17] = (uint8_t)(family >> 8);
    raw[18] = (uint8_t)protocol, raw[19] = (uint8_t)(protocol >> 8);
    put32(raw + 20, (uint32_t)ret);
}

/* The kernel reuses a closed socket's memory: a server's receive on a socket, handled by a
   reader that lags after another reader handled that address's next use (a client's connection),
   has the ends of its own connection, not the later one's. */
START_TEST(net_reused_socket_address)
{
    etl_session *s;
    etl_reader *rd;
    etl_event ev;
    struct etl_kcapture *k;
    uint8_t raw[72], lraw[28] = { 0 };
    const uint64_t sk = 0xffff888100001000ull, lsk = 0xffff888100002000ull;
    int64_t t0;
    int rc, recvs = 0;

    k = net_capture(&s, "netreuse.etl");
    t0 = etl_monoclock_exact();
    /* processor 0: listen, a connection accepted on sk (8080 <- 40000), closed; then sk again,
       as a client's connection (40001 -> 9090) */
    state_raw(raw, lsk, 7, 10, 8080, 0);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0, 100, 100, raw, 72);
    state_raw(raw, sk, 10, 3, 8080, 40000);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 1000000, 200, 200, raw, 72);
    state_raw(raw, sk, 3, 1, 8080, 40000);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 2000000, 200, 200, raw, 72);
    state_raw(raw, sk, 1, 7, 8080, 40000);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 4000000, 100, 100, raw, 72);
    state_raw(raw, sk, 7, 2, 40001, 9090);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 5000000, 300, 300, raw, 72);
    state_raw(raw, sk, 2, 1, 40001, 9090);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 6000000, 300, 300, raw, 72);
    /* processor 1, behind: the server's receive between the accept and the close */
    len_raw(lraw, sk, 2, 6, 4096);
    etl_knet_sample(&k->cpus[1], EV_NET_RECV, t0 + 3000000, 100, 100, lraw, sizeof lraw);
    net_capture_end(s, k);

    ck_assert_int_eq(etl_reader_open_path(&rd, test_dir_path("netreuse.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(rd, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        if (etl_kernel_decode(&ev, &ke) != 1 || ke.kclass != ETL_KCLASS_TCPIP || strcmp(ke.name, "TcpIp/Recv") != 0)
            continue;
        recvs++;
        ck_assert_uint_eq(ke.u.tcpip.pid, 100);
        ck_assert_uint_eq(ke.u.tcpip.size, 4096);
        ck_assert_uint_eq(ke.u.tcpip.sport, 8080);
        ck_assert_uint_eq(ke.u.tcpip.dport, 40000);
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(recvs, 1);
    etl_reader_close(rd);
}
END_TEST

/* A connection accepted by a server (pid 100, which listened) from a client (pid 200, in whose
   context the loopback softirq makes the server's socket's changes of state), its changes on
   processor 0, the server's first receive on processor 1. Processor 0's reader is behind: the
   receive waits for it (else it would be written without the connection's ends), then is
   written with them; the Accept names the listening process, not the one it ran in; the IPv6
   socket's IPv4-mapped connection is written as IPv4. */
START_TEST(net_receive_waits_for_its_accept)
{
    etl_session *s;
    etl_reader *rd;
    etl_event ev;
    struct etl_kcapture *k;
    uint8_t r[256], raw[72], lraw[28] = { 0 };
    const uint64_t sk = 0xffff888100001000ull, lsk = 0xffff888100002000ull;
    int64_t t0;
    uint16_t n;
    int rc, accepts = 0, recvs = 0, disconnects = 0;

    k = net_capture(&s, "net.etl");
    for (unsigned i = 0; i < 2; i++) {
        k->cpus[i].fd[EV_NET_STATE] = k->cpus[i].fd[EV_NET_RECV] = 1000; /* (never closed: fake) */
        k->cpus[i].id[EV_NET_STATE] = 11;
        k->cpus[i].id[EV_NET_RECV] = 13;
    }
    t0 = etl_monoclock_exact();

    /* listen() in the server, handled */
    state_raw(raw, lsk, 7, 10, 8080, 0);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0, 100, 100, raw, 72);
    /* the server's receive, read by processor 1's reader while processor 0's is behind */
    len_raw(lraw, sk, 10, 6, 4096);
    n = net_sample(r, 13, 100, t0 + 3000000, 1, lraw, sizeof lraw);
    atomic_store(&k->cpus[0].progress, t0);
    atomic_store(&k->cpus[1].progress, t0 + 3000000 - 1);
    ck_assert_int_eq(etl_knet_wait(&k->cpus[1], r, n, t0 + 3000000, 0), 1);
    /* processor 0 gets on: the connection comes to the listener and is established (in the
       client's context), its Accept waits for nothing (the listener is noted) */
    {
        uint8_t r0[256];
        state_raw(raw, sk, 10, 3, 8080, 40000);
        n = net_sample(r0, 11, 200, t0 + 1000000, 0, raw, 72);
        ck_assert_int_eq(etl_knet_wait(&k->cpus[0], r0, n, t0 + 1000000, 0), 0);
        etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 1000000, 200, 200, raw, 72);
        state_raw(raw, sk, 3, 1, 8080, 40000);
        n = net_sample(r0, 11, 200, t0 + 2000000, 0, raw, 72);
        ck_assert_int_eq(etl_knet_wait(&k->cpus[0], r0, n, t0 + 2000000, 0), 0);
        etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 2000000, 200, 200, raw, 72);
    }
    atomic_store(&k->cpus[0].progress, INT64_MAX);
    ck_assert_int_eq(etl_knet_wait(&k->cpus[1], r, n, t0 + 3000000, 0), 0);
    etl_knet_sample(&k->cpus[1], EV_NET_RECV, t0 + 3000000, 100, 100, lraw, sizeof lraw);
    /* the peer closes (processor 0, in the client's context): Disconnect, the server's */
    state_raw(raw, sk, 1, 8, 8080, 40000);
    etl_knet_sample(&k->cpus[0], EV_NET_STATE, t0 + 4000000, 200, 200, raw, 72);
    net_capture_end(s, k);

    ck_assert_int_eq(etl_reader_open_path(&rd, test_dir_path("net.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(rd, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        char a[ETL_KTCPIP_ADDR_SIZE];
        if (etl_kernel_decode(&ev, &ke) != 1 || ke.kclass != ETL_KCLASS_TCPIP) continue;
        ck_assert_uint_eq(ke.u.tcpip.pid, 100);
        ck_assert_uint_eq(ke.u.tcpip.ip_version, 4);
        ck_assert_str_eq(etl_ktcpip_addr_format(&ke.u.tcpip, 1, a, sizeof a), "127.0.0.1");
        ck_assert_uint_eq(ke.u.tcpip.sport, 8080);
        ck_assert_uint_eq(ke.u.tcpip.dport, 40000);
        ck_assert_uint_eq(ke.u.tcpip.connid, sk);
        if (strcmp(ke.name, "TcpIp/Accept") == 0) {
            ck_assert_uint_eq(ev.pid, 200); /* the header: where it ran */
            accepts++;
        } else if (strcmp(ke.name, "TcpIp/Recv") == 0) {
            ck_assert_uint_eq(ke.u.tcpip.size, 4096);
            ck_assert_uint_eq(ev.pid, 100);
            recvs++;
        } else {
            ck_assert_str_eq(ke.name, "TcpIp/Disconnect");
            disconnects++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(rd);
    ck_assert_int_eq(accepts, 1);
    ck_assert_int_eq(recvs, 1);
    ck_assert_int_eq(disconnects, 1);
}
END_TEST
/* The UDP BPF programs' records (knet.h) written as UdpIp events with their ends: IPv4; an IPv6
   socket's datagram between IPv4-mapped addresses as the IPv4 one it is on the wire; IPv6; a
   record too short for its layout, nothing. */
static void udp_rec(uint8_t r[56], uint8_t op, int v6, const uint8_t *saddr, uint16_t sport, const uint8_t *daddr,
                    uint16_t dport, uint32_t size)
{
    uint64_t sk = 0xffff888100003000ull;

    memset(r, 0, 56);
    r[0] = op;
    r[1] = (uint8_t)v6;
    r[2] = ETL_KNET_F_PEER;
    memcpy(r + 4, &size, 4); /* (the machine's order, as the programs write it) */
    memcpy(r + 8, &sk, 8);
    memcpy(r + 16, &sport, 2);
    memcpy(r + 18, &dport, 2);
    memcpy(r + 24, saddr, v6 ? 16 : 4);
    memcpy(r + 40, daddr, v6 ? 16 : 4);
}

START_TEST(net_udp_records)
{
    static const uint8_t lo4[4] = { 127, 0, 0, 1 }, dns4[4] = { 10, 0, 0, 53 };
    static const uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1 };
    static const uint8_t mapped_dns[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 53 };
    static const uint8_t lo6[16] = { [15] = 1 }, peer6[16] = { 0xfe, 0x80, [15] = 2 };
    static const struct { const char *name, *saddr, *daddr; unsigned version, sport, dport, size; } want[] = {
        { "UdpIp/Send", "127.0.0.1", "10.0.0.53", 4, 40000, 53, 100 },
        { "UdpIp/Recv", "127.0.0.1", "10.0.0.53", 4, 40001, 53, 200 },
        { "UdpIp/RecvIPV6", "::1", "fe80::2", 6, 40002, 5353, 300 },
    };
    etl_session *s;
    etl_reader *rd;
    etl_event ev;
    struct etl_kcapture *k = net_capture(&s, "netudp.etl");
    uint8_t r[56];
    int64_t t0 = etl_monoclock_exact();
    int rc;
    size_t got = 0;

    udp_rec(r, ETL_KNET_UDP_SEND, 0, lo4, 40000, dns4, 53, 100);
    etl_knet_sample(&k->cpus[0], EV_NET_UDP, t0, 100, 101, r, sizeof r);
    udp_rec(r, ETL_KNET_UDP_RECV, 1, mapped, 40001, mapped_dns, 53, 200);
    etl_knet_sample(&k->cpus[0], EV_NET_UDP, t0 + 1000, 100, 101, r, sizeof r);
    udp_rec(r, ETL_KNET_UDP_RECV, 1, lo6, 40002, peer6, 5353, 300);
    etl_knet_sample(&k->cpus[0], EV_NET_UDP, t0 + 2000, 100, 101, r, sizeof r);
    etl_knet_sample(&k->cpus[0], EV_NET_UDP, t0 + 3000, 100, 101, r, ETL_KNET_REC - 1);
    net_capture_end(s, k);

    ck_assert_int_eq(etl_reader_open_path(&rd, test_dir_path("netudp.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(rd, &ev)) == ETL_OK) {
        etl_kernel_event ke;
        char a[ETL_KTCPIP_ADDR_SIZE];
        if (etl_kernel_decode(&ev, &ke) != 1 || ke.kclass != ETL_KCLASS_TCPIP) continue;
        ck_assert_uint_lt(got, sizeof want / sizeof want[0]);
        ck_assert_str_eq(ke.name, want[got].name);
        ck_assert_uint_eq(ke.u.tcpip.pid, 100);
        ck_assert_uint_eq(ev.tid, 101);
        ck_assert_uint_eq(ke.u.tcpip.ip_version, want[got].version);
        ck_assert_str_eq(etl_ktcpip_addr_format(&ke.u.tcpip, 1, a, sizeof a), want[got].saddr);
        ck_assert_str_eq(etl_ktcpip_addr_format(&ke.u.tcpip, 0, a, sizeof a), want[got].daddr);
        ck_assert_uint_eq(ke.u.tcpip.sport, want[got].sport);
        ck_assert_uint_eq(ke.u.tcpip.dport, want[got].dport);
        ck_assert_uint_eq(ke.u.tcpip.size, want[got].size);
        ck_assert_uint_eq(ke.u.tcpip.connid, 0xffff888100003000ull);
        got++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_uint_eq(got, 3);
    etl_reader_close(rd);
}
END_TEST
#endif


/* ---- LinuxImageID: payloads, ELF build-ids, kallsyms chunks ---- */

/* A LinuxImageID payload as the capture writes it (a classic event), decoded by the field
   decoder's built-in table: its name and fields as etldump shows them. */
static void image_id_text(uint8_t opcode, const uint8_t *p, size_t n, char *name, size_t name_size, char *text,
                          size_t size)
{
    uint8_t rec[70000];
    etl_data data = { p, (uint32_t)n };
    uint32_t len = etl_record_encode_classic(rec, sizeof rec, 77, &etl_guid_linux_image_id, opcode, 0,
                                             ETL_LINUX_IMAGE_ID_VERSION, 5, 6, &data, 1), step;
    etl_decoder_options o;
    etl_decoder *d = NULL;
    etl_decoded_event e;
    etl_event ev;
    const char *why;

    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(etl_record_decode(NULL, rec, len, &ev, &step, &why), ETL_RECORD_OK);
    memset(&o, 0, sizeof o);
    o.flags = ETL_DECODER_NO_DEFAULTS;
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_OK);
    ck_assert_msg(etl_decoder_decode(d, &ev, &e) == 1, "%s", etl_decoder_error(d));
    ck_assert_uint_eq(e.payload_used, n);
    snprintf(name, name_size, "%s", e.event_name);
    etl_decoded_format_text(&e, text, size);
    etl_decoder_close(d);
}

START_TEST(linux_image_id_payloads)
{
    etl_kbuild_id b = { 4, { 0xde, 0xad, 0xbe, 0xef } }, none = { 0, { 0 } };
    uint8_t buf[512];
    char name[64], text[1024];
    size_t n;

    n = etl_kpayload_build_id(buf, sizeof buf, 0x7f0000001000, 0x5000, 4242, 0x2000, &b, "/usr/lib/libc.so.6");
    ck_assert_uint_eq(n, 8 + 8 + 4 + 8 + 2 + 4 + 19);
    image_id_text(ETL_LINUX_IMAGE_ID_BUILD_ID, buf, n, name, sizeof name, text, sizeof text);
    ck_assert_str_eq(name, "LinuxImageID/BuildId");
    ck_assert_str_eq(text, "ImageBase=0x7f0000001000 ImageSize=0x5000 ProcessId=4242 FileOffset=8192 BuildIdSize=4 "
                           "BuildId=\"deadbeef\" FileName=\"/usr/lib/libc.so.6\"");
    n = etl_kpayload_build_id(buf, sizeof buf, 0x1000, 0x2000, 1, 0, &none, "[vdso]");
    image_id_text(ETL_LINUX_IMAGE_ID_BUILD_ID, buf, n, name, sizeof name, text, sizeof text);
    ck_assert_str_eq(text, "ImageBase=0x1000 ImageSize=0x2000 ProcessId=1 FileOffset=0 BuildIdSize=0 BuildId=\"\" "
                           "FileName=\"[vdso]\"");
    n = etl_kpayload_kernel_symbols(buf, sizeof buf, 3, "ffffffff81000000 T _stext\nffffffff81000010 t x\nNOT", 47);
    ck_assert_uint_eq(n, 4 + 47 + 1);
    image_id_text(ETL_LINUX_IMAGE_ID_KERNEL_SYMBOLS, buf, n, name, sizeof name, text, sizeof text);
    ck_assert_str_eq(name, "LinuxImageID/KernelSymbols");
    ck_assert_str_eq(text, "Sequence=3 Text=\"ffffffff81000000 T _stext\\nffffffff81000010 t x\\n\"");
    n = etl_kpayload_kernel_module(buf, sizeof buf, 0xffffffffc0000000, 0x3000, &b, "ext4");
    image_id_text(ETL_LINUX_IMAGE_ID_KERNEL_MODULE, buf, n, name, sizeof name, text, sizeof text);
    ck_assert_str_eq(name, "LinuxImageID/KernelModule");
    ck_assert_str_eq(text, "ImageBase=0xffffffffc0000000 ImageSize=0x3000 BuildIdSize=4 BuildId=\"deadbeef\" Name=\"ext4\"");
    /* Too small a destination: the size, and nothing past cap. */
    memset(buf, 0xAB, sizeof buf);
    ck_assert_uint_eq(etl_kpayload_kernel_module(buf, 10, 1, 2, &b, "ext4"), 8 + 8 + 2 + 4 + 5);
    ck_assert_uint_eq(buf[10], 0xAB);
}
END_TEST

/* LinuxImageID SystemCalls: the field decoder's names, and the image map's lookups of a
   SysClEnter's number (the trace's first SystemCalls event; numbers without a name, or past
   the table, have none; a payload cut inside a name keeps what there is). */
START_TEST(system_call_names)
{
    static const char *const names[] = { "read", NULL, "open", "" };
    uint8_t buf[512], rec[1024];
    char name[64], text[1024];
    size_t n = etl_kpayload_system_calls(buf, sizeof buf, 62, names, 4);
    etl_data data = { buf, 0 };
    etl_image_map *m;
    etl_event ev;
    const char *why;
    uint32_t len, step;

    ck_assert_uint_eq(n, 2 + 2 + 5 + 1 + 5 + 1);
    image_id_text(ETL_LINUX_IMAGE_ID_SYSTEM_CALLS, buf, n, name, sizeof name, text, sizeof text);
    ck_assert_str_eq(name, "LinuxImageID/SystemCalls");
    ck_assert_str_eq(text, "Machine=62 Count=4 Names=[\"read\",\"\",\"open\",\"\"]");
    for (int cut = 0; cut < 2; cut++) {
        data.size = (uint32_t)(cut ? 2 + 2 + 5 + 1 + 3 : n); /* cut: "ope" of "open" */
        len = etl_record_encode_classic(rec, sizeof rec, 77, &etl_guid_linux_image_id, ETL_LINUX_IMAGE_ID_SYSTEM_CALLS,
                                        0, ETL_LINUX_IMAGE_ID_VERSION, 0, 0, &data, 1);
        ck_assert_int_eq(etl_record_decode(NULL, rec, len, &ev, &step, &why), ETL_RECORD_OK);
        ck_assert_ptr_nonnull(m = etl_image_map_new());
        ck_assert_ptr_null(etl_image_map_syscall_name(m, 0));
        ck_assert_int_eq(etl_image_map_add(m, &ev), ETL_OK);
        ck_assert_str_eq(etl_image_map_syscall_name(m, 0), "read");
        ck_assert_ptr_null(etl_image_map_syscall_name(m, 1));
        ck_assert_str_eq(etl_image_map_syscall_name(m, 2), cut ? "ope" : "open");
        ck_assert_ptr_null(etl_image_map_syscall_name(m, 3));
        ck_assert_ptr_null(etl_image_map_syscall_name(m, 4));
        ck_assert_ptr_null(etl_image_map_syscall_name(m, UINT64_MAX));
        etl_image_map_free(m);
    }
}
END_TEST

/* The capture's table for this machine: x86-64's numbers as its headers give them. */
START_TEST(system_call_table)
{
    uint16_t machine, count;
    const char *const *t = etl_ksyscall_names(&machine, &count);

#if defined(__x86_64__)
    ck_assert_uint_eq(machine, 62);
    ck_assert_uint_ge(count, 470);
    ck_assert_str_eq(t[SYS_read], "read");
    ck_assert_str_eq(t[SYS_getppid], "getppid");
    ck_assert_str_eq(t[SYS_exit_group], "exit_group");
#ifdef SYS_futex_waitv
    ck_assert_str_eq(t[SYS_futex_waitv], "futex_waitv");
#endif
    ck_assert_ptr_null(t[335]);
    ck_assert_str_eq(t[469], "file_setattr");
#else
    (void)t;
    ck_assert_uint_eq(count, 0);
    (void)machine;
#endif
}
END_TEST

/* Notes (namesz, descsz, type, name, desc; each padded to align) in out: their size. */
static size_t note(uint8_t *out, uint32_t namesz, uint32_t descsz, uint32_t type, const char *name, size_t name_len,
                   const uint8_t *desc, size_t desc_len, unsigned align)
{
    size_t n = 12;
    etl_put32(out, namesz);
    etl_put32(out + 4, descsz);
    etl_put32(out + 8, type);
    memcpy(out + n, name, name_len);
    n = (n + name_len + align - 1) / align * align;
    memcpy(out + n, desc, desc_len);
    return (n + desc_len + align - 1) / align * align;
}

START_TEST(build_id_notes)
{
    static const uint8_t id[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
    uint8_t notes[512], out[ETL_BUILD_ID_MAX], big[100];
    size_t n;

    memset(big, 7, sizeof big);
    /* The ABI tag, then the build-id: the second note is found. */
    n = note(notes, 4, 16, 1, "GNU", 4, big, 16, 4);
    n += note(notes + n, 4, 20, 3, "GNU", 4, id, 20, 4);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 20);
    ck_assert_mem_eq(out, id, 20);
    /* Every cut of it: the build-id only when whole. */
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, notes, cut);
        ck_assert_uint_eq(etl_elf_note_build_id(copy, cut, 4, out, sizeof out), cut >= n ? 20 : 0);
        free(copy);
    }
    /* 8-aligned notes (a GNU property note first, its name padded to 8). */
    n = note(notes, 4, 16, 5, "GNU", 4, big, 16, 8);
    n += note(notes + n, 4, 20, 3, "GNU", 4, id, 20, 8);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 8, out, sizeof out), 20);
    ck_assert_mem_eq(out, id, 20);
    /* Another owner's type 3, a build-id of another name length: not it. */
    n = note(notes, 5, 20, 3, "Xen\0", 5, id, 20, 4);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 0);
    /* Hostile sizes: each passes the end (or wraps, in 32 bits), nothing is read past it. */
    static const uint32_t huge[] = { 0xFFFFFFFFu, 0xFFFFFFFCu, 0x80000000u, 0x7FFFFFFFu, 513 };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        n = note(notes, huge[i], 20, 1, "GNU", 4, id, 20, 4);
        n += note(notes + n, 4, 20, 3, "GNU", 4, id, 20, 4);
        ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 0);
        n = note(notes, 4, huge[i], 3, "GNU", 4, id, 20, 4);
        ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 0);
        n = note(notes, 4, huge[i], 1, "GNU", 4, id, 20, 4);
        n += note(notes + n, 4, 20, 3, "GNU", 4, id, 20, 4);
        ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 0);
    }
    /* A build-id longer than the caller's room: none (not cut). */
    n = note(notes, 4, 100, 3, "GNU", 4, big, 100, 4);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, out, sizeof out), 0);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, n, 4, big, 100), 100);
    ck_assert_uint_eq(etl_elf_note_build_id(notes, 0, 4, out, sizeof out), 0);
}
END_TEST

/* Runs a shell command: its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The build-id `readelf -n` gives of path, as hex ("" for none). */
static void readelf_build_id(const char *path, char *hex, size_t size)
{
    char cmd[1024], line[512];
    FILE *f;

    hex[0] = '\0';
    snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null", path);
    ck_assert_ptr_nonnull(f = popen(cmd, "r"));
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "Build ID: ");
        if (p) snprintf(hex, size, "%.*s", (int)strcspn(p + 10, "\n"), p + 10);
    }
    pclose(f);
}

static size_t file_build_id(const char *path, uint8_t *out)
{
    int fd = open(path, O_RDONLY);
    size_t n;
    ck_assert_int_ge(fd, 0);
    n = etl_elf_build_id(fd, out, ETL_BUILD_ID_MAX);
    close(fd);
    return n;
}

static void hex_of(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
}

/* Writes the first n bytes of data to path (a truncated file). */
static void write_head(const char *path, const uint8_t *data, size_t n)
{
    FILE *o = fopen(path, "w");
    ck_assert_ptr_nonnull(o);
    ck_assert_uint_eq(fwrite(data, 1, n, o), n);
    fclose(o);
}

START_TEST(build_id_of_elf_files)
{
    const char *src = test_dir_path("p.c");
    char sha[512], none[512], md5[512], hex[2 * ETL_BUILD_ID_MAX + 1], want[256];
    uint8_t id[ETL_BUILD_ID_MAX];
    FILE *f = fopen(src, "w");
    size_t n;

    ck_assert_ptr_nonnull(f);
    fputs("int main(void) { return 0; }\n", f);
    fclose(f);
    snprintf(sha, sizeof sha, "%s", test_dir_path("sha1"));
    snprintf(none, sizeof none, "%s", test_dir_path("none"));
    snprintf(md5, sizeof md5, "%s", test_dir_path("md5.so"));
    ck_assert_int_eq(sh("gcc -o '%s' -Wl,--build-id=sha1 '%s'", sha, src), 0);
    ck_assert_int_eq(sh("gcc -o '%s' -Wl,--build-id=none '%s'", none, src), 0);
    ck_assert_int_eq(sh("gcc -shared -fPIC -o '%s' -Wl,--build-id=md5 '%s'", md5, src), 0);
    n = file_build_id(sha, id);
    ck_assert_uint_eq(n, 20);
    hex_of(id, n, hex);
    readelf_build_id(sha, want, sizeof want);
    ck_assert_str_eq(hex, want);
    n = file_build_id(md5, id);
    ck_assert_uint_eq(n, 16);
    hex_of(id, n, hex);
    readelf_build_id(md5, want, sizeof want);
    ck_assert_str_eq(hex, want);
    readelf_build_id(none, want, sizeof want);
    ck_assert_str_eq(want, "");
    ck_assert_uint_eq(file_build_id(none, id), 0);
    /* Not ELF; and the ELF cut at every length up to a while past its note: nothing until the
       whole note is there (in the ELF header, the program headers, the note), then the build-id. */
    ck_assert_uint_eq(file_build_id(src, id), 0);
    uint8_t *elf = malloc(1 << 20);
    ck_assert_ptr_nonnull(elf);
    ck_assert_ptr_nonnull(f = fopen(sha, "r"));
    size_t size = fread(elf, 1, 1 << 20, f), whole = 0;
    fclose(f);
    for (size_t cut = 0; cut <= size && cut < (whole ? whole + 64 : 16384); cut++) {
        write_head(test_dir_path("cut"), elf, cut);
        n = file_build_id(test_dir_path("cut"), id);
        if (n && !whole) whole = cut;
        ck_assert_msg(n == (whole ? 20u : 0u), "cut at %zu: %zu", cut, n);
    }
    free(elf);
    ck_assert_uint_gt(whole, 64 + 56);
    ck_assert_uint_gt(whole, 0);
}
END_TEST

/* An ELF header and one program header (64-bit, little-endian) pointing at a note, written to
   path: phnum, phoff, the note's offset, size and align as given, the note at note_off. */
static void hostile_elf(const char *path, uint16_t phnum, uint64_t phoff, uint64_t off, uint64_t filesz, uint64_t align,
                        uint16_t phentsize)
{
    static const uint8_t id[20] = { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };
    uint8_t f[512];
    FILE *o;

    memset(f, 0, sizeof f);
    memcpy(f, "\177ELF\2\1\1", 7);
    etl_put16(f + 16, 3);
    etl_put64(f + 32, phoff);
    etl_put16(f + 54, phentsize);
    etl_put16(f + 56, phnum);
    etl_put32(f + 64, 4); /* PT_NOTE at 64 */
    etl_put64(f + 64 + 8, off);
    etl_put64(f + 64 + 32, filesz);
    etl_put64(f + 64 + 48, align);
    note(f + 128, 4, 20, 3, "GNU", 4, id, 20, 4);
    ck_assert_ptr_nonnull(o = fopen(path, "w"));
    ck_assert_uint_eq(fwrite(f, 1, sizeof f, o), sizeof f);
    fclose(o);
}

START_TEST(build_id_of_hostile_elf)
{
    const char *p = test_dir_path("h");
    uint8_t id[ETL_BUILD_ID_MAX];

    hostile_elf(p, 1, 64, 128, 36, 4, 56); /* well-formed */
    ck_assert_uint_eq(file_build_id(p, id), 20);
    ck_assert_uint_eq(id[0], 9);
    hostile_elf(p, 1, 64, 128, 35, 4, 56); /* the segment ends inside the note */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 1, 64, 128, 1u << 20, 4, 56); /* larger than any note segment read */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 1, 64, 128, 400, 4, 56); /* past the end of the file */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 1, 64, UINT64_MAX - 8, 36, 4, 56); /* an offset that wraps */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 1, UINT64_MAX - 16, 128, 36, 4, 56); /* program headers that wrap */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 65535, 64, 128, 36, 4, 56); /* too many program headers */
    ck_assert_uint_eq(file_build_id(p, id), 0);
    hostile_elf(p, 1, 64, 128, 36, 4, 8); /* program headers smaller than one */
    ck_assert_uint_eq(file_build_id(p, id), 0);
}
END_TEST

/* The build-id of a mapping: through map_files, or the path when it is that file, read once
   per file (the cache), never another file's (an inode number reused: a FIFO made after the
   file it had went). */
START_TEST(build_id_of_mappings)
{
    const char *src = test_dir_path("m.c");
    char bin[512], other[512], fifo[512];
    struct stat st, st2;
    etl_kbuild_id b, want;
    struct etl_kbid_cache *c = etl_kbid_cache_new();
    FILE *f = fopen(src, "w");
    void *m, *m2;
    int fd;

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(f);
    fputs("int main(void) { return 1; }\n", f);
    fclose(f);
    snprintf(bin, sizeof bin, "%s", test_dir_path("m"));
    snprintf(other, sizeof other, "%s", test_dir_path("other"));
    ck_assert_int_eq(sh("gcc -o '%s' -Wl,--build-id=sha1 '%s' && gcc -o '%s' -Wl,--build-id=sha1 -DX=1 -O2 '%s'",
                        bin, src, other, src), 0);
    want.size = (uint8_t)file_build_id(bin, want.id);
    ck_assert_uint_eq(want.size, 20);
    ck_assert_int_eq(stat(bin, &st), 0);
    /* Mapped executable by this process, twice: read through /proc/self's map_files once, the
       second mapping's from the cache. */
    ck_assert_int_ge(fd = open(bin, O_RDONLY), 0);
    m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    m2 = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(m2, MAP_FAILED);
    close(fd);
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), (uintptr_t)m, (uintptr_t)m + 4096, st.st_dev, st.st_ino, bin, &b);
    ck_assert_uint_eq(b.size, 20);
    ck_assert_mem_eq(b.id, want.id, 20);
    ck_assert_uint_eq(etl_kbid_cache_reads(c), 1);
    memset(&b, 0, sizeof b);
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), (uintptr_t)m2, (uintptr_t)m2 + 4096, st.st_dev, st.st_ino, bin, &b);
    ck_assert_uint_eq(b.size, 20);
    ck_assert_mem_eq(b.id, want.id, 20);
    ck_assert_uint_eq(etl_kbid_cache_reads(c), 1);
    /* The wrong inode: not that file, nothing (nor from the cache). */
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), (uintptr_t)m, (uintptr_t)m + 4096, st.st_dev, st.st_ino + 1, bin, &b);
    ck_assert_uint_eq(b.size, 0);
    /* The file replaced at its path (a new inode): the mapping still reads the old one; once
       unmapped, only the path is left, which is another file: nothing. */
    ck_assert_int_eq(rename(other, bin), 0);
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), (uintptr_t)m, (uintptr_t)m + 4096, st.st_dev, st.st_ino, bin, &b);
    ck_assert_uint_eq(b.size, 20);
    ck_assert_mem_eq(b.id, want.id, 20);
    munmap(m, 4096);
    munmap(m2, 4096);
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), (uintptr_t)m, (uintptr_t)m + 4096, st.st_dev, st.st_ino, bin, &b);
    ck_assert_uint_eq(b.size, 0);
    /* The new file at the path (a gone process's mapping, found by its path): its own. */
    ck_assert_int_eq(stat(bin, &st2), 0);
    etl_kbuild_id_of_mapping(c, 0x7FFFFFF0u, 0x1000, 0x2000, st2.st_dev, st2.st_ino, bin, &b);
    ck_assert_uint_eq(b.size, 20);
    ck_assert(memcmp(b.id, want.id, 20) != 0);
    /* Read: the file, again once unlinked by the rename (its ctime changed), the new file. */
    ck_assert_uint_eq(etl_kbid_cache_reads(c), 3);
    /* Not files: pseudo-paths, a FIFO (not opened: no hang), a process that is gone. */
    etl_kbuild_id_of_mapping(c, (uint32_t)getpid(), 0x1000, 0x2000, 0, 0, "[vdso]", &b);
    ck_assert_uint_eq(b.size, 0);
    snprintf(fifo, sizeof fifo, "%s", test_dir_path("fifo"));
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(stat(fifo, &st2), 0);
    etl_kbuild_id_of_mapping(c, 0x7FFFFFF0u, 0x1000, 0x2000, st2.st_dev, st2.st_ino, fifo, &b);
    ck_assert_uint_eq(b.size, 0);
    etl_kbuild_id_of_mapping(c, 0x7FFFFFF0u, 0x1000, 0x2000, 0, 0, fifo, &b);
    ck_assert_uint_eq(b.size, 0);
    etl_kbid_cache_free(c);
}
END_TEST

START_TEST(kallsyms_chunks)
{
    const char *t = "ffffffff81000000 T _stext\nffffffff81000010 t a_b\n0000000000000000 A fixed_percpu\n";
    size_t len = strlen(t), l1 = 26, l2 = 26 + 23;
    char *big, *cat;
    size_t n, at, total;

    /* Whole lines only: a chunk ends at a line's newline, at a boundary and a byte either side. */
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, l1 - 1, 0), 0);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, l1, 0), l1);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, l1 + 1, 0), l1);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, l2 - 1, 0), l1);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, l2, 0), l2);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, len, 0), len);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len, len + 100, 0), len);
    /* Not at the end yet: a last line without its newline waits for more; at the end it goes. */
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len - 1, len + 100, 0), l2);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len - 1, len + 100, 1), len - 1);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, len - 1, len - 2, 1), l2);
    ck_assert_uint_eq(etl_kallsyms_chunk(t, 0, 10, 1), 0);
    /* Addresses: any other than 0. */
    ck_assert_int_eq(etl_kallsyms_has_addresses(t, len), 1);
    ck_assert_int_eq(etl_kallsyms_has_addresses(t + l2, len - l2), 0);
    ck_assert_int_eq(etl_kallsyms_has_addresses("0000000000000000 T _stext\n0000000000000000 t x\n", 47), 0);
    ck_assert_int_eq(etl_kallsyms_has_addresses("", 0), 0);
    /* 100 000 lines of many lengths cut into chunks of at most max: each ends a line, and
       they make the text again. */
    big = malloc(100000 * 80);
    cat = malloc(100000 * 80);
    ck_assert_ptr_nonnull(big);
    ck_assert_ptr_nonnull(cat);
    total = 0;
    for (unsigned i = 0; i < 100000; i++)
        total += (size_t)sprintf(big + total, "ffffffff%08x %c %.*s\n", i * 16, "Tt"[i % 2], (int)(1 + i % 50),
                                 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
    for (size_t max = 70; max <= 65536; max = max * 4 + 1) { /* 70: the longest line */
        at = 0;
        size_t o = 0, chunks = 0;
        while (at < total) {
            size_t rest = total - at, avail = rest < max ? rest : max;
            n = etl_kallsyms_chunk(big + at, avail, max, avail == rest);
            ck_assert_uint_gt(n, 0);
            ck_assert_uint_le(n, max);
            ck_assert_int_eq(big[at + n - 1], '\n');
            memcpy(cat + o, big + at, n);
            o += n;
            at += n;
            chunks++;
        }
        ck_assert_uint_eq(o, total);
        ck_assert(memcmp(cat, big, total) == 0);
        ck_assert_uint_ge(chunks, total / max);
    }
    free(big);
    free(cat);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kcapture");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, process_v4);
    tcase_add_test(tc, thread_v3);
    tcase_add_test(tc, thread_set_name_v2);
    tcase_add_test(tc, isr_dpc_v2);
    tcase_add_test(tc, page_fault_v2);
    tcase_add_test(tc, tcpip_v2);
    tcase_add_test(tc, file_io_v3);
    tcase_add_test(tc, file_io_create_options);
    tcase_add_test(tc, virtual_alloc_map_file);
    tcase_add_test(tc, vm_spaces);
    tcase_add_test(tc, process_counters_v2);
    tcase_add_test(tc, hard_fault_v2);
    tcase_add_test(tc, hard_fault_pairing);
    tcase_add_test(tc, page_fault_kinds);
    tcase_add_test(tc, sysconfig_disks_nic);
    tcase_add_test(tc, system_call_names);
    tcase_add_test(tc, system_call_table);
    tcase_add_test(tc, sysconfig_cpu_v3);
    tcase_add_test(tc, image_v3);
    tcase_add_test(tc, cswitch_ready_sample_stack);
    tcase_add_test(tc, too_small);
    tcase_add_test(tc, priorities);
    tcase_add_test(tc, thread_states);
    tcase_add_test(tc, flag_names);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, forms_as_windows);
    tcase_add_test(tc, kernel_flags_enable_lbr_triggers);
    tcase_add_test(tc, image_unload);
    tcase_add_test(tc, unmap_ranges);
    tcase_add_test(tc, unmap_images);
    tcase_add_test(tc, signal_defaults);
    tcase_add_test(tc, exit_status);
    tcase_add_test(tc, exec_command_line);
    tcase_add_test(tc, disk_io_v3);
    tcase_add_test(tc, syscall_v2);
    tcase_add_test(tc, profile_interval_v3);
    tcase_add_test(tc, io_mappings);
    tcase_add_test(tc, linux_image_id_payloads);
    tcase_add_test(tc, build_id_notes);
    tcase_add_test(tc, kallsyms_chunks);
#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
    tcase_add_test(tc, exec_waits_for_the_fork);
    tcase_add_test(tc, vm_return_waits_for_its_entry);
    tcase_add_test(tc, switch_waits_for_the_switch_out);
    tcase_add_test(tc, disk_completion_waits_for_its_issue);
#endif
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_add_test(tc, lbr_in_the_kernel_rings);
#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
    tcase_add_test(tc, exec_before_its_fork);
    tcase_add_test(tc, net_receive_waits_for_its_accept);
    tcase_add_test(tc, net_reused_socket_address);
    tcase_add_test(tc, net_udp_records);
#endif
    suite_add_tcase(s, tc);
    /* ELF files made with gcc: a compiler on a loaded machine takes its time. */
    tc = tcase_create("elf");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, build_id_of_elf_files);
    tcase_add_test(tc, build_id_of_hostile_elf);
    tcase_add_test(tc, build_id_of_mappings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return check_run(suite()); }
