/* SPDX-License-Identifier: MIT */
/* Tests of recordings of profiles (etl/recording.h): the state's round trip, damaged and hostile states refused with their path and line, the instance claimed once, collectors made controllers, a failed start undone. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"

#define HEAD "<?xml version=\"1.0\"?>\n<WindowsPerformanceRecorder Version=\"1.0\">\n<Profiles>\n"
#define TAIL "</Profiles>\n</WindowsPerformanceRecorder>\n"

/* Two event collectors: "rec test a" (a FileName) and "rec test b" (none), etldemo's provider. */
static const char two_collectors[] =
    HEAD "<EventCollector Id=\"A\" Name=\"rec test a\"><BufferSize Value=\"64\"/><Buffers Value=\"4\"/></EventCollector>\n"
    "<EventCollector Id=\"B\" Name=\"rec test b\"><BufferSize Value=\"32\"/><Buffers Value=\"2\"/></EventCollector>\n"
    "<EventProvider Id=\"P\" Name=\"458d4a63-7cc9-5239-62c4-f8aebbe597ac\" Level=\"4\" Stack=\"true\">"
    "<Keywords><Keyword Value=\"0x10\"/></Keywords></EventProvider>\n"
    "<Profile Id=\"Two.Verbose.File\" Name=\"Two\" DetailLevel=\"Verbose\" LoggingMode=\"File\">\n"
    " <Collectors><EventCollectorId Value=\"A\"><EventProviders><EventProviderId Value=\"P\"/></EventProviders>"
    "</EventCollectorId><EventCollectorId Value=\"B\"><EventProviders><EventProviderId Value=\"P\"/></EventProviders>"
    "</EventCollectorId></Collectors>\n"
    "</Profile>\n" TAIL;

static char rundir[256], diskdir[300];

/* A private runtime directory for each test, with the temporary directory (file mode's log
   directories) in it, removed with what it holds after. */
static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(rundir, sizeof rundir, "%s/check_recording.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(rundir));
    setenv("ETL_RUNTIME_DIR", rundir, 1);
    snprintf(diskdir, sizeof diskdir, "%s/disk", rundir);
    ck_assert_int_eq(mkdir(diskdir, 0700), 0);
    setenv("TMPDIR", diskdir, 1);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rundir);
    if (system(cmd) != 0) {}
}

static const etl_wprp_profile *two(etl_wprp **w)
{
    char err[1024];
    ck_assert_msg(etl_wprp_parse(w, two_collectors, strlen(two_collectors), "t.wprp", err, sizeof err) == ETL_OK, "%s",
                  err);
    return etl_wprp_find(*w, "Two", "File");
}

struct said {
    char text[4096];
    unsigned n;
};

static void message(void *arg, const char *text)
{
    struct said *s = arg;
    size_t len = strlen(s->text);
    snprintf(s->text + len, sizeof s->text - len, "%s\n", text);
    s->n++;
}

START_TEST(state_round_trip)
{
    struct said said = { "", 0 };
    etl_recording_callbacks cb = { .message = message, .arg = &said };
    etl_recording *r, *back;
    char err[1024], want[4200];
    etl_wprp *w;
    const etl_wprp_profile *p = two(&w);
    int found;

    ck_assert_int_eq(etl_recording_new(&r, "round trip", "memory", p->id, err, sizeof err), ETL_OK);
    snprintf(want, sizeof want, "%s/round trip.recording", rundir);
    ck_assert_str_eq(etl_recording_dir(r), want);
    ck_assert_int_eq(etl_recording_claim(r, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_save(r, err, sizeof err), ETL_OK);

    ck_assert_int_eq(etl_recording_open(&back, "round trip", &found, err, sizeof err), ETL_OK);
    ck_assert_int_eq(found, ETL_RECORDING_FOUND);
    ck_assert_str_eq(etl_recording_mode(back), "memory");
    ck_assert_str_eq(etl_recording_profile(back), "Two.Verbose.File");
    ck_assert_str_eq(etl_recording_log_dir(back), etl_recording_log_dir(r));
    ck_assert_uint_eq(etl_recording_session_count(back), 2);
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_str_eq(etl_recording_session(back, i), etl_recording_session(r, i));
        ck_assert_str_eq(etl_recording_file(back, i), etl_recording_file(r, i));
    }
    ck_assert_str_eq(etl_recording_session(back, 1), "rec test b");
    snprintf(want, sizeof want, "%s/rec-test-b.etl", etl_recording_log_dir(r));
    ck_assert_str_eq(etl_recording_file(back, 1), want);
    ck_assert_int_eq(etl_recording_stopped(back), 0);

    /* A stop of sessions that do not run: each said, the recording saved as stopped. */
    ck_assert_int_eq(etl_recording_stop(back, &cb), ETL_FAILED);
    ck_assert_msg(strstr(said.text, "rec test a") && strstr(said.text, "rec test b"), "said: %s", said.text);
    etl_recording_close(back);
    ck_assert_int_eq(etl_recording_open(&back, "round trip", &found, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_stopped(back), 1);
    ck_assert_uint_eq(etl_recording_session_count(back), 2);

    /* Nothing to merge: said, and refused. */
    said.text[0] = '\0';
    ck_assert_int_eq(etl_recording_merge(back, "/nonexistent/out.etl", NULL, &cb, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "nothing to merge"), "%s", err);
    ck_assert_msg(strstr(said.text, "session rec test a: no file "), "said: %s", said.text);

    etl_recording_remove(back, &cb);
    ck_assert_int_eq(access(etl_recording_dir(back), F_OK), -1);
    etl_recording_close(back);
    ck_assert_int_eq(etl_recording_open(&back, "round trip", &found, err, sizeof err), ETL_OK);
    ck_assert_int_eq(found, ETL_RECORDING_NONE);
    etl_recording_close(back);
    etl_recording_close(r);
    etl_wprp_free(w);
}
END_TEST

/* Writes text as instance name's state; opening it is refused with the state's path and what. */
static void expect_refused(const char *name, const char *text, const char *what)
{
    char dir[600], path[700], err[2048];
    etl_recording *r = (etl_recording *)1;
    int found;
    FILE *f;

    snprintf(dir, sizeof dir, "%s/%s.recording", rundir, name);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/state", dir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    err[0] = '\0';
    ck_assert_int_eq(etl_recording_open(&r, name, &found, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err, path) != NULL, "'%s' does not name %s", err, path);
    ck_assert_msg(strstr(err, what) != NULL, "'%s' does not say '%s'", err, what);
}

START_TEST(damaged_states)
{
    char text[8192], dir[600];

    expect_refused("nomode", "profile X\n", "no mode");
    expect_refused("badmode", "mode tape\nprofile X\n", "line 1 ");
    expect_refused("noprofile", "mode file\n", "no profile");
    expect_refused("unknown", "mode file\nprofile X\nrm -rf /\n", "line 3 ");
    expect_refused("nofile", "mode file\nprofile X\nsession a\nsession b\nfile /x\n", "line 4 ");
    expect_refused("lastnofile", "mode file\nprofile X\nsession a\n", "session a has no file");
    /* Hostile: a log file outside the recording's directory (cancel would remove it). */
    expect_refused("outside", "mode file\nprofile X\nsession a\nfile /etc/passwd\n", "line 4: a log file outside");
    snprintf(dir, sizeof dir, "%s/dotdot.recording", rundir);
    snprintf(text, sizeof text, "mode file\nprofile X\nsession a\nfile %s/..\n", dir);
    expect_refused("dotdot", text, "line 4: a log file outside");
    snprintf(text, sizeof text, "mode file\nprofile X\nsession a\nfile %s/sub/x.etl\n", dir);
    expect_refused("sub", text, "line 4: a log file outside");
    memset(text, 'p', sizeof text - 1);
    memcpy(text, "mode file\nprofile ", 18);
    text[sizeof text - 1] = '\0';
    expect_refused("long", text, "line 2: too long");
}
END_TEST

START_TEST(file_mode_log_dir)
{
    etl_recording *r, *back;
    char err[2048], want[600];
    const char *dir;
    etl_wprp *w;
    const etl_wprp_profile *p = two(&w);
    struct stat st;
    int found;

    ck_assert_int_eq(etl_recording_new(&r, "disk", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_claim(r, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    dir = etl_recording_log_dir(r);
    /* On disk, in $TMPDIR, private; the state stays in the runtime directory. */
    snprintf(want, sizeof want, "%s/etlrecord-disk.", diskdir);
    ck_assert_msg(strncmp(dir, want, strlen(want)) == 0 && strlen(dir) == strlen(want) + 6, "%s", dir);
    ck_assert_int_eq(lstat(dir, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    snprintf(want, sizeof want, "%s/rec-test-b.etl", dir);
    ck_assert_str_eq(etl_recording_file(r, 1), want);
    ck_assert_int_eq(etl_recording_save(r, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_open(&back, "disk", &found, err, sizeof err), ETL_OK);
    ck_assert_str_eq(etl_recording_log_dir(back), dir);
    ck_assert_str_eq(etl_recording_file(back, 1), want);
    etl_recording_close(back);
    /* Cancel (no session runs) removes the log directory with the recording. */
    etl_recording_cancel(r, NULL);
    ck_assert_int_eq(access(dir, F_OK), -1);
    ck_assert_int_eq(access(etl_recording_dir(r), F_OK), -1);
    etl_recording_close(r);

    /* No $TMPDIR, or one that is not an absolute path: /var/tmp. */
    for (int round = 0; round < 2; round++) {
        if (round) setenv("TMPDIR", "relative", 1);
        else unsetenv("TMPDIR");
        ck_assert_int_eq(etl_recording_new(&r, "disk", "file", p->id, err, sizeof err), ETL_OK);
        ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
        ck_assert_msg(strncmp(etl_recording_log_dir(r), "/var/tmp/etlrecord-disk.", 24) == 0, "%s",
                      etl_recording_log_dir(r));
        snprintf(want, sizeof want, "%s", etl_recording_log_dir(r));
        etl_recording_remove(r, NULL);
        ck_assert_int_eq(access(want, F_OK), -1);
        etl_recording_close(r);
    }
    setenv("TMPDIR", diskdir, 1);
    /* A temporary directory that cannot be used: said, nothing made. */
    setenv("TMPDIR", "/nonexistent/tmp", 1);
    ck_assert_int_eq(etl_recording_new(&r, "disk", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "cannot make a directory for its log files in /nonexistent/tmp"), "%s", err);
    etl_recording_close(r);
    /* Memory mode: the snapshots in the recording's directory. */
    ck_assert_int_eq(etl_recording_new(&r, "mem", "memory", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    ck_assert_str_eq(etl_recording_log_dir(r), etl_recording_dir(r));
    etl_recording_close(r);
    etl_wprp_free(w);
}
END_TEST

/* A start that ended after making its log directory on disk and before saving its state: the
   recording is unfinished, and removing it removes that directory too (it is not in the
   runtime directory, and no state names it). */
START_TEST(unfinished_start_log_dir)
{
    etl_recording *r, *back;
    char err[2048], dir[700];
    etl_wprp *w;
    const etl_wprp_profile *p = two(&w);
    int found;

    ck_assert_int_eq(etl_recording_new(&r, "halfway", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_claim(r, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    snprintf(dir, sizeof dir, "%s", etl_recording_log_dir(r));
    ck_assert_int_eq(access(dir, F_OK), 0);
    etl_recording_close(r); /* the start dies here: no state */

    ck_assert_int_eq(etl_recording_open(&back, "halfway", &found, err, sizeof err), ETL_OK);
    ck_assert_int_eq(found, ETL_RECORDING_UNFINISHED);
    etl_recording_remove(back, NULL);
    ck_assert_msg(access(dir, F_OK) == -1, "%s left behind", dir);
    ck_assert_int_eq(access(etl_recording_dir(back), F_OK), -1);
    etl_recording_close(back);
    etl_wprp_free(w);
}
END_TEST

/* A state naming a log directory that is not a recording's own is refused. */
START_TEST(hostile_log_dir)
{
    char text[2048], dir[700], link[700], err[2048];
    etl_recording *r;
    int found;

    expect_refused("etc", "mode file\nprofile X\nlogdir /etc\nsession a\nfile /etc/passwd\n",
                   "line 3: /etc is not a private log directory");
    /* A link named as a log directory. */
    snprintf(dir, sizeof dir, "%s/target", diskdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(link, sizeof link, "%s/etlrecord-link.AAAAAA", diskdir);
    ck_assert_int_eq(symlink(dir, link), 0);
    snprintf(text, sizeof text, "mode file\nprofile X\nlogdir %s\nsession a\nfile %s/a.etl\n", link, link);
    expect_refused("link", text, "is not a private log directory");
    /* One that others can read. */
    snprintf(dir, sizeof dir, "%s/etlrecord-open.AAAAAA", diskdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    snprintf(text, sizeof text, "mode file\nprofile X\nlogdir %s\nsession a\nfile %s/a.etl\n", dir, dir);
    expect_refused("open", text, "line 3: ");
    /* Files outside the log directory. */
    snprintf(dir, sizeof dir, "%s/etlrecord-ok.AAAAAA", diskdir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(text, sizeof text, "mode file\nprofile X\nlogdir %s\nsession a\nfile %s/a.etl\n", dir, rundir);
    expect_refused("outside2", text, "line 5: a log file outside");
    /* Its own, and one that the temporary directory's cleaner removed: taken. */
    snprintf(text, sizeof text, "mode file\nprofile X\nlogdir %s\nsession a\nfile %s/a.etl\n", dir, dir);
    snprintf(link, sizeof link, "%s/ok.recording", rundir);
    ck_assert_int_eq(mkdir(link, 0700), 0);
    snprintf(link, sizeof link, "%s/ok.recording/state", rundir);
    FILE *f = fopen(link, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(etl_recording_open(&r, "ok", &found, err, sizeof err), ETL_OK);
    ck_assert_str_eq(etl_recording_log_dir(r), dir);
    etl_recording_close(r);
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert_int_eq(etl_recording_open(&r, "ok", &found, err, sizeof err), ETL_OK);
    etl_recording_close(r);
}
END_TEST

START_TEST(claim_twice)
{
    etl_recording *a, *b;
    char err[2048];
    etl_wprp *w;
    const etl_wprp_profile *p = two(&w);

    ck_assert_int_eq(etl_recording_new(&a, "twice", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_claim(a, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_new(&b, "twice", "file", p->id, err, sizeof err), ETL_OK);
    /* Claimed, no state yet: a start that did not finish. */
    ck_assert_int_eq(etl_recording_claim(b, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "is there without its state"), "%s", err);
    /* With its state, no controller alive: its files are left. */
    ck_assert_int_eq(etl_recording_add_collectors(a, p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_save(a, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_claim(b, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "recording twice: its controllers are gone"), "%s", err);
    etl_recording_remove(a, NULL);
    ck_assert_int_eq(etl_recording_claim(b, err, sizeof err), ETL_OK);
    etl_recording_remove(b, NULL);
    etl_recording_close(a);
    etl_recording_close(b);
    /* Not an instance name. */
    ck_assert_int_eq(etl_recording_new(&a, "a/b", "file", p->id, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "not an instance name"), "%s", err);
    ck_assert_int_eq(etl_recording_new(&a, "x", "tape", p->id, err, sizeof err), ETL_FAILED);
    etl_wprp_free(w);
}
END_TEST

START_TEST(builtin_collector_config)
{
    const uint64_t memory = 8ull << 30;
    etl_recording_controller ctl;
    const etl_wprp_collector *c;
    const etl_wprp_profile *p;
    etl_recording *r;
    char err[1024], want[4200];
    etl_wprp *w;

    ck_assert_int_eq(etl_wprp_builtin(&w, err, sizeof err), ETL_OK);
    ck_assert_ptr_nonnull(p = etl_wprp_find(w, "CPU.Light", "File"));
    ck_assert_uint_eq(p->collector_count, 1);
    c = &p->collectors[0];
    ck_assert_int_eq(c->kind, ETL_WPRP_SYSTEM_COLLECTOR);
    ck_assert_int_eq(etl_recording_new(&r, "cpu", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_controller_config(r, 0, c, memory, &ctl), ETL_OK);
    ck_assert_str_eq(ctl.cfg.properties.logger_name, "NT Kernel Logger");
    ck_assert_uint_eq(ctl.cfg.properties.buffer_size_kb, 1024);
    ck_assert_uint_eq(ctl.cfg.properties.minimum_buffers, 160);
    ck_assert_uint_eq(ctl.cfg.properties.log_file_mode, ETL_MODE_FILE_SEQUENTIAL);
    ck_assert_int_eq(ctl.cfg.properties.clock_type, ETL_CLOCK_PERFCOUNTER);
    snprintf(want, sizeof want, "%s/NT-Kernel-Logger.etl", etl_recording_log_dir(r));
    ck_assert_str_eq(ctl.cfg.properties.log_file_name, want);
    ck_assert_uint_eq(ctl.cfg.provider_count, 0);
    ck_assert_uint_eq(ctl.cap.kernel_flags, c->kernel_flags);
    ck_assert_uint_eq(ctl.cap.kernel_flags & (ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_CSWITCH |
                                              ETL_KERNEL_PROFILE),
                      ETL_KERNEL_PROCESS | ETL_KERNEL_THREAD | ETL_KERNEL_CSWITCH | ETL_KERNEL_PROFILE);
    ck_assert_uint_eq(ctl.cap.kernel_stackwalk, ETL_KERNEL_PROFILE);
    ck_assert_uint_eq(ctl.cap.profile_interval_us, 1000);
    ck_assert_ptr_eq(ctl.cfg.hooks, &ctl.hooks);
    ck_assert_ptr_eq(ctl.hooks.arg, &ctl.cap);
    ck_assert_ptr_nonnull(ctl.hooks.start);
    etl_recording_controller_free(&ctl);
    ck_assert_int_eq(etl_recording_controller_config(r, 1, c, memory, &ctl), ETL_FAILED);
    etl_recording_controller_free(&ctl);
    etl_recording_remove(r, NULL);
    etl_recording_close(r);

    /* Memory mode: buffering, no file; 3% of the memory in 1 MB buffers. */
    ck_assert_ptr_nonnull(p = etl_wprp_find(w, "CPU.Light", "Memory"));
    ck_assert_int_eq(etl_recording_new(&r, "cpu", "memory", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_controller_config(r, 0, &p->collectors[0], memory, &ctl), ETL_OK);
    ck_assert_uint_eq(ctl.cfg.properties.log_file_mode, ETL_MODE_BUFFERING);
    ck_assert_ptr_null(ctl.cfg.properties.log_file_name);
    ck_assert_uint_eq(ctl.cfg.properties.minimum_buffers, (uint32_t)(memory * 3 / 100 / (1024 * 1024)));
    etl_recording_controller_free(&ctl);
    etl_recording_close(r);
    etl_wprp_free(w);
}
END_TEST

START_TEST(event_collector_config)
{
    etl_recording_controller ctl;
    const etl_wprp_profile *p;
    etl_recording *r;
    char err[1024];
    etl_wprp *w;

    p = two(&w);
    ck_assert_int_eq(etl_recording_new(&r, "ev", "file", p->id, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_add_collectors(r, p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_recording_controller_config(r, 0, &p->collectors[0], 0, &ctl), ETL_OK);
    ck_assert_str_eq(ctl.cfg.properties.logger_name, "rec test a");
    ck_assert_uint_eq(ctl.cfg.properties.buffer_size_kb, 64);
    ck_assert_uint_eq(ctl.cfg.properties.minimum_buffers, 4);
    ck_assert_uint_eq(ctl.cfg.provider_count, 1);
    ck_assert_uint_eq(ctl.cfg.providers[0].level, 4);
    ck_assert_uint_eq(ctl.cfg.providers[0].keywords, 0x10);
    ck_assert_int_eq(ctl.cfg.providers[0].stack, 1);
    ck_assert_uint_eq(ctl.cap.kernel_flags, 0);
    etl_recording_controller_free(&ctl);
    etl_recording_remove(r, NULL);
    etl_recording_close(r);
    etl_wprp_free(w);
}
END_TEST

/* A launcher that starts the first controller and fails the second. */
struct launched {
    unsigned n;
    char names[4][64];
};

static int launch(void *arg, etl_recording_controller *ctl)
{
    struct launched *l = arg;
    snprintf(l->names[l->n], sizeof l->names[0], "%s", ctl->cfg.properties.logger_name);
    return l->n++ == 0 ? 0 : -1;
}

START_TEST(failed_start_undone)
{
    struct launched l = { 0 };
    etl_recording_callbacks cb = { .launch = launch, .arg = &l };
    etl_recording *r;
    char err[2048], dir[600];
    etl_wprp *w;
    const etl_wprp_profile *p = two(&w);
    int found;

    ck_assert_int_eq(etl_recording_start("undo", p, "file", &cb, err, sizeof err), ETL_FAILED);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.names[0], "rec test a");
    ck_assert_str_eq(l.names[1], "rec test b");
    ck_assert_msg(strstr(err, "recording undo not started: stopped the 1 session it had started"), "%s", err);
    snprintf(dir, sizeof dir, "%s/undo.recording", rundir);
    ck_assert_int_eq(access(dir, F_OK), -1);
    ck_assert_int_eq(etl_recording_open(&r, "undo", &found, err, sizeof err), ETL_OK);
    ck_assert_int_eq(found, ETL_RECORDING_NONE);
    etl_recording_close(r);
    /* No launcher: refused before anything. */
    cb.launch = NULL;
    ck_assert_int_eq(etl_recording_start("undo", p, "file", &cb, err, sizeof err), ETL_FAILED);
    ck_assert_int_eq(access(dir, F_OK), -1);
    etl_wprp_free(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recording");
    TCase *tc = tcase_create("recording");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, state_round_trip);
    tcase_add_test(tc, damaged_states);
    tcase_add_test(tc, claim_twice);
    tcase_add_test(tc, file_mode_log_dir);
    tcase_add_test(tc, hostile_log_dir);
    tcase_add_test(tc, unfinished_start_log_dir);
    tcase_add_test(tc, builtin_collector_config);
    tcase_add_test(tc, event_collector_config);
    tcase_add_test(tc, failed_start_undone);
    suite_add_tcase(s, tc);
    return check_run(s);
}
