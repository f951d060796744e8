/* SPDX-License-Identifier: MIT */
/* libetl public API: recordings of WPR profiles (a controller per collector, merged at the stop), as etlrecord start/stop/query/cancel --profile runs them. */
#ifndef LIBETL_ETL_RECORDING_H
#define LIBETL_ETL_RECORDING_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "control.h"
#include "merge.h"
#include "profiles.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A recording, in the manner of wpr -start/-stop/-cancel/-status, is the sessions of a
 * resolved profile's collectors, each owned by a controller of its own (etl_controller_start,
 * run by a launcher the caller gives: etlrecord forks one into the background), under an
 * instance name. Its state lives in the runtime directory (etl_session_runtime_dir), in
 * RUNTIME/KEY.recording (KEY: the instance's name as a session name's key, mode 0700), whose
 * creation claims the instance; the file "state" there holds, one "KEY VALUE" line each, the
 * mode, the profile's Id, the log directory, each session's name and log file, and "stopped"
 * once a stop stopped them.
 *
 * The log files: in memory mode, the snapshots taken at the stop, in the recording's
 * directory; in file mode, the sessions' files, in a private directory (0700) on disk,
 * $TMPDIR/etlrecord-KEY.XXXXXX ($TMPDIR when it is an absolute path, else /var/tmp), named in
 * the state, as WPR writes them to a temporary directory: a long recording does not fill the
 * memory that the runtime directory (/dev/shm, /run/user) may be. A stop whose merge succeeded
 * and a cancel remove it; a failed stop keeps it (etl_recording_log_dir says where).
 *
 * Nothing here prints: each call's failure is a message in err (the caller's buffer,
 * errsize bytes, NUL-terminated), possibly several lines apart by '\n'; what goes wrong
 * session by session while the calls go on (a session that cannot be stopped, a file that is
 * not there to merge) goes to the message callback.
 */
typedef struct etl_recording etl_recording;

#define ETL_RECORDING_DEFAULT_INSTANCE "etlrecord"
#define ETL_RECORDING_MAX_COLLECTORS 64

/* What etl_recording_open found of an instance. */
#define ETL_RECORDING_FOUND      0 /* a recording, its state read */
#define ETL_RECORDING_NONE       1 /* no such recording */
#define ETL_RECORDING_UNFINISHED 2 /* its directory without its state: a start that ended before any
                                      session started (etl_recording_remove removes it, and the
                                      log directory on disk it had made) */

/* One collector's controller, as etl_recording_controller_config makes it: cfg's hooks point
   into cap and hooks, so that the struct must not be moved or copied while used. */
typedef struct etl_recording_controller {
    etl_controller_config cfg;
    etl_controller_capture cap;
    etl_controller_hooks hooks;
    etl_provider_spec *specs;
} etl_recording_controller;

/* What the caller plugs in (any may be NULL). */
typedef struct etl_recording_callbacks {
    /* A message of the recording's progress (one line, no newline): a session that could not be
       stopped or queried, a log file not there to merge, a directory left behind. */
    void (*message)(void *arg, const char *text);
    /* The stop's answer of each session (its final statistics), in the sessions' order. */
    void (*answer)(void *arg, const char *session, const etl_control_answer *a);
    /* Starts the controller of one collector (cfg, with ctl->cap.note for what the kernel
       capture's start tells) and returns once its session runs: 0, or -1 when it did not start
       (the launcher said why). Required by etl_recording_start. */
    int (*launch)(void *arg, etl_recording_controller *ctl);
    void *arg;
} etl_recording_callbacks;

/*
 * The profiles that etlrecord's --profile names (each a built-in profile's name, optionally
 * with .Light or .Verbose, or FILE.wprp[!PROFILE]), in mode ("File" or "Memory"), resolved and
 * combined into *out, a set of one profile (etl_wprp_free it). ETL_OK, or ETL_FAILED with the
 * message in err (a file that cannot be read, no such profile, a profile of the other mode).
 */
ETL_API int etl_recording_profiles_resolve(etl_wprp **out, const char *const *texts, unsigned count, const char *mode,
                                           char *err, size_t errsize);

/* Whether profile p can be recorded here, before anything starts: it is not Windows-only, it
   has collectors (at most ETL_RECORDING_MAX_COLLECTORS), whose names are session names, and
   its system collector has kernel flags and the process is root. ETL_OK, or ETL_FAILED (err). */
ETL_API int etl_recording_check(const etl_wprp_profile *p, char *err, size_t errsize);

/* A recording of instance in mode ("file" or "memory") of the profile of Id profile_id, in
   memory only (nothing claimed, no session): its directory named, no collector yet.
   ETL_OK, or ETL_FAILED (err: not an instance name, no runtime directory, no memory). */
ETL_API int etl_recording_new(etl_recording **out, const char *instance, const char *mode, const char *profile_id,
                              char *err, size_t errsize);
/* Claims the instance by creating the recording's directory. ETL_OK, or ETL_FAILED with err
   saying why: a recording of the instance runs (its profile and a live session named), was
   stopped but not merged, lost its controllers, or is a start that did not finish. */
ETL_API int etl_recording_claim(etl_recording *r, char *err, size_t errsize);
/* Adds p's collectors: each session's name and its log file (the collector's FileName's last
   part, or its name made a file name), in file mode creating the private log directory first.
   ETL_OK, or ETL_FAILED (err: two collectors' log files of one name, a directory that cannot
   be made, no memory). */
ETL_API int etl_recording_add_collectors(etl_recording *r, const etl_wprp_profile *p, char *err, size_t errsize);
/* Writes the state (through a temporary file, renamed). ETL_OK, or ETL_FAILED (err). */
ETL_API int etl_recording_save(const etl_recording *r, char *err, size_t errsize);

/* Reads the recording of instance into *out, always set on ETL_OK (then close it), *found
   saying what there is (ETL_RECORDING_FOUND, _NONE or _UNFINISHED: the latter two with only the
   directory's name). ETL_FAILED with err: not an instance name, a state that cannot be read or
   is damaged (its path and line named); *out is then NULL. */
ETL_API int etl_recording_open(etl_recording **out, const char *instance, int *found, char *err, size_t errsize);
ETL_API void etl_recording_close(etl_recording *r);

/* The recording's parts, valid until etl_recording_close. */
ETL_API const char *etl_recording_instance(const etl_recording *r);
ETL_API const char *etl_recording_dir(const etl_recording *r);
/* Where the log files are: the private directory on disk (file mode), else the recording's. */
ETL_API const char *etl_recording_log_dir(const etl_recording *r);
ETL_API const char *etl_recording_mode(const etl_recording *r);
ETL_API const char *etl_recording_profile(const etl_recording *r);
ETL_API unsigned etl_recording_session_count(const etl_recording *r);
ETL_API const char *etl_recording_session(const etl_recording *r, unsigned i);
ETL_API const char *etl_recording_file(const etl_recording *r, unsigned i);
/* Whether a stop stopped its sessions (their merge may have failed). */
ETL_API int etl_recording_stopped(const etl_recording *r);

/* Collector c's controller as session i of r (memory: the machine's memory in bytes, for
   buffer counts given as a share of it): out filled (zeroed first), to be freed with
   etl_recording_controller_free. ETL_OK, or ETL_FAILED without memory. */
ETL_API int etl_recording_controller_config(const etl_recording *r, unsigned i, const etl_wprp_collector *c,
                                            uint64_t memory, etl_recording_controller *out);
ETL_API void etl_recording_controller_free(etl_recording_controller *ctl);

/*
 * Starts the recording of instance of profile p (a resolved profile: etl_wprp_profile_at of
 * etl_recording_profiles_resolve's set) in mode: checks it, claims the instance, saves the
 * state, and launches each collector's controller with cb->launch. ETL_OK; or ETL_FAILED with
 * err saying why, nothing of it left running or on disk (the sessions it started stopped,
 * which err says; err is "" when the launcher's failure was all there was, said by it).
 */
ETL_API int etl_recording_start(const char *instance, const etl_wprp_profile *p, const char *mode,
                                const etl_recording_callbacks *cb, char *err, size_t errsize);

/*
 * Stops the sessions of r unless a stop did: in memory mode each session's snapshot into its
 * file first (all of them), then each session's stop, its answer to cb->answer; then saves
 * r as stopped. ETL_OK, or ETL_FAILED when a snapshot or a stop got no answer (said to
 * cb->message).
 */
ETL_API int etl_recording_stop(etl_recording *r, const etl_recording_callbacks *cb);

/*
 * Merges the log files of r into out with the merge engine (mo: its callbacks and cancel flag;
 * NULL: none); a session's file that is not there or empty is said to cb->message and left
 * out. ETL_OK, or ETL_FAILED with err (nothing to merge, the merge's failure).
 */
ETL_API int etl_recording_merge(const etl_recording *r, const char *out, const etl_merge_options *mo,
                                const etl_recording_callbacks *cb, char *err, size_t errsize);

/* Removes the recording: its log files and directories, its state (or, for an unfinished
   one, whatever its directory holds). What cannot be removed is said to cb->message. */
ETL_API void etl_recording_remove(const etl_recording *r, const etl_recording_callbacks *cb);

/* Cancels the recording: stops its sessions (unless a stop did; a session that cannot be
   stopped is said to cb->message), then removes it. */
ETL_API void etl_recording_cancel(const etl_recording *r, const etl_recording_callbacks *cb);

/* Queries each session of r (none once stopped): each(arg, i, rc, answer) with rc and answer
   as etl_control_request gives them (answer NULL without memory; freed after each). */
ETL_API void etl_recording_query(const etl_recording *r,
                                 void (*each)(void *arg, unsigned i, int rc, const etl_control_answer *a), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* LIBETL_ETL_RECORDING_H */
