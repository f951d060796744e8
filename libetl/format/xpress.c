/* SPDX-License-Identifier: MIT */
/* Plain LZ77 ("XPRESS", MS-XCA 2.3/2.4) decompressor and hash-chain compressor for ETL buffers. */
#include "format/format.h"

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define XP_LIKELY(x) __builtin_expect(!!(x), 1)
#define XP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define XP_LIKELY(x) (x)
#define XP_UNLIKELY(x) (x)
#endif

/* ------------------------------------------------------------------------------------------ */
/* Little-endian loads/stores through memcpy (no unaligned pointer casts). */

static inline uint16_t xp_ld16(const uint8_t *p)
{
    return (uint16_t)(p[0] | ((unsigned)p[1] << 8));
}

static inline uint32_t xp_ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void xp_st16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void xp_st32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Native-order loads, used only for hashing and equality tests. */
static inline uint32_t xp_ldn32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t xp_ldn64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Number of leading zero bits of a nonzero 32-bit value. */
static inline unsigned xp_clz32(uint32_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_clz(v);
#else
    unsigned n = 0;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
#endif
}

/* Index of the first differing byte (in memory order) given a nonzero XOR of two native loads. */
static inline size_t xp_first_diff_byte(uint64_t x)
{
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) &&                      \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(x) >> 3;
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) &&                    \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (size_t)__builtin_clzll(x) >> 3;
#else
    unsigned char b[8];
    size_t i = 0;
    memcpy(b, &x, 8);
    while (b[i] == 0)
        i++;
    return i;
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* Decompression (MS-XCA 2.4.4). */

/* Copy a match whose offset is below 8 and smaller than its length, byte-exact (no writes past
   d + len). The bytes from d - off onwards repeat with period off. */
static void xp_copy_short_offset(uint8_t *d, size_t off, size_t len)
{
    const uint8_t *s = d - off;
    size_t step, i;

    if (off == 1) {
        memset(d, s[0], len);
        return;
    }
    /* After `step` (a multiple of off, >= 8) bytes are written, d[j] == d[j - step] holds and
       8-byte chunks from j - step never overlap the chunk being written. */
    step = off;
    while (step < 8)
        step += off;
    for (i = 0; i < len && i < step; i++)
        d[i] = s[i];
    while (len - i >= 8) {
        memcpy(d + i, d + i - step, 8);
        i += 8;
    }
    for (; i < len; i++)
        d[i] = d[i - step];
}

int etl_xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                          size_t *out_len, size_t *err_pos)
{
    size_t ip = 0, op = 0;
    size_t half = 0; /* input position of a half-used length byte; 0 = none (pos 0 is a flag) */
    uint32_t flags = 0; /* next flag in bit 31 */
    unsigned nflags = 0;
    size_t epos = 0;
    int st;

    for (;;) {
        if (nflags == 0) {
            if (ip == in_len)
                goto done;
            if (XP_UNLIKELY(in_len - ip < 4)) {
                epos = ip;
                st = ETL_XPRESS_TRUNCATED;
                goto fail;
            }
            flags = xp_ld32(in + ip);
            ip += 4;
            nflags = 32;
        }

        if (!(flags & 0x80000000u)) {
            /* A run of literals: as many as there are leading zero flag bits. */
            unsigned run = flags ? xp_clz32(flags) : 32;
            size_t avail, room, m;
            if (run > nflags)
                run = nflags;
            avail = in_len - ip;
            room = out_cap - op;
            m = run < avail ? run : avail;
            if (XP_UNLIKELY(m > room)) {
                if (room) {
                    memcpy(out + op, in + ip, room);
                    op += room;
                    ip += room;
                }
                epos = ip;
                st = ETL_XPRESS_OVERFLOW;
                goto fail;
            }
            if (m) {
                memcpy(out + op, in + ip, m);
                ip += m;
                op += m;
            }
            if (m < run) /* input exhausted where the next literal would start */
                goto done;
            nflags -= run;
            flags = run < 32 ? flags << run : 0;
            continue;
        }

        /* A match. */
        flags <<= 1;
        nflags--;
        {
            size_t start = ip, off, len;
            unsigned tok;

            if (XP_UNLIKELY(in_len - ip < 2)) {
                if (ip == in_len) /* normal end: the padding flag bits are ones */
                    goto done;
                epos = start;
                st = ETL_XPRESS_TRUNCATED;
                goto fail;
            }
            tok = xp_ld16(in + ip);
            ip += 2;
            off = (size_t)(tok >> 3) + 1;
            len = tok & 7;
            if (len == 7) {
                if (half == 0) {
                    if (XP_UNLIKELY(ip == in_len)) {
                        epos = start;
                        st = ETL_XPRESS_TRUNCATED;
                        goto fail;
                    }
                    len = in[ip] & 15u;
                    half = ip;
                    ip++;
                } else {
                    len = in[half] >> 4;
                    half = 0;
                }
                if (len == 15) {
                    if (XP_UNLIKELY(ip == in_len)) {
                        epos = start;
                        st = ETL_XPRESS_TRUNCATED;
                        goto fail;
                    }
                    len = in[ip++];
                    if (len == 255) {
                        uint32_t v;
                        if (XP_UNLIKELY(in_len - ip < 2)) {
                            epos = start;
                            st = ETL_XPRESS_TRUNCATED;
                            goto fail;
                        }
                        v = xp_ld16(in + ip);
                        ip += 2;
                        if (v == 0) {
                            if (XP_UNLIKELY(in_len - ip < 4)) {
                                epos = start;
                                st = ETL_XPRESS_TRUNCATED;
                                goto fail;
                            }
                            v = xp_ld32(in + ip);
                            ip += 4;
                        }
                        if (XP_UNLIKELY(v < 15 + 7)) {
                            epos = start;
                            st = ETL_XPRESS_BAD_LENGTH;
                            goto fail;
                        }
                        /* spec: v - (15 + 7) + 15 + 7 + 3 */
#if SIZE_MAX <= UINT32_MAX
                        if (XP_UNLIKELY(v > SIZE_MAX - 3)) {
                            epos = start;
                            st = ETL_XPRESS_OVERFLOW;
                            goto fail;
                        }
#endif
                        len = (size_t)v + 3;
                    } else {
                        len += 15 + 7 + 3;
                    }
                } else {
                    len += 7 + 3;
                }
            } else {
                len += 3;
            }

            if (XP_UNLIKELY(off > op)) {
                epos = start;
                st = ETL_XPRESS_BAD_OFFSET;
                goto fail;
            }
            if (XP_UNLIKELY(len > out_cap - op)) {
                epos = start;
                st = ETL_XPRESS_OVERFLOW;
                goto fail;
            }

            {
                uint8_t *d = out + op;
                const uint8_t *s = d - off;
                if (off >= 8 && out_cap - op - len >= 8) {
                    /* 8-byte chunks; may write up to 7 scratch bytes past the match. Each chunk's
                       source lies at least 8 bytes behind its destination. */
                    uint8_t *e = d + len;
                    do {
                        memcpy(d, s, 8);
                        d += 8;
                        s += 8;
                    } while (d < e);
                } else if (off >= len) {
                    memcpy(d, s, len);
                } else if (off >= 8) {
                    size_t i = 0;
                    while (len - i >= 8) {
                        memcpy(d + i, s + i, 8);
                        i += 8;
                    }
                    for (; i < len; i++)
                        d[i] = s[i];
                } else {
                    xp_copy_short_offset(d, off, len);
                }
                op += len;
            }
        }
    }

done:
    *out_len = op;
    return ETL_XPRESS_OK;
fail:
    *out_len = op;
    if (err_pos)
        *err_pos = epos;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Compression (encoding per MS-XCA 2.3.4; match finding with hash chains and one-step lazy
   evaluation). */

#define XP_WINDOW 8192u /* largest offset the format can express */
#define XP_WMASK (XP_WINDOW - 1u)
#define XP_HASH_BITS 13
#define XP_MIN_MATCH 4u   /* matches are found through a 4-byte hash */
#define XP_MAX_CHAIN 16   /* candidates examined per position */
#define XP_NICE_LEN 128u  /* stop searching once a match this long is found */
#define XP_LAZY_MAX 64u   /* do not look for a better match after one this long */
#define XP_MAX_LEN ((size_t)UINT32_MAX) /* length - 3 must fit the 32-bit escape */

struct xp_cstate {
    uint32_t head[1u << XP_HASH_BITS]; /* low 32 bits of the newest position per hash */
    uint16_t chain[XP_WINDOW];         /* distance to the previous position with the same hash */
};

struct xp_out {
    uint8_t *buf;
    size_t op;       /* next output byte */
    size_t fpos;     /* where the current flag word goes */
    size_t half;     /* output position of a half-used length byte, 0 = none */
    uint32_t flags;
    unsigned nflags; /* flags accumulated in the current word */
};

static inline uint32_t xp_hash(const uint8_t *p)
{
    return (xp_ldn32(p) * 2654435761u) >> (32 - XP_HASH_BITS);
}

/* Insert position pos (pos + 4 <= n) into the hash chains. */
static inline void xp_insert(struct xp_cstate *cs, const uint8_t *in, size_t pos)
{
    uint32_t h = xp_hash(in + pos);
    uint32_t d = (uint32_t)pos - cs->head[h];
    cs->chain[pos & XP_WMASK] = (uint16_t)((d != 0 && d <= XP_WINDOW && d <= pos) ? d : 0);
    cs->head[h] = (uint32_t)pos;
}

static inline size_t xp_match_len(const uint8_t *a, const uint8_t *b, size_t maxlen)
{
    size_t i = 0;
    while (maxlen - i >= 8) {
        uint64_t x = xp_ldn64(a + i) ^ xp_ldn64(b + i);
        if (x)
            return i + xp_first_diff_byte(x);
        i += 8;
    }
    while (i < maxlen && a[i] == b[i])
        i++;
    return i;
}

/* Longest match for pos (pos + 4 <= n, pos not yet inserted); returns its length (0 if shorter
   than XP_MIN_MATCH) and its distance in *dist. */
static size_t xp_find(const struct xp_cstate *cs, const uint8_t *in, size_t n, size_t pos,
                      size_t *dist)
{
    const uint8_t *cur = in + pos;
    size_t maxlen = n - pos;
    size_t best = XP_MIN_MATCH - 1, bestd = 0, d;
    uint32_t first = xp_ldn32(cur);
    int depth = XP_MAX_CHAIN;

    if (maxlen > XP_MAX_LEN)
        maxlen = XP_MAX_LEN;
    d = (uint32_t)((uint32_t)pos - cs->head[xp_hash(cur)]);
    while (d != 0 && d <= XP_WINDOW && d <= pos) {
        const uint8_t *c = cur - d;
        if (c[best] == cur[best] && xp_ldn32(c) == first) {
            size_t l = xp_match_len(c, cur, maxlen);
            if (l > best) {
                best = l;
                bestd = d;
                if (l >= XP_NICE_LEN || l == maxlen)
                    break;
            }
        }
        if (--depth == 0)
            break;
        {
            uint16_t nx = cs->chain[(pos - d) & XP_WMASK];
            if (nx == 0)
                break;
            d += nx;
        }
    }
    if (bestd == 0)
        return 0;
    *dist = bestd;
    return best;
}

static inline void xp_flag(struct xp_out *o, uint32_t bit)
{
    o->flags = (o->flags << 1) | bit;
    if (++o->nflags == 32) {
        xp_st32(o->buf + o->fpos, o->flags);
        o->nflags = 0;
        o->flags = 0;
        o->fpos = o->op;
        o->op += 4;
    }
}

static inline void xp_literal(struct xp_out *o, uint8_t b)
{
    o->buf[o->op++] = b;
    xp_flag(o, 0);
}

static void xp_match(struct xp_out *o, size_t len, size_t dist)
{
    uint8_t *buf = o->buf;
    size_t op = o->op;
    size_t l = len - 3;
    uint32_t tok = (uint32_t)(dist - 1) << 3;

    if (l < 7) {
        xp_st16(buf + op, tok | (uint32_t)l);
        op += 2;
    } else {
        unsigned nib;
        xp_st16(buf + op, tok | 7u);
        op += 2;
        l -= 7;
        nib = l < 15 ? (unsigned)l : 15u;
        if (o->half == 0) {
            o->half = op;
            buf[op++] = (uint8_t)nib;
        } else {
            buf[o->half] = (uint8_t)(buf[o->half] | (nib << 4));
            o->half = 0;
        }
        if (l >= 15) {
            l -= 15;
            if (l < 255) {
                buf[op++] = (uint8_t)l;
            } else {
                buf[op++] = 255;
                l += 15 + 7;
                if (l < 65536) {
                    xp_st16(buf + op, (uint32_t)l);
                    op += 2;
                } else {
                    xp_st16(buf + op, 0);
                    xp_st32(buf + op + 2, (uint32_t)l);
                    op += 6;
                }
            }
        }
    }
    o->op = op;
    xp_flag(o, 1);
}

size_t etl_xpress_compress_bound(size_t n)
{
    /* all literals: n bytes plus one flag word per 32 elements and the final (padding) word */
    return n + 4 * (n / 32) + 4;
}

size_t etl_xpress_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    struct xp_cstate cs;
    struct xp_out o;
    size_t pos = 0, ins = 0;
    size_t hend = n >= XP_MIN_MATCH ? n - XP_MIN_MATCH + 1 : 0; /* positions < hend are hashable */

    if (out == NULL || cap < etl_xpress_compress_bound(n))
        return 0;

    /* 0xFFFFFFFF as a stored position gives distance pos + 1, which is always rejected. */
    memset(cs.head, 0xFF, sizeof cs.head);
    memset(cs.chain, 0, sizeof cs.chain);

    o.buf = out;
    o.op = 4;
    o.fpos = 0;
    o.half = 0;
    o.flags = 0;
    o.nflags = 0;

    while (pos < n) {
        size_t len = 0, dist = 0;

        if (pos < hend) {
            len = xp_find(&cs, in, n, pos, &dist);
            xp_insert(&cs, in, pos);
            ins = pos + 1;
            /* One-step lazy evaluation: prefer a longer match starting at the next byte. */
            while (len != 0 && len < XP_LAZY_MAX && pos + 1 < hend) {
                size_t d2 = 0;
                size_t l2 = xp_find(&cs, in, n, pos + 1, &d2);
                xp_insert(&cs, in, pos + 1);
                ins = pos + 2;
                if (l2 <= len)
                    break;
                xp_literal(&o, in[pos]);
                pos++;
                len = l2;
                dist = d2;
            }
        }

        if (len != 0) {
            size_t end = pos + len;
            size_t iend = end < hend ? end : hend;
            xp_match(&o, len, dist);
            for (; ins < iend; ins++)
                xp_insert(&cs, in, ins);
            ins = end;
            pos = end;
        } else {
            xp_literal(&o, in[pos]);
            pos++;
        }
    }

    /* MS-XCA 2.3.4: pad the last flag word with one bits. */
    if (o.nflags == 0)
        o.flags = 0xFFFFFFFFu;
    else
        o.flags = (o.flags << (32 - o.nflags)) | ((1u << (32 - o.nflags)) - 1u);
    xp_st32(out + o.fpos, o.flags);
    return o.op;
}

const char *etl_xpress_strerror(int status)
{
    switch (status) {
    case ETL_XPRESS_OK: return "no error";
    case ETL_XPRESS_TRUNCATED: return "XPRESS stream ends inside an element";
    case ETL_XPRESS_BAD_OFFSET: return "XPRESS match refers before the start of the buffer";
    case ETL_XPRESS_OVERFLOW: return "XPRESS stream decompresses beyond the buffer's used size";
    case ETL_XPRESS_BAD_LENGTH: return "XPRESS match length escape is invalid";
    default: return "XPRESS stream is invalid";
    }
}
