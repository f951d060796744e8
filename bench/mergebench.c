/* Measures how fast libetl merges large ETL files (etl_merge_write), its peak memory, and a plain cat of the same bytes. */
#define _DEFAULT_SOURCE /* wait4: the peak RSS of one child */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"
#include "benchstat.h"

#define MAX_INPUTS 8
#define MAX_RUNS 25
#define GOAL_MBPS 500.0          /* MB (10^6 bytes) of input merged per second */
#define BUFFER_SIZE 65536u
#define START_TIME 133485408000000000LL /* 2024-01-01T00:00:00Z */
#define BOOT_TIME (START_TIME - 36000000000LL)

struct config {
    unsigned size_mib;           /* each input's size */
    unsigned runs;
    unsigned cpus;
    unsigned counts[4];          /* numbers of inputs to merge */
    unsigned ncounts;
    int keep, quick;
};

/* ------------------------------------------------------------------ inputs */

static const etl_guid providers[2] = {
    { 0x22fb2cd6, 0x0e7b, 0x422b, { 0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16 } },
    { 0xe13c0d23, 0xccbc, 0x4e12, { 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 } },
};

/* What one input holds. */
struct input {
    char path[512];
    uint64_t bytes, events;
};

/*
 * One input of about size_mib MiB, written buffer by buffer through the writer: sessions
 * recorded together on one machine (one QPC clock, one boot, one anchor), each starting at
 * the same time so that all inputs interleave event by event, which is the most work for the
 * merge. The mix of etlbench's synthetic traces (about 100 bytes an event): 40% perfinfo
 * SampledProfile, 20% CSwitch-like and 10% ThreadStart-like system events, 30%
 * EVENT_HEADER events, a third of those with a stack.
 */
static int build_input(struct input *in, unsigned index, const struct config *cfg)
{
    etl_writer_options o;
    etl_writer *w = NULL;
    uint8_t *buf[64];
    uint32_t used[64];
    uint64_t rng = 0x9E3779B97F4A7C15ull * (index + 1), target = (uint64_t)cfg->size_mib << 20;
    int64_t ts = 1000000 + 100;
    uint8_t payload[256];
    int rc = 0;

    memset(&o, 0, sizeof o);
    o.buffer_size = BUFFER_SIZE;
    o.number_of_processors = cfg->cpus;
    o.clock.type = ETL_CLOCK_PERFCOUNTER;
    o.clock.perf_freq = 10000000;
    o.clock.cpu_speed_mhz = 2100;
    o.clock.start_time = START_TIME;
    o.clock.start_timestamp = 1000000;
    o.boot_time = BOOT_TIME;
    o.logger_name = index == 0 ? "NT Kernel Logger" : "UserSession";
    if (etl_writer_open(&w, in->path, &o) != ETL_OK) {
        fprintf(stderr, "mergebench: %s\n", etl_writer_error(w));
        etl_writer_close(w, 0);
        return -1;
    }
    for (unsigned c = 0; c < cfg->cpus; c++) {
        buf[c] = malloc(BUFFER_SIZE);
        used[c] = 0x48;
        if (!buf[c]) return -1;
    }
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(rng_next(&rng) & 0x7F);
    in->events = 0;
    for (uint64_t written = 0; written < target && rc == 0;) {
        uint64_t r = rng_next(&rng);
        unsigned c = (unsigned)(r % cfg->cpus), kind = (unsigned)((r >> 8) % 10);
        uint32_t len = 16 + (uint32_t)((r >> 16) % 185), n;
        uint8_t rec[2048];
        etl_data d = { payload, len };
        ts += 1 + (int64_t)((r >> 40) % 3);
        if (kind < 4) {
            d.size = 16;
            n = etl_record_encode_perfinfo(rec, sizeof rec, ts, 0x0F2E, 2, &d, 1);
        } else if (kind < 6) {
            d.size = 24;
            n = etl_record_encode_system(rec, sizeof rec, ts, 0x0524, 4, 4, 1000 + c, &d, 1);
        } else if (kind < 7) {
            d.size = 40 + (uint32_t)((r >> 24) % 49);
            n = etl_record_encode_system(rec, sizeof rec, ts, 0x0501, 3, 4, 1000 + c, &d, 1);
        } else {
            etl_event_descriptor desc = { (uint16_t)(1 + (r >> 56) % 20), 1, 0, 4, 0, 0, 0x10 };
            uint64_t stack[16];
            etl_event_extras x = { NULL, NULL, stack, 4 + (unsigned)((r >> 48) % 13), 0, 0, NULL, 0 };
            for (unsigned k = 0; k < 16; k++) stack[k] = 0x7FF000000000ull + k * 0x40;
            n = etl_record_encode_event(rec, sizeof rec, ts, 4, 1000 + c, &providers[(r >> 60) & 1], &desc,
                                        kind == 7 ? &x : NULL, &d, 1);
        }
        if (used[c] + ((n + 7) & ~7u) > BUFFER_SIZE) {
            rc = etl_writer_write_buffer(w, buf[c], used[c], (uint16_t)c, ts, 0) == ETL_OK ? 0 : -1;
            written += BUFFER_SIZE;
            used[c] = 0x48;
        }
        memcpy(buf[c] + used[c], rec, (n + 7) & ~7u);
        used[c] += (n + 7) & ~7u;
        in->events++;
    }
    for (unsigned c = 0; c < cfg->cpus; c++) {
        if (rc == 0 && etl_writer_write_buffer(w, buf[c], used[c], (uint16_t)c, ts, c + 1 == cfg->cpus) != ETL_OK) rc = -1;
        free(buf[c]);
    }
    if (etl_writer_close(w, 0) != ETL_OK || rc != 0) {
        fprintf(stderr, "mergebench: writing %s failed\n", in->path);
        return -1;
    }
    in->events += 2; /* the header buffer's logfile header and PartitionInfo events */
    {
        struct stat st;
        if (stat(in->path, &st) != 0) return -1;
        in->bytes = (uint64_t)st.st_size;
    }
    return 0;
}

/* ------------------------------------------------------------------ measurements */

/* What one merge gave. */
struct result {
    double wall, cpu;
    uint64_t bytes_written;
    long peak_rss_kib;
};

/*
 * The merge of one measurement, in the process that measure_merge starts afresh:
 * mergebench --merge-child 0|1 OUT IN...  (1: compressed output). Exit 0, or 1 on failure.
 */
static int merge_child(int argc, char **argv)
{
    etl_merge_options mo;
    etl_merge *m = NULL;
    int rc;

    memset(&mo, 0, sizeof mo);
    mo.compress = strcmp(argv[2], "1") == 0;
    rc = etl_merge_open(&m, (const char *const *)(argv + 4), (unsigned)(argc - 4), &mo);
    if (rc != ETL_FATAL) rc = etl_merge_write(m, argv[3]);
    if (rc == ETL_FATAL) fprintf(stderr, "mergebench: %s\n", etl_merge_error(m));
    etl_merge_close(m);
    return rc == ETL_OK ? 0 : 1;
}

/* Merge inputs[0..n) into out in a fresh process (this program again, from /proc/self/exe,
   so that nothing of this one is counted): its wall time, CPU time and peak RSS (wait4's, of
   that process alone), and the size of what it wrote. */
static int measure_merge(struct input *inputs, unsigned n, const char *out, int compress, struct result *res)
{
    double t0 = bench_now_s();
    struct rusage ru;
    struct stat st;
    int status;
    pid_t pid = fork();

    if (pid < 0) return -1;
    if (pid == 0) {
        const char *argv[MAX_INPUTS + 5];
        unsigned a = 0;
        argv[a++] = "mergebench";
        argv[a++] = "--merge-child";
        argv[a++] = compress ? "1" : "0";
        argv[a++] = out;
        for (unsigned i = 0; i < n; i++) argv[a++] = inputs[i].path;
        argv[a] = NULL;
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid) return -1;
    res->wall = bench_now_s() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "mergebench: the merge exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    res->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
               (double)ru.ru_stime.tv_usec * 1e-6;
    res->peak_rss_kib = ru.ru_maxrss;
    res->bytes_written = stat(out, &st) == 0 ? (uint64_t)st.st_size : 0;
    return 0;
}

/* cat inputs[0..n) > out: the comparison point, the same bytes read and written. */
static int measure_cat(struct input *inputs, unsigned n, const char *out, double *wall)
{
    double t0 = bench_now_s();
    pid_t pid = fork();
    int status;

    if (pid < 0) return -1;
    if (pid == 0) {
        const char *argv[MAX_INPUTS + 2];
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
        argv[0] = "cat";
        for (unsigned i = 0; i < n; i++) argv[i + 1] = inputs[i].path;
        argv[n + 1] = NULL;
        execvp("cat", (char *const *)argv);
        _exit(127);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    *wall = bench_now_s() - t0;
    return 0;
}

/* The same bytes through user space: read each input 1 MiB at a time and write it out, as a
   program that copies must (cat itself copies in the kernel, with copy_file_range). */
static int measure_copy(struct input *inputs, unsigned n, const char *out, double *wall)
{
    static char buf[1 << 20];
    double t0 = bench_now_s();
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666), rc = 0;

    if (fd < 0) return -1;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        int in = open(inputs[i].path, O_RDONLY);
        ssize_t k;
        if (in < 0) { rc = -1; break; }
        while ((k = read(in, buf, sizeof buf)) > 0)
            if (write(fd, buf, (size_t)k) != k) { rc = -1; break; }
        if (k < 0) rc = -1;
        close(in);
    }
    if (close(fd) != 0) rc = -1;
    *wall = bench_now_s() - t0;
    return rc;
}

/* The output holds every input event plus its own two, in time order, without warnings. */
static int verify_output(const char *out, uint64_t input_events)
{
    etl_reader *r = NULL;
    etl_event ev;
    uint64_t n = 0, back = 0;
    int64_t last = INT64_MIN;
    int rc = etl_reader_open_path(&r, out, NULL);

    if (rc != ETL_OK) {
        fprintf(stderr, "mergebench: %s\n", etl_reader_error(r));
        etl_reader_close(r);
        return -1;
    }
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (ev.timestamp < last) back++;
        last = ev.timestamp;
        n++;
    }
    etl_reader_close(r);
    if (rc != ETL_EOF || n != input_events + 2 || back) {
        fprintf(stderr, "mergebench: %s: %llu events (want %llu), %llu back in time\n", out, (unsigned long long)n,
                (unsigned long long)input_events + 2, (unsigned long long)back);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ the run */

struct bench_case {
    unsigned n;
    int compress;
    uint64_t bytes, events;
    double mbps[MAX_RUNS], evps[MAX_RUNS], cpu_share[MAX_RUNS], cat_mbps[MAX_RUNS], copy_mbps[MAX_RUNS], ratio[MAX_RUNS];
    long rss_kib;
    uint64_t out_bytes;
};

static int run_case(const struct config *cfg, struct input *inputs, struct bench_case *bc, const char *out)
{
    struct result r;
    double cat_wall, copy_wall;

    bc->bytes = bc->events = 0;
    for (unsigned i = 0; i < bc->n; i++) {
        bc->bytes += inputs[i].bytes;
        bc->events += inputs[i].events;
    }
    bc->rss_kib = 0;
    /* A warm-up of each, so that every run finds the inputs in the page cache. */
    if (measure_merge(inputs, bc->n, out, bc->compress, &r) != 0 || verify_output(out, bc->events) != 0) return -1;
    bc->out_bytes = r.bytes_written;
    unlink(out);
    if (measure_copy(inputs, bc->n, out, &copy_wall) != 0) return -1;
    unlink(out);
    if (measure_cat(inputs, bc->n, out, &cat_wall) != 0) return -1;
    unlink(out);
    /* Merge, cat and the copy take turns, so that load from other tenants hits all three. */
    for (unsigned k = 0; k < cfg->runs; k++) {
        /* What the checked warm-up wrote, byte count for byte count. */
        if (measure_merge(inputs, bc->n, out, bc->compress, &r) != 0 || r.bytes_written != bc->out_bytes) {
            fprintf(stderr, "mergebench: run %u of %u inputs: %llu bytes written, not %llu\n", k, bc->n,
                    (unsigned long long)r.bytes_written, (unsigned long long)bc->out_bytes);
            return -1;
        }
        unlink(out);
        if (measure_cat(inputs, bc->n, out, &cat_wall) != 0) return -1;
        unlink(out);
        if (measure_copy(inputs, bc->n, out, &copy_wall) != 0) return -1;
        unlink(out);
        bc->mbps[k] = (double)bc->bytes / r.wall / 1e6;
        bc->evps[k] = (double)bc->events / r.wall / 1e6;
        bc->cpu_share[k] = r.cpu / r.wall;
        bc->cat_mbps[k] = (double)bc->bytes / cat_wall / 1e6;
        bc->copy_mbps[k] = (double)bc->bytes / copy_wall / 1e6;
        bc->ratio[k] = bc->mbps[k] / bc->cat_mbps[k];
        if (r.peak_rss_kib > bc->rss_kib) bc->rss_kib = r.peak_rss_kib;
    }
    return 0;
}

static void print_stats(struct stats s, int decimals)
{
    printf("%.*f [%.*f-%.*f]", decimals, s.med, decimals, s.min, decimals, s.max);
}

static void report_case(const struct config *cfg, const struct bench_case *bc)
{
    printf("%u inputs%s, %.0f MB, %.2f M events: merge ", bc->n, bc->compress ? " -> compressed" : "",
           (double)bc->bytes / 1e6, (double)bc->events / 1e6);
    print_stats(stats_of(bc->mbps, cfg->runs), 0);
    printf(" MB/s, ");
    print_stats(stats_of(bc->evps, cfg->runs), 2);
    printf(" M events/s, CPU %.0f%%, peak RSS %.1f MiB; cat ", 100 * stats_of(bc->cpu_share, cfg->runs).med,
           (double)bc->rss_kib / 1024);
    print_stats(stats_of(bc->cat_mbps, cfg->runs), 0);
    printf(" MB/s; read+write copy ");
    print_stats(stats_of(bc->copy_mbps, cfg->runs), 0);
    printf(" MB/s; merge/cat ");
    print_stats(stats_of(bc->ratio, cfg->runs), 2);
    if (bc->compress) printf("; output %.0f MB", (double)bc->out_bytes / 1e6);
    printf("\n");
}

static void print_machine(void)
{
    struct utsname u;
    char line[256], model[256] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");

    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *p = strchr(line, ':');
                if (p) snprintf(model, sizeof model, "%s", p + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
    uname(&u);
    printf("machine: %s, %ld online processors, %s %s; %s\n", model, sysconf(_SC_NPROCESSORS_ONLN), u.sysname,
           u.release, etl_version_details());
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = (unsigned)v;
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "Usage: mergebench [--size-mb N] [--runs N] [--cpus N] [--keep] [--quick]\n"
                "Time etl_merge_write merging 2, 4 and 8 synthetic inputs of N MiB each (default 128),\n"
                "each merge in a fresh process; its peak RSS (also at an eighth of the size); and cat\n"
                "and a read+write copy of the same bytes.\n"
                "  --size-mb N   MiB of each input (default 128)\n"
                "  --runs N      measured runs per case (default 5)\n"
                "  --cpus N      processors of the inputs (default 8)\n"
                "  --keep        keep the inputs in $TMPDIR (default /tmp)\n"
                "  --quick       16 MiB inputs, 3 runs: a smoke test\n");
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--keep") == 0) cfg->keep = 1;
        else if (strcmp(a, "--quick") == 0) { cfg->quick = 1; cfg->size_mib = 16; cfg->runs = 3; }
        else if (strcmp(a, "--help") == 0) { usage(stdout); exit(0); }
        else if (i + 1 < argc && strcmp(a, "--size-mb") == 0) {
            if (parse_uint(argv[++i], 8, 65536, &cfg->size_mib)) return -1;
        } else if (i + 1 < argc && strcmp(a, "--runs") == 0) {
            if (parse_uint(argv[++i], 1, MAX_RUNS, &cfg->runs)) return -1;
        } else if (i + 1 < argc && strcmp(a, "--cpus") == 0) {
            if (parse_uint(argv[++i], 1, 64, &cfg->cpus)) return -1;
        } else return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct config cfg = { .size_mib = 128, .runs = 5, .cpus = 8, .counts = { 2, 4, 8 }, .ncounts = 3 };
    struct input inputs[MAX_INPUTS], small[MAX_INPUTS];
    struct bench_case cases[5];
    const char *tmpdir = getenv("TMPDIR");
    char out[512];
    unsigned ncases = 0;
    int status = 0;
    double t0;

    if (argc >= 5 && strcmp(argv[1], "--merge-child") == 0) return merge_child(argc, argv);
    if (parse_args(argc, argv, &cfg) != 0) {
        usage(stderr);
        return 2;
    }
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    print_machine();
    printf("settings: %u inputs of %u MiB, %u processors, 64 KiB buffers; 1 warm-up + %u runs per case\n",
           MAX_INPUTS, cfg.size_mib, cfg.cpus, cfg.runs);
    snprintf(out, sizeof out, "%s/mergebench-%ld-out.etl", tmpdir, (long)getpid());

    t0 = bench_now_s();
    for (unsigned i = 0; i < MAX_INPUTS; i++) {
        struct config sc = cfg;
        snprintf(inputs[i].path, sizeof inputs[i].path, "%s/mergebench-%ld-%u.etl", tmpdir, (long)getpid(), i);
        snprintf(small[i].path, sizeof small[i].path, "%s/mergebench-%ld-%u-small.etl", tmpdir, (long)getpid(), i);
        sc.size_mib = cfg.size_mib / 8 ? cfg.size_mib / 8 : 1;
        if (build_input(&inputs[i], i, &cfg) != 0 || build_input(&small[i], i, &sc) != 0) return 1;
    }
    printf("built the inputs in %.1f s\n\n", bench_now_s() - t0);

    for (unsigned k = 0; k < cfg.ncounts; k++) {
        struct bench_case *bc = &cases[ncases++];
        memset(bc, 0, sizeof *bc);
        bc->n = cfg.counts[k];
        if (run_case(&cfg, inputs, bc, out) != 0) { status = 1; ncases--; continue; }
        report_case(&cfg, bc);
    }
    /* The same eight inputs at an eighth of the size: memory must not follow the size. */
    {
        struct bench_case *bc = &cases[ncases++];
        memset(bc, 0, sizeof *bc);
        bc->n = MAX_INPUTS;
        if (run_case(&cfg, small, bc, out) != 0) { status = 1; ncases--; }
        else { printf("(an eighth of the size) "); report_case(&cfg, bc); }
    }
    /* Compressed output costs XPRESS compression. */
    {
        struct bench_case *bc = &cases[ncases++];
        memset(bc, 0, sizeof *bc);
        bc->n = 2;
        bc->compress = 1;
        if (run_case(&cfg, inputs, bc, out) != 0) { status = 1; ncases--; }
        else report_case(&cfg, bc);
    }

    printf("\n");
    for (unsigned k = 0; k < ncases; k++) {
        struct stats s = stats_of(cases[k].mbps, cfg.runs);
        if (cases[k].compress) continue;
        printf("goal: %u inputs%s: %.0f MB/s median, %.2fx of %.0f MB/s: %s\n", cases[k].n,
               k == cfg.ncounts ? " (an eighth of the size)" : "", s.med, s.med / GOAL_MBPS, GOAL_MBPS,
               s.med >= GOAL_MBPS ? "met" : "NOT met");
    }
    if (ncases > cfg.ncounts)
        printf("memory: %.1f MiB peak RSS merging 8 x %u MiB, %.1f MiB merging 8 x %u MiB\n",
               (double)cases[cfg.ncounts - 1].rss_kib / 1024, cfg.size_mib, (double)cases[cfg.ncounts].rss_kib / 1024,
               cfg.size_mib / 8 ? cfg.size_mib / 8 : 1);
    if (!cfg.keep)
        for (unsigned i = 0; i < MAX_INPUTS; i++) {
            unlink(inputs[i].path);
            unlink(small[i].path);
        }
    return status;
}
