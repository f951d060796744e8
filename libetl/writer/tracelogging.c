/* SPDX-License-Identifier: MIT */
/* TraceLogging's metadata as Windows writes it: provider traits, event metadata and the two extended items that carry them (doc/format.md section 4.11). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "writer/writer.h"

/* Bytes appended up to cap; the size counts them all, so that a first pass with no buffer
   measures. */
struct out {
    uint8_t *p;
    uint32_t n, cap;
};

static void put(struct out *o, const void *src, uint32_t n)
{
    if (o->p && o->n + (uint64_t)n <= o->cap) memcpy(o->p + o->n, src, n);
    o->n += n;
}

static void put8(struct out *o, uint8_t v) { put(o, &v, 1); }

static void put16(struct out *o, uint16_t v)
{
    uint8_t b[2];
    etl_put16(b, v);
    put(o, b, 2);
}

uint32_t etl_tlg_traits_encode(uint8_t *dst, uint32_t cap, const char *name, const etl_guid *group)
{
    struct out o = { dst, 0, cap };
    size_t len = name ? strlen(name) : 0;

    if (len == 0 || len > ETL_TLG_MAX_PROVIDER_NAME) return 0;
    put16(&o, 0); /* TotalSize, filled below */
    put(&o, name, (uint32_t)len + 1);
    if (group) {
        uint8_t g[16];
        etl_guid_write(g, group);
        put16(&o, 3 + 16); /* the trait's size, itself included */
        put8(&o, ETL_TLG_TRAIT_PROVIDER_GROUP);
        put(&o, g, 16);
    }
    if (dst && o.n <= cap) etl_put16(dst, (uint16_t)o.n);
    return o.n;
}

/* The in type written for a field's type: a pointer becomes the HexInt of this process's size. */
static unsigned written_in_type(unsigned in)
{
    if (in == ETL_IN_POINTER) return sizeof(void *) == 8 ? ETL_IN_HEXINT64 : ETL_IN_HEXINT32;
    return in;
}

/* One field on its own: its name, type, array and counts. */
static int check_field(const etl_tlg_field *f, unsigned index, char *err, size_t errsize)
{
    unsigned in = f->type & 0xFF, out = f->type >> 8;

    if (!f->name || !f->name[0]) return etl_fail(err, errsize, "field %u has no name", index);
    if (in == ETL_IN_NULL || in > ETL_IN_COUNTED_BINARY)
        return etl_fail(err, errsize, "field %s: in type %u is not one TraceLogging writes (1 to 25)", f->name, in);
    if (out > ETL_TLG_OUT_TYPE_MASK) return etl_fail(err, errsize, "field %s: out type %u is not 0 to 127", f->name, out);
    if (f->array > ETL_TLG_VARIABLE) return etl_fail(err, errsize, "field %s: array kind %u is not 0 to 2", f->name, f->array);
    if (in == ETL_IN_STRUCT) {
        if (out) return etl_fail(err, errsize, "field %s: a struct has no out type (%u)", f->name, out);
        if (f->members == 0 || f->members > ETL_TLG_OUT_TYPE_MASK)
            return etl_fail(err, errsize, "field %s: a struct has 1 to 127 members, not %u", f->name, f->members);
    } else if (f->members) {
        return etl_fail(err, errsize, "field %s: members (%u) are for structs", f->name, f->members);
    }
    if (f->array == ETL_TLG_FIXED && f->count == 0)
        return etl_fail(err, errsize, "field %s: a fixed array needs 1 to 65535 elements, not 0", f->name);
    if (f->array != ETL_TLG_FIXED && f->count)
        return etl_fail(err, errsize, "field %s: count (%u) is for fixed arrays", f->name, f->count);
    if (f->array != ETL_TLG_SCALAR && in == ETL_IN_BINARY)
        return etl_fail(err, errsize, "field %s: an array of Binary, which Windows' decoder cannot read (an array of "
                                  "CountedBinary can be)", f->name);
    return ETL_OK;
}

/* The fields as a tree: every struct's members follow it, and structs nest at most
   ETL_TLG_MAX_DEPTH deep. */
static int check_fields(const etl_tlg_field *fields, unsigned count, char *err, size_t errsize)
{
    struct { unsigned left; const char *name; } open[ETL_TLG_MAX_DEPTH + 1];
    unsigned depth = 0;

    for (unsigned i = 0; i < count; i++) {
        const etl_tlg_field *f = &fields[i];
        if (check_field(f, i, err, errsize) != ETL_OK) return ETL_FAILED;
        if (depth) open[depth].left--;
        if ((f->type & 0xFF) == ETL_IN_STRUCT) {
            if (depth == ETL_TLG_MAX_DEPTH)
                return etl_fail(err, errsize, "field %s: structs nested more than %d deep", f->name, ETL_TLG_MAX_DEPTH);
            depth++;
            open[depth].left = f->members;
            open[depth].name = f->name;
        }
        while (depth && open[depth].left == 0) depth--;
    }
    if (depth)
        return etl_fail(err, errsize, "struct %s: %u of its members are missing (the fields end first)", open[depth].name,
                    open[depth].left);
    return ETL_OK;
}

uint32_t etl_tlg_metadata_encode(uint8_t *dst, uint32_t cap, const char *name, const etl_tlg_field *fields,
                                 unsigned count, char *err, size_t errsize)
{
    struct out o = { dst, 0, cap };

    if (!name || !name[0]) return etl_fail(err, errsize, "the event has no name"), 0;
    if (count && !fields) return etl_fail(err, errsize, "%u fields, but none given", count), 0;
    if (check_fields(fields, count, err, errsize) != ETL_OK) return 0;
    put16(&o, 0); /* MetadataSize, filled below */
    put8(&o, 0);  /* the event's tags: none, one byte */
    put(&o, name, (uint32_t)strlen(name) + 1);
    for (unsigned i = 0; i < count; i++) {
        const etl_tlg_field *f = &fields[i];
        unsigned in = written_in_type(f->type & 0xFF), out = f->type >> 8;
        int chained = out != 0 || in == ETL_IN_STRUCT;
        put(&o, f->name, (uint32_t)strlen(f->name) + 1);
        put8(&o, (uint8_t)(in | (f->array == ETL_TLG_FIXED ? ETL_TLG_IN_CCOUNT : 0) |
                           (f->array == ETL_TLG_VARIABLE ? ETL_TLG_IN_VCOUNT : 0) | (chained ? ETL_TLG_IN_CHAIN : 0)));
        if (chained) put8(&o, (uint8_t)(in == ETL_IN_STRUCT ? f->members : out));
        if (f->array == ETL_TLG_FIXED) put16(&o, f->count);
        if (o.n > UINT16_MAX) break;
    }
    if (o.n > UINT16_MAX)
        return etl_fail(err, errsize, "event %s: its metadata takes more than %u bytes", name, UINT16_MAX), 0;
    if (dst && o.n <= cap) etl_put16(dst, (uint16_t)o.n);
    return o.n;
}

/* An item's header, its data, zeros to 8 bytes. */
static void put_item(struct out *o, uint16_t type, const uint8_t *data, uint32_t size, int more)
{
    static const uint8_t zeros[8];
    uint32_t padded = ETL_RECORD_SPACE(size);

    put16(o, (uint16_t)(8 + padded));
    put16(o, type);
    put16(o, more ? 1 : 0);
    put16(o, (uint16_t)size);
    put(o, data, size);
    put(o, zeros, padded - size);
}

uint32_t etl_tlg_ext_items_encode(uint8_t *dst, uint32_t cap, const uint8_t *traits, uint32_t traits_size,
                                  const uint8_t *meta, uint32_t meta_size)
{
    struct out o = { dst, 0, cap };

    if (traits_size > ETL_TLG_MAX_ITEM_DATA || meta_size > ETL_TLG_MAX_ITEM_DATA) return 0;
    /* In the order Windows writes them, the traits first. */
    put_item(&o, ETL_EXT_PROV_TRAITS, traits, traits_size, 1);
    put_item(&o, ETL_EXT_EVENT_SCHEMA_TL, meta, meta_size, 0);
    return o.n;
}
