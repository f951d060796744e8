/* SPDX-License-Identifier: MIT */
/* Unit tests of the SQLite loader (load/): a synthetic kernel trace loaded, its rows checked;
   every event's fields and the views of event names against the decoder; what has no schema or
   does not fit it in lost; refusals and failed appends leave nothing. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check_run.h"
#include "etl.h"
#include "fnstory.h"
#include "kstory.h"
#include "synth.h"
#include "testutil.h"

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

/* The views of the schema itself (CREATE VIEW statements in etl_sqlite_schema()). */
static int64_t schema_views(void)
{
    int64_t n = 0;

    for (const char *p = etl_sqlite_schema(); (p = strstr(p, "CREATE VIEW ")) != NULL; p++) n++;
    return n;
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

    ck_assert_ptr_eq(strstr(s, "-- etl2sqlite schema, version 5 "), s);
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE disk_io ("));
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE event_names ("));
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE event_name_fields ("));
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE event_views ("));
    ck_assert_ptr_nonnull(strstr(s, "CREATE INDEX IF NOT EXISTS threads_by_tid"));
    ck_assert_ptr_nonnull(strstr(s, "CREATE VIEW threads_view AS"));
    ck_assert_int_eq(ETL_SQLITE_SCHEMA_VERSION, 5);
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
    ck_assert_int_eq(query(db, "SELECT value FROM meta WHERE key = 'schema_version'"), 5);
    ck_assert_int_eq(query(db, "PRAGMA user_version"), 5);
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

/* The CPU story (tests/kstory.h): each thread's running intervals on each processor, from one
   context switch to the next on that processor (the last to the trace's last event), and the
   time summed per thread and per program, exact to the nanosecond. A second trace appended
   keeps its own intervals. */
START_TEST(cpu_time_views)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    char path[sizeof dir + 16];

    snprintf(path, sizeof path, "%s/cpu.etl", dir);
    ck_assert_int_eq(kstory_cpu_write(path), 0);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    rows_are(db, "SELECT cpu, tid, pid, process_name, (start_ns - " T0 ") / 100, (end_ns - " T0 ") / 100, ns"
                 " FROM cpu_intervals ORDER BY cpu, start_ns",
             "0|101|100|a.exe|10|30|2000\n"
             "0|201|200|b.exe|30|35|500\n"
             "0|101|100|a.exe|35|60|2500\n"
             "0|0|0|Idle|60|100|4000\n"
             "1|102|100|a.exe|12|52|4000\n"
             "1|0|0|Idle|52|70|1800\n"
             "1|201|200|b.exe|70|100|3000\n");
    /* the interval's switches: the one that began it, the one that ended it (NULL: the trace's end) */
    rows_are(db, "SELECT i.start_event = c.event, i.end_event IS NULL FROM cpu_intervals i"
                 " JOIN cswitches c ON c.event = i.start_event AND c.new_tid = i.tid ORDER BY i.cpu, i.start_ns",
             "1|0\n1|0\n1|0\n1|1\n1|0\n1|0\n1|1\n");
    rows_are(db, "SELECT tid, pid, process_name, cpu_ns, intervals FROM cpu_time_by_thread ORDER BY tid",
             "0|0|Idle|5800|2\n"
             "101|100|a.exe|4500|2\n"
             "102|100|a.exe|4000|1\n"
             "201|200|b.exe|3500|2\n");
    rows_are(db, "SELECT pid, process_name, threads, cpu_ns, intervals FROM cpu_time_by_process ORDER BY cpu_ns DESC",
             "100|a.exe|2|8500|3\n"
             "0|Idle|1|5800|2\n"
             "200|b.exe|1|3500|2\n");
    /* Appended, the same trace again: each trace's processors are its own. */
    o.append = 1;
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    rows_are(db, "SELECT trace, count(*), sum(ns) FROM cpu_intervals GROUP BY trace ORDER BY trace",
             "1|7|17800\n2|7|17800\n");
    rows_are(db, "SELECT trace, tid, cpu_ns FROM cpu_time_by_thread WHERE tid = 101 ORDER BY trace",
             "1|101|4500\n2|101|4500\n");
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
    ck_assert_msg(strstr(s.last, "written in schema version 1, and this etl2sqlite writes version 5") != NULL, "%s", s.last);
    after = slurp(db, &n1);
    ck_assert_uint_eq(n0, n1);
    ck_assert(memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    /* nor one of version 2 (issue 17's), which has no fields, 3 (issue 18's), which has no
       functions or processor time, nor 4, without system call names and isr_dpc */
    for (int v = 2; v <= 4; v++) {
        char sql[128], want[128];
        snprintf(sql, sizeof sql, "UPDATE meta SET value = '%d' WHERE key = 'schema_version'", v);
        snprintf(want, sizeof want, "written in schema version %d, and this etl2sqlite writes version 5; nothing was added", v);
        ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(h);
        ck_assert_int_eq(load(&o), ETL_FATAL);
        ck_assert_msg(strstr(s.last, want) != NULL, "%s", s.last);
    }
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
    ck_assert_int_eq(s.messages[0], 6); /* the phases, the processor times, what the symbols found */
    /* without symbols, no line about them */
    o = options(&s);
    o.no_payload = o.verbose = o.no_symbols = 1;
    o.replace = 1;
    ck_assert_int_eq(load(&o), ETL_OK);
    ck_assert_int_eq(s.messages[0], 5);
}
END_TEST

/* ------------------------------------------------------------------ fields, names, views */

/* A sample's path (testdata/samples). */
static const char *sample(const char *name)
{
    static char path[512];
    const char *data = getenv("ETL_TESTDATA");

    snprintf(path, sizeof path, "%s/samples/%s", data ? data : "testdata", name);
    return path;
}

/* A decoder of the shipped manifests alone (ETL_MANIFESTS: libetl/manifests). */
static etl_decoder *shipped_decoder(void)
{
    etl_decoder_options o = { ETL_DECODER_NO_DEFAULTS, NULL, NULL };
    const char *shipped = getenv("ETL_MANIFESTS");
    etl_decoder *d;

    ck_assert_ptr_nonnull(shipped);
    ck_assert_int_eq(etl_decoder_open(&d, &o), ETL_OK);
    ck_assert_int_eq(etl_decoder_add_manifest(d, shipped), ETL_OK);
    return d;
}

/* Loads path with the shipped manifests given as options->manifests: the commit's status. */
static int load_with_manifests(etl_sqlite_options *o, const char *path)
{
    static const char *manifests[1];

    manifests[0] = getenv("ETL_MANIFESTS");
    ck_assert_ptr_nonnull(manifests[0]);
    o->manifests = manifests;
    o->nmanifests = 1;
    return load_path(o, path);
}

/* Every event's fields column and name are those the decoder gives it, event by event (the one
   input's events in the reader's time order are the database's). */
static void fields_are_the_decoders(const char *path, int min_decoded)
{
    etl_decoder *d = shipped_decoder();
    etl_reader *r = NULL;
    sqlite3 *h;
    sqlite3_stmt *st;
    etl_event ev;
    etl_decoded_event de;
    char json[65536];
    int rc, n = 0, decoded = 0;

    ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
    /* as the loader does: the trace's EventSource manifests first */
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) ck_assert_int_ne(etl_decoder_learn(d, &ev), ETL_FATAL);
    ck_assert_int_eq(etl_reader_rewind(r), ETL_OK);
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT e.ts, n.name, e.fields FROM events e LEFT JOIN event_names n"
                                           " ON n.name_id = e.name ORDER BY e.event", -1, &st, NULL), SQLITE_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        int k = etl_decoder_decode(d, &ev, &de);
        const char *name = NULL, *fields = NULL;
        ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
        ck_assert_int_eq(sqlite3_column_int64(st, 0), ev.timestamp);
        name = (const char *)sqlite3_column_text(st, 1);
        fields = (const char *)sqlite3_column_text(st, 2);
        if (k == 0) {
            ck_assert_ptr_null(name);
            ck_assert_ptr_null(fields);
        } else {
            ck_assert_uint_lt(etl_decoded_format_json(&de, json, sizeof json), sizeof json);
            ck_assert_ptr_nonnull(name);
            ck_assert_ptr_nonnull(fields);
            ck_assert_str_eq(name, de.event_name);
            ck_assert_str_eq(fields, json);
            decoded++;
        }
        n++;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    ck_assert_int_ge(decoded, min_decoded);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events"), n);
    sqlite3_finalize(st);
    sqlite3_close(h);
    etl_reader_close(r);
    etl_decoder_close(d);
}

START_TEST(fields_tracelogging_sample)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    ck_assert_int_eq(load_with_manifests(&o, sample("perfview_primitive-types.etl")), ETL_OK);
    fields_are_the_decoders(sample("perfview_primitive-types.etl"), 7);
    /* the TraceLogging provider is named from its events */
    rows_are(db, "SELECT DISTINCT p.name FROM events e JOIN event_names n ON n.name_id = e.name"
                 " JOIN providers p ON p.provider = n.provider WHERE n.source = 'tracelogging'", "solar_system\n");
    rows_are(db, "SELECT view FROM event_views WHERE name = 'solar_system/PrimitiveTypesTest' ORDER BY view",
             "PrimitiveTypesTest\nsolar_system/PrimitiveTypesTest\n");
    rows_are(db, "SELECT string_type, int16_type, boolean_type FROM PrimitiveTypesTest ORDER BY event LIMIT 2",
             "Mercury|-51|0\nVenus|-95|1\n");
}
END_TEST

START_TEST(fields_dotnet_sample)
{
    struct seen s;
    etl_sqlite_options o = options(&s);

    ck_assert_int_eq(load_with_manifests(&o, sample("perfview_gcevents_PerfViewData.etl")), ETL_OK);
    fields_are_the_decoders(sample("perfview_gcevents_PerfViewData.etl"), 50);
    rows_are(db, "SELECT name FROM providers WHERE guid = 'e13c0d23-ccbc-4e12-931b-d9cc2eee27e4'",
             "Microsoft-Windows-DotNETRuntime\n");
}
END_TEST

/* SELECT Reason, count(*) FROM "GC/Start": what the events' Reason fields hold, by the decoder. */
START_TEST(gc_start_view)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    etl_decoder *d = shipped_decoder();
    etl_reader *r = NULL;
    etl_event ev;
    etl_decoded_event de;
    char reasons[8][64], value[64], want[1024] = "", columns[1024] = "event|trace|time_ns|cpu|pid|tid|";
    int counts[8] = { 0 }, nreasons = 0, rc, starts = 0;
    char *got;

    ck_assert_int_eq(load_with_manifests(&o, sample("perfview_gcevents_PerfViewData.etl")), ETL_OK);
    ck_assert_int_eq(etl_reader_open_path(&r, sample("perfview_gcevents_PerfViewData.etl"), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (etl_decoder_decode(d, &ev, &de) != 1 || strcmp(de.event_name, "Microsoft-Windows-DotNETRuntime/GC/Start") != 0)
            continue;
        if (!starts++) {
            for (uint32_t k = 0; k < de.field_count; k = de.fields[k].end) {
                strcat(columns, de.fields[k].name);
                strcat(columns, "|");
            }
        }
        for (uint32_t k = 0; k < de.field_count; k = de.fields[k].end) {
            int i;
            if (strcmp(de.fields[k].name, "Reason") != 0) continue;
            etl_field_format(&de.fields[k], value, sizeof value); /* as the view shows a string: unquoted */
            for (i = 0; i < nreasons && strcmp(reasons[i], value) != 0; i++) {}
            if (i == nreasons) strcpy(reasons[nreasons++], value);
            counts[i]++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_ge(starts, 2);
    etl_reader_close(r);
    etl_decoder_close(d);
    for (int i = 0; i < nreasons; i++) snprintf(want + strlen(want), sizeof want - strlen(want), "%s|%d\n", reasons[i], counts[i]);
    rows_are(db, "SELECT Reason, count(*) FROM \"GC/Start\" GROUP BY 1 ORDER BY 2 DESC, 1", want);
    rows_are(db, "SELECT Reason, count(*) FROM \"Microsoft-Windows-DotNETRuntime/GC/Start\" GROUP BY 1 ORDER BY 2 DESC, 1",
             want);
    /* the columns: the head, then each field */
    columns[strlen(columns) - 1] = '\n';
    got = rows(db, "SELECT group_concat(name, '|') FROM pragma_table_info('GC/Start')");
    ck_assert_str_eq(got, columns);
    free(got);
    /* a HexInt field is a number in the view, "0x..." text in the JSON */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM \"GC/AllocationTick\" a JOIN events e USING (event)"
                               " WHERE printf('0x%x', a.AllocationAmount) = json_extract(e.fields, '$.AllocationAmount')"),
                     query(db, "SELECT count(*) FROM \"GC/AllocationTick\""));
    ck_assert_int_gt(query(db, "SELECT count(*) FROM \"GC/AllocationTick\""), 0);
    ck_assert_int_eq(query(db, "SELECT typeof(Address) = 'integer' AND Address < 0 FROM \"GC/AllocationTick\" LIMIT 1"), 0);
}
END_TEST

static int line_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* What has no schema is counted per provider in lost, as the decoder counts it. */
START_TEST(undecoded_per_provider)
{
    static const char *const names[] = { "perfview_gcevents_PerfViewData.etl", "krabsetw_powershell.etl",
                                         "perfview_diaghub.kernel.1.etl" };

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct seen s;
        etl_sqlite_options o = options(&s);
        etl_decoder *d = shipped_decoder();
        etl_reader *r = NULL;
        etl_event ev;
        etl_decoded_event de;
        etl_decoder_provider_stats st;
        char want[4096] = "", guid[ETL_GUID_STRING_SIZE], *got;
        int rc;

        o.replace = 1;
        ck_assert_int_eq(load_with_manifests(&o, sample(names[i])), ETL_OK);
        ck_assert_int_eq(etl_reader_open_path(&r, sample(names[i]), NULL), ETL_OK);
        while ((rc = etl_reader_next(r, &ev)) == ETL_OK) etl_decoder_decode(d, &ev, &de);
        ck_assert_int_eq(rc, ETL_EOF);
        etl_reader_close(r);
        {
            char lines[64][64];
            unsigned nl = 0;
            for (unsigned k = 0; k < etl_decoder_provider_count(d); k++) {
                ck_assert_int_eq(etl_decoder_provider_stats_get(d, k, &st), ETL_OK);
                if (st.undecoded && nl < 64)
                    snprintf(lines[nl++], sizeof lines[0], "%s|%llu\n", etl_guid_format(&st.provider, guid),
                             (unsigned long long)st.undecoded);
            }
            qsort(lines, nl, sizeof lines[0], line_cmp);
            for (unsigned k = 0; k < nl; k++) strcat(want, lines[k]);
        }
        ck_assert_msg(want[0], "%s has events without a schema", names[i]);
        got = rows(db, "SELECT p.guid, l.count FROM lost l JOIN providers p USING (provider) WHERE l.kind = 'undecoded'"
                       " ORDER BY p.guid");
        ck_assert_msg(strcmp(got, want) == 0, "%s:\ngot:\n%swant:\n%s", names[i], got, want);
        free(got);
        ck_assert_int_eq(query(db, "SELECT count(*) FROM lost WHERE kind <> 'undecoded'"), 0);
        ck_assert_int_eq(query(db, "SELECT sum(count) FROM lost"), query(db, "SELECT count(*) FROM events WHERE fields IS NULL"));
        etl_decoder_close(d);
    }
}
END_TEST

/* An append makes the views again with every field the names have had: Image/Load of a version 0
   trace has 3 fields, of a version 3 one 14. */
START_TEST(append_unions_view_columns)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    char *before, *after;

    ck_assert_int_eq(load_with_manifests(&o, sample("syzygy_log_lib_image_data_32_v0.etl")), ETL_OK);
    before = rows(db, "SELECT group_concat(name, '|') FROM pragma_table_info('Image/Load')");
    ck_assert_str_eq(before, "event|trace|time_ns|cpu|pid|tid|BaseAddress|ModuleSize|ImageFileName\n");
    o = options(&s);
    o.append = 1;
    ck_assert_int_eq(load_with_manifests(&o, sample("perfview_diaghub.kernel.1.etl")), ETL_OK);
    after = rows(db, "SELECT group_concat(name, '|') FROM pragma_table_info('Image/Load')");
    ck_assert_msg(strncmp(after, before, strlen(before) - 1) == 0 && after[strlen(before) - 1] == '|', "%s", after);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM pragma_table_info('Image/Load')"),
                     6 + 3 + query(db, "SELECT count(*) FROM event_name_fields f JOIN event_names n USING (name_id)"
                                       " WHERE n.name = 'Image/Load' AND f.idx >= 3"));
    ck_assert_int_ge(query(db, "SELECT count(*) FROM pragma_table_info('Image/Load')"), 6 + 14);
    /* every Image/Load of both traces, the first trace's without the later fields */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM \"Image/Load\""),
                     query(db, "SELECT count(*) FROM events e JOIN event_names n ON n.name_id = e.name WHERE n.name = 'Image/Load'"));
    ck_assert_int_eq(query(db, "SELECT count(DISTINCT trace) FROM \"Image/Load\""), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM \"Image/Load\" WHERE trace = 1 AND ImageBase IS NOT NULL"), 0);
    ck_assert_int_gt(query(db, "SELECT count(*) FROM \"Image/Load\" WHERE trace = 2 AND ImageBase IS NOT NULL"), 0);
    /* the views of the first load are made again, not twice */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM event_views"),
                     query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'") - schema_views());
    ck_assert_int_eq(query(db, "SELECT count(*) FROM event_views v LEFT JOIN sqlite_master m ON m.name = v.view"
                               " WHERE m.name IS NULL"), 0);
    free(before);
    free(after);
}
END_TEST

/* ------------------------------------------------------------------ functions */

START_TEST(functions_of_samples)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    struct fnstory g;
    char path[sizeof dir + 16], want[4096], fn[4][128], src[4][300], caller_fn[128], caller_src[300], sql[4096];
    uint64_t base = 0x555500000000ull;
    char *with, *without;

    ck_assert_int_eq(fnstory_build(dir, &g), 0);
    /* what addr2line names at each function's middle (and a byte before, for return addresses) */
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(fnstory_addr2line(&g, fnstory_mid(&g, k), fn[k], sizeof fn[k], src[k], sizeof src[k]), 0);
        ck_assert_str_eq(fn[k], g.fn[k].name);
    }
    ck_assert_int_eq(fnstory_addr2line(&g, fnstory_mid(&g, FN_REC) - 1, caller_fn, sizeof caller_fn, caller_src,
                                       sizeof caller_src), 0);
    ck_assert_str_eq(caller_fn, "rec");
    snprintf(path, sizeof path, "%s/fn.etl", dir);
    ck_assert_int_eq(fnstory_write(path, &g, base), 0);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples"), FNSTORY_SAMPLES);
    /* each sample's function is addr2line's, with its offset and source line */
    for (int k = 0; k < 4; k++) {
        const char *colon = strrchr(src[k], ':');
        snprintf(sql, sizeof sql, "SELECT count(*) FROM samples_view WHERE function = '%s' AND function_offset = %llu"
                                  " AND (source = '%.299s' OR source LIKE '%%/%.299s')", fn[k],
                 (unsigned long long)(g.fn[k].size / 2), src[k], src[k]);
        ck_assert_int_eq(query(db, sql), k == 0 ? 3 : k == 1 ? 2 : k == 3 ? 1 : 0);
        ck_assert_ptr_nonnull(colon);
    }
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples WHERE function IS NULL"), 1);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples WHERE function IS NULL AND image IS NULL AND line IS NULL"), 1);
    rows_are(db, "SELECT name, image, image_path = (SELECT file_name FROM images) FROM functions ORDER BY name",
             "hot_a|prog|1\nhot_b|prog|1\nmain|prog|1\nrec|prog|1\n");
    /* frames past the first are return addresses, named by the call a byte before: the one at
       rec's end too */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM stack_frames_view WHERE depth = 1 AND function = 'rec'"
                              " AND (source = '%s' OR source LIKE '%%/%s')", caller_src, caller_src);
    ck_assert_int_eq(query(db, sql), 3);
    ck_assert_int_eq(fnstory_addr2line(&g, g.fn[FN_REC].value + g.fn[FN_REC].size - 1, caller_fn, sizeof caller_fn,
                                       caller_src, sizeof caller_src), 0);
    ck_assert_str_eq(caller_fn, "rec");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM stack_frames_view WHERE depth = 2 AND function = 'rec'"
                              " AND function_offset = %llu AND (source = '%s' OR source LIKE '%%/%s')",
             (unsigned long long)g.fn[FN_REC].size, caller_src, caller_src);
    ck_assert_int_eq(query(db, sql), 3);
    /* top functions: exclusive (the sample's innermost function) and inclusive (on its stack,
       once per sample: rec recurses) */
    rows_are(db, "SELECT name, exclusive, inclusive, exclusive_percent, inclusive_percent FROM top_functions"
                 " ORDER BY inclusive DESC, name",
             "main|1|6|14.29|85.71\nhot_a|3|3|42.86|42.86\nrec|0|3|0.0|42.86\nhot_b|2|2|28.57|28.57\n");
    /* the stacks of a function's samples */
    rows_are(db, "SELECT stack, samples FROM function_stacks WHERE name = 'main' ORDER BY samples DESC",
             "hot_a <- rec <- rec <- main|3\nhot_b <- main|2\nmain|1\n");
    rows_are(db, "SELECT stack, samples FROM function_stacks WHERE name = 'rec'", "hot_a <- rec <- rec <- main|3\n");
    rows_are(db, "SELECT depth, frame FROM sample_stack_frames WHERE sample = (SELECT min(event) FROM samples) ORDER BY depth",
             "0|hot_a\n1|rec\n2|rec\n3|main\n");
    /* Without symbols: the same rows, the function columns NULL and no functions. */
    with = rows(db, "SELECT event, trace, time_ns, cpu, tid, pid, instruction_pointer, count, flags, rank, image,"
                    " image_offset, profile_source FROM samples ORDER BY event");
    ck_assert_uint_lt(strlen(with), sizeof want);
    memcpy(want, with, strlen(with) + 1);
    o = options(&s);
    o.no_symbols = o.replace = 1;
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    without = rows(db, "SELECT event, trace, time_ns, cpu, tid, pid, instruction_pointer, count, flags, rank, image,"
                       " image_offset, profile_source FROM samples ORDER BY event");
    ck_assert_str_eq(without, want);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM functions"), 0);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples WHERE function IS NOT NULL OR line IS NOT NULL"), 0);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM stack_frames WHERE function IS NOT NULL"), 0);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM top_functions"), 0);
    free(with);
    free(without);
    /* Appended with symbols: the functions are the first load's, numbered on. */
    o = options(&s);
    o.replace = 1;
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    o = options(&s);
    o.append = 1;
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM functions"), 4);
    rows_are(db, "SELECT name, exclusive, inclusive FROM top_functions ORDER BY inclusive DESC, name",
             "main|2|12\nhot_a|6|6\nrec|0|6\nhot_b|4|4\n");
}
END_TEST

/* A program no longer at the path the trace recorded is found in a symbol directory
   (symbol_paths, copied by etl_sqlite_loader_open: the caller's array may change after it). */
START_TEST(functions_from_symbol_paths)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    struct fnstory g, moved;
    char path[sizeof dir + 16], sdir[sizeof dir + 16];
    const char *paths[1];
    etl_sqlite_loader *l;

    ck_assert_int_eq(fnstory_build(dir, &g), 0);
    moved = g;
    snprintf(moved.path, sizeof moved.path, "%s/gone/prog", dir);
    snprintf(path, sizeof path, "%s/moved.etl", dir);
    ck_assert_int_eq(fnstory_write(path, &moved, 0x555500000000ull), 0);
    /* without the directory: images and offsets, no functions */
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples WHERE image = 'prog'"), FNSTORY_SAMPLES - 1);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM functions"), 0);
    /* with it */
    snprintf(sdir, sizeof sdir, "%s", dir);
    paths[0] = sdir;
    o = options(&s);
    o.replace = 1;
    o.symbol_paths = paths;
    o.nsymbol_paths = 1;
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_OK);
    strcpy(sdir, "/nonexistent");
    paths[0] = NULL;
    ck_assert_int_eq(etl_sqlite_loader_add(l, path), ETL_OK);
    ck_assert_int_eq(etl_sqlite_loader_commit(l), ETL_OK);
    etl_sqlite_loader_close(l);
    rows_are(db, "SELECT name, exclusive, inclusive FROM top_functions ORDER BY inclusive DESC, name",
             "main|1|6\nhot_a|3|3\nrec|0|3\nhot_b|2|2\n");
}
END_TEST

/* A TraceLogging event (64-bit EVENT_HEADER with PROV_TRAITS and EVENT_SCHEMA_TL items) of
   provider g named prov: event, then its fields as (name, in type) pairs, n of them. */
static uint32_t tl_record(uint8_t *out, int64_t ts, const etl_guid *g, const char *prov, const char *event,
                          const char *const *names, const uint8_t *types, unsigned n, const void *payload, uint32_t len)
{
    uint8_t traits[64], meta[256], ext[512];
    uint32_t t = 2, m = 2, e = 0;

    memcpy(traits + t, prov, strlen(prov) + 1);
    t += (uint32_t)strlen(prov) + 1;
    traits[0] = (uint8_t)t, traits[1] = 0;
    meta[m++] = 0; /* no tags */
    memcpy(meta + m, event, strlen(event) + 1);
    m += (uint32_t)strlen(event) + 1;
    for (unsigned i = 0; i < n; i++) {
        memcpy(meta + m, names[i], strlen(names[i]) + 1);
        m += (uint32_t)strlen(names[i]) + 1;
        meta[m++] = types[i];
    }
    meta[0] = (uint8_t)m, meta[1] = 0;
    e += synth_ext_item(ext + e, ETL_EXT_PROV_TRAITS, traits, (uint16_t)t, 1);
    e += synth_ext_item(ext + e, ETL_EXT_EVENT_SCHEMA_TL, meta, (uint16_t)m, 0);
    return synth_event_header(out, 1, ts, g, 1, 0, 4, 0, 0, 0, 1000, 2000, ext, e, payload, len);
}

/* Writes the records (each rec[i] of size len[i], on processor 0) as a trace at path. */
static void write_trace(const char *path, uint8_t *const *rec, const uint32_t *len, unsigned n)
{
    struct synth_options so;
    struct synth *sy;
    uint8_t *file;
    size_t size;
    FILE *f;

    memset(&so, 0, sizeof so);
    sy = synth_new(&so);
    ck_assert_ptr_nonnull(sy);
    for (unsigned i = 0; i < n; i++) ck_assert_int_eq(synth_add(sy, 0, rec[i], len[i]), 0);
    file = synth_finish(sy, &size);
    ck_assert_ptr_nonnull(file);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(file, 1, size, f), size);
    fclose(f);
    free(file);
}

static const etl_guid prov_a = { 0xa1a1a1a1, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const etl_guid prov_b = { 0xb2b2b2b2, 0x1111, 0x2222, { 1, 2, 3, 4, 5, 6, 7, 8 } };

/* A payload that does not fit its schema: the event is loaded with the fields that fit, and lost
   names it by its offset with the decoder's message; past DECODE_FAILED_LISTED (100) of a trace,
   the rest are counted. Never a crash, and the events after it decode. */
START_TEST(payload_not_fitting_schema)
{
    enum { SHORT = 105, N = SHORT + 2 };
    static const char *const names[] = { "Count", "Total" };
    static const uint8_t types[] = { ETL_IN_UINT32, ETL_IN_UINT64 };
    struct seen s;
    etl_sqlite_options o = options(&s);
    uint8_t *rec[N], good[12] = { 7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0 };
    uint32_t len[N];
    char path[sizeof dir + 16], want[64];
    etl_reader *r = NULL;
    etl_event ev;
    int64_t offsets[N];
    int rc, nshort = 0;

    for (unsigned i = 0; i < N; i++) {
        rec[i] = malloc(1024);
        ck_assert_ptr_nonnull(rec[i]);
        /* the first and the last whole (12 bytes); between them 105 of 6 bytes: Total does not fit */
        len[i] = tl_record(rec[i], 1000010 + i, &prov_a, "ProvA", "Tally", names, types, 2, good,
                           i == 0 || i == N - 1 ? 12 : 6);
    }
    snprintf(path, sizeof path, "%s/short.etl", dir);
    write_trace(path, rec, len, N);
    for (unsigned i = 0; i < N; i++) free(rec[i]);
    ck_assert_int_eq(etl_reader_open_path(&r, path, NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK)
        if (ev.kind == ETL_KIND_EVENT && ev.payload_len == 6) offsets[nshort++] = (int64_t)(ev.buffer_offset + ev.record_offset);
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    ck_assert_int_eq(nshort, SHORT);

    ck_assert_int_eq(load_path(&o, path), ETL_WARN);
    /* each short event: its fields as far as they fit, its name */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events WHERE fields = '{\"Count\":7}'"), SHORT);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM events WHERE fields = '{\"Count\":7,\"Total\":9}'"), 2);
    ck_assert_int_eq(query(db, "SELECT count(*) FROM \"ProvA/Tally\""), N);
    rows_are(db, "SELECT Count, Total FROM Tally ORDER BY event LIMIT 2", "7|9\n7|\n");
    /* the first 100 listed with their offsets and the decoder's message, the rest counted */
    ck_assert_int_eq(query(db, "SELECT count(*) FROM lost WHERE kind = 'decode_failed' AND count = 1"), 100);
    for (int i = 0; i < 100; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT offset FROM lost WHERE kind = 'decode_failed' AND count = 1 ORDER BY rowid"
                                  " LIMIT 1 OFFSET %d", i);
        ck_assert_int_eq(query(db, sql), offsets[i]);
    }
    snprintf(want, sizeof want, "%% offset %lld %%Total%%", (long long)offsets[0]);
    {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM lost WHERE kind = 'decode_failed' AND message LIKE '%s'", want);
        ck_assert_int_eq(query(db, sql), 1);
    }
    rows_are(db, "SELECT p.guid, l.count, l.offset FROM lost l JOIN providers p USING (provider)"
                 " WHERE l.kind = 'decode_failed' AND l.count > 1",
             "a1a1a1a1-1111-2222-0102-030405060708|5|\n");
    ck_assert_int_eq(query(db, "SELECT warnings FROM traces"), SHORT);
    /* said: each listed one, then the rest at once */
    ck_assert_int_eq(s.messages[1], 101);
    ck_assert_msg(strstr(s.last, "5 more events whose payload does not fit their schema") != NULL, "%s", s.last);
}
END_TEST

/* Views by name: the full name always; 'Task/Opcode' (TraceLogging: the event's name) only when
   no other event has it and no table or view does. */
START_TEST(view_names)
{
    static const char *const x[] = { "x" }, *const y[] = { "y" }, *const pid[] = { "pid", "PID", "" };
    static const uint8_t u32[] = { ETL_IN_UINT32, ETL_IN_UINT32, ETL_IN_UINT32 };
    struct seen s;
    etl_sqlite_options o = options(&s);
    uint8_t *rec[7], payload[12] = { 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0 };
    uint32_t len[7];
    char path[sizeof dir + 16];

    for (unsigned i = 0; i < 7; i++) ck_assert_ptr_nonnull(rec[i] = malloc(1024));
    len[0] = tl_record(rec[0], 1000010, &prov_a, "ProvA", "Ping", x, u32, 1, payload, 4);
    len[1] = tl_record(rec[1], 1000011, &prov_b, "ProvB", "Ping", y, u32, 1, payload, 4);
    len[2] = tl_record(rec[2], 1000012, &prov_a, "ProvA", "events", x, u32, 1, payload, 4);
    len[3] = tl_record(rec[3], 1000013, &prov_a, "ProvA", "Solo", pid, u32, 3, payload, 12);
    len[4] = tl_record(rec[4], 1000014, &prov_b, "ProvB", "solo", y, u32, 1, payload, 4);
    len[5] = tl_record(rec[5], 1000015, &prov_a, "ProvA", "Unique", y, u32, 1, payload, 4);
    len[6] = tl_record(rec[6], 1000016, &prov_b, "ProvB", "Samples_View", y, u32, 1, payload, 4);
    snprintf(path, sizeof path, "%s/names.etl", dir);
    write_trace(path, rec, len, 7);
    for (unsigned i = 0; i < 7; i++) free(rec[i]);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    /* Ping: two providers have it; events: a table; Samples_View: a view of the schema's (which
       a new database gets after its events); Solo and solo: one name to SQL */
    rows_are(db, "SELECT view, name FROM event_views WHERE view NOT LIKE 'EventTrace/%' ORDER BY view",
             "ProvA/Ping|ProvA/Ping\n"
             "ProvA/Solo|ProvA/Solo\n"
             "ProvA/Unique|ProvA/Unique\n"
             "ProvA/events|ProvA/events\n"
             "ProvB/Ping|ProvB/Ping\n"
             "ProvB/Samples_View|ProvB/Samples_View\n"
             "ProvB/solo|ProvB/solo\n"
             "Unique|ProvA/Unique\n");
    ck_assert_int_eq(query(db, "SELECT count(*) FROM samples_view"), 0);
    /* a field named as a column before it (as SQLite compares names) gets a suffix; a field
       without a name is "_" */
    rows_are(db, "SELECT group_concat(name, '|') FROM pragma_table_info('ProvA/Solo')",
             "event|trace|time_ns|cpu|pid|tid|pid_2|PID_3|_\n");
    rows_are(db, "SELECT pid, pid_2, PID_3, _ FROM \"ProvA/Solo\"", "1000|1|2|3\n");
    rows_are(db, "SELECT x FROM \"ProvA/Ping\" UNION ALL SELECT y FROM \"ProvB/Ping\"", "1\n1\n");
}
END_TEST

/* Field names that JSON escapes: the fields column is still the decoder's text, and the view's
   columns find the values (by json_each: SQLite 3.40's JSON paths match a key as escaped). */
START_TEST(field_names_escaped)
{
    static const char *const odd[] = { "q\"uote", "back\\slash", "tab\tname", "plain" };
    static const uint8_t u32[] = { ETL_IN_UINT32, ETL_IN_UINT32, ETL_IN_UINT32, ETL_IN_UINT32 };
    struct seen s;
    etl_sqlite_options o = options(&s);
    uint8_t *rec[1], payload[16] = { 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0 };
    uint32_t len[1];
    char path[sizeof dir + 16];

    ck_assert_ptr_nonnull(rec[0] = malloc(1024));
    len[0] = tl_record(rec[0], 1000010, &prov_a, "ProvA", "Odd", odd, u32, 4, payload, 16);
    snprintf(path, sizeof path, "%s/odd.etl", dir);
    write_trace(path, rec, len, 1);
    free(rec[0]);
    ck_assert_int_eq(load_path(&o, path), ETL_OK);
    fields_are_the_decoders(path, 1);
    rows_are(db, "SELECT fields FROM events WHERE fields LIKE '%plain%'",
             "{\"q\\\"uote\":1,\"back\\\\slash\":2,\"tab\\tname\":3,\"plain\":4}\n");
    rows_are(db, "SELECT \"q\"\"uote\", \"back\\slash\", \"tab\tname\", plain FROM Odd", "1|2|3|4\n");
}
END_TEST

/* --manifest: one that does not load stops the loader at its opening, saying where. */
START_TEST(manifest_option)
{
    struct seen s;
    etl_sqlite_options o = options(&s);
    const char *bad[] = { NULL };
    char path[sizeof dir + 16];
    etl_sqlite_loader *l;
    FILE *f;

    snprintf(path, sizeof path, "%s/bad.man", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("<instrumentationManifest>\n  <instrumentation>\n    <events>\n  </instrumentation>\n", f);
    fclose(f);
    bad[0] = path;
    o.manifests = bad;
    o.nmanifests = 1;
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_FATAL);
    ck_assert_msg(strstr(etl_sqlite_loader_error(l), "bad.man:") != NULL, "%s", etl_sqlite_loader_error(l));
    etl_sqlite_loader_close(l);
    ck_assert_int_eq(s.messages[3], 1);
    ck_assert_int_eq(files_in_dir(), 2); /* the story and the manifest */
    bad[0] = "/nonexistent/x.man";
    ck_assert_int_eq(etl_sqlite_loader_open(&l, db, &o), ETL_FATAL);
    ck_assert_msg(strstr(etl_sqlite_loader_error(l), "/nonexistent/x.man") != NULL, "%s", etl_sqlite_loader_error(l));
    etl_sqlite_loader_close(l);
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
    tcase_add_test(tc, cpu_time_views);
    tcase_add_test(tc, functions_of_samples);
    tcase_add_test(tc, functions_from_symbol_paths);
    tcase_add_test(tc, append_numbers_on);
    tcase_add_test(tc, failed_append_changes_nothing);
    tcase_add_test(tc, interrupted_new_leaves_nothing);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, damaged_input_warns);
    tcase_add_test(tc, no_payload_and_verbose);
    tcase_add_test(tc, fields_tracelogging_sample);
    tcase_add_test(tc, fields_dotnet_sample);
    tcase_add_test(tc, gc_start_view);
    tcase_add_test(tc, undecoded_per_provider);
    tcase_add_test(tc, append_unions_view_columns);
    tcase_add_test(tc, payload_not_fitting_schema);
    tcase_add_test(tc, view_names);
    tcase_add_test(tc, field_names_escaped);
    tcase_add_test(tc, manifest_option);
    suite_add_tcase(s, tc);
    return check_run(s);
}
