/* SPDX-License-Identifier: MIT */
/* Tests of the provider API: ETW's level and keyword rules, enabling before and after
   registration, several sessions and providers, stacks, and sessions stopped under writers. */
#define _GNU_SOURCE /* syscall */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check_run.h"
#include "etl.h"
#include "format/format.h"
#include "engine/engine.h"
#include "testutil.h"

static const etl_guid guid_a = { 0x11111111, 0x2222, 0x3333, { 1, 2, 3, 4, 5, 6, 7, 8 } };
static const etl_guid guid_b = { 0x44444444, 0x5555, 0x6666, { 8, 7, 6, 5, 4, 3, 2, 1 } };

static etl_session *start_session_clock(const char *name, const char *file, int clock_type)
{
    etl_session_properties p = { .logger_name = name, .buffer_size_kb = 64, .clock_type = clock_type };
    etl_session *s = NULL;

    p.log_file_name = test_dir_path(file);
    ck_assert_msg(etl_session_start(&s, &p) == ETL_OK, "start: %s", etl_session_error(s));
    return s;
}

static etl_session *start_session(const char *name, const char *file)
{
    return start_session_clock(name, file, 0);
}

/* How many events of provider g the file holds, and the sum of their ids (which says which). */
static long count_in(const char *file, const etl_guid *g, long *id_sum, int *with_stack)
{
    etl_reader *r = NULL;
    etl_event ev;
    long n = 0;
    int rc;

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(file), NULL), ETL_OK);
    if (id_sum) *id_sum = 0;
    if (with_stack) *with_stack = 0;
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, g)) continue;
        n++;
        if (id_sum) *id_sum += ev.id;
        for (unsigned i = 0; with_stack && i < ev.ext_count; i++) {
            etl_ext_item it;
            ck_assert_int_eq(etl_event_ext_item_get(&ev, i, &it), ETL_OK);
            if (it.type == ETL_EXT_STACK_TRACE64 && it.size >= 16) (*with_stack)++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
    return n;
}

static int write_ev(etl_provider *p, uint16_t id, uint8_t level, uint64_t keywords, unsigned flags)
{
    etl_event_descriptor d = { id, 0, 0, level, 0, 0, keywords };
    uint32_t v = id;
    etl_data data = { &v, sizeof v };
    return etl_provider_write(p, &d, &data, 1, flags);
}

/* ETW's rules, one by one. */
START_TEST(filter_rules)
{
    /* Level: 0 in the session is every level; 0 in the event passes any session level. */
    ck_assert(etl_enable_passes(0, 0, 0, 5, 0));
    ck_assert(etl_enable_passes(3, 0, 0, 3, 0));
    ck_assert(etl_enable_passes(3, 0, 0, 1, 0));
    ck_assert(!etl_enable_passes(3, 0, 0, 4, 0));
    ck_assert(etl_enable_passes(3, 0, 0, 0, 0));
    /* Keywords: 0 in the event always passes; else it needs a bit of MatchAny (0: any)... */
    ck_assert(etl_enable_passes(0, 0x6, 0, 4, 0));
    ck_assert(etl_enable_passes(0, 0x6, 0, 4, 0x2));
    ck_assert(!etl_enable_passes(0, 0x6, 0, 4, 0x8));
    ck_assert(etl_enable_passes(0, 0, 0, 4, 0x8));
    /* ...and every bit of MatchAll. */
    ck_assert(etl_enable_passes(0, 0xF, 0x3, 4, 0x3));
    ck_assert(etl_enable_passes(0, 0xF, 0x3, 4, 0x7));
    ck_assert(!etl_enable_passes(0, 0xF, 0x3, 4, 0x1));
    ck_assert(!etl_enable_passes(0, 0xF, 0x3, 4, 0x4));
    /* Both conditions at once. */
    ck_assert(!etl_enable_passes(2, 0xF, 0, 3, 0x1));
}
END_TEST

/* Enabled before or after registration, then disabled: etl_provider_enabled follows, and the
   file holds exactly the events that passed. */
START_TEST(enable_before_and_after_register)
{
    etl_provider *early = NULL, *late = NULL;
    etl_session *s;
    long ids;

    test_dir_create();
    ck_assert_int_eq(etl_provider_register(&early, &guid_a), ETL_OK);
    ck_assert(!etl_provider_enabled(early, 4, 0));
    s = start_session("EnableOrder", "order.etl");
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 4, 0x1, 0), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_b, 0, 0, 0), ETL_OK); /* not registered yet */
    ck_assert_int_eq(etl_provider_register(&late, &guid_b), ETL_OK);
    ck_assert(etl_provider_enabled(early, 4, 0x1));
    ck_assert(!etl_provider_enabled(early, 5, 0x1));
    ck_assert(!etl_provider_enabled(early, 4, 0x2));
    ck_assert(etl_provider_enabled(late, 5, 0x2));

    ck_assert_int_eq(write_ev(early, 1, 4, 0x1, 0), ETL_OK);   /* passes */
    ck_assert_int_eq(write_ev(early, 2, 5, 0x1, 0), ETL_OK);   /* level too high */
    ck_assert_int_eq(write_ev(early, 4, 4, 0x2, 0), ETL_OK);   /* keyword not enabled */
    ck_assert_int_eq(write_ev(early, 8, 0, 0, 0), ETL_OK);     /* level 0, keywords 0: passes */
    ck_assert_int_eq(write_ev(late, 16, 7, 0xF0, 0), ETL_OK);  /* level 0 session: passes */
    /* A new enable replaces the old one; a disable ends it. */
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 5, 0x2, 0), ETL_OK);
    ck_assert_int_eq(write_ev(early, 32, 5, 0x2, 0), ETL_OK);  /* passes now */
    ck_assert_int_eq(write_ev(early, 64, 4, 0x1, 0), ETL_OK);  /* no longer */
    ck_assert_int_eq(etl_session_disable_provider(s, &guid_b), ETL_OK);
    ck_assert_int_eq(etl_session_disable_provider(s, &guid_b), ETL_FAILED);
    ck_assert(!etl_provider_enabled(late, 1, 0));
    ck_assert_int_eq(write_ev(late, 128, 1, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert(!etl_provider_enabled(early, 0, 0));

    ck_assert_int_eq(count_in("order.etl", &guid_a, &ids, NULL), 3);
    ck_assert_int_eq(ids, 1 + 8 + 32);
    ck_assert_int_eq(count_in("order.etl", &guid_b, &ids, NULL), 1);
    ck_assert_int_eq(ids, 16);
    etl_provider_unregister(early);
    etl_provider_unregister(late);
    test_dir_remove();
}
END_TEST

/* Two sessions enable one provider with different filters; one session enables two. */
START_TEST(many_sessions_many_providers)
{
    etl_provider *a = NULL, *b = NULL;
    etl_session *s1, *s2;
    long ids;

    test_dir_create();
    s1 = start_session("Verbose", "s1.etl");
    s2 = start_session("Errors", "s2.etl");
    ck_assert_int_eq(etl_provider_register(&a, &guid_a), ETL_OK);
    ck_assert_int_eq(etl_provider_register(&b, &guid_b), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s1, &guid_a, 5, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s1, &guid_b, 5, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s2, &guid_a, 2, 0, 0), ETL_OK);
    for (uint16_t i = 0; i < 100; i++) {
        ck_assert_int_eq(write_ev(a, i, (uint8_t)(1 + i % 5), 0, 0), ETL_OK);
        ck_assert_int_eq(write_ev(b, (uint16_t)(1000 + i), 4, 0, 0), ETL_OK);
    }
    ck_assert_int_eq(etl_session_stop(s2, NULL), ETL_OK);
    etl_session_close(s2);
    ck_assert_int_eq(write_ev(a, 500, 1, 0, 0), ETL_OK);   /* s1 only, now */
    ck_assert_int_eq(etl_session_stop(s1, NULL), ETL_OK);
    etl_session_close(s1);
    ck_assert_int_eq(count_in("s1.etl", &guid_a, NULL, NULL), 101);
    ck_assert_int_eq(count_in("s1.etl", &guid_b, NULL, NULL), 100);
    /* levels 1 and 2: i % 5 of 0 or 1, 40 events */
    ck_assert_int_eq(count_in("s2.etl", &guid_a, &ids, NULL), 40);
    ck_assert_int_eq(count_in("s2.etl", &guid_b, NULL, NULL), 0);
    etl_provider_unregister(a);
    etl_provider_unregister(b);
    test_dir_remove();
}
END_TEST

/* The frames of the STACK_TRACE64 item of the event id of provider g in file (its MatchId
   left out): how many, at most max into frames; 0 when it has none. */
static unsigned stack_in(const char *file, const etl_guid *g, uint16_t id, uint64_t *frames, unsigned max)
{
    etl_reader *r = NULL;
    etl_event ev;
    unsigned n = 0;

    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(file), NULL), ETL_OK);
    while (n == 0 && etl_reader_next(r, &ev) == ETL_OK) {
        if (ev.kind != ETL_KIND_EVENT || !etl_guid_equal(&ev.provider, g) || ev.id != id) continue;
        for (unsigned i = 0; i < ev.ext_count; i++) {
            etl_ext_item it;
            ck_assert_int_eq(etl_event_ext_item_get(&ev, i, &it), ETL_OK);
            if (it.type != ETL_EXT_STACK_TRACE64 || it.size < 8) continue;
            for (n = 0; n < (it.size - 8u) / 8u && n < max; n++) frames[n] = etl_le64(it.data + 8 + 8 * n);
        }
    }
    etl_reader_close(r);
    return n;
}

/* ETL_WRITE_STACK adds the caller's stack, innermost first: its first frame is the return
   address into the function that called etl_provider_write (or _lbr), its second that
   function's own return address, which *ret gets. */
static volatile int stack_writes;

static __attribute__((noinline)) int write_with_stack(etl_provider *p, uint16_t id, int lbr, void **ret)
{
    etl_event_descriptor d = { id, 0, 0, 4, 0, 0, 0 };
    etl_lbr_entry branch = { 0x401000, 0x402000, 0 };
    uint32_t v = id;
    etl_data data = { &v, sizeof v };
    int rc;

    *ret = __builtin_return_address(0);
    rc = lbr ? etl_provider_write_lbr(p, &d, &data, 1, ETL_WRITE_STACK, ETL_LBR_FILTER_USER, &branch, 1)
             : etl_provider_write(p, &d, &data, 1, ETL_WRITE_STACK);
    stack_writes++; /* not a tail call: this frame stays on the stack during the write */
    return rc;
}
START_TEST(stack_of_the_caller)
{
    etl_provider *a = NULL;
    etl_session *s;
    uint64_t frames[2];
    void *ret[2];
    int stacks;

    test_dir_create();
    s = start_session("Stacks", "stack.etl");
    ck_assert_int_eq(etl_provider_register(&a, &guid_a), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(write_with_stack(a, 7, 0, &ret[0]), ETL_OK);
    ck_assert_int_eq(write_ev(a, 8, 4, 0, 0), ETL_OK);
    ck_assert_int_eq(write_with_stack(a, 9, 1, &ret[1]), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_int_eq(count_in("stack.etl", &guid_a, NULL, &stacks), 3);
    ck_assert_int_eq(stacks, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_ge(stack_in("stack.etl", &guid_a, i ? 9 : 7, frames, 2), 2);
        ck_assert_msg(frames[0] != (uint64_t)(uintptr_t)ret[i], "%s: the first frame is the caller's caller",
                      i ? "etl_provider_write_lbr" : "etl_provider_write");
        ck_assert_uint_eq(frames[1], (uint64_t)(uintptr_t)ret[i]);
    }
    etl_provider_unregister(a);
    test_dir_remove();
}
END_TEST

/* A session that enables a provider with ETL_ENABLE_STACK_TRACE gets every event it takes with
   the writer's stack; a session beside it that enables the provider plainly gets none. */
START_TEST(stack_by_enable_property)
{
    etl_provider *a = NULL;
    etl_session *s1, *s2;
    uint64_t frames[2];
    int stacks;

    test_dir_create();
    s1 = start_session("StackWalk", "walk.etl");
    s2 = start_session("Plain", "plain.etl");
    ck_assert_int_eq(etl_provider_register(&a, &guid_a), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider_ex(s1, &guid_a, 0, 0, 0, ETL_ENABLE_STACK_TRACE), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s2, &guid_a, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider_ex(s2, &guid_a, 0, 0, 0, 0x1), ETL_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    for (uint16_t id = 1; id <= 3; id++) ck_assert_int_eq(write_ev(a, id, 4, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s1, NULL), ETL_OK);
    etl_session_close(s1);
    ck_assert_int_eq(etl_session_stop(s2, NULL), ETL_OK);
    etl_session_close(s2);
    ck_assert_int_eq(count_in("walk.etl", &guid_a, NULL, &stacks), 3);
    ck_assert_int_eq(stacks, 3);
    ck_assert_uint_ge(stack_in("walk.etl", &guid_a, 2, frames, 2), 1);
    ck_assert_int_eq(count_in("plain.etl", &guid_a, NULL, &stacks), 3);
    ck_assert_int_eq(stacks, 0);
    etl_provider_unregister(a);
    test_dir_remove();
}
END_TEST

/* The timestamps of the events of provider g (ids below 100: those written with LBR) and of
   the LBR records in file, each sorted; the LBR records' pid, tid, filters and entries are
   checked against what lbr_after_the_event wrote. */
static const etl_lbr_entry branches[3] = {
    { 0x401000, 0x402000, 0 }, { 0x403010, 0x404020, 0 }, { 0x7f0000001000, 0x7f0000002000, 0 },
};

static int ts_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void lbr_timestamps(const char *file, const etl_guid *g, int64_t *events, unsigned *nevents, int64_t *lbrs,
                           unsigned *nlbrs, unsigned max)
{
    uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
    etl_reader *r = NULL;
    etl_event ev;
    etl_kernel_event k;

    *nevents = *nlbrs = 0;
    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(file), NULL), ETL_OK);
    while (etl_reader_next(r, &ev) == ETL_OK) {
        if (ev.kind == ETL_KIND_EVENT && etl_guid_equal(&ev.provider, g) && ev.id < 100) {
            ck_assert_uint_lt(*nevents, max);
            ck_assert_uint_eq(ev.pid, pid);
            ck_assert_uint_eq(ev.tid, tid);
            events[(*nevents)++] = ev.timestamp;
        }
        if (etl_kernel_decode(&ev, &k) != 1 || k.kclass != ETL_KCLASS_LBR) continue;
        ck_assert_uint_lt(*nlbrs, max);
        ck_assert_uint_eq(k.u.lbr.pid, pid);
        ck_assert_uint_eq(k.u.lbr.tid, tid);
        ck_assert_uint_eq(k.u.lbr.filters, ETL_LBR_FILTER_USER | ETL_LBR_CALLSTACK);
        ck_assert_uint_eq(k.u.lbr.count, 3);
        for (unsigned i = 0; i < 3; i++) {
            etl_lbr_entry b = etl_lbr_entry_at(&k.u.lbr, i);
            ck_assert_uint_eq(b.from, branches[i].from);
            ck_assert_uint_eq(b.to, branches[i].to);
        }
        lbrs[(*nlbrs)++] = k.u.lbr.timestamp;
    }
    etl_reader_close(r);
    qsort(events, *nevents, sizeof *events, ts_cmp);
    qsort(lbrs, *nlbrs, sizeof *lbrs, ts_cmp);
}

/* etl_provider_write_lbr: in each session that takes the event, the event and an LBR record
   whose trigger timestamp is the event's own (each session on its own clock), with the
   caller's pid and tid and the entries; none in a session whose filter refuses the event,
   and none after a plain etl_provider_write. */
START_TEST(lbr_after_the_event)
{
    static const char *const files[] = { "lbr-perf.etl", "lbr-sys.etl", "lbr-none.etl" };
    enum { N = 200 };
    etl_provider *a = NULL;
    etl_session *s[3];
    int64_t ev_ts[N + 1], lbr_ts[N + 1];
    unsigned nev, nlbr;

    test_dir_create();
    s[0] = start_session_clock("LbrPerf", files[0], ETL_CLOCK_PERFCOUNTER);
    s[1] = start_session_clock("LbrSys", files[1], ETL_CLOCK_SYSTEMTIME);
    s[2] = start_session("LbrNone", files[2]);
    ck_assert_int_eq(etl_provider_register(&a, &guid_a), ETL_OK);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(etl_session_enable_provider(s[i], &guid_a, i == 2 ? 3 : 0, 0, 0), ETL_OK);
    for (uint16_t i = 0; i < N; i++) {
        etl_event_descriptor d = { (uint16_t)(i % 100), 0, 0, 4, 0, 0, 0 };
        etl_data data = { &i, sizeof i };
        ck_assert_int_eq(etl_provider_write_lbr(a, &d, &data, 1, 0, ETL_LBR_FILTER_USER | ETL_LBR_CALLSTACK, branches,
                                                3), ETL_OK);
    }
    ck_assert_int_eq(write_ev(a, 100, 4, 0, 0), ETL_OK); /* no LBR record */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(etl_session_stop(s[i], NULL), ETL_OK);
        etl_session_close(s[i]);
    }

    for (int i = 0; i < 2; i++) {
        lbr_timestamps(files[i], &guid_a, ev_ts, &nev, lbr_ts, &nlbr, N + 1);
        ck_assert_uint_eq(nev, N);
        ck_assert_uint_eq(nlbr, N);
        for (unsigned j = 0; j < N; j++)
            ck_assert_msg(ev_ts[j] == lbr_ts[j], "%s: the %u-th timestamp: event %lld, LBR %lld", files[i], j,
                          (long long)ev_ts[j], (long long)lbr_ts[j]);
    }
    ck_assert_int_eq(count_in(files[1], &guid_a, NULL, NULL), N + 1);
    lbr_timestamps(files[2], &guid_a, ev_ts, &nev, lbr_ts, &nlbr, N + 1);
    ck_assert_uint_eq(nev + nlbr, 0);
    etl_provider_unregister(a);
    test_dir_remove();
}
END_TEST

/* Writers keep writing while sessions are enabled, disabled and stopped under them: no event
   goes to a stopped session (it is freed), and every write returns. */
struct churn {
    etl_provider *p;
    _Atomic int stop;
    _Atomic long written;
};

static void *writer(void *arg)
{
    struct churn *c = arg;
    long n = 0;
    while (!atomic_load(&c->stop)) {
        write_ev(c->p, 1, 4, 0x1, 0);
        n++;
    }
    atomic_fetch_add(&c->written, n);
    return NULL;
}

START_TEST(sessions_stopped_under_writers)
{
    struct churn c;
    pthread_t t[2];

    test_dir_create();
    c.p = NULL;
    atomic_init(&c.stop, 0);
    atomic_init(&c.written, 0);
    ck_assert_int_eq(etl_provider_register(&c.p, &guid_a), ETL_OK);
    for (int i = 0; i < 2; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, writer, &c), 0);
    for (int round = 0; round < 20; round++) {
        etl_session *s = start_session("Churn", round % 2 ? "c1.etl" : "c0.etl");
        ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 4, 0x1, 0), ETL_OK);
        if (round % 3 == 0) ck_assert_int_eq(etl_session_disable_provider(s, &guid_a), ETL_OK);
        ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
        etl_session_close(s);
    }
    atomic_store(&c.stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    ck_assert(atomic_load(&c.written) > 0);
    ck_assert(!etl_provider_enabled(c.p, 4, 0x1));
    etl_provider_unregister(c.p);
    test_dir_remove();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("provider");
    TCase *tc = tcase_create("provider");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, filter_rules);
    tcase_add_test(tc, enable_before_and_after_register);
    tcase_add_test(tc, many_sessions_many_providers);
    tcase_add_test(tc, stack_of_the_caller);
    tcase_add_test(tc, stack_by_enable_property);
    tcase_add_test(tc, lbr_after_the_event);
    tcase_add_test(tc, sessions_stopped_under_writers);
    suite_add_tcase(s, tc);
    return check_run(s);
}
