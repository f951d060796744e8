/* SPDX-License-Identifier: MIT */
/*
 * Provider processes: the shared sessions of the user's runtime directory, mapped into this
 * process so that its providers write into them (doc/etlrecord-design.md, step 4).
 *
 * The first etl_provider_register of a process maps every shared session there is (each at
 * the address its controller chose) and enables in the provider registry what each one's
 * table enables; a thread then watches the directory with inotify. A new session file, a
 * change of a table (its controller touches the file) or a stop (the same) makes it look
 * again: new sessions are mapped, changed tables applied, and a session that stops or
 * whose file is gone leaves every provider's set before it is unmapped. A look also
 * happens every second, whatever inotify says.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl.h"
#include "engine/provider.h"

struct attached {
    dev_t dev;
    ino_t ino;
    etl_session *s;                     /* NULL: a file that could not be mapped (not tried again) */
    uint64_t generation;
    unsigned n;
    etl_shared_enable enables[ETL_SHARED_MAX_ENABLES];
    int seen;
    struct attached *next;
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct attached *sessions;
static int watching;                    /* 1: the thread runs; -1: no runtime directory */
static int inotify_fd = -1;
static char dir[4096];

static int same_enable(const etl_shared_enable *a, const etl_shared_enable *b)
{
    return etl_guid_equal(&a->guid, &b->guid) && a->level == b->level && a->any == b->any && a->all == b->all &&
           a->properties == b->properties;
}

/* Applies a's table to the registry: what it no longer enables is disabled, the rest enabled. */
static void apply(struct attached *a)
{
    etl_shared_enable now[ETL_SHARED_MAX_ENABLES];
    unsigned n;
    uint64_t gen = etl_session_enables_read(a->s, now, &n);

    for (unsigned i = 0; i < a->n; i++) {
        unsigned j = 0;
        while (j < n && !etl_guid_equal(&now[j].guid, &a->enables[i].guid)) j++;
        if (j == n) etl_session_disable_provider(a->s, &a->enables[i].guid);
    }
    for (unsigned j = 0; j < n; j++) {
        unsigned i = 0;
        while (i < a->n && !same_enable(&a->enables[i], &now[j])) i++;
        if (i == a->n)
            etl_session_enable_provider_ex(a->s, &now[j].guid, now[j].level, now[j].any, now[j].all,
                                           now[j].properties & ETL_ENABLE_STACK_TRACE);
    }
    memcpy(a->enables, now, n * sizeof now[0]);
    a->n = n;
    a->generation = gen;
}

static void forget(struct attached *a)
{
    if (a->s) {
        etl_providers_forget_session(a->s); /* no writer uses it after this */
        etl_session_detach(a->s);
    }
    free(a);
}

/* One look at the directory (watch_lock held). */
static void scan_locked(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    for (struct attached *a = sessions; a; a = a->next) a->seen = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[sizeof dir + NAME_MAX + 2], err[512];
        struct attached *a;
        struct stat st;

        if (len < 5 || strcmp(e->d_name + len - 4, ".shm") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0) continue;
        for (a = sessions; a; a = a->next)
            if (a->dev == st.st_dev && a->ino == st.st_ino) break;
        if (!a) {
            a = calloc(1, sizeof *a);
            if (!a) continue;
            a->dev = st.st_dev;
            a->ino = st.st_ino;
            if (etl_session_attach(&a->s, path, err, sizeof err) != ETL_OK) a->s = NULL;
            a->generation = UINT64_MAX;
            a->next = sessions;
            sessions = a;
        }
        a->seen = 1;
    }
    if (d) closedir(d);
    for (struct attached **q = &sessions; *q;) {
        struct attached *a = *q;
        if (!a->seen || (a->s && !etl_session_running(a->s))) {
            *q = a->next;
            forget(a);
            continue;
        }
        if (a->s && etl_session_generation(a->s) != a->generation) apply(a);
        q = &a->next;
    }
}

static void *watch_thread(void *arg)
{
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    (void)arg;

    for (;;) {
        /* Without inotify (a negative descriptor, which poll leaves out) a look a second. */
        struct pollfd pfd = { inotify_fd, POLLIN, 0 };

        if (poll(&pfd, 1, 1000) > 0) {
            while (read(pfd.fd, events, sizeof events) > 0) {
            }
        }
        pthread_mutex_lock(&watch_lock);
        if (watching != 1) {
            pthread_mutex_unlock(&watch_lock);
            return NULL;
        }
        scan_locked();
        pthread_mutex_unlock(&watch_lock);
    }
}

/* fork: the child has no watch thread; its next registration starts one. */
static void atfork_prepare(void) { pthread_mutex_lock(&watch_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&watch_lock); }
static void atfork_child(void)
{
    /* The registry forgot what was enabled (provider.c): apply every table again. */
    for (struct attached *a = sessions; a; a = a->next) {
        a->generation = UINT64_MAX;
        a->n = 0;
    }
    if (watching == 1) {
        watching = 0;
        close(inotify_fd);
        inotify_fd = -1;
    }
    pthread_mutex_unlock(&watch_lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

void etl_shared_sessions_watch(void)
{
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&watch_lock);
    if (watching == 0) {
        char err[512];
        pthread_t t;
        pthread_attr_t at;

        watching = -1;
        if (etl_runtime_dir(dir, sizeof dir, err, sizeof err) == ETL_OK) {
            inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
            if (inotify_fd >= 0)
                inotify_add_watch(inotify_fd, dir,
                                  IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB | IN_CLOSE_WRITE);
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            if (pthread_create(&t, &at, watch_thread, NULL) == 0) watching = 1;
            pthread_attr_destroy(&at);
        }
    }
    if (watching == 1) scan_locked();
    pthread_mutex_unlock(&watch_lock);
}
