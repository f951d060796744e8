/* SPDX-License-Identifier: MIT */
/* A flame in speedscope's file format: one sampled profile per profile, frames shared. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

struct speedscope {
    const etl_flame *fl;
    FILE *f;
    uint32_t *index;            /* frame -> its index in shared.frames, or UINT32_MAX */
    uint32_t nshared;
    int first;                  /* no sample written yet in this profile */
    int pass;                   /* 0: number the frames; 1: write the stacks; 2: their weights */
};

/* Pass 0 numbers the frames in the order first met; passes 1 and 2 write each distinct stack
   (a node where samples ended) and its count. */
static int visit(void *arg, uint32_t node, const uint32_t *path, size_t depth)
{
    struct speedscope *s = arg;
    const struct flame_node *n = &s->fl->nodes[node];

    if (s->pass == 0) {
        if (depth > 0 && s->index[n->frame] == UINT32_MAX) s->index[n->frame] = s->nshared++;
        return 0;
    }
    if (!n->self) return 0;
    fputs(s->first ? "" : ",", s->f);
    s->first = 0;
    if (s->pass == 2) {
        fprintf(s->f, "%" PRIu64, n->self);
        return 0;
    }
    fputc('[', s->f);
    for (size_t i = 1; i <= depth; i++) /* path[0] is the profile */
        fprintf(s->f, "%s%" PRIu32, i > 1 ? "," : "", s->index[s->fl->nodes[path[i]].frame]);
    fputc(']', s->f);
    return 0;
}

/* The profiles (children of the root): heaviest first, then by name. */
static int profile_cmp_r(const struct flame_node *x, const struct flame_node *y, const etl_flame *fl)
{
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return strcmp(fl->frames[x->frame].name, fl->frames[y->frame].name);
}

int etl_flame_write_speedscope(const etl_flame *fl, FILE *f, const char *name)
{
    struct speedscope s = { fl, f, NULL, 0, 1, 0 };
    uint32_t *first = NULL, *child = NULL, *profiles = NULL;
    size_t nprofiles;
    int rc = ETL_FAILED;

    if (flame_children(fl, &first, &child) < 0) goto out;
    nprofiles = first[1] - first[0];
    if (!(s.index = malloc((fl->nframes ? fl->nframes : 1) * sizeof *s.index)) ||
        !(profiles = malloc((nprofiles ? nprofiles : 1) * sizeof *profiles)))
        goto out;
    memset(s.index, 0xFF, (fl->nframes ? fl->nframes : 1) * sizeof *s.index);
    memcpy(profiles, child + first[0], nprofiles * sizeof *profiles);
    /* a few profiles: an insertion sort keeps it free of global state */
    for (size_t i = 1; i < nprofiles; i++)
        for (size_t j = i; j > 0 && profile_cmp_r(&fl->nodes[profiles[j]], &fl->nodes[profiles[j - 1]], fl) < 0; j--) {
            uint32_t t = profiles[j];
            profiles[j] = profiles[j - 1];
            profiles[j - 1] = t;
        }
    for (size_t i = 0; i < nprofiles; i++)
        if (flame_walk(fl, first, child, profiles[i], visit, &s) < 0) goto out;

    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":", f);
    {
        char exporter[64];
        snprintf(exporter, sizeof exporter, "libetl %s", etl_version());
        output_json_string(f, exporter);
    }
    fputs(",\"name\":", f);
    output_json_string(f, name ? name : "libetl profile");
    fputs(",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", f);
    {   /* the frames in their numbering */
        uint32_t *order = malloc((s.nshared ? s.nshared : 1) * sizeof *order);
        if (!order) goto out;
        for (size_t i = 0; i < fl->nframes; i++)
            if (s.index[i] != UINT32_MAX) order[s.index[i]] = (uint32_t)i;
        for (uint32_t i = 0; i < s.nshared; i++) {
            const struct flame_frame *fr = &fl->frames[order[i]];
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
            output_json_string(f, fr->name);
            if (fr->file) {
                fputs(",\"file\":", f);
                output_json_string(f, fr->file);
            }
            if (fr->line) fprintf(f, ",\"line\":%" PRIu32, fr->line);
            fputc('}', f);
        }
        free(order);
    }
    fputs("]},\n\"profiles\":[", f);
    for (size_t i = 0; i < nprofiles; i++) {
        const struct flame_node *p = &fl->nodes[profiles[i]];
        fputs(i ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", f);
        output_json_string(f, fl->frames[p->frame].name);
        fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[", p->total);
        s.pass = 1;
        s.first = 1;
        if (flame_walk(fl, first, child, profiles[i], visit, &s) < 0) goto out;
        fputs("],\n\"weights\":[", f);
        s.pass = 2;
        s.first = 1;
        if (flame_walk(fl, first, child, profiles[i], visit, &s) < 0) goto out;
        fputs("]}", f);
    }
    fputs("]}\n", f);
    rc = ETL_OK;
out:
    free(first);
    free(child);
    free(profiles);
    free(s.index);
    if (ferror(f)) return ETL_FATAL;
    return rc;
}
