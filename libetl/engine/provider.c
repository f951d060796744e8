/* SPDX-License-Identifier: MIT */
/*
 * The provider API: providers register by GUID, sessions enable them by level and keywords,
 * and a provider's events go to every session whose filter they pass (ETW's EventRegister,
 * EventEnabled, EventWrite and EnableTraceEx2). The sessions are this process's own, and the
 * shared sessions of other processes that are mapped here (the end of this file); a shared
 * session's controller publishes what it enables in the session's memory, for them.
 *
 * A provider registered with a name writes TraceLogging events too: their definitions
 * (etl_tlg_event_define) hold the PROV_TRAITS and EVENT_SCHEMA_TL extended items, built once
 * by the writer's encoders, and a write passes them to the sessions with the payload.
 *
 * The write path takes no lock. Each provider publishes the set of sessions enabled for it
 * as an immutable array; a change publishes a new one and frees the old one only after
 * every writer that could be reading it is done (each thread marks the writes it has in
 * progress in a record of its own, and the updater waits for them, as userspace RCU does with
 * membarrier). Stopping a session removes it from every set first.
 */
#define _GNU_SOURCE /* syscall, membarrier */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "etl.h"
#include "engine/engine.h"
#include "reader/reader.h"
#include "writer/writer.h"

static void shared_sessions_watch(void);
static void providers_forget_session(etl_session *s);

/* At a session's stop it leaves every provider's set: a hook, registered at its first enable. */
static void forget_at_stop(etl_session *s, void *ctx)
{
    (void)ctx;
    providers_forget_session(s);
}

static const struct etl_session_hook providers_hook = { "the provider registry", forget_at_stop };

struct enable {
    etl_session *s;
    uint8_t level;
    uint32_t properties;   /* ETL_ENABLE_* */
    uint64_t any, all;
};

struct enable_set {
    unsigned n;
    struct enable e[];
};

struct etl_provider {
    etl_guid guid;
    _Atomic(struct enable_set *) set;   /* NULL: no session enables it */
    struct etl_provider *next;          /* the registry's list */
    char *name;                         /* etl_provider_register_named's, or NULL */
    uint8_t *traits;                    /* its PROV_TRAITS data (in the same block as name) */
    uint32_t traits_size;
    struct etl_tlg_event *events;       /* the TraceLogging events defined on it */
};

/* A TraceLogging event: its descriptor and its two extended items, ready to copy. */
struct etl_tlg_event {
    etl_provider *p;
    etl_event_descriptor d;
    struct etl_tlg_event *next;         /* the provider's list (registry lock) */
    const uint8_t *meta;                /* its EVENT_SCHEMA_TL data, inside ext */
    uint32_t meta_size;
    uint32_t ext_size;                  /* a multiple of 8 */
    uint8_t ext[];                      /* PROV_TRAITS and EVENT_SCHEMA_TL items */
};

/* What sessions asked for, whether or not the provider is registered yet. */
struct enable_request {
    etl_session *s;
    etl_guid guid;
    uint8_t level;
    uint32_t properties;
    uint64_t any, all;
    struct enable_request *next;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct etl_provider *registry;
static struct enable_request *requests;

/* ---- ETW's filter ---- */

int etl_enable_passes(uint8_t enable_level, uint64_t match_any, uint64_t match_all, uint8_t level, uint64_t keywords)
{
    if (enable_level != 0 && level != 0 && level > enable_level) return 0;
    if (keywords == 0) return 1;
    if (match_any != 0 && (keywords & match_any) == 0) return 0;
    return (keywords & match_all) == match_all;
}

/* ---- the readers' side of a set ---- */

/*
 * Who is reading a set: each thread that writes has a record of its own, on a list of them,
 * with a count of the writes it has in progress (more than one when a signal handler writes
 * in the middle of a write). Entering and leaving are two plain stores to the thread's own
 * record: no atomic instruction, no cache line shared with another thread. The ordering that
 * a reader would otherwise need between its store and its load of the set (a full fence)
 * the updater gives instead, with one membarrier() call that runs a barrier on every
 * processor running a thread of the process; where the kernel has no membarrier, readers
 * take the fence themselves. After publishing a new set and that barrier, the updater waits
 * until each record has been seen idle once: a write that could hold the old set is done.
 */
struct reader {
    _Atomic unsigned depth;             /* writes in progress in the thread */
    _Atomic int in_use;                 /* 0: the thread ended, the record is free for another */
    struct reader *next;
};

static pthread_mutex_t readers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reader *_Atomic readers;
static _Thread_local struct reader *own_reader __attribute__((tls_model("initial-exec")));
static pthread_key_t reader_key;
static int use_membarrier;              /* 0: readers fence themselves */

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

static void reader_gone(void *arg) { atomic_store_explicit(&((struct reader *)arg)->in_use, 0, memory_order_release); }

static pthread_once_t readers_once = PTHREAD_ONCE_INIT;
static void readers_init(void)
{
    pthread_key_create(&reader_key, reader_gone);
#if defined(__NR_membarrier)
    use_membarrier = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

/* The calling thread's record: a free one taken over, or a new one (NULL without memory). */
static struct reader *reader_slow(void)
{
    struct reader *r;

    pthread_once(&readers_once, readers_init);
    pthread_mutex_lock(&readers_lock);
    for (r = atomic_load(&readers); r; r = r->next) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&r->in_use, &idle, 1)) break;
    }
    if (!r && (r = calloc(1, sizeof *r)) != NULL) {
        atomic_store(&r->in_use, 1);
        r->next = atomic_load(&readers);
        atomic_store(&readers, r);
    }
    pthread_mutex_unlock(&readers_lock);
    if (r) pthread_setspecific(reader_key, r); /* the destructor frees it for another thread */
    own_reader = r;
    return r;
}

/* Before a write reads a set. NULL when the thread has no record (no memory): the write is
   skipped. */
static inline struct reader *reader_enter(void)
{
    struct reader *r = own_reader;

    unsigned depth;

    if (__builtin_expect(!r, 0) && !(r = reader_slow())) return NULL;
    depth = atomic_load_explicit(&r->depth, memory_order_relaxed) + 1;
    if (use_membarrier) {
        atomic_store_explicit(&r->depth, depth, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the updater's membarrier does the rest */
    } else {
        /* The store must be seen before the set is read: a sequentially consistent exchange
           (the updater's exchange of the set and its loads of the depths are, too). */
        atomic_exchange_explicit(&r->depth, depth, memory_order_seq_cst);
    }
    return r;
}

static inline void reader_leave(struct reader *r)
{
    atomic_store_explicit(&r->depth, atomic_load_explicit(&r->depth, memory_order_relaxed) - 1, memory_order_release);
}

/* After a new set is published: wait until no write can still read the one before. */
static void wait_for_readers(void)
{
    pthread_once(&readers_once, readers_init);
#if defined(__NR_membarrier)
    if (use_membarrier) syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
    for (struct reader *r = atomic_load(&readers); r; r = r->next)
        while (atomic_load(&r->in_use) && atomic_load(&r->depth) != 0) sched_yield();
}

/*
 * fork: the child is a new process, and the sessions of its parent are not its own (a private
 * session has no flush thread in the child; a shared one it maps for itself, as any other
 * process does, below). It starts with no session enabled; the shared sessions
 * come back at its next look at the runtime directory.
 */
static _Atomic int look_again;

static void atfork_prepare(void) { pthread_mutex_lock(&registry_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void atfork_child(void)
{
    while (requests) {
        struct enable_request *r = requests;
        requests = r->next;
        free(r);
    }
    for (etl_provider *p = registry; p; p = p->next) {
        free(atomic_exchange(&p->set, NULL));
    }
    /* Only the forking thread goes on in the child: the other threads' records are free. */
    for (struct reader *r = atomic_load(&readers); r; r = r->next)
        if (r != own_reader) {
            atomic_store(&r->depth, 0);
            atomic_store(&r->in_use, 0);
        }
    /* Its providers look for shared sessions again at their next use. */
    if (registry) atomic_store_explicit(&look_again, 1, memory_order_relaxed);
    pthread_mutex_unlock(&registry_lock);
}

/* A child of a provider process: map the shared sessions (once). */
static inline void after_fork_look(void)
{
    if (__builtin_expect(atomic_load_explicit(&look_again, memory_order_relaxed), 0) &&
        atomic_exchange(&look_again, 0))
        shared_sessions_watch();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

/* Publishes p's set from the requests (registry lock held). */
static int rebuild(etl_provider *p)
{
    unsigned n = 0, i = 0;
    struct enable_set *set = NULL, *old;

    for (struct enable_request *r = requests; r; r = r->next)
        if (etl_guid_equal(&r->guid, &p->guid)) n++;
    if (n) {
        set = malloc(sizeof *set + n * sizeof set->e[0]);
        if (!set) return ETL_FAILED;
        for (struct enable_request *r = requests; r; r = r->next)
            if (etl_guid_equal(&r->guid, &p->guid))
                set->e[i++] = (struct enable){ r->s, r->level, r->properties, r->any, r->all };
        set->n = n;
    }
    old = atomic_exchange(&p->set, set);
    wait_for_readers();
    free(old);
    return ETL_OK;
}

static int rebuild_guid(const etl_guid *g)
{
    int rc = ETL_OK;

    for (etl_provider *p = registry; p; p = p->next)
        if (etl_guid_equal(&p->guid, g) && rebuild(p) != ETL_OK) rc = ETL_FAILED;
    return rc;
}

/* ---- providers ---- */

/* Registers p, whose GUID and name are set (its name block is freed with it on failure). */
static int register_provider(etl_provider *p, etl_provider **out)
{
    pthread_once(&atfork_once, install_atfork);
    atomic_init(&p->set, NULL);
    pthread_mutex_lock(&registry_lock);
    p->next = registry;
    registry = p;
    if (rebuild(p) != ETL_OK) {
        registry = p->next;
        pthread_mutex_unlock(&registry_lock);
        free(p->name);
        free(p);
        return ETL_FAILED;
    }
    pthread_mutex_unlock(&registry_lock);
    *out = p;
    /* Shared sessions of other processes that enable it: mapped now, and watched for. */
    shared_sessions_watch();
    return ETL_OK;
}

int etl_provider_register(etl_provider **out, const etl_guid *guid)
{
    etl_provider *p = aligned_alloc(_Alignof(etl_provider), sizeof *p); /* its counters' cache lines */

    *out = NULL;
    if (!p) return ETL_FAILED;
    memset(p, 0, sizeof *p);
    p->guid = *guid;
    return register_provider(p, out);
}

int etl_provider_register_named(etl_provider **out, const char *name, const etl_guid *guid, const etl_guid *group)
{
    uint32_t traits = etl_tlg_traits_encode(NULL, 0, name, group);
    size_t len = traits ? strlen(name) + 1 : 0;
    etl_provider *p;

    *out = NULL;
    if (!traits) {
        errno = EINVAL;
        return ETL_FAILED;
    }
    if (!(p = aligned_alloc(_Alignof(etl_provider), sizeof *p))) {
        errno = ENOMEM;
        return ETL_FAILED;
    }
    memset(p, 0, sizeof *p);
    if (!(p->name = malloc(len + traits))) {
        free(p);
        errno = ENOMEM;
        return ETL_FAILED;
    }
    memcpy(p->name, name, len);
    p->traits = (uint8_t *)p->name + len;
    p->traits_size = etl_tlg_traits_encode(p->traits, traits, name, group);
    p->guid = *guid;
    if (register_provider(p, out) != ETL_OK) {
        errno = ENOMEM;
        return ETL_FAILED;
    }
    return ETL_OK;
}

void etl_provider_unregister(etl_provider *p)
{
    if (!p) return;
    pthread_mutex_lock(&registry_lock);
    for (etl_provider **q = &registry; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    free(atomic_exchange(&p->set, NULL));
    wait_for_readers();
    while (p->events) {
        struct etl_tlg_event *ev = p->events;
        p->events = ev->next;
        free(ev);
    }
    pthread_mutex_unlock(&registry_lock);
    free(p->name);
    free(p);
}

const etl_guid *etl_provider_guid(const etl_provider *p)
{
    return &p->guid;
}

const char *etl_provider_name(const etl_provider *p)
{
    return p->name;
}

int etl_provider_enabled(etl_provider *p, uint8_t level, uint64_t keywords)
{
    struct reader *c;
    const struct enable_set *set;
    int on = 0;

    after_fork_look();
    if (!atomic_load_explicit(&p->set, memory_order_relaxed)) return 0;
    if (!(c = reader_enter())) return 0;
    set = atomic_load(&p->set);
    for (unsigned i = 0; set && i < set->n && !on; i++)
        on = etl_enable_passes(set->e[i].level, set->e[i].any, set->e[i].all, level, keywords);
    reader_leave(c);
    return on;
}

/*
 * The caller's stack, innermost first, from caller: the return address into the caller of
 * the public write function (its __builtin_return_address). The frames before it are
 * libetl's own, and how many there are depends on inlining and on what intercepts
 * backtrace() (AddressSanitizer adds a frame), so they are found by that address, not
 * counted.
 */
#define STACK_SKIP_MAX 8 /* frames of libetl (and interceptors) before the caller's, at most */
static unsigned capture_stack(uint64_t *frames, unsigned max, const void *caller)
{
    void *pcs[ETL_PROVIDER_MAX_STACK + STACK_SKIP_MAX];
    int n = backtrace(pcs, (int)(max + STACK_SKIP_MAX)), first = 0;
    unsigned k = 0;

    while (first < n && first < STACK_SKIP_MAX && pcs[first] != caller) first++;
    if (first == n || first == STACK_SKIP_MAX) return 0; /* an unwinder that cannot see the caller */
    for (int i = first; i < n && k < max; i++) frames[k++] = (uint64_t)(uintptr_t)pcs[i];
    return k;
}

/* What etl_provider_write_lbr adds to an event. */
struct lbr_request {
    uint32_t filters;
    const etl_lbr_entry *entries;
    unsigned count;
};

/* The event into every session it passes, with its LBR record when lbr is not NULL; caller is
   the public function's return address (for ETL_WRITE_STACK). The hot path of both public
   functions, inlined into each. */
static inline __attribute__((always_inline)) int write_sessions(etl_provider *p, const etl_event_descriptor *d,
                                                                const etl_data *data, unsigned ndata,
                                                                unsigned flags, const struct lbr_request *lbr,
                                                                const void *caller, const etl_tlg_event *tlg)
{
    struct reader *c;
    const struct enable_set *set;
    uint64_t stack[ETL_PROVIDER_MAX_STACK];
    etl_event_extras x;
    uint32_t pid = 0, tid = 0;
    unsigned frames = 0;
    int rc = ETL_OK, stacked = 0, ids = 0, extras = 0;

    after_fork_look();
    if (!atomic_load_explicit(&p->set, memory_order_relaxed)) return ETL_OK;
    if (!(c = reader_enter())) return ETL_FAILED;
    set = atomic_load(&p->set);
    for (unsigned i = 0; set && i < set->n; i++) {
        const struct enable *e = &set->e[i];
        int want_stack = (flags & ETL_WRITE_STACK) || (e->properties & ETL_ENABLE_STACK_TRACE);
        if (!etl_enable_passes(e->level, e->any, e->all, d->level, d->keywords)) continue;
        if (tlg && !want_stack && !lbr) { /* a TraceLogging event and nothing more */
            if (etl_session_write_event_items(e->s, &p->guid, d, tlg->ext, tlg->ext_size, data, ndata) != ETL_OK)
                rc = ETL_FAILED;
            continue;
        }
        if (want_stack || lbr || tlg) {
            if (!extras) { /* the same for every session but the stack and timestamp below */
                memset(&x, 0, sizeof x);
                if (tlg) {
                    x.ext_items = tlg->ext;
                    x.ext_items_size = tlg->ext_size;
                }
                extras = 1;
            }
            /* The stack once for every session that wants it (the caller's, or the session's
               enable property), the ids once for the LBR records. */
            if (want_stack && !stacked) {
                frames = capture_stack(stack, ETL_PROVIDER_MAX_STACK, caller);
                stacked = 1;
            }
            if (lbr && !ids) {
                pid = (uint32_t)getpid();
                tid = (uint32_t)syscall(SYS_gettid);
                ids = 1;
            }
            x.stack = want_stack ? stack : NULL;
            x.stack_frames = want_stack ? frames : 0;
            /* Each session has its own clock: the event is given the timestamp its LBR record
               names, in that session's clock. */
            x.timestamp = lbr ? etl_session_timestamp(e->s) : 0;
        }
        if (etl_session_write_event(e->s, &p->guid, d, want_stack || lbr || tlg ? &x : NULL, data, ndata) != ETL_OK)
            rc = ETL_FAILED;
        else if (lbr && etl_session_write_lbr(e->s, x.timestamp, pid, tid, lbr->filters, lbr->entries, lbr->count) !=
                            ETL_OK)
            rc = ETL_FAILED;
    }
    reader_leave(c);
    return rc;
}

int etl_provider_write(etl_provider *p, const etl_event_descriptor *d, const etl_data *data, unsigned ndata,
                       unsigned flags)
{
    return write_sessions(p, d, data, ndata, flags, NULL, __builtin_return_address(0), NULL);
}

int etl_provider_write_lbr(etl_provider *p, const etl_event_descriptor *d, const etl_data *data, unsigned ndata,
                           unsigned flags, uint32_t filters, const etl_lbr_entry *entries, unsigned count)
{
    const struct lbr_request lbr = { filters, entries, count };

    return write_sessions(p, d, data, ndata, flags, &lbr, __builtin_return_address(0), NULL);
}

/* ---- TraceLogging events ---- */

int etl_tlg_event_define(etl_tlg_event **out, etl_provider *p, const char *name, const etl_event_descriptor *d,
                         const etl_tlg_field *fields, unsigned count, char *err, size_t errsize)
{
    uint32_t meta_size, items, traits_item;
    etl_tlg_event *ev;
    uint8_t *meta;

    *out = NULL;
    if (!p) return etl_fail(err, errsize, "no provider");
    if (!p->traits) {
        char g[ETL_GUID_STRING_SIZE];
        return etl_fail(err, errsize, "provider %s has no name, which a TraceLogging event needs "
                        "(etl_provider_register_named)", etl_guid_format(&p->guid, g));
    }
    if (!(meta_size = etl_tlg_metadata_encode(NULL, 0, name, fields, count, err, errsize))) return ETL_FAILED;
    items = etl_tlg_ext_items_encode(NULL, 0, p->traits, p->traits_size, NULL, meta_size);
    if (!items || ETL_EVENT_HEADER_SIZE + items > ETL_MAX_RECORD_SIZE)
        return etl_fail(err, errsize, "event %s: its metadata (%u bytes) and its provider's traits (%u) leave no "
                        "room in a record of at most %u bytes", name, meta_size, p->traits_size, ETL_MAX_RECORD_SIZE);
    meta = malloc(meta_size);
    ev = malloc(sizeof *ev + items);
    if (!meta || !ev) {
        free(meta);
        free(ev);
        return etl_fail(err, errsize, "out of memory");
    }
    etl_tlg_metadata_encode(meta, meta_size, name, fields, count, err, errsize);
    ev->ext_size = etl_tlg_ext_items_encode(ev->ext, items, p->traits, p->traits_size, meta, meta_size);
    free(meta);
    traits_item = 8 + ETL_RECORD_SPACE(p->traits_size);
    ev->meta = ev->ext + traits_item + 8;
    ev->meta_size = meta_size;
    ev->p = p;
    if (d) {
        ev->d = *d;
    } else {
        memset(&ev->d, 0, sizeof ev->d);
        ev->d.level = 5; /* TraceLoggingWrite's default: verbose */
    }
    if (!ev->d.channel) ev->d.channel = ETL_TLG_CHANNEL;
    pthread_mutex_lock(&registry_lock);
    ev->next = p->events;
    p->events = ev;
    pthread_mutex_unlock(&registry_lock);
    *out = ev;
    return ETL_OK;
}

void etl_tlg_event_free(etl_tlg_event *ev)
{
    if (!ev) return;
    pthread_mutex_lock(&registry_lock);
    for (etl_tlg_event **q = &ev->p->events; *q; q = &(*q)->next)
        if (*q == ev) {
            *q = ev->next;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    free(ev);
}

int etl_tlg_event_enabled(const etl_tlg_event *ev)
{
    return etl_provider_enabled(ev->p, ev->d.level, ev->d.keywords);
}

int etl_tlg_event_write(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, unsigned flags)
{
    return write_sessions(ev->p, &ev->d, data, ndata, flags, NULL, __builtin_return_address(0), ev);
}

int etl_tlg_event_write_lbr(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, unsigned flags,
                            uint32_t filters, const etl_lbr_entry *entries, unsigned count)
{
    const struct lbr_request lbr = { filters, entries, count };

    return write_sessions(ev->p, &ev->d, data, ndata, flags, &lbr, __builtin_return_address(0), ev);
}

uint32_t etl_tlg_event_max_payload(const etl_tlg_event *ev)
{
    return ETL_MAX_RECORD_SIZE - ETL_EVENT_HEADER_SIZE - ev->ext_size;
}

int etl_tlg_event_check(const etl_tlg_event *ev, const etl_data *data, unsigned ndata, char *err, size_t errsize)
{
    etl_arena arena = { 0 };
    etl_fields_buf buf;
    etl_fields_fault fault;
    const etl_schema_event *s;
    uint64_t total = 0;
    uint8_t *payload;
    uint32_t pos = 0;
    int rc;

    for (unsigned i = 0; i < ndata; i++) total += data[i].size;
    if (total > etl_tlg_event_max_payload(ev))
        return etl_fail(err, errsize, "a payload of %llu bytes: more than a record of the event can carry (%u)",
                        (unsigned long long)total, etl_tlg_event_max_payload(ev));
    if (!(payload = malloc(total ? total : 1))) return etl_fail(err, errsize, "out of memory");
    for (unsigned i = 0; i < ndata; i++) {
        if (data[i].size) memcpy(payload + pos, data[i].ptr, data[i].size);
        pos += data[i].size;
    }
    memset(&buf, 0, sizeof buf);
    s = etl_tracelogging_schema(&arena, &ev->p->guid, ev->p->name, ev->meta, ev->meta_size, err, errsize);
    if (!s) {
        rc = ETL_FAILED; /* the message is in err: the writer made metadata its reader refuses */
    } else if ((rc = etl_fields_decode(s, payload, pos, sizeof(void *), &buf, &fault)) == ETL_FATAL) {
        rc = etl_fail(err, errsize, "out of memory");
    } else if (rc != ETL_OK) {
        rc = etl_fail(err, errsize, "field %s at payload byte %u: %s", fault.field ? fault.field : "?", fault.offset,
                      fault.why ? fault.why : "does not fit");
    } else if (buf.used != pos) {
        rc = etl_fail(err, errsize, "%u bytes after the last field, at payload byte %u of %u", pos - buf.used, buf.used,
                      pos);
    }
    etl_fields_buf_free(&buf);
    etl_arena_free(&arena);
    free(payload);
    return rc;
}

/* ---- sessions ---- */

/* A shared session's controller publishes what it enables, for provider processes (registry
   lock held). extra: room for one more entry that is about to be added. */
static int publish_locked(etl_session *s, int extra)
{
    etl_shared_enable table[ETL_SHARED_MAX_ENABLES];
    unsigned n = 0;

    if (!etl_session_is_shared_controller(s)) return ETL_OK;
    for (struct enable_request *r = requests; r; r = r->next) {
        if (r->s != s) continue;
        if (n == ETL_SHARED_MAX_ENABLES) return ETL_FAILED;
        memset(&table[n], 0, sizeof table[n]);
        table[n].guid = r->guid;
        table[n].level = r->level;
        table[n].properties = (uint16_t)r->properties;
        table[n].any = r->any;
        table[n].all = r->all;
        n++;
    }
    if (n + (unsigned)extra > ETL_SHARED_MAX_ENABLES) return ETL_FAILED;
    return extra ? ETL_OK : etl_session_enables_publish(s, table, n);
}

int etl_session_enable_provider(etl_session *s, const etl_guid *provider, uint8_t level, uint64_t match_any,
                                uint64_t match_all)
{
    return etl_session_enable_provider_ex(s, provider, level, match_any, match_all, 0);
}

int etl_session_enable_provider_ex(etl_session *s, const etl_guid *provider, uint8_t level, uint64_t match_any,
                                   uint64_t match_all, uint32_t properties)
{
    struct enable_request *r;
    int rc;

    if (properties & ~ETL_ENABLE_STACK_TRACE) {
        errno = EINVAL;
        return ETL_FAILED;
    }
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&registry_lock);
    for (r = requests; r; r = r->next)
        if (r->s == s && etl_guid_equal(&r->guid, provider)) break;
    if (!r) {
        if (publish_locked(s, 1) != ETL_OK) { /* a shared session's table is full */
            pthread_mutex_unlock(&registry_lock);
            return ETL_FAILED;
        }
        if (etl_session_hook_add(s, &providers_hook, NULL) != ETL_OK) {
            pthread_mutex_unlock(&registry_lock);
            return ETL_FAILED;
        }
        r = calloc(1, sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&registry_lock);
            return ETL_FAILED;
        }
        r->s = s;
        r->guid = *provider;
        r->next = requests;
        requests = r;
    }
    r->level = level;
    r->properties = properties;
    r->any = match_any;
    r->all = match_all;
    rc = rebuild_guid(provider);
    if (publish_locked(s, 0) != ETL_OK) rc = ETL_FAILED;
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

int etl_session_disable_provider(etl_session *s, const etl_guid *provider)
{
    int rc = ETL_OK, found = 0;

    pthread_mutex_lock(&registry_lock);
    for (struct enable_request **q = &requests; *q;) {
        struct enable_request *r = *q;
        if (r->s == s && etl_guid_equal(&r->guid, provider)) {
            *q = r->next;
            free(r);
            found = 1;
        }
        else q = &r->next;
    }
    if (found) {
        rc = rebuild_guid(provider);
        if (publish_locked(s, 0) != ETL_OK) rc = ETL_FAILED;
    }
    pthread_mutex_unlock(&registry_lock);
    return found ? rc : ETL_FAILED;
}

int etl_session_provider_enabled(etl_session *s, const etl_guid *provider)
{
    int found = 0;

    pthread_mutex_lock(&registry_lock);
    for (struct enable_request *r = requests; r && !found; r = r->next)
        found = r->s == s && etl_guid_equal(&r->guid, provider);
    pthread_mutex_unlock(&registry_lock);
    return found;
}

/* s leaves every provider's set, and no writer is still writing through it when this returns. */
static void providers_forget_session(etl_session *s)
{
    pthread_mutex_lock(&registry_lock);
    for (struct enable_request **q = &requests; *q;) {
        struct enable_request *r = *q;
        if (r->s == s) {
            etl_guid g = r->guid;
            *q = r->next;
            free(r);
            /* The session must leave every set before it is freed: a set is allocated afresh,
               so without memory keep trying. */
            while (rebuild_guid(&g) != ETL_OK) sched_yield();
        }
        else q = &r->next;
    }
    pthread_mutex_unlock(&registry_lock);
}

/* ---- shared sessions of other processes ---- */

/*
 * Provider processes: the shared sessions of the user's runtime directory, mapped into this
 * process so that its providers write into them (doc/etlrecord-design.md, step 4).
 *
 * The first etl_provider_register of a process maps every shared session there is (each at
 * the address its controller chose) and enables in the provider registry what each one's
 * table enables; a thread then watches the directory with inotify. A new session file, a
 * change of a table (its controller touches the file) or a stop (the same) makes it look
 * again: new sessions are mapped, changed tables applied, and a session that stops or
 * whose file is gone leaves every provider's set before it is unmapped. A look also
 * happens every second, whatever inotify says.
 */
struct attached {
    dev_t dev;
    ino_t ino;
    etl_session *s;                     /* NULL: a file that could not be mapped (not tried again) */
    uint64_t generation;
    unsigned n;
    etl_shared_enable enables[ETL_SHARED_MAX_ENABLES];
    int seen;
    struct attached *next;
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct attached *sessions;
static int watching;                    /* 1: the thread runs; -1: no runtime directory */
static int inotify_fd = -1;
static char dir[4096];

static int same_enable(const etl_shared_enable *a, const etl_shared_enable *b)
{
    return etl_guid_equal(&a->guid, &b->guid) && a->level == b->level && a->any == b->any && a->all == b->all &&
           a->properties == b->properties;
}

/* Applies a's table to the registry: what it no longer enables is disabled, the rest enabled. */
static void apply(struct attached *a)
{
    etl_shared_enable now[ETL_SHARED_MAX_ENABLES];
    unsigned n;
    uint64_t gen = etl_session_enables_read(a->s, now, &n);

    for (unsigned i = 0; i < a->n; i++) {
        unsigned j = 0;
        while (j < n && !etl_guid_equal(&now[j].guid, &a->enables[i].guid)) j++;
        if (j == n) etl_session_disable_provider(a->s, &a->enables[i].guid);
    }
    for (unsigned j = 0; j < n; j++) {
        unsigned i = 0;
        while (i < a->n && !same_enable(&a->enables[i], &now[j])) i++;
        if (i == a->n)
            etl_session_enable_provider_ex(a->s, &now[j].guid, now[j].level, now[j].any, now[j].all,
                                           now[j].properties & ETL_ENABLE_STACK_TRACE);
    }
    memcpy(a->enables, now, n * sizeof now[0]);
    a->n = n;
    a->generation = gen;
}

static void forget(struct attached *a)
{
    if (a->s) {
        providers_forget_session(a->s); /* no writer uses it after this */
        etl_session_detach(a->s);
    }
    free(a);
}

/* One look at the directory (watch_lock held). */
static void scan_locked(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    for (struct attached *a = sessions; a; a = a->next) a->seen = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[sizeof dir + NAME_MAX + 2], err[512];
        struct attached *a;
        struct stat st;

        if (len < 5 || strcmp(e->d_name + len - 4, ".shm") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0) continue;
        for (a = sessions; a; a = a->next)
            if (a->dev == st.st_dev && a->ino == st.st_ino) break;
        if (!a) {
            a = calloc(1, sizeof *a);
            if (!a) continue;
            a->dev = st.st_dev;
            a->ino = st.st_ino;
            if (etl_session_attach(&a->s, path, err, sizeof err) != ETL_OK) a->s = NULL;
            a->generation = UINT64_MAX;
            a->next = sessions;
            sessions = a;
        }
        a->seen = 1;
    }
    if (d) closedir(d);
    for (struct attached **q = &sessions; *q;) {
        struct attached *a = *q;
        if (!a->seen || (a->s && !etl_session_running(a->s))) {
            *q = a->next;
            forget(a);
            continue;
        }
        if (a->s && etl_session_generation(a->s) != a->generation) apply(a);
        q = &a->next;
    }
}

static void *watch_thread(void *arg)
{
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    (void)arg;

    for (;;) {
        /* Without inotify (a negative descriptor, which poll leaves out) a look a second. */
        struct pollfd pfd = { inotify_fd, POLLIN, 0 };

        if (poll(&pfd, 1, 1000) > 0) {
            while (read(pfd.fd, events, sizeof events) > 0) {
            }
        }
        pthread_mutex_lock(&watch_lock);
        if (watching != 1) {
            pthread_mutex_unlock(&watch_lock);
            return NULL;
        }
        scan_locked();
        pthread_mutex_unlock(&watch_lock);
    }
}

/* fork: the child has no watch thread; its next registration starts one. */
static void watch_atfork_prepare(void) { pthread_mutex_lock(&watch_lock); }
static void watch_atfork_parent(void) { pthread_mutex_unlock(&watch_lock); }
static void watch_atfork_child(void)
{
    /* The registry forgot what was enabled (atfork_child above): apply every table again. */
    for (struct attached *a = sessions; a; a = a->next) {
        a->generation = UINT64_MAX;
        a->n = 0;
    }
    if (watching == 1) {
        watching = 0;
        close(inotify_fd);
        inotify_fd = -1;
    }
    pthread_mutex_unlock(&watch_lock);
}

static pthread_once_t watch_atfork_once = PTHREAD_ONCE_INIT;
static void watch_install_atfork(void) { pthread_atfork(watch_atfork_prepare, watch_atfork_parent, watch_atfork_child); }

/* Provider processes: attach now to the shared sessions of the runtime directory that enable
   providers, and keep watching it (a thread, started once per process). */
static void shared_sessions_watch(void)
{
    pthread_once(&watch_atfork_once, watch_install_atfork);
    pthread_mutex_lock(&watch_lock);
    if (watching == 0) {
        char err[512];
        pthread_t t;
        pthread_attr_t at;

        watching = -1;
        if (etl_session_runtime_dir(dir, sizeof dir, err, sizeof err) == ETL_OK) {
            inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
            if (inotify_fd >= 0)
                inotify_add_watch(inotify_fd, dir,
                                  IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB | IN_CLOSE_WRITE);
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            if (pthread_create(&t, &at, watch_thread, NULL) == 0) watching = 1;
            pthread_attr_destroy(&at);
        }
    }
    if (watching == 1) scan_locked();
    pthread_mutex_unlock(&watch_lock);
}
