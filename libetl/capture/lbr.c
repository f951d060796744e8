/* SPDX-License-Identifier: MIT */
/* perf branch stacks into LBR records: LBR filters as perf's branch_sample_type, perf samples decoded, a trigger's sample written with its stack and LBR record, and perf_event_open's failures explained. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- perf ---- */

/*
 * The ETL_LBR_FILTER_* bits are the processor's LBR_SELECT bits, which filter branches out;
 * perf's branch_sample_type names the branches to keep. Kept privilege levels and branch
 * types map one to one, except that perf has no type for direct near jumps or far branches
 * alone: those are kept only with every type (PERF_SAMPLE_BRANCH_ANY), so a configuration
 * that filters some types out must filter both of them out too. perf's ANY_RETURN also keeps
 * far returns.
 */
int etl_lbr_perf_branch_type(uint32_t flags, uint64_t *out, char *err, size_t errsize)
{
    const uint32_t types = ETL_LBR_FILTER_JCC | ETL_LBR_FILTER_NEAR_REL_CALL | ETL_LBR_FILTER_NEAR_IND_CALL |
                           ETL_LBR_FILTER_NEAR_RET | ETL_LBR_FILTER_NEAR_IND_JMP | ETL_LBR_FILTER_NEAR_REL_JMP |
                           ETL_LBR_FILTER_FAR_BRANCH;
    const uint32_t unmapped = ETL_LBR_FILTER_NEAR_REL_JMP | ETL_LBR_FILTER_FAR_BRANCH;
    uint64_t t = 0;

    *out = 0;
    if (flags & ~ETL_LBR_FLAGS_VALID) {
        snprintf(err, errsize, "LBR flags 0x%x: unknown bits 0x%x", flags, flags & ~ETL_LBR_FLAGS_VALID);
        return -1;
    }
    if (!(flags & ETL_LBR_FILTER_KERNEL)) t |= PERF_SAMPLE_BRANCH_KERNEL;
    if (!(flags & ETL_LBR_FILTER_USER)) t |= PERF_SAMPLE_BRANCH_USER;
    if (!t) {
        snprintf(err, errsize, "LBR filters kernel and user filter out every branch: nothing would be recorded");
        return -1;
    }
    if (!(flags & types)) {
        t |= PERF_SAMPLE_BRANCH_ANY;
    } else {
        if ((flags & unmapped) != unmapped) {
            snprintf(err, errsize, "LBR filters: perf cannot keep direct near jumps (near_rel_jmp) or far branches "
                     "(far_branch) without keeping every kind of branch; filter both out as well, or no kind");
            return -1;
        }
        if (!(flags & ETL_LBR_FILTER_JCC)) t |= PERF_SAMPLE_BRANCH_COND;
        if (!(flags & ETL_LBR_FILTER_NEAR_REL_CALL)) t |= PERF_SAMPLE_BRANCH_CALL;
        if (!(flags & ETL_LBR_FILTER_NEAR_IND_CALL)) t |= PERF_SAMPLE_BRANCH_IND_CALL;
        if (!(flags & ETL_LBR_FILTER_NEAR_RET)) t |= PERF_SAMPLE_BRANCH_ANY_RETURN;
        if (!(flags & ETL_LBR_FILTER_NEAR_IND_JMP)) t |= PERF_SAMPLE_BRANCH_IND_JUMP;
        if ((flags & types) == types) {
            snprintf(err, errsize, "LBR filters filter out every kind of branch: nothing would be recorded");
            return -1;
        }
    }
    if (flags & ETL_LBR_CALLSTACK) t |= PERF_SAMPLE_BRANCH_CALL_STACK;
    *out = t;
    return 0;
}

static uint64_t ne64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t ne32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* perf_branch_entry's third word (bit 0 mispred, 1 predicted, 2 in_tx, 3 abort, 4..19 cycles)
   as LBR_INFO (bit 63 mispred, 62 in_tx, 61 abort, 15..0 cycles). */
static uint64_t lbr_info(uint64_t f)
{
    return (f & 1) << 63 | ((f >> 2) & 1) << 62 | ((f >> 3) & 1) << 61 | ((f >> 4) & 0xFFFF);
}

int etl_lbr_perf_sample_decode(const uint8_t *rec, size_t size, uint64_t sample_type, uint64_t branch_sample_type,
                               etl_lbr_perf_sample *out, etl_lbr_entry *entries, unsigned max, const char **why)
{
    /* The fields before PERF_SAMPLE_READ, each one u64 (TID and CPU are two u32). */
    static const uint64_t fixed[] = { PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                                      PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                                      PERF_SAMPLE_PERIOD };
    size_t off = sizeof(struct perf_event_header), n;
    uint64_t nr;

    memset(out, 0, sizeof *out);
    if (size < off) {
        *why = "shorter than a perf_event_header";
        return -1;
    }
    if (ne32(rec) != PERF_RECORD_SAMPLE) {
        *why = "not a PERF_RECORD_SAMPLE";
        return -1;
    }
    /* header.size (u16 at 6) bounds the record too. */
    n = (size_t)rec[6] | (size_t)rec[7] << 8;
    if (n < size) size = n;
    if (size < off) {
        *why = "its header's size is smaller than the header";
        return -1;
    }
    if (sample_type & PERF_SAMPLE_READ) {
        *why = "PERF_SAMPLE_READ samples are not parsed";
        return -1;
    }
    if (!(sample_type & PERF_SAMPLE_BRANCH_STACK)) {
        *why = "the sample has no branch stack (PERF_SAMPLE_BRANCH_STACK)";
        return -1;
    }
    for (unsigned i = 0; i < N(fixed); i++) {
        if (!(sample_type & fixed[i])) continue;
        if (size - off < 8) {
            *why = "shorter than its fixed fields";
            return -1;
        }
        if (fixed[i] == PERF_SAMPLE_TID) {
            out->pid = ne32(rec + off);
            out->tid = ne32(rec + off + 4);
        }
        else if (fixed[i] == PERF_SAMPLE_IP) out->ip = ne64(rec + off);
        else if (fixed[i] == PERF_SAMPLE_TIME) out->time = ne64(rec + off);
        else if (fixed[i] == PERF_SAMPLE_CPU) out->cpu = ne32(rec + off);
        off += 8;
    }
    if (sample_type & PERF_SAMPLE_CALLCHAIN) {
        if (size - off < 8 || (nr = ne64(rec + off)) > (size - off - 8) / 8) {
            *why = "its call chain runs past its end";
            return -1;
        }
        out->callchain = rec + off + 8;
        out->callchain_nr = (unsigned)nr;
        off += 8 + (size_t)nr * 8;
    }
    if (sample_type & PERF_SAMPLE_RAW) {
        if (size - off < 4 || ne32(rec + off) > size - off - 4) {
            *why = "its raw data runs past its end";
            return -1;
        }
        off += 4 + ne32(rec + off);
    }
    if (size - off < 8) {
        *why = "its branch stack runs past its end";
        return -1;
    }
    nr = ne64(rec + off);
    off += 8;
    if (branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
        if (size - off < 8) {
            *why = "its branch stack runs past its end";
            return -1;
        }
        off += 8;
    }
    if (nr > (size - off) / 24) {
        *why = "its branch stack runs past its end";
        return -1;
    }
    out->count = (unsigned)nr;
    for (unsigned i = 0; i < out->count && i < max; i++, off += 24) {
        entries[i].from = ne64(rec + off);
        entries[i].to = ne64(rec + off + 8);
        entries[i].reserved = lbr_info(ne64(rec + off + 16));
        out->written++;
    }
    return 0;
}

/* Branches written at most from one sample (perf's deepest stacks hold 32). */
#define MAX_BRANCHES 128

unsigned etl_perf_callchain_frames(const uint8_t *chain, uint64_t nr, uint64_t *frames, unsigned max)
{
    unsigned n = 0;

    for (uint64_t i = 0; i < nr; i++) {
        uint64_t a = ne64(chain + 8 * (size_t)i);
        if (a >= (uint64_t)PERF_CONTEXT_MAX || a == 0) continue; /* kernel/user markers; a user stack's end */
        if (n < max) frames[n++] = a;
    }
    return n;
}

int etl_lbr_write_perf_trigger(etl_session *s, const etl_lbr_trigger_form *f, const uint8_t *rec, size_t size,
                               int64_t min_ts, int64_t *used_ts)
{
    etl_lbr_entry entries[MAX_BRANCHES];
    uint64_t frames[ETL_PROVIDER_MAX_STACK];
    uint8_t payload[16 + 8 * ETL_PROVIDER_MAX_STACK];
    etl_lbr_perf_sample smp;
    const char *why;
    unsigned nframes = 0;
    uint16_t hook = f->trigger == 47 ? ETL_HOOK_PMC_SAMPLE : ETL_HOOK_SAMPLED_PROFILE;
    int64_t ts;
    int rc = ETL_OK;

    if (etl_lbr_perf_sample_decode(rec, size, f->sample_type, f->branch_sample_type, &smp, entries, MAX_BRANCHES,
                                   &why) != 0)
        return ETL_FAILED;
    ts = (int64_t)smp.time < min_ts ? min_ts : (int64_t)smp.time;
    if (used_ts) *used_ts = ts;
    if (etl_kwrite(s, ts, hook, 0, 0, payload,
                   f->trigger == 47 ? etl_kpayload_pmc(payload, sizeof payload, smp.ip, smp.tid, f->profile_source)
                                    : etl_kpayload_sample(payload, sizeof payload, smp.ip, smp.tid)) != ETL_OK)
        rc = ETL_FAILED;
    if (f->stack && smp.callchain) {
        nframes = etl_perf_callchain_frames(smp.callchain, smp.callchain_nr, frames, ETL_PROVIDER_MAX_STACK);
        if (etl_kwrite(s, ts, ETL_HOOK_STACKWALK_STACK, 0, 0, payload,
                       etl_kpayload_stack(payload, sizeof payload, ts, smp.pid, smp.tid, frames, nframes)) != ETL_OK)
            rc = ETL_FAILED;
    }
    if (etl_session_write_lbr(s, ts, smp.pid, smp.tid, f->filters, entries, smp.written) != ETL_OK) rc = ETL_FAILED;
    return rc;
}

void etl_lbr_perf_cause(int e, const char *what, char *err, size_t errsize)
{
    const char *c;

    switch (e) {
    case EOPNOTSUPP: c = "this processor or virtual machine has no branch-stack sampling"; break;
    case ENOENT:
    case ENODEV:
        c = "this processor or virtual machine has no branch-stack sampling: it exposes no hardware performance "
            "counters";
        break;
    case EACCES:
    case EPERM: c = "not permitted: capturing branch stacks needs root (or kernel.perf_event_paranoid <= 0)"; break;
    case EINVAL: c = "the kernel refused these branch filters"; break;
    case ENOSYS: c = "this kernel has no perf_event_open"; break;
    default: c = "perf_event_open failed"; break;
    }
    snprintf(err, errsize, "LBR capture: %s (perf_event_open%s%s: %s)", c, what ? " of " : "", what ? what : "",
             strerror(e));
}
