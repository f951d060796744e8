/* SPDX-License-Identifier: MIT */
/* LBR capture with Linux perf's branch-stack sampling: each processor's samples of the triggers' perf events into LBR records. */
#define _GNU_SOURCE /* syscall */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "kcapture.h"
#include "lbr.h"

#define RING_PAGES 32 /* data pages of each perf ring (a power of two) */
#define SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_BRANCH_STACK)

struct ring {
    int fd;
    uint8_t *map;               /* the metadata page, then RING_PAGES of data */
};

struct etl_lbr_capture {
    etl_session *s;
    uint32_t flags;
    uint64_t branch_type;
    struct ring *rings;
    unsigned nring;
    size_t page;
    int wake;                   /* eventfd: stop */
    pthread_t thread;
    int thread_started;
    uint64_t lost;              /* PERF_RECORD_LOST */
    uint8_t record[65536];      /* a record that wraps the ring, made whole */
};

/* The perf event that samples a trigger's events with a branch stack: Linux takes branch
   stacks only with samples of hardware counters (software events and tracepoints refuse them). */
static int trigger_source(const etl_classic_event_id *e, struct perf_event_attr *a)
{
    if (!etl_guid_equal(&e->event_guid, etl_group_guid(ETL_GROUP_PERFINFO))) return -1;
    if (e->type == 46) { /* SampledProfile: cycles, 1000 samples a second as the profile's 1 ms */
        a->type = PERF_TYPE_HARDWARE;
        a->config = PERF_COUNT_HW_CPU_CYCLES;
        a->freq = 1;
        a->sample_freq = 1000;
        return 0;
    }
    if (e->type == 47) { /* PMC interrupt: branch instructions, every 65536 (the seed's example) */
        a->type = PERF_TYPE_HARDWARE;
        a->config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
        a->sample_period = 65536;
        return 0;
    }
    return -1;
}

static void fill_attr(struct perf_event_attr *a, uint64_t branch_type)
{
    a->size = sizeof *a;
    a->sample_type = SAMPLE_TYPE;
    a->branch_sample_type = branch_type;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC_RAW; /* the PerfCounter clock of sessions */
    a->disabled = 1;
    a->watermark = 1;
    a->wakeup_watermark = RING_PAGES * 4096 / 4;
}

static long perf_open(struct perf_event_attr *a, int pid, int cpu)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* "LBR capture: CAUSE (perf_event_open: strerror)" for errno e. */
static void cause(int e, const char *what, char *err, size_t errsize)
{
    const char *c;

    switch (e) {
    case EOPNOTSUPP: c = "this processor or virtual machine has no branch-stack sampling"; break;
    case ENOENT:
    case ENODEV:
        c = "this processor or virtual machine has no branch-stack sampling: it exposes no hardware performance "
            "counters";
        break;
    case EACCES:
    case EPERM: c = "not permitted: capturing branch stacks needs root (or kernel.perf_event_paranoid <= 0)"; break;
    case EINVAL: c = "the kernel refused these branch filters"; break;
    case ENOSYS: c = "this kernel has no perf_event_open"; break;
    default: c = "perf_event_open failed"; break;
    }
    snprintf(err, errsize, "LBR capture: %s (perf_event_open%s%s: %s)", c, what ? " of " : "", what ? what : "",
             strerror(e));
}

int etl_lbr_capture_probe(uint32_t flags, char *err, size_t errsize)
{
    struct perf_event_attr a;
    uint64_t bt;
    long fd;

    if (etl_lbr_perf_branch_type(flags, &bt, err, errsize) != 0) return ETL_FAILED;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.sample_period = 1000000;
    fill_attr(&a, bt);
    fd = perf_open(&a, 0, -1); /* this process, never enabled */
    if (fd < 0) {
        cause(errno, NULL, err, errsize);
        return ETL_FAILED;
    }
    close((int)fd);
    return ETL_OK;
}

/* One record of a ring: an LBR record from a sample, perf's count of the samples it lost. */
static void take_record(void *arg, const uint8_t *rec, size_t size)
{
    etl_lbr_capture *c = arg;
    struct perf_event_header h;

    memcpy(&h, rec, sizeof h);
    if (h.type == PERF_RECORD_SAMPLE)
        etl_lbr_write_perf_sample(c->s, c->flags, rec, size, SAMPLE_TYPE, c->branch_type);
    else if (h.type == PERF_RECORD_LOST && size >= sizeof h + 16) {
        uint64_t n;
        memcpy(&n, rec + sizeof h + 8, 8);
        c->lost += n;
    }
}

unsigned etl_perf_ring_walk(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head, uint8_t *scratch,
                            void (*fn)(void *arg, const uint8_t *rec, size_t size), void *arg)
{
    unsigned n = 0;

    while (head - *tail >= sizeof(struct perf_event_header)) {
        struct perf_event_header h;
        uint64_t at = *tail % size;
        const uint8_t *rec = data + at;

        /* The header itself may wrap only in a damaged ring (records are 8-byte aligned). */
        if (size - at < sizeof h) break;
        memcpy(&h, rec, sizeof h);
        if (h.size < sizeof h || h.size > head - *tail || h.size > size) break;
        if (h.size > size - at) {
            memcpy(scratch, rec, (size_t)(size - at));
            memcpy(scratch + (size - at), data, (size_t)(h.size - (size - at)));
            rec = scratch;
        }
        fn(arg, rec, h.size);
        *tail += h.size;
        n++;
    }
    if (*tail != head) *tail = head; /* damaged, or a partial header: give the rest up */
    return n;
}

/* The records ring r holds now, into the session. */
static void drain(etl_lbr_capture *c, struct ring *r)
{
    struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)(void *)r->map;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;

    etl_perf_ring_walk(r->map + c->page, (uint64_t)RING_PAGES * c->page, &tail, head, c->record, take_record, c);
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static void *capture_thread(void *arg)
{
    etl_lbr_capture *c = arg;
    struct pollfd *p = calloc(c->nring + 1, sizeof *p);
    int stop = 0;

    for (unsigned i = 0; p && i < c->nring; i++) p[i] = (struct pollfd){ c->rings[i].fd, POLLIN, 0 };
    if (p) p[c->nring] = (struct pollfd){ c->wake, POLLIN, 0 };
    while (!stop) {
        if (p) poll(p, c->nring + 1, 100);
        else usleep(100000);
        stop = p && (p[c->nring].revents & POLLIN);
        for (unsigned i = 0; i < c->nring; i++) drain(c, &c->rings[i]);
        if (!p) {
            uint64_t v;
            stop = read(c->wake, &v, sizeof v) == sizeof v;
        }
    }
    free(p);
    return NULL;
}

static void capture_free(etl_lbr_capture *c)
{
    for (unsigned i = 0; i < c->nring; i++) {
        if (c->rings[i].map) munmap(c->rings[i].map, (RING_PAGES + 1) * c->page);
        close(c->rings[i].fd);
    }
    if (c->wake >= 0) close(c->wake);
    free(c->rings);
    free(c);
}

/* One perf event per trigger and processor, mapped: 0, or -1 with the message in err. */
static int open_rings(etl_lbr_capture *c, const etl_lbr_config *cfg, char *err, size_t errsize)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);

    if (ncpu < 1) ncpu = 1;
    c->rings = calloc((size_t)ncpu * cfg->count, sizeof *c->rings);
    if (!c->rings) {
        snprintf(err, errsize, "LBR capture: out of memory");
        return -1;
    }
    for (unsigned t = 0; t < cfg->count; t++) {
        struct perf_event_attr a;
        char what[64];
        memset(&a, 0, sizeof a);
        if (trigger_source(&cfg->events[t], &a) != 0) {
            char g[ETL_GUID_STRING_SIZE];
            snprintf(err, errsize, "LBR capture: trigger %s:%u has no perf event with branch stacks (Linux takes them "
                     "only with hardware counter samples: the triggers 'profile' and 'pmc')",
                     etl_guid_format(&cfg->events[t].event_guid, g), cfg->events[t].type);
            return -1;
        }
        fill_attr(&a, c->branch_type);
        snprintf(what, sizeof what, "%s with a branch stack", a.config == PERF_COUNT_HW_CPU_CYCLES ? "cycles"
                                                                                                  : "branch instructions");
        for (long cpu = 0; cpu < ncpu; cpu++) {
            long fd = perf_open(&a, -1, (int)cpu);
            struct ring *r = &c->rings[c->nring];
            if (fd < 0 && errno == ENODEV) continue; /* processor offline */
            if (fd < 0) {
                cause(errno, what, err, errsize);
                return -1;
            }
            r->fd = (int)fd;
            c->nring++;
            r->map = mmap(NULL, (RING_PAGES + 1) * c->page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
            if (r->map == MAP_FAILED) {
                r->map = NULL;
                snprintf(err, errsize, "LBR capture: cannot map the perf ring of processor %ld: %s", cpu, strerror(errno));
                return -1;
            }
        }
    }
    return 0;
}

int etl_lbr_capture_start(etl_lbr_capture **out, etl_session *s, char *err, size_t errsize)
{
    etl_session_properties props;
    etl_lbr_config cfg;
    etl_lbr_capture *c;

    *out = NULL;
    etl_session_lbr_config(s, &cfg);
    if (!cfg.count) {
        snprintf(err, errsize, "LBR capture: the session has no LBR triggers (etl_session_configure_lbr)");
        return ETL_FAILED;
    }
    etl_session_properties_get(s, &props);
    if (props.clock_type != ETL_CLOCK_PERFCOUNTER) {
        snprintf(err, errsize, "LBR capture: the session's clock must be PerfCounter (perf's samples are timed "
                 "with CLOCK_MONOTONIC_RAW)");
        return ETL_FAILED;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errsize, "LBR capture: out of memory");
        return ETL_FAILED;
    }
    c->s = s;
    c->flags = cfg.flags;
    c->page = (size_t)sysconf(_SC_PAGESIZE);
    c->wake = eventfd(0, EFD_CLOEXEC);
    if (c->wake < 0) {
        snprintf(err, errsize, "LBR capture: eventfd: %s", strerror(errno));
        capture_free(c);
        return ETL_FAILED;
    }
    if (etl_lbr_perf_branch_type(cfg.flags, &c->branch_type, err, errsize) != 0 ||
        open_rings(c, &cfg, err, errsize) != 0) {
        capture_free(c);
        return ETL_FAILED;
    }
    if (pthread_create(&c->thread, NULL, capture_thread, c) != 0) {
        snprintf(err, errsize, "LBR capture: cannot start its thread");
        capture_free(c);
        return ETL_FAILED;
    }
    c->thread_started = 1;
    for (unsigned i = 0; i < c->nring; i++) ioctl(c->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
    *out = c;
    return ETL_OK;
}

uint64_t etl_lbr_capture_stop(etl_lbr_capture *c)
{
    uint64_t one = 1, lost;

    if (!c) return 0;
    for (unsigned i = 0; i < c->nring; i++) ioctl(c->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
    if (c->thread_started) {
        if (write(c->wake, &one, sizeof one) < 0) {}
        pthread_join(c->thread, NULL); /* it drains every ring once more after the wake */
    }
    lost = c->lost;
    if (lost) etl_session_add_events_lost(c->s, lost); /* LBR records perf could not take */
    capture_free(c);
    return lost;
}
