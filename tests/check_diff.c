/* SPDX-License-Identifier: MIT */
/* Tests of normalized lines and of the comparison of two traces (etl/output.h): the alignment,
   the unified diff, the unordered and the count comparisons, the tolerance, JSON, errors. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"
#include "synth.h"
#include "check_run.h"
#include "testutil.h"

static const etl_guid provider_a = { 0x6a1b2c3d, 0x0001, 0x4d1f, { 0x8e, 0x7a, 0x5c, 0xe4, 0xa0, 0x00, 0x00, 0x01 } };
static const etl_guid provider_b = { 0x6a1b2c3d, 0x0002, 0x4d1f, { 0x8e, 0x7a, 0x5c, 0xe4, 0xa0, 0x00, 0x00, 0x02 } };

/* One event of a synthetic trace: of provider, or (process set) the kernel's Process/Start of
   process pid, named process, started by ppid (whose thread ppid logs it). */
struct ev {
    const etl_guid *provider;
    uint16_t id;
    uint32_t pid, tid;
    uint8_t payload;
    const char *process;
    uint32_t ppid;
};

/* A Process/Start event (version 4, 64-bit) into rec; its size. */
static uint32_t process_start(uint8_t *rec, int64_t ts, const struct ev *e)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp64(&p, 0xFFFFA00000000000ull + e->pid);
    sp32(&p, e->pid); sp32(&p, e->ppid); sp32(&p, 1); sp32(&p, 0);
    sp64(&p, 0x1AA000); sp32(&p, 0);
    sp32(&p, 0); /* no SID */
    sp_str8(&p, e->process); sp_str16(&p, e->process); sp_str16(&p, ""); sp_str16(&p, "");
    return synth_system(rec, 1, 0, ts, 0x0301, 4, e->ppid, e->ppid, p.b, p.n);
}

/* A trace of the events ev[0..n), one every 10 ticks (1 us) on processor 0, written to name in
   the test directory; returns its path (test_dir_path's rotating buffers). */
static const char *write_trace(const char *name, const struct ev *ev, size_t n)
{
    struct synth_options o = { .cpus = 2 };
    struct synth *s = synth_new(&o);
    uint8_t rec[512], *data;
    size_t size;
    const char *path = test_dir_path(name);
    FILE *f;

    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < n; i++) {
        uint32_t len = ev[i].process ? process_start(rec, 2000000 + 10 * (int64_t)i, &ev[i]) : synth_event_header(rec, 1, 2000000 + 10 * (int64_t)i, ev[i].provider, ev[i].id, 0, 4, 0, 0, 0,
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
    memset(ev, 0, n * sizeof *ev);
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
        { &provider_a, 1, 700, 701, 0xab, NULL, 0 },
        { &provider_b, 2, 800, 801, 0, NULL, 0 },
        { &provider_a, 3, 700, 702, 0, NULL, 0 },
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
        { &provider_a, 1, 1, 1, 0, NULL, 0 }, { &provider_b, 2, 1, 1, 0, NULL, 0 }, { &provider_a, 3, 1, 1, 0, NULL, 0 }, { &provider_a, 4, 1, 1, 0, NULL, 0 },
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
    ck_assert_uint_eq(st.threads_a, 1);
    ck_assert_uint_eq(st.threads_b, 1);
    ck_assert_uint_eq(st.threads_differ, 0);
    ck_assert_ptr_nonnull(strstr(s, ",\"events\":10},\"equal\":true,\"differences\":[],\"differences_total\":0,"
                                    "\"threads\":[{\"thread\":\"T1\",\"a\":{\"pid\":100,\"tid\":200,\"process\":null,\"events\":10},"
                                    "\"b\":{\"pid\":100,\"tid\":200,\"process\":null,\"events\":10},\"differences\":0}],"
                                    "\"counts\":[]}\n"));
    ck_assert_int_eq(strncmp(s, "{\"a\":{\"path\":\"", 14), 0);
    free(s);
    /* In global order: no threads. */
    o.global_order = 1;
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_uint_eq(st.differences, 0);
    ck_assert_uint_eq(st.threads_a, 0);
    ck_assert_ptr_nonnull(strstr(s, ",\"events\":10},\"equal\":true,\"differences\":[],\"differences_total\":0,\"counts\":[]}\n"));
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
    /* Thread by thread: the pair of threads heads its hunks; the lines leave out pid and tid. */
    snprintf(want, sizeof want, "--- %s\tthread T1: pid 100, tid 200\n+++ %s\tthread T1: pid 100, tid 200\n"
             "@@ -2,7 +2,7 @@\n 6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=2 v=0 op=0 level=4 task=0 kw=0x0 len=0\n", a, b);
    ck_assert_msg(strncmp(s, want, strlen(want)) == 0, "got:\n%s", s);
    ck_assert_ptr_nonnull(strstr(s, "\n-6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=5 v=0"));
    ck_assert_ptr_nonnull(strstr(s, "\n+6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=50 v=0"));
    ck_assert_ptr_nonnull(strstr(s, "\n 6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=8 v=0"));
    ck_assert_ptr_null(strstr(s, "event id=9 "));
    ck_assert_ptr_nonnull(strstr(s, "\n\nthreads that differ:\n"
                                    "THREAD        A PID      A TID   A EVENTS      B PID      B TID   B EVENTS     DIFFER\n"
                                    "T1              100        200         10        100        200         10          2\n"
                                    "\nevent counts that differ:\nPROVIDER "));
    ck_assert_ptr_nonnull(strstr(s, "\nA: 10 events, B: 10 events: 2 differ\n"));
    free(s);

    /* In global order, as one sequence each: the lines have their pid and tid, one header. */
    o.global_order = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 2);
    snprintf(want, sizeof want, "--- %s\n+++ %s\n@@ -2,7 +2,7 @@\n 6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=2 "
             "v=0 op=0 level=4 task=0 kw=0x0 pid=P1 tid=T1 len=0\n", a, b);
    ck_assert_msg(strncmp(s, want, strlen(want)) == 0, "got:\n%s", s);
    ck_assert_ptr_nonnull(strstr(s, "\n\nevent counts that differ:\nPROVIDER "));
    ck_assert_ptr_null(strstr(s, "threads that differ"));
    ck_assert_ptr_nonnull(strstr(s, "\nA: 10 events, B: 10 events: 2 differ\n"));
    free(s);
    o.global_order = 0;

    /* One event of context; then none shown at all: only the counts and the summary. */
    o.context = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_ptr_nonnull(strstr(s, "@@ -4,3 +4,3 @@\n"));
    free(s);
    o.max_diffs = 0;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_int_eq(strncmp(s, "threads that differ:\n", 21), 0);
    ck_assert_ptr_nonnull(strstr(s, "\nA: 10 events, B: 10 events: 2 differ\n"));
    free(s);
    o.global_order = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_int_eq(strncmp(s, "event counts that differ:\n", 26), 0);
    free(s);
    o.global_order = 0;

    /* One difference shown: the other is announced. */
    o.max_diffs = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_ptr_nonnull(strstr(s, "(1 more differing event not shown; -n raises the limit)\n"));
    ck_assert_ptr_null(strstr(s, "id=50 v=0"));
    free(s);

    /* JSON: the differences with their event numbers, and the count rows. */
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_ptr_nonnull(strstr(s, "\"equal\":false,\"differences\":[{\"thread\":\"T1\",\"op\":\"-\",\"a\":5,\"b\":null,\"line\":\"6a1b2c3d-"));
    ck_assert_ptr_nonnull(strstr(s, "{\"thread\":\"T1\",\"op\":\"+\",\"a\":null,\"b\":5,\"line\":"));
    ck_assert_ptr_nonnull(strstr(s, "\"differences_total\":2,\"threads\":[{\"thread\":\"T1\","));
    ck_assert_ptr_nonnull(strstr(s, "\"differences\":2}],\"counts\":[{\"provider\":\"6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001\","
                                    "\"kind\":\"event\",\"id\":5,\"opcode\":0,\"a\":1,\"b\":0},"));
    free(s);
    o.global_order = 1;
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_ptr_nonnull(strstr(s, "\"equal\":false,\"differences\":[{\"op\":\"-\",\"a\":5,\"b\":null,\"line\":\"6a1b2c3d-"));
    ck_assert_ptr_nonnull(strstr(s, "\"differences_total\":2,\"counts\":[{"));
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

    memset(ev, 0, sizeof ev);
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

/* ---- multi-threaded programs: each thread's own sequence, threads matched by what they do ---- */

/* Two threads of one process, 20 events each: thread k's events have ids 1..4 in turn and
   payload k (what tells the threads apart, as etldemo's thread index does). order 0: the
   threads take turns, thread 1 first; 1: all of thread 2's events, then thread 1's. One more
   event of thread 2 (id 9) after its event extra_after when extra_after >= 0. */
static size_t two_threads(struct ev *ev, uint32_t pid, uint32_t tid1, uint32_t tid2, int order, int extra_after)
{
    size_t n = 0;

    for (int i = 0; i < 40; i++) {
        int thread = order == 0 ? 1 + i % 2 : (i < 20 ? 2 : 1);
        int k = order == 0 ? i / 2 : i % 20;
        memset(&ev[n], 0, sizeof ev[n]);
        ev[n].provider = &provider_a;
        ev[n].id = (uint16_t)(1 + k % 4);
        ev[n].pid = pid;
        ev[n].tid = thread == 1 ? tid1 : tid2;
        ev[n].payload = (uint8_t)thread;
        n++;
        if (thread == 2 && k == extra_after) {
            ev[n] = ev[n - 1];
            ev[n].id = 9;
            n++;
        }
    }
    return n;
}

/* Other ids and another interleaving of the same threads' events: the traces match. */
START_TEST(threads_interleave_differently)
{
    struct ev ev[41];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    a = write_trace("a.etl", ev, two_threads(ev, 100, 201, 202, 0, -1));
    b = write_trace("b.etl", ev, two_threads(ev, 300, 402, 401, 1, -1));
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.events_a, 40);
    ck_assert_uint_eq(st.events_b, 40);
    ck_assert_msg(st.differences == 0, "%" PRIu64 " differences:\n%s", st.differences, s);
    free(s);
    o.unordered = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 0, "unordered: %" PRIu64 " differences:\n%s", st.differences, s);
    free(s);
}
END_TEST

/* One event more on one thread, whose turn to start differs: one difference, shown under that
   thread, named as in A (T2: the second to appear in A, the first in B). */
START_TEST(thread_added_event)
{
    struct ev ev[41];
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s, want[512];

    a = write_trace("a.etl", ev, two_threads(ev, 100, 201, 202, 0, -1));
    b = write_trace("b.etl", ev, two_threads(ev, 300, 402, 401, 1, 9));
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.events_b, 41);
    ck_assert_msg(st.differences == 1, "%" PRIu64 " differences:\n%s", st.differences, s);
    snprintf(want, sizeof want, "--- %s\tthread T2: pid 100, tid 202\n+++ %s\tthread T2: pid 300, tid 401\n@@ -8,6 +8,7 @@\n", a, b);
    ck_assert_msg(strncmp(s, want, strlen(want)) == 0, "got:\n%s", s);
    ck_assert_ptr_nonnull(strstr(s, "\n+6a1b2c3d-0001-4d1f-8e7a-5ce4a0000001 event id=9 v=0 op=0 level=4 task=0 kw=0x0 len=1 payload=02\n"));
    ck_assert_ptr_null(strstr(s, "thread T1"));
    ck_assert_ptr_nonnull(strstr(s, "\nthreads that differ:\n"));
    ck_assert_ptr_nonnull(strstr(s, "\nA: 40 events, B: 41 events: 1 differ\n"));
    free(s);

    /* As multisets of each thread's events: the same one difference. */
    o.unordered = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 1, "unordered: %" PRIu64 " differences:\n%s", st.differences, s);
    free(s);

    /* JSON: the difference names its thread and its place in that thread's sequence. */
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_JSON, &st);
    ck_assert_msg(strstr(s, "\"differences\":[{\"thread\":\"T2\",\"op\":\"+\",\"a\":null,\"b\":11,\"line\":") != NULL, "%s", s);
    free(s);
}
END_TEST

/* A thread only B has, and threads matched by what they have most in common when none is
   the same: each thread's differences under its own name; etl_diff_thread_get says which
   thread went with which. */
START_TEST(threads_matched_by_content)
{
    struct ev ea[41], eb[50];
    size_t nb;
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    etl_diff_thread t;
    etl_diff *d = NULL;
    char *s, want[512];

    a = write_trace("a.etl", ea, two_threads(ea, 100, 201, 202, 0, -1));
    /* B: thread 2 starts first; thread 1's fifth event has another id; thread 3 is new. */
    nb = two_threads(eb, 300, 402, 401, 1, -1);
    for (size_t i = 0; i < nb; i++)
        if (eb[i].tid == 402 && eb[i].payload == 1 && i == 24) eb[i].id = 7;
    for (int i = 0; i < 3; i++) {
        eb[nb] = eb[0];
        eb[nb].tid = 403;
        eb[nb].payload = 3;
        eb[nb++].id = (uint16_t)(20 + i);
    }
    b = write_trace("b.etl", eb, nb);
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 5, "%" PRIu64 " differences:\n%s", st.differences, s);
    ck_assert_uint_eq(st.threads_a, 2);
    ck_assert_uint_eq(st.threads_b, 3);
    ck_assert_uint_eq(st.threads_differ, 2);
    snprintf(want, sizeof want, "--- %s\tthread T1: pid 100, tid 201\n+++ %s\tthread T1: pid 300, tid 402\n@@ -2,7 +2,7 @@\n", a, b);
    ck_assert_msg(strncmp(s, want, strlen(want)) == 0, "got:\n%s", s);
    snprintf(want, sizeof want, "\n--- %s\t(no thread like it)\n+++ %s\tthread T3: pid 300, tid 403\n@@ -0,0 +1,3 @@\n+", a, b);
    ck_assert_msg(strstr(s, want) != NULL, "got:\n%s", s);
    ck_assert_ptr_null(strstr(s, "thread T2"));
    ck_assert_ptr_nonnull(strstr(s, "\nT1              100        201         20        300        402         20          2\n"
                                    "T3                -          -          -        300        403          3          3\n"));
    free(s);

    ck_assert_int_eq(etl_diff_open(&d, a, b, &o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_OK);
    ck_assert_uint_eq(etl_diff_thread_count(d), 3);
    ck_assert_int_eq(etl_diff_thread_get(d, 1, &t), ETL_OK);
    ck_assert_uint_eq(t.number, 2);
    ck_assert(t.a.present && t.b.present && t.a.has_pid && t.a.has_tid);
    ck_assert_uint_eq(t.a.tid, 202);
    ck_assert_uint_eq(t.b.tid, 401);
    ck_assert_uint_eq(t.b.pid, 300);
    ck_assert_uint_eq(t.a.events, 20);
    ck_assert_uint_eq(t.differences, 0);
    ck_assert_int_eq(etl_diff_thread_get(d, 2, &t), ETL_OK);
    ck_assert_uint_eq(t.number, 3);
    ck_assert_int_eq(t.a.present, 0);
    ck_assert_uint_eq(t.b.tid, 403);
    ck_assert_uint_eq(t.differences, 3);
    ck_assert_int_eq(etl_diff_thread_get(d, 3, &t), ETL_FAILED);
    etl_diff_close(d);

    /* In global order the threads' turns count, and so do their first appearances. */
    o.global_order = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_gt(st.differences, 40);
    ck_assert_uint_eq(st.threads_a, 0);
    free(s);
}
END_TEST

/* A long thread only one trace has: all its events differ, found without the edit-distance
   search (whose limit would call the result approximate). */
START_TEST(long_thread_only_in_b)
{
    enum { N = 3500 };
    struct ev *ev = calloc(N + 2, sizeof *ev);
    const char *a, *b;
    etl_diff_options o;
    etl_diff_stats st;
    char *s;

    ck_assert_ptr_nonnull(ev);
    sequence(ev, 2);
    a = write_trace("a.etl", ev, 2);
    for (size_t i = 2; i < N + 2; i++) {
        ev[i] = ev[0];
        ev[i].tid = 300;
        ev[i].id = (uint16_t)(i % 7);
    }
    b = write_trace("b.etl", ev, N + 2);
    etl_diff_options_init(&o);
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, N);
    ck_assert_int_eq(st.approximate, 0);
    ck_assert_ptr_null(strstr(s, "shown as replaced"));
    ck_assert_ptr_nonnull(strstr(s, "\t(no thread like it)\n+++ "));
    free(s);
    free(ev);
}
END_TEST

/* Two recordings of one workload among other processes: Process/Start events name them. */
static size_t workload(struct ev *ev, uint32_t base, int noise, int extra)
{
    static const struct { int proc; uint16_t id; } story[] = {
        { 1, 1 }, { 9, 5 }, { 1, 2 }, { 2, 1 }, { 9, 6 }, { 2, 2 }, { 1, 3 }, { 3, 4 }, { 2, 3 }, { 9, 7 },
    };
    size_t n = 0;

    memset(ev, 0, 40 * sizeof *ev);
    /* base: the shell that starts the workload; base + 1 "work.exe"; base + 2 its child "helper";
       base + 3 "work.exe" too, started by the shell; 50 + noise: another program. */
    ev[n++] = (struct ev){ .pid = 50 + (uint32_t)noise, .ppid = 1, .process = "noise" };
    ev[n++] = (struct ev){ .pid = base + 1, .ppid = base, .process = "work.exe" };
    ev[n++] = (struct ev){ .pid = base + 2, .ppid = base + 1, .process = "helper" };
    ev[n++] = (struct ev){ .pid = base + 3, .ppid = base, .process = "WORK.EXE" };
    for (size_t i = 0; i < sizeof story / sizeof story[0]; i++) {
        int p = story[i].proc;
        uint32_t pid = p == 9 ? 50 + (uint32_t)noise : base + (uint32_t)p;
        ev[n++] = (struct ev){ &provider_a, (uint16_t)(story[i].id + (p == 9 ? 10 * noise : 0)), pid, pid * 10, (uint8_t)p, NULL, 0 };
        if (extra && p == 2 && story[i].id == 2) {
            ev[n] = ev[n - 1];
            ev[n++].id = 8;
        }
    }
    return n;
}

START_TEST(process_selection)
{
    struct ev ev[40];
    const char *a, *b, *c;
    etl_diff_options o;
    etl_diff_stats st;
    etl_diff_process work[2] = { { "work", 0, 0 }, { NULL, 0, 0 } };
    etl_guid process_group;
    etl_diff *d = NULL;
    char *s;

    ck_assert_int_eq(etl_guid_parse_provider("Process", &process_group), ETL_OK);
    a = write_trace("a.etl", ev, workload(ev, 1000, 0, 0));
    b = write_trace("b.etl", ev, workload(ev, 2000, 1, 0));
    c = write_trace("c.etl", ev, workload(ev, 3000, 2, 1));
    etl_diff_options_init(&o);
    /* The Process events' payloads hold the pids: they are left out, as a user would. */
    o.normalize.skip = &process_group;
    o.normalize.nskip = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 6, "all: %" PRIu64 " differences:\n%s", st.differences, s);
    free(s);

    /* Only work.exe (both processes of that name: the name's case and .exe do not matter). */
    o.processes = work;
    o.nprocesses = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 0, "work: %" PRIu64 " differences:\n%s", st.differences, s);
    ck_assert_uint_eq(st.events_a, 4);
    ck_assert_uint_eq(st.threads_a, 2);
    free(s);
    s = diff_text(a, c, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 0); /* the event added is helper's */
    free(s);

    /* work.exe and what it started: helper's event added is the one difference. */
    work[0].tree = 1;
    s = diff_text(a, b, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 0);
    ck_assert_uint_eq(st.events_a, 7);
    free(s);
    s = diff_text(a, c, &o, ETL_DIFF_TEXT, &st);
    ck_assert_msg(st.differences == 1, "tree: %" PRIu64 " differences:\n%s", st.differences, s);
    ck_assert_ptr_nonnull(strstr(s, "\tthread T2: pid 3002 (helper), tid 30020\n@@ "));
    free(s);

    /* The shell's tree by its pid, in the same trace: the Process events are its thread's. */
    work[0] = (etl_diff_process){ NULL, 1000, 1 };
    o.normalize.nskip = 0;
    s = diff_text(a, a, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.differences, 0);
    ck_assert_uint_eq(st.events_a, 10);
    free(s);

    /* A name no process of a trace has, or a pid no event has: the comparison fails, naming
       the file and the process. */
    work[0] = (etl_diff_process){ "work", 0, 0 };
    work[1] = (etl_diff_process){ "nosuch", 0, 1 };
    o.nprocesses = 2;
    ck_assert_int_eq(etl_diff_open(&d, a, b, &o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_FATAL);
    ck_assert_msg(strstr(etl_diff_error(d), "a.etl: no process named 'nosuch'") != NULL, "%s", etl_diff_error(d));
    etl_diff_close(d);
    work[1] = (etl_diff_process){ NULL, 1001, 0 };
    ck_assert_int_eq(etl_diff_open(&d, a, b, &o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_FATAL);
    ck_assert_msg(strstr(etl_diff_error(d), "b.etl: no event of process 1001") != NULL, "%s", etl_diff_error(d));
    etl_diff_close(d);

    /* A trace without Process events cannot name its processes. */
    sequence(ev, 4);
    c = write_trace("user.etl", ev, 4);
    o.nprocesses = 1;
    ck_assert_int_eq(etl_diff_open(&d, c, c, &o), ETL_OK);
    ck_assert_int_eq(etl_diff_compare(d), ETL_FATAL);
    ck_assert_msg(strstr(etl_diff_error(d), "user.etl: no process named 'work': the trace has no Process events") != NULL,
                  "%s", etl_diff_error(d));
    etl_diff_close(d);
    work[0] = (etl_diff_process){ NULL, 100, 0 };
    s = diff_text(c, c, &o, ETL_DIFF_TEXT, &st);
    ck_assert_uint_eq(st.events_a, 4);
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
    tcase_add_test(td, threads_interleave_differently);
    tcase_add_test(td, thread_added_event);
    tcase_add_test(td, threads_matched_by_content);
    tcase_add_test(td, process_selection);
    tcase_add_test(td, long_thread_only_in_b);
    tcase_add_test(td, open_errors);
    tcase_add_test(td, damage_is_reported);
    suite_add_tcase(s, tn);
    suite_add_tcase(s, td);
    return check_run(s);
}
