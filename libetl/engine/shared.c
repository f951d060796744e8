/* SPDX-License-Identifier: MIT */
/* A session's mapping, and shared sessions: the controller's session file, the table of the providers it enables, and the processes that attach to it. */
/* MAP_SHARED at a chosen address, makedev: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "engine/engine.h"

/* ------------------------------------------------------------------ the mapping */

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

void etl_shared_layout_of(uint32_t ncpu, uint32_t nmax, uint32_t bsize, struct etl_layout *l)
{
    size_t o = ALIGN_UP(sizeof(struct etl_shared_head), 64);

    l->current = o;
    o += (size_t)ncpu * sizeof(uint64_t);
    l->slots = o;
    o += (size_t)ncpu * sizeof(void *);
    o = ALIGN_UP(o, 64);
    l->lost = o;
    o += (size_t)ncpu * sizeof(struct etl_lost_count);
    l->bufs = o;
    o += (size_t)nmax * sizeof(struct etl_ebuf);
    l->ring = o;
    o += (size_t)nmax * sizeof(uint32_t);
    l->batch = o;
    o += (size_t)nmax * sizeof(uint32_t);
    l->data = ALIGN_UP(o, 4096);
    l->size = l->data + (size_t)nmax * bsize;
}

/* Points the session's arrays into its mapping. */
void etl_shared_place(etl_session *s, uint8_t *base, const struct etl_layout *l)
{
    s->h = (struct etl_shared_head *)(void *)base;
    s->current = (_Atomic uint64_t *)(void *)(base + l->current);
    s->slots = (struct etl_rseq_cursor **)(void *)(base + l->slots);
    s->lost = (struct etl_lost_count *)(void *)(base + l->lost);
    s->bufs = (struct etl_ebuf *)(void *)(base + l->bufs);
    s->ring = (uint32_t *)(void *)(base + l->ring);
    s->batch = (uint32_t *)(void *)(base + l->batch);
    s->memory = base + l->data;
}

/*
 * Maps size bytes of fd at exactly want, or fails with EEXIST when something is there
 * already. The address is given as a hint, not with MAP_FIXED_NOREPLACE: the kernel takes a
 * hint when the range is free, and ThreadSanitizer's mmap (GCC 12) mishandles the flag.
 */
static void *map_at(void *want, size_t size, int fd)
{
    void *got = mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (got == MAP_FAILED || got == want) return got;
    munmap(got, size);
    errno = EEXIST;
    return MAP_FAILED;
}

static uint64_t fnv1a(const char *t)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (; *t; t++) h = (h ^ (unsigned char)*t) * UINT64_C(0x100000001b3);
    return h;
}

/* The address a shared session of the runtime directory dir already uses (its file's head), or 0. */
static uint64_t address_in_use(const char *dir, const char *file)
{
    char path[4096 + 300];
    struct etl_shared_head h;
    int fd;
    uint64_t a = 0;

    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path) return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    if (pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && h.magic == ETL_SHARED_MAGIC) a = h.address;
    close(fd);
    return a;
}

/*
 * The memory of the buffers the pool may grow into. Where the kernel can populate a shared
 * mapping on request (MADV_POPULATE_WRITE, Linux 5.14), the writer that takes a buffer into
 * the pool first reserves its memory so (pool.c): a full /dev/shm then fails that one take,
 * counted as events lost, and the session holds only what it used. Elsewhere all of it is
 * reserved now, as the alternative is a writer killed by SIGBUS.
 */
static int reserve_growth(etl_session *s, size_t reserve_all)
{
#if defined(MADV_POPULATE_WRITE)
    /* The head's page is reserved already: this only asks whether the kernel knows the advice. */
    if (madvise(s->mapping, 4096, MADV_POPULATE_WRITE) == 0) {
        s->populate = 1;
        return 0;
    }
#endif
    if ((errno = posix_fallocate(s->shm_fd, 0, (off_t)reserve_all)) != 0) {
        etl_session_set_error(s, "%s: cannot reserve %zu bytes of session memory: %s", s->shm_new, reserve_all,
                              strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * The controller's mapping: RUNTIME/KEY.shm.new, sized and mapped at a free slot address
 * (one no other session of the directory uses, and free in this process), under the
 * directory's address lock, which start keeps until the file has its name.
 */
int etl_shared_create(etl_session *s, size_t size, size_t reserve, size_t reserve_all)
{
    char dir[4096], key[ETL_SESSION_NAME_MAX + 1], lockpath[4096 + 32];
    uint8_t used[ETL_SHARED_SLOTS] = { 0 };
    DIR *d;
    struct dirent *e;
    uint32_t first;

    if (etl_session_name_key(s->logger_name, key) != ETL_OK) {
        etl_session_set_error(s, "'%s' is not a session name", s->logger_name);
        return -1;
    }
    if (etl_session_runtime_dir(dir, sizeof dir, s->err, sizeof s->err) != ETL_OK) return -1;
    if (!etl_session_name_held(s->logger_name)) {
        etl_session_set_error(s, "session '%s': a shared session's name must be claimed first (etl_session_name_claim)", s->logger_name);
        return -1;
    }
    if (size > ETL_SHARED_STRIDE) {
        etl_session_set_error(s, "%zu bytes of buffers are more than a shared session may map (%llu)", size,
               (unsigned long long)ETL_SHARED_STRIDE);
        return -1;
    }
    snprintf(lockpath, sizeof lockpath, "%s/.address.lock", dir);
    s->address_lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->address_lock < 0 || flock(s->address_lock, LOCK_EX) != 0) {
        etl_session_set_error(s, "%s: %s", lockpath, strerror(errno));
        return -1;
    }
    if ((d = opendir(dir)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            uint64_t a;
            if (len < 5 || strcmp(e->d_name + len - 4, ".shm") != 0) continue;
            a = address_in_use(dir, e->d_name);
            if (a >= ETL_SHARED_BASE && (a - ETL_SHARED_BASE) % ETL_SHARED_STRIDE == 0 && (a - ETL_SHARED_BASE) / ETL_SHARED_STRIDE < ETL_SHARED_SLOTS)
                used[(a - ETL_SHARED_BASE) / ETL_SHARED_STRIDE] = 1;
        }
        closedir(d);
    }
    snprintf(s->shm_path, sizeof s->shm_path, "%s/%s.shm", dir, key);
    snprintf(s->shm_new, sizeof s->shm_new, "%s/%s.shm.new", dir, key);
    unlink(s->shm_new);
    s->shm_fd = open(s->shm_new, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->shm_fd < 0) {
        etl_session_set_error(s, "%s: %s", s->shm_new, strerror(errno));
        return -1;
    }
    /* The minimum is reserved now, not when a writer first touches a page: a full /dev/shm
       must fail the start with a message, not kill a writer later with SIGBUS. What the pool
       may grow into is reserved as it grows (reserve_growth). */
    if (ftruncate(s->shm_fd, (off_t)size) != 0 || (errno = posix_fallocate(s->shm_fd, 0, (off_t)reserve)) != 0) {
        etl_session_set_error(s, "%s: cannot reserve %zu bytes of session memory: %s", s->shm_new, reserve, strerror(errno));
        return -1;
    }
    first = (uint32_t)(fnv1a(key) % ETL_SHARED_SLOTS);
    for (uint32_t i = 0; i < ETL_SHARED_SLOTS; i++) {
        uint32_t slot = (first + i) % ETL_SHARED_SLOTS;
        void *want = (void *)(uintptr_t)(ETL_SHARED_BASE + (uint64_t)slot * ETL_SHARED_STRIDE), *got;
        if (used[slot]) continue;
        got = map_at(want, size, s->shm_fd);
        if (got == want) {
            s->mapping = got;
            return reserve_growth(s, reserve_all);
        }
        if (errno != EEXIST) break;
    }
    etl_session_set_error(s, "%s: cannot map %zu bytes of session memory at a free address: %s", s->shm_new, size, strerror(errno));
    return -1;
}

/* Tell provider processes that the shared session changed (their watch sees the file's
   attributes change). */
void etl_shared_changed(etl_session *s)
{
    atomic_fetch_add_explicit(&s->h->generation, 1, memory_order_release);
    if (s->shm_fd >= 0) futimens(s->shm_fd, NULL);
}

/* ------------------------------------------------------------------ shared sessions */

int etl_session_is_shared_controller(const etl_session *s) { return s->role == ETL_ROLE_CONTROLLER; }

/* The enable table's sequence lock orders its plain copies with fences, which
   ThreadSanitizer does not take (GCC warns, and -Werror fails the build). Its readers are in
   other processes, where it cannot look anyway: there the fences go. */
#if defined(ETL_TSAN)
#define SEQLOCK_FENCE(order) atomic_signal_fence(order)
#else
#define SEQLOCK_FENCE(order) atomic_thread_fence(order)
#endif

int etl_session_enables_publish(etl_session *s, const etl_shared_enable *e, unsigned n)
{
    struct etl_shared_head *h = s->h;
    uint32_t seq;

    if (s->role != ETL_ROLE_CONTROLLER) return ETL_OK;
    if (n > ETL_SHARED_MAX_ENABLES) {
        etl_session_set_error(s, "a shared session enables at most %d providers", ETL_SHARED_MAX_ENABLES);
        return ETL_FAILED;
    }
    seq = atomic_load_explicit(&h->enable_seq, memory_order_relaxed);
    atomic_store_explicit(&h->enable_seq, seq + 1, memory_order_relaxed);
    SEQLOCK_FENCE(memory_order_release);
    memcpy(h->enables, e, n * sizeof *e);
    h->enable_n = n;
    atomic_store_explicit(&h->enable_seq, seq + 2, memory_order_release);
    etl_shared_changed(s);
    return ETL_OK;
}

uint64_t etl_session_enables_read(const etl_session *s, etl_shared_enable *out, unsigned *n)
{
    const struct etl_shared_head *h = s->h;

    /* A controller killed in the middle of a change leaves the count odd for good: after a
       while the table reads as empty (the session is dead, and the next look lets it go),
       rather than the watch thread, and the registrations waiting on it, hanging. */
    for (unsigned tries = 0;; tries++) {
        uint64_t gen = atomic_load_explicit(&h->generation, memory_order_acquire);
        uint32_t seq = atomic_load_explicit(&h->enable_seq, memory_order_acquire);
        uint32_t k = h->enable_n;
        if (seq & 1) {
            if (tries >= 10000) {
                *n = 0;
                return gen;
            }
            sched_yield();
            continue;
        }
        if (k > ETL_SHARED_MAX_ENABLES) k = ETL_SHARED_MAX_ENABLES;
        memcpy(out, (const void *)h->enables, k * sizeof *out);
        SEQLOCK_FENCE(memory_order_acquire);
        if (atomic_load_explicit(&h->enable_seq, memory_order_relaxed) == seq) {
            *n = k;
            return gen;
        }
    }
}

uint64_t etl_session_generation(const etl_session *s)
{
    return atomic_load_explicit(&s->h->generation, memory_order_acquire);
}

int etl_session_running(const etl_session *s)
{
    if (atomic_load_explicit(&s->h->stopping, memory_order_acquire)) return 0;
    /* A controller that died (SIGKILL) left an orphan: nobody flushes it any more. */
    return kill((pid_t)s->h->controller_pid, 0) == 0 || errno != ESRCH;
}

long etl_session_controller_pid(const etl_session *s) { return s->h->controller_pid; }

/* Whether this process maps the file st from address want on, size bytes or more (a
   mapping inherited at fork), as /proc/self/maps says. */
static int mapped_here(void *want, uint64_t size, const struct stat *st)
{
    char line[512];
    FILE *f = fopen("/proc/self/maps", "re");
    int found = 0;

    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long from, to, offset, inode;
        unsigned maj, min;
        if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu", &from, &to, &offset, &maj, &min, &inode) != 6) continue;
        found = from == (uint64_t)(uintptr_t)want && to - from >= size && offset == 0 && inode == (unsigned long long)st->st_ino &&
                makedev(maj, min) == st->st_dev;
    }
    fclose(f);
    return found;
}

/* Counts a process that could not map the session, through a mapping of its head anywhere. */
static void count_refused(int fd)
{
    struct etl_shared_head *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    if (h == MAP_FAILED) return;
    atomic_fetch_add_explicit(&h->writers_refused, 1, memory_order_relaxed);
    munmap(h, sizeof *h);
}

int etl_session_attach(etl_session **out, const char *path, char *err, size_t errsize)
{
    struct etl_shared_head head;
    struct etl_layout l;
    struct stat st;
    etl_session *s;
    void *want, *got;
    int fd, borrowed = 0;

    *out = NULL;
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return ETL_FAILED;
    }
    /* Only the user's own session files, and only ones that are what they say. */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
        pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head || head.magic != ETL_SHARED_MAGIC ||
        head.layout != ETL_SHARED_LAYOUT || head.head_size != sizeof head) {
        snprintf(err, errsize, "%s: not a session file of this user and this version of libetl", path);
        close(fd);
        return ETL_FAILED;
    }
    etl_shared_layout_of(head.ncpu, head.nmax, head.bsize, &l);
    if (head.ncpu == 0 || head.ncpu > 65536 || head.nmax > (1u << 24) || head.nmax < head.nmin ||
        head.bsize < 4096 || head.bsize > 16384 * 1024 || head.bsize % 1024 || l.size != head.size ||
        (uint64_t)st.st_size != head.size || head.address < ETL_SHARED_BASE ||
        head.address >= ETL_SHARED_BASE + (uint64_t)ETL_SHARED_SLOTS * ETL_SHARED_STRIDE || (head.address - ETL_SHARED_BASE) % ETL_SHARED_STRIDE ||
        head.size > ETL_SHARED_STRIDE || !head.rseq || head.limit > head.nmax || head.limit < head.nmin) {
        snprintf(err, errsize, "%s: the session's head is damaged", path);
        close(fd);
        return ETL_FAILED;
    }
    if (head.stopping) {
        snprintf(err, errsize, "%s: the session is stopping", path);
        close(fd);
        return ETL_FAILED;
    }
    if (head.controller_pid == (int32_t)getpid()) { /* its providers write into it directly */
        snprintf(err, errsize, "%s: the session is this process's own", path);
        close(fd);
        return ETL_FAILED;
    }
    want = (void *)(uintptr_t)head.address;
    got = map_at(want, head.size, fd);
    if (got == MAP_FAILED && errno == EEXIST && mapped_here(want, head.size, &st)) {
        got = want; /* a child of the controller (or of a provider process) has it from the fork */
        borrowed = 1;
    }
    if (got != want) {
        int e = errno;
        count_refused(fd);
        snprintf(err, errsize, "%s: cannot map the session at %p: %s", path, want, strerror(e));
        close(fd);
        return ETL_FAILED;
    }
    s = etl_session_new();
    if (!s || !(s->logger_name = strdup(head.name))) {
        if (!borrowed) munmap(got, head.size);
        close(fd);
        if (s) etl_session_free(s);
        snprintf(err, errsize, "out of memory");
        return ETL_FAILED;
    }
    close(fd);
    s->role = ETL_ROLE_ATTACHED;
    s->mapping = got;
    s->borrowed = borrowed;
    s->memory_size = head.size;
    etl_shared_place(s, got, &l);
    s->bsize = head.bsize;
    s->ncpu = s->nproc = head.ncpu;
    s->nmin = head.nmin;
    s->nmax = head.nmax;
    s->buffering = head.buffering;
    s->rseq = head.rseq;
    s->exact_clock = head.exact_clock;
    s->populate = head.populate;
    s->low_water = head.low_water;
    s->wake_every = head.wake_every;
    s->clock = head.clock;
    s->line = &s->h->line;
    /* The buffers must be where the layout puts them: a writer follows these pointers. */
    for (uint32_t i = 0; i < s->nmax; i++) {
        if (s->bufs[i].cur.data != s->memory + (size_t)i * s->bsize || s->bufs[i].cur.limit != s->bsize) {
            snprintf(err, errsize, "%s: the session's buffer table is damaged", path);
            etl_session_free(s);
            return ETL_FAILED;
        }
    }
    *out = s;
    return ETL_OK;
}

void etl_session_detach(etl_session *s)
{
    if (s && s->role == ETL_ROLE_ATTACHED) etl_session_free(s);
}
