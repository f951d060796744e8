/* SPDX-License-Identifier: MIT */
/* The records network_tcpip's UDP BPF programs (knet.bpf.c) hand the kernel capture (knet.c): their layout, shared by both sides. Private to libetl. */
#ifndef ETL_CAPTURE_KNET_H
#define ETL_CAPTURE_KNET_H

/*
 * One record per datagram sent or received (a perf sample's raw data, bpf_perf_event_output),
 * ETL_KNET_REC bytes, little-endian as the machine's:
 *
 *   0  u8  op        ETL_KNET_UDP_SEND, ETL_KNET_UDP_RECV
 *   1  u8  v6        1: the addresses are IPv6 (an IPv4-mapped one is still IPv4: knet.c reads it so)
 *   2  u8  flags     ETL_KNET_F_*
 *   3  u8  (0)
 *   4  u32 size      the bytes sent or received (the call's result)
 *   8  u64 sk        the socket (struct sock's address)
 *  16  u16 sport     the socket's own port (host order)
 *  18  u16 dport     the peer's port (0: not known)
 *  20  u32 (0)
 *  24  u8[16] saddr  the socket's own address (IPv4: the first 4 bytes; 0: the wildcard)
 *  40  u8[16] daddr  the peer's address (0: not known)
 */
#define ETL_KNET_REC 56u

#define ETL_KNET_UDP_SEND 1
#define ETL_KNET_UDP_RECV 2

#define ETL_KNET_F_PACKET 0x01   /* the ends are the datagram's own IP and UDP headers */
#define ETL_KNET_F_PEER 0x02     /* daddr and dport are known */
#define ETL_KNET_F_NAME 0x04     /* the peer is the address the receive call gave its caller */

#endif
