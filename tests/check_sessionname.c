/* SPDX-License-Identifier: MIT */
/* Tests of session names: unique whatever their case, orphans detected and cleaned up, the
   runtime directory private to its user. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "testutil.h"

static char rt[4096];

static void setup(void)
{
    test_dir_create();
    snprintf(rt, sizeof rt, "%s", test_dir_path("runtime"));
    setenv("ETL_RUNTIME_DIR", rt, 1);
}

static void teardown(void)
{
    unsetenv("ETL_RUNTIME_DIR");
    test_dir_remove();
}

static void touch(const char *name)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof path, "%s/%s", rt, name);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static int exists(const char *name)
{
    char path[4200];

    snprintf(path, sizeof path, "%s/%s", rt, name);
    return access(path, F_OK) == 0;
}

struct listed {
    int n;
    char name[8][64];
    long pid[8];
    int orphaned[8];
};

static void collect(void *arg, const char *name, long pid, int orphaned)
{
    struct listed *l = arg;
    if (l->n == 8) return;
    snprintf(l->name[l->n], sizeof l->name[0], "%s", name);
    l->pid[l->n] = pid;
    l->orphaned[l->n++] = orphaned;
}

START_TEST(unique_whatever_the_case)
{
    etl_session_name *a = NULL, *b = NULL;
    char err[512], expect[128];
    int orphan = -1;
    struct stat st;

    ck_assert_int_eq(etl_session_name_claim(&a, "MySession", &orphan, err, sizeof err), ETL_OK);
    ck_assert_int_eq(orphan, 0);
    ck_assert_int_eq(stat(rt, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0700);
    ck_assert_int_eq(stat(etl_session_name_path(a), &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    errno = 0;
    ck_assert_int_eq(etl_session_name_claim(&b, "MYSESSION", NULL, err, sizeof err), ETL_FAILED);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_ptr_null(b);
    snprintf(expect, sizeof expect, "'MySession' is running (pid %ld)", (long)getpid());
    ck_assert_msg(strstr(err, expect) != NULL, "%s", err);
    /* Released, the name is free again, and the session's objects are gone with it. */
    touch("mysession.shm");
    etl_session_name_release(a);
    ck_assert(!exists("mysession.shm"));
    ck_assert(!exists("mysession.lock"));
    ck_assert_int_eq(etl_session_name_claim(&b, "mysession", NULL, err, sizeof err), ETL_OK);
    etl_session_name_release(b);
}
END_TEST

START_TEST(bad_names)
{
    static const char *const bad[] = { "", "a/b", "tab\there", ".", "..", "del\x7f" };
    char longname[ETL_SESSION_NAME_MAX + 2], err[512];
    etl_session_name *n = NULL;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        ck_assert_int_eq(etl_session_name_claim(&n, bad[i], NULL, err, sizeof err), ETL_FAILED);
        ck_assert_int_eq(errno, EINVAL);
        ck_assert(strstr(err, "is not a session name") != NULL);
    }
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_int_eq(etl_session_name_claim(&n, longname, NULL, err, sizeof err), ETL_FAILED);
    longname[ETL_SESSION_NAME_MAX] = '\0';
    ck_assert_int_eq(etl_session_name_claim(&n, longname, NULL, err, sizeof err), ETL_OK);
    etl_session_name_release(n);
    ck_assert_int_eq(etl_session_name_claim(&n, "NT Kernel Logger", NULL, err, sizeof err), ETL_OK);
    etl_session_name_release(n);
}
END_TEST

/* A controller that dies without releasing its name leaves an orphan: listed as such, and
   cleaned up (with what it left) by the next claim, which says so. */
START_TEST(orphans)
{
    etl_session_name *live = NULL, *n = NULL;
    struct listed l;
    char err[512];
    int orphan = 0, status;
    pid_t child = fork();

    ck_assert_int_ge(child, 0);
    if (child == 0) {
        etl_session_name *c = NULL;
        if (etl_session_name_claim(&c, "Orphan", NULL, err, sizeof err) != ETL_OK) _exit(1);
        touch("orphan.shm");
        touch("orphan.sock");
        _exit(0); /* no release: the lock goes with the process, the files stay */
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(etl_session_name_claim(&live, "Live", NULL, err, sizeof err), ETL_OK);

    memset(&l, 0, sizeof l);
    ck_assert_int_eq(etl_session_name_list(collect, &l, err, sizeof err), ETL_OK);
    ck_assert_int_eq(l.n, 2);
    for (int i = 0; i < 2; i++) {
        if (strcmp(l.name[i], "Orphan") == 0) {
            ck_assert_int_eq(l.pid[i], child);
            ck_assert_int_eq(l.orphaned[i], 1);
        }
        else {
            ck_assert_str_eq(l.name[i], "Live");
            ck_assert_int_eq(l.pid[i], getpid());
            ck_assert_int_eq(l.orphaned[i], 0);
        }
    }
    ck_assert(exists("orphan.shm") && exists("orphan.sock"));
    ck_assert_int_eq(etl_session_name_claim(&n, "ORPHAN", &orphan, err, sizeof err), ETL_OK);
    ck_assert_int_eq(orphan, 1);
    ck_assert(!exists("orphan.shm") && !exists("orphan.sock"));
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(etl_session_name_list(collect, &l, err, sizeof err), ETL_OK);
    for (int i = 0; i < l.n; i++) ck_assert_int_eq(l.orphaned[i], 0);
    etl_session_name_release(n);
    etl_session_name_release(live);
}
END_TEST

/* The runtime directory must be the user's own, 0700. */
START_TEST(private_runtime_directory)
{
    etl_session_name *n = NULL;
    char err[512];

    ck_assert_int_eq(etl_session_name_claim(&n, "First", NULL, err, sizeof err), ETL_OK);
    etl_session_name_release(n);
    ck_assert_int_eq(chmod(rt, 0755), 0);
    errno = 0;
    ck_assert_int_eq(etl_session_name_claim(&n, "First", NULL, err, sizeof err), ETL_FAILED);
    ck_assert_int_eq(errno, EACCES);
    ck_assert_msg(strstr(err, "mode 0700") != NULL, "%s", err);
    ck_assert_int_eq(chmod(rt, 0700), 0);
}
END_TEST

/* Another user can neither claim in our directory nor read a lock file (as root only). */
START_TEST(another_user_refused)
{
    etl_session_name *n = NULL;
    char err[512];
    int status;
    pid_t child;

    if (geteuid() != 0) return; /* needs root to become another user; CI runs as root */
    ck_assert_int_eq(etl_session_name_claim(&n, "Mine", NULL, err, sizeof err), ETL_OK);
    ck_assert_int_eq(chmod(test_dir_path(""), 0755), 0); /* let the other user reach rt itself */
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        etl_session_name *m = NULL;
        char e2[512];
        int fd;
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
        if (etl_session_name_claim(&m, "Theirs", NULL, e2, sizeof e2) != ETL_FAILED || errno != EACCES) _exit(4);
        fd = open(etl_session_name_path(n), O_RDONLY);
        if (fd >= 0 || errno != EACCES) _exit(5);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    etl_session_name_release(n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sessionname");
    TCase *tc = tcase_create("names");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unique_whatever_the_case);
    tcase_add_test(tc, bad_names);
    tcase_add_test(tc, orphans);
    tcase_add_test(tc, private_runtime_directory);
    tcase_add_test(tc, another_user_refused);
    suite_add_tcase(s, tc);
    return check_run(s);
}
