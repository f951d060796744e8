/* SPDX-License-Identifier: MIT */
/* The records the file I/O BPF programs (kfileio.bpf.c) hand the kernel capture (kfileio.c): constants and byte offsets shared by both sides. Private to libetl. */
#ifndef ETL_CAPTURE_KFILEIO_H
#define ETL_CAPTURE_KFILEIO_H

/*
 * A record is a fixed part of ETL_KFIO_FIXED bytes (little-endian, as the machine's) followed by
 * path_len bytes of a path (NUL-terminated, path_len 0: none). The BPF side writes it as a perf
 * sample's raw data (bpf_perf_event_output) and, for the rundown, into an iterator's sequence.
 *
 *   0  u8  op        ETL_KFIO_* below (FileIo's own opcodes where one fits)
 *   1  u8  flags     ETL_KFIO_F_*
 *   2  u16 path_len
 *   4  u32 info      Create: the open flags; SetInfo, QueryInfo: the information class; FSControl:
 *                    the ioctl command; DirEnum: 0; OpEnd: the op it ends
 *   8  u64 irp       the request's identity (an op and its OpEnd share it)
 *  16  u64 file      FileObject: the struct file's address (0: none)
 *  24  u64 key       the inode's number (0 with dev 0: not known); the capture's FileKey is
 *                    etl_kfile_key of it and dev, as every source of the capture makes it
 *  32  u64 offset    Read, Write: the file position; a path relative to a directory: its dirfd
 *  40  u64 size      Read, Write: bytes asked; DirEnum: the buffer's size; SetInfo: the size set
 *  48  i64 ret       OpEnd: the system call's result (-errno on failure)
 *  56  u32 mode      Create: the inode's mode (0: not known)
 *  60  u32 pid       Rundown: the process holding the file (else 0: the sample's)
 *  64  u32 dev       the inode's device: its super block's s_dev (the kernel's dev_t,
 *                    major << 20 | minor)
 *  68  u32 (0)
 */
#define ETL_KFIO_FIXED 72u
#define ETL_KFIO_PATH_MAX 4096u

#define ETL_KFIO_OFF_OP 0
#define ETL_KFIO_OFF_FLAGS 1
#define ETL_KFIO_OFF_PATH_LEN 2
#define ETL_KFIO_OFF_INFO 4
#define ETL_KFIO_OFF_IRP 8
#define ETL_KFIO_OFF_FILE 16
#define ETL_KFIO_OFF_KEY 24
#define ETL_KFIO_OFF_OFFSET 32
#define ETL_KFIO_OFF_SIZE 40
#define ETL_KFIO_OFF_RET 48
#define ETL_KFIO_OFF_MODE 56
#define ETL_KFIO_OFF_PID 60
#define ETL_KFIO_OFF_DEV 64
#define ETL_KFIO_DEV_MINOR_BITS 20 /* the kernel's dev_t: MINORBITS */

/* Ops: FileIo's opcodes, and two of the capture's own. */
#define ETL_KFIO_NAME 0        /* a file's new name (after a rename): key, path */
#define ETL_KFIO_DIR 1         /* the directory a relative path of the next record with this irp
                                  is in (info 0: its path, 1: a rename's second): its names from
                                  the directory up to the root, each NUL-terminated */
#define ETL_KFIO_RUNDOWN 36    /* an open file at the stop: file, key, pid, path */
#define ETL_KFIO_CREATE 64
#define ETL_KFIO_CLEANUP 65
#define ETL_KFIO_CLOSE 66
#define ETL_KFIO_READ 67
#define ETL_KFIO_WRITE 68
#define ETL_KFIO_SET_INFO 69
#define ETL_KFIO_DELETE 70
#define ETL_KFIO_RENAME 71
#define ETL_KFIO_DIR_ENUM 72
#define ETL_KFIO_FLUSH 73
#define ETL_KFIO_QUERY_INFO 74
#define ETL_KFIO_FS_CONTROL 75
#define ETL_KFIO_OP_END 76

/* Flags. */
#define ETL_KFIO_F_USER_PATH 0x01 /* path is the system call's own string (may be relative to
                                     offset's dirfd, or to the cwd: AT_FDCWD) */
#define ETL_KFIO_F_CREATED 0x02   /* Create, OpEnd of a Create: the open made the file */
#define ETL_KFIO_F_TRUNCATED 0x04 /* Create, OpEnd of a Create: O_TRUNC on a file that was there */

/* Windows' FILE_INFORMATION_CLASS values the capture names. */
#define ETL_KFIO_CLASS_BASIC 4          /* fchmod, fchown */
#define ETL_KFIO_CLASS_ALL 18           /* fstat, statx of a descriptor */
#define ETL_KFIO_CLASS_ALLOCATION 19    /* fallocate */
#define ETL_KFIO_CLASS_END_OF_FILE 20   /* ftruncate */

#endif
