/* SPDX-License-Identifier: MIT */
/* The SQLite loader's functions: each input's symbolizer, the functions table's rows, and the function columns of samples and stack frames. */
#include <stdlib.h>
#include <string.h>

#include "load/load.h"

int etl_load_symbols_open(struct etl_sqlite_loader *l, struct input *in)
{
    etl_symbolizer_options so;

    if (l->o.no_symbols) return ETL_OK;
    memset(&so, 0, sizeof so);
    so.paths = l->o.symbol_paths;
    so.npaths = l->o.nsymbol_paths;
    if (etl_symbolizer_open(&in->sym, &so) != ETL_OK) {
        in->sym = NULL;
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return ETL_FATAL;
    }
    return ETL_OK;
}

/* FNV-1a over a string, NULL apart from "". */
static uint64_t hash_text(uint64_t h, const char *t)
{
    if (!t) return (h ^ 0xFF) * 0x100000001B3ull;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++) h = (h ^ *p) * 0x100000001B3ull;
    return (h ^ 0x1F) * 0x100000001B3ull;
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static uint64_t function_hash(const char *name, const char *image_path, const char *source_file)
{
    return hash_text(hash_text(hash_text(0xCBF29CE484222325ull, name), image_path), source_file);
}

static int functions_grow(struct functions *f)
{
    unsigned cap = f->cap ? 2 * f->cap : 1024;
    struct function_slot *t = calloc(cap, sizeof *t);

    if (!t) return -1;
    for (unsigned k = 0; k < f->cap; k++) {
        unsigned j;
        if (!f->slot[k].id) continue;
        for (j = (unsigned)f->slot[k].hash & (cap - 1); t[j].id; j = (j + 1) & (cap - 1)) {}
        t[j] = f->slot[k];
    }
    free(f->slot);
    f->slot = t;
    f->cap = cap;
    return 0;
}

/* The slot of (name, image path, source file), or the empty slot where it goes. */
static struct function_slot *function_slot(struct functions *f, const char *name, const char *image_path,
                                           const char *source_file, uint64_t h)
{
    unsigned mask = f->cap - 1, i;

    for (i = (unsigned)h & mask; f->slot[i].id; i = (i + 1) & mask)
        if (f->slot[i].hash == h && same_text(f->slot[i].name, name) && same_text(f->slot[i].image_path, image_path) &&
            same_text(f->slot[i].source_file, source_file))
            return &f->slot[i];
    return &f->slot[i];
}

/* The functions.function of sym's function, its row inserted on first sight: > 0, or -1. The
   symbolizer's strings are interned, so the recent ids are found by pointer. */
static int64_t function_id(struct kernel_side *ks, const etl_symbol *sym)
{
    struct functions *f = &ks->functions;
    struct sink *k = &ks->sink;
    struct function_slot *slot;
    struct rowval *fr;
    uint64_t h;
    unsigned r = (unsigned)((((uintptr_t)sym->function >> 4) ^ ((uintptr_t)sym->source_file >> 3) ^
                             ((uintptr_t)sym->image_path >> 5)) % (sizeof f->recent / sizeof f->recent[0]));

    if (f->recent[r].id && f->recent[r].name == sym->function && f->recent[r].image_path == sym->image_path &&
        f->recent[r].source_file == sym->source_file)
        return f->recent[r].id;
    if (f->count + 1 > f->cap / 2 && functions_grow(f) != 0) return etl_sink_error(k, "out of memory");
    h = function_hash(sym->function, sym->image_path, sym->source_file);
    slot = function_slot(f, sym->function, sym->image_path, sym->source_file, h);
    if (!slot->id) {
        slot->name = sym->function;
        slot->image = sym->image;
        slot->image_path = sym->image_path;
        slot->source_file = sym->source_file;
        slot->hash = h;
        slot->id = ++f->next_id;
        f->count++;
        fr = row_begin(k, S_FUNCTION);
        rv_i64(fr, 1, slot->id);
        rv_text(fr, 2, sym->function);
        rv_text(fr, 3, sym->image);
        rv_text(fr, 4, sym->image_path);
        rv_text(fr, 5, sym->source_file);
        if (etl_sink_row_end(k, S_FUNCTION) != 0) return -1;
    }
    f->recent[r].name = sym->function;
    f->recent[r].image_path = sym->image_path;
    f->recent[r].source_file = sym->source_file;
    f->recent[r].id = slot->id;
    return slot->id;
}

int etl_load_rv_function(struct kernel_side *ks, const struct input *in, struct rowval *r, int i, int64_t pid,
                         uint64_t addr, int64_t ts, int return_address)
{
    struct frame_sets *fs = &ks->frame_sets;
    int64_t inner, outer;
    uint64_t at = return_address && addr ? addr - 1 : addr;
    int n;

    rv_null(r, i); rv_null(r, i + 1); rv_null(r, i + 2); rv_null(r, i + 3);
    if (!in->sym) return 0;
    if (!fs->symbols && !(fs->symbols = malloc(ETL_LOAD_SYMBOL_FRAMES * sizeof *fs->symbols)))
        return etl_sink_error(&ks->sink, "out of memory");
    n = etl_symbolizer_resolve(in->sym, pid < 0 ? 0 : (uint32_t)pid, at, ts, fs->symbols, ETL_LOAD_SYMBOL_FRAMES);
    if (n < 0) return etl_sink_error(&ks->sink, "out of memory");
    if (n == 0 || !fs->symbols[0].function) return 0;
    if ((inner = function_id(ks, &fs->symbols[0])) < 0) return -1;
    outer = inner;
    if (n > 1 && fs->symbols[n - 1].function && (outer = function_id(ks, &fs->symbols[n - 1])) < 0) return -1;
    rv_i64(r, i, inner);
    rv_u64(r, i + 1, fs->symbols[0].function_offset + (at != addr ? 1 : 0));
    rv_i64(r, i + 2, outer);
    if (fs->symbols[0].line) rv_i64(r, i + 3, fs->symbols[0].line);
    return 0;
}

static char *own(struct functions *f, const unsigned char *t)
{
    char *c;

    if (!t) return NULL;
    if (f->nowned == f->cap_owned) {
        unsigned cap = f->cap_owned ? 2 * f->cap_owned : 256;
        char **n = realloc(f->owned_text, cap * sizeof *n);
        if (!n) return NULL;
        f->owned_text = n;
        f->cap_owned = cap;
    }
    if (!(c = strdup((const char *)t))) return NULL;
    f->owned_text[f->nowned++] = c;
    return c;
}

int etl_load_functions_read(struct etl_sqlite_loader *l)
{
    struct functions *f = &l->kernel.functions;
    sqlite3_stmt *s;
    int rc;

    f->next_id = etl_sink_max(&l->sink, "SELECT max(function) FROM functions");
    if (sqlite3_prepare_v2(l->sink.db, "SELECT function, name, image, image_path, source_file FROM main.functions", -1, &s,
                           NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "functions");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct function_slot *slot;
        const unsigned char *name = sqlite3_column_text(s, 1);
        char *n, *im, *ip, *sf;
        uint64_t h;
        if (!name) continue;
        if (f->count + 1 > f->cap / 2 && functions_grow(f) != 0) break;
        n = own(f, name);
        im = own(f, sqlite3_column_text(s, 2));
        ip = own(f, sqlite3_column_text(s, 3));
        sf = own(f, sqlite3_column_text(s, 4));
        if (!n || (!im && sqlite3_column_type(s, 2) != SQLITE_NULL) || (!ip && sqlite3_column_type(s, 3) != SQLITE_NULL) ||
            (!sf && sqlite3_column_type(s, 4) != SQLITE_NULL))
            break;
        h = function_hash(n, ip, sf);
        slot = function_slot(f, n, ip, sf, h);
        if (slot->id) continue;
        slot->name = n;
        slot->image = im;
        slot->image_path = ip;
        slot->source_file = sf;
        slot->hash = h;
        slot->id = sqlite3_column_int64(s, 0);
        f->count++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        l->sink.failed = 1;
        return -1;
    }
    return 0;
}

void etl_load_symbols_report(struct etl_sqlite_loader *l)
{
    for (unsigned i = 0; i < l->ninputs; i++) {
        struct input *in = &l->in[i];
        etl_symbolizer_stats st;
        const char *e;
        if (!in->sym) continue;
        etl_symbolizer_stats_get(in->sym, &st);
        if (l->o.verbose)
            etl_load_message(l, ETL_OK, 0, in->path, -1,
                             "%s: symbols: %llu lookups (%llu from the cache), %llu named a function; %llu images, "
                             "%llu with symbols, %llu whose file did not match",
                             in->path, (unsigned long long)st.lookups, (unsigned long long)st.cache_hits,
                             (unsigned long long)st.resolved, (unsigned long long)st.images,
                             (unsigned long long)st.images_with_symbols, (unsigned long long)st.images_mismatched);
        if ((e = etl_symbolizer_error(in->sym)) != NULL)
            etl_load_message(l, ETL_WARN, 0, in->path, -1, "%s: warning: symbols: %s", in->path, e);
    }
}

void etl_load_functions_free(struct functions *f)
{
    for (unsigned i = 0; i < f->nowned; i++) free(f->owned_text[i]);
    free(f->owned_text);
    free(f->slot);
}
