/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: any bytes, opened from memory in both orders, every event read, every byte of it touched and
   every field decoded; bytes that begin as a real-time stream does ("ok\n") are read as one too. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the bytes read go, so that the compiler keeps the reads. */
static volatile uint32_t sink;

static void on_damage(void *arg, int64_t offset, const char *message)
{
    unsigned *reports = arg;

    (*reports)++;
    sink += (uint32_t)offset + (uint32_t)strlen(message);
}

static uint32_t touch(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;

    for (size_t i = 0; i < n; i++) sum += p[i];
    return sum;
}

/* The pointers of an event lie inside its record: what check_damage demands too. */
static int event_ok(const etl_event *ev, const etl_trace_info *in)
{
    const uint8_t *end = ev->record + ev->record_size;

    if (!ev->record || (uint64_t)ev->record_offset + ev->record_size > in->buffer_size) return 0;
    if (ev->payload_len && (ev->payload < ev->record || ev->payload > end ||
                            ev->payload_len > (size_t)(end - ev->payload)))
        return 0;
    if (ev->ext_len && (ev->ext < ev->record || ev->ext > end || ev->ext_len > (size_t)(end - ev->ext))) return 0;
    return 1;
}

/* Every field of an event decoded and shown as text and JSON (the decoder reads the manifests
   of ETL_MANIFEST_PATH and the installed ones): a failure must name an offset. */
static etl_decoder *decoder;

static void decode_fields(const etl_event *ev)
{
    static char out[1 << 16];
    etl_decoded_event e;
    int rc;

    if (!decoder && etl_decoder_open(&decoder, NULL) == ETL_FATAL) abort();
    rc = etl_decoder_decode(decoder, ev, &e);
    if (rc != 1 && rc != 0 && rc != ETL_FAILED) abort();
    if (rc == ETL_FAILED && !strstr(etl_decoder_error(decoder), "offset")) abort();
    sink += (uint32_t)etl_decoded_format_text(&e, out, sizeof out);
    sink += (uint32_t)etl_decoded_format_json(&e, out, sizeof out);
}

/* Reads every event of r; returns how many, or aborts when the reader misbehaves. */
static long read_all(etl_reader *r)
{
    const etl_trace_info *in = etl_reader_info(r);
    /* Every record takes at least 8 bytes of a buffer: more events than that is a loop. */
    uint64_t bound = (in->file_size + (uint64_t)in->buffers * in->buffer_size) / 8 + 100;
    etl_event ev;
    long n = 0;
    int rc;

    while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
        uint32_t sum = touch(ev.record, ev.record_size) + touch(ev.payload, ev.payload_len);
        if (!event_ok(&ev, in)) abort();
        for (unsigned i = 0; i < ev.ext_count; i++) {
            etl_ext_item it;
            if (etl_event_ext_item_get(&ev, i, &it) != ETL_OK) abort();
            sum += it.type + touch(it.data, it.size);
        }
        sum += (uint32_t)etl_reader_time_ns(r, ev.timestamp);
        decode_fields(&ev);
        sink += sum;
        if ((uint64_t)++n > bound) abort();
    }
    /* From memory nothing can fail but the data, and damage is never fatal once open. */
    if (rc != ETL_EOF) abort();
    return n;
}

/* The bytes as a real-time stream (etl_reader_open_stream over a memory file): every event
   read, and the end is the end of the stream or an error, never anything else. */
static void read_stream(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-stream", MFD_CLOEXEC);
    etl_reader_options opt;
    etl_reader *r = NULL;
    etl_event ev;
    uint64_t n = 0;
    int rc;

    if (fd < 0) return;
    if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return;
    }
    memset(&opt, 0, sizeof opt);
    opt.name = "fuzz stream";
    rc = etl_reader_open_stream(&r, fd, &opt);
    if (r && rc != ETL_FATAL) {
        const etl_trace_info *in = etl_reader_info(r);
        while ((rc = etl_reader_next(r, &ev)) == ETL_OK || rc == ETL_WARN) {
            if (!event_ok(&ev, in)) abort();
            sink += touch(ev.record, ev.record_size) + touch(ev.payload, ev.payload_len);
            decode_fields(&ev);
            /* Each record takes 8 bytes of the stream at least (the header buffer's again per batch). */
            if (++n > size / 8 + 100) abort();
        }
        if (rc != ETL_EOF && rc != ETL_FATAL) abort();
    }
    if (r) sink += (uint32_t)strlen(etl_reader_error(r));
    etl_reader_close(r);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 3 && memcmp(data, "ok\n", 3) == 0) {
        read_stream(data, size);
        return 0;
    }
    for (int order = ETL_ORDER_TIME; order <= ETL_ORDER_FILE; order++) {
        etl_reader_options opt;
        etl_reader *r = NULL;
        unsigned reports = 0;
        int rc;

        memset(&opt, 0, sizeof opt);
        opt.order = order;
        opt.name = "fuzz.etl";
        opt.on_damage = on_damage;
        opt.on_damage_arg = &reports;
        rc = etl_reader_open_memory(&r, data, size, &opt);
        if (!r) continue; /* out of memory */
        sink += (uint32_t)strlen(etl_reader_error(r));
        if (rc != ETL_FATAL) {
            const etl_trace_info *in = etl_reader_info(r);
            long n;
            sink += (uint32_t)strlen(in->logger_name) + (uint32_t)strlen(in->log_file_name);
            n = read_all(r);
            /* Reading again from the start gives the same events. */
            if (etl_reader_rewind(r) != ETL_OK || read_all(r) != n) abort();
            if (etl_reader_warnings(r) != reports) abort();
        }
        etl_reader_close(r);
    }
    return 0;
}
