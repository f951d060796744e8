/* SPDX-License-Identifier: MIT */
/* Event and trace formatting shared by the tools (text, JSON lines, CSV, summary). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"

int dump_format_parse(const char *name)
{
    if (strcmp(name, "text") == 0) return DUMP_TEXT;
    if (strcmp(name, "jsonl") == 0 || strcmp(name, "json") == 0) return DUMP_JSONL;
    if (strcmp(name, "csv") == 0) return DUMP_CSV;
    return -1;
}

void dump_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static const char *const columns[] = { "ts", "time", "cpu", "pid", "tid", "provider", "kind", "id",
                                       "version", "opcode", "level", "task", "keywords", "payload_len", "ext" };

void dump_csv_header(FILE *f)
{
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        fprintf(f, "%s%s", i ? "," : "", columns[i]);
    fputc('\n', f);
}

static void provider_text(const etl_event *ev, char *out)
{
    if (ev->has & ETL_HAS_PROVIDER) etl_guid_format(&ev->provider, out);
    else out[0] = '\0';
}

/* One column's value: a number, a string, or null (absent from the header kind). */
struct field {
    enum { F_NULL, F_INT, F_UINT, F_STR } type;
    int64_t i;
    uint64_t u;
    const char *s;
};

static struct field fnull(void) { struct field v = { F_NULL, 0, 0, NULL }; return v; }
static struct field fint(int64_t i) { struct field v = { F_INT, i, 0, NULL }; return v; }
static struct field fuint(uint64_t u) { struct field v = { F_UINT, 0, u, NULL }; return v; }
static struct field fstr(const char *s) { struct field v = { F_STR, 0, 0, s }; return v; }

/* LBR events carry their branches: "lbr":{"pid":..,"tid":..,"filters":..,"entries":[[from,to],...]}. */
static void dump_lbr_json(FILE *f, const etl_event *ev)
{
    etl_lbr lbr;

    if (etl_lbr_decode(ev, &lbr) != 1) return;
    fprintf(f, ",\"lbr\":{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"filters\":%" PRIu32 ",\"entries\":[",
            lbr.pid, lbr.tid, lbr.filters);
    for (unsigned i = 0; i < lbr.count; i++) {
        etl_lbr_entry e = etl_lbr_entry_at(&lbr, i);
        fprintf(f, "%s[%" PRIu64 ",%" PRIu64 "]", i ? "," : "", e.from, e.to);
    }
    fputs("]}", f);
}

/* The row of an event, in the order of columns[]: the same for JSON and CSV. */
static void dump_row(FILE *f, int format, const etl_reader *r, const etl_event *ev)
{
    char t[40], g[ETL_GUID_STRING_SIZE];
    int has_id = (ev->has & ETL_HAS_ID) != 0, pt = (ev->has & ETL_HAS_PID_TID) != 0;
    struct field v[sizeof columns / sizeof columns[0]];

    etl_format_time_ns(etl_reader_time_ns(r, ev->timestamp), t, sizeof t);
    provider_text(ev, g);
    v[0] = fint(ev->timestamp);
    v[1] = fstr(t);
    v[2] = fuint(ev->cpu);
    v[3] = pt ? fuint(ev->pid) : fnull();
    v[4] = pt ? fuint(ev->tid) : fnull();
    v[5] = g[0] ? fstr(g) : fnull();
    v[6] = fstr(etl_event_kind_name(ev->kind));
    v[7] = has_id ? fuint(ev->id) : fnull();
    v[8] = fuint(ev->version);
    v[9] = fuint(ev->opcode);
    v[10] = (ev->has & ETL_HAS_LEVEL) ? fuint(ev->level) : fnull();
    v[11] = has_id ? fuint(ev->task) : fnull();
    v[12] = has_id ? fuint(ev->keywords) : fnull();
    v[13] = fuint(ev->payload_len);
    v[14] = fuint(ev->ext_count);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (format == DUMP_JSONL) fprintf(f, "%s\"%s\":", i ? "," : "{", columns[i]);
        else if (i) fputc(',', f);
        switch (v[i].type) {
        case F_NULL: if (format == DUMP_JSONL) fputs("null", f); break;
        case F_INT: fprintf(f, "%" PRId64, v[i].i); break;
        case F_UINT: fprintf(f, "%" PRIu64, v[i].u); break;
        case F_STR: fprintf(f, format == DUMP_JSONL ? "\"%s\"" : "%s", v[i].s); break;
        }
    }
    if (format == DUMP_JSONL) dump_lbr_json(f, ev);
    fputs(format == DUMP_JSONL ? "}\n" : "\n", f);
}

static void dump_text(FILE *f, const etl_reader *r, const etl_event *ev)
{
    char t[40], g[ETL_GUID_STRING_SIZE];
    const char *name = (ev->has & ETL_HAS_PROVIDER) ? etl_guid_name(&ev->provider) : NULL;
    uint32_t preview = ev->payload_len < 16 ? ev->payload_len : 16;
    etl_lbr lbr;

    etl_format_time_ns(etl_reader_time_ns(r, ev->timestamp), t, sizeof t);
    provider_text(ev, g);
    fprintf(f, "%s cpu=%u ", t, ev->cpu);
    if (ev->has & ETL_HAS_PID_TID) fprintf(f, "pid=%" PRIu32 " tid=%" PRIu32 " ", ev->pid, ev->tid);
    else fputs("pid=- tid=- ", f);
    fprintf(f, "%s %s ", name ? name : g[0] ? g : "-", etl_event_kind_name(ev->kind));
    if (ev->has & ETL_HAS_ID) fprintf(f, "id=%u ", ev->id);
    fprintf(f, "v=%u op=%u ", ev->version, ev->opcode);
    if (ev->has & ETL_HAS_LEVEL) fprintf(f, "level=%u ", ev->level);
    fprintf(f, "len=%" PRIu32, ev->payload_len);
    if (ev->ext_count) fprintf(f, " ext=%u", ev->ext_count);
    if (etl_lbr_decode(ev, &lbr) == 1) {
        fprintf(f, " lbr pid=%" PRIu32 " tid=%" PRIu32 " filters=0x%" PRIx32 " branches=%u", lbr.pid, lbr.tid,
                lbr.filters, lbr.count);
        for (unsigned i = 0; i < lbr.count; i++) {
            etl_lbr_entry e = etl_lbr_entry_at(&lbr, i);
            fprintf(f, " %" PRIx64 "->%" PRIx64, e.from, e.to);
        }
        fputc('\n', f);
        return;
    }
    if (preview) {
        fputs(" [", f);
        for (uint32_t i = 0; i < preview; i++) fprintf(f, "%s%02x", i ? " " : "", ev->payload[i]);
        fputs(preview < ev->payload_len ? " ...]" : "]", f);
    }
    fputc('\n', f);
}

void dump_event(FILE *f, int format, const etl_reader *r, const etl_event *ev)
{
    if (format == DUMP_JSONL || format == DUMP_CSV) dump_row(f, format, r, ev);
    else dump_text(f, r, ev);
}

void dump_counts_init(struct dump_counts *c)
{
    memset(c, 0, sizeof *c);
    c->min_ts = INT64_MAX;
    c->max_ts = INT64_MIN;
}

void dump_counts_free(struct dump_counts *c)
{
    free(c->providers);
    c->providers = NULL;
    c->nproviders = c->providers_cap = 0;
}

int dump_counts_add(struct dump_counts *c, const etl_event *ev)
{
    c->events++;
    if (ev->kind >= 0 && ev->kind < 8) c->by_kind[ev->kind]++;
    c->payload_bytes += ev->payload_len;
    if (ev->timestamp < c->min_ts) c->min_ts = ev->timestamp;
    if (ev->timestamp > c->max_ts) c->max_ts = ev->timestamp;
    if (!(ev->has & ETL_HAS_PROVIDER)) return 0;
    for (unsigned i = 0; i < c->nproviders; i++) {
        if (etl_guid_equal(&c->providers[i].guid, &ev->provider)) {
            c->providers[i].events++;
            return 0;
        }
    }
    if (c->nproviders == c->providers_cap) {
        unsigned cap = c->providers_cap ? 2 * c->providers_cap : 16;
        struct dump_provider_count *p = realloc(c->providers, cap * sizeof *p);
        if (!p) return -1;
        c->providers = p;
        c->providers_cap = cap;
    }
    c->providers[c->nproviders].guid = ev->provider;
    c->providers[c->nproviders].events = 1;
    c->nproviders++;
    return 0;
}

static void time_field(FILE *f, const char *key, int64_t filetime)
{
    char t[40];

    if (filetime == 0) {
        fprintf(f, ",\"%s\":null", key);
        return;
    }
    etl_format_time_ns(etl_filetime_to_ns(filetime), t, sizeof t);
    fprintf(f, ",\"%s\":\"%s\"", key, t);
}

void dump_summary(FILE *f, const char *path, const etl_reader *r, const struct dump_counts *c)
{
    const etl_trace_info *in = etl_reader_info(r);
    char mode[512];
    int first = 1;

    fputs("{\"file\":", f);
    dump_json_string(f, path);
    fputs(",\"logger_name\":", f);
    dump_json_string(f, in->logger_name);
    fputs(",\"log_file_name\":", f);
    dump_json_string(f, in->log_file_name);
    fprintf(f, ",\"log_file_mode\":%" PRIu32 ",\"mode_flags\":\"%s\"", in->log_file_mode,
            etl_log_file_mode_format(in->log_file_mode, mode, sizeof mode));
    fprintf(f, ",\"clock\":\"%s\",\"clock_type\":%d,\"perf_freq\":%" PRId64 ",\"cpu_speed_mhz\":%" PRIu32,
            etl_clock_type_name(in->clock.type), in->clock.type, in->clock.perf_freq, in->clock.cpu_speed_mhz);
    time_field(f, "start_time", in->clock.start_time);
    time_field(f, "end_time", in->end_time);
    time_field(f, "boot_time", in->boot_time);
    fprintf(f, ",\"os_version\":\"%u.%u.%" PRIu32 "\",\"log_layout_version\":\"%u.%u\"", in->os_major,
            in->os_minor, in->os_build, in->layout_major, in->layout_minor);
    fprintf(f, ",\"pointer_size\":%" PRIu32 ",\"processors\":%" PRIu32 ",\"buffer_size\":%" PRIu32,
            in->pointer_size, in->number_of_processors, in->buffer_size);
    fprintf(f, ",\"buffers\":%" PRIu32 ",\"buffers_written\":%" PRIu32 ",\"compressed_buffers\":%" PRIu32
               ",\"damaged_buffers\":%" PRIu32,
            in->buffers, in->buffers_written, in->compressed_buffers, in->damaged_buffers);
    fprintf(f, ",\"events_lost\":%" PRIu32 ",\"buffers_lost\":%" PRIu32 ",\"file_size\":%" PRIu64,
            in->events_lost, in->buffers_lost, in->file_size);
    fprintf(f, ",\"events\":%" PRIu64 ",\"by_kind\":{", c->events);
    for (int k = ETL_KIND_SYSTEM; k <= ETL_KIND_MESSAGE; k++) {
        if (!c->by_kind[k]) continue;
        fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", etl_event_kind_name(k), c->by_kind[k]);
        first = 0;
    }
    fputs("},\"by_provider\":{", f);
    for (unsigned i = 0; i < c->nproviders; i++) {
        char g[ETL_GUID_STRING_SIZE];
        fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", etl_guid_format(&c->providers[i].guid, g),
                c->providers[i].events);
    }
    fputc('}', f);
    if (c->events)
        fprintf(f, ",\"min_ts\":%" PRId64 ",\"max_ts\":%" PRId64, c->min_ts, c->max_ts);
    else
        fputs(",\"min_ts\":null,\"max_ts\":null", f);
    fprintf(f, ",\"payload_bytes\":%" PRIu64 ",\"warnings\":%u}\n", c->payload_bytes, etl_reader_warnings(r));
}
