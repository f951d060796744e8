/* SPDX-License-Identifier: MIT */
/* Test helper: a synthetic kernel trace of one process's samples, each with its stack (the samples etldiff --stacks compares). */
#ifndef LIBETL_TESTS_STACKS_H
#define LIBETL_TESTS_STACKS_H

#include <stddef.h>
#include <stdint.h>

/* The process is "app" (pid 100, thread 101) with the image app.exe at STACKS_IMAGE_BASE, of
   STACKS_IMAGE_SIZE bytes and no symbols: its addresses are named app.exe+0xOFFSET. */
#define STACKS_IMAGE_BASE 0x400000u
#define STACKS_IMAGE_SIZE 0x100000u
#define STACKS_MAX_FRAMES 64

/* count samples (SampledProfile's Count) with the stack frames[0..nframes), innermost first
   (frames[0] is where they hit), as StackWalk gives them. */
struct stacks_sample {
    uint16_t count;
    unsigned nframes;
    uint64_t frames[STACKS_MAX_FRAMES];
};

/* The trace's bytes (malloc'ed; *size set), or NULL without memory. n may be 0: the process
   and its image, no sample. */
uint8_t *stacks_trace(const struct stacks_sample *samples, size_t n, size_t *size);

#endif
