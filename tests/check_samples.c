/* SPDX-License-Identifier: MIT */
/* Exactness: libetl yields exactly the events an independent parser finds in each real Windows sample. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check_run.h"
#include "testutil.h"

/* The samples and what MANIFEST.tsv says of their logfile headers. */
struct sample {
    const char *name;
    const char *logger;
    unsigned mode, pointer_size;
    const char *os;
    unsigned cpus, buffer_size, buffers, compressed, clock, events_lost;
    long events;
};

static struct sample samples[32];
static int nsamples;

static void load_manifest(void)
{
    size_t size;
    char *text = (char *)test_read_file(testdata_path("samples/MANIFEST.tsv"), &size);
    char *line, *save = NULL;

    if (!text) {
        fprintf(stderr, "cannot read %s\n", testdata_path("samples/MANIFEST.tsv"));
        exit(1);
    }
    text = realloc(text, size + 1);
    text[size] = 0;
    line = strtok_r(text, "\n", &save);
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && nsamples < 32) {
        char *f[20];
        int nf = 0;
        char *p = line;
        struct sample *s = &samples[nsamples];
        while (nf < 20) {
            f[nf++] = p;
            p = strchr(p, '\t');
            if (!p) break;
            *p++ = 0;
        }
        if (nf != 18) {
            fprintf(stderr, "MANIFEST.tsv: %d columns, want 18\n", nf);
            exit(1);
        }
        s->name = strdup(f[0]);
        s->logger = strdup(f[6]);
        s->mode = (unsigned)strtoul(f[7], NULL, 16);
        s->pointer_size = (unsigned)atoi(f[9]);
        s->os = strdup(f[10]);
        s->cpus = (unsigned)atoi(f[11]);
        s->buffer_size = (unsigned)atoi(f[12]);
        s->buffers = (unsigned)atoi(f[13]);
        s->compressed = (unsigned)atoi(f[14]);
        s->clock = strcmp(f[15], "QPC") == 0 ? 1 : strcmp(f[15], "SystemTime") == 0 ? 2 : 3;
        s->events_lost = (unsigned)atoi(f[16]);
        s->events = atol(f[17]);
        nsamples++;
    }
    free(text);
}

static void setup(void)
{
    if (!nsamples) load_manifest();
}

static long read_rows(const char *path, int order, struct expected_event **rows, int64_t **times_ns)
{
    etl_reader_options o = { .order = order };
    etl_reader *r = NULL;
    etl_event ev;
    long n = 0, cap = 1024;
    int rc = etl_reader_open_path(&r, path, &o);

    ck_assert_msg(rc == ETL_OK, "%s: open gave %d: %s", path, rc, etl_reader_error(r));
    *rows = malloc((size_t)cap * sizeof **rows);
    if (times_ns) *times_ns = malloc((size_t)cap * sizeof **times_ns);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (n == cap) {
            cap *= 2;
            *rows = realloc(*rows, (size_t)cap * sizeof **rows);
            if (times_ns) *times_ns = realloc(*times_ns, (size_t)cap * sizeof **times_ns);
        }
        if (times_ns) (*times_ns)[n] = etl_reader_time_ns(r, ev.timestamp);
        test_event_row(&ev, &(*rows)[n++]);
    }
    ck_assert_msg(rc == ETL_EOF, "%s: next gave %d: %s", path, rc, etl_reader_error(r));
    ck_assert_uint_eq(etl_reader_warnings(r), 0);
    etl_reader_close(r);
    return n;
}

static void expected_for(const struct sample *s, struct expected_event **rows, long *n)
{
    char rel[256];
    snprintf(rel, sizeof rel, "samples/expected/%.*s.events.tsv.gz", (int)(strlen(s->name) - 4), s->name);
    *n = test_read_expected(testdata_path(rel), rows);
    ck_assert_msg(*n >= 0, "cannot read %s", rel);
}

/* File order: the same events as the table, one for one, in the same order. */
START_TEST(file_order_matches_table)
{
    const struct sample *s = &samples[_i];
    char rel[256], a[256], b[256];
    struct expected_event *want, *got;
    long nwant, ngot;

    ck_assert_int_lt(_i, nsamples);
    expected_for(s, &want, &nwant);
    snprintf(rel, sizeof rel, "samples/%s", s->name);
    ngot = read_rows(testdata_path(rel), ETL_ORDER_FILE, &got, NULL);
    for (long i = 0; i < nwant && i < ngot; i++) {
        if (test_row_cmp(&want[i], &got[i]) != 0 || want[i].buf != got[i].buf) {
            test_row_format(&want[i], a, sizeof a);
            test_row_format(&got[i], b, sizeof b);
            ck_abort_msg("%s event %ld:\n want %s\n got  %s", s->name, i, a, b);
        }
    }
    ck_assert_msg(ngot == nwant, "%s: %ld events, want %ld", s->name, ngot, nwant);
    ck_assert_int_eq(ngot, s->events);
    free(want);
    free(got);
}
END_TEST

/* Time order: the same multiset, with non-decreasing timestamps. */
START_TEST(time_order_same_events_sorted)
{
    const struct sample *s = &samples[_i];
    char rel[256];
    struct expected_event *want, *got;
    int64_t *ns;
    long nwant, ngot;

    expected_for(s, &want, &nwant);
    snprintf(rel, sizeof rel, "samples/%s", s->name);
    ngot = read_rows(testdata_path(rel), ETL_ORDER_TIME, &got, &ns);
    ck_assert_int_eq(ngot, nwant);
    for (long i = 1; i < ngot; i++) {
        ck_assert_msg(got[i].ts >= got[i - 1].ts, "%s: event %ld ts %lld before %lld", s->name, i,
                      (long long)got[i].ts, (long long)got[i - 1].ts);
        ck_assert(ns[i] >= ns[i - 1]);
    }
    qsort(want, (size_t)nwant, sizeof *want, test_row_cmp);
    qsort(got, (size_t)ngot, sizeof *got, test_row_cmp);
    for (long i = 0; i < ngot; i++) {
        char a[256], b[256];
        test_row_format(&want[i], a, sizeof a);
        test_row_format(&got[i], b, sizeof b);
        ck_assert_msg(test_row_cmp(&want[i], &got[i]) == 0, "%s sorted row %ld:\n want %s\n got  %s", s->name, i, a, b);
    }
    free(want);
    free(got);
    free(ns);
}
END_TEST

/* The trace info agrees with MANIFEST.tsv. */
START_TEST(trace_info_matches_manifest)
{
    const struct sample *s = &samples[_i];
    char rel[256], os[32];
    etl_reader *r = NULL;
    const etl_trace_info *in;

    snprintf(rel, sizeof rel, "samples/%s", s->name);
    ck_assert_int_eq(etl_reader_open_path(&r, testdata_path(rel), NULL), ETL_OK);
    in = etl_reader_info(r);
    ck_assert_str_eq(in->logger_name, s->logger);
    ck_assert_uint_eq(in->log_file_mode, s->mode);
    ck_assert_uint_eq(in->pointer_size, s->pointer_size);
    snprintf(os, sizeof os, "%u.%u.%u", in->os_major, in->os_minor, in->os_build);
    ck_assert_str_eq(os, s->os);
    ck_assert_uint_eq(in->number_of_processors, s->cpus);
    /* MANIFEST's buffer_size is the header buffer's BufferSize: in compressed (relogged)
       files that buffer is short (512, 1024) while the logfile header gives the logical
       size of the data buffers (65536), which is what the trace info reports. */
    {
        uint8_t first[4];
        FILE *f = fopen(testdata_path(rel), "rb");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fread(first, 1, 4, f), 4);
        fclose(f);
        ck_assert_uint_eq((unsigned)(first[0] | first[1] << 8 | first[2] << 16 | (unsigned)first[3] << 24), s->buffer_size);
        if (s->compressed)
            ck_assert_uint_eq(in->buffer_size, 65536);
        else
            ck_assert_uint_eq(in->buffer_size, s->buffer_size);
    }
    ck_assert_uint_eq(in->buffers, s->buffers);
    ck_assert_uint_eq(in->compressed_buffers, s->compressed);
    ck_assert_int_eq(in->clock.type, (int)s->clock);
    ck_assert_uint_eq(in->events_lost, s->events_lost);
    ck_assert_uint_eq(in->damaged_buffers, 0);
    /* Absolute time: the logfile header event converts to StartTime exactly. */
    ck_assert_int_eq(etl_reader_time_ns(r, in->clock.start_timestamp), etl_time_from_filetime(in->clock.start_time));
    etl_reader_close(r);
}
END_TEST

/* The same events through every open path: memory, descriptor, and .etl.gz. */
START_TEST(open_paths_agree)
{
    const struct sample *s = &samples[_i];
    char rel[256], gzpath[4096];
    size_t size;
    uint8_t *data;
    etl_reader *r = NULL;
    unsigned w;
    long n;
    FILE *f;
    gzFile gz;

    snprintf(rel, sizeof rel, "samples/%s", s->name);
    data = test_read_file(testdata_path(rel), &size);
    ck_assert_ptr_nonnull(data);
    ck_assert_int_eq(etl_reader_open_memory(&r, data, size, NULL), ETL_OK);
    n = test_count_events(r, &w);
    ck_assert_int_eq(n, s->events);
    etl_reader_close(r);

    snprintf(gzpath, sizeof gzpath, "%s/libetl-test-%d.etl.gz", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)_i);
    gz = gzopen(gzpath, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, data, (unsigned)size), (int)size);
    gzclose(gz);
    ck_assert_int_eq(etl_reader_open_path(&r, gzpath, NULL), ETL_OK);
    ck_assert_int_eq(test_count_events(r, &w), s->events);
    ck_assert_uint_eq(etl_reader_info(r)->file_size, size);
    etl_reader_close(r);
    unlink(gzpath);

    f = fopen(testdata_path(rel), "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(etl_reader_open_fd(&r, fileno(f), NULL), ETL_OK);
    ck_assert_int_eq(test_count_events(r, &w), s->events);
    etl_reader_close(r);
    fclose(f);
    free(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("samples");
    TCase *tc = tcase_create("exactness");

    load_manifest();
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, file_order_matches_table, 0, nsamples);
    tcase_add_loop_test(tc, time_order_same_events_sorted, 0, nsamples);
    tcase_add_loop_test(tc, trace_info_matches_manifest, 0, nsamples);
    tcase_add_loop_test(tc, open_paths_agree, 0, nsamples);
    suite_add_tcase(s, tc);
    return check_run(s);
}
