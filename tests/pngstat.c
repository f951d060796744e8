/* SPDX-License-Identifier: MIT */
/* What a browser's screenshot shows, in numbers: a PNG's size, distinct colors, colored pixels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/*
 * pngstat FILE.png [R,G,B]
 * prints "width W height H colors N colored C match M": N distinct colors, C pixels whose
 * channels differ by 40 or more (not white, grey or black: the frames of a flame graph, not
 * text or background), M pixels of exactly R,G,B (0 without it). 8-bit RGB or RGBA PNGs, not
 * interlaced (what Chromium writes). Exit 0, or 1 with a message for a file it cannot read.
 */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int fail(const char *path, const char *what)
{
    fprintf(stderr, "pngstat: %s: %s\n", path, what);
    return 1;
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static int color_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    FILE *f;
    unsigned char *file = NULL, *idat = NULL, *raw = NULL;
    size_t size = 0, cap = 0, nidat = 0, pos = 8;
    uint32_t width = 0, height = 0, want = 0xFFFFFFFFu;
    int channels = 0;
    unsigned r, g, b;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: pngstat FILE.png [R,G,B]\n");
        return 2;
    }
    if (argc == 3) {
        if (sscanf(argv[2], "%u,%u,%u", &r, &g, &b) != 3 || r > 255 || g > 255 || b > 255)
            return fail(argv[2], "not a color R,G,B");
        want = r << 16 | g << 8 | b;
    }
    if (!(f = fopen(argv[1], "rb"))) return fail(argv[1], "cannot open");
    for (;;) {
        if (size == cap && !(file = realloc(file, cap = cap ? 2 * cap : 1 << 20))) return fail(argv[1], "out of memory");
        size_t k = fread(file + size, 1, cap - size, f);
        if (!k) break;
        size += k;
    }
    fclose(f);
    if (size < 8 || memcmp(file, "\x89PNG\r\n\x1a\n", 8) != 0) return fail(argv[1], "not a PNG");
    while (pos + 12 <= size) {
        uint32_t len = be32(file + pos);
        const unsigned char *type = file + pos + 4, *data = file + pos + 8;
        if (len > size - pos - 12) return fail(argv[1], "chunk past the end");
        if (memcmp(type, "IHDR", 4) == 0 && len >= 13) {
            width = be32(data);
            height = be32(data + 4);
            if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0)
                return fail(argv[1], "not an 8-bit RGB or RGBA PNG without interlace");
            channels = data[9] == 6 ? 4 : 3;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            unsigned char *p = realloc(idat, nidat + len + 1);
            if (!p) return fail(argv[1], "out of memory");
            idat = p;
            memcpy(idat + nidat, data, len);
            nidat += len;
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        }
        pos += 12 + (size_t)len;
    }
    if (!channels || !width || !height || width > 20000 || height > 20000) return fail(argv[1], "no usable IHDR");
    {
        size_t stride = (size_t)width * channels, want_raw = (stride + 1) * height;
        uLongf got = (uLongf)want_raw;
        uint32_t *colors;
        size_t ncolors = 0, colored = 0, match = 0;

        if (!(raw = malloc(want_raw)) || !(colors = malloc((size_t)width * height * sizeof *colors)))
            return fail(argv[1], "out of memory");
        if (uncompress(raw, &got, idat, (uLong)nidat) != Z_OK || got != want_raw) return fail(argv[1], "bad image data");
        for (uint32_t y = 0; y < height; y++) {
            unsigned char *row = raw + y * (stride + 1), *line = row + 1, *prev = y ? row - (stride + 1) : NULL;
            int filter = row[0];
            for (size_t x = 0; x < stride; x++) {
                int a = x >= (size_t)channels ? line[x - channels] : 0, up = prev ? prev[x] : 0;
                int c = prev && x >= (size_t)channels ? prev[x - channels] : 0;
                switch (filter) {
                case 0: break;
                case 1: line[x] = (unsigned char)(line[x] + a); break;
                case 2: line[x] = (unsigned char)(line[x] + up); break;
                case 3: line[x] = (unsigned char)(line[x] + (a + up) / 2); break;
                case 4: line[x] = (unsigned char)(line[x] + paeth(a, up, c)); break;
                default: return fail(argv[1], "bad filter");
                }
            }
            /* the unfiltered line replaces the filter byte's row for the next line's "up" */
            memmove(row, line, stride);
            for (uint32_t x = 0; x < width; x++) {
                const unsigned char *px = row + (size_t)x * channels;
                int hi = px[0], lo = px[0];
                for (int k = 1; k < 3; k++) {
                    if (px[k] > hi) hi = px[k];
                    if (px[k] < lo) lo = px[k];
                }
                if (hi - lo >= 40) colored++;
                colors[ncolors++] = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
                if (colors[ncolors - 1] == want) match++;
            }
        }
        qsort(colors, ncolors, sizeof *colors, color_cmp);
        {
            size_t distinct = ncolors ? 1 : 0;
            for (size_t i = 1; i < ncolors; i++) distinct += colors[i] != colors[i - 1];
            printf("width %u height %u colors %zu colored %zu match %zu\n", width, height, distinct, colored, match);
        }
        free(colors);
    }
    free(raw);
    free(idat);
    free(file);
    return 0;
}
