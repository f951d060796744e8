/* SPDX-License-Identifier: MIT */
/*
 * profbench: how long etlprof takes to symbolize every sample and stack frame of a 60-second
 * profile, against perf report on perf's record of the same execution, in the same run.
 *
 *   profbench --tools BUILDDIR [-s SECONDS] [-r ROUNDS] [-F HZ] [-d DIR] [--keep]
 *   profbench --tools BUILDDIR --reuse DIR [-r ROUNDS]
 *
 * Needs root (a kernel session and perf record -a) and perf on PATH; says SKIP and exits 0
 * without them. One recording: etlrecord run --kernel process,thread,image_load,profile
 * --stackwalk profile runs perf record -N -a -g -e cpu-clock -F HZ (1000: etlrecord's 1 ms
 * profile interval; -N: no copies of the images into perf's build-id cache, which perf report
 * on this machine does not need), which runs BUILDDIR/bench/profload SECONDS (60), so that the kernel
 * session and perf see the same execution of the same machine: both record every processor's
 * samples with their stacks. Then, ROUNDS (5) times, after one untimed run of each, as fresh
 * processes, in an order that alternates between rounds:
 *   etlprof -v TRACE                   the folded profile: every sample's every frame looked up
 *                                      and named, the distinct stacks counted and written
 *   perf report --stdio --no-children  perf's report of perf.data: its samples' and call
 *                                      chains' symbols resolved, the call graph printed
 *   etlprof -v --process profload      the same, the workload's samples only
 *   perf report ... --comm profload    the same
 * Reports for each the median (min, max) wall time, processor time (user + system, from
 * wait4) and peak resident set (ru_maxrss), the ratios of etlprof to perf report, the samples
 * and frames each saw, and the symbolizer's counts (etlprof -v: lookups, cache hits, named).
 *
 * The kernel session asks for build-ids in its MMAP2 records (perf_event_attr.build_id); the
 * kernel can then flag other tools' MMAP2 records as holding a build-id when they hold the
 * device and inode (perf_event_mmap_output sets PERF_RECORD_MISC_MMAP_BUILD_ID in the record
 * it shares among the events and does not clear it), and perf 6.1 reading such a record copies
 * a "build-id" of up to 255 bytes into 20 and dies of stack smashing. profbench counts such
 * records in perf.data and records again (up to 3 times) when perf failed or they are there.
 * --reuse DIR times the trace and perf.data an earlier --keep left in DIR (to profile etlprof
 * on them); --keep leaves them there.
 */
#define _DEFAULT_SOURCE 1 /* wait4, getloadavg */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchrun.h"

#define MAX_ROUNDS 64
#define NCMD 4

struct config {
    const char *tools;
    const char *reuse;
    const char *dir;
    unsigned seconds, rounds, hz;
    int keep;
};

/* What one run of a command cost. */
static int usage(void)
{
    fputs("usage: profbench --tools BUILDDIR [-s SECONDS] [-r ROUNDS] [-F HZ] [-d DIR] [--keep]\n"
          "       profbench --tools BUILDDIR --reuse DIR [-r ROUNDS]\n",
          stderr);
    return 2;
}

/* The full path of program name on PATH into out, or 0 when it is not there. */
static int on_path(const char *name, char *out, size_t size)
{
    const char *path = getenv("PATH");
    char dir[2048];
    int w;

    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n && n < sizeof dir) {
            memcpy(dir, path, n);
            dir[n] = 0;
            w = snprintf(out, size, "%s/%s", dir, name);
            if (w > 0 && (size_t)w < size && access(out, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

/* Runs argv (stdout to out_path or /dev/null, stderr to err_path) and waits for it. */
static int run(char *const argv[], const char *out_path, const char *err_path, struct bench_cost *c)
{
    return bench_run("profbench", argv, NULL, out_path, err_path, c);
}

/* The first unsigned number after key in file path, or -1. */
static long long number_after(const char *path, const char *key)
{
    char line[1024];
    long long v = -1;
    FILE *f = fopen(path, "r");

    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        char *k = strstr(line, key);
        if (k) {
            v = strtoll(k + strlen(key), NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* The MMAP2 records of perf.data at path flagged PERF_RECORD_MISC_MMAP_BUILD_ID with a
   build-id size past 20 (the device and inode read as a build-id, see above); -1 when the file
   cannot be read as perf.data. */
static long long bad_mmap2_records(const char *path)
{
    unsigned char h[64], r[64];
    uint64_t off, size, pos;
    long long bad = 0;
    FILE *f = fopen(path, "rb");

    if (!f) return -1;
    if (fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, "PERFILE2", 8) != 0) {
        fclose(f);
        return -1;
    }
    memcpy(&off, h + 40, 8); /* the data section: offset and size (host order, as perf wrote it) */
    memcpy(&size, h + 48, 8);
    for (pos = off; pos + 8 <= off + size;) {
        uint32_t type;
        uint16_t misc, rsize;
        size_t got;
        if (fseeko(f, (off_t)pos, SEEK_SET) != 0 || (got = fread(r, 1, sizeof r, f)) < 8) break;
        memcpy(&type, r, 4);
        memcpy(&misc, r + 4, 2);
        memcpy(&rsize, r + 6, 2);
        if (rsize < 8) break;
        /* PERF_RECORD_MMAP2 (10): header, pid, tid, start, len, pgoff, then build_id_size */
        if (type == 10 && (misc & (1u << 14)) && got > 40 && r[40] > 20) bad++;
        pos += rsize;
    }
    fclose(f);
    return bad;
}

/* The lines of file path that are not empty, or -1. */
static long long lines_of(const char *path)
{
    long long n = 0;
    int ch, prev = '\n';
    FILE *f = fopen(path, "r");

    if (!f) return -1;
    while ((ch = getc(f)) != EOF) {
        if (ch == '\n' && prev != '\n') n++;
        prev = ch;
    }
    fclose(f);
    return n;
}

/* etlprof -v's counts, from its standard error in path: 0, or -1 when they are not there. */
static int print_etlprof_counts(const char *path, const char *what)
{
    unsigned long long ev = 0, samples = 0, stacked = 0, stacks = 0, named = 0, frames = 0, lookups = 0, hits = 0,
                       resolved = 0;
    int got = 0;
    char line[1024];
    FILE *f = fopen(path, "r");

    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "etlprof: %llu sample events, %llu samples in the profile (%llu with a stack), %llu distinct "
                         "stacks; %llu of %llu addresses named",
                   &ev, &samples, &stacked, &stacks, &named, &frames) == 6)
            got |= 1;
        if (sscanf(line, "etlprof: symbol lookups %llu, %llu from the cache, %llu named a function", &lookups, &hits,
                   &resolved) == 3)
            got |= 2;
    }
    fclose(f);
    if (got != 3) {
        fprintf(stderr, "profbench: no counts in etlprof -v's %s\n", path);
        return -1;
    }
    printf("etlprof, %s: %llu sample events, %llu samples (%llu with a stack), %llu distinct stacks, %llu frames "
           "(%.2f a sample), %llu named (%.1f%%); symbolizer: %llu lookups, %llu from its cache (%.1f%%), %llu named a "
           "function\n",
           what, ev, samples, stacked, stacks, frames, samples ? (double)frames / (double)samples : 0.0, named,
           frames ? 100.0 * (double)named / (double)frames : 0.0, lookups, hits,
           lookups ? 100.0 * (double)hits / (double)lookups : 0.0, resolved);
    return 0;
}

static void rm_tree(const char *dir)
{
    char *argv[] = { "/bin/rm", "-rf", (char *)dir, NULL };
    run(argv, NULL, NULL, NULL);
}

int main(int argc, char **argv)
{
    struct config cfg = { NULL, NULL, NULL, 60, 5, 1000, 0 };
    char perf[4096], etlrecord[4096], etlprof[4096], profload[4096], dir[4096], trace[4200], data[4200], rundir[4200],
        home[4200], err[NCMD][4200], secs[32], hz[32];
    struct bench_cost cost[NCMD][MAX_ROUNDS];
    int status = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--keep") == 0) cfg.keep = 1;
        else if (i + 1 >= argc) return usage();
        else if (strcmp(a, "--tools") == 0) cfg.tools = argv[++i];
        else if (strcmp(a, "--reuse") == 0) cfg.reuse = argv[++i];
        else if (strcmp(a, "-d") == 0) cfg.dir = argv[++i];
        else if (strcmp(a, "-s") == 0) cfg.seconds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(a, "-r") == 0) cfg.rounds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(a, "-F") == 0) cfg.hz = (unsigned)strtoul(argv[++i], NULL, 10);
        else return usage();
    }
    if (!cfg.tools || !cfg.seconds || !cfg.rounds || cfg.rounds > MAX_ROUNDS || !cfg.hz) return usage();

    if (geteuid() != 0) {
        puts("profbench: SKIP: needs root (a kernel session and perf record -a)");
        return 0;
    }
    if (!on_path("perf", perf, sizeof perf)) {
        puts("profbench: SKIP: perf is not on PATH (Debian's linux-perf; .ci/setup installs it)");
        return 0;
    }
    snprintf(etlrecord, sizeof etlrecord, "%s/tools/etlrecord", cfg.tools);
    snprintf(etlprof, sizeof etlprof, "%s/tools/etlprof", cfg.tools);
    snprintf(profload, sizeof profload, "%s/bench/profload", cfg.tools);
    if (access(etlprof, X_OK) != 0 || (!cfg.reuse && (access(etlrecord, X_OK) != 0 || access(profload, X_OK) != 0))) {
        fprintf(stderr, "profbench: %s/tools/etlrecord, tools/etlprof and bench/profload must be built\n", cfg.tools);
        return 1;
    }

    if (cfg.reuse) {
        snprintf(dir, sizeof dir, "%s", cfg.reuse);
    } else {
        snprintf(dir, sizeof dir, "%s/profbench-XXXXXX", cfg.dir ? cfg.dir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir)) {
            fprintf(stderr, "profbench: cannot make a directory %s: %s\n", dir, strerror(errno));
            return 1;
        }
    }
    snprintf(trace, sizeof trace, "%s/p.etl", dir);
    snprintf(data, sizeof data, "%s/perf.data", dir);
    snprintf(rundir, sizeof rundir, "%s/run", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    /* a private runtime directory for the session, and a private HOME for perf's build-id cache */
    mkdir(rundir, 0700);
    mkdir(home, 0700);
    setenv("ETL_RUNTIME_DIR", rundir, 1);
    setenv("HOME", home, 1);
    for (int k = 0; k < NCMD; k++) snprintf(err[k], sizeof err[k], "%s/err%d", dir, k);

    bench_print_machine();
    {
        double l[3];
        if (getloadavg(l, 3) == 3) printf("load average before: %.2f %.2f %.2f\n", l[0], l[1], l[2]);
    }

    if (!cfg.reuse) {
        char log[4200];
        struct bench_cost rec;
        snprintf(secs, sizeof secs, "%u", cfg.seconds);
        snprintf(hz, sizeof hz, "%u", cfg.hz);
        snprintf(log, sizeof log, "%s/record.err", dir);
        char *rargv[] = { etlrecord, "run", "--kernel", "process,thread,image_load,profile", "--stackwalk", "profile",
                          "-o", trace, "--", perf, "record", "-N", "-a", "-g", "-e", "cpu-clock", "-F", hz, "-o", data, "--",
                          profload, secs, NULL };
        printf("recording %u s: etlrecord run --kernel process,thread,image_load,profile --stackwalk profile -- "
               "perf record -N -a -g -e cpu-clock -F %u -- profload %u\n",
               cfg.seconds, cfg.hz, cfg.seconds);
        for (int attempt = 1;; attempt++) {
            long long bad = -1;
            int rc;
            unlink(trace);
            unlink(data);
            rc = run(rargv, NULL, log, &rec);
            if (rc == 0 && (bad = bad_mmap2_records(data)) == 0) break;
            if (rc == 0 && bad < 0)
                printf("perf.data cannot be read as perf's file\n");
            else if (rc == 0)
                printf("perf.data holds %lld MMAP2 records flagged with a build-id perf did not ask for "
                       "(the kernel's flag of the session's records), which perf 6.1 cannot read\n",
                       bad);
            if (attempt == 3) {
                fprintf(stderr, "profbench: no readable recording in 3 attempts\n");
                goto out;
            }
            printf("recording again (attempt %d)\n", attempt + 1);
        }
        printf("recorded in %.1f s\n", rec.wall);
    }

    {
        char *const cmds[NCMD][16] = {
            { etlprof, "-v", trace, NULL },
            { perf, "report", "-i", data, "--stdio", "--no-children", NULL },
            { etlprof, "-v", "--process", "profload", trace, NULL },
            { perf, "report", "-i", data, "--stdio", "--no-children", "--comm", "profload", NULL },
        };
        static const char *const names[NCMD] = {
            "etlprof (folded, every sample)",
            "perf report --stdio --no-children",
            "etlprof --process profload",
            "perf report ... --comm profload",
        };
        char out0[4200], out1[4200], stats_err[4200], script[4200];
        struct stats w[NCMD], c[NCMD], m[NCMD];
        long long v;

        /* one untimed run of each (the files in the page cache), keeping the outputs */
        snprintf(out0, sizeof out0, "%s/etlprof.folded", dir);
        snprintf(out1, sizeof out1, "%s/perf.report", dir);
        if (run(cmds[0], out0, err[0], NULL) || run(cmds[1], out1, err[1], NULL) || run(cmds[2], NULL, err[2], NULL) ||
            run(cmds[3], NULL, err[3], NULL))
            goto out;

        /* the counts: etlprof -v's lines, perf report --stats's and perf script's frames */
        {
            struct stat st1, st2;
            if (stat(trace, &st1) == 0 && stat(data, &st2) == 0)
                printf("trace: %.1f MB; perf.data: %.1f MB\n", (double)st1.st_size / 1e6, (double)st2.st_size / 1e6);
        }
        if (print_etlprof_counts(err[0], "every sample") != 0 || print_etlprof_counts(err[2], "profload") != 0) goto out;
        snprintf(stats_err, sizeof stats_err, "%s/perf.stats", dir);
        {
            char *sargv[] = { perf, "report", "-i", data, "--stats", NULL };
            if (run(sargv, stats_err, err[1], NULL) == 0)
                printf("perf: %lld samples\n", number_after(stats_err, "SAMPLE events:"));
        }
        snprintf(script, sizeof script, "%s/perf.ips", dir);
        {
            char *sargv[] = { perf, "script", "-i", data, "-F", "ip", NULL };
            if (run(sargv, script, err[1], NULL) == 0 && (v = lines_of(script)) >= 0)
                printf("perf: %lld frames (the addresses perf script -F ip prints)\n", v);
        }

        for (unsigned r = 0; r < cfg.rounds; r++)
            for (unsigned j = 0; j < NCMD; j++) {
                unsigned k = r % 2 ? NCMD - 1 - j : j; /* the order alternates */
                if (run(cmds[k], NULL, err[k], &cost[k][r]) != 0) goto out;
            }

        printf("\n%u rounds, medians (min .. max):\n", cfg.rounds);
        for (int k = 0; k < NCMD; k++) {
            double wv[MAX_ROUNDS], cv[MAX_ROUNDS], mv[MAX_ROUNDS];
            for (unsigned r = 0; r < cfg.rounds; r++) {
                wv[r] = cost[k][r].wall;
                cv[r] = cost[k][r].cpu;
                mv[r] = (double)cost[k][r].maxrss_kb / 1024.0;
            }
            w[k] = stats_of(wv, cfg.rounds);
            c[k] = stats_of(cv, cfg.rounds);
            m[k] = stats_of(mv, cfg.rounds);
            printf("  %-36s wall %7.3f s (%.3f .. %.3f)  processor %7.3f s (%.3f .. %.3f)  peak RSS %7.1f MiB\n",
                   names[k], w[k].med, w[k].min, w[k].max, c[k].med, c[k].min, c[k].max, m[k].med);
        }
        printf("ratios, etlprof / perf report (below 1: etlprof is faster):\n");
        printf("  every sample:  wall %.3f  processor %.3f  peak RSS %.3f\n", w[0].med / w[1].med, c[0].med / c[1].med,
               m[0].med / m[1].med);
        printf("  profload only: wall %.3f  processor %.3f  peak RSS %.3f\n", w[2].med / w[3].med, c[2].med / c[3].med,
               m[2].med / m[3].med);
        {
            double l[3];
            if (getloadavg(l, 3) == 3) printf("load average after: %.2f %.2f %.2f\n", l[0], l[1], l[2]);
        }
    }
    status = 0;
out:
    if (cfg.keep || cfg.reuse || status) printf("kept %s\n", dir);
    else rm_tree(dir);
    return status;
}
