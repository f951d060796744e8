/* SPDX-License-Identifier: MIT */
/* Text quoted for JSON and XML output, with bytes that are not UTF-8 replaced so that the file parses. */
#include "output/output.h"

size_t output_utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    uint32_t cp;

    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0; /* a NUL ends it here too */
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    /* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void output_json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    while (*p) {
        size_t n = output_utf8_length(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fwrite(p, 1, n, f);
        p += n;
    }
    fputc('"', f);
}

void output_xml_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        size_t n = output_utf8_length(p);
        /* XML 1.0's Char has no C0 controls but tab, newline and return, nor U+FFFE, U+FFFF */
        if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') ||
            (n == 3 && p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD */
            p += n ? n : 1;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fwrite(p, 1, n, f);
        }
        p += n;
    }
}
