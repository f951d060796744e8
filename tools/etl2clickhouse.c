/* SPDX-License-Identifier: MIT */
/* etl2clickhouse: load ETL files into ClickHouse, each a trace of a machine (the loader: libetl/load/clickhouse.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "etl.h"
#include "interrupt.h"

/* Exit codes (doc/etl2clickhouse.1), as etl2sqlite's. */
#define EXIT_DAMAGED 1 /* loaded; a trace had damaged parts, recorded in the lost table */
#define EXIT_ERROR   2 /* bad usage, or a trace could not be read or loaded (nothing of it visible) */

static const char usage_text[] =
    "Usage: etl2clickhouse --url URL [--cluster NAME] [--database DB] [--machine NAME]\n"
    "                      [--create-schema] [--progress|--no-progress] [-q] [IN.etl]...\n"
    "Load Event Trace Log files (.etl, .etl.gz) into ClickHouse over its HTTP\n"
    "interface: each file one trace of a machine, in tables that mirror etl2sqlite's\n"
    "with the machine and the trace's id (a UUID) in every row. A trace is loaded\n"
    "whole or not at all as queries see it; loading it again replaces it.\n"
    "\n"
    "  -u, --url=URL        the server (http://host:8123/; user and password as\n"
    "                       ClickHouse takes them in the URL)\n"
    "  -c, --cluster=NAME   the rows go to the shards of cluster NAME (the servers'\n"
    "                       remote_servers), sharded by machine\n"
    "  -d, --database=DB    the database (default: etl)\n"
    "  -M, --machine=NAME   the machine the traces are of (default: the computer\n"
    "                       name the trace records; required when it records none)\n"
    "      --create-schema  create the database and what is missing of the schema\n"
    "                       on the server of --url (with --cluster: run it on every\n"
    "                       node); with no IN.etl, only that\n"
    "      --schema         print the schema --create-schema runs and exit\n"
    "      --no-payload     leave events.payload NULL\n"
    "  -m, --manifest=PATH  decode events with the instrumentation manifest PATH, or\n"
    "                       those of directory PATH (repeatable)\n"
    "      --symbols=DIR    look for symbol files in DIR first (repeatable)\n"
    "      --no-symbols     no function names (a faster load)\n"
    "      --progress       show the progress bar even when stderr is not a terminal\n"
    "      --no-progress    never show it (default: shown when stderr is a terminal)\n"
    "  -q, --quiet          no warnings or progress on stderr\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the versions of etl2clickhouse, libetl and zlib\n"
    "\n"
    "Each trace's rows are sent while it is read, a table's by an INSERT of its\n"
    "own; its row of the traces table is written last, and only then do the views\n"
    "show it.\n"
    "\n"
    "Exit status: 0 loaded; 1 loaded, but a trace had damaged parts (stderr names\n"
    "the file and offset; the lost table records it); 2 bad usage, or a trace could\n"
    "not be read or loaded (a server or shard down, a refused insert, no machine\n"
    "name, a schema of another version): nothing of that trace is visible, and the\n"
    "other traces are loaded each on its own.\n";

static struct {
    int quiet, show_progress;
    int bar;                    /* a progress line may be on the terminal */
    double last_shown;
} ui;

static void clear_bar(void)
{
    if (ui.bar) fputs("\r\033[K", stderr);
    ui.bar = 0;
}

static void on_message(void *arg, const etl_sqlite_message *m)
{
    (void)arg;
    if (m->status == ETL_OK || (m->status == ETL_WARN && ui.quiet)) return;
    clear_bar();
    fprintf(stderr, "etl2clickhouse: %s\n", m->text);
}

static void on_progress(void *arg, const etl_clickhouse_progress *p)
{
    double frac, rate;
    char bar[31];
    int filled;

    (void)arg;
    if (!p->final && p->seconds - ui.last_shown < 0.2 && p->seconds >= ui.last_shown) return;
    ui.last_shown = p->final ? 0 : p->seconds;
    frac = p->total ? (double)p->done / (double)p->total : 1.0;
    if (frac > 1.0) frac = 1.0;
    filled = (int)(frac * 30);
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : ' ';
    bar[30] = '\0';
    rate = p->seconds > 0 ? (double)(p->phase ? p->done : p->events) / p->seconds : 0;
    fprintf(stderr, "\r%s [%s] %3d%%  %s %.2f M %s/s ", p->phase ? "sending" : "reading", bar, (int)(frac * 100),
            p->path, rate / 1e6, p->phase ? "rows" : "events");
    ui.bar = 1;
    if (p->final) clear_bar();
    fflush(stderr);
}

static int interrupted(void *arg)
{
    (void)arg;
    return tool_interrupted != 0;
}

static int run(const char *url, etl_clickhouse_options *o, int create, char **inputs, unsigned ninputs)
{
    etl_clickhouse *c;
    int status = 0;

    if (etl_clickhouse_open(&c, url, o) != ETL_OK) {
        fprintf(stderr, "etl2clickhouse: %s\n", c ? etl_clickhouse_error(c) : "out of memory");
        etl_clickhouse_close(c);
        return EXIT_ERROR;
    }
    tool_catch_signals();
    if (create && etl_clickhouse_create_schema(c) != ETL_OK) { /* said through on_message */
        etl_clickhouse_close(c);
        return EXIT_ERROR;
    }
    for (unsigned i = 0; i < ninputs && !tool_interrupted; i++) {
        int rc = etl_clickhouse_load(c, inputs[i]);
        if (rc == ETL_FATAL) status = EXIT_ERROR;
        else if (rc == ETL_WARN && status == 0) status = EXIT_DAMAGED;
    }
    if (tool_interrupted) status = EXIT_ERROR;
    etl_clickhouse_close(c);
    return status;
}

static int etl2clickhouse(int argc, char **argv, const char **manifests, char **symbols)
{
    enum { OPT_CREATE = 256, OPT_SCHEMA, OPT_NO_PAYLOAD, OPT_SYMBOLS, OPT_NO_SYMBOLS, OPT_PROGRESS, OPT_NO_PROGRESS };
    static const struct option longopts[] = {
        { "url", required_argument, NULL, 'u' },
        { "cluster", required_argument, NULL, 'c' },
        { "database", required_argument, NULL, 'd' },
        { "machine", required_argument, NULL, 'M' },
        { "create-schema", no_argument, NULL, OPT_CREATE },
        { "schema", no_argument, NULL, OPT_SCHEMA },
        { "no-payload", no_argument, NULL, OPT_NO_PAYLOAD },
        { "manifest", required_argument, NULL, 'm' },
        { "symbols", required_argument, NULL, OPT_SYMBOLS },
        { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
        { "progress", no_argument, NULL, OPT_PROGRESS },
        { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    etl_clickhouse_options o;
    const char *url = NULL;
    int c, create = 0, schema = 0, progress = -1;

    memset(&o, 0, sizeof o);
    while ((c = tool_getopt_long("etl2clickhouse", argc, argv, "u:c:d:M:m:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'u': url = optarg; break;
        case 'c': o.cluster = optarg; break;
        case 'd': o.database = optarg; break;
        case 'M': o.machine = optarg; break;
        case OPT_CREATE: create = 1; break;
        case OPT_SCHEMA: schema = 1; break;
        case OPT_NO_PAYLOAD: o.read.no_payload = 1; break;
        case 'm': manifests[o.read.nmanifests++] = optarg; break;
        case OPT_SYMBOLS: symbols[o.read.nsymbol_paths++] = optarg; break;
        case OPT_NO_SYMBOLS: o.read.no_symbols = 1; break;
        case OPT_PROGRESS: progress = 1; break;
        case OPT_NO_PROGRESS: progress = 0; break;
        case 'q': ui.quiet = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("etl2clickhouse %s (%s)\n", etl_version(), etl_version_details()); return 0;
        default: fputs("Try 'etl2clickhouse --help'.\n", stderr); return EXIT_ERROR;
        }
    }
    if (schema) {
        etl_clickhouse *ch;
        char *text;
        if (etl_clickhouse_open(&ch, url ? url : "http://localhost:8123/", &o) != ETL_OK) {
            fprintf(stderr, "etl2clickhouse: %s\n", ch ? etl_clickhouse_error(ch) : "out of memory");
            etl_clickhouse_close(ch);
            return EXIT_ERROR;
        }
        text = etl_clickhouse_schema(ch);
        if (text) fputs(text, stdout);
        free(text);
        etl_clickhouse_close(ch);
        return text ? 0 : EXIT_ERROR;
    }
    if (!url) {
        fputs("etl2clickhouse: --url is required\nTry 'etl2clickhouse --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (o.read.no_symbols && o.read.nsymbol_paths) {
        fputs("etl2clickhouse: --symbols and --no-symbols exclude each other\nTry 'etl2clickhouse --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (optind >= argc && !create) {
        fputs("etl2clickhouse: no input file\nTry 'etl2clickhouse --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (tool_symbols_check("etl2clickhouse", symbols, o.read.nsymbol_paths) != 0) return EXIT_ERROR;
    ui.show_progress = ui.quiet ? 0 : progress >= 0 ? progress : isatty(2);
    o.read.on_message = on_message;
    o.read.interrupted = interrupted;
    o.read.manifests = manifests;
    o.read.symbol_paths = (const char *const *)symbols;
    o.on_progress = ui.show_progress ? on_progress : NULL;
    return run(url, &o, create, argv + optind, (unsigned)(argc - optind));
}

int main(int argc, char **argv)
{
    const char **manifests = calloc((size_t)argc, sizeof *manifests);
    char **symbols = calloc((size_t)argc, sizeof *symbols);
    int status;

    if (!manifests || !symbols) {
        fputs("etl2clickhouse: out of memory\n", stderr);
        free(manifests);
        free(symbols);
        return EXIT_ERROR;
    }
    status = etl2clickhouse(argc, argv, manifests, symbols);
    free(manifests);
    free(symbols);
    return status;
}
