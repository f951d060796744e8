/* SPDX-License-Identifier: MIT */
/* Reading TraceEvent's decoded listings (tests/baseline.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"

int baseline_number(const char *s, uint64_t *out)
{
    char digits[64], *end;
    size_t k = 0;
    int neg = 0;

    if (strncmp(s, "0x", 2) == 0) {
        *out = strtoull(s + 2, &end, 16);
        return *end == '\0' && end != s + 2;
    }
    if (*s == '-') {
        neg = 1;
        s++;
    }
    for (; *s && k < sizeof digits - 1; s++) {
        if (*s == ',') continue;
        if (*s < '0' || *s > '9') return 0;
        digits[k++] = *s;
    }
    if (!k || *s) return 0;
    digits[k] = '\0';
    *out = strtoull(digits, NULL, 10);
    if (neg) *out = (uint64_t)0 - *out;
    return 1;
}

int baseline_text_equal(const char *ours, const char *listed)
{
    size_t n = strlen(listed);

    if (n > 3 && strcmp(listed + n - 3, "...") == 0) return strlen(ours) > 20 && strncmp(ours, listed, n - 3) == 0;
    return strcmp(ours, listed) == 0;
}

void baseline_time(uint64_t filetime, char *out, size_t size)
{
    char iso[40];

    etl_time_format(etl_time_from_filetime((int64_t)filetime), iso, sizeof iso); /* 2023-03-14T00:46:50.703...Z */
    snprintf(out, size, "%.2s/%.2s/%.2s %.2s:%.2s:%.2s.%.2s", iso + 2, iso + 5, iso + 8, iso + 11, iso + 14, iso + 17,
             iso + 20);
}

int baseline_field_equal(const etl_field *f, const char *listed, char *why, size_t size)
{
    char ours[1024];
    uint64_t v, want;
    int64_t ns;

    why[0] = '\0';
    if ((f->in_type == ETL_IN_FILETIME || f->in_type == ETL_IN_SYSTEMTIME) && etl_field_time(f, &ns) == ETL_OK) {
        /* listed "yy/MM/dd HH:mm:ss.ff..." */
        size_t cmp = f->in_type == ETL_IN_FILETIME ? 20 : 17;
        baseline_time((uint64_t)etl_time_to_filetime(ns), ours, sizeof ours);
        if (strlen(listed) >= cmp && strncmp(ours, listed, cmp) == 0) return 1;
        snprintf(why, size, "%s = %s, listed %s", f->name, ours, listed);
        return 0;
    }
    if (etl_field_uint(f, &v) == ETL_OK) {
        unsigned bits = f->size * 8;
        uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
        if (strcmp(listed, "True") == 0 || strcmp(listed, "False") == 0) {
            if ((v != 0) == (listed[0] == 'T')) return 1;
            snprintf(why, size, "%s = %" PRIu64 ", listed %s", f->name, v, listed);
            return 0;
        }
        if (baseline_number(listed, &want)) {
            if ((v & mask) == (want & mask)) return 1;
            snprintf(why, size, "%s = %" PRIu64 ", listed %s", f->name, v, listed);
            return 0;
        }
        if (f->map) {
            int exact = 0;
            etl_map_format(f->map, v, ours, sizeof ours, &exact);
            for (char *s = ours; (s = strchr(s, '|')); s++) { /* TraceEvent joins bit names with ", " */
                memmove(s + 2, s + 1, strlen(s + 1) + 1);
                s[0] = ',';
                s[1] = ' ';
            }
            if (exact && baseline_text_equal(ours, listed)) return 1;
            snprintf(why, size, "%s = %" PRIu64 " (%s), listed %s", f->name, v, ours, listed);
            return 0;
        }
        snprintf(why, size, "%s = %" PRIu64 ", listed %s (not a number)", f->name, v, listed);
        return 0;
    }
    etl_field_format(f, ours, sizeof ours);
    if (baseline_text_equal(ours, listed)) return 1;
    snprintf(why, size, "%s = \"%s\", listed \"%s\"", f->name, ours, listed);
    return 0;
}
