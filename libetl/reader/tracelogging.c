/* SPDX-License-Identifier: MIT */
/* TraceLogging's self-describing events: the EVENT_SCHEMA_TL and PROV_TRAITS items read into a schema (doc/format.md sections 4.11 and 18.3). */
#include <stdio.h>
#include <string.h>

#include "reader/reader.h"

int etl_tracelogging_provider_name(const uint8_t *traits, uint32_t n, char *out, size_t size)
{
    uint32_t total;
    const uint8_t *z;

    if (n < 3 || !size) return ETL_FAILED;
    total = etl_le16(traits);
    if (total < 3 || total > n) return ETL_FAILED;
    z = memchr(traits + 2, 0, total - 2);
    if (!z || (size_t)(z - (traits + 2)) >= size) return ETL_FAILED;
    memcpy(out, traits + 2, (size_t)(z - (traits + 2)) + 1);
    return ETL_OK;
}

/* TlgOut values onto TDH's out types, given the in type's size (for HEX, SIGNED, UNSIGNED). */
static uint16_t out_type_of(unsigned tlg_out, unsigned in_type)
{
    unsigned size = etl_in_type_fixed_size(in_type, 8);

    switch (tlg_out) {
    case ETL_TLG_OUT_NOPRINT: return ETL_OUT_NOPRINT;
    case ETL_TLG_OUT_STRING: return ETL_OUT_STRING;
    case ETL_TLG_OUT_BOOLEAN: return ETL_OUT_BOOLEAN;
    case ETL_TLG_OUT_HEX:
        if (in_type == ETL_IN_BINARY || in_type == ETL_IN_COUNTED_BINARY) return ETL_OUT_HEX_BINARY;
        return size == 1 ? ETL_OUT_HEXINT8 : size == 2 ? ETL_OUT_HEXINT16 : size == 4 ? ETL_OUT_HEXINT32 : ETL_OUT_HEXINT64;
    case ETL_TLG_OUT_PID: return ETL_OUT_PID;
    case ETL_TLG_OUT_TID: return ETL_OUT_TID;
    case ETL_TLG_OUT_PORT: return ETL_OUT_PORT;
    case ETL_TLG_OUT_IPV4: return ETL_OUT_IPV4;
    case ETL_TLG_OUT_IPV6: return ETL_OUT_IPV6;
    case ETL_TLG_OUT_SOCKETADDRESS: return ETL_OUT_SOCKET_ADDRESS;
    case ETL_TLG_OUT_XML: return ETL_OUT_XML;
    case ETL_TLG_OUT_JSON: return ETL_OUT_JSON;
    case ETL_TLG_OUT_WIN32ERROR: return ETL_OUT_WIN32_ERROR;
    case ETL_TLG_OUT_NTSTATUS: return ETL_OUT_NTSTATUS;
    case ETL_TLG_OUT_HRESULT: return ETL_OUT_HRESULT;
    case ETL_TLG_OUT_FILETIME: return ETL_OUT_DATETIME;
    case ETL_TLG_OUT_SIGNED:
        return size == 1 ? ETL_OUT_BYTE : size == 2 ? ETL_OUT_SHORT : size == 4 ? ETL_OUT_INT : ETL_OUT_LONG;
    case ETL_TLG_OUT_UNSIGNED:
        return size == 1 ? ETL_OUT_UNSIGNED_BYTE : size == 2 ? ETL_OUT_UNSIGNED_SHORT
             : size == 4 ? ETL_OUT_UNSIGNED_INT : ETL_OUT_UNSIGNED_LONG;
    case ETL_TLG_OUT_DATETIME_CULTURE_INSENSITIVE: return ETL_OUT_CULTURE_INSENSITIVE_DATETIME;
    case ETL_TLG_OUT_UTF8: return ETL_OUT_UTF8;
    case ETL_TLG_OUT_PKCS7_WITH_TYPE_INFO: return ETL_OUT_PKCS7_WITH_TYPE_INFO;
    case ETL_TLG_OUT_CODE_POINTER: return ETL_OUT_CODE_POINTER;
    case ETL_TLG_OUT_DATETIME_UTC: return ETL_OUT_DATETIME_UTC;
    default: return ETL_OUT_NULL;
    }
}

/* Skips chained bytes (bit 7: another follows) at *o, at most max of them: 0, or -1 when the
   metadata ends first or the chain is longer. */
static int skip_chain(const uint8_t *m, uint32_t n, uint32_t *o, unsigned max)
{
    for (unsigned k = 0; k < max; k++) {
        if (*o >= n) return -1;
        if (!(m[(*o)++] & 0x80)) return 0;
    }
    return -1;
}

/* A NUL-terminated name at *o: its length, *o moved past it; -1 when it does not end. */
static long name_at(const uint8_t *m, uint32_t n, uint32_t *o)
{
    const uint8_t *z = *o < n ? memchr(m + *o, 0, n - *o) : NULL;
    long len;

    if (!z) return -1;
    len = (long)(z - (m + *o));
    *o += (uint32_t)len + 1;
    return len;
}

etl_schema_event *etl_tracelogging_schema(etl_arena *a, const etl_guid *provider, const char *provider_name,
                                          const uint8_t *meta, uint32_t size, char *err, size_t errsize)
{
    etl_schema_event *ev;
    etl_schema_field *f;
    uint32_t n, o = 2, count = 0, cap;
    long len;
    const char *event;

    if (size < 4) goto short_meta;
    n = etl_le16(meta);
    if (n < 4 || n > size) {
        snprintf(err, errsize, "metadata size %u in an item of %u bytes", n, size);
        return NULL;
    }
    if (skip_chain(meta, n, &o, 4) != 0) goto short_meta; /* the event's tags */
    if ((len = name_at(meta, n, &o)) < 0) goto short_meta;
    if (!(event = etl_arena_strndup(a, (const char *)meta + o - len - 1, (size_t)len))) goto nomem;
    /* Every field takes at least two bytes of metadata (an empty name, an in type). */
    cap = (n - o) / 2 + 1;
    if (!(ev = etl_arena_alloc(a, sizeof *ev)) || !(f = etl_arena_alloc(a, cap * sizeof *f))) goto nomem;
    memset(ev, 0, sizeof *ev);
    while (o < n) {
        etl_schema_field *x = &f[count];
        uint8_t in, out = 0;
        unsigned type;

        memset(x, 0, sizeof *x);
        if ((len = name_at(meta, n, &o)) < 0 || o >= n) {
            snprintf(err, errsize, "field %u of event %s: its name or in type runs past the metadata's %u bytes",
                     count, event, n);
            return NULL;
        }
        if (!(x->name = etl_arena_strndup(a, (const char *)meta + o - len - 1, (size_t)len))) goto nomem;
        in = meta[o++];
        if (in & ETL_TLG_IN_CHAIN) {
            if (o >= n) goto short_field;
            out = meta[o++];
            if ((out & ETL_TLG_OUT_CHAIN) && skip_chain(meta, n, &o, 4) != 0) goto short_field; /* the field's tag */
        }
        type = in & ETL_TLG_IN_TYPE_MASK;
        if (type == 0 || type > ETL_IN_COUNTED_BINARY) {
            snprintf(err, errsize, "field %s of event %s: unknown in type %u", x->name, event, type);
            return NULL;
        }
        x->in_type = (uint16_t)(type == ETL_TLG_IN_POINTER_UNSUPPORTED ? ETL_IN_POINTER : type);
        if (type == ETL_IN_STRUCT) {
            x->members = out & ETL_TLG_OUT_TYPE_MASK;
        } else {
            x->out_type = out_type_of(out & ETL_TLG_OUT_TYPE_MASK, x->in_type);
            if (type == ETL_IN_BINARY) x->length_kind = ETL_LEN_PREFIX16;
        }
        switch (in & ETL_TLG_IN_COUNT_MASK) {
        case ETL_TLG_IN_CCOUNT:
            if (o + 2 > n) goto short_field;
            x->count_kind = ETL_COUNT_CONST;
            x->count = etl_le16(meta + o);
            o += 2;
            break;
        case ETL_TLG_IN_VCOUNT:
            x->count_kind = ETL_COUNT_PREFIX16;
            break;
        case ETL_TLG_IN_CUSTOM:
            /* a custom serializer's type: a u16 size and that many bytes of schema; the data is
               a u16 byte count and the bytes, shown as binary */
            if (o + 2 > n || etl_le16(meta + o) > n - o - 2) goto short_field;
            o += 2 + etl_le16(meta + o);
            x->in_type = ETL_IN_BINARY;
            x->out_type = ETL_OUT_HEX_BINARY;
            x->length_kind = ETL_LEN_PREFIX16;
            x->members = 0;
            break;
        default:
            break;
        }
        if (++count >= cap) break;
    }
    ev->provider = *provider;
    ev->key = ETL_KEY_ID;
    ev->source = ETL_SCHEMA_TRACELOGGING;
    ev->provider_name = provider_name;
    ev->opcode_name = NULL;
    ev->task_name = event;
    if (!(ev->event_name = etl_schema_event_name(a, provider_name, event, NULL))) goto nomem;
    ev->field_count = (uint16_t)count;
    ev->fields = f;
    if (count > UINT16_MAX) {
        snprintf(err, errsize, "event %s: too many fields", event);
        return NULL;
    }
    if (etl_schema_event_prepare(ev, err, errsize) != ETL_OK) return NULL;
    return ev;
short_meta:
    snprintf(err, errsize, "the event's name or tags run past the metadata's %u bytes", size);
    return NULL;
short_field:
    snprintf(err, errsize, "field %u of event %s runs past the metadata's %u bytes", count, event, n);
    return NULL;
nomem:
    snprintf(err, errsize, "out of memory");
    return NULL;
}
