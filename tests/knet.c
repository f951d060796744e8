/* SPDX-License-Identifier: MIT */
/* knet.test's workload: a client process makes N TCP connections over IPv4 loopback and N over IPv6 loopback to a server process it forked, each sending and receiving known byte counts, then sends UDP datagrams of a known size to the server over both, from an unconnected socket (sendto) and a connected one each; it prints what it did, with each UDP socket's port. "knet serve" and "knet connect PORT BYTES" are a server listening before a session starts and its client. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole of n bytes, or exit. */
static void send_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w <= 0) {
            perror("knet: send");
            exit(2);
        }
        buf += w;
        n -= (size_t)w;
    }
}

static void recv_all(int fd, char *buf, size_t n)
{
    while (n) {
        ssize_t r = recv(fd, buf, n, 0);
        if (r <= 0) {
            perror("knet: recv");
            exit(2);
        }
        buf += r;
        n -= (size_t)r;
    }
}

/* A socket of family fam bound to loopback, port 0: its port in *port. */
static int bound(int fam, int type, unsigned *port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int fd = socket(fam, type, 0), one = 1;

    memset(&ss, 0, sizeof ss);
    if (fam == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    }
    if (fd < 0 || (fam == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        perror("knet: socket");
        exit(2);
    }
    *port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

static void to(int fam, unsigned port, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    if (fam == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->sin_port = htons((uint16_t)port);
        *len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        a->sin6_port = htons((uint16_t)port);
        *len = sizeof *a;
    }
}

/* knet serve: listens on IPv4 loopback, prints its port, takes one connection and reads it to
   its end. */
static int serve(void)
{
    unsigned port;
    int l = bound(AF_INET, SOCK_STREAM, &port), c;
    char buf[4096];
    ssize_t r;

    if (listen(l, 1) != 0) return 2;
    printf("%u\n", port);
    fflush(stdout);
    if ((c = accept(l, NULL, NULL)) < 0) return 2;
    while ((r = recv(c, buf, sizeof buf, 0)) > 0) {}
    close(c);
    close(l);
    return r == 0 ? 0 : 2;
}

/* knet connect PORT BYTES: sends BYTES to IPv4 loopback's PORT, and returns once the server has
   closed the connection. */
static int connect_to(unsigned port, unsigned bytes)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int c = socket(AF_INET, SOCK_STREAM, 0);
    char *buf = calloc(1, bytes + 1);

    to(AF_INET, port, &ss, &len);
    if (c < 0 || !buf || connect(c, (struct sockaddr *)&ss, len) != 0) {
        perror("knet: connect");
        free(buf);
        return 2;
    }
    send_all(c, buf, bytes);
    /* the end sent, then the server's close awaited: it has received everything by then */
    if (shutdown(c, SHUT_WR) != 0 || recv(c, buf, 1, 0) != 0) {
        perror("knet: the server's close");
        free(buf);
        return 2;
    }
    close(c);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned n, up, down, dgrams, dsize, ports[4]; /* tcp4, tcp6, udp4, udp6 */
    unsigned udp_ports[4];                      /* the client's: udp4 sendto, udp4 connected, udp6 sendto, udp6 connected */
    int pipefd[2], status;
    char *buf;
    pid_t server;

    if (argc == 2 && strcmp(argv[1], "serve") == 0) return serve();
    if (argc == 4 && strcmp(argv[1], "connect") == 0) return connect_to((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
    if (argc != 6) {
        fprintf(stderr, "usage: knet N UP_BYTES DOWN_BYTES DATAGRAMS DATAGRAM_BYTES | serve | connect PORT BYTES\n");
        return 2;
    }
    n = (unsigned)atoi(argv[1]);
    up = (unsigned)atoi(argv[2]);
    down = (unsigned)atoi(argv[3]);
    dgrams = (unsigned)atoi(argv[4]);
    dsize = (unsigned)atoi(argv[5]);
    buf = calloc(1, (up > down ? up : down) + dsize + 1);
    if (!buf || pipe(pipefd) != 0) return 2;

    server = fork();
    if (server < 0) return 2;
    if (server == 0) { /* the server: its own listeners and UDP sockets, reported to the client */
        int fds[4];
        fds[0] = bound(AF_INET, SOCK_STREAM, &ports[0]);
        fds[1] = bound(AF_INET6, SOCK_STREAM, &ports[1]);
        fds[2] = bound(AF_INET, SOCK_DGRAM, &ports[2]);
        fds[3] = bound(AF_INET6, SOCK_DGRAM, &ports[3]);
        if (listen(fds[0], 16) != 0 || listen(fds[1], 16) != 0) return 2;
        if (write(pipefd[1], ports, sizeof ports) != (ssize_t)sizeof ports) return 2;
        for (unsigned i = 0; i < 2 * n; i++) {
            int c = accept(fds[i < n ? 0 : 1], NULL, NULL);
            if (c < 0) return 2;
            recv_all(c, buf, up);
            send_all(c, buf, down);
            if (recv(c, buf, 1, 0) != 0) return 2; /* the client's close */
            close(c);
        }
        /* each datagram with its sender's address asked: recvfrom over IPv4; over IPv6 recvmsg
           for half, then recvmmsg for the rest, several at a time (5 ms first: some queue),
           each batch the two client sockets' in turn */
        for (unsigned i = 0; i < 3 * dgrams; i++) {
            struct sockaddr_storage from;
            socklen_t from_len = sizeof from;
            struct iovec iov = { buf, dsize + 1 };
            struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
            ssize_t r = i < 2 * dgrams ? recvfrom(fds[2], buf, dsize + 1, 0, (struct sockaddr *)&from, &from_len)
                                       : recvmsg(fds[3], &m, 0);
            if (r != (ssize_t)dsize) return 2;
        }
        usleep(5000);
        for (unsigned got = 0; got < dgrams;) {
            enum { BATCH = 8 };
            struct sockaddr_storage from[BATCH];
            struct iovec iov[BATCH];
            struct mmsghdr mm[BATCH];
            char *bufs = buf; /* (each datagram's bytes over the last's: only sizes are checked) */
            int r;
            memset(mm, 0, sizeof mm);
            for (unsigned j = 0; j < BATCH; j++) {
                iov[j].iov_base = bufs;
                iov[j].iov_len = dsize + 1;
                mm[j].msg_hdr.msg_name = &from[j];
                mm[j].msg_hdr.msg_namelen = sizeof from[j];
                mm[j].msg_hdr.msg_iov = &iov[j];
                mm[j].msg_hdr.msg_iovlen = 1;
            }
            r = recvmmsg(fds[3], mm, dgrams - got < BATCH ? dgrams - got : BATCH, MSG_WAITFORONE, NULL);
            if (r <= 0) return 2;
            for (int j = 0; j < r; j++)
                if (mm[j].msg_len != dsize) return 2;
            got += (unsigned)r;
        }
        free(buf);
        return 0;
    }
    if (read(pipefd[0], ports, sizeof ports) != (ssize_t)sizeof ports) return 2;
    for (unsigned i = 0; i < 2 * n; i++) {
        int fam = i < n ? AF_INET : AF_INET6, c = socket(fam, SOCK_STREAM, 0);
        struct sockaddr_storage ss;
        socklen_t len;
        to(fam, ports[i < n ? 0 : 1], &ss, &len);
        if (c < 0 || connect(c, (struct sockaddr *)&ss, len) != 0) {
            perror("knet: connect");
            return 2;
        }
        send_all(c, buf, up);
        recv_all(c, buf, down);
        close(c);
    }
    /* each family: datagrams from an unconnected socket (sendto) and a connected one (send) in
       turn, so that the server's batches hold both; each one's port (the kernel's choice at
       its first datagram) printed */
    for (int v = 0; v < 2; v++) {
        int fam = v ? AF_INET6 : AF_INET, u[2] = { socket(fam, SOCK_DGRAM, 0), socket(fam, SOCK_DGRAM, 0) };
        struct sockaddr_storage ss, own;
        socklen_t len, own_len;
        to(fam, ports[2 + v], &ss, &len);
        if (u[0] < 0 || u[1] < 0 || connect(u[1], (struct sockaddr *)&ss, len) != 0) {
            perror("knet: udp socket");
            return 2;
        }
        for (unsigned i = 0; i < 2 * dgrams; i++) {
            ssize_t w = i % 2 ? send(u[1], buf, dsize, 0) : sendto(u[0], buf, dsize, 0, (struct sockaddr *)&ss, len);
            if (w != (ssize_t)dsize) {
                perror("knet: sendto");
                return 2;
            }
            usleep(100); /* (the server keeps up: no datagram dropped) */
        }
        for (int connected = 0; connected < 2; connected++) {
            own_len = sizeof own;
            if (getsockname(u[connected], (struct sockaddr *)&own, &own_len) != 0) return 2;
            udp_ports[2 * v + connected] =
                ntohs(fam == AF_INET ? ((struct sockaddr_in *)&own)->sin_port : ((struct sockaddr_in6 *)&own)->sin6_port);
            close(u[connected]);
        }
    }
    if (waitpid(server, &status, 0) != server || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "knet: the server failed\n");
        return 2;
    }
    /* client server tcp4_port tcp6_port udp4_port udp6_port connections_each up down datagrams_each size,
       then the client's UDP ports: IPv4 sendto, IPv4 connected, IPv6 sendto, IPv6 connected */
    printf("%d %d %u %u %u %u %u %u %u %u %u %u %u %u %u\n", (int)getpid(), (int)server, ports[0], ports[1], ports[2],
           ports[3], n, up, down, dgrams, dsize, udp_ports[0], udp_ports[1], udp_ports[2], udp_ports[3]);
    free(buf);
    return 0;
}
