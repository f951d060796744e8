/* SPDX-License-Identifier: MIT */
/* libetl public API, session control: a named session's controller and its clients (etl.h includes it). */
#ifndef LIBETL_ETL_CONTROL_H
#define LIBETL_ETL_CONTROL_H

#include "types.h"
#include "kernel.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Session control: a session's controller and its clients (doc/etlrecord-design.md) ---- */

/*
 * A controller owns a named session for its life: it claims the name, starts the session,
 * enables its providers, and answers requests on the control socket RUNTIME/KEY.sock (AF_UNIX,
 * 0600; RUNTIME and KEY as for session names above), one line each: "query", "stop", "flush",
 * "flush PATH" (a buffering session's snapshot), "update provider SPEC flush-timer S
 * max-buffers N" and "consume" (the connection becomes the session's real-time consumer, served
 * by a thread of the controller). An answer is "KEY VALUE" lines, then "ok" or "error MESSAGE".
 * etlrecord is a controller and a client; etl_reader_open_session is a client.
 */

/* A provider as etlrecord's --provider gives it: GUID|NAME[:LEVEL[:KEYWORDS]]. */
typedef struct etl_provider_spec {
    etl_guid guid;
    uint8_t level;     /* 0: all */
    uint64_t keywords; /* MatchAnyKeyword; 0: all */
    int stack;         /* its events with their writers' stacks (ETL_ENABLE_STACK_TRACE) whatever
                          the controller's stackwalk says (a profile's EventProvider Stack="true";
                          the parse leaves it 0) */
} etl_provider_spec;
/* ETL_OK, or ETL_FAILED with a message in err (not a GUID or a known name, a level above 255,
   keywords that are not a number). */
ETL_API int etl_provider_spec_parse(const char *spec, etl_provider_spec *out, char *err, size_t errsize);
/* Logging modes and clocks by the names etlrecord and the answers use: sequential, circular,
   newfile, buffering, realtime (and "sequential+realtime" from etl_session_mode_name);
   perfcounter, systemtime, cycle. The lookups give ETL_FAILED for an unknown name; the names
   "?" for an unknown value. */
ETL_API int etl_session_mode_from_name(const char *name, uint32_t *mode);
ETL_API const char *etl_session_mode_name(uint32_t mode);
ETL_API int etl_clock_from_name(const char *name, int *clock);
ETL_API const char *etl_clock_name(int clock);

/* What plugs into a controller's session (the kernel capture and LBR: etl_controller_capture). */
typedef struct etl_controller_hooks {
    /* After the providers are enabled, before the socket listens: ETL_OK, or ETL_FAILED with
       the message in err (the session is then stopped and the name released). */
    int (*start)(void *arg, etl_session *s, char *err, size_t errsize);
    /* Lines ("KEY VALUE\n") for the answers of query and update, after the properties, into
       out (size bytes, NUL-terminated, cut short when too small). */
    void (*describe)(void *arg, char *out, size_t size);
    /* Before the session stops. */
    void (*stop)(void *arg);
    void *arg;
    /* Before a flush or a snapshot of session s (NULL: none): what the plug-in holds back is
       written into it first. */
    void (*flush)(void *arg, etl_session *s);
    /* 1: the start hook starts a kernel capture (etl_controller_capture_hooks sets it when
       cap->kernel_flags is not 0): the only kind of session that may be named
       ETL_KERNEL_LOGGER_NAME. */
    int kernel;
} etl_controller_hooks;

/* The NT Kernel Logger's name (KERNEL_LOGGER_NAME). Names are compared without regard to case,
   and a name is one session's at a time: the kernel session of that name is the singleton. */
#define ETL_KERNEL_LOGGER_NAME "NT Kernel Logger"

typedef struct etl_controller_config {
    etl_session_properties properties;  /* logger_name: the session's name (required);
                                           log_file_name absolute (the controller may chdir) */
    const etl_provider_spec *providers; /* enabled at the start (copied) */
    unsigned provider_count;
    int stackwalk;                      /* providers enabled with ETL_ENABLE_STACK_TRACE */
    const etl_controller_hooks *hooks;  /* NULL: none; kept by the caller while the controller lives */
} etl_controller_config;

typedef struct etl_controller etl_controller;
typedef struct etl_control_answer etl_control_answer;

/*
 * Claims the name, starts the session, enables its providers, runs the start hook and listens
 * on the control socket. ETL_OK; or ETL_FAILED with *out holding only the message
 * (etl_controller_error, then etl_controller_close), or NULL without memory. *orphan_removed
 * (may be NULL) tells, in either case, whether a dead controller's session of the name was
 * cleaned up. The message names the session ("session NAME: ...") or the name taken. Refused
 * before anything starts: a session named ETL_KERNEL_LOGGER_NAME (in any case) that is not a
 * kernel session (cfg->hooks->kernel), and a private logger (ETL_MODE_PRIVATE_LOGGER: its own
 * process's, which no controller serves to others).
 */
ETL_API int etl_controller_start(etl_controller **out, const etl_controller_config *cfg, int *orphan_removed);
ETL_API const char *etl_controller_error(const etl_controller *c);
/* The session (NULL once stopped), for its owner to write into. */
ETL_API etl_session *etl_controller_session(etl_controller *c);
/* Serves requests, one connection at a time, until one stops the session (1) or done(arg)
   is true (0); done is asked at least every 200 ms and whenever wake_fd (-1: none) is
   readable. Consumers are served by threads of their own meanwhile. */
ETL_API int etl_controller_serve(etl_controller *c, int (*done)(void *), void *arg, int wake_fd);
/* Stops the session (unless a request did) and releases the name; *answer (out may be NULL)
   gets what a stop request is answered, or NULL without memory or when a request stopped it.
   ETL_OK, or ETL_FAILED when the file could not be finished. */
ETL_API int etl_controller_stop(etl_controller *c, etl_control_answer **answer);
/* Stops the session as etl_controller_stop, if it runs, and frees c. NULL is allowed. */
ETL_API void etl_controller_close(etl_controller *c);

/*
 * A client: sends request to the controller of the session name and reads its answer into
 * *out. ETL_OK when it answered "ok"; ETL_FAILED when it answered "error MESSAGE"
 * (etl_control_answer_error gives MESSAGE); ETL_FATAL when no answer came: no session of that
 * name, an orphaned one, a controller that died in the middle, a runtime directory that
 * cannot be used; the message, naming the session, in etl_control_answer_error. A name that a live controller holds while its socket
 * is not there yet (the controller is starting its session) is waited for, up to 5 s.
 * *out is NULL only without memory; free it with etl_control_answer_free.
 */
ETL_API int etl_control_request(etl_control_answer **out, const char *name, const char *request);
ETL_API unsigned etl_control_answer_count(const etl_control_answer *a);
/* Line i, "KEY VALUE" (the value is the rest of the line). */
ETL_API const char *etl_control_answer_line(const etl_control_answer *a, unsigned i);
/* The value of the first line of key, or NULL. */
ETL_API const char *etl_control_answer_value(const etl_control_answer *a, const char *key);
ETL_API const char *etl_control_answer_error(const etl_control_answer *a);
ETL_API void etl_control_answer_free(etl_control_answer *a);

/* (The capture layer's, libetl/capture/controlhooks.c:) a controller's kernel capture
   (etl_session_enable_kernel) and LBR (etl_session_configure_lbr, etl_lbr_capture_start) as
   its hooks: fill cap, then etl_controller_capture_hooks fills hooks, which use cap (it must
   outlive the controller). The kernel capture starts after the providers are enabled. */
typedef struct etl_controller_capture {
    uint32_t kernel_flags, kernel_stackwalk; /* ETL_KERNEL_*; 0: not a kernel session */
    uint32_t profile_interval_us;            /* 0: 1000 */
    etl_classic_event_id lbr_events[ETL_LBR_MAX_EVENTS];
    unsigned lbr_count;                      /* 0: no LBR */
    uint32_t lbr_flags;
    const char *lbr_text, *lbr_filter_text;  /* as given, for the answers (kept by the caller) */
    etl_lbr_capture *lbr_capture;            /* the capture, while it runs */
    char note[160];                          /* set by the start hook: etl_session_kernel_note,
                                                for the caller to tell ("" if nothing) */
} etl_controller_capture;
ETL_API void etl_controller_capture_hooks(etl_controller_capture *cap, etl_controller_hooks *hooks);

#ifdef __cplusplus
}
#endif

#endif /* LIBETL_ETL_CONTROL_H */
