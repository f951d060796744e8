/* SPDX-License-Identifier: MIT */
/* Tests of recording profiles: the built-in ones, real and written .wprp files resolved (Base=, Operation), malformed and hostile files refused with their line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"

#define HEAD "<?xml version=\"1.0\"?>\n<WindowsPerformanceRecorder Version=\"1.0\">\n<Profiles>\n"
#define TAIL "</Profiles>\n</WindowsPerformanceRecorder>\n"
#define SYSCOL "<SystemCollector Id=\"S\" Name=\"NT Kernel Logger\"><BufferSize Value=\"64\"/><Buffers Value=\"8\"/></SystemCollector>\n"

static const char *testdata(const char *name)
{
    static char path[4096];
    const char *dir = getenv("ETL_TESTDATA");
    snprintf(path, sizeof path, "%s/wprp/%s", dir ? dir : "testdata", name);
    return path;
}

static const etl_wprp_profile *must_find(const etl_wprp *w, const char *text, const char *mode)
{
    const etl_wprp_profile *p = etl_wprp_find(w, text, mode);
    ck_assert_msg(p != NULL, "no profile %s (%s)", text, mode ? mode : "File");
    return p;
}

static const etl_wprp_collector *collector(const etl_wprp_profile *p, int kind)
{
    for (size_t i = 0; i < p->collector_count; i++)
        if (p->collectors[i].kind == kind) return &p->collectors[i];
    return NULL;
}

static int has_unmapped(const etl_wprp_profile *p, const char *text)
{
    for (size_t i = 0; i < p->unmapped_count; i++)
        if (strstr(p->unmapped[i], text)) return 1;
    return 0;
}

static int parse(etl_wprp **w, const char *xml, char *err, size_t errsize)
{
    return etl_wprp_parse(w, xml, strlen(xml), "t.wprp", err, errsize);
}

/* xml is refused with "t.wprp:LINE: ...WHAT...". */
static void expect_bad(const char *xml, long line, const char *what)
{
    etl_wprp *w = (etl_wprp *)1;
    char err[1024], want[64];

    err[0] = '\0';
    ck_assert_int_eq(parse(&w, xml, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_null(w);
    snprintf(want, sizeof want, "t.wprp:%ld: ", line);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "'%s' does not begin with '%s'", err, want);
    ck_assert_msg(strstr(err, what) != NULL, "'%s' does not say '%s'", err, what);
}

START_TEST(builtin_profiles)
{
    etl_wprp *w;
    char err[512];
    const etl_wprp_profile *p;
    const etl_wprp_collector *c;
    static const char *const names[] = {"GeneralProfile", "CPU", "DiskIO", "FileIO", "Network"};

    ck_assert_int_eq(etl_wprp_builtin(&w, err, sizeof err), ETL_OK);
    for (size_t i = 0; i < 5; i++) {
        static const char *const ids[] = {"Light.File", "Light.Memory", "Verbose.File", "Verbose.Memory"};
        for (size_t k = 0; k < 4; k++) {
            char id[64];
            snprintf(id, sizeof id, "%s.%s", names[i], ids[k]);
            p = must_find(w, id, NULL);
            ck_assert_str_eq(p->id, id);
            ck_assert_str_eq(p->name, names[i]);
            ck_assert_ptr_null(p->unavailable);
            c = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
            ck_assert_ptr_nonnull(c);
            ck_assert_str_eq(c->name, "NT Kernel Logger");
            ck_assert_uint_eq(c->kernel_flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD),
                              ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD);
            ck_assert_str_eq(c->id, k % 2 ? "SystemCollector_WPRSystemCollectorInMemory" : "SystemCollector_WPRSystemCollectorInFile");
            ck_assert_int_eq(c->buffers_percent, (int)(k % 2));
        }
    }
    /* "CPU" is CPU.Verbose.File as wpr -start CPU; a detail level and a mode pick others. */
    p = must_find(w, "CPU", NULL);
    ck_assert_str_eq(p->id, "CPU.Verbose.File");
    ck_assert_str_eq(must_find(w, "cpu.light", "Memory")->id, "CPU.Light.Memory");
    c = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_uint_eq(c->kernel_flags, ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_CSWITCH |
                                           ETL_KERNEL_DISPATCHER | ETL_KERNEL_PROFILE | ETL_KERNEL_INTERRUPT | ETL_KERNEL_DPC);
    ck_assert_uint_eq(c->stackwalk_flags, ETL_KERNEL_PROFILE | ETL_KERNEL_CSWITCH | ETL_KERNEL_DISPATCHER);
    ck_assert(has_unmapped(p, "CpuConfig"));
    ck_assert(!has_unmapped(p, "Interrupt")); /* (recorded: ISR events) */
    ck_assert(!has_unmapped(p, "DPC"));
    ck_assert_uint_eq(collector(must_find(w, "CPU.Light", NULL), ETL_WPRP_SYSTEM_COLLECTOR)->stackwalk_flags, ETL_KERNEL_PROFILE);
    ck_assert_uint_eq(collector(must_find(w, "DiskIO.Light", NULL), ETL_WPRP_SYSTEM_COLLECTOR)->kernel_flags & ETL_KERNEL_DISK_IO,
                      ETL_KERNEL_DISK_IO);
    /* (recorded: FileIo events, from BPF) */
    ck_assert(!has_unmapped(must_find(w, "FileIO", NULL), "keyword FileIO"));
    ck_assert_uint_eq(collector(must_find(w, "FileIO.Verbose", NULL), ETL_WPRP_SYSTEM_COLLECTOR)->kernel_flags &
                          (ETL_KERNEL_FILE_IO | ETL_KERNEL_FILE_IO_INIT | ETL_KERNEL_DISK_IO),
                      ETL_KERNEL_FILE_IO | ETL_KERNEL_FILE_IO_INIT | ETL_KERNEL_DISK_IO);
    /* (recorded: TcpIp and UdpIp events) */
    ck_assert(!has_unmapped(must_find(w, "Network.Light", NULL), "keyword NetworkTrace"));
    ck_assert_uint_eq(collector(must_find(w, "Network.Light", NULL), ETL_WPRP_SYSTEM_COLLECTOR)->kernel_flags &
                          ETL_KERNEL_NETWORK_TCPIP,
                      ETL_KERNEL_NETWORK_TCPIP);
    /* Windows-only profiles are listed, unavailable, with nothing to run. */
    p = must_find(w, "Heap", NULL);
    ck_assert_str_eq(p->id, "Heap.Verbose.File");
    ck_assert_ptr_nonnull(p->unavailable);
    ck_assert_uint_eq(p->collector_count, 0);
    ck_assert_ptr_null(etl_wprp_find(w, "NoSuchProfile", NULL));
    ck_assert_ptr_null(etl_wprp_find(w, "CPU.Medium", NULL));
    etl_wprp_free(w);
}
END_TEST

/* WSL's storage profile (testdata/wprp/README.md): 25 providers by GUID. */
START_TEST(real_file)
{
    etl_wprp *w;
    char err[512], g[ETL_GUID_STRING_SIZE];
    const etl_wprp_profile *p;
    const etl_wprp_collector *c;

    ck_assert_msg(etl_wprp_open(&w, testdata("wsl_storage.wprp"), err, sizeof err) == ETL_OK, "%s", err);
    ck_assert_uint_eq(etl_wprp_profile_count(w), 1);
    p = etl_wprp_profile_at(w, 0);
    ck_assert_str_eq(p->id, "WSL.Verbose.File");
    ck_assert_str_eq(p->name, "WSL");
    ck_assert_str_eq(p->detail_level, "Verbose");
    ck_assert_str_eq(p->logging_mode, "File");
    ck_assert_str_eq(p->description, "Traces for all WSL components");
    ck_assert_ptr_eq(etl_wprp_find(w, "WSL", NULL), p);
    ck_assert_uint_eq(p->collector_count, 1);
    c = &p->collectors[0];
    ck_assert_int_eq(c->kind, ETL_WPRP_EVENT_COLLECTOR);
    ck_assert_str_eq(c->id, "Collector");
    ck_assert_uint_eq(c->buffer_size_kb, 256);
    ck_assert_uint_eq(c->buffers, 1024);
    ck_assert_int_eq(c->buffers_percent, 0);
    ck_assert_uint_eq(c->provider_count, 25);
    ck_assert_str_eq(c->providers[0].id, "lxcore_kernel");
    ck_assert(c->providers[0].has_guid);
    ck_assert_str_eq(etl_guid_format(&c->providers[0].guid, g), "0cd1c309-0878-4515-83db-749843b3f5c9");
    ck_assert_uint_eq(c->providers[0].level, 5);
    ck_assert_uint_eq(c->providers[0].keywords, 0);
    ck_assert_str_eq(c->providers[15].id, "storvsp_io");
    ck_assert_uint_eq(c->providers[15].keywords, UINT64_MAX);
    ck_assert_int_eq(c->providers[15].non_paged_memory, 1);
    ck_assert_str_eq(c->providers[16].id, "virtdisk");
    ck_assert_uint_eq(c->providers[16].level, 4);
    ck_assert_str_eq(c->providers[20].id, "HyperV_SyntheticStorage");
    ck_assert_uint_eq(c->providers[20].level, 6);
    /* NonPagedMemory on four providers, each named. */
    ck_assert_uint_eq(p->unmapped_count, 4);
    ck_assert(has_unmapped(p, "10b3d268-9782-49a4-aacc-a93c5482cb6f: NonPagedMemory"));
    etl_wprp_free(w);
}
END_TEST

START_TEST(inheritance_and_operations)
{
    etl_wprp *w;
    char err[512];
    const etl_wprp_profile *p;
    const etl_wprp_collector *s, *e;

    ck_assert_msg(etl_wprp_open(&w, testdata("inherit.wprp"), err, sizeof err) == ETL_OK, "%s", err);
    ck_assert_uint_eq(etl_wprp_profile_count(w), 4);

    /* The system collector inherits its buffers from WPR's built-in one, its size its own. */
    p = must_find(w, "Sched", NULL);
    s = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_str_eq(s->id, "MySystemCollector");
    ck_assert_uint_eq(s->buffer_size_kb, 512);
    ck_assert_uint_eq(s->buffers, 160);
    ck_assert_uint_eq(s->kernel_flags, ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_CSWITCH | ETL_KERNEL_DISPATCHER);
    ck_assert_uint_eq(s->stackwalk_flags, ETL_KERNEL_CSWITCH);
    ck_assert_uint_eq(s->keyword_count, 4);
    ck_assert_str_eq(s->keywords[0].name, "ProcessThread");
    ck_assert_uint_eq(s->keywords[0].flags, ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD);
    ck_assert_str_eq(s->keywords[3].name, "Registry");
    ck_assert_uint_eq(s->keywords[3].flags, 0);
    ck_assert(has_unmapped(p, "keyword Registry"));
    ck_assert(has_unmapped(p, "stack ThreadCreate"));
    ck_assert(has_unmapped(p, "Process: NonPagedMemory"));
    ck_assert(has_unmapped(p, "Process: CaptureStateOnSave"));
    e = collector(p, ETL_WPRP_EVENT_COLLECTOR);
    ck_assert_str_eq(e->file_name, "my-events.etl");
    ck_assert_uint_eq(e->provider_count, 2);
    ck_assert_uint_eq(e->providers[0].keywords, 0x13);
    ck_assert_uint_eq(e->providers[0].level, 4);
    ck_assert_int_eq(e->providers[0].stack, 1);
    /* A provider by a name libetl knows has its GUID. */
    ck_assert_str_eq(e->providers[1].name, "Process");
    ck_assert(e->providers[1].has_guid);
    ck_assert_int_eq(e->providers[1].capture_state_on_save, 1);

    /* Base= within the file, Operation="Remove" of a keyword and a provider. */
    p = must_find(w, "Sched.Light", NULL);
    ck_assert_str_eq(p->detail_level, "Light");
    ck_assert_str_eq(p->description, "Scheduling, less");
    s = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_uint_eq(s->keyword_count, 3);
    ck_assert(!has_unmapped(p, "keyword Registry"));
    e = collector(p, ETL_WPRP_EVENT_COLLECTOR);
    ck_assert_uint_eq(e->provider_count, 1);
    ck_assert(!has_unmapped(p, "Process:"));

    /* Base= from a built-in profile, Operation="Add", an inline SystemProvider and EventProvider,
       a provider's own Base= with Keywords Operation="Remove", a buffer size in the reference. */
    p = must_find(w, "CpuPlus", NULL);
    ck_assert_str_eq(p->detail_level, "Verbose");
    s = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_uint_eq(s->kernel_flags, ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_CSWITCH |
                                           ETL_KERNEL_DISPATCHER | ETL_KERNEL_PROFILE | ETL_KERNEL_INTERRUPT | ETL_KERNEL_DPC |
                                           ETL_KERNEL_DISK_IO);
    e = collector(p, ETL_WPRP_EVENT_COLLECTOR);
    ck_assert_str_eq(e->id, "EventCollector_WPREventCollectorInFile");
    ck_assert_uint_eq(e->buffer_size_kb, 64);
    ck_assert_uint_eq(e->provider_count, 3);
    ck_assert_str_eq(e->providers[0].id, "DemoLess");
    ck_assert_uint_eq(e->providers[0].keywords, 0x11);
    ck_assert_uint_eq(e->providers[1].level, 2);
    ck_assert(e->providers[1].has_guid);
    ck_assert(!e->providers[2].has_guid);
    ck_assert(has_unmapped(p, "Microsoft-Windows-Nowhere: a name libetl knows no GUID of"));

    /* Removing a whole collector. */
    p = must_find(w, "Events", "Memory");
    ck_assert_str_eq(p->logging_mode, "Memory");
    ck_assert_uint_eq(p->collector_count, 1);
    ck_assert_int_eq(p->collectors[0].kind, ETL_WPRP_EVENT_COLLECTOR);
    ck_assert(!has_unmapped(p, "CpuConfig"));
    etl_wprp_free(w);
}
END_TEST

/* Every SystemProvider keyword WPR documents (and those its profiles use): the kernel flags of
   each that Linux records, an unmapped line for each that has no source. */
START_TEST(system_keywords)
{
    static const struct {
        const char *name;
        uint32_t flags;
    } mapped[] = {
        {"ProcessThread", ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD},
        {"Loader", ETL_KERNEL_IMAGE_LOAD},
        {"CSwitch", ETL_KERNEL_CSWITCH},
        {"ReadyThread", ETL_KERNEL_DISPATCHER},
        {"SampledProfile", ETL_KERNEL_PROFILE},
        {"SystemCall", ETL_KERNEL_SYSCALL},
        {"DiskIO", ETL_KERNEL_DISK_IO},
        {"DiskIOInit", ETL_KERNEL_DISK_IO},
        {"DiskIOInitialization", ETL_KERNEL_DISK_IO},
        {"Interrupt", ETL_KERNEL_INTERRUPT},
        {"DPC", ETL_KERNEL_DPC},
        {"NetworkTrace", ETL_KERNEL_NETWORK_TCPIP},
        {"FileIO", ETL_KERNEL_FILE_IO},
        {"FileIOInit", ETL_KERNEL_FILE_IO_INIT},
        {"Filename", ETL_KERNEL_DISK_FILE_IO},
        {"VirtualAllocation", ETL_KERNEL_VIRTUAL_ALLOC},
        {"VAMap", ETL_KERNEL_VAMAP},
        {"AllFaults", ETL_KERNEL_MEMORY_PAGE_FAULTS},
        {"ProcessCounter", ETL_KERNEL_PROCESS_COUNTERS},
    };
    static const char *const without[] = {
        "CompactCSwitch", "ContiguousMemorygeneration", "CpuConfig", "Drivers", "FootPrint", "IdleStates",
        "KernelQueue", "Memory", "MemoryInfo", "MemoryInfoWS", "Pool", "Power", "Registry", "SpinLock", "SplitIO",
        "ThreadPriority", "Timer",
    };
    /* HardFaults: memory_hard_faults, where this build's capture has that flag */
    uint32_t hard = etl_kernel_flag_from_name("memory_hard_faults"), want = hard;
    etl_wprp *w;
    char err[512], line[128];
    const etl_wprp_profile *p;
    const etl_wprp_collector *s;
    size_t seen = 0;

    ck_assert_msg(etl_wprp_open(&w, testdata("keywords.wprp"), err, sizeof err) == ETL_OK, "%s", err);
    p = must_find(w, "Keywords", NULL);
    s = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->keyword_count, 37);
    for (size_t i = 0; i < s->keyword_count; i++) {
        const etl_wprp_keyword *k = &s->keywords[i];
        int known = 0;
        for (size_t j = 0; j < sizeof mapped / sizeof *mapped; j++)
            if (strcmp(k->name, mapped[j].name) == 0) {
                ck_assert_msg(k->flags == mapped[j].flags, "%s: flags 0x%x, want 0x%x", k->name, (unsigned)k->flags,
                              (unsigned)mapped[j].flags);
                snprintf(line, sizeof line, "keyword %s:", k->name);
                ck_assert_msg(!has_unmapped(p, line), "%s mapped and listed unmapped", k->name);
                want |= mapped[j].flags;
                known = 1;
            }
        for (size_t j = 0; j < sizeof without / sizeof *without; j++)
            if (strcmp(k->name, without[j]) == 0) {
                ck_assert_msg(k->flags == 0, "%s: flags 0x%x, want none", k->name, (unsigned)k->flags);
                snprintf(line, sizeof line, "SystemProvider keyword %s: Linux cannot record it", k->name);
                ck_assert_msg(has_unmapped(p, line), "%s not listed unmapped", k->name);
                known = 1;
            }
        if (strcmp(k->name, "HardFaults") == 0) {
            ck_assert_uint_eq(k->flags, hard);
            ck_assert_int_eq(has_unmapped(p, "SystemProvider keyword HardFaults: its kernel flag memory_hard_faults is "
                                             "not in this build of libetl"), !hard);
            known = 1;
        }
        ck_assert_msg(known, "keyword %s not expected", k->name);
        seen++;
    }
    ck_assert_uint_eq(seen, sizeof mapped / sizeof *mapped + sizeof without / sizeof *without + 1);
    ck_assert_uint_eq(s->kernel_flags, want);
    ck_assert_uint_eq(s->kernel_flags & (ETL_KERNEL_FILEIO_ALL | ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP |
                                         ETL_KERNEL_MEMORY_PAGE_FAULTS | ETL_KERNEL_PROCESS_COUNTERS),
                      ETL_KERNEL_FILEIO_ALL | ETL_KERNEL_VIRTUAL_ALLOC | ETL_KERNEL_VAMAP |
                          ETL_KERNEL_MEMORY_PAGE_FAULTS | ETL_KERNEL_PROCESS_COUNTERS);
    ck_assert_uint_eq(p->unmapped_count, sizeof without / sizeof *without + !hard);
    etl_wprp_free(w);
}
END_TEST

/* Profiles recorded together: collectors of one name merged, their flags and providers united. */
START_TEST(combine)
{
    etl_wprp *w, *b, *cw;
    char err[512];
    const etl_wprp_profile *p, *list[3];
    const etl_wprp_collector *s, *e;

    ck_assert_msg(etl_wprp_open(&w, testdata("inherit.wprp"), err, sizeof err) == ETL_OK, "%s", err);
    ck_assert_int_eq(etl_wprp_builtin(&b, err, sizeof err), ETL_OK);
    /* Sched (its own system collector, named NT Kernel Logger), DiskIO.Light and CpuPlus. */
    list[0] = must_find(w, "Sched", NULL);
    list[1] = must_find(b, "DiskIO.Light", NULL);
    list[2] = must_find(w, "CpuPlus", NULL);
    ck_assert_msg(etl_wprp_combine(&cw, list, 3, err, sizeof err) == ETL_OK, "%s", err);
    etl_wprp_free(w); /* the combined set owns copies of everything */
    etl_wprp_free(b);
    ck_assert_uint_eq(etl_wprp_profile_count(cw), 1);
    p = etl_wprp_profile_at(cw, 0);
    ck_assert_str_eq(p->id, "Sched.Verbose.File+DiskIO.Light.File+CpuPlus.Verbose.File");
    ck_assert_str_eq(p->name, "Sched");
    ck_assert_str_eq(p->logging_mode, "File");
    ck_assert_ptr_null(p->unavailable);
    /* One system collector (one name), two event collectors (two names). */
    ck_assert_uint_eq(p->collector_count, 3);
    s = collector(p, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_str_eq(s->name, "NT Kernel Logger");
    ck_assert_str_eq(s->id, "MySystemCollector");
    ck_assert_uint_eq(s->kernel_flags, ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_IMAGE_LOAD | ETL_KERNEL_CSWITCH |
                                           ETL_KERNEL_DISPATCHER | ETL_KERNEL_PROFILE | ETL_KERNEL_DISK_IO |
                                           ETL_KERNEL_INTERRUPT | ETL_KERNEL_DPC); /* (CPU's Interrupt and DPC) */
    ck_assert_uint_eq(s->stackwalk_flags, ETL_KERNEL_CSWITCH | ETL_KERNEL_PROFILE | ETL_KERNEL_DISPATCHER);
    ck_assert_uint_eq(s->buffer_size_kb, 1024); /* the larger */
    ck_assert_uint_eq(s->buffers, 160);
    ck_assert(has_unmapped(p, "keyword Registry"));
    ck_assert(has_unmapped(p, "CpuConfig"));
    ck_assert(has_unmapped(p, "Microsoft-Windows-Nowhere"));
    ck_assert(has_unmapped(p, "stack ThreadCreate"));
    ck_assert_str_eq(p->collectors[1].name, "My Event Collector");
    ck_assert_uint_eq(p->collectors[1].provider_count, 2);
    e = &p->collectors[2];
    ck_assert_str_eq(e->name, "WPR Event Collector");
    ck_assert_uint_eq(e->provider_count, 3);
    etl_wprp_free(cw);

    /* The same provider in two profiles' collectors of one name: the higher level, keywords OR'd,
       the stack if either asks; 0 keywords (all events) wins. */
    ck_assert_int_eq(parse(&w, HEAD
        "<EventCollector Id=\"E\" Name=\"Ev\"><BufferSize Value=\"64\"/><Buffers Value=\"8\"/></EventCollector>\n"
        "<EventCollector Id=\"E2\" Name=\"ev\"><BufferSize Value=\"128\"/><Buffers Value=\"4\"/></EventCollector>\n"
        "<EventProvider Id=\"P1\" Name=\"458d4a63-7cc9-5239-62c4-f8aebbe597ac\" Level=\"2\"><Keywords><Keyword Value=\"0x1\"/></Keywords></EventProvider>\n"
        "<EventProvider Id=\"P2\" Name=\"458D4A63-7CC9-5239-62C4-F8AEBBE597AC\" Level=\"4\" Stack=\"true\"><Keywords><Keyword Value=\"0x8\"/></Keywords></EventProvider>\n"
        "<EventProvider Id=\"P3\" Name=\"458d4a63-7cc9-5239-62c4-f8aebbe597ac\" Level=\"1\"/>\n"
        "<Profile Id=\"A.Verbose.File\" Name=\"A\"><Collectors><EventCollectorId Value=\"E\"><EventProviders><EventProviderId Value=\"P1\"/></EventProviders></EventCollectorId></Collectors></Profile>\n"
        "<Profile Id=\"B.Verbose.File\" Name=\"B\"><Collectors><EventCollectorId Value=\"E2\"><EventProviders><EventProviderId Value=\"P2\"/></EventProviders></EventCollectorId></Collectors></Profile>\n"
        "<Profile Id=\"C.Verbose.File\" Name=\"C\"><Collectors><EventCollectorId Value=\"E\"><EventProviders><EventProviderId Value=\"P3\"/></EventProviders></EventCollectorId></Collectors></Profile>\n"
        "<Profile Id=\"D.Verbose.File\" Name=\"D\"><Collectors><SystemCollectorId Value=\"S\"/></Collectors></Profile>\n"
        "<SystemCollector Id=\"S\" Name=\"EV\"/>\n"
        TAIL, err, sizeof err), ETL_OK);
    list[0] = must_find(w, "A", NULL);
    list[1] = must_find(w, "B", NULL);
    ck_assert_msg(etl_wprp_combine(&cw, list, 2, err, sizeof err) == ETL_OK, "%s", err);
    p = etl_wprp_profile_at(cw, 0);
    ck_assert_uint_eq(p->collector_count, 1);
    e = &p->collectors[0];
    ck_assert_str_eq(e->name, "Ev");
    ck_assert_uint_eq(e->buffer_size_kb, 128);
    ck_assert_uint_eq(e->buffers, 8);
    ck_assert_uint_eq(e->provider_count, 1);
    ck_assert_uint_eq(e->providers[0].level, 4);
    ck_assert_uint_eq(e->providers[0].keywords, 0x9);
    ck_assert_int_eq(e->providers[0].stack, 1);
    etl_wprp_free(cw);
    list[1] = must_find(w, "C", NULL);
    ck_assert_int_eq(etl_wprp_combine(&cw, list, 2, err, sizeof err), ETL_OK);
    ck_assert_uint_eq(etl_wprp_profile_at(cw, 0)->collectors[0].providers[0].keywords, 0);
    ck_assert_uint_eq(etl_wprp_profile_at(cw, 0)->collectors[0].providers[0].level, 2);
    etl_wprp_free(cw);
    /* A system and an event collector of one name cannot be one session. */
    list[1] = must_find(w, "D", NULL);
    cw = (etl_wprp *)1;
    ck_assert_int_eq(etl_wprp_combine(&cw, list, 2, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_null(cw);
    ck_assert_msg(strstr(err, "\"EV\" is a system collector in one profile and an event collector") != NULL, "%s", err);
    ck_assert_int_eq(etl_wprp_combine(&cw, list, 0, err, sizeof err), ETL_FAILED);
    etl_wprp_free(w);

    /* Windows-only profiles stay unavailable when combined. */
    ck_assert_int_eq(etl_wprp_builtin(&b, err, sizeof err), ETL_OK);
    list[0] = must_find(b, "CPU", NULL);
    list[1] = must_find(b, "Heap", NULL);
    ck_assert_int_eq(etl_wprp_combine(&cw, list, 2, err, sizeof err), ETL_OK);
    ck_assert_ptr_nonnull(strstr(etl_wprp_profile_at(cw, 0)->unavailable, "Heap.Verbose.File: "));
    etl_wprp_free(cw);
    etl_wprp_free(b);
}
END_TEST

/* Buffers as a count, or as a share of the memory in buffers of the collector's size. */
START_TEST(buffer_count)
{
    etl_wprp_collector c;

    memset(&c, 0, sizeof c);
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1ull << 33), 0);
    c.buffers = 160;
    c.buffer_size_kb = 1024;
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1ull << 33), 160);
    c.buffers = 3;
    c.buffers_percent = 1;
    /* 3% of 8 GiB in 1 MiB buffers: 245. */
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1ull << 33), (uint32_t)((1ull << 33) / 100 * 3 / (1 << 20)));
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1ull << 33), 245);
    c.buffer_size_kb = 0; /* 64 KB */
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1ull << 33), 3932);
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, 1000), 1);
    c.buffers = 100;
    c.buffer_size_kb = 1;
    ck_assert_uint_eq(etl_wprp_collector_buffer_count(&c, UINT64_MAX), UINT32_MAX);
}
END_TEST

START_TEST(malformed)
{
    expect_bad(HEAD "<Profile Id=\"A\" Name=\"A\">\n<Collectors>\n</Profile>\n" TAIL, 6, "XML: Opening and ending tag mismatch");
    expect_bad("<?xml version=\"1.0\"?>\n<instrumentationManifest/>\n", 2, "not <WindowsPerformanceRecorder>");
    expect_bad(HEAD SYSCOL TAIL, 2, "no Profile");
    expect_bad(HEAD SYSCOL "<Profile Name=\"A\"/>\n" TAIL, 5, "Profile without its Id");
    expect_bad(HEAD SYSCOL "<Profile Id=\"A.Verbose.File\" Description=\"d\"/>\n" TAIL, 5, "without its Name");
    expect_bad(HEAD "<Unknown Id=\"x\"/>\n" TAIL, 4, "<Unknown> is not a WPR definition");
    expect_bad(HEAD SYSCOL "<SystemCollector Id=\"S\" Name=\"x\"/>\n<Profile Id=\"P\" Name=\"P\"/>\n" TAIL, 5,
               "SystemCollector Id=\"S\" is defined twice (first on line 4)");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\">\n<Collectors>\n<SystemCollectorId Value=\"Nope\"/>\n</Collectors>\n</Profile>\n" TAIL,
               7, "SystemCollectorId Value=\"Nope\" names no SystemCollector");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\">\n<Collectors>\n<SystemCollectorId Value=\"S\">\n"
                           "<SystemProviderId Value=\"Gone\"/>\n</SystemCollectorId>\n</Collectors>\n</Profile>\n" TAIL,
               8, "SystemProviderId Value=\"Gone\" names no SystemProvider");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\" Base=\"Q\"/>\n" TAIL, 5, "Base=\"Q\" names no Profile");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\" LoggingMode=\"Disk\"/>\n" TAIL, 5, "LoggingMode=\"Disk\" is not File or Memory");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\" DetailLevel=\"Heavy\"/>\n" TAIL, 5, "DetailLevel=\"Heavy\"");
    expect_bad(HEAD "<SystemCollector Id=\"S\" Name=\"N\">\n<BufferSize Value=\"0\"/>\n</SystemCollector>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><SystemCollectorId Value=\"S\"/></Collectors></Profile>\n" TAIL,
               5, "BufferSize");
    expect_bad(HEAD "<SystemCollector Id=\"S\" Name=\"N\">\n<BufferSize Value=\"2048\"/>\n</SystemCollector>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><SystemCollectorId Value=\"S\"/></Collectors></Profile>\n" TAIL,
               5, "larger than 1024");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\">\n<Buffers Value=\"many\"/>\n</EventCollector>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"/></Collectors></Profile>\n" TAIL,
               5, "Value=\"many\" is not a number");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\">\n<Buffers Value=\"150\" PercentageOfTotalMemory=\"true\"/>\n</EventCollector>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"/></Collectors></Profile>\n" TAIL,
               5, "larger than 100");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\"/>\n<EventProvider Id=\"X\" Name=\"Process\" Level=\"300\"/>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"><EventProviders>\n"
                    "<EventProviderId Value=\"X\"/></EventProviders></EventCollectorId></Collectors></Profile>\n" TAIL,
               5, "Level=\"300\" is larger than 255");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\"/>\n<EventProvider Id=\"X\" Name=\"Process\">\n<Keywords>\n"
                    "<Keyword Value=\"0xZZ\"/>\n</Keywords>\n</EventProvider>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"><EventProviders>\n"
                    "<EventProviderId Value=\"X\"/></EventProviders></EventCollectorId></Collectors></Profile>\n" TAIL,
               7, "Value=\"0xZZ\" is not a number");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\"/>\n<EventProvider Id=\"X\"/>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"><EventProviders>\n"
                    "<EventProviderId Value=\"X\"/></EventProviders></EventCollectorId></Collectors></Profile>\n" TAIL,
               5, "EventProvider Id=\"X\" without its Name");
    expect_bad(HEAD SYSCOL "<SystemProvider Id=\"K\">\n<Keywords>\n<Keyword/>\n</Keywords>\n</SystemProvider>\n"
                           "<Profile Id=\"P\" Name=\"P\"><Collectors><SystemCollectorId Value=\"S\"><SystemProviderId Value=\"K\"/>"
                           "</SystemCollectorId></Collectors></Profile>\n" TAIL,
               7, "Keyword without its Value");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\">\n<Collectors Operation=\"Merge\"/>\n</Profile>\n" TAIL, 6,
               "Operation=\"Merge\" is not Set, Add or Remove");
    expect_bad(HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\" Stack=\"yes\"><Collectors><SystemCollectorId Value=\"S\">\n"
                           "<SystemProvider Id=\"I\" Stack=\"x\"><Stacks><Keyword Value=\"CSwitch\"/></Stacks></SystemProvider>\n"
                           "</SystemCollectorId></Collectors></Profile>\n" TAIL,
               6, "<Keyword> in <Stacks>");
}
END_TEST

/* Two system collectors: of one name they are one kernel session, of two names the second is noted. */
START_TEST(system_collectors)
{
    etl_wprp *w;
    char err[512];
    const etl_wprp_profile *p;

    ck_assert_msg(parse(&w, HEAD SYSCOL "<SystemCollector Id=\"T\" Name=\"NT Kernel Logger\" Realtime=\"true\"/>\n"
                                  "<SystemCollector Id=\"U\" Name=\"Circular Kernel Context Logger\"/>\n"
                                  "<SystemProvider Id=\"K1\"><Keywords><Keyword Value=\"CSwitch\"/><CustomKeyword Value=\"0x00040000\"/>"
                                  "</Keywords></SystemProvider>\n"
                                  "<SystemProvider Id=\"K2\"><Keywords><Keyword Value=\"Loader\"/></Keywords></SystemProvider>\n"
                                  "<EventCollector Id=\"E\" Name=\"N\"/>\n"
                                  "<Profile Id=\"P\" Name=\"P\"><Collectors>\n"
                                  "<SystemCollectorId Value=\"S\"><SystemProviderId Value=\"K1\"/></SystemCollectorId>\n"
                                  "<SystemCollectorId Value=\"T\"><SystemProviderId Value=\"K2\"/></SystemCollectorId>\n"
                                  "<EventCollectorId Value=\"E\"><EventProviders><EventProvider Id=\"X\" Name=\"Process\">"
                                  "<EventFilters/></EventProvider></EventProviders></EventCollectorId>\n"
                                  "</Collectors></Profile>\n"
                                  "<Profile Id=\"Q\" Name=\"Q\" Base=\"P\"><Collectors Operation=\"Add\">\n"
                                  "<SystemCollectorId Value=\"U\"><SystemProviderId Value=\"K1\"/></SystemCollectorId>\n"
                                  "</Collectors></Profile>\n" TAIL, err, sizeof err) == ETL_OK, "%s", err);
    p = must_find(w, "P", NULL);
    ck_assert_uint_eq(p->collector_count, 2);
    ck_assert_str_eq(p->collectors[0].id, "S");
    ck_assert_uint_eq(p->collectors[0].kernel_flags, ETL_KERNEL_CSWITCH | ETL_KERNEL_IMAGE_LOAD);
    ck_assert(has_unmapped(p, "SystemCollector T: Realtime=\"true\" not taken"));
    ck_assert(has_unmapped(p, "EventProvider Process: <EventFilters> not taken"));
    ck_assert(has_unmapped(p, "SystemProvider K1: CustomKeyword 0x00040000 (a raw group mask) not taken"));
    p = must_find(w, "Q", NULL);
    ck_assert_uint_eq(p->collector_count, 3);
    ck_assert(has_unmapped(p, "SystemCollector U (\"Circular Kernel Context Logger\"): a second system logger"));
    etl_wprp_free(w);
}
END_TEST

START_TEST(base_cycles)
{
    /* Profiles, collectors and providers whose Base= loops are refused, not followed forever. */
    expect_bad(HEAD SYSCOL "<Profile Id=\"A\" Name=\"A\" Base=\"B\"/>\n<Profile Id=\"B\" Name=\"B\" Base=\"A\"/>\n" TAIL, 6,
               "Base= goes deeper than");
    expect_bad(HEAD SYSCOL "<Profile Id=\"A\" Name=\"A\" Base=\"A\"/>\n" TAIL, 5, "(a cycle?)");
    expect_bad(HEAD "<SystemCollector Id=\"S\" Name=\"N\" Base=\"S\"/>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><SystemCollectorId Value=\"S\"/></Collectors></Profile>\n" TAIL,
               4, "SystemCollector: Base= goes deeper");
    expect_bad(HEAD SYSCOL "<SystemProvider Id=\"K\" Base=\"L\"/>\n<SystemProvider Id=\"L\" Base=\"K\"/>\n"
                           "<Profile Id=\"P\" Name=\"P\"><Collectors><SystemCollectorId Value=\"S\"><SystemProviderId Value=\"K\"/>"
                           "</SystemCollectorId></Collectors></Profile>\n" TAIL,
               6, "SystemProvider: Base= goes deeper");
    expect_bad(HEAD "<EventCollector Id=\"E\" Name=\"N\"/>\n<EventProvider Id=\"X\" Name=\"Process\" Base=\"X\"/>\n"
                    "<Profile Id=\"P\" Name=\"P\"><Collectors><EventCollectorId Value=\"E\"><EventProviders>\n"
                    "<EventProviderId Value=\"X\"/></EventProviders></EventCollectorId></Collectors></Profile>\n" TAIL,
               5, "EventProvider: Base= goes deeper");
}
END_TEST

/* Appends s to the growing buffer *b (length *n). */
static void put(char **b, size_t *n, size_t *cap, const char *s)
{
    size_t len = strlen(s);
    if (*n + len + 1 > *cap) {
        *cap = (*n + len + 1) * 2;
        *b = realloc(*b, *cap);
        ck_assert_ptr_nonnull(*b);
    }
    memcpy(*b + *n, s, len + 1);
    *n += len;
}

START_TEST(hostile)
{
    etl_wprp *w;
    char err[1024], *b = NULL, *big;
    size_t n = 0, cap = 0;
    int rc;

    /* A 1 MB attribute: taken as a name, but never printed whole. */
    big = malloc(1 << 20);
    ck_assert_ptr_nonnull(big);
    memset(big, 'x', (1 << 20) - 1);
    big[(1 << 20) - 1] = '\0';
    put(&b, &n, &cap, HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\" Base=\"");
    put(&b, &n, &cap, big);
    put(&b, &n, &cap, "\"/>\n" TAIL);
    rc = parse(&w, b, err, sizeof err);
    ck_assert_int_eq(rc, ETL_FAILED);
    ck_assert_msg(strstr(err, "t.wprp:5: ") == err && strstr(err, "(1048575 bytes)"), "%s", err);
    ck_assert_uint_lt(strlen(err), 300);

    /* Deep nesting: refused by the XML reader with a line, no recursion of ours. */
    n = 0;
    put(&b, &n, &cap, HEAD SYSCOL "<Profile Id=\"P\" Name=\"P\">");
    for (int i = 0; i < 100000; i++) put(&b, &n, &cap, "<a>");
    put(&b, &n, &cap, "</Profile>" TAIL);
    ck_assert_int_eq(parse(&w, b, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strncmp(err, "t.wprp:5: ", 10) == 0, "%s", err);

    /* A long chain of Base= is cut at the limit, with the line of the profile that went too deep. */
    n = 0;
    put(&b, &n, &cap, HEAD SYSCOL "<Profile Id=\"P0\" Name=\"P\"/>\n");
    for (int i = 1; i < 100; i++) {
        char line[128];
        snprintf(line, sizeof line, "<Profile Id=\"P%d\" Name=\"P\" Base=\"P%d\"/>\n", i, i - 1);
        put(&b, &n, &cap, line);
    }
    put(&b, &n, &cap, TAIL);
    ck_assert_int_eq(parse(&w, b, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "Base= goes deeper than 32"), "%s", err);

    /* Many profiles each adding to the same collector: all resolved. */
    n = 0;
    put(&b, &n, &cap, HEAD SYSCOL "<SystemProvider Id=\"K\"><Keywords><Keyword Value=\"CSwitch\"/></Keywords></SystemProvider>\n");
    for (int i = 0; i < 2000; i++) {
        char line[256];
        snprintf(line, sizeof line,
                 "<Profile Id=\"P%d\" Name=\"P%d\"><Collectors><SystemCollectorId Value=\"S\"><SystemProviderId Value=\"K\"/>"
                 "</SystemCollectorId></Collectors></Profile>\n", i, i);
        put(&b, &n, &cap, line);
    }
    put(&b, &n, &cap, TAIL);
    ck_assert_msg(parse(&w, b, err, sizeof err) == ETL_OK, "%s", err);
    ck_assert_uint_eq(etl_wprp_profile_count(w), 2000);
    ck_assert_uint_eq(etl_wprp_profile_at(w, 1999)->collectors[0].kernel_flags, ETL_KERNEL_CSWITCH);
    etl_wprp_free(w);

    /* Empty input, and not a file at all. */
    ck_assert_int_eq(etl_wprp_parse(&w, "", 0, "t.wprp", err, sizeof err), ETL_FAILED);
    ck_assert_int_eq(etl_wprp_open(&w, testdata("no-such.wprp"), err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "no-such.wprp: No such file"), "%s", err);
    free(big);
    free(b);
}
END_TEST

/* Random damage to a good file: each damaged copy is read or refused with a message naming the
   file, never crashes (the sanitizer build checks the reads), in the manner of check_damage. */
START_TEST(random_damage)
{
    FILE *f = fopen(testdata("inherit.wprp"), "rb");
    char *good, *copy, err[1024];
    long n;
    unsigned seed = 20;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    ck_assert_int_gt(n, 100);
    rewind(f);
    good = malloc((size_t)n);
    copy = malloc((size_t)n);
    ck_assert(good && copy);
    ck_assert_uint_eq(fread(good, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    for (int round = 0; round < 400; round++) {
        etl_wprp *w = NULL;
        static const char bytes[] = "<>\"=/!x0 \n&;Base";
        size_t len = (size_t)n;
        memcpy(copy, good, len);
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            if (round % 5 == 4) len = at; /* cut short */
            else copy[at] = bytes[(seed >> 8) % (sizeof bytes - 1)];
        }
        err[0] = '\0';
        if (etl_wprp_parse(&w, copy, len, "t.wprp", err, sizeof err) == ETL_OK) {
            ck_assert_ptr_nonnull(w);
            for (size_t i = 0; i < etl_wprp_profile_count(w); i++) ck_assert_ptr_nonnull(etl_wprp_profile_at(w, i)->id);
            etl_wprp_free(w);
        } else {
            ck_assert_ptr_null(w);
            ck_assert_msg(strncmp(err, "t.wprp:", 7) == 0, "round %d: '%s'", round, err);
        }
    }
    free(good);
    free(copy);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wprp");
    TCase *tc = tcase_create("profiles");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, builtin_profiles);
    tcase_add_test(tc, real_file);
    tcase_add_test(tc, inheritance_and_operations);
    tcase_add_test(tc, combine);
    tcase_add_test(tc, system_keywords);
    tcase_add_test(tc, buffer_count);
    tcase_add_test(tc, malformed);
    tcase_add_test(tc, system_collectors);
    tcase_add_test(tc, base_cycles);
    tcase_add_test(tc, hostile);
    tcase_add_test(tc, random_damage);
    suite_add_tcase(s, tc);
    return check_run(s);
}
