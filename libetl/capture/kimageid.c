/* SPDX-License-Identifier: MIT */
/* Kernel capture's LinuxImageID events (doc/kernel-events.md): ELF build-ids read from mapped files (bounded, cached per file), the kernel's and its modules' build-ids and ranges, and /proc/kallsyms in chunks of whole lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/capture.h"

/* ------------------------------------------------------------------ ELF notes */

/* A word of the file's byte order. */
static uint32_t rd32(const uint8_t *p, int big)
{
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : etl_le32(p);
}
static uint16_t rd16(const uint8_t *p, int big) { return big ? (uint16_t)(p[0] << 8 | p[1]) : etl_le16(p); }
static uint64_t rd64(const uint8_t *p, int big)
{
    return big ? (uint64_t)rd32(p, 1) << 32 | rd32(p + 4, 1) : etl_le64(p);
}

static size_t note_build_id(const uint8_t *p, size_t n, unsigned align, int big, uint8_t *out, size_t cap)
{
    size_t off = 0;

    if (align != 8) align = 4;
    while (n - off >= 12) {
        uint32_t namesz = rd32(p + off, big), descsz = rd32(p + off + 4, big), type = rd32(p + off + 8, big);
        /* 64-bit sums: a hostile namesz or descsz cannot wrap past the end. */
        uint64_t name_at = off + 12, name_end = name_at + namesz;
        uint64_t desc_at = (name_end + align - 1) / align * align, desc_end = desc_at + descsz;
        uint64_t next = (desc_end + align - 1) / align * align;
        if (desc_end > n) return 0;
        if (type == 3 && namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0) { /* NT_GNU_BUILD_ID */
            if (descsz > cap) return 0;
            memcpy(out, p + desc_at, descsz);
            return descsz;
        }
        if (next >= n) return 0; /* the last note (its padding may be left out) */
        off = (size_t)next;
    }
    return 0;
}

size_t etl_elf_note_build_id(const uint8_t *notes, size_t n, unsigned align, uint8_t *out, size_t cap)
{
    return note_build_id(notes, n, align, 0, out, cap);
}

/* The largest note segment read, and the most program headers looked at. */
#define NOTE_MAX 65536u
#define PHDR_MAX 256u

size_t etl_elf_build_id(int fd, uint8_t *out, size_t cap)
{
    uint8_t eh[64], ph[56], *notes = NULL;
    size_t got = 0;
    int big, is64;
    uint64_t phoff;
    unsigned phnum, phentsize;

    ssize_t got_eh = pread(fd, eh, sizeof eh, 0);

    if (got_eh < 52 || memcmp(eh, "\177ELF", 4) != 0) return 0;
    is64 = eh[4] == 2;
    big = eh[5] == 2;
    if ((eh[4] != 1 && !is64) || (eh[5] != 1 && !big) || got_eh < (is64 ? 64 : 52)) return 0;
    phoff = is64 ? rd64(eh + 32, big) : rd32(eh + 28, big);
    phentsize = rd16(eh + (is64 ? 54 : 42), big);
    phnum = rd16(eh + (is64 ? 56 : 44), big);
    if (phentsize < (is64 ? 56u : 32u) || phnum > PHDR_MAX) return 0;
    for (unsigned i = 0; i < phnum && !got; i++) {
        uint64_t at = phoff + (uint64_t)i * phentsize, offset, filesz, align;
        if (at > (uint64_t)INT64_MAX - sizeof ph || pread(fd, ph, is64 ? 56 : 32, (off_t)at) != (is64 ? 56 : 32)) break;
        if (rd32(ph, big) != 4) continue; /* PT_NOTE */
        offset = is64 ? rd64(ph + 8, big) : rd32(ph + 4, big);
        filesz = is64 ? rd64(ph + 32, big) : rd32(ph + 16, big);
        align = is64 ? rd64(ph + 48, big) : rd32(ph + 28, big);
        if (!filesz || filesz > NOTE_MAX || offset > (uint64_t)INT64_MAX - NOTE_MAX) continue;
        if (!notes && !(notes = malloc(NOTE_MAX))) break;
        ssize_t r = pread(fd, notes, (size_t)filesz, (off_t)offset);
        if (r != (ssize_t)filesz) continue; /* cut short: a truncated file */
        got = note_build_id(notes, (size_t)filesz, align == 8 ? 8 : 4, big, out, cap);
    }
    free(notes);
    return got;
}

/* ------------------------------------------------------------------ mapped files */

/* The build-ids read, by file: device, inode, size and times. The times and size tell a file
   from another that got the inode number of one deleted since (inode numbers are reused). */
struct bid_key {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
};
struct bid_entry {
    struct bid_key key;
    uint8_t size;
    uint8_t id[ETL_BUILD_ID_MAX];
    struct bid_entry *next;
};
#define BIDTAB_SIZE 1024u
#define BID_CACHE_MAX 65536u

struct etl_kbid_cache {
    pthread_mutex_t lock;
    struct bid_entry *tab[BIDTAB_SIZE];
    unsigned count;
    uint64_t reads;            /* files opened and read */
};

struct etl_kbid_cache *etl_kbid_cache_new(void)
{
    struct etl_kbid_cache *c = calloc(1, sizeof *c);

    if (c) pthread_mutex_init(&c->lock, NULL);
    return c;
}

void etl_kbid_cache_free(struct etl_kbid_cache *c)
{
    if (!c) return;
    for (unsigned i = 0; i < BIDTAB_SIZE; i++)
        while (c->tab[i]) {
            struct bid_entry *e = c->tab[i];
            c->tab[i] = e->next;
            free(e);
        }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

uint64_t etl_kbid_cache_reads(struct etl_kbid_cache *c)
{
    uint64_t n;

    pthread_mutex_lock(&c->lock);
    n = c->reads;
    pthread_mutex_unlock(&c->lock);
    return n;
}

static unsigned bid_slot(const struct bid_key *k)
{
    return (unsigned)((k->ino * 0x9E3779B97F4A7C15ull ^ k->dev ^ (uint64_t)k->mtime_ns) % BIDTAB_SIZE);
}

static int same_key(const struct bid_key *a, const struct bid_key *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
           a->ctime_ns == b->ctime_ns;
}

static int cache_get(struct etl_kbid_cache *c, const struct bid_key *k, etl_kbuild_id *out)
{
    int found = 0;

    pthread_mutex_lock(&c->lock);
    for (struct bid_entry *e = c->tab[bid_slot(k)]; e; e = e->next)
        if (same_key(&e->key, k)) {
            out->size = e->size;
            memcpy(out->id, e->id, e->size);
            found = 1;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    return found;
}

static void cache_put(struct etl_kbid_cache *c, const struct bid_key *k, const etl_kbuild_id *b)
{
    struct bid_entry *e;
    unsigned slot = bid_slot(k);

    pthread_mutex_lock(&c->lock);
    for (e = c->tab[slot]; e; e = e->next)
        if (same_key(&e->key, k)) break;
    if (!e && c->count < BID_CACHE_MAX && (e = malloc(sizeof *e))) {
        e->key = *k;
        e->size = b->size;
        memcpy(e->id, b->id, b->size);
        e->next = c->tab[slot];
        c->tab[slot] = e;
        c->count++;
    }
    pthread_mutex_unlock(&c->lock);
}

static struct bid_key key_of(const struct stat *st)
{
    struct bid_key k = { (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                         (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                         (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec };
    return k;
}

/* Whether path is the regular file (dev, ino) (ino 0: any regular file), its stat in *st. */
static int is_the_file(const char *path, uint64_t dev, uint64_t ino, struct stat *st)
{
    return stat(path, st) == 0 && S_ISREG(st->st_mode) &&
           (!ino || ((uint64_t)st->st_ino == ino && (uint64_t)st->st_dev == dev));
}

/* The build-id of the file at path, found to be the file whose stat is *st: from c, or read
   (only when what is opened is still that file). */
static void read_file_id(struct etl_kbid_cache *c, const char *path, const struct stat *st, etl_kbuild_id *out)
{
    struct bid_key k = key_of(st);
    struct stat again;
    int fd;

    if (c && cache_get(c, &k, out)) return;
    out->size = 0;
    /* stat first (is_the_file): nothing is opened that is not the regular file looked for (a
       FIFO or a device would block or act on open). */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return;
    if (fstat(fd, &again) == 0 && S_ISREG(again.st_mode) && again.st_ino == st->st_ino && again.st_dev == st->st_dev) {
        out->size = (uint8_t)etl_elf_build_id(fd, out->id, sizeof out->id);
        if (c) {
            cache_put(c, &k, out);
            pthread_mutex_lock(&c->lock);
            c->reads++;
            pthread_mutex_unlock(&c->lock);
        }
    }
    close(fd);
}

void etl_kbuild_id_of_mapping(struct etl_kbid_cache *c, uint32_t pid, uint64_t start, uint64_t end, uint64_t dev,
                              uint64_t ino, const char *file, etl_kbuild_id *out)
{
    char path[4200];
    struct stat st;

    out->size = 0;
    if (!file || file[0] != '/') return; /* [vdso], [heap], anonymous code: no file */
    /* The mapped file itself while the process lives (even deleted, or in another mount
       namespace); else the path in the process's root, then in ours, when it is that file. */
    snprintf(path, sizeof path, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start, (unsigned long long)end);
    if (is_the_file(path, dev, ino, &st)) {
        read_file_id(c, path, &st, out);
        return;
    }
    snprintf(path, sizeof path, "/proc/%u/root%s", pid, file);
    if (is_the_file(path, dev, ino, &st)) {
        read_file_id(c, path, &st, out);
        return;
    }
    if (ino && is_the_file(file, dev, ino, &st)) read_file_id(c, file, &st, out);
}

/* ------------------------------------------------------------------ the kernel */

/* A small file read whole (sysfs notes): its size, or 0. */
static size_t read_file(const char *path, uint8_t *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;

    if (fd < 0) return 0;
    while (n < size) {
        ssize_t r = read(fd, buf + n, size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    return n;
}

static void sysfs_build_id(const char *path, etl_kbuild_id *out)
{
    uint8_t *buf = malloc(NOTE_MAX);
    size_t n = buf ? read_file(path, buf, NOTE_MAX) : 0;

    out->size = (uint8_t)(n ? etl_elf_note_build_id(buf, n, 4, out->id, sizeof out->id) : 0);
    free(buf);
}

void etl_kkernel_build_id(etl_kbuild_id *out) { sysfs_build_id("/sys/kernel/notes", out); }

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
unsigned etl_kwrite_modules(struct etl_kcapture *k, int64_t ts)
{
    FILE *f = fopen("/proc/modules", "re");
    char line[1024];
    unsigned n = 0;

    if (!f) return 0; /* a kernel without modules */
    while (fgets(line, sizeof line, f)) {
        char name[64 + 1], path[160];
        unsigned long long size, base;
        etl_kbuild_id b;
        /* name size refcount deps state address [taint] */
        if (sscanf(line, "%64s %llu %*s %*s %*s %llx", name, &size, &base) != 3 || !base) continue;
        snprintf(path, sizeof path, "/sys/module/%s/notes/.note.gnu.build-id", name);
        sysfs_build_id(path, &b);
        etl_kwrite_kernel_module(k, ts, base, size, &b, name);
        n++;
    }
    fclose(f);
    return n;
}
#endif

/* ------------------------------------------------------------------ kallsyms */

size_t etl_kallsyms_chunk(const char *text, size_t len, size_t max, int eof)
{
    size_t n = len < max ? len : max;

    if (eof && len <= max) return len; /* the rest, its last line whole even without a newline */
    while (n > 0 && text[n - 1] != '\n') n--;
    return n;
}

int etl_kallsyms_has_addresses(const char *text, size_t len)
{
    size_t i = 0;

    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n' && text[j] != ' ') {
            if (text[j] != '0') return 1;
            j++;
        }
        while (i < len && text[i] != '\n') i++;
        i++;
    }
    return 0;
}

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
int etl_kwrite_kallsyms(struct etl_kcapture *k, int64_t ts, size_t max)
{
    int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
    char *buf;
    size_t fill = 0;
    uint32_t seq = 0;
    int eof = 0, skip = 0;

    if (fd < 0) return -1;
    if (!(buf = malloc(max))) {
        close(fd);
        return -1;
    }
    for (;;) {
        while (!eof && fill < max) {
            ssize_t r = read(fd, buf + fill, max - fill);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) eof = 1;
            else fill += (size_t)r;
        }
        if (skip) { /* the rest of a line longer than a chunk: left out */
            char *nl = memchr(buf, '\n', fill);
            size_t drop = nl ? (size_t)(nl - buf) + 1 : fill;
            memmove(buf, buf + drop, fill - drop);
            fill -= drop;
            skip = !nl;
            if (eof && !fill) break;
            continue;
        }
        if (seq == 0 && !etl_kallsyms_has_addresses(buf, fill)) {
            /* kptr_restrict: every address 0. Nothing is written rather than zeros. */
            free(buf);
            close(fd);
            return 0;
        }
        size_t n = etl_kallsyms_chunk(buf, fill, max, eof);
        if (!n) {
            if (!fill) break;
            skip = 1;
            continue;
        }
        etl_kwrite_kernel_symbols(k, ts, seq++, buf, n);
        memmove(buf, buf + n, fill - n);
        fill -= n;
        if (eof && !fill) break;
    }
    free(buf);
    close(fd);
    return (int)(seq > 0);
}
#endif
