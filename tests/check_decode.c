/* SPDX-License-Identifier: MIT */
/* Unit tests of the field decoder's core: the bounded walk, values as text and JSON, TraceLogging metadata, the decoder's lookups. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "reader/reader.h"
#include "testutil.h"
#include "baseline.h"

/* ---------------------------------------------------------------- building schemas and events */

static const etl_guid provider_a = { 0x11111111, 0x2222, 0x3333, { 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 } };

static etl_schema_field fld(const char *name, unsigned in, unsigned out)
{
    etl_schema_field f;

    memset(&f, 0, sizeof f);
    f.name = name;
    f.in_type = (uint16_t)in;
    f.out_type = (uint16_t)out;
    return f;
}

static etl_schema_event schema(etl_schema_field *fields, unsigned n)
{
    etl_schema_event s;
    char err[200];

    memset(&s, 0, sizeof s);
    s.provider = provider_a;
    s.event_name = "A/T/O";
    s.fields = fields;
    s.field_count = (uint16_t)n;
    ck_assert_msg(etl_schema_event_prepare(&s, err, sizeof err) == ETL_OK, "%s", err);
    return s;
}

/* Walks payload with s; returns the status. */
static int walk(const etl_schema_event *s, const void *payload, uint32_t len, etl_fields_buf *b, etl_fields_fault *fault)
{
    return etl_fields_decode(s, payload, len, 8, b, fault);
}

static const char *text_of(const etl_field *fields, uint32_t n)
{
    static char out[4096];
    etl_decoded_event e;

    memset(&e, 0, sizeof e);
    e.fields = fields;
    e.field_count = n;
    etl_decoded_format_text(&e, out, sizeof out);
    return out;
}

static const char *json_of(const etl_field *fields, uint32_t n)
{
    static char out[4096];
    etl_decoded_event e;

    memset(&e, 0, sizeof e);
    e.fields = fields;
    e.field_count = n;
    etl_decoded_format_json(&e, out, sizeof out);
    return out;
}

/* ---------------------------------------------------------------- the walk */

START_TEST(integers_every_width)
{
    etl_schema_field f[] = { fld("a", ETL_IN_INT8, 0), fld("b", ETL_IN_UINT8, 0), fld("c", ETL_IN_INT16, 0),
                             fld("d", ETL_IN_UINT16, 0), fld("e", ETL_IN_INT32, 0), fld("f", ETL_IN_UINT32, 0),
                             fld("g", ETL_IN_INT64, 0), fld("h", ETL_IN_UINT64, 0) };
    etl_schema_event s = schema(f, 8);
    uint8_t p[] = { 0xFF, 0xFF, 0xFE, 0xFF, 0xFE, 0xFF, 0xFD, 0xFF, 0xFF, 0xFF, 0xFD, 0xFF, 0xFF, 0xFF,
                    0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    int64_t i;
    uint64_t u;

    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_OK);
    ck_assert_uint_eq(b.count, 8);
    ck_assert_uint_eq(b.used, sizeof p);
    ck_assert_str_eq(text_of(b.fields, b.count),
                     "a=-1 b=255 c=-2 d=65534 e=-3 f=4294967293 g=-4 h=18446744073709551612");
    ck_assert_str_eq(json_of(b.fields, b.count),
                     "{\"a\":-1,\"b\":255,\"c\":-2,\"d\":65534,\"e\":-3,\"f\":4294967293,\"g\":-4,\"h\":18446744073709551612}");
    ck_assert_int_eq(etl_field_int(&b.fields[6], &i), ETL_OK);
    ck_assert_int_eq(i, -4);
    ck_assert_int_eq(etl_field_uint(&b.fields[3], &u), ETL_OK);
    ck_assert_uint_eq(u, 65534);
    ck_assert_uint_eq(b.fields[4].offset, 6);
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(strings_terminated_counted_and_sized)
{
    etl_schema_field f[] = { fld("u", ETL_IN_UNICODE_STRING, 0), fld("a", ETL_IN_ANSI_STRING, 0),
                             fld("n", ETL_IN_UINT16, 0), fld("sized", ETL_IN_UNICODE_STRING, 0),
                             fld("c", ETL_IN_COUNTED_STRING, 0), fld("ca", ETL_IN_COUNTED_ANSI_STRING, 0),
                             fld("last", ETL_IN_ANSI_STRING, 0) };
    /* "hé" zero-terminated UTF-16; "x" ANSI; n=2; 2 characters "ok"; counted 4 bytes "AB";
       counted ANSI 3 "a\"b"; a last string that runs to the end without its terminator. */
    uint8_t p[] = { 'h', 0, 0xE9, 0, 0, 0, 'x', 0, 2, 0, 'o', 0, 'k', 0, 4, 0, 'A', 0, 'B', 0, 3, 0, 'a', '"', 'b',
                    'e', 'n', 'd' };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    etl_schema_event s;
    etl_string str;

    f[3].length_kind = ETL_LEN_FIELD;
    f[3].length_ref = 2;
    s = schema(f, 7);
    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_OK);
    ck_assert_uint_eq(b.count, 7);
    ck_assert_str_eq(text_of(b.fields, b.count), "u=\"h\xc3\xa9\" a=\"x\" n=2 sized=\"ok\" c=\"AB\" ca=\"a\\\"b\" last=\"end\"");
    ck_assert_str_eq(json_of(b.fields, b.count),
                     "{\"u\":\"h\xc3\xa9\",\"a\":\"x\",\"n\":2,\"sized\":\"ok\",\"c\":\"AB\",\"ca\":\"a\\\"b\",\"last\":\"end\"}");
    ck_assert_int_eq(etl_field_string(&b.fields[0], &str), ETL_OK);
    ck_assert_uint_eq(str.size, 4);
    ck_assert_uint_eq(str.utf16, 1);
    ck_assert_uint_eq(b.fields[4].offset, 14); /* the count's place */
    ck_assert_uint_eq(b.fields[4].size, 4);
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(counted_arrays_and_structs)
{
    /* n, then n structs {id: UInt32, name: AnsiString}, then a packed array of 3 UInt16, then
       Int32s to the end. */
    etl_schema_field f[] = { fld("n", ETL_IN_UINT8, 0), fld("items", ETL_IN_STRUCT, 0), fld("id", ETL_IN_UINT32, 0),
                             fld("name", ETL_IN_ANSI_STRING, 0), fld("three", ETL_IN_UINT16, 0),
                             fld("rest", ETL_IN_INT32, 0) };
    uint8_t p[] = { 2, 7, 0, 0, 0, 'a', 0, 9, 0, 0, 0, 'b', 'c', 0, 1, 0, 2, 0, 3, 0, 0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0 };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    etl_schema_event s;
    etl_field e;

    f[1].members = 2;
    f[1].count_kind = ETL_COUNT_FIELD;
    f[1].count_ref = 0;
    f[4].count_kind = ETL_COUNT_CONST;
    f[4].count = 3;
    f[5].count_kind = ETL_COUNT_REST;
    s = schema(f, 6);
    ck_assert_uint_eq(f[1].span, 3);
    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_OK);
    ck_assert_str_eq(text_of(b.fields, b.count), "n=2 items=[{id=7 name=\"a\"},{id=9 name=\"bc\"}] three=[1,2,3] rest=[-1,5]");
    ck_assert_str_eq(json_of(b.fields, b.count),
                     "{\"n\":2,\"items\":[{\"id\":7,\"name\":\"a\"},{\"id\":9,\"name\":\"bc\"}],\"three\":[1,2,3],\"rest\":[-1,5]}");
    /* the tree: n, items (array), struct, id, name, struct, id, name, three, rest */
    ck_assert_uint_eq(b.count, 10);
    ck_assert_uint_eq(b.fields[1].kind, ETL_FIELD_ARRAY);
    ck_assert_uint_eq(b.fields[1].count, 2);
    ck_assert_uint_eq(b.fields[1].end, 8);
    ck_assert_uint_eq(b.fields[2].kind, ETL_FIELD_STRUCT);
    ck_assert_uint_eq(b.fields[2].depth, 1);
    ck_assert_uint_eq(b.fields[3].depth, 2);
    ck_assert_uint_eq(b.fields[8].element_size, 2);
    ck_assert_int_eq(etl_field_element(&b.fields[8], 2, &e), ETL_OK);
    ck_assert_str_eq(text_of(&e, 1), "three=3");
    ck_assert_int_eq(etl_field_element(&b.fields[8], 3, &e), ETL_FAILED);
    /* by name: the top level only (id and name are members, not found) */
    {
        etl_decoded_event de = { 0 };
        de.fields = b.fields;
        de.field_count = b.count;
        ck_assert_ptr_eq(etl_decoded_field_find(&de, "n"), &b.fields[0]);
        ck_assert_ptr_eq(etl_decoded_field_find(&de, "items"), &b.fields[1]);
        ck_assert_ptr_eq(etl_decoded_field_find(&de, "rest"), &b.fields[9]);
        ck_assert_ptr_null(etl_decoded_field_find(&de, "id"));
        ck_assert_ptr_null(etl_decoded_field_find(&de, "name"));
        ck_assert_ptr_null(etl_decoded_field_find(&de, "Rest"));
    }
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(truncated_payload_fails_at_its_field)
{
    etl_schema_field f[] = { fld("a", ETL_IN_UINT32, 0), fld("b", ETL_IN_UINT64, 0), fld("c", ETL_IN_UINT8, 0) };
    etl_schema_event s = schema(f, 3);
    uint8_t p[16] = { 1, 0, 0, 0, 2 };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;

    for (uint32_t len = 0; len < 13; len++) {
        int rc = walk(&s, p, len, &b, &fault);
        ck_assert_int_eq(rc, ETL_FAILED);
        ck_assert_str_eq(fault.field, len < 4 ? "a" : len < 12 ? "b" : "c");
        ck_assert_uint_eq(fault.offset, len < 4 ? 0 : len < 12 ? 4 : 12);
        ck_assert_uint_eq(b.count, len < 4 ? 0 : len < 12 ? 1 : 2);
    }
    ck_assert_int_eq(walk(&s, p, 13, &b, &fault), ETL_OK);
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(hostile_counts_and_lengths_are_bounded)
{
    /* A count of 4 billion zero-length strings, and a length past the end: each fails cleanly. */
    etl_schema_field f[] = { fld("n", ETL_IN_UINT32, 0), fld("s", ETL_IN_ANSI_STRING, 0) };
    etl_schema_field g[] = { fld("n", ETL_IN_UINT32, 0), fld("s", ETL_IN_UNICODE_STRING, 0) };
    etl_schema_field h[] = { fld("n", ETL_IN_UINT32, 0), fld("v", ETL_IN_UINT64, 0) };
    uint8_t p[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0 };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    etl_schema_event s;

    f[1].length_kind = ETL_LEN_CONST;
    f[1].length = 0;
    f[1].count_kind = ETL_COUNT_FIELD;
    f[1].count_ref = 0;
    s = schema(f, 2);
    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_FAILED);
    ck_assert_str_eq(fault.field, "s");
    g[1].length_kind = ETL_LEN_FIELD;
    g[1].length_ref = 0;
    s = schema(g, 2);
    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_FAILED);
    ck_assert_str_eq(fault.field, "s");
    ck_assert_uint_eq(fault.offset, 4);
    h[1].count_kind = ETL_COUNT_FIELD;
    h[1].count_ref = 0;
    s = schema(h, 2);
    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_FAILED);
    ck_assert_str_eq(fault.field, "v");
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(badly_made_schemas_are_refused)
{
    etl_schema_field f[] = { fld("s", ETL_IN_STRUCT, 0), fld("a", ETL_IN_UINT8, 0) };
    etl_schema_field g[] = { fld("a", ETL_IN_UINT8, 0), fld("b", ETL_IN_UINT8, 0) };
    etl_schema_event s;
    char err[200];

    memset(&s, 0, sizeof s);
    s.event_name = "X";
    f[0].members = 2; /* past the end */
    s.fields = f;
    s.field_count = 2;
    ck_assert_int_eq(etl_schema_event_prepare(&s, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(err, "past"));
    g[0].count_kind = ETL_COUNT_FIELD; /* counted by itself */
    g[0].count_ref = 0;
    s.fields = g;
    ck_assert_int_eq(etl_schema_event_prepare(&s, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(err, "does not come before"));
}
END_TEST

/* ---------------------------------------------------------------- values */

/* One value of in/out type from bytes, as text and JSON. */
static void check_value(unsigned in, unsigned out, const void *bytes, uint32_t n, const char *text, const char *json)
{
    etl_schema_field f[] = { fld("v", in, out) };
    etl_schema_event s = schema(f, 1);
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    char expect[512];

    ck_assert_int_eq(walk(&s, bytes, n, &b, &fault), ETL_OK);
    snprintf(expect, sizeof expect, "v=%s", text);
    ck_assert_str_eq(text_of(b.fields, b.count), expect);
    snprintf(expect, sizeof expect, "{\"v\":%s}", json);
    ck_assert_str_eq(json_of(b.fields, b.count), expect);
    etl_fields_buf_free(&b);
}

START_TEST(values_as_windows_shows_them)
{
    uint8_t guid[16] = { 0xc4, 0x14, 0xd6, 0x0a, 0xf4, 0x0e, 0x25, 0x42, 0x80, 0x13, 0xf4, 0x4f, 0x37, 0xcb, 0x03, 0x97 };
    uint8_t ft[8] = { 0x70, 0x10, 0xfa, 0x4d, 0x8b, 0xa5, 0xd7, 0x01 };
    uint8_t st[16] = { 0xe5, 0x07, 0x09, 0x00, 0x04, 0x00, 0x09, 0x00, 0x0e, 0x00, 0x3b, 0x00, 0x23, 0x00, 0x1f, 0x03 };
    uint8_t sid[12] = { 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
    uint8_t wbem[28] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
    uint8_t port[2] = { 0x1F, 0x90 }, ip4[4] = { 10, 0, 0, 1 };
    uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1 };
    uint8_t ip6b[16] = { 0 }, mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2 };
    uint8_t sa4[16] = { 2, 0, 0x01, 0xBB, 127, 0, 0, 1 };
    uint8_t u32[4] = { 0x05, 0, 0, 0xC0 }, one[4] = { 1, 0, 0, 0 }, ptr[8] = { 0x28, 0, 0, 0xf1, 0xb0, 1, 0, 0 };
    uint8_t flt[4] = { 0, 0, 0xc0, 0x3f }, nan[8] = { 0, 0, 0, 0, 0, 0, 0xf8, 0x7f }, bin[3] = { 0xde, 0xad, 0x01 };
    uint8_t counted_bin[5] = { 3, 0, 0xde, 0xad, 0x01 };

    ip6b[15] = 1;
    check_value(ETL_IN_GUID, 0, guid, 16, "\"0ad614c4-0ef4-4225-8013-f44f37cb0397\"", "\"0ad614c4-0ef4-4225-8013-f44f37cb0397\"");
    check_value(ETL_IN_FILETIME, 0, ft, 8, "\"2021-09-09T14:59:35.7990000Z\"", "\"2021-09-09T14:59:35.7990000Z\"");
    check_value(ETL_IN_SYSTEMTIME, 0, st, 16, "\"2021-09-09T14:59:35.799Z\"", "\"2021-09-09T14:59:35.799Z\"");
    check_value(ETL_IN_SID, 0, sid, 12, "\"S-1-5-18\"", "\"S-1-5-18\"");
    check_value(ETL_IN_WBEM_SID, 0, wbem, 28, "\"S-1-5-18\"", "\"S-1-5-18\"");
    check_value(ETL_IN_UINT16, ETL_OUT_PORT, port, 2, "8080", "8080");
    check_value(ETL_IN_UINT32, ETL_OUT_IPV4, ip4, 4, "\"10.0.0.1\"", "\"10.0.0.1\"");
    check_value(ETL_IN_BINARY, ETL_OUT_IPV6, ip6, 16, "\"2001:db8::1:0:0:1\"", "\"2001:db8::1:0:0:1\"");
    check_value(ETL_IN_BINARY, ETL_OUT_IPV6, ip6b, 16, "\"::1\"", "\"::1\"");
    check_value(ETL_IN_BINARY, ETL_OUT_IPV6, mapped, 16, "\"::ffff:192.168.1.2\"", "\"::ffff:192.168.1.2\"");
    check_value(ETL_IN_BINARY, ETL_OUT_SOCKET_ADDRESS, sa4, 16, "\"127.0.0.1:443\"", "\"127.0.0.1:443\"");
    check_value(ETL_IN_UINT32, ETL_OUT_NTSTATUS, u32, 4, "0xc0000005", "\"0xc0000005\"");
    check_value(ETL_IN_HEXINT32, 0, u32, 4, "0xc0000005", "\"0xc0000005\"");
    check_value(ETL_IN_BOOLEAN, 0, one, 4, "true", "true");
    check_value(ETL_IN_UINT8, ETL_OUT_BOOLEAN, one, 1, "true", "true");
    check_value(ETL_IN_POINTER, 0, ptr, 8, "0x1b0f1000028", "\"0x1b0f1000028\"");
    check_value(ETL_IN_FLOAT, 0, flt, 4, "1.5", "1.5");
    check_value(ETL_IN_DOUBLE, 0, nan, 8, "nan", "null");
    check_value(ETL_IN_COUNTED_BINARY, 0, counted_bin, 5, "\"dead01\"", "\"dead01\"");
    (void)bin;
}
END_TEST

START_TEST(mapped_values)
{
    static const struct etl_map_entry ve[] = { { 0, "Small" }, { 1, "Large" } };
    static const struct etl_map_entry be[] = { { 1, "Read" }, { 2, "Write" }, { 4, "Exec" } };
    etl_map vm = { "Kind", 0, 2, ve }, bm = { "Access", 1, 3, be };
    etl_schema_field f[] = { fld("k", ETL_IN_UINT32, 0), fld("a", ETL_IN_UINT32, 0) };
    etl_schema_event s;
    uint8_t named[8] = { 1, 0, 0, 0, 3, 0, 0, 0 }, unnamed[8] = { 7, 0, 0, 0, 0x43, 0, 0, 0 };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    char out[64];
    int exact;

    f[0].map = &vm;
    f[1].map = &bm;
    s = schema(f, 2);
    ck_assert_int_eq(walk(&s, named, 8, &b, &fault), ETL_OK);
    ck_assert_str_eq(text_of(b.fields, b.count), "k=\"Large\" a=\"Read|Write\"");
    ck_assert_str_eq(json_of(b.fields, b.count), "{\"k\":\"Large\",\"a\":\"Read|Write\"}");
    ck_assert_int_eq(walk(&s, unnamed, 8, &b, &fault), ETL_OK);
    ck_assert_str_eq(json_of(b.fields, b.count),
                     "{\"k\":{\"name\":\"7\",\"value\":7},\"a\":{\"name\":\"Read|Write|0x40\",\"value\":67}}");
    ck_assert_uint_eq(etl_map_format(&bm, 5, out, sizeof out, &exact), 9);
    ck_assert_str_eq(out, "Read|Exec");
    ck_assert_int_eq(exact, 1);
    ck_assert_str_eq(etl_map_name(&bm), "Access");
    ck_assert_int_eq(etl_map_is_bitmap(&bm), 1);
    etl_fields_buf_free(&b);
}
END_TEST

START_TEST(text_escapes_and_sizes)
{
    etl_schema_field f[] = { fld("s", ETL_IN_ANSI_STRING, 0) };
    etl_schema_event s = schema(f, 1);
    uint8_t p[] = { 'a', '\n', 1, '\\', 0 };
    etl_fields_buf b = { 0 };
    etl_fields_fault fault;
    etl_decoded_event e;
    char small[6];

    ck_assert_int_eq(walk(&s, p, sizeof p, &b, &fault), ETL_OK);
    ck_assert_str_eq(text_of(b.fields, b.count), "s=\"a\\n\\x01\\\"");
    ck_assert_str_eq(json_of(b.fields, b.count), "{\"s\":\"a\\n\\u0001\\\\\"}");
    memset(&e, 0, sizeof e);
    e.fields = b.fields;
    e.field_count = b.count;
    /* as snprintf: the whole length back, the text cut and terminated */
    ck_assert_uint_eq(etl_decoded_format_text(&e, small, sizeof small), 12);
    ck_assert_str_eq(small, "s=\"a\\");
    etl_fields_buf_free(&b);
}
END_TEST

/* ---------------------------------------------------------------- TraceLogging */

/* An EVENT_HEADER event with a TraceLogging schema item (and a traits item) in ext. */
struct tl_event {
    uint8_t ext[512];
    etl_event ev;
};

static size_t put_item(uint8_t *p, unsigned type, const void *data, uint16_t n, int more)
{
    uint16_t total = (uint16_t)(8 + ((n + 7u) & ~7u));

    memset(p, 0, total);
    p[0] = (uint8_t)total;
    p[1] = (uint8_t)(total >> 8);
    p[2] = (uint8_t)type;
    p[4] = (uint8_t)more;
    p[6] = (uint8_t)n;
    p[7] = (uint8_t)(n >> 8);
    memcpy(p + 8, data, n);
    return total;
}

static void make_tl(struct tl_event *t, const char *provider, const void *meta, uint16_t meta_len, const void *payload,
                    uint32_t len)
{
    uint8_t traits[64];
    size_t n = strlen(provider), o;

    memset(t, 0, sizeof *t);
    traits[0] = (uint8_t)(n + 3);
    traits[1] = 0;
    memcpy(traits + 2, provider, n + 1);
    o = put_item(t->ext, ETL_EXT_PROV_TRAITS, traits, (uint16_t)(n + 3), 1);
    o += put_item(t->ext + o, ETL_EXT_EVENT_SCHEMA_TL, meta, meta_len, 0);
    t->ev.kind = ETL_KIND_EVENT;
    t->ev.provider = provider_a;
    t->ev.pointer_size = 8;
    t->ev.channel = ETL_TLG_CHANNEL;
    t->ev.ext = t->ext;
    t->ev.ext_len = (uint32_t)o;
    t->ev.ext_count = 2;
    t->ev.payload = payload;
    t->ev.payload_len = len;
}

START_TEST(tracelogging_metadata)
{
    /* Event "Ev" (one tag byte with a chain), fields: "s" CStr8, "pt" struct of 2 {x Int32,
       y Int32 out HEX with a field tag}, "v" UInt16 vcount, "c" UInt8 ccount 2, "b" Binary. */
    static const uint8_t meta[] = {
        0, 0, 0x80, 0x01, 'E', 'v', 0,
        's', 0, 0x02,
        'p', 't', 0, 0x80 | 24, 2,
        'x', 0, 0x07,
        'y', 0, 0x80 | 0x07, 0x80 | ETL_TLG_OUT_HEX, 0x81, 0x01,
        'v', 0, 0x40 | 0x06,
        'c', 0, 0x20 | 0x04, 2, 0,
        'b', 0, 0x0E
    };
    static const uint8_t payload[] = { 'h', 'i', 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 2, 0, 7, 0, 8, 0, 9, 9, 2, 0, 0xab, 0xcd };
    uint8_t m[sizeof meta];
    struct tl_event t;
    etl_decoder *d;
    etl_decoded_event e;
    char out[512];

    memcpy(m, meta, sizeof m);
    m[0] = sizeof meta;
    make_tl(&t, "MyProvider", m, sizeof m, payload, sizeof payload);
    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    ck_assert_int_eq(etl_decoder_decode(d, &t.ev, &e), 1);
    ck_assert_int_eq(e.source, ETL_SCHEMA_TRACELOGGING);
    ck_assert_str_eq(e.event_name, "MyProvider/Ev");
    ck_assert_str_eq(e.provider_name, "MyProvider");
    etl_decoded_format_json(&e, out, sizeof out);
    ck_assert_str_eq(out, "{\"s\":\"hi\",\"pt\":{\"x\":1,\"y\":\"0xff\"},\"v\":[7,8],\"c\":[9,9],\"b\":\"abcd\"}");
    ck_assert_uint_eq(e.payload_used, sizeof payload);
    ck_assert_str_eq(etl_decoder_provider_name(d, &provider_a), "MyProvider");
    etl_decoder_close(d);
}
END_TEST

START_TEST(tracelogging_cached_by_metadata_not_by_id)
{
    /* Two events of one provider with the same id and version, different schemas. */
    static const uint8_t meta1[] = { 0, 0, 0, 'E', 0, 'a', 0, 0x08 };
    static const uint8_t meta2[] = { 0, 0, 0, 'E', 0, 'a', 0, 0x06, 'b', 0, 0x06 };
    static const uint8_t payload[] = { 1, 0, 2, 0 };
    uint8_t m1[sizeof meta1], m2[sizeof meta2];
    struct tl_event t1, t2;
    etl_decoder *d;
    etl_decoded_event e;
    char out[128];

    memcpy(m1, meta1, sizeof m1);
    memcpy(m2, meta2, sizeof m2);
    m1[0] = sizeof m1;
    m2[0] = sizeof m2;
    make_tl(&t1, "P", m1, sizeof m1, payload, 4);
    make_tl(&t2, "P", m2, sizeof m2, payload, 4);
    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(etl_decoder_decode(d, &t1.ev, &e), 1);
        etl_decoded_format_json(&e, out, sizeof out);
        ck_assert_str_eq(out, "{\"a\":131073}");
        ck_assert_int_eq(etl_decoder_decode(d, &t2.ev, &e), 1);
        etl_decoded_format_json(&e, out, sizeof out);
        ck_assert_str_eq(out, "{\"a\":1,\"b\":2}");
    }
    etl_decoder_close(d);
}
END_TEST

START_TEST(tracelogging_malformed_metadata)
{
    /* Each cut of a good metadata blob: no crash, a clear failure, and the next event decodes. */
    static const uint8_t meta[] = { 0, 0, 0, 'E', 'v', 0, 'x', 0, 0x80 | 0x07, 0x80 | 4, 0x81, 0x02, 'y', 0, 0x20 | 4, 3, 0 };
    static const uint8_t payload[] = { 1, 0, 0, 0, 1, 2, 3 };
    uint8_t m[sizeof meta];
    struct tl_event t;
    etl_decoder *d;
    etl_decoded_event e;

    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    for (uint16_t n = 0; n < sizeof meta; n++) {
        memcpy(m, meta, sizeof m);
        m[0] = (uint8_t)n;
        make_tl(&t, "P", m, n, payload, sizeof payload);
        t.ev.buffer_offset = 65536;
        t.ev.record_offset = 72;
        int rc = etl_decoder_decode(d, &t.ev, &e);
        if (rc == ETL_FAILED) {
            ck_assert_ptr_nonnull(strstr(etl_decoder_error(d), "offset 65608"));
            ck_assert_ptr_nonnull(strstr(etl_decoder_error(d), "TraceLogging metadata"));
        }
    }
    memcpy(m, meta, sizeof m);
    m[0] = sizeof meta;
    make_tl(&t, "P", m, sizeof m, payload, sizeof payload);
    ck_assert_int_eq(etl_decoder_decode(d, &t.ev, &e), 1);
    /* a payload too short for the schema: the fields before, and a message naming the field */
    make_tl(&t, "P", m, sizeof m, payload, 5);
    ck_assert_int_eq(etl_decoder_decode(d, &t.ev, &e), ETL_FAILED);
    ck_assert_uint_eq(e.field_count, 1);
    ck_assert_ptr_nonnull(strstr(etl_decoder_error(d), "field y at payload byte 4"));
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- the decoder's lookups */

START_TEST(versions_fall_back_and_providers_replace)
{
    etl_schema_set set;
    etl_decoder *d;
    etl_decoded_event e;
    etl_event ev;
    etl_decoder_provider_stats st;
    static const uint8_t payload[] = { 5, 0, 0, 0, 6, 0, 0, 0 };
    char err[200], out[128];
    etl_schema_field *f;
    etl_schema_event *s;

    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    etl_schema_set_init(&set);
    ck_assert_int_eq(etl_schema_set_add_provider(&set, &provider_a, "ProvA", ETL_SCHEMA_MANIFEST), ETL_OK);
    for (int v = 0; v < 2; v++) {
        s = etl_arena_alloc(&set.arena, sizeof *s);
        f = etl_arena_alloc(&set.arena, 2 * sizeof *f);
        memset(s, 0, sizeof *s);
        f[0] = fld("first", ETL_IN_UINT32, 0);
        f[1] = fld("second", ETL_IN_UINT32, 0);
        s->provider = provider_a;
        s->id = 7;
        s->version = (uint8_t)(v * 2); /* versions 0 and 2 */
        s->source = ETL_SCHEMA_MANIFEST;
        s->provider_name = "ProvA";
        s->event_name = v ? "ProvA/V2" : "ProvA/V0";
        s->fields = f;
        s->field_count = (uint16_t)(v + 1);
        ck_assert_int_eq(etl_schema_set_add_event(&set, s, err, sizeof err), ETL_OK);
    }
    ck_assert_int_eq(etl_decoder_adopt(d, &set), ETL_OK);
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_KIND_EVENT;
    ev.provider = provider_a;
    ev.id = 7;
    ev.payload = payload;
    ev.payload_len = sizeof payload;
    ev.pointer_size = 8;
    for (int v = 0; v < 5; v++) {
        ev.version = (uint16_t)v;
        ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
        etl_decoded_format_json(&e, out, sizeof out);
        ck_assert_str_eq(e.event_name, v >= 2 ? "ProvA/V2" : "ProvA/V0");
        ck_assert_str_eq(out, v >= 2 ? "{\"first\":5,\"second\":6}" : "{\"first\":5}");
    }
    ev.id = 8;
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 0);
    ck_assert_str_eq(e.provider_name, "ProvA");
    /* the kernel's classes are the decoder's first providers; ProvA comes after them */
    ck_assert_int_eq(etl_decoder_provider_stats_get(d, etl_decoder_provider_count(d) - 1, &st), ETL_OK);
    ck_assert_uint_eq(st.decoded, 5);
    ck_assert_uint_eq(st.undecoded, 1);
    ck_assert_str_eq(st.name, "ProvA");
    /* A later set of the same provider replaces the earlier's events: id 7 is gone. */
    etl_schema_set_init(&set);
    ck_assert_int_eq(etl_schema_set_add_provider(&set, &provider_a, "ProvA2", ETL_SCHEMA_MANIFEST), ETL_OK);
    ck_assert_int_eq(etl_decoder_adopt(d, &set), ETL_OK);
    ev.id = 7;
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 0);
    ck_assert_str_eq(etl_decoder_provider_name(d, &provider_a), "ProvA2");
    ck_assert_int_eq(etl_decoder_provider_guid(d, "provA2", &ev.provider), ETL_OK);
    etl_decoder_close(d);
}
END_TEST

START_TEST(tracelogging_samples_decode_whole)
{
    /* Every TraceLogging event of the samples decodes, every byte of its payload used. */
    static const char *const samples[] = { "samples/perfview_primitive-types.etl",
                                           "samples/perfview_SelfDescribingSingleEvent.etl",
                                           "samples/airbus_AMSITrace.etl" };
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        etl_reader *r;
        etl_decoder *d;
        etl_event ev;
        etl_decoded_event e;
        unsigned tl = 0;
        int rc;

        ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(samples[i]), NULL), ETL_OK);
        ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
        while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
            int k = etl_decoder_decode(d, &ev, &e);
            ck_assert_msg(k >= 0, "%s: %s", samples[i], etl_decoder_error(d));
            if (e.source != ETL_SCHEMA_TRACELOGGING) continue;
            tl++;
            ck_assert_msg(e.payload_used == ev.payload_len, "%s: %s used %u of %u bytes", samples[i], e.event_name,
                          e.payload_used, ev.payload_len);
        }
        ck_assert_int_eq(rc, ETL_EOF);
        ck_assert_msg(tl > 0, "%s: no TraceLogging event", samples[i]);
        etl_decoder_close(d);
        etl_reader_close(r);
    }
}
END_TEST

/* TraceEvent's listing of perfview_primitive-types.etl (testdata/baselines): each listed
   TraceLogging event found (time in ms since the trace's start, pid, tid, name) and each listed
   field equal; the COUNT lines as many as the trace has. */
START_TEST(primitive_types_baseline)
{
    size_t size;
    char *listing = (char *)test_read_file(testdata_path("baselines/perfview_primitive-types.baseline.txt"), &size);
    char *line, *save = NULL;
    unsigned listed = 0, fields = 0, counts = 0;
    etl_reader *r;
    etl_decoder *d;

    ck_assert_ptr_nonnull(listing);
    listing = realloc(listing, size + 1);
    listing[size] = '\0';
    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    for (line = strtok_r(listing, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[128], *p, *tok, *tsave = NULL, *colon;
        uint32_t pid = 0, tid = 0, datalen = 0;
        double ms;
        etl_event ev;
        etl_decoded_event e;
        int found = 0, rc;
        int64_t t0 = 0;

        ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_primitive-types.etl"), NULL), ETL_OK);
        t0 = etl_clock_time_ns(&etl_reader_info(r)->clock, etl_reader_info(r)->clock.start_timestamp);
        if (strncmp(line, "COUNT ", 6) == 0) {
            long want = atol(strrchr(line, ':') + 1), have = 0;
            *strrchr(line, ':') = '\0';
            while (etl_reader_next(r, &ev) == ETL_OK) {
                rc = etl_decoder_decode(d, &ev, &e);
                if (rc == 1 && strcmp(e.event_name, line + 6) == 0) have++;
                else if (strcmp(line + 6, "Windows Kernel/EventTrace") == 0 && ev.kind == ETL_KIND_SYSTEM && ev.opcode == 0) have++;
            }
            ck_assert_msg(have == want, "%s: %ld, listed %ld", line + 6, have, want);
            counts++;
            etl_reader_close(r);
            continue;
        }
        ck_assert(strncmp(line, "EVENT ", 6) == 0);
        colon = strchr(line + 6, ':');
        {
            char t[32];
            size_t k = 0;
            for (p = line + 6; p < colon && k < sizeof t - 1; p++)
                if (*p != ',') t[k++] = *p;
            t[k] = '\0';
            ms = atof(t);
        }
        p = colon + 2;
        snprintf(name, sizeof name, "%.*s", (int)(strstr(p, " PID=") - p), p);
        p = strstr(p, " PID=") + 1;
        for (tok = strtok_r(p, ";", &tsave); tok; tok = strtok_r(NULL, ";", &tsave)) {
            while (*tok == ' ') tok++;
            if (strncmp(tok, "PID=", 4) == 0) pid = (uint32_t)atol(tok + 4);
            else if (strncmp(tok, "TID=", 4) == 0) tid = (uint32_t)atol(tok + 4);
            else if (strncmp(tok, "DataLen=", 8) == 0) {
                datalen = (uint32_t)atol(tok + 8);
                break;
            }
        }
        if (strcmp(name, "Windows Kernel/EventTrace") == 0) { /* the header: check_kclasses' */
            etl_reader_close(r);
            continue;
        }
        listed++;
        while (!found && etl_reader_next(r, &ev) == ETL_OK) {
            double at = (double)(etl_reader_time_ns(r, ev.timestamp) - t0) / 1e6;
            if (ev.kind != ETL_KIND_EVENT || ev.pid != pid || ev.tid != tid || at < ms - 0.0006 || at > ms + 0.0006) continue;
            rc = etl_decoder_decode(d, &ev, &e);
            ck_assert_int_eq(rc, 1);
            ck_assert_str_eq(e.event_name, name);
            ck_assert_uint_eq(ev.payload_len, datalen);
            found = 1;
            for (tok = strtok_r(NULL, ";", &tsave); tok; tok = strtok_r(NULL, ";", &tsave)) {
                char *eq, why[512];
                const etl_field *f = NULL;
                while (*tok == ' ') tok++;
                if (!*tok) continue;
                eq = strchr(tok, '=');
                ck_assert_ptr_nonnull(eq);
                *eq = '\0';
                for (uint32_t i = 0; i < e.field_count; i++)
                    if (e.fields[i].depth == 0 && strcmp(e.fields[i].name, tok) == 0) f = &e.fields[i];
                ck_assert_msg(f != NULL, "%s at %.3f ms: no field %s", name, ms, tok);
                ck_assert_msg(baseline_field_equal(f, eq + 1, why, sizeof why), "%s at %.3f ms: %s", name, ms, why);
                fields++;
            }
        }
        ck_assert_msg(found, "not found: %s at %.3f ms, pid %u tid %u", name, ms, pid, tid);
        etl_reader_close(r);
    }
    ck_assert_uint_eq(listed, 5);
    ck_assert_uint_eq(fields, 5 * 12);
    ck_assert_uint_eq(counts, 2);
    etl_decoder_close(d);
    free(listing);
}
END_TEST

static Suite *decode_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *walk_tc = tcase_create("walk"), *values = tcase_create("values"), *tl = tcase_create("tracelogging");
    TCase *dec = tcase_create("decoder");

    tcase_add_test(walk_tc, integers_every_width);
    tcase_add_test(walk_tc, strings_terminated_counted_and_sized);
    tcase_add_test(walk_tc, counted_arrays_and_structs);
    tcase_add_test(walk_tc, truncated_payload_fails_at_its_field);
    tcase_add_test(walk_tc, hostile_counts_and_lengths_are_bounded);
    tcase_add_test(walk_tc, badly_made_schemas_are_refused);
    tcase_add_test(values, values_as_windows_shows_them);
    tcase_add_test(values, mapped_values);
    tcase_add_test(values, text_escapes_and_sizes);
    tcase_add_test(tl, tracelogging_metadata);
    tcase_add_test(tl, tracelogging_cached_by_metadata_not_by_id);
    tcase_add_test(tl, tracelogging_malformed_metadata);
    tcase_add_test(dec, versions_fall_back_and_providers_replace);
    tcase_add_test(dec, tracelogging_samples_decode_whole);
    tcase_add_test(dec, primitive_types_baseline);
    suite_add_tcase(s, walk_tc);
    suite_add_tcase(s, values);
    suite_add_tcase(s, tl);
    suite_add_tcase(s, dec);
    return s;
}

int main(void) { return check_run(decode_suite()); }
