/* SPDX-License-Identifier: MIT */
/* Plain LZ77 ("XPRESS", MS-XCA 2.3/2.4) codec used for compressed ETL buffers; private to libetl. */
#ifndef LIBETL_XPRESS_H
#define LIBETL_XPRESS_H
#ifndef ETL_BUILDING_LIBRARY
#error "format/xpress.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

/* Status of etl_xpress_decompress. */
enum etl_xpress_status {
    ETL_XPRESS_OK = 0,
    ETL_XPRESS_TRUNCATED = -1,  /* input ended in the middle of a flag word, literal, or match */
    ETL_XPRESS_BAD_OFFSET = -2, /* a match refers to before the start of the output */
    ETL_XPRESS_OVERFLOW = -3,   /* output would exceed out_cap */
    ETL_XPRESS_BAD_LENGTH = -4  /* a 16/32-bit length escape is below 22 (MS-XCA 2.4.4 "Return error") */
};

/* Decompress a plain LZ77 (MS-XCA 2.3/2.4, "XPRESS") stream of in_len bytes into out (capacity
   out_cap). On success returns ETL_XPRESS_OK and *out_len = bytes produced. On error returns the
   status and *err_pos = offset in the INPUT where the bad element starts, and *out_len = bytes
   produced so far (all valid). Never reads in[] beyond in_len or writes out[] beyond out_cap.
   The stream ends normally when the input is exhausted where the next element (flag word,
   literal or match) would start. Bytes of out[] past *out_len (but below out_cap) may be
   overwritten with scratch data. */
int etl_xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                          size_t *out_len, size_t *err_pos);

/* A short English description of a status ("stream ends early"). */
const char *etl_xpress_strerror(int status);

/* Largest output etl_xpress_compress can produce for n input bytes. */
size_t etl_xpress_compress_bound(size_t n);

/* Compress n bytes into out (cap >= etl_xpress_compress_bound(n)); returns the compressed size,
   or 0 if cap is smaller than etl_xpress_compress_bound(n). The output decodes with any
   conforming MS-XCA plain LZ77 decoder; it ends with the all-ones flag padding of MS-XCA 2.3.
   Thread-safe; uses about 48 KiB of stack and no heap. */
size_t etl_xpress_compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

#endif /* LIBETL_XPRESS_H */
