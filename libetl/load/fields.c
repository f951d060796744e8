/* SPDX-License-Identifier: MIT */
/* The SQLite loader's decoded fields: every event's fields as JSON and its name (event_names),
   what has no schema or does not fit it (lost), and a view per event name with a column per field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "reader/reader.h"

/* ------------------------------------------------------------------ the decoder */

static void decoder_warning(void *arg, const char *message)
{
    struct etl_sqlite_loader *l = arg;

    if (!l->decoder_quiet) etl_load_message(l, ETL_WARN, 0, NULL, -1, "warning: %s", message);
}

/* As the tools' decoders are opened (tools/cmdline.c): the defaults, each of which that does not
   load is a warning, then the manifests asked for, each of which must load. */
int etl_load_decoder_open(struct etl_sqlite_loader *l)
{
    etl_decoder_options o = { 0, decoder_warning, l };
    int rc = etl_decoder_open(&l->decoder, &o);

    if (rc == ETL_FATAL) {
        etl_load_message(l, ETL_FATAL, 0, NULL, -1, "out of memory");
        return ETL_FATAL;
    }
    if (rc == ETL_WARN) etl_load_message(l, ETL_WARN, 0, NULL, -1, "warning: %s", etl_decoder_error(l->decoder));
    for (unsigned i = 0; i < l->o.nmanifests; i++) {
        if (etl_decoder_add_manifest(l->decoder, l->o.manifests[i]) != ETL_OK) {
            etl_load_message(l, ETL_FATAL, 0, NULL, -1, "%s", etl_decoder_error(l->decoder));
            return ETL_FATAL;
        }
    }
    return ETL_OK;
}

/* ------------------------------------------------------------------ names */

static uint64_t text_hash(int64_t provider, const char *s)
{
    uint64_t h = 0xCBF29CE484222325ull ^ (uint64_t)provider * 0x9E3779B97F4A7C15ull;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 0x100000001B3ull;
    return h ? h : 1;
}

static int names_text_put(struct event_names *t, unsigned index)
{
    unsigned mask, i;

    if (2 * (t->n + 1) > t->text_cap) {
        unsigned cap = t->text_cap ? 2 * t->text_cap : 256;
        unsigned *b = calloc(cap, sizeof *b);
        if (!b) return -1;
        free(t->by_text);
        t->by_text = b;
        t->text_cap = cap;
        for (unsigned k = 0; k < t->n; k++)
            if (k != index && names_text_put(t, k) != 0) return -1;
    }
    mask = t->text_cap - 1;
    for (i = (unsigned)t->v[index].hash & mask; t->by_text[i]; i = (i + 1) & mask) {}
    t->by_text[i] = index + 1;
    return 0;
}

/* The index of (provider, name) in the names, or -1. */
static long names_find(const struct event_names *t, int64_t provider, const char *name, uint64_t h)
{
    unsigned mask = t->text_cap - 1;

    if (!t->text_cap) return -1;
    for (unsigned i = (unsigned)h & mask; t->by_text[i]; i = (i + 1) & mask) {
        const struct event_name *e = &t->v[t->by_text[i] - 1];
        if (e->hash == h && e->provider == provider && strcmp(e->name, name) == 0) return (long)(t->by_text[i] - 1);
    }
    return -1;
}

/* A new name in memory (not in the database): its index, or -1 without memory. */
static long names_add(struct event_names *t, int64_t id, int64_t provider, const char *name)
{
    struct event_name *e;

    if (t->n == t->cap) {
        unsigned cap = t->cap ? 2 * t->cap : 64;
        struct event_name *v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    e = &t->v[t->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name))) return -1;
    e->id = id;
    e->provider = provider;
    e->hash = text_hash(provider, name);
    t->n++;
    if (names_text_put(t, t->n - 1) != 0) return -1;
    if (id >= t->next_id) t->next_id = id + 1;
    return (long)(t->n - 1);
}

static int name_has_field(const struct event_name *e, const char *field)
{
    for (unsigned i = 0; i < e->nfields; i++)
        if (strcmp(e->fields[i], field) == 0) return 1;
    return 0;
}

static int name_add_field(struct event_name *e, const char *field, int hex)
{
    if (e->nfields == e->cap_fields) {
        unsigned cap = e->cap_fields ? 2 * e->cap_fields : 16;
        char **v = realloc(e->fields, cap * sizeof *v);
        uint8_t *h;
        if (v) e->fields = v;
        h = realloc(e->hex, cap);
        if (h) e->hex = h;
        if (!v || !h) return -1;
        e->cap_fields = cap;
    }
    if (!(e->fields[e->nfields] = strdup(field))) return -1;
    e->hex[e->nfields] = (uint8_t)hex;
    e->nfields++;
    return 0;
}

/* A schema field's event_name_fields.type: its in type's name, with "[]" for an array. */
static const char *field_type(const etl_schema_field *f, char *out, size_t size)
{
    snprintf(out, size, "%s%s", etl_in_type_name(f->in_type), f->count_kind != ETL_COUNT_ONE ? "[]" : "");
    return out;
}

/* Whether the JSON shows a field's value as "0x..." text (etl_decoded_format_json: a pointer, a
   HexInt type or out type, one value, no map). */
static int field_hex(const etl_schema_field *f)
{
    if (f->count_kind != ETL_COUNT_ONE || f->map) return 0;
    switch (f->in_type) {
    case ETL_IN_POINTER: case ETL_IN_HEXINT32: case ETL_IN_HEXINT64: return 1;
    case ETL_IN_INT8: case ETL_IN_UINT8: case ETL_IN_INT16: case ETL_IN_UINT16: case ETL_IN_INT32: case ETL_IN_UINT32:
    case ETL_IN_INT64: case ETL_IN_UINT64: case ETL_IN_SIZET:
        return f->out_type == ETL_OUT_HEXINT8 || f->out_type == ETL_OUT_HEXINT16 || f->out_type == ETL_OUT_HEXINT32 ||
               f->out_type == ETL_OUT_HEXINT64 || f->out_type == ETL_OUT_HRESULT || f->out_type == ETL_OUT_NTSTATUS ||
               f->out_type == ETL_OUT_CODE_POINTER;
    default:
        return 0;
    }
}

static void schema_keys_free(struct schema_keys *k)
{
    if (!k) return;
    for (unsigned j = 0; j < k->n; j++) free(k->key[j].text);
    free(k);
}

void etl_load_names_free(struct event_names *t)
{
    for (unsigned i = 0; i < t->n; i++) {
        for (unsigned k = 0; k < t->v[i].nfields; k++) free(t->v[i].fields[k]);
        free(t->v[i].fields);
        free(t->v[i].hex);
        free(t->v[i].name);
    }
    free(t->v);
    free(t->by_text);
    for (unsigned i = 0; i < t->schema_cap; i++) schema_keys_free(t->by_schema[i].keys);
    free(t->by_schema);
    memset(t, 0, sizeof *t);
}

int etl_load_names_read(struct etl_sqlite_loader *l)
{
    struct event_names *t = &l->names;
    sqlite3_stmt *s;
    int rc;

    if (sqlite3_prepare_v2(l->sink.db, "SELECT name_id, coalesce(provider, 0), name FROM event_names ORDER BY name_id",
                           -1, &s, NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "reading event_names");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 2);
        if (name && names_add(t, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), name) < 0) {
            sqlite3_finalize(s);
            return etl_sink_error(&l->sink, "out of memory");
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return etl_sink_error(&l->sink, "reading event_names");
    if (sqlite3_prepare_v2(l->sink.db, "SELECT coalesce(n.provider, 0), n.name, f.field, f.hex FROM event_name_fields f "
                                       "JOIN event_names n USING (name_id) ORDER BY f.name_id, f.idx",
                           -1, &s, NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "reading event_name_fields");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t provider = sqlite3_column_int64(s, 0);
        const char *name = (const char *)sqlite3_column_text(s, 1), *field = (const char *)sqlite3_column_text(s, 2);
        long i = name && field ? names_find(t, provider, name, text_hash(provider, name)) : -1;
        if (i >= 0 && name_add_field(&t->v[i], field, sqlite3_column_int(s, 3)) != 0) {
            sqlite3_finalize(s);
            return etl_sink_error(&l->sink, "out of memory");
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : etl_sink_error(&l->sink, "reading event_name_fields");
}

/* The name of events of schema ev from provider, its row (and the rows of fields it adds to the
   name's) written on first sight: the index in the names, or -1 on error. */
static long name_of_schema(struct etl_sqlite_loader *l, const etl_schema_event *ev, int64_t provider)
{
    struct event_names *t = &l->names;
    const char *text = ev->event_name;
    uint64_t h = text_hash(provider, text);
    long i = names_find(t, provider, text, h);
    struct event_name *e;
    struct rowval *r;

    if (i < 0) {
        if ((i = names_add(t, t->next_id ? t->next_id : 1, provider, text)) < 0)
            return etl_sink_error(&l->sink, "out of memory");
        r = row_begin(&l->sink, S_NAME);
        rv_i64(r, 1, t->v[i].id);
        rv_text(r, 2, text);
        if (provider) rv_i64(r, 3, provider); else rv_null(r, 3);
        rv_text(r, 4, ev->task_name);
        rv_text(r, 5, ev->opcode_name);
        rv_text(r, 6, etl_schema_source_name(ev->source));
        if (etl_sink_row_end(&l->sink, S_NAME) != 0) return -1;
    }
    e = &t->v[i];
    /* The schema's top-level fields that the name has not had yet: the view's columns to come. */
    for (uint32_t k = 0; k < ev->field_count; k += ev->fields[k].span ? ev->fields[k].span : 1) {
        const char *field = ev->fields[k].name ? ev->fields[k].name : "";
        char type[48];
        if (name_has_field(e, field)) continue;
        if (name_add_field(e, field, field_hex(&ev->fields[k])) != 0) return etl_sink_error(&l->sink, "out of memory");
        r = row_begin(&l->sink, S_NAME_FIELD);
        rv_i64(r, 1, e->id);
        rv_i64(r, 2, e->nfields - 1);
        rv_text(r, 3, field);
        rv_text(r, 4, field_type(&ev->fields[k], type, sizeof type));
        rv_i64(r, 5, e->hex[e->nfields - 1]);
        if (etl_sink_row_end(&l->sink, S_NAME_FIELD) != 0) return -1;
    }
    return i;
}

static uint32_t ptr_hash(const void *p, int64_t provider)
{
    uint64_t x = (uint64_t)(uintptr_t)p ^ (uint64_t)provider * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(x >> 32);
}

/* The JSON key of each top-level field of ev, as etl_decoded_format_json writes it: taken from
   its text for a one-field event, so that the escaping is the library's own. NULL without
   memory. */
static struct schema_keys *schema_keys_new(const etl_schema_event *ev)
{
    static const uint8_t zero = 0;
    struct schema_keys *k;
    unsigned n = 0;

    for (uint32_t i = 0; i < ev->field_count; i += ev->fields[i].span ? ev->fields[i].span : 1) n++;
    if (!(k = calloc(1, sizeof *k + n * sizeof k->key[0]))) return NULL;
    for (uint32_t i = 0; i < ev->field_count; i += ev->fields[i].span ? ev->fields[i].span : 1) {
        etl_field f;
        etl_decoded_event one;
        struct schema_key *key = &k->key[k->n];
        size_t len;
        memset(&f, 0, sizeof f);
        f.name = ev->fields[i].name;
        f.in_type = ETL_IN_UINT8;
        f.kind = ETL_FIELD_VALUE;
        f.count = 1;
        f.end = 1;
        f.data = &zero;
        f.size = 1;
        memset(&one, 0, sizeof one);
        one.fields = &f;
        one.field_count = 1;
        len = etl_decoded_format_json(&one, NULL, 0);       /* {KEY0} */
        key->name = ev->fields[i].name;
        if (len < 3 || len > UINT32_MAX || !(key->text = malloc(len + 1))) break;
        etl_decoded_format_json(&one, key->text, len + 1);
        key->len = (uint32_t)(len - 3);
        memmove(key->text, key->text + 1, key->len);
        key->text[key->len] = '\0';
        k->n++;
    }
    if (k->n < n) {
        for (unsigned j = 0; j < k->n; j++) free(k->key[j].text);
        free(k);
        return NULL;
    }
    return k;
}

/* The names.v index of the events of schema ev and provider (and, in *keys, its fields' JSON
   keys): the schema's slot, made (and the name found or made) on first sight. -1 on error. */
static long name_index(struct etl_sqlite_loader *l, const etl_schema_event *ev, int64_t provider,
                       struct schema_keys **keys)
{
    struct event_names *t = &l->names;
    struct schema_keys *made;
    unsigned mask, i;
    long n;

    if (ev == t->last_schema && provider == t->last_provider) {
        *keys = t->last_keys;
        return (long)t->last_name;
    }
    if (t->schema_cap) {
        mask = t->schema_cap - 1;
        for (i = ptr_hash(ev, provider) & mask; t->by_schema[i].schema; i = (i + 1) & mask)
            if (t->by_schema[i].schema == ev && t->by_schema[i].provider == provider) goto found;
    }
    if ((n = name_of_schema(l, ev, provider)) < 0) return -1;
    if (!(made = schema_keys_new(ev))) return etl_sink_error(&l->sink, "out of memory");
    if (2 * (t->schema_count + 1) > t->schema_cap) {
        unsigned cap = t->schema_cap ? 2 * t->schema_cap : 256;
        struct schema_slot *b = calloc(cap, sizeof *b);
        if (!b) {
            schema_keys_free(made);
            return etl_sink_error(&l->sink, "out of memory");
        }
        for (unsigned k = 0; k < t->schema_cap; k++) {
            unsigned j;
            if (!t->by_schema[k].schema) continue;
            for (j = ptr_hash(t->by_schema[k].schema, t->by_schema[k].provider) & (cap - 1); b[j].schema;
                 j = (j + 1) & (cap - 1)) {}
            b[j] = t->by_schema[k];
        }
        free(t->by_schema);
        t->by_schema = b;
        t->schema_cap = cap;
    }
    mask = t->schema_cap - 1;
    for (i = ptr_hash(ev, provider) & mask; t->by_schema[i].schema; i = (i + 1) & mask) {}
    t->by_schema[i].schema = ev;
    t->by_schema[i].provider = provider;
    t->by_schema[i].name = (unsigned)n;
    t->by_schema[i].keys = made;
    t->schema_count++;
found:
    t->last_schema = ev;
    t->last_provider = provider;
    t->last_name = t->by_schema[i].name;
    t->last_keys = t->by_schema[i].keys;
    *keys = t->last_keys;
    return (long)t->last_name;
}

/* ------------------------------------------------------------------ each event */

/* Room in a per-provider count array of the input for provider. */
static int counts_room(struct input *in, int64_t provider)
{
    unsigned cap;
    uint64_t *a, *b;

    if ((uint64_t)provider < in->counts_cap) return 0;
    cap = in->counts_cap ? in->counts_cap : 64;
    while (cap <= (uint64_t)provider) cap *= 2;
    a = realloc(in->undecoded, cap * sizeof *a);
    if (a) in->undecoded = a;
    b = realloc(in->failed_rest, cap * sizeof *b);
    if (b) in->failed_rest = b;
    if (!a || !b) return -1;
    memset(a + in->counts_cap, 0, (cap - in->counts_cap) * sizeof *a);
    memset(b + in->counts_cap, 0, (cap - in->counts_cap) * sizeof *b);
    in->counts_cap = cap;
    return 0;
}

/* etl_decoded_format_json's text of de into out (size bytes) as snprintf does, each top-level
   field's key copied from keys (made once per schema) rather than escaped again: the JSON
   keys are a third of the formatting's work. A field that is not the schema's next (it cannot
   be: the decoder's fields follow its schema's) has the whole text formatted as the library
   does. */
static size_t format_json(const etl_decoded_event *de, const struct schema_keys *keys, char *out, size_t size)
{
    size_t n = 0;
    unsigned i = 0;

    if (size) out[0] = '\0';
    n = 1;
    for (uint32_t k = 0; k < de->field_count; i++) {
        const etl_field *f = &de->fields[k];
        if (i >= keys->n || keys->key[i].name != f->name) return etl_decoded_format_json(de, out, size);
        if (k && n < size) out[n] = ',';
        n += k != 0;
        if (n + keys->key[i].len < size) memcpy(out + n, keys->key[i].text, keys->key[i].len);
        n += keys->key[i].len;
        n += etl_decoded_field_format(de, k, 1, n < size ? out + n : NULL, n < size ? size - n : 0);
        k = f->end > k ? f->end : k + 1;
    }
    if (n + 1 < size) {
        out[0] = '{';
        out[n] = '}';
        out[n + 1] = '\0';
    } else if (size) {
        out[0] = '\0';
    }
    return n + 1;
}

/* The fields of a decoded event as JSON into the row's own buffer, which the batch binds as it is. */
static int fields_json(struct etl_sqlite_loader *l, const etl_decoded_event *de, const struct schema_keys *keys,
                       struct event_row *r)
{
    size_t n = format_json(de, keys, r->fields, r->fields_cap);

    if (n >= r->fields_cap) {
        size_t cap = n + 1 < 512 ? 512 : n + 1 + n / 2;
        char *p;
        if (cap > 0x7FFFFFFF || !(p = realloc(r->fields, cap))) return etl_sink_error(&l->sink, "out of memory");
        r->fields = p;
        r->fields_cap = (uint32_t)cap;
        n = format_json(de, keys, r->fields, r->fields_cap);
    }
    r->fields_len = (uint32_t)n;
    r->has_fields = 1;
    return 0;
}

/* An event whose payload does not fit its schema (or whose TraceLogging metadata does not
   parse): damage, said and listed (the first of a trace), else counted. */
static int decode_failed(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, int64_t provider)
{
    int64_t offset = (int64_t)(ev->buffer_offset + ev->record_offset);
    const char *why = etl_decoder_error(l->decoder);

    l->damaged = 1;
    in->warnings++;
    if (in->failed_listed >= DECODE_FAILED_LISTED) {
        in->failed_rest[provider]++;
        return 0;
    }
    in->failed_listed++;
    etl_load_message(l, ETL_WARN, 1, in->path, offset, "%s: %s", in->path, why);
    return etl_load_lost(l, in->trace, "decode_failed", provider, 1, offset, why);
}

int etl_load_fields(struct etl_sqlite_loader *l, struct input *in, const etl_event *ev, struct event_row *r,
                    int64_t *provider)
{
    etl_decoded_event de;
    const etl_schema_event *schema;
    struct schema_keys *keys = NULL;
    int rc = etl_decoder_decode(l->decoder, ev, &de);
    long name;

    *provider = 0;
    if ((ev->has & ETL_HAS_PROVIDER) && (*provider = etl_load_provider_id(l, &ev->provider)) < 0)
        return etl_sink_error(&l->sink, "providers");
    if (counts_room(in, *provider) != 0) return etl_sink_error(&l->sink, "out of memory");
    r->has_fields = 0;
    r->v[20] = 0;
    if (rc == 0) {
        in->undecoded[*provider]++;
        return 0;
    }
    if ((schema = etl_decoder_last_schema(l->decoder)) != NULL) {
        if ((name = name_index(l, schema, *provider, &keys)) < 0) return -1;
        r->v[20] = l->names.v[name].id;
        if (fields_json(l, &de, keys, r) != 0) return -1;
    }
    return rc == 1 ? 0 : decode_failed(l, in, ev, *provider);
}

int etl_load_fields_lost(struct etl_sqlite_loader *l, struct input *in)
{
    uint64_t rest = 0;
    char msg[160];

    for (unsigned p = 0; p < in->counts_cap; p++) {
        if (in->undecoded[p] &&
            etl_load_lost(l, in->trace, "undecoded", p, (int64_t)in->undecoded[p], -1,
                          "events without a schema: loaded with their payload, fields NULL") != 0)
            return -1;
        if (in->failed_rest[p]) {
            snprintf(msg, sizeof msg, "events whose payload does not fit their schema, past the first %d listed",
                     DECODE_FAILED_LISTED);
            if (etl_load_lost(l, in->trace, "decode_failed", p, (int64_t)in->failed_rest[p], -1, msg) != 0) return -1;
            rest += in->failed_rest[p];
        }
    }
    if (rest)
        etl_load_message(l, ETL_WARN, 1, in->path, -1, "%s: %llu more events whose payload does not fit their schema "
                                                      "(the lost table counts them)",
                         in->path, (unsigned long long)rest);
    return 0;
}

/* ------------------------------------------------------------------ the views */

/* The views of one event name (and of the names.v entries that have it). */
struct view_plan {
    const char *name;           /* event_names.name */
    char *short_name;           /* 'Task/Opcode', or NULL */
    unsigned first;             /* the first of its names in names.v order */
    int made;
};

/* ASCII case folding, as SQLite compares identifiers. */
static int same_identifier(const char *a, const char *b)
{
    return sqlite3_stricmp(a, b) == 0;
}

/* Whether name is taken by the n strings of taken (case insensitive). */
static int taken_by(const char *name, char *const *taken, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (taken[i] && same_identifier(name, taken[i])) return 1;
    return 0;
}

/* Adds a copy of the n bytes of name to the list: 0, or -1 without memory. */
static int names_push(char ***v, unsigned *n, unsigned *cap, const char *name, size_t len)
{
    if (*n == *cap) {
        char **b = realloc(*v, (*cap = *cap ? 2 * *cap : 64) * sizeof *b);
        if (!b) return -1;
        *v = b;
    }
    if (!((*v)[*n] = malloc(len + 1))) return -1;
    memcpy((*v)[*n], name, len);
    (*v)[*n][len] = '\0';
    (*n)++;
    return 0;
}

/* The names of the database's tables, views, indexes and triggers (one namespace in SQLite),
   once the event views are dropped, and of the schema's views (a new database has them only
   after its commit). */
static char **schema_names(struct etl_sqlite_loader *l, unsigned *count)
{
    sqlite3_stmt *s;
    char **v = NULL;
    unsigned n = 0, cap = 0;
    int rc = SQLITE_OK;

    *count = 0;
    for (const char *p = etl_sqlite_schema_views; (p = strstr(p, "CREATE VIEW ")) != NULL;) {
        p += strlen("CREATE VIEW ");
        if (names_push(&v, &n, &cap, p, strcspn(p, " ")) != 0) {
            rc = SQLITE_NOMEM;
            goto failed;
        }
    }
    if (sqlite3_prepare_v2(l->sink.db, "SELECT name FROM main.sqlite_master", -1, &s, NULL) != SQLITE_OK) {
        rc = SQLITE_ERROR;
        goto failed;
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        if (name && names_push(&v, &n, &cap, name, strlen(name)) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(s);
failed:
    if (rc != SQLITE_DONE) {
        for (unsigned i = 0; i < n; i++) free(v[i]);
        free(v);
        etl_sink_error(&l->sink, "reading the schema");
        return NULL;
    }
    *count = n;
    if (!v) v = calloc(1, sizeof *v);
    return v;
}

/* Drops the views the last load made and empties event_views. */
static int drop_event_views(struct etl_sqlite_loader *l)
{
    sqlite3_stmt *s;
    char *sql;
    int rc;

    if (sqlite3_prepare_v2(l->sink.db, "SELECT view FROM event_views", -1, &s, NULL) != SQLITE_OK)
        return etl_sink_error(&l->sink, "reading event_views");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *view = (const char *)sqlite3_column_text(s, 0);
        if (!view) continue;
        if (!(sql = sqlite3_mprintf("DROP VIEW IF EXISTS main.\"%w\"", view))) {
            sqlite3_finalize(s);
            return etl_sink_error(&l->sink, "out of memory");
        }
        rc = etl_sink_exec(&l->sink, sql);
        sqlite3_free(sql);
        if (rc != 0) {
            sqlite3_finalize(s);
            return -1;
        }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return etl_sink_error(&l->sink, "reading event_views");
    return etl_sink_exec(&l->sink, "DELETE FROM event_views");
}

/* Text that grows (the view's SQL). */
struct text {
    char *p;
    size_t n, cap;
    int failed;
};

static void text_add(struct text *t, const char *s)
{
    size_t k = strlen(s);

    if (t->failed) return;
    if (t->n + k + 1 > t->cap) {
        size_t cap = (t->n + k + 1) * 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->n, s, k + 1);
    t->n += k;
}

/* text_add of sqlite3_mprintf's result. */
static void text_addf(struct text *t, char *formatted)
{
    if (!formatted) t->failed = 1;
    else text_add(t, formatted);
    sqlite3_free(formatted);
}

/* Whether the JSON text of name has escapes: SQLite's JSON paths (3.40) match a key's text as
   the JSON has it, escapes and all, so such a key is looked up with json_each, whose keys are
   the names themselves. */
static int json_escaped(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') return 1;
    return 0;
}

/* The view's expression of a field: its JSON value (json_extract: numbers, text, 1 and 0 for
   booleans, JSON text for arrays and structs); an integer shown as "0x..." as its number, the
   hex digits put together four bits each (SQLite's CAST reads no hex). */
static void column_expr(struct text *sql, const char *field, int hex)
{
    char *value = json_escaped(field)
                      ? sqlite3_mprintf("(SELECT j.value FROM json_each(e.fields) j WHERE j.key = %Q)", field)
                      : sqlite3_mprintf("json_extract(e.fields, '$.\"%q\"')", field);

    if (!value) {
        sql->failed = 1;
        return;
    }
    if (!hex) {
        text_add(sql, value);
        sqlite3_free(value);
        return;
    }
    text_add(sql, "(SELECT CASE WHEN typeof(v) = 'text' AND v LIKE '0x%' THEN ");
    for (int k = 16; k >= 1; k--) {
        char digit[128];
        /* in SQLite << and | bind alike, left to right */
        snprintf(digit, sizeof digit, "%s((instr('0123456789abcdef', substr(substr(v, 3), -%d, 1)) - 1) << %d)",
                 k == 16 ? "" : " | ", k, 4 * (k - 1));
        text_add(sql, digit);
    }
    text_add(sql, " ELSE v END FROM (SELECT ");
    text_add(sql, value);
    text_add(sql, " AS v))");
    sqlite3_free(value);
}

/* The columns every event view begins with. */
static const char *const view_head[] = { "event", "trace", "time_ns", "cpu", "pid", "tid" };
#define VIEW_HEAD 6u

/* CREATE VIEW view AS the events of plan p's name with a column per field (the union of its
   names' fields, in order of first sight). A field whose name a column before it has (case
   insensitively, as SQLite compares column names) gets "_2", "_3", ... */
static char *view_sql(const struct event_names *t, const struct view_plan *p, const char *view)
{
    struct text sql = { NULL, 0, 0, 0 };
    const char **seen;          /* the fields given a column */
    char **cols;                /* the columns' names */
    unsigned nseen = 0, ncols = 0, cap = VIEW_HEAD;
    int first_id = 1;

    for (unsigned i = p->first; i < t->n; i++)
        if (strcmp(t->v[i].name, p->name) == 0) cap += t->v[i].nfields;
    seen = calloc(cap, sizeof *seen);
    cols = calloc(cap, sizeof *cols);
    if (!seen || !cols) {
        free(seen);
        free(cols);
        return NULL;
    }
    text_addf(&sql, sqlite3_mprintf("CREATE VIEW main.\"%w\" AS\nSELECT e.event AS event, e.trace AS trace, "
                                    "e.time_ns AS time_ns, e.cpu AS cpu, e.pid AS pid, e.tid AS tid",
                                    view));
    for (unsigned i = 0; i < VIEW_HEAD; i++) cols[ncols++] = sqlite3_mprintf("%s", view_head[i]);
    for (unsigned i = p->first; i < t->n && !sql.failed; i++) {
        const struct event_name *e = &t->v[i];
        if (strcmp(e->name, p->name) != 0) continue;
        for (unsigned f = 0; f < e->nfields && !sql.failed; f++) {
            const char *field = e->fields[f], *base = field[0] ? field : "_";
            char *col;
            int dup = 0;
            for (unsigned k = 0; k < nseen; k++) dup |= strcmp(seen[k], field) == 0;
            if (dup) continue; /* the same field of another provider's name: one column */
            seen[nseen++] = field;
            col = sqlite3_mprintf("%s", base);
            for (unsigned n = 2; col && taken_by(col, cols, ncols); n++) {
                sqlite3_free(col);
                col = sqlite3_mprintf("%s_%u", base, n);
            }
            if (!col) {
                sql.failed = 1;
                break;
            }
            cols[ncols++] = col;
            text_add(&sql, ",\n       ");
            column_expr(&sql, field, e->hex[f]);
            text_addf(&sql, sqlite3_mprintf(" AS \"%w\"", col));
        }
    }
    text_add(&sql, "\nFROM events e WHERE e.name IN (");
    for (unsigned i = p->first; i < t->n; i++) {
        if (strcmp(t->v[i].name, p->name) != 0) continue;
        text_addf(&sql, sqlite3_mprintf("%s%lld", first_id ? "" : ", ", (long long)t->v[i].id));
        first_id = 0;
    }
    text_add(&sql, ")");
    for (unsigned k = 0; k < ncols; k++) sqlite3_free(cols[k]);
    free(cols);
    free(seen);
    if (sql.failed) {
        free(sql.p);
        return NULL;
    }
    return sql.p;
}

/* Makes view for plan p and records it in event_views. */
static int make_view(struct etl_sqlite_loader *l, const struct view_plan *p, const char *view)
{
    char *sql = view_sql(&l->names, p, view), *row;
    int rc;

    if (!sql) return etl_sink_error(&l->sink, "out of memory");
    rc = etl_sink_exec(&l->sink, sql);
    free(sql);
    if (rc != 0) return -1;
    if (!(row = sqlite3_mprintf("INSERT INTO event_views VALUES (%Q, %Q)", view, p->name)))
        return etl_sink_error(&l->sink, "out of memory");
    rc = etl_sink_exec(&l->sink, row);
    sqlite3_free(row);
    return rc;
}

/* 'Task/Opcode' of a name (the parts it has), from event_names; NULL when it has neither. */
static char *short_name_of(struct etl_sqlite_loader *l, int64_t id)
{
    sqlite3_stmt *s;
    char *out = NULL;

    if (sqlite3_prepare_v2(l->sink.db, "SELECT task, opcode FROM event_names WHERE name_id = ?1", -1, &s, NULL) != SQLITE_OK)
        return NULL;
    bind_i64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *task = (const char *)sqlite3_column_text(s, 0), *op = (const char *)sqlite3_column_text(s, 1);
        int has_task = task && *task, has_op = op && *op;
        if (has_task && has_op) out = sqlite3_mprintf("%s/%s", task, op);
        else if (has_task || has_op) out = sqlite3_mprintf("%s", has_task ? task : op);
    }
    sqlite3_finalize(s);
    return out;
}

int etl_load_event_views(struct etl_sqlite_loader *l)
{
    struct event_names *t = &l->names;
    struct view_plan *plan = NULL;
    char **taken = NULL;
    unsigned nplan = 0, ntaken = 0;
    int rc = -1;

    if (drop_event_views(l) != 0) return -1;
    if (!t->n) return 0;
    if (!(plan = calloc(t->n, sizeof *plan))) return etl_sink_error(&l->sink, "out of memory");
    /* One plan per distinct name, in the order of the names' ids. */
    for (unsigned i = 0; i < t->n; i++) {
        int dup = 0;
        for (unsigned k = 0; k < nplan && !dup; k++) dup = strcmp(plan[k].name, t->v[i].name) == 0;
        if (dup) continue;
        plan[nplan].name = t->v[i].name;
        plan[nplan].first = i;
        plan[nplan].short_name = short_name_of(l, t->v[i].id);
        nplan++;
    }
    if (!(taken = schema_names(l, &ntaken))) goto out;
    /* The full names first: each its view, unless a table, a view or an index has the name. */
    for (unsigned k = 0; k < nplan; k++) {
        int clash = taken_by(plan[k].name, taken, ntaken);
        for (unsigned j = 0; j < k && !clash; j++) clash = plan[j].made && same_identifier(plan[j].name, plan[k].name);
        if (clash) continue;
        if (make_view(l, &plan[k], plan[k].name) != 0) goto out;
        plan[k].made = 1;
    }
    /* Then 'Task/Opcode', when it is the short name of this name alone and nothing else has it. */
    for (unsigned k = 0; k < nplan; k++) {
        const char *sn = plan[k].short_name;
        int clash;
        if (!sn || same_identifier(sn, plan[k].name)) continue;
        clash = taken_by(sn, taken, ntaken);
        for (unsigned j = 0; j < nplan && !clash; j++) {
            if (j == k) continue;
            clash = same_identifier(sn, plan[j].name) || (plan[j].short_name && same_identifier(sn, plan[j].short_name));
        }
        if (!clash && make_view(l, &plan[k], sn) != 0) goto out;
    }
    rc = 0;
out:
    for (unsigned k = 0; k < nplan; k++) sqlite3_free(plan[k].short_name);
    free(plan);
    for (unsigned i = 0; i < ntaken; i++) free(taken[i]);
    free(taken);
    return rc;
}
