/* SPDX-License-Identifier: MIT */
/* Kernel addresses through the kallsyms a Linux capture recorded (LinuxImageID KernelSymbols chunks) and its KernelModule events. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "symbols/symbols.h"

/* One chunk of /proc/kallsyms as recorded: its Sequence and its text (owned, zero-terminated). */
struct kchunk {
    uint32_t seq;
    char *text;
    size_t len;
    unsigned long long at;    /* the event's file offset, for messages */
    int parsed;               /* its lines are cut into the table (the text stays: the names) */
};

/* One function symbol: its name and module point into a chunk's text. */
struct ksym {
    uint64_t addr;
    const char *name;
    const char *module;       /* "" for the kernel itself */
    size_t order;             /* position in kallsyms: duplicates keep the first */
    uint64_t module_base;     /* the lowest address of its module's symbols */
};

struct kmod {
    uint64_t base, size;
    const char *name;         /* interned */
};

/* A resolved address, kept: a profile's kernel frames are few addresses many times over. */
#define KCACHE 4096u
struct kcached {
    uint64_t addr;
    int rc;                   /* what the lookup returned; 0 with addr 0: an empty slot */
    const char *function;     /* interned */
    uint64_t function_offset;
    const char *module;       /* interned, or NULL */
    uint64_t module_base;
};

struct etl_sym_kallsyms {
    struct kcached *cache;    /* KCACHE slots by address (NULL: no memory for it) */
    struct kchunk *chunks;
    size_t nchunks, cchunks;
    struct ksym *syms;
    size_t nsyms, csyms, order;
    struct kmod *mods;
    size_t nmods, cmods;
    int built;                /* syms is up to date with chunks */
};

etl_sym_kallsyms *etl_sym_kallsyms_new(void)
{
    return calloc(1, sizeof(etl_sym_kallsyms));
}

void etl_sym_kallsyms_free(etl_sym_kallsyms *k)
{
    if (!k) return;
    for (size_t i = 0; i < k->nchunks; i++) free(k->chunks[i].text);
    free(k->chunks);
    free(k->syms);
    free(k->mods);
    free(k->cache);
    free(k);
}

int etl_sym_kallsyms_present(const etl_sym_kallsyms *k)
{
    return k->nchunks > 0 || k->nmods > 0;
}

static unsigned long long event_offset(const etl_event *ev)
{
    return (unsigned long long)ev->buffer_offset + ev->record_offset;
}

/* The length of the zero-terminated string at p within n bytes; n when it has no zero. */
static size_t bounded_len(const uint8_t *p, size_t n)
{
    const uint8_t *z = memchr(p, 0, n);

    return z ? (size_t)(z - p) : n;
}

static int add_module(etl_symbolizer *s, etl_sym_kallsyms *k, const etl_event *ev)
{
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_len, ptr = ev->pointer_size == 4 ? 4 : 8, pos;
    struct kmod m;
    uint16_t bsize;

    if (n < 2 * ptr + 2) {
        etl_sym_set_error(s, "LinuxImageID KernelModule event at file offset %llu: %zu bytes, too short", event_offset(ev), n);
        return ETL_WARN;
    }
    m.base = ptr == 4 ? etl_le32(p) : etl_le64(p);
    m.size = ptr == 4 ? etl_le32(p + ptr) : etl_le64(p + ptr);
    bsize = etl_le16(p + 2 * ptr);
    pos = 2 * ptr + 2;
    if (bsize > n - pos) {
        etl_sym_set_error(s, "LinuxImageID KernelModule event at file offset %llu: BuildIdSize %u runs past the payload's %zu bytes",
                          event_offset(ev), bsize, n);
        return ETL_WARN;
    }
    pos += bsize;
    m.name = etl_sym_intern(s, (const char *)p + pos, bounded_len(p + pos, n - pos));
    if (!m.name) return ETL_FAILED;
    if (k->nmods == k->cmods) {
        size_t c = k->cmods ? 2 * k->cmods : 32;
        void *q = realloc(k->mods, c * sizeof *k->mods);
        if (!q) return ETL_FAILED;
        k->mods = q;
        k->cmods = c;
    }
    k->mods[k->nmods++] = m;
    if (k->cache) memset(k->cache, 0, KCACHE * sizeof *k->cache);
    return ETL_OK;
}

static int add_chunk(etl_symbolizer *s, etl_sym_kallsyms *k, const etl_event *ev)
{
    const uint8_t *p = ev->payload;
    size_t n = ev->payload_len, len;
    struct kchunk c;

    if (n < 4) {
        etl_sym_set_error(s, "LinuxImageID KernelSymbols event at file offset %llu: %zu bytes, too short", event_offset(ev), n);
        return ETL_WARN;
    }
    c.seq = etl_le32(p);
    len = bounded_len(p + 4, n - 4);
    if (len == n - 4)
        etl_sym_set_error(s, "LinuxImageID KernelSymbols event at file offset %llu (Sequence %u): Text has no terminating zero",
                          event_offset(ev), c.seq);
    c.text = malloc(len + 1);
    if (!c.text) return ETL_FAILED;
    memcpy(c.text, p + 4, len);
    c.text[len] = 0;
    c.len = len;
    c.at = event_offset(ev);
    c.parsed = 0;
    if (k->nchunks == k->cchunks) {
        size_t cap = k->cchunks ? 2 * k->cchunks : 64;
        void *q = realloc(k->chunks, cap * sizeof *k->chunks);
        if (!q) {
            free(c.text);
            return ETL_FAILED;
        }
        k->chunks = q;
        k->cchunks = cap;
    }
    k->chunks[k->nchunks++] = c;
    k->built = 0;
    if (k->cache) memset(k->cache, 0, KCACHE * sizeof *k->cache);
    return ETL_OK;
}

int etl_sym_kallsyms_add(etl_symbolizer *s, etl_sym_kallsyms *k, const etl_event *ev)
{
    if (ev->opcode == ETL_LINUX_IMAGE_ID_KERNEL_SYMBOLS) return add_chunk(s, k, ev);
    if (ev->opcode == ETL_LINUX_IMAGE_ID_KERNEL_MODULE) return add_module(s, k, ev);
    return ETL_OK;
}

/* ---- building the table ---- */

static int cmp_chunk(const void *pa, const void *pb)
{
    const struct kchunk *a = pa, *b = pb;

    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

static int cmp_sym(const void *pa, const void *pb)
{
    const struct ksym *a = pa, *b = pb;

    if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/*
 * Parses one line in place, "ADDRESS TYPE NAME[\t[MODULE]]": 1 a function (text or weak
 * symbol: t T w W), 0 another symbol, -1 not a kallsyms line. The name and the module are
 * cut out with zeros in the line's own text.
 */
static int parse_line(char *line, struct ksym *out)
{
    char *p = line, *name, *mod = NULL;
    uint64_t addr = 0;
    int digits = 0, v;
    char type;

    while ((v = hex_value(*p)) >= 0) {
        if (++digits > 16) return -1;
        addr = addr << 4 | (uint64_t)v;
        p++;
    }
    if (!digits || !is_space(*p)) return -1;
    while (is_space(*p)) p++;
    type = *p;
    if (!type || !is_space(p[1])) return -1;
    p += 2;
    while (is_space(*p)) p++;
    if (!*p) return -1;
    name = p;
    while (*p && !is_space(*p)) p++;
    if (*p) {
        *p++ = 0;
        while (is_space(*p)) p++;
        if (*p == '[') {
            char *end = strchr(p, ']');
            if (end) {
                *end = 0;
                mod = p + 1;
            }
        }
    }
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') return 0;
    out->addr = addr;
    out->name = name;
    out->module = mod ? mod : "";
    return 1;
}

static int build(etl_symbolizer *s, etl_sym_kallsyms *k)
{
    size_t bad = 0;
    unsigned long long first_bad = 0;
    unsigned first_bad_seq = 0;

    qsort(k->chunks, k->nchunks, sizeof *k->chunks, cmp_chunk);
    for (size_t i = 0; i < k->nchunks; i++) {
        struct kchunk *c = &k->chunks[i];
        char *line = c->text, *end = c->text + c->len;

        if (c->parsed) continue;
        c->parsed = 1;
        if (i > 0 && c->seq == k->chunks[i - 1].seq) {
            etl_sym_set_error(s, "kallsyms: chunk %u at file offset %llu repeats an earlier Sequence: not used", c->seq, c->at);
            continue;
        }
        if (c->seq != (i == 0 ? 0 : k->chunks[i - 1].seq + 1))
            etl_sym_set_error(s, "kallsyms: chunk %u missing (the next one recorded is %u): the symbols it held are unknown",
                              i == 0 ? 0 : k->chunks[i - 1].seq + 1, c->seq);
        while (line < end) {
            char *nl = memchr(line, '\n', (size_t)(end - line));
            struct ksym sym;
            int r;

            if (nl) *nl = 0;
            if (*line) {
                r = parse_line(line, &sym);
                if (r < 0) {
                    if (!bad++) {
                        first_bad = c->at;
                        first_bad_seq = c->seq;
                    }
                } else if (r == 1 && sym.addr) {
                    if (k->nsyms == k->csyms) {
                        size_t nc = k->csyms ? 2 * k->csyms : 4096;
                        void *q = realloc(k->syms, nc * sizeof *k->syms);
                        if (!q) return ETL_FAILED;
                        k->syms = q;
                        k->csyms = nc;
                    }
                    sym.order = k->order++;
                    k->syms[k->nsyms++] = sym;
                }
            }
            if (!nl) break;
            line = nl + 1;
        }
    }
    if (bad)
        etl_sym_set_error(s, "kallsyms: %zu lines are not \"ADDRESS TYPE NAME\" (the first in chunk %u, at file offset %llu): skipped",
                          bad, first_bad_seq, first_bad);
    {
        /* /proc/kallsyms lists its functions in address order: sorted already, but for the
           odd kernel or a hand-made text. */
        size_t i = 1;
        while (i < k->nsyms && k->syms[i - 1].addr <= k->syms[i].addr) i++;
        if (i < k->nsyms) qsort(k->syms, k->nsyms, sizeof *k->syms, cmp_sym);
    }
    for (size_t i = 0, j; i < k->nsyms; i = j) { /* each module's run of symbols: its base */
        for (j = i + 1; j < k->nsyms && strcmp(k->syms[j].module, k->syms[i].module) == 0; j++) {}
        for (size_t x = i; x < j; x++) k->syms[x].module_base = k->syms[i].addr;
    }
    k->built = 1;
    return ETL_OK;
}

/* The recorded module (KernelModule) holding addr, or NULL. */
static const struct kmod *module_at(const etl_sym_kallsyms *k, uint64_t addr)
{
    for (size_t i = 0; i < k->nmods; i++)
        if (addr >= k->mods[i].base && addr - k->mods[i].base < k->mods[i].size) return &k->mods[i];
    return NULL;
}

static int resolve(etl_symbolizer *s, etl_sym_kallsyms *k, uint64_t addr, etl_sym_frame *frame, const char **module,
                   uint64_t *module_base)
{
    const struct kmod *m;
    size_t lo = 0, hi, i;
    const struct ksym *sym;
    const char *symmod;

    memset(frame, 0, sizeof *frame);
    *module = NULL;
    *module_base = 0;
    m = module_at(k, addr);
    if (m) {
        *module = m->name;
        *module_base = m->base;
    } else if (k->nmods) {
        return 0; /* the modules (and the kernel) were recorded, and none holds addr */
    }
    hi = k->nsyms;
    while (lo < hi) { /* the first symbol above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || lo == k->nsyms) return m ? 2 : 0; /* below the first, or past the last's end */
    i = lo - 1;
    while (i > 0 && k->syms[i - 1].addr == k->syms[i].addr) i--; /* duplicates: the first recorded */
    sym = &k->syms[i];
    symmod = *sym->module ? sym->module : "vmlinux";
    /* A symbol of another module than the one recorded at addr does not reach it. */
    if (m && strcmp(m->name, symmod) != 0) return 2;
    if (!m) {
        /* No KernelModule events: the module's lowest symbol stands for its base. */
        if (!(*module = etl_sym_intern_str(s, symmod))) return ETL_FAILED;
        *module_base = sym->module_base;
    }
    if (!(frame->function = etl_sym_intern_str(s, sym->name))) return ETL_FAILED;
    frame->function_offset = addr - sym->addr;
    return 1;
}

int etl_sym_kallsyms_resolve(etl_symbolizer *s, etl_sym_kallsyms *k, uint64_t addr, etl_sym_frame *frame,
                             const char **module, uint64_t *module_base)
{
    struct kcached *c;
    int rc;

    if (!k->built && build(s, k) != ETL_OK) return ETL_FAILED;
    if (!k->cache) k->cache = calloc(KCACHE, sizeof *k->cache); /* (NULL: every lookup is made) */
    c = k->cache ? &k->cache[(addr ^ addr >> 12) % KCACHE] : NULL;
    if (c && c->addr == addr && (c->rc || addr)) {
        memset(frame, 0, sizeof *frame);
        frame->function = c->function;
        frame->function_offset = c->function_offset;
        *module = c->module;
        *module_base = c->module_base;
        return c->rc;
    }
    rc = resolve(s, k, addr, frame, module, module_base);
    if (c && rc != ETL_FAILED)
        *c = (struct kcached){ addr, rc, frame->function, frame->function_offset, *module, *module_base };
    return rc;
}
