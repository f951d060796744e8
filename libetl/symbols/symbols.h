/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the symbolizer's files share (its state, interned strings, the backends' entry points). */
#ifndef LIBETL_SYMBOLS_H
#define LIBETL_SYMBOLS_H
#ifndef ETL_BUILDING_LIBRARY
#error "symbols/symbols.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

#include "etl.h"
#include "etl/symbols.h"
#include "format/format.h" /* the LinuxImageID class: its GUID and opcodes */

/* The most frames one address resolves to (inlined calls, then the function holding them);
   deeper inline chains keep their innermost frames and the function. */
#define ETL_SYM_MAX_FRAMES 16

/* The most image files whose backends are open at once (each holds a file descriptor and
   its symbol tables); the least recently used one is closed, and opened again when asked. */
#define ETL_SYM_MAX_OPEN 128

/* Kernel addresses on a 64-bit system: the high half. */
#define ETL_SYM_KERNEL_MIN 0xFFFF800000000000ull

#define ETL_BUILD_ID_MAX 64   /* longer build-ids are not kept (GNU's are 20 bytes) */

/* One frame as a backend fills it: strings interned (etl_sym_intern), NULL when unknown. */
typedef struct etl_sym_frame {
    const char *function;
    uint64_t function_offset;
    const char *source_file;
    uint32_t line;
    uint32_t inlined;
} etl_sym_frame;

/* What the symbolizer knows of one image file: the backend that reads it, and its state. One
   per distinct (kind, path, build-id), shared by every process that maps the file. */
enum etl_sym_kind { ETL_SYM_ELF = 1, ETL_SYM_KERNEL, ETL_SYM_PDB };
enum etl_sym_state { ETL_SYM_UNTRIED = 0, ETL_SYM_READY, ETL_SYM_MISSING };

typedef struct etl_sym_file {
    int kind;                         /* enum etl_sym_kind: which backend */
    int state;                        /* enum etl_sym_state */
    const char *path;                 /* interned: the path the trace gives */
    const char *base_name;            /* interned */
    uint8_t build_id[ETL_BUILD_ID_MAX];
    uint16_t build_id_size;
    uint8_t has_record;               /* a LinuxImageID BuildId event described it */
    void *backend;                    /* the backend's handle (elf.c: struct etl_sym_elf) */
    size_t pdb;                       /* ETL_SYM_PDB: pdb.c's handle of an image with this PDB */
    uint64_t last_use;                /* when its backend was last used (the symbolizer's tick) */
    uint8_t counted;                  /* in images_with_symbols already (a reopened backend is not counted again) */
    uint8_t mismatch_counted;         /* in images_mismatched already */
    struct etl_sym_file *next;        /* hash chain */
    uint32_t id;                      /* a number for the cache's key */
} etl_sym_file;

typedef struct etl_sym_kallsyms etl_sym_kallsyms;
typedef struct etl_sym_pdb etl_sym_pdb;   /* pdb.c */
typedef struct etl_sym_clr etl_sym_clr;   /* clr.c */

struct etl_sym_cache;
struct etl_sym_strings;
struct etl_sym_records;

struct etl_symbolizer {
    unsigned flags;                   /* ETL_SYMBOLS_* */
    char **paths;                     /* owned copies of the symbol directories */
    size_t npaths;
    size_t cache_bytes;               /* the bound */
    char *llvm_symbolizer;            /* owned copy, or NULL */
    etl_image_map *images;
    struct etl_sym_records *records;  /* the BuildId events, by (pid, ImageBase, time) */
    etl_sym_kallsyms *kallsyms;
    etl_sym_pdb *pdb;                 /* PE images' PDBs (pdb.c) */
    etl_sym_clr *clr;                 /* .NET methods (clr.c) */
    struct etl_sym_strings *strings;
    struct etl_sym_cache *cache;
    etl_sym_file **files;             /* hash of etl_sym_file by (kind, path, build-id) */
    size_t nfile_buckets, nfiles;
    size_t nopen;                     /* files whose backend is open */
    uint64_t tick;
    /* The images of recent lookups and their files, one slot per hash of (pid, base): a stack
       goes back and forth between a few images (the program, libc, the kernel), and finding an
       image's file and build-id record again for each frame cost more than the lookup. A slot
       counts only while gen is recent_gen, which each etl_symbolizer_add moves on. */
    struct etl_sym_recent {
        int valid;
        uint64_t gen;
        uint32_t pid;
        uint64_t base;
        int64_t load, unload;
        etl_sym_file *file;           /* NULL: no backend */
        uint64_t rec_base, rec_file_offset;
        int has_rec;
        const char *build_id;         /* the file's build-id in hex, interned; NULL: none */
    } recent[16];
    uint64_t recent_gen;
    etl_symbolizer_stats stats;
    char error[1024];
    int has_error;
};

/* Sets the message etl_symbolizer_error gives (printf-style). */
void etl_sym_set_error(etl_symbolizer *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A copy of str[0, len) that lasts until the symbolizer is closed (the same pointer for the same
   text), or NULL without memory. */
const char *etl_sym_intern(etl_symbolizer *s, const char *str, size_t len);
const char *etl_sym_intern_str(etl_symbolizer *s, const char *str);
/* The build-id as lowercase hex into out (2 * size + 1 bytes). */
void etl_sym_build_id_hex(const uint8_t *id, size_t size, char *out);

/* ---- ELF images through libdwfl (elf.c) ---- */

/* Finds and opens f's ELF (by build-id first, then its path; never one whose build-id differs
   from the recorded one): f->state READY with f->backend set, or MISSING. ETL_OK, or
   ETL_FAILED without memory. */
int etl_sym_elf_open(etl_symbolizer *s, etl_sym_file *f);
/* The frames at file offset off of f's ELF (innermost first) into out, up to max: the count
   (0 when no symbol covers it), or ETL_FAILED without memory. map_offset: the file offset the
   image's mapping starts at (the BuildId event's FileOffset; 0 when unknown). */
int etl_sym_elf_resolve(etl_symbolizer *s, etl_sym_file *f, uint64_t off, uint64_t map_offset, etl_sym_frame *out,
                        unsigned max);
void etl_sym_elf_close(void *backend);

/* ---- the kernel's recorded symbols (kallsyms.c) ---- */

etl_sym_kallsyms *etl_sym_kallsyms_new(void);
void etl_sym_kallsyms_free(etl_sym_kallsyms *k);
/* Takes a KernelSymbols (opcode 1) or KernelModule (opcode 2) event's payload. ETL_OK,
   ETL_WARN when the payload is damaged (the error is set), ETL_FAILED without memory. */
int etl_sym_kallsyms_add(etl_symbolizer *s, etl_sym_kallsyms *k, const etl_event *ev);
/* 1 when kernel symbols or modules were recorded. */
int etl_sym_kallsyms_present(const etl_sym_kallsyms *k);
/* The kernel symbol at addr: 1 found (*frame, *module (interned; "vmlinux" for the kernel) and
   *module_base filled, *module_path too), 0 not (module and base may still be filled: 2), or
   ETL_FAILED without memory. */
int etl_sym_kallsyms_resolve(etl_symbolizer *s, etl_sym_kallsyms *k, uint64_t addr, etl_sym_frame *frame,
                             const char **module, uint64_t *module_base);

/* ==================================================================== PE images and .NET (pdb.c, clr.c) */

/*
 * pdb.c: PE images' PDBs. Takes KernelTraceControl's ImageID/Info and ImageID/DbgID_RSDS events
 * (what each image of each process was built with: its PDB's GUID, age and name), finds the PDB
 * in the symbol directories (symstore's DIR/name.pdb/GUIDAGE/name.pdb, or DIR/name.pdb whose
 * own GUID and age match), and asks llvm-symbolizer, run as one co-process, for the function,
 * source line and inlined frames at an offset in the image. doc/libetl.md, "Symbols".
 */
/* A new PDB side of owner in *out (opt may be NULL: no directories, "llvm-symbolizer" on PATH;
   the frames' strings are owner's, etl_sym_intern): ETL_OK, or ETL_FAILED without memory.
   Nothing is started until a PDB is found. */
int etl_sym_pdb_open(etl_sym_pdb **out, etl_symbolizer *owner, const etl_symbolizer_options *opt);
/* Ends the co-process (and reaps it), removes its temporary files, frees everything. */
void etl_sym_pdb_close(etl_sym_pdb *p);
/* Takes ev when it is an ImageID/Info or ImageID/DbgID_RSDS event: 1 taken, 0 not one of
   them (or one whose payload does not decode), ETL_FAILED when memory ran out. */
int etl_sym_pdb_add(etl_sym_pdb *p, const etl_event *ev);
/* The image of process pid at base whose PDB the trace gives (DbgID_RSDS): a handle (> 0) for
   the calls below, or 0. image_name (the image's base name) tells which image a DbgID event of
   another process is about when none of pid's own matches (merges write the system's under
   one process). Handles stay valid until etl_sym_pdb_close. */
size_t etl_sym_pdb_find(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name);
/* The PDB's identity (GUID then age, 20 bytes): images with the same key share their symbols. */
void etl_sym_pdb_key(const etl_sym_pdb *p, size_t h, uint8_t key[20]);
/* Looks the PDB of h up (once): 1 found, 0 not found (or ETL_SYMBOLS_NO_PDB), 2 found with
   another GUID or age (not used; etl_sym_pdb_error says which), ETL_FAILED without memory. */
int etl_sym_pdb_prepare(etl_sym_pdb *p, size_t h);
/* The frames of n offsets of image h (addresses less its base) in one exchange with
   llvm-symbolizer: offsets[i]'s into out[i * max ...], innermost first, their count into
   counts[i] (0: nothing known). Only function, function_offset (0: llvm-symbolizer 14 does not
   give a PDB function's start), source_file, line and inlined are set, strings interned in the owner. ETL_OK, or ETL_FAILED when memory ran out. */
int etl_sym_pdb_resolve_image(etl_sym_pdb *p, size_t h, const uint64_t *offsets, size_t n, etl_symbol *out,
                              unsigned max, unsigned *counts);
/* etl_sym_pdb_find then etl_sym_pdb_resolve_image for one offset: the count of frames (0: no
   PDB, no answer, no function there), or ETL_FAILED when memory ran out. */
int etl_sym_pdb_resolve(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name, uint64_t image_offset,
                        etl_symbol *out, unsigned max);
/* The same for n offsets at once: ETL_OK or ETL_FAILED. */
int etl_sym_pdb_resolve_batch(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name,
                              const uint64_t *offsets, size_t n, etl_symbol *out, unsigned max, unsigned *counts);
/* Images whose PDB was found (and matched) and those whose PDB was found with another GUID or
   age, so far. */
void etl_sym_pdb_counts(const etl_sym_pdb *p, uint64_t *found, uint64_t *mismatched);
/* The last problem worth telling the user (llvm-symbolizer missing or stopped answering, a PDB
   that did not match), or NULL. */
const char *etl_sym_pdb_error(const etl_sym_pdb *p);

/* Reads the GUID and age of the PDB at path (its info stream's GUID, the DBI stream's age),
   reading no more than the streams it needs: ETL_OK, or ETL_FAILED when it is not a PDB (MSF
   7.00) or is damaged. */
int etl_sym_pdb_read_ident(const char *path, etl_guid *guid, uint32_t *age);

/*
 * clr.c: .NET methods. Takes the runtime's (Microsoft-Windows-DotNETRuntime and its rundown
 * provider) MethodLoadVerbose, MethodUnloadVerbose, MethodDCStartVerbose, MethodDCEndVerbose,
 * ModuleLoad/DCStart/DCEnd events (decoded with the field decoder and the runtime's manifest),
 * and names the method that held an address of a process at a time as TraceEvent's TraceLog
 * does: MethodNamespace "." MethodName, then the signature's arguments ("(int32,class
 * System.String)") when it has them.
 */
/* A new .NET side of owner (whose interned strings the names are): ETL_OK, or ETL_FAILED
   without memory. The field decoder is opened at the first runtime event. */
int etl_sym_clr_open(etl_sym_clr **out, etl_symbolizer *owner);
void etl_sym_clr_close(etl_sym_clr *c);
/* 1 taken (a method or module event), 0 not one, ETL_FAILED when memory ran out. */
int etl_sym_clr_add(etl_sym_clr *c, const etl_event *ev);
/* The method covering addr in process pid at raw time ts into *out (function, function_offset;
   image: the module's file name where a ModuleLoad named it; image_offset: the offset in the
   method): 1, or 0 when no method covers it. Strings interned in the owner. */
int etl_sym_clr_resolve(etl_sym_clr *c, uint32_t pid, uint64_t addr, int64_t ts, etl_symbol *out);
/* Methods known (load, rundown and unload events put together). */
uint64_t etl_sym_clr_methods(const etl_sym_clr *c);
/* The last problem worth telling (the runtime's manifest missing), or NULL. */
const char *etl_sym_clr_error(const etl_sym_clr *c);

/* ==================================================================== end of pdb.c, clr.c */

#endif /* LIBETL_SYMBOLS_H */
