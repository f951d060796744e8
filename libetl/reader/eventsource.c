/* SPDX-License-Identifier: MIT */
/* .NET EventSource manifests carried in the trace: ManifestData chunks reassembled per provider, bounded in memory, and read as a manifest (doc/format.md section 19.5). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

/* The ManifestEnvelope before each chunk: u8 Format (1: the XML as it is), u8 MajorVersion,
   u8 MinorVersion, u8 Magic (0x5B), u16 TotalChunks, u16 ChunkNumber (from 0). */
#define ENVELOPE_SIZE 8
#define ENVELOPE_MAGIC 0x5B
#define ENVELOPE_FORMAT_XML 1
/* EventSource cuts its manifest in chunks of 0xFF00 bytes (the last one shorter). */
#define CHUNK_SIZE 0xFF00u

/* Most bytes one manifest may have (the largest EventSource manifests are tens of KB), most
   bytes held at once for all manifests being put together, and most providers at once: a
   trace that claims more gets a warning, not the memory. */
#define MANIFEST_LIMIT (16u << 20)
#define PENDING_LIMIT (64u << 20)
#define PENDING_PROVIDERS 256
#define MAX_CHUNKS ((MANIFEST_LIMIT + CHUNK_SIZE - 1) / CHUNK_SIZE)
/* Warnings passed on to the decoder's callback, at most (a hostile trace could send millions). */
#define WARNING_LIMIT 100

struct chunk {
    uint8_t *data;       /* NULL until it came */
    uint32_t size;
};

/* A manifest being put together. */
struct pending {
    etl_guid provider;
    uint16_t total, received;
    uint8_t format, major, minor;
    uint64_t bytes;
    struct chunk *chunks;  /* total of them */
};

/* The last manifest taken for a provider, by its hash: a manifest sent again is not read again. */
struct taken {
    etl_guid provider;
    uint64_t hash;
    uint32_t size;
};

struct learn_state {
    struct pending *p;
    uint32_t np, capp;
    struct taken *t;
    uint32_t nt, capt;
    uint64_t held;         /* bytes of chunks held, over every pending manifest */
    unsigned warnings;
};

static void pending_clear(struct learn_state *s, struct pending *p)
{
    if (p->chunks) {
        for (uint32_t i = 0; i < p->total; i++) free(p->chunks[i].data);
        free(p->chunks);
    }
    s->held -= p->bytes;
    p->chunks = NULL;
    p->bytes = 0;
    p->received = 0;
}

static void pending_remove(struct learn_state *s, struct pending *p)
{
    pending_clear(s, p);
    *p = s->p[--s->np];
}

void etl_decoder_learn_free(etl_decoder *d)
{
    struct learn_state *s = *etl_decoder_learn_state(d);

    if (!s) return;
    for (uint32_t i = 0; i < s->np; i++) pending_clear(s, &s->p[i]);
    free(s->p);
    free(s->t);
    free(s);
    *etl_decoder_learn_state(d) = NULL;
}

/* Sets the message, passes it on (up to WARNING_LIMIT), returns ETL_WARN. */
static int warn(etl_decoder *d, struct learn_state *s, const etl_event *ev, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int warn(etl_decoder *d, struct learn_state *s, const etl_event *ev, const char *fmt, ...)
{
    char what[400], g[ETL_GUID_STRING_SIZE];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    etl_decoder_set_error(d, "EventSource manifest of provider %s (ManifestData event at offset %llu): %s",
                          etl_guid_format(&ev->provider, g),
                          (unsigned long long)(ev->buffer_offset + ev->record_offset), what);
    if (s && s->warnings++ < WARNING_LIMIT) etl_decoder_warn(d, etl_decoder_error(d));
    return ETL_WARN;
}

static uint64_t fnv64(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static struct taken *taken_find(struct learn_state *s, const etl_guid *g)
{
    for (uint32_t i = 0; i < s->nt; i++)
        if (etl_guid_equal(&s->t[i].provider, g)) return &s->t[i];
    return NULL;
}

/* Keeps of set only provider g and its events: an EventSource speaks for itself alone. 1 when
   g is among the set's providers. */
static int keep_only(etl_schema_set *set, const etl_guid *g, unsigned *others)
{
    uint32_t w = 0;
    int found = 0;

    *others = 0;
    for (uint32_t i = 0; i < set->provider_count; i++) {
        if (etl_guid_equal(&set->providers[i].guid, g)) {
            set->providers[w++] = set->providers[i];
            found = 1;
        } else {
            (*others)++;
        }
    }
    set->provider_count = w;
    w = 0;
    for (uint32_t i = 0; i < set->event_count; i++)
        if (etl_guid_equal(&set->events[i]->provider, g)) set->events[w++] = set->events[i];
    set->event_count = w;
    return found;
}

/* The whole manifest of p, read and adopted. */
static int complete(etl_decoder *d, struct learn_state *s, struct pending *p, const etl_event *ev)
{
    uint8_t *xml, *w;
    size_t size = (size_t)p->bytes;
    uint64_t hash;
    struct taken *t;
    etl_schema_set set;
    char name[80], g[ETL_GUID_STRING_SIZE], err[512];
    unsigned others;
    int rc;

    if (!(xml = malloc(size ? size : 1))) {
        pending_remove(s, p);
        return warn(d, s, ev, "out of memory");
    }
    w = xml;
    for (uint32_t i = 0; i < p->total; i++) {
        memcpy(w, p->chunks[i].data, p->chunks[i].size);
        w += p->chunks[i].size;
    }
    pending_remove(s, p);
    while (size && xml[size - 1] == 0) size--; /* a terminator some writers add */
    hash = fnv64(xml, size);
    t = taken_find(s, &ev->provider);
    if (t && t->hash == hash && t->size == size) {
        free(xml);
        return ETL_OK; /* sent again, as EventSources do at each enable: nothing new */
    }
    if (!t) {
        if (s->nt == s->capt) {
            uint32_t cap = s->capt ? s->capt * 2 : 8;
            struct taken *n = realloc(s->t, cap * sizeof *n);
            if (!n) {
                free(xml);
                return warn(d, s, ev, "out of memory");
            }
            s->t = n;
            s->capt = cap;
        }
        t = &s->t[s->nt++];
        t->provider = ev->provider;
    }
    t->hash = hash;
    t->size = (uint32_t)size;
    snprintf(name, sizeof name, "EventSource manifest of provider %s", etl_guid_format(&ev->provider, g));
    etl_schema_set_init(&set);
    rc = etl_manifest_parse(&set, xml, size, name, ETL_SCHEMA_EVENTSOURCE, d, err, sizeof err);
    free(xml);
    if (rc != ETL_OK) {
        /* "EventSource manifest of provider G:LINE: what (...)" */
        etl_schema_set_free(&set);
        etl_decoder_set_error(d, "%s (the manifest the ManifestData event at offset %llu completed)", err,
                              (unsigned long long)(ev->buffer_offset + ev->record_offset));
        if (s->warnings++ < WARNING_LIMIT) etl_decoder_warn(d, etl_decoder_error(d));
        return ETL_WARN;
    }
    if (!keep_only(&set, &ev->provider, &others)) {
        etl_schema_set_free(&set);
        return warn(d, s, ev, "it describes %u other provider%s, not this one", others, others == 1 ? "" : "s");
    }
    if (etl_decoder_adopt(d, &set) != ETL_OK) {
        etl_schema_set_free(&set);
        return warn(d, s, ev, "out of memory");
    }
    etl_schema_set_free(&set);
    if (others) return warn(d, s, ev, "it describes %u other provider%s too: left out", others, others == 1 ? "" : "s");
    return ETL_OK;
}

int etl_decoder_learn(etl_decoder *d, const etl_event *ev)
{
    struct learn_state *s;
    struct pending *p = NULL;
    const uint8_t *pl = ev->payload;
    uint32_t size;
    uint16_t total, number;

    if (ev->kind != ETL_KIND_EVENT || ev->id != 65534 || ev->opcode != 254) return ETL_OK;
    if (!(s = *etl_decoder_learn_state(d))) {
        if (!(s = calloc(1, sizeof *s))) return warn(d, NULL, ev, "out of memory");
        *etl_decoder_learn_state(d) = s;
    }
    if (ev->payload_len < ENVELOPE_SIZE || !pl)
        return warn(d, s, ev, "%u bytes, too few for a ManifestEnvelope", ev->payload_len);
    if (pl[3] != ENVELOPE_MAGIC || pl[0] != ENVELOPE_FORMAT_XML)
        return warn(d, s, ev, "not a ManifestEnvelope of an XML manifest (format %u, magic 0x%02x)", pl[0], pl[3]);
    total = etl_le16(pl + 4);
    number = etl_le16(pl + 6);
    size = ev->payload_len - ENVELOPE_SIZE;
    if (total == 0 || number >= total) return warn(d, s, ev, "chunk %u of %u", number, total);
    for (uint32_t i = 0; i < s->np; i++)
        if (etl_guid_equal(&s->p[i].provider, &ev->provider)) p = &s->p[i];
    if (total > MAX_CHUNKS) {
        if (p) pending_remove(s, p);
        return warn(d, s, ev, "%u chunks of up to %u bytes: more than the %u MiB kept for one manifest", total,
                    CHUNK_SIZE, MANIFEST_LIMIT >> 20);
    }
    /* Another manifest begins: another count of chunks or version, or a first chunk again. */
    if (p && (p->total != total || p->format != pl[0] || p->major != pl[1] || p->minor != pl[2] ||
              (number == 0 && p->chunks[0].data)))
        pending_remove(s, p), p = NULL;
    if (!p) {
        if (s->np == PENDING_PROVIDERS)
            return warn(d, s, ev, "more than %u providers' manifests are incomplete at once: chunk left out",
                        PENDING_PROVIDERS);
        if (s->np == s->capp) {
            uint32_t cap = s->capp ? s->capp * 2 : 8;
            struct pending *n = realloc(s->p, cap * sizeof *n);
            if (!n) return warn(d, s, ev, "out of memory");
            s->p = n;
            s->capp = cap;
        }
        p = &s->p[s->np];
        memset(p, 0, sizeof *p);
        if (!(p->chunks = calloc(total, sizeof *p->chunks))) return warn(d, s, ev, "out of memory");
        p->provider = ev->provider;
        p->total = total;
        p->format = pl[0];
        p->major = pl[1];
        p->minor = pl[2];
        s->np++;
    }
    if (p->chunks[number].data) return ETL_OK; /* a chunk again */
    if (p->bytes + size > MANIFEST_LIMIT) {
        pending_remove(s, p);
        return warn(d, s, ev, "more than %u MiB: left out", MANIFEST_LIMIT >> 20);
    }
    if (s->held + size > PENDING_LIMIT) {
        pending_remove(s, p);
        return warn(d, s, ev, "the incomplete manifests would hold more than %u MiB: this one left out",
                    PENDING_LIMIT >> 20);
    }
    if (!(p->chunks[number].data = malloc(size ? size : 1))) {
        pending_remove(s, p);
        return warn(d, s, ev, "out of memory");
    }
    memcpy(p->chunks[number].data, pl + ENVELOPE_SIZE, size);
    p->chunks[number].size = size;
    p->bytes += size;
    s->held += size;
    if (++p->received < p->total) return ETL_OK;
    return complete(d, s, p, ev);
}
