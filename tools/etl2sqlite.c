/* SPDX-License-Identifier: MIT */
/* etl2sqlite: load ETL files into an SQLite database (the loader and its schema: libetl/load/). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cmdline.h"
#include "etl.h"
#include "interrupt.h"

/* Exit codes (doc/etl2sqlite.1). */
#define EXIT_DAMAGED 1 /* loaded; an input had damaged parts, recorded in the lost table */
#define EXIT_ERROR   2 /* bad usage, an input could not be read, or the database could not be written */

static const char usage_text[] =
    "Usage: etl2sqlite [-o OUT.db] [OPTION]... IN.etl...\n"
    "Load Event Trace Log files (.etl, .etl.gz) into an SQLite database: one row per\n"
    "event with its fields decoded (JSON), a view per event name with a column per\n"
    "field, the kernel event classes decoded into their own tables, every input on\n"
    "one timeline (as etlmerge places them).\n"
    "\n"
    "  -o, --output=FILE    the database (default: the first input's name with .db\n"
    "                       in place of .etl or .etl.gz)\n"
    "  -a, --append         add the inputs to an existing database\n"
    "  -f, --force          replace an existing database\n"
    "      --no-payload     leave events.payload NULL (a smaller database)\n"
    "  -m, --manifest=PATH  decode events with the instrumentation manifest PATH, or\n"
    "                       those of directory PATH (repeatable; ETL_MANIFEST_PATH and\n"
    "                       the manifests installed with libetl are always read)\n"
    "      --symbols=DIR    look for symbol files in DIR first (repeatable): DIR's\n"
    "                       .build-id/ tree, debuginfod's cache layout, PDBs in\n"
    "                       symstore's layout; then /usr/lib/debug, debuginfod's\n"
    "                       cache and the images' own paths\n"
    "      --no-symbols     no function names: leave the functions table empty and\n"
    "                       the function columns NULL (a faster load)\n"
    "      --keep-partial   when an input cannot be read, keep what was loaded (from\n"
    "                       the inputs that could be) instead of writing nothing\n"
    "      --schema         print the schema (tables, indexes, views) and exit\n"
    "      --progress       show the progress bar even when stderr is not a terminal\n"
    "      --no-progress    never show it (default: shown when stderr is a terminal)\n"
    "  -q, --quiet          no warnings or progress on stderr (the exit status still\n"
    "                       tells)\n"
    "  -v, --verbose        tell on stderr what each phase of the load took\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the versions of etl2sqlite, libetl, zlib and SQLite\n"
    "\n"
    "An existing database is refused unless --append or --force. A new or replaced\n"
    "database is written under a temporary name beside it and renamed when complete;\n"
    "--append adds in one transaction, undone on failure.\n"
    "\n"
    "Exit status: 0 loaded; 1 loaded, but an input had damaged parts or an event's\n"
    "payload did not fit its schema (stderr names the file and offset; the lost\n"
    "table records it and what was readable is loaded); 2 nothing loaded: bad\n"
    "usage, an input, a --manifest or a --symbols directory could not be read, the\n"
    "database exists, or it could not be written (with --keep-partial, what could\n"
    "be loaded is kept and the status is still 2). A missing symbol file is no\n"
    "error: the address keeps its image and offset.\n";

/* What the messages and the progress bar share. */
static struct {
    int quiet, verbose, show_progress;
    int loading;               /* the load has begun: a progress line may be on the terminal */
    double last_shown;         /* seconds into the load when the bar was last drawn */
    struct timespec phase;     /* the end of the last phase (--verbose) */
} ui;

/* --verbose: what the phase that ends now took, since the previous one ended. */
static void phase_done(const char *what)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    if (ui.verbose && ui.phase.tv_sec)
        fprintf(stderr, "etl2sqlite: %s: %.3f s\n", what,
                (double)(now.tv_sec - ui.phase.tv_sec) + (double)(now.tv_nsec - ui.phase.tv_nsec) / 1e9);
    ui.phase = now;
}

/* Warnings are for --quiet to hush; a line that interrupts the progress bar first clears it. */
static void on_message(void *arg, const etl_sqlite_message *m)
{
    (void)arg;
    if (m->status == ETL_WARN && ui.quiet) return;
    if (ui.show_progress && ui.loading && ((m->status != ETL_FATAL && m->status != ETL_OK) || tool_interrupted))
        fputs("\r\033[K", stderr);
    fprintf(stderr, "etl2sqlite: %s\n", m->text);
}

static void on_progress(void *arg, const etl_sqlite_progress *p)
{
    double frac, rate, left;
    char bar[31];
    int filled;

    (void)arg;
    if (!p->final && p->seconds - ui.last_shown < 0.2) return;
    ui.last_shown = p->seconds;
    frac = p->bytes_total ? (double)p->bytes_done / (double)p->bytes_total : 1.0;
    if (frac > 1.0) frac = 1.0;
    rate = p->seconds > 0 ? (double)p->events / p->seconds : 0;
    left = frac > 0.001 ? p->seconds * (1 - frac) / frac : 0;
    filled = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : ' ';
    bar[30] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  %.2f M events/s  %s%.0f s left ", bar, (int)(frac * 100), rate / 1e6,
            p->final ? "" : "~", p->final ? 0.0 : left);
    if (p->final) fputs("\r\033[K", stderr);
    fflush(stderr);
}

static int interrupted(void *arg)
{
    (void)arg;
    return tool_interrupted != 0;
}

static char *default_output(const char *input)
{
    size_t n = strlen(input);
    char *out = malloc(n + 4);

    if (!out) return NULL;
    memcpy(out, input, n + 1);
    if (n > 7 && strcmp(input + n - 7, ".etl.gz") == 0) out[n - 7] = '\0';
    else if (n > 4 && strcmp(input + n - 4, ".etl") == 0) out[n - 4] = '\0';
    strcat(out, ".db");
    return out;
}

static int run(const char *output, etl_sqlite_options *o, char **inputs, unsigned ninputs)
{
    etl_sqlite_loader *l;
    struct stat st;
    int exists = stat(output, &st) == 0, status = 0, rc;

    if (exists && !o->append && !o->replace) {
        fprintf(stderr, "etl2sqlite: %s exists (--append adds to it, --force replaces it); nothing was written\n",
                output);
        return EXIT_ERROR;
    }
    if (o->append && !exists) {
        fprintf(stderr, "etl2sqlite: %s: --append: no such database\n", output);
        return EXIT_ERROR;
    }
    if (etl_sqlite_loader_open(&l, output, o) != ETL_OK) {
        if (!l) fprintf(stderr, "etl2sqlite: out of memory\n");
        etl_sqlite_loader_close(l);
        return EXIT_ERROR;
    }
    tool_catch_signals();
    phase_done("start");
    for (unsigned i = 0; i < ninputs; i++) {
        rc = etl_sqlite_loader_add(l, inputs[i]);
        if (rc == ETL_FATAL) {
            etl_sqlite_loader_close(l);
            return EXIT_ERROR;
        }
        if (rc != ETL_OK) status = EXIT_ERROR;
    }
    phase_done("inputs opened");
    if ((status == EXIT_ERROR && !o->keep_partial) || etl_sqlite_loader_inputs(l) == 0 || tool_interrupted) {
        if (tool_interrupted) fprintf(stderr, "etl2sqlite: interrupted; nothing was written\n");
        else fprintf(stderr, "etl2sqlite: nothing was written\n");
        etl_sqlite_loader_close(l);
        return EXIT_ERROR;
    }
    ui.loading = 1;
    rc = etl_sqlite_loader_commit(l);
    etl_sqlite_loader_close(l);
    if (rc == ETL_FATAL || rc == ETL_FAILED) return EXIT_ERROR;
    return status ? status : rc == ETL_WARN ? EXIT_DAMAGED : 0;
}

/* The command line (manifests and symbols have room for every --manifest and --symbols) and the
   load: the exit status. */
static int etl2sqlite(int argc, char **argv, const char **manifests, char **symbols)
{
    enum { OPT_NO_PAYLOAD = 256, OPT_KEEP_PARTIAL, OPT_SCHEMA, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SYMBOLS,
           OPT_NO_SYMBOLS };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "append", no_argument, NULL, 'a' },
        { "force", no_argument, NULL, 'f' },
        { "no-payload", no_argument, NULL, OPT_NO_PAYLOAD },
        { "manifest", required_argument, NULL, 'm' },
        { "keep-partial", no_argument, NULL, OPT_KEEP_PARTIAL },
        { "symbols", required_argument, NULL, OPT_SYMBOLS },
        { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
        { "schema", no_argument, NULL, OPT_SCHEMA },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    etl_sqlite_options o;
    const char *output = NULL;
    char *default_out = NULL;
    int c, status, progress = -1;

    /* One connection, used by one thread at a time: no allocation statistics, no mutexes. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    memset(&o, 0, sizeof o);
    while ((c = tool_getopt_long("etl2sqlite", argc, argv, "o:afqvhVm:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'a': o.append = 1; break;
        case 'f': o.replace = 1; break;
        case 'q': ui.quiet = 1; break;
        case 'v': ui.verbose = o.verbose = 1; break;
        case OPT_NO_PAYLOAD: o.no_payload = 1; break;
        case 'm': manifests[o.nmanifests++] = optarg; break;
        case OPT_KEEP_PARTIAL: o.keep_partial = 1; break;
        case OPT_SYMBOLS: symbols[o.nsymbol_paths++] = optarg; break;
        case OPT_NO_SYMBOLS: o.no_symbols = 1; break;
        case OPT_PROGRESS: progress = 1; break;
        case OPT_NO_PROGRESS: progress = 0; break;
        case OPT_SCHEMA: fputs(etl_sqlite_schema(), stdout); return 0;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V':
            printf("etl2sqlite %s (%s sqlite/%s)\n", etl_version(), etl_version_details(), sqlite3_libversion());
            return 0;
        default: fputs("Try 'etl2sqlite --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (o.append && o.replace) {
        fputs("etl2sqlite: --append and --force exclude each other\nTry 'etl2sqlite --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (o.no_symbols && o.nsymbol_paths) {
        fputs("etl2sqlite: --symbols and --no-symbols exclude each other\nTry 'etl2sqlite --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (optind >= argc) {
        fputs("etl2sqlite: no input file\nTry 'etl2sqlite --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (tool_symbols_check("etl2sqlite", symbols, o.nsymbol_paths) != 0) return EXIT_ERROR;
    if (!output) {
        output = default_out = default_output(argv[optind]);
        if (!output) return EXIT_ERROR;
    }
    ui.show_progress = ui.quiet ? 0 : progress >= 0 ? progress : isatty(2);
    o.on_message = on_message;
    o.on_progress = ui.show_progress ? on_progress : NULL;
    o.interrupted = interrupted;
    o.manifests = manifests;
    o.symbol_paths = (const char *const *)symbols;
    status = run(output, &o, argv + optind, (unsigned)(argc - optind));
    free(default_out);
    return status;
}

int main(int argc, char **argv)
{
    const char **manifests = calloc((size_t)argc, sizeof *manifests);
    char **symbols = calloc((size_t)argc, sizeof *symbols);
    int status;

    if (!manifests || !symbols) {
        fputs("etl2sqlite: out of memory\n", stderr);
        free(manifests);
        free(symbols);
        return EXIT_ERROR;
    }
    status = etl2sqlite(argc, argv, manifests, symbols);
    free(manifests);
    free(symbols);
    return status;
}
