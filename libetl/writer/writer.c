/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* O_DIRECT, statx */
/* The ETL file writer: header buffer, per-processor data buffers, and the sequential, circular, NEWFILE and preallocated file modes. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format/format.h"
#include "writer/writer.h"
#include "format/format.h"

#define DEFAULT_BUFFER_SIZE 65536u
#define MIN_WRITER_BUFFER_SIZE 4096u
#define LAYOUT_2_0_BUFFER_SIZE (1024u * 1024) /* larger buffers need log layout 2.0 */
#define BATCH_MAX 64u           /* buffers one write call takes at most */

struct etl_writer {
    etl_writer_options o;
    char *pattern;          /* path as given (NEWFILE: with %d) */
    char *path;             /* the file being written */
    char *logger_name;
    char *log_file_name;    /* the header's LogFileName, or NULL for the path */
    int fd;
    uint32_t direct_align;  /* direct I/O on fd (O_DIRECT): the alignment of memory, offsets
                               and lengths it needs; 0: through the page cache */
    uint32_t header_size;   /* bytes of the header buffer on disk */
    uint64_t end;           /* end of the data written so far in this file */
    uint64_t high;          /* largest end of data (circular files wrap below it) */
    uint32_t slots;         /* circular: data buffers the file holds */
    uint32_t file_buffers;  /* data buffers written to this file */
    int64_t sequence;       /* SequenceNumber of the next buffer in this file */
    uint32_t file_index;    /* NEWFILE: number of the current file */
    long busy_pid;          /* the file was refused: the pid of its writer (-1: unknown) */
    uint32_t events_lost;
    uint32_t buffers_lost;  /* before the writer (etl_writer_set_buffers_lost) */
    /* Append mode: what the file held before (its header's counts), added to ours. */
    uint32_t base_events_lost, base_buffers_lost;
    etl_writer_stats stats;
    uint8_t *header;        /* the header buffer */
    uint8_t *zbuf;          /* a compressed buffer */
    int fatal;
    /* A batch (etl_writer_batch_begin): buffers accepted and not written yet, consecutive in
       the file from q_at; written with one call when the run breaks or the batch ends. */
    int batching;
    unsigned qn;
    uint64_t q_at, q_len;
    uint32_t batch_failed;  /* accepted in this batch, then not written (an I/O error) */
    struct iovec q[BATCH_MAX];
    char err[512];
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void werror(etl_writer *w, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(w->err, sizeof w->err, "%s: ", w->path ? w->path : w->pattern ? w->pattern : "<writer>");

    if (n < 0 || (size_t)n >= sizeof w->err) n = 0;
    va_start(ap, fmt);
    vsnprintf(w->err + n, sizeof w->err - (size_t)n, fmt, ap);
    va_end(ap);
}

const char *etl_writer_error(const etl_writer *w) { return w ? w->err : "out of memory"; }
const char *etl_writer_path(const etl_writer *w) { return w->path; }
void etl_writer_set_events_lost(etl_writer *w, uint32_t events_lost) { w->events_lost = events_lost; }
void etl_writer_set_buffers_lost(etl_writer *w, uint32_t buffers_lost) { w->buffers_lost = buffers_lost; }
void etl_writer_stats_get(const etl_writer *w, etl_writer_stats *out) { *out = w->stats; }

/* The processor's nominal speed from /proc/cpuinfo, or 1000 MHz: readers divide by it. */
static uint32_t cpu_mhz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;

    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "cpu MHz : %lf", &mhz) == 1 || sscanf(line, "cpu MHz\t: %lf", &mhz) == 1) break;
        fclose(f);
    }
    return mhz >= 1 && mhz < 1e6 ? (uint32_t)(mhz + 0.5) : 1000;
}

void etl_writer_options_defaults(etl_writer_options *o)
{
    if (!o->buffer_size) o->buffer_size = DEFAULT_BUFFER_SIZE;
    if (o->pointer_size != 4) o->pointer_size = 8;
    if (!(o->log_file_mode & (ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE |
                              ETL_MODE_BUFFERING)))
        o->log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
    if (!o->number_of_processors) {
        long n = sysconf(_SC_NPROCESSORS_CONF);
        o->number_of_processors = n > 0 ? (uint32_t)n : 1;
    }
    if (!o->clock.type) o->clock.type = ETL_CLOCK_PERFCOUNTER;
    if (!o->clock.perf_freq) o->clock.perf_freq = o->clock.type == ETL_CLOCK_PERFCOUNTER ? 1000000000 : 10000000;
    if (!o->clock.cpu_speed_mhz) o->clock.cpu_speed_mhz = cpu_mhz();
    if (!o->timer_resolution) o->timer_resolution = 156250;
    if (!o->os_major && !o->os_minor) {
        o->os_major = 10;
        o->os_minor = 0;
    }
    if (!o->os_build) o->os_build = 19041;
    if (!o->logger_name) o->logger_name = "libetl";
}

uint32_t etl_header_buffer_build(const etl_writer_options *o, const char *file_name,
                                 const etl_header_counts *c, uint8_t *b)
{
    const unsigned p = o->pointer_size == 4 ? 4 : 8;
    int compressed = (o->log_file_mode & ETL_MODE_COMPRESSED) != 0;
    uint8_t *e = b + ETL_BUFFER_HEADER_SIZE, *t = e + ETL_SYSTEM_HEADER_SIZE;
    uint32_t strings, size, used, on_disk, room;
    uint8_t partition[48] = { 0 };
    etl_data part = { partition, sizeof partition };

    memset(b, 0, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_SIZE(p));
    etl_put32(t + ETL_TLH_BUFFER_SIZE, o->buffer_size);
    t[ETL_TLH_VERSION] = o->os_major;
    t[ETL_TLH_VERSION + 1] = o->os_minor;
    if (compressed || o->buffer_size > LAYOUT_2_0_BUFFER_SIZE || o->number_of_processors > 256) {
        t[ETL_TLH_VERSION + 2] = 2;
        t[ETL_TLH_VERSION + 3] = 0;
    } else {
        t[ETL_TLH_VERSION + 2] = 1;
        t[ETL_TLH_VERSION + 3] = 5;
    }
    etl_put32(t + ETL_TLH_PROVIDER_VERSION, o->os_build);
    etl_put32(t + ETL_TLH_NUMBER_OF_PROCESSORS, o->number_of_processors);
    etl_put64(t + ETL_TLH_END_TIME, (uint64_t)c->end_time);
    etl_put32(t + ETL_TLH_TIMER_RESOLUTION, o->timer_resolution);
    /* MaximumFileSize in the unit the mode says: KB with EVENT_TRACE_USE_KBYTES_FOR_SIZE, else MB. */
    etl_put32(t + ETL_TLH_MAXIMUM_FILE_SIZE,
              (uint32_t)(o->maximum_file_size >> (o->log_file_mode & ETL_MODE_USE_KBYTES_FOR_SIZE ? 10 : 20)));
    etl_put32(t + ETL_TLH_LOG_FILE_MODE, o->log_file_mode & ~ETL_MODE_REAL_TIME);
    etl_put32(t + ETL_TLH_BUFFERS_WRITTEN, c->buffers_written);
    etl_put32(t + ETL_TLH_START_BUFFERS, 1);
    etl_put32(t + ETL_TLH_POINTER_SIZE, p);
    etl_put32(t + ETL_TLH_EVENTS_LOST, c->events_lost);
    etl_put32(t + ETL_TLH_CPU_SPEED, o->clock.cpu_speed_mhz);
    etl_put32(t + ETL_TLH_TIME_ZONE(p), 0); /* UTC */
    etl_put64(t + ETL_TLH_BOOT_TIME(p), (uint64_t)o->boot_time);
    etl_put64(t + ETL_TLH_PERF_FREQ(p), (uint64_t)o->clock.perf_freq);
    etl_put64(t + ETL_TLH_START_TIME(p), (uint64_t)o->clock.start_time);
    etl_put32(t + ETL_TLH_RESERVED_FLAGS(p), (uint32_t)o->clock.type);
    etl_put32(t + ETL_TLH_BUFFERS_LOST(p), c->buffers_lost);
    /* The two names, within what is left of a 64 KiB record and of the buffer. */
    room = (o->buffer_size - ETL_BUFFER_HEADER_SIZE - ETL_SYSTEM_HEADER_SIZE - ETL_TLH_SIZE(p) - 64) / 2;
    if (room > 0x7000) room = 0x7000;
    strings = etl_utf8_to_utf16(t + ETL_TLH_SIZE(p), o->logger_name, room / 2);
    strings += etl_utf8_to_utf16(t + ETL_TLH_SIZE(p) + strings, file_name ? file_name : "", room / 2);
    size = ETL_SYSTEM_HEADER_SIZE + ETL_TLH_SIZE(p) + strings;
    etl_put16(e, 2);
    e[2] = p == 8 ? ETL_HT_SYSTEM64 : ETL_HT_SYSTEM32;
    e[3] = 0xC0;
    etl_put16(e + 4, (uint16_t)size);
    etl_put16(e + 6, 0); /* HookId 0: WMI_LOG_TYPE_HEADER */
    etl_put32(e + 8, o->header_tid);
    etl_put32(e + 12, o->header_pid);
    etl_put64(e + 16, (uint64_t)o->clock.start_timestamp);
    used = ETL_BUFFER_HEADER_SIZE + ETL_RECORD_SPACE(size);
    memset(b + ETL_BUFFER_HEADER_SIZE + size, 0, used - ETL_BUFFER_HEADER_SIZE - size);
    used += ETL_RECORD_SPACE(etl_record_encode_system(b + used, o->buffer_size - used, o->clock.start_timestamp,
                                                      0x0050, 2, o->header_pid, o->header_tid, &part, 1));
    if (p == 4) b[used - ETL_RECORD_SPACE(ETL_SYSTEM_HEADER_SIZE + 48) + 2] = ETL_HT_SYSTEM32;

    on_disk = compressed ? (used + 511u) & ~511u : o->buffer_size;
    etl_put32(b + ETL_BH_BUFFER_SIZE, on_disk);
    etl_put32(b + ETL_BH_SAVED_OFFSET, used);
    etl_put32(b + ETL_BH_CURRENT_OFFSET, used);
    etl_put16(b + ETL_BH_LOGGER_ID, o->logger_id);
    etl_put32(b + ETL_BH_STATE, ETL_BUFFER_STATE_FLUSH);
    etl_put32(b + ETL_BH_OFFSET, used);
    etl_put16(b + ETL_BH_BUFFER_FLAG, compressed ? ETL_BUFFER_FLAG_FLUSH_MARKER
                                                 : ETL_BUFFER_FLAG_FLUSH_MARKER | ETL_BUFFER_FLAG_PROC_INDEX);
    etl_put16(b + ETL_BH_BUFFER_TYPE, ETL_BUFFER_TYPE_HEADER);
    memset(b + used, 0xFF, on_disk - used);
    return on_disk;
}

/*
 * Direct I/O. Data buffers are written whole, at offsets that are multiples of the buffer
 * size, from the session's page-aligned pool: what O_DIRECT asks. Past the page cache, a
 * write costs the flush thread no copy (a buffered write of 64 KB took about 120 us of
 * processor time in this project's VM, most of it in the kernel, against 7 us direct), and
 * the file's pages do not pile up as dirty memory the kernel then throttles writers on.
 * But each write then waits for the device, whose slow moments the page cache would have
 * absorbed: it is the caller's choice (direct_io; sessions: ETL_ENGINE_DIRECT_IO). Where the
 * file system refuses O_DIRECT, or a write is not aligned, the file goes through the page
 * cache as before.
 */
static uint32_t direct_alignment(int fd)
{
#if defined(STATX_DIOALIGN)
    struct statx sx;

    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
        if (!sx.stx_dio_mem_align || !sx.stx_dio_offset_align) return 0; /* not supported */
        return sx.stx_dio_mem_align > sx.stx_dio_offset_align ? sx.stx_dio_mem_align : sx.stx_dio_offset_align;
    }
#else
    (void)fd;
#endif
    return 4096; /* the kernel does not say: a page satisfies every block device */
}

static void direct_on(etl_writer *w)
{
    int fl;
    uint32_t a;

    w->direct_align = 0;
    if (!w->o.direct_io || (w->o.log_file_mode & ETL_MODE_COMPRESSED)) return;
    a = direct_alignment(w->fd);
    if (!a || a > w->o.buffer_size || w->o.buffer_size % a) return;
    fl = fcntl(w->fd, F_GETFL);
    if (fl < 0 || fcntl(w->fd, F_SETFL, fl | O_DIRECT) != 0) return;
    w->direct_align = a;
}

static void direct_off(etl_writer *w)
{
    int fl = fcntl(w->fd, F_GETFL);

    if (fl >= 0) fcntl(w->fd, F_SETFL, fl & ~O_DIRECT);
    w->direct_align = 0;
}

static int aligned(const etl_writer *w, const void *buf, uint64_t n, uint64_t off)
{
    return ((uintptr_t)buf % w->direct_align | n % w->direct_align | off % w->direct_align) == 0;
}

/* Writes iov[0..n) at off, whole. 0, or -1 with the error set (the writer is then dead);
   *done: the bytes written. */
static int pwritev_all(etl_writer *w, struct iovec *iov, unsigned n, uint64_t off, uint64_t *done)
{
    unsigned i = 0;

    *done = 0;
    if (w->direct_align)
        for (unsigned k = 0; k < n; k++)
            if (!aligned(w, iov[k].iov_base, iov[k].iov_len, off)) {
                direct_off(w); /* for good: a write of this file that O_DIRECT cannot take */
                break;
            }
    while (i < n) {
        ssize_t k = pwritev(w->fd, iov + i, (int)(n - i), (off_t)(off + *done));
        if (k < 0) {
            if (errno == EINTR) continue;
            if (errno == EINVAL && w->direct_align) { /* the file system after all */
                direct_off(w);
                continue;
            }
            werror(w, "write error at offset %llu: %s", (unsigned long long)(off + *done), strerror(errno));
            w->fatal = 1;
            return -1;
        }
        if (w->direct_align) w->stats.bytes_direct += (uint64_t)k;
        *done += (uint64_t)k;
        w->stats.bytes_written += (uint64_t)k;
        while (i < n && (size_t)k >= iov[i].iov_len) k -= (ssize_t)iov[i++].iov_len;
        if (i < n && k) {
            iov[i].iov_base = (char *)iov[i].iov_base + k;
            iov[i].iov_len -= (size_t)k;
        }
    }
    return 0;
}

static int pwrite_all(etl_writer *w, const void *buf, size_t n, uint64_t off)
{
    struct iovec v = { (void *)(uintptr_t)buf, n };
    uint64_t done;

    return pwritev_all(w, &v, 1, off, &done);
}

/* Writes the batch's queued run. The buffers of the run that did not reach the file (an I/O
   error) count in batch_failed and come off the counts they were added to. */
static int queue_flush(etl_writer *w)
{
    uint64_t done = 0;
    uint32_t whole;
    int rc;

    if (!w->qn) return 0;
    rc = pwritev_all(w, w->q, w->qn, w->q_at, &done);
    if (rc != 0) {
        /* Only whole, uncompressed buffers are queued: done counts them. */
        whole = (uint32_t)(done / w->o.buffer_size);
        w->batch_failed += w->qn - whole;
        w->stats.buffers_written -= w->qn - whole;
    }
    w->qn = 0;
    w->q_len = 0;
    return rc;
}

void etl_writer_batch_begin(etl_writer *w)
{
    w->batching = 1;
    w->batch_failed = 0;
}

uint32_t etl_writer_batch_end(etl_writer *w)
{
    queue_flush(w);
    w->batching = 0;
    return w->batch_failed;
}

static char *file_path(const etl_writer *w, uint32_t index)
{
    size_t n = strlen(w->pattern) + 16;
    char *p = malloc(n);

    if (!p) return NULL;
    /* The pattern holds exactly one %d (check_options); replace it by hand rather than
       handing a caller's string to printf as a format. */
    const char *d = (w->o.log_file_mode & ETL_MODE_FILE_NEWFILE) ? strstr(w->pattern, "%d") : NULL;
    if (d) snprintf(p, n, "%.*s%u%s", (int)(d - w->pattern), w->pattern, (unsigned)index, d + 2);
    else snprintf(p, n, "%s", w->pattern);
    return p;
}

/* The header buffer as it stands now, written at offset 0. */
static int write_header(etl_writer *w, int64_t end_time)
{
    etl_header_counts c;

    c.end_time = end_time;
    c.buffers_written = 1 + (w->slots && w->file_buffers > w->slots ? w->slots : w->file_buffers);
    c.events_lost = w->events_lost + w->base_events_lost;
    if (c.events_lost < w->events_lost) c.events_lost = UINT32_MAX;
    c.buffers_lost = w->buffers_lost + w->stats.log_buffers_lost;
    if (c.buffers_lost < w->buffers_lost) c.buffers_lost = UINT32_MAX;
    if (c.buffers_lost + w->base_buffers_lost < c.buffers_lost) c.buffers_lost = UINT32_MAX;
    else c.buffers_lost += w->base_buffers_lost;
    etl_header_buffer_build(&w->o, w->log_file_name ? w->log_file_name : w->path, &c, w->header);
    return pwrite_all(w, w->header, w->header_size, 0);
}

/*
 * The pid of the process holding an flock on the file of st (from /proc/locks, whose lines
 * read "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF", the device numbers in hex), or
 * -1 when it cannot be told.
 */
static long lock_holder(const struct stat *st)
{
    char line[256];
    long pid = -1;
    FILE *f = fopen("/proc/locks", "r");

    if (!f) return -1;
    while (pid < 0 && fgets(line, sizeof line, f)) {
        char kind[16], adv[16], rw[16];
        long p;
        unsigned maj, min;
        unsigned long long ino;
        const char *at = strchr(line, ':');
        if (!at || strstr(line, "->")) continue; /* a waiter's line */
        if (sscanf(at + 1, "%15s %15s %15s %ld %x:%x:%llu", kind, adv, rw, &p, &maj, &min, &ino) == 7 &&
            strcmp(kind, "FLOCK") == 0 && maj == major(st->st_dev) && min == minor(st->st_dev) &&
            ino == (unsigned long long)st->st_ino)
            pid = p;
    }
    fclose(f);
    return pid;
}

/*
 * A log file has one writer: an flock (LOCK_EX) on the file itself, its inode, whatever path
 * reaches it (a symbolic or hard link, a relative path), held while it is written, and taken
 * before the file is emptied, so that a writer refused leaves the other's file as it was.
 * Then the file is truncated (a FIFO or a device is left as it is). 0, or -1 with the error
 * set (busy_pid: the writer's pid, when the file is another writer's).
 */
static int exclusive_lock(etl_writer *w)
{
    struct stat st;

    if (flock(w->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            w->busy_pid = fstat(w->fd, &st) == 0 ? lock_holder(&st) : -1;
            if (w->busy_pid > 0)
                werror(w, "another writer (pid %ld) writes this file; a log file has one writer", w->busy_pid);
            else
                werror(w, "another writer writes this file; a log file has one writer");
            if (!w->busy_pid) w->busy_pid = -1;
            close(w->fd);
            w->fd = -1;
            errno = EBUSY;
            return -1;
        }
        /* A file system without flock (some network ones): written without the lock. */
    }
    if (w->o.log_file_mode & ETL_MODE_FILE_APPEND) return 0; /* continued, not emptied */
    if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size && ftruncate(w->fd, 0) != 0) {
        werror(w, "cannot truncate: %s", strerror(errno));
        return -1;
    }
    return 0;
}

long etl_writer_busy_pid(const etl_writer *w) { return w ? w->busy_pid : 0; }

static const char *clock_word(int clock)
{
    return clock == ETL_CLOCK_PERFCOUNTER ? "perfcounter" : clock == ETL_CLOCK_SYSTEMTIME ? "systemtime"
           : clock == ETL_CLOCK_CPUCYCLE ? "cycle" : "unknown";
}

/*
 * Append mode (EVENT_TRACE_FILE_MODE_APPEND): a sequential file that exists is continued. Its
 * logfile header must say the same buffer size, pointer size, processors and clock as ours,
 * and a clock that counts from the boot (PerfCounter, cycle counter) the same boot, so that
 * our timestamps convert with its StartTime as its own do; the file keeps its StartTime and
 * clock, and its counts (BuffersWritten, EventsLost, BuffersLost) go on from where they were.
 * 1: the file is empty (it is written as new); 0: continued; -1 with the error set.
 */
static int open_append(etl_writer *w)
{
    etl_writer_options *o = &w->o;
    struct stat st;
    uint8_t *b = w->header, *e = b + ETL_BUFFER_HEADER_SIZE, *t = e + ETL_SYSTEM_HEADER_SIZE;
    unsigned p;
    uint32_t bsize, nproc, mode, written;
    int clock;
    ssize_t n;

    if (fstat(w->fd, &st) != 0) {
        werror(w, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) return 1;
    memset(b, 0, o->buffer_size);
    n = pread(w->fd, b, o->buffer_size, 0);
    p = e[2] == ETL_HT_SYSTEM64 ? 8 : 4;
    if (n < (ssize_t)(ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_SIZE(p)) ||
        etl_le16(b + ETL_BH_BUFFER_TYPE) != ETL_BUFFER_TYPE_HEADER ||
        (e[2] != ETL_HT_SYSTEM64 && e[2] != ETL_HT_SYSTEM32) || etl_le16(e + 6) != 0) {
        werror(w, "cannot append: not an ETL file (no logfile header at byte offset 0)");
        return -1;
    }
    bsize = etl_le32(t + ETL_TLH_BUFFER_SIZE);
    nproc = etl_le32(t + ETL_TLH_NUMBER_OF_PROCESSORS);
    mode = etl_le32(t + ETL_TLH_LOG_FILE_MODE);
    clock = (int)etl_le32(t + ETL_TLH_RESERVED_FLAGS(p));
    if (!clock) clock = ETL_CLOCK_PERFCOUNTER;
    if (p != o->pointer_size) {
        werror(w, "cannot append: the file's pointer size is %u bytes, this session's %u", p, o->pointer_size);
        return -1;
    }
    if (bsize != o->buffer_size) {
        werror(w, "cannot append: the file's buffers are %u KB, this session's %u KB (BufferSize must be the same)",
               bsize / 1024, o->buffer_size / 1024);
        return -1;
    }
    if (clock != o->clock.type) {
        werror(w, "cannot append: the file's clock is %s (ClockType %d), this session's %s (%d)", clock_word(clock),
               clock, clock_word(o->clock.type), o->clock.type);
        return -1;
    }
    if (nproc != o->number_of_processors) {
        werror(w, "cannot append: the file was written with %u processors, this session has %u "
                  "(NumberOfProcessors must be the same)", nproc, o->number_of_processors);
        return -1;
    }
    if (mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_COMPRESSED)) {
        werror(w, "cannot append: the file is %s; only an uncompressed sequential file is appended to",
               mode & ETL_MODE_COMPRESSED ? "compressed" : mode & ETL_MODE_FILE_CIRCULAR ? "circular" : "a NEWFILE file");
        return -1;
    }
    if (clock != ETL_CLOCK_SYSTEMTIME && (int64_t)etl_le64(t + ETL_TLH_BOOT_TIME(p)) != o->boot_time) {
        werror(w, "cannot append: the file was recorded in another boot (BootTime differs), where its %s clock "
                  "counted from another start", clock == ETL_CLOCK_CPUCYCLE ? "cycle" : "PerfCounter");
        return -1;
    }
    if ((uint64_t)st.st_size < bsize || (st.st_size - bsize) % bsize) {
        werror(w, "cannot append: the file ends inside a buffer (byte offset %llu); it was not finished",
               (unsigned long long)st.st_size);
        return -1;
    }
    /* The file's clock, so that its StartTime converts our timestamps too. */
    o->clock.start_timestamp = (int64_t)etl_le64(e + 16);
    o->clock.start_time = (int64_t)etl_le64(t + ETL_TLH_START_TIME(p));
    o->clock.perf_freq = (int64_t)etl_le64(t + ETL_TLH_PERF_FREQ(p));
    o->clock.cpu_speed_mhz = etl_le32(t + ETL_TLH_CPU_SPEED);
    written = etl_le32(t + ETL_TLH_BUFFERS_WRITTEN);
    w->base_events_lost = etl_le32(t + ETL_TLH_EVENTS_LOST);
    w->base_buffers_lost = etl_le32(t + ETL_TLH_BUFFERS_LOST(p));
    w->header_size = bsize;
    w->end = w->high = (uint64_t)st.st_size;
    w->file_buffers = (uint32_t)((w->end - bsize) / bsize);
    if (written > 1 && written - 1 > w->file_buffers) w->file_buffers = written - 1;
    w->sequence = (int64_t)w->file_buffers + 1;
    w->stats.files++;
    return 0;
}

static int open_file(etl_writer *w)
{
    etl_header_counts c = { 0, 1, 0, 0 };
    int rc;

    free(w->path);
    w->path = file_path(w, w->file_index);
    if (!w->path) {
        werror(w, "out of memory");
        return -1;
    }
    /* Opened without O_TRUNC: the file is emptied only once it is ours (exclusive_lock). */
    w->fd = open(w->path, ((w->o.log_file_mode & ETL_MODE_FILE_APPEND) ? O_RDWR : O_WRONLY) | O_CREAT | O_CLOEXEC,
                 0666);
    if (w->fd < 0) {
        werror(w, "cannot create: %s", strerror(errno));
        return -1;
    }
    if (exclusive_lock(w) != 0) return -1;
    if ((w->o.log_file_mode & ETL_MODE_FILE_APPEND) && (rc = open_append(w)) <= 0) {
        if (rc < 0) return -1;
        direct_on(w);
        if ((w->o.log_file_mode & ETL_MODE_FILE_PREALLOCATE) && w->o.maximum_file_size > w->end) {
            rc = posix_fallocate(w->fd, (off_t)w->end, (off_t)(w->o.maximum_file_size - w->end));
            if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
                werror(w, "cannot preallocate %llu bytes: %s", (unsigned long long)w->o.maximum_file_size, strerror(rc));
                return -1;
            }
        }
        return write_header(w, 0);
    }
    direct_on(w);
    if ((w->o.log_file_mode & ETL_MODE_FILE_PREALLOCATE) && w->o.maximum_file_size) {
        rc = posix_fallocate(w->fd, 0, (off_t)w->o.maximum_file_size);
        if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
            werror(w, "cannot preallocate %llu bytes: %s", (unsigned long long)w->o.maximum_file_size, strerror(rc));
            return -1;
        }
    }
    w->header_size = etl_header_buffer_build(&w->o, w->log_file_name ? w->log_file_name : w->path, &c, w->header);
    w->end = w->high = w->header_size;
    w->file_buffers = 0;
    w->sequence = 1;
    w->stats.files++;
    return write_header(w, 0);
}

/* Finish the current file: final header, truncate a preallocated tail, close. */
static int close_file(etl_writer *w, int64_t end_time)
{
    int rc = 0;

    if (w->fd < 0) return 0;
    if (queue_flush(w) != 0) rc = -1;
    if (!w->fatal) {
        rc = write_header(w, end_time);
        if (rc == 0 && (w->o.log_file_mode & ETL_MODE_FILE_PREALLOCATE) && ftruncate(w->fd, (off_t)w->high) != 0) {
            werror(w, "cannot truncate to %llu bytes: %s", (unsigned long long)w->high, strerror(errno));
            rc = -1;
        }
    }
    if (close(w->fd) != 0 && rc == 0) {
        werror(w, "close: %s", strerror(errno));
        rc = -1;
    }
    w->fd = -1;
    return rc;
}

static int check_options(etl_writer *w)
{
    etl_writer_options *o = &w->o;
    uint32_t files = o->log_file_mode & (ETL_MODE_FILE_SEQUENTIAL | ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE);

    if (o->buffer_size < MIN_WRITER_BUFFER_SIZE || o->buffer_size > ETL_MAX_BUFFER_SIZE) {
        werror(w, "buffer size %u is out of range (4 KiB to 16 MiB)", o->buffer_size);
        return -1;
    }
    if (files & (files - 1)) {
        werror(w, "sequential, circular and NEWFILE modes exclude each other");
        return -1;
    }
    if ((o->log_file_mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_FILE_PREALLOCATE)) &&
        o->maximum_file_size == 0) {
        werror(w, "circular, NEWFILE and preallocated files need a maximum file size");
        return -1;
    }
    if ((o->log_file_mode & ETL_MODE_FILE_APPEND) &&
        (o->log_file_mode & (ETL_MODE_FILE_CIRCULAR | ETL_MODE_FILE_NEWFILE | ETL_MODE_COMPRESSED))) {
        werror(w, "append mode continues an uncompressed sequential file: not circular, NEWFILE or compressed");
        return -1;
    }
    if ((o->log_file_mode & ETL_MODE_FILE_CIRCULAR) && (o->log_file_mode & ETL_MODE_COMPRESSED)) {
        werror(w, "a circular file cannot be compressed (its buffers wrap in fixed slots)");
        return -1;
    }
    if (o->log_file_mode & ETL_MODE_FILE_NEWFILE) {
        const char *d = strstr(w->pattern, "%d");
        for (const char *q = strchr(w->pattern, '%'); q; q = strchr(q + 2, '%'))
            if (q != d) {
                werror(w, "a NEWFILE name holds exactly one %%d and no other %%");
                return -1;
            }
        if (!d) {
            werror(w, "a NEWFILE name needs a %%d for the file number");
            return -1;
        }
    }
    if (o->maximum_file_size && o->maximum_file_size < 3ull * o->buffer_size) {
        werror(w, "maximum file size %llu is less than three buffers", (unsigned long long)o->maximum_file_size);
        return -1;
    }
    return 0;
}

int etl_writer_open(etl_writer **out, const char *path, const etl_writer_options *opt)
{
    etl_writer *w = calloc(1, sizeof *w);

    *out = w;
    if (!w) return ETL_FATAL;
    w->fd = -1;
    if (opt) w->o = *opt;
    etl_writer_options_defaults(&w->o);
    w->pattern = strdup(path);
    w->logger_name = strdup(w->o.logger_name);
    if (w->o.log_file_name) w->log_file_name = strdup(w->o.log_file_name);
    if (!w->pattern || !w->logger_name || (w->o.log_file_name && !w->log_file_name)) {
        werror(w, "out of memory");
        w->fatal = 1;
        return ETL_FATAL;
    }
    w->o.logger_name = w->logger_name;
    w->o.log_file_name = w->log_file_name;
    w->file_index = 1;
    if (check_options(w) != 0) {
        w->fatal = 1;
        return ETL_FATAL;
    }
    if (posix_memalign((void **)&w->header, 4096, w->o.buffer_size) != 0) w->header = NULL; /* direct I/O */
    if (w->o.log_file_mode & ETL_MODE_COMPRESSED)
        w->zbuf = malloc(ETL_BUFFER_HEADER_SIZE + etl_xpress_compress_bound(w->o.buffer_size));
    if (!w->header || ((w->o.log_file_mode & ETL_MODE_COMPRESSED) && !w->zbuf)) {
        werror(w, "out of memory");
        w->fatal = 1;
        return ETL_FATAL;
    }
    if (open_file(w) != 0) {
        w->fatal = 1;
        return ETL_FATAL;
    }
    if (w->o.log_file_mode & ETL_MODE_FILE_CIRCULAR) w->slots = (uint32_t)((w->o.maximum_file_size - w->header_size) / w->o.buffer_size);
    return ETL_OK;
}

void etl_buffer_header_fill(uint8_t *b, uint32_t buffer_size, uint32_t used, uint16_t cpu, int64_t ts,
                            int64_t sequence, uint16_t logger_id, int marker)
{
    memset(b, 0, ETL_BUFFER_HEADER_SIZE);
    etl_put32(b + ETL_BH_BUFFER_SIZE, buffer_size);
    etl_put32(b + ETL_BH_SAVED_OFFSET, used);
    etl_put32(b + ETL_BH_CURRENT_OFFSET, buffer_size + used);
    etl_put64(b + ETL_BH_TIMESTAMP, (uint64_t)ts);
    etl_put64(b + ETL_BH_SEQUENCE_NUMBER, (uint64_t)sequence);
    etl_put16(b + ETL_BH_CLIENT_CONTEXT, cpu);
    etl_put16(b + ETL_BH_LOGGER_ID, logger_id);
    etl_put32(b + ETL_BH_STATE, ETL_BUFFER_STATE_FLUSH);
    etl_put32(b + ETL_BH_OFFSET, used);
    etl_put16(b + ETL_BH_BUFFER_FLAG, (uint16_t)(ETL_BUFFER_FLAG_PROC_INDEX | (marker ? ETL_BUFFER_FLAG_FLUSH_MARKER : 0)));
    etl_put16(b + ETL_BH_BUFFER_TYPE, ETL_BUFFER_TYPE_GENERIC);
}

static void fill_buffer_header(etl_writer *w, uint8_t *b, uint32_t used, uint16_t cpu, int64_t ts, int marker)
{
    etl_buffer_header_fill(b, w->o.buffer_size, used, cpu, ts, w->sequence, w->o.logger_id, marker);
}

int etl_writer_write_buffer(etl_writer *w, uint8_t *buffer, uint32_t used, uint16_t cpu,
                            int64_t flush_timestamp, int flush_marker)
{
    const uint8_t *out = buffer;
    uint32_t n = w->o.buffer_size;
    uint64_t at;

    if (w->fatal) return ETL_FATAL;
    if (used < ETL_BUFFER_HEADER_SIZE || used > w->o.buffer_size) {
        werror(w, "buffer used size %u is out of range", used);
        return ETL_FAILED;
    }
    if (used == ETL_BUFFER_HEADER_SIZE) return ETL_OK; /* no records: parsers expect at least one */
    /* Records are 8-byte aligned and so is the used size; the last record's padding is zero. */
    if (used % ETL_RECORD_ALIGN) {
        uint32_t aligned = ETL_RECORD_SPACE(used);
        if (aligned > w->o.buffer_size) aligned = w->o.buffer_size;
        memset(buffer + used, 0, aligned - used);
        used = aligned;
    }
    fill_buffer_header(w, buffer, used, cpu, flush_timestamp, flush_marker);
    if (w->o.log_file_mode & ETL_MODE_COMPRESSED) {
        size_t z = etl_xpress_compress(buffer + ETL_BUFFER_HEADER_SIZE, used - ETL_BUFFER_HEADER_SIZE,
                                       w->zbuf + ETL_BUFFER_HEADER_SIZE,
                                       etl_xpress_compress_bound(w->o.buffer_size));
        memcpy(w->zbuf, buffer, ETL_BUFFER_HEADER_SIZE);
        n = (uint32_t)(ETL_BUFFER_HEADER_SIZE + z);
        etl_put32(w->zbuf + ETL_BH_BUFFER_SIZE, n);
        etl_put32(w->zbuf + ETL_BH_CURRENT_OFFSET, used);
        etl_put16(w->zbuf + ETL_BH_BUFFER_FLAG,
                  (uint16_t)(etl_le16(buffer + ETL_BH_BUFFER_FLAG) | ETL_BUFFER_FLAG_COMPRESSED));
        out = w->zbuf;
        /* A compressed buffer larger than its records confuses readers that take Offset as
           the stream length: such a buffer is stored plain, as in an uncompressed file. */
        if (n >= used) {
            out = buffer;
            n = w->o.buffer_size;
        }
    }
    if (out == buffer) memset(buffer + used, 0xFF, w->o.buffer_size - used);

    if (w->o.log_file_mode & ETL_MODE_FILE_CIRCULAR) {
        at = w->header_size + (uint64_t)(w->file_buffers % w->slots) * w->o.buffer_size;
    } else {
        at = w->end;
        if (w->o.maximum_file_size && at + n > w->o.maximum_file_size) {
            if (!(w->o.log_file_mode & ETL_MODE_FILE_NEWFILE)) {
                w->stats.log_buffers_lost++;
                return ETL_FAILED; /* sequential: the file is full, logging stops */
            }
            w->file_index++;
            if (close_file(w, etl_time_to_filetime(etl_clock_time_ns(&w->o.clock, flush_timestamp))) != 0 ||
                open_file(w) != 0) {
                w->fatal = 1;
                return ETL_FATAL;
            }
            at = w->end;
            fill_buffer_header(w, buffer, used, cpu, flush_timestamp, flush_marker);
            if (out == w->zbuf) etl_put64(w->zbuf + ETL_BH_SEQUENCE_NUMBER, (uint64_t)w->sequence);
        }
    }
    if (w->batching && out == buffer) {
        /* Kept for one write with the buffers before it, if they end where it begins. */
        if (w->qn && (w->q_at + w->q_len != at || w->qn == BATCH_MAX) && queue_flush(w) != 0) return ETL_FATAL;
        if (!w->qn) w->q_at = at;
        w->q[w->qn].iov_base = buffer;
        w->q[w->qn++].iov_len = n;
        w->q_len += n;
    } else {
        if (queue_flush(w) != 0 || pwrite_all(w, out, n, at) != 0) return ETL_FATAL;
    }
    w->sequence++;
    w->file_buffers++;
    w->stats.buffers_written++;
    if (at + n > w->end) w->end = at + n;
    if (w->end > w->high) w->high = w->end;
    return ETL_OK;
}

int etl_writer_close(etl_writer *w, int64_t end_time)
{
    int rc;

    if (!w) return ETL_FATAL;
    rc = w->fatal ? -1 : close_file(w, end_time);
    if (w->fd >= 0) close(w->fd);
    free(w->header);
    free(w->zbuf);
    free(w->path);
    free(w->pattern);
    free(w->logger_name);
    free(w->log_file_name);
    free(w);
    return rc == 0 ? ETL_OK : ETL_FATAL;
}
