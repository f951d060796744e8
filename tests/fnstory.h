/* SPDX-License-Identifier: MIT */
/* A program built at test time with gcc -g, and a synthetic kernel trace whose samples and stacks fall in its functions (tests/fnstory.c). */
#ifndef ETL_TESTS_FNSTORY_H
#define ETL_TESTS_FNSTORY_H

#include <stddef.h>
#include <stdint.h>

/* The program (FNSTORY_SOURCE): hot_a, hot_b, rec (which calls itself, then hot_a) and main. */
enum { FN_HOT_A, FN_HOT_B, FN_REC, FN_MAIN, FN_COUNT };

struct fnstory {
    char path[512];                  /* the program */
    struct { uint64_t offset, vaddr, filesz; } seg[16]; /* its PT_LOAD headers */
    unsigned nseg;
    struct { const char *name; uint64_t value, size; } fn[FN_COUNT]; /* from its .symtab */
};

/* Builds the program as DIR/prog (gcc -g -O1 -fPIE -pie) and reads its headers (readelf) and
   functions (nm): 0, or -1 said on stderr. */
int fnstory_build(const char *dir, struct fnstory *g);
/* Where ELF address v is when file offset 0 of the program is mapped at base; 0 when no
   segment holds v. */
uint64_t fnstory_at(const struct fnstory *g, uint64_t base, uint64_t v);
/* The middle of function k, an ELF address. */
uint64_t fnstory_mid(const struct fnstory *g, int k);
/* addr2line -f at ELF address v: the function's name and "file:line" (the file's base name):
   0, or -1. */
int fnstory_addr2line(const struct fnstory *g, uint64_t v, char *function, size_t fsize, char *source, size_t ssize);

/*
 * The trace (64-bit, raw clock 10 MHz, timestamps from 2 000 000): process 100 "prog" (its
 * DCStart), thread 101, the program's Image Load at base (file offset 0 there), then seven
 * timer samples of thread 101 on processor 0, each followed by its StackWalk (innermost
 * first; frames at the middle of their functions, but one):
 *   +10 .. +12  in hot_a, stack hot_a, rec, rec, main     (rec twice: a recursion; the second
 *                                                        at rec's end, the byte after its last:
 *                                                        a return address after a call that
 *                                                        ends the function)
 *   +20, +21    in hot_b, stack hot_b, main
 *   +30         in main, stack main
 *   +31         at 0x1234 (no image), no stack
 * Writes it to path: 0, or -1.
 */
#define FNSTORY_SAMPLES 7
int fnstory_write(const char *path, const struct fnstory *g, uint64_t base);
/* The same samples without their StackWalks, the one at 0x1234 first (a sample without a
   function before the first with one), at +9. */
int fnstory_write_flat(const char *path, const struct fnstory *g, uint64_t base);

#endif
