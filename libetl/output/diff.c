/* SPDX-License-Identifier: MIT */
/* The comparison of two traces (etl/output.h): each trace's normalized lines, thread by thread
   (diffthreads.c matches the threads) or as one sequence, aligned by their shortest edit script
   (or as multisets), and the counts of events per provider, kind, id and opcode with a
   tolerance. diffselect.c keeps only some processes; diffwrite.c writes the result. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define OUT_OF_MEMORY "out of memory"

void etl_diff_options_init(etl_diff_options *o)
{
    memset(o, 0, sizeof *o);
    etl_normalize_options_init(&o->normalize);
    o->max_diffs = 20;
    o->context = 3;
}

/* A copy of the processes o names (their names too) in d->processes; -1 without memory. */
static int copy_processes(etl_diff *d, const etl_diff_options *o)
{
    if (!o->nprocesses) return 0;
    d->processes = calloc(o->nprocesses, sizeof *d->processes);
    if (!d->processes) return -1;
    for (unsigned i = 0; i < o->nprocesses; i++) {
        d->processes[i] = o->processes[i];
        if (o->processes[i].name && !(d->processes[i].name = strdup(o->processes[i].name))) return -1;
    }
    d->o.processes = d->processes;
    return 0;
}

void diff_set_error(etl_diff *d, const char *message)
{
    free(d->error_copy);
    d->error_copy = strdup(message);
    d->error = d->error_copy ? d->error_copy : OUT_OF_MEMORY;
}

const char *etl_diff_error(const etl_diff *d)
{
    if (!d) return OUT_OF_MEMORY;
    return d->error ? d->error : "";
}

static void on_damage(void *arg, int64_t offset, const char *message)
{
    struct diff_side *s = arg;

    if (s->prepass) return;
    s->damaged = 1;
    if (s->d->o.on_damage) s->d->o.on_damage(s->d->o.on_damage_arg, offset, message);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A 64-bit hash of a line, 8 bytes at a time. */
static uint64_t line_hash(const char *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;

    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w) * 0xFF51AFD7ED558CCDull;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = mix64(h ^ w ^ ((uint64_t)n << 56));
    }
    return mix64(h);
}

static uint32_t row_hash(const etl_event *ev, int32_t id)
{
    uint64_t h = (uint64_t)ev->kind << 40 ^ (uint64_t)(uint16_t)id << 8 ^ ev->opcode;

    if (ev->has & ETL_HAS_PROVIDER) {
        uint64_t a, b;
        memcpy(&a, &ev->provider, 8);
        memcpy(&b, (const char *)&ev->provider + 8, 8);
        h ^= mix64(a) ^ mix64(b + 1);
    }
    return (uint32_t)mix64(h);
}

/* Counts ev in column side; -1 without memory. */
static int count_event(etl_diff *c, const etl_event *ev, int side)
{
    int32_t id = (ev->has & ETL_HAS_ID) ? ev->id : -1;
    int hp = (ev->has & ETL_HAS_PROVIDER) != 0;
    uint32_t i, mask;

    if (2 * (c->table_used + 1) > c->table_cap) {
        unsigned cap = c->table_cap ? 2 * c->table_cap : 256;
        struct diff_count_row *t = calloc(cap, sizeof *t);
        if (!t) return -1;
        for (unsigned k = 0; k < c->table_cap; k++) {
            uint32_t j;
            etl_event key;
            if (!c->table[k].used) continue;
            memset(&key, 0, sizeof key);
            key.kind = c->table[k].kind;
            key.opcode = c->table[k].opcode;
            key.provider = c->table[k].provider;
            key.has = c->table[k].has_provider ? ETL_HAS_PROVIDER : 0;
            for (j = row_hash(&key, c->table[k].id) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1)) {}
            t[j] = c->table[k];
        }
        free(c->table);
        c->table = t;
        c->table_cap = cap;
    }
    mask = c->table_cap - 1;
    for (i = row_hash(ev, id) & mask; c->table[i].used; i = (i + 1) & mask) {
        struct diff_count_row *r = &c->table[i];
        if (r->kind == ev->kind && r->id == id && r->opcode == ev->opcode && r->has_provider == hp &&
            (!hp || etl_guid_equal(&r->provider, &ev->provider))) {
            r->n[side]++;
            return 0;
        }
    }
    c->table[i].used = 1;
    c->table[i].kind = ev->kind;
    c->table[i].id = id;
    c->table[i].opcode = ev->opcode;
    c->table[i].has_provider = hp;
    if (hp) c->table[i].provider = ev->provider;
    c->table[i].n[side] = 1;
    c->table_used++;
    return 0;
}

/* Opens trace k; -1 (the error set) when it cannot be read. */
static int side_open(etl_diff *d, int k, const char *path)
{
    struct diff_side *s = &d->side[k];
    etl_reader_options oo;

    s->d = d;
    s->path = strdup(path);
    if (!s->path) {
        diff_set_error(d, OUT_OF_MEMORY);
        return -1;
    }
    memset(&oo, 0, sizeof oo);
    oo.on_damage = on_damage;
    oo.on_damage_arg = s;
    if (etl_reader_open_path(&s->r, path, &oo) == ETL_FATAL) {
        diff_set_error(d, s->r ? etl_reader_error(s->r) : OUT_OF_MEMORY);
        etl_reader_close(s->r);
        s->r = NULL;
        return -1;
    }
    s->nz = etl_normalizer_new(&d->o.normalize);
    if (!s->nz) {
        diff_set_error(d, OUT_OF_MEMORY);
        return -1;
    }
    return 0;
}

static void side_close(struct diff_side *s)
{
    etl_reader_close(s->r);
    etl_normalizer_free(s->nz);
    free(s->hash);
    free(s->path);
    free(s->thread_of);
    free(s->by_thread);
    free(s->thread_hash);
    free(s->threads);
    free(s->thread_table);
    etl_name_map_free(s->names);
    etl_image_map_free(s->image_map);
    etl_cpu_threads_free(s->running);
    free(s->pids);
    free(s->passed);
}

int etl_diff_open(etl_diff **out, const char *path_a, const char *path_b, const etl_diff_options *o)
{
    etl_diff *d = calloc(1, sizeof *d);

    *out = d;
    if (!d) return ETL_FATAL;
    d->o = *o;
    d->o.processes = NULL;
    d->o.nprocesses = 0;
    if (copy_processes(d, o) != 0) {
        diff_set_error(d, OUT_OF_MEMORY);
        return ETL_FATAL;
    }
    d->o.nprocesses = o->nprocesses;
    /* Thread by thread, a line's thread is that of its sequence: its ids stay out of the
       line (where they would differ between two recordings), unless asked for raw. */
    if (!o->global_order && !o->counts) {
        d->o.normalize.ignore |= (ETL_NORMALIZE_PID | ETL_NORMALIZE_TID) & ~o->normalize.raw;
    }
    if (side_open(d, 0, path_a) != 0 || side_open(d, 1, path_b) != 0) return ETL_FATAL;
    /* The normalizers have their own copies of the lists, which belong to the caller. */
    d->o.normalize.only = NULL;
    d->o.normalize.skip = NULL;
    d->o.normalize.skip_events = NULL;
    d->o.normalize.nonly = d->o.normalize.nskip = d->o.normalize.nskip_events = 0;
    d->o.normalize.ignore_fields = d->o.normalize.only_names = d->o.normalize.skip_names = NULL;
    d->o.normalize.nignore_fields = d->o.normalize.nonly_names = d->o.normalize.nskip_names = 0;
    return ETL_OK;
}

void etl_diff_close(etl_diff *d)
{
    if (!d) return;
    side_close(&d->side[0]);
    side_close(&d->side[1]);
    for (unsigned i = 0; d->processes && i < d->o.nprocesses; i++) free((char *)d->processes[i].name);
    free(d->processes);
    free(d->pairs);
    free(d->table);
    free(d->rows);
    free(d->script.e);
    free(d->error_copy);
    free(d);
}

/* Whether the event the reader just returned goes to the normalizer: its process is one of
   those compared. Marks it so for reading again; -1 without memory. */
static int pass_event(struct diff_side *s, const struct diff_owner *owner)
{
    uint64_t i = s->read_count++;
    int keep;

    if (!s->npids) return 1;
    keep = owner->has_pid && diff_selected(s, owner->pid);
    if (i / 8 >= s->passed_cap) {
        size_t cap = s->passed_cap ? 2 * s->passed_cap : 4096;
        uint8_t *p = realloc(s->passed, cap);
        if (!p) return -1;
        memset(p + s->passed_cap, 0, cap - s->passed_cap);
        s->passed = p;
        s->passed_cap = cap;
    }
    if (keep) s->passed[i / 8] |= (uint8_t)(1u << (i % 8));
    return keep;
}

/* Whether event i (as the reader returns them) was given to the normalizer. */
static int was_passed(const struct diff_side *s, uint64_t i)
{
    if (!s->npids) return 1;
    return i / 8 < s->passed_cap && (s->passed[i / 8] >> (i % 8) & 1);
}

/* First pass: every compared event's hash and thread, and the counts. -1 on error (the error set). */
static int side_read(etl_diff *d, int k)
{
    struct diff_side *s = &d->side[k];
    int per_thread = !d->o.global_order && !d->o.counts;
    etl_event ev;
    int rc;

    if (per_thread && !(s->names = etl_name_map_new())) goto nomem;
    while ((rc = etl_reader_next(s->r, &ev)) == ETL_OK || rc == ETL_WARN) {
        struct diff_owner owner = { 0, 0, 0, 0 };
        const char *line;
        size_t len;
        int c;
        if ((per_thread || s->npids) && diff_event_owner(s, &ev, &owner) != 0) goto nomem;
        if (s->names && etl_name_map_add(s->names, &ev) != ETL_OK) goto nomem;
        if ((c = pass_event(s, &owner)) < 0) goto nomem;
        if (!c) continue;
        c = etl_normalizer_format(s->nz, &ev, etl_reader_time_ns(s->r, ev.timestamp), &line, &len);
        if (c < 0) goto nomem;
        if (!c) continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 4096;
            uint64_t *p = realloc(s->hash, cap * sizeof *p);
            if (!p) goto nomem;
            s->hash = p;
            s->cap = cap;
        }
        if (per_thread && diff_thread_add(s, &owner, s->n, ev.timestamp) != 0) goto nomem;
        s->hash[s->n++] = line_hash(line, len);
        if (count_event(d, &ev, k) != 0) goto nomem;
    }
    if (rc == ETL_FATAL) {
        diff_set_error(d, etl_reader_error(s->r));
        return -1;
    }
    return 0;
nomem:
    diff_set_error(d, OUT_OF_MEMORY);
    return -1;
}

int diff_side_lines(etl_diff *d, int k, const size_t *want, size_t n, char **out)
{
    struct diff_side *s = &d->side[k];
    etl_event ev;
    size_t index = 0, w = 0;
    uint64_t read = 0;
    int rc;

    if (!n) return 0;
    if (etl_reader_rewind(s->r) != ETL_OK) return -1;
    etl_normalizer_rewind(s->nz);
    while (w < n && ((rc = etl_reader_next(s->r, &ev)) == ETL_OK || rc == ETL_WARN)) {
        const char *line;
        int c;
        if (!was_passed(s, read++)) continue;
        c = etl_normalizer_format(s->nz, &ev, etl_reader_time_ns(s->r, ev.timestamp), &line, NULL);
        if (c < 0) return -1;
        if (!c) continue;
        while (w < n && want[w] == index) {
            out[w] = strdup(line);
            if (!out[w++]) return -1;
        }
        index++;
    }
    return w == n ? 0 : -1;
}

size_t diff_event_number(const etl_diff *d, const struct diff_pair *p, int k, size_t i)
{
    const struct diff_side *s = &d->side[k];

    if (p->t[k] < 0) return i;
    return s->by_thread[s->threads[p->t[k]].first + i];
}

/* ---- the edit script ---- */

static int script_add(struct diff_script *s, char op, size_t a, size_t b)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct diff_edit *p = realloc(s->e, cap * sizeof *p);
        if (!p) return -1;
        s->e = p;
        s->cap = cap;
    }
    s->e[s->n].op = op;
    s->e[s->n].a = a;
    s->e[s->n].b = b;
    s->n++;
    if (op != '=') s->differences++;
    return 0;
}

/*
 * The shortest edit script of a[0..na) into b[0..nb) (Myers' greedy algorithm, O((na+nb) D)
 * time), as steps appended to s with numbers offset by a0, b0. Returns 0, 1 when D exceeds
 * DIFF_MAX_EDIT_DISTANCE (nothing appended), -1 without memory.
 */
static int myers(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t a0, size_t b0,
                 struct diff_script *s)
{
    long n = (long)na, m = (long)nb, dmax = n + m < DIFF_MAX_EDIT_DISTANCE ? n + m : DIFF_MAX_EDIT_DISTANCE;
    long *v = calloc((size_t)(2 * dmax + 3), sizeof *v), *vk = v + dmax + 1;
    long **hist = calloc((size_t)dmax + 1, sizeof *hist);
    long d, found = -1;

    if (!v || !hist) goto nomem;
    vk[1] = 0;
    for (d = 0; d <= dmax && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && vk[k - 1] < vk[k + 1])) ? vk[k + 1] : vk[k - 1] + 1, y = x - k;
            while (x < n && y < m && a[x] == b[y]) x++, y++;
            vk[k] = x;
            if (x >= n && y >= m) {
                found = d;
                break;
            }
        }
        hist[d] = malloc((size_t)(2 * d + 1) * sizeof **hist);
        if (!hist[d]) goto nomem;
        memcpy(hist[d], vk - d, (size_t)(2 * d + 1) * sizeof **hist);
    }
    if (found < 0) {
        for (long i = 0; i <= dmax; i++) free(hist[i]);
        free(hist);
        free(v);
        return 1;
    }
    {
        /* Back from (n, m): each d is one '-' or '+', after the diagonal it took. */
        size_t cap = (size_t)(n + m) + 1, k = 0;
        struct diff_edit *rev = malloc(cap * sizeof *rev);
        long x = n, y = m;
        if (!rev) goto nomem;
        for (d = found; d > 0; d--) {
            const long *prev = hist[d - 1] + (d - 1); /* prev[k]: x on diagonal k after step d - 1 */
            long kk = x - y;
            long pk = (kk == -d || (kk != d && prev[kk - 1] < prev[kk + 1])) ? kk + 1 : kk - 1;
            long px = prev[pk], py = px - pk;
            while (x > px && y > py) { /* the diagonal run that followed step d */
                x--, y--;
                rev[k++] = (struct diff_edit){ '=', (size_t)x, (size_t)y };
            }
            if (pk == kk + 1) { /* step d went down: b[py] inserted */
                rev[k++] = (struct diff_edit){ '+', (size_t)x, (size_t)py };
                y = py;
            }
            else {              /* it went right: a[px] deleted */
                rev[k++] = (struct diff_edit){ '-', (size_t)px, (size_t)y };
                x = px;
            }
        }
        while (x > 0 && y > 0) {
            x--, y--;
            rev[k++] = (struct diff_edit){ '=', (size_t)x, (size_t)y };
        }
        while (k > 0) {
            k--;
            if (script_add(s, rev[k].op, rev[k].a + a0, rev[k].b + b0) != 0) {
                free(rev);
                goto nomem;
            }
        }
        free(rev);
    }
    for (long i = 0; i <= found; i++) free(hist[i]);
    free(hist);
    free(v);
    return 0;
nomem:
    if (hist)
        for (long i = 0; i <= dmax; i++) free(hist[i]);
    free(hist);
    free(v);
    return -1;
}

/* A sequence of lines to compare: a thread's, or a whole trace's. */
struct diff_seq {
    const uint64_t *hash;
    size_t n;
};

/* The ordered comparison: common head, the middle's shortest edit script, common tail. */
static int ordered_script(const struct diff_seq *A, const struct diff_seq *B, struct diff_script *s)
{
    size_t head = 0, tail = 0, na = A->n, nb = B->n;
    int rc;

    while (head < na && head < nb && A->hash[head] == B->hash[head]) head++;
    while (tail < na - head && tail < nb - head && A->hash[na - 1 - tail] == B->hash[nb - 1 - tail]) tail++;
    for (size_t i = 0; i < head; i++)
        if (script_add(s, '=', i, i) != 0) return -1;
    /* Only deletions or only insertions (a thread the other trace lacks): no search needed. */
    if (na - head - tail == 0 || nb - head - tail == 0) rc = 1;
    else rc = myers(A->hash + head, na - head - tail, B->hash + head, nb - head - tail, head, head, s);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (na - head - tail && nb - head - tail) s->approximate = 1;
        for (size_t i = head; i < na - tail; i++)
            if (script_add(s, '-', i, head) != 0) return -1;
        for (size_t i = head; i < nb - tail; i++)
            if (script_add(s, '+', na - tail, i) != 0) return -1;
    }
    for (size_t i = 0; i < tail; i++)
        if (script_add(s, '=', na - tail + i, nb - tail + i) != 0) return -1;
    return 0;
}

/* The unordered comparison: the lines one trace has more often than the other, each as often
   as it has them more, in A's order then B's. */
struct line_count {
    uint64_t hash;
    size_t n[2];
    size_t first[2];            /* the first event with this line in A, in B */
    int used;
};

static int unordered_script(const struct diff_seq *A, const struct diff_seq *B, struct diff_script *s)
{
    const struct diff_seq *sides[2] = { A, B };
    size_t cap = 1024, used = 0;
    struct line_count *t;

    while (cap < 2 * (A->n + B->n)) cap *= 2;
    t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sides[k]->n; i++) {
            uint64_t h = sides[k]->hash[i];
            size_t j;
            for (j = (size_t)h & (cap - 1); t[j].used && t[j].hash != h; j = (j + 1) & (cap - 1)) {}
            if (!t[j].used) {
                t[j].used = 1;
                t[j].hash = h;
                used++;
            }
            if (t[j].n[k]++ == 0) t[j].first[k] = i;
        }
    /* In each trace's order: an event whose line the other trace has fewer of. */
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sides[k]->n; i++) {
            uint64_t h = sides[k]->hash[i];
            size_t j;
            for (j = (size_t)h & (cap - 1); t[j].hash != h; j = (j + 1) & (cap - 1)) {}
            if (t[j].n[k] > t[j].n[1 - k]) {
                t[j].n[k]--; /* this occurrence is one of the extra ones */
                if (script_add(s, k ? '+' : '-', k ? 0 : i, k ? i : 0) != 0) {
                    free(t);
                    return -1;
                }
            }
        }
    (void)used;
    free(t);
    return 0;
}

/* ---- the counts ---- */

static int row_cmp(const void *x, const void *y)
{
    const struct diff_count_row *a = x, *b = y;
    char ga[ETL_GUID_STRING_SIZE], gb[ETL_GUID_STRING_SIZE];
    int c;

    if (a->has_provider != b->has_provider) return a->has_provider - b->has_provider;
    if (a->has_provider && (c = strcmp(etl_guid_format(&a->provider, ga), etl_guid_format(&b->provider, gb))) != 0)
        return c;
    if (a->kind != b->kind) return a->kind - b->kind;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return (int)a->opcode - (int)b->opcode;
}

/* Whether a row's counts differ by more than the tolerance. */
static int row_differs(const struct diff_count_row *r, const etl_diff_options *o)
{
    double diff = r->n[0] > r->n[1] ? (double)(r->n[0] - r->n[1]) : (double)(r->n[1] - r->n[0]);
    double allowed = o->tolerance_percent ? o->tolerance * (double)r->n[0] / 100.0 : o->tolerance;

    return diff > allowed;
}

/* The rows that differ, sorted; *n their number (the caller frees the result). */
static struct diff_count_row *differing_rows(const etl_diff *c, const etl_diff_options *o, size_t *n)
{
    struct diff_count_row *out = malloc((c->table_used + 1) * sizeof *out);

    *n = 0;
    if (!out) return NULL;
    for (unsigned i = 0; i < c->table_cap; i++)
        if (c->table[i].used && row_differs(&c->table[i], o)) out[(*n)++] = c->table[i];
    qsort(out, *n, sizeof *out, row_cmp);
    return out;
}

/* The sequence side k gives pair p: its thread's, or (no thread) the whole trace's in global
   order, or nothing. */
static struct diff_seq pair_seq(const etl_diff *d, const struct diff_pair *p, int k)
{
    const struct diff_side *s = &d->side[k];
    struct diff_seq q = { NULL, 0 };

    if (p->t[k] >= 0) {
        q.hash = s->thread_hash + s->threads[p->t[k]].first;
        q.n = s->threads[p->t[k]].n;
    }
    else if (d->o.global_order) {
        q.hash = s->hash;
        q.n = s->n;
    }
    return q;
}

/* Each pair's steps, one pair after the other. -1 without memory. */
static int pairs_script(etl_diff *d)
{
    for (size_t i = 0; i < d->npairs; i++) {
        struct diff_pair *p = &d->pairs[i];
        struct diff_seq a = pair_seq(d, p, 0), b = pair_seq(d, p, 1);
        size_t before = d->script.differences;
        p->from = d->script.n;
        if ((d->o.unordered ? unordered_script(&a, &b, &d->script) : ordered_script(&a, &b, &d->script)) != 0) return -1;
        p->to = d->script.n;
        p->differences = d->script.differences - before;
    }
    return 0;
}

int etl_diff_compare(etl_diff *d)
{
    for (int k = 0; k < 2; k++)
        if (d->o.nprocesses && diff_select_processes(d, k) != 0) return ETL_FATAL;
    if (side_read(d, 0) != 0 || side_read(d, 1) != 0) return ETL_FATAL;
    d->rows = differing_rows(d, &d->o, &d->nrows);
    if (!d->rows) goto nomem;
    if (d->o.counts) return ETL_OK;
    if (d->o.global_order) {
        d->pairs = calloc(1, sizeof *d->pairs);
        if (!d->pairs) goto nomem;
        d->pairs[0].t[0] = d->pairs[0].t[1] = -1;
        d->npairs = 1;
    }
    else if (diff_threads_match(d) != 0) goto nomem;
    if (pairs_script(d) != 0) goto nomem;
    return ETL_OK;
nomem:
    diff_set_error(d, DIFF_OUT_OF_MEMORY_OR_REREAD);
    return ETL_FATAL;
}

void etl_diff_stats_get(const etl_diff *d, etl_diff_stats *out)
{
    memset(out, 0, sizeof *out);
    out->events_a = d->side[0].n;
    out->events_b = d->side[1].n;
    out->differences = d->o.counts ? d->nrows : d->script.differences;
    out->approximate = d->script.approximate;
    out->damaged = d->side[0].damaged || d->side[1].damaged;
    if (d->o.global_order || d->o.counts) return;
    out->threads_a = d->side[0].nthreads;
    out->threads_b = d->side[1].nthreads;
    for (size_t i = 0; i < d->npairs; i++)
        if (d->pairs[i].differences) out->threads_differ++;
}

size_t etl_diff_thread_count(const etl_diff *d)
{
    return d->o.global_order || d->o.counts ? 0 : d->npairs;
}

int etl_diff_thread_get(const etl_diff *d, size_t i, etl_diff_thread *out)
{
    const struct diff_pair *p;

    memset(out, 0, sizeof *out);
    if (i >= etl_diff_thread_count(d)) return ETL_FAILED;
    p = &d->pairs[i];
    out->number = p->number;
    out->differences = p->differences;
    for (int k = 0; k < 2; k++) {
        etl_diff_thread_side *o = k ? &out->b : &out->a;
        const struct diff_thread *t;
        if (p->t[k] < 0) continue;
        t = &d->side[k].threads[p->t[k]];
        o->present = 1;
        o->has_pid = t->owner.has_pid;
        o->has_tid = t->owner.has_tid;
        o->pid = t->owner.pid;
        o->tid = t->owner.tid;
        o->events = t->n;
    }
    return ETL_OK;
}
