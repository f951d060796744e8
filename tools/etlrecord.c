/* SPDX-License-Identifier: MIT */
/* etlrecord: start, query, flush, update, stop and list named sessions (doc/etlrecord-design.md);
   the controller and its protocol are libetl's (etl_controller_*, etl_control_request). */
#define _GNU_SOURCE /* pipe2, pidfd_open */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdline.h"
#include "etl.h"
#include "interrupt.h"

/* Exit codes (doc/etlrecord.1). */
#define EXIT_LOST  1 /* stop: the session ran, but lost events or buffers */
#define EXIT_ERROR 2 /* bad usage, no such session, or the request failed */

#define LINE_MAX_LEN 4096

static const char usage_text[] =
    "Usage: etlrecord start NAME [-o FILE] [START OPTION]...\n"
    "       etlrecord run [-o FILE] [START OPTION]... [--name NAME] [--json]\n"
    "                     -- COMMAND [ARG]...\n"
    "       etlrecord stop NAME [--json]\n"
    "       etlrecord query NAME [--json]\n"
    "       etlrecord flush NAME [-o SNAPSHOT [--force]]\n"
    "       etlrecord update NAME [--provider SPEC]... [--flush-timer S] [--max-buffers N]\n"
    "       etlrecord list [--json]\n"
    "       etlrecord profiles [--json] [FILE.wprp[!PROFILE]]\n"
    "       etlrecord start --profile PROFILE [--profile PROFILE]... [--mode MODE]\n"
    "                       [--instance NAME]\n"
    "       etlrecord stop --profile [--instance NAME] -o OUT.etl [--force] [--json]\n"
    "       etlrecord query --profile [--instance NAME] [--json]\n"
    "       etlrecord cancel --profile [--instance NAME]\n"
    "Control named ETW-style sessions: 'start' leaves a controller process in the\n"
    "background that owns the session (its buffers, flush thread and file) and\n"
    "answers the other commands over a private socket. 'run' is that controller for\n"
    "the life of COMMAND: it starts the session (named etlrecord-PID unless --name),\n"
    "runs COMMAND with ETL_SESSION=NAME in its environment, and when COMMAND ends,\n"
    "stops the session, prints its statistics on stderr and exits with COMMAND's\n"
    "status. SIGINT, SIGTERM and SIGHUP sent to 'run' go on to COMMAND.\n"
    "\n"
    "Start options:\n"
    "  -o, --output=FILE        the log file (required, except in buffering mode,\n"
    "                           which has none, and in realtime mode, where it is\n"
    "                           optional); a file another session writes (through\n"
    "                           any path) is refused: a log file has one writer\n"
    "  -f, --force              replace an existing FILE (or, flush, SNAPSHOT); without\n"
    "                           it an existing file is refused and nothing starts\n"
    "      --mode=MODE          sequential (default), circular, newfile, buffering or\n"
    "                           realtime (events go to a live consumer, 'etldump\n"
    "                           --session NAME'; with -o, to the file too)\n"
    "      --buffer-size=KB     buffer size, 4 to 16384 KB (default 64)\n"
    "      --min-buffers=N      buffers allocated at start (at least 2 per processor;\n"
    "                           2 with one pool)\n"
    "      --max-buffers=N      most buffers the pool may grow to (at least the\n"
    "                           minimum; buffering mode: the minimum)\n"
    "      --direct-io          write the file past the page cache (O_DIRECT): less\n"
    "                           processor time per MB, each write waits for the device;\n"
    "                           with room to grow (--max-buffers) for its slow moments\n"
    "      --max-file-size=MB   required for circular, newfile and --preallocate\n"
    "      --kbytes             --max-file-size in KB (EVENT_TRACE_USE_KBYTES_FOR_SIZE)\n"
    "      --preallocate        reserve --max-file-size on disk at the start; the file\n"
    "                           is cut to what was written at the stop\n"
    "      --append             sequential: continue FILE when it exists (its buffer\n"
    "                           size, clock and processors, and for perfcounter and\n"
    "                           cycle its boot, must be the session's); not with\n"
    "                           --force\n"
    "      --no-per-processor-buffering  one pool of buffers for every processor,\n"
    "                           events in the order they are written (at least 2\n"
    "                           buffers); with --kernel only: providers of other\n"
    "                           processes need per-processor buffers\n"
    "      --flush-timer=S      flush non-empty buffers every S seconds (0: when full;\n"
    "                           realtime: 0 means 1)\n"
    "      --clock=CLOCK        perfcounter (default), systemtime or cycle\n"
    "      --provider=SPEC      GUID|NAME[:LEVEL[:KEYWORDS]]: enable a provider (may be\n"
    "                           repeated; LEVEL 0-255, 0 = all; KEYWORDS, MatchAnyKeyword,\n"
    "                           e.g. 0x10; 0 = all)\n"
    "      --stackwalk          every event of the providers with its writer's stack\n"
    "                           (EVENT_ENABLE_PROPERTY_STACK_TRACE: a STACK_TRACE64 item)\n"
    "      --lbr=TRIGGER[,...]  an LBR record (last branch record, perf's branch-stack\n"
    "                           sampling) with each event of up to 4 triggers: profile,\n"
    "                           pmc, cswitch, readythread or GUID:TYPE; each must be\n"
    "                           enabled in the session (profile and pmc: --kernel\n"
    "                           profile, whose samples then carry the branches)\n"
    "      --lbr-filter=F[,...] branches to leave out of the LBR records: kernel, user,\n"
    "                           jcc, near_rel_call, near_ind_call, near_ret,\n"
    "                           near_ind_jmp, near_rel_jmp, far_branch; callstack keeps\n"
    "                           them as a call stack\n"
    "      --kernel=FLAGS       a kernel session (the NT Kernel Logger's events, from\n"
    "                           Linux perf events; root): FLAGS, comma-separated, of\n"
    "                           process, thread (with SetName: the comm), image_load,\n"
    "                           cswitch, dispatcher (ReadyThread), profile\n"
    "                           (SampledProfile), disk_io (DiskIo from block requests),\n"
    "                           syscall (SysClEnter/SysClExit, the calls named),\n"
    "                           interrupt (ISR from hard interrupts), dpc (DPC from\n"
    "                           softirqs), memory_page_faults (PageFault: minor and\n"
    "                           major faults), memory_hard_faults (HardFault: each\n"
    "                           major fault of a file page, its file, offset, bytes\n"
    "                           read, start), network_tcpip (TcpIp, UdpIp: sends,\n"
    "                           receives, connections), file_io_init (FileIo Create,\n"
    "                           Read, Write, ... from BPF), file_io (their OpEnd),\n"
    "                           disk_file_io (FileIo Name, FileRundown),\n"
    "                           virtual_alloc (VirtualAlloc/VirtualFree from\n"
    "                           anonymous mmap, munmap, mremap, brk), vamap\n"
    "                           (MapFile/UnmapFile from file mmap, munmap, mremap),\n"
    "                           process_counters (PerfCtr at each process's end,\n"
    "                           PerfCtrRundown at the stop); no --provider. The\n"
    "                           name \"NT Kernel Logger\" is a kernel session's only\n"
    "      --stackwalk=EVENTS   with --kernel (also --stackwalk EVENTS): a StackWalk\n"
    "                           event for each of these kernel events: profile,\n"
    "                           cswitch, dispatcher\n"
    "      --profile-interval=US  with --kernel profile: sample every US microseconds\n"
    "                           (10 to 1000000; default 1000)\n"
    "Recordings of profiles (start, stop, query, cancel with --profile):\n"
    "      --profile=PROFILE    start: a recording profile to record, as WPR's: a\n"
    "                           built-in one's name (CPU, CPU.Light,\n"
    "                           GeneralProfile.Verbose, ...) or FILE.wprp[!PROFILE]\n"
    "                           (may be repeated: the profiles are combined);\n"
    "                           stop, query, cancel: --profile alone, the recording\n"
    "      --mode=MODE          with --profile: file (default) or memory\n"
    "      --instance=NAME      the recording's instance (default etlrecord)\n"
    "  -o, --output=OUT.etl     stop --profile: the merged file of all its sessions\n"
    "Other options:\n"
    "      --name=NAME          run: the session's name (default etlrecord-PID)\n"
    "      --json               stop, query, list, profiles: print one JSON value;\n"
    "                           run: the final statistics as one JSON object on\n"
    "                           stderr\n"
    "  -o, --output=SNAPSHOT    flush of a buffering session: the snapshot to write\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the versions of etlrecord, libetl and zlib and exit\n"
    "\n"
    "The session's buffers are in shared memory: providers in any process of the user\n"
    "write into it (libetl's provider API; etldemo is one). A realtime session holds\n"
    "its buffers for a consumer up to --max-buffers less one per processor and one,\n"
    "then counts what it drops in RealTimeBuffersLost.\n"
    "\n"
    "Exit status: 0 done; 1 (stop) the session lost events or buffers (EventsLost,\n"
    "LogBuffersLost or RealTimeBuffersLost above 0); 2 bad usage, the file exists\n"
    "(without --force), no such session, or the request failed (also: --lbr where\n"
    "the processor or virtual machine has no branch-stack sampling, no session is\n"
    "then started).\n"
    "run: COMMAND's exit status, 128+N when signal N ended it, 127 when it could not\n"
    "be run; 2 when the session could not be started (COMMAND was not run).\n"
    "\n"
    "'profiles' lists the built-in recording profiles (WPR's names: GeneralProfile,\n"
    "CPU, DiskIO, FileIO, Network, each Light and Verbose, in File and Memory mode;\n"
    "Heap, Pool, Registry and Handle listed as unavailable), or those of a WPR\n"
    "profile file (.wprp; !PROFILE picks one by Id or Name), each resolved as it\n"
    "would run: its collectors, their buffers, kernel flags (with the SystemProvider\n"
    "keywords they come from), stack walks and event providers. What Linux cannot\n"
    "honour is listed under 'unmapped' and warned of on stderr. Exit 2 for a file\n"
    "that is not a valid profile file (its name, line and what is wrong).\n"
    "\n"
    "'start --profile' records profiles in the manner of 'wpr -start': each collector\n"
    "of the profiles (collectors of one name combined) is a session with a\n"
    "controller of its own, the system collector a kernel session (root) named as\n"
    "the collector (NT Kernel Logger), each event collector a session of its\n"
    "providers; in file mode each writes its file, in memory mode each keeps its\n"
    "buffers in memory. 'stop --profile' (memory mode: a snapshot of each session\n"
    "first) stops them all, prints each one's statistics as 'stop' does and merges\n"
    "their files into OUT.etl (as etlmerge); 'cancel --profile' stops them and\n"
    "discards what they recorded; 'query --profile' shows each session. One\n"
    "recording per instance; a collector's session name taken by another session\n"
    "refuses the start, which stops what it started. Exit status 2 also when a\n"
    "profile cannot be recorded on Linux, and when a stop or merge fails (the\n"
    "recorded files are then kept; stop again merges them, cancel discards them).\n";

enum { OPT_MODE = 256, OPT_BUFSIZE, OPT_MINBUF, OPT_MAXBUF, OPT_MAXFILE, OPT_FLUSH, OPT_CLOCK, OPT_PROVIDER,
       OPT_JSON, OPT_STACKWALK, OPT_NAME, OPT_LBR, OPT_LBR_FILTER, OPT_KERNEL, OPT_PROFILE, OPT_DIRECT,
       OPT_WPR_PROFILE, OPT_INSTANCE,
       OPT_APPEND, OPT_PREALLOCATE, OPT_KBYTES, OPT_NO_PER_CPU };

struct options {
    const char *name;
    const char *output;
    const char *mode;
    const char *clock;
    int json;
    int force;               /* --force: an existing file (-o) is replaced */
    int stackwalk;           /* the providers' events with their writers' stacks */
    int direct_io;           /* ETL_ENGINE_DIRECT_IO */
    int append, preallocate, kbytes, no_per_cpu; /* ETL_MODE_FILE_APPEND, _FILE_PREALLOCATE,
                                                    _USE_KBYTES_FOR_SIZE, _NO_PER_PROCESSOR_BUFFERING */
    const char *stackwalk_events; /* --stackwalk=EVENTS: kernel events with stack walks */
    const char *kernel;      /* --kernel=FLAGS */
    const char *file;        /* profiles: FILE.wprp[!PROFILE] */
    uint32_t kernel_flags, kernel_stackwalk, profile_interval_us; /* ETL_KERNEL_*; microseconds */
    int has_flush_timer, has_max_buffers;
    uint32_t buffer_size_kb, min_buffers, max_buffers, max_file_size_mb, flush_timer_s;
    const char *lbr, *lbr_filter; /* --lbr TRIGGER,..., --lbr-filter NAME,... */
    const char **providers; /* the specs as given */
    unsigned nproviders;
    char **command;         /* run: the command and its arguments */
    const char **profiles;  /* start --profile PROFILE...: the profiles as given */
    unsigned nprofiles;
    int profile_flag;       /* --profile given (stop, query, cancel: the recording of profiles) */
    const char *instance;   /* --instance NAME */
};

/* An absolute path for the controller, which works from "/"; NULL without memory. */
static char *absolute(const char *path)
{
    char cwd[4096];
    char *out;

    if (path[0] == '/') return strdup(path);
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    out = malloc(strlen(cwd) + strlen(path) + 2);
    if (out) sprintf(out, "%s/%s", cwd, path);
    return out;
}

/* ---- start options: the controller's configuration ---- */

/* What the controller of a session is started with. */
struct start {
    etl_controller_config cfg;
    etl_controller_capture cap;   /* --kernel and --lbr, as the controller's hooks */
    etl_controller_hooks hooks;
    etl_provider_spec *specs;
    char *file;                   /* -o, absolute */
};

static void start_free(struct start *st)
{
    free(st->specs);
    free(st->file);
}

static int start_properties(const struct options *o, etl_session_properties *p)
{
    memset(p, 0, sizeof *p);
    p->buffer_size_kb = o->buffer_size_kb; /* 0: the engine's default (query shows what is in effect) */
    p->minimum_buffers = o->min_buffers;
    p->maximum_buffers = o->max_buffers;
    p->maximum_file_size_mb = o->max_file_size_mb;
    p->flush_timer_s = o->flush_timer_s;
    p->log_file_mode = ETL_MODE_FILE_SEQUENTIAL;
    p->clock_type = ETL_CLOCK_PERFCOUNTER;
    p->engine_flags = ETL_ENGINE_SHARED; /* providers of any process of the user write into it */
    if (o->direct_io) p->engine_flags |= ETL_ENGINE_DIRECT_IO;
    if (o->mode && etl_session_mode_from_name(o->mode, &p->log_file_mode) != ETL_OK) {
        fprintf(stderr, "etlrecord: --mode: '%s' is not sequential, circular, newfile, buffering or realtime\n",
                o->mode);
        return -1;
    }
    if (o->clock && etl_clock_from_name(o->clock, &p->clock_type) != ETL_OK) {
        fprintf(stderr, "etlrecord: --clock: '%s' is not perfcounter, systemtime or cycle\n", o->clock);
        return -1;
    }
    if (p->log_file_mode == ETL_MODE_BUFFERING && o->output) {
        fputs("etlrecord: a buffering session has no file (-o); write snapshots with 'etlrecord flush NAME -o "
              "SNAPSHOT'\n", stderr);
        return -1;
    }
    /* Real time beside a file: the file is sequential, as ETW makes it. */
    if (p->log_file_mode == ETL_MODE_REAL_TIME && o->output) p->log_file_mode |= ETL_MODE_FILE_SEQUENTIAL;
    if (p->log_file_mode != ETL_MODE_BUFFERING && p->log_file_mode != ETL_MODE_REAL_TIME && !o->output) {
        fputs("etlrecord: no log file (-o FILE)\nTry 'etlrecord --help'.\n", stderr);
        return -1;
    }
    if (o->kbytes && !o->max_file_size_mb) {
        fputs("etlrecord: --kbytes is the unit of --max-file-size, which is not given\n", stderr);
        return -1;
    }
    /* The other bits of the logging mode (the engine and the writer check how they combine). */
    if (o->append) p->log_file_mode |= ETL_MODE_FILE_APPEND;
    if (o->preallocate) p->log_file_mode |= ETL_MODE_FILE_PREALLOCATE;
    if (o->kbytes) p->log_file_mode |= ETL_MODE_USE_KBYTES_FOR_SIZE;
    /* One pool: only the controller's own writers (the kernel capture) write into it. */
    if (o->no_per_cpu) {
        p->log_file_mode |= ETL_MODE_NO_PER_PROCESSOR_BUFFERING;
        p->engine_flags &= ~ETL_ENGINE_SHARED;
    }
    return 0;
}

/* --lbr TRIGGER,... and --lbr-filter NAME,... into cap, and whether this machine can capture
   LBR at all (before any session starts): 0, or -1 (printed). */
static int lbr_config(const struct options *o, etl_controller_capture *cap)
{
    char err[512], *list = strdup(o->lbr), *save = NULL;

    if (!list) return -1;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (cap->lbr_count == ETL_LBR_MAX_EVENTS) {
            fprintf(stderr, "etlrecord: --lbr: at most %d triggers\n", ETL_LBR_MAX_EVENTS);
            free(list);
            return -1;
        }
        if (etl_lbr_trigger_parse(t, &cap->lbr_events[cap->lbr_count++]) != ETL_OK) {
            fprintf(stderr, "etlrecord: --lbr: unknown trigger '%s' (profile, pmc, cswitch, readythread or "
                    "GUID:TYPE)\n", t);
            free(list);
            return -1;
        }
    }
    free(list);
    if (!cap->lbr_count) {
        fputs("etlrecord: --lbr needs a trigger (profile, pmc, cswitch, readythread or GUID:TYPE)\n", stderr);
        return -1;
    }
    if ((o->lbr_filter && etl_lbr_filter_parse(o->lbr_filter, &cap->lbr_flags, err, sizeof err) != ETL_OK) ||
        etl_lbr_capture_probe(cap->lbr_flags, err, sizeof err) != ETL_OK) {
        fprintf(stderr, "etlrecord: %s\n", err);
        return -1;
    }
    return 0;
}

/* The controller of session name as the start options describe it (st zeroed first; the
   caller frees it with start_free): 0, or -1 (printed). */
/* The rule for existing outputs (tools/cmdline.h), for the log file (newfile mode: its first
   file, FILE's %d as 1) before the session starts: 0, or -1 (said). Buffering mode has no file
   (the controller says so). */
static int existing_file(const struct options *o, const char *file)
{
    const char *d = o->mode && strcmp(o->mode, "newfile") == 0 ? strstr(file, "%d") : NULL;
    char *first;
    int rc;

    if ((o->mode && strcmp(o->mode, "buffering") == 0) || o->append) return 0; /* --append continues it */
    if (!d) return tool_output_check("etlrecord", file, o->force);
    if (!(first = malloc(strlen(file) + 2))) return -1;
    sprintf(first, "%.*s1%s", (int)(d - file), file, d + 2);
    rc = tool_output_check("etlrecord", first, o->force);
    free(first);
    return rc;
}

static int start_config(const struct options *o, const char *name, struct start *st)
{
    char err[512];

    memset(st, 0, sizeof *st);
    if (start_properties(o, &st->cfg.properties) != 0) return -1;
    st->cfg.properties.logger_name = name;
    st->cfg.stackwalk = o->stackwalk && !o->kernel;
    st->cap.kernel_flags = o->kernel_flags;
    st->cap.kernel_stackwalk = o->kernel_stackwalk;
    st->cap.profile_interval_us = o->profile_interval_us ? o->profile_interval_us : 1000;
    st->specs = calloc(o->nproviders + 1, sizeof *st->specs);
    if (!st->specs) return -1;
    for (unsigned i = 0; i < o->nproviders; i++)
        if (etl_provider_spec_parse(o->providers[i], &st->specs[i], err, sizeof err) != ETL_OK) {
            fprintf(stderr, "etlrecord: %s\n", err);
            return -1;
        }
    st->cfg.providers = st->specs;
    st->cfg.provider_count = o->nproviders;
    if (o->lbr && lbr_config(o, &st->cap) != 0) return -1;
    st->cap.lbr_text = o->lbr; /* (argv's: they live as long as the process) */
    st->cap.lbr_filter_text = o->lbr_filter;
    if (o->output && !(st->file = absolute(o->output))) {
        fprintf(stderr, "etlrecord: %s: %s\n", o->output, strerror(errno));
        return -1;
    }
    st->cfg.properties.log_file_name = st->file;
    if (st->file && existing_file(o, st->file) != 0) return -1;
    etl_controller_capture_hooks(&st->cap, &st->hooks);
    st->cfg.hooks = &st->hooks;
    return 0;
}

/* ---- start: a controller in the background ---- */

/* Tells the waiting 'start' how it went: "note TEXT", then "ok" or "error TEXT". */
static void report(int fd, const char *kind, const char *text)
{
    char buf[LINE_MAX_LEN];
    int n = snprintf(buf, sizeof buf, "%s %s\n", kind, text);

    if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0) {}
}

static int interrupted(void *arg)
{
    (void)arg;
    return tool_interrupted != 0;
}

/* Starts the controller; what it says of an orphan it cleaned up or of a tracefs it mounted,
   and why it failed, go to say, or without one to report_fd as report lines. NULL when it did
   not start. */
static etl_controller *start_controller(const etl_controller_config *cfg, const etl_controller_capture *cap, FILE *say,
                                        int report_fd)
{
    const char *name = cfg->properties.logger_name;
    etl_controller *c;
    char note[1024];
    int orphan = 0, rc = etl_controller_start(&c, cfg, &orphan);

    if (orphan) {
        snprintf(note, sizeof note,
                 "session %s: cleaned up what an earlier controller of that name left (it had died)", name);
        if (say) fprintf(say, "etlrecord: %s\n", note);
        else report(report_fd, "note", note);
    }
    if (rc == ETL_OK) {
        if (cap->note[0]) {
            if (say) fprintf(say, "etlrecord: %s\n", cap->note);
            else report(report_fd, "note", cap->note);
        }
        return c;
    }
    if (say) fprintf(say, "etlrecord: %s\n", etl_controller_error(c));
    else report(report_fd, "error", etl_controller_error(c));
    etl_controller_close(c);
    return NULL;
}

/* The controller's life: set up, serve until stopped or signalled; never returns. */
static void controller_run(const etl_controller_config *cfg, const etl_controller_capture *cap, int report_fd)
{
    int devnull = open("/dev/null", O_RDWR);
    etl_controller *c;

    /* Nothing of the caller's stays open in a process that may live for days (a make
       jobserver, a pipe its caller waits on), but the pipe to 'start' and stderr. */
    for (int fd = 3; fd < 1024; fd++)
        if (fd != report_fd && fd != devnull) close(fd);
    setsid();
    umask(077);
    signal(SIGPIPE, SIG_IGN);
    tool_catch_signals();
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
    }
    if (chdir("/") != 0) {}
    c = start_controller(cfg, cap, NULL, report_fd);
    if (!c) _exit(EXIT_ERROR);
    report(report_fd, "ok", "running");
    close(report_fd);
    if (devnull >= 0) dup2(devnull, 2);
    if (etl_controller_serve(c, interrupted, NULL, -1)) _exit(0);
    _exit(etl_controller_stop(c, NULL) == ETL_OK ? 0 : EXIT_ERROR);
}

/* Forks the controller of st's session into the background and waits until its session runs:
   0, or -1 (said on stderr: why it failed, or how its controller ended). */
static int spawn_controller(const etl_controller_config *cfg, const etl_controller_capture *cap)
{
    const char *name = cfg->properties.logger_name;
    char line[LINE_MAX_LEN];
    int pfd[2], status, ok = 0;
    pid_t pid;
    FILE *f;

    if (pipe(pfd) != 0 || (pid = fork()) < 0) {
        fprintf(stderr, "etlrecord: session %s: cannot start a controller: %s\n", name, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        controller_run(cfg, cap, pfd[1]);
    }
    close(pfd[1]);
    f = fdopen(pfd[0], "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "note ", 5) == 0) fprintf(stderr, "etlrecord: %s\n", line + 5);
        else if (strncmp(line, "error ", 6) == 0) {
            fprintf(stderr, "etlrecord: %s\n", line + 6);
            ok = -1;
        }
        else if (strncmp(line, "ok ", 3) == 0) ok = 1;
    }
    if (f) fclose(f);
    else close(pfd[0]);
    if (ok == 1) return 0;
    waitpid(pid, &status, 0);
    if (ok == 0) fprintf(stderr, "etlrecord: session %s: the controller ended before the session ran (%s %d)\n",
                         name, WIFSIGNALED(status) ? "signal" : "exit status",
                         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return -1;
}

static int cmd_profile_start(const struct options *o);

static int cmd_start(const struct options *o)
{
    struct start st;
    int rc;

    if (o->nprofiles) return cmd_profile_start(o);
    if (start_config(o, o->name, &st) != 0) {
        start_free(&st);
        return EXIT_ERROR;
    }
    rc = spawn_controller(&st.cfg, &st.cap);
    start_free(&st);
    return rc == 0 ? 0 : EXIT_ERROR;
}


/* ---- the other commands: requests to a controller ---- */

static int is_number(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* The answer as text lines (KEY padded, VALUE) or one JSON object, on out. */
static void print_answer(FILE *out, const etl_control_answer *a, int json)
{
    unsigned nprov = 0, n = etl_control_answer_count(a);

    if (json) fputc('{', out);
    for (unsigned i = 0; i < n; i++) {
        const char *key = etl_control_answer_line(a, i), *sp = strchr(key, ' ');
        const char *value = sp ? sp + 1 : "";
        int klen = sp ? (int)(sp - key) : (int)strlen(key);
        if (strncmp(key, "Provider ", 9) == 0) {
            char guid[64] = "", kw[32] = "", stack[8] = "";
            unsigned level = 0;
            sscanf(value, "%63s %u %31s %7s", guid, &level, kw, stack);
            const char *pname = NULL;
            etl_guid g;
            if (etl_guid_parse(guid, &g) == ETL_OK) pname = etl_guid_name(&g);
            if (!json) {
                fprintf(out, "%-20s %s%s%s level %u keywords %s%s\n", "Provider", guid, pname ? " " : "",
                        pname ? pname : "", level, kw, strcmp(stack, "stack") == 0 ? " stack" : "");
                continue;
            }
            fprintf(out, "%s\"Providers\":[", i ? "," : "");
            for (unsigned j = i; j < n && strncmp(etl_control_answer_line(a, j), "Provider ", 9) == 0; j++, nprov++) {
                stack[0] = '\0';
                sscanf(etl_control_answer_line(a, j) + 9, "%63s %u %31s %7s", guid, &level, kw, stack);
                pname = etl_guid_parse(guid, &g) == ETL_OK ? etl_guid_name(&g) : NULL;
                fprintf(out, "%s{\"Guid\":\"%s\",", j > i ? "," : "", guid);
                if (pname) {
                    fputs("\"Name\":", out);
                    etl_dump_json_string(out, pname);
                    fputc(',', out);
                }
                fprintf(out, "\"Level\":%u,\"MatchAnyKeyword\":\"%s\"%s}", level, kw,
                        strcmp(stack, "stack") == 0 ? ",\"Stack\":true" : "");
            }
            fputc(']', out);
            i += nprov - 1;
            nprov = 0;
            continue;
        }
        if (!json) {
            fprintf(out, "%-20.*s %s\n", klen, key, value);
            continue;
        }
        fprintf(out, "%s\"%.*s\":", i ? "," : "", klen, key);
        if (is_number(value)) fputs(value, out);
        else etl_dump_json_string(out, value);
    }
    if (json) fputs("}\n", out);
}

static uint64_t answer_number(const etl_control_answer *a, const char *key)
{
    const char *v = etl_control_answer_value(a, key);

    return v ? strtoull(v, NULL, 10) : 0;
}

/* What an answer means for the exit status, said on stderr: its error (EXIT_ERROR), or for the
   final statistics of a stop, the events and buffers lost (EXIT_LOST); else 0. */
static int answer_status(const char *name, const etl_control_answer *a, int stop)
{
    if (etl_control_answer_error(a)) {
        fprintf(stderr, "etlrecord: session %s: %s\n", name, etl_control_answer_error(a));
        return EXIT_ERROR;
    }
    if (stop && (answer_number(a, "EventsLost") > 0 || answer_number(a, "LogBuffersLost") > 0 ||
                 answer_number(a, "RealTimeBuffersLost") > 0)) {
        fprintf(stderr, "etlrecord: session %s lost events or buffers (EventsLost %llu, LogBuffersLost %llu, "
                "RealTimeBuffersLost %llu)\n", name, (unsigned long long)answer_number(a, "EventsLost"),
                (unsigned long long)answer_number(a, "LogBuffersLost"),
                (unsigned long long)answer_number(a, "RealTimeBuffersLost"));
        return EXIT_LOST;
    }
    return 0;
}

/* Asks, prints the answer (or the error); 0, EXIT_LOST (stop) or EXIT_ERROR. */
static int request(const struct options *o, const char *req, int print)
{
    etl_control_answer *a;
    int rc = etl_control_request(&a, o->name, req);

    /* No answer: no such session, an orphaned one, a controller that died (said by libetl). */
    if (rc == ETL_FATAL) {
        fprintf(stderr, "etlrecord: %s\n", etl_control_answer_error(a));
        etl_control_answer_free(a);
        return EXIT_ERROR;
    }
    if (print) print_answer(stdout, a, o->json);
    rc = answer_status(o->name, a, strcmp(req, "stop") == 0);
    etl_control_answer_free(a);
    return rc;
}
/* ---- run: a session for the life of a command ---- */

/* The command's pid once it runs, for the signal handler. */
static volatile sig_atomic_t run_child;

/* SIGINT, SIGTERM and SIGHUP sent to 'run' go on to the command; not those the kernel sent (a
   terminal's Ctrl-C and hangup), which reach the command itself: the terminal signals its
   whole foreground process group. */
static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (run_child > 0 && si->si_code != SI_KERNEL) kill((pid_t)run_child, sig);
}

static const int run_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* Forks and execs command with the signal mask mask and the default dispositions; the
   caller holds run_signals blocked. The pid, or -1 (errno set). *exec_errno gets why exec
   failed (the child then exits 127), or 0. */
static pid_t launch(char **command, const sigset_t *mask, int *exec_errno)
{
    int pfd[2], e = 0;
    ssize_t n;
    pid_t pid;

    *exec_errno = 0;
    if (pipe2(pfd, O_CLOEXEC) != 0) return -1;
    pid = fork();
    if (pid == 0) {
        for (unsigned i = 0; i < sizeof run_signals / sizeof run_signals[0]; i++) signal(run_signals[i], SIG_DFL);
        signal(SIGPIPE, SIG_DFL); /* etlrecord ignores it; an ignored signal stays ignored across exec */
        sigprocmask(SIG_SETMASK, mask, NULL);
        close(pfd[0]);
        execvp(command[0], command);
        e = errno;
        if (write(pfd[1], &e, sizeof e) < 0) {}
        _exit(127);
    }
    e = errno;
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        errno = e;
        return -1;
    }
    run_child = pid;
    n = read(pfd[0], &e, sizeof e); /* nothing: exec closed the pipe */
    if (n == (ssize_t)sizeof e) *exec_errno = e;
    close(pfd[0]);
    return pid;
}

struct child {
    pid_t pid;
    int status, ended;
};

static int child_ended(void *arg)
{
    struct child *ch = arg;

    if (!ch->ended && waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid) ch->ended = 1;
    return ch->ended;
}

/* A descriptor that turns readable when pid ends (pidfd_open), or -1 where there is none. */
static int child_wake_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* Stops the session and prints its final statistics on stderr (stdout is the command's), as
   'stop' prints them; lost events or a file that could not be written are said there too. */
static void run_stop(etl_controller *c, const char *name, int json)
{
    etl_control_answer *a;

    etl_controller_stop(c, &a);
    if (!a) {
        fprintf(stderr, "etlrecord: session %s stopped; out of memory for its statistics\n", name);
        return;
    }
    print_answer(stderr, a, json);
    answer_status(name, a, 1);
    etl_control_answer_free(a);
}

/* The exit status of 'run': the command's, 128 + the signal that killed it. */
static int command_status(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return EXIT_ERROR;
}

static int cmd_run(const struct options *o)
{
    struct start st;
    etl_controller *c;
    struct sigaction sa;
    struct child ch = { -1, 0, 0 };
    sigset_t block, old;
    char name[ETL_SESSION_NAME_MAX + 1];
    int exec_errno, wake_fd;

    if (o->name) snprintf(name, sizeof name, "%s", o->name);
    else snprintf(name, sizeof name, "etlrecord-%ld", (long)getpid());
    if (start_config(o, name, &st) != 0) {
        start_free(&st);
        return EXIT_ERROR;
    }
    /* A signal before the command runs waits (blocked) and goes to it once it does. */
    sigemptyset(&block);
    for (unsigned i = 0; i < sizeof run_signals / sizeof run_signals[0]; i++) sigaddset(&block, run_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < sizeof run_signals / sizeof run_signals[0]; i++) sigaction(run_signals[i], &sa, NULL);

    c = start_controller(&st.cfg, &st.cap, stderr, -1);
    if (!c) {
        start_free(&st);
        return EXIT_ERROR;
    }
    if (setenv("ETL_SESSION", name, 1) != 0 || (ch.pid = launch(o->command, &old, &exec_errno)) < 0) {
        fprintf(stderr, "etlrecord: cannot run %s: %s\n", o->command[0], strerror(errno));
        ch.status = 127 << 8; /* as a shell: the command could not be run */
        ch.ended = 1;
    }
    else if (exec_errno) {
        fprintf(stderr, "etlrecord: cannot run %s: %s\n", o->command[0], strerror(exec_errno));
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    wake_fd = ch.ended ? -1 : child_wake_fd(ch.pid);
    if (etl_controller_serve(c, child_ended, &ch, wake_fd)) {
        fprintf(stderr, "etlrecord: session %s was stopped by a request; waiting for %s to end\n", name,
                o->command[0]);
        while (!ch.ended)
            if (waitpid(ch.pid, &ch.status, 0) == ch.pid || errno != EINTR) ch.ended = 1;
    }
    else {
        run_stop(c, name, o->json);
    }
    if (wake_fd >= 0) close(wake_fd);
    etl_controller_close(c);
    start_free(&st);
    return command_status(ch.status);
}

static int cmd_flush(const struct options *o)
{
    char req[LINE_MAX_LEN], *path = NULL;
    int rc;

    if (o->output && !(path = absolute(o->output))) {
        fprintf(stderr, "etlrecord: %s: %s\n", o->output, strerror(errno));
        return EXIT_ERROR;
    }
    if (path && strchr(path, '\n')) {
        fprintf(stderr, "etlrecord: a snapshot's name may not hold a newline\n");
        free(path);
        return EXIT_ERROR;
    }
    if (path && tool_output_check("etlrecord", path, o->force) != 0) {
        free(path);
        return EXIT_ERROR;
    }
    snprintf(req, sizeof req, "flush%s%s", path ? " " : "", path ? path : "");
    free(path);
    rc = request(o, req, 0);
    return rc;
}

static int cmd_update(const struct options *o)
{
    char req[LINE_MAX_LEN], err[512];
    size_t n = (size_t)snprintf(req, sizeof req, "update");

    for (unsigned i = 0; i < o->nproviders; i++) {
        etl_provider_spec p;
        if (etl_provider_spec_parse(o->providers[i], &p, err, sizeof err) != ETL_OK || strchr(o->providers[i], ' ')) {
            fprintf(stderr, "etlrecord: %s\n", err);
            return EXIT_ERROR;
        }
        n += (size_t)snprintf(req + n, sizeof req - n, " provider %s", o->providers[i]);
    }
    if (o->has_flush_timer) n += (size_t)snprintf(req + n, sizeof req - n, " flush-timer %u", o->flush_timer_s);
    if (o->has_max_buffers) n += (size_t)snprintf(req + n, sizeof req - n, " max-buffers %u", o->max_buffers);
    if (n >= sizeof req) {
        fputs("etlrecord: update: too many providers at once\n", stderr);
        return EXIT_ERROR;
    }
    if (!o->nproviders && !o->has_flush_timer && !o->has_max_buffers) {
        fputs("etlrecord: update: nothing to change (--provider, --flush-timer, --max-buffers)\n", stderr);
        return EXIT_ERROR;
    }
    return request(o, req, 0);
}

struct list_state {
    int json;
    unsigned n;
};

static void list_one(void *arg, const char *name, long pid, int orphaned)
{
    struct list_state *st = arg;

    if (!st->json) {
        printf("%-24s %8ld %s\n", name, pid, orphaned ? "orphaned" : "running");
        return;
    }
    printf("%s{\"LoggerName\":", st->n++ ? "," : "");
    etl_dump_json_string(stdout, name);
    printf(",\"ControllerPid\":%ld,\"State\":\"%s\"}", pid, orphaned ? "orphaned" : "running");
}

static int cmd_list(const struct options *o)
{
    struct list_state st = { o->json, 0 };
    char err[1024];

    if (o->json) fputc('[', stdout);
    if (etl_session_name_list(list_one, &st, err, sizeof err) != ETL_OK) {
        if (o->json) fputs("]\n", stdout);
        fprintf(stderr, "etlrecord: %s\n", err);
        return EXIT_ERROR;
    }
    if (o->json) fputs("]\n", stdout);
    return 0;
}

/* ---- profiles ---- */

static void json_str(const char *key, const char *v, int comma)
{
    printf("%s\"%s\":", comma ? "," : "", key);
    if (v) etl_dump_json_string(stdout, v);
    else fputs("null", stdout);
}

/* One keyword or stack list: "Name(flags)" words, or JSON objects. */
static void print_keywords(const etl_wprp_keyword *k, size_t n, int json)
{
    char names[ETL_KERNEL_FLAGS_NAMES_SIZE];

    for (size_t i = 0; i < n; i++) {
        etl_kernel_flags_format(k[i].flags, names, sizeof names);
        if (json) {
            printf("%s{", i ? "," : "");
            json_str("Name", k[i].name, 0);
            json_str("KernelFlags", k[i].flags ? names : "", 1);
            fputc('}', stdout);
        } else {
            printf(" %s%s%s%s", k[i].name, k[i].flags ? "(" : "(unmapped", k[i].flags ? names : "", ")");
        }
    }
}

static void print_profile(const etl_wprp_profile *p, int json, int comma)
{
    char names[ETL_KERNEL_FLAGS_NAMES_SIZE], guid[ETL_GUID_STRING_SIZE];

    if (json) {
        printf("%s{", comma ? "," : "");
        json_str("Id", p->id, 0);
        json_str("Name", p->name, 1);
        json_str("DetailLevel", p->detail_level, 1);
        json_str("LoggingMode", p->logging_mode, 1);
        json_str("Description", p->description, 1);
        json_str("Unavailable", p->unavailable, 1);
        fputs(",\"Collectors\":[", stdout);
    } else {
        printf("%s: %s, %s, %s mode%s%s\n", p->id, p->name, p->detail_level, p->logging_mode,
               p->description && *p->description ? ": " : "", p->description ? p->description : "");
        if (p->unavailable) printf("  unavailable: %s\n", p->unavailable);
    }
    for (size_t i = 0; i < p->collector_count; i++) {
        const etl_wprp_collector *c = &p->collectors[i];
        int sys = c->kind == ETL_WPRP_SYSTEM_COLLECTOR;
        if (json) {
            printf("%s{", i ? "," : "");
            json_str("Kind", sys ? "system" : "event", 0);
            json_str("Id", c->id, 1);
            json_str("Name", c->name, 1);
            json_str("FileName", c->file_name, 1);
            printf(",\"BufferSizeKB\":%u,\"Buffers\":%u,\"BuffersPercentOfMemory\":%s", c->buffer_size_kb, c->buffers,
                   c->buffers_percent ? "true" : "false");
            if (sys) {
                json_str("KernelFlags", etl_kernel_flags_format(c->kernel_flags, names, sizeof names), 1);
                json_str("StackWalk", etl_kernel_flags_format(c->stackwalk_flags, names, sizeof names), 1);
                fputs(",\"Keywords\":[", stdout);
                print_keywords(c->keywords, c->keyword_count, 1);
                fputs("],\"Stacks\":[", stdout);
                print_keywords(c->stacks, c->stack_count, 1);
                fputc(']', stdout);
            } else {
                fputs(",\"Providers\":[", stdout);
                for (size_t k = 0; k < c->provider_count; k++) {
                    const etl_wprp_provider *pv = &c->providers[k];
                    printf("%s{", k ? "," : "");
                    json_str("Id", pv->id, 0);
                    json_str("Name", pv->name, 1);
                    json_str("Guid", pv->has_guid ? etl_guid_format(&pv->guid, guid) : NULL, 1);
                    printf(",\"Level\":%u,\"Keywords\":\"0x%llx\",\"Stack\":%s}", pv->level, (unsigned long long)pv->keywords,
                           pv->stack ? "true" : "false");
                }
                fputc(']', stdout);
            }
            fputc('}', stdout);
            continue;
        }
        printf("  %s collector %s \"%s\": buffers %u KB %s %u%s%s%s\n", sys ? "system" : "event", c->id, c->name,
               c->buffer_size_kb, c->buffers_percent ? "up to" : "x", c->buffers, c->buffers_percent ? "% of memory" : "",
               c->file_name ? ", file " : "",
               c->file_name ? c->file_name : "");
        if (sys) {
            printf("    kernel flags: %s\n", c->kernel_flags ? etl_kernel_flags_format(c->kernel_flags, names, sizeof names) : "(none)");
            fputs("    keywords:", stdout);
            print_keywords(c->keywords, c->keyword_count, 0);
            printf("\n    stack walks: %s\n",
                   c->stackwalk_flags ? etl_kernel_flags_format(c->stackwalk_flags, names, sizeof names) : "(none)");
            if (c->stack_count) {
                fputs("    stacks:", stdout);
                print_keywords(c->stacks, c->stack_count, 0);
                fputc('\n', stdout);
            }
        }
        for (size_t k = 0; k < c->provider_count; k++) {
            const etl_wprp_provider *pv = &c->providers[k];
            printf("    provider %s: guid %s, level %u, keywords 0x%llx%s\n", pv->name,
                   pv->has_guid ? etl_guid_format(&pv->guid, guid) : "(unknown)", pv->level,
                   (unsigned long long)pv->keywords, pv->stack ? ", stack" : "");
        }
    }
    if (json) {
        fputs("],\"Unmapped\":[", stdout);
        for (size_t i = 0; i < p->unmapped_count; i++) {
            if (i) fputc(',', stdout);
            etl_dump_json_string(stdout, p->unmapped[i]);
        }
        fputs("]}", stdout);
    } else {
        for (size_t i = 0; i < p->unmapped_count; i++) printf("  unmapped: %s\n", p->unmapped[i]);
    }
}

static int cmd_profiles(const struct options *o)
{
    etl_wprp *w = NULL;
    char err[1024], path[4096];
    const char *pick = NULL;
    const etl_wprp_profile *one = NULL;
    int rc;

    if (o->file) {
        const char *bang = strrchr(o->file, '!');
        snprintf(path, sizeof path, "%s", o->file);
        /* FILE!PROFILE, unless a file of that whole name exists. */
        if (bang && access(o->file, F_OK) != 0 && (size_t)(bang - o->file) < sizeof path) {
            path[bang - o->file] = '\0';
            pick = bang + 1;
        }
        rc = etl_wprp_open(&w, path, err, sizeof err);
    } else {
        rc = etl_wprp_builtin(&w, err, sizeof err);
    }
    if (rc != ETL_OK) {
        fprintf(stderr, "etlrecord: %s\n", err);
        return EXIT_ERROR;
    }
    if (pick && !(one = etl_wprp_find(w, pick, NULL)) && !(one = etl_wprp_find(w, pick, "Memory"))) {
        fprintf(stderr, "etlrecord: %s: no profile '%s'\n", path, pick);
        etl_wprp_free(w);
        return EXIT_ERROR;
    }
    if (o->json) fputc('[', stdout);
    for (size_t i = 0, n = 0; i < etl_wprp_profile_count(w); i++) {
        const etl_wprp_profile *p = etl_wprp_profile_at(w, i);
        if (one && p != one) continue;
        for (size_t k = 0; k < p->unmapped_count; k++) fprintf(stderr, "etlrecord: warning: %s: %s\n", p->id, p->unmapped[k]);
        print_profile(p, o->json, n++ > 0);
    }
    if (o->json) fputs("]\n", stdout);
    etl_wprp_free(w);
    return 0;
}

/* ---- recordings of profiles (in the manner of wpr -start, -stop, -cancel, -status) ---- */

/* The recording's logic (its state, its collectors' controllers, stop, merge, cancel) is the
   library's (etl/recording.h); here are its options, what it says and the exit status. */

/* Each line of a message of the library, said. */
static void say_lines(const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        fprintf(stderr, "etlrecord: %.*s\n", (int)n, text);
        text += n + (text[n] == '\n');
    }
}

static void recording_message(void *arg, const char *text)
{
    (void)arg;
    say_lines(text);
}

/* The launcher of a collector's controller: a controller in the background, as start's. */
static int recording_launch(void *arg, etl_recording_controller *ctl)
{
    (void)arg;
    return spawn_controller(&ctl->cfg, &ctl->cap);
}

static int cmd_profile_start(const struct options *o)
{
    const char *instance = o->instance ? o->instance : ETL_RECORDING_DEFAULT_INSTANCE;
    const char *mode = o->mode ? o->mode : "file";
    etl_recording_callbacks cb = { .message = recording_message, .launch = recording_launch };
    const etl_wprp_profile *p;
    char err[4096];
    etl_wprp *w;
    int rc;

    if (strcmp(mode, "file") != 0 && strcmp(mode, "memory") != 0) {
        fprintf(stderr, "etlrecord: --mode: '%s': a profile records in file or memory mode\n", mode);
        return EXIT_ERROR;
    }
    if (etl_recording_profiles_resolve(&w, (const char *const *)o->profiles, o->nprofiles,
                                       strcmp(mode, "file") == 0 ? "File" : "Memory", err, sizeof err) != ETL_OK) {
        say_lines(err);
        return EXIT_ERROR;
    }
    p = etl_wprp_profile_at(w, 0);
    for (size_t k = 0; k < p->unmapped_count; k++) fprintf(stderr, "etlrecord: warning: %s: %s\n", p->id, p->unmapped[k]);
    rc = etl_recording_start(instance, p, mode, &cb, err, sizeof err);
    if (rc != ETL_OK) say_lines(err);
    etl_wprp_free(w);
    return rc == ETL_OK ? 0 : EXIT_ERROR;
}

/* The recording of --instance, opened: 0, or EXIT_ERROR (said: none, or unreadable). */
static int recording_find(const struct options *o, etl_recording **r)
{
    const char *instance = o->instance ? o->instance : ETL_RECORDING_DEFAULT_INSTANCE;
    char err[4096];
    int found;

    if (etl_recording_open(r, instance, &found, err, sizeof err) != ETL_OK) {
        say_lines(err);
        return EXIT_ERROR;
    }
    if (found == ETL_RECORDING_NONE)
        fprintf(stderr, "etlrecord: no recording %s (etlrecord start --profile PROFILE%s%s)\n", instance,
                o->instance ? " --instance " : "", o->instance ? instance : "");
    if (found == ETL_RECORDING_UNFINISHED)
        fprintf(stderr, "etlrecord: recording %s: %s is there without its state (a start that did not finish); "
                "'etlrecord cancel --profile%s%s' removes it\n", instance, etl_recording_dir(*r),
                o->instance ? " --instance " : "", o->instance ? instance : "");
    if (found == ETL_RECORDING_FOUND) return 0;
    etl_recording_close(*r);
    *r = NULL;
    return EXIT_ERROR;
}

struct merge_said {
    int damage;
};

static void merge_message(void *arg, const etl_merge_message *m)
{
    struct merge_said *said = arg;

    said->damage |= m->damage;
    fprintf(stderr, "etlrecord: %s%s", m->damage ? "" : "note: ", m->path ? m->path : "");
    if (m->offset >= 0) fprintf(stderr, ": offset %lld", (long long)m->offset);
    fprintf(stderr, "%s%s\n", m->path ? ": " : "", m->text);
}

/* Each session's answer: text blocks apart by a blank line, or a JSON array (opened and closed
   by the caller). */
static void print_session(const etl_control_answer *a, int json, unsigned index)
{
    if (json && index) fputc(',', stdout);
    if (!json && index) fputc('\n', stdout);
    print_answer(stdout, a, json);
}

/* What the stop's answers said, for the exit status. */
struct stop_said {
    int json, failed, status;
    unsigned shown;
};

static void stop_answer(void *arg, const char *name, const etl_control_answer *a)
{
    struct stop_said *s = arg;
    int rc;

    print_session(a, s->json, s->shown++);
    rc = answer_status(name, a, 1);
    if (rc == EXIT_ERROR) s->failed = 1;
    else if (rc == EXIT_LOST) s->status = EXIT_LOST;
}

static int cmd_profile_stop(const struct options *o)
{
    struct stop_said said = { .json = o->json };
    etl_recording_callbacks cb = { .message = recording_message, .answer = stop_answer, .arg = &said };
    struct merge_said merged = { 0 };
    etl_merge_options mo;
    etl_recording *r;
    char err[4096];

    if (!o->output) {
        fputs("etlrecord: stop --profile needs -o OUT.etl, the merged file\nTry 'etlrecord --help'.\n", stderr);
        return EXIT_ERROR;
    }
    if (tool_output_check("etlrecord", o->output, o->force) != 0) return EXIT_ERROR;
    if (recording_find(o, &r) != 0) return EXIT_ERROR;
    if (o->json) fputc('[', stdout);
    if (etl_recording_stop(r, &cb) != ETL_OK) said.failed = 1;
    if (o->json) fputs("]\n", stdout);
    fflush(stdout);
    tool_catch_signals();
    memset(&mo, 0, sizeof mo);
    mo.on_message = merge_message;
    mo.on_message_arg = &merged;
    mo.cancel = &tool_interrupted;
    if (etl_recording_merge(r, o->output, &mo, &cb, err, sizeof err) != ETL_OK) {
        say_lines(err);
        said.failed = 1;
    }
    if (said.failed) {
        fprintf(stderr, "etlrecord: recording %s: the recorded files are kept in %s\n", etl_recording_instance(r),
                etl_recording_log_dir(r));
        etl_recording_close(r);
        return EXIT_ERROR;
    }
    etl_recording_remove(r, &cb);
    etl_recording_close(r);
    return said.status;
}

static int cmd_cancel(const struct options *o)
{
    etl_recording_callbacks cb = { .message = recording_message };
    etl_recording *r;
    char err[4096];
    int found;

    if (!o->profile_flag) {
        fputs("etlrecord: cancel needs --profile (it cancels a profile's recording)\nTry 'etlrecord --help'.\n", stderr);
        return EXIT_ERROR;
    }
    /* A directory without its state: a start that ended before any session started. */
    if (etl_recording_open(&r, o->instance ? o->instance : ETL_RECORDING_DEFAULT_INSTANCE, &found, err, sizeof err) ==
            ETL_OK &&
        found == ETL_RECORDING_UNFINISHED) {
        etl_recording_remove(r, &cb);
        etl_recording_close(r);
        return 0;
    }
    etl_recording_close(r);
    if (recording_find(o, &r) != 0) return EXIT_ERROR;
    etl_recording_cancel(r, &cb);
    etl_recording_close(r);
    return 0;
}

struct query_said {
    const etl_recording *r;
    int json, status;
};

static void query_each(void *arg, unsigned i, int rc, const etl_control_answer *a)
{
    struct query_said *q = arg;
    const char *name = etl_recording_session(q->r, i);

    if (rc == ETL_FATAL || !a) {
        fprintf(stderr, "etlrecord: %s\n", a ? etl_control_answer_error(a) : "out of memory");
        if (q->json) {
            fputs(i ? ",{\"LoggerName\":" : "{\"LoggerName\":", stdout);
            etl_dump_json_string(stdout, name);
            fputs(",\"Error\":", stdout);
            etl_dump_json_string(stdout, a ? etl_control_answer_error(a) : "out of memory");
            fputs("}\n", stdout);
        } else {
            printf("\n%-20s %s\n%-20s %s\n", "LoggerName", name, "Error", a ? etl_control_answer_error(a) : "");
        }
        q->status = EXIT_ERROR;
    } else {
        if (!q->json) fputc('\n', stdout);
        print_session(a, q->json, q->json ? i : 0);
        if (answer_status(name, a, 0) != 0) q->status = EXIT_ERROR;
    }
}

static int cmd_profile_query(const struct options *o)
{
    const char *instance = o->instance ? o->instance : ETL_RECORDING_DEFAULT_INSTANCE;
    struct query_said q = { .json = o->json };
    etl_recording *r;

    if (recording_find(o, &r) != 0) return EXIT_ERROR;
    q.r = r;
    if (o->json) {
        fputs("{\"Instance\":", stdout);
        etl_dump_json_string(stdout, instance);
        fputs(",\"Profile\":", stdout);
        etl_dump_json_string(stdout, etl_recording_profile(r));
        printf(",\"Mode\":\"%s\",\"Directory\":", etl_recording_mode(r));
        etl_dump_json_string(stdout, etl_recording_dir(r));
        fputs(",\"LogDirectory\":", stdout);
        etl_dump_json_string(stdout, etl_recording_log_dir(r));
        printf(",\"Stopped\":%s,\"Sessions\":[", etl_recording_stopped(r) ? "true" : "false");
    } else {
        printf("Recording %s: profile %s, %s mode, in %s%s\n", instance, etl_recording_profile(r),
               etl_recording_mode(r), etl_recording_dir(r), etl_recording_stopped(r) ? " (stopped, not merged)" : "");
    }
    etl_recording_query(r, query_each, &q);
    if (o->json) fputs("]}\n", stdout);
    etl_recording_close(r);
    return q.status;
}

/* ---- the command line ---- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What each command takes: its arguments after the options, and which options. */
enum { ARGS_NONE, ARGS_NAME, ARGS_COMMAND, ARGS_FILE };

struct command {
    const char *name;
    int args;            /* ARGS_NAME: a session name; ARGS_COMMAND: a command and its arguments */
    const char *options; /* the long options it takes, space-separated */
    int (*run)(const struct options *);
};

static int cmd_stop(const struct options *o)
{
    if (o->profile_flag) return cmd_profile_stop(o);
    if (o->output) return usage_error("stop takes -o only with --profile (the merged file of a recording)");
    return request(o, "stop", 1);
}

static int cmd_query(const struct options *o)
{
    return o->profile_flag ? cmd_profile_query(o) : request(o, "query", 1);
}

static const struct command commands[] = {
    { "start", ARGS_NAME,
      " output force mode buffer-size min-buffers max-buffers max-file-size flush-timer clock provider stackwalk "
      "kernel profile-interval lbr lbr-filter direct-io profile instance append preallocate kbytes "
      "no-per-processor-buffering ", cmd_start },
    { "run", ARGS_COMMAND,
      " output force mode buffer-size min-buffers max-buffers max-file-size flush-timer clock provider stackwalk "
      "kernel profile-interval name json lbr lbr-filter direct-io append preallocate kbytes no-per-processor-buffering ",
      cmd_run },
    { "stop", ARGS_NAME, " json profile instance output force ", cmd_stop },
    { "query", ARGS_NAME, " json profile instance ", cmd_query },
    { "cancel", ARGS_NONE, " profile instance ", cmd_cancel },
    { "flush", ARGS_NAME, " output force ", cmd_flush },
    { "update", ARGS_NAME, " provider flush-timer max-buffers ", cmd_update },
    { "list", ARGS_NONE, " json ", cmd_list },
    { "profiles", ARGS_FILE, " json ", cmd_profiles },
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("etlrecord: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'etlrecord --help'.\n", stderr);
    return EXIT_ERROR;
}

/* FLAGS of --kernel or EVENTS of --stackwalk into *out: 0, or -1 (printed) for an unknown
   name or, for stack walks, an event that has none. */
static int parse_kernel_names(const char *option, const char *list, uint32_t allowed, uint32_t *out)
{
    char buf[256], *save = NULL;

    *out = 0;
    if (strlen(list) >= sizeof buf || !*list) {
        usage_error("--%s: '%.40s' is not a list of kernel events", option, list);
        return -1;
    }
    strcpy(buf, list);
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        uint32_t f = etl_kernel_flag_from_name(name);
        char names[ETL_KERNEL_FLAGS_NAMES_SIZE];
        if (!f || !(f & allowed)) {
            usage_error("--%s: %s '%s' (%s)", option, f ? "no stack walks for" : "unknown kernel event", name,
                        etl_kernel_flags_format(allowed, names, sizeof names));
            return -1;
        }
        *out |= f;
    }
    return 0;
}

/* Whether word is a list of kernel event names ("profile", "cswitch,profile"), as --stackwalk's
   EVENTS: "--stackwalk profile" without --kernel is refused rather than read as the command or
   the session's name that 'profile' would otherwise be. */
static int kernel_names(const char *word)
{
    char buf[256], *save = NULL;
    int n = 0;

    if (strlen(word) >= sizeof buf) return 0;
    strcpy(buf, word);
    for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save), n++)
        if (!etl_kernel_flag_from_name(name)) return 0;
    return n > 0;
}

/* Checks and parses --kernel, --stackwalk=EVENTS and --profile-interval: 0, or -1 (printed). */
static int kernel_options(struct options *o)
{
    if (o->stackwalk_events && !o->kernel) {
        usage_error("--stackwalk=%s: stack walks of kernel events need --kernel; --stackwalk alone gives the "
                    "providers' events their stacks", o->stackwalk_events);
        return -1;
    }
    if (o->profile_interval_us && !o->kernel) {
        usage_error("--profile-interval needs --kernel with profile");
        return -1;
    }
    if (!o->kernel) return 0;
    if (parse_kernel_names("kernel", o->kernel, ETL_KERNEL_ALL, &o->kernel_flags) != 0) return -1;
    if (o->nproviders) {
        usage_error("a kernel session (--kernel) takes no --provider, as the NT Kernel Logger");
        return -1;
    }
    if (o->stackwalk && !o->stackwalk_events) {
        usage_error("with --kernel, --stackwalk needs EVENTS (profile, cswitch, dispatcher)");
        return -1;
    }
    if (o->stackwalk_events &&
        parse_kernel_names("stackwalk", o->stackwalk_events, ETL_KERNEL_STACKWALK_ALL, &o->kernel_stackwalk) != 0)
        return -1;
    if (o->kernel_stackwalk & ~o->kernel_flags) {
        char names[ETL_KERNEL_FLAGS_NAMES_SIZE];
        usage_error("--stackwalk: %s not in --kernel %s",
                    etl_kernel_flags_format(o->kernel_stackwalk & ~o->kernel_flags, names, sizeof names), o->kernel);
        return -1;
    }
    if (o->profile_interval_us && !(o->kernel_flags & ETL_KERNEL_PROFILE)) {
        usage_error("--profile-interval needs profile in --kernel");
        return -1;
    }
    if (o->profile_interval_us && o->profile_interval_us < 10) {
        usage_error("--profile-interval: %u is below 10 microseconds", o->profile_interval_us);
        return -1;
    }
    return 0;
}

/* With --profile, start takes only --mode and --instance; --instance goes with --profile. 0, or
   -1 (said). */
static int profile_options(const struct command *cmd, const struct options *o)
{
    if (o->instance && !o->profile_flag) {
        usage_error("--instance goes with --profile (the recording of profiles it names)");
        return -1;
    }
    if (!o->profile_flag || strcmp(cmd->name, "start") != 0) return 0;
    if (o->output || o->force || o->kernel || o->nproviders || o->stackwalk || o->lbr || o->lbr_filter || o->clock ||
        o->buffer_size_kb || o->min_buffers || o->has_max_buffers || o->max_file_size_mb || o->has_flush_timer ||
        o->direct_io || o->profile_interval_us) {
        usage_error("start --profile takes only --mode (file or memory) and --instance: the profiles say the rest");
        return -1;
    }
    return 0;
}

/* Parses the command line into o (whose providers array the caller owns) and runs the command. */
static int command_line(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },           { "mode", required_argument, NULL, OPT_MODE },
        { "buffer-size", required_argument, NULL, OPT_BUFSIZE }, { "min-buffers", required_argument, NULL, OPT_MINBUF },
        { "max-buffers", required_argument, NULL, OPT_MAXBUF }, { "max-file-size", required_argument, NULL, OPT_MAXFILE },
        { "flush-timer", required_argument, NULL, OPT_FLUSH },  { "clock", required_argument, NULL, OPT_CLOCK },
        { "provider", required_argument, NULL, OPT_PROVIDER },  { "json", no_argument, NULL, OPT_JSON },
        { "stackwalk", optional_argument, NULL, OPT_STACKWALK },      { "name", required_argument, NULL, OPT_NAME },
        { "kernel", required_argument, NULL, OPT_KERNEL },      { "profile-interval", required_argument, NULL, OPT_PROFILE },
        { "help", no_argument, NULL, 'h' },                     { "version", no_argument, NULL, 'V' },
        { "direct-io", no_argument, NULL, OPT_DIRECT },      { "force", no_argument, NULL, 'f' },
        { "lbr", required_argument, NULL, OPT_LBR },            { "lbr-filter", required_argument, NULL, OPT_LBR_FILTER },
        { "profile", optional_argument, NULL, OPT_WPR_PROFILE }, { "instance", required_argument, NULL, OPT_INSTANCE },
        { "append", no_argument, NULL, OPT_APPEND },            { "preallocate", no_argument, NULL, OPT_PREALLOCATE },
        { "kbytes", no_argument, NULL, OPT_KBYTES },
        { "no-per-processor-buffering", no_argument, NULL, OPT_NO_PER_CPU },
        { NULL, 0, NULL, 0 },
    };
    const struct command *cmd = NULL;
    int c, idx, kernel = 0;

    if (argc > 1 && argv[1][0] != '-') {
        for (unsigned i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[1], commands[i].name) == 0) cmd = &commands[i];
        if (!cmd) return usage_error("unknown command '%s'", argv[1]);
        optind = 2;
    }
    /* With --kernel, --stackwalk takes the kernel events as its next argument too. */
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strncmp(argv[i], "--kernel", 8) == 0 && (argv[i][8] == '\0' || argv[i][8] == '=')) kernel = 1;
    /* run's options end at its command's name ("+"): what follows is the command's. */
    while ((c = tool_getopt_long("etlrecord", argc, argv, cmd && cmd->args == ARGS_COMMAND ? "+o:fhV" : "o:fhV",
                                 longopts, &idx)) != -1) {
        const char *lname = NULL;
        uint32_t *num = NULL, max = UINT32_MAX;
        switch (c) {
        case 'h': fputs(usage_text, stdout); return 0;
        case 'V': printf("etlrecord %s (%s)\n", etl_version(), etl_version_details()); return 0;
        case 'o': o->output = optarg; lname = "output"; break;
        case 'f': o->force = 1; lname = "force"; break;
        case OPT_MODE: o->mode = optarg; break;
        case OPT_CLOCK: o->clock = optarg; break;
        case OPT_BUFSIZE: num = &o->buffer_size_kb; max = 16384; break;
        case OPT_MINBUF: num = &o->min_buffers; break;
        case OPT_MAXBUF: num = &o->max_buffers; o->has_max_buffers = 1; break;
        case OPT_MAXFILE: num = &o->max_file_size_mb; break;
        case OPT_FLUSH: num = &o->flush_timer_s; o->has_flush_timer = 1; break;
        case OPT_PROVIDER: o->providers[o->nproviders++] = optarg; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_DIRECT: o->direct_io = 1; break;
        case OPT_APPEND: o->append = 1; break;
        case OPT_PREALLOCATE: o->preallocate = 1; break;
        case OPT_KBYTES: o->kbytes = 1; break;
        case OPT_NO_PER_CPU: o->no_per_cpu = 1; break;
        case OPT_STACKWALK:
            o->stackwalk = 1;
            o->stackwalk_events = optarg;
            if (!optarg && optind < argc && argv[optind][0] != '-') {
                if (kernel) o->stackwalk_events = argv[optind++];
                else if (cmd && kernel_names(argv[optind]))
                    return usage_error("--stackwalk %s: write --stackwalk=%s (stack walks of kernel events, with "
                                       "--kernel); here '%s' would be taken for the %s", argv[optind], argv[optind],
                                       argv[optind], cmd->args == ARGS_COMMAND ? "command" : "session's name");
            }
            break;
        case OPT_KERNEL: o->kernel = optarg; break;
        case OPT_PROFILE: num = &o->profile_interval_us; max = 1000000; break;
        case OPT_NAME: o->name = optarg; break;
        case OPT_LBR: o->lbr = optarg; break;
        case OPT_LBR_FILTER: o->lbr_filter = optarg; break;
        case OPT_INSTANCE: o->instance = optarg; break;
        case OPT_WPR_PROFILE:
            /* start: --profile PROFILE (repeated); stop, query, cancel: --profile alone. */
            o->profile_flag = 1;
            if (cmd && strcmp(cmd->name, "start") == 0) {
                if (!optarg && optind < argc && argv[optind][0] != '-') optarg = argv[optind++];
                if (!optarg) return usage_error("start --profile needs a PROFILE (a built-in profile's name, or "
                                                "FILE.wprp[!PROFILE])");
                o->profiles[o->nprofiles++] = optarg;
            } else if (optarg) {
                return usage_error("--profile=%s: only start takes a PROFILE; %s --profile acts on the recording of "
                                   "--instance", optarg, cmd ? cmd->name : "stop");
            }
            break;
        default: fputs("Try 'etlrecord --help'.\n", stderr); return EXIT_ERROR;
        }
        for (const struct option *l = longopts; !lname && l->name; l++)
            if (l->val == c) lname = l->name;
        if (!cmd) return usage_error("no command (start, run, stop, query, cancel, flush, update, list, profiles) before --%s", lname);
        char pat[40];
        snprintf(pat, sizeof pat, " %s ", lname);
        if (!strstr(cmd->options, pat)) {
            fprintf(stderr, "etlrecord: %s takes no --%s\nTry 'etlrecord --help'.\n", cmd->name, lname);
            return EXIT_ERROR;
        }
        if (num && tool_parse_u32(optarg, max, num) != 0) {
            fprintf(stderr, "etlrecord: --%s: '%s' is not a number from 0 to %lu\n", lname, optarg,
                    (unsigned long)max);
            return EXIT_ERROR;
        }
    }
    if (!cmd) return usage_error("%s", "no command (start, run, stop, query, cancel, flush, update, list, profiles)");
    if (profile_options(cmd, o) != 0) return EXIT_ERROR;
    if (o->lbr_filter && !o->lbr) return usage_error("--lbr-filter goes with --lbr TRIGGER[,TRIGGER...]");
    if (kernel_options(o) != 0) return EXIT_ERROR;
    if (o->append && o->force) return usage_error("--append and --force exclude each other");
    if (o->no_per_cpu && !o->kernel)
        return usage_error("--no-per-processor-buffering needs --kernel: providers of other processes write only "
                           "into per-processor buffers");
    if (cmd->args == ARGS_NAME && !o->profile_flag) {
        if (optind >= argc) return usage_error("%s needs a session name", cmd->name);
        o->name = argv[optind++];
    }
    if (cmd->args == ARGS_COMMAND) {
        if (optind >= argc) return usage_error("run needs a command: etlrecord run -o FILE -- COMMAND [ARG]...");
        o->command = argv + optind;
    }
    else if (cmd->args == ARGS_FILE && optind < argc) o->file = argv[optind++];
    if (cmd->args != ARGS_COMMAND && optind < argc) return usage_error("unexpected argument '%s'", argv[optind]);
    if (o->name) {
        char key[ETL_SESSION_NAME_MAX + 1];
        if (etl_session_name_key(o->name, key) != ETL_OK)
            return usage_error("'%s' is not a session name (1 to 200 bytes, no '/' or control characters)", o->name);
    }
    signal(SIGPIPE, SIG_IGN);
    return cmd->run(o);
}

int main(int argc, char **argv)
{
    struct options o;
    int rc;

    memset(&o, 0, sizeof o);
    o.providers = calloc((size_t)argc, sizeof *o.providers);
    o.profiles = calloc((size_t)argc, sizeof *o.profiles);
    if (!o.providers || !o.profiles) {
        free(o.providers);
        free(o.profiles);
        return EXIT_ERROR;
    }
    rc = command_line(argc, argv, &o);
    free(o.providers);
    free(o.profiles);
    return rc;
}
