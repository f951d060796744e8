/* SPDX-License-Identifier: MIT */
/* Byte sources for the reader: a file by path or descriptor, memory, and gzip spooled to a temporary file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "reader/reader.h"

struct fd_source {
    int fd;
    int owned;
};

static ssize_t fd_read_at(void *ctx, void *buf, size_t n, uint64_t offset)
{
    struct fd_source *s = ctx;
    size_t done = 0;

    while (done < n) {
        ssize_t k = pread(s->fd, (char *)buf + done, n - done, (off_t)(offset + done));
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) break;
        done += (size_t)k;
    }
    return (ssize_t)done;
}

static int64_t fd_size(void *ctx)
{
    struct fd_source *s = ctx;
    struct stat st;

    if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (int64_t)st.st_size;
}

static void fd_close(void *ctx)
{
    struct fd_source *s = ctx;

    if (s->owned) close(s->fd);
    free(s);
}

int etl_source_fd(etl_reader_source *src, int fd, int owned)
{
    struct fd_source *s = malloc(sizeof *s);

    if (!s) return -1;
    s->fd = fd;
    s->owned = owned;
    src->ctx = s;
    src->read_at = fd_read_at;
    src->size = fd_size;
    src->close = fd_close;
    return 0;
}

struct mem_source {
    const uint8_t *data;
    size_t size;
};

static ssize_t mem_read_at(void *ctx, void *buf, size_t n, uint64_t offset)
{
    struct mem_source *s = ctx;

    if (offset >= s->size) return 0;
    if (n > s->size - offset) n = (size_t)(s->size - offset);
    memcpy(buf, s->data + offset, n);
    return (ssize_t)n;
}

static int64_t mem_size(void *ctx)
{
    return (int64_t)((struct mem_source *)ctx)->size;
}

static void mem_close(void *ctx)
{
    free(ctx);
}

const uint8_t *etl_source_view(const etl_reader_source *src, size_t n, uint64_t offset)
{
    const struct mem_source *s = src->ctx;

    if (src->read_at != mem_read_at || offset > s->size || n > s->size - offset) return NULL;
    return s->data + offset;
}

int etl_source_memory(etl_reader_source *src, const void *data, size_t size)
{
    struct mem_source *s = malloc(sizeof *s);

    if (!s) return -1;
    s->data = data;
    s->size = size;
    src->ctx = s;
    src->read_at = mem_read_at;
    src->size = mem_size;
    src->close = mem_close;
    return 0;
}

int etl_source_is_gzip(const uint8_t *magic, size_t n)
{
    return n >= 3 && magic[0] == 0x1f && magic[1] == 0x8b && magic[2] == 8;
}

/*
 * Decompress a gzip source into an unlinked temporary file and replace src with it: the
 * reader needs random access, and memory must not grow with the file. Damaged or truncated
 * gzip data keeps what was decompressed before the damage (return 1, message in err).
 */
int etl_source_gunzip(etl_reader_source *src, char *err, size_t errsize)
{
    enum { CHUNK = 1 << 16 };
    const char *dir = getenv("TMPDIR");
    char path[4096];
    unsigned char *in = NULL, *out = NULL;
    z_stream z;
    uint64_t in_off = 0;
    int fd = -1, rc = -1, inited = 0, ended = 0, damaged = 0;

    memset(&z, 0, sizeof z);
    if (!dir || !*dir) dir = "/tmp";
    snprintf(path, sizeof path, "%s/libetl-gunzip-XXXXXX", dir);
    fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, errsize, "cannot create a temporary file in %s for gzip input: %s", dir, strerror(errno));
        return -1;
    }
    unlink(path);
    in = malloc(CHUNK);
    out = malloc(CHUNK);
    if (!in || !out) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        snprintf(err, errsize, "zlib: cannot initialise");
        goto out;
    }
    inited = 1;
    for (;;) {
        int zrc;
        if (z.avail_in == 0) {
            ssize_t k = src->read_at(src->ctx, in, CHUNK, in_off);
            if (k < 0) {
                snprintf(err, errsize, "read error at offset %llu: %s", (unsigned long long)in_off, strerror(errno));
                goto out;
            }
            if (k == 0) {
                if (!ended) {
                    snprintf(err, errsize, "gzip stream truncated at offset %llu", (unsigned long long)in_off);
                    damaged = 1;
                }
                break;
            }
            in_off += (uint64_t)k;
            z.next_in = in;
            z.avail_in = (uInt)k;
        }
        if (ended) {
            /* Another gzip member may follow; anything else after the end is ignored. */
            if (!etl_source_is_gzip(z.next_in, z.avail_in) || inflateReset(&z) != Z_OK) break;
            ended = 0;
        }
        do {
            size_t produced;
            z.next_out = out;
            z.avail_out = CHUNK;
            zrc = inflate(&z, Z_NO_FLUSH);
            if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR) {
                snprintf(err, errsize, "gzip data damaged near offset %llu: %s",
                         (unsigned long long)(in_off - z.avail_in), z.msg ? z.msg : "inflate failed");
                damaged = 1;
                break;
            }
            produced = CHUNK - z.avail_out;
            if (produced && write(fd, out, produced) != (ssize_t)produced) {
                snprintf(err, errsize, "cannot write the temporary file: %s", strerror(errno));
                goto out;
            }
        } while (z.avail_out == 0 && zrc != Z_STREAM_END);
        if (damaged) break;
        if (zrc == Z_STREAM_END) ended = 1;
    }
    if (src->close) src->close(src->ctx);
    src->ctx = NULL;
    src->close = NULL;
    if (etl_source_fd(src, fd, 1) != 0) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    fd = -1;
    rc = damaged ? 1 : 0;
out:
    if (inited) inflateEnd(&z);
    if (fd >= 0) close(fd);
    free(in);
    free(out);
    return rc;
}
