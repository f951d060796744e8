/* SPDX-License-Identifier: MIT */
/* Command-line values the tools share. Private to tools/. */
#ifndef ETL_TOOLS_CMDLINE_H
#define ETL_TOOLS_CMDLINE_H

#include <stdint.h>

/* Seconds as "12" or "1.25" (digits beyond nanoseconds dropped) into ns: 0, or -1 when s is
   not such a number or is beyond the int64 range of nanoseconds. */
int tool_parse_seconds(const char *s, int64_t *ns);

#endif
