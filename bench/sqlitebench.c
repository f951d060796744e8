/* SPDX-License-Identifier: MIT */
/*
 * sqlitebench: how fast etl2sqlite loads a large trace, against loading the same rows with the
 * sqlite3 shell's .import of a CSV of them (etldump -f csv), in the same run.
 *
 *   sqlitebench [-n EVENTS] [-r ROUNDS] [-d DIR] [--tools BUILDDIR] [--before BUILDDIR]
 *               [--user | --tracelogging] [--write-trace FILE]
 *
 * The trace is written once through libetl's writer: a kernel trace's mix, with rundown
 * events (processes, threads, images) at the start, then SampledProfile events (40%, their
 * addresses inside the images), CSwitch (20%) and EVENT_HEADER events of two providers (40%,
 * a quarter with a stack, drawn from 5000 different stacks); or, with --user, a user
 * session's: EVENT_HEADER events only, one in twenty with a stack; or, with --tracelogging, a
 * user session's of TraceLogging events (four kinds of two providers, each with its metadata,
 * 4 to 6 fields), one in twenty with a stack. The two providers of the plain EVENT_HEADER
 * events are GUIDs no manifest describes: their events have no schema whatever manifests are
 * installed; the kernel classes and the TraceLogging events decode. Each round runs, as fresh
 * processes, in turn:
 *   etl2sqlite --no-payload   the events table (with every event's fields) and every decoded
 *                             table, indexes and views
 *   etl2sqlite                the same with the payloads (and function names: the symbol
 *                             lookups of the samples and stack frames)
 *   etl2sqlite --no-symbols   the same without symbol lookups: what naming functions costs
 *   BEFORE/etl2sqlite         (--before) another build's etl2sqlite on the same trace, with the
 *                             payloads: an older libetl, to compare a change in the same run
 *   sqlite3 .import           the CSV of the same events (with their event names and fields)
 *                             into a table of the same columns (no payload, no other table, no
 *                             index): less work than either
 * and reports the median wall time and events per second of each, and their ratios.
 * --write-trace writes the trace to FILE and stops (to profile etl2sqlite on it).
 */
#define _DEFAULT_SOURCE 1 /* wait4 (benchrun.h) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchrun.h"
#include "etl.h"
#include "synth.h"

#define BUFFER_SIZE (64u * 1024u)
#define CPUS 4u
#define START_TIME 133500000000000000LL /* 2024-01-20 (FILETIME) */
#define MAX_ROUNDS 64

struct config {
    uint64_t events;
    unsigned rounds;
    const char *dir;
    const char *tools;
    const char *write_only; /* --write-trace PATH: write the trace there and stop */
    const char *before;     /* --before BUILDDIR: its tools/etl2sqlite timed too */
    int user_mix;           /* --user: only EVENT_HEADER events (a user session's trace) */
    int tl_mix;             /* --tracelogging: only TraceLogging events */
};

/* GUIDs no manifest describes (the events of the plain mixes have no schema), and those of the
   TraceLogging providers. */
static const etl_guid providers[2] = {
    { 0x5a1e5bec, 0x0001, 0x4c6f, { 0xad, 0x00, 0x51, 0x7e, 0xbe, 0x4c, 0x00, 0x01 } },
    { 0x5a1e5bec, 0x0002, 0x4c6f, { 0xad, 0x00, 0x51, 0x7e, 0xbe, 0x4c, 0x00, 0x02 } },
};
static const etl_guid tl_providers[2] = {
    { 0x5a1e5bec, 0x0003, 0x4c6f, { 0xad, 0x00, 0x51, 0x7e, 0xbe, 0x4c, 0x00, 0x03 } },
    { 0x5a1e5bec, 0x0004, 0x4c6f, { 0xad, 0x00, 0x51, 0x7e, 0xbe, 0x4c, 0x00, 0x04 } },
};

/* Little-endian stores into a payload. */
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* A UTF-16LE copy of ASCII s at p; returns the bytes written, terminator included. */
static uint32_t put_utf16(uint8_t *p, const char *s)
{
    uint32_t n = 0;
    do {
        p[n++] = (uint8_t)*s;
        p[n++] = 0;
    } while (*s++);
    return n;
}

struct writer {
    etl_writer *w;
    uint8_t *buf[CPUS];
    uint32_t used[CPUS];
    int64_t ts;
    uint64_t events;
};

static int add(struct writer *wr, unsigned cpu, const uint8_t *rec, uint32_t n)
{
    uint32_t space = ETL_RECORD_SPACE(n);

    if (!n) return -1;
    if (wr->used[cpu] + space > BUFFER_SIZE) {
        if (etl_writer_write_buffer(wr->w, wr->buf[cpu], wr->used[cpu], (uint16_t)cpu, wr->ts, 0) != ETL_OK) return -1;
        wr->used[cpu] = 0x48;
    }
    memcpy(wr->buf[cpu] + wr->used[cpu], rec, space);
    wr->used[cpu] += space;
    wr->events++;
    return 0;
}

#define NPROC 8u
#define NTHREAD 64u
#define NIMAGE 16u

/* Image i of process p: bases 0x7ff800000000 + i MiB, 1 MiB each (kernel images in pid 0). */
static uint64_t image_base(unsigned i) { return 0x7FF800000000ull + (uint64_t)i * 0x100000; }

/* The TraceLogging events of --tracelogging: a provider's name and an event's name and fields
   (name, TlgIn type), as an application's would be. */
struct tl_kind {
    unsigned provider;
    const char *provider_name, *event;
    unsigned nfields;
    const char *field[6];
    uint8_t type[6];
};

static const struct tl_kind tl_kinds[4] = {
    { 0, "Contoso.Web", "RequestStart", 4, { "Method", "Url", "ClientPort", "RequestId" },
      { ETL_IN_ANSI_STRING, ETL_IN_UNICODE_STRING, ETL_IN_UINT16, ETL_IN_GUID } },
    { 0, "Contoso.Web", "RequestStop", 5, { "RequestId", "Status", "Bytes", "DurationUs", "Cached" },
      { ETL_IN_GUID, ETL_IN_UINT32, ETL_IN_UINT64, ETL_IN_UINT32, ETL_IN_BOOLEAN } },
    { 1, "Contoso.Cache", "Lookup", 4, { "Key", "Hit", "Entries", "Address" },
      { ETL_IN_ANSI_STRING, ETL_IN_BOOLEAN, ETL_IN_INT32, ETL_IN_POINTER } },
    { 1, "Contoso.Cache", "Evict", 6, { "Key", "Reason", "AgeMs", "Size", "Generation", "Score" },
      { ETL_IN_ANSI_STRING, ETL_IN_INT32, ETL_IN_UINT64, ETL_IN_UINT32, ETL_IN_UINT8, ETL_IN_DOUBLE } },
};

/* The extended items of kind k (PROV_TRAITS, EVENT_SCHEMA_TL, and a STACK_TRACE64 item when
   stack), into ext: their size. */
static uint32_t tl_ext(uint8_t *ext, const struct tl_kind *k, const uint64_t *stack, unsigned frames)
{
    uint8_t traits[64], meta[256], st[8 + 16 * 8];
    uint32_t t = 2, m = 2, n = 0, len;

    len = (uint32_t)strlen(k->provider_name) + 1;
    memcpy(traits + t, k->provider_name, len);
    t += len;
    traits[0] = (uint8_t)t, traits[1] = 0;
    meta[m++] = 0; /* no tags */
    len = (uint32_t)strlen(k->event) + 1;
    memcpy(meta + m, k->event, len);
    m += len;
    for (unsigned i = 0; i < k->nfields; i++) {
        len = (uint32_t)strlen(k->field[i]) + 1;
        memcpy(meta + m, k->field[i], len);
        m += len;
        meta[m++] = k->type[i];
    }
    meta[0] = (uint8_t)m, meta[1] = 0;
    n += synth_ext_item(ext + n, ETL_EXT_PROV_TRAITS, traits, (uint16_t)t, 1);
    n += synth_ext_item(ext + n, ETL_EXT_EVENT_SCHEMA_TL, meta, (uint16_t)m, stack != NULL);
    if (stack) {
        memset(st, 0, 8);
        for (unsigned i = 0; i < frames; i++)
            for (int b = 0; b < 8; b++) st[8 + 8 * i + (unsigned)b] = (uint8_t)(stack[i] >> (8 * b));
        n += synth_ext_item(ext + n, ETL_EXT_STACK_TRACE64, st, (uint16_t)(8 + 8 * frames), 0);
    }
    return n;
}

/* A payload of kind k from the random number r: its size. */
static uint32_t tl_payload(uint8_t *p, const struct tl_kind *k, uint64_t r)
{
    static const char *const urls[] = { "/", "/api/orders", "/api/orders/42/items", "/static/app.js" };
    static const char *const keys[] = { "user:1001", "session:9f2c", "catalog:page:3", "price:eur" };
    uint32_t n = 0;
    char text[64];

    for (unsigned i = 0; i < k->nfields; i++) {
        uint64_t v = r >> (i * 7);
        switch (k->type[i]) {
        case ETL_IN_ANSI_STRING: {
            const char *t = k->event[0] == 'R' ? (v & 1 ? "GET" : "POST") : keys[v & 3];
            memcpy(p + n, t, strlen(t) + 1);
            n += (uint32_t)strlen(t) + 1;
            break;
        }
        case ETL_IN_UNICODE_STRING:
            snprintf(text, sizeof text, "%s?page=%u", urls[v & 3], (unsigned)(v >> 2) % 100);
            for (const char *c = text;; c++) {
                p[n++] = (uint8_t)*c;
                p[n++] = 0;
                if (!*c) break;
            }
            break;
        case ETL_IN_UINT8: p[n++] = (uint8_t)(v & 3); break;
        case ETL_IN_UINT16: p[n++] = (uint8_t)v; p[n++] = (uint8_t)(v >> 8); break;
        case ETL_IN_GUID:
            for (int b = 0; b < 16; b++) p[n++] = (uint8_t)(r >> ((b * 5) % 56));
            break;
        case ETL_IN_INT32: case ETL_IN_UINT32: case ETL_IN_BOOLEAN:
            put32(p + n, k->type[i] == ETL_IN_BOOLEAN ? (uint32_t)(v & 1) : (uint32_t)(v % 100000));
            n += 4;
            break;
        case ETL_IN_UINT64: case ETL_IN_POINTER:
            put64(p + n, k->type[i] == ETL_IN_POINTER ? 0x7FF800000000ull + (v & 0xFFFFF0) : v % 10000000);
            n += 8;
            break;
        case ETL_IN_DOUBLE: {
            double d = (double)(v % 100000) / 7.0;
            uint64_t u;
            memcpy(&u, &d, 8);
            put64(p + n, u);
            n += 8;
            break;
        }
        default: break;
        }
    }
    return n;
}

static int build_trace(const char *path, uint64_t target, int user_mix, int tl_mix, uint64_t *events)
{
    etl_writer_options o;
    struct writer wr;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    uint8_t rec[4096], pl[1024], payload[256];
    etl_data d;
    int rc = 0;

    memset(&o, 0, sizeof o);
    memset(&wr, 0, sizeof wr);
    o.buffer_size = BUFFER_SIZE;
    o.number_of_processors = CPUS;
    o.clock.type = ETL_CLOCK_PERFCOUNTER;
    o.clock.perf_freq = 10000000;
    o.clock.cpu_speed_mhz = 2100;
    o.clock.start_time = START_TIME;
    o.clock.start_timestamp = 1000000;
    o.boot_time = START_TIME - 36000000000LL;
    o.logger_name = "NT Kernel Logger";
    if (etl_writer_open(&wr.w, path, &o) != ETL_OK) {
        fprintf(stderr, "sqlitebench: %s\n", etl_writer_error(wr.w));
        etl_writer_close(wr.w, 0);
        return -1;
    }
    for (unsigned c = 0; c < CPUS; c++) {
        wr.buf[c] = malloc(BUFFER_SIZE);
        wr.used[c] = 0x48;
        if (!wr.buf[c]) return -1;
    }
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(rng_next(&rng) & 0x7F);
    wr.ts = 1000000 + 10;

    /* Rundown: processes (v4), threads (v3), images (v3) as a kernel session writes at start. */
    for (unsigned p = 0; p < NPROC && rc == 0; p++) {
        char name[32];
        uint32_t n = 0;
        memset(pl, 0, sizeof pl);
        put64(pl + n, 0xFFFFA00000000000ull + p * 0x1000); n += 8; /* UniqueProcessKey */
        put32(pl + n, 1000 + p); n += 4;                              /* ProcessId */
        put32(pl + n, 4); n += 4;                                     /* ParentId */
        put32(pl + n, 1); n += 4;                                     /* SessionId */
        put32(pl + n, 0); n += 4;                                     /* ExitStatus */
        put64(pl + n, 0x1AD000 + p * 0x1000); n += 8;                 /* DirectoryTableBase */
        put32(pl + n, 0); n += 4;                                     /* Flags */
        put32(pl + n, 0); n += 4;                                     /* no SID */
        snprintf(name, sizeof name, "app%u.exe", p);
        memcpy(pl + n, name, strlen(name) + 1); n += (uint32_t)strlen(name) + 1;
        n += put_utf16(pl + n, "app.exe --bench");
        n += put_utf16(pl + n, "");
        n += put_utf16(pl + n, "");
        d.ptr = pl, d.size = n;
        rc = add(&wr, 0, rec, etl_record_encode_perfinfo(rec, sizeof rec, wr.ts++, 0x0303, 4, &d, 1));
        for (unsigned i = 0; i < NIMAGE && rc == 0; i++) {
            char file[96];
            n = 0;
            memset(pl, 0, sizeof pl);
            put64(pl + n, image_base(i)); n += 8;
            put64(pl + n, 0x100000); n += 8;
            put32(pl + n, 1000 + p); n += 4;
            n += 4 + 4 + 4; /* checksum, timestamp, signature */
            put64(pl + n, image_base(i)); n += 8;
            n += 16;
            snprintf(file, sizeof file, "\\Device\\HarddiskVolume3\\Windows\\System32\\lib%u.dll", i);
            n += put_utf16(pl + n, file);
            d.ptr = pl, d.size = n;
            rc = add(&wr, 0, rec, etl_record_encode_perfinfo(rec, sizeof rec, wr.ts++, 0x1403, 3, &d, 1));
        }
    }
    for (unsigned t = 0; t < NTHREAD && rc == 0; t++) {
        memset(pl, 0, 72);
        put32(pl, 1000 + t % NPROC);
        put32(pl + 4, 5000 + t);
        d.ptr = pl, d.size = 72;
        rc = add(&wr, 0, rec, etl_record_encode_system(rec, sizeof rec, wr.ts++, 0x0503, 3, 0, 0, &d, 1));
    }

    while (wr.events < target && rc == 0) {
        uint64_t r = rng_next(&rng);
        unsigned c = (unsigned)(r % CPUS), kind = (unsigned)((r >> 8) % 10), t = (unsigned)((r >> 12) % NTHREAD);
        if (user_mix || tl_mix) kind = (r >> 32) % 20 ? 7 : 6; /* EVENT_HEADER events, one in twenty with a stack */
        uint32_t n;
        wr.ts += 1 + (int64_t)((r >> 40) % 3);
        if (tl_mix) {
            const struct tl_kind *k = &tl_kinds[(r >> 20) & 3];
            uint64_t stack[16];
            unsigned frames = 4 + (unsigned)((r >> 48) % 13);
            uint8_t ext[512];
            uint32_t which = (uint32_t)((r >> 22) % 5000), e;
            for (unsigned f = 0; f < frames; f++)
                stack[f] = image_base((which + f) % NIMAGE) + ((which * 2654435761u + f * 0x40) & 0xFFFF0);
            e = tl_ext(ext, k, kind == 6 ? stack : NULL, frames);
            n = synth_event_header(rec, 1, wr.ts, &tl_providers[k->provider], 1, 0, 4, 0, 0, 0, 1000 + t % NPROC,
                                   5000 + t, ext, e, pl, tl_payload(pl, k, rng_next(&rng)));
        }
        else if (kind < 4) {
            memset(pl, 0, 16);
            put64(pl, image_base((unsigned)((r >> 20) % NIMAGE)) + ((r >> 24) & 0xFFFFF));
            put32(pl + 8, 5000 + t);
            pl[12] = 1;
            d.ptr = pl, d.size = 16;
            n = etl_record_encode_perfinfo(rec, sizeof rec, wr.ts, 0x0F2E, 2, &d, 1);
        }
        else if (kind < 6) {
            memset(pl, 0, 24);
            put32(pl, 5000 + t);
            put32(pl + 4, 5000 + (t + 1) % NTHREAD);
            pl[8] = 8, pl[9] = 9, pl[12] = 6, pl[14] = 5;
            d.ptr = pl, d.size = 24;
            n = etl_record_encode_perfinfo(rec, sizeof rec, wr.ts, 0x0524, 4, &d, 1);
        }
        else {
            etl_event_descriptor desc = { (uint16_t)(1 + (r >> 56) % 20), 1, 0, 4, 0, 0, 0x10 };
            uint64_t stack[16];
            etl_event_extras x = { NULL, NULL, stack, 4 + (unsigned)((r >> 48) % 13), 0, 0, NULL, 0 };
            uint32_t which = (uint32_t)((r >> 20) % 5000);
            for (unsigned k = 0; k < 16; k++)
                stack[k] = image_base((which + k) % NIMAGE) + ((which * 2654435761u + k * 0x40) & 0xFFFF0);
            d.ptr = payload, d.size = 16 + (uint32_t)((r >> 16) % 64);
            n = etl_record_encode_event(rec, sizeof rec, wr.ts, 1000 + t % NPROC, 5000 + t,
                                        &providers[(r >> 60) & 1], &desc, kind == 6 ? &x : NULL, &d, 1);
        }
        rc = add(&wr, c, rec, n);
    }
    for (unsigned c = 0; c < CPUS; c++) {
        if (rc == 0 && etl_writer_write_buffer(wr.w, wr.buf[c], wr.used[c], (uint16_t)c, wr.ts, c + 1 == CPUS) != ETL_OK)
            rc = -1;
        free(wr.buf[c]);
    }
    if (etl_writer_close(wr.w, 0) != ETL_OK || rc != 0) {
        fprintf(stderr, "sqlitebench: writing %s failed\n", path);
        return -1;
    }
    *events = wr.events + 2; /* and the header buffer's logfile header and PartitionInfo events */
    return 0;
}

/* The processor time (user and system) of the last run, in seconds. */
static double last_cpu;

/* Runs argv[0] with argv (stdin from in_path when not NULL, stdout to out_path when not NULL);
   returns the wall time, or -1 when it could not run or did not exit 0. */
static double run(char *const argv[], const char *in_path, const char *out_path)
{
    struct bench_cost c;

    if (bench_run("sqlitebench", argv, in_path, out_path, NULL, &c) != 0) return -1;
    last_cpu = c.cpu;
    return c.wall;
}

static const char *sqlite3_shell(void)
{
    static const char *const where[] = { "/usr/bin/sqlite3", "/usr/local/bin/sqlite3" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (access(where[i], X_OK) == 0) return where[i];
    return NULL;
}

/* The events in a database, counted by the sqlite3 shell into a file. */
static long long count_rows(const char *shell, const char *db, const char *table, const char *tmp)
{
    char sql[128];
    char *argv[] = { (char *)shell, (char *)db, sql, NULL };
    long long n = -1;
    FILE *f;

    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s;", table);
    if (run(argv, NULL, tmp) < 0 || !(f = fopen(tmp, "r"))) return -1;
    if (fscanf(f, "%lld", &n) != 1) n = -1;
    fclose(f);
    return n;
}

static void print_row(const char *name, const double *wall, const double *cpu, unsigned n, uint64_t events)
{
    struct stats s = stats_of(wall, n), c = stats_of(cpu, n);
    printf("  %-34s %7.2f s  (min %.2f, max %.2f)  %6.3f M events/s; processor time %.2f s (min %.2f, max %.2f)\n",
           name, s.med, s.min, s.max, (double)events / s.med / 1e6, c.med, c.min, c.max);
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->events = 5000000;
    cfg->rounds = 5;
    cfg->dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    cfg->tools = "tools";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) cfg->events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) cfg->rounds = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) cfg->dir = argv[++i];
        else if (strcmp(argv[i], "--tools") == 0 && i + 1 < argc) cfg->tools = argv[++i];
        else if (strcmp(argv[i], "--write-trace") == 0 && i + 1 < argc) cfg->write_only = argv[++i];
        else if (strcmp(argv[i], "--before") == 0 && i + 1 < argc) cfg->before = argv[++i];
        else if (strcmp(argv[i], "--user") == 0) cfg->user_mix = 1;
        else if (strcmp(argv[i], "--tracelogging") == 0) cfg->tl_mix = 1;
        else {
            fprintf(stderr, "Usage: sqlitebench [-n EVENTS] [-r ROUNDS] [-d DIR] [--tools DIR] [--before DIR]\n"
                            "                   [--user | --tracelogging] [--write-trace FILE]\n");
            return -1;
        }
    }
    if (cfg->user_mix && cfg->tl_mix) {
        fprintf(stderr, "sqlitebench: --user or --tracelogging, not both\n");
        return -1;
    }
    if (cfg->events < 1000 || cfg->rounds < 1 || cfg->rounds > MAX_ROUNDS) {
        fprintf(stderr, "sqlitebench: -n needs at least 1000 events, -r 1 to %d rounds\n", MAX_ROUNDS);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct config cfg;
    char trace[512], csv[512], db[512], tmp[512], e2s[512], e2s_before[512], dump[512], import_sql[1024];
    double w_nopay[MAX_ROUNDS], w_pay[MAX_ROUNDS], w_before[MAX_ROUNDS], w_imp[MAX_ROUNDS], w_nosym[MAX_ROUNDS];
    double c_nopay[MAX_ROUNDS], c_pay[MAX_ROUNDS], c_before[MAX_ROUNDS], c_imp[MAX_ROUNDS], c_nosym[MAX_ROUNDS];
    const char *shell = sqlite3_shell();
    uint64_t events = 0;
    struct stat st;
    int rc = 1;

    if (parse_args(argc, argv, &cfg) != 0) return 2;
    if (!shell) {
        fprintf(stderr, "sqlitebench: the sqlite3 shell is not installed (apt-get install sqlite3)\n");
        return 2;
    }
    snprintf(e2s, sizeof e2s, "%s/etl2sqlite", cfg.tools);
    snprintf(e2s_before, sizeof e2s_before, "%s/tools/etl2sqlite", cfg.before ? cfg.before : "");
    snprintf(dump, sizeof dump, "%s/etldump", cfg.tools);
    snprintf(trace, sizeof trace, "%s/sqlitebench-%d.etl", cfg.dir, (int)getpid());
    snprintf(csv, sizeof csv, "%s/sqlitebench-%d.csv", cfg.dir, (int)getpid());
    snprintf(db, sizeof db, "%s/sqlitebench-%d.db", cfg.dir, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s/sqlitebench-%d.out", cfg.dir, (int)getpid());
    snprintf(import_sql, sizeof import_sql,
             "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 65536;\n"
             "CREATE TABLE events (ts INTEGER, time TEXT, cpu INTEGER, pid INTEGER, tid INTEGER, provider TEXT,\n"
             "  kind TEXT, id INTEGER, version INTEGER, opcode INTEGER, level INTEGER, task INTEGER,\n"
             "  keywords INTEGER, payload_len INTEGER, ext INTEGER, event_name TEXT, fields TEXT);\n"
             ".mode csv\n.import --skip 1 %s events\n",
             csv);

    if (cfg.write_only) return build_trace(cfg.write_only, cfg.events, cfg.user_mix, cfg.tl_mix, &events) == 0 ? 0 : 1;
    if (build_trace(trace, cfg.events, cfg.user_mix, cfg.tl_mix, &events) != 0) return 1;
    if (stat(trace, &st) != 0) return 1;
    {
        char *argv_dump[] = { dump, "-f", "csv", "-o", "time", trace, NULL };
        FILE *f;
        if (run(argv_dump, NULL, csv) < 0) goto out;
        snprintf(tmp, sizeof tmp, "%s/sqlitebench-%d.sql", cfg.dir, (int)getpid());
        if (!(f = fopen(tmp, "w"))) goto out;
        fputs(import_sql, f);
        fclose(f);
    }
    printf("sqlitebench: %s trace, %llu events, %.1f MiB; etl2sqlite against the sqlite3 shell's .import\n"
           "of the same rows as CSV (etldump -f csv), %u rounds, medians\n",
           cfg.user_mix ? "user-session" : cfg.tl_mix ? "TraceLogging user-session" : "kernel",
           (unsigned long long)events, (double)st.st_size / 1048576.0, cfg.rounds);
    if (cfg.before) printf("before: %s\n", e2s_before);
    for (unsigned r = 0; r < cfg.rounds; r++) {
        char *argv_np[] = { e2s, "-q", "--no-payload", "-f", "-o", db, trace, NULL };
        char *argv_p[] = { e2s, "-q", "-f", "-o", db, trace, NULL };
        char *argv_ns[] = { e2s, "-q", "--no-symbols", "-f", "-o", db, trace, NULL };
        char *argv_imp[] = { (char *)shell, db, NULL };
        char out[512];
        long long n;

        snprintf(out, sizeof out, "%s/sqlitebench-%d.count", cfg.dir, (int)getpid());
        unlink(db);
        if ((w_nopay[r] = run(argv_np, NULL, NULL)) < 0) goto out;
        c_nopay[r] = last_cpu;
        if ((n = count_rows(shell, db, "events", out)) != (long long)events) {
            fprintf(stderr, "sqlitebench: etl2sqlite loaded %lld events, not %llu\n", n, (unsigned long long)events);
            goto out;
        }
        unlink(db);
        if ((w_pay[r] = run(argv_p, NULL, NULL)) < 0) goto out;
        c_pay[r] = last_cpu;
        unlink(db);
        if ((w_nosym[r] = run(argv_ns, NULL, NULL)) < 0) goto out;
        c_nosym[r] = last_cpu;
        unlink(db);
        if (cfg.before) {
            char *argv_b[] = { e2s_before, "-q", "-f", "-o", db, trace, NULL };
            if ((w_before[r] = run(argv_b, NULL, NULL)) < 0) goto out;
            c_before[r] = last_cpu;
            unlink(db);
        }
        if ((w_imp[r] = run(argv_imp, tmp, NULL)) < 0) goto out;
        c_imp[r] = last_cpu;
        if ((n = count_rows(shell, db, "events", out)) != (long long)events) {
            fprintf(stderr, "sqlitebench: .import loaded %lld rows, not %llu\n", n, (unsigned long long)events);
            goto out;
        }
        unlink(db);
        unlink(out);
        if (cfg.before)
            printf("  round %u: etl2sqlite --no-payload %.2f s, etl2sqlite %.2f s, --no-symbols %.2f s, before %.2f s,"
                   " .import %.2f s\n", r + 1, w_nopay[r], w_pay[r], w_nosym[r], w_before[r], w_imp[r]);
        else
            printf("  round %u: etl2sqlite --no-payload %.2f s, etl2sqlite %.2f s, --no-symbols %.2f s, .import %.2f s\n",
                   r + 1, w_nopay[r], w_pay[r], w_nosym[r], w_imp[r]);
        fflush(stdout);
    }
    print_row("etl2sqlite --no-payload", w_nopay, c_nopay, cfg.rounds, events);
    print_row("etl2sqlite (with payloads)", w_pay, c_pay, cfg.rounds, events);
    print_row("etl2sqlite --no-symbols (with payloads)", w_nosym, c_nosym, cfg.rounds, events);
    if (cfg.before) print_row("before: etl2sqlite (with payloads)", w_before, c_before, cfg.rounds, events);
    print_row("sqlite3 .import of the CSV", w_imp, c_imp, cfg.rounds, events);
    if (cfg.before)
        printf("  etl2sqlite / before's (with payloads): %.2fx the time, %.2fx the processor time\n",
               stats_of(w_pay, cfg.rounds).med / stats_of(w_before, cfg.rounds).med,
               stats_of(c_pay, cfg.rounds).med / stats_of(c_before, cfg.rounds).med);
    printf("  etl2sqlite / --no-symbols (with payloads): %.2fx the time, %.2fx the processor time\n",
           stats_of(w_pay, cfg.rounds).med / stats_of(w_nosym, cfg.rounds).med,
           stats_of(c_pay, cfg.rounds).med / stats_of(c_nosym, cfg.rounds).med);
    printf("  .import time / etl2sqlite time: %.2fx (--no-payload), %.2fx (with payloads)\n",
           stats_of(w_imp, cfg.rounds).med / stats_of(w_nopay, cfg.rounds).med,
           stats_of(w_imp, cfg.rounds).med / stats_of(w_pay, cfg.rounds).med);
    rc = 0;
out:
    unlink(trace);
    unlink(csv);
    unlink(db);
    unlink(tmp);
    return rc;
}
