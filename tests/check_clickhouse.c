/* SPDX-License-Identifier: MIT */
/* Unit tests of the ClickHouse loader (load/clickhouse.c) against a stand-in HTTP server in the test: what it sends, in which order, and what a refused insert leaves. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "kstory.h"
#include "testutil.h"

/* ---- the stand-in server: answers the loader's queries as ClickHouse would, records them */

#define MAX_REQUESTS 256

struct request {
    char *query;                /* the SQL: the query parameter, else the body */
    unsigned char *body;        /* an INSERT's rows */
    size_t body_len;
};

static struct {
    int listen_fd, port;
    pthread_t thread;
    pthread_mutex_t lock;
    struct request req[MAX_REQUESTS];
    unsigned n;
    const char *fail_table;     /* an INSERT into this table gets a 500 (set before any request) */
    atomic_int stop;
} srv;

static char *url_decode(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n) {
            char hex[3] = { s[i + 1], s[i + 2], 0 };
            *o++ = (char)strtol(hex, NULL, 16);
            i += 2;
        }
        else *o++ = s[i] == '+' ? ' ' : s[i];
    }
    *o = '\0';
    return out;
}

/* Reads exactly n bytes (or to the end). */
static size_t read_full(int fd, unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

static int read_line(int fd, char *line, size_t cap)
{
    size_t n = 0;
    char ch;
    while (n + 1 < cap && read(fd, &ch, 1) == 1) {
        if (ch == '\n') {
            if (n && line[n - 1] == '\r') n--;
            line[n] = '\0';
            return 0;
        }
        line[n++] = ch;
    }
    return -1;
}

static void reply(int fd, int status, const char *text)
{
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
                     status == 200 ? "OK" : "Internal Server Error", strlen(text));
    /* the loader may have gone: no SIGPIPE */
    if (send(fd, head, (size_t)n, MSG_NOSIGNAL) < 0 || send(fd, text, strlen(text), MSG_NOSIGNAL) < 0) return;
}

static void serve(int fd)
{
    char line[65536], *query = NULL;
    size_t length = 0, cap = 0, len = 0;
    int chunked = 0;
    unsigned char *body = NULL;

    if (read_line(fd, line, sizeof line) != 0) return;
    char *q = strstr(line, "query=");
    if (q) {
        size_t n = strcspn(q + 6, "& ");
        query = url_decode(q + 6, n);
    }
    while (read_line(fd, line, sizeof line) == 0 && line[0]) {
        if (strncasecmp(line, "Content-Length:", 15) == 0) length = strtoul(line + 15, NULL, 10);
        if (strncasecmp(line, "Transfer-Encoding: chunked", 26) == 0) chunked = 1;
    }
    if (chunked) {
        for (;;) {
            if (read_line(fd, line, sizeof line) != 0) break;
            size_t k = strtoul(line, NULL, 16);
            if (k == 0) {
                read_line(fd, line, sizeof line);
                break;
            }
            if (len + k > cap) {
                cap = (len + k) * 2;
                body = realloc(body, cap);
            }
            if (read_full(fd, body + len, k) != k) break;
            len += k;
            read_line(fd, line, sizeof line);
        }
    }
    else if (length) {
        body = malloc(length + 1);
        len = read_full(fd, body, length);
        body[len] = 0;
    }
    if (!query) {
        query = strndup(body ? (char *)body : "", len);
        free(body);
        body = NULL;
        len = 0;
    }
    pthread_mutex_lock(&srv.lock);
    if (srv.n < MAX_REQUESTS) srv.req[srv.n++] = (struct request){ query, body, len };
    const char *fail = srv.fail_table;
    pthread_mutex_unlock(&srv.lock);

    char table[128] = "";
    if (strncmp(query, "INSERT INTO `etl`.`", 19) == 0) sscanf(query + 19, "%127[^`]", table);
    if (fail && strncmp(table, fail, strlen(fail)) == 0 && table[strlen(fail)] == '_')
        reply(fd, 500, "Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded\n, e.what() = DB::Exception\n");
    else if (strstr(query, "FROM system.tables")) reply(fd, 200, "1\n");
    else if (strstr(query, "key = 'schema_version'")) reply(fd, 200, "1\n");
    else if (strstr(query, "key = 'cluster'")) reply(fd, 200, "\n");
    else if (strncmp(query, "SELECT count()", 14) == 0) reply(fd, 200, "0\n");
    else if (strncmp(query, "SELECT 0, count()", 17) == 0) {
        /* the rows of a load in each table: every table has some of the failed load (load =),
           none has an earlier load's (load !=: every load here is a first) */
        char answer[1024] = "";
        unsigned tables = 1;
        for (const char *p = query; (p = strstr(p, " UNION ALL ")) != NULL; p++) tables++;
        for (unsigned i = 0; i < tables && strlen(answer) < sizeof answer - 16; i++)
            snprintf(answer + strlen(answer), sizeof answer - strlen(answer), "%u\t%d\n", i, strstr(query, "AND load = ") != NULL);
        reply(fd, 200, answer);
    }
    else reply(fd, 200, "");
}

static void *conn_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    serve(fd);
    close(fd);
    return NULL;
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(srv.listen_fd, NULL, NULL);
        if (fd < 0 || atomic_load(&srv.stop)) {
            if (fd >= 0) close(fd);
            break;
        }
        pthread_t t;
        if (pthread_create(&t, NULL, conn_main, (void *)(intptr_t)fd) == 0) pthread_detach(t);
        else close(fd);
    }
    return NULL;
}

static char story[512], exec_story[512], url[64], staging[256];

static void setup(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;

    memset(&srv, 0, sizeof srv);
    pthread_mutex_init(&srv.lock, NULL);
    srv.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(srv.listen_fd, 0);
    ck_assert_int_eq(bind(srv.listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(srv.listen_fd, 16), 0);
    ck_assert_int_eq(getsockname(srv.listen_fd, (struct sockaddr *)&a, &alen), 0);
    srv.port = ntohs(a.sin_port);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", srv.port);
    ck_assert_int_eq(pthread_create(&srv.thread, NULL, server_main, NULL), 0);
    /* $TMPDIR: a directory of the test's, which the loader must leave empty */
    snprintf(staging, sizeof staging, "%s/check-clickhouse.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(staging));
    setenv("TMPDIR", staging, 1);
    snprintf(story, sizeof story, "%s/../ch-story-%d.etl", staging, (int)getpid());
    snprintf(exec_story, sizeof exec_story, "%s/../ch-exec-%d.etl", staging, (int)getpid());
    ck_assert_int_eq(kstory_write(story), 0);
    ck_assert_int_eq(kstory_exec_write(exec_story), 0);
}

static void teardown(void)
{
    /* wake accept() with a connection of our own */
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons((uint16_t)srv.port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    atomic_store(&srv.stop, 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { /* the thread ends at close anyway */ }
    close(fd);
    pthread_join(srv.thread, NULL);
    close(srv.listen_fd);
    for (unsigned i = 0; i < srv.n; i++) {
        free(srv.req[i].query);
        free(srv.req[i].body);
    }
    unlink(story);
    unlink(exec_story);
    /* nothing is left in $TMPDIR, whatever the load did */
    ck_assert_int_eq(rmdir(staging), 0);
}

/* The requests whose SQL begins with prefix, in the order the server got them: indexes into srv.req. */
static unsigned find(const char *prefix, unsigned *idx, unsigned cap)
{
    unsigned n = 0;
    for (unsigned i = 0; i < srv.n && n < cap; i++)
        if (strncmp(srv.req[i].query, prefix, strlen(prefix)) == 0) idx[n++] = i;
    return n;
}

static etl_clickhouse *open_loader(const char *machine)
{
    etl_clickhouse_options o = { 0 };
    etl_clickhouse *c;
    o.machine = machine;
    o.read.no_symbols = 1;
    ck_assert_int_eq(etl_clickhouse_open(&c, url, &o), ETL_OK);
    return c;
}

/* ---- the tests */

START_TEST(commits_with_traces_last)
{
    etl_clickhouse *c = open_loader("build-07");
    unsigned idx[64], n;
    const struct request *r;
    char text[40];
    uint64_t load = 0;

    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_OK);
    ck_assert_str_eq(etl_clickhouse_machine(c), "build-07");
    n = find("INSERT INTO `etl`.`", idx, 64);
    /* every table that has rows, one INSERT each (the trace's rows are small: one chunk a table) */
    ck_assert_uint_ge(n, 8);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++) ck_assert_str_ne(srv.req[idx[i]].query, srv.req[idx[j]].query);
    for (const char *const *t = (const char *const[]){ "events", "processes", "threads", "cswitches", "cpu_intervals", "event_names", NULL };
         *t; t++) {
        char q[96];
        snprintf(q, sizeof q, "INSERT INTO `etl`.`%s_local` (machine, trace, load, day, `", *t);
        ck_assert_uint_eq(find(q, (unsigned[1]){ 0 }, 1), 1);
    }
    r = &srv.req[idx[n - 1]];
    /* the columns named, the table's: the traces row's last, committed_ns */
    {
        static const char head[] = "INSERT INTO `etl`.`traces_local` (machine, trace, load, day, `";
        ck_assert_int_eq(strncmp(r->query, head, sizeof head - 1), 0);
    }
    ck_assert_ptr_nonnull(strstr(r->query, ", `committed_ns`) FORMAT RowBinary"));
    /* the traces row: machine, the UUID as two little-endian halves, load, day */
    ck_assert_uint_ge(r->body_len, 1 + 8 + 16 + 8 + 2);
    ck_assert_uint_eq(r->body[0], 8);
    ck_assert_int_eq(memcmp(r->body + 1, "build-07", 8), 0);
    for (int i = 0; i < 8; i++) snprintf(text + 2 * i, 3, "%02x", r->body[9 + 7 - i]);
    for (int i = 0; i < 8; i++) snprintf(text + 16 + 2 * i, 3, "%02x", r->body[9 + 15 - i]);
    const char *id = etl_clickhouse_trace_id(c);
    char plain[33];
    size_t k = 0;
    for (const char *p = id; *p; p++) if (*p != '-') plain[k++] = *p;
    plain[k] = '\0';
    ck_assert_str_eq(text, plain);
    ck_assert_int_eq(id[14], '8'); /* version 8 */
    for (int i = 0; i < 8; i++) load |= (uint64_t)r->body[25 + i] << (8 * i);
    ck_assert(load != 0);
    /* a first load asks for no deletion */
    ck_assert_uint_eq(find("ALTER TABLE", idx, 64), 0);
    etl_clickhouse_close(c);
}
END_TEST

/* A table whose rows fill several chunks goes in two INSERTs: its first chunk alone (a refusal
   is known then), then the rest in one, streamed (a chunked body) while the trace is read:
   diaghub's events rows are about 4 MB in RowBinary. */
START_TEST(large_table_streams_in_one_insert)
{
    etl_clickhouse *c = open_loader("m");
    unsigned idx[64], n;

    ck_assert_int_eq(etl_clickhouse_load(c, testdata_path("samples/perfview_diaghub.kernel.1.etl")), ETL_OK);
    n = find("INSERT INTO `etl`.`events_local` (", idx, 64);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_le(srv.req[idx[0]].body_len, (1u << 20) + 65536);
    ck_assert_uint_gt(srv.req[idx[1]].body_len, 2u << 20);
    /* the traces row last, after every other INSERT */
    n = find("INSERT INTO `etl`.`", idx, 64);
    ck_assert_ptr_nonnull(strstr(srv.req[idx[n - 1]].query, "INSERT INTO `etl`.`traces_local` ("));
    etl_clickhouse_close(c);
}
END_TEST

START_TEST(refused_insert_commits_nothing)
{
    etl_clickhouse *c = open_loader("m");
    unsigned idx[64];

    srv.fail_table = "cswitches";
    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "inserting into cswitches: Code: 241"));
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "Memory limit (for query) exceeded; nothing of this load is visible"));
    ck_assert_ptr_null(strstr(etl_clickhouse_error(c), "e.what()"));
    ck_assert_uint_eq(find("INSERT INTO `etl`.`traces_local`", idx, 64), 0); /* never committed */
    /* on one server the rows that went in are deleted: one mutation per table that has some (the
       server says every table has), of this load */
    ck_assert_uint_eq(find("ALTER TABLE `etl`.`events_local` DELETE WHERE machine = 'm' AND trace = '", idx, 64), 1);
    ck_assert_ptr_nonnull(strstr(srv.req[idx[0]].query, "AND load = "));
    etl_clickhouse_close(c);
}
END_TEST

START_TEST(trace_id_is_the_trace)
{
    etl_clickhouse *c = open_loader("m");
    char first[40];

    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_OK);
    snprintf(first, sizeof first, "%s", etl_clickhouse_trace_id(c));
    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_OK);
    ck_assert_str_eq(etl_clickhouse_trace_id(c), first);
    ck_assert_int_eq(etl_clickhouse_load(c, exec_story), ETL_OK);
    ck_assert_str_ne(etl_clickhouse_trace_id(c), first);
    etl_clickhouse_close(c);
}
END_TEST

START_TEST(no_machine_name)
{
    etl_clickhouse *c = open_loader(NULL);
    unsigned idx[64];

    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "the trace records no machine name"));
    ck_assert_uint_eq(find("INSERT", idx, 64), 0);
    etl_clickhouse_close(c);
}
END_TEST

START_TEST(server_down)
{
    etl_clickhouse_options o = { 0 };
    etl_clickhouse *c;
    char down[64];

    /* a port nobody listens on: one the system gave, then let go */
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd);
    snprintf(down, sizeof down, "http://127.0.0.1:%d", ntohs(a.sin_port));
    o.machine = "m";
    ck_assert_int_eq(etl_clickhouse_open(&c, down, &o), ETL_OK);
    ck_assert_int_eq(etl_clickhouse_create_schema(c), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), down));
    ck_assert_int_eq(etl_clickhouse_load(c, story), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "nothing of this load is visible"));
    etl_clickhouse_close(c);
}
END_TEST

START_TEST(refusals)
{
    etl_clickhouse_options o = { 0 };
    etl_clickhouse *c;

    ck_assert_int_eq(etl_clickhouse_open(&c, "not a url", &o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "not a URL"));
    etl_clickhouse_close(c);
    o.database = "a;b";
    ck_assert_int_eq(etl_clickhouse_open(&c, url, &o), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_clickhouse_error(c), "a;b: a database or cluster name is letters, digits and _"));
    etl_clickhouse_close(c);
}
END_TEST

/* The schema's columns are the SQLite schema's, and the cluster's objects are there. */
START_TEST(schema_text)
{
    etl_clickhouse_options o = { 0 };
    etl_clickhouse *c;
    char *s;

    ck_assert_int_eq(etl_clickhouse_open(&c, url, &o), ETL_OK);
    s = etl_clickhouse_schema(c);
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE IF NOT EXISTS `etl`.`samples_local` (machine String, trace UUID, load UInt64, "
                                    "day Date, `event` Int64, `time_ns` Int64, `cpu` Int64, `tid` Int64, `pid` Nullable(Int64)"));
    ck_assert_ptr_nonnull(strstr(s, "`line` Nullable(Int64), `process_name` Nullable(String)) ENGINE = MergeTree PARTITION BY day "
                                    "ORDER BY (machine, trace, time_ns, event)"));
    ck_assert_ptr_nonnull(strstr(s, "CREATE VIEW IF NOT EXISTS `etl`.`events` AS SELECT * FROM `etl`.`events_local` WHERE load IN"));
    ck_assert_ptr_null(strstr(s, "Distributed"));
    free(s);
    etl_clickhouse_close(c);
    o.cluster = "fleet";
    o.database = "d";
    ck_assert_int_eq(etl_clickhouse_open(&c, url, &o), ETL_OK);
    s = etl_clickhouse_schema(c);
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE IF NOT EXISTS `d`.`events_rows` AS `d`.`events_local` ENGINE = "
                                    "Distributed(`fleet`, `d`, `events_local`, cityHash64(machine));"));
    ck_assert_ptr_nonnull(strstr(s, "CREATE TABLE IF NOT EXISTS `d`.`events` AS `d`.`events_local` ENGINE = "
                                    "Distributed(`fleet`, `d`, `events_visible`);"));
    free(s);
    etl_clickhouse_close(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clickhouse");
    TCase *tc = tcase_create("loader");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, commits_with_traces_last);
    tcase_add_test(tc, refused_insert_commits_nothing);
    tcase_add_test(tc, large_table_streams_in_one_insert);
    tcase_add_test(tc, trace_id_is_the_trace);
    tcase_add_test(tc, no_machine_name);
    tcase_add_test(tc, server_down);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, schema_text);
    suite_add_tcase(s, tc);
    return check_run(s);
}
