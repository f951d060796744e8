/* SPDX-License-Identifier: MIT */
/* Decoded fields' values: typed access, and text and JSON as Windows' tools show them (doc/format.md section 18). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

const char *etl_in_type_name(unsigned t)
{
    static const char *const names[] = {
        "Null", "UnicodeString", "AnsiString", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64",
        "UInt64", "Float", "Double", "Boolean", "Binary", "GUID", "Pointer", "FILETIME", "SYSTEMTIME", "SID",
        "HexInt32", "HexInt64", "CountedString", "CountedAnsiString", "Struct", "CountedBinary"
    };

    if (t < sizeof names / sizeof *names) return names[t];
    switch (t) {
    case ETL_IN_COUNTED_STRING_MOF: return "CountedString";
    case ETL_IN_COUNTED_ANSI_STRING_MOF: return "CountedAnsiString";
    case ETL_IN_NON_NULL_TERMINATED_STRING: return "NonNullTerminatedString";
    case ETL_IN_NON_NULL_TERMINATED_ANSI_STRING: return "NonNullTerminatedAnsiString";
    case ETL_IN_UNICODE_CHAR: return "UnicodeChar";
    case ETL_IN_ANSI_CHAR: return "AnsiChar";
    case ETL_IN_SIZET: return "SizeT";
    case ETL_IN_WBEM_SID: return "WbemSid";
    default: return "Unknown";
    }
}

/* ---------------------------------------------------------------- maps */

const char *etl_map_name(const etl_map *m) { return m ? m->name : NULL; }
int etl_map_is_bitmap(const etl_map *m) { return m && m->bitmap; }

static const char *map_lookup(const etl_map *m, uint64_t v)
{
    uint32_t lo = 0, hi = m->entry_count;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->entries[mid].value < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->entry_count && m->entries[lo].value == v ? m->entries[lo].name : NULL;
}

/* snprintf that appends at *o and keeps counting past the end. */
struct out {
    char *p;
    size_t size, o;
};

static void put(struct out *w, const char *s, size_t n)
{
    if (w->o < w->size) {
        size_t room = w->size - w->o - 1;
        memcpy(w->p + w->o, s, n < room ? n : room);
    }
    w->o += n;
}

static void puts_(struct out *w, const char *s) { put(w, s, strlen(s)); }

static void putf(struct out *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *w, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) put(w, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Numbers without printf: they are most of what JSON and text lines hold. */
static void put_u64(struct out *w, uint64_t v)
{
    char tmp[20];
    int k = 20;

    do {
        tmp[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(w, tmp + k, (size_t)(20 - k));
}

static void put_i64(struct out *w, int64_t v)
{
    if (v < 0) {
        put(w, "-", 1);
        put_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(w, (uint64_t)v);
    }
}

/* "0x" and lowercase hex digits, none leading but one. */
static void put_hex(struct out *w, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[18];
    int k = 18;

    do {
        tmp[--k] = digits[v & 15];
        v >>= 4;
    } while (v);
    tmp[--k] = 'x';
    tmp[--k] = '0';
    put(w, tmp + k, (size_t)(18 - k));
}

static size_t finish(struct out *w)
{
    if (w->size) w->p[w->o < w->size ? w->o : w->size - 1] = '\0';
    return w->o;
}

static void map_put(struct out *w, const etl_map *m, uint64_t v, int *exact)
{
    const char *name;

    *exact = 1;
    if (!m->bitmap) {
        if ((name = map_lookup(m, v))) {
            puts_(w, name);
        } else {
            *exact = 0;
            put_u64(w, v);
        }
        return;
    }
    {
        uint64_t rest = v;
        int any = 0;
        /* A bitMap entry may name one bit or several; an entry of value 0 names "none set". */
        if (v == 0) {
            if ((name = map_lookup(m, 0))) puts_(w, name);
            else { *exact = 0; puts_(w, "0"); }
            return;
        }
        for (uint32_t i = 0; i < m->entry_count; i++) {
            uint64_t e = m->entries[i].value;
            if (e == 0 || (v & e) != e) continue;
            if (any) put(w, "|", 1);
            puts_(w, m->entries[i].name);
            any = 1;
            rest &= ~e;
        }
        if (rest) {
            *exact = 0;
            if (any) put(w, "|", 1);
            put_hex(w, rest);
        }
    }
}

size_t etl_map_format(const etl_map *m, uint64_t value, char *out, size_t size, int *exact)
{
    struct out w = { out, size, 0 };
    int e = 0;

    if (m) map_put(&w, m, value, &e);
    if (exact) *exact = e;
    return finish(&w);
}

/* ---------------------------------------------------------------- typed access */

static int is_signed(unsigned t) { return t == ETL_IN_INT8 || t == ETL_IN_INT16 || t == ETL_IN_INT32 || t == ETL_IN_INT64; }

static int integer_like(const etl_field *f)
{
    switch (f->in_type) {
    case ETL_IN_INT8: case ETL_IN_UINT8: case ETL_IN_INT16: case ETL_IN_UINT16: case ETL_IN_INT32:
    case ETL_IN_UINT32: case ETL_IN_INT64: case ETL_IN_UINT64: case ETL_IN_BOOLEAN: case ETL_IN_POINTER:
    case ETL_IN_SIZET: case ETL_IN_HEXINT32: case ETL_IN_HEXINT64: case ETL_IN_UNICODE_CHAR: case ETL_IN_ANSI_CHAR:
        return f->kind == ETL_FIELD_VALUE && f->size >= 1 && f->size <= 8;
    default:
        return 0;
    }
}

static uint64_t raw(const etl_field *f)
{
    switch (f->size) {
    case 1: return f->data[0];
    case 2: return etl_le16(f->data);
    case 4: return etl_le32(f->data);
    case 8: return etl_le64(f->data);
    default: return 0;
    }
}

const etl_field *etl_decoded_field_find(const etl_decoded_event *e, const char *name)
{
    for (uint32_t i = 0; i < e->field_count; i = e->fields[i].end > i ? e->fields[i].end : i + 1)
        if (e->fields[i].name && strcmp(e->fields[i].name, name) == 0) return &e->fields[i];
    return NULL;
}

int etl_field_uint(const etl_field *f, uint64_t *out)
{
    uint64_t v;

    if (!integer_like(f)) return ETL_FAILED;
    v = raw(f);
    if (f->out_type == ETL_OUT_PORT && f->size == 2) v = (uint16_t)(v >> 8 | v << 8);
    *out = v;
    return ETL_OK;
}

int etl_field_int(const etl_field *f, int64_t *out)
{
    uint64_t v;

    if (etl_field_uint(f, &v) != ETL_OK) return ETL_FAILED;
    if (is_signed(f->in_type) && f->size < 8 && (v >> (8 * f->size - 1) & 1)) v |= ~0ull << (8 * f->size);
    *out = (int64_t)v;
    return ETL_OK;
}

int etl_field_double(const etl_field *f, double *out)
{
    if (f->kind == ETL_FIELD_VALUE && f->in_type == ETL_IN_FLOAT && f->size == 4) {
        float x;
        uint32_t u = etl_le32(f->data);
        memcpy(&x, &u, 4);
        *out = x;
        return ETL_OK;
    }
    if (f->kind == ETL_FIELD_VALUE && f->in_type == ETL_IN_DOUBLE && f->size == 8) {
        uint64_t u = etl_le64(f->data);
        memcpy(out, &u, 8);
        return ETL_OK;
    }
    if (is_signed(f->in_type)) {
        int64_t v;
        if (etl_field_int(f, &v) != ETL_OK) return ETL_FAILED;
        *out = (double)v;
        return ETL_OK;
    } else {
        uint64_t v;
        if (etl_field_uint(f, &v) != ETL_OK) return ETL_FAILED;
        *out = (double)v;
        return ETL_OK;
    }
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian), and back. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era;
    unsigned doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int is_time(const etl_field *f)
{
    if (f->kind != ETL_FIELD_VALUE) return 0;
    if (f->in_type == ETL_IN_FILETIME && f->size == 8) return 1;
    if (f->in_type == ETL_IN_SYSTEMTIME && f->size == 16) return 2;
    /* TraceLogging's FILETIME out type on a 64-bit integer */
    if ((f->in_type == ETL_IN_INT64 || f->in_type == ETL_IN_UINT64) && f->size == 8 &&
        (f->out_type == ETL_OUT_DATETIME || f->out_type == ETL_OUT_DATETIME_UTC ||
         f->out_type == ETL_OUT_CULTURE_INSENSITIVE_DATETIME))
        return 1;
    return 0;
}

static int systemtime_valid(const uint8_t *p)
{
    unsigned y = etl_le16(p), mo = etl_le16(p + 2), d = etl_le16(p + 6), h = etl_le16(p + 8), mi = etl_le16(p + 10),
             s = etl_le16(p + 12), ms = etl_le16(p + 14);
    static const unsigned mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

    return y >= 1601 && y <= 30827 && mo >= 1 && mo <= 12 && d >= 1 && d <= mdays[mo - 1] && h < 24 && mi < 60 &&
           s < 60 && ms < 1000 && !(mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

int etl_field_time(const etl_field *f, int64_t *ns)
{
    switch (is_time(f)) {
    case 1: {
        int64_t ft = (int64_t)etl_le64(f->data);
        /* 100 ns since 1601 fits in 64-bit nanoseconds since 1970 up to the year 2262 */
        if (ft < 0 || ft > 116444736000000000ll + INT64_MAX / 100) return ETL_FAILED;
        *ns = (ft - 116444736000000000ll) * 100;
        return ETL_OK;
    }
    case 2: {
        const uint8_t *p = f->data;
        int64_t days;
        if (!systemtime_valid(p) || etl_le16(p) > 2262) return ETL_FAILED;
        days = days_from_civil(etl_le16(p), etl_le16(p + 2), etl_le16(p + 6));
        *ns = (((days * 24 + etl_le16(p + 8)) * 60 + etl_le16(p + 10)) * 60 + etl_le16(p + 12)) * 1000000000ll +
              (int64_t)etl_le16(p + 14) * 1000000;
        return ETL_OK;
    }
    default:
        return ETL_FAILED;
    }
}

int etl_field_guid(const etl_field *f, etl_guid *out)
{
    if (f->kind != ETL_FIELD_VALUE || f->in_type != ETL_IN_GUID || f->size != 16) return ETL_FAILED;
    etl_guid_read(f->data, out);
    return ETL_OK;
}

static int is_string(unsigned t)
{
    switch (t) {
    case ETL_IN_UNICODE_STRING: case ETL_IN_ANSI_STRING: case ETL_IN_COUNTED_STRING: case ETL_IN_COUNTED_ANSI_STRING:
    case ETL_IN_COUNTED_STRING_MOF: case ETL_IN_COUNTED_ANSI_STRING_MOF: case ETL_IN_NON_NULL_TERMINATED_STRING:
    case ETL_IN_NON_NULL_TERMINATED_ANSI_STRING: case ETL_IN_UNICODE_CHAR: case ETL_IN_ANSI_CHAR:
        return 1;
    default:
        return 0;
    }
}

static int utf16_type(unsigned t)
{
    return t == ETL_IN_UNICODE_STRING || t == ETL_IN_COUNTED_STRING || t == ETL_IN_COUNTED_STRING_MOF ||
           t == ETL_IN_NON_NULL_TERMINATED_STRING || t == ETL_IN_UNICODE_CHAR;
}

/* An array of 8- or 16-bit characters (TraceLogging's char arrays): shown as one string. */
static int char_array(const etl_field *f)
{
    return f->kind == ETL_FIELD_ARRAY && f->element_size && f->out_type == ETL_OUT_STRING &&
           (f->in_type == ETL_IN_INT8 || f->in_type == ETL_IN_UINT8 || f->in_type == ETL_IN_UINT16 ||
            f->in_type == ETL_IN_ANSI_CHAR || f->in_type == ETL_IN_UNICODE_CHAR);
}

int etl_field_string(const etl_field *f, etl_string *out)
{
    uint32_t n;

    if (char_array(f)) {
        out->utf16 = f->element_size == 2;
    } else if (f->kind != ETL_FIELD_VALUE || !is_string(f->in_type)) {
        return ETL_FAILED;
    } else {
        out->utf16 = (uint8_t)utf16_type(f->in_type);
    }
    out->data = f->data;
    n = f->size;
    /* A string of a given length ends at its first terminator, as Windows shows it. */
    if (out->utf16) {
        n &= ~1u;
        for (uint32_t i = 0; i + 1 < n; i += 2)
            if (f->data[i] == 0 && f->data[i + 1] == 0) { n = i; break; }
    } else {
        const uint8_t *z = n ? memchr(f->data, 0, n) : NULL;
        if (z) n = (uint32_t)(z - f->data);
    }
    out->size = n;
    return ETL_OK;
}

int etl_field_element(const etl_field *f, uint32_t index, etl_field *out)
{
    if (f->kind != ETL_FIELD_ARRAY || !f->element_size || index >= f->count) return ETL_FAILED;
    *out = *f;
    out->kind = ETL_FIELD_VALUE;
    out->element_size = 0;
    out->count = 1;
    out->depth = (uint8_t)(f->depth + 1);
    out->data = f->data + (size_t)index * f->element_size;
    out->size = f->element_size;
    out->offset = f->offset + (uint32_t)(out->data - f->data);
    return ETL_OK;
}

/* ---------------------------------------------------------------- one value as text */

enum style { TEXT, JSON };

static void put_hex_bytes(struct out *w, const uint8_t *p, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[64];
    uint32_t k = 0;

    for (uint32_t i = 0; i < n; i++) {
        tmp[k++] = hex[p[i] >> 4];
        tmp[k++] = hex[p[i] & 15];
        if (k == sizeof tmp) {
            put(w, tmp, k);
            k = 0;
        }
    }
    put(w, tmp, k);
}

static void put_filetime(struct out *w, uint64_t ft)
{
    uint64_t secs = ft / 10000000u, frac = ft % 10000000u;
    int64_t days = (int64_t)(secs / 86400u) - 134774; /* 1601-01-01 is day -134774 of 1970 */
    unsigned sod = (unsigned)(secs % 86400u), m, d;
    int64_t y;

    civil_from_days(days, &y, &m, &d);
    putf(w, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%07" PRIu64 "Z", y, m, d, sod / 3600, sod / 60 % 60, sod % 60, frac);
}

static void put_ipv4(struct out *w, const uint8_t *p) { putf(w, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]); }

/* RFC 5952: the longest run of two or more zero groups as "::" (the first of equal runs),
   lowercase, no leading zeros; an IPv4-mapped address with its IPv4 part dotted. */
static void put_ipv6(struct out *w, const uint8_t *p)
{
    unsigned g[8];
    int best = -1, bestlen = 0;

    for (int i = 0; i < 8; i++) g[i] = (unsigned)p[2 * i] << 8 | p[2 * i + 1];
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && g[j] == 0) j++;
        if (j - i > bestlen && j - i >= 2) { best = i; bestlen = j - i; }
        i = j > i ? j : i + 1;
    }
    if (best == 0 && bestlen == 5 && g[5] == 0xffff) {
        puts_(w, "::ffff:");
        put_ipv4(w, p + 12);
        return;
    }
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            puts_(w, "::");
            i += bestlen - 1;
            continue;
        }
        if (i && i != best + bestlen) put(w, ":", 1);
        putf(w, "%x", g[i]);
    }
}

/* A SOCKADDR_IN (family 2) or SOCKADDR_IN6 (family 23) as address:port. */
static int put_sockaddr(struct out *w, const uint8_t *p, uint32_t n)
{
    unsigned family;

    if (n < 2) return 0;
    family = etl_le16(p);
    if (family == 2 && n >= 8) {
        put_ipv4(w, p + 4);
        putf(w, ":%u", (unsigned)p[2] << 8 | p[3]);
        return 1;
    }
    if (family == 23 && n >= 24) {
        put(w, "[", 1);
        put_ipv6(w, p + 8);
        putf(w, "]:%u", (unsigned)p[2] << 8 | p[3]);
        return 1;
    }
    return 0;
}

/* Text in JSON's escapes, or in the text form's (\" \n \t \r \xNN; a backslash stays, so that
   Windows paths read as they are); UTF-8 in, passed through. */
static void put_escaped(struct out *w, const char *s, size_t n, enum style st)
{
    /* 1: a character JSON or the text form escapes (the text form lets a backslash stand) */
    static const uint8_t special[128] = {
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        ['"'] = 1, ['\\'] = 1, [127] = 1,
    };
    size_t run = 0;

    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *e;
        char tmp[8];
        if (c >= 128 || !special[c] || (c == '\\' && st != JSON)) continue;
        if (c == '"') e = "\\\"";
        else if (c == '\\') e = "\\\\";
        else if (c == '\n') e = "\\n";
        else if (c == '\t') e = "\\t";
        else if (c == '\r') e = "\\r";
        else {
            snprintf(tmp, sizeof tmp, st == JSON ? "\\u%04x" : "\\x%02x", c);
            e = tmp;
        }
        put(w, s + run, i - run);
        puts_(w, e);
        run = i + 1;
    }
    put(w, s + run, n - run);
}

/* A UTF-16 string whose code units are all ASCII, straight into w (escaped when quote): 1, or
   0 (nothing written) when it has others, which the general conversion then takes. */
static int put_ascii16(struct out *w, const uint8_t *p, uint32_t n, enum style st, int quote)
{
    char tmp[256];
    uint32_t k = 0;

    for (uint32_t i = 0; i + 1 < n; i += 2)
        if (p[i + 1] || p[i] >= 0x80) return 0;
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        tmp[k++] = (char)p[i];
        if (k == sizeof tmp) {
            if (quote) put_escaped(w, tmp, k, st);
            else put(w, tmp, k);
            k = 0;
        }
    }
    if (quote) put_escaped(w, tmp, k, st);
    else put(w, tmp, k);
    return 1;
}

/* A string field's text as UTF-8 (quoted and escaped when quote). */
static void put_string(struct out *w, const etl_field *f, enum style st, int quote)
{
    etl_string s;
    char small[512];
    size_t n;
    int ascii = 1;

    if (etl_field_string(f, &s) != ETL_OK) s.size = 0;
    if (quote) put(w, "\"", 1);
    if (s.utf16 && put_ascii16(w, s.data, s.size, st, quote)) goto done;
    if (!s.utf16) { /* ASCII passes as it is */
        for (uint32_t i = 0; i < s.size && ascii; i++) ascii = s.data[i] < 0x80;
        if (ascii) {
            if (quote) put_escaped(w, (const char *)s.data, s.size, st);
            else put(w, (const char *)s.data, s.size);
            goto done;
        }
    }
    n = etl_string_to_utf8(&s, small, sizeof small);
    if (n < sizeof small) {
        if (quote) put_escaped(w, small, n, st);
        else put(w, small, n);
    } else { /* long: converted again into a buffer of its size */
        char *big = malloc(n + 1);
        if (big) {
            etl_string_to_utf8(&s, big, n + 1);
            if (quote) put_escaped(w, big, n, st);
            else put(w, big, n);
            free(big);
        }
    }
done:
    if (quote) put(w, "\"", 1);
}

static int hex_out(unsigned out)
{
    return out == ETL_OUT_HEXINT8 || out == ETL_OUT_HEXINT16 || out == ETL_OUT_HEXINT32 || out == ETL_OUT_HEXINT64 ||
           out == ETL_OUT_HRESULT || out == ETL_OUT_NTSTATUS || out == ETL_OUT_CODE_POINTER;
}

/* One VALUE field; quoted says whether strings are quoted (text lines; JSON always quotes). */
static void put_value(struct out *w, const etl_field *f, enum style st, int quoted)
{
    int q = st == JSON || quoted;
    char g[ETL_GUID_STRING_SIZE];
    uint64_t u;
    int64_t i;
    double x;

    if (f->map && integer_like(f)) {
        int exact;
        etl_field_uint(f, &u);
        if (st == JSON && q) {
            struct out probe = { NULL, 0, 0 };
            map_put(&probe, f->map, u, &exact);
            if (!exact) {
                puts_(w, "{\"name\":\"");
                map_put(w, f->map, u, &exact);
                put(w, "\",\"value\":", 10);
                put_u64(w, u);
                put(w, "}", 1);
                return;
            }
        }
        if (q) put(w, "\"", 1);
        map_put(w, f->map, u, &exact);
        if (q) put(w, "\"", 1);
        return;
    }
    if (is_string(f->in_type)) {
        put_string(w, f, st, q);
        return;
    }
    if (is_time(f)) {
        if (q) put(w, "\"", 1);
        if (is_time(f) == 1) {
            u = etl_le64(f->data);
            if ((int64_t)u < 0) putf(w, "%" PRIu64, u);
            else put_filetime(w, u);
        } else {
            const uint8_t *p = f->data;
            putf(w, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", etl_le16(p), etl_le16(p + 2), etl_le16(p + 6), etl_le16(p + 8),
                 etl_le16(p + 10), etl_le16(p + 12), etl_le16(p + 14));
        }
        if (q) put(w, "\"", 1);
        return;
    }
    switch (f->in_type) {
    case ETL_IN_GUID:
        if (f->size != 16) break;
        if (q) put(w, "\"", 1);
        {
            etl_guid gg;
            etl_guid_read(f->data, &gg);
            puts_(w, etl_guid_format(&gg, g));
        }
        if (q) put(w, "\"", 1);
        return;
    case ETL_IN_SID: case ETL_IN_WBEM_SID: {
        char sid[200];
        etl_sid_format(f->data, f->size, sid, sizeof sid);
        if (!sid[0] && st == JSON) { puts_(w, "null"); return; }
        if (q) put(w, "\"", 1);
        puts_(w, sid);
        if (q) put(w, "\"", 1);
        return;
    }
    case ETL_IN_BINARY: case ETL_IN_COUNTED_BINARY:
        if (q) put(w, "\"", 1);
        if (f->out_type == ETL_OUT_IPV6 && f->size == 16) put_ipv6(w, f->data);
        else if (f->out_type == ETL_OUT_IPV4 && f->size == 4) put_ipv4(w, f->data);
        else if (!(f->out_type == ETL_OUT_SOCKET_ADDRESS && put_sockaddr(w, f->data, f->size)))
            put_hex_bytes(w, f->data, f->size);
        if (q) put(w, "\"", 1);
        return;
    case ETL_IN_FLOAT: case ETL_IN_DOUBLE:
        etl_field_double(f, &x);
        if (!isfinite(x)) {
            if (st == JSON) puts_(w, "null");
            else puts_(w, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
        } else {
            putf(w, f->in_type == ETL_IN_FLOAT ? "%.9g" : "%.17g", x);
        }
        return;
    default:
        break;
    }
    if (!integer_like(f)) { /* a value the walk gave no known shape: its bytes */
        if (q) put(w, "\"", 1);
        put_hex_bytes(w, f->data, f->size);
        if (q) put(w, "\"", 1);
        return;
    }
    etl_field_uint(f, &u);
    if (f->in_type == ETL_IN_BOOLEAN || f->out_type == ETL_OUT_BOOLEAN) {
        puts_(w, u ? "true" : "false");
        return;
    }
    if (f->out_type == ETL_OUT_IPV4 && f->size == 4) {
        if (q) put(w, "\"", 1);
        put_ipv4(w, f->data);
        if (q) put(w, "\"", 1);
        return;
    }
    if (f->out_type == ETL_OUT_STRING && (f->in_type == ETL_IN_INT8 || f->in_type == ETL_IN_UINT8 ||
                                          f->in_type == ETL_IN_UINT16)) {
        etl_string s = { f->data, f->size, (uint8_t)(f->size == 2) };
        char c[8];
        etl_string_to_utf8(&s, c, sizeof c);
        if (q) put(w, "\"", 1);
        put_escaped(w, c, strlen(c), st);
        if (q) put(w, "\"", 1);
        return;
    }
    if (f->in_type == ETL_IN_POINTER || f->in_type == ETL_IN_HEXINT32 || f->in_type == ETL_IN_HEXINT64 ||
        hex_out(f->out_type)) {
        if (q && st == JSON) put(w, "\"", 1);
        put_hex(w, u);
        if (q && st == JSON) put(w, "\"", 1);
        return;
    }
    if (is_signed(f->in_type) && f->out_type != ETL_OUT_UNSIGNED_BYTE && f->out_type != ETL_OUT_UNSIGNED_SHORT &&
        f->out_type != ETL_OUT_UNSIGNED_INT && f->out_type != ETL_OUT_UNSIGNED_LONG) {
        etl_field_int(f, &i);
        put_i64(w, i);
        return;
    }
    put_u64(w, u);
}

size_t etl_field_format(const etl_field *f, char *out, size_t size)
{
    struct out w = { out, size, 0 };

    if (f->kind == ETL_FIELD_VALUE) put_value(&w, f, TEXT, 0);
    return finish(&w);
}

/* ---------------------------------------------------------------- whole events */

/* Field i of fields and all it holds; returns the index after it. */
static uint32_t put_tree(struct out *w, const etl_field *fields, uint32_t i, enum style st);

static void put_children(struct out *w, const etl_field *fields, uint32_t i, enum style st, int named)
{
    const etl_field *f = &fields[i];
    int first = 1;

    for (uint32_t k = i + 1; k < f->end;) {
        if (!first) put(w, st == JSON ? "," : named ? " " : ",", 1);
        first = 0;
        if (named) {
            if (st == JSON) {
                put(w, "\"", 1);
                put_escaped(w, fields[k].name ? fields[k].name : "", fields[k].name ? strlen(fields[k].name) : 0, JSON);
                put(w, "\":", 2);
            } else {
                puts_(w, fields[k].name ? fields[k].name : "");
                put(w, "=", 1);
            }
        }
        k = put_tree(w, fields, k, st);
    }
}

static uint32_t put_tree(struct out *w, const etl_field *fields, uint32_t i, enum style st)
{
    const etl_field *f = &fields[i];

    switch (f->kind) {
    case ETL_FIELD_STRUCT:
        put(w, "{", 1);
        put_children(w, fields, i, st, 1);
        put(w, "}", 1);
        break;
    case ETL_FIELD_ARRAY:
        if (char_array(f)) {
            put_string(w, f, st, 1);
            break;
        }
        put(w, "[", 1);
        if (f->element_size) {
            for (uint32_t k = 0; k < f->count; k++) {
                etl_field e;
                etl_field_element(f, k, &e);
                if (k) put(w, ",", 1);
                put_value(w, &e, st, 1);
            }
        } else {
            put_children(w, fields, i, st, 0);
        }
        put(w, "]", 1);
        break;
    default:
        put_value(w, f, st, 1);
        break;
    }
    return f->end > i ? f->end : i + 1;
}

static size_t format_event(const etl_decoded_event *e, char *out, size_t size, enum style st)
{
    struct out w = { out, size, 0 };

    if (st == JSON) put(&w, "{", 1);
    if (e->field_count) {
        uint32_t k = 0;
        int first = 1;
        while (k < e->field_count) {
            const etl_field *f = &e->fields[k];
            if (!first) put(&w, st == JSON ? "," : " ", 1);
            first = 0;
            if (st == JSON) {
                put(&w, "\"", 1);
                put_escaped(&w, f->name ? f->name : "", f->name ? strlen(f->name) : 0, JSON);
                put(&w, "\":", 2);
            } else {
                puts_(&w, f->name ? f->name : "");
                put(&w, "=", 1);
            }
            k = put_tree(&w, e->fields, k, st);
        }
    }
    if (st == JSON) put(&w, "}", 1);
    return finish(&w);
}

size_t etl_decoded_format_text(const etl_decoded_event *e, char *out, size_t size)
{
    return format_event(e, out, size, TEXT);
}

size_t etl_decoded_format_json(const etl_decoded_event *e, char *out, size_t size)
{
    return format_event(e, out, size, JSON);
}

size_t etl_decoded_field_format(const etl_decoded_event *e, uint32_t index, int json, char *out, size_t size)
{
    struct out w = { out, size, 0 };

    if (index < e->field_count) put_tree(&w, e->fields, index, json ? JSON : TEXT);
    return finish(&w);
}
