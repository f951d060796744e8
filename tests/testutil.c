/* SPDX-License-Identifier: MIT */
/* Helpers shared by the unit tests: test data paths, whole-file reads, expected event tables. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "testutil.h"

const char *testdata_path(const char *rel)
{
    static char buf[4096];
    const char *base = getenv("ETL_TESTDATA");

    snprintf(buf, sizeof buf, "%s/%s", base && *base ? base : "testdata", rel);
    return buf;
}

uint8_t *test_read_file(const char *path, size_t *size)
{
    gzFile g = gzopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf;

    if (!g) return NULL;
    buf = malloc(cap);
    for (;;) {
        int k;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        k = gzread(g, buf + n, (unsigned)(cap - n));
        if (k < 0) {
            free(buf);
            gzclose(g);
            return NULL;
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    gzclose(g);
    *size = n;
    return buf;
}

/* The next tab-separated column of *p (NULL after the last). */
static char *next_col(char **p)
{
    char *s = *p, *t;

    if (!s) return NULL;
    t = strchr(s, '\t');
    if (t) {
        *t = '\0';
        *p = t + 1;
    } else {
        *p = NULL;
    }
    return s;
}

static int64_t col(char **p)
{
    char *s = next_col(p);
    if (!s || !*s) return -1;
    return strtoll(s, NULL, 10);
}

static void col_text(char **p, char *out, size_t size)
{
    char *s = next_col(p);
    snprintf(out, size, "%s", s ? s : "");
}

long test_read_expected(const char *path, struct expected_event **out)
{
    size_t size;
    uint8_t *text = test_read_file(path, &size);
    long n = 0, cap = 1024;
    char *line, *save = NULL;
    struct expected_event *rows;

    if (!text) return -1;
    text = realloc(text, size + 1);
    text[size] = 0;
    rows = malloc((size_t)cap * sizeof *rows);
    line = strtok_r((char *)text, "\n", &save); /* header */
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        char *p = line;
        struct expected_event *e;
        if (n == cap) {
            cap *= 2;
            rows = realloc(rows, (size_t)cap * sizeof *rows);
        }
        e = &rows[n++];
        e->buf = col(&p);
        e->ts = col(&p);
        e->cpu = col(&p);
        col_text(&p, e->kind, sizeof e->kind);
        col_text(&p, e->provider, sizeof e->provider);
        e->id = col(&p);
        e->version = col(&p);
        e->opcode = col(&p);
        e->level = col(&p);
        e->pid = col(&p);
        e->tid = col(&p);
        e->payload_len = col(&p);
    }
    free(text);
    *out = rows;
    return n;
}

void test_event_row(const etl_event *ev, struct expected_event *row)
{
    memset(row, 0, sizeof *row);
    row->buf = ev->buffer_index;
    row->ts = ev->timestamp;
    row->cpu = ev->cpu;
    snprintf(row->kind, sizeof row->kind, "%s", etl_event_kind_name(ev->kind));
    if (ev->has & ETL_HAS_PROVIDER) etl_guid_format(&ev->provider, row->provider);
    row->id = (ev->has & ETL_HAS_ID) ? ev->id : -1;
    row->version = ev->version;
    row->opcode = ev->opcode;
    row->level = (ev->has & ETL_HAS_LEVEL) ? ev->level : -1;
    row->pid = (ev->has & ETL_HAS_PID_TID) ? (int64_t)ev->pid : -1;
    row->tid = (ev->has & ETL_HAS_PID_TID) ? (int64_t)ev->tid : -1;
    row->payload_len = ev->payload_len;
}

void test_row_format(const struct expected_event *r, char *out, size_t size)
{
    snprintf(out, size, "buf=%lld ts=%lld cpu=%lld %s %s id=%lld v=%lld op=%lld level=%lld pid=%lld tid=%lld len=%lld",
             (long long)r->buf, (long long)r->ts, (long long)r->cpu, r->kind, r->provider, (long long)r->id,
             (long long)r->version, (long long)r->opcode, (long long)r->level, (long long)r->pid,
             (long long)r->tid, (long long)r->payload_len);
}

int test_row_cmp(const void *a, const void *b)
{
    const struct expected_event *x = a, *y = b;
    int c;
#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
    CMP(ts); CMP(cpu);
    if ((c = strcmp(x->kind, y->kind)) != 0) return c;
    if ((c = strcmp(x->provider, y->provider)) != 0) return c;
    CMP(id); CMP(version); CMP(opcode); CMP(level); CMP(pid); CMP(tid); CMP(payload_len);
#undef CMP
    return 0;
}

long test_count_events(etl_reader *r, unsigned *warns)
{
    etl_event ev;
    long n = 0;
    int rc;

    *warns = 0;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (rc == ETL_WARN) (*warns)++;
        n++;
    }
    return rc == ETL_EOF ? n : -1;
}

static ssize_t counting_read_at(void *ctx, void *buf, size_t n, uint64_t offset)
{
    struct test_counting_source *c = ctx;

    if (offset >= c->size) return 0;
    if (n > c->size - offset) n = (size_t)(c->size - offset);
    memcpy(buf, c->data + offset, n);
    c->bytes += n;
    c->calls++;
    if (n > c->largest) c->largest = n;
    return (ssize_t)n;
}

static int64_t counting_size(void *ctx) { return (int64_t)((struct test_counting_source *)ctx)->size; }
static void counting_close(void *ctx) { ((struct test_counting_source *)ctx)->closed = 1; }

void test_counting_source(struct test_counting_source *c, etl_reader_source *src)
{
    c->bytes = c->calls = 0;
    c->largest = 0;
    c->closed = 0;
    src->ctx = c;
    src->read_at = counting_read_at;
    src->size = counting_size;
    src->close = counting_close;
}

static char test_dir[256];

const char *test_dir_create(void)
{
    const char *t = getenv("TMPDIR");

    snprintf(test_dir, sizeof test_dir, "%s/libetl-test-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(test_dir);
}

const char *test_dir_path(const char *name)
{
    static char p[4][512];
    static int k;

    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", test_dir, name);
    return p[k];
}

int test_dir_remove(void)
{
    char cmd[300];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir);
    return system(cmd);
}

/* ---- a strict JSON syntax check ---- */

struct json_check {
    const unsigned char *p, *end, *start;
    char *err;
    size_t err_size;
    int depth;
};

static int json_fail(struct json_check *j, const char *what)
{
    snprintf(j->err, j->err_size, "%s at byte %zu", what, (size_t)(j->p - j->start));
    return -1;
}

static void json_space(struct json_check *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int json_literal(struct json_check *j, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return json_fail(j, "unexpected character");
    j->p += n;
    return 0;
}

static int json_string(struct json_check *j)
{
    j->p++; /* the quote */
    while (j->p < j->end) {
        unsigned c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c < 0x20) return json_fail(j, "control character in a string");
        if (c == '\\') {
            if (j->end - j->p < 2) return json_fail(j, "escape at the end");
            if (j->p[1] == 'u') {
                if (j->end - j->p < 6) return json_fail(j, "short \\u escape");
                for (int i = 2; i < 6; i++)
                    if (!isxdigit(j->p[i])) return json_fail(j, "bad \\u escape");
                j->p += 6;
            } else if (strchr("\"\\/bfnrt", j->p[1]) && j->p[1]) {
                j->p += 2;
            } else {
                return json_fail(j, "bad escape");
            }
            continue;
        }
        if (c < 0x80) {
            j->p++;
            continue;
        }
        {   /* UTF-8: lead byte, continuation bytes, no overlong forms or surrogates */
            int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
            uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
            if (!n || j->end - j->p < n) return json_fail(j, "invalid UTF-8");
            for (int i = 1; i < n; i++) {
                if ((j->p[i] & 0xC0) != 0x80) return json_fail(j, "invalid UTF-8");
                cp = cp << 6 | (j->p[i] & 0x3Fu);
            }
            if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
                return json_fail(j, "invalid UTF-8");
            j->p += n;
        }
    }
    return json_fail(j, "unterminated string");
}

static int json_number(struct json_check *j)
{
    if (*j->p == '-') j->p++;
    if (j->p >= j->end || !isdigit(*j->p)) return json_fail(j, "bad number");
    if (*j->p == '0') j->p++;
    else
        while (j->p < j->end && isdigit(*j->p)) j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || !isdigit(*j->p)) return json_fail(j, "bad fraction");
        while (j->p < j->end && isdigit(*j->p)) j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
        if (j->p >= j->end || !isdigit(*j->p)) return json_fail(j, "bad exponent");
        while (j->p < j->end && isdigit(*j->p)) j->p++;
    }
    return 0;
}

static int json_value(struct json_check *j)
{
    json_space(j);
    if (j->p >= j->end) return json_fail(j, "value expected");
    if (++j->depth > 200) return json_fail(j, "nested too deep");
    switch (*j->p) {
    case '{': case '[': {
        unsigned char close = *j->p == '{' ? '}' : ']';
        int object = close == '}';
        j->p++;
        json_space(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            break;
        }
        for (;;) {
            if (object) {
                json_space(j);
                if (j->p >= j->end || *j->p != '"') return json_fail(j, "member name expected");
                if (json_string(j) < 0) return -1;
                json_space(j);
                if (j->p >= j->end || *j->p != ':') return json_fail(j, "':' expected");
                j->p++;
            }
            if (json_value(j) < 0) return -1;
            json_space(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == close) {
                j->p++;
                break;
            }
            return json_fail(j, object ? "',' or '}' expected" : "',' or ']' expected");
        }
        break;
    }
    case '"':
        if (json_string(j) < 0) return -1;
        break;
    case 't':
        if (json_literal(j, "true") < 0) return -1;
        break;
    case 'f':
        if (json_literal(j, "false") < 0) return -1;
        break;
    case 'n':
        if (json_literal(j, "null") < 0) return -1;
        break;
    default:
        if (json_number(j) < 0) return -1;
    }
    j->depth--;
    return 0;
}

int test_json_check(const char *text, size_t n, char *err, size_t err_size)
{
    struct json_check j = { (const unsigned char *)text, (const unsigned char *)text + n, (const unsigned char *)text,
                            err, err_size, 0 };

    if (err_size) err[0] = '\0';
    if (json_value(&j) < 0) return -1;
    json_space(&j);
    if (j.p != j.end) return json_fail(&j, "text after the value");
    return 0;
}

char *test_read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;

    if (!f) return NULL;
    for (;;) {
        if (cap - n < 65536) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 65536 + 1);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    buf[n] = '\0';
    if (size) *size = n;
    return buf;
}
