/* SPDX-License-Identifier: MIT */
/* Recordings of WPR profiles: their state, their collectors' controllers, their stop, merge and cancel (etl/recording.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl.h"
#include "etl/recording.h"
#include "format/format.h"

#define STATE_LINE_MAX 4096

struct etl_recording {
    char instance[ETL_SESSION_NAME_MAX + 1];
    char key[ETL_SESSION_NAME_MAX + 1];
    char dir[4096];
    char log_dir[4096];      /* where the log files are ("" until there are collectors) */
    char mode[16];           /* "file" or "memory" */
    char profile[1024];      /* the profile's Id */
    unsigned count;
    char *names[ETL_RECORDING_MAX_COLLECTORS], *files[ETL_RECORDING_MAX_COLLECTORS];
    int stopped;             /* a stop stopped the sessions (the merge may have failed) */
};

__attribute__((format(printf, 2, 3))) static void say(const etl_recording_callbacks *cb, const char *fmt, ...)
{
    char text[STATE_LINE_MAX + 512];
    va_list ap;

    if (!cb || !cb->message) return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cb->message(cb->arg, text);
}

/* The link in a recording's directory to its log directory on disk (file mode), there until
   its state is saved. */
#define LOG_DIR_LINK "logdir"

/* ---- the state ---- */

static int recording_init(etl_recording *r, const char *instance, char *err, size_t errsize)
{
    char run[4096], rerr[1024];

    memset(r, 0, sizeof *r);
    if (etl_session_name_key(instance, r->key) != ETL_OK)
        return etl_fail(err, errsize, "--instance: '%s' is not an instance name (1 to 200 bytes, no '/' or control "
                    "characters)", instance);
    snprintf(r->instance, sizeof r->instance, "%s", instance);
    if (etl_session_runtime_dir(run, sizeof run, rerr, sizeof rerr) != ETL_OK) return etl_fail(err, errsize, "%s", rerr);
    if ((size_t)snprintf(r->dir, sizeof r->dir, "%s/%s.recording", run, r->key) >= sizeof r->dir)
        return etl_fail(err, errsize, "%s: the runtime directory's name is too long", run);
    return ETL_OK;
}

static void recording_clear(etl_recording *r)
{
    for (unsigned i = 0; i < r->count; i++) {
        free(r->names[i]);
        free(r->files[i]);
    }
    r->count = 0;
}

int etl_recording_new(etl_recording **out, const char *instance, const char *mode, const char *profile_id, char *err,
                      size_t errsize)
{
    etl_recording *r = calloc(1, sizeof *r);

    *out = NULL;
    if (!r) return etl_fail(err, errsize, "out of memory");
    if (recording_init(r, instance, err, errsize) != ETL_OK) {
        free(r);
        return ETL_FAILED;
    }
    if (strcmp(mode, "file") != 0 && strcmp(mode, "memory") != 0) {
        free(r);
        return etl_fail(err, errsize, "--mode: '%s': a profile records in file or memory mode", mode);
    }
    snprintf(r->mode, sizeof r->mode, "%s", mode);
    snprintf(r->profile, sizeof r->profile, "%s", profile_id);
    *out = r;
    return ETL_OK;
}

void etl_recording_close(etl_recording *r)
{
    if (!r) return;
    recording_clear(r);
    free(r);
}

/* Whether text can be a value of the state's lines (one line, nothing that would be read back
   otherwise). */
static int state_value(const char *text)
{
    return strlen(text) < STATE_LINE_MAX - 16 && !strchr(text, '\n') && !strchr(text, '\r');
}

int etl_recording_save(const etl_recording *r, char *err, size_t errsize)
{
    char path[4200], tmp[4300];
    FILE *f;
    int bad, e;

    if (!state_value(r->profile) || !state_value(r->log_dir))
        return etl_fail(err, errsize, "recording %s: a profile's Id or a directory's name that cannot be kept in its "
                    "state", r->instance);
    for (unsigned i = 0; i < r->count; i++)
        if (!state_value(r->names[i]) || !state_value(r->files[i]))
            return etl_fail(err, errsize, "recording %s: session %s: a name that cannot be kept in its state", r->instance,
                        r->names[i]);
    snprintf(path, sizeof path, "%s/state", r->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (!(f = fopen(tmp, "w"))) return etl_fail(err, errsize, "%s: %s", tmp, strerror(errno));
    fprintf(f, "mode %s\nprofile %s\n", r->mode, r->profile);
    if (r->log_dir[0] && strcmp(r->log_dir, r->dir) != 0) fprintf(f, "logdir %s\n", r->log_dir);
    for (unsigned i = 0; i < r->count; i++) fprintf(f, "session %s\nfile %s\n", r->names[i], r->files[i]);
    if (r->stopped) fputs("stopped\n", f);
    bad = ferror(f);
    e = fclose(f) != 0 || bad ? errno : 0;
    if (e || rename(tmp, path) != 0) {
        if (!e) e = errno;
        unlink(tmp);
        return etl_fail(err, errsize, "%s: %s", path, strerror(e ? e : EIO));
    }
    snprintf(path, sizeof path, "%s/%s", r->dir, LOG_DIR_LINK); /* the state names it now */
    unlink(path);
    return ETL_OK;
}

/* Whether path is an absolute path whose parent is dir (the state names its log files so). */
static int file_in(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    const char *base = path + n + 1;

    return strncmp(path, dir, n) == 0 && path[n] == '/' && *base && !strchr(base, '/') && strcmp(base, ".") != 0 &&
           strcmp(base, "..") != 0;
}

/* Whether the state's log directory is one that a recording of this user made: a directory
   named etlrecord-*, not a link, the user's and private; or not there any more (removed by
   whoever cleans the temporary directory: its files are then missing, said at the merge). */
static int log_dir_private(const char *dir)
{
    const char *base = strrchr(dir, '/');
    struct stat st;

    if (!base || strncmp(base + 1, "etlrecord-", 10) != 0) return 0;
    if (lstat(dir, &st) != 0) return errno == ENOENT;
    return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

/* Reads the state at path into r: ETL_OK, or ETL_FAILED (err names the path and line). */
static int state_read(etl_recording *r, const char *path, FILE *f, char *err, size_t errsize)
{
    char line[STATE_LINE_MAX];
    unsigned lineno = 0;

    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        lineno++;
        if (n && line[n - 1] == '\n') line[--n] = '\0';
        else if (!feof(f)) return etl_fail(err, errsize, "recording %s: %s: line %u: too long", r->instance, path, lineno);
        if (strncmp(line, "mode ", 5) == 0 && !r->mode[0] &&
            (strcmp(line + 5, "file") == 0 || strcmp(line + 5, "memory") == 0))
            snprintf(r->mode, sizeof r->mode, "%.15s", line + 5);
        else if (strncmp(line, "profile ", 8) == 0 && !r->profile[0] && line[8] && n - 8 < sizeof r->profile)
            snprintf(r->profile, sizeof r->profile, "%.1023s", line + 8);
        else if (strncmp(line, "logdir /", 8) == 0 && !r->log_dir[0] && n - 7 < sizeof r->log_dir && !r->count) {
            if (!log_dir_private(line + 7))
                return etl_fail(err, errsize, "recording %s: %s: line %u: %s is not a private log directory of this user",
                            r->instance, path, lineno, line + 7);
            snprintf(r->log_dir, sizeof r->log_dir, "%.4095s", line + 7);
        }
        else if (strcmp(line, "stopped") == 0) r->stopped = 1;
        else if (strncmp(line, "session ", 8) == 0 && r->count < ETL_RECORDING_MAX_COLLECTORS && line[8] &&
                 (!r->count || r->files[r->count - 1])) {
            if (!(r->names[r->count] = strdup(line + 8))) return etl_fail(err, errsize, "out of memory");
            r->files[r->count++] = NULL;
        } else if (strncmp(line, "file ", 5) == 0 && r->count && !r->files[r->count - 1]) {
            if (!r->log_dir[0]) snprintf(r->log_dir, sizeof r->log_dir, "%s", r->dir);
            /* The files are the recording's own: nothing outside its directories is named
               (cancel removes them). */
            if (!file_in(line + 5, r->log_dir))
                return etl_fail(err, errsize, "recording %s: %s: line %u: a log file outside %s", r->instance, path,
                            lineno, r->log_dir);
            if (!(r->files[r->count - 1] = strdup(line + 5))) return etl_fail(err, errsize, "out of memory");
        } else
            return etl_fail(err, errsize, "recording %s: %s is damaged: line %u is not one of its lines", r->instance,
                        path, lineno);
    }
    if (ferror(f)) return etl_fail(err, errsize, "recording %s: %s: %s", r->instance, path, strerror(errno));
    if (r->count && !r->files[r->count - 1])
        return etl_fail(err, errsize, "recording %s: %s is damaged: line %u: session %s has no file", r->instance, path,
                    lineno, r->names[r->count - 1]);
    if (!r->mode[0]) return etl_fail(err, errsize, "recording %s: %s is damaged (no mode)", r->instance, path);
    if (!r->profile[0]) return etl_fail(err, errsize, "recording %s: %s is damaged (no profile)", r->instance, path);
    if (!r->log_dir[0]) snprintf(r->log_dir, sizeof r->log_dir, "%s", r->dir);
    return ETL_OK;
}

int etl_recording_open(etl_recording **out, const char *instance, int *found, char *err, size_t errsize)
{
    etl_recording *r = calloc(1, sizeof *r);
    char path[4200];
    struct stat st;
    FILE *f;
    int rc;

    *out = NULL;
    *found = ETL_RECORDING_NONE;
    if (!r) return etl_fail(err, errsize, "out of memory");
    if (recording_init(r, instance, err, errsize) != ETL_OK) {
        free(r);
        return ETL_FAILED;
    }
    snprintf(path, sizeof path, "%s/state", r->dir);
    if (!(f = fopen(path, "r"))) {
        if (errno == ENOENT) {
            *found = stat(r->dir, &st) != 0 ? ETL_RECORDING_NONE : ETL_RECORDING_UNFINISHED;
            *out = r;
            return ETL_OK;
        }
        rc = etl_fail(err, errsize, "recording %s: %s: %s", instance, path, strerror(errno));
        free(r);
        return rc;
    }
    rc = state_read(r, path, f, err, errsize);
    fclose(f);
    if (rc != ETL_OK) {
        etl_recording_close(r);
        return rc;
    }
    *found = ETL_RECORDING_FOUND;
    *out = r;
    return ETL_OK;
}

const char *etl_recording_instance(const etl_recording *r) { return r->instance; }
const char *etl_recording_dir(const etl_recording *r) { return r->dir; }
const char *etl_recording_log_dir(const etl_recording *r) { return r->log_dir[0] ? r->log_dir : r->dir; }
const char *etl_recording_mode(const etl_recording *r) { return r->mode; }
const char *etl_recording_profile(const etl_recording *r) { return r->profile; }
unsigned etl_recording_session_count(const etl_recording *r) { return r->count; }
const char *etl_recording_session(const etl_recording *r, unsigned i) { return i < r->count ? r->names[i] : NULL; }
const char *etl_recording_file(const etl_recording *r, unsigned i) { return i < r->count ? r->files[i] : NULL; }
int etl_recording_stopped(const etl_recording *r) { return r->stopped; }

/* ---- claiming the instance ---- */

/* Whether any session of r has a live controller (the first such name into *name). */
static int recording_alive(const etl_recording *r, const char **name)
{
    for (unsigned i = 0; i < r->count; i++) {
        etl_control_answer *a;
        int rc = etl_control_request(&a, r->names[i], "query");
        etl_control_answer_free(a);
        if (rc != ETL_FATAL) {
            *name = r->names[i];
            return 1;
        }
    }
    return 0;
}

int etl_recording_claim(etl_recording *r, char *err, size_t errsize)
{
    const char *alive = NULL, *in = r->instance;
    etl_recording *old;
    int found, rc;

    if (mkdir(r->dir, 0700) == 0) return ETL_OK;
    if (errno != EEXIST) return etl_fail(err, errsize, "%s: %s", r->dir, strerror(errno));
    if (etl_recording_open(&old, in, &found, err, errsize) != ETL_OK) return ETL_FAILED;
    if (found == ETL_RECORDING_FOUND && recording_alive(old, &alive))
        rc = etl_fail(err, errsize, "recording %s is running (profile %s, session %s); stop or cancel it first, or give "
                  "another --instance", in, old->profile, alive);
    else if (found == ETL_RECORDING_UNFINISHED)
        rc = etl_fail(err, errsize, "recording %s: %s is there without its state (a start that did not finish); "
                  "'etlrecord cancel --profile --instance %s' removes it", in, r->dir, in);
    else if (found == ETL_RECORDING_FOUND && old->stopped)
        rc = etl_fail(err, errsize, "recording %s was stopped but not merged; its files are in %s ('etlrecord stop "
                  "--profile --instance %s -o FILE' merges them, 'etlrecord cancel --profile --instance %s' discards "
                  "them)", in, etl_recording_log_dir(old), in, in);
    else
        rc = etl_fail(err, errsize, "recording %s: its controllers are gone, its files are left in %s ('etlrecord cancel "
                  "--profile --instance %s' discards them)", in, etl_recording_log_dir(old), in);
    etl_recording_close(old);
    return rc;
}

/* ---- the collectors ---- */

/* The log file name of collector c: its FileName's last part, or its name made a file name. */
static void collector_file(const etl_wprp_collector *c, char *name, size_t size)
{
    const char *base = c->file_name ? strrchr(c->file_name, '/') : NULL;
    size_t n = 0;

    if (c->file_name) snprintf(name, size, "%s", base ? base + 1 : c->file_name);
    else {
        for (const char *s = c->name; *s && n < size - 5; s++)
            name[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                                *s == '_' || *s == '.'
                            ? *s
                            : '-';
        strcpy(name + n, ".etl");
    }
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "state") == 0 ||
        strcmp(name, "state.tmp") == 0 || strchr(name, '\n') || strchr(name, '\r'))
        snprintf(name, size, "collector.etl");
}

/* Where the log files go: in file mode a private directory on disk (0700, made here), in
   $TMPDIR when it is an absolute path, else in /var/tmp, as WPR writes them to a temporary
   directory (the runtime directory may be memory: /dev/shm, /run/user); in memory mode (the
   snapshots of the stop) the recording's directory. */
static int log_dir_make(etl_recording *r, char *err, size_t errsize)
{
    const char *tmp = getenv("TMPDIR");
    char link[4200];

    if (strcmp(r->mode, "file") != 0) {
        snprintf(r->log_dir, sizeof r->log_dir, "%s", r->dir);
        return ETL_OK;
    }
    if (!tmp || tmp[0] != '/') tmp = "/var/tmp";
    if ((size_t)snprintf(r->log_dir, sizeof r->log_dir, "%s/etlrecord-%s.XXXXXX", tmp, r->key) >= sizeof r->log_dir) {
        r->log_dir[0] = '\0';
        return etl_fail(err, errsize, "%s: the temporary directory's name is too long", tmp);
    }
    if (!mkdtemp(r->log_dir)) {
        int e = errno;
        r->log_dir[0] = '\0';
        return etl_fail(err, errsize, "recording %s: cannot make a directory for its log files in %s: %s", r->instance, tmp,
                    strerror(e));
    }
    /* Until the state names it, a link in the recording's directory does, so that removing a
       start that ended before its state was saved removes this directory too. A recording not
       claimed (no directory) has nothing to link from. */
    if (snprintf(link, sizeof link, "%s/%s", r->dir, LOG_DIR_LINK) < (int)sizeof link && symlink(r->log_dir, link) != 0 &&
        errno != ENOENT) {
        int e = errno;
        rmdir(r->log_dir);
        r->log_dir[0] = '\0';
        return etl_fail(err, errsize, "recording %s: %s: %s", r->instance, link, strerror(e));
    }
    return ETL_OK;
}

int etl_recording_add_collectors(etl_recording *r, const etl_wprp_profile *p, char *err, size_t errsize)
{
    if (p->collector_count > ETL_RECORDING_MAX_COLLECTORS)
        return etl_fail(err, errsize, "profile %s has more than %d collectors", p->id, ETL_RECORDING_MAX_COLLECTORS);
    if (!r->log_dir[0] && log_dir_make(r, err, errsize) != ETL_OK) return ETL_FAILED;
    for (size_t i = 0; i < p->collector_count; i++) {
        char name[256];
        collector_file(&p->collectors[i], name, sizeof name);
        if (!(r->names[r->count] = strdup(p->collectors[i].name)) ||
            !(r->files[r->count] = malloc(strlen(r->log_dir) + strlen(name) + 2))) {
            free(r->names[r->count]);
            return etl_fail(err, errsize, "out of memory");
        }
        sprintf(r->files[r->count], "%s/%s", r->log_dir, name);
        r->count++;
        for (unsigned k = 0; k + 1 < r->count; k++)
            if (strcmp(r->files[k], r->files[r->count - 1]) == 0)
                return etl_fail(err, errsize, "profile %s: collectors \"%s\" and \"%s\" have one log file name (%s); each "
                            "collector needs its own", p->id, r->names[k], r->names[r->count - 1], name);
    }
    return ETL_OK;
}

int etl_recording_controller_config(const etl_recording *r, unsigned i, const etl_wprp_collector *c, uint64_t memory,
                                    etl_recording_controller *out)
{
    etl_session_properties *p = &out->cfg.properties;
    unsigned n = 0;

    memset(out, 0, sizeof *out);
    if (i >= r->count) return ETL_FAILED;
    p->logger_name = r->names[i];
    p->buffer_size_kb = c->buffer_size_kb;
    p->minimum_buffers = etl_wprp_collector_buffer_count(c, memory);
    p->clock_type = ETL_CLOCK_PERFCOUNTER;
    p->engine_flags = ETL_ENGINE_SHARED;
    if (strcmp(r->mode, "memory") == 0) p->log_file_mode = ETL_MODE_BUFFERING;
    else {
        p->log_file_mode = ETL_MODE_FILE_SEQUENTIAL;
        p->log_file_name = r->files[i];
    }
    if (!(out->specs = calloc(c->provider_count + 1, sizeof *out->specs))) return ETL_FAILED;
    for (size_t k = 0; k < c->provider_count; k++) {
        const etl_wprp_provider *pv = &c->providers[k];
        if (!pv->has_guid) continue; /* (in the unmapped list) */
        out->specs[n].guid = pv->guid;
        out->specs[n].level = pv->level;
        out->specs[n].keywords = pv->keywords;
        out->specs[n++].stack = pv->stack;
    }
    out->cfg.providers = out->specs;
    out->cfg.provider_count = n;
    out->cap.kernel_flags = c->kind == ETL_WPRP_SYSTEM_COLLECTOR ? c->kernel_flags : 0;
    out->cap.kernel_stackwalk = c->kind == ETL_WPRP_SYSTEM_COLLECTOR ? c->stackwalk_flags : 0;
    out->cap.profile_interval_us = 1000;
    etl_controller_capture_hooks(&out->cap, &out->hooks);
    out->cfg.hooks = &out->hooks;
    return ETL_OK;
}

void etl_recording_controller_free(etl_recording_controller *ctl)
{
    if (!ctl) return;
    free(ctl->specs);
    ctl->specs = NULL;
}

int etl_recording_check(const etl_wprp_profile *p, char *err, size_t errsize)
{
    if (p->unavailable) return etl_fail(err, errsize, "cannot record on Linux: profile %s", p->unavailable);
    if (!p->collector_count) return etl_fail(err, errsize, "profile %s has no collector", p->id);
    if (p->collector_count > ETL_RECORDING_MAX_COLLECTORS)
        return etl_fail(err, errsize, "profile %s has more than %d collectors", p->id, ETL_RECORDING_MAX_COLLECTORS);
    for (size_t i = 0; i < p->collector_count; i++) {
        const etl_wprp_collector *c = &p->collectors[i];
        char key[ETL_SESSION_NAME_MAX + 1];
        if (etl_session_name_key(c->name, key) != ETL_OK)
            return etl_fail(err, errsize, "profile %s: collector \"%s\": not a session name (1 to 200 bytes, no '/' or "
                        "control characters)", p->id, c->name);
        if (c->kind != ETL_WPRP_SYSTEM_COLLECTOR) continue;
        if (!c->kernel_flags)
            return etl_fail(err, errsize, "profile %s: system collector \"%s\" has no keyword Linux can record", p->id,
                        c->name);
        if (geteuid() != 0)
            return etl_fail(err, errsize, "profile %s: system collector \"%s\" is a kernel session (the NT Kernel Logger's "
                        "events from Linux perf events), which needs root, as --kernel does", p->id, c->name);
    }
    return ETL_OK;
}

/* ---- resolving --profile ---- */

/* One PROFILE: a built-in profile's name or FILE.wprp[!PROFILE], in mode ("File", "Memory"),
   from *builtin (opened when first needed) or a file's set (added to sets). NULL when it names
   none (err). */
static const etl_wprp_profile *profile_lookup(const char *text, const char *mode, etl_wprp **builtin, etl_wprp **sets,
                                              unsigned *nsets, char *err, size_t errsize)
{
    const char *bang = strrchr(text, '!');
    const char *dot = strstr(text, ".wprp");
    char path[4096];
    const etl_wprp_profile *p = NULL;
    etl_wprp *w;

    if (dot || (bang && access(text, F_OK) != 0)) {
        snprintf(path, sizeof path, "%s", text);
        if (bang && access(text, F_OK) != 0 && (size_t)(bang - text) < sizeof path) path[bang - text] = '\0';
        else bang = NULL;
        if (etl_wprp_open(&w, path, err, errsize) != ETL_OK) return NULL;
        sets[(*nsets)++] = w;
        if (bang) p = etl_wprp_find(w, bang + 1, mode);
        else
            for (size_t i = 0; !p && i < etl_wprp_profile_count(w); i++)
                if (strcasecmp(etl_wprp_profile_at(w, i)->logging_mode, mode) == 0) p = etl_wprp_profile_at(w, i);
        if (!p) etl_fail(err, errsize, "%s: no %s profile%s%s", path, mode, bang ? " " : "", bang ? bang + 1 : "");
    } else {
        if (!*builtin && etl_wprp_builtin(builtin, err, errsize) != ETL_OK) return NULL;
        if (!(p = etl_wprp_find(*builtin, text, mode)))
            etl_fail(err, errsize, "--profile: no built-in profile '%s' in %s mode ('etlrecord profiles' lists them)", text,
                 mode);
    }
    if (p && strcasecmp(p->logging_mode, mode) != 0) {
        etl_fail(err, errsize, "--profile %s: profile %s records in %s mode; this recording is in %s mode (--mode)", text,
             p->id, p->logging_mode, mode);
        return NULL;
    }
    return p;
}

int etl_recording_profiles_resolve(etl_wprp **out, const char *const *texts, unsigned count, const char *mode,
                                   char *err, size_t errsize)
{
    etl_wprp *builtin = NULL, **sets = calloc(count + 1, sizeof *sets);
    const etl_wprp_profile **list = calloc(count + 1, sizeof *list);
    unsigned nsets = 0, n;
    int rc = ETL_FAILED;

    *out = NULL;
    if (!sets || !list) {
        etl_fail(err, errsize, "out of memory");
        goto done;
    }
    for (n = 0; n < count; n++)
        if (!(list[n] = profile_lookup(texts[n], mode, &builtin, sets, &nsets, err, errsize))) goto done;
    if (etl_wprp_combine(out, list, n, err, errsize) != ETL_OK) goto done;
    rc = ETL_OK;
done:
    for (unsigned i = 0; i < nsets; i++) etl_wprp_free(sets[i]);
    etl_wprp_free(builtin);
    free(sets);
    free(list);
    return rc;
}

/* ---- start, stop, merge, cancel, query ---- */

/* Stops session name quietly: what goes wrong to cb->message. */
static void stop_quietly(const char *name, const etl_recording_callbacks *cb)
{
    etl_control_answer *a;
    int rc = etl_control_request(&a, name, "stop");

    if (rc == ETL_FATAL) say(cb, "%s", a ? etl_control_answer_error(a) : "out of memory");
    else if (rc != ETL_OK) say(cb, "session %s: %s", name, etl_control_answer_error(a));
    etl_control_answer_free(a);
}

int etl_recording_start(const char *instance, const etl_wprp_profile *p, const char *mode,
                        const etl_recording_callbacks *cb, char *err, size_t errsize)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    unsigned started = 0;
    etl_recording *r;

    if (etl_recording_check(p, err, errsize) != ETL_OK) return ETL_FAILED;
    if (!cb || !cb->launch) return etl_fail(err, errsize, "recording %s: no launcher for its controllers", instance);
    if (etl_recording_new(&r, instance, mode, p->id, err, errsize) != ETL_OK) return ETL_FAILED;
    if (etl_recording_claim(r, err, errsize) != ETL_OK) {
        etl_recording_close(r);
        return ETL_FAILED;
    }
    if (etl_recording_add_collectors(r, p, err, errsize) != ETL_OK || etl_recording_save(r, err, errsize) != ETL_OK)
        goto undo;
    for (started = 0; started < r->count; started++) {
        etl_recording_controller ctl;
        int rc = etl_recording_controller_config(r, started, &p->collectors[started], memory, &ctl);
        if (rc != ETL_OK) etl_fail(err, errsize, "out of memory");
        else if (cb->launch(cb->arg, &ctl) != 0) {
            rc = ETL_FAILED;
            if (err && errsize) err[0] = '\0';
        }
        etl_recording_controller_free(&ctl);
        if (rc != ETL_OK) goto undo;
    }
    etl_recording_close(r);
    return ETL_OK;
undo:
    /* Nothing of a start that failed is left running, nor its files. */
    for (unsigned i = 0; i < started; i++) stop_quietly(r->names[i], cb);
    if (started) {
        size_t n = err && errsize ? strlen(err) : 0;
        if (err && errsize)
            snprintf(err + n, errsize - n, "%srecording %s not started: stopped the %u session%s it had started",
                     n ? "\n" : "", instance, started, started > 1 ? "s" : "");
    }
    etl_recording_remove(r, cb);
    etl_recording_close(r);
    return ETL_FAILED;
}

int etl_recording_stop(etl_recording *r, const etl_recording_callbacks *cb)
{
    char err[1024];
    int failed = 0;

    if (r->stopped) return ETL_OK;
    /* Memory mode: each session's buffers into its file first, all of them, then the stops. */
    for (unsigned i = 0; strcmp(r->mode, "memory") == 0 && i < r->count; i++) {
        etl_control_answer *a;
        char *req = malloc(strlen(r->files[i]) + 8);
        int rc = ETL_FATAL;
        if (req) {
            sprintf(req, "flush %s", r->files[i]);
            rc = etl_control_request(&a, r->names[i], req);
            free(req);
        } else
            a = NULL;
        if (rc != ETL_OK) {
            say(cb, "session %s: no snapshot: %s", r->names[i], a ? etl_control_answer_error(a) : "out of memory");
            failed = 1;
        }
        etl_control_answer_free(a);
    }
    for (unsigned i = 0; i < r->count; i++) {
        etl_control_answer *a;
        int rc = etl_control_request(&a, r->names[i], "stop");
        if (rc == ETL_FATAL || !a) {
            say(cb, "%s", a ? etl_control_answer_error(a) : "out of memory");
            failed = 1;
        } else if (cb && cb->answer)
            cb->answer(cb->arg, r->names[i], a);
        etl_control_answer_free(a);
    }
    r->stopped = 1;
    if (etl_recording_save(r, err, sizeof err) != ETL_OK) {
        say(cb, "%s", err);
        failed = 1;
    }
    return failed ? ETL_FAILED : ETL_OK;
}

int etl_recording_merge(const etl_recording *r, const char *out, const etl_merge_options *mo,
                        const etl_recording_callbacks *cb, char *err, size_t errsize)
{
    const char *paths[ETL_RECORDING_MAX_COLLECTORS];
    etl_merge_options none;
    unsigned n = 0;
    etl_merge *m;
    int rc;

    for (unsigned i = 0; i < r->count; i++) {
        struct stat st;
        if (stat(r->files[i], &st) == 0 && st.st_size > 0) paths[n++] = r->files[i];
        else say(cb, "session %s: no file %s to merge", r->names[i], r->files[i]);
    }
    if (!n) return etl_fail(err, errsize, "recording: nothing to merge into %s", out);
    if (!mo) {
        memset(&none, 0, sizeof none);
        mo = &none;
    }
    rc = etl_merge_open(&m, paths, n, mo);
    if (rc != ETL_FATAL) rc = etl_merge_write(m, out);
    if (rc == ETL_FATAL) etl_fail(err, errsize, "merging into %s: %s", out, m ? etl_merge_error(m) : "out of memory");
    etl_merge_close(m);
    return rc == ETL_FATAL ? ETL_FAILED : ETL_OK;
}

/* Removes what directory dir holds (its files) and the directory. */
static void dir_remove(const char *dir, const etl_recording_callbacks *cb)
{
    char path[4400];
    struct dirent *e;
    DIR *d = opendir(dir);

    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    if (rmdir(dir) != 0 && errno != ENOENT) say(cb, "%s: %s (left there)", dir, strerror(errno));
}

void etl_recording_remove(const etl_recording *r, const etl_recording_callbacks *cb)
{
    char path[4200];

    if (!r->mode[0]) { /* unfinished: no state, whatever its directory holds, and the log
                          directory its link names if that is one a recording made */
        char target[4200];
        ssize_t n;
        snprintf(path, sizeof path, "%s/%s", r->dir, LOG_DIR_LINK);
        if ((n = readlink(path, target, sizeof target - 1)) > 0) {
            target[n] = '\0';
            if (target[0] == '/' && log_dir_private(target)) dir_remove(target, cb);
        }
        dir_remove(r->dir, cb);
        return;
    }
    for (unsigned i = 0; i < r->count; i++) unlink(r->files[i]);
    if (r->log_dir[0] && strcmp(r->log_dir, r->dir) != 0 && rmdir(r->log_dir) != 0 && errno != ENOENT)
        say(cb, "%s: %s (left there)", r->log_dir, strerror(errno));
    snprintf(path, sizeof path, "%s/state", r->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/state.tmp", r->dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", r->dir, LOG_DIR_LINK);
    unlink(path);
    if (rmdir(r->dir) != 0 && errno != ENOENT) say(cb, "%s: %s (left there)", r->dir, strerror(errno));
}

void etl_recording_cancel(const etl_recording *r, const etl_recording_callbacks *cb)
{
    for (unsigned i = 0; !r->stopped && i < r->count; i++) stop_quietly(r->names[i], cb);
    etl_recording_remove(r, cb);
}

void etl_recording_query(const etl_recording *r,
                         void (*each)(void *arg, unsigned i, int rc, const etl_control_answer *a), void *arg)
{
    for (unsigned i = 0; !r->stopped && i < r->count; i++) {
        etl_control_answer *a;
        int rc = etl_control_request(&a, r->names[i], "query");
        each(arg, i, rc, a);
        etl_control_answer_free(a);
    }
}
