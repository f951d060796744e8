/* SPDX-License-Identifier: MIT */
/* Measures how fast libetl iterates events, in time and file order, on large synthetic traces and the largest sample. */
#include <dirent.h>
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
#include "format/format.h" /* buffer header offsets, to sum the buffers' used sizes */
#include "synth.h"
#include "benchstat.h"

#define MAX_RUNS 25
#define MAX_CASES 3
#define GOAL_MBPS 1000.0        /* uncompressed input: MB (10^6 bytes) of file per second */
#define GOAL_EVPS 10e6          /* uncompressed input: events per second */
#define GOAL_DECOMP_MBPS 200.0  /* compressed input: MB of decompressed output per second */

struct config {
    unsigned size_mib;   /* data per synthetic trace, before compression */
    unsigned runs;       /* measured runs (after one warm-up) */
    unsigned cpus;       /* processors of the synthetic traces */
    double min_run_s;    /* a run repeats open+iterate until it lasts this long */
    unsigned memcpy_mib; /* source size of the memcpy baseline */
    int keep, quick;
    const char *testdata;
};

/* ------------------------------------------------------------------ clocks and memory */

static double now_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Peak resident set of this process in KiB since the last reset_peak_rss() (VmHWM). */
static long peak_rss_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
        fclose(f);
    }
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

/* Linux resets VmHWM to the current RSS when "5" is written to clear_refs; 0 if it worked. */
static int reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int ok;

    if (!f) return -1;
    ok = fputs("5", f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* ------------------------------------------------------------------ statistics */


/* ------------------------------------------------------------------ synthetic traces */

/* What a consumer sees of a trace: the builder predicts it, the reader must deliver it. */
struct tally {
    uint64_t events, payload_bytes, disorder, warnings;
    uint64_t kdecoded, kfailed; /* the kernel pass: events etl_kernel_decode decoded, failed */
    unsigned x;   /* XOR of the first payload byte of every event */
    int64_t last_ts;
};

struct gen {
    uint64_t rng;
    int64_t ts;
    unsigned cpus;
    uint32_t tid[64];
    uint8_t pool[4096]; /* payload bytes repeat from here, as strings and structures do */
};

/* Providers of the EVENT_HEADER events (Kernel-Process, DotNETRuntime, and two made up). */
static const etl_guid providers[4] = {
    { 0x22fb2cd6, 0x0e7b, 0x422b, { 0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16 } },
    { 0xe13c0d23, 0xccbc, 0x4e12, { 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 } },
    { 0x5eb1c0de, 0x0001, 0x4000, { 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 } },
    { 0x5eb1c0de, 0x0002, 0x4000, { 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02 } },
};

static void gen_init(struct gen *g, unsigned cpus, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->rng = seed;
    g->ts = 1000000 + 10000;
    g->cpus = cpus;
    for (unsigned c = 0; c < cpus; c++) g->tid[c] = 1000 + 4 * c;
    for (size_t i = 0; i < sizeof g->pool; i += 8) etl_put64(g->pool + i, rng_next(&g->rng) & 0x00FF00FF7F7F0000ULL);
}

/* Payload bytes: 8 fresh ones (an address, a count), the rest from the pool. */
static void gen_payload(struct gen *g, uint8_t *out, uint32_t len)
{
    uint64_t v = rng_next(&g->rng);
    uint32_t head = len < 8 ? len : 8;

    for (uint32_t i = 0; i < head; i++) out[i] = (uint8_t)(v >> (8 * i));
    if (len > head) memcpy(out + head, g->pool + v % (sizeof g->pool - 256), len - head);
}

/*
 * One event of a kernel-plus-providers mix, about 100 bytes on average: 40% perfinfo
 * SampledProfile (32 bytes), 20% compact CSwitch (48), 10% system ThreadStart-like (72-120),
 * 30% EVENT_HEADER events with 16-200 payload bytes, a third of them with a STACK_TRACE64 item.
 * Timestamps rise on one clock; each event lands on a random processor, so every processor's
 * buffers hold increasing times and the processors interleave. Returns the record size.
 */
static uint32_t gen_event(struct gen *g, uint8_t *rec, unsigned *cpu, struct tally *expect)
{
    uint64_t r = rng_next(&g->rng);
    unsigned kind = (unsigned)(r % 100), c = (unsigned)((r >> 8) % g->cpus);
    uint8_t payload[256], ext[8 + 8 + 16 * 8], stack[8 + 16 * 8];
    uint32_t len, size, ext_len = 0;

    g->ts += 1 + (int64_t)((r >> 16) % 19);
    if (((r >> 24) & 63) == 0) g->tid[c] = 1000 + (uint32_t)((r >> 32) % 4000) * 4;
    if (kind < 40) {
        len = 16;
        etl_put64(payload, 0xfffff80000000000ULL | ((r >> 20) & 0xffffff) << 2);
        etl_put32(payload + 8, g->tid[c]);
        etl_put32(payload + 12, 1);
        size = synth_perfinfo(rec, 1, g->ts, 0x0F2E, 2, NULL, NULL, 0, payload, len);
    } else if (kind < 60) {
        len = 24;
        gen_payload(g, payload, len);
        size = synth_system(rec, 1, 1, g->ts, 0x0524, 4, 4, g->tid[c], payload, len);
    } else if (kind < 70) {
        len = 40 + 8 * (uint32_t)((r >> 40) % 7);
        gen_payload(g, payload, len);
        size = synth_system(rec, 1, 0, g->ts, 0x0501, 3, 4, g->tid[c], payload, len);
    } else {
        unsigned p = (unsigned)((r >> 40) & 3);
        len = 16 + (uint32_t)((r >> 42) % 185);
        gen_payload(g, payload, len);
        if (kind >= 90) {
            uint16_t frames = (uint16_t)(4 + (r >> 52) % 13);
            etl_put64(stack, 0);
            for (unsigned i = 0; i < frames; i++) etl_put64(stack + 8 + 8 * i, 0xfffff80000100000ULL + 64 * (i + p));
            ext_len = synth_ext_item(ext, ETL_EXT_STACK_TRACE64, stack, (uint16_t)(8 + 8 * frames), 0);
        }
        size = synth_event_header(rec, 1, g->ts, &providers[p], (uint16_t)(1 + (r >> 56) % 20), 1, 4,
                                  0, 0, 0x8000000000000010ULL, 1000 + p, g->tid[c], ext_len ? ext : NULL,
                                  ext_len, payload, len);
    }
    expect->events++;
    expect->payload_bytes += len;
    expect->x ^= payload[0];
    *cpu = c;
    return size;
}

struct built {
    char path[4096];
    uint64_t file_size;
    double build_s;
    struct tally expect;
    int ok;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Build a trace of size_mib MiB of (uncompressed) buffers and write it to b->path. */
static int build_trace(const struct config *cfg, int compressed, struct built *b)
{
    struct synth_options o;
    struct synth *s;
    struct gen g;
    uint8_t rec[1024], *image;
    size_t size;
    uint64_t target = (uint64_t)cfg->size_mib << 20;
    double t0 = now_s(CLOCK_MONOTONIC);
    int fd, rc;

    memset(&o, 0, sizeof o);
    o.buffer_size = 65536;
    o.cpus = cfg->cpus;
    o.compressed = compressed;
    o.logger_name = "EtlBench";
    s = synth_new(&o);
    gen_init(&g, cfg->cpus, compressed ? 0x9E3779B97F4A7C15ULL : 0xD1B54A32D192ED03ULL);
    memset(&b->expect, 0, sizeof b->expect);
    while ((uint64_t)synth_buffers(s) * o.buffer_size < target) {
        unsigned cpu;
        uint32_t n = gen_event(&g, rec, &cpu, &b->expect);
        if (synth_add(s, cpu, rec, n) != 0) return -1;
    }
    image = synth_finish(s, &size);
    fd = open(b->path, O_WRONLY | O_TRUNC);
    rc = fd >= 0 && write_all(fd, image, size) == 0 ? 0 : -1;
    if (fd >= 0 && close(fd) != 0) rc = -1;
    free(image);
    b->file_size = size;
    b->build_s = now_s(CLOCK_MONOTONIC) - t0;
    b->ok = rc == 0;
    return rc;
}

/*
 * Build both synthetic traces in a child process: the file images (and the builder's copy
 * of every buffer) never count towards the peak RSS of the process that reads.
 */
static int build_all(const struct config *cfg, struct built *plain, struct built *packed, long *child_rss_kib)
{
    int fds[2], status;
    pid_t pid;
    struct rusage ru;
    struct built got[2];

    if (pipe(fds) != 0) return -1;
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fds[0]);
        build_trace(cfg, 0, plain);
        build_trace(cfg, 1, packed);
        write_all(fds[1], (const uint8_t *)plain, sizeof *plain);
        write_all(fds[1], (const uint8_t *)packed, sizeof *packed);
        _exit(plain->ok && packed->ok ? 0 : 1);
    }
    close(fds[1]);
    {
        size_t want = sizeof got, have = 0;
        while (have < want) {
            ssize_t k = read(fds[0], (uint8_t *)got + have, want - have);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            have += (size_t)k;
        }
        close(fds[0]);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || have != want)
            return -1;
    }
    *plain = got[0];
    *packed = got[1];
    getrusage(RUSAGE_CHILDREN, &ru);
    *child_rss_kib = ru.ru_maxrss;
    return 0;
}

/* ------------------------------------------------------------------ reading */

struct file_facts {
    uint64_t file_size, decompressed; /* sum of the buffers' used sizes (header included) */
    uint32_t buffers, compressed_buffers, processors, buffer_size;
    struct tally header;              /* the header buffer's events, which the builder adds itself */
};

/* What the trace info says, the events of the header buffer, and the buffers' used sizes summed
   by walking the buffer headers (what decompression produces). */
static int file_facts(const char *path, struct file_facts *ff)
{
    etl_reader *r;
    uint8_t h[ETL_BUFFER_HEADER_SIZE];
    uint64_t off = 0;
    etl_reader_options o;
    int fd, rc;

    memset(&o, 0, sizeof o);
    o.order = ETL_ORDER_FILE; /* the header buffer comes first */
    rc = etl_reader_open_path(&r, path, &o);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etlbench: %s\n", etl_reader_error(r));
        etl_reader_close(r);
        return -1;
    }
    const etl_trace_info *in = etl_reader_info(r);
    etl_event ev;
    memset(&ff->header, 0, sizeof ff->header);
    while (etl_reader_next(r, &ev) == ETL_OK && ev.buffer_index == 0) {
        ff->header.events++;
        ff->header.payload_bytes += ev.payload_len;
        if (ev.payload_len) ff->header.x ^= ev.payload[0];
    }
    ff->file_size = in->file_size;
    ff->buffers = in->buffers;
    ff->compressed_buffers = in->compressed_buffers;
    ff->processors = in->number_of_processors;
    ff->buffer_size = in->buffer_size;
    etl_reader_close(r);
    ff->decompressed = 0;
    fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    while (off + sizeof h <= ff->file_size && pread(fd, h, sizeof h, (off_t)off) == (ssize_t)sizeof h) {
        uint32_t stored = etl_le32(h + ETL_BH_BUFFER_SIZE);
        if (stored < sizeof h) break;
        ff->decompressed += etl_le32(h + ETL_BH_OFFSET);
        off += stored;
    }
    close(fd);
    return 0;
}

/* Open, iterate every event as a consumer would (payload touched), close. With kernel set,
   every event also goes through etl_kernel_decode (the typed decoding the image map, kstate and
   etl2sqlite use), in file order. */
static int read_trace(const char *path, int order, int kernel, struct tally *t)
{
    etl_reader_options o;
    etl_reader *r;
    etl_event ev;
    int rc;

    memset(&o, 0, sizeof o);
    o.order = order;
    rc = etl_reader_open_path(&r, path, &o);
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etlbench: %s\n", etl_reader_error(r));
        etl_reader_close(r);
        return -1;
    }
    t->last_ts = INT64_MIN;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (kernel) {
            etl_kernel_event k;
            int kr = etl_kernel_decode(&ev, &k);
            t->kdecoded += kr == 1;
            t->kfailed += kr == ETL_FAILED;
        }
        t->events++;
        t->payload_bytes += ev.payload_len;
        if (ev.payload_len) t->x ^= ev.payload[0];
        t->disorder += ev.timestamp < t->last_ts;
        t->last_ts = ev.timestamp;
        t->warnings += rc == ETL_WARN;
    }
    if (rc != ETL_EOF) fprintf(stderr, "etlbench: %s\n", etl_reader_error(r));
    etl_reader_close(r);
    return rc == ETL_EOF ? 0 : -1;
}

/* What one pass over a file does: iterate in one of the reader's orders, only read the bytes
   (the same-run reference point the reader's speed is stated against), or iterate in file
   order decoding every event with etl_kernel_decode (its cost is this pass's over "file"). */
enum pass_kind { PASS_TIME = ETL_ORDER_TIME, PASS_FILE = ETL_ORDER_FILE, PASS_PREAD, PASS_KERNEL, PASS_KINDS };
static const char *const pass_name[PASS_KINDS] = { "time", "file", "pread", "kernel" };

/* Sequential pread of the whole file, 1 MiB at a time; counts the bytes as payload. */
static int pread_file(const char *path, struct tally *t)
{
    static uint8_t buf[1 << 20];
    uint64_t off = 0;
    ssize_t k;
    int fd = open(path, O_RDONLY);

    if (fd < 0) return -1;
    while ((k = pread(fd, buf, sizeof buf, (off_t)off)) > 0) {
        off += (uint64_t)k;
        t->x ^= buf[0];
    }
    close(fd);
    t->payload_bytes += off;
    return k == 0 ? 0 : -1;
}

struct measurement {
    unsigned reps, runs;
    double wall[MAX_RUNS], cpu[MAX_RUNS];
    struct tally one;   /* what one pass delivered (the warm-up's) */
    int consistent;     /* every pass delivered the same */
};

/* One run: reps passes over the file. */
static int timed_run(const char *path, int kind, unsigned reps, double *wall, double *cpu, struct tally *sum)
{
    double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);

    for (unsigned i = 0; i < reps; i++)
        if ((kind == PASS_PREAD    ? pread_file(path, sum)
             : kind == PASS_KERNEL ? read_trace(path, ETL_ORDER_FILE, 1, sum)
                                   : read_trace(path, kind, 0, sum)) != 0)
            return -1;
    *wall = now_s(CLOCK_MONOTONIC) - w0;
    *cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return 0;
}

/* A warm-up pass: it fills the page cache, and its time sets how many passes make one run. */
static int warm_up(const struct config *cfg, const char *path, int kind, struct measurement *m)
{
    double w, c;

    memset(m, 0, sizeof *m);
    if (timed_run(path, kind, 1, &w, &c, &m->one) != 0) return -1;
    m->reps = w >= cfg->min_run_s ? 1 : (unsigned)(cfg->min_run_s / (w > 1e-6 ? w : 1e-6)) + 1;
    m->consistent = 1;
    return 0;
}

/* The next measured run of m. */
static int measure_run(const char *path, int kind, struct measurement *m)
{
    struct tally t;
    unsigned i = m->runs++;

    memset(&t, 0, sizeof t);
    if (timed_run(path, kind, m->reps, &m->wall[i], &m->cpu[i], &t) != 0) return -1;
    if (t.events != m->one.events * m->reps || t.payload_bytes != m->one.payload_bytes * m->reps ||
        t.kdecoded != m->one.kdecoded * m->reps)
        m->consistent = 0;
    return 0;
}

/* Rate per second of `amount` per pass, over the runs. */
static struct stats rate(const struct measurement *m, double amount)
{
    double v[MAX_RUNS];
    for (unsigned i = 0; i < m->runs; i++) v[i] = amount * m->reps / m->wall[i];
    return stats_of(v, m->runs);
}

static double cpu_share(const struct measurement *m)
{
    double v[MAX_RUNS];
    for (unsigned i = 0; i < m->runs; i++) v[i] = 100.0 * m->cpu[i] / m->wall[i];
    return stats_of(v, m->runs).med;
}

/* ------------------------------------------------------------------ baselines */

/* Plain sequential pread of the whole file into a chunk-sized buffer: the cost of the bytes alone. */
static int baseline_pread(const struct config *cfg, const char *path, size_t chunk, struct stats *out)
{
    uint8_t *buf = malloc(chunk);
    double v[MAX_RUNS];
    volatile unsigned sink = 0;
    int fd = open(path, O_RDONLY);

    if (!buf || fd < 0) {
        free(buf);
        if (fd >= 0) close(fd);
        return -1;
    }
    for (unsigned run = 0; run <= cfg->runs; run++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        uint64_t total = 0;
        ssize_t k;
        while ((k = pread(fd, buf, chunk, (off_t)total)) > 0) {
            total += (uint64_t)k;
            sink ^= buf[0];
        }
        if (run > 0) v[run - 1] = (double)total / 1e6 / (now_s(CLOCK_MONOTONIC) - t0);
    }
    (void)sink;
    close(fd);
    free(buf);
    *out = stats_of(v, cfg->runs);
    return 0;
}

/* Called through a volatile pointer so that no copy can be optimised away. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

/* memcpy of a large source, 64 KiB at a time, into one cache-resident 64 KiB buffer (the
   reader's pattern: every byte crosses memory once into a small buffer). */
static int baseline_memcpy(const struct config *cfg, struct stats *out)
{
    size_t n = (size_t)cfg->memcpy_mib << 20, chunk = 65536;
    uint8_t *src = malloc(n), *dst = malloc(chunk);
    double v[MAX_RUNS];
    volatile unsigned sink = 0;

    if (!src || !dst) {
        free(src);
        free(dst);
        return -1;
    }
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)(i * 131);
    for (unsigned run = 0; run <= cfg->runs; run++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        for (size_t off = 0; off < n; off += chunk) {
            copy_fn(dst, src + off, chunk);
            sink ^= dst[off / chunk % chunk];
        }
        if (run > 0) v[run - 1] = (double)n / 1e6 / (now_s(CLOCK_MONOTONIC) - t0);
    }
    (void)sink;
    free(src);
    free(dst);
    *out = stats_of(v, cfg->runs);
    return 0;
}

/* ------------------------------------------------------------------ cases and report */

struct bench_case {
    const char *label;
    const char *path;
    const struct tally *expect; /* NULL for a real sample */
    struct file_facts ff;
    struct measurement m[PASS_KINDS];
    long peak_rss_kib;
    int valid;
};

static void print_stats(struct stats s, double scale, int decimals)
{
    char cell[64];
    snprintf(cell, sizeof cell, "%.*f [%.*f-%.*f]", decimals, s.med * scale, decimals, s.min * scale, decimals,
             s.max * scale);
    printf("  %-24s", cell);
}

static int check_case(struct bench_case *bc, int order)
{
    const struct measurement *m = &bc->m[order];
    const char *name = pass_name[order];
    int ok = 1;

    if (!m->consistent) {
        fprintf(stderr, "etlbench: %s, %s order: the passes delivered different events\n", bc->label, name);
        ok = 0;
    }
    if (bc->expect) {
        const struct tally *h = &bc->ff.header, *e = bc->expect;
        if (m->one.events != e->events + h->events || m->one.payload_bytes != e->payload_bytes + h->payload_bytes ||
            m->one.x != (e->x ^ h->x)) {
            fprintf(stderr, "etlbench: %s, %s order: %llu events, %llu payload bytes delivered; %llu, %llu built "
                    "(header buffer included)\n", bc->label, name, (unsigned long long)m->one.events,
                    (unsigned long long)m->one.payload_bytes, (unsigned long long)(e->events + h->events),
                    (unsigned long long)(e->payload_bytes + h->payload_bytes));
            ok = 0;
        }
    }
    if (order == ETL_ORDER_TIME && m->one.disorder) {
        fprintf(stderr, "etlbench: %s, time order: %llu events went back in time\n", bc->label,
                (unsigned long long)m->one.disorder);
        ok = 0;
    }
    if (m->one.warnings) {
        fprintf(stderr, "etlbench: %s, %s order: %llu warnings\n", bc->label, name,
                (unsigned long long)m->one.warnings);
        ok = 0;
    }
    return ok;
}

static int run_case(const struct config *cfg, struct bench_case *bc)
{
    int rss_reset;

    if (file_facts(bc->path, &bc->ff) != 0) return -1;
    /* The peak RSS of reading is taken over the warm-up passes, before the pread pass has
       touched its 1 MiB buffer. */
    rss_reset = reset_peak_rss();
    for (int kind = PASS_TIME; kind <= PASS_FILE; kind++)
        if (warm_up(cfg, bc->path, kind, &bc->m[kind]) != 0) return -1;
    bc->peak_rss_kib = peak_rss_kib();
    if (rss_reset != 0) bc->peak_rss_kib = -bc->peak_rss_kib; /* process-wide peak, not this case's */
    if (warm_up(cfg, bc->path, PASS_PREAD, &bc->m[PASS_PREAD]) != 0) return -1;
    if (warm_up(cfg, bc->path, PASS_KERNEL, &bc->m[PASS_KERNEL]) != 0) return -1;
    /* The passes take turns, so that a burst of load from other tenants of the machine falls
       on all of them alike and their ratios stay meaningful. */
    for (unsigned i = 0; i < cfg->runs; i++)
        for (int kind = 0; kind < PASS_KINDS; kind++)
            if (measure_run(bc->path, kind, &bc->m[kind]) != 0) return -1;
    bc->valid = check_case(bc, ETL_ORDER_TIME) & check_case(bc, ETL_ORDER_FILE) & check_case(bc, PASS_KERNEL);
    return 0;
}

static void report_case(const struct bench_case *bc)
{
    const struct file_facts *ff = &bc->ff;
    uint64_t events = bc->m[ETL_ORDER_TIME].one.events;

    printf("\n%s: %s\n", bc->label, bc->path);
    printf("  %.1f MB file, %.1f MB of used buffer bytes (%s), %u buffers of %u KiB, %u processors,\n"
           "  %llu events (%.1f file bytes/event), peak RSS while reading %.1f MiB%s"
           " (processors x buffer size = %.2f MiB)\n",
           ff->file_size / 1e6, ff->decompressed / 1e6,
           ff->compressed_buffers ? "decompressed" : "uncompressed", ff->buffers, ff->buffer_size / 1024,
           ff->processors, (unsigned long long)events, events ? (double)ff->file_size / (double)events : 0.0,
           (bc->peak_rss_kib < 0 ? -bc->peak_rss_kib : bc->peak_rss_kib) / 1024.0,
           bc->peak_rss_kib < 0 ? " (whole process: VmHWM could not be reset)" : "",
           (double)ff->processors * ff->buffer_size / 1048576.0);
    if (ff->compressed_buffers)
        printf("  compression ratio %.2f (used bytes / file bytes)\n", (double)ff->decompressed / (double)ff->file_size);
    printf("  %-6s %5s  %-24s  %-24s  %-24s  %s\n", "pass", "reps", "Mevents/s med [min-max]",
           "file MB/s med [min-max]", ff->compressed_buffers ? "decomp MB/s med [min-max]" : "", "cpu%");
    for (int kind = 0; kind < PASS_KINDS; kind++) {
        const struct measurement *m = &bc->m[kind];
        printf("  %-6s %5u", pass_name[kind], m->reps);
        if (kind == PASS_PREAD) {
            printf("  %-24s", "-");
            print_stats(rate(m, (double)ff->file_size), 1e-6, 0);
            printf("  %-24s  %.0f\n", "", cpu_share(m));
            continue;
        }
        print_stats(rate(m, (double)m->one.events), 1e-6, 2);
        print_stats(rate(m, (double)ff->file_size), 1e-6, 0);
        if (ff->compressed_buffers) print_stats(rate(m, (double)ff->decompressed), 1e-6, 0);
        else printf("  %-24s", "");
        printf("  %.0f\n", cpu_share(m));
    }
    /* The kernel pass against the file pass of the same runs: what the typed decoding adds. */
    {
        const struct measurement *k = &bc->m[PASS_KERNEL], *f = &bc->m[PASS_FILE];
        double ke = rate(k, (double)k->one.events).med, fe = rate(f, (double)f->one.events).med;
        printf("  kernel: %llu of %llu events decoded by etl_kernel_decode (%llu failed); "
               "%.1f ns/event over the file pass\n",
               (unsigned long long)k->one.kdecoded, (unsigned long long)k->one.events,
               (unsigned long long)k->one.kfailed, ke > 0 && fe > 0 ? (1e9 / ke - 1e9 / fe) : 0.0);
    }
}

/* The goal line of one case and order; returns 1 if the goal is met. */
static int verdict(const struct bench_case *bc, int order)
{
    const struct measurement *m = &bc->m[order];
    double evps = rate(m, (double)m->one.events).med, mbps = rate(m, (double)bc->ff.file_size).med / 1e6;
    double pread_mbps = rate(&bc->m[PASS_PREAD], (double)bc->ff.file_size).med / 1e6;
    int met;

    printf("%-29s %-4s order: ", bc->label, pass_name[order]);
    if (bc->ff.compressed_buffers) {
        double dec = rate(m, (double)bc->ff.decompressed).med / 1e6;
        met = dec >= GOAL_DECOMP_MBPS;
        printf("%.0f MB/s decompressed = %.2fx of %.0f (file %.0f MB/s, %.2fx of pread)",
               dec, dec / GOAL_DECOMP_MBPS, GOAL_DECOMP_MBPS, mbps, pread_mbps > 0 ? mbps / pread_mbps : 0.0);
    } else {
        met = mbps >= GOAL_MBPS && evps >= GOAL_EVPS;
        printf("%.0f MB/s = %.2fx of %.0f, %.2f M events/s = %.2fx of %.0f M; %.2fx of pread",
               mbps, mbps / GOAL_MBPS, GOAL_MBPS, evps / 1e6, evps / GOAL_EVPS, GOAL_EVPS / 1e6,
               pread_mbps > 0 ? mbps / pread_mbps : 0.0);
    }
    printf(": goal %s%s\n", met ? "met" : "NOT met", bc->valid ? "" : " (INVALID: see errors above)");
    return met;
}

/* ------------------------------------------------------------------ setup */

/* The largest .etl under dir/samples, or NULL. */
static char *largest_sample(const char *dir)
{
    char d[4096], p[4096 + 258], *best = NULL;
    off_t best_size = -1;
    struct dirent *de;
    DIR *dh;

    snprintf(d, sizeof d, "%s/samples", dir);
    dh = opendir(d);
    if (!dh) return NULL;
    while ((de = readdir(dh)) != NULL) {
        struct stat st;
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".etl") != 0) continue;
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > best_size) {
            best_size = st.st_size;
            free(best);
            best = strdup(p);
        }
    }
    closedir(dh);
    return best;
}

static void print_machine(void)
{
    char line[512], model[256] = "unknown";
    struct utsname u;
    FILE *f = fopen("/proc/cpuinfo", "r");

    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) snprintf(model, sizeof model, "%s", c + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        fclose(f);
    }
    printf("machine: %ld processors online, CPU \"%s\"", sysconf(_SC_NPROCESSORS_ONLN), model);
    if (uname(&u) == 0) printf(", %s %s %s", u.sysname, u.release, u.machine);
    printf("\n%s; etlbench built %s optimisation\n", etl_version_details(),
#ifdef __OPTIMIZE__
           "with"
#else
           "WITHOUT"
#endif
    );
}

static void usage(FILE *to)
{
    fprintf(to,
            "Usage: etlbench [OPTION]... [TESTDATA_DIR]\n"
            "Time libetl's event iteration (time order and file order) on two synthetic traces\n"
            "(uncompressed and XPRESS-compressed) and on the largest TESTDATA_DIR/samples/*.etl.\n\n"
            "  --size-mb N   MiB of buffers in each synthetic trace, before compression (default 1024)\n"
            "  --runs N      measured runs after one warm-up (default 5, at most %d)\n"
            "  --cpus N      processors of the synthetic traces (default 8)\n"
            "  --keep        keep the synthetic traces in $TMPDIR (default /tmp)\n"
            "  --quick       small traces and short runs: a smoke test\n"
            "  -h, --help    show this help\n\n"
            "Exit status: 0 when every measurement was valid (goals met or not), 1 otherwise.\n",
            MAX_RUNS);
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    unsigned long v;

    if (!s) return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
    unsigned size = 0, runs = 0;

    memset(cfg, 0, sizeof *cfg);
    cfg->cpus = 8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--size-mb") == 0) {
            if (parse_uint(value, 1, 1u << 16, &size) != 0) return -1;
            i++;
        } else if (strcmp(a, "--runs") == 0) {
            if (parse_uint(value, 1, MAX_RUNS, &runs) != 0) return -1;
            i++;
        } else if (strcmp(a, "--cpus") == 0) {
            if (parse_uint(value, 1, 64, &cfg->cpus) != 0) return -1;
            i++;
        } else if (strcmp(a, "--keep") == 0) {
            cfg->keep = 1;
        } else if (strcmp(a, "--quick") == 0) {
            cfg->quick = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] == '-' || cfg->testdata) {
            return -1;
        } else {
            cfg->testdata = a;
        }
    }
    cfg->size_mib = size ? size : cfg->quick ? 16 : 1024;
    cfg->runs = runs ? runs : cfg->quick ? 3 : 5;
    cfg->min_run_s = cfg->quick ? 0.2 : 1.0;
    cfg->memcpy_mib = cfg->quick ? 32 : 256;
    if (!cfg->testdata) cfg->testdata = getenv("ETL_TESTDATA");
    return 0;
}

static int make_temp(struct built *b, const char *what)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    if (!dir || !*dir) dir = "/tmp";
    snprintf(b->path, sizeof b->path, "%s/etlbench-%s-XXXXXX", dir, what);
    fd = mkstemp(b->path);
    if (fd < 0) {
        fprintf(stderr, "etlbench: cannot create a file in %s: %s\n", dir, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    struct config cfg;
    struct built plain, packed;
    struct bench_case cases[MAX_CASES];
    struct stats pread_64k, copy;
    unsigned ncases = 0, met = 0, goals = 0;
    long child_rss = 0;
    char *sample = NULL;
    int status = 0;

    if (parse_args(argc, argv, &cfg) != 0) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    print_machine();
    printf("settings: %u MiB per synthetic trace, %u processors, 64 KiB buffers; 1 warm-up + %u runs per case; "
           "a run repeats open+iterate+close until it lasts %.1f s\n",
           cfg.size_mib, cfg.cpus, cfg.runs, cfg.min_run_s);
    printf("one thread; files are read with pread (etl_reader_open_path) and sit in the page cache after the "
           "warm-up, so this is the reader's CPU cost plus the kernel's copy, not the disk's speed\n");

    memset(&plain, 0, sizeof plain);
    memset(&packed, 0, sizeof packed);
    if (make_temp(&plain, "uncompressed") != 0 || make_temp(&packed, "compressed") != 0) return 1;
    printf("\nbuilding the synthetic traces in a child process...\n");
    if (build_all(&cfg, &plain, &packed, &child_rss) != 0) {
        fprintf(stderr, "etlbench: building the synthetic traces failed\n");
        status = 1;
        goto out;
    }
    printf("  uncompressed: %.1f MB, %llu events, built in %.1f s\n", plain.file_size / 1e6,
           (unsigned long long)plain.expect.events, plain.build_s);
    printf("  compressed:   %.1f MB, %llu events, built in %.1f s\n", packed.file_size / 1e6,
           (unsigned long long)packed.expect.events, packed.build_s);
    printf("  builder peak RSS %.0f MiB (not part of the figures below)\n", child_rss / 1024.0);

    memset(cases, 0, sizeof cases);
    cases[ncases++] = (struct bench_case){ .label = "synthetic, uncompressed", .path = plain.path, .expect = &plain.expect };
    cases[ncases++] = (struct bench_case){ .label = "synthetic, XPRESS-compressed", .path = packed.path, .expect = &packed.expect };
    sample = cfg.testdata ? largest_sample(cfg.testdata) : NULL;
    if (sample) cases[ncases++] = (struct bench_case){ .label = "largest sample", .path = sample };
    else printf("no TESTDATA_DIR/samples/*.etl: the real sample is skipped\n");

    for (unsigned i = 0; i < ncases; i++) {
        if (run_case(&cfg, &cases[i]) != 0) {
            fprintf(stderr, "etlbench: reading %s failed\n", cases[i].path);
            status = 1;
            goto out;
        }
        if (!cases[i].valid) status = 1;
        report_case(&cases[i]);
    }

    printf("\nmore reference points (same run, med [min-max] of %u runs after a warm-up):\n", cfg.runs);
    if (baseline_pread(&cfg, plain.path, 65536, &pread_64k) != 0 || baseline_memcpy(&cfg, &copy) != 0) {
        fprintf(stderr, "etlbench: a baseline failed\n");
        status = 1;
        goto out;
    }
    printf("  pread of the uncompressed trace, 64 KiB at a time:   %6.0f MB/s [%.0f-%.0f]\n", pread_64k.med,
           pread_64k.min, pread_64k.max);
    printf("  memcpy of %u MiB, 64 KiB at a time into one buffer: %6.0f MB/s [%.0f-%.0f]\n", cfg.memcpy_mib, copy.med,
           copy.min, copy.max);

    printf("\ngoals (medians; MB = 10^6 bytes; \"pread\" = the same file read with pread, 1 MiB at a time, "
           "in turn with the reader's runs):\n");
    for (unsigned i = 0; i < ncases; i++)
        for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
            int ok = verdict(&cases[i], order);
            if (order == ETL_ORDER_TIME) {
                goals++;
                met += (unsigned)ok;
            }
        }
    printf("time order (the goal's subject): %u of %u goals met%s\n", met, goals,
           cfg.quick ? " (--quick: sizes below the goal's 1 GB; for a smoke test only)" : "");
out:
    free(sample);
    if (!cfg.keep) {
        unlink(plain.path);
        unlink(packed.path);
    } else {
        printf("kept %s and %s\n", plain.path, packed.path);
    }
    return status;
}
