/* SPDX-License-Identifier: MIT */
/* Unit tests of the format layer: record decoding of every header kind, GUIDs, names, UTF-16. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "check_run.h"
#include "synth.h"

static const etl_guid prov = { 0xe13c0d23, 0xccbc, 0x4e12, { 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 } };
static const uint8_t payload[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };

static int decode(const uint8_t *p, uint32_t avail, etl_event *ev, uint32_t *step)
{
    const char *why = NULL;
    int rc = etl_record_decode(NULL, p, avail, ev, step, &why);
    if (rc == ETL_RECORD_BAD) ck_assert_ptr_nonnull(why);
    return rc;
}

START_TEST(event_header_with_extended_items)
{
    uint8_t ext[64], rec[256];
    uint8_t related[16] = { 0xAA, 0xBB };
    uint64_t stack[3] = { 0x1122334455667788ull, 0x7ff600001000ull, 0x7ff600002000ull };
    uint32_t ext_len, size, step;
    etl_event ev;
    etl_ext_item item;
    int64_t ts;

    ext_len = synth_ext_item(ext, ETL_EXT_RELATED_ACTIVITYID, related, 16, 1);
    ext_len += synth_ext_item(ext + ext_len, ETL_EXT_STACK_TRACE64, stack, 20, 0); /* 20: padded to 24 */
    ck_assert_uint_eq(ext_len, 24 + 32);
    size = synth_event_header(rec, 1, 123456789, &prov, 154, 2, 4, 36, 7, 0x8000000000000001ull, 688, 4336,
                              ext, ext_len, payload, 13);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_EVENT);
    ck_assert_uint_eq(ev.header_type, ETL_HT_EVENT64);
    ck_assert_uint_eq(ev.pointer_size, 8);
    ck_assert_int_eq(ev.timestamp, 123456789);
    ck_assert(etl_guid_equal(&ev.provider, &prov));
    ck_assert_uint_eq(ev.id, 154);
    ck_assert_uint_eq(ev.version, 2);
    ck_assert_uint_eq(ev.level, 4);
    ck_assert_uint_eq(ev.opcode, 36);
    ck_assert_uint_eq(ev.task, 7);
    ck_assert_uint_eq(ev.keywords, 0x8000000000000001ull);
    ck_assert_uint_eq(ev.pid, 688);
    ck_assert_uint_eq(ev.tid, 4336);
    ck_assert_uint_eq(ev.has & (ETL_HAS_ID | ETL_HAS_LEVEL | ETL_HAS_PID_TID | ETL_HAS_PROVIDER),
                      ETL_HAS_ID | ETL_HAS_LEVEL | ETL_HAS_PID_TID | ETL_HAS_PROVIDER);
    ck_assert_uint_eq(ev.ext_count, 2);
    ck_assert_uint_eq(ev.payload_len, 13);
    ck_assert_ptr_eq(ev.payload, rec + 0x50 + ext_len);
    ck_assert_mem_eq(ev.payload, payload, 13);
    ck_assert_uint_eq(ev.record_size, size);
    ck_assert_uint_eq(step, 0x50 + 56 + 16);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 0, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_RELATED_ACTIVITYID);
    ck_assert_uint_eq(item.size, 16);
    ck_assert_mem_eq(item.data, related, 16);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 1, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_STACK_TRACE64);
    ck_assert_uint_eq(item.size, 20);
    ck_assert_uint_eq(etl_le64(item.data + 8), 0x7ff600001000ull);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 2, &item), ETL_FAILED);
    ck_assert_int_eq(etl_record_peek_timestamp(rec, 256, &ts), 1);
    ck_assert_int_eq(ts, 123456789);
}
END_TEST

START_TEST(event_header_32_bit)
{
    uint8_t rec[256];
    uint32_t step;
    etl_event ev;

    synth_event_header(rec, 0, 5, &prov, 1, 0, 5, 0, 0, 0, 1, 2, NULL, 0, payload, 20);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.header_type, ETL_HT_EVENT32);
    ck_assert_uint_eq(ev.pointer_size, 4);
    ck_assert_uint_eq(ev.ext_count, 0);
    ck_assert_uint_eq(ev.payload_len, 20);
    ck_assert_uint_eq(step, 0x50 + 24);
}
END_TEST

START_TEST(system_headers)
{
    uint8_t rec[256];
    uint32_t step;
    etl_event ev;
    char g[ETL_GUID_STRING_SIZE];

    /* Full SYSTEM64: Process DCStart (hook 0x0303). */
    synth_system(rec, 1, 0, 77, 0x0303, 4, 10, 11, payload, 17);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_SYSTEM);
    ck_assert_uint_eq(ev.pointer_size, 8);
    ck_assert_uint_eq(ev.hook_id, 0x0303);
    ck_assert_uint_eq(ev.opcode, 3);
    ck_assert_uint_eq(ev.version, 4);
    ck_assert_str_eq(etl_guid_format(&ev.provider, g), "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c");
    ck_assert_uint_eq(ev.pid, 10);
    ck_assert_uint_eq(ev.tid, 11);
    ck_assert_uint_eq(ev.payload_len, 17);
    ck_assert(!(ev.has & ETL_HAS_LEVEL));
    ck_assert(ev.has & ETL_HAS_CPU_TIME);
    ck_assert_uint_eq(step, 0x20 + 24);

    /* Process group, type 10: presented as ImageLoad/Load. */
    synth_system(rec, 0, 0, 77, ETL_HOOK_PROCESS_LOAD_IMAGE, 3, 10, 11, payload, 8);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.pointer_size, 4);
    ck_assert_str_eq(etl_guid_format(&ev.provider, g), "2cb15d1d-5fc1-11d2-abe1-00a0c911f518");
    ck_assert_uint_eq(ev.opcode, 10);

    /* Compact header: 0x18 bytes, no CPU times. */
    synth_system(rec, 1, 1, 78, 0x0524, 2, 0, 0, payload, 20);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_COMPACT);
    ck_assert_uint_eq(ev.payload_len, 20);
    ck_assert_ptr_eq(ev.payload, rec + 0x18);
    ck_assert(!(ev.has & ETL_HAS_CPU_TIME));

    /* A group beyond the table has no provider GUID. */
    synth_system(rec, 1, 0, 78, 0x2501, 2, 0, 0, NULL, 0);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert(!(ev.has & ETL_HAS_PROVIDER));
}
END_TEST

START_TEST(perfinfo_with_pebs_and_pmc)
{
    uint8_t rec[256];
    uint64_t pebs = 0xABCDEF, pmc[2] = { 111, 222 };
    uint32_t step;
    etl_event ev;
    etl_ext_item item;
    int64_t ts;

    synth_perfinfo(rec, 1, 999, 0x0524, 4, &pebs, pmc, 2, payload, 20);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_PERFINFO);
    ck_assert_uint_eq(ev.version, 4);
    ck_assert_uint_eq(ev.opcode, 36);
    ck_assert(!(ev.has & ETL_HAS_PID_TID));
    ck_assert_uint_eq(ev.ext_count, 2);
    ck_assert_uint_eq(ev.ext_len, 24);
    ck_assert_uint_eq(ev.payload_len, 20);
    ck_assert_ptr_eq(ev.payload, rec + 0x10 + 24);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 0, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_PEBS_INDEX);
    ck_assert_uint_eq(etl_le64(item.data), 0xABCDEF);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 1, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_PMC_COUNTERS);
    ck_assert_uint_eq(item.size, 16);
    ck_assert_uint_eq(etl_le64(item.data + 8), 222);
    ck_assert_int_eq(etl_record_peek_timestamp(rec, 256, &ts), 1);
    ck_assert_int_eq(ts, 999);

    /* PMC counters only. */
    synth_perfinfo(rec, 0, 999, 0x0F2E, 2, NULL, pmc, 1, payload, 8);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.ext_count, 1);
    ck_assert_int_eq(etl_event_ext_item_get(&ev, 0, &item), ETL_OK);
    ck_assert_uint_eq(item.type, ETL_EXT_PMC_COUNTERS);
    ck_assert_uint_eq(item.size, 8);

    /* Items claimed beyond the record. */
    synth_perfinfo(rec, 1, 999, 0x0F2E, 2, NULL, NULL, 0, NULL, 0);
    etl_put16(rec, 2 | 0x0700);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
}
END_TEST

START_TEST(classic_and_instance_headers)
{
    uint8_t rec[256];
    uint32_t step;
    etl_event ev;
    etl_record_context old = { 1 };
    const char *why;

    synth_classic(rec, 0, 0, 55, &prov, 2, 4, 1, 7644, 6452, payload, 20);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_CLASSIC);
    ck_assert_uint_eq(ev.header_type, ETL_HT_FULL32);
    ck_assert_uint_eq(ev.opcode, 2);
    ck_assert_uint_eq(ev.level, 4);
    ck_assert_uint_eq(ev.version, 1);
    ck_assert_uint_eq(ev.pid, 7644);
    ck_assert_uint_eq(ev.tid, 6452);
    ck_assert(etl_guid_equal(&ev.provider, &prov));
    ck_assert_uint_eq(ev.payload_len, 20);
    ck_assert(!(ev.has & ETL_HAS_ID));

    synth_classic(rec, 1, 1, 56, &prov, 3, 5, 2, 1, 2, payload, 4);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_INSTANCE);
    ck_assert_uint_eq(ev.header_type, ETL_HT_INSTANCE64);
    ck_assert_uint_eq(ev.instance_id, 7);
    ck_assert_uint_eq(ev.parent_instance_id, 3);
    ck_assert(etl_guid_equal(&ev.parent_guid, &prov));
    ck_assert_uint_eq(ev.payload_len, 4);
    ck_assert_ptr_eq(ev.payload, rec + 0x48);

    /* Layout version < 1.1: type 0x0B is the 0x38-byte EVENT_INSTANCE_HEADER. */
    synth_classic(rec, 0, 1, 56, &prov, 3, 5, 2, 1, 2, payload, 4);
    etl_put32(rec + 0x20, 9);
    etl_put32(rec + 0x24, 8);
    ck_assert_int_eq(etl_record_decode(&old, rec, 256, &ev, &step, &why), ETL_RECORD_OK);
    ck_assert_uint_eq(ev.payload_len, 4 + 0x10);
    ck_assert_ptr_eq(ev.payload, rec + 0x38);
    ck_assert_uint_eq(ev.instance_id, 9);
    ck_assert_uint_eq(ev.parent_instance_id, 8);
    ck_assert(!(ev.has & ETL_HAS_PROVIDER));
}
END_TEST

START_TEST(wpp_messages)
{
    uint8_t rec[256];
    uint32_t step, size;
    etl_event ev;
    int64_t ts;

    size = synth_message(rec, 12, ETL_MSG_SEQUENCE | ETL_MSG_GUID | ETL_MSG_TIMESTAMP | ETL_MSG_SYSTEMINFO, 77, &prov,
                         4242, 100, 200, payload, 5);
    ck_assert_uint_eq(size, 8 + 4 + 16 + 8 + 8 + 5);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert_int_eq(ev.kind, ETL_KIND_MESSAGE);
    ck_assert_uint_eq(ev.hook_id, 12);
    ck_assert_uint_eq(ev.message_sequence, 77);
    ck_assert(etl_guid_equal(&ev.provider, &prov));
    ck_assert_int_eq(ev.timestamp, 4242);
    ck_assert(ev.has & ETL_HAS_TIMESTAMP);
    ck_assert_uint_eq(ev.pid, 100);
    ck_assert_uint_eq(ev.tid, 200);
    ck_assert_uint_eq(ev.payload_len, 5);
    ck_assert_int_eq(etl_record_peek_timestamp(rec, 256, &ts), 1);
    ck_assert_int_eq(ts, 4242);

    /* Component id wins over the GUID; no timestamp. */
    synth_message(rec, 3, ETL_MSG_COMPONENTID | ETL_MSG_GUID, 0, &prov, 0, 0, 0, payload, 3);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    ck_assert(!(ev.has & ETL_HAS_TIMESTAMP));
    ck_assert(!(ev.has & ETL_HAS_PROVIDER));
    ck_assert(!(ev.has & ETL_HAS_PID_TID));
    ck_assert_uint_eq(ev.payload_len, 3);
    ck_assert_int_eq(etl_record_peek_timestamp(rec, 256, &ts), 0);

    /* Items beyond the record's size. */
    synth_message(rec, 3, ETL_MSG_GUID, 0, &prov, 0, 0, 0, NULL, 0);
    etl_put16(rec + 6, ETL_MSG_GUID | ETL_MSG_TIMESTAMP | ETL_MSG_SYSTEMINFO);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
}
END_TEST

/* The record at rec (size bytes) has its header's timestamp hts (0: none) and a payload
   timestamp pts (0: none) where etl_record_timestamp_fields says. */
static void check_timestamp_fields(const uint8_t *rec, uint32_t size, int64_t hts, int64_t pts)
{
    uint32_t step, off[ETL_RECORD_TIMESTAMP_FIELDS];
    etl_event ev;

    ck_assert_int_eq(decode(rec, size, &ev, &step), ETL_RECORD_OK);
    ck_assert_uint_eq(etl_record_timestamp_fields(&ev, off), hts ? (pts ? 2u : 1u) : 0u);
    if (hts) ck_assert_int_eq(etl_le64s(rec + off[0]), hts);
    if (pts) ck_assert_int_eq(etl_le64s(rec + off[1]), pts);
}

/* Where each kind of record keeps its timestamps: the header's, and the payload's that repeats
   the clock (StackWalk stacks and key references, LBR), whatever items come before it. */
START_TEST(timestamp_fields)
{
    uint8_t rec[512], stack[24] = { 0 };
    uint64_t pebs = 5, pmc[3] = { 1, 2, 3 };
    etl_lbr_entry lbr[1] = { { 1, 2, 3 } };
    int n = 0;

    etl_put64(stack, 0x1111);
#define CASE(expr, hts, pts) do { check_timestamp_fields(rec, (expr), (hts), (pts)); n++; } while (0)
    CASE(synth_system(rec, 1, 0, 7001, 0x0501, 3, 1, 2, payload, 20), 7001, 0);
    CASE(synth_system(rec, 0, 1, 7002, 0x0524, 4, 1, 2, payload, 20), 7002, 0);
    CASE(synth_perfinfo(rec, 1, 7003, 0x0F2E, 2, NULL, NULL, 0, payload, 16), 7003, 0);
    CASE(synth_perfinfo(rec, 1, 7004, ETL_HOOK_STACKWALK_STACK, 2, &pebs, pmc, 3, stack, 24), 7004, 0x1111);
    CASE(synth_perfinfo(rec, 0, 7005, ETL_HOOK_STACKWALK_KEY_USER, 2, NULL, NULL, 0, stack, 24), 7005, 0x1111);
    CASE(synth_system(rec, 1, 0, 7006, ETL_HOOK_STACKWALK_KEY_KERNEL, 2, 0, 0, stack, 24), 7006, 0x1111);
    CASE(etl_record_encode_lbr(rec, sizeof rec, 7007, 1, 2, 0, lbr, 1), 7007, 7007);
    CASE(synth_classic(rec, 1, 0, 7008, &prov, 1, 4, 2, 1, 2, payload, 20), 7008, 0);
    CASE(synth_classic(rec, 0, 1, 7009, &prov, 1, 4, 2, 1, 2, stack, 24), 7009, 0);
    CASE(synth_event_header(rec, 1, 7010, &prov, 1, 0, 4, 0, 0, 0, 1, 2, NULL, 0, stack, 24), 7010, 0);
    CASE(synth_message(rec, 1, ETL_MSG_SEQUENCE | ETL_MSG_GUID | ETL_MSG_TIMESTAMP, 9, &prov, 7011, 0, 0, payload, 3),
         7011, 0);
    CASE(synth_message(rec, 1, ETL_MSG_COMPONENTID | ETL_MSG_TIMESTAMP | ETL_MSG_SYSTEMINFO, 0, NULL, 7012, 1, 2,
                       payload, 3), 7012, 0);
    /* No timestamp: none to convert (PERFORMANCE_TIMESTAMP only reserves the space). */
    CASE(synth_message(rec, 1, ETL_MSG_PERF_TIMESTAMP, 0, NULL, 0, 0, 0, payload, 3), 0, 0);
    /* A StackWalk event too short to hold its EventTimeStamp has none. */
    CASE(synth_perfinfo(rec, 1, 7014, ETL_HOOK_STACKWALK_STACK, 2, NULL, NULL, 0, stack, 4), 7014, 0);
#undef CASE
    ck_assert_int_eq(n, 14);
}
END_TEST

START_TEST(damaged_records)
{
    uint8_t rec[256], ext[64];
    uint32_t step, size, ext_len;
    etl_event ev;

    memset(rec, 0xFF, sizeof rec);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_END);

    size = synth_event_header(rec, 1, 1, &prov, 1, 0, 4, 0, 0, 0, 1, 2, NULL, 0, payload, 20);
    ck_assert_int_eq(decode(rec, size - 1, &ev, &step), ETL_RECORD_BAD); /* overruns the used size */
    ck_assert_int_eq(decode(rec, 3, &ev, &step), ETL_RECORD_BAD);
    etl_put16(rec, 0);                                                 /* zero-size record */
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
    etl_put16(rec, 0x4F);                                              /* smaller than its header */
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);

    synth_system(rec, 1, 0, 1, 0x0303, 2, 0, 0, NULL, 0);
    rec[2] = ETL_HT_ERROR;                                             /* layout unknown */
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
    rec[3] = 0x40;                                                     /* not a trace header */
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);

    /* Extended item chain: linkage set on the last item that fits. */
    ext_len = synth_ext_item(ext, ETL_EXT_TS_ID, payload, 4, 1);
    synth_event_header(rec, 1, 1, &prov, 1, 0, 4, 0, 0, 0, 1, 2, ext, ext_len, NULL, 0);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
    /* Item size 0, and an item that claims more data than its size. */
    ext_len = synth_ext_item(ext, ETL_EXT_TS_ID, payload, 4, 0);
    synth_event_header(rec, 1, 1, &prov, 1, 0, 4, 0, 0, 0, 1, 2, ext, ext_len, NULL, 0);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_OK);
    etl_put16(rec + 0x50, 0);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
    etl_put16(rec + 0x50, 16);
    etl_put16(rec + 0x56, 9);
    ck_assert_int_eq(decode(rec, 256, &ev, &step), ETL_RECORD_BAD);
}
END_TEST

START_TEST(guids_and_names)
{
    etl_guid g;
    char s[ETL_GUID_STRING_SIZE];
    const etl_guid *lbr = etl_group_guid(ETL_GROUP_LBR);

    ck_assert_int_eq(etl_guid_parse("{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}", &g), ETL_OK);
    ck_assert(etl_guid_equal(&g, &prov));
    ck_assert_str_eq(etl_guid_format(&g, s), "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4");
    ck_assert_str_eq(etl_guid_name(&g), "Microsoft-Windows-DotNETRuntime");
    ck_assert_int_eq(etl_guid_parse("e13c0d23-ccbc-4e12-931b-d9cc2eee27e", &g), ETL_FAILED);
    ck_assert_int_eq(etl_guid_parse("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4x", &g), ETL_FAILED);
    ck_assert_int_eq(etl_guid_parse("{e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", &g), ETL_FAILED);
    ck_assert_int_eq(etl_guid_parse("e13c0d23ccbc-4e12-931b-d9cc2eee27e4", &g), ETL_FAILED);
    ck_assert_str_eq(etl_guid_format(lbr, s), "99134383-5248-43fc-834b-529454e75df3");
    /* the text of any GUID is printf's, and parses back */
    {
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (int i = 0; i < 2000; i++) {
            char want[ETL_GUID_STRING_SIZE];
            etl_guid back;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            g.data1 = (uint32_t)x;
            g.data2 = (uint16_t)(x >> 32);
            g.data3 = (uint16_t)(x >> 48);
            for (int k = 0; k < 8; k++) g.data4[k] = (uint8_t)(x >> (8 * ((k * 3) % 8)) ^ (unsigned)i);
            if (i == 0) memset(&g, 0, sizeof g);
            if (i == 1) memset(&g, 0xFF, sizeof g);
            snprintf(want, sizeof want, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", (unsigned)g.data1,
                     (unsigned)g.data2, (unsigned)g.data3, g.data4[0], g.data4[1], g.data4[2], g.data4[3], g.data4[4],
                     g.data4[5], g.data4[6], g.data4[7]);
            ck_assert_str_eq(etl_guid_format(&g, s), want);
            ck_assert_int_eq(etl_guid_parse(s, &back), ETL_OK);
            ck_assert(etl_guid_equal(&back, &g));
        }
    }
    ck_assert_ptr_null(etl_group_guid(ETL_GROUP_COUNT));
    ck_assert_str_eq(etl_guid_name(etl_group_guid(ETL_GROUP_STACKWALK)), "StackWalk");
    memset(&g, 0, sizeof g);
    ck_assert_ptr_null(etl_guid_name(&g));
    /* The demo provider: the GUID Windows derives from its name, found in any case. */
    ck_assert_int_eq(etl_guid_from_name("ETLdemo", &g), ETL_OK);
    ck_assert_str_eq(etl_guid_format(&g, s), "458d4a63-7cc9-5239-62c4-f8aebbe597ac");
    ck_assert_str_eq(etl_guid_name(&g), "etldemo");
    ck_assert_int_eq(etl_guid_from_name("etldemo2", &g), ETL_FAILED);

    /* The in-file layout: Data1..3 little-endian, Data4 as bytes. */
    {
        uint8_t raw[16];
        etl_guid_write(raw, &prov);
        ck_assert_uint_eq(raw[0], 0x23);
        ck_assert_uint_eq(raw[3], 0xe1);
        ck_assert_uint_eq(raw[4], 0xbc);
        ck_assert_uint_eq(raw[8], 0x93);
        etl_guid_read(raw, &g);
        ck_assert(etl_guid_equal(&g, &prov));
    }

    ck_assert_str_eq(etl_event_kind_name(ETL_KIND_PERFINFO), "perfinfo");
    ck_assert_str_eq(etl_event_kind_name(ETL_KIND_MESSAGE), "message");
    ck_assert_str_eq(etl_event_kind_name(99), "unknown");
    ck_assert_str_eq(etl_ext_type_name(ETL_EXT_STACK_KEY64), "STACK_KEY64");
    ck_assert_str_eq(etl_ext_type_name(400), "UNKNOWN");
}
END_TEST

START_TEST(log_file_modes)
{
    char s[256];

    ck_assert_str_eq(etl_log_file_mode_format(0, s, sizeof s), "(0)");
    ck_assert_str_eq(etl_log_file_mode_format(0x04010001, s, sizeof s), "SEQUENTIAL|RELOG|COMPRESSED");
    ck_assert_str_eq(etl_log_file_mode_format(0x08000002, s, sizeof s), "CIRCULAR|INDEPENDENT_SESSION");
    ck_assert_str_eq(etl_log_file_mode_format(0x40000001, s, sizeof s), "SEQUENTIAL|0x40000000");
    ck_assert_str_eq(etl_log_file_mode_format(0x08000002, s, 9), "CIRCULAR");
}
END_TEST

START_TEST(utf16_strings)
{
    /* "A", U+00E9, U+20AC, U+1F600 (surrogate pair), lone high surrogate, NUL, "x" */
    const uint8_t in[] = { 'A', 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0x00, 0xD8, 'B', 0, 0, 0, 'x', 0 };
    char out[64];
    size_t used = etl_utf16_to_utf8(in, sizeof in / 2, out, sizeof out);

    ck_assert_uint_eq(used, 8);
    ck_assert_str_eq(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD" "B");
    /* Output too small: truncated at a character boundary, still terminated. */
    used = etl_utf16_to_utf8(in, sizeof in / 2, out, 4);
    ck_assert_str_eq(out, "A\xC3\xA9");
    /* No terminator within n units. */
    used = etl_utf16_to_utf8(in, 1, out, sizeof out);
    ck_assert_uint_eq(used, 1);
    ck_assert_str_eq(out, "A");
}
END_TEST

START_TEST(buffer_headers)
{
    uint8_t h[ETL_BUFFER_HEADER_SIZE] = { 0 };
    etl_buffer_header bh;

    etl_put32(h, 65536);
    etl_put32(h + ETL_BH_OFFSET, 1224);
    etl_put64(h + ETL_BH_SEQUENCE_NUMBER, 42);
    h[ETL_BH_CLIENT_CONTEXT] = 0x0c;
    h[ETL_BH_CLIENT_CONTEXT + 1] = 0x08; /* Alignment byte in old files */
    etl_put16(h + ETL_BH_BUFFER_FLAG, 0x0001);
    etl_buffer_header_read(h, &bh);
    ck_assert_uint_eq(bh.buffer_size, 65536);
    ck_assert_uint_eq(bh.offset, 1224);
    ck_assert_int_eq(bh.sequence_number, 42);
    ck_assert_uint_eq(bh.processor, 12); /* 8-bit ProcessorNumber without PROC_INDEX */
    etl_put16(h + ETL_BH_BUFFER_FLAG, ETL_BUFFER_FLAG_PROC_INDEX);
    h[ETL_BH_CLIENT_CONTEXT + 1] = 0x01;
    etl_buffer_header_read(h, &bh);
    ck_assert_uint_eq(bh.processor, 0x010c); /* 16-bit ProcessorIndex */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("records");

    tcase_add_test(tc, event_header_with_extended_items);
    tcase_add_test(tc, event_header_32_bit);
    tcase_add_test(tc, system_headers);
    tcase_add_test(tc, perfinfo_with_pebs_and_pmc);
    tcase_add_test(tc, classic_and_instance_headers);
    tcase_add_test(tc, wpp_messages);
    tcase_add_test(tc, timestamp_fields);
    tcase_add_test(tc, damaged_records);
    tcase_add_test(tc, guids_and_names);
    tcase_add_test(tc, log_file_modes);
    tcase_add_test(tc, utf16_strings);
    tcase_add_test(tc, buffer_headers);
    suite_add_tcase(s, tc);
    return check_run(s);
}
