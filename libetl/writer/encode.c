/* SPDX-License-Identifier: MIT */
/* Encoding of event records (EVENT_HEADER, system, perfinfo, classic, LBR). */
#include <string.h>

#include "format/format.h"
#include "writer/writer.h"

static uint32_t data_size(const etl_data *data, unsigned ndata)
{
    uint64_t n = 0;

    for (unsigned i = 0; i < ndata; i++) n += data[i].size;
    return n > ETL_MAX_RECORD_SIZE ? ETL_MAX_RECORD_SIZE + 1 : (uint32_t)n;
}

/* Copies the user data after the header and zeroes the padding up to the next record. */
static void put_data(uint8_t *p, const etl_data *data, unsigned ndata, uint32_t size_so_far)
{
    uint32_t pos = 0;

    for (unsigned i = 0; i < ndata; i++) {
        if (data[i].size) memcpy(p + pos, data[i].ptr, data[i].size);
        pos += data[i].size;
    }
    memset(p + pos, 0, ETL_RECORD_SPACE(size_so_far + pos) - (size_so_far + pos));
}

/* A GUID in the Windows layout as two words. */
static void put_guid(uint8_t *p, const etl_guid *g)
{
    uint64_t d4;

    memcpy(&d4, g->data4, 8);
    etl_put64(p, (uint64_t)g->data1 | (uint64_t)g->data2 << 32 | (uint64_t)g->data3 << 48);
    memcpy(p + 8, &d4, 8);
}

static uint32_t ext_item_size(uint32_t data_size) { return 8 + ETL_RECORD_SPACE(data_size); }

static uint8_t *put_ext_item(uint8_t *p, uint16_t type, uint16_t size, int more)
{
    etl_put16(p, (uint16_t)ext_item_size(size));
    etl_put16(p + 2, type);
    etl_put16(p + 4, more ? 1 : 0);
    etl_put16(p + 6, size);
    memset(p + 8 + size, 0, ext_item_size(size) - 8 - size);
    return p + 8;
}

/* The EVENT_HEADER as ten whole words (a staged record is copied right after: see etl_put64). */
static inline void put_event_header(uint8_t *dst, uint32_t size, int ext, int64_t ts, uint32_t pid, uint32_t tid,
                                    const etl_guid *provider, const etl_event_descriptor *d, const etl_guid *activity)
{
    etl_put64(dst, (uint64_t)(uint16_t)size | (uint64_t)ETL_HT_EVENT64 << 16 | (uint64_t)0xC0 << 24 |
                       (uint64_t)(ext ? ETL_EVENT_HEADER_FLAG_EXTENDED_INFO : 0) << 32);
    etl_put64(dst + 8, (uint64_t)tid | (uint64_t)pid << 32);
    etl_put64(dst + 16, (uint64_t)ts);
    put_guid(dst + 0x18, provider);
    etl_put64(dst + 0x28, (uint64_t)d->id | (uint64_t)d->version << 16 | (uint64_t)d->channel << 24 |
                              (uint64_t)d->level << 32 | (uint64_t)d->opcode << 40 | (uint64_t)d->task << 48);
    etl_put64(dst + 0x30, d->keywords);
    etl_put64(dst + 0x38, 0); /* ProcessorTime */
    if (activity) {
        put_guid(dst + 0x40, activity);
    } else {
        etl_put64(dst + 0x40, 0);
        etl_put64(dst + 0x48, 0);
    }
}

uint32_t etl_record_encode_event_items(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                       const etl_guid *provider, const etl_event_descriptor *d, const uint8_t *items,
                                       uint32_t items_size, const etl_data *data, unsigned ndata)
{
    uint32_t size;

    if (items_size > ETL_MAX_RECORD_SIZE || items_size % 8) return 0;
    size = ETL_EVENT_HEADER_SIZE + items_size + data_size(data, ndata);
    if (size > ETL_MAX_RECORD_SIZE) return 0;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    put_event_header(dst, size, items_size != 0, ts, pid, tid, provider, d, NULL);
    memcpy(dst + ETL_EVENT_HEADER_SIZE, items, items_size);
    put_data(dst + ETL_EVENT_HEADER_SIZE + items_size, data, ndata, ETL_EVENT_HEADER_SIZE + items_size);
    return size;
}

uint32_t etl_record_encode_event(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                                 const etl_guid *provider, const etl_event_descriptor *d,
                                 const etl_event_extras *x, const etl_data *data, unsigned ndata)
{
    uint32_t ext = 0, size;
    int has_related = x && x->related_activity_id, has_stack = x && x->stack && x->stack_frames;
    int has_items = x && x->ext_items && x->ext_items_size;
    uint8_t *p;

    if (has_related) ext += ext_item_size(16);
    if (has_stack) {
        if (x->stack_frames > (ETL_MAX_RECORD_SIZE - 8) / 8) return 0;
        ext += ext_item_size(8 + 8 * x->stack_frames);
    }
    if (has_items) {
        if (x->ext_items_size > ETL_MAX_RECORD_SIZE || x->ext_items_size % 8) return 0;
        ext += x->ext_items_size;
    }
    size = ETL_EVENT_HEADER_SIZE + ext + data_size(data, ndata);
    if (size > ETL_MAX_RECORD_SIZE) return 0;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    if (x && x->timestamp) ts = x->timestamp;

    put_event_header(dst, size, ext != 0, ts, pid, tid, provider, d, x ? x->activity_id : NULL);
    p = dst + ETL_EVENT_HEADER_SIZE;
    if (has_related) {
        etl_guid_write(put_ext_item(p, ETL_EXT_RELATED_ACTIVITYID, 16, has_stack || has_items), x->related_activity_id);
        p += ext_item_size(16);
    }
    if (has_stack) {
        uint16_t n = (uint16_t)(8 + 8 * x->stack_frames);
        uint8_t *q = put_ext_item(p, ETL_EXT_STACK_TRACE64, n, has_items);
        etl_put64(q, x->stack_match_id);
        for (unsigned i = 0; i < x->stack_frames; i++) etl_put64(q + 8 + 8 * i, x->stack[i]);
        p += ext_item_size(n);
    }
    if (has_items) {
        memcpy(p, x->ext_items, x->ext_items_size);
        p += x->ext_items_size;
    }
    put_data(p, data, ndata, ETL_EVENT_HEADER_SIZE + ext);
    return size;
}

uint32_t etl_record_encode_system(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                  uint32_t pid, uint32_t tid, const etl_data *data, unsigned ndata)
{
    uint32_t size = ETL_SYSTEM_HEADER_SIZE + data_size(data, ndata);

    if (size > ETL_MAX_RECORD_SIZE) return 0;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    /* The PEBS/PMC bits of the Version word announce items this encoder does not write. */
    etl_put16(dst, (uint16_t)(version & ~(ETL_TRACE_HEADER_PEBS_INDEX_FLAG | ETL_TRACE_HEADER_PMC_MASK)));
    dst[2] = ETL_HT_SYSTEM64;
    dst[3] = 0xC0;
    etl_put16(dst + 4, (uint16_t)size);
    etl_put16(dst + 6, hook); /* Type, then Group */
    etl_put32(dst + 8, tid);
    etl_put32(dst + 12, pid);
    etl_put64(dst + 16, (uint64_t)ts);
    etl_put32(dst + 0x18, 0); /* KernelTime */
    etl_put32(dst + 0x1C, 0); /* UserTime */
    put_data(dst + ETL_SYSTEM_HEADER_SIZE, data, ndata, ETL_SYSTEM_HEADER_SIZE);
    return size;
}

uint32_t etl_record_encode_classic(uint8_t *dst, uint32_t cap, int64_t ts, const etl_guid *class_guid, uint8_t type,
                                   uint8_t level, uint16_t version, uint32_t pid, uint32_t tid, const etl_data *data,
                                   unsigned ndata)
{
    uint32_t size = ETL_CLASSIC_HEADER_SIZE + data_size(data, ndata);

    if (size > ETL_MAX_RECORD_SIZE) return 0;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    /* Size in the low word, then HeaderType and MarkerFlags (doc/format.md 4.4). */
    etl_put32(dst, size | (uint32_t)ETL_HT_FULL64 << 16 | 0xC0u << 24);
    dst[4] = type;
    dst[5] = level;
    etl_put16(dst + 6, version);
    etl_put32(dst + 8, tid);
    etl_put32(dst + 12, pid);
    etl_put64(dst + 16, (uint64_t)ts);
    etl_guid_write(dst + 0x18, class_guid);
    etl_put32(dst + 0x28, 0); /* KernelTime */
    etl_put32(dst + 0x2C, 0); /* UserTime */
    put_data(dst + ETL_CLASSIC_HEADER_SIZE, data, ndata, ETL_CLASSIC_HEADER_SIZE);
    return size;
}

uint32_t etl_record_encode_perfinfo(uint8_t *dst, uint32_t cap, int64_t ts, uint16_t hook, uint16_t version,
                                    const etl_data *data, unsigned ndata)
{
    uint32_t size = ETL_PERFINFO_HEADER_SIZE + data_size(data, ndata);

    if (size > ETL_MAX_RECORD_SIZE) return 0;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    etl_put16(dst, (uint16_t)(version & ~(ETL_TRACE_HEADER_PEBS_INDEX_FLAG | ETL_TRACE_HEADER_PMC_MASK)));
    dst[2] = ETL_HT_PERFINFO64;
    dst[3] = 0xC0;
    etl_put16(dst + 4, (uint16_t)size);
    etl_put16(dst + 6, hook);
    etl_put64(dst + 8, (uint64_t)ts);
    put_data(dst + ETL_PERFINFO_HEADER_SIZE, data, ndata, ETL_PERFINFO_HEADER_SIZE);
    return size;
}

uint32_t etl_record_encode_lbr(uint8_t *dst, uint32_t cap, int64_t ts, uint32_t pid, uint32_t tid,
                               uint32_t filters, const etl_lbr_entry *entries, unsigned count)
{
    uint8_t head[24];
    etl_data data[2];
    uint32_t size;

    if (count > (ETL_MAX_RECORD_SIZE - ETL_PERFINFO_HEADER_SIZE - 24) / 24) return 0;
    size = ETL_PERFINFO_HEADER_SIZE + 24 + 24 * count;
    if (!dst || cap < ETL_RECORD_SPACE(size)) return size;
    etl_put64(head, (uint64_t)ts);
    etl_put32(head + 8, pid);
    etl_put32(head + 12, tid);
    etl_put32(head + 16, filters);
    etl_put32(head + 20, 0);
    data[0].ptr = head;
    data[0].size = 24;
    data[1].ptr = NULL;
    data[1].size = 0;
    etl_record_encode_perfinfo(dst, cap, ts, ETL_HOOK_LBR_SAMPLE, 2, data, 1);
    etl_put16(dst + 4, (uint16_t)size);
    for (unsigned i = 0; i < count; i++) {
        uint8_t *e = dst + ETL_PERFINFO_HEADER_SIZE + 24 + 24 * i;
        etl_put64(e, entries[i].from);
        etl_put64(e + 8, entries[i].to);
        etl_put64(e + 16, entries[i].reserved);
    }
    memset(dst + size, 0, ETL_RECORD_SPACE(size) - size);
    return size;
}
