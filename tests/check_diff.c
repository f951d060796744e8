/* SPDX-License-Identifier: MIT */
/* Tests of normalized lines and of the comparison of two traces (etl/output.h): the alignment,
   the unified diff, the unordered and the count comparisons, the tolerance, JSON, errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

static const etl_guid provider_a = { 0x6a1b2c3d, 0x0001, 0x4d1f, { 0x8e, 0x7a, 0x5c, 0xe4, 0xa0, 0x00, 0x00, 0x01 } };
static const etl_guid provider_b = { 0x6a1b2c3d, 0x0002, 0x4d1f, { 0x8e, 0x7a, 0x5c, 0xe4, 0xa0, 0x00, 0x00, 0x02 } };

/* One event of a synthetic trace. */
struct ev {
    const etl_guid *provider;
    uint16_t id;
    uint32_t pid, tid;
    uint8_t payload;
};

/* A trace of the events ev[0..n), one every 10 ticks (1 us) on processor 0, written to name in
   the test directory; returns its path (test_dir_path's rotating buffers). */
static const char *write_trace(const char *name, const struct ev *ev, size_t n)
{
    struct synth_options o = { .cpus = 2 };
    struct synth *s = synth_new(&o);
    uint8_t rec[256], *data;
    size_t size;
    const char *path = test_dir_path(name);
    FILE *f;

    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++) {
        uint32_t len = synth_event_header(rec, 1, 2000000 + 10 * (int64_t)i, ev[i].provider, ev[i].id, 0, 4, 0, 0, 0,
                                          ev[i].pid, ev[i].tid, NULL, 0, &ev[i].payload, ev[i].payload ? 1 : 0);
        ck_assert_int_eq(synth_add(s, 0, rec, len), 0);
    }
    data = synth_finish(s, &size);
    ck_assert_ptr_nonnull(data);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
    free(data);
    return path;
}

/* n events of provider A with ids 1..n, all of process 100, thread 200. */
static void sequence(struct ev *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ev[i].provider = &provider_a;
        ev[i].id = (uint16_t)(i + 1);
        ev[i].pid = 100;
        ev[i].tid = 200;
        ev[i].payload = 0;
    }
}

static void setup(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void teardown(void) { test_dir_remove(); }

/* The comparison of a and b with o, written in format into a string (caller frees). */
static char *diff_text(const char *a, const char *b, const etl_diff_options *o, etl_diff_format format,
                       etl_diff_stats *st)
{
    etl_diff *d = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_int_eq(etl_diff_open(&d, a, b, o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_OK);
    etl_diff_stats_get(d, st);
    ck_assert_int_eq(etl_diff_write(d, f, format), ETL_OK);
    ck_assert_str_eq(etl_diff_error(d), "");
    etl_diff_close(d);
    fclose(f);
    return text;
}

/* ---- normalized lines ---- */

/* The lines of the events of the trace at path with o (one per line, caller frees). */
static char *normalize_trace(const char *path, const etl_normalize_options *o)
{
    etl_reader *r = NULL;
    etl_normalizer *n = etl_normalizer_new(o);
    etl_event ev;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
    for (int pass = 0; pass < 2; pass++) {
        /* Twice: a rewind starts the numbering again, so both halves are the same. */
        while (etl_reader_next(r, &ev) == ETL_OK) {
            const char *line;
            size_t n_len;
            int rc = etl_normalizer_format(n, &ev, etl_reader_time_ns(r, ev.timestamp), &line, &n_len);
            ck_assert_int_ge(rc, 0);
            if (rc) {
                ck_assert_uint_eq(strlen(line), n_len);
                fprintf(f, "%s\n", line);
            }
        }
        ck_assert_int_eq(etl_reader_rewind(r), ETL_OK);
        etl_normalizer_rewind(n);
    }
    fclose(f);
    etl_reader_close(r);
    etl_normalizer_free(n);
    return text;
}

START_TEST(normalized_lines)
{
    struct ev ev[3] = {
        { &provider_a, 1, 700, 701, 0xab },
        { &provider_b, 2, 800, 801, 0 },
        { &provider_a, 3, 700, 702, 0 },
    };
    const char *path = write_trace("n.etl", ev, 3);
    etl_normalize_options o;
    char *s, *half;

    etl_normalize_options_init(&o);
    ck_assert_uint_eq(o.ignore, ETL_NORMALIZE_TS | ETL_NORMALIZE_CPU);
    s = normalize_trace(path, &o);
    half = "6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=1 v=0 op=0 level=4 task=0 kw=0x0 pid=P1 tid=T1 len=1 payload=ab\n"
           "6a1b2c3d-0002-4d1f-8e7a-5ce4a0000002 event id=2 v=0 op=0 level=4 task=0 kw=0x0 pid=P2 tid=T2 len=0\n"
           "6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=3 v=0 op=0 level=4 task=0 kw=0x0 pid=P1 tid=T3 len=0\n";
    ck_assert_uint_eq(strlen(s), 2 * strlen(half));
    ck_assert_int_eq(strncmp(s, half, strlen(half)), 0);
    ck_assert_str_eq(s + strlen(half), half);
    free(s);

    /* Raw pids, times shown, the payload and the tids left out. */
    o.raw = ETL_NORMALIZE_PID;
    o.ignore = ETL_NORMALIZE_CPU | ETL_NORMALIZE_PAYLOAD | ETL_NORMALIZE_TID;
    s = normalize_trace(path, &o);
    ck_assert_ptr_nonnull(strstr(s, "event id=1 v=0 op=0 level=4 task=0 kw=0x0 pid=700 ts=+0 len=1\n"));
    ck_assert_ptr_nonnull(strstr(s, "event id=3 v=0 op=0 level=4 task=0 kw=0x0 pid=700 ts=+2000 len=0\n"));
    free(s);
}
END_TEST

START_TEST(normalize_filters)
{
    struct ev ev[4] = {
        { &provider_a, 1, 1, 1, 0 }, { &provider_b, 2, 1, 1, 0 }, { &provider_a, 3, 1, 1, 0 }, { &provider_a, 4, 1, 1, 0 },
    };
    const char *path = write_trace("f.etl", ev, 4);
    etl_normalize_options o;
    etl_guid *list = malloc(sizeof *list);
    etl_normalize_event_key *keys = malloc(sizeof *keys);
    char *s;

    /* The normalizer keeps copies of the lists: the caller's may go at once. */
    etl_normalize_options_init(&o);
    *list = provider_b;
    o.skip = list;
    o.nskip = 1;
    keys->provider = provider_a;
    keys->id = 3;
    o.skip_events = keys;
    o.nskip_events = 1;
    {
        etl_normalizer *n = etl_normalizer_new(&o);
        etl_reader *r = NULL;
        etl_event e;
        const char *line;
        unsigned kept = 0;
        free(list);
        free(keys);
        ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
        while (etl_reader_next(r, &e) == ETL_OK) {
            int rc = etl_normalizer_format(n, &e, etl_reader_time_ns(r, e.timestamp), &line, NULL);
            ck_assert_int_ge(rc, 0);
            if (rc) {
                kept++;
                ck_assert_ptr_nonnull(strstr(line, "-0001-"));
                ck_assert_ptr_null(strstr(line, "id=3 "));
            }
        }
        ck_assert_uint_eq(kept, 2);
        etl_reader_close(r);
        etl_normalizer_free(n);
    }

    /* Only provider B; then a window: 1.5 to 3 us after the first compared event. */
    etl_normalize_options_init(&o);
    o.only = &provider_b;
    o.nonly = 1;
    s = normalize_trace(path, &o);
    ck_assert_str_eq(s, "6a1b2c3d-0002-4d1f-8e7a-5ce4a0000002 event id=2 v=0 op=0 level=4 task=0 kw=0x0 pid=P1 tid=T1 len=0\n"
                        "6a1b2c3d-0002-4d1f-8e7a-5ce4a0000002 event id=2 v=0 op=0 level=4 task=0 kw=0x0 pid=P1 tid=T1 len=0\n");
    free(s);
    etl_normalize_options_init(&o);
    o.from_ns = 1500;
    o.to_ns = 3000;
    s = normalize_trace(path, &o);
    ck_assert_ptr_null(strstr(s, "id=1 "));
    ck_assert_ptr_null(strstr(s, "id=2 "));
    ck_assert_ptr_nonnull(strstr(s, "id=3 "));
    ck_assert_ptr_nonnull(strstr(s, "id=4 "));
    free(s);

    /* The session's header events are left out unless asked for. */
    etl_normalize_options_init(&o);
    o.all_events = 1;
    s = normalize_trace(path, &o);
    ck_assert_ptr_nonnull(strstr(s, "EventTrace"));
    free(s);
}
END_TEST

START_TEST(field_and_provider_names)
{
    unsigned bits = 0;
    const char *bad = NULL, *list = "ts,bogus,cpu";
    etl_guid g;

    ck_assert_int_eq(etl_normalize_fields_parse("ts,pid,,payload", &bits, &bad), ETL_OK);
    ck_assert_uint_eq(bits, ETL_NORMALIZE_TS | ETL_NORMALIZE_PID | ETL_NORMALIZE_PAYLOAD);
    ck_assert_int_eq(etl_normalize_fields_parse("tid,cpu", &bits, &bad), ETL_OK);
    ck_assert_uint_eq(bits, ETL_NORMALIZE_TID | ETL_NORMALIZE_CPU);
    ck_assert_int_eq(etl_normalize_fields_parse(list, &bits, &bad), ETL_FAILED);
    ck_assert_ptr_eq(bad, list + 3);
    ck_assert_int_eq(etl_normalize_fields_parse("pids", &bits, &bad), ETL_FAILED);

    ck_assert_int_eq(etl_guid_parse_provider("6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001", &g), ETL_OK);
    ck_assert(etl_guid_equal(&g, &provider_a));
    ck_assert_int_eq(etl_guid_parse_provider("Process", &g), ETL_OK);
    ck_assert_str_eq(etl_guid_name(&g), "Process");
    ck_assert_int_eq(etl_guid_parse_provider("NoSuchProvider", &g), ETL_FAILED);
    ck_assert_int_eq(etl_guid_parse_provider("6a1b2c3d-0001", &g), ETL_FAILED);
}
END_TEST

/* ---- the comparison ---- */

START_TEST(same_trace_matches)
{
    struct ev ev[10];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    sequence(ev, 10);
    a = write_trace("a.etl", ev, 10);
    b = write_trace("b.etl", ev, 10);
    etl_diff_options_init(&o);
    ck_assert_int_eq(o.max_diffs, 20);
    ck_assert_int_eq(o.context, 3);
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_uint_eq(st.events_a, 10);
    ck_assert_uint_eq(st.events_b, 10);
    ck_assert_uint_eq(st.differences, 0);
    ck_assert_int_eq(st.damaged, 0);
    ck_assert_ptr_nonnull(strstr(s, ",\"events\":10},\"equal\":true,\"differences\":[],\"differences_total\":0,\"counts\":[]}\n"));
    ck_assert_int_eq(strncmp(s, "{\"a\":{\"path\":\"", 14), 0);
    free(s);
}
END_TEST

/* Other pids and tids in the same pattern match: they are renumbered in first-seen order. */
START_TEST(renumbered_ids_match)
{
    struct ev ev[10];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    sequence(ev, 10);
    a = write_trace("a.etl", ev, 10);
    for (int i = 0; i < 10; i++) {
        ev[i].pid = 4242;
        ev[i].tid = 4343;
    }
    b = write_trace("b.etl", ev, 10);
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 0);
    free(s);
    o.normalize.raw = ETL_NORMALIZE_PID;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 20);
    free(s);
}
END_TEST

START_TEST(unified_diff)
{
    struct ev ev[10];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s, want[512];

    sequence(ev, 10);
    a = write_trace("a.etl", ev, 10);
    ev[4].id = 50;
    b = write_trace("b.etl", ev, 10);
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 2);
    ck_assert_int_eq(st.approximate, 0);
    snprintf(want, sizeof want, "--- %s\n+++ %s\n@@ -2,7 +2,7 @@\n 6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=2 ", a, b);
    ck_assert_int_eq(strncmp(s, want, strlen(want)), 0);
    ck_assert_ptr_nonnull(strstr(s, "\n-6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=5 v=0"));
    ck_assert_ptr_nonnull(strstr(s, "\n+6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=50 v=0"));
    ck_assert_ptr_nonnull(strstr(s, "\n 6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=8 v=0"));
    ck_assert_ptr_null(strstr(s, "event id=9 "));
    ck_assert_ptr_nonnull(strstr(s, "\n\nevent counts that differ:\nPROVIDER "));
    ck_assert_ptr_nonnull(strstr(s, "\nA: 10 events, B: 10 events: 2 differ\n"));
    free(s);

    /* One event of context; then none shown at all: only the counts and the summary. */
    o.context = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_ptr_nonnull(strstr(s, "@@ -4,3 +4,3 @@\n"));
    free(s);
    o.max_diffs = 0;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_int_eq(strncmp(s, "event counts that differ:\n", 26), 0);
    ck_assert_ptr_nonnull(strstr(s, "\nA: 10 events, B: 10 events: 2 differ\n"));
    free(s);

    /* One difference shown: the other is announced. */
    o.max_diffs = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_ptr_nonnull(strstr(s, "(1 more differing event not shown; -n raises the limit)\n"));
    ck_assert_ptr_null(strstr(s, "id=50 v=0"));
    free(s);

    /* JSON: the differences with their event numbers, and the count rows. */
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_ptr_nonnull(strstr(s, "\"equal\":false,\"differences\":[{\"op\":\"-\",\"a\":5,\"b\":null,\"line\":\"6a1b2c3d-"));
    ck_assert_ptr_nonnull(strstr(s, "{\"op\":\"+\",\"a\":null,\"b\":5,\"line\":"));
    ck_assert_ptr_nonnull(strstr(s, "\"differences_total\":2,\"counts\":[{\"provider\":\"6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001\","
                                    "\"kind\":\"event\",\"id\":5,\"opcode\":0,\"a\":1,\"b\":0},"));
    free(s);
}
END_TEST

/* An event inserted and one deleted: the shortest script, not a replacement of the middle. */
START_TEST(insert_and_delete)
{
    struct ev ea[12], eb[12];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    sequence(ea, 12);
    sequence(eb, 12);
    /* B: id 3 gone, id 99 after id 8. */
    memmove(&eb[2], &eb[3], 9 * sizeof eb[0]);
    memmove(&eb[8], &eb[7], 3 * sizeof eb[0]);
    eb[7].id = 99;
    a = write_trace("a.etl", ea, 12);
    b = write_trace("b.etl", eb, 12);
    etl_diff_options_init(&o);
    o.context = 0;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 2);
    ck_assert_ptr_nonnull(strstr(s, "@@ -3 +2,0 @@\n-"));
    ck_assert_ptr_nonnull(strstr(s, "@@ -8,0 +8 @@\n+"));
    free(s);
}
END_TEST

START_TEST(unordered_comparison)
{
    struct ev ev[8], tmp;
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    sequence(ev, 8);
    a = write_trace("a.etl", ev, 8);
    tmp = ev[2];
    ev[2] = ev[6];
    ev[6] = tmp;
    b = write_trace("b.etl", ev, 8);
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 4);
    free(s);
    o.unordered = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 0);
    free(s);

    /* One event more in B: shown without a hunk header (no place to show it). */
    ev[7].id = 3;
    b = write_trace("c.etl", ev, 8);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 2);
    ck_assert_ptr_null(strstr(s, "@@"));
    ck_assert_ptr_nonnull(strstr(s, "\n-6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=8 "));
    ck_assert_ptr_nonnull(strstr(s, "\n+6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=3 "));
    free(s);
}
END_TEST

START_TEST(counts_with_tolerance)
{
    struct ev ev[30];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    for (int i = 0; i < 30; i++) {
        ev[i].provider = i % 3 ? &provider_a : &provider_b;
        ev[i].id = (uint16_t)(1 + i % 3);
        ev[i].pid = ev[i].tid = 1;
        ev[i].payload = 0;
    }
    a = write_trace("a.etl", ev, 20);        /* B's id 1: 7 events; A's id 2, id 3: 7 and 6 */
    b = write_trace("b.etl", ev, 30);        /* 10, 10, 10 */
    etl_diff_options_init(&o);
    o.counts = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 3);
    ck_assert_int_eq(strncmp(s, "PROVIDER                                 KIND         ID OPCODE          A          B       DIFF\n", 97), 0);
    ck_assert_ptr_nonnull(strstr(s, "6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001     event         2      0          7         10         +3\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nA: 20 events, B: 30 events: 3 counts differ\n"));
    free(s);

    /* 3 allowed: only the row that differs by 4 (id 3: 6 against 10). */
    o.tolerance = 3;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 1);
    ck_assert_ptr_nonnull(strstr(s, "         6         10         +4\n"));
    ck_assert_ptr_nonnull(strstr(s, "counts differ by more than the tolerance\n"));
    free(s);
    /* 50% of A's count: 3.5 for 7 (differs by 3), 3 for 6 (differs by 4). */
    o.tolerance = 50;
    o.tolerance_percent = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 1);
    free(s);
    o.tolerance = 100;
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_uint_eq(st.differences, 0);
    ck_assert_ptr_nonnull(strstr(s, "\"equal\":true,\"differences\":[],\"differences_total\":0,\"counts\":[]}\n"));
    free(s);
}
END_TEST

START_TEST(open_errors)
{
    struct ev ev[2];
    const char *a;
    etl_diff *d = NULL;
    etl_diff_options o;

    sequence(ev, 2);
    a = write_trace("a.etl", ev, 2);
    etl_diff_options_init(&o);
    ck_assert_int_eq(etl_diff_open(&d, a, test_dir_path("missing.etl"), &o), ETL_FATAL);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(strstr(etl_diff_error(d), "missing.etl"));
    etl_diff_close(d);
    d = NULL;
    ck_assert_int_eq(etl_diff_open(&d, test_dir_path("missing.etl"), a, &o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_diff_error(d), "missing.etl"));
    etl_diff_close(d);
    etl_diff_close(NULL);
}
END_TEST

static void count_damage(void *arg, int64_t offset, const char *message)
{
    (void)offset;
    ck_assert_ptr_nonnull(message);
    ++*(int *)arg;
}

/* Damage in a trace is passed on and marked in the stats; what is readable is compared. */
START_TEST(damage_is_reported)
{
    struct ev ev[40];
    const char *a, *b;
    etl_diff *d = NULL;
    etl_diff_options o;
    etl_diff_stats st;
    size_t size;
    uint8_t *data;
    int damage = 0;
    FILE *f;

    sequence(ev, 40);
    a = write_trace("a.etl", ev, 40);
    data = test_read_file(a, &size);
    ck_assert_ptr_nonnull(data);
    /* Cut the file inside its last buffer. */
    b = test_dir_path("cut.etl");
    f = fopen(b, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size - 100, f), size - 100);
    fclose(f);
    free(data);
    etl_diff_options_init(&o);
    o.on_damage = count_damage;
    o.on_damage_arg = &damage;
    ck_assert_int_eq(etl_diff_open(&d, a, b, &o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_OK);
    etl_diff_stats_get(d, &st);
    ck_assert_int_gt(damage, 0);
    ck_assert_int_eq(st.damaged, 1);
    ck_assert_uint_eq(st.events_a, 40);
    etl_diff_close(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("diff");
    TCase *tn = tcase_create("normalize"), *td = tcase_create("diff");

    tcase_add_checked_fixture(tn, setup, teardown);
    tcase_add_checked_fixture(td, setup, teardown);
    tcase_add_test(tn, normalized_lines);
    tcase_add_test(tn, normalize_filters);
    tcase_add_test(tn, field_and_provider_names);
    tcase_add_test(td, same_trace_matches);
    tcase_add_test(td, renumbered_ids_match);
    tcase_add_test(td, unified_diff);
    tcase_add_test(td, insert_and_delete);
    tcase_add_test(td, unordered_comparison);
    tcase_add_test(td, counts_with_tolerance);
    tcase_add_test(td, open_errors);
    tcase_add_test(td, damage_is_reported);
    suite_add_tcase(s, tn);
    suite_add_tcase(s, td);
    return check_run(s);
}
