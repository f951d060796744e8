/* SPDX-License-Identifier: MIT */
/* A flame: profiles of call stacks with their sample counts, as a tree of distinct call paths. */
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t frame_hash(const char *name, const char *file, uint32_t line)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ULL, name, strlen(name) + 1);

    h = hash_bytes(h, file ? file : "", strlen(file ? file : "") + 1);
    h = hash_bytes(h, &line, sizeof line);
    return h ^ (h >> 29);
}

static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
    uint64_t h = ((uint64_t)parent << 32 | frame) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 31);
}

static int same_file(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

etl_flame *etl_flame_new(void)
{
    etl_flame *fl = calloc(1, sizeof *fl);

    if (!fl) return NULL;
    fl->nodes = calloc(64, sizeof *fl->nodes);
    if (!fl->nodes) {
        free(fl);
        return NULL;
    }
    fl->nodes_cap = 64;
    fl->nnodes = 1; /* the root */
    return fl;
}

void etl_flame_free(etl_flame *fl)
{
    if (!fl) return;
    for (size_t i = 0; i < fl->nframes; i++) {
        free(fl->frames[i].name);
        free(fl->frames[i].file);
    }
    free(fl->frames);
    free(fl->frame_table);
    free(fl->nodes);
    free(fl->node_table);
    free(fl);
}

uint64_t etl_flame_total(const etl_flame *fl)
{
    return fl->nodes[0].total;
}

/* Doubles an open-addressing table of indexes + 1, rehashed by rehash(index). */
static int grow_table(uint32_t **table, size_t *cap, size_t used, const etl_flame *fl,
                      uint64_t (*rehash)(const etl_flame *, uint32_t))
{
    size_t n = *cap ? 2 * *cap : 256;
    uint32_t *t;

    if (2 * (used + 1) <= *cap) return 0;
    if (!(t = calloc(n, sizeof *t))) return -1;
    for (size_t i = 0; i < *cap; i++) {
        uint32_t v = (*table)[i];
        if (!v) continue;
        size_t k = (size_t)rehash(fl, v - 1) & (n - 1);
        while (t[k]) k = (k + 1) & (n - 1);
        t[k] = v;
    }
    free(*table);
    *table = t;
    *cap = n;
    return 0;
}

static uint64_t rehash_frame(const etl_flame *fl, uint32_t i)
{
    return frame_hash(fl->frames[i].name, fl->frames[i].file, fl->frames[i].line);
}

static uint64_t rehash_node(const etl_flame *fl, uint32_t i)
{
    return node_hash(fl->nodes[i].parent, fl->nodes[i].frame);
}

/* The index of frame (name, file, line), interned: -1 without memory. */
static int64_t intern_frame(etl_flame *fl, const char *name, const char *file, uint32_t line)
{
    size_t k;
    struct flame_frame *fr;

    if (!name) name = "";
    if (file && !*file) file = NULL;
    if (grow_table(&fl->frame_table, &fl->frame_table_cap, fl->nframes, fl, rehash_frame) < 0) return -1;
    k = (size_t)frame_hash(name, file, line) & (fl->frame_table_cap - 1);
    for (; fl->frame_table[k]; k = (k + 1) & (fl->frame_table_cap - 1)) {
        fr = &fl->frames[fl->frame_table[k] - 1];
        if (fr->line == line && strcmp(fr->name, name) == 0 && same_file(fr->file, file)) return fl->frame_table[k] - 1;
    }
    if (fl->nframes == fl->frames_cap) {
        size_t cap = fl->frames_cap ? 2 * fl->frames_cap : 64;
        struct flame_frame *f = realloc(fl->frames, cap * sizeof *f);
        if (!f) return -1;
        fl->frames = f;
        fl->frames_cap = cap;
    }
    fr = &fl->frames[fl->nframes];
    fr->name = strdup(name);
    fr->file = file ? strdup(file) : NULL;
    fr->line = line;
    if (!fr->name || (file && !fr->file)) {
        free(fr->name);
        free(fr->file);
        return -1;
    }
    fl->frame_table[k] = (uint32_t)++fl->nframes;
    return (int64_t)fl->nframes - 1;
}

/* The child of parent for frame, made when new: -1 without memory. */
static int64_t child_of(etl_flame *fl, uint32_t parent, uint32_t frame)
{
    size_t k;

    if (grow_table(&fl->node_table, &fl->node_table_cap, fl->nnodes, fl, rehash_node) < 0) return -1;
    k = (size_t)node_hash(parent, frame) & (fl->node_table_cap - 1);
    for (; fl->node_table[k]; k = (k + 1) & (fl->node_table_cap - 1)) {
        const struct flame_node *n = &fl->nodes[fl->node_table[k] - 1];
        if (n->parent == parent && n->frame == frame) return fl->node_table[k] - 1;
    }
    if (fl->nnodes == fl->nodes_cap) {
        size_t cap = 2 * fl->nodes_cap;
        struct flame_node *v = realloc(fl->nodes, cap * sizeof *v);
        if (!v) return -1;
        fl->nodes = v;
        fl->nodes_cap = cap;
    }
    if (fl->nnodes >= UINT32_MAX - 1) return -1;
    fl->nodes[fl->nnodes] = (struct flame_node){ frame, parent, fl->nodes[parent].depth + 1, 0, 0 };
    fl->node_table[k] = (uint32_t)++fl->nnodes;
    return (int64_t)fl->nnodes - 1;
}

int etl_flame_add(etl_flame *fl, const char *profile, const etl_flame_frame *frames, unsigned nframes,
                  uint64_t count)
{
    uint32_t path[64], *heap = NULL, *p = path;
    int64_t k;
    uint32_t node;

    if (nframes + 1 > sizeof path / sizeof *path) {
        if (!(heap = malloc(((size_t)nframes + 1) * sizeof *heap))) return ETL_FAILED;
        p = heap;
    }
    /* make the whole path first, then count: a stack that fails leaves no counts behind */
    if ((k = intern_frame(fl, profile ? profile : "", NULL, 0)) < 0 || (k = child_of(fl, 0, (uint32_t)k)) < 0)
        goto failed;
    node = p[0] = (uint32_t)k;
    for (unsigned i = 0; i < nframes; i++) {
        if ((k = intern_frame(fl, frames[i].name, frames[i].file, frames[i].line)) < 0 ||
            (k = child_of(fl, node, (uint32_t)k)) < 0)
            goto failed;
        node = p[i + 1] = (uint32_t)k;
    }
    fl->nodes[0].total += count;
    for (unsigned i = 0; i <= nframes; i++) fl->nodes[p[i]].total += count;
    fl->nodes[node].self += count;
    free(heap);
    return ETL_OK;
failed:
    free(heap);
    return ETL_FAILED;
}

struct child_key {
    uint32_t parent, node;
    const struct flame_frame *frame;
};

static int child_cmp(const void *a, const void *b)
{
    const struct child_key *x = a, *y = b;
    int c;

    if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
    if ((c = strcmp(x->frame->name, y->frame->name))) return c;
    if ((c = strcmp(x->frame->file ? x->frame->file : "", y->frame->file ? y->frame->file : ""))) return c;
    return x->frame->line < y->frame->line ? -1 : x->frame->line > y->frame->line;
}

int flame_children(const etl_flame *fl, uint32_t **first, uint32_t **child)
{
    size_t n = fl->nnodes;
    uint32_t *f = calloc(n + 1, sizeof *f), *c = malloc(n * sizeof *c);
    struct child_key *k = malloc(n * sizeof *k);

    if (!f || !c || !k) {
        free(f);
        free(c);
        free(k);
        return -1;
    }
    /* every node but the root, sorted by parent, then name: each node's children are a run */
    for (size_t i = 1; i < n; i++)
        k[i - 1] = (struct child_key){ fl->nodes[i].parent, (uint32_t)i, &fl->frames[fl->nodes[i].frame] };
    qsort(k, n - 1, sizeof *k, child_cmp);
    for (size_t i = 0; i + 1 < n; i++) c[i] = k[i].node;
    for (size_t i = 0, j = 0; i <= n; i++) {
        while (j < n - 1 && k[j].parent < i) j++;
        f[i] = (uint32_t)j;
    }
    free(k);
    *first = f;
    *child = c;
    return 0;
}

int flame_walk(const etl_flame *fl, const uint32_t *first, const uint32_t *child, uint32_t start,
               int (*visit)(void *arg, uint32_t node, const uint32_t *path, size_t depth), void *arg)
{
    size_t cap = 64, depth = 0;
    uint32_t *path = malloc(cap * sizeof *path), *next = malloc(cap * sizeof *next);
    int rc = 0;

    (void)fl;
    if (!path || !next) {
        rc = -1;
        goto out;
    }
    path[0] = start;
    next[0] = first[start];
    if ((rc = visit(arg, start, path, 0)) != 0) goto out;
    for (;;) {
        uint32_t node = path[depth];
        if (next[depth] < first[node + 1]) {
            uint32_t c = child[next[depth]++];
            if (++depth == cap) {
                uint32_t *p2 = realloc(path, 2 * cap * sizeof *p2), *n2;
                if (p2) path = p2;
                n2 = p2 ? realloc(next, 2 * cap * sizeof *n2) : NULL;
                if (!n2) {
                    rc = -1;
                    goto out;
                }
                next = n2;
                cap *= 2;
            }
            path[depth] = c;
            next[depth] = first[c];
            if ((rc = visit(arg, c, path, depth)) != 0) goto out;
        } else if (depth == 0) {
            break;
        } else {
            depth--;
        }
    }
out:
    free(path);
    free(next);
    return rc;
}
