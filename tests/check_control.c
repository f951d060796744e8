/* SPDX-License-Identifier: MIT */
/*
 * The session control protocol (engine/control.c): a controller served in a thread of the test
 * and clients asking it (query, flush, update, unknown requests, stop), a real-time consumer
 * receiving the stream through etl_reader_open_session, no session and orphaned sessions, and a
 * client that asks while the controller holds the name but does not listen yet.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "engine/engine.h"
#include "engine/engine.h"
#include "etl.h"

static const etl_guid prov = { 0x5eed0099, 0xabcd, 0x4ef0, { 1, 2, 3, 4, 5, 6, 7, 8 } };

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* A name of this test process, so that runs side by side do not meet. */
static const char *name_of(const char *what)
{
    static char buf[8][64];
    static unsigned n;
    char *b = buf[n++ % 8];

    snprintf(b, 64, "Control-%s-%ld", what, (long)getpid());
    return b;
}

/* A log file of this test process, absolute, into buf (4096 bytes). */
static const char *file_of(char *buf, const char *what)
{
    char cwd[2048];

    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(buf, 4096, "%s/check_control-%s-%ld.etl", cwd, what, (long)getpid());
    return buf;
}

/* A controller, started (unless slow_ms: then in the thread too, its start hook waiting that
   long before the socket listens) and served in a thread until done. */
struct served {
    etl_controller_config cfg;
    etl_controller_hooks hooks;
    etl_controller *c;
    long slow_ms;
    atomic_int done, started;
    int start_rc, serve_rc;
    pthread_t t;
};

static int served_done(void *arg)
{
    return atomic_load(&((struct served *)arg)->done);
}

static int slow_start(void *arg, etl_session *s, char *err, size_t size)
{
    struct served *sv = arg;

    (void)s, (void)err, (void)size;
    atomic_store(&sv->started, 1);
    sleep_ms(sv->slow_ms);
    return ETL_OK;
}

static void slow_describe(void *arg, char *out, size_t size)
{
    (void)arg;
    snprintf(out, size, "Hooked 1\n");
}

static void *serve_thread(void *arg)
{
    struct served *sv = arg;

    if (sv->slow_ms) {
        sv->start_rc = etl_controller_start(&sv->c, &sv->cfg, NULL);
        if (sv->start_rc != ETL_OK) return NULL;
    }
    sv->serve_rc = etl_controller_serve(sv->c, served_done, sv, -1);
    return NULL;
}

static void served_init(struct served *sv, const char *name, uint32_t mode, long slow_ms)
{
    memset(sv, 0, sizeof *sv);
    sv->cfg.properties.logger_name = name;
    sv->cfg.properties.log_file_mode = mode;
    sv->cfg.properties.buffer_size_kb = 64;
    sv->slow_ms = slow_ms;
    if (slow_ms) {
        sv->hooks.start = slow_start;
        sv->hooks.describe = slow_describe;
        sv->hooks.arg = sv;
        sv->cfg.hooks = &sv->hooks;
    }
}

static void served_start(struct served *sv)
{
    if (!sv->slow_ms) {
        int orphan = -1;
        ck_assert_msg(etl_controller_start(&sv->c, &sv->cfg, &orphan) == ETL_OK, "start: %s",
                      etl_controller_error(sv->c));
        ck_assert_int_eq(orphan, 0);
    }
    ck_assert_int_eq(pthread_create(&sv->t, NULL, serve_thread, sv), 0);
}

/* Ends the serving thread (if a request did not) and the controller. */
static void served_end(struct served *sv)
{
    atomic_store(&sv->done, 1);
    pthread_join(sv->t, NULL);
    etl_controller_close(sv->c);
}

/* Asks name; the answer's rc, *out the answer (to free). */
static int ask(const char *name, const char *request, etl_control_answer **out)
{
    int rc = etl_control_request(out, name, request);

    ck_assert_ptr_nonnull(*out);
    return rc;
}

START_TEST(test_names)
{
    etl_provider_spec p;
    char err[256];
    uint32_t mode;
    int clock;

    ck_assert_int_eq(etl_provider_spec_parse("5eed0099-abcd-4ef0-0102-030405060708:4:0x10", &p, err, sizeof err), ETL_OK);
    ck_assert(etl_guid_equal(&p.guid, &prov));
    ck_assert_int_eq(p.level, 4);
    ck_assert_uint_eq(p.keywords, 0x10);
    ck_assert_int_eq(etl_provider_spec_parse("etldemo", &p, err, sizeof err), ETL_OK);
    ck_assert_int_eq(p.level, 0);
    ck_assert_int_eq(etl_provider_spec_parse("nosuchprovider", &p, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "provider 'nosuchprovider': not a GUID or a provider name libetl knows");
    ck_assert_int_eq(etl_provider_spec_parse("etldemo:256", &p, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "provider 'etldemo:256': level '256' is not 0 to 255");
    ck_assert_int_eq(etl_provider_spec_parse("etldemo:1:x", &p, err, sizeof err), ETL_FAILED);
    ck_assert_str_eq(err, "provider 'etldemo:1:x': keywords 'x' are not a number (0x10)");

    ck_assert_int_eq(etl_session_mode_from_name("circular", &mode), ETL_OK);
    ck_assert_uint_eq(mode, ETL_MODE_FILE_CIRCULAR);
    ck_assert_int_eq(etl_session_mode_from_name("Circular", &mode), ETL_FAILED);
    ck_assert_str_eq(etl_session_mode_name(ETL_MODE_REAL_TIME | ETL_MODE_FILE_SEQUENTIAL), "sequential+realtime");
    ck_assert_str_eq(etl_session_mode_name(ETL_MODE_BUFFERING), "buffering");
    ck_assert_str_eq(etl_session_mode_name(0x12345), "?");
    ck_assert_int_eq(etl_clock_from_name("cycle", &clock), ETL_OK);
    ck_assert_int_eq(clock, ETL_CLOCK_CPUCYCLE);
    ck_assert_str_eq(etl_clock_name(ETL_CLOCK_SYSTEMTIME), "systemtime");
    ck_assert_int_eq(etl_clock_from_name("tsc", &clock), ETL_FAILED);
}
END_TEST

START_TEST(test_socket_path)
{
    char path[256], err[256], want[4096 + 64], dir[4096];

    ck_assert_int_eq(etl_session_runtime_dir(dir, sizeof dir, err, sizeof err), ETL_OK);
    ck_assert_int_eq(etl_control_socket_path("My-Session", path, sizeof path, err, sizeof err), ETL_OK);
    snprintf(want, sizeof want, "%s/my-session.sock", dir);
    ck_assert_str_eq(path, want);
    errno = 0;
    ck_assert_int_eq(etl_control_socket_path("a/b", path, sizeof path, err, sizeof err), ETL_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_str_eq(err, "'a/b' is not a session name (1 to 200 bytes, no '/' or control characters)");
    ck_assert_int_eq(etl_control_socket_path("x", path, 8, err, sizeof err), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(err, "is too long"));
}
END_TEST

/* The kernel capture's and LBR's hooks: what query says of them; nothing to start or stop
   when neither is asked for. */
START_TEST(test_capture_hooks)
{
    etl_controller_capture cap;
    etl_controller_hooks h;
    char out[256], err[64];

    memset(&cap, 0, sizeof cap);
    etl_controller_capture_hooks(&cap, &h);
    ck_assert_ptr_eq(h.arg, &cap);
    ck_assert_int_eq(h.start(h.arg, NULL, err, sizeof err), ETL_OK);
    h.describe(h.arg, out, sizeof out);
    ck_assert_str_eq(out, "");
    h.stop(h.arg);
    cap.kernel_flags = ETL_KERNEL_PROCESS | ETL_KERNEL_PROFILE;
    cap.kernel_stackwalk = ETL_KERNEL_PROFILE;
    cap.lbr_count = 1;
    cap.lbr_text = "cswitch";
    h.describe(h.arg, out, sizeof out);
    ck_assert_str_eq(out, "LastBranchRecord cswitch\nKernelFlags process,profile\nKernelStackWalk profile\n"
                          "ProfileInterval 1000\n");
    h.describe(h.arg, out, 20); /* cut short, terminated */
    ck_assert_str_eq(out, "LastBranchRecord cs");
}
END_TEST

/* A runtime directory that cannot be made: its error, not "no session". */
START_TEST(test_runtime_dir_error)
{
    etl_control_answer *a;
    etl_reader *r;

    setenv("ETL_RUNTIME_DIR", "/nonexistent-libetl/run", 1);
    ck_assert_int_eq(ask("Any", "query", &a), ETL_FATAL);
    ck_assert_str_eq(etl_control_answer_error(a), "/nonexistent-libetl/run: cannot create the runtime directory: "
                     "No such file or directory");
    etl_control_answer_free(a);
    ck_assert_int_eq(etl_reader_open_session(&r, "Any", NULL), ETL_FATAL);
    ck_assert_str_eq(etl_reader_error(r), "session Any: /nonexistent-libetl/run: cannot create the runtime "
                     "directory: No such file or directory");
    etl_reader_close(r);
}
END_TEST

START_TEST(test_requests)
{
    const char *name = name_of("Req");
    etl_control_answer *a;
    etl_provider_spec spec[2] = { { prov, 5, 0x30, 0 }, { prov, 0, 0, 0 } };
    struct served sv;
    char want[64], file[4096];
    int rc = 0;

    served_init(&sv, name, ETL_MODE_FILE_SEQUENTIAL, 0);
    sv.cfg.properties.log_file_name = file_of(file, "req");
    /* The second with its events' stacks (a profile's Stack="true"), whatever cfg.stackwalk says. */
    ck_assert_int_eq(etl_guid_parse("458d4a63-7cc9-5239-62c4-f8aebbe597ac", &spec[1].guid), ETL_OK);
    spec[1].level = 4;
    spec[1].stack = 1;
    sv.cfg.providers = spec;
    sv.cfg.provider_count = 2;
    served_start(&sv);

    ck_assert_int_eq(ask(name, "query", &a), ETL_OK);
    ck_assert_ptr_null(etl_control_answer_error(a));
    snprintf(want, sizeof want, "LoggerName %s", name);
    ck_assert_str_eq(etl_control_answer_line(a, 0), want);
    snprintf(want, sizeof want, "%ld", (long)getpid());
    ck_assert_str_eq(etl_control_answer_value(a, "ControllerPid"), want);
    ck_assert_str_eq(etl_control_answer_value(a, "LogFileMode"), "sequential");
    ck_assert_str_eq(etl_control_answer_value(a, "LogFileName"), file);
    ck_assert_str_eq(etl_control_answer_value(a, "ClockType"), "perfcounter");
    ck_assert_str_eq(etl_control_answer_value(a, "Provider"), "5eed0099-abcd-4ef0-0102-030405060708 5 0x30");
    ck_assert_ptr_null(etl_control_answer_value(a, "StackWalk"));
    for (unsigned i = 0; i < etl_control_answer_count(a); i++)
        if (strstr(etl_control_answer_line(a, i), "458d4a63")) {
            ck_assert_str_eq(etl_control_answer_line(a, i), "Provider 458d4a63-7cc9-5239-62c4-f8aebbe597ac 4 0x0 stack");
            rc = 1;
        }
    ck_assert_int_eq(rc, 1);
    ck_assert_str_eq(etl_control_answer_value(a, "EventsLost"), "0");
    etl_control_answer_free(a);

    ck_assert_int_eq(ask(name, "flush", &a), ETL_OK);
    etl_control_answer_free(a);
    /* Snapshots are a buffering session's. */
    ck_assert_int_eq(ask(name, "flush /tmp/x.etl", &a), ETL_FAILED);
    ck_assert_str_eq(etl_control_answer_error(a), "-o SNAPSHOT is for buffering sessions; this one writes its file");
    etl_control_answer_free(a);

    rc = ask(name, "update flush-timer 3 provider etldemo:2", &a);
    ck_assert_msg(rc == ETL_OK, "update: %s", etl_control_answer_error(a));
    ck_assert_str_eq(etl_control_answer_value(a, "FlushTimer"), "3");
    ck_assert_uint_eq(etl_control_answer_count(a) > 2, 1);
    etl_control_answer_free(a);
    ck_assert_int_eq(ask(name, "update flush-timer", &a), ETL_FAILED);
    ck_assert_str_eq(etl_control_answer_error(a), "update: 'flush-timer' has no value");
    etl_control_answer_free(a);
    ck_assert_int_eq(ask(name, "dance", &a), ETL_FAILED);
    ck_assert_str_eq(etl_control_answer_error(a), "unknown request 'dance'");
    etl_control_answer_free(a);

    /* stop: the session stopped and the name released before the answer. */
    ck_assert_int_eq(ask(name, "stop", &a), ETL_OK);
    ck_assert_str_eq(etl_control_answer_value(a, "LoggerName"), name);
    ck_assert_str_eq(etl_control_answer_value(a, "EventsLost"), "0");
    ck_assert_int_eq(etl_session_name_held(name), 0);
    etl_control_answer_free(a);
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.serve_rc, 1);
    ck_assert_ptr_null(etl_controller_session(sv.c));
    ck_assert_int_eq(etl_controller_stop(sv.c, &a), ETL_OK); /* stopped already */
    ck_assert_ptr_null(a);
    etl_controller_close(sv.c);

    ck_assert_int_eq(ask(name, "query", &a), ETL_FATAL);
    snprintf(want, sizeof want, "no session %s", name);
    ck_assert_str_eq(etl_control_answer_error(a), want);
    etl_control_answer_free(a);
    unlink(file);
}
END_TEST

/* Stopped by its owner (as etlrecord run does when its command ends): the stop's answer. */
START_TEST(test_owner_stop)
{
    const char *name = name_of("Own");
    etl_control_answer *a;
    etl_controller *c, *again;
    struct served sv;
    char file[4096];

    served_init(&sv, name, ETL_MODE_FILE_SEQUENTIAL, 0);
    sv.cfg.properties.log_file_name = file_of(file, "own");
    ck_assert_int_eq(etl_controller_start(&c, &sv.cfg, NULL), ETL_OK);
    /* The name is taken. */
    ck_assert_int_eq(etl_controller_start(&again, &sv.cfg, NULL), ETL_FAILED);
    ck_assert_ptr_nonnull(strstr(etl_controller_error(again), "is running"));
    etl_controller_close(again);
    ck_assert_int_eq(etl_controller_stop(c, &a), ETL_OK);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(etl_control_answer_value(a, "LogFileName"), file);
    ck_assert_ptr_nonnull(etl_control_answer_value(a, "BuffersWritten"));
    ck_assert_ptr_null(etl_control_answer_error(a));
    etl_control_answer_free(a);
    ck_assert_int_eq(etl_session_name_held(name), 0);
    etl_controller_close(c);
    unlink(file);
}
END_TEST

START_TEST(test_no_session)
{
    const char *name = name_of("None");
    etl_control_answer *a;
    etl_reader *r;
    char want[128];

    ck_assert_int_eq(ask(name, "query", &a), ETL_FATAL);
    snprintf(want, sizeof want, "no session %s", name);
    ck_assert_str_eq(etl_control_answer_error(a), want);
    etl_control_answer_free(a);
    ck_assert_int_eq(etl_reader_open_session(&r, name, NULL), ETL_FATAL);
    snprintf(want, sizeof want, "session %s: no such session is running", name);
    ck_assert_str_eq(etl_reader_error(r), want);
    etl_reader_close(r);
    ck_assert_int_eq(etl_reader_open_session(&r, "a/b", NULL), ETL_FATAL);
    ck_assert_str_eq(etl_reader_error(r), "session a/b: not a session name (1 to 200 bytes, no '/' or control characters)");
    etl_reader_close(r);
}
END_TEST

/* A controller that died: its lock file free, its socket there with nobody listening. */
START_TEST(test_orphaned)
{
    const char *name = name_of("Orphan");
    char path[108], err[256], want[256], lock[128];
    struct sockaddr_un addr;
    etl_control_answer *a;
    int fd;

    ck_assert_int_eq(etl_control_socket_path(name, path, sizeof path, err, sizeof err), ETL_OK);
    snprintf(lock, sizeof lock, "%.*s.lock", (int)strlen(path) - 5, path);
    fd = open(lock, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_gt(dprintf(fd, "999999999 %s\n", name), 0);
    close(fd);
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    close(fd);
    ck_assert_int_eq(ask(name, "query", &a), ETL_FATAL);
    snprintf(want, sizeof want, "session %s is orphaned (its controller died); the next 'etlrecord start %s' cleans it up",
             name, name);
    ck_assert_str_eq(etl_control_answer_error(a), want);
    etl_control_answer_free(a);
    unlink(path);
    unlink(lock);
}
END_TEST

/* The name is claimed before the session starts, the socket listened on after: a client that
   comes in between (it saw the name in etlrecord list) waits for the socket. */
START_TEST(test_claimed_not_listening)
{
    const char *name = name_of("Slow");
    etl_control_answer *a;
    struct served sv;

    served_init(&sv, name, ETL_MODE_BUFFERING, 500);
    served_start(&sv);
    while (!atomic_load(&sv.started)) sleep_ms(1);
    ck_assert_int_eq(ask(name, "query", &a), ETL_OK);
    ck_assert_str_eq(etl_control_answer_value(a, "LoggerName"), name);
    ck_assert_str_eq(etl_control_answer_value(a, "Hooked"), "1");
    etl_control_answer_free(a);
    ck_assert_int_eq(ask(name, "stop", &a), ETL_OK);
    etl_control_answer_free(a);
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.start_rc, ETL_OK);
    ck_assert_int_eq(sv.serve_rc, 1);
    etl_controller_close(sv.c);
}
END_TEST

/* ... but not for ever: a controller that holds the name and never listens is said to. */
START_TEST(test_claimed_never_listening)
{
    const char *name = name_of("Stuck");
    etl_control_answer *a;
    etl_reader *r;
    struct served sv;
    char want[256];

    etl_control_wait_ms = 200;
    served_init(&sv, name, ETL_MODE_REAL_TIME, 1500);
    served_start(&sv);
    while (!atomic_load(&sv.started)) sleep_ms(1);
    ck_assert_int_eq(ask(name, "query", &a), ETL_FATAL);
    snprintf(want, sizeof want, "session %s: its controller (pid %ld) holds the name but has not listened on its "
             "control socket for 200 ms (it is still starting the session, or stuck)", name, (long)getpid());
    ck_assert_str_eq(etl_control_answer_error(a), want);
    etl_control_answer_free(a);
    ck_assert_int_eq(etl_reader_open_session(&r, name, NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_reader_error(r), "has not listened on its control socket for 200 ms"));
    etl_reader_close(r);
    served_end(&sv);
    etl_control_wait_ms = 5000;
}
END_TEST

/* A real-time consumer through etl_reader_open_session, served by the controller's thread. */
struct stopper {
    const char *name;
    int rc;
};

static void *stop_thread(void *arg)
{
    struct stopper *st = arg;
    etl_control_answer *a;

    sleep_ms(100);
    st->rc = etl_control_request(&a, st->name, "stop");
    etl_control_answer_free(a);
    return NULL;
}

START_TEST(test_consumer)
{
    const char *name = name_of("Rt");
    struct stopper stopper = { name, -1 };
    etl_control_answer *a;
    etl_reader *r, *second;
    pthread_t t;
    struct served sv;
    etl_event ev;
    etl_event_descriptor d = { 7, 0, 0, 4, 0, 0, 0 };
    long got = 0;
    int rc;

    served_init(&sv, name, ETL_MODE_REAL_TIME, 0);
    served_start(&sv);
    ck_assert_msg(etl_reader_open_session(&r, name, NULL) == ETL_OK, "%s", etl_reader_error(r));
    ck_assert_int_eq(etl_reader_open_session(&second, name, NULL), ETL_FATAL);
    ck_assert_ptr_nonnull(strstr(etl_reader_error(second), "already has a real-time consumer"));
    etl_reader_close(second);
    for (uint64_t i = 0; i < 1000; i++) {
        etl_data data = { &i, sizeof i };
        ck_assert_int_eq(etl_session_write_event(etl_controller_session(sv.c), &prov, &d, NULL, &data, 1), ETL_OK);
    }
    ck_assert_int_eq(pthread_create(&t, NULL, stop_thread, &stopper), 0);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN)
        if (etl_guid_equal(&ev.provider, &prov)) got++;
    ck_assert_msg(rc == ETL_EOF, "%s", etl_reader_error(r));
    ck_assert_int_eq(got, 1000);
    etl_reader_close(r);
    pthread_join(t, NULL);
    ck_assert_int_eq(stopper.rc, ETL_OK);
    pthread_join(sv.t, NULL);
    ck_assert_int_eq(sv.serve_rc, 1);
    etl_controller_close(sv.c);
    ck_assert_int_eq(ask(name, "query", &a), ETL_FATAL);
    etl_control_answer_free(a);
}
END_TEST

/* A consumer of a session not in real-time mode is refused, by the controller's message. */
START_TEST(test_consumer_refused)
{
    const char *name = name_of("NotRt");
    struct served sv;
    etl_reader *r;
    char want[128];

    served_init(&sv, name, ETL_MODE_BUFFERING, 0);
    served_start(&sv);
    ck_assert_int_eq(etl_reader_open_session(&r, name, NULL), ETL_FATAL);
    snprintf(want, sizeof want, "session %s is not in real-time mode", name);
    ck_assert_str_eq(etl_reader_error(r), want);
    etl_reader_close(r);
    served_end(&sv);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("control");
    TCase *tc = tcase_create("control");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_socket_path);
    tcase_add_test(tc, test_capture_hooks);
    tcase_add_test(tc, test_runtime_dir_error);
    tcase_add_test(tc, test_requests);
    tcase_add_test(tc, test_owner_stop);
    tcase_add_test(tc, test_no_session);
    tcase_add_test(tc, test_orphaned);
    tcase_add_test(tc, test_claimed_not_listening);
    tcase_add_test(tc, test_claimed_never_listening);
    tcase_add_test(tc, test_consumer);
    tcase_add_test(tc, test_consumer_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
