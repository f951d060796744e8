/* SPDX-License-Identifier: MIT */
/* A small synthetic kernel trace whose processes, threads, context switches, disk I/O and system
   calls the tests know (tests/kstory.c). */
#ifndef ETL_TESTS_KSTORY_H
#define ETL_TESTS_KSTORY_H

#include <stddef.h>
#include <stdint.h>

/*
 * The story (64-bit, raw clock 10 MHz from 1 000 000, timestamps KS_T0 + n), after the two
 * events of the header buffer (EventTrace/Header and its companion, at the start timestamp):
 *   +0   cpu 0  Process DCStart 4 "System"
 *   +1   cpu 0  Process Start 1000 "app.exe"
 *   +2   cpu 0  Thread Start 1000/4001 "worker"        (version 4: with a ThreadName)
 *   +3   cpu 0  Thread Start 1000/4002, no name        (version 3)
 *   +4   cpu 1  SysClEnter 0xFFFFF80000123450           (no CSwitch on cpu 1 yet: no thread)
 *   +5   cpu 0  CSwitch new 4001 old 0
 *   +6   cpu 1  CSwitch new 0 old 4002                 (the idle thread)
 *   +7   cpu 0  SysClEnter 0xFFFFF80000123450          (thread 4001)
 *   +8   cpu 1  SysClExit 0xC0000034                   (thread 0)
 *   +9   cpu 0  DiskIo ReadInit irp 0xA1
 *   +10  cpu 0  DiskIo WriteInit irp 0xB2
 *   +11  cpu 2  DiskIo Read irp 0xA1 (4096 bytes)     (issue +9)
 *   +12  cpu 0  DiskIo Write irp 0xC3                  (no issue seen)
 *   +13  cpu 0  DiskIo Read irp 0xA1                   (its issue already taken)
 *   +14  cpu 0  DiskIo WriteInit irp 0xB2 again        (replaces +10)
 *   +15  cpu 0  DiskIo Write irp 0xB2                  (issue +14)
 *   +16  cpu 0  Thread Start 1000/4001 "renamed"      (version 4)
 *   +17  cpu 0  Process End 1000 "app.exe"
 *   +18  cpu 0  Process DCEnd 1000 "app2.exe"          (a rundown: a later name)
 *   +19  cpu 0  Process DCEnd 2000 "late.exe"          (known only from a rundown at the end)
 */
#define KS_T0 2000000
#define KS_EVENTS 20          /* the story's */
#define KS_ALL_EVENTS 22      /* with the header buffer's: events +n are numbered n + 3 in a database */

/* The trace in memory (free() it), or NULL. */
uint8_t *kstory_file(size_t *size);
/* Writes it to path: 0, or -1. */
int kstory_write(const char *path);

/*
 * The exec story: a workload that etlrecord forks, that execs sh, which execs demo, whose
 * child execs dd (the same clock and start; every Process event's ExitStatus is 259 but at
 * an End; an exec is a Process End of the old program and a Process Start of the new one,
 * one timestamp, on one processor):
 *   +0   cpu 0  Process DCStart 2990 "etlrecord"  (ppid 1; command line KSX_REC)
 *   +1   cpu 0  Process Start 3000 "etlrecord"    (ppid 2990, KSX_REC: the fork's copy)
 *   +2   cpu 0  Thread Start 3000/3000
 *   +3   cpu 1  CSwitch new 3000 old 0
 *   +4   cpu 1  SysClEnter                        (thread 3000, while it runs etlrecord)
 *   +5   cpu 1  SampledProfile tid 3000 at 0x401000
 *   +6   cpu 1  Process End 3000 "etlrecord" (0), Process Start 3000 "sh" (KSX_SH): exec
 *   +7   cpu 1  SysClEnter                        (sh)
 *   +8   cpu 1  Process End 3000 "sh" (0), Process Start 3000 "demo" (KSX_DEMO): exec
 *   +9   cpu 1  CSwitch new 0 old 3000
 *   +10  cpu 1  CSwitch new 3000 old 0
 *   +11  cpu 1  SysClEnter                        (demo)
 *   +12  cpu 1  SampledProfile tid 3000 at 0x402000
 *   +13  cpu 0  Thread Start 3000/3001
 *   +14  cpu 0  Process Start 3002 "demo"         (ppid 3000, KSX_DEMO: the fork's copy)
 *   +15  cpu 0  Thread Start 3002/3002
 *   +16  cpu 2  CSwitch new 3002 old 0            (3002 still runs demo)
 *   +17  cpu 2  Process End 3002 "demo" (0), Process Start 3002 "dd" (KSX_DD): exec
 *   +18  cpu 2  SysClEnter, +19 SysClExit         (dd)
 *   +20  cpu 0  Thread End 3000/3001
 *   +21  cpu 2  Thread End 3002/3002, Process End 3002 "dd" (exit 0)
 *   +22  cpu 1  Thread End 3000/3000, Process End 3000 "demo" (exit 3)
 *   +23  cpu 0  Process DCEnd 2990 "etlrecord"
 */
#define KSX_REC "etlrecord run -o x.etl -- sh -c demo --threads 2; dd if=/dev/zero of=/dev/null"
#define KSX_SH "sh -c demo --threads 2; dd if=/dev/zero of=/dev/null"
#define KSX_DEMO "demo --threads 2"
#define KSX_DD "dd if=/dev/zero of=/dev/null"
#define KSX_EVENTS 29         /* the story's */
uint8_t *kstory_exec_file(size_t *size);
int kstory_exec_write(const char *path);

/*
 * The CPU story: who ran where, for how long (the same clock and start; tid 0 is the idle
 * thread of process 0, "Idle"; process 100 "a.exe" has threads 101 and 102, process 200 "b.exe"
 * thread 201; their DCStart rundowns at +0 .. +6):
 *   cpu 0: +10 CSwitch new 101 old 0, +30 new 201 old 101, +35 new 101 old 201, +60 new 0 old 101
 *   cpu 1: +12 CSwitch new 102 old 0, +52 new 0 old 102, +70 new 201 old 0
 *   +100 cpu 0  Process DCEnd 200 "b.exe"          (the trace's last event)
 * Running intervals (ticks of 100 ns): cpu 0: 101 [10,30) 201 [30,35) 101 [35,60) 0 [60,100);
 * cpu 1: 102 [12,52) 0 [52,70) 201 [70,100). Threads: 101 45 ticks, 102 40, 201 35, 0 58.
 */
uint8_t *kstory_cpu_file(size_t *size);
int kstory_cpu_write(const char *path);

#endif
