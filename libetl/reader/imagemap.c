/* SPDX-License-Identifier: MIT */
/* The image map: which image held an address of a process at a time, from Image/Process/Thread events, and the names of a Linux capture's system call numbers. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

/* What one event said, kept as fed (any order); the map is built from these on the first find. */
enum { IMG_LOAD, IMG_DCSTART, IMG_DCEND, IMG_UNLOAD };      /* image events, in the order ties sort */
enum { THR_START, THR_DCSTART, THR_DCEND, THR_END };         /* thread events */

struct image_event {
    uint32_t pid;
    uint8_t what;
    uint8_t ptr4;         /* logged by 32-bit code */
    uint64_t base, size;
    int64_t ts;
    char *file_name;      /* UTF-8, owned */
};

struct thread_event {
    uint32_t tid, pid;
    int64_t ts;
    int what;
};

struct process_end {
    uint32_t pid;
    int64_t ts;
};

/* One image of one process over [load, unload). */
struct image {
    uint32_t pid;
    uint64_t base, size;
    int64_t load, unload;
    const char *file_name, *base_name;
    int ptr4;
};

/* The images of one process: images[first, first + count), sorted by base. */
struct pid_range {
    uint32_t pid;
    size_t first, count;
    uint64_t max_size;    /* of its images: how far below an address a containing image can start */
    int all32;            /* every image event of the process came from 32-bit code */
};

struct etl_image_map {
    struct image_event *ie;
    size_t nie, cie;
    struct thread_event *te;
    size_t nte, cte;
    struct process_end *pe;
    size_t npe, cpe;
    int dirty;            /* events were added since the last build */
    int all32;            /* every image came from 32-bit code (and there is one) */
    struct image *img;
    size_t nimg;
    struct pid_range *pids;
    size_t npids;
    /* LinuxImageID SystemCalls: names[i] is system call i's ("": none); one block, owned */
    char **syscall_names;
    uint16_t nsyscall_names;
};

etl_image_map *etl_image_map_new(void)
{
    return calloc(1, sizeof(etl_image_map));
}

void etl_image_map_free(etl_image_map *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nie; i++) free(m->ie[i].file_name);
    free(m->ie);
    free(m->te);
    free(m->pe);
    free(m->img);
    free(m->pids);
    free(m->syscall_names);
    free(m);
}

/* LinuxImageID SystemCalls (Machine u16, Count u16, Count NUL-terminated names): the names
   kept, the first such event's. A name the payload ends inside is kept as far as it goes; the
   numbers after the payload's end have none. */
static int add_syscall_names(etl_image_map *m, const etl_event *ev)
{
    const uint8_t *p = ev->payload;
    uint32_t len = ev->payload ? ev->payload_len : 0, off = 4;
    unsigned count;
    char **t, *text;

    if (m->syscall_names || len < 4) return ETL_OK;
    count = etl_le16(p + 2);
    /* the pointers, then the names' bytes with a NUL after the last */
    t = malloc(count * sizeof *t + (len - 4) + 1);
    if (!t) return ETL_FAILED;
    text = (char *)(t + count);
    memcpy(text, p + 4, len - 4);
    text[len - 4] = '\0';
    for (unsigned i = 0; i < count; i++) {
        t[i] = text + (off - 4 < len - 4 ? off - 4 : len - 4);
        if (off < len) off += (uint32_t)strlen(t[i]) + 1;
    }
    m->syscall_names = t;
    m->nsyscall_names = (uint16_t)count;
    return ETL_OK;
}

const char *etl_image_map_syscall_name(const etl_image_map *m, uint64_t address)
{
    if (!m || address >= m->nsyscall_names || !m->syscall_names[address][0]) return NULL;
    return m->syscall_names[address];
}

static int add_image(etl_image_map *m, const etl_event *ev, const etl_kimage *k)
{
    struct image_event *e;
    size_t n = 4 * (size_t)k->file_name.size / (k->file_name.utf16 ? 2 : 1) + 1;
    int what;

    switch (ev->opcode) {
    case 2: what = IMG_UNLOAD; break;
    case 3: what = IMG_DCSTART; break;
    case 4: what = IMG_DCEND; break;
    default: what = IMG_LOAD; break;
    }
    if (etl_grow((void **)&m->ie, &m->cie, m->nie + 1, sizeof *m->ie) != 0) return ETL_FAILED;
    e = &m->ie[m->nie];
    e->file_name = malloc(n);
    if (!e->file_name) return ETL_FAILED;
    etl_string_to_utf8(&k->file_name, e->file_name, n);
    /* Version 0 image events carry no process id: the event header's, when it has one. */
    e->pid = ev->version >= 1 ? k->pid : (ev->has & ETL_HAS_PID_TID) ? ev->pid : 0;
    e->what = (uint8_t)what;
    e->ptr4 = ev->pointer_size == 4;
    e->base = k->image_base;
    e->size = k->image_size;
    e->ts = ev->timestamp;
    m->nie++;
    return ETL_OK;
}

int etl_image_map_add(etl_image_map *m, const etl_event *ev)
{
    etl_kernel_event k;
    unsigned group = ev->hook_id >> 8;

    if (ev->kind == ETL_KIND_CLASSIC && ev->opcode == ETL_LINUX_IMAGE_ID_SYSTEM_CALLS &&
        etl_guid_equal(&ev->provider, &etl_guid_linux_image_id))
        return add_syscall_names(m, ev);
    /* Only the Process, Thread and Image groups' hooks say anything here (most of a profile's
       events are samples and stacks: not decoded for nothing); a thread's SetName changes
       nothing of where it runs. */
    if ((group != 0x03 && group != 0x05 && group != 0x14) || ev->hook_id == ETL_HOOK_THREAD_SET_NAME) return ETL_OK;
    if (etl_kernel_decode(ev, &k) != 1) return ETL_OK;
    if (k.kclass == ETL_KCLASS_IMAGE) {
        if (add_image(m, ev, &k.u.image) != ETL_OK) return ETL_FAILED;
    } else if (k.kclass == ETL_KCLASS_THREAD) {
        if (etl_grow((void **)&m->te, &m->cte, m->nte + 1, sizeof *m->te) != 0) return ETL_FAILED;
        m->te[m->nte].tid = k.u.thread.tid;
        m->te[m->nte].pid = k.u.thread.pid;
        m->te[m->nte].ts = ev->timestamp;
        m->te[m->nte].what = ev->opcode == 1 ? THR_START : ev->opcode == 2 ? THR_END
                             : ev->opcode == 3 ? THR_DCSTART : THR_DCEND;
        m->nte++;
    } else if (k.kclass == ETL_KCLASS_PROCESS && ev->opcode == 2) {
        if (etl_grow((void **)&m->pe, &m->cpe, m->npe + 1, sizeof *m->pe) != 0) return ETL_FAILED;
        m->pe[m->npe].pid = k.u.process.pid;
        m->pe[m->npe].ts = ev->timestamp;
        m->npe++;
    } else {
        return ETL_OK;
    }
    m->dirty = 1;
    return ETL_OK;
}

/* ---- building ---- */

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }
static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_image_event(const void *pa, const void *pb)
{
    const struct image_event *a = pa, *b = pb;
    int c = cmp_u64(a->pid, b->pid);

    if (!c) c = cmp_u64(a->base, b->base);
    if (!c) c = cmp_i64(a->ts, b->ts);
    if (!c) c = (a->what > b->what) - (a->what < b->what);
    return c;
}

static int cmp_thread_event(const void *pa, const void *pb)
{
    const struct thread_event *a = pa, *b = pb;
    int c = cmp_u64(a->tid, b->tid);

    return c ? c : cmp_i64(a->ts, b->ts);
}

static int cmp_process_end(const void *pa, const void *pb)
{
    const struct process_end *a = pa, *b = pb;
    int c = cmp_u64(a->pid, b->pid);

    return c ? c : cmp_i64(a->ts, b->ts);
}

static const char *base_name(const char *path)
{
    const char *b = path;

    for (const char *p = path; *p; p++)
        if (*p == '\\' || *p == '/') b = p + 1;
    return b;
}

/* The first process end of pid at or after ts, or INT64_MAX (binary search over m->pe). */
static int64_t process_end_after(const etl_image_map *m, uint32_t pid, int64_t ts)
{
    size_t lo = 0, hi = m->npe;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->pe[mid].pid < pid || (m->pe[mid].pid == pid && m->pe[mid].ts < ts)) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->npe && m->pe[lo].pid == pid ? m->pe[lo].ts : INT64_MAX;
}

/*
 * The images of one (pid, base), from its events in time order: Load opens an image at its
 * time; DCStart opens one loaded before the trace began; DCEnd keeps the open one when it is the
 * same image (same size) and otherwise opens one loaded since the previous one ended (or before
 * the trace); Unload ends the open one (or one loaded since the previous ended). An image still
 * open at the end stays loaded (INT64_MAX).
 */
static void build_group(etl_image_map *m, size_t first, size_t end)
{
    struct image *open = NULL;
    int64_t since = INT64_MIN; /* when the previous image of this address ended */

    for (size_t i = first; i < end; i++) {
        const struct image_event *e = &m->ie[i];
        int same = open && open->size == e->size;

        if (open && (e->what == IMG_LOAD || e->what == IMG_UNLOAD || !same)) {
            open->unload = e->ts;
            since = e->ts;
            open = NULL;
            if (e->what == IMG_UNLOAD) continue;
        } else if (open) {
            continue; /* DCStart or DCEnd of the image already open: the same one */
        }
        open = &m->img[m->nimg++];
        open->pid = e->pid;
        open->base = e->base;
        open->size = e->size;
        open->load = e->what == IMG_LOAD ? e->ts : e->what == IMG_DCSTART ? INT64_MIN : since;
        open->unload = INT64_MAX;
        open->file_name = e->file_name;
        open->base_name = base_name(e->file_name);
        open->ptr4 = e->ptr4;
        if (e->what == IMG_UNLOAD) {
            open->unload = e->ts;
            since = e->ts;
            open = NULL;
        }
    }
}

static int build(etl_image_map *m)
{
    size_t i, j;

    free(m->img);
    free(m->pids);
    m->img = NULL;
    m->pids = NULL;
    m->nimg = m->npids = 0;
    if (m->nie) qsort(m->ie, m->nie, sizeof *m->ie, cmp_image_event);
    if (m->nte) qsort(m->te, m->nte, sizeof *m->te, cmp_thread_event);
    if (m->npe) qsort(m->pe, m->npe, sizeof *m->pe, cmp_process_end);
    if (m->nie) {
        m->img = malloc(m->nie * sizeof *m->img);
        if (!m->img) return ETL_FAILED;
    }
    for (i = 0; i < m->nie; i = j) {
        for (j = i + 1; j < m->nie && m->ie[j].pid == m->ie[i].pid && m->ie[j].base == m->ie[i].base; j++) {}
        build_group(m, i, j);
    }
    /* A process that ends unloads its images. */
    for (i = 0; i < m->nimg; i++) {
        int64_t end = process_end_after(m, m->img[i].pid, m->img[i].load);
        if (end < m->img[i].unload) m->img[i].unload = end;
    }
    /* The processes' ranges: the images are in (pid, base, time) order already. */
    m->pids = malloc((m->nimg ? m->nimg : 1) * sizeof *m->pids);
    if (!m->pids) return ETL_FAILED;
    for (i = 0; i < m->nimg; i = j) {
        struct pid_range *r = &m->pids[m->npids++];
        r->pid = m->img[i].pid;
        r->first = i;
        r->max_size = 0;
        r->all32 = 1;
        for (j = i; j < m->nimg && m->img[j].pid == r->pid; j++) {
            if (m->img[j].size > r->max_size) r->max_size = m->img[j].size;
            if (!m->img[j].ptr4) r->all32 = 0;
        }
        r->count = j - i;
    }
    m->all32 = m->npids > 0;
    for (i = 0; i < m->npids; i++)
        if (!m->pids[i].all32) m->all32 = 0;
    m->dirty = 0;
    return ETL_OK;
}

static int ensure_built(etl_image_map *m)
{
    return m->dirty ? build(m) : ETL_OK;
}

static const struct pid_range *find_pid(const etl_image_map *m, uint32_t pid)
{
    size_t lo = 0, hi = m->npids;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->pids[mid].pid < pid) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->npids && m->pids[lo].pid == pid ? &m->pids[lo] : NULL;
}

/*
 * The image of one process that holds addr at ts: a binary search for the last image based at
 * or below addr, then a walk down through the images based within max_size below addr (those
 * that can reach it): a few, not all the process's images.
 */
static const struct image *find_in(const etl_image_map *m, const struct pid_range *r, uint64_t addr, int64_t ts)
{
    size_t lo = 0, hi = r->count;
    const struct image *img = m->img + r->first;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img[mid].base <= addr) lo = mid + 1;
        else hi = mid;
    }
    while (lo-- > 0) {
        const struct image *g = &img[lo];
        if (addr - g->base >= r->max_size) break;
        if (addr - g->base < g->size && g->load <= ts && ts < g->unload) return g;
    }
    return NULL;
}

/* Kernel addresses: the high half of a 64-bit address space, or the upper 2 GB of a 32-bit one
   when the process's images (or, for a process without images, all images) came from 32-bit code. */
static int kernel_address(const etl_image_map *m, const struct pid_range *r, uint64_t addr)
{
    if (addr >= 0xFFFF800000000000ull) return 1;
    if (addr < 0x80000000ull || addr > 0xFFFFFFFFull) return 0;
    return r ? r->all32 : m->all32;
}

int etl_image_map_find(etl_image_map *m, uint32_t pid, uint64_t addr, int64_t ts, etl_image_info *out)
{
    const struct pid_range *r;
    const struct image *g = NULL;

    if (ensure_built(m) != ETL_OK) return 0;
    r = find_pid(m, pid);
    if (kernel_address(m, r, addr)) {
        const struct pid_range *k = find_pid(m, 0);
        if (k) g = find_in(m, k, addr, ts);
        if (!g && (k = find_pid(m, 4)) != NULL) g = find_in(m, k, addr, ts);
    }
    if (!g && r) g = find_in(m, r, addr, ts);
    if (!g) return 0;
    out->base = g->base;
    out->size = g->size;
    out->pid = g->pid;
    out->file_name = g->file_name;
    out->base_name = g->base_name;
    out->load_timestamp = g->load;
    out->unload_timestamp = g->unload;
    return 1;
}

/*
 * The thread's last event at or before ts names its process, unless it is the thread's End
 * before ts. Before its first event, a thread that was already running then (its first event is
 * not a Start) belongs to that event's process.
 */
int64_t etl_image_map_thread_pid(etl_image_map *m, uint32_t tid, int64_t ts)
{
    size_t lo = 0, hi;
    const struct thread_event *e;

    if (ensure_built(m) != ETL_OK) return -1;
    hi = m->nte;
    while (lo < hi) { /* first event after (tid, ts) */
        size_t mid = lo + (hi - lo) / 2;
        if (m->te[mid].tid < tid || (m->te[mid].tid == tid && m->te[mid].ts <= ts)) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && m->te[lo - 1].tid == tid) {
        e = &m->te[lo - 1];
        return e->what == THR_END && e->ts < ts ? -1 : (int64_t)e->pid;
    }
    if (lo < m->nte && m->te[lo].tid == tid && m->te[lo].what != THR_START) return m->te[lo].pid;
    return -1;
}
