/* SPDX-License-Identifier: MIT */
/* The one walk that decodes a payload by its schema into fields, bounded by the payload's bytes (doc/format.md section 18). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

/* Fixed sizes of the in types below 32; 0xFF: the event's pointer size; 0: it varies. */
static const uint8_t fixed_sizes[32] = {
    [ETL_IN_INT8] = 1, [ETL_IN_UINT8] = 1, [ETL_IN_INT16] = 2, [ETL_IN_UINT16] = 2, [ETL_IN_INT32] = 4,
    [ETL_IN_UINT32] = 4, [ETL_IN_INT64] = 8, [ETL_IN_UINT64] = 8, [ETL_IN_FLOAT] = 4, [ETL_IN_DOUBLE] = 8,
    [ETL_IN_BOOLEAN] = 4, [ETL_IN_GUID] = 16, [ETL_IN_POINTER] = 0xFF, [ETL_IN_FILETIME] = 8,
    [ETL_IN_SYSTEMTIME] = 16, [ETL_IN_HEXINT32] = 4, [ETL_IN_HEXINT64] = 8,
};

static inline unsigned fixed_size(unsigned in_type, unsigned pointer_size)
{
    unsigned s;

    if (in_type < 32) {
        s = fixed_sizes[in_type];
        return s == 0xFF ? pointer_size : s;
    }
    switch (in_type) {
    case ETL_IN_ANSI_CHAR: return 1;
    case ETL_IN_UNICODE_CHAR: return 2;
    case ETL_IN_SIZET: return pointer_size;
    default: return 0;
    }
}

unsigned etl_in_type_fixed_size(unsigned in_type, unsigned pointer_size)
{
    return fixed_size(in_type, pointer_size == 4 ? 4 : 8);
}

void etl_fields_buf_free(etl_fields_buf *b)
{
    free(b->fields);
    free(b->refs);
    memset(b, 0, sizeof *b);
}

struct walk {
    const etl_schema_event *s;
    const uint8_t *p;
    uint32_t len, off;
    unsigned ptr;
    etl_fields_buf *b;
    etl_fields_fault *fault;
    uint32_t max_fields;    /* a hostile count cannot make more fields than this */
    uint64_t *refs;         /* b->refs when the schema's lengths or counts refer to fields, else NULL */
};

static int fail(struct walk *w, const etl_schema_field *f, uint32_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct walk *w, const etl_schema_field *f, uint32_t at, const char *fmt, ...)
{
    va_list ap;

    w->fault->field = f->name;
    w->fault->offset = at;
    va_start(ap, fmt);
    vsnprintf(w->fault->reason, sizeof w->fault->reason, fmt, ap);
    va_end(ap);
    w->fault->why = w->fault->reason;
    return ETL_FAILED;
}

static uint32_t left(const struct walk *w) { return w->len - w->off; }

/* A new field at the end of the buffer: its index, or -1 (ETL_FATAL without memory, ETL_FAILED
   past max_fields: *rc says which). */
static long push(struct walk *w, const etl_schema_field *f, uint8_t kind, unsigned depth, int *rc)
{
    etl_fields_buf *b = w->b;
    etl_field *x;

    if (b->count >= w->max_fields) {
        *rc = fail(w, f, w->off, "more fields than a payload of %u bytes can hold", w->len);
        return -1;
    }
    if (b->count == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 64;
        etl_field *n = realloc(b->fields, (size_t)cap * sizeof *n);
        if (!n) {
            *rc = ETL_FATAL;
            return -1;
        }
        b->fields = n;
        b->cap = cap;
    }
    x = &b->fields[b->count];
    x->name = f->name;
    x->in_type = f->in_type;
    x->out_type = f->out_type;
    x->kind = kind;
    x->depth = (uint8_t)depth;
    x->pointer_size = (uint8_t)(w->ptr == 4 ? 4 : 8);
    x->element_size = 0;
    x->count = 1;
    x->end = b->count + 1;
    x->data = w->p + w->off;
    x->size = 0;
    x->offset = w->off;
    x->map = f->map;
    return (long)b->count++;
}

static int is_signed(unsigned t) { return t == ETL_IN_INT8 || t == ETL_IN_INT16 || t == ETL_IN_INT32 || t == ETL_IN_INT64; }

/* The integer a fixed-size value holds (for lengths and counts that refer to it). */
static uint64_t ref_value(unsigned in_type, const uint8_t *p, unsigned size)
{
    uint64_t v = size == 1 ? p[0] : size == 2 ? etl_le16(p) : size == 4 ? etl_le32(p) : size == 8 ? etl_le64(p) : 0;

    if (is_signed(in_type) && size < 8 && (v >> (8 * size - 1) & 1)) return 0; /* a negative length: none */
    if (is_signed(in_type) && size == 8 && (int64_t)v < 0) return 0;
    return v;
}

/* The offset of the first 16-bit zero at an even offset of p[0..n), or UINT32_MAX when none:
   four code units at a time (a zero lane has its top bit set in (v - 0x0001...) & ~v). */
static uint32_t utf16_nul(const uint8_t *p, uint32_t n)
{
    uint32_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t v = etl_le64(p + i);
        if ((v - 0x0001000100010001ull) & ~v & 0x8000800080008000ull) break;
    }
    for (; i + 1 < n; i += 2)
        if (p[i] == 0 && p[i + 1] == 0) return i;
    return UINT32_MAX;
}

/* Where a zero-terminated string in units of unit bytes ends at off: its length in bytes
   without the terminator; *term is 1 when a terminator was found (else it runs to the end). */
static uint32_t zstring(const struct walk *w, unsigned unit, int *term)
{
    const uint8_t *p = w->p + w->off;
    uint32_t n = left(w), z;

    if (unit == 1) {
        const uint8_t *q = memchr(p, 0, n);
        *term = q != NULL;
        return q ? (uint32_t)(q - p) : n;
    }
    z = utf16_nul(p, n);
    *term = z != UINT32_MAX;
    return *term ? z : n & ~1u;
}

/* The characters of a string of a given size at off, up to the first NUL (in units of unit bytes). */
static uint32_t fixed_string(const struct walk *w, unsigned unit, uint32_t size)
{
    const uint8_t *p = w->p + w->off;
    uint32_t z;

    if (unit == 1) {
        const uint8_t *q = memchr(p, 0, size);
        return q ? (uint32_t)(q - p) : size;
    }
    z = utf16_nul(p, size);
    return z != UINT32_MAX ? z : size & ~1u;
}

int etl_wbem_sid_extent(const uint8_t *p, uint32_t n, unsigned ptr, uint32_t *skip, uint32_t *size)
{
    /* TOKEN_USER (a pointer to the SID and the attributes: two pointer-sized words), then the SID;
       a first u32 of 0 is no SID, 4 bytes in all [MS: MOF "Sid" extension][TE: SkipSID]. A writer
       that leaves the whole TOKEN_USER zero and still puts a SID after it (syzygy's 32-bit Process
       events, doc/format.md 8.9) is read as the SID it holds. */
    uint32_t t = 2 * (ptr == 4 ? 4 : 8), k;

    if (n < 4) return ETL_FAILED;
    if (etl_le32(p) == 0) {
        int zero = n >= t + 8 && p[t] == 1 && p[t + 1] <= 15 && t + 8 + 4u * p[t + 1] <= n;
        for (k = 4; zero && k < t; k++) zero = p[k] == 0;
        if (!zero) {
            *skip = 4;
            *size = 0;
            return ETL_OK;
        }
    }
    if (n < t + 8 || p[t + 1] > 15 || t + 8 + 4u * p[t + 1] > n) return ETL_FAILED;
    *skip = t;
    *size = 8 + 4u * p[t + 1];
    return ETL_OK;
}

/* The length a LEN_CONST or LEN_FIELD field gives, in units. */
static uint64_t given_length(const struct walk *w, const etl_schema_field *f)
{
    return f->length_kind == ETL_LEN_CONST ? f->length : w->refs[f->length_ref];
}

/* One value of field f (schema index i) at w->off. */
static int value(struct walk *w, const etl_schema_field *f, uint32_t i, unsigned depth)
{
    uint32_t start = w->off, skip = 0, size, consumed;
    unsigned fixed = fixed_size(f->in_type, w->ptr);
    int rc = ETL_OK, term = 0;
    long idx;

    if (fixed) {
        if (left(w) < fixed) return fail(w, f, start, "needs %u bytes, %u left", fixed, left(w));
        size = consumed = fixed;
        if (w->refs) w->refs[i] = ref_value(f->in_type, w->p + start, fixed);
    } else {
        unsigned unit = f->in_type == ETL_IN_UNICODE_STRING || f->in_type == ETL_IN_NON_NULL_TERMINATED_STRING ? 2 : 1;
        int prefixed = f->in_type == ETL_IN_COUNTED_STRING || f->in_type == ETL_IN_COUNTED_ANSI_STRING ||
                       f->in_type == ETL_IN_COUNTED_BINARY || f->in_type == ETL_IN_COUNTED_STRING_MOF ||
                       f->in_type == ETL_IN_COUNTED_ANSI_STRING_MOF || f->length_kind == ETL_LEN_PREFIX16;
        switch (f->in_type) {
        case ETL_IN_SID:
            if (left(w) < 8) return fail(w, f, start, "a SID needs 8 bytes, %u left", left(w));
            size = consumed = 8u + 4u * w->p[start + 1];
            if (w->p[start + 1] > 15 || size > left(w))
                return fail(w, f, start, "a SID of %u sub-authorities does not fit in %u bytes", w->p[start + 1], left(w));
            break;
        case ETL_IN_WBEM_SID:
            if (etl_wbem_sid_extent(w->p + start, left(w), w->ptr, &skip, &size) != ETL_OK)
                return fail(w, f, start, "a SID (after its TOKEN_USER of %u bytes) does not fit in %u bytes", 2 * w->ptr,
                            left(w));
            consumed = skip + size;
            break;
        case ETL_IN_NON_NULL_TERMINATED_STRING: case ETL_IN_NON_NULL_TERMINATED_ANSI_STRING:
            size = consumed = unit == 2 ? left(w) & ~1u : left(w);
            break;
        default:
            if (prefixed) {
                if (left(w) < 2) return fail(w, f, start, "its byte count needs 2 bytes, %u left", left(w));
                skip = 2;
                size = etl_le16(w->p + start);
                if (size > left(w) - 2) return fail(w, f, start, "%u bytes counted, %u left", size, left(w) - 2);
                consumed = 2 + size;
            } else if (f->length_kind == ETL_LEN_CONST || f->length_kind == ETL_LEN_FIELD) {
                uint64_t n = given_length(w, f) * (f->in_type == ETL_IN_UNICODE_STRING ? 2u : 1u);
                if (n > left(w)) return fail(w, f, start, "length %llu needs %llu bytes, %u left",
                                             (unsigned long long)given_length(w, f), (unsigned long long)n, left(w));
                size = consumed = (uint32_t)n;
                /* A string of a given length (the MOF classes' char16 Name[N]) holds its characters
                   up to the first NUL; the rest is padding, which the value leaves out. */
                if (f->in_type == ETL_IN_UNICODE_STRING || f->in_type == ETL_IN_ANSI_STRING) size = fixed_string(w, unit, size);
            } else if (f->in_type == ETL_IN_UNICODE_STRING || f->in_type == ETL_IN_ANSI_STRING) {
                size = zstring(w, unit, &term);
                consumed = size + (term ? unit : 0);
            } else if (f->in_type == ETL_IN_BINARY || f->length_kind == ETL_LEN_REST) {
                size = consumed = left(w);
            } else {
                return fail(w, f, start, "in type %u has no known size", f->in_type);
            }
        }
    }
    idx = push(w, f, ETL_FIELD_VALUE, depth, &rc);
    if (idx < 0) return rc;
    w->b->fields[idx].data = w->p + start + skip;
    w->b->fields[idx].size = size;
    w->off = start + consumed;
    return ETL_OK;
}

static int walk_level(struct walk *w, uint32_t i, uint32_t n, unsigned depth);

/* One element or the single value of field i: a struct with its members, or a value. */
static int element(struct walk *w, uint32_t i, unsigned depth)
{
    const etl_schema_field *f = &w->s->fields[i];
    long idx;
    int rc = ETL_OK;

    if (f->in_type != ETL_IN_STRUCT) return value(w, f, i, depth);
    idx = push(w, f, ETL_FIELD_STRUCT, depth, &rc);
    if (idx < 0) return rc;
    w->b->fields[idx].count = f->members;
    rc = walk_level(w, i + 1, f->members, depth + 1);
    w->b->fields[idx].end = w->b->count;
    w->b->fields[idx].size = w->off - w->b->fields[idx].offset;
    return rc;
}

/* Field i, one value or an array of them. */
static int field(struct walk *w, uint32_t i, unsigned depth)
{
    const etl_schema_field *f = &w->s->fields[i];
    uint32_t start = w->off;
    uint64_t count;
    unsigned fixed;
    long idx;
    int rc = ETL_OK;

    switch (f->count_kind) {
    case ETL_COUNT_ONE:
        return element(w, i, depth);
    case ETL_COUNT_CONST:
        count = f->count;
        break;
    case ETL_COUNT_FIELD:
        count = w->refs[f->count_ref];
        break;
    case ETL_COUNT_PREFIX16:
        if (left(w) < 2) return fail(w, f, start, "its element count needs 2 bytes, %u left", left(w));
        count = etl_le16(w->p + start);
        w->off += 2;
        break;
    default: /* ETL_COUNT_REST */
        count = UINT64_MAX;
        break;
    }
    fixed = f->in_type == ETL_IN_STRUCT ? 0 : fixed_size(f->in_type, w->ptr);
    if (fixed && count == UINT64_MAX) count = left(w) / fixed;
    if (fixed && count > left(w) / fixed)
        return fail(w, f, start, "%llu elements of %u bytes, %u bytes left", (unsigned long long)count, fixed, left(w));
    if (!fixed && count != UINT64_MAX && count > w->max_fields - w->b->count)
        return fail(w, f, start, "%llu elements cannot fit in %u bytes", (unsigned long long)count, left(w));
    idx = push(w, f, ETL_FIELD_ARRAY, depth, &rc);
    if (idx < 0) return rc;
    w->b->fields[idx].offset = start;
    if (fixed) { /* packed: one field holds every element */
        w->b->fields[idx].element_size = (uint8_t)fixed;
        w->b->fields[idx].count = (uint32_t)count;
        w->b->fields[idx].data = w->p + w->off;
        w->b->fields[idx].size = (uint32_t)count * fixed;
        w->off += (uint32_t)count * fixed;
        return ETL_OK;
    }
    w->b->fields[idx].count = 0;
    for (uint64_t k = 0; count == UINT64_MAX ? w->off < w->len : k < count; k++) {
        uint32_t before = w->off, fields_before = w->b->count;
        rc = element(w, i, depth + 1);
        if (w->b->count > fields_before) w->b->fields[idx].count++; /* a struct cut short is kept, as far as it went */
        if (rc != ETL_OK) break;
        if (count == UINT64_MAX && w->off == before) break; /* an element of no bytes: the rest is not a count */
    }
    w->b->fields[idx].end = w->b->count;
    w->b->fields[idx].size = w->off - start;
    return rc;
}

static int walk_level(struct walk *w, uint32_t i, uint32_t n, unsigned depth)
{
    for (uint32_t k = 0; k < n; k++) {
        const etl_schema_field *f = &w->s->fields[i];
        int rc = f->count_kind == ETL_COUNT_ONE && f->in_type != ETL_IN_STRUCT ? value(w, f, i, depth) : field(w, i, depth);
        if (rc != ETL_OK) return rc;
        i += w->s->fields[i].span;
    }
    return ETL_OK;
}

/* The schema's leading fixed-size fields in one step, when the payload holds them all: their
   offsets follow from their sizes, so nothing is checked field by field. 0, or -1 without memory. */
static int prefix(struct walk *w)
{
    const etl_schema_event *s = w->s;
    int p = w->ptr == 8;
    uint32_t n = s->prefix_fields[p], off = 0;
    etl_fields_buf *b = w->b;
    etl_field *x;

    if (!n || w->len < s->prefix_bytes[p]) return 0;
    if (b->cap < n) {
        uint32_t cap = b->cap ? b->cap : 64;
        etl_field *q;
        while (cap < n) cap *= 2;
        if (!(q = realloc(b->fields, (size_t)cap * sizeof *q))) return -1;
        b->fields = q;
        b->cap = cap;
    }
    x = b->fields;
    for (uint32_t k = 0; k < n; k++) {
        const etl_schema_field *f = &s->fields[k];
        unsigned size = fixed_size(f->in_type, w->ptr);
        x[k].name = f->name;
        x[k].in_type = f->in_type;
        x[k].out_type = f->out_type;
        x[k].kind = ETL_FIELD_VALUE;
        x[k].depth = 0;
        x[k].pointer_size = (uint8_t)w->ptr;
        x[k].element_size = 0;
        x[k].count = 1;
        x[k].end = k + 1;
        x[k].data = w->p + off;
        x[k].size = size;
        x[k].offset = off;
        x[k].map = f->map;
        if (w->refs) w->refs[k] = ref_value(f->in_type, w->p + off, size);
        off += size;
    }
    b->count = n;
    w->off = off;
    return 0;
}

int etl_fields_decode(const etl_schema_event *s, const uint8_t *payload, uint32_t len, unsigned pointer_size,
                      etl_fields_buf *b, etl_fields_fault *fault)
{
    struct walk w = { s, payload, len, 0, pointer_size == 4 ? 4u : 8u, b, fault, 0, NULL };
    int rc = ETL_OK;

    b->count = 0;
    b->used = 0;
    fault->field = NULL;
    /* Only a schema whose lengths or counts refer to fields keeps their values (zeroed first,
       so that one inside an array of no elements counts as 0). */
    if (s->flags & ETL_SCHEMA_HAS_REFS) {
        if (s->field_count > b->refs_cap) {
            uint64_t *r = realloc(b->refs, (size_t)s->field_count * sizeof *r);
            if (!r) return ETL_FATAL;
            b->refs = r;
            b->refs_cap = s->field_count;
        }
        memset(b->refs, 0, (size_t)s->field_count * sizeof *b->refs);
        w.refs = b->refs;
    }
    /* Each field takes a byte, or is one of the schema's own; arrays of empty elements are
       what this bounds. */
    w.max_fields = len * 2u + 64u * (s->field_count + 1u);
    if (!payload) w.p = (const uint8_t *)"";
    if (prefix(&w) != 0) return ETL_FATAL;
    for (uint32_t i = b->count; i < s->field_count && rc == ETL_OK; i += s->fields[i].span) {
        const etl_schema_field *f = &s->fields[i];
        rc = f->count_kind == ETL_COUNT_ONE && f->in_type != ETL_IN_STRUCT ? value(&w, f, i, 0) : field(&w, i, 0);
    }
    b->used = w.off;
    return rc;
}
