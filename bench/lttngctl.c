/* SPDX-License-Identifier: MIT */
/* Drives LTTng for the benchmarks that compare with LTTng-UST (sessionbench, provbench). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchevent.h"
#include "benchstat.h"
#include "lttng_tp.h"
#include "lttngctl.h"

static uint64_t load_be(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

int lttng_cmd(struct lttng_ctl *l, const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "lttng %s >>'%s' 2>&1", args, l->log);
    rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int lttng_discarded(struct lttng_ctl *l, const char *session, uint64_t *out)
{
    char cmd[256], line[4096];
    FILE *f;
    int found = 0;

    snprintf(cmd, sizeof cmd, "lttng --mi=xml list '%s' 2>/dev/null", session);
    *out = 0;
    f = popen(cmd, "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        for (char *p = line; (p = strstr(p, "<discarded_events>")) != NULL; p++) {
            *out += strtoull(p + strlen("<discarded_events>"), NULL, 10);
            found = 1;
        }
    }
    return pclose(f) == 0 && found ? 0 : -1;
}

static const char *sessiond_pidfile(char *buf, size_t size)
{
    const char *home = getenv("LTTNG_HOME");

    if (geteuid() == 0) return "/var/run/lttng/lttng-sessiond.pid";
    if (!home || !*home) home = getenv("HOME");
    snprintf(buf, size, "%s/.lttng/lttng-sessiond.pid", home ? home : "");
    return buf;
}

int lttng_setup(struct lttng_ctl *l, const char *tmpdir, const char *prog)
{
    int fd;

    snprintf(l->log, sizeof l->log, "%s/%s-lttng-log-XXXXXX", tmpdir, prog);
    fd = mkstemp(l->log);
    if (fd < 0) {
        snprintf(l->why, sizeof l->why, "cannot create a log file in %s", tmpdir);
        l->log[0] = 0;
        return -1;
    }
    close(fd);
    if (system("command -v lttng >/dev/null 2>&1") != 0) {
        snprintf(l->why, sizeof l->why, "the lttng command (lttng-tools) is not installed");
        return -1;
    }
    if (lttng_cmd(l, "--no-sessiond list") != 0) {
        char buf[LTTNG_PATH_SIZE];
        FILE *f;
        long pid = 0;
        if (system("lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1") != 0 ||
            lttng_cmd(l, "--no-sessiond list") != 0) {
            snprintf(l->why, sizeof l->why, "no LTTng session daemon runs, and lttng-sessiond --daemonize failed "
                                            "(see %s)", l->log);
            return -1;
        }
        f = fopen(sessiond_pidfile(buf, sizeof buf), "r");
        if (f) {
            if (fscanf(f, "%ld", &pid) != 1) pid = 0;
            fclose(f);
        }
        l->started_sessiond = 1;
        l->sessiond_pid = (pid_t)pid;
        if (pid > 0) printf("started an LTTng session daemon (pid %ld); it is stopped at the end\n", pid);
        else printf("started an LTTng session daemon; its pid file was not found, so it is left running\n");
    }
    snprintf(l->session, sizeof l->session, "%s-%ld", prog, (long)getpid());
    l->available = 1;
    return 0;
}

void lttng_teardown(struct lttng_ctl *l, int keep_log)
{
    if (l->relayd_pid > 0) {
        int st;
        kill(l->relayd_pid, SIGTERM);
        for (int i = 0; waitpid(l->relayd_pid, &st, WNOHANG) == 0; i++) {
            if (i == 100) kill(l->relayd_pid, SIGKILL); /* 5 s */
            usleep(50000);
        }
    }
    if (l->relayd_dir[0] && keep_log) printf("kept the relay daemon's output in %s\n", l->relayd_dir);
    else if (l->relayd_dir[0]) tree_remove(l->relayd_dir);
    if (l->started_sessiond && l->sessiond_pid > 0) {
        kill(l->sessiond_pid, SIGTERM);
        for (int i = 0; i < 100 && kill(l->sessiond_pid, 0) == 0; i++) usleep(50000);
    }
    if (l->log[0] && keep_log) printf("kept the lttng commands' output in %s\n", l->log);
    else if (l->log[0]) unlink(l->log);
}

int lttng_wait_tracepoint(int on)
{
    double deadline = bench_now_s() + 10;

    while ((lttng_ust_tracepoint_enabled(libetl_bench, event32) != 0) != on) {
        if (bench_now_s() > deadline) return -1;
        usleep(5000);
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static uint64_t tree_bytes;
static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_F) tree_bytes += (uint64_t)st->st_size;
    return 0;
}

uint64_t tree_size(const char *dir)
{
    tree_bytes = 0;
    nftw(dir, add_size, 16, FTW_PHYS);
    return tree_bytes;
}

void tree_remove(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* CTF index files (one per stream: a 16-byte header, then one entry per packet, big-endian):
   the events_discarded field of a stream's last packet is what the stream discarded in all. */
static uint64_t index_discarded;
static int index_bad;
static int add_discarded(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    unsigned char h[16], e[56], last[56];
    size_t len = strlen(path);
    uint32_t entry;
    int have = 0;
    FILE *f;

    if (flag != FTW_F || len < 4 || strcmp(path + len - 4, ".idx") != 0) return 0;
    f = fopen(path, "rb");
    if (!f || fread(h, 1, sizeof h, f) != sizeof h || load_be(h, 4) != 0xC1F1DCC1u ||
        (entry = (uint32_t)load_be(h + 12, 4)) < sizeof e) {
        index_bad = 1;
        if (f) fclose(f);
        return 0;
    }
    while (fread(e, 1, sizeof e, f) == sizeof e && fseek(f, (long)(entry - sizeof e), SEEK_CUR) == 0) {
        memcpy(last, e, sizeof e);
        have = 1;
    }
    fclose(f);
    if (have) index_discarded += load_be(last + 40, 8); /* offset, packet_size, content_size, begin, end, discarded */
    return 0;
}

int lttng_trace_discarded(const char *dir, uint64_t *out)
{
    index_discarded = 0;
    index_bad = 0;
    if (nftw(dir, add_discarded, 16, FTW_PHYS) != 0 || index_bad) return -1;
    *out = index_discarded;
    return 0;
}

/* ------------------------------------------------------------------ LTTng live */

#define LIVE_URL "net://127.0.0.1"

/* Whether something accepts connections on 127.0.0.1:port. */
static int listening(unsigned port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    if (fd < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* Runs argv with stdin from /dev/null, stdout to out_fd (-1: the log) and stderr to the log. */
static pid_t start_program(const struct lttng_ctl *l, char *const argv[], int out_fd)
{
    pid_t pid = fork();

    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY), log = open(l->log, O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (null < 0 || log < 0) _exit(127);
        dup2(null, 0);
        dup2(out_fd >= 0 ? out_fd : log, 1);
        dup2(log, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

int lttng_live_setup(struct lttng_ctl *l, const char *tmpdir, const char *prog)
{
    char *argv[] = { "lttng-relayd", "--output", l->relayd_dir, NULL };
    int st;

    if (listening(LTTNG_LIVE_PORT)) {
        printf("an LTTng relay daemon listens on 127.0.0.1:%d: the live sessions use it (their traces stay in its "
               "output directory)\n", LTTNG_LIVE_PORT);
        l->live_available = 1;
        return 0;
    }
    if (system("command -v lttng-relayd >/dev/null 2>&1") != 0 ||
        system("command -v babeltrace2 >/dev/null 2>&1") != 0) {
        snprintf(l->live_why, sizeof l->live_why, "lttng-relayd (lttng-tools) or babeltrace2 is not installed");
        return -1;
    }
    snprintf(l->relayd_dir, sizeof l->relayd_dir, "%s/%s-relayd-XXXXXX", tmpdir, prog);
    if (!mkdtemp(l->relayd_dir)) {
        snprintf(l->live_why, sizeof l->live_why, "cannot create a directory in %s", tmpdir);
        l->relayd_dir[0] = 0;
        return -1;
    }
    l->relayd_pid = start_program(l, argv, -1);
    if (l->relayd_pid < 0) {
        snprintf(l->live_why, sizeof l->live_why, "cannot start lttng-relayd: %s", strerror(errno));
        l->relayd_pid = 0;
        return -1;
    }
    /* It listens on its control, data and live ports once it has started. */
    for (double deadline = bench_now_s() + 10; !listening(LTTNG_LIVE_PORT);) {
        if (waitpid(l->relayd_pid, &st, WNOHANG) == l->relayd_pid) {
            snprintf(l->live_why, sizeof l->live_why, "no LTTng relay daemon listens on 127.0.0.1:%d, and "
                     "lttng-relayd exited at once (see %s)", LTTNG_LIVE_PORT, l->log);
            l->relayd_pid = 0;
            return -1;
        }
        if (bench_now_s() > deadline) {
            snprintf(l->live_why, sizeof l->live_why, "lttng-relayd did not listen on 127.0.0.1:%d 10 s after it "
                     "started (see %s)", LTTNG_LIVE_PORT, l->log);
            return -1;
        }
        usleep(20000);
    }
    printf("started an LTTng relay daemon (pid %ld, output in %s); it is stopped at the end\n", (long)l->relayd_pid,
           l->relayd_dir);
    l->live_available = 1;
    return 0;
}

/* The relay daemon's live sessions (babeltrace2 lists them): session's URL into url and its
   clients. 1 when it is listed, 0 when not, -1 when babeltrace2 could not list them. */
static int live_session(const struct lttng_ctl *l, const char *session, char *url, size_t size, unsigned *clients)
{
    char cmd[LTTNG_PATH_SIZE + 128], line[1024], end[128];
    FILE *f;
    int found = 0;

    snprintf(cmd, sizeof cmd, "babeltrace2 --input-format=lttng-live " LIVE_URL " 2>>'%s'", l->log);
    snprintf(end, sizeof end, "/%s (", session);
    f = popen(cmd, "r");
    if (!f) return -1;
    /* net://127.0.0.1/host/HOSTNAME/SESSION (timer = T, N stream(s), C client(s) connected) */
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, end), *c;
        if (found || strncmp(line, "net://", 6) != 0 || !at) continue;
        snprintf(url, size, "%.*s", (int)(at - line) + (int)strlen(session) + 1, line);
        c = strstr(at, "stream(s), ");
        *clients = c ? (unsigned)strtoul(c + strlen("stream(s), "), NULL, 10) : 0;
        found = 1;
    }
    return pclose(f) == 0 ? found : -1;
}

int lttng_live_attach(struct lttng_ctl *l, const char *session, struct lttng_live *v, char *why, size_t size)
{
    char *argv[] = { "babeltrace2", "--input-format=lttng-live", v->url, "--params=session-not-found-action=\"end\"",
                     "-c", "sink.utils.counter", "--params=step=+0", NULL };
    double deadline = bench_now_s() + 10;
    unsigned clients = 0;
    int p[2], k, st;

    memset(v, 0, sizeof *v);
    v->out = -1;
    /* The relay daemon knows the session once its consumer daemon connected (at lttng start). */
    while ((k = live_session(l, session, v->url, sizeof v->url, &clients)) != 1) {
        if (k < 0 || bench_now_s() > deadline) {
            snprintf(why, size, k < 0 ? "babeltrace2 could not list the relay daemon's live sessions (see %s)"
                                      : "the relay daemon did not list the live session 10 s after lttng start "
                                        "(see %s)", l->log);
            return -1;
        }
        usleep(20000);
    }
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, size, "pipe: %s", strerror(errno));
        return -1;
    }
    v->pid = start_program(l, argv, p[1]);
    close(p[1]);
    if (v->pid < 0) {
        snprintf(why, size, "cannot start babeltrace2: %s", strerror(errno));
        close(p[0]);
        v->pid = 0;
        return -1;
    }
    v->out = p[0];
    /* It is the session's client once it has attached. */
    while ((k = live_session(l, session, v->url, sizeof v->url, &clients)) == 1 && clients == 0) {
        if (waitpid(v->pid, &st, WNOHANG) == v->pid) {
            snprintf(why, size, "babeltrace2 ended before it attached to the live session %s (see %s)", v->url, l->log);
            v->pid = 0;
            return -1;
        }
        if (bench_now_s() > deadline) {
            snprintf(why, size, "babeltrace2 did not attach to the live session %s in 10 s (see %s)", v->url, l->log);
            return -1;
        }
        usleep(20000);
    }
    if (k != 1) {
        snprintf(why, size, "the relay daemon no longer lists the live session %s (see %s)", v->url, l->log);
        return -1;
    }
    return 0;
}

int lttng_live_end(struct lttng_ctl *l, struct lttng_live *v, int timeout_s, char *why, size_t size)
{
    char text[4096];
    size_t len = 0;
    double deadline = bench_now_s() + timeout_s;
    int st = 0, ended = 0, found = 0;
    struct rusage ru;

    if (!v->pid) return -1;
    /* The counter sink writes its counts only at the end: the pipe does not fill before. */
    for (;;) {
        pid_t k = wait4(v->pid, &st, WNOHANG, &ru);
        if (k == v->pid || (k < 0 && errno != EINTR)) {
            ended = k == v->pid;
            break;
        }
        if (bench_now_s() > deadline) break;
        usleep(5000);
    }
    v->end_ns = bench_now_ns();
    if (ended)
        v->cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                    ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    if (!ended) {
        kill(v->pid, SIGKILL);
        while (waitpid(v->pid, &st, 0) < 0 && errno == EINTR) {
        }
    }
    v->pid = 0;
    for (;;) {
        ssize_t n = read(v->out, text + len, sizeof text - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    text[len] = 0;
    close(v->out);
    v->out = -1;
    if (!ended) {
        snprintf(why, size, "babeltrace2 did not end %d s after the live session was destroyed", timeout_s);
        return -1;
    }
    /* "   N Event messages", then the other kinds of messages and the total */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long n;
        int at = 0;
        if (sscanf(line, " %llu %n", &n, &at) != 1) continue;
        if (strcmp(line + at, "Event messages") == 0) v->events = n, found = 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !found) {
        snprintf(why, size, "babeltrace2 on the live session %s failed (see %s)", v->url, l->log);
        return -1;
    }
    return 0;
}

int lttng_live_trace_dir(const struct lttng_ctl *l, const struct lttng_live *v, const char *session, char *out,
                         size_t size)
{
    const char *host = strstr(v->url, "/host/");
    char pattern[LTTNG_PATH_SIZE + 700];
    glob_t g;
    int rc = -1;

    if (!host || !l->relayd_dir[0]) return -1;
    host += strlen("/host/");
    snprintf(pattern, sizeof pattern, "%s/%.*s/%s-*", l->relayd_dir, (int)strcspn(host, "/"), host, session);
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0) return -1;
    if (g.gl_pathc == 1 && strlen(g.gl_pathv[0]) < size) {
        snprintf(out, size, "%s", g.gl_pathv[0]);
        rc = 0;
    }
    globfree(&g);
    return rc;
}
