/* SPDX-License-Identifier: MIT */
/* Events as normalized lines (tools/normalize.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "normalize.h"

/* The EventTrace group: the session's own header events. */
static const etl_guid event_trace_guid = { 0x68fdd900, 0x4a3e, 0x11d1, { 0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3 } };

int norm_fields_parse(const char *list, unsigned *out, const char **bad)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        { "ts", NORM_TS }, { "pid", NORM_PID }, { "tid", NORM_TID }, { "cpu", NORM_CPU }, { "payload", NORM_PAYLOAD },
    };
    const char *p = list;

    *out = 0;
    while (*p) {
        size_t n = strcspn(p, ","), i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0) break;
        if (i == sizeof names / sizeof names[0]) {
            if (n) {
                *bad = p;
                return -1;
            }
        }
        else *out |= names[i].bit;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

int norm_provider_parse(const char *text, etl_guid *out)
{
    if (etl_guid_parse(text, out) == ETL_OK || etl_guid_from_name(text, out) == ETL_OK) return 0;
    return -1;
}

void norm_options_init(norm_options *o)
{
    memset(o, 0, sizeof *o);
    o->ignore = NORM_TS | NORM_CPU;
    o->from_ns = INT64_MIN;
    o->to_ns = INT64_MAX;
}

void norm_options_free(norm_options *o)
{
    free(o->only);
    free(o->skip);
    free(o->skip_events);
    memset(o, 0, sizeof *o);
}

void normalizer_init(normalizer *n, const norm_options *o)
{
    memset(n, 0, sizeof *n);
    n->o = o;
}

void normalizer_reset(normalizer *n)
{
    n->started = 0;
    for (int k = 0; k < 2; k++) {
        if (n->ids[k]) memset(n->ids[k], 0, n->id_cap[k] * sizeof *n->ids[k]);
        n->id_count[k] = 0;
    }
}

void normalizer_free(normalizer *n)
{
    free(n->ids[0]);
    free(n->ids[1]);
    free(n->line);
    memset(n, 0, sizeof *n);
}

/* The number of raw id v in table k (1, 2, ... in first-seen order); 0 without memory. Slots
   hold raw + 1 in .raw so that 0 marks an empty one (ids are 32-bit: 0xFFFFFFFF is kept apart). */
static uint32_t renumber(normalizer *n, int k, uint32_t v)
{
    uint32_t mask, i;

    if (2 * (n->id_count[k] + 1) > n->id_cap[k]) {
        unsigned cap = n->id_cap[k] ? 2 * n->id_cap[k] : 256;
        struct norm_id *t = calloc(cap, sizeof *t);
        if (!t) return 0;
        for (unsigned j = 0; j < n->id_cap[k]; j++) {
            struct norm_id e = n->ids[k][j];
            uint32_t h;
            if (!e.seq) continue;
            for (h = (e.raw * 2654435761u) & (cap - 1); t[h].seq; h = (h + 1) & (cap - 1)) {}
            t[h] = e;
        }
        free(n->ids[k]);
        n->ids[k] = t;
        n->id_cap[k] = cap;
    }
    mask = n->id_cap[k] - 1;
    for (i = (v * 2654435761u) & mask; n->ids[k][i].seq; i = (i + 1) & mask)
        if (n->ids[k][i].raw == v) return n->ids[k][i].seq;
    n->ids[k][i].raw = v;
    n->ids[k][i].seq = ++n->id_count[k];
    return n->ids[k][i].seq;
}

/* Appends to the line; -1 without memory. */
static int put(normalizer *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(normalizer *n, const char *fmt, ...)
{
    va_list ap;
    int w;

    for (;;) {
        va_start(ap, fmt);
        w = vsnprintf(n->line + n->len, n->cap - n->len, fmt, ap);
        va_end(ap);
        if (w < 0) return -1;
        if ((size_t)w < n->cap - n->len) break;
        size_t cap = 2 * (n->cap + (size_t)w);
        char *p = realloc(n->line, cap);
        if (!p) return -1;
        n->line = p;
        n->cap = cap;
    }
    n->len += (size_t)w;
    return 0;
}

static int put_hex(normalizer *n, const uint8_t *p, uint32_t len)
{
    static const char digits[] = "0123456789abcdef";

    if (n->cap - n->len < 2 * (size_t)len + 1) {
        size_t cap = n->len + 2 * (size_t)len + 64;
        char *q = realloc(n->line, cap);
        if (!q) return -1;
        n->line = q;
        n->cap = cap;
    }
    for (uint32_t i = 0; i < len; i++) {
        n->line[n->len++] = digits[p[i] >> 4];
        n->line[n->len++] = digits[p[i] & 15];
    }
    n->line[n->len] = '\0';
    return 0;
}

static int in_list(const etl_guid *list, unsigned n, const etl_guid *g)
{
    for (unsigned i = 0; i < n; i++)
        if (etl_guid_equal(&list[i], g)) return 1;
    return 0;
}

/* Whether ev is compared at all, whatever its time. */
static int selected(const norm_options *o, const etl_event *ev)
{
    int has_provider = (ev->has & ETL_HAS_PROVIDER) != 0;
    uint16_t id = (ev->has & ETL_HAS_ID) ? ev->id : ev->opcode;

    if (!o->all_events && has_provider && etl_guid_equal(&ev->provider, &event_trace_guid)) return 0;
    if (o->nonly && (!has_provider || !in_list(o->only, o->nonly, &ev->provider))) return 0;
    if (has_provider && in_list(o->skip, o->nskip, &ev->provider)) return 0;
    for (unsigned i = 0; has_provider && i < o->nskip_events; i++)
        if (o->skip_events[i].id == id && etl_guid_equal(&o->skip_events[i].provider, &ev->provider)) return 0;
    return 1;
}

int norm_event(normalizer *n, const etl_event *ev, int64_t time_ns)
{
    const norm_options *o = n->o;
    char g[ETL_GUID_STRING_SIZE];
    const char *name = NULL;
    int64_t rel;

    if (!selected(o, ev)) return 0;
    if (!n->started) {
        n->started = 1;
        n->first_ns = time_ns;
    }
    rel = time_ns - n->first_ns;
    if (rel < o->from_ns || rel > o->to_ns) return 0;

    n->len = 0;
    if (!n->line) {
        n->line = malloc(256);
        if (!n->line) return -1;
        n->cap = 256;
    }
    n->line[0] = '\0';
    if (ev->has & ETL_HAS_PROVIDER) {
        name = etl_guid_name(&ev->provider);
        if (!name) name = etl_guid_format(&ev->provider, g);
    }
    if (put(n, "%s %s", name ? name : "-", etl_event_kind_name(ev->kind)) != 0) return -1;
    if ((ev->has & ETL_HAS_ID) && put(n, " id=%u", ev->id) != 0) return -1;
    if (put(n, " v=%u op=%u", ev->version, ev->opcode) != 0) return -1;
    if ((ev->has & ETL_HAS_LEVEL) && put(n, " level=%u", ev->level) != 0) return -1;
    if ((ev->has & ETL_HAS_ID) && put(n, " task=%u kw=0x%" PRIx64, ev->task, ev->keywords) != 0) return -1;
    if (ev->has & ETL_HAS_PID_TID) {
        if (!(o->ignore & NORM_PID)) {
            if (o->raw & NORM_PID) { if (put(n, " pid=%" PRIu32, ev->pid) != 0) return -1; }
            else {
                uint32_t s = renumber(n, 0, ev->pid);
                if (!s || put(n, " pid=P%" PRIu32, s) != 0) return -1;
            }
        }
        if (!(o->ignore & NORM_TID)) {
            if (o->raw & NORM_TID) { if (put(n, " tid=%" PRIu32, ev->tid) != 0) return -1; }
            else {
                uint32_t s = renumber(n, 1, ev->tid);
                if (!s || put(n, " tid=T%" PRIu32, s) != 0) return -1;
            }
        }
    }
    if (!(o->ignore & NORM_TS) && put(n, " ts=+%" PRId64, rel) != 0) return -1;
    if (!(o->ignore & NORM_CPU) && put(n, " cpu=%u", ev->cpu) != 0) return -1;
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        if (etl_event_ext_item(ev, i, &it) != ETL_OK) continue;
        if (put(n, "%s%s", i ? "," : " ext=", etl_ext_type_name(it.type)) != 0) return -1;
    }
    if (put(n, " len=%" PRIu32, ev->payload_len) != 0) return -1;
    if (!(o->ignore & NORM_PAYLOAD) && ev->payload_len) {
        /* Stacks, stack keys and LBR records begin with the timestamp of the event they belong
           to: a timestamp, shown as dashes when timestamps are ignored. */
        uint32_t skip = 0;
        if (o->ignore & NORM_TS) {
            etl_kernel_event k;
            if (etl_kernel_decode(ev, &k) == 1 &&
                (k.kclass == ETL_KCLASS_STACK || k.kclass == ETL_KCLASS_STACK_KEY || k.kclass == ETL_KCLASS_LBR))
                skip = 8;
        }
        if (put(n, " payload=%s", skip ? "----------------" : "") != 0 ||
            put_hex(n, ev->payload + skip, ev->payload_len - skip) != 0)
            return -1;
    }
    return 1;
}
