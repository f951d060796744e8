/* SPDX-License-Identifier: MIT */
/* The profile model: samples paired with their stacks, named by a symbolizer, counted per distinct stack of a thread; and its folded (FlameGraph) writer. */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"
#include "output/output.h"

#define NONE UINT32_MAX
/* Frames one address can give (the function and the functions inlined into it). */
#define MAX_INLINE 32
/* The profile interval where the trace gives none: Windows' and etlrecord's default. */
#define DEFAULT_INTERVAL_NS 1000000u

static void set_error(etl_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(etl_profile *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
}

/* FNV-1a's step on 64-bit words (table_start mixes the result before the mask). */
static uint64_t hash_u64(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001B3ull;
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = hash_u64(h, w);
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

/* ---------------------------------------------------------------- the index tables */

/* Where hash h starts its walk: FNV-1a's low bits, which the mask keeps, are mixed from few
   of the input's bits (a multiply carries only upwards): its high bits are folded in. */
static size_t table_start(uint64_t h, size_t mask)
{
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return (size_t)h & mask;
}

static void table_free(struct profile_table *t)
{
    free(t->hash);
    free(t->index);
}

static int table_grow(struct profile_table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 256;
    uint64_t *h = malloc(cap * sizeof *h);
    uint32_t *ix = malloc(cap * sizeof *ix);

    if (!h || !ix) {
        free(h);
        free(ix);
        return -1;
    }
    for (size_t i = 0; i < cap; i++) ix[i] = NONE;
    for (size_t i = 0; i < t->cap; i++) {
        size_t j;
        if (t->index[i] == NONE) continue;
        for (j = table_start(t->hash[i], cap - 1); ix[j] != NONE; j = (j + 1) & (cap - 1)) {}
        h[j] = t->hash[i];
        ix[j] = t->index[i];
    }
    free(t->hash);
    free(t->index);
    t->hash = h;
    t->index = ix;
    t->cap = cap;
    return 0;
}

/* Walks the candidates of hash h: *slot starts at SIZE_MAX; each call gives the next index with
   that hash, or NONE at the empty slot where a new one would go (*slot). */
static uint32_t table_next(const struct profile_table *t, uint64_t h, size_t *slot)
{
    size_t mask = t->cap - 1;
    size_t i = *slot == SIZE_MAX ? table_start(h, mask) : (*slot + 1) & mask;

    for (; t->index[i] != NONE; i = (i + 1) & mask) {
        if (t->hash[i] == h) {
            *slot = i;
            return t->index[i];
        }
    }
    *slot = i;
    return NONE;
}

/* Makes room (before a walk), so that the empty slot a walk ends on can be taken. */
static int table_reserve(struct profile_table *t)
{
    return (t->count + 1) * 2 > t->cap ? table_grow(t) : 0;
}

static void table_take(struct profile_table *t, size_t slot, uint64_t h, uint32_t index)
{
    t->hash[slot] = h;
    t->index[slot] = index;
    t->count++;
}

/* ---------------------------------------------------------------- interned strings and frames */

/* The profile's copy of s (NULL stays NULL); NULL with *fail set without memory. */
static const char *intern(etl_profile *p, const char *s, int *fail)
{
    uint64_t h;
    size_t slot = SIZE_MAX, n;
    uint32_t i;

    if (!s) return NULL;
    n = strlen(s);
    h = hash_bytes(0xCBF29CE484222325ull, s, n);
    if (table_reserve(&p->string_table) != 0) goto fail;
    while ((i = table_next(&p->string_table, h, &slot)) != NONE)
        if (strcmp(p->strings[i], s) == 0) return p->strings[i];
    if (p->nstrings >= NONE - 1 || etl_grow((void **)&p->strings, &p->cstrings, p->nstrings + 1, sizeof *p->strings))
        goto fail;
    char *c = malloc(n + 1);
    if (!c) goto fail;
    memcpy(c, s, n + 1);
    p->strings[p->nstrings] = c;
    table_take(&p->string_table, slot, h, (uint32_t)p->nstrings++);
    return c;
fail:
    *fail = 1;
    return NULL;
}

/* The index of a frame like f (its strings interned already), added when new; NONE without
   memory. */
static uint32_t frame_of(etl_profile *p, const etl_profile_frame *f)
{
    uint64_t h = 0xCBF29CE484222325ull;
    size_t slot = SIZE_MAX;
    uint32_t i;

    h = hash_u64(h, (uintptr_t)f->name);
    h = hash_u64(h, (uintptr_t)f->function);
    h = hash_u64(h, (uintptr_t)f->image_path);
    h = hash_u64(h, (uintptr_t)f->source_file);
    h = hash_u64(h, (uint64_t)f->line << 1 | f->inlined);
    if (table_reserve(&p->frame_table) != 0) return NONE;
    while ((i = table_next(&p->frame_table, h, &slot)) != NONE) {
        const etl_profile_frame *g = &p->frames[i];
        if (g->name == f->name && g->function == f->function && g->image_path == f->image_path &&
            g->image == f->image && g->source_file == f->source_file && g->line == f->line &&
            g->inlined == f->inlined && g->build_id == f->build_id)
            return i;
    }
    if (p->nframes >= NONE - 1 || etl_grow((void **)&p->frames, &p->cframes, p->nframes + 1, sizeof *p->frames))
        return NONE;
    p->frames[p->nframes] = *f;
    table_take(&p->frame_table, slot, h, (uint32_t)p->nframes);
    return (uint32_t)p->nframes++;
}

/* The mapping (index + 1) of an image, added when new; 0 for no image; NONE without memory. */
static uint32_t mapping_of(etl_profile *p, const char *image, const char *path, const char *build_id,
                           uint64_t base, uint64_t address)
{
    const char *key = path ? path : image;
    uint64_t h = hash_u64(hash_u64(0xCBF29CE484222325ull, (uintptr_t)key), (uintptr_t)build_id);
    size_t slot = SIZE_MAX;
    uint32_t i;

    if (!key) return 0;
    if (table_reserve(&p->mapping_table) != 0) return NONE;
    while ((i = table_next(&p->mapping_table, h, &slot)) != NONE) {
        struct profile_mapping *m = &p->mappings[i];
        if ((m->path ? m->path : m->image) == key && m->build_id == build_id) {
            if (base == m->start && address >= m->limit) m->limit = address + 1;
            return i + 1;
        }
    }
    if (p->nmappings >= NONE - 2 || etl_grow((void **)&p->mappings, &p->cmappings, p->nmappings + 1, sizeof *p->mappings))
        return NONE;
    p->mappings[p->nmappings] = (struct profile_mapping){ image, path, build_id, base, address + 1 };
    table_take(&p->mapping_table, slot, h, (uint32_t)p->nmappings);
    return (uint32_t)++p->nmappings;
}

/* The location of address addr (looked up at lookup) of process pid at ts, resolved and added
   when new; NONE when memory ran out. */
static uint32_t location_of(etl_profile *p, etl_symbolizer *s, uint32_t pid, uint64_t addr, uint64_t lookup,
                            int64_t ts)
{
    etl_symbol sym[MAX_INLINE];
    const char *key_path;
    uint64_t key_offset, h;
    uint32_t key_pid, i, mapping;
    size_t slot = SIZE_MAX;
    int n, fail = 0;

    n = etl_symbolizer_resolve(s, pid, lookup, ts, sym, MAX_INLINE); /* (fills sym[0..n)) */
    if (n < 0) return NONE;
    if (n == 0) {
        memset(&sym[0], 0, sizeof sym[0]);
        n = 1;
    }
    p->stats.frames++;
    if (sym[0].function || sym[n - 1].function) p->stats.frames_named++;
    /* Known by image and offset, so that one image in many processes is one location. */
    key_path = intern(p, sym[0].image ? (sym[0].image_path ? sym[0].image_path : sym[0].image) : NULL, &fail);
    key_offset = key_path ? sym[0].image_offset : lookup;
    key_pid = key_path ? 0 : pid;
    if (fail) return NONE;
    h = hash_u64(hash_u64(hash_u64(0x84222325CBF29CE4ull, (uintptr_t)key_path), key_offset), key_pid);
    if (table_reserve(&p->location_table) != 0) return NONE;
    while ((i = table_next(&p->location_table, h, &slot)) != NONE) {
        const struct profile_location *l = &p->locations[i];
        if (l->key_path == key_path && l->key_offset == key_offset && l->key_pid == key_pid) return i;
    }
    if (p->nlocations >= NONE - 1 ||
        etl_grow((void **)&p->locations, &p->clocations, p->nlocations + 1, sizeof *p->locations) ||
        etl_grow((void **)&p->loc_frames, &p->cloc_frames, p->nloc_frames + (size_t)n, sizeof *p->loc_frames))
        return NONE;
    {
        const char *image = intern(p, sym[0].image, &fail), *path = intern(p, sym[0].image_path, &fail);
        const char *build_id = intern(p, sym[0].build_id, &fail);
        if (fail) return NONE;
        mapping = mapping_of(p, image, path, build_id, lookup - sym[0].image_offset, addr);
        if (mapping == NONE) return NONE;
        for (int k = 0; k < n; k++) {
            etl_profile_frame f;
            char name[64];
            uint32_t fi;
            memset(&f, 0, sizeof f);
            f.function = intern(p, sym[k].function, &fail);
            f.image = image;
            f.image_path = path;
            f.build_id = build_id;
            f.source_file = intern(p, sym[k].source_file, &fail);
            f.line = sym[k].line;
            f.inlined = k < n - 1 ? 1 : 0;
            if (f.function) f.name = f.function;
            else if (image) {
                /* the frame's own address, though a return address was looked up a byte back */
                int w = snprintf(name, sizeof name, "+0x%" PRIx64, sym[k].image_offset + (addr - lookup));
                size_t il = strlen(image);
                char *b = malloc(il + (size_t)w + 1);
                if (!b) return NONE;
                memcpy(b, image, il);
                memcpy(b + il, name, (size_t)w + 1);
                f.name = intern(p, b, &fail);
                free(b);
            }
            else {
                snprintf(name, sizeof name, "0x%" PRIx64, addr);
                f.name = intern(p, name, &fail);
            }
            if (fail || (fi = frame_of(p, &f)) == NONE) return NONE;
            p->loc_frames[p->nloc_frames + (size_t)k] = fi;
        }
    }
    p->locations[p->nlocations] = (struct profile_location){ addr, (uint32_t)p->nloc_frames, (uint32_t)n, mapping,
                                                              key_path, key_offset, key_pid };
    p->nloc_frames += (size_t)n;
    table_take(&p->location_table, slot, h, (uint32_t)p->nlocations);
    return (uint32_t)p->nlocations++;
}

/* Counts a sample of stack locs[0..n) (leaf first) of thread tid of process (index) proc. */
static int stack_add(etl_profile *p, uint32_t proc, uint32_t pid, uint32_t tid, const uint32_t *locs, unsigned n,
                     uint64_t samples, uint64_t weight)
{
    uint64_t h = hash_u64(hash_u64(hash_u64(0xCBF29CE484222325ull, proc), pid), tid);
    size_t slot = SIZE_MAX;
    uint32_t i;

    h = hash_bytes(h, locs, n * sizeof *locs);
    if (table_reserve(&p->stack_table) != 0) return -1;
    while ((i = table_next(&p->stack_table, h, &slot)) != NONE) {
        struct profile_stack *st = &p->stacks[i];
        if (st->process == proc && st->pid == pid && st->tid == tid && st->count == n &&
            memcmp(p->stack_locs + st->first, locs, n * sizeof *locs) == 0) {
            st->samples += samples;
            st->weight_ns += weight;
            return 0;
        }
    }
    if (p->nstacks >= NONE - 1 || etl_grow((void **)&p->stacks, &p->cstacks, p->nstacks + 1, sizeof *p->stacks) ||
        p->nstack_locs + n >= NONE ||
        etl_grow((void **)&p->stack_locs, &p->cstack_locs, p->nstack_locs + n, sizeof *p->stack_locs))
        return -1;
    memcpy(p->stack_locs + p->nstack_locs, locs, n * sizeof *locs);
    p->stacks[p->nstacks] = (struct profile_stack){ proc, pid, tid, (uint32_t)p->nstack_locs, n, samples, weight };
    p->nstack_locs += n;
    table_take(&p->stack_table, slot, h, (uint32_t)p->nstacks++);
    return 0;
}

/* ---------------------------------------------------------------- one trace */

struct pname { uint32_t pid; int64_t ts; const char *name; };
struct interval { int64_t ts; uint64_t ns; };
struct trace {
    struct pname *names; size_t nnames, cnames;
    struct interval *intervals; size_t nintervals, cintervals;
    etl_image_map *map;
    etl_symbolizer *sym;
    etl_stack_pairer *pairer;
    uint32_t *locs;
};

static int cmp_pname(const void *a, const void *b)
{
    const struct pname *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_interval(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The name of process pid at ts: the last name its Process events gave before ts, else the
   first after; NULL when none did. */
static const char *name_at(const struct trace *t, uint32_t pid, int64_t ts)
{
    size_t lo = 0, hi = t->nnames;
    const char *name = NULL;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->names[mid].pid < pid) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < t->nnames && t->names[i].pid == pid; i++) {
        if (!name || t->names[i].ts <= ts) name = t->names[i].name;
        if (t->names[i].ts > ts) break;
    }
    return name;
}

static uint64_t interval_at(const struct trace *t, int64_t ts)
{
    uint64_t ns = t->nintervals ? t->intervals[0].ns : DEFAULT_INTERVAL_NS;
    for (size_t i = 0; i < t->nintervals && t->intervals[i].ts <= ts; i++) ns = t->intervals[i].ns;
    return ns;
}

/* What one event tells the profile besides its samples: process names and profile intervals. */
static int learn(etl_profile *p, struct trace *t, const etl_event *ev)
{
    etl_kernel_event ke;
    int fail = 0;

    /* PerfInfo SetInterval (72) and CollectionStart (73) of the timer (Source 0): Source,
       NewInterval (100 ns), ...; CollectionEnd (74) changes nothing. */
    if ((ev->kind == ETL_KIND_SYSTEM || ev->kind == ETL_KIND_COMPACT || ev->kind == ETL_KIND_PERFINFO) &&
        (ev->hook_id == ETL_HOOK_PROFILE_SET_INTERVAL || ev->hook_id == ETL_HOOK_PROFILE_COLLECTION_START) &&
        ev->payload_len >= 8 && etl_le32(ev->payload) == 0 &&
        etl_le32(ev->payload + 4) != 0) {
        if (etl_grow((void **)&t->intervals, &t->cintervals, t->nintervals + 1, sizeof *t->intervals)) return -1;
        t->intervals[t->nintervals++] = (struct interval){ ev->timestamp, (uint64_t)etl_le32(ev->payload + 4) * 100 };
        return 0;
    }
    /* Process events are hooks of the Process group: no other event is worth decoding here (most
       of a profile's events are samples and stacks) */
    if ((ev->hook_id >> 8) != ETL_GROUP_PROCESS) return 0;
    if (etl_kernel_decode(ev, &ke) != 1 || ke.kclass != ETL_KCLASS_PROCESS || !ke.u.process.image_file_name.data)
        return 0;
    {
        char name[512];
        const char *in;
        etl_string_to_utf8(&ke.u.process.image_file_name, name, sizeof name);
        if (!name[0]) return 0;
        in = intern(p, name, &fail);
        if (fail || etl_grow((void **)&t->names, &t->cnames, t->nnames + 1, sizeof *t->names)) return -1;
        t->names[t->nnames++] = (struct pname){ ke.u.process.pid, ev->timestamp, in };
    }
    return 0;
}

static uint32_t process_index(etl_profile *p, const char *name)
{
    for (size_t i = p->nprocesses; i-- > 0;)
        if (p->processes[i] == name) return (uint32_t)i;
    if (etl_grow((void **)&p->processes, &p->cprocesses, p->nprocesses + 1, sizeof *p->processes)) return NONE;
    p->processes[p->nprocesses] = name;
    return (uint32_t)p->nprocesses++;
}

static int process_wanted(const etl_profile *p, uint32_t pid, const char *name)
{
    if (!p->o.nprocesses) return 1;
    for (size_t i = 0; i < p->o.nprocesses; i++) {
        const char *f = p->process_filters[i];
        uint32_t v = 0;
        int digits = *f != 0;
        for (const char *c = f; *c; c++) {
            if (!isdigit((unsigned char)*c) || v > (UINT32_MAX - 9) / 10) {
                digits = 0;
                break;
            }
            v = v * 10 + (uint32_t)(*c - '0');
        }
        if (digits && v == pid) return 1;
        if (name && strcasecmp(f, name) == 0) return 1;
    }
    return 0;
}

static int thread_wanted(const etl_profile *p, uint32_t tid)
{
    if (!p->o.nthreads) return 1;
    for (size_t i = 0; i < p->o.nthreads; i++)
        if (p->thread_filters[i] == tid) return 1;
    return 0;
}

/* Each pair the pairer gives, filtered, resolved and counted. */
static int count_samples(etl_profile *p, struct trace *t, etl_reader *r)
{
    const etl_trace_info *info = etl_reader_info(r);
    int64_t start_ns = etl_reader_time_ns(r, info->clock.start_timestamp);
    etl_stack_pair sp;
    int rc, fail = 0;

    if (!p->have_time) p->stats.time_ns = start_ns;
    if (t->nnames) qsort(t->names, t->nnames, sizeof *t->names, cmp_pname);
    if (t->nintervals) qsort(t->intervals, t->nintervals, sizeof *t->intervals, cmp_interval);
    if (!p->stats.period_ns) p->stats.period_ns = t->nintervals ? t->intervals[0].ns : DEFAULT_INTERVAL_NS;
    while ((rc = etl_stack_pairer_next(t->pairer, &sp)) == ETL_OK) {
        int64_t ns = etl_reader_time_ns(r, sp.timestamp), pid64;
        uint32_t pid = sp.pid, proc;
        const char *name;
        char buf[32];
        unsigned n = 0;

        p->stats.sample_events++;
        if (!thread_wanted(p, sp.tid)) continue;
        if (p->o.has_time_range && (ns - start_ns < p->o.time_from_ns || ns - start_ns >= p->o.time_to_ns)) continue;
        if (pid == UINT32_MAX && (pid64 = etl_image_map_thread_pid(t->map, sp.tid, sp.timestamp)) >= 0)
            pid = (uint32_t)pid64;
        name = pid == UINT32_MAX ? NULL : name_at(t, pid, sp.timestamp);
        if (!process_wanted(p, pid, name)) continue;
        if (!name) {
            if (pid == UINT32_MAX) snprintf(buf, sizeof buf, "[unknown]");
            else snprintf(buf, sizeof buf, "[pid %" PRIu32 "]", pid);
            name = intern(p, buf, &fail);
            if (fail) return ETL_FAILED;
        }
        for (unsigned i = 0; i < sp.frame_count; i++) {
            uint64_t a = sp.frames[i];
            /* a return address: the call before it is the line that was running */
            uint32_t l = location_of(p, t->sym, pid, a, i > 0 && a > 0 ? a - 1 : a, sp.timestamp);
            if (l == NONE) return ETL_FAILED;
            t->locs[n++] = l;
        }
        uint64_t weight = sp.profile_source == 0 ? sp.count * interval_at(t, sp.timestamp) : 0;
        if ((proc = process_index(p, name)) == NONE ||
            stack_add(p, proc, pid, sp.tid, t->locs, n, sp.count, weight) != 0)
            return ETL_FAILED;
        p->stats.samples += sp.count;
        p->stats.weight_ns += weight;
        if (sp.has_stack) p->stats.samples_with_stack += sp.count;
        if (!p->have_time || ns < p->first_ns) p->first_ns = ns;
        if (!p->have_time || ns > p->last_ns) p->last_ns = ns;
        p->have_time = 1;
        p->stats.duration_ns = p->last_ns - p->first_ns;
    }
    return rc == ETL_EOF ? ETL_OK : ETL_FAILED;
}

int etl_profile_add_trace(etl_profile *p, etl_reader *r)
{
    struct trace t;
    etl_event ev;
    int rc, result = ETL_OK;

    memset(&t, 0, sizeof t);
    p->error[0] = 0;
    t.map = etl_image_map_new();
    t.pairer = etl_stack_pairer_new(0);
    t.locs = malloc(ETL_STACK_MAX_FRAMES * sizeof *t.locs);
    if (!t.map || !t.pairer || !t.locs) {
        set_error(p, "out of memory");
        result = ETL_FAILED;
        goto out;
    }
    if (etl_symbolizer_open(&t.sym, p->has_so ? &p->so : NULL) != ETL_OK) {
        set_error(p, "cannot make a symbolizer: out of memory");
        result = ETL_FAILED;
        goto out;
    }
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (rc == ETL_WARN) {
            result = ETL_WARN;
            set_error(p, "%s", etl_reader_error(r));
        }
        if (etl_image_map_add(t.map, &ev) != ETL_OK || etl_symbolizer_add(t.sym, &ev) != ETL_OK ||
            etl_stack_pairer_add(t.pairer, &ev) != ETL_OK || learn(p, &t, &ev) != 0) {
            set_error(p, "out of memory");
            result = ETL_FAILED;
            goto out;
        }
    }
    if (rc != ETL_EOF) {
        set_error(p, "%s", etl_reader_error(r));
        result = ETL_FATAL;
        goto out;
    }
    if (count_samples(p, &t, r) != ETL_OK) {
        set_error(p, "out of memory");
        result = ETL_FAILED;
    }
out:
    if (t.sym) {
        etl_symbolizer_stats ss;
        etl_symbolizer_stats_get(t.sym, &ss);
        p->stats.symbol_lookups += ss.lookups;
        p->stats.symbol_cache_hits += ss.cache_hits;
        p->stats.symbol_resolved += ss.resolved;
    }
    etl_symbolizer_close(t.sym);
    etl_stack_pairer_free(t.pairer);
    etl_image_map_free(t.map);
    free(t.names);
    free(t.intervals);
    free(t.locs);
    return result;
}

/* ---------------------------------------------------------------- making and reading */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

int etl_profile_new(etl_profile **out, const etl_profile_options *o)
{
    etl_profile *p = calloc(1, sizeof *p);

    *out = NULL;
    if (!p) return ETL_FAILED;
    if (o) p->o = *o;
    p->o.processes = NULL;
    p->o.threads = NULL;
    p->o.symbols = NULL;
    if (o && o->nprocesses) {
        if (!(p->process_filters = calloc(o->nprocesses, sizeof *p->process_filters))) goto fail;
        for (size_t i = 0; i < o->nprocesses; i++)
            if (!(p->process_filters[i] = dup_str(o->processes[i]))) goto fail;
    }
    if (o && o->nthreads) {
        if (!(p->thread_filters = malloc(o->nthreads * sizeof *p->thread_filters))) goto fail;
        memcpy(p->thread_filters, o->threads, o->nthreads * sizeof *p->thread_filters);
    }
    if (o && o->symbols) {
        p->has_so = 1;
        p->so = *o->symbols;
        p->so.paths = NULL;
        p->so.llvm_symbolizer = NULL;
        if (o->symbols->npaths) {
            if (!(p->so_paths = calloc(o->symbols->npaths, sizeof *p->so_paths))) goto fail;
            for (size_t i = 0; i < o->symbols->npaths; i++)
                if (!(p->so_paths[i] = dup_str(o->symbols->paths[i]))) goto fail;
            p->so.paths = (const char *const *)p->so_paths;
        }
        if (o->symbols->llvm_symbolizer) {
            if (!(p->so_llvm = dup_str(o->symbols->llvm_symbolizer))) goto fail;
            p->so.llvm_symbolizer = p->so_llvm;
        }
    }
    *out = p;
    return ETL_OK;
fail:
    etl_profile_free(p);
    return ETL_FAILED;
}

void etl_profile_free(etl_profile *p)
{
    if (!p) return;
    for (size_t i = 0; p->process_filters && i < p->o.nprocesses; i++) free(p->process_filters[i]);
    free(p->process_filters);
    free(p->thread_filters);
    for (size_t i = 0; p->so_paths && i < p->so.npaths; i++) free(p->so_paths[i]);
    free(p->so_paths);
    free(p->so_llvm);
    for (size_t i = 0; i < p->nstrings; i++) free(p->strings[i]);
    free(p->strings);
    table_free(&p->string_table);
    free(p->frames);
    table_free(&p->frame_table);
    free(p->loc_frames);
    free(p->locations);
    table_free(&p->location_table);
    free(p->mappings);
    table_free(&p->mapping_table);
    free(p->stacks);
    free(p->stack_locs);
    table_free(&p->stack_table);
    free(p->processes);
    free(p->expanded);
    free(p);
}

const char *etl_profile_error(const etl_profile *p)
{
    return p->error;
}

void etl_profile_stats_get(const etl_profile *p, etl_profile_stats *out)
{
    *out = p->stats;
    out->stacks = p->nstacks;
    if (!out->period_ns) out->period_ns = DEFAULT_INTERVAL_NS;
}

size_t etl_profile_stack_count(const etl_profile *p)
{
    return p->nstacks;
}

const etl_profile_frame *etl_profile_frame_get(const etl_profile *p, uint32_t index)
{
    return index < p->nframes ? &p->frames[index] : NULL;
}

int etl_profile_stack_get(const etl_profile *p, size_t index, etl_profile_stack *out)
{
    etl_profile *w = (etl_profile *)p; /* the expansion buffer is scratch, not the profile */
    const struct profile_stack *st;
    size_t n = 0;

    if (index >= p->nstacks) return ETL_FAILED;
    st = &p->stacks[index];
    for (uint32_t i = 0; i < st->count; i++) n += p->locations[p->stack_locs[st->first + i]].count;
    if (etl_grow((void **)&w->expanded, &w->cexpanded, n ? n : 1, sizeof *w->expanded)) return ETL_FAILED;
    n = 0;
    /* locations leaf first, each one's frames innermost first: both reversed, root first */
    for (uint32_t i = st->count; i-- > 0;) {
        const struct profile_location *l = &p->locations[p->stack_locs[st->first + i]];
        for (uint32_t k = l->count; k-- > 0;) w->expanded[n++] = p->loc_frames[l->first + k];
    }
    out->process = p->processes[st->process];
    out->pid = st->pid;
    out->tid = st->tid;
    out->frame_count = (unsigned)n;
    out->frames = w->expanded;
    out->samples = st->samples;
    out->weight_ns = st->weight_ns;
    return ETL_OK;
}

/* ---------------------------------------------------------------- folded */

struct line { char *text; uint64_t count; };

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Appends name to buf (at *n, of *cap), ';' made ':' and control characters spaces. */
static int put_name(char **buf, size_t *n, size_t *cap, const char *name, int sep)
{
    size_t len = strlen(name);
    if (etl_grow((void **)buf, cap, *n + len + 2, 1)) return -1;
    if (sep) (*buf)[(*n)++] = ';';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        (*buf)[(*n)++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    (*buf)[*n] = 0;
    return 0;
}

int etl_profile_write_folded(FILE *f, const etl_profile *p)
{
    struct line *lines = p->nstacks ? calloc(p->nstacks, sizeof *lines) : NULL;
    size_t nlines = 0;
    int rc = ETL_OK;

    if (p->nstacks && !lines) return ETL_FAILED;
    for (size_t i = 0; i < p->nstacks; i++) {
        etl_profile_stack st;
        char *buf = NULL;
        size_t n = 0, cap = 0;
        if (etl_profile_stack_get(p, i, &st) != ETL_OK || put_name(&buf, &n, &cap, st.process, 0) != 0) {
            free(buf);
            rc = ETL_FAILED;
            goto out;
        }
        for (unsigned k = 0; k < st.frame_count; k++) {
            if (put_name(&buf, &n, &cap, p->frames[st.frames[k]].name, 1) != 0) {
                free(buf);
                rc = ETL_FAILED;
                goto out;
            }
        }
        lines[nlines].text = buf;
        lines[nlines++].count = st.samples;
    }
    if (nlines) qsort(lines, nlines, sizeof *lines, cmp_line);
    for (size_t i = 0; i < nlines;) {
        uint64_t c = lines[i].count;
        size_t j = i + 1;
        while (j < nlines && strcmp(lines[j].text, lines[i].text) == 0) c += lines[j++].count;
        fprintf(f, "%s %" PRIu64 "\n", lines[i].text, c);
        i = j;
    }
    rc = output_status(f);
out:
    for (size_t i = 0; i < nlines; i++) free(lines[i].text);
    free(lines);
    return rc;
}

/* ---------------------------------------------------------------- flames (speedscope, SVG) */

/* The profile's stacks in a flame: per thread, or per process name (by_process). */
static etl_flame *flame_of(const etl_profile *p, int by_process)
{
    etl_flame *fl = etl_flame_new();
    etl_flame_frame *frames = NULL;
    size_t cap = 0;

    if (!fl) return NULL;
    for (size_t i = 0; i < p->nstacks; i++) {
        etl_profile_stack st;
        char name[600];
        if (etl_profile_stack_get(p, i, &st) != ETL_OK ||
            etl_grow((void **)&frames, &cap, st.frame_count ? st.frame_count : 1, sizeof *frames))
            goto fail;
        for (unsigned k = 0; k < st.frame_count; k++) {
            const etl_profile_frame *f = &p->frames[st.frames[k]];
            frames[k] = (etl_flame_frame){ f->name, f->source_file, f->line };
        }
        if (by_process) snprintf(name, sizeof name, "%s", st.process);
        else if (st.pid == UINT32_MAX) snprintf(name, sizeof name, "%s tid %" PRIu32, st.process, st.tid);
        else snprintf(name, sizeof name, "%s (pid %" PRIu32 ") tid %" PRIu32, st.process, st.pid, st.tid);
        if (etl_flame_add(fl, name, frames, st.frame_count, st.samples) != ETL_OK) goto fail;
    }
    free(frames);
    return fl;
fail:
    free(frames);
    etl_flame_free(fl);
    return NULL;
}

int etl_profile_write_speedscope(FILE *f, const etl_profile *p)
{
    etl_flame *fl = flame_of(p, 0);
    int rc;

    if (!fl) return ETL_FAILED;
    rc = etl_flame_write_speedscope(fl, f, "etlprof");
    etl_flame_free(fl);
    return rc;
}

int etl_profile_write_svg(FILE *f, const etl_profile *p, const char *title)
{
    etl_flame *fl = flame_of(p, 1);
    int rc;

    if (!fl) return ETL_FAILED;
    rc = etl_flame_write_svg(fl, f, title ? title : "etlprof", 0);
    etl_flame_free(fl);
    return rc;
}
