/* SPDX-License-Identifier: MIT */
/* Instantiates the LTTng-UST tracepoint provider of sessionbench (linked statically into it). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
