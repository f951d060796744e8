/* SPDX-License-Identifier: MIT */
/* Linux's rules for the end of images and processes: what munmap and mremap remove of an image, and the ExitStatus that a process's exits and fatal signals decide. */
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "capture/capture.h"

/* ------------------------------------------------------------------ unloads and exit status */

int etl_kunmap_range(uint64_t addr, uint64_t len, uint64_t page, uint64_t *lo, uint64_t *hi)
{
    uint64_t pages = len / page + (len % page != 0);

    if (!page || addr % page || !len || pages > (UINT64_MAX - addr) / page) return -1;
    *lo = addr;
    *hi = addr + pages * page;
    return 0;
}

int etl_kmremap_range(uint64_t addr, uint64_t old_len, uint64_t new_len, uint64_t flags, uint64_t page,
                      uint64_t *lo, uint64_t *hi)
{
    const uint64_t maymove = 1, fixed = 2, dontunmap = 4; /* MREMAP_* */
    uint64_t old_lo, old_hi, new_lo, new_hi;

    if ((flags & ~(maymove | fixed | dontunmap)) || ((flags & (fixed | dontunmap)) && !(flags & maymove)) ||
        (flags & dontunmap))
        return -1; /* refused, or the old range stays mapped */
    if (etl_kunmap_range(addr, old_len, page, &old_lo, &old_hi) != 0 ||
        etl_kunmap_range(addr, new_len, page, &new_lo, &new_hi) != 0)
        return -1; /* refused (or old_len 0: a copy of a shared mapping, nothing removed) */
    *lo = flags & fixed ? old_lo : new_hi;
    *hi = old_hi;
    return *lo < *hi ? 0 : -1;
}

int etl_kunmap_image(uint64_t lo, uint64_t hi, uint64_t *code_lo, uint64_t *code_hi)
{
    if (hi <= *code_lo || lo >= *code_hi) return ETL_KUNMAP_KEPT;
    if (lo <= *code_lo && hi >= *code_hi) return ETL_KUNMAP_GONE;
    if (lo <= *code_lo) *code_lo = hi;
    else if (hi >= *code_hi) *code_hi = lo;
    else return ETL_KUNMAP_KEPT; /* a hole: code on both sides */
    return ETL_KUNMAP_SHRUNK;
}

int etl_ksignal_default(int sig)
{
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:             /* ignored, or continue */
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: return 0; /* stop */
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE: case SIGSEGV:
    case SIGXCPU: case SIGXFSZ: case SIGSYS: return 2;
    default: return sig > 0 && sig <= 64 ? 1 : 0;
    }
}

void etl_kexit_init(etl_kexit *x)
{
    memset(x, 0, sizeof *x);
    x->group_ts = x->fatal_ts = x->kill_ts = x->leader_ts = INT64_MAX;
}

void etl_kexit_group(etl_kexit *x, int64_t ts, int64_t code)
{
    if (ts >= x->group_ts) return;
    x->group_ts = ts;
    x->group_code = (int)(code & 0xFF); /* what waitpid's WEXITSTATUS gives */
}

void etl_kexit_leader(etl_kexit *x, int64_t ts, int64_t code)
{
    if (ts >= x->leader_ts) return;
    x->leader_ts = ts;
    x->leader_code = (int)(code & 0xFF);
}

void etl_kexit_forget(etl_kexit *x, int64_t ts)
{
    unsigned o = 0;

    if (x->group_ts < ts) x->group_ts = INT64_MAX;
    if (x->fatal_ts < ts) x->fatal_ts = INT64_MAX;
    if (x->kill_ts < ts) x->kill_ts = INT64_MAX;
    if (x->leader_ts < ts) x->leader_ts = INT64_MAX;
    for (unsigned i = 0; i < x->nsent; i++)
        if (x->sent[i].ts >= ts) x->sent[o++] = x->sent[i];
    x->nsent = o;
}

/* Keeps the ETL_KEXIT_SIGNALS latest of x->sent in time order. */
static void kexit_note(etl_kexit *x, int64_t ts, int sig)
{
    unsigned i;

    if (x->nsent == ETL_KEXIT_SIGNALS) {
        if (ts < x->sent[0].ts) return;
        memmove(x->sent, x->sent + 1, (ETL_KEXIT_SIGNALS - 1) * sizeof x->sent[0]);
        x->nsent--;
    }
    for (i = x->nsent; i > 0 && x->sent[i - 1].ts > ts; i--) x->sent[i] = x->sent[i - 1];
    x->sent[i].ts = ts;
    x->sent[i].sig = sig;
    x->nsent++;
}

void etl_kexit_sent(etl_kexit *x, int64_t ts, int sig)
{
    if (etl_ksignal_default(sig) == 1) kexit_note(x, ts, sig);
}

void etl_kexit_delivered(etl_kexit *x, int64_t ts, int sig, int dfl)
{
    int action = etl_ksignal_default(sig);

    if (!dfl) {
        if (action == 1) kexit_note(x, ts, -sig); /* caught or ignored: it decided nothing */
    } else if (action && sig == SIGKILL) {
        if (ts < x->kill_ts) x->kill_ts = ts;
    } else if (action && ts < x->fatal_ts) {
        x->fatal_ts = ts;
        x->fatal_sig = sig;
    }
}

/* The signal a SIGKILL delivered at ts stands for: when a signal whose default action kills is
   sent to a process that does not catch it, the kernel decides the group exit with that signal
   at once and the threads then die of SIGKILL. The latest such signal sent before ts and not
   delivered to a handler since; else SIGKILL itself. */
static int kexit_killer(const etl_kexit *x, int64_t ts)
{
    for (unsigned i = x->nsent; i-- > 0;) {
        int caught = 0;
        if (x->sent[i].ts > ts || x->sent[i].sig < 0) continue;
        for (unsigned j = i + 1; j < x->nsent && x->sent[j].ts <= ts; j++)
            if (x->sent[j].sig == -x->sent[i].sig) caught = 1;
        if (!caught) return x->sent[i].sig;
    }
    return SIGKILL;
}

int etl_kexit_status(const etl_kexit *x, int64_t end_ts, int32_t *status)
{
    int64_t first = x->group_ts;

    if (x->fatal_ts < first) first = x->fatal_ts;
    if (x->kill_ts < first) first = x->kill_ts;
    *status = 0;
    if (first <= end_ts) {
        if (first == x->group_ts) *status = x->group_code;
        else if (first == x->fatal_ts) *status = 128 + x->fatal_sig;
        else *status = 128 + kexit_killer(x, first);
        return 1;
    }
    if (x->leader_ts <= end_ts) {
        *status = x->leader_code;
        return 1;
    }
    return 0;
}

