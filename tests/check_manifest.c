/* SPDX-License-Identifier: MIT */
/* Instrumentation manifests and EventSource manifests as schemas: types, maps, references, structs, versions, names, refusals, defaults, reassembly, and TraceEvent's listing of a real trace. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "reader/reader.h"
#include "testutil.h"
#include "baseline.h"

/* ---------------------------------------------------------------- helpers */

static char warnings[16384];
static int nwarnings;

static void on_warning(void *arg, const char *message)
{
    size_t n = strlen(warnings);

    (void)arg;
    nwarnings++;
    snprintf(warnings + n, sizeof warnings - n, "%s\n", message);
}

static etl_decoder *open_decoder(void)
{
    etl_decoder_options o = { ETL_DECODER_NO_DEFAULTS, on_warning, NULL };
    etl_decoder *d = NULL;

    warnings[0] = '\0';
    nwarnings = 0;
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_OK);
    ck_assert_ptr_nonnull(d);
    return d;
}

static int add_xml(etl_decoder *d, const char *xml, const char *name)
{
    return etl_decoder_add_manifest_memory(d, xml, strlen(xml), name);
}

static const char *manifest_path(const char *file)
{
    static char path[4][1024];
    static int k;
    const char *dir = getenv("ETL_MANIFESTS");

    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir ? dir : "../libetl/manifests", file);
    return path[k];
}

/* A payload built by hand. */
struct buf {
    uint8_t b[200000];
    uint32_t n;
};

static void put(struct buf *p, const void *x, size_t n)
{
    ck_assert_uint_le(p->n + n, sizeof p->b);
    memcpy(p->b + p->n, x, n);
    p->n += (uint32_t)n;
}
static void u8(struct buf *p, uint8_t v) { put(p, &v, 1); }
static void u16(struct buf *p, uint16_t v) { uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) }; put(p, x, 2); }
static void u32(struct buf *p, uint32_t v) { u16(p, (uint16_t)v); u16(p, (uint16_t)(v >> 16)); }
static void u64(struct buf *p, uint64_t v) { u32(p, (uint32_t)v); u32(p, (uint32_t)(v >> 32)); }
/* UTF-16LE of an ASCII string, with its terminator when z. */
static void wstr(struct buf *p, const char *s, int z)
{
    for (; *s; s++) u16(p, (uint8_t)*s);
    if (z) u16(p, 0);
}

static etl_event event_of(const etl_guid *provider, uint16_t id, uint8_t version, const struct buf *p)
{
    etl_event ev;

    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_KIND_EVENT;
    ev.provider = *provider;
    ev.id = id;
    ev.version = version;
    ev.pointer_size = 8;
    ev.payload = p ? p->b : NULL;
    ev.payload_len = p ? p->n : 0;
    return ev;
}

/* The first field named name (at any depth) after index from, or NULL. */
static const etl_field *field_from(const etl_decoded_event *e, const char *name, uint32_t from)
{
    for (uint32_t i = from; i < e->field_count; i++)
        if (strcmp(e->fields[i].name, name) == 0) return &e->fields[i];
    return NULL;
}
static const etl_field *field(const etl_decoded_event *e, const char *name) { return field_from(e, name, 0); }

static const char *text(const etl_field *f)
{
    static char out[4][1024];
    static int k;

    k = (k + 1) % 4;
    ck_assert_ptr_nonnull(f);
    etl_field_format(f, out[k], sizeof out[k]);
    return out[k];
}

static uint64_t uval(const etl_field *f)
{
    uint64_t v = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_msg(etl_field_uint(f, &v) == ETL_OK, "field %s is not an integer", f->name);
    return v;
}

static int64_t ival(const etl_field *f)
{
    int64_t v = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_msg(etl_field_int(f, &v) == ETL_OK, "field %s is not an integer", f->name);
    return v;
}

#define NS "xmlns=\"http://schemas.microsoft.com/win/2004/08/events\" " \
           "xmlns:win=\"http://manifests.microsoft.com/win/2004/08/windows/events\" " \
           "xmlns:xs=\"http://www.w3.org/2001/XMLSchema\""
#define HEAD "<instrumentationManifest " NS "><instrumentation><events>"
#define TAIL "</events></instrumentation></instrumentationManifest>"

static const etl_guid test_guid = { 0x11111111, 0x2222, 0x3333, { 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 } };
#define TEST_GUID "{11111111-2222-3333-4444-555555555555}"

/* ---------------------------------------------------------------- every type */

static const char types_xml[] = HEAD
    "<provider name=\"Test-Types\" guid=\"" TEST_GUID "\">"
    "<templates><template tid=\"all\">"
    "<data name=\"U\" inType=\"win:UnicodeString\"/>"
    "<data name=\"A\" inType=\"win:AnsiString\"/>"
    "<data name=\"I8\" inType=\"win:Int8\"/><data name=\"U8\" inType=\"win:UInt8\"/>"
    "<data name=\"I16\" inType=\"win:Int16\"/><data name=\"U16\" inType=\"win:UInt16\"/>"
    "<data name=\"I32\" inType=\"win:Int32\"/><data name=\"U32\" inType=\"win:UInt32\"/>"
    "<data name=\"I64\" inType=\"win:Int64\"/><data name=\"U64\" inType=\"win:UInt64\"/>"
    "<data name=\"F\" inType=\"win:Float\"/><data name=\"D\" inType=\"win:Double\"/>"
    "<data name=\"B\" inType=\"win:Boolean\"/>"
    "<data name=\"Bin\" inType=\"win:Binary\" length=\"3\"/>"
    "<data name=\"G\" inType=\"win:GUID\"/>"
    "<data name=\"P\" inType=\"win:Pointer\"/>"
    "<data name=\"FT\" inType=\"win:FILETIME\" outType=\"xs:dateTime\"/>"
    "<data name=\"ST\" inType=\"win:SYSTEMTIME\"/>"
    "<data name=\"S\" inType=\"win:SID\"/>"
    "<data name=\"H32\" inType=\"win:HexInt32\"/><data name=\"H64\" inType=\"win:HexInt64\"/>"
    "<data name=\"CS\" inType=\"win:CountedString\"/>"
    "<data name=\"CA\" inType=\"win:CountedAnsiString\"/>"
    "<data name=\"CB\" inType=\"win:CountedBinary\"/>"
    "</template>"
    "<template tid=\"outs\">"
    "<data name=\"o1\" inType=\"win:UInt32\" outType=\"xs:string\"/>"
    "<data name=\"o2\" inType=\"win:UInt32\" outType=\"xs:datetime\"/>"
    "<data name=\"o3\" inType=\"win:UInt32\" outType=\"xs:byte\"/>"
    "<data name=\"o4\" inType=\"win:UInt32\" outType=\"xs:unsignedByte\"/>"
    "<data name=\"o5\" inType=\"win:UInt32\" outType=\"xs:short\"/>"
    "<data name=\"o6\" inType=\"win:UInt32\" outType=\"xs:unsignedShort\"/>"
    "<data name=\"o7\" inType=\"win:UInt32\" outType=\"xs:int\"/>"
    "<data name=\"o8\" inType=\"win:UInt32\" outType=\"xs:unsignedInt\"/>"
    "<data name=\"o9\" inType=\"win:UInt32\" outType=\"xs:long\"/>"
    "<data name=\"o10\" inType=\"win:UInt32\" outType=\"xs:unsignedLong\"/>"
    "<data name=\"o11\" inType=\"win:UInt32\" outType=\"xs:float\"/>"
    "<data name=\"o12\" inType=\"win:UInt32\" outType=\"xs:double\"/>"
    "<data name=\"o13\" inType=\"win:UInt32\" outType=\"xs:boolean\"/>"
    "<data name=\"o14\" inType=\"win:UInt32\" outType=\"xs:GUID\"/>"
    "<data name=\"o15\" inType=\"win:UInt32\" outType=\"xs:hexBinary\"/>"
    "<data name=\"o16\" inType=\"win:UInt32\" outType=\"win:HexInt8\"/>"
    "<data name=\"o17\" inType=\"win:UInt32\" outType=\"win:HexInt16\"/>"
    "<data name=\"o18\" inType=\"win:UInt32\" outType=\"win:HexInt32\"/>"
    "<data name=\"o19\" inType=\"win:UInt32\" outType=\"win:HexInt64\"/>"
    "<data name=\"o20\" inType=\"win:UInt32\" outType=\"win:PID\"/>"
    "<data name=\"o21\" inType=\"win:UInt32\" outType=\"win:TID\"/>"
    "<data name=\"o22\" inType=\"win:UInt32\" outType=\"win:Port\"/>"
    "<data name=\"o23\" inType=\"win:UInt32\" outType=\"win:IPv4\"/>"
    "<data name=\"o24\" inType=\"win:UInt32\" outType=\"win:IPv6\"/>"
    "<data name=\"o25\" inType=\"win:UInt32\" outType=\"win:SocketAddress\"/>"
    "<data name=\"o26\" inType=\"win:UInt32\" outType=\"win:CIMDateTime\"/>"
    "<data name=\"o27\" inType=\"win:UInt32\" outType=\"win:ETWTIME\"/>"
    "<data name=\"o28\" inType=\"win:UInt32\" outType=\"win:Xml\"/>"
    "<data name=\"o29\" inType=\"win:UInt32\" outType=\"win:ErrorCode\"/>"
    "<data name=\"o30\" inType=\"win:UInt32\" outType=\"win:Win32Error\"/>"
    "<data name=\"o31\" inType=\"win:UInt32\" outType=\"win:NTSTATUS\"/>"
    "<data name=\"o32\" inType=\"win:UInt32\" outType=\"win:HResult\"/>"
    "<data name=\"o33\" inType=\"win:UInt32\" outType=\"win:DateTimeCultureInsensitive\"/>"
    "<data name=\"o34\" inType=\"win:UInt32\" outType=\"win:Json\"/>"
    "<data name=\"o35\" inType=\"win:UInt32\" outType=\"win:Utf8\"/>"
    "<data name=\"o36\" inType=\"win:UInt32\" outType=\"win:Pkcs7WithTypeInfo\"/>"
    "<data name=\"o37\" inType=\"win:UInt32\" outType=\"win:CodePointer\"/>"
    "<data name=\"o38\" inType=\"win:UInt32\" outType=\"win:DateTimeUtc\"/>"
    "<data name=\"kernel\" inType=\"win:UInt32\" outType=\"xs:HexInt32\"/>"
    "</template></templates>"
    "<events><event value=\"1\" template=\"all\"/><event value=\"2\" template=\"outs\"/></events>"
    "</provider>" TAIL;

START_TEST(every_in_type)
{
    etl_decoder *d = open_decoder();
    static struct buf p;
    static const uint8_t guid[16] = { 0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e,
                                      0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 };
    static const uint8_t sid[12] = { 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
    static const struct { const char *name; unsigned in; } want[] = {
        { "U", ETL_IN_UNICODE_STRING }, { "A", ETL_IN_ANSI_STRING }, { "I8", ETL_IN_INT8 }, { "U8", ETL_IN_UINT8 },
        { "I16", ETL_IN_INT16 }, { "U16", ETL_IN_UINT16 }, { "I32", ETL_IN_INT32 }, { "U32", ETL_IN_UINT32 },
        { "I64", ETL_IN_INT64 }, { "U64", ETL_IN_UINT64 }, { "F", ETL_IN_FLOAT }, { "D", ETL_IN_DOUBLE },
        { "B", ETL_IN_BOOLEAN }, { "Bin", ETL_IN_BINARY }, { "G", ETL_IN_GUID }, { "P", ETL_IN_POINTER },
        { "FT", ETL_IN_FILETIME }, { "ST", ETL_IN_SYSTEMTIME }, { "S", ETL_IN_SID }, { "H32", ETL_IN_HEXINT32 },
        { "H64", ETL_IN_HEXINT64 }, { "CS", ETL_IN_COUNTED_STRING }, { "CA", ETL_IN_COUNTED_ANSI_STRING },
        { "CB", ETL_IN_COUNTED_BINARY },
    };
    etl_decoded_event e;
    etl_event ev;
    float fl = 1.5f;
    double db = -2.25, dv = 0;
    uint32_t fbits;
    uint64_t dbits;
    int64_t ns = 0;
    etl_guid g;
    char gs[ETL_GUID_STRING_SIZE];

    ck_assert_int_eq(add_xml(d, types_xml, "types.man"), ETL_OK);
    ck_assert_int_eq(nwarnings, 0);
    p.n = 0;
    wstr(&p, "hi", 1);
    put(&p, "abc", 4);
    u8(&p, 0xfb);
    u8(&p, 200);
    u16(&p, (uint16_t)-300);
    u16(&p, 60000);
    u32(&p, (uint32_t)-70000);
    u32(&p, 4000000000u);
    u64(&p, (uint64_t)-5000000000000ll);
    u64(&p, 18000000000000000000ull);
    memcpy(&fbits, &fl, 4);
    u32(&p, fbits);
    memcpy(&dbits, &db, 8);
    u64(&p, dbits);
    u32(&p, 1);
    put(&p, "\x01\x02\x03", 3);
    put(&p, guid, 16);
    u64(&p, 0x1122334455667788ull);
    u64(&p, 116444736000000000ull + 10000000ull); /* 1970-01-01T00:00:01Z */
    u16(&p, 2023); u16(&p, 3); u16(&p, 2); u16(&p, 14); u16(&p, 0); u16(&p, 46); u16(&p, 36); u16(&p, 694);
    put(&p, sid, sizeof sid);
    u32(&p, 0xdeadbeef);
    u64(&p, 0x0123456789abcdefull);
    u16(&p, 4); wstr(&p, "ok", 0);
    u16(&p, 2); put(&p, "hi", 2);
    u16(&p, 2); put(&p, "\xff\xee", 2);
    ev = event_of(&test_guid, 1, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_int_eq(e.source, ETL_SCHEMA_MANIFEST);
    ck_assert_str_eq(e.event_name, "Test-Types/EventID(1)");
    ck_assert_uint_eq(e.payload_used, p.n);
    ck_assert_uint_eq(e.field_count, sizeof want / sizeof *want);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        ck_assert_str_eq(e.fields[i].name, want[i].name);
        ck_assert_uint_eq(e.fields[i].in_type, want[i].in);
    }
    ck_assert_str_eq(text(field(&e, "U")), "hi");
    ck_assert_str_eq(text(field(&e, "A")), "abc");
    ck_assert_int_eq(ival(field(&e, "I8")), -5);
    ck_assert_uint_eq(uval(field(&e, "U8")), 200);
    ck_assert_int_eq(ival(field(&e, "I16")), -300);
    ck_assert_uint_eq(uval(field(&e, "U16")), 60000);
    ck_assert_int_eq(ival(field(&e, "I32")), -70000);
    ck_assert_uint_eq(uval(field(&e, "U32")), 4000000000u);
    ck_assert(ival(field(&e, "I64")) == -5000000000000ll);
    ck_assert(uval(field(&e, "U64")) == 18000000000000000000ull);
    ck_assert_int_eq(etl_field_double(field(&e, "F"), &dv), ETL_OK);
    ck_assert(dv == 1.5);
    ck_assert_int_eq(etl_field_double(field(&e, "D"), &dv), ETL_OK);
    ck_assert(dv == -2.25);
    ck_assert_str_eq(text(field(&e, "B")), "true");
    ck_assert_str_eq(text(field(&e, "Bin")), "010203");
    ck_assert_int_eq(etl_field_guid(field(&e, "G"), &g), ETL_OK);
    ck_assert_str_eq(etl_guid_format(&g, gs), "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4");
    ck_assert(uval(field(&e, "P")) == 0x1122334455667788ull);
    ck_assert_uint_eq(field(&e, "FT")->out_type, ETL_OUT_DATETIME);
    ck_assert_int_eq(etl_field_time(field(&e, "FT"), &ns), ETL_OK);
    ck_assert(ns == 1000000000ll);
    ck_assert_int_eq(etl_field_time(field(&e, "ST"), &ns), ETL_OK);
    ck_assert(ns == 1678754796694000000ll); /* 2023-03-14T00:46:36.694Z */
    ck_assert_str_eq(text(field(&e, "S")), "S-1-5-18");
    ck_assert_uint_eq(uval(field(&e, "H32")), 0xdeadbeef);
    ck_assert(uval(field(&e, "H64")) == 0x0123456789abcdefull);
    ck_assert_str_eq(text(field(&e, "CS")), "ok");
    ck_assert_str_eq(text(field(&e, "CA")), "hi");
    ck_assert_str_eq(text(field(&e, "CB")), "ffee");
    etl_decoder_close(d);
}
END_TEST

START_TEST(every_out_type)
{
    etl_decoder *d = open_decoder();
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;

    ck_assert_int_eq(add_xml(d, types_xml, "types.man"), ETL_OK);
    p.n = 0;
    for (int i = 0; i < 39; i++) u32(&p, (uint32_t)i);
    ev = event_of(&test_guid, 2, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_uint_eq(e.field_count, 39);
    /* o1 .. o38: the out types' TDH numbers 1 .. 38, in the order of winmeta.xml's list */
    for (unsigned i = 0; i < 38; i++) {
        ck_assert_uint_eq(e.fields[i].in_type, ETL_IN_UINT32);
        ck_assert_msg(e.fields[i].out_type == i + 1, "%s: out type %u, want %u", e.fields[i].name,
                      e.fields[i].out_type, i + 1);
    }
    /* the kernel's manifest writes xs:HexInt32 */
    ck_assert_uint_eq(e.fields[38].out_type, ETL_OUT_HEXINT32);
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- maps */

static const char maps_xml[] = HEAD
    "<provider name=\"Test-Maps\" guid=\"" TEST_GUID "\">"
    "<maps>"
    "<valueMap name=\"Color\"><map value=\"2\" message=\"$(string.c2)\"/><map value=\"0x0\" message=\"$(string.c0)\"/>"
    "<map value=\"1\" message=\"Green\"/><map value=\"1\" message=\"Lime\"/></valueMap>"
    "<bitMap name=\"Flags\"><map value=\"0x1\" message=\"$(string.fA)\"/><map value=\"0x4\" message=\"C\"/>"
    "<map value=\"0x2\" message=\"B\"/></bitMap>"
    "</maps>"
    "<templates><template tid=\"t\"><data name=\"Color\" inType=\"win:UInt32\" map=\"Color\"/>"
    "<data name=\"Flags\" inType=\"win:UInt32\" map=\"Flags\"/></template></templates>"
    "<events><event value=\"1\" template=\"t\"/></events>"
    "</provider>" TAIL
    "";

static const char maps_strings[] =
    "<localization><resources culture=\"en-US\"><stringTable>"
    "<string id=\"c0\" value=\"Red\"/><string id=\"c2\" value=\"Blue\"/><string id=\"fA\" value=\"A\"/>"
    "</stringTable></resources></localization>";

START_TEST(maps)
{
    etl_decoder *d = open_decoder();
    static const struct { uint32_t color, flags; const char *cname, *fname; int cexact, fexact; } cases[] = {
        { 1, 7, "Lime", "A|B|C", 1, 1 },
        { 2, 5, "Blue", "A|C", 1, 1 },
        { 0, 0x45, "Red", "A|C|0x40", 1, 0 },
        { 9, 0, "9", "0", 0, 0 },
    };
    char xml[4096], out[128];
    const char *close = strstr(maps_xml, "</instrumentationManifest>");

    /* the localization element goes inside the manifest, after instrumentation */
    snprintf(xml, sizeof xml, "%.*s%s</instrumentationManifest>", (int)(close - maps_xml), maps_xml, maps_strings);
    ck_assert_int_eq(add_xml(d, xml, "maps.man"), ETL_OK);
    ck_assert_int_eq(nwarnings, 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        static struct buf p;
        etl_decoded_event e;
        etl_event ev;
        const etl_field *c, *f;
        int exact = -1;
        p.n = 0;
        u32(&p, cases[i].color);
        u32(&p, cases[i].flags);
        ev = event_of(&test_guid, 1, 0, &p);
        ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
        c = field(&e, "Color");
        f = field(&e, "Flags");
        ck_assert_str_eq(etl_map_name(c->map), "Color");
        ck_assert_int_eq(etl_map_is_bitmap(c->map), 0);
        ck_assert_str_eq(etl_map_name(f->map), "Flags");
        ck_assert_int_eq(etl_map_is_bitmap(f->map), 1);
        etl_map_format(c->map, uval(c), out, sizeof out, &exact);
        ck_assert_str_eq(out, cases[i].cname);
        ck_assert_int_eq(exact, cases[i].cexact);
        etl_map_format(f->map, uval(f), out, sizeof out, &exact);
        ck_assert_str_eq(out, cases[i].fname);
        ck_assert_int_eq(exact, cases[i].fexact);
        ck_assert_str_eq(text(c), cases[i].cname);
    }
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- lengths and counts */

static const char refs_xml[] = HEAD
    "<provider name=\"Test-Refs\" guid=\"" TEST_GUID "\">"
    "<templates><template tid=\"t\">"
    "<data name=\"N\" inType=\"win:UInt16\"/>"
    "<data name=\"Name\" inType=\"win:UnicodeString\" length=\"N\"/>"
    "<data name=\"Fixed\" inType=\"win:AnsiString\" length=\"4\"/>"
    "<data name=\"C\" inType=\"win:UInt8\"/>"
    "<data name=\"Arr\" inType=\"win:UInt32\" count=\"C\"/>"
    "<data name=\"Three\" inType=\"win:UInt16\" count=\"3\"/>"
    "<data name=\"BL\" inType=\"win:UInt32\"/>"
    "<data name=\"Blob\" inType=\"win:Binary\" length=\"BL\"/>"
    "<data name=\"Strs\" inType=\"win:AnsiString\" count=\"2\"/>"
    "</template></templates>"
    "<events><event value=\"1\" template=\"t\"/></events>"
    "</provider>" TAIL;

START_TEST(length_and_count)
{
    etl_decoder *d = open_decoder();
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;
    etl_field el;
    const etl_field *f;

    ck_assert_int_eq(add_xml(d, refs_xml, "refs.man"), ETL_OK);
    p.n = 0;
    u16(&p, 3);
    wstr(&p, "abc", 0);
    put(&p, "WXYZ", 4);
    u8(&p, 2);
    u32(&p, 10);
    u32(&p, 20);
    u16(&p, 1); u16(&p, 2); u16(&p, 3);
    u32(&p, 2);
    put(&p, "\xaa\xbb", 2);
    put(&p, "x\0yz\0", 5);
    ev = event_of(&test_guid, 1, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_uint_eq(e.payload_used, p.n);
    ck_assert_str_eq(text(field(&e, "Name")), "abc");
    ck_assert_str_eq(text(field(&e, "Fixed")), "WXYZ");
    f = field(&e, "Arr");
    ck_assert_uint_eq(f->kind, ETL_FIELD_ARRAY);
    ck_assert_uint_eq(f->count, 2);
    ck_assert_int_eq(etl_field_element(f, 1, &el), ETL_OK);
    ck_assert_uint_eq(uval(&el), 20);
    f = field(&e, "Three");
    ck_assert_uint_eq(f->count, 3);
    ck_assert_int_eq(etl_field_element(f, 2, &el), ETL_OK);
    ck_assert_uint_eq(uval(&el), 3);
    ck_assert_str_eq(text(field(&e, "Blob")), "aabb");
    f = field(&e, "Strs");
    ck_assert_uint_eq(f->kind, ETL_FIELD_ARRAY);
    ck_assert_uint_eq(f->count, 2);
    ck_assert_str_eq(text(f + 1), "x");
    ck_assert_str_eq(text(f + 2), "yz");

    /* a length the payload cannot hold: the event fails at that field, with its offset */
    p.n = 0;
    u16(&p, 100);
    wstr(&p, "abc", 0);
    ev = event_of(&test_guid, 1, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), ETL_FAILED);
    ck_assert_msg(strstr(etl_decoder_error(d), "field Name at payload byte 2"), "%s", etl_decoder_error(d));
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- structs */

static const char structs_xml[] = HEAD
    "<provider name=\"Test-Structs\" guid=\"" TEST_GUID "\">"
    "<templates><template tid=\"t\">"
    "<data name=\"Count\" inType=\"win:UInt32\"/>"
    "<struct name=\"Values\" count=\"Count\">"
    "  <data name=\"Id\" inType=\"win:UInt64\" outType=\"win:HexInt64\"/>"
    "  <data name=\"K\" inType=\"win:UInt8\"/>"
    "  <data name=\"Params\" inType=\"win:UInt16\" count=\"K\"/>"
    "  <struct name=\"Inner\"><data name=\"X\" inType=\"win:Int32\"/><data name=\"S\" inType=\"win:UnicodeString\"/></struct>"
    "</struct>"
    "<data name=\"Tail\" inType=\"win:UInt8\"/>"
    "</template></templates>"
    "<events><event value=\"1\" template=\"t\"/></events>"
    "</provider>" TAIL;

START_TEST(structs)
{
    etl_decoder *d = open_decoder();
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;
    const etl_field *v, *el1, *el2, *f;
    etl_field x;

    ck_assert_int_eq(add_xml(d, structs_xml, "structs.man"), ETL_OK);
    p.n = 0;
    u32(&p, 2);
    u64(&p, 0x10); u8(&p, 1); u16(&p, 7); u32(&p, (uint32_t)-1); wstr(&p, "a", 1);
    u64(&p, 0x20); u8(&p, 0); u32(&p, 5); wstr(&p, "", 1);
    u8(&p, 9);
    ev = event_of(&test_guid, 1, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_uint_eq(e.payload_used, p.n);
    v = field(&e, "Values");
    ck_assert_uint_eq(v->kind, ETL_FIELD_ARRAY);
    ck_assert_uint_eq(v->count, 2);
    ck_assert_uint_eq(v->depth, 0);
    el1 = v + 1;
    ck_assert_uint_eq(el1->kind, ETL_FIELD_STRUCT);
    ck_assert_uint_eq(el1->depth, 1);
    ck_assert_uint_eq(el1->count, 4);
    el2 = &e.fields[el1->end];
    ck_assert_uint_eq(el2->kind, ETL_FIELD_STRUCT);
    ck_assert_uint_eq(el2->end, v->end);
    /* the first element: Id, K, Params [7], Inner {X -1, S "a"} */
    ck_assert_uint_eq(uval(field_from(&e, "Id", (uint32_t)(el1 - e.fields))), 0x10);
    f = field_from(&e, "Params", (uint32_t)(el1 - e.fields));
    ck_assert_uint_eq(f->count, 1);
    ck_assert_int_eq(etl_field_element(f, 0, &x), ETL_OK);
    ck_assert_uint_eq(uval(&x), 7);
    f = field_from(&e, "Inner", (uint32_t)(el1 - e.fields));
    ck_assert_uint_eq(f->kind, ETL_FIELD_STRUCT);
    ck_assert_uint_eq(f->depth, 2);
    ck_assert_int_eq(ival(f + 1), -1);
    ck_assert_str_eq(text(f + 2), "a");
    /* the second: its own K (0) sizes its own Params */
    ck_assert_uint_eq(uval(field_from(&e, "Id", (uint32_t)(el2 - e.fields))), 0x20);
    ck_assert_uint_eq(field_from(&e, "Params", (uint32_t)(el2 - e.fields))->count, 0);
    ck_assert_int_eq(ival(field_from(&e, "X", (uint32_t)(el2 - e.fields))), 5);
    ck_assert_uint_eq(uval(field(&e, "Tail")), 9);
    ck_assert_uint_eq(field(&e, "Tail")->depth, 0);
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- versions */

static const char versions_xml[] = HEAD
    "<provider name=\"Test-Versions\" guid=\"" TEST_GUID "\">"
    "<templates>"
    "<template tid=\"t0\"><data name=\"A\" inType=\"win:UInt32\"/></template>"
    "<template tid=\"t2\"><data name=\"A\" inType=\"win:UInt32\"/><data name=\"B\" inType=\"win:UInt32\"/></template>"
    "</templates>"
    "<events>"
    "<event value=\"1\" version=\"2\" template=\"t2\"/>"
    "<event value=\"1\" template=\"t0\"/>"
    "<event value=\"2\" version=\"3\" template=\"t0\"/>"
    "</events>"
    "</provider>" TAIL;

START_TEST(versions)
{
    etl_decoder *d = open_decoder();
    static struct buf p;
    static const struct { uint16_t id; uint8_t version; int rc; uint32_t fields; } cases[] = {
        { 1, 0, 1, 1 }, { 1, 1, 1, 1 }, /* no version 1: version 0's */
        { 1, 2, 1, 2 }, { 1, 5, 1, 2 }, /* above the highest: the highest */
        { 2, 3, 1, 1 }, { 2, 1, 0, 0 }, /* below the lowest: no schema */
        { 3, 0, 0, 0 },
    };

    ck_assert_int_eq(add_xml(d, versions_xml, "versions.man"), ETL_OK);
    p.n = 0;
    u32(&p, 1);
    u32(&p, 2);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        etl_decoded_event e;
        etl_event ev = event_of(&test_guid, cases[i].id, cases[i].version, &p);
        ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), cases[i].rc);
        ck_assert_uint_eq(e.field_count, cases[i].fields);
        ck_assert_str_eq(e.provider_name, "Test-Versions");
    }
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- names */

static const char names_xml[] =
    "<instrumentationManifest " NS "><instrumentation><events>"
    "<provider name=\"Test-Names\" guid=\"" TEST_GUID "\" message=\"$(string.prov)\">"
    "<events>"
    "<event value=\"1\" task=\"TaskW\" opcode=\"Op1\"/>"
    "<event value=\"2\" task=\"TaskW\" opcode=\"win:Start\"/>"
    "<event value=\"3\" task=\"TaskW\" opcode=\"win:Info\"/>"
    "<event value=\"4\" task=\"TaskW\"/>"
    "<event value=\"5\" symbol=\"MySymbol\"/>"
    "<event value=\"6\"/>"
    "<event value=\"7\" task=\"TaskN\" opcode=\"win:DC_Stop\"/>"
    "<event value=\"8\" task=\"TaskN\" opcode=\"Op1\"/>"
    "<event value=\"9\" task=\"TaskM\" opcode=\"win:Receive\" level=\"win:Verbose\" keywords=\"KwA win:AnyKeyword\"/>"
    "<event value=\"10\" task=\"TaskW\" level=\"NoSuchLevel\"/>"
    "</events>"
    "<keywords><keyword name=\"KwA\" mask=\"0x10\"/></keywords>"
    "<opcodes><opcode name=\"Op1\" value=\"12\" message=\"ProviderOp\"/></opcodes>"
    "<tasks>"
    "<task name=\"TaskW\" value=\"1\" message=\"$(string.task)\">"
    "<opcodes><opcode name=\"Op1\" value=\"11\" message=\"$(string.op1)\"/></opcodes></task>"
    "<task name=\"TaskN\" value=\"2\"/>"
    "<task name=\"TaskM\" value=\"3\" message=\"$(string.missing)\"/>"
    "</tasks>"
    "</provider></events></instrumentation>"
    "<localization>"
    "<resources culture=\"de-DE\"><stringTable><string id=\"task\" value=\"Arbeit\"/>"
    "<string id=\"op1\" value=\"Anfang\"/></stringTable></resources>"
    "<resources culture=\"en-US\"><stringTable><string id=\"task\" value=\"Work\"/>"
    "<string id=\"op1\" value=\"Begin\"/></stringTable></resources>"
    "</localization></instrumentationManifest>";

START_TEST(display_names)
{
    etl_decoder *d = open_decoder();
    static const struct { uint16_t id; const char *name, *task, *opcode; } cases[] = {
        { 1, "Test-Names/Work/Begin", "Work", "Begin" },    /* the task's own opcode, en-US */
        { 2, "Test-Names/Work/Start", "Work", "Start" },
        { 3, "Test-Names/Work", "Work", NULL },             /* win:Info: left out */
        { 4, "Test-Names/Work", "Work", NULL },
        { 5, "Test-Names/MySymbol", NULL, NULL },           /* no task: the symbol */
        { 6, "Test-Names/EventID(6)", NULL, NULL },
        { 7, "Test-Names/TaskN/DCStop", "TaskN", "DCStop" }, /* no message: the name */
        { 8, "Test-Names/TaskN/ProviderOp", "TaskN", "ProviderOp" },
        { 9, "Test-Names/TaskM/Receive", "TaskM", "Receive" },
    };

    ck_assert_int_eq(add_xml(d, names_xml, "names.man"), ETL_OK);
    /* $(string.missing) is not in the table: a warning; a level nobody defines: another */
    ck_assert_int_eq(nwarnings, 2);
    ck_assert_msg(strstr(warnings, "names.man: messages naming strings the string table lacks: 1 (the first: "
                                   "$(string.missing) at line 1)"), "%s", warnings);
    ck_assert_msg(strstr(warnings, "names.man: levels, keywords or channels that events name and the manifest does "
                                   "not define: 1 (the first: level NoSuchLevel at line 1)"), "%s", warnings);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        etl_decoded_event e;
        etl_event ev = event_of(&test_guid, cases[i].id, 0, NULL);
        ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
        ck_assert_str_eq(e.event_name, cases[i].name);
        ck_assert_str_eq(e.provider_name, "Test-Names");
        if (cases[i].task) ck_assert_str_eq(e.task_name, cases[i].task);
        else ck_assert_ptr_null(e.task_name);
        if (cases[i].opcode) ck_assert_str_eq(e.opcode_name, cases[i].opcode);
        else ck_assert_ptr_null(e.opcode_name);
    }
    ck_assert_str_eq(etl_decoder_provider_name(d, &test_guid), "Test-Names");
    etl_decoder_close(d);
}
END_TEST

/* Without en-US, the first resources. */
START_TEST(first_culture)
{
    etl_decoder *d = open_decoder();
    static const char xml[] = HEAD
        "<provider name=\"Test-Culture\" guid=\"" TEST_GUID "\"><tasks><task name=\"T\" value=\"1\" message=\"$(string.t)\"/></tasks>"
        "<events><event value=\"1\" task=\"T\"/></events></provider></events></instrumentation>"
        "<localization><resources culture=\"fr-FR\"><stringTable><string id=\"t\" value=\"Tache\"/></stringTable></resources>"
        "<resources culture=\"de-DE\"><stringTable><string id=\"t\" value=\"Aufgabe\"/></stringTable></resources>"
        "</localization></instrumentationManifest>";
    etl_decoded_event e;
    etl_event ev = event_of(&test_guid, 1, 0, NULL);

    ck_assert_int_eq(add_xml(d, xml, "culture.man"), ETL_OK);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "Test-Culture/Tache");
    etl_decoder_close(d);
}
END_TEST

/* How many providers a decoder knows before any manifest: the kernel's classes. */
static unsigned builtin_providers(void)
{
    etl_decoder *d;
    unsigned n;

    ck_assert_int_eq(etl_decoder_open(&d, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    n = etl_decoder_provider_count(d);
    etl_decoder_close(d);
    ck_assert_uint_gt(n, 10);
    return n;
}

/* ---------------------------------------------------------------- component manifests */

START_TEST(component_manifest)
{
    etl_decoder *d = open_decoder();
    static const char xml[] =
        "\xEF\xBB\xBF<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n"
        "<assembly xmlns=\"urn:schemas-microsoft-com:asm.v3\" manifestVersion=\"1.0\">\n"
        "  <assemblyIdentity name=\"Test-Component\" version=\"1.0.0.0\"/>\n"
        "  <registryKeys><registryKey keyName=\"HKLM\\X\"/></registryKeys>\n"
        "  <instrumentation xmlns:win=\"http://manifests.microsoft.com/win/2004/08/windows/events\">\n"
        "    <events xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
        "      <provider guid=\"" TEST_GUID "\" name=\"Test-Component\">\n"
        "        <tasks><task name=\"Job\" value=\"1\" message=\"$(string.job)\"/></tasks>\n"
        "        <templates><template tid=\"t\"><data name=\"V\" inType=\"win:UInt8\"/></template></templates>\n"
        "        <events><event value=\"4\" task=\"Job\" opcode=\"win:Stop\" template=\"t\"/></events>\n"
        "      </provider>\n"
        "    </events>\n"
        "  </instrumentation>\n"
        "  <localization><resources culture=\"en-US\"><stringTable><string id=\"job\" value=\"The Job\"/>"
        "</stringTable></resources></localization>\n"
        "</assembly>\n";
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;
    etl_guid g;

    ck_assert_int_eq(add_xml(d, xml, "component.man"), ETL_OK);
    p.n = 0;
    u8(&p, 42);
    ev = event_of(&test_guid, 4, 0, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "Test-Component/The Job/Stop");
    ck_assert_uint_eq(uval(field(&e, "V")), 42);

    /* the kernel's providers' manifest is one, with a byte order mark */
    ck_assert_int_eq(etl_decoder_add_manifest(d, manifest_path("SystemEvents.man")), ETL_OK);
    ck_assert_int_eq(nwarnings, 0);
    ck_assert_int_eq(etl_decoder_provider_guid(d, "Microsoft-Windows-Kernel-Process", &g), ETL_OK);
    {
        char s[ETL_GUID_STRING_SIZE];
        ck_assert_str_eq(etl_guid_format(&g, s), "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716");
    }
    /* the kernel's own classes are the decoder's from the start */
    ck_assert_uint_eq(etl_decoder_provider_count(d), builtin_providers() + 1 + 33);
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- the shipped manifests */

START_TEST(shipped_manifests)
{
    static const struct { const char *file; unsigned providers; } m[] = {
        { "ClrEtwAll.man", 4 }, { "HTTP_Server.man", 1 }, { "SystemEvents.man", 33 },
    };
    etl_decoder *d;

    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        d = open_decoder();
        ck_assert_msg(etl_decoder_add_manifest(d, manifest_path(m[i].file)) == ETL_OK, "%s", etl_decoder_error(d));
        ck_assert_msg(nwarnings == 0, "%s: %s", m[i].file, warnings);
        ck_assert_uint_eq(etl_decoder_provider_count(d), builtin_providers() + m[i].providers);
        etl_decoder_close(d);
    }
    /* the directory: the three */
    d = open_decoder();
    ck_assert_int_eq(etl_decoder_add_manifest(d, manifest_path("")), ETL_OK);
    ck_assert_uint_eq(etl_decoder_provider_count(d), builtin_providers() + 38);
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- refusals */

/* A manifest with one provider of the test GUID, its templates and events as given. */
static void provider_xml(char *out, size_t size, const char *body)
{
    snprintf(out, size,
             "<instrumentationManifest " NS ">\n<instrumentation>\n<events>\n"
             "<provider name=\"Test-Bad\" guid=\"" TEST_GUID "\">\n%s\n</provider>\n</events>\n</instrumentation>\n"
             "</instrumentationManifest>\n",
             body);
}

START_TEST(bad_manifests)
{
    static const struct { const char *body; const char *what; } cases[] = {
        { "<templates><template tid=\"t\"><data name=\"A\" inType=\"win:UInt32\"/></template></templates>\n"
          "<events><event value=\"1\" template=\"nope\"/></events>",
          "bad.man:6: event 1: unknown template nope" },
        { "<templates><template tid=\"t\">\n<data name=\"S\" inType=\"win:UnicodeString\" length=\"N\"/>\n"
          "<data name=\"N\" inType=\"win:UInt16\"/></template></templates>",
          "bad.man:6: field S: its length N names no field before it" },
        { "<templates><template tid=\"t\">\n<data name=\"S\" inType=\"win:UnicodeString\" length=\"Nobody\"/>"
          "</template></templates>",
          "bad.man:6: field S: its length Nobody names no field before it" },
        { "<templates><template tid=\"t\"><data name=\"N\" inType=\"win:UnicodeString\"/>\n"
          "<data name=\"A\" inType=\"win:UInt8\" count=\"N\"/></template></templates>",
          "bad.man:6: field A: its count N is not an integer field" },
        { "<templates><template tid=\"t\"><struct name=\"St\"><data name=\"N\" inType=\"win:UInt8\"/></struct>\n"
          "<data name=\"A\" inType=\"win:UInt8\" count=\"N\"/></template></templates>",
          "bad.man:6: field A: its count N names no field before it" },
        { "<templates><template tid=\"t\">\n\n<data name=\"A\" inType=\"win:UInt33\"/></template></templates>",
          "bad.man:7: field A: unknown inType win:UInt33" },
        { "<templates><template tid=\"t\"><data name=\"A\" inType=\"win:UInt32\" outType=\"xs:nothing\"/>"
          "</template></templates>",
          "bad.man:5: field A: unknown outType xs:nothing" },
        { "<templates><template tid=\"t\"><data name=\"A\" inType=\"win:UInt32\" map=\"NoMap\"/></template></templates>",
          "bad.man:5: field A: unknown map NoMap" },
        { "<templates><template tid=\"t\"><struct name=\"St\"></struct></template></templates>",
          "bad.man:5: struct St has no members" },
        { "<events><event value=\"1\" task=\"NoTask\"/></events>", "bad.man:5: event 1: unknown task NoTask" },
        { "<events><event value=\"1\" opcode=\"NoOp\"/></events>", "bad.man:5: event 1: unknown opcode NoOp" },
        { "<events><event value=\"1\"/>\n<event value=\"1\" version=\"0\"/></events>",
          "bad.man:6: event 1 version 0 is defined twice (first at line 5)" },
        { "<events><event value=\"70000\"/></events>", "bad.man:5: an event's value 70000 is not a number" },
        { "<maps><valueMap name=\"M\"><map value=\"x1\" message=\"A\"/></valueMap></maps>",
          "bad.man:5: map M: value x1 is not a number" },
        { "<templates><template tid=\"t\"><data inType=\"win:UInt32\"/></template></templates>",
          "bad.man:5: a data element without a name" },
    };
    char xml[4096];

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        etl_decoder *d = open_decoder();
        etl_decoded_event e;
        etl_event ev = event_of(&test_guid, 1, 0, NULL);
        provider_xml(xml, sizeof xml, cases[i].body);
        ck_assert_int_eq(add_xml(d, xml, "bad.man"), ETL_FAILED);
        ck_assert_msg(strstr(etl_decoder_error(d), cases[i].what), "case %zu: \"%s\", want \"%s\"", i,
                      etl_decoder_error(d), cases[i].what);
        /* nothing of it kept */
        ck_assert_ptr_null(etl_decoder_provider_name(d, &test_guid));
        ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 0);
        etl_decoder_close(d);
    }
}
END_TEST

/* Not XML, no guid, not a manifest: refused with the file and the line; an earlier manifest stays. */
START_TEST(bad_files)
{
    static const struct { const char *xml; const char *what; } cases[] = {
        { "<instrumentationManifest>\n<instrumentation>\n<events>\n</instrumentation>",
          ":4: not a manifest: XML: Premature end of data in tag instrumentation line 2" },
        { "not xml at all", ":1: not a manifest: XML: Start tag expected" },
        { "", ":1: not a manifest: XML:" },
        { HEAD "\n<provider name=\"P\">\n</provider>" TAIL, ":2: provider P has no guid" },
        { HEAD "<provider name=\"P\" guid=\"{1234}\"/>" TAIL, ":1: provider P: guid {1234} is not a GUID" },
        { HEAD "<provider guid=\"" TEST_GUID "\"/>" TAIL, ":1: a provider without a name" },
        { "<root>\n<x/>\n</root>", ":1: not a manifest: no instrumentation element" },
        { HEAD TAIL, ":1: no provider in the instrumentation element" },
        { HEAD "<provider name=\"P\" guid=\"" TEST_GUID "\"/>\n<provider name=\"Q\" guid=\"" TEST_GUID "\"/>" TAIL,
          ":2: provider Q: guid " TEST_GUID " is that of provider P too" },
    };
    const char *dir = test_dir_create();
    etl_decoder *d = open_decoder();
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;

    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(add_xml(d, versions_xml, "versions.man"), ETL_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = test_dir_path("bad.man");
        char want[512];
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fputs(cases[i].xml, f);
        fclose(f);
        ck_assert_int_eq(etl_decoder_add_manifest(d, path), ETL_FAILED);
        snprintf(want, sizeof want, "%s%s", path, cases[i].what);
        ck_assert_msg(strncmp(etl_decoder_error(d), want, strlen(want)) == 0, "case %zu: \"%s\", want \"%s\"", i,
                      etl_decoder_error(d), want);
    }
    ck_assert_int_eq(etl_decoder_add_manifest(d, test_dir_path("none.man")), ETL_FAILED);
    ck_assert_msg(strstr(etl_decoder_error(d), "none.man: No such file or directory"), "%s", etl_decoder_error(d));
    /* the first manifest still decodes */
    p.n = 0;
    u32(&p, 1);
    u32(&p, 2);
    ev = event_of(&test_guid, 1, 2, &p);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.provider_name, "Test-Versions");
    etl_decoder_close(d);
    test_dir_remove();
}
END_TEST

/* ---------------------------------------------------------------- files, directories, ETL_MANIFEST_PATH */

static void write_file(const char *path, const char *text_)
{
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    fputs(text_, f);
    fclose(f);
}

/* A manifest of one provider named name, GUID guid, whose event 1 has task task. */
static void one_provider(char *out, size_t size, const char *name, const char *guid, const char *task)
{
    snprintf(out, size,
             HEAD "<provider name=\"%s\" guid=\"%s\"><tasks><task name=\"%s\" value=\"1\"/></tasks>"
                  "<events><event value=\"1\" task=\"%s\"/></events></provider>" TAIL,
             name, guid, task, task);
}

START_TEST(directory)
{
    const char *dir = test_dir_create();
    char xml[2048], sub[1024];
    etl_decoder *d = open_decoder();
    etl_guid ga, gb;

    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(etl_guid_parse("aaaaaaaa-0000-0000-0000-000000000001", &ga), ETL_OK);
    ck_assert_int_eq(etl_guid_parse("bbbbbbbb-0000-0000-0000-000000000002", &gb), ETL_OK);
    one_provider(xml, sizeof xml, "Dir-A", "{aaaaaaaa-0000-0000-0000-000000000001}", "TA");
    write_file(test_dir_path("a.man"), xml);
    one_provider(xml, sizeof xml, "Dir-B", "{bbbbbbbb-0000-0000-0000-000000000002}", "TB");
    write_file(test_dir_path("b.XML"), xml);
    write_file(test_dir_path("c.man"), "<broken>\n\n<");
    write_file(test_dir_path("notes.txt"), "not a manifest, not read");
    snprintf(sub, sizeof sub, "%s", test_dir_path("sub.man")); /* a directory named like a manifest */
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(etl_decoder_add_manifest(d, dir), ETL_FAILED);
    /* the one that did not load, alone: notes.txt and the directory sub.man are not read */
    ck_assert_msg(strstr(etl_decoder_error(d), "/c.man:3: not a manifest: XML: Premature end of data") &&
                  !strstr(etl_decoder_error(d), "more manifests"), "%s", etl_decoder_error(d));
    ck_assert_str_eq(etl_decoder_provider_name(d, &ga), "Dir-A");
    ck_assert_str_eq(etl_decoder_provider_name(d, &gb), "Dir-B");
    etl_decoder_close(d);
    rmdir(sub);
    test_dir_remove();
}
END_TEST

START_TEST(etl_manifest_path)
{
    const char *dir = test_dir_create();
    char xml[2048], env[4096], adir[1024], bfile[1024];
    etl_decoder_options o = { 0, on_warning, NULL };
    etl_decoder *d = NULL;
    etl_guid ga, gb;
    etl_decoded_event e;
    etl_event ev;

    ck_assert_ptr_nonnull(dir);
    ck_assert_str_eq(etl_decoder_default_directory(), ETL_MANIFEST_DIR);
    ck_assert_int_eq(etl_guid_parse("aaaaaaaa-0000-0000-0000-000000000001", &ga), ETL_OK);
    ck_assert_int_eq(etl_guid_parse("bbbbbbbb-0000-0000-0000-000000000002", &gb), ETL_OK);
    snprintf(adir, sizeof adir, "%s", test_dir_path("adir"));
    ck_assert_int_eq(mkdir(adir, 0700), 0);
    one_provider(xml, sizeof xml, "Path-A", "{aaaaaaaa-0000-0000-0000-000000000001}", "TA");
    snprintf(env, sizeof env, "%s/a.man", adir);
    write_file(env, xml);
    snprintf(bfile, sizeof bfile, "%s", test_dir_path("b.man"));
    one_provider(xml, sizeof xml, "Path-B", "{bbbbbbbb-0000-0000-0000-000000000002}", "TB");
    write_file(bfile, xml);

    /* a directory, an empty entry, a file */
    snprintf(env, sizeof env, "%s::%s", adir, bfile);
    setenv("ETL_MANIFEST_PATH", env, 1);
    warnings[0] = '\0';
    nwarnings = 0;
    ck_assert_msg(etl_decoder_open(&d, &o) == ETL_OK, "%s", d ? etl_decoder_error(d) : "");
    ck_assert_str_eq(etl_decoder_provider_name(d, &ga), "Path-A");
    ck_assert_str_eq(etl_decoder_provider_name(d, &gb), "Path-B");
    ev = event_of(&gb, 1, 0, NULL);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "Path-B/TB");
    etl_decoder_close(d);

    /* an entry that does not exist: a warning, the others loaded */
    snprintf(env, sizeof env, "%s/nowhere.man:%s", dir, bfile);
    setenv("ETL_MANIFEST_PATH", env, 1);
    warnings[0] = '\0';
    nwarnings = 0;
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_WARN);
    ck_assert_msg(strstr(etl_decoder_error(d), "ETL_MANIFEST_PATH: ") &&
                  strstr(etl_decoder_error(d), "nowhere.man: No such file or directory"), "%s", etl_decoder_error(d));
    ck_assert_int_eq(nwarnings, 1);
    ck_assert_str_eq(etl_decoder_provider_name(d, &gb), "Path-B");
    etl_decoder_close(d);

    /* ETL_DECODER_NO_DEFAULTS reads none */
    o.flags = ETL_DECODER_NO_DEFAULTS;
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_OK);
    ck_assert_ptr_null(etl_decoder_provider_name(d, &gb));
    etl_decoder_close(d);
    unsetenv("ETL_MANIFEST_PATH");
    unlink(test_dir_path("adir/a.man"));
    rmdir(adir);
    test_dir_remove();
}
END_TEST

/* A later manifest's provider replaces an earlier one's of the same GUID, and no other. */
START_TEST(replace_provider)
{
    etl_decoder *d = open_decoder();
    static const char first[] = HEAD
        "<provider name=\"Old-Name\" guid=\"" TEST_GUID "\"><tasks><task name=\"Old\" value=\"1\"/></tasks>"
        "<events><event value=\"1\" task=\"Old\"/><event value=\"2\" task=\"Old\"/></events></provider>"
        "<provider name=\"Other\" guid=\"{99999999-0000-0000-0000-000000000009}\"><events><event value=\"1\" symbol=\"O\"/>"
        "</events></provider>" TAIL;
    static const char second[] = HEAD
        "<provider name=\"New-Name\" guid=\"" TEST_GUID "\"><tasks><task name=\"New\" value=\"1\"/></tasks>"
        "<events><event value=\"1\" task=\"New\"/></events></provider>" TAIL;
    etl_decoded_event e;
    etl_event ev = event_of(&test_guid, 1, 0, NULL);
    etl_guid other;

    ck_assert_int_eq(etl_guid_parse("99999999-0000-0000-0000-000000000009", &other), ETL_OK);
    ck_assert_int_eq(add_xml(d, first, "first.man"), ETL_OK);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "Old-Name/Old");
    ck_assert_int_eq(add_xml(d, second, "second.man"), ETL_OK);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "New-Name/New");
    ck_assert_str_eq(etl_decoder_provider_name(d, &test_guid), "New-Name");
    ev.id = 2; /* only the first defined it: gone with it */
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 0);
    ev = event_of(&other, 1, 0, NULL);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 1);
    ck_assert_str_eq(e.event_name, "Other/O");
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- EventSource manifests */

static const etl_guid es_guid = { 0x4f8f06bf, 0x8261, 0x4099, { 0xae, 0x5f, 0x07, 0xc5, 0x4b, 0xbc, 0xfa, 0xb3 } };

/* An EventSource-style manifest of es_guid; its event 1 has one field, named field. */
static size_t es_manifest(char *out, size_t size, const char *field_name, size_t padding)
{
    int n = snprintf(out, size,
                     "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                     " <instrumentation xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" "
                     "xmlns:win=\"http://manifests.microsoft.com/win/2004/08/windows/events\">\n"
                     "  <events xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
                     "<provider name=\"Test-EventSource\" guid=\"{4f8f06bf-8261-4099-ae5f-07c54bbcfab3}\" symbol=\"S\">\n"
                     " <tasks><task name=\"Hello\" message=\"$(string.task_Hello)\" value=\"65533\"/></tasks>\n"
                     " <events><event value=\"1\" version=\"0\" level=\"win:Informational\" symbol=\"Hello\" "
                     "task=\"Hello\" template=\"HelloArgs\"/></events>\n"
                     " <templates><template tid=\"HelloArgs\"><data name=\"%s\" inType=\"win:Int32\"/></template></templates>\n"
                     "</provider>\n</events>\n</instrumentation>\n"
                     "<localization><resources culture=\"en-US\"><stringTable>"
                     "<string id=\"task_Hello\" value=\"Hello\"/></stringTable></resources></localization>\n"
                     "<!-- %*s -->\n</instrumentationManifest>\n",
                     field_name, (int)padding, "");
    ck_assert_int_lt(n, (int)size);
    return (size_t)n;
}

/* A ManifestData event carrying chunk number of total, bytes [from, from + n) of xml. */
static etl_event es_chunk(struct buf *p, const char *xml, size_t from, size_t n, uint16_t total, uint16_t number)
{
    etl_event ev;

    p->n = 0;
    u8(p, 1);    /* Format: SimpleXmlFormat */
    u8(p, 1);    /* MajorVersion */
    u8(p, 0);    /* MinorVersion */
    u8(p, 0x5B); /* Magic */
    u16(p, total);
    u16(p, number);
    put(p, xml + from, n);
    ev = event_of(&es_guid, 65534, 1, p);
    ev.opcode = 254;
    ev.task = 65534;
    return ev;
}

/* Event 1 of es_guid: ETL_OK with its one field's name in *name, or 0 when undecoded. */
static int es_decode(etl_decoder *d, const char **name)
{
    static struct buf p;
    etl_decoded_event e;
    etl_event ev;
    int rc;

    p.n = 0;
    u32(&p, 7);
    ev = event_of(&es_guid, 1, 0, &p);
    rc = etl_decoder_decode(d, &ev, &e);
    if (rc != 1) return rc;
    ck_assert_int_eq(e.source, ETL_SCHEMA_EVENTSOURCE);
    ck_assert_str_eq(e.event_name, "Test-EventSource/Hello");
    ck_assert_uint_eq(e.field_count, 1);
    ck_assert_int_eq(ival(&e.fields[0]), 7);
    *name = e.fields[0].name;
    return rc;
}

START_TEST(eventsource_chunks)
{
    static char xml[8192], xml2[8192];
    static struct buf p;
    size_t n = es_manifest(xml, sizeof xml, "Value", 0), third = n / 3, n2;
    const char *name = NULL;
    etl_decoder *d = open_decoder();
    etl_decoded_event e;
    etl_event ev;

    /* out of order: 2, 0, 1; nothing before the last; each chunk again is harmless */
    ck_assert_int_eq(es_decode(d, &name), 0);
    ev = es_chunk(&p, xml, 2 * third, n - 2 * third, 3, 2);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ev = es_chunk(&p, xml, 0, third, 3, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ev = es_chunk(&p, xml, 2 * third, n - 2 * third, 3, 2);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ck_assert_int_eq(es_decode(d, &name), 0);
    /* the last chunk through etl_decoder_decode, which learns by itself */
    ev = es_chunk(&p, xml, third, third, 3, 1);
    ck_assert_int_eq(etl_decoder_decode(d, &ev, &e), 0); /* the ManifestData event itself has no schema */
    ck_assert_int_eq(es_decode(d, &name), 1);
    ck_assert_str_eq(name, "Value");
    ck_assert_str_eq(etl_decoder_provider_name(d, &es_guid), "Test-EventSource");
    ck_assert_int_eq(nwarnings, 0);

    /* a new manifest: its first chunk starts anew, what came before it of another is dropped */
    n2 = es_manifest(xml2, sizeof xml2, "Renamed", 0);
    ev = es_chunk(&p, xml, 0, third, 2, 0); /* a stray first chunk of two */
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ev = es_chunk(&p, xml2, 0, n2 / 2, 2, 0); /* the first chunk again: a new manifest */
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ev = es_chunk(&p, xml2, n2 / 2, n2 - n2 / 2, 2, 1);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ck_assert_int_eq(es_decode(d, &name), 1);
    ck_assert_str_eq(name, "Renamed");

    /* in one chunk, with a terminator after it */
    {
        static char one[8192];
        size_t k = es_manifest(one, sizeof one, "Single", 0);
        ev = es_chunk(&p, one, 0, k + 1, 1, 0);
        ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
        ck_assert_int_eq(es_decode(d, &name), 1);
        ck_assert_str_eq(name, "Single");
    }
    ck_assert_int_eq(nwarnings, 0);
    etl_decoder_close(d);
}
END_TEST

/* The same manifest sent again (EventSources send it at each enable) is not read again: a
   manifest loaded since for the provider stays. */
START_TEST(eventsource_sent_again)
{
    static char xml[8192], file[8192];
    static struct buf p;
    size_t n = es_manifest(xml, sizeof xml, "InBand", 0);
    const char *name = NULL;
    etl_decoder *d = open_decoder();
    etl_event ev;

    ev = es_chunk(&p, xml, 0, n, 1, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ck_assert_int_eq(es_decode(d, &name), 1);
    ck_assert_str_eq(name, "InBand");
    es_manifest(file, sizeof file, "FromFile", 0);
    ck_assert_int_eq(add_xml(d, file, "file.man"), ETL_OK);
    ev = es_chunk(&p, xml, 0, n, 1, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    {
        static struct buf q;
        etl_decoded_event e;
        etl_event x;
        q.n = 0;
        u32(&q, 7);
        x = event_of(&es_guid, 1, 0, &q);
        ck_assert_int_eq(etl_decoder_decode(d, &x, &e), 1);
        ck_assert_int_eq(e.source, ETL_SCHEMA_MANIFEST);
        ck_assert_str_eq(e.fields[0].name, "FromFile");
    }
    etl_decoder_close(d);
}
END_TEST

START_TEST(eventsource_refused)
{
    static char xml[8192];
    static struct buf p;
    size_t n = es_manifest(xml, sizeof xml, "Value", 0);
    etl_decoder *d = open_decoder();
    const char *name;
    etl_event ev;

    /* not a ManifestEnvelope */
    ev = es_chunk(&p, xml, 0, n, 1, 0);
    p.b[3] = 0x5C;
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    ck_assert_msg(strstr(etl_decoder_error(d), "EventSource manifest of provider 4f8f06bf-8261-4099-ae5f-07c54bbcfab3") &&
                  strstr(etl_decoder_error(d), "not a ManifestEnvelope"), "%s", etl_decoder_error(d));
    ev = es_chunk(&p, xml, 0, n, 2, 2);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    ck_assert_msg(strstr(etl_decoder_error(d), "chunk 2 of 2"), "%s", etl_decoder_error(d));
    ev = es_chunk(&p, xml, 0, 0, 1, 0);
    ev.payload_len = 5;
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    /* not XML */
    ev = es_chunk(&p, "<<<", 0, 3, 1, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    ck_assert_msg(strstr(etl_decoder_error(d), "EventSource manifest of provider 4f8f06bf-8261-4099-ae5f-07c54bbcfab3:1: "
                                               "not a manifest: XML") &&
                  strstr(etl_decoder_error(d), "(the manifest the ManifestData event at offset"), "%s", etl_decoder_error(d));
    /* a manifest of another provider only */
    {
        static char other[8192];
        char *g;
        memcpy(other, xml, n + 1);
        g = strstr(other, "4f8f06bf");
        memcpy(g, "5f8f06bf", 8);
        ev = es_chunk(&p, other, 0, n, 1, 0);
        ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
        ck_assert_msg(strstr(etl_decoder_error(d), "it describes 1 other provider, not this one"), "%s",
                      etl_decoder_error(d));
    }
    ck_assert_int_eq(es_decode(d, &name), 0);
    ck_assert_int_eq(nwarnings, 5);
    etl_decoder_close(d);
}
END_TEST

/* A hostile trace: more chunks than one manifest may have, chunks past 16 MiB, more providers
   than are put together at once. Warnings, no gigabytes, and a good manifest after them. */
START_TEST(eventsource_hostile)
{
    static char xml[8192];
    static struct buf p;
    size_t n = es_manifest(xml, sizeof xml, "Value", 0);
    static char big[70000];
    etl_decoder *d = open_decoder();
    const char *name;
    etl_event ev;
    int rc = ETL_OK;
    uint16_t k;

    ev = es_chunk(&p, xml, 0, 100, 65535, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    ck_assert_msg(strstr(etl_decoder_error(d), "65535 chunks of up to 65280 bytes: more than the 16 MiB kept for one manifest"),
                  "%s", etl_decoder_error(d));
    /* 257 chunks are allowed, but not 66000 bytes in each */
    memset(big, ' ', sizeof big);
    for (k = 0; k < 257 && rc == ETL_OK; k++) {
        ev = es_chunk(&p, big, 0, 66000, 257, k);
        rc = etl_decoder_learn(d, &ev);
    }
    ck_assert_int_eq(rc, ETL_WARN);
    ck_assert_uint_eq(k, 255); /* the 255th chunk would pass 16 MiB */
    ck_assert_msg(strstr(etl_decoder_error(d), "more than 16 MiB: left out"), "%s", etl_decoder_error(d));
    /* 256 providers' manifests incomplete at once, and one more */
    for (uint32_t i = 0; i <= 256; i++) {
        ev = es_chunk(&p, xml, 0, 10, 2, 0);
        ev.provider.data1 = 0x70000000u + i;
        rc = etl_decoder_learn(d, &ev);
        ck_assert_int_eq(rc, i < 256 ? ETL_OK : ETL_WARN);
    }
    ck_assert_msg(strstr(etl_decoder_error(d), "more than 256 providers' manifests are incomplete at once"), "%s",
                  etl_decoder_error(d));
    /* the good one still gets through */
    ev = es_chunk(&p, xml, 0, n, 1, 0);
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN); /* still 256 others pending */
    etl_decoder_close(d);

    d = open_decoder();
    for (k = 0; k < 255; k++) {
        ev = es_chunk(&p, big, 0, 66000, 257, k);
        rc = etl_decoder_learn(d, &ev);
    }
    ev = es_chunk(&p, xml, 0, n, 1, 0); /* another manifest of the provider: starts anew */
    ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_OK);
    ck_assert_int_eq(es_decode(d, &name), 1);
    ck_assert_int_le(nwarnings, 100);
    etl_decoder_close(d);
}
END_TEST

/* A flood of bad chunks: each call says so, the callback hears of the first 100. */
START_TEST(eventsource_warning_limit)
{
    static struct buf p;
    etl_decoder *d = open_decoder();
    etl_event ev;

    for (int i = 0; i < 1000; i++) {
        ev = es_chunk(&p, "x", 0, 1, 1, 3);
        ck_assert_int_eq(etl_decoder_learn(d, &ev), ETL_WARN);
    }
    ck_assert_int_eq(nwarnings, 100);
    etl_decoder_close(d);
}
END_TEST

/* ---------------------------------------------------------------- random damage */

/* Manifests with bytes changed at random, as files and as EventSource manifests in chunks:
   each is loaded or refused with a message, and what loaded decodes payloads without reading
   past them (ASan in CI). */
START_TEST(random_damage)
{
    static const char *const sources[] = { types_xml, refs_xml, structs_xml, names_xml, versions_xml };
    static char xml[16384];
    static struct buf p;
    uint32_t seed = 0x5eed1234u;
    unsigned loaded = 0, refused = 0;

    for (int round = 0; round < 600; round++) {
        etl_decoder *d = open_decoder();
        const char *src = sources[round % 5];
        size_t n = strlen(src);
        int flips = 1 + round % 3, rc;
        char *err;
        memcpy(xml, src, n + 1);
        for (int k = 0; k < flips; k++) {
            seed = seed * 1103515245u + 12345u;
            static const char syntax[] = "<>\"=/ 0x9A-:"; /* what XML and numbers are made of */
            xml[(seed >> 8) % n] = (seed >> 24 & 1) ? syntax[(seed >> 16) % (sizeof syntax - 1)] : (char)(uint8_t)(seed >> 16);
        }
        rc = etl_decoder_add_manifest_memory(d, xml, n, "damaged.man");
        err = (char *)etl_decoder_error(d);
        if (rc == ETL_OK) {
            loaded++;
        } else {
            ck_assert_int_eq(rc, ETL_FAILED);
            ck_assert_msg(strncmp(err, "damaged.man:", 12) == 0, "%s", err);
            refused++;
        }
        /* decode events 1 and 2 of every version over short and long payloads */
        for (uint32_t len = 0; len < 64; len += 7) {
            p.n = 0;
            for (uint32_t i = 0; i < len; i++) u8(&p, (uint8_t)(seed >> (i % 24)));
            for (uint16_t id = 1; id <= 2; id++) {
                etl_decoded_event e;
                etl_event ev = event_of(&test_guid, id, (uint8_t)(len % 3), &p);
                uint8_t *copy = malloc(len ? len : 1); /* exactly len bytes, so ASan sees any overread */
                memcpy(copy, p.b, len);
                ev.payload = copy;
                rc = etl_decoder_decode(d, &ev, &e);
                ck_assert(rc == 1 || rc == 0 || rc == ETL_FAILED);
                ck_assert_uint_le(e.payload_used, len);
                free(copy);
            }
        }
        /* the same bytes as an EventSource manifest in two chunks */
        {
            etl_event ev = es_chunk(&p, xml, 0, n / 2, 2, 0);
            rc = etl_decoder_learn(d, &ev);
            ck_assert(rc == ETL_OK || rc == ETL_WARN);
            ev = es_chunk(&p, xml, n / 2, n - n / 2, 2, 1);
            rc = etl_decoder_learn(d, &ev);
            ck_assert(rc == ETL_OK || rc == ETL_WARN);
        }
        etl_decoder_close(d);
    }
    /* both happen: the damage is not all refused, nor all harmless */
    fprintf(stderr, "random_damage: %u damaged manifests loaded, %u refused\n", loaded, refused);
    ck_assert_uint_gt(loaded, 20);
    ck_assert_uint_gt(refused, 20);
}
END_TEST

/* ---------------------------------------------------------------- real traces */

/* Every event of a sample, copied, with its milliseconds since the first. */
struct stored {
    etl_event ev;
    double ms;
};

static long read_sample(const char *name, struct stored **out)
{
    etl_reader *r = NULL;
    etl_event ev;
    struct stored *v = NULL;
    long n = 0, cap = 0;
    int64_t t0 = 0;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(name), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        uint8_t *copy;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            v = realloc(v, (size_t)cap * sizeof *v);
            ck_assert_ptr_nonnull(v);
        }
        if (!n) t0 = etl_reader_time_ns(r, ev.timestamp);
        copy = malloc(ev.payload_len ? ev.payload_len : 1);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, ev.payload, ev.payload_len);
        v[n].ev = ev;
        v[n].ev.payload = copy;
        v[n].ev.record = NULL;
        v[n].ev.ext = NULL;
        v[n].ev.ext_len = 0;
        v[n].ev.ext_count = 0;
        v[n].ms = (double)(etl_reader_time_ns(r, ev.timestamp) - t0) / 1e6;
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    *out = v;
    return n;
}

static void free_sample(struct stored *v, long n)
{
    for (long i = 0; i < n; i++) free((void *)v[i].ev.payload);
    free(v);
}

/* Fields TraceEvent computes for an event, that no manifest has. */
static const struct { const char *event, *field; } te_computed[] = {
    { "GC/HeapStats", "TotalHeapSize" }, { "GC/HeapStats", "TotalPromoted" }, { "GC/HeapStats", "Depth" },
    { "GC/FinalizeObject", "TypeName" },
};

/* Fields of later versions than libetl/manifests/ClrEtwAll.man has (its README says so). */
static const struct { const char *event, *field; } manifest_older[] = {
    { "GC/AllocationTick", "ObjectSize" },                                       /* version 4; it has 3 */
    { "GC/HeapStats", "GenerationSize4" }, { "GC/HeapStats", "TotalPromotedSize4" }, /* version 2; it has 1 */
};

/* Events the manifest does not have at all: TraceEvent decodes them with its own parsers. */
static const struct { const char *event; uint16_t id; } manifest_lacks[] = {
    { "GC/MarkWithType", 202 }, { "GC/PerHeapHistory", 204 }, { "GC/GlobalHeapHistory", 205 },
    { "GC/LOHCompact", 208 }, { "GC/FitBucketInfo", 209 },
};

/* Values whose names TraceEvent's own enums know and the manifest's maps do not. */
static const struct { const char *event, *field; uint64_t value; const char *name; } map_lacks[] = {
    { "GC/CreateSegment", "Type", 3, "PinnedObjectHeap" }, { "Runtime/Start", "StartupMode", 0, "None" },
};

static int listed_in(const char *event, const char *fieldname, const void *table, size_t n, size_t stride)
{
    for (size_t i = 0; i < n; i++) {
        const char *const *row = (const char *const *)((const char *)table + i * stride);
        if (strcmp(row[0], event) == 0 && strcmp(row[1], fieldname) == 0) return 1;
    }
    return 0;
}

/* One listed field against ours; a message on mismatch, else "". */
static void compare_field(const char *event, const etl_field *f, const char *fname, const char *listed, char *why,
                          size_t size)
{
    uint64_t v;

    if (baseline_field_equal(f, listed, why, size)) return;
    /* names TraceEvent's own enums give a value the manifest's map does not name */
    if (f->map && etl_field_uint(f, &v) == ETL_OK) {
        for (size_t i = 0; i < sizeof map_lacks / sizeof *map_lacks; i++) {
            if (strcmp(map_lacks[i].event, event) == 0 && strcmp(map_lacks[i].field, fname) == 0 &&
                map_lacks[i].value == v && strcmp(map_lacks[i].name, listed) == 0) {
                why[0] = '\0';
                return;
            }
        }
    }
}

/* ../shared/baselines' listing of perfview_gcevents_PerfViewData.etl, against the sample decoded
   with ClrEtwAll.man: every listed event found (time, pid, tid, name), every field the same. */
START_TEST(gcevents_baseline)
{
    struct stored *ev;
    long n = read_sample("samples/perfview_gcevents_PerfViewData.etl", &ev);
    size_t size;
    char *listing = (char *)test_read_file(testdata_path("baselines/perfview_gcevents_PerfViewData.baseline.txt"), &size);
    etl_decoder *d = open_decoder();
    char *line, *save = NULL;
    unsigned events = 0, matched = 0, fields = 0, computed = 0, older = 0, lacking = 0, header = 0, counted = 0;
    static const char provider[] = "Microsoft-Windows-DotNETRuntime/";

    ck_assert_ptr_nonnull(listing);
    listing = realloc(listing, size + 1);
    listing[size] = '\0';
    ck_assert_int_eq(etl_decoder_add_manifest(d, manifest_path("ClrEtwAll.man")), ETL_OK);
    for (line = strtok_r(listing, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[256], *p, *colon, *sp, *tok, *tsave = NULL;
        double ms;
        uint32_t pid = 0, tid = 0, datalen = 0;
        char tbuf[32];
        size_t k = 0;
        long found = -1;
        const char *short_name;
        etl_decoded_event e;
        int rc, lacks = -1;

        if (strncmp(line, "COUNT ", 6) == 0) {
            /* COUNT <name>:<n>: as many of that name as the trace has */
            char *c = strrchr(line, ':');
            long want = atol(c + 1), have = 0;
            *c = '\0';
            for (long i = 0; i < n; i++) {
                rc = etl_decoder_decode(d, &ev[i].ev, &e);
                if (rc == 1 && strcmp(e.event_name, line + 6) == 0) have++;
            }
            if (strncmp(line + 6, provider, strlen(provider)) == 0) {
                const char *sn = line + 6 + strlen(provider);
                for (size_t i = 0; i < sizeof manifest_lacks / sizeof *manifest_lacks; i++) {
                    if (strcmp(manifest_lacks[i].event, sn) != 0) continue;
                    for (long j = 0; j < n; j++) have += ev[j].ev.kind == ETL_KIND_EVENT && ev[j].ev.id == manifest_lacks[i].id;
                }
                ck_assert_msg(have == want, "%s: %ld in the trace, listed %ld", line + 6, have, want);
                counted++;
            }
            continue;
        }
        ck_assert_msg(strncmp(line, "EVENT ", 6) == 0, "%s", line);
        events++;
        colon = strchr(line + 6, ':');
        for (p = line + 6; p < colon && k < sizeof tbuf - 1; p++)
            if (*p != ',') tbuf[k++] = *p;
        tbuf[k] = '\0';
        ms = atof(tbuf);
        p = colon + 2;
        sp = strstr(p, " PID=");
        ck_assert_ptr_nonnull(sp);
        snprintf(name, sizeof name, "%.*s", (int)(sp - p), p);
        p = sp + 1;
        /* PID, TID, PName, ProceNum, DataLen, then the fields */
        for (tok = strtok_r(p, ";", &tsave); tok; tok = strtok_r(NULL, ";", &tsave)) {
            while (*tok == ' ') tok++;
            if (strncmp(tok, "PID=", 4) == 0) pid = (uint32_t)atol(tok + 4);
            else if (strncmp(tok, "TID=", 4) == 0) tid = (uint32_t)atol(tok + 4);
            else if (strncmp(tok, "DataLen=", 8) == 0) { datalen = (uint32_t)atol(tok + 8); break; }
        }
        /* the listing rounds to microseconds: the nearest event within that */
        for (long i = 0; i < n; i++) {
            double diff = fabs(ev[i].ms - ms);
            if (diff > 0.0006 || ev[i].ev.pid != pid || ev[i].ev.tid != tid) continue;
            if (strcmp(name, "Windows Kernel/EventTrace") == 0 ? ev[i].ev.kind != ETL_KIND_SYSTEM || ev[i].ev.opcode != 0
                                                               : ev[i].ev.kind != ETL_KIND_EVENT)
                continue;
            if (found < 0 || diff < fabs(ev[found].ms - ms)) found = i;
        }
        ck_assert_msg(found >= 0, "not found: %s at %.3f ms, pid %u tid %u", name, ms, pid, tid);
        ck_assert_uint_eq(ev[found].ev.payload_len, datalen);
        rc = etl_decoder_decode(d, &ev[found].ev, &e);
        if (strcmp(name, "Windows Kernel/EventTrace") == 0) {
            /* the logfile header: the kernel's classes decode it (another part of libetl) */
            header++;
            continue;
        }
        ck_assert_msg(strncmp(name, provider, strlen(provider)) == 0, "%s", name);
        short_name = name + strlen(provider);
        for (size_t i = 0; i < sizeof manifest_lacks / sizeof *manifest_lacks; i++)
            if (strcmp(manifest_lacks[i].event, short_name) == 0) lacks = (int)i;
        if (lacks >= 0) {
            ck_assert_uint_eq(ev[found].ev.id, manifest_lacks[lacks].id);
            ck_assert_msg(rc == 0, "%s: the manifest has it now: check its fields", name);
            lacking++;
            continue;
        }
        ck_assert_msg(rc == 1, "%s at %.3f ms: %d %s", name, ms, rc, etl_decoder_error(d));
        ck_assert_str_eq(e.event_name, name);
        matched++;
        /* the fields */
        for (; tok; tok = strtok_r(NULL, ";", &tsave)) {
            char *eq, why[4096];
            const etl_field *f = NULL;
            while (*tok == ' ') tok++;
            if (!*tok || strncmp(tok, "DataLen=", 8) == 0) continue;
            eq = strchr(tok, '=');
            ck_assert_ptr_nonnull(eq);
            *eq = '\0';
            if (listed_in(short_name, tok, te_computed, sizeof te_computed / sizeof *te_computed, sizeof *te_computed)) {
                computed++;
                continue;
            }
            for (uint32_t i = 0; i < e.field_count; i++)
                if (e.fields[i].depth == 0 && strcmp(e.fields[i].name, tok) == 0) f = &e.fields[i];
            if (listed_in(short_name, tok, manifest_older, sizeof manifest_older / sizeof *manifest_older,
                          sizeof *manifest_older)) {
                ck_assert_msg(!f, "%s: %s is in the manifest now: compare it", name, tok);
                older++;
                continue;
            }
            ck_assert_msg(f != NULL, "%s at %.3f ms: no field %s", name, ms, tok);
            compare_field(short_name, f, tok, eq + 1, why, sizeof why);
            ck_assert_msg(why[0] == '\0', "at %.3f ms: %s", ms, why);
            fields++;
        }
    }
    /* what the listing holds: 52 events (the logfile header, 40 the manifest decodes, 11 of
       events it lacks) and 20 counts of DotNETRuntime events */
    ck_assert_uint_eq(events, 52);
    ck_assert_uint_eq(header, 1);
    ck_assert_uint_eq(matched, 40);
    ck_assert_uint_eq(lacking, 11);
    ck_assert_uint_eq(counted, 20);
    fprintf(stderr, "gcevents_baseline: %u events matched, %u fields equal, %u computed by TraceEvent, %u of later "
                    "versions, %u events the manifest lacks\n", matched, fields, computed, older, lacking);
    ck_assert_uint_ge(fields, 150);
    free(listing);
    free_sample(ev, n);
    etl_decoder_close(d);
}
END_TEST

/* tx_HTTP_Server.etl with HTTP_Server.man: every event but the logfile header decodes, these
   many of each, and values read from the bytes by hand. */
START_TEST(http_server)
{
    static const struct { const char *name; long count; } want[] = {
        { "HTTP Request Trace Task/RecvReq", 291 }, { "HTTP Request Trace Task/Parse", 291 },
        { "HTTP Request Trace Task/Deliver", 291 }, { "HTTP Logging Trace Task/LogFileWrite", 291 },
        { "HTTP Request Trace Task/FastSend", 289 }, { "HTTP Request Trace Task/FastRespLast", 289 },
        { "HTTP Request Trace Task/FastResp", 289 }, { "HTTP Request Trace Task/SendComplete", 2 },
        { "HTTP Request Trace Task/RecvRespLast", 2 }, { "HTTP Request Trace Task/RecvResp", 2 },
        { "HTTP Connection Trace Task/ConnIdAssgn", 2 }, { "HTTP Connection Trace Task/ConnConnect", 2 },
    };
    long have[sizeof want / sizeof *want] = { 0 };
    struct stored *ev;
    long n = read_sample("samples/tx_HTTP_Server.etl", &ev), decoded = 0, none = 0;
    etl_decoder *d = open_decoder();
    int first_connect = 1, first_parse = 1, first_fastresp = 1, first_log = 1;

    ck_assert_int_eq(etl_decoder_add_manifest(d, manifest_path("HTTP_Server.man")), ETL_OK);
    for (long i = 0; i < n; i++) {
        etl_decoded_event e;
        int rc = etl_decoder_decode(d, &ev[i].ev, &e);
        const char *sn;
        ck_assert_msg(rc >= 0, "%s", etl_decoder_error(d));
        if (ev[i].ev.kind == ETL_KIND_SYSTEM) { /* the logfile header: the kernel's class */
            ck_assert_int_eq(e.source, ETL_SCHEMA_KERNEL);
            none++;
            continue;
        }
        ck_assert_int_eq(rc, 1);
        decoded++;
        ck_assert_uint_eq(e.payload_used, ev[i].ev.payload_len);
        ck_assert(strncmp(e.event_name, "Microsoft-Windows-HttpService/", 30) == 0);
        sn = e.event_name + 30;
        for (size_t k = 0; k < sizeof want / sizeof *want; k++)
            if (strcmp(want[k].name, sn) == 0) have[k]++;
        /* payload 10 20 e9 03 80 fa ff ff | 1c 00 00 00 | 17 00 00 50 00 00 00 00 20 01 48 98 ... */
        if (strcmp(sn, "HTTP Connection Trace Task/ConnConnect") == 0 && first_connect) {
            first_connect = 0;
            ck_assert(uval(field(&e, "ConnectionObj")) == 0xfffffa8003e92010ull);
            ck_assert_uint_eq(uval(field(&e, "LocalAddrLength")), 28);
            ck_assert_uint_eq(field(&e, "LocalAddr")->out_type, ETL_OUT_SOCKET_ADDRESS);
            ck_assert_str_eq(text(field(&e, "LocalAddr")), "[2001:4898:0:fff:0:5efe:a78:109d]:80");
            ck_assert_str_eq(text(field(&e, "RemoteAddr")), "[2001:4898:0:fff:0:5efe:a50:e410]:37837");
        }
        /* 30 45 7c 03 80 fa ff ff | 04 00 00 00 | "http://georgis2:80/windir.txt" in UTF-16 to the end */
        if (strcmp(sn, "HTTP Request Trace Task/Parse") == 0 && first_parse) {
            first_parse = 0;
            ck_assert(uval(field(&e, "RequestObj")) == 0xfffffa80037c4530ull);
            ck_assert_uint_eq(uval(field(&e, "HttpVerb")), 4);
            ck_assert_str_eq(text(field(&e, "Url")), "http://georgis2:80/windir.txt");
        }
        /* 46 01 00 80 00 00 00 fe | 45 01 00 60 00 00 00 fe | 30 01 | "GET" 00 | 82 ba cb 01 | ... */
        if (strcmp(sn, "HTTP Request Trace Task/FastResp") == 0 && first_fastresp) {
            first_fastresp = 0;
            ck_assert(uval(field(&e, "RequestId")) == 0xfe00000080000146ull);
            ck_assert(uval(field(&e, "ConnectionId")) == 0xfe00000060000145ull);
            ck_assert_uint_eq(uval(field(&e, "StatusCode")), 304);
            ck_assert_str_eq(text(field(&e, "Verb")), "GET");
            ck_assert_uint_eq(uval(field(&e, "HeaderLength")), 30128770);
        }
        /* 00 00 00 00 | 28 0e 00 80 ff ff ff ff | 00 00 00 00 (Type: map) ... "CacheMiss" 00 ... */
        if (strcmp(sn, "HTTP Logging Trace Task/LogFileWrite") == 0 && first_log) {
            first_log = 0;
            ck_assert(uval(field(&e, "Handle")) == 0xffffffff80000e28ull);
            ck_assert_uint_eq(uval(field(&e, "Type")), 0);
            ck_assert_str_eq(text(field(&e, "Type")), "ResponseLogging");
            ck_assert_str_eq(text(field(&e, "ResType")), "CacheMiss");
        }
    }
    ck_assert_int_eq(n, 2042);
    ck_assert_int_eq(decoded, 2041);
    ck_assert_int_eq(none, 1);
    for (size_t k = 0; k < sizeof want / sizeof *want; k++)
        ck_assert_msg(have[k] == want[k].count, "%s: %ld, want %ld", want[k].name, have[k], want[k].count);
    ck_assert(!first_connect && !first_parse && !first_fastresp && !first_log);
    free_sample(ev, n);
    etl_decoder_close(d);
}
END_TEST

/* tx_BondEtwSample.etl carries its EventSource's manifest (one ManifestData event, one chunk):
   its 11 events decode with it, and only after it. */
START_TEST(bond_eventsource)
{
    struct stored *ev;
    long n = read_sample("samples/tx_BondEtwSample.etl", &ev), decoded = 0, manifests = 0;
    etl_decoder *d = open_decoder();
    int first = 1;

    for (long i = 0; i < n; i++) {
        etl_decoded_event e;
        int rc = etl_decoder_decode(d, &ev[i].ev, &e);
        ck_assert_int_ge(rc, 0);
        if (ev[i].ev.kind == ETL_KIND_EVENT && ev[i].ev.id == 65534) {
            manifests++;
            continue;
        }
        if (rc == 0 || e.source == ETL_SCHEMA_KERNEL) continue; /* the logfile header is the kernel's */
        ck_assert_int_eq(manifests, 1); /* none decodes before the manifest */
        decoded++;
        ck_assert_int_eq(e.source, ETL_SCHEMA_EVENTSOURCE);
        ck_assert_uint_eq(e.payload_used, ev[i].ev.payload_len);
        if (ev[i].ev.id == 3) {
            ck_assert_str_eq(e.event_name, "MSOpenTech-Tx-BinaryEventSource/WriteManifestPayload");
            ck_assert_str_eq(text(field(&e, "inputProtocol")), "BondManifest");
            ck_assert_str_eq(text(field(&e, "manifestId")), "b2489c04-20df-5987-f505-b0b3c1ec5137");
        } else {
            ck_assert_str_eq(e.event_name, "MSOpenTech-Tx-BinaryEventSource/WriteBinaryPayload");
            ck_assert_uint_eq(uval(field(&e, "eventPayloadSize")), 26);
            ck_assert_uint_eq(field(&e, "eventPayload")->size, 26);
            if (first) {
                first = 0;
                ck_assert(ival(field(&e, "occurenceFileTimeUtc")) == 130901521022992016ll);
                ck_assert_str_eq(text(field(&e, "eventPayload")), "290a31302f32342f32303135490b697465726174696f6e203000");
            }
        }
    }
    ck_assert_int_eq(manifests, 1);
    ck_assert_int_eq(decoded, 11);
    ck_assert_int_eq(nwarnings, 0);
    free_sample(ev, n);
    etl_decoder_close(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("manifest");
    TCase *t = tcase_create("manifest");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, every_in_type);
    tcase_add_test(t, every_out_type);
    tcase_add_test(t, maps);
    tcase_add_test(t, length_and_count);
    tcase_add_test(t, structs);
    tcase_add_test(t, versions);
    tcase_add_test(t, display_names);
    tcase_add_test(t, first_culture);
    tcase_add_test(t, component_manifest);
    tcase_add_test(t, shipped_manifests);
    tcase_add_test(t, bad_manifests);
    tcase_add_test(t, bad_files);
    tcase_add_test(t, directory);
    tcase_add_test(t, etl_manifest_path);
    tcase_add_test(t, replace_provider);
    tcase_add_test(t, eventsource_chunks);
    tcase_add_test(t, eventsource_sent_again);
    tcase_add_test(t, eventsource_refused);
    tcase_add_test(t, eventsource_hostile);
    tcase_add_test(t, eventsource_warning_limit);
    tcase_add_test(t, random_damage);
    tcase_add_test(t, gcevents_baseline);
    tcase_add_test(t, http_server);
    tcase_add_test(t, bond_eventsource);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return check_run(suite()); }
