/* SPDX-License-Identifier: MIT */
/* Tests of TraceLogging events written through the provider API: every type read back equal by the field decoder, arrays, structs, limits, refused definitions, and the bytes Windows writes. */
#define _GNU_SOURCE /* syscall */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "format/format.h"
#include "testutil.h"

#define PROVIDER_NAME "libetl.Test.TraceLogging"
static const etl_guid guid_of_nothing;
static const etl_guid tguid = { 0x2f2a1d47, 0x6c1e, 0x5b0a, { 0x91, 0x3e, 0x0d, 0x44, 0x7a, 0x51, 0xc2, 0x09 } };

/* ------------------------------------------------------------------ payloads */

/* A payload built field by field, in TraceLogging's layout. */
struct payload {
    uint8_t b[70000];
    uint32_t n;
};

static void put_bytes(struct payload *p, const void *v, uint32_t n)
{
    ck_assert_uint_le(p->n + n, sizeof p->b);
    if (n) memcpy(p->b + p->n, v, n);
    p->n += n;
}

static void put_u16(struct payload *p, uint16_t v) { put_bytes(p, &v, 2); }
static void put_u32(struct payload *p, uint32_t v) { put_bytes(p, &v, 4); }
static void put_str(struct payload *p, const char *s) { put_bytes(p, s, (uint32_t)strlen(s) + 1); }
static void put_counted(struct payload *p, const void *v, uint16_t n)
{
    put_u16(p, n);
    put_bytes(p, v, n);
}
/* A UTF-16 string from ASCII, with its terminator. */
static void put_str16(struct payload *p, const char *s)
{
    for (; *s; s++) put_u16(p, (uint16_t)(unsigned char)*s);
    put_u16(p, 0);
}

/* ------------------------------------------------------------------ sessions */

static etl_session *start(const char *file, uint32_t buffer_kb)
{
    etl_session_properties prop = { .logger_name = "TlWrite", .buffer_size_kb = buffer_kb };
    etl_session *s = NULL;

    prop.log_file_name = test_dir_path(file);
    ck_assert_msg(etl_session_start(&s, &prop) == ETL_OK, "start: %s", etl_session_error(s));
    ck_assert_int_eq(etl_session_enable_provider(s, &tguid, 0, 0, 0), ETL_OK);
    return s;
}

/* Stops s; returns its EventsLost. */
static uint64_t stop(etl_session *s)
{
    etl_session_stats st;

    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    return st.events_lost;
}

static etl_provider *provider(void)
{
    etl_provider *p = NULL;

    ck_assert_int_eq(etl_provider_register_named(&p, PROVIDER_NAME, &tguid, NULL), ETL_OK);
    ck_assert_str_eq(etl_provider_name(p), PROVIDER_NAME);
    return p;
}

static etl_tlg_event *define(etl_provider *p, const char *name, const etl_event_descriptor *d,
                             const etl_tlg_field *f, unsigned n)
{
    etl_tlg_event *ev = NULL;
    char err[256] = "";

    ck_assert_msg(etl_tlg_event_define(&ev, p, name, d, f, n, err, sizeof err) == ETL_OK, "define %s: %s", name, err);
    ck_assert_ptr_nonnull(ev);
    return ev;
}

/* Writes one payload, after checking it against the event's metadata. */
static void write_payload(const etl_tlg_event *ev, const struct payload *pl)
{
    etl_data d = { pl->b, pl->n };
    char err[256] = "";

    ck_assert_msg(etl_tlg_event_check(ev, &d, 1, err, sizeof err) == ETL_OK, "check: %s", err);
    ck_assert_int_eq(etl_tlg_event_write(ev, &d, 1, 0), ETL_OK);
}

/* The events of tguid in file, decoded: calls fn(k, event, decoded) for the k-th. Returns how
   many. */
typedef void (*event_fn)(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg);
static unsigned read_back(const char *file, event_fn fn, void *arg)
{
    etl_decoder_options o = { .flags = ETL_DECODER_NO_DEFAULTS };
    etl_decoder *dec = NULL;
    etl_reader *r = NULL;
    etl_event ev;
    unsigned k = 0;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(file), NULL), ETL_OK);
    ck_assert_int_eq(etl_decoder_open(&dec, &o), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        etl_decoded_event de;
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &tguid)) continue;
        ck_assert_msg(etl_decoder_decode(dec, &ev, &de) == 1, "event %u: %s", k, etl_decoder_error(dec));
        ck_assert_int_eq(de.source, ETL_SCHEMA_TRACELOGGING);
        ck_assert_str_eq(de.provider_name, PROVIDER_NAME);
        ck_assert_uint_eq(de.payload_used, ev.payload_len);
        ck_assert_uint_eq(ev.channel, 11);
        if (fn) fn(k, &ev, &de, arg);
        k++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_decoder_close(dec);
    etl_reader_close(r);
    return k;
}

static const char *json_of(const etl_decoded_event *de)
{
    static char buf[1 << 17];
    size_t n = etl_decoded_format_json(de, buf, sizeof buf);

    ck_assert_uint_lt(n, sizeof buf);
    return buf;
}

/* ------------------------------------------------------------------ every type */

/* One scalar field of every type: its value's bytes as a decoded field shows them (strings
   without their terminator or count), and what the decoder must say its types are. */
struct typed {
    const char *name;
    uint16_t type;
    uint16_t in, out;        /* decoded: enum etl_in_type, enum etl_out_type */
    const void *value;
    uint32_t size;
    const char *text;        /* etl_field_format, or NULL */
};

static const uint8_t sid[] = { 1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xe9, 3, 0, 0 };
static const uint8_t ipv6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t sockaddr_in[16] = { 2, 0, 0x1f, 0x90, 192, 0, 2, 9, 0, 0, 0, 0, 0, 0, 0, 0 };
static const uint8_t port[2] = { 0x01, 0xbb };            /* 443, network order */
static const uint8_t ipv4[4] = { 192, 0, 2, 7 };
static const uint16_t u16str[] = { 'w', 0xe9, 0x3b1, 0xd83d, 0xde00 }; /* "wéα😀" */
static const uint8_t blob[] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01 };
static const etl_guid gval = { 0x01020304, 0x0506, 0x0708, { 9, 10, 11, 12, 13, 14, 15, 16 } };
static const uint16_t systime[8] = { 2024, 2, 4, 29, 23, 59, 58, 999 }; /* Thursday 29 February 2024 */
static const uint64_t filetime = 133537247989990000ull;                 /* 2024-02-29T23:59:58.999Z */
static const int8_t i8 = -128;
static const uint8_t u8 = 255, b8 = 1, c8 = 'Z', x8 = 0xa5;
static const int16_t i16 = -32768;
static const uint16_t u16 = 65535, c16 = 0x3b1, x16 = 0xbeef;
static const int32_t i32 = INT32_MIN, b32 = 1, hr = (int32_t)0x80004005;
static const uint32_t u32 = UINT32_MAX, x32 = 0xdeadbeef, pid = 1234, tid = 5678, win32 = 5, ntstatus = 0xc0000005;
static const int64_t i64 = INT64_MIN;
static const uint64_t u64 = UINT64_MAX, x64 = 0x0123456789abcdefull;
static const float f32 = -1.5e-7f;
static const double f64 = 6.02214076e23;
static const void *const ptr = (const void *)(uintptr_t)0x00007ffd12345678ull;

#define PTR_IN (sizeof(void *) == 8 ? ETL_IN_HEXINT64 : ETL_IN_HEXINT32)
static const struct typed typed[] = {
    { "Utf8", ETL_TLG_UTF8, ETL_IN_ANSI_STRING, ETL_OUT_UTF8, "h\xc3\xa9llo \xe2\x82\xac", 10, "h\xc3\xa9llo \xe2\x82\xac" },
    { "Ansi", ETL_TLG_ANSI, ETL_IN_ANSI_STRING, ETL_OUT_NULL, "plain", 5, "plain" },
    { "Utf16", ETL_TLG_UTF16, ETL_IN_UNICODE_STRING, ETL_OUT_NULL, u16str, sizeof u16str, "w\xc3\xa9\xce\xb1\xf0\x9f\x98\x80" },
    { "CountedUtf8", ETL_TLG_COUNTED_UTF8, ETL_IN_COUNTED_ANSI_STRING, ETL_OUT_UTF8, "counted", 7, "counted" },
    { "CountedAnsi", ETL_TLG_COUNTED_ANSI, ETL_IN_COUNTED_ANSI_STRING, ETL_OUT_NULL, "ab", 2, "ab" },
    { "CountedUtf16", ETL_TLG_COUNTED_UTF16, ETL_IN_COUNTED_STRING, ETL_OUT_NULL, u16str, 6, "w\xc3\xa9\xce\xb1" },
    { "Json", ETL_TLG_JSON, ETL_IN_ANSI_STRING, ETL_OUT_JSON, "{\"a\":1}", 7, "{\"a\":1}" },
    { "Int8", ETL_TLG_INT8, ETL_IN_INT8, ETL_OUT_NULL, &i8, 1, "-128" },
    { "UInt8", ETL_TLG_UINT8, ETL_IN_UINT8, ETL_OUT_NULL, &u8, 1, "255" },
    { "Int16", ETL_TLG_INT16, ETL_IN_INT16, ETL_OUT_NULL, &i16, 2, "-32768" },
    { "UInt16", ETL_TLG_UINT16, ETL_IN_UINT16, ETL_OUT_NULL, &u16, 2, "65535" },
    { "Int32", ETL_TLG_INT32, ETL_IN_INT32, ETL_OUT_NULL, &i32, 4, "-2147483648" },
    { "UInt32", ETL_TLG_UINT32, ETL_IN_UINT32, ETL_OUT_NULL, &u32, 4, "4294967295" },
    { "Int64", ETL_TLG_INT64, ETL_IN_INT64, ETL_OUT_NULL, &i64, 8, "-9223372036854775808" },
    { "UInt64", ETL_TLG_UINT64, ETL_IN_UINT64, ETL_OUT_NULL, &u64, 8, "18446744073709551615" },
    { "HexInt8", ETL_TLG_HEXINT8, ETL_IN_UINT8, ETL_OUT_HEXINT8, &x8, 1, "0xa5" },
    { "HexInt16", ETL_TLG_HEXINT16, ETL_IN_UINT16, ETL_OUT_HEXINT16, &x16, 2, "0xbeef" },
    { "HexInt32", ETL_TLG_HEXINT32, ETL_IN_HEXINT32, ETL_OUT_NULL, &x32, 4, "0xdeadbeef" },
    { "HexInt64", ETL_TLG_HEXINT64, ETL_IN_HEXINT64, ETL_OUT_NULL, &x64, 8, "0x123456789abcdef" },
    { "Float", ETL_TLG_FLOAT, ETL_IN_FLOAT, ETL_OUT_NULL, &f32, 4, NULL },
    { "Double", ETL_TLG_DOUBLE, ETL_IN_DOUBLE, ETL_OUT_NULL, &f64, 8, NULL },
    { "Bool32", ETL_TLG_BOOL32, ETL_IN_BOOLEAN, ETL_OUT_NULL, &b32, 4, "true" },
    { "Bool8", ETL_TLG_BOOL8, ETL_IN_UINT8, ETL_OUT_BOOLEAN, &b8, 1, "true" },
    { "Char8", ETL_TLG_CHAR8, ETL_IN_UINT8, ETL_OUT_STRING, &c8, 1, NULL },
    { "Char16", ETL_TLG_CHAR16, ETL_IN_UINT16, ETL_OUT_STRING, &c16, 2, NULL },
    { "Pointer", ETL_TLG_POINTER, PTR_IN, ETL_OUT_NULL, &ptr, sizeof(void *), NULL },
    { "CodePointer", ETL_TLG_CODE_POINTER, PTR_IN, ETL_OUT_CODE_POINTER, &ptr, sizeof(void *), NULL },
    { "Pid", ETL_TLG_PID, ETL_IN_UINT32, ETL_OUT_PID, &pid, 4, "1234" },
    { "Tid", ETL_TLG_TID, ETL_IN_UINT32, ETL_OUT_TID, &tid, 4, "5678" },
    { "Port", ETL_TLG_PORT, ETL_IN_UINT16, ETL_OUT_PORT, port, 2, "443" },
    { "IPv4", ETL_TLG_IPV4, ETL_IN_UINT32, ETL_OUT_IPV4, ipv4, 4, "192.0.2.7" },
    { "IPv6", ETL_TLG_IPV6, ETL_IN_BINARY, ETL_OUT_IPV6, ipv6, 16, "2001:db8::1" },
    { "SocketAddress", ETL_TLG_SOCKET_ADDRESS, ETL_IN_BINARY, ETL_OUT_SOCKET_ADDRESS, sockaddr_in, 16, "192.0.2.9:8080" },
    { "Win32Error", ETL_TLG_WIN32ERROR, ETL_IN_UINT32, ETL_OUT_WIN32_ERROR, &win32, 4, NULL },
    { "NTStatus", ETL_TLG_NTSTATUS, ETL_IN_UINT32, ETL_OUT_NTSTATUS, &ntstatus, 4, "0xc0000005" },
    { "HResult", ETL_TLG_HRESULT, ETL_IN_INT32, ETL_OUT_HRESULT, &hr, 4, "0x80004005" },
    { "FileTime", ETL_TLG_FILETIME, ETL_IN_FILETIME, ETL_OUT_NULL, &filetime, 8, NULL },
    { "FileTimeUtc", ETL_TLG_FILETIME_UTC, ETL_IN_FILETIME, ETL_OUT_DATETIME_UTC, &filetime, 8, NULL },
    { "SystemTime", ETL_TLG_SYSTEMTIME, ETL_IN_SYSTEMTIME, ETL_OUT_NULL, systime, 16, NULL },
    { "SystemTimeUtc", ETL_TLG_SYSTEMTIME_UTC, ETL_IN_SYSTEMTIME, ETL_OUT_DATETIME_UTC, systime, 16, NULL },
    { "Guid", ETL_TLG_GUID, ETL_IN_GUID, ETL_OUT_NULL, &gval, 16, "01020304-0506-0708-090a-0b0c0d0e0f10" },
    { "Sid", ETL_TLG_SID, ETL_IN_SID, ETL_OUT_NULL, sid, sizeof sid, "S-1-5-21-1-2-3-1001" },
    { "Binary", ETL_TLG_BINARY, ETL_IN_BINARY, ETL_OUT_NULL, blob, sizeof blob, NULL },
    { "CountedBinary", ETL_TLG_COUNTED_BINARY, ETL_IN_COUNTED_BINARY, ETL_OUT_NULL, blob, sizeof blob, NULL },
    { "Empty", ETL_TLG_UTF8, ETL_IN_ANSI_STRING, ETL_OUT_UTF8, "", 0, "" },
    { "EmptyUtf16", ETL_TLG_UTF16, ETL_IN_UNICODE_STRING, ETL_OUT_NULL, u16str, 0, "" },
    { "EmptyCounted", ETL_TLG_COUNTED_UTF16, ETL_IN_COUNTED_STRING, ETL_OUT_NULL, "", 0, "" },
    { "EmptyBinary", ETL_TLG_BINARY, ETL_IN_BINARY, ETL_OUT_NULL, "", 0, "" },
};
#define NTYPED (sizeof typed / sizeof typed[0])

/* The payload of the typed fields: each value laid out as its in type says. */
static void typed_payload(struct payload *pl)
{
    pl->n = 0;
    for (unsigned i = 0; i < NTYPED; i++) {
        const struct typed *t = &typed[i];
        switch (t->type & 0xFF) {
        case ETL_IN_ANSI_STRING:
            put_bytes(pl, t->value, t->size);
            put_bytes(pl, "", 1);
            break;
        case ETL_IN_UNICODE_STRING:
            put_bytes(pl, t->value, t->size);
            put_u16(pl, 0);
            break;
        case ETL_IN_COUNTED_ANSI_STRING: case ETL_IN_COUNTED_STRING: case ETL_IN_BINARY: case ETL_IN_COUNTED_BINARY:
            put_counted(pl, t->value, (uint16_t)t->size);
            break;
        default:
            put_bytes(pl, t->value, t->size);
        }
    }
}

static uint64_t le_value(const void *v, uint32_t size)
{
    uint64_t x = 0;
    memcpy(&x, v, size);
    return x;
}

static void check_typed(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    (void)ev;
    (void)arg;
    (void)k;
    ck_assert_str_eq(de->event_name, PROVIDER_NAME "/AllTypes");
    ck_assert_uint_eq(de->field_count, NTYPED);
    for (unsigned i = 0; i < NTYPED; i++) {
        const struct typed *t = &typed[i];
        const etl_field *f = &de->fields[i];
        unsigned in = f->in_type;
        char text[128];
        ck_assert_str_eq(f->name, t->name);
        ck_assert_msg(f->in_type == t->in && f->out_type == t->out, "%s: in %u out %u, want %u %u", t->name, f->in_type,
                      f->out_type, t->in, t->out);
        ck_assert_int_eq(f->kind, ETL_FIELD_VALUE);
        ck_assert_uint_eq(f->depth, 0);
        ck_assert_msg(f->size == t->size && memcmp(f->data, t->value, t->size) == 0, "%s: the value's bytes differ",
                      t->name);
        /* The value by its kind. */
        if (in == ETL_IN_INT8 || in == ETL_IN_INT16 || in == ETL_IN_INT32 || in == ETL_IN_INT64) {
            int64_t v, want = t->size == 1 ? *(const int8_t *)t->value : t->size == 2 ? *(const int16_t *)t->value
                            : t->size == 4 ? *(const int32_t *)t->value : *(const int64_t *)t->value;
            ck_assert_int_eq(etl_field_int(f, &v), ETL_OK);
            ck_assert_msg(v == want, "%s: %lld", t->name, (long long)v);
        } else if (in == ETL_IN_UINT8 || in == ETL_IN_UINT16 || in == ETL_IN_UINT32 || in == ETL_IN_UINT64 ||
                   in == ETL_IN_HEXINT32 || in == ETL_IN_HEXINT64 || in == ETL_IN_BOOLEAN) {
            uint64_t v, want = le_value(t->value, t->size);
            if (f->out_type == ETL_OUT_PORT) want = 443;
            ck_assert_int_eq(etl_field_uint(f, &v), ETL_OK);
            ck_assert_msg(v == want, "%s: %llu, want %llu", t->name, (unsigned long long)v, (unsigned long long)want);
        } else if (in == ETL_IN_FLOAT || in == ETL_IN_DOUBLE) {
            double v, want = in == ETL_IN_FLOAT ? (double)f32 : f64;
            ck_assert_int_eq(etl_field_double(f, &v), ETL_OK);
            ck_assert_msg(memcmp(&v, &want, sizeof v) == 0, "%s: %g, want %g", t->name, v, want);
        } else if (in == ETL_IN_GUID) {
            etl_guid g;
            ck_assert_int_eq(etl_field_guid(f, &g), ETL_OK);
            ck_assert(etl_guid_equal(&g, &gval));
        } else if (in == ETL_IN_FILETIME || in == ETL_IN_SYSTEMTIME) {
            int64_t ns;
            ck_assert_int_eq(etl_field_time(f, &ns), ETL_OK);
            /* 2024-02-29T23:59:58.999Z: 1709251198999 ms since 1970 */
            ck_assert_int_eq(ns, 1709251198999000000ll);
        } else if (in == ETL_IN_ANSI_STRING || in == ETL_IN_UNICODE_STRING || in == ETL_IN_COUNTED_STRING ||
                   in == ETL_IN_COUNTED_ANSI_STRING) {
            etl_string s;
            ck_assert_int_eq(etl_field_string(f, &s), ETL_OK);
            ck_assert_uint_eq(s.size, t->size);
            ck_assert_int_eq(s.utf16, in == ETL_IN_UNICODE_STRING || in == ETL_IN_COUNTED_STRING);
        }
        if (t->text) {
            etl_field_format(f, text, sizeof text);
            ck_assert_msg(strcmp(text, t->text) == 0, "%s shown as '%s', want '%s'", t->name, text, t->text);
        }
    }
}

START_TEST(every_type_reads_back)
{
    etl_provider *p;
    etl_tlg_event *ev;
    etl_tlg_field f[NTYPED];
    etl_event_descriptor d = { .level = 4, .opcode = 1, .keywords = 0x30 };
    static struct payload pl;
    etl_session *s;

    test_dir_create();
    p = provider();
    memset(f, 0, sizeof f);
    for (unsigned i = 0; i < NTYPED; i++) {
        f[i].name = typed[i].name;
        f[i].type = typed[i].type;
    }
    ev = define(p, "AllTypes", &d, f, NTYPED);
    ck_assert(!etl_tlg_event_enabled(ev));
    s = start("types.etl", 64);
    ck_assert(etl_tlg_event_enabled(ev));
    typed_payload(&pl);
    write_payload(ev, &pl);
    write_payload(ev, &pl);
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("types.etl", check_typed, NULL), 2);
    etl_provider_unregister(p); /* frees ev */
    test_dir_remove();
}
END_TEST

/* The descriptor goes into the record as given, channel 11 unless another is given; with no
   descriptor, level 5 as TraceLoggingWrite. */
static void check_descriptors(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    (void)de;
    (void)arg;
    if (k == 0) {
        ck_assert_uint_eq(ev->id, 0);
        ck_assert_uint_eq(ev->level, 5);
        ck_assert_uint_eq(ev->opcode, 0);
        ck_assert_uint_eq(ev->keywords, 0);
    } else {
        ck_assert_uint_eq(ev->id, 7);
        ck_assert_uint_eq(ev->version, 2);
        ck_assert_uint_eq(ev->level, 2);
        ck_assert_uint_eq(ev->opcode, 1);
        ck_assert_uint_eq(ev->task, 0);
        ck_assert_uint_eq(ev->keywords, 0x800000000000ull);
    }
}

START_TEST(descriptor_and_channel)
{
    etl_provider *p;
    etl_tlg_event *a, *b;
    const etl_tlg_field f = { "V", ETL_TLG_UINT32, 0, 0, 0 };
    etl_event_descriptor d = { .id = 7, .version = 2, .level = 2, .opcode = 1, .keywords = 0x800000000000ull };
    uint32_t v = 1;
    etl_data data = { &v, 4 };
    etl_session *s;

    test_dir_create();
    p = provider();
    a = define(p, "NoDescriptor", NULL, &f, 1);
    b = define(p, "WithDescriptor", &d, &f, 1);
    s = start("desc.etl", 64);
    ck_assert_int_eq(etl_tlg_event_write(a, &data, 1, 0), ETL_OK);
    ck_assert_int_eq(etl_tlg_event_write(b, &data, 1, 0), ETL_OK);
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("desc.etl", check_descriptors, NULL), 2);
    etl_tlg_event_free(a);
    etl_tlg_event_free(b);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* ------------------------------------------------------------------ arrays and structs */

static const etl_tlg_field array_fields[] = {
    { "Fixed32", ETL_TLG_INT32, ETL_TLG_FIXED, 0, 3 },
    { "Var64", ETL_TLG_UINT64, ETL_TLG_VARIABLE, 0, 0 },
    { "VarEmpty", ETL_TLG_UINT16, ETL_TLG_VARIABLE, 0, 0 },
    { "Guids", ETL_TLG_GUID, ETL_TLG_FIXED, 0, 2 },
    { "Flags", ETL_TLG_BOOL8, ETL_TLG_VARIABLE, 0, 0 },
    { "Doubles", ETL_TLG_DOUBLE, ETL_TLG_FIXED, 0, 2 },
    { "Names", ETL_TLG_UTF8, ETL_TLG_VARIABLE, 0, 0 },
    { "Wide", ETL_TLG_UTF16, ETL_TLG_FIXED, 0, 2 },
    { "Blobs", ETL_TLG_COUNTED_BINARY, ETL_TLG_VARIABLE, 0, 0 },
    { "Point", ETL_TLG_STRUCT, 0, 2, 0 },
    { "X", ETL_TLG_INT32, 0, 0, 0 },
    { "Y", ETL_TLG_INT32, 0, 0, 0 },
    { "Items", ETL_TLG_STRUCT, ETL_TLG_VARIABLE, 3, 0 },
    { "Id", ETL_TLG_UINT32, 0, 0, 0 },
    { "Label", ETL_TLG_COUNTED_UTF8, 0, 0, 0 },
    { "Inner", ETL_TLG_STRUCT, 0, 2, 0 },
    { "A", ETL_TLG_UINT8, 0, 0, 0 },
    { "Tags", ETL_TLG_UTF16, ETL_TLG_VARIABLE, 0, 0 },
    { "Pair", ETL_TLG_STRUCT, ETL_TLG_FIXED, 1, 2 },
    { "Sid", ETL_TLG_SID, 0, 0, 0 },
    { "Last", ETL_TLG_UTF8, 0, 0, 0 },
};
#define NARRAY (sizeof array_fields / sizeof array_fields[0])

static void array_payload(struct payload *pl)
{
    const int32_t fixed[3] = { 1, -2, 3 };
    const uint64_t var[4] = { 0, 1, UINT64_MAX, 1ull << 40 };
    const etl_guid g[2] = { gval, { 0xffffffff, 0, 0xffff, { 0, 0, 0, 0, 0, 0, 0, 1 } } };
    const uint8_t flags[3] = { 1, 0, 1 };
    const double dbl[2] = { 0.5, -1024.75 };
    const uint8_t sid0[8] = { 1, 0, 0, 0, 0, 0, 0, 5 };

    pl->n = 0;
    put_bytes(pl, fixed, sizeof fixed);
    put_u16(pl, 4);
    put_bytes(pl, var, sizeof var);
    put_u16(pl, 0);
    put_bytes(pl, g, sizeof g);
    put_u16(pl, 3);
    put_bytes(pl, flags, 3);
    put_bytes(pl, dbl, sizeof dbl);
    put_u16(pl, 3);
    put_str(pl, "alpha");
    put_str(pl, "");
    put_str(pl, "\xce\xb3");
    put_str16(pl, "x");
    put_str16(pl, "");
    put_u16(pl, 2);
    put_counted(pl, "", 0);
    put_counted(pl, "\x01\x02\x03", 3);
    put_u32(pl, 10);                /* Point */
    put_u32(pl, (uint32_t)-20);
    put_u16(pl, 2);                 /* Items */
    put_u32(pl, 1);
    put_counted(pl, "one", 3);
    put_bytes(pl, "\x07", 1);
    put_u16(pl, 2);
    put_str16(pl, "t1");
    put_str16(pl, "t2");
    put_u32(pl, 2);
    put_counted(pl, "", 0);
    put_bytes(pl, "\x08", 1);
    put_u16(pl, 0);
    put_bytes(pl, sid, sizeof sid); /* Pair: two SIDs */
    put_bytes(pl, sid0, sizeof sid0);
    put_str(pl, "end");
}

static const char array_json[] =
    "{\"Fixed32\":[1,-2,3],\"Var64\":[0,1,18446744073709551615,1099511627776],\"VarEmpty\":[],"
    "\"Guids\":[\"01020304-0506-0708-090a-0b0c0d0e0f10\",\"ffffffff-0000-ffff-0000-000000000001\"],"
    "\"Flags\":[true,false,true],\"Doubles\":[0.5,-1024.75],\"Names\":[\"alpha\",\"\",\"\xce\xb3\"],"
    "\"Wide\":[\"x\",\"\"],\"Blobs\":[\"\",\"010203\"],\"Point\":{\"X\":10,\"Y\":-20},"
    "\"Items\":[{\"Id\":1,\"Label\":\"one\",\"Inner\":{\"A\":7,\"Tags\":[\"t1\",\"t2\"]}},"
    "{\"Id\":2,\"Label\":\"\",\"Inner\":{\"A\":8,\"Tags\":[]}}],"
    "\"Pair\":[{\"Sid\":\"S-1-5-21-1-2-3-1001\"},{\"Sid\":\"S-1-5\"}],\"Last\":\"end\"}";

static const etl_tlg_field other_fields[] = {
    { "Count", ETL_TLG_UINT16, 0, 0, 0 },
    { "Note", ETL_TLG_UTF8, 0, 0, 0 },
};

static void check_arrays(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    (void)ev;
    (void)arg;
    if (k % 2) { /* the other event, with the same id and another schema */
        ck_assert_str_eq(de->event_name, PROVIDER_NAME "/Other");
        ck_assert_str_eq(json_of(de), "{\"Count\":5,\"Note\":\"n\"}");
        return;
    }
    ck_assert_str_eq(de->event_name, PROVIDER_NAME "/Arrays");
    ck_assert_str_eq(json_of(de), array_json);
    /* The tree: a packed array is one field; an array of strings or structs is followed by its
       elements one level deeper, a struct's members one more. */
    ck_assert_int_eq(de->fields[0].kind, ETL_FIELD_ARRAY);
    ck_assert_uint_eq(de->fields[0].count, 3);
    ck_assert_uint_eq(de->fields[0].element_size, 4);
    ck_assert_uint_eq(de->fields[0].end, 1);
    for (unsigned i = 0; i < de->field_count; i++) {
        const etl_field *f = &de->fields[i];
        if (strcmp(f->name, "Items") != 0 || f->kind != ETL_FIELD_ARRAY) continue;
        ck_assert_uint_eq(f->count, 2);
        ck_assert_int_eq(f[1].kind, ETL_FIELD_STRUCT);
        ck_assert_uint_eq(f[1].depth, f->depth + 1);
        ck_assert_str_eq(f[2].name, "Id");
        ck_assert_uint_eq(f[2].depth, f->depth + 2);
        return;
    }
    ck_abort_msg("no Items array");
}

START_TEST(arrays_and_structs_read_back)
{
    etl_provider *p;
    etl_tlg_event *ev, *other;
    static struct payload pl, po;
    etl_session *s;

    test_dir_create();
    p = provider();
    ev = define(p, "Arrays", NULL, array_fields, NARRAY);
    other = define(p, "Other", NULL, other_fields, 2);
    array_payload(&pl);
    po.n = 0;
    put_u16(&po, 5);
    put_str(&po, "n");
    s = start("arrays.etl", 64);
    for (int i = 0; i < 3; i++) {
        write_payload(ev, &pl);
        write_payload(other, &po);
    }
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("arrays.etl", check_arrays, NULL), 6);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* ------------------------------------------------------------------ limits */

struct limits {
    uint32_t size;       /* the bytes of the one field's value */
    unsigned seen;
};

static void check_big(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    struct limits *l = arg;
    const etl_field *f = &de->fields[0];

    (void)k;
    ck_assert_uint_eq(ev->record_size, ETL_MAX_RECORD_SIZE);
    ck_assert_uint_eq(de->field_count, 1);
    ck_assert_uint_eq(f->size, l->size);
    for (uint32_t i = 0; i < f->size; i++) ck_assert_uint_eq(f->data[i], (uint8_t)(i * 7));
    l->seen++;
}

/* The largest payload a record takes reads back whole; one byte more is refused (E2BIG) and
   counted lost; a session whose buffers cannot hold the record refuses it the same way and
   keeps the events around it. */
START_TEST(largest_event_and_too_big)
{
    etl_provider *p;
    etl_tlg_event *ev, *small;
    const etl_tlg_field f = { "Data", ETL_TLG_COUNTED_BINARY, 0, 0, 0 };
    const etl_tlg_field fs = { "V", ETL_TLG_UINT32, 0, 0, 0 };
    static uint8_t big[ETL_MAX_RECORD_SIZE];
    uint16_t n;
    uint32_t max, v = 3;
    etl_data d[2], dv = { &v, 4 };
    struct limits l = { 0, 0 };
    etl_session *s;
    char err[256];

    test_dir_create();
    p = provider();
    ev = define(p, "Big", NULL, &f, 1);
    small = define(p, "Small", NULL, &fs, 1);
    max = etl_tlg_event_max_payload(ev);
    ck_assert_uint_gt(max, 65000);
    for (uint32_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7);
    n = (uint16_t)(max - 2);
    d[0] = (etl_data){ &n, 2 };
    d[1] = (etl_data){ big, n };
    l.size = n;
    ck_assert_int_eq(etl_tlg_event_check(ev, d, 2, err, sizeof err), ETL_OK);

    /* 128 KB buffers take the largest record. */
    s = start("big.etl", 128);
    ck_assert_int_eq(etl_tlg_event_write(ev, d, 2, 0), ETL_OK);
    n++;
    d[1].size = n;
    errno = 0;
    ck_assert_int_eq(etl_tlg_event_write(ev, d, 2, 0), ETL_FAILED);
    ck_assert_int_eq(errno, E2BIG);
    ck_assert_int_eq(etl_tlg_event_check(ev, d, 2, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "more than a record of the event can carry") != NULL, "%s", err);
    ck_assert_uint_eq(stop(s), 1);
    ck_assert_uint_eq(read_back("big.etl", check_big, &l), 1);
    ck_assert_uint_eq(l.seen, 1);

    /* 64 KB buffers do not. */
    n--;
    d[1].size = n;
    s = start("small.etl", 64);
    ck_assert_int_eq(etl_tlg_event_write(small, &dv, 1, 0), ETL_OK);
    errno = 0;
    ck_assert_int_eq(etl_tlg_event_write(ev, d, 2, 0), ETL_FAILED);
    ck_assert_int_eq(errno, E2BIG);
    ck_assert_int_eq(etl_tlg_event_write(small, &dv, 1, 0), ETL_OK);
    ck_assert_uint_eq(stop(s), 1);
    ck_assert_uint_eq(read_back("small.etl", NULL, NULL), 2);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* 127 members in a struct and structs 32 deep are the most that is taken; they read back. */
static void check_deep(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    (void)ev;
    (void)arg;
    if (k == 0) {
        ck_assert_uint_eq(de->field_count, 128);
        ck_assert_int_eq(de->fields[0].kind, ETL_FIELD_STRUCT);
        ck_assert_uint_eq(de->fields[0].count, 127);
        for (unsigned i = 1; i < 128; i++) {
            uint64_t v;
            ck_assert_uint_eq(de->fields[i].depth, 1);
            ck_assert_int_eq(etl_field_uint(&de->fields[i], &v), ETL_OK);
            ck_assert_uint_eq(v, i);
        }
    } else {
        uint64_t v;
        ck_assert_uint_eq(de->field_count, 33);
        for (unsigned i = 0; i < 32; i++) {
            ck_assert_int_eq(de->fields[i].kind, ETL_FIELD_STRUCT);
            ck_assert_uint_eq(de->fields[i].depth, i);
        }
        ck_assert_uint_eq(de->fields[32].depth, 32);
        ck_assert_int_eq(etl_field_uint(&de->fields[32], &v), ETL_OK);
        ck_assert_uint_eq(v, 0xabcdef);
    }
}

START_TEST(struct_limits)
{
    etl_provider *p;
    etl_tlg_event *wide, *deep, *bad = NULL;
    etl_tlg_field f[130];
    static char names[130][8];
    uint8_t vals[127];
    uint32_t leaf = 0xabcdef;
    etl_data d;
    etl_session *s;
    char err[256];

    test_dir_create();
    p = provider();
    memset(f, 0, sizeof f);
    f[0] = (etl_tlg_field){ "Wide", ETL_TLG_STRUCT, 0, 127, 0 };
    for (unsigned i = 1; i < 128; i++) {
        snprintf(names[i], sizeof names[i], "M%u", i);
        f[i] = (etl_tlg_field){ names[i], ETL_TLG_UINT8, 0, 0, 0 };
        vals[i - 1] = (uint8_t)i;
    }
    wide = define(p, "Wide", NULL, f, 128);
    f[0].members = 128;
    ck_assert_int_eq(etl_tlg_event_define(&bad, p, "TooWide", NULL, f, 129, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_null(bad);
    ck_assert_str_eq(err, "field Wide: a struct has 1 to 127 members, not 128");

    for (unsigned i = 0; i < 33; i++) {
        snprintf(names[i], sizeof names[i], "S%u", i);
        f[i] = (etl_tlg_field){ names[i], ETL_TLG_STRUCT, 0, 1, 0 };
    }
    f[32] = (etl_tlg_field){ "Leaf", ETL_TLG_UINT32, 0, 0, 0 };
    deep = define(p, "Deep", NULL, f, 33);
    f[32] = (etl_tlg_field){ "S32", ETL_TLG_STRUCT, 0, 1, 0 };
    f[33] = (etl_tlg_field){ "Leaf", ETL_TLG_UINT32, 0, 0, 0 };
    ck_assert_int_eq(etl_tlg_event_define(&bad, p, "TooDeep", NULL, f, 34, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "field S32: structs nested more than 32 deep");

    s = start("structs.etl", 64);
    d = (etl_data){ vals, sizeof vals };
    ck_assert_int_eq(etl_tlg_event_check(wide, &d, 1, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_tlg_event_write(wide, &d, 1, 0), ETL_OK);
    d = (etl_data){ &leaf, 4 };
    ck_assert_int_eq(etl_tlg_event_write(deep, &d, 1, 0), ETL_OK);
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("structs.etl", check_deep, NULL), 2);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* ------------------------------------------------------------------ refused */

START_TEST(refused_definitions)
{
    static const struct {
        const char *what;
        etl_tlg_field f[3];
        unsigned n;
        const char *err;
    } bad[] = {
        { "no name", { { "", ETL_TLG_UINT8, 0, 0, 0 } }, 1, "field 0 has no name" },
        { "in type 0", { { "N", ETL_TLG_TYPE(ETL_IN_NULL, 0), 0, 0, 0 } }, 1,
          "field N: in type 0 is not one TraceLogging writes (1 to 25)" },
        { "in type 26", { { "N", ETL_TLG_TYPE(26, 0), 0, 0, 0 } }, 1,
          "field N: in type 26 is not one TraceLogging writes (1 to 25)" },
        { "out type 128", { { "N", ETL_TLG_TYPE(ETL_IN_UINT8, 128), 0, 0, 0 } }, 1, "field N: out type 128 is not 0 to 127" },
        { "array kind 3", { { "N", ETL_TLG_UINT8, 3, 0, 0 } }, 1, "field N: array kind 3 is not 0 to 2" },
        { "struct, no members", { { "S", ETL_TLG_STRUCT, 0, 0, 0 } }, 1, "field S: a struct has 1 to 127 members, not 0" },
        { "struct with an out type", { { "S", ETL_TLG_TYPE(ETL_IN_STRUCT, 2), 0, 1, 0 }, { "M", ETL_TLG_UINT8, 0, 0, 0 } },
          2, "field S: a struct has no out type (2)" },
        { "members not a struct", { { "N", ETL_TLG_UINT8, 0, 1, 0 } }, 1, "field N: members (1) are for structs" },
        { "fixed, no count", { { "N", ETL_TLG_UINT8, ETL_TLG_FIXED, 0, 0 } }, 1,
          "field N: a fixed array needs 1 to 65535 elements, not 0" },
        { "count, not fixed", { { "N", ETL_TLG_UINT8, ETL_TLG_VARIABLE, 0, 4 } }, 1, "field N: count (4) is for fixed arrays" },
        { "array of Binary", { { "B", ETL_TLG_BINARY, ETL_TLG_VARIABLE, 0, 0 } }, 1,
          "field B: an array of Binary, which Windows' decoder cannot read (an array of CountedBinary can be)" },
        { "members past the end", { { "S", ETL_TLG_STRUCT, 0, 3, 0 }, { "M", ETL_TLG_UINT8, 0, 0, 0 } }, 2,
          "struct S: 2 of its members are missing (the fields end first)" },
        { "inner struct past the end",
          { { "S", ETL_TLG_STRUCT, 0, 2, 0 }, { "M", ETL_TLG_UINT8, 0, 0, 0 }, { "T", ETL_TLG_STRUCT, 0, 1, 0 } }, 3,
          "struct T: 1 of its members are missing (the fields end first)" },
    };
    etl_provider *p, *unnamed = NULL, *q = NULL;
    etl_tlg_event *ev = NULL;
    const etl_tlg_field ok = { "V", ETL_TLG_UINT8, 0, 0, 0 };
    static etl_tlg_field many[25000];
    char err[256], name[300];

    p = provider();
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(err, "(none)");
        ck_assert_msg(etl_tlg_event_define(&ev, p, "E", NULL, bad[i].f, bad[i].n, err, sizeof err) == ETL_FAILED,
                      "%s: taken", bad[i].what);
        ck_assert_ptr_null(ev);
        ck_assert_msg(strcmp(err, bad[i].err) == 0, "%s: '%s'", bad[i].what, err);
    }
    ck_assert_int_eq(etl_tlg_event_define(&ev, p, "", NULL, &ok, 1, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "the event has no name");
    ck_assert_int_eq(etl_tlg_event_define(&ev, p, "E", NULL, NULL, 2, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "2 fields, but none given");
    ck_assert_int_eq(etl_tlg_event_define(&ev, NULL, "E", NULL, &ok, 1, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "no provider");

    /* Metadata too large: 25000 fields of three bytes of name each. */
    for (unsigned i = 0; i < sizeof many / sizeof many[0]; i++) many[i] = (etl_tlg_field){ "ab", ETL_TLG_UINT8, 0, 0, 0 };
    ck_assert_int_eq(etl_tlg_event_define(&ev, p, "Many", NULL, many, 25000, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "event Many: its metadata takes more than 65535 bytes");
    /* Metadata that fits its u16 but leaves no room in a record. */
    ck_assert_int_eq(etl_tlg_event_define(&ev, p, "Many", NULL, many, 16350, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "event Many: its metadata (65408 bytes) and its provider's traits (27) leave no room") ==
                  err, "%s", err);
    ck_assert_ptr_null(ev);
    /* An event with no field is an event. */
    ck_assert_int_eq(etl_tlg_event_define(&ev, p, "NoFields", NULL, NULL, 0, err, sizeof err), ETL_OK);
    etl_tlg_event_free(ev);

    /* A provider with no name cannot have TraceLogging events. */
    ck_assert_int_eq(etl_provider_register(&unnamed, &guid_of_nothing), ETL_OK);
    ck_assert_ptr_null(etl_provider_name(unnamed));
    ck_assert_int_eq(etl_tlg_event_define(&ev, unnamed, "E", NULL, &ok, 1, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "provider 00000000-0000-0000-0000-000000000000 has no name, which a TraceLogging event needs "
                          "(etl_provider_register_named)");
    etl_provider_unregister(unnamed);

    /* Provider names: 1 to 255 bytes. */
    errno = 0;
    ck_assert_int_eq(etl_provider_register_named(&q, "", &tguid, NULL), ETL_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(etl_provider_register_named(&q, NULL, &tguid, NULL), ETL_FAILED);
    memset(name, 'n', 256);
    name[256] = '\0';
    errno = 0;
    ck_assert_int_eq(etl_provider_register_named(&q, name, &tguid, NULL), ETL_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_null(q);
    name[255] = '\0';
    ck_assert_int_eq(etl_provider_register_named(&q, name, &tguid, NULL), ETL_OK);
    ck_assert_str_eq(etl_provider_name(q), name);
    etl_provider_unregister(q);
    etl_provider_unregister(p);
}
END_TEST

/* etl_tlg_event_check names the field that does not fit and where, and bytes left over. */
START_TEST(payload_check)
{
    etl_provider *p = provider();
    etl_tlg_event *ev;
    const etl_tlg_field f[] = { { "A", ETL_TLG_UINT32, 0, 0, 0 }, { "S", ETL_TLG_COUNTED_UTF8, 0, 0, 0 },
                                { "Z", ETL_TLG_UTF8, 0, 0, 0 } };
    uint8_t b[16] = { 1, 0, 0, 0, 9, 0, 'a', 'b' };
    etl_data d = { b, 8 };
    char err[256];

    ev = define(p, "Checked", NULL, f, 3);
    ck_assert_int_eq(etl_tlg_event_check(ev, &d, 1, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "field S at payload byte 4: 9 bytes counted, 2 left");
    b[4] = 2;
    b[8] = 'z';
    b[9] = 0;
    b[10] = 0xee;
    d.size = 11;
    ck_assert_int_eq(etl_tlg_event_check(ev, &d, 1, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "1 bytes after the last field, at payload byte 10 of 11");
    d.size = 10;
    ck_assert_int_eq(etl_tlg_event_check(ev, &d, 1, err, sizeof err), ETL_OK);
    etl_provider_unregister(p);
}
END_TEST

/* ------------------------------------------------------------------ as Windows writes them */

/* The first event of perfview_primitive-types.etl (a TraceLogging event Windows wrote),
   written again with the same provider, name, fields and payload: the same record, byte for
   byte, but for the thread and process ids, the timestamp and the processor time. */
START_TEST(same_bytes_as_windows)
{
    static const etl_guid solar = { 0xd3dd3dd4, 0xaac2, 0x4e2a, { 0x8d, 0xd4, 0xa8, 0xfb, 0x61, 0xb7, 0x76, 0x15 } };
    static const etl_tlg_field f[] = {
        { "string_type", ETL_TLG_ANSI, 0, 0, 0 },     { "boolean_type", ETL_TLG_BOOL8, 0, 0, 0 },
        { "char_type", ETL_TLG_CHAR8, 0, 0, 0 },      { "int16_type", ETL_TLG_INT16, 0, 0, 0 },
        { "int32_type", ETL_TLG_INT32, 0, 0, 0 },     { "uint16_type", ETL_TLG_UINT16, 0, 0, 0 },
        { "uint32_type", ETL_TLG_UINT32, 0, 0, 0 },   { "int64_type", ETL_TLG_UINT64, 0, 0, 0 },
        { "uint64_type", ETL_TLG_UINT64, 0, 0, 0 },   { "guid_type", ETL_TLG_GUID, 0, 0, 0 },
        { "file_time_type", ETL_TLG_FILETIME, 0, 0, 0 }, { "system_time_type", ETL_TLG_SYSTEMTIME, 0, 0, 0 },
    };
    uint8_t want[512], got[512];
    uint32_t want_size = 0, got_size = 0;
    etl_reader *r = NULL;
    etl_event ev;
    etl_provider *p = NULL;
    etl_tlg_event *tev;
    etl_session_properties prop = { .logger_name = "solar_system", .buffer_size_kb = 64 };
    etl_session *s = NULL;
    etl_data d;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_primitive-types.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK && !(ev.kind == ETL_KIND_EVENT && etl_guid_equal(&ev.provider, &solar))) {
    }
    ck_assert_int_eq(rc, ETL_OK);
    ck_assert_uint_eq(ev.ext_count, 2);
    ck_assert_uint_le(ev.record_size, sizeof want);
    want_size = ev.record_size;
    memcpy(want, ev.record, want_size);
    etl_reader_close(r);

    test_dir_create();
    ck_assert_int_eq(etl_provider_register_named(&p, "solar_system", &solar, NULL), ETL_OK);
    tev = define(p, "PrimitiveTypesTest", NULL, f, sizeof f / sizeof f[0]);
    prop.log_file_name = test_dir_path("solar.etl");
    ck_assert_int_eq(etl_session_start(&s, &prop), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &solar, 0, 0, 0), ETL_OK);
    d = (etl_data){ want + want_size - ev.payload_len, ev.payload_len };
    ck_assert_int_eq(etl_tlg_event_write(tev, &d, 1, 0), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path("solar.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK && !(ev.kind == ETL_KIND_EVENT && etl_guid_equal(&ev.provider, &solar))) {
    }
    ck_assert_int_eq(rc, ETL_OK);
    got_size = ev.record_size;
    ck_assert_uint_le(got_size, sizeof got);
    memcpy(got, ev.record, got_size);
    etl_reader_close(r);

    ck_assert_uint_eq(got_size, want_size);
    ck_assert_msg(memcmp(got, want, 8) == 0, "Size, HeaderType, Flags, EventProperty differ");
    /* 0x08 ThreadId, 0x0C ProcessId, 0x10 TimeStamp, 0x38 ProcessorTime are this run's. */
    for (uint32_t i = 0x18; i < got_size; i++) {
        if (i >= 0x38 && i < 0x40) continue;
        ck_assert_msg(got[i] == want[i], "byte 0x%x: 0x%02x, Windows wrote 0x%02x", i, got[i], want[i]);
    }
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* The provider group trait rides in the traits after the name. */
START_TEST(provider_group_trait)
{
    static const etl_guid group = { 0x4f50731a, 0x89cf, 0x4782, { 0xb3, 0xe0, 0xdc, 0xe8, 0xc9, 0x04, 0x76, 0xba } };
    const etl_tlg_field f = { "V", ETL_TLG_UINT8, 0, 0, 0 };
    etl_provider *p = NULL;
    etl_tlg_event *ev;
    etl_session *s;
    etl_reader *r = NULL;
    etl_event e;
    etl_ext_item traits, meta;
    uint8_t v = 9;
    etl_data d = { &v, 1 };
    static const uint8_t want_meta[] = { 14, 0, 0, 'G', 'r', 'o', 'u', 'p', 'e', 'd', 0, 'V', 0, ETL_IN_UINT8 };
    uint8_t want_traits[2 + sizeof PROVIDER_NAME + 19];

    test_dir_create();
    ck_assert_int_eq(etl_provider_register_named(&p, PROVIDER_NAME, &tguid, &group), ETL_OK);
    ev = define(p, "Grouped", NULL, &f, 1);
    s = start("group.etl", 64);
    ck_assert_int_eq(etl_tlg_event_write(ev, &d, 1, 0), ETL_OK);
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("group.etl", NULL, NULL), 1);

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path("group.etl"), NULL), ETL_OK);
    while (etl_reader_next(r, &e) == ETL_OK && !etl_guid_equal(&e.provider, &tguid)) {
    }
    ck_assert(etl_guid_equal(&e.provider, &tguid));
    ck_assert_uint_eq(e.ext_count, 2);
    ck_assert_int_eq(etl_event_ext_item_get(&e, 0, &traits), ETL_OK);
    ck_assert_int_eq(etl_event_ext_item_get(&e, 1, &meta), ETL_OK);
    ck_assert_uint_eq(traits.type, ETL_EXT_PROV_TRAITS);
    ck_assert_uint_eq(meta.type, ETL_EXT_EVENT_SCHEMA_TL);
    want_traits[0] = sizeof want_traits;
    want_traits[1] = 0;
    memcpy(want_traits + 2, PROVIDER_NAME, sizeof PROVIDER_NAME);
    want_traits[2 + sizeof PROVIDER_NAME] = 19;
    want_traits[3 + sizeof PROVIDER_NAME] = 0;
    want_traits[4 + sizeof PROVIDER_NAME] = 1;
    memcpy(want_traits + 5 + sizeof PROVIDER_NAME, &group, 16);
    ck_assert_uint_eq(traits.size, sizeof want_traits);
    ck_assert(memcmp(traits.data, want_traits, sizeof want_traits) == 0);
    ck_assert_uint_eq(meta.size, sizeof want_meta);
    ck_assert(memcmp(meta.data, want_meta, sizeof want_meta) == 0);
    etl_reader_close(r);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* A stack (and an LBR record) with a TraceLogging event: the stack item first, then the
   traits and the metadata; every item linked to the next, and the fields still decode. */
static void check_stacked(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    etl_ext_item it;

    (void)arg;
    (void)k;
    ck_assert_uint_eq(ev->ext_count, 3);
    ck_assert_int_eq(etl_event_ext_item_get(ev, 0, &it), ETL_OK);
    ck_assert_uint_eq(it.type, ETL_EXT_STACK_TRACE64);
    ck_assert_uint_gt(it.size, 8);
    ck_assert_int_eq(etl_event_ext_item_get(ev, 1, &it), ETL_OK);
    ck_assert_uint_eq(it.type, ETL_EXT_PROV_TRAITS);
    ck_assert_int_eq(etl_event_ext_item_get(ev, 2, &it), ETL_OK);
    ck_assert_uint_eq(it.type, ETL_EXT_EVENT_SCHEMA_TL);
    ck_assert_str_eq(json_of(de), "{\"Name\":\"stacked\"}");
}

START_TEST(with_stack_and_lbr)
{
    const etl_tlg_field f = { "Name", ETL_TLG_UTF8, 0, 0, 0 };
    etl_provider *p;
    etl_tlg_event *ev;
    etl_session *s;
    etl_data d = { "stacked", 8 };
    etl_lbr_entry lbr[2] = { { 0x1000, 0x2000, 0 }, { 0x3000, 0x4000, 0 } };
    etl_reader *r = NULL;
    etl_event e;
    long lbrs = 0, events = 0;

    test_dir_create();
    p = provider();
    ev = define(p, "Stacked", NULL, &f, 1);
    s = start("stack.etl", 64);
    ck_assert_int_eq(etl_tlg_event_write(ev, &d, 1, ETL_WRITE_STACK), ETL_OK);
    ck_assert_int_eq(etl_tlg_event_write_lbr(ev, &d, 1, ETL_WRITE_STACK, 0x2, lbr, 2), ETL_OK);
    ck_assert_uint_eq(stop(s), 0);
    ck_assert_uint_eq(read_back("stack.etl", check_stacked, NULL), 2);
    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path("stack.etl"), NULL), ETL_OK);
    while (etl_reader_next(r, &e) == ETL_OK) {
        if (e.kind == ETL_KIND_PERFINFO && e.hook_id == ETL_HOOK_LBR_SAMPLE) lbrs++;
        if (e.kind == ETL_KIND_EVENT && etl_guid_equal(&e.provider, &tguid)) events++;
    }
    etl_reader_close(r);
    ck_assert_int_eq(events, 2);
    ck_assert_int_eq(lbrs, 1);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* ------------------------------------------------------------------ threads */

struct writer_arg {
    const etl_tlg_event *ev;
    uint32_t index;
    unsigned n;
};

static void *tl_writer(void *arg)
{
    struct writer_arg *w = arg;
    uint8_t b[64];

    for (uint32_t i = 0; i < w->n; i++) {
        int len;
        memcpy(b, &w->index, 4);
        memcpy(b + 4, &i, 4);
        len = snprintf((char *)b + 8, sizeof b - 8, "writer %u event %u", w->index, i);
        etl_data d = { b, (uint32_t)(8 + len + 1) };
        if (etl_tlg_event_write(w->ev, &d, 1, 0) != ETL_OK) return "write failed";
    }
    return NULL;
}

struct seen {
    unsigned next[4];
    unsigned bad;
};

static void check_threads(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    struct seen *s = arg;
    uint64_t w, i;
    etl_string str;
    char want[64];

    (void)k;
    (void)ev;
    ck_assert_uint_eq(de->field_count, 3);
    ck_assert_int_eq(etl_field_uint(&de->fields[0], &w), ETL_OK);
    ck_assert_int_eq(etl_field_uint(&de->fields[1], &i), ETL_OK);
    ck_assert_uint_lt(w, 4);
    ck_assert_int_eq(etl_field_string(&de->fields[2], &str), ETL_OK);
    snprintf(want, sizeof want, "writer %u event %u", (unsigned)w, (unsigned)i);
    if (i != s->next[w] || str.size != strlen(want) || memcmp(str.data, want, str.size) != 0) s->bad++;
    s->next[w] = (unsigned)i + 1;
}

/* Four threads write one TraceLogging event each as fast as they can: every event in the
   file, each thread's in order, every field as written. */
START_TEST(threads_write_one_event)
{
    const etl_tlg_field f[] = { { "Writer", ETL_TLG_UINT32, 0, 0, 0 }, { "Seq", ETL_TLG_UINT32, 0, 0, 0 },
                                { "Text", ETL_TLG_UTF8, 0, 0, 0 } };
    etl_provider *p;
    etl_tlg_event *ev;
    etl_session *s;
    pthread_t t[4];
    struct writer_arg w[4];
    struct seen seen;
    etl_session_properties prop = { .logger_name = "TlThreads", .buffer_size_kb = 64, .minimum_buffers = 64 };

    test_dir_create();
    p = provider();
    ev = define(p, "Threaded", NULL, f, 3);
    prop.log_file_name = test_dir_path("threads.etl");
    s = NULL;
    ck_assert_int_eq(etl_session_start(&s, &prop), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &tguid, 0, 0, 0), ETL_OK);
    for (uint32_t i = 0; i < 4; i++) {
        w[i] = (struct writer_arg){ ev, i, 5000 };
        ck_assert_int_eq(pthread_create(&t[i], NULL, tl_writer, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *why = NULL;
        pthread_join(t[i], &why);
        ck_assert_msg(why == NULL, "%s", (const char *)why);
    }
    ck_assert_uint_eq(stop(s), 0);
    memset(&seen, 0, sizeof seen);
    ck_assert_uint_eq(read_back("threads.etl", check_threads, &seen), 20000);
    ck_assert_uint_eq(seen.bad, 0);
    for (int i = 0; i < 4; i++) ck_assert_uint_eq(seen.next[i], 5000);
    etl_provider_unregister(p);
    test_dir_remove();
}
END_TEST

/* ------------------------------------------------------------------ etldemo */

struct demo_seen {
    unsigned size;           /* etldemo's --size */
    unsigned events, bad;
    char why[256];
};

/* etldemo's events: Info, Verbose, Warning, Error by sequence number modulo 4, with their ids,
   levels and keywords, and the fields Sequence, Thread and (from 9 bytes on) Text. */
static void check_demo(unsigned k, const etl_event *ev, const etl_decoded_event *de, void *arg)
{
    static const char *const names[4] = { "etldemo/Info", "etldemo/Verbose", "etldemo/Warning", "etldemo/Error" };
    static const uint8_t levels[4] = { 4, 5, 3, 2 };
    struct demo_seen *s = arg;
    uint64_t seq, thread;
    etl_string text;

    (void)k;
    s->events++;
    if (de->field_count != (s->size > 8 ? 3u : 2u) || strcmp(de->fields[0].name, "Sequence") != 0 ||
        strcmp(de->fields[1].name, "Thread") != 0 || etl_field_uint(&de->fields[0], &seq) != ETL_OK ||
        etl_field_uint(&de->fields[1], &thread) != ETL_OK) {
        s->bad++;
        snprintf(s->why, sizeof s->why, "event %u: %s", k, json_of(de));
        return;
    }
    if (strcmp(de->event_name, names[seq % 4]) != 0 || ev->id != seq % 4 + 1 || ev->level != levels[seq % 4] ||
        ev->keywords != 1ull << (seq % 4) || thread > 1) {
        s->bad++;
        snprintf(s->why, sizeof s->why, "event %u: %s id %u level %u", k, de->event_name, ev->id, ev->level);
        return;
    }
    if (s->size > 8) {
        char want[128];
        for (unsigned i = 0; i < s->size - 9; i++) want[i] = "etldemo "[i % 8];
        want[s->size - 9] = '\0';
        if (strcmp(de->fields[2].name, "Text") != 0 || de->fields[2].out_type != ETL_OUT_UTF8 ||
            etl_field_string(&de->fields[2], &text) != ETL_OK || text.size != s->size - 9 ||
            memcmp(text.data, want, text.size) != 0) {
            s->bad++;
            snprintf(s->why, sizeof s->why, "event %u: %s", k, json_of(de));
        }
    }
}

/* etldemo, run as a provider process beside a shared session of this test, writes TraceLogging
   events that the decoder reads with no manifest. */
static void demo_run(unsigned size)
{
    static const etl_guid demo = { 0x458d4a63, 0x7cc9, 0x5239, { 0x62, 0xc4, 0xf8, 0xae, 0xbb, 0xe5, 0x97, 0xac } };
    const char *etldemo = getenv("ETLDEMO");
    etl_session_properties prop = { .logger_name = "TlDemo", .buffer_size_kb = 64, .engine_flags = ETL_ENGINE_SHARED };
    etl_session_name *name = NULL;
    etl_session *s = NULL;
    etl_decoder_options o = { .flags = ETL_DECODER_NO_DEFAULTS };
    etl_decoder *dec = NULL;
    etl_reader *r = NULL;
    etl_event ev;
    struct demo_seen seen = { size, 0, 0, "" };
    char err[512], sz[16];
    int status;
    pid_t child;

    ck_assert_msg(etldemo != NULL, "ETLDEMO must name the etldemo binary");
    prop.log_file_name = test_dir_path("demo.etl");
    ck_assert_msg(etl_session_name_claim(&name, "TlDemo", NULL, err, sizeof err) == ETL_OK, "claim: %s", err);
    ck_assert_msg(etl_session_start(&s, &prop) == ETL_OK, "start: %s", etl_session_error(s));
    ck_assert_int_eq(etl_session_enable_provider(s, &demo, 0, 0, 0), ETL_OK);
    snprintf(sz, sizeof sz, "%u", size);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execl(etldemo, "etldemo", "--threads", "2", "--events", "40", "--size", sz, (char *)NULL);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "etldemo: status %d", status);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    etl_session_name_release(name);

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path("demo.etl"), NULL), ETL_OK);
    ck_assert_int_eq(etl_decoder_open(&dec, &o), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_decoded_event de;
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &demo)) continue;
        ck_assert_msg(etl_decoder_decode(dec, &ev, &de) == 1, "%s", etl_decoder_error(dec));
        ck_assert_int_eq(de.source, ETL_SCHEMA_TRACELOGGING);
        ck_assert_str_eq(de.provider_name, "etldemo");
        ck_assert_uint_eq(ev.payload_len, size);
        check_demo(seen.events, &ev, &de, &seen);
    }
    etl_decoder_close(dec);
    etl_reader_close(r);
    ck_assert_uint_eq(seen.events, 80);
    ck_assert_msg(seen.bad == 0, "%u events not as etldemo writes them; %s", seen.bad, seen.why);
}

START_TEST(etldemo_writes_tracelogging)
{
    char run[512];

    test_dir_create();
    snprintf(run, sizeof run, "%s", test_dir_path("run"));
    ck_assert_int_eq(mkdir(run, 0700), 0);
    setenv("ETL_RUNTIME_DIR", run, 1);
    demo_run(8);
    demo_run(30);
    test_dir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tlwrite");
    TCase *tc = tcase_create("tlwrite");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_type_reads_back);
    tcase_add_test(tc, descriptor_and_channel);
    tcase_add_test(tc, arrays_and_structs_read_back);
    tcase_add_test(tc, largest_event_and_too_big);
    tcase_add_test(tc, struct_limits);
    tcase_add_test(tc, refused_definitions);
    tcase_add_test(tc, payload_check);
    tcase_add_test(tc, same_bytes_as_windows);
    tcase_add_test(tc, provider_group_trait);
    tcase_add_test(tc, with_stack_and_lbr);
    tcase_add_test(tc, threads_write_one_event);
    tcase_add_test(tc, etldemo_writes_tracelogging);
    suite_add_tcase(s, tc);
    return check_run(s);
}
