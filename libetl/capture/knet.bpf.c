/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* network_tcpip's UDP programs (BPF, CO-RE, on tracepoints): each datagram sent or received with its own and its peer's addresses and ports, as records (knet.h) in the processors' perf rings. */
#include "capture/vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "capture/knet.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define K_AF_INET 2
#define K_AF_INET6 10
#define K_IPPROTO_UDP 17
#define K_IPPROTO_UDPLITE 136
#define K_MSG_PEEK 2
#define K_TCP_ESTABLISHED 1 /* (a connected UDP socket's state) */

/* The processors' BPF_OUTPUT perf events (the capture's rings), by processor. */
struct {
    __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
    __uint(key_size, sizeof(int));
    __uint(value_size, sizeof(int));
} events SEC(".maps");

/* One record, as knet.h lays it out. */
struct rec {
    __u8 op, v6, flags, pad0;
    __u32 size;
    __u64 sk;
    __u16 sport, dport;
    __u32 pad1;
    __u8 saddr[16], daddr[16];
};

/* The last UDP datagram a thread handed a network device (net_dev_queue), by thread id: its
   sock_send_length, in the same call, takes it (LRU: a thread gone leaves no entry). */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, struct rec);
} sent SEC(".maps");

/* A receive call in progress on a thread (recvfrom, recvmsg, recvmmsg), by process and thread id
   (a thread that died inside its call leaves an entry that a thread of another process given
   the same id does not take): where its
   caller asked for the senders' addresses, and the record of a datagram received whose sender
   is written there once the call has copied it (at the next datagram of a recvmmsg, or the
   call's exit). */
#define CALL_RECVFROM 1
#define CALL_RECVMSG 2
#define CALL_RECVMMSG 3
struct rcall {
    __u64 user;          /* recvfrom: the sockaddr; recvmsg: the msghdr; recvmmsg: the mmsghdr vector */
    __u32 kind, index;   /* index: the recvmmsg's next message */
    __u32 pending_index; /* (of pending) */
    __u32 have_pending;
    struct rec pending;
};
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u64);
    __type(value, struct rcall);
} rcalls SEC(".maps");

static __always_inline __u32 tid_now(void) { return (__u32)bpf_get_current_pid_tgid(); }
static __always_inline __u64 call_key(void) { return bpf_get_current_pid_tgid(); }

static __always_inline int udp_sock(struct sock *sk)
{
    __u16 fam, proto;

    if (!sk) return 0;
    fam = BPF_CORE_READ(sk, __sk_common.skc_family);
    proto = BPF_CORE_READ(sk, sk_protocol);
    return (fam == K_AF_INET || fam == K_AF_INET6) && (proto == K_IPPROTO_UDP || proto == K_IPPROTO_UDPLITE);
}

/* The ends the socket holds: its own address and port (the address it is bound to; the port
   given at its first datagram), and its peer's when it is connected. */
static __always_inline void sock_ends(struct sock *sk, struct rec *r)
{
    int connected = BPF_CORE_READ(sk, __sk_common.skc_state) == K_TCP_ESTABLISHED;

    r->sport = BPF_CORE_READ(sk, __sk_common.skc_num);
    if (BPF_CORE_READ(sk, __sk_common.skc_family) == K_AF_INET6) {
        r->v6 = 1;
        BPF_CORE_READ_INTO(&r->saddr, sk, __sk_common.skc_v6_rcv_saddr);
        if (connected) BPF_CORE_READ_INTO(&r->daddr, sk, __sk_common.skc_v6_daddr);
    } else {
        BPF_CORE_READ_INTO((__u32 *)r->saddr, sk, __sk_common.skc_rcv_saddr);
        if (connected) BPF_CORE_READ_INTO((__u32 *)r->daddr, sk, __sk_common.skc_daddr);
    }
    if (connected) {
        r->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
        r->flags |= ETL_KNET_F_PEER;
    }
}

static __always_inline void rec_send(void *ctx, struct rec *r)
{
    bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, r, sizeof *r);
}

/* A datagram going out: its IP and UDP headers (not a fragment past the first, whose "UDP
   header" is data), its source the socket's end. */
SEC("raw_tracepoint/net_dev_queue")
int dev_queue(struct bpf_raw_tracepoint_args *ctx)
{
    struct sk_buff *skb = (struct sk_buff *)ctx->args[0];
    struct sock *sk = BPF_CORE_READ(skb, sk);
    unsigned char *ip;
    __u8 h[40];
    __u16 ports[2];
    __u32 tid, udp_at;
    struct rec r;

    if (!udp_sock(sk)) return 0;
    ip = BPF_CORE_READ(skb, head) + BPF_CORE_READ(skb, network_header);
    if (bpf_probe_read_kernel(h, sizeof h, ip) != 0) return 0;
    __builtin_memset(&r, 0, sizeof r);
    if (h[0] >> 4 == 4) {
        if ((h[9] != K_IPPROTO_UDP && h[9] != K_IPPROTO_UDPLITE) || ((h[6] & 0x1f) | h[7])) return 0;
        __builtin_memcpy(r.saddr, h + 12, 4);
        __builtin_memcpy(r.daddr, h + 16, 4);
        udp_at = (h[0] & 0xf) * 4;
    } else if (h[0] >> 4 == 6) {
        if (h[6] != K_IPPROTO_UDP && h[6] != K_IPPROTO_UDPLITE) return 0; /* (an extension header: unread) */
        r.v6 = 1;
        __builtin_memcpy(r.saddr, h + 8, 16);
        __builtin_memcpy(r.daddr, h + 24, 16);
        udp_at = 40;
    } else {
        return 0;
    }
    if (bpf_probe_read_kernel(ports, sizeof ports, ip + (udp_at & 0x3c)) != 0) return 0;
    r.sport = bpf_ntohs(ports[0]);
    r.dport = bpf_ntohs(ports[1]);
    r.flags = ETL_KNET_F_PACKET | ETL_KNET_F_PEER;
    r.sk = (__u64)sk;
    tid = tid_now();
    bpf_map_update_elem(&sent, &tid, &r, BPF_ANY);
    return 0;
}

/* A send's end (sock_sendmsg): the datagram this thread handed a device for this socket in the
   call, else the socket's own ends (a datagram not sent yet: corked, dropped before a device,
   a fragmented IPv6 one). */
SEC("raw_tracepoint/sock_send_length")
int send_length(struct bpf_raw_tracepoint_args *ctx)
{
    struct sock *sk = (struct sock *)ctx->args[0];
    int ret = (int)ctx->args[1];
    __u32 tid = tid_now();
    struct rec *s = bpf_map_lookup_elem(&sent, &tid);
    struct rec r;

    if (ret <= 0 || !udp_sock(sk)) {
        if (s) bpf_map_delete_elem(&sent, &tid);
        return 0;
    }
    if (s && s->sk == (__u64)sk) {
        r = *s;
    } else {
        __builtin_memset(&r, 0, sizeof r);
        sock_ends(sk, &r);
    }
    if (s) bpf_map_delete_elem(&sent, &tid);
    r.op = ETL_KNET_UDP_SEND;
    r.size = (__u32)ret;
    r.sk = (__u64)sk;
    rec_send(ctx, &r);
    return 0;
}

/* The sender a receive call wrote for its caller, into r's peer (when it is an Internet one). */
static __always_inline void name_read(struct rcall *c, struct rec *r)
{
    void *name = 0;
    __u8 sa[24];
    __u16 family;

    if (c->kind == CALL_RECVFROM) {
        name = (void *)c->user;
    } else if (c->kind == CALL_RECVMSG) {
        bpf_probe_read_user(&name, sizeof name, &((struct user_msghdr *)c->user)->msg_name);
    } else {
        struct mmsghdr *v = (struct mmsghdr *)c->user;
        bpf_probe_read_user(&name, sizeof name, &v[c->pending_index & 1023].msg_hdr.msg_name);
    }
    /* (the family first, then only the bytes of its sockaddr: one at the end of a page) */
    if (!name || bpf_probe_read_user(&family, sizeof family, name) != 0) return;
    if (family == K_AF_INET && !r->v6 && bpf_probe_read_user(sa, 8, name) == 0) {
        __builtin_memcpy(r->daddr, sa + 4, 4);
    } else if (family == K_AF_INET6 && r->v6 && bpf_probe_read_user(sa, 24, name) == 0) {
        __builtin_memcpy(r->daddr, sa + 8, 16);
    } else {
        return;
    }
    r->dport = (__u16)(sa[2] << 8 | sa[3]);
    r->flags |= ETL_KNET_F_PEER | ETL_KNET_F_NAME;
}

static __always_inline void pending_send(void *ctx, struct rcall *c)
{
    if (!c->have_pending) return;
    name_read(c, &c->pending);
    rec_send(ctx, &c->pending);
    c->have_pending = 0;
}

/* A receive's end (sock_recvmsg): the socket's ends; an unconnected socket's sender is the
   address the call gives its caller (when it asked), written after this: the record waits. */
SEC("raw_tracepoint/sock_recv_length")
int recv_length(struct bpf_raw_tracepoint_args *ctx)
{
    struct sock *sk = (struct sock *)ctx->args[0];
    int ret = (int)ctx->args[1], flags = (int)ctx->args[2];
    __u64 key = call_key();
    struct rcall *c = bpf_map_lookup_elem(&rcalls, &key);
    struct rec r;

    if (c) pending_send(ctx, c); /* (a recvmmsg's previous datagram: its sender is written now) */
    if (ret <= 0 || (flags & K_MSG_PEEK) || !udp_sock(sk)) {
        if (c && c->kind == CALL_RECVMMSG) c->index++;
        return 0;
    }
    __builtin_memset(&r, 0, sizeof r);
    sock_ends(sk, &r);
    r.op = ETL_KNET_UDP_RECV;
    r.size = (__u32)ret;
    r.sk = (__u64)sk;
    if (c && !(r.flags & ETL_KNET_F_PEER)) {
        c->pending = r;
        c->pending_index = c->index;
        c->have_pending = 1;
    } else {
        rec_send(ctx, &r);
    }
    if (c && c->kind == CALL_RECVMMSG) c->index++;
    return 0;
}

static __always_inline int call_begin(__u32 kind, __u64 user)
{
    __u64 key = call_key();
    struct rcall c;

    __builtin_memset(&c, 0, sizeof c);
    c.kind = kind;
    c.user = user;
    bpf_map_update_elem(&rcalls, &key, &c, BPF_ANY);
    return 0;
}

static __always_inline int call_end(void *ctx)
{
    __u64 key = call_key();
    struct rcall *c = bpf_map_lookup_elem(&rcalls, &key);

    if (!c) return 0;
    pending_send(ctx, c);
    bpf_map_delete_elem(&rcalls, &key);
    return 0;
}

/* (a recvfrom that asks no address, as recv(3) is, is no call of these: most of a TCP
   connection's receives, whose costs would double) */
SEC("tracepoint/syscalls/sys_enter_recvfrom")
int enter_recvfrom(struct trace_event_raw_sys_enter *ctx)
{
    return ctx->args[4] ? call_begin(CALL_RECVFROM, ctx->args[4]) : 0;
}
SEC("tracepoint/syscalls/sys_enter_recvmsg")
int enter_recvmsg(struct trace_event_raw_sys_enter *ctx) { return call_begin(CALL_RECVMSG, ctx->args[1]); }
SEC("tracepoint/syscalls/sys_enter_recvmmsg")
int enter_recvmmsg(struct trace_event_raw_sys_enter *ctx) { return call_begin(CALL_RECVMMSG, ctx->args[1]); }
SEC("tracepoint/syscalls/sys_exit_recvfrom")
int exit_recvfrom(struct trace_event_raw_sys_exit *ctx) { return call_end(ctx); }
SEC("tracepoint/syscalls/sys_exit_recvmsg")
int exit_recvmsg(struct trace_event_raw_sys_exit *ctx) { return call_end(ctx); }
SEC("tracepoint/syscalls/sys_exit_recvmmsg")
int exit_recvmmsg(struct trace_event_raw_sys_exit *ctx) { return call_end(ctx); }
