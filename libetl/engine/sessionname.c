/* SPDX-License-Identifier: MIT */
/*
 * Session names, unique per user on the machine (doc/etlrecord-design.md): a session's
 * controller holds an flock on RUNTIME/NAME.lock for its life. The name is compared without
 * regard to ASCII case (the file is named in lower case; the name as given is kept inside).
 * A lock file whose flock is free belongs to a controller that died: the session is orphaned,
 * and the next claim of the name removes what it left.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"
#include "engine/engine.h"

struct etl_session_name {
    int fd;
    char path[4096];
    char key[ETL_SESSION_NAME_MAX + 1];
};

/* The session objects besides the lock, removed with an orphan. */
static const char *const object_suffixes[] = { ".shm", ".sock" };

static void fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;

    if (!err || !size) return;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

int etl_session_runtime_dir(char *out, size_t size, char *err, size_t errsize)
{
    const char *env = getenv("ETL_RUNTIME_DIR");
    struct stat st;
    int n;

    n = env && *env ? snprintf(out, size, "%s", env) : snprintf(out, size, "/dev/shm/libetl-%u", (unsigned)getuid());
    if (n < 0 || (size_t)n >= size) {
        fail(err, errsize, "the runtime directory's name is too long");
        errno = ENAMETOOLONG;
        return ETL_FAILED;
    }
    if (mkdir(out, 0700) != 0 && errno != EEXIST) {
        fail(err, errsize, "%s: cannot create the runtime directory: %s", out, strerror(errno));
        return ETL_FAILED;
    }
    /* Its sessions are one user's: it must be that user's, and no one else's to read. */
    if (lstat(out, &st) != 0) {
        fail(err, errsize, "%s: %s", out, strerror(errno));
        return ETL_FAILED;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        fail(err, errsize, "%s: not a directory of user %u with mode 0700: refused (its sessions would not be private)",
             out, (unsigned)getuid());
        errno = EACCES;
        return ETL_FAILED;
    }
    return ETL_OK;
}

int etl_session_name_key(const char *name, char key[ETL_SESSION_NAME_MAX + 1])
{
    size_t n = name ? strlen(name) : 0;

    if (n == 0 || n > ETL_SESSION_NAME_MAX) return ETL_FAILED;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7F || c == '/') return ETL_FAILED;
        key[i] = (char)tolower(c);
    }
    key[n] = '\0';
    if (strcmp(key, ".") == 0 || strcmp(key, "..") == 0) return ETL_FAILED;
    return ETL_OK;
}

/* What a lock file says: "pid name". */
static void read_owner(int fd, long *pid, char *name, size_t size)
{
    char buf[ETL_SESSION_NAME_MAX + 32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    char *sp;

    *pid = 0;
    if (size) name[0] = '\0';
    if (n <= 0) return;
    buf[n] = '\0';
    *pid = strtol(buf, &sp, 10);
    if (*sp == ' ') {
        size_t len = strcspn(sp + 1, "\n");
        snprintf(name, size, "%.*s", (int)len, sp + 1);
    }
}

/* Removes the objects an orphaned session left (not its lock file). */
static void remove_objects(const char *dir, const char *key)
{
    char path[4096 + ETL_SESSION_NAME_MAX + 16];

    for (size_t i = 0; i < sizeof object_suffixes / sizeof object_suffixes[0]; i++) {
        int n = snprintf(path, sizeof path, "%s/%s%s", dir, key, object_suffixes[i]);
        if (n > 0 && (size_t)n < sizeof path) unlink(path);
    }
}

int etl_session_name_claim(etl_session_name **out, const char *name, int *orphan_removed, char *err, size_t errsize)
{
    char dir[4096], key[ETL_SESSION_NAME_MAX + 1];
    etl_session_name *n;

    *out = NULL;
    if (orphan_removed) *orphan_removed = 0;
    if (etl_session_name_key(name, key) != ETL_OK) {
        fail(err, errsize, "'%s' is not a session name (1 to %d characters, no '/' or control characters)",
             name ? name : "", ETL_SESSION_NAME_MAX);
        errno = EINVAL;
        return ETL_FAILED;
    }
    if (etl_session_runtime_dir(dir, sizeof dir, err, errsize) != ETL_OK) return ETL_FAILED;
    n = calloc(1, sizeof *n);
    if (!n) {
        fail(err, errsize, "out of memory");
        return ETL_FAILED;
    }
    snprintf(n->key, sizeof n->key, "%s", key);
    if ((size_t)snprintf(n->path, sizeof n->path, "%s/%s.lock", dir, key) >= sizeof n->path) {
        fail(err, errsize, "the session's lock file name is too long");
        free(n);
        errno = ENAMETOOLONG;
        return ETL_FAILED;
    }
    for (int busy = 0;;) {
        struct stat a, b;
        char owner[ETL_SESSION_NAME_MAX + 1];
        long pid;
        int fd = open(n->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

        if (fd < 0) {
            fail(err, errsize, "%s: %s", n->path, strerror(errno));
            free(n);
            return ETL_FAILED;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            read_owner(fd, &pid, owner, sizeof owner);
            close(fd);
            /* A dead owner's file, locked for a moment by a list: try again shortly. */
            if (e == EWOULDBLOCK && pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH && busy++ < 100) {
                struct timespec ms = { 0, 1000000 };
                nanosleep(&ms, NULL);
                continue;
            }
            if (e == EWOULDBLOCK)
                fail(err, errsize, "a session named '%s' is running (pid %ld): names are unique, whatever their case",
                     owner[0] ? owner : name, pid);
            else
                fail(err, errsize, "%s: %s", n->path, strerror(e));
            free(n);
            errno = e == EWOULDBLOCK ? EEXIST : e;
            return ETL_FAILED;
        }
        /* The file may have been released (unlinked) between the open and the lock: then the
           lock is on a file no one else will see, and the claim starts again. */
        if (fstat(fd, &a) != 0 || stat(n->path, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
            close(fd);
            continue;
        }
        read_owner(fd, &pid, owner, sizeof owner);
        if (pid != 0) { /* the file outlived its controller: an orphan */
            remove_objects(dir, key);
            if (orphan_removed) *orphan_removed = 1;
        }
        if (ftruncate(fd, 0) != 0 || dprintf(fd, "%ld %s\n", (long)getpid(), name) < 0) {
            fail(err, errsize, "%s: %s", n->path, strerror(errno));
            close(fd);
            unlink(n->path);
            free(n);
            return ETL_FAILED;
        }
        n->fd = fd;
        *out = n;
        return ETL_OK;
    }
}

const char *etl_session_name_path(const etl_session_name *n)
{
    return n->path;
}

void etl_session_name_release(etl_session_name *n)
{
    char dir[4096];

    if (!n) return;
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(n->path, '/') - n->path), n->path);
    remove_objects(dir, n->key);
    unlink(n->path); /* while the lock is still held, so that no claim takes the old file */
    close(n->fd);
    free(n);
}

int etl_session_name_list(void (*cb)(void *arg, const char *name, long pid, int orphaned), void *arg, char *err,
                          size_t errsize)
{
    char dir[4096];
    DIR *d;
    struct dirent *e;

    if (etl_session_runtime_dir(dir, sizeof dir, err, errsize) != ETL_OK) return ETL_FAILED;
    d = opendir(dir);
    if (!d) {
        fail(err, errsize, "%s: %s", dir, strerror(errno));
        return ETL_FAILED;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char path[4096 + 256 + 2], owner[ETL_SESSION_NAME_MAX + 1];
        long pid;
        int fd, orphaned;

        if (len <= 5 || strcmp(e->d_name + len - 5, ".lock") != 0) continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        read_owner(fd, &pid, owner, sizeof owner);
        /* A shared lock we can take means no controller holds the exclusive one. */
        orphaned = flock(fd, LOCK_SH | LOCK_NB) == 0;
        if (orphaned) flock(fd, LOCK_UN);
        close(fd);
        if (pid == 0) continue; /* being claimed or released right now */
        if (!owner[0]) snprintf(owner, sizeof owner, "%.*s", (int)(len - 5), e->d_name);
        cb(arg, owner, pid, orphaned);
    }
    closedir(d);
    return ETL_OK;
}

int etl_session_name_held(const char *name)
{
    char dir[4096], key[ETL_SESSION_NAME_MAX + 1], path[4096 + ETL_SESSION_NAME_MAX + 16], err[64], owner[8];
    long pid;
    int fd, held;

    if (etl_session_name_key(name, key) != ETL_OK ||
        etl_session_runtime_dir(dir, sizeof dir, err, sizeof err) != ETL_OK)
        return 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s.lock", dir, key) >= sizeof path) return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    read_owner(fd, &pid, owner, sizeof owner);
    /* Ours, and locked (by our claim's open file, which this one is not). */
    held = pid == (long)getpid() && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}
