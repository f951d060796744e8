/* SPDX-License-Identifier: MIT */
/* libetl public API, symbols: the function (and source line) at a sample's or stack frame's address. */
#ifndef LIBETL_ETL_SYMBOLS_H
#define LIBETL_ETL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A symbolizer learns a trace's images and what identifies their symbols from its events
 * (Image Load/DCStart/DCEnd/Unload, Process and Thread events, KernelTraceControl's ImageID and
 * DbgID_RSDS, the Linux capture's LinuxImageID BuildId, KernelSymbols and KernelModule, the .NET
 * runtime's ModuleLoad and MethodLoadVerbose/MethodDCStartVerbose/MethodDCEndVerbose), then
 * names the function at an address of a process at a time:
 *
 *   - ELF images through elfutils (libdwfl): found by build-id (in the symbol directories, their
 *     .build-id/ trees and debuginfod's cache layout, /usr/lib/debug/.build-id), else by path
 *     when the file's build-id is the recorded one; DWARF gives the source line and the inlined
 *     frames, .symtab or .dynsym the function where there is no DWARF;
 *   - kernel addresses through the recorded kallsyms;
 *   - PE images through their PDB (GUID, age, name from DbgID_RSDS) found in the symbol
 *     directories in symstore's layout (name.pdb/GUIDAGE/name.pdb) and read by llvm-symbolizer,
 *     run as one co-process;
 *   - JIT-compiled and ReadyToRun .NET methods from the runtime's method events.
 *
 * An address with no symbol keeps its image and offset; nothing fails for want of symbols.
 * Lookups are cached per (image, address) in memory bounded by the options, not by the trace.
 */
typedef struct etl_symbolizer etl_symbolizer;

enum {
    ETL_SYMBOLS_NO_SYSTEM_PATHS = 1u << 0,  /* search only the given directories: not /usr/lib/debug,
                                               debuginfod's cache or the images' own paths */
    ETL_SYMBOLS_NO_PDB = 1u << 1            /* never start llvm-symbolizer */
};

typedef struct etl_symbolizer_options {
    unsigned flags;                         /* ETL_SYMBOLS_* */
    const char *const *paths;               /* symbol directories (--symbols DIR), searched in order */
    size_t npaths;
    size_t cache_bytes;                     /* the lookups' cache bound; 0: 16 MiB */
    const char *llvm_symbolizer;            /* the program for PDBs; NULL: $ETL_LLVM_SYMBOLIZER, else
                                               "llvm-symbolizer" on PATH */
} etl_symbolizer_options;

/* A new symbolizer in *out (options may be NULL): ETL_OK, or ETL_FAILED without memory. */
ETL_API int etl_symbolizer_open(etl_symbolizer **out, const etl_symbolizer_options *options);
ETL_API void etl_symbolizer_close(etl_symbolizer *s);

/* Takes what ev says about images, processes, threads and symbols (other events are ignored).
   Feed every event of the trace once, in any order, before resolving. ETL_OK, or ETL_FAILED
   when memory ran out. */
ETL_API int etl_symbolizer_add(etl_symbolizer *s, const etl_event *ev);

/* One frame of a resolved address: the function it is in, or for an inlined call, the inlined
   function (and the frames it was inlined into follow). Strings belong to the symbolizer and
   last until it is closed. */
typedef struct etl_symbol {
    const char *function;         /* NULL when no symbol covers the address */
    uint64_t function_offset;     /* address - the function's start (0 for an inlined frame) */
    const char *image;            /* the image's base name ("libc.so.6", "ntdll.dll"); NULL: no image */
    const char *image_path;       /* the path the trace gives */
    uint64_t image_offset;        /* address - the image's base */
    const char *source_file;      /* NULL when unknown */
    uint32_t line;                /* 0 when unknown */
    uint32_t inlined;             /* 1: this frame was inlined into the next */
    const char *build_id;         /* the image's ELF build-id in lowercase hex, where the trace
                                     gives it (LinuxImageID BuildId); NULL otherwise */
} etl_symbol;

/* The frames of address addr of process pid at raw time ts into out (up to max, innermost
   first: inlined functions, then the function that holds them). The count of frames filled
   (at least 1 when max >= 1: an address with no image gives one frame with image NULL), or
   ETL_FAILED when memory ran out. */
ETL_API int etl_symbolizer_resolve(etl_symbolizer *s, uint32_t pid, uint64_t addr, int64_t ts,
                                   etl_symbol *out, unsigned max);

/* What the symbolizer found and missed (for -v and the benchmarks). */
typedef struct etl_symbolizer_stats {
    uint64_t lookups, cache_hits;
    uint64_t resolved;            /* lookups that named a function */
    uint64_t images, images_with_symbols;
    uint64_t images_mismatched;   /* images whose file was found with another build-id or PDB age */
    size_t cache_bytes;           /* the cache's use now */
} etl_symbolizer_stats;
ETL_API void etl_symbolizer_stats_get(const etl_symbolizer *s, etl_symbolizer_stats *out);

/* The last problem worth telling the user (a symbol file that did not match, llvm-symbolizer
   missing), or NULL. */
ETL_API const char *etl_symbolizer_error(const etl_symbolizer *s);

#ifdef __cplusplus
}
#endif
#endif /* LIBETL_ETL_SYMBOLS_H */
