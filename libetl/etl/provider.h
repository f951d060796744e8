/* SPDX-License-Identifier: MIT */
/* libetl public API, providers: register, ask whether enabled, write into the sessions that enabled them. */
#ifndef LIBETL_ETL_PROVIDER_H
#define LIBETL_ETL_PROVIDER_H

#include <stdint.h>

#include "types.h"
#include "writer.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Providers: register, ask whether enabled, write (ETW's EventRegister/EventWrite) ---- */

/*
 * A provider writes its events into every session that enabled it (etl_session_enable_provider)
 * and whose filter the event passes: ETW's rules, where an event passes when the session's
 * level is 0 (all levels), or the event's level is 0 (always) or not above the session's; and
 * its keywords are 0, or share a bit with the session's MatchAnyKeyword (0: any) and contain
 * every bit of its MatchAllKeyword. Providers registered before or after a session enables
 * them are picked up either way; many sessions may enable one provider, and one session many.
 * Registration and enabling take a lock; writing and asking do not.
 */
typedef struct etl_provider etl_provider;

/* ETL_OK, or ETL_FAILED without memory (*out NULL). */
ETL_API int etl_provider_register(etl_provider **out, const etl_guid *guid);
/* No write through p may be running or start. NULL is allowed. */
ETL_API void etl_provider_unregister(etl_provider *p);
ETL_API const etl_guid *etl_provider_guid(const etl_provider *p);
/* 1 when an event of this level and these keywords would go to at least one session. */
ETL_API int etl_provider_enabled(etl_provider *p, uint8_t level, uint64_t keywords);

/* etl_provider_write flags */
#define ETL_WRITE_STACK 0x1u /* add the caller's stack (a STACK_TRACE64 extended item) */
#define ETL_PROVIDER_MAX_STACK 192 /* frames at most, as ETW's stack walks */

/* Writes the event into every session it passes: ETL_OK (also when it passes none), or
   ETL_FAILED when a session lost it (counted in that session's EventsLost), or when a shared
   session was stopping (errno ESHUTDOWN, not counted: the event came after its end). */
ETL_API int etl_provider_write(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                               unsigned ndata, unsigned flags);
/*
 * The same, and after the event, in every session that took it, an LBR record
 * (etl_session_write_lbr: LbrFilterFlags filters, count entries, most recent branch first)
 * whose trigger timestamp is the event's own, to the tick, and whose process and thread ids
 * are the caller's: the pair Windows writes for an event with LBR. ETL_OK, or ETL_FAILED
 * when a session lost the event or its LBR record (counted in its EventsLost) or was stopping
 * (ESHUTDOWN, as for etl_provider_write); a session that did not take the event gets no LBR
 * record for it.
 */
ETL_API int etl_provider_write_lbr(etl_provider *p, const etl_event_descriptor *d, const etl_data *data,
                                   unsigned ndata, unsigned flags, uint32_t filters, const etl_lbr_entry *entries,
                                   unsigned count);

/* Enables provider (registered or not yet) in s with a level and keywords (replacing an
   earlier enable of it), or disables it (ETL_FAILED when it was not enabled). Stopping a
   session disables all its providers. */
ETL_API int etl_session_enable_provider(etl_session *s, const etl_guid *provider, uint8_t level,
                                        uint64_t match_any_keyword, uint64_t match_all_keyword);
/*
 * The same with EnableTraceEx2's enable properties: ETL_ENABLE_STACK_TRACE
 * (EVENT_ENABLE_PROPERTY_STACK_TRACE) gives every event of the provider that the session
 * takes the writer's stack (a STACK_TRACE64 extended item), as ETL_WRITE_STACK does for one
 * write; other sessions get the event without it. Other bits: ETL_FAILED, errno EINVAL.
 */
#define ETL_ENABLE_STACK_TRACE 0x4u
ETL_API int etl_session_enable_provider_ex(etl_session *s, const etl_guid *provider, uint8_t level,
                                           uint64_t match_any_keyword, uint64_t match_all_keyword,
                                           uint32_t enable_properties);
ETL_API int etl_session_disable_provider(etl_session *s, const etl_guid *provider);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_PROVIDER_H */
