/* SPDX-License-Identifier: MIT */
/* Events as normalized lines (etl/output.h): what a build decides about an event, without what
   differs on every run; the form etldiff compares and `etldump --normalize` prints. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"
#include "output/output.h"

struct etl_normalizer {
    etl_normalize_options o;    /* its lists point into the copies below */
    etl_guid *only, *skip;
    etl_normalize_event_key *skip_events;
    char **names[3];            /* copies of ignore_fields, only_names, skip_names */
    int started;
    int64_t first_ns;
    struct norm_id { uint32_t raw, seq; } *ids[2]; /* pid and tid numbering, open addressing */
    unsigned id_cap[2], id_count[2];
    char *line;                 /* the last line (NUL-terminated) */
    size_t len, cap;
};

int etl_normalize_fields_parse(const char *list, unsigned *out, const char **bad)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        { "ts", ETL_NORMALIZE_TS }, { "pid", ETL_NORMALIZE_PID }, { "tid", ETL_NORMALIZE_TID },
        { "cpu", ETL_NORMALIZE_CPU }, { "payload", ETL_NORMALIZE_PAYLOAD },
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
                return ETL_FAILED;
            }
        }
        else *out |= names[i].bit;
        p += n;
        if (*p == ',') p++;
    }
    return ETL_OK;
}

void etl_normalize_options_init(etl_normalize_options *o)
{
    memset(o, 0, sizeof *o);
    o->ignore = ETL_NORMALIZE_TS | ETL_NORMALIZE_CPU;
    o->from_ns = INT64_MIN;
    o->to_ns = INT64_MAX;
}

/* A copy of n elements of size bytes at p (NULL when n is 0); -1 without memory. */
static int copy_list(void **out, const void *p, unsigned n, size_t size)
{
    *out = NULL;
    if (!n) return 0;
    *out = malloc(n * size);
    if (!*out) return -1;
    memcpy(*out, p, n * size);
    return 0;
}

/* A copy of n strings (NULL when n is 0); -1 without memory. */
static int copy_names(char ***out, const char *const *p, unsigned n)
{
    *out = NULL;
    if (!n) return 0;
    if (!(*out = calloc(n, sizeof **out))) return -1;
    for (unsigned i = 0; i < n; i++)
        if (!((*out)[i] = strdup(p[i]))) return -1;
    return 0;
}

etl_normalizer *etl_normalizer_new(const etl_normalize_options *o)
{
    etl_normalizer *n = calloc(1, sizeof *n);

    if (!n) return NULL;
    n->o = *o;
    if (copy_list((void **)&n->only, o->only, o->nonly, sizeof *o->only) != 0 ||
        copy_list((void **)&n->skip, o->skip, o->nskip, sizeof *o->skip) != 0 ||
        copy_list((void **)&n->skip_events, o->skip_events, o->nskip_events, sizeof *o->skip_events) != 0 ||
        copy_names(&n->names[0], o->ignore_fields, o->nignore_fields) != 0 ||
        copy_names(&n->names[1], o->only_names, o->nonly_names) != 0 ||
        copy_names(&n->names[2], o->skip_names, o->nskip_names) != 0) {
        etl_normalizer_free(n);
        return NULL;
    }
    n->o.only = n->only;
    n->o.skip = n->skip;
    n->o.skip_events = n->skip_events;
    n->o.ignore_fields = (const char *const *)n->names[0];
    n->o.only_names = (const char *const *)n->names[1];
    n->o.skip_names = (const char *const *)n->names[2];
    return n;
}

void etl_normalizer_rewind(etl_normalizer *n)
{
    n->started = 0;
    for (int k = 0; k < 2; k++) {
        if (n->ids[k]) memset(n->ids[k], 0, n->id_cap[k] * sizeof *n->ids[k]);
        n->id_count[k] = 0;
    }
}

void etl_normalizer_free(etl_normalizer *n)
{
    if (!n) return;
    free(n->ids[0]);
    free(n->ids[1]);
    free(n->line);
    free(n->only);
    free(n->skip);
    free(n->skip_events);
    for (int k = 0; k < 3; k++) {
        unsigned count = k == 0 ? n->o.nignore_fields : k == 1 ? n->o.nonly_names : n->o.nskip_names;
        for (unsigned i = 0; n->names[k] && i < count; i++) free(n->names[k][i]);
        free(n->names[k]);
    }
    free(n);
}

/* The number of raw id v in table k (1, 2, ... in first-seen order); 0 without memory. Slots
   hold raw + 1 in .raw so that 0 marks an empty one (ids are 32-bit: 0xFFFFFFFF is kept apart). */
static uint32_t renumber(etl_normalizer *n, int k, uint32_t v)
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
static int put(etl_normalizer *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(etl_normalizer *n, const char *fmt, ...)
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

static int put_hex(etl_normalizer *n, const uint8_t *p, uint32_t len)
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

static int in_names(const char *const *list, unsigned n, const char *name)
{
    for (unsigned i = 0; name && i < n; i++)
        if (strcasecmp(list[i], name) == 0) return 1;
    return 0;
}

/* Whether ev is compared at all, whatever its time; name is its provider's name, from the decoder. */
static int selected(const etl_normalize_options *o, const etl_event *ev, const char *name)
{
    int has_provider = (ev->has & ETL_HAS_PROVIDER) != 0;
    uint16_t id = (ev->has & ETL_HAS_ID) ? ev->id : ev->opcode;

    if (!o->all_events && has_provider && etl_guid_equal(&ev->provider, &etl_guid_event_trace)) return 0;
    if ((o->nonly || o->nonly_names) &&
        !(has_provider && in_list(o->only, o->nonly, &ev->provider)) && !in_names(o->only_names, o->nonly_names, name))
        return 0;
    if (has_provider && in_list(o->skip, o->nskip, &ev->provider)) return 0;
    if (in_names(o->skip_names, o->nskip_names, name)) return 0;
    for (unsigned i = 0; has_provider && i < o->nskip_events; i++)
        if (o->skip_events[i].id == id && etl_guid_equal(&o->skip_events[i].provider, &ev->provider)) return 0;
    return 1;
}

/* A decoded event's fields after " event=NAME": " fields: Name=value ..." without the ignored
   ones; a stack's or LBR's timestamp of its event (its first field) as dashes when times are
   ignored. 0, or -1 without memory. */
static int put_fields(etl_normalizer *n, const etl_event *ev, const etl_decoded_event *e)
{
    const etl_normalize_options *o = &n->o;
    int dashes = 0, first = 1;
    char small[512];

    if (put(n, " event=%s", e->event_name ? e->event_name : "?") != 0) return -1;
    if (o->ignore & ETL_NORMALIZE_PAYLOAD) return 0;
    if (o->ignore & ETL_NORMALIZE_TS) {
        etl_kernel_event k;
        dashes = etl_kernel_decode(ev, &k) == 1 &&
                 (k.kclass == ETL_KCLASS_STACK || k.kclass == ETL_KCLASS_STACK_KEY || k.kclass == ETL_KCLASS_LBR);
    }
    for (uint32_t i = 0; i < e->field_count; i = e->fields[i].end > i ? e->fields[i].end : i + 1) {
        const char *name = e->fields[i].name ? e->fields[i].name : "";
        size_t len;
        if (in_names(o->ignore_fields, o->nignore_fields, name)) continue;
        if (put(n, "%s%s=", first ? " fields: " : " ", name) != 0) return -1;
        first = 0;
        if (i == 0 && dashes) {
            if (put(n, "----------------") != 0) return -1;
            continue;
        }
        len = etl_decoded_field_format(e, i, 0, small, sizeof small);
        if (len < sizeof small) {
            if (put(n, "%s", small) != 0) return -1;
        } else {
            char *big = malloc(len + 1);
            if (!big) return -1;
            int rc;
            etl_decoded_field_format(e, i, 0, big, len + 1);
            rc = put(n, "%s", big);
            free(big);
            if (rc != 0) return -1;
        }
    }
    return 0;
}

/* 1: ev is compared and n->line holds its line; 0: left out; -1: out of memory. */
static int norm_line(etl_normalizer *n, const etl_event *ev, int64_t time_ns)
{
    const etl_normalize_options *o = &n->o;
    char g[ETL_GUID_STRING_SIZE];
    const char *name = NULL;
    etl_decoded_event e;
    int decoded = 0;
    int64_t rel;

    memset(&e, 0, sizeof e);
    if (o->decoder) decoded = etl_decoder_decode(o->decoder, ev, &e);
    if (!selected(o, ev, e.provider_name)) return 0;
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
        name = e.provider_name ? e.provider_name : etl_guid_name(&ev->provider);
        if (!name) name = etl_guid_format(&ev->provider, g);
    }
    if (put(n, "%s %s", name ? name : "-", etl_event_kind_name(ev->kind)) != 0) return -1;
    if ((ev->has & ETL_HAS_ID) && put(n, " id=%u", ev->id) != 0) return -1;
    if (put(n, " v=%u op=%u", ev->version, ev->opcode) != 0) return -1;
    if ((ev->has & ETL_HAS_LEVEL) && put(n, " level=%u", ev->level) != 0) return -1;
    if ((ev->has & ETL_HAS_ID) && put(n, " task=%u kw=0x%" PRIx64, ev->task, ev->keywords) != 0) return -1;
    if (ev->has & ETL_HAS_PID_TID) {
        if (!(o->ignore & ETL_NORMALIZE_PID)) {
            if (o->raw & ETL_NORMALIZE_PID) { if (put(n, " pid=%" PRIu32, ev->pid) != 0) return -1; }
            else {
                uint32_t s = renumber(n, 0, ev->pid);
                if (!s || put(n, " pid=P%" PRIu32, s) != 0) return -1;
            }
        }
        if (!(o->ignore & ETL_NORMALIZE_TID)) {
            if (o->raw & ETL_NORMALIZE_TID) { if (put(n, " tid=%" PRIu32, ev->tid) != 0) return -1; }
            else {
                uint32_t s = renumber(n, 1, ev->tid);
                if (!s || put(n, " tid=T%" PRIu32, s) != 0) return -1;
            }
        }
    }
    if (!(o->ignore & ETL_NORMALIZE_TS) && put(n, " ts=+%" PRId64, rel) != 0) return -1;
    if (!(o->ignore & ETL_NORMALIZE_CPU) && put(n, " cpu=%u", ev->cpu) != 0) return -1;
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        if (etl_event_ext_item_get(ev, i, &it) != ETL_OK) continue;
        if (put(n, "%s%s", i ? "," : " ext=", etl_ext_type_name(it.type)) != 0) return -1;
    }
    if (put(n, " len=%" PRIu32, ev->payload_len) != 0) return -1;
    if (decoded != 0 && e.source) {
        if (put_fields(n, ev, &e) != 0) return -1;
        if (decoded == 1) return 1; /* else the bytes too: what did not fit is seen */
    }
    if (!(o->ignore & ETL_NORMALIZE_PAYLOAD) && ev->payload_len) {
        /* Stacks, stack keys and LBR records begin with the timestamp of the event they belong
           to: a timestamp, shown as dashes when timestamps are ignored. */
        uint32_t skip = 0;
        if (o->ignore & ETL_NORMALIZE_TS) {
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

int etl_normalizer_format(etl_normalizer *n, const etl_event *ev, int64_t time_ns, const char **line, size_t *len)
{
    int rc = norm_line(n, ev, time_ns);

    if (rc < 0) return ETL_FAILED;
    if (rc) {
        *line = n->line;
        if (len) *len = n->len;
    }
    return rc;
}
