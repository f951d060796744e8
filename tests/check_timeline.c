/* SPDX-License-Identifier: MIT */
/* Unit tests of the Chrome trace-event timeline (output/chrome.c): thread states, samples, user
   events and their Start/Stop slices from synthetic traces, odd inputs, filters, real samples. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "synth.h"
#include "testutil.h"

/* Raw clock: 10 MHz from 1 000 000, so that T(us) is us microseconds after the start (the
   header buffer's events, the origin). */
#define T(us) (1000000 + 10 * (int64_t)(us))

static const etl_guid test_guid = { 0x11111111, 0x2222, 0x3333, { 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55 } };

static const char manifest[] =
    "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\" "
    "xmlns:win=\"http://manifests.microsoft.com/win/2004/08/windows/events\" "
    "xmlns:xs=\"http://www.w3.org/2001/XMLSchema\"><instrumentation><events>"
    "<provider name=\"Test-Timeline\" guid=\"{11111111-2222-3333-4444-555555555555}\">"
    "<events>"
    "<event value=\"1\" task=\"Request\" opcode=\"win:Start\" template=\"url\"/>"
    "<event value=\"2\" task=\"Request\" opcode=\"win:Stop\" template=\"status\"/>"
    "<event value=\"3\" task=\"Note\" template=\"value\"/>"
    "</events>"
    "<tasks><task name=\"Request\" value=\"1\"/><task name=\"Note\" value=\"2\"/></tasks>"
    "<templates>"
    "<template tid=\"url\"><data name=\"Url\" inType=\"win:AnsiString\"/></template>"
    "<template tid=\"status\"><data name=\"Status\" inType=\"win:UInt32\"/></template>"
    "<template tid=\"value\"><data name=\"Value\" inType=\"win:UInt32\"/></template>"
    "</templates></provider></events></instrumentation></instrumentationManifest>";

static struct synth *sy;
static uint8_t rec[4096];

static void add(unsigned cpu, uint32_t n)
{
    ck_assert_int_eq(synth_add(sy, cpu, rec, n), 0);
}

static void process_ev(int64_t ts, uint16_t hook, uint32_t pid, const char *name)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, 0xFFFFA00000000000ull + pid);
    sp32(&p, pid); sp32(&p, 4); sp32(&p, 1); sp32(&p, 0);
    spp(&p, 0x1AA000); sp32(&p, 0);
    sp32(&p, 0); /* no SID */
    sp_str8(&p, name); sp_str16(&p, name); sp_str16(&p, ""); sp_str16(&p, "");
    add(0, synth_system(rec, 1, 0, ts, hook, 4, pid, 0, p.b, p.n));
}

/* hook 0x0501 Start, 0x0503 DCStart; a name makes it version 4. */
static void thread_ev(int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, const char *name)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0); sp8(&p, 8); sp8(&p, 5); sp8(&p, 2); sp8(&p, 0);
    if (name) sp_str16(&p, name);
    add(0, synth_system(rec, 1, 0, ts, hook, name ? 4 : 3, pid, tid, p.b, p.n));
}

static void cswitch(int64_t ts, unsigned cpu, uint32_t new_tid, uint32_t old_tid, uint8_t state, uint8_t reason,
                    uint8_t mode)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, new_tid); sp32(&p, old_tid);
    sp8(&p, 9); sp8(&p, 8); sp8(&p, 0); sp8(&p, 0); /* priorities 9 and 8, cstate, spare */
    sp8(&p, reason); sp8(&p, mode); sp8(&p, state); sp8(&p, 0);
    sp32(&p, 0); sp32(&p, 0);
    add(cpu, synth_system(rec, 1, 1, ts, 0x0524, 2, 0, 0, p.b, p.n));
}

static void ready(int64_t ts, unsigned cpu, uint32_t tid)
{
    struct synth_payload p;

    sp_init(&p, 8);
    sp32(&p, tid); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0); sp8(&p, 0);
    add(cpu, synth_perfinfo(rec, 1, ts, 0x0532, 2, NULL, NULL, 0, p.b, p.n));
}

static void sample(int64_t ts, unsigned cpu, uint32_t tid, uint64_t ip)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, ip); sp32(&p, tid); sp16(&p, 1); sp8(&p, 0); sp8(&p, 0);
    add(cpu, synth_perfinfo(rec, 1, ts, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n));
}

/* Test-Timeline's event id (1 Start, 2 Stop, 3 Note) of thread pid/tid with one field. */
static void user_ev(int64_t ts, uint32_t pid, uint32_t tid, uint16_t id, const char *url, uint32_t value)
{
    static const uint8_t opcodes[] = { 0, 1, 2, 0 }, tasks[] = { 0, 1, 1, 2 };
    struct synth_payload p;

    sp_init(&p, 8);
    if (url) sp_str8(&p, url);
    else sp32(&p, value);
    add(0, synth_event_header(rec, 1, ts, &test_guid, id, 0, 4, opcodes[id], tasks[id], 0, pid, tid, NULL, 0, p.b, p.n));
}

static uint8_t *finish(size_t *size)
{
    uint8_t *data = synth_finish(sy, size);

    ck_assert_ptr_nonnull(data);
    return data;
}

static void start(void)
{
    struct synth_options o = { 0 };

    o.logger_name = "NT Kernel Logger";
    sy = synth_new(&o);
    ck_assert_ptr_nonnull(sy);
}

/* The tiny trace: two threads of app.exe on cpu 0, a thread of no known process on cpu 1,
   samples, a Note, a Request Start/Stop, a Stop with no Start, a Start never stopped. */
static uint8_t *tiny_trace(size_t *size)
{
    start();
    process_ev(T(0), 0x0303, 100, "app.exe");
    thread_ev(T(0), 0x0503, 100, 101, "main");
    thread_ev(T(0), 0x0503, 100, 102, NULL);
    cswitch(T(5), 1, 103, 0, 0, 0, 0);                 /* 103: no Thread event names its process */
    cswitch(T(10), 0, 101, 0, 0, 0, 0);
    sample(T(30), 0, 101, 0x401000);
    user_ev(T(35), 100, 101, 1, "a&b\"c", 0);          /* Request Start */
    user_ev(T(36), 100, 101, 3, NULL, 7);              /* Note */
    cswitch(T(50), 0, 102, 101, 5, 6, 1);              /* 101 waits: UserRequest, user mode */
    ready(T(70), 1, 101);                              /* woken on cpu 1, where 103 runs */
    cswitch(T(90), 0, 101, 102, 1, 32, 0);             /* 102 preempted: ready */
    user_ev(T(95), 100, 101, 2, NULL, 200);            /* Request Stop */
    user_ev(T(97), 100, 101, 2, NULL, 404);            /* a Stop with no Start */
    user_ev(T(98), 100, 101, 1, "never", 0);           /* a Start never stopped */
    sample(T(100), 0, 101, 0x401010);
    return finish(size);
}

/* The timeline of data with the test manifest's decoder, o (NULL: defaults) and its stats,
   as a malloc'ed NUL-terminated text. */
static char *timeline(const uint8_t *data, size_t size, etl_chrome_options *opts, etl_chrome_stats *st, int *status)
{
    etl_reader *r = NULL;
    etl_decoder *dec = NULL;
    etl_chrome_options o;
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    etl_decoder_options dopt = { ETL_DECODER_NO_DEFAULTS, NULL, NULL };

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    ck_assert_int_eq(etl_decoder_open(&dec, &dopt), ETL_OK);
    ck_assert_int_eq(etl_decoder_add_manifest_memory(dec, manifest, sizeof manifest - 1, "timeline.man"), ETL_OK);
    if (opts) o = *opts;
    else etl_chrome_options_init(&o);
    o.decoder = dec;
    *status = etl_chrome_write(f, r, &o, st);
    fclose(f);
    etl_reader_close(r);
    etl_decoder_close(dec);
    return text;
}

static void assert_json(const char *text)
{
    char err[200];

    ck_assert_msg(test_json_check(text, strlen(text), err, sizeof err) == 0, "invalid JSON: %s", err);
}

/* The tiny trace's timeline, line by line. */
static const char *const tiny_expected[] = {
    "{\"traceEvents\":[",
    "{\"name\":\"Sample\",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"ts\":30.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"cpu\":0,\"ip\":\"0x401000\"}},",
    "{\"name\":\"Request\",\"cat\":\"Test-Timeline\",\"ph\":\"b\",\"id\":\"0x1\",\"ts\":35.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"Url\":\"a&b\\\"c\"}},",
    "{\"name\":\"Note\",\"cat\":\"Test-Timeline\",\"ph\":\"i\",\"s\":\"t\",\"ts\":36.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"Value\":7}},",
    "{\"name\":\"Running\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":10.000,\"dur\":40.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"cpu\":0,\"priority\":8}},",
    "{\"name\":\"Waiting (UserRequest)\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":50.000,\"dur\":20.000,\"pid\":100,"
    "\"tid\":101,\"args\":{\"wait_reason\":\"UserRequest\",\"wait_mode\":\"user\"}},",
    "{\"name\":\"Running\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":50.000,\"dur\":40.000,\"pid\":100,\"tid\":102,"
    "\"args\":{\"cpu\":0,\"priority\":8}},",
    "{\"name\":\"Ready\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":70.000,\"dur\":20.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"readied_by\":103}},",
    "{\"name\":\"Request\",\"cat\":\"Test-Timeline\",\"ph\":\"e\",\"id\":\"0x1\",\"ts\":95.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"Status\":200}},",
    "{\"name\":\"Request/Stop\",\"cat\":\"Test-Timeline\",\"ph\":\"i\",\"s\":\"t\",\"ts\":97.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"Status\":404,\"unmatched\":\"Stop without a Start\"}},",
    "{\"name\":\"Request\",\"cat\":\"Test-Timeline\",\"ph\":\"b\",\"id\":\"0x1\",\"ts\":98.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"Url\":\"never\"}},",
    "{\"name\":\"Sample\",\"cat\":\"sample\",\"ph\":\"i\",\"s\":\"t\",\"ts\":100.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"cpu\":0,\"ip\":\"0x401010\"}},",
    "{\"name\":\"Running\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":90.000,\"dur\":10.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"cpu\":0,\"priority\":9,\"unfinished\":true}},",
    "{\"name\":\"Ready\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":90.000,\"dur\":10.000,\"pid\":100,\"tid\":102,"
    "\"args\":{\"wait_reason\":\"WrPreempted\",\"unfinished\":true}},",
    "{\"name\":\"Running\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":5.000,\"dur\":95.000,\"pid\":4294967295,\"tid\":103,"
    "\"args\":{\"cpu\":1,\"priority\":9,\"unfinished\":true}},",
    "{\"name\":\"Request\",\"cat\":\"Test-Timeline\",\"ph\":\"e\",\"id\":\"0x1\",\"ts\":100.000,\"pid\":100,\"tid\":101,"
    "\"args\":{\"unmatched\":\"no Stop before the end of the trace\"}},",
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":0,\"args\":{\"name\":\"app.exe\"}},",
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":101,\"args\":{\"name\":\"main\"}},",
    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4294967295,\"tid\":0,\"args\":{\"name\":\"(unknown process)\"}}",
    "],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"libetl " ETL_VERSION_STRING "\","
    "\"origin\":\"2024-01-01T00:00:00.000000000Z\",\"slices\":7,\"samples\":2,\"instants\":2,\"spans\":2,"
    "\"unmatched_stops\":1,\"unmatched_starts\":1,\"out_of_order\":0,\"unknown_threads\":1}}",
};

START_TEST(tiny_exact)
{
    size_t size, nexp = sizeof tiny_expected / sizeof *tiny_expected;
    uint8_t *data = tiny_trace(&size);
    etl_chrome_stats st;
    int status;
    char *text = timeline(data, size, NULL, &st, &status), *line, *save = NULL;
    size_t i = 0;

    ck_assert_int_eq(status, ETL_OK);
    assert_json(text);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
        ck_assert_msg(i < nexp, "more lines than expected: %s", line);
        ck_assert_msg(strcmp(line, tiny_expected[i]) == 0, "line %zu:\n got      %s\n expected %s", i + 1, line,
                      tiny_expected[i]);
    }
    ck_assert_uint_eq(i, nexp);
    ck_assert_uint_eq(st.slices, 7);
    ck_assert_uint_eq(st.samples, 2);
    ck_assert_uint_eq(st.unmatched_stops, 1);
    ck_assert_uint_eq(st.unmatched_starts, 1);
    ck_assert_uint_eq(st.unknown_threads, 1);
    ck_assert_uint_eq(st.trace_events, nexp - 2);
    free(text);
    free(data);
}
END_TEST

/* ---- checks over whole outputs, line by line (one event a line) ---- */

struct xslice {
    uint32_t pid, tid;
    double ts, dur;
};

static int xslice_cmp(const void *a, const void *b)
{
    const struct xslice *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static double member_num(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    ck_assert_msg(p != NULL, "no %s in %s", key, line);
    return strtod(p + strlen(key), NULL);
}

/* Every "X" slice has a duration >= 0 and none overlaps another of its thread; every "b" has
   its "e" (per id, in order, not before it). Returns the number of X slices. */
static size_t check_structure(const char *text)
{
    struct xslice *v = NULL;
    size_t n = 0, cap = 0;
    const char *line = text;
    long open[4096] = { 0 };

    while (line && *line) {
        const char *nl = strchr(line, '\n');
        char buf[8192];
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        if (strstr(buf, "\"ph\":\"X\"")) {
            if (n == cap) v = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
            ck_assert_ptr_nonnull(v);
            v[n].ts = member_num(buf, "\"ts\":");
            v[n].dur = member_num(buf, "\"dur\":");
            v[n].pid = (uint32_t)member_num(buf, "\"pid\":");
            v[n].tid = (uint32_t)member_num(buf, "\"tid\":");
            ck_assert_msg(v[n].dur >= 0, "negative duration: %s", buf);
            n++;
        } else if (strstr(buf, "\"ph\":\"b\"") || strstr(buf, "\"ph\":\"e\"")) {
            const char *id = strstr(buf, "\"id\":\"0x");
            unsigned long k;
            ck_assert_ptr_nonnull(id);
            k = strtoul(id + 8, NULL, 16);
            ck_assert_uint_lt(k, 4096);
            if (strstr(buf, "\"ph\":\"b\"")) open[k]++;
            else ck_assert_msg(--open[k] >= 0, "an end with no begin: %s", buf);
        }
        line = nl ? nl + 1 : NULL;
    }
    for (size_t k = 0; k < 4096; k++) ck_assert_int_eq(open[k], 0);
    if (n) qsort(v, n, sizeof *v, xslice_cmp);
    for (size_t i = 1; i < n; i++)
        if (v[i].pid == v[i - 1].pid && v[i].tid == v[i - 1].tid)
            ck_assert_msg(v[i].ts >= v[i - 1].ts + v[i - 1].dur - 1e-9, "slices overlap on %u/%u at %.3f", v[i].pid,
                          v[i].tid, v[i].ts);
    free(v);
    return n;
}

/* Time running backwards: a CSwitch before the one that switched the thread in, a Stop before
   its Start. No slice may end before it starts or overlap the one before on its thread. */
START_TEST(out_of_order)
{
    size_t size;
    uint8_t *data;
    etl_chrome_stats st;
    int status;
    char *text;

    start();
    process_ev(T(0), 0x0303, 100, "app.exe");
    thread_ev(T(0), 0x0503, 100, 101, "main");
    thread_ev(T(0), 0x0503, 100, 102, NULL);
    cswitch(T(10), 0, 101, 0, 0, 0, 0);
    cswitch(T(50), 0, 102, 101, 5, 6, 1);
    user_ev(T(60), 100, 101, 1, "x", 0);
    cswitch(T(20), 1, 101, 0, 0, 0, 0);     /* in cpu 1's buffer, earlier: 101 again */
    user_ev(T(40), 100, 101, 2, NULL, 1);   /* ... */
    cswitch(T(30), 1, 0, 101, 5, 0, 0);
    data = finish(&size);
    /* the reader's own order puts them in time order; file order keeps the buffers' */
    {
        etl_reader *r = NULL;
        etl_reader_options ro = { 0 };
        etl_chrome_writer *w;
        etl_chrome_options o;
        etl_event ev;
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        int rc;
        etl_decoder *dec;
        etl_decoder_options dopt = { ETL_DECODER_NO_DEFAULTS, NULL, NULL };

        ck_assert_int_eq(etl_decoder_open(&dec, &dopt), ETL_OK);
        ck_assert_int_eq(etl_decoder_add_manifest_memory(dec, manifest, sizeof manifest - 1, "t.man"), ETL_OK);
        ro.order = ETL_ORDER_FILE;
        ck_assert_int_eq(etl_reader_open_memory(&r, data, size, &ro), ETL_OK);
        etl_chrome_options_init(&o);
        o.decoder = dec;
        ck_assert_int_eq(etl_chrome_writer_new(&w, f, &o), ETL_OK);
        /* a user event's time made to run backwards as well */
        while ((rc = etl_reader_next(r, &ev)) == ETL_OK)
            ck_assert_int_eq(etl_chrome_writer_add(w, &ev, etl_reader_time_ns(r, ev.timestamp)), ETL_OK);
        ck_assert_int_eq(rc, ETL_EOF);
        ck_assert_int_eq(etl_chrome_writer_finish(w), ETL_OK);
        etl_chrome_writer_stats(w, &st);
        etl_chrome_writer_free(w);
        fclose(f);
        etl_reader_close(r);
        etl_decoder_close(dec);
        text = buf;
    }
    assert_json(text);
    check_structure(text);
    ck_assert_uint_gt(st.out_of_order, 0);
    free(text);
    /* In time order the processors' buffers are merged, but one buffer's events keep their
       order: the Stop (40 us) still comes after its Start (60 us), and ends it there. */
    text = timeline(data, size, NULL, &st, &status);
    ck_assert_int_eq(status, ETL_OK);
    assert_json(text);
    check_structure(text);
    ck_assert_uint_eq(st.out_of_order, 1);
    ck_assert_ptr_nonnull(strstr(text, "{\"name\":\"Request\",\"cat\":\"Test-Timeline\",\"ph\":\"e\",\"id\":\"0x1\","
                                       "\"ts\":60.000,"));
    free(text);
    free(data);
}
END_TEST

/* --process by name (case and .exe ignored) or pid, --thread, the time range. */
START_TEST(filters)
{
    size_t size;
    uint8_t *data = tiny_trace(&size);
    etl_chrome_options o;
    etl_chrome_stats st;
    int status;
    char *text;
    const char *app[] = { "APP" }, *other[] = { "other" };
    uint32_t tid102 = 102, pid100 = 100;

    etl_chrome_options_init(&o);
    o.process_names = app;
    o.nprocess_names = 1;
    text = timeline(data, size, &o, &st, &status);
    ck_assert_int_eq(status, ETL_OK);
    ck_assert_uint_eq(st.slices, 6); /* not the unknown process's thread */
    ck_assert_uint_eq(st.samples, 2);
    ck_assert_ptr_null(strstr(text, "\"tid\":103"));
    free(text);

    o.process_names = other;
    text = timeline(data, size, &o, &st, &status);
    assert_json(text);
    ck_assert_uint_eq(st.slices + st.samples + st.instants + st.spans, 0);
    free(text);

    etl_chrome_options_init(&o);
    o.pids = &pid100;
    o.npids = 1;
    o.tids = &tid102;
    o.ntids = 1;
    text = timeline(data, size, &o, &st, &status);
    ck_assert_uint_eq(st.slices, 2); /* 102's Running and Ready */
    ck_assert_uint_eq(st.samples, 0);
    ck_assert_ptr_null(strstr(text, "\"tid\":101"));
    free(text);

    etl_chrome_options_init(&o);
    o.from_ns = etl_time_from_filetime(133485408000000000LL) + 60000;
    o.to_ns = o.from_ns + 20000; /* 60 to 80 us */
    text = timeline(data, size, &o, &st, &status);
    assert_json(text);
    check_structure(text);
    /* 101 waits 50-70 (cut to 60-70) and is ready 70-90 (cut to 70-80); 102 runs 50-90 (60-80);
       103 runs 5-100 (60-80) */
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"Waiting (UserRequest)\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":60.000,"
                                       "\"dur\":10.000"));
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"Ready\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":70.000,\"dur\":10.000"));
    ck_assert_uint_eq(st.slices, 4);
    ck_assert_uint_eq(st.samples, 0);
    free(text);
    free(data);
}
END_TEST

/* A write that fails is ETL_FATAL. */
START_TEST(write_error)
{
    size_t size;
    uint8_t *data = tiny_trace(&size);
    FILE *f = fopen("/dev/full", "w");
    etl_reader *r = NULL;

    if (!f) {
        free(data);
        return; /* no /dev/full: nothing to check here */
    }
    setvbuf(f, NULL, _IONBF, 0);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    ck_assert_int_eq(etl_chrome_write(f, r, NULL, NULL), ETL_FATAL);
    etl_reader_close(r);
    fclose(f);
    free(data);
}
END_TEST

/* Every sample trace: valid JSON, slices that never overlap on a thread. */
START_TEST(samples_valid)
{
    const char *dir = testdata_path("samples");
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned files = 0;
    size_t slices = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        char path[4096];
        size_t n = strlen(e->d_name), size;
        uint8_t *data;
        etl_chrome_stats st;
        int status;
        char *text;
        etl_chrome_options o;

        if (n < 5 || strcmp(e->d_name + n - 4, ".etl") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = test_read_file(path, &size);
        ck_assert_ptr_nonnull(data);
        etl_chrome_options_init(&o);
        text = timeline(data, size, &o, &st, &status);
        ck_assert_msg(status == ETL_OK, "%s: %d", e->d_name, status);
        assert_json(text);
        slices += check_structure(text);
        files++;
        free(text);
        free(data);
    }
    closedir(d);
    ck_assert_uint_gt(files, 0);
    (void)slices;
}
END_TEST

/* Memory per thread, not per event: 400 000 context switches among 4 threads take no more
   memory at the end than after the first 10 000 (glibc's count of bytes in use; under a
   sanitizer's allocator, which glibc cannot count, the check says so and checks nothing). */
START_TEST(streaming_memory)
{
    enum { N = 400000 };
    struct synth_options so = { 0 };
    size_t size;
    uint8_t *data;
    etl_reader *r = NULL;
    etl_chrome_writer *w;
    etl_event ev;
    FILE *f = fopen("/dev/null", "w");
    size_t at_10k = 0, at_end;
    long n = 0;
    int rc;

    ck_assert_ptr_nonnull(f);
    so.buffer_size = 1 << 20;
    sy = synth_new(&so);
    ck_assert_ptr_nonnull(sy);
    process_ev(T(0), 0x0303, 100, "app.exe");
    for (uint32_t t = 101; t <= 104; t++) thread_ev(T(0), 0x0503, 100, t, "worker");
    for (int i = 0; i < N; i++) {
        if (i % 2) ready(T(1 + i), 1, 101 + (uint32_t)(i + 1) % 4);
        else cswitch(T(1 + i), 0, 101 + (uint32_t)(i + 1) % 4, 101 + (uint32_t)i % 4, 5, (uint8_t)(i % 40), 1);
    }
    data = finish(&size);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    ck_assert_int_eq(etl_chrome_writer_new(&w, f, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        ck_assert_int_eq(etl_chrome_writer_add(w, &ev, etl_reader_time_ns(r, ev.timestamp)), ETL_OK);
        if (++n == 10000) at_10k = mallinfo2().uordblks;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    at_end = mallinfo2().uordblks;
    {
        etl_chrome_stats st;
        etl_chrome_writer_stats(w, &st);
        ck_assert_uint_ge(st.slices, N - 10);
    }
    ck_assert_int_eq(etl_chrome_writer_finish(w), ETL_OK);
    etl_chrome_writer_free(w);
    etl_reader_close(r);
    fclose(f);
    free(data);
    if (at_10k == 0) {
        fprintf(stderr, "streaming_memory: the allocator is not glibc's (a sanitizer's): memory not checked\n");
        return;
    }
    ck_assert_msg(at_end <= at_10k + 4096, "memory grew with the events: %zu bytes after 10000, %zu after %ld",
                  at_10k, at_end, n);
}
END_TEST

/* The JSON check itself finds what is wrong. */
START_TEST(json_check_fails)
{
    static const char *const bad[] = { "{", "{\"a\":}", "[1,]", "{\"a\" 1}", "\"\\x\"", "01", "[1] 2",
                                       "\"\xC3\"", "\"\xED\xA0\x80\"", "\"a\nb\"", "tru", "{\"a\":1,}" };
    static const char *const good[] = { "{}", "[]", "{\"a\":[1,-2.5e3,true,false,null,\"\\u00e9\\n\"]}", " 0 ",
                                        "\"\xC3\xA9\"" };
    char err[100];

    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(test_json_check(bad[i], strlen(bad[i]), err, sizeof err) < 0, "accepted %s", bad[i]);
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(test_json_check(good[i], strlen(good[i]), err, sizeof err) == 0, "refused %s: %s", good[i], err);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("chrome");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, json_check_fails);
    tcase_add_test(tc, tiny_exact);
    tcase_add_test(tc, out_of_order);
    tcase_add_test(tc, filters);
    tcase_add_test(tc, write_error);
    tcase_add_test(tc, samples_valid);
    tcase_add_test(tc, streaming_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
