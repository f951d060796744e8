/* SPDX-License-Identifier: MIT */
/* LBR configuration of sessions (TraceConfigureLastBranchRecord), its names, and perf branch stacks into LBR records. */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"
#include "capture/kcapture.h"
#include "capture/lbr.h"

/* EVENT_TRACE_FLAG_* (EnableFlags) of the kernel events an LBR trigger may name. */
#define TRACE_FLAG_PROCESS    0x00000001u
#define TRACE_FLAG_THREAD     0x00000002u
#define TRACE_FLAG_IMAGE_LOAD 0x00000004u
#define TRACE_FLAG_CSWITCH    0x00000010u
#define TRACE_FLAG_SYSTEMCALL 0x00000080u
#define TRACE_FLAG_DISK_IO    0x00000100u
#define TRACE_FLAG_DISPATCHER 0x00000800u
#define TRACE_FLAG_PROFILE    0x01000000u

/* Which flag produces which kernel event (group, type); type -1: every type of the group. */
static const struct {
    uint8_t group;
    int type;
    uint32_t flag;
} kernel_events[] = {
    { ETL_GROUP_PROCESS, -1, TRACE_FLAG_PROCESS },
    { ETL_GROUP_THREAD, 36, TRACE_FLAG_CSWITCH },     /* CSwitch */
    { ETL_GROUP_THREAD, 50, TRACE_FLAG_DISPATCHER },  /* ReadyThread */
    { ETL_GROUP_THREAD, 1, TRACE_FLAG_THREAD },       /* Start, End, DCStart, DCEnd */
    { ETL_GROUP_THREAD, 2, TRACE_FLAG_THREAD },
    { ETL_GROUP_THREAD, 3, TRACE_FLAG_THREAD },
    { ETL_GROUP_THREAD, 4, TRACE_FLAG_THREAD },
    { ETL_GROUP_IMAGE, -1, TRACE_FLAG_IMAGE_LOAD },
    { ETL_GROUP_PERFINFO, 46, TRACE_FLAG_PROFILE },   /* SampledProfile */
    { ETL_GROUP_PERFINFO, 47, TRACE_FLAG_PROFILE },   /* PMC interrupt: a profile source's sample */
    { ETL_GROUP_PERFINFO, 51, TRACE_FLAG_SYSTEMCALL }, /* SysClEnter, SysClExit */
    { ETL_GROUP_PERFINFO, 52, TRACE_FLAG_SYSTEMCALL },
    { 0x01 /* DiskIo */, -1, TRACE_FLAG_DISK_IO },
};

/* The names etlrecord's --kernel gives those flags. */
static const struct {
    uint32_t flag;
    const char *name;
} flag_names[] = {
    { TRACE_FLAG_PROCESS, "process" },       { TRACE_FLAG_THREAD, "thread" },   { TRACE_FLAG_IMAGE_LOAD, "image_load" },
    { TRACE_FLAG_CSWITCH, "cswitch" },       { TRACE_FLAG_SYSTEMCALL, "syscall" }, { TRACE_FLAG_DISK_IO, "disk_io" },
    { TRACE_FLAG_DISPATCHER, "dispatcher" }, { TRACE_FLAG_PROFILE, "profile" },
};

static const struct {
    const char *name;
    uint8_t group, type;
} trigger_names[] = {
    { "profile", ETL_GROUP_PERFINFO, 46 },
    { "pmc", ETL_GROUP_PERFINFO, 47 },
    { "cswitch", ETL_GROUP_THREAD, 36 },
    { "readythread", ETL_GROUP_THREAD, 50 },
};

static const struct {
    const char *name;
    uint32_t flag;
} filter_names[] = {
    { "kernel", ETL_LBR_FILTER_KERNEL },
    { "user", ETL_LBR_FILTER_USER },
    { "jcc", ETL_LBR_FILTER_JCC },
    { "near_rel_call", ETL_LBR_FILTER_NEAR_REL_CALL },
    { "near_ind_call", ETL_LBR_FILTER_NEAR_IND_CALL },
    { "near_ret", ETL_LBR_FILTER_NEAR_RET },
    { "near_ind_jmp", ETL_LBR_FILTER_NEAR_IND_JMP },
    { "near_rel_jmp", ETL_LBR_FILTER_NEAR_REL_JMP },
    { "far_branch", ETL_LBR_FILTER_FAR_BRANCH },
    { "callstack", ETL_LBR_CALLSTACK },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Guards every session's configuration: configuring is rare, and readers copy it. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- names ---- */

int etl_lbr_trigger_parse(const char *text, etl_classic_event_id *out)
{
    char guid[64];
    const char *colon;
    char *end;
    unsigned long type;

    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < N(trigger_names); i++)
        if (strcasecmp(text, trigger_names[i].name) == 0) {
            out->event_guid = *etl_group_guid(trigger_names[i].group);
            out->type = trigger_names[i].type;
            return ETL_OK;
        }
    colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof guid || !colon[1] || colon[1] == '-' || colon[1] == '+')
        return ETL_FAILED;
    memcpy(guid, text, (size_t)(colon - text));
    guid[colon - text] = '\0';
    errno = 0;
    type = strtoul(colon + 1, &end, 0);
    if (errno || *end || type > 255 || etl_guid_parse(guid, &out->event_guid) != ETL_OK) return ETL_FAILED;
    out->type = (uint8_t)type;
    return ETL_OK;
}

int etl_lbr_filter_parse(const char *list, uint32_t *flags, char *err, size_t errsize)
{
    const char *p = list;

    *flags = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        unsigned i;
        for (i = 0; i < N(filter_names); i++)
            if (strlen(filter_names[i].name) == len && strncasecmp(p, filter_names[i].name, len) == 0) break;
        if (i == N(filter_names)) {
            snprintf(err, errsize, "unknown LBR filter '%.*s' (kernel, user, jcc, near_rel_call, near_ind_call, "
                     "near_ret, near_ind_jmp, near_rel_jmp, far_branch, callstack)", (int)(len > 64 ? 64 : len), p);
            return ETL_FAILED;
        }
        *flags |= filter_names[i].flag;
        p += len;
        if (*p == ',') p++;
    }
    return ETL_OK;
}

/* "GUID:TYPE (Group name, trigger name)" for messages. */
static void describe(const etl_classic_event_id *e, char *out, size_t size)
{
    char g[ETL_GUID_STRING_SIZE];
    const char *group = etl_guid_name(&e->event_guid), *name = NULL;

    for (unsigned i = 0; i < N(trigger_names); i++)
        if (etl_guid_equal(etl_group_guid(trigger_names[i].group), &e->event_guid) && trigger_names[i].type == e->type)
            name = trigger_names[i].name;
    snprintf(out, size, "%s:%u%s%s%s%s%s", etl_guid_format(&e->event_guid, g), e->type, group || name ? " (" : "",
             group ? group : "", group && name ? " " : "", name ? name : "", group || name ? ")" : "");
}

/* ---- configuration ---- */

uint32_t etl_lbr_kernel_flag_for(const etl_guid *guid, uint8_t type, int *is_kernel)
{
    unsigned group;

    for (group = 0; group < ETL_GROUP_COUNT && !etl_guid_equal(etl_group_guid(group), guid); group++) {}
    *is_kernel = group < ETL_GROUP_COUNT;
    for (unsigned i = 0; *is_kernel && i < N(kernel_events); i++)
        if (kernel_events[i].group == group && (kernel_events[i].type < 0 || kernel_events[i].type == type))
            return kernel_events[i].flag;
    return 0;
}

static const char *flag_name(uint32_t flag)
{
    for (unsigned i = 0; i < N(flag_names); i++)
        if (flag_names[i].flag == flag) return flag_names[i].name;
    return "?";
}

/* 0 when s produces trigger e, else -1 with why in err. */
static int trigger_enabled(etl_session *s, const etl_classic_event_id *e, char *err, size_t errsize)
{
    char what[160];
    int kernel;
    uint32_t flag = etl_lbr_kernel_flag_for(&e->event_guid, e->type, &kernel);

    if (!kernel && etl_session_provider_enabled(s, &e->event_guid)) return 0;
    if (kernel && flag && (etl_session_kernel_flags(s) & flag)) return 0;
    describe(e, what, sizeof what);
    if (!kernel)
        snprintf(err, errsize, "LBR trigger %s is not enabled in the session: enable its provider first", what);
    else if (!flag)
        snprintf(err, errsize, "LBR trigger %s: no kernel flag of libetl produces this kernel event", what);
    else
        snprintf(err, errsize, "LBR trigger %s is not enabled in the session: it needs the kernel flag '%s'", what,
                 flag_name(flag));
    return -1;
}

int etl_session_configure_lbr(etl_session *s, uint32_t flags, const etl_classic_event_id *events, unsigned count,
                              char *err, size_t errsize)
{
    etl_lbr_config c;

    if (flags & ~ETL_LBR_FLAGS_VALID) {
        snprintf(err, errsize, "LBR flags 0x%x: unknown bits 0x%x%s", flags, flags & ~ETL_LBR_FLAGS_VALID,
                 (flags & ETL_LBR_SAMPLED) ? " (EVNTRACE_LBR_SAMPLED is for ARM64's sampled branch records)" : "");
        return ETL_FAILED;
    }
    if (count > ETL_LBR_MAX_EVENTS) {
        snprintf(err, errsize, "%u LBR triggers: at most %d (EVNTRACE_MAX_LBR_EVENTS)", count, ETL_LBR_MAX_EVENTS);
        return ETL_FAILED;
    }
    if (count && !events) {
        snprintf(err, errsize, "%u LBR triggers, but no array of them", count);
        return ETL_FAILED;
    }
    memset(&c, 0, sizeof c);
    c.flags = count ? flags : 0;
    c.count = count;
    for (unsigned i = 0; i < count; i++) {
        if (etl_lbr_trigger_matches(&c, &events[i].event_guid, events[i].type)) {
            char what[160];
            describe(&events[i], what, sizeof what);
            snprintf(err, errsize, "LBR trigger %s is given twice", what);
            return ETL_FAILED;
        }
        if (trigger_enabled(s, &events[i], err, errsize) != 0) return ETL_FAILED;
        c.events[i].event_guid = events[i].event_guid;
        c.events[i].type = events[i].type;
    }
    pthread_mutex_lock(&config_lock);
    *etl_session_lbr_slot(s) = c;
    pthread_mutex_unlock(&config_lock);
    return ETL_OK;
}

void etl_session_lbr_config(etl_session *s, etl_lbr_config *out)
{
    pthread_mutex_lock(&config_lock);
    *out = *etl_session_lbr_slot(s);
    pthread_mutex_unlock(&config_lock);
}

int etl_lbr_trigger_matches(const etl_lbr_config *cfg, const etl_guid *guid, uint8_t type)
{
    for (unsigned i = 0; i < cfg->count && i < ETL_LBR_MAX_EVENTS; i++)
        if (cfg->events[i].type == type && etl_guid_equal(&cfg->events[i].event_guid, guid)) return 1;
    return 0;
}

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
    uint16_t hook = f->trigger == 47 ? ETL_KHOOK_PMC_SAMPLE : ETL_KHOOK_SAMPLED_PROFILE;
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
        if (etl_kwrite(s, ts, ETL_KHOOK_STACK, 0, 0, payload,
                       etl_kpayload_stack(payload, sizeof payload, ts, smp.pid, smp.tid, frames, nframes)) != ETL_OK)
            rc = ETL_FAILED;
    }
    if (etl_session_write_lbr(s, ts, smp.pid, smp.tid, f->filters, entries, smp.written) != ETL_OK) rc = ETL_FAILED;
    return rc;
}
