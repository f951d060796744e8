/* SPDX-License-Identifier: MIT */
/* .NET methods: the address ranges the runtime's method events give JIT-compiled and ReadyToRun code, per process, over time. */
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"
#include "etl/decode.h"

/*
 * The events (ClrEtwAll.man), by provider and id:
 *   Microsoft-Windows-DotNETRuntime        143 MethodLoadVerbose, 144 MethodUnloadVerbose,
 *                                          152 ModuleLoad, 153 ModuleUnload
 *   Microsoft-Windows-DotNETRuntimeRundown 143 MethodDCStartVerbose, 144 MethodDCEndVerbose,
 *                                          153 ModuleDCStart, 154 ModuleDCEnd
 * A method's code is [MethodStartAddress, + MethodSize) in the event's process from its load
 * until its unload; the rundown at the start (DCStart) says a method was there before the
 * trace began, the one at the end (DCEnd) that it still was. The events of one method
 * (process, MethodID, start address) are put in time order and made into intervals of time;
 * an address at a time is the method whose range holds it and whose interval holds the time,
 * the latest loaded when several do (a range reused after an unload).
 */

enum { K_LOAD, K_UNLOAD, K_DCSTART, K_DCEND };

struct clr_event {
    uint32_t pid;
    int kind;
    int64_t ts;
    uint64_t method_id, module_id, start;
    uint32_t size;
    const char *name;           /* interned; NULL for a method event without names */
};

struct clr_method {
    uint32_t pid;
    uint64_t start, end;        /* [start, end) */
    int64_t from, to;           /* [from, to) in raw time */
    uint64_t module_id;
    const char *name;
    uint64_t max_end;           /* the largest end of this and every earlier method of the process */
};

struct clr_module {
    uint32_t pid;
    uint64_t id;
    const char *name;           /* the IL file's base name */
    const char *path;
};

struct etl_sym_clr {
    etl_decoder *decoder;
    int decoder_failed;
    struct clr_event *events;
    size_t nevents, capevents;
    struct clr_method *methods;
    size_t nmethods;
    struct clr_module *modules;
    size_t nmodules, capmodules;
    int dirty;                  /* events came since the methods were made */
    etl_symbolizer *owner;      /* whose interned strings the names are */
    char error[256];
    int has_error;
};

static const etl_guid clr_runtime = { 0xe13c0d23, 0xccbc, 0x4e12, { 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 } };
static const etl_guid clr_rundown = { 0xa669021c, 0xc450, 0x4609, { 0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18 } };

int etl_sym_clr_open(etl_sym_clr **out, etl_symbolizer *owner)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return ETL_FAILED;
    (*out)->owner = owner;
    return ETL_OK;
}

void etl_sym_clr_close(etl_sym_clr *c)
{
    if (!c) return;
    if (c->decoder) etl_decoder_close(c->decoder);
    free(c->events);
    free(c->methods);
    free(c->modules);
    free(c);
}

const char *etl_sym_clr_error(const etl_sym_clr *c)
{
    return c->has_error ? c->error : NULL;
}

static int field_u64(const etl_decoded_event *d, const char *name, uint64_t *v)
{
    const etl_field *f = etl_decoded_field_find(d, name);
    return f && etl_field_uint(f, v) == ETL_OK;
}

/* A string field as UTF-8 into buf (truncated to its size): its length, or -1 when absent. */
static long field_text(const etl_decoded_event *d, const char *name, char *buf, size_t size)
{
    const etl_field *f = etl_decoded_field_find(d, name);
    etl_string s;
    if (!f || etl_field_string(f, &s) != ETL_OK) return -1;
    size_t n = etl_string_to_utf8(&s, buf, size);
    return (long)(n < size ? n : size - 1);
}

/* The name TraceEvent's TraceLog gives a method: MethodNamespace "." MethodName, then the
   signature from its first "(" (the arguments); no dot when the namespace is empty. */
static const char *method_name(etl_sym_clr *c, const etl_decoded_event *d, int *oom)
{
    char ns[2048], nm[1024], sig[2048];
    long nsl = field_text(d, "MethodNamespace", ns, sizeof ns);
    long nml = field_text(d, "MethodName", nm, sizeof nm);
    long sgl = field_text(d, "MethodSignature", sig, sizeof sig);
    if (nml < 0) return NULL;
    char *full = malloc((size_t)(nsl > 0 ? nsl : 0) + (size_t)nml + (size_t)(sgl > 0 ? sgl : 0) + 2);
    if (!full) {
        *oom = 1;
        return NULL;
    }
    size_t n = 0;
    if (nsl > 0) {
        memcpy(full, ns, (size_t)nsl);
        n = (size_t)nsl;
        full[n++] = '.';
    }
    memcpy(full + n, nm, (size_t)nml);
    n += (size_t)nml;
    if (sgl > 0) {
        const char *paren = memchr(sig, '(', (size_t)sgl);
        if (paren) {
            size_t k = (size_t)(sig + sgl - paren);
            memcpy(full + n, paren, k);
            n += k;
        }
    }
    const char *r = etl_sym_intern(c->owner, full, n);
    free(full);
    if (!r) *oom = 1;
    return r;
}

static const char *path_base(const char *p)
{
    const char *b = p;
    for (; *p; p++)
        if (*p == '/' || *p == '\\') b = p + 1;
    return b;
}

int etl_sym_clr_add(etl_sym_clr *c, const etl_event *ev)
{
    int runtime = memcmp(&ev->provider, &clr_runtime, sizeof clr_runtime) == 0;
    int rundown = !runtime && memcmp(&ev->provider, &clr_rundown, sizeof clr_rundown) == 0;
    if (!runtime && !rundown) return 0;
    if (ev->kind != ETL_KIND_EVENT) return 0;
    int kind = -1, module = 0, id = ev->id;
    if (id == 143) kind = runtime ? K_LOAD : K_DCSTART;
    else if (id == 144) kind = runtime ? K_UNLOAD : K_DCEND;
    else if ((runtime && (id == 152 || id == 153)) || (rundown && (id == 153 || id == 154))) module = 1;
    if (kind < 0 && !module) return 0;
    if (!(ev->has & ETL_HAS_PID_TID)) return 0;
    if (c->decoder_failed) return 0;
    if (!c->decoder) {
        int rc = etl_decoder_open(&c->decoder, NULL);
        if (rc == ETL_FATAL) return ETL_FAILED;
    }
    etl_decoded_event d;
    int rc = etl_decoder_decode(c->decoder, ev, &d);
    if (rc != 1) {
        if (rc == 0 && !c->has_error) {
            c->has_error = 1;
            snprintf(c->error, sizeof c->error,
                     "the .NET runtime's events cannot be decoded (is ClrEtwAll.man installed, or named by "
                     "ETL_MANIFEST_PATH?): managed frames keep their addresses");
        }
        return 0;
    }
    int oom = 0;
    if (module) {
        uint64_t mid;
        char path[4096];
        if (!field_u64(&d, "ModuleID", &mid)) return 0;
        long n = field_text(&d, "ModuleILPath", path, sizeof path);
        if (n <= 0) return 0;
        if (c->nmodules == c->capmodules) {
            size_t nc = c->capmodules ? c->capmodules * 2 : 64;
            struct clr_module *nm = realloc(c->modules, nc * sizeof *nm);
            if (!nm) return ETL_FAILED;
            c->modules = nm;
            c->capmodules = nc;
        }
        struct clr_module *m = &c->modules[c->nmodules];
        m->pid = ev->pid;
        m->id = mid;
        m->path = etl_sym_intern(c->owner, path, (size_t)n);
        if (!m->path) return ETL_FAILED;
        const char *b = path_base(m->path);
        m->name = etl_sym_intern(c->owner, b, strlen(b));
        if (!m->name) return ETL_FAILED;
        c->nmodules++;
        c->dirty = 1;
        return 1;
    }
    struct clr_event e = { .pid = ev->pid, .kind = kind, .ts = ev->timestamp };
    uint64_t size;
    if (!field_u64(&d, "MethodID", &e.method_id) || !field_u64(&d, "MethodStartAddress", &e.start) ||
        !field_u64(&d, "MethodSize", &size))
        return 0;
    field_u64(&d, "ModuleID", &e.module_id);
    e.size = (uint32_t)size;
    e.name = method_name(c, &d, &oom);
    if (oom) return ETL_FAILED;
    if (c->nevents == c->capevents) {
        size_t nc = c->capevents ? c->capevents * 2 : 256;
        struct clr_event *ne = realloc(c->events, nc * sizeof *ne);
        if (!ne) return ETL_FAILED;
        c->events = ne;
        c->capevents = nc;
    }
    c->events[c->nevents++] = e;
    c->dirty = 1;
    return 1;
}

static int cmp_event(const void *a, const void *b)
{
    const struct clr_event *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->method_id != y->method_id) return x->method_id < y->method_id ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->kind - y->kind;
}

static int cmp_method(const void *a, const void *b)
{
    const struct clr_method *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return 0;
}

static int cmp_module(const void *a, const void *b)
{
    const struct clr_module *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return 0;
}

/* The events made into methods with intervals of time: ETL_OK or ETL_FAILED (memory). */
static int build(etl_sym_clr *c)
{
    if (c->nevents > 1) qsort(c->events, c->nevents, sizeof *c->events, cmp_event);
    if (c->nmodules > 1) qsort(c->modules, c->nmodules, sizeof *c->modules, cmp_module);
    free(c->methods);
    c->methods = NULL;
    c->nmethods = 0;
    /* at most one interval per load, unload or rundown event */
    struct clr_method *m = malloc((c->nevents ? c->nevents : 1) * sizeof *m);
    if (!m) return ETL_FAILED;
    size_t n = 0;
    for (size_t i = 0; i < c->nevents;) {
        size_t j = i;
        while (j < c->nevents && c->events[j].pid == c->events[i].pid &&
               c->events[j].method_id == c->events[i].method_id && c->events[j].start == c->events[i].start)
            j++;
        /* one method's events in time order: a load opens an interval, an unload closes it;
           a rundown event or an unload with none open means the method was there from before */
        struct clr_method *open = NULL;
        int64_t last_close = INT64_MIN;
        for (size_t k = i; k < j; k++) {
            const struct clr_event *e = &c->events[k];
            if (!open) {
                open = &m[n++];
                open->pid = e->pid;
                open->start = e->start;
                open->end = e->start + e->size;
                open->from = e->kind == K_LOAD ? e->ts : last_close;
                open->to = INT64_MAX;
                open->module_id = e->module_id;
                open->name = e->name;
            }
            if (e->name && !open->name) open->name = e->name;
            if (e->start + e->size > open->end) open->end = e->start + e->size;
            if (e->kind == K_UNLOAD) {
                open->to = e->ts;
                last_close = e->ts;
                open = NULL;
            }
        }
        i = j;
    }
    if (n > 1) qsort(m, n, sizeof *m, cmp_method);
    for (size_t i = 0; i < n; i++)
        m[i].max_end = (i > 0 && m[i - 1].pid == m[i].pid && m[i - 1].max_end > m[i].end) ? m[i - 1].max_end : m[i].end;
    c->methods = m;
    c->nmethods = n;
    c->dirty = 0;
    return ETL_OK;
}

uint64_t etl_sym_clr_methods(const etl_sym_clr *c)
{
    if (c->dirty) build((etl_sym_clr *)c);
    return c->nmethods;
}

int etl_sym_clr_resolve(etl_sym_clr *c, uint32_t pid, uint64_t addr, int64_t ts, etl_symbol *out)
{
    if (c->dirty && build(c) != ETL_OK) return ETL_FAILED;
    /* the last method of pid starting at or before addr */
    size_t lo = 0, hi = c->nmethods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct clr_method *x = &c->methods[mid];
        if (x->pid < pid || (x->pid == pid && x->start <= addr)) lo = mid + 1;
        else hi = mid;
    }
    const struct clr_method *best = NULL;
    for (size_t i = lo; i-- > 0;) {
        const struct clr_method *x = &c->methods[i];
        if (x->pid != pid || x->max_end <= addr) break;
        if (addr < x->end && ts >= x->from && ts < x->to && (!best || x->from > best->from)) best = x;
    }
    if (!best || !best->name) return 0;
    memset(out, 0, sizeof *out);
    out->function = best->name;
    out->function_offset = addr - best->start;
    out->image_offset = addr - best->start;
    /* the module's name, where a module event gave it */
    lo = 0;
    hi = c->nmodules;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct clr_module *x = &c->modules[mid];
        if (x->pid < pid || (x->pid == pid && x->id < best->module_id)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < c->nmodules && c->modules[lo].pid == pid && c->modules[lo].id == best->module_id) {
        out->image = c->modules[lo].name;
        out->image_path = c->modules[lo].path;
    }
    return 1;
}
