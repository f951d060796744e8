/* SPDX-License-Identifier: MIT */
/* A file's summary (etl/output.h): the trace info and what its events count, one JSON object. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

struct etl_summary {
    uint64_t events;
    uint64_t by_kind[8];      /* indexed by enum etl_event_kind */
    uint64_t payload_bytes;
    int64_t min_ts, max_ts;
    unsigned nproviders, providers_cap;
    struct provider_count { etl_guid guid; uint64_t events; } *providers;
};

etl_summary *etl_summary_new(void)
{
    etl_summary *c = calloc(1, sizeof *c);

    if (!c) return NULL;
    c->min_ts = INT64_MAX;
    c->max_ts = INT64_MIN;
    return c;
}

void etl_summary_free(etl_summary *c)
{
    if (!c) return;
    free(c->providers);
    free(c);
}

int etl_summary_add(etl_summary *c, const etl_event *ev)
{
    c->events++;
    if (ev->kind >= 0 && ev->kind < 8) c->by_kind[ev->kind]++;
    c->payload_bytes += ev->payload_len;
    if (ev->timestamp < c->min_ts) c->min_ts = ev->timestamp;
    if (ev->timestamp > c->max_ts) c->max_ts = ev->timestamp;
    if (!(ev->has & ETL_HAS_PROVIDER)) return ETL_OK;
    for (unsigned i = 0; i < c->nproviders; i++) {
        if (etl_guid_equal(&c->providers[i].guid, &ev->provider)) {
            c->providers[i].events++;
            return ETL_OK;
        }
    }
    if (c->nproviders == c->providers_cap) {
        unsigned cap = c->providers_cap ? 2 * c->providers_cap : 16;
        struct provider_count *p = realloc(c->providers, cap * sizeof *p);
        if (!p) return ETL_FAILED;
        c->providers = p;
        c->providers_cap = cap;
    }
    c->providers[c->nproviders].guid = ev->provider;
    c->providers[c->nproviders].events = 1;
    c->nproviders++;
    return ETL_OK;
}

static void time_field(FILE *f, const char *key, int64_t filetime)
{
    char t[40];

    if (filetime == 0) {
        fprintf(f, ",\"%s\":null", key);
        return;
    }
    etl_time_format(etl_time_from_filetime(filetime), t, sizeof t);
    fprintf(f, ",\"%s\":\"%s\"", key, t);
}

/* What the decoder did with the file's events: names, and counts per provider. */
static void decoder_counts(FILE *f, const etl_decoder *dec)
{
    uint64_t decoded = 0, undecoded = 0, failed = 0;
    unsigned n = etl_decoder_provider_count(dec);
    etl_decoder_provider_stats st;
    char g[ETL_GUID_STRING_SIZE];
    int first = 1;

    fputs(",\"provider_names\":{", f);
    for (unsigned i = 0; i < n; i++) {
        if (etl_decoder_provider_stats_get(dec, i, &st) != ETL_OK || !st.name) continue;
        fprintf(f, "%s\"%s\":", first ? "" : ",", etl_guid_format(&st.provider, g));
        etl_dump_json_string(f, st.name);
        first = 0;
    }
    for (unsigned i = 0; i < n; i++) {
        if (etl_decoder_provider_stats_get(dec, i, &st) != ETL_OK) continue;
        decoded += st.decoded;
        undecoded += st.undecoded;
        failed += st.failed;
    }
    fprintf(f, "},\"decoded\":%" PRIu64 ",\"undecoded\":%" PRIu64 ",\"decode_failed\":%" PRIu64, decoded, undecoded,
            failed);
    for (int k = 0; k < 2; k++) {
        first = 1;
        fputs(k ? ",\"decode_failed_by_provider\":{" : ",\"undecoded_by_provider\":{", f);
        for (unsigned i = 0; i < n; i++) {
            uint64_t v;
            if (etl_decoder_provider_stats_get(dec, i, &st) != ETL_OK) continue;
            v = k ? st.failed : st.undecoded;
            if (!v) continue;
            fprintf(f, "%s\"%s\":%" PRIu64, first ? "" : ",", etl_guid_format(&st.provider, g), v);
            first = 0;
        }
        fputc('}', f);
    }
}

int etl_summary_write(const etl_summary *c, FILE *f, const char *path, const etl_reader *r, const etl_decoder *dec)
{
    const etl_trace_info *in = etl_reader_info(r);
    char mode[512];
    int first = 1;

    fputs("{\"file\":", f);
    etl_dump_json_string(f, path);
    fputs(",\"logger_name\":", f);
    etl_dump_json_string(f, in->logger_name);
    fputs(",\"log_file_name\":", f);
    etl_dump_json_string(f, in->log_file_name);
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
    if (dec) decoder_counts(f, dec);
    fprintf(f, ",\"payload_bytes\":%" PRIu64 ",\"warnings\":%u}\n", c->payload_bytes, etl_reader_warnings(r));
    return output_status(f);
}
