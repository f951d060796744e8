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

/* The most frames one address resolves to (inlined calls, then the function holding them);
   deeper inline chains keep their innermost frames and the function. */
#define ETL_SYM_MAX_FRAMES 16

/* The most image files whose backends are open at once (each holds a file descriptor and
   its symbol tables); the least recently used one is closed, and opened again when asked. */
#define ETL_SYM_MAX_OPEN 128

/* Kernel addresses on a 64-bit system: the high half. */
#define ETL_SYM_KERNEL_MIN 0xFFFF800000000000ull

/* The Linux capture's LinuxImageID class (doc/format.md 8.9): opcodes. */
#define ETL_LINUX_IMAGEID_BUILDID 0
#define ETL_LINUX_IMAGEID_KERNEL_SYMBOLS 1
#define ETL_LINUX_IMAGEID_KERNEL_MODULE 2
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
enum etl_sym_kind { ETL_SYM_ELF = 1, ETL_SYM_KERNEL };
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
    uint64_t last_use;                /* when its backend was last used (the symbolizer's tick) */
    uint8_t counted;                  /* in images_with_symbols already (a reopened backend is not counted again) */
    uint8_t mismatch_counted;         /* in images_mismatched already */
    struct etl_sym_file *next;        /* hash chain */
    uint32_t id;                      /* a number for the cache's key */
} etl_sym_file;

typedef struct etl_sym_kallsyms etl_sym_kallsyms;

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
    struct etl_sym_strings *strings;
    struct etl_sym_cache *cache;
    etl_sym_file **files;             /* hash of etl_sym_file by (kind, path, build-id) */
    size_t nfile_buckets, nfiles;
    size_t nopen;                     /* files whose backend is open */
    uint64_t tick;
    struct {                          /* the image of the last lookup, and its file */
        int valid;
        uint32_t pid;
        uint64_t base;
        int64_t load, unload;
        etl_sym_file *file;           /* NULL: no backend */
        uint64_t rec_base, rec_file_offset;
        int has_rec;
    } last;
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

#endif /* LIBETL_SYMBOLS_H */
