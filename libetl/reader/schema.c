/* SPDX-License-Identifier: MIT */
/* The decoder: schema sets adopted from manifests, TraceLogging and the kernel's classes, found for each event and walked. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reader/reader.h"

/* ---------------------------------------------------------------- arenas */

struct etl_arena_chunk {
    struct etl_arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *etl_arena_alloc(etl_arena *a, size_t size)
{
    struct etl_arena_chunk *c = a->head;

    size = (size + 15u) & ~(size_t)15u;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    c->used += size;
    return c->data + c->used - size;
}

char *etl_arena_strndup(etl_arena *a, const char *s, size_t n)
{
    char *p = etl_arena_alloc(a, n + 1);

    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *etl_arena_strdup(etl_arena *a, const char *s) { return etl_arena_strndup(a, s, strlen(s)); }

void etl_arena_free(etl_arena *a)
{
    while (a->head) {
        struct etl_arena_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

/* ---------------------------------------------------------------- schema sets */

void etl_schema_set_init(etl_schema_set *set) { memset(set, 0, sizeof *set); }

void etl_schema_set_free(etl_schema_set *set)
{
    etl_arena_free(&set->arena);
    free(set->providers);
    free(set->events);
    memset(set, 0, sizeof *set);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    uint32_t n = *cap ? *cap : 8;
    void *q;

    if (need <= *cap) return 0;
    while (n < need) n *= 2;
    q = realloc(*p, (size_t)n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

int etl_schema_set_add_provider(etl_schema_set *set, const etl_guid *guid, const char *name, int source)
{
    etl_schema_provider *p;

    for (uint32_t i = 0; i < set->provider_count; i++) {
        if (etl_guid_equal(&set->providers[i].guid, guid)) {
            if (name && !(set->providers[i].name = etl_arena_strdup(&set->arena, name))) return ETL_FAILED;
            return ETL_OK;
        }
    }
    if (grow((void **)&set->providers, &set->provider_cap, set->provider_count + 1, sizeof *set->providers) != 0)
        return ETL_FAILED;
    p = &set->providers[set->provider_count];
    p->guid = *guid;
    p->source = (uint8_t)source;
    p->name = name ? etl_arena_strdup(&set->arena, name) : NULL;
    if (name && !p->name) return ETL_FAILED;
    set->provider_count++;
    return ETL_OK;
}

/* Checks fields [i, i + n) of ev as one level of the tree (nested at depth), filling spans;
   returns the index after them, or -1 with err. */
static long prepare_level(etl_schema_event *ev, etl_schema_field *f, long i, uint32_t n, unsigned depth,
                          char *err, size_t errsize)
{
    long first = i;

    if (depth > ev->max_depth) ev->max_depth = (uint16_t)depth;
    if (depth > 32) {
        snprintf(err, errsize, "event %s: structs nested more than 32 deep", ev->event_name ? ev->event_name : "?");
        return -1;
    }
    for (uint32_t k = 0; k < n; k++) {
        etl_schema_field *x;
        long next;

        if (i >= ev->field_count) {
            snprintf(err, errsize, "event %s: a struct's members run past its last field",
                     ev->event_name ? ev->event_name : "?");
            return -1;
        }
        x = &f[i];
        if (x->length_kind == ETL_LEN_FIELD || x->count_kind == ETL_COUNT_FIELD) ev->flags |= ETL_SCHEMA_HAS_REFS;
        if ((x->length_kind == ETL_LEN_FIELD && x->length_ref >= i) ||
            (x->count_kind == ETL_COUNT_FIELD && x->count_ref >= i)) {
            snprintf(err, errsize, "event %s: field %s takes its length or count from a field that does not come before it",
                     ev->event_name ? ev->event_name : "?", x->name ? x->name : "?");
            return -1;
        }
        if (x->in_type == ETL_IN_STRUCT) {
            if (x->members == 0) {
                snprintf(err, errsize, "event %s: struct %s has no members", ev->event_name ? ev->event_name : "?",
                         x->name ? x->name : "?");
                return -1;
            }
            next = prepare_level(ev, f, i + 1, x->members, depth + 1, err, errsize);
            if (next < 0) return -1;
        } else {
            next = i + 1;
        }
        if (next - i > UINT16_MAX) {
            snprintf(err, errsize, "event %s: too many fields", ev->event_name ? ev->event_name : "?");
            return -1;
        }
        /* Written only when it differs: the kernel's tables are read-only, their spans filled in. */
        if (x->span != (uint16_t)(next - i)) x->span = (uint16_t)(next - i);
        i = next;
    }
    (void)first;
    return i;
}

int etl_schema_event_prepare(etl_schema_event *ev, char *err, size_t errsize)
{
    etl_schema_field *f = (etl_schema_field *)ev->fields;
    long i = 0;

    ev->max_depth = 0;
    ev->flags = 0;
    while (i < ev->field_count) {
        i = prepare_level(ev, f, i, 1, 0, err, errsize);
        if (i < 0) return ETL_FAILED;
    }
    for (int p = 0; p < 2; p++) {
        uint32_t n = 0, bytes = 0;
        for (; n < ev->field_count; n++) {
            unsigned size = etl_in_type_fixed_size(f[n].in_type, p ? 8 : 4);
            if (!size || f[n].count_kind != ETL_COUNT_ONE || f[n].in_type == ETL_IN_STRUCT) break;
            bytes += size;
        }
        ev->prefix_fields[p] = (uint16_t)n;
        ev->prefix_bytes[p] = bytes;
    }
    return ETL_OK;
}

int etl_schema_set_add_event(etl_schema_set *set, etl_schema_event *ev, char *err, size_t errsize)
{
    if (etl_schema_event_prepare(ev, err, errsize) != ETL_OK) return ETL_FAILED;
    if (grow((void **)&set->events, &set->event_cap, set->event_count + 1, sizeof *set->events) != 0) {
        snprintf(err, errsize, "out of memory");
        return ETL_FAILED;
    }
    set->events[set->event_count++] = ev;
    return ETL_OK;
}

const char *etl_schema_event_name(etl_arena *a, const char *provider, const char *task, const char *opcode)
{
    const char *part[3] = { provider, task, opcode };
    size_t n = 0, o = 0;
    char *s;

    for (int i = 0; i < 3; i++) if (part[i] && *part[i]) n += strlen(part[i]) + 1;
    if (!n) return NULL;
    if (!(s = etl_arena_alloc(a, n))) return NULL;
    for (int i = 0; i < 3; i++) {
        if (!part[i] || !*part[i]) continue;
        if (o) s[o++] = '/';
        memcpy(s + o, part[i], strlen(part[i]));
        o += strlen(part[i]);
    }
    s[o] = '\0';
    return s;
}

/* ---------------------------------------------------------------- the decoder */

/* An event's key in the decoder's table. */
struct event_key {
    etl_guid provider;
    uint16_t id;
    uint8_t version, key;
};

struct event_slot {
    struct event_key k;
    const etl_schema_event *ev;     /* NULL: known to have no schema (a cached miss) */
    int used;
};

struct provider_slot {
    etl_guid guid;
    uint32_t index;                 /* in providers, +1; 0: empty slot */
};

struct provider_entry {
    etl_decoder_provider_stats stats;
    const etl_schema_set *owner;    /* the set whose events are this provider's (NULL: none) */
    uint8_t source;
};

/* A TraceLogging schema, cached by its provider and its metadata bytes. */
struct tl_entry {
    etl_guid provider;
    uint64_t hash;
    uint32_t size;
    const uint8_t *meta;            /* a copy, in the decoder's arena */
    const etl_schema_event *ev;
    struct tl_entry *next;
};

struct etl_decoder {
    etl_decoder_options opt;
    etl_schema_set **sets;
    uint32_t set_count, set_cap;
    struct event_slot *events;      /* open addressing; cap a power of two */
    uint32_t event_used, event_cap;
    struct provider_slot *pslots;
    uint32_t pslot_cap;
    struct provider_entry *providers;
    uint32_t provider_count, provider_cap;
    struct tl_entry **tl;           /* chained buckets */
    uint32_t tl_count, tl_cap;
    etl_arena arena;                /* TraceLogging schemas and names learnt from events */
    etl_fields_buf buf;
    /* the last event looked up, for runs of the same event */
    struct event_key last_key;
    const etl_schema_event *last_ev;
    int last_valid;
    etl_guid last_provider;         /* and its entry's index + 1 (0: none yet) */
    uint32_t last_provider_index;
    void *learn;                    /* what etl_decoder_learn keeps (eventsource.c) */
    const etl_schema_event *decoded; /* the schema of the last event decoded, or NULL */
    char err[512];
};

void etl_decoder_set_error(etl_decoder *d, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
}

const char *etl_decoder_error(const etl_decoder *d) { return d ? d->err : "out of memory"; }

const etl_schema_event *etl_decoder_last_schema(const etl_decoder *d) { return d->decoded; }

void **etl_decoder_learn_state(etl_decoder *d) { return &d->learn; }

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t guid_hash(const etl_guid *g)
{
    uint64_t a = (uint64_t)g->data1 << 32 | (uint64_t)g->data2 << 16 | g->data3, b;

    memcpy(&b, g->data4, 8);
    return mix64(a ^ mix64(b));
}

static uint64_t key_hash(const struct event_key *k)
{
    return mix64(guid_hash(&k->provider) ^ ((uint64_t)k->id << 16 | (uint64_t)k->version << 8 | k->key));
}

static int key_equal(const struct event_key *a, const struct event_key *b)
{
    return a->id == b->id && a->version == b->version && a->key == b->key && etl_guid_equal(&a->provider, &b->provider);
}

/* Bytes hashed eight at a time (the metadata of TraceLogging events: tens to hundreds). */
static uint64_t bytes_hash(const uint8_t *p, uint32_t n, uint64_t seed)
{
    uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);
    uint32_t i = 0;

    for (; i + 8 <= n; i += 8) h = mix64(h ^ etl_le64(p + i)) + 0x632be59bd9b4e019ull;
    if (i < n) {
        uint64_t t = 0;
        for (uint32_t k = 0; i + k < n; k++) t |= (uint64_t)p[i + k] << (8 * k);
        h = mix64(h ^ t);
    }
    return h;
}

static struct provider_entry *provider_find(const etl_decoder *d, const etl_guid *g)
{
    uint32_t mask = d->pslot_cap - 1;

    if (!d->pslot_cap) return NULL;
    for (uint32_t i = (uint32_t)guid_hash(g) & mask;; i = (i + 1) & mask) {
        if (!d->pslots[i].index) return NULL;
        if (etl_guid_equal(&d->pslots[i].guid, g)) return &d->providers[d->pslots[i].index - 1];
    }
}

static int pslots_insert(struct provider_slot *slots, uint32_t cap, const etl_guid *g, uint32_t index)
{
    uint32_t mask = cap - 1;

    for (uint32_t i = (uint32_t)guid_hash(g) & mask;; i = (i + 1) & mask) {
        if (!slots[i].index) {
            slots[i].guid = *g;
            slots[i].index = index;
            return 0;
        }
    }
}

/* The provider's entry, made when first seen: NULL without memory. */
static struct provider_entry *provider_get(etl_decoder *d, const etl_guid *g)
{
    struct provider_entry *e = provider_find(d, g);

    if (e) return e;
    if ((d->provider_count + 1) * 2 > d->pslot_cap) {
        uint32_t cap = d->pslot_cap ? d->pslot_cap * 2 : 64;
        struct provider_slot *s = calloc(cap, sizeof *s);
        if (!s) return NULL;
        for (uint32_t i = 0; i < d->provider_count; i++) pslots_insert(s, cap, &d->providers[i].stats.provider, i + 1);
        free(d->pslots);
        d->pslots = s;
        d->pslot_cap = cap;
    }
    if (grow((void **)&d->providers, &d->provider_cap, d->provider_count + 1, sizeof *d->providers) != 0) return NULL;
    e = &d->providers[d->provider_count++];
    memset(e, 0, sizeof *e);
    e->stats.provider = *g;
    pslots_insert(d->pslots, d->pslot_cap, g, d->provider_count);
    return e;
}

static struct event_slot *event_lookup(const etl_decoder *d, const struct event_key *k)
{
    uint32_t mask = d->event_cap - 1;

    if (!d->event_cap) return NULL;
    for (uint32_t i = (uint32_t)key_hash(k) & mask;; i = (i + 1) & mask) {
        if (!d->events[i].used) return NULL;
        if (key_equal(&d->events[i].k, k)) return &d->events[i];
    }
}

static int event_insert(etl_decoder *d, const struct event_key *k, const etl_schema_event *ev)
{
    struct event_slot *s;
    uint32_t mask;

    if ((d->event_used + 1) * 2 > d->event_cap) {
        uint32_t cap = d->event_cap ? d->event_cap * 2 : 1024;
        struct event_slot *old = d->events;
        uint32_t oldcap = d->event_cap;
        if (!(d->events = calloc(cap, sizeof *d->events))) {
            d->events = old;
            return -1;
        }
        d->event_cap = cap;
        d->event_used = 0;
        for (uint32_t i = 0; i < oldcap; i++)
            if (old[i].used) event_insert(d, &old[i].k, old[i].ev);
        free(old);
    }
    mask = d->event_cap - 1;
    for (uint32_t i = (uint32_t)key_hash(k) & mask;; i = (i + 1) & mask) {
        s = &d->events[i];
        if (!s->used) {
            s->used = 1;
            s->k = *k;
            s->ev = ev;
            d->event_used++;
            return 0;
        }
        if (key_equal(&s->k, k)) {
            s->ev = ev;
            return 0;
        }
    }
}

static void event_key_of(struct event_key *k, const etl_schema_event *ev)
{
    memset(k, 0, sizeof *k);
    k->provider = ev->provider;
    k->id = ev->id;
    k->version = ev->version;
    k->key = ev->key;
}

/* Rebuilds the event table from the sets, each provider's events from the last set that
   defines it. Cached misses and version fallbacks go with the old table. */
static int rebuild_events(etl_decoder *d)
{
    free(d->events);
    d->events = NULL;
    d->event_cap = d->event_used = 0;
    d->last_valid = 0;
    for (uint32_t s = 0; s < d->set_count; s++) {
        const etl_schema_set *set = d->sets[s];
        for (uint32_t i = 0; i < set->event_count; i++) {
            const etl_schema_event *ev = set->events[i];
            struct provider_entry *p = provider_find(d, &ev->provider);
            struct event_key k;
            if (!p || p->owner != set) continue;
            event_key_of(&k, ev);
            if (event_insert(d, &k, ev) != 0) return -1;
        }
    }
    return 0;
}

int etl_decoder_adopt(etl_decoder *d, etl_schema_set *set)
{
    etl_schema_set *own;

    if (grow((void **)&d->sets, &d->set_cap, d->set_count + 1, sizeof *d->sets) != 0) return ETL_FAILED;
    if (!(own = malloc(sizeof *own))) return ETL_FAILED;
    /* Every provider of the set, and of its events, must have an entry before the set is taken. */
    for (uint32_t i = 0; i < set->provider_count; i++)
        if (!provider_get(d, &set->providers[i].guid)) goto nomem;
    for (uint32_t i = 0; i < set->event_count; i++)
        if (!provider_get(d, &set->events[i]->provider)) goto nomem;
    *own = *set;
    etl_schema_set_init(set);
    d->sets[d->set_count++] = own;
    for (uint32_t i = 0; i < own->provider_count; i++) {
        struct provider_entry *p = provider_find(d, &own->providers[i].guid);
        p->owner = own;
        p->source = own->providers[i].source;
        if (own->providers[i].name) p->stats.name = own->providers[i].name;
    }
    for (uint32_t i = 0; i < own->event_count; i++) {
        struct provider_entry *p = provider_find(d, &own->events[i]->provider);
        if (!p->owner) p->owner = own;
    }
    if (rebuild_events(d) != 0) {
        etl_decoder_set_error(d, "out of memory");
        return ETL_FAILED; /* the set is the decoder's now; lookups fall back to misses */
    }
    return ETL_OK;
nomem:
    free(own);
    etl_decoder_set_error(d, "out of memory");
    return ETL_FAILED;
}

int etl_decoder_open(etl_decoder **out, const etl_decoder_options *opt)
{
    etl_decoder *d = calloc(1, sizeof *d);
    int rc = ETL_OK;

    *out = NULL;
    if (!d) return ETL_FATAL;
    if (opt) d->opt = *opt;
    if (etl_decoder_add_builtin(d) != ETL_OK) {
        etl_decoder_close(d);
        return ETL_FATAL;
    }
    if (!(d->opt.flags & ETL_DECODER_NO_DEFAULTS)) rc = etl_decoder_add_defaults(d);
    if (rc == ETL_FATAL) {
        etl_decoder_close(d);
        return ETL_FATAL;
    }
    *out = d;
    return rc;
}

void etl_decoder_close(etl_decoder *d)
{
    if (!d) return;
    for (uint32_t i = 0; i < d->set_count; i++) {
        etl_schema_set_free(d->sets[i]);
        free(d->sets[i]);
    }
    free(d->sets);
    free(d->events);
    free(d->pslots);
    free(d->providers);
    free(d->tl);
    etl_arena_free(&d->arena);
    etl_fields_buf_free(&d->buf);
    etl_decoder_learn_free(d);
    free(d);
}

void etl_decoder_warn(etl_decoder *d, const char *message)
{
    if (d->opt.on_warning) d->opt.on_warning(d->opt.on_warning_arg, message);
}

const char *etl_decoder_provider_name(const etl_decoder *d, const etl_guid *provider)
{
    const struct provider_entry *p = provider_find(d, provider);

    return p ? p->stats.name : NULL;
}

int etl_decoder_provider_guid(const etl_decoder *d, const char *name, etl_guid *out)
{
    for (uint32_t i = 0; i < d->provider_count; i++) {
        const char *n = d->providers[i].stats.name;
        if (n && strcasecmp(n, name) == 0) {
            *out = d->providers[i].stats.provider;
            return ETL_OK;
        }
    }
    return ETL_FAILED;
}

unsigned etl_decoder_provider_count(const etl_decoder *d) { return d->provider_count; }

int etl_decoder_provider_stats_get(const etl_decoder *d, unsigned index, etl_decoder_provider_stats *out)
{
    if (index >= d->provider_count) return ETL_FAILED;
    *out = d->providers[index].stats;
    return ETL_OK;
}

void etl_decoder_provider_stats_reset(etl_decoder *d)
{
    if (!d) return;
    for (uint32_t i = 0; i < d->provider_count; i++)
        d->providers[i].stats.decoded = d->providers[i].stats.undecoded = d->providers[i].stats.failed = 0;
}

/* ---------------------------------------------------------------- finding an event's schema */

/* The schema of a manifest or MOF event: exact version, else the nearest older one the
   provider defines (newer versions add fields at the end). Misses are cached. */
static const etl_schema_event *find_schema(etl_decoder *d, const struct event_key *k)
{
    struct event_slot *s = event_lookup(d, k);
    const etl_schema_event *ev = NULL;
    struct event_key lower = *k;

    if (s) return s->ev;
    while (lower.version > 0) {
        lower.version--;
        s = event_lookup(d, &lower);
        if (s && s->ev) {
            ev = s->ev;
            break;
        }
    }
    event_insert(d, k, ev); /* without memory the miss is simply not cached */
    return ev;
}

static const etl_ext_item *find_ext(const etl_event *ev, unsigned type, etl_ext_item *item)
{
    for (unsigned i = 0; i < ev->ext_count; i++)
        if (etl_event_ext_item_get(ev, i, item) == ETL_OK && item->type == type) return item;
    return NULL;
}

/* A TraceLogging event's schema, from the cache or parsed now: NULL with d->err when its
   metadata is malformed (or memory ran out). */
static const etl_schema_event *tracelogging_schema(etl_decoder *d, const etl_event *ev, const etl_ext_item *meta,
                                                   struct provider_entry *p)
{
    uint64_t h = bytes_hash(meta->data, meta->size, guid_hash(&ev->provider));
    struct tl_entry *e;
    etl_ext_item traits;
    char name[256];
    const char *pname = p->stats.name;
    etl_schema_event *s;
    uint8_t *copy;

    if (d->tl_cap) {
        for (e = d->tl[h & (d->tl_cap - 1)]; e; e = e->next)
            if (e->hash == h && e->size == meta->size && etl_guid_equal(&e->provider, &ev->provider) &&
                memcmp(e->meta, meta->data, meta->size) == 0)
                return e->ev;
    }
    if (find_ext(ev, ETL_EXT_PROV_TRAITS, &traits) &&
        etl_tracelogging_provider_name(traits.data, traits.size, name, sizeof name) == ETL_OK && name[0] &&
        (!pname || strcmp(pname, name) != 0)) {
        if (!(pname = etl_arena_strdup(&d->arena, name))) goto nomem;
        if (!p->stats.name || p->source == ETL_SCHEMA_TRACELOGGING) {
            p->stats.name = pname;
            p->source = ETL_SCHEMA_TRACELOGGING;
        }
    }
    if (!pname) {
        char g[ETL_GUID_STRING_SIZE];
        if (!(pname = etl_arena_strdup(&d->arena, etl_guid_format(&ev->provider, g)))) goto nomem;
    }
    s = etl_tracelogging_schema(&d->arena, &ev->provider, pname, meta->data, meta->size, d->err, sizeof d->err);
    if (!s) return NULL;
    if ((d->tl_count + 1) > d->tl_cap) {
        uint32_t cap = d->tl_cap ? d->tl_cap * 2 : 256;
        struct tl_entry **b = calloc(cap, sizeof *b);
        if (!b) goto nomem;
        for (uint32_t i = 0; i < d->tl_cap; i++) {
            for (e = d->tl[i]; e;) {
                struct tl_entry *next = e->next;
                e->next = b[e->hash & (cap - 1)];
                b[e->hash & (cap - 1)] = e;
                e = next;
            }
        }
        free(d->tl);
        d->tl = b;
        d->tl_cap = cap;
    }
    if (!(e = etl_arena_alloc(&d->arena, sizeof *e)) || !(copy = etl_arena_alloc(&d->arena, meta->size ? meta->size : 1)))
        goto nomem;
    memcpy(copy, meta->data, meta->size);
    e->provider = ev->provider;
    e->hash = h;
    e->size = meta->size;
    e->meta = copy;
    e->ev = s;
    e->next = d->tl[h & (d->tl_cap - 1)];
    d->tl[h & (d->tl_cap - 1)] = e;
    d->tl_count++;
    return s;
nomem:
    etl_decoder_set_error(d, "out of memory");
    return NULL;
}

/* Where the event is, for messages. */
static int event_where(const etl_event *ev, char *out, size_t size)
{
    return snprintf(out, size, "event at offset %llu (buffer %u at offset %llu, record at +%u)",
                    (unsigned long long)(ev->buffer_offset + ev->record_offset), ev->buffer_index,
                    (unsigned long long)ev->buffer_offset, ev->record_offset);
}

int etl_decoder_decode(etl_decoder *d, const etl_event *ev, etl_decoded_event *out)
{
    struct provider_entry *p;
    const etl_schema_event *s = NULL;
    etl_ext_item meta;
    etl_fields_fault fault;
    int rc;

    memset(out, 0, sizeof *out);
    d->err[0] = '\0';
    d->decoded = NULL;
    if (ev->kind == ETL_KIND_EVENT && ev->id == 65534 && ev->opcode == 254) etl_decoder_learn(d, ev);
    if (d->last_provider_index && etl_guid_equal(&d->last_provider, &ev->provider)) {
        p = &d->providers[d->last_provider_index - 1];
    } else {
        if (!(p = provider_get(d, &ev->provider))) {
            etl_decoder_set_error(d, "out of memory");
            return ETL_FAILED;
        }
        d->last_provider = ev->provider;
        d->last_provider_index = (uint32_t)(p - d->providers) + 1;
    }
    if (ev->kind == ETL_KIND_EVENT && ev->ext_count && find_ext(ev, ETL_EXT_EVENT_SCHEMA_TL, &meta)) {
        s = tracelogging_schema(d, ev, &meta, p);
        if (!s) {
            char where[128];
            char msg[sizeof d->err];
            event_where(ev, where, sizeof where);
            snprintf(msg, sizeof msg, "%s", d->err);
            etl_decoder_set_error(d, "%s: TraceLogging metadata: %s", where, msg);
            p->stats.failed++;
            out->provider_name = p->stats.name;
            return ETL_FAILED;
        }
    } else if (ev->kind != ETL_KIND_MESSAGE) {
        struct event_key k;
        memset(&k, 0, sizeof k);
        k.provider = ev->provider;
        k.key = ev->kind == ETL_KIND_EVENT ? ETL_KEY_ID : ETL_KEY_OPCODE;
        k.id = ev->kind == ETL_KIND_EVENT ? ev->id : ev->opcode;
        k.version = (uint8_t)ev->version;
        if (d->last_valid && key_equal(&k, &d->last_key)) {
            s = d->last_ev;
        } else {
            s = find_schema(d, &k);
            d->last_key = k;
            d->last_ev = s;
            d->last_valid = 1;
        }
    }
    out->provider_name = p->stats.name;
    if (!s) {
        p->stats.undecoded++;
        return 0;
    }
    d->decoded = s;
    out->source = s->source;
    out->provider_name = s->provider_name ? s->provider_name : p->stats.name;
    out->task_name = s->task_name;
    out->opcode_name = s->opcode_name;
    out->event_name = s->event_name;
    rc = etl_fields_decode(s, ev->payload, ev->payload_len, ev->pointer_size, &d->buf, &fault);
    out->fields = d->buf.fields;
    out->field_count = d->buf.count;
    out->payload_used = d->buf.used;
    if (rc == ETL_OK) {
        p->stats.decoded++;
        return 1;
    }
    if (rc == ETL_FATAL) {
        etl_decoder_set_error(d, "out of memory");
    } else {
        char where[128];
        event_where(ev, where, sizeof where);
        etl_decoder_set_error(d, "%s: %s: field %s at payload byte %u: %s", where, s->event_name ? s->event_name : "event",
                              fault.field ? fault.field : "?", fault.offset, fault.why ? fault.why : "does not fit");
    }
    p->stats.failed++;
    return ETL_FAILED;
}

const char *etl_schema_source_name(int source)
{
    static const char *const names[] = { "none", "manifest", "eventsource", "tracelogging", "kernel" };

    return source >= 0 && source <= ETL_SCHEMA_KERNEL ? names[source] : "unknown";
}
