/* SPDX-License-Identifier: MIT */
/* Unit tests of the SQLite loader (load/): a synthetic kernel trace loaded, its rows checked;
   refusals and failed appends leave nothing. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check_run.h"
#include "etl.h"
#include "kstory.h"

static char dir[64], story[128], db[128];

static void setup(void)
{
    strcpy(dir, "/tmp/check_load-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(story, sizeof story, "%s/story.etl", dir);
    snprintf(db, sizeof db, "%s/out.db", dir);
    ck_assert_int_eq(kstory_write(story), 0);
}

static void teardown(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[sizeof dir + 260];

    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* Files in the directory besides the trace: a new database must leave no temporary one. */
static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

/* The integer result of one query, or INT64_MIN for NULL. */
static int64_t query(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    int64_t v = -12345;

    ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_type(s, 0) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

/* Every row of a query, columns joined by '|' and rows ended by '\n' (NULL: empty), as the
   sqlite3 shell prints them; to free(). */
static char *rows(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    size_t n = 0, cap = 4096;
    char *out = malloc(cap);

    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(h));
    while (sqlite3_step(s) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(s); c++) {
            const char *v = (const char *)sqlite3_column_text(s, c);
            size_t len = v ? strlen(v) : 0;
            while (n + len + 2 >= cap) ck_assert_ptr_nonnull(out = realloc(out, cap *= 2));
            memcpy(out + n, v ? v : "", len);
            n += len;
            out[n++] = c + 1 < sqlite3_column_count(s) ? '|' : '\n';
            out[n] = '\0';
        }
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    return out;
}

static void rows_are(const char *path, const char *sql, const char *want)
{
    char *got = rows(path, sql);

    ck_assert_msg(strcmp(got, want) == 0, "%s\ngot:\n%swant:\n%s", sql, got, want);
    free(got);
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;

    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return b;
}

struct seen {
    int messages[4];            /* by status: OK, WARN, FAILED, FATAL */
    char last[512];
    int progress, final;
    uint64_t events, done, total;
    int interrupt;
};

static void on_message(void *arg, const etl_sqlite_message *m)
{
    struct seen *s = arg;
    int i = m->status == ETL_OK ? 0 : m->status == ETL_WARN ? 1 : m->status == ETL_FAILED ? 2 : 3;

    s->messages[i]++;
    snprintf(s->last, sizeof s->last, "%s", m->text);
}

static void on_progress(void *arg, const etl_sqlite_progress *p)
{
    struct seen *s = arg;

    s->progress++;
    s->final = p->final;
    s->events = p->events;
    s->done = p->bytes_done;
    s->total = p->bytes_total;
}

static int interrupted(void *arg)
{
    return ((struct seen *)arg)->interrupt;
}

static etl_sqlite_options options(struct seen *s)
{
    etl_sqlite_options o;

    memset(&o, 0, sizeof o);
    memset(s, 0, sizeof *s);
    o.on_message = on_message;
    o.on_progress = on_progress;
    o.interrupted = interrupted;
    o.arg = s;
    return o;
}

/* Loads the trace at path into db (fresh or appended): the commit's status. */
static int load_path(const etl_sqlite_options *o, const char *path)
{
    etl_sqlite_loader *l;
    int rc;

    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, o), ETL_OK);
    ck_assert_int_eq(etl_sqlite_loader_add(l, path), ETL_OK);
    ck_assert_uint_eq(etl_sqlite_loader_inputs(l), 1);
    rc = etl_sqlite_loader_commit(l);
    etl_sqlite_loader_close(l);
    return rc;
}

/* Loads the story into db (fresh or appended): the commit's status. */
static int load(const etl_sqlite_options *o)
{
    return load_path(o, story);
}

START_TEST(schema_text)
{
    const char *s = etl_sqlite_schema();
    sqlite3 *h;

    ck_assert_ptr_eq(strstr(s, "-- etl2sqlite schema, version 2 "), s);
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE disk_io ("));
    ck_assert_ptr_nonnull(strstr(s, "CREATE INDEX IF NOT EXISTS threads_by_tid"));
    ck_assert_ptr_nonnull(strstr(s, "CREATE VIEW threads_view AS"));
    ck_assert_int_eq(ETL_SQLITE_SCHEMA_VERSION, 2);
    /* Runs as it is. */
    ck_assert_int_eq(sqlite3_open(":memory:", &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, s, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}
END_TEST

START_TEST(load_story)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(files_in_dir(), 2); /* the trace and the database: no temporary file */
    ck_assert_int_eq(s.messages[1] + s.messages[2] + s.messages[3], 0);
    ck_assert_int_eq(s.final, 1);
    ck_assert_uint_eq(s.events, KS_ALL_EVENTS);
    ck_assert_uint_eq(s.done, s.total);
    ck_assert_int_eq(query(db, "SELECT value FROM meta WHERE key = 'schema_version'"), 2);
    ck_assert_int_eq(query(db, "PRAGMA user_version"), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM traces WHERE trace = 1 AND events = 22 AND logger_name = 'NT Kernel Logger'"), 1);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events"), KS_ALL_EVENTS);
    /* events are numbered in time order: the story's event +n is event n + 3 */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events WHERE ts - 2000000 + 3 = event"), KS_EVENTS);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM processes"), 5);
    /* runs: pid 1000's Start and End, then its DCEnd (app2.exe: the pid used again, its Start
       not in the trace); one for each other pid */
    ck_assert_int_eq(query(db, "SELECT count(DISTINCT run) FROM processes"), 4);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM processes WHERE pid = 1000 AND run = 4"), 2);
    ck_assert_int_eq(query(db, "SELECT run FROM processes WHERE pid = 1000 AND name = 'Process/DCEnd'"), 21);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM threads"), 3);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM threads WHERE thread_name = 'worker'"), 1);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM cswitches"), 2);
    /* syscalls: the thread of the last CSwitch on the processor */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM syscalls"), 3);
    ck_assert_int_eq(query(db, "SELECT tid FROM syscalls WHERE event = 7"), INT64_MIN);
    ck_assert_int_eq(query(db, "SELECT tid FROM syscalls WHERE event = 10"), 4001);
    ck_assert_int_eq(query(db, "SELECT tid FROM syscalls WHERE event = 11"), 0);
    ck_assert_int_eq(query(db, "SELECT nt_status FROM syscalls WHERE event = 11"), 0xC0000034);
    /* disk_io: each completion with its issue */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM disk_io"), 4);
    ck_assert_int_eq(query(db, "SELECT init_event FROM disk_io WHERE event = 14"), 12);
    ck_assert_int_eq(query(db, "SELECT d.init_time_ns = e.time_ns FROM disk_io d JOIN events e ON e.event = d.init_event "
                               "WHERE d.event = 14"), 1);
    ck_assert_int_eq(query(db, "SELECT init_event FROM disk_io WHERE event = 15"), INT64_MIN);
    ck_assert_int_eq(query(db, "SELECT init_event FROM disk_io WHERE event = 16"), INT64_MIN);
    ck_assert_int_eq(query(db, "SELECT init_event FROM disk_io WHERE event = 18"), 17);
    ck_assert_int_eq(query(db, "SELECT transfer_size FROM disk_io WHERE event = 18"), 8192);
    ck_assert_int_eq(query(db, "SELECT response_time_ns FROM disk_io WHERE event = 14"), 25000000);
    ck_assert_int_eq(query(db, "SELECT issuing_tid FROM disk_io WHERE event = 14"), 4001);
}
END_TEST

/* The views name processes by the rule etl_name_map follows: for every event's time, the same name. */
START_TEST(views_and_name_map)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    etl_name_map *m = etl_name_map_new();
    etl_reader *r = NULL;
    sqlite3 *h;
    sqlite3_stmt *st;
    etl_event ev;
    int rc, rows = 0;

    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(etl_reader_open_path(&r, story, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) ck_assert_int_eq(etl_name_map_add(m, &ev), ETL_OK);
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h,
        "SELECT e.ts, q.pid, coalesce("
        "  (SELECT p.image_file_name FROM processes p WHERE p.trace = e.trace AND p.pid = q.pid"
        "   AND p.time_ns <= e.time_ns ORDER BY p.time_ns DESC LIMIT 1),"
        "  (SELECT p.image_file_name FROM processes p WHERE p.trace = e.trace AND p.pid = q.pid"
        "   AND p.time_ns > e.time_ns ORDER BY p.time_ns LIMIT 1))"
        " FROM events e, (SELECT 4 AS pid UNION SELECT 1000 UNION SELECT 2000 UNION SELECT 7) q",
        -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *view = (const char *)sqlite3_column_text(st, 2);
        const char *map = etl_name_map_process(m, (uint32_t)sqlite3_column_int(st, 1), sqlite3_column_int64(st, 0));
        if (!view) ck_assert_ptr_null(map);
        else ck_assert_str_eq(map, view);
        rows++;
    }
    ck_assert_int_eq(rows, 4 * KS_ALL_EVENTS);
    sqlite3_finalize(st);
    /* threads_view names the program its process ran while the thread lived */
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT process_name FROM threads_view WHERE tid = 4001", -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), etl_name_map_process(m, 1000, KS_T0 + 2));
    sqlite3_finalize(st);
    sqlite3_close(h);
    etl_name_map_free(m);
}
END_TEST

/* The exec story (tests/kstory.h): each image a pid ran is a row of processes_view with its own
   command line and time range, and threads, context switches, system calls and samples name
   the image in force at the event's time. Times are in the story's ticks (100 ns) from +0. */
#define T0 "(SELECT time_ns - (ts - 2000000) * 100 FROM events WHERE trace = 1 ORDER BY event LIMIT 1)"

START_TEST(exec_story_views)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    char path[sizeof dir + 16];

    snprintf(path, sizeof path, "%s/exec.etl", dir);
    ck_assert_int_eq(kstory_exec_write(path), 0);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events WHERE trace = 1"), KSX_EVENTS + 2);
    rows_are(db, "SELECT pid, image_file_name, command_line, parent_pid, (start_ns - " T0 ") / 100, (end_ns - " T0 ") / 100,"
                 " exit_status FROM processes_view ORDER BY pid, start_ns",
             "2990|etlrecord|" KSX_REC "|1|||\n"
             "3000|etlrecord|" KSX_REC "|2990|1|6|\n"
             "3000|sh|" KSX_SH "|2990|6|8|\n"
             "3000|demo|" KSX_DEMO "|2990|8|22|3\n"
             "3002|demo|" KSX_DEMO "|3000|14|17|\n"
             "3002|dd|" KSX_DD "|3000|17|21|0\n");
    rows_are(db, "SELECT tid, pid, process_name, (start_ns - " T0 ") / 100, (end_ns - " T0 ") / 100 FROM threads_view"
                 " ORDER BY tid, start_ns",
             "3000|3000|etlrecord|2|6\n"
             "3000|3000|sh|6|8\n"
             "3000|3000|demo|8|22\n"
             "3001|3000|demo|13|20\n"
             "3002|3002|demo|15|17\n"
             "3002|3002|dd|17|21\n");
    rows_are(db, "SELECT (time_ns - " T0 ") / 100, old_tid, old_pid, old_process, new_tid, new_pid, new_process"
                 " FROM cswitches_view ORDER BY event",
             "3|0|||3000|3000|etlrecord\n"
             "9|3000|3000|demo|0||\n"
             "10|0|||3000|3000|demo\n"
             "16|0|||3002|3002|demo\n");
    rows_are(db, "SELECT (time_ns - " T0 ") / 100, name, tid, pid, process_name FROM syscalls_view ORDER BY event",
             "4|PerfInfo/SysClEnter|3000|3000|etlrecord\n"
             "7|PerfInfo/SysClEnter|3000|3000|sh\n"
             "11|PerfInfo/SysClEnter|3000|3000|demo\n"
             "18|PerfInfo/SysClEnter|3002|3002|dd\n"
             "19|PerfInfo/SysClExit|3002|3002|dd\n");
    rows_are(db, "SELECT (time_ns - " T0 ") / 100, tid, pid, process_name FROM samples_view ORDER BY event",
             "5|3000|3000|etlrecord\n"
             "12|3000|3000|demo\n");
}
END_TEST

/* The views and etl_name_map name the exec story's processes alike at every event's time. */
START_TEST(exec_story_name_map)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    char path[sizeof dir + 16];
    etl_name_map *m = etl_name_map_new();
    etl_reader *r = NULL;
    etl_event ev;
    sqlite3 *h;
    sqlite3_stmt *st;
    int rc, n = 0;

    snprintf(path, sizeof path, "%s/exec.etl", dir);
    ck_assert_int_eq(kstory_exec_write(path), 0);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) ck_assert_int_eq(etl_name_map_add(m, &ev), ETL_OK);
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h,
        "SELECT e.ts, v.pid, v.process_name FROM syscalls_view v JOIN events e USING (event)"
        " UNION ALL SELECT e.ts, v.new_pid, v.new_process FROM cswitches_view v JOIN events e USING (event) WHERE v.new_pid"
        " UNION ALL SELECT e.ts, v.old_pid, v.old_process FROM cswitches_view v JOIN events e USING (event) WHERE v.old_pid"
        " UNION ALL SELECT e.ts, v.pid, v.process_name FROM samples_view v JOIN events e USING (event)",
        -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *map = etl_name_map_process(m, (uint32_t)sqlite3_column_int(st, 1), sqlite3_column_int64(st, 0));
        ck_assert_ptr_nonnull(map);
        ck_assert_str_eq(map, (const char *)sqlite3_column_text(st, 2));
        n++;
    }
    ck_assert_int_eq(n, 5 + 3 + 1 + 2);
    sqlite3_finalize(st);
    sqlite3_close(h);
    etl_name_map_free(m);
}
END_TEST

START_TEST(append_numbers_on)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    ck_assert_int_eq(load(&o), ETL_OK);
    o.append = 1;
    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(files_in_dir(), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM traces"), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events"), 2 * KS_ALL_EVENTS);
    ck_assert_int_eq(query(db, "SELECT min(event) FROM events WHERE trace = 2"), KS_ALL_EVENTS + 1);
    ck_assert_int_eq(query(db, "SELECT init_event FROM disk_io WHERE event = 40"), 39);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM providers"), query(db, "SELECT count(DISTINCT provider) FROM events"));
}
END_TEST

/* A failed append (here interrupted once every row is in) leaves the database as it was. */
START_TEST(failed_append_changes_nothing)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    size_t n0, n1;
    char *before, *after;

    ck_assert_int_eq(load(&o), ETL_OK);
    before = slurp(db, &n0);
    o = options(&s);
    o.append = 1;
    s.interrupt = 1;
    {
        etl_sqlite_loader *l;
        ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_OK);
        ck_assert_int_eq(etl_sqlite_loader_add(l, story), ETL_OK);
        ck_assert_int_eq(etl_sqlite_loader_commit(l), ETL_FATAL);
        ck_assert_str_eq(etl_sqlite_loader_error(l), "interrupted; nothing was written");
        ck_assert_int_eq(etl_sqlite_loader_commit(l), ETL_FATAL); /* once */
        etl_sqlite_loader_close(l);
    }
    ck_assert_int_eq(s.messages[3], 2);
    after = slurp(db, &n1);
    ck_assert_uint_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    ck_assert_int_eq(files_in_dir(), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events"), KS_ALL_EVENTS);
    free(before);
    free(after);
}
END_TEST

START_TEST(interrupted_new_leaves_nothing)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    s.interrupt = 1;
    ck_assert_int_eq(load(&o), ETL_FATAL);
    ck_assert_int_eq(files_in_dir(), 1);
    ck_assert_str_eq(s.last, "interrupted; nothing was written");
}
END_TEST

START_TEST(refusals)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    etl_sqlite_loader *l;
    sqlite3 *h;
    size_t n0, n1;
    char *before, *after;

    /* an input that cannot be read: a failure, the loader goes on without it */
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_OK);
    ck_assert_int_eq(etl_sqlite_loader_add(l, "/nonexistent/x.etl"), ETL_FAILED);
    ck_assert_int_eq(s.messages[2], 1);
    ck_assert_ptr_nonnull(strstr(etl_sqlite_loader_error(l), "/nonexistent/x.etl"));
    ck_assert_uint_eq(etl_sqlite_loader_inputs(l), 0);
    ck_assert_int_eq(etl_sqlite_loader_commit(l), ETL_FATAL); /* nothing to load */
    etl_sqlite_loader_close(l);
    ck_assert_int_eq(files_in_dir(), 1);
    /* append: no database */
    o.append = 1;
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_sqlite_loader_error(l), "no such database"));
    etl_sqlite_loader_close(l);
    /* an existing file without append or replace */
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    o.append = 0;
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_sqlite_loader_error(l), "exists"));
    etl_sqlite_loader_close(l);
    /* appending to a database the loader did not write: nothing added */
    before = slurp(db, &n0);
    o.append = 1;
    ck_assert_int_eq(load(&o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(s.last, "not a database etl2sqlite wrote"));
    after = slurp(db, &n1);
    ck_assert_uint_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    ck_assert_int_eq(files_in_dir(), 2);
    free(before);
    free(after);
    /* replace: the story instead */
    o.append = 0;
    o.replace = 1;
    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events"), KS_ALL_EVENTS);
    /* a database of an older schema: refused by its version, nothing added */
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE meta SET value = '1' WHERE key = 'schema_version'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    before = slurp(db, &n0);
    o.replace = 0;
    o.append = 1;
    ck_assert_int_eq(load(&o), ETL_FATAL);
    ck_assert_msg(strstr(s.last, "written in schema version 1, and this etl2sqlite writes version 2") != NULL, "%s", s.last);
    after = slurp(db, &n1);
    ck_assert_uint_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    free(before);
    free(after);
}
END_TEST

START_TEST(damaged_input_warns)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    size_t n;
    char *b = slurp(story, &n);
    FILE *f;

    /* the last buffer cut short: loaded in part, the damage recorded */
    f = fopen(story, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n - 100, f), n - 100);
    fclose(f);
    free(b);
    ck_assert_int_eq(load(&o), ETL_WARN);
    ck_assert_int_ge(s.messages[1], 1);
    ck_assert_int_ge(query(db, "SELECT count(*) FROM lost WHERE kind = 'damage'"), 1);
    ck_assert_int_eq(query(db, "SELECT warnings > 0 FROM traces"), 1);
}
END_TEST

START_TEST(no_payload_and_verbose)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    o.no_payload = 1;
    o.verbose = 1;
    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events WHERE payload IS NULL"), KS_ALL_EVENTS);
    ck_assert_int_eq(s.messages[0], 4); /* the phases and the processor times */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("sqlite");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, schema_text);
    tcase_add_test(tc, load_story);
    tcase_add_test(tc, views_and_name_map);
    tcase_add_test(tc, exec_story_views);
    tcase_add_test(tc, exec_story_name_map);
    tcase_add_test(tc, append_numbers_on);
    tcase_add_test(tc, failed_append_changes_nothing);
    tcase_add_test(tc, interrupted_new_leaves_nothing);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, damaged_input_warns);
    tcase_add_test(tc, no_payload_and_verbose);
    suite_add_tcase(s, tc);
    return check_run(s);
}
