/* SPDX-License-Identifier: MIT */
/* The LTTng-UST tracepoint that sessionbench compares etl_session_write_event with: a 32-byte payload. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER libetl_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(LIBETL_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LIBETL_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

/* Four 64-bit integers: the same 32 bytes of payload as the ETL events of the benchmark. */
LTTNG_UST_TRACEPOINT_EVENT(
    libetl_bench,
    event32,
    LTTNG_UST_TP_ARGS(const uint64_t *, v),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, seq, v[0])
        lttng_ust_field_integer(uint64_t, thread, v[1])
        lttng_ust_field_integer(uint64_t, a, v[2])
        lttng_ust_field_integer(uint64_t, b, v[3])
    )
)

#endif /* LIBETL_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
