/* SPDX-License-Identifier: MIT */
/* The main() body shared by the Check test programs: run a suite, exit nonzero on failure. */
#ifndef ETL_CHECK_RUN_H
#define ETL_CHECK_RUN_H

#include <check.h>

static inline int check_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
