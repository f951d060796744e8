/* SPDX-License-Identifier: MIT */
/* etldiff: compare two ETL files event by event after normalization (doc/etldiff.1). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "dump.h"
#include "normalize.h"

/* Exit codes, as diff's (doc/etldiff.1). */
#define EXIT_SAME    0
#define EXIT_DIFFER  1
#define EXIT_TROUBLE 2

/* Beyond this many differences between the common head and tail, the middle is shown as
   replaced as a whole: the edit-distance search keeps (D + 1)^2 positions. */
#define MAX_EDIT_DISTANCE 3000

static const char usage_text[] =
    "Usage: etldiff [OPTION]... A.etl B.etl\n"
    "Compare two Event Trace Log files (.etl, .etl.gz) event by event, in time order,\n"
    "after normalization: timestamps and processors ignored, process and thread ids\n"
    "renumbered in first-seen order, the sessions' header events left out.\n"
    "\n"
    "  -i, --ignore=FIELDS      ignore these fields too: ts, pid, tid, cpu, payload\n"
    "                           (comma-separated)\n"
    "  -c, --compare=FIELDS     compare these after all: ts (time since the first\n"
    "                           compared event), cpu; pid, tid as raw values\n"
    "      --ignore-provider=P  leave out provider P's events (a GUID or a name such as\n"
    "                           Process); repeatable\n"
    "      --ignore-event=P:ID  leave out event ID of provider P (the event id of\n"
    "                           manifest events, the opcode of others); repeatable\n"
    "  -p, --provider=P         compare only provider P's events; repeatable\n"
    "  -t, --time-range=A,B     only the events from A to B seconds after each trace's\n"
    "                           first compared event (either end may be left out)\n"
    "  -u, --unordered          compare as multisets: order does not matter\n"
    "      --counts             compare only the number of events per provider, id\n"
    "                           and opcode\n"
    "      --tolerance=T        with --counts: the difference allowed per row, absolute\n"
    "                           (10) or relative to A's count (5%); default 0\n"
    "      --all-events         keep the sessions' header events (EventTrace group)\n"
    "  -n, --max-diffs=N        show at most N differing events (default 20; 0: only\n"
    "                           the summary)\n"
    "  -U, --context=N          events of context around each difference (default 3)\n"
    "  -f, --format=FMT         text (default) or json\n"
    "  -q, --quiet              print nothing; the exit status tells\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the versions of etldiff, libetl and zlib and exit\n"
    "\n"
    "Exit status: 0 the traces match; 1 they differ; 2 trouble: bad usage, an input\n"
    "that cannot be read, or damage in an input (stderr names the file and offset;\n"
    "what is readable is still compared and printed).\n";

struct options {
    norm_options norm;
    int unordered, counts, quiet, json;
    long max_diffs, context;
    int tolerance_percent;      /* 1: tolerance is a percentage of A's count */
    double tolerance;
};

/* ------------------------------------------------------------------ reading one trace */

/* A row of the count table: one (provider, kind, id, opcode). */
struct count_row {
    etl_guid provider;
    int has_provider;
    int kind;
    int32_t id;                 /* -1: the header has no id */
    uint8_t opcode;
    uint64_t n[2];              /* in A, in B */
    int used;
};

struct counts {
    struct count_row *rows;
    unsigned cap, used;
};

struct side {
    const char *path;
    etl_reader *r;
    normalizer nz;
    uint64_t *hash;             /* of each compared event's line */
    size_t n, cap;
    int damaged;
    int quiet;
};

static void on_damage(void *arg, int64_t offset, const char *message)
{
    struct side *s = arg;

    (void)offset;
    s->damaged = 1;
    /* The message names the file and the offset; damage makes the exit status 2. */
    if (!s->quiet) fprintf(stderr, "etldiff: %s\n", message);
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
static int count_event(struct counts *c, const etl_event *ev, int side)
{
    int32_t id = (ev->has & ETL_HAS_ID) ? ev->id : -1;
    int hp = (ev->has & ETL_HAS_PROVIDER) != 0;
    uint32_t i, mask;

    if (2 * (c->used + 1) > c->cap) {
        unsigned cap = c->cap ? 2 * c->cap : 256;
        struct count_row *t = calloc(cap, sizeof *t);
        if (!t) return -1;
        for (unsigned k = 0; k < c->cap; k++) {
            uint32_t j;
            etl_event key;
            if (!c->rows[k].used) continue;
            memset(&key, 0, sizeof key);
            key.kind = c->rows[k].kind;
            key.opcode = c->rows[k].opcode;
            key.provider = c->rows[k].provider;
            key.has = c->rows[k].has_provider ? ETL_HAS_PROVIDER : 0;
            for (j = row_hash(&key, c->rows[k].id) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1)) {}
            t[j] = c->rows[k];
        }
        free(c->rows);
        c->rows = t;
        c->cap = cap;
    }
    mask = c->cap - 1;
    for (i = row_hash(ev, id) & mask; c->rows[i].used; i = (i + 1) & mask) {
        struct count_row *r = &c->rows[i];
        if (r->kind == ev->kind && r->id == id && r->opcode == ev->opcode && r->has_provider == hp &&
            (!hp || etl_guid_equal(&r->provider, &ev->provider))) {
            r->n[side]++;
            return 0;
        }
    }
    c->rows[i].used = 1;
    c->rows[i].kind = ev->kind;
    c->rows[i].id = id;
    c->rows[i].opcode = ev->opcode;
    c->rows[i].has_provider = hp;
    if (hp) c->rows[i].provider = ev->provider;
    c->rows[i].n[side] = 1;
    c->used++;
    return 0;
}

/* Opens a trace; -1 (message printed) when it cannot be read. */
static int side_open(struct side *s, const char *path, const struct options *o)
{
    etl_open_options oo;

    memset(s, 0, sizeof *s);
    s->path = path;
    s->quiet = o->quiet;
    memset(&oo, 0, sizeof oo);
    oo.on_damage = on_damage;
    oo.on_damage_arg = s;
    if (etl_reader_open_path(&s->r, path, &oo) == ETL_FATAL) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", s->r ? etl_reader_error(s->r) : "out of memory");
        etl_reader_close(s->r);
        s->r = NULL;
        return -1;
    }
    normalizer_init(&s->nz, &o->norm);
    return 0;
}

static void side_close(struct side *s)
{
    etl_reader_close(s->r);
    normalizer_free(&s->nz);
    free(s->hash);
}

/* First pass: every compared event's hash, and the counts. -1 on error (message printed). */
static int side_read(struct side *s, int column, struct counts *c, const struct options *o)
{
    etl_event ev;
    int rc;

    while ((rc = etl_reader_next(s->r, &ev)) == ETL_OK || rc == ETL_WARN) {
        int k = norm_event(&s->nz, &ev, etl_reader_time_ns(s->r, ev.timestamp));
        if (k < 0) goto nomem;
        if (!k) continue;
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 4096;
            uint64_t *p = realloc(s->hash, cap * sizeof *p);
            if (!p) goto nomem;
            s->hash = p;
            s->cap = cap;
        }
        s->hash[s->n++] = line_hash(s->nz.line, s->nz.len);
        if (count_event(c, &ev, column) != 0) goto nomem;
    }
    if (rc == ETL_FATAL) {
        if (!o->quiet) fprintf(stderr, "etldiff: %s\n", etl_reader_error(s->r));
        return -1;
    }
    return 0;
nomem:
    if (!o->quiet) fprintf(stderr, "etldiff: out of memory\n");
    return -1;
}

/* The lines of the compared events whose numbers are in want[0..n) (sorted, 0-based), read
   again; out[i] is malloc'ed. -1 on error. */
static int side_lines(struct side *s, const size_t *want, size_t n, char **out)
{
    etl_event ev;
    size_t index = 0, w = 0;
    int rc;

    if (!n) return 0;
    if (etl_reader_rewind(s->r) != ETL_OK) return -1;
    normalizer_reset(&s->nz);
    while (w < n && ((rc = etl_reader_next(s->r, &ev)) == ETL_OK || rc == ETL_WARN)) {
        int k = norm_event(&s->nz, &ev, etl_reader_time_ns(s->r, ev.timestamp));
        if (k < 0) return -1;
        if (!k) continue;
        while (w < n && want[w] == index) {
            out[w] = strdup(s->nz.line);
            if (!out[w++]) return -1;
        }
        index++;
    }
    return w == n ? 0 : -1;
}

/* ------------------------------------------------------------------ the edit script */

/* One step: '=' both, '-' only in A, '+' only in B; a and b are the events' 0-based numbers. */
struct edit {
    char op;
    size_t a, b;
};

struct script {
    struct edit *e;
    size_t n, cap;
    size_t differences;         /* '-' and '+' steps */
    int approximate;            /* the middle was too different: shown as replaced */
};

static int script_add(struct script *s, char op, size_t a, size_t b)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct edit *p = realloc(s->e, cap * sizeof *p);
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
 * MAX_EDIT_DISTANCE (nothing appended), -1 without memory.
 */
static int myers(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, size_t a0, size_t b0, struct script *s)
{
    long n = (long)na, m = (long)nb, dmax = n + m < MAX_EDIT_DISTANCE ? n + m : MAX_EDIT_DISTANCE;
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
        struct edit *rev = malloc(cap * sizeof *rev);
        long x = n, y = m;
        if (!rev) goto nomem;
        for (d = found; d > 0; d--) {
            const long *prev = hist[d - 1] + (d - 1); /* prev[k]: x on diagonal k after step d - 1 */
            long kk = x - y;
            long pk = (kk == -d || (kk != d && prev[kk - 1] < prev[kk + 1])) ? kk + 1 : kk - 1;
            long px = prev[pk], py = px - pk;
            while (x > px && y > py) { /* the diagonal run that followed step d */
                x--, y--;
                rev[k++] = (struct edit){ '=', (size_t)x, (size_t)y };
            }
            if (pk == kk + 1) { /* step d went down: b[py] inserted */
                rev[k++] = (struct edit){ '+', (size_t)x, (size_t)py };
                y = py;
            }
            else {              /* it went right: a[px] deleted */
                rev[k++] = (struct edit){ '-', (size_t)px, (size_t)y };
                x = px;
            }
        }
        while (x > 0 && y > 0) {
            x--, y--;
            rev[k++] = (struct edit){ '=', (size_t)x, (size_t)y };
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

/* The ordered comparison: common head, the middle's shortest edit script, common tail. */
static int ordered_script(const struct side *A, const struct side *B, struct script *s)
{
    size_t head = 0, tail = 0, na = A->n, nb = B->n;
    int rc;

    while (head < na && head < nb && A->hash[head] == B->hash[head]) head++;
    while (tail < na - head && tail < nb - head && A->hash[na - 1 - tail] == B->hash[nb - 1 - tail]) tail++;
    for (size_t i = 0; i < head; i++)
        if (script_add(s, '=', i, i) != 0) return -1;
    rc = myers(A->hash + head, na - head - tail, B->hash + head, nb - head - tail, head, head, s);
    if (rc < 0) return -1;
    if (rc == 1) {
        s->approximate = 1;
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

static int unordered_script(const struct side *A, const struct side *B, struct script *s)
{
    const struct side *sides[2] = { A, B };
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

/* ------------------------------------------------------------------ output */

static const char *provider_text(const struct count_row *r, char *buf)
{
    const char *name;

    if (!r->has_provider) return "-";
    name = etl_guid_name(&r->provider);
    return name ? name : etl_guid_format(&r->provider, buf);
}

static int row_cmp(const void *x, const void *y)
{
    const struct count_row *a = x, *b = y;
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
static int row_differs(const struct count_row *r, const struct options *o)
{
    double diff = r->n[0] > r->n[1] ? (double)(r->n[0] - r->n[1]) : (double)(r->n[1] - r->n[0]);
    double allowed = o->tolerance_percent ? o->tolerance * (double)r->n[0] / 100.0 : o->tolerance;

    return diff > allowed;
}

/* The rows that differ, sorted; *n their number (the caller frees the result). */
static struct count_row *differing_rows(const struct counts *c, const struct options *o, size_t *n)
{
    struct count_row *out = malloc((c->used + 1) * sizeof *out);

    *n = 0;
    if (!out) return NULL;
    for (unsigned i = 0; i < c->cap; i++)
        if (c->rows[i].used && row_differs(&c->rows[i], o)) out[(*n)++] = c->rows[i];
    qsort(out, *n, sizeof *out, row_cmp);
    return out;
}

static void print_rows_text(const struct count_row *rows, size_t n)
{
    char g[ETL_GUID_STRING_SIZE], id[16];

    printf("%-40s %-8s %6s %6s %10s %10s %10s\n", "PROVIDER", "KIND", "ID", "OPCODE", "A", "B", "DIFF");
    for (size_t i = 0; i < n; i++) {
        const struct count_row *r = &rows[i];
        if (r->id >= 0) snprintf(id, sizeof id, "%d", (int)r->id);
        else snprintf(id, sizeof id, "-");
        printf("%-40s %-8s %6s %6u %10" PRIu64 " %10" PRIu64 " %+10" PRId64 "\n", provider_text(r, g),
               etl_event_kind_name(r->kind), id, r->opcode, r->n[0], r->n[1], (int64_t)(r->n[1] - r->n[0]));
    }
}

static void print_rows_json(const struct count_row *rows, size_t n)
{
    char g[ETL_GUID_STRING_SIZE];

    fputs("\"counts\":[", stdout);
    for (size_t i = 0; i < n; i++) {
        const struct count_row *r = &rows[i];
        printf("%s{\"provider\":", i ? "," : "");
        dump_json_string(stdout, provider_text(r, g));
        printf(",\"kind\":\"%s\",\"id\":", etl_event_kind_name(r->kind));
        if (r->id >= 0) printf("%d", (int)r->id);
        else fputs("null", stdout);
        printf(",\"opcode\":%u,\"a\":%" PRIu64 ",\"b\":%" PRIu64 "}", r->opcode, r->n[0], r->n[1]);
    }
    fputc(']', stdout);
}

/* A hunk: script steps [from, to). */
struct hunk {
    size_t from, to;
};

/* The steps to show: the first max_diffs differing ones, each with up to context steps
   around it (not reaching the differing steps not shown); hunks that touch are joined.
   Returns the number of hunks in *out (malloc'ed). */
static size_t make_hunks(const struct script *s, long max_diffs, long context, struct hunk **out)
{
    size_t nh = 0, cap = 16, end = s->n;
    long count = 0;
    struct hunk *h = malloc(cap * sizeof *h);

    *out = h;
    if (!h) return 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].op != '=' && count++ == max_diffs) {
            end = i;
            break;
        }
    for (size_t i = 0; i < end; i++) {
        size_t from, to;
        if (s->e[i].op == '=') continue;
        from = i > (size_t)context ? i - (size_t)context : 0;
        to = i + (size_t)context + 1 < end ? i + (size_t)context + 1 : end;
        if (nh && from <= h[nh - 1].to) {
            if (to > h[nh - 1].to) h[nh - 1].to = to;
            continue;
        }
        if (nh == cap) {
            struct hunk *p = realloc(h, 2 * cap * sizeof *p);
            if (!p) break;
            h = p;
            cap *= 2;
            *out = h;
        }
        h[nh].from = from;
        h[nh].to = to;
        nh++;
    }
    return nh;
}

/* The lines of the steps in the hunks, read again from both traces. */
struct shown {
    size_t *want[2];
    char **line[2];
    size_t n[2];
};

static int shown_index(const size_t *want, size_t n, size_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (want[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return (int)lo;
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static int collect_lines(struct side *A, struct side *B, const struct script *s, const struct hunk *h, size_t nh,
                         struct shown *sh)
{
    struct side *sides[2] = { A, B };
    size_t total = 0;

    memset(sh, 0, sizeof *sh);
    for (size_t i = 0; i < nh; i++) total += h[i].to - h[i].from;
    for (int k = 0; k < 2; k++) {
        sh->want[k] = malloc((total + 1) * sizeof **sh->want);
        if (!sh->want[k]) return -1;
    }
    for (size_t i = 0; i < nh; i++)
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct edit *e = &s->e[j];
            if (e->op != '+') sh->want[0][sh->n[0]++] = e->a;
            if (e->op == '+') sh->want[1][sh->n[1]++] = e->b;
        }
    for (int k = 0; k < 2; k++) {
        size_t u = 0;
        qsort(sh->want[k], sh->n[k], sizeof **sh->want, size_cmp);
        for (size_t i = 0; i < sh->n[k]; i++)
            if (!u || sh->want[k][u - 1] != sh->want[k][i]) sh->want[k][u++] = sh->want[k][i];
        sh->n[k] = u;
        sh->line[k] = calloc(u + 1, sizeof **sh->line);
        if (!sh->line[k] || side_lines(sides[k], sh->want[k], u, sh->line[k]) != 0) return -1;
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

static const char *line_of(const struct shown *sh, const struct edit *e)
{
    int k = e->op == '+';
    size_t v = k ? e->b : e->a;
    int i = shown_index(sh->want[k], sh->n[k], v);
    return sh->line[k][i] ? sh->line[k][i] : "";
}

/* diff -u's range: "start,len", "start" when len is 1, the line before when len is 0. */
static void print_range(size_t start, size_t len)
{
    if (len == 1) printf("%zu", start + 1);
    else printf("%zu,%zu", len ? start + 1 : start, len);
}

static void print_text(const struct side *A, const struct side *B, const struct script *s, const struct hunk *h,
                       size_t nh, const struct shown *sh, const struct count_row *rows, size_t nrows,
                       const struct options *o)
{
    if (o->max_diffs > 0) printf("--- %s\n+++ %s\n", A->path, B->path);
    for (size_t i = 0; i < nh; i++) {
        size_t a0 = SIZE_MAX, b0 = SIZE_MAX, na = 0, nb = 0;
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct edit *e = &s->e[j];
            if (e->op != '+') { if (a0 == SIZE_MAX) a0 = e->a; na++; }
            if (e->op != '-') { if (b0 == SIZE_MAX) b0 = e->b; nb++; }
        }
        if (a0 == SIZE_MAX) a0 = s->e[h[i].from].a;
        if (b0 == SIZE_MAX) b0 = s->e[h[i].from].b;
        if (!o->unordered) { /* unordered differences have no place to show */
            fputs("@@ -", stdout);
            print_range(a0, na);
            fputs(" +", stdout);
            print_range(b0, nb);
            fputs(" @@\n", stdout);
        }
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct edit *e = &s->e[j];
            printf("%c%s\n", e->op == '=' ? ' ' : e->op, line_of(sh, e));
        }
    }
    if (s->approximate && o->max_diffs > 0)
        printf("(more than %d differences: the events between the common head and tail are shown as replaced)\n",
               MAX_EDIT_DISTANCE);
    if (o->max_diffs > 0 && s->differences > (size_t)o->max_diffs) {
        size_t more = s->differences - (size_t)o->max_diffs;
        printf("(%zu more differing event%s not shown; -n raises the limit)\n", more, more == 1 ? "" : "s");
    }
    if (nrows) {
        printf("%sevent counts that differ:\n", o->max_diffs > 0 ? "\n" : "");
        print_rows_text(rows, nrows);
    }
    printf("A: %zu events, B: %zu events: %zu differ\n", A->n, B->n, s->differences);
}

static void print_json(const struct side *A, const struct side *B, const struct script *s, const struct hunk *h,
                       size_t nh, const struct shown *sh, const struct count_row *rows, size_t nrows, int equal)
{
    int first = 1;

    fputs("{\"a\":{\"path\":", stdout);
    dump_json_string(stdout, A->path);
    printf(",\"events\":%zu},\"b\":{\"path\":", A->n);
    dump_json_string(stdout, B->path);
    printf(",\"events\":%zu},\"equal\":%s,\"differences\":[", B->n, equal ? "true" : "false");
    for (size_t i = 0; s && i < nh; i++)
        for (size_t j = h[i].from; j < h[i].to; j++) {
            const struct edit *e = &s->e[j];
            if (e->op == '=') continue;
            printf("%s{\"op\":\"%c\",\"a\":", first ? "" : ",", e->op);
            if (e->op == '-') printf("%zu", e->a + 1); else fputs("null", stdout);
            fputs(",\"b\":", stdout);
            if (e->op == '+') printf("%zu", e->b + 1); else fputs("null", stdout);
            fputs(",\"line\":", stdout);
            dump_json_string(stdout, line_of(sh, e));
            fputc('}', stdout);
            first = 0;
        }
    printf("],\"differences_total\":%zu,", s ? s->differences : nrows);
    print_rows_json(rows, nrows);
    fputs("}\n", stdout);
}

/* ------------------------------------------------------------------ options */

static int add_guid(etl_guid **list, unsigned *n, const char *text, const char *option)
{
    etl_guid g, *p;

    if (norm_provider_parse(text, &g) != 0) {
        fprintf(stderr, "etldiff: %s: '%s' is not a GUID or a provider name libetl knows\n", option, text);
        return -1;
    }
    p = realloc(*list, (*n + 1) * sizeof *p);
    if (!p) return -1;
    p[(*n)++] = g;
    *list = p;
    return 0;
}

static int add_event(norm_options *o, const char *text)
{
    const char *colon = strrchr(text, ':');
    struct norm_event_key *p;
    char *prov, *end;
    unsigned long id;
    etl_guid g;

    if (!colon) goto bad;
    errno = 0;
    id = strtoul(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || id > 0xFFFF) goto bad;
    prov = strndup(text, (size_t)(colon - text));
    if (!prov) return -1;
    if (norm_provider_parse(prov, &g) != 0) {
        free(prov);
        goto bad;
    }
    free(prov);
    p = realloc(o->skip_events, (o->nskip_events + 1) * sizeof *p);
    if (!p) return -1;
    p[o->nskip_events].provider = g;
    p[o->nskip_events].id = (uint16_t)id;
    o->nskip_events++;
    o->skip_events = p;
    return 0;
bad:
    fprintf(stderr, "etldiff: --ignore-event needs PROVIDER:ID (a GUID or known name, and a number), not '%s'\n", text);
    return -1;
}

static int parse_range(norm_options *o, const char *text)
{
    const char *comma = strchr(text, ',');
    char *a;
    int ok;

    if (!comma || strchr(comma + 1, ',')) goto bad;
    a = strndup(text, (size_t)(comma - text));
    if (!a) return -1;
    ok = (!*a || tool_parse_seconds(a, &o->from_ns) == 0) && (!comma[1] || tool_parse_seconds(comma + 1, &o->to_ns) == 0);
    free(a);
    if (!ok || o->from_ns > o->to_ns) goto bad;
    return 0;
bad:
    fprintf(stderr, "etldiff: --time-range needs A,B: seconds after each trace's first event (1.5,3), not '%s'\n", text);
    return -1;
}

static int parse_count(const char *text, long *out, const char *option)
{
    char *end;

    errno = 0;
    *out = strtol(text, &end, 10);
    if (errno || *end || end == text || *out < 0) {
        fprintf(stderr, "etldiff: %s needs a number >= 0, not '%s'\n", option, text);
        return -1;
    }
    return 0;
}

static int parse_tolerance(struct options *o, const char *text)
{
    char *end;

    errno = 0;
    o->tolerance = strtod(text, &end);
    o->tolerance_percent = *end == '%';
    if (o->tolerance_percent) end++;
    if (errno || *end || end == text || o->tolerance < 0) {
        fprintf(stderr, "etldiff: --tolerance needs a number (10) or a percentage (5%%), not '%s'\n", text);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ main */

static int compare(struct options *o, const char *path_a, const char *path_b)
{
    struct side A, B;
    struct counts counts = { NULL, 0, 0 };
    struct script s = { NULL, 0, 0, 0, 0 };
    struct hunk *h = NULL;
    struct shown sh;
    struct count_row *rows = NULL;
    size_t nh = 0, nrows = 0;
    int status = EXIT_TROUBLE, equal;

    memset(&sh, 0, sizeof sh);
    if (side_open(&A, path_a, o) != 0) return EXIT_TROUBLE;
    if (side_open(&B, path_b, o) != 0) {
        side_close(&A);
        return EXIT_TROUBLE;
    }
    if (side_read(&A, 0, &counts, o) != 0 || side_read(&B, 1, &counts, o) != 0) goto out;
    rows = differing_rows(&counts, o, &nrows);
    if (!rows) goto nomem;
    if (o->counts) {
        equal = nrows == 0;
        if (!o->quiet) {
            if (o->json) print_json(&A, &B, NULL, NULL, 0, &sh, rows, nrows, equal);
            else if (!equal) {
                print_rows_text(rows, nrows);
                printf("A: %zu events, B: %zu events: %zu counts differ%s\n", A.n, B.n, nrows,
                       o->tolerance > 0 ? " by more than the tolerance" : "");
            }
        }
    }
    else {
        if ((o->unordered ? unordered_script(&A, &B, &s) : ordered_script(&A, &B, &s)) != 0) goto nomem;
        equal = s.differences == 0;
        if (!o->quiet && (!equal || o->json)) {
            nh = make_hunks(&s, o->max_diffs, o->unordered ? 0 : o->context, &h);
            if (!h || collect_lines(&A, &B, &s, h, nh, &sh) != 0) goto nomem;
            if (o->json) print_json(&A, &B, &s, h, nh, &sh, rows, nrows, equal);
            else print_text(&A, &B, &s, h, nh, &sh, rows, nrows, o);
        }
    }
    status = A.damaged || B.damaged ? EXIT_TROUBLE : equal ? EXIT_SAME : EXIT_DIFFER;
    goto out;
nomem:
    if (!o->quiet) fprintf(stderr, "etldiff: out of memory, or a trace could not be read again\n");
    status = EXIT_TROUBLE;
out:
    shown_free(&sh);
    free(h);
    free(rows);
    free(s.e);
    free(counts.rows);
    side_close(&A);
    side_close(&B);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "etldiff: write error: %s\n", strerror(errno));
        status = EXIT_TROUBLE;
    }
    return status;
}

int main(int argc, char **argv)
{
    enum { OPT_IGNORE_PROVIDER = 256, OPT_IGNORE_EVENT, OPT_COUNTS, OPT_TOLERANCE, OPT_ALL_EVENTS };
    static const struct option longopts[] = {
        { "ignore", required_argument, NULL, 'i' },
        { "compare", required_argument, NULL, 'c' },
        { "ignore-provider", required_argument, NULL, OPT_IGNORE_PROVIDER },
        { "ignore-event", required_argument, NULL, OPT_IGNORE_EVENT },
        { "provider", required_argument, NULL, 'p' },
        { "time-range", required_argument, NULL, 't' },
        { "unordered", no_argument, NULL, 'u' },
        { "counts", no_argument, NULL, OPT_COUNTS },
        { "tolerance", required_argument, NULL, OPT_TOLERANCE },
        { "all-events", no_argument, NULL, OPT_ALL_EVENTS },
        { "max-diffs", required_argument, NULL, 'n' },
        { "context", required_argument, NULL, 'U' },
        { "format", required_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct options o;
    unsigned bits;
    const char *bad;
    int c, status;

    memset(&o, 0, sizeof o);
    norm_options_init(&o.norm);
    o.max_diffs = 20;
    o.context = 3;
    while ((c = getopt_long(argc, argv, "i:c:p:t:un:U:f:qhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'i':
        case 'c':
            if (norm_fields_parse(optarg, &bits, &bad) != 0) {
                fprintf(stderr, "etldiff: --%s: unknown field '%.*s' (ts, pid, tid, cpu, payload)\n",
                        c == 'i' ? "ignore" : "compare", (int)strcspn(bad, ","), bad);
                goto usage;
            }
            if (c == 'i') {
                o.norm.ignore |= bits;
                o.norm.raw &= ~bits;
            }
            else {
                o.norm.ignore &= ~bits;
                o.norm.raw |= bits & (NORM_PID | NORM_TID);
            }
            break;
        case OPT_IGNORE_PROVIDER:
            if (add_guid(&o.norm.skip, &o.norm.nskip, optarg, "--ignore-provider") != 0) goto usage;
            break;
        case 'p':
            if (add_guid(&o.norm.only, &o.norm.nonly, optarg, "--provider") != 0) goto usage;
            break;
        case OPT_IGNORE_EVENT:
            if (add_event(&o.norm, optarg) != 0) goto usage;
            break;
        case 't':
            if (parse_range(&o.norm, optarg) != 0) goto usage;
            break;
        case 'u': o.unordered = 1; break;
        case OPT_COUNTS: o.counts = 1; break;
        case OPT_TOLERANCE:
            if (parse_tolerance(&o, optarg) != 0) goto usage;
            break;
        case OPT_ALL_EVENTS: o.norm.all_events = 1; break;
        case 'n':
            if (parse_count(optarg, &o.max_diffs, "--max-diffs") != 0) goto usage;
            break;
        case 'U':
            if (parse_count(optarg, &o.context, "--context") != 0) goto usage;
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0) o.json = 1;
            else if (strcmp(optarg, "text") == 0) o.json = 0;
            else {
                fprintf(stderr, "etldiff: unknown format '%s' (text or json)\n", optarg);
                goto usage;
            }
            break;
        case 'q': o.quiet = 1; break;
        case 'h':
            fputs(usage_text, stdout);
            norm_options_free(&o.norm);
            return EXIT_SAME;
        case 'V':
            printf("etldiff %s (%s)\n", etl_version(), etl_version_details());
            norm_options_free(&o.norm);
            return EXIT_SAME;
        default: goto usage;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "etldiff: %s\n", argc - optind < 2 ? "two files to compare are needed" : "only two files can be compared");
        goto usage;
    }
    if (o.tolerance > 0 && !o.counts) {
        fputs("etldiff: --tolerance goes with --counts\n", stderr);
        goto usage;
    }
    status = compare(&o, argv[optind], argv[optind + 1]);
    norm_options_free(&o.norm);
    return status;
usage:
    fputs("Try 'etldiff --help'.\n", stderr);
    norm_options_free(&o.norm);
    return EXIT_TROUBLE;
}
