/* SPDX-License-Identifier: MIT */
/* etlmerge: merge ETL files (kernel and user sessions) into one, on one PerfCounter clock. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "etl.h"
#include "interrupt.h"

/* Exit codes (doc/etlmerge.1). */
#define EXIT_DAMAGED 1 /* written; an input had damaged parts, which were left out */
#define EXIT_ERROR   2 /* nothing written: bad usage, an input could not be read, or a write failed */

static const char usage_text[] =
    "Usage: etlmerge -o OUT.etl [OPTION]... IN.etl...\n"
    "Merge Event Trace Log files (.etl, .etl.gz; kernel and user sessions) into one\n"
    "ETL file whose events are in time order on one PerfCounter clock.\n"
    "\n"
    "  -o, --output=FILE      the file to write (required); written under a temporary\n"
    "                         name beside it and renamed when complete; an existing\n"
    "                         FILE is refused unless --force\n"
    "  -f, --force            replace an existing output file\n"
    "  -c, --compress         write XPRESS-compressed buffers (COMPRESSED_MODE)\n"
    "  -t, --time-range=A,B   keep only events from time A to time B, both included;\n"
    "                         each is a UTC time (2024-01-31T12:34:56.5Z) or seconds\n"
    "                         after the earliest input's start (1.25); either may be\n"
    "                         left out (A, or ,B). The inputs' header events are kept\n"
    "  -q, --quiet            do not report damage or warnings on stderr (the exit\n"
    "                         status still tells)\n"
    "  -v, --verbose          tell on stderr how each input is placed on the clock\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the versions of etlmerge, libetl and zlib and exit\n"
    "\n"
    "The output clock is PerfCounter at the highest PerfFreq of the PerfCounter\n"
    "inputs (10 MHz if there is none). Inputs of one clock, frequency and boot keep\n"
    "their exact raw-clock differences, on the anchor of the one that started first;\n"
    "the others keep their absolute times to within half an output tick.\n"
    "\n"
    "Exit status: 0 merged; 1 merged, but an input had damaged parts (stderr says\n"
    "which file and offset; what was readable is in the output); 2 nothing written:\n"
    "bad usage, the output exists (without --force), an input could not be read, or\n"
    "the output could not be written.\n";

struct options {
    const char *output;
    int compress;
    int force;
    int quiet;
    int verbose;
    const char *range;
};

static void print_message(void *arg, const etl_merge_message *msg)
{
    const struct options *o = arg;

    if (o->quiet) return;
    if (!msg->path) fprintf(stderr, "etlmerge: %s\n", msg->text);
    else if (!msg->damage) fprintf(stderr, "etlmerge: %s: warning: %s\n", msg->path, msg->text);
    else if (msg->offset >= 0) fprintf(stderr, "etlmerge: %s: offset %lld: %s\n", msg->path, (long long)msg->offset, msg->text);
    else fprintf(stderr, "etlmerge: %s: %s\n", msg->path, msg->text);
}

/* One end of --time-range: empty (open), a UTC time, or seconds after start_ns. */
static int parse_end(const char *s, int64_t start_ns, int64_t open_value, int64_t *ns)
{
    int64_t rel;

    if (*s == '\0') {
        *ns = open_value;
        return 0;
    }
    if (etl_time_parse(s, ns) == ETL_OK) return 0;
    if (tool_parse_seconds(s, &rel) != 0) return -1;
    *ns = start_ns > INT64_MAX - rel ? INT64_MAX : start_ns + rel;
    return 0;
}

static int apply_range(etl_merge *m, const char *range)
{
    const char *comma = strchr(range, ',');
    char *a;
    int64_t from, to, start = etl_time_from_filetime(etl_merge_clock(m)->start_time);
    int rc;

    if (!comma || strchr(comma + 1, ',')) {
        fprintf(stderr, "etlmerge: --time-range needs A,B, not '%s'\nTry 'etlmerge --help'.\n", range);
        return -1;
    }
    a = strndup(range, (size_t)(comma - range));
    if (!a) {
        fprintf(stderr, "etlmerge: out of memory\n");
        return -1;
    }
    rc = parse_end(a, start, INT64_MIN, &from) == 0 && parse_end(comma + 1, start, INT64_MAX, &to) == 0;
    free(a);
    if (!rc) {
        fprintf(stderr, "etlmerge: --time-range: '%s' is not a UTC time (2024-01-31T12:34:56.5Z) or seconds "
                "after the start\n", range);
        return -1;
    }
    if (from > to) {
        fprintf(stderr, "etlmerge: --time-range: '%s' ends before it begins\n", range);
        return -1;
    }
    etl_merge_set_time_range(m, from, to);
    return 0;
}

/* A signed duration in seconds, to the nanosecond: "+46.900000000 s". */
static const char *seconds(int64_t ns, char *out, size_t size)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

    snprintf(out, size, "%c%llu.%09llu s", ns < 0 ? '-' : '+', (unsigned long long)(a / 1000000000u),
             (unsigned long long)(a % 1000000000u));
    return out;
}

static void describe(const etl_merge *m)
{
    const etl_clock *c = etl_merge_clock(m);
    char t[40];

    fprintf(stderr, "etlmerge: output clock: perfcounter, %lld Hz, start %s\n", (long long)c->perf_freq,
            etl_time_format(etl_time_from_filetime(c->start_time), t, sizeof t));
    for (unsigned i = 0; i < etl_merge_input_count(m); i++) {
        etl_merge_input_info in, ref;
        char s[48];
        etl_merge_input_get(m, i, &in);
        fprintf(stderr, "etlmerge: %s: %s, %lld Hz, start %s; ", in.path, etl_clock_type_name(in.info->clock.type),
                (long long)etl_clock_frequency(&in.info->clock),
                etl_time_format(etl_time_from_filetime(in.info->clock.start_time), t, sizeof t));
        if (in.clock_source != i) {
            etl_merge_input_get(m, in.clock_source, &ref);
            fprintf(stderr, "same clock source as %s, whose anchor it takes (recorded together): its times move by %s "
                    "from its own header's; ", ref.path, seconds(in.anchor_offset_ns, s, sizeof s));
        } else if (in.same_clock_as != i) {
            etl_merge_input_get(m, in.same_clock_as, &ref);
            fprintf(stderr, "same clock source as %s but recorded apart: placed by its own header (that one's anchor "
                    "would move its times by %s); ", ref.path, seconds(in.anchor_offset_ns, s, sizeof s));
        } else
            fprintf(stderr, "placed by its own header; ");
        if (in.map.same_frequency)
            fprintf(stderr, "timestamps shifted by %lld ticks\n", (long long)in.map.shift);
        else
            fprintf(stderr, "timestamps converted by absolute time\n");
    }
}

static int merge(const struct options *o, const char *const *inputs, unsigned n)
{
    etl_merge_options mo;
    etl_merge *m = NULL;
    etl_merge_stats st;
    int rc;

    memset(&mo, 0, sizeof mo);
    mo.compress = o->compress;
    mo.on_message = print_message;
    mo.on_message_arg = (void *)o;
    mo.cancel = &tool_interrupted;
    tool_catch_signals();
    rc = etl_merge_open(&m, inputs, n, &mo);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etlmerge: %s\n", etl_merge_error(m));
        etl_merge_close(m);
        return EXIT_ERROR;
    }
    if (o->range && apply_range(m, o->range) != 0) {
        etl_merge_close(m);
        return EXIT_ERROR;
    }
    if (o->verbose) describe(m);
    rc = etl_merge_write(m, o->output);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etlmerge: %s\n", etl_merge_error(m));
        etl_merge_close(m);
        return EXIT_ERROR;
    }
    etl_merge_stats_get(m, &st);
    if (o->verbose)
        fprintf(stderr, "etlmerge: %s: %llu events of %llu, %u buffers, %llu bytes\n", o->output,
                (unsigned long long)(st.events_merged - st.events_dropped), (unsigned long long)st.events_read,
                st.buffers_written, (unsigned long long)st.bytes_written);
    etl_merge_close(m);
    return rc == ETL_WARN ? EXIT_DAMAGED : 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },     { "compress", no_argument, NULL, 'c' },
        { "force", no_argument, NULL, 'f' },
        { "time-range", required_argument, NULL, 't' }, { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },          { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },          { NULL, 0, NULL, 0 },
    };
    struct options o;
    int c;

    memset(&o, 0, sizeof o);
    while ((c = tool_getopt_long("etlmerge", argc, argv, "o:cft:qvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case 'c': o.compress = 1; break;
        case 'f': o.force = 1; break;
        case 't': o.range = optarg; break;
        case 'q': o.quiet = 1; break;
        case 'v': o.verbose = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("etlmerge %s (%s)\n", etl_version(), etl_version_details()); return 0;
        default: fputs("Try 'etlmerge --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (!o.output) {
        fputs("etlmerge: no output file (-o OUT.etl)\nTry 'etlmerge --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (optind >= argc) {
        fputs("etlmerge: no input file\nTry 'etlmerge --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (tool_output_check("etlmerge", o.output, o.force) != 0) return EXIT_ERROR;
    return merge(&o, (const char *const *)(argv + optind), (unsigned)(argc - optind));
}
