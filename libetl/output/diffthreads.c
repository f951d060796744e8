/* SPDX-License-Identifier: MIT */
/* The threads of two compared traces: each trace's compared events grouped by thread, and each
   thread of A matched with the thread of B that does the same (by their lines, not their ids
   or when they first appear), so that two runs of a multi-threaded program compare alike. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7FB5D329728EA185ull;
    x ^= x >> 27;
    x *= 0x81DADEF4BC2DD44Dull;
    return x ^ (x >> 33);
}

static uint64_t owner_key(const struct diff_owner *o)
{
    return mix(((uint64_t)o->pid << 32 | o->tid) ^ (uint64_t)(o->has_pid << 1 | o->has_tid) << 62);
}

static int owner_equal(const struct diff_owner *a, const struct diff_owner *b)
{
    return a->has_pid == b->has_pid && a->has_tid == b->has_tid && (!a->has_pid || a->pid == b->pid) &&
           (!a->has_tid || a->tid == b->tid);
}

/* The index of o's thread in s, a new one when it has none yet; -1 without memory. */
static long thread_index(struct diff_side *s, const struct diff_owner *o, int64_t ts)
{
    size_t mask, i;

    if (2 * (s->nthreads + 1) > s->thread_table_cap) {
        size_t cap = s->thread_table_cap ? 2 * s->thread_table_cap : 64;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t) return -1;
        for (size_t j = 0; j < s->thread_table_cap; j++) {
            if (!s->thread_table[j]) continue;
            for (i = owner_key(&s->threads[s->thread_table[j] - 1].owner) & (cap - 1); t[i]; i = (i + 1) & (cap - 1)) {}
            t[i] = s->thread_table[j];
        }
        free(s->thread_table);
        s->thread_table = t;
        s->thread_table_cap = cap;
    }
    mask = s->thread_table_cap - 1;
    for (i = owner_key(o) & mask; s->thread_table[i]; i = (i + 1) & mask)
        if (owner_equal(&s->threads[s->thread_table[i] - 1].owner, o)) return s->thread_table[i] - 1;
    if (s->nthreads == s->threads_cap) {
        size_t cap = s->threads_cap ? 2 * s->threads_cap : 16;
        struct diff_thread *p = realloc(s->threads, cap * sizeof *p);
        if (!p) return -1;
        s->threads = p;
        s->threads_cap = cap;
    }
    memset(&s->threads[s->nthreads], 0, sizeof s->threads[s->nthreads]);
    s->threads[s->nthreads].owner = *o;
    s->threads[s->nthreads].first_ts = ts;
    s->threads[s->nthreads].partner = -1;
    s->thread_table[i] = (uint32_t)++s->nthreads;
    return (long)s->nthreads - 1;
}

int diff_thread_add(struct diff_side *s, const struct diff_owner *o, size_t i, int64_t ts)
{
    long t = thread_index(s, o, ts);

    if (t < 0) return -1;
    if (i >= s->thread_of_cap) {
        size_t cap = s->thread_of_cap ? 2 * s->thread_of_cap : 4096;
        uint32_t *p;
        while (cap <= i) cap *= 2;
        p = realloc(s->thread_of, cap * sizeof *p);
        if (!p) return -1;
        s->thread_of = p;
        s->thread_of_cap = cap;
    }
    s->thread_of[i] = (uint32_t)t;
    s->threads[t].n++;
    return 0;
}

/* Each thread's events together, in time order, with their hashes and its signature. */
static int group_events(struct diff_side *s)
{
    size_t *next = malloc((s->nthreads + 1) * sizeof *next), at = 0;

    s->by_thread = malloc((s->n + 1) * sizeof *s->by_thread);
    s->thread_hash = malloc((s->n + 1) * sizeof *s->thread_hash);
    if (!next || !s->by_thread || !s->thread_hash) {
        free(next);
        return -1;
    }
    for (size_t t = 0; t < s->nthreads; t++) {
        s->threads[t].first = next[t] = at;
        at += s->threads[t].n;
    }
    for (size_t i = 0; i < s->n; i++) {
        size_t j = next[s->thread_of[i]]++;
        s->by_thread[j] = i;
        s->thread_hash[j] = s->hash[i];
    }
    free(next);
    for (size_t t = 0; t < s->nthreads; t++) {
        struct diff_thread *th = &s->threads[t];
        uint64_t h = mix(th->n + 1);
        for (size_t j = 0; j < th->n; j++) h = mix(h ^ s->thread_hash[th->first + j]) + j;
        th->signature = h;
    }
    free(s->thread_of);
    s->thread_of = NULL;
    s->thread_of_cap = 0;
    return 0;
}

static const uint64_t *thread_lines(const struct diff_side *s, size_t t)
{
    return s->thread_hash + s->threads[t].first;
}

/* ---- threads whose whole sequences are equal ---- */

/* A thread of B by its signature, for the search of equal sequences. */
struct signed_thread {
    uint64_t signature;
    size_t thread;
};

static int by_signature(const void *x, const void *y)
{
    const struct signed_thread *a = x, *b = y;

    if (a->signature != b->signature) return a->signature < b->signature ? -1 : 1;
    return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/* Each thread of A with the first unmatched thread of B (in B's order) whose sequence is the same. */
static int match_equal(struct diff_side *A, struct diff_side *B)
{
    struct signed_thread *order = malloc((B->nthreads + 1) * sizeof *order);

    if (!order) return -1;
    for (size_t j = 0; j < B->nthreads; j++) {
        order[j].signature = B->threads[j].signature;
        order[j].thread = j;
    }
    qsort(order, B->nthreads, sizeof *order, by_signature);
    for (size_t t = 0; t < A->nthreads; t++) {
        struct diff_thread *a = &A->threads[t];
        size_t lo = 0, hi = B->nthreads;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (order[mid].signature < a->signature) lo = mid + 1;
            else hi = mid;
        }
        for (; lo < B->nthreads && order[lo].signature == a->signature; lo++) {
            size_t u = order[lo].thread;
            struct diff_thread *b = &B->threads[u];
            if (b->partner >= 0) continue;
            if (b->n == a->n && memcmp(thread_lines(A, t), thread_lines(B, u), a->n * sizeof(uint64_t)) == 0) {
                a->partner = (int)u;
                b->partner = (int)t;
            }
            break; /* the first unmatched one with that signature, or none */
        }
    }
    free(order);
    return 0;
}

/* ---- the others: by the number of lines they have in common ---- */

/* A line of a thread and how often the thread has it. */
struct line_use {
    uint64_t hash;
    uint32_t thread;
    uint64_t count;
};

static int by_hash(const void *x, const void *y)
{
    const struct line_use *a = x, *b = y;

    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    return a->thread < b->thread ? -1 : a->thread > b->thread;
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* The distinct lines of s's unmatched threads with their counts, sorted by line; *n of them. */
static struct line_use *line_uses(const struct diff_side *s, size_t *n)
{
    size_t total = 0, k = 0, longest = 0;
    struct line_use *u;
    uint64_t *tmp;

    for (size_t t = 0; t < s->nthreads; t++)
        if (s->threads[t].partner < 0) {
            total += s->threads[t].n;
            if (s->threads[t].n > longest) longest = s->threads[t].n;
        }
    u = malloc((total + 1) * sizeof *u);
    tmp = malloc((longest + 1) * sizeof *tmp);
    if (!u || !tmp) {
        free(u);
        free(tmp);
        return NULL;
    }
    for (size_t t = 0; t < s->nthreads; t++) {
        const struct diff_thread *th = &s->threads[t];
        if (th->partner >= 0) continue;
        memcpy(tmp, thread_lines(s, t), th->n * sizeof *tmp);
        qsort(tmp, th->n, sizeof *tmp, u64_cmp);
        for (size_t i = 0; i < th->n; i++) {
            if (i && tmp[i] == tmp[i - 1]) {
                u[k - 1].count++;
                continue;
            }
            u[k].hash = tmp[i];
            u[k].thread = (uint32_t)t;
            u[k++].count = 1;
        }
    }
    free(tmp);
    qsort(u, k, sizeof *u, by_hash);
    *n = k;
    return u;
}

/* A candidate pair and the lines its threads have in common (as multisets). */
struct candidate {
    uint32_t a, b;
    uint64_t common;
    uint64_t size;              /* the two threads' events */
};

struct candidates {
    struct candidate *slot;     /* open addressing by (a, b); common 0: empty */
    size_t cap, n;
};

static int candidate_add(struct candidates *c, uint32_t a, uint32_t b, uint64_t common)
{
    size_t i;

    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        struct candidate *p = calloc(cap, sizeof *p);
        if (!p) return -1;
        for (size_t j = 0; j < c->cap; j++) {
            if (!c->slot[j].common) continue;
            for (i = mix((uint64_t)c->slot[j].a << 32 | c->slot[j].b) & (cap - 1); p[i].common; i = (i + 1) & (cap - 1)) {}
            p[i] = c->slot[j];
        }
        free(c->slot);
        c->slot = p;
        c->cap = cap;
    }
    for (i = mix((uint64_t)a << 32 | b) & (c->cap - 1); c->slot[i].common; i = (i + 1) & (c->cap - 1))
        if (c->slot[i].a == a && c->slot[i].b == b) {
            c->slot[i].common += common;
            return 0;
        }
    c->slot[i].a = a;
    c->slot[i].b = b;
    c->slot[i].common = common;
    c->n++;
    return 0;
}

/* Most lines in common first; then the pair with the fewest differences; then A's order, B's. */
static int by_likeness(const void *x, const void *y)
{
    const struct candidate *p = x, *q = y;

    if (p->common != q->common) return p->common > q->common ? -1 : 1;
    if (p->size != q->size) return p->size < q->size ? -1 : 1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static int match_alike(struct diff_side *A, struct diff_side *B)
{
    size_t na = 0, nb = 0, i = 0, j = 0, k = 0;
    struct line_use *ua = line_uses(A, &na), *ub = ua ? line_uses(B, &nb) : NULL;
    struct candidates c = { NULL, 0, 0 };
    struct candidate *list = NULL;
    int rc = -1;

    if (!ua || !ub) goto out;
    /* Every line both have: each pair of threads that have it shares min(count, count). */
    while (i < na && j < nb) {
        size_t i2 = i, j2 = j;
        if (ua[i].hash != ub[j].hash) {
            if (ua[i].hash < ub[j].hash) i++;
            else j++;
            continue;
        }
        while (i2 < na && ua[i2].hash == ua[i].hash) i2++;
        while (j2 < nb && ub[j2].hash == ub[j].hash) j2++;
        for (size_t x = i; x < i2; x++)
            for (size_t y = j; y < j2; y++)
                if (candidate_add(&c, ua[x].thread, ub[y].thread, ua[x].count < ub[y].count ? ua[x].count : ub[y].count) != 0)
                    goto out;
        i = i2;
        j = j2;
    }
    list = malloc((c.n + 1) * sizeof *list);
    if (!list) goto out;
    for (size_t s = 0; s < c.cap; s++)
        if (c.slot[s].common) {
            list[k] = c.slot[s];
            list[k++].size = A->threads[c.slot[s].a].n + B->threads[c.slot[s].b].n;
        }
    qsort(list, k, sizeof *list, by_likeness);
    for (size_t s = 0; s < k; s++) {
        struct diff_thread *a = &A->threads[list[s].a], *b = &B->threads[list[s].b];
        if (a->partner >= 0 || b->partner >= 0) continue;
        a->partner = (int)list[s].b;
        b->partner = (int)list[s].a;
    }
    rc = 0;
out:
    free(ua);
    free(ub);
    free(c.slot);
    free(list);
    return rc;
}

int diff_threads_match(etl_diff *d)
{
    struct diff_side *A = &d->side[0], *B = &d->side[1];
    unsigned number = 0;
    size_t np = 0;

    if (group_events(A) != 0 || group_events(B) != 0) return -1;
    if (match_equal(A, B) != 0 || match_alike(A, B) != 0) return -1;
    d->pairs = calloc(A->nthreads + B->nthreads + 1, sizeof *d->pairs);
    if (!d->pairs) return -1;
    for (size_t t = 0; t < A->nthreads; t++) {
        A->threads[t].number = ++number;
        d->pairs[np].t[0] = (int)t;
        d->pairs[np].t[1] = A->threads[t].partner;
        d->pairs[np++].number = number;
        if (A->threads[t].partner >= 0) B->threads[A->threads[t].partner].number = number;
    }
    for (size_t t = 0; t < B->nthreads; t++) {
        if (B->threads[t].partner >= 0) continue;
        B->threads[t].number = ++number;
        d->pairs[np].t[0] = -1;
        d->pairs[np].t[1] = (int)t;
        d->pairs[np++].number = number;
    }
    d->npairs = np;
    /* The lines are compared thread by thread from here on. */
    for (int k = 0; k < 2; k++) {
        free(d->side[k].hash);
        d->side[k].hash = NULL;
        d->side[k].cap = 0;
    }
    return 0;
}

const char *diff_thread_text(const struct diff_side *s, const struct diff_thread *t, char *buf, size_t size)
{
    const struct diff_owner *o = &t->owner;
    const char *pname = NULL, *tname = NULL;
    size_t n;

    if (s->names && o->has_pid) pname = etl_name_map_process(s->names, o->pid, t->first_ts);
    if (s->names && o->has_tid) tname = etl_name_map_thread(s->names, o->tid, t->first_ts);
    if (!o->has_pid && !o->has_tid) {
        snprintf(buf, size, "no process or thread id");
        return buf;
    }
    if (o->has_pid) snprintf(buf, size, "pid %" PRIu32 "%s%s%s", o->pid, pname ? " (" : "", pname ? pname : "", pname ? ")" : "");
    else snprintf(buf, size, "no process id");
    n = strlen(buf);
    if (n + 1 >= size) return buf;
    if (o->has_tid)
        snprintf(buf + n, size - n, ", tid %" PRIu32 "%s%s%s", o->tid, tname ? " (" : "", tname ? tname : "", tname ? ")" : "");
    else snprintf(buf + n, size - n, ", no thread id");
    return buf;
}
