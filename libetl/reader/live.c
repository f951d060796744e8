/* SPDX-License-Identifier: MIT */
/* Real-time streams: a session's buffers read from a socket (or a descriptor) a batch at a time. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "reader/reader.h"

/* ---------------------------------------------------------------- real-time streams */

/*
 * A real-time stream (format/format.h) is read a batch at a time: the buffers that have
 * arrived together, after the header buffer, make an image of an ETL file in memory, which a
 * reader of its own delivers in time order. Offsets in messages are bytes of the stream.
 */
#define LIVE_BATCH_BYTES (16u << 20)
#define LIVE_INPUT (256u << 10)
#define LIVE_DIRECT 4096u /* a read at least this large goes straight into place */

struct live {
    int fd, owned;
    uint32_t bsize, header_used;
    uint8_t *header;           /* the header buffer frame */
    uint8_t *image;            /* header buffer, then the batch's buffers, bsize apart */
    uint32_t cap, n;           /* buffers the image may hold, and holds now (header included) */
    uint32_t room;             /* buffers it has memory for (it grows to cap) */
    uint64_t *at;              /* stream offset of each buffer's bytes */
    uint64_t offset;           /* bytes of the stream read */
    uint8_t *in;               /* what read() brought and the frames have not taken yet */
    size_t in_pos, in_len;
    uint32_t unacked;          /* buffers taken that the session has not been told of */
    uint64_t batches;
    etl_reader *batch;
    int ended;
    int broken;                /* the stream failed after the batch's last whole buffer */
    char why[1024];            /* and why, for when the batch is delivered */
    int64_t why_offset;
};

void etl_reader_live_free(struct live *l)
{
    if (!l) return;
    etl_reader_close(l->batch);
    if (l->owned && l->fd >= 0) close(l->fd);
    free(l->header);
    free(l->in);
    free(l->image);
    free(l->at);
    free(l);
}

/*
 * Tells the session that the buffers read so far are taken (it may let them go; those a
 * consumer that goes has not acknowledged go to the next one). Before every read that may
 * wait, so that the session's held buffers do not wait for a whole batch: a batch may be as
 * large as the session's pool. Not a socket (a file read as a stream): nobody to tell.
 */
static void live_ack(struct live *l)
{
    uint8_t ack[4];

    if (!l->unacked) return;
    etl_put32(ack, l->unacked);
    l->unacked = 0;
    if (send(l->fd, ack, sizeof ack, MSG_NOSIGNAL) < 0) {}
}

/* Reads n bytes; 0, or -1 (message set; fatal) when the stream ends or fails. */
static int live_read(etl_reader *r, void *buf, size_t n, const char *what)
{
    struct live *l = r->live;
    uint8_t *p = buf;
    size_t got = 0;

    while (got < n) {
        ssize_t k;
        if (l->in_pos < l->in_len) { /* what came already */
            size_t take = l->in_len - l->in_pos < n - got ? l->in_len - l->in_pos : n - got;
            memcpy(p + got, l->in + l->in_pos, take);
            l->in_pos += take;
            got += take;
            continue;
        }
        /*
         * A buffer's bytes straight into place, with the head of the frame that follows (at
         * most) into the input buffer, in one system call: reading them through the input
         * buffer copied every byte of the stream once more. A small read goes through the
         * input buffer: before the stream's header, as much as has come (the answer's lines
         * are read a byte at a time); after it, what is asked and the next frame's head.
         */
        live_ack(l);
        if (n - got >= LIVE_DIRECT) {
            struct iovec iov[2] = { { p + got, n - got }, { l->in, ETL_RT_FRAME_HEAD } };
            k = readv(l->fd, iov, 2);
            if (k > (ssize_t)(n - got)) {
                l->in_pos = 0;
                l->in_len = (size_t)k - (n - got);
                k = (ssize_t)(n - got);
            }
        } else if ((k = read(l->fd, l->in, l->bsize ? n - got + ETL_RT_FRAME_HEAD : LIVE_INPUT)) > 0) {
            l->in_pos = 0;
            l->in_len = (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0)
                etl_reader_set_error(r, (int64_t)(l->offset + got),
                                     "the session went away: the stream ended at byte %llu, "
                                     "in %s, before the session's end", (unsigned long long)(l->offset + got), what);
            else
                etl_reader_set_error(r, (int64_t)(l->offset + got), "cannot read the stream at byte %llu: %s",
                                     (unsigned long long)(l->offset + got), strerror(errno));
            r->fatal = 1;
            return -1;
        }
        got += (size_t)k;
    }
    l->offset += n;
    return 0;
}

/* Reads a frame's head: its kind and length, checked. 0, or -1 (fatal, message set). */
static int live_frame(etl_reader *r, uint32_t *kind, uint32_t *length)
{
    struct live *l = r->live;
    uint64_t at = l->offset;
    uint8_t head[ETL_RT_FRAME_HEAD];
    uint32_t max;

    if (live_read(r, head, sizeof head, "a frame's head") != 0) return -1;
    *kind = etl_le32(head + 4);
    *length = etl_le32(head + 8);
    max = *kind == ETL_RT_END ? ETL_RT_END_MAX : l->bsize ? l->bsize : ETL_MAX_BUFFER_SIZE;
    if (etl_le32(head) != ETL_RT_MAGIC || *kind < ETL_RT_HEADER || *kind > ETL_RT_END ||
        (l->bsize != 0) != (*kind != ETL_RT_HEADER) || *length > max ||
        (*kind != ETL_RT_END && *length < ETL_BUFFER_HEADER_SIZE)) {
        etl_reader_set_error(r, (int64_t)at,
                             "not a real-time stream frame at byte %llu (magic 0x%08x, kind %u, length %u)",
                             (unsigned long long)at, (unsigned)etl_le32(head), (unsigned)*kind, (unsigned)*length);
        r->fatal = 1;
        return -1;
    }
    return 0;
}

/* The END frame: the session's final counts, for the consumer's trace info. */
static int live_end(etl_reader *r, uint32_t length)
{
    char text[ETL_RT_END_MAX + 1];
    unsigned long long lost = 0, rt_events = 0;
    unsigned rt_buffers = 0;

    if (live_read(r, text, length, "the final statistics") != 0) return -1;
    text[length] = '\0';
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        sscanf(line, "EventsLost %llu", &lost);
        sscanf(line, "RealTimeBuffersLost %u", &rt_buffers);
        sscanf(line, "RealTimeEventsLost %llu", &rt_events);
    }
    lost += rt_events;
    r->info.events_lost = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
    r->info.buffers_lost = rt_buffers;
    r->live->ended = 1;
    return 0;
}

/* Damage in a batch: reported as the outer reader's, at the byte of the stream. */
static void live_damage(void *arg, int64_t offset, const char *message)
{
    etl_reader *r = arg;
    struct live *l = r->live;
    size_t skip = strlen(r->name);
    uint64_t at = offset < 0 ? l->offset : l->at[(uint64_t)offset / l->bsize % l->cap] + (uint64_t)offset % l->bsize;

    if (strncmp(message, r->name, skip) == 0 && message[skip] == ':') message += skip + 2;
    etl_reader_damage(r, (int64_t)at, "%s (byte %llu of the stream)", message, (unsigned long long)at);
}

/*
 * The next batch: waits for a frame (ETL_FATAL with errno EINTR when a signal comes first,
 * nothing read), then takes every frame that has arrived, up to the image's room. ETL_OK with
 * l->batch open, ETL_EOF at the session's end, ETL_FATAL.
 */
static int live_batch(etl_reader *r)
{
    struct live *l = r->live;
    struct pollfd pf = { l->fd, POLLIN, 0 };
    etl_reader_options o;
    int rc;

    etl_reader_close(l->batch);
    l->batch = NULL;
    if (l->broken) { /* the buffers before the failure were delivered: now the failure */
        snprintf(r->err, sizeof r->err, "%s", l->why);
        r->err_offset = l->why_offset;
        r->fatal = 1;
        return ETL_FATAL;
    }
    if (l->ended) return ETL_EOF;
    if (l->in_pos == l->in_len && poll(&pf, 1, -1) < 0) {
        int e = errno;
        etl_reader_set_error(r, -1, "waiting for events: %s", strerror(e));
        errno = e;
        return ETL_FATAL; /* not fatal for the reader: call again */
    }
    l->n = 1;
    do {
        uint32_t kind, length;
        uint8_t *b;
        if (l->n == l->room) {
            uint32_t more = l->room * 2 < l->cap ? l->room * 2 : l->cap;
            uint8_t *image = realloc(l->image, (size_t)more * l->bsize);
            if (!image) {
                etl_reader_set_error(r, -1, "out of memory");
                r->fatal = 1;
                return ETL_FATAL;
            }
            l->image = image;
            l->room = more;
        }
        b = l->image + (size_t)l->n * l->bsize;
        if (live_frame(r, &kind, &length) != 0 ||
            (kind == ETL_RT_END && live_end(r, length) != 0) ||
            (kind == ETL_RT_BUFFER && (l->at[l->n] = l->offset, live_read(r, b, length, "a buffer") != 0))) {
            if (l->n == 1) return ETL_FATAL;
            /* What came whole before is delivered first. */
            l->broken = 1;
            r->fatal = 0;
            snprintf(l->why, sizeof l->why, "%s", r->err);
            l->why_offset = r->err_offset;
            break;
        }
        if (kind == ETL_RT_END) break;
        memset(b + length, 0xFF, l->bsize - length);
        l->n++;
        l->unacked++;
        pf.revents = 0;
    } while (l->n < l->cap && (l->in_pos < l->in_len || (poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN))));
    live_ack(l);
    if (l->n == 1) return ETL_EOF;
    l->batches++;
    memset(&o, 0, sizeof o);
    o.order = r->opt.order;
    o.name = r->name;
    o.on_damage = live_damage;
    o.on_damage_arg = r;
    rc = etl_reader_open_memory(&l->batch, l->image, (size_t)l->n * l->bsize, &o);
    if (rc == ETL_FATAL) {
        etl_reader_set_error(r, (int64_t)l->at[1], "buffers of the stream from byte %llu: %s",
                             (unsigned long long)l->at[1], l->batch ? etl_reader_error(l->batch) : "out of memory");
        r->fatal = 1;
        return ETL_FATAL;
    }
    return ETL_OK;
}

int etl_reader_live_next(etl_reader *r, etl_event *ev)
{
    struct live *l = r->live;

    for (;;) {
        if (l->batch) {
            int rc = etl_reader_next(l->batch, ev);
            /* Every batch starts with the header buffer: its events are delivered once. */
            if ((rc == ETL_OK || rc == ETL_WARN) && ev->buffer_index == 0 && l->batches > 1) continue;
            if (rc == ETL_OK || rc == ETL_WARN) {
                r->info.buffers = (uint32_t)(l->batches + 1);
                return rc;
            }
            if (rc == ETL_FATAL) {
                etl_reader_set_error(r, -1, "%s", etl_reader_error(l->batch));
                r->fatal = 1;
                return ETL_FATAL;
            }
        }
        int rc = live_batch(r);
        if (rc != ETL_OK) return rc;
    }
}

/* Reads the answer to "consume" (lines, up to "ok" or "error MESSAGE") and the header frame. */
static int live_start(etl_reader *r)
{
    struct live *l = r->live;
    char line[1024];
    size_t n = 0;
    uint32_t kind, length;

    for (;;) { /* byte by byte: what follows the answer is the stream */
        char c;
        if (live_read(r, &c, 1, "the answer to 'consume'") != 0) return -1;
        if (c != '\n') {
            if (n + 1 < sizeof line) line[n++] = c;
            continue;
        }
        line[n] = '\0';
        if (strcmp(line, "ok") == 0) break;
        if (strncmp(line, "error ", 6) == 0) {
            size_t k = strlen(r->name);
            /* The controller names the session itself ("session NAME is ..."). */
            if (strncasecmp(line + 6, r->name, k) == 0 && line[6 + k] == ' ') {
                snprintf(r->err, sizeof r->err, "%s", line + 6);
                r->err_offset = -1;
            } else {
                etl_reader_set_error(r, -1, "%s", line + 6);
            }
            return -1;
        }
        n = 0; /* an answer line this reader does not need */
    }
    if (live_frame(r, &kind, &length) != 0) return -1;
    l->header = malloc(length);
    if (!l->header) {
        etl_reader_set_error(r, -1, "out of memory");
        return -1;
    }
    if (live_read(r, l->header, length, "the header buffer") != 0) return -1;
    if (etl_reader_parse_logfile_header(r, l->header, length) != 0) return -1;
    if (r->info.buffer_size < length || r->info.buffer_size < ETL_MIN_BUFFER_SIZE ||
        r->info.buffer_size > ETL_MAX_BUFFER_SIZE) {
        etl_reader_set_error(r, ETL_RT_FRAME_HEAD, "the stream's logfile header gives BufferSize %u, which cannot be",
                             r->info.buffer_size);
        return -1;
    }
    l->bsize = r->info.buffer_size;
    l->cap = LIVE_BATCH_BYTES / l->bsize > 2 ? LIVE_BATCH_BYTES / l->bsize : 2;
    /* Room for 4 MB of buffers from the start, touched now: the page faults of a growing image
       slowed the first batches enough for a busy session to drop buffers. */
    l->room = (4u << 20) / l->bsize > 2 ? (4u << 20) / l->bsize : 2;
    if (l->room > l->cap) l->room = l->cap;
    l->image = malloc((size_t)l->room * l->bsize);
    if (l->image) memset(l->image, 0xFF, (size_t)l->room * l->bsize);
    l->at = calloc(l->cap, sizeof *l->at);
    if (!l->image || !l->at) {
        etl_reader_set_error(r, -1, "out of memory");
        return -1;
    }
    memcpy(l->image, l->header, length);
    memset(l->image + length, 0xFF, l->bsize - length);
    l->at[0] = ETL_RT_FRAME_HEAD;
    r->info.buffers = 1;
    return 0;
}

static int live_open(etl_reader **out, int fd, int owned, const etl_reader_options *opt, const char *name,
                     const char *request)
{
    etl_reader_source none;
    etl_reader *r;

    memset(&none, 0, sizeof none);
    r = etl_reader_new(&none, opt, name);
    *out = r;
    if (r) r->live = calloc(1, sizeof *r->live);
    if (r && r->live) r->live->in = malloc(LIVE_INPUT);
    if (!r || !r->live || !r->live->in) {
        if (owned && fd >= 0) close(fd);
        if (r) {
            etl_reader_set_error(r, -1, "out of memory");
            r->fatal = 1;
        }
        return ETL_FATAL;
    }
    r->live->fd = fd;
    r->live->owned = owned;
    if (fd < 0 || (request && write(fd, request, strlen(request)) != (ssize_t)strlen(request)) ||
        live_start(r) != 0) {
        if (fd < 0 || !r->err[0]) etl_reader_set_error(r, -1, "%s", strerror(errno));
        r->fatal = 1;
        return ETL_FATAL;
    }
    return ETL_OK;
}

int etl_reader_open_stream(etl_reader **out, int fd, const etl_reader_options *opt)
{
    char name[32];

    snprintf(name, sizeof name, "<stream %d>", fd);
    return live_open(out, fd, 0, opt, opt && opt->name ? opt->name : name, NULL);
}

int etl_reader_open_live(etl_reader **out, int fd, const etl_reader_options *opt, const char *name, const char *error)
{
    if (error) {
        etl_reader_source none;
        etl_reader *r;
        memset(&none, 0, sizeof none);
        r = etl_reader_new(&none, opt, name);
        *out = r;
        if (!r) return ETL_FATAL;
        etl_reader_set_error(r, -1, "%s", error);
        r->fatal = 1;
        return ETL_FATAL;
    }
    return live_open(out, fd, 1, opt, opt && opt->name ? opt->name : name, NULL);
}
