/* SPDX-License-Identifier: MIT */
/* Kernel capture's execs: each exec's command line, from the new program's stack as perf dumps it at sched:sched_process_exec, else from /proc read at once by a thread of its own, and the process's parent, kept for the exec's COMM record, which waits for it and for the other processors' readers. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

/* ------------------------------------------------------------------ the arguments on the new stack */

/* A word (8 or 4 bytes, little-endian) of the stack at offset o, which the caller checked. */
static uint64_t stack_word(const uint8_t *stack, size_t o, unsigned word)
{
    return word == 8 ? etl_le64(stack + o) : etl_le32(stack + o);
}

int etl_kexec_command_line(const uint8_t *stack, size_t n, uint64_t sp, unsigned word, char *out, size_t size)
{
    uint64_t argc;
    size_t o = 0;

    out[0] = '\0';
    if ((word != 8 && word != 4) || n < word) return -1;
    argc = stack_word(stack, 0, word);
    if (argc == 0 || argc > (n - word) / word) return -1;
    for (uint64_t i = 0; i < argc; i++) {
        uint64_t at = stack_word(stack, (size_t)(word + i * word), word);
        const char *arg, *nul;
        size_t len;
        if (at < sp || at - sp >= n) { /* beyond the dump: the arguments before it are kept */
            if (i == 0) return -1;
            break;
        }
        arg = (const char *)stack + (at - sp);
        nul = memchr(arg, '\0', n - (size_t)(at - sp));
        len = nul ? (size_t)(nul - arg) : n - (size_t)(at - sp);
        if (i > 0 && o + 1 < size) out[o++] = ' ';
        if (len > size - 1 - o) len = size - 1 - o;
        memcpy(out + o, arg, len);
        o += len;
        out[o] = '\0';
        if (!nul) break; /* cut off at n */
    }
    while (o > 0 && out[o - 1] == ' ') out[--o] = '\0';
    return 0;
}

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

void etl_kproc_cmdline(uint32_t pid, char *out, size_t size)
{
    char path[64];
    ssize_t n;

    snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
    n = etl_kread_small(path, out, size);
    if (n < 0) n = 0;
    out[n] = '\0';
    /* The arguments are NUL-separated: a command line has them separated by spaces. */
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == '\0') out[i] = ' ';
    while (n > 0 && out[n - 1] == ' ') out[--n] = '\0';
}

int etl_kproc_status(uint32_t pid, char *name, size_t name_size, uint32_t *ppid, uint32_t *uid)
{
    char path[64], buf[4096];

    *ppid = 0;
    *uid = UINT32_MAX;
    snprintf(path, sizeof path, "/proc/%u/status", pid);
    if (etl_kread_small(path, buf, sizeof buf) <= 0) return -1;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "Name:\t", 6) == 0 && name && name_size) {
            size_t len = strcspn(line + 6, "\n");
            if (len >= name_size) len = name_size - 1;
            memcpy(name, line + 6, len);
            name[len] = '\0';
        } else if (strncmp(line, "PPid:", 5) == 0) {
            *ppid = (uint32_t)strtoul(line + 5, NULL, 10);
        } else if (strncmp(line, "Uid:", 4) == 0) {
            *uid = (uint32_t)strtoul(line + 4, NULL, 10);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ the other readers */

/* How long a reader waits for another that does not get on, and at most. */
#define KWAIT_STUCK_NS 500000000
#define KWAIT_MAX_NS 2000000000

static void kwait_begin(struct kwait *w, int64_t ts, int64_t now)
{
    if (w->start && w->ts == ts) return;
    w->ts = ts;
    w->start = now;
    w->moved = now;
    w->behind = INT64_MIN;
}

int etl_kothers_wait(struct kcpu *c, struct kwait *w, int64_t ts)
{
    struct etl_kcapture *k = c->k;
    int64_t least = INT64_MAX, now;

    for (unsigned i = 0; i < k->ncpu; i++) {
        int64_t p = atomic_load(&k->cpus[i].progress);
        if (&k->cpus[i] != c && p < ts - 1 && p != atomic_load(&k->cpus[i].stuck_at) && p < least) least = p;
    }
    if (least == INT64_MAX) return 0;
    now = etl_monoclock_exact();
    kwait_begin(w, ts, now);
    if (least != w->behind) {
        w->behind = least;
        w->moved = now;
    }
    if (now - w->moved > KWAIT_STUCK_NS || now - w->start > KWAIT_MAX_NS) {
        for (unsigned i = 0; i < k->ncpu; i++) {
            int64_t p = atomic_load(&k->cpus[i].progress);
            if (&k->cpus[i] != c && p < ts - 1) atomic_store(&k->cpus[i].stuck_at, p);
        }
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ the notes */

/* How long a note waits for its COMM (which comes before it: one lost leaves its note), and
   how long a COMM waits for its note (the exec's sample follows it within the exec): after
   the exec, and after its reader found it. */
#define EXEC_NOTE_KEEP_NS 2000000000
#define EXEC_WAIT_NS 20000000

static void exec_noted(struct etl_kcapture *k, const struct kexec_pending *p, const char *command_line)
{
    size_t o = 0;

    pthread_mutex_lock(&k->plock);
    for (size_t i = 0; i < k->nexecs; i++) { /* the notes no COMM took */
        if (k->execs[i].ts < p->ts - EXEC_NOTE_KEEP_NS) free(k->execs[i].command_line);
        else k->execs[o++] = k->execs[i];
    }
    k->nexecs = o;
    if (k->nexecs == k->execs_cap) {
        size_t cap = k->execs_cap ? 2 * k->execs_cap : 16;
        struct kexec_note *n = realloc(k->execs, cap * sizeof *n);
        if (n) {
            k->execs = n;
            k->execs_cap = cap;
        }
    }
    if (k->nexecs < k->execs_cap && (k->execs[k->nexecs].command_line = strdup(command_line))) {
        k->execs[k->nexecs].pid = p->pid;
        k->execs[k->nexecs].ts = p->ts;
        k->execs[k->nexecs].ppid = p->ppid;
        k->execs[k->nexecs].uid = p->uid;
        k->nexecs++;
    }
    pthread_mutex_unlock(&k->plock);
}

/* The note of pid's exec whose COMM is at ts: the first at or after ts (plock held); -1 if none. */
static ptrdiff_t exec_note_of(const struct etl_kcapture *k, uint32_t pid, int64_t ts)
{
    ptrdiff_t best = -1;

    for (size_t i = 0; i < k->nexecs; i++)
        if (k->execs[i].pid == pid && k->execs[i].ts >= ts && (best < 0 || k->execs[i].ts < k->execs[best].ts))
            best = (ptrdiff_t)i;
    return best;
}

int etl_kexec_take(struct etl_kcapture *k, uint32_t pid, int64_t ts, char *out, size_t size, uint32_t *ppid,
                   uint32_t *uid)
{
    ptrdiff_t i;
    int got = 0;

    *ppid = 0;
    *uid = UINT32_MAX;
    pthread_mutex_lock(&k->plock);
    if ((i = exec_note_of(k, pid, ts)) >= 0) {
        struct kexec_note *n = &k->execs[i];
        got = 1;
        snprintf(out, size, "%s", n->command_line);
        *ppid = n->ppid;
        *uid = n->uid;
        free(n->command_line);
        memmove(n, n + 1, (k->nexecs - (size_t)i - 1) * sizeof *n);
        k->nexecs--;
    }
    pthread_mutex_unlock(&k->plock);
    return got;
}

int etl_kexec_init(struct etl_kcapture *k)
{
    pthread_mutex_init(&k->exec_lock, NULL);
    k->exec_rec = malloc(65536);
    k->exec_pend = calloc(KEXEC_PENDING_MAX, sizeof *k->exec_pend);
    return k->exec_rec && k->exec_pend ? 0 : -1;
}

void etl_kexec_free(struct etl_kcapture *k)
{
    for (size_t i = 0; i < k->nexecs; i++) free(k->execs[i].command_line);
    free(k->execs);
    k->execs = NULL;
    k->nexecs = k->execs_cap = 0;
    free(k->exec_rec);
    free(k->exec_pend);
    k->exec_rec = NULL;
    k->exec_pend = NULL;
    pthread_mutex_destroy(&k->exec_lock);
}

static void read_exec_rings(struct etl_kcapture *k);

int etl_kexec_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int final)
{
    struct etl_kcapture *k = c->k;
    uint32_t pid;
    int64_t ts;
    int noted;

    if (!(k->flags & ETL_KERNEL_PROCESS) || size < 16 + 32 || etl_le32(r) != PERF_RECORD_COMM ||
        !(etl_le16(r + 4) & PERF_RECORD_MISC_COMM_EXEC))
        return 0;
    pid = etl_le32(r + 8);
    ts = (int64_t)etl_le64(r + size - 24);
    kwait_begin(&c->exec_wait, ts, etl_monoclock_exact());
    for (;;) {
        pthread_mutex_lock(&k->plock);
        noted = !k->exec_args || exec_note_of(k, pid, ts) >= 0;
        pthread_mutex_unlock(&k->plock);
        if (!noted) { /* its sample may be in an exec ring still: read them now */
            read_exec_rings(k);
            pthread_mutex_lock(&k->plock);
            noted = !k->exec_args || exec_note_of(k, pid, ts) >= 0;
            pthread_mutex_unlock(&k->plock);
        }
        if (!noted) { /* not for long: the sample was lost, or the exec's ring is full */
            int64_t now = etl_monoclock_exact();
            noted = final ? c->exec_waited_ms >= 100
                          : now - ts >= EXEC_WAIT_NS && now - c->exec_wait.start >= EXEC_WAIT_NS;
        }
        /* The other readers, as long as they get on: however late this reader got to the
           record (its processor held by others), the process's fork may be in another's
           queue still. */
        if (noted && !etl_kothers_wait(c, &c->exec_wait, ts)) return 0;
        if (!final) return 1;
        usleep(1000);
        if (!noted) c->exec_waited_ms++;
    }
}

/* ------------------------------------------------------------------ the exec samples' thread */

/* The command line of pid's exec at ts from /proc, noted: read when the process still runs
   what that exec started (its comm is comm, and no later exec of pid is known: later), else "". */
static void note_from_proc(struct etl_kcapture *k, const struct kexec_pending *p, int later)
{
    char path[64], now[64], cmd[4096] = "";

    pthread_mutex_lock(&k->plock);
    for (size_t i = 0; i < k->nexecs && !later; i++) later = k->execs[i].pid == p->pid && k->execs[i].ts > p->ts;
    pthread_mutex_unlock(&k->plock);
    snprintf(path, sizeof path, "/proc/%u/comm", p->pid);
    if (!later && etl_kread_small(path, now, sizeof now) > 0) {
        now[strcspn(now, "\n")] = '\0';
        if (strcmp(now, p->comm) == 0) etl_kproc_cmdline(p->pid, cmd, sizeof cmd);
    }
    exec_noted(k, p, cmd);
}

/*
 * One exec sample (IDENTIFIER, TID, TIME, CPU, RAW: its filename; where the capture knows
 * the stack pointer's register, REGS_USER: abi, sp; STACK_USER: size, the bytes from sp,
 * dyn_size): its command line noted from the stack, or the exec kept in *p for /proc (1).
 */
static int exec_sample(struct etl_kcapture *k, const uint8_t *r, uint32_t size, struct kexec_pending *p)
{
    uint32_t o = 8 + 8 + 8 + 8 + 8, raw_len, loc, off, len;
    const uint8_t *raw;
    const char *name = "", *slash;
    char file[4096], cmd[4096];

    if (etl_le32(r) != PERF_RECORD_SAMPLE || size < o + 4) return 0;
    p->pid = etl_le32(r + 16);
    p->ts = (int64_t)etl_le64(r + 24);
    /* Its parent, while it runs: the COMM may be handled before its fork (another processor's
       reader that lags, or a fork record lost), and after the process is gone. */
    etl_kproc_status(p->pid, NULL, 0, &p->ppid, &p->uid);
    raw_len = etl_le32(r + o);
    raw = r + o + 4;
    if (raw_len > size - o - 4) return 0;
    o += 4 + raw_len;
    if (k->sample_type[EV_EXEC] & PERF_SAMPLE_REGS_USER) {
        uint64_t abi, sp = 0, n, dyn;
        if (size < o + 8) return 0;
        abi = etl_le64(r + o);
        o += 8;
        if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
            if (size < o + 8) return 0;
            sp = etl_le64(r + o);
            o += 8;
        }
        if (size >= o + 8 && (n = etl_le64(r + o)) <= size - o - 8 && size - o - 8 - n >= 8) {
            dyn = etl_le64(r + o + 8 + n);
            if (abi != PERF_SAMPLE_REGS_ABI_NONE &&
                etl_kexec_command_line(r + o + 8, (size_t)(dyn < n ? dyn : n), sp,
                                       abi == PERF_SAMPLE_REGS_ABI_32 ? 4 : 8, cmd, sizeof cmd) == 0) {
                exec_noted(k, p, cmd);
                return 0;
            }
        }
    }
    loc = (uint32_t)etl_ktp_get(raw, raw_len, &k->exec_filename);
    off = loc & 0xFFFF;
    len = loc >> 16;
    if (off < raw_len && len <= raw_len - off) {
        snprintf(file, sizeof file, "%.*s", (int)len, (const char *)raw + off);
        name = (slash = strrchr(file, '/')) ? slash + 1 : file;
    }
    snprintf(p->comm, sizeof p->comm, "%.15s", name); /* the comm the exec set: its file's name */
    return 1;
}

/* Takes the samples out of c's exec ring: those to read /proc for into pend (at most max;
   those beyond are noted ""). Their number. (exec_lock held) */
static unsigned read_exec_ring(struct etl_kcapture *k, struct kcpu *c, uint8_t *rec, struct kexec_pending *pend,
                               unsigned npend, unsigned max)
{
    struct perf_event_mmap_page *m = (struct perf_event_mmap_page *)(void *)c->exec_ring;
    const uint8_t *data = c->exec_ring + c->page;
    uint64_t size = (uint64_t)EXEC_RING_PAGES * c->page;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;

    while (tail + 8 <= head) {
        uint64_t at = tail % size;
        uint16_t len;
        uint32_t first;
        for (unsigned i = 0; i < 8; i++) rec[i] = data[(at + i) % size];
        len = etl_le16(rec + 6);
        if (len < 8 || tail + len > head) break;
        first = (uint32_t)(size - at < len ? size - at : len);
        memcpy(rec, data + at, first);
        memcpy(rec + first, data, len - first);
        tail += len;
        if (npend < max) {
            if (exec_sample(k, rec, len, &pend[npend])) npend++;
        } else {
            struct kexec_pending p;
            if (exec_sample(k, rec, len, &p)) exec_noted(k, &p, "");
        }
    }
    __atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
    return npend;
}

/* Every processor's exec ring read, then /proc for the execs whose stack did not hold their
   arguments (not for one a later exec of its pid follows: /proc shows that one's). By the
   exec thread, or a reader that needs a note: one at a time (another one reading, this
   returns at once). */
static void read_exec_rings(struct etl_kcapture *k)
{
    struct kexec_pending *pend = k->exec_pend;
    unsigned n = 0;

    if (pthread_mutex_trylock(&k->exec_lock) != 0) return;
    for (unsigned i = 0; i < k->ncpu; i++)
        if (k->cpus[i].exec_ring) n = read_exec_ring(k, &k->cpus[i], k->exec_rec, pend, n, KEXEC_PENDING_MAX);
    for (unsigned i = 0; i < n; i++) {
        int later = 0;
        for (unsigned j = 0; j < n; j++) later |= pend[j].pid == pend[i].pid && pend[j].ts > pend[i].ts;
        note_from_proc(k, &pend[i], later);
    }
    pthread_mutex_unlock(&k->exec_lock);
}

void *etl_kexec_watcher(void *arg)
{
    struct etl_kcapture *k = arg;
    struct pollfd *p = calloc(k->ncpu, sizeof *p);
    unsigned n = 0;

    for (unsigned i = 0; p && i < k->ncpu; i++)
        if (k->cpus[i].exec_ring) p[n++] = (struct pollfd){ k->cpus[i].fd[EV_EXEC], POLLIN, 0 };
    while (!atomic_load(&k->stop)) {
        if (p) poll(p, n, 20);
        else nanosleep(&(struct timespec){ 0, 1000000 }, NULL); /* no memory to poll: look every 1 ms */
        read_exec_rings(k);
    }
    read_exec_rings(k); /* the events were disabled before the stop */
    free(p);
    return NULL;
}

#endif
