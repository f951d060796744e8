/* SPDX-License-Identifier: MIT */
/* LBR configuration of sessions (engine/lbr.c), and where the session keeps it (session.c). Private to libetl. */
#ifndef ETL_ENGINE_LBR_H
#define ETL_ENGINE_LBR_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/lbr.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

#include "etl.h"

/* A session's LBR configuration (etl_session_configure_lbr); count 0: LBR is off. */
typedef struct etl_lbr_config {
    uint32_t flags;                                 /* ETL_LBR_FILTER_* | ETL_LBR_CALLSTACK */
    unsigned count;
    etl_classic_event_id events[ETL_LBR_MAX_EVENTS];
} etl_lbr_config;

/* ---- the session's side (session.c) ---- */

/* Where s keeps its configuration (read and written under lbr.c's lock). */
etl_lbr_config *etl_session_lbr_slot(etl_session *s);
/*
 * The EVENT_TRACE_FLAG_* bits (EnableFlags) of the kernel events s produces: the kernel
 * capture sets them when it starts, and etl_session_configure_lbr checks kernel triggers
 * against them. 0 (no kernel events) until then.
 */
void etl_session_set_kernel_flags(etl_session *s, uint32_t flags);
uint32_t etl_session_kernel_flags(const etl_session *s);

/* 1 when s enables provider (provider.c). */
int etl_session_provider_enabled(etl_session *s, const etl_guid *provider);

/* ---- for the kernel capture ---- */

/* A copy of s's LBR configuration (count 0: none). */
void etl_session_lbr_config(etl_session *s, etl_lbr_config *out);
/* 1 when the event of this GUID (provider or kernel group) and type is one of cfg's triggers. */
int etl_lbr_trigger_matches(const etl_lbr_config *cfg, const etl_guid *guid, uint8_t type);
/* The EVENT_TRACE_FLAG_* bit that produces a kernel group's event, or 0 when libetl has none
   for it (*is_kernel tells whether guid is a kernel group at all). */
uint32_t etl_lbr_kernel_flag_for(const etl_guid *guid, uint8_t type, int *is_kernel);

#endif
