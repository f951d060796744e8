/* SPDX-License-Identifier: MIT */
/* The provider registry's side of sessions (libetl/engine/provider.c). Private to libetl. */
#ifndef ETL_PROVIDER_H
#define ETL_PROVIDER_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/provider.h is private to libetl: include <etl.h>"
#endif

#include <stdint.h>

#include "etl.h"

/* Whether an event of level and keywords passes a session's filter (ETW's rules). */
int etl_enable_passes(uint8_t enable_level, uint64_t match_any, uint64_t match_all, uint8_t level,
                      uint64_t keywords);

/* Called by etl_session_stop before it frees s: s leaves every provider's set, and no writer
   is still writing through it when this returns. */
void etl_providers_forget_session(etl_session *s);

/* ---- Shared sessions (libetl/engine/session.c) and the provider processes that write into them
   (libetl/engine/attach.c); doc/etlrecord-design.md ---- */

/* One provider a shared session enables, as provider processes read it from the session. */
#define ETL_SHARED_MAX_ENABLES 64
typedef struct etl_shared_enable {
    etl_guid guid;
    uint8_t level;
    uint8_t reserved1;
    uint16_t properties;           /* ETL_ENABLE_* */
    uint8_t reserved[4];
    uint64_t any, all;
} etl_shared_enable;

/* 1 for a shared session this process controls (it publishes its enables). */
int etl_session_is_shared_controller(const etl_session *s);
/* The controller publishes the providers s enables (at most ETL_SHARED_MAX_ENABLES; ETL_FAILED
   beyond, with nothing changed). */
int etl_session_enables_publish(etl_session *s, const etl_shared_enable *e, unsigned n);
/* Reads them: *n entries into out (room for ETL_SHARED_MAX_ENABLES). Returns the generation
   they belong to. */
uint64_t etl_session_enables_read(const etl_session *s, etl_shared_enable *out, unsigned *n);
/* The generation (bumped by every change of the enables and by the stop), and whether the
   session still takes events (0 once its controller stops it). */
uint64_t etl_session_generation(const etl_session *s);
int etl_session_running(const etl_session *s);
/* The pid of the session's controller. */
long etl_session_controller_pid(const etl_session *s);

/* Maps the shared session whose file is path into this process, for writing only (no flush
   thread, no file): ETL_OK; ETL_FAILED with a message when it is not a session file of this
   user, is stopping, or its address range is taken in this process (counted in the session's
   writers_refused). */
int etl_session_attach(etl_session **out, const char *path, char *err, size_t errsize);
/* Unmaps it. No write through s may be running or start (etl_providers_forget_session first). */
void etl_session_detach(etl_session *s);

/* 1 when this process holds the session name (etl_session_name_claim). sessionname.c. */
int etl_session_name_held(const char *name);

/* Provider processes: attach now to the shared sessions of the runtime directory that enable
   providers, and keep watching it (a thread, started once per process). attach.c. */
void etl_shared_sessions_watch(void);

#endif
