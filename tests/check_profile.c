/* SPDX-License-Identifier: MIT */
/* Unit tests of samples paired with their stacks (reader/stacks.c) and of the profile and its folded and pprof writers (output/profile.c, output/pprof.c), on synthetic traces. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "etl.h"
#include "output/profile.pb-c.h"
#include "check_run.h"
#include "synth.h"

#define HI 0xFFFFF80000000000ull /* a Windows x64 kernel address */

/* ---- a trace being built: records on processors, time given by the caller */

struct trace {
    struct synth *s;
    uint8_t *file;
    size_t size;
};

static void trace_begin(struct trace *t)
{
    struct synth_options o;
    memset(&o, 0, sizeof o);
    o.pointer_size = 8;
    o.cpus = 2;
    memset(t, 0, sizeof *t);
    t->s = synth_new(&o);
    ck_assert_ptr_nonnull(t->s);
}

static void add(struct trace *t, unsigned cpu, const uint8_t *rec, uint32_t n)
{
    ck_assert_int_eq(synth_add(t->s, cpu, rec, n), 0);
}

static void perfinfo(struct trace *t, unsigned cpu, int64_t ts, uint16_t hook, const struct synth_payload *p)
{
    uint8_t b[4096];
    uint32_t n = synth_perfinfo(b, 1, ts, hook, 2, NULL, NULL, 0, p->b, p->n);
    add(t, cpu, b, n);
}

static void sample(struct trace *t, unsigned cpu, int64_t ts, uint32_t tid, uint64_t ip, uint16_t count)
{
    struct synth_payload p;
    sp_init(&p, 8); spp(&p, ip); sp32(&p, tid); sp16(&p, count); sp8(&p, 0); sp8(&p, 0);
    perfinfo(t, cpu, ts, 0x0F2E, &p);
}

static void stack(struct trace *t, unsigned cpu, int64_t ts, int64_t event_ts, uint32_t pid, uint32_t tid,
                  const uint64_t *frames, unsigned n)
{
    struct synth_payload p;
    sp_init(&p, 8); sp64(&p, (uint64_t)event_ts); sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 0; i < n; i++) spp(&p, frames[i]);
    perfinfo(t, cpu, ts, 0x1820, &p);
}

static void key_ref(struct trace *t, unsigned cpu, int64_t ts, int64_t event_ts, uint32_t pid, uint32_t tid,
                    int kernel, uint64_t key)
{
    struct synth_payload p;
    sp_init(&p, 8); sp64(&p, (uint64_t)event_ts); sp32(&p, pid); sp32(&p, tid); spp(&p, key);
    perfinfo(t, cpu, ts, kernel ? 0x1825 : 0x1826, &p);
}

static void key_def(struct trace *t, unsigned cpu, int64_t ts, int rundown, uint64_t key, const uint64_t *frames,
                    unsigned n)
{
    struct synth_payload p;
    sp_init(&p, 8); spp(&p, key);
    for (unsigned i = 0; i < n; i++) spp(&p, frames[i]);
    perfinfo(t, cpu, ts, rundown ? 0x1824 : 0x1823, &p);
}

/* Process DCStart (version 1: PageDirectoryBase, pid, ppid, session, exit status, SID, name). */
static void process(struct trace *t, int64_t ts, uint32_t pid, const char *name)
{
    struct synth_payload p;
    uint8_t b[4096];
    sp_init(&p, 8); spp(&p, 0x5000); sp32(&p, pid); sp32(&p, 4); sp32(&p, 1); sp32(&p, 0); sp32(&p, 0);
    sp_str8(&p, name);
    add(t, 0, b, synth_system(b, 1, 0, ts, 0x0303, 1, 0, 0, p.b, p.n));
}

/* Thread DCStart (version 2). */
static void thread(struct trace *t, int64_t ts, uint32_t pid, uint32_t tid)
{
    struct synth_payload p;
    uint8_t b[4096];
    sp_init(&p, 8); sp32(&p, pid); sp32(&p, tid);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0);
    add(t, 0, b, synth_system(b, 1, 0, ts, 0x0503, 2, pid, tid, p.b, p.n));
}

/* Image DCStart (version 2) of process pid. */
static void image(struct trace *t, int64_t ts, uint32_t pid, uint64_t base, uint64_t size, const char *path)
{
    struct synth_payload p;
    uint8_t b[4096];
    sp_init(&p, 8); spp(&p, base); spp(&p, size); sp32(&p, pid); sp32(&p, 0); sp32(&p, 0);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, base); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, path);
    add(t, 0, b, synth_system(b, 1, 0, ts, 0x1403, 2, pid, 0, p.b, p.n)); /* Image/DCStart */
}

static etl_reader *trace_open(struct trace *t)
{
    etl_reader *r = NULL;
    t->file = synth_finish(t->s, &t->size);
    ck_assert_ptr_nonnull(t->file);
    ck_assert_int_eq(etl_reader_open_memory(&r, t->file, t->size, NULL), ETL_OK);
    return r;
}

/* The pairs of the trace (every event fed to a pairer of flags), in *pairs (frames copied),
   sorted by time and processor (the reader merges processors' buffers, not their events). */
struct pair { etl_stack_pair p; uint64_t frames[ETL_STACK_MAX_FRAMES]; };

static int cmp_pair(const void *a, const void *b)
{
    const etl_stack_pair *x = &((const struct pair *)a)->p, *y = &((const struct pair *)b)->p;
    if (x->timestamp != y->timestamp) return x->timestamp < y->timestamp ? -1 : 1;
    return (int)x->cpu - (int)y->cpu;
}

static size_t pair_all(struct trace *t, unsigned flags, struct pair *out, size_t max, etl_stack_pairer_stats *st)
{
    etl_reader *r = trace_open(t);
    etl_stack_pairer *sp = etl_stack_pairer_new(flags);
    etl_event ev;
    etl_stack_pair p;
    size_t n = 0;

    ck_assert_ptr_nonnull(sp);
    while (etl_reader_next(r, &ev) == ETL_OK) ck_assert_int_eq(etl_stack_pairer_add(sp, &ev), ETL_OK);
    while (etl_stack_pairer_next(sp, &p) == ETL_OK) {
        ck_assert_uint_lt(n, max);
        out[n].p = p;
        memcpy(out[n].frames, p.frames, p.frame_count * sizeof *p.frames);
        n++;
    }
    /* feeding after reading has begun is refused */
    ck_assert_int_eq(etl_stack_pairer_add(sp, &ev), ETL_FAILED);
    etl_stack_pairer_stats_get(sp, st);
    etl_stack_pairer_free(sp);
    if (n) qsort(out, n, sizeof *out, cmp_pair);
    etl_reader_close(r);
    free(t->file);
    return n;
}

static void frames_are(const struct pair *p, const uint64_t *want, unsigned n)
{
    ck_assert_uint_eq(p->p.frame_count, n);
    for (unsigned i = 0; i < n; i++) ck_assert_uint_eq(p->frames[i], want[i]);
}

/* ---- pairing */

START_TEST(test_halves_joined_kernel_first)
{
    static struct pair pairs[4];
    struct trace t;
    etl_stack_pairer_stats st;
    const uint64_t kern[] = { HI + 0x10, HI + 0x20 }, user[] = { 0x401010, 0x402020 };
    const uint64_t want[] = { HI + 0x10, HI + 0x20, 0x401010, 0x402020 };

    trace_begin(&t);
    /* sample 1: kernel half right after it, the user half later (after another sample) */
    sample(&t, 0, 1000, 7, HI + 0x10, 1);
    stack(&t, 0, 1000, 1000, 100, 7, kern, 2);
    sample(&t, 1, 1100, 8, 0x401010, 1);
    stack(&t, 0, 1200, 1000, 100, 7, user, 2);
    /* sample 3: the user half first, the kernel half after it */
    sample(&t, 0, 1300, 7, HI + 0x10, 1);
    stack(&t, 0, 1300, 1300, 100, 7, user, 2);
    stack(&t, 0, 1301, 1300, 100, 7, kern, 2);
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 4, &st), 3);
    frames_are(&pairs[0], want, 4);
    ck_assert_uint_eq(pairs[0].p.pid, 100);
    ck_assert_uint_eq(pairs[0].p.tid, 7);
    ck_assert_int_eq(pairs[0].p.has_stack, 1);
    /* sample 2 had no stack: its instruction pointer alone, no pid known */
    ck_assert_uint_eq(pairs[1].p.tid, 8);
    ck_assert_int_eq(pairs[1].p.has_stack, 0);
    ck_assert_uint_eq(pairs[1].p.frame_count, 1);
    ck_assert_uint_eq(pairs[1].frames[0], 0x401010);
    ck_assert_uint_eq(pairs[1].p.pid, UINT32_MAX);
    frames_are(&pairs[2], want, 4);
    ck_assert_uint_eq(st.samples, 3);
    ck_assert_uint_eq(st.samples_with_stack, 2);
    ck_assert_uint_eq(st.stacks, 4);
    ck_assert_uint_eq(st.stacks_unpaired, 0);
}
END_TEST

/* Halves that come after the processor's next samples, or on another processor, still meet
   their sample (the pairer keeps each processor's last entry at hand and puts the others in its
   table only while they may still get a half). */
START_TEST(test_halves_after_other_samples)
{
    static struct pair pairs[8];
    struct trace t;
    etl_stack_pairer_stats st;
    const uint64_t kern[] = { HI + 0x10, HI + 0x20 }, user[] = { 0x401010, 0x402020 };
    const uint64_t want[] = { HI + 0x10, HI + 0x20, 0x401010, 0x402020 };

    trace_begin(&t);
    /* A (kernel mode): its user half first; B on the same processor; then A's kernel half */
    sample(&t, 0, 1000, 7, HI + 0x10, 1);
    stack(&t, 0, 1000, 1000, 100, 7, user, 2);
    sample(&t, 0, 1100, 8, 0x401010, 1);
    stack(&t, 0, 1100, 1100, 100, 8, user, 2);
    stack(&t, 0, 1150, 1000, 100, 7, kern, 2);
    /* C (kernel mode): its kernel half; D and E on its processor; C's user half on the other */
    sample(&t, 0, 1200, 9, HI + 0x10, 1);
    stack(&t, 0, 1200, 1200, 100, 9, kern, 2);
    sample(&t, 0, 1300, 8, 0x401010, 1);
    sample(&t, 0, 1400, 8, 0x401010, 1);
    stack(&t, 1, 1450, 1200, 100, 9, user, 2);
    /* F: its stack logged on the other processor while F is still its processor's last */
    sample(&t, 0, 1500, 10, 0x401010, 1);
    stack(&t, 1, 1500, 1500, 100, 10, user, 2);
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 8, &st), 6);
    frames_are(&pairs[0], want, 4);     /* A */
    frames_are(&pairs[1], user, 2);     /* B */
    frames_are(&pairs[2], want, 4);     /* C */
    ck_assert_int_eq(pairs[3].p.has_stack, 0); /* D */
    ck_assert_int_eq(pairs[4].p.has_stack, 0); /* E */
    frames_are(&pairs[5], user, 2);     /* F */
    ck_assert_uint_eq(st.stacks, 6);
    ck_assert_uint_eq(st.stacks_unpaired, 0);
}
END_TEST

START_TEST(test_stack_before_sample_and_unpaired)
{
    static struct pair pairs[4];
    struct trace t;
    etl_stack_pairer_stats st;
    const uint64_t f[] = { 0x401000, 0x402000, 0x403000 };

    trace_begin(&t);
    /* the stack comes first (another processor's buffer, an earlier record time) */
    stack(&t, 1, 1990, 2000, 100, 7, f, 3);
    sample(&t, 0, 2000, 7, 0x401000, 3);
    /* a stack whose sample never comes; one of another thread at the same time */
    stack(&t, 0, 2001, 2000, 100, 9, f, 1);
    stack(&t, 0, 2500, 2400, 100, 7, f, 2);
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 4, &st), 1);
    frames_are(&pairs[0], f, 3);
    ck_assert_uint_eq(pairs[0].p.count, 3);
    ck_assert_uint_eq(pairs[0].p.timestamp, 2000);
    ck_assert_uint_eq(st.stacks_unpaired, 2);
}
END_TEST

START_TEST(test_idle_threads_by_processor)
{
    static struct pair pairs[4];
    struct trace t;
    etl_stack_pairer_stats st;
    const uint64_t a[] = { HI + 0xA }, b[] = { HI + 0xB };

    trace_begin(&t);
    /* thread 0 is every processor's idle thread: the same timestamp on two processors */
    sample(&t, 0, 3000, 0, HI + 0xA, 1);
    sample(&t, 1, 3000, 0, HI + 0xB, 1);
    stack(&t, 0, 3000, 3000, 0, 0, a, 1);
    stack(&t, 1, 3000, 3000, 0, 0, b, 1);
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 4, &st), 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(pairs[i].p.frame_count, 1);
        ck_assert_uint_eq(pairs[i].frames[0], pairs[i].p.cpu == 0 ? HI + 0xA : HI + 0xB);
    }
}
END_TEST

START_TEST(test_stack_keys)
{
    static struct pair pairs[4];
    struct trace t;
    etl_stack_pairer_stats st;
    const uint64_t k1[] = { HI + 0x100, HI + 0x200 }, k1b[] = { HI + 0x900 }, u1[] = { 0x401000, 0x402000 };

    trace_begin(&t);
    /* a rundown the trace begins with defines key 0x60, which sample D uses later */
    key_def(&t, 0, 3900, 1, 0x60, u1 + 1, 1);
    /* sample A: kernel key 0x51, user key 0x52 */
    sample(&t, 0, 4000, 7, HI + 0x100, 1);
    key_ref(&t, 0, 4000, 4000, 100, 7, 1, 0x51);
    key_ref(&t, 0, 4001, 4000, 100, 7, 0, 0x52);
    /* key 0x51 leaves the cache (its delete defines it), then names another stack */
    key_def(&t, 0, 4100, 0, 0x51, k1, 2);
    sample(&t, 0, 4200, 7, HI + 0x900, 1);
    key_ref(&t, 0, 4200, 4200, 100, 7, 1, 0x51);
    key_ref(&t, 0, 4201, 4200, 100, 7, 0, 0x52);
    /* sample C: a key never defined */
    sample(&t, 0, 4300, 7, 0x405000, 1);
    key_ref(&t, 0, 4300, 4300, 100, 7, 0, 0x77);
    sample(&t, 0, 4350, 7, 0x402000, 1);
    key_ref(&t, 0, 4350, 4350, 100, 7, 0, 0x60);
    /* the rundown at the end defines what is still cached */
    key_def(&t, 0, 4400, 1, 0x51, k1b, 1);
    key_def(&t, 0, 4401, 1, 0x52, u1, 2);
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 4, &st), 4);
    {
        const uint64_t want_d[] = { 0x402000 };
        frames_are(&pairs[3], want_d, 1);
        ck_assert_int_eq(pairs[3].p.has_stack, 1);
    }
    {
        const uint64_t want_a[] = { HI + 0x100, HI + 0x200, 0x401000, 0x402000 };
        const uint64_t want_b[] = { HI + 0x900, 0x401000, 0x402000 };
        frames_are(&pairs[0], want_a, 4);
        frames_are(&pairs[1], want_b, 3);
    }
    ck_assert_int_eq(pairs[2].p.has_stack, 0);
    ck_assert_uint_eq(pairs[2].frames[0], 0x405000);
    ck_assert_uint_eq(st.key_refs_undefined, 1);
}
END_TEST

START_TEST(test_hostile_frame_counts)
{
    static struct pair pairs[2];
    static uint64_t f[250];
    struct trace t;
    etl_stack_pairer_stats st;
    uint8_t b[512];

    for (unsigned i = 0; i < 250; i++) f[i] = 0x400000 + i;
    trace_begin(&t);
    sample(&t, 0, 5000, 7, 0x400000, 1);
    /* 20 halves of 250 frames: 5000 frames for one sample, more than a pair holds */
    for (int i = 0; i < 20; i++) stack(&t, 0, 5000 + i, 5000, 100, 7, f, 250);
    /* a stack cut inside a frame (not whole words): malformed, ignored */
    {
        struct synth_payload p;
        sp_init(&p, 8); sp64(&p, 5000); sp32(&p, 100); sp32(&p, 7); sp32(&p, 0x1234);
        add(&t, 0, b, synth_perfinfo(b, 1, 5100, 0x1820, 2, NULL, NULL, 0, p.b, p.n));
    }
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 2, &st), 1);
    ck_assert_uint_eq(pairs[0].p.frame_count, ETL_STACK_MAX_FRAMES);
    ck_assert_uint_eq(st.frames_cut, 5000 - ETL_STACK_MAX_FRAMES);
    ck_assert_uint_eq(st.stacks, 20);
    ck_assert_uint_eq(pairs[0].frames[ETL_STACK_MAX_FRAMES - 1], f[(ETL_STACK_MAX_FRAMES - 1) % 250]);
}
END_TEST

START_TEST(test_ext_stacks)
{
    static struct pair pairs[2];
    struct trace t;
    etl_stack_pairer_stats st;
    etl_guid g = { 0x11111111, 0x2222, 0x3333, { 1, 2, 3, 4, 5, 6, 7, 8 } };
    uint8_t item[64], data[32], rec[256];
    uint32_t n;

    memset(data, 0, 8); /* MatchId */
    for (int i = 0; i < 3; i++) {
        uint64_t a = 0x7000 + 0x10 * (uint64_t)i;
        memcpy(data + 8 + 8 * i, &a, 8);
    }
    n = synth_ext_item(item, ETL_EXT_STACK_TRACE64, data, 32, 0);
    trace_begin(&t);
    add(&t, 0, rec, synth_event_header(rec, 1, 6000, &g, 5, 0, 4, 0, 0, 0, 300, 301, item, n, "x", 1));
    /* without ETL_STACKS_EVENTS they are not pairs */
    ck_assert_uint_eq(pair_all(&t, 0, pairs, 2, &st), 0);
    trace_begin(&t);
    add(&t, 0, rec, synth_event_header(rec, 1, 6000, &g, 5, 0, 4, 0, 0, 0, 300, 301, item, n, "x", 1));
    ck_assert_uint_eq(pair_all(&t, ETL_STACKS_EVENTS, pairs, 2, &st), 1);
    {
        const uint64_t want[] = { 0x7000, 0x7010, 0x7020 };
        frames_are(&pairs[0], want, 3);
    }
    ck_assert_int_eq(pairs[0].p.from_ext, 1);
    ck_assert_uint_eq(pairs[0].p.ext_event_id, 5);
    ck_assert_uint_eq(pairs[0].p.pid, 300);
    ck_assert_uint_eq(pairs[0].p.tid, 301);
}
END_TEST

START_TEST(test_owners)
{
    etl_stack_owners *o = etl_stack_owners_new();
    etl_event ev;
    etl_kernel_event ke;
    int64_t owner;

    ck_assert_ptr_nonnull(o);
    memset(&ev, 0, sizeof ev);
    memset(&ke, 0, sizeof ke);
    ev.cpu = 1;
    ev.timestamp = 700;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, NULL, 11, &owner), ETL_OK);
    ck_assert_int_eq(owner, 0);
    /* a stack of that timestamp on that processor belongs to it; on another, to nothing */
    ke.kclass = ETL_KCLASS_STACK;
    ke.u.stack.event_timestamp = 700;
    ev.timestamp = 701;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 12, &owner), ETL_OK);
    ck_assert_int_eq(owner, 11);
    ke.kclass = ETL_KCLASS_STACK_KEY;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 13, &owner), ETL_OK);
    ck_assert_int_eq(owner, 11);
    ev.cpu = 0;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 14, &owner), ETL_OK);
    ck_assert_int_eq(owner, 0);
    /* a key definition owns nothing and is owned by nothing; another event takes over */
    ev.cpu = 1;
    ke.kclass = ETL_KCLASS_STACK_KEY_DEF;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 15, &owner), ETL_OK);
    ck_assert_int_eq(owner, 0);
    ke.kclass = ETL_KCLASS_STACK;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 16, &owner), ETL_OK);
    ck_assert_int_eq(owner, 11);
    ev.timestamp = 800;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, NULL, 17, &owner), ETL_OK);
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 18, &owner), ETL_OK);
    ck_assert_int_eq(owner, 0); /* event timestamp 700, the last event's 800 */
    /* a processor number far past the others */
    ev.cpu = 60000;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, NULL, 19, &owner), ETL_OK);
    ke.u.stack.event_timestamp = 800;
    ck_assert_int_eq(etl_stack_owners_add(o, &ev, &ke, 20, &owner), ETL_OK);
    ck_assert_int_eq(owner, 19);
    etl_stack_owners_free(o);
}
END_TEST

/* ---- the profile */

/* The profile trace: process "app" (pid 100, image a.exe at 0x400000, thread 7) and "tool;x\n"
   (pid 200, thread 9, no image), the kernel (ntoskrnl.exe) in process 0. */
static void profile_trace(struct trace *t)
{
    const uint64_t kern[] = { HI + 0x1010, HI + 0x2020 };
    const uint64_t user1[] = { 0x401100, 0x402200 }, user2[] = { 0x401300, 0x402200 };
    const uint64_t none[] = { 0x9000, 0x9100 };

    trace_begin(t);
    process(t, 100, 100, "app");
    process(t, 101, 200, "tool;x\n");
    thread(t, 102, 100, 7);
    thread(t, 103, 200, 9);
    image(t, 104, 100, 0x400000, 0x10000, "\\Device\\HarddiskVolume2\\a.exe");
    image(t, 105, 0, HI, 0x100000, "\\SystemRoot\\system32\\ntoskrnl.exe");
    /* one second = 10 000 000 ticks of the synthetic clock (start timestamp 1 000 000) */
    for (int i = 0; i < 3; i++) { /* app: kernel + user stack, 3 samples at 0.1 s, 0.2 s, 0.3 s */
        int64_t ts = 1000000 + 1000000 * (i + 1);
        sample(t, 0, ts, 7, HI + 0x1010, 1);
        stack(t, 0, ts, ts, 100, 7, kern, 2);
        stack(t, 0, ts + 1, ts, 100, 7, user1, 2);
    }
    /* app at 1.5 s: another user stack, count 2 */
    sample(t, 0, 16000000, 7, 0x401300, 2);
    stack(t, 0, 16000000, 16000000, 100, 7, user2, 2);
    /* tool at 2.5 s: no image, a stack; and one without a stack */
    sample(t, 1, 26000000, 9, 0x9000, 1);
    stack(t, 1, 26000000, 26000000, 200, 9, none, 2);
    sample(t, 1, 26000001, 9, 0x9050, 1);
}

static etl_profile *profile_of(const etl_profile_options *o)
{
    struct trace t;
    etl_profile *p = NULL;
    etl_reader *r;
    etl_symbolizer_options so;
    etl_profile_options po;

    memset(&so, 0, sizeof so);
    so.flags = ETL_SYMBOLS_NO_SYSTEM_PATHS | ETL_SYMBOLS_NO_PDB;
    if (o) po = *o;
    else memset(&po, 0, sizeof po);
    po.symbols = &so;
    profile_trace(&t);
    r = trace_open(&t);
    ck_assert_int_eq(etl_profile_new(&p, &po), ETL_OK);
    ck_assert_int_eq(etl_profile_add_trace(p, r), ETL_OK);
    etl_reader_close(r);
    free(t.file);
    return p;
}

static char *folded(const etl_profile *p)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(etl_profile_write_folded(f, p), ETL_OK);
    fclose(f);
    return text;
}

START_TEST(test_folded_exact)
{
    etl_profile *p = profile_of(NULL);
    etl_profile_stats st;
    char *text = folded(p);

    /* Root first; return addresses named by their own offset; ';' and the newline of the
       process's name replaced; no image: the address. */
    ck_assert_str_eq(text,
                     "app;a.exe+0x2200;a.exe+0x1100;ntoskrnl.exe+0x2020;ntoskrnl.exe+0x1010 3\n"
                     "app;a.exe+0x2200;a.exe+0x1300 2\n"
                     "tool:x ;0x9050 1\n"
                     "tool:x ;0x9100;0x9000 1\n");
    etl_profile_stats_get(p, &st);
    ck_assert_uint_eq(st.sample_events, 6);
    ck_assert_uint_eq(st.samples, 7);
    ck_assert_uint_eq(st.samples_with_stack, 6);
    ck_assert_uint_eq(st.stacks, 4);
    ck_assert_uint_eq(st.period_ns, 1000000);
    ck_assert_uint_eq(st.weight_ns, 7 * 1000000ull);
    ck_assert_int_eq(st.duration_ns, 2500000000 + 100 - 100000000); /* 0.1 s to 2.5 s + 1 tick */
    /* the symbolizer's own counts: one lookup a frame, none named (no symbol files here) */
    ck_assert_uint_gt(st.frames, 0);
    ck_assert_uint_eq(st.symbol_lookups, st.frames);
    ck_assert_uint_le(st.symbol_cache_hits, st.symbol_lookups);
    ck_assert_uint_eq(st.symbol_resolved, 0);
    free(text);
    etl_profile_free(p);
}
END_TEST

START_TEST(test_filters)
{
    etl_profile_options o;
    const char *by_name[] = { "APP" }, *by_pid[] = { "200" };
    const uint32_t tids[] = { 7 };
    etl_profile *p;
    char *text;

    memset(&o, 0, sizeof o);
    o.processes = by_name;
    o.nprocesses = 1;
    p = profile_of(&o);
    text = folded(p);
    ck_assert_str_eq(text, "app;a.exe+0x2200;a.exe+0x1100;ntoskrnl.exe+0x2020;ntoskrnl.exe+0x1010 3\n"
                           "app;a.exe+0x2200;a.exe+0x1300 2\n");
    free(text);
    etl_profile_free(p);

    o.processes = by_pid;
    p = profile_of(&o);
    text = folded(p);
    ck_assert_str_eq(text, "tool:x ;0x9050 1\ntool:x ;0x9100;0x9000 1\n");
    free(text);
    etl_profile_free(p);

    memset(&o, 0, sizeof o);
    o.threads = tids;
    o.nthreads = 1;
    o.has_time_range = 1;
    o.time_from_ns = 150000000; /* from 0.15 s up to 1.5 s: two of the first three samples */
    o.time_to_ns = 1500000000;
    p = profile_of(&o);
    text = folded(p);
    ck_assert_str_eq(text, "app;a.exe+0x2200;a.exe+0x1100;ntoskrnl.exe+0x2020;ntoskrnl.exe+0x1010 2\n");
    free(text);
    etl_profile_free(p);
}
END_TEST

START_TEST(test_stack_get)
{
    etl_profile *p = profile_of(NULL);
    etl_profile_stack s;
    const etl_profile_frame *f;

    ck_assert_uint_eq(etl_profile_stack_count(p), 4);
    ck_assert_int_eq(etl_profile_stack_get(p, 0, &s), ETL_OK);
    ck_assert_str_eq(s.process, "app");
    ck_assert_uint_eq(s.pid, 100);
    ck_assert_uint_eq(s.tid, 7);
    ck_assert_uint_eq(s.samples, 3);
    ck_assert_uint_eq(s.frame_count, 4);
    f = etl_profile_frame_get(p, s.frames[0]);
    ck_assert_str_eq(f->name, "a.exe+0x2200");
    ck_assert_str_eq(f->image, "a.exe");
    ck_assert_ptr_null(f->function);
    f = etl_profile_frame_get(p, s.frames[3]);
    ck_assert_str_eq(f->name, "ntoskrnl.exe+0x1010");
    ck_assert_int_eq(etl_profile_stack_get(p, 4, &s), ETL_FAILED);
    ck_assert_ptr_null(etl_profile_frame_get(p, 1000));
    etl_profile_free(p);
}
END_TEST

/* The gunzipped bytes of data. */
static uint8_t *gunzip(const uint8_t *data, size_t size, size_t *out_size)
{
    z_stream z;
    size_t cap = 1 << 20;
    uint8_t *out = malloc(cap);

    ck_assert_ptr_nonnull(out);
    memset(&z, 0, sizeof z);
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (uint8_t *)data;
    z.avail_in = (uInt)size;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    *out_size = cap - z.avail_out;
    inflateEnd(&z);
    return out;
}

START_TEST(test_pprof_round_trip)
{
    etl_profile *p = profile_of(NULL);
    etl_profile_stats st;
    char *data = NULL;
    size_t size = 0, raw_size;
    FILE *f = open_memstream(&data, &size);
    uint8_t *raw;
    Perftools__Profiles__Profile *pb;
    int64_t total = 0, weight = 0;
    int saw_app = 0;

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(etl_profile_write_pprof(f, p), ETL_OK);
    fclose(f);
    ck_assert_uint_gt(size, 20);
    ck_assert_uint_eq((uint8_t)data[0], 0x1f); /* gzip */
    raw = gunzip((const uint8_t *)data, size, &raw_size);
    pb = perftools__profiles__profile__unpack(NULL, raw_size, raw);
    ck_assert_ptr_nonnull(pb);
    etl_profile_stats_get(p, &st);
    ck_assert_uint_eq(pb->n_sample_type, 2);
    ck_assert_str_eq(pb->string_table[0], "");
    ck_assert_str_eq(pb->string_table[pb->sample_type[0]->type], "samples");
    ck_assert_str_eq(pb->string_table[pb->sample_type[0]->unit], "count");
    ck_assert_str_eq(pb->string_table[pb->sample_type[1]->type], "cpu");
    ck_assert_str_eq(pb->string_table[pb->sample_type[1]->unit], "nanoseconds");
    ck_assert_int_eq(pb->period, 1000000);
    ck_assert_int_eq(pb->duration_nanos, st.duration_ns);
    ck_assert_uint_eq(pb->n_sample, 4);
    for (size_t i = 0; i < pb->n_sample; i++) {
        const Perftools__Profiles__Sample *s = pb->sample[i];
        ck_assert_uint_eq(s->n_value, 2);
        total += s->value[0];
        weight += s->value[1];
        /* every location id names a location, each line a function */
        for (size_t k = 0; k < s->n_location_id; k++) {
            size_t l;
            for (l = 0; l < pb->n_location && pb->location[l]->id != s->location_id[k]; l++) {}
            ck_assert_uint_lt(l, pb->n_location);
            ck_assert_uint_ge(pb->location[l]->n_line, 1);
            for (size_t m = 0; m < pb->location[l]->n_line; m++) {
                uint64_t fid = pb->location[l]->line[m]->function_id;
                ck_assert_uint_ge(fid, 1);
                ck_assert_uint_le(fid, pb->n_function);
                ck_assert_uint_eq(pb->function[fid - 1]->id, fid);
            }
        }
        for (size_t k = 0; k < s->n_label; k++)
            if (strcmp(pb->string_table[s->label[k]->key], "process") == 0 &&
                strcmp(pb->string_table[s->label[k]->str], "app") == 0 && s->value[0] == 3) {
                /* the leaf first: the kernel frame the sample hit */
                size_t l;
                saw_app = 1;
                for (l = 0; pb->location[l]->id != s->location_id[0]; l++) {}
                ck_assert_uint_eq(pb->location[l]->address, HI + 0x1010);
                ck_assert_str_eq(pb->string_table[pb->function[pb->location[l]->line[0]->function_id - 1]->name],
                                 "ntoskrnl.exe+0x1010");
                ck_assert_uint_ge(pb->location[l]->mapping_id, 1);
                ck_assert_str_eq(pb->string_table[pb->mapping[pb->location[l]->mapping_id - 1]->filename],
                                 "\\SystemRoot\\system32\\ntoskrnl.exe");
            }
    }
    ck_assert_int_eq(saw_app, 1);
    ck_assert_int_eq(total, (int64_t)st.samples);
    ck_assert_int_eq(weight, (int64_t)st.weight_ns);
    perftools__profiles__profile__free_unpacked(pb, NULL);
    free(raw);
    free(data);
    etl_profile_free(p);
}
END_TEST

/* PerfInfo SampledProfileInterval (version 3, as the kernel capture writes it: Source,
   NewInterval, OldInterval in 100 ns units, SourceName). */
static void interval_event(struct trace *t, int64_t ts, uint16_t hook, uint32_t source, uint32_t new_interval,
                           uint32_t old_interval, const char *name)
{
    struct synth_payload p;
    uint8_t b[4096];
    sp_init(&p, 8); sp32(&p, source); sp32(&p, new_interval); sp32(&p, old_interval); sp_str16(&p, name);
    add(t, 0, b, synth_perfinfo(b, 1, ts, hook, 3, NULL, NULL, 0, p.b, p.n));
}

/* A sample weighs the timer's interval in force at its time: CollectionStart's, then a
   SetInterval's; another source's (a PMC's) and CollectionEnd change nothing. */
START_TEST(test_interval_events)
{
    struct trace t;
    etl_profile *p = NULL;
    etl_reader *r;
    etl_symbolizer_options so;
    etl_profile_options po;
    etl_profile_stats st;

    trace_begin(&t);
    process(&t, 100, 100, "app");
    thread(&t, 100, 100, 7);
    interval_event(&t, 200, 0x0F49, 6, 65536, 65536, "BranchInstructions");
    interval_event(&t, 200, 0x0F49, 0, 2500, 2500, "Timer");
    sample(&t, 0, 1000, 7, 0x401000, 1);
    sample(&t, 1, 2000, 7, 0x401000, 2);
    interval_event(&t, 3000, 0x0F48, 0, 5000, 2500, "Timer");
    sample(&t, 0, 4000, 7, 0x401000, 1);
    interval_event(&t, 5000, 0x0F4A, 0, 20000, 20000, "Timer");
    sample(&t, 1, 5000, 7, 0x401000, 1); /* at CollectionEnd's time: still 500 us */
    memset(&so, 0, sizeof so);
    so.flags = ETL_SYMBOLS_NO_SYSTEM_PATHS | ETL_SYMBOLS_NO_PDB;
    memset(&po, 0, sizeof po);
    po.symbols = &so;
    r = trace_open(&t);
    ck_assert_int_eq(etl_profile_new(&p, &po), ETL_OK);
    ck_assert_int_eq(etl_profile_add_trace(p, r), ETL_OK);
    etl_profile_stats_get(p, &st);
    ck_assert_uint_eq(st.samples, 5);
    ck_assert_uint_eq(st.period_ns, 250000);
    ck_assert_uint_eq(st.weight_ns, 3 * 250000ull + 2 * 500000ull);
    etl_profile_free(p);
    etl_reader_close(r);
    free(t.file);
}
END_TEST

START_TEST(test_write_error)
{
    etl_profile *p = profile_of(NULL);
    FILE *f = fopen("/dev/full", "w");

    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        ck_assert_int_eq(etl_profile_write_folded(f, p), ETL_FATAL);
        fclose(f);
    }
    etl_profile_free(p);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("pairing");
    tcase_add_test(tc, test_halves_joined_kernel_first);
    tcase_add_test(tc, test_halves_after_other_samples);
    tcase_add_test(tc, test_stack_before_sample_and_unpaired);
    tcase_add_test(tc, test_idle_threads_by_processor);
    tcase_add_test(tc, test_stack_keys);
    tcase_add_test(tc, test_hostile_frame_counts);
    tcase_add_test(tc, test_ext_stacks);
    tcase_add_test(tc, test_owners);
    suite_add_tcase(s, tc);
    tc = tcase_create("profile");
    tcase_add_test(tc, test_folded_exact);
    tcase_add_test(tc, test_filters);
    tcase_add_test(tc, test_stack_get);
    tcase_add_test(tc, test_pprof_round_trip);
    tcase_add_test(tc, test_interval_events);
    tcase_add_test(tc, test_write_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(profile_suite());
}
