/* SPDX-License-Identifier: MIT */
/* Test helper: a synthetic kernel trace of one process's samples with their stacks (tests/stacks.h), written with the synthetic trace writer. */
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "synth.h"

#define PID 100
#define TID 101

static int add(struct synth *s, unsigned cpu, const uint8_t *rec, uint32_t n)
{
    return synth_add(s, cpu, rec, n);
}

uint8_t *stacks_trace(const struct stacks_sample *samples, size_t n, size_t *size)
{
    struct synth_options o;
    struct synth_payload p;
    struct synth *s;
    uint8_t b[4096];
    int64_t ts = 1000000;
    int bad = 0;

    memset(&o, 0, sizeof o);
    o.pointer_size = 8;
    o.cpus = 1;
    if (!(s = synth_new(&o))) return NULL;
    /* Process DCStart v1: PageDirectoryBase, pid, ppid, session, exit status, SID, name */
    sp_init(&p, 8); spp(&p, 0x5000); sp32(&p, PID); sp32(&p, 4); sp32(&p, 1); sp32(&p, 0); sp32(&p, 0);
    sp_str8(&p, "app");
    bad |= add(s, 0, b, synth_system(b, 1, 0, ts++, 0x0303, 1, 0, 0, p.b, p.n));
    /* Thread DCStart v2 */
    sp_init(&p, 8); sp32(&p, PID); sp32(&p, TID);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0);
    bad |= add(s, 0, b, synth_system(b, 1, 0, ts++, 0x0503, 2, PID, TID, p.b, p.n));
    /* Image DCStart v2 */
    sp_init(&p, 8); spp(&p, STACKS_IMAGE_BASE); spp(&p, STACKS_IMAGE_SIZE); sp32(&p, PID); sp32(&p, 0); sp32(&p, 0);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, STACKS_IMAGE_BASE); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp32(&p, 0);
    sp_str16(&p, "\\Device\\HarddiskVolume2\\app.exe");
    bad |= add(s, 0, b, synth_system(b, 1, 0, ts++, 0x1403, 2, PID, 0, p.b, p.n));
    for (size_t i = 0; i < n && !bad; i++) {
        const struct stacks_sample *x = &samples[i];
        ts += 1000;
        /* SampledProfile: InstructionPointer, ThreadId, Count, Reserved */
        sp_init(&p, 8); spp(&p, x->nframes ? x->frames[0] : 0); sp32(&p, TID); sp16(&p, x->count); sp8(&p, 0);
        sp8(&p, 0);
        bad |= add(s, 0, b, synth_perfinfo(b, 1, ts, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n));
        /* StackWalk: EventTimeStamp, StackProcess, StackThread, frames */
        sp_init(&p, 8); sp64(&p, (uint64_t)ts); sp32(&p, PID); sp32(&p, TID);
        for (unsigned k = 0; k < x->nframes && k < STACKS_MAX_FRAMES; k++) spp(&p, x->frames[k]);
        bad |= add(s, 0, b, synth_perfinfo(b, 1, ts + 1, 0x1820, 2, NULL, NULL, 0, p.b, p.n));
    }
    if (bad) {
        free(synth_finish(s, size));
        return NULL;
    }
    return synth_finish(s, size);
}
