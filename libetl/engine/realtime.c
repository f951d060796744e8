/* SPDX-License-Identifier: MIT */
/* Real-time mode: the buffers a session writes are held for its consumer and sent over a socket, each freed once the consumer acknowledges it. */
/* MSG_NOSIGNAL, POLLRDHUP, SO_SNDBUFFORCE: Linux interfaces of the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "writer/writer.h"

/*
 * Real-time mode: a buffer written (or not: real time only) waits in the held queue for the
 * consumer, with its buffer header filled as in a file; when the queue is at its limit the
 * buffer is dropped and counted in RealTimeBuffersLost (and its events with it), as ETW
 * drops what a session with no consumer cannot hold.
 */
/* What a real-time session holds for its consumer at most: the pool less a buffer per
   processor and one more, so that writers always have buffers. */
static uint32_t held_max(const etl_session *s)
{
    uint32_t limit = atomic_load_explicit(&s->h->limit, memory_order_relaxed);
    return limit > s->ncpu + 1 ? limit - s->ncpu - 1 : 1;
}

void etl_realtime_wake(etl_session *s)
{
    uint64_t one = 1;
    if (write(s->rt_wake, &one, sizeof one) < 0) {} /* full: it is awake anyway */
}

void etl_realtime_hold(etl_session *s, uint32_t index)
{
    struct etl_ebuf *b = &s->bufs[index];
    uint32_t used = ETL_RECORD_SPACE(b->used);

    if (b->used <= ETL_BUFFER_HEADER_SIZE) { /* nothing in it */
        etl_pool_free_push(s, index);
        return;
    }
    if (used > s->bsize) used = s->bsize;
    memset(b->cur.data + b->used, 0, used - b->used);
    pthread_mutex_lock(&s->lock);
    if (s->held_n < held_max(s)) {
        etl_buffer_header_fill(b->cur.data, s->bsize, used, b->cpu, etl_session_now(s), s->rt_sequence++, 0, 1);
        b->used = used;
        s->ring[(s->held_head + s->held_n++) % s->nmax] = index;
        pthread_cond_broadcast(&s->held_cond);
        index = UINT32_MAX;
    }
    pthread_mutex_unlock(&s->lock);
    if (index == UINT32_MAX) return;
    atomic_fetch_add_explicit(&s->h->rt_buffers_lost, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->h->rt_events_lost, etl_flush_count_records(b), memory_order_relaxed);
    etl_pool_free_push(s, index);
}

/* ------------------------------------------------------------------ real-time delivery */

int etl_send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Sends the n pieces of iov (changing it), in one system call unless the socket takes them in parts. */
static int send_iov(int fd, struct iovec *iov, size_t n)
{
    struct msghdr m;

    while (n) {
        ssize_t k;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov;
        m.msg_iovlen = n;
        k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        for (; n && (size_t)k >= iov->iov_len; iov++, n--) k -= (ssize_t)iov->iov_len;
        if (n) {
            iov->iov_base = (uint8_t *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

static void frame_head(uint8_t head[ETL_RT_FRAME_HEAD], uint32_t kind, uint32_t n)
{
    etl_put32(head, ETL_RT_MAGIC);
    etl_put32(head + 4, kind);
    etl_put32(head + 8, n);
}

/* A frame: its head and bytes. */
static int send_frame(int fd, uint32_t kind, const void *p, uint32_t n)
{
    uint8_t head[ETL_RT_FRAME_HEAD];
    struct iovec iov[2] = { { head, sizeof head }, { (void *)(uintptr_t)p, n } };

    frame_head(head, kind, n);
    return send_iov(fd, iov, 2);
}

/* Buffers sent with one system call at most: what the flush thread hands on at once
   (wake_every, at most 16), and more when the consumer has fallen behind. */
#define SEND_MAX 32

/* The frames of the n held buffers index[]. */
static int send_buffers(etl_session *s, int fd, const uint32_t *index, uint32_t n)
{
    uint8_t head[SEND_MAX][ETL_RT_FRAME_HEAD];
    struct iovec iov[2 * SEND_MAX];

    for (uint32_t i = 0; i < n; i++) {
        const struct etl_ebuf *b = &s->bufs[index[i]];
        frame_head(head[i], ETL_RT_BUFFER, b->used);
        iov[2 * i] = (struct iovec){ head[i], ETL_RT_FRAME_HEAD };
        iov[2 * i + 1] = (struct iovec){ b->cur.data, b->used };
    }
    return send_iov(fd, iov, 2 * (size_t)n);
}

/* The END frame: the final statistics, as etlrecord names them. */
static int send_end(etl_session *s, int fd)
{
    etl_session_stats st;
    char text[ETL_RT_END_MAX];
    int n;

    etl_session_stats_get(s, &st);
    n = snprintf(text, sizeof text,
                 "EventsLost %llu\nBuffersWritten %u\nLogBuffersLost %u\nRealTimeBuffersLost %u\n"
                 "RealTimeEventsLost %llu\n", (unsigned long long)st.events_lost, st.buffers_written,
                 st.log_buffers_lost, st.real_time_buffers_lost, (unsigned long long)st.real_time_events_lost);
    return send_frame(fd, ETL_RT_END, text, (uint32_t)n);
}

/* The consumer's end of the socket is closed. */
static int peer_gone(int fd)
{
    struct pollfd pf = { fd, POLLRDHUP, 0 };

    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The consumer took n more of the buffers sent: they leave the held queue, oldest first. */
static void realtime_release(etl_session *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t index;
        pthread_mutex_lock(&s->lock);
        index = s->ring[s->held_head];
        s->held_head = (s->held_head + 1) % s->nmax;
        s->held_n--;
        s->delivered++;
        if (!s->writer) atomic_fetch_add_explicit(&s->h->buffers_written, 1, memory_order_relaxed);
        pthread_cond_broadcast(&s->held_cond);
        pthread_mutex_unlock(&s->lock);
        etl_pool_free_push(s, index);
    }
}

/*
 * The consumer's acknowledgements that have come (each a 4-byte count of buffers it has
 * taken, ack[] holding a partial one): what they count is released. -1 when the consumer is
 * gone, or acknowledges more than it was sent.
 */
static int take_acks(etl_session *s, int fd, uint32_t *sent, uint8_t ack[4], unsigned *nack)
{
    uint8_t buf[256];

    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        if (k == 0) return -1;
        for (ssize_t i = 0; i < k; i++) {
            ack[(*nack)++] = buf[i];
            if (*nack == 4) {
                uint32_t n = etl_le32(ack);
                *nack = 0;
                if (n > *sent) return -1;
                realtime_release(s, n);
                *sent -= n;
            }
        }
    }
}

int etl_session_realtime_attach(etl_session *s, int fd)
{
    char line[256];
    int e = 0, n;

    pthread_mutex_lock(&s->lock);
    /* A consumer that has just gone is still attached until its thread sees it (at once, as
       it waits on the socket): the next one waits for that, a second at most. */
    for (int i = 0; i < 20 && s->consumer && peer_gone(s->consumer_fd); i++) {
        struct timespec until = etl_deadline_in(50000000);
        etl_realtime_wake(s);
        pthread_cond_timedwait(&s->held_cond, &s->lock, &until);
    }
    if (!s->realtime) e = EINVAL;
    else if (s->consumer) e = EBUSY;
    else if (s->ended) e = ESHUTDOWN;
    else {
        /* Room in the socket for 16 buffers on their way (as far as the system allows), so
           that the consumer's thread and this one do not take turns a frame at a time. */
        int want = (int)(s->bsize * 16);
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
        s->consumer = 1;
        s->consumer_fd = fd;
        s->consumer_abort = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (!e) return ETL_OK;
    n = snprintf(line, sizeof line, e == EINVAL ? "error session %s is not in real-time mode\n"
                                    : e == EBUSY ? "error session %s already has a real-time consumer\n"
                                                 : "error session %s is stopping\n", s->logger_name);
    etl_send_all(fd, line, (size_t)n);
    errno = e;
    return ETL_FAILED;
}

int etl_session_realtime_deliver(etl_session *s)
{
    etl_writer_options o;
    uint8_t *header, ack[4];
    uint32_t used, sent = 0; /* buffers sent that the consumer has not acknowledged */
    unsigned nack = 0;
    int rc = ETL_FAILED, fd;

    pthread_mutex_lock(&s->lock);
    fd = s->consumer ? s->consumer_fd : -1;
    pthread_mutex_unlock(&s->lock);
    if (fd < 0) {
        errno = EINVAL;
        return ETL_FAILED;
    }
    header = malloc(s->bsize);
    if (!header) goto out;
    etl_session_writer_options(s, &o, ETL_MODE_REAL_TIME | (s->writer ? s->p.log_file_mode & ~ETL_MODE_COMPRESSED : 0));
    etl_header_buffer_build(&o, s->log_file_name, &(etl_header_counts){ 0, 0, 0, 0 }, header);
    used = etl_le32(header + ETL_BH_SAVED_OFFSET);
    if (etl_send_all(fd, "ok\n", 3) != 0 || send_frame(fd, ETL_RT_HEADER, header, used) != 0) goto out;
    /* The held buffers, oldest first (those held before the consumer came too), as they come;
       each stays held until the consumer says it has taken it. */
    for (;;) {
        struct pollfd pf[2] = { { fd, POLLIN, 0 }, { s->rt_wake, POLLIN, 0 } };
        uint32_t held, index[SEND_MAX], n = 0;
        int ended, abort_;

        if (take_acks(s, fd, &sent, ack, &nack) != 0) goto out;
        pthread_mutex_lock(&s->lock);
        held = s->held_n;
        ended = s->ended;
        abort_ = s->consumer_abort;
        for (; sent + n < held && n < SEND_MAX; n++) index[n] = s->ring[(s->held_head + sent + n) % s->nmax];
        pthread_mutex_unlock(&s->lock);
        if (abort_) goto out;
        if (n) {
            if (send_buffers(s, fd, index, n) != 0) goto out; /* they stay held */
            sent += n;
            continue;
        }
        if (ended && !held) break; /* everything taken */
        /* Wait for the consumer's word, a buffer or the end. */
        if (poll(pf, 2, 1000) > 0 && (pf[1].revents & POLLIN)) {
            uint64_t v;
            if (read(s->rt_wake, &v, sizeof v) < 0) {}
        }
    }
    rc = send_end(s, fd) == 0 ? ETL_OK : ETL_FAILED;
out:
    free(header);
    pthread_mutex_lock(&s->lock);
    s->consumer = 0;
    s->consumer_fd = -1;
    pthread_cond_broadcast(&s->held_cond);
    pthread_mutex_unlock(&s->lock);
    if (rc != ETL_OK) errno = EPIPE;
    return rc;
}

/*
 * At the stop, once the flush thread has held the last buffers: the consumer attached gets
 * them (the stop waits while it makes progress, and gives up on one that takes nothing for 5
 * seconds); whatever no consumer got is counted in RealTimeBuffersLost.
 */
void etl_realtime_end(etl_session *s)
{
    int64_t last = etl_clock_ns(CLOCK_MONOTONIC);
    uint64_t seen;

    pthread_mutex_lock(&s->lock);
    s->ended = 1;
    pthread_cond_broadcast(&s->held_cond);
    etl_realtime_wake(s);
    seen = s->delivered;
    while (s->consumer) {
        struct timespec until = etl_deadline_in(1000000000);
        pthread_cond_timedwait(&s->held_cond, &s->lock, &until);
        if (s->delivered != seen) {
            seen = s->delivered;
            last = etl_clock_ns(CLOCK_MONOTONIC);
        } else if (s->consumer && !s->consumer_abort && etl_clock_ns(CLOCK_MONOTONIC) - last > 5000000000LL) {
            s->consumer_abort = 1;
            shutdown(s->consumer_fd, SHUT_RDWR); /* its send fails now */
            etl_realtime_wake(s);
        }
    }
    while (s->held_n) {
        struct etl_ebuf *b = &s->bufs[s->ring[s->held_head]];
        atomic_fetch_add_explicit(&s->h->rt_buffers_lost, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->h->rt_events_lost, etl_flush_count_records(b), memory_order_relaxed);
        s->held_head = (s->held_head + 1) % s->nmax;
        s->held_n--;
    }
    pthread_mutex_unlock(&s->lock);
}
