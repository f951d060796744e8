/* SPDX-License-Identifier: MIT */
/* The library's version, and the versions of what it was built with. */
#include <zlib.h>

#include "etl.h"

int etl_version_number(void) { return ETL_VERSION_NUMBER; }

const char *etl_version(void) { return ETL_VERSION_STRING; }

const char *etl_version_details(void)
{
    /* zlib's compile-time version: a constant string, safe to share between threads. */
    return "libetl " ETL_VERSION_STRING " zlib/" ZLIB_VERSION;
}
