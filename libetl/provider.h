/* SPDX-License-Identifier: MIT */
/* The provider registry's side of sessions (libetl/provider.c). Private to libetl. */
#ifndef ETL_PROVIDER_H
#define ETL_PROVIDER_H

#include <stdint.h>

#include "etl.h"

/* Whether an event of level and keywords passes a session's filter (ETW's rules). */
int etl_enable_passes(uint8_t enable_level, uint64_t match_any, uint64_t match_all, uint8_t level,
                      uint64_t keywords);

/* Called by etl_session_stop before it frees s: s leaves every provider's set, and no writer
   is still writing through it when this returns. */
void etl_providers_forget_session(etl_session *s);

#endif
