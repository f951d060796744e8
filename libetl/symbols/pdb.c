/* SPDX-License-Identifier: MIT */
/* PE images' symbols: their PDBs (from KernelTraceControl's ImageID and DbgID_RSDS events) found in symstore-layout directories and read by llvm-symbolizer, run as one co-process. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "etl/decode.h"

extern char **environ;

/*
 * How llvm-symbolizer 14 (Debian's LLVM) is made to read a PDB: it opens only object files,
 * not a PDB alone, and for a PE it loads the PDB that the PE's debug directory names (its
 * CodeView RSDS record), from that path. So for each PDB found, a stub PE is written in a
 * private temporary directory: a DOS header, the PE headers, one section holding a debug
 * directory whose RSDS record carries the PDB's GUID, age and absolute path. Requests are
 * `"STUB" 0xOFFSET` lines with --relative-address, the offset being the address less the
 * image's base in the trace, which is the RVA the PDB's symbols are at. The answers are in
 * llvm-symbolizer's LLVM style: pairs of lines (function, then file:line:column), one pair per
 * inlined frame, innermost first, and an empty line after each answer; "??" where unknown.
 * llvm-symbolizer 14 leaves a PDB function's start address out (its JSON output's StartAddress
 * is empty), so function_offset is 0 for these frames.
 */

#define STUB_IMAGE_BASE 0x10000000u         /* the stubs' ImageBase (any value: requests are RVAs) */
#define DEFAULT_TIMEOUT_MS 30000            /* without an answer: llvm-symbolizer is given up */
#define MAX_ANSWER_BYTES (1u << 20)         /* one answer longer than this: garbage */
#define MAX_PDB_DIRECTORY (64u << 20)       /* an MSF stream directory larger than this: damaged */

struct pdb_file {
    etl_guid guid;
    uint32_t age;
    char *name;                 /* the PDB's base name, as DbgID_RSDS gives it */
    int state;                  /* 0 not searched, 1 found, 2 absent, 3 found with another GUID or age */
    char *path;                 /* the PDB found (absolute) */
    char *stub;                 /* the stub PE naming it */
};

struct pdb_image {
    uint32_t pid;
    uint64_t base;
    uint64_t size;
    char *orig_name;            /* ImageID/Info's OriginalFileName (UTF-8), or NULL */
    int has_rsds;
    etl_guid guid;
    uint32_t age;
    char *pdb_name;             /* DbgID_RSDS's PdbFileName as given */
    struct pdb_file *file;      /* once looked up */
    int counted;
};

struct etl_sym_pdb {
    /* options */
    char **paths;
    size_t npaths;
    char *program;
    int disabled;
    int timeout_ms;
    /* images, hashed by (pid, base) */
    struct pdb_image *images;
    size_t nimages, capimages;
    size_t *slots;              /* index + 1, 0 empty */
    size_t nslots;
    struct by_base { uint64_t base; size_t index; } *by_base; /* the images by base (other processes') */
    size_t nby_base;            /* entries; != nimages: to be made again */
    struct pdb_file **files;
    size_t nfiles, capfiles;
    etl_decoder *decoder;
    etl_symbolizer *owner;      /* whose interned strings the frames' are */
    /* the co-process */
    int state;                  /* 0 not started, 1 running, 2 given up */
    pid_t child;
    int to_fd, from_fd;
    char *tmpdir;
    unsigned stubs;
    char *inbuf;                /* bytes read not yet parsed */
    size_t inlen, incap;
    uint64_t found, mismatched;
    char error[512];
    int has_error;
};

static void set_error(etl_sym_pdb *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(etl_sym_pdb *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
    p->has_error = 1;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *dup_s(const char *s)
{
    return dup_n(s, strlen(s));
}

/* ---------------------------------------------------------------- open, close */

int etl_sym_pdb_open(etl_sym_pdb **out, etl_symbolizer *owner, const etl_symbolizer_options *opt)
{
    etl_sym_pdb *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return ETL_FAILED;
    p->owner = owner;
    p->to_fd = p->from_fd = -1;
    p->timeout_ms = DEFAULT_TIMEOUT_MS;
    const char *t = getenv("ETL_LLVM_SYMBOLIZER_TIMEOUT_MS");
    if (t && *t) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*end == '\0' && v > 0 && v < INT_MAX) p->timeout_ms = (int)v;
    }
    const char *prog = opt && opt->llvm_symbolizer ? opt->llvm_symbolizer : getenv("ETL_LLVM_SYMBOLIZER");
    if (!prog || !*prog) prog = "llvm-symbolizer";
    p->program = dup_s(prog);
    if (!p->program) goto fail;
    p->disabled = opt && (opt->flags & ETL_SYMBOLS_NO_PDB);
    if (opt && opt->npaths) {
        p->paths = calloc(opt->npaths, sizeof *p->paths);
        if (!p->paths) goto fail;
        for (size_t i = 0; i < opt->npaths; i++) {
            p->paths[i] = dup_s(opt->paths[i] ? opt->paths[i] : "");
            if (!p->paths[i]) goto fail;
            p->npaths++;
        }
    }
    *out = p;
    return ETL_OK;
fail:
    etl_sym_pdb_close(p);
    return ETL_FAILED;
}

/* Ends the co-process: EOF on its input lets it leave; one that does not within a second
   (or when kill_now) is killed. Either way it is reaped. */
static void stop_child(etl_sym_pdb *p, int kill_now)
{
    if (p->to_fd >= 0) close(p->to_fd);
    if (p->from_fd >= 0) close(p->from_fd);
    p->to_fd = p->from_fd = -1;
    if (p->child > 0) {
        int status;
        pid_t r = 0;
        if (!kill_now) {
            for (int i = 0; i < 100 && (r = waitpid(p->child, &status, WNOHANG)) == 0; i++) {
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
            }
        }
        if (r == 0) {
            kill(p->child, SIGKILL);
            while (waitpid(p->child, &status, 0) < 0 && errno == EINTR) {}
        }
        p->child = 0;
    }
    p->inlen = 0;
}

void etl_sym_pdb_close(etl_sym_pdb *p)
{
    if (!p) return;
    stop_child(p, 0);
    for (size_t i = 0; i < p->nfiles; i++) {
        struct pdb_file *f = p->files[i];
        if (f->stub) unlink(f->stub);
        free(f->name);
        free(f->path);
        free(f->stub);
        free(f);
    }
    if (p->tmpdir) rmdir(p->tmpdir);
    free(p->tmpdir);
    free(p->files);
    for (size_t i = 0; i < p->nimages; i++) {
        free(p->images[i].orig_name);
        free(p->images[i].pdb_name);
    }
    free(p->images);
    free(p->slots);
    free(p->by_base);
    for (size_t i = 0; i < p->npaths; i++) free(p->paths[i]);
    free(p->paths);
    free(p->program);
    free(p->inbuf);
    if (p->decoder) etl_decoder_close(p->decoder);
    free(p);
}

const char *etl_sym_pdb_error(const etl_sym_pdb *p)
{
    return p->has_error ? p->error : NULL;
}

void etl_sym_pdb_counts(const etl_sym_pdb *p, uint64_t *found, uint64_t *mismatched)
{
    if (found) *found = p->found;
    if (mismatched) *mismatched = p->mismatched;
}

/* ---------------------------------------------------------------- images */

static size_t image_hash(uint32_t pid, uint64_t base)
{
    uint64_t h = (base ^ ((uint64_t)pid << 40) ^ pid) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17);
}

static struct pdb_image *image_find(etl_sym_pdb *p, uint32_t pid, uint64_t base)
{
    if (!p->nslots) return NULL;
    size_t h = image_hash(pid, base) & (p->nslots - 1);
    while (p->slots[h]) {
        struct pdb_image *im = &p->images[p->slots[h] - 1];
        if (im->pid == pid && im->base == base) return im;
        h = (h + 1) & (p->nslots - 1);
    }
    return NULL;
}

/* The image (pid, base), made when new: NULL without memory. */
static struct pdb_image *image_get(etl_sym_pdb *p, uint32_t pid, uint64_t base)
{
    struct pdb_image *im = image_find(p, pid, base);
    if (im) return im;
    if (p->nimages == p->capimages) {
        size_t nc = p->capimages ? p->capimages * 2 : 64;
        struct pdb_image *ni = realloc(p->images, nc * sizeof *ni);
        if (!ni) return NULL;
        p->images = ni;
        p->capimages = nc;
    }
    if ((p->nimages + 1) * 2 > p->nslots) {
        size_t ns = p->nslots ? p->nslots * 2 : 128;
        size_t *sl = calloc(ns, sizeof *sl);
        if (!sl) return NULL;
        for (size_t i = 0; i < p->nimages; i++) {
            size_t h = image_hash(p->images[i].pid, p->images[i].base) & (ns - 1);
            while (sl[h]) h = (h + 1) & (ns - 1);
            sl[h] = i + 1;
        }
        free(p->slots);
        p->slots = sl;
        p->nslots = ns;
    }
    im = &p->images[p->nimages];
    memset(im, 0, sizeof *im);
    im->pid = pid;
    im->base = base;
    size_t h = image_hash(pid, base) & (p->nslots - 1);
    while (p->slots[h]) h = (h + 1) & (p->nslots - 1);
    p->slots[h] = ++p->nimages;
    return im;
}

static int field_u64(const etl_decoded_event *d, const char *name, uint64_t *v)
{
    const etl_field *f = etl_decoded_field_find(d, name);
    return f && etl_field_uint(f, v) == ETL_OK;
}

/* A string field as UTF-8 in a new allocation; NULL when absent or without memory (*oom set). */
static char *field_utf8(const etl_decoded_event *d, const char *name, int *oom)
{
    const etl_field *f = etl_decoded_field_find(d, name);
    etl_string s;
    if (!f || etl_field_string(f, &s) != ETL_OK) return NULL;
    size_t n = etl_string_to_utf8(&s, NULL, 0);
    char *out = malloc(n + 1);
    if (!out) {
        *oom = 1;
        return NULL;
    }
    etl_string_to_utf8(&s, out, n + 1);
    return out;
}

static const etl_guid imageid_guid = { 0xb3e675d7, 0x2554, 0x4f18, { 0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde } };

int etl_sym_pdb_add(etl_sym_pdb *p, const etl_event *ev)
{
    if (memcmp(&ev->provider, &imageid_guid, sizeof imageid_guid) != 0) return 0;
    if (ev->opcode != 0 && ev->opcode != 36) return 0;
    if (!p->decoder) {
        etl_decoder_options o = { .flags = ETL_DECODER_NO_DEFAULTS };
        if (etl_decoder_open(&p->decoder, &o) == ETL_FATAL) return ETL_FAILED;
    }
    etl_decoded_event d;
    if (etl_decoder_decode(p->decoder, ev, &d) != 1) return 0;
    uint64_t base, pid;
    if (!field_u64(&d, "ImageBase", &base) || !field_u64(&d, "ProcessId", &pid)) return 0;
    int oom = 0;
    if (ev->opcode == 0) {
        uint64_t size = 0;
        field_u64(&d, "ImageSize", &size);
        char *name = field_utf8(&d, "OriginalFileName", &oom);
        if (oom) return ETL_FAILED;
        struct pdb_image *im = image_get(p, (uint32_t)pid, base);
        if (!im) {
            free(name);
            return ETL_FAILED;
        }
        im->size = size;
        if (name) {
            free(im->orig_name);
            im->orig_name = name;
        }
        return 1;
    }
    const etl_field *g = etl_decoded_field_find(&d, "GuidSig");
    etl_guid guid;
    uint64_t age;
    if (!g || etl_field_guid(g, &guid) != ETL_OK || !field_u64(&d, "Age", &age)) return 0;
    char *name = field_utf8(&d, "PdbFileName", &oom);
    if (oom) return ETL_FAILED;
    if (!name) return 0;
    struct pdb_image *im = image_get(p, (uint32_t)pid, base);
    if (!im) {
        free(name);
        return ETL_FAILED;
    }
    free(im->pdb_name);
    im->pdb_name = name;
    im->guid = guid;
    im->age = (uint32_t)age;
    im->has_rsds = 1;
    im->file = NULL;
    return 1;
}

static const char *base_name(const char *path)
{
    const char *b = path;
    for (const char *c = path; *c; c++)
        if (*c == '/' || *c == '\\') b = c + 1;
    return b;
}

/* The image whose PDB serves (pid, base): pid's own, else (the DbgID events of a merge name
   some images under another process, the system's under 0) one of the same base whose
   original file name is image_name. */
static int cmp_base(const void *a, const void *b)
{
    const struct by_base *x = a, *y = b;
    if (x->base != y->base) return x->base < y->base ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The image whose PDB serves (pid, base): pid's own, else (the DbgID events of a merge name
   some images under another process, the system's under 0) one of the same base whose
   original file name is image_name; without a name to compare, a single candidate is taken
   for the system's processes (0 and 4) only. */
static struct pdb_image *image_for(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name)
{
    struct pdb_image *im = image_find(p, pid, base);
    if (im && im->has_rsds) return im;
    if (p->nby_base != p->nimages) {
        struct by_base *b = realloc(p->by_base, (p->nimages ? p->nimages : 1) * sizeof *b);
        if (!b) return NULL;
        p->by_base = b;
        for (size_t i = 0; i < p->nimages; i++) {
            b[i].base = p->images[i].base;
            b[i].index = i;
        }
        if (p->nimages > 1) qsort(b, p->nimages, sizeof *b, cmp_base);
        p->nby_base = p->nimages;
    }
    size_t lo = 0, hi = p->nby_base;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->by_base[mid].base < base) lo = mid + 1;
        else hi = mid;
    }
    struct pdb_image *any = NULL;
    for (size_t k = lo; k < p->nby_base && p->by_base[k].base == base; k++) {
        struct pdb_image *c = &p->images[p->by_base[k].index];
        if (!c->has_rsds) continue;
        if (image_name && c->orig_name && strcasecmp(base_name(c->orig_name), base_name(image_name)) == 0) return c;
        if (!any) any = c;
    }
    if (any && !image_name && pid <= 4) return any;
    return NULL;
}

size_t etl_sym_pdb_find(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name)
{
    struct pdb_image *im = image_for(p, pid, base, image_name);
    return im ? (size_t)(im - p->images) + 1 : 0;
}

void etl_sym_pdb_key(const etl_sym_pdb *p, size_t h, uint8_t key[20])
{
    const struct pdb_image *im = &p->images[h - 1];
    memset(key, 0, 20);
    key[0] = (uint8_t)im->guid.data1;
    key[1] = (uint8_t)(im->guid.data1 >> 8);
    key[2] = (uint8_t)(im->guid.data1 >> 16);
    key[3] = (uint8_t)(im->guid.data1 >> 24);
    key[4] = (uint8_t)im->guid.data2;
    key[5] = (uint8_t)(im->guid.data2 >> 8);
    key[6] = (uint8_t)im->guid.data3;
    key[7] = (uint8_t)(im->guid.data3 >> 8);
    memcpy(key + 8, im->guid.data4, 8);
    key[16] = (uint8_t)im->age;
    key[17] = (uint8_t)(im->age >> 8);
    key[18] = (uint8_t)(im->age >> 16);
    key[19] = (uint8_t)(im->age >> 24);
}

/* ---------------------------------------------------------------- the PDB's own GUID and age */

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The first n bytes of stream s of an MSF file (dir: the stream directory, its u32 words). */
static int msf_stream_head(int fd, uint32_t block_size, uint64_t nblocks, const uint32_t *dir, size_t dirwords,
                           uint32_t s, uint8_t *out, uint32_t n, uint32_t *size)
{
    if (dirwords < 1 || s >= dir[0] || 1 + (size_t)dir[0] > dirwords) return -1;
    uint32_t nstreams = dir[0];
    size_t at = 1 + (size_t)nstreams;
    for (uint32_t i = 0; i < s; i++) {
        uint32_t sz = dir[1 + i];
        if (sz == 0xffffffffu) continue;
        at += (sz + (uint64_t)block_size - 1) / block_size;
    }
    uint32_t sz = dir[1 + s];
    if (sz == 0xffffffffu) return -1;
    *size = sz;
    if (n > sz) return -1;
    size_t blocks = (sz + (uint64_t)block_size - 1) / block_size;
    if (at + blocks > dirwords) return -1;
    for (uint32_t done = 0; done < n;) {
        uint32_t b = dir[at + done / block_size];
        if (b >= nblocks) return -1;
        uint32_t in = done % block_size, take = block_size - in;
        if (take > n - done) take = n - done;
        if (read_at(fd, out + done, take, (uint64_t)b * block_size + in) != 0) return -1;
        done += take;
    }
    return 0;
}

int etl_sym_pdb_read_ident(const char *path, etl_guid *guid, uint32_t *age)
{
    static const char magic[] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0";
    uint8_t sb[56];
    int rc = ETL_FAILED;
    uint32_t *map = NULL, *dir = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ETL_FAILED;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || read_at(fd, sb, sizeof sb, 0) != 0) goto out;
    if (memcmp(sb, magic, 32) != 0) goto out;
    uint32_t block_size = le32(sb + 32), nblocks = le32(sb + 40), dirbytes = le32(sb + 44), mapaddr = le32(sb + 52);
    if (block_size < 512 || block_size > 65536 || (block_size & (block_size - 1))) goto out;
    if ((uint64_t)nblocks * block_size > (uint64_t)st.st_size + block_size) goto out;
    if (dirbytes < 4 || dirbytes > MAX_PDB_DIRECTORY || mapaddr >= nblocks) goto out;
    uint32_t dirblocks = (uint32_t)((dirbytes + (uint64_t)block_size - 1) / block_size);
    if ((uint64_t)dirblocks * 4 > block_size) goto out;
    map = malloc((size_t)dirblocks * 4);
    dir = malloc(((size_t)dirbytes + 3) & ~(size_t)3);
    if (!map || !dir) goto out;
    if (read_at(fd, map, (size_t)dirblocks * 4, (uint64_t)mapaddr * block_size) != 0) goto out;
    uint8_t *dirb = (uint8_t *)dir;
    memset(dirb, 0, ((size_t)dirbytes + 3) & ~(size_t)3);
    for (uint32_t i = 0; i < dirblocks; i++) {
        uint32_t b = le32((const uint8_t *)&map[i]);
        uint32_t take = dirbytes - i * block_size < block_size ? dirbytes - i * block_size : block_size;
        if (b >= nblocks || read_at(fd, dirb + (size_t)i * block_size, take, (uint64_t)b * block_size) != 0) goto out;
    }
    size_t dirwords = dirbytes / 4;
    for (size_t i = 0; i < dirwords; i++) dir[i] = le32(dirb + i * 4);
    uint8_t info[28], dbi[12];
    uint32_t size;
    /* stream 1, the PDB info stream: Version, Signature, Age, then the GUID */
    if (msf_stream_head(fd, block_size, nblocks, dir, dirwords, 1, info, sizeof info, &size) != 0) goto out;
    guid->data1 = le32(info + 12);
    guid->data2 = (uint16_t)(info[16] | info[17] << 8);
    guid->data3 = (uint16_t)(info[18] | info[19] << 8);
    memcpy(guid->data4, info + 20, 8);
    *age = le32(info + 8);
    /* stream 3, the DBI stream: VersionSignature, VersionHeader, then the age the image's
       debug directory records (the info stream's is raised each time the PDB is written) */
    if (msf_stream_head(fd, block_size, nblocks, dir, dirwords, 3, dbi, sizeof dbi, &size) == 0) *age = le32(dbi + 8);
    rc = ETL_OK;
out:
    free(map);
    free(dir);
    close(fd);
    return rc;
}

/* ---------------------------------------------------------------- finding the PDB */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Checks the PDB at path against f: 1 it is f's, 0 another (f->state set to mismatched,
   the message kept), -1 not there. */
static int try_pdb(etl_sym_pdb *p, struct pdb_file *f, const char *path)
{
    if (!is_file(path)) return -1;
    etl_guid g;
    uint32_t age;
    if (etl_sym_pdb_read_ident(path, &g, &age) != ETL_OK) {
        set_error(p, "%s: not a PDB (MSF 7.00) or damaged", path);
        f->state = 3;
        return 0;
    }
    if (memcmp(&g, &f->guid, sizeof g) != 0 || age != f->age) {
        char want[ETL_GUID_STRING_SIZE], have[ETL_GUID_STRING_SIZE];
        etl_guid_format(&f->guid, want);
        etl_guid_format(&g, have);
        set_error(p, "%s: PDB %s age %u, the trace's image was built with %s age %u: not used", path, have,
                  (unsigned)age, want, (unsigned)f->age);
        f->state = 3;
        return 0;
    }
    char *abs = realpath(path, NULL);
    if (!abs) return -1;
    f->path = abs;
    f->state = 1;
    return 1;
}

static void find_pdb(etl_sym_pdb *p, struct pdb_file *f)
{
    char key[64], path[PATH_MAX];
    snprintf(key, sizeof key, "%08X%04X%04X%02X%02X%02X%02X%02X%02X%02X%02X%X", (unsigned)f->guid.data1,
             (unsigned)f->guid.data2, (unsigned)f->guid.data3, f->guid.data4[0], f->guid.data4[1], f->guid.data4[2],
             f->guid.data4[3], f->guid.data4[4], f->guid.data4[5], f->guid.data4[6], f->guid.data4[7], (unsigned)f->age);
    f->state = 2;
    /* the name as given, then in lower case (symstore keeps the case the PDB was added with) */
    char lower[256];
    size_t n = strlen(f->name);
    if (n >= sizeof lower) n = sizeof lower - 1;
    for (size_t i = 0; i < n; i++) lower[i] = (char)((f->name[i] >= 'A' && f->name[i] <= 'Z') ? f->name[i] + 32 : f->name[i]);
    lower[n] = '\0';
    const char *names[2] = { f->name, lower };
    int mismatch = 0;
    for (size_t d = 0; d < p->npaths; d++) {
        for (int k = 0; k < 2; k++) {
            if (k == 1 && strcmp(names[0], names[1]) == 0) break;
            if ((size_t)snprintf(path, sizeof path, "%s/%s/%s/%s", p->paths[d], names[k], key, names[k]) < sizeof path) {
                int r = try_pdb(p, f, path);
                if (r == 1) return;
                if (r == 0) mismatch = 1;
            }
            if ((size_t)snprintf(path, sizeof path, "%s/%s", p->paths[d], names[k]) < sizeof path) {
                int r = try_pdb(p, f, path);
                if (r == 1) return;
                if (r == 0) mismatch = 1;
            }
        }
    }
    f->state = mismatch ? 3 : 2;
}

static struct pdb_file *file_for(etl_sym_pdb *p, const struct pdb_image *im)
{
    const char *name = base_name(im->pdb_name);
    for (size_t i = 0; i < p->nfiles; i++) {
        struct pdb_file *f = p->files[i];
        if (f->age == im->age && memcmp(&f->guid, &im->guid, sizeof f->guid) == 0 && strcasecmp(f->name, name) == 0)
            return f;
    }
    if (p->nfiles == p->capfiles) {
        size_t nc = p->capfiles ? p->capfiles * 2 : 16;
        struct pdb_file **nf = realloc(p->files, nc * sizeof *nf);
        if (!nf) return NULL;
        p->files = nf;
        p->capfiles = nc;
    }
    struct pdb_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->name = dup_s(name);
    if (!f->name) {
        free(f);
        return NULL;
    }
    f->guid = im->guid;
    f->age = im->age;
    p->files[p->nfiles++] = f;
    /* a name that would escape the directory is not looked up */
    if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) f->state = 2;
    else find_pdb(p, f);
    return f;
}

/* ---------------------------------------------------------------- the stub PE */

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}

/* Writes the stub PE naming f's PDB: 0, or -1 (errno set). */
static int write_stub(etl_sym_pdb *p, struct pdb_file *f)
{
    if (!p->tmpdir) {
        const char *t = getenv("TMPDIR");
        if (!t || !*t || strpbrk(t, "\"\n")) t = "/tmp";
        size_t n = strlen(t) + 32;
        p->tmpdir = malloc(n);
        if (!p->tmpdir) return -1;
        snprintf(p->tmpdir, n, "%s/etl-pdb-XXXXXX", t);
        if (!mkdtemp(p->tmpdir)) {
            free(p->tmpdir);
            p->tmpdir = NULL;
            return -1;
        }
    }
    size_t plen = strlen(f->path);
    if (plen > 4000) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* file: headers at 0 (0x200 bytes), the section's raw data at 0x200 */
    enum { RAW = 0x200, SECT_RVA = 0x1000, DEBUG_DIR_SIZE = 28 };
    uint32_t rsds_size = 24 + (uint32_t)plen + 1;
    uint32_t raw_size = (DEBUG_DIR_SIZE + rsds_size + 0x1ff) & ~0x1ffu;
    size_t total = RAW + raw_size;
    uint8_t *b = calloc(1, total);
    if (!b) return -1;
    b[0] = 'M';
    b[1] = 'Z';
    put32(b + 0x3c, 0x40);                      /* e_lfanew */
    memcpy(b + 0x40, "PE\0\0", 4);
    uint8_t *coff = b + 0x44;
    put16(coff + 0, 0x8664);                    /* Machine: x64 */
    put16(coff + 2, 1);                         /* NumberOfSections */
    put16(coff + 16, 240);                      /* SizeOfOptionalHeader (PE32+) */
    put16(coff + 18, 0x0022);                   /* EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE */
    uint8_t *opt = coff + 20;
    put16(opt + 0, 0x20b);                      /* PE32+ */
    put32(opt + 24, STUB_IMAGE_BASE);           /* ImageBase (u64) */
    put32(opt + 32, 0x1000);                    /* SectionAlignment */
    put32(opt + 36, 0x200);                     /* FileAlignment */
    put16(opt + 40, 6);                         /* MajorOperatingSystemVersion */
    put16(opt + 48, 6);                         /* MajorSubsystemVersion */
    uint32_t image_size = SECT_RVA + ((raw_size + 0xfff) & ~0xfffu);
    put32(opt + 56, image_size);                /* SizeOfImage */
    put32(opt + 60, RAW);                       /* SizeOfHeaders */
    put16(opt + 68, 3);                         /* Subsystem: console */
    put32(opt + 108, 16);                       /* NumberOfRvaAndSizes */
    put32(opt + 112 + 6 * 8, SECT_RVA);         /* the debug directory: RVA */
    put32(opt + 112 + 6 * 8 + 4, DEBUG_DIR_SIZE);
    uint8_t *sec = opt + 240;
    memcpy(sec, ".rdata", 6);
    put32(sec + 8, raw_size);                   /* VirtualSize */
    put32(sec + 12, SECT_RVA);                  /* VirtualAddress */
    put32(sec + 16, raw_size);                  /* SizeOfRawData */
    put32(sec + 20, RAW);                       /* PointerToRawData */
    put32(sec + 36, 0x40000040u);               /* initialized data, readable */
    uint8_t *dd = b + RAW;                      /* IMAGE_DEBUG_DIRECTORY */
    put32(dd + 12, 2);                          /* Type: CODEVIEW */
    put32(dd + 16, rsds_size);                  /* SizeOfData */
    put32(dd + 20, SECT_RVA + DEBUG_DIR_SIZE);  /* AddressOfRawData */
    put32(dd + 24, RAW + DEBUG_DIR_SIZE);       /* PointerToRawData */
    uint8_t *cv = dd + DEBUG_DIR_SIZE;          /* RSDS: signature, GUID, age, path */
    memcpy(cv, "RSDS", 4);
    put32(cv + 4, f->guid.data1);
    put16(cv + 8, f->guid.data2);
    put16(cv + 10, f->guid.data3);
    memcpy(cv + 12, f->guid.data4, 8);
    put32(cv + 20, f->age);
    memcpy(cv + 24, f->path, plen + 1);

    size_t n = strlen(p->tmpdir) + 32;
    char *path = malloc(n);
    if (!path) {
        free(b);
        return -1;
    }
    snprintf(path, n, "%s/%u.exe", p->tmpdir, p->stubs++);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int ok = fd >= 0;
    for (size_t done = 0; ok && done < total;) {
        ssize_t w = write(fd, b + done, total - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ok = 0;
        else done += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) ok = 0;
    free(b);
    if (!ok) {
        int e = errno;
        unlink(path);
        free(path);
        errno = e;
        return -1;
    }
    f->stub = path;
    return 0;
}

/* ---------------------------------------------------------------- the co-process */

static void give_up(etl_sym_pdb *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void give_up(etl_sym_pdb *p, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    set_error(p, "%s: %s; PE frames keep image+offset", p->program, msg);
    stop_child(p, 1);
    p->state = 2;
}

static int start_child(etl_sym_pdb *p)
{
    int in[2], out[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
        give_up(p, "cannot make its pipes: %s", strerror(errno));
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) != 0) {
        close(in[0]);
        close(in[1]);
        give_up(p, "cannot make its pipes: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[1], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* the child starts with SIGPIPE at its default, whatever the caller set */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    char *argv[] = { p->program, (char *)"--inlines", (char *)"--relative-address", (char *)"--output-style=LLVM",
                     NULL };
    pid_t pid;
    int e = posix_spawnp(&pid, p->program, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(in[1]);
    close(out[1]);
    if (e != 0) {
        close(in[0]);
        close(out[0]);
        give_up(p, "cannot run it (%s)%s", strerror(e),
                e == ENOENT ? ": install Debian's llvm, or name it with $ETL_LLVM_SYMBOLIZER" : "");
        return -1;
    }
    p->child = pid;
    p->to_fd = in[0];
    p->from_fd = out[0];
    fcntl(p->to_fd, F_SETFL, fcntl(p->to_fd, F_GETFL) | O_NONBLOCK);
    fcntl(p->from_fd, F_SETFL, fcntl(p->from_fd, F_GETFL) | O_NONBLOCK);
    p->state = 1;
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One answer's lines parsed into out: the frames' count, or -1 when it is not an answer. */
static int parse_answer(etl_sym_pdb *p, char *text, size_t len, etl_symbol *out, unsigned max, int *oom)
{
    /* lines: name, location, name, location, ... (text holds no empty line) */
    size_t nlines = 0;
    char *line[2] = { NULL, NULL };
    unsigned count = 0;
    char *s = text, *end = text + len;
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) return -1;
        *nl = '\0';
        if (nl > s && nl[-1] == '\r') nl[-1] = '\0';
        line[nlines % 2] = s;
        nlines++;
        s = nl + 1;
        if (nlines % 2) continue;
        /* location: FILE:LINE:COLUMN (FILE may hold colons: C:\src\a.c) */
        char *loc = line[1];
        char *c2 = strrchr(loc, ':');
        if (!c2) return -1;
        *c2 = '\0';
        char *c1 = strrchr(loc, ':');
        if (!c1) return -1;
        *c1 = '\0';
        char *e1, *e2;
        unsigned long ln = strtoul(c1 + 1, &e1, 10);
        strtoul(c2 + 1, &e2, 10);
        if (*e1 || *e2 || e1 == c1 + 1 || e2 == c2 + 1) return -1;
        if (count >= max) continue;
        const char *fn = line[0];
        etl_symbol *o = &out[count];
        memset(o, 0, sizeof *o);
        if (strcmp(fn, "??") != 0 && *fn) {
            o->function = etl_sym_intern_str(p->owner, fn);
            if (!o->function) *oom = 1;
        }
        if (strcmp(loc, "??") != 0 && *loc && ln > 0) {
            o->source_file = etl_sym_intern_str(p->owner, loc);
            if (!o->source_file) *oom = 1;
            o->line = (uint32_t)(ln > UINT32_MAX ? UINT32_MAX : ln);
        }
        if (!o->function) {
            if (count == 0 && nlines == 2) continue; /* "??" alone: nothing known */
        }
        count++;
    }
    if (nlines == 0 || nlines % 2) return -1;
    for (unsigned i = 0; i + 1 < count; i++) out[i].inlined = 1;
    return (int)count;
}

/* Sends the requests in req (nreq lines) and reads nreq answers, interleaving writes and reads
   so that neither side's buffer fills: 0, or -1 after giving up (message set). */
static int exchange(etl_sym_pdb *p, const char *req, size_t reqlen, size_t nreq, etl_symbol *out, unsigned max,
                    unsigned *counts, int *oom)
{
    size_t sent = 0, answered = 0;
    int64_t deadline = now_ms() + p->timeout_ms;
    while (answered < nreq) {
        struct pollfd fds[2];
        int nf = 0;
        fds[nf].fd = p->from_fd;
        fds[nf].events = POLLIN;
        fds[nf++].revents = 0;
        if (sent < reqlen) {
            fds[nf].fd = p->to_fd;
            fds[nf].events = POLLOUT;
            fds[nf++].revents = 0;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            give_up(p, "no answer within %d ms", p->timeout_ms);
            return -1;
        }
        int r = poll(fds, (nfds_t)nf, (int)left);
        if (r < 0) {
            if (errno == EINTR) continue;
            give_up(p, "poll: %s", strerror(errno));
            return -1;
        }
        if (r == 0) continue;
        if (nf > 1 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = send(p->to_fd, req + sent, reqlen - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                give_up(p, "stopped reading its input (%s)", strerror(errno));
                return -1;
            }
            if (w > 0) sent += (size_t)w;
        }
        if (fds[0].revents & (POLLIN | POLLERR | POLLHUP)) {
            if (p->incap - p->inlen < 4096) {
                size_t nc = p->incap ? p->incap * 2 : 16384;
                char *nb = realloc(p->inbuf, nc);
                if (!nb) {
                    *oom = 1;
                    give_up(p, "out of memory");
                    return -1;
                }
                p->inbuf = nb;
                p->incap = nc;
            }
            ssize_t rd = read(p->from_fd, p->inbuf + p->inlen, p->incap - p->inlen);
            if (rd == 0) {
                give_up(p, "stopped (its output closed)");
                return -1;
            }
            if (rd < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
                give_up(p, "read: %s", strerror(errno));
                return -1;
            }
            p->inlen += (size_t)rd;
            deadline = now_ms() + p->timeout_ms; /* progress: the clock starts again */
            /* every whole answer: text up to an empty line */
            size_t start = 0;
            for (;;) {
                char *sep = NULL;
                for (size_t i = start; i + 1 < p->inlen; i++)
                    if (p->inbuf[i] == '\n' && p->inbuf[i + 1] == '\n') {
                        sep = p->inbuf + i;
                        break;
                    }
                if (!sep) break;
                size_t alen = (size_t)(sep - (p->inbuf + start)) + 1; /* with its last newline */
                if (answered >= nreq) {
                    give_up(p, "answered more than it was asked");
                    return -1;
                }
                int c = parse_answer(p, p->inbuf + start, alen, out + answered * max, max, oom);
                if (c < 0) {
                    give_up(p, "its output is not llvm-symbolizer's");
                    return -1;
                }
                counts[answered++] = (unsigned)c;
                start += alen + 1;
            }
            if (start) {
                memmove(p->inbuf, p->inbuf + start, p->inlen - start);
                p->inlen -= start;
            }
            if (p->inlen > MAX_ANSWER_BYTES) {
                give_up(p, "its output is not llvm-symbolizer's");
                return -1;
            }
        }
    }
    if (p->inlen) {
        give_up(p, "answered more than it was asked");
        return -1;
    }
    return 0;
}

/* The PDB of image h looked up (once) and counted: its file, or NULL without memory. */
static struct pdb_file *image_file(etl_sym_pdb *p, struct pdb_image *im)
{
    if (!im->file) {
        im->file = file_for(p, im);
        if (!im->file) return NULL;
    }
    if (!im->counted) {
        im->counted = 1;
        if (im->file->state == 1) p->found++;
        else if (im->file->state == 3) p->mismatched++;
    }
    return im->file;
}

int etl_sym_pdb_prepare(etl_sym_pdb *p, size_t h)
{
    if (p->disabled) return 0;
    struct pdb_file *f = image_file(p, &p->images[h - 1]);
    if (!f) return ETL_FAILED;
    return f->state == 1 ? 1 : f->state == 3 ? 2 : 0;
}

int etl_sym_pdb_resolve_image(etl_sym_pdb *p, size_t h, const uint64_t *offsets, size_t n, etl_symbol *out,
                              unsigned max, unsigned *counts)
{
    for (size_t i = 0; i < n; i++) counts[i] = 0;
    if (p->disabled || p->state == 2 || n == 0 || max == 0 || h == 0 || h > p->nimages) return ETL_OK;
    struct pdb_file *f = image_file(p, &p->images[h - 1]);
    if (!f) return ETL_FAILED;
    if (f->state != 1) return ETL_OK;
    if (!f->stub && write_stub(p, f) != 0) {
        set_error(p, "cannot write a file in %s for llvm-symbolizer: %s", p->tmpdir ? p->tmpdir : "$TMPDIR",
                  strerror(errno));
        f->state = 2;
        return ETL_OK;
    }
    if (p->state == 0 && start_child(p) != 0) return ETL_OK;
    size_t line = strlen(f->stub) + 40;
    char *req = malloc(line * n);
    if (!req) return ETL_FAILED;
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(req + len, line, "\"%s\" 0x%llx\n", f->stub, (unsigned long long)offsets[i]);
    int oom = 0;
    int r = exchange(p, req, len, n, out, max, counts, &oom);
    free(req);
    if (oom) return ETL_FAILED;
    if (r != 0)
        for (size_t i = 0; i < n; i++) counts[i] = 0;
    return ETL_OK;
}

int etl_sym_pdb_resolve_batch(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name,
                              const uint64_t *offsets, size_t n, etl_symbol *out, unsigned max, unsigned *counts)
{
    size_t h = p->disabled ? 0 : etl_sym_pdb_find(p, pid, base, image_name);
    if (!h) {
        for (size_t i = 0; i < n; i++) counts[i] = 0;
        return ETL_OK;
    }
    return etl_sym_pdb_resolve_image(p, h, offsets, n, out, max, counts);
}

int etl_sym_pdb_resolve(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name, uint64_t image_offset,
                        etl_symbol *out, unsigned max)
{
    unsigned count = 0;
    if (etl_sym_pdb_resolve_batch(p, pid, base, image_name, &image_offset, 1, out, max, &count) != ETL_OK)
        return ETL_FAILED;
    return (int)count;
}
