/* SPDX-License-Identifier: MIT */
/* The functions story of tests/fnstory.h: a program built with gcc, its facts read with readelf, nm and addr2line, and a trace of samples in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnstory.h"
#include "synth.h"

static const char prog_c[] =
    "static volatile int sink;\n"
    "__attribute__((noinline)) int hot_a(int x)\n"
    "{\n"
    "    for (int i = 0; i < x; i++) sink += i * x;\n"
    "    return sink;\n"
    "}\n"
    "__attribute__((noinline)) int hot_b(int x)\n"
    "{\n"
    "    for (int i = 0; i < x; i++) sink -= i;\n"
    "    return sink;\n"
    "}\n"
    "__attribute__((noinline)) int rec(int n)\n"
    "{\n"
    "    if (n <= 0) return hot_a(1000);\n"
    "    return rec(n - 1) + 1;\n"
    "}\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    (void)argv;\n"
    "    return rec(argc) + hot_b(argc) + sink;\n"
    "}\n";

/* The output of cmd (its first 64 KiB; to free()), or NULL when it failed. */
static char *command_output(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    char *out = calloc(1, 65536);
    size_t n;

    if (!p || !out) {
        if (p) pclose(p);
        free(out);
        return NULL;
    }
    n = fread(out, 1, 65535, p);
    out[n] = '\0';
    if (pclose(p) != 0) {
        fprintf(stderr, "fnstory: %s failed\n", cmd);
        free(out);
        return NULL;
    }
    return out;
}

int fnstory_build(const char *dir, struct fnstory *g)
{
    static const char *names[FN_COUNT] = { "hot_a", "hot_b", "rec", "main" };
    char cmd[1200], *out, *line, *save;
    FILE *f;

    memset(g, 0, sizeof *g);
    snprintf(g->path, sizeof g->path, "%s/prog", dir);
    snprintf(cmd, sizeof cmd, "%s/prog.c", dir);
    if (!(f = fopen(cmd, "w"))) return -1;
    fputs(prog_c, f);
    if (fclose(f) != 0) return -1;
    snprintf(cmd, sizeof cmd, "cd '%s' && gcc -g -O1 -fPIE -pie -o prog prog.c", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "fnstory: %s failed\n", cmd);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "readelf -lW '%s'", g->path);
    if (!(out = command_output(cmd))) return -1;
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long off, va, pa, fsz;
        if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx", &off, &va, &pa, &fsz) == 4 && g->nseg < 16) {
            g->seg[g->nseg].offset = off;
            g->seg[g->nseg].vaddr = va;
            g->seg[g->nseg].filesz = fsz;
            g->nseg++;
        }
    }
    free(out);
    snprintf(cmd, sizeof cmd, "nm -S --defined-only '%s'", g->path);
    if (!(out = command_output(cmd))) return -1;
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long v, sz;
        char type, name[128];
        if (sscanf(line, "%llx %llx %c %127s", &v, &sz, &type, name) != 4 || (type != 'T' && type != 't')) continue;
        for (int k = 0; k < FN_COUNT; k++)
            if (strcmp(name, names[k]) == 0) {
                g->fn[k].name = names[k];
                g->fn[k].value = v;
                g->fn[k].size = sz;
            }
    }
    free(out);
    if (!g->nseg) {
        fprintf(stderr, "fnstory: readelf shows no PT_LOAD in %s\n", g->path);
        return -1;
    }
    for (int k = 0; k < FN_COUNT; k++)
        if (!g->fn[k].name || g->fn[k].size < 4) {
            fprintf(stderr, "fnstory: nm shows no %s of 4 bytes or more in %s\n", names[k], g->path);
            return -1;
        }
    return 0;
}

uint64_t fnstory_at(const struct fnstory *g, uint64_t base, uint64_t v)
{
    for (unsigned i = 0; i < g->nseg; i++)
        if (v >= g->seg[i].vaddr && v - g->seg[i].vaddr < g->seg[i].filesz) return base + v - g->seg[i].vaddr + g->seg[i].offset;
    return 0;
}

uint64_t fnstory_mid(const struct fnstory *g, int k)
{
    return g->fn[k].value + g->fn[k].size / 2;
}

int fnstory_addr2line(const struct fnstory *g, uint64_t v, char *function, size_t fsize, char *source, size_t ssize)
{
    char cmd[700], *out, *nl, *file, *d;

    snprintf(cmd, sizeof cmd, "addr2line -f -e '%s' 0x%llx", g->path, (unsigned long long)v);
    if (!(out = command_output(cmd))) return -1;
    if (!(nl = strchr(out, '\n'))) {
        free(out);
        return -1;
    }
    *nl = '\0';
    snprintf(function, fsize, "%s", out);
    file = nl + 1;
    file[strcspn(file, "\n")] = '\0';
    if ((d = strstr(file, " (discriminator")) != NULL) *d = '\0';
    snprintf(source, ssize, "%s", strrchr(file, '/') ? strrchr(file, '/') + 1 : file);
    free(out);
    return 0;
}

static uint8_t rec[4096];

static int add(struct synth *sy, uint32_t n)
{
    return synth_add(sy, 0, rec, n);
}

/* A sample of thread 101 at ip, and its StackWalk (frames innermost first) when n > 0. */
static int sample(struct synth *sy, int64_t ts, uint64_t ip, const uint64_t *frames, unsigned n)
{
    struct synth_payload p;

    sp_init(&p, 8);
    spp(&p, ip); sp32(&p, 101); sp16(&p, 1); sp8(&p, 0x40); sp8(&p, 0);
    if (add(sy, synth_perfinfo(rec, 1, ts, 0x0F2E, 2, NULL, NULL, 0, p.b, p.n)) != 0) return -1;
    if (!n) return 0;
    sp_init(&p, 8);
    sp64(&p, (uint64_t)ts); sp32(&p, 100); sp32(&p, 101);
    for (unsigned i = 0; i < n; i++) spp(&p, frames[i]);
    return add(sy, synth_perfinfo(rec, 1, ts, 0x1820, 2, NULL, NULL, 0, p.b, p.n));
}

static int write_story(const char *path, const struct fnstory *g, uint64_t base, int stacks)
{
    struct synth_options so;
    struct synth_payload p;
    struct synth *sy;
    uint64_t mid[FN_COUNT], a[4], rec_end;
    uint8_t *file;
    size_t size;
    FILE *f;
    int64_t t = 2000000;
    int bad = 0;

    for (int k = 0; k < FN_COUNT; k++)
        if (!(mid[k] = fnstory_at(g, base, fnstory_mid(g, k)))) return -1;
    if (!(rec_end = fnstory_at(g, base, g->fn[FN_REC].value + g->fn[FN_REC].size))) return -1;
    memset(&so, 0, sizeof so);
    so.logger_name = "NT Kernel Logger";
    if (!(sy = synth_new(&so))) return -1;
    sp_init(&p, 8);
    spp(&p, 0xFFFFA00000000100ull); sp32(&p, 100); sp32(&p, 1); sp32(&p, 1); sp32(&p, 259);
    spp(&p, 0x1AA000); sp32(&p, 0); sp32(&p, 0);
    sp_str8(&p, "prog"); sp_str16(&p, "prog"); sp_str16(&p, ""); sp_str16(&p, "");
    bad |= add(sy, synth_system(rec, 1, 0, t, 0x0303, 4, 100, 0, p.b, p.n));
    sp_init(&p, 8);
    sp32(&p, 100); sp32(&p, 101);
    for (unsigned i = 1; i <= 7; i++) spp(&p, 0x10000 * i);
    sp32(&p, 0); sp8(&p, 8); sp8(&p, 5); sp8(&p, 2); sp8(&p, 0);
    bad |= add(sy, synth_system(rec, 1, 0, t + 1, 0x0503, 3, 100, 101, p.b, p.n));
    sp_init(&p, 8);
    spp(&p, base); spp(&p, 0x10000); sp32(&p, 100); sp32(&p, 0); sp32(&p, 0);
    sp8(&p, 0); sp8(&p, 0); sp16(&p, 0); spp(&p, base); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0); sp32(&p, 0);
    sp_str16(&p, g->path);
    bad |= add(sy, synth_system(rec, 1, 0, t + 2, 0x030A, 3, 100, 0, p.b, p.n));
    if (!stacks) bad |= sample(sy, t + 9, 0x1234, NULL, 0);
    for (int i = 0; i < 3; i++) {
        a[0] = mid[FN_HOT_A], a[1] = mid[FN_REC], a[2] = rec_end, a[3] = mid[FN_MAIN];
        bad |= sample(sy, t + 10 + i, mid[FN_HOT_A], a, stacks ? 4 : 0);
    }
    for (int i = 0; i < 2; i++) {
        a[0] = mid[FN_HOT_B], a[1] = mid[FN_MAIN];
        bad |= sample(sy, t + 20 + i, mid[FN_HOT_B], a, stacks ? 2 : 0);
    }
    bad |= sample(sy, t + 30, mid[FN_MAIN], mid + FN_MAIN, stacks ? 1 : 0);
    if (stacks) bad |= sample(sy, t + 31, 0x1234, NULL, 0);
    file = synth_finish(sy, &size);
    if (!file || bad) {
        free(file);
        return -1;
    }
    f = fopen(path, "wb");
    if (!f || fwrite(file, 1, size, f) != size) bad = 1;
    if (f && fclose(f) != 0) bad = 1;
    free(file);
    return bad ? -1 : 0;
}

int fnstory_write(const char *path, const struct fnstory *g, uint64_t base)
{
    return write_story(path, g, base, 1);
}

int fnstory_write_flat(const char *path, const struct fnstory *g, uint64_t base)
{
    return write_story(path, g, base, 0);
}
