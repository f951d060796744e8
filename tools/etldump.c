/* SPDX-License-Identifier: MIT */
/* etldump: print the events of ETL files as text, JSON lines or CSV, or a summary of each file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "etl.h"
#include "interrupt.h"

/* Exit codes (doc/etldump.1). */
#define EXIT_DAMAGED 1 /* a file had damaged parts; everything readable was printed */
#define EXIT_ERROR   2 /* a file could not be opened or is not ETL, or bad usage */

static const char usage_text[] =
    "Usage: etldump [OPTION]... FILE...\n"
    "       etldump [OPTION]... --session NAME\n"
    "Print the events of Event Trace Log (.etl, .etl.gz) files, or of a running\n"
    "real-time session as they arrive.\n"
    "\n"
    "  -S, --session=NAME   consume the real-time session NAME (etlrecord start NAME\n"
    "                       --mode realtime): the events it held first, then each\n"
    "                       as it comes, until the session stops or Ctrl-C\n"
    "  -f, --format=FMT     text (default), jsonl (one JSON object per event) or csv\n"
    "  -o, --order=ORDER    time (default: merged across processors by timestamp)\n"
    "                       or file (buffer by buffer, as stored)\n"
    "  -s, --summary        print one JSON object per file: the trace info and counts\n"
    "  -N, --normalize      print each event as etldiff compares it: no timestamp or\n"
    "                       processor, pids and tids renumbered (P1, T1, ...), the\n"
    "                       session's header events left out (doc/etldiff.1)\n"
    "  -n, --max-events=N   stop each file after N events\n"
    "  -m, --manifest=PATH  decode events with the instrumentation manifest PATH, or\n"
    "                       those of directory PATH (repeatable; ETL_MANIFEST_PATH and\n"
    "                       the manifests installed with libetl are always read)\n"
    "      --symbols=DIR    look for symbol files in DIR first (repeatable): DIR's\n"
    "                       .build-id/ tree, debuginfod's cache layout, PDBs in\n"
    "                       symstore's layout; then /usr/lib/debug, debuginfod's\n"
    "                       cache and the images' own paths\n"
    "      --no-symbols     show sample and stack addresses as image+offset only (no\n"
    "                       symbol lookups: faster)\n"
    "  -q, --quiet          do not report damage on stderr (the exit code still tells)\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the versions of etldump, libetl and zlib and exit\n"
    "\n"
    "Exit status: 0 all read; 1 a file had damaged parts (everything readable was\n"
    "printed and stderr says what was skipped, at which offset), or the session\n"
    "lost events this consumer did not get (stderr says how many); 2 a file could\n"
    "not be opened or is not an ETL file, no such real-time session, the session\n"
    "went away without stopping, or bad usage.\n";

struct options {
    etl_dump_format format;
    int order;
    int summary;
    int normalize;
    int quiet;
    long long max_events;
    etl_decoder *dec;       /* every event's fields, by name */
    int no_symbols;
    char **symbols;         /* --symbols directories */
    unsigned nsymbols;
};

/* Damage is reported by the pass that prints (the first pass only maps images and learns the
   trace's EventSource manifests). */
struct damage_report {
    int quiet;
    int mute;
};

static void report_damage(void *arg, int64_t offset, const char *message)
{
    const struct damage_report *d = arg;

    (void)offset;
    if (!d->quiet && !d->mute) fprintf(stderr, "etldump: warning: %s\n", message);
}

/*
 * The first pass, so that sample and stack addresses resolve to images and events before their
 * EventSource manifest decode (doc/etldump.1); its damage is reported by the pass that prints.
 * ETL_OK, or ETL_FATAL (message printed).
 */
static int first_pass(etl_reader *r, etl_image_map *map, etl_decoder *dec, etl_symbolizer *sym,
                      struct damage_report *d)
{
    int rc;

    d->mute = 1;
    rc = etl_dump_first_pass_symbols(r, map, dec, sym);
    if (rc == ETL_FAILED) {
        fprintf(stderr, "etldump: out of memory\n");
        return ETL_FATAL;
    }
    d->mute = 0;
    if (rc != ETL_OK) {
        fprintf(stderr, "etldump: %s\n", etl_reader_error(r));
        return ETL_FATAL;
    }
    return ETL_OK;
}

/* What a real-time session's consumer is told at its end: what it got and what it missed. */
static int session_end(const char *name, etl_reader *r, long long n, int rc)
{
    const etl_trace_info *in = etl_reader_info(r);

    if (rc != ETL_EOF) {
        fprintf(stderr, "etldump: session %s: stopped reading after %lld events\n", name, n);
        return 0;
    }
    if (in->events_lost || in->buffers_lost) {
        fprintf(stderr, "etldump: session %s ended: %lld events; %u lost (RealTimeBuffersLost %u)\n", name, n,
                in->events_lost, in->buffers_lost);
        return EXIT_DAMAGED;
    }
    fprintf(stderr, "etldump: session %s ended: %lld events\n", name, n);
    return 0;
}

/* Dump one file, or the real-time session of that name; returns the exit code it deserves. */
static int dump_file(const char *path, int session, const struct options *o)
{
    etl_reader_options oo;
    struct damage_report damage = { o->quiet, 0 };
    etl_image_map *map = NULL;
    etl_symbolizer *sym = NULL;
    etl_reader *r = NULL;
    etl_event ev;
    etl_summary *counts = NULL;
    long long n = 0, undecodable = 0;
    int rc, status = 0;

    memset(&oo, 0, sizeof oo);
    oo.order = o->order;
    oo.on_damage = report_damage;
    oo.on_damage_arg = &damage;
    rc = session ? etl_reader_open_session(&r, path, &oo) : etl_reader_open_path(&r, path, &oo);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etldump: %s\n", r ? etl_reader_error(r) : "out of memory");
        etl_reader_close(r);
        return EXIT_ERROR;
    }
    if (o->normalize) {
        etl_normalize_options no;
        etl_normalizer *nz;
        etl_normalize_options_init(&no);
        no.decoder = o->dec;
        nz = etl_normalizer_new(&no);
        if (!nz) {
            fprintf(stderr, "etldump: out of memory\n");
            etl_reader_close(r);
            return EXIT_ERROR;
        }
        while ((o->max_events < 0 || n < o->max_events) && !tool_interrupted &&
               ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN)) {
            const char *line;
            int k = etl_normalizer_format(nz, &ev, etl_reader_time_ns(r, ev.timestamp), &line, NULL);
            if (k < 0) {
                fprintf(stderr, "etldump: out of memory\n");
                status = EXIT_ERROR;
                break;
            }
            if (k) {
                n++;
                fputs(line, stdout);
                fputc('\n', stdout);
            }
        }
        etl_normalizer_free(nz);
        if (session && (rc == ETL_EOF || tool_interrupted || n == o->max_events)) {
            status = session_end(path, r, n, rc);
            rc = ETL_EOF;
        }
        if (rc == ETL_FATAL) {
            fprintf(stderr, "etldump: %s\n", etl_reader_error(r));
            status = EXIT_ERROR;
        }
        if (!status && etl_reader_warnings(r)) status = EXIT_DAMAGED;
        etl_reader_close(r);
        return status;
    }
    if (o->summary) {
        counts = etl_summary_new();
        if (!counts) {
            fprintf(stderr, "etldump: out of memory\n");
            etl_reader_close(r);
            return EXIT_ERROR;
        }
        etl_decoder_provider_stats_reset(o->dec);
    } else if (o->format != ETL_DUMP_CSV && !(map = etl_image_map_new())) {
        fprintf(stderr, "etldump: out of memory\n");
        etl_reader_close(r);
        return EXIT_ERROR;
    }
    /* The functions at sample and stack addresses: a symbolizer of this file's own (its pids). */
    if (map && !o->no_symbols && !(sym = tool_symbolizer_open("etldump", o->symbols, o->nsymbols))) {
        etl_image_map_free(map);
        etl_reader_close(r);
        return EXIT_ERROR;
    }
    /* A session cannot be read twice: its images are mapped as their events come. */
    if (!session && first_pass(r, map, o->dec, sym, &damage) != ETL_OK) {
        etl_symbolizer_close(sym);
        etl_image_map_free(map);
        etl_summary_free(counts);
        etl_reader_close(r);
        return EXIT_ERROR;
    }
    while ((o->max_events < 0 || n < o->max_events) && !tool_interrupted &&
           ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN)) {
        n++;
        if (session && ((map && etl_image_map_add(map, &ev) != ETL_OK) || (sym && etl_symbolizer_add(sym, &ev) != ETL_OK))) {
            fprintf(stderr, "etldump: out of memory\n");
            status = EXIT_ERROR;
            break;
        }
        if (counts) {
            etl_decoded_event de;
            if (etl_summary_add(counts, &ev) != ETL_OK) {
                fprintf(stderr, "etldump: out of memory\n");
                status = EXIT_ERROR;
                break;
            }
            etl_decoder_decode(o->dec, &ev, &de);
        } else if (etl_dump_event_symbols(stdout, o->format, r, &ev, map, o->dec, sym) == ETL_WARN) {
            /* a payload that does not fit its schema: shown as far as it goes, and said */
            if (!o->quiet) fprintf(stderr, "etldump: warning: %s: %s\n", path, etl_decoder_error(o->dec));
            undecodable++;
        }
    }
    if (session && !status && (rc == ETL_EOF || tool_interrupted || n == o->max_events)) {
        status = session_end(path, r, n, rc);
        rc = ETL_EOF;
    }
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etldump: %s\n", etl_reader_error(r));
        status = EXIT_ERROR;
    }
    if (counts && !status) etl_summary_write(counts, stdout, path, r, o->dec);
    etl_summary_free(counts);
    if (!status && (etl_reader_warnings(r) || undecodable)) status = EXIT_DAMAGED;
    if (sym && !o->quiet && etl_symbolizer_error(sym))
        fprintf(stderr, "etldump: warning: %s: symbols: %s\n", path, etl_symbolizer_error(sym));
    etl_symbolizer_close(sym);
    etl_image_map_free(map);
    etl_reader_close(r);
    return status;
}

/* main's work; manifests and symbols have room for every argument's --manifest and --symbols. */
static int etldump(int argc, char **argv, char **manifests, char **symbols)
{
    enum { OPT_SYMBOLS = 256, OPT_NO_SYMBOLS };
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },  { "order", required_argument, NULL, 'o' },
        { "summary", no_argument, NULL, 's' },       { "max-events", required_argument, NULL, 'n' },
        { "normalize", no_argument, NULL, 'N' },
        { "quiet", no_argument, NULL, 'q' },         { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },       { "session", required_argument, NULL, 'S' },
        { "manifest", required_argument, NULL, 'm' },
        { "symbols", required_argument, NULL, OPT_SYMBOLS },
        { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
        { NULL, 0, NULL, 0 },
    };
    struct options o = { ETL_DUMP_TEXT, ETL_ORDER_TIME, 0, 0, 0, -1, NULL, 0, symbols, 0 };
    const char *session = NULL;
    unsigned nmanifests = 0;
    int c, status = 0;

    while ((c = tool_getopt_long("etldump", argc, argv, "f:o:sNn:qhVS:m:", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': {
            int format = etl_dump_format_parse(optarg);
            if (format < 0) {
                fprintf(stderr, "etldump: unknown format '%s' (text, jsonl or csv)\n", optarg);
                return EXIT_ERROR;
            }
            o.format = (etl_dump_format)format;
            break;
        }
        case 'o':
            if (strcmp(optarg, "time") == 0) o.order = ETL_ORDER_TIME;
            else if (strcmp(optarg, "file") == 0) o.order = ETL_ORDER_FILE;
            else {
                fprintf(stderr, "etldump: unknown order '%s' (time or file)\n", optarg);
                return EXIT_ERROR;
            }
            break;
        case 's': o.summary = 1; break;
        case 'N': o.normalize = 1; break;
        case 'n': {
            char *end;
            errno = 0;
            o.max_events = strtoll(optarg, &end, 10);
            if (errno || *end || end == optarg || o.max_events < 0) {
                fprintf(stderr, "etldump: --max-events needs a number >= 0, not '%s'\n", optarg);
                return EXIT_ERROR;
            }
            break;
        }
        case 'q': o.quiet = 1; break;
        case 'S': session = optarg; break;
        case 'm': manifests[nmanifests++] = optarg; break;
        case OPT_SYMBOLS: symbols[o.nsymbols++] = optarg; break;
        case OPT_NO_SYMBOLS: o.no_symbols = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("etldump %s (%s)\n", etl_version(), etl_version_details()); return 0;
        default: fputs("Try 'etldump --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (session && optind < argc) {
        fputs("etldump: --session reads a session, not files\nTry 'etldump --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (!session && optind >= argc) {
        fputs("etldump: no input file\nTry 'etldump --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (o.normalize && (o.summary || o.format != ETL_DUMP_TEXT)) {
        fputs("etldump: --normalize prints text lines: not with --summary or --format\nTry 'etldump --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (o.no_symbols && o.nsymbols) {
        fputs("etldump: --symbols and --no-symbols exclude each other\nTry 'etldump --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (tool_symbols_check("etldump", symbols, o.nsymbols) != 0) return EXIT_ERROR;
    if (!(o.dec = tool_decoder_open("etldump", manifests, nmanifests))) return EXIT_ERROR;
    if (o.format == ETL_DUMP_CSV && !o.summary) etl_dump_csv_header(stdout);
    if (session) {
        /* Each event out as it comes; Ctrl-C ends the reading, not the session. */
        setvbuf(stdout, NULL, _IOLBF, 0);
        tool_catch_signals();
        status = dump_file(session, 1, &o);
    }
    for (int i = optind; i < argc; i++) {
        int s = dump_file(argv[i], 0, &o);
        if (s > status) status = s;
    }
    etl_decoder_close(o.dec);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "etldump: write error: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return status;
}

int main(int argc, char **argv)
{
    char **manifests = calloc((size_t)argc, sizeof *manifests);
    char **symbols = calloc((size_t)argc, sizeof *symbols);
    int status;

    if (!manifests || !symbols) {
        fputs("etldump: out of memory\n", stderr);
        free(manifests);
        free(symbols);
        return EXIT_ERROR;
    }
    status = etldump(argc, argv, manifests, symbols);
    free(manifests);
    free(symbols);
    return status;
}
