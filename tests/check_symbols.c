/* SPDX-License-Identifier: MIT */
/* Tests of the symbolizer: ELF programs built here with gcc, resolved by path and by build-id, checked against addr2line; kallsyms; the cache's bound. */
#include <check.h>
#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "synth.h"
#include "testutil.h"

static const etl_guid linux_imageid = { 0xf6235471, 0x690f, 0x4985, { 0xa2, 0x5e, 0x2d, 0x98, 0xbc, 0x95, 0x91, 0x97 } };

/* The program the fixtures are built from: sq is forced inline into alpha. VARIANT changes its
   code (and so its build-id). */
static const char prog_c[] =
    "#include <stdio.h>\n"
    "static volatile int sink;\n"
    "static inline __attribute__((always_inline)) int sq(int x)\n"
    "{\n"
    "    sink += x;\n"
    "    return x * x + VARIANT;\n"
    "}\n"
    "__attribute__((noinline)) int alpha(int a)\n"
    "{\n"
    "    int r = sq(a) * 3;\n"
    "    return r + sink;\n"
    "}\n"
    "__attribute__((noinline)) int beta(int a)\n"
    "{\n"
    "    int s = 0;\n"
    "    for (int i = 0; i < a; i++) s += alpha(i);\n"
    "    return s;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argv;\n"
    "    printf(\"%d\\n\", beta(argc + 5));\n"
    "    return 0;\n"
    "}\n";

/* ---------------------------------------------------------------- the fixtures */

static char dir[512];

struct elf_facts {
    char path[600];
    uint8_t build_id[64];
    size_t build_id_size;
    char hex[129];
    struct { uint64_t offset, filesz, vaddr, memsz; uint32_t flags; } seg[16];
    size_t nseg;
    struct { const char *name; uint64_t value, size; } fn[3];
    uint64_t plt, plt_size;   /* the .plt section: no function's */
};

static struct elf_facts full, rebuilt, nodwarf;

static const char *path_in(const char *name)
{
    static char p[4][600];
    static int k;

    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "check_symbols: '%s' failed (%d)\n", cmd, rc);
        exit(1);
    }
}

static void facts(const char *path, struct elf_facts *f)
{
    int fd = open(path, O_RDONLY);
    Elf *elf;
    size_t phnum;
    Elf_Scn *scn = NULL;
    const void *id;
    ssize_t n;
    static const char *names[3] = { "alpha", "beta", "main" };

    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    elf_version(EV_CURRENT);
    if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
        fprintf(stderr, "check_symbols: cannot read %s\n", path);
        exit(1);
    }
    n = dwelf_elf_gnu_build_id(elf, &id);
    if (n > 0 && n <= 64) {
        memcpy(f->build_id, id, (size_t)n);
        f->build_id_size = (size_t)n;
        for (ssize_t i = 0; i < n; i++) sprintf(f->hex + 2 * i, "%02x", f->build_id[i]);
    }
    elf_getphdrnum(elf, &phnum);
    for (size_t i = 0; i < phnum && f->nseg < 16; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
        f->seg[f->nseg].offset = ph.p_offset;
        f->seg[f->nseg].filesz = ph.p_filesz;
        f->seg[f->nseg].vaddr = ph.p_vaddr;
        f->seg[f->nseg].memsz = ph.p_memsz;
        f->seg[f->nseg].flags = ph.p_flags;
        f->nseg++;
    }
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        Elf_Data *d;
        size_t shstrndx;
        const char *sname;
        if (gelf_getshdr(scn, &sh) && elf_getshdrstrndx(elf, &shstrndx) == 0
            && (sname = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(sname, ".plt") == 0) {
            f->plt = sh.sh_addr;
            f->plt_size = sh.sh_size;
        }
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL))) continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *name;
            if (!gelf_getsym(d, (int)i, &sym) || !(name = elf_strptr(elf, sh.sh_link, sym.st_name))) continue;
            for (int k = 0; k < 3; k++)
                if (strcmp(name, names[k]) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
                    f->fn[k].name = names[k];
                    f->fn[k].value = sym.st_value;
                    f->fn[k].size = sym.st_size;
                }
        }
    }
    elf_end(elf);
    close(fd);
}

/* The executable segment's program header. */
static int xseg(const struct elf_facts *f)
{
    for (size_t i = 0; i < f->nseg; i++)
        if (f->seg[i].flags & PF_X) return (int)i;
    return -1;
}

static uint64_t vaddr_to_offset(const struct elf_facts *f, uint64_t vaddr)
{
    for (size_t i = 0; i < f->nseg; i++)
        if (vaddr >= f->seg[i].vaddr && vaddr - f->seg[i].vaddr < f->seg[i].filesz)
            return vaddr - f->seg[i].vaddr + f->seg[i].offset;
    ck_abort_msg("no segment holds 0x%llx", (unsigned long long)vaddr);
    return 0;
}

static void build_fixtures(void)
{
    char cmd[4096];
    FILE *f;
    const char *t = getenv("TMPDIR");

    snprintf(dir, sizeof dir, "%s/libetl-symbols-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    f = fopen(path_in("prog.c"), "w");
    if (!f) exit(1);
    fputs(prog_c, f);
    fclose(f);
    /* PIE with DWARF; the same source rebuilt with other code; without DWARF. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -g -O2 -fPIE -pie -DVARIANT=1 -Wl,--build-id=sha1 -o prog prog.c"
             " && gcc -g -O2 -fPIE -pie -DVARIANT=7 -Wl,--build-id=sha1 -o rebuilt prog.c"
             " && gcc -O2 -fPIE -pie -DVARIANT=1 -Wl,--build-id=sha1 -o nodwarf prog.c"
             " && objcopy --only-keep-debug prog prog.debug && objcopy --strip-all prog stripped",
             dir);
    run(cmd);
    facts(path_in("prog"), &full);
    facts(path_in("rebuilt"), &rebuilt);
    facts(path_in("nodwarf"), &nodwarf);
    if (!full.build_id_size || !nodwarf.build_id_size || !full.plt_size || !full.fn[0].name || !full.fn[1].name || !full.fn[2].name || xseg(&full) < 0
        || !nodwarf.fn[0].name) {
        fprintf(stderr, "check_symbols: the fixtures lack a build-id or functions\n");
        exit(1);
    }
    /* DIR1: a .build-id tree with the debug file only; DIR2: debuginfod's cache layout with
       both; home/.cache/debuginfod_client: the same under a HOME of the test's own. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p dir1/.build-id/%.2s dir2/%s home/.cache/debuginfod_client/%s"
             " && cp prog.debug dir1/.build-id/%.2s/%s.debug"
             " && cp prog.debug dir2/%s/debuginfo && cp stripped dir2/%s/executable"
             " && cp prog.debug home/.cache/debuginfod_client/%s/debuginfo"
             " && mkdir -p bad/.build-id/%.2s && cp rebuilt bad/.build-id/%.2s/%s.debug",
             dir, full.hex, full.hex, full.hex, full.hex, full.hex + 2, full.hex, full.hex, full.hex, full.hex,
             full.hex, full.hex + 2);
    run(cmd);
    /* DIR3: two programs by build-id, each with its contents (image and symbols in one file). */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p dir3/.build-id/%.2s dir3/.build-id/%.2s"
             " && cp prog dir3/.build-id/%.2s/%s && cp nodwarf dir3/.build-id/%.2s/%s",
             dir, full.hex, nodwarf.hex, full.hex, full.hex + 2, nodwarf.hex, nodwarf.hex + 2);
    run(cmd);
}

/* ---------------------------------------------------------------- addr2line's answers */

struct ref_frame {
    char function[256];
    char file[256];     /* base name; "" when unknown */
    unsigned line;
};

struct ref {
    struct ref_frame f[16];
    unsigned n;
};

static const char *base_of(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* addr2line -a -f -i for each vaddr (in one run): groups start with the address line. */
static void addr2line(const char *elf, const uint64_t *vaddr, size_t n, struct ref *out)
{
    size_t cap = 64 + n * 20, len;
    char *cmd = malloc(cap), line[1024];
    FILE *p;
    long g = -1;
    int want_file = 0;

    ck_assert_ptr_nonnull(cmd);
    len = (size_t)snprintf(cmd, cap, "addr2line -a -f -i -e '%s'", elf);
    for (size_t i = 0; i < n; i++) len += (size_t)snprintf(cmd + len, cap - len, " 0x%llx", (unsigned long long)vaddr[i]);
    memset(out, 0, n * sizeof *out);
    p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "addr2line (binutils) is needed");
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (!want_file && strncmp(line, "0x", 2) == 0 && strlen(line) == 18) {
            g++;
            ck_assert_int_lt(g, (long)n);
            continue;
        }
        ck_assert_int_ge(g, 0);
        if (!want_file) {
            struct ref *r = &out[g];
            ck_assert_uint_lt(r->n, 16);
            snprintf(r->f[r->n].function, sizeof r->f[r->n].function, "%.255s", strcmp(line, "??") ? line : "");
            want_file = 1;
        } else {
            struct ref_frame *fr = &out[g].f[out[g].n++];
            char *colon = strrchr(line, ':'), *sp;
            want_file = 0;
            if ((sp = strstr(line, " (discriminator"))) {
                *sp = 0;
                colon = strrchr(line, ':');
            }
            if (!colon) continue;
            *colon = 0;
            fr->line = (unsigned)strtoul(colon + 1, NULL, 10);
            snprintf(fr->file, sizeof fr->file, "%.255s", line[0] == '?' ? "" : base_of(line));
        }
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_int_eq(g + 1, (long)n);
    free(cmd);
}

/* ---------------------------------------------------------------- traces */

struct trace {
    struct synth *s;
    int64_t ts;
};

static uint8_t rec[70000];

static void tr_begin(struct trace *t)
{
    struct synth_options o;

    memset(&o, 0, sizeof o);
    o.pointer_size = 8;
    o.cpus = 1;
    o.buffer_size = 1 << 17;
    o.start_timestamp = 999;
    o.logger_name = "NT Kernel Logger";
    t->s = synth_new(&o);
    ck_assert_ptr_nonnull(t->s);
    t->ts = 1000;
}

static void tr_add(struct trace *t, uint32_t n)
{
    ck_assert_int_eq(synth_add(t->s, 0, rec, n), 0);
}

/* An Image event (version 3, as the Linux capture writes it): Load, or hook's. */
static void tr_image_hook(struct trace *t, uint16_t hook, uint32_t pid, uint64_t base, uint64_t size, const char *file)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, base); spp(&p, size); sp32(&p, pid); sp32(&p, 0); sp32(&p, 0);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, base); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, file);
    tr_add(t, synth_system(rec, 1, 0, t->ts, hook, 3, pid, 0, p.b, p.n));
}

static void tr_image(struct trace *t, uint32_t pid, uint64_t base, uint64_t size, const char *file)
{
    tr_image_hook(t, 0x030A, pid, base, size, file);
}

/* LinuxImageID BuildId, right after its Image event (same time), per doc/format.md 8.9. */
static void tr_buildid(struct trace *t, uint32_t pid, uint64_t base, uint64_t size, uint64_t file_offset,
                       const uint8_t *id, size_t idlen, const char *file)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, base); spp(&p, size); sp32(&p, pid); sp64(&p, file_offset); sp16(&p, (uint16_t)idlen);
    for (size_t i = 0; i < idlen; i++) sp8(&p, id[i]);
    sp_str8(&p, file);
    tr_add(t, synth_classic(rec, 1, 0, t->ts, &linux_imageid, 0, 0, 0, pid, 0, p.b, p.n));
}

static void tr_raw(struct trace *t, uint8_t opcode, const void *payload, uint32_t len)
{
    tr_add(t, synth_classic(rec, 1, 0, t->ts, &linux_imageid, opcode, 0, 0, 0, 0, payload, len));
}

/* KernelSymbols: Sequence then Text (with its zero unless terminate is 0). */
static void tr_ksyms(struct trace *t, uint32_t seq, const char *text, int terminate)
{
    static uint8_t p[66000];
    size_t n = strlen(text);

    ck_assert_uint_lt(n, sizeof p - 5);
    memcpy(p, &seq, 4);
    memcpy(p + 4, text, n);
    p[4 + n] = 0;
    tr_raw(t, 1, p, (uint32_t)(4 + n + (terminate ? 1 : 0)));
}

static void tr_kmodule(struct trace *t, uint64_t base, uint64_t size, const char *name)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, base); spp(&p, size); sp16(&p, 2); sp8(&p, 0xAB); sp8(&p, 0xCD);
    sp_str8(&p, name);
    tr_raw(t, 2, p.b, p.n);
}

/* The trace's every event fed to a new symbolizer. */
static etl_symbolizer *tr_load(struct trace *t, const etl_symbolizer_options *o)
{
    size_t size;
    uint8_t *file = synth_finish(t->s, &size);
    etl_reader *r;
    etl_event ev;
    etl_symbolizer *s;
    long n = 0;
    int rc;

    ck_assert_ptr_nonnull(file);
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    ck_assert_int_eq(etl_symbolizer_open(&s, o), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        if (rc == ETL_OK) {
            ck_assert_int_eq(etl_symbolizer_add(s, &ev), ETL_OK);
            n++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    ck_assert_int_gt(n, 0);
    etl_reader_close(r);
    free(file);
    return s;
}

/* ---------------------------------------------------------------- comparing */

/* Every 3rd byte of alpha, beta and main (ELF addresses of f), then of the PLT (which no
   function holds: a sizeless symbol before it, _init, does not reach into it). */
static size_t sample_vaddrs(const struct elf_facts *f, uint64_t *out, size_t max)
{
    size_t n = 0;

    for (int k = 0; k < 3; k++)
        for (uint64_t a = f->fn[k].value; a < f->fn[k].value + f->fn[k].size && n < max; a += 3) out[n++] = a;
    for (uint64_t a = f->plt; a < f->plt + f->plt_size && n < max; a += 5) out[n++] = a;
    return n;
}

/*
 * Resolves each ELF address vaddr[i] of f as trace address to_trace(vaddr) of pid 100 and checks
 * the frames against addr2line's for sym_elf (the file with the symbols): the same functions,
 * source base names and lines, innermost first. Returns the number of addresses that had an
 * inlined frame.
 */
static unsigned compare(etl_symbolizer *s, const char *sym_elf, const uint64_t *vaddr, const uint64_t *taddr, size_t n,
                        uint64_t image_base, const char *image)
{
    struct ref *ref = calloc(n, sizeof *ref);
    unsigned inlined = 0;

    ck_assert_ptr_nonnull(ref);
    addr2line(sym_elf, vaddr, n, ref);
    for (size_t i = 0; i < n; i++) {
        etl_symbol out[16];
        int got = etl_symbolizer_resolve(s, 100, taddr[i], 5000, out, 16);
        ck_assert_msg(got == (int)ref[i].n, "0x%llx: %d frames, addr2line gives %u (%s)", (unsigned long long)vaddr[i], got,
                      ref[i].n, etl_symbolizer_error(s) ? etl_symbolizer_error(s) : "no error");
        if (got > 1) inlined++;
        for (int k = 0; k < got; k++) {
            const struct ref_frame *w = &ref[i].f[k];
            ck_assert_str_eq(out[k].image, image);
            ck_assert_uint_eq(out[k].image_offset, taddr[i] - image_base);
            if (!w->function[0]) { /* no function covers it */
                ck_assert_msg(out[k].function == NULL, "0x%llx: function %s, addr2line none", (unsigned long long)vaddr[i],
                              out[k].function);
                continue;
            }
            ck_assert_msg(out[k].function && strcmp(out[k].function, w->function) == 0,
                          "0x%llx frame %d: function %s, addr2line %s", (unsigned long long)vaddr[i], k,
                          out[k].function ? out[k].function : "(none)", w->function);
            if (w->file[0]) {
                ck_assert_ptr_nonnull(out[k].source_file);
                ck_assert_str_eq(base_of(out[k].source_file), w->file);
                ck_assert_msg(out[k].line == w->line, "0x%llx frame %d (%s): line %u, addr2line %u",
                              (unsigned long long)vaddr[i], k, w->function, out[k].line, w->line);
            } else {
                ck_assert_ptr_null(out[k].source_file);
                ck_assert_uint_eq(out[k].line, 0);
            }
            ck_assert_uint_eq(out[k].inlined, k + 1 < got ? 1 : 0);
        }
    }
    free(ref);
    return inlined;
}

/* The address of ELF address v in a mapping at base whose file offset is map_off. */
static uint64_t mapped(const struct elf_facts *f, uint64_t v, uint64_t base, uint64_t map_off)
{
    return base + vaddr_to_offset(f, v) - map_off;
}

/* A page-aligned base in the usual range of shared objects, different each run. */
static uint64_t random_base(void)
{
    return 0x7f0000000000ull + (((uint64_t)getpid() * 7919u + (uint64_t)rand()) % 0x100000ull) * 0x1000;
}

/* ---------------------------------------------------------------- ELF tests */

/* An old trace: the Image event alone (ImageBase where file offset 0 is mapped, as etlrecord
   writes it), found by its path. */
START_TEST(elf_by_path)
{
    struct trace t;
    etl_symbolizer *s;
    uint64_t v[400], a[400], base = random_base();
    size_t n = sample_vaddrs(&full, v, 400);
    etl_symbolizer_stats st;

    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    s = tr_load(&t, NULL);
    for (size_t i = 0; i < n; i++) a[i] = mapped(&full, v[i], base, 0);
    ck_assert_uint_gt(compare(s, full.path, v, a, n, base, "prog"), 0);
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.lookups, n);
    {
        size_t in_plt = 0;
        for (size_t i = 0; i < n; i++) in_plt += v[i] >= full.plt && v[i] < full.plt + full.plt_size;
        ck_assert_uint_gt(in_plt, 0);
        ck_assert_uint_eq(st.resolved, n - in_plt);
    }
    ck_assert_uint_eq(st.images, 1);
    ck_assert_uint_eq(st.images_with_symbols, 1);
    ck_assert_uint_eq(st.images_mismatched, 0);
    etl_symbolizer_close(s);
}
END_TEST

/* The executable mapping described by a BuildId event: ImageBase at a random page, FileOffset
   the executable segment's page (nonzero), the file at its recorded path. */
START_TEST(elf_pie_file_offset)
{
    struct trace t;
    etl_symbolizer *s;
    uint64_t v[400], a[400], base = random_base();
    int x = xseg(&full);
    uint64_t pgoff = full.seg[x].offset & ~0xFFFull;
    size_t n = sample_vaddrs(&full, v, 400);

    ck_assert_uint_ne(pgoff, 0);
    tr_begin(&t);
    tr_image(&t, 100, base, full.seg[x].filesz + 0x1000, full.path);
    tr_buildid(&t, 100, base, full.seg[x].filesz + 0x1000, pgoff, full.build_id, full.build_id_size, full.path);
    s = tr_load(&t, NULL);
    for (size_t i = 0; i < n; i++) a[i] = mapped(&full, v[i], base, pgoff);
    ck_assert_uint_gt(compare(s, full.path, v, a, n, base, "prog"), 0);
    etl_symbolizer_close(s);
}
END_TEST

/* Only a debug file, in DIR/.build-id/xx/rest.debug; the image's path is gone. */
static void by_build_id(const char *symdir, unsigned flags, const char *recorded_path)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    const char *paths[1] = { symdir };
    uint64_t v[400], a[400], base = random_base();
    int x = xseg(&full);
    uint64_t pgoff = full.seg[x].offset & ~0xFFFull;
    size_t n = sample_vaddrs(&full, v, 400);
    etl_symbolizer_stats st;

    memset(&o, 0, sizeof o);
    o.flags = flags;
    o.paths = symdir ? paths : NULL;
    o.npaths = symdir ? 1 : 0;
    tr_begin(&t);
    tr_image(&t, 100, base, 0x2000, recorded_path);
    tr_buildid(&t, 100, base, 0x2000, pgoff, full.build_id, full.build_id_size, recorded_path);
    s = tr_load(&t, &o);
    for (size_t i = 0; i < n; i++) a[i] = mapped(&full, v[i], base, pgoff);
    ck_assert_uint_gt(compare(s, full.path, v, a, n, base, base_of(recorded_path)), 0);
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images_with_symbols, 1);
    ck_assert_uint_eq(st.images_mismatched, 0);
    etl_symbolizer_close(s);
}

START_TEST(elf_build_id_dir)
{
    by_build_id(path_in("dir1"), ETL_SYMBOLS_NO_SYSTEM_PATHS, "/nonexistent/prog");
}
END_TEST

/* The debug file by build-id, the stripped image at its recorded path. */
START_TEST(elf_build_id_dir_and_path)
{
    setenv("HOME", path_in("nohome"), 1);
    by_build_id(path_in("dir1"), 0, path_in("stripped"));
}
END_TEST

START_TEST(elf_debuginfod_layout)
{
    by_build_id(path_in("dir2"), ETL_SYMBOLS_NO_SYSTEM_PATHS, "/nonexistent/prog");
}
END_TEST

/* debuginfod's own cache under $HOME, with no --symbols directory. */
START_TEST(elf_debuginfod_home)
{
    unsetenv("DEBUGINFOD_CACHE_PATH");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", path_in("home"), 1);
    by_build_id(NULL, 0, "/nonexistent/prog");
}
END_TEST

/* The cache where the client's environment puts it: $XDG_CACHE_HOME/debuginfod_client, and
   $DEBUGINFOD_CACHE_PATH before it. */
START_TEST(elf_debuginfod_env)
{
    setenv("HOME", path_in("nohome"), 1);
    unsetenv("DEBUGINFOD_CACHE_PATH");
    setenv("XDG_CACHE_HOME", path_in("home/.cache"), 1);
    by_build_id(NULL, 0, "/nonexistent/prog");
    setenv("XDG_CACHE_HOME", path_in("nohome"), 1);
    setenv("DEBUGINFOD_CACHE_PATH", path_in("dir2"), 1);
    by_build_id(NULL, 0, "/nonexistent/prog");
    unsetenv("DEBUGINFOD_CACHE_PATH");
    unsetenv("XDG_CACHE_HOME");
}
END_TEST

/* ETL_SYMBOLS_NO_SYSTEM_PATHS: neither $HOME's cache nor the recorded path is looked at. */
START_TEST(elf_no_system_paths)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    etl_symbol out[4];
    uint64_t base = 0x7f1234560000ull;
    etl_symbolizer_stats st;

    setenv("HOME", path_in("home"), 1);
    memset(&o, 0, sizeof o);
    o.flags = ETL_SYMBOLS_NO_SYSTEM_PATHS;
    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    tr_buildid(&t, 100, base, 0x5000, 0, full.build_id, full.build_id_size, full.path);
    s = tr_load(&t, &o);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, mapped(&full, full.fn[0].value, base, 0), 5000, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    ck_assert_str_eq(out[0].image, "prog");
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images_with_symbols, 0);
    etl_symbolizer_close(s);
}
END_TEST

/* The binary changed since the trace: the file at the recorded path (and a wrong file in the
   .build-id tree) has another build-id. Never used; counted; said; image+offset kept. */
START_TEST(elf_build_id_mismatch)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    const char *paths[1] = { path_in("bad") };
    etl_symbol out[4];
    uint64_t base = 0x7f1234560000ull, addr;
    etl_symbolizer_stats st;
    const char *err;

    setenv("HOME", path_in("nohome"), 1);
    memset(&o, 0, sizeof o);
    o.paths = paths;
    o.npaths = 1;
    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, rebuilt.path);
    tr_buildid(&t, 100, base, 0x5000, 0, full.build_id, full.build_id_size, rebuilt.path);
    s = tr_load(&t, &o);
    addr = mapped(&full, full.fn[0].value + 1, base, 0);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, addr, 5000, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    ck_assert_ptr_null(out[0].source_file);
    ck_assert_str_eq(out[0].image, "rebuilt");
    ck_assert_str_eq(out[0].image_path, rebuilt.path);
    ck_assert_uint_eq(out[0].image_offset, addr - base);
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images_mismatched, 1);
    ck_assert_uint_eq(st.images_with_symbols, 0);
    ck_assert_uint_eq(st.resolved, 0);
    err = etl_symbolizer_error(s);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, rebuilt.hex) && strstr(err, full.hex) && strstr(err, "not used"), "error: %s", err);
    /* The same image again: from the cache, not counted twice. */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, addr, 5000, out, 4), 1);
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images_mismatched, 1);
    ck_assert_uint_eq(st.cache_hits, 1);
    etl_symbolizer_close(s);
}
END_TEST

/* The file at the recorded path changed, but the recorded build-id's debug file is in a symbol
   directory: that one is used, and nothing is said of a mismatch. */
START_TEST(elf_changed_but_found)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    const char *paths[1] = { path_in("dir1") };
    etl_symbol out[16];
    uint64_t base = 0x7f1234560000ull;
    etl_symbolizer_stats st;

    setenv("HOME", path_in("nohome"), 1);
    memset(&o, 0, sizeof o);
    o.paths = paths;
    o.npaths = 1;
    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, rebuilt.path);
    tr_buildid(&t, 100, base, 0x5000, 0, full.build_id, full.build_id_size, rebuilt.path);
    s = tr_load(&t, &o);
    ck_assert_int_ge(etl_symbolizer_resolve(s, 100, mapped(&full, full.fn[1].value + 1, base, 0), 5000, out, 16), 1);
    ck_assert_str_eq(out[0].function, "beta");
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images_mismatched, 0);
    ck_assert_uint_eq(st.images_with_symbols, 1);
    ck_assert_ptr_null(etl_symbolizer_error(s));
    etl_symbolizer_close(s);
}
END_TEST

/* A FIFO (and a directory) where the image's file should be: not opened for reading, no hang. */
START_TEST(elf_fifo_path)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[4];
    const char *fifo = path_in("fifo");

    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    tr_begin(&t);
    tr_image(&t, 100, 0x7f0000000000ull, 0x5000, fifo);
    tr_image(&t, 100, 0x7f0000100000ull, 0x5000, dir);
    s = tr_load(&t, NULL);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, 0x7f0000001000ull, 5000, out, 4), 1);
    ck_assert_str_eq(out[0].image, "fifo");
    ck_assert_ptr_null(out[0].function);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, 0x7f0000101000ull, 5000, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    etl_symbolizer_close(s);
    unlink(fifo);
}
END_TEST

/* No DWARF: .symtab names the functions; no source. */
START_TEST(elf_symtab_only)
{
    struct trace t;
    etl_symbolizer *s;
    uint64_t v[400], a[400], base = random_base();
    size_t n = sample_vaddrs(&nodwarf, v, 400);

    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, nodwarf.path);
    s = tr_load(&t, NULL);
    for (size_t i = 0; i < n; i++) a[i] = mapped(&nodwarf, v[i], base, 0);
    ck_assert_uint_eq(compare(s, nodwarf.path, v, a, n, base, "nodwarf"), 0);
    /* function_offset: from the symbol's start */
    {
        etl_symbol out[2];
        ck_assert_int_eq(etl_symbolizer_resolve(s, 100, a[2], 5000, out, 2), 1);
        ck_assert_str_eq(out[0].function, "alpha");
        ck_assert_uint_eq(out[0].function_offset, v[2] - nodwarf.fn[0].value);
    }
    etl_symbolizer_close(s);
}
END_TEST

/* One path and address, two programs over time (the first unloaded, then the rebuilt one
   loaded there): each lookup takes the BuildId event of the image loaded at its time. */
START_TEST(elf_image_reuse)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    const char *paths[1] = { path_in("dir3") };
    etl_symbol out[16];
    uint64_t base = 0x7f5500000000ull, a1, a2;
    int got;

    memset(&o, 0, sizeof o);
    o.flags = ETL_SYMBOLS_NO_SYSTEM_PATHS;
    o.paths = paths;
    o.npaths = 1;
    tr_begin(&t);
    t.ts = 1000;
    tr_image(&t, 100, base, 0x5000, "/gone/prog");
    tr_buildid(&t, 100, base, 0x5000, 0, full.build_id, full.build_id_size, "/gone/prog");
    t.ts = 2000;
    tr_image_hook(&t, 0x1402, 100, base, 0x5000, "/gone/prog");
    t.ts = 3000;
    tr_image(&t, 100, base, 0x5000, "/gone/prog");
    tr_buildid(&t, 100, base, 0x5000, 0, nodwarf.build_id, nodwarf.build_id_size, "/gone/prog");
    s = tr_load(&t, &o);
    a1 = mapped(&full, full.fn[1].value + 1, base, 0);
    a2 = mapped(&nodwarf, nodwarf.fn[1].value + 1, base, 0);
    got = etl_symbolizer_resolve(s, 100, a1, 1500, out, 16);
    ck_assert_int_eq(got, 1);
    ck_assert_str_eq(out[0].function, "beta");
    ck_assert_str_eq(out[0].image, "prog");
    ck_assert_ptr_nonnull(out[0].source_file); /* DWARF: prog's */
    got = etl_symbolizer_resolve(s, 100, a2, 3500, out, 16);
    ck_assert_int_eq(got, 1);
    ck_assert_str_eq(out[0].function, "beta");
    ck_assert_str_eq(out[0].image, "prog");
    ck_assert_ptr_null(out[0].source_file);   /* no DWARF: nodwarf's */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, a1, 2500, out, 16), 1); /* between them: none */
    ck_assert_ptr_null(out[0].image);
    etl_symbolizer_close(s);
}
END_TEST

/* Files that are not ELF, or cut short, where the image's file should be: no crash, the image
   keeps its offset. */
START_TEST(elf_damaged_files)
{
    static const size_t cuts[] = { 0, 10, 64, 700, 3000, 9000 };
    char cmd[1400];
    const char *junk = path_in("junk");
    FILE *f = fopen(junk, "w");

    ck_assert_ptr_nonnull(f);
    fputs("this is not an ELF file at all\n", f);
    fclose(f);
    for (size_t i = 0; i <= sizeof cuts / sizeof cuts[0]; i++) {
        struct trace t;
        etl_symbolizer *s;
        etl_symbol out[16];
        const char *file = junk;
        char cut[700];
        uint64_t base = 0x7f6600000000ull;
        int got;

        if (i < sizeof cuts / sizeof cuts[0]) {
            snprintf(cut, sizeof cut, "%s/cut%zu", dir, cuts[i]);
            snprintf(cmd, sizeof cmd, "head -c %zu '%s' >'%s'", cuts[i], full.path, cut);
            ck_assert_int_eq(system(cmd), 0);
            file = cut;
        }
        tr_begin(&t);
        tr_image(&t, 100, base, 0x5000, file);
        s = tr_load(&t, NULL);
        got = etl_symbolizer_resolve(s, 100, mapped(&full, full.fn[0].value, base, 0), 5000, out, 16);
        ck_assert_int_ge(got, 1);
        ck_assert_ptr_nonnull(out[0].image);
        ck_assert_uint_eq(out[0].image_offset, vaddr_to_offset(&full, full.fn[0].value));
        etl_symbolizer_close(s);
    }
}
END_TEST

/* The file descriptors this process holds (the directory's own included, every time). */
static unsigned open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    unsigned n = 0;

    ck_assert_ptr_nonnull(d);
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* More image files than may be open at once (300 paths to the program, each its own image):
   the file descriptors held stay bounded, and an image whose backend was closed opens again. */
START_TEST(elf_many_images)
{
    enum { N = 300 };
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[16];
    etl_symbolizer_stats st;
    char cmd[800];
    unsigned before, most = 0;

    snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p many && for i in $(seq 0 %d); do ln -sf ../prog many/p$i; done", dir, N - 1);
    run(cmd);
    tr_begin(&t);
    for (unsigned i = 0; i < N; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/many/p%u", dir, i);
        tr_image(&t, 100, 0x7f0000000000ull + (uint64_t)i * 0x100000, 0x5000, p);
    }
    s = tr_load(&t, NULL);
    before = open_fds();
    for (int round = 0; round < 2; round++)
        for (unsigned i = 0; i < N; i++) {
            uint64_t base = 0x7f0000000000ull + (uint64_t)i * 0x100000;
            /* a new address each round: not from the cache */
            int got = etl_symbolizer_resolve(s, 100, mapped(&full, full.fn[1].value + (unsigned)round, base, 0), 5000, out, 16);
            unsigned fds;
            ck_assert_int_eq(got, 1);
            ck_assert_str_eq(out[0].function, "beta");
            if (i % 50 == 0 && (fds = open_fds()) > most) most = fds;
        }
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.images, N);
    ck_assert_uint_eq(st.images_with_symbols, N);
    ck_assert_msg(most < before + 200, "%u file descriptors open while resolving (%u before)", most, before);
    etl_symbolizer_close(s);
    ck_assert_uint_le(open_fds(), before);
}
END_TEST

/* Addresses with no image, images with no backend, and max 1. */
START_TEST(no_image)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[4];
    uint64_t base = 0x7f0000000000ull;

    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    tr_image(&t, 100, 0x10000000, 0x1000, "\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll");
    s = tr_load(&t, NULL);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, 0x1234, 5000, out, 4), 1);
    ck_assert_ptr_null(out[0].image);
    ck_assert_ptr_null(out[0].function);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 101, base + 0x1100, 5000, out, 4), 1); /* another process */
    ck_assert_ptr_null(out[0].image);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, 0x10000010, 5000, out, 4), 1);
    ck_assert_str_eq(out[0].image, "ntdll.dll");
    ck_assert_uint_eq(out[0].image_offset, 0x10);
    ck_assert_ptr_null(out[0].function);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, 0x10000010, 5000, out, 0), 0);
    /* before the image was loaded */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 100, base + 0x1100, 10, out, 4), 1);
    ck_assert_ptr_null(out[0].image);
    etl_symbolizer_close(s);
}
END_TEST

/* max smaller than the frames: the innermost ones. */
START_TEST(elf_max_frames)
{
    struct trace t;
    etl_symbolizer *s;
    uint64_t v[400], base = random_base();
    size_t n = sample_vaddrs(&full, v, 400), found = 0;

    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    s = tr_load(&t, NULL);
    for (size_t i = 0; i < n; i++) {
        etl_symbol all[16], one[1];
        int k = etl_symbolizer_resolve(s, 100, mapped(&full, v[i], base, 0), 5000, all, 16);
        if (k < 2) continue;
        found++;
        ck_assert_int_eq(etl_symbolizer_resolve(s, 100, mapped(&full, v[i], base, 0), 5000, one, 1), 1);
        ck_assert_str_eq(one[0].function, all[0].function);
        ck_assert_uint_eq(one[0].inlined, 1);
    }
    ck_assert_uint_gt(found, 0);
    etl_symbolizer_close(s);
}
END_TEST

/* ---------------------------------------------------------------- the cache */

/* Many distinct addresses through a tiny cache: its use stays within the bound, and what it
   pushes out resolves the same again. */
START_TEST(cache_bound)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbolizer_options o;
    etl_symbolizer_stats st;
    uint64_t base = random_base();
    int x = xseg(&full);
    const size_t bound = 4096;
    size_t n = 0;

    memset(&o, 0, sizeof o);
    o.cache_bytes = bound;
    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    s = tr_load(&t, &o);
    for (int round = 0; round < 2; round++)
        for (uint64_t v = full.seg[x].vaddr; v < full.seg[x].vaddr + full.seg[x].filesz; v++, n++) {
            etl_symbol out[16], again[16];
            uint64_t a = mapped(&full, v, base, 0);
            int k = etl_symbolizer_resolve(s, 100, a, 5000, out, 16);
            ck_assert_int_ge(k, 1);
            etl_symbolizer_stats_get(s, &st);
            ck_assert_uint_le(st.cache_bytes, bound);
            ck_assert_uint_gt(st.cache_bytes, 0);
            if (v % 97 == 0) { /* the same answer from the cache */
                ck_assert_int_eq(etl_symbolizer_resolve(s, 100, a, 5000, again, 16), k);
                for (int i = 0; i < k; i++) ck_assert_ptr_eq(again[i].function, out[i].function);
            }
        }
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_ge(st.lookups, n);
    ck_assert_uint_gt(st.cache_hits, 0);
    /* a tiny cache cannot hold the first round when the second begins */
    ck_assert_uint_lt(st.cache_hits, n / 2);
    etl_symbolizer_close(s);

    /* The default bound holds them all: the second round is all hits. */
    tr_begin(&t);
    tr_image(&t, 100, base, 0x5000, full.path);
    s = tr_load(&t, NULL);
    for (int round = 0; round < 2; round++)
        for (uint64_t v = full.seg[x].vaddr; v < full.seg[x].vaddr + full.seg[x].filesz; v++) {
            etl_symbol out[16];
            ck_assert_int_ge(etl_symbolizer_resolve(s, 100, mapped(&full, v, base, 0), 5000, out, 16), 1);
        }
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.cache_hits, full.seg[x].filesz);
    ck_assert_uint_le(st.cache_bytes, (size_t)16 << 20);
    etl_symbolizer_close(s);
}
END_TEST

/* ---------------------------------------------------------------- kallsyms */

START_TEST(kallsyms_basic)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[4];
    etl_symbolizer_stats st;

    tr_begin(&t);
    /* chunk 1 first (any order), duplicates at 0x...1100, a module's symbols, data symbols */
    tr_ksyms(&t, 1,
             "ffffffff81001100 T dup_first\n"
             "ffffffff81001100 t dup_second\n"
             "ffffffff81002000 D some_data\n"
             "ffffffff81003000 T last_text\n"
             "ffffffffc0a00000 t mod_fn\t[mymod]\n"
             "ffffffffc0a00400 t mod_fn2\t[mymod]\n"
             "ffffffffc0a00800 T mod_end\t[mymod]\n", 1);
    tr_ksyms(&t, 0,
             "ffffffff81000000 T _stext\n"
             "ffffffff81000100 T start_kernel\n"
             "ffffffff81000100 W start_alias\n", 1);
    tr_kmodule(&t, 0xffffffff81000000ull, 0x1000000, "vmlinux");
    tr_kmodule(&t, 0xffffffffc0a00000ull, 0x1000, "mymod");
    s = tr_load(&t, NULL);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81000150ull, 1, out, 4), 1);
    ck_assert_str_eq(out[0].function, "start_kernel");
    ck_assert_uint_eq(out[0].function_offset, 0x50);
    ck_assert_str_eq(out[0].image, "vmlinux");
    ck_assert_uint_eq(out[0].image_offset, 0x150);
    /* across the chunk boundary: the last of chunk 0 reaches into chunk 1's first */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff810010ffull, 1, out, 4), 1);
    ck_assert_str_eq(out[0].function, "start_kernel");
    ck_assert_uint_eq(out[0].function_offset, 0x0fff);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81001100ull, 1, out, 4), 1);
    ck_assert_str_eq(out[0].function, "dup_first");
    ck_assert_uint_eq(out[0].function_offset, 0);
    /* a data symbol does not end a function */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81002010ull, 1, out, 4), 1);
    ck_assert_str_eq(out[0].function, "dup_first");
    ck_assert_int_eq(etl_symbolizer_resolve(s, 1234, 0xffffffffc0a00404ull, 1, out, 4), 1);
    ck_assert_str_eq(out[0].function, "mod_fn2");
    ck_assert_uint_eq(out[0].function_offset, 4);
    ck_assert_str_eq(out[0].image, "mymod");
    ck_assert_uint_eq(out[0].image_offset, 0x404);
    /* below the first symbol, past the last one: no function */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff80000000ull, 1, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffffc0a00900ull, 1, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    ck_assert_str_eq(out[0].image, "mymod");
    /* a symbol of the kernel does not reach into a module's range */
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffffc0000000ull, 1, out, 4), 1);
    ck_assert_ptr_null(out[0].function);
    ck_assert_ptr_null(etl_symbolizer_error(s));
    etl_symbolizer_stats_get(s, &st);
    ck_assert_uint_eq(st.resolved, 5);
    etl_symbolizer_close(s);
}
END_TEST

/* Kernel lookups are kept by address: asked again, in any order, with addresses that share a
   slot of that cache, each gets the answer it got first. */
START_TEST(kallsyms_cached)
{
    enum { N = 3 * 1024 };
    static etl_symbol first[N];
    struct trace t;
    etl_symbolizer *s;
    uint64_t addr[N];

    tr_begin(&t);
    tr_ksyms(&t, 0,
             "ffffffff81000000 T _stext\n"
             "ffffffff81000100 T start_kernel\n"
             "ffffffff81004000 t middle\n"
             "ffffffff81009000 T far_one\n"
             "ffffffffc0a00000 t mod_fn\t[mymod]\n"
             "ffffffffc0a00400 t mod_fn2\t[mymod]\n"
             "ffffffffc0a00700 T mod_end\t[mymod]\n", 1);
    tr_kmodule(&t, 0xffffffff81000000ull, 0x1000000, "vmlinux");
    tr_kmodule(&t, 0xffffffffc0a00000ull, 0x800, "mymod");
    s = tr_load(&t, NULL);
    for (int i = 0; i < N; i++) {
        /* three runs of addresses 0x10 apart, 4 MiB apart: many share a cache slot */
        addr[i] = (i % 3 == 0 ? 0xffffffff81000000ull : i % 3 == 1 ? 0xffffffff81400000ull : 0xffffffffc0a00000ull) +
                  (uint64_t)(i / 3) * 0x10;
        ck_assert_int_eq(etl_symbolizer_resolve(s, 0, addr[i], 1, &first[i], 1), 1);
    }
    for (int round = 0; round < 2; round++)
        for (int j = 0; j < N; j++) {
            int i = round ? N - 1 - j : (j * 7) % N;
            etl_symbol again;
            ck_assert_int_eq(etl_symbolizer_resolve(s, 0, addr[i], 1, &again, 1), 1);
            ck_assert_ptr_eq(again.function, first[i].function);
            ck_assert_uint_eq(again.function_offset, first[i].function_offset);
            ck_assert_ptr_eq(again.image, first[i].image);
            ck_assert_uint_eq(again.image_offset, first[i].image_offset);
        }
    /* what the first answers were */
    ck_assert_str_eq(first[3 * 0x10].function, "start_kernel"); /* 0x...81000100 */
    ck_assert_uint_eq(first[3 * 0x10].function_offset, 0);
    ck_assert_str_eq(first[1].function, "far_one"); /* 0x...81400000, within vmlinux */
    ck_assert_uint_eq(first[1].function_offset, 0x3f7000);
    ck_assert_str_eq(first[3 * 0x41 + 2].function, "mod_fn2"); /* 0x...c0a00410 */
    ck_assert_str_eq(first[3 * 0x41 + 2].image, "mymod");
    ck_assert_ptr_null(first[3 * 0x80 + 2].function); /* 0x...c0a00800: past mymod's end */
    etl_symbolizer_close(s);
}
END_TEST

/* Without KernelModule events, the "[mod]" suffix names the image. */
START_TEST(kallsyms_module_suffix)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[2];

    tr_begin(&t);
    /* (out of address order: kallsyms is sorted, but a text need not be) */
    tr_ksyms(&t, 0,
             "ffffffffc0b00000 t other\t[other]\n"
             "ffffffff81000100 T start_kernel\n"
             "ffffffffc0a00000 t mod_fn\t[mymod]\n"
             "ffffffff81000000 T _stext\n"
             "ffffffffc0a00400 t mod_fn2\t[mymod]\n", 1);
    s = tr_load(&t, NULL);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffffc0a00410ull, 1, out, 2), 1);
    ck_assert_str_eq(out[0].function, "mod_fn2");
    ck_assert_str_eq(out[0].image, "mymod");
    ck_assert_uint_eq(out[0].image_offset, 0x410);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81000104ull, 1, out, 2), 1);
    ck_assert_str_eq(out[0].image, "vmlinux");
    ck_assert_uint_eq(out[0].image_offset, 0x104);
    etl_symbolizer_close(s);
}
END_TEST

/* Hostile text: no newline at the end, a huge line, non-hex addresses, no terminating zero, a
   repeated and a missing chunk, short payloads. No crash; the good lines still count; the error
   says what. */
START_TEST(kallsyms_hostile)
{
    struct trace t;
    etl_symbolizer *s;
    etl_symbol out[2];
    static char huge[64000];
    const char *err;
    uint8_t shortp[3] = { 1, 2, 3 };

    memset(huge, 'A', sizeof huge - 1);
    huge[sizeof huge - 1] = 0;
    memcpy(huge, "ffffffff81005000 T ", 19);
    tr_begin(&t);
    tr_ksyms(&t, 0, "ffffffff81000000 T _stext\nzzzzzzzzzzzzzzzz T nothex\nffffffff81000100 T no_newline", 1);
    tr_ksyms(&t, 1, huge, 1);
    tr_ksyms(&t, 1, "ffffffff81000200 T repeated\n", 1);
    tr_ksyms(&t, 3, "ffffffff81009000 T after_gap\n"
                    "ffffffff8100a000\n"
                    "ffffffff8100b000 T\n"
                    "fffffffffffffffffff T too_long_address\n"
                    "ffffffff8100c000 T end", 0);
    tr_raw(&t, 1, shortp, 3);
    tr_raw(&t, 2, shortp, 3);
    tr_raw(&t, 0, shortp, 3);
    s = tr_load(&t, NULL);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81000104ull, 1, out, 2), 1);
    ck_assert_str_eq(out[0].function, "no_newline");
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81005010ull, 1, out, 2), 1);
    ck_assert_uint_eq(strlen(out[0].function), sizeof huge - 1 - 19);
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81009010ull, 1, out, 2), 1);
    ck_assert_str_eq(out[0].function, "after_gap");
    ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff8100b010ull, 1, out, 2), 1);
    ck_assert_str_eq(out[0].function, "after_gap");
    err = etl_symbolizer_error(s);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "kallsyms") != NULL, "error: %s", err);
    etl_symbolizer_close(s);
}
END_TEST

/* Each damage alone gives its own message. */
START_TEST(kallsyms_messages)
{
    static const struct { const char *text; int terminate; uint32_t seq; const char *want; } cases[] = {
        { "ffffffff81000000 T a\nxyz T b\nffffffff81000100 T c\n", 1, 0, "not \"ADDRESS TYPE NAME\"" },
        { "ffffffff81000000 T a\nffffffff81000100 T c\n", 0, 0, "no terminating zero" },
        { "ffffffff81000000 T a\nffffffff81000100 T c\n", 1, 2, "chunk 0 missing" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct trace t;
        etl_symbolizer *s;
        etl_symbol out[1];
        const char *err;

        tr_begin(&t);
        tr_ksyms(&t, cases[i].seq, cases[i].text, cases[i].terminate);
        s = tr_load(&t, NULL);
        ck_assert_int_eq(etl_symbolizer_resolve(s, 0, 0xffffffff81000001ull, 1, out, 1), 1);
        ck_assert_str_eq(out[0].function, "a");
        err = etl_symbolizer_error(s);
        ck_assert_msg(err && strstr(err, cases[i].want), "case %zu: error %s, want %s", i, err ? err : "(none)",
                      cases[i].want);
        etl_symbolizer_close(s);
    }
}
END_TEST

/* A BuildId event whose BuildIdSize runs past its payload: said, with its file offset. */
START_TEST(buildid_damaged)
{
    struct trace t;
    etl_symbolizer *s;
    struct synth_payload p;
    const char *err;

    tr_begin(&t);
    sp_init(&p, 8);
    spp(&p, 0x400000); spp(&p, 0x1000); sp32(&p, 100); sp64(&p, 0); sp16(&p, 500); sp8(&p, 1);
    tr_raw(&t, 0, p.b, p.n);
    s = tr_load(&t, NULL);
    err = etl_symbolizer_error(s);
    ck_assert_msg(err && strstr(err, "BuildIdSize 500") && strstr(err, "file offset"), "error: %s", err ? err : "(none)");
    etl_symbolizer_close(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("symbols");
    TCase *tc = tcase_create("elf");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, elf_by_path);
    tcase_add_test(tc, elf_pie_file_offset);
    tcase_add_test(tc, elf_build_id_dir);
    tcase_add_test(tc, elf_build_id_dir_and_path);
    tcase_add_test(tc, elf_debuginfod_layout);
    tcase_add_test(tc, elf_debuginfod_home);
    tcase_add_test(tc, elf_debuginfod_env);
    tcase_add_test(tc, elf_no_system_paths);
    tcase_add_test(tc, elf_build_id_mismatch);
    tcase_add_test(tc, elf_changed_but_found);
    tcase_add_test(tc, elf_fifo_path);
    tcase_add_test(tc, elf_symtab_only);
    tcase_add_test(tc, elf_max_frames);
    tcase_add_test(tc, elf_image_reuse);
    tcase_add_test(tc, elf_damaged_files);
    tcase_add_test(tc, elf_many_images);
    tcase_add_test(tc, no_image);
    tcase_add_test(tc, cache_bound);
    suite_add_tcase(su, tc);
    tc = tcase_create("kallsyms");
    tcase_add_test(tc, kallsyms_basic);
    tcase_add_test(tc, kallsyms_cached);
    tcase_add_test(tc, kallsyms_module_suffix);
    tcase_add_test(tc, kallsyms_hostile);
    tcase_add_test(tc, kallsyms_messages);
    tcase_add_test(tc, buildid_damaged);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    char cmd[600];
    int rc;

    build_fixtures();
    /* No symbols from the user's own debuginfod cache: tests that want one set these. */
    unsetenv("DEBUGINFOD_CACHE_PATH");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", path_in("nohome"), 1);
    rc = check_run(suite());
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "check_symbols: could not remove %s\n", dir);
    return rc;
}
