/* SPDX-License-Identifier: MIT */
/* Tests of the kernel's class tables: fields of real events against their bytes, every sample event decoded, the header against TraceEvent's baseline, truncation of every class. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "reader/reader.h"
#include "testutil.h"
#include "baseline.h"

#define DIAGHUB "samples/perfview_diaghub.kernel.1.etl"
#define SELFDESC "samples/perfview_SelfDescribingSingleEvent.etl"

static etl_decoder *new_decoder(void)
{
    etl_decoder_options o;
    etl_decoder *d = NULL;

    memset(&o, 0, sizeof o);
    o.flags = ETL_DECODER_NO_DEFAULTS;
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_OK);
    return d;
}

/* ---- one event of a sample, decoded ---- */

struct found {
    etl_reader *r;
    etl_decoder *d;
    etl_event ev;
    etl_decoded_event de;
};

/* The nth (0: first) event of the sample named `name` ("SystemConfig/CPU"), in the reader's
   default order, decoded; the reader stays open until found_close. */
static void find_event(struct found *f, const char *rel, const char *name, unsigned nth)
{
    int rc;

    memset(f, 0, sizeof *f);
    ck_assert_int_eq(etl_reader_open_path(&f->r, testdata_path(rel), NULL), ETL_OK);
    f->d = new_decoder();
    while ((rc = etl_reader_next(f->r, &f->ev)) == ETL_OK) {
        if (etl_decoder_decode(f->d, &f->ev, &f->de) != 1 || !f->de.event_name || strcmp(f->de.event_name, name) != 0)
            continue;
        if (nth-- == 0) return;
    }
    ck_abort_msg("%s: no event %s", rel, name);
}

static void found_close(struct found *f)
{
    etl_decoder_close(f->d);
    etl_reader_close(f->r);
}

static const etl_field *field_of(const etl_decoded_event *e, const char *name)
{
    for (uint32_t i = 0; i < e->field_count; i = e->fields[i].end)
        if (strcmp(e->fields[i].name, name) == 0) return &e->fields[i];
    ck_abort_msg("event %s has no field %s", e->event_name, name);
    return NULL;
}

static void is_uint(const etl_decoded_event *e, const char *name, uint64_t want)
{
    uint64_t v = 0;
    ck_assert_msg(etl_field_uint(field_of(e, name), &v) == ETL_OK, "%s.%s is no integer", e->event_name, name);
    ck_assert_msg(v == want, "%s.%s = %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")", e->event_name, name,
                  v, v, want, want);
}

static void is_int(const etl_decoded_event *e, const char *name, int64_t want)
{
    int64_t v = 0;
    ck_assert_int_eq(etl_field_int(field_of(e, name), &v), ETL_OK);
    ck_assert_msg(v == want, "%s.%s = %" PRId64 ", want %" PRId64, e->event_name, name, v, want);
}

/* The value as etl_field_format writes it (strings unquoted, GUIDs lowercase, SIDs S-1-...). */
static void is_text(const etl_decoded_event *e, const char *name, const char *want)
{
    char buf[1024];
    etl_field_format(field_of(e, name), buf, sizeof buf);
    ck_assert_msg(strcmp(buf, want) == 0, "%s.%s = \"%s\", want \"%s\"", e->event_name, name, buf, want);
}

/* ---- fields against the bytes (each value read off a hexdump of the record) ---- */

START_TEST(sysconfig_cpu_v3)
{
    struct found f;
    find_event(&f, DIAGHUB, "SystemConfig/CPU", 0);
    ck_assert_uint_eq(f.ev.version, 3);
    ck_assert_uint_eq(f.ev.payload_len, 828);
    is_uint(&f.de, "MHz", 2295);
    is_uint(&f.de, "NumberOfProcessors", 4);
    is_uint(&f.de, "MemSize", 16384);
    is_uint(&f.de, "PageSize", 4096);
    is_uint(&f.de, "AllocationGranularity", 65536);
    is_text(&f.de, "ComputerName", "liha-test");                    /* char16[256] at 0x14 */
    is_text(&f.de, "DomainName", "redmond.corp.microsoft.com");     /* char16[134] at 0x214 */
    is_uint(&f.de, "HyperThreadingFlag", 0xf);                      /* 0x320 */
    is_uint(&f.de, "HighestUserAddress", 0x7ffffffeffffull);        /* 0x328 */
    is_uint(&f.de, "ProcessorArchitecture", 9);                     /* 0x330: AMD64 */
    is_uint(&f.de, "ProcessorLevel", 6);
    is_uint(&f.de, "ProcessorRevision", 0x4f01);
    is_uint(&f.de, "NxEnabled", 1);
    is_uint(&f.de, "PaeEnabled", 1);
    is_uint(&f.de, "MemorySpeed", 0);                               /* 0x338, the last 4 bytes */
    ck_assert_uint_eq(f.de.payload_used, f.ev.payload_len);
    found_close(&f);
}
END_TEST

START_TEST(sysconfig_disks_and_nic)
{
    struct found f;

    find_event(&f, DIAGHUB, "SystemConfig/PhyDisk", 0);
    is_uint(&f.de, "DiskNumber", 1);
    is_uint(&f.de, "BytesPerSector", 512);
    is_uint(&f.de, "SectorsPerTrack", 63);
    is_uint(&f.de, "TracksPerCylinder", 255);
    is_uint(&f.de, "Cylinders", 0x1051);
    is_uint(&f.de, "SCSITarget", 1);
    is_text(&f.de, "Manufacturer", "Virtual HD ATA Device");
    is_uint(&f.de, "PartitionCount", 1);                            /* 0x228 */
    is_uint(&f.de, "WriteCacheEnabled", 1);                         /* 0x22c */
    is_text(&f.de, "BootDriveLetter", "C");                         /* char16[3] at 0x22e */
    ck_assert_uint_eq(f.de.payload_used, 568);
    found_close(&f);

    find_event(&f, DIAGHUB, "SystemConfig/LogDisk", 0);
    is_uint(&f.de, "StartOffset", 0x100000);
    is_uint(&f.de, "PartitionSize", 0x1f9fb6ba00ull);
    is_uint(&f.de, "DiskNumber", 0);
    is_uint(&f.de, "Size", 112);
    is_uint(&f.de, "DriveType", 1);
    is_text(&f.de, "DriveLetterString", "C:");
    is_uint(&f.de, "PartitionNumber", 1);
    is_uint(&f.de, "SectorsPerCluster", 8);
    is_uint(&f.de, "BytesPerSector", 512);
    is_int(&f.de, "NumberOfFreeClusters", 0x0159fcf8);
    is_int(&f.de, "TotalNumberOfClusters", 0x01f9fb6b);
    is_text(&f.de, "FileSystem", "NTFS");
    ck_assert_uint_eq(f.de.payload_used, 112);
    found_close(&f);

    find_event(&f, DIAGHUB, "SystemConfig/NIC", 0);
    is_uint(&f.de, "PhysicalAddr", 0x0740fb3a0d00ull);
    is_uint(&f.de, "PhysicalAddrLen", 6);
    is_uint(&f.de, "Ipv4Index", 4);
    is_uint(&f.de, "Ipv6Index", 4);
    is_text(&f.de, "NICDescription", "Microsoft Hyper-V Network Adapter");
    is_text(&f.de, "IpAddresses", "fe80::7c1a:e4e3:1fc7:aaeb;172.16.206.149");
    is_text(&f.de, "DnsServerAddresses", "10.50.50.50;10.50.10.50");
    ck_assert_uint_eq(f.de.payload_used, f.ev.payload_len);
    found_close(&f);

    find_event(&f, DIAGHUB, "SystemConfig/IDEChannel", 0);
    is_uint(&f.de, "TargetId", 0);
    is_uint(&f.de, "DeviceType", 1);
    is_uint(&f.de, "DeviceTimingMode", 0x410);
    is_uint(&f.de, "LocationInformationLen", 9);
    is_text(&f.de, "LocationInformation", "Channel 0");
    found_close(&f);
}
END_TEST

START_TEST(sysconfig_services_irq_pnp)
{
    struct found f;

    find_event(&f, DIAGHUB, "SystemConfig/Services", 0);
    ck_assert_uint_eq(f.ev.version, 3);
    is_uint(&f.de, "ProcessId", 0);
    is_uint(&f.de, "ServiceState", 1);
    is_uint(&f.de, "SubProcessTag", 3);
    is_text(&f.de, "ServiceName", "AJRouter");
    is_text(&f.de, "DisplayName", "AllJoyn Router Service");
    is_text(&f.de, "ProcessName", "");
    is_text(&f.de, "LoadOrderGroup", "");
    is_text(&f.de, "SvchostGroup", "LocalServiceNetworkRestricted");
    ck_assert_uint_eq(f.de.payload_used, 140);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/Services", 2); /* a running service: all five strings */
    is_uint(&f.de, "ProcessId", 0x50c);
    is_uint(&f.de, "ServiceState", 4);
    is_text(&f.de, "ServiceName", "AppIDSvc");
    is_text(&f.de, "ProcessName", "svchost.exe");
    is_text(&f.de, "LoadOrderGroup", "ProfSvc_Group");
    is_text(&f.de, "SvchostGroup", "LocalServiceNetworkRestricted");
    ck_assert_uint_eq(f.de.payload_used, 184);
    found_close(&f);

    find_event(&f, DIAGHUB, "SystemConfig/IRQ", 0);
    ck_assert_uint_eq(f.ev.version, 3);
    is_uint(&f.de, "IRQAffinity", 0xffffffff);
    is_uint(&f.de, "IRQGroup", 0);
    is_uint(&f.de, "IRQNum", 10);                                   /* at 0x0c in version 3 */
    is_uint(&f.de, "DeviceDescriptionLen", 61);
    is_text(&f.de, "DeviceDescription", "PCI\\VEN_1414&DEV_5353&SUBSYS_00000000&REV_00\\3&267A616A&1&40");
    ck_assert_uint_eq(f.de.payload_used, 142);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/IRQ", 1);
    is_uint(&f.de, "IRQNum", 5);
    is_text(&f.de, "DeviceDescription", "ACPI\\VMBUS\\0");
    found_close(&f);

    find_event(&f, DIAGHUB, "SystemConfig/PnP", 0);
    ck_assert_uint_eq(f.ev.version, 5);
    is_text(&f.de, "ClassGuid", "4d36e97d-e325-11ce-bfc1-08002be10318");
    is_uint(&f.de, "UpperFilterCount", 0);
    is_uint(&f.de, "LowerFilterCount", 0);
    is_uint(&f.de, "DevStatus", 0x0180200a);
    is_uint(&f.de, "DevProblem", 0);
    is_text(&f.de, "DeviceID", "PCI\\VEN_1414&DEV_5353&SUBSYS_00000000&REV_00\\3&267A616A&1&40");
    is_text(&f.de, "DeviceDescription", "Microsoft Hyper-V S3 Cap");
    is_text(&f.de, "FriendlyName", "");
    is_text(&f.de, "PdoName", "\\Device\\NTPNP_PCI0004");
    is_text(&f.de, "ServiceName", "s3cap");
    ck_assert_uint_eq(field_of(&f.de, "UpperFilters")->count, 0);
    ck_assert_uint_eq(f.de.payload_used, 262);
    found_close(&f);
    /* Every PnP record ends exactly after its filters' names, as many as their counts say. */
    {
        etl_reader *r;
        etl_decoder *d = new_decoder();
        etl_event ev;
        etl_decoded_event de;
        unsigned pnp = 0, filters = 0, storflt = 0;
        ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(DIAGHUB), NULL), ETL_OK);
        while (etl_reader_next(r, &ev) == ETL_OK) {
            if (etl_decoder_decode(d, &ev, &de) != 1 || strcmp(de.event_name, "SystemConfig/PnP") != 0) continue;
            pnp++;
            ck_assert_uint_eq(de.payload_used, ev.payload_len);
            filters += field_of(&de, "UpperFilters")->count + field_of(&de, "LowerFilters")->count;
            if (field_of(&de, "LowerFilters")->count == 1) {
                char name[64], svc[64];
                etl_field_format(field_of(&de, "LowerFilters") + 1, name, sizeof name); /* its one element follows it */
                etl_field_format(field_of(&de, "ServiceName"), svc, sizeof svc);
                if (strcmp(svc, "disk") == 0) { /* the Hyper-V disks: storflt below them */
                    ck_assert_str_eq(name, "storflt");
                    storflt++;
                }
            }
        }
        ck_assert_uint_eq(pnp, 101);
        ck_assert_uint_gt(filters, 0);
        ck_assert_uint_eq(storflt, 2);
        etl_decoder_close(d);
        etl_reader_close(r);
    }
}
END_TEST

START_TEST(sysconfig_small_types)
{
    struct found f;

    find_event(&f, DIAGHUB, "SystemConfig/Power", 0);
    is_uint(&f.de, "S1", 0);
    is_uint(&f.de, "S4", 0);
    is_uint(&f.de, "S5", 1);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/Platform", 0);
    is_text(&f.de, "SystemManufacturer", "Microsoft Corporation");
    is_text(&f.de, "SystemProductName", "Virtual Machine");
    is_text(&f.de, "BiosDate", "12/07/2018");
    is_text(&f.de, "BiosVersion", "090008");
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/DPI", 0);
    is_uint(&f.de, "MachineDPI", 96);
    is_uint(&f.de, "UserDPI", 96);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/CodeIntegrity", 0);
    is_uint(&f.de, "CodeIntegrityInfo", 1);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/TelemetryInfo", 0);
    is_text(&f.de, "MachineId", "b3b0fa5f-3c87-4542-b08d-7886ea577083");
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/DeviceFamily", 0);
    is_uint(&f.de, "UAPInfo", 0x000a00004a6101c2ull);              /* 10.0.19041.450 */
    is_uint(&f.de, "DeviceFamily", 3);
    is_uint(&f.de, "DeviceForm", 0);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/FlightIds", 0);
    is_text(&f.de, "UpdateId", "AFBFD20A-E84A-4FA1-8A13-8B50298D5BBA.1");
    {
        char buf[256];
        etl_field_format(field_of(&f.de, "FlightIdList"), buf, sizeof buf);
        ck_assert_msg(strncmp(buf, "RS:685B,DC:4096F99E,", 20) == 0, "%s", buf);
        ck_assert_msg(strcmp(buf + strlen(buf) - 11, "FX:11AF08B8") == 0, "%s", buf);
    }
    ck_assert_uint_eq(f.de.payload_used, 238);
    found_close(&f);
    find_event(&f, DIAGHUB, "SystemConfig/Processors", 1);
    is_uint(&f.de, "ProcessorIndex", 1);
    is_uint(&f.de, "FeatureSet", 0x3d1b3dff);
    is_uint(&f.de, "ProcessorSpeed", 2295);
    is_text(&f.de, "ProcessorName", "Intel(R) Xeon(R) CPU E5-2673 v4 @ 2.30GHz");
    is_text(&f.de, "ProcessorIdentifier", "Intel64 Family 6 Model 79 Stepping 1");
    is_text(&f.de, "VendorIdentifier", "GenuineIntel");
    ck_assert_uint_eq(f.de.payload_used, 428);
    found_close(&f);
}
END_TEST

START_TEST(process_and_image)
{
    struct found f;

    find_event(&f, DIAGHUB, "Process/DCStart", 0); /* the Idle process, version 4 */
    ck_assert_uint_eq(f.ev.version, 4);
    is_uint(&f.de, "UniqueProcessKey", 0xfffff8016b723a00ull);
    is_uint(&f.de, "ProcessId", 0);
    is_uint(&f.de, "ParentId", 0);
    is_uint(&f.de, "SessionId", 0xffffffff);
    is_int(&f.de, "ExitStatus", 0);
    is_uint(&f.de, "DirectoryTableBase", 0x1aa000);
    is_uint(&f.de, "Flags", 0);
    is_text(&f.de, "UserSID", "S-1-5-18");                          /* after a 16-byte TOKEN_USER at 0x24 */
    is_text(&f.de, "ImageFileName", "Idle");
    is_text(&f.de, "CommandLine", "");
    is_text(&f.de, "ApplicationId", "");
    ck_assert_uint_eq(f.de.payload_used, 75);
    found_close(&f);

    find_event(&f, DIAGHUB, "Process/Defunct", 0); /* version 5: a FILETIME after the strings */
    ck_assert_uint_eq(f.ev.version, 5);
    is_uint(&f.de, "UniqueProcessKey", 0xffffa804e2a3b080ull);
    is_uint(&f.de, "ProcessId", 0x1120);
    is_uint(&f.de, "ParentId", 0x730);
    is_uint(&f.de, "DirectoryTableBase", 0x40f4ed000ull);
    is_text(&f.de, "UserSID", "S-1-5-18");
    is_text(&f.de, "ImageFileName", "MpCmdRun.exe");
    is_text(&f.de, "ExitTime", "2020-09-14T22:29:07.4624863Z");    /* 0x01d68ae675a14d5f at 0x53 */
    ck_assert_uint_eq(f.de.payload_used, 91);
    found_close(&f);

    find_event(&f, DIAGHUB, "Process/Terminate", 0);
    is_uint(&f.de, "ProcessId", 0x85c);
    found_close(&f);

    find_event(&f, DIAGHUB, "Image/DCStart", 0); /* ntoskrnl, version 3 */
    ck_assert_uint_eq(f.ev.version, 3);
    is_uint(&f.de, "ImageBase", 0xfffff8016aa00000ull);
    is_uint(&f.de, "ImageSize", 0x1046000);
    is_uint(&f.de, "ProcessId", 0);
    is_uint(&f.de, "ImageChecksum", 0x00a7ae11);
    is_uint(&f.de, "TimeDateStamp", 0x07503e39);
    is_uint(&f.de, "SignatureLevel", 0);
    is_uint(&f.de, "SignatureType", 1);
    is_uint(&f.de, "DefaultBase", 0);
    is_text(&f.de, "FileName", "\\SystemRoot\\system32\\ntoskrnl.exe"); /* at 0x38 */
    ck_assert_uint_eq(f.de.payload_used, 124);
    found_close(&f);

    find_event(&f, DIAGHUB, "Image/KernelBase", 0);
    is_uint(&f.de, "ImageBase", 0xfffff8016aa00000ull);
    found_close(&f);
    find_event(&f, DIAGHUB, "Image/HypercallPage", 0);
    is_uint(&f.de, "HypercallPageVa", 0xfffff80168110000ull);
    found_close(&f);

    find_event(&f, DIAGHUB, "EventTrace/EndExtension", 0);
    is_uint(&f.de, "GroupMask1", 0);
    is_uint(&f.de, "KernelEventVersion", 0x50);
    found_close(&f);
    find_event(&f, "samples/perfview_gcevents_PerfViewData.etl", "EventTrace/PartitionInfo", 0);
    is_text(&f.de, "PartitionId", "00000000-0000-0000-0000-000000000000");
    is_uint(&f.de, "PartitionType", 0);
    ck_assert_uint_eq(f.de.payload_used, 44); /* 4 bytes of padding after ETW_TRACE_PARTITION_INFORMATION */
    ck_assert_uint_eq(f.ev.payload_len, 48);
    found_close(&f);
}
END_TEST

/* Classic events of the old versions, written by syzygy's tests on Windows 7 and Vista. */
START_TEST(classic_old_versions)
{
    struct found f;

    find_event(&f, "samples/syzygy_log_lib_process_data_32_v1.etl", "Process/Start", 0);
    ck_assert_uint_eq(f.ev.version, 1);
    ck_assert_uint_eq(f.ev.pointer_size, 4);
    is_uint(&f.de, "PageDirectoryBase", 0);
    is_uint(&f.de, "ProcessId", 1776);
    is_uint(&f.de, "ParentId", 988);
    is_uint(&f.de, "SessionId", 1);
    is_int(&f.de, "ExitStatus", 259);
    /* an all-zero TOKEN_USER (8 bytes at 0x14), then the SID at 0x1c */
    is_text(&f.de, "UserSID", "S-1-5-21-753675414-103939432-3550797041-1000");
    is_text(&f.de, "ImageFileName", "notepad.exe");
    ck_assert_uint_eq(f.de.payload_used, 68);
    found_close(&f);

    find_event(&f, "samples/syzygy_viewer_test_data_32_v1.etl", "Image/DCStart", 0);
    ck_assert_uint_eq(f.ev.version, 1);
    is_uint(&f.de, "ImageBase", 0x1160000);
    is_uint(&f.de, "ImageSize", 0x19e000);
    is_uint(&f.de, "ProcessId", 4192);
    is_text(&f.de, "FileName", "C:\\code\\sawbuck\\src\\sawbuck\\Debug\\test_program.exe");
    found_close(&f);

    find_event(&f, "samples/syzygy_log_lib_image_data_32_v0.etl", "Image/DCStart", 1);
    ck_assert_uint_eq(f.ev.version, 0);
    is_uint(&f.de, "BaseAddress", 0x76e10000);
    is_uint(&f.de, "ModuleSize", 0x127000);
    is_text(&f.de, "ImageFileName", "C:\\Windows\\system32\\ntdll.dll");
    ck_assert_uint_eq(f.de.payload_used, f.ev.payload_len);
    found_close(&f);
}
END_TEST

/* KernelTraceControl's events, added by a merge. */
START_TEST(kernel_trace_control)
{
    struct found f;

    find_event(&f, SELFDESC, "SysConfigEx/BuildInfo", 0);
    is_text(&f.de, "InstallDate", "2021-10-05T00:10:37.0000000Z"); /* 0x01d7b97d6c50bc80 */
    is_text(&f.de, "BuildLab", "22000.613.amd64fre.co_release.210604-1628");
    is_text(&f.de, "ProductName", "Windows 10 Enterprise");
    ck_assert_uint_eq(f.de.payload_used, 136);
    found_close(&f);
    find_event(&f, SELFDESC, "SysConfigEx/SystemPaths", 0);
    is_text(&f.de, "SystemDirectory", "C:\\WINDOWS\\system32");
    is_text(&f.de, "SystemWindowsDirectory", "C:\\WINDOWS\\");
    found_close(&f);
    find_event(&f, SELFDESC, "SysConfigEx/UnknownVolume", 0);
    is_text(&f.de, "NtPath", "\\Device\\HarddiskVolume5\\");
    found_close(&f);
    find_event(&f, SELFDESC, "SysConfigEx/VolumeMapping", 1);
    is_text(&f.de, "NtPath", "\\DriverStores\\BSPDRIVERS\\");
    is_text(&f.de, "DosPath", "\\\\?\\GLOBALROOT\\DriverStores\\BSPDRIVERS\\");
    found_close(&f);
    find_event(&f, SELFDESC, "SysConfigEx/DeviceFamily", 0);
    is_uint(&f.de, "UAPInfo", 0x000a000055f00265ull);              /* 10.0.22000.613 */
    is_uint(&f.de, "DeviceFamily", 3);
    found_close(&f);
    find_event(&f, SELFDESC, "WinSat/WinSPR", 0);
    is_uint(&f.de, "State", 1);
    is_uint(&f.de, "UncompressedLength", 1052);
    ck_assert_uint_eq(field_of(&f.de, "CompressedXml")->size, 412 - 8);
    found_close(&f);
}
END_TEST

/* ---- every event of every sample ---- */

/* Events the tables leave undecoded on purpose: SystemConfig types 36 and 37, which no source
   describes (doc/format.md 8.9). */
static int known_undocumented(const etl_event *ev)
{
    return etl_guid_equal(&ev->provider, etl_group_guid(ETL_GROUP_CONFIG)) && (ev->opcode == 36 || ev->opcode == 37);
}

START_TEST(every_sample_event)
{
    DIR *dir = opendir(testdata_path("samples"));
    struct dirent *de;
    unsigned files = 0, decoded = 0, undocumented = 0;

    ck_assert_ptr_nonnull(dir);
    while ((de = readdir(dir)) != NULL) {
        char rel[300];
        etl_reader *r = NULL;
        etl_decoder *d = new_decoder();
        etl_event ev;
        etl_decoded_event e;
        etl_kernel_event k;
        size_t n = strlen(de->d_name);
        int odd_pointers = strcmp(de->d_name, "syzygy_log_lib_image_data_64_v0.etl") == 0;
        if (n < 5 || strcmp(de->d_name + n - 4, ".etl") != 0) {
            etl_decoder_close(d);
            continue;
        }
        snprintf(rel, sizeof rel, "samples/%s", de->d_name);
        ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(rel), NULL), ETL_OK);
        while (etl_reader_next(r, &ev) == ETL_OK) {
            int rc;
            if (ev.kind == ETL_KIND_EVENT || ev.kind == ETL_KIND_MESSAGE) continue;
            rc = etl_decoder_decode(d, &ev, &e);
            ck_assert_msg(rc != ETL_FAILED, "%s: %s", rel, etl_decoder_error(d));
            if (rc == 0) {
                ck_assert_msg(known_undocumented(&ev), "%s: record at %u of buffer %u (opcode %u, version %u) undecoded",
                              rel, ev.record_offset, ev.buffer_index, ev.opcode, ev.version);
                undocumented++;
                continue;
            }
            decoded++;
            ck_assert_int_eq(e.source, ETL_SCHEMA_KERNEL);
            /* Every byte is a field's, but PartitionInfo's padding and the 64-bit payloads syzygy
               put in 32-bit records (read, as Windows would, with 4-byte pointers). */
            if (strcmp(e.event_name, "EventTrace/PartitionInfo") == 0) ck_assert_uint_eq(ev.payload_len - e.payload_used, 4);
            else if (!odd_pointers)
                ck_assert_msg(e.payload_used == ev.payload_len, "%s: %s used %u of %u bytes", rel, e.event_name,
                              e.payload_used, ev.payload_len);
            /* The typed decoding reads the same tables: the same values. */
            if (etl_kernel_decode(&ev, &k) == 1) {
                ck_assert_str_eq(k.name, e.event_name);
                if (k.kclass == ETL_KCLASS_PROCESS) {
                    etl_string s;
                    is_uint(&e, "ProcessId", k.u.process.pid);
                    is_uint(&e, "ParentId", k.u.process.parent_pid);
                    ck_assert_int_eq(etl_field_string(field_of(&e, "ImageFileName"), &s), ETL_OK);
                    ck_assert(s.data == k.u.process.image_file_name.data && s.size == k.u.process.image_file_name.size);
                    ck_assert_uint_eq(field_of(&e, "UserSID")->size, k.u.process.sid_size);
                } else if (k.kclass == ETL_KCLASS_IMAGE) {
                    is_uint(&e, "ImageBase", k.u.image.image_base);
                    is_uint(&e, "ImageSize", k.u.image.image_size);
                    ck_assert(field_of(&e, "FileName")->data == k.u.image.file_name.data);
                } else if (k.kclass == ETL_KCLASS_TRACE_HEADER) {
                    is_uint(&e, "BufferSize", k.u.header.buffer_size);
                    is_uint(&e, "PointerSize", k.u.header.pointer_size);
                    is_uint(&e, "PerfFreq", (uint64_t)k.u.header.perf_freq);
                    ck_assert_uint_eq(k.u.header.buffer_size, etl_reader_info(r)->buffer_size);
                }
            }
        }
        etl_reader_close(r);
        etl_decoder_close(d);
        files++;
    }
    closedir(dir);
    ck_assert_uint_ge(files, 14);
    ck_assert_uint_eq(undocumented, 2);
    ck_assert_uint_gt(decoded, 16000);
}
END_TEST

/* ---- the logfile header against TraceEvent's listing (../shared/baselines, first lines) ---- */

static const char *const baselines[][2] = {
    { "samples/perfview_gcevents_PerfViewData.etl",
      "EVENT 0.000: Windows Kernel/EventTrace PID=179356; TID=179388; PName=Process(179356); ProceNum=0; DataLen=392; "
      "BufferSize=65,536; Version=83,951,626; ProviderVersion=19,045; NumberOfProcessors=8; EndTime=23/03/14 "
      "00:46:50.70...; TimerResolution=156,250; MaxFileSize=800; LogFileMode=134,217,730; BuffersWritten=5; "
      "StartBuffers=1; PointerSize=8; EventsLost=0; CPUSpeed=3,408; BootTime=23/03/07 16:58:36.50...; "
      "PerfFreq=10,000,000; StartTime=23/03/14 00:46:36.69...; ReservedFlags=1; BuffersLost=0; "
      "SessionName=PerfViewSession; LogFileName=C:\\Dev\\runtime\\CoreL...; UtcOffsetMinutes=480; " },
    { "samples/perfview_primitive-types.etl",
      "EVENT 0.000: Windows Kernel/EventTrace PID=39096; TID=29376; PName=Process(39096); ProceNum=0; DataLen=366; "
      "BufferSize=8,192; Version=83,951,626; ProviderVersion=19,043; NumberOfProcessors=8; EndTime=21/09/09 "
      "14:59:42.05...; TimerResolution=156,250; MaxFileSize=0; LogFileMode=0; BuffersWritten=2; StartBuffers=1; "
      "PointerSize=8; EventsLost=0; CPUSpeed=2,304; BootTime=21/09/06 14:40:14.50...; PerfFreq=10,000,000; "
      "StartTime=21/09/09 14:59:32.85...; ReservedFlags=1; BuffersLost=0; SessionName=solar_system; "
      "LogFileName=C:\\primitive-types_0...; UtcOffsetMinutes=-120; " },
};

/* A listed number, up to what follows it, as a signed value. */
static int64_t te_number(const char *s)
{
    char digits[64];
    size_t n = strspn(s, "-0123456789,");
    uint64_t v = 0;

    snprintf(digits, sizeof digits, "%.*s", (int)n, s);
    ck_assert_msg(baseline_number(digits, &v), "not a number: %s", s);
    return (int64_t)v;
}

START_TEST(header_as_traceevent_lists_it)
{
    for (size_t b = 0; b < sizeof baselines / sizeof baselines[0]; b++) {
        struct found f;
        const char *p = strstr(baselines[b][1], "DataLen=");
        int32_t bias;
        unsigned compared = 0;

        find_event(&f, baselines[b][0], "EventTrace/Header", 0);
        ck_assert_uint_eq(f.ev.payload_len, te_number(p + 8));
        bias = (int32_t)etl_le32(field_of(&f.de, "TimeZoneInformation")->data); /* TIME_ZONE_INFORMATION.Bias */
        p = strchr(p, ';') + 2;
        while (*p) {
            char name[64], value[128], ours[256];
            const char *eq = strchr(p, '='), *end = strchr(p, ';');
            const etl_field *x;
            size_t vl;
            ck_assert_ptr_nonnull(eq);
            ck_assert_ptr_nonnull(end);
            snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
            snprintf(value, sizeof value, "%.*s", (int)(end - eq - 1), eq + 1);
            p = end[1] ? end + 2 : end + 1;
            vl = strlen(value);
            compared++;
            if (strcmp(name, "UtcOffsetMinutes") == 0) { /* TraceEvent's name for the time zone's Bias */
                ck_assert_int_eq(bias, te_number(value));
                continue;
            }
            x = field_of(&f.de, name);
            if (x->in_type == ETL_IN_FILETIME) {
                baseline_time(etl_le64(x->data), ours, sizeof ours);
                ck_assert_msg(vl == 23 && strncmp(value, ours, 20) == 0, "%s: %s = %s, TraceEvent %s", baselines[b][0],
                              name, ours, value);
            } else if (x->in_type == ETL_IN_UNICODE_STRING) {
                etl_field_format(x, ours, sizeof ours);
                if (vl > 3 && strcmp(value + vl - 3, "...") == 0) /* cut at 20 characters */
                    ck_assert_msg(strncmp(ours, value, vl - 3) == 0, "%s: %s = %s, TraceEvent %s", baselines[b][0], name,
                                  ours, value);
                else
                    ck_assert_str_eq(ours, value);
            } else { /* TraceEvent prints unsigned as signed: compare modulo 2^32 */
                uint64_t v;
                ck_assert_int_eq(etl_field_uint(x, &v), ETL_OK);
                ck_assert_msg((uint32_t)v == (uint32_t)te_number(value), "%s: %s = %" PRIu64 ", TraceEvent %s",
                              baselines[b][0], name, v, value);
            }
        }
        ck_assert_uint_eq(compared, 21);
        found_close(&f);
    }
}
END_TEST

/* ---- every table: well made, decoded whole, cut byte by byte ---- */

static const etl_guid *family_guid(const etl_kclass_family *f) { return etl_kclass_provider_guid(f->provider); }

START_TEST(tables_well_made)
{
    /* One schema per provider, opcode and version; spans as etl_schema_event_prepare makes
       them; slots only where the typed decoding reads (and there, of types it reads). */
    struct key { etl_guid g; unsigned op, ver; } *keys = NULL;
    unsigned nkeys = 0;

    for (unsigned i = 0; i < etl_kclass_family_count; i++) {
        const etl_kclass_family *f = etl_kclass_families[i];
        ck_assert_ptr_nonnull(family_guid(f));
        ck_assert_str_eq(f->task, etl_kclass_provider_name(f->provider));
        ck_assert_uint_gt(f->op_count, 0);
        ck_assert_uint_gt(f->version_count, 0);
        for (unsigned v = 0; v < f->version_count; v++) {
            const etl_kclass_version *kv = &f->versions[v];
            etl_schema_field copy[64];
            etl_schema_event e;
            char err[200];
            if (v) ck_assert_uint_gt(kv->version, f->versions[v - 1].version);
            ck_assert_uint_le(kv->required, kv->field_count);
            ck_assert_uint_le(kv->field_count, 64);
            memcpy(copy, kv->fields, kv->field_count * sizeof copy[0]);
            for (unsigned j = 0; j < kv->field_count; j++) copy[j].span = 0;
            memset(&e, 0, sizeof e);
            e.event_name = f->ops[0].event_name;
            e.fields = copy;
            e.field_count = kv->field_count;
            ck_assert_msg(etl_schema_event_prepare(&e, err, sizeof err) == ETL_OK, "%s v%u: %s", f->task, kv->version, err);
            for (unsigned j = 0; j < kv->field_count; j++) {
                ck_assert_msg(copy[j].span == kv->fields[j].span, "%s v%u field %s: span %u, table %u", f->ops[0].event_name,
                              kv->version, kv->fields[j].name, copy[j].span, kv->fields[j].span);
                ck_assert(kv->fields[j].slot < ETL_KSLOT_COUNT);
                ck_assert_msg(!kv->fields[j].slot || f->kclass != ETL_KCLASS_NONE, "%s: a slot in an untyped family",
                              kv->fields[j].name);
                ck_assert(kv->fields[j].name && kv->fields[j].name[0]);
            }
            for (unsigned o = 0; o < f->op_count; o++) {
                ck_assert_msg(strncmp(f->ops[o].event_name, f->task, strlen(f->task)) == 0 &&
                              strcmp(f->ops[o].event_name + strlen(f->task) + 1, f->ops[o].opcode_name) == 0,
                              "%s", f->ops[o].event_name);
                for (unsigned k = 0; k < nkeys; k++)
                    ck_assert_msg(!(etl_guid_equal(&keys[k].g, family_guid(f)) && keys[k].op == f->ops[o].opcode &&
                                    keys[k].ver == kv->version),
                                  "%s version %u defined twice", f->ops[o].event_name, kv->version);
                keys = realloc(keys, (nkeys + 1) * sizeof *keys);
                keys[nkeys].g = *family_guid(f);
                keys[nkeys].op = f->ops[o].opcode;
                keys[nkeys].ver = kv->version;
                nkeys++;
            }
        }
    }
    ck_assert_uint_gt(nkeys, 250);
    free(keys);
}
END_TEST

/* A payload for layout v with pointers of ptr bytes: every fixed field a pattern, strings "ab",
   a SID S-1-5-18 after its TOKEN_USER, counts that refer 2, arrays at the end 2 elements. */
static uint32_t build_payload(const etl_kclass_version *v, unsigned ptr, uint8_t *out, size_t cap)
{
    uint32_t n = 0;
    int counted[64] = { 0 };

    for (unsigned i = 0; i < v->field_count; i++)
        if (v->fields[i].count_kind == ETL_COUNT_FIELD) counted[v->fields[i].count_ref] = 1;
    for (unsigned i = 0; i < v->field_count; i++) /* a length in bytes: also 2 */
        if (v->fields[i].length_kind == ETL_LEN_FIELD) counted[v->fields[i].length_ref] = 1;
    for (unsigned i = 0; i < v->field_count; i += v->fields[i].span) {
        const etl_schema_field *f = &v->fields[i];
        unsigned fixed = etl_in_type_fixed_size(f->in_type, ptr), reps = f->count_kind == ETL_COUNT_ONE ? 1 : 2;
        ck_assert(n + 600 < cap);
        for (unsigned r = 0; r < reps; r++) {
            if (f->in_type == ETL_IN_STRUCT) {
                for (unsigned m = 1; m <= f->members; m++) {
                    unsigned s = etl_in_type_fixed_size(f[m].in_type, ptr);
                    for (unsigned b = 0; b < s; b++) out[n++] = (uint8_t)(0x40 + m + b);
                }
            } else if (fixed) {
                for (unsigned b = 0; b < fixed; b++) out[n++] = (uint8_t)(counted[i] ? (b ? 0 : 2) : 0x11 * (i + 1) + b);
            } else if (f->in_type == ETL_IN_UNICODE_STRING || f->in_type == ETL_IN_ANSI_STRING) {
                unsigned unit = f->in_type == ETL_IN_UNICODE_STRING ? 2 : 1;
                unsigned chars = f->length_kind == ETL_LEN_CONST ? f->length : 3;
                for (unsigned c = 0; c < chars; c++) {
                    uint8_t ch = c == 0 ? 'a' : c == 1 ? 'b' : 0;
                    out[n++] = ch;
                    if (unit == 2) out[n++] = 0;
                }
            } else if (f->in_type == ETL_IN_WBEM_SID) {
                static const uint8_t sid[] = { 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
                for (unsigned b = 0; b < 2 * ptr; b++) out[n++] = (uint8_t)(b == 0 ? 0x80 : 0);
                memcpy(out + n, sid, sizeof sid);
                n += sizeof sid;
            } else if (f->in_type == ETL_IN_BINARY) {
                unsigned len = f->length_kind == ETL_LEN_CONST ? f->length : f->length_kind == ETL_LEN_FIELD ? 2 : 5;
                for (unsigned b = 0; b < len; b++) out[n++] = (uint8_t)b;
            } else {
                ck_abort_msg("field %s: in type %u", f->name, f->in_type);
            }
        }
    }
    return n;
}

/* The bytes of the leading fixed-size fields of layout v: a record cut inside them cannot decode. */
static uint32_t fixed_prefix(const etl_kclass_version *v, unsigned ptr)
{
    uint32_t n = 0;
    for (unsigned i = 0; i < v->field_count && v->fields[i].count_kind == ETL_COUNT_ONE; i += v->fields[i].span) {
        unsigned s = etl_in_type_fixed_size(v->fields[i].in_type, ptr);
        if (!s) break;
        n += s;
    }
    return n;
}

START_TEST(every_table_whole_and_cut)
{
    etl_decoder *d = new_decoder();
    uint8_t payload[4096];
    unsigned layouts = 0;

    for (unsigned i = 0; i < etl_kclass_family_count; i++) {
        const etl_kclass_family *f = etl_kclass_families[i];
        const etl_guid *g = family_guid(f);
        int group = -1;
        for (unsigned k = 0; k < ETL_GROUP_COUNT; k++)
            if (etl_guid_equal(etl_group_guid(k), g)) group = (int)k;
        for (unsigned v = 0; v < f->version_count; v++) {
            for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
                const etl_kclass_version *kv = &f->versions[v];
                uint32_t len = build_payload(kv, ptr, payload, sizeof payload), prefix = fixed_prefix(kv, ptr);
                etl_event ev;
                etl_decoded_event e;
                char text[8192];
                int rc;

                memset(&ev, 0, sizeof ev);
                ev.kind = group >= 0 ? ETL_KIND_SYSTEM : ETL_KIND_CLASSIC;
                ev.provider = *g;
                ev.opcode = f->ops[f->op_count - 1].opcode;
                ev.hook_id = (uint16_t)((group >= 0 ? group : 0) << 8 | ev.opcode);
                ev.version = kv->version;
                ev.pointer_size = (uint8_t)ptr;
                ev.payload = payload;
                ev.payload_len = len;
                rc = etl_decoder_decode(d, &ev, &e);
                ck_assert_msg(rc == 1, "%s v%u ptr %u: %s", f->ops[f->op_count - 1].event_name, kv->version, ptr,
                              etl_decoder_error(d));
                ck_assert_msg(e.payload_used == len, "%s v%u ptr %u: used %u of %u", e.event_name, kv->version, ptr,
                              e.payload_used, len);
                etl_decoded_format_text(&e, text, sizeof text);
                etl_decoded_format_json(&e, text, sizeof text);
                ck_assert(text[0] == '{' && text[strlen(text) - 1] == '}');
                /* Cut byte by byte, each cut copied to a buffer of exactly its size: no read past
                   it (ASan), a failure inside the fixed fields, and the typed decoding as well. */
                for (uint32_t cut = 0; cut < len; cut++) {
                    uint8_t *copy = malloc(cut ? cut : 1);
                    etl_event t = ev;
                    etl_kernel_event k;
                    memcpy(copy, payload, cut);
                    t.payload = copy;
                    t.payload_len = cut;
                    rc = etl_decoder_decode(d, &t, &e);
                    ck_assert(rc == 1 || rc == ETL_FAILED);
                    if (cut < prefix) ck_assert_msg(rc == ETL_FAILED, "%s v%u cut at %u of %u decoded", e.event_name,
                                                    kv->version, cut, len);
                    if (rc == 1) {
                        ck_assert_uint_le(e.payload_used, cut);
                        etl_decoded_format_json(&e, text, sizeof text);
                    }
                    rc = etl_kernel_decode(&t, &k);
                    ck_assert(rc == 1 || rc == 0 || rc == ETL_FAILED);
                    free(copy);
                }
                layouts++;
            }
        }
    }
    ck_assert_uint_gt(layouts, 200);
    etl_decoder_close(d);
}
END_TEST

/* Addresses and ports as Windows' tools show them: a TcpIp version 2 send over IPv4 and IPv6. */
START_TEST(tcpip_addresses)
{
    etl_decoder *d = new_decoder();
    static const uint8_t v4[] = {
        0x10, 0x27, 0, 0,           /* PID 10000 */
        0x00, 0x02, 0, 0,           /* size 512 */
        10, 0, 0, 1,                /* daddr, network order */
        192, 168, 1, 20,            /* saddr */
        0x01, 0xbb,                 /* dport 443, network order */
        0xc3, 0x50,                 /* sport 50000 */
        1, 0, 0, 0, 2, 0, 0, 0,     /* startime, endtime */
        3, 0, 0, 0,                 /* seqnum */
        0x78, 0x56, 0x34, 0x12, 0, 0, 0xff, 0xff, /* connid */
    };
    uint8_t v6[4 + 4 + 16 + 16 + 2 + 2 + 4 + 4 + 4 + 8];
    etl_event ev;
    etl_decoded_event e;

    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_KIND_SYSTEM;
    ev.provider = *etl_group_guid(0x06);
    ev.opcode = 10;
    ev.version = 2;
    ev.pointer_size = 8;
    ev.payload = v4;
    ev.payload_len = sizeof v4;
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "TcpIp/Send");
    ck_assert_str_eq(e.provider_name, "TcpIp");
    is_uint(&e, "PID", 10000);
    is_text(&e, "daddr", "10.0.0.1");
    is_text(&e, "saddr", "192.168.1.20");
    is_uint(&e, "dport", 443);
    is_text(&e, "sport", "50000");
    is_text(&e, "connid", "0xffff000012345678");
    ck_assert_uint_eq(e.payload_used, sizeof v4);

    memset(v6, 0, sizeof v6);
    v6[8] = 0x20, v6[9] = 0x01, v6[10] = 0x0d, v6[11] = 0xb8, v6[23] = 1; /* 2001:db8::1 */
    v6[24 + 15] = 1;                                                     /* ::1 */
    v6[40] = 0x00, v6[41] = 0x50;                                        /* dport 80 */
    ev.opcode = 26;
    ev.payload = v6;
    ev.payload_len = sizeof v6;
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "TcpIp/SendIPV6");
    is_text(&e, "daddr", "2001:db8::1");
    is_text(&e, "saddr", "::1");
    is_uint(&e, "dport", 80);
    ck_assert_uint_eq(e.payload_used, sizeof v6);
    etl_decoder_close(d);
}
END_TEST

/* Names the decoder gives: the provider of each kernel group, the classes' events. */
START_TEST(provider_names)
{
    etl_decoder *d = new_decoder();
    etl_guid g;

    ck_assert_str_eq(etl_decoder_provider_name(d, etl_group_guid(ETL_GROUP_PROCESS)), "Process");
    ck_assert_str_eq(etl_decoder_provider_name(d, etl_group_guid(ETL_GROUP_IMAGE)), "Image");
    ck_assert_str_eq(etl_decoder_provider_name(d, etl_group_guid(ETL_GROUP_CONFIG)), "SystemConfig");
    ck_assert_int_eq(etl_decoder_provider_guid(d, "imageid", &g), ETL_OK);
    ck_assert_uint_eq(g.data1, 0xb3e675d7);
    ck_assert_int_eq(etl_decoder_provider_guid(d, "SysConfigEx", &g), ETL_OK);
    ck_assert_uint_eq(g.data1, 0x9b79ee91);
    etl_decoder_close(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kclasses");
    TCase *t = tcase_create("samples");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, sysconfig_cpu_v3);
    tcase_add_test(t, sysconfig_disks_and_nic);
    tcase_add_test(t, sysconfig_services_irq_pnp);
    tcase_add_test(t, sysconfig_small_types);
    tcase_add_test(t, process_and_image);
    tcase_add_test(t, classic_old_versions);
    tcase_add_test(t, kernel_trace_control);
    tcase_add_test(t, every_sample_event);
    tcase_add_test(t, header_as_traceevent_lists_it);
    suite_add_tcase(s, t);
    t = tcase_create("tables");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, tables_well_made);
    tcase_add_test(t, every_table_whole_and_cut);
    tcase_add_test(t, tcpip_addresses);
    tcase_add_test(t, provider_names);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
