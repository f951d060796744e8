/* SPDX-License-Identifier: MIT */
/* The symbolizer: the images a trace describes, the backend that reads each image's symbols, the bounded cache of lookups and the interned names. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "symbols/symbols.h"


#define DEFAULT_CACHE_BYTES ((size_t)16 << 20)

/* ---------------------------------------------------------------- interned strings */

struct istr {
    struct istr *next;
    uint32_t hash;
    uint32_t len;
    char text[];
};

struct etl_sym_strings {
    struct istr **b;
    size_t nb, n;
};

static uint32_t hash_bytes(const void *p, size_t n, uint32_t h)
{
    const uint8_t *c = p;

    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 16777619u; /* FNV-1a */
    return h;
}

static void strings_free(struct etl_sym_strings *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nb; i++) {
        struct istr *e = t->b[i], *nx;
        for (; e; e = nx) {
            nx = e->next;
            free(e);
        }
    }
    free(t->b);
    free(t);
}

static int strings_grow(struct etl_sym_strings *t)
{
    size_t nb = t->nb ? 2 * t->nb : 1024;
    struct istr **b = calloc(nb, sizeof *b);

    if (!b) return ETL_FAILED;
    for (size_t i = 0; i < t->nb; i++) {
        struct istr *e = t->b[i], *nx;
        for (; e; e = nx) {
            nx = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return ETL_OK;
}

const char *etl_sym_intern(etl_symbolizer *s, const char *str, size_t len)
{
    struct etl_sym_strings *t = s->strings;
    uint32_t h;
    struct istr *e;

    if (len > UINT32_MAX - 1) return NULL;
    h = hash_bytes(str, len, 2166136261u);
    if (t->nb)
        for (e = t->b[h & (t->nb - 1)]; e; e = e->next)
            if (e->hash == h && e->len == len && memcmp(e->text, str, len) == 0) return e->text;
    if (t->n >= t->nb && strings_grow(t) != ETL_OK) return NULL;
    e = malloc(sizeof *e + len + 1);
    if (!e) return NULL;
    e->hash = h;
    e->len = (uint32_t)len;
    memcpy(e->text, str, len);
    e->text[len] = 0;
    e->next = t->b[h & (t->nb - 1)];
    t->b[h & (t->nb - 1)] = e;
    t->n++;
    return e->text;
}

const char *etl_sym_intern_str(etl_symbolizer *s, const char *str)
{
    return etl_sym_intern(s, str, strlen(str));
}

void etl_sym_set_error(etl_symbolizer *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    s->has_error = 1;
}

void etl_sym_build_id_hex(const uint8_t *id, size_t size, char *out)
{
    static const char hex[] = "0123456789abcdef";

    for (size_t i = 0; i < size; i++) {
        out[2 * i] = hex[id[i] >> 4];
        out[2 * i + 1] = hex[id[i] & 15];
    }
    out[2 * size] = 0;
}

/* ---------------------------------------------------------------- the lookups' cache */

/*
 * A hash of (file, file offset) -> frames, with its entries on a list from the most to the
 * least recently used; an entry that would take the cache past its bound first pushes out the
 * least recently used ones. The bound covers the entries and the hash's bucket array (whose
 * size is fixed from the bound), so that the cache's memory does not grow with the trace.
 */
struct centry {
    struct centry *hnext, *prev, *next;
    uint32_t file_id;
    uint32_t nframes;
    uint64_t off;
    size_t bytes;
    etl_sym_frame frames[];
};

struct etl_sym_cache {
    struct centry **b;
    size_t nb;
    struct centry *head, *tail;  /* most, least recently used */
    size_t bytes, bound;
};

static size_t cache_hash(uint32_t file_id, uint64_t off, size_t nb)
{
    uint64_t h = (off ^ ((uint64_t)file_id << 40)) * 0x9E3779B97F4A7C15ull;

    return (size_t)(h >> 32) & (nb - 1);
}

static struct etl_sym_cache *cache_new(size_t bound)
{
    struct etl_sym_cache *c = calloc(1, sizeof *c);
    size_t nb = 16;

    if (!c) return NULL;
    /* About one bucket per 256 bytes of the bound: an entry takes 100 bytes or more. */
    while (nb < bound / 256 && nb < ((size_t)1 << 24)) nb *= 2;
    while (nb > 16 && nb * sizeof *c->b > bound / 4) nb /= 2;
    c->b = calloc(nb, sizeof *c->b);
    if (!c->b) {
        free(c);
        return NULL;
    }
    c->nb = nb;
    c->bound = bound;
    c->bytes = nb * sizeof *c->b;
    return c;
}

static void cache_free(struct etl_sym_cache *c)
{
    struct centry *e, *nx;

    if (!c) return;
    for (e = c->head; e; e = nx) {
        nx = e->next;
        free(e);
    }
    free(c->b);
    free(c);
}

static void lru_unlink(struct etl_sym_cache *c, struct centry *e)
{
    if (e->prev) e->prev->next = e->next;
    else c->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(struct etl_sym_cache *c, struct centry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static struct centry *cache_find(struct etl_sym_cache *c, uint32_t file_id, uint64_t off)
{
    struct centry *e = c->b[cache_hash(file_id, off, c->nb)];

    for (; e; e = e->hnext)
        if (e->file_id == file_id && e->off == off) {
            lru_unlink(c, e);
            lru_push(c, e);
            return e;
        }
    return NULL;
}

static void cache_evict(struct etl_sym_cache *c)
{
    struct centry *e = c->tail, **p;

    lru_unlink(c, e);
    for (p = &c->b[cache_hash(e->file_id, e->off, c->nb)]; *p != e; p = &(*p)->hnext) {}
    *p = e->hnext;
    c->bytes -= e->bytes;
    free(e);
}

/* Keeps the frames of (file_id, off); an entry bigger than the whole bound is not kept.
   ETL_OK, or ETL_FAILED without memory. */
static int cache_put(struct etl_sym_cache *c, uint32_t file_id, uint64_t off, const etl_sym_frame *frames,
                     unsigned n)
{
    size_t bytes = sizeof(struct centry) + n * sizeof *frames;
    struct centry *e;
    size_t h;

    if (bytes + c->nb * sizeof *c->b > c->bound) return ETL_OK;
    while (c->tail && c->bytes + bytes > c->bound) cache_evict(c);
    e = malloc(bytes);
    if (!e) return ETL_FAILED;
    e->file_id = file_id;
    e->off = off;
    e->nframes = n;
    e->bytes = bytes;
    if (n) memcpy(e->frames, frames, n * sizeof *frames);
    h = cache_hash(file_id, off, c->nb);
    e->hnext = c->b[h];
    c->b[h] = e;
    lru_push(c, e);
    c->bytes += bytes;
    return ETL_OK;
}

/* ---------------------------------------------------------------- the BuildId events */

/* One LinuxImageID BuildId event: what identifies the file mapped at ImageBase of a process. */
struct buildid_rec {
    uint32_t pid;
    uint16_t build_id_size;
    uint8_t build_id[ETL_BUILD_ID_MAX];
    uint64_t base, size, file_offset;
    int64_t ts;
    const char *path;     /* interned; "" when the event gave none */
};

struct etl_sym_records {
    struct buildid_rec *r;
    size_t n, cap;
    int dirty;
};

static int cmp_rec(const void *pa, const void *pb)
{
    const struct buildid_rec *a = pa, *b = pb;

    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->base != b->base) return a->base < b->base ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* The event's position for messages: the file offset of its buffer plus its offset there. */
static unsigned long long event_offset(const etl_event *ev)
{
    return (unsigned long long)ev->buffer_offset + ev->record_offset;
}

/* Reads a BuildId event's payload (bounded by its length): ETL_OK, ETL_WARN when damaged (the
   error says where), ETL_FAILED without memory. */
static int add_buildid(etl_symbolizer *s, const etl_event *ev)
{
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_len, ptr = ev->pointer_size == 4 ? 4 : 8, pos = 0, end;
    struct etl_sym_records *t = s->records;
    struct buildid_rec r;
    uint16_t bsize;

    memset(&r, 0, sizeof r);
    if (n < 2 * ptr + 4 + 8 + 2) {
        etl_sym_set_error(s, "LinuxImageID BuildId event at file offset %llu: %zu bytes, too short", event_offset(ev), n);
        return ETL_WARN;
    }
    r.base = ptr == 4 ? etl_le32(p) : etl_le64(p);
    r.size = ptr == 4 ? etl_le32(p + ptr) : etl_le64(p + ptr);
    pos = 2 * ptr;
    r.pid = etl_le32(p + pos);
    r.file_offset = etl_le64(p + pos + 4);
    bsize = etl_le16(p + pos + 12);
    pos += 14;
    if (bsize > n - pos) {
        etl_sym_set_error(s, "LinuxImageID BuildId event at file offset %llu: BuildIdSize %u runs past the payload's %zu bytes",
                          event_offset(ev), bsize, n);
        return ETL_WARN;
    }
    if (bsize > ETL_BUILD_ID_MAX) {
        etl_sym_set_error(s, "LinuxImageID BuildId event at file offset %llu: BuildIdSize %u is over %d bytes: not kept",
                          event_offset(ev), bsize, ETL_BUILD_ID_MAX);
        bsize = 0;
    } else {
        memcpy(r.build_id, p + pos, bsize);
    }
    r.build_id_size = bsize;
    pos += bsize;
    for (end = pos; end < n && p[end]; end++) {}
    if (end == n && n > pos)
        etl_sym_set_error(s, "LinuxImageID BuildId event at file offset %llu: FileName has no terminating zero",
                          event_offset(ev));
    r.path = etl_sym_intern(s, (const char *)p + pos, end - pos);
    if (!r.path) return ETL_FAILED;
    r.ts = ev->timestamp;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        void *q = realloc(t->r, cap * sizeof *t->r);
        if (!q) return ETL_FAILED;
        t->r = q;
        t->cap = cap;
    }
    t->r[t->n++] = r;
    t->dirty = 1;
    return ETL_OK;
}

/* The BuildId event of the image (pid, base) loaded over [load, unload) nearest to ts: the
   last at or before ts within the image's life, else the first after ts within it; NULL. */
static const struct buildid_rec *find_record(etl_symbolizer *s, uint32_t pid, uint64_t base, int64_t load,
                                             int64_t unload, int64_t ts)
{
    struct etl_sym_records *t = s->records;
    size_t lo = 0, hi;

    if (t->dirty) {
        qsort(t->r, t->n, sizeof *t->r, cmp_rec);
        t->dirty = 0;
    }
    hi = t->n;
    while (lo < hi) { /* the first record after (pid, base, ts) */
        size_t mid = lo + (hi - lo) / 2;
        const struct buildid_rec *m = &t->r[mid];
        if (m->pid < pid || (m->pid == pid && (m->base < base || (m->base == base && m->ts <= ts)))) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0) {
        const struct buildid_rec *m = &t->r[lo - 1];
        if (m->pid == pid && m->base == base && m->ts >= load) return m;
    }
    if (lo < t->n) {
        const struct buildid_rec *m = &t->r[lo];
        if (m->pid == pid && m->base == base && m->ts < unload) return m;
    }
    return NULL;
}

/* ---------------------------------------------------------------- image files */

static size_t file_hash(int kind, const char *path, const uint8_t *id, size_t idlen, size_t nb)
{
    uint32_t h = hash_bytes(path, strlen(path), 2166136261u ^ (uint32_t)kind);

    return hash_bytes(id, idlen, h) & (nb - 1);
}

static void backend_close(etl_sym_file *f)
{
    if (!f->backend) return;
    switch (f->kind) {
    case ETL_SYM_ELF: etl_sym_elf_close(f->backend); break;
    default: break;
    }
    f->backend = NULL;
}

/* The file of (kind, path, build-id), made when first asked for; NULL without memory. */
static etl_sym_file *get_file(etl_symbolizer *s, int kind, const char *path, const uint8_t *id, uint16_t idlen,
                              int has_record)
{
    etl_sym_file *f;
    size_t h;

    if (s->nfiles >= s->nfile_buckets) {
        size_t nb = s->nfile_buckets ? 2 * s->nfile_buckets : 64;
        etl_sym_file **b = calloc(nb, sizeof *b);
        if (!b) return NULL;
        for (size_t i = 0; i < s->nfile_buckets; i++) {
            etl_sym_file *e = s->files[i], *nx;
            for (; e; e = nx) {
                nx = e->next;
                size_t k = file_hash(e->kind, e->path, e->build_id, e->build_id_size, nb);
                e->next = b[k];
                b[k] = e;
            }
        }
        free(s->files);
        s->files = b;
        s->nfile_buckets = nb;
    }
    h = file_hash(kind, path, id, idlen, s->nfile_buckets);
    for (f = s->files[h]; f; f = f->next)
        if (f->kind == kind && f->has_record == has_record && f->build_id_size == idlen && strcmp(f->path, path) == 0
            && (!idlen || memcmp(f->build_id, id, idlen) == 0))
            return f;
    f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->kind = kind;
    f->path = etl_sym_intern_str(s, path);
    if (!f->path) {
        free(f);
        return NULL;
    }
    {
        const char *b = f->path;
        for (const char *q = f->path; *q; q++)
            if (*q == '/' || *q == '\\') b = q + 1;
        f->base_name = b;
    }
    if (idlen) memcpy(f->build_id, id, idlen);
    f->build_id_size = idlen;
    f->has_record = (uint8_t)has_record;
    f->id = (uint32_t)++s->nfiles;
    f->next = s->files[h];
    s->files[h] = f;
    s->stats.images++;
    return f;
}

/*
 * Which backend reads an image: an image the Linux capture described (a BuildId event) or with
 * a Linux path is ELF. A new kind of image (PE with its PDB, .NET methods) is one more case here
 * and in backend_open/backend_resolve. 0: none (the address keeps image+offset).
 */
static int image_kind(const etl_image_info *info, const struct buildid_rec *rec)
{
    if (rec) return ETL_SYM_ELF;
    if (info->file_name[0] == '/') return ETL_SYM_ELF;
    return 0;
}

/* Closes the backend of the open file used least recently (it opens again when asked). */
static void close_least_used(etl_symbolizer *s)
{
    etl_sym_file *oldest = NULL;

    for (size_t i = 0; i < s->nfile_buckets; i++)
        for (etl_sym_file *f = s->files[i]; f; f = f->next)
            if (f->backend && (!oldest || f->last_use < oldest->last_use)) oldest = f;
    if (!oldest) return;
    backend_close(oldest);
    oldest->state = ETL_SYM_UNTRIED;
    s->nopen--;
}

/* What the PDB side has to say (llvm-symbolizer missing, a PDB of another build), told once. */
static void pdb_error(etl_symbolizer *s)
{
    const char *e = etl_sym_pdb_error(s->pdb);
    if (e && (!s->has_error || strcmp(s->error, e) != 0)) etl_sym_set_error(s, "%s", e);
}

static int backend_open(etl_symbolizer *s, etl_sym_file *f)
{
    int rc = ETL_OK;

    if (s->nopen >= ETL_SYM_MAX_OPEN) close_least_used(s);
    switch (f->kind) {
    case ETL_SYM_ELF: rc = etl_sym_elf_open(s, f); break;
    case ETL_SYM_PDB: /* no backend of its own: the PDB side keeps one co-process for all */
        rc = etl_sym_pdb_prepare(s->pdb, f->pdb);
        if (rc == ETL_FAILED) return ETL_FAILED;
        f->state = rc == 1 ? ETL_SYM_READY : ETL_SYM_MISSING;
        if (rc == 2 && !f->mismatch_counted) {
            f->mismatch_counted = 1;
            s->stats.images_mismatched++;
        }
        pdb_error(s);
        rc = ETL_OK;
        break;
    default: f->state = ETL_SYM_MISSING; break;
    }
    if (f->backend) s->nopen++;
    if (rc == ETL_OK && f->state == ETL_SYM_READY && !f->counted) {
        f->counted = 1;
        s->stats.images_with_symbols++;
    }
    return rc;
}

static int backend_resolve(etl_symbolizer *s, etl_sym_file *f, uint64_t off, uint64_t map_offset, etl_sym_frame *out,
                           unsigned max)
{
    switch (f->kind) {
    case ETL_SYM_ELF: return etl_sym_elf_resolve(s, f, off, map_offset, out, max);
    case ETL_SYM_PDB: {
        etl_symbol fr[ETL_SYM_MAX_FRAMES];
        unsigned n = 0;
        if (max > ETL_SYM_MAX_FRAMES) max = ETL_SYM_MAX_FRAMES;
        if (etl_sym_pdb_resolve_image(s->pdb, f->pdb, &off, 1, fr, max, &n) != ETL_OK) return ETL_FAILED;
        for (unsigned i = 0; i < n; i++) {
            out[i].function = fr[i].function;
            out[i].function_offset = fr[i].function_offset;
            out[i].source_file = fr[i].source_file;
            out[i].line = fr[i].line;
            out[i].inlined = fr[i].inlined;
        }
        pdb_error(s);
        return (int)n;
    }
    default: return 0;
    }
}

/* ---------------------------------------------------------------- the API */

int etl_symbolizer_open(etl_symbolizer **out, const etl_symbolizer_options *options)
{
    etl_symbolizer *s = calloc(1, sizeof *s);
    size_t bound = options && options->cache_bytes ? options->cache_bytes : DEFAULT_CACHE_BYTES;

    *out = NULL;
    if (!s) return ETL_FAILED;
    if (options) {
        s->flags = options->flags;
        if (options->npaths) {
            s->paths = calloc(options->npaths, sizeof *s->paths);
            if (!s->paths) goto fail;
            for (size_t i = 0; i < options->npaths; i++) {
                if (!options->paths[i]) continue;
                s->paths[s->npaths] = strdup(options->paths[i]);
                if (!s->paths[s->npaths]) goto fail;
                s->npaths++;
            }
        }
        if (options->llvm_symbolizer && !(s->llvm_symbolizer = strdup(options->llvm_symbolizer))) goto fail;
    }
    s->cache_bytes = bound;
    s->images = etl_image_map_new();
    s->records = calloc(1, sizeof *s->records);
    s->strings = calloc(1, sizeof *s->strings);
    s->kallsyms = etl_sym_kallsyms_new();
    s->cache = cache_new(bound);
    if (!s->images || !s->records || !s->strings || !s->kallsyms || !s->cache) goto fail;
    if (etl_sym_pdb_open(&s->pdb, s, options) != ETL_OK || etl_sym_clr_open(&s->clr, s) != ETL_OK) goto fail;
    *out = s;
    return ETL_OK;
fail:
    etl_symbolizer_close(s);
    return ETL_FAILED;
}

void etl_symbolizer_close(etl_symbolizer *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nfile_buckets; i++) {
        etl_sym_file *f = s->files[i], *nx;
        for (; f; f = nx) {
            nx = f->next;
            backend_close(f);
            free(f);
        }
    }
    free(s->files);
    etl_sym_pdb_close(s->pdb);
    etl_sym_clr_close(s->clr);
    cache_free(s->cache);
    etl_sym_kallsyms_free(s->kallsyms);
    if (s->records) free(s->records->r);
    free(s->records);
    strings_free(s->strings);
    etl_image_map_free(s->images);
    for (size_t i = 0; i < s->npaths; i++) free(s->paths[i]);
    free(s->paths);
    free(s->llvm_symbolizer);
    free(s);
}

int etl_symbolizer_add(etl_symbolizer *s, const etl_event *ev)
{
    s->recent_gen++;
    if (etl_image_map_add(s->images, ev) != ETL_OK) return ETL_FAILED;
    if (etl_sym_pdb_add(s->pdb, ev) == ETL_FAILED) return ETL_FAILED;
    int clr = etl_sym_clr_add(s->clr, ev);
    if (clr == ETL_FAILED) return ETL_FAILED;
    if (clr == 0 && etl_sym_clr_error(s->clr) && !s->has_error) etl_sym_set_error(s, "%s", etl_sym_clr_error(s->clr));
    if (ev->kind == ETL_KIND_CLASSIC && etl_guid_equal(&ev->provider, &etl_guid_linux_image_id)) {
        int rc = ETL_OK;
        switch (ev->opcode) {
        case ETL_LINUX_IMAGE_ID_BUILD_ID: rc = add_buildid(s, ev); break;
        case ETL_LINUX_IMAGE_ID_KERNEL_SYMBOLS:
        case ETL_LINUX_IMAGE_ID_KERNEL_MODULE: rc = etl_sym_kallsyms_add(s, s->kallsyms, ev); break;
        default: break;
        }
        if (rc == ETL_FAILED) return ETL_FAILED;
    }
    return ETL_OK;
}

static void frame_out(etl_symbol *o, const etl_sym_frame *f)
{
    o->function = f->function;
    o->function_offset = f->function_offset;
    o->source_file = f->source_file;
    o->line = f->line;
    o->inlined = f->inlined;
}

static int resolve_kernel(etl_symbolizer *s, uint32_t pid, uint64_t addr, int64_t ts, etl_symbol *out)
{
    etl_sym_frame fr;
    const char *module = NULL;
    uint64_t module_base = 0;
    etl_image_info info;
    int rc = etl_sym_kallsyms_resolve(s, s->kallsyms, addr, &fr, &module, &module_base);

    if (rc == ETL_FAILED) return ETL_FAILED;
    memset(out, 0, sizeof *out);
    if (module) {
        out->image = module;
        out->image_path = module;
        out->image_offset = addr - module_base;
    } else if (etl_image_map_find(s->images, pid, addr, ts, &info)) {
        out->image = info.base_name;
        out->image_path = info.file_name;
        out->image_offset = addr - info.base;
    }
    if (rc == 1) {
        frame_out(out, &fr);
        s->stats.resolved++;
    }
    return 1;
}

int etl_symbolizer_resolve(etl_symbolizer *s, uint32_t pid, uint64_t addr, int64_t ts, etl_symbol *out,
                           unsigned max)
{
    etl_image_info info;
    const struct buildid_rec *rec;
    struct etl_sym_recent *last;
    etl_sym_file *f;
    struct centry *e;
    uint64_t off;
    int kind;
    unsigned n;

    if (!max) return 0;
    s->stats.lookups++;
    if (addr >= ETL_SYM_KERNEL_MIN && etl_sym_kallsyms_present(s->kallsyms)) return resolve_kernel(s, pid, addr, ts, out);
    memset(out, 0, sizeof *out);
    int in_image = etl_image_map_find(s->images, pid, addr, ts, &info);
    {
        /* .NET: a method the runtime's events place there (JIT-compiled code has no image;
           ReadyToRun code is in its image, which is kept) */
        etl_symbol m;
        int rc = etl_sym_clr_resolve(s->clr, pid, addr, ts, &m);
        if (rc == ETL_FAILED) return ETL_FAILED;
        if (rc == 1) {
            if (in_image) {
                out->image = info.base_name;
                out->image_path = info.file_name;
                out->image_offset = addr - info.base;
            } else {
                out->image = m.image;
                out->image_path = m.image_path;
                out->image_offset = m.image_offset;
            }
            out->function = m.function;
            out->function_offset = m.function_offset;
            s->stats.resolved++;
            return 1;
        }
    }
    if (!in_image) return 1;
    out->image = info.base_name;
    out->image_path = info.file_name;
    out->image_offset = addr - info.base;
    last = &s->recent[((info.base >> 12) ^ (info.base >> 24) ^ info.pid) % (sizeof s->recent / sizeof s->recent[0])];
    if (last->valid && last->gen == s->recent_gen && last->pid == info.pid && last->base == info.base
        && last->load == info.load_timestamp && last->unload == info.unload_timestamp) {
        f = last->file; /* an image of a recent lookup: no need to find its file again */
    } else {
        rec = find_record(s, info.pid, info.base, info.load_timestamp, info.unload_timestamp, ts);
        /* a PE whose PDB the trace gives (DbgID_RSDS) */
        size_t pdb = rec ? 0 : etl_sym_pdb_find(s->pdb, info.pid, info.base, info.base_name);
        kind = pdb ? ETL_SYM_PDB : image_kind(&info, rec);
        f = NULL;
        if (pdb) { /* one file per (path, PDB identity): its lookups shared by every process mapping it */
            uint8_t key[20];
            etl_sym_pdb_key(s->pdb, pdb, key);
            f = get_file(s, kind, info.file_name, key, sizeof key, 0);
            if (!f) return ETL_FAILED;
            if (!f->pdb) f->pdb = pdb;
        } else if (kind) {
            if (rec) f = get_file(s, kind, rec->path[0] ? rec->path : info.file_name, rec->build_id, rec->build_id_size, 1);
            else f = get_file(s, kind, info.file_name, NULL, 0, 0);
            if (!f) return ETL_FAILED;
        }
        last->valid = 0;
        last->build_id = NULL;
        if (f && f->build_id_size) { /* etl_symbol.build_id (the profile's pprof mappings) */
            char hex[2 * ETL_BUILD_ID_MAX + 1];
            etl_sym_build_id_hex(f->build_id, f->build_id_size, hex);
            if (!(last->build_id = etl_sym_intern_str(s, hex))) return ETL_FAILED;
        }
        last->valid = 1;
        last->gen = s->recent_gen;
        last->pid = info.pid;
        last->base = info.base;
        last->load = info.load_timestamp;
        last->unload = info.unload_timestamp;
        last->file = f;
        last->has_rec = rec != NULL;
        last->rec_base = rec ? rec->base : 0;
        last->rec_file_offset = rec ? rec->file_offset : 0;
    }
    if (!f) return 1;
    out->build_id = last->build_id;
    off = last->has_rec ? addr - last->rec_base + last->rec_file_offset : addr - info.base;
    e = cache_find(s->cache, f->id, off);
    if (e) {
        s->stats.cache_hits++;
    } else {
        etl_sym_frame frames[ETL_SYM_MAX_FRAMES];
        int got = 0;

        if (f->state == ETL_SYM_UNTRIED && backend_open(s, f) != ETL_OK) return ETL_FAILED;
        f->last_use = ++s->tick;
        if (f->state == ETL_SYM_READY) got = backend_resolve(s, f, off, last->rec_file_offset, frames, ETL_SYM_MAX_FRAMES);
        if (got < 0) return ETL_FAILED;
        if (cache_put(s->cache, f->id, off, frames, (unsigned)got) != ETL_OK) return ETL_FAILED;
        e = cache_find(s->cache, f->id, off);
        if (!e) { /* too big for the cache: give it straight */
            for (n = 0; n < (unsigned)got && n < max; n++) {
                out[n] = out[0];
                frame_out(&out[n], &frames[n]);
            }
            if (got) s->stats.resolved++;
            return got ? (int)n : 1;
        }
    }
    if (!e->nframes) return 1;
    for (n = 0; n < e->nframes && n < max; n++) {
        out[n] = out[0];
        frame_out(&out[n], &e->frames[n]);
    }
    s->stats.resolved++;
    return (int)n;
}

void etl_symbolizer_stats_get(const etl_symbolizer *s, etl_symbolizer_stats *out)
{
    *out = s->stats;
    out->cache_bytes = s->cache->bytes;
}

const char *etl_symbolizer_error(const etl_symbolizer *s)
{
    return s->has_error ? s->error : NULL;
}
