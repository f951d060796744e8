/* SPDX-License-Identifier: MIT */
/* Restartable sequences (Linux rseq) for the session's per-processor write path. Private to libetl. */
#ifndef LIBETL_RSEQ_H
#define LIBETL_RSEQ_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/rseq.h is private to libetl: include <etl.h>"
#endif

#include <stdint.h>

/*
 * A restartable sequence is a stretch of code that the kernel restarts (by jumping to its
 * abort handler) if the thread is preempted, migrated or signalled while inside it. A thread
 * that reads its processor number and then writes that processor's buffer inside one
 * sequence therefore owns the buffer for the whole stretch without a lock prefix: every
 * other thread that touches the buffer runs on the same processor, and it could only have
 * run by preempting us, which restarts us. The last instruction of a sequence is its one
 * commit store.
 *
 * The session uses two sequences on x86-64 (elsewhere, or where the kernel or the C library
 * gives no rseq area, it falls back to compare-and-swap reservation):
 *   etl_rseq_append  copy a finished record into the current buffer of this processor and
 *                    move the buffer's offset past it (the commit);
 *   etl_rseq_swap    replace this processor's current buffer by another (or none), if it is
 *                    still the one the caller saw. After it the old buffer is complete: its
 *                    offset is final, as no append on that processor can be half done.
 */

/* The per-thread area the kernel updates (include/uapi/linux/rseq.h, 32 bytes as registered). */
struct etl_rseq_abi {
    uint32_t cpu_id_start;
    uint32_t cpu_id;       /* the processor the thread runs on; ~0u before registration */
    uint64_t rseq_cs;      /* the descriptor of the sequence being run, or 0 */
    uint32_t flags;
    uint32_t node_id;
    uint32_t mm_cid;
    uint32_t padding;
} __attribute__((aligned(32)));

/* What a sequence writes: the first bytes of a buffer's bookkeeping. */
struct etl_rseq_cursor {
    uint32_t off;          /* end of the records written so far */
    uint32_t limit;        /* the buffer size */
    uint8_t *data;         /* the buffer */
};

/* Per thread: its rseq area, ETL_RSEQ_NONE when it has none, NULL before the first look. */
#define ETL_RSEQ_NONE ((struct etl_rseq_abi *)1)
extern _Thread_local struct etl_rseq_abi *etl_rseq_tls __attribute__((tls_model("initial-exec")));

/* Looks up (registering if the C library did not) the calling thread's rseq area. */
struct etl_rseq_abi *etl_rseq_thread_area_slow(void);

/* The calling thread's rseq area, registered by the C library (glibc 2.35 and later) or by
   libetl, or NULL when the kernel offers none. */
static inline struct etl_rseq_abi *etl_rseq_thread_area(void)
{
    struct etl_rseq_abi *a = etl_rseq_tls;

    if (__builtin_expect(a != NULL && a != ETL_RSEQ_NONE, 1)) return a;
    return a ? NULL : etl_rseq_thread_area_slow();
}

/*
 * ThreadSanitizer cannot see the ordering that sequences give (two sequences that touch a
 * processor's slot run on that processor one after the other), so the code that installs or
 * takes a buffer through a slot tells it: a release when a buffer goes in or out of a slot,
 * an acquire before a thread uses what it found there. Nothing in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define ETL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ETL_TSAN 1
#endif
#endif
#if defined(ETL_TSAN)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define ETL_HB_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#define ETL_HB_RELEASE(addr) __tsan_release((void *)(addr))
#else
#define ETL_HB_ACQUIRE(addr) ((void)0)
#define ETL_HB_RELEASE(addr) ((void)0)
#endif

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
#define ETL_HAVE_RSEQ 1

/* The signature before every abort handler; glibc registers x86 threads with it. */
#define ETL_RSEQ_SIG 0x53053053

/* The descriptor of a sequence [start, post_commit) with its abort handler, in __rseq_cs. */
#define ETL_RSEQ_DEFINE_CS(label, start, post_commit, abort)                         \
    ".pushsection __rseq_cs, \"aw\"\n\t"                                             \
    ".balign 32\n\t"                                                                 \
    #label ":\n\t"                                                                   \
    ".long 0x0, 0x0\n\t"                                                             \
    ".quad " #start "f, (" #post_commit "f - " #start "f), " #abort "f\n\t"         \
    ".popsection\n\t"                                                                \
    ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"                                   \
    ".quad " #label "b\n\t"                                                          \
    ".popsection\n\t"

/* The abort handler: the signature (as the operand of a ud1, so disassemblers stay in step),
   then a jump back into C. */
#define ETL_RSEQ_DEFINE_ABORT(label, target)                                          \
    ".pushsection __rseq_failure, \"ax\"\n\t"                                        \
    ".byte 0x0f, 0xb9, 0x3d\n\t"                                                     \
    ".long 0x53053053\n\t"                                                           \
    #label ":\n\t"                                                                   \
    "jmp %l[" #target "]\n\t"                                                        \
    ".popsection\n\t"

/*
 * Append len bytes from src to the current buffer of the processor the thread runs on
 * (slots[cpu]). Returns 0 when done, 1 when there is no current buffer or no room in it (or
 * the processor is beyond nslots), -1 when the kernel restarted the sequence (try again).
 */
static inline int etl_rseq_append(struct etl_rseq_abi *rs, struct etl_rseq_cursor *const *slots, uint32_t nslots,
                                  const void *src, uint64_t len)
{
    __asm__ goto(ETL_RSEQ_DEFINE_CS(3, 1, 2, 4)
                 "leaq 3b(%%rip), %%rax\n\t"
                 "movq %%rax, %[rseq_cs]\n\t"
                 "1:\n\t"
                 "movl %[cpu_id], %%eax\n\t"
                 "cmpl %[nslots], %%eax\n\t"
                 "jae %l[slow]\n\t"
                 "movq (%[slots], %%rax, 8), %%rdx\n\t"
                 "testq %%rdx, %%rdx\n\t"
                 "jz %l[slow]\n\t"
                 "movl (%%rdx), %%eax\n\t"          /* off */
                 "leaq (%%rax, %[len]), %%rcx\n\t"   /* off + len */
                 "movl 4(%%rdx), %%esi\n\t"          /* limit */
                 "cmpq %%rsi, %%rcx\n\t"
                 "ja %l[slow]\n\t"
                 "movq 8(%%rdx), %%rdi\n\t"
                 "addq %%rax, %%rdi\n\t"
                 "xorl %%ecx, %%ecx\n\t"
                 "5:\n\t"                          /* copy word by word: the loads match */
                 "movq (%[src], %%rcx), %%rsi\n\t" /* the encoder's stores, which forward */
                 "movq %%rsi, (%%rdi, %%rcx)\n\t"
                 "addq $8, %%rcx\n\t"
                 "cmpq %[len], %%rcx\n\t"
                 "jb 5b\n\t"
                 "addl %k[len], %%eax\n\t"
                 "movl %%eax, (%%rdx)\n\t"            /* commit */
                 "2:\n\t"
                 ETL_RSEQ_DEFINE_ABORT(4, aborted)
                 :
                 : [rseq_cs] "m"(rs->rseq_cs), [cpu_id] "m"(rs->cpu_id), [slots] "r"(slots), [nslots] "r"(nslots),
                   [src] "r"(src), [len] "r"(len)
                 : "memory", "cc", "rax", "rcx", "rdx", "rsi", "rdi"
                 : slow, aborted);
    return 0;
slow:
    return 1;
aborted:
    return -1;
}

/*
 * If the thread runs on processor cpu and slots[cpu] is still expect, store mark_value at
 * *mark (the taken buffer's holder: who has it in hand once it leaves the slot) and make the
 * slot fresh. Returns 0 when done, 1 when the thread is on another processor or the slot
 * changed (nothing stored), -1 when the kernel restarted the sequence (the mark may be stored,
 * the slot is not changed).
 */
static inline int etl_rseq_swap(struct etl_rseq_abi *rs, struct etl_rseq_cursor **slots, uint32_t cpu,
                                struct etl_rseq_cursor *expect, struct etl_rseq_cursor *fresh,
                                int32_t *mark, int32_t mark_value)
{
    __asm__ goto(ETL_RSEQ_DEFINE_CS(3, 1, 2, 4)
                 "leaq 3b(%%rip), %%rax\n\t"
                 "movq %%rax, %[rseq_cs]\n\t"
                 "1:\n\t"
                 "cmpl %[cpu], %[cpu_id]\n\t"
                 "jne %l[other]\n\t"
                 "cmpq %[expect], (%[slot])\n\t"
                 "jne %l[other]\n\t"
                 "movl %[mval], (%[mark])\n\t"
                 "movq %[fresh], (%[slot])\n\t"     /* commit */
                 "2:\n\t"
                 ETL_RSEQ_DEFINE_ABORT(4, aborted)
                 :
                 : [rseq_cs] "m"(rs->rseq_cs), [cpu_id] "m"(rs->cpu_id), [cpu] "r"(cpu), [slot] "r"(slots + cpu),
                   [expect] "r"(expect), [fresh] "r"(fresh), [mark] "r"(mark), [mval] "r"(mark_value)
                 : "memory", "cc", "rax"
                 : other, aborted);
    return 0;
other:
    return 1;
aborted:
    return -1;
}

#endif

#endif
