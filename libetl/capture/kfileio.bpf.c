/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The kernel capture's file I/O programs (BPF, CO-RE, on the system calls' tracepoints and a process's exit): each file operation with its struct file (FileObject), inode (number and device: the FileKey), size, offset, path and result, as records (kfileio.h) in the processors' perf rings; the open files at the stop from a task_file iterator. */
#include "capture/vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "capture/kfileio.h"

/* bpf_d_path and the iterator need a GPL-compatible license. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFDIR 0040000
#define AT_EMPTY_PATH 0x1000
#define MAX_IOV 16
#define AT_FDCWD -100

/* The processors' BPF_OUTPUT perf events (the capture's rings), by processor. */
struct {
    __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
    __uint(key_size, sizeof(int));
    __uint(value_size, sizeof(int));
} events SEC(".maps");

/* A record being built (one per processor: programs do not nest on a processor here). */
struct rec {
    __u8 op, flags;
    __u16 path_len;
    __u32 info;
    __u64 irp, file, key, offset, size;
    __s64 ret;
    __u32 mode, pid;
    __u32 dev, pad;
    char path[ETL_KFIO_PATH_MAX + 256]; /* (room past the end for a name read at its last offset) */
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct rec);
} scratch SEC(".maps");

/* A system call in progress on a thread, by thread id (LRU: a thread that died inside a call,
   whose exit never came, does not keep its entry). */
struct pending {
    __u64 irp, file, key;      /* key: the inode's number */
    __u64 upath, upath2;       /* the call's path arguments (user addresses) */
    __s64 dirfd, dirfd2;
    __u32 info;
    __u32 dev;                 /* the inode's device */
    __u8 op;
    __u8 last;                 /* a close of the file's last reference: the file is released */
    __u8 pad[2];
};
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, struct pending);
} inflight SEC(".maps");

/* Request identities: the processor in the top bits, a count below. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} irp_seq SEC(".maps");

static __always_inline __u64 next_irp(void)
{
    __u32 zero = 0;
    __u64 *n = bpf_map_lookup_elem(&irp_seq, &zero);

    if (!n) return 0;
    *n += 1;
    return ((__u64)bpf_get_smp_processor_id() << 48) | (*n & 0xffffffffffffull) | (1ull << 63);
}

static __always_inline struct rec *rec_new(__u8 op)
{
    __u32 zero = 0;
    struct rec *r = bpf_map_lookup_elem(&scratch, &zero);

    if (!r) return 0;
    __builtin_memset(r, 0, ETL_KFIO_FIXED);
    r->op = op;
    return r;
}

static __always_inline void rec_send(void *ctx, struct rec *r)
{
    __u32 n = r->path_len;

    if (n > ETL_KFIO_PATH_MAX - 1) n = ETL_KFIO_PATH_MAX - 1;
    bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, r, ETL_KFIO_FIXED + (n & (ETL_KFIO_PATH_MAX - 1)));
}

static __always_inline void rec_user_path(struct rec *r, __u64 upath)
{
    long n;

    if (!upath) return;
    n = bpf_probe_read_user_str(r->path, ETL_KFIO_PATH_MAX, (const void *)upath);
    if (n > 0) {
        r->path_len = (__u16)n;
        r->flags |= ETL_KFIO_F_USER_PATH;
    }
}

/* The file of descriptor fd of the current task (0: none). */
static __always_inline struct file *fd_file(long fd)
{
    struct task_struct *t = (struct task_struct *)bpf_get_current_task();
    struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
    struct file **fds, *f = 0;
    unsigned int max;

    if (!fdt || fd < 0) return 0;
    max = BPF_CORE_READ(fdt, max_fds);
    if ((unsigned long)fd >= max) return 0;
    fds = BPF_CORE_READ(fdt, fd);
    bpf_probe_read_kernel(&f, sizeof f, &fds[fd]);
    return f;
}

/* Whether a file's operations are file I/O: not a socket (the network's), nor an anonymous
   inode (eventfd, epoll, timerfd: no type bits). */
static __always_inline int is_file(struct file *f)
{
    unsigned int m;

    if (!f) return 0;
    m = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
    return m && m != S_IFSOCK;
}

/* A file's inode: its number (the record's key) and its file system's device (the kernel's
   dev_t: major << 20 | minor), of which the capture makes the FileKey (etl_kfile_key). */
static __always_inline __u64 file_ino(struct file *f) { return f ? BPF_CORE_READ(f, f_inode, i_ino) : 0; }
static __always_inline __u32 file_dev(struct file *f) { return f ? BPF_CORE_READ(f, f_inode, i_sb, s_dev) : 0; }

/* How many references a file has: its f_ref (Linux 6.13 on: the count less one) or f_count. */
struct file___f_count {
    atomic_long_t f_count;
} __attribute__((preserve_access_index));
static __always_inline long file_refs(struct file *f)
{
    if (bpf_core_field_exists(struct file, f_ref)) return (long)BPF_CORE_READ(f, f_ref.refcnt.counter) + 1;
    return (long)BPF_CORE_READ((struct file___f_count *)f, f_count.counter);
}

static __always_inline __u32 tid_now(void) { return (__u32)bpf_get_current_pid_tgid(); }

/* ---- operations on a descriptor: the op's record at the start, its OpEnd at the exit ---- */

static __always_inline int fd_op(void *ctx, __u8 op, long fd, __u64 offset, int use_pos, __u64 size, __u32 info,
                                 int regular_only)
{
    struct file *f = fd_file(fd);
    struct pending p = {};
    struct rec *r;
    __u32 tid = tid_now();

    if (!is_file(f)) return 0;
    if (regular_only) {
        unsigned int m = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;
        if (m != S_IFREG && m != S_IFDIR) return 0;
    }
    if (!(r = rec_new(op))) return 0;
    p.irp = next_irp();
    p.op = op;
    p.file = (__u64)f;
    p.key = file_ino(f);
    p.dev = file_dev(f);
    r->irp = p.irp;
    r->file = p.file;
    r->key = p.key;
    r->dev = p.dev;
    r->offset = use_pos ? (__u64)BPF_CORE_READ(f, f_pos) : offset;
    r->size = size;
    r->info = info;
    rec_send(ctx, r);
    /* a close of the last reference (no other descriptor, process or mapping holds the file):
       the file is released at the call's end, where its Close is written */
    p.last = op == ETL_KFIO_CLEANUP && file_refs(f) == 1;
    bpf_map_update_elem(&inflight, &tid, &p, BPF_ANY);
    return 0;
}

/* A directory's path into a DIR record: its names from the directory up to the root, each
   NUL-terminated (crossing mount points; the walk stops after 64 steps or 3840 bytes). Each step
   is a bpf_loop callback, which the verifier checks once (a plain loop's branches multiply); the
   offset reached lives in the record (pid, not otherwise used by a DIR record), which the verifier
   reads back as any value, so that the steps' states are alike. */
struct walk {
    __u64 d, vm, m;
};

static long walk_step(__u32 i, void *arg)
{
    struct walk *w = arg;
    __u32 zero = 0, off;
    struct rec *r = bpf_map_lookup_elem(&scratch, &zero);
    struct dentry *d = (struct dentry *)w->d, *parent;
    struct vfsmount *vm = (struct vfsmount *)w->vm;
    struct mount *m = (struct mount *)w->m;
    long n;

    if (!r || !d) return 1;
    parent = BPF_CORE_READ(d, d_parent);
    if (d == BPF_CORE_READ(vm, mnt_root) || d == parent) {
        struct mount *up = BPF_CORE_READ(m, mnt_parent);
        if (!up || up == m) return 1; /* the root */
        w->d = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
        w->m = (__u64)up;
        w->vm = (__u64)up + bpf_core_field_offset(struct mount, mnt);
        return 0;
    }
    off = r->pid;
    if (off >= ETL_KFIO_PATH_MAX - 256) return 1;
    n = bpf_probe_read_kernel_str(r->path + (off & (ETL_KFIO_PATH_MAX - 1)), 256, BPF_CORE_READ(d, d_name.name));
    if (n <= 0) return 1;
    r->pid = off + (__u32)n;
    w->d = (__u64)parent;
    return 0;
}

static __always_inline void walk_dir(struct rec *r, struct dentry *d, struct vfsmount *vm)
{
    struct walk w = { (__u64)d, (__u64)vm, (__u64)vm - bpf_core_field_offset(struct mount, mnt) };

    r->pid = 0;
    bpf_loop(64, walk_step, &w, 0);
    r->path_len = (__u16)(r->pid > ETL_KFIO_PATH_MAX - 1 ? ETL_KFIO_PATH_MAX - 1 : r->pid);
    r->pid = 0;
}

/* For a relative path (its first byte not '/'), a DIR record of the directory it is relative to:
   the cwd (AT_FDCWD) or the directory dirfd (which: 0 the path, 1 a rename's second). */
static __always_inline void dir_record(void *ctx, __u64 irp, __u64 upath, __s64 dirfd, __u32 which)
{
    struct task_struct *t = (struct task_struct *)bpf_get_current_task();
    struct path dir = {};
    struct rec *r;
    char c = '/';

    if (!upath || bpf_probe_read_user(&c, 1, (const void *)upath) != 0 || c == '/') return;
    if (dirfd == AT_FDCWD) {
        struct fs_struct *fs = BPF_CORE_READ(t, fs);
        if (!fs) return;
        BPF_CORE_READ_INTO(&dir, fs, pwd);
    } else {
        struct file *f = fd_file(dirfd);
        if (!f) return;
        BPF_CORE_READ_INTO(&dir, f, f_path);
    }
    if (!dir.dentry || !dir.mnt || !(r = rec_new(ETL_KFIO_DIR))) return;
    r->irp = irp;
    r->info = which;
    walk_dir(r, dir.dentry, dir.mnt);
    rec_send(ctx, r);
}

static __always_inline int op_end(void *ctx, long ret, int path_op)
{
    __u32 tid = tid_now();
    struct pending *p = bpf_map_lookup_elem(&inflight, &tid);
    struct rec *r;

    if (!p) return 0;
    /* A path's op: its record now, with the call's own path (a rename's two, NUL after each)
       and its result; an open's with the file it gave. */
    if (path_op) {
        dir_record(ctx, p->irp, p->upath, p->dirfd, 0);
        if (p->op == ETL_KFIO_RENAME) dir_record(ctx, p->irp, p->upath2, p->dirfd2, 1);
    }
    if (path_op && (r = rec_new(p->op))) {
        r->irp = p->irp;
        r->info = p->info;
        r->offset = (__u64)p->dirfd;
        r->size = (__u64)p->dirfd2;
        r->ret = ret;
        if (p->op == ETL_KFIO_CREATE && ret >= 0) {
            struct file *f = fd_file(ret);
            r->file = (__u64)f;
            r->key = file_ino(f);
            r->dev = file_dev(f);
            r->mode = f ? BPF_CORE_READ(f, f_inode, i_mode) : 0;
            p->file = r->file;
            p->key = r->key;
            p->dev = r->dev;
        }
        rec_user_path(r, p->upath);
        if (p->op == ETL_KFIO_RENAME && p->upath2) {
            __u64 n1 = r->path_len;
            if (n1 > 0 && n1 < ETL_KFIO_PATH_MAX / 2) {
                long n2;
                asm volatile("%0 &= 2047" : "+r"(n1)); /* (the verifier sees the bound on n1 itself) */
                n2 = bpf_probe_read_user_str(r->path + n1, ETL_KFIO_PATH_MAX / 2, (const void *)p->upath2);
                if (n2 > 0) r->path_len = (__u16)(n1 + n2);
            }
        }
        rec_send(ctx, r);
    }
    if ((r = rec_new(ETL_KFIO_OP_END))) {
        r->irp = p->irp;
        r->info = p->op;
        r->file = p->file;
        r->key = p->key;
        r->dev = p->dev;
        r->ret = ret;
        rec_send(ctx, r);
    }
    /* the file released: its Close (a request of its own) and that request's end */
    if (p->last && ret == 0 && (r = rec_new(ETL_KFIO_CLOSE))) {
        __u64 irp = next_irp();
        r->irp = irp;
        r->file = p->file;
        r->key = p->key;
        r->dev = p->dev;
        rec_send(ctx, r);
        if ((r = rec_new(ETL_KFIO_OP_END))) {
            r->irp = irp;
            r->info = ETL_KFIO_CLOSE;
            r->file = p->file;
            r->key = p->key;
            r->dev = p->dev;
            rec_send(ctx, r);
        }
    }
    bpf_map_delete_elem(&inflight, &tid);
    return 0;
}

/* The iovecs' lengths (the first MAX_IOV). */
static __always_inline __u64 iov_bytes(__u64 uiov, long n)
{
    __u64 total = 0;

    for (int i = 0; i < MAX_IOV; i++) {
        struct iovec v;
        if (i >= n) break;
        if (bpf_probe_read_user(&v, sizeof v, (const void *)(uiov + (__u64)i * sizeof v)) != 0) break;
        total += v.iov_len;
    }
    return total;
}

#define ARG(i) (ctx->args[i])

SEC("tracepoint/syscalls/sys_enter_read")
int enter_read(struct trace_event_raw_sys_enter *ctx) { return fd_op(ctx, ETL_KFIO_READ, ARG(0), 0, 1, ARG(2), 0, 0); }
SEC("tracepoint/syscalls/sys_enter_write")
int enter_write(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_WRITE, ARG(0), 0, 1, ARG(2), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_pread64")
int enter_pread64(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_READ, ARG(0), ARG(3), 0, ARG(2), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_pwrite64")
int enter_pwrite64(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_WRITE, ARG(0), ARG(3), 0, ARG(2), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_readv")
int enter_readv(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_READ, ARG(0), 0, 1, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_writev")
int enter_writev(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_WRITE, ARG(0), 0, 1, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
/* preadv, pwritev (and their 2 forms): pos_l (64-bit: the whole offset) */
SEC("tracepoint/syscalls/sys_enter_preadv")
int enter_preadv(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_READ, ARG(0), ARG(3), 0, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_pwritev")
int enter_pwritev(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_WRITE, ARG(0), ARG(3), 0, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_preadv2")
int enter_preadv2(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_READ, ARG(0), ARG(3), (long)ARG(3) == -1, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_pwritev2")
int enter_pwritev2(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_WRITE, ARG(0), ARG(3), (long)ARG(3) == -1, iov_bytes(ARG(1), ARG(2)), 0, 0);
}
SEC("tracepoint/syscalls/sys_enter_fsync")
int enter_fsync(struct trace_event_raw_sys_enter *ctx) { return fd_op(ctx, ETL_KFIO_FLUSH, ARG(0), 0, 0, 0, 0, 0); }
SEC("tracepoint/syscalls/sys_enter_fdatasync")
int enter_fdatasync(struct trace_event_raw_sys_enter *ctx) { return fd_op(ctx, ETL_KFIO_FLUSH, ARG(0), 0, 0, 0, 0, 0); }
SEC("tracepoint/syscalls/sys_enter_ftruncate")
int enter_ftruncate(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_SET_INFO, ARG(0), 0, 0, ARG(1), ETL_KFIO_CLASS_END_OF_FILE, 0);
}
SEC("tracepoint/syscalls/sys_enter_fallocate")
int enter_fallocate(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_SET_INFO, ARG(0), ARG(2), 0, ARG(2) + ARG(3), ETL_KFIO_CLASS_ALLOCATION, 0);
}
SEC("tracepoint/syscalls/sys_enter_fchmod")
int enter_fchmod(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_SET_INFO, ARG(0), 0, 0, 0, ETL_KFIO_CLASS_BASIC, 0);
}
SEC("tracepoint/syscalls/sys_enter_fchown")
int enter_fchown(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_SET_INFO, ARG(0), 0, 0, 0, ETL_KFIO_CLASS_BASIC, 0);
}
SEC("tracepoint/syscalls/sys_enter_newfstat")
int enter_newfstat(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_QUERY_INFO, ARG(0), 0, 0, 0, ETL_KFIO_CLASS_ALL, 0);
}
/* newfstatat and statx of a descriptor (AT_EMPTY_PATH: glibc's fstat); of a path: no file */
SEC("tracepoint/syscalls/sys_enter_newfstatat")
int enter_newfstatat(struct trace_event_raw_sys_enter *ctx)
{
    if (!(ARG(3) & AT_EMPTY_PATH)) return 0;
    return fd_op(ctx, ETL_KFIO_QUERY_INFO, ARG(0), 0, 0, 0, ETL_KFIO_CLASS_ALL, 0);
}
SEC("tracepoint/syscalls/sys_enter_statx")
int enter_statx(struct trace_event_raw_sys_enter *ctx)
{
    if (!(ARG(2) & AT_EMPTY_PATH)) return 0;
    return fd_op(ctx, ETL_KFIO_QUERY_INFO, ARG(0), 0, 0, 0, ETL_KFIO_CLASS_ALL, 0);
}
/* ioctl: on files and directories only (a terminal's is no file system's control) */
SEC("tracepoint/syscalls/sys_enter_ioctl")
int enter_ioctl(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_FS_CONTROL, ARG(0), 0, 0, 0, (__u32)ARG(1), 1);
}
SEC("tracepoint/syscalls/sys_enter_close")
int enter_close(struct trace_event_raw_sys_enter *ctx) { return fd_op(ctx, ETL_KFIO_CLEANUP, ARG(0), 0, 0, 0, 0, 0); }
SEC("tracepoint/syscalls/sys_enter_getdents64")
int enter_getdents64(struct trace_event_raw_sys_enter *ctx)
{
    return fd_op(ctx, ETL_KFIO_DIR_ENUM, ARG(0), 0, 0, ARG(2), 0, 0);
}

/* ---- opens: the Create from security_file_open (the file and its path), its OpEnd at the exit ---- */

static __always_inline int path_op_enter(__u8 op, __s64 dirfd, __u64 upath, __s64 dirfd2, __u64 upath2, __u32 info)
{
    struct pending p = {};
    __u32 tid = tid_now();

    p.irp = next_irp();
    p.op = op;
    p.dirfd = dirfd;
    p.upath = upath;
    p.dirfd2 = dirfd2;
    p.upath2 = upath2;
    p.info = info;
    bpf_map_update_elem(&inflight, &tid, &p, BPF_ANY);
    return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int enter_openat(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_CREATE, (__s64)(int)ARG(0), ARG(1), 0, 0, (__u32)ARG(2));
}
SEC("tracepoint/syscalls/sys_enter_open")
int enter_open(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_CREATE, AT_FDCWD, ARG(0), 0, 0, (__u32)ARG(1));
}
SEC("tracepoint/syscalls/sys_enter_creat")
int enter_creat(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_CREATE, AT_FDCWD, ARG(0), 0, 0, 01 | 0100 | 01000); /* O_WRONLY|O_CREAT|O_TRUNC */
}
SEC("tracepoint/syscalls/sys_enter_openat2")
int enter_openat2(struct trace_event_raw_sys_enter *ctx)
{
    __u64 flags = 0;

    bpf_probe_read_user(&flags, sizeof flags, (const void *)ARG(2)); /* struct open_how's flags */
    return path_op_enter(ETL_KFIO_CREATE, (__s64)(int)ARG(0), ARG(1), 0, 0, (__u32)flags);
}

/* ---- path operations: Delete (unlink, rmdir), Rename ---- */

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int enter_unlinkat(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_DELETE, (__s64)(int)ARG(0), ARG(1), 0, 0, 13); /* FileDispositionInformation */
}
SEC("tracepoint/syscalls/sys_enter_unlink")
int enter_unlink(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_DELETE, AT_FDCWD, ARG(0), 0, 0, 13);
}
SEC("tracepoint/syscalls/sys_enter_rmdir")
int enter_rmdir(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_DELETE, AT_FDCWD, ARG(0), 0, 0, 13);
}
SEC("tracepoint/syscalls/sys_enter_renameat2")
int enter_renameat2(struct trace_event_raw_sys_enter *ctx)
{
    /* InfoClass FileRenameInformation */
    return path_op_enter(ETL_KFIO_RENAME, (__s64)(int)ARG(0), ARG(1), (__s64)(int)ARG(2), ARG(3), 10);
}
SEC("tracepoint/syscalls/sys_enter_renameat")
int enter_renameat(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_RENAME, (__s64)(int)ARG(0), ARG(1), (__s64)(int)ARG(2), ARG(3), 10);
}
SEC("tracepoint/syscalls/sys_enter_rename")
int enter_rename(struct trace_event_raw_sys_enter *ctx)
{
    return path_op_enter(ETL_KFIO_RENAME, AT_FDCWD, ARG(0), AT_FDCWD, ARG(1), 10);
}

/* ---- every system call above ends in its OpEnd ---- */

#define EXIT(name)                                                                                                    \
    SEC("tracepoint/syscalls/sys_exit_" #name)                                                                        \
    int exit_##name(struct trace_event_raw_sys_exit *ctx) { return op_end(ctx, ctx->ret, 0); }
/* (opens, deletes and renames: their records are written at the end) */
#define PATH_EXIT(name)                                                                                               \
    SEC("tracepoint/syscalls/sys_exit_" #name)                                                                        \
    int exit_##name(struct trace_event_raw_sys_exit *ctx) { return op_end(ctx, ctx->ret, 1); }
EXIT(read)
EXIT(write)
EXIT(pread64)
EXIT(pwrite64)
EXIT(readv)
EXIT(writev)
EXIT(preadv)
EXIT(pwritev)
EXIT(preadv2)
EXIT(pwritev2)
EXIT(fsync)
EXIT(fdatasync)
EXIT(ftruncate)
EXIT(fallocate)
EXIT(fchmod)
EXIT(fchown)
EXIT(newfstat)
EXIT(newfstatat)
EXIT(statx)
EXIT(ioctl)
EXIT(getdents64)
PATH_EXIT(openat)
PATH_EXIT(open)
PATH_EXIT(creat)
PATH_EXIT(openat2)
PATH_EXIT(unlinkat)
PATH_EXIT(unlink)
PATH_EXIT(rmdir)
PATH_EXIT(renameat2)
PATH_EXIT(renameat)
PATH_EXIT(rename)
EXIT(close)

/* ---- a process's exit: the files its descriptors still hold, closed ---- */

/* The files of the exiting task's descriptors (those of file I/O; at most EXIT_FILES), found by a
   bpf_loop over its descriptor table (one per processor: programs do not nest on a processor). */
#define EXIT_FILES 64
struct exit_files {
    __u32 n;
    __u64 file[EXIT_FILES];
};
struct exit_table {
    __u64 fds;                 /* the table's array of struct file pointers */
    __u32 max;
};
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct exit_files);
} exiting SEC(".maps");

static long exit_fd(__u32 i, void *arg)
{
    struct exit_table *tab = arg;
    __u32 zero = 0, n;
    struct exit_files *x = bpf_map_lookup_elem(&exiting, &zero);
    struct file *f = 0;

    if (!x || i >= tab->max || (n = x->n) >= EXIT_FILES) return 1;
    bpf_probe_read_kernel(&f, sizeof f, (struct file **)tab->fds + i);
    if (is_file(f)) {
        x->file[n & (EXIT_FILES - 1)] = (__u64)f;
        x->n = n + 1;
    }
    return 0;
}

/* A record of op (Cleanup or Close: a request of its own) and its OperationEnd, for file f. */
static __always_inline void exit_op(void *ctx, __u8 op, struct file *f)
{
    __u64 irp = next_irp();
    struct rec *r;

    if (!(r = rec_new(op))) return;
    r->irp = irp;
    r->file = (__u64)f;
    r->key = file_ino(f);
    r->dev = file_dev(f);
    rec_send(ctx, r);
    if (!(r = rec_new(ETL_KFIO_OP_END))) return;
    r->irp = irp;
    r->info = op;
    r->file = (__u64)f;
    r->key = file_ino(f);
    r->dev = file_dev(f);
    rec_send(ctx, r);
}

/* The last thread of a process (its descriptor table no other task's) exits: its descriptors
   are closed after this tracepoint (exit_files), each a Cleanup, and the files of which that is
   the last reference released, a Close. */
SEC("tracepoint/sched/sched_process_exit")
int process_exit(void *ctx)
{
    struct task_struct *t = (struct task_struct *)bpf_get_current_task();
    struct files_struct *files = BPF_CORE_READ(t, files);
    struct fdtable *fdt;
    struct exit_files *x;
    struct exit_table tab;
    __u32 zero = 0;

    if (!files || BPF_CORE_READ(files, count.counter) != 1 || !(fdt = BPF_CORE_READ(files, fdt))) return 0;
    if (!(x = bpf_map_lookup_elem(&exiting, &zero))) return 0;
    tab.fds = (__u64)BPF_CORE_READ(fdt, fd);
    tab.max = BPF_CORE_READ(fdt, max_fds);
    x->n = 0;
    bpf_loop(1 << 16, exit_fd, &tab, 0);
    for (int i = 0; i < EXIT_FILES; i++) {
        struct file *f;
        if (i >= x->n) break;
        f = (struct file *)x->file[i];
        exit_op(ctx, ETL_KFIO_CLEANUP, f);
        if (file_refs(f) == 1) exit_op(ctx, ETL_KFIO_CLOSE, f);
    }
    return 0;
}

/* ---- munmap: a view whose file has no other reference (its descriptors closed) releases it ---- */

struct unmap_find {
    __u64 lo, hi;              /* the range unmapped */
    __u64 file;                /* the file of the view at lo, when the range holds all of it */
};

static long unmap_view(struct task_struct *t, struct vm_area_struct *vma, void *arg)
{
    struct unmap_find *u = arg;

    if (vma->vm_file && vma->vm_start >= u->lo && vma->vm_end <= u->hi) u->file = (__u64)vma->vm_file;
    return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int enter_munmap(struct trace_event_raw_sys_enter *ctx)
{
    struct task_struct *t = bpf_get_current_task_btf();
    struct unmap_find u = { ARG(0), ARG(0) + ARG(1), 0 };
    struct pending p = {};
    struct file *f;
    __u32 tid = tid_now();

    if (bpf_find_vma(t, u.lo, unmap_view, &u, 0) != 0 || !(f = (struct file *)u.file) || !is_file(f)) return 0;
    if (file_refs(f) != 1) return 0;
    /* the view's reference is the file's last: the file is released at the call's end */
    p.op = ETL_KFIO_CLOSE;
    p.last = 1;
    p.file = (__u64)f;
    p.key = file_ino(f);
    p.dev = file_dev(f);
    bpf_map_update_elem(&inflight, &tid, &p, BPF_ANY);
    return 0;
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int exit_munmap(struct trace_event_raw_sys_exit *ctx)
{
    __u32 tid = tid_now();
    struct pending *p = bpf_map_lookup_elem(&inflight, &tid);

    if (!p || p->op != ETL_KFIO_CLOSE) return 0;
    if (ctx->ret == 0) exit_op(ctx, ETL_KFIO_CLOSE, (struct file *)p->file);
    bpf_map_delete_elem(&inflight, &tid);
    return 0;
}

/* ---- the rundown: each open file of each process, with its path ---- */

SEC("iter/task_file")
int rundown(struct bpf_iter__task_file *ctx)
{
    struct seq_file *seq = ctx->meta->seq;
    struct task_struct *t = ctx->task;
    struct file *f = ctx->file;
    struct rec *r;
    long n;
    __u32 len;

    if (!t || !f || !is_file(f) || !(r = rec_new(ETL_KFIO_RUNDOWN))) return 0;
    r->file = (__u64)f;
    r->key = f->f_inode->i_ino;
    r->dev = f->f_inode->i_sb->s_dev;
    r->pid = t->tgid;
    n = bpf_d_path((struct path *)&f->f_path, r->path, ETL_KFIO_PATH_MAX);
    if (n <= 0) return 0;
    r->path_len = (__u16)n;
    len = r->path_len;
    if (len > ETL_KFIO_PATH_MAX - 1) len = ETL_KFIO_PATH_MAX - 1;
    bpf_seq_write(seq, r, ETL_KFIO_FIXED + (len & (ETL_KFIO_PATH_MAX - 1)));
    return 0;
}
