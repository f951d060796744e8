/* SPDX-License-Identifier: MIT */
/* LBR configuration of sessions (TraceConfigureLastBranchRecord): its names and filters, its triggers checked against what the session enables, and the kernel flag that produces each kernel trigger. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"

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
    { ETL_GROUP_DISK_IO, -1, TRACE_FLAG_DISK_IO },
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

static int configure(etl_session *s, uint32_t flags, const etl_classic_event_id *events, unsigned count, char *err,
                     size_t errsize)
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

/* The message goes on the session (etl_session_error). */
int etl_session_configure_lbr(etl_session *s, uint32_t flags, const etl_classic_event_id *events, unsigned count)
{
    char err[1024];

    err[0] = '\0';
    if (configure(s, flags, events, count, err, sizeof err) == ETL_OK) return ETL_OK;
    etl_session_set_error(s, "%s", err);
    return ETL_FAILED;
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
