/* SPDX-License-Identifier: MIT */
/* The merge engine: inputs of every kind and clock on one clock, every event and its absolute time kept, damage reported. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check_run.h"
#include "format/format.h"
#include "synth.h"
#include "testutil.h"
#include "format/format.h"

/* ck_assert_msg reports every passing check to the runner (a write() each): too slow per event. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

#define FT_2024 133485408000000000LL /* 2024-01-01T00:00:00Z as FILETIME */
#define FT_SECOND 10000000LL

static const etl_guid prov_a = { 0x5eed00a1, 0x1111, 0x4ef0, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const etl_guid prov_b = { 0x5eed00b2, 0x2222, 0x4ef0, { 8, 7, 6, 5, 4, 3, 2, 1 } };

static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }
/* A path in the test directory that stays valid (test_dir_path's buffers rotate). */
static char *path_in_dir(const char *name)
{
    char *p = strdup(test_dir_path(name));
    REQUIRE(p != NULL, "out of memory");
    return p;
}

static char *write_file(const char *name, const void *data, size_t n)
{
    char *path = path_in_dir(name);
    FILE *f = fopen(path, "wb");

    REQUIRE(f != NULL, "%s: %s", path, strerror(errno));
    REQUIRE(fwrite(data, 1, n, f) == n && fclose(f) == 0, "%s: write failed", path);
    return path;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Files in the test directory (to see that no temporary file was left). */
static unsigned files_in_dir(void)
{
    char dir[512];
    DIR *d;
    struct dirent *e;
    unsigned n = 0;

    snprintf(dir, sizeof dir, "%s", test_dir_path("x"));
    dir[strlen(dir) - 2] = '\0';
    d = opendir(dir);
    REQUIRE(d != NULL, "%s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* What a merge reported */

struct messages {
    unsigned damage, notes;
    char first_damage[1024];
    char first_note[1024];
    int64_t first_damage_offset;
    int first_damage_input;
};

static void on_message(void *arg, const etl_merge_message *msg)
{
    struct messages *ms = arg;

    if (msg->damage) {
        if (!ms->damage++) {
            snprintf(ms->first_damage, sizeof ms->first_damage, "%s: %s", msg->path ? msg->path : "-", msg->text);
            ms->first_damage_offset = msg->offset;
            ms->first_damage_input = msg->input;
        }
    } else if (!ms->notes++) {
        snprintf(ms->first_note, sizeof ms->first_note, "%s: %s", msg->path ? msg->path : "-", msg->text);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Events reduced to what a merge must keep */

struct key {
    uint64_t digest;   /* FNV-1a of the record with its timestamp fields zeroed */
    int64_t ns;        /* absolute time: an input's through its clock source's anchor, the output's
                          through the output's header */
    int64_t own_ns;    /* an input's absolute time through its own header */
    int64_t raw;       /* raw timestamp as stored */
    int64_t pts_ns;    /* absolute time of the payload's timestamp (StackWalk, LBR), or 0 */
    uint32_t size;
    uint16_t cpu;
    int16_t input;     /* the output's: -1 */
};

struct keys {
    struct key *k;
    long n, cap;
};

static void keys_add(struct keys *ks, const struct key *k)
{
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? 2 * ks->cap : 1024;
        ks->k = realloc(ks->k, (size_t)ks->cap * sizeof *ks->k);
        REQUIRE(ks->k != NULL, "out of memory");
    }
    ks->k[ks->n++] = *k;
}

static void keys_free(struct keys *ks)
{
    free(ks->k);
    memset(ks, 0, sizeof *ks);
}

static int cmp_key(const void *a, const void *b)
{
    const struct key *x = a, *y = b;

    if (x->digest != y->digest) return x->digest < y->digest ? -1 : 1;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The digest of ev's record without its timestamps; *payload_ts the payload's timestamp, if any. */
static uint64_t record_digest(const etl_event *ev, int64_t *payload_ts)
{
    static uint8_t copy[65536];
    uint32_t off[ETL_RECORD_TIMESTAMP_FIELDS];
    unsigned n = etl_record_timestamp_fields(ev, off);
    uint64_t h = 1469598103934665603ull;

    memcpy(copy, ev->record, ev->record_size);
    *payload_ts = n > 1 ? etl_le64s(copy + off[1]) : 0;
    for (unsigned i = 0; i < n; i++) memset(copy + off[i], 0, 8);
    for (uint32_t i = 0; i < ev->record_size; i++) h = (h ^ copy[i]) * 1099511628211ull;
    return h;
}

/* Every event of an input; times through its own header and through source (its clock with
   the anchor of its clock source). */
static void collect_input(const char *path, int input, const etl_clock *source, struct keys *ks)
{
    etl_reader *r = NULL;
    etl_event ev;
    int rc = etl_reader_open_path(&r, path, NULL);

    REQUIRE(rc != ETL_FATAL, "%s: %s", path, etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        struct key k;
        int64_t pts;
        k.digest = record_digest(&ev, &pts);
        k.ns = etl_clock_time_ns(source, ev.timestamp);
        k.own_ns = etl_reader_time_ns(r, ev.timestamp);
        k.raw = ev.timestamp;
        k.pts_ns = pts ? etl_clock_time_ns(source, pts) : 0;
        k.size = ev.record_size;
        k.cpu = ev.cpu;
        k.input = (int16_t)input;
        keys_add(ks, &k);
    }
    REQUIRE(rc == ETL_EOF, "%s: %s", path, etl_reader_error(r));
    etl_reader_close(r);
}

/* What reading the output found. */
struct output {
    struct keys ev;          /* its data buffers' events */
    etl_trace_info info;
    char logger[64], file_name[64];
    long header_events;      /* events of its header buffer */
    long time_backwards;     /* time order: events earlier than the one before */
    long buffer_backwards;   /* file order: events earlier than the one before in their buffer */
    unsigned warnings;
};

static void read_output(const char *path, struct output *o)
{
    etl_reader_options opt = { .order = ETL_ORDER_FILE };
    etl_reader *r = NULL;
    etl_event ev;
    int64_t last = INT64_MIN, buffer_last = INT64_MIN;
    uint32_t buffer = UINT32_MAX;
    int rc;

    memset(o, 0, sizeof *o);
    rc = etl_reader_open_path(&r, path, NULL);
    REQUIRE(rc == ETL_OK, "%s: %s", path, etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        struct key k;
        int64_t pts;
        if (ev.timestamp < last) o->time_backwards++;
        last = ev.timestamp;
        if (ev.buffer_index == 0) {
            o->header_events++;
            continue;
        }
        k.digest = record_digest(&ev, &pts);
        k.ns = etl_reader_time_ns(r, ev.timestamp);
        k.own_ns = k.ns;
        k.raw = ev.timestamp;
        k.pts_ns = pts ? etl_reader_time_ns(r, pts) : 0;
        k.size = ev.record_size;
        k.cpu = ev.cpu;
        k.input = -1;
        keys_add(&o->ev, &k);
    }
    REQUIRE(rc == ETL_EOF, "%s: %s", path, etl_reader_error(r));
    o->warnings = etl_reader_warnings(r);
    o->info = *etl_reader_info(r);
    snprintf(o->logger, sizeof o->logger, "%s", o->info.logger_name);
    snprintf(o->file_name, sizeof o->file_name, "%s", o->info.log_file_name);
    o->info.logger_name = o->logger;
    o->info.log_file_name = o->file_name;
    etl_reader_close(r);

    /* File order: inside each buffer, time goes forward. */
    rc = etl_reader_open_path(&r, path, &opt);
    REQUIRE(rc == ETL_OK, "%s: %s", path, etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (ev.buffer_index != buffer) buffer_last = INT64_MIN;
        if (ev.timestamp < buffer_last) o->buffer_backwards++;
        buffer = ev.buffer_index;
        buffer_last = ev.timestamp;
    }
    REQUIRE(rc == ETL_EOF, "%s: %s", path, etl_reader_error(r));
    etl_reader_close(r);
}

/* Half an output tick, rounded up, plus the nanosecond that flooring both times can cost. */
static int64_t tolerance_ns(int64_t frequency)
{
    return (1000000000LL + 2 * frequency - 1) / (2 * frequency) + 1;
}

struct merge_run {
    int rc;                   /* etl_merge_write's */
    struct messages msg;
    struct output out;
    struct keys in;
    unsigned n;
    etl_merge_input_info info[32];
    etl_trace_info input_info[32];
    int64_t shift[32];        /* output raw - input raw, the same for every event of an input */
    int64_t tolerance;
    etl_merge_stats stats;
};

/*
 * Merge paths into out and check what every merge must give: the output's data buffers hold
 * exactly the inputs' events (records equal but for their timestamps), each at its absolute
 * time (through its clock source's anchor) to within half an output tick, payload timestamps
 * too; time never goes back; inputs of one clock source move by one shift; the header sums up
 * the inputs. Returns the run for more checks; free it with run_free.
 */
static void merge_and_check(const char *const *paths, unsigned n, const char *out, int compress, struct merge_run *run)
{
    etl_merge_options opt = { .compress = compress, .on_message = on_message, .on_message_arg = &run->msg };
    etl_merge *m = NULL;
    uint64_t events_lost = 0, buffers_lost = 0;
    int64_t start = INT64_MAX, end = 0;
    uint32_t cpus = 0;
    struct keys *in = &run->in, *o = &run->out.ev;

    memset(run, 0, sizeof *run);
    REQUIRE(n <= 32, "too many inputs");
    run->n = n;
    REQUIRE(etl_merge_open(&m, paths, n, &opt) != ETL_FATAL, "open: %s", etl_merge_error(m));
    ck_assert_uint_eq(etl_merge_input_count(m), n);
    run->tolerance = tolerance_ns(etl_merge_clock(m)->perf_freq);
    for (unsigned i = 0; i < n; i++) {
        ck_assert_int_eq(etl_merge_input_get(m, i, &run->info[i]), ETL_OK);
        run->input_info[i] = *run->info[i].info;
    }
    for (unsigned i = 0; i < n; i++) {
        etl_clock source;
        source = run->info[i].info->clock;
        source.start_time = run->info[run->info[i].clock_source].info->clock.start_time;
        source.start_timestamp = run->info[run->info[i].clock_source].info->clock.start_timestamp;
        collect_input(paths[i], (int)i, &source, in);
        if (run->info[i].info->clock.start_time < start) start = run->info[i].info->clock.start_time;
        if (run->info[i].info->end_time > end) end = run->info[i].info->end_time;
        if (run->info[i].info->number_of_processors > cpus) cpus = run->info[i].info->number_of_processors;
        events_lost += run->info[i].info->events_lost;
        buffers_lost += run->info[i].info->buffers_lost;
    }
    ck_assert_int_eq(etl_merge_input_get(m, n, &run->info[0]) == ETL_FAILED, 1);
    run->rc = etl_merge_write(m, out);
    REQUIRE(run->rc != ETL_FATAL, "write: %s", etl_merge_error(m));
    etl_merge_stats_get(m, &run->stats);
    etl_merge_close(m); /* the infos' pointers die here; run->input_info keeps copies */
    for (unsigned i = 0; i < n; i++) run->info[i].info = &run->input_info[i];

    read_output(out, &run->out);
    ck_assert_uint_eq(run->out.warnings, 0);
    ck_assert_int_eq(run->out.time_backwards, 0);
    ck_assert_int_eq(run->out.buffer_backwards, 0);
    ck_assert_int_eq(run->out.header_events, 2); /* its own logfile header and PartitionInfo */
    /* The multiset of events, with times. */
    ck_assert_int_eq(o->n, in->n);
    ck_assert_uint_eq(run->stats.events_merged, (uint64_t)in->n);
    ck_assert_uint_eq(run->stats.events_dropped, 0);
    qsort(in->k, (size_t)in->n, sizeof *in->k, cmp_key);
    qsort(o->k, (size_t)o->n, sizeof *o->k, cmp_key);
    for (unsigned i = 0; i < n; i++) run->shift[i] = INT64_MIN;
    for (long i = 0; i < in->n; i++) {
        const struct key *a = &in->k[i], *b = &o->k[i];
        REQUIRE(a->digest == b->digest && a->cpu == b->cpu && a->size == b->size,
                "event %ld: input %d's record (cpu %u, %u bytes) has no equal in the output", i, a->input, a->cpu,
                a->size);
        REQUIRE(llabs(b->ns - a->ns) <= run->tolerance, "event %ld of input %d: %lld ns in the output, %lld ns in "
                "the input (tolerance %lld)", i, a->input, (long long)b->ns, (long long)a->ns, (long long)run->tolerance);
        REQUIRE((a->pts_ns == 0) == (b->pts_ns == 0) && llabs(b->pts_ns - a->pts_ns) <= run->tolerance,
                "event %ld of input %d: payload timestamp %lld ns, not %lld", i, a->input, (long long)b->pts_ns,
                (long long)a->pts_ns);
        if (run->info[a->input].map.same_frequency) {
            int64_t d = b->raw - a->raw;
            if (run->shift[a->input] == INT64_MIN) run->shift[a->input] = d;
            REQUIRE(run->shift[a->input] == d, "input %d: raw timestamps moved by %lld and by %lld", a->input,
                    (long long)run->shift[a->input], (long long)d);
        }
    }
    /* One clock source, one shift: equal raw timestamps stay equal. */
    for (unsigned i = 0; i < n; i++) {
        unsigned s = run->info[i].clock_source;
        if (s != i && run->shift[i] != INT64_MIN && run->shift[s] != INT64_MIN)
            ck_assert_int_eq(run->shift[i], run->shift[s]);
    }
    /* The header. */
    ck_assert_int_eq(run->out.info.clock.type, ETL_CLOCK_PERFCOUNTER);
    ck_assert_int_eq(run->out.info.clock.start_time, start);
    ck_assert_int_ge(run->out.info.end_time, end);
    ck_assert_uint_eq(run->out.info.number_of_processors, cpus);
    ck_assert_uint_eq(run->out.info.events_lost, events_lost > UINT32_MAX ? UINT32_MAX : events_lost);
    ck_assert_uint_eq(run->out.info.buffers_lost, buffers_lost > UINT32_MAX ? UINT32_MAX : buffers_lost);
    ck_assert_uint_eq(run->out.info.log_file_mode,
                      ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_RELOG | (compress ? ETL_MODE_COMPRESSED : 0));
    ck_assert_str_eq(run->out.info.logger_name, "etlmerge");
    if (n > 1) ck_assert_str_eq(run->out.info.log_file_name, "[multiple files]");
    else ck_assert_str_eq(run->out.info.log_file_name, out); /* not the file it was written as first */
    ck_assert_uint_eq(run->out.info.buffers, run->out.info.buffers_written);
    ck_assert_uint_eq(run->stats.buffers_written + 1, run->out.info.buffers);
    if (compress) ck_assert_uint_gt(run->out.info.compressed_buffers, 0);
    ck_assert_uint_eq(run->stats.damage_reports, run->msg.damage);
    ck_assert_int_eq(run->rc, run->msg.damage ? ETL_WARN : ETL_OK);
}

static void run_free(struct merge_run *run)
{
    keys_free(&run->in);
    keys_free(&run->out.ev);
}

/* ------------------------------------------------------------------------------------------ */
/* An independent walk of an output file, by the rules of doc/format.md alone */

/* Size of the record at p, from its marker, as section 4.1 tells; 0 when it is not a record. */
static uint32_t walk_record_size(const uint8_t *p, uint32_t avail, int64_t *ts)
{
    uint32_t m = etl_le32(p);
    unsigned type = (m >> 16) & 0xFF;

    *ts = INT64_MIN;
    if ((m >> 24) == 0x90) return m & 0xFFFF;
    if ((m >> 24) != 0xC0) return 0;
    switch (type) {
    case 0x01: case 0x02: case 0x03: case 0x04: /* system, compact: Size at +4 */
        if (avail >= 0x18) *ts = etl_le64s(p + 0x10);
        return etl_le16(p + 4);
    case 0x10: case 0x11: /* perfinfo */
        *ts = etl_le64s(p + 8);
        return etl_le16(p + 4);
    case 0x0A: case 0x0B: case 0x12: case 0x13: case 0x14: case 0x15:
        if (avail >= 0x18) *ts = etl_le64s(p + 0x10);
        return m & 0xFFFF;
    default:
        return 0;
    }
}

/* One record as the walk saw it. */
struct walked {
    uint32_t buffer;
    uint32_t size;
    int64_t ts;
};

/*
 * Walk like dissect.etl (BuffersWritten buffers, each BufferSize on from the last, records up
 * to Offset, 8-byte steps) and check what it and etl-parser need: CpuSpeedInMHz set, data
 * buffers with records, SavedOffset = Offset on the 8-byte grid, compressed buffers no longer
 * than their Offset, 0xFF after the used part. Returns the records.
 */
static long independent_walk(const char *path, struct walked **out)
{
    size_t size;
    uint8_t *f = test_read_file(path, &size);
    const uint8_t *t;
    uint32_t buffers, bs;
    uint64_t off = 0;
    long n = 0, cap = 1024;
    struct walked *w = malloc((size_t)cap * sizeof *w);
    uint8_t *plain;

    REQUIRE(f != NULL && w != NULL, "%s: cannot read", path);
    t = f + ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE;
    ck_assert_uint_eq(etl_le32(f + ETL_BUFFER_HEADER_SIZE), 0xC0020002u);
    ck_assert_uint_ne(etl_le32(t + ETL_TLH_CPU_SPEED), 0);
    buffers = etl_le32(t + ETL_TLH_BUFFERS_WRITTEN);
    bs = etl_le32(t + ETL_TLH_BUFFER_SIZE);
    plain = malloc(bs);
    REQUIRE(plain != NULL, "out of memory");
    for (uint32_t b = 0; b < buffers; b++) {
        const uint8_t *h = f + off;
        uint32_t stored, used, flag;
        const uint8_t *data;
        REQUIRE(off + ETL_BUFFER_HEADER_SIZE <= size, "buffer %u of %u is beyond the end of the file", b, buffers);
        stored = etl_le32(h + ETL_BH_BUFFER_SIZE);
        used = etl_le32(h + ETL_BH_OFFSET);
        flag = etl_le16(h + ETL_BH_BUFFER_FLAG);
        REQUIRE(off + stored <= size && used % 8 == 0 && used > ETL_BUFFER_HEADER_SIZE,
                "buffer %u: BufferSize %u, Offset %u", b, stored, used);
        if (b > 0) REQUIRE(etl_le32(h + ETL_BH_SAVED_OFFSET) == used, "buffer %u: SavedOffset differs from Offset", b);
        if (flag & ETL_BUFFER_FLAG_COMPRESSED) {
            size_t got = 0, err = 0;
            REQUIRE(stored <= used, "buffer %u: compressed to %u bytes, more than its Offset %u", b, stored, used);
            ck_assert_int_eq(etl_xpress_decompress(h + ETL_BUFFER_HEADER_SIZE, stored - ETL_BUFFER_HEADER_SIZE,
                                                   plain + ETL_BUFFER_HEADER_SIZE, used - ETL_BUFFER_HEADER_SIZE,
                                                   &got, &err), ETL_XPRESS_OK);
            ck_assert_uint_eq(got, used - ETL_BUFFER_HEADER_SIZE);
            data = plain;
        } else {
            for (uint32_t i = used; i < stored; i++) REQUIRE(h[i] == 0xFF, "buffer %u: byte %u after Offset", b, i);
            data = h;
        }
        for (uint32_t pos = ETL_BUFFER_HEADER_SIZE; pos < used;) {
            int64_t ts;
            uint32_t rs = walk_record_size(data + pos, used - pos, &ts);
            REQUIRE(rs >= 8 && pos + rs <= used, "buffer %u offset %u: no record (size %u)", b, pos, rs);
            if (n == cap) {
                cap *= 2;
                w = realloc(w, (size_t)cap * sizeof *w);
                REQUIRE(w != NULL, "out of memory");
            }
            w[n].buffer = b;
            w[n].size = rs;
            w[n++].ts = ts;
            pos += etl_align8(rs);
        }
        off += stored;
    }
    ck_assert_uint_eq(off, size); /* BuffersWritten counted every buffer */
    free(plain);
    free(f);
    *out = w;
    return n;
}

/* The walk finds what libetl's reader finds in file order. */
static void check_independent_walk(const char *path)
{
    etl_reader_options opt = { .order = ETL_ORDER_FILE };
    struct walked *w;
    long n = independent_walk(path, &w), i = 0;
    etl_reader *r = NULL;
    etl_event ev;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, path, &opt), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        REQUIRE(i < n, "%s: the reader finds more than %ld records", path, n);
        REQUIRE(w[i].buffer == ev.buffer_index && w[i].size == ev.record_size &&
                (w[i].ts == INT64_MIN || w[i].ts == ev.timestamp),
                "%s: record %ld: walk buffer %u size %u ts %lld; reader buffer %u size %u ts %lld", path, i,
                w[i].buffer, w[i].size, (long long)w[i].ts, ev.buffer_index, ev.record_size, (long long)ev.timestamp);
        i++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(i, n);
    etl_reader_close(r);
    free(w);
}

/* ------------------------------------------------------------------------------------------ */
/* Synthetic inputs */

/* The clock synth_new gives a trace of these options (its defaults filled in). */
static etl_clock synth_clock(const struct synth_options *o)
{
    etl_clock c = { o->clock_type ? o->clock_type : ETL_CLOCK_PERFCOUNTER, o->perf_freq ? o->perf_freq : 10000000,
                    o->cpu_speed_mhz ? o->cpu_speed_mhz : 3000, o->start_time ? o->start_time : FT_2024,
                    o->start_timestamp ? o->start_timestamp : 1000000 };
    return c;
}

/* Raw timestamp of absolute time ns on a trace's clock (the first tick at or after it). */
static int64_t raw_at(const struct synth_options *o, int64_t ns)
{
    etl_clock c = synth_clock(o);
    return etl_clock_timestamp(&c, ns);
}

/*
 * A trace of every record kind, events at absolute times start + k * step_ns (k < count)
 * spread over the processors, each record marked with tag so that inputs never hold equal
 * records: system, compact, perfinfo with PEBS and PMC items, a StackWalk stack whose
 * EventTimeStamp is the perfinfo event's, an LBR event, classic, instance, EVENT_HEADER with
 * a stack item, WPP messages with and without a timestamp.
 */
static char *synth_trace(const char *name, const struct synth_options *so, int ptr64, uint32_t tag, long count,
                         int64_t step_ns)
{
    struct synth *s = synth_new(so);
    uint8_t rec[1024];
    int64_t t0 = etl_time_from_filetime(synth_clock(so).start_time) + 1000; /* the first event after the header's */
    unsigned cpus = so->cpus ? so->cpus : 4;
    size_t size;
    uint8_t *img;
    char *path;

    for (long k = 0; k < count; k++) {
        int64_t ts = raw_at(so, t0 + k * step_ns);
        unsigned cpu = (unsigned)((k * 7 + tag) % cpus);
        uint32_t payload[6] = { tag, (uint32_t)k, 0xABCD0000u | (uint32_t)k, 5, 6, 7 };
        uint64_t pmc[2] = { (uint64_t)k, tag };
        uint64_t pebs = 99;
        uint32_t n;
        switch (k % 11) {
        case 0: n = synth_system(rec, ptr64, 0, ts, 0x0501, 3, 100 + tag, 200 + (uint32_t)k, payload, sizeof payload); break;
        case 1: n = synth_system(rec, ptr64, 1, ts, 0x0524, 4, 100 + tag, 0, payload, 20); break;
        case 2: n = synth_perfinfo(rec, ptr64, ts, 0x0F2E, 2, &pebs, pmc, 2, payload, sizeof payload); break;
        case 3: {
            uint8_t stack[40];
            etl_put64(stack, (uint64_t)raw_at(so, t0 + (k - 1) * step_ns)); /* the perfinfo event's */
            etl_put32(stack + 8, tag);
            etl_put32(stack + 12, (uint32_t)k);
            etl_put64(stack + 16, 0x1000 + (uint64_t)k);
            etl_put64(stack + 24, 0x2000);
            etl_put64(stack + 32, 0x3000);
            n = synth_perfinfo(rec, ptr64, ts, ETL_HOOK_STACKWALK_STACK, 2, NULL, NULL, 0, stack, sizeof stack);
            break;
        }
        case 4: {
            etl_lbr_entry e[2] = { { 0x10, 0x20, tag }, { 0x30, (uint64_t)k, 0 } };
            n = etl_record_encode_lbr(rec, sizeof rec, ts, 100 + tag, 7, ETL_LBR_FILTER_USER, e, 2);
            break;
        }
        case 5: n = synth_classic(rec, ptr64, 0, ts, &prov_a, 3, 4, 2, 100 + tag, 7, payload, sizeof payload); break;
        case 6: n = synth_classic(rec, ptr64, 1, ts, &prov_b, 1, 4, 1, 100 + tag, 7, payload, 12); break;
        case 7: {
            uint8_t ext[64];
            uint64_t frames[3] = { 0, 0x7FF000 + (uint64_t)k, tag };
            uint32_t el = synth_ext_item(ext, ETL_EXT_STACK_TRACE64, frames, sizeof frames, 0);
            n = synth_event_header(rec, ptr64, ts, &prov_a, (uint16_t)(k % 9), 1, 4, 0, 0, 0xF0, 100 + tag, 7, ext, el,
                                   payload, sizeof payload);
            break;
        }
        case 8:
            n = synth_message(rec, 12, ETL_MSG_SEQUENCE | ETL_MSG_GUID | ETL_MSG_TIMESTAMP | ETL_MSG_SYSTEMINFO,
                              (uint32_t)k, &prov_b, ts, 100 + tag, 7, payload, 16);
            break;
        case 9: /* no timestamp: keeps its place after the event before it on its processor */
            n = synth_message(rec, 13, ETL_MSG_COMPONENTID, 0, NULL, 0, 0, 0, payload, 8);
            cpu = (unsigned)(((k - 1) * 7 + tag) % cpus);
            break;
        default:
            n = synth_event_header(rec, ptr64, ts, &prov_b, 1000, 0, 5, 0, 0, 0, 100 + tag, 8, NULL, 0, payload, 8 + k % 16);
            break;
        }
        REQUIRE(n > 0 && synth_add(s, cpu, rec, n) == 0, "synth_add");
    }
    img = synth_finish(s, &size);
    path = write_file(name, img, size);
    free(img);
    return path;
}

/* ------------------------------------------------------------------------------------------ */
/* Tests */

/* Three clock types at five frequencies, one boot: converted through each header, every event
   within half a tick of the output clock (10 MHz, the highest PerfFreq) of where it was. */
START_TEST(three_clock_types)
{
    struct synth_options qpc = { .cpus = 4, .perf_freq = 10000000, .start_time = FT_2024 + 7 * FT_SECOND,
                                 .start_timestamp = 123456789012LL, .boot_time = FT_2024 - 3600 * FT_SECOND };
    struct synth_options pm = { .cpus = 2, .perf_freq = 3579545, .start_time = FT_2024 + 3 * FT_SECOND,
                                .start_timestamp = 44444444444LL, .boot_time = FT_2024 - 3600 * FT_SECOND };
    struct synth_options st = { .cpus = 8, .clock_type = ETL_CLOCK_SYSTEMTIME, .start_time = FT_2024 + 5 * FT_SECOND + 3,
                                .boot_time = FT_2024 - 3600 * FT_SECOND, .events_lost = 5, .buffers_lost = 2 };
    struct synth_options cyc = { .cpus = 6, .clock_type = ETL_CLOCK_CPUCYCLE, .cpu_speed_mhz = 2893,
                                 .start_time = FT_2024 + 4 * FT_SECOND + 1234567, .start_timestamp = 987654321098765LL,
                                 .boot_time = FT_2024 - 3600 * FT_SECOND, .events_lost = 7 };
    struct merge_run run;
    char *paths[4], *out;

    make_dir();
    st.start_timestamp = st.start_time; /* SystemTime: the raw clock is FILETIME */
    paths[0] = synth_trace("qpc.etl", &qpc, 1, 1, 3000, 1001);
    paths[1] = synth_trace("pm.etl", &pm, 1, 2, 2000, 1777);
    paths[2] = synth_trace("systemtime.etl", &st, 1, 3, 2500, 1313);
    paths[3] = synth_trace("cycles.etl", &cyc, 0, 4, 2800, 997);
    out = path_in_dir("merged.etl");
    merge_and_check((const char *const *)paths, 4, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_uint_eq(run.msg.notes, 0); /* one boot */
    ck_assert_int_eq(run.out.info.clock.perf_freq, 10000000);
    ck_assert_int_eq(run.tolerance, 51);
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_uint_eq(run.info[i].clock_source, i); /* four clocks: none shared */
        /* Through its own header, which is its clock source's anchor. */
        for (long k = 0; k < run.in.n; k++) REQUIRE(run.in.k[k].ns == run.in.k[k].own_ns, "anchor");
    }
    /* 10 MHz inputs move by whole ticks; the others are converted. */
    ck_assert_int_eq(run.info[0].map.same_frequency, 1);
    ck_assert_int_eq(run.info[2].map.same_frequency, 1);
    ck_assert_int_eq(run.info[1].map.same_frequency, 0);
    ck_assert_int_eq(run.info[3].map.same_frequency, 0);
    /* The earliest input (3 s) anchors the output: its start is the output's. */
    ck_assert_int_eq(run.out.info.clock.start_time, pm.start_time);
    ck_assert_uint_eq(run.out.info.events_lost, 12);
    ck_assert_uint_eq(run.out.info.buffers_lost, 2);
    check_independent_walk(out);
    run_free(&run);
    for (unsigned i = 0; i < 4; i++) free(paths[i]);
    free(out);
    remove_dir();
}
END_TEST

/* A 1 GHz output clock (the sessions' PerfCounter): slower clocks become exact multiples. */
START_TEST(gigahertz_output)
{
    struct synth_options ns = { .cpus = 3, .perf_freq = 1000000000, .start_time = FT_2024 + 2 * FT_SECOND,
                                .start_timestamp = 5555555555555LL };
    struct synth_options qpc = { .cpus = 5, .perf_freq = 10000000, .start_time = FT_2024 + 1 * FT_SECOND,
                                 .start_timestamp = 77777777777LL };
    struct merge_run run;
    char *paths[2], *out;

    make_dir();
    paths[0] = synth_trace("ns.etl", &ns, 1, 11, 2000, 333);
    paths[1] = synth_trace("qpc.etl", &qpc, 1, 12, 2000, 900);
    out = path_in_dir("merged.etl");
    merge_and_check((const char *const *)paths, 2, out, 1, &run);
    ck_assert_int_eq(run.out.info.clock.perf_freq, 1000000000);
    ck_assert_int_eq(run.tolerance, 2);
    /* Different start times an hour after different boots: not one clock source. */
    ck_assert_uint_eq(run.info[1].clock_source, 1);
    ck_assert_uint_eq(run.msg.notes, 1);
    ck_assert_ptr_nonnull(strstr(run.msg.first_note, "another boot"));
    /* A 10 MHz tick is 100 output ticks, exactly. */
    for (long k = 0; k < run.in.n; k++)
        if (run.in.k[k].input == 1) REQUIRE(run.out.ev.k[k].ns == run.in.k[k].ns, "10 MHz -> 1 GHz is exact");
    check_independent_walk(out);
    run_free(&run);
    free(paths[0]);
    free(paths[1]);
    free(out);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Two sessions recorded together, as the kernel logger and a user session are */

/* Each event's payload starts with its place in the writing order. */
static void write_together(etl_session *kernel, etl_session *user, long count)
{
    for (long i = 0; i < count; i++) {
        uint64_t v[4] = { (uint64_t)i, 1, 2, 3 };
        etl_data d = { v, sizeof v };
        int rc;
        switch (i % 4) {
        case 0: rc = etl_session_write_system(kernel, 0, 0x0501, 3, 10, 20, &d, 1); break;
        case 1: {
            /* A sample and its stack, whose EventTimeStamp is the sample's timestamp. */
            int64_t ts = etl_session_timestamp(kernel);
            uint8_t stack[40];
            etl_data sd = { stack, sizeof stack };
            rc = etl_session_write_perfinfo(kernel, ts, 0x0F2E, 2, &d, 1);
            etl_put64(stack, (uint64_t)ts);
            etl_put32(stack + 8, 10);
            etl_put32(stack + 12, 20);
            etl_put64(stack + 16, (uint64_t)i);
            etl_put64(stack + 24, 0xFFFFF80000001000ull);
            etl_put64(stack + 32, 0x7FF000001000ull);
            if (rc == ETL_OK) rc = etl_session_write_perfinfo(kernel, ts, ETL_HOOK_STACKWALK_STACK, 2, &sd, 1);
            break;
        }
        default: {
            etl_event_descriptor desc = { (uint16_t)(i % 4), 0, 0, 4, 0, 0, 0 };
            rc = etl_session_write_event(user, &prov_a, &desc, NULL, &d, 1);
            break;
        }
        }
        REQUIRE(rc == ETL_OK, "event %ld lost", i);
    }
}

/* The place in the writing order of an event of write_together, or -1. */
static long writing_order(const etl_event *ev)
{
    if (ev->hook_id == ETL_HOOK_STACKWALK_STACK && ev->kind == ETL_KIND_PERFINFO) return -1;
    if (ev->payload_len != 32) return -1;
    if (ev->kind == ETL_KIND_EVENT && !etl_guid_equal(&ev->provider, &prov_a)) return -1;
    return (long)etl_le64(ev->payload);
}

/* A kernel session and a user session of one process, one clock: merged, every event keeps
   its place in the order it was written, and its time. */
START_TEST(recorded_together)
{
    etl_session_properties kp = { .logger_name = "NT Kernel Logger", .buffer_size_kb = 64, .maximum_buffers = 4096 };
    etl_session_properties up = { .logger_name = "UserSession", .buffer_size_kb = 16, .maximum_buffers = 4096 };
    etl_session *kernel = NULL, *user = NULL;
    etl_session_stats ks, us;
    struct merge_run run;
    char *paths[2], *out;
    etl_reader *r = NULL;
    etl_event ev;
    int64_t *ts_of, anchor_ns = 0;
    long count = 40000, seen = 0;
    int rc;

    make_dir();
    paths[0] = path_in_dir("kernel.etl");
    paths[1] = path_in_dir("user.etl");
    out = path_in_dir("merged.etl");
    kp.log_file_name = paths[0];
    up.log_file_name = paths[1];
    ck_assert_int_eq(etl_session_start(&kernel, &kp), ETL_OK);
    ck_assert_int_eq(etl_session_start(&user, &up), ETL_OK);
    write_together(kernel, user, count);
    ck_assert_int_eq(etl_session_stop(user, &us), ETL_OK);
    etl_session_close(user);
    ck_assert_int_eq(etl_session_stop(kernel, &ks), ETL_OK);
    etl_session_close(kernel);
    ck_assert_uint_eq(ks.events_lost + us.events_lost, 0);

    merge_and_check((const char *const *)paths, 2, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_uint_eq(run.msg.notes, 0);
    /* One clock source: the user session takes the kernel session's anchor (it started first),
       and both move by the same shift (checked by merge_and_check). */
    ck_assert_uint_eq(run.info[1].clock_source, 0);
    ck_assert_int_eq(run.info[0].map.same_frequency, 1);
    ck_assert_int_eq(run.out.info.clock.perf_freq, 1000000000);
    /* The anchors of two sessions agree to well under a millisecond: StartTime has 100 ns
       steps and is read apart from the raw clock. */
    for (long k = 0; k < run.in.n; k++)
        if (run.in.k[k].input == 1) {
            anchor_ns = run.in.k[k].ns - run.in.k[k].own_ns;
            break;
        }
    ck_assert_int_lt(llabs(anchor_ns), 1000000);
    for (long k = 0; k < run.in.n; k++)
        REQUIRE(llabs(run.in.k[k].ns - run.in.k[k].own_ns - (run.in.k[k].input ? anchor_ns : 0)) <= 1,
                "the anchor moves every event of an input alike");

    /* Writing order is time order in the output, across the two sessions. */
    ts_of = malloc((size_t)count * sizeof *ts_of);
    for (long i = 0; i < count; i++) ts_of[i] = INT64_MIN;
    ck_assert_int_eq(etl_reader_open_path(&r, out, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        long i = writing_order(&ev);
        if (i < 0) continue;
        REQUIRE(i < count && ts_of[i] == INT64_MIN, "event %ld twice", i);
        ts_of[i] = ev.timestamp;
        seen++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_int_eq(seen, count);
    for (long i = 1; i < count; i++)
        REQUIRE(ts_of[i] >= ts_of[i - 1], "event %ld at %lld, before event %ld at %lld", i, (long long)ts_of[i], i - 1,
                (long long)ts_of[i - 1]);
    free(ts_of);
    check_independent_walk(out);
    run_free(&run);
    free(paths[0]);
    free(paths[1]);
    free(out);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The real samples */

static unsigned sample_paths(char **paths)
{
    static const char *const names[] = {
        "airbus_AMSITrace.etl", "airbus_lxcore_kernel.etl", "krabsetw_powershell.etl",
        "perfview_SelfDescribingSingleEvent.etl", "perfview_diaghub.kernel.1.etl",
        "perfview_gcevents_PerfViewData.etl", "perfview_primitive-types.etl", "perfview_smallEtlFile.etl",
        "syzygy_log_lib_image_data_32_v0.etl", "syzygy_log_lib_image_data_64_v0.etl",
        "syzygy_log_lib_process_data_32_v1.etl", "syzygy_viewer_test_data_32_v1.etl", "tx_BondEtwSample.etl",
        "tx_HTTP_Server.etl",
    };
    unsigned n = sizeof names / sizeof names[0];
    char rel[128];

    for (unsigned i = 0; i < n; i++) {
        snprintf(rel, sizeof rel, "samples/%s", names[i]);
        paths[i] = strdup(testdata_path(rel));
    }
    return n;
}

/* All fourteen samples at once, plain and compressed: every event, at its time. */
START_TEST(all_samples)
{
    char *paths[16], *out, *outz;
    unsigned n = sample_paths(paths);
    struct merge_run run, runz;

    make_dir();
    out = path_in_dir("samples.etl");
    outz = path_in_dir("samples-z.etl");
    merge_and_check((const char *const *)paths, n, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_int_eq(run.in.n, 18716); /* the samples' tables list 18716 events */
    /* 14.31818 MHz (a Vista HPET) is the highest PerfFreq. */
    ck_assert_int_eq(run.out.info.clock.perf_freq, 14318180);
    /* The three syzygy files of one boot share a clock; the others come from eleven boots. */
    for (unsigned i = 0; i < n; i++) {
        int syzygy = strstr(paths[i], "syzygy_log_lib") != NULL;
        ck_assert_uint_eq(run.info[i].clock_source, syzygy ? 8u : i);
    }
    ck_assert_uint_eq(run.msg.notes, 13); /* every input but the first: another boot than an earlier one */
    check_independent_walk(out);

    merge_and_check((const char *const *)paths, n, outz, 1, &runz);
    ck_assert_int_eq(runz.in.n, run.in.n);
    {   /* One input: the header names the output itself (as etlrecord stop --profile's of a
           single collector), not the temporary name it was written under. */
        struct merge_run one;
        char *out1 = path_in_dir("one.etl");
        merge_and_check((const char *const *)paths, 1, out1, 0, &one);
        ck_assert_int_eq(one.rc, ETL_OK);
        run_free(&one);
        free(out1);
    }
    for (long k = 0; k < run.out.ev.n; k++)
        REQUIRE(memcmp(&run.out.ev.k[k], &runz.out.ev.k[k], sizeof run.out.ev.k[k]) == 0, "compressed event %ld differs", k);
    check_independent_walk(outz);
    run_free(&run);
    run_free(&runz);
    for (unsigned i = 0; i < n; i++) free(paths[i]);
    free(out);
    free(outz);
    remove_dir();
}
END_TEST

/* Three files of one Windows 7 boot (same BootTime, PerfFreq 2337949): raw QPC values kept
   apart by one shift; their own anchors agree with the first's to within microseconds. */
START_TEST(samples_of_one_boot)
{
    char *all[16], *paths[3], *out;
    unsigned n = sample_paths(all);
    struct merge_run run;

    make_dir();
    paths[0] = all[10]; /* process_data_32_v1, started last, listed first */
    paths[1] = all[8];
    paths[2] = all[9];
    out = path_in_dir("syzygy.etl");
    merge_and_check((const char *const *)paths, 3, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_uint_eq(run.msg.notes, 0);
    ck_assert_uint_eq(run.info[0].clock_source, 1); /* the earliest start anchors them all */
    ck_assert_uint_eq(run.info[1].clock_source, 1);
    ck_assert_uint_eq(run.info[2].clock_source, 1);
    ck_assert_int_eq(run.shift[1], 0); /* the anchor is the output's: QPC values as they were */
    ck_assert_int_eq(run.shift[0], 0);
    /* Their own anchors (StartTime, which is system time, against the QPC value then) drift
       apart between sessions: each input's events all move by one amount, under a millisecond. */
    {
        int64_t moved[3] = { INT64_MIN, INT64_MIN, INT64_MIN };
        for (long k = 0; k < run.in.n; k++) {
            const struct key *e = &run.in.k[k];
            int64_t d = e->ns - e->own_ns;
            if (moved[e->input] == INT64_MIN) moved[e->input] = d;
            REQUIRE(llabs(d - moved[e->input]) <= 1, "input %d: moved by %lld and %lld ns", e->input,
                    (long long)moved[e->input], (long long)d);
        }
        ck_assert_int_eq(moved[1], 0);
        ck_assert_int_lt(llabs(moved[0]), 1000000);
        ck_assert_int_lt(llabs(moved[2]), 1000000);
    }
    run_free(&run);
    for (unsigned i = 0; i < n; i++) free(all[i]);
    free(out);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* One boot, one clock, recorded apart: the counter drifts against the system clock */

#define DAY_FT (86400 * FT_SECOND)
#define ISSUE_FREQ 1818300 /* the PerfFreq of issue 17's two files */

/* Two files of one boot and one QPC recorded 12 days apart, the second's anchor 46.9 s from
   where the first's predicts it (issue 17): each is placed by its own header, so every event
   stays within 1 us of the time its own file gives. */
START_TEST(one_boot_far_apart)
{
    struct synth_options a = { .cpus = 2, .perf_freq = ISSUE_FREQ, .start_time = FT_2024,
                               .start_timestamp = 9000000000LL, .boot_time = FT_2024 - 3 * DAY_FT };
    struct synth_options b = a;
    struct merge_run run;
    char *paths[2], *out;

    make_dir();
    b.cpus = 3;
    b.start_time = FT_2024 + 12 * DAY_FT;
    /* What a's anchor predicts for b's start, and 46.9 s of counter more. */
    b.start_timestamp = a.start_timestamp + 12LL * 86400 * ISSUE_FREQ + 469LL * ISSUE_FREQ / 10;
    paths[0] = synth_trace("early.etl", &a, 1, 31, 1500, 700000);
    paths[1] = synth_trace("late.etl", &b, 1, 32, 1500, 700000);
    out = path_in_dir("merged.etl");
    merge_and_check((const char *const *)paths, 2, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_uint_eq(run.msg.notes, 0); /* one boot */
    ck_assert_uint_eq(run.info[0].clock_source, 0);
    ck_assert_uint_eq(run.info[1].clock_source, 1); /* its own header, not the first's anchor */
    ck_assert_uint_eq(run.info[1].same_clock_as, 0);
    ck_assert_uint_eq(run.info[0].same_clock_as, 0);
    ck_assert_int_eq(run.info[0].anchor_offset_ns, 0);
    /* What the first's anchor would have made of it: 46.9 s later. */
    ck_assert_int_le(llabs(run.info[1].anchor_offset_ns - 46900000000LL), 1);
    /* merge_and_check compared the output with ns (through the clock source's anchor): that is
       the input's own time, so every output event is within half a tick of its own file's. */
    ck_assert_int_le(run.tolerance, 1000);
    for (long k = 0; k < run.in.n; k++)
        REQUIRE(llabs(run.in.k[k].ns - run.in.k[k].own_ns) <= 1000, "input %d: %lld ns from its own file's time",
                run.in.k[k].input, (long long)(run.in.k[k].ns - run.in.k[k].own_ns));
    run_free(&run);
    free(paths[0]);
    free(paths[1]);
    free(out);
    remove_dir();
}
END_TEST

/* Files of one boot and one QPC recorded together (overlapping, or one starting seconds after
   the other ended), their anchors a few microseconds apart: one anchor, raw counters kept. */
START_TEST(one_boot_recorded_together)
{
    /* synth's files end 60 s after they start. */
    struct synth_options a = { .cpus = 2, .perf_freq = ISSUE_FREQ, .start_time = FT_2024,
                               .start_timestamp = 9000000000LL, .boot_time = FT_2024 - 3 * DAY_FT };
    struct synth_options b = a, c = a;
    struct merge_run run;
    char *paths[3], *out;

    make_dir();
    b.start_time = FT_2024 + 30 * FT_SECOND; /* overlaps a */
    b.start_timestamp = a.start_timestamp + 30LL * ISSUE_FREQ + 40; /* 22 us of drift */
    c.start_time = b.start_time + 65 * FT_SECOND; /* 5 s after b ended */
    c.start_timestamp = a.start_timestamp + 95LL * ISSUE_FREQ - 25;
    paths[0] = synth_trace("a.etl", &a, 1, 41, 2000, 20000000);
    paths[1] = synth_trace("b.etl", &b, 1, 42, 2000, 20000000);
    paths[2] = synth_trace("c.etl", &c, 1, 43, 500, 20000000);
    out = path_in_dir("merged.etl");
    merge_and_check((const char *const *)paths, 3, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    ck_assert_uint_eq(run.msg.notes, 0);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_uint_eq(run.info[i].clock_source, 0);
        ck_assert_uint_eq(run.info[i].same_clock_as, 0);
    }
    /* Their own anchors disagree with a's by 40 and -25 ticks. */
    ck_assert_int_eq(run.info[0].anchor_offset_ns, 0);
    ck_assert_int_le(llabs(run.info[1].anchor_offset_ns - 40LL * 1000000000 / ISSUE_FREQ), 1);
    ck_assert_int_le(llabs(run.info[2].anchor_offset_ns + 25LL * 1000000000 / ISSUE_FREQ), 1);
    /* One shift for all (checked by merge_and_check): equal raw counters stay equal, so the
       events interleave exactly as their raw counters do. */
    ck_assert_int_eq(run.shift[0], 0);
    ck_assert_int_eq(run.shift[1], 0);
    ck_assert_int_eq(run.shift[2], 0);
    run_free(&run);
    for (unsigned i = 0; i < 3; i++) free(paths[i]);
    free(out);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Every kind of input the reader takes */

static char *gzip_copy(const char *from, const char *name)
{
    size_t size;
    uint8_t *data = test_read_file(from, &size);
    char *path = path_in_dir(name);
    gzFile gz = gzopen(path, "wb");

    REQUIRE(data && gz, "gzip %s", from);
    REQUIRE(gzwrite(gz, data, (unsigned)size) == (int)size && gzclose(gz) == Z_OK, "gzip %s", path);
    free(data);
    return path;
}

/* Circular, NEWFILE, a buffering-mode snapshot, compressed, .etl.gz, a 32-bit session. */
START_TEST(every_kind_of_input)
{
    struct synth_options circ = { .cpus = 4, .rotate = 3, .log_file_mode = ETL_MODE_FILE_CIRCULAR,
                                  .buffer_size = 4096, .start_time = FT_2024 + 20 };
    struct synth_options z = { .cpus = 3, .compressed = 1, .start_time = FT_2024 + 40, .perf_freq = 2500000 };
    struct synth_options w32 = { .cpus = 2, .pointer_size = 4, .start_time = FT_2024 + 60, .perf_freq = 3117777 };
    etl_writer_options nf = { .buffer_size = 4096, .log_file_mode = ETL_MODE_FILE_NEWFILE, .maximum_file_size = 5 * 4096,
                              .number_of_processors = 2, .boot_time = FT_2024 - 100 * FT_SECOND,
                              .clock = { ETL_CLOCK_PERFCOUNTER, 10000000, 3000, FT_2024 + 30, 1000 } };
    etl_session_properties sp = { .logger_name = "Buffering", .log_file_mode = ETL_MODE_BUFFERING,
                                  .buffer_size_kb = 4, .minimum_buffers = 16, .clock_type = ETL_CLOCK_SYSTEMTIME };
    etl_session *s = NULL;
    etl_writer *w = NULL;
    uint8_t *b = malloc(4096);
    char *paths[9], *out;
    struct merge_run run;
    int64_t ts = 1000;

    make_dir();
    paths[0] = synth_trace("circular.etl", &circ, 1, 21, 900, 2000);
    paths[1] = synth_trace("compressed.etl", &z, 1, 22, 1500, 1500);
    paths[2] = synth_trace("wow64.etl", &w32, 0, 23, 700, 3000);
    paths[3] = gzip_copy(testdata_path("samples/tx_HTTP_Server.etl"), "http.etl.gz");
    /* NEWFILE: three files of one session, each with its own header and the same anchor. */
    ck_assert_int_eq(etl_writer_open(&w, test_dir_path("newfile-%d.etl"), &nf), ETL_OK);
    for (int i = 0; i < 12; i++) {
        uint32_t used = ETL_BUFFER_HEADER_SIZE;
        for (int e = 0; e < 20; e++) {
            uint64_t v[2] = { (uint64_t)i, (uint64_t)e };
            etl_data d = { v, sizeof v };
            etl_event_descriptor desc = { 7, 0, 0, 4, 0, 0, 0 };
            ts += 37;
            used += ETL_RECORD_SPACE(
                etl_record_encode_event(b + used, 4096 - used, ts, 1, 2, &prov_b, &desc, NULL, &d, 1));
        }
        ck_assert_int_eq(etl_writer_write_buffer(w, b, used, (uint16_t)(i % 2), ts, 0), ETL_OK);
    }
    ck_assert_int_eq(etl_writer_close(w, 0), ETL_OK);
    paths[4] = path_in_dir("newfile-1.etl");
    paths[5] = path_in_dir("newfile-2.etl");
    paths[6] = path_in_dir("newfile-3.etl");
    ck_assert_int_eq(file_exists(paths[6]), 1);
    /* A snapshot of a buffering-mode session. */
    ck_assert_int_eq(etl_session_start(&s, &sp), ETL_OK);
    for (uint64_t i = 0; i < 3000; i++) {
        etl_event_descriptor desc = { 9, 0, 0, 4, 0, 0, 0 };
        etl_data d = { &i, sizeof i };
        ck_assert_int_eq(etl_session_write_event(s, &prov_a, &desc, NULL, &d, 1), ETL_OK);
    }
    paths[7] = path_in_dir("snapshot.etl");
    ck_assert_int_eq(etl_session_snapshot(s, paths[7]), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    paths[8] = strdup(testdata_path("samples/perfview_smallEtlFile.etl")); /* compressed, 32-bit, Windows */

    out = path_in_dir("kinds.etl");
    merge_and_check((const char *const *)paths, 9, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_OK);
    /* The NEWFILE files: one clock source, the first file's anchor. */
    ck_assert_uint_eq(run.info[4].clock_source, 4);
    ck_assert_uint_eq(run.info[5].clock_source, 4);
    ck_assert_uint_eq(run.info[6].clock_source, 4);
    ck_assert_int_eq(run.out.info.clock.perf_freq, 10000000);
    check_independent_walk(out);
    run_free(&run);
    for (unsigned i = 0; i < 9; i++) free(paths[i]);
    free(out);
    free(b);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Damage */

/* A truncated input and one with a bad record: merged up to what is readable, each reported
   with its file and offset; the merge says ETL_WARN. */
START_TEST(damaged_inputs)
{
    struct synth_options a = { .cpus = 2, .start_time = FT_2024 };
    struct synth_options b = { .cpus = 2, .start_time = FT_2024 + 5 };
    char *paths[3], *out, *good;
    struct merge_run run;
    size_t size;
    uint8_t *f;

    make_dir();
    good = synth_trace("a.etl", &a, 1, 31, 3000, 1000);
    f = test_read_file(good, &size);
    paths[0] = write_file("truncated.etl", f, size - 65536 / 2); /* half the last buffer */
    free(f);
    free(good);
    good = synth_trace("b.etl", &b, 1, 32, 3000, 1000);
    f = test_read_file(good, &size);
    etl_put32(f + 2 * 65536 + 0x48, 0x12345678); /* the first record of data buffer 2 */
    paths[1] = write_file("bad-record.etl", f, size);
    free(f);
    paths[2] = good;
    out = path_in_dir("merged.etl");
    merge_and_check((const char *const *)paths, 3, out, 0, &run);
    ck_assert_int_eq(run.rc, ETL_WARN);
    ck_assert_uint_eq(run.msg.damage, 3); /* the cut buffer, the record it cuts, the bad marker */
    ck_assert_int_eq(run.msg.first_damage_input, 0);
    ck_assert_int_eq(run.msg.first_damage_offset > 65536, 1);
    ck_assert_msg(strstr(run.msg.first_damage, paths[0]) && strstr(run.msg.first_damage, "truncated"), "%s",
                  run.msg.first_damage);
    ck_assert_int_gt(run.in.n, 3 * 3000 / 2);
    run_free(&run);
    for (unsigned i = 0; i < 3; i++) free(paths[i]);
    free(out);
    remove_dir();
}
END_TEST

/* An input that cannot be read stops the merge: ETL_FATAL naming it, no output and no
   temporary file, and a file already at the output path is left as it was. */
/* The file that was at the output path before a failed merge is as it was ("keep"). */
static void check_kept(const char *out)
{
    size_t size;
    uint8_t *kept = test_read_file(out, &size);

    ck_assert_uint_eq(size, 4);
    ck_assert_int_eq(memcmp(kept, "keep", 4), 0);
    free(kept);
}

START_TEST(unreadable_inputs)
{
    struct synth_options a = { .cpus = 2 };
    static const char junk[] = "this is not an ETL file, it is text long enough to be looked at as one......."
                               "..............................................................................";
    char *paths[2], *out;
    etl_merge *m = NULL;
    unsigned files;

    make_dir();
    paths[0] = synth_trace("a.etl", &a, 1, 41, 100, 1000);
    out = write_file("existing.etl", "keep", 4);
    /* Missing. */
    paths[1] = path_in_dir("missing.etl");
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 2, NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_merge_error(m), paths[1]));
    ck_assert_int_eq(etl_merge_write(m, out), ETL_FATAL);
    etl_merge_close(m);
    free(paths[1]);
    /* Not ETL. */
    paths[1] = write_file("junk.etl", junk, sizeof junk);
    files = files_in_dir();
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 2, NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_merge_error(m), "not an ETL file"));
    etl_merge_close(m);
    ck_assert_uint_eq(files_in_dir(), files);
    check_kept(out);
    /* The output is an input. */
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 1, NULL), ETL_OK);
    ck_assert_int_eq(etl_merge_write(m, paths[0]), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_merge_error(m), "one of the inputs"));
    etl_merge_close(m);
    ck_assert_uint_eq(files_in_dir(), files);
    /* A directory that does not exist. */
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 1, NULL), ETL_OK);
    ck_assert_int_eq(etl_merge_write(m, test_dir_path("no/such/dir/out.etl")), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_merge_error(m), "no/such/dir/out.etl"));
    etl_merge_close(m);
    ck_assert_int_eq(etl_merge_open(&m, NULL, 0, NULL), ETL_FATAL);
    etl_merge_close(m);
    ck_assert_uint_eq(files_in_dir(), files);
    free(paths[0]);
    free(paths[1]);
    free(out);
    remove_dir();
}
END_TEST

/* An interrupted merge (etlmerge's Ctrl-C sets the flag) leaves no output and no temporary
   file, and an existing output is untouched. */
START_TEST(interrupted_merge)
{
    struct synth_options a = { .cpus = 2 };
    volatile sig_atomic_t cancel = 0;
    etl_merge_options mo = { .cancel = &cancel };
    char *paths[1], *out;
    etl_merge *m = NULL;
    unsigned files;

    make_dir();
    paths[0] = synth_trace("a.etl", &a, 1, 41, 100, 1000);
    out = write_file("existing.etl", "keep", 4);
    files = files_in_dir();
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 1, &mo), ETL_OK);
    cancel = 1;
    ck_assert_int_eq(etl_merge_write(m, out), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_merge_error(m), "interrupted"));
    etl_merge_close(m);
    ck_assert_uint_eq(files_in_dir(), files);
    check_kept(out);
    free(paths[0]);
    free(out);
    remove_dir();
}
END_TEST

/* Random damage to inputs never crashes a merge: it gives OK, WARN or FATAL, and whatever it
   writes reads back clean with every event it merged. */
START_TEST(random_damage)
{
    struct synth_options a = { .cpus = 3, .buffer_size = 4096 };
    struct synth_options b = { .cpus = 2, .buffer_size = 4096, .compressed = 1, .start_time = FT_2024 + 9 };
    char *clean[2], *paths[2], *out;
    uint8_t *img[2];
    size_t size[2];
    uint64_t x = 0x2545F4914F6CDD1Dull;

    make_dir();
    clean[0] = synth_trace("a.etl", &a, 1, 51, 600, 1000);
    clean[1] = synth_trace("b.etl", &b, 1, 52, 600, 1000);
    for (int i = 0; i < 2; i++) img[i] = test_read_file(clean[i], &size[i]);
    out = path_in_dir("out.etl");
    for (int round = 0; round < 150; round++) {
        etl_merge_options opt = { .compress = round % 2 };
        etl_merge *m = NULL;
        etl_merge_stats st;
        uint8_t *copy[2];
        int rc;
        for (int i = 0; i < 2; i++) {
            copy[i] = malloc(size[i]);
            memcpy(copy[i], img[i], size[i]);
            for (int k = 0; k < 1 + round % 6; k++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                copy[i][x % size[i]] = (uint8_t)(x >> 40);
            }
            paths[i] = write_file(i ? "db.etl" : "da.etl", copy[i], round % 5 == 4 ? size[i] - x % 3000 : size[i]);
            free(copy[i]);
        }
        rc = etl_merge_open(&m, (const char *const *)paths, 2, &opt);
        REQUIRE(rc == ETL_OK || rc == ETL_WARN || rc == ETL_FATAL, "round %d: open gave %d", round, rc);
        if (rc != ETL_FATAL) rc = etl_merge_write(m, out);
        REQUIRE(rc == ETL_OK || rc == ETL_WARN || rc == ETL_FATAL, "round %d: write gave %d", round, rc);
        if (rc != ETL_FATAL) {
            etl_reader *r = NULL;
            unsigned warns;
            etl_merge_stats_get(m, &st);
            REQUIRE(etl_reader_open_path(&r, out, NULL) == ETL_OK, "round %d: %s", round, etl_reader_error(r));
            REQUIRE(test_count_events(r, &warns) == (long)(st.events_merged - st.events_dropped) + 2 && warns == 0,
                    "round %d: the output does not read back", round);
            etl_reader_close(r);
            unlink(out);
        }
        etl_merge_close(m);
        ck_assert_uint_eq(files_in_dir(), 4); /* a, b, da, db: no output or temporary file left */
        free(paths[0]);
        free(paths[1]);
    }
    free(img[0]);
    free(img[1]);
    free(clean[0]);
    free(clean[1]);
    free(out);
    remove_dir();
}
END_TEST

/* A log layout 1.0 file's EVENT_INSTANCE_HEADER records cannot be carried into a 1.5 file:
   they are left out and reported, once. */
START_TEST(layout_1_0_instance_records)
{
    struct synth_options old = { .cpus = 1, .pointer_size = 4, .layout_major = 1, .layout_minor = 0 };
    struct synth *s = synth_new(&old);
    uint8_t rec[256], *img;
    struct messages msg;
    etl_merge_options opt = { .on_message = on_message, .on_message_arg = &msg };
    etl_merge *m = NULL;
    etl_merge_stats st;
    char *path, *out;
    size_t size;

    memset(&msg, 0, sizeof msg);
    make_dir();
    for (int k = 0; k < 10; k++) {
        uint32_t n = k % 2 ? synth_classic(rec, 0, 1, 2000000 + k, &prov_a, 1, 4, 0, 1, 2, "abcdefgh", 8)
                           : synth_classic(rec, 0, 0, 2000000 + k, &prov_a, 2, 4, 0, 1, 2, "abcdefgh", 8);
        ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
    }
    img = synth_finish(s, &size);
    path = write_file("old.etl", img, size);
    free(img);
    out = path_in_dir("out.etl");
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)&path, 1, &opt), ETL_OK);
    ck_assert_int_eq(etl_merge_write(m, out), ETL_WARN);
    etl_merge_stats_get(m, &st);
    ck_assert_uint_eq(st.events_dropped, 5);
    ck_assert_uint_eq(msg.damage, 1);
    ck_assert_ptr_nonnull(strstr(msg.first_damage, "layout 1.0"));
    etl_merge_close(m);
    free(path);
    free(out);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The merged stream */

/* etl_merge_next: time order across inputs, ties to the lower input, the time range, and each
   input's logfile header whatever the range. */
START_TEST(merged_stream)
{
    struct synth_options a = { .cpus = 2, .start_time = FT_2024 };
    struct synth_options b = { .cpus = 2, .start_time = FT_2024, .start_timestamp = 1000000 };
    char *paths[2];
    etl_merge *m = NULL;
    etl_merge_event me;
    int64_t last = INT64_MIN, t0 = etl_time_from_filetime(FT_2024) + 1000, from, to;
    long n = 0, headers = 0, ties = 0;
    int rc, last_input = -1;

    make_dir();
    /* Equal timestamps: the same events times in both (different tags). */
    paths[0] = synth_trace("a.etl", &a, 1, 61, 1000, 1000);
    paths[1] = synth_trace("b.etl", &b, 1, 62, 1000, 1000);
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 2, NULL), ETL_OK);
    ck_assert_int_eq(etl_merge_clock(m)->perf_freq, 10000000);
    while ((rc = etl_merge_next(m, &me)) == ETL_OK) {
        REQUIRE(me.timestamp >= last, "back in time");
        if (me.timestamp == last) {
            REQUIRE((int)me.input >= last_input, "a tie went to the higher input first");
            if ((int)me.input > last_input) ties++;
        }
        REQUIRE(me.timestamp == me.event->timestamp, "one 10 MHz clock, one anchor: timestamps unchanged");
        last = me.timestamp;
        last_input = (int)me.input;
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(n, 2 * (1000 + 2));
    ck_assert_int_gt(ties, 800);
    ck_assert_int_eq(etl_merge_next(m, &me), ETL_EOF);
    etl_merge_close(m);

    /* Events 100 to 199 of each input (1 us apart, from t0): 200 events and the 2 headers. */
    ck_assert_int_eq(etl_merge_open(&m, (const char *const *)paths, 2, NULL), ETL_OK);
    from = t0 + 100 * 1000;
    to = t0 + 199 * 1000;
    etl_merge_set_time_range(m, from, to);
    n = 0;
    while ((rc = etl_merge_next(m, &me)) == ETL_OK) {
        int64_t ns = etl_clock_time_ns(etl_merge_clock(m), me.timestamp);
        if (me.event->buffer_index == 0 && me.event->record_offset == ETL_BUFFER_HEADER_SIZE) {
            headers++;
            continue;
        }
        REQUIRE(ns >= from && ns <= to, "event at %lld outside the range", (long long)ns);
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(headers, 2);
    ck_assert_int_eq(n, 200);
    etl_merge_close(m);
    free(paths[0]);
    free(paths[1]);
    remove_dir();
}
END_TEST

/* ------------------------------------------------------------------------------------------ */

static Suite *merge_suite(void)
{
    Suite *s = suite_create("merge");
    TCase *tc = tcase_create("merge");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, three_clock_types);
    tcase_add_test(tc, gigahertz_output);
    tcase_add_test(tc, recorded_together);
    tcase_add_test(tc, all_samples);
    tcase_add_test(tc, samples_of_one_boot);
    tcase_add_test(tc, one_boot_far_apart);
    tcase_add_test(tc, one_boot_recorded_together);
    tcase_add_test(tc, every_kind_of_input);
    tcase_add_test(tc, damaged_inputs);
    tcase_add_test(tc, unreadable_inputs);
    tcase_add_test(tc, interrupted_merge);
    tcase_add_test(tc, random_damage);
    tcase_add_test(tc, layout_1_0_instance_records);
    tcase_add_test(tc, merged_stream);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(merge_suite());
}
