/* SPDX-License-Identifier: MIT */
/* ELF images' symbols through elfutils' libdwfl: the file found by build-id or path, file offsets to ELF addresses, DWARF lines and inlined frames, .symtab and .dynsym. */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"

/* The page size segments are mapped with (x86-64's): a mapping starts at its segment's
   address and file offset rounded down to it. */
#define ELF_PAGE 4096u

struct seg {
    uint64_t offset, filesz, vaddr, memsz;
    uint32_t flags;
};

/* One function symbol of the module's .symtab (or .dynsym): module addresses. */
struct fsym {
    uint64_t addr, size;
    const char *name;         /* the ELF's string table (as long as the module is open) */
    unsigned rank;            /* which of several at one address names it: lowest */
};

/* A function's address range in one compilation unit (DWARF addresses), and its DIE. */
struct frange {
    Dwarf_Addr lo, hi;
    Dwarf_Die die;
};

/* The functions of one compilation unit by address, made when an address first falls in it. */
struct cu_index {
    Dwarf_Off cu;             /* the unit DIE's offset */
    struct frange *r;
    size_t n;
};

struct etl_sym_elf {
    struct cu_index *cus;     /* sorted by cu */
    size_t ncus, ccus;
    struct fsym *syms;        /* sorted by address, one per address; built on first use */
    size_t nsyms;
    int syms_built;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwarf_Addr bias;          /* module address = ELF address + bias */
    struct seg *segs;         /* the PT_LOAD program headers that map file offsets */
    size_t nsegs;
    int exact;                /* segs came from a file with its contents (not a debug file's) */
};

/* One file looked at: its libelf handle and what it holds. */
struct cand {
    int fd;
    Elf *elf;
    int contents;             /* an executable PT_LOAD with file bytes: not a separate debug file */
    int symbols;              /* .symtab, .dynsym or .debug_info */
    char path[4096];
};

static void cand_close(struct cand *c)
{
    if (c->elf) elf_end(c->elf);
    if (c->fd >= 0) close(c->fd);
    c->elf = NULL;
    c->fd = -1;
}

static int read_phdrs(Elf *elf, struct seg **out, size_t *n)
{
    size_t phnum, k = 0;
    struct seg *s;

    *out = NULL;
    *n = 0;
    if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0) return ETL_OK;
    s = calloc(phnum, sizeof *s);
    if (!s) return ETL_FAILED;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
        s[k].offset = ph.p_offset;
        s[k].filesz = ph.p_filesz;
        s[k].vaddr = ph.p_vaddr;
        s[k].memsz = ph.p_memsz;
        s[k].flags = ph.p_flags;
        k++;
    }
    *out = s;
    *n = k;
    return ETL_OK;
}

/* What the file holds: contents (an executable segment with file bytes) and symbols. */
static void inspect(struct cand *c)
{
    size_t phnum, shstrndx;
    Elf_Scn *scn = NULL;

    c->contents = c->symbols = 0;
    if (elf_getphdrnum(c->elf, &phnum) == 0)
        for (size_t i = 0; i < phnum; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(c->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_filesz > 0)
                c->contents = 1;
        }
    if (elf_getshdrstrndx(c->elf, &shstrndx) != 0) return;
    while ((scn = elf_nextscn(c->elf, scn)) != NULL) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh)) continue;
        if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && sh.sh_size > 0) c->symbols = 1;
        name = elf_strptr(c->elf, shstrndx, sh.sh_name);
        if (name && sh.sh_type != SHT_NOBITS && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
            c->symbols = 1;
    }
}

/*
 * Opens path as an ELF file whose build-id is the recorded one (any when f has none): 1 taken
 * (c filled), 0 not there, not a regular file or not ELF, -1 another build-id (what it has is
 * written in why, when why is empty).
 */
static int try_file(etl_sym_file *f, const char *path, struct cand *c, char *why, size_t whysize)
{
    const void *id;
    ssize_t idlen;
    struct stat st;

    c->elf = NULL;
    /* O_NONBLOCK: a FIFO at the path must not hang the open; only regular files are read. */
    c->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (c->fd < 0) return 0;
    if (fstat(c->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cand_close(c);
        return 0;
    }
    c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
    if (!c->elf || elf_kind(c->elf) != ELF_K_ELF) {
        cand_close(c);
        return 0;
    }
    if (f->build_id_size) {
        idlen = dwelf_elf_gnu_build_id(c->elf, &id);
        if (idlen != (ssize_t)f->build_id_size || memcmp(id, f->build_id, f->build_id_size) != 0) {
            char want[2 * ETL_BUILD_ID_MAX + 1], got[2 * ETL_BUILD_ID_MAX + 1] = "none";
            etl_sym_build_id_hex(f->build_id, f->build_id_size, want);
            if (idlen > 0 && idlen <= ETL_BUILD_ID_MAX) etl_sym_build_id_hex(id, (size_t)idlen, got);
            if (!*why)
                snprintf(why, whysize, "%s: build-id %s, but the trace recorded %s for %s: not used (the file changed since the trace)",
                         path, got, want, f->path);
            cand_close(c);
            return -1;
        }
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    inspect(c);
    return 1;
}

/* No other debug file than the one chosen here: libdwfl's standard search would look in
   system places (and debuginfod servers) the options may forbid. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name)
{
    return -1;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = NULL,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = NULL,
};

/* The places to look, in order; kind 's' for a symbol (debug) file, 'e' for the image itself. */
struct place {
    char kind;
    char path[4096];
};

static size_t places(etl_symbolizer *s, etl_sym_file *f, struct place *pl, size_t max)
{
    char hex[2 * ETL_BUILD_ID_MAX + 1];
    size_t n = 0;
    int sys = !(s->flags & ETL_SYMBOLS_NO_SYSTEM_PATHS);
    char cache[4096] = "";

    /* debuginfod's client cache: $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client,
       else ~/.cache/debuginfod_client (as the client itself chooses). */
    if (sys) {
        const char *e;
        if ((e = getenv("DEBUGINFOD_CACHE_PATH")) && *e) snprintf(cache, sizeof cache, "%s", e);
        else if ((e = getenv("XDG_CACHE_HOME")) && *e) snprintf(cache, sizeof cache, "%s/debuginfod_client", e);
        else if ((e = getenv("HOME")) && *e) snprintf(cache, sizeof cache, "%s/.cache/debuginfod_client", e);
    }

#define PLACE(k, ...)                                                                 \
    do {                                                                              \
        if (n < max) {                                                                \
            pl[n].kind = (k);                                                         \
            snprintf(pl[n].path, sizeof pl[n].path, __VA_ARGS__);                     \
            n++;                                                                      \
        }                                                                             \
    } while (0)

    if (f->build_id_size >= 2) {
        etl_sym_build_id_hex(f->build_id, f->build_id_size, hex);
        for (size_t i = 0; i < s->npaths; i++) {
            PLACE('s', "%s/.build-id/%.2s/%s.debug", s->paths[i], hex, hex + 2);
            PLACE('s', "%s/%s/debuginfo", s->paths[i], hex);
            PLACE('e', "%s/.build-id/%.2s/%s", s->paths[i], hex, hex + 2);
            PLACE('e', "%s/%s/executable", s->paths[i], hex);
        }
        if (*cache) {
            PLACE('s', "%s/%s/debuginfo", cache, hex);
            PLACE('e', "%s/%s/executable", cache, hex);
        }
        if (sys) PLACE('s', "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
    }
    for (size_t i = 0; i < s->npaths; i++) PLACE('e', "%s/%s", s->paths[i], f->base_name);
    if (sys && f->path[0] == '/') PLACE('e', "%s", f->path);
#undef PLACE
    return n;
}

int etl_sym_elf_open(etl_symbolizer *s, etl_sym_file *f)
{
    enum { MAXPLACES = 64 };
    struct place *pl = malloc(MAXPLACES * sizeof *pl);
    struct cand sym = { .fd = -1 }, exe = { .fd = -1 }, c = { .fd = -1 };
    struct etl_sym_elf *e = NULL;
    const char *symfile;
    size_t np;
    int rc = ETL_OK;
    Elf *addr_elf;
    char why[8400] = "";

    f->state = ETL_SYM_MISSING;
    if (!pl) return ETL_FAILED;
    elf_version(EV_CURRENT);
    np = places(s, f, pl, MAXPLACES);
    for (size_t i = 0; i < np && (!sym.elf || !exe.elf); i++) {
        if (try_file(f, pl[i].path, &c, why, sizeof why) != 1) continue;
        if (pl[i].kind == 's' && !sym.elf && c.symbols) {
            sym = c;
        } else if (pl[i].kind == 'e' && !exe.elf && c.contents) {
            exe = c;
        } else if (!sym.elf && c.symbols) {
            sym = c;    /* a debug file in an image's place, or an image with its symbols */
        } else {
            cand_close(&c);
        }
        c.fd = -1;
        c.elf = NULL;
    }
    if (!sym.elf && exe.elf && exe.symbols) {
        symfile = exe.path;
    } else if (sym.elf) {
        symfile = sym.path;
    } else {
        /* The binary changed since the trace, and no file of the recorded one is at hand. */
        if (*why) {
            if (!f->mismatch_counted) {
                f->mismatch_counted = 1;
                s->stats.images_mismatched++;
            }
            etl_sym_set_error(s, "%s", why);
        }
        goto done;
    }
    e = calloc(1, sizeof *e);
    if (!e) goto nomem;
    /* File offsets to addresses by the image's own program headers when it was found; a debug
       file's keep the addresses but not the offsets. */
    addr_elf = exe.elf ? exe.elf : sym.elf;
    if (read_phdrs(addr_elf, &e->segs, &e->nsegs) != ETL_OK) goto nomem;
    e->exact = exe.elf ? 1 : sym.contents;
    e->dwfl = dwfl_begin(&callbacks);
    if (!e->dwfl) goto nomem;
    dwfl_report_begin(e->dwfl);
    e->mod = dwfl_report_elf(e->dwfl, f->base_name, symfile, -1, 0, false);
    dwfl_report_end(e->dwfl, NULL, NULL);
    if (!e->mod || !dwfl_module_getelf(e->mod, &e->bias)) {
        etl_sym_set_error(s, "%s: libdwfl could not read it: %s", symfile, dwfl_errmsg(-1));
        etl_sym_elf_close(e);
        e = NULL;
        goto done;
    }
    f->backend = e;
    f->state = ETL_SYM_READY;
    goto done;
nomem:
    etl_sym_elf_close(e);
    rc = ETL_FAILED;
done:
    cand_close(&sym);
    cand_close(&exe);
    free(pl);
    return rc;
}

void etl_sym_elf_close(void *backend)
{
    struct etl_sym_elf *e = backend;

    if (!e) return;
    if (e->dwfl) dwfl_end(e->dwfl);
    for (size_t i = 0; i < e->ncus; i++) free(e->cus[i].r);
    free(e->cus);
    free(e->syms);
    free(e->segs);
    free(e);
}

/*
 * The ELF address of file offset off: the PT_LOAD segment whose file bytes hold it (or the
 * part of its first page before them). 1 found, 0 not.
 *
 * Without the image's own program headers (only a separate debug file was found: its segments
 * keep their addresses, not their offsets), the executable segment is taken to be the one
 * mapped: when the mapping's file offset (perf's pgoff) is known, at the page of its address,
 * so address = off - map_offset + (its address rounded down to the page); else at its offset
 * less the first segment's address, as GNU ld lays out the segments before the writable one.
 */
static int offset_to_vaddr(const struct etl_sym_elf *e, uint64_t off, uint64_t map_offset, uint64_t *vaddr)
{
    const uint64_t page_mask = ~(uint64_t)(ELF_PAGE - 1);

    if (e->exact) {
        for (size_t i = 0; i < e->nsegs; i++) {
            const struct seg *g = &e->segs[i];
            if (off >= g->offset && off - g->offset < g->filesz) {
                *vaddr = off - g->offset + g->vaddr;
                return 1;
            }
        }
        for (size_t i = 0; i < e->nsegs; i++) {
            const struct seg *g = &e->segs[i];
            if (off >= (g->offset & page_mask) && off < g->offset) {
                *vaddr = g->vaddr - (g->offset - off);
                return 1;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < e->nsegs; i++) {
        const struct seg *g = &e->segs[i];
        if (!(g->flags & PF_X)) continue;
        if (map_offset && off >= map_offset) *vaddr = off - map_offset + (g->vaddr & page_mask);
        else *vaddr = off + (e->segs[0].vaddr & page_mask);
        return *vaddr >= (g->vaddr & page_mask) && *vaddr - g->vaddr < g->memsz;
    }
    return 0;
}

/* ---- the function symbols: dwfl_module_addrinfo walks the whole table on every call, so
   they are sorted once per module and searched ---- */

static int cmp_fsym(const void *pa, const void *pb)
{
    const struct fsym *a = pa, *b = pb;

    if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Functions (and untyped code labels) defined in the module; at one address, a sized function
   before a sizeless one, a global before a weak before a local. */
static int build_syms(struct etl_sym_elf *e)
{
    int n = dwfl_module_getsymtab(e->mod);
    size_t k = 0;

    e->syms_built = 1;
    if (n <= 1) return ETL_OK;
    e->syms = malloc((size_t)n * sizeof *e->syms);
    if (!e->syms) return ETL_FAILED;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        Elf *elf = NULL;
        Dwarf_Addr bias = 0;
        const char *name = dwfl_module_getsym_info(e->mod, i, &sym, &addr, &shndx, &elf, &bias);
        int type, bind;
        if (!name || !*name || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS || shndx == (GElf_Word)-1 || !addr)
            continue;
        type = GELF_ST_TYPE(sym.st_info);
        bind = GELF_ST_BIND(sym.st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
        e->syms[k].addr = addr;
        e->syms[k].size = sym.st_size;
        if (!sym.st_size && elf) { /* a sizeless one reaches no further than its section (_init, not the PLT after it) */
            Elf_Scn *scn = elf_getscn(elf, shndx);
            GElf_Shdr sh;
            if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && addr >= sh.sh_addr + bias
                && addr - (sh.sh_addr + bias) < sh.sh_size)
                e->syms[k].size = sh.sh_addr + bias + sh.sh_size - addr;
        }
        e->syms[k].name = name;
        e->syms[k].rank = (type == STT_NOTYPE) * 8u + (sym.st_size == 0) * 4u
                          + (bind == STB_GLOBAL ? 0u : bind == STB_WEAK ? 1u : 2u);
        k++;
    }
    if (k) qsort(e->syms, k, sizeof *e->syms, cmp_fsym);
    e->nsyms = 0;
    for (size_t i = 0; i < k; i++) /* one per address: the first (best ranked) */
        if (!e->nsyms || e->syms[e->nsyms - 1].addr != e->syms[i].addr) e->syms[e->nsyms++] = e->syms[i];
    return ETL_OK;
}

/* The function symbol holding module address a: the nearest at or below it, when a is within
   its size (a sizeless one reaches up to the next symbol). NULL: none; *err on no memory. */
static const struct fsym *sym_at(struct etl_sym_elf *e, Dwarf_Addr a, int *err)
{
    size_t lo = 0, hi;
    const struct fsym *f;

    if (!e->syms_built && build_syms(e) != ETL_OK) {
        *err = 1;
        return NULL;
    }
    hi = e->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->syms[mid].addr <= a) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    f = &e->syms[lo - 1];
    return f->size && a - f->addr >= f->size ? NULL : f;
}

/* ---- the functions of a compilation unit: dwarf_getscopes and dwarf_getscopes_die walk the
   whole unit on every call, so each unit's functions are put in address order once ---- */

static int cmp_frange(const void *pa, const void *pb)
{
    const struct frange *a = pa, *b = pb;

    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Adds the address ranges of parent's functions (and of those in its namespaces) to *r. */
static int index_functions(Dwarf_Die *parent, struct frange **r, size_t *n, size_t *cap, int depth)
{
    Dwarf_Die child;

    if (dwarf_child(parent, &child) != 0) return ETL_OK;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
                if (hi <= lo) continue;
                if (*n == *cap) {
                    size_t c = *cap ? 2 * *cap : 64;
                    void *q = realloc(*r, c * sizeof **r);
                    if (!q) return ETL_FAILED;
                    *r = q;
                    *cap = c;
                }
                (*r)[*n].lo = lo;
                (*r)[*n].hi = hi;
                (*r)[*n].die = child;
                (*n)++;
            }
        } else if ((tag == DW_TAG_namespace || tag == DW_TAG_module) && depth < 16) {
            if (index_functions(&child, r, n, cap, depth + 1) != ETL_OK) return ETL_FAILED;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return ETL_OK;
}

/* The index of unit cu, made on first use; NULL without memory. */
static const struct cu_index *cu_functions(struct etl_sym_elf *e, Dwarf_Die *cu)
{
    Dwarf_Off off = dwarf_dieoffset(cu);
    size_t lo = 0, hi = e->ncus, cap = 0;
    struct cu_index x = { off, NULL, 0 };

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->cus[mid].cu < off) lo = mid + 1;
        else hi = mid;
    }
    if (lo < e->ncus && e->cus[lo].cu == off) return &e->cus[lo];
    if (index_functions(cu, &x.r, &x.n, &cap, 0) != ETL_OK) {
        free(x.r);
        return NULL;
    }
    if (x.n) qsort(x.r, x.n, sizeof *x.r, cmp_frange);
    if (e->ncus == e->ccus) {
        size_t c = e->ccus ? 2 * e->ccus : 16;
        void *q = realloc(e->cus, c * sizeof *e->cus);
        if (!q) {
            free(x.r);
            return NULL;
        }
        e->cus = q;
        e->ccus = c;
    }
    memmove(&e->cus[lo + 1], &e->cus[lo], (e->ncus - lo) * sizeof *e->cus);
    e->cus[lo] = x;
    e->ncus++;
    return &e->cus[lo];
}

/* The scopes holding pc, outermost (the function) first, into chain (up to max): the function
   from the unit's index, then each child holding pc in turn. The count (0: no function). */
static int scope_chain(const struct cu_index *ix, Dwarf_Addr pc, Dwarf_Die *chain, int max)
{
    size_t lo = 0, hi = ix->n;
    int n = 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->r[mid].lo <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (!lo || pc >= ix->r[lo - 1].hi) return 0;
    chain[n++] = ix->r[lo - 1].die;
    while (n < max) {
        Dwarf_Die child;
        int found = 0;
        if (dwarf_child(&chain[n - 1], &child) != 0) break;
        do {
            int tag = dwarf_tag(&child);
            if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram
                 || tag == DW_TAG_try_block || tag == DW_TAG_catch_block)
                && dwarf_haspc(&child, pc) > 0) {
                chain[n++] = child;
                found = 1;
                break;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
        if (!found) break;
    }
    return n;
}

/* The name of a function's DIE: its linkage name (as .symtab has it), else its name. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *name = NULL;

    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        name = dwarf_formstring(&a);
    return name ? name : dwarf_diename(die);
}

/* The frames of module address a from DWARF: the inlined calls, then the function. */
static int dwarf_frames(etl_symbolizer *s, struct etl_sym_elf *e, Dwarf_Addr a, etl_sym_frame *out, unsigned max)
{
    Dwarf_Addr cubias;
    Dwarf_Die *cu = dwfl_module_addrdie(e->mod, a, &cubias);
    Dwarf_Die scopes[64];
    const struct cu_index *ix;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    Dwfl_Line *line;
    const char *file = NULL;
    int lineno = 0, nscopes, n = 0;

    if (!cu) return 0;
    line = dwfl_module_getsrc(e->mod, a);
    if (line) {
        Dwarf_Addr la;
        file = dwfl_lineinfo(line, &la, &lineno, NULL, NULL, NULL);
    }
    if (!(ix = cu_functions(e, cu))) return ETL_FAILED;
    nscopes = scope_chain(ix, a - cubias, scopes, 64);
    if (nscopes > 0 && dwarf_getsrcfiles(cu, &files, &nfiles) != 0) files = NULL;
    for (int i = nscopes - 1; i >= 0 && (unsigned)n < max; i--) { /* innermost first */
        Dwarf_Die *d = &scopes[i];
        int tag = dwarf_tag(d);
        const char *name;
        etl_sym_frame *fr;

        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
        fr = &out[n];
        memset(fr, 0, sizeof *fr);
        name = die_name(d);
        if (name && !(fr->function = etl_sym_intern_str(s, name))) goto nomem;
        if (file && !(fr->source_file = etl_sym_intern_str(s, file))) goto nomem;
        fr->line = lineno > 0 ? (uint32_t)lineno : 0;
        n++;
        if (tag == DW_TAG_inlined_subroutine) {
            Dwarf_Attribute at;
            Dwarf_Word cf = 0, cl = 0;
            fr->inlined = 1;
            /* The next frame's line is this call's. */
            file = NULL;
            lineno = 0;
            if (dwarf_attr(d, DW_AT_call_file, &at) && dwarf_formudata(&at, &cf) == 0 && files)
                file = dwarf_filesrc(files, (size_t)cf, NULL, NULL);
            if (dwarf_attr(d, DW_AT_call_line, &at) && dwarf_formudata(&at, &cl) == 0 && cl <= INT32_MAX)
                lineno = (int)cl;
            continue;
        }
        { /* the function that holds them: its offset by its symbol, else its entry */
            Dwarf_Addr entry;
            int err = 0;
            const struct fsym *fs = sym_at(e, a, &err);
            if (err) goto nomem;
            if (fs && (!fr->function || strcmp(fs->name, fr->function) == 0)) {
                fr->function_offset = a - fs->addr;
                if (!fr->function && !(fr->function = etl_sym_intern_str(s, fs->name))) goto nomem;
            } else if (dwarf_entrypc(d, &entry) == 0 && a - cubias >= entry) {
                fr->function_offset = a - cubias - entry;
            }
        }
        break;
    }
    if (n == 0 && file) { /* a line with no function DIE (assembly): the symbol gives the name */
        int err = 0;
        const struct fsym *fs = sym_at(e, a, &err);
        if (err) return ETL_FAILED;
        if (fs) {
            memset(&out[0], 0, sizeof out[0]);
            if (!(out[0].function = etl_sym_intern_str(s, fs->name))) return ETL_FAILED;
            out[0].function_offset = a - fs->addr;
            if (!(out[0].source_file = etl_sym_intern_str(s, file))) return ETL_FAILED;
            out[0].line = lineno > 0 ? (uint32_t)lineno : 0;
            n = 1;
        }
    }
    return n;
nomem:
    return ETL_FAILED;
}

int etl_sym_elf_resolve(etl_symbolizer *s, etl_sym_file *f, uint64_t off, uint64_t map_offset, etl_sym_frame *out,
                        unsigned max)
{
    struct etl_sym_elf *e = f->backend;
    uint64_t vaddr;
    Dwarf_Addr a;
    const struct fsym *fs;
    int n, err = 0;

    if (!max || !offset_to_vaddr(e, off, map_offset, &vaddr)) return 0;
    a = vaddr + e->bias;
    n = dwarf_frames(s, e, a, out, max);
    if (n != 0) return n;
    fs = sym_at(e, a, &err);
    if (err) return ETL_FAILED;
    if (!fs) return 0;
    memset(&out[0], 0, sizeof out[0]);
    if (!(out[0].function = etl_sym_intern_str(s, fs->name))) return ETL_FAILED;
    out[0].function_offset = a - fs->addr;
    return 1;
}
