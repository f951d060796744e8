/* SPDX-License-Identifier: MIT */
/* Per-function sample shares of two profiles, A against B, self and total, judged against a tolerance in percentage points, and their table or JSON (etldiff --stacks, etl/output.h). */
#include <float.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define NONE UINT32_MAX
/* A move equal to the tolerance passes: shares are quotients, and 100 * 11 / 100 - 10 must
   not come out a hair above 1 point. */
#define EPSILON_POINTS 1e-9

struct stackdiff_function {
    const char *name, *image;   /* the profiles' strings */
    uint64_t self[2], total[2];
    uint64_t stamp;             /* the last sample (stack) counted in total, + 1 */
};

struct etl_profile_diff {
    etl_profile_measure measure;
    double tolerance;
    uint64_t samples[2];
    struct stackdiff_function *fn;
    size_t nfn, fn_cap;
    uint32_t *table;            /* open addressing: function index, NONE empty */
    size_t table_cap;
    uint32_t *order;            /* the functions as etl_profile_diff_get gives them */
    size_t norder;
    size_t moved, hotter, cooler;
};

static uint64_t hash_text(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull; /* a separator: ("ab", "c") is not ("a", "bc") */
}

static uint64_t function_hash(const char *name, const char *image)
{
    return hash_text(hash_text(0xCBF29CE484222325ull, name), image ? image : "");
}

static int same_text(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static int table_grow(etl_profile_diff *d)
{
    size_t cap = d->table_cap ? 2 * d->table_cap : 256;
    uint32_t *t = malloc(cap * sizeof *t);

    if (!t) return -1;
    for (size_t i = 0; i < cap; i++) t[i] = NONE;
    for (size_t i = 0; i < d->nfn; i++) {
        size_t j = (size_t)function_hash(d->fn[i].name, d->fn[i].image) & (cap - 1);
        while (t[j] != NONE) j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i;
    }
    free(d->table);
    d->table = t;
    d->table_cap = cap;
    return 0;
}

/* The index of function (name, image), added when new; NONE without memory. */
static uint32_t function_index(etl_profile_diff *d, const char *name, const char *image)
{
    size_t j;

    if ((d->nfn + 1) * 2 > d->table_cap && table_grow(d) != 0) return NONE;
    j = (size_t)function_hash(name, image) & (d->table_cap - 1);
    for (; d->table[j] != NONE; j = (j + 1) & (d->table_cap - 1)) {
        const struct stackdiff_function *f = &d->fn[d->table[j]];
        if (same_text(f->name, name) && same_text(f->image, image)) return d->table[j];
    }
    if (d->nfn == d->fn_cap) {
        size_t cap = d->fn_cap ? 2 * d->fn_cap : 64;
        struct stackdiff_function *p;
        if (cap >= NONE) return NONE;
        p = realloc(d->fn, cap * sizeof *p);
        if (!p) return NONE;
        d->fn = p;
        d->fn_cap = cap;
    }
    memset(&d->fn[d->nfn], 0, sizeof d->fn[d->nfn]);
    d->fn[d->nfn].name = name;
    d->fn[d->nfn].image = image;
    d->table[j] = (uint32_t)d->nfn;
    return (uint32_t)d->nfn++;
}

/* The function of the profile's frame index fi, through the side's cache of frame indexes
   (*cache, grown as needed). NONE without memory. */
static uint32_t frame_function(etl_profile_diff *d, const etl_profile *p, uint32_t fi, uint32_t **cache, size_t *cap)
{
    const etl_profile_frame *fr;

    if (fi >= *cap) {
        size_t c = *cap ? *cap : 256;
        uint32_t *q;
        while (c <= fi) {
            if (c > SIZE_MAX / 2 / sizeof *q) return NONE;
            c *= 2;
        }
        q = realloc(*cache, c * sizeof *q);
        if (!q) return NONE;
        for (size_t i = *cap; i < c; i++) q[i] = NONE;
        *cache = q;
        *cap = c;
    }
    if ((*cache)[fi] != NONE) return (*cache)[fi];
    fr = etl_profile_frame_get(p, fi);
    if (!fr) return NONE;
    /* A named function is told apart by its image too (main of two programs); an unnamed
       frame's name already holds its image ("libc.so.6+0x1a2b") or is a bare address. */
    return (*cache)[fi] = function_index(d, fr->name, fr->function ? fr->image : NULL);
}

/* Adds the samples of profile p as side k. 0, or -1 without memory. */
static int add_side(etl_profile_diff *d, const etl_profile *p, int k, uint64_t *serial)
{
    size_t n = etl_profile_stack_count(p), cap = 0;
    uint32_t *cache = NULL;
    etl_profile_stack s;
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        if (etl_profile_stack_get(p, i, &s) != ETL_OK) break;
        d->samples[k] += s.samples;
        ++*serial;
        /* frames are root first: the innermost, where the sample hit, is last */
        for (unsigned j = 0; j < s.frame_count; j++) {
            uint32_t f = frame_function(d, p, s.frames[j], &cache, &cap);
            if (f == NONE) {
                rc = -1;
                break;
            }
            if (j + 1 == s.frame_count) d->fn[f].self[k] += s.samples;
            /* once per sample, however often recursion puts the function on the stack */
            if (d->fn[f].stamp != *serial) {
                d->fn[f].stamp = *serial;
                d->fn[f].total[k] += s.samples;
            }
        }
    }
    free(cache);
    return rc;
}

/* |x| (fabs without libm) */
static double magnitude(double x)
{
    return x < 0 ? -x : x;
}

static double share(uint64_t n, uint64_t of)
{
    return of ? 100.0 * (double)n / (double)of : 0.0;
}

static double measured(const etl_profile_diff *d, const struct stackdiff_function *f, int k)
{
    return share(d->measure == ETL_PROFILE_TOTAL ? f->total[k] : f->self[k], d->samples[k]);
}

static double delta_of(const etl_profile_diff *d, const struct stackdiff_function *f)
{
    return measured(d, f, 1) - measured(d, f, 0);
}

static int cmp_text(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* A function with what it is sorted by. */
struct sort_key {
    double move, share_b, share_a;
    const struct stackdiff_function *f;
    uint32_t index;
};

/* The largest move first; then the larger share in B, then in A; then by name and image. */
static int cmp_order(const void *x, const void *y)
{
    const struct sort_key *a = x, *b = y;
    int c;

    if (a->move != b->move) return a->move > b->move ? -1 : 1;
    if (a->share_b != b->share_b) return a->share_b > b->share_b ? -1 : 1;
    if (a->share_a != b->share_a) return a->share_a > b->share_a ? -1 : 1;
    c = cmp_text(a->f->name, b->f->name);
    return c ? c : cmp_text(a->f->image, b->f->image);
}

/* d->order: the functions the measure sees, sorted. 0, or -1 without memory. */
static int sort_functions(etl_profile_diff *d)
{
    struct sort_key *k;

    if (!d->norder) return 0;
    if (!(k = malloc(d->norder * sizeof *k))) return -1;
    for (size_t i = 0; i < d->norder; i++) {
        const struct stackdiff_function *f = &d->fn[d->order[i]];
        k[i].move = magnitude(delta_of(d, f));
        k[i].share_a = measured(d, f, 0);
        k[i].share_b = measured(d, f, 1);
        k[i].f = f;
        k[i].index = d->order[i];
    }
    qsort(k, d->norder, sizeof *k, cmp_order);
    for (size_t i = 0; i < d->norder; i++) d->order[i] = k[i].index;
    free(k);
    return 0;
}

int etl_profile_diff_new(etl_profile_diff **out, const etl_profile *a, const etl_profile *b,
                         etl_profile_measure measure, double tolerance)
{
    etl_profile_diff *d;
    uint64_t serial = 0;

    *out = NULL;
    if (!a || !b || (measure != ETL_PROFILE_SELF && measure != ETL_PROFILE_TOTAL) ||
        !(tolerance >= 0 && tolerance <= DBL_MAX))
        return ETL_FAILED;
    if (!(d = calloc(1, sizeof *d))) return ETL_FAILED;
    d->measure = measure;
    d->tolerance = tolerance;
    if (add_side(d, a, 0, &serial) != 0 || add_side(d, b, 1, &serial) != 0) goto nomem;
    if (d->nfn && !(d->order = malloc(d->nfn * sizeof *d->order))) goto nomem;
    for (size_t i = 0; i < d->nfn; i++) {
        const struct stackdiff_function *f = &d->fn[i];
        double delta;
        /* a function the measure does not see on either side (self: never where a sample hit) */
        if (d->measure == ETL_PROFILE_SELF ? !f->self[0] && !f->self[1] : !f->total[0] && !f->total[1]) continue;
        d->order[d->norder++] = (uint32_t)i;
        if (!d->samples[0] || !d->samples[1]) continue; /* no shares to judge */
        delta = delta_of(d, f);
        if (magnitude(delta) > d->tolerance + EPSILON_POINTS) {
            d->moved++;
            if (delta > 0) d->hotter++;
            else d->cooler++;
        }
    }
    if (sort_functions(d) != 0) goto nomem;
    *out = d;
    return ETL_OK;
nomem:
    etl_profile_diff_free(d);
    return ETL_FAILED;
}

void etl_profile_diff_free(etl_profile_diff *d)
{
    if (!d) return;
    free(d->fn);
    free(d->table);
    free(d->order);
    free(d);
}

void etl_profile_diff_stats_get(const etl_profile_diff *d, etl_profile_diff_stats *out)
{
    memset(out, 0, sizeof *out);
    out->samples_a = d->samples[0];
    out->samples_b = d->samples[1];
    out->functions = d->norder;
    out->moved = d->moved;
    out->hotter = d->hotter;
    out->cooler = d->cooler;
    out->measure = d->measure;
    out->tolerance = d->tolerance;
}

size_t etl_profile_diff_count(const etl_profile_diff *d)
{
    return d->norder;
}

int etl_profile_diff_get(const etl_profile_diff *d, size_t index, etl_profile_diff_function *out)
{
    const struct stackdiff_function *f;

    if (index >= d->norder) return ETL_FAILED;
    f = &d->fn[d->order[index]];
    memset(out, 0, sizeof *out);
    out->name = f->name;
    out->image = f->image;
    for (int k = 0; k < 2; k++) {
        out->self[k] = f->self[k];
        out->total[k] = f->total[k];
        out->self_share[k] = share(f->self[k], d->samples[k]);
        out->total_share[k] = share(f->total[k], d->samples[k]);
    }
    out->delta = delta_of(d, f);
    if (d->samples[0] && d->samples[1] && magnitude(out->delta) > d->tolerance + EPSILON_POINTS)
        out->verdict = out->delta > 0 ? 1 : -1;
    return ETL_OK;
}

static const char *verdict_name(int verdict)
{
    return verdict > 0 ? "hotter" : verdict < 0 ? "cooler" : "ok";
}

static const char *measure_name(etl_profile_measure m)
{
    return m == ETL_PROFILE_TOTAL ? "total" : "self";
}

/* A function's name in the text table: "main (hot3)" where a named function has an image. */
static void print_function_text(FILE *f, const etl_profile_diff_function *r)
{
    char *p;
    /* the table is one line per function: control characters (a newline in a name) are spaces */
    size_t n = strlen(r->name);
    if (!(p = malloc(n + 1))) {
        fputs(r->name, f);
    }
    else {
        for (size_t i = 0; i <= n; i++) p[i] = (unsigned char)r->name[i] < 0x20 && r->name[i] ? ' ' : r->name[i];
        fputs(p, f);
        free(p);
    }
    if (r->image) fprintf(f, " (%s)", r->image);
}

static void write_text(FILE *f, const etl_profile_diff *d, long max_rows)
{
    etl_profile_diff_function r;
    const char *m = measure_name(d->measure);
    int total = d->measure == ETL_PROFILE_TOTAL;
    size_t shown = 0;

    fprintf(f, "%8s %8s %8s  %-7s %s\n", "A %", "B %", "DELTA", "VERDICT", total ?
            "FUNCTION (total: samples with it on the stack)" : "FUNCTION (self: samples that hit it)");
    for (size_t i = 0; i < d->norder && (max_rows < 0 || shown < (size_t)max_rows); i++, shown++) {
        etl_profile_diff_get(d, i, &r);
        fprintf(f, "%7.2f%% %7.2f%% %+8.2f  %-7s ", total ? r.total_share[0] : r.self_share[0],
                total ? r.total_share[1] : r.self_share[1], r.delta, verdict_name(r.verdict));
        print_function_text(f, &r);
        fputc('\n', f);
    }
    if (shown < d->norder) fprintf(f, "(%zu more functions not shown)\n", d->norder - shown);
    fprintf(f, "A: %" PRIu64 " samples, B: %" PRIu64 " samples: ", d->samples[0], d->samples[1]);
    if (d->moved)
        fprintf(f, "%zu of %zu functions moved more than %g point%s of %s share (%zu hotter, %zu cooler)\n",
                d->moved, d->norder, d->tolerance, d->tolerance == 1 ? "" : "s", m, d->hotter, d->cooler);
    else
        fprintf(f, "no function of %zu moved more than %g point%s of %s share\n", d->norder, d->tolerance,
                d->tolerance == 1 ? "" : "s", m);
}

static void write_side_json(FILE *f, const etl_profile_diff_function *r, int k)
{
    fprintf(f, "{\"self\":%" PRIu64 ",\"total\":%" PRIu64 ",\"self_share\":%.4f,\"total_share\":%.4f}", r->self[k],
            r->total[k], r->self_share[k], r->total_share[k]);
}

static void write_json(FILE *f, const etl_profile_diff *d, const char *name_a, const char *name_b, long max_rows)
{
    etl_profile_diff_function r;
    size_t shown = 0;

    fputs("{\"a\":{\"path\":", f);
    etl_dump_json_string(f, name_a ? name_a : "A");
    fprintf(f, ",\"samples\":%" PRIu64 "},\"b\":{\"path\":", d->samples[0]);
    etl_dump_json_string(f, name_b ? name_b : "B");
    fprintf(f, ",\"samples\":%" PRIu64 "},\"measure\":\"%s\",\"tolerance\":%g,\"equal\":%s,\"functions\":[",
            d->samples[1], measure_name(d->measure), d->tolerance, d->moved ? "false" : "true");
    for (size_t i = 0; i < d->norder && (max_rows < 0 || shown < (size_t)max_rows); i++, shown++) {
        etl_profile_diff_get(d, i, &r);
        fputs(i ? ",{\"function\":" : "{\"function\":", f);
        etl_dump_json_string(f, r.name);
        fputs(",\"image\":", f);
        if (r.image) etl_dump_json_string(f, r.image);
        else fputs("null", f);
        fputs(",\"a\":", f);
        write_side_json(f, &r, 0);
        fputs(",\"b\":", f);
        write_side_json(f, &r, 1);
        fprintf(f, ",\"delta\":%.4f,\"verdict\":\"%s\"}", r.delta, verdict_name(r.verdict));
    }
    fprintf(f, "],\"functions_total\":%zu,\"moved\":%zu,\"hotter\":%zu,\"cooler\":%zu}\n", d->norder, d->moved,
            d->hotter, d->cooler);
}

int etl_profile_diff_write(FILE *f, const etl_profile_diff *d, const char *name_a, const char *name_b,
                           etl_diff_format format, long max_rows)
{
    if (format == ETL_DIFF_JSON) write_json(f, d, name_a, name_b, max_rows);
    else write_text(f, d, max_rows);
    return output_status(f);
}
