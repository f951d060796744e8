/* SPDX-License-Identifier: MIT */
/* etldiff: compare two ETL files event by event after normalization, or their functions' shares of the samples (--stacks) (doc/etldiff.1); the comparisons are the library's (etl_diff_*, etl_profile_diff_*, etl/output.h). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "etl.h"

/* Exit codes, as diff's (doc/etldiff.1). */
#define EXIT_SAME    0
#define EXIT_DIFFER  1
#define EXIT_TROUBLE 2

static const char usage_text[] =
    "Usage: etldiff [OPTION]... A.etl B.etl\n"
    "  or:  etldiff --stacks[=self|total] [OPTION]... A.etl B.etl\n"
    "Compare two Event Trace Log files (.etl, .etl.gz) event by event after\n"
    "normalization (timestamps and processors ignored, the sessions' header events left\n"
    "out; decoded events compared by their fields), thread by thread: each thread's events in time order against those of the\n"
    "thread of the other trace that does the same, whatever their ids and however the\n"
    "threads interleave. With --stacks: each function's share of the CPU samples, A\n"
    "against B.\n"
    "\n"
    "  -i, --ignore=FIELDS      ignore these fields too: ts, pid, tid, cpu, payload\n"
    "                           (comma-separated)\n"
    "  -c, --compare=FIELDS     compare these after all: ts (time since the first\n"
    "                           compared event), cpu; pid, tid as raw values\n"
    "      --ignore-provider=P  leave out provider P's events (a GUID or a name: Process,\n"
    "                           a manifest's, a TraceLogging provider's); repeatable\n"
    "      --ignore-event=P:ID  leave out event ID of provider P (the event id of\n"
    "                           manifest events, the opcode of others); repeatable\n"
    "  -p, --provider=P         compare only provider P's events; repeatable\n"
    "      --ignore-field=NAME  leave field NAME of decoded events out (a field that\n"
    "                           differs run to run); repeatable\n"
    "  -m, --manifest=PATH      decode events with the instrumentation manifest PATH, or\n"
    "                           those of directory PATH (repeatable; ETL_MANIFEST_PATH and\n"
    "                           the manifests installed with libetl are always read)\n"
    "  -t, --time-range=A,B     only the events from A to B seconds after each trace's\n"
    "                           first compared event (either end may be left out);\n"
    "                           with --stacks, the samples, from each trace's start\n"
    "  -u, --unordered          compare as multisets: order does not matter\n"
    "      --global-order       compare all events in one time order, across threads\n"
    "                           (pids and tids renumbered in first-seen order)\n"
    "      --process=NAME|PID   compare only the events of this process (a name its\n"
    "                           Process events give, or a process id), or with --stacks\n"
    "                           its samples; repeatable\n"
    "      --process-tree=NAME|PID  the same, with the processes it started, directly\n"
    "                           or not; repeatable\n"
    "      --counts             compare only the number of events per provider, id\n"
    "                           and opcode\n"
    "      --tolerance=T        with --counts: the difference allowed per row, absolute\n"
    "                           (10) or relative to A's count (5%); default 0;\n"
    "                           with --stacks: the percentage points a function's share\n"
    "                           may move (2.5); default 1\n"
    "      --stacks[=MEASURE]   compare each function's share of the samples (with their\n"
    "                           stacks): self (default), the samples that hit it; total,\n"
    "                           the samples with it on the stack (once per sample)\n"
    "  -s, --symbols=DIR        with --stacks: look for symbol files in DIR too, as\n"
    "                           etlprof does; repeatable\n"
    "      --all-events         keep the sessions' header events (EventTrace group)\n"
    "  -n, --max-diffs=N        show at most N differing events, or functions with\n"
    "                           --stacks (default 20; 0: only the summary)\n"
    "  -U, --context=N          events of context around each difference (default 3)\n"
    "  -f, --format=FMT         text (default) or json\n"
    "  -q, --quiet              print nothing; the exit status tells\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the versions of etldiff, libetl and zlib and exit\n"
    "\n"
    "Exit status: 0 the traces match (--stacks: no share moved more than the\n"
    "tolerance); 1 they differ; 2 trouble: bad usage, an input that cannot be read,\n"
    "damage in an input (stderr names the file and offset; what is readable is still\n"
    "compared and printed), or with --stacks an input with no samples.\n";

struct options {
    etl_diff_options diff;
    int quiet, json;
    /* --stacks: the measure; --symbols; --process as given; the first option that only the
       event comparison takes (refused with --stacks) */
    int stacks, tolerance_given;
    etl_profile_measure measure;
    const char **symbols, **process_text;
    size_t nsymbols, nprocess_text;
    const char *events_only;
    /* The lists diff.normalize and diff.processes point at, grown as the options come. */
    etl_guid *only, *skip;
    etl_normalize_event_key *skip_events;
    etl_diff_process *processes;
    /* argv's strings: --provider and --ignore-provider as given, --ignore-field, --manifest;
       and the provider names the decoder resolves at the end */
    char **only_text, **skip_text, **fields, **manifests, **only_names, **skip_names;
    unsigned nonly_text, nskip_text, nfields, nmanifests;
};

static void options_free(struct options *o)
{
    free(o->only);
    free(o->skip);
    free(o->skip_events);
    free(o->processes);
    free(o->only_text);
    free(o->skip_text);
    free(o->fields);
    free(o->manifests);
    free(o->only_names);
    free(o->skip_names);
    free(o->symbols);
    free(o->process_text);
    etl_decoder_close(o->diff.normalize.decoder);
}

/* ------------------------------------------------------------------ options */

/* A provider as --provider and --ignore-provider give it: a GUID or a name libetl or the
   decoder's manifests know go to the GUID list; another name (a TraceLogging or EventSource
   provider's, known only from its events) to the names. -1 without memory. */
static int add_provider(etl_guid **list, unsigned *n, char **names, unsigned *nnames, const char *text,
                        const etl_decoder *dec)
{
    etl_guid g, *p;

    if (etl_guid_parse_provider(text, &g) != ETL_OK && etl_decoder_provider_guid(dec, text, &g) != ETL_OK) {
        names[(*nnames)++] = (char *)text;
        return 0;
    }
    p = realloc(*list, (*n + 1) * sizeof *p);
    if (!p) return -1;
    p[(*n)++] = g;
    *list = p;
    return 0;
}

/* The provider lists, once the decoder has its manifests. 0, or -1 without memory. */
static int resolve_providers(struct options *o)
{
    etl_normalize_options *norm = &o->diff.normalize;

    o->only_names = calloc(o->nonly_text + 1, sizeof *o->only_names);
    o->skip_names = calloc(o->nskip_text + 1, sizeof *o->skip_names);
    if (!o->only_names || !o->skip_names) return -1;
    for (unsigned i = 0; i < o->nonly_text; i++)
        if (add_provider(&o->only, &norm->nonly, o->only_names, &norm->nonly_names, o->only_text[i], norm->decoder) != 0)
            return -1;
    for (unsigned i = 0; i < o->nskip_text; i++)
        if (add_provider(&o->skip, &norm->nskip, o->skip_names, &norm->nskip_names, o->skip_text[i], norm->decoder) != 0)
            return -1;
    norm->only = o->only;
    norm->skip = o->skip;
    norm->only_names = (const char *const *)o->only_names;
    norm->skip_names = (const char *const *)o->skip_names;
    return 0;
}

static int add_event(struct options *o, const char *text)
{
    const char *colon = strrchr(text, ':');
    etl_normalize_event_key *p;
    char *prov, *end;
    unsigned long id;
    etl_guid g;

    if (!colon) goto bad;
    errno = 0;
    id = strtoul(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || id > 0xFFFF) goto bad;
    prov = strndup(text, (size_t)(colon - text));
    if (!prov) return -1;
    if (etl_guid_parse_provider(prov, &g) != ETL_OK) {
        free(prov);
        goto bad;
    }
    free(prov);
    p = realloc(o->skip_events, (o->diff.normalize.nskip_events + 1) * sizeof *p);
    if (!p) return -1;
    p[o->diff.normalize.nskip_events].provider = g;
    p[o->diff.normalize.nskip_events].id = (uint16_t)id;
    o->diff.normalize.nskip_events++;
    o->skip_events = p;
    o->diff.normalize.skip_events = p;
    return 0;
bad:
    fprintf(stderr, "etldiff: --ignore-event needs PROVIDER:ID (a GUID or known name, and a number), not '%s'\n", text);
    return -1;
}

/* --process, --process-tree: a process id (digits only), else a name (argv's string, kept). */
static int add_process(struct options *o, const char *text, int tree)
{
    etl_diff_process *p, q = { NULL, 0, tree };
    size_t digits = strspn(text, "0123456789");

    if (!*text) {
        fprintf(stderr, "etldiff: --%s needs a process name or id\n", tree ? "process-tree" : "process");
        return -1;
    }
    if (!text[digits] && tool_parse_u32(text, UINT32_MAX - 1, &q.pid) != 0) {
        fprintf(stderr, "etldiff: --%s: '%s' is not a process id (0 to %lu)\n", tree ? "process-tree" : "process", text,
                (unsigned long)UINT32_MAX - 1);
        return -1;
    }
    if (text[digits]) q.name = text;
    p = realloc(o->processes, (o->diff.nprocesses + 1) * sizeof *p);
    if (!p) return -1;
    p[o->diff.nprocesses++] = q;
    o->processes = p;
    o->diff.processes = p;
    return 0;
}

static int parse_range(etl_normalize_options *o, const char *text)
{
    if (tool_parse_time_range(text, &o->from_ns, &o->to_ns) == 0) return 0;
    fprintf(stderr, "etldiff: --time-range needs A,B: seconds after each trace's first event (1.5,3), not '%s'\n", text);
    return -1;
}

static int parse_count(const char *text, long *out, const char *option)
{
    char *end;

    errno = 0;
    *out = strtol(text, &end, 10);
    if (errno || *end || end == text || *out < 0) {
        fprintf(stderr, "etldiff: %s needs a number >= 0, not '%s'\n", option, text);
        return -1;
    }
    return 0;
}

static int parse_tolerance(etl_diff_options *o, const char *text)
{
    char *end;

    errno = 0;
    o->tolerance = strtod(text, &end);
    o->tolerance_percent = *end == '%';
    if (o->tolerance_percent) end++;
    if (errno || *end || end == text || o->tolerance < 0) {
        fprintf(stderr, "etldiff: --tolerance needs a number (10) or a percentage (5%%), not '%s'\n", text);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ --stacks */

/* The profile of the trace at path, with the filters of o, in *out. 0, or -1 when the trace
   cannot be read (said on stderr); *damaged set when damage was skipped. */
static int load_profile(const struct options *o, const char *path, etl_profile **out, int *damaged)
{
    etl_symbolizer_options so = { 0, o->symbols, o->nsymbols, 0, NULL };
    const etl_normalize_options *norm = &o->diff.normalize;
    etl_profile_options po;
    etl_reader *r = NULL;
    int rc;

    memset(&po, 0, sizeof po);
    po.processes = o->process_text;
    po.nprocesses = o->nprocess_text;
    /* --time-range: here from each trace's start, as etlprof counts */
    po.has_time_range = norm->from_ns != INT64_MIN || norm->to_ns != INT64_MAX;
    po.time_from_ns = norm->from_ns < 0 ? 0 : norm->from_ns;
    po.time_to_ns = norm->to_ns;
    po.symbols = &so;
    if (etl_profile_new(out, &po) != ETL_OK) {
        if (!o->quiet) fputs("etldiff: out of memory\n", stderr);
        return -1;
    }
    rc = etl_reader_open_path(&r, path, NULL);
    if (rc != ETL_OK && rc != ETL_WARN) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", r ? etl_reader_error(r) : "out of memory");
        etl_reader_close(r);
        return -1;
    }
    if (rc == ETL_WARN) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", etl_reader_error(r));
        *damaged = 1;
    }
    rc = etl_profile_add_trace(*out, r);
    etl_reader_close(r);
    if (rc == ETL_WARN) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", etl_profile_error(*out));
        *damaged = 1;
    }
    else if (rc != ETL_OK) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s: %s\n", path, etl_profile_error(*out));
        return -1;
    }
    return 0;
}

static int compare_stacks(struct options *o, const char *path_a, const char *path_b)
{
    etl_profile *a = NULL, *b = NULL;
    etl_profile_diff *d = NULL;
    etl_profile_diff_stats st;
    int damaged = 0, status = EXIT_TROUBLE, rc;

    if (load_profile(o, path_a, &a, &damaged) != 0 || load_profile(o, path_b, &b, &damaged) != 0) goto out;
    if (etl_profile_diff_new(&d, a, b, o->measure, o->diff.tolerance) != ETL_OK) {
        if (!o->quiet) fputs("etldiff: out of memory\n", stderr);
        goto out;
    }
    etl_profile_diff_stats_get(d, &st);
    /* No shares without samples: that is no answer to the question, not a match. */
    if (!st.samples_a || !st.samples_b) {
        if (!o->quiet)
            for (int k = 0; k < 2; k++)
                if (!(k ? st.samples_b : st.samples_a))
                    fprintf(stderr, "etldiff: %s: no samples to compare (no SampledProfile or PMC sample events%s)\n",
                            k ? path_b : path_a, o->nprocess_text ? " of the processes --process names" : "");
        goto out;
    }
    if (!o->quiet) {
        rc = etl_profile_diff_write(stdout, d, path_a, path_b, o->json ? ETL_DIFF_JSON : ETL_DIFF_TEXT,
                                    o->diff.max_diffs);
        if (rc != ETL_OK) goto out; /* the write error is said below */
    }
    status = damaged ? EXIT_TROUBLE : st.moved ? EXIT_DIFFER : EXIT_SAME;
out:
    etl_profile_diff_free(d);
    etl_profile_free(a);
    etl_profile_free(b);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "etldiff: write error: %s\n", strerror(errno));
        status = EXIT_TROUBLE;
    }
    return status;
}

static int push(const char ***list, size_t *n, const char *item)
{
    const char **p = realloc(*list, (*n + 1) * sizeof *p);
    if (!p) return -1;
    p[(*n)++] = item;
    *list = p;
    return 0;
}

/* ------------------------------------------------------------------ main */

static void on_damage(void *arg, int64_t offset, const char *message)
{
    const struct options *o = arg;

    (void)offset;
    /* The message names the file and the offset; damage makes the exit status 2. */
    if (!o->quiet) fprintf(stderr, "etldiff: %s\n", message);
}

static int compare(struct options *o, const char *path_a, const char *path_b)
{
    etl_diff *d = NULL;
    etl_diff_stats st;
    int status = EXIT_TROUBLE, equal;

    o->diff.on_damage = on_damage;
    o->diff.on_damage_arg = o;
    if (etl_diff_open(&d, path_a, path_b, &o->diff) != ETL_OK) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", etl_diff_error(d));
        etl_diff_close(d);
        return EXIT_TROUBLE;
    }
    if (etl_diff_compare(d) != ETL_OK) goto trouble;
    etl_diff_stats_get(d, &st);
    equal = st.differences == 0;
    /* Matching traces print nothing in text (as diff), their summary in JSON. */
    if (!o->quiet && (!equal || o->json) &&
        etl_diff_write(d, stdout, o->json ? ETL_DIFF_JSON : ETL_DIFF_TEXT) == ETL_FAILED)
        goto trouble;
    etl_diff_stats_get(d, &st);
    status = st.damaged ? EXIT_TROUBLE : equal ? EXIT_SAME : EXIT_DIFFER;
    goto out;
trouble:
    if (!o->quiet) fprintf(stderr, "etldiff: %s\n", etl_diff_error(d));
out:
    etl_diff_close(d);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "etldiff: write error: %s\n", strerror(errno));
        status = EXIT_TROUBLE;
    }
    return status;
}

int main(int argc, char **argv)
{
    enum { OPT_IGNORE_PROVIDER = 256, OPT_IGNORE_EVENT, OPT_COUNTS, OPT_TOLERANCE, OPT_ALL_EVENTS, OPT_GLOBAL_ORDER,
           OPT_PROCESS, OPT_PROCESS_TREE, OPT_IGNORE_FIELD, OPT_STACKS };
    static const struct option longopts[] = {
        { "ignore", required_argument, NULL, 'i' },
        { "compare", required_argument, NULL, 'c' },
        { "ignore-provider", required_argument, NULL, OPT_IGNORE_PROVIDER },
        { "ignore-event", required_argument, NULL, OPT_IGNORE_EVENT },
        { "provider", required_argument, NULL, 'p' },
        { "time-range", required_argument, NULL, 't' },
        { "unordered", no_argument, NULL, 'u' },
        { "global-order", no_argument, NULL, OPT_GLOBAL_ORDER },
        { "process", required_argument, NULL, OPT_PROCESS },
        { "process-tree", required_argument, NULL, OPT_PROCESS_TREE },
        { "counts", no_argument, NULL, OPT_COUNTS },
        { "tolerance", required_argument, NULL, OPT_TOLERANCE },
        { "all-events", no_argument, NULL, OPT_ALL_EVENTS },
        { "max-diffs", required_argument, NULL, 'n' },
        { "context", required_argument, NULL, 'U' },
        { "format", required_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "ignore-field", required_argument, NULL, OPT_IGNORE_FIELD },
        { "manifest", required_argument, NULL, 'm' },
        { "stacks", optional_argument, NULL, OPT_STACKS },
        { "symbols", required_argument, NULL, 's' },
        { NULL, 0, NULL, 0 },
    };
    struct options o;
    etl_normalize_options *norm = &o.diff.normalize;
    unsigned bits;
    const char *bad;
    int c, status;

    memset(&o, 0, sizeof o);
    etl_diff_options_init(&o.diff);
    o.only_text = calloc((size_t)argc, sizeof *o.only_text);
    o.skip_text = calloc((size_t)argc, sizeof *o.skip_text);
    o.fields = calloc((size_t)argc, sizeof *o.fields);
    o.manifests = calloc((size_t)argc, sizeof *o.manifests);
    if (!o.only_text || !o.skip_text || !o.fields || !o.manifests) {
        fputs("etldiff: out of memory\n", stderr);
        options_free(&o);
        return EXIT_TROUBLE;
    }
    while ((c = tool_getopt_long("etldiff", argc, argv, "i:c:p:t:un:U:f:qhVm:s:", longopts, NULL)) != -1) {
        /* the options of the event comparison only, which --stacks refuses */
        if (!o.events_only && ((c > 0 && c < 256 && strchr("icpmuU", c)) || (c >= OPT_IGNORE_PROVIDER && c != OPT_TOLERANCE &&
                                                         c != OPT_PROCESS && c != OPT_STACKS)))
            for (const struct option *l = longopts; l->name; l++)
                if (l->val == c) o.events_only = l->name;
        switch (c) {
        case 'i':
        case 'c':
            if (etl_normalize_fields_parse(optarg, &bits, &bad) != ETL_OK) {
                fprintf(stderr, "etldiff: --%s: unknown field '%.*s' (ts, pid, tid, cpu, payload)\n",
                        c == 'i' ? "ignore" : "compare", (int)strcspn(bad, ","), bad);
                goto usage;
            }
            if (c == 'i') {
                norm->ignore |= bits;
                norm->raw &= ~bits;
            }
            else {
                norm->ignore &= ~bits;
                norm->raw |= bits & (ETL_NORMALIZE_PID | ETL_NORMALIZE_TID);
            }
            break;
        case OPT_IGNORE_PROVIDER: o.skip_text[o.nskip_text++] = optarg; break;
        case 'p': o.only_text[o.nonly_text++] = optarg; break;
        case OPT_IGNORE_FIELD: o.fields[o.nfields++] = optarg; break;
        case 'm': o.manifests[o.nmanifests++] = optarg; break;
        case OPT_IGNORE_EVENT:
            if (add_event(&o, optarg) != 0) goto usage;
            break;
        case 't':
            if (parse_range(norm, optarg) != 0) goto usage;
            break;
        case 'u': o.diff.unordered = 1; break;
        case OPT_GLOBAL_ORDER: o.diff.global_order = 1; break;
        case OPT_PROCESS:
        case OPT_PROCESS_TREE:
            if (add_process(&o, optarg, c == OPT_PROCESS_TREE) != 0) goto usage;
            if (c == OPT_PROCESS && push(&o.process_text, &o.nprocess_text, optarg) != 0) goto nomem;
            break;
        case OPT_STACKS:
            o.stacks = 1;
            if (!optarg || strcmp(optarg, "self") == 0) o.measure = ETL_PROFILE_SELF;
            else if (strcmp(optarg, "total") == 0) o.measure = ETL_PROFILE_TOTAL;
            else {
                fprintf(stderr, "etldiff: --stacks is self or total, not '%s'\n", optarg);
                goto usage;
            }
            break;
        case 's':
            if (push(&o.symbols, &o.nsymbols, optarg) != 0) goto nomem;
            break;
        case OPT_COUNTS: o.diff.counts = 1; break;
        case OPT_TOLERANCE:
            if (parse_tolerance(&o.diff, optarg) != 0) goto usage;
            o.tolerance_given = 1;
            break;
        case OPT_ALL_EVENTS: norm->all_events = 1; break;
        case 'n':
            if (parse_count(optarg, &o.diff.max_diffs, "--max-diffs") != 0) goto usage;
            break;
        case 'U':
            if (parse_count(optarg, &o.diff.context, "--context") != 0) goto usage;
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0) o.json = 1;
            else if (strcmp(optarg, "text") == 0) o.json = 0;
            else {
                fprintf(stderr, "etldiff: unknown format '%s' (text or json)\n", optarg);
                goto usage;
            }
            break;
        case 'q': o.quiet = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            options_free(&o);
            return EXIT_SAME;
        case 'V':
            printf("etldiff %s (%s)\n", etl_version(), etl_version_details());
            options_free(&o);
            return EXIT_SAME;
        default: goto usage;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "etldiff: %s\n", argc - optind < 2 ? "two files to compare are needed" : "only two files can be compared");
        goto usage;
    }
    if (o.stacks) {
        if (o.events_only) {
            fprintf(stderr, "etldiff: --%s does not go with --stacks\n", o.events_only);
            goto usage;
        }
        if (!(o.diff.tolerance <= 100)) { /* and not NaN */
            fputs("etldiff: --tolerance with --stacks is a number of percentage points from 0 to 100\n", stderr);
            goto usage;
        }
        if (o.diff.tolerance_percent) {
            fputs("etldiff: --tolerance with --stacks is in percentage points of the samples (2.5), not a percentage\n",
                  stderr);
            goto usage;
        }
        if (!o.tolerance_given) o.diff.tolerance = 1;
        status = compare_stacks(&o, argv[optind], argv[optind + 1]);
        options_free(&o);
        return status;
    }
    if (o.nsymbols) {
        fputs("etldiff: --symbols goes with --stacks\n", stderr);
        goto usage;
    }
    if (o.diff.tolerance > 0 && !o.diff.counts) {
        fputs("etldiff: --tolerance goes with --counts or --stacks\n", stderr);
        goto usage;
    }
    if (!(norm->decoder = tool_decoder_open("etldiff", o.manifests, o.nmanifests))) {
        options_free(&o);
        return EXIT_TROUBLE;
    }
    if (resolve_providers(&o) != 0) {
        fputs("etldiff: out of memory\n", stderr);
        options_free(&o);
        return EXIT_TROUBLE;
    }
    norm->ignore_fields = (const char *const *)o.fields;
    norm->nignore_fields = o.nfields;
    status = compare(&o, argv[optind], argv[optind + 1]);
    options_free(&o);
    return status;
nomem:
    fputs("etldiff: out of memory\n", stderr);
    options_free(&o);
    return EXIT_TROUBLE;
usage:
    fputs("Try 'etldiff --help'.\n", stderr);
    options_free(&o);
    return EXIT_TROUBLE;
}
