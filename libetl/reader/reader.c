/* SPDX-License-Identifier: MIT */
/* The ETL reader: opening (a file, a descriptor, memory), the logfile header, errors and closing. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/reader.h"

/* ---------------------------------------------------------------- errors */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_set_error(etl_reader *r, int64_t offset, const char *fmt, ...)
{
    va_list ap;
    int n;

    n = snprintf(r->err, sizeof r->err, "%s: ", r->name ? r->name : "<etl>");
    if (n < 0 || (size_t)n >= sizeof r->err) n = 0;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
    va_end(ap);
    r->err_offset = offset;
}

/* Damage found: recorded, counted and reported; reading goes on. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void etl_reader_damage(etl_reader *r, int64_t offset, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    etl_reader_set_error(r, offset, "%s", msg);
    r->warnings++;
    r->pending_warn = 1;
    if (r->opt.on_damage) r->opt.on_damage(r->opt.on_damage_arg, offset, r->err);
}

const char *etl_reader_error(const etl_reader *r) { return r ? r->err : "out of memory"; }
int64_t etl_reader_error_offset(const etl_reader *r) { return r ? r->err_offset : -1; }
unsigned etl_reader_warnings(const etl_reader *r) { return r ? r->warnings : 0; }
const etl_trace_info *etl_reader_info(const etl_reader *r) { return &r->info; }
int64_t etl_reader_time_ns(const etl_reader *r, int64_t ts) { return etl_clock_time_ns(&r->info.clock, ts); }

/* ---------------------------------------------------------------- logfile header */

static char *dup_utf16(const uint8_t *p, size_t units, size_t *consumed)
{
    size_t cap = units * 3 + 1;
    char *s = malloc(cap);

    if (!s) return NULL;
    *consumed = etl_utf16_to_utf8(p, units, s, cap);
    return s;
}

/* Parse the logfile header event at the start of buffer 0 (doc/format.md section 3). */
int etl_reader_parse_logfile_header(etl_reader *r, const uint8_t *b, uint32_t n)
{
    etl_trace_info *in = &r->info;
    uint32_t m, size, psize, tlh;
    const uint8_t *t;
    unsigned type;
    size_t consumed, units;

    if (n < ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE) {
        etl_reader_set_error(r, ETL_BUFFER_HEADER_SIZE, "not an ETL file: no logfile header event at offset 72");
        return -1;
    }
    m = etl_le32(b + ETL_BUFFER_HEADER_SIZE);
    type = (m >> 16) & 0xFF;
    if ((m >> 24) != 0xC0 || (type != ETL_HT_SYSTEM32 && type != ETL_HT_SYSTEM64) ||
        etl_le16(b + ETL_BUFFER_HEADER_SIZE + 6) != 0) {
        etl_reader_set_error(r, ETL_BUFFER_HEADER_SIZE,
                             "not an ETL file: the record at offset 72 is not a logfile header event "
                             "(first dword 0x%08x)", (unsigned)m);
        return -1;
    }
    psize = type == ETL_HT_SYSTEM64 ? 8 : 4;
    tlh = ETL_TLH_SIZE(psize);
    size = etl_le16(b + ETL_BUFFER_HEADER_SIZE + 4);
    if (size < ETL_SYSTEM_HEADER_SIZE + tlh || ETL_BUFFER_HEADER_SIZE + size > n) {
        etl_reader_set_error(r, ETL_BUFFER_HEADER_SIZE,
                             "logfile header event at offset 72 has size %u; a %u-bit TRACE_LOGFILE_HEADER needs "
                             "%u bytes and the buffer holds %u", size, psize * 8, ETL_SYSTEM_HEADER_SIZE + tlh,
                             n - ETL_BUFFER_HEADER_SIZE);
        return -1;
    }
    t = b + ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE;
    in->buffer_size = etl_le32(t + ETL_TLH_BUFFER_SIZE);
    in->os_major = t[ETL_TLH_VERSION];
    in->os_minor = t[ETL_TLH_VERSION + 1];
    in->layout_major = t[ETL_TLH_VERSION + 2];
    in->layout_minor = t[ETL_TLH_VERSION + 3];
    in->os_build = etl_le32(t + ETL_TLH_PROVIDER_VERSION);
    in->number_of_processors = etl_le32(t + ETL_TLH_NUMBER_OF_PROCESSORS);
    in->end_time = etl_le64s(t + ETL_TLH_END_TIME);
    in->timer_resolution = etl_le32(t + ETL_TLH_TIMER_RESOLUTION);
    in->maximum_file_size = etl_le32(t + ETL_TLH_MAXIMUM_FILE_SIZE);
    in->log_file_mode = etl_le32(t + ETL_TLH_LOG_FILE_MODE);
    in->buffers_written = etl_le32(t + ETL_TLH_BUFFERS_WRITTEN);
    in->start_buffers = etl_le32(t + ETL_TLH_START_BUFFERS);
    in->pointer_size = etl_le32(t + ETL_TLH_POINTER_SIZE);
    in->events_lost = etl_le32(t + ETL_TLH_EVENTS_LOST);
    in->clock.cpu_speed_mhz = etl_le32(t + ETL_TLH_CPU_SPEED);
    in->timezone_bias = (int32_t)etl_le32(t + ETL_TLH_TIME_ZONE(psize));
    in->boot_time = etl_le64s(t + ETL_TLH_BOOT_TIME(psize));
    in->clock.perf_freq = etl_le64s(t + ETL_TLH_PERF_FREQ(psize));
    in->clock.start_time = etl_le64s(t + ETL_TLH_START_TIME(psize));
    in->clock.type = (int)etl_le32(t + ETL_TLH_RESERVED_FLAGS(psize));
    in->buffers_lost = etl_le32(t + ETL_TLH_BUFFERS_LOST(psize));
    in->clock.start_timestamp = etl_le64s(b + ETL_BUFFER_HEADER_SIZE + 0x10);
    if (in->pointer_size != 4 && in->pointer_size != 8) in->pointer_size = psize;

    /* The session name and the log file name follow, each NUL-terminated UTF-16. */
    units = (size - ETL_SYSTEM_HEADER_SIZE - tlh) / 2;
    r->logger_name = dup_utf16(t + tlh, units, &consumed);
    if (!r->logger_name) return -1;
    r->log_file_name = dup_utf16(t + tlh + 2 * consumed, units - consumed, &consumed);
    if (!r->log_file_name) return -1;
    in->logger_name = r->logger_name;
    in->log_file_name = r->log_file_name;

    r->rctx.old_instance_header = in->layout_major < 1 || (in->layout_major == 1 && in->layout_minor < 1);
    r->compressed_file = (in->log_file_mode & ETL_MODE_COMPRESSED) != 0;
    return 0;
}

/* ---------------------------------------------------------------- open / close */

etl_reader *etl_reader_new(const etl_reader_source *src, const etl_reader_options *opt, const char *default_name)
{
    etl_reader *r = calloc(1, sizeof *r);

    if (!r) return NULL;
    r->src = *src;
    if (opt) r->opt = *opt;
    r->name = strdup(opt && opt->name ? opt->name : default_name);
    r->err_offset = -1;
    r->info.logger_name = "";
    r->info.log_file_name = "";
    if (!r->name) {
        free(r);
        return NULL;
    }
    return r;
}

static int open_reader(etl_reader *r)
{
    uint8_t magic[4];
    uint8_t *first = NULL;
    int64_t size;
    ssize_t k;
    uint32_t first_size = 0, n;
    etl_buffer_header bh;

    k = r->src.read_at(r->src.ctx, magic, sizeof magic, 0);
    if (k < 0) {
        etl_reader_set_error(r, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (etl_source_is_gzip(magic, (size_t)k)) {
        char msg[512];
        int rc = etl_source_gunzip(&r->src, msg, sizeof msg);
        if (rc < 0) {
            etl_reader_set_error(r, -1, "%s", msg);
            return -1;
        }
        if (rc > 0) etl_reader_damage(r, -1, "%s; the data before the damage is read", msg);
    }
    size = r->src.size(r->src.ctx);
    if (size < 0) {
        etl_reader_set_error(r, -1, "cannot tell the size (not a regular file?)");
        return -1;
    }
    r->file_size = (uint64_t)size;
    r->info.file_size = r->file_size;
    if (size == 0) {
        etl_reader_set_error(r, 0, "not an ETL file: the file is empty");
        return -1;
    }
    if (size < ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE) {
        etl_reader_set_error(r, 0, "not an ETL file: %lld bytes is too small for a header buffer", (long long)size);
        return -1;
    }

    /* Buffer 0: the header buffer, whose first record is the logfile header event. */
    n = (uint32_t)(size < ETL_BUFFER_HEADER_SIZE + 0x10000 ? size : ETL_BUFFER_HEADER_SIZE + 0x10000);
    first = malloc(n);
    if (!first) {
        etl_reader_set_error(r, -1, "out of memory");
        return -1;
    }
    if (etl_reader_read_exact(r, first, n, 0) != 0) goto fail;
    etl_buffer_header_read(first, &bh);
    if (bh.buffer_type != ETL_BUFFER_TYPE_HEADER || (bh.buffer_flag & ETL_BUFFER_FLAG_COMPRESSED)) {
        etl_reader_set_error(r, 0, "not an ETL file: the buffer at offset 0 is not a header buffer (BufferType %u, "
                             "BufferFlag 0x%04x)", bh.buffer_type, bh.buffer_flag);
        goto fail;
    }
    if (etl_reader_parse_logfile_header(r, first, n) != 0) goto fail;

    /* The logical buffer size: the logfile header's; if that is damaged, the header buffer's
       (uncompressed buffers all have one size) or, for compressed buffers, whose header buffer
       is short, the largest size allowed (each buffer's Offset then says how much it holds). */
    if (r->info.buffer_size < ETL_MIN_BUFFER_SIZE || r->info.buffer_size > ETL_MAX_BUFFER_SIZE) {
        uint32_t fallback = r->compressed_file ? ETL_MAX_BUFFER_SIZE : bh.buffer_size;
        if (fallback < ETL_MIN_BUFFER_SIZE || fallback > ETL_MAX_BUFFER_SIZE) {
            etl_reader_set_error(r, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE,
                                 "the logfile header's BufferSize %u (offset 104) is out of range and the header "
                                 "buffer's BufferSize %u cannot replace it", r->info.buffer_size, fallback);
            goto fail;
        }
        etl_reader_damage(r, ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE,
                          "the logfile header's BufferSize %u (offset 104) is out of range; using %s %u",
                          r->info.buffer_size, r->compressed_file ? "the largest allowed," : "the header buffer's",
                          fallback);
        r->info.buffer_size = fallback;
    }
    /* A damaged BufferSize in the header buffer itself: the events after the logfile header
       still tell how much of it is used, and uncompressed files have one buffer size. */
    if (bh.buffer_size < ETL_BUFFER_HEADER_SIZE || bh.buffer_size > r->info.buffer_size) {
        first_size = r->compressed_file ? (uint32_t)((bh.offset + 511u) & ~511u) : r->info.buffer_size;
        if (first_size < ETL_BUFFER_HEADER_SIZE || first_size > r->info.buffer_size) first_size = r->info.buffer_size;
        etl_reader_damage(r, 0, "the header buffer's BufferSize %u (offset 0) is invalid; taking %u", bh.buffer_size,
                          first_size);
    }
    free(first);
    first = NULL;

    if (etl_reader_index_buffers(r, first_size) != 0) return -1;
    if (etl_reader_prepare_streams(r) != 0) return -1;
    if (etl_reader_streams_start(r) != 0) return -1;
    return 0;
fail:
    free(first);
    return -1;
}

int etl_reader_open(etl_reader **out, const etl_reader_source *src, const etl_reader_options *opt)
{
    etl_reader *r = etl_reader_new(src, opt, "<etl>");

    *out = r;
    if (!r) {
        if (src->close) src->close(src->ctx);
        return ETL_FATAL;
    }
    if (open_reader(r) != 0) {
        r->fatal = 1;
        return ETL_FATAL;
    }
    if (r->warnings) {
        r->pending_warn = 0;
        return ETL_WARN;
    }
    return ETL_OK;
}

int etl_reader_open_path(etl_reader **out, const char *path, const etl_reader_options *opt)
{
    etl_reader_options o;
    etl_reader_source src;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    if (!o.name) o.name = path;
    if (fd < 0) {
        int e = errno;
        etl_reader_source none;
        memset(&none, 0, sizeof none);
        etl_reader *r = etl_reader_new(&none, &o, path);
        *out = r;
        if (r) {
            etl_reader_set_error(r, -1, "cannot open: %s", strerror(e));
            r->fatal = 1;
        }
        return ETL_FATAL;
    }
    if (etl_source_fd(&src, fd, 1) != 0) {
        close(fd);
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

int etl_reader_open_fd(etl_reader **out, int fd, const etl_reader_options *opt)
{
    char name[32];
    etl_reader_options o;
    etl_reader_source src;

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    snprintf(name, sizeof name, "<fd %d>", fd);
    if (!o.name) o.name = name;
    if (etl_source_fd(&src, fd, 0) != 0) {
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

int etl_reader_open_memory(etl_reader **out, const void *data, size_t size, const etl_reader_options *opt)
{
    etl_reader_options o;
    etl_reader_source src;

    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    if (!o.name) o.name = "<memory>";
    if (etl_source_memory(&src, data, size) != 0) {
        *out = NULL;
        return ETL_FATAL;
    }
    return etl_reader_open(out, &src, &o);
}

void etl_reader_close(etl_reader *r)
{
    if (!r) return;
    etl_reader_live_free(r->live);
    if (r->src.close) r->src.close(r->src.ctx);
    free(r->stream_memory);
    free(r->streams);
    free(r->heap);
    free(r->entry_order);
    free(r->buffers);
    free(r->cache);
    free(r->runs);
    free(r->scratch);
    free(r->logger_name);
    free(r->log_file_name);
    free(r->name);
    free(r);
}
