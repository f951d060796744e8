/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-function sample shares of two profiles (output/diffstacks.c, etldiff --stacks) on synthetic traces of known shares. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"
#include "check_run.h"
#include "stacks.h"

/* app.exe's addresses: the functions of these tests are unnamed offsets of one image */
#define MAIN 0x402000u  /* app.exe+0x2000 */
#define HOT  0x401000u  /* app.exe+0x1000 */
#define A_FN 0x401100u  /* app.exe+0x1100 */
#define B_FN 0x401200u  /* app.exe+0x1200 */
#define REC  0x403000u  /* app.exe+0x3000 */

/* count samples that hit leaf, called from main */
static struct stacks_sample leaf(uint16_t count, uint64_t at)
{
    struct stacks_sample s;
    memset(&s, 0, sizeof s);
    s.count = count;
    s.nframes = 2;
    s.frames[0] = at;
    s.frames[1] = MAIN;
    return s;
}

static etl_profile *profile_of(const struct stacks_sample *samples, size_t n)
{
    etl_symbolizer_options so;
    etl_profile_options po;
    etl_profile *p = NULL;
    etl_reader *r = NULL;
    size_t size;
    uint8_t *file = stacks_trace(samples, n, &size);

    ck_assert_ptr_nonnull(file);
    memset(&so, 0, sizeof so);
    so.flags = ETL_SYMBOLS_NO_SYSTEM_PATHS | ETL_SYMBOLS_NO_PDB;
    memset(&po, 0, sizeof po);
    po.symbols = &so;
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    ck_assert_int_eq(etl_profile_new(&p, &po), ETL_OK);
    ck_assert_int_eq(etl_profile_add_trace(p, r), ETL_OK);
    etl_reader_close(r);
    free(file);
    return p;
}

/* The row of the function named name, or fails. */
static etl_profile_diff_function row_of(const etl_profile_diff *d, const char *name, size_t *index)
{
    etl_profile_diff_function f;
    for (size_t i = 0; i < etl_profile_diff_count(d); i++) {
        ck_assert_int_eq(etl_profile_diff_get(d, i, &f), ETL_OK);
        if (strcmp(f.name, name) == 0) {
            if (index) *index = i;
            return f;
        }
    }
    ck_abort_msg("no function %s", name);
    return f;
}

static char *written(const etl_profile_diff *d, etl_diff_format format, long max_rows)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(etl_profile_diff_write(f, d, "a.etl", "b.etl", format, max_rows), ETL_OK);
    fclose(f);
    return text;
}

/* A: hot 20, a 40, b 40 of 100 samples. B: hot 30, a 36, b 34. */
static void moved_profiles(etl_profile **a, etl_profile **b)
{
    struct stacks_sample sa[3] = { leaf(20, HOT), leaf(40, A_FN), leaf(40, B_FN) };
    struct stacks_sample sb[3] = { leaf(36, A_FN), leaf(30, HOT), leaf(34, B_FN) };
    *a = profile_of(sa, 3);
    *b = profile_of(sb, 3);
}

START_TEST(test_identical)
{
    struct stacks_sample s[3] = { leaf(60, HOT), leaf(30, A_FN), leaf(10, B_FN) };
    etl_profile *a = profile_of(s, 3), *b = profile_of(s, 3);
    etl_profile_diff *d;
    etl_profile_diff_stats st;
    etl_profile_diff_function f;

    for (int m = ETL_PROFILE_SELF; m <= ETL_PROFILE_TOTAL; m++) {
        ck_assert_int_eq(etl_profile_diff_new(&d, a, b, (etl_profile_measure)m, 0), ETL_OK);
        etl_profile_diff_stats_get(d, &st);
        ck_assert_uint_eq(st.samples_a, 100);
        ck_assert_uint_eq(st.samples_b, 100);
        ck_assert_uint_eq(st.moved, 0);
        /* self: the three leaves; total: main too */
        ck_assert_uint_eq(st.functions, m == ETL_PROFILE_SELF ? 3 : 4);
        f = row_of(d, "app.exe+0x1000", NULL);
        ck_assert(f.self_share[0] == 60.0 && f.self_share[1] == 60.0);
        ck_assert(f.delta == 0.0);
        ck_assert_int_eq(f.verdict, 0);
        ck_assert_ptr_null(f.image); /* an unnamed frame: its image is in its name */
        if (m == ETL_PROFILE_TOTAL) {
            f = row_of(d, "app.exe+0x2000", NULL);
            ck_assert_uint_eq(f.self[0], 0);
            ck_assert_uint_eq(f.total[0], 100);
            ck_assert(f.total_share[1] == 100.0);
        }
        etl_profile_diff_free(d);
    }
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_ten_points_listed_first)
{
    etl_profile *a, *b;
    etl_profile_diff *d;
    etl_profile_diff_stats st;
    etl_profile_diff_function f;
    size_t i;

    moved_profiles(&a, &b);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 1), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.functions, 3);
    ck_assert_uint_eq(st.moved, 3);
    ck_assert_uint_eq(st.hotter, 1);
    ck_assert_uint_eq(st.cooler, 2);
    ck_assert_int_eq(etl_profile_diff_get(d, 0, &f), ETL_OK);
    ck_assert_str_eq(f.name, "app.exe+0x1000");
    ck_assert(f.self_share[0] == 20.0 && f.self_share[1] == 30.0);
    ck_assert(f.delta == 10.0);
    ck_assert_int_eq(f.verdict, 1);
    /* then b (-6), then a (-4) */
    ck_assert_int_eq(etl_profile_diff_get(d, 1, &f), ETL_OK);
    ck_assert_str_eq(f.name, "app.exe+0x1200");
    ck_assert_int_eq(f.verdict, -1);
    ck_assert_int_eq(etl_profile_diff_get(d, 2, &f), ETL_OK);
    ck_assert_str_eq(f.name, "app.exe+0x1100");
    ck_assert(f.delta == -4.0);
    ck_assert_int_eq(etl_profile_diff_get(d, 3, &f), ETL_FAILED);
    etl_profile_diff_free(d);
    /* main's total share is 100 on both sides: only its self share is 0, and it is no row of self */
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_TOTAL, 1), ETL_OK);
    f = row_of(d, "app.exe+0x2000", &i);
    ck_assert_int_eq(f.verdict, 0);
    ck_assert_uint_eq(i, 3);
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_tolerance_boundary)
{
    etl_profile *a, *b;
    etl_profile_diff *d;
    etl_profile_diff_stats st;
    /* A: 3 of 7 samples hit hot (42.857...), B: 19 of 28 (67.857...): 25 points exactly, which
       100.0 * 19 / 28 - 100.0 * 3 / 7 computes as 25.000000000000007 */
    struct stacks_sample sa[2] = { leaf(3, HOT), leaf(4, A_FN) }, sb[2] = { leaf(19, HOT), leaf(9, A_FN) };

    moved_profiles(&a, &b);
    /* b moved 6 points: a tolerance of 6 lets it pass, hot (10) does not */
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 6), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 1);
    ck_assert_int_eq(row_of(d, "app.exe+0x1200", NULL).verdict, 0);
    ck_assert_int_eq(row_of(d, "app.exe+0x1000", NULL).verdict, 1);
    etl_profile_diff_free(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 5.99), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 2);
    etl_profile_diff_free(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 10), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 0);
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);

    a = profile_of(sa, 2);
    b = profile_of(sb, 2);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 25), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 0);
    etl_profile_diff_free(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 24.99), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 2);
    etl_profile_diff_free(d);
    /* a negative tolerance is refused */
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, -1), ETL_FAILED);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, INFINITY), ETL_FAILED);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, NAN), ETL_FAILED);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, (etl_profile_measure)7, 1), ETL_FAILED);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_empty_side)
{
    struct stacks_sample s[1] = { leaf(5, HOT) };
    etl_profile *a = profile_of(s, 1), *b = profile_of(NULL, 0);
    etl_profile_diff *d;
    etl_profile_diff_stats st;
    etl_profile_diff_function f;

    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 0), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.samples_a, 5);
    ck_assert_uint_eq(st.samples_b, 0);
    /* no shares in B: nothing is judged (the tool says so and exits 2) */
    ck_assert_uint_eq(st.moved, 0);
    f = row_of(d, "app.exe+0x1000", NULL);
    ck_assert(f.self_share[1] == 0.0);
    ck_assert_int_eq(f.verdict, 0);
    etl_profile_diff_free(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, b, b, ETL_PROFILE_TOTAL, 0), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.samples_a + st.samples_b + st.functions, 0);
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_recursion_once)
{
    /* A: 10 samples hot <- rec <- rec <- rec <- main, 10 samples a <- main.
       B: 10 samples hot <- rec <- main, 10 samples a <- main: rec's total share is 50 on both
       sides, not 150 or 75 */
    struct stacks_sample sa[2], sb[2];
    etl_profile *a, *b;
    etl_profile_diff *d;
    etl_profile_diff_stats st;
    etl_profile_diff_function f;

    memset(sa, 0, sizeof sa);
    sa[0].count = 10;
    sa[0].nframes = 5;
    sa[0].frames[0] = HOT;
    sa[0].frames[1] = REC;
    sa[0].frames[2] = REC;
    sa[0].frames[3] = REC;
    sa[0].frames[4] = MAIN;
    sa[1] = leaf(10, A_FN);
    sb[0] = sa[0];
    sb[0].nframes = 3;
    sb[0].frames[2] = MAIN;
    sb[1] = sa[1];
    a = profile_of(sa, 2);
    b = profile_of(sb, 2);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_TOTAL, 0), ETL_OK);
    etl_profile_diff_stats_get(d, &st);
    ck_assert_uint_eq(st.moved, 0);
    f = row_of(d, "app.exe+0x3000", NULL);
    ck_assert_uint_eq(f.total[0], 10);
    ck_assert_uint_eq(f.total[1], 10);
    ck_assert(f.total_share[0] == 50.0);
    ck_assert_uint_eq(f.self[0], 0);
    f = row_of(d, "app.exe+0x2000", NULL);
    ck_assert(f.total_share[0] == 100.0);
    etl_profile_diff_free(d);
    /* a recursive function where the samples hit: self once too */
    sa[0].frames[0] = REC;
    sa[0].frames[1] = REC;
    etl_profile_free(a);
    a = profile_of(sa, 2);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, a, ETL_PROFILE_SELF, 0), ETL_OK);
    f = row_of(d, "app.exe+0x3000", NULL);
    ck_assert_uint_eq(f.self[0], 10);
    ck_assert_uint_eq(f.total[0], 10);
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_written)
{
    etl_profile *a, *b;
    etl_profile_diff *d;
    char *text;

    moved_profiles(&a, &b);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 5), ETL_OK);
    text = written(d, ETL_DIFF_TEXT, 2);
    ck_assert_str_eq(text,
                     "     A %      B %    DELTA  VERDICT FUNCTION (self: samples that hit it)\n"
                     "  20.00%   30.00%   +10.00  hotter  app.exe+0x1000\n"
                     "  40.00%   34.00%    -6.00  cooler  app.exe+0x1200\n"
                     "(1 more functions not shown)\n"
                     "A: 100 samples, B: 100 samples: 2 of 3 functions moved more than 5 points of self share "
                     "(1 hotter, 1 cooler)\n");
    free(text);
    text = written(d, ETL_DIFF_JSON, 1);
    ck_assert_str_eq(text,
                     "{\"a\":{\"path\":\"a.etl\",\"samples\":100},\"b\":{\"path\":\"b.etl\",\"samples\":100},"
                     "\"measure\":\"self\",\"tolerance\":5,\"equal\":false,\"functions\":[{\"function\":"
                     "\"app.exe+0x1000\",\"image\":null,\"a\":{\"self\":20,\"total\":20,\"self_share\":20.0000,"
                     "\"total_share\":20.0000},\"b\":{\"self\":30,\"total\":30,\"self_share\":30.0000,"
                     "\"total_share\":30.0000},\"delta\":10.0000,\"verdict\":\"hotter\"}],\"functions_total\":3,"
                     "\"moved\":2,\"hotter\":1,\"cooler\":1}\n");
    free(text);
    etl_profile_diff_free(d);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, a, ETL_PROFILE_TOTAL, 1), ETL_OK);
    text = written(d, ETL_DIFF_TEXT, 0);
    ck_assert_str_eq(text,
                     "     A %      B %    DELTA  VERDICT FUNCTION (total: samples with it on the stack)\n"
                     "(4 more functions not shown)\n"
                     "A: 100 samples, B: 100 samples: no function of 4 moved more than 1 point of total share\n");
    free(text);
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

START_TEST(test_write_error)
{
    etl_profile *a, *b;
    etl_profile_diff *d;
    FILE *f = fopen("/dev/full", "w");

    moved_profiles(&a, &b);
    ck_assert_int_eq(etl_profile_diff_new(&d, a, b, ETL_PROFILE_SELF, 1), ETL_OK);
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        ck_assert_int_eq(etl_profile_diff_write(f, d, "a", "b", ETL_DIFF_TEXT, -1), ETL_FATAL);
        fclose(f);
    }
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
}
END_TEST

static Suite *diffstacks_suite(void)
{
    Suite *s = suite_create("diffstacks");
    TCase *tc = tcase_create("shares");
    tcase_add_test(tc, test_identical);
    tcase_add_test(tc, test_ten_points_listed_first);
    tcase_add_test(tc, test_tolerance_boundary);
    tcase_add_test(tc, test_empty_side);
    tcase_add_test(tc, test_recursion_once);
    tcase_add_test(tc, test_written);
    tcase_add_test(tc, test_write_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(diffstacks_suite());
}
