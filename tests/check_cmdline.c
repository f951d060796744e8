/* SPDX-License-Identifier: MIT */
/* Tests of the command-line values the tools share (tools/cmdline.h): counts and masks,
   long options given in full, existing outputs. */
#define _DEFAULT_SOURCE /* mkdtemp, symlink */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmdline.h"
#include "check_run.h"

/* Counts and masks of the command lines (etlrecord, etldemo). */
START_TEST(command_line_numbers)
{
    uint32_t u = 7;
    uint64_t k = 7;

    ck_assert_int_eq(tool_parse_u32("255", 255, &u), 0);
    ck_assert_uint_eq(u, 255);
    ck_assert_int_eq(tool_parse_u32("256", 255, &u), -1);
    ck_assert_int_eq(tool_parse_u32("4294967295", UINT32_MAX, &u), 0);
    ck_assert_uint_eq(u, UINT32_MAX);
    ck_assert_int_eq(tool_parse_u32("4294967296", UINT32_MAX, &u), -1);
    ck_assert_int_eq(tool_parse_u32("-1", 10, &u), -1);
    ck_assert_int_eq(tool_parse_u32(" 1", 10, &u), -1);
    ck_assert_int_eq(tool_parse_u32("1x", 10, &u), -1);
    ck_assert_int_eq(tool_parse_u32("", 10, &u), -1);
    ck_assert_int_eq(tool_parse_u32("0x10", 100, &u), -1);
    ck_assert_int_eq(tool_parse_u64("0x10", &k), 0);
    ck_assert_uint_eq(k, 16);
    ck_assert_int_eq(tool_parse_u64("12", &k), 0);
    ck_assert_uint_eq(k, 12);
    ck_assert_int_eq(tool_parse_u64("0xffffffffffffffff", &k), 0);
    ck_assert_uint_eq(k, UINT64_MAX);
    ck_assert_int_eq(tool_parse_u64("0x10000000000000000", &k), -1);
    ck_assert_int_eq(tool_parse_u64("-0x10", &k), -1);
    ck_assert_int_eq(tool_parse_u64("0xg", &k), -1);
    ck_assert_int_eq(tool_parse_u64("", &k), -1);
}
END_TEST

/* One rule for long options: given in full. An abbreviation is refused ('?'), wherever its
   value is (--out=X, --out X); the full name, = or a separate value, and short options pass. */
/* --time-range's A,B, as etldiff and etlprof take it: either side may be empty; A after B, a
   missing or second comma, a side that is not seconds, are refused and change nothing. */
START_TEST(time_ranges)
{
    static const char *const bad[] = { "", "1", "1,2,3", "x,2", "1,y", "3,2", "-1,2", "1,2 ",
                                       "0000000000000000000000000000000000000000000000000000000000000000001,2" };
    int64_t from = -7, to = -7;

    ck_assert_int_eq(tool_parse_time_range("1.5,3", &from, &to), 0);
    ck_assert_int_eq(from, 1500000000);
    ck_assert_int_eq(to, 3000000000);
    from = 5;
    to = INT64_MAX;
    ck_assert_int_eq(tool_parse_time_range(",2", &from, &to), 0);
    ck_assert_int_eq(from, 5);
    ck_assert_int_eq(to, 2000000000);
    from = 0;
    to = INT64_MAX;
    ck_assert_int_eq(tool_parse_time_range("0.25,", &from, &to), 0);
    ck_assert_int_eq(from, 250000000);
    ck_assert_int_eq(to, INT64_MAX);
    ck_assert_int_eq(tool_parse_time_range(",", &from, &to), 0);
    ck_assert_int_eq(tool_parse_time_range("2,2", &from, &to), 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        from = -7;
        to = -7;
        ck_assert_msg(tool_parse_time_range(bad[i], &from, &to) == -1, "'%s' taken", bad[i]);
        ck_assert_int_eq(from, -7);
        ck_assert_int_eq(to, -7);
    }
}
END_TEST

START_TEST(long_options_in_full)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' }, { "profile-interval", required_argument, NULL, 'p' },
        { "stackwalk", optional_argument, NULL, 's' }, { "quiet", no_argument, NULL, 'q' },
        { NULL, 0, NULL, 0 },
    };
    char a0[] = "t", a1[] = "--output", a2[] = "x", a3[] = "--profile-interval=3", a4[] = "-o", a5[] = "y",
         a6[] = "--stackwalk", a7[] = "--quiet", a8[] = "in", a9[] = "--out=z", a10[] = "--prof", a11[] = "5",
         a12[] = "--qu", a13[] = "--stack=profile";
    char *ok_argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL };
    int want[] = { 'o', 'p', 'o', 's', 'q' };
    int idx;

    optind = 0;
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_int_eq(tool_getopt_long("t", 9, ok_argv, "o:", longopts, &idx), want[i]);
    ck_assert_int_eq(tool_getopt_long("t", 9, ok_argv, "o:", longopts, &idx), -1);
    ck_assert_str_eq(ok_argv[optind], "in");

    char *bad[][4] = { { a0, a9, NULL, NULL }, { a0, a10, a11, NULL }, { a0, a12, NULL, NULL }, { a0, a13, NULL, NULL } };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        optind = 0;
        ck_assert_int_eq(tool_getopt_long("t", bad[i][2] ? 3 : 2, bad[i], "o:", longopts, NULL), '?');
    }
}
END_TEST

/* One rule for the files the tools write: an existing one only with --force. */
START_TEST(existing_output)
{
    char dir[] = "/tmp/check_cmdline.XXXXXX", path[64];
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.etl", dir);
    ck_assert_int_eq(tool_output_check("t", path, 0), 0);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(tool_output_check("t", path, 0), -1);
    ck_assert_int_eq(tool_output_check("t", path, 1), 0);
    remove(path);
    ck_assert_int_eq(symlink("nowhere", path), 0);
    ck_assert_int_eq(tool_output_check("t", path, 0), -1);
    remove(path);
    remove(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cmdline");
    TCase *tc = tcase_create("values");

    tcase_add_test(tc, command_line_numbers);
    tcase_add_test(tc, long_options_in_full);
    tcase_add_test(tc, existing_output);
    tcase_add_test(tc, time_ranges);
    suite_add_tcase(s, tc);
    return check_run(s);
}
