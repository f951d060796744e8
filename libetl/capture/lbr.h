/* SPDX-License-Identifier: MIT */
/* LBR configuration of sessions and perf branch stacks (libetl/capture/lbr.c, lbrcapture.c). Private to libetl. */
#ifndef ETL_LBR_H
#define ETL_LBR_H
#ifndef ETL_BUILDING_LIBRARY
#error "capture/lbr.h is private to libetl: include <etl.h>"
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

/* perf's branch_sample_type for flags: 0, or -1 with the reason in err (filters perf cannot
   express, or every branch filtered out). */
int etl_lbr_perf_branch_type(uint32_t flags, uint64_t *out, char *err, size_t errsize);

/* What a PERF_RECORD_SAMPLE holds for LBR. */
typedef struct etl_lbr_perf_sample {
    uint32_t pid, tid, cpu;
    uint64_t time;            /* perf's clock (use_clockid: the session's) */
    uint64_t ip;              /* PERF_SAMPLE_IP; 0 without it */
    const uint8_t *callchain; /* PERF_SAMPLE_CALLCHAIN: callchain_nr u64 addresses inside the record */
    unsigned callchain_nr;
    unsigned count;           /* branches in the record */
    unsigned written;         /* of them, converted into the caller's array */
} etl_lbr_perf_sample;

/*
 * Decodes the PERF_RECORD_SAMPLE record rec (size bytes, perf_event_header first) of an event
 * opened with sample_type and branch_sample_type, and converts its branch stack into entries
 * (at most max; most recent first, as perf and Windows both order them): from and to, and in
 * reserved the LBR_INFO form of perf's flags (bit 63 mispredicted, 62 in transaction, 61
 * transaction abort, 15:0 cycles). Returns 0, or -1 with *why set when the record is not a
 * sample, its layout has a field this parser does not walk (PERF_SAMPLE_READ), or it is shorter
 * than its fields say. Reads nothing outside rec[0, size).
 */
int etl_lbr_perf_sample_decode(const uint8_t *rec, size_t size, uint64_t sample_type, uint64_t branch_sample_type,
                               etl_lbr_perf_sample *out, etl_lbr_entry *entries, unsigned max, const char **why);

/* How a perf sample of a trigger's branch-stack event is written (etl_lbr_write_perf_trigger). */
typedef struct etl_lbr_trigger_form {
    uint8_t trigger;          /* its PerfInfo type: 46 SampledProfile, 47 PMC interrupt (PMCSample) */
    uint16_t profile_source;  /* a PMC interrupt's KPROFILE_SOURCE */
    uint32_t filters;         /* the LBR record's LbrFilterFlags: the session's ETL_LBR_* flags */
    int stack;                /* 1: a StackWalk from the sample's call chain */
    uint64_t sample_type, branch_sample_type; /* the perf event's */
} etl_lbr_trigger_form;

/*
 * Decodes the sample rec as above and writes, at one timestamp, what the NT Kernel Logger
 * writes for a triggering event with LBR: the trigger (SampledProfile or PMCSample: the IP
 * and thread of the sample), its StackWalk when f->stack (the call chain's addresses, perf's
 * context markers left out), then its LBR record. The timestamp is the sample's time, or
 * min_ts when that is later (a processor's buffer never goes back in time); *used_ts (may be
 * NULL) gets it. ETL_OK, or ETL_FAILED (a bad record: nothing written; or the session lost
 * an event, which it counted).
 */
int etl_lbr_write_perf_trigger(etl_session *s, const etl_lbr_trigger_form *f, const uint8_t *rec, size_t size,
                               int64_t min_ts, int64_t *used_ts);

/* The frames of a perf call chain (nr u64 addresses at chain) as a StackWalk holds them:
   perf's context markers (PERF_CONTEXT_*) and the 0 ending a user stack left out, at most
   max. Returns how many went into frames. */
unsigned etl_perf_callchain_frames(const uint8_t *chain, uint64_t nr, uint64_t *frames, unsigned max);

/* "LBR capture: CAUSE (perf_event_open[ of what]: strerror(e))" in err, for perf_event_open's errno e. */
void etl_lbr_perf_cause(int e, const char *what, char *err, size_t errsize);

#endif
