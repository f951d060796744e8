/* SPDX-License-Identifier: MIT */
/* A flame as an SVG flame graph that a browser shows, searches and zooms with no other tool. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

#define XPAD 10         /* pixels left and right of the graph */
#define FRAME_HEIGHT 16
#define TOP 64          /* title, search box, reset */
#define BOTTOM 28       /* the frame under the pointer */
#define CHAR_WIDTH 7.0  /* of the 12 px labels, near enough to cut them */

/* The script: zoom on click, search with the box (or #s=TEXT), the frame under the pointer. */
static const char script[] =
    "var svg=document.documentElement,W=+svg.getAttribute('width'),XP=" "10" ",total=+svg.getAttribute('data-total');\n"
    "var frames=Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
    "var zs=0,zn=total,zd=0,details=document.getElementById('details'),matched=document.getElementById('matched');\n"
    "function nameOf(g){var t=g.querySelector('title').textContent;return t.slice(0,t.lastIndexOf('\\n'));}\n"
    "function label(g,w){var n=nameOf(g),fit=Math.floor((w-6)/7),t=g.querySelector('text');\n"
    " t.textContent=fit<3?'':(n.length<=fit?n:n.slice(0,fit-2)+'..');}\n"
    "function layout(){if(!total)return;frames.forEach(function(g){\n"
    " var s=+g.getAttribute('data-s'),n=+g.getAttribute('data-n'),d=+g.getAttribute('data-d'),x,w;\n"
    " if(d<zd){if(s<=zs&&s+n>=zs+zn){x=0;w=1;g.style.opacity='0.6';}else{g.style.display='none';return;}}\n"
    " else if(s>=zs&&s+n<=zs+zn){x=(s-zs)/zn;w=n/zn;g.style.opacity='';}\n"
    " else{g.style.display='none';return;}\n"
    " g.style.display='';var px=XP+x*(W-2*XP),pw=w*(W-2*XP),r=g.querySelector('rect');\n"
    " r.setAttribute('x',px.toFixed(2));r.setAttribute('width',pw.toFixed(2));\n"
    " g.querySelector('text').setAttribute('x',(px+3).toFixed(2));label(g,pw);});}\n"
    "function zoom(g){var d=+g.getAttribute('data-d');\n"
    " if(d===0){zs=0;zn=total;zd=0;}else{zs=+g.getAttribute('data-s');zn=+g.getAttribute('data-n');zd=d;}\n"
    " if(zn>0)layout();}\n"
    "function search(term){var t=term.toLowerCase(),spans=[];\n"
    " frames.forEach(function(g){var r=g.querySelector('rect'),hit=t!==''&&nameOf(g).toLowerCase().indexOf(t)>=0;\n"
    "  if(!r.hasAttribute('data-fill'))r.setAttribute('data-fill',r.getAttribute('fill'));\n"
    "  r.setAttribute('fill',hit?'rgb(230,0,230)':r.getAttribute('data-fill'));\n"
    "  if(hit)spans.push([+g.getAttribute('data-s'),+g.getAttribute('data-n')]);});\n"
    " spans.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
    " spans.forEach(function(p){var a=Math.max(p[0],end),b=p[0]+p[1];if(b>a){sum+=b-a;end=b;}});\n"
    " matched.textContent=t===''?'':'Matched: '+(total?100*sum/total:0).toFixed(1)+'%';}\n"
    "frames.forEach(function(g){g.addEventListener('click',function(){zoom(g);});\n"
    " g.addEventListener('mouseover',function(){details.textContent=g.querySelector('title').textContent.replace('\\n',' \\u2014 ');});\n"
    " g.addEventListener('mouseout',function(){details.textContent=' ';});});\n"
    "document.getElementById('reset').addEventListener('click',function(){zoom(frames[0]);});\n"
    "var box=document.getElementById('search');box.addEventListener('input',function(){search(box.value);});\n"
    "var h=/[#&]s=([^&]*)/.exec(location.hash);if(h){box.value=decodeURIComponent(h[1]);search(box.value);}\n";

/* FNV-1a of the name: its color, the same in every file. */
static void color_of(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
    uint32_t h = 2166136261u;

    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    *r = 205 + h % 51;
    *g = (h >> 8) % 230;
    *b = (h >> 20) % 55;
}

/* name cut to fit px pixels (whole UTF-8 characters, ".." where cut), as the script cuts it. */
static void label(const char *name, double px, char *out, size_t size)
{
    long fit = (long)((px - 6) / CHAR_WIDTH);
    size_t chars = 0, i, keep = 0;
    const unsigned char *s = (const unsigned char *)name;

    out[0] = '\0';
    if (fit < 3) return;
    for (i = 0; s[i]; i++)
        if ((s[i] & 0xC0) != 0x80) chars++;
    if ((long)chars <= fit) {
        snprintf(out, size, "%s", name);
        return;
    }
    /* the first fit - 2 characters */
    for (i = 0, chars = 0; s[i]; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            if ((long)chars == fit - 2) break;
            chars++;
        }
        keep = i + 1;
    }
    snprintf(out, size, "%.*s..", (int)(keep < size - 3 ? keep : size - 3), name);
}

struct svg {
    const etl_flame *fl;
    FILE *f;
    uint64_t *offset, *next;
    uint32_t max_depth;
    unsigned width;
    char *text;
    size_t text_size;
    int depth_pass;
};

static int visit(void *arg, uint32_t node, const uint32_t *path, size_t depth)
{
    struct svg *s = arg;
    const struct flame_node *n = &s->fl->nodes[node];
    const char *name = node == 0 ? "all" : s->fl->frames[n->frame].name;
    uint64_t total = s->fl->nodes[0].total;
    double span = s->width - 2.0 * XPAD, x, w, y;
    unsigned r, g, b;
    size_t need = strlen(name) + 8;

    if (s->depth_pass) {
        if (depth > s->max_depth) s->max_depth = (uint32_t)depth;
        return 0;
    }
    if (depth == 0) {
        s->offset[node] = 0;
    } else {
        uint32_t parent = path[depth - 1];
        s->offset[node] = s->next[parent];
        s->next[parent] += n->total;
    }
    s->next[node] = s->offset[node];
    x = XPAD + (total ? span * (double)s->offset[node] / (double)total : 0);
    w = total ? span * (double)n->total / (double)total : span;
    y = TOP + (double)(s->max_depth - depth) * FRAME_HEIGHT;
    color_of(name, &r, &g, &b);
    if (need > s->text_size) {
        char *t = realloc(s->text, need);
        if (!t) return -1;
        s->text = t;
        s->text_size = need;
    }
    label(name, w, s->text, s->text_size);
    fprintf(s->f, "<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%zu\"><title>", s->offset[node],
            n->total, depth);
    output_xml_text(s->f, name);
    fprintf(s->f, "\n%" PRIu64 " sample%s (%.2f%%)</title>", n->total, n->total == 1 ? "" : "s",
            total ? 100.0 * (double)n->total / (double)total : 0.0);
    fprintf(s->f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x,
            y, w, FRAME_HEIGHT - 1, r, g, b);
    fprintf(s->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4.5);
    output_xml_text(s->f, s->text);
    fputs("</text></g>\n", s->f);
    return 0;
}

int etl_flame_write_svg(const etl_flame *fl, FILE *f, const char *title, unsigned width)
{
    struct svg s = { fl, f, NULL, NULL, 0, width ? width : 1200, NULL, 0, 1 };
    uint32_t *first = NULL, *child = NULL;
    unsigned height;
    int rc = ETL_FAILED;

    if (s.width < 200) s.width = 200;
    if (flame_children(fl, &first, &child) < 0) goto out;
    if (!(s.offset = malloc(fl->nnodes * sizeof *s.offset)) || !(s.next = malloc(fl->nnodes * sizeof *s.next))) goto out;
    if (flame_walk(fl, first, child, 0, visit, &s) < 0) goto out;
    s.depth_pass = 0;
    height = TOP + (s.max_depth + 1) * FRAME_HEIGHT + BOTTOM;
    fprintf(f,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
            "viewBox=\"0 0 %u %u\" data-total=\"%" PRIu64 "\">\n",
            s.width, height, s.width, height, fl->nodes[0].total);
    fprintf(f, "<!-- written by libetl %s: one rectangle per frame of each call path, as wide as its samples -->\n",
            etl_version());
    fputs("<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:rgb(0,0,0)}"
          "g.f{cursor:pointer}g.f text{pointer-events:none}#title{font-size:17px;text-anchor:middle}"
          "#reset{cursor:pointer;fill:rgb(0,0,160)}</style>\n",
          f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"rgb(248,248,240)\"/>\n", s.width, height);
    fprintf(f, "<text id=\"title\" x=\"%u\" y=\"24\">", s.width / 2);
    output_xml_text(f, title ? title : "Flame graph");
    fputs("</text>\n", f);
    fprintf(f, "<text id=\"reset\" x=\"%d\" y=\"50\">Reset zoom</text>\n", XPAD);
    fprintf(f, "<text id=\"matched\" x=\"%u\" y=\"50\" style=\"text-anchor:end\"> </text>\n", s.width - XPAD - 260);
    fprintf(f,
            "<foreignObject x=\"%u\" y=\"34\" width=\"250\" height=\"24\"><input xmlns=\"http://www.w3.org/1999/xhtml\" "
            "id=\"search\" type=\"search\" placeholder=\"Search\" style=\"width:240px\"/></foreignObject>\n",
            s.width - XPAD - 250);
    fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, height - 10);
    if (flame_walk(fl, first, child, 0, visit, &s) < 0) goto out;
    fputs("<script type=\"text/ecmascript\"><![CDATA[\n", f);
    fputs(script, f);
    fputs("]]></script>\n</svg>\n", f);
    rc = ETL_OK;
out:
    free(first);
    free(child);
    free(s.offset);
    free(s.next);
    free(s.text);
    if (ferror(f)) return ETL_FATAL;
    return rc;
}
