/* SPDX-License-Identifier: MIT */
/* etlprof: a CPU profile of ETL traces' samples and stacks, with function names, as collapsed stacks, pprof, speedscope or an SVG flame graph, or a trace's timeline for Chrome (doc/etlprof.1); the profile and the timeline are the library's (etl_profile_*, etl_chrome_write, etl/output.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "etl.h"

/* Exit codes (doc/etlprof.1). */
#define EXIT_DAMAGED 1
#define EXIT_TROUBLE 2

static const char usage_text[] =
    "Usage: etlprof [OPTION]... TRACE...\n"
    "Write a CPU profile of the samples (SampledProfile, PMC) of Event Trace Log files\n"
    "(.etl, .etl.gz): each sample with its stack, every frame named by its function\n"
    "(ELF symbols and DWARF, kallsyms, PDBs, .NET methods), else image+0xOFFSET, else\n"
    "its address.\n"
    "\n"
    "  -F, --format=FMT         folded (default): FlameGraph's collapsed stacks, the\n"
    "                           process as the root frame (\"hot3;main;hot_a 71\");\n"
    "                           pprof: pprof's profile.proto, gzip-compressed;\n"
    "                           speedscope: speedscope's JSON, a profile per thread;\n"
    "                           svg: a flame graph to open in a browser;\n"
    "                           chrome: the timeline of one trace in Chrome's\n"
    "                           trace-event JSON (threads running, ready, waiting;\n"
    "                           samples; user events), for Perfetto or chrome://tracing\n"
    "  -o, --output=FILE        write to FILE (default: standard output)\n"
    "  -f, --force              replace FILE if it exists\n"
    "  -p, --process=NAME|PID   only this process's samples (a name its Process events\n"
    "                           give, without case, or a process id); repeatable\n"
    "  -t, --thread=TID         only this thread's samples; repeatable\n"
    "  -T, --time-range=A,B     only the samples from A up to B seconds after each\n"
    "                           trace's start (either end may be left out)\n"
    "  -s, --symbols=DIR        look for symbol files in DIR too (build-id trees,\n"
    "                           debuginfod's cache, symstore's name.pdb/GUIDAGE/);\n"
    "                           repeatable, searched in order\n"
    "  -m, --manifest=PATH      with --format=chrome: decode user events with the\n"
    "                           instrumentation manifest PATH, or those of directory PATH\n"
    "                           (repeatable; ETL_MANIFEST_PATH and the manifests installed\n"
    "                           with libetl are always read)\n"
    "  -v, --verbose            say on stderr how many samples, stacks and names were\n"
    "                           found (chrome: how many slices, samples and events)\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the versions of etlprof, libetl and zlib and exit\n"
    "\n"
    "Exit status: 0 the profile was written; 1 an input had damaged parts (stderr names\n"
    "the file and offset; the profile holds everything readable); 2 trouble: bad usage,\n"
    "an input that cannot be read, or the output cannot be written.\n";

enum format { FORMAT_FOLDED, FORMAT_PPROF, FORMAT_SPEEDSCOPE, FORMAT_SVG, FORMAT_CHROME };
static const char *const format_names[] = { "folded", "pprof", "speedscope", "svg", "chrome" };

struct options {
    enum format format;
    const char *output;
    int force, verbose;
    const char **processes;
    uint32_t *threads;
    const char **symbols;
    char **manifests;
    size_t nprocesses, nthreads, nsymbols, nmanifests;
    int has_range;
    int64_t from_ns, to_ns;
};

static int push(void **list, size_t *n, size_t size, const void *item)
{
    void *p = realloc(*list, (*n + 1) * size);
    if (!p) return -1;
    memcpy((char *)p + *n * size, item, size);
    *list = p;
    (*n)++;
    return 0;
}

static int parse_range(struct options *o, const char *text)
{
    o->from_ns = 0;
    o->to_ns = INT64_MAX;
    if (tool_parse_time_range(text, &o->from_ns, &o->to_ns) == 0) {
        o->has_range = 1;
        return 0;
    }
    fprintf(stderr, "etlprof: --time-range needs A,B: seconds after each trace's start (1.5,3), not '%s'\n", text);
    return -1;
}

static int write_profile(const struct options *o, const etl_profile *prof)
{
    FILE *f = stdout;
    int rc;

    if (o->output && !(f = fopen(o->output, "wb"))) {
        fprintf(stderr, "etlprof: %s: %s\n", o->output, strerror(errno));
        return EXIT_TROUBLE;
    }
    switch (o->format) {
    case FORMAT_PPROF: rc = etl_profile_write_pprof(f, prof); break;
    case FORMAT_SPEEDSCOPE: rc = etl_profile_write_speedscope(f, prof); break;
    case FORMAT_SVG: rc = etl_profile_write_svg(f, prof, NULL); break;
    default: rc = etl_profile_write_folded(f, prof); break;
    }
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) rc = ETL_FATAL;
    if (rc == ETL_FAILED) {
        fputs("etlprof: out of memory\n", stderr);
        return EXIT_TROUBLE;
    }
    if (rc != ETL_OK) {
        fprintf(stderr, "etlprof: %s: write error: %s\n", o->output ? o->output : "standard output", strerror(errno));
        return EXIT_TROUBLE;
    }
    return 0;
}

/* --format=chrome: the timeline of one trace, with the filters as the profile's. */
static int run_chrome(const struct options *o, const char *path)
{
    etl_chrome_options co;
    etl_chrome_stats cs;
    etl_reader *r = NULL;
    etl_decoder *dec = NULL;
    uint32_t *pids = NULL;
    const char **names = NULL;
    unsigned npids = 0, nnames = 0;
    FILE *f = stdout;
    int rc, status = 0;

    if (!(dec = tool_decoder_open("etlprof", o->manifests, (unsigned)o->nmanifests))) return EXIT_TROUBLE;
    etl_chrome_options_init(&co);
    co.decoder = dec;
    if (o->nprocesses) {
        pids = malloc(o->nprocesses * sizeof *pids);
        names = malloc(o->nprocesses * sizeof *names);
        if (!pids || !names) {
            fputs("etlprof: out of memory\n", stderr);
            status = EXIT_TROUBLE;
            goto out;
        }
        for (size_t i = 0; i < o->nprocesses; i++) {
            uint32_t pid;
            if (tool_parse_u32(o->processes[i], UINT32_MAX, &pid) == 0) pids[npids++] = pid;
            else names[nnames++] = o->processes[i];
        }
    }
    co.pids = pids;
    co.npids = npids;
    co.process_names = names;
    co.nprocess_names = nnames;
    co.tids = o->threads;
    co.ntids = (unsigned)o->nthreads;
    rc = etl_reader_open_path(&r, path, NULL);
    if (rc != ETL_OK && rc != ETL_WARN) {
        fprintf(stderr, "etlprof: %s\n", r ? etl_reader_error(r) : "out of memory");
        status = EXIT_TROUBLE;
        goto out;
    }
    if (rc == ETL_WARN) {
        fprintf(stderr, "etlprof: %s\n", etl_reader_error(r));
        status = EXIT_DAMAGED;
    }
    if (o->has_range) {
        int64_t start = etl_reader_time_ns(r, etl_reader_info(r)->clock.start_timestamp);
        co.from_ns = start + o->from_ns;
        co.to_ns = o->to_ns > INT64_MAX - start ? INT64_MAX : start + o->to_ns;
    }
    if (o->output && !(f = fopen(o->output, "wb"))) {
        fprintf(stderr, "etlprof: %s: %s\n", o->output, strerror(errno));
        status = EXIT_TROUBLE;
        goto out;
    }
    rc = etl_chrome_write(f, r, &co, &cs);
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) rc = ETL_FATAL;
    if (rc == ETL_FAILED) {
        fputs("etlprof: out of memory\n", stderr);
        status = EXIT_TROUBLE;
    }
    else if (rc != ETL_OK) {
        fprintf(stderr, "etlprof: %s\n", etl_reader_error(r)[0] ? etl_reader_error(r) : "write error");
        status = EXIT_TROUBLE;
    }
    else if (etl_reader_warnings(r) && !status) {
        status = EXIT_DAMAGED;
    }
    if (o->verbose && rc == ETL_OK)
        fprintf(stderr,
                "etlprof: %" PRIu64 " trace events: %" PRIu64 " thread state slices, %" PRIu64 " samples, %" PRIu64
                " user events as instants, %" PRIu64 " as slices (%" PRIu64 " stops and %" PRIu64
                " starts unmatched); %" PRIu64 " threads of no known process\n",
                cs.trace_events, cs.slices, cs.samples, cs.instants, cs.spans, cs.unmatched_stops, cs.unmatched_starts,
                cs.unknown_threads);
out:
    etl_reader_close(r);
    etl_decoder_close(dec);
    free(pids);
    free(names);
    return status;
}

static int run(const struct options *o, char **paths, int npaths)
{
    etl_symbolizer_options so = { 0, o->symbols, o->nsymbols, 0, NULL };
    etl_profile_options po;
    etl_profile *prof = NULL;
    etl_profile_stats st;
    int status = 0;

    memset(&po, 0, sizeof po);
    po.processes = o->processes;
    po.nprocesses = o->nprocesses;
    po.threads = o->threads;
    po.nthreads = o->nthreads;
    po.has_time_range = o->has_range;
    po.time_from_ns = o->from_ns;
    po.time_to_ns = o->to_ns;
    po.symbols = &so;
    if (etl_profile_new(&prof, &po) != ETL_OK) {
        fputs("etlprof: out of memory\n", stderr);
        return EXIT_TROUBLE;
    }
    for (int i = 0; i < npaths; i++) {
        etl_reader *r = NULL;
        int rc = etl_reader_open_path(&r, paths[i], NULL);
        if (rc != ETL_OK && rc != ETL_WARN) {
            fprintf(stderr, "etlprof: %s\n", r ? etl_reader_error(r) : "out of memory");
            etl_reader_close(r);
            status = EXIT_TROUBLE;
            continue;
        }
        if (rc == ETL_WARN) {
            fprintf(stderr, "etlprof: %s\n", etl_reader_error(r));
            status = status ? status : EXIT_DAMAGED;
        }
        rc = etl_profile_add_trace(prof, r);
        if (rc == ETL_WARN) {
            fprintf(stderr, "etlprof: %s\n", etl_profile_error(prof));
            status = status ? status : EXIT_DAMAGED;
        }
        else if (rc != ETL_OK) {
            fprintf(stderr, "etlprof: %s: %s\n", paths[i], etl_profile_error(prof));
            status = EXIT_TROUBLE;
        }
        etl_reader_close(r);
    }
    if (status != EXIT_TROUBLE) {
        int w = write_profile(o, prof);
        if (w) status = w;
    }
    if (o->verbose) {
        etl_profile_stats_get(prof, &st);
        fprintf(stderr,
                "etlprof: %" PRIu64 " sample events, %" PRIu64 " samples in the profile (%" PRIu64
                " with a stack), %zu distinct stacks; %" PRIu64 " of %" PRIu64 " addresses named\n",
                st.sample_events, st.samples, st.samples_with_stack, st.stacks, st.frames_named, st.frames);
        fprintf(stderr, "etlprof: symbol lookups %" PRIu64 ", %" PRIu64 " from the cache, %" PRIu64 " named a function\n",
                st.symbol_lookups, st.symbol_cache_hits, st.symbol_resolved);
    }
    etl_profile_free(prof);
    return status;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'F' },
        { "output", required_argument, NULL, 'o' },
        { "force", no_argument, NULL, 'f' },
        { "process", required_argument, NULL, 'p' },
        { "thread", required_argument, NULL, 't' },
        { "time-range", required_argument, NULL, 'T' },
        { "symbols", required_argument, NULL, 's' },
        { "manifest", required_argument, NULL, 'm' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    struct options o;
    int c, status;

    memset(&o, 0, sizeof o);
    while ((c = tool_getopt_long("etlprof", argc, argv, "F:o:fp:t:T:s:m:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'F': {
            size_t k;
            for (k = 0; k < sizeof format_names / sizeof format_names[0]; k++)
                if (strcmp(optarg, format_names[k]) == 0) break;
            if (k == sizeof format_names / sizeof format_names[0]) {
                fprintf(stderr, "etlprof: --format is folded, pprof, speedscope, svg or chrome, not '%s'\n", optarg);
                goto usage;
            }
            o.format = (enum format)k;
            break;
        }
        case 'o': o.output = optarg; break;
        case 'f': o.force = 1; break;
        case 'p':
            if (push((void **)&o.processes, &o.nprocesses, sizeof *o.processes, &optarg) != 0) goto nomem;
            break;
        case 't': {
            uint32_t tid;
            if (tool_parse_u32(optarg, UINT32_MAX, &tid) != 0) {
                fprintf(stderr, "etlprof: --thread needs a thread id, not '%s'\n", optarg);
                goto usage;
            }
            if (push((void **)&o.threads, &o.nthreads, sizeof *o.threads, &tid) != 0) goto nomem;
            break;
        }
        case 'T':
            if (parse_range(&o, optarg) != 0) goto usage;
            break;
        case 's':
            if (push((void **)&o.symbols, &o.nsymbols, sizeof *o.symbols, &optarg) != 0) goto nomem;
            break;
        case 'm':
            if (push((void **)&o.manifests, &o.nmanifests, sizeof *o.manifests, &optarg) != 0) goto nomem;
            break;
        case 'v': o.verbose = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            status = 0;
            goto out;
        case 'V':
            printf("etlprof %s (%s)\n", etl_version(), etl_version_details());
            status = 0;
            goto out;
        default: goto usage;
        }
    }
    if (optind >= argc) {
        fputs("etlprof: a trace to read is needed\n", stderr);
        goto usage;
    }
    if (o.output && tool_output_check("etlprof", o.output, o.force) != 0) {
        status = EXIT_TROUBLE;
        goto out;
    }
    if (o.format == FORMAT_CHROME) {
        if (argc - optind != 1) {
            fputs("etlprof: --format=chrome takes one trace\n", stderr);
            goto usage;
        }
        status = run_chrome(&o, argv[optind]);
    }
    else status = run(&o, argv + optind, argc - optind);
    goto out;
nomem:
    fputs("etlprof: out of memory\n", stderr);
    status = EXIT_TROUBLE;
    goto out;
usage:
    fputs("Try 'etlprof --help'.\n", stderr);
    status = EXIT_TROUBLE;
out:
    free(o.processes);
    free(o.threads);
    free(o.symbols);
    free(o.manifests);
    return status;
}
