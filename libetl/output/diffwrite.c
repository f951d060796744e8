/* SPDX-License-Identifier: MIT */
/* The result of comparing two traces (etl/output.h): a unified diff of normalized lines with the
   counts that differ and a summary line, or one JSON object (doc/etldiff.1). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

static const char *provider_text(const struct diff_count_row *r, char *buf)
{
    const char *name;

    if (!r->has_provider) return "-";
    name = etl_guid_name(&r->provider);
    return name ? name : etl_guid_format(&r->provider, buf);
}

static void print_rows_text(FILE *f, const struct diff_count_row *rows, size_t n)
{
    char g[ETL_GUID_STRING_SIZE], id[16];

    fprintf(f, "%-40s %-8s %6s %6s %10s %10s %10s\n", "PROVIDER", "KIND", "ID", "OPCODE", "A", "B", "DIFF");
    for (size_t i = 0; i < n; i++) {
        const struct diff_count_row *r = &rows[i];
        if (r->id >= 0) snprintf(id, sizeof id, "%d", (int)r->id);
        else snprintf(id, sizeof id, "-");
        fprintf(f, "%-40s %-8s %6s %6u %10" PRIu64 " %10" PRIu64 " %+10" PRId64 "\n", provider_text(r, g),
                etl_event_kind_name(r->kind), id, r->opcode, r->n[0], r->n[1], (int64_t)(r->n[1] - r->n[0]));
    }
}

static void print_rows_json(FILE *f, const struct diff_count_row *rows, size_t n)
{
    char g[ETL_GUID_STRING_SIZE];

    fputs("\"counts\":[", f);
    for (size_t i = 0; i < n; i++) {
        const struct diff_count_row *r = &rows[i];
        fprintf(f, "%s{\"provider\":", i ? "," : "");
        etl_dump_json_string(f, provider_text(r, g));
        fprintf(f, ",\"kind\":\"%s\",\"id\":", etl_event_kind_name(r->kind));
        if (r->id >= 0) fprintf(f, "%d", (int)r->id);
        else fputs("null", f);
        fprintf(f, ",\"opcode\":%u,\"a\":%" PRIu64 ",\"b\":%" PRIu64 "}", r->opcode, r->n[0], r->n[1]);
    }
    fputc(']', f);
}

/* A hunk: script steps [from, to) of pair d->pairs[pair]. */
struct hunk {
    size_t pair;
    size_t from, to;
};

/* The steps to show: the first max_diffs differing ones, each with up to context steps
   around it (not reaching the differing steps not shown, nor another pair's steps); hunks of
   one pair that touch are joined. Returns the number of hunks in *out (malloc'ed). */
static size_t make_hunks(const etl_diff *d, long max_diffs, long context, struct hunk **out)
{
    const struct diff_script *s = &d->script;
    size_t nh = 0, cap = 16;
    long count = 0;
    int stop = 0;
    struct hunk *h = malloc(cap * sizeof *h);

    *out = h;
    if (!h) return 0;
    for (size_t p = 0; p < d->npairs && !stop; p++) {
        size_t first = d->pairs[p].from, end = d->pairs[p].to;
        for (size_t i = first; i < d->pairs[p].to; i++)
            if (s->e[i].op != '=' && count++ == max_diffs) {
                end = i;
                stop = 1;
                break;
            }
        for (size_t i = first; i < end; i++) {
            size_t from, to;
            if (s->e[i].op == '=') continue;
            from = i - first > (size_t)context ? i - (size_t)context : first;
            to = i + (size_t)context + 1 < end ? i + (size_t)context + 1 : end;
            if (nh && h[nh - 1].pair == p && from <= h[nh - 1].to) {
                if (to > h[nh - 1].to) h[nh - 1].to = to;
                continue;
            }
            if (nh == cap) {
                struct hunk *q = realloc(h, 2 * cap * sizeof *q);
                if (!q) {
                    stop = 1;
                    break;
                }
                h = q;
                cap *= 2;
                *out = h;
            }
            h[nh].pair = p;
            h[nh].from = from;
            h[nh].to = to;
            nh++;
        }
    }
    return nh;
}

/* The lines of the steps in the hunks, read again from both traces. */
struct shown {
    size_t *want[2];
    char **line[2];
    size_t n[2];
};

static size_t shown_index(const size_t *want, size_t n, size_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (want[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static int collect_lines(etl_diff *d, const struct hunk *h, size_t nh, struct shown *sh)
{
    const struct diff_script *s = &d->script;
    size_t total = 0;

    memset(sh, 0, sizeof *sh);
    for (size_t i = 0; i < nh; i++) total += h[i].to - h[i].from;
    for (int k = 0; k < 2; k++) {
        sh->want[k] = malloc((total + 1) * sizeof **sh->want);
        if (!sh->want[k]) return -1;
    }
    for (size_t i = 0; i < nh; i++) {
        const struct diff_pair *p = &d->pairs[h[i].pair];
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct diff_edit *e = &s->e[j];
            if (e->op != '+') sh->want[0][sh->n[0]++] = diff_event_number(d, p, 0, e->a);
            if (e->op == '+') sh->want[1][sh->n[1]++] = diff_event_number(d, p, 1, e->b);
        }
    }
    for (int k = 0; k < 2; k++) {
        size_t u = 0;
        qsort(sh->want[k], sh->n[k], sizeof **sh->want, size_cmp);
        for (size_t i = 0; i < sh->n[k]; i++)
            if (!u || sh->want[k][u - 1] != sh->want[k][i]) sh->want[k][u++] = sh->want[k][i];
        sh->n[k] = u;
        sh->line[k] = calloc(u + 1, sizeof **sh->line);
        if (!sh->line[k] || diff_side_lines(d, k, sh->want[k], u, sh->line[k]) != 0) return -1;
    }
    return 0;
}

static void shown_free(struct shown *sh)
{
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; sh->line[k] && i < sh->n[k]; i++) free(sh->line[k][i]);
        free(sh->line[k]);
        free(sh->want[k]);
    }
}

static const char *line_of(const etl_diff *d, const struct shown *sh, const struct diff_pair *p, const struct diff_edit *e)
{
    int k = e->op == '+';
    size_t v = diff_event_number(d, p, k, k ? e->b : e->a);
    size_t i = shown_index(sh->want[k], sh->n[k], v);
    return i < sh->n[k] && sh->line[k][i] ? sh->line[k][i] : "";
}

/* diff -u's range: "start,len", "start" when len is 1, the line before when len is 0. */
static void print_range(FILE *f, size_t start, size_t len)
{
    if (len == 1) fprintf(f, "%zu", start + 1);
    else fprintf(f, "%zu,%zu", len ? start + 1 : start, len);
}

/* The ---/+++ lines that head a pair of threads: each trace's path, a tab, and its thread. */
static void print_thread_header(FILE *f, const etl_diff *d, const struct diff_pair *p)
{
    char buf[512];

    for (int k = 0; k < 2; k++) {
        const struct diff_side *s = &d->side[k];
        fprintf(f, "%s %s\t", k ? "+++" : "---", s->path);
        if (p->t[k] < 0) fputs("(no thread like it)\n", f);
        else fprintf(f, "thread T%u: %s\n", p->number, diff_thread_text(s, &s->threads[p->t[k]], buf, sizeof buf));
    }
}

/* A pair's thread of side k in the table of threads: pid, tid and events, or dashes. */
static void print_thread_cells(FILE *f, const etl_diff *d, const struct diff_pair *p, int k)
{
    const struct diff_thread *t;
    char pid[16] = "-", tid[16] = "-";

    if (p->t[k] < 0) {
        fprintf(f, " %10s %10s %10s", "-", "-", "-");
        return;
    }
    t = &d->side[k].threads[p->t[k]];
    if (t->owner.has_pid) snprintf(pid, sizeof pid, "%" PRIu32, t->owner.pid);
    if (t->owner.has_tid) snprintf(tid, sizeof tid, "%" PRIu32, t->owner.tid);
    fprintf(f, " %10s %10s %10zu", pid, tid, t->n);
}

static void print_threads_text(FILE *f, const etl_diff *d)
{
    char name[24];

    fprintf(f, "%-8s %10s %10s %10s %10s %10s %10s %10s\n", "THREAD", "A PID", "A TID", "A EVENTS", "B PID", "B TID",
            "B EVENTS", "DIFFER");
    for (size_t i = 0; i < d->npairs; i++) {
        const struct diff_pair *p = &d->pairs[i];
        if (!p->differences) continue;
        snprintf(name, sizeof name, "T%u", p->number);
        fprintf(f, "%-8s", name);
        print_thread_cells(f, d, p, 0);
        print_thread_cells(f, d, p, 1);
        fprintf(f, " %10zu\n", p->differences);
    }
}

static void print_text(FILE *f, const etl_diff *d, const struct hunk *h, size_t nh, const struct shown *sh)
{
    const struct diff_side *A = &d->side[0], *B = &d->side[1];
    const struct diff_script *s = &d->script;
    const etl_diff_options *o = &d->o;
    int per_thread = !o->global_order, any = 0;

    if (o->max_diffs > 0 && !per_thread) {
        fprintf(f, "--- %s\n+++ %s\n", A->path, B->path);
        any = 1;
    }
    for (size_t i = 0; i < nh; i++) {
        const struct diff_pair *p = &d->pairs[h[i].pair];
        size_t a0 = SIZE_MAX, b0 = SIZE_MAX, na = 0, nb = 0;
        if (per_thread && (i == 0 || h[i - 1].pair != h[i].pair)) {
            print_thread_header(f, d, p);
            any = 1;
        }
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct diff_edit *e = &s->e[j];
            if (e->op != '+') { if (a0 == SIZE_MAX) a0 = e->a; na++; }
            if (e->op != '-') { if (b0 == SIZE_MAX) b0 = e->b; nb++; }
        }
        if (a0 == SIZE_MAX) a0 = s->e[h[i].from].a;
        if (b0 == SIZE_MAX) b0 = s->e[h[i].from].b;
        if (!o->unordered) { /* unordered differences have no place to show */
            fputs("@@ -", f);
            print_range(f, a0, na);
            fputs(" +", f);
            print_range(f, b0, nb);
            fputs(" @@\n", f);
        }
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct diff_edit *e = &s->e[j];
            fprintf(f, "%c%s\n", e->op == '=' ? ' ' : e->op, line_of(d, sh, p, e));
        }
    }
    if (s->approximate && o->max_diffs > 0)
        fprintf(f, "(more than %d differences: the events between the common head and tail are shown as replaced)\n",
                DIFF_MAX_EDIT_DISTANCE);
    if (o->max_diffs > 0 && s->differences > (size_t)o->max_diffs) {
        size_t more = s->differences - (size_t)o->max_diffs;
        fprintf(f, "(%zu more differing event%s not shown; -n raises the limit)\n", more, more == 1 ? "" : "s");
    }
    if (per_thread && s->differences) {
        fprintf(f, "%sthreads that differ:\n", any ? "\n" : "");
        print_threads_text(f, d);
        any = 1;
    }
    if (d->nrows) {
        fprintf(f, "%sevent counts that differ:\n", any ? "\n" : "");
        print_rows_text(f, d->rows, d->nrows);
    }
    fprintf(f, "A: %zu events, B: %zu events: %zu differ\n", A->n, B->n, s->differences);
}

/* The pair's thread of side k as a JSON object, or null. */
static void print_thread_json(FILE *f, const etl_diff *d, const struct diff_pair *p, int k)
{
    const struct diff_side *s = &d->side[k];
    const struct diff_thread *t;
    const char *name = NULL;

    if (p->t[k] < 0) {
        fputs("null", f);
        return;
    }
    t = &s->threads[p->t[k]];
    fputs("{\"pid\":", f);
    if (t->owner.has_pid) fprintf(f, "%" PRIu32, t->owner.pid); else fputs("null", f);
    fputs(",\"tid\":", f);
    if (t->owner.has_tid) fprintf(f, "%" PRIu32, t->owner.tid); else fputs("null", f);
    fputs(",\"process\":", f);
    if (s->names && t->owner.has_pid) name = etl_name_map_process(s->names, t->owner.pid, t->first_ts);
    if (name) etl_dump_json_string(f, name); else fputs("null", f);
    fprintf(f, ",\"events\":%zu}", t->n);
}

static void print_json(FILE *f, const etl_diff *d, const struct hunk *h, size_t nh, const struct shown *sh)
{
    const struct diff_side *A = &d->side[0], *B = &d->side[1];
    const struct diff_script *s = d->o.counts ? NULL : &d->script;
    size_t total = s ? s->differences : d->nrows;
    int first = 1, per_thread = s && !d->o.global_order;

    fputs("{\"a\":{\"path\":", f);
    etl_dump_json_string(f, A->path);
    fprintf(f, ",\"events\":%zu},\"b\":{\"path\":", A->n);
    etl_dump_json_string(f, B->path);
    fprintf(f, ",\"events\":%zu},\"equal\":%s,\"differences\":[", B->n, total == 0 ? "true" : "false");
    for (size_t i = 0; s && i < nh; i++) {
        const struct diff_pair *p = &d->pairs[h[i].pair];
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct diff_edit *e = &s->e[j];
            if (e->op == '=') continue;
            fputs(first ? "{" : ",{", f);
            if (per_thread) fprintf(f, "\"thread\":\"T%u\",", p->number);
            fprintf(f, "\"op\":\"%c\",\"a\":", e->op);
            if (e->op == '-') fprintf(f, "%zu", e->a + 1); else fputs("null", f);
            fputs(",\"b\":", f);
            if (e->op == '+') fprintf(f, "%zu", e->b + 1); else fputs("null", f);
            fputs(",\"line\":", f);
            etl_dump_json_string(f, line_of(d, sh, p, e));
            fputc('}', f);
            first = 0;
        }
    }
    fprintf(f, "],\"differences_total\":%zu,", total);
    if (per_thread) {
        fputs("\"threads\":[", f);
        for (size_t i = 0; i < d->npairs; i++) {
            const struct diff_pair *p = &d->pairs[i];
            fprintf(f, "%s{\"thread\":\"T%u\",\"a\":", i ? "," : "", p->number);
            print_thread_json(f, d, p, 0);
            fputs(",\"b\":", f);
            print_thread_json(f, d, p, 1);
            fprintf(f, ",\"differences\":%zu}", p->differences);
        }
        fputs("],", f);
    }
    print_rows_json(f, d->rows, d->nrows);
    fputs("}\n", f);
}

int etl_diff_write(etl_diff *d, FILE *f, etl_diff_format format)
{
    const struct diff_side *A = &d->side[0], *B = &d->side[1];
    const etl_diff_options *o = &d->o;
    struct hunk *h = NULL;
    struct shown sh;
    size_t nh;
    int rc = ETL_OK;

    memset(&sh, 0, sizeof sh);
    if (o->counts) {
        if (format == ETL_DIFF_JSON) print_json(f, d, NULL, 0, &sh);
        else {
            print_rows_text(f, d->rows, d->nrows);
            fprintf(f, "A: %zu events, B: %zu events: %zu counts differ%s\n", A->n, B->n, d->nrows,
                    o->tolerance > 0 ? " by more than the tolerance" : "");
        }
        return output_status(f);
    }
    nh = make_hunks(d, o->max_diffs, o->unordered ? 0 : o->context, &h);
    if (!h || collect_lines(d, h, nh, &sh) != 0) {
        diff_set_error(d, DIFF_OUT_OF_MEMORY_OR_REREAD);
        rc = ETL_FAILED;
    }
    else if (format == ETL_DIFF_JSON)
        print_json(f, d, h, nh, &sh);
    else
        print_text(f, d, h, nh, &sh);
    shown_free(&sh);
    free(h);
    return rc == ETL_OK ? output_status(f) : rc;
}
