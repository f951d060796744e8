/* SPDX-License-Identifier: MIT */
/* etlprof: a CPU profile of ETL traces' samples and stacks, with function names, as collapsed stacks or pprof (doc/etlprof.1); the profile is the library's (etl_profile_*, etl/output.h). */
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
    "                           pprof: pprof's profile.proto, gzip-compressed\n"
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
    "  -v, --verbose            say on stderr how many samples, stacks and names were found\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the versions of etlprof, libetl and zlib and exit\n"
    "\n"
    "Exit status: 0 the profile was written; 1 an input had damaged parts (stderr names\n"
    "the file and offset; the profile holds everything readable); 2 trouble: bad usage,\n"
    "an input that cannot be read, or the output cannot be written.\n";

enum format { FORMAT_FOLDED, FORMAT_PPROF };

struct options {
    enum format format;
    const char *output;
    int force, verbose;
    const char **processes;
    uint32_t *threads;
    const char **symbols;
    size_t nprocesses, nthreads, nsymbols;
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
    const char *comma = strchr(text, ',');
    char *a;
    int ok;

    o->from_ns = 0;
    o->to_ns = INT64_MAX;
    if (!comma || strchr(comma + 1, ',')) goto bad;
    a = strndup(text, (size_t)(comma - text));
    if (!a) return -1;
    ok = (!*a || tool_parse_seconds(a, &o->from_ns) == 0) && (!comma[1] || tool_parse_seconds(comma + 1, &o->to_ns) == 0);
    free(a);
    if (!ok || o->from_ns > o->to_ns) goto bad;
    o->has_range = 1;
    return 0;
bad:
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
    rc = o->format == FORMAT_PPROF ? etl_profile_write_pprof(f, prof) : etl_profile_write_folded(f, prof);
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
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    struct options o;
    int c, status;

    memset(&o, 0, sizeof o);
    while ((c = tool_getopt_long("etlprof", argc, argv, "F:o:fp:t:T:s:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'F':
            if (strcmp(optarg, "folded") == 0) o.format = FORMAT_FOLDED;
            else if (strcmp(optarg, "pprof") == 0) o.format = FORMAT_PPROF;
            else {
                fprintf(stderr, "etlprof: --format is folded or pprof, not '%s'\n", optarg);
                goto usage;
            }
            break;
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
    status = run(&o, argv + optind, argc - optind);
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
    return status;
}
