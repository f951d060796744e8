/* SPDX-License-Identifier: MIT */
/* Drives LTTng for the benchmarks that compare with LTTng-UST (sessionbench, provbench). */
#define _GNU_SOURCE
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

int lttng_discarded(struct lttng_ctl *l, uint64_t *out)
{
    char cmd[256], line[4096];
    FILE *f;
    int found = 0;

    snprintf(cmd, sizeof cmd, "lttng --mi=xml list '%s' 2>/dev/null", l->session);
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
