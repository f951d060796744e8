/* SPDX-License-Identifier: MIT */
/* Kernel capture's network_tcpip: samples of the sock and tcp tracepoints written as TcpIp and UdpIp events (Send, Recv, Connect, Accept, Disconnect, Retransmit, Reconnect), with each TCP socket's addresses and process kept by its kernel address, and each UDP datagram's ends from the BPF programs of knet.bpf.c (loaded here). */
/* readlink, nanosleep */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)

#include <bpf/libbpf.h>

#include "capture/knet.h"
#include "capture/knet.skel.h"

/* Linux's TCP states (include/net/tcp_states.h), address families and protocols. */
enum { TS_ESTABLISHED = 1, TS_SYN_SENT, TS_SYN_RECV, TS_FIN_WAIT1, TS_FIN_WAIT2, TS_TIME_WAIT, TS_CLOSE,
       TS_CLOSE_WAIT, TS_LAST_ACK, TS_LISTEN, TS_CLOSING, TS_NEW_SYN_RECV };
#define K_AF_INET 2
#define K_AF_INET6 10
#define K_IPPROTO_TCP 6
#define K_IPPROTO_UDP 17
#define K_IPPROTO_UDPLITE 136
#define K_MSG_PEEK 2
/* The process of a socket no process was seen to use (the payload's PID). */
#define PID_UNKNOWN UINT32_MAX
/* The sockets kept at most (one whose close was lost stays): beyond, new ones go unnamed. */
#define NET_SOCKS_MAX 65536u
/* How long a closed use is kept for the samples of other processors' readers that lag. */
#define NET_CLOSED_KEEP_NS 10000000000ll

/* A connection's ends: the socket's own address and port (s), its peer's (d). */
struct knet_addr {
    int v6;
    uint8_t saddr[16], daddr[16];
    uint16_t sport, dport;
};

/* One use of a socket's kernel address: the kernel reuses a closed socket's memory for the next
   socket, and one processor's reader may handle a sample of an earlier use after another's
   handled a later one, so each use is kept with its times, and a sample finds the use in force
   at its own time. */
struct knet_sock {
    uint64_t sk;
    int64_t since, until;      /* the use began (its first change of state, or a send or receive
                                  seen before any) and ended (its close; INT64_MAX: open) */
    struct knet_addr a;
    int known;                 /* a holds its addresses (from a change of its state) */
    uint32_t pid;              /* the process that connected, accepted or last used it */
    struct knet_sock *next;
};

struct knet_listener {
    struct knet_addr a;        /* sport: the port it listens on; saddr: its address (0: any) */
    uint32_t pid;
    uint64_t sk;               /* 0: found in /proc at the start */
    struct knet_listener *next;
};

/* ------------------------------------------------------------------ tracepoints */

int etl_knet_tracepoints(struct etl_kcapture *k, uint64_t ids[EV_COUNT], char *err, size_t errsize)
{
    static const char *const state_f[KN_FIELDS] = { "skaddr", "oldstate", "newstate", "sport", "dport", "family",
                                                    "protocol", "saddr", "daddr", "saddr_v6", "daddr_v6" };
    static const char *const len_f[KL_FIELDS] = { "sk", "family", "protocol", "ret", "flags" };
    static const char *const rtx_f[KR_FIELDS] = { "skaddr", "state", "sport", "dport", "family", "saddr", "daddr",
                                                  "saddr_v6", "daddr_v6" };
    static const char *const len_ev[2] = { "sock:sock_send_length", "sock:sock_recv_length" };
    char format[8192];

    if (etl_ktracepoint("sock:inet_sock_set_state", &ids[EV_NET_STATE], format, sizeof format, err, errsize) != 0)
        return -1;
    for (int f = 0; f < KN_FIELDS; f++)
        if (etl_ktp_find_any(format, "sock:inet_sock_set_state", state_f[f], &k->net_state[f], err, errsize) != 0)
            return -1;
    for (int i = 0; i < 2; i++) {
        if (etl_ktracepoint(len_ev[i], &ids[i ? EV_NET_RECV : EV_NET_SEND], format, sizeof format, err, errsize) != 0)
            return -1;
        for (int f = 0; f < KL_FIELDS; f++)
            if (etl_ktp_find_any(format, len_ev[i], len_f[f], &k->net_len[i][f], err, errsize) != 0) return -1;
    }
    if (etl_ktracepoint("tcp:tcp_retransmit_skb", &ids[EV_NET_RETRANSMIT], format, sizeof format, err, errsize) != 0)
        return -1;
    for (int f = 0; f < KR_FIELDS; f++)
        if (etl_ktp_find_any(format, "tcp:tcp_retransmit_skb", rtx_f[f], &k->net_rtx[f], err, errsize) != 0)
            return -1;
    return 0;
}

/* ------------------------------------------------------------------ addresses */

static void copy_field(uint8_t *dst, size_t n, const uint8_t *raw, uint32_t raw_len, const struct tp_field *f)
{
    memset(dst, 0, n);
    if (f->off + f->size <= raw_len) memcpy(dst, raw + f->off, f->size < n ? f->size : n);
}

static int addr_any(const uint8_t *a) { return !memcmp(a, (const uint8_t[16]){ 0 }, 16); }

static int v4_mapped(const uint8_t *a)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

    return memcmp(a, prefix, 12) == 0;
}

/* a's IPv6 addresses (saddr, daddr), or the IPv4 ones they map (an IPv6 socket's connection with
   IPv4-mapped addresses is the IPv4 connection it is on the wire). */
static void addr_v6(struct knet_addr *a)
{
    if ((v4_mapped(a->saddr) || v4_mapped(a->daddr)) && (v4_mapped(a->saddr) || addr_any(a->saddr)) &&
        (v4_mapped(a->daddr) || addr_any(a->daddr))) {
        uint8_t s[4], d[4];
        memcpy(s, a->saddr + 12, 4);
        memcpy(d, a->daddr + 12, 4);
        memset(a->saddr, 0, 16);
        memset(a->daddr, 0, 16);
        memcpy(a->saddr, s, 4);
        memcpy(a->daddr, d, 4);
        a->v6 = 0;
    } else {
        a->v6 = 1;
    }
}

/* The ends a tracepoint names (fields f: sport, dport, family, saddr, daddr, saddr_v6,
   daddr_v6). An IPv6 socket's connection with IPv4-mapped addresses is the IPv4 connection it is
   on the wire. */
static void addr_read(struct knet_addr *a, const uint8_t *raw, uint32_t raw_len, const struct tp_field *sport,
                      const struct tp_field *dport, const struct tp_field *family, const struct tp_field *saddr,
                      const struct tp_field *daddr, const struct tp_field *saddr6, const struct tp_field *daddr6)
{
    memset(a, 0, sizeof *a);
    a->sport = (uint16_t)etl_ktp_uint(raw, raw_len, sport);
    a->dport = (uint16_t)etl_ktp_uint(raw, raw_len, dport);
    if (etl_ktp_uint(raw, raw_len, family) == K_AF_INET6) {
        copy_field(a->saddr, 16, raw, raw_len, saddr6);
        copy_field(a->daddr, 16, raw, raw_len, daddr6);
        addr_v6(a);
    } else {
        copy_field(a->saddr, 4, raw, raw_len, saddr);
        copy_field(a->daddr, 4, raw, raw_len, daddr);
    }
}

/* ------------------------------------------------------------------ the sockets (under netlock) */

static unsigned sock_slot(uint64_t sk) { return (unsigned)(((sk >> 6) * 0x9E3779B97F4A7C15ull) >> 40) % NETTAB_SIZE; }

/* The use of sk in force at time ts: the latest one begun by then (newest first in its chain);
   NULL when none is. */
static struct knet_sock *sock_find(struct etl_kcapture *k, uint64_t sk, int64_t ts)
{
    for (struct knet_sock *s = k->nettab[sock_slot(sk)]; s; s = s->next)
        if (s->sk == sk && s->since <= ts) return s;
    return NULL;
}

/* The use of sk a change of state at ts belongs to: the one in force then, unless it was closed
   by then (a new use begins); else a use begun by a send or receive seen first (a placeholder,
   never changed in state), taken back to ts; else a new one (pid not known). Closed uses older
   than NET_CLOSED_KEEP_NS go. NULL: no memory, or too many. */
static struct knet_sock *sock_get(struct etl_kcapture *k, uint64_t sk, int64_t ts)
{
    unsigned slot = sock_slot(sk);
    struct knet_sock *s = sock_find(k, sk, ts);

    if (s && s->until > ts) return s;
    for (struct knet_sock *e = k->nettab[slot]; e; e = e->next)
        if (e->sk == sk && e->since > ts && !e->known && e->until == INT64_MAX) {
            e->since = ts;
            return e;
        }
    for (struct knet_sock **p = &k->nettab[slot]; *p;) {
        struct knet_sock *e = *p;
        if (e->until != INT64_MAX && e->until < ts - NET_CLOSED_KEEP_NS) {
            *p = e->next;
            free(e);
            k->net_socks--;
        } else
            p = &e->next;
    }
    if (k->net_socks >= NET_SOCKS_MAX || !(s = calloc(1, sizeof *s))) return NULL;
    s->sk = sk;
    s->since = ts;
    s->until = INT64_MAX;
    s->pid = PID_UNKNOWN;
    /* newest first: a chain is in the order of the uses' beginnings */
    struct knet_sock **p = &k->nettab[slot];
    while (*p && !((*p)->sk == sk && (*p)->since <= ts)) p = &(*p)->next;
    s->next = *p;
    *p = s;
    k->net_socks++;
    return s;
}

/* The use of sk in force at ts ends then. */
static void sock_close(struct etl_kcapture *k, uint64_t sk, int64_t ts)
{
    struct knet_sock *s = sock_find(k, sk, ts);

    if (s && s->until == INT64_MAX) s->until = ts;
}

/* The listener a connection to a.sport came to (the latest one noted): NULL when none is. */
static struct knet_listener *listener_of(struct etl_kcapture *k, const struct knet_addr *a)
{
    for (struct knet_listener *l = k->listeners; l; l = l->next)
        if (l->a.sport == a->sport && (addr_any(l->a.saddr) || (l->a.v6 == a->v6 && !memcmp(l->a.saddr, a->saddr, 16))))
            return l;
    return NULL;
}

static void listener_add(struct etl_kcapture *k, const struct knet_addr *a, uint32_t pid, uint64_t sk)
{
    struct knet_listener *l = calloc(1, sizeof *l);

    if (!l) return;
    l->a = *a;
    l->pid = pid;
    l->sk = sk;
    l->next = k->listeners;
    k->listeners = l;
}

static void listener_drop(struct etl_kcapture *k, uint64_t sk)
{
    for (struct knet_listener **p = &k->listeners; *p; p = &(*p)->next)
        if ((*p)->sk == sk) {
            struct knet_listener *l = *p;
            *p = l->next;
            free(l);
            return;
        }
}

void etl_knet_free(struct etl_kcapture *k)
{
    for (unsigned i = 0; i < NETTAB_SIZE; i++)
        while (k->nettab[i]) {
            struct knet_sock *s = k->nettab[i];
            k->nettab[i] = s->next;
            free(s);
        }
    while (k->listeners) {
        struct knet_listener *l = k->listeners;
        k->listeners = l->next;
        free(l);
    }
    k->net_socks = 0;
    if (k->net_udp) etl_kbpf_detach_all(k->net_udp->skeleton);
    etl_knet_udp_bpf__destroy(k->net_udp);
    k->net_udp = NULL;
    pthread_mutex_destroy(&k->netlock);
}

/* ------------------------------------------------------------------ the listeners at the start */

/* "0100007F:1F90" (IPv4) or 32 hex digits and a port (IPv6), as /proc/net/tcp prints an end:
   each 32-bit word of the address as the host holds it. */
static int proc_end(const char *text, struct knet_addr *a, int v6)
{
    unsigned words = v6 ? 4 : 1;
    const char *colon = strchr(text, ':');

    if (!colon || (size_t)(colon - text) != 8 * words) return -1;
    for (unsigned w = 0; w < words; w++) {
        char hex[9];
        uint32_t v;
        memcpy(hex, text + 8 * w, 8);
        hex[8] = '\0';
        v = (uint32_t)strtoul(hex, NULL, 16);
        memcpy(a->saddr + 4 * w, &v, 4);
    }
    a->sport = (uint16_t)strtoul(colon + 1, NULL, 16);
    a->v6 = v6;
    if (v6 && v4_mapped(a->saddr)) { /* a listener of IPv4-mapped addresses: IPv4's */
        memmove(a->saddr, a->saddr + 12, 4);
        memset(a->saddr + 4, 0, 12);
        a->v6 = 0;
    }
    return 0;
}

struct proc_listener { struct knet_addr a; unsigned long inode; uint32_t pid; };

/* The process holding socket inode ino among /proc's (0: none found). */
static void proc_owners(struct proc_listener *ls, size_t n)
{
    DIR *d = opendir("/proc"), *fd;
    struct dirent *p, *f;
    char path[64], link[64];
    size_t left = n;

    while (d && left && (p = readdir(d))) {
        if (p->d_name[0] < '1' || p->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%.16s/fd", p->d_name);
        if (!(fd = opendir(path))) continue;
        while (left && (f = readdir(fd))) {
            char full[96];
            ssize_t len;
            unsigned long ino;
            if (f->d_name[0] == '.') continue;
            snprintf(full, sizeof full, "%s/%.16s", path, f->d_name);
            if ((len = readlink(full, link, sizeof link - 1)) <= 0) continue;
            link[len] = '\0';
            if (sscanf(link, "socket:[%lu]", &ino) != 1) continue;
            for (size_t i = 0; i < n; i++)
                if (ls[i].inode == ino && !ls[i].pid) {
                    ls[i].pid = (uint32_t)strtoul(p->d_name, NULL, 10);
                    left--;
                }
        }
        closedir(fd);
    }
    if (d) closedir(d);
}

void etl_knet_rundown(struct etl_kcapture *k)
{
    struct proc_listener *ls = NULL;
    size_t n = 0, cap = 0;
    char line[512];

    if (!(k->flags & ETL_KERNEL_NETWORK_TCPIP)) return;
    for (int v6 = 0; v6 < 2; v6++) {
        FILE *f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "re");
        while (f && fgets(line, sizeof line, f)) {
            char local[64], remote[64];
            unsigned st;
            unsigned long ino;
            struct proc_listener l;
            /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
            if (sscanf(line, " %*[0-9]: %63s %63s %x %*s %*s %*s %*u %*u %lu", local, remote, &st, &ino) != 4 ||
                st != TS_LISTEN || !ino)
                continue;
            memset(&l, 0, sizeof l);
            if (proc_end(local, &l.a, v6) != 0) continue;
            l.inode = ino;
            if (n == cap) {
                size_t c2 = cap ? 2 * cap : 32;
                void *m = realloc(ls, c2 * sizeof *ls);
                if (!m) break;
                ls = m;
                cap = c2;
            }
            ls[n++] = l;
        }
        if (f) fclose(f);
    }
    if (n) proc_owners(ls, n);
    pthread_mutex_lock(&k->netlock);
    for (size_t i = 0; i < n; i++)
        if (ls[i].pid) listener_add(k, &ls[i].a, ls[i].pid, 0);
    pthread_mutex_unlock(&k->netlock);
    free(ls);
}

/* ------------------------------------------------------------------ samples */

/* The raw data of r when it is a sample of inet_sock_set_state, sock_send_length or
   sock_recv_length (their sample_type: IDENTIFIER, TID, TIME, CPU, RAW), and which in *e; else
   NULL. */
static const uint8_t *net_raw(const struct kcpu *c, const uint8_t *r, uint32_t size, int *e, uint32_t *raw_len)
{
    static const int evs[] = { EV_NET_STATE, EV_NET_SEND, EV_NET_RECV };
    uint64_t id;

    if (size < 44 || etl_le32(r) != PERF_RECORD_SAMPLE) return NULL;
    id = etl_le64(r + 8);
    *e = -1;
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (c->fd[evs[i]] >= 0 && c->id[evs[i]] == id) *e = evs[i];
    if (*e < 0) return NULL;
    *raw_len = etl_le32(r + 40);
    return *raw_len <= size - 44 ? r + 44 : NULL;
}

int etl_knet_wait(struct kcpu *c, const uint8_t *r, uint32_t size, int64_t ts, int final)
{
    struct etl_kcapture *k = c->k;
    struct timespec nap = { 0, 1000000 };
    struct knet_addr a;
    const uint8_t *raw;
    uint32_t raw_len;
    int e, noted;

    if (!(k->flags & ETL_KERNEL_NETWORK_TCPIP) || !(raw = net_raw(c, r, size, &e, &raw_len))) return 0;
    if (e == EV_NET_STATE) {
        int64_t old = (int64_t)etl_ktp_uint(raw, raw_len, &k->net_state[KN_OLDSTATE]);
        int64_t new = (int64_t)etl_ktp_uint(raw, raw_len, &k->net_state[KN_NEWSTATE]);
        uint64_t sk = etl_ktp_uint(raw, raw_len, &k->net_state[KN_SK]);
        /* what takes its process from a change another processor may hold: a connection
           established (its connect), a connection come to a listener (its listen) */
        if (!(new == TS_ESTABLISHED && (old == TS_SYN_SENT || old == TS_SYN_RECV)) &&
            !(new == TS_SYN_RECV && old == TS_LISTEN))
            return 0;
        addr_read(&a, raw, raw_len, &k->net_state[KN_SPORT], &k->net_state[KN_DPORT], &k->net_state[KN_FAMILY],
                  &k->net_state[KN_SADDR], &k->net_state[KN_DADDR], &k->net_state[KN_SADDR6], &k->net_state[KN_DADDR6]);
        pthread_mutex_lock(&k->netlock);
        {
            struct knet_sock *s = sock_find(k, sk, ts);
            noted = (s && s->until > ts && s->pid != PID_UNKNOWN) || (old != TS_SYN_SENT && listener_of(k, &a));
        }
        pthread_mutex_unlock(&k->netlock);
    } else {
        /* a TCP socket's send or receive: the changes of state of its address before it (its
           establishment, the close of the address's use before) may be on other processors,
           not handled yet, and a later use's may have been: the send waits for the other
           readers to be past it, as a disk completion does */
        const struct tp_field *f = k->net_len[e == EV_NET_RECV];
        if (etl_ktp_uint(raw, raw_len, &f[KL_PROTOCOL]) != K_IPPROTO_TCP) return 0;
        noted = 0;
    }
    if (noted) return 0;
    while (etl_kothers_wait(c, &c->net_wait, ts)) {
        if (!final) return 1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

static void fill_desc(etl_ktcpip_desc *d, uint32_t pid, uint32_t size, const struct knet_addr *a, uint64_t sk)
{
    memset(d, 0, sizeof *d);
    d->pid = pid;
    d->size = size;
    d->v6 = a->v6;
    memcpy(d->saddr, a->saddr, 16);
    memcpy(d->daddr, a->daddr, 16);
    d->sport = a->sport;
    d->dport = a->dport;
    d->connid = sk; /* the socket: one id for the connection's life, as Windows' TCB address */
}

static void write_net(struct kcpu *c, int64_t ts, uint16_t hook, uint32_t pid, uint32_t tid, const etl_ktcpip_desc *d)
{
    uint8_t buf[96];
    uint16_t h = (uint16_t)(hook + (d->v6 ? ETL_HOOK_TCPIP_IPV6 : 0));
    size_t n = etl_kpayload_tcpip(buf, sizeof buf, h, d);

    if (n <= sizeof buf) etl_kwrite_ev(c->k, etl_korder_ts(c, ts), h, pid, tid, buf, n);
}

/* A TCP socket's change of state: who listens, who connects, and the events of a connection
   established (Connect, Accept) and ended (Disconnect, once, as it leaves ESTABLISHED). */
static void state_sample(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    const struct tp_field *f = k->net_state;
    int64_t old = (int64_t)etl_ktp_uint(raw, raw_len, &f[KN_OLDSTATE]);
    int64_t new = (int64_t)etl_ktp_uint(raw, raw_len, &f[KN_NEWSTATE]);
    uint64_t sk = etl_ktp_uint(raw, raw_len, &f[KN_SK]);
    uint16_t hook = 0;
    uint32_t owner = PID_UNKNOWN;
    struct knet_addr a;
    etl_ktcpip_desc d;

    if (etl_ktp_uint(raw, raw_len, &f[KN_PROTOCOL]) != K_IPPROTO_TCP) return;
    addr_read(&a, raw, raw_len, &f[KN_SPORT], &f[KN_DPORT], &f[KN_FAMILY], &f[KN_SADDR], &f[KN_DADDR], &f[KN_SADDR6],
              &f[KN_DADDR6]);
    pthread_mutex_lock(&k->netlock);
    if (new == TS_LISTEN) {
        listener_add(k, &a, pid, sk); /* listen(): in the process */
    } else if (old == TS_LISTEN) {
        if (new == TS_SYN_RECV) { /* a connection come to it: the listener's process will accept it */
            struct knet_sock *s = sock_get(k, sk, ts);
            struct knet_listener *l = listener_of(k, &a);
            if (s) {
                s->a = a;
                s->known = 1;
                if (l) s->pid = l->pid;
            }
        } else {
            listener_drop(k, sk);
        }
    } else if (new == TS_SYN_SENT) { /* connect(): in the process */
        struct knet_sock *s = sock_get(k, sk, ts);
        if (s) s->pid = pid;
    } else if (new == TS_ESTABLISHED && (old == TS_SYN_SENT || old == TS_SYN_RECV)) {
        struct knet_sock *s = sock_get(k, sk, ts);
        if (s) {
            s->a = a;
            s->known = 1;
            if (s->pid == PID_UNKNOWN && old == TS_SYN_RECV) {
                struct knet_listener *l = listener_of(k, &a);
                if (l) s->pid = l->pid;
            }
            owner = s->pid;
        }
        hook = old == TS_SYN_SENT ? ETL_HOOK_TCPIP_CONNECT : ETL_HOOK_TCPIP_ACCEPT;
    } else if (old == TS_ESTABLISHED) {
        struct knet_sock *s = sock_find(k, sk, ts);
        owner = s ? s->pid : PID_UNKNOWN;
        hook = ETL_HOOK_TCPIP_DISCONNECT;
    }
    if (new == TS_CLOSE) sock_close(k, sk, ts);
    pthread_mutex_unlock(&k->netlock);
    if (!hook) return;
    fill_desc(&d, owner, 0, &a, sk);
    write_net(c, ts, hook, pid, tid, &d);
}

/* A send or receive of a socket of the Internet families, in the process that made it: TcpIp
   (with the connection's ends when its establishment was seen) or UdpIp Send/Recv. */
static void length_sample(struct kcpu *c, int recv, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                          uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    const struct tp_field *f = k->net_len[recv];
    uint64_t family = etl_ktp_uint(raw, raw_len, &f[KL_FAMILY]), protocol = etl_ktp_uint(raw, raw_len, &f[KL_PROTOCOL]);
    int32_t ret = (int32_t)etl_ktp_uint(raw, raw_len, &f[KL_RET]);
    uint64_t sk = etl_ktp_uint(raw, raw_len, &f[KL_SK]);
    struct knet_addr a;
    etl_ktcpip_desc d;

    if ((family != K_AF_INET && family != K_AF_INET6) || ret <= 0) return;
    if (recv && (etl_ktp_uint(raw, raw_len, &f[KL_FLAGS]) & K_MSG_PEEK)) return; /* nothing taken */
    memset(&a, 0, sizeof a);
    a.v6 = family == K_AF_INET6;
    if (protocol == K_IPPROTO_TCP) {
        pthread_mutex_lock(&k->netlock);
        {
            struct knet_sock *s = sock_find(k, sk, ts);
            if (!s || s->until <= ts) s = sock_get(k, sk, ts); /* not seen begun: a placeholder */
            if (s) {
                s->pid = pid;
                if (s->known) a = s->a;
            }
        }
        pthread_mutex_unlock(&k->netlock);
        fill_desc(&d, pid, (uint32_t)ret, &a, sk);
        write_net(c, ts, recv ? ETL_HOOK_TCPIP_RECV : ETL_HOOK_TCPIP_SEND, pid, tid, &d);
    } else if ((protocol == K_IPPROTO_UDP || protocol == K_IPPROTO_UDPLITE) && !k->net_udp) {
        /* (no tracepoint names a datagram's addresses: without the BPF programs, which write
           the datagrams with them (udp_sample), they stay 0) */
        fill_desc(&d, pid, (uint32_t)ret, &a, sk);
        write_net(c, ts, recv ? ETL_HOOK_UDPIP_RECV : ETL_HOOK_UDPIP_SEND, pid, tid, &d);
    }
}

/* A segment sent again: Reconnect for a SYN (the connection not established yet), else
   Retransmit, with the process of its socket. */
static void retransmit_sample(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw,
                              uint32_t raw_len)
{
    struct etl_kcapture *k = c->k;
    const struct tp_field *f = k->net_rtx;
    uint64_t sk = etl_ktp_uint(raw, raw_len, &f[KR_SK]);
    uint32_t owner;
    struct knet_addr a;
    etl_ktcpip_desc d;

    addr_read(&a, raw, raw_len, &f[KR_SPORT], &f[KR_DPORT], &f[KR_FAMILY], &f[KR_SADDR], &f[KR_DADDR], &f[KR_SADDR6],
              &f[KR_DADDR6]);
    pthread_mutex_lock(&k->netlock);
    {
        struct knet_sock *s = sock_find(k, sk, ts);
        owner = s ? s->pid : PID_UNKNOWN;
    }
    pthread_mutex_unlock(&k->netlock);
    fill_desc(&d, owner, 0, &a, sk);
    write_net(c, ts,
              etl_ktp_uint(raw, raw_len, &f[KR_STATE]) == TS_SYN_SENT ? ETL_HOOK_TCPIP_RECONNECT
                                                                       : ETL_HOOK_TCPIP_RETRANSMIT,
              pid, tid, &d);
}

/* A datagram sent or received, as the UDP BPF programs saw it (a knet.h record): UdpIp Send or
   Recv with its ends. */
static void udp_sample(struct kcpu *c, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len)
{
    struct knet_addr a;
    etl_ktcpip_desc d;
    uint32_t size;
    uint64_t sk;

    if (raw_len < ETL_KNET_REC || (raw[0] != ETL_KNET_UDP_SEND && raw[0] != ETL_KNET_UDP_RECV)) return;
    memset(&a, 0, sizeof a);
    memcpy(&size, raw + 4, 4); /* (the machine's order) */
    memcpy(&sk, raw + 8, 8);
    memcpy(&a.sport, raw + 16, 2);
    memcpy(&a.dport, raw + 18, 2);
    if (raw[1]) {
        memcpy(a.saddr, raw + 24, 16);
        memcpy(a.daddr, raw + 40, 16);
        addr_v6(&a);
    } else {
        memcpy(a.saddr, raw + 24, 4);
        memcpy(a.daddr, raw + 40, 4);
    }
    fill_desc(&d, pid, size, &a, sk);
    write_net(c, ts, raw[0] == ETL_KNET_UDP_SEND ? ETL_HOOK_UDPIP_SEND : ETL_HOOK_UDPIP_RECV, pid, tid, &d);
}

void etl_knet_sample(struct kcpu *c, int e, int64_t ts, uint32_t pid, uint32_t tid, const uint8_t *raw, uint32_t raw_len)
{
    if (!raw) return;
    if (e == EV_NET_STATE) state_sample(c, ts, pid, tid, raw, raw_len);
    else if (e == EV_NET_SEND || e == EV_NET_RECV) length_sample(c, e == EV_NET_RECV, ts, pid, tid, raw, raw_len);
    else if (e == EV_NET_RETRANSMIT) retransmit_sample(c, ts, pid, tid, raw, raw_len);
    else if (e == EV_NET_UDP) udp_sample(c, ts, pid, tid, raw, raw_len);
}

/* ------------------------------------------------------------------ the UDP BPF programs */

void etl_knet_udp_load(struct etl_kcapture *k)
{
    char note[160];
    int rc = 0;

    if (!(k->flags & ETL_KERNEL_NETWORK_TCPIP)) return;
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
        snprintf(note, sizeof note, "network_tcpip: UdpIp events without addresses: no kernel BTF for their BPF programs "
                 "(/sys/kernel/btf/vmlinux: %s)", strerror(errno));
        etl_knote(k, note);
        return;
    }
    etl_kbpf_listen();
    /* (loaded and attached before the perf events exist: what they write meanwhile goes
       nowhere, and a refusal leaves the capture as it was without them) */
    if (!(k->net_udp = etl_knet_udp_bpf__open()) || (rc = etl_knet_udp_bpf__load(k->net_udp)) != 0 ||
        (rc = etl_knet_udp_bpf__attach(k->net_udp)) != 0) {
        int e = rc < 0 ? -rc : errno;
        snprintf(note, sizeof note, "network_tcpip: UdpIp events without addresses: BPF refused: %s%s%.60s", strerror(e),
                 etl_kbpf_last[0] ? ": " : "", etl_kbpf_last);
        etl_knote(k, note);
        etl_knet_udp_bpf__destroy(k->net_udp);
        k->net_udp = NULL;
    }
}

int etl_knet_udp_set_cpu(struct etl_kcapture *k, int cpu, int fd, char *err, size_t errsize)
{
    uint32_t key = (uint32_t)cpu;

    if (bpf_map__update_elem(k->net_udp->maps.events, &key, sizeof key, &fd, sizeof fd, BPF_ANY) != 0) {
        snprintf(err, errsize, "network_tcpip: processor %d's output cannot be given to the UDP BPF programs: %s", cpu,
                 strerror(errno));
        return -1;
    }
    return 0;
}

#endif
