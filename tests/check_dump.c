/* SPDX-License-Identifier: MIT */
/* Tests of the tools' event formatting: JSON keys and nulls, CSV columns, text, summary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

/* The output of fn for the first matching event of a sample, as a string (caller frees). */
static char *format_event(const char *sample, int kind, int format)
{
    etl_reader *r = NULL;
    etl_event ev;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(sample), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK)
        if (ev.kind == kind) break;
    ck_assert_int_eq(ev.kind, kind);
    dump_event(f, format, r, &ev);
    fclose(f);
    etl_reader_close(r);
    return text;
}

START_TEST(json_event_header)
{
    char *s = format_event("samples/perfview_smallEtlFile.etl", ETL_KIND_EVENT, DUMP_JSONL);
    ck_assert_str_eq(s, "{\"ts\":185227292196,\"time\":\"2016-08-17T23:30:22.068863706Z\",\"cpu\":0,\"pid\":688,"
                        "\"tid\":4336,\"provider\":\"a669021c-c450-4609-a035-5af59af4df18\",\"kind\":\"event\","
                        "\"id\":154,\"version\":2,\"opcode\":36,\"level\":4,\"task\":2,\"keywords\":536870920,"
                        "\"payload_len\":584,\"ext\":0}\n");
    free(s);
}
END_TEST

START_TEST(json_perfinfo_has_nulls)
{
    char *s = format_event("samples/perfview_diaghub.kernel.1.etl", ETL_KIND_PERFINFO, DUMP_JSONL);
    ck_assert_ptr_nonnull(strstr(s, "\"pid\":null,\"tid\":null,"));
    ck_assert_ptr_nonnull(strstr(s, "\"kind\":\"perfinfo\",\"id\":null,"));
    ck_assert_ptr_nonnull(strstr(s, "\"level\":null,\"task\":null,\"keywords\":null,"));
    free(s);
}
END_TEST

START_TEST(json_extended_items_counted)
{
    /* The first EVENT_HEADER event with extended data in the TraceLogging sample. */
    etl_reader *r = NULL;
    etl_event ev;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_SelfDescribingSingleEvent.etl"), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK)
        if (ev.ext_count) break;
    ck_assert_uint_gt(ev.ext_count, 0);
    dump_event(f, DUMP_JSONL, r, &ev);
    fclose(f);
    {
        char want[32];
        snprintf(want, sizeof want, "\"ext\":%u}", ev.ext_count);
        ck_assert_ptr_nonnull(strstr(text, want));
    }
    free(text);
    etl_reader_close(r);
}
END_TEST

START_TEST(csv_columns)
{
    char *head = NULL, *s;
    size_t len = 0;
    FILE *f = open_memstream(&head, &len);

    dump_csv_header(f);
    fclose(f);
    ck_assert_str_eq(head, "ts,time,cpu,pid,tid,provider,kind,id,version,opcode,level,task,keywords,payload_len,ext\n");
    s = format_event("samples/syzygy_viewer_test_data_32_v1.etl", ETL_KIND_CLASSIC, DUMP_CSV);
    ck_assert_str_eq(s, "3686541252260,2010-03-21T13:27:41.555825378Z,0,4192,4632,2cb15d1d-5fc1-11d2-abe1-00a0c911f518,"
                        "classic,,1,3,4,,,114,0\n");
    free(s);
    free(head);
}
END_TEST

START_TEST(text_line)
{
    char *s = format_event("samples/perfview_smallEtlFile.etl", ETL_KIND_EVENT, DUMP_TEXT);
    ck_assert_ptr_nonnull(strstr(s, "2016-08-17T23:30:22.068863706Z cpu=0 pid=688 tid=4336 "
                                    "Microsoft-Windows-DotNETRuntimeRundown event id=154 v=2 op=36 level=4 len=584 ["));
    ck_assert_ptr_nonnull(strstr(s, " ...]\n"));
    free(s);
}
END_TEST

START_TEST(json_strings_escaped)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    dump_json_string(f, "a\"b\\c\n\x01\xc3\xa9");
    fclose(f);
    ck_assert_str_eq(text, "\"a\\\"b\\\\c\\u000a\\u0001\xc3\xa9\"");
    free(text);
}
END_TEST

/* The summary agrees with the expected summary of the independent parser. */
START_TEST(summary_counts)
{
    etl_reader *r = NULL;
    etl_event ev;
    struct dump_counts c;
    char *text = NULL;
    size_t len = 0, n;
    FILE *f = open_memstream(&text, &len);
    char *want = (char *)test_read_file(testdata_path("samples/expected/perfview_diaghub.kernel.1.summary.json"), &n);

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_diaghub.kernel.1.etl"), NULL), ETL_OK);
    dump_counts_init(&c);
    while (etl_reader_next(r, &ev) == ETL_OK) dump_counts_add(&c, &ev);
    dump_summary(f, "diaghub.etl", r, &c);
    dump_counts_free(&c);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"events\":16335,\"by_kind\":{\"system\":1035,\"perfinfo\":15299,\"event\":1}"));
    ck_assert_ptr_nonnull(strstr(text, "\"min_ts\":13764840754,\"max_ts\":13895500862,\"payload_bytes\":3364301"));
    ck_assert_ptr_nonnull(strstr(text, "\"2cb15d1d-5fc1-11d2-abe1-00a0c911f518\":15436"));
    ck_assert_ptr_nonnull(strstr(want, "\"payload_bytes\": 3364301"));
    ck_assert_ptr_nonnull(strstr(text, "\"mode_flags\":\"SEQUENTIAL|ADD_HEADER|RELOG\""));
    ck_assert_ptr_nonnull(strstr(text, "\"warnings\":0}\n"));
    free(text);
    free(want);
    etl_reader_close(r);
}
END_TEST

/* LBR events show their branches in text and JSON. */
START_TEST(lbr_events_show_branches)
{
    uint8_t rec[512];
    etl_lbr_entry e[2] = { { 0x401000, 0x402000, 0 }, { 0x403000, 0x404000, 0 } };
    struct synth_options o = { .cpus = 1 };
    struct synth *s = synth_new(&o);
    uint32_t n = etl_encode_lbr(rec, sizeof rec, 2000000, 7, 8, ETL_LBR_FILTER_USER, e, 2);
    size_t size;
    uint8_t *data;
    etl_reader *r = NULL;
    etl_event ev;
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    data = synth_finish(s, &size);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK)
        if (ev.hook_id == ETL_HOOK_LBR_SAMPLE && ev.kind == ETL_KIND_PERFINFO) break;
    ck_assert_uint_eq(ev.hook_id, ETL_HOOK_LBR_SAMPLE);
    f = open_memstream(&text, &len);
    dump_event(f, DUMP_JSONL, r, &ev);
    dump_event(f, DUMP_TEXT, r, &ev);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"provider\":\"99134383-5248-43fc-834b-529454e75df3\""));
    ck_assert_ptr_nonnull(strstr(text, ",\"lbr\":{\"pid\":7,\"tid\":8,\"filters\":2,\"entries\":[[4198400,4202496],[4206592,4210688]]}}\n"));
    ck_assert_ptr_nonnull(strstr(text, "LastBranchRecord perfinfo v=2 op=32 len=72 lbr pid=7 tid=8 filters=0x2 branches=2 401000->402000 403000->404000\n"));
    free(text);
    etl_reader_close(r);
    free(data);
}
END_TEST

START_TEST(format_names)
{
    ck_assert_int_eq(dump_format_parse("text"), DUMP_TEXT);
    ck_assert_int_eq(dump_format_parse("jsonl"), DUMP_JSONL);
    ck_assert_int_eq(dump_format_parse("json"), DUMP_JSONL);
    ck_assert_int_eq(dump_format_parse("csv"), DUMP_CSV);
    ck_assert_int_eq(dump_format_parse("xml"), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("formats");

    tcase_add_test(tc, json_event_header);
    tcase_add_test(tc, json_perfinfo_has_nulls);
    tcase_add_test(tc, json_extended_items_counted);
    tcase_add_test(tc, csv_columns);
    tcase_add_test(tc, text_line);
    tcase_add_test(tc, json_strings_escaped);
    tcase_add_test(tc, summary_counts);
    tcase_add_test(tc, lbr_events_show_branches);
    tcase_add_test(tc, format_names);
    suite_add_tcase(s, tc);
    return check_run(s);
}
