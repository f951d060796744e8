/* SPDX-License-Identifier: MIT */
/* The SQLite schema the loader writes (tables, the indexes built after a load, the views), and
   the statements that set it up. doc/etl2sqlite-schema.md explains it; `etl2sqlite --schema`
   prints exactly etl_sqlite_schema(). */
#include <stdio.h>
#include <string.h>

#include "load/load.h"

#define SCHEMA_TABLES \
    "-- etl2sqlite schema, version 5 (PRAGMA user_version = 5).\n" \
    "-- Times: *_ns columns are nanoseconds since 1970-01-01 UTC on the common timeline of the\n" \
    "-- database (every trace placed on one PerfCounter clock, as etlmerge places them).\n" \
    "-- 64-bit unsigned values (keywords, addresses) are stored as signed 64-bit integers with the\n" \
    "-- same bits: printf('0x%x', col) shows them in hex, and & and = work as expected.\n" \
    "\n" \
    "CREATE TABLE meta (\n" \
    "  key TEXT PRIMARY KEY,            -- schema_version, created_by, libetl_version\n" \
    "  value TEXT\n" \
    ");\n" \
    "\n" \
    "-- One row per input file: its logfile header and what the reader counted.\n" \
    "CREATE TABLE traces (\n" \
    "  trace INTEGER PRIMARY KEY,       -- 1, 2, ... in load order\n" \
    "  path TEXT NOT NULL,              -- as given on the command line\n" \
    "  logger_name TEXT,                -- session name\n" \
    "  log_file_name TEXT,\n" \
    "  log_file_mode INTEGER,           -- EVENT_TRACE_* bits as stored\n" \
    "  mode_flags TEXT,                 -- the same, by name: 'SEQUENTIAL|RELOG'\n" \
    "  clock TEXT,                      -- perfcounter, systemtime, cpucycle, raw\n" \
    "  clock_type INTEGER,              -- ReservedFlags\n" \
    "  perf_freq INTEGER,               -- PerfFreq, Hz\n" \
    "  cpu_speed_mhz INTEGER,\n" \
    "  start_timestamp INTEGER,         -- raw clock at StartTime\n" \
    "  start_time_ns INTEGER,           -- StartTime\n" \
    "  end_time_ns INTEGER,             -- EndTime (NULL when the session was still logging)\n" \
    "  boot_time_ns INTEGER,            -- BootTime (NULL when 0)\n" \
    "  timezone_bias INTEGER,           -- minutes, UTC = local + bias\n" \
    "  os_version TEXT,                 -- '10.0.19041'\n" \
    "  log_layout_version TEXT,         -- '1.5', '2.0'\n" \
    "  pointer_size INTEGER,            -- 4 or 8\n" \
    "  processors INTEGER,              -- NumberOfProcessors\n" \
    "  buffer_size INTEGER,             -- bytes\n" \
    "  maximum_file_size INTEGER,       -- MB (0: none)\n" \
    "  timer_resolution INTEGER,        -- 100 ns units\n" \
    "  start_buffers INTEGER,\n" \
    "  buffers_written INTEGER,         -- as the header says\n" \
    "  events_lost INTEGER,             -- EventsLost\n" \
    "  buffers_lost INTEGER,            -- BuffersLost\n" \
    "  buffers INTEGER,                 -- buffers found in the file\n" \
    "  compressed_buffers INTEGER,\n" \
    "  damaged_buffers INTEGER,         -- skipped or read in part\n" \
    "  file_size INTEGER,               -- bytes (decompressed, for .etl.gz)\n" \
    "  clock_source INTEGER,            -- trace whose anchor converts this trace's timestamps\n" \
    "  events INTEGER,                  -- events loaded from it\n" \
    "  first_time_ns INTEGER,           -- of its first and last events\n" \
    "  last_time_ns INTEGER,\n" \
    "  warnings INTEGER                 -- damage reports while loading it\n" \
    ");\n" \
    "\n" \
    "-- Every provider (or kernel event group) that logged an event.\n" \
    "CREATE TABLE providers (\n" \
    "  provider INTEGER PRIMARY KEY,\n" \
    "  guid TEXT NOT NULL UNIQUE,       -- lowercase, without braces\n" \
    "  name TEXT                        -- 'Process', 'Microsoft-Windows-DotNETRuntime'; NULL if unknown\n" \
    ");\n" \
    "\n" \
    "-- The trace header kinds (events.kind).\n" \
    "CREATE TABLE kinds (\n" \
    "  kind INTEGER PRIMARY KEY,\n" \
    "  name TEXT NOT NULL UNIQUE        -- system, compact, perfinfo, classic, instance, event, message\n" \
    ");\n" \
    "\n" \
    "-- One row per event, in time order on the common timeline (ties: input order, then each\n" \
    "-- trace's own order). Columns are NULL where the event's header has no such field.\n" \
    "CREATE TABLE events (\n" \
    "  event INTEGER PRIMARY KEY,       -- 1, 2, ... in time order\n" \
    "  trace INTEGER NOT NULL,          -- traces.trace\n" \
    "  ts INTEGER NOT NULL,             -- raw timestamp as stored in the event header\n" \
    "  time_ns INTEGER NOT NULL,        -- absolute time\n" \
    "  cpu INTEGER NOT NULL,            -- processor of the buffer it was logged in\n" \
    "  pid INTEGER,\n" \
    "  tid INTEGER,\n" \
    "  provider INTEGER,                -- providers.provider\n" \
    "  kind INTEGER NOT NULL,           -- kinds.kind\n" \
    "  hook_id INTEGER,                 -- system/compact/perfinfo: Group << 8 | Type; WPP: message number\n" \
    "  id INTEGER,                      -- EVENT_HEADER Id\n" \
    "  version INTEGER NOT NULL,\n" \
    "  opcode INTEGER NOT NULL,         -- opcode, or the event type of system/perfinfo/classic headers\n" \
    "  level INTEGER,\n" \
    "  task INTEGER,\n" \
    "  keywords INTEGER,\n" \
    "  channel INTEGER,\n" \
    "  pointer_size INTEGER NOT NULL,   -- 4 or 8: bitness of the code that logged it\n" \
    "  payload_len INTEGER NOT NULL,    -- user data bytes\n" \
    "  ext_count INTEGER NOT NULL,      -- extended data items (rows in event_ext)\n" \
    "  name INTEGER,                    -- event_names.name_id; NULL when the event has no schema\n" \
    "  fields TEXT,                     -- its fields as one JSON object, in schema order:\n" \
    "                                   -- json_extract(fields, '$.Reason'); NULL when no schema\n" \
    "  payload BLOB                     -- the user data; NULL when loaded with --no-payload\n" \
    ");\n" \
    "\n" \
    "-- The events' names (events.name): one row per provider and name.\n" \
    "CREATE TABLE event_names (\n" \
    "  name_id INTEGER PRIMARY KEY,\n" \
    "  name TEXT NOT NULL,              -- 'Microsoft-Windows-DotNETRuntime/GC/Start' (Provider/Task/Opcode),\n" \
    "                                   -- kernel classes 'Process/DCStart', TraceLogging 'Provider/Event'\n" \
    "  provider INTEGER,                -- providers.provider\n" \
    "  task TEXT,                       -- 'GC'; TraceLogging: the event's name\n" \
    "  opcode TEXT,                     -- 'Start'; NULL when none\n" \
    "  source TEXT NOT NULL,            -- of the schema: manifest, eventsource, tracelogging, kernel\n" \
    "  UNIQUE (provider, name)\n" \
    ");\n" \
    "\n" \
    "-- The top-level fields events of each name have had (every version's, each once): the\n" \
    "-- columns of its view, in this order.\n" \
    "CREATE TABLE event_name_fields (\n" \
    "  name_id INTEGER NOT NULL,        -- event_names.name_id\n" \
    "  idx INTEGER NOT NULL,            -- 0, 1, ...\n" \
    "  field TEXT NOT NULL,\n" \
    "  type TEXT NOT NULL,              -- its in type: 'UInt32', 'Pointer', 'UnicodeString', 'Struct';\n" \
    "                                   -- an array's with '[]' ('UInt16[]')\n" \
    "  hex INTEGER NOT NULL,            -- 1: an integer the JSON shows as '0x...' text (a pointer, a\n" \
    "                                   -- HexInt), which the view shows as its number\n" \
    "  PRIMARY KEY (name_id, idx)\n" \
    ") WITHOUT ROWID;\n" \
    "\n" \
    "-- A view per event name, made again at the end of every load: event, trace, time_ns, cpu,\n" \
    "-- pid, tid, then a column per field (json_extract; a hex one, event_name_fields.hex, as\n" \
    "-- its number). Named by the event's name, and also\n" \
    "-- 'Task/Opcode' ('GC/Start') when no other event has that short name and no table or view\n" \
    "-- has it.\n" \
    "CREATE TABLE event_views (\n" \
    "  view TEXT PRIMARY KEY,           -- SELECT Reason, count(*) FROM \"GC/Start\" GROUP BY 1\n" \
    "  name TEXT NOT NULL               -- event_names.name of the events it shows\n" \
    ");\n" \
    "\n" \
    "-- Extended data items of EVENT_HEADER events, and the PEBS/PMC items of perfinfo events.\n" \
    "CREATE TABLE event_ext (\n" \
    "  event INTEGER NOT NULL,          -- events.event\n" \
    "  idx INTEGER NOT NULL,            -- 0, 1, ... in record order\n" \
    "  type INTEGER NOT NULL,           -- EVENT_HEADER_EXT_TYPE_*\n" \
    "  type_name TEXT NOT NULL,         -- 'STACK_TRACE64', 'RELATED_ACTIVITYID', ...\n" \
    "  data BLOB NOT NULL,\n" \
    "  PRIMARY KEY (event, idx)\n" \
    ") WITHOUT ROWID;\n" \
    "\n" \
    "-- Decoded kernel event classes (doc/kernel-events.md). 'event' is the events row; 'name'\n" \
    "-- is the event's name ('Process/DCStart'). Addresses are resolved to the image loaded at\n" \
    "-- that address in that process at that time: image (its file name, without the\n" \
    "-- directory) and image_offset (bytes from its base); NULL when no image holds it.\n" \
    "CREATE TABLE processes (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- Process/Start, /End, /DCStart, /DCEnd, /Defunct\n" \
    "  pid INTEGER NOT NULL,\n" \
    "  parent_pid INTEGER,\n" \
    "  session_id INTEGER,\n" \
    "  exit_status INTEGER,\n" \
    "  unique_process_key INTEGER,\n" \
    "  directory_table_base INTEGER,\n" \
    "  flags INTEGER,\n" \
    "  user_sid TEXT,                   -- 'S-1-5-18'\n" \
    "  image_file_name TEXT,            -- 'svchost.exe'\n" \
    "  command_line TEXT,\n" \
    "  package_full_name TEXT,\n" \
    "  application_id TEXT,\n" \
    "  run INTEGER NOT NULL             -- the event that began the run of pid this row is of: one run\n" \
    "                                   -- per program a pid ran (an exec ends one, starts another)\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE threads (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- Thread/Start, /End, /DCStart, /DCEnd\n" \
    "  pid INTEGER NOT NULL,\n" \
    "  tid INTEGER NOT NULL,\n" \
    "  stack_base INTEGER, stack_limit INTEGER,\n" \
    "  user_stack_base INTEGER, user_stack_limit INTEGER,\n" \
    "  start_address INTEGER, win32_start_address INTEGER,\n" \
    "  teb_base INTEGER,\n" \
    "  sub_process_tag INTEGER,\n" \
    "  base_priority INTEGER, page_priority INTEGER, io_priority INTEGER, thread_flags INTEGER,\n" \
    "  thread_name TEXT                 -- NULL when the event has none\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE images (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- Image/Load, /Unload, /DCStart, /DCEnd\n" \
    "  pid INTEGER NOT NULL,\n" \
    "  image_base INTEGER NOT NULL,\n" \
    "  image_size INTEGER NOT NULL,\n" \
    "  checksum INTEGER,\n" \
    "  time_date_stamp INTEGER,\n" \
    "  signature_level INTEGER,\n" \
    "  signature_type INTEGER,\n" \
    "  default_base INTEGER,\n" \
    "  file_name TEXT,                  -- NT path: '\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll'\n" \
    "  base_name TEXT                   -- 'ntdll.dll'\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE cswitches (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  new_tid INTEGER NOT NULL,\n" \
    "  old_tid INTEGER NOT NULL,\n" \
    "  new_thread_priority INTEGER,\n" \
    "  old_thread_priority INTEGER,\n" \
    "  previous_cstate INTEGER,\n" \
    "  old_thread_wait_reason INTEGER,  -- KWAIT_REASON\n" \
    "  old_thread_wait_mode INTEGER,\n" \
    "  old_thread_state INTEGER,        -- KTHREAD_STATE\n" \
    "  old_thread_wait_ideal_processor INTEGER,\n" \
    "  new_thread_wait_time INTEGER,\n" \
    "  old_thread_remaining_quantum INTEGER\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE ready_threads (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  tid INTEGER NOT NULL,            -- the thread made ready\n" \
    "  adjust_reason INTEGER,\n" \
    "  adjust_increment INTEGER,\n" \
    "  flags INTEGER\n" \
    ");\n" \
    "\n" \
    "-- DiskIo: one row per completed request (Read, Write, FlushBuffers), with its issue (the\n" \
    "-- ReadInit/WriteInit/FlushInit event of the same irp) when the trace has it.\n" \
    "CREATE TABLE disk_io (\n" \
    "  event INTEGER PRIMARY KEY,       -- the completion\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- DiskIO/Read, /Write, /FlushBuffers\n" \
    "  disk_number INTEGER,\n" \
    "  irp_flags INTEGER,               -- IRP_* bits: 0x100 read, 0x200 write, 0x4 synchronous\n" \
    "  transfer_size INTEGER,           -- bytes (0 for a flush)\n" \
    "  byte_offset INTEGER,             -- from the start of the disk\n" \
    "  file_object INTEGER,\n" \
    "  irp INTEGER,\n" \
    "  response_time_ns INTEGER,        -- issue to completion (HighResResponseTime)\n" \
    "  issuing_tid INTEGER,             -- NULL before version 3 (Windows 7 and older)\n" \
    "  init_event INTEGER,              -- the issue's event; NULL when the trace has none\n" \
    "  init_time_ns INTEGER\n" \
    ");\n" \
    "\n" \
    "-- PerfInfo SysClEnter (address) and SysClExit (nt_status).\n" \
    "CREATE TABLE syscalls (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- PerfInfo/SysClEnter, /SysClExit\n" \
    "  address INTEGER,                 -- SysClEnter: the system call's address\n" \
    "  nt_status INTEGER,               -- SysClExit: its NTSTATUS\n" \
    "  tid INTEGER,                     -- the thread the last CSwitch on cpu switched to; NULL\n" \
    "                                   -- when the trace has none there yet\n" \
    "  syscall TEXT                     -- SysClEnter of a Linux capture: the name of the system call\n" \
    "                                   -- numbered address (its LinuxImageID SystemCalls); else NULL\n" \
    ");\n" \
    "\n" \
    "-- PerfInfo ISR (an interrupt service routine) and DPC, ThreadedDPC, TimerDPC (deferred\n" \
    "-- procedure calls; a Linux capture's softirqs): each ran on cpu from start_ns to time_ns.\n" \
    "CREATE TABLE isr_dpc (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,        -- its end (the event's time)\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- PerfInfo/ISR, /DPC, /ThreadedDPC, /TimerDPC\n" \
    "  start_ns INTEGER,                -- InitialTime; NULL when after the event (a damaged record)\n" \
    "  duration_ns INTEGER,             -- time_ns - start_ns\n" \
    "  routine INTEGER,                 -- the routine's address (0: not known)\n" \
    "  vector INTEGER,                  -- ISR: the interrupt vector (a Linux capture: the irq number)\n" \
    "  return_value INTEGER             -- ISR: 1 when the interrupt was the routine's device's\n" \
    ");\n" \
    "\n" \
    "-- PageFault events: TransitionFault, DemandZeroFault, CopyOnWrite, GuardPageFault,\n" \
    "-- HardPageFault, AccessViolation (a Linux capture: TransitionFault, DemandZeroFault or\n" \
    "-- CopyOnWrite for a minor fault on x86, DemandZeroFault elsewhere; HardPageFault for a\n" \
    "-- major one).\n" \
    "CREATE TABLE page_faults (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- PageFault/DemandZeroFault, /HardPageFault, ...\n" \
    "  pid INTEGER,                     -- of the event's header; NULL when it names none\n" \
    "  tid INTEGER,\n" \
    "  virtual_address INTEGER,         -- the address that faulted\n" \
    "  program_counter INTEGER          -- the instruction that faulted\n" \
    ");\n" \
    "\n" \
    "-- TcpIp and UdpIp events (version 2): Send, Recv, Connect, Accept, Disconnect, Retransmit,\n" \
    "-- Reconnect (TcpIp), Send, Recv (UdpIp), IPv4 and IPv6. saddr and sport are the local end,\n" \
    "-- daddr and dport the peer's ('0.0.0.0' and 0 where the trace does not tell them).\n" \
    "CREATE TABLE tcpip (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- TcpIp/Send, TcpIp/RecvIPV6, UdpIp/Send, ...\n" \
    "  protocol TEXT NOT NULL,          -- 'tcp' or 'udp'\n" \
    "  ip_version INTEGER NOT NULL,     -- 4 or 6\n" \
    "  pid INTEGER,                     -- the payload's PID: the connection's process; NULL: not known\n" \
    "  tid INTEGER,                     -- of the event's header (the thread running then); NULL: none\n" \
    "  size INTEGER,                    -- bytes sent or received\n" \
    "  saddr TEXT, sport INTEGER,\n" \
    "  daddr TEXT, dport INTEGER,\n" \
    "  connid INTEGER,                  -- the connection (a Linux capture: its socket), in all its events\n" \
    "  seqnum INTEGER,\n" \
    "  mss INTEGER                      -- Connect, Accept: the maximum segment size (0: not known)\n" \
    ");\n" \
    "\n" \
    "-- FileIo events: each file operation at its start (FileIO/Create, /Cleanup, /Close, /Read,\n" \
    "-- /Write, /Flush, /SetInfo, /Delete, /Rename, /QueryInfo, /FSControl, /DirEnum, /DirNotify),\n" \
    "-- its end (FileIO/OperationEnd, the same irp) and the files' names (FileIO/Name, /FileCreate,\n" \
    "-- /FileDelete, /FileRundown: file_key and path). file_io_view pairs and names them.\n" \
    "CREATE TABLE file_io (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- FileIO/Read, FileIO/OperationEnd, FileIO/Name, ...\n" \
    "  pid INTEGER,                     -- of the event's header; NULL when it names none\n" \
    "  tid INTEGER,                     -- the header's, else TTID\n" \
    "  irp INTEGER,                     -- IrpPtr: an operation and its OperationEnd share it\n" \
    "  file_object INTEGER,             -- the open file (NULL: the event has none)\n" \
    "  file_key INTEGER,                -- the file (names: the file they name)\n" \
    "  offset INTEGER,                  -- Read, Write: the file offset\n" \
    "  size INTEGER,                    -- Read, Write: IoSize; DirEnum: Length\n" \
    "  info_class INTEGER,              -- SetInfo, Delete, Rename, QueryInfo, FSControl, DirEnum\n" \
    "  extra_info INTEGER,              -- Info events; OperationEnd: the bytes moved (or the like)\n" \
    "  nt_status INTEGER,               -- OperationEnd\n" \
    "  path TEXT                        -- names: the file's; Create: OpenPath; DirEnum: its pattern\n" \
    ");\n" \
    "\n" \
    "-- PageFault VirtualAlloc and VirtualFree: a region of a process's address space reserved,\n" \
    "-- committed or released (a Linux capture: anonymous mmap, munmap, mremap and brk).\n" \
    "CREATE TABLE virtual_alloc (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- PageFault/VirtualAlloc or /VirtualFree\n" \
    "  pid INTEGER NOT NULL,            -- ProcessId: the process whose address space it is\n" \
    "  tid INTEGER,                     -- of the event's header (the calling thread); NULL when none\n" \
    "  base_address INTEGER NOT NULL,\n" \
    "  region_size INTEGER NOT NULL,    -- bytes\n" \
    "  flags INTEGER NOT NULL           -- MEM_COMMIT 0x1000, MEM_RESERVE 0x2000, MEM_DECOMMIT 0x4000,\n" \
    "                                   -- MEM_RELEASE 0x8000\n" \
    ");\n" \
    "\n" \
    "-- FileIo MapFile, UnmapFile, MapFileDCStart, MapFileDCEnd: a view of a file mapped into a\n" \
    "-- process (a Linux capture: mmap of a file, munmap, mremap).\n" \
    "CREATE TABLE file_maps (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- FileIO/MapFile, /UnmapFile, /MapFileDCStart, /MapFileDCEnd\n" \
    "  pid INTEGER NOT NULL,            -- ProcessId\n" \
    "  tid INTEGER,                     -- of the event's header; NULL when none\n" \
    "  view_base INTEGER NOT NULL,\n" \
    "  view_size INTEGER NOT NULL,      -- bytes\n" \
    "  file_key INTEGER NOT NULL,       -- the file (FileIO/Name, /FileCreate, /FileRundown name it; 0 unknown)\n" \
    "  byte_offset INTEGER NOT NULL,    -- where in the file the view begins (version 3+; else 0)\n" \
    "  misc_info INTEGER NOT NULL\n" \
    ");\n" \
    "\n" \
    "-- Process PerfCtr (at a process's end) and PerfCtrRundown (of the processes that run at the\n" \
    "-- trace's end): a process's memory counters, in bytes.\n" \
    "CREATE TABLE process_counters (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- Process/PerfCtr or /PerfCtrRundown\n" \
    "  pid INTEGER NOT NULL,            -- ProcessId\n" \
    "  page_fault_count INTEGER NOT NULL,\n" \
    "  handle_count INTEGER NOT NULL,\n" \
    "  peak_virtual_size INTEGER NOT NULL,\n" \
    "  peak_working_set_size INTEGER NOT NULL,\n" \
    "  peak_pagefile_usage INTEGER NOT NULL,\n" \
    "  quota_peak_paged_pool_usage INTEGER NOT NULL,\n" \
    "  quota_peak_non_paged_pool_usage INTEGER NOT NULL,\n" \
    "  virtual_size INTEGER NOT NULL,\n" \
    "  working_set_size INTEGER NOT NULL,\n" \
    "  pagefile_usage INTEGER NOT NULL,\n" \
    "  quota_paged_pool_usage INTEGER NOT NULL,\n" \
    "  quota_non_paged_pool_usage INTEGER NOT NULL,\n" \
    "  private_page_count INTEGER NOT NULL\n" \
    ");\n" \
    "\n" \
    "-- PageFault HardFault: a fault that read its page from a file (or the page file), written at\n" \
    "-- its end (a Linux capture: a major fault of a file page).\n" \
    "CREATE TABLE hard_faults (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,        -- its end (the event's time)\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  name TEXT NOT NULL,              -- PageFault/HardFault\n" \
    "  pid INTEGER,                     -- of the event's header; NULL when it names none (Windows')\n" \
    "  tid INTEGER NOT NULL,            -- TThreadId: the faulting thread\n" \
    "  start_ns INTEGER,                -- InitialTime; NULL when after the event (a damaged record)\n" \
    "  duration_ns INTEGER,             -- time_ns - start_ns\n" \
    "  read_offset INTEGER NOT NULL,    -- where in the file the read began (bytes)\n" \
    "  virtual_address INTEGER NOT NULL,\n" \
    "  file_key INTEGER NOT NULL,       -- FileObject: the file (FileIO/Name, /FileCreate, /FileRundown name it)\n" \
    "  byte_count INTEGER NOT NULL      -- bytes read from read_offset (0: it waited for another's read)\n" \
    ");\n" \
    "\n" \
    "-- SampledProfile and PMC interrupt (PMCSample) samples: the processor was running thread\n" \
    "-- tid at instruction_pointer.\n" \
    "CREATE TABLE samples (\n" \
    "  event INTEGER PRIMARY KEY,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  cpu INTEGER NOT NULL,\n" \
    "  tid INTEGER NOT NULL,\n" \
    "  pid INTEGER,                     -- of tid at that time (from Thread events); NULL if unknown\n" \
    "  instruction_pointer INTEGER NOT NULL,\n" \
    "  count INTEGER,\n" \
    "  flags INTEGER,                   -- bit 0 DPC, bit 1 ISR, bits 3..7 priority\n" \
    "  rank INTEGER,\n" \
    "  image TEXT,\n" \
    "  image_offset INTEGER,\n" \
    "  profile_source INTEGER NOT NULL, -- KPROFILE_SOURCE: 0 the timer (SampleProf); else a PMCSample's\n" \
    "                                  -- counter (6 branch instructions, ...), count, flags, rank NULL\n" \
    "  function INTEGER,                -- functions.function at instruction_pointer (the innermost: an\n" \
    "                                   -- inlined function where the code was inlined); NULL: no symbol\n" \
    "  function_offset INTEGER,         -- instruction_pointer - the function's start (0 when inlined)\n" \
    "  outer_function INTEGER,          -- the function that holds the code (function when not inlined)\n" \
    "  line INTEGER                     -- source line in functions.source_file; NULL when unknown\n" \
    ");\n" \
    "\n" \
    "-- Stacks: StackWalk events (kind 'stack'), stack key references ('key_kernel', 'key_user')\n" \
    "-- and definitions ('key_def'), and the STACK_TRACE items of EVENT_HEADER events ('ext').\n" \
    "-- Stacks with the same frames (resolved to the same images) share one frame list.\n" \
    "CREATE TABLE stacks (\n" \
    "  stack INTEGER PRIMARY KEY,\n" \
    "  event INTEGER NOT NULL,          -- the event that carries the stack\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  kind TEXT NOT NULL,\n" \
    "  owner_event INTEGER,             -- the event the stack belongs to (same timestamp and\n" \
    "                                   -- processor, logged just before it), NULL if not found\n" \
    "  event_timestamp INTEGER,         -- raw timestamp of that event, as the stack records it\n" \
    "  pid INTEGER,\n" \
    "  tid INTEGER,\n" \
    "  stack_key INTEGER,               -- key_* kinds\n" \
    "  frame_count INTEGER NOT NULL,\n" \
    "  frames INTEGER                   -- stack_frames.frames; NULL when frame_count is 0\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE stack_frames (\n" \
    "  frames INTEGER NOT NULL,         -- the frame list (stacks.frames)\n" \
    "  depth INTEGER NOT NULL,          -- 0: the innermost frame\n" \
    "  address INTEGER NOT NULL,\n" \
    "  image TEXT,\n" \
    "  image_offset INTEGER,\n" \
    "  function INTEGER,                -- as in samples; a frame past a stack's first is a return\n" \
    "  function_offset INTEGER,         -- address, looked up one byte before it (in the call)\n" \
    "  outer_function INTEGER,\n" \
    "  line INTEGER,\n" \
    "  PRIMARY KEY (frames, depth)\n" \
    ") WITHOUT ROWID;\n" \
    "\n" \
    "-- The functions of the samples' and stack frames' addresses, as the symbolizer names them\n" \
    "-- (etl/symbols.h: ELF symbols and DWARF, the trace's kallsyms, PDBs, .NET methods): one row per\n" \
    "-- name, image and source file.\n" \
    "CREATE TABLE functions (\n" \
    "  function INTEGER PRIMARY KEY,\n" \
    "  name TEXT NOT NULL,              -- 'main', 'RtlUserThreadStart', 'System.String.Concat'\n" \
    "  image TEXT,                      -- the image's file name ('libc.so.6', 'vmlinux'); NULL: none\n" \
    "  image_path TEXT,                 -- the image's path as the trace gives it\n" \
    "  source_file TEXT                 -- where DWARF or the PDB gives it; NULL when unknown\n" \
    ");\n" \
    "\n" \
    "-- Last branch records: the branches before the event that triggered them.\n" \
    "CREATE TABLE lbr (\n" \
    "  lbr INTEGER PRIMARY KEY,\n" \
    "  event INTEGER NOT NULL,\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  time_ns INTEGER NOT NULL,\n" \
    "  event_timestamp INTEGER,         -- raw timestamp of the triggering event\n" \
    "  pid INTEGER,\n" \
    "  tid INTEGER,\n" \
    "  filters INTEGER,                 -- LbrFilterFlags\n" \
    "  entry_count INTEGER NOT NULL\n" \
    ");\n" \
    "\n" \
    "CREATE TABLE lbr_entries (\n" \
    "  lbr INTEGER NOT NULL,            -- lbr.lbr\n" \
    "  idx INTEGER NOT NULL,            -- 0: the most recent branch\n" \
    "  from_address INTEGER NOT NULL,\n" \
    "  to_address INTEGER NOT NULL,\n" \
    "  from_image TEXT, from_offset INTEGER,\n" \
    "  to_image TEXT, to_offset INTEGER,\n" \
    "  PRIMARY KEY (lbr, idx)\n" \
    ") WITHOUT ROWID;\n" \
    "\n" \
    "-- What was lost, and where: the header's EventsLost and BuffersLost ('events_lost',\n" \
    "-- 'buffers_lost', count), each piece of damage the reader skipped ('damage': offset and\n" \
    "-- message), the events that have no schema ('undecoded': count per provider; their rows\n" \
    "-- are loaded, fields NULL), and the events whose payload does not fit their schema\n" \
    "-- ('decode_failed': the first 100 of a trace one by one with offset and message, then the\n" \
    "-- count of the rest per provider; their rows are loaded with the fields that fit).\n" \
    "CREATE TABLE lost (\n" \
    "  trace INTEGER NOT NULL,\n" \
    "  kind TEXT NOT NULL,\n" \
    "  provider INTEGER,                -- providers.provider: undecoded, decode_failed\n" \
    "  count INTEGER,\n" \
    "  offset INTEGER,                  -- file offset of the damage, or of the event\n" \
    "  message TEXT\n" \
    ");\n"

#define SCHEMA_INDEXES \
    "-- Built after the rows are in. The events table has none: its rows are in time order\n" \
    "-- (event follows time_ns), and an index over every event would cost more than the load.\n" \
    "-- Nor have the kernel tables keyed by event (samples, cswitches, ...): the same order.\n" \
    "CREATE INDEX IF NOT EXISTS processes_by_pid ON processes (trace, pid, time_ns);\n" \
    "CREATE INDEX IF NOT EXISTS threads_by_tid ON threads (trace, tid);\n" \
    "CREATE INDEX IF NOT EXISTS images_by_address ON images (trace, pid, image_base);\n" \
    "CREATE INDEX IF NOT EXISTS file_io_by_irp ON file_io (trace, irp, event);\n" \
    "CREATE INDEX IF NOT EXISTS file_io_by_key ON file_io (trace, file_key, event);\n" \
    "CREATE INDEX IF NOT EXISTS file_io_by_object ON file_io (trace, file_object, event);\n" \
 \
    "CREATE INDEX IF NOT EXISTS stacks_by_event ON stacks (event);\n" \
    "CREATE INDEX IF NOT EXISTS stacks_by_frames ON stacks (frames);\n" \
    "CREATE INDEX IF NOT EXISTS stacks_by_owner ON stacks (owner_event);\n" \
    "CREATE INDEX IF NOT EXISTS lbr_by_event ON lbr (event);\n" \
    "CREATE INDEX IF NOT EXISTS functions_by_name ON functions (name);\n" \
    "CREATE INDEX IF NOT EXISTS stacks_key_definitions ON stacks (trace, stack_key, event) WHERE kind = 'key_def';\n"

/* A function's source location as text: 'file:line', or the file alone; NULL when unknown. */
#define SOURCE_TEXT(fn, line) \
    "CASE WHEN " fn ".source_file IS NULL THEN NULL WHEN " line " IS NULL THEN " fn ".source_file\n" \
    "            ELSE " fn ".source_file || ':' || " line " END"
/* A frame as one word: the function's name, else image+0x1a, else the address. */
#define FRAME_WORD(fn, f) \
    "coalesce(" fn ".name, " f ".image || printf('+0x%x', " f ".image_offset), printf('0x%x', " f ".address))"

#define SCHEMA_VIEWS \
    "-- One row per event, with the columns named as etldump's JSON keys.\n" \
    "CREATE VIEW events_view AS\n" \
    "SELECT e.event AS event, e.ts AS ts,\n" \
    "       strftime('%Y-%m-%dT%H:%M:%S', e.time_ns / 1000000000, 'unixepoch')\n" \
    "         || printf('.%09dZ', e.time_ns % 1000000000) AS time,\n" \
    "       e.time_ns AS time_ns, e.cpu AS cpu, e.pid AS pid, e.tid AS tid,\n" \
    "       p.guid AS provider, p.name AS provider_name, k.name AS kind, e.id AS id,\n" \
    "       e.version AS version, e.opcode AS opcode, e.level AS level, e.task AS task,\n" \
    "       e.keywords AS keywords, e.payload_len AS payload_len, e.ext_count AS ext,\n" \
    "       n.name AS event_name, e.fields AS fields, e.trace AS trace\n" \
    "FROM events e JOIN kinds k ON k.kind = e.kind LEFT JOIN providers p ON p.provider = e.provider\n" \
    "     LEFT JOIN event_names n ON n.name_id = e.name;\n" \
    "\n" \
    "-- Each program each process ran once (a process that execs has a row for each program:\n" \
    "-- processes.run), with when it started and ended where the trace tells (NULL: before the\n" \
    "-- trace began / still running at its end). An exec ends one program (end_ns, exit_status\n" \
    "-- NULL) and starts the next (start_ns) at one time.\n" \
    "CREATE VIEW processes_view AS\n" \
    "SELECT r.trace AS trace, r.pid AS pid, r.image_file_name AS image_file_name,\n" \
    "       r.command_line AS command_line, r.parent_pid AS parent_pid, r.user_sid AS user_sid,\n" \
    "       r.start_ns AS start_ns, r.end_ns AS end_ns,\n" \
    "       CASE WHEN EXISTS (SELECT 1 FROM processes x WHERE x.trace = r.trace AND x.pid = r.pid\n" \
    "                         AND x.time_ns = r.end_ns AND x.name = 'Process/Start' AND x.run > r.run)\n" \
    "            THEN NULL ELSE r.exit_status END AS exit_status\n" \
    "FROM (SELECT trace, pid, run,\n" \
    "             max(image_file_name) AS image_file_name, max(command_line) AS command_line,\n" \
    "             max(parent_pid) AS parent_pid, max(user_sid) AS user_sid,\n" \
    "             min(CASE WHEN name = 'Process/Start' THEN time_ns END) AS start_ns,\n" \
    "             max(CASE WHEN name IN ('Process/End', 'Process/Defunct') THEN time_ns END) AS end_ns,\n" \
    "             max(CASE WHEN name IN ('Process/End', 'Process/Defunct') THEN exit_status END) AS exit_status\n" \
    "      FROM processes GROUP BY trace, pid, run) r;\n" \
    "\n" \
    "-- What process pid of a trace ran at an event (time t, number e): the program of its\n" \
    "-- Process event nearest before (at one time, the later event: an exec's Start), else\n" \
    "-- nearest after (rundowns at the end of a trace come after what they describe). A thread's\n" \
    "-- process at an event: that of its Thread event nearest before, else nearest after.\n" \
    "-- Each thread once for each program its process ran while the thread lived (start_ns and\n" \
    "-- end_ns: that part of its life; an exec ends one and starts the next), with the last name\n" \
    "-- the trace gave it in that part (thread_name: of a Thread event or a SetName; NULL: none).\n" \
    "CREATE VIEW threads_view AS\n" \
    "SELECT t.trace AS trace, t.tid AS tid, t.pid AS pid, r.image_file_name AS process_name,\n" \
    "       (SELECT h.thread_name FROM threads h WHERE h.trace = t.trace AND h.tid = t.tid AND h.pid = t.pid\n" \
    "          AND h.thread_name <> '' AND (r.run IS NULL OR r.run >= t.last_run OR h.time_ns < r.end_ns)\n" \
    "        ORDER BY h.event DESC LIMIT 1) AS thread_name,\n" \
    "       CASE WHEN r.run > t.first_run THEN r.start_ns ELSE t.start_ns END AS start_ns,\n" \
    "       CASE WHEN r.run < t.last_run THEN r.end_ns ELSE t.end_ns END AS end_ns,\n" \
    "       t.win32_start_address AS win32_start_address\n" \
    "FROM (SELECT g.*, " RUN_AT("g.trace", "g.pid", "g.first_ns", "g.first_event") " AS first_run,\n" \
    "             " RUN_AT("g.trace", "g.pid", "g.last_ns", "g.last_event") " AS last_run\n" \
    "      FROM (SELECT trace, tid, pid, min(time_ns) AS first_ns, min(event) AS first_event,\n" \
    "                   max(time_ns) AS last_ns, max(event) AS last_event,\n" \
    "                   min(CASE WHEN name = 'Thread/Start' THEN time_ns END) AS start_ns,\n" \
    "                   max(CASE WHEN name = 'Thread/End' THEN time_ns END) AS end_ns,\n" \
    "                   max(win32_start_address) AS win32_start_address\n" \
    "            FROM threads GROUP BY trace, tid, pid) g) t\n" \
    "LEFT JOIN (SELECT trace, pid, run, max(image_file_name) AS image_file_name,\n" \
    "                  min(CASE WHEN name = 'Process/Start' THEN time_ns END) AS start_ns,\n" \
    "                  max(CASE WHEN name IN ('Process/End', 'Process/Defunct') THEN time_ns END) AS end_ns\n" \
    "           FROM processes GROUP BY trace, pid, run) r\n" \
    "  ON r.trace = t.trace AND r.pid = t.pid AND r.run BETWEEN t.first_run AND t.last_run;\n" \
    "\n" \
    "-- Samples with their process's program at the sample and the image: where the processors\n" \
    "-- spent their time.\n" \
    "CREATE VIEW samples_view AS\n" \
    "SELECT s.event AS event, s.time_ns AS time_ns, s.cpu AS cpu, s.tid AS tid, s.pid AS pid,\n" \
    "       " NAME_AT("s.trace", "s.pid", "s.time_ns", "s.event") " AS process_name,\n" \
    "       printf('0x%x', s.instruction_pointer) AS ip, s.image AS image,\n" \
    "       s.image_offset AS image_offset, s.trace AS trace,\n" \
    "       fn.name AS function, s.function_offset AS function_offset, " SOURCE_TEXT("fn", "s.line") " AS source\n" \
    "FROM samples s LEFT JOIN functions fn ON fn.function = s.function;\n" \
    "\n" \
    "-- Context switches with the processes of both threads and their programs at the switch.\n" \
    "CREATE VIEW cswitches_view AS\n" \
    "SELECT c.event AS event, c.time_ns AS time_ns, c.cpu AS cpu,\n" \
    "       c.old_tid AS old_tid, c.old_pid AS old_pid,\n" \
    "       " NAME_AT("c.trace", "c.old_pid", "c.time_ns", "c.event") " AS old_process,\n" \
    "       c.new_tid AS new_tid, c.new_pid AS new_pid,\n" \
    "       " NAME_AT("c.trace", "c.new_pid", "c.time_ns", "c.event") " AS new_process,\n" \
    "       c.old_thread_wait_reason AS old_thread_wait_reason, c.old_thread_state AS old_thread_state,\n" \
    "       c.trace AS trace\n" \
    "FROM (SELECT c.*, " PID_AT("c.trace", "c.old_tid", "c.event") " AS old_pid,\n" \
    "             " PID_AT("c.trace", "c.new_tid", "c.event") " AS new_pid\n" \
    "      FROM cswitches c) c;\n" \
    "\n" \
    "-- Who ran where: one row per running interval of a thread on a processor, from the context\n" \
    "-- switch to it (start_event) to the next context switch on that processor (end_event), or to\n" \
    "-- the trace's last event (end_event NULL) when the trace ends with it running. The time\n" \
    "-- before a processor's first switch is not counted (who ran then is not known). pid: the\n" \
    "-- thread's process at the switch; process_name: the program it ran then. Needs no stacks.\n" \
    "CREATE VIEW cpu_intervals AS\n" \
    "SELECT i.trace AS trace, i.cpu AS cpu, i.tid AS tid, i.pid AS pid,\n" \
    "       " NAME_AT("i.trace", "i.pid", "i.start_ns", "i.start_event") " AS process_name,\n" \
    "       i.start_ns AS start_ns, i.end_ns AS end_ns, i.end_ns - i.start_ns AS ns,\n" \
    "       i.start_event AS start_event, i.end_event AS end_event\n" \
    "FROM (SELECT w.*, " PID_AT("w.trace", "w.tid", "w.start_event") " AS pid,\n" \
    "             coalesce(w.next_ns, (SELECT t.last_time_ns FROM traces t WHERE t.trace = w.trace)) AS end_ns\n" \
    "      FROM (SELECT c.trace AS trace, c.cpu AS cpu, c.new_tid AS tid, c.time_ns AS start_ns,\n" \
    "                   c.event AS start_event, lead(c.time_ns) OVER w AS next_ns, lead(c.event) OVER w AS end_event\n" \
    "            FROM cswitches c WINDOW w AS (PARTITION BY c.trace, c.cpu ORDER BY c.event)) w) i;\n" \
    "\n" \
    "-- Processor time per thread (and program it ran: a thread whose process execs has a row for\n" \
    "-- each), summed over its running intervals on every processor.\n" \
    "CREATE VIEW cpu_time_by_thread AS\n" \
    "SELECT trace, tid, pid, process_name, sum(ns) AS cpu_ns, count(*) AS intervals\n" \
    "FROM cpu_intervals GROUP BY trace, tid, pid, process_name;\n" \
    "\n" \
    "-- Processor time per process and program, summed over its threads.\n" \
    "CREATE VIEW cpu_time_by_process AS\n" \
    "SELECT trace, pid, process_name, count(DISTINCT tid) AS threads, sum(ns) AS cpu_ns, count(*) AS intervals\n" \
    "FROM cpu_intervals GROUP BY trace, pid, process_name;\n" \
    "\n" \
    "-- System calls with their thread's process and its program at the call.\n" \
    "CREATE VIEW syscalls_view AS\n" \
    "SELECT s.event AS event, s.time_ns AS time_ns, s.cpu AS cpu, s.name AS name,\n" \
    "       CASE WHEN s.address IS NOT NULL THEN printf('0x%x', s.address) END AS address,\n" \
    "       s.nt_status AS nt_status, s.syscall AS syscall, s.tid AS tid, s.pid AS pid,\n" \
    "       " NAME_AT("s.trace", "s.pid", "s.time_ns", "s.event") " AS process_name, s.trace AS trace\n" \
    "FROM (SELECT s.*, " PID_AT("s.trace", "s.tid", "s.event") " AS pid FROM syscalls s) s;\n" \
    "\n" \
    "-- Interrupts and DPCs by kind, vector and routine: how many, and how long they ran.\n" \
    "CREATE VIEW isr_dpc_summary AS\n" \
    "SELECT trace, name, vector, printf('0x%x', routine) AS routine, count(*) AS count,\n" \
    "       sum(duration_ns) AS total_ns, avg(duration_ns) AS avg_ns, max(duration_ns) AS max_ns\n" \
    "FROM isr_dpc GROUP BY trace, name, vector, routine;\n" \
    "\n" \
    "-- Page faults by process (and the program it ran) and kind.\n" \
    "CREATE VIEW page_faults_by_process AS\n" \
    "SELECT f.trace AS trace, f.pid AS pid, f.process_name AS process_name, f.name AS name, count(*) AS count\n" \
    "FROM (SELECT g.*, " NAME_AT("g.trace", "g.pid", "g.time_ns", "g.event") " AS process_name FROM page_faults g) f\n" \
    "GROUP BY f.trace, f.pid, f.process_name, f.name;\n" \
    "\n" \
    "-- Bytes sent and received by each connection (TcpIp) or socket (UdpIp) and its process.\n" \
    "CREATE VIEW tcpip_by_connection AS\n" \
    "SELECT c.trace AS trace, c.protocol AS protocol, c.connid AS connid, c.pid AS pid,\n" \
    "       c.process_name AS process_name, c.saddr AS saddr, c.sport AS sport, c.daddr AS daddr, c.dport AS dport,\n" \
    "       sum(c.name LIKE '%/Send%') AS sends, sum(CASE WHEN c.name LIKE '%/Send%' THEN c.size ELSE 0 END) AS bytes_sent,\n" \
    "       sum(c.name LIKE '%/Recv%') AS recvs,\n" \
    "       sum(CASE WHEN c.name LIKE '%/Recv%' THEN c.size ELSE 0 END) AS bytes_received,\n" \
    "       sum(c.name LIKE '%/Retransmit%') AS retransmits, min(c.time_ns) AS first_ns, max(c.time_ns) AS last_ns\n" \
    "FROM (SELECT t.*, " NAME_AT("t.trace", "t.pid", "t.time_ns", "t.event") " AS process_name FROM tcpip t) c\n" \
    "GROUP BY c.trace, c.protocol, c.connid, c.pid, c.process_name, c.saddr, c.sport, c.daddr, c.dport;\n" \
    "\n" \
    "-- Each file operation (not the names, not the ends) with its end (the first OperationEnd\n" \
    "-- of its irp from its time: status, bytes moved, duration) and its file's path (a Create's\n" \
    "-- own; else the last name of its file_key before it (events are numbered in time order);\n" \
    "-- else the last Create of its\n" \
    "-- file_object before it, unless a Close (the file object freed: its address may be another\n" \
    "-- file's next) came between; else the file's FileRundown).\n" \
    "CREATE VIEW file_io_view AS\n" \
    "SELECT v.*, e.nt_status AS nt_status, e.extra_info AS bytes, e.time_ns - v.time_ns AS duration_ns\n" \
    "FROM (SELECT o.event AS event, o.trace AS trace, o.time_ns AS time_ns, o.cpu AS cpu, o.pid AS pid,\n" \
    "             o.tid AS tid, substr(o.name, 8) AS op, o.irp AS irp, o.file_object AS file_object,\n" \
    "             o.file_key AS file_key, o.offset AS offset, o.size AS size, o.info_class AS info_class,\n" \
    "             o.extra_info AS extra_info,\n" \
    "             coalesce(CASE WHEN o.name = 'FileIO/Create' THEN o.path END,\n" \
    "                      (SELECT n.path FROM file_io n WHERE n.trace = o.trace AND n.file_key = o.file_key\n" \
    "                         AND n.name IN ('FileIO/Name', 'FileIO/FileCreate', 'FileIO/FileRundown')\n" \
    "                         AND n.event < o.event ORDER BY n.event DESC LIMIT 1),\n" \
    "                      (SELECT c.path FROM file_io c WHERE c.trace = o.trace AND c.file_object = o.file_object\n" \
    "                         AND c.name = 'FileIO/Create' AND c.event < o.event\n" \
    "                         AND NOT EXISTS (SELECT 1 FROM file_io z WHERE z.trace = o.trace\n" \
    "                           AND z.file_object = o.file_object AND z.name = 'FileIO/Close'\n" \
    "                           AND z.event > c.event AND z.event < o.event)\n" \
    "                         ORDER BY c.event DESC LIMIT 1),\n" \
    "                      (SELECT n.path FROM file_io n WHERE n.trace = o.trace AND n.file_key = o.file_key\n" \
    "                         AND n.name = 'FileIO/FileRundown' LIMIT 1)) AS path,\n" \
    "             (SELECT min(x.event) FROM file_io x WHERE x.trace = o.trace AND x.irp = o.irp\n" \
    "                AND x.name = 'FileIO/OperationEnd' AND x.event > o.event) AS end_event\n" \
    "      FROM file_io o\n" \
    "      WHERE o.name NOT IN ('FileIO/OperationEnd', 'FileIO/Name', 'FileIO/FileCreate', 'FileIO/FileDelete',\n" \
    "                           'FileIO/FileRundown')) v\n" \
    "LEFT JOIN file_io e ON e.event = v.end_event;\n" \
    "\n" \
    "-- File operations by process (and the program it ran) and path: how many, the reads and\n" \
    "-- writes and their bytes, the time they took.\n" \
    "CREATE VIEW file_io_by_file AS\n" \
    "SELECT f.trace AS trace, f.pid AS pid, f.process_name AS process_name, f.path AS path, count(*) AS ops,\n" \
    "       sum(f.op = 'Read') AS reads, coalesce(sum(CASE WHEN f.op = 'Read' THEN f.bytes END), 0) AS bytes_read,\n" \
    "       sum(f.op = 'Write') AS writes, coalesce(sum(CASE WHEN f.op = 'Write' THEN f.bytes END), 0) AS bytes_written,\n" \
    "       sum(f.duration_ns) AS duration_ns\n" \
    "FROM (SELECT g.*, " NAME_AT("g.trace", "g.pid", "g.time_ns", "g.event") " AS process_name FROM file_io_view g) f\n" \
    "GROUP BY f.trace, f.pid, f.process_name, f.path;\n" \
    "\n" \
    "-- VirtualAlloc and VirtualFree by process (and the program it ran) and kind: how many, and\n" \
    "-- how many bytes.\n" \
    "CREATE VIEW virtual_alloc_by_process AS\n" \
    "SELECT v.trace AS trace, v.pid AS pid, v.process_name AS process_name, v.name AS name, count(*) AS count,\n" \
    "       sum(v.region_size) AS bytes\n" \
    "FROM (SELECT g.*, " NAME_AT("g.trace", "g.pid", "g.time_ns", "g.event") " AS process_name FROM virtual_alloc g) v\n" \
    "GROUP BY v.trace, v.pid, v.process_name, v.name;\n" \
    "\n" \
    "-- File views with the name of their file: that of the FileIO/Name, /FileCreate or /FileRundown\n" \
    "-- of their key nearest before them, else after them (NULL: none names it).\n" \
    "CREATE VIEW file_maps_view AS\n" \
    "WITH names AS MATERIALIZED (\n" \
    "  SELECT trace, time_ns, json_extract(fields, '$.FileObject') AS key, json_extract(fields, '$.FileName') AS file_name\n" \
    "  FROM events WHERE hook_id IN (1024, 1056, 1060) AND fields IS NOT NULL)\n" \
    "SELECT m.*, " NAME_AT("m.trace", "m.pid", "m.time_ns", "m.event") " AS process_name,\n" \
    "       coalesce((SELECT n.file_name FROM names n WHERE n.trace = m.trace AND n.key = printf('0x%x', m.file_key)\n" \
    "                 AND n.time_ns <= m.time_ns ORDER BY n.time_ns DESC LIMIT 1),\n" \
    "                (SELECT n.file_name FROM names n WHERE n.trace = m.trace AND n.key = printf('0x%x', m.file_key)\n" \
    "                 AND n.time_ns > m.time_ns ORDER BY n.time_ns LIMIT 1)) AS file_name\n" \
    "FROM file_maps m;\n" \
    "\n" \
    "-- Process counters with the program the process ran (its last name before the event).\n" \
    "CREATE VIEW process_counters_view AS\n" \
    "SELECT c.*, " NAME_AT("c.trace", "c.pid", "c.time_ns", "c.event") " AS process_name FROM process_counters c;\n" \
    "\n" \
    "-- Hard faults with their thread's process (the header's, else the thread's Start or DCStart\n" \
    "-- nearest before) and program, and the name of their file: that of the FileIO/Name,\n" \
    "-- /FileCreate or /FileRundown of its key nearest before them, else after them (NULL: none).\n" \
    "CREATE VIEW hard_faults_view AS\n" \
    "WITH names AS MATERIALIZED (\n" \
    "  SELECT trace, time_ns, json_extract(fields, '$.FileObject') AS key, json_extract(fields, '$.FileName') AS file_name\n" \
    "  FROM events WHERE hook_id IN (1024, 1056, 1060) AND fields IS NOT NULL),\n" \
    "h AS (SELECT g.event, g.trace, g.time_ns, g.cpu, g.name,\n" \
    "             coalesce(g.pid, (SELECT t.pid FROM threads t WHERE t.trace = g.trace AND t.tid = g.tid\n" \
    "                              AND t.time_ns <= g.time_ns ORDER BY t.time_ns DESC LIMIT 1)) AS pid,\n" \
    "             g.tid, g.start_ns, g.duration_ns, g.read_offset, g.virtual_address, g.file_key, g.byte_count\n" \
    "      FROM hard_faults g)\n" \
    "SELECT h.*, " NAME_AT("h.trace", "h.pid", "h.time_ns", "h.event") " AS process_name,\n" \
    "       coalesce((SELECT n.file_name FROM names n WHERE n.trace = h.trace AND n.key = printf('0x%x', h.file_key)\n" \
    "                 AND n.time_ns <= h.time_ns ORDER BY n.time_ns DESC LIMIT 1),\n" \
    "                (SELECT n.file_name FROM names n WHERE n.trace = h.trace AND n.key = printf('0x%x', h.file_key)\n" \
    "                 AND n.time_ns > h.time_ns ORDER BY n.time_ns LIMIT 1)) AS file_name\n" \
    "FROM h;\n" \
    "\n" \
    "-- Every stack's frames as text: 'ntdll.dll+0x1234'.\n" \
    "CREATE VIEW stack_frames_view AS\n" \
    "SELECT s.stack AS stack, s.event AS event, s.owner_event AS owner_event, s.kind AS kind,\n" \
    "       s.pid AS pid, s.tid AS tid, f.depth AS depth, printf('0x%x', f.address) AS address,\n" \
    "       CASE WHEN f.image IS NULL THEN printf('0x%x', f.address)\n" \
    "            ELSE f.image || printf('+0x%x', f.image_offset) END AS frame,\n" \
    "       fn.name AS function, f.function_offset AS function_offset, " SOURCE_TEXT("fn", "f.line") " AS source\n" \
    "FROM stacks s JOIN stack_frames f ON f.frames = s.frames LEFT JOIN functions fn ON fn.function = f.function;\n" \
    "\n" \
    "-- The stack of each sample, one row per frame from the innermost (depth 0): the frames of the\n" \
    "-- stacks that belong to it (stacks.owner_event: its StackWalk, or a kernel half then a user\n" \
    "-- half, in the order logged; a stack key reference by its definition, the nearest after it,\n" \
    "-- else before). frame: the function's name, else image+0x1a, else the address.\n" \
    "CREATE VIEW sample_stack_frames AS\n" \
    "SELECT x.sample AS sample, x.trace AS trace, x.time_ns AS time_ns, x.pid AS pid, x.tid AS tid,\n" \
    "       row_number() OVER (PARTITION BY x.sample ORDER BY x.stack, x.depth) - 1 AS depth,\n" \
    "       x.address AS address, x.image AS image, x.image_offset AS image_offset, x.function AS function,\n" \
    "       x.function_offset AS function_offset, x.outer_function AS outer_function, x.line AS line,\n" \
    "       " FRAME_WORD("fn", "x") " AS frame\n" \
    "FROM (SELECT s.event AS sample, s.trace AS trace, s.time_ns AS time_ns, s.pid AS pid, s.tid AS tid,\n" \
    "             st.stack AS stack, f.*\n" \
    "      FROM samples s JOIN stacks st ON st.owner_event = s.event\n" \
    "      JOIN stack_frames f ON f.frames = coalesce(st.frames,\n" \
    "        (SELECT d.frames FROM stacks d WHERE d.kind = 'key_def' AND d.trace = st.trace AND d.stack_key = st.stack_key\n" \
    "         AND d.event > st.event ORDER BY d.event LIMIT 1),\n" \
    "        (SELECT d.frames FROM stacks d WHERE d.kind = 'key_def' AND d.trace = st.trace AND d.stack_key = st.stack_key\n" \
    "         AND d.event < st.event ORDER BY d.event DESC LIMIT 1))) x\n" \
    "LEFT JOIN functions fn ON fn.function = x.function;\n" \
    "\n" \
    "-- Each function once per sample it is on: self 1 when the sample's instruction pointer is in\n" \
    "-- it (the innermost function: exclusive), else 0 (on the stack: inclusive; a function that\n" \
    "-- recurses still counts once). Frames count with the function that holds an inlined one.\n" \
    "CREATE VIEW sample_functions AS\n" \
    "SELECT x.sample AS sample, x.trace AS trace, x.profile_source AS profile_source, x.pid AS pid,\n" \
    "       x.tid AS tid, x.function AS function, max(x.self) AS self\n" \
    "FROM (SELECT s.event AS sample, s.trace AS trace, s.profile_source AS profile_source, s.pid AS pid,\n" \
    "             s.tid AS tid, s.function AS function, 1 AS self FROM samples s WHERE s.function IS NOT NULL\n" \
    "      UNION ALL\n" \
    "      SELECT s.event, s.trace, s.profile_source, s.pid, s.tid, s.outer_function, 0 FROM samples s\n" \
    "      WHERE s.outer_function IS NOT NULL\n" \
    "      UNION ALL\n" \
    "      SELECT f.sample, f.trace, s.profile_source, f.pid, f.tid, f.function, 0\n" \
    "      FROM sample_stack_frames f JOIN samples s ON s.event = f.sample WHERE f.function IS NOT NULL\n" \
    "      UNION ALL\n" \
    "      SELECT f.sample, f.trace, s.profile_source, f.pid, f.tid, f.outer_function, 0\n" \
    "      FROM sample_stack_frames f JOIN samples s ON s.event = f.sample WHERE f.outer_function IS NOT NULL) x\n" \
    "GROUP BY x.sample, x.function;\n" \
    "\n" \
    "-- Top functions by samples of each profile source (0: the timer), over every trace: exclusive\n" \
    "-- (the samples whose instruction pointer is in it) and inclusive (the samples it is on the\n" \
    "-- stack of, itself included), and their shares of all the samples of that source in percent.\n" \
    "CREATE VIEW top_functions AS\n" \
    "SELECT f.function AS function, f.name AS name, f.image AS image, f.source_file AS source_file,\n" \
    "       sf.profile_source AS profile_source, sum(sf.self) AS exclusive, count(*) AS inclusive,\n" \
    "       round(sum(sf.self) * 100.0 / t.samples, 2) AS exclusive_percent,\n" \
    "       round(count(*) * 100.0 / t.samples, 2) AS inclusive_percent\n" \
    "FROM sample_functions sf JOIN functions f ON f.function = sf.function\n" \
    "JOIN (SELECT profile_source, count(*) AS samples FROM samples GROUP BY profile_source) t\n" \
    "  ON t.profile_source = sf.profile_source\n" \
    "GROUP BY sf.function, sf.profile_source;\n" \
    "\n" \
    "-- The stacks of each function's samples: for each function, each distinct stack of the samples\n" \
    "-- it is on, as one text from the innermost frame ('hot <- work <- main'), and how many samples\n" \
    "-- had it: SELECT stack, samples FROM function_stacks WHERE name = 'hot' ORDER BY samples DESC.\n" \
    "CREATE VIEW function_stacks AS\n" \
    "SELECT sf.function AS function, f.name AS name, f.image AS image, st.stack AS stack, count(*) AS samples\n" \
    "FROM sample_functions sf JOIN functions f ON f.function = sf.function\n" \
    "JOIN (SELECT sample, group_concat(frame, ' <- ') AS stack\n" \
    "      FROM (SELECT sample, frame FROM sample_stack_frames ORDER BY sample, depth) GROUP BY sample) st\n" \
    "  ON st.sample = sf.sample\n" \
    "GROUP BY sf.function, st.stack;\n" \
    "\n" \
    "-- Events per provider and kind, as etldump --summary counts them.\n" \
    "CREATE VIEW provider_counts AS\n" \
    "SELECT p.guid AS provider, p.name AS provider_name, k.name AS kind, count(*) AS events,\n" \
    "       sum(e.payload_len) AS payload_bytes\n" \
    "FROM events e JOIN kinds k ON k.kind = e.kind LEFT JOIN providers p ON p.provider = e.provider\n" \
    "GROUP BY e.provider, e.kind;\n"

const char etl_sqlite_schema_tables[] = SCHEMA_TABLES;
const char etl_sqlite_schema_indexes[] = SCHEMA_INDEXES;
const char etl_sqlite_schema_views[] = SCHEMA_VIEWS;
static const char schema_text[] = SCHEMA_TABLES "\n" SCHEMA_INDEXES "\n" SCHEMA_VIEWS;

const char *etl_sqlite_schema(void)
{
    return schema_text;
}

int etl_load_create_schema(struct sink *k)
{
    char sql[256];

    if (etl_sink_exec(k, etl_sqlite_schema_tables) != 0) return -1;
    for (int i = ETL_KIND_SYSTEM; i <= ETL_KIND_MESSAGE; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO kinds VALUES (%d, '%s')", i, etl_event_kind_name(i));
        if (etl_sink_exec(k, sql) != 0) return -1;
    }
    snprintf(sql, sizeof sql,
             "INSERT INTO meta VALUES ('schema_version', '%d'), ('created_by', 'etl2sqlite %s'), "
             "('libetl_version', '%s'); PRAGMA user_version = %d",
             ETL_SQLITE_SCHEMA_VERSION, etl_version(), etl_version(), ETL_SQLITE_SCHEMA_VERSION);
    return etl_sink_exec(k, sql);
}

/* Runs each "CREATE INDEX IF NOT EXISTS name ..." of the schema. */
int etl_load_create_indexes(struct sink *k)
{
    const char *p = etl_sqlite_schema_indexes;
    char sql[512];

    while ((p = strstr(p, "CREATE INDEX ")) != NULL) {
        const char *end = strchr(p, ';');
        size_t n = (size_t)(end - p);
        if (n >= sizeof sql) return -1;
        memcpy(sql, p, n);
        sql[n] = '\0';
        if (etl_sink_exec(k, sql) != 0) return -1;
        p = end;
    }
    return 0;
}

/* An appended database must be one etl2sqlite wrote, in this schema. */
int etl_load_check_schema(struct sink *k)
{
    sqlite3_stmt *s;
    int version = -1;

    if (sqlite3_prepare_v2(k->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) version = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    if (version == ETL_SQLITE_SCHEMA_VERSION) return 0;
    if (version > 0)
        etl_load_message(k->l, ETL_FATAL, 0, NULL, -1,
                         "%s: written in schema version %d, and this etl2sqlite writes version %d; nothing was added "
                         "(load all the inputs into a new database)",
                         k->label, version, ETL_SQLITE_SCHEMA_VERSION);
    else
        etl_load_message(k->l, ETL_FATAL, 0, NULL, -1,
                         "%s: not a database etl2sqlite wrote (schema version %d); nothing was added", k->label,
                         ETL_SQLITE_SCHEMA_VERSION);
    k->failed = 1;
    return -1;
}
