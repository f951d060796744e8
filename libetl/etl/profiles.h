/* SPDX-License-Identifier: MIT */
/* libetl public API: recording profiles as Windows Performance Recorder has them (.wprp files and the built-in profiles), resolved. */
#ifndef LIBETL_ETL_PROFILES_H
#define LIBETL_ETL_PROFILES_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A set of recording profiles: the built-in ones (etl_wprp_builtin) or a .wprp file's
 * (etl_wprp_open, etl_wprp_parse), each resolved as it would run: Base= inheritance (from the
 * same file, then from the built-in profiles by WPR's ids), Operation Set/Add/Remove, collectors
 * with their providers. Everything the set hands out is owned by it and valid until
 * etl_wprp_free.
 *
 * A SystemProvider's keywords and stacks become libetl's kernel flags (ETL_KERNEL_*,
 * etl/session.h) where Linux can honour them; every keyword, stack or option that it cannot
 * honour is named in the profile's unmapped list, never dropped.
 */
typedef struct etl_wprp etl_wprp;

/* One event provider of an event collector. */
typedef struct etl_wprp_provider {
    const char *id;               /* the EventProvider's Id */
    const char *name;             /* its Name as written: a provider name or a GUID */
    etl_guid guid;                /* the GUID Name gives (etl_guid_parse_provider) */
    int has_guid;                 /* 0: Name is a name libetl does not know the GUID of */
    uint8_t level;                /* Level (default 5, verbose) */
    uint64_t keywords;            /* the Keywords' values OR'd (0: none given, all events) */
    int stack;                    /* Stack="true" */
    int non_paged_memory;         /* NonPagedMemory="true" (Linux: no meaning; in unmapped) */
    int capture_state_on_start;   /* CaptureStateOnStart given */
    int capture_state_on_save;    /* CaptureStateOnSave given */
} etl_wprp_provider;

/* One SystemProvider keyword or stack and the kernel flags it became (0: unmapped). */
typedef struct etl_wprp_keyword {
    const char *name;             /* WPR's name: "ProcessThread", "CSwitch", ... */
    uint32_t flags;               /* ETL_KERNEL_* */
} etl_wprp_keyword;

#define ETL_WPRP_SYSTEM_COLLECTOR 1
#define ETL_WPRP_EVENT_COLLECTOR  2

/* One collector of a profile: the system collector (the kernel session) or an event collector. */
typedef struct etl_wprp_collector {
    int kind;                     /* ETL_WPRP_SYSTEM_COLLECTOR or ETL_WPRP_EVENT_COLLECTOR */
    const char *id, *name;        /* Id and Name ("NT Kernel Logger" for WPR's system collector) */
    const char *file_name;        /* FileName, NULL when not given */
    uint32_t buffer_size_kb;      /* BufferSize (0: not given) */
    uint32_t buffers;             /* Buffers: a count, or a percentage (buffers_percent) */
    int buffers_percent;          /* PercentageOfTotalMemory="true" */
    /* system collector: */
    uint32_t kernel_flags;        /* ETL_KERNEL_* the keywords give */
    uint32_t stackwalk_flags;     /* ETL_KERNEL_STACKWALK_ALL bits the stacks give, within kernel_flags */
    const etl_wprp_keyword *keywords; size_t keyword_count;
    const etl_wprp_keyword *stacks; size_t stack_count;
    /* event collector: */
    const etl_wprp_provider *providers; size_t provider_count;
} etl_wprp_collector;

/* One profile, resolved. */
typedef struct etl_wprp_profile {
    const char *id;               /* "GeneralProfile.Light.File" */
    const char *name;             /* "GeneralProfile" */
    const char *description;
    const char *detail_level;     /* "Light" or "Verbose" */
    const char *logging_mode;     /* "File" or "Memory" */
    const char *unavailable;      /* NULL, or why Linux cannot record this profile at all */
    const etl_wprp_collector *collectors; size_t collector_count;
    const char *const *unmapped; size_t unmapped_count; /* what Linux cannot honour, one line each */
} etl_wprp_profile;

/*
 * Parses a .wprp document (xml, size bytes; name is the file's name for messages) into *out,
 * its profiles resolved against the file's own definitions and the built-in profiles. ETL_OK,
 * or ETL_FAILED with "NAME:LINE: what is wrong" in err (not XML, not WPR's root, an element
 * without its Id, a reference or Base= naming nothing, a cycle of Base=, a value out of range).
 */
ETL_API int etl_wprp_parse(etl_wprp **out, const void *xml, size_t size, const char *name, char *err, size_t errsize);
/* The same, reading the file at path (at most 64 MiB). */
ETL_API int etl_wprp_open(etl_wprp **out, const char *path, char *err, size_t errsize);
/* The built-in profiles (WPR's names and ids; Windows-only ones with their unavailable reason). */
ETL_API int etl_wprp_builtin(etl_wprp **out, char *err, size_t errsize);
ETL_API void etl_wprp_free(etl_wprp *w);

ETL_API size_t etl_wprp_profile_count(const etl_wprp *w);
ETL_API const etl_wprp_profile *etl_wprp_profile_at(const etl_wprp *w, size_t index);
/*
 * The profile text names, as WPR takes it: an Id ("CPU.Light.File"), or a Name with an optional
 * detail level ("CPU", "CPU.Light", "CPU.Verbose": Verbose when not given), in mode ("File" or
 * "Memory"; NULL: File). NULL when none matches.
 */
ETL_API const etl_wprp_profile *etl_wprp_find(const etl_wprp *w, const char *text, const char *mode);

/*
 * Several profiles recorded together, combined as WPR combines them (wpr -start A -start B):
 * collectors of the same Name (ASCII case ignored) become one, with their SystemProvider
 * keywords and stacks united (the kernel flags and stack walks OR'd) and their event providers
 * united (a provider given twice, by GUID, or by name where it has none: the higher level, the
 * keywords OR'd with 0, all events, winning, a stack if either asks one), the larger BufferSize
 * and Buffers (Buffers of different kinds, a count and a percentage: the first's), the first
 * FileName given. *out gets a new set holding that one profile, which owns copies of everything:
 * its Id is the Ids joined with '+', its name, detail level and logging mode the first's, its
 * unavailable reason the first one any has, its unmapped list all of theirs. ETL_OK, or
 * ETL_FAILED with err (no profile, a system and an event collector of one Name, out of memory)
 * and *out NULL.
 */
ETL_API int etl_wprp_combine(etl_wprp **out, const etl_wprp_profile *const *profiles, size_t count, char *err,
                             size_t errsize);

/*
 * The number of buffers collector c asks for: its Buffers, or, with PercentageOfTotalMemory,
 * that share of total_memory (bytes) in buffers of its BufferSize (64 KB when not given), at
 * least 1 and at most UINT32_MAX; 0 when it gives no Buffers.
 */
ETL_API uint32_t etl_wprp_collector_buffer_count(const etl_wprp_collector *c, uint64_t total_memory);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_PROFILES_H */
