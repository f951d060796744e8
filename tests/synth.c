/* SPDX-License-Identifier: MIT */
/* A small in-memory builder of synthetic ETL files for the tests and the benchmark. */
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "synth.h"
#include "writer/writer.h"
#include "format/format.h"

struct synth_cpu {
    uint8_t *buf;
    uint32_t used;
};

struct synth {
    struct synth_options o;
    struct synth_cpu *cpu;
    uint8_t **out;        /* flushed data buffers, in flush order */
    uint32_t *out_size;
    uint32_t nout, cap;
    int64_t seq;
};

static void put_guid(uint8_t *p, const etl_guid *g)
{
    if (g) etl_guid_write(p, g);
    else memset(p, 0, 16);
}

struct synth *synth_new(const struct synth_options *o)
{
    struct synth *s = calloc(1, sizeof *s);

    s->o = *o;
    if (!s->o.buffer_size) s->o.buffer_size = 65536;
    if (!s->o.pointer_size) s->o.pointer_size = 8;
    if (!s->o.cpus) s->o.cpus = 4;
    if (!s->o.clock_type) s->o.clock_type = ETL_CLOCK_PERFCOUNTER;
    if (!s->o.perf_freq) s->o.perf_freq = 10000000;
    if (!s->o.cpu_speed_mhz) s->o.cpu_speed_mhz = 3000;
    if (!s->o.start_time) s->o.start_time = 133485408000000000LL; /* 2024-01-01T00:00:00Z */
    if (!s->o.start_timestamp) s->o.start_timestamp = 1000000;
    if (!s->o.log_file_mode) s->o.log_file_mode = ETL_MODE_FILE_SEQUENTIAL;
    if (s->o.compressed) s->o.log_file_mode |= ETL_MODE_COMPRESSED;
    if (!s->o.layout_major && !s->o.layout_minor) {
        s->o.layout_major = s->o.compressed ? 2 : 1;
        s->o.layout_minor = s->o.compressed ? 0 : 5;
    }
    if (!s->o.logger_name) s->o.logger_name = "SynthSession";
    if (!s->o.log_file_name) s->o.log_file_name = "C:\\synth.etl";
    s->cpu = calloc(s->o.cpus, sizeof *s->cpu);
    s->seq = 1;
    return s;
}

uint32_t synth_buffers(const struct synth *s) { return s->nout; }

static void flush_cpu(struct synth *s, unsigned c)
{
    struct synth_cpu *b = &s->cpu[c];
    uint32_t bs = s->o.buffer_size;
    uint8_t *h = b->buf;

    if (!b->buf || b->used <= ETL_BUFFER_HEADER_SIZE) return;
    memset(h, 0, ETL_BUFFER_HEADER_SIZE);
    etl_put32(h + ETL_BH_SAVED_OFFSET, b->used);
    etl_put32(h + ETL_BH_CURRENT_OFFSET, bs + b->used);
    etl_put64(h + ETL_BH_TIMESTAMP, 0);
    etl_put64(h + ETL_BH_SEQUENCE_NUMBER, (uint64_t)s->seq++);
    etl_put16(h + ETL_BH_CLIENT_CONTEXT, (uint16_t)c);
    etl_put16(h + ETL_BH_LOGGER_ID, 0x12);
    etl_put32(h + ETL_BH_STATE, ETL_BUFFER_STATE_FLUSH);
    etl_put32(h + ETL_BH_OFFSET, b->used);
    etl_put16(h + ETL_BH_BUFFER_FLAG, ETL_BUFFER_FLAG_PROC_INDEX);
    etl_put16(h + ETL_BH_BUFFER_TYPE, ETL_BUFFER_TYPE_GENERIC);
    if (s->nout == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->out = realloc(s->out, s->cap * sizeof *s->out);
        s->out_size = realloc(s->out_size, s->cap * sizeof *s->out_size);
    }
    if (s->o.compressed) {
        size_t bound = etl_xpress_compress_bound(b->used - ETL_BUFFER_HEADER_SIZE);
        uint8_t *z = malloc(ETL_BUFFER_HEADER_SIZE + bound);
        size_t n = etl_xpress_compress(h + ETL_BUFFER_HEADER_SIZE, b->used - ETL_BUFFER_HEADER_SIZE,
                                       z + ETL_BUFFER_HEADER_SIZE, bound);
        memcpy(z, h, ETL_BUFFER_HEADER_SIZE);
        etl_put32(z + ETL_BH_BUFFER_SIZE, (uint32_t)(ETL_BUFFER_HEADER_SIZE + n));
        etl_put16(z + ETL_BH_BUFFER_FLAG, ETL_BUFFER_FLAG_PROC_INDEX | ETL_BUFFER_FLAG_COMPRESSED);
        s->out[s->nout] = z;
        s->out_size[s->nout++] = (uint32_t)(ETL_BUFFER_HEADER_SIZE + n);
        free(b->buf);
    } else {
        etl_put32(h + ETL_BH_BUFFER_SIZE, bs);
        memset(h + b->used, 0xFF, bs - b->used);
        s->out[s->nout] = h;
        s->out_size[s->nout++] = bs;
    }
    b->buf = NULL;
    b->used = 0;
}

int synth_add(struct synth *s, unsigned cpu, const uint8_t *record, uint32_t size)
{
    struct synth_cpu *b;
    uint32_t step = etl_align8(size);

    if (cpu >= s->o.cpus || ETL_BUFFER_HEADER_SIZE + step > s->o.buffer_size) return -1;
    b = &s->cpu[cpu];
    if (b->buf && b->used + step > s->o.buffer_size) flush_cpu(s, cpu);
    if (!b->buf) {
        b->buf = malloc(s->o.buffer_size);
        b->used = ETL_BUFFER_HEADER_SIZE;
    }
    memcpy(b->buf + b->used, record, size);
    memset(b->buf + b->used + size, 0, step - size);
    b->used += step;
    return 0;
}

/* The header buffer, as the writer builds it, with the test's own layout version. */
static uint32_t header_buffer(struct synth *s, uint8_t *b, uint32_t total_buffers)
{
    etl_writer_options w;
    etl_header_counts c = { s->o.start_time + 600000000LL, total_buffers, s->o.events_lost, s->o.buffers_lost };
    uint32_t size;

    memset(&w, 0, sizeof w);
    w.buffer_size = s->o.buffer_size;
    w.log_file_mode = s->o.log_file_mode;
    w.number_of_processors = s->o.cpus;
    w.pointer_size = s->o.pointer_size;
    w.clock.type = s->o.clock_type;
    w.clock.perf_freq = s->o.perf_freq;
    w.clock.cpu_speed_mhz = s->o.cpu_speed_mhz;
    w.clock.start_time = s->o.start_time;
    w.clock.start_timestamp = s->o.start_timestamp;
    w.boot_time = s->o.boot_time ? s->o.boot_time : s->o.start_time - 36000000000LL;
    w.logger_name = s->o.logger_name;
    w.header_pid = 200;
    w.header_tid = 100;
    etl_writer_options_defaults(&w);
    size = etl_header_buffer_build(&w, s->o.log_file_name, &c, b);
    b[ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_VERSION + 2] = s->o.layout_major;
    b[ETL_BUFFER_HEADER_SIZE + ETL_SYSTEM_HEADER_SIZE + ETL_TLH_VERSION + 3] = s->o.layout_minor;
    return size;
}

uint8_t *synth_finish(struct synth *s, size_t *size)
{
    uint8_t *file, *hb;
    size_t total, off;
    uint32_t hsize;

    for (unsigned c = 0; c < s->o.cpus; c++) flush_cpu(s, c);
    if (s->nout) {
        uint8_t *last = s->out[s->nout - 1];
        etl_put16(last + ETL_BH_BUFFER_FLAG, (uint16_t)(etl_le16(last + ETL_BH_BUFFER_FLAG) | ETL_BUFFER_FLAG_FLUSH_MARKER));
    }
    hb = malloc(s->o.buffer_size);
    hsize = header_buffer(s, hb, s->nout + 1);
    total = hsize;
    for (uint32_t i = 0; i < s->nout; i++) total += s->out_size[i];
    file = malloc(total);
    memcpy(file, hb, hsize);
    off = hsize;
    for (uint32_t k = 0; k < s->nout; k++) {
        uint32_t i = s->nout ? (uint32_t)((k + (uint32_t)s->o.rotate) % s->nout) : 0;
        memcpy(file + off, s->out[i], s->out_size[i]);
        off += s->out_size[i];
    }
    for (uint32_t i = 0; i < s->nout; i++) free(s->out[i]);
    for (unsigned c = 0; c < s->o.cpus; c++) free(s->cpu[c].buf);
    free(s->out);
    free(s->out_size);
    free(s->cpu);
    free(hb);
    free(s);
    *size = total;
    return file;
}

uint32_t synth_ext_item(uint8_t *out, uint16_t type, const void *data, uint16_t len, int more)
{
    uint32_t size = 8 + etl_align8(len);

    etl_put16(out, (uint16_t)size);
    etl_put16(out + 2, type);
    etl_put16(out + 4, more ? 1 : 0);
    etl_put16(out + 6, len);
    memcpy(out + 8, data, len);
    memset(out + 8 + len, 0, size - 8 - len);
    return size;
}

uint32_t synth_event_header(uint8_t *out, int ptr64, int64_t ts, const etl_guid *provider, uint16_t id,
                            uint8_t version, uint8_t level, uint8_t opcode, uint16_t task, uint64_t keywords,
                            uint32_t pid, uint32_t tid, const void *ext, uint32_t ext_len,
                            const void *payload, uint32_t len)
{
    uint32_t size = ETL_EVENT_HEADER_SIZE + ext_len + len;

    memset(out, 0, ETL_EVENT_HEADER_SIZE);
    etl_put16(out, (uint16_t)size);
    out[2] = ptr64 ? ETL_HT_EVENT64 : ETL_HT_EVENT32;
    out[3] = 0xC0;
    etl_put16(out + 4, ext_len ? ETL_EVENT_HEADER_FLAG_EXTENDED_INFO : 0);
    etl_put32(out + 8, tid);
    etl_put32(out + 12, pid);
    etl_put64(out + 16, (uint64_t)ts);
    put_guid(out + 0x18, provider);
    etl_put16(out + 0x28, id);
    out[0x2A] = version;
    out[0x2B] = 0;
    out[0x2C] = level;
    out[0x2D] = opcode;
    etl_put16(out + 0x2E, task);
    etl_put64(out + 0x30, keywords);
    if (ext_len) memcpy(out + ETL_EVENT_HEADER_SIZE, ext, ext_len);
    if (len) memcpy(out + ETL_EVENT_HEADER_SIZE + ext_len, payload, len);
    return size;
}

uint32_t synth_system(uint8_t *out, int ptr64, int compact, int64_t ts, uint16_t hook, uint16_t version,
                      uint32_t pid, uint32_t tid, const void *payload, uint32_t len)
{
    uint32_t hsize = compact ? ETL_COMPACT_HEADER_SIZE : ETL_SYSTEM_HEADER_SIZE;
    uint32_t size = hsize + len;

    memset(out, 0, hsize);
    etl_put16(out, version);
    out[2] = compact ? (ptr64 ? ETL_HT_COMPACT64 : ETL_HT_COMPACT32) : (ptr64 ? ETL_HT_SYSTEM64 : ETL_HT_SYSTEM32);
    out[3] = 0xC0;
    etl_put16(out + 4, (uint16_t)size);
    etl_put16(out + 6, hook); /* Type (low byte) then Group (high byte) */
    etl_put32(out + 8, tid);
    etl_put32(out + 12, pid);
    etl_put64(out + 16, (uint64_t)ts);
    if (len) memcpy(out + hsize, payload, len);
    return size;
}

uint32_t synth_perfinfo(uint8_t *out, int ptr64, int64_t ts, uint16_t hook, uint16_t version,
                        const uint64_t *pebs, const uint64_t *pmc, unsigned npmc, const void *payload, uint32_t len)
{
    uint32_t items = 8u * ((pebs ? 1 : 0) + npmc), size = ETL_PERFINFO_HEADER_SIZE + items + len, pos;

    etl_put16(out, (uint16_t)(version | (pebs ? ETL_TRACE_HEADER_PEBS_INDEX_FLAG : 0) |
                              (npmc << ETL_TRACE_HEADER_PMC_SHIFT)));
    out[2] = ptr64 ? ETL_HT_PERFINFO64 : ETL_HT_PERFINFO32;
    out[3] = 0xC0;
    etl_put16(out + 4, (uint16_t)size);
    etl_put16(out + 6, hook);
    etl_put64(out + 8, (uint64_t)ts);
    pos = ETL_PERFINFO_HEADER_SIZE;
    if (pebs) { etl_put64(out + pos, *pebs); pos += 8; }
    for (unsigned i = 0; i < npmc; i++, pos += 8) etl_put64(out + pos, pmc[i]);
    if (len) memcpy(out + pos, payload, len);
    return size;
}

uint32_t synth_classic(uint8_t *out, int ptr64, int instance, int64_t ts, const etl_guid *guid, uint8_t type,
                       uint8_t level, uint16_t version, uint32_t pid, uint32_t tid, const void *payload, uint32_t len)
{
    uint32_t hsize = instance ? ETL_INSTANCE_HEADER_SIZE : ETL_CLASSIC_HEADER_SIZE, size = hsize + len;

    memset(out, 0, hsize);
    etl_put16(out, (uint16_t)size);
    out[2] = instance ? (ptr64 ? ETL_HT_INSTANCE64 : ETL_HT_INSTANCE32) : (ptr64 ? ETL_HT_FULL64 : ETL_HT_FULL32);
    out[3] = 0xC0;
    out[4] = type;
    out[5] = level;
    etl_put16(out + 6, version);
    etl_put32(out + 8, tid);
    etl_put32(out + 12, pid);
    etl_put64(out + 16, (uint64_t)ts);
    put_guid(out + 0x18, guid);
    if (instance) {
        etl_put32(out + 0x30, 7);
        etl_put32(out + 0x34, 3);
        put_guid(out + 0x38, guid);
    }
    if (len) memcpy(out + hsize, payload, len);
    return size;
}

uint32_t synth_message(uint8_t *out, uint16_t number, uint16_t flags, uint32_t seq, const etl_guid *guid,
                       int64_t ts, uint32_t pid, uint32_t tid, const void *payload, uint32_t len)
{
    uint32_t pos = ETL_MESSAGE_HEADER_SIZE;

    out[2] = 0;
    out[3] = 0x90;
    etl_put16(out + 4, number);
    etl_put16(out + 6, flags);
    if (flags & ETL_MSG_SEQUENCE) { etl_put32(out + pos, seq); pos += 4; }
    if (flags & ETL_MSG_COMPONENTID) { etl_put32(out + pos, 42); pos += 4; }
    else if (flags & ETL_MSG_GUID) { put_guid(out + pos, guid); pos += 16; }
    if (flags & (ETL_MSG_TIMESTAMP | ETL_MSG_PERF_TIMESTAMP)) {
        etl_put64(out + pos, (flags & ETL_MSG_TIMESTAMP) ? (uint64_t)ts : 0);
        pos += 8;
    }
    if (flags & ETL_MSG_SYSTEMINFO) { etl_put32(out + pos, tid); etl_put32(out + pos + 4, pid); pos += 8; }
    if (len) memcpy(out + pos, payload, len);
    pos += len;
    etl_put16(out, (uint16_t)pos);
    return pos;
}

/* ---- payloads ---- */

void sp_init(struct synth_payload *p, unsigned ptr)
{
    p->n = 0;
    p->ptr = ptr;
}

void sp8(struct synth_payload *p, uint8_t v)
{
    if (p->n < sizeof p->b) p->b[p->n++] = v;
}

void sp16(struct synth_payload *p, uint16_t v)
{
    sp8(p, (uint8_t)v);
    sp8(p, (uint8_t)(v >> 8));
}

void sp32(struct synth_payload *p, uint32_t v)
{
    sp16(p, (uint16_t)v);
    sp16(p, (uint16_t)(v >> 16));
}

void sp64(struct synth_payload *p, uint64_t v)
{
    sp32(p, (uint32_t)v);
    sp32(p, (uint32_t)(v >> 32));
}

void spp(struct synth_payload *p, uint64_t v)
{
    if (p->ptr == 8) sp64(p, v);
    else sp32(p, (uint32_t)v);
}

void sp_str8(struct synth_payload *p, const char *s)
{
    do sp8(p, (uint8_t)*s);
    while (*s++);
}

void sp_str16(struct synth_payload *p, const char *ascii)
{
    do sp16(p, (uint8_t)*ascii);
    while (*ascii++);
}
