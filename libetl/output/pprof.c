/* SPDX-License-Identifier: MIT */
/* A profile as pprof's profile.proto (libetl/output/profile.proto), packed by protobuf-c and gzip-compressed with zlib. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "output/profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Label PbLabel;

/* The string table: index 0 is "", each string once (the profile's strings are interned, so a
   pointer names a string; others are looked up by content). */
struct strtab {
    char **s;
    size_t n, cap;
    const char **by_ptr;          /* pointer -> index, open addressing */
    size_t *by_ptr_index;
    size_t ptr_cap;
};

static int64_t str_index(struct strtab *t, const char *s)
{
    size_t mask, i;

    if (!s || !*s) return 0;
    mask = t->ptr_cap - 1;
    for (i = ((uintptr_t)s >> 4) & mask; t->by_ptr[i]; i = (i + 1) & mask)
        if (t->by_ptr[i] == s) return (int64_t)t->by_ptr_index[i];
    if (t->n >= t->cap) return -1;
    t->by_ptr[i] = s;
    t->by_ptr_index[i] = t->n;
    t->s[t->n] = (char *)s;
    return (int64_t)t->n++;
}

/* Packs msg and writes it gzip-compressed. */
static int write_gzip(FILE *f, const PbProfile *msg)
{
    size_t size = perftools__profiles__profile__get_packed_size(msg);
    uint8_t *packed = malloc(size ? size : 1), out[65536];
    z_stream z;
    int zrc, rc = ETL_OK;

    if (!packed) return ETL_FAILED;
    perftools__profiles__profile__pack(msg, packed);
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip member, as pprof reads */
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(packed);
        return ETL_FAILED;
    }
    z.next_in = packed;
    z.avail_in = (uInt)size;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        zrc = deflate(&z, Z_FINISH);
        if (zrc == Z_STREAM_ERROR) {
            rc = ETL_FAILED;
            break;
        }
        if (fwrite(out, 1, sizeof out - z.avail_out, f) != sizeof out - z.avail_out) {
            rc = ETL_FATAL;
            break;
        }
    } while (zrc != Z_STREAM_END);
    deflateEnd(&z);
    free(packed);
    return rc == ETL_OK ? output_status(f) : rc;
}

int etl_profile_write_pprof(FILE *f, const etl_profile *p)
{
    PbProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
    PbValueType types[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT, PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
    PbValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    PbValueType *type_ptrs[2] = { &types[0], &types[1] };
    struct strtab st;
    PbSample *samples = NULL, **sample_ptrs = NULL;
    PbLabel *labels = NULL, **label_ptrs = NULL;
    int64_t *values = NULL;
    uint64_t *loc_ids = NULL;
    PbLocation *locs = NULL, **loc_ptrs = NULL;
    PbLine *lines = NULL, **line_ptrs = NULL;
    PbFunction *funcs = NULL, **func_ptrs = NULL;
    PbMapping *maps = NULL, **map_ptrs = NULL;
    uint64_t *frame_func = NULL;  /* frame -> function id */
    size_t *fslot = NULL, fmask;  /* functions by (name, source file) */
    uint64_t *map_id = NULL, *map_hits = NULL; /* a mapping's id; the samples whose leaf it holds */
    etl_profile_stats stats;
    int rc = ETL_FAILED;
    /* strings: "", the fixed names, and each profile string (frames, images, processes) */
    size_t nstr = 16 + p->nstrings;
    size_t nlines = p->nloc_frames, nfuncs = 0;

    memset(&st, 0, sizeof st);
    st.cap = nstr;
    st.ptr_cap = 64;
    while (st.ptr_cap < 2 * nstr) st.ptr_cap *= 2;
    st.s = calloc(nstr, sizeof *st.s);
    st.by_ptr = calloc(st.ptr_cap, sizeof *st.by_ptr);
    st.by_ptr_index = calloc(st.ptr_cap, sizeof *st.by_ptr_index);
    samples = calloc(p->nstacks + 1, sizeof *samples);
    sample_ptrs = calloc(p->nstacks + 1, sizeof *sample_ptrs);
    labels = calloc(3 * p->nstacks + 1, sizeof *labels);
    label_ptrs = calloc(3 * p->nstacks + 1, sizeof *label_ptrs);
    values = calloc(2 * p->nstacks + 1, sizeof *values);
    loc_ids = calloc(p->nstack_locs + 1, sizeof *loc_ids);
    locs = calloc(p->nlocations + 1, sizeof *locs);
    loc_ptrs = calloc(p->nlocations + 1, sizeof *loc_ptrs);
    lines = calloc(nlines + 1, sizeof *lines);
    line_ptrs = calloc(nlines + 1, sizeof *line_ptrs);
    funcs = calloc(p->nframes + 1, sizeof *funcs);
    func_ptrs = calloc(p->nframes + 1, sizeof *func_ptrs);
    maps = calloc(p->nmappings + 1, sizeof *maps);
    map_ptrs = calloc(p->nmappings + 1, sizeof *map_ptrs);
    frame_func = calloc(p->nframes + 1, sizeof *frame_func);
    if (!st.s || !st.by_ptr || !st.by_ptr_index || !samples || !sample_ptrs || !labels || !label_ptrs || !values ||
        !loc_ids || !locs || !loc_ptrs || !lines || !line_ptrs || !funcs || !func_ptrs || !maps || !map_ptrs ||
        !frame_func)
        goto out;
    st.s[st.n++] = (char *)"";

    etl_profile_stats_get(p, &stats);
    types[0].type = str_index(&st, "samples");
    types[0].unit = str_index(&st, "count");
    types[1].type = str_index(&st, "cpu");
    types[1].unit = str_index(&st, "nanoseconds");
    period.type = types[1].type;
    period.unit = types[1].unit;
    prof.n_sample_type = 2;
    prof.sample_type = type_ptrs;
    prof.period_type = &period;
    prof.period = (int64_t)stats.period_ns;
    prof.time_nanos = stats.time_ns;
    prof.duration_nanos = stats.duration_ns;
    int64_t k_pid = str_index(&st, "pid"), k_tid = str_index(&st, "tid"), k_proc = str_index(&st, "process");

    /* Functions: one per distinct (name, source file); frames that share both share it. */
    fmask = 64;
    while (fmask < 2 * (p->nframes + 1)) fmask *= 2;
    if (!(fslot = malloc(fmask * sizeof *fslot))) goto out;
    for (size_t i = 0; i < fmask; i++) fslot[i] = SIZE_MAX;
    fmask--;
    for (size_t i = 0; i < p->nframes; i++) {
        const etl_profile_frame *fr = &p->frames[i];
        size_t j = SIZE_MAX, h = (((uintptr_t)fr->name >> 4) * 31 + ((uintptr_t)fr->source_file >> 4)) & fmask;
        /* the strings are interned: one pointer, one name */
        for (; fslot[h] != SIZE_MAX; h = (h + 1) & fmask) {
            const etl_profile_frame *g = &p->frames[funcs[fslot[h]].start_line];
            if (g->name == fr->name && g->source_file == fr->source_file) {
                j = fslot[h];
                break;
            }
        }
        if (j == SIZE_MAX) {
            j = nfuncs;
            fslot[h] = j;
            perftools__profiles__function__init(&funcs[j]);
            funcs[j].id = j + 1;
            funcs[j].name = str_index(&st, fr->name);
            funcs[j].system_name = funcs[j].name;
            funcs[j].filename = str_index(&st, fr->source_file);
            funcs[j].start_line = (int64_t)i; /* the frame, until all are made */
            if (funcs[j].name < 0 || funcs[j].filename < 0) goto out;
            func_ptrs[j] = &funcs[j];
            nfuncs++;
        }
        frame_func[i] = j + 1;
    }
    for (size_t j = 0; j < nfuncs; j++) funcs[j].start_line = 0;

    /* pprof takes the first mapping for the main program: the user-space image where the most
       samples hit (the kernel's is never the program), the others after it in their order. */
    if (!(map_id = calloc(p->nmappings + 1, sizeof *map_id)) || !(map_hits = calloc(p->nmappings + 1, sizeof *map_hits)))
        goto out;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct profile_stack *s = &p->stacks[i];
        uint32_t m = s->count ? p->locations[p->stack_locs[s->first]].mapping : 0;
        if (m && p->mappings[m - 1].start < 0xFFFF800000000000ull) map_hits[m - 1] += s->samples;
    }
    {
        size_t best = 0, next = 2;
        for (size_t i = 1; i < p->nmappings; i++)
            if (map_hits[i] > map_hits[best]) best = i;
        for (size_t i = 0; i < p->nmappings; i++) map_id[i] = i == best ? 1 : next++;
    }
    for (size_t i = 0; i < p->nmappings; i++) {
        const struct profile_mapping *m = &p->mappings[i];
        size_t k = map_id[i] - 1;
        perftools__profiles__mapping__init(&maps[k]);
        maps[k].id = map_id[i];
        maps[k].memory_start = m->start;
        maps[k].memory_limit = m->limit;
        maps[k].filename = str_index(&st, m->path ? m->path : m->image);
        maps[k].build_id = str_index(&st, m->build_id);
        /* the names are given: pprof is not to look for the binaries */
        maps[k].has_functions = 1;
        maps[k].has_filenames = 1;
        maps[k].has_line_numbers = 1;
        maps[k].has_inline_frames = 1;
        if (maps[k].filename < 0 || maps[k].build_id < 0) goto out;
        map_ptrs[k] = &maps[k];
    }
    for (size_t i = 0; i < p->nlocations; i++) {
        const struct profile_location *l = &p->locations[i];
        perftools__profiles__location__init(&locs[i]);
        locs[i].id = i + 1;
        locs[i].mapping_id = l->mapping ? map_id[l->mapping - 1] : 0;
        locs[i].address = l->address;
        locs[i].n_line = l->count;
        locs[i].line = line_ptrs + l->first;
        for (uint32_t k = 0; k < l->count; k++) {
            uint32_t fi = p->loc_frames[l->first + k];
            PbLine *ln = &lines[l->first + k];
            perftools__profiles__line__init(ln);
            ln->function_id = frame_func[fi];
            ln->line = p->frames[fi].line;
            line_ptrs[l->first + k] = ln;
        }
        loc_ptrs[i] = &locs[i];
    }
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct profile_stack *s = &p->stacks[i];
        PbSample *sm = &samples[i];
        perftools__profiles__sample__init(sm);
        for (uint32_t k = 0; k < s->count; k++) loc_ids[s->first + k] = (uint64_t)p->stack_locs[s->first + k] + 1;
        sm->n_location_id = s->count;
        sm->location_id = loc_ids + s->first;
        values[2 * i] = (int64_t)s->samples;
        values[2 * i + 1] = (int64_t)s->weight_ns;
        sm->n_value = 2;
        sm->value = values + 2 * i;
        for (int k = 0; k < 3; k++) {
            perftools__profiles__label__init(&labels[3 * i + (size_t)k]);
            label_ptrs[3 * i + (size_t)k] = &labels[3 * i + (size_t)k];
        }
        labels[3 * i].key = k_pid;
        labels[3 * i].num = s->pid == UINT32_MAX ? -1 : (int64_t)s->pid;
        labels[3 * i + 1].key = k_tid;
        labels[3 * i + 1].num = (int64_t)s->tid;
        labels[3 * i + 2].key = k_proc;
        labels[3 * i + 2].str = str_index(&st, p->processes[s->process]);
        if (labels[3 * i + 2].str < 0) goto out;
        sm->n_label = 3;
        sm->label = label_ptrs + 3 * i;
        sample_ptrs[i] = sm;
    }
    prof.n_sample = p->nstacks;
    prof.sample = sample_ptrs;
    prof.n_location = p->nlocations;
    prof.location = loc_ptrs;
    prof.n_function = nfuncs;
    prof.function = func_ptrs;
    prof.n_mapping = p->nmappings;
    prof.mapping = map_ptrs;
    prof.n_string_table = st.n;
    prof.string_table = st.s;
    rc = write_gzip(f, &prof);
out:
    free(st.s);
    free(st.by_ptr);
    free(st.by_ptr_index);
    free(samples);
    free(sample_ptrs);
    free(labels);
    free(label_ptrs);
    free(values);
    free(loc_ids);
    free(locs);
    free(loc_ptrs);
    free(lines);
    free(line_ptrs);
    free(funcs);
    free(func_ptrs);
    free(maps);
    free(map_ptrs);
    free(frame_func);
    free(fslot);
    free(map_id);
    free(map_hits);
    return rc;
}
