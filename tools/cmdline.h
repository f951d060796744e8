/* SPDX-License-Identifier: MIT */
/* Command-line values the tools share. Private to tools/. */
#ifndef ETL_TOOLS_CMDLINE_H
#define ETL_TOOLS_CMDLINE_H

#include <stdint.h>

/* Seconds as "12" or "1.25" (digits beyond nanoseconds dropped) into ns: 0, or -1 when s is
   not such a number or is beyond the int64 range of nanoseconds. */
int tool_parse_seconds(const char *s, int64_t *ns);
/* A decimal number from 0 to max: 0, or -1 when s is not one. */
int tool_parse_u32(const char *s, uint32_t max, uint32_t *out);
/* Keywords and other masks: decimal, or hexadecimal after 0x ("0x10"): 0, or -1 when s is not
   such a number (a sign, trailing characters, beyond 64 bits). */
int tool_parse_u64(const char *s, uint64_t *out);

#endif
