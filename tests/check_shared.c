/* SPDX-License-Identifier: MIT */
/*
 * Shared sessions (ETL_ENGINE_SHARED): providers in other processes write into a session
 * whose buffers are in shared memory. Two processes and several threads, every event
 * present with its pid and tid; enable before and after registration, by level and keywords,
 * and disable; a writer process killed with SIGKILL in the middle of a burst; a stop while
 * writers run; another user refused; a process where the session's address is taken.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "engine/engine.h"
#include "testutil.h"

static const etl_guid guid_p = { 0x5eed5eed, 0x1234, 0x4321, { 9, 8, 7, 6, 5, 4, 3, 2 } };

#define MAX_WRITERS 8
#define MAX_EVENTS 200000

/* What the writer processes and the test share: one page mapped before the fork. */
struct board {
    _Atomic int go, stop;
    _Atomic long done[MAX_WRITERS];   /* writes that returned ETL_OK, per thread */
    _Atomic long refused[MAX_WRITERS];  /* lost (counted in EventsLost) */
    _Atomic long after_stop[MAX_WRITERS]; /* refused with ESHUTDOWN: the session was stopping */
    _Atomic int tid[MAX_WRITERS];
    _Atomic int enabled_seen;
};

static struct board *board;
static char runtime[512], board_path[512];

/* The board, from its file (the test and the processes it starts map the same one). */
static struct board *map_board(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    struct board *b;

    if (fd < 0 || ftruncate(fd, sizeof *b) != 0) return NULL;
    b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return b == MAP_FAILED ? NULL : b;
}

static void setup(void)
{
    test_dir_create();
    snprintf(runtime, sizeof runtime, "%s", test_dir_path("run"));
    ck_assert_int_eq(mkdir(runtime, 0700), 0);
    setenv("ETL_RUNTIME_DIR", runtime, 1);
    snprintf(board_path, sizeof board_path, "%s", test_dir_path("board"));
    board = map_board(board_path);
    ck_assert(board != NULL);
}

static void teardown(void)
{
    munmap(board, sizeof *board);
    unlink(board_path);
    test_dir_remove();
}

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&t, NULL);
}

/* The controller's side: the name claimed, the session started shared, the provider enabled. */
struct ctl {
    etl_session_name *name;
    etl_session *s;
};

static void ctl_start(struct ctl *c, const char *name, const char *file, uint32_t max_buffers)
{
    etl_session_properties p = { .logger_name = name, .buffer_size_kb = 64, .engine_flags = ETL_ENGINE_SHARED };
    char err[512];

    p.log_file_name = test_dir_path(file);
    p.maximum_buffers = max_buffers;
    ck_assert_msg(etl_session_name_claim(&c->name, name, NULL, err, sizeof err) == ETL_OK, "claim: %s", err);
    ck_assert_msg(etl_session_start(&c->s, &p) == ETL_OK, "start: %s", etl_session_error(c->s));
}

static void ctl_stop(struct ctl *c, etl_session_stats *st)
{
    ck_assert_msg(etl_session_stop(c->s, st) == ETL_OK, "stop: %s", etl_session_error(c->s));
    etl_session_close(c->s);
    etl_session_name_release(c->name);
}

/* The path of session name's memory file in the runtime directory. */
static void session_file(const char *name, char *out, size_t size)
{
    char key[ETL_SESSION_NAME_MAX + 1];

    ck_assert_int_eq(etl_session_name_key(name, key), ETL_OK);
    snprintf(out, size, "%s/%s.shm", runtime, key);
}

/* ---- the writer processes ---- */

struct wthread {
    etl_provider *p;
    int slot;       /* index into the board */
    long events;    /* how many to write; 0: until board->stop or the session stops */
    int child;
    uint8_t level;
    uint64_t keywords;
};

static void *write_thread(void *arg)
{
    struct wthread *w = arg;
    etl_event_descriptor d = { 100, 1, 0, 4, 0, 0, 0 };
    uint32_t v[4];
    etl_data data = { v, sizeof v };

    atomic_store(&board->tid[w->slot], (int)syscall(SYS_gettid));
    while (!atomic_load(&board->go)) sched_yield();
    d.level = w->level;
    d.keywords = w->keywords;
    for (long i = 0; w->events == 0 || i < w->events; i++) {
        if (w->events == 0 && atomic_load(&board->stop)) break;
        v[0] = (uint32_t)w->child;
        v[1] = (uint32_t)w->slot;
        v[2] = (uint32_t)atomic_load(&board->done[w->slot]);
        v[3] = 0xC0FFEE;
        /* v[2] counts the events written before: a lost one leaves no gap in the file. */
        if (etl_provider_write(w->p, &d, &data, 1, 0) == ETL_OK)
            atomic_fetch_add(&board->done[w->slot], 1);
        else if (errno == ESHUTDOWN)
            atomic_fetch_add(&board->after_stop[w->slot], 1);
        else
            atomic_fetch_add(&board->refused[w->slot], 1);
    }
    return NULL;
}

/*
 * The processes a test starts are this program again (fork and exec, as any provider process
 * is started: a fork of the controller without an exec would share its threads' state, which
 * ThreadSanitizer cannot follow), in one of these modes:
 *
 *   writer BOARD CHILD FIRST NTHREADS EVENTS LEVEL KEYWORDS
 *       registers the provider, waits (up to 5 s) until a session enables it, runs NTHREADS
 *       writers on board slots FIRST.., exits 0 (3: never enabled)
 *   enabled
 *       registers the provider, exits 1 if it is enabled, 0 if not
 *   toggle FD
 *       registers (enabled), writes 'r' to FD; waits until it is disabled, writes 'd';
 *       waits until it is enabled again, exits 0
 *   taken ADDRESS
 *       maps something at ADDRESS, then as 'enabled'
 */
static int writer_process(char **argv)
{
    etl_provider *p = NULL;
    pthread_t t[MAX_WRITERS];
    struct wthread w[MAX_WRITERS];
    int child = atoi(argv[1]), first = atoi(argv[2]), nthreads = atoi(argv[3]), waited = 0;
    long events = atol(argv[4]);
    uint8_t level = (uint8_t)atoi(argv[5]);
    uint64_t keywords = strtoull(argv[6], NULL, 0);

    board = map_board(argv[0]);
    if (!board || nthreads > MAX_WRITERS || etl_provider_register(&p, &guid_p) != ETL_OK) return 2;
    while (!etl_provider_enabled(p, 0, 0)) {
        if (++waited > 5000) return 3;
        sleep_ms(1);
    }
    atomic_fetch_add(&board->enabled_seen, 1);
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct wthread){ p, first + i, events, child, level, keywords };
        pthread_create(&t[i], NULL, write_thread, &w[i]);
    }
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    return 0;
}

static int enabled_process(void)
{
    etl_provider *p = NULL;

    if (etl_provider_register(&p, &guid_p) != ETL_OK) return 2;
    return etl_provider_enabled(p, 0, 0) ? 1 : 0;
}

static int toggle_process(int fd)
{
    etl_provider *p = NULL;
    int waited = 0;

    if (etl_provider_register(&p, &guid_p) != ETL_OK || !etl_provider_enabled(p, 0, 0)) return 2;
    if (write(fd, "r", 1) != 1) return 2;
    while (etl_provider_enabled(p, 0, 0)) { /* the watch thread applies the disable */
        if (++waited > 5000) return 3;
        sleep_ms(1);
    }
    if (write(fd, "d", 1) != 1) return 2;
    while (!etl_provider_enabled(p, 0, 0)) {
        if (++waited > 10000) return 4;
        sleep_ms(1);
    }
    return 0;
}

static int taken_process(const char *address)
{
    void *want = (void *)(uintptr_t)strtoull(address, NULL, 0);

    if (mmap(want, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != want) return 2;
    return enabled_process();
}

static pid_t spawn(const char *mode, ...)
{
    char *argv[12];
    int n = 0;
    va_list ap;
    pid_t pid;

    argv[n++] = (char *)"check_shared";
    argv[n++] = (char *)mode;
    va_start(ap, mode);
    while (n < 11 && (argv[n] = va_arg(ap, char *)) != NULL) n++;
    va_end(ap);
    argv[n] = NULL;
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    return pid;
}

static pid_t spawn_writer(int child, int first, int nthreads, long events, uint8_t level, uint64_t keywords)
{
    char a[6][32];

    snprintf(a[0], sizeof a[0], "%d", child);
    snprintf(a[1], sizeof a[1], "%d", first);
    snprintf(a[2], sizeof a[2], "%d", nthreads);
    snprintf(a[3], sizeof a[3], "%ld", events);
    snprintf(a[4], sizeof a[4], "%u", level);
    snprintf(a[5], sizeof a[5], "%#llx", (unsigned long long)keywords);
    return spawn("writer", board_path, a[0], a[1], a[2], a[3], a[4], a[5], (char *)NULL);
}

/* Waits until n writer processes say their provider is enabled; a writer that ends first
   fails the test with its exit status. */
static void wait_enabled(int n, const pid_t *pids)
{
    while (atomic_load(&board->enabled_seen) < n) {
        for (int i = 0; i < n; i++) {
            int st;
            if (waitpid(pids[i], &st, WNOHANG) == pids[i])
                ck_abort_msg("writer %d ended before it was enabled: %s %d", (int)pids[i],
                             WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
        sleep_ms(1);
    }
}

static int exit_status(pid_t pid)
{
    int st = 0;

    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- what the file holds ---- */

struct seen {
    long n;             /* events of slot */
    long next;          /* the sequence number expected next */
    long gaps, dups;    /* sequence numbers skipped, repeated or out of order */
    uint32_t pid, tid;
    int child;
};

static void read_file(const char *file, struct seen seen[MAX_WRITERS], long *other_pids)
{
    etl_reader *r = NULL;
    etl_event ev;
    int rc;

    memset(seen, 0, sizeof(struct seen) * MAX_WRITERS);
    *other_pids = 0;
    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(file), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        uint32_t v[4];
        struct seen *s;
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &guid_p)) continue;
        ck_assert_uint_eq(ev.payload_len, sizeof v);
        memcpy(v, ev.payload, sizeof v);
        ck_assert_uint_eq(v[3], 0xC0FFEE);
        ck_assert_uint_lt(v[1], MAX_WRITERS);
        s = &seen[v[1]];
        if (s->n == 0) {
            s->pid = ev.pid;
            s->tid = ev.tid;
            s->child = (int)v[0];
        } else if (s->pid != ev.pid || s->tid != ev.tid) {
            (*other_pids)++;
        }
        /* Per thread, the file is in time order: sequence numbers rise by one. */
        if ((long)v[2] > s->next) s->gaps += (long)v[2] - s->next;
        if ((long)v[2] < s->next) s->dups++;
        s->next = (long)v[2] + 1;
        s->n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
}

/* Two processes with three threads each: every event, with its writer's pid and tid. With
   few buffers (max_buffers) some may be lost: then EventsLost counts exactly those. */
static void two_processes_with(uint32_t max_buffers)
{
    struct ctl c;
    etl_session_stats st;
    struct seen seen[MAX_WRITERS];
    pid_t a, b;
    long other, refused = 0;

    ctl_start(&c, "Shared Two", "two.etl", max_buffers);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    a = spawn_writer(0, 0, 3, 20000, 4, 0);
    b = spawn_writer(1, 3, 3, 20000, 4, 0);
    wait_enabled(2, (pid_t[]){ a, b });
    atomic_store(&board->go, 1);
    ck_assert_int_eq(exit_status(a), 0);
    ck_assert_int_eq(exit_status(b), 0);
    ctl_stop(&c, &st);
    ck_assert(st.engine_flags & ETL_ENGINE_SHARED);
    read_file("two.etl", seen, &other);
    ck_assert_int_eq(other, 0);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(seen[i].n, atomic_load(&board->done[i]));
        ck_assert_int_eq(seen[i].n + atomic_load(&board->refused[i]), 20000);
        ck_assert_int_eq(atomic_load(&board->after_stop[i]), 0);
        ck_assert_int_eq(seen[i].gaps, 0);
        ck_assert_int_eq(seen[i].dups, 0);
        if (seen[i].n) { /* (with 8 buffers for 6 busy writers, one may have lost all) */
            ck_assert_int_eq(seen[i].pid, i < 3 ? a : b);
            ck_assert_int_eq(seen[i].tid, atomic_load(&board->tid[i]));
        }
        refused += atomic_load(&board->refused[i]);
    }
    ck_assert_uint_eq(st.events_lost, (uint64_t)refused);
    if (max_buffers >= 1024) ck_assert_int_eq(refused, 0);
}

/* A shared session at rest holds the memory of its minimum, whatever its maximum (the default
   maximum is 64 MB of buffers, issue 17): its file has that much reserved; the rest is
   reserved buffer by buffer as the pool grows under pressure (here a flush thread held, as a
   stalled write), and nothing is lost meanwhile. */
START_TEST(memory_at_rest_is_the_minimum)
{
    struct ctl c;
    struct stat st;
    struct etl_layout l;
    etl_session_properties got;
    etl_session_stats stats;
    char path[1024];
    uint64_t payload[4] = { 0 };
    etl_data data = { payload, sizeof payload };
    etl_event_descriptor d = { 1, 0, 0, 4, 0, 0, 0 };
    size_t at_rest;

    ctl_start(&c, "At Rest", "rest.etl", 0);
    etl_session_properties_get(c.s, &got);
    ck_assert_uint_ge(got.maximum_buffers, got.minimum_buffers + 1024);
    session_file("At Rest", path, sizeof path);
    etl_shared_layout_of(got.number_of_processors, 2 * got.maximum_buffers, 64 * 1024, &l);
    at_rest = l.data + (size_t)got.minimum_buffers * 64 * 1024;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((size_t)st.st_blocks * 512 <= at_rest + 65536, "%lld bytes reserved at rest, the minimum takes %zu",
                  (long long)st.st_blocks * 512, at_rest);
    etl_session_hold_flush(c.s, 1);
    for (uint64_t i = 0; i < 200000; i++) { /* 22 MB of 112-byte records */
        payload[0] = i;
        ck_assert_int_eq(etl_session_write_event(c.s, &guid_p, &d, NULL, &data, 1), ETL_OK);
    }
    etl_session_stats_get(c.s, &stats);
    ck_assert_uint_ge(stats.number_of_buffers, 300);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_ge((size_t)st.st_blocks * 512, (size_t)stats.number_of_buffers * 64 * 1024);
    etl_session_hold_flush(c.s, 0);
    ctl_stop(&c, &stats);
    ck_assert_uint_eq(stats.events_lost, 0);
}
END_TEST

START_TEST(two_processes)
{
    two_processes_with(1024); /* room for every event: none lost */
}
END_TEST

START_TEST(two_processes_losing)
{
    two_processes_with(8); /* writers outrun the flush thread: the loss is counted exactly */
}
END_TEST

/* A provider registered before the session starts is picked up when it does; the session's
   level and keywords apply in the provider process; a disable reaches it. */
START_TEST(enable_later_filter_disable)
{
    struct ctl c;
    etl_session_stats st;
    struct seen seen[MAX_WRITERS];
    pid_t pass, level_too_high, other_keyword;
    long other;

    pass = spawn_writer(0, 0, 1, 500, 3, 0x2);
    level_too_high = spawn_writer(1, 1, 1, 500, 5, 0x2);
    other_keyword = spawn_writer(2, 2, 1, 500, 3, 0x1);
    sleep_ms(100); /* registered, waiting */
    ctl_start(&c, "Shared Later", "later.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 4, 0x6, 0), ETL_OK);
    wait_enabled(3, (pid_t[]){ pass, level_too_high, other_keyword });
    atomic_store(&board->go, 1);
    ck_assert_int_eq(exit_status(pass), 0);
    ck_assert_int_eq(exit_status(level_too_high), 0);
    ck_assert_int_eq(exit_status(other_keyword), 0);

    /* Disabled: a provider process sees it go (its enabled check turns 0). */
    ck_assert_int_eq(exit_status(spawn("enabled", (char *)NULL)), 1);
    ck_assert_int_eq(etl_session_disable_provider(c.s, &guid_p), ETL_OK);
    ck_assert_int_eq(exit_status(spawn("enabled", (char *)NULL)), 0);
    ctl_stop(&c, &st);
    read_file("later.etl", seen, &other);
    ck_assert_int_eq(seen[0].n, 500);
    ck_assert_int_eq(seen[0].pid, pass);
    ck_assert_int_eq(seen[1].n, 0);
    ck_assert_int_eq(seen[2].n, 0);
}
END_TEST

/* A process that is writing sees a disable while it runs, and an enable again. */
START_TEST(disable_while_writing)
{
    struct ctl c;
    etl_session_stats st;
    pid_t pid;
    int fds[2];
    char byte;

    ctl_start(&c, "Shared Toggle", "toggle.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(pipe(fds), 0);
    {
        char fd[16];
        snprintf(fd, sizeof fd, "%d", fds[1]);
        pid = spawn("toggle", fd, (char *)NULL);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &byte, 1), 1);
    ck_assert_int_eq(etl_session_disable_provider(c.s, &guid_p), ETL_OK);
    ck_assert_int_eq(read(fds[0], &byte, 1), 1);
    ck_assert_int_eq(byte, 'd');
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(exit_status(pid), 0);
    close(fds[0]);
    ctl_stop(&c, &st);
}
END_TEST

/* A writer process killed with SIGKILL in the middle of a burst, again and again: the session
   goes on, and what each killed thread wrote is in the file, all of it, with no gap: the
   records it had committed, and at most the one it was writing (committed, not yet counted). */
START_TEST(writer_killed_mid_burst)
{
    struct ctl c;
    etl_session_stats st;
    struct seen seen[MAX_WRITERS];
    pid_t live;
    long other;

    ctl_start(&c, "Shared Kill", "kill.etl", 1024);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    atomic_store(&board->go, 1);
    live = spawn_writer(7, 7, 1, 30000, 4, 0);
    for (int r = 0; r < 3; r++) { /* victims on slots 0-1, 2-3, 4-5 */
        int slot = 2 * r;
        pid_t victim = spawn_writer(r, slot, 2, 0, 4, 0);
        while (atomic_load(&board->done[slot]) < 5000 + 7919 * r || atomic_load(&board->done[slot + 1]) < 100)
            sched_yield();
        kill(victim, SIGKILL);
        ck_assert_int_eq(exit_status(victim), 128 + SIGKILL);
    }
    ck_assert_int_eq(exit_status(live), 0);
    ctl_stop(&c, &st);
    ck_assert_uint_eq(st.events_lost, 0);
    read_file("kill.etl", seen, &other);
    ck_assert_int_eq(other, 0);
    for (int i = 0; i < 6; i++) {
        long done = atomic_load(&board->done[i]);
        ck_assert_msg(seen[i].n == done || seen[i].n == done + 1, "thread %d: %ld in the file, %ld written", i,
                      seen[i].n, done);
        ck_assert_int_eq(seen[i].gaps, 0);
        ck_assert_int_eq(seen[i].dups, 0);
    }
    ck_assert_int_eq(seen[7].n, 30000);
}
END_TEST

/* Many short kills: the pool stays whole (buffers a dead writer held come back) and the
   file stays readable. */
START_TEST(many_kills)
{
    struct ctl c;
    etl_session_stats st;
    struct seen seen[MAX_WRITERS];
    long other;

    ctl_start(&c, "Shared Kills", "kills.etl", 1024);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    atomic_store(&board->go, 1);
    for (int r = 0; r < 40; r++) {
        pid_t victim;
        atomic_store(&board->done[0], 0);
        victim = spawn_writer(r, 0, 1, 0, 4, 0);
        while (atomic_load(&board->done[0]) < 1000 + 997 * (r % 7)) sched_yield();
        kill(victim, SIGKILL);
        ck_assert_int_eq(exit_status(victim), 128 + SIGKILL);
    }
    ctl_stop(&c, &st);
    ck_assert_uint_eq(st.events_lost, 0);
    read_file("kills.etl", seen, &other);
    ck_assert_int_ge(seen[0].n, 40 * 1000);
}
END_TEST

/* Stop while writer processes run flat out: the stop returns, the file is whole, the writers
   see the session go and end on their own. */
START_TEST(stop_under_writers)
{
    struct ctl c;
    etl_session_stats st;
    struct seen seen[MAX_WRITERS];
    pid_t a, b;
    long other;

    long refused = 0;

    ctl_start(&c, "Shared Stop", "stop.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    a = spawn_writer(0, 0, 2, 0, 4, 0);
    b = spawn_writer(1, 2, 2, 0, 4, 0);
    wait_enabled(2, (pid_t[]){ a, b });
    atomic_store(&board->go, 1);
    sleep_ms(300);
    ctl_stop(&c, &st);
    sleep_ms(100);
    atomic_store(&board->stop, 1);
    ck_assert_int_eq(exit_status(a), 0);
    ck_assert_int_eq(exit_status(b), 0);
    read_file("stop.etl", seen, &other);
    ck_assert_int_eq(other, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_gt(seen[i].n, 0);
        ck_assert_int_le(seen[i].n, atomic_load(&board->done[i]));
        ck_assert_int_eq(seen[i].dups, 0);
        refused += atomic_load(&board->refused[i]);
    }
    /* Every loss the session counted is one a writer saw (a writer may still count one after
       the final statistics were taken). */
    ck_assert_uint_le(st.events_lost, (uint64_t)refused);
}
END_TEST

/* Another user cannot map the session (nor see the runtime directory). */
START_TEST(other_user_refused)
{
    struct ctl c;
    etl_session_stats st;
    char path[1024];
    pid_t pid;

    if (geteuid() != 0) return; /* needs root to become another user */
    ctl_start(&c, "Shared Private", "private.etl", 0);
    session_file("Shared Private", path, sizeof path);
    ck_assert_int_eq(access(path, F_OK), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        etl_session *s = NULL;
        char err[512];
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
        _exit(etl_session_attach(&s, path, err, sizeof err) == ETL_OK ? 1 : 0);
    }
    ck_assert_int_eq(exit_status(pid), 0);
    ctl_stop(&c, &st);
}
END_TEST

/* A process where the session's address range is taken cannot write into it: its provider
   stays disabled, and the session counts it. */
START_TEST(address_taken)
{
    struct ctl c;
    etl_session_stats st;
    char path[1024];
    uint64_t address = 0;
    int fd;
    pid_t pid;

    ctl_start(&c, "Shared Taken", "taken.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    session_file("Shared Taken", path, sizeof path);
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, &address, sizeof address, 24), (ssize_t)sizeof address); /* the head's address */
    close(fd);
    ck_assert_uint_ne(address, 0);
    {
        char a[32];
        snprintf(a, sizeof a, "%#llx", (unsigned long long)address);
        pid = spawn("taken", a, (char *)NULL);
    }
    ck_assert_int_eq(exit_status(pid), 0);
    etl_session_stats_get(c.s, &st);
    ck_assert_uint_eq(st.writers_refused, 1);
    ctl_stop(&c, &st);
}
END_TEST

/* A shared session needs its name claimed first; the controller's own providers write into
   it directly (it does not map its own session twice). */
START_TEST(name_must_be_claimed)
{
    etl_session_properties p = { .logger_name = "Unclaimed", .engine_flags = ETL_ENGINE_SHARED };
    etl_session *s = NULL;
    struct ctl c;
    etl_session_stats st;
    etl_provider *prov = NULL;
    struct seen seen[MAX_WRITERS];
    long other;

    p.log_file_name = test_dir_path("unclaimed.etl");
    ck_assert_int_eq(etl_session_start(&s, &p), ETL_FATAL);
    ck_assert_msg(strstr(etl_session_error(s), "claimed") != NULL, "%s", etl_session_error(s));
    etl_session_close(s);

    ctl_start(&c, "Shared Self", "self.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_provider_register(&prov, &guid_p), ETL_OK);
    {
        struct wthread w = { prov, 5, 1000, 9, 4, 0 };
        atomic_store(&board->go, 1);
        write_thread(&w);
    }
    etl_session_stats_get(c.s, &st);
    ck_assert_uint_eq(st.writers_refused, 0);
    ctl_stop(&c, &st);
    etl_provider_unregister(prov);
    read_file("self.etl", seen, &other);
    ck_assert_int_eq(seen[5].n, 1000);
    ck_assert_int_eq(seen[5].gaps, 0);
}
END_TEST

/* Damaged or hostile session files in the runtime directory: attaching refuses each with a
   message that says why, and a provider process still finds the good session beside them. */
static void write_file(const char *path, const void *data, size_t size, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, size), (ssize_t)size);
    close(fd);
}

START_TEST(hostile_session_files)
{
    struct ctl c;
    etl_session_stats st;
    etl_session *s = NULL;
    char good[1024], path[1024], err[512];
    static uint8_t head[8192];
    int fd;

    ctl_start(&c, "Shared Good", "good.etl", 0);
    ck_assert_int_eq(etl_session_enable_provider(c.s, &guid_p, 0, 0, 0), ETL_OK);
    session_file("Shared Good", good, sizeof good);
    fd = open(good, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(read(fd, head, sizeof head), (ssize_t)sizeof head);
    close(fd);

    /* Not a session at all. */
    snprintf(path, sizeof path, "%s/junk.shm", runtime);
    write_file(path, "not a session", 13, 0600);
    ck_assert_int_eq(etl_session_attach(&s, path, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "junk.shm: not a session file") != NULL, "%s", err);
    /* A real head, cut short: the file is smaller than the head says. */
    snprintf(path, sizeof path, "%s/short.shm", runtime);
    write_file(path, head, sizeof head, 0600);
    ck_assert_int_eq(etl_session_attach(&s, path, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "short.shm: the session's head is damaged") != NULL, "%s", err);
    /* A head whose address points elsewhere (full size, so only the address is wrong). */
    {
        struct stat sb;
        uint64_t elsewhere = 0x7f0000000000ULL;
        ck_assert_int_eq(stat(good, &sb), 0);
        snprintf(path, sizeof path, "%s/moved.shm", runtime);
        memcpy(head + 24, &elsewhere, sizeof elsewhere);
        write_file(path, head, sizeof head, 0600);
        ck_assert_int_eq(truncate(path, sb.st_size), 0);
        ck_assert_int_eq(etl_session_attach(&s, path, err, sizeof err), ETL_FAILED);
        ck_assert_msg(strstr(err, "moved.shm: the session's head is damaged") != NULL, "%s", err);
    }
    /* Readable by others: not this user's private session. */
    snprintf(path, sizeof path, "%s/open.shm", runtime);
    write_file(path, "x", 1, 0644);
    ck_assert_int_eq(chmod(path, 0644), 0);
    ck_assert_int_eq(etl_session_attach(&s, path, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "open.shm: not a session file") != NULL, "%s", err);

    /* A provider process among them: enabled through the good session, and its events there. */
    ck_assert_int_eq(exit_status(spawn("enabled", (char *)NULL)), 1);
    ctl_stop(&c, &st);
    ck_assert_uint_eq(st.writers_refused, 0);
}
END_TEST

static Suite *shared_suite(void)
{
    Suite *s = suite_create("shared");
    TCase *tc = tcase_create("shared");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300); /* the sanitizers make it slow */
    tcase_add_test(tc, memory_at_rest_is_the_minimum);
    tcase_add_test(tc, two_processes);
    tcase_add_test(tc, two_processes_losing);
    tcase_add_test(tc, enable_later_filter_disable);
    tcase_add_test(tc, disable_while_writing);
    tcase_add_test(tc, writer_killed_mid_burst);
    tcase_add_test(tc, many_kills);
    tcase_add_test(tc, stop_under_writers);
    tcase_add_test(tc, other_user_refused);
    tcase_add_test(tc, address_taken);
    tcase_add_test(tc, name_must_be_claimed);
    tcase_add_test(tc, hostile_session_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 9 && strcmp(argv[1], "writer") == 0) return writer_process(argv + 2);
    if (argc == 2 && strcmp(argv[1], "enabled") == 0) return enabled_process();
    if (argc == 3 && strcmp(argv[1], "toggle") == 0) return toggle_process(atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "taken") == 0) return taken_process(argv[2]);
    return check_run(shared_suite());
}
