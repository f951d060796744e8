/* SPDX-License-Identifier: MIT */
/* The kernel capture and LBR plugged into a session's controller (engine/control.c) as its hooks: the engine knows nothing of them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "etl.h"

/* Kernel events first: LBR's profile and pmc triggers are the kernel capture's samples. */
static int capture_start(void *arg, etl_session *s, char *err, size_t size)
{
    etl_controller_capture *cap = arg;

    cap->note[0] = '\0';
    if (cap->kernel_flags) {
        uint32_t interval = cap->profile_interval_us ? cap->profile_interval_us : 1000;
        if (etl_session_enable_kernel(s, cap->kernel_flags, cap->kernel_stackwalk, interval * 10) != ETL_OK) {
            etl_session_properties p;
            etl_session_properties_get(s, &p);
            snprintf(err, size, "session %s: %s", p.logger_name ? p.logger_name : "", etl_session_error(s));
            return ETL_FAILED;
        }
        snprintf(cap->note, sizeof cap->note, "%s", etl_session_kernel_note(s));
    }
    if (!cap->lbr_count) return ETL_OK;
    if (etl_session_configure_lbr(s, cap->lbr_flags, cap->lbr_events, cap->lbr_count) != ETL_OK ||
        etl_lbr_capture_start(&cap->lbr_capture, s) != ETL_OK) {
        snprintf(err, size, "%s", etl_session_error(s));
        return ETL_FAILED;
    }
    return ETL_OK;
}

/* Appends to out, which holds *n bytes; cut short (NUL-terminated) when full. */
__attribute__((format(printf, 4, 5))) static void add(char *out, size_t size, size_t *n, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (*n >= size) return;
    va_start(ap, fmt);
    k = vsnprintf(out + *n, size - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = *n + (size_t)k < size ? *n + (size_t)k : size;
}

static void capture_describe(void *arg, char *out, size_t size)
{
    etl_controller_capture *cap = arg;
    char names[ETL_KERNEL_FLAGS_NAMES_SIZE];
    size_t n = 0;

    if (!size) return;
    out[0] = '\0';
    if (cap->lbr_count) {
        add(out, size, &n, "LastBranchRecord %s\n", cap->lbr_text ? cap->lbr_text : "");
        if (cap->lbr_filter_text) add(out, size, &n, "LastBranchFilter %s\n", cap->lbr_filter_text);
    }
    if (cap->kernel_flags) {
        add(out, size, &n, "KernelFlags %s\n", etl_kernel_flags_format(cap->kernel_flags, names, sizeof names));
        if (cap->kernel_stackwalk)
            add(out, size, &n, "KernelStackWalk %s\n",
                etl_kernel_flags_format(cap->kernel_stackwalk, names, sizeof names));
        if (cap->kernel_flags & ETL_KERNEL_PROFILE)
            add(out, size, &n, "ProfileInterval %u\n", cap->profile_interval_us ? cap->profile_interval_us : 1000);
    }
}

/* The LBR capture's perf events are disabled before the session stops; the kernel capture ends
   with the session. */
static void capture_stop(void *arg)
{
    etl_controller_capture *cap = arg;

    etl_lbr_capture_stop(cap->lbr_capture);
    cap->lbr_capture = NULL;
}

/* A snapshot (or flush) has the kernel's events up to its request: the capture's readers hold
   them back a while (up to 2 s when one is slow to run); 3 s at most. */
static void capture_flush(void *arg, etl_session *s)
{
    etl_controller_capture *cap = arg;

    if (cap->kernel_flags) etl_session_kernel_sync(s, 3000);
}

void etl_controller_capture_hooks(etl_controller_capture *cap, etl_controller_hooks *hooks)
{
    memset(hooks, 0, sizeof *hooks);
    hooks->start = capture_start;
    hooks->describe = capture_describe;
    hooks->stop = capture_stop;
    hooks->flush = capture_flush;
    hooks->arg = cap;
    hooks->kernel = cap->kernel_flags != 0; /* the name "NT Kernel Logger" is this session's to take */
}
