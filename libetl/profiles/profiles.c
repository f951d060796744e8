/* SPDX-License-Identifier: MIT */
/* Recording profiles: WPR's .wprp files read with libxml2 and resolved (Base=, Operation), the built-in profiles, the kernel flags they give. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "etl/profiles.h"
#include "etl/session.h"
#include "format/format.h"

/* Most definitions (collectors, providers, profiles) one file may hold, and the longest chain
   of Base= (and of references) followed: beyond them the file is refused. */
#define MAX_DEFS 10000
#define MAX_DEPTH 32
#define MAX_FILE (64u << 20)

/* A collector as it is built: the public view plus its growing arrays. */
struct coll {
    etl_wprp_collector c;
    etl_wprp_keyword *kw, *st;
    size_t nkw, capkw, nst, capst;
    etl_wprp_provider *pv;
    size_t npv, cappv;
};

struct prof {
    etl_wprp_profile p;
    struct coll *co;
    size_t nco, capco;
    const char **notes;           /* what Linux cannot honour, noted while resolving */
    size_t nnotes, capnotes;
    etl_wprp_collector *pub;      /* published collectors */
    const char **um;              /* published unmapped list */
};

struct def {
    const char *elem, *id;
    xmlNodePtr node;
};

struct etl_wprp {
    struct prof *pr;
    size_t npr, cappr;
    void **mem;                   /* every string, freed with the set */
    size_t nmem, capmem;
};

struct ctx {
    const char *name;
    char *err;
    size_t errsize;
    etl_wprp *w;
    struct def *defs;             /* the file's definitions, then the built-ins' */
    size_t ndefs, capdefs;
    int oom;
};

/* ---- WPR's system keywords and stacks, and what they are on Linux ---- */

struct kwmap {
    const char *name;
    uint32_t flags;
};

/* SystemProvider Keyword values libetl records (doc/kernel-events.md); any other is unmapped. */
static const struct kwmap keyword_map[] = {
    {"ProcessThread", ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD},
    {"Loader", ETL_KERNEL_IMAGE_LOAD},
    {"CSwitch", ETL_KERNEL_CSWITCH},
    {"ReadyThread", ETL_KERNEL_DISPATCHER},
    {"SampledProfile", ETL_KERNEL_PROFILE},
    {"DiskIO", ETL_KERNEL_DISK_IO},
    {"DiskIOInit", ETL_KERNEL_DISK_IO},
    {"SystemCall", ETL_KERNEL_SYSCALL},
    {"Interrupt", ETL_KERNEL_INTERRUPT},
    {"DPC", ETL_KERNEL_DPC},
    {"NetworkTrace", ETL_KERNEL_NETWORK_TCPIP},
};

/* SystemProvider Keyword values (WPR's documented ones and those its profiles use) of the
   flags the kernel capture has since gained, by the flag's name (etl_kernel_flag_from_name): a
   name this build's capture does not know leaves the keyword unmapped, and says so. */
static const struct {
    const char *name, *flag;
} keyword_flag_names[] = {
    {"FileIO", "file_io"},                 /* EVENT_TRACE_FLAG_FILE_IO: the operations' ends */
    {"FileIOInit", "file_io_init"},        /* FILE_IO_INIT: the operations */
    {"Filename", "disk_file_io"},          /* DISK_FILE_IO: the files' names */
    {"DiskIOInitialization", "disk_io"},   /* (DiskIOInit's documented name) */
    {"VirtualAllocation", "virtual_alloc"},
    {"VAMap", "vamap"},
    {"AllFaults", "memory_page_faults"},   /* MEMORY_PAGE_FAULTS: every fault's kind */
    {"HardFaults", "memory_hard_faults"},  /* MEMORY_HARD_FAULTS */
    {"ProcessCounter", "process_counters"},
};

/* The flag keyword name gives by keyword_flag_names (0: none; *flag the flag's name when it has
   one). */
static uint32_t keyword_by_flag_name(const char *name, const char **flag)
{
    *flag = NULL;
    for (size_t i = 0; i < sizeof keyword_flag_names / sizeof *keyword_flag_names; i++)
        if (strcmp(keyword_flag_names[i].name, name) == 0) {
            *flag = keyword_flag_names[i].flag;
            return etl_kernel_flag_from_name(*flag);
        }
    return 0;
}

/* SystemProvider Stack values: the events whose StackWalk libetl writes. */
static const struct kwmap stack_map[] = {
    {"SampledProfile", ETL_KERNEL_PROFILE},
    {"CSwitch", ETL_KERNEL_CSWITCH},
    {"ReadyThread", ETL_KERNEL_DISPATCHER},
};

static uint32_t map_lookup(const struct kwmap *map, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(map[i].name, name) == 0) return map[i].flags;
    return 0;
}

/* ---- errors and memory ---- */

static int bad(struct ctx *c, xmlNodePtr n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, xmlNodePtr n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    etl_vfail_at(c->err, c->errsize, c->name, n ? xmlGetLineNo(n) : 0L, fmt, ap);
    va_end(ap);
    return ETL_FAILED;
}

static int nomem(struct ctx *c)
{
    snprintf(c->err, c->errsize, "%s: out of memory", c->name);
    c->oom = 1;
    return ETL_FAILED;
}

/* Room for one more element in *arr (n used of *cap): 0, or -1 without memory. */
static int grow(void *arr, size_t *cap, size_t n, size_t size)
{
    void **p = arr;
    size_t ncap;
    void *q;

    if (n < *cap) return 0;
    ncap = *cap ? *cap * 2 : 8;
    if (ncap > SIZE_MAX / size) return -1;
    if (!(q = realloc(*p, ncap * size))) return -1;
    *p = q;
    *cap = ncap;
    return 0;
}

/* A copy of s owned by the set, or NULL without memory. */
static const char *keep(etl_wprp *w, const char *s, size_t len)
{
    char *copy;

    if (grow(&w->mem, &w->capmem, w->nmem, sizeof *w->mem) < 0) return NULL;
    if (!(copy = malloc(len + 1))) return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    w->mem[w->nmem++] = copy;
    return copy;
}

static const char *keepf(etl_wprp *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *keepf(etl_wprp *w, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    return keep(w, buf, strlen(buf));
}

static int is_element(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* The value of attribute name of n, kept by the set; NULL when absent (or *oom set). */
static const char *attr(struct ctx *c, xmlNodePtr n, const char *name)
{
    xmlChar *v;
    const char *s;

    if (!xmlHasProp(n, (const xmlChar *)name)) return NULL;
    if (!(v = xmlGetProp(n, (const xmlChar *)name))) {
        c->oom = 1;
        return NULL;
    }
    s = keep(c->w, (const char *)v, strlen((const char *)v));
    xmlFree(v);
    if (!s) c->oom = 1;
    return s;
}

/* A short form of a value for messages: at most 60 bytes of it. */
static const char *shown(struct ctx *c, const char *s)
{
    size_t n = strlen(s);
    const char *k;

    if (n <= 60) return s;
    k = keepf(c->w, "%.60s... (%zu bytes)", s, n);
    return k ? k : s;
}

/* ---- values ---- */

static int parse_bool(struct ctx *c, xmlNodePtr n, const char *name, int *out)
{
    const char *v = attr(c, n, name);

    if (c->oom) return nomem(c);
    if (!v) return ETL_OK;
    if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0) *out = 1;
    else if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0) *out = 0;
    else return bad(c, n, "%s: %s=\"%s\" is not true or false", (const char *)n->name, name, shown(c, v));
    return ETL_OK;
}

/* An unsigned number (decimal or 0x hex) no larger than max. */
static int parse_uint(struct ctx *c, xmlNodePtr n, const char *name, const char *v, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long x;

    if (!v || !*v || *v == '-' || *v == '+' || *v == ' ') goto no;
    errno = 0;
    x = strtoull(v, &end, 0);
    if (errno || *end) goto no;
    if (x > max) return bad(c, n, "%s: %s=\"%s\" is larger than %llu", (const char *)n->name, name, shown(c, v), (unsigned long long)max);
    *out = x;
    return ETL_OK;
no:
    return bad(c, n, "%s: %s=\"%s\" is not a number", (const char *)n->name, name, v ? shown(c, v) : "");
}

/* The Operation attribute of n: 'S' Set (the default), 'A' Add, 'R' Remove. */
static int operation(struct ctx *c, xmlNodePtr n, char *op)
{
    const char *v = attr(c, n, "Operation");

    if (c->oom) return nomem(c);
    *op = 'S';
    if (!v || strcmp(v, "Set") == 0) return ETL_OK;
    if (strcmp(v, "Add") == 0) *op = 'A';
    else if (strcmp(v, "Remove") == 0) *op = 'R';
    else return bad(c, n, "%s: Operation=\"%s\" is not Set, Add or Remove", (const char *)n->name, shown(c, v));
    return ETL_OK;
}

/* The Value attribute n must have. */
static int value_of(struct ctx *c, xmlNodePtr n, const char **out)
{
    *out = attr(c, n, "Value");
    if (c->oom) return nomem(c);
    if (!*out) return bad(c, n, "%s without its Value", (const char *)n->name);
    return ETL_OK;
}

/* ---- definitions ---- */

static xmlNodePtr find_def(struct ctx *c, const char *elem, const char *id)
{
    for (size_t i = 0; i < c->ndefs; i++)
        if (strcmp(c->defs[i].elem, elem) == 0 && strcmp(c->defs[i].id, id) == 0) return c->defs[i].node;
    return NULL;
}

static const char *const def_elements[] = {"SystemCollector", "EventCollector", "HeapEventCollector", "SystemProvider",
                                           "EventProvider", "HeapEventProvider", "Profile"};

static int is_def(xmlNodePtr n)
{
    for (size_t i = 0; i < sizeof def_elements / sizeof *def_elements; i++)
        if (is_element(n, def_elements[i])) return 1;
    return 0;
}

/* The definitions of doc's WindowsPerformanceRecorder/Profiles into c->defs; with profiles,
   its Profile elements are noted there too (the caller resolves them). */
static int index_doc(struct ctx *c, xmlDocPtr doc, int own)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    size_t first = c->ndefs;
    int nprofiles = 0;

    if (!root || !is_element(root, "WindowsPerformanceRecorder"))
        return bad(c, root, "not a WPR profile file: the root element is <%s>, not <WindowsPerformanceRecorder>",
                   root ? (const char *)root->name : "");
    for (xmlNodePtr ps = root->children; ps; ps = ps->next) {
        if (!is_element(ps, "Profiles")) continue;
        for (xmlNodePtr d = ps->children; d; d = d->next) {
            const char *id;
            if (d->type != XML_ELEMENT_NODE) continue;
            if (!is_def(d)) return bad(c, d, "<%s> is not a WPR definition (a collector, provider or profile)", (const char *)d->name);
            id = attr(c, d, "Id");
            if (c->oom) return nomem(c);
            if (!id || !*id) return bad(c, d, "%s without its Id", (const char *)d->name);
            if (own) {
                for (size_t i = first; i < c->ndefs; i++)
                    if (strcmp(c->defs[i].elem, (const char *)d->name) == 0 && strcmp(c->defs[i].id, id) == 0)
                        return bad(c, d, "%s Id=\"%s\" is defined twice (first on line %ld)", (const char *)d->name,
                                   shown(c, id), xmlGetLineNo(c->defs[i].node));
            }
            if (c->ndefs - first >= MAX_DEFS) return bad(c, d, "more than %d definitions", MAX_DEFS);
            if (grow(&c->defs, &c->capdefs, c->ndefs, sizeof *c->defs) < 0) return nomem(c);
            c->defs[c->ndefs].elem = (const char *)d->name;
            c->defs[c->ndefs].id = id;
            c->defs[c->ndefs].node = d;
            c->ndefs++;
            if (is_element(d, "Profile")) nprofiles++;
        }
    }
    if (own && !nprofiles) return bad(c, root, "no Profile in WindowsPerformanceRecorder/Profiles");
    return ETL_OK;
}

/* ---- collectors ---- */

static int note(struct ctx *c, struct prof *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int note(struct ctx *c, struct prof *p, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    const char *s;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < p->nnotes; i++)
        if (strcmp(p->notes[i], buf) == 0) return ETL_OK;
    if (!(s = keep(c->w, buf, strlen(buf)))) return nomem(c);
    if (grow(&p->notes, &p->capnotes, p->nnotes, sizeof *p->notes) < 0) return nomem(c);
    p->notes[p->nnotes++] = s;
    return ETL_OK;
}


/* A BufferSize or Buffers element e into co: 1 taken, 0 not one of them, -1 malformed. */
static int buffer_setting(struct ctx *c, xmlNodePtr e, struct coll *co)
{
    const char *v;
    uint64_t x;

    if (is_element(e, "BufferSize")) {
        if (value_of(c, e, &v) != ETL_OK || parse_uint(c, e, "Value", v, 1024, &x) != ETL_OK) return -1;
        if (!x) return bad(c, e, "BufferSize: Value=\"0\": a buffer is 1 to 1024 KB"), -1;
        co->c.buffer_size_kb = (uint32_t)x;
        return 1;
    }
    if (is_element(e, "Buffers")) {
        int pct = 0;
        if (parse_bool(c, e, "PercentageOfTotalMemory", &pct) != ETL_OK) return -1;
        if (value_of(c, e, &v) != ETL_OK || parse_uint(c, e, "Value", v, pct ? 100 : 1000000, &x) != ETL_OK) return -1;
        if (!x) return bad(c, e, "Buffers: Value=\"0\""), -1;
        co->c.buffers = (uint32_t)x;
        co->c.buffers_percent = pct;
        return 1;
    }
    return 0;
}

/* A SystemCollector's or EventCollector's own settings, its Base= first. */
static int collector_def(struct ctx *c, struct prof *p, xmlNodePtr d, struct coll *co, int depth)
{
    const char *base, *v;

    if (depth > MAX_DEPTH) return bad(c, d, "%s: Base= goes deeper than %d (a cycle?)", (const char *)d->name, MAX_DEPTH);
    base = attr(c, d, "Base");
    if (c->oom) return nomem(c);
    if (base && *base) {
        xmlNodePtr b = find_def(c, (const char *)d->name, base);
        if (!b) return bad(c, d, "%s: Base=\"%s\" names no %s", (const char *)d->name, shown(c, base), (const char *)d->name);
        if (collector_def(c, p, b, co, depth + 1) != ETL_OK) return ETL_FAILED;
    }
    if ((v = attr(c, d, "Id"))) co->c.id = v;
    if ((v = attr(c, d, "Name"))) co->c.name = v;
    if ((v = attr(c, d, "FileName"))) co->c.file_name = v;
    if (c->oom) return nomem(c);
    {
        static const char *const modes[] = {"Private", "ProcessPrivate", "Secure", "Realtime"};
        for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
            int on = 0;
            if (parse_bool(c, d, modes[i], &on) != ETL_OK) return ETL_FAILED;
            if (on && note(c, p, "%s %s: %s=\"true\" not taken", (const char *)d->name, shown(c, co->c.id ? co->c.id : "?"),
                           modes[i]) != ETL_OK)
                return ETL_FAILED;
        }
    }
    for (xmlNodePtr e = d->children; e; e = e->next) {
        int r = buffer_setting(c, e, co);
        if (r < 0) return ETL_FAILED;
        if (!r && e->type == XML_ELEMENT_NODE &&
            note(c, p, "%s %s: <%s> not taken", (const char *)d->name, shown(c, co->c.id ? co->c.id : "?"), (const char *)e->name) != ETL_OK)
            return ETL_FAILED;
    }
    if (!co->c.name) return bad(c, d, "%s Id=\"%s\" without its Name", (const char *)d->name, shown(c, co->c.id));
    return ETL_OK;
}

static struct coll *find_coll(struct prof *p, int kind, const char *id)
{
    for (size_t i = 0; i < p->nco; i++)
        if (p->co[i].c.kind == kind && strcmp(p->co[i].c.id, id) == 0) return &p->co[i];
    return NULL;
}

static void coll_free(struct coll *co)
{
    free(co->kw);
    free(co->st);
    free(co->pv);
}

static void coll_remove(struct prof *p, struct coll *co)
{
    size_t i = (size_t)(co - p->co);
    coll_free(co);
    memmove(&p->co[i], &p->co[i + 1], (p->nco - i - 1) * sizeof *p->co);
    p->nco--;
}

/* Adds (op 'S' or 'A') or removes ('R') name in the list (*list, *n of *cap). */
static int list_apply(struct ctx *c, etl_wprp_keyword **list, size_t *n, size_t *cap, const char *name, char op)
{
    size_t i;

    for (i = 0; i < *n; i++)
        if (strcmp((*list)[i].name, name) == 0) break;
    if (op == 'R') {
        if (i < *n) {
            memmove(&(*list)[i], &(*list)[i + 1], (*n - i - 1) * sizeof **list);
            (*n)--;
        }
        return ETL_OK;
    }
    if (i < *n) return ETL_OK;
    if (grow(list, cap, *n, sizeof **list) < 0) return nomem(c);
    (*list)[*n].name = name;
    (*list)[*n].flags = 0;
    (*n)++;
    return ETL_OK;
}

/* A SystemProvider's keywords and stacks into kw and st (Base= first), each list with its
   Operation. */
struct kwlists {
    etl_wprp_keyword *kw, *st;
    size_t nkw, capkw, nst, capst;
};

static int sysprov_def(struct ctx *c, struct prof *p, xmlNodePtr d, struct kwlists *l, int depth)
{
    const char *base;

    if (depth > MAX_DEPTH) return bad(c, d, "SystemProvider: Base= goes deeper than %d (a cycle?)", MAX_DEPTH);
    base = attr(c, d, "Base");
    if (c->oom) return nomem(c);
    if (base && *base) {
        xmlNodePtr b = find_def(c, "SystemProvider", base);
        if (!b) return bad(c, d, "SystemProvider: Base=\"%s\" names no SystemProvider", shown(c, base));
        if (sysprov_def(c, p, b, l, depth + 1) != ETL_OK) return ETL_FAILED;
    }
    for (xmlNodePtr e = d->children; e; e = e->next) {
        int keywords = is_element(e, "Keywords"), stacks = is_element(e, "Stacks");
        char op;
        if (!keywords && !stacks) {
            const char *pid = attr(c, d, "Id");
            if (c->oom) return nomem(c);
            if (e->type == XML_ELEMENT_NODE &&
                note(c, p, "SystemProvider %s: <%s> (Linux has no such thing)", pid ? shown(c, pid) : "?", (const char *)e->name) != ETL_OK)
                return ETL_FAILED;
            continue;
        }
        if (operation(c, e, &op) != ETL_OK) return ETL_FAILED;
        if (op == 'S') {
            if (keywords) l->nkw = 0;
            else l->nst = 0;
        }
        for (xmlNodePtr k = e->children; k; k = k->next) {
            const char *v;
            if (k->type != XML_ELEMENT_NODE) continue;
            if (keywords && is_element(k, "CustomKeyword")) {
                /* A raw group mask of the NT Kernel Logger's: no Linux events stand behind it. */
                const char *pid = attr(c, d, "Id");
                if (value_of(c, k, &v) != ETL_OK) return ETL_FAILED;
                if (note(c, p, "SystemProvider %s: CustomKeyword %s (a raw group mask) not taken", pid ? shown(c, pid) : "?",
                         shown(c, v)) != ETL_OK)
                    return ETL_FAILED;
                continue;
            }
            if (!is_element(k, keywords ? "Keyword" : "Stack"))
                return bad(c, k, "<%s> in <%s>: only <%s> belongs there", (const char *)k->name, (const char *)e->name,
                           keywords ? "Keyword" : "Stack");
            if (value_of(c, k, &v) != ETL_OK) return ETL_FAILED;
            if (keywords ? list_apply(c, &l->kw, &l->nkw, &l->capkw, v, op) : list_apply(c, &l->st, &l->nst, &l->capst, v, op))
                return ETL_FAILED;
        }
    }
    return ETL_OK;
}

/* One event provider's settings (Base= first). */
static int evprov_def(struct ctx *c, struct prof *p, xmlNodePtr d, etl_wprp_provider *pv, int depth)
{
    const char *base, *v;
    uint64_t x;

    if (depth > MAX_DEPTH) return bad(c, d, "EventProvider: Base= goes deeper than %d (a cycle?)", MAX_DEPTH);
    base = attr(c, d, "Base");
    if (c->oom) return nomem(c);
    if (base && *base) {
        xmlNodePtr b = find_def(c, "EventProvider", base);
        if (!b) return bad(c, d, "EventProvider: Base=\"%s\" names no EventProvider", shown(c, base));
        if (evprov_def(c, p, b, pv, depth + 1) != ETL_OK) return ETL_FAILED;
    }
    if ((v = attr(c, d, "Id"))) pv->id = v;
    if ((v = attr(c, d, "Name"))) pv->name = v;
    if (c->oom) return nomem(c);
    if ((v = attr(c, d, "Level"))) {
        if (parse_uint(c, d, "Level", v, 255, &x) != ETL_OK) return ETL_FAILED;
        pv->level = (uint8_t)x;
    }
    if (parse_bool(c, d, "Stack", &pv->stack) != ETL_OK || parse_bool(c, d, "NonPagedMemory", &pv->non_paged_memory) != ETL_OK)
        return ETL_FAILED;
    for (xmlNodePtr e = d->children; e; e = e->next) {
        if (is_element(e, "Keywords")) {
            char op;
            uint64_t mask = 0;
            if (operation(c, e, &op) != ETL_OK) return ETL_FAILED;
            for (xmlNodePtr k = e->children; k; k = k->next) {
                if (k->type != XML_ELEMENT_NODE) continue;
                if (!is_element(k, "Keyword"))
                    return bad(c, k, "<%s> in <Keywords>: only <Keyword> belongs there", (const char *)k->name);
                if (value_of(c, k, &v) != ETL_OK || parse_uint(c, k, "Value", v, UINT64_MAX, &x) != ETL_OK) return ETL_FAILED;
                mask |= x;
            }
            if (op == 'S') pv->keywords = mask;
            else if (op == 'A') pv->keywords |= mask;
            else pv->keywords &= ~mask;
        } else if (is_element(e, "CaptureStateOnStart")) {
            pv->capture_state_on_start = 1;
        } else if (is_element(e, "CaptureStateOnSave")) {
            pv->capture_state_on_save = 1;
        } else if (e->type == XML_ELEMENT_NODE) {
            if (note(c, p, "EventProvider %s: <%s> not taken", shown(c, pv->name ? pv->name : pv->id ? pv->id : "?"),
                     (const char *)e->name) != ETL_OK)
                return ETL_FAILED;
        }
    }
    if (!pv->name || !*pv->name) return bad(c, d, "EventProvider Id=\"%s\" without its Name", shown(c, pv->id ? pv->id : ""));
    pv->has_guid = etl_guid_parse_provider(pv->name, &pv->guid) == ETL_OK;
    return ETL_OK;
}

/* The collector of a SystemCollectorId or EventCollectorId reference in p, made from its
   definition when p has none yet; NULL when op is Remove and there is none (*rc ETL_OK). */
static struct coll *collector_for(struct ctx *c, struct prof *p, xmlNodePtr ref, int kind, char op, int *rc)
{
    const char *elem = kind == ETL_WPRP_SYSTEM_COLLECTOR ? "SystemCollector" : "EventCollector";
    const char *id;
    xmlNodePtr d;
    struct coll *co, fresh;

    *rc = ETL_FAILED;
    if (value_of(c, ref, &id) != ETL_OK) return NULL;
    if (!(d = find_def(c, elem, id))) {
        bad(c, ref, "%s Value=\"%s\" names no %s", (const char *)ref->name, shown(c, id), elem);
        return NULL;
    }
    if ((co = find_coll(p, kind, id))) {
        *rc = ETL_OK;
        return co;
    }
    if (op == 'R') {
        *rc = ETL_OK;
        return NULL;
    }
    memset(&fresh, 0, sizeof fresh);
    fresh.c.kind = kind;
    if (collector_def(c, p, d, &fresh, 0) != ETL_OK) return NULL;
    fresh.c.id = id; /* referenced by the Id the profile names */
    if (kind == ETL_WPRP_SYSTEM_COLLECTOR) {
        /* One system logger of a name: a second collector naming it adds to the first. */
        for (size_t i = 0; i < p->nco; i++)
            if (p->co[i].c.kind == kind && strcmp(p->co[i].c.name, fresh.c.name) == 0) {
                *rc = ETL_OK;
                return &p->co[i];
            }
        for (size_t i = 0; i < p->nco; i++)
            if (p->co[i].c.kind == kind &&
                note(c, p, "SystemCollector %s (\"%s\"): a second system logger beside \"%s\" (libetl records one kernel session)",
                     shown(c, id), shown(c, fresh.c.name), p->co[i].c.name) != ETL_OK)
                return NULL;
    }
    if (grow(&p->co, &p->capco, p->nco, sizeof *p->co) < 0) {
        nomem(c);
        return NULL;
    }
    p->co[p->nco] = fresh;
    *rc = ETL_OK;
    return &p->co[p->nco++];
}

static int apply_sysprov(struct ctx *c, struct prof *p, struct coll *co, xmlNodePtr d, char op)
{
    struct kwlists l;
    int rc;

    memset(&l, 0, sizeof l);
    rc = sysprov_def(c, p, d, &l, 0);
    for (size_t i = 0; i < l.nkw && rc == ETL_OK; i++)
        rc = list_apply(c, &co->kw, &co->nkw, &co->capkw, l.kw[i].name, op == 'R' ? 'R' : 'A');
    for (size_t i = 0; i < l.nst && rc == ETL_OK; i++)
        rc = list_apply(c, &co->st, &co->nst, &co->capst, l.st[i].name, op == 'R' ? 'R' : 'A');
    free(l.kw);
    free(l.st);
    return rc;
}

static int apply_evprov(struct ctx *c, struct prof *p, struct coll *co, xmlNodePtr d, char op)
{
    etl_wprp_provider pv;
    size_t i;

    memset(&pv, 0, sizeof pv);
    pv.level = 5;
    if (evprov_def(c, p, d, &pv, 0) != ETL_OK) return ETL_FAILED;
    for (i = 0; i < co->npv; i++)
        if (strcmp(co->pv[i].id, pv.id) == 0 || (co->pv[i].has_guid && pv.has_guid && etl_guid_equal(&co->pv[i].guid, &pv.guid)))
            break;
    if (op == 'R') {
        if (i < co->npv) {
            memmove(&co->pv[i], &co->pv[i + 1], (co->npv - i - 1) * sizeof *co->pv);
            co->npv--;
        }
        return ETL_OK;
    }
    if (i < co->npv) {
        co->pv[i] = pv; /* the later definition wins */
        return ETL_OK;
    }
    if (grow(&co->pv, &co->cappv, co->npv, sizeof *co->pv) < 0) return nomem(c);
    co->pv[co->npv++] = pv;
    return ETL_OK;
}

/* The providers of an EventProviders element (by Id or inline) into co. */
static int event_providers(struct ctx *c, struct prof *p, struct coll *co, xmlNodePtr eps, char op)
{
    for (xmlNodePtr e = eps->children; e; e = e->next) {
        xmlNodePtr d = e;
        if (e->type != XML_ELEMENT_NODE) continue;
        if (is_element(e, "EventProviderId")) {
            const char *id;
            if (value_of(c, e, &id) != ETL_OK) return ETL_FAILED;
            if (!(d = find_def(c, "EventProvider", id))) return bad(c, e, "EventProviderId Value=\"%s\" names no EventProvider", shown(c, id));
        } else if (!is_element(e, "EventProvider")) {
            return bad(c, e, "<%s> in <EventProviders>: only <EventProvider> and <EventProviderId> belong there", (const char *)e->name);
        } else {
            const char *id = attr(c, e, "Id");
            if (c->oom) return nomem(c);
            if (!id || !*id) return bad(c, e, "EventProvider without its Id");
        }
        if (apply_evprov(c, p, co, d, op) != ETL_OK) return ETL_FAILED;
    }
    return ETL_OK;
}

/* One Collectors element of a profile, with its Operation. */
static int collectors(struct ctx *c, struct prof *p, xmlNodePtr cs)
{
    char op;

    if (operation(c, cs, &op) != ETL_OK) return ETL_FAILED;
    if (op == 'S') {
        for (size_t i = 0; i < p->nco; i++) coll_free(&p->co[i]);
        p->nco = 0;
    }
    for (xmlNodePtr r = cs->children; r; r = r->next) {
        int kind, rc, any = 0;
        struct coll *co;
        if (r->type != XML_ELEMENT_NODE) continue;
        if (is_element(r, "SystemCollectorId")) kind = ETL_WPRP_SYSTEM_COLLECTOR;
        else if (is_element(r, "EventCollectorId")) kind = ETL_WPRP_EVENT_COLLECTOR;
        else if (is_element(r, "HeapEventCollectorId")) {
            const char *v = attr(c, r, "Value");
            if (c->oom) return nomem(c);
            if (note(c, p, "HeapEventCollector %s: heap tracing is Windows-only", v ? shown(c, v) : "?") != ETL_OK) return ETL_FAILED;
            continue;
        } else
            return bad(c, r, "<%s> in <Collectors>: not a collector reference", (const char *)r->name);
        co = collector_for(c, p, r, kind, op, &rc);
        if (rc != ETL_OK) return ETL_FAILED;
        for (xmlNodePtr e = r->children; e; e = e->next) {
            if (e->type != XML_ELEMENT_NODE) continue;
            if (is_element(e, "BufferSize") || is_element(e, "Buffers")) {
                if (co && buffer_setting(c, e, co) < 0) return ETL_FAILED;
                continue;
            }
            any = 1;
            if (!co) continue;
            if (kind == ETL_WPRP_SYSTEM_COLLECTOR && (is_element(e, "SystemProviderId") || is_element(e, "SystemProvider"))) {
                xmlNodePtr d = e;
                if (is_element(e, "SystemProviderId")) {
                    const char *id;
                    if (value_of(c, e, &id) != ETL_OK) return ETL_FAILED;
                    if (!(d = find_def(c, "SystemProvider", id)))
                        return bad(c, e, "SystemProviderId Value=\"%s\" names no SystemProvider", shown(c, id));
                }
                if (apply_sysprov(c, p, co, d, op) != ETL_OK) return ETL_FAILED;
            } else if (kind == ETL_WPRP_EVENT_COLLECTOR && is_element(e, "EventProviders")) {
                char eop = op;
                if (xmlHasProp(e, (const xmlChar *)"Operation") && operation(c, e, &eop) != ETL_OK) return ETL_FAILED;
                if (eop == 'S' && op != 'S') co->npv = 0;
                if (event_providers(c, p, co, e, eop) != ETL_OK) return ETL_FAILED;
            } else {
                return bad(c, e, "<%s> in <%s>: not a provider of this collector", (const char *)e->name, (const char *)r->name);
            }
        }
        if (op == 'R' && co && !any) coll_remove(p, co);
    }
    return ETL_OK;
}

static void prof_free(struct prof *p)
{
    for (size_t i = 0; i < p->nco; i++) coll_free(&p->co[i]);
    free(p->co);
    free(p->notes);
    free(p->pub);
    free(p->um);
}

static int check_choice(struct ctx *c, xmlNodePtr d, const char *name, const char *v, const char *a, const char *b)
{
    if (!v || strcmp(v, a) == 0 || strcmp(v, b) == 0) return ETL_OK;
    return bad(c, d, "Profile: %s=\"%s\" is not %s or %s", name, shown(c, v), a, b);
}

/* Resolves Profile d into *p (empty on entry): its Base= first, then its own settings. */
static int profile_def(struct ctx *c, xmlNodePtr d, struct prof *p, int depth)
{
    const char *base, *v;

    if (depth > MAX_DEPTH) return bad(c, d, "Profile: Base= goes deeper than %d (a cycle?)", MAX_DEPTH);
    base = attr(c, d, "Base");
    if (c->oom) return nomem(c);
    if (base && *base) {
        xmlNodePtr b = find_def(c, "Profile", base);
        if (!b) return bad(c, d, "Profile: Base=\"%s\" names no Profile (of this file or built in)", shown(c, base));
        if (profile_def(c, b, p, depth + 1) != ETL_OK) return ETL_FAILED;
    }
    if ((v = attr(c, d, "Id"))) p->p.id = v;
    if ((v = attr(c, d, "Name"))) p->p.name = v;
    if ((v = attr(c, d, "Description"))) p->p.description = v;
    if ((v = attr(c, d, "DetailLevel"))) {
        if (check_choice(c, d, "DetailLevel", v, "Light", "Verbose") != ETL_OK) return ETL_FAILED;
        p->p.detail_level = v;
    }
    if ((v = attr(c, d, "LoggingMode"))) {
        if (check_choice(c, d, "LoggingMode", v, "File", "Memory") != ETL_OK) return ETL_FAILED;
        p->p.logging_mode = v;
    }
    if (c->oom) return nomem(c);
    for (xmlNodePtr e = d->children; e; e = e->next) {
        if (is_element(e, "Collectors")) {
            if (collectors(c, p, e) != ETL_OK) return ETL_FAILED;
        } else if (e->type == XML_ELEMENT_NODE && !is_element(e, "ProblemCategories")) {
            if (note(c, p, "Profile %s: <%s> ignored", shown(c, p->p.id), (const char *)e->name) != ETL_OK) return ETL_FAILED;
        }
    }
    return ETL_OK;
}

/* The kernel flags of the system collector and the unmapped list, then the public view. */
static int publish(struct ctx *c, struct prof *p)
{
    for (size_t i = 0; i < p->nco; i++) {
        struct coll *co = &p->co[i];
        co->c.kernel_flags = co->c.stackwalk_flags = 0;
        for (size_t k = 0; k < co->nkw; k++) {
            const char *flag = NULL;
            co->kw[k].flags = map_lookup(keyword_map, sizeof keyword_map / sizeof *keyword_map, co->kw[k].name);
            if (!co->kw[k].flags) co->kw[k].flags = keyword_by_flag_name(co->kw[k].name, &flag);
            co->c.kernel_flags |= co->kw[k].flags;
            if (!co->kw[k].flags && flag) {
                if (note(c, p, "SystemProvider keyword %s: its kernel flag %s is not in this build of libetl", co->kw[k].name, flag) != ETL_OK)
                    return ETL_FAILED;
            } else if (!co->kw[k].flags && note(c, p, "SystemProvider keyword %s: Linux cannot record it", shown(c, co->kw[k].name)) != ETL_OK)
                return ETL_FAILED;
        }
        for (size_t k = 0; k < co->nst; k++) {
            co->st[k].flags = map_lookup(stack_map, sizeof stack_map / sizeof *stack_map, co->st[k].name);
            if (!co->st[k].flags) {
                if (note(c, p, "SystemProvider stack %s: Linux cannot walk stacks on it", shown(c, co->st[k].name)) != ETL_OK)
                    return ETL_FAILED;
            } else if (!(co->st[k].flags & co->c.kernel_flags)) {
                if (note(c, p, "SystemProvider stack %s: its keyword is not enabled", co->st[k].name) != ETL_OK) return ETL_FAILED;
            }
            co->c.stackwalk_flags |= co->st[k].flags & co->c.kernel_flags;
        }
        for (size_t k = 0; k < co->npv; k++) {
            const etl_wprp_provider *pv = &co->pv[k];
            const char *nm = shown(c, pv->name);
            if (!pv->has_guid && note(c, p, "EventProvider %s: a name libetl knows no GUID of (name it by GUID)", nm) != ETL_OK)
                return ETL_FAILED;
            if (pv->non_paged_memory && note(c, p, "EventProvider %s: NonPagedMemory (no such memory on Linux)", nm) != ETL_OK)
                return ETL_FAILED;
            if (pv->capture_state_on_start && note(c, p, "EventProvider %s: CaptureStateOnStart (no rundown request on Linux)", nm) != ETL_OK)
                return ETL_FAILED;
            if (pv->capture_state_on_save && note(c, p, "EventProvider %s: CaptureStateOnSave (no rundown request on Linux)", nm) != ETL_OK)
                return ETL_FAILED;
        }
        co->c.keywords = co->kw;
        co->c.keyword_count = co->nkw;
        co->c.stacks = co->st;
        co->c.stack_count = co->nst;
        co->c.providers = co->pv;
        co->c.provider_count = co->npv;
    }
    if (p->nco && !(p->pub = malloc(p->nco * sizeof *p->pub))) return nomem(c);
    for (size_t i = 0; i < p->nco; i++) p->pub[i] = p->co[i].c;
    if (p->nnotes && !(p->um = malloc(p->nnotes * sizeof *p->um))) return nomem(c);
    for (size_t i = 0; i < p->nnotes; i++) p->um[i] = p->notes[i];
    p->p.collectors = p->pub;
    p->p.collector_count = p->nco;
    p->p.unmapped = p->um;
    p->p.unmapped_count = p->nnotes;
    if (!p->p.detail_level) p->p.detail_level = "Verbose";
    if (!p->p.logging_mode) p->p.logging_mode = "File";
    if (!p->p.description) p->p.description = "";
    return ETL_OK;
}

/* ---- the built-in profiles ---- */

/* libetl's own profiles under WPR's names and ids, so that a .wprp's Base= finds them. Buffer
   sizes are libetl's choice. */
static const char builtin_wprp[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<WindowsPerformanceRecorder Version=\"1.0\" Author=\"libetl\">\n"
    " <Profiles>\n"
    "  <SystemCollector Id=\"SystemCollector_WPRSystemCollectorInFile\" Name=\"NT Kernel Logger\">\n"
    "   <BufferSize Value=\"1024\"/><Buffers Value=\"160\"/>\n"
    "  </SystemCollector>\n"
    "  <SystemCollector Id=\"SystemCollector_WPRSystemCollectorInMemory\" Name=\"NT Kernel Logger\">\n"
    "   <BufferSize Value=\"1024\"/><Buffers Value=\"3\" PercentageOfTotalMemory=\"true\"/>\n"
    "  </SystemCollector>\n"
    "  <EventCollector Id=\"EventCollector_WPREventCollectorInFile\" Name=\"WPR Event Collector\">\n"
    "   <BufferSize Value=\"256\"/><Buffers Value=\"64\"/>\n"
    "  </EventCollector>\n"
    "  <EventCollector Id=\"EventCollector_WPREventCollectorInMemory\" Name=\"WPR Event Collector\">\n"
    "   <BufferSize Value=\"256\"/><Buffers Value=\"1\" PercentageOfTotalMemory=\"true\"/>\n"
    "  </EventCollector>\n"
    "  <SystemProvider Id=\"SystemProvider_Base\">\n"
    "   <Keywords><Keyword Value=\"ProcessThread\"/><Keyword Value=\"Loader\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_CPU_Light\" Base=\"SystemProvider_Base\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"CSwitch\"/><Keyword Value=\"ReadyThread\"/>"
    "<Keyword Value=\"SampledProfile\"/><Keyword Value=\"CpuConfig\"/></Keywords>\n"
    "   <Stacks><Stack Value=\"SampledProfile\"/></Stacks>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_CPU_Verbose\" Base=\"SystemProvider_CPU_Light\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"Interrupt\"/><Keyword Value=\"DPC\"/></Keywords>\n"
    "   <Stacks Operation=\"Add\"><Stack Value=\"CSwitch\"/><Stack Value=\"ReadyThread\"/></Stacks>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_DiskIO_Light\" Base=\"SystemProvider_Base\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"DiskIO\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_DiskIO_Verbose\" Base=\"SystemProvider_DiskIO_Light\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"DiskIOInit\"/><Keyword Value=\"HardFaults\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_FileIO_Light\" Base=\"SystemProvider_Base\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"FileIO\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_FileIO_Verbose\" Base=\"SystemProvider_FileIO_Light\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"FileIOInit\"/><Keyword Value=\"DiskIO\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_Network_Light\" Base=\"SystemProvider_Base\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"NetworkTrace\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_Network_Verbose\" Base=\"SystemProvider_Network_Light\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"CSwitch\"/><Keyword Value=\"SystemCall\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_General_Light\" Base=\"SystemProvider_CPU_Light\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"DiskIO\"/><Keyword Value=\"MemoryInfo\"/></Keywords>\n"
    "  </SystemProvider>\n"
    "  <SystemProvider Id=\"SystemProvider_General_Verbose\" Base=\"SystemProvider_CPU_Verbose\">\n"
    "   <Keywords Operation=\"Add\"><Keyword Value=\"DiskIO\"/><Keyword Value=\"DiskIOInit\"/><Keyword Value=\"FileIO\"/>"
    "<Keyword Value=\"HardFaults\"/><Keyword Value=\"MemoryInfo\"/><Keyword Value=\"VirtualAllocation\"/></Keywords>\n"
    "  </SystemProvider>\n"
#define BUILTIN_PROFILE(N, D, DESC) \
    "  <Profile Id=\"" N "." D ".File\" Name=\"" N "\" DetailLevel=\"" D "\" LoggingMode=\"File\" Description=\"" DESC "\">\n" \
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInFile\">" \
    "<SystemProviderId Value=\"SystemProvider_" N "_" D "\"/></SystemCollectorId></Collectors>\n" \
    "  </Profile>\n" \
    "  <Profile Id=\"" N "." D ".Memory\" Base=\"" N "." D ".File\" LoggingMode=\"Memory\">\n" \
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInMemory\">" \
    "<SystemProviderId Value=\"SystemProvider_" N "_" D "\"/></SystemCollectorId></Collectors>\n" \
    "  </Profile>\n"
    BUILTIN_PROFILE("CPU", "Light", "CPU usage: samples, context switches")
    BUILTIN_PROFILE("CPU", "Verbose", "CPU usage: samples, context switches, with their stacks")
    BUILTIN_PROFILE("DiskIO", "Light", "Disk I/O")
    BUILTIN_PROFILE("DiskIO", "Verbose", "Disk I/O with its issue")
    BUILTIN_PROFILE("FileIO", "Light", "File I/O")
    BUILTIN_PROFILE("FileIO", "Verbose", "File I/O with its issue and the disk")
    BUILTIN_PROFILE("Network", "Light", "Networking")
    BUILTIN_PROFILE("Network", "Verbose", "Networking with the system calls")
    "  <Profile Id=\"GeneralProfile.Light.File\" Name=\"GeneralProfile\" DetailLevel=\"Light\" LoggingMode=\"File\""
    " Description=\"First level triage\">\n"
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInFile\">"
    "<SystemProviderId Value=\"SystemProvider_General_Light\"/></SystemCollectorId></Collectors>\n"
    "  </Profile>\n"
    "  <Profile Id=\"GeneralProfile.Light.Memory\" Base=\"GeneralProfile.Light.File\" LoggingMode=\"Memory\">\n"
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInMemory\">"
    "<SystemProviderId Value=\"SystemProvider_General_Light\"/></SystemCollectorId></Collectors>\n"
    "  </Profile>\n"
    "  <Profile Id=\"GeneralProfile.Verbose.File\" Name=\"GeneralProfile\" DetailLevel=\"Verbose\" LoggingMode=\"File\""
    " Description=\"First level triage\">\n"
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInFile\">"
    "<SystemProviderId Value=\"SystemProvider_General_Verbose\"/></SystemCollectorId></Collectors>\n"
    "  </Profile>\n"
    "  <Profile Id=\"GeneralProfile.Verbose.Memory\" Base=\"GeneralProfile.Verbose.File\" LoggingMode=\"Memory\">\n"
    "   <Collectors><SystemCollectorId Value=\"SystemCollector_WPRSystemCollectorInMemory\">"
    "<SystemProviderId Value=\"SystemProvider_General_Verbose\"/></SystemCollectorId></Collectors>\n"
    "  </Profile>\n"
#undef BUILTIN_PROFILE
    " </Profiles>\n"
    "</WindowsPerformanceRecorder>\n";

/* WPR's profiles that Linux cannot record at all, and why. */
static const struct {
    const char *name, *why;
} builtin_unavailable[] = {
    {"Heap", "heap tracing hooks the Windows heap manager"},
    {"Pool", "pool tracing follows the Windows kernel's pool allocations"},
    {"Registry", "Linux has no registry"},
    {"Handle", "Windows kernel object handles have no Linux counterpart"},
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static void xml_init(void) { xmlInitParser(); }

/* The XML reader's first error (the later ones follow from it): its line and message. */
struct first_error {
    int set, line;
    char what[256];
};

#if LIBXML_VERSION >= 21200
static void first_error(void *data, const xmlError *e)
#else
static void first_error(void *data, xmlErrorPtr e)
#endif
{
    xmlParserCtxtPtr pc = data;
    struct first_error *f = pc ? pc->_private : NULL;

    if (!f || f->set || !e || e->level < XML_ERR_ERROR) return;
    f->set = 1;
    f->line = e->line;
    snprintf(f->what, sizeof f->what, "%s", e->message ? e->message : "not XML");
}

static xmlDocPtr read_doc(struct ctx *c, const void *xml, size_t size)
{
    struct first_error first = {0, 0, ""};
    xmlParserCtxtPtr pc;
    xmlDocPtr doc;

    if (size > INT_MAX) {
        snprintf(c->err, c->errsize, "%s: %zu bytes: too large for a profile file", c->name, size);
        return NULL;
    }
    pthread_once(&xml_once, xml_init);
    if (!(pc = xmlNewParserCtxt())) {
        nomem(c);
        return NULL;
    }
    /* No network, no DTD or external entity, nothing printed: the first error is kept. */
    pc->_private = &first;
    pc->sax->serror = first_error;
    doc = xmlCtxtReadMemory(pc, xml, (int)size, c->name, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(pc);
        size_t n;
        if (!first.set) {
            first.line = e ? e->line : 0;
            snprintf(first.what, sizeof first.what, "%s", e && e->message ? e->message : "not XML");
        }
        n = strlen(first.what);
        while (n && (first.what[n - 1] == '\n' || first.what[n - 1] == ' ')) first.what[--n] = '\0';
        snprintf(c->err, c->errsize, "%s:%d: not a WPR profile file: XML: %s", c->name, first.line, first.what);
    }
    xmlFreeParserCtxt(pc);
    return doc;
}

/* Resolves every Profile of doc into w (and the unavailable built-ins when builtin). */
static int load(etl_wprp **out, const void *xml, size_t size, const char *name, int builtin, char *err, size_t errsize)
{
    struct ctx c;
    xmlDocPtr doc, bdoc = NULL;
    int rc = ETL_OK;
    size_t nown;

    *out = NULL;
    memset(&c, 0, sizeof c);
    c.name = name ? name : "profile";
    c.err = err;
    c.errsize = errsize;
    if (!(c.w = calloc(1, sizeof *c.w))) return nomem(&c);
    if (!(doc = read_doc(&c, xml, size))) {
        free(c.w);
        return ETL_FAILED;
    }
    rc = index_doc(&c, doc, 1);
    nown = c.ndefs;
    if (rc == ETL_OK && !builtin) {
        struct ctx b = c;
        b.name = "built-in profiles";
        if (!(bdoc = read_doc(&b, builtin_wprp, sizeof builtin_wprp - 1))) rc = ETL_FAILED;
        else rc = index_doc(&b, bdoc, 0);
        c.defs = b.defs;
        c.ndefs = b.ndefs;
        c.capdefs = b.capdefs;
        c.oom |= b.oom;
    }
    for (size_t i = 0; i < nown && rc == ETL_OK; i++) {
        struct prof p;
        if (strcmp(c.defs[i].elem, "Profile") != 0) continue;
        memset(&p, 0, sizeof p);
        rc = profile_def(&c, c.defs[i].node, &p, 0);
        if (rc == ETL_OK) {
            p.p.id = c.defs[i].id;
            if (!p.p.name) rc = bad(&c, c.defs[i].node, "Profile Id=\"%s\" without its Name", shown(&c, p.p.id));
        }
        if (rc == ETL_OK) rc = publish(&c, &p);
        if (rc == ETL_OK && grow(&c.w->pr, &c.w->cappr, c.w->npr, sizeof *c.w->pr) < 0) rc = nomem(&c);
        if (rc != ETL_OK) {
            prof_free(&p);
            break;
        }
        c.w->pr[c.w->npr++] = p;
    }
    for (size_t i = 0; builtin && rc == ETL_OK && i < sizeof builtin_unavailable / sizeof *builtin_unavailable; i++) {
        static const char *const levels[] = {"Light", "Verbose"}, *const modes[] = {"File", "Memory"};
        for (unsigned l = 0; l < 2 && rc == ETL_OK; l++)
            for (unsigned m = 0; m < 2 && rc == ETL_OK; m++) {
                struct prof p;
                memset(&p, 0, sizeof p);
                p.p.name = builtin_unavailable[i].name;
                p.p.id = keepf(c.w, "%s.%s.%s", builtin_unavailable[i].name, levels[l], modes[m]);
                p.p.detail_level = levels[l];
                p.p.logging_mode = modes[m];
                p.p.description = "";
                p.p.unavailable = builtin_unavailable[i].why;
                if (!p.p.id || grow(&c.w->pr, &c.w->cappr, c.w->npr, sizeof *c.w->pr) < 0) rc = nomem(&c);
                else c.w->pr[c.w->npr++] = p;
            }
    }
    free(c.defs);
    xmlFreeDoc(doc);
    if (bdoc) xmlFreeDoc(bdoc);
    if (rc != ETL_OK) {
        etl_wprp_free(c.w);
        return ETL_FAILED;
    }
    *out = c.w;
    return ETL_OK;
}

int etl_wprp_parse(etl_wprp **out, const void *xml, size_t size, const char *name, char *err, size_t errsize)
{
    if (!out || (!xml && size)) {
        snprintf(err, errsize, "%s: no document", name ? name : "profile");
        return ETL_FAILED;
    }
    return load(out, xml ? xml : "", size, name, 0, err, errsize);
}

int etl_wprp_builtin(etl_wprp **out, char *err, size_t errsize)
{
    return load(out, builtin_wprp, sizeof builtin_wprp - 1, "built-in profiles", 1, err, errsize);
}

int etl_wprp_open(etl_wprp **out, const char *path, char *err, size_t errsize)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc;

    *out = NULL;
    if (!(f = fopen(path, "rb"))) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return ETL_FAILED;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            char *q;
            if (cap >= MAX_FILE) {
                snprintf(err, errsize, "%s: larger than %u MiB: too large for a profile file", path, MAX_FILE >> 20);
                free(buf);
                fclose(f);
                return ETL_FAILED;
            }
            cap = cap ? cap * 2 : 65536;
            if (!(q = realloc(buf, cap))) {
                snprintf(err, errsize, "%s: out of memory", path);
                free(buf);
                fclose(f);
                return ETL_FAILED;
            }
            buf = q;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        free(buf);
        fclose(f);
        return ETL_FAILED;
    }
    fclose(f);
    rc = load(out, buf, n, path, 0, err, errsize);
    free(buf);
    return rc;
}

void etl_wprp_free(etl_wprp *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->npr; i++) prof_free(&w->pr[i]);
    free(w->pr);
    for (size_t i = 0; i < w->nmem; i++) free(w->mem[i]);
    free(w->mem);
    free(w);
}

size_t etl_wprp_profile_count(const etl_wprp *w)
{
    return w ? w->npr : 0;
}

const etl_wprp_profile *etl_wprp_profile_at(const etl_wprp *w, size_t index)
{
    return w && index < w->npr ? &w->pr[index].p : NULL;
}

const etl_wprp_profile *etl_wprp_find(const etl_wprp *w, const char *text, const char *mode)
{
    char name[256];
    const char *level = NULL, *dot;
    const etl_wprp_profile *any = NULL;

    if (!w || !text) return NULL;
    if (!mode) mode = "File";
    for (size_t i = 0; i < w->npr; i++)
        if (strcasecmp(w->pr[i].p.id, text) == 0) return &w->pr[i].p;
    snprintf(name, sizeof name, "%s", text);
    if ((dot = strrchr(text, '.')) && (strcasecmp(dot + 1, "Light") == 0 || strcasecmp(dot + 1, "Verbose") == 0)) {
        level = dot + 1;
        if ((size_t)(dot - text) < sizeof name) name[dot - text] = '\0';
    }
    for (size_t i = 0; i < w->npr; i++) {
        const etl_wprp_profile *p = &w->pr[i].p;
        if (strcasecmp(p->name, name) != 0 || strcasecmp(p->logging_mode, mode) != 0) continue;
        if (level ? strcasecmp(p->detail_level, level) == 0 : strcmp(p->detail_level, "Verbose") == 0) return p;
        if (!level && !any) any = p;
    }
    return any;
}

/* ---- several profiles in one recording ---- */

/* Copies of the strings of list (n entries) into the set, added to *dst (a keyword or stack list). */
static int unite_list(struct ctx *c, etl_wprp_keyword **dst, size_t *n, size_t *cap, const etl_wprp_keyword *list,
                      size_t count)
{
    for (size_t i = 0; i < count; i++) {
        size_t k;
        for (k = 0; k < *n && strcmp((*dst)[k].name, list[i].name) != 0; k++) {}
        if (k < *n) continue;
        const char *name = keep(c->w, list[i].name, strlen(list[i].name));
        if (!name || list_apply(c, dst, n, cap, name, 'A') != ETL_OK) return nomem(c);
    }
    return ETL_OK;
}

static int same_provider(const etl_wprp_provider *a, const etl_wprp_provider *b)
{
    if (a->has_guid || b->has_guid) return a->has_guid && b->has_guid && etl_guid_equal(&a->guid, &b->guid);
    return strcasecmp(a->name, b->name) == 0;
}

/* Provider pv (of another set) into co: added as a copy, or merged with the one it repeats. */
static int unite_provider(struct ctx *c, struct coll *co, const etl_wprp_provider *pv)
{
    etl_wprp_provider *q;

    for (size_t k = 0; k < co->npv; k++) {
        q = &co->pv[k];
        if (!same_provider(q, pv)) continue;
        if (pv->level > q->level) q->level = pv->level;
        q->keywords = q->keywords && pv->keywords ? q->keywords | pv->keywords : 0;
        q->stack |= pv->stack;
        q->non_paged_memory |= pv->non_paged_memory;
        q->capture_state_on_start |= pv->capture_state_on_start;
        q->capture_state_on_save |= pv->capture_state_on_save;
        return ETL_OK;
    }
    if (grow(&co->pv, &co->cappv, co->npv, sizeof *co->pv) < 0) return nomem(c);
    q = &co->pv[co->npv];
    *q = *pv;
    q->id = keep(c->w, pv->id ? pv->id : "", strlen(pv->id ? pv->id : ""));
    q->name = keep(c->w, pv->name, strlen(pv->name));
    if (!q->id || !q->name) return nomem(c);
    co->npv++;
    return ETL_OK;
}

/* Collector src (of another set) into p: a new collector, or merged with the one of its name. */
static int unite_collector(struct ctx *c, struct prof *p, const etl_wprp_collector *src)
{
    struct coll *co = NULL;

    for (size_t i = 0; i < p->nco; i++)
        if (strcasecmp(p->co[i].c.name, src->name) == 0) co = &p->co[i];
    if (co && co->c.kind != src->kind) {
        snprintf(c->err, c->errsize, "collector \"%s\" is a system collector in one profile and an event collector in "
                 "another", src->name);
        return ETL_FAILED;
    }
    if (!co) {
        if (grow(&p->co, &p->capco, p->nco, sizeof *p->co) < 0) return nomem(c);
        co = &p->co[p->nco++];
        memset(co, 0, sizeof *co);
        co->c.kind = src->kind;
        co->c.id = keep(c->w, src->id ? src->id : "", strlen(src->id ? src->id : ""));
        co->c.name = keep(c->w, src->name, strlen(src->name));
        co->c.buffer_size_kb = src->buffer_size_kb;
        co->c.buffers = src->buffers;
        co->c.buffers_percent = src->buffers_percent;
        if (!co->c.id || !co->c.name) return nomem(c);
    } else {
        if (src->buffer_size_kb > co->c.buffer_size_kb) co->c.buffer_size_kb = src->buffer_size_kb;
        if (!co->c.buffers) {
            co->c.buffers = src->buffers;
            co->c.buffers_percent = src->buffers_percent;
        } else if (src->buffers_percent == co->c.buffers_percent && src->buffers > co->c.buffers) {
            co->c.buffers = src->buffers;
        }
    }
    if (!co->c.file_name && src->file_name && !(co->c.file_name = keep(c->w, src->file_name, strlen(src->file_name))))
        return nomem(c);
    if (unite_list(c, &co->kw, &co->nkw, &co->capkw, src->keywords, src->keyword_count) != ETL_OK ||
        unite_list(c, &co->st, &co->nst, &co->capst, src->stacks, src->stack_count) != ETL_OK)
        return ETL_FAILED;
    for (size_t k = 0; k < src->provider_count; k++)
        if (unite_provider(c, co, &src->providers[k]) != ETL_OK) return ETL_FAILED;
    return ETL_OK;
}

/* p's Id, name and levels from the profiles, and their unmapped lists. */
static int unite_profile(struct ctx *c, struct prof *p, const etl_wprp_profile *const *profiles, size_t count)
{
    size_t len = 0;
    char *id;

    for (size_t i = 0; i < count; i++) len += strlen(profiles[i]->id) + 1;
    if (!(id = malloc(len))) return nomem(c);
    id[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        if (i) strcat(id, "+");
        strcat(id, profiles[i]->id);
    }
    p->p.id = keep(c->w, id, strlen(id));
    free(id);
    p->p.name = keep(c->w, profiles[0]->name, strlen(profiles[0]->name));
    p->p.detail_level = keep(c->w, profiles[0]->detail_level, strlen(profiles[0]->detail_level));
    p->p.logging_mode = keep(c->w, profiles[0]->logging_mode, strlen(profiles[0]->logging_mode));
    p->p.description = keep(c->w, profiles[0]->description, strlen(profiles[0]->description));
    if (!p->p.id || !p->p.name || !p->p.detail_level || !p->p.logging_mode || !p->p.description) return nomem(c);
    for (size_t i = 0; i < count; i++) {
        if (profiles[i]->unavailable && !p->p.unavailable &&
            !(p->p.unavailable = keepf(c->w, "%s: %s", profiles[i]->id, profiles[i]->unavailable)))
            return nomem(c);
        /* (publish says again which stacks lack their keyword, in the united lists) */
        for (size_t k = 0; k < profiles[i]->unmapped_count; k++)
            if (!strstr(profiles[i]->unmapped[k], ": its keyword is not enabled") &&
                note(c, p, "%s", profiles[i]->unmapped[k]) != ETL_OK)
                return ETL_FAILED;
    }
    return ETL_OK;
}

int etl_wprp_combine(etl_wprp **out, const etl_wprp_profile *const *profiles, size_t count, char *err, size_t errsize)
{
    struct ctx c;
    struct prof p;
    int rc = ETL_OK;

    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&p, 0, sizeof p);
    c.name = "profiles";
    c.err = err;
    c.errsize = errsize;
    if (!count) {
        snprintf(err, errsize, "no profile to combine");
        return ETL_FAILED;
    }
    if (!(c.w = calloc(1, sizeof *c.w))) return nomem(&c);
    rc = unite_profile(&c, &p, profiles, count);
    for (size_t i = 0; i < count && rc == ETL_OK; i++)
        for (size_t k = 0; k < profiles[i]->collector_count && rc == ETL_OK; k++)
            rc = unite_collector(&c, &p, &profiles[i]->collectors[k]);
    if (rc == ETL_OK) rc = publish(&c, &p);
    if (rc == ETL_OK && grow(&c.w->pr, &c.w->cappr, 0, sizeof *c.w->pr) < 0) rc = nomem(&c);
    if (rc != ETL_OK) {
        prof_free(&p);
        etl_wprp_free(c.w);
        return ETL_FAILED;
    }
    c.w->pr[c.w->npr++] = p;
    *out = c.w;
    return ETL_OK;
}

uint32_t etl_wprp_collector_buffer_count(const etl_wprp_collector *c, uint64_t total_memory)
{
    uint64_t size = (uint64_t)(c->buffer_size_kb ? c->buffer_size_kb : 64) * 1024, n;

    if (!c->buffers) return 0;
    if (!c->buffers_percent) return c->buffers;
    n = total_memory / 100 * c->buffers / size;
    if (n < 1) return 1;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}
