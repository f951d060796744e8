/* SPDX-License-Identifier: MIT */
/* Session kinds and logging modes in the library: one writer per log file, the private logger, one pool without per-processor buffering, append, sizes in KB, the adjustment rules. */
#define _GNU_SOURCE /* fork, waitpid */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "format/format.h"
#include "testutil.h"

static const etl_guid prov = { 0x5eed0002, 0xabcd, 0x4ef0, { 1, 2, 3, 4, 5, 6, 7, 9 } };
static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }
static char *in_dir(const char *name) { return strdup(test_dir_path(name)); }

static etl_session *start(const etl_session_properties *p)
{
    etl_session *s = NULL;
    int rc = etl_session_start(&s, p);

    ck_assert_msg(rc == ETL_OK, "start: %s", etl_session_error(s));
    return s;
}

/* Starting p fails, with a message holding want. */
static void refused(const etl_session_properties *p, const char *want)
{
    etl_session *s = NULL;

    ck_assert_int_eq(etl_session_start(&s, p), ETL_FATAL);
    ck_assert_msg(strstr(etl_session_error(s), want) != NULL, "'%s' lacks '%s'", etl_session_error(s), want);
    etl_session_close(s);
}

static int write_one(etl_session *s, uint16_t id, uint64_t value)
{
    etl_event_descriptor d = { id, 0, 0, 4, 0, 0, 0 };
    etl_data data = { &value, 8 };
    return etl_session_write_event(s, &prov, &d, NULL, &data, 1);
}

/* Our events of a file: their ids, values, processors and process ids, in the order asked. */
struct back {
    long n;
    uint16_t id[100000];
    uint64_t value[100000];
    uint16_t cpu[100000];
    uint32_t pid[100000];
    etl_trace_info info;
};

static struct back *read_back(const char *path, int order)
{
    struct back *b = calloc(1, sizeof *b);
    etl_reader_options o = { .order = order };
    etl_reader *r = NULL;
    etl_event ev;
    int rc = etl_reader_open_path(&r, path, &o);

    ck_assert_msg(rc == ETL_OK, "%s: %s", path, etl_reader_error(r));
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, &prov)) continue;
        ck_assert_int_lt(b->n, 100000);
        b->id[b->n] = ev.id;
        b->value[b->n] = etl_le64(ev.payload);
        b->cpu[b->n] = ev.cpu;
        b->pid[b->n++] = ev.pid;
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_uint_eq(etl_reader_warnings(r), 0);
    b->info = *etl_reader_info(r);
    b->info.logger_name = b->info.log_file_name = "";
    etl_reader_close(r);
    return b;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* A log file has one writer: a second session naming it, through a symbolic link, a hard link
   or another spelling of its path, is refused before the file is touched; once the first
   stops, it may be written again. NEWFILE files are held each in turn. */
START_TEST(one_writer_per_log_file)
{
    etl_session_properties a = { .buffer_size_kb = 4 }, b = { .buffer_size_kb = 4, .engine_flags = 0 };
    char *file, *lnk, *hard, *odd, *pattern;
    etl_session *s, *t;
    off_t before;

    make_dir();
    file = in_dir("one.etl");
    lnk = in_dir("link.etl");
    hard = in_dir("hard.etl");
    pattern = in_dir("part%d.etl");
    odd = malloc(strlen(file) + 8);
    sprintf(odd, "%s", file);
    /* the same file through "dir/./one.etl" */
    strcpy(strrchr(odd, '/'), "/./one.etl");
    a.log_file_name = file;
    s = start(&a);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(write_one(s, 1, (uint64_t)i), ETL_OK);
    ck_assert_int_eq(etl_session_flush(s), ETL_OK);
    before = size_of(file);
    ck_assert_int_gt(before, 4096);
    ck_assert_int_eq(symlink(file, lnk), 0);
    ck_assert_int_eq(link(file, hard), 0);
    const char *names[] = { file, lnk, hard, odd };
    for (unsigned i = 0; i < 4; i++) {
        b.log_file_name = names[i];
        refused(&b, "writes this file; a log file has one writer");
        ck_assert_int_eq(size_of(file), before);
    }
    /* Append mode is refused the same way (and appends nothing). */
    b.log_file_name = lnk;
    b.log_file_mode = ETL_MODE_FILE_APPEND;
    refused(&b, "a log file has one writer");
    ck_assert_int_eq(size_of(file), before);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    struct back *r = read_back(file, ETL_ORDER_FILE);
    ck_assert_int_eq(r->n, 100);
    free(r);
    /* Free again once its writer stopped. */
    b.log_file_name = lnk;
    b.log_file_mode = 0;
    t = start(&b);
    ck_assert_int_eq(etl_session_stop(t, NULL), ETL_OK);
    etl_session_close(t);
    /* NEWFILE: the file being written is held. */
    a.log_file_name = pattern;
    a.log_file_mode = ETL_MODE_FILE_NEWFILE;
    a.maximum_file_size_mb = 1;
    s = start(&a);
    b.log_file_name = pattern;
    b.log_file_mode = ETL_MODE_FILE_NEWFILE;
    b.maximum_file_size_mb = 1;
    refused(&b, "part1.etl");
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    free(file), free(lnk), free(hard), free(odd), free(pattern);
    remove_dir();
}
END_TEST

/* The process-private logger: its file name gets the pid; it is not shared, has no NEWFILE,
   and a controller cannot start one. Another process cannot write into it (a provider in a
   forked child writes nowhere near it) or reach it by name. */
START_TEST(private_logger)
{
    etl_session_properties p = { .buffer_size_kb = 4, .log_file_mode = ETL_MODE_PRIVATE_LOGGER,
                                 .logger_name = "PrivateOne" };
    etl_session_properties got;
    etl_controller_config cfg;
    etl_controller *c = NULL;
    etl_provider *pv = NULL;
    char want[4096], *file;
    etl_session *s;
    pid_t child;
    int status;

    make_dir();
    file = in_dir("private.etl");
    p.log_file_name = file;
    p.engine_flags = ETL_ENGINE_SHARED;
    refused(&p, "a private logger is its process's own");
    p.engine_flags = 0;
    p.log_file_mode = ETL_MODE_PRIVATE_LOGGER | ETL_MODE_FILE_NEWFILE;
    p.maximum_file_size_mb = 1;
    refused(&p, "NEWFILE");
    p.log_file_mode = ETL_MODE_PRIVATE_LOGGER;
    p.maximum_file_size_mb = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.properties = p;
    ck_assert_int_eq(etl_controller_start(&c, &cfg, NULL), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_controller_error(c), "a private logger is controlled only by its own process"));
    etl_controller_close(c);

    /* Another process, started before the session (while this one has no thread): once the
       session runs, its provider of the same GUID reaches no session, and the session's name
       is nobody's there. */
    int go[2], done[2];
    char byte = 0;
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(done), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        etl_control_answer *a = NULL;
        etl_provider *other = NULL;
        etl_event_descriptor od = { 8, 0, 0, 4, 0, 0, 0 };
        uint64_t ov = 2;
        etl_data odata = { &ov, 8 };
        int bad = 0;
        close(go[1]);
        close(done[0]);
        if (read(go[0], &byte, 1) != 1) _exit(10);
        if (etl_provider_register(&other, &prov) != ETL_OK) _exit(11);
        usleep(200000); /* time for a shared session's enable to reach it, were there one */
        for (int i = 0; i < 50; i++) (void)etl_provider_write(other, &od, &odata, 1, 0);
        if (etl_provider_enabled(other, 0, 0)) bad |= 1;
        if (etl_control_request(&a, "PrivateOne", "query") != ETL_FATAL) bad |= 2;
        etl_control_answer_free(a);
        etl_provider_unregister(other);
        if (write(done[1], &byte, 1) != 1) bad |= 4;
        _exit(bad);
    }
    close(go[0]);
    close(done[1]);
    s = start(&p);
    snprintf(want, sizeof want, "%s_%ld", file, (long)getpid());
    etl_session_properties_get(s, &got);
    ck_assert_str_eq(got.log_file_name, want);
    ck_assert_uint_eq(got.log_file_mode & ETL_MODE_PRIVATE_LOGGER, ETL_MODE_PRIVATE_LOGGER);
    ck_assert_int_eq(etl_provider_register(&pv, &prov), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &prov, 0, 0, 0), ETL_OK);
    etl_event_descriptor d = { 7, 0, 0, 4, 0, 0, 0 };
    uint64_t v = 1;
    etl_data data = { &v, 8 };
    ck_assert_int_eq(etl_provider_write(pv, &d, &data, 1, 0), ETL_OK);
    ck_assert_int_eq(write(go[1], &byte, 1), 1);
    ck_assert_int_eq(read(done[0], &byte, 1), 1);
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status 0x%x", status);
    close(go[1]);
    close(done[0]);
#if !defined(__SANITIZE_THREAD__)
    /* A child forked while the session runs forgets it (ThreadSanitizer cannot follow a fork
       of a process with threads: not there). */
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        v = 2;
        for (int i = 0; i < 50; i++) (void)etl_provider_write(pv, &d, &data, 1, 0);
        _exit(etl_provider_enabled(pv, 0, 0) ? 1 : 0);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child: status 0x%x", status);
#endif
    v = 3;
    ck_assert_int_eq(etl_provider_write(pv, &d, &data, 1, 0), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    etl_provider_unregister(pv);
    ck_assert_int_eq(access(file, F_OK), -1); /* the name as given is not written */
    /* (in time order: the two writes may be on two processors, whose buffers the file holds in
       the order they were flushed) */
    struct back *r = read_back(want, ETL_ORDER_TIME);
    ck_assert_int_eq(r->n, 2);
    ck_assert_uint_eq(r->value[0], 1);
    ck_assert_uint_eq(r->value[1], 3);
    ck_assert_uint_eq(r->pid[0], (uint32_t)getpid());
    ck_assert_uint_eq(r->info.log_file_mode & ETL_MODE_PRIVATE_LOGGER, ETL_MODE_PRIVATE_LOGGER);
    free(r);
    free(file);
    remove_dir();
}
END_TEST

struct writer_arg {
    etl_session *s;
    uint16_t id;
    long n, failed; /* failed: events lost */
};

static void *writer(void *arg)
{
    struct writer_arg *w = arg;
    for (long i = 0; i < w->n; i++)
        if (write_one(w->s, w->id, (uint64_t)i) != ETL_OK) w->failed++;
    return NULL;
}

/* Without per-processor buffering: one pool, 2 buffers at least, every buffer on processor 0
   (all the writers share one current buffer), each writer's events in the order it wrote
   them, NumberOfProcessors still the machine's; not shared with other processes. */
START_TEST(no_per_processor_buffering)
{
    etl_session_properties p = { .buffer_size_kb = 4, .log_file_mode = ETL_MODE_NO_PER_PROCESSOR_BUFFERING,
                                 .minimum_buffers = 1, .maximum_buffers = 8192 };
    etl_session_properties got;
    etl_session_stats st;
    struct writer_arg wa[4];
    pthread_t t[4];
    long next[5] = { 0 };
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    char *file;
    etl_session *s;

    make_dir();
    file = in_dir("pool.etl");
    p.log_file_name = file;
    p.engine_flags = ETL_ENGINE_SHARED;
    refused(&p, "without per-processor buffering cannot be shared");
    p.engine_flags = 0;
    s = start(&p);
    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.minimum_buffers, 2);
    ck_assert_uint_eq(got.number_of_processors, (uint32_t)conf);
    etl_session_stats_get(s, &st);
    ck_assert_uint_eq(st.number_of_buffers, 2);
    for (int i = 0; i < 4; i++) {
        wa[i] = (struct writer_arg){ s, (uint16_t)(i + 1), 20000, 0 };
        pthread_create(&t[i], NULL, writer, &wa[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    long failed = wa[0].failed + wa[1].failed + wa[2].failed + wa[3].failed;
    ck_assert_uint_eq(st.events_lost, (uint64_t)failed); /* every loss counted, none silent */
    /* Room for every event (32 MB of buffers): the pool grows into it however far the flush
       thread falls behind, so a loaded machine loses nothing either. */
    ck_assert_int_eq(failed, 0);
    struct back *r = read_back(file, ETL_ORDER_FILE);
    ck_assert_int_eq(r->n, 80000 - failed);
    ck_assert_uint_eq(r->info.number_of_processors, (uint32_t)conf);
    ck_assert_uint_eq(r->info.log_file_mode & ETL_MODE_NO_PER_PROCESSOR_BUFFERING, ETL_MODE_NO_PER_PROCESSOR_BUFFERING);
    for (long i = 0; i < r->n; i++) { /* each writer's events in the order it wrote them */
        ck_assert_uint_eq(r->cpu[i], 0);
        ck_assert_uint_ge(r->value[i], (uint64_t)next[r->id[i]]);
        next[r->id[i]] = (long)r->value[i] + 1;
    }
    free(r);
    free(file);
    remove_dir();
}
END_TEST

/* Append (library): two sessions continue one file; the second's different clock is refused,
   naming the file, and leaves it as it was; MaximumFileSize in KB is stored in KB. */
START_TEST(append_and_kbytes)
{
    etl_session_properties p = { .buffer_size_kb = 4, .log_file_mode = ETL_MODE_FILE_APPEND,
                                 .clock_type = ETL_CLOCK_SYSTEMTIME };
    etl_session_stats st;
    char *file;
    etl_session *s;
    off_t size;

    make_dir();
    file = in_dir("app.etl");
    p.log_file_name = file;
    for (int round = 0; round < 2; round++) {
        s = start(&p);
        for (int i = 0; i < 3000; i++) ck_assert_int_eq(write_one(s, (uint16_t)(round + 1), (uint64_t)i), ETL_OK);
        ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
        etl_session_close(s);
    }
    struct back *r = read_back(file, ETL_ORDER_TIME);
    ck_assert_int_eq(r->n, 6000);
    for (long i = 0; i < r->n; i++) {
        ck_assert_uint_eq(r->id[i], i < 3000 ? 1 : 2);
        ck_assert_uint_eq(r->value[i], (uint64_t)(i % 3000));
    }
    ck_assert_uint_eq(r->info.buffers_written, r->info.buffers);
    free(r);
    size = size_of(file);
    p.clock_type = ETL_CLOCK_PERFCOUNTER;
    refused(&p, "app.etl: cannot append: the file's clock is systemtime");
    p.clock_type = ETL_CLOCK_SYSTEMTIME;
    p.buffer_size_kb = 8;
    refused(&p, "app.etl: cannot append: the file's buffers are 4 KB, this session's 8 KB");
    p.buffer_size_kb = 4;
    p.number_of_processors = 3;
    refused(&p, "NumberOfProcessors");
    ck_assert_int_eq(size_of(file), size);
    p.number_of_processors = 0;
    /* A file cut inside a buffer (a crash, a copy cut short) is not continued. */
    ck_assert_int_eq(truncate(file, size - 100), 0);
    refused(&p, "app.etl: cannot append: the file ends inside a buffer");
    ck_assert_int_eq(size_of(file), size - 100);
    p.log_file_mode = ETL_MODE_FILE_APPEND | ETL_MODE_REAL_TIME;
    refused(&p, "append mode continues a sequential file");
    p.log_file_mode = ETL_MODE_FILE_APPEND | ETL_MODE_FILE_CIRCULAR;
    p.maximum_file_size_mb = 1;
    refused(&p, "append mode continues an uncompressed sequential file");
    /* KB: a circular file of 64 KB, its header saying 64. */
    free(file);
    file = in_dir("kb.etl");
    etl_session_properties k = { .buffer_size_kb = 4, .maximum_file_size_mb = 64,
                                 .log_file_mode = ETL_MODE_FILE_CIRCULAR | ETL_MODE_USE_KBYTES_FOR_SIZE };
    k.log_file_name = file;
    s = start(&k);
    for (int i = 0; i < 20000; i++) ck_assert_int_eq(write_one(s, 1, (uint64_t)i), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_int_le(size_of(file), 64 * 1024);
    r = read_back(file, ETL_ORDER_TIME);
    ck_assert_uint_eq(r->info.maximum_file_size, 64);
    ck_assert_int_gt(r->n, 500); /* 15 slots of 4 KB, about 100 events each */
    ck_assert_uint_eq(r->value[r->n - 1], 19999);
    free(r);
    free(file);
    remove_dir();
}
END_TEST

/* The adjustment rules, as etl_session_properties_get reports what is in effect. */
START_TEST(adjustment_rules)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    etl_session_properties p = { .minimum_buffers = 1, .maximum_buffers = 1, .log_file_mode = ETL_MODE_REAL_TIME };
    etl_session_properties got;
    etl_session *s = start(&p);

    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.minimum_buffers, 2 * (uint32_t)conf); /* 2 per processor */
    ck_assert_uint_eq(got.maximum_buffers, 2 * (uint32_t)conf); /* raised to the minimum */
    ck_assert_uint_eq(got.flush_timer_s, 1);                     /* real time: 0 means 1 s */
    etl_session_close(s);
    etl_session_properties b = { .minimum_buffers = 6, .maximum_buffers = 600, .log_file_mode = ETL_MODE_BUFFERING };
    s = start(&b);
    etl_session_properties_get(s, &got);
    ck_assert_uint_eq(got.maximum_buffers, got.minimum_buffers); /* ignored in buffering mode */
    etl_session_close(s);
    const uint32_t need[] = { ETL_MODE_FILE_CIRCULAR, ETL_MODE_FILE_NEWFILE, ETL_MODE_FILE_PREALLOCATE };
    for (unsigned i = 0; i < 3; i++) {
        etl_session_properties m = { .log_file_mode = need[i], .log_file_name = "/nonexistent/x%d.etl" };
        refused(&m, "need a maximum file size");
    }
}
END_TEST

/* The NT Kernel Logger: a controller takes the name (in any case) only for a kernel session,
   as its hooks say; the name claim makes it the only one. */
START_TEST(nt_kernel_logger)
{
    etl_controller_config cfg;
    etl_controller_hooks kernel = { .kernel = 1 };
    etl_controller *c = NULL, *d = NULL;
    char *file, *other;

    make_dir();
    file = in_dir("ntkl.etl");
    other = in_dir("ntkl2.etl");
    memset(&cfg, 0, sizeof cfg);
    cfg.properties.logger_name = "nt KERNEL logger";
    cfg.properties.log_file_name = file;
    ck_assert_int_eq(etl_controller_start(&c, &cfg, NULL), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_controller_error(c), "the NT Kernel Logger is the kernel session"));
    etl_controller_close(c);
    ck_assert_int_eq(access(file, F_OK), -1); /* refused before anything started */
    cfg.hooks = &kernel;
    ck_assert_msg(etl_controller_start(&c, &cfg, NULL) == ETL_OK, "%s", etl_controller_error(c));
    cfg.properties.logger_name = ETL_KERNEL_LOGGER_NAME;
    cfg.properties.log_file_name = other;
    ck_assert_int_eq(etl_controller_start(&d, &cfg, NULL), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_controller_error(d), "running"));
    etl_controller_close(d);
    etl_controller_close(c);
    free(file);
    free(other);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("logmodes");
    TCase *tc = tcase_create("logmodes");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, one_writer_per_log_file);
    tcase_add_test(tc, private_logger);
    tcase_add_test(tc, no_per_processor_buffering);
    tcase_add_test(tc, append_and_kbytes);
    tcase_add_test(tc, adjustment_rules);
    tcase_add_test(tc, nt_kernel_logger);
    suite_add_tcase(s, tc);
    return check_run(s);
}
