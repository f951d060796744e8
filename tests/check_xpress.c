/* SPDX-License-Identifier: MIT */
/* Check tests for the plain LZ77 (XPRESS, MS-XCA 2.3/2.4) codec in libetl/format/xpress.c. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "format/format.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
    rng_state = s;
}

static uint64_t rng_next(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Compress buf, check the bound, decode into an exactly sized buffer, compare. Returns the
   compressed size. */
static size_t roundtrip(const uint8_t *buf, size_t n)
{
    size_t bound = etl_xpress_compress_bound(n);
    uint8_t *comp = xmalloc(bound);
    uint8_t *dec = xmalloc(n);
    size_t clen, dlen = (size_t)-1, epos = (size_t)-1;
    int st;

    clen = etl_xpress_compress(buf, n, comp, bound);
    ck_assert_uint_ge(clen, 4);
    ck_assert_uint_le(clen, bound);

    /* decode from an exactly sized copy so that ASan catches over-reads */
    {
        uint8_t *exact = xmalloc(clen);
        memcpy(exact, comp, clen);
        st = etl_xpress_decompress(exact, clen, dec, n, &dlen, &epos);
        free(exact);
    }
    ck_assert_int_eq(st, ETL_XPRESS_OK);
    ck_assert_uint_eq(dlen, n);
    if (n)
        ck_assert(memcmp(dec, buf, n) == 0);
    free(comp);
    free(dec);
    return clen;
}

/* Decode in[0..len) (copied to an exact-size heap block) into a buffer of out_cap bytes. */
static int decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap, size_t *out_len,
                  size_t *err_pos)
{
    uint8_t *exact = xmalloc(len);
    int st;
    if (len)
        memcpy(exact, in, len);
    *out_len = (size_t)-1;
    *err_pos = (size_t)-1;
    st = etl_xpress_decompress(exact, len, out, out_cap, out_len, err_pos);
    free(exact);
    return st;
}

/* Independent reference encoder (MS-XCA 2.3.4) driven by explicit literals and matches; it also
   builds the expected decoded output with a naive byte-by-byte copy. */
struct ref {
    uint8_t *enc;
    size_t elen, ecap;
    uint8_t *dec;
    size_t dlen, dcap;
    size_t fpos, half;
    uint32_t flags;
    unsigned nflags;
};

static void ref_reserve(struct ref *r, size_t more)
{
    if (r->elen + more > r->ecap) {
        r->ecap = (r->elen + more) * 2;
        r->enc = realloc(r->enc, r->ecap);
        ck_assert_ptr_nonnull(r->enc);
    }
}

static void ref_dreserve(struct ref *r, size_t more)
{
    if (r->dlen + more > r->dcap) {
        r->dcap = (r->dlen + more) * 2;
        r->dec = realloc(r->dec, r->dcap);
        ck_assert_ptr_nonnull(r->dec);
    }
}

static void ref_init(struct ref *r)
{
    memset(r, 0, sizeof *r);
    ref_reserve(r, 4);
    memset(r->enc, 0, 4);
    r->elen = 4;
}

static void ref_put(struct ref *r, uint32_t v, unsigned bytes)
{
    unsigned i;
    ref_reserve(r, bytes);
    for (i = 0; i < bytes; i++)
        r->enc[r->elen++] = (uint8_t)(v >> (8 * i));
}

static void ref_flag(struct ref *r, unsigned bit)
{
    r->flags = (r->flags << 1) | bit;
    if (++r->nflags == 32) {
        size_t i;
        for (i = 0; i < 4; i++)
            r->enc[r->fpos + i] = (uint8_t)(r->flags >> (8 * i));
        r->nflags = 0;
        r->flags = 0;
        r->fpos = r->elen;
        ref_put(r, 0, 4);
    }
}

static void ref_literal(struct ref *r, uint8_t b)
{
    ref_put(r, b, 1);
    ref_dreserve(r, 1);
    r->dec[r->dlen++] = b;
    ref_flag(r, 0);
}

static void ref_match(struct ref *r, size_t off, size_t len)
{
    uint32_t l;
    size_t i;
    ck_assert(off >= 1 && off <= 8192 && off <= r->dlen && len >= 3);
    l = (uint32_t)(len - 3);
    if (l < 7) {
        ref_put(r, (uint32_t)((off - 1) << 3) | l, 2);
    } else {
        uint32_t nib;
        ref_put(r, (uint32_t)((off - 1) << 3) | 7u, 2);
        l -= 7;
        nib = l < 15 ? l : 15;
        if (r->half == 0) {
            r->half = r->elen;
            ref_put(r, nib, 1);
        } else {
            r->enc[r->half] |= (uint8_t)(nib << 4);
            r->half = 0;
        }
        if (l >= 15) {
            l -= 15;
            if (l < 255) {
                ref_put(r, l, 1);
            } else {
                ref_put(r, 255, 1);
                l += 15 + 7;
                if (l < 65536) {
                    ref_put(r, l, 2);
                } else {
                    ref_put(r, 0, 2);
                    ref_put(r, l, 4);
                }
            }
        }
    }
    ref_dreserve(r, len);
    for (i = 0; i < len; i++, r->dlen++)
        r->dec[r->dlen] = r->dec[r->dlen - off];
    ref_flag(r, 1);
}

static void ref_finish(struct ref *r)
{
    uint32_t f;
    size_t i;
    if (r->nflags == 0)
        f = 0xFFFFFFFFu;
    else
        f = (r->flags << (32 - r->nflags)) | ((1u << (32 - r->nflags)) - 1u);
    for (i = 0; i < 4; i++)
        r->enc[r->fpos + i] = (uint8_t)(f >> (8 * i));
}

static void ref_free(struct ref *r)
{
    free(r->enc);
    free(r->dec);
}

/* Decode a reference stream and compare with its expected output. */
static void ref_check(struct ref *r)
{
    uint8_t *out = xmalloc(r->dlen);
    size_t olen, epos;
    int st = decode(r->enc, r->elen, out, r->dlen, &olen, &epos);
    ck_assert_int_eq(st, ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, r->dlen);
    if (olen)
        ck_assert(memcmp(out, r->dec, olen) == 0);
    free(out);
}

/* Pseudo-English text from a small vocabulary. */
static uint8_t *make_text(size_t n)
{
    static const char *words[] = {"the",   "event",   "trace",  "buffer",  "provider", "kernel",
                                  "of",    "process", "thread", "a",       "and",      "session",
                                  "image", "load",    "to",     "windows", "file",     "io",
                                  "read",  "write",   "with",   "0x1F40",  "stack",    "CPU"};
    uint8_t *t = xmalloc(n);
    size_t i = 0;
    while (i < n) {
        const char *w = words[rng_next() % (sizeof words / sizeof words[0])];
        size_t k;
        for (k = 0; w[k] && i < n; k++)
            t[i++] = (uint8_t)w[k];
        if (i < n)
            t[i++] = (rng_next() % 11 == 0) ? '\n' : ' ';
    }
    return t;
}

/* ------------------------------------------------------------------------------------------ */
/* MS-XCA 3.1 worked examples */

static const uint8_t spec_alpha[] = {0x3f, 0x00, 0x00, 0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
                                     0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70,
                                     0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a};
static const uint8_t spec_abc[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63,
                                   0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz";

static void make_abc300(uint8_t *b)
{
    size_t i;
    for (i = 0; i < 300; i++)
        b[i] = (uint8_t)("abc"[i % 3]);
}

START_TEST(test_spec_example_alphabet)
{
    uint8_t out[64], comp[64];
    size_t olen, epos, clen;
    int st = decode(spec_alpha, sizeof spec_alpha, out, 26, &olen, &epos);
    ck_assert_int_eq(st, ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 26);
    ck_assert(memcmp(out, alphabet, 26) == 0);

    clen = etl_xpress_compress((const uint8_t *)alphabet, 26, comp, sizeof comp);
    ck_assert_uint_eq(clen, sizeof spec_alpha);
    ck_assert(memcmp(comp, spec_alpha, clen) == 0);
    roundtrip((const uint8_t *)alphabet, 26);
}
END_TEST

START_TEST(test_spec_example_abc)
{
    uint8_t want[300], out[300], comp[400];
    size_t olen, epos, clen;
    int st;
    make_abc300(want);
    st = decode(spec_abc, sizeof spec_abc, out, sizeof out, &olen, &epos);
    ck_assert_int_eq(st, ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 300);
    ck_assert(memcmp(out, want, 300) == 0);

    clen = etl_xpress_compress(want, 300, comp, sizeof comp);
    ck_assert_uint_eq(clen, sizeof spec_abc);
    ck_assert(memcmp(comp, spec_abc, clen) == 0);
    roundtrip(want, 300);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Round trips */

START_TEST(test_roundtrip_empty)
{
    uint8_t dummy = 0, comp[8], out[1];
    size_t clen, olen, epos;
    clen = etl_xpress_compress(&dummy, 0, comp, sizeof comp);
    ck_assert_uint_eq(clen, 4);
    ck_assert_uint_eq(comp[0] & comp[1] & comp[2] & comp[3], 0xFF);
    ck_assert_int_eq(decode(comp, clen, out, 0, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 0);
    /* an empty input stream is an empty output */
    ck_assert_int_eq(etl_xpress_decompress(comp, 0, out, 0, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 0);
    roundtrip(&dummy, 0);
}
END_TEST

START_TEST(test_roundtrip_one_byte)
{
    unsigned v;
    for (v = 0; v < 256; v += 51) {
        uint8_t b = (uint8_t)v;
        ck_assert_uint_eq(roundtrip(&b, 1), 5);
    }
}
END_TEST

START_TEST(test_roundtrip_zero_1mib)
{
    size_t n = 1u << 20;
    uint8_t *z = calloc(n, 1);
    size_t clen;
    ck_assert_ptr_nonnull(z);
    clen = roundtrip(z, n);
    ck_assert_uint_lt(clen, 64);
    free(z);
}
END_TEST

START_TEST(test_roundtrip_random_64k)
{
    size_t n = 65536, i;
    uint8_t *b = xmalloc(n);
    rng_seed(12345);
    for (i = 0; i < n; i++)
        b[i] = (uint8_t)rng_next();
    ck_assert_uint_le(roundtrip(b, n), etl_xpress_compress_bound(n));
    /* also every short length */
    for (i = 0; i < 200; i++)
        roundtrip(b, i);
    free(b);
}
END_TEST

START_TEST(test_roundtrip_text)
{
    size_t n = 200000, clen;
    uint8_t *t;
    rng_seed(777);
    t = make_text(n);
    clen = roundtrip(t, n);
    ck_assert_uint_lt(clen, n / 2);
    free(t);
}
END_TEST

/* Periodic runs of the given lengths separated by fresh random bytes: the compressor emits
   matches of about those lengths, covering every length escape. */
START_TEST(test_roundtrip_long_matches)
{
    static const size_t extra[] = {275, 276, 277, 278, 279, 280, 281, 282, 283, 300, 1000, 4096,
                                   8192, 8193, 65535, 65536, 65537, 65538, 65539, 65540, 65541,
                                   69999, 70000};
    size_t cap = 1u << 20, n = 0, L, i, clen;
    uint8_t *b = xmalloc(cap);
    rng_seed(4242);
    for (L = 3; L <= 40 + sizeof extra / sizeof extra[0]; L++) {
        size_t len = L <= 40 ? L : extra[L - 41];
        size_t period = 1 + (size_t)(rng_next() % 64);
        ck_assert_uint_lt(n + period + len + 16, cap);
        for (i = 0; i < period; i++)
            b[n + i] = (uint8_t)rng_next();
        for (i = 0; i < len; i++)
            b[n + period + i] = b[n + i];
        n += period + len;
        for (i = 0; i < 16; i++)
            b[n++] = (uint8_t)rng_next();
    }
    clen = roundtrip(b, n);
    ck_assert_uint_lt(clen, n / 10);
    free(b);
}
END_TEST

START_TEST(test_roundtrip_overlap_offsets)
{
    size_t d, i, n = 0;
    uint8_t b[4096];
    rng_seed(99);
    for (d = 1; d <= 8; d++) {
        for (i = 0; i < d; i++)
            b[n + i] = (uint8_t)rng_next();
        for (i = d; i < d + 150; i++)
            b[n + i] = b[n + i - d];
        n += d + 150;
        for (i = 0; i < 8; i++)
            b[n++] = (uint8_t)rng_next();
        roundtrip(b + n - d - 158, d + 158);
    }
    roundtrip(b, n);
}
END_TEST

/* Explicit streams: every match length 3..300, the 16/32-bit escape boundaries, every offset
   1..16 with short and long lengths (nibble sharing between consecutive long matches). */
START_TEST(test_decode_every_length)
{
    static const size_t big[] = {65530, 65536, 65537, 65538, 65539, 65540, 70000, 131072};
    struct ref r;
    size_t i, len, off;
    ref_init(&r);
    rng_seed(5);
    for (i = 0; i < 40; i++)
        ref_literal(&r, (uint8_t)rng_next());
    for (len = 3; len <= 300; len++) {
        ref_match(&r, 1 + (size_t)(rng_next() % 40), len);
        if (len % 7 == 0)
            ref_literal(&r, (uint8_t)rng_next());
    }
    for (i = 0; i < sizeof big / sizeof big[0]; i++)
        ref_match(&r, 1 + (size_t)(rng_next() % 8192), big[i]);
    for (off = 1; off <= 16; off++)
        for (len = 3; len <= 40; len++)
            ref_match(&r, off, len);
    ref_finish(&r);
    ref_check(&r);
    ref_free(&r);
}
END_TEST

START_TEST(test_decode_overlap_offsets)
{
    size_t off, len;
    for (off = 1; off <= 8; off++) {
        for (len = 3; len <= 70; len++) {
            struct ref r;
            size_t i;
            ref_init(&r);
            for (i = 0; i < off; i++)
                ref_literal(&r, (uint8_t)('A' + i));
            ref_match(&r, off, len);
            ref_literal(&r, 'z');
            ref_finish(&r);
            ref_check(&r);
            ref_free(&r);
        }
    }
}
END_TEST

/* Two long matches sharing one length byte (low nibble first, then high nibble). */
START_TEST(test_decode_half_byte_sharing)
{
    /* "abc", match(3, 12): nibble 2, match(3, 20): nibble 10 -> shared byte 0xA2 */
    static const uint8_t s[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x17, 0x00, 0xA2, 0x17, 0x00};
    uint8_t out[64];
    size_t olen, epos, i;
    ck_assert_int_eq(decode(s, sizeof s, out, sizeof out, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 35);
    for (i = 0; i < 35; i++)
        ck_assert_uint_eq(out[i], (uint8_t)("abc"[i % 3]));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Stream termination */

START_TEST(test_decode_end_positions)
{
    uint8_t s[4 + 32 + 4], out[64];
    size_t olen, epos, k;
    memset(s, 0, 4);
    for (k = 0; k < 32; k++)
        s[4 + k] = (uint8_t)('a' + k % 26);
    memset(s + 36, 0xFF, 4);
    /* exactly at a flag-word boundary */
    ck_assert_int_eq(decode(s, 36, out, sizeof out, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 32);
    /* with the all-ones padding word */
    ck_assert_int_eq(decode(s, 40, out, sizeof out, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 32);
    /* a partial flag word */
    for (k = 37; k < 40; k++) {
        ck_assert_int_eq(decode(s, k, out, sizeof out, &olen, &epos), ETL_XPRESS_TRUNCATED);
        ck_assert_uint_eq(epos, 36);
        ck_assert_uint_eq(olen, 32);
    }
    /* in the middle of a flag group: stops where the next literal would start */
    ck_assert_int_eq(decode(spec_alpha, 14, out, sizeof out, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 10);
    ck_assert(memcmp(out, alphabet, 10) == 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Hostile streams */

static void check_prefixes(const uint8_t *orig, size_t n, const uint8_t *comp, size_t clen)
{
    uint8_t *out = xmalloc(n);
    size_t k;
    for (k = 0; k <= clen; k++) {
        size_t olen, epos;
        int st = decode(comp, k, out, n, &olen, &epos);
        ck_assert_msg(st == ETL_XPRESS_OK || st == ETL_XPRESS_TRUNCATED,
                      "prefix %zu of %zu: status %d", k, clen, st);
        ck_assert_uint_le(olen, n);
        if (st == ETL_XPRESS_TRUNCATED)
            ck_assert_uint_lt(epos, k);
        if (k == clen)
            ck_assert_uint_eq(olen, n);
        if (olen)
            ck_assert(memcmp(out, orig, olen) == 0);
    }
    free(out);
}

START_TEST(test_truncation_prefixes)
{
    size_t n = 6000, clen, i;
    uint8_t *t, *comp;
    struct ref r;
    rng_seed(31337);
    t = make_text(n);
    /* add long runs so that every escape kind is present */
    memset(t + 1000, 'x', 12);
    memset(t + 2000, 'y', 100);
    memset(t + 3000, 'z', 2000);
    comp = xmalloc(etl_xpress_compress_bound(n));
    clen = etl_xpress_compress(t, n, comp, etl_xpress_compress_bound(n));
    check_prefixes(t, n, comp, clen);
    check_prefixes(t, 0, spec_alpha, 0);
    {
        uint8_t abc[300];
        make_abc300(abc);
        check_prefixes(abc, 300, spec_abc, sizeof spec_abc);
        check_prefixes((const uint8_t *)alphabet, 26, spec_alpha, sizeof spec_alpha);
    }
    /* a reference stream with 32-bit escapes */
    ref_init(&r);
    for (i = 0; i < 5; i++)
        ref_literal(&r, (uint8_t)i);
    ref_match(&r, 5, 70000);
    ref_match(&r, 2, 30);
    ref_literal(&r, 9);
    ref_finish(&r);
    check_prefixes(r.dec, r.dlen, r.enc, r.elen);
    ref_free(&r);
    free(comp);
    free(t);
}
END_TEST

START_TEST(test_bad_offset)
{
    /* first element is a match (offset 1, length 3) at output position 0 */
    static const uint8_t s0[] = {0x00, 0x00, 0x00, 0x80, 0x00, 0x00};
    /* literal 'a', then match offset 2 at output position 1 */
    static const uint8_t s1[] = {0x00, 0x00, 0x00, 0x40, 'a', 0x08, 0x00};
    /* literal 'a', then match offset 1 length 3: valid */
    static const uint8_t s2[] = {0x00, 0x00, 0x00, 0x40, 'a', 0x00, 0x00};
    /* largest offset 8192 at output position 8191 */
    struct ref r;
    uint8_t out[16];
    size_t olen, epos, i;
    ck_assert_int_eq(decode(s0, sizeof s0, out, sizeof out, &olen, &epos), ETL_XPRESS_BAD_OFFSET);
    ck_assert_uint_eq(epos, 4);
    ck_assert_uint_eq(olen, 0);
    ck_assert_int_eq(decode(s1, sizeof s1, out, sizeof out, &olen, &epos), ETL_XPRESS_BAD_OFFSET);
    ck_assert_uint_eq(epos, 5);
    ck_assert_uint_eq(olen, 1);
    ck_assert_int_eq(decode(s2, sizeof s2, out, sizeof out, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 4);
    ck_assert(memcmp(out, "aaaa", 4) == 0);

    ref_init(&r);
    for (i = 0; i < 8192; i++)
        ref_literal(&r, (uint8_t)(i * 7));
    ref_match(&r, 8192, 10);
    ref_finish(&r);
    ref_check(&r);
    /* the same match one byte earlier refers to before the output start */
    ref_free(&r);
    ref_init(&r);
    for (i = 0; i < 8191; i++)
        ref_literal(&r, (uint8_t)(i * 7));
    ref_finish(&r);
    {
        /* append: flag word already holds 8191 % 32 = 31 literal flags; bit 0 is padding = 1 */
        uint8_t *s = xmalloc(r.elen + 2);
        uint8_t *o = xmalloc(8200);
        memcpy(s, r.enc, r.elen);
        s[r.elen] = 0xF8; /* offset 8192, length 3: ((8192 - 1) << 3) | 0 = 0xFFF8 */
        s[r.elen + 1] = 0xFF;
        ck_assert_int_eq(decode(s, r.elen + 2, o, 8200, &olen, &epos), ETL_XPRESS_BAD_OFFSET);
        ck_assert_uint_eq(epos, r.elen);
        ck_assert_uint_eq(olen, 8191);
        free(s);
        free(o);
    }
    ref_free(&r);
}
END_TEST

START_TEST(test_overflow)
{
    size_t n = 5000, clen, cap;
    uint8_t *t, *comp, *out;
    size_t olen, epos;
    rng_seed(2024);
    t = make_text(n);
    comp = xmalloc(etl_xpress_compress_bound(n));
    clen = etl_xpress_compress(t, n, comp, etl_xpress_compress_bound(n));
    for (cap = 0; cap < n; cap += (cap < 64 ? 1 : 97)) {
        out = xmalloc(cap);
        ck_assert_int_eq(decode(comp, clen, out, cap, &olen, &epos), ETL_XPRESS_OVERFLOW);
        ck_assert_uint_le(olen, cap);
        ck_assert_uint_lt(epos, clen);
        if (olen)
            ck_assert(memcmp(out, t, olen) == 0);
        free(out);
    }
    out = xmalloc(n - 1);
    ck_assert_int_eq(decode(comp, clen, out, n - 1, &olen, &epos), ETL_XPRESS_OVERFLOW);
    free(out);

    /* literal overflow: the 11th literal is at input offset 14 */
    {
        uint8_t o[10], o2[100];
        ck_assert_int_eq(decode(spec_alpha, sizeof spec_alpha, o, 10, &olen, &epos),
                         ETL_XPRESS_OVERFLOW);
        ck_assert_uint_eq(olen, 10);
        ck_assert_uint_eq(epos, 14);
        ck_assert(memcmp(o, alphabet, 10) == 0);
        /* match overflow: the match starts at input offset 7 */
        ck_assert_int_eq(decode(spec_abc, sizeof spec_abc, o2, 299, &olen, &epos),
                         ETL_XPRESS_OVERFLOW);
        ck_assert_uint_eq(olen, 3);
        ck_assert_uint_eq(epos, 7);
    }
    free(comp);
    free(t);
}
END_TEST

START_TEST(test_all_ff)
{
    uint8_t s[64], out[256];
    size_t k, olen, epos;
    memset(s, 0xFF, sizeof s);
    for (k = 0; k <= sizeof s; k++) {
        int st = decode(s, k, out, sizeof out, &olen, &epos);
        ck_assert_uint_eq(olen, 0);
        if (k == 0 || k == 4) {
            ck_assert_int_eq(st, ETL_XPRESS_OK);
        } else if (k < 4) {
            ck_assert_int_eq(st, ETL_XPRESS_TRUNCATED);
            ck_assert_uint_eq(epos, 0);
        } else if (k < 10) {
            /* match token, half byte, 255 byte, 16-bit length incomplete */
            ck_assert_int_eq(st, ETL_XPRESS_TRUNCATED);
            ck_assert_uint_eq(epos, 4);
        } else {
            /* offset 8192, length 65538 at output position 0 */
            ck_assert_int_eq(st, ETL_XPRESS_BAD_OFFSET);
            ck_assert_uint_eq(epos, 4);
        }
    }
}
END_TEST

START_TEST(test_len32_escape)
{
    /* literal 'a', match offset 1 with 32-bit length 0xFFFFFFFF (+3) */
    static const uint8_t s[] = {0x00, 0x00, 0x00, 0x40, 'a',  0x07, 0x00, 0x0F,
                                0xFF, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF};
    /* the same with 32-bit length 69997 (= 70000 - 3) */
    static const uint8_t s_ok[] = {0x00, 0x00, 0x00, 0x40, 'a',  0x07, 0x00, 0x0F,
                                   0xFF, 0x00, 0x00, 0x6D, 0x11, 0x01, 0x00};
    /* 32-bit length below 22 */
    static const uint8_t s_bad32[] = {0x00, 0x00, 0x00, 0x40, 'a',  0x07, 0x00, 0x0F,
                                      0xFF, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00};
    /* 16-bit length 21 (bad) and 22 (smallest allowed: length 25) */
    static const uint8_t s_bad16[] = {0x00, 0x00, 0x00, 0x40, 'a', 0x07, 0x00, 0x0F, 0xFF, 21, 0};
    static const uint8_t s_min16[] = {0x00, 0x00, 0x00, 0x40, 'a', 0x07, 0x00, 0x0F, 0xFF, 22, 0};
    uint8_t *out = xmalloc(70001);
    size_t olen, epos, k, i;

    ck_assert_int_eq(decode(s, sizeof s, out, 70001, &olen, &epos), ETL_XPRESS_OVERFLOW);
    ck_assert_uint_eq(olen, 1);
    ck_assert_uint_eq(epos, 5);
    /* every truncation inside the match is TRUNCATED at the match start */
    for (k = 6; k < sizeof s; k++) {
        ck_assert_int_eq(decode(s, k, out, 70001, &olen, &epos), ETL_XPRESS_TRUNCATED);
        ck_assert_uint_eq(epos, 5);
        ck_assert_uint_eq(olen, 1);
    }
    ck_assert_int_eq(decode(s_ok, sizeof s_ok, out, 70001, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 70001);
    for (i = 0; i < olen; i++)
        ck_assert_uint_eq(out[i], 'a');
    ck_assert_int_eq(decode(s_ok, sizeof s_ok, out, 70000, &olen, &epos), ETL_XPRESS_OVERFLOW);
    ck_assert_uint_eq(epos, 5);
    ck_assert_int_eq(decode(s_bad32, sizeof s_bad32, out, 70001, &olen, &epos),
                     ETL_XPRESS_BAD_LENGTH);
    ck_assert_uint_eq(epos, 5);
    ck_assert_uint_eq(olen, 1);
    ck_assert_int_eq(decode(s_bad16, sizeof s_bad16, out, 70001, &olen, &epos),
                     ETL_XPRESS_BAD_LENGTH);
    ck_assert_uint_eq(epos, 5);
    ck_assert_int_eq(decode(s_min16, sizeof s_min16, out, 70001, &olen, &epos), ETL_XPRESS_OK);
    ck_assert_uint_eq(olen, 26);
    free(out);
}
END_TEST

/* Random garbage never crashes or overruns and always reports a sane position. */
START_TEST(test_random_garbage)
{
    uint8_t in[512], out[2048];
    size_t iter, i, olen, epos;
    rng_seed(8);
    for (iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)(rng_next() % sizeof in);
        int st;
        for (i = 0; i < n; i++)
            in[i] = (uint8_t)(rng_next() >> ((iter % 3) * 8)) | ((iter & 4) ? 0x07 : 0);
        st = decode(in, n, out, (size_t)(rng_next() % sizeof out), &olen, &epos);
        ck_assert(st <= 0 && st >= ETL_XPRESS_BAD_LENGTH);
        if (st != ETL_XPRESS_OK)
            ck_assert_uint_lt(epos, n);
        ck_assert_uint_le(olen, sizeof out);
    }
}
END_TEST

START_TEST(test_compress_small_cap)
{
    uint8_t in[100] = {0}, out[200];
    ck_assert_uint_eq(etl_xpress_compress(in, 100, out, etl_xpress_compress_bound(100) - 1), 0);
    ck_assert_uint_gt(etl_xpress_compress(in, 100, out, etl_xpress_compress_bound(100)), 0);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */

static Suite *xpress_suite(void)
{
    Suite *s = suite_create("xpress");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_spec_example_alphabet);
    tcase_add_test(tc, test_spec_example_abc);
    tcase_add_test(tc, test_roundtrip_empty);
    tcase_add_test(tc, test_roundtrip_one_byte);
    tcase_add_test(tc, test_roundtrip_zero_1mib);
    tcase_add_test(tc, test_roundtrip_random_64k);
    tcase_add_test(tc, test_roundtrip_text);
    tcase_add_test(tc, test_roundtrip_long_matches);
    tcase_add_test(tc, test_roundtrip_overlap_offsets);
    tcase_add_test(tc, test_decode_every_length);
    tcase_add_test(tc, test_decode_overlap_offsets);
    tcase_add_test(tc, test_decode_half_byte_sharing);
    tcase_add_test(tc, test_decode_end_positions);
    tcase_add_test(tc, test_truncation_prefixes);
    tcase_add_test(tc, test_bad_offset);
    tcase_add_test(tc, test_overflow);
    tcase_add_test(tc, test_all_ff);
    tcase_add_test(tc, test_len32_escape);
    tcase_add_test(tc, test_random_garbage);
    tcase_add_test(tc, test_compress_small_cap);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(xpress_suite());
}
