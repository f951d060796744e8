/* SPDX-License-Identifier: MIT */
/* Unit tests of the flame (output/flame.c) and its writers: speedscope's JSON and the SVG flame graph. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "check_run.h"
#include "etl.h"
#include "testutil.h"

/* "a;b;c" as frames (at most 16; names up to 63 bytes). */
static unsigned frames_of(const char *stack, etl_flame_frame *out, char names[][64])
{
    unsigned n = 0;
    const char *p = stack;

    while (*p && n < 16) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        snprintf(names[n], 64, "%.*s", (int)len, p);
        out[n] = (etl_flame_frame){ names[n], NULL, 0 };
        n++;
        p += len + (semi ? 1 : 0);
    }
    return n;
}

static void add(etl_flame *fl, const char *profile, const char *stack, uint64_t count)
{
    etl_flame_frame fr[16];
    char names[16][64];
    unsigned n = frames_of(stack, fr, names);

    ck_assert_int_eq(etl_flame_add(fl, profile, fr, n, count), ETL_OK);
}

/* Two threads: main;hot_a 71, main;hot_b 20, main 9 in one; main;hot_a 5 in the other, and a
   name that needs escaping. */
static etl_flame *example(void)
{
    etl_flame *fl = etl_flame_new();

    ck_assert_ptr_nonnull(fl);
    add(fl, "app (100) tid 101", "main;hot_a", 70);
    add(fl, "app (100) tid 101", "main;hot_b", 20);
    add(fl, "app (100) tid 101", "main", 9);
    add(fl, "app (100) tid 101", "main;hot_a", 1);
    add(fl, "app (100) tid 102", "main;hot_a", 5);
    add(fl, "app (100) tid 102", "main;operator<<(ostream&, \"x\")", 3);
    return fl;
}

static char *write_mem(etl_flame *fl, int svg, size_t *n)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, n);

    ck_assert_ptr_nonnull(f);
    if (svg) ck_assert_int_eq(etl_flame_write_svg(fl, f, "Test <profile>", 1200), ETL_OK);
    else ck_assert_int_eq(etl_flame_write_speedscope(fl, f, "test"), ETL_OK);
    fclose(f);
    return text;
}

/* How often what occurs in text (memmem over the known length: the sanitizers' strstr measures
   the whole text at every call). */
static size_t count_of(const char *text, const char *what)
{
    size_t n = 0, wl = strlen(what);
    const char *end = text + strlen(text);

    for (const char *p = text; (p = memmem(p, (size_t)(end - p), what, wl)); p += wl) n++;
    return n;
}

START_TEST(speedscope_exact)
{
    etl_flame *fl = example();
    size_t n;
    char *text = write_mem(fl, 0, &n), err[200];
    static const char expected[] =
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"libetl " ETL_VERSION_STRING
        "\",\"name\":\"test\",\"activeProfileIndex\":0,\n"
        "\"shared\":{\"frames\":[\n{\"name\":\"main\"},\n{\"name\":\"hot_a\"},\n{\"name\":\"hot_b\"},\n"
        "{\"name\":\"operator<<(ostream&, \\\"x\\\")\"}]},\n"
        "\"profiles\":[\n"
        "{\"type\":\"sampled\",\"name\":\"app (100) tid 101\",\"unit\":\"none\",\"startValue\":0,\"endValue\":100,\n"
        "\"samples\":[[0],[0,1],[0,2]],\n\"weights\":[9,71,20]},\n"
        "{\"type\":\"sampled\",\"name\":\"app (100) tid 102\",\"unit\":\"none\",\"startValue\":0,\"endValue\":8,\n"
        "\"samples\":[[0,1],[0,3]],\n\"weights\":[5,3]}]}\n";

    ck_assert_msg(test_json_check(text, n, err, sizeof err) == 0, "invalid JSON: %s", err);
    ck_assert_str_eq(text, expected);
    ck_assert_uint_eq(etl_flame_total(fl), 108);
    free(text);
    etl_flame_free(fl);
}
END_TEST

/* The members speedscope's schema requires: the file's $schema, profiles and shared; each
   sampled profile's type, name, unit, startValue, endValue, samples and weights; each frame's
   name. And as many weights as samples, summing to endValue. */
START_TEST(speedscope_schema)
{
    etl_flame *fl = etl_flame_new();
    etl_flame_frame fr[3] = { { "f1", "a.c", 10 }, { "f2", NULL, 0 }, { "f3", "b.c", 0 } };
    size_t n;
    char *text, err[200];

    ck_assert_int_eq(etl_flame_add(fl, "p", fr, 3, 2), ETL_OK);
    ck_assert_int_eq(etl_flame_add(fl, "p", fr, 2, 1), ETL_OK);
    ck_assert_int_eq(etl_flame_add(fl, "q", NULL, 0, 4), ETL_OK); /* no frames: the profile itself */
    text = write_mem(fl, 0, &n);
    ck_assert_msg(test_json_check(text, n, err, sizeof err) == 0, "invalid JSON: %s", err);
    ck_assert_ptr_nonnull(strstr(text, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
    ck_assert_ptr_nonnull(strstr(text, "\"shared\":{\"frames\":["));
    ck_assert_ptr_nonnull(strstr(text, "\"profiles\":["));
    ck_assert_uint_eq(count_of(text, "{\"type\":\"sampled\",\"name\":"), 2);
    ck_assert_uint_eq(count_of(text, "\"unit\":\"none\",\"startValue\":0,\"endValue\":"), 2);
    ck_assert_ptr_nonnull(strstr(text, "{\"name\":\"f1\",\"file\":\"a.c\",\"line\":10}"));
    ck_assert_ptr_nonnull(strstr(text, "{\"name\":\"f3\",\"file\":\"b.c\"}"));
    /* q (4) is heavier than p (3): first */
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"q\",\"unit\":\"none\",\"startValue\":0,\"endValue\":4,\n"
                                       "\"samples\":[[]],\n\"weights\":[4]}"));
    ck_assert_ptr_nonnull(strstr(text, "\"endValue\":3,\n\"samples\":[[0,1],[0,1,2]],\n\"weights\":[1,2]}"));
    free(text);
    etl_flame_free(fl);
}
END_TEST

static xmlDocPtr parse_svg(const char *text, size_t n)
{
    xmlDocPtr doc = xmlReadMemory(text, (int)n, "flame.svg", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);

    ck_assert_msg(doc != NULL, "the SVG is not well-formed XML");
    ck_assert_str_eq((const char *)xmlDocGetRootElement(doc)->name, "svg");
    return doc;
}

/* The frames' <g class="f"> elements, depth first. */
static void collect(xmlNodePtr node, xmlNodePtr *out, size_t *n, size_t max)
{
    for (xmlNodePtr c = node->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        if (strcmp((const char *)c->name, "g") == 0) {
            xmlChar *cls = xmlGetProp(c, (const xmlChar *)"class");
            if (cls && strcmp((const char *)cls, "f") == 0 && *n < max) out[(*n)++] = c;
            xmlFree(cls);
        }
        collect(c, out, n, max);
    }
}

static double num_prop(xmlNodePtr n, const char *name)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
    double d;

    ck_assert_ptr_nonnull(v);
    d = strtod((const char *)v, NULL);
    xmlFree(v);
    return d;
}

static xmlNodePtr child_named(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0) return c;
    return NULL;
}

START_TEST(svg_well_formed)
{
    etl_flame *fl = example();
    size_t n, nf = 0;
    char *text = write_mem(fl, 1, &n), *again;
    xmlDocPtr doc = parse_svg(text, n);
    xmlNodePtr g[64];

    collect(xmlDocGetRootElement(doc), g, &nf, 64);
    /* all, 2 threads, main under each, hot_a and hot_b under the first, hot_a and operator<< under the second */
    ck_assert_uint_eq(nf, 9);
    for (size_t i = 0; i < nf; i++) {
        xmlNodePtr rect = child_named(g[i], "rect"), title = child_named(g[i], "title");
        ck_assert_ptr_nonnull(rect);
        ck_assert_ptr_nonnull(title);
        /* width in proportion to the samples: 1180 px for 108 */
        ck_assert_double_eq_tol(num_prop(rect, "width"), 1180.0 * num_prop(g[i], "data-n") / 108.0, 0.01);
    }
    {   /* the name that needs escaping reads back as it was */
        xmlChar *t = xmlNodeGetContent(child_named(g[8], "title"));
        ck_assert_str_eq((const char *)t, "operator<<(ostream&, \"x\")\n3 samples (2.78%)");
        xmlFree(t);
    }
    {   /* hot_a has one color wherever it is */
        xmlChar *a = xmlGetProp(child_named(g[3], "rect"), (const xmlChar *)"fill");
        xmlChar *b = xmlGetProp(child_named(g[7], "rect"), (const xmlChar *)"fill");
        xmlChar *t = xmlNodeGetContent(child_named(g[7], "title"));
        ck_assert_str_eq((const char *)t, "hot_a\n5 samples (4.63%)");
        ck_assert_str_eq((const char *)a, (const char *)b);
        xmlFree(a);
        xmlFree(b);
        xmlFree(t);
    }
    /* the search box, the script */
    ck_assert_ptr_nonnull(strstr(text, "id=\"search\""));
    ck_assert_ptr_nonnull(strstr(text, "<script type=\"text/ecmascript\"><![CDATA["));
    ck_assert_ptr_nonnull(strstr(text, "Test &lt;profile&gt;"));
    xmlFreeDoc(doc);
    /* the same flame, the same bytes */
    again = write_mem(fl, 1, &n);
    ck_assert_str_eq(text, again);
    free(again);
    free(text);
    etl_flame_free(fl);
}
END_TEST

/* Names that are not UTF-8 or hold control characters still make well-formed XML and valid JSON. */
START_TEST(odd_names)
{
    etl_flame *fl = etl_flame_new();
    etl_flame_frame fr[3] = { { "bad\xff\xfe", NULL, 0 }, { "ctl\x01\x1f]]>&", "f\xc3", 1 },
                              { "nonchar\xef\xbf\xbf\xef\xbf\xbe", NULL, 0 } };
    size_t n;
    char *text, err[200];
    xmlDocPtr doc;

    ck_assert_int_eq(etl_flame_add(fl, "p\x80", fr, 3, 1), ETL_OK);
    text = write_mem(fl, 1, &n);
    doc = parse_svg(text, n);
    xmlFreeDoc(doc);
    free(text);
    text = write_mem(fl, 0, &n);
    ck_assert_msg(test_json_check(text, n, err, sizeof err) == 0, "invalid JSON: %s", err);
    free(text);
    etl_flame_free(fl);
}
END_TEST

/* An empty flame: a root and nothing else, still valid. */
START_TEST(empty)
{
    etl_flame *fl = etl_flame_new();
    size_t n;
    char *text = write_mem(fl, 1, &n), err[200];
    xmlDocPtr doc = parse_svg(text, n);

    xmlFreeDoc(doc);
    ck_assert_uint_eq(count_of(text, "<g class=\"f\""), 1);
    free(text);
    text = write_mem(fl, 0, &n);
    ck_assert_msg(test_json_check(text, n, err, sizeof err) == 0, "invalid JSON: %s", err);
    ck_assert_ptr_nonnull(strstr(text, "\"profiles\":[]}"));
    free(text);
    etl_flame_free(fl);
}
END_TEST

/* Deep and wide: memory per distinct stack, the walk without recursion. */
START_TEST(deep_and_wide)
{
    etl_flame *fl = etl_flame_new();
    etl_flame_frame *fr = calloc(20000, sizeof *fr);
    char (*names)[16] = calloc(20000, sizeof *names);
    size_t n;
    char *text, err[200];

    for (unsigned i = 0; i < 20000; i++) {
        snprintf(names[i], sizeof names[i], "f%u", i % 7);
        fr[i].name = names[i];
    }
    ck_assert_int_eq(etl_flame_add(fl, "deep", fr, 20000, 1), ETL_OK);
    for (unsigned i = 0; i < 5000; i++) {
        snprintf(names[0], sizeof names[0], "w%u", i);
        ck_assert_int_eq(etl_flame_add(fl, "wide", fr, 1, 1 + i % 3), ETL_OK);
        ck_assert_int_eq(etl_flame_add(fl, "wide", fr, 1, 1), ETL_OK); /* the same stack again */
    }
    text = write_mem(fl, 0, &n);
    ck_assert_msg(test_json_check(text, n, err, sizeof err) == 0, "invalid JSON: %s", err);
    free(text);
    text = write_mem(fl, 1, &n);
    ck_assert_uint_eq(count_of(text, "<g class=\"f\""), 1 + 2 + 20000 + 5000);
    free(text);
    free(fr);
    free(names);
    etl_flame_free(fl);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("flame");
    TCase *tc = tcase_create("flame");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, speedscope_exact);
    tcase_add_test(tc, speedscope_schema);
    tcase_add_test(tc, svg_well_formed);
    tcase_add_test(tc, odd_names);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, deep_and_wide);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
