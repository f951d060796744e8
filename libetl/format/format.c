/* SPDX-License-Identifier: MIT */
/* Decoding of the ETL format's bytes: buffer headers, trace headers of every kind, GUIDs, names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"

#define G(d1, d2, d3, a, b, c, d, e, f, g, h) { d1, d2, d3, { a, b, c, d, e, f, g, h } }

/* Kernel event groups (doc/format.md section 4.10), indexed by the HookId's high byte. */
static const etl_guid group_guids[ETL_GROUP_COUNT] = {
    G(0x68fdd900, 0x4a3e, 0x11d1, 0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3), /* EventTrace */
    G(0x3d6fa8d4, 0xfe05, 0x11d0, 0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c), /* DiskIo */
    G(0x3d6fa8d3, 0xfe05, 0x11d0, 0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c), /* PageFault */
    G(0x3d6fa8d0, 0xfe05, 0x11d0, 0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c), /* Process */
    G(0x90cbdc39, 0x4a3e, 0x11d1, 0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3), /* FileIo */
    G(0x3d6fa8d1, 0xfe05, 0x11d0, 0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c), /* Thread */
    G(0x9a280ac0, 0xc8e0, 0x11d1, 0x84, 0xe2, 0x00, 0xc0, 0x4f, 0xb9, 0x98, 0xa2), /* TcpIp */
    G(0x3282fc76, 0xfeed, 0x498e, 0x8a, 0xa7, 0xe7, 0x0f, 0x45, 0x9d, 0x43, 0x0e), /* Job */
    G(0xbf3a50c5, 0xa9c9, 0x4988, 0xa0, 0x05, 0x2d, 0xf0, 0xb7, 0xc8, 0x0f, 0x80), /* UdpIp */
    G(0xae53722e, 0xc863, 0x11d2, 0x86, 0x59, 0x00, 0xc0, 0x4f, 0xa3, 0x21, 0xa1), /* Registry */
    G(0x13976d09, 0xa327, 0x438c, 0x95, 0x0b, 0x7f, 0x03, 0x19, 0x28, 0x15, 0xc7), /* DbgPrint */
    G(0x01853a65, 0x418f, 0x4f36, 0xae, 0xfc, 0xdc, 0x0f, 0x1d, 0x2f, 0xd2, 0x35), /* EventTraceConfig */
    G(0x99134383, 0x5248, 0x43fc, 0x83, 0x4b, 0x52, 0x94, 0x54, 0xe7, 0x5d, 0xf3), /* LBR (Spare1) */
    G(0x42695762, 0xea50, 0x497a, 0x90, 0x68, 0x5c, 0xbb, 0xb3, 0x5e, 0x0b, 0x95), /* Wnf */
    G(0x0268a8b6, 0x74fd, 0x4302, 0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf), /* Pool */
    G(0xce1dbfb4, 0x137e, 0x4da6, 0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc), /* PerfInfo */
    G(0x222962ab, 0x6180, 0x4b88, 0xa8, 0x25, 0x34, 0x6b, 0x75, 0xf2, 0xa2, 0x4a), /* Heap */
    G(0x89497f50, 0xeffe, 0x4440, 0x8c, 0xf2, 0xce, 0x6b, 0x1c, 0xdc, 0xac, 0xa7), /* Object */
    G(0xe43445e0, 0x0903, 0x48c3, 0xb8, 0x78, 0xff, 0x0f, 0xcc, 0xeb, 0xdd, 0x04), /* Power */
    G(0xa9152f00, 0x3f58, 0x4bee, 0x92, 0xa1, 0x70, 0xc7, 0xd0, 0x79, 0xd5, 0xdd), /* Modbound */
    G(0x2cb15d1d, 0x5fc1, 0x11d2, 0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18), /* ImageLoad */
    G(0xb2d14872, 0x7c5b, 0x463d, 0x84, 0x19, 0xee, 0x9b, 0xf7, 0xd2, 0x3e, 0x04), /* Dpc */
    G(0x7687a439, 0xf752, 0x45b8, 0xb7, 0x41, 0x32, 0x1a, 0xec, 0x0f, 0x8d, 0xf9), /* CC */
    G(0x3ac66736, 0xcc59, 0x4cff, 0x81, 0x15, 0x8d, 0xf5, 0x0e, 0x39, 0x81, 0x6b), /* CritSec */
    G(0xdef2fe46, 0x7bd6, 0x4b80, 0xbd, 0x94, 0xf5, 0x7f, 0xe2, 0x0d, 0x0c, 0xe3), /* StackWalk */
    G(0x9aec974b, 0x5b8e, 0x4118, 0x9b, 0x92, 0x31, 0x86, 0xd8, 0x00, 0x2c, 0xe5), /* UMS */
    G(0x45d8cccd, 0x539f, 0x4b72, 0xa8, 0xb7, 0x5c, 0x68, 0x31, 0x42, 0x60, 0x9a), /* ALPC */
    G(0xd837ca92, 0x12b9, 0x44a5, 0xad, 0x6a, 0x3a, 0x65, 0xb3, 0x57, 0x8a, 0xa8), /* SplitIo */
    G(0xc861d0e2, 0xa2c1, 0x4d36, 0x9f, 0x9c, 0x97, 0x0b, 0xab, 0x94, 0x3a, 0x12), /* ThreadPool */
    G(0x7f2a405c, 0x69b5, 0x4bf9, 0xa1, 0xf5, 0x30, 0xe8, 0xf1, 0xaf, 0xab, 0x5e), /* Hypervisor */
    G(0x2ce9a149, 0xeffe, 0x42f0, 0xa6, 0x35, 0xa1, 0xd3, 0x9e, 0x26, 0xc8, 0xf2), /* HypervisorX */
};

static const char *const group_names[ETL_GROUP_COUNT] = {
    "EventTrace", "DiskIo", "PageFault", "Process", "FileIo", "Thread", "TcpIp", "Job", "UdpIp",
    "Registry", "DbgPrint", "EventTraceConfig", "LastBranchRecord", "Wnf", "Pool", "PerfInfo",
    "Heap", "Object", "Power", "Modbound", "ImageLoad", "Dpc", "CC", "CritSec", "StackWalk", "UMS",
    "ALPC", "SplitIo", "ThreadPool", "Hypervisor", "HypervisorX",
};

const etl_guid etl_guid_event_trace =
    G(0x68fdd900, 0x4a3e, 0x11d1, 0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3);

/* libetl's own class (random, made for it): Linux images' build-ids, kallsyms, modules. */
const etl_guid etl_guid_linux_image_id =
    G(0xf6235471, 0x690f, 0x4985, 0xa2, 0x5e, 0x2d, 0x98, 0xbc, 0x95, 0x91, 0x97);

/* User-mode providers and merge-added event classes seen in real files, and the toolkit's own
   demo provider (tools/etldemo.c), whose GUID is the one Windows derives from the name
   "etldemo" for EventSource and TraceLogging providers (SHA-1 of the namespace
   482c2db2-c390-47c8-87f8-1a15bfc130fb and the upper-cased name in UTF-16BE; the first 16
   bytes, version nibble 5), as PerfView's "*etldemo" names it. */
static const struct { etl_guid guid; const char *name; } known_providers[] = {
    { G(0xe13c0d23, 0xccbc, 0x4e12, 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4), "Microsoft-Windows-DotNETRuntime" },
    { G(0xa669021c, 0xc450, 0x4609, 0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18), "Microsoft-Windows-DotNETRuntimeRundown" },
    { G(0xa0c1853b, 0x5c40, 0x4b15, 0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5a), "Microsoft-Windows-PowerShell" },
    { G(0x2a576b87, 0x09a7, 0x520e, 0xc2, 0x1a, 0x49, 0x42, 0xf0, 0x27, 0x1d, 0x67), "Microsoft-Antimalware-Scan-Interface" },
    { G(0xdd5ef90a, 0x6398, 0x47a4, 0xad, 0x34, 0x4d, 0xce, 0xcd, 0xef, 0x79, 0x5f), "Microsoft-Windows-HttpService" },
    { G(0xb3e675d7, 0x2554, 0x4f18, 0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde), "ImageId" },
    { G(0x9b79ee91, 0xb5fd, 0x41c0, 0xa2, 0x43, 0x42, 0x48, 0xe2, 0x66, 0xe9, 0xd0), "SysConfigEx" },
    { G(0xed54dff8, 0xc409, 0x4cf6, 0xbf, 0x83, 0x05, 0xe1, 0xe6, 0x1a, 0x09, 0xc4), "WinSat" },
    { G(0xbbccf6c1, 0x6cd1, 0x48c4, 0x80, 0xff, 0x83, 0x94, 0x82, 0xe3, 0x76, 0x71), "MetaData" },
    { G(0x9e814aad, 0x3204, 0x11d2, 0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39), "SystemTraceControl" },
    { G(0x458d4a63, 0x7cc9, 0x5239, 0x62, 0xc4, 0xf8, 0xae, 0xbb, 0xe5, 0x97, 0xac), "etldemo" },
};

const etl_guid *etl_group_guid(unsigned group)
{
    return group < ETL_GROUP_COUNT ? &group_guids[group] : NULL;
}

void etl_guid_read(const uint8_t *p, etl_guid *g)
{
    g->data1 = etl_le32(p);
    g->data2 = etl_le16(p + 4);
    g->data3 = etl_le16(p + 6);
    memcpy(g->data4, p + 8, 8);
}

void etl_guid_write(uint8_t *p, const etl_guid *g)
{
    etl_put32(p, g->data1);
    etl_put16(p + 4, g->data2);
    etl_put16(p + 6, g->data3);
    memcpy(p + 8, g->data4, 8);
}

/* digits hex digits of v at p, most significant first; returns p past them. */
static char *put_hex_digits(char *p, uint32_t v, int digits)
{
    static const char hex[] = "0123456789abcdef";

    for (int i = digits - 1; i >= 0; i--) *p++ = hex[(v >> (4 * i)) & 15];
    return p;
}

/* "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", without printf: every field a decoded
   event holds a GUID in and every provider of etldump's lines goes through here. */
char *etl_guid_format(const etl_guid *g, char out[ETL_GUID_STRING_SIZE])
{
    char *p = out;

    p = put_hex_digits(p, g->data1, 8);
    *p++ = '-';
    p = put_hex_digits(p, g->data2, 4);
    *p++ = '-';
    p = put_hex_digits(p, g->data3, 4);
    *p++ = '-';
    for (int i = 0; i < 8; i++) {
        if (i == 2) *p++ = '-';
        p = put_hex_digits(p, g->data4[i], 2);
    }
    *p = '\0';
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int etl_guid_parse(const char *text, etl_guid *out)
{
    static const int group_len[5] = { 8, 4, 4, 4, 12 };
    uint8_t bytes[16];
    int nb = 0;
    const char *s = text;
    int braced = (*s == '{');

    if (braced) s++;
    for (int gi = 0; gi < 5; gi++) {
        if (gi > 0 && *s++ != '-') return ETL_FAILED;
        for (int i = 0; i < group_len[gi]; i += 2) {
            int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
            if (hi < 0 || lo < 0) return ETL_FAILED;
            bytes[nb++] = (uint8_t)(hi << 4 | lo);
            s += 2;
        }
    }
    if (braced && *s++ != '}') return ETL_FAILED;
    if (*s != '\0') return ETL_FAILED;
    out->data1 = (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
    out->data2 = (uint16_t)(bytes[4] << 8 | bytes[5]);
    out->data3 = (uint16_t)(bytes[6] << 8 | bytes[7]);
    memcpy(out->data4, bytes + 8, 8);
    return ETL_OK;
}

int etl_guid_equal(const etl_guid *a, const etl_guid *b)
{
    return a->data1 == b->data1 && a->data2 == b->data2 && a->data3 == b->data3 &&
           memcmp(a->data4, b->data4, 8) == 0;
}

const char *etl_guid_name(const etl_guid *g)
{
    for (unsigned i = 0; i < ETL_GROUP_COUNT; i++)
        if (etl_guid_equal(g, &group_guids[i])) return group_names[i];
    for (size_t i = 0; i < sizeof known_providers / sizeof known_providers[0]; i++)
        if (etl_guid_equal(g, &known_providers[i].guid)) return known_providers[i].name;
    return NULL;
}

int etl_guid_from_name(const char *name, etl_guid *out)
{
    for (unsigned i = 0; i < ETL_GROUP_COUNT; i++)
        if (group_names[i] && strcasecmp(name, group_names[i]) == 0) {
            *out = group_guids[i];
            return ETL_OK;
        }
    for (size_t i = 0; i < sizeof known_providers / sizeof known_providers[0]; i++)
        if (strcasecmp(name, known_providers[i].name) == 0) {
            *out = known_providers[i].guid;
            return ETL_OK;
        }
    return ETL_FAILED;
}

int etl_guid_parse_provider(const char *text, etl_guid *out)
{
    if (etl_guid_parse(text, out) == ETL_OK || etl_guid_from_name(text, out) == ETL_OK) return ETL_OK;
    return ETL_FAILED;
}

const char *etl_event_kind_name(int kind)
{
    static const char *const names[] = { "unknown", "system", "compact", "perfinfo", "classic",
                                         "instance", "event", "message" };
    return kind >= ETL_KIND_SYSTEM && kind <= ETL_KIND_MESSAGE ? names[kind] : names[0];
}

const char *etl_ext_type_name(unsigned type)
{
    static const char *const names[] = {
        "UNKNOWN", "RELATED_ACTIVITYID", "SID", "TS_ID", "INSTANCE_INFO", "STACK_TRACE32",
        "STACK_TRACE64", "PEBS_INDEX", "PMC_COUNTERS", "PSM_KEY", "EVENT_KEY", "EVENT_SCHEMA_TL",
        "PROV_TRAITS", "PROCESS_START_KEY", "CONTROL_GUID", "QPC_DELTA", "CONTAINER_ID",
        "STACK_KEY32", "STACK_KEY64",
    };
    return type < sizeof names / sizeof names[0] ? names[type] : names[0];
}

char *etl_log_file_mode_format(uint32_t mode, char *out, size_t size)
{
    static const char *const names[32] = {
        "SEQUENTIAL", "CIRCULAR", "APPEND", "NEWFILE", "USE_MS_FLUSH_TIMER", "PREALLOCATE",
        "NONSTOPPABLE", "SECURE", "REAL_TIME", "DELAY_OPEN_FILE", "BUFFERING", "PRIVATE_LOGGER",
        "ADD_HEADER", "USE_KBYTES_FOR_SIZE", "USE_GLOBAL_SEQUENCE", "USE_LOCAL_SEQUENCE", "RELOG",
        "PRIVATE_IN_PROC", "BUFFER_INTERFACE", "KD_FILTER", "REALTIME_RELOG", "LOST_EVENTS_DEBUG",
        "STOP_ON_HYBRID_SHUTDOWN", "PERSIST_ON_HYBRID_SHUTDOWN", "USE_PAGED_MEMORY",
        "SYSTEM_LOGGER", "COMPRESSED", "INDEPENDENT_SESSION", "NO_PER_PROCESSOR_BUFFERING",
        "BLOCKING", NULL, "ADDTO_TRIAGE_DUMP",
    };
    size_t len = 0;

    if (size == 0) return out;
    out[0] = '\0';
    if (mode == 0) {
        snprintf(out, size, "(0)");
        return out;
    }
    for (int bit = 0; bit < 32; bit++) {
        uint32_t m = 1u << bit;
        int n;
        if (!(mode & m)) continue;
        if (names[bit])
            n = snprintf(out + len, size - len, "%s%s", len ? "|" : "", names[bit]);
        else
            n = snprintf(out + len, size - len, "%s0x%08x", len ? "|" : "", (unsigned)m);
        if (n < 0 || (size_t)n >= size - len) break;
        len += (size_t)n;
    }
    return out;
}

void etl_buffer_header_read(const uint8_t *p, etl_buffer_header *bh)
{
    bh->buffer_size = etl_le32(p + ETL_BH_BUFFER_SIZE);
    bh->saved_offset = etl_le32(p + ETL_BH_SAVED_OFFSET);
    bh->offset = etl_le32(p + ETL_BH_OFFSET);
    bh->timestamp = etl_le64s(p + ETL_BH_TIMESTAMP);
    bh->sequence_number = etl_le64s(p + ETL_BH_SEQUENCE_NUMBER);
    bh->logger_id = etl_le16(p + ETL_BH_LOGGER_ID);
    bh->state = etl_le32(p + ETL_BH_STATE);
    bh->buffer_flag = etl_le16(p + ETL_BH_BUFFER_FLAG);
    bh->buffer_type = etl_le16(p + ETL_BH_BUFFER_TYPE);
    bh->processor = (bh->buffer_flag & ETL_BUFFER_FLAG_PROC_INDEX) ? etl_le16(p + ETL_BH_CLIENT_CONTEXT)
                                                                   : p[ETL_BH_CLIENT_CONTEXT];
}

uint32_t etl_utf16_next(const uint8_t *p, size_t n, size_t *i)
{
    uint32_t c = etl_le16(p + 2 * *i);

    (*i)++;
    if (c >= 0xD800 && c <= 0xDBFF && *i < n) {
        uint32_t d = etl_le16(p + 2 * *i);
        if (d < 0xDC00 || d > 0xDFFF) return 0xFFFD;
        (*i)++;
        return 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
    }
    return c >= 0xD800 && c <= 0xDFFF ? 0xFFFD : c;
}

unsigned etl_utf8_encode(uint32_t c, uint8_t out[4])
{
    if (c < 0x80) { out[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { out[0] = (uint8_t)(0xC0 | c >> 6); out[1] = (uint8_t)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xE0 | c >> 12); out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | c >> 18); out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F)); out[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

size_t etl_utf16_to_utf8(const uint8_t *p, size_t n, char *out, size_t size)
{
    size_t i = 0, o = 0;

    if (size == 0) return 0;
    while (i < n) {
        uint8_t tmp[4];
        unsigned len;
        uint32_t c = etl_utf16_next(p, n, &i);
        if (c == 0) break;
        len = etl_utf8_encode(c, tmp);
        if (o + len >= size) break;
        memcpy(out + o, tmp, len);
        o += len;
    }
    out[o] = '\0';
    return i;
}

/* ---- records ---- */

static void decode_system(const uint8_t *p, unsigned hsize, etl_event *ev)
{
    unsigned group = p[7], type = p[6];
    const etl_guid *g;

    ev->hook_id = (uint16_t)(group << 8 | type);
    ev->opcode = (uint8_t)type;
    ev->tid = etl_le32(p + 8);
    ev->pid = etl_le32(p + 12);
    ev->timestamp = etl_le64s(p + 16);
    ev->has |= ETL_HAS_PID_TID;
    if (hsize == ETL_SYSTEM_HEADER_SIZE) {
        ev->kernel_time = etl_le32(p + 0x18);
        ev->user_time = etl_le32(p + 0x1C);
        ev->has |= ETL_HAS_CPU_TIME;
    }
    if (ev->hook_id == ETL_HOOK_PROCESS_LOAD_IMAGE) group = ETL_GROUP_IMAGE;
    g = etl_group_guid(group);
    if (g) {
        ev->provider = *g;
        ev->has |= ETL_HAS_PROVIDER;
    }
}

/* PEBS index and PMC counters that follow a system or perfinfo header (section 4.3). */
static int decode_header_items(const uint8_t *p, uint32_t size, unsigned hsize, etl_event *ev,
                               const char **why)
{
    uint16_t v = etl_le16(p);
    unsigned pebs = (v & ETL_TRACE_HEADER_PEBS_INDEX_FLAG) ? 1 : 0;
    unsigned pmc = (v & ETL_TRACE_HEADER_PMC_MASK) >> ETL_TRACE_HEADER_PMC_SHIFT;
    uint32_t items = 8u * (pebs + pmc);

    ev->version = (uint16_t)(v & ~(ETL_TRACE_HEADER_PEBS_INDEX_FLAG | ETL_TRACE_HEADER_PMC_MASK));
    if (hsize + items > size) {
        *why = "PEBS/PMC items overrun the record";
        return ETL_RECORD_BAD;
    }
    ev->ext = items ? p + hsize : NULL;
    ev->ext_len = items;
    ev->ext_count = (uint16_t)(pebs + (pmc ? 1 : 0));
    ev->payload = p + hsize + items;
    ev->payload_len = size - hsize - items;
    return ETL_RECORD_OK;
}

static void decode_classic(const uint8_t *p, etl_event *ev)
{
    ev->opcode = p[4];
    ev->level = p[5];
    ev->version = etl_le16(p + 6);
    ev->tid = etl_le32(p + 8);
    ev->pid = etl_le32(p + 12);
    ev->timestamp = etl_le64s(p + 16);
    etl_guid_read(p + 0x18, &ev->provider);
    ev->kernel_time = etl_le32(p + 0x28);
    ev->user_time = etl_le32(p + 0x2C);
    ev->has |= ETL_HAS_LEVEL | ETL_HAS_PID_TID | ETL_HAS_PROVIDER | ETL_HAS_CPU_TIME;
}

static int decode_event_header(const uint8_t *p, uint32_t size, etl_event *ev, const char **why)
{
    uint32_t pos = ETL_EVENT_HEADER_SIZE;

    ev->flags = etl_le16(p + 4);
    ev->event_property = etl_le16(p + 6);
    ev->tid = etl_le32(p + 8);
    ev->pid = etl_le32(p + 12);
    ev->timestamp = etl_le64s(p + 16);
    etl_guid_read(p + 0x18, &ev->provider);
    ev->id = etl_le16(p + 0x28);
    ev->version = p[0x2A];
    ev->channel = p[0x2B];
    ev->level = p[0x2C];
    ev->opcode = p[0x2D];
    ev->task = etl_le16(p + 0x2E);
    ev->keywords = etl_le64(p + 0x30);
    ev->kernel_time = etl_le32(p + 0x38);
    ev->user_time = etl_le32(p + 0x3C);
    etl_guid_read(p + 0x40, &ev->activity_id);
    ev->has |= ETL_HAS_ID | ETL_HAS_LEVEL | ETL_HAS_PID_TID | ETL_HAS_PROVIDER | ETL_HAS_CPU_TIME;

    if (ev->flags & ETL_EVENT_HEADER_FLAG_EXTENDED_INFO) {
        unsigned count = 0;
        for (;;) {
            uint16_t item_size, data_size;
            if (size - pos < 8) {
                *why = "extended data item header overruns the record";
                return ETL_RECORD_BAD;
            }
            item_size = etl_le16(p + pos);
            data_size = etl_le16(p + pos + 6);
            if (item_size < 8 || (uint32_t)item_size > size - pos || data_size > item_size - 8u) {
                *why = "extended data item size is invalid";
                return ETL_RECORD_BAD;
            }
            count++;
            pos += item_size;
            if (!(etl_le16(p + pos - item_size + 4) & 1)) break;
            if (count == 0xFFFF) {
                *why = "too many extended data items";
                return ETL_RECORD_BAD;
            }
        }
        ev->ext = p + ETL_EVENT_HEADER_SIZE;
        ev->ext_len = pos - ETL_EVENT_HEADER_SIZE;
        ev->ext_count = (uint16_t)count;
    }
    ev->payload = p + pos;
    ev->payload_len = size - pos;
    return ETL_RECORD_OK;
}

static int decode_message(const uint8_t *p, uint32_t size, etl_event *ev, const char **why)
{
    uint16_t opt = etl_le16(p + 6);
    uint32_t pos = ETL_MESSAGE_HEADER_SIZE;
    uint32_t need = pos + ((opt & ETL_MSG_SEQUENCE) ? 4 : 0) +
                    ((opt & ETL_MSG_COMPONENTID) ? 4 : (opt & ETL_MSG_GUID) ? 16 : 0) +
                    ((opt & (ETL_MSG_TIMESTAMP | ETL_MSG_PERF_TIMESTAMP)) ? 8 : 0) +
                    ((opt & ETL_MSG_SYSTEMINFO) ? 8 : 0);

    if (need > size) {
        *why = "message header items overrun the record";
        return ETL_RECORD_BAD;
    }
    ev->hook_id = etl_le16(p + 4);
    ev->flags = opt;
    if (opt & ETL_MSG_SEQUENCE) {
        ev->message_sequence = etl_le32(p + pos);
        pos += 4;
    }
    if (opt & ETL_MSG_COMPONENTID) {
        ev->provider.data1 = etl_le32(p + pos); /* the component id, kept in Data1 */
        pos += 4;
    } else if (opt & ETL_MSG_GUID) {
        etl_guid_read(p + pos, &ev->provider);
        ev->has |= ETL_HAS_PROVIDER;
        pos += 16;
    }
    if (opt & (ETL_MSG_TIMESTAMP | ETL_MSG_PERF_TIMESTAMP)) {
        if (opt & ETL_MSG_TIMESTAMP) {
            ev->timestamp = etl_le64s(p + pos);
            ev->has |= ETL_HAS_TIMESTAMP;
        }
        pos += 8;
    }
    if (opt & ETL_MSG_SYSTEMINFO) {
        ev->tid = etl_le32(p + pos);
        ev->pid = etl_le32(p + pos + 4);
        ev->has |= ETL_HAS_PID_TID;
        pos += 8;
    }
    ev->pointer_size = (opt & 0x0080) ? 8 : (opt & 0x0040) ? 4 : 0;
    ev->payload = p + pos;
    ev->payload_len = size - pos;
    return ETL_RECORD_OK;
}

int etl_record_decode(const etl_record_context *ctx, const uint8_t *p, uint32_t avail,
                      etl_event *ev, uint32_t *step, const char **why)
{
    uint32_t m, size, hsize;
    unsigned type;
    int rc = ETL_RECORD_OK;

    if (avail < 4) {
        *why = "record header truncated";
        return ETL_RECORD_BAD;
    }
    m = etl_le32(p);
    if (m == 0xFFFFFFFFu) return ETL_RECORD_END;

    memset(ev, 0, offsetof(etl_event, record));
    ev->has = ETL_HAS_TIMESTAMP;
    ev->ext = NULL;
    ev->ext_len = 0;
    ev->ext_count = 0;

    if ((m >> 24) == 0x90) {
        size = m & 0xFFFF;
        if (size < ETL_MESSAGE_HEADER_SIZE || size > avail) {
            *why = size > avail ? "record overruns the buffer's used size" : "record smaller than its header";
            return ETL_RECORD_BAD;
        }
        ev->kind = ETL_KIND_MESSAGE;
        ev->header_type = 0x90;
        ev->has = 0; /* the timestamp is optional in messages */
        rc = decode_message(p, size, ev, why);
        goto done;
    }
    if ((m >> 24) != 0xC0) {
        *why = "not a trace header (bad marker)";
        return ETL_RECORD_BAD;
    }
    type = (m >> 16) & 0xFF;
    ev->header_type = (uint8_t)type;
    switch (type) {
    case ETL_HT_SYSTEM32: case ETL_HT_SYSTEM64:
        ev->kind = ETL_KIND_SYSTEM; hsize = ETL_SYSTEM_HEADER_SIZE; break;
    case ETL_HT_COMPACT32: case ETL_HT_COMPACT64:
        ev->kind = ETL_KIND_COMPACT; hsize = ETL_COMPACT_HEADER_SIZE; break;
    case ETL_HT_PERFINFO32: case ETL_HT_PERFINFO64:
        ev->kind = ETL_KIND_PERFINFO; hsize = ETL_PERFINFO_HEADER_SIZE; break;
    case ETL_HT_FULL32: case ETL_HT_FULL64:
        ev->kind = ETL_KIND_CLASSIC; hsize = ETL_CLASSIC_HEADER_SIZE; break;
    case ETL_HT_INSTANCE32: case ETL_HT_INSTANCE64:
        ev->kind = ETL_KIND_INSTANCE;
        hsize = (ctx && ctx->old_instance_header && type == ETL_HT_INSTANCE32) ? ETL_OLD_INSTANCE_HEADER_SIZE
                                                                               : ETL_INSTANCE_HEADER_SIZE;
        break;
    case ETL_HT_EVENT32: case ETL_HT_EVENT64:
        ev->kind = ETL_KIND_EVENT; hsize = ETL_EVENT_HEADER_SIZE; break;
    default:
        *why = "unknown trace header type";
        return ETL_RECORD_BAD;
    }
    switch (type) {
    case ETL_HT_SYSTEM32: case ETL_HT_COMPACT32: case ETL_HT_PERFINFO32: case ETL_HT_FULL32:
    case ETL_HT_INSTANCE32: case ETL_HT_EVENT32:
        ev->pointer_size = 4; break;
    default:
        ev->pointer_size = 8; break;
    }
    if (avail < hsize) { /* before the Size field at +4 is read */
        *why = "record overruns the buffer's used size";
        return ETL_RECORD_BAD;
    }
    /* System, compact and perfinfo headers keep the size at +4; the others in the low word. */
    size = (ev->kind == ETL_KIND_SYSTEM || ev->kind == ETL_KIND_COMPACT || ev->kind == ETL_KIND_PERFINFO)
               ? etl_le16(p + 4) : (m & 0xFFFF);
    if (size < hsize || size > avail) {
        *why = size > avail ? "record overruns the buffer's used size" : "record smaller than its header";
        return ETL_RECORD_BAD;
    }

    switch (ev->kind) {
    case ETL_KIND_SYSTEM:
    case ETL_KIND_COMPACT:
        decode_system(p, hsize, ev);
        rc = decode_header_items(p, size, hsize, ev, why);
        break;
    case ETL_KIND_PERFINFO: {
        unsigned group = p[7];
        const etl_guid *g = etl_group_guid(group);
        ev->hook_id = (uint16_t)(group << 8 | p[6]);
        ev->opcode = p[6];
        ev->timestamp = etl_le64s(p + 8);
        if (ev->hook_id == ETL_HOOK_PROCESS_LOAD_IMAGE) g = etl_group_guid(ETL_GROUP_IMAGE);
        if (g) {
            ev->provider = *g;
            ev->has |= ETL_HAS_PROVIDER;
        }
        rc = decode_header_items(p, size, hsize, ev, why);
        break;
    }
    case ETL_KIND_CLASSIC:
        decode_classic(p, ev);
        ev->payload = p + hsize;
        ev->payload_len = size - hsize;
        break;
    case ETL_KIND_INSTANCE:
        decode_classic(p, ev);
        if (hsize == ETL_OLD_INSTANCE_HEADER_SIZE) {
            /* EVENT_INSTANCE_HEADER: RegHandle replaces the GUID; no provider GUID on disk. */
            memset(&ev->provider, 0, sizeof ev->provider);
            ev->has &= ~(unsigned)(ETL_HAS_PROVIDER | ETL_HAS_CPU_TIME);
            ev->instance_id = etl_le32(p + 0x20);
            ev->parent_instance_id = etl_le32(p + 0x24);
        } else {
            ev->instance_id = etl_le32(p + 0x30);
            ev->parent_instance_id = etl_le32(p + 0x34);
            etl_guid_read(p + 0x38, &ev->parent_guid);
        }
        ev->payload = p + hsize;
        ev->payload_len = size - hsize;
        break;
    case ETL_KIND_EVENT:
        rc = decode_event_header(p, size, ev, why);
        break;
    default:
        break;
    }
done:
    if (rc != ETL_RECORD_OK) return rc;
    ev->record = p;
    ev->record_size = size;
    *step = etl_align8(size);
    return ETL_RECORD_OK;
}

int etl_record_peek_timestamp(const uint8_t *p, uint32_t avail, int64_t *ts)
{
    uint32_t m;

    if (avail < ETL_PERFINFO_HEADER_SIZE) return 0;
    m = etl_le32(p);
    if ((m >> 24) == 0xC0) {
        unsigned type = (m >> 16) & 0xFF;
        if (type == ETL_HT_PERFINFO32 || type == ETL_HT_PERFINFO64) {
            *ts = etl_le64s(p + 8);
            return 1;
        }
        if (avail < 0x18) return 0;
        *ts = etl_le64s(p + 16);
        return 1;
    }
    if ((m >> 24) == 0x90) {
        uint16_t opt = etl_le16(p + 6);
        uint32_t pos = ETL_MESSAGE_HEADER_SIZE + ((opt & ETL_MSG_SEQUENCE) ? 4 : 0) +
                       ((opt & ETL_MSG_COMPONENTID) ? 4 : (opt & ETL_MSG_GUID) ? 16 : 0);
        if (!(opt & ETL_MSG_TIMESTAMP) || pos + 8 > avail || pos + 8 > (m & 0xFFFF)) return 0;
        *ts = etl_le64s(p + pos);
        return 1;
    }
    return 0;
}

int etl_event_ext_item_get(const etl_event *ev, unsigned index, etl_ext_item *out)
{
    if (index >= ev->ext_count || !ev->ext) return ETL_FAILED;
    if (ev->kind == ETL_KIND_EVENT) {
        const uint8_t *p = ev->ext;
        for (unsigned i = 0; i < index; i++) p += etl_le16(p);
        out->type = etl_le16(p + 2);
        out->size = etl_le16(p + 6);
        out->data = p + 8;
        return ETL_OK;
    }
    /* Perfinfo/system header items: PEBS index first, then all PMC counters as one item. */
    if (ev->ext_count == 2 || (index == 0 && (etl_le16(ev->record) & ETL_TRACE_HEADER_PEBS_INDEX_FLAG))) {
        if (index == 0) {
            out->type = ETL_EXT_PEBS_INDEX;
            out->size = 8;
            out->data = ev->ext;
            return ETL_OK;
        }
        out->type = ETL_EXT_PMC_COUNTERS;
        out->size = (uint16_t)(ev->ext_len - 8);
        out->data = ev->ext + 8;
        return ETL_OK;
    }
    out->type = ETL_EXT_PMC_COUNTERS;
    out->size = (uint16_t)ev->ext_len;
    out->data = ev->ext;
    return ETL_OK;
}

unsigned etl_record_timestamp_fields(const etl_event *ev, uint32_t off[ETL_RECORD_TIMESTAMP_FIELDS])
{
    unsigned n = 0;

    switch (ev->kind) {
    case ETL_KIND_PERFINFO:
        off[n++] = 0x08;
        break;
    case ETL_KIND_SYSTEM: case ETL_KIND_COMPACT: case ETL_KIND_CLASSIC: case ETL_KIND_INSTANCE:
    case ETL_KIND_EVENT:
        off[n++] = 0x10;
        break;
    case ETL_KIND_MESSAGE:
        /* The optional items before it: sequence, then component id or GUID (section 4.7). */
        if (ev->flags & ETL_MSG_TIMESTAMP)
            off[n++] = ETL_MESSAGE_HEADER_SIZE + ((ev->flags & ETL_MSG_SEQUENCE) ? 4 : 0) +
                       ((ev->flags & ETL_MSG_COMPONENTID) ? 4 : (ev->flags & ETL_MSG_GUID) ? 16 : 0);
        return n;
    default:
        return 0;
    }
    if (ev->kind != ETL_KIND_CLASSIC && ev->kind != ETL_KIND_INSTANCE && ev->kind != ETL_KIND_EVENT &&
        ev->payload_len >= 8 &&
        (ev->hook_id == ETL_HOOK_STACKWALK_STACK || ev->hook_id == ETL_HOOK_STACKWALK_KEY_KERNEL ||
         ev->hook_id == ETL_HOOK_STACKWALK_KEY_USER || ev->hook_id == ETL_HOOK_LBR_SAMPLE))
        off[n++] = (uint32_t)(ev->payload - ev->record);
    return n;
}

uint32_t etl_utf8_to_utf16(uint8_t *p, const char *s, uint32_t max_units)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t n = 0;

    while (*u && n + 3 < max_units) {
        uint32_t c = *u++;
        int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        if (c >= 0x80 && c < 0xC0) c = 0xFFFD;
        else if (more) {
            c &= 0x3Fu >> more;
            for (int i = 0; i < more; i++) {
                if ((*u & 0xC0) != 0x80) { c = 0xFFFD; break; }
                c = c << 6 | (*u++ & 0x3F);
            }
        }
        if (c >= 0x10000 && c <= 0x10FFFF) {
            c -= 0x10000;
            etl_put16(p + 2 * n++, (uint16_t)(0xD800 + (c >> 10)));
            etl_put16(p + 2 * n++, (uint16_t)(0xDC00 + (c & 0x3FF)));
        } else {
            etl_put16(p + 2 * n++, (uint16_t)(c > 0xFFFF ? 0xFFFD : c));
        }
    }
    etl_put16(p + 2 * n++, 0);
    return 2 * n;
}

int etl_fail(char *err, size_t errsize, const char *fmt, ...)
{
    va_list ap;

    if (err && errsize) {
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return ETL_FAILED;
}

int etl_vfail_at(char *err, size_t errsize, const char *name, long line, const char *fmt, va_list ap)
{
    char what[400];

    vsnprintf(what, sizeof what, fmt, ap);
    return etl_fail(err, errsize, "%s:%ld: %s", name, line, what);
}

int etl_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t c;
    void *q;

    if (need <= *cap) return 0;
    c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem) return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / elem || !(q = realloc(*p, c * elem))) return -1;
    *p = q;
    *cap = c;
    return 0;
}
