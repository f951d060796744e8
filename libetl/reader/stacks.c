/* SPDX-License-Identifier: MIT */
/* Stacks to the events they belong to: the owner of a StackWalk stack on its processor, and samples paired with their kernel and user halves and stack keys. */
#include <stdlib.h>
#include <string.h>

#include "reader/reader.h"

/* ---------------------------------------------------------------- owners (per processor) */

struct etl_stack_owners {
    struct owner_slot { int64_t ts; int64_t id; } *slot;
    unsigned n;
};

etl_stack_owners *etl_stack_owners_new(void)
{
    return calloc(1, sizeof(etl_stack_owners));
}

void etl_stack_owners_free(etl_stack_owners *o)
{
    if (!o) return;
    free(o->slot);
    free(o);
}

int etl_stack_owners_add(etl_stack_owners *o, const etl_event *ev, const etl_kernel_event *ke, int64_t id,
                         int64_t *owner)
{
    unsigned cpu = ev->cpu;
    int kc = ke ? ke->kclass : ETL_KCLASS_NONE;

    *owner = 0;
    if (kc == ETL_KCLASS_STACK_KEY_DEF) return ETL_OK;
    if (cpu >= o->n) {
        unsigned n = cpu + 1 < 64 ? 64 : 2 * (cpu + 1);
        struct owner_slot *p = realloc(o->slot, n * sizeof *p);
        if (!p) return ETL_FAILED;
        for (unsigned i = o->n; i < n; i++) p[i].ts = INT64_MIN, p[i].id = 0;
        o->slot = p;
        o->n = n;
    }
    if (kc == ETL_KCLASS_STACK || kc == ETL_KCLASS_STACK_KEY) {
        if (o->slot[cpu].id && o->slot[cpu].ts == ke->u.stack.event_timestamp) *owner = o->slot[cpu].id;
        return ETL_OK;
    }
    o->slot[cpu].ts = ev->timestamp;
    o->slot[cpu].id = id;
    return ETL_OK;
}

/* ---------------------------------------------------------------- the pairer */

/*
 * Everything is kept until the end, in arrays: samples (in the order they came), "entries" (one
 * per thread and sample timestamp: the samples and stacks that met there), "parts" (a stack half
 * or a key reference, chained from its entry) and key definitions; frames in one pool. Each
 * processor's last entry is at hand (a sample's stacks follow it there); one hash table finds
 * the entries before those that may still get a stack, by (timestamp, thread, processor), a
 * key's generation (how many times it was defined so far) and a key's definition by (key,
 * generation).
 */
#define NONE UINT32_MAX
enum { TAG_ENTRY = 0, TAG_KEYGEN = 1, TAG_DEF = 2 };

struct slot { uint64_t a, b; uint32_t value; uint8_t used; };
struct sample {
    int64_t ts;
    uint64_t ip;
    uint32_t tid, count, entry;
    uint16_t cpu, source, ext_id;
    uint8_t from_ext;
};
struct entry { uint32_t head, tail, samples, pid; uint8_t kernel_ip; /* a sample of it was in kernel mode */ };
struct part {
    uint64_t off_or_key;          /* frames' offset in the pool, or the key */
    uint32_t n_or_gen;            /* frames, or the key's generation */
    uint32_t next;
    uint8_t kernel, is_ref;
};
struct def { uint64_t off; uint32_t n; };
/* The entry a processor's last sample or stack met at (e NONE: none yet). Entries are put in
   the table only when they stop being one (entry_of). */
#define RECENT 64
struct recent { int64_t ts; uint64_t b; uint32_t e; };

struct etl_stack_pairer {
    unsigned flags;
    int reading, failed;
    struct slot *table;
    size_t tcap, tcount;
    struct sample *samples; size_t nsamples, csamples;
    struct entry *entries; size_t nentries, centries;
    struct part *parts; size_t nparts, cparts;
    struct def *defs; size_t ndefs, cdefs;
    uint64_t *pool; size_t npool, cpool;
    size_t cursor;
    uint64_t *scratch;
    struct recent recent[RECENT];
    unsigned nrecent;             /* the slots used: those below the highest processor's */
    etl_stack_pairer_stats stats;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* The slot of (a, b): the one that holds it, or the empty one where it would go. */
static struct slot *lookup(etl_stack_pairer *p, uint64_t a, uint64_t b)
{
    size_t mask = p->tcap - 1, i = (size_t)mix(a, b) & mask;
    while (p->table[i].used && (p->table[i].a != a || p->table[i].b != b)) i = (i + 1) & mask;
    return &p->table[i];
}

static uint32_t table_get(etl_stack_pairer *p, uint64_t a, uint64_t b)
{
    struct slot *s;
    if (!p->tcap) return NONE;
    s = lookup(p, a, b);
    return s->used ? s->value : NONE;
}

/* Room for one more in the table (it grows at half full): 0, or -1 without memory. */
static int table_reserve(etl_stack_pairer *p)
{
    if ((p->tcount + 1) * 2 > p->tcap) {
        size_t cap = p->tcap ? 2 * p->tcap : 1024;
        struct slot *old = p->table;
        size_t oldcap = p->tcap;
        struct slot *t = calloc(cap, sizeof *t);
        if (!t) return -1;
        p->table = t;
        p->tcap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].used) *lookup(p, old[i].a, old[i].b) = old[i];
        free(old);
    }
    return 0;
}

static int table_put(etl_stack_pairer *p, uint64_t a, uint64_t b, uint32_t value)
{
    struct slot *s;

    if (table_reserve(p) != 0) return -1;
    s = lookup(p, a, b);
    if (!s->used) p->tcount++;
    s->a = a;
    s->b = b;
    s->value = value;
    s->used = 1;
    return 0;
}

etl_stack_pairer *etl_stack_pairer_new(unsigned flags)
{
    etl_stack_pairer *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->flags = flags;
    for (unsigned i = 0; i < RECENT; i++) p->recent[i].e = NONE;
    p->scratch = malloc(ETL_STACK_MAX_FRAMES * sizeof *p->scratch);
    if (!p->scratch) {
        free(p);
        return NULL;
    }
    return p;
}

void etl_stack_pairer_free(etl_stack_pairer *p)
{
    if (!p) return;
    free(p->table);
    free(p->samples);
    free(p->entries);
    free(p->parts);
    free(p->defs);
    free(p->pool);
    free(p->scratch);
    free(p);
}

/* Whether entry e may still get a stack: it has no sample yet, or no user-mode half, or a
   sample in kernel mode and no kernel half (the halves come in either order). */
static int still_open(const etl_stack_pairer *p, uint32_t e)
{
    int user = 0, kernel = 0;

    for (uint32_t i = p->entries[e].head; i != NONE; i = p->parts[i].next) {
        if (p->parts[i].kernel) kernel = 1;
        else user = 1;
    }
    return !p->entries[e].samples || !user || (p->entries[e].kernel_ip && !kernel);
}

/* The entry of thread tid's event at ts (processor cpu counts for thread 0, the idle threads,
   which every processor has): found or made. NONE without memory. */
static uint32_t entry_of(etl_stack_pairer *p, uint32_t tid, int64_t ts, uint16_t cpu)
{
    uint64_t b = (uint64_t)TAG_ENTRY << 56 | (uint64_t)tid << 16 | (tid == 0 ? cpu : 0);
    unsigned slot = cpu % RECENT;
    struct recent *r = &p->recent[slot];
    uint32_t e;

    /* A sample's stacks follow it on its processor: the entry it made last. */
    if (r->e != NONE && r->ts == ts && r->b == b) return r->e;
    for (unsigned i = 0; i < p->nrecent; i++) /* another processor's last (a stack logged elsewhere) */
        if (i != slot && p->recent[i].e != NONE && p->recent[i].ts == ts && p->recent[i].b == b) return p->recent[i].e;
    e = table_get(p, (uint64_t)ts, b);
    if (e == NONE) {
        if (p->nentries >= NONE - 1 || etl_grow((void **)&p->entries, &p->centries, p->nentries + 1, sizeof *p->entries))
            return NONE;
        e = (uint32_t)p->nentries++;
        p->entries[e] = (struct entry){ NONE, NONE, 0, UINT32_MAX, 0 };
    }
    /* It becomes the processor's last; the one it replaces goes to the table while a stack may
       still come for it (still_open): a sample in user mode with its user stack has all it
       will get, and most samples are that. */
    if (r->e != NONE && r->e != e && still_open(p, r->e) && table_put(p, (uint64_t)r->ts, r->b, r->e) != 0) return NONE;
    *r = (struct recent){ ts, b, e };
    if (slot >= p->nrecent) p->nrecent = slot + 1;
    return e;
}

/* Copies n frames into the pool: their offset, or -1 without memory. */
static int64_t pool_add(etl_stack_pairer *p, const etl_kstack *s, const uint8_t *raw, unsigned n, unsigned size)
{
    size_t off = p->npool;

    if (etl_grow((void **)&p->pool, &p->cpool, p->npool + n, sizeof *p->pool)) return -1;
    for (unsigned i = 0; i < n; i++) {
        if (s) p->pool[off + i] = etl_kstack_frame_at(s, i);
        else p->pool[off + i] = size == 8 ? etl_le64(raw + 8 * i) : etl_le32(raw + 4 * i);
    }
    p->npool += n;
    return (int64_t)off;
}

static int is_kernel_address(uint64_t a, unsigned frame_size)
{
    return frame_size == 4 ? a >= 0x80000000u : a >= 0xFFFF800000000000ull;
}

static int part_add(etl_stack_pairer *p, uint32_t e, struct part part)
{
    uint32_t i;

    if (p->nparts >= NONE - 1 || etl_grow((void **)&p->parts, &p->cparts, p->nparts + 1, sizeof *p->parts)) return -1;
    i = (uint32_t)p->nparts++;
    part.next = NONE;
    p->parts[i] = part;
    if (p->entries[e].tail == NONE) p->entries[e].head = i;
    else p->parts[p->entries[e].tail].next = i;
    p->entries[e].tail = i;
    return 0;
}

static int sample_add(etl_stack_pairer *p, struct sample s)
{
    if (etl_grow((void **)&p->samples, &p->csamples, p->nsamples + 1, sizeof *p->samples)) return -1;
    p->samples[p->nsamples++] = s;
    return 0;
}

/* EVENT_HEADER STACK_TRACE32/64 items: MatchId (8 bytes), then the frames. */
static int add_ext(etl_stack_pairer *p, const etl_event *ev)
{
    for (unsigned i = 0; i < ev->ext_count; i++) {
        etl_ext_item it;
        unsigned fs, n;
        int64_t off;
        uint32_t e;
        if (etl_event_ext_item_get(ev, i, &it) != ETL_OK) continue;
        if (it.type != ETL_EXT_STACK_TRACE32 && it.type != ETL_EXT_STACK_TRACE64) continue;
        if (it.size < 8) continue;
        fs = it.type == ETL_EXT_STACK_TRACE64 ? 8 : 4;
        n = (it.size - 8u) / fs;
        if (p->nentries >= NONE - 1 || etl_grow((void **)&p->entries, &p->centries, p->nentries + 1, sizeof *p->entries))
            return ETL_FAILED;
        e = (uint32_t)p->nentries++;
        p->entries[e] = (struct entry){ NONE, NONE, 1, (ev->has & ETL_HAS_PID_TID) ? ev->pid : UINT32_MAX, 0 };
        if ((off = pool_add(p, NULL, it.data + 8, n, fs)) < 0 ||
            part_add(p, e, (struct part){ (uint64_t)off, n, NONE, 0, 0 }) != 0 ||
            sample_add(p, (struct sample){ ev->timestamp, n ? p->pool[off] : 0,
                                           (ev->has & ETL_HAS_PID_TID) ? ev->tid : UINT32_MAX, 1, e, ev->cpu, 0,
                                           ev->id, 1 }) != 0)
            return ETL_FAILED;
    }
    return ETL_OK;
}

int etl_stack_pairer_add(etl_stack_pairer *p, const etl_event *ev)
{
    etl_kernel_event ke;
    uint32_t e;

    if (p->reading) return ETL_FAILED;
    /* (Only samples and the StackWalk group's hooks are decoded: an event of another group
       can only be one with stack items.) */
    if (((ev->hook_id >> 8) != 0x18 && ev->hook_id != ETL_HOOK_SAMPLED_PROFILE && ev->hook_id != ETL_HOOK_PMC_SAMPLE) ||
        etl_kernel_decode(ev, &ke) != 1) {
        if ((p->flags & ETL_STACKS_EVENTS) && ev->kind == ETL_KIND_EVENT && ev->ext_count) return add_ext(p, ev);
        return ETL_OK;
    }
    switch (ke.kclass) {
    case ETL_KCLASS_SAMPLED_PROFILE: {
        const etl_ksample *s = &ke.u.sample;
        if ((e = entry_of(p, s->tid, ev->timestamp, ev->cpu)) == NONE ||
            sample_add(p, (struct sample){ ev->timestamp, s->instruction_pointer, s->tid, s->count ? s->count : 1, e,
                                           ev->cpu, s->profile_source, 0, 0 }) != 0)
            return ETL_FAILED;
        p->entries[e].samples++;
        if (is_kernel_address(s->instruction_pointer, ev->pointer_size == 4 ? 4 : 8)) p->entries[e].kernel_ip = 1;
        p->stats.samples++;
        return ETL_OK;
    }
    case ETL_KCLASS_STACK: case ETL_KCLASS_STACK_KEY: {
        const etl_kstack *s = &ke.u.stack;
        struct part part = { 0, 0, NONE, 0, 0 };
        if ((e = entry_of(p, s->tid, s->event_timestamp, ev->cpu)) == NONE) return ETL_FAILED;
        if (ke.kclass == ETL_KCLASS_STACK) {
            int64_t off = pool_add(p, s, NULL, s->frame_count, 0);
            if (off < 0) return ETL_FAILED;
            part.off_or_key = (uint64_t)off;
            part.n_or_gen = s->frame_count;
            part.kernel = s->frame_count && is_kernel_address(p->pool[off], s->frame_size);
        }
        else {
            uint32_t gen = table_get(p, s->stack_key, (uint64_t)TAG_KEYGEN << 56);
            part.off_or_key = s->stack_key;
            part.n_or_gen = gen == NONE ? 0 : gen;
            part.is_ref = 1;
            part.kernel = ev->hook_id == 0x1825;
        }
        if (part_add(p, e, part) != 0) return ETL_FAILED;
        p->entries[e].pid = s->pid;
        p->stats.stacks++;
        return ETL_OK;
    }
    case ETL_KCLASS_STACK_KEY_DEF: {
        const etl_kstack *s = &ke.u.stack;
        uint32_t gen = table_get(p, s->stack_key, (uint64_t)TAG_KEYGEN << 56);
        int64_t off;
        if (gen == NONE) gen = 0;
        if (p->ndefs >= NONE - 1 || etl_grow((void **)&p->defs, &p->cdefs, p->ndefs + 1, sizeof *p->defs) ||
            (off = pool_add(p, s, NULL, s->frame_count, 0)) < 0 ||
            table_put(p, s->stack_key, (uint64_t)TAG_DEF << 56 | gen, (uint32_t)p->ndefs) != 0 ||
            table_put(p, s->stack_key, (uint64_t)TAG_KEYGEN << 56, gen + 1) != 0)
            return ETL_FAILED;
        p->defs[p->ndefs++] = (struct def){ (uint64_t)off, s->frame_count };
        return ETL_OK;
    }
    default:
        return ETL_OK;
    }
}

/* Appends frames pool[off..off+n) to the scratch stack of *n_out frames. */
static void append(etl_stack_pairer *p, uint64_t off, uint32_t n, unsigned *n_out)
{
    uint32_t room = ETL_STACK_MAX_FRAMES - *n_out;
    if (n > room) {
        p->stats.frames_cut += n - room;
        n = room;
    }
    if (n) memcpy(p->scratch + *n_out, p->pool + off, (size_t)n * sizeof *p->scratch);
    *n_out += n;
}

/* The frames of entry e into the scratch stack: kernel halves, then user halves. */
static unsigned join(etl_stack_pairer *p, uint32_t e, int count_undefined)
{
    unsigned n = 0;

    for (int kernel = 1; kernel >= 0; kernel--) {
        for (uint32_t i = p->entries[e].head; i != NONE; i = p->parts[i].next) {
            const struct part *pt = &p->parts[i];
            if (pt->kernel != kernel) continue;
            if (!pt->is_ref) {
                append(p, pt->off_or_key, pt->n_or_gen, &n);
                continue;
            }
            uint32_t d = table_get(p, pt->off_or_key, (uint64_t)TAG_DEF << 56 | pt->n_or_gen);
            /* No later definition: the last one before (a rundown the trace began with). */
            if (d == NONE && pt->n_or_gen > 0)
                d = table_get(p, pt->off_or_key, (uint64_t)TAG_DEF << 56 | (pt->n_or_gen - 1));
            if (d == NONE) {
                if (count_undefined) p->stats.key_refs_undefined++;
                continue;
            }
            append(p, p->defs[d].off, p->defs[d].n, &n);
        }
    }
    return n;
}

int etl_stack_pairer_next(etl_stack_pairer *p, etl_stack_pair *out)
{
    const struct sample *s;
    unsigned n;

    if (!p->reading) {
        p->reading = 1;
        for (size_t e = 0; e < p->nentries; e++) {
            if (p->entries[e].samples) continue;
            for (uint32_t i = p->entries[e].head; i != NONE; i = p->parts[i].next) p->stats.stacks_unpaired++;
        }
    }
    if (p->cursor >= p->nsamples) return ETL_EOF;
    s = &p->samples[p->cursor];
    memset(out, 0, sizeof *out);
    n = join(p, s->entry, 1);
    if (!s->from_ext && n) p->stats.samples_with_stack++;
    out->has_stack = n > 0 || s->from_ext;
    if (!n && !s->from_ext) {
        p->scratch[0] = s->ip;
        n = 1;
    }
    out->timestamp = s->ts;
    out->pid = p->entries[s->entry].pid;
    out->tid = s->tid;
    out->cpu = s->cpu;
    out->profile_source = s->source;
    out->count = s->count;
    out->instruction_pointer = s->ip;
    out->frame_count = n;
    out->frames = p->scratch;
    out->from_ext = s->from_ext;
    out->ext_event_id = s->ext_id;
    p->cursor++;
    return ETL_OK;
}

void etl_stack_pairer_stats_get(const etl_stack_pairer *p, etl_stack_pairer_stats *out)
{
    *out = p->stats;
}
