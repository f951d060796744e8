/* SPDX-License-Identifier: MIT */
/* Tests of the symbolizer's Windows and .NET sides: a PE and its PDB built here with clang-cl and lld-link, found in symstore layout and read through llvm-symbolizer; .NET methods from the runtime's events. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "symbols/symbols.h"
#include "synth.h"
#include "testutil.h"

/* ---------------------------------------------------------------- the PE and its PDB */

static const char prog_c[] =
    "int __declspec(noinline) alpha(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * 3; return s; }\n"
    "int __declspec(noinline) beta(int x) { int s = 1; for (int i = 0; i < x; i++) s ^= alpha(i) << 1; return s; }\n"
    "static int __declspec(noinline) gamma_fn(int x) { return beta(x) - alpha(x + 1) * 5; }\n"
    "int __declspec(noinline) delta(int x) { int s = 0; while (x > 1) { s++; x = x & 1 ? 3 * x + 1 : x / 2; } return s; }\n"
    "int mainCRTStartup(void) { return gamma_fn(10) + delta(27); }\n";

#define NFUNCS 4
static const char *const func_names[NFUNCS] = { "alpha", "beta", "gamma_fn", "delta" };

struct built {
    char dir[512];
    char exe[600], pdb[600];
    uint64_t preferred;               /* the PE's preferred base */
    uint64_t rva[NFUNCS];             /* each function's start, from the linker's map */
    uint64_t size[NFUNCS];            /* to the next symbol */
    etl_guid guid;                    /* from the PE's RSDS record */
    uint32_t age;
    char pdb_path_in_pe[512];
};

static struct built B;
static int built_ok;

/* The first of the programs that is on PATH (or the one $env names). */
static const char *find_tool(const char *env, const char *a, const char *b)
{
    static char found[4][256];
    static int next;
    const char *e = getenv(env);
    if (e && *e) return e;
    const char *cand[2] = { a, b };
    for (int i = 0; i < 2; i++) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", cand[i]);
        if (system(cmd) == 0) {
            char *f = found[next++ % 4];
            snprintf(f, 256, "%s", cand[i]);
            return f;
        }
    }
    return NULL;
}

static uint32_t rd32(const uint8_t *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24; }
static uint16_t rd16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }

/* The CodeView RSDS record of the PE's debug directory: GUID, age, PDB path. */
static void read_rsds(const char *exe, etl_guid *g, uint32_t *age, char *path, size_t size)
{
    size_t n;
    uint8_t *b = test_read_file(exe, &n);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_gt(n, 0x200);
    uint32_t pe = rd32(b + 0x3c);
    ck_assert(memcmp(b + pe, "PE\0\0", 4) == 0);
    const uint8_t *coff = b + pe + 4, *opt = coff + 20;
    unsigned nsec = rd16(coff + 2), optsize = rd16(coff + 16);
    ck_assert_uint_eq(rd16(opt), 0x20b);
    uint32_t dbg_rva = rd32(opt + 112 + 6 * 8), dbg_size = rd32(opt + 112 + 6 * 8 + 4);
    ck_assert_uint_ge(dbg_size, 28);
    const uint8_t *sec = opt + optsize;
    uint32_t dbg_off = 0;
    for (unsigned i = 0; i < nsec; i++, sec += 40) {
        uint32_t va = rd32(sec + 12), vs = rd32(sec + 8), raw = rd32(sec + 20);
        if (dbg_rva >= va && dbg_rva < va + vs) dbg_off = raw + (dbg_rva - va);
    }
    ck_assert_uint_ne(dbg_off, 0);
    int seen = 0;
    for (uint32_t d = 0; d + 28 <= dbg_size; d += 28) {
        const uint8_t *dd = b + dbg_off + d;
        if (rd32(dd + 12) != 2) continue;           /* CODEVIEW */
        const uint8_t *cv = b + rd32(dd + 24);
        ck_assert(memcmp(cv, "RSDS", 4) == 0);
        g->data1 = rd32(cv + 4);
        g->data2 = rd16(cv + 8);
        g->data3 = rd16(cv + 10);
        memcpy(g->data4, cv + 12, 8);
        *age = rd32(cv + 20);
        snprintf(path, size, "%s", (const char *)cv + 24);
        seen = 1;
    }
    ck_assert_msg(seen, "%s: no CodeView record", exe);
    free(b);
}

/* Builds prog.exe and prog.pdb (once, in the runner's process: an unchecked fixture). */
static void build_pe_once(void)
{
    if (built_ok) return;
    const char *cl = find_tool("CLANG_CL", "clang-cl-14", "clang-cl");
    const char *link = find_tool("LLD_LINK", "lld-link-14", "lld-link");
    ck_assert_msg(cl && link, "clang-cl and lld-link are needed (Debian's clang-tools-14 and lld-14: .ci/setup)");
    const char *t = getenv("TMPDIR");
    snprintf(B.dir, sizeof B.dir, "%s/check_symbols_pdb-XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(B.dir));
    char src[600], obj[600], map[600], cmd[4096];
    snprintf(src, sizeof src, "%s/prog.c", B.dir);
    snprintf(obj, sizeof obj, "%s/prog.obj", B.dir);
    snprintf(map, sizeof map, "%s/prog.map", B.dir);
    snprintf(B.exe, sizeof B.exe, "%s/prog.exe", B.dir);
    snprintf(B.pdb, sizeof B.pdb, "%s/prog.pdb", B.dir);
    FILE *f = fopen(src, "w");
    ck_assert_ptr_nonnull(f);
    fputs(prog_c, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --target=x86_64-pc-windows-msvc /nologo /c /O1 /Z7 /GS- '%s' '/Fo%s' >&2", cl,
             src, obj);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    snprintf(cmd, sizeof cmd,
             "'%s' /nologo /nodefaultlib /entry:mainCRTStartup /subsystem:console /debug '/pdb:%s' '/out:%s' "
             "'/map:%s' '%s' >&2",
             link, B.pdb, B.exe, map, obj);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    /* the functions' addresses from the linker's map: "0001:00000000  alpha  0000000140001000  prog.obj" */
    f = fopen(map, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    uint64_t all[64];
    int nall = 0;
    while (fgets(line, sizeof line, f)) {
        char sect[32], name[128], addr[32], objn[128];
        unsigned long long v;
        if (sscanf(line, " Preferred load address is %llx", &v) == 1) B.preferred = v;
        if (sscanf(line, " %31s %127s %31s %127s", sect, name, addr, objn) != 4 || !strchr(sect, ':')) continue;
        if (sscanf(addr, "%llx", &v) != 1) continue;
        if (nall < 64) all[nall++] = v;
        for (int i = 0; i < NFUNCS; i++)
            if (strcmp(name, func_names[i]) == 0) B.rva[i] = v;
    }
    fclose(f);
    ck_assert_uint_ne(B.preferred, 0);
    for (int i = 0; i < NFUNCS; i++) {
        ck_assert_msg(B.rva[i] > B.preferred, "%s not in the map", func_names[i]);
        uint64_t next = B.rva[i] + 16;
        for (int k = 0; k < nall; k++)
            if (all[k] > B.rva[i] && (next == B.rva[i] + 16 || all[k] < next)) next = all[k];
        B.size[i] = next - B.rva[i];
        B.rva[i] -= B.preferred;
    }
    read_rsds(B.exe, &B.guid, &B.age, B.pdb_path_in_pe, sizeof B.pdb_path_in_pe);
    built_ok = 1;
}

static void build_pe(void)
{
    ck_assert_msg(built_ok, "the PE and its PDB were not built");
}

/* What llvm-symbolizer says of the PE itself at rva: the function and the location lines. */
static void expected_at(uint64_t rva, char *fn, size_t fnsize, char *loc, size_t locsize)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "llvm-symbolizer --no-inlines '--obj=%s' 0x%" PRIx64 " 2>/dev/null", B.exe,
             B.preferred + rva);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(fgets(fn, (int)fnsize, p));
    ck_assert_ptr_nonnull(fgets(loc, (int)locsize, p));
    pclose(p);
    fn[strcspn(fn, "\n")] = '\0';
    loc[strcspn(loc, "\n")] = '\0';
}

/* ---------------------------------------------------------------- the trace's events */

static const etl_guid imageid_guid = { 0xb3e675d7, 0x2554, 0x4f18, { 0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde } };

#define PID 4242u
#define LOAD_BASE 0x7ff6a1230000ull   /* not the preferred base: the image was moved (ASLR) */

/* ImageID/Info and ImageID/DbgID_RSDS for the image at base of pid, as KernelTraceControl
   writes them (classic events of the ImageID GUID), added to s. */
static void add_imageid(struct synth *s, int64_t ts, uint32_t pid, uint64_t base, const etl_guid *g, uint32_t age,
                        const char *pdbname)
{
    struct synth_payload pl;
    uint8_t rec[4096];
    sp_init(&pl, 8);
    spp(&pl, base);
    spp(&pl, 0x4000);
    sp32(&pl, pid);
    sp32(&pl, 0x6b07a3c2);
    sp_str16(&pl, "prog.exe");
    ck_assert_int_eq(synth_add(s, 0, rec, synth_classic(rec, 1, 0, ts, &imageid_guid, 0, 0, 2, pid, 1, pl.b, pl.n)), 0);
    sp_init(&pl, 8);
    spp(&pl, base);
    sp32(&pl, pid);
    sp32(&pl, g->data1);
    sp16(&pl, g->data2);
    sp16(&pl, g->data3);
    for (int i = 0; i < 8; i++) sp8(&pl, g->data4[i]);
    sp32(&pl, age);
    sp_str8(&pl, pdbname);
    ck_assert_int_eq(synth_add(s, 0, rec, synth_classic(rec, 1, 0, ts, &imageid_guid, 36, 0, 2, pid, 1, pl.b, pl.n)), 0);
}

static struct synth *new_trace(void)
{
    struct synth_options o;
    memset(&o, 0, sizeof o);
    o.cpus = 1;
    struct synth *s = synth_new(&o);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* The two ImageID events in a file of their own, fed to p. */
static void feed_imageid(etl_sym_pdb *p, uint32_t pid, uint64_t base, const etl_guid *g, uint32_t age,
                         const char *pdbname)
{
    struct synth *s = new_trace();
    add_imageid(s, 2000000, pid, base, g, age, pdbname);
    size_t size;
    uint8_t *file = synth_finish(s, &size);
    ck_assert_ptr_nonnull(file);
    etl_reader *r;
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    etl_event ev;
    int taken = 0;
    while (etl_reader_next(r, &ev) == ETL_OK) {
        int rc = etl_sym_pdb_add(p, &ev);
        ck_assert_int_ge(rc, 0);
        taken += rc;
    }
    ck_assert_int_eq(taken, 2);
    etl_reader_close(r);
    free(file);
}

/* The symstore key of a PDB: GUID in 32 hex digits then the age in hex. */
static void symstore_key(const etl_guid *g, uint32_t age, char *out, size_t size)
{
    snprintf(out, size, "%08X%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%X", g->data1, g->data2, g->data3, g->data4[0],
             g->data4[1], g->data4[2], g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7], age);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    uint8_t *b = test_read_file(from, &n);
    ck_assert_ptr_nonnull(b);
    FILE *f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(b);
}

/* A symbol directory in symstore layout holding the PDB under key (GUID, age). */
static const char *make_symstore(const char *name, const etl_guid *g, uint32_t age)
{
    static char dir[600];
    char key[64], path[900];
    snprintf(dir, sizeof dir, "%s/%s", B.dir, name);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/prog.pdb", dir);
    mkdir(path, 0755);
    symstore_key(g, age, key, sizeof key);
    snprintf(path, sizeof path, "%s/prog.pdb/%s", dir, key);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/prog.pdb/%s/prog.pdb", dir, key);
    copy_file(B.pdb, path);
    return dir;
}

static etl_symbolizer *cur_sym;

static etl_sym_pdb *open_pdb2(const char *dir, const char *dir2, const char *program, unsigned flags)
{
    etl_symbolizer_options o;
    const char *dirs[2] = { dir, dir2 };
    memset(&o, 0, sizeof o);
    o.flags = flags;
    o.paths = dirs;
    o.npaths = dir2 ? 2 : 1;
    o.llvm_symbolizer = program;
    /* the PDB side of a symbolizer of its own, fed directly (pdb_close closes both) */
    ck_assert_ptr_null(cur_sym);
    ck_assert_int_eq(etl_symbolizer_open(&cur_sym, &o), ETL_OK);
    return cur_sym->pdb;
}

static void pdb_close(etl_sym_pdb *p)
{
    ck_assert_ptr_eq(p, cur_sym->pdb);
    etl_symbolizer_close(cur_sym);
    cur_sym = NULL;
}

static etl_sym_pdb *open_pdb(const char *dir, const char *program, unsigned flags)
{
    return open_pdb2(dir, NULL, program, flags);
}

/* Each function's samples (its start, a byte inside, its last byte) resolve to what
   llvm-symbolizer gives for the PE at the same addresses. */
static void check_functions(etl_sym_pdb *p)
{
    for (int i = 0; i < NFUNCS; i++) {
        uint64_t offs[3] = { B.rva[i], B.rva[i] + B.size[i] / 2, B.rva[i] + B.size[i] - 1 };
        for (int k = 0; k < 3; k++) {
            char fn[256], loc[512];
            expected_at(offs[k], fn, sizeof fn, loc, sizeof loc);
            ck_assert_str_eq(fn, func_names[i]); /* the map and llvm-symbolizer agree */
            etl_symbol out[8];
            int n = etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", offs[k], out, 8);
            ck_assert_msg(n >= 1, "%s+%" PRIu64 ": %d frames (%s)", func_names[i], offs[k] - B.rva[i], n,
                          etl_sym_pdb_error(p) ? etl_sym_pdb_error(p) : "no error");
            ck_assert_ptr_nonnull(out[n - 1].function);
            ck_assert_str_eq(out[n - 1].function, fn);
            /* the outermost frame's file and line are what llvm-symbolizer gives the PE */
            char ours[600];
            snprintf(ours, sizeof ours, "%s:%u:", out[n - 1].source_file ? out[n - 1].source_file : "??",
                     (unsigned)out[n - 1].line);
            ck_assert_msg(strncmp(loc, ours, strlen(ours)) == 0, "%s: ours %s, llvm-symbolizer's %s", fn, ours, loc);
        }
    }
}

START_TEST(pdb_ident_matches_pe)
{
    build_pe();
    etl_guid g;
    uint32_t age;
    ck_assert_int_eq(etl_sym_pdb_read_ident(B.pdb, &g, &age), ETL_OK);
    ck_assert(memcmp(&g, &B.guid, sizeof g) == 0);
    ck_assert_uint_eq(age, B.age);
    /* not a PDB: the PE itself, an empty file, a missing one */
    ck_assert_int_eq(etl_sym_pdb_read_ident(B.exe, &g, &age), ETL_FAILED);
    ck_assert_int_eq(etl_sym_pdb_read_ident("/nonexistent/x.pdb", &g, &age), ETL_FAILED);
    /* cut short anywhere: refused, never read past the end */
    size_t n;
    uint8_t *b = test_read_file(B.pdb, &n);
    ck_assert_ptr_nonnull(b);
    char cut[700];
    snprintf(cut, sizeof cut, "%s/cut.pdb", B.dir);
    size_t sizes[] = { 0, 31, 56, 4096, 4096 + 17, n / 2, n - 4096 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        FILE *f = fopen(cut, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(b, 1, sizes[i], f);
        fclose(f);
        int rc = etl_sym_pdb_read_ident(cut, &g, &age);
        if (rc == ETL_OK) ck_assert(memcmp(&g, &B.guid, sizeof g) == 0); /* what it read is right */
    }
    free(b);
}
END_TEST

START_TEST(pdb_symstore)
{
    build_pe();
    const char *dir = make_symstore("store", &B.guid, B.age);
    etl_sym_pdb *p = open_pdb(dir, NULL, 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "C:\\build\\out\\prog.pdb");
    ck_assert_uint_ne(etl_sym_pdb_find(p, PID, LOAD_BASE, "prog.exe"), 0);
    ck_assert_uint_eq(etl_sym_pdb_find(p, PID + 1, LOAD_BASE, "other.exe"), 0);
    check_functions(p);
    uint64_t found, mism;
    etl_sym_pdb_counts(p, &found, &mism);
    ck_assert_uint_eq(found, 1);
    ck_assert_uint_eq(mism, 0);
    ck_assert_ptr_null(etl_sym_pdb_error(p));
    /* another image: nothing */
    etl_symbol out[4];
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE + 0x100000, "other.dll", 0x1000, out, 4), 0);
    pdb_close(p);
}
END_TEST

START_TEST(pdb_flat_directory)
{
    build_pe();
    /* DIR/prog.pdb, its GUID and age read from the file */
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/flat", B.dir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/prog.pdb", dir);
    copy_file(B.pdb, path);
    const char *d = dir;
    etl_sym_pdb *p = open_pdb(d, NULL, 0);
    /* the path as the linker wrote it into the PE (here a Linux path) */
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, B.pdb_path_in_pe);
    check_functions(p);
    pdb_close(p);
}
END_TEST

START_TEST(pdb_batch)
{
    build_pe();
    const char *dir = make_symstore("store_batch", &B.guid, B.age);
    etl_sym_pdb *p = open_pdb(dir, NULL, 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    /* 600 requests in one exchange: more than a pipe's buffer in both directions */
    enum { N = 600, MAXF = 4 };
    uint64_t offs[N];
    for (int i = 0; i < N; i++) offs[i] = B.rva[i % NFUNCS] + (uint64_t)(i / NFUNCS) % B.size[i % NFUNCS];
    etl_symbol *out = calloc((size_t)N * MAXF, sizeof *out);
    unsigned counts[N];
    ck_assert_int_eq(etl_sym_pdb_resolve_batch(p, PID, LOAD_BASE, "prog.exe", offs, N, out, MAXF, counts), ETL_OK);
    for (int i = 0; i < N; i++) {
        ck_assert_uint_ge(counts[i], 1);
        ck_assert_str_eq(out[(size_t)i * MAXF + counts[i] - 1].function, func_names[i % NFUNCS]);
    }
    free(out);
    pdb_close(p);
}
END_TEST

/* A merge's DbgID event under another process (the system's, 0): used for the image of the same
   base and original file name in PID, not for another image at that base. */
START_TEST(pdb_other_process)
{
    build_pe();
    const char *dir = make_symstore("store_other", &B.guid, B.age);
    etl_sym_pdb *p = open_pdb(dir, NULL, 0);
    feed_imageid(p, 0, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    etl_symbol out[4];
    char fn[256], loc[512];
    expected_at(B.rva[1], fn, sizeof fn, loc, sizeof loc);
    int n = etl_sym_pdb_resolve(p, PID, LOAD_BASE, "PROG.EXE", B.rva[1], out, 4);
    ck_assert_int_ge(n, 1);
    ck_assert_str_eq(out[n - 1].function, fn);
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "other.dll", B.rva[1], out, 4), 0);
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE + 0x10000, "prog.exe", B.rva[1], out, 4), 0);
    pdb_close(p);
}
END_TEST

START_TEST(pdb_absent)
{
    build_pe();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/empty", B.dir);
    mkdir(dir, 0755);
    etl_sym_pdb *p = open_pdb(dir, NULL, 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    etl_symbol out[4];
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[0], out, 4), 0);
    uint64_t found, mism;
    etl_sym_pdb_counts(p, &found, &mism);
    ck_assert_uint_eq(found, 0);
    ck_assert_uint_eq(mism, 0);
    pdb_close(p);
}
END_TEST

START_TEST(pdb_wrong_age)
{
    build_pe();
    /* the trace's image was built with age+1: a PDB filed under that key, and one in the
       directory itself, are the older build's and are not used */
    char dir[600], flat[600], path[700];
    snprintf(dir, sizeof dir, "%s", make_symstore("store_age", &B.guid, B.age + 1));
    snprintf(flat, sizeof flat, "%s/flat_age", B.dir);
    mkdir(flat, 0755);
    snprintf(path, sizeof path, "%s/prog.pdb", flat);
    copy_file(B.pdb, path);
    etl_sym_pdb *p = open_pdb2(dir, flat, NULL, 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age + 1, "prog.pdb");
    etl_symbol out[4];
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[0], out, 4), 0);
    uint64_t found, mism;
    etl_sym_pdb_counts(p, &found, &mism);
    ck_assert_uint_eq(found, 0);
    ck_assert_uint_eq(mism, 1);
    ck_assert_ptr_nonnull(etl_sym_pdb_error(p));
    ck_assert_ptr_nonnull(strstr(etl_sym_pdb_error(p), "not used"));
    pdb_close(p);
}
END_TEST

START_TEST(pdb_no_pdb_flag)
{
    build_pe();
    const char *dir = make_symstore("store_flag", &B.guid, B.age);
    /* a program that would fail the test if it were started */
    etl_sym_pdb *p = open_pdb(dir, "/nonexistent/llvm-symbolizer", ETL_SYMBOLS_NO_PDB);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    etl_symbol out[4];
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[0], out, 4), 0);
    ck_assert_ptr_null(etl_sym_pdb_error(p));
    pdb_close(p);
}
END_TEST

START_TEST(pdb_symbolizer_missing)
{
    build_pe();
    const char *dir = make_symstore("store_missing", &B.guid, B.age);
    etl_sym_pdb *p = open_pdb(dir, "/nonexistent/llvm-symbolizer", 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    etl_symbol out[4];
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[0], out, 4), 0);
    const char *e = etl_sym_pdb_error(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(strstr(e, "/nonexistent/llvm-symbolizer") && strstr(e, "cannot run"), "%s", e);
    /* said once: the next lookups give image+offset at once */
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[1], out, 4), 0);
    ck_assert_str_eq(etl_sym_pdb_error(p), e);
    pdb_close(p);
}
END_TEST

/* A fake llvm-symbolizer: a shell script with body. */
static const char *fake_symbolizer(const char *name, const char *body)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s.sh", B.dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0755), 0);
    return path;
}

/* With the fake program, every lookup gives nothing, the problem is said, and nothing hangs
   (the test's own timeout would stop it) or kills the caller with SIGPIPE. */
static void check_fake(const char *name, const char *body, const char *message)
{
    build_pe();
    setenv("ETL_LLVM_SYMBOLIZER_TIMEOUT_MS", "1000", 1);
    const char *dir = make_symstore(name, &B.guid, B.age);
    etl_sym_pdb *p = open_pdb(dir, fake_symbolizer(name, body), 0);
    feed_imageid(p, PID, LOAD_BASE, &B.guid, B.age, "prog.pdb");
    enum { N = 3000 }; /* more than a socket's buffer: the writes meet a closed reader */
    uint64_t *offs = calloc(N, sizeof *offs);
    etl_symbol *out = calloc((size_t)N * 2, sizeof *out);
    unsigned *counts = calloc(N, sizeof *counts);
    for (int i = 0; i < N; i++) offs[i] = B.rva[0];
    ck_assert_int_eq(etl_sym_pdb_resolve_batch(p, PID, LOAD_BASE, "prog.exe", offs, N, out, 2, counts), ETL_OK);
    for (int i = 0; i < N; i++) ck_assert_uint_eq(counts[i], 0);
    const char *e = etl_sym_pdb_error(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(strstr(e, message), "%s: %s", name, e);
    ck_assert_int_eq(etl_sym_pdb_resolve(p, PID, LOAD_BASE, "prog.exe", B.rva[1], out, 2), 0);
    pdb_close(p);
    free(offs);
    free(out);
    free(counts);
    unsetenv("ETL_LLVM_SYMBOLIZER_TIMEOUT_MS");
}

START_TEST(pdb_fake_hangs)
{
    check_fake("hang", "exec sleep 600", "no answer within");
}
END_TEST

START_TEST(pdb_fake_reads_never_answers)
{
    check_fake("mute", "while read -r l; do :; done", "no answer within");
}
END_TEST

START_TEST(pdb_fake_exits)
{
    check_fake("quits", "exit 0", "");
}
END_TEST

START_TEST(pdb_fake_garbage)
{
    check_fake("garbage", "while read -r l; do echo 'some garbage'; echo; done", "is not llvm-symbolizer's");
}
END_TEST

START_TEST(pdb_fake_endless)
{
    check_fake("endless", "exec yes 'no blank line ever'", "is not llvm-symbolizer's");
}
END_TEST

/* ---------------------------------------------------------------- through etl_symbolizer */

#define TID 4243u

/* An Image Load (version 3) of prog.exe in PID at LOAD_BASE, its ImageID events, and samples
   (SampledProfile) at each function's start, middle and last byte; the file in *size. */
static uint8_t *pe_trace(size_t *size, uint32_t age)
{
    struct synth *s = new_trace();
    struct synth_payload p;
    uint8_t rec[4096];
    sp_init(&p, 8);
    spp(&p, LOAD_BASE); spp(&p, 0x4000); sp32(&p, PID); sp32(&p, 0); sp32(&p, 0x6b07a3c2);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, B.preferred); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, "\\Device\\HarddiskVolume3\\app\\prog.exe");
    ck_assert_int_eq(synth_add(s, 0, rec, synth_system(rec, 1, 0, 2000000, 0x030A, 3, PID, TID, p.b, p.n)), 0);
    add_imageid(s, 2000001, PID, LOAD_BASE, &B.guid, age, "C:\\build\\prog.pdb");
    int64_t ts = 2000100;
    for (int i = 0; i < NFUNCS; i++) {
        uint64_t offs[3] = { B.rva[i], B.rva[i] + B.size[i] / 2, B.rva[i] + B.size[i] - 1 };
        for (int k = 0; k < 3; k++) {
            sp_init(&p, 8);
            spp(&p, LOAD_BASE + offs[k]); sp32(&p, TID); sp16(&p, 1); sp8(&p, 0); sp8(&p, 0);
            ck_assert_int_eq(synth_add(s, 0, rec, synth_perfinfo(rec, 1, ts++, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n)), 0);
        }
    }
    uint8_t *file = synth_finish(s, size);
    ck_assert_ptr_nonnull(file);
    return file;
}

/* Feeds the trace to a new symbolizer, then resolves every sample (of PID: the trace's only
   thread); the samples whose function is named, the symbolizer in *out. */
static int resolve_samples(const uint8_t *file, size_t size, const etl_symbolizer_options *o, etl_symbolizer **out,
                           int check_names)
{
    etl_symbolizer *sym;
    ck_assert_int_eq(etl_symbolizer_open(&sym, o), ETL_OK);
    etl_reader *r;
    etl_event ev;
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_symbolizer_add(sym, &ev), ETL_OK);
    etl_reader_close(r);
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    int named = 0, samples = 0;
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_kernel_event k;
        if (etl_kernel_decode(&ev, &k) != 1 || k.kclass != ETL_KCLASS_SAMPLED_PROFILE) continue;
        uint64_t ip = k.u.sample.instruction_pointer;
        etl_symbol fr[8];
        int n = etl_symbolizer_resolve(sym, PID, ip, ev.timestamp, fr, 8);
        ck_assert_int_ge(n, 1);
        samples++;
        /* the image and offset are kept, named or not */
        ck_assert_str_eq(fr[n - 1].image, "prog.exe");
        ck_assert_uint_eq(fr[n - 1].image_offset, ip - LOAD_BASE);
        if (!fr[n - 1].function) continue;
        named++;
        if (check_names) {
            char fn[256], loc[512];
            expected_at(ip - LOAD_BASE, fn, sizeof fn, loc, sizeof loc);
            ck_assert_str_eq(fr[n - 1].function, fn);
        }
    }
    etl_reader_close(r);
    ck_assert_int_eq(samples, NFUNCS * 3);
    *out = sym;
    return named;
}

START_TEST(symbolizer_pe_samples)
{
    build_pe();
    const char *dir = make_symstore("store_e2e", &B.guid, B.age);
    size_t size;
    uint8_t *file = pe_trace(&size, B.age);
    etl_symbolizer_options o;
    memset(&o, 0, sizeof o);
    o.paths = &dir;
    o.npaths = 1;
    etl_symbolizer *sym;
    ck_assert_int_eq(resolve_samples(file, size, &o, &sym, 1), NFUNCS * 3);
    etl_symbolizer_stats st;
    etl_symbolizer_stats_get(sym, &st);
    ck_assert_uint_eq(st.images_with_symbols, 1);
    ck_assert_uint_eq(st.images_mismatched, 0);
    ck_assert_uint_eq(st.resolved, NFUNCS * 3);
    ck_assert_ptr_null(etl_symbolizer_error(sym));
    etl_symbolizer_close(sym);

    /* NO_PDB: image+offset only */
    o.flags = ETL_SYMBOLS_NO_PDB;
    ck_assert_int_eq(resolve_samples(file, size, &o, &sym, 0), 0);
    etl_symbolizer_close(sym);

    /* llvm-symbolizer missing: image+offset, and the symbolizer says why */
    o.flags = 0;
    o.llvm_symbolizer = "/nonexistent/bin/llvm-symbolizer";
    ck_assert_int_eq(resolve_samples(file, size, &o, &sym, 0), 0);
    ck_assert_ptr_nonnull(etl_symbolizer_error(sym));
    ck_assert_ptr_nonnull(strstr(etl_symbolizer_error(sym), "/nonexistent/bin/llvm-symbolizer"));
    etl_symbolizer_close(sym);

    /* $ETL_LLVM_SYMBOLIZER names the program when the options do not */
    o.llvm_symbolizer = NULL;
    setenv("ETL_LLVM_SYMBOLIZER", "/nonexistent/env/llvm-symbolizer", 1);
    ck_assert_int_eq(resolve_samples(file, size, &o, &sym, 0), 0);
    ck_assert_ptr_nonnull(strstr(etl_symbolizer_error(sym), "/nonexistent/env/llvm-symbolizer"));
    etl_symbolizer_close(sym);
    unsetenv("ETL_LLVM_SYMBOLIZER");
    free(file);
}
END_TEST

START_TEST(symbolizer_pe_wrong_age)
{
    build_pe();
    const char *dir = make_symstore("store_e2e_age", &B.guid, B.age);
    size_t size;
    uint8_t *file = pe_trace(&size, B.age + 1); /* the image was built with a later age */
    const char *dirs[2] = { dir, B.dir };      /* B.dir holds prog.pdb itself: age B.age */
    etl_symbolizer_options o;
    memset(&o, 0, sizeof o);
    o.paths = dirs;
    o.npaths = 2;
    etl_symbolizer *sym;
    ck_assert_int_eq(resolve_samples(file, size, &o, &sym, 0), 0);
    etl_symbolizer_stats st;
    etl_symbolizer_stats_get(sym, &st);
    ck_assert_uint_eq(st.images_with_symbols, 0);
    ck_assert_uint_eq(st.images_mismatched, 1);
    ck_assert_ptr_nonnull(etl_symbolizer_error(sym));
    ck_assert_ptr_nonnull(strstr(etl_symbolizer_error(sym), "not used"));
    etl_symbolizer_close(sym);
    free(file);
}
END_TEST

/* ---------------------------------------------------------------- .NET methods */

static const etl_guid clr_runtime = { 0xe13c0d23, 0xccbc, 0x4e12, { 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4 } };
static const etl_guid clr_rundown = { 0xa669021c, 0xc450, 0x4609, { 0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18 } };

struct clr_trace {
    struct synth *s;
};

/* MethodLoadVerbose_V1 / MethodDCStartVerbose_V1 ... (the manifest's MethodLoadUnloadVerbose_V1
   and MethodLoadUnloadRundownVerbose_V1 templates share the layout). */
static void add_method(struct synth *s, const etl_guid *prov, uint16_t id, int64_t ts, uint32_t pid, uint64_t method_id,
                       uint64_t module_id, uint64_t start, uint32_t size, const char *ns, const char *name, const char *sig)
{
    struct synth_payload pl;
    uint8_t rec[4096];
    sp_init(&pl, 8);
    sp64(&pl, method_id);
    sp64(&pl, module_id);
    sp64(&pl, start);
    sp32(&pl, size);
    sp32(&pl, 0x06000001);   /* MethodToken */
    sp32(&pl, 0);            /* MethodFlags */
    sp_str16(&pl, ns);
    sp_str16(&pl, name);
    sp_str16(&pl, sig);
    sp16(&pl, 8);            /* ClrInstanceID */
    /* opcodes: MethodLoadVerbose 37, MethodUnloadVerbose 38; DCStartVerbose 39, DCEndVerbose 40 */
    uint8_t opcode = (uint8_t)((prov == &clr_runtime ? 37 : 39) + (id == 144));
    uint32_t n = synth_event_header(rec, 1, ts, prov, id, 1, 4, opcode, 9, 0x10, pid, 77, NULL, 0, pl.b, pl.n);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
}

/* ModuleLoad_V2 (runtime, 152) or ModuleDCStart_V2 (rundown, 153). */
static void add_module(struct synth *s, const etl_guid *prov, uint16_t id, int64_t ts, uint32_t pid, uint64_t module_id,
                       const char *il_path)
{
    struct synth_payload pl;
    uint8_t rec[4096];
    sp_init(&pl, 8);
    sp64(&pl, module_id);
    sp64(&pl, 0xa55e);       /* AssemblyID */
    sp32(&pl, 0);            /* ModuleFlags */
    sp32(&pl, 0);            /* Reserved1 */
    sp_str16(&pl, il_path);
    sp_str16(&pl, "");       /* ModuleNativePath */
    sp16(&pl, 8);
    for (int i = 0; i < 16; i++) sp8(&pl, 0);
    sp32(&pl, 0);
    sp_str16(&pl, "");
    for (int i = 0; i < 16; i++) sp8(&pl, 0);
    sp32(&pl, 0);
    sp_str16(&pl, "");
    uint32_t n = synth_event_header(rec, 1, ts, prov, id, 2, 4, 0, 10, 0x8, pid, 77, NULL, 0, pl.b, pl.n);
    ck_assert_int_eq(synth_add(s, 0, rec, n), 0);
}

static etl_sym_clr *feed_clr(struct synth *s)
{
    size_t size;
    uint8_t *file = synth_finish(s, &size);
    ck_assert_ptr_nonnull(file);
    etl_reader *r;
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    ck_assert_ptr_null(cur_sym);
    ck_assert_int_eq(etl_symbolizer_open(&cur_sym, NULL), ETL_OK);
    etl_sym_clr *c = cur_sym->clr;
    etl_event ev;
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_ge(etl_sym_clr_add(c, &ev), 0);
    etl_reader_close(r);
    free(file);
    return c;
}

START_TEST(clr_methods)
{
    struct synth *s = new_trace();
    const uint32_t pid = 5150;
    add_module(s, &clr_runtime, 152, 2000010, pid, 0x7ffa0000, "C:\\app\\Demo.dll");
    /* a JIT-compiled method, loaded at t=2000100 */
    add_method(s, &clr_runtime, 143, 2000100, pid, 0x1001, 0x7ffa0000, 0x7ffb10001000, 0x80, "Demo.Program", "Spin",
               "int32  (int32,class System.String)");
    /* a method there before the trace began (rundown at the start) */
    add_method(s, &clr_rundown, 143, 2000001, pid, 0x1002, 0x7ffa0000, 0x7ffb10002000, 0x40, "Demo.Program", "Main",
               "void  (class System.String[])");
    /* a method unloaded at 2000300; its range then holds another from 2000400 */
    add_method(s, &clr_runtime, 143, 2000200, pid, 0x1003, 0x7ffa0000, 0x7ffb10003000, 0x100, "Demo.Old", "Gone",
               "void  ()");
    add_method(s, &clr_runtime, 144, 2000300, pid, 0x1003, 0x7ffa0000, 0x7ffb10003000, 0x100, "Demo.Old", "Gone",
               "void  ()");
    add_method(s, &clr_runtime, 143, 2000400, pid, 0x1004, 0x7ffa0000, 0x7ffb10003000, 0x80, "Demo.New", "Here",
               "instance void  ()");
    /* a method only the rundown at the end saw; no namespace */
    add_method(s, &clr_rundown, 144, 2000900, pid, 0x1005, 0x7ffa1000, 0x7ffb10004000, 0x20, "", "Lone", "void  ()");
    /* the same addresses in another process: another method */
    add_method(s, &clr_runtime, 143, 2000100, pid + 1, 0x2001, 0x1, 0x7ffb10001000, 0x80, "Other.Proc", "Work",
               "void  ()");
    etl_sym_clr *c = feed_clr(s);
    ck_assert_ptr_null(etl_sym_clr_error(c));
    etl_symbol o;

    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10001010, 2000150, &o), 1);
    ck_assert_str_eq(o.function, "Demo.Program.Spin(int32,class System.String)");
    ck_assert_uint_eq(o.function_offset, 0x10);
    ck_assert_str_eq(o.image, "Demo.dll");
    ck_assert_str_eq(o.image_path, "C:\\app\\Demo.dll");
    /* before its load, past its end: nothing */
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10001010, 2000050, &o), 0);
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10001080, 2000150, &o), 0);
    /* rundown at the start: any time */
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb1000203f, 2000000, &o), 1);
    ck_assert_str_eq(o.function, "Demo.Program.Main(class System.String[])");
    /* the reused range */
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10003010, 2000250, &o), 1);
    ck_assert_str_eq(o.function, "Demo.Old.Gone()");
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10003010, 2000350, &o), 0);
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10003010, 2000450, &o), 1);
    ck_assert_str_eq(o.function, "Demo.New.Here()");
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb100030f0, 2000450, &o), 0); /* the old one's tail */
    /* rundown at the end; no module event for its module */
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid, 0x7ffb10004000, 2000500, &o), 1);
    ck_assert_str_eq(o.function, "Lone()");
    ck_assert_ptr_null(o.image);
    /* per process */
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid + 1, 0x7ffb10001010, 2000150, &o), 1);
    ck_assert_str_eq(o.function, "Other.Proc.Work()");
    ck_assert_int_eq(etl_sym_clr_resolve(c, pid + 2, 0x7ffb10001010, 2000150, &o), 0);
    ck_assert_uint_eq(etl_sym_clr_methods(c), 6);
    etl_symbolizer_close(cur_sym);
    cur_sym = NULL;
}
END_TEST

/* Many methods of varied sizes: every address of each resolves to its own. */
START_TEST(clr_many)
{
    struct synth *s = new_trace();
    enum { M = 2000 };
    uint64_t at = 0x10000000;
    uint64_t starts[M];
    uint32_t sizes[M];
    for (int i = 0; i < M; i++) {
        char name[32];
        snprintf(name, sizeof name, "M%d", i);
        sizes[i] = (uint32_t)(16 + (i * 37) % 500);
        starts[i] = at;
        add_method(s, &clr_runtime, 143, 2000000 + i, 1, 0x5000 + (uint64_t)i, 9, at, sizes[i], "N.T", name, "void  ()");
        at += sizes[i] + (uint64_t)(i % 3) * 8;
    }
    etl_sym_clr *c = feed_clr(s);
    for (int i = 0; i < M; i++) {
        char want[32];
        snprintf(want, sizeof want, "N.T.M%d()", i);
        etl_symbol o;
        ck_assert_int_eq(etl_sym_clr_resolve(c, 1, starts[i] + sizes[i] - 1, 3000000, &o), 1);
        ck_assert_str_eq(o.function, want);
        ck_assert_int_eq(etl_sym_clr_resolve(c, 1, starts[i], 3000000, &o), 1);
        ck_assert_str_eq(o.function, want);
        if (i % 3) ck_assert_int_eq(etl_sym_clr_resolve(c, 1, starts[i] + sizes[i], 3000000, &o), 0);
    }
    etl_symbolizer_close(cur_sym);
    cur_sym = NULL;
}
END_TEST

/* Through etl_symbolizer: samples in JIT-compiled code (no image) of a process get their
   method; samples elsewhere keep no image; an image's own samples keep it. */
START_TEST(symbolizer_clr_samples)
{
    struct synth *s = new_trace();
    const uint32_t pid = 6000, tid = 6001;
    add_module(s, &clr_runtime, 152, 2000010, pid, 0x7ffa0000, "C:\\app\\Demo.dll");
    add_method(s, &clr_runtime, 143, 2000100, pid, 0x1001, 0x7ffa0000, 0x7ffb10001000, 0x80, "Demo.Program", "Spin",
               "int32  (int32)");
    add_method(s, &clr_rundown, 143, 2000001, pid, 0x1002, 0x7ffa0000, 0x7ffb10002000, 0x40, "Demo.Program", "Main",
               "void  (class System.String[])");
    struct synth_payload p;
    uint8_t rec[4096];
    /* a native image too (no symbols for it) */
    sp_init(&p, 8);
    spp(&p, 0x7ffc00000000); spp(&p, 0x10000); sp32(&p, pid); sp32(&p, 0); sp32(&p, 0);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, 0x180000000); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, "\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll");
    ck_assert_int_eq(synth_add(s, 0, rec, synth_system(rec, 1, 0, 2000002, 0x030A, 3, pid, tid, p.b, p.n)), 0);
    static const uint64_t ips[] = { 0x7ffb10001000, 0x7ffb1000107f, 0x7ffb10002010, 0x7ffb10001080, 0x7ffb10000fff,
                                    0x7ffc00001234 };
    for (size_t i = 0; i < sizeof ips / sizeof ips[0]; i++) {
        sp_init(&p, 8);
        spp(&p, ips[i]); sp32(&p, tid); sp16(&p, 1); sp8(&p, 0); sp8(&p, 0);
        ck_assert_int_eq(synth_add(s, 0, rec, synth_perfinfo(rec, 1, 2000200 + (int64_t)i, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n)), 0);
    }
    size_t size;
    uint8_t *file = synth_finish(s, &size);
    etl_symbolizer *sym;
    ck_assert_int_eq(etl_symbolizer_open(&sym, NULL), ETL_OK);
    etl_reader *r;
    etl_event ev;
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_symbolizer_add(sym, &ev), ETL_OK);
    etl_reader_close(r);
    static const char *const want[] = { "Demo.Program.Spin(int32)", "Demo.Program.Spin(int32)",
                                        "Demo.Program.Main(class System.String[])", NULL, NULL, NULL };
    static const char *const image[] = { "Demo.dll", "Demo.dll", "Demo.dll", NULL, NULL, "ntdll.dll" };
    ck_assert_int_eq(etl_reader_open_memory(&r, file, size, NULL), ETL_OK);
    size_t i = 0;
    while (etl_reader_next(r, &ev) == ETL_OK) {
        etl_kernel_event k;
        if (etl_kernel_decode(&ev, &k) != 1 || k.kclass != ETL_KCLASS_SAMPLED_PROFILE) continue;
        ck_assert_uint_lt(i, sizeof ips / sizeof ips[0]);
        ck_assert_uint_eq(k.u.sample.instruction_pointer, ips[i]);
        etl_symbol fr[4];
        ck_assert_int_eq(etl_symbolizer_resolve(sym, pid, ips[i], ev.timestamp, fr, 4), 1);
        if (want[i]) ck_assert_str_eq(fr[0].function, want[i]);
        else ck_assert_ptr_null(fr[0].function);
        if (image[i]) ck_assert_str_eq(fr[0].image, image[i]);
        else ck_assert_ptr_null(fr[0].image);
        i++;
    }
    ck_assert_uint_eq(i, sizeof ips / sizeof ips[0]);
    etl_reader_close(r);
    etl_symbolizer_stats st;
    etl_symbolizer_stats_get(sym, &st);
    ck_assert_uint_eq(st.resolved, 3);
    etl_symbolizer_close(sym);
    free(file);
}
END_TEST

static void cleanup(void)
{
    if (built_ok) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", B.dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", B.dir);
    }
}

static Suite *suite(void)
{
    Suite *s = suite_create("symbols_pdb");
    TCase *t = tcase_create("pdb");
    tcase_set_timeout(t, 60);
    tcase_add_unchecked_fixture(t, build_pe_once, NULL);
    tcase_add_test(t, pdb_ident_matches_pe);
    tcase_add_test(t, pdb_symstore);
    tcase_add_test(t, pdb_flat_directory);
    tcase_add_test(t, pdb_batch);
    tcase_add_test(t, pdb_other_process);
    tcase_add_test(t, pdb_absent);
    tcase_add_test(t, pdb_wrong_age);
    tcase_add_test(t, pdb_no_pdb_flag);
    tcase_add_test(t, pdb_symbolizer_missing);
    tcase_add_test(t, pdb_fake_hangs);
    tcase_add_test(t, pdb_fake_reads_never_answers);
    tcase_add_test(t, pdb_fake_exits);
    tcase_add_test(t, pdb_fake_garbage);
    tcase_add_test(t, pdb_fake_endless);
    tcase_add_test(t, symbolizer_pe_samples);
    tcase_add_test(t, symbolizer_pe_wrong_age);
    suite_add_tcase(s, t);
    TCase *c = tcase_create("clr");
    tcase_add_test(c, clr_methods);
    tcase_add_test(c, clr_many);
    tcase_add_test(c, symbolizer_clr_samples);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    int rc = check_run(suite());
    cleanup();
    return rc;
}
