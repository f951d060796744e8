/* SPDX-License-Identifier: MIT */
/* Command-line values the tools share (tools/cmdline.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int tool_parse_time_range(const char *text, int64_t *from_ns, int64_t *to_ns)
{
    const char *comma = strchr(text, ',');
    char a[64];
    int64_t from = *from_ns, to = *to_ns;

    if (!comma || strchr(comma + 1, ',') || (size_t)(comma - text) >= sizeof a) return -1;
    memcpy(a, text, (size_t)(comma - text));
    a[comma - text] = '\0';
    if ((a[0] && tool_parse_seconds(a, &from) != 0) || (comma[1] && tool_parse_seconds(comma + 1, &to) != 0))
        return -1;
    if (from > to) return -1;
    *from_ns = from;
    *to_ns = to;
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

int tool_getopt_long(const char *prog, int argc, char **argv, const char *shortopts,
                     const struct option *longopts, int *longindex)
{
    int idx = -1, c = getopt_long(argc, argv, shortopts, longopts, &idx);
    const char *given;
    size_t len, n;

    if (longindex) *longindex = idx;
    if (c == -1 || c == '?' || c == ':' || idx < 0 || optind < 1) return c;
    /* The element getopt took the option from: the last one, or the one before it when the
       option's value was the next element (--output FILE). */
    given = argv[optind - 1];
    if (optarg && optarg == argv[optind - 1] && optind >= 2) given = argv[optind - 2];
    if (strncmp(given, "--", 2) != 0) return c;
    len = strcspn(given + 2, "=");
    n = strlen(longopts[idx].name);
    if (len == n && strncmp(given + 2, longopts[idx].name, n) == 0) return c;
    fprintf(stderr, "%s: option '--%.*s' must be given in full (--%s)\n", prog, (int)len, given + 2,
            longopts[idx].name);
    return '?';
}

int tool_output_check(const char *prog, const char *path, int force)
{
    struct stat st;

    if (force || lstat(path, &st) != 0) return 0;
    fprintf(stderr, "%s: %s exists (--force replaces it); nothing was written\n", prog, path);
    return -1;
}

static void decoder_warning(void *arg, const char *message)
{
    fprintf(stderr, "%s: warning: %s\n", (const char *)arg, message);
}

etl_decoder *tool_decoder_open(const char *prog, char *const *manifests, unsigned n)
{
    etl_decoder_options o = { 0, decoder_warning, (void *)prog };
    etl_decoder *d;
    int rc = etl_decoder_open(&d, &o);

    if (rc == ETL_FATAL) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return NULL;
    }
    if (rc == ETL_WARN) fprintf(stderr, "%s: warning: %s\n", prog, etl_decoder_error(d));
    for (unsigned i = 0; i < n; i++) {
        if (etl_decoder_add_manifest(d, manifests[i]) != ETL_OK) {
            fprintf(stderr, "%s: %s\n", prog, etl_decoder_error(d));
            etl_decoder_close(d);
            return NULL;
        }
    }
    return d;
}

int tool_symbols_check(const char *prog, char *const *dirs, unsigned n)
{
    struct stat st;

    for (unsigned i = 0; i < n; i++) {
        if (stat(dirs[i], &st) != 0) {
            fprintf(stderr, "%s: --symbols %s: %s\n", prog, dirs[i], strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: --symbols %s: not a directory\n", prog, dirs[i]);
            return -1;
        }
    }
    return 0;
}

etl_symbolizer *tool_symbolizer_open(const char *prog, char *const *dirs, unsigned n)
{
    etl_symbolizer_options o;
    etl_symbolizer *s;

    if (tool_symbols_check(prog, dirs, n) != 0) return NULL;
    memset(&o, 0, sizeof o);
    o.paths = (const char *const *)dirs;
    o.npaths = n;
    if (etl_symbolizer_open(&s, &o) != ETL_OK) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return NULL;
    }
    return s;
}
