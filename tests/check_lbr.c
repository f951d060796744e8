/* SPDX-License-Identifier: MIT */
/* Tests of LBR configuration (etl_session_configure_lbr), its names, perf branch stacks into LBR records, and the capture's failures. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "format/format.h"
#include "capture/capture.h"
#include "engine/engine.h"
#include "testutil.h"

static const etl_guid guid_a = { 0x1b7a0001, 0x2222, 0x3333, { 1, 2, 3, 4, 5, 6, 7, 8 } };

#define FLAG_PROFILE 0x01000000u /* EVENT_TRACE_FLAG_PROFILE */
#define FLAG_CSWITCH 0x00000010u /* EVENT_TRACE_FLAG_CSWITCH */

static void make_dir(void) { ck_assert_ptr_nonnull(test_dir_create()); }
static void remove_dir(void) { ck_assert_int_eq(test_dir_remove(), 0); }

static etl_session *start_session(const char *file)
{
    etl_session_properties p = { .logger_name = "lbr", .buffer_size_kb = 64 };
    etl_session *s = NULL;

    p.log_file_name = test_dir_path(file);
    ck_assert_msg(etl_session_start(&s, &p) == ETL_OK, "start: %s", etl_session_error(s));
    return s;
}

static etl_classic_event_id trigger(const etl_guid *g, uint8_t type)
{
    etl_classic_event_id e;

    memset(&e, 0, sizeof e);
    e.event_guid = *g;
    e.type = type;
    return e;
}

#define ASSERT_FAILS_WITH(call, text)                                                                        \
    do {                                                                                                     \
        err[0] = '\0';                                                                                       \
        ck_assert_int_eq((call), ETL_FAILED);                                                                \
        ck_assert_msg(strstr(err, (text)) != NULL, "message '%s' does not say '%s'", err, (text));           \
    } while (0)

/* The same for a call whose message goes on session s. */
#define ASSERT_SESSION_FAILS_WITH(s, call, text)                                                             \
    do {                                                                                                     \
        ck_assert_int_eq((call), ETL_FAILED);                                                                \
        ck_assert_msg(strstr(etl_session_error(s), (text)) != NULL, "message '%s' does not say '%s'",        \
                      etl_session_error(s), (text));                                                         \
    } while (0)

/* Unknown flag bits, too many triggers, a trigger not enabled, twice the same one: refused,
   with a message, the configuration unchanged; count 0 disables. */
START_TEST(configure_validation)
{
    etl_session *s = start_session("v.etl");
    const etl_guid *perfinfo = etl_group_guid(ETL_GROUP_PERFINFO), *thread = etl_group_guid(ETL_GROUP_THREAD);
    etl_classic_event_id five[5], profile = trigger(perfinfo, 46), user = trigger(&guid_a, 7);
    etl_lbr_config cfg;

    for (unsigned i = 0; i < 5; i++) five[i] = trigger(&guid_a, (uint8_t)i);
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0x800, &user, 1), "unknown bits 0x800");
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, ETL_LBR_SAMPLED, &user, 1), "ARM64");
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, five, 5), "at most 4");
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, NULL, 1), "no array");
    /* A provider's event: its provider must be enabled. */
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, &user, 1), "enable its provider");
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 0, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_configure_lbr(s, ETL_LBR_FILTER_KERNEL, &user, 1), ETL_OK);
    etl_session_lbr_config(s, &cfg);
    ck_assert_uint_eq(cfg.count, 1);
    ck_assert_uint_eq(cfg.flags, ETL_LBR_FILTER_KERNEL);
    ck_assert(etl_lbr_trigger_matches(&cfg, &guid_a, 7));
    ck_assert(!etl_lbr_trigger_matches(&cfg, &guid_a, 8));
    ck_assert(!etl_lbr_trigger_matches(&cfg, perfinfo, 7));
    /* A kernel event: the kernel flag that produces it. */
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, &profile, 1), "kernel flag 'profile'");
    ck_assert_msg(strstr(etl_session_error(s), "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc:46 (PerfInfo profile)") != NULL,
                  "%s", etl_session_error(s));
    etl_session_lbr_config(s, &cfg); /* unchanged by the refusals */
    ck_assert_uint_eq(cfg.count, 1);
    ck_assert_uint_eq(cfg.flags, ETL_LBR_FILTER_KERNEL);
    etl_session_set_kernel_flags(s, FLAG_CSWITCH);
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, &profile, 1), "kernel flag 'profile'");
    five[0] = trigger(thread, 36);
    five[1] = profile;
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, five, 2), "kernel flag 'profile'");
    etl_session_set_kernel_flags(s, FLAG_CSWITCH | FLAG_PROFILE);
    ck_assert_int_eq(etl_session_configure_lbr(s, ETL_LBR_CALLSTACK, five, 2), ETL_OK);
    etl_session_lbr_config(s, &cfg);
    ck_assert_uint_eq(cfg.count, 2);
    ck_assert(etl_lbr_trigger_matches(&cfg, thread, 36));
    ck_assert(etl_lbr_trigger_matches(&cfg, perfinfo, 46));
    ck_assert(!etl_lbr_trigger_matches(&cfg, &guid_a, 7));
    /* A kernel event no flag of libetl produces; the same trigger twice. */
    five[0] = trigger(perfinfo, 99);
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, five, 1), "no kernel flag");
    five[0] = five[1] = profile;
    ASSERT_SESSION_FAILS_WITH(s, etl_session_configure_lbr(s, 0, five, 2), "given twice");
    /* Four is the most. */
    ck_assert_int_eq(etl_session_enable_provider(s, &guid_a, 0, 0, 0), ETL_OK);
    for (unsigned i = 0; i < 4; i++) five[i] = trigger(&guid_a, (uint8_t)(10 + i));
    ck_assert_int_eq(etl_session_configure_lbr(s, 0, five, 4), ETL_OK);
    /* Disabled: no triggers, no flags. */
    ck_assert_int_eq(etl_session_configure_lbr(s, ETL_LBR_FILTER_USER, NULL, 0), ETL_OK);
    etl_session_lbr_config(s, &cfg);
    ck_assert_uint_eq(cfg.count, 0);
    ck_assert_uint_eq(cfg.flags, 0);
    ck_assert(!etl_lbr_trigger_matches(&cfg, &guid_a, 10));
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
}
END_TEST

START_TEST(trigger_and_filter_names)
{
    etl_classic_event_id e;
    uint32_t flags;
    char err[512], g[ETL_GUID_STRING_SIZE];

    ck_assert_int_eq(etl_lbr_trigger_parse("profile", &e), ETL_OK);
    ck_assert_str_eq(etl_guid_format(&e.event_guid, g), "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc");
    ck_assert_uint_eq(e.type, 46);
    ck_assert_int_eq(etl_lbr_trigger_parse("CSwitch", &e), ETL_OK);
    ck_assert_str_eq(etl_guid_format(&e.event_guid, g), "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c");
    ck_assert_uint_eq(e.type, 36);
    ck_assert_int_eq(etl_lbr_trigger_parse("pmc", &e), ETL_OK);
    ck_assert_uint_eq(e.type, 47);
    ck_assert_int_eq(etl_lbr_trigger_parse("1b7a0001-2222-3333-0102-030405060708:200", &e), ETL_OK);
    ck_assert(etl_guid_equal(&e.event_guid, &guid_a));
    ck_assert_uint_eq(e.type, 200);
    ck_assert_int_eq(etl_lbr_trigger_parse("{1B7A0001-2222-3333-0102-030405060708}:0x24", &e), ETL_OK);
    ck_assert_uint_eq(e.type, 36);
    ck_assert_int_eq(etl_lbr_trigger_parse("profil", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("1b7a0001-2222-3333-0102-030405060708", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("1b7a0001-2222-3333-0102-030405060708:256", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("1b7a0001-2222-3333-0102-030405060708:-1", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("1b7a0001-2222-3333-0102-030405060708:", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("not-a-guid:3", &e), ETL_FAILED);
    ck_assert_int_eq(etl_lbr_trigger_parse("", &e), ETL_FAILED);

    ck_assert_int_eq(etl_lbr_filter_parse("kernel,user,jcc,near_rel_call,near_ind_call,near_ret,near_ind_jmp,"
                                          "near_rel_jmp,far_branch,callstack", &flags, err, sizeof err), ETL_OK);
    ck_assert_uint_eq(flags, 0x3FF);
    ck_assert_int_eq(etl_lbr_filter_parse("user,near_ret", &flags, err, sizeof err), ETL_OK);
    ck_assert_uint_eq(flags, ETL_LBR_FILTER_USER | ETL_LBR_FILTER_NEAR_RET);
    ck_assert_int_eq(etl_lbr_filter_parse("", &flags, err, sizeof err), ETL_OK);
    ck_assert_uint_eq(flags, 0);
    ck_assert_int_eq(etl_lbr_filter_parse("user,bogus,jcc", &flags, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "unknown LBR filter 'bogus'") != NULL, "%s", err);
    ck_assert_int_eq(etl_lbr_filter_parse("kernelx", &flags, err, sizeof err), ETL_FAILED);
    ck_assert_msg(strstr(err, "'kernelx'") != NULL, "%s", err);
}
END_TEST

/* The filters (which filter branches out) as perf's branch_sample_type (which keeps them). */
START_TEST(filters_as_perf_branch_types)
{
    const uint32_t unmapped = ETL_LBR_FILTER_NEAR_REL_JMP | ETL_LBR_FILTER_FAR_BRANCH;
    uint64_t t;
    char err[512];

    ck_assert_int_eq(etl_lbr_perf_branch_type(0, &t, err, sizeof err), 0);
    ck_assert_uint_eq(t, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_ANY);
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_KERNEL, &t, err, sizeof err), 0);
    ck_assert_uint_eq(t, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY);
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_USER | ETL_LBR_CALLSTACK, &t, err, sizeof err), 0);
    ck_assert_uint_eq(t, PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_CALL_STACK);
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_JCC | unmapped, &t, err, sizeof err), 0);
    ck_assert_uint_eq(t, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_CALL |
                             PERF_SAMPLE_BRANCH_IND_CALL | PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_IND_JUMP);
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_USER | ETL_LBR_FILTER_JCC | ETL_LBR_FILTER_NEAR_IND_JMP |
                                              ETL_LBR_FILTER_NEAR_REL_CALL | ETL_LBR_FILTER_NEAR_IND_CALL | unmapped,
                                              &t, err, sizeof err), 0);
    ck_assert_uint_eq(t, PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_ANY_RETURN);
    /* What perf cannot express, or nothing at all. */
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_JCC, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "near_rel_jmp") != NULL, "%s", err);
    ck_assert_int_eq(etl_lbr_perf_branch_type(ETL_LBR_FILTER_KERNEL | ETL_LBR_FILTER_USER, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "every branch") != NULL, "%s", err);
    ck_assert_int_eq(etl_lbr_perf_branch_type(0x1FC, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "every kind of branch") != NULL, "%s", err);
    ck_assert_int_eq(etl_lbr_perf_branch_type(0x400, &t, err, sizeof err), -1);
}
END_TEST

/* ---- hand-built PERF_RECORD_SAMPLE records ---- */

struct rec {
    uint8_t b[4096];
    size_t n;
};

static void put64(struct rec *r, uint64_t v)
{
    memcpy(r->b + r->n, &v, 8);
    r->n += 8;
}

static void put32(struct rec *r, uint32_t v)
{
    memcpy(r->b + r->n, &v, 4);
    r->n += 4;
}

static void finish(struct rec *r)
{
    uint32_t type = PERF_RECORD_SAMPLE;
    uint16_t misc = 0, size = (uint16_t)r->n;

    memcpy(r->b, &type, 4);
    memcpy(r->b + 4, &misc, 2);
    memcpy(r->b + 6, &size, 2);
}

/* perf_branch_entry's flags word: mispred bit 0, in_tx bit 2, abort bit 3, cycles bits 4..19. */
static uint64_t branch_flags(int mispred, int in_tx, int abort, unsigned cycles)
{
    return (uint64_t)mispred | (uint64_t)in_tx << 2 | (uint64_t)abort << 3 | (uint64_t)(cycles & 0xFFFF) << 4 |
           (uint64_t)0xF << 20 /* type: not carried */;
}

/* IP, TID, TIME, CPU, PERIOD, CALLCHAIN (2), RAW (12 bytes), BRANCH_STACK (hw_idx, 3 branches). */
static const uint64_t full_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
                                  PERF_SAMPLE_BRANCH_STACK;

static void build_full(struct rec *r)
{
    memset(r, 0, sizeof *r);
    r->n = 8;
    put64(r, 0xffffffff81000000ull); /* ip */
    put32(r, 1234);                  /* pid */
    put32(r, 1240);                  /* tid */
    put64(r, 987654321);             /* time */
    put32(r, 3);                     /* cpu */
    put32(r, 0);
    put64(r, 100000);                /* period */
    put64(r, 2);                     /* callchain */
    put64(r, 0x401000);
    put64(r, 0x402000);
    put32(r, 12);                    /* raw: 12 bytes, the u32 and them 8-aligned */
    for (int i = 0; i < 3; i++) put32(r, 0xAAAAAAAAu);
    put64(r, 3);                     /* branches */
    put64(r, 31);                    /* hw_idx */
    put64(r, 0x1000);
    put64(r, 0x2000);
    put64(r, branch_flags(1, 0, 0, 17));
    put64(r, 0x3000);
    put64(r, 0x4000);
    put64(r, branch_flags(0, 1, 1, 0xFFFF));
    put64(r, 0x5000);
    put64(r, 0x6000);
    put64(r, 0);
    finish(r);
}

START_TEST(perf_sample_into_entries)
{
    struct rec r;
    etl_lbr_perf_sample smp;
    etl_lbr_entry e[4];
    const char *why = NULL;

    build_full(&r);
    ck_assert_int_eq(etl_lbr_perf_sample_decode(r.b, r.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why),
                     0);
    ck_assert_uint_eq(smp.pid, 1234);
    ck_assert_uint_eq(smp.tid, 1240);
    ck_assert_uint_eq(smp.cpu, 3);
    ck_assert_uint_eq(smp.time, 987654321);
    ck_assert_uint_eq(smp.count, 3);
    ck_assert_uint_eq(smp.written, 3);
    ck_assert_uint_eq(e[0].from, 0x1000);
    ck_assert_uint_eq(e[0].to, 0x2000);
    ck_assert_uint_eq(e[0].reserved, 1ull << 63 | 17);
    ck_assert_uint_eq(e[1].from, 0x3000);
    ck_assert_uint_eq(e[1].reserved, 1ull << 62 | 1ull << 61 | 0xFFFF);
    ck_assert_uint_eq(e[2].to, 0x6000);
    ck_assert_uint_eq(e[2].reserved, 0);
    /* Room for fewer: the most recent ones. */
    memset(e, 0, sizeof e);
    ck_assert_int_eq(etl_lbr_perf_sample_decode(r.b, r.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 2, &why),
                     0);
    ck_assert_uint_eq(smp.count, 3);
    ck_assert_uint_eq(smp.written, 2);
    ck_assert_uint_eq(e[1].to, 0x4000);
    ck_assert_uint_eq(e[2].from, 0);
    /* The smallest layout: only the branch stack, none in it. */
    memset(&r, 0, sizeof r);
    r.n = 8;
    put64(&r, 0);
    finish(&r);
    ck_assert_int_eq(etl_lbr_perf_sample_decode(r.b, r.n, PERF_SAMPLE_BRANCH_STACK, 0, &smp, e, 4, &why), 0);
    ck_assert_uint_eq(smp.count, 0);
    ck_assert_uint_eq(smp.time, 0);
}
END_TEST

/* Every truncation, lying counts and sizes, the wrong kind of record: refused, never a read
   outside the record (each copy is exactly as long as the size given, for ASan to see). */
START_TEST(perf_sample_damaged)
{
    struct rec r, bad;
    etl_lbr_perf_sample smp;
    etl_lbr_entry e[4];
    const char *why;

    build_full(&r);
    for (size_t n = 0; n < r.n; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, r.b, n);
        why = NULL;
        ck_assert_msg(etl_lbr_perf_sample_decode(copy, n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why) ==
                          -1, "truncated to %zu bytes, accepted", n);
        ck_assert_ptr_nonnull(why);
        free(copy);
    }
    /* header.size shorter than the buffer: the header's size bounds the record. */
    bad = r;
    bad.b[6] = (uint8_t)(r.n - 24);
    bad.b[7] = 0;
    ck_assert_int_eq(etl_lbr_perf_sample_decode(bad.b, bad.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why),
                     -1);
    bad.b[6] = 4; /* smaller than the header */
    ck_assert_int_eq(etl_lbr_perf_sample_decode(bad.b, bad.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why),
                     -1);
    /* Counts that run far past the end. */
    static const size_t nr_at[] = { 8 + 8 + 8 + 8 + 8 + 8 /* callchain nr */, 8 + 8 * 8 + 16 /* branch nr */ };
    static const uint64_t lies[] = { 4, 1ull << 61, UINT64_MAX, 1ull << 32 };
    for (unsigned i = 0; i < 2; i++)
        for (unsigned j = 0; j < 4; j++) {
            bad = r;
            memcpy(bad.b + nr_at[i], &lies[j], 8);
            ck_assert_msg(etl_lbr_perf_sample_decode(bad.b, bad.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4,
                                                     &why) == -1, "count %llu at %zu accepted",
                          (unsigned long long)lies[j], nr_at[i]);
        }
    bad = r;
    {
        uint32_t raw = 0xFFFFFFF0u;
        memcpy(bad.b + 8 + 8 * 8, &raw, 4);
    }
    ck_assert_int_eq(etl_lbr_perf_sample_decode(bad.b, bad.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why),
                     -1);
    /* Not a sample; a layout it does not walk; no branch stack. */
    bad = r;
    bad.b[0] = PERF_RECORD_LOST;
    ck_assert_int_eq(etl_lbr_perf_sample_decode(bad.b, bad.n, full_type, PERF_SAMPLE_BRANCH_HW_INDEX, &smp, e, 4, &why),
                     -1);
    ck_assert_str_eq(why, "not a PERF_RECORD_SAMPLE");
    ck_assert_int_eq(etl_lbr_perf_sample_decode(r.b, r.n, full_type | PERF_SAMPLE_READ, 0, &smp, e, 4, &why), -1);
    ck_assert_int_eq(etl_lbr_perf_sample_decode(r.b, r.n, full_type & ~(uint64_t)PERF_SAMPLE_BRANCH_STACK, 0, &smp, e,
                                                4, &why), -1);
}
END_TEST

/* What the kernel capture writes from one perf sample of a trigger: the trigger, its stack and
   its LBR record, all at the sample's timestamp (or at min_ts when the processor's buffer is
   already past it), read back decoded. */
struct written {
    int triggers, stacks, lbrs;
    int64_t ts[3];
    etl_kernel_event trig, stack;
    etl_lbr lbr;                  /* its entries are copied into entries: the record goes with the reader */
    etl_lbr_entry entries[3];
    uint64_t frames[4];
};

static void read_written(const char *name, struct written *w)
{
    etl_reader *r = NULL;
    etl_event ev;
    int rc;

    memset(w, 0, sizeof *w);
    ck_assert_int_eq(etl_reader_open_path(&r, test_dir_path(name), NULL), ETL_OK);
    while ((rc = etl_reader_next(r, &ev)) == ETL_OK) {
        etl_kernel_event k;
        if (etl_kernel_decode(&ev, &k) != 1) continue;
        if (k.kclass == ETL_KCLASS_SAMPLED_PROFILE) {
            w->trig = k;
            w->ts[0] = ev.timestamp;
            w->triggers++;
        } else if (k.kclass == ETL_KCLASS_STACK) {
            w->stack = k;
            w->ts[1] = ev.timestamp;
            for (unsigned i = 0; i < k.u.stack.frame_count && i < 4; i++)
                w->frames[i] = etl_kstack_frame_at(&k.u.stack, i);
            w->stacks++;
        } else if (k.kclass == ETL_KCLASS_LBR) {
            w->lbr = k.u.lbr;
            for (unsigned i = 0; i < k.u.lbr.count && i < 3; i++) w->entries[i] = etl_lbr_entry_at(&k.u.lbr, i);
            w->ts[2] = ev.timestamp;
            w->lbrs++;
        }
    }
    ck_assert_int_eq(rc, ETL_EOF);
    etl_reader_close(r);
}

START_TEST(lbr_record_with_the_trigger_timestamp)
{
    etl_lbr_trigger_form f = { .trigger = 46, .filters = ETL_LBR_FILTER_KERNEL, .stack = 1,
                               .sample_type = full_type, .branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX };
    etl_session *s = start_session("t.etl");
    int64_t ts = etl_session_timestamp(s), used = 0;
    struct written w;
    struct rec rec;

    build_full(&rec);
    memcpy(rec.b + 8 + 8 + 8, &ts, 8); /* the sample's time */
    ck_assert_int_eq(etl_lbr_write_perf_trigger(s, &f, rec.b, rec.n, ts - 5, &used), ETL_OK);
    ck_assert_int_eq(used, ts);
    /* A damaged sample writes nothing. */
    ck_assert_int_eq(etl_lbr_write_perf_trigger(s, &f, rec.b, rec.n - 8, 0, NULL), ETL_FAILED);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_written("t.etl", &w);
    ck_assert_int_eq(w.triggers, 1);
    ck_assert_int_eq(w.stacks, 1);
    ck_assert_int_eq(w.lbrs, 1);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(w.ts[i], ts);
    ck_assert_str_eq(w.trig.name, "PerfInfo/SampleProf");
    ck_assert_uint_eq(w.trig.u.sample.instruction_pointer, 0xffffffff81000000ull);
    ck_assert_uint_eq(w.trig.u.sample.tid, 1240);
    ck_assert_uint_eq(w.trig.u.sample.profile_source, 0);
    ck_assert_int_eq(w.stack.u.stack.event_timestamp, ts);
    ck_assert_uint_eq(w.stack.u.stack.pid, 1234);
    ck_assert_uint_eq(w.stack.u.stack.tid, 1240);
    ck_assert_uint_eq(w.stack.u.stack.frame_count, 2);
    ck_assert_uint_eq(w.frames[0], 0x401000);
    ck_assert_uint_eq(w.frames[1], 0x402000);
    ck_assert_int_eq(w.lbr.timestamp, ts);
    ck_assert_uint_eq(w.lbr.pid, 1234);
    ck_assert_uint_eq(w.lbr.tid, 1240);
    ck_assert_uint_eq(w.lbr.filters, ETL_LBR_FILTER_KERNEL);
    ck_assert_uint_eq(w.lbr.count, 3);
    ck_assert_uint_eq(w.entries[0].from, 0x1000);
    ck_assert_uint_eq(w.entries[0].reserved, 1ull << 63 | 17);
    ck_assert_uint_eq(w.entries[2].to, 0x6000);
}
END_TEST

/* A PMC interrupt's sample: PMCSample with its profile source, no stack; a processor's buffer
   already past the sample's time moves all three to its time, together. */
START_TEST(pmc_trigger_and_a_later_buffer)
{
    etl_lbr_trigger_form f = { .trigger = 47, .profile_source = 6, .filters = 0, .stack = 0,
                               .sample_type = full_type, .branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX };
    etl_session *s = start_session("p.etl");
    int64_t ts = etl_session_timestamp(s), used = 0;
    struct written w;
    struct rec rec;

    build_full(&rec);
    memcpy(rec.b + 8 + 8 + 8, &ts, 8);
    ck_assert_int_eq(etl_lbr_write_perf_trigger(s, &f, rec.b, rec.n, ts + 1000, &used), ETL_OK);
    ck_assert_int_eq(used, ts + 1000);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    read_written("p.etl", &w);
    ck_assert_int_eq(w.triggers, 1);
    ck_assert_int_eq(w.stacks, 0);
    ck_assert_int_eq(w.lbrs, 1);
    ck_assert_int_eq(w.ts[0], ts + 1000);
    ck_assert_int_eq(w.ts[2], ts + 1000);
    ck_assert_int_eq(w.lbr.timestamp, ts + 1000);
    ck_assert_str_eq(w.trig.name, "PerfInfo/PMCSample");
    ck_assert_uint_eq(w.trig.u.sample.profile_source, 6);
    ck_assert_uint_eq(w.trig.u.sample.tid, 1240);
    ck_assert_uint_eq(w.trig.u.sample.instruction_pointer, 0xffffffff81000000ull);
}
END_TEST

/* The capture fails with its cause where it cannot run (this machine's processor or virtual
   machine may have no branch-stack sampling), and leaves nothing open. */
START_TEST(capture_fails_with_its_cause)
{
    etl_session *s = start_session("c.etl");
    etl_classic_event_id e[2] = { trigger(etl_group_guid(ETL_GROUP_THREAD), 36),
                                  trigger(etl_group_guid(ETL_GROUP_PERFINFO), 46) };
    etl_lbr_capture *c = (etl_lbr_capture *)&e; /* not NULL: the failures must set it */
    char err[512], probe_err[512] = "";
    int probe = etl_lbr_capture_probe(0, probe_err, sizeof probe_err);

    ASSERT_SESSION_FAILS_WITH(s, etl_lbr_capture_start(&c, s), "no LBR triggers");
    ck_assert_ptr_null(c);
    ASSERT_FAILS_WITH(etl_lbr_capture_probe(ETL_LBR_FILTER_JCC, err, sizeof err), "near_rel_jmp");
    etl_session_set_kernel_flags(s, FLAG_CSWITCH | FLAG_PROFILE);
    /* Context switches: no hardware counter's samples, so no branch stacks on Linux. */
    ck_assert_int_eq(etl_session_configure_lbr(s, 0, e, 1), ETL_OK);
    ASSERT_SESSION_FAILS_WITH(s, etl_lbr_capture_start(&c, s), "only with hardware counter samples");
    ck_assert_ptr_null(c);
    ck_assert_int_eq(etl_session_configure_lbr(s, 0, e + 1, 1), ETL_OK);
    /* The triggers are sampled in the kernel capture's rings: without one, nothing runs. */
    ASSERT_SESSION_FAILS_WITH(s, etl_lbr_capture_start(&c, s), "the session has no kernel events");
    ck_assert_ptr_null(c);
    if (probe != ETL_OK) ck_assert_msg(strncmp(probe_err, "LBR capture: ", 13) == 0, "%s", probe_err);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lbr");
    TCase *tc = tcase_create("lbr");

    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    tcase_add_test(tc, configure_validation);
    tcase_add_test(tc, trigger_and_filter_names);
    tcase_add_test(tc, filters_as_perf_branch_types);
    tcase_add_test(tc, perf_sample_into_entries);
    tcase_add_test(tc, perf_sample_damaged);
    tcase_add_test(tc, lbr_record_with_the_trigger_timestamp);
    tcase_add_test(tc, pmc_trigger_and_a_later_buffer);
    tcase_add_test(tc, capture_fails_with_its_cause);
    suite_add_tcase(s, tc);
    return check_run(s);
}
