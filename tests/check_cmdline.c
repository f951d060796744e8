/* SPDX-License-Identifier: MIT */
/* Tests of the command-line values the tools share (tools/cmdline.h): counts and masks. */
#include <check.h>
#include <stdint.h>

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

int main(void)
{
    Suite *s = suite_create("cmdline");
    TCase *tc = tcase_create("values");

    tcase_add_test(tc, command_line_numbers);
    suite_add_tcase(s, tc);
    return check_run(s);
}
