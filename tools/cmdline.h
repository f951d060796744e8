/* SPDX-License-Identifier: MIT */
/* Command-line values the tools share. Private to tools/. */
#ifndef ETL_TOOLS_CMDLINE_H
#define ETL_TOOLS_CMDLINE_H

#include <getopt.h>
#include <stdint.h>

#include "etl.h"

/* getopt_long with the tools' one rule for long options: a long option is given in full
   (--profile-interval, never --profile or --prof). An abbreviation is refused like an unknown
   option: said on stderr as "PROG: option '--profile' must be given in full (--profile-interval)"
   and '?' returned. Otherwise as getopt_long (whose own messages stay). */
int tool_getopt_long(const char *prog, int argc, char **argv, const char *shortopts,
                     const struct option *longopts, int *longindex);
/* The tools' one rule for a file they write: an existing PATH (anything there, a dangling
   symbolic link too) is refused unless force (--force). 0 when PATH may be written, or -1, said
   on stderr as "PROG: PATH exists (--force replaces it); nothing was written". */
int tool_output_check(const char *prog, const char *path, int force);

/* Seconds as "12" or "1.25" (digits beyond nanoseconds dropped) into ns: 0, or -1 when s is
   not such a number or is beyond the int64 range of nanoseconds. */
int tool_parse_seconds(const char *s, int64_t *ns);
/* --time-range's "A,B": seconds (tool_parse_seconds) into *from_ns and *to_ns; an empty side
   leaves its value as it was (from the start, to the end). 0, or -1 when text is not of that
   form or A is after B. */
int tool_parse_time_range(const char *text, int64_t *from_ns, int64_t *to_ns);
/* A decimal number from 0 to max: 0, or -1 when s is not one. */
int tool_parse_u32(const char *s, uint32_t max, uint32_t *out);
/* Keywords and other masks: decimal, or hexadecimal after 0x ("0x10"): 0, or -1 when s is not
   such a number (a sign, trailing characters, beyond 64 bits). */
int tool_parse_u64(const char *s, uint64_t *out);

/* The field decoder of a tool that reads traces: the default manifests (ETL_MANIFEST_PATH and
   those installed with libetl; a default that does not load is a warning), then each of the n
   --manifest FILE|DIR. Warnings go to stderr as "PROG: warning: ...". NULL after saying why on
   stderr ("PROG: ...") when a --manifest does not load or memory ran out. */
etl_decoder *tool_decoder_open(const char *prog, char *const *manifests, unsigned n);

/* The tools' --symbols DIR values: each must be a directory. 0, or -1 said on stderr as
   "PROG: --symbols DIR: No such file or directory" (or "not a directory"). */
int tool_symbols_check(const char *prog, char *const *dirs, unsigned n);
/* The symbolizer of a tool that names functions (etl/symbols.h), looking in the n --symbols
   directories first (checked as above), then the system's places. NULL after saying why on
   stderr ("PROG: ...") when a directory is not one or memory ran out. */
etl_symbolizer *tool_symbolizer_open(const char *prog, char *const *dirs, unsigned n);

#endif
