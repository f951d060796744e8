/* SPDX-License-Identifier: MIT */
/* Unit tests of session hooks: what plugs into a session registers a table of functions that the session calls at its stop. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_run.h"
#include "etl.h"
#include "engine/engine.h"

static const etl_guid provider_guid = { 0x5f0c2a11, 0x7d3e, 0x4b19, { 0x9a, 0x51, 0x0e, 0x6b, 0x3c, 0x22, 0x81, 0x47 } };

/* What the hooks saw at the stop, in the order they were called. */
static struct call {
    const char *name;
    void *ctx;
    void *found_first;   /* the context of hook "first", looked up from inside the call */
    int wrote;           /* the session still took an event */
    int provider_on;     /* the provider of the test still enabled (by this session alone) */
} calls[8];
static unsigned ncalls;
static etl_provider *provider;

static void record(etl_session *s, void *ctx);
static const struct etl_session_hook first = { "first", record };
static const struct etl_session_hook second = { "second", record };
static const struct etl_session_hook third = { "third", record };
static const struct etl_session_hook unregistered = { "unregistered", record };

static void record(etl_session *s, void *ctx)
{
    static const etl_event_descriptor d = { .id = 1, .level = 4 };
    uint32_t v = 7;
    etl_data data = { &v, sizeof v };
    struct call *c;
    const char *name = ctx ? ((const struct etl_session_hook *)ctx)->name : "?";

    ck_assert_uint_lt(ncalls, sizeof calls / sizeof calls[0]);
    c = &calls[ncalls++];
    c->name = name;
    c->ctx = ctx;
    c->found_first = etl_session_hook_context(s, &first);
    c->wrote = etl_session_write_event(s, &provider_guid, &d, NULL, &data, 1) == ETL_OK;
    c->provider_on = provider ? etl_provider_enabled(provider, 4, 0) : -1;
}

static etl_session *start_session(void)
{
    etl_session_properties p = { .logger_name = "hook test", .buffer_size_kb = 4, .minimum_buffers = 16,
                                 .log_file_mode = ETL_MODE_BUFFERING };
    etl_session *s = NULL;

    ck_assert_msg(etl_session_start(&s, &p) == ETL_OK, "%s", etl_session_error(s));
    memset(calls, 0, sizeof calls);
    ncalls = 0;
    return s;
}

START_TEST(called_once_at_stop_last_registered_first)
{
    etl_session *s = start_session();
    etl_session_stats st;

    /* Each hook's context is its own table here, so that a call says whose it is. */
    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&first), ETL_OK);
    ck_assert_int_eq(etl_session_hook_add(s, &second, (void *)&second), ETL_OK);
    ck_assert_int_eq(etl_session_hook_add(s, &third, (void *)&third), ETL_OK);
    ck_assert_ptr_eq(etl_session_hook_context(s, &first), &first);
    ck_assert_ptr_eq(etl_session_hook_context(s, &second), &second);
    ck_assert_ptr_eq(etl_session_hook_context(s, &third), &third);
    ck_assert_ptr_null(etl_session_hook_context(s, &unregistered));
    ck_assert_uint_eq(ncalls, 0); /* nothing is called before the stop */

    ck_assert_int_eq(etl_session_stop(s, &st), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(ncalls, 3);
    ck_assert_str_eq(calls[0].name, "third");
    ck_assert_str_eq(calls[1].name, "second");
    ck_assert_str_eq(calls[2].name, "first");
    for (unsigned i = 0; i < ncalls; i++) {
        /* Every hook is still registered while the others are called, and the session still
           takes events. */
        ck_assert_ptr_eq(calls[i].found_first, &first);
        ck_assert_msg(calls[i].wrote, "hook %s: the session took no event", calls[i].name);
    }
    ck_assert_uint_eq(st.events_lost, 0);
}
END_TEST

START_TEST(registered_once_per_table)
{
    etl_session *s = start_session();

    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&first), ETL_OK);
    /* Again with the same context: nothing changes. */
    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&first), ETL_OK);
    /* With another: refused, the first registration stays. */
    errno = 0;
    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&second), ETL_FAILED);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_ptr_eq(etl_session_hook_context(s, &first), &first);
    /* A refused registration is no error of the session's. */
    ck_assert_str_eq(etl_session_error(s), "");

    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(ncalls, 1);
    ck_assert_ptr_eq(calls[0].ctx, &first);
}
END_TEST

/* The provider registry registers its hook at a session's first enable: the session leaves
   every provider's set at its stop, before the hooks registered earlier are called and after
   those registered later. */
START_TEST(provider_registry_hook)
{
    etl_session *s;

    ck_assert_int_eq(etl_provider_register(&provider, &provider_guid), ETL_OK);

    s = start_session();
    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&first), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &provider_guid, 5, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_enable_provider(s, &provider_guid, 4, 0, 0), ETL_OK); /* registered once */
    ck_assert_int_eq(etl_provider_enabled(provider, 4, 0), 1);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(ncalls, 1);
    ck_assert_int_eq(calls[0].provider_on, 0); /* the registry's hook came first */
    ck_assert_int_eq(etl_provider_enabled(provider, 4, 0), 0);

    s = start_session();
    ck_assert_int_eq(etl_session_enable_provider(s, &provider_guid, 5, 0, 0), ETL_OK);
    ck_assert_int_eq(etl_session_hook_add(s, &first, (void *)&first), ETL_OK);
    ck_assert_int_eq(etl_session_stop(s, NULL), ETL_OK);
    etl_session_close(s);
    ck_assert_uint_eq(ncalls, 1);
    ck_assert_int_eq(calls[0].provider_on, 1); /* ours came first: the session was still in the set */
    ck_assert_int_eq(etl_provider_enabled(provider, 4, 0), 0);

    etl_provider_unregister(provider);
    provider = NULL;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hook");
    TCase *tc = tcase_create("session hooks");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, called_once_at_stop_last_registered_first);
    tcase_add_test(tc, registered_once_per_table);
    tcase_add_test(tc, provider_registry_hook);
    suite_add_tcase(s, tc);
    return check_run(s);
}
