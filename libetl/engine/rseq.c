/* SPDX-License-Identifier: MIT */
/* Finding (or registering) the calling thread's rseq area. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

_Thread_local struct etl_rseq_abi *etl_rseq_tls __attribute__((tls_model("initial-exec")));

#if defined(ETL_HAVE_RSEQ) && defined(__NR_rseq)

/* glibc 2.35 and later register every thread and say where: weak, so that older C
   libraries (which leave them null) still link. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static _Thread_local struct etl_rseq_abi own_area __attribute__((tls_model("initial-exec")));

struct etl_rseq_abi *etl_rseq_thread_area_slow(void)
{
    struct etl_rseq_abi *a = ETL_RSEQ_NONE;

    if (&__rseq_size && &__rseq_offset && __rseq_size >= 20) {
        char *tp;
        __asm__("movq %%fs:0, %0" : "=r"(tp));
        a = (struct etl_rseq_abi *)(tp + __rseq_offset);
    } else if (syscall(__NR_rseq, &own_area, (unsigned)sizeof own_area, 0, ETL_RSEQ_SIG) == 0) {
        a = &own_area;
    }
    etl_rseq_tls = a;
    return a == ETL_RSEQ_NONE ? NULL : a;
}

#else

struct etl_rseq_abi *etl_rseq_thread_area_slow(void)
{
    etl_rseq_tls = ETL_RSEQ_NONE;
    return NULL;
}

#endif
