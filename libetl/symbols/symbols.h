/* SPDX-License-Identifier: MIT */
/* Private to libetl: what the symbolizer's files share (the public face is etl/symbols.h). */
#ifndef LIBETL_SYMBOLS_H
#define LIBETL_SYMBOLS_H
#ifndef ETL_BUILDING_LIBRARY
#error "symbols/symbols.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>
#include <stdint.h>

#include "etl.h"
#include "etl/symbols.h"

/* ==================================================================== PE images and .NET (pdb.c, clr.c) */

/*
 * pdb.c: PE images' PDBs. Takes KernelTraceControl's ImageID/Info and ImageID/DbgID_RSDS events
 * (what each image of each process was built with: its PDB's GUID, age and name), finds the PDB
 * in the symbol directories (symstore's DIR/name.pdb/GUIDAGE/name.pdb, or DIR/name.pdb whose
 * own GUID and age match), and asks llvm-symbolizer, run as one co-process, for the function,
 * source line and inlined frames at an offset in the image. doc/libetl.md, "Symbols".
 */
typedef struct etl_sym_pdb etl_sym_pdb;

/* A new PDB side in *out (opt may be NULL: no directories, "llvm-symbolizer" on PATH):
   ETL_OK, or ETL_FAILED without memory. Nothing is started until a PDB is found. */
int etl_sym_pdb_open(etl_sym_pdb **out, const etl_symbolizer_options *opt);
/* Ends the co-process (and reaps it), removes its temporary files, frees everything. */
void etl_sym_pdb_close(etl_sym_pdb *p);
/* Takes ev when it is an ImageID/Info or ImageID/DbgID_RSDS event: 1 taken, 0 not one of
   them (or one whose payload does not decode), ETL_FAILED when memory ran out. */
int etl_sym_pdb_add(etl_sym_pdb *p, const etl_event *ev);
/* 1 when the trace gave a PDB (DbgID_RSDS) for the image of process pid at base. */
int etl_sym_pdb_has(etl_sym_pdb *p, uint32_t pid, uint64_t base);
/*
 * The frames at image_offset in the image of process pid loaded at base (image_name, its base
 * name, tells which image a DbgID event of another process is about when none of pid's own
 * matches): up to max into out, innermost first; only function, function_offset (0: llvm-
 * symbolizer 14 does not give a PDB function's start), source_file, line and inlined are set,
 * strings owned by p until etl_sym_pdb_close. Returns the count (0: no PDB, no answer, no
 * function there), or ETL_FAILED when memory ran out.
 */
int etl_sym_pdb_resolve(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name, uint64_t image_offset,
                        etl_symbol *out, unsigned max);
/* The same for n offsets of one image at once (one exchange with llvm-symbolizer): the frames
   of offsets[i] into out[i * max ...], their count into counts[i]. ETL_OK or ETL_FAILED. */
int etl_sym_pdb_resolve_batch(etl_sym_pdb *p, uint32_t pid, uint64_t base, const char *image_name,
                              const uint64_t *offsets, size_t n, etl_symbol *out, unsigned max, unsigned *counts);
/* Images whose PDB was found (and matched) and those whose PDB was found with another GUID or
   age, so far. */
void etl_sym_pdb_counts(const etl_sym_pdb *p, uint64_t *found, uint64_t *mismatched);
/* The last problem worth telling the user (llvm-symbolizer missing or stopped answering, a PDB
   that did not match), or NULL. */
const char *etl_sym_pdb_error(const etl_sym_pdb *p);

/* Reads the GUID and age of the PDB at path (its info stream's GUID, the DBI stream's age),
   reading no more than the streams it needs: ETL_OK, or ETL_FAILED when it is not a PDB (MSF
   7.00) or is damaged. */
int etl_sym_pdb_read_ident(const char *path, etl_guid *guid, uint32_t *age);

/*
 * clr.c: .NET methods. Takes the runtime's (Microsoft-Windows-DotNETRuntime and its rundown
 * provider) MethodLoadVerbose, MethodUnloadVerbose, MethodDCStartVerbose, MethodDCEndVerbose,
 * ModuleLoad/DCStart/DCEnd events (decoded with the field decoder and the runtime's manifest),
 * and names the method that held an address of a process at a time as TraceEvent's TraceLog
 * does: MethodNamespace "." MethodName, then the signature's arguments ("(int32,class
 * System.String)") when it has them.
 */
typedef struct etl_sym_clr etl_sym_clr;

/* ETL_OK, or ETL_FAILED without memory. The field decoder is opened at the first runtime event. */
int etl_sym_clr_open(etl_sym_clr **out);
void etl_sym_clr_close(etl_sym_clr *c);
/* 1 taken (a method or module event), 0 not one, ETL_FAILED when memory ran out. */
int etl_sym_clr_add(etl_sym_clr *c, const etl_event *ev);
/* The method covering addr in process pid at raw time ts into *out (function, function_offset;
   image: the module's file name where a ModuleLoad named it; image_offset: the offset in the
   method): 1, or 0 when no method covers it. Strings owned by c until etl_sym_clr_close. */
int etl_sym_clr_resolve(etl_sym_clr *c, uint32_t pid, uint64_t addr, int64_t ts, etl_symbol *out);
/* Methods known (load, rundown and unload events put together). */
uint64_t etl_sym_clr_methods(const etl_sym_clr *c);
/* The last problem worth telling (the runtime's manifest missing), or NULL. */
const char *etl_sym_clr_error(const etl_sym_clr *c);

/* ==================================================================== end of pdb.c, clr.c */

#endif /* LIBETL_SYMBOLS_H */
