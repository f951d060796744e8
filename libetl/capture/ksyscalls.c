/* SPDX-License-Identifier: MIT */
/* Kernel capture's system call names: the number-to-name table of each architecture the capture knows, written once per trace (LinuxImageID SystemCalls) so that readers name SysClEnter's numbers. */
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

/*
 * x86-64's native system calls (the kernel's arch/x86/entry/syscalls/syscall_64.tbl, "common"
 * and "64" entries, as of Linux 6.17: numbers 0..469; the x32 ABI's 512..547 are not a 64-bit
 * process's). A 32-bit process on x86-64 calls with i386's numbers, which this table does not
 * name (SysClEnter does not say which ABI a call came through). Numbers without a system call
 * (335..423: never assigned) are NULL.
 */
#if defined(__x86_64__)
static const char *const names[] = {
    [0] = "read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek", "mmap", "mprotect", "munmap",
    [12] = "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64", "readv", "writev",
    [21] = "access", "pipe", "select", "sched_yield", "mremap", "msync", "mincore", "madvise", "shmget", "shmat",
    [31] = "shmctl", "dup", "dup2", "pause", "nanosleep", "getitimer", "alarm", "setitimer", "getpid", "sendfile",
    [41] = "socket", "connect", "accept", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown", "bind", "listen",
    [51] = "getsockname", "getpeername", "socketpair", "setsockopt", "getsockopt", "clone", "fork", "vfork", "execve",
    [60] = "exit", "wait4", "kill", "uname", "semget", "semop", "semctl", "shmdt", "msgget", "msgsnd", "msgrcv",
    [71] = "msgctl", "fcntl", "flock", "fsync", "fdatasync", "truncate", "ftruncate", "getdents", "getcwd", "chdir",
    [81] = "fchdir", "rename", "mkdir", "rmdir", "creat", "link", "unlink", "symlink", "readlink", "chmod", "fchmod",
    [92] = "chown", "fchown", "lchown", "umask", "gettimeofday", "getrlimit", "getrusage", "sysinfo", "times",
    [101] = "ptrace", "getuid", "syslog", "getgid", "setuid", "setgid", "geteuid", "getegid", "setpgid", "getppid",
    [111] = "getpgrp", "setsid", "setreuid", "setregid", "getgroups", "setgroups", "setresuid", "getresuid",
    [119] = "setresgid", "getresgid", "getpgid", "setfsuid", "setfsgid", "getsid", "capget", "capset",
    [127] = "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "rt_sigsuspend", "sigaltstack", "utime", "mknod",
    [134] = "uselib", "personality", "ustat", "statfs", "fstatfs", "sysfs", "getpriority", "setpriority",
    [142] = "sched_setparam", "sched_getparam", "sched_setscheduler", "sched_getscheduler", "sched_get_priority_max",
    [147] = "sched_get_priority_min", "sched_rr_get_interval", "mlock", "munlock", "mlockall", "munlockall",
    [153] = "vhangup", "modify_ldt", "pivot_root", "_sysctl", "prctl", "arch_prctl", "adjtimex", "setrlimit",
    [161] = "chroot", "sync", "acct", "settimeofday", "mount", "umount2", "swapon", "swapoff", "reboot",
    [170] = "sethostname", "setdomainname", "iopl", "ioperm", "create_module", "init_module", "delete_module",
    [177] = "get_kernel_syms", "query_module", "quotactl", "nfsservctl", "getpmsg", "putpmsg", "afs_syscall",
    [184] = "tuxcall", "security", "gettid", "readahead", "setxattr", "lsetxattr", "fsetxattr", "getxattr",
    [192] = "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr",
    [199] = "fremovexattr", "tkill", "time", "futex", "sched_setaffinity", "sched_getaffinity", "set_thread_area",
    [206] = "io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel", "get_thread_area", "lookup_dcookie",
    [213] = "epoll_create", "epoll_ctl_old", "epoll_wait_old", "remap_file_pages", "getdents64", "set_tid_address",
    [219] = "restart_syscall", "semtimedop", "fadvise64", "timer_create", "timer_settime", "timer_gettime",
    [225] = "timer_getoverrun", "timer_delete", "clock_settime", "clock_gettime", "clock_getres", "clock_nanosleep",
    [231] = "exit_group", "epoll_wait", "epoll_ctl", "tgkill", "utimes", "vserver", "mbind", "set_mempolicy",
    [239] = "get_mempolicy", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    [246] = "kexec_load", "waitid", "add_key", "request_key", "keyctl", "ioprio_set", "ioprio_get", "inotify_init",
    [254] = "inotify_add_watch", "inotify_rm_watch", "migrate_pages", "openat", "mkdirat", "mknodat", "fchownat",
    [261] = "futimesat", "newfstatat", "unlinkat", "renameat", "linkat", "symlinkat", "readlinkat", "fchmodat",
    [269] = "faccessat", "pselect6", "ppoll", "unshare", "set_robust_list", "get_robust_list", "splice", "tee",
    [277] = "sync_file_range", "vmsplice", "move_pages", "utimensat", "epoll_pwait", "signalfd", "timerfd_create",
    [284] = "eventfd", "fallocate", "timerfd_settime", "timerfd_gettime", "accept4", "signalfd4", "eventfd2",
    [291] = "epoll_create1", "dup3", "pipe2", "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo",
    [298] = "perf_event_open", "recvmmsg", "fanotify_init", "fanotify_mark", "prlimit64", "name_to_handle_at",
    [304] = "open_by_handle_at", "clock_adjtime", "syncfs", "sendmmsg", "setns", "getcpu", "process_vm_readv",
    [311] = "process_vm_writev", "kcmp", "finit_module", "sched_setattr", "sched_getattr", "renameat2", "seccomp",
    [318] = "getrandom", "memfd_create", "kexec_file_load", "bpf", "execveat", "userfaultfd", "membarrier", "mlock2",
    [326] = "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc", "pkey_free", "statx",
    [333] = "io_pgetevents", "rseq",
    [424] = "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree", "move_mount",
    [430] = "fsopen", "fsconfig", "fsmount", "fspick", "pidfd_open", "clone3", "close_range", "openat2",
    [438] = "pidfd_getfd", "faccessat2", "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
    [444] = "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "memfd_secret",
    [448] = "process_mrelease", "futex_waitv", "set_mempolicy_home_node", "cachestat", "fchmodat2",
    [453] = "map_shadow_stack", "futex_wake", "futex_wait", "futex_requeue", "statmount", "listmount",
    [459] = "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules", "mseal", "setxattrat", "getxattrat",
    [465] = "listxattrat", "removexattrat", "open_tree_attr", "file_getattr", "file_setattr",
};
#define MACHINE 62 /* EM_X86_64 */
#endif

const char *const *etl_ksyscall_names(uint16_t *machine, uint16_t *count)
{
#ifdef MACHINE
    *machine = MACHINE;
    *count = (uint16_t)(sizeof names / sizeof names[0]);
    return names;
#else
    *machine = 0;
    *count = 0;
    return NULL;
#endif
}
