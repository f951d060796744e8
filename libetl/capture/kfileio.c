/* SPDX-License-Identifier: MIT */
/* Kernel capture of file I/O (file_io, file_io_init, disk_file_io): the BPF programs of kfileio.bpf.c loaded with libbpf, their records (kfileio.h) written as FileIo events (Create, Cleanup, Close, Read, Write, Flush, SetInfo, Delete, Rename, QueryInfo, FSControl, DirEnum, OpEnd, Name, FileRundown). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/kfileio.h"

/* NtCreateFile's CreateOptions (CreateDisposition in the top byte) from open(2)'s flags. */
uint32_t etl_kfileio_create_options(uint32_t oflags)
{
    uint32_t disposition, options = 0x20; /* FILE_SYNCHRONOUS_IO_NONALERT: Linux's calls wait */

    if ((oflags & O_CREAT) && (oflags & O_EXCL)) disposition = 2;       /* FILE_CREATE */
    else if ((oflags & O_CREAT) && (oflags & O_TRUNC)) disposition = 5; /* FILE_OVERWRITE_IF */
    else if (oflags & O_CREAT) disposition = 3;                         /* FILE_OPEN_IF */
    else if (oflags & O_TRUNC) disposition = 4;                         /* FILE_OVERWRITE */
    else disposition = 1;                                               /* FILE_OPEN */
    if (oflags & O_DIRECTORY) options |= 0x1;                           /* FILE_DIRECTORY_FILE */
    if (oflags & (O_SYNC | O_DSYNC)) options |= 0x2;                    /* FILE_WRITE_THROUGH */
#ifdef O_DIRECT
    if (oflags & O_DIRECT) options |= 0x8;                              /* FILE_NO_INTERMEDIATE_BUFFERING */
#endif
    return disposition << 24 | options;
}

/* ------------------------------------------------------------------ the capture */

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

#include <pthread.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture/kfileio.skel.h"

/* The FileKey of each path an open gave (by the path's hash, the last open's; a cache, collisions
   overwrite): a delete or rename names its file by path, and the key its Create had names it. */
#define PATH_KEYS 8192u
struct etl_kfileio {
    struct etl_kfileio_bpf *skel;
    int ops, ends, names;      /* file_io_init, file_io, disk_file_io */
    pthread_mutex_t lock;      /* path_keys (the readers of every processor) */
    /* each processor's last DIR records (its reader's only): the directories the relative paths
       of the next record of that request are in */
    struct kfio_dir { uint64_t irp; int have[2]; char path[2][PATH_MAX]; } *dirs;
    struct { uint64_t hash, key; } path_keys[PATH_KEYS];
};

static uint64_t path_hash(const char *p)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

    for (; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    return h;
}

/* The key last noted for path, else 0. */
static uint64_t path_key(struct etl_kfileio *f, const char *path)
{
    uint64_t h = path_hash(path), key = 0;

    pthread_mutex_lock(&f->lock);
    if (f->path_keys[h % PATH_KEYS].hash == h) key = f->path_keys[h % PATH_KEYS].key;
    pthread_mutex_unlock(&f->lock);
    return key;
}

static void path_key_set(struct etl_kfileio *f, const char *path, uint64_t key)
{
    uint64_t h = path_hash(path);

    pthread_mutex_lock(&f->lock);
    f->path_keys[h % PATH_KEYS].hash = key ? h : 0;
    f->path_keys[h % PATH_KEYS].key = key;
    pthread_mutex_unlock(&f->lock);
}

/* 1 when the kernel has tracepoint syscalls:NAME (tracefs, either place). */
static int syscall_tracepoint(const char *name)
{
    static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
    char path[256];

    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/events/syscalls/%s/id", roots[i], name);
        if (access(path, R_OK) == 0) return 1;
    }
    return 0;
}

void etl_kfileio_free(struct etl_kcapture *k)
{
    if (!k->fileio) return;
    if (k->fileio->skel) etl_kbpf_detach_all(k->fileio->skel->skeleton);
    etl_kfileio_bpf__destroy(k->fileio->skel);
    pthread_mutex_destroy(&k->fileio->lock);
    free(k->fileio->dirs);
    free(k->fileio);
    k->fileio = NULL;
}

int etl_kfileio_load(struct etl_kcapture *k, char *err, size_t errsize)
{
    struct etl_kfileio *f;
    struct bpf_program *prog;
    int rc;

    if (!(k->flags & ETL_KERNEL_FILEIO_ALL)) return 0;
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
        snprintf(err, errsize, "file I/O events: this kernel has no BTF (/sys/kernel/btf/vmlinux: %s), which their BPF "
                 "programs need (CONFIG_DEBUG_INFO_BTF)", strerror(errno));
        return -1;
    }
    if (!(f = calloc(1, sizeof *f))) {
        snprintf(err, errsize, "file I/O events: out of memory");
        return -1;
    }
    f->ops = !!(k->flags & ETL_KERNEL_FILE_IO_INIT);
    f->ends = !!(k->flags & ETL_KERNEL_FILE_IO);
    f->names = !!(k->flags & ETL_KERNEL_DISK_FILE_IO);
    pthread_mutex_init(&f->lock, NULL);
    k->fileio = f;
    etl_kbpf_listen();
    if (!(f->skel = etl_kfileio_bpf__open())) {
        snprintf(err, errsize, "file I/O events: cannot open their BPF programs: %s", strerror(errno));
        etl_kfileio_free(k);
        return -1;
    }
    /* Programs whose tracepoint this kernel lacks stay out (open, creat, rename, unlink and
       rmdir are not on every architecture). */
    bpf_object__for_each_program(prog, f->skel->obj) {
        const char *sec = bpf_program__section_name(prog);
        if (strncmp(sec, "tracepoint/syscalls/", 20) == 0 && !syscall_tracepoint(sec + 20))
            bpf_program__set_autoload(prog, false);
    }
    /* one entry per processor the capture reads (the map's size, libbpf's default, is the
       possible processors) */
    if ((rc = etl_kfileio_bpf__load(f->skel)) != 0) {
        int e = rc < 0 ? -rc : errno;
        snprintf(err, errsize, "file I/O events: the kernel refused their BPF programs: %s%s%s%s", strerror(e),
                 e == EPERM || e == EACCES ? " (needs root, or CAP_BPF with CAP_PERFMON)" : "",
                 etl_kbpf_last[0] ? ": " : "", etl_kbpf_last);
        etl_kfileio_free(k);
        return -1;
    }
    return 0;
}

int etl_kfileio_set_cpu(struct etl_kcapture *k, int cpu, int fd, char *err, size_t errsize)
{
    uint32_t key = (uint32_t)cpu;

    if (bpf_map__update_elem(k->fileio->skel->maps.events, &key, sizeof key, &fd, sizeof fd, BPF_ANY) != 0) {
        snprintf(err, errsize, "file I/O events: processor %d's output cannot be given to their BPF programs: %s", cpu,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int etl_kfileio_attach(struct etl_kcapture *k, char *err, size_t errsize)
{
    struct bpf_program *prog;

    if (!k->fileio) return 0;
    if (!(k->fileio->dirs = calloc(k->ncpu, sizeof *k->fileio->dirs))) {
        snprintf(err, errsize, "file I/O events: out of memory");
        return -1;
    }
    bpf_object__for_each_program(prog, k->fileio->skel->obj) {
        struct bpf_link *l;
        if (!bpf_program__autoload(prog) || prog == k->fileio->skel->progs.rundown) continue;
        etl_kbpf_last[0] = '\0';
        if (!(l = bpf_program__attach(prog))) {
            snprintf(err, errsize, "file I/O events: BPF program %s cannot be attached: %s%s%s",
                     bpf_program__section_name(prog), strerror(errno), etl_kbpf_last[0] ? ": " : "", etl_kbpf_last);
            return -1;
        }
        /* the skeleton's destroy detaches it */
        for (int i = 0; i < k->fileio->skel->skeleton->prog_cnt; i++)
            if (*k->fileio->skel->skeleton->progs[i].prog == prog) *k->fileio->skel->skeleton->progs[i].link = l;
    }
    return 0;
}

/* A record's path made whole: the call's own string relative to a directory: dir when the BPF
   program walked it (DIR record), else the cwd or directory dirfd of pid as /proc shows it when
   the record is read (a process gone by then leaves it relative). */
static void whole_path(uint32_t pid, int64_t dirfd, const char *p, const char *walked, char *out, size_t size)
{
    char link[64], dir[PATH_MAX];
    ssize_t n;

    if (p[0] == '/' || (!pid && !walked)) {
        snprintf(out, size, "%s", p);
        return;
    }
    if (walked) {
        if ((size_t)snprintf(out, size, "%s%s%s", walked, strcmp(walked, "/") ? "/" : "", p) >= size)
            snprintf(out, size, "%s", p);
        return;
    }
    if (dirfd == -100) snprintf(link, sizeof link, "/proc/%u/cwd", pid); /* AT_FDCWD */
    else snprintf(link, sizeof link, "/proc/%u/fd/%d", pid, (int)dirfd);
    n = readlink(link, dir, sizeof dir - 1);
    if (n <= 0) {
        snprintf(out, size, "%s", p);
        return;
    }
    dir[n] = '\0';
    if ((size_t)snprintf(out, size, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", p) >= size)
        snprintf(out, size, "%s", p); /* too long whole: as given */
}

/* A record's FileKey: etl_kfile_key of its inode's device and number (0: the record has none). */
static uint64_t record_key(const uint8_t *r)
{
    uint32_t dev = etl_le32(r + ETL_KFIO_OFF_DEV);
    uint64_t ino = etl_le64(r + ETL_KFIO_OFF_KEY);

    if (!dev && !ino) return 0;
    return etl_kfile_key(dev >> ETL_KFIO_DEV_MINOR_BITS, dev & ((1u << ETL_KFIO_DEV_MINOR_BITS) - 1), ino);
}

/* The record's fixed part into d, its path (made whole) into path: 0, or -1 (cut short). */
static int record_read(const uint8_t *r, uint32_t n, uint32_t pid, const char *walked, etl_kfileio_desc *d,
                       char *path, size_t size, uint8_t *op, uint8_t *flags, int64_t *ret)
{
    uint16_t path_len;

    if (n < ETL_KFIO_FIXED) return -1;
    path_len = etl_le16(r + ETL_KFIO_OFF_PATH_LEN);
    if (path_len > n - ETL_KFIO_FIXED) return -1;
    memset(d, 0, sizeof *d);
    *op = r[ETL_KFIO_OFF_OP];
    *flags = r[ETL_KFIO_OFF_FLAGS];
    d->info_class = etl_le32(r + ETL_KFIO_OFF_INFO);
    d->irp = etl_le64(r + ETL_KFIO_OFF_IRP);
    d->file_object = etl_le64(r + ETL_KFIO_OFF_FILE);
    d->file_key = record_key(r);
    d->offset = etl_le64(r + ETL_KFIO_OFF_OFFSET);
    d->extra_info = etl_le64(r + ETL_KFIO_OFF_SIZE);
    d->size = (uint32_t)(d->extra_info > UINT32_MAX ? UINT32_MAX : d->extra_info);
    *ret = (int64_t)etl_le64(r + ETL_KFIO_OFF_RET);
    d->mode = etl_le32(r + ETL_KFIO_OFF_MODE);
    path[0] = '\0';
    if (path_len) {
        char p[ETL_KFIO_PATH_MAX + 1];
        size_t len = strnlen((const char *)r + ETL_KFIO_FIXED, path_len < ETL_KFIO_PATH_MAX ? path_len
                                                                                           : ETL_KFIO_PATH_MAX);
        memcpy(p, r + ETL_KFIO_FIXED, len);
        p[len] = '\0';
        if (*flags & ETL_KFIO_F_USER_PATH) whole_path(pid, (int64_t)d->offset, p, walked, path, size);
        else snprintf(path, size, "%s", p);
    }
    d->path = path;
    return 0;
}

static void write_name(struct etl_kcapture *k, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, uint64_t key,
                       const char *path)
{
    uint8_t buf[ETL_KFIO_PATH_MAX * 2 + 64];
    size_t n = etl_kpayload_file_name(buf, sizeof buf, key, path);

    if (n <= sizeof buf) etl_kwrite_ev(k, ts, hook, pid, tid, buf, n);
}

/* A DIR record: the directory's names, leaf first, joined root first into dir's slot. */
static void kfio_dir_note(struct kfio_dir *dir, const uint8_t *raw, uint32_t raw_len)
{
    uint64_t irp = etl_le64(raw + ETL_KFIO_OFF_IRP);
    uint32_t which = etl_le32(raw + ETL_KFIO_OFF_INFO) ? 1 : 0;
    uint16_t len = etl_le16(raw + ETL_KFIO_OFF_PATH_LEN);
    const char *names[ETL_KFIO_PATH_MAX / 2];
    unsigned count = 0;
    size_t o = 0, used = 0;
    char *out = dir->path[which];

    if (dir->irp != irp) {
        dir->irp = irp;
        dir->have[0] = dir->have[1] = 0;
    }
    if (len > raw_len - ETL_KFIO_FIXED) return;
    while (o < len && count < sizeof names / sizeof names[0]) {
        const char *name = (const char *)raw + ETL_KFIO_FIXED + o;
        size_t nl = strnlen(name, len - o);
        if (nl == len - o) break; /* not NUL-terminated: cut */
        names[count++] = name;
        o += nl + 1;
    }
    out[0] = '\0';
    for (unsigned i = count; i-- > 0;) {
        size_t nl = strlen(names[i]);
        if (used + nl + 2 > PATH_MAX) return;
        out[used++] = '/';
        memcpy(out + used, names[i], nl);
        used += nl;
        out[used] = '\0';
    }
    if (!used) snprintf(out, PATH_MAX, "/");
    dir->have[which] = 1;
}

void etl_kfileio_sample(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    struct etl_kfileio *f = k->fileio;
    uint8_t buf[ETL_KFIO_PATH_MAX * 2 + 128], op, flags;
    char path[PATH_MAX + ETL_KFIO_PATH_MAX];
    etl_kfileio_desc d;
    struct kfio_dir *dir;
    int64_t ret;
    size_t n = 0;

    if (!f || raw_len < ETL_KFIO_FIXED) return;
    if (raw[ETL_KFIO_OFF_OP] == ETL_KFIO_DIR) {
        kfio_dir_note(&f->dirs[c - k->cpus], raw, raw_len);
        return;
    }
    dir = &f->dirs[c - k->cpus];
    if (dir->irp != etl_le64(raw + ETL_KFIO_OFF_IRP)) dir = NULL;
    if (record_read(raw, raw_len, pid, dir && dir->have[0] ? dir->path[0] : NULL, &d, path, sizeof path, &op, &flags,
                    &ret) != 0)
        return;
    d.tid = tid;
    switch (op) {
    case ETL_KFIO_CREATE:
        /* written at the open's end (no tracepoint shows the file before): the file's name
           first (each open's: the name a FileKey has may change) */
        if (ret >= 0 && d.file_key && path[0]) {
            path_key_set(f, path, d.file_key);
            if (f->names) write_name(k, ts, ETL_HOOK_FILEIO_NAME, pid, tid, d.file_key, path);
        }
        if (!f->ops) return;
        d.create_options = etl_kfileio_create_options(d.info_class);
        d.file_attributes = !d.mode ? 0 : S_ISDIR(d.mode) ? 0x10 : 0x80; /* DIRECTORY, NORMAL */
        d.share_access = 7; /* Linux has no share modes: read, write and delete are shared */
        n = etl_kpayload_fileio_create(buf, sizeof buf, &d);
        break;
    case ETL_KFIO_CLEANUP:
    case ETL_KFIO_CLOSE:
    case ETL_KFIO_FLUSH:
        if (!f->ops) return;
        n = etl_kpayload_fileio_simple(buf, sizeof buf, &d);
        break;
    case ETL_KFIO_READ:
    case ETL_KFIO_WRITE:
        if (!f->ops) return;
        d.io_flags = 0x4; /* IRP_SYNCHRONOUS_API */
        n = etl_kpayload_fileio_rw(buf, sizeof buf, &d);
        break;
    case ETL_KFIO_DELETE:
    case ETL_KFIO_RENAME: {
        /* by path: the FileKey of its last open, else one made of the path (odd), named here */
        char new_path[sizeof path];
        const char *second = NULL;
        uint16_t path_len = etl_le16(raw + ETL_KFIO_OFF_PATH_LEN);
        size_t first = strnlen((const char *)raw + ETL_KFIO_FIXED, path_len);
        if (op == ETL_KFIO_RENAME && first + 1 < path_len) {
            char p2[ETL_KFIO_PATH_MAX + 1];
            size_t rest = path_len - first - 1;
            size_t len2 = strnlen((const char *)raw + ETL_KFIO_FIXED + first + 1,
                                  rest < ETL_KFIO_PATH_MAX ? rest : ETL_KFIO_PATH_MAX);
            memcpy(p2, raw + ETL_KFIO_FIXED + first + 1, len2);
            p2[len2] = '\0';
            whole_path(pid, (int64_t)d.extra_info, p2, dir && dir->have[1] ? dir->path[1] : NULL, new_path,
                       sizeof new_path);
            second = new_path;
        }
        if (!path[0]) return;
        if (!(d.file_key = path_key(f, path))) {
            d.file_key = path_hash(path) | 1;
            if (f->names) write_name(k, ts, ETL_HOOK_FILEIO_NAME, pid, tid, d.file_key, path);
        }
        if (f->ops) {
            d.extra_info = op == ETL_KFIO_DELETE; /* FILE_DISPOSITION_INFORMATION's DeleteFile */
            n = etl_kpayload_fileio_info(buf, sizeof buf, &d);
            if (n <= sizeof buf) etl_kwrite_ev(k, ts, (uint16_t)(ETL_GROUP_FILE_IO << 8 | op), pid, tid, buf, n);
        }
        if (ret != 0) return;
        path_key_set(f, path, 0);
        if (second) { /* renamed: the file's new name */
            path_key_set(f, second, d.file_key);
            if (f->names) write_name(k, ts, ETL_HOOK_FILEIO_NAME, pid, tid, d.file_key, second);
        }
        return;
    }
    case ETL_KFIO_SET_INFO:
    case ETL_KFIO_QUERY_INFO:
    case ETL_KFIO_FS_CONTROL:
        if (!f->ops) return;
        n = etl_kpayload_fileio_info(buf, sizeof buf, &d);
        break;
    case ETL_KFIO_DIR_ENUM:
        if (!f->ops) return;
        d.info_class = 37; /* FileIdBothDirectoryInformation, what FindFirstFile asks */
        d.size = (uint32_t)(d.extra_info > UINT32_MAX ? UINT32_MAX : d.extra_info);
        d.path = "*";      /* getdents64 takes no pattern: every entry */
        n = etl_kpayload_fileio_dir_enum(buf, sizeof buf, &d);
        break;
    case ETL_KFIO_OP_END:
        if (!f->ends) return;
        /* ExtraInfo: what moved (bytes read or written, the directory's bytes), else 0 */
        n = etl_kpayload_fileio_op_end(buf, sizeof buf, d.irp,
                                       ret > 0 && (d.info_class == ETL_KFIO_READ || d.info_class == ETL_KFIO_WRITE ||
                                                   d.info_class == ETL_KFIO_DIR_ENUM) ? (uint64_t)ret : 0,
                                       etl_kntstatus(ret));
        etl_kwrite_ev(k, ts, ETL_HOOK_FILEIO_OP_END, pid, tid, buf, n);
        return;
    case ETL_KFIO_NAME:
        if (f->names && d.file_key && path[0]) write_name(k, ts, ETL_HOOK_FILEIO_NAME, pid, tid, d.file_key, path);
        return;
    default: return;
    }
    if (n <= sizeof buf) etl_kwrite_ev(k, ts, (uint16_t)(ETL_GROUP_FILE_IO << 8 | op), pid, tid, buf, n);
}

/* Whether key is among the first n of keys (a small linear set: the rundown's files). */
static int seen_key(const uint64_t *keys, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] == key) return 1;
    return 0;
}

unsigned etl_kfileio_rundown(struct etl_kcapture *k, int64_t ts)
{
    struct etl_kfileio *f = k->fileio;
    struct bpf_link *link;
    uint8_t *all = NULL;
    size_t len = 0, cap = 0;
    uint64_t *keys = NULL;
    size_t nkeys = 0, keycap = 0;
    unsigned written = 0;
    int fd;

    if (!f || !f->names) return 0;
    if (!(link = bpf_program__attach_iter(f->skel->progs.rundown, NULL))) {
        etl_knote(k, "no FileRundown: the open files' iterator cannot be attached");
        return 0;
    }
    fd = bpf_iter_create(bpf_link__fd(link));
    for (;;) {
        ssize_t got;
        if (fd < 0) break;
        if (len + 65536 > cap) {
            uint8_t *p = realloc(all, cap ? cap * 2 : 1u << 20);
            if (!p) break;
            all = p;
            cap = cap ? cap * 2 : 1u << 20;
        }
        got = read(fd, all + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        len += (size_t)got;
    }
    if (fd >= 0) close(fd);
    bpf_link__destroy(link);
    for (size_t o = 0; o + ETL_KFIO_FIXED <= len;) {
        uint16_t path_len = etl_le16(all + o + ETL_KFIO_OFF_PATH_LEN);
        uint64_t key = record_key(all + o);
        char path[ETL_KFIO_PATH_MAX + 1];
        size_t plen;
        if (path_len > len - o - ETL_KFIO_FIXED) break;
        plen = strnlen((const char *)all + o + ETL_KFIO_FIXED,
                       path_len < ETL_KFIO_PATH_MAX ? path_len : ETL_KFIO_PATH_MAX);
        memcpy(path, all + o + ETL_KFIO_FIXED, plen);
        path[plen] = '\0';
        /* one FileRundown per file (its FileKey), as Windows names each file once */
        if (key && !seen_key(keys, nkeys, key)) {
            if (nkeys == keycap) {
                uint64_t *p = realloc(keys, (keycap ? keycap * 2 : 256) * sizeof *keys);
                if (!p) break;
                keys = p;
                keycap = keycap ? keycap * 2 : 256;
            }
            keys[nkeys++] = key;
            write_name(k, ts, ETL_HOOK_FILEIO_RUNDOWN, etl_le32(all + o + ETL_KFIO_OFF_PID), 0, key, path);
            written++;
        }
        o += ETL_KFIO_FIXED + path_len;
    }
    free(keys);
    free(all);
    return written;
}

#endif
