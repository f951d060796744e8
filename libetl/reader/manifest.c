/* SPDX-License-Identifier: MIT */
/* Instrumentation manifests, read with libxml2 into schema sets: providers, tasks, opcodes, keywords, levels, channels, maps, templates and every version of every event (doc/format.md section 19). */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "reader/reader.h"

#ifndef ETL_MANIFEST_DIR
#error "ETL_MANIFEST_DIR, the directory of the installed manifests, comes from Makefile.am"
#endif

/* A manifest file larger than this is refused (the largest known, the kernel's, is 0.6 MB). */
#define MANIFEST_FILE_LIMIT (64u << 20)
/* Struct nesting a manifest may use (the walk's own limit is the same). */
#define MANIFEST_DEPTH_LIMIT 32

const char *etl_decoder_default_directory(void) { return ETL_MANIFEST_DIR; }

/* ---------------------------------------------------------------- type names */

struct type_name {
    const char *name; /* without its prefix (win:, xs:) */
    uint16_t value;
};

/* The in types of Windows' winmeta.xml (InputType), and the counted types TDH adds for manifests. */
static const struct type_name in_types[] = {
    { "UnicodeString", ETL_IN_UNICODE_STRING }, { "AnsiString", ETL_IN_ANSI_STRING },
    { "Int8", ETL_IN_INT8 }, { "UInt8", ETL_IN_UINT8 }, { "Int16", ETL_IN_INT16 }, { "UInt16", ETL_IN_UINT16 },
    { "Int32", ETL_IN_INT32 }, { "UInt32", ETL_IN_UINT32 }, { "Int64", ETL_IN_INT64 }, { "UInt64", ETL_IN_UINT64 },
    { "Float", ETL_IN_FLOAT }, { "Double", ETL_IN_DOUBLE }, { "Boolean", ETL_IN_BOOLEAN },
    { "Binary", ETL_IN_BINARY }, { "GUID", ETL_IN_GUID }, { "Pointer", ETL_IN_POINTER },
    { "FILETIME", ETL_IN_FILETIME }, { "SYSTEMTIME", ETL_IN_SYSTEMTIME }, { "SID", ETL_IN_SID },
    { "HexInt32", ETL_IN_HEXINT32 }, { "HexInt64", ETL_IN_HEXINT64 },
    { "CountedString", ETL_IN_COUNTED_STRING }, { "CountedAnsiString", ETL_IN_COUNTED_ANSI_STRING },
    { "CountedBinary", ETL_IN_COUNTED_BINARY },
};

/* The out types of winmeta.xml (OutputType), and TDH's two later ones. */
static const struct type_name out_types[] = {
    { "string", ETL_OUT_STRING }, { "dateTime", ETL_OUT_DATETIME }, { "byte", ETL_OUT_BYTE },
    { "unsignedByte", ETL_OUT_UNSIGNED_BYTE }, { "short", ETL_OUT_SHORT }, { "unsignedShort", ETL_OUT_UNSIGNED_SHORT },
    { "int", ETL_OUT_INT }, { "unsignedInt", ETL_OUT_UNSIGNED_INT }, { "long", ETL_OUT_LONG },
    { "unsignedLong", ETL_OUT_UNSIGNED_LONG }, { "float", ETL_OUT_FLOAT }, { "double", ETL_OUT_DOUBLE },
    { "boolean", ETL_OUT_BOOLEAN }, { "GUID", ETL_OUT_GUID }, { "hexBinary", ETL_OUT_HEX_BINARY },
    { "HexInt8", ETL_OUT_HEXINT8 }, { "HexInt16", ETL_OUT_HEXINT16 }, { "HexInt32", ETL_OUT_HEXINT32 },
    { "HexInt64", ETL_OUT_HEXINT64 }, { "PID", ETL_OUT_PID }, { "TID", ETL_OUT_TID }, { "Port", ETL_OUT_PORT },
    { "IPv4", ETL_OUT_IPV4 }, { "IPv6", ETL_OUT_IPV6 }, { "SocketAddress", ETL_OUT_SOCKET_ADDRESS },
    { "CIMDateTime", ETL_OUT_CIM_DATETIME }, { "ETWTIME", ETL_OUT_ETW_TIME }, { "Xml", ETL_OUT_XML },
    { "ErrorCode", ETL_OUT_ERROR_CODE }, { "Win32Error", ETL_OUT_WIN32_ERROR }, { "NTSTATUS", ETL_OUT_NTSTATUS },
    { "HResult", ETL_OUT_HRESULT }, { "DateTimeCultureInsensitive", ETL_OUT_CULTURE_INSENSITIVE_DATETIME },
    { "Json", ETL_OUT_JSON }, { "Utf8", ETL_OUT_UTF8 }, { "Pkcs7WithTypeInfo", ETL_OUT_PKCS7_WITH_TYPE_INFO },
    { "CodePointer", ETL_OUT_CODE_POINTER }, { "DateTimeUtc", ETL_OUT_DATETIME_UTC },
};

/* A type's QName: its local part is looked up, whatever the prefix (manifests write win:, xs:,
   and the kernel's manifest xs:HexInt32), without regard to case (Microsoft's pages write
   xs:datetime, manifests xs:dateTime). 0 when unknown. */
static int type_lookup(const struct type_name *t, size_t n, const char *qname, uint16_t *out)
{
    const char *colon = strchr(qname, ':');
    const char *local = colon ? colon + 1 : qname;

    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(t[i].name, local) == 0) {
            *out = t[i].value;
            return 1;
        }
    }
    return 0;
}

/* The opcodes winmeta.xml defines, with the names Windows' tools show. */
static const struct { const char *qname; uint8_t value; const char *display; } std_opcodes[] = {
    { "win:Info", 0, "Info" }, { "win:Start", 1, "Start" }, { "win:Stop", 2, "Stop" },
    { "win:DC_Start", 3, "DCStart" }, { "win:DC_Stop", 4, "DCStop" }, { "win:Extension", 5, "Extension" },
    { "win:Reply", 6, "Reply" }, { "win:Resume", 7, "Resume" }, { "win:Suspend", 8, "Suspend" },
    { "win:Send", 9, "Send" }, { "win:Receive", 240, "Receive" },
};

static const char *const std_levels[] = {
    "win:LogAlways", "win:Critical", "win:Error", "win:Warning", "win:Informational", "win:Verbose",
};

static const char *const std_channels[] = { "System", "Application", "Security", "Setup", "ForwardedEvents" };

/* ---------------------------------------------------------------- the parse */

struct str_entry {
    const char *id, *value;
};

/* What a provider names: tasks, opcodes, keywords, levels, channels, maps, templates. */
struct named {
    const char *name;
    uint64_t value;
    const char *display;  /* tasks and opcodes: the name Windows' tools show */
    const void *ptr;      /* maps: the etl_map; templates: the fields */
    long owner;           /* opcodes: the index of their task, -1 for the provider's */
    long line;
};

struct table {
    struct named *v;
    uint32_t n, cap;
};

struct mp {
    const char *name;          /* for messages */
    etl_schema_set *set;
    int source;
    etl_decoder *d;            /* warnings go to it (may be NULL) */
    char *err;
    size_t errsize;
    xmlDocPtr doc;
    struct str_entry *strings; /* open addressing, cap a power of two */
    uint32_t str_cap, str_count;
    unsigned unresolved;       /* $(string.X) the string table lacks */
    char unresolved_first[200];
    unsigned unknown_refs;     /* levels, keywords, channels an event names that nobody defines */
    char unknown_first[200];
    int oom;
};

struct fbuild {
    etl_schema_field *f;
    long *parent;              /* the index of the struct a field is in, -1 at the top */
    uint32_t n, cap;
};

static int bad(struct mp *m, xmlNodePtr n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct mp *m, xmlNodePtr n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    etl_vfail_at(m->err, m->errsize, m->name, n ? xmlGetLineNo(n) : 0L, fmt, ap);
    va_end(ap);
    return ETL_FAILED;
}

static int nomem(struct mp *m)
{
    snprintf(m->err, m->errsize, "%s: out of memory", m->name);
    return ETL_FATAL;
}

static int is_element(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* The value of attribute name of n (unqualified), or NULL. */
static const char *attr(struct mp *m, xmlNodePtr n, const char *name)
{
    for (xmlAttrPtr a = n->properties; a; a = a->next) {
        xmlChar *v;
        char *copy;
        if (strcmp((const char *)a->name, name) != 0) continue;
        if (!a->children) return "";
        if (!a->children->next && a->children->type == XML_TEXT_NODE && a->children->content)
            return (const char *)a->children->content;
        /* Several nodes (entity references): joined into the set's arena. */
        if (!(v = xmlNodeListGetString(m->doc, a->children, 1))) return "";
        copy = etl_arena_strdup(&m->set->arena, (const char *)v);
        xmlFree(v);
        if (!copy) m->oom = 1;
        return copy;
    }
    return NULL;
}

/* A copy of s in the set's arena: what the schemas keep outlives the document. */
static const char *keep(struct mp *m, const char *s)
{
    char *copy;

    if (!s) return NULL;
    if (!(copy = etl_arena_strdup(&m->set->arena, s))) m->oom = 1;
    return copy;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* A number as manifests write them: decimal, or 0x hexadecimal ("0x" alone is 0, as some
   manifests have it). 0, or -1 when s is not a number or is above max. */
static int parse_number(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0, hex = 0;

    s = skip_space(s);
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        hex = 1;
        s += 2;
    }
    for (;; s++) {
        unsigned dg;
        if (*s >= '0' && *s <= '9') dg = (unsigned)(*s - '0');
        else if (hex && *s >= 'a' && *s <= 'f') dg = (unsigned)(*s - 'a' + 10);
        else if (hex && *s >= 'A' && *s <= 'F') dg = (unsigned)(*s - 'A' + 10);
        else break;
        if (v > (UINT64_MAX - dg) / (hex ? 16u : 10u)) return -1;
        v = v * (hex ? 16u : 10u) + dg;
        digits++;
    }
    if (*skip_space(s) != '\0' || (!digits && !hex) || v > max) return -1;
    *out = v;
    return 0;
}

static int table_add(struct table *t, const struct named *x)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        struct named *v = realloc(t->v, cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = *x;
    return 0;
}

static const struct named *table_find(const struct table *t, const char *name)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0) return &t->v[i];
    return NULL;
}

static void table_free(struct table *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- the string table */

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int strings_put(struct mp *m, const char *id, const char *value)
{
    uint32_t mask;

    if ((m->str_count + 1) * 2 > m->str_cap) {
        uint32_t cap = m->str_cap ? m->str_cap * 2 : 256;
        struct str_entry *s = calloc(cap, sizeof *s);
        if (!s) return -1;
        for (uint32_t i = 0; i < m->str_cap; i++) {
            if (!m->strings[i].id) continue;
            for (uint32_t k = str_hash(m->strings[i].id) & (cap - 1);; k = (k + 1) & (cap - 1)) {
                if (!s[k].id) {
                    s[k] = m->strings[i];
                    break;
                }
            }
        }
        free(m->strings);
        m->strings = s;
        m->str_cap = cap;
    }
    mask = m->str_cap - 1;
    for (uint32_t k = str_hash(id) & mask;; k = (k + 1) & mask) {
        if (!m->strings[k].id) {
            m->strings[k].id = id;
            m->strings[k].value = value;
            m->str_count++;
            return 0;
        }
        if (strcmp(m->strings[k].id, id) == 0) {
            m->strings[k].value = value; /* the last of the same id, as Windows' tools take it */
            return 0;
        }
    }
}

static const char *strings_get(const struct mp *m, const char *id)
{
    uint32_t mask = m->str_cap - 1;

    if (!m->str_cap) return NULL;
    for (uint32_t k = str_hash(id) & mask;; k = (k + 1) & mask) {
        if (!m->strings[k].id) return NULL;
        if (strcmp(m->strings[k].id, id) == 0) return m->strings[k].value;
    }
}

/* Every element named name below n, depth first, in document order. */
static void find_all(xmlNodePtr n, const char *name, xmlNodePtr *out, unsigned *count, unsigned max)
{
    for (xmlNodePtr c = n; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (strcmp((const char *)c->name, name) == 0) {
            if (*count < max) out[*count] = c;
            (*count)++;
            continue; /* none sits inside another */
        }
        find_all(c->children, name, out, count, max);
    }
}

/* The string table: of the resources of culture en-US, else of the first resources. */
static int read_strings(struct mp *m)
{
    xmlNodePtr loc[16], chosen = NULL, first = NULL;
    unsigned nloc = 0;

    find_all(xmlDocGetRootElement(m->doc), "localization", loc, &nloc, 16);
    for (unsigned i = 0; i < nloc && i < 16 && !chosen; i++) {
        for (xmlNodePtr r = loc[i]->children; r; r = r->next) {
            const char *culture;
            if (!is_element(r, "resources")) continue;
            if (!first) first = r;
            culture = attr(m, r, "culture");
            if (culture && strcasecmp(culture, "en-US") == 0) {
                chosen = r;
                break;
            }
        }
    }
    if (!chosen) chosen = first;
    if (!chosen) return ETL_OK;
    for (xmlNodePtr t = chosen->children; t; t = t->next) {
        if (!is_element(t, "stringTable")) continue;
        for (xmlNodePtr s = t->children; s; s = s->next) {
            const char *id, *value;
            if (!is_element(s, "string")) continue;
            id = attr(m, s, "id");
            value = attr(m, s, "value");
            if (!id) return bad(m, s, "a string without an id");
            if (!value) return bad(m, s, "string %s has no value", id);
            if (strings_put(m, id, value) != 0) return nomem(m);
        }
    }
    return m->oom ? nomem(m) : ETL_OK;
}

/* A message attribute as text: $(string.X) looked up in the string table; other text as it is.
   NULL when it names a string the table lacks (counted, for one warning per manifest). */
static const char *message(struct mp *m, xmlNodePtr n, const char *msg)
{
    size_t len;
    const char *v;
    char id[256];

    if (!msg) return NULL;
    len = strlen(msg);
    if (len < 10 || strncmp(msg, "$(string.", 9) != 0 || msg[len - 1] != ')') return msg;
    if (len - 10 >= sizeof id) goto unresolved;
    memcpy(id, msg + 9, len - 10);
    id[len - 10] = '\0';
    if ((v = strings_get(m, id))) return v;
unresolved:
    if (!m->unresolved++)
        snprintf(m->unresolved_first, sizeof m->unresolved_first, "%s at line %ld", msg, xmlGetLineNo(n));
    return NULL;
}

static void unknown_ref(struct mp *m, xmlNodePtr n, const char *what, const char *name)
{
    if (!m->unknown_refs++)
        snprintf(m->unknown_first, sizeof m->unknown_first, "%s %.120s at line %ld", what, name, xmlGetLineNo(n));
}

/* ---------------------------------------------------------------- one provider */

struct provider {
    const char *name;
    etl_guid guid;
    struct table tasks, opcodes, keywords, levels, channels, maps, templates;
};

static void provider_free(struct provider *p)
{
    table_free(&p->tasks);
    table_free(&p->opcodes);
    table_free(&p->keywords);
    table_free(&p->levels);
    table_free(&p->channels);
    table_free(&p->maps);
    table_free(&p->templates);
}

/* An opcode element, of the provider (owner -1) or of a task. */
static int read_opcode(struct mp *m, struct provider *p, xmlNodePtr o, long owner)
{
    struct named x = { 0 };
    const char *value = attr(m, o, "value");

    x.name = attr(m, o, "name");
    x.owner = owner;
    x.line = xmlGetLineNo(o);
    if (!x.name) return bad(m, o, "an opcode without a name");
    if (!value || parse_number(value, 255, &x.value) != 0)
        return bad(m, o, "opcode %s: value %s is not a number from 0 to 255", x.name, value ? value : "(none)");
    x.display = message(m, o, attr(m, o, "message"));
    if (!(x.display = keep(m, x.display ? x.display : x.name))) return nomem(m);
    return table_add(&p->opcodes, &x) ? nomem(m) : ETL_OK;
}

static int read_tasks(struct mp *m, struct provider *p, xmlNodePtr tasks)
{
    for (xmlNodePtr t = tasks->children; t; t = t->next) {
        struct named x = { 0 };
        const char *value;
        long index;
        if (!is_element(t, "task")) continue;
        x.name = attr(m, t, "name");
        x.line = xmlGetLineNo(t);
        value = attr(m, t, "value");
        if (!x.name) return bad(m, t, "a task without a name");
        if (!value || parse_number(value, 65535, &x.value) != 0)
            return bad(m, t, "task %s: value %s is not a number from 0 to 65535", x.name, value ? value : "(none)");
        if (table_find(&p->tasks, x.name)) return bad(m, t, "task %s is defined twice", x.name);
        x.display = message(m, t, attr(m, t, "message"));
        if (!(x.display = keep(m, x.display ? x.display : x.name))) return nomem(m);
        index = (long)p->tasks.n;
        if (table_add(&p->tasks, &x)) return nomem(m);
        for (xmlNodePtr os = t->children; os; os = os->next) {
            if (!is_element(os, "opcodes")) continue;
            for (xmlNodePtr o = os->children; o; o = o->next) {
                int rc;
                if (!is_element(o, "opcode")) continue;
                if ((rc = read_opcode(m, p, o, index)) != ETL_OK) return rc;
            }
        }
    }
    return ETL_OK;
}

static int read_simple(struct mp *m, struct table *t, xmlNodePtr list, const char *element, const char *value_attr,
                       uint64_t max)
{
    for (xmlNodePtr k = list->children; k; k = k->next) {
        struct named x = { 0 };
        const char *value;
        if (!is_element(k, element)) continue;
        x.name = attr(m, k, "name");
        x.line = xmlGetLineNo(k);
        if (!x.name) return bad(m, k, "a %s without a name", element);
        value = attr(m, k, value_attr);
        if (!value || parse_number(value, max, &x.value) != 0)
            return bad(m, k, "%s %s: %s %s is not a number up to %llu", element, x.name, value_attr,
                       value ? value : "(none)", (unsigned long long)max);
        if (table_add(t, &x)) return nomem(m);
    }
    return ETL_OK;
}

/* channel and importChannel: named by their chid (what events use) and by their name. */
static int read_channels(struct mp *m, struct provider *p, xmlNodePtr list)
{
    for (xmlNodePtr c = list->children; c; c = c->next) {
        struct named x = { 0 };
        const char *chid, *name;
        if (!is_element(c, "channel") && !is_element(c, "importChannel")) continue;
        chid = attr(m, c, "chid");
        name = attr(m, c, "name");
        if (!chid && !name) return bad(m, c, "a channel without a name or a chid");
        x.line = xmlGetLineNo(c);
        x.name = chid ? chid : name;
        if (table_add(&p->channels, &x)) return nomem(m);
        if (chid && name) {
            x.name = name;
            if (table_add(&p->channels, &x)) return nomem(m);
        }
    }
    return ETL_OK;
}

/* A map entry while it is read: its place in the document breaks ties of value. */
struct entry_in {
    struct etl_map_entry e;
    uint32_t order;
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry_in *x = a, *y = b;

    if (x->e.value != y->e.value) return x->e.value < y->e.value ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The text of a map entry: its message, or when the string table lacks it the string's id,
   or its symbol. */
static const char *entry_text(struct mp *m, xmlNodePtr n)
{
    const char *msg = attr(m, n, "message"), *text = message(m, n, msg);

    if (text) return keep(m, text);
    if (msg) {
        char *id = etl_arena_strndup(&m->set->arena, msg + 9, strlen(msg) - 10); /* "$(string." X ")" */
        if (!id) m->oom = 1;
        return id;
    }
    return keep(m, attr(m, n, "symbol"));
}

static int read_maps(struct mp *m, struct provider *p, xmlNodePtr maps)
{
    for (xmlNodePtr mn = maps->children; mn; mn = mn->next) {
        struct named x = { 0 };
        struct etl_map *map;
        struct etl_map_entry *e;
        struct entry_in *in;
        uint32_t n = 0, k = 0, w = 0;
        int bitmap;
        if (is_element(mn, "valueMap")) bitmap = 0;
        else if (is_element(mn, "bitMap")) bitmap = 1;
        else continue;
        x.name = attr(m, mn, "name");
        x.line = xmlGetLineNo(mn);
        if (!x.name) return bad(m, mn, "a %s without a name", bitmap ? "bitMap" : "valueMap");
        if (table_find(&p->maps, x.name)) return bad(m, mn, "map %s is defined twice", x.name);
        for (xmlNodePtr c = mn->children; c; c = c->next) n += is_element(c, "map");
        if (!(map = etl_arena_alloc(&m->set->arena, sizeof *map)) ||
            !(e = etl_arena_alloc(&m->set->arena, (n ? n : 1) * sizeof *e)))
            return nomem(m);
        if (!(in = malloc((n ? n : 1) * sizeof *in))) return nomem(m);
        for (xmlNodePtr c = mn->children; c; c = c->next) {
            const char *value;
            if (!is_element(c, "map")) continue;
            value = attr(m, c, "value");
            if (!value || parse_number(value, UINT64_MAX, &in[k].e.value) != 0) {
                free(in);
                return bad(m, c, "map %s: value %s is not a number", x.name, value ? value : "(none)");
            }
            if (!(in[k].e.name = entry_text(m, c))) {
                free(in);
                return m->oom ? nomem(m) : bad(m, c, "map %s: the entry of value %s has no message", x.name, value);
            }
            in[k].order = k;
            k++;
        }
        /* Sorted by value; of entries of one value the last counts, as Windows' tools take it. */
        qsort(in, k, sizeof *in, entry_cmp);
        for (uint32_t i = 0; i < k; i++) {
            if (w && e[w - 1].value == in[i].e.value) e[w - 1] = in[i].e;
            else e[w++] = in[i].e;
        }
        free(in);
        if (!(map->name = keep(m, x.name))) return nomem(m);
        map->bitmap = bitmap;
        map->entries = e;
        map->entry_count = w;
        x.ptr = map;
        if (table_add(&p->maps, &x)) return nomem(m);
    }
    return ETL_OK;
}

/* ---------------------------------------------------------------- templates */

static int fb_push(struct fbuild *b, const etl_schema_field *f, long parent)
{
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 32;
        etl_schema_field *nf = realloc(b->f, cap * sizeof *nf);
        long *np;
        if (!nf) return -1;
        b->f = nf;
        if (!(np = realloc(b->parent, cap * sizeof *np))) return -1;
        b->parent = np;
        b->cap = cap;
    }
    b->f[b->n] = *f;
    b->parent[b->n] = parent;
    b->n++;
    return 0;
}

static int is_integer_in_type(unsigned t)
{
    return (t >= ETL_IN_INT8 && t <= ETL_IN_UINT64) || t == ETL_IN_HEXINT32 || t == ETL_IN_HEXINT64;
}

/* The field a length or count names: an integer before the new field, at its level or at a
   level around it (a member of an earlier struct is out of sight). */
static int find_ref(struct mp *m, xmlNodePtr n, const struct fbuild *b, long parent, const char *what,
                    const char *fieldname, const char *ref, uint16_t *out)
{
    for (long j = (long)b->n - 1; j >= 0; j--) {
        int visible = b->parent[j] == -1, ancestor = 0;
        if (strcmp(b->f[j].name, ref) != 0) continue;
        for (long a = parent; a >= 0; a = b->parent[a]) {
            if (a == j) ancestor = 1;
            if (b->parent[j] == a) visible = 1;
        }
        if (!visible || ancestor) continue;
        if (!is_integer_in_type(b->f[j].in_type) || b->f[j].count_kind != ETL_COUNT_ONE)
            return bad(m, n, "field %s: its %s %s is not an integer field", fieldname, what, ref);
        *out = (uint16_t)j;
        return ETL_OK;
    }
    return bad(m, n, "field %s: its %s %s names no field before it", fieldname, what, ref);
}

/* length="..." or count="...": a number or the name of a field before. */
static int size_attr(struct mp *m, xmlNodePtr n, const struct fbuild *b, long parent, etl_schema_field *f,
                     const char *what, const char *text)
{
    uint64_t v;
    int count = what[0] == 'c';
    uint16_t ref = 0;
    int rc;

    if (!text) return ETL_OK;
    if (*skip_space(text) >= '0' && *skip_space(text) <= '9') {
        if (parse_number(text, UINT32_MAX, &v) != 0)
            return bad(m, n, "field %s: %s %s is not a number up to %u", f->name, what, text, UINT32_MAX);
        if (count) {
            f->count_kind = ETL_COUNT_CONST;
            f->count = (uint32_t)v;
        } else {
            f->length_kind = ETL_LEN_CONST;
            f->length = (uint32_t)v;
        }
        return ETL_OK;
    }
    if ((rc = find_ref(m, n, b, parent, what, f->name, text, &ref)) != ETL_OK) return rc;
    if (count) {
        f->count_kind = ETL_COUNT_FIELD;
        f->count_ref = ref;
    } else {
        f->length_kind = ETL_LEN_FIELD;
        f->length_ref = ref;
    }
    return ETL_OK;
}

/* The data and struct elements under node, appended depth first; *members counts them. */
static int read_fields(struct mp *m, const struct provider *p, struct fbuild *b, xmlNodePtr node, long parent,
                       unsigned depth, uint32_t *members)
{
    *members = 0;
    for (xmlNodePtr c = node->children; c; c = c->next) {
        etl_schema_field f;
        int rc, is_struct;
        if (is_element(c, "data")) is_struct = 0;
        else if (is_element(c, "struct")) is_struct = 1;
        else continue;
        memset(&f, 0, sizeof f);
        f.name = attr(m, c, "name");
        if (!f.name) return bad(m, c, "a %s without a name", is_struct ? "struct" : "data element");
        if (!(f.name = keep(m, f.name))) return nomem(m);
        if (b->n >= UINT16_MAX) return bad(m, c, "more than %u fields in one template", UINT16_MAX - 1);
        if (is_struct) {
            f.in_type = ETL_IN_STRUCT;
        } else {
            const char *in = attr(m, c, "inType"), *out = attr(m, c, "outType"), *map = attr(m, c, "map");
            if (!in) return bad(m, c, "field %s has no inType", f.name);
            if (!type_lookup(in_types, sizeof in_types / sizeof *in_types, in, &f.in_type))
                return bad(m, c, "field %s: unknown inType %s", f.name, in);
            if (out && !type_lookup(out_types, sizeof out_types / sizeof *out_types, out, &f.out_type))
                return bad(m, c, "field %s: unknown outType %s", f.name, out);
            if (map) {
                const struct named *x = table_find(&p->maps, map);
                if (!x) return bad(m, c, "field %s: unknown map %s", f.name, map);
                f.map = x->ptr;
            }
        }
        if ((rc = size_attr(m, c, b, parent, &f, "length", attr(m, c, "length"))) != ETL_OK) return rc;
        if ((rc = size_attr(m, c, b, parent, &f, "count", attr(m, c, "count"))) != ETL_OK) return rc;
        if (is_struct && f.length_kind != ETL_LEN_TYPE) {
            /* A struct's size is its members': its length attribute has nothing to give. */
            f.length_kind = ETL_LEN_TYPE;
            f.length = 0;
        }
        if (fb_push(b, &f, parent) != 0) return nomem(m);
        if (is_struct) {
            long self = (long)b->n - 1;
            uint32_t n = 0;
            if (depth + 1 > MANIFEST_DEPTH_LIMIT)
                return bad(m, c, "struct %s: structs nested more than %d deep", f.name, MANIFEST_DEPTH_LIMIT);
            if ((rc = read_fields(m, p, b, c, self, depth + 1, &n)) != ETL_OK) return rc;
            if (n == 0) return bad(m, c, "struct %s has no members", f.name);
            if (n > UINT16_MAX) return bad(m, c, "struct %s has more than %u members", f.name, UINT16_MAX);
            b->f[self].members = (uint16_t)n;
        }
        (*members)++;
    }
    return m->oom ? nomem(m) : ETL_OK;
}

static int read_templates(struct mp *m, struct provider *p, xmlNodePtr templates)
{
    for (xmlNodePtr t = templates->children; t; t = t->next) {
        struct fbuild b = { 0 };
        struct named x = { 0 };
        etl_schema_field *fields = NULL;
        uint32_t members;
        int rc;
        if (!is_element(t, "template")) continue;
        x.name = attr(m, t, "tid");
        x.line = xmlGetLineNo(t);
        if (!x.name) return bad(m, t, "a template without a tid");
        if (table_find(&p->templates, x.name)) return bad(m, t, "template %s is defined twice", x.name);
        rc = read_fields(m, p, &b, t, -1, 0, &members);
        if (rc == ETL_OK && b.n) {
            if (!(fields = etl_arena_alloc(&m->set->arena, b.n * sizeof *fields))) rc = nomem(m);
            else memcpy(fields, b.f, b.n * sizeof *fields);
        }
        free(b.f);
        free(b.parent);
        if (rc != ETL_OK) return rc;
        x.ptr = fields;
        x.value = b.n;
        if (table_add(&p->templates, &x)) return nomem(m);
    }
    return ETL_OK;
}

/* ---------------------------------------------------------------- events */

static int level_known(const struct provider *p, const char *name)
{
    for (size_t i = 0; i < sizeof std_levels / sizeof *std_levels; i++)
        if (strcmp(std_levels[i], name) == 0) return 1;
    return table_find(&p->levels, name) != NULL;
}

static int channel_known(const struct provider *p, const char *name)
{
    for (size_t i = 0; i < sizeof std_channels / sizeof *std_channels; i++)
        if (strcmp(std_channels[i], name) == 0) return 1;
    return table_find(&p->channels, name) != NULL;
}

/* Every keyword an event names (separated by white space) is the provider's or one of
   winmeta.xml's (win:...). */
static void check_keywords(struct mp *m, const struct provider *p, xmlNodePtr e, const char *list)
{
    char word[256];
    const char *s = list;

    while (*(s = skip_space(s))) {
        size_t n = 0;
        while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '\n' && s[n] != '\r') n++;
        if (n < sizeof word) {
            memcpy(word, s, n);
            word[n] = '\0';
            if (strncmp(word, "win:", 4) != 0 && !table_find(&p->keywords, word)) unknown_ref(m, e, "keyword", word);
        }
        s += n;
    }
}

struct event_seen {
    uint16_t id;
    uint8_t version;
    long line;
};

static int read_event(struct mp *m, const struct provider *p, xmlNodePtr e, struct event_seen **seen, uint32_t *nseen,
                      uint32_t *capseen)
{
    const char *value = attr(m, e, "value"), *version = attr(m, e, "version"), *task = attr(m, e, "task"),
               *opcode = attr(m, e, "opcode"), *tmpl = attr(m, e, "template"), *level = attr(m, e, "level"),
               *keywords = attr(m, e, "keywords"), *channel = attr(m, e, "channel"), *symbol = attr(m, e, "symbol");
    uint64_t id, ver = 0;
    const struct named *t = NULL, *o = NULL, *tp = NULL;
    const char *task_name = NULL, *opcode_name = NULL, *part;
    etl_schema_event *ev;
    char num[32];
    int rc;

    if (!value || parse_number(value, 65535, &id) != 0)
        return bad(m, e, "an event's value %s is not a number from 0 to 65535", value ? value : "(none)");
    if (version && parse_number(version, 255, &ver) != 0)
        return bad(m, e, "event %llu: version %s is not a number from 0 to 255", (unsigned long long)id, version);
    for (uint32_t i = 0; i < *nseen; i++)
        if ((*seen)[i].id == id && (*seen)[i].version == ver)
            return bad(m, e, "event %llu version %llu is defined twice (first at line %ld)", (unsigned long long)id,
                       (unsigned long long)ver, (*seen)[i].line);
    if (*nseen == *capseen) {
        uint32_t cap = *capseen ? *capseen * 2 : 64;
        struct event_seen *s = realloc(*seen, cap * sizeof *s);
        if (!s) return nomem(m);
        *seen = s;
        *capseen = cap;
    }
    (*seen)[*nseen].id = (uint16_t)id;
    (*seen)[*nseen].version = (uint8_t)ver;
    (*seen)[*nseen].line = xmlGetLineNo(e);
    (*nseen)++;

    if (task) {
        if (!(t = table_find(&p->tasks, task))) return bad(m, e, "event %llu: unknown task %s", (unsigned long long)id, task);
        task_name = t->display;
    }
    if (opcode) {
        long owner = t ? (long)(t - p->tasks.v) : -2;
        for (uint32_t i = 0; i < p->opcodes.n && !o; i++)
            if (p->opcodes.v[i].owner == owner && strcmp(p->opcodes.v[i].name, opcode) == 0) o = &p->opcodes.v[i];
        for (uint32_t i = 0; i < p->opcodes.n && !o; i++)
            if (p->opcodes.v[i].owner == -1 && strcmp(p->opcodes.v[i].name, opcode) == 0) o = &p->opcodes.v[i];
        if (o) {
            opcode_name = o->value ? o->display : NULL;
        } else {
            size_t i;
            for (i = 0; i < sizeof std_opcodes / sizeof *std_opcodes; i++)
                if (strcmp(std_opcodes[i].qname, opcode) == 0) break;
            if (i == sizeof std_opcodes / sizeof *std_opcodes)
                return bad(m, e, "event %llu: unknown opcode %s", (unsigned long long)id, opcode);
            opcode_name = std_opcodes[i].value ? std_opcodes[i].display : NULL;
        }
    }
    if (tmpl && !(tp = table_find(&p->templates, tmpl)))
        return bad(m, e, "event %llu: unknown template %s", (unsigned long long)id, tmpl);
    if (level && !level_known(p, level)) unknown_ref(m, e, "level", level);
    if (channel && !channel_known(p, channel)) unknown_ref(m, e, "channel", channel);
    if (keywords) check_keywords(m, p, e, keywords);

    if (!(ev = etl_arena_alloc(&m->set->arena, sizeof *ev))) return nomem(m);
    memset(ev, 0, sizeof *ev);
    ev->provider = p->guid;
    ev->key = ETL_KEY_ID;
    ev->id = (uint16_t)id;
    ev->version = (uint8_t)ver;
    ev->source = (uint8_t)m->source;
    ev->provider_name = p->name;
    ev->task_name = task_name;
    ev->opcode_name = opcode_name;
    /* Without a task, the event is named by its symbol, else by its id. */
    part = task_name;
    if (!part && symbol && *symbol) part = symbol;
    if (!part) {
        snprintf(num, sizeof num, "EventID(%llu)", (unsigned long long)id);
        part = num;
    }
    if (!(ev->event_name = etl_schema_event_name(&m->set->arena, p->name, part, opcode_name))) return nomem(m);
    if (tp) {
        ev->fields = tp->ptr;
        ev->field_count = (uint16_t)tp->value;
    }
    {
        char why[256];
        rc = etl_schema_set_add_event(m->set, ev, why, sizeof why);
        if (rc != ETL_OK) return strcmp(why, "out of memory") == 0 ? nomem(m) : bad(m, e, "%s", why);
    }
    return ETL_OK;
}

/* ---------------------------------------------------------------- providers */

static int read_provider(struct mp *m, xmlNodePtr pn)
{
    struct provider p;
    const char *guid;
    struct event_seen *seen = NULL;
    uint32_t nseen = 0, capseen = 0;
    int rc = ETL_OK;
    /* Definitions first, whatever their order in the document (events often come first). */
    static const char *const order[] = { "channels", "levels", "keywords", "maps", "tasks", "opcodes", "templates" };

    memset(&p, 0, sizeof p);
    p.name = attr(m, pn, "name");
    guid = attr(m, pn, "guid");
    if (!p.name || !*p.name) return bad(m, pn, "a provider without a name");
    if (!guid) return bad(m, pn, "provider %s has no guid", p.name);
    if (etl_guid_parse(skip_space(guid), &p.guid) != ETL_OK)
        return bad(m, pn, "provider %s: guid %s is not a GUID", p.name, guid);
    for (uint32_t i = 0; i < m->set->provider_count; i++)
        if (etl_guid_equal(&m->set->providers[i].guid, &p.guid))
            return bad(m, pn, "provider %s: guid %s is that of provider %s too", p.name, guid, m->set->providers[i].name);
    for (size_t k = 0; k < sizeof order / sizeof *order && rc == ETL_OK; k++) {
        for (xmlNodePtr c = pn->children; c && rc == ETL_OK; c = c->next) {
            if (!is_element(c, order[k])) continue;
            switch (k) {
            case 0: rc = read_channels(m, &p, c); break;
            case 1: rc = read_simple(m, &p.levels, c, "level", "value", 255); break;
            case 2: rc = read_simple(m, &p.keywords, c, "keyword", "mask", UINT64_MAX); break;
            case 3: rc = read_maps(m, &p, c); break;
            case 4: rc = read_tasks(m, &p, c); break;
            case 5:
                for (xmlNodePtr o = c->children; o && rc == ETL_OK; o = o->next)
                    if (is_element(o, "opcode")) rc = read_opcode(m, &p, o, -1);
                break;
            default: rc = read_templates(m, &p, c); break;
            }
        }
    }
    if (rc == ETL_OK && etl_schema_set_add_provider(m->set, &p.guid, p.name, m->source) != ETL_OK) rc = nomem(m);
    if (rc == ETL_OK) p.name = m->set->providers[m->set->provider_count - 1].name; /* the set's copy */
    for (xmlNodePtr c = pn->children; c && rc == ETL_OK; c = c->next) {
        if (!is_element(c, "events")) continue;
        for (xmlNodePtr e = c->children; e && rc == ETL_OK; e = e->next)
            if (is_element(e, "event")) rc = read_event(m, &p, e, &seen, &nseen, &capseen);
    }
    if (rc == ETL_OK && m->oom) rc = nomem(m);
    free(seen);
    provider_free(&p);
    return rc;
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static void xml_init(void) { xmlInitParser(); }

int etl_manifest_parse(etl_schema_set *set, const void *xml, size_t size, const char *name, int source, etl_decoder *d,
                       char *err, size_t errsize)
{
    struct mp m;
    xmlParserCtxtPtr ctxt;
    xmlNodePtr inst[64];
    unsigned ninst = 0, nproviders = 0;
    int rc = ETL_OK;

    memset(&m, 0, sizeof m);
    m.name = name ? name : "manifest";
    m.set = set;
    m.source = source;
    m.d = d;
    m.err = err;
    m.errsize = errsize;
    if (size > INT_MAX) return bad(&m, NULL, "%zu bytes: too large for a manifest", size);
    pthread_once(&xml_once, xml_init);
    if (!(ctxt = xmlNewParserCtxt())) return nomem(&m);
    /* No network, no DTD or external entity loaded, nothing printed: errors are read back. */
    m.doc = xmlCtxtReadMemory(ctxt, xml, (int)size, m.name, NULL,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (!m.doc) {
        xmlErrorPtr e = xmlCtxtGetLastError(ctxt);
        char what[256];
        size_t n;
        snprintf(what, sizeof what, "%s", e && e->message ? e->message : "not XML");
        n = strlen(what);
        while (n && (what[n - 1] == '\n' || what[n - 1] == ' ')) what[--n] = '\0';
        snprintf(err, errsize, "%s:%d: not a manifest: XML: %s", m.name, e ? e->line : 0, what);
        xmlFreeParserCtxt(ctxt);
        return ETL_FAILED;
    }
    xmlFreeParserCtxt(ctxt);
    rc = read_strings(&m);
    if (rc == ETL_OK) {
        find_all(xmlDocGetRootElement(m.doc), "instrumentation", inst, &ninst, 64);
        if (ninst > 64) rc = bad(&m, inst[63], "more than 64 instrumentation elements");
        if (rc == ETL_OK && !ninst)
            rc = bad(&m, xmlDocGetRootElement(m.doc), "not a manifest: no instrumentation element");
    }
    for (unsigned i = 0; i < ninst && rc == ETL_OK; i++) {
        for (xmlNodePtr evs = inst[i]->children; evs && rc == ETL_OK; evs = evs->next) {
            if (!is_element(evs, "events")) continue;
            for (xmlNodePtr pn = evs->children; pn && rc == ETL_OK; pn = pn->next) {
                if (!is_element(pn, "provider")) continue;
                rc = read_provider(&m, pn);
                nproviders++;
            }
        }
    }
    if (rc == ETL_OK && !nproviders) rc = bad(&m, inst[0], "no provider in the instrumentation element");
    if (rc == ETL_OK && d && m.unresolved) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: messages naming strings the string table lacks: %u (the first: %s); names used instead",
                 m.name, m.unresolved, m.unresolved_first);
        etl_decoder_warn(d, msg);
    }
    if (rc == ETL_OK && d && m.unknown_refs) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: levels, keywords or channels that events name and the manifest does not define: %u (the first: %s)",
                 m.name, m.unknown_refs, m.unknown_first);
        etl_decoder_warn(d, msg);
    }
    free(m.strings);
    xmlFreeDoc(m.doc);
    return rc;
}

/* ---------------------------------------------------------------- files, directories, defaults */

/* One manifest in memory into the decoder: ETL_OK, ETL_FAILED (message on d), ETL_FATAL. */
static int add_memory(etl_decoder *d, const void *xml, size_t size, const char *name)
{
    etl_schema_set set;
    char err[512];
    int rc;

    etl_schema_set_init(&set);
    rc = etl_manifest_parse(&set, xml, size, name, ETL_SCHEMA_MANIFEST, d, err, sizeof err);
    if (rc == ETL_OK && etl_decoder_adopt(d, &set) != ETL_OK) {
        snprintf(err, sizeof err, "%s: out of memory", name);
        rc = ETL_FATAL;
    }
    etl_schema_set_free(&set);
    if (rc != ETL_OK) etl_decoder_set_error(d, "%s", err);
    return rc;
}

static int add_file(etl_decoder *d, const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    uint8_t *buf;
    size_t n;
    int rc;

    if (!f) {
        etl_decoder_set_error(d, "%s: %s", path, strerror(errno));
        return ETL_FAILED;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        etl_decoder_set_error(d, "%s: not a regular file", path);
        fclose(f);
        return ETL_FAILED;
    }
    if ((uint64_t)st.st_size > MANIFEST_FILE_LIMIT) {
        etl_decoder_set_error(d, "%s: %lld bytes, more than the %u MiB a manifest may have", path, (long long)st.st_size,
                              MANIFEST_FILE_LIMIT >> 20);
        fclose(f);
        return ETL_FAILED;
    }
    if (!(buf = malloc((size_t)st.st_size + 1))) {
        fclose(f);
        etl_decoder_set_error(d, "%s: out of memory", path);
        return ETL_FATAL;
    }
    n = fread(buf, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        etl_decoder_set_error(d, "%s: %s", path, strerror(errno));
        fclose(f);
        free(buf);
        return ETL_FAILED;
    }
    fclose(f);
    rc = add_memory(d, buf, n, path);
    free(buf);
    return rc;
}

static int is_manifest_name(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && n > 4 && (strcasecmp(name + n - 4, ".man") == 0 || strcasecmp(name + n - 4, ".xml") == 0);
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every *.man and *.xml file of dir, in name order (not its subdirectories); a file that does
   not load leaves the others. */
static int add_directory(etl_decoder *d, const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    char **names = NULL, first_err[512] = "";
    size_t n = 0, cap = 0;
    unsigned failed = 0;
    int rc = ETL_OK;

    if (!dp) {
        etl_decoder_set_error(d, "%s: %s", dir, strerror(errno));
        return ETL_FAILED;
    }
    while ((de = readdir(dp)) != NULL) {
        struct stat st;
        char *path;
        if (!is_manifest_name(de->d_name)) continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 16;
            char **nn = realloc(names, c * sizeof *nn);
            if (!nn) {
                rc = ETL_FATAL;
                break;
            }
            names = nn;
            cap = c;
        }
        if (!(path = malloc(strlen(dir) + strlen(de->d_name) + 2))) {
            rc = ETL_FATAL;
            break;
        }
        sprintf(path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            free(path);
            continue;
        }
        names[n++] = path;
    }
    closedir(dp);
    if (rc == ETL_OK) qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n && rc == ETL_OK; i++) {
        int r = add_file(d, names[i]);
        if (r == ETL_FATAL) rc = ETL_FATAL;
        else if (r != ETL_OK && !failed++) snprintf(first_err, sizeof first_err, "%s", etl_decoder_error(d));
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc == ETL_FATAL) {
        etl_decoder_set_error(d, "%s: out of memory", dir);
        return ETL_FATAL;
    }
    if (failed) {
        if (failed == 1) etl_decoder_set_error(d, "%s", first_err);
        else etl_decoder_set_error(d, "%s (and %u more manifests of %s did not load)", first_err, failed - 1, dir);
        return ETL_FAILED;
    }
    return ETL_OK;
}

/* A file or a directory: ETL_OK, ETL_FAILED, ETL_FATAL (out of memory). */
static int add_path(etl_decoder *d, const char *path)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        etl_decoder_set_error(d, "%s: %s", path, strerror(errno));
        return ETL_FAILED;
    }
    return S_ISDIR(st.st_mode) ? add_directory(d, path) : add_file(d, path);
}

int etl_decoder_add_manifest(etl_decoder *d, const char *path)
{
    return add_path(d, path) == ETL_OK ? ETL_OK : ETL_FAILED;
}

int etl_decoder_add_manifest_memory(etl_decoder *d, const void *xml, size_t size, const char *name)
{
    return add_memory(d, xml, size, name ? name : "manifest") == ETL_OK ? ETL_OK : ETL_FAILED;
}

int etl_decoder_add_defaults(etl_decoder *d)
{
    const char *dir = etl_decoder_default_directory(), *env = getenv("ETL_MANIFEST_PATH");
    char first_err[640] = "";
    unsigned failed = 0;
    struct stat st;
    int rc;

    /* The installed manifests first, so that those a user names win (a later provider replaces
       an earlier one). Nothing installed is no fault: the tools run from a build tree too. */
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((rc = add_directory(d, dir)) == ETL_FATAL) return ETL_FATAL;
        if (rc != ETL_OK) {
            failed++;
            snprintf(first_err, sizeof first_err, "%s", etl_decoder_error(d));
            etl_decoder_warn(d, first_err);
        }
    }
    while (env && *env) {
        const char *colon = strchr(env, ':');
        size_t n = colon ? (size_t)(colon - env) : strlen(env);
        if (n) {
            char *path = malloc(n + 1);
            if (!path) return ETL_FATAL;
            memcpy(path, env, n);
            path[n] = '\0';
            rc = add_path(d, path);
            free(path);
            if (rc == ETL_FATAL) return ETL_FATAL;
            if (rc != ETL_OK) {
                char msg[560];
                snprintf(msg, sizeof msg, "ETL_MANIFEST_PATH: %s", etl_decoder_error(d));
                if (!failed++) snprintf(first_err, sizeof first_err, "%s", msg);
                etl_decoder_warn(d, msg);
            }
        }
        env = colon ? colon + 1 : NULL;
    }
    if (!failed) {
        etl_decoder_set_error(d, "%s", "");
        return ETL_OK;
    }
    if (failed == 1) etl_decoder_set_error(d, "%s", first_err);
    else etl_decoder_set_error(d, "%s (and %u more default manifests did not load)", first_err, failed - 1);
    return ETL_WARN;
}
