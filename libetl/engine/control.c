/* SPDX-License-Identifier: MIT */
/* The session control protocol: a session's controller serving its control socket, and the clients that ask it (doc/etlrecord-design.md). */
/* struct ucred and SO_PEERCRED, accept4, open_memstream: Linux interfaces. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"
#include "engine/engine.h"
#include "reader/reader.h"

/* A request line, and an answer line, is at most this long. */
#define LINE_MAX_LEN 4096

int etl_control_wait_ms = 5000;

/* ---- names: provider specs, modes, clocks ---- */

/* Digits only (no sign, no space), up to max. */
static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Decimal, 0x hexadecimal or 0 octal, starting with a digit. */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int etl_provider_spec_parse(const char *spec, etl_provider_spec *out, char *err, size_t errsize)
{
    char buf[256], *level, *kw = NULL;
    uint32_t lv = 0;

    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errsize, "provider '%.40s...' is too long", spec);
        return ETL_FAILED;
    }
    strcpy(buf, spec);
    level = strchr(buf, ':');
    if (level) {
        *level++ = '\0';
        kw = strchr(level, ':');
        if (kw) *kw++ = '\0';
    }
    memset(out, 0, sizeof *out);
    if (etl_guid_parse_provider(buf, &out->guid) != ETL_OK) {
        snprintf(err, errsize, "provider '%s': not a GUID or a provider name libetl knows", buf);
        return ETL_FAILED;
    }
    if (level && *level && parse_u32(level, 255, &lv) != 0) {
        snprintf(err, errsize, "provider '%s': level '%s' is not 0 to 255", spec, level);
        return ETL_FAILED;
    }
    out->level = (uint8_t)lv;
    if (kw && *kw && parse_u64(kw, &out->keywords) != 0) {
        snprintf(err, errsize, "provider '%s': keywords '%s' are not a number (0x10)", spec, kw);
        return ETL_FAILED;
    }
    return ETL_OK;
}

static const struct {
    const char *name;
    uint32_t mode;
} modes[] = {
    { "sequential", ETL_MODE_FILE_SEQUENTIAL },
    { "circular", ETL_MODE_FILE_CIRCULAR },
    { "newfile", ETL_MODE_FILE_NEWFILE },
    { "buffering", ETL_MODE_BUFFERING },
    { "realtime", ETL_MODE_REAL_TIME },
};

static const struct {
    const char *name;
    int clock;
} clocks[] = {
    { "perfcounter", ETL_CLOCK_PERFCOUNTER },
    { "systemtime", ETL_CLOCK_SYSTEMTIME },
    { "cycle", ETL_CLOCK_CPUCYCLE },
};

int etl_session_mode_from_name(const char *name, uint32_t *mode)
{
    for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0) {
            *mode = modes[i].mode;
            return ETL_OK;
        }
    return ETL_FAILED;
}

const char *etl_session_mode_name(uint32_t mode)
{
    /* Real time beside a file, as ETW makes it. */
    if (mode == (ETL_MODE_REAL_TIME | ETL_MODE_FILE_SEQUENTIAL)) return "sequential+realtime";
    for (unsigned i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (modes[i].mode == mode) return modes[i].name;
    return "?";
}

int etl_clock_from_name(const char *name, int *clock)
{
    for (unsigned i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
        if (strcmp(clocks[i].name, name) == 0) {
            *clock = clocks[i].clock;
            return ETL_OK;
        }
    return ETL_FAILED;
}

const char *etl_clock_name(int clock)
{
    for (unsigned i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
        if (clocks[i].clock == clock) return clocks[i].name;
    return "?";
}

/* ---- the control socket ---- */

int etl_control_socket_path(const char *name, char *out, size_t size, char *err, size_t errsize)
{
    char dir[4096], key[ETL_SESSION_NAME_MAX + 1];

    if (etl_session_name_key(name, key) != ETL_OK) {
        snprintf(err, errsize, "'%s' is not a session name (1 to %d bytes, no '/' or control characters)",
                 name ? name : "", ETL_SESSION_NAME_MAX);
        errno = EINVAL;
        return ETL_FAILED;
    }
    if (etl_session_runtime_dir(dir, sizeof dir, err, errsize) != ETL_OK) return ETL_FAILED;
    if ((size_t)snprintf(out, size, "%s/%s.sock", dir, key) >= size) {
        snprintf(err, errsize, "session %s: the socket path %.200s/%s.sock is too long", name, dir, key);
        errno = ENAMETOOLONG;
        return ETL_FAILED;
    }
    return ETL_OK;
}

/* Whether a live controller holds name (its lock file's flock, which a claim takes
   exclusively), and its pid as the file says (0 while the claim has not written it). */
static int name_held(const char *socket_path, long *pid)
{
    char path[sizeof ((struct sockaddr_un *)0)->sun_path + 8], buf[32];
    size_t n = strlen(socket_path);
    ssize_t k;
    int fd, held;

    *pid = 0;
    if (n < 5 || n - 5 + sizeof ".lock" > sizeof path) return 0;
    memcpy(path, socket_path, n - 5); /* ".sock" */
    memcpy(path + n - 5, ".lock", sizeof ".lock");
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!held) flock(fd, LOCK_UN);
    k = pread(fd, buf, sizeof buf - 1, 0);
    if (k > 0) {
        buf[k] = '\0';
        *pid = strtol(buf, NULL, 10);
    }
    close(fd);
    return held;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int etl_control_connect(const char *name, long *pid, char *err, size_t errsize)
{
    struct sockaddr_un addr;
    int64_t since = -1;

    *pid = 0;
    if (errsize) err[0] = '\0';
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (etl_control_socket_path(name, addr.sun_path, sizeof addr.sun_path, err, errsize) != ETL_OK) return -1;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e;
        if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) return fd;
        e = errno;
        if (fd >= 0) close(fd);
        /* A controller claims the name, starts the session, and only then listens: a client
           that saw the name (etlrecord list, or a start that returned) waits for the socket. */
        if ((e == ENOENT || e == ECONNREFUSED) && fd >= 0 && name_held(addr.sun_path, pid)) {
            struct timespec tick = { 0, 10 * 1000000 };
            if (since < 0) since = now_ms();
            if (now_ms() - since >= etl_control_wait_ms) {
                errno = ETIMEDOUT;
                return -1;
            }
            nanosleep(&tick, NULL);
            continue;
        }
        if (e != ENOENT && e != ECONNREFUSED)
            snprintf(err, errsize, "session %s: %s: %s", name, addr.sun_path, strerror(e));
        errno = e;
        return -1;
    }
}

/* ---- answers ---- */

struct etl_control_answer {
    char **lines; /* "KEY VALUE" */
    unsigned n;
    char *error;  /* the "error" line's text, or NULL */
    int ok;
    char message[1024]; /* why no answer came */
};

static void answer_line(etl_control_answer *a, const char *line)
{
    char **n;

    if (strcmp(line, "ok") == 0) a->ok = 1;
    else if (strncmp(line, "error ", 6) == 0) {
        free(a->error);
        a->error = strdup(line + 6);
    }
    else if ((n = realloc(a->lines, (a->n + 1) * sizeof *n)) != NULL) {
        a->lines = n;
        if ((a->lines[a->n] = strdup(line)) != NULL) a->n++;
    }
}

static void answer_read(etl_control_answer *a, FILE *f)
{
    char line[LINE_MAX_LEN];

    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        answer_line(a, line);
    }
}

unsigned etl_control_answer_count(const etl_control_answer *a)
{
    return a ? a->n : 0;
}

const char *etl_control_answer_line(const etl_control_answer *a, unsigned i)
{
    return a && i < a->n ? a->lines[i] : NULL;
}

const char *etl_control_answer_value(const etl_control_answer *a, const char *key)
{
    size_t k = strlen(key);

    for (unsigned i = 0; a && i < a->n; i++)
        if (strncmp(a->lines[i], key, k) == 0 && a->lines[i][k] == ' ') return a->lines[i] + k + 1;
    return NULL;
}

const char *etl_control_answer_error(const etl_control_answer *a)
{
    if (!a) return "out of memory";
    if (a->error) return a->error;
    return a->message[0] ? a->message : NULL;
}

void etl_control_answer_free(etl_control_answer *a)
{
    if (!a) return;
    for (unsigned i = 0; i < a->n; i++) free(a->lines[i]);
    free(a->lines);
    free(a->error);
    free(a);
}

int etl_control_request(etl_control_answer **out, const char *name, const char *request)
{
    etl_control_answer *a = calloc(1, sizeof *a);
    char err[1024];
    long pid;
    FILE *f;
    int fd;

    *out = a;
    if (!a) return ETL_FATAL;
    err[0] = '\0';
    fd = etl_control_connect(name, &pid, err, sizeof err);
    if (fd < 0) {
        if (err[0]) snprintf(a->message, sizeof a->message, "%s", err);
        else if (errno == ENOENT) snprintf(a->message, sizeof a->message, "no session %s", name);
        else if (errno == ECONNREFUSED)
            snprintf(a->message, sizeof a->message,
                     "session %s is orphaned (its controller died); the next 'etlrecord start %s' cleans it up", name,
                     name);
        else if (errno == ETIMEDOUT)
            snprintf(a->message, sizeof a->message,
                     "session %s: its controller (pid %ld) holds the name but has not listened on its control "
                     "socket for %d ms (it is still starting the session, or stuck)", name, pid, etl_control_wait_ms);
        return ETL_FATAL;
    }
    if (etl_send_all(fd, request, strlen(request)) != 0 || etl_send_all(fd, "\n", 1) != 0 || !(f = fdopen(fd, "r"))) {
        snprintf(a->message, sizeof a->message, "session %s: %s", name, strerror(errno));
        close(fd);
        return ETL_FATAL;
    }
    answer_read(a, f);
    fclose(f);
    if (!a->ok && !a->error) {
        snprintf(a->message, sizeof a->message, "session %s: the controller gave no answer", name);
        return ETL_FATAL;
    }
    return a->error ? ETL_FAILED : ETL_OK;
}

/* ---- the controller ---- */

/* A real-time consumer and the thread that serves it. */
struct consumer {
    etl_session *session;
    int fd;
    pthread_t thread;
    atomic_int done;
    struct consumer *next;
};

struct etl_controller {
    char *name, *file;
    etl_session_properties props; /* as given (logger_name and log_file_name ours) */
    int stackwalk;
    const etl_controller_hooks *hooks;
    etl_session *session;
    etl_session_name *claim;
    etl_provider_spec *providers; /* enabled, one per GUID */
    unsigned nproviders;
    int listen_fd;
    int running;                  /* started and not stopped */
    struct consumer *consumers;
    char err[1024];
};

/* Enables p in the session and records it (replacing an earlier enable of its GUID). */
static int controller_enable(etl_controller *c, const etl_provider_spec *p, char *err, size_t errsize)
{
    char g[ETL_GUID_STRING_SIZE];
    unsigned i;

    if (etl_session_enable_provider_ex(c->session, &p->guid, p->level, p->keywords, 0,
                                       c->stackwalk || p->stack ? ETL_ENABLE_STACK_TRACE : 0) != ETL_OK) {
        snprintf(err, errsize, "provider %s could not be enabled: %s", etl_guid_format(&p->guid, g),
                 strerror(errno));
        return -1;
    }
    for (i = 0; i < c->nproviders && !etl_guid_equal(&c->providers[i].guid, &p->guid); i++) {}
    if (i == c->nproviders) {
        etl_provider_spec *n = realloc(c->providers, (c->nproviders + 1) * sizeof *n);
        if (!n) {
            snprintf(err, errsize, "out of memory");
            return -1;
        }
        c->providers = n;
        c->nproviders++;
    }
    c->providers[i] = *p;
    return 0;
}

static void send_stats(FILE *f, const etl_session_stats *st)
{
    fprintf(f, "NumberOfBuffers %u\nFreeBuffers %u\nEventsLost %llu\nBuffersWritten %u\nLogBuffersLost %u\n"
            "RealTimeBuffersLost %u\n", st->number_of_buffers, st->free_buffers,
            (unsigned long long)st->events_lost, st->buffers_written, st->log_buffers_lost,
            st->real_time_buffers_lost);
    /* libetl's own: for sessions shared by processes, buffers taken back from writer
       processes that died holding them, and processes that could not map the session; for
       real-time sessions, the events in the RealTimeBuffersLost buffers. */
    fprintf(f, "BuffersReclaimed %u\nWritersRefused %u\nRealTimeEventsLost %llu\n", st->buffers_reclaimed,
            st->writers_refused, (unsigned long long)st->real_time_events_lost);
}

/* The properties in effect (the engine's defaults resolved), as EVENT_TRACE_PROPERTIES names them. */
static void send_properties(FILE *f, const etl_controller *c)
{
    etl_session_properties resolved, *p = &resolved;
    char g[ETL_GUID_STRING_SIZE];

    etl_session_properties_get(c->session, &resolved);
    fprintf(f, "LoggerName %s\n", c->name);
    if (p->log_file_name) fprintf(f, "LogFileName %s\n", p->log_file_name);
    fprintf(f, "ControllerPid %ld\nLogFileMode %s\nBufferSize %u\nMinimumBuffers %u\nMaximumBuffers %u\n"
            "MaximumFileSize %u\nFlushTimer %u\nClockType %s\n", (long)getpid(),
            etl_session_mode_name(p->log_file_mode & (ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_FILE_CIRCULAR |
                                                      ETL_MODE_FILE_NEWFILE | ETL_MODE_BUFFERING | ETL_MODE_REAL_TIME)),
            p->buffer_size_kb, p->minimum_buffers, p->maximum_buffers, p->maximum_file_size_mb,
            p->flush_timer_s, etl_clock_name(p->clock_type));
    if (c->stackwalk) fputs("StackWalk 1\n", f);
    if (c->props.engine_flags & ETL_ENGINE_DIRECT_IO) fputs("DirectIO 1\n", f);
    /* The logging mode's other bits, each by its EVENT_TRACE_* name's words. */
    if (p->log_file_mode & ETL_MODE_FILE_APPEND) fputs("Append 1\n", f);
    if (p->log_file_mode & ETL_MODE_FILE_PREALLOCATE) fputs("Preallocate 1\n", f);
    if (p->log_file_mode & ETL_MODE_USE_KBYTES_FOR_SIZE) fputs("UseKBytesForSize 1\n", f);
    if (p->log_file_mode & ETL_MODE_NO_PER_PROCESSOR_BUFFERING) fputs("NoPerProcessorBuffering 1\n", f);
    if (c->hooks && c->hooks->describe) {
        char lines[LINE_MAX_LEN];
        lines[0] = '\0';
        c->hooks->describe(c->hooks->arg, lines, sizeof lines);
        fputs(lines, f);
    }
    for (unsigned i = 0; i < c->nproviders; i++)
        fprintf(f, "Provider %s %u 0x%llx%s\n", etl_guid_format(&c->providers[i].guid, g), c->providers[i].level,
                (unsigned long long)c->providers[i].keywords, c->providers[i].stack ? " stack" : "");
}

/* "update provider SPEC flush-timer S max-buffers N ...": all checked before any is applied;
   the maximum number of buffers, the one that may then fail (no room), first. */
static void serve_update(FILE *f, etl_controller *c, char *args)
{
    etl_provider_spec specs[64];
    unsigned n = 0;
    uint32_t flush_timer = 0, max_buffers = 0;
    int has_flush_timer = 0, has_max_buffers = 0;
    char err[512], *save = NULL;

    for (char *k = strtok_r(args, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
        char *v = strtok_r(NULL, " ", &save);
        if (!v) {
            fprintf(f, "error update: '%s' has no value\n", k);
            return;
        }
        if (strcmp(k, "flush-timer") == 0 || strcmp(k, "max-buffers") == 0) {
            int timer = k[0] == 'f';
            if (parse_u32(v, UINT32_MAX, timer ? &flush_timer : &max_buffers) != 0) {
                fprintf(f, "error update: %s '%s' is not a number\n", k, v);
                return;
            }
            if (timer) has_flush_timer = 1;
            else has_max_buffers = 1;
            continue;
        }
        if (strcmp(k, "provider") != 0) {
            fprintf(f, "error update: unknown setting '%s'\n", k);
            return;
        }
        if (n == sizeof specs / sizeof specs[0]) {
            fprintf(f, "error update: too many providers at once\n");
            return;
        }
        if (etl_provider_spec_parse(v, &specs[n++], err, sizeof err) != ETL_OK) {
            fprintf(f, "error %s\n", err);
            return;
        }
    }
    if ((has_max_buffers && etl_session_set_maximum_buffers(c->session, max_buffers) != ETL_OK) ||
        (has_flush_timer && etl_session_set_flush_timer(c->session, flush_timer) != ETL_OK)) {
        fprintf(f, "error %s\n", etl_session_error(c->session));
        return;
    }
    for (unsigned i = 0; i < n; i++)
        if (controller_enable(c, &specs[i], err, sizeof err) != 0) {
            fprintf(f, "error %s\n", err);
            return;
        }
    send_properties(f, c);
    fputs("ok\n", f);
}

/* Stops the session and gives the name back; the answer goes to f (NULL: nobody asked). */
static int controller_stop(etl_controller *c, FILE *f)
{
    etl_session_stats st;
    int rc;

    if (c->hooks && c->hooks->stop) c->hooks->stop(c->hooks->arg);
    rc = etl_session_stop(c->session, &st);
    c->running = 0;
    while (c->consumers) { /* done: the stop waited for the one attached */
        struct consumer *k = c->consumers;
        pthread_join(k->thread, NULL);
        c->consumers = k->next;
        free(k);
    }
    close(c->listen_fd);
    c->listen_fd = -1;
    etl_session_name_release(c->claim);
    c->claim = NULL;
    if (f) {
        fprintf(f, "LoggerName %s\n", c->name);
        if (c->props.log_file_name) fprintf(f, "LogFileName %s\n", c->props.log_file_name);
        send_stats(f, &st);
        if (rc != ETL_OK) fprintf(f, "error the file could not be written: %s\n", etl_session_error(c->session));
        else fputs("ok\n", f);
    }
    etl_session_close(c->session);
    c->session = NULL;
    return rc;
}

/* Reads one request line (without its newline) from fd; -1 when none came. */
static int read_request(int fd, char *line, size_t size)
{
    size_t n = 0;

    while (n + 1 < size) {
        ssize_t r = read(fd, line + n, size - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
        if (memchr(line, '\n', n)) break;
    }
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    return n ? 0 : -1;
}

/* A real-time consumer's thread: the session's stream until the stop, or until it goes. */
static void *consumer_thread(void *arg)
{
    struct consumer *k = arg;

    etl_session_realtime_deliver(k->session);
    close(k->fd);
    atomic_store(&k->done, 1);
    return NULL;
}

/* "consume": the connection becomes the session's real-time consumer, served by a thread of
   its own. It is attached here, in the serving thread, before that thread exists: so the
   session's stop, which waits for an attached consumer, cannot miss it. */
static void serve_consumer(etl_controller *c, int fd)
{
    struct timeval none = { 0, 0 };
    struct consumer *k;

    /* Threads of consumers that went are joined here, and at the stop. */
    for (struct consumer **p = &c->consumers; (k = *p);) {
        if (atomic_load(&k->done)) {
            pthread_join(k->thread, NULL);
            *p = k->next;
            free(k);
        } else {
            p = &k->next;
        }
    }
    k = calloc(1, sizeof *k);
    if (!k || etl_session_realtime_attach(c->session, fd) != ETL_OK) {
        if (!k) etl_send_all(fd, "error out of memory\n", 20);
        free(k);
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    k->session = c->session;
    k->fd = fd;
    if (pthread_create(&k->thread, NULL, consumer_thread, k) != 0) {
        /* The consumer is attached: it must be served, here then, until the stop or it goes. */
        consumer_thread(k);
        free(k);
        return;
    }
    k->next = c->consumers;
    c->consumers = k;
}

/* The answer to one request line into f; 1 when it stopped the session. */
static int answer_request(etl_controller *c, FILE *f, char *line)
{
    if (!line[0]) {
        fputs("error no request\n", f);
    }
    else if (strcmp(line, "query") == 0) {
        etl_session_stats st;
        etl_session_stats_get(c->session, &st);
        send_properties(f, c);
        send_stats(f, &st);
        /* A failed session (its file) says so; a refused request before does not. */
        if (etl_session_failed(c->session)) fprintf(f, "error %s\n", etl_session_error(c->session));
        else fputs("ok\n", f);
    }
    else if (strcmp(line, "stop") == 0) {
        controller_stop(c, f);
        return 1;
    }
    else if (strncmp(line, "flush", 5) == 0 && (line[5] == '\0' || line[5] == ' ')) {
        const char *path = line[5] ? line + 6 : NULL;
        int buffering = c->props.log_file_mode == ETL_MODE_BUFFERING;
        if (buffering && !path) fputs("error a buffering session is flushed to a snapshot: flush -o SNAPSHOT\n", f);
        else if (!buffering && path) fputs("error -o SNAPSHOT is for buffering sessions; this one writes its file\n", f);
        else {
            /* What a plug-in holds back (the kernel capture's readers) goes in first. */
            if (c->hooks && c->hooks->flush) c->hooks->flush(c->hooks->arg, c->session);
            if ((buffering ? etl_session_snapshot(c->session, path) : etl_session_flush(c->session)) != ETL_OK)
                fprintf(f, "error %s\n", etl_session_error(c->session));
            else {
                if (path) fprintf(f, "Snapshot %s\n", path);
                fputs("ok\n", f);
            }
        }
    }
    else if (strncmp(line, "update ", 7) == 0) {
        serve_update(f, c, line + 7);
    }
    else {
        fprintf(f, "error unknown request '%s'\n", line);
    }
    return 0;
}

/* Serves one connection; 1 when the session was stopped. */
static int serve(etl_controller *c, int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    struct timeval tv = { 5, 0 };
    char line[LINE_MAX_LEN], *text = NULL;
    size_t size = 0;
    FILE *f;
    int stopped = 0, refused;

    /* A client that connects and says nothing cannot hold the controller up for long. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* The request is read even from a peer refused: closing with it unread would reset the
       connection before the peer reads why. */
    if (read_request(fd, line, sizeof line) != 0) line[0] = '\0';
    refused = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || (cred.uid != getuid() && cred.uid != 0);
    if (!refused && strcmp(line, "consume") == 0) {
        serve_consumer(c, fd);
        return 0;
    }
    /* The answer is made whole, then sent without SIGPIPE (the client may be gone). */
    f = open_memstream(&text, &size);
    if (!f) {
        close(fd);
        return 0;
    }
    if (refused)
        fprintf(f, "error session %s belongs to uid %ld; only it and root may control it\n", c->name,
                (long)getuid());
    else stopped = answer_request(c, f, line);
    if (fclose(f) == 0) etl_send_all(fd, text, size);
    free(text);
    close(fd);
    return stopped;
}

static int controller_listen(etl_controller *c)
{
    struct sockaddr_un addr;

    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (etl_control_socket_path(c->name, addr.sun_path, sizeof addr.sun_path, c->err, sizeof c->err) != ETL_OK)
        return -1;
    unlink(addr.sun_path); /* we hold the name: whatever is there is stale */
    c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        chmod(addr.sun_path, 0600) != 0 || listen(c->listen_fd, 16) != 0) {
        snprintf(c->err, sizeof c->err, "session %s: control socket %s: %s", c->name, addr.sun_path, strerror(errno));
        return -1;
    }
    return 0;
}

int etl_controller_start(etl_controller **out, const etl_controller_config *cfg, int *orphan_removed)
{
    const char *name = cfg->properties.logger_name;
    etl_controller *c = calloc(1, sizeof *c);
    int orphan = 0;

    *out = c;
    if (orphan_removed) *orphan_removed = 0;
    if (!c) return ETL_FAILED;
    c->listen_fd = -1;
    c->props = cfg->properties;
    c->stackwalk = cfg->stackwalk;
    c->hooks = cfg->hooks;
    c->name = strdup(name ? name : "");
    c->file = cfg->properties.log_file_name ? strdup(cfg->properties.log_file_name) : NULL;
    if (!c->name || (cfg->properties.log_file_name && !c->file)) {
        snprintf(c->err, sizeof c->err, "out of memory");
        return ETL_FAILED;
    }
    c->props.logger_name = c->name;
    c->props.log_file_name = c->file;
    if (strcasecmp(c->name, ETL_KERNEL_LOGGER_NAME) == 0 && !(cfg->hooks && cfg->hooks->kernel)) {
        snprintf(c->err, sizeof c->err, "session %s: the NT Kernel Logger is the kernel session (its name is taken "
                 "only by a session of kernel events)", c->name);
        return ETL_FAILED;
    }
    if (c->props.log_file_mode & ETL_MODE_PRIVATE_LOGGER) {
        snprintf(c->err, sizeof c->err, "session %s: a private logger is controlled only by its own process "
                 "(libetl's etl_session_start); a controller's session is reached by others", c->name);
        return ETL_FAILED;
    }
    if (etl_session_name_claim(&c->claim, c->name, &orphan, c->err, sizeof c->err) != ETL_OK) return ETL_FAILED;
    if (orphan_removed) *orphan_removed = orphan;
    if (etl_session_start(&c->session, &c->props) != ETL_OK) {
        snprintf(c->err, sizeof c->err, "session %s: %s", c->name,
                 c->session ? etl_session_error(c->session) : "out of memory");
        etl_session_close(c->session);
        c->session = NULL;
        etl_session_name_release(c->claim);
        c->claim = NULL;
        return ETL_FAILED;
    }
    for (unsigned i = 0; i < cfg->provider_count; i++)
        if (controller_enable(c, &cfg->providers[i], c->err, sizeof c->err) != 0) break;
    if (c->nproviders < cfg->provider_count ||
        (c->hooks && c->hooks->start && c->hooks->start(c->hooks->arg, c->session, c->err, sizeof c->err) != ETL_OK) ||
        controller_listen(c) != 0) {
        if (c->hooks && c->hooks->stop) c->hooks->stop(c->hooks->arg);
        etl_session_close(c->session);
        c->session = NULL;
        if (c->listen_fd >= 0) close(c->listen_fd);
        c->listen_fd = -1;
        etl_session_name_release(c->claim);
        c->claim = NULL;
        return ETL_FAILED;
    }
    c->running = 1;
    return ETL_OK;
}

const char *etl_controller_error(const etl_controller *c)
{
    return c ? c->err : "out of memory";
}

etl_session *etl_controller_session(etl_controller *c)
{
    return c->session;
}

int etl_controller_serve(etl_controller *c, int (*done)(void *), void *arg, int wake_fd)
{
    for (;;) {
        struct pollfd p[2] = { { c->listen_fd, POLLIN, 0 }, { wake_fd, POLLIN, 0 } };
        int fd;
        if (done(arg)) return 0;
        if (poll(p, wake_fd >= 0 ? 2 : 1, 200) <= 0 || !(p[0].revents & POLLIN)) continue;
        fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0 && serve(c, fd)) return 1;
    }
}

int etl_controller_stop(etl_controller *c, etl_control_answer **answer)
{
    etl_control_answer *a = NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *f;
    int rc;

    if (answer) *answer = NULL;
    if (!c->running) return ETL_OK;
    f = answer ? open_memstream(&text, &size) : NULL;
    rc = controller_stop(c, f);
    if (!f) return rc;
    if (fclose(f) == 0 && (a = calloc(1, sizeof *a)) != NULL) {
        for (char *line = text, *nl; line < text + size; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl) nl = text + size;
            *nl = '\0';
            answer_line(a, line);
        }
    }
    free(text);
    *answer = a;
    return rc;
}

void etl_controller_close(etl_controller *c)
{
    if (!c) return;
    if (c->running) controller_stop(c, NULL);
    free(c->providers);
    free(c->name);
    free(c->file);
    free(c);
}

/* ---- the consumer's side ---- */

int etl_reader_open_session(etl_reader **out, const char *session, const etl_reader_options *opt)
{
    char name[ETL_SESSION_NAME_MAX + 16], err[1024], why[1100];
    size_t k;
    long pid;
    int fd;

    snprintf(name, sizeof name, "session %s", session ? session : "");
    err[0] = '\0';
    fd = session ? etl_control_connect(session, &pid, err, sizeof err) : (errno = EINVAL, -1);
    if (fd < 0) {
        k = strlen(name);
        if (errno == EINVAL)
            snprintf(why, sizeof why, "not a session name (1 to %d bytes, no '/' or control characters)",
                     ETL_SESSION_NAME_MAX);
        /* The reader names the session itself. */
        else if (err[0]) snprintf(why, sizeof why, "%s", strncmp(err, name, k) == 0 && err[k] == ':' ? err + k + 2 : err);
        else if (errno == ENOENT || errno == ECONNREFUSED) snprintf(why, sizeof why, "no such session is running");
        else
            snprintf(why, sizeof why, "its controller (pid %ld) holds the name but has not listened on its "
                     "control socket for %d ms", pid, etl_control_wait_ms);
        return etl_reader_open_live(out, -1, opt, name, why);
    }
    if (etl_send_all(fd, "consume\n", 8) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        close(fd);
        return etl_reader_open_live(out, -1, opt, name, why);
    }
    return etl_reader_open_live(out, fd, opt, name, NULL);
}
