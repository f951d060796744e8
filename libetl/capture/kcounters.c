/* SPDX-License-Identifier: MIT */
/* Kernel capture's process_counters: Process PerfCtr at each process's end from the kernel's taskstats of its exiting threads (read as they exit, before their memory goes), and PerfCtrRundown of every process at the stop from /proc. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capture/capture.h"

#if defined(__linux__) && defined(PERF_RECORD_MISC_COMM_EXEC)
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

/* What the exits of a process's threads said, until its end takes it. */
struct kctr {
    uint32_t tgid;
    int64_t seen;              /* when its last message came (etl_monoclock_exact) */
    uint64_t faults;           /* its threads' minor and major faults, summed */
    uint64_t hiwater_rss_kb, hiwater_vm_kb;
    struct kctr *next;
};
#define KCTR_SLOTS 1024u
#define KCTR_STALE_NS 10000000000LL /* a process whose end was not seen (lost) is dropped after this */

struct kcounters {
    int fd;
    uint16_t family;
    char cpumask[32];
    pthread_t thread;
    int started;
    atomic_int stop;
    pthread_mutex_t lock;
    struct kctr *slot[KCTR_SLOTS];
    uint64_t dropped;          /* messages the socket could not hold (ENOBUFS) */
    uint8_t buf[65536];
};

/* One netlink request of genetlink command cmd (family fam) with one attribute (type, data n
   bytes); 0, or -1 (errno). */
static int nl_send(int fd, uint16_t fam, uint8_t cmd, uint16_t type, const void *data, size_t n)
{
    uint8_t msg[256];
    struct nlmsghdr *h = (struct nlmsghdr *)(void *)msg;
    struct genlmsghdr *g = (struct genlmsghdr *)(void *)(msg + NLMSG_HDRLEN);
    struct nlattr *a = (struct nlattr *)(void *)(msg + NLMSG_HDRLEN + GENL_HDRLEN);
    size_t len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + NLA_ALIGN(n);
    struct sockaddr_nl to = { .nl_family = AF_NETLINK };

    if (len > sizeof msg) return -1;
    memset(msg, 0, len);
    h->nlmsg_len = (uint32_t)len;
    h->nlmsg_type = fam;
    h->nlmsg_flags = NLM_F_REQUEST;
    h->nlmsg_seq = 1;
    g->cmd = cmd;
    g->version = 1;
    a->nla_type = type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + n);
    memcpy((uint8_t *)a + NLA_HDRLEN, data, n);
    return sendto(fd, msg, len, 0, (struct sockaddr *)&to, sizeof to) == (ssize_t)len ? 0 : -1;
}

/* The family id of TASKSTATS: 0, or -1 (errno). */
static int taskstats_family(int fd, uint16_t *family)
{
    uint8_t buf[4096];
    ssize_t n;

    if (nl_send(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
                sizeof TASKSTATS_GENL_NAME) != 0)
        return -1;
    n = recv(fd, buf, sizeof buf, 0);
    if (n < (ssize_t)NLMSG_HDRLEN) return -1;
    struct nlmsghdr *h = (struct nlmsghdr *)(void *)buf;
    if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        errno = h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error ? -e->error : ENOENT;
        return -1;
    }
    for (size_t o = NLMSG_HDRLEN + GENL_HDRLEN; o + NLA_HDRLEN <= (size_t)n && o + NLA_HDRLEN <= h->nlmsg_len;) {
        const struct nlattr *a = (const struct nlattr *)(const void *)(buf + o);
        if (a->nla_len < NLA_HDRLEN) break;
        if (a->nla_type == CTRL_ATTR_FAMILY_ID && a->nla_len >= NLA_HDRLEN + 2) {
            memcpy(family, (const uint8_t *)a + NLA_HDRLEN, 2);
            return 0;
        }
        o += NLA_ALIGN(a->nla_len);
    }
    errno = ENOENT;
    return -1;
}

/* A thread's taskstats at its exit (len bytes of a struct taskstats of the kernel's version). */
static void note_exit(struct kcounters *t, const uint8_t *p, size_t len)
{
    struct taskstats s;
    uint32_t tgid;
    struct kctr *c;

    memset(&s, 0, sizeof s);
    memcpy(&s, p, len < sizeof s ? len : sizeof s);
    /* ac_tgid came with version 12; before it, only a leader's exit (pid = tgid) is known */
    tgid = s.version >= 12 && len >= offsetof(struct taskstats, ac_tgid) + 4 ? s.ac_tgid : s.ac_pid;
    if (!tgid) return;
    pthread_mutex_lock(&t->lock);
    for (c = t->slot[tgid % KCTR_SLOTS]; c && c->tgid != tgid; c = c->next) {}
    if (!c && (c = calloc(1, sizeof *c))) {
        c->tgid = tgid;
        c->next = t->slot[tgid % KCTR_SLOTS];
        t->slot[tgid % KCTR_SLOTS] = c;
    }
    if (c) {
        c->seen = etl_monoclock_exact();
        c->faults += s.ac_minflt + s.ac_majflt;
        if (s.hiwater_rss > c->hiwater_rss_kb) c->hiwater_rss_kb = s.hiwater_rss;
        if (s.hiwater_vm > c->hiwater_vm_kb) c->hiwater_vm_kb = s.hiwater_vm;
    }
    pthread_mutex_unlock(&t->lock);
}

/* The attributes of a TASKSTATS_CMD_NEW message: each AGGR_PID's stats. */
static void parse(struct kcounters *t, const uint8_t *p, size_t n, int nested)
{
    for (size_t o = 0; o + NLA_HDRLEN <= n;) {
        const struct nlattr *a = (const struct nlattr *)(const void *)(p + o);
        size_t len = a->nla_len;
        if (len < NLA_HDRLEN || len > n - o) break;
        if (a->nla_type == TASKSTATS_TYPE_AGGR_PID && !nested) parse(t, p + o + NLA_HDRLEN, len - NLA_HDRLEN, 1);
        else if (a->nla_type == TASKSTATS_TYPE_STATS && nested) note_exit(t, p + o + NLA_HDRLEN, len - NLA_HDRLEN);
        o += NLA_ALIGN(len);
    }
}

static void *listener(void *arg)
{
    struct kcounters *t = arg;

    while (!atomic_load(&t->stop)) {
        struct pollfd pf = { t->fd, POLLIN, 0 };
        ssize_t n;
        if (poll(&pf, 1, 20) <= 0) continue;
        while ((n = recv(t->fd, t->buf, sizeof t->buf, MSG_DONTWAIT)) > 0 || (n < 0 && errno == ENOBUFS)) {
            if (n < 0) {
                t->dropped++;
                continue;
            }
            for (size_t o = 0; o + NLMSG_HDRLEN <= (size_t)n;) {
                const struct nlmsghdr *h = (const struct nlmsghdr *)(const void *)(t->buf + o);
                if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > (size_t)n - o) break;
                if (h->nlmsg_type == t->family && h->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN)
                    parse(t, t->buf + o + NLMSG_HDRLEN + GENL_HDRLEN, h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, 0);
                o += NLMSG_ALIGN(h->nlmsg_len);
            }
        }
    }
    return NULL;
}

int etl_kcounters_start(struct etl_kcapture *k, char *err, size_t errsize)
{
    struct kcounters *t;
    struct sockaddr_nl me = { .nl_family = AF_NETLINK };
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    int rcvbuf = 4 << 20;

    if (!(k->flags & ETL_KERNEL_PROCESS_COUNTERS)) return 0;
    if (!(t = calloc(1, sizeof *t))) {
        snprintf(err, errsize, "kernel events: out of memory");
        return -1;
    }
    atomic_init(&t->stop, 0);
    pthread_mutex_init(&t->lock, NULL);
    snprintf(t->cpumask, sizeof t->cpumask, "0-%ld", cpus > 1 ? cpus - 1 : 0);
    k->counters = t;
    t->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (t->fd < 0 || bind(t->fd, (struct sockaddr *)&me, sizeof me) != 0 || taskstats_family(t->fd, &t->family) != 0) {
        snprintf(err, errsize, "kernel events: process_counters: the kernel's taskstats (generic netlink family "
                 "TASKSTATS): %s (a kernel built with CONFIG_TASKSTATS)", strerror(errno));
        return -1;
    }
    /* (a larger buffer where root may have one: a burst of exits) */
    if (setsockopt(t->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
        setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (nl_send(t->fd, t->family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, t->cpumask,
                strlen(t->cpumask) + 1) != 0) {
        snprintf(err, errsize, "kernel events: process_counters: registering for the taskstats of exiting tasks: %s%s",
                 strerror(errno), errno == EPERM ? " (needs CAP_NET_ADMIN)" : "");
        return -1;
    }
    if (pthread_create(&t->thread, NULL, listener, t) != 0) {
        snprintf(err, errsize, "kernel events: process_counters: cannot start the taskstats thread: %s", strerror(errno));
        return -1;
    }
    t->started = 1;
    return 0;
}

void etl_kcounters_stop(struct etl_kcapture *k)
{
    struct kcounters *t = k->counters;

    if (!t) return;
    if (t->started) {
        atomic_store(&t->stop, 1);
        pthread_join(t->thread, NULL);
        t->started = 0;
    }
    if (t->fd >= 0) {
        if (t->family)
            nl_send(t->fd, t->family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, t->cpumask,
                    strlen(t->cpumask) + 1);
        close(t->fd);
        t->fd = -1;
    }
    if (t->dropped) etl_session_add_events_lost(k->s, t->dropped);
    t->dropped = 0;
}

void etl_kcounters_free(struct etl_kcapture *k)
{
    struct kcounters *t = k->counters;

    if (!t) return;
    etl_kcounters_stop(k);
    for (unsigned i = 0; i < KCTR_SLOTS; i++)
        while (t->slot[i]) {
            struct kctr *c = t->slot[i];
            t->slot[i] = c->next;
            free(c);
        }
    pthread_mutex_destroy(&t->lock);
    free(t);
    k->counters = NULL;
}

/* The counters of tgid noted so far, taken from the table (with those older than
   KCTR_STALE_NS): 1, or 0. */
static int take(struct kcounters *t, uint32_t tgid, struct kctr *out)
{
    int64_t now = etl_monoclock_exact();
    int found = 0;

    pthread_mutex_lock(&t->lock);
    for (struct kctr **p = &t->slot[tgid % KCTR_SLOTS]; *p;) {
        struct kctr *c = *p;
        if (c->tgid == tgid || c->seen < now - KCTR_STALE_NS) {
            if (c->tgid == tgid) {
                *out = *c;
                found = 1;
            }
            *p = c->next;
            free(c);
        } else {
            p = &c->next;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return found;
}

void etl_kcounters_exit(struct kcpu *c, int64_t ts, uint32_t pid)
{
    struct etl_kcapture *k = c->k;
    struct kcounters *t = k->counters;
    struct kctr got;
    etl_kproc_counters pc;
    uint8_t buf[128];
    size_t n;

    if (!t) return;
    /* The message comes before the exit's perf record is written; the taskstats thread may not
       have read it yet (a loaded machine): 10 ms at most each, 200 ms in all for a reader. */
    for (unsigned waited = 0; !take(t, pid, &got); waited++) {
        if (waited >= 10 || c->counters_waited_ms >= 200 || !t->started) return;
        usleep(1000);
        c->counters_waited_ms++;
    }
    memset(&pc, 0, sizeof pc);
    pc.pid = pid;
    pc.page_fault_count = got.faults > UINT32_MAX ? UINT32_MAX : (uint32_t)got.faults;
    pc.peak_virtual_size = got.hiwater_vm_kb * 1024;
    pc.peak_working_set_size = got.hiwater_rss_kb * 1024;
    n = etl_kpayload_process_counters(buf, sizeof buf, &pc);
    etl_kwrite_ev(k, ts, ETL_HOOK_PROCESS_PERF_CTR, pid, pid, buf, n);
}

/* /proc/PID/status's value of key ("VmPeak:") in kB, as bytes (0: none, a kernel thread). */
static uint64_t status_bytes(const char *status, const char *key)
{
    const char *p = strstr(status, key);

    return p ? strtoull(p + strlen(key), NULL, 10) * 1024 : 0;
}

int etl_kproc_counters_read(uint32_t pid, etl_kproc_counters *pc)
{
    char path[64], status[4096], stat[1024];
    const char *close_paren;
    unsigned long long minflt = 0, majflt = 0;
    DIR *d;
    struct dirent *e;

    memset(pc, 0, sizeof *pc);
    pc->pid = pid;
    snprintf(path, sizeof path, "/proc/%u/status", pid);
    if (etl_kread_small(path, status, sizeof status) <= 0) return -1;
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    if (etl_kread_small(path, stat, sizeof stat) <= 0) return -1;
    /* after the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt */
    if ((close_paren = strrchr(stat, ')')))
        sscanf(close_paren + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &minflt, &majflt);
    pc->page_fault_count = minflt + majflt > UINT32_MAX ? UINT32_MAX : (uint32_t)(minflt + majflt);
    pc->peak_virtual_size = status_bytes(status, "\nVmPeak:");
    pc->virtual_size = status_bytes(status, "\nVmSize:");
    pc->peak_working_set_size = status_bytes(status, "\nVmHWM:");
    pc->working_set_size = status_bytes(status, "\nVmRSS:");
    pc->pagefile_usage = pc->private_page_count = status_bytes(status, "\nVmData:") + status_bytes(status, "\nVmStk:");
    snprintf(path, sizeof path, "/proc/%u/fd", pid);
    if ((d = opendir(path))) {
        while ((e = readdir(d)))
            if (isdigit((unsigned char)e->d_name[0])) pc->handle_count++;
        closedir(d);
    }
    return 0;
}

void etl_kcounters_rundown(struct etl_kcapture *k, int64_t ts)
{
    DIR *d;
    struct dirent *e;

    if (!(k->flags & ETL_KERNEL_PROCESS_COUNTERS) || !(d = opendir("/proc"))) return;
    while ((e = readdir(d))) {
        etl_kproc_counters pc;
        uint8_t buf[128];
        uint32_t pid;
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid = (uint32_t)strtoul(e->d_name, NULL, 10);
        if (etl_kproc_counters_read(pid, &pc) != 0) continue;
        size_t n = etl_kpayload_process_counters(buf, sizeof buf, &pc);
        etl_kwrite_ev(k, ts, ETL_HOOK_PROCESS_PERF_CTR_RUNDOWN, pid, pid, buf, n);
    }
    closedir(d);
}

#endif
