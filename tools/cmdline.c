/* SPDX-License-Identifier: MIT */
/* Command-line values the tools share (tools/cmdline.h). */
#include <errno.h>
#include <stdlib.h>

#include "cmdline.h"

int tool_parse_seconds(const char *s, int64_t *ns)
{
    int64_t whole = 0, frac = 0, scale = 1000000000;
    const char *p = s;

    if (*p < '0' || *p > '9') return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX / 1000000000 - 9) / 10) return -1;
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') return -1;
        for (; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    }
    if (*p != '\0') return -1;
    *ns = whole * 1000000000 + frac;
    return 0;
}

int tool_parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return -1;
    *out = (uint32_t)v;
    return 0;
}

int tool_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}
