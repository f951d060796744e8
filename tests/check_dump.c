/* SPDX-License-Identifier: MIT */
/* Tests of the library's event output formats (etl/output.h): JSON keys and nulls, CSV columns,
   text, the summary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"
#include "format/format.h"
#include "fnstory.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

/* The output of fn for the first matching event of a sample, as a string (caller frees). */
static char *format_event(const char *sample, int kind, etl_dump_format format)
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
    etl_dump_event(f, format, r, &ev, NULL, NULL);
    fclose(f);
    etl_reader_close(r);
    return text;
}

/* The first TraceLogging event of perfview_primitive-types.etl in each format, decoded. */
static char *format_decoded(etl_dump_format format)
{
    etl_reader *r = NULL;
    etl_decoder *dec = NULL;
    etl_event ev;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_primitive-types.etl"), NULL), ETL_OK);
    ck_assert_int_eq(etl_decoder_open(&dec, &(etl_decoder_options){ .flags = ETL_DECODER_NO_DEFAULTS }), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK)
        if (ev.kind == ETL_KIND_EVENT) break;
    ck_assert_int_eq(etl_dump_event(f, format, r, &ev, NULL, dec), ETL_OK);
    fclose(f);
    etl_decoder_close(dec);
    etl_reader_close(r);
    return text;
}

START_TEST(decoded_fields_in_each_format)
{
    char *s = format_decoded(ETL_DUMP_TEXT);
    ck_assert_ptr_nonnull(strstr(s, " len=78 ext=2 solar_system/PrimitiveTypesTest string_type=\"Mercury\" boolean_type=false "
                                    "char_type=\"M\" int16_type=-51 "));
    ck_assert_ptr_nonnull(strstr(s, " system_time_type=\"2021-09-09T14:59:35.799Z\"\n"));
    ck_assert_ptr_null(strstr(s, "[")); /* no payload preview when decoded */
    free(s);
    s = format_decoded(ETL_DUMP_JSONL);
    ck_assert_ptr_nonnull(strstr(s, "\"ext\":2,\"provider_name\":\"solar_system\",\"event_name\":\"solar_system/PrimitiveTypesTest\","
                                    "\"fields\":{\"string_type\":\"Mercury\",\"boolean_type\":false,"));
    free(s);
    s = format_decoded(ETL_DUMP_CSV);
    ck_assert_ptr_nonnull(strstr(s, ",78,2,\"solar_system/PrimitiveTypesTest\",\"{\"\"string_type\"\":\"\"Mercury\"\","));
    free(s);
}
END_TEST

START_TEST(json_event_header)
{
    char *s = format_event("samples/perfview_smallEtlFile.etl", ETL_KIND_EVENT, ETL_DUMP_JSONL);
    ck_assert_str_eq(s, "{\"ts\":185227292196,\"time\":\"2016-08-17T23:30:22.068863706Z\",\"cpu\":0,\"pid\":688,"
                        "\"tid\":4336,\"provider\":\"a669021c-c450-4609-a035-5af59af4df18\",\"kind\":\"event\","
                        "\"id\":154,\"version\":2,\"opcode\":36,\"level\":4,\"task\":2,\"keywords\":536870920,"
                        "\"payload_len\":584,\"ext\":0}\n");
    free(s);
}
END_TEST

START_TEST(json_perfinfo_has_nulls)
{
    char *s = format_event("samples/perfview_diaghub.kernel.1.etl", ETL_KIND_PERFINFO, ETL_DUMP_JSONL);
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
    etl_dump_event(f, ETL_DUMP_JSONL, r, &ev, NULL, NULL);
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

    etl_dump_csv_header(f);
    fclose(f);
    ck_assert_str_eq(head, "ts,time,cpu,pid,tid,provider,kind,id,version,opcode,level,task,keywords,payload_len,ext,"
                           "event_name,fields\n");
    s = format_event("samples/syzygy_viewer_test_data_32_v1.etl", ETL_KIND_CLASSIC, ETL_DUMP_CSV);
    ck_assert_str_eq(s, "3686541252260,2010-03-21T13:27:41.555825378Z,0,4192,4632,2cb15d1d-5fc1-11d2-abe1-00a0c911f518,"
                        "classic,,1,3,4,,,114,0,,\n");
    free(s);
    free(head);
}
END_TEST

START_TEST(text_line)
{
    char *s = format_event("samples/perfview_smallEtlFile.etl", ETL_KIND_EVENT, ETL_DUMP_TEXT);
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

    etl_dump_json_string(f, "a\"b\\c\n\x01\xc3\xa9");
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
    etl_summary *c = etl_summary_new();
    char *text = NULL;
    size_t len = 0, n;
    FILE *f = open_memstream(&text, &len);
    char *want = (char *)test_read_file(testdata_path("samples/expected/perfview_diaghub.kernel.1.summary.json"), &n);

    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path("samples/perfview_diaghub.kernel.1.etl"), NULL), ETL_OK);
    ck_assert_ptr_nonnull(c);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_summary_add(c, &ev), ETL_OK);
    ck_assert_int_eq(etl_summary_write(c, f, "diaghub.etl", r, NULL), ETL_OK);
    etl_summary_free(c);
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
    uint32_t n = etl_record_encode_lbr(rec, sizeof rec, 2000000, 7, 8, ETL_LBR_FILTER_USER, e, 2);
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
    etl_dump_event(f, ETL_DUMP_JSONL, r, &ev, NULL, NULL);
    etl_dump_event(f, ETL_DUMP_TEXT, r, &ev, NULL, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"provider\":\"99134383-5248-43fc-834b-529454e75df3\""));
    ck_assert_ptr_nonnull(strstr(text, ",\"lbr\":{\"pid\":7,\"tid\":8,\"filters\":2,\"entries\":[[4198400,4202496],[4206592,4210688]]},"
                                     "\"kernel\":{\"class\":\"lbr\",\"name\":\"LBR/Sample\",\"pid\":7,\"tid\":8,\"count\":2}}\n"));
    ck_assert_ptr_nonnull(strstr(text, "LastBranchRecord perfinfo v=2 op=32 len=72 lbr pid=7 tid=8 filters=0x2 branches=2 401000->402000 403000->404000\n"));
    free(text);
    etl_reader_close(r);
    free(data);
}
END_TEST

START_TEST(format_names)
{
    ck_assert_int_eq(etl_dump_format_parse("text"), ETL_DUMP_TEXT);
    ck_assert_int_eq(etl_dump_format_parse("jsonl"), ETL_DUMP_JSONL);
    ck_assert_int_eq(etl_dump_format_parse("json"), ETL_DUMP_JSONL);
    ck_assert_int_eq(etl_dump_format_parse("csv"), ETL_DUMP_CSV);
    ck_assert_int_eq(etl_dump_format_parse("xml"), -1);
}
END_TEST

/* Decoded kernel events show their fields, and sample and stack addresses resolve through the
   image map to the image loaded there at that time. */
START_TEST(kernel_events_resolve_images)
{
    static const char name[] = "\\Device\\HarddiskVolume2\\app\\a.dll";
    uint8_t rec[512], pl[256];
    struct synth_options o = { .cpus = 1 };
    struct synth *s = synth_new(&o);
    etl_image_map *map = etl_image_map_new();
    uint32_t n, len;
    size_t size, tlen = 0;
    uint8_t *data;
    etl_reader *r = NULL;
    etl_event ev;
    char *text = NULL;
    FILE *f;

    /* Image/Load v3 of a.dll at 0x7ff600000000 (size 0x10000) in process 100, at 2000000. */
    memset(pl, 0, sizeof pl);
    etl_put64(pl, 0x7ff600000000ull);
    etl_put64(pl + 8, 0x10000);
    etl_put32(pl + 16, 100);
    len = 56;
    for (const char *c = name;; c++) {
        etl_put16(pl + len, (uint8_t)*c);
        len += 2;
        if (!*c) break;
    }
    n = synth_system(rec, 1, 0, 2000000, 0x030A, 3, 100, 1000, pl, len);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    /* Thread/Start v3: thread 1000 of process 100. */
    memset(pl, 0, sizeof pl);
    etl_put32(pl, 100);
    etl_put32(pl + 4, 1000);
    n = synth_system(rec, 1, 0, 2000001, 0x0501, 3, 100, 1000, pl, 16 + 7 * 8);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    /* PerfInfo/SampleProf in a.dll, and its stack: a.dll, then an address in no image. */
    memset(pl, 0, sizeof pl);
    etl_put64(pl, 0x7ff600001234ull);
    etl_put32(pl + 8, 1000);
    n = synth_perfinfo(rec, 1, 2000002, 0x0F2E, 2, NULL, NULL, 0, pl, 16);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    etl_put64(pl, 2000002);
    etl_put32(pl + 8, 100);
    etl_put32(pl + 12, 1000);
    etl_put64(pl + 16, 0x7ff600001234ull);
    etl_put64(pl + 24, 0x999);
    n = synth_perfinfo(rec, 1, 2000002, 0x1820, 2, NULL, NULL, 0, pl, 32);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    data = synth_finish(s, &size);

    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_image_map_add(map, &ev), ETL_OK);
    ck_assert_int_eq(etl_reader_rewind(r), ETL_OK);
    f = open_memstream(&text, &tlen);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_dump_event(f, ETL_DUMP_TEXT, r, &ev, map, NULL);
        etl_dump_event(f, ETL_DUMP_JSONL, r, &ev, map, NULL);
    }
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, " Image/Load pid=100 base=0x7ff600000000 size=0x10000 "
                                       "file=\"\\Device\\HarddiskVolume2\\app\\a.dll\"\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"kernel\":{\"class\":\"image\",\"name\":\"Image/Load\","
                                       "\"image_base\":140694538682368,\"image_size\":65536,\"pid\":100,"));
    ck_assert_ptr_nonnull(strstr(text, "\"file_name\":\"\\\\Device\\\\HarddiskVolume2\\\\app\\\\a.dll\"}}\n"));
    ck_assert_ptr_nonnull(strstr(text, " Thread/Start pid=100 tid=1000 start=0x0 win32_start=0x0\n"));
    ck_assert_ptr_nonnull(strstr(text, " PerfInfo/SampleProf ip=0x7ff600001234 tid=1000 image=a.dll+0x1234\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"instruction_pointer\":140694538687028,\"tid\":1000,\"count\":0,\"flags\":0,"
                                       "\"rank\":0,\"image\":\"a.dll\",\"offset\":4660}}\n"));
    ck_assert_ptr_nonnull(strstr(text, " StackWalk/Stack pid=100 tid=1000 event_ts=2000002 frames=2 "
                                       "0x7ff600001234=a.dll+0x1234 0x999=?\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"frames\":[{\"addr\":140694538687028,\"image\":\"a.dll\",\"offset\":4660},"
                                       "{\"addr\":2457}]}}\n"));
    free(text);
    etl_image_map_free(map);
    etl_reader_close(r);
    free(data);
}
END_TEST

/* With a symbolizer, sample and stack addresses show their functions: text "hot_a+0x1a (prog)",
   JSON "function", "function_offset" and "source" beside "image" and "offset", as addr2line
   names them; a return address (a stack frame past the first) by the call a byte before it;
   an address no image holds stays as it was. Without one, the output is as before. */
START_TEST(functions_named)
{
    const char *dir = test_dir_create();
    struct fnstory g;
    uint64_t base = 0x7f1200000000ull, mid[FN_COUNT];
    char path[600], fn[128], src[300], want[1024];
    etl_image_map *map = etl_image_map_new();
    etl_symbolizer *sym = NULL;
    etl_decoder *dec = NULL;
    etl_reader *r = NULL;
    etl_event ev;
    char *text = NULL, *plain = NULL;
    size_t tlen = 0, plen = 0;
    FILE *f, *p;

    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(fnstory_build(dir, &g), 0);
    snprintf(path, sizeof path, "%s/fn.etl", dir);
    ck_assert_int_eq(fnstory_write(path, &g, base), 0);
    for (int k = 0; k < FN_COUNT; k++) mid[k] = fnstory_at(&g, base, fnstory_mid(&g, k));
    ck_assert_int_eq(etl_symbolizer_open(&sym, NULL), ETL_OK);
    ck_assert_int_eq(etl_decoder_open(&dec, NULL) == ETL_FATAL, 0);
    ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
    ck_assert_int_eq(etl_dump_first_pass_symbols(r, map, NULL, sym), ETL_OK);
    f = open_memstream(&text, &tlen);
    p = open_memstream(&plain, &plen);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        ck_assert_int_eq(etl_dump_event_symbols(f, ETL_DUMP_TEXT, r, &ev, map, NULL, sym), ETL_OK);
        ck_assert_int_eq(etl_dump_event_symbols(f, ETL_DUMP_TEXT, r, &ev, map, dec, sym), ETL_OK);
        ck_assert_int_eq(etl_dump_event_symbols(f, ETL_DUMP_JSONL, r, &ev, map, NULL, sym), ETL_OK);
        ck_assert_int_eq(etl_dump_event_symbols(p, ETL_DUMP_TEXT, r, &ev, map, NULL, NULL), ETL_OK);
        ck_assert_int_eq(etl_dump_event(p, ETL_DUMP_JSONL, r, &ev, map, NULL), ETL_OK);
    }
    fclose(f);
    fclose(p);
    /* the sample in hot_a: its function, offset and line as addr2line gives them */
    ck_assert_int_eq(fnstory_addr2line(&g, fnstory_mid(&g, FN_HOT_A), fn, sizeof fn, src, sizeof src), 0);
    ck_assert_str_eq(fn, "hot_a");
    snprintf(want, sizeof want, " PerfInfo/SampleProf ip=0x%llx tid=101 image=hot_a+0x%llx (prog)\n",
             (unsigned long long)mid[FN_HOT_A], (unsigned long long)(g.fn[FN_HOT_A].size / 2));
    ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
    snprintf(want, sizeof want, " image=hot_a+0x%llx (prog)\n", (unsigned long long)(g.fn[FN_HOT_A].size / 2));
    ck_assert_msg(strstr(text, want) != NULL, "no decoded '%s' in:\n%s", want, text);
    snprintf(want, sizeof want, "\"image\":\"prog\",\"offset\":%llu,\"function\":\"hot_a\",\"function_offset\":%llu,"
             "\"source\":\"", (unsigned long long)(mid[FN_HOT_A] - base), (unsigned long long)(g.fn[FN_HOT_A].size / 2));
    ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
    snprintf(want, sizeof want, "%s\"}}\n", src);
    ck_assert_msg(strstr(text, want) != NULL, "no source '%s' in:\n%s", want, text);
    /* its stack: hot_a, rec (twice), main; frames past the first named by the call */
    snprintf(want, sizeof want, " frames=4 0x%llx=hot_a+0x%llx (prog) 0x%llx=rec+0x%llx (prog) 0x%llx=rec+0x%llx (prog)"
             " 0x%llx=main+0x%llx (prog)\n",
             (unsigned long long)mid[FN_HOT_A], (unsigned long long)(g.fn[FN_HOT_A].size / 2),
             (unsigned long long)mid[FN_REC], (unsigned long long)(g.fn[FN_REC].size / 2),
             (unsigned long long)fnstory_at(&g, base, g.fn[FN_REC].value + g.fn[FN_REC].size),
             (unsigned long long)g.fn[FN_REC].size,
             (unsigned long long)mid[FN_MAIN], (unsigned long long)(g.fn[FN_MAIN].size / 2));
    ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
    ck_assert_ptr_nonnull(strstr(text, " images=[hot_a+0x"));
    ck_assert_ptr_nonnull(strstr(text, "\"function\":\"rec\""));
    /* the address no image holds */
    ck_assert_ptr_nonnull(strstr(text, " PerfInfo/SampleProf ip=0x1234 tid=101 image=?\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"instruction_pointer\":4660,\"tid\":101,\"count\":1,\"flags\":64,\"rank\":0}}\n"));
    /* without a symbolizer: images and offsets only */
    snprintf(want, sizeof want, " PerfInfo/SampleProf ip=0x%llx tid=101 image=prog+0x%llx\n",
             (unsigned long long)mid[FN_HOT_A], (unsigned long long)(mid[FN_HOT_A] - base));
    ck_assert_msg(strstr(plain, want) != NULL, "no '%s' in:\n%s", want, plain);
    ck_assert_ptr_null(strstr(plain, "function"));
    ck_assert_ptr_null(strstr(plain, "hot_a"));
    free(text);
    free(plain);
    etl_reader_close(r);
    etl_decoder_close(dec);
    etl_symbolizer_close(sym);
    etl_image_map_free(map);
    test_dir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("formats");

    tcase_add_test(tc, decoded_fields_in_each_format);
    tcase_add_test(tc, json_event_header);
    tcase_add_test(tc, json_perfinfo_has_nulls);
    tcase_add_test(tc, json_extended_items_counted);
    tcase_add_test(tc, csv_columns);
    tcase_add_test(tc, text_line);
    tcase_add_test(tc, json_strings_escaped);
    tcase_add_test(tc, summary_counts);
    tcase_add_test(tc, lbr_events_show_branches);
    tcase_add_test(tc, kernel_events_resolve_images);
    tcase_add_test(tc, functions_named);
    tcase_add_test(tc, format_names);
    suite_add_tcase(s, tc);
    return check_run(s);
}
