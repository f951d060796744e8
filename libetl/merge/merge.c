/* SPDX-License-Identifier: MIT */
/* Merging ETL files: every input's events in one time order on one PerfCounter clock, streamed to one file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"

#define NS_PER_SECOND 1000000000LL
/* Inputs of one clock type and frequency without a BootTime are taken to share a boot when
   their counters started (StartTime minus the header timestamp's ticks) within this much. */
#define SAME_BOOT_TOLERANCE_NS NS_PER_SECOND
/* Inputs of one clock source are recorded together, and share one anchor, when their time
   ranges (StartTime to EndTime by their own headers) overlap or one starts at most this long
   after the other ended. Over such a gap a performance counter drifts from the system clock
   by well under a millisecond (45 ppm in issue 17's files: 0.45 ms in 10 s), the size of the
   anchors' own disagreement (0.35 ms between Windows sessions started 12 s apart); over days
   it drifts by seconds, and each input's own header places it better (doc/format.md
   section 17). In FILETIME units. */
#define RECORDED_TOGETHER_GAP (10 * 10000000LL)
/* The output clock when no input has a PerfCounter clock: Windows' QPC frequency. */
#define DEFAULT_FREQUENCY 10000000
#define DEFAULT_OUTPUT_BUFFER_SIZE 65536u
#define MIN_OUTPUT_BUFFER_SIZE 4096u
/* Output buffers beyond the processors the inputs declare (damaged processor numbers) are
   all written out when they would take more than this. */
#define MIN_OUTPUT_BUFFER_MEMORY (64u << 20)

struct merge_input {
    etl_merge *m;
    unsigned index;
    char *path;
    etl_reader *r;
    dev_t dev;
    ino_t ino;
    int have_stat;
    unsigned clock_source;
    unsigned same_clock_as;
    int64_t anchor_offset_ns;
    int64_t together_end;     /* of a clock source's first input: the latest end of those recorded with it */
    etl_clock_map map;
    int old_instance_header;  /* layout < 1.1: type 0x0B records are EVENT_INSTANCE_HEADERs */
    int dropped_reported;
    etl_event ev;             /* the event waiting in the heap */
    int64_t ts;               /* its timestamp on the merge's clock */
};

struct etl_merge {
    etl_merge_options opt;
    struct merge_input *in;
    unsigned n;
    struct merge_input **heap; /* min-heap of inputs by (ts, index) */
    unsigned heap_n;
    struct merge_input *last;  /* input of the event last delivered: advanced on the next call */
    int started;
    int fatal;
    int pending_warn;
    unsigned earliest;         /* the input with the earliest StartTime */
    etl_clock clock;
    int64_t from_ts, to_ts;    /* time range on the merge's clock */
    etl_merge_stats stats;
    char err[1024];
};

/* ---------------------------------------------------------------- messages */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fatal(etl_merge *m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(m->err, sizeof m->err, fmt, ap);
    va_end(ap);
    m->fatal = 1;
}

static void report(etl_merge *m, int damage, int input, int64_t offset, const char *text)
{
    etl_merge_message msg;

    if (damage) {
        m->stats.damage_reports++;
        m->pending_warn = 1;
    }
    if (!m->opt.on_message) return;
    msg.damage = damage;
    msg.input = input;
    msg.path = input >= 0 ? m->in[input].path : NULL;
    msg.offset = offset;
    msg.text = text;
    m->opt.on_message(m->opt.on_message_arg, &msg);
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void reportf(etl_merge *m, int damage, int input, int64_t offset, const char *fmt, ...)
{
    char text[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    report(m, damage, input, offset, text);
}

/* A message of a reader or writer without the "name: " it starts with. */
static const char *without_name(const char *msg, const char *name)
{
    size_t n = strlen(name);

    return strncmp(msg, name, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

static void on_damage(void *arg, int64_t offset, const char *message)
{
    struct merge_input *in = arg;

    report(in->m, 1, (int)in->index, offset, without_name(message, in->path));
}

const char *etl_merge_error(const etl_merge *m) { return m ? m->err : "out of memory"; }
const etl_clock *etl_merge_clock(const etl_merge *m) { return &m->clock; }
unsigned etl_merge_input_count(const etl_merge *m) { return m->n; }
void etl_merge_stats_get(const etl_merge *m, etl_merge_stats *out) { *out = m->stats; }

int etl_merge_input_get(const etl_merge *m, unsigned index, etl_merge_input_info *out)
{
    if (index >= m->n) return ETL_FAILED;
    out->path = m->in[index].path;
    out->info = etl_reader_info(m->in[index].r);
    out->clock_source = m->in[index].clock_source;
    out->same_clock_as = m->in[index].same_clock_as;
    out->anchor_offset_ns = m->in[index].anchor_offset_ns;
    out->map = m->in[index].map;
    return ETL_OK;
}

/* ---------------------------------------------------------------- the common clock */

/* 1 when two inputs were recorded in the same boot, 0 when not, -1 when it cannot be told. */
static int same_boot(const etl_trace_info *a, const etl_trace_info *b)
{
    int64_t za, zb;

    if (a->boot_time && b->boot_time) return a->boot_time == b->boot_time;
    if (a->clock.type != b->clock.type || etl_clock_frequency(&a->clock) != etl_clock_frequency(&b->clock))
        return -1;
    /* Without BootTime: the time at which each counter read 0. Counters that start at boot
       (QPC, the monotonic clock, the cycle counter) agree on it within one boot. */
    za = etl_clock_time_ns(&a->clock, 0);
    zb = etl_clock_time_ns(&b->clock, 0);
    return (za > zb ? (uint64_t)za - (uint64_t)zb : (uint64_t)zb - (uint64_t)za) <= SAME_BOOT_TOLERANCE_NS;
}

/* Same clock, same frequency, same boot: raw timestamps of the two can be compared as they are. */
static int same_clock_source(const etl_trace_info *a, const etl_trace_info *b)
{
    return a->clock.type == b->clock.type && etl_clock_frequency(&a->clock) == etl_clock_frequency(&b->clock) &&
           same_boot(a, b) == 1;
}

static const etl_trace_info *info_of(const etl_merge *m, unsigned i) { return etl_reader_info(m->in[i].r); }

/* Inputs ordered by StartTime, then by index. */
static int starts_before(const etl_merge *m, unsigned a, unsigned b)
{
    int64_t sa = info_of(m, a)->clock.start_time, sb = info_of(m, b)->clock.start_time;

    return sa < sb || (sa == sb && a < b);
}

/*
 * The merge's clock: PerfCounter at the highest PerfFreq of the PerfCounter inputs (so that
 * they keep every tick, and the common case of one QPC frequency is a plain shift), else
 * Windows' 10 MHz; anchored at the earliest input's StartTime, where it reads what that
 * input's clock read, at this frequency.
 */
static void choose_clock(etl_merge *m)
{
    const etl_trace_info *e;
    int64_t freq = 0, fe;

    m->earliest = 0;
    for (unsigned i = 0; i < m->n; i++) {
        const etl_clock *c = &info_of(m, i)->clock;
        if (c->type == ETL_CLOCK_PERFCOUNTER && c->perf_freq > freq && c->perf_freq <= (1LL << 36)) freq = c->perf_freq;
        if (starts_before(m, i, m->earliest)) m->earliest = i;
    }
    e = info_of(m, m->earliest);
    memset(&m->clock, 0, sizeof m->clock);
    m->clock.type = ETL_CLOCK_PERFCOUNTER;
    m->clock.perf_freq = freq ? freq : DEFAULT_FREQUENCY;
    m->clock.cpu_speed_mhz = e->clock.cpu_speed_mhz;
    m->clock.start_time = e->clock.start_time;
    fe = etl_clock_frequency(&e->clock);
    if (fe <= 0) fe = DEFAULT_FREQUENCY; /* as etl_clock_time_ns takes it */
    if (fe == m->clock.perf_freq) {
        m->clock.start_timestamp = e->clock.start_timestamp;
    } else {
        __int128 t0 = (__int128)e->clock.start_timestamp * m->clock.perf_freq / fe;
        m->clock.start_timestamp = t0 > INT64_MAX ? INT64_MAX : t0 < INT64_MIN ? INT64_MIN : (int64_t)t0;
    }
}

/* The end of an input's time range by its own header: EndTime, or StartTime when it has none
   (its session did not finish). FILETIME. */
static int64_t end_of(const etl_trace_info *info)
{
    return info->end_time > info->clock.start_time ? info->end_time : info->clock.start_time;
}

/* Absolute time of the input's StartTime through another input's anchor, minus its StartTime. */
static int64_t anchor_offset(const etl_trace_info *info, const etl_trace_info *other)
{
    etl_clock c = info->clock;
    __int128 d;

    c.start_time = other->clock.start_time;
    c.start_timestamp = other->clock.start_timestamp;
    d = (__int128)etl_clock_time_ns(&c, info->clock.start_timestamp) - etl_clock_time_ns(&info->clock, info->clock.start_timestamp);
    return d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

/*
 * Each input's anchor and its map. Inputs are taken by start; an input joins the first earlier
 * input of its clock source (same clock, frequency and boot) that anchors others and whose
 * inputs so far reach to within RECORDED_TOGETHER_GAP of its start, and takes that input's
 * anchor; otherwise it anchors itself (its own header).
 */
static int place_inputs(etl_merge *m)
{
    unsigned *order = malloc(m->n * sizeof *order);

    if (!order) {
        fatal(m, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < m->n; i++) order[i] = i;
    for (unsigned i = 1; i < m->n; i++) /* insertion sort by start: inputs are few */
        for (unsigned j = i; j > 0 && starts_before(m, order[j], order[j - 1]); j--) {
            unsigned t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (unsigned k = 0; k < m->n; k++) {
        struct merge_input *in = &m->in[order[k]];
        const etl_trace_info *info = etl_reader_info(in->r);
        etl_clock from = info->clock;
        in->clock_source = in->index;
        in->same_clock_as = in->index;
        for (unsigned j = 0; j < k; j++) {
            struct merge_input *ref = &m->in[order[j]];
            if (ref->clock_source != ref->index || !same_clock_source(info, etl_reader_info(ref->r))) continue;
            if (in->same_clock_as == in->index) in->same_clock_as = ref->same_clock_as;
            if ((__int128)info->clock.start_time <= (__int128)ref->together_end + RECORDED_TOGETHER_GAP) {
                in->clock_source = ref->index;
                if (end_of(info) > ref->together_end) ref->together_end = end_of(info);
                break;
            }
        }
        if (in->clock_source == in->index) in->together_end = end_of(info);
        in->anchor_offset_ns =
            in->clock_source != in->index ? anchor_offset(info, info_of(m, in->clock_source))
            : in->same_clock_as != in->index ? anchor_offset(info, info_of(m, in->same_clock_as)) : 0;
        /* Shared source: the reference's anchor, so that equal raw timestamps stay equal. */
        from.start_time = info_of(m, in->clock_source)->clock.start_time;
        from.start_timestamp = info_of(m, in->clock_source)->clock.start_timestamp;
        if (etl_clock_map_init(&in->map, &from, &m->clock) != ETL_OK) {
            char t[40];
            fatal(m, "%s: its clock (%s at %lld Hz, started %s) cannot be put on the merge's clock", in->path,
                  etl_clock_type_name(from.type), (long long)etl_clock_frequency(&from),
                  etl_time_format(etl_time_from_filetime(from.start_time), t, sizeof t));
            free(order);
            return -1;
        }
    }
    free(order);
    return 0;
}

/* A note for each input recorded in another boot than an earlier input. */
static void note_boots(etl_merge *m)
{
    for (unsigned i = 1; i < m->n; i++)
        for (unsigned j = 0; j < i; j++) {
            const etl_trace_info *a = info_of(m, i), *b = info_of(m, j);
            char ta[40], tb[40];
            if (same_boot(a, b) != 0) continue;
            if (a->boot_time && b->boot_time)
                reportf(m, 0, (int)i, -1, "recorded in another boot than %s (BootTime %s, not %s): its events are "
                        "placed by absolute time", m->in[j].path, etl_time_format(etl_time_from_filetime(a->boot_time),
                        ta, sizeof ta), etl_time_format(etl_time_from_filetime(b->boot_time), tb, sizeof tb));
            else
                reportf(m, 0, (int)i, -1, "its %s clock did not start when that of %s did (another boot): its events "
                        "are placed by absolute time", etl_clock_type_name(a->clock.type), m->in[j].path);
            break;
        }
}

/* ---------------------------------------------------------------- opening */

int etl_merge_open(etl_merge **out, const char *const *paths, unsigned count, const etl_merge_options *opt)
{
    etl_merge *m = calloc(1, sizeof *m);
    int warned = 0;

    *out = m;
    if (!m) return ETL_FATAL;
    if (opt) m->opt = *opt;
    m->from_ts = INT64_MIN;
    m->to_ts = INT64_MAX;
    if (count == 0) {
        fatal(m, "no input");
        return ETL_FATAL;
    }
    m->in = calloc(count, sizeof *m->in);
    m->heap = calloc(count, sizeof *m->heap);
    if (!m->in || !m->heap) {
        fatal(m, "out of memory");
        return ETL_FATAL;
    }
    for (unsigned i = 0; i < count; i++) {
        struct merge_input *in = &m->in[i];
        etl_reader_options o;
        struct stat st;
        int rc;

        in->m = m;
        in->index = i;
        in->path = strdup(paths[i]);
        if (!in->path) {
            fatal(m, "out of memory");
            return ETL_FATAL;
        }
        m->n = i + 1;
        memset(&o, 0, sizeof o);
        o.order = ETL_ORDER_TIME;
        o.name = in->path;
        o.on_damage = on_damage;
        o.on_damage_arg = in;
        rc = etl_reader_open_path(&in->r, in->path, &o);
        if (rc == ETL_FATAL) {
            fatal(m, "%s", in->r ? etl_reader_error(in->r) : "out of memory");
            return ETL_FATAL;
        }
        if (rc == ETL_WARN) warned = 1;
        if (stat(in->path, &st) == 0) {
            in->dev = st.st_dev;
            in->ino = st.st_ino;
            in->have_stat = 1;
        }
        {
            const etl_trace_info *info = etl_reader_info(in->r);
            in->old_instance_header = info->layout_major < 1 || (info->layout_major == 1 && info->layout_minor < 1);
            m->stats.bytes_read += info->file_size;
        }
    }
    choose_clock(m);
    if (place_inputs(m) != 0) return ETL_FATAL;
    note_boots(m);
    /* Damage found while opening was reported; the first event says so again. */
    m->pending_warn = warned;
    return warned ? ETL_WARN : ETL_OK;
}

void etl_merge_close(etl_merge *m)
{
    if (!m) return;
    for (unsigned i = 0; i < m->n; i++) {
        etl_reader_close(m->in[i].r);
        free(m->in[i].path);
    }
    free(m->in);
    free(m->heap);
    free(m);
}

void etl_merge_set_time_range(etl_merge *m, int64_t from_ns, int64_t to_ns)
{
    /* On the merge's clock: the first tick at or after from_ns, the last at or before to_ns. */
    m->from_ts = from_ns == INT64_MIN ? INT64_MIN : etl_clock_timestamp(&m->clock, from_ns);
    if (to_ns == INT64_MAX) m->to_ts = INT64_MAX;
    else {
        int64_t t = etl_clock_timestamp(&m->clock, to_ns);
        m->to_ts = etl_clock_time_ns(&m->clock, t) > to_ns ? t - 1 : t;
    }
}

/* ---------------------------------------------------------------- the merged stream */

static inline int input_before(const struct merge_input *a, const struct merge_input *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->index < b->index);
}

static void heap_sift_down(struct merge_input **h, unsigned n, unsigned i)
{
    struct merge_input *x = h[i];

    for (;;) {
        unsigned c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && input_before(h[c + 1], h[c])) c++;
        if (!input_before(h[c], x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* The input's next event: 1, 0 at its end, -1 when it cannot be read on. */
static int advance(etl_merge *m, struct merge_input *in)
{
    int rc = etl_reader_next(in->r, &in->ev);

    if (rc == ETL_OK || rc == ETL_WARN) {
        in->ts = etl_clock_map_timestamp(&in->map, in->ev.timestamp);
        m->stats.events_read++;
        return 1;
    }
    if (rc == ETL_EOF) return 0;
    fatal(m, "%s", etl_reader_error(in->r));
    return -1;
}

/* Move the input at the top of the heap on to its next event. */
static int advance_top(etl_merge *m)
{
    int rc = advance(m, m->heap[0]);

    if (rc < 0) return -1;
    if (rc == 0) m->heap[0] = m->heap[--m->heap_n];
    if (m->heap_n > 1) heap_sift_down(m->heap, m->heap_n, 0);
    return 0;
}

static int start(etl_merge *m)
{
    m->started = 1;
    m->heap_n = 0;
    for (unsigned i = 0; i < m->n; i++) {
        int rc = advance(m, &m->in[i]);
        if (rc < 0) return -1;
        if (rc > 0) m->heap[m->heap_n++] = &m->in[i];
    }
    for (unsigned i = m->heap_n / 2; i-- > 0;) heap_sift_down(m->heap, m->heap_n, i);
    return 0;
}

/* The logfile header event: the first record of the header buffer. */
static inline int is_logfile_header(const etl_event *ev)
{
    return ev->buffer_index == 0 && ev->record_offset == ETL_BUFFER_HEADER_SIZE;
}

int etl_merge_next(etl_merge *m, etl_merge_event *out)
{
    if (m->fatal) return ETL_FATAL;
    if (!m->started) {
        if (start(m) != 0) return ETL_FATAL;
    } else if (m->last) {
        m->last = NULL;
        if (advance_top(m) != 0) return ETL_FATAL;
    }
    while (m->heap_n > 0) {
        struct merge_input *in = m->heap[0];
        if ((in->ts >= m->from_ts && in->ts <= m->to_ts) || is_logfile_header(&in->ev)) {
            m->last = in;
            out->input = in->index;
            out->timestamp = in->ts;
            out->event = &in->ev;
            m->stats.events_merged++;
            if (m->pending_warn) {
                m->pending_warn = 0;
                return ETL_WARN;
            }
            return ETL_OK;
        }
        if (advance_top(m) != 0) return ETL_FATAL;
    }
    return ETL_EOF;
}

/* ---------------------------------------------------------------- writing */

/* One output processor's buffer being filled. */
struct out_buffer {
    uint8_t *data;
    uint32_t used;
    int64_t last_ts;
};

struct out_file {
    etl_merge *m;
    etl_writer *w;
    const char *path;          /* the final name, for messages */
    uint32_t buffer_size;
    struct out_buffer *cpu;    /* indexed by processor */
    unsigned ncpu;
    uint64_t memory, memory_limit;
    int64_t last_ts;
    int any_event;
};

/* Write one processor's buffer out (if it holds records) and empty it. */
static int flush_buffer(struct out_file *o, unsigned cpu, int marker)
{
    struct out_buffer *b = &o->cpu[cpu];
    int rc;

    if (!b->data || b->used <= ETL_BUFFER_HEADER_SIZE) return 0;
    rc = etl_writer_write_buffer(o->w, b->data, b->used, (uint16_t)cpu, b->last_ts, marker);
    b->used = ETL_BUFFER_HEADER_SIZE;
    if (rc != ETL_OK) {
        fatal(o->m, "%s: %s", o->path, without_name(etl_writer_error(o->w), etl_writer_path(o->w)));
        return -1;
    }
    o->m->stats.buffers_written++;
    return 0;
}

/* Write every buffer out, the last with the flush marker. */
static int flush_all(struct out_file *o)
{
    unsigned last = o->ncpu;

    for (unsigned c = 0; c < o->ncpu; c++)
        if (o->cpu[c].data && o->cpu[c].used > ETL_BUFFER_HEADER_SIZE) last = c;
    for (unsigned c = 0; c < o->ncpu; c++)
        if (flush_buffer(o, c, c == last) != 0) return -1;
    return 0;
}

static void free_buffers(struct out_file *o)
{
    for (unsigned c = 0; c < o->ncpu; c++) free(o->cpu[c].data);
    free(o->cpu);
    o->cpu = NULL;
    o->ncpu = 0;
    o->memory = 0;
}

/* The buffer of processor cpu, made when first needed. */
static struct out_buffer *cpu_buffer(struct out_file *o, unsigned cpu)
{
    struct out_buffer *b;

    if (cpu >= o->ncpu) {
        unsigned n = cpu + 1;
        struct out_buffer *p = realloc(o->cpu, n * sizeof *p);
        if (!p) return NULL;
        memset(p + o->ncpu, 0, (n - o->ncpu) * sizeof *p);
        o->cpu = p;
        o->ncpu = n;
    }
    b = &o->cpu[cpu];
    if (b->data) return b;
    /* Damaged processor numbers can ask for more buffers than the inputs have processors:
       then all buffers are written out and freed, and filling starts over. */
    if (o->memory + o->buffer_size > o->memory_limit) {
        unsigned keep = o->ncpu;
        if (flush_all(o) != 0) return NULL;
        for (unsigned c = 0; c < keep; c++) {
            free(o->cpu[c].data);
            o->cpu[c].data = NULL;
        }
        o->memory = 0;
    }
    b->data = malloc(o->buffer_size);
    if (!b->data) return NULL;
    b->used = ETL_BUFFER_HEADER_SIZE;
    o->memory += o->buffer_size;
    return b;
}

/* Copy one event's record into its processor's buffer with its timestamps converted. */
static int place_event(struct out_file *o, const etl_merge_event *me)
{
    etl_merge *m = o->m;
    struct merge_input *in = &m->in[me->input];
    const etl_event *ev = me->event;
    uint32_t space = ETL_RECORD_SPACE(ev->record_size), off[ETL_RECORD_TIMESTAMP_FIELDS];
    struct out_buffer *b;
    unsigned nts;
    uint8_t *p;

    if (space > o->buffer_size - ETL_BUFFER_HEADER_SIZE ||
        (in->old_instance_header && ev->header_type == ETL_HT_INSTANCE32)) {
        m->stats.events_dropped++;
        if (!in->dropped_reported) {
            in->dropped_reported = 1;
            reportf(m, 1, (int)in->index, (int64_t)ev->buffer_offset,
                    "buffer %u: a record that the output cannot hold is left out (%s; this is reported once per "
                    "input)", ev->buffer_index,
                    space > o->buffer_size - ETL_BUFFER_HEADER_SIZE ? "larger than an output buffer"
                                                                     : "an EVENT_INSTANCE_HEADER of log layout 1.0");
        }
        return 0;
    }
    b = cpu_buffer(o, ev->cpu);
    if (!b) {
        if (!m->fatal) fatal(m, "%s: out of memory", o->path);
        return -1;
    }
    if (b->used + space > o->buffer_size) {
        if (flush_buffer(o, ev->cpu, 0) != 0) return -1;
    }
    p = b->data + b->used;
    memcpy(p, ev->record, ev->record_size);
    memset(p + ev->record_size, 0, space - ev->record_size);
    nts = etl_record_timestamp_fields(ev, off);
    for (unsigned i = 0; i < nts; i++)
        etl_put64(p + off[i], (uint64_t)(i == 0 ? me->timestamp : etl_clock_map_timestamp(&in->map, etl_le64s(p + off[i]))));
    b->used += space;
    b->last_ts = me->timestamp;
    o->last_ts = me->timestamp;
    o->any_event = 1;
    return 0;
}

/* A name beside path that no other file has, created empty. */
static char *temp_name(const char *path)
{
    size_t n = strlen(path) + 48;
    char *t = malloc(n);

    if (!t) return NULL;
    for (unsigned i = 0; i < 10000; i++) {
        int fd;
        snprintf(t, n, "%s.tmp-%ld-%u", path, (long)getpid(), i);
        fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            close(fd);
            return t;
        }
        if (errno != EEXIST) break;
    }
    free(t);
    return NULL;
}

static int is_an_input(const etl_merge *m, const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0) return 0;
    for (unsigned i = 0; i < m->n; i++)
        if (m->in[i].have_stat && m->in[i].dev == st.st_dev && m->in[i].ino == st.st_ino) return 1;
    return 0;
}

/* The writer's options for the output path: the merge's clock, and the header fields taken from the inputs. */
static void output_options(const etl_merge *m, const char *path, uint32_t buffer_size, etl_writer_options *o)
{
    const etl_trace_info *e = info_of(m, m->earliest);
    uint32_t ncpu = 1;

    for (unsigned i = 0; i < m->n; i++)
        if (info_of(m, i)->number_of_processors > ncpu) ncpu = info_of(m, i)->number_of_processors;
    memset(o, 0, sizeof *o);
    o->buffer_size = buffer_size;
    o->log_file_mode = ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_RELOG | (m->opt.compress ? ETL_MODE_COMPRESSED : 0);
    o->number_of_processors = ncpu;
    o->pointer_size = 8;
    o->clock = m->clock;
    o->boot_time = e->boot_time;
    o->timer_resolution = e->timer_resolution;
    o->os_major = e->os_major;
    o->os_minor = e->os_minor;
    o->os_build = e->os_build;
    o->logger_name = "etlmerge";
    /* As Windows' merged files name themselves. */
    o->log_file_name = m->n > 1 ? "[multiple files]" : path; /* (the file, not its temporary name) */
    o->header_pid = (uint32_t)getpid();
}

static uint32_t output_buffer_size(const etl_merge *m)
{
    uint32_t bs = m->opt.buffer_size;

    if (!bs) {
        bs = DEFAULT_OUTPUT_BUFFER_SIZE;
        for (unsigned i = 0; i < m->n; i++)
            if (info_of(m, i)->buffer_size > bs) bs = info_of(m, i)->buffer_size;
    }
    if (bs < MIN_OUTPUT_BUFFER_SIZE) bs = MIN_OUTPUT_BUFFER_SIZE;
    if (bs > ETL_MAX_BUFFER_SIZE) bs = ETL_MAX_BUFFER_SIZE;
    return bs & ~7u;
}

/* What the header records at the end: the sums of the inputs' losses, the latest end. */
static int64_t finish_header(const etl_merge *m, const struct out_file *o)
{
    uint64_t events_lost = 0, buffers_lost = 0;
    int64_t end = 0;

    for (unsigned i = 0; i < m->n; i++) {
        const etl_trace_info *info = info_of(m, i);
        events_lost += info->events_lost;
        buffers_lost += info->buffers_lost;
        if (info->end_time > end) end = info->end_time;
    }
    etl_writer_set_events_lost(o->w, events_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)events_lost);
    etl_writer_set_buffers_lost(o->w, buffers_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)buffers_lost);
    if (o->any_event) {
        int64_t last = etl_time_to_filetime(etl_clock_time_ns(&m->clock, o->last_ts));
        if (last > end) end = last;
    }
    return end;
}

int etl_merge_write(etl_merge *m, const char *path)
{
    struct out_file o;
    etl_writer_options wo;
    etl_merge_event me;
    etl_writer_stats ws;
    char *tmp;
    int rc, ok = 0;
    uint32_t max_ncpu;

    if (m->fatal) return ETL_FATAL;
    if (is_an_input(m, path)) {
        fatal(m, "%s: the output is one of the inputs", path);
        return ETL_FATAL;
    }
    tmp = temp_name(path);
    if (!tmp) {
        fatal(m, "%s: cannot create a file beside it: %s", path, strerror(errno));
        return ETL_FATAL;
    }
    memset(&o, 0, sizeof o);
    o.m = m;
    o.path = path;
    o.buffer_size = output_buffer_size(m);
    output_options(m, path, o.buffer_size, &wo);
    max_ncpu = wo.number_of_processors;
    o.memory_limit = (uint64_t)max_ncpu * o.buffer_size;
    if (o.memory_limit < MIN_OUTPUT_BUFFER_MEMORY) o.memory_limit = MIN_OUTPUT_BUFFER_MEMORY;
    if (etl_writer_open(&o.w, tmp, &wo) != ETL_OK) {
        fatal(m, "%s: %s", path, o.w ? without_name(etl_writer_error(o.w), tmp) : "out of memory");
        goto done;
    }
    while ((rc = etl_merge_next(m, &me)) == ETL_OK || rc == ETL_WARN) {
        if (m->opt.cancel && *m->opt.cancel) {
            fatal(m, "%s: interrupted; nothing written", path);
            goto done;
        }
        if (place_event(&o, &me) != 0) goto done;
    }
    if (rc != ETL_EOF || flush_all(&o) != 0) goto done;
    {
        int64_t end = finish_header(m, &o);
        etl_writer *w = o.w;
        etl_writer_stats_get(w, &ws);
        o.w = NULL;
        if (etl_writer_close(w, end) != ETL_OK) {
            fatal(m, "%s: cannot finish the file: %s", path, strerror(errno));
            goto done;
        }
    }
    if (rename(tmp, path) != 0) {
        fatal(m, "%s: cannot rename %s to it: %s", path, tmp, strerror(errno));
        goto done;
    }
    {
        struct stat st;
        m->stats.bytes_written = stat(path, &st) == 0 ? (uint64_t)st.st_size : ws.bytes_written;
    }
    ok = 1;
done:
    if (o.w) etl_writer_close(o.w, 0);
    free_buffers(&o);
    if (!ok) unlink(tmp);
    free(tmp);
    if (!ok) return ETL_FATAL;
    return m->stats.damage_reports ? ETL_WARN : ETL_OK;
}
