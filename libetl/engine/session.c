/* SPDX-License-Identifier: MIT */
/* A session's lifecycle: its start (the pool, the clock, the file, the flush thread), query, updates and stop, and the hooks what plugs into it registers. */
/* MAP_ANONYMOUS, syscall: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "writer/writer.h"

/* A hook registered with a session (etl_session_hook_add). */
struct etl_session_hook_entry {
    const struct etl_session_hook *h;
    void *ctx;
    struct etl_session_hook_entry *next;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void etl_session_set_error(etl_session *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

const char *etl_session_error(const etl_session *s) { return s ? s->err : "out of memory"; }

void etl_session_fail(etl_session *s, const char *why)
{
    pthread_mutex_lock(&s->lock);
    if (!s->failed) {
        snprintf(s->fail_err, sizeof s->fail_err, "%s", why);
        s->failed = 1;
    }
    pthread_mutex_unlock(&s->lock);
}

int etl_session_failed(etl_session *s)
{
    int failed;

    pthread_mutex_lock(&s->lock);
    failed = s->failed;
    if (failed && s->fail_err[0]) snprintf(s->err, sizeof s->err, "%s", s->fail_err);
    pthread_mutex_unlock(&s->lock);
    return failed;
}

etl_lbr_config *etl_session_lbr_slot(etl_session *s) { return &s->lbr; }
void etl_session_set_kernel_flags(etl_session *s, uint32_t flags) { s->kernel_flags = flags; }
uint32_t etl_session_kernel_flags(const etl_session *s) { return s->kernel_flags; }

int64_t etl_session_timestamp(const etl_session *s) { return etl_session_now(s); }

/* Ticks of the cycle counter per microsecond, measured against the monotonic clock (the
   TSC line has measured it already when there is one). */
static uint32_t measure_cpu_mhz(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t known = etl_monoclock_tsc_mhz();
    if (known) return known;
    int64_t t0 = etl_clock_ns(CLOCK_MONOTONIC_RAW), c0 = etl_cycles(), t1, c1;
    struct timespec pause = { 0, 20000000 };
    nanosleep(&pause, NULL);
    t1 = etl_clock_ns(CLOCK_MONOTONIC_RAW);
    c1 = etl_cycles();
    return t1 > t0 ? (uint32_t)((c1 - c0) * 1000 / (t1 - t0)) : 1000;
#else
    return 1000;
#endif
}

/* The clock of the file: StartTime and the raw clock then, taken together. */
static void session_clock(etl_session *s)
{
    s->clock.type = s->p.clock_type ? s->p.clock_type : ETL_CLOCK_PERFCOUNTER;
    /* The TSC line serves every session of the process; it is fitted once, here. */
    s->exact_clock = (s->p.engine_flags & ETL_ENGINE_EXACT_CLOCK) || !etl_monoclock_init();
    /* A shared session's writers read the line from its memory: there from the start (the
       flush thread publishes it again after each re-fit). */
    if (s->role == ETL_ROLE_CONTROLLER) etl_monoclock_publish_copy(&s->h->line);
    s->clock.cpu_speed_mhz = measure_cpu_mhz(); /* recorded whatever the clock, as Windows does */
    s->clock.perf_freq = s->clock.type == ETL_CLOCK_SYSTEMTIME ? 10000000 : 1000000000;
    s->clock.start_timestamp = etl_session_now(s);
    s->clock.start_time = etl_time_to_filetime(etl_clock_ns(CLOCK_REALTIME));
}

/*
 * BootTime: the kernel's boot time as /proc/stat gives it (btime, whole seconds), so that
 * every session of one boot records the same value and etlmerge can tell they share a clock.
 * 0 when it cannot be read.
 */
static int64_t boot_filetime(void)
{
    char line[256];
    long long btime = 0;
    FILE *f = fopen("/proc/stat", "r");

    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &btime) == 1) break;
    fclose(f);
    return btime > 0 ? etl_time_to_filetime(btime * 1000000000LL) : 0;
}

void etl_session_writer_options(const etl_session *s, etl_writer_options *o, uint32_t mode)
{
    memset(o, 0, sizeof *o);
    o->buffer_size = s->bsize;
    o->log_file_mode = mode;
    o->maximum_file_size = (uint64_t)s->p.maximum_file_size_mb << (s->p.log_file_mode & ETL_MODE_USE_KBYTES_FOR_SIZE ? 10 : 20);
    o->number_of_processors = s->nproc;
    o->clock = s->clock;
    o->boot_time = s->boot_time;
    o->logger_name = s->logger_name;
    o->header_pid = (uint32_t)getpid();
    o->header_tid = (uint32_t)syscall(SYS_gettid);
    o->direct_io = (s->p.engine_flags & ETL_ENGINE_DIRECT_IO) != 0;
}

/* ------------------------------------------------------------------ start, query, stop */

void etl_session_stats_get(const etl_session *s, etl_session_stats *out)
{
    if (s->stopped) {
        *out = s->final;
        return;
    }
    memset(out, 0, sizeof *out);
    out->number_of_buffers = atomic_load(&s->h->allocated);
    out->free_buffers = atomic_load(&s->h->free_count);
    out->events_lost = etl_pool_events_lost(s);
    out->buffers_written = atomic_load(&s->h->buffers_written);
    out->log_buffers_lost = atomic_load(&s->h->log_buffers_lost);
    out->engine_flags = (s->rseq ? 0 : ETL_ENGINE_ATOMIC_RESERVE) |
                        (s->exact_clock || s->clock.type != ETL_CLOCK_PERFCOUNTER ? ETL_ENGINE_EXACT_CLOCK : 0) |
                        (s->role != ETL_ROLE_PRIVATE ? ETL_ENGINE_SHARED : 0);
    out->buffers_reclaimed = atomic_load(&s->h->buffers_reclaimed);
    out->writers_refused = atomic_load(&s->h->writers_refused);
    out->real_time_buffers_lost = atomic_load(&s->h->rt_buffers_lost);
    out->real_time_events_lost = atomic_load(&s->h->rt_events_lost);
}

/* The session whose controller has pid (etl_session_name_list's callback). */
struct holder_name {
    long pid;
    char name[ETL_SESSION_NAME_MAX + 1];
};

static void find_holder(void *arg, const char *name, long pid, int orphaned)
{
    struct holder_name *h = arg;

    if (pid == h->pid && !orphaned && !h->name[0]) snprintf(h->name, sizeof h->name, "%s", name);
}

static int start(etl_session *s)
{
    etl_session_properties *p = &s->p;
    uint32_t kb = p->buffer_size_kb ? p->buffer_size_kb : 64, limit;
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    struct etl_layout l;
    struct etl_shared_head *h;
    pthread_mutexattr_t ma;

    if (kb < 4 || kb > 16384) {
        etl_session_set_error(s, "buffer size %u KB is out of range (4 to 16384)", kb);
        return -1;
    }
    s->bsize = kb * 1024;
    s->nproc = p->number_of_processors ? p->number_of_processors : conf > 0 ? (uint32_t)conf : 1;
    /* Without per-processor buffering, one pool serves every processor: one current buffer,
       which writers share in the order they reserve space (compare-and-swap, unless the
       machine has one processor), and at least 2 buffers. */
    s->pooled = (p->log_file_mode & ETL_MODE_NO_PER_PROCESSOR_BUFFERING) != 0;
    s->ncpu = s->pooled ? 1 : s->nproc;
    if (s->pooled && (p->engine_flags & ETL_ENGINE_SHARED)) {
        etl_session_set_error(s, "a session without per-processor buffering cannot be shared with other processes "
                                 "(their writers need a buffer per processor)");
        return -1;
    }
    s->buffering = (p->log_file_mode & ETL_MODE_BUFFERING) != 0;
    if ((p->log_file_mode & ETL_MODE_FILE_APPEND) &&
        (p->log_file_mode & (ETL_MODE_REAL_TIME | ETL_MODE_BUFFERING | ETL_MODE_PRIVATE_LOGGER))) {
        etl_session_set_error(s, "append mode continues a sequential file: not with real-time, buffering or "
                                 "private logger mode");
        return -1;
    }
    if (p->log_file_mode & ETL_MODE_PRIVATE_LOGGER) {
        if (p->engine_flags & ETL_ENGINE_SHARED) {
            etl_session_set_error(s, "a private logger is its process's own: it cannot be shared with other processes");
            return -1;
        }
        if (p->log_file_mode & ETL_MODE_FILE_NEWFILE) {
            etl_session_set_error(s, "a private logger cannot be in NEWFILE mode");
            return -1;
        }
    }
    /* Buffering mode keeps what its buffers hold: unless told, 16 per processor. */
    s->nmin = p->minimum_buffers ? p->minimum_buffers : s->buffering ? 16 * s->ncpu : 0;
    if (s->nmin < 2 * s->ncpu) s->nmin = 2 * s->ncpu;
    /* Unless told, the pool may grow under pressure by ETL_DEFAULT_GROWTH_BYTES of buffers
       (engine.h): the minimum stays what the session holds at rest. */
    limit = s->buffering ? s->nmin
            : p->maximum_buffers ? (p->maximum_buffers > s->nmin ? p->maximum_buffers : s->nmin)
                                 : s->nmin + etl_session_default_growth(s->bsize);
    if (s->ncpu > 65536 || limit > (1u << 23)) {
        etl_session_set_error(s, "%u processors and %u buffers are more than a session takes", s->ncpu, limit);
        return -1;
    }
    /* The layout has room for twice the maximum, so that an update may raise it (untouched, and
       in a shared session's file not reserved, until then); a buffering ring is fixed. */
    s->nmax = s->buffering ? limit : 2 * limit;
    etl_shared_layout_of(s->ncpu, s->nmax, s->bsize, &l);
    if ((p->engine_flags & ETL_ENGINE_SHARED) && l.size > ETL_SHARED_STRIDE) s->nmax = limit;
    s->realtime = (p->log_file_mode & ETL_MODE_REAL_TIME) != 0;
    if (s->realtime && s->buffering) {
        etl_session_set_error(s, "real-time mode cannot be combined with buffering mode");
        return -1;
    }
    if (!s->buffering && !s->realtime && !(s->log_file_name && *s->log_file_name)) {
        etl_session_set_error(s, "a session needs a log file name unless it is in buffering or real-time mode");
        return -1;
    }
    /* A real-time session delivers every second unless told otherwise (EVENT_TRACE_PROPERTIES,
       FlushTimer); it holds for a consumer what the pool can spare beyond a buffer per
       processor and one more. */
    if (s->realtime && !p->flush_timer_s) p->flush_timer_s = 1;
    if (s->realtime && (s->rt_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        etl_session_set_error(s, "cannot make the real-time consumer's event: %s", strerror(errno));
        return -1;
    }
    /* Restartable sequences need a buffer of its own for every processor a writer may run on,
       and an rseq area in this thread (whose kind every thread of the process shares). */
#if defined(ETL_HAVE_RSEQ)
    s->rseq = !(p->engine_flags & ETL_ENGINE_ATOMIC_RESERVE) && conf > 0 && s->ncpu >= (uint32_t)conf &&
              etl_rseq_thread_area() != NULL;
#endif
    s->role = p->engine_flags & ETL_ENGINE_SHARED ? ETL_ROLE_CONTROLLER : ETL_ROLE_PRIVATE;
    if (s->role == ETL_ROLE_CONTROLLER && !s->rseq) {
        etl_session_set_error(s, "a shared session needs restartable sequences (x86-64, Linux 4.18 or later), a buffer per "
                  "processor and no ETL_ENGINE_ATOMIC_RESERVE");
        return -1;
    }
    etl_shared_layout_of(s->ncpu, s->nmax, s->bsize, &l);
    s->memory_size = l.size;
    if (s->role == ETL_ROLE_CONTROLLER) {
        if (etl_shared_create(s, l.size, l.data + (size_t)s->nmin * s->bsize, l.data + (size_t)limit * s->bsize) != 0)
            return -1;
    } else {
        s->mapping = mmap(NULL, l.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s->mapping == MAP_FAILED) {
            s->mapping = NULL;
            etl_session_set_error(s, "cannot reserve %zu bytes for %u buffers: %s", l.size, s->nmax, strerror(errno));
            return -1;
        }
    }
    etl_shared_place(s, s->mapping, &l);
    h = s->h;
    h->layout = ETL_SHARED_LAYOUT;
    h->head_size = (uint32_t)sizeof *h;
    h->size = l.size;
    h->address = (uint64_t)(uintptr_t)s->mapping;
    h->bsize = s->bsize;
    h->ncpu = s->ncpu;
    h->nmin = s->nmin;
    h->nmax = s->nmax;
    atomic_store(&h->limit, limit);
    h->buffering = (uint8_t)s->buffering;
    h->rseq = (uint8_t)s->rseq;
    h->populate = (uint8_t)s->populate;
    h->controller_pid = (int32_t)getpid();
    snprintf(h->name, sizeof h->name, "%s", s->logger_name);
    /* A real-time session hands its buffers on a few at a time, an eighth of the starting pool
       (1 to 16; the flush thread also looks every 10 ms): batches of half the pool made the
       consumer take 30 buffers at once and fall behind at the start, and a wake for every
       buffer cost the flush thread, the delivery thread and the consumer a system call and a
       switch each per buffer (doc/benchmarks.md, issue 17). */
    s->low_water = h->low_water = s->nmin / 2 > 2 * s->ncpu ? s->nmin / 2 : 2 * s->ncpu;
    s->wake_every = h->wake_every = !s->realtime ? 0 : s->nmin / 8 < 1 ? 1 : s->nmin / 8 > 16 ? 16 : s->nmin / 8;
#if defined(__x86_64__)
    s->evict = etl_flush_can_clflushopt() ? 2 : 1; /* CLFLUSH is in every x86-64 (SSE2) */
#else
    s->evict = etl_flush_can_clflushopt();
#endif
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    s->ring_lock_made = pthread_mutex_init(&h->ring_lock, &ma) == 0;
    pthread_mutexattr_destroy(&ma);
    if (!s->ring_lock_made) {
        etl_session_set_error(s, "cannot make the session's ring lock");
        return -1;
    }
    for (uint32_t i = 0; i < s->nmax; i++) {
        s->bufs[i].cur.data = s->memory + (size_t)i * s->bsize;
        s->bufs[i].cur.limit = s->bsize; /* fixed: the sequences compare against it */
    }
    /* The minimum is in the pool from the start, touched so that no page fault waits later. */
    for (uint32_t i = 0; i < s->nmin; i++) {
        memset(s->bufs[i].cur.data, 0, s->bsize);
        etl_pool_free_push(s, i);
    }
    atomic_store(&h->allocated, s->nmin);
    s->line = s->role == ETL_ROLE_CONTROLLER ? &h->line : &etl_monoclock_line;
    session_clock(s);
    h->clock = s->clock;
    h->exact_clock = (uint8_t)s->exact_clock;
    s->boot_time = boot_filetime();
    if (!s->buffering && s->log_file_name && *s->log_file_name) {
        etl_writer_options o;
        etl_session_writer_options(s, &o, p->log_file_mode & ~ETL_MODE_BUFFERING);
        if (etl_writer_open(&s->writer, s->log_file_name, &o) != ETL_OK) {
            long holder = etl_writer_busy_pid(s->writer);
            struct holder_name hn = { holder, "" };
            char err[256];
            if (holder > 0 && etl_session_name_list(find_holder, &hn, err, sizeof err) == ETL_OK && hn.name[0])
                etl_session_set_error(s, "%s: session %s (pid %ld) writes this file; a log file has one writer",
                                      etl_writer_path(s->writer), hn.name, holder);
            else
                etl_session_set_error(s, "%s", etl_writer_error(s->writer));
            etl_writer_close(s->writer, 0);
            s->writer = NULL;
            return -1;
        }
        /* An eighth of the starting pool, from 1 to 16 buffers. */
        s->chunk = s->nmin / 8 < 1 ? 1 : s->nmin / 8 > 16 ? 16 : s->nmin / 8;
        s->written_ok = calloc(s->nmax, 1);
        if (!s->written_ok) {
            etl_session_set_error(s, "out of memory");
            return -1;
        }
    }
    if (sem_init(&h->wake, s->role == ETL_ROLE_CONTROLLER, 0) != 0) {
        etl_session_set_error(s, "cannot make the flush thread's semaphore: %s", strerror(errno));
        return -1;
    }
    s->wake_made = 1;
    s->pending = calloc(s->nmax, sizeof *s->pending);
    s->next_order = calloc(s->ncpu, sizeof *s->next_order);
    s->gap_since = calloc(s->ncpu, sizeof *s->gap_since);
    if (!s->pending || !s->next_order || !s->gap_since) {
        etl_session_set_error(s, "out of memory");
        return -1;
    }
    for (uint32_t c = 0; c < s->ncpu; c++) s->next_order[c] = 1;
    if (pthread_create(&s->flusher, NULL, etl_flush_thread, s) != 0) {
        etl_session_set_error(s, "cannot start the flush thread: %s", strerror(errno));
        return -1;
    }
    s->flusher_started = 1;
    if (s->role == ETL_ROLE_CONTROLLER) {
        /* Complete: the file gets its name, and provider processes may map it. */
        atomic_store_explicit((_Atomic uint64_t *)&h->magic, ETL_SHARED_MAGIC, memory_order_release);
        if (rename(s->shm_new, s->shm_path) != 0) {
            etl_session_set_error(s, "%s: %s", s->shm_path, strerror(errno));
            return -1;
        }
        s->shm_new[0] = '\0';
        close(s->address_lock);
        s->address_lock = -1;
    }
    return 0;
}

void etl_session_properties_get(const etl_session *s, etl_session_properties *out)
{
    *out = s->p;
    out->logger_name = s->logger_name;
    out->log_file_name = s->log_file_name;
    out->buffer_size_kb = s->bsize / 1024;
    out->minimum_buffers = s->nmin;
    out->maximum_buffers = s->stopped ? s->final_limit : atomic_load(&s->h->limit);
    out->number_of_processors = s->nproc;
    out->clock_type = s->clock.type;
    if (!(out->log_file_mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_BUFFERING)) &&
        s->log_file_name && *s->log_file_name)
        out->log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
}

etl_session *etl_session_new(void)
{
    etl_session *s = calloc(1, sizeof *s);

    if (!s) return NULL;
    s->shm_fd = -1;
    s->address_lock = -1;
    etl_pool_ids_init();
    s->consumer_fd = -1;
    s->rt_wake = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->done, NULL);
    pthread_cond_init(&s->held_cond, NULL);
    return s;
}

/* What a session holds besides the handle itself (its name, properties, message and final
   statistics): released at the stop. */
static void release(etl_session *s)
{
    while (s->hooks) {
        struct etl_session_hook_entry *e = s->hooks;
        s->hooks = e->next;
        free(e);
    }
    if (s->mapping && !s->borrowed) munmap(s->mapping, s->memory_size);
    if (s->shm_fd >= 0) close(s->shm_fd);
    if (s->address_lock >= 0) close(s->address_lock);
    if (s->rt_wake >= 0) close(s->rt_wake);
    free(s->written_ok);
    free(s->pending);
    free(s->next_order);
    free(s->gap_since);
    s->mapping = NULL;
    s->h = NULL;
    s->shm_fd = s->address_lock = s->rt_wake = -1;
    s->written_ok = NULL;
    s->pending = NULL;
    s->next_order = NULL;
    s->gap_since = NULL;
}

void etl_session_free(etl_session *s)
{
    release(s);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->done);
    pthread_cond_destroy(&s->held_cond);
    free(s->logger_name);
    free(s->log_file_name);
    free(s);
}

/* ------------------------------------------------------------------ updates */

int etl_session_set_flush_timer(etl_session *s, uint32_t seconds)
{
    if (s->role == ETL_ROLE_ATTACHED || s->buffering) {
        etl_session_set_error(s, "%s", s->buffering ? "a buffering session has no flush timer"
                                                  : "only the session's controller updates it");
        return ETL_FAILED;
    }
    /* A real-time session's 0 means a second, as at its start. */
    if (s->realtime && !seconds) seconds = 1;
    pthread_mutex_lock(&s->lock);
    s->p.flush_timer_s = seconds;
    pthread_mutex_unlock(&s->lock);
    sem_post(&s->h->wake); /* the flush thread takes the new period at once */
    return ETL_OK;
}

int etl_session_set_maximum_buffers(etl_session *s, uint32_t n)
{
    uint32_t limit = atomic_load(&s->h->limit);

    if (s->role == ETL_ROLE_ATTACHED || s->buffering) {
        etl_session_set_error(s, "%s", s->buffering ? "a buffering session's ring cannot grow"
                                                  : "only the session's controller updates it");
        return ETL_FAILED;
    }
    if (n < limit || n > s->nmax) {
        etl_session_set_error(s, "MaximumBuffers %u: it can be raised from %u up to %u (twice its value at the "
                 "start, which the session's memory has room for), not lowered", n, limit, s->nmax);
        return ETL_FAILED;
    }
    /* A shared session's file gets the memory now, unless writers reserve it as the pool
       grows (s->populate): no room fails here, not in a writer. */
    if (s->shm_fd >= 0 && !s->populate) {
        struct etl_layout l;
        etl_shared_layout_of(s->ncpu, s->nmax, s->bsize, &l);
        if ((errno = posix_fallocate(s->shm_fd, 0, (off_t)(l.data + (size_t)n * s->bsize))) != 0) {
            etl_session_set_error(s, "%s: cannot reserve the memory of %u buffers: %s", s->shm_path, n,
                                  strerror(errno));
            return ETL_FAILED;
        }
    }
    atomic_store(&s->h->limit, n);
    return ETL_OK;
}

int etl_session_start(etl_session **out, const etl_session_properties *p)
{
    etl_session *s = etl_session_new();

    *out = s;
    if (!s) return ETL_FATAL;
    s->p = *p;
    s->logger_name = strdup(p->logger_name ? p->logger_name : "libetl");
    s->log_file_name = p->log_file_name ? strdup(p->log_file_name) : NULL;
    /* A private logger's file name gets its process id appended ("trace.etl_1234"), as
       EVENT_TRACE_PROPERTIES says, so that the same code in two processes writes two files. */
    if (s->log_file_name && *s->log_file_name && (p->log_file_mode & ETL_MODE_PRIVATE_LOGGER)) {
        char *named = malloc(strlen(s->log_file_name) + 24);
        if (named) sprintf(named, "%s_%ld", s->log_file_name, (long)getpid());
        free(s->log_file_name);
        s->log_file_name = named;
    }
    if (!s->logger_name || (p->log_file_name && !s->log_file_name)) {
        etl_session_set_error(s, "out of memory");
    } else if (start(s) == 0) {
        return ETL_OK;
    }
    etl_session_fail(s, s->err); /* stopped, it says why again */
    return ETL_FATAL;
}

/* ------------------------------------------------------------------ hooks */

/* (errno says why a registration failed: the hook's owner says it in its own words.) */
int etl_session_hook_add(etl_session *s, const struct etl_session_hook *h, void *ctx)
{
    struct etl_session_hook_entry *e;
    int rc = ETL_OK;

    pthread_mutex_lock(&s->lock);
    for (e = s->hooks; e && e->h != h; e = e->next) {
    }
    if (e) {
        if (e->ctx != ctx) {
            errno = EEXIST;
            rc = ETL_FAILED;
        }
    } else if ((e = malloc(sizeof *e)) != NULL) {
        e->h = h;
        e->ctx = ctx;
        e->next = s->hooks;
        s->hooks = e;
    } else {
        errno = ENOMEM;
        rc = ETL_FAILED;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void *etl_session_hook_context(const etl_session *s, const struct etl_session_hook *h)
{
    pthread_mutex_t *lock = (pthread_mutex_t *)&s->lock; /* a lookup changes nothing */
    void *ctx = NULL;

    pthread_mutex_lock(lock);
    for (const struct etl_session_hook_entry *e = s->hooks; e; e = e->next)
        if (e->h == h) {
            ctx = e->ctx;
            break;
        }
    pthread_mutex_unlock(lock);
    return ctx;
}

/* At the stop: every hook's stop, the last registered first, with no lock held (a hook may
   call into the session). A hook added meanwhile is at the head, before the first one called. */
static void hooks_stop(etl_session *s)
{
    struct etl_session_hook_entry *first;

    pthread_mutex_lock(&s->lock);
    first = s->hooks;
    pthread_mutex_unlock(&s->lock);
    for (const struct etl_session_hook_entry *e = first; e; e = e->next)
        if (e->h->stop) e->h->stop(s, e->ctx);
}

/* The controller's stop: the flush thread writes what is left, the file is finalised, the
   consumer gets the end; then the final statistics are kept and the rest released. */
static void stop(etl_session *s)
{
    if (s->h && s->role == ETL_ROLE_CONTROLLER) {
        atomic_store(&s->h->stopping, 1);
        etl_shared_changed(s);
    }
    if (s->flusher_started) {
        atomic_store(&s->h->stopping, 1);
        sem_post(&s->h->wake);
        pthread_join(s->flusher, NULL);
        s->flusher_started = 0;
    }
    if (s->writer) {
        etl_writer_set_events_lost(s->writer, (uint32_t)etl_pool_events_lost(s));
        if (etl_writer_close(s->writer, etl_time_to_filetime(etl_clock_ns(CLOCK_REALTIME))) != ETL_OK)
            etl_session_fail(s, "cannot finalise the log file");
    }
    if (s->realtime) etl_realtime_end(s);
    if (s->h) {
        etl_session_stats_get(s, &s->final);
        s->final_limit = atomic_load(&s->h->limit);
    } else {
        memset(&s->final, 0, sizeof s->final);
        s->final_limit = s->p.maximum_buffers;
    }
    if (s->role == ETL_ROLE_CONTROLLER) {
        if (s->shm_path[0]) unlink(s->shm_path);
        if (s->shm_new[0]) unlink(s->shm_new);
    }
    if (s->wake_made) sem_destroy(&s->h->wake);
    if (s->ring_lock_made) pthread_mutex_destroy(&s->h->ring_lock);
    s->wake_made = s->ring_lock_made = 0;
    release(s);
    s->stopped = 1;
}

int etl_session_stop(etl_session *s, etl_session_stats *out)
{
    if (!s) return ETL_FATAL;
    if (!s->stopped) {
        /* What plugs into the session acts first, while the session still takes events: the
           kernel capture writes its last ones (the DCEnd rundown), and the session leaves
           every provider's set. */
        hooks_stop(s);
        if (s->role == ETL_ROLE_ATTACHED) { /* not the controller's to stop: just leave it */
            memset(&s->final, 0, sizeof s->final);
            s->final_limit = atomic_load(&s->h->limit);
            release(s);
            s->stopped = 1;
        } else {
            stop(s);
        }
    }
    if (out) *out = s->final;
    return etl_session_failed(s) ? ETL_FATAL : ETL_OK;
}

void etl_session_close(etl_session *s)
{
    if (!s) return;
    if (!s->stopped) etl_session_stop(s, NULL);
    etl_session_free(s);
}
