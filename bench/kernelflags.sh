#!/bin/sh
# SPDX-License-Identifier: MIT
# kernelflags.sh: what recording a kernel flag costs its workload, next to perf record of the
# same Linux events (perf record -B: no build-ids collected at its end, as etlrecord collects
# none for these flags): for each flag, ROUNDS rounds of the workload alone, under etlrecord run
# --kernel FLAGS and under perf record -a -e EVENTS (alternating), each timed with
# /usr/bin/time (wall and user+system processor time of the whole command: the recorder and the
# workload), and the medians and ratios printed, with the file sizes. Needs root and perf(1).
#   bench/kernelflags.sh BUILDDIR [ROUNDS] [FLAG...]      (flags: names, interrupt, faults, net, fileio, vmem, counters, hardfaults, cswitch)
set -u
build=${1:?usage: kernelflags.sh BUILDDIR [ROUNDS] [FLAG...]}
rounds=${2:-5}
shift
[ $# -gt 0 ] && shift
flags=${*:-names interrupt faults net fileio vmem counters hardfaults}
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
    echo "SKIP: needs root, perf(1) and /usr/bin/time"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernelflags.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
ETL_RUNTIME_DIR="$tmp/run"
export ETL_RUNTIME_DIR
mkdir -m 0700 "$ETL_RUNTIME_DIR"

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# one NAME COMMAND...: runs it once, appends "wall cpu" to $tmp/NAME
one() {
    n=$1
    shift
    /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" >/dev/null 2>&1
    awk '{ print $1, $2 + $3 }' "$tmp/t" >>"$tmp/$n"
}
report() { # FLAG: the medians of its three cases
    for c in none etl perf; do
        w=$(cut -d' ' -f1 "$tmp/$1.$c" | median)
        p=$(cut -d' ' -f2 "$tmp/$1.$c" | median)
        eval "w_$c=$w p_$c=$p"
    done
    printf '%-10s %-22s %9s %9s\n' "$1" "" "wall s" "cpu s"
    printf '%-10s %-22s %9s %9s\n' "" "workload alone" "$w_none" "$p_none"
    printf '%-10s %-22s %9s %9s   file %s bytes\n' "" "etlrecord --kernel" "$w_etl" "$p_etl" "$(stat -c %s "$tmp/$1.out.etl")"
    printf '%-10s %-22s %9s %9s   file %s bytes\n' "" "perf record" "$w_perf" "$p_perf" "$(stat -c %s "$tmp/$1.out.data")"
    awk -v a="$p_etl" -v b="$p_perf" -v z="$p_none" 'BEGIN { printf "           processor time over the workload alone: etlrecord +%.3f s, perf +%.3f s; etlrecord/perf (whole runs) %.2f\n", a - z, b - z, a / b }'
}

knames=$build/tests/knames
kdiskio=$build/tests/kdiskio
etlrecord=$build/tools/etlrecord
for f in $flags; do
    case $f in
    names) # threads started and renamed: Thread Start/End and SetName against perf's task and comm records
        kflags=process,thread
        events=dummy
        set -- sh -c "i=0; while [ \$i -lt 200 ]; do $knames 0; i=\$((i + 1)); done" ;;
    interrupt) # the disk's interrupts and the softirqs: ISR and DPC against the irq tracepoints
        kflags=interrupt,dpc
        events=irq:irq_handler_entry,irq:irq_handler_exit,irq:softirq_entry,irq:softirq_exit
        set -- "$kdiskio" "$build" 64 ;;
    faults) # 4096 anonymous pages touched and 4096 file pages read after dropping them: every
        # minor and major fault, against perf's same software events, each sampled (-c 1), with
        # the tracepoints that tell a minor fault's kind (x86: each fault's entry, the file pages
        # faulted on and mapped)
        kflags=memory_page_faults
        events="-e minor-faults,major-faults -c 1"
        if [ -e /sys/kernel/tracing/events/exceptions/page_fault_user ]; then
            events="$events -e exceptions:page_fault_user,exceptions:page_fault_kernel"
            events="$events,filemap:mm_filemap_fault,filemap:mm_filemap_map_pages"
        fi
        set -- "$build/tests/kfaults" "$build" 4096 ;;
    net) # 2000 TCP connections over loopback (half IPv6) of 4 KiB each way and 4000 datagrams
        # (each family: 1000 from an unconnected socket, 1000 from a connected one): TcpIp and
        # UdpIp (their ends from BPF programs) against the same four tracepoints with the same filters
        kflags=network_tcpip
        events="-e sock:sock_send_length --filter (family==2||family==10)&&ret>0 -e sock:sock_recv_length --filter (family==2||family==10)&&ret>0 -e sock:inet_sock_set_state --filter protocol==6 -e tcp:tcp_retransmit_skb"
        set -- "$build/tests/knet" 1000 4096 4096 1000 256 ;;
    fileio) # tests/kfileio: 200 files created, 20 MB written in 1000-byte writes and read back
        # in 512-byte reads, renamed and deleted: file_io, file_io_init and disk_file_io (BPF
        # programs on the file system calls) against perf recording the same calls' syscalls
        # tracepoints (their entries and exits: descriptors, no files nor paths)
        kflags=file_io,file_io_init,disk_file_io
        events=""
        for c in openat close read write fsync newfstatat rename unlink; do
            events="$events${events:+,}syscalls:sys_enter_$c,syscalls:sys_exit_$c"
        done
        set -- sh -c "rm -rf $tmp/fio && mkdir $tmp/fio && $build/tests/kfileio $tmp/fio 200" ;;
    vmem) # tests/kvmem: 2049 anonymous mappings, 2048 views of a file, 2048 growths of the
        # break: VirtualAlloc/VirtualFree and MapFile/UnmapFile against the syscalls
        # tracepoints of mmap, munmap, mremap and brk (their entries and returns)
        kflags=virtual_alloc,vamap
        events=
        for c in mmap munmap mremap brk; do events=$events${events:+,}syscalls:sys_enter_$c,syscalls:sys_exit_$c; done
        set -- "$build/tests/kvmem" "$tmp" 2048 37 ;;
    counters) # 200 runs of tests/kpeak 4 (4 MiB touched, then an exit): PerfCtr at each end
        # (taskstats) and Process Start/End, against perf's sched_process_exit tracepoint and its
        # task records (perf has no event with a process's memory counters)
        kflags=process,process_counters
        events=sched:sched_process_exit
        set -- sh -c "i=0; while [ \$i -lt 200 ]; do $build/tests/kpeak 4 >/dev/null; i=\$((i + 1)); done" ;;
    hardfaults) # tests/khardfault: 4096 pages of a file dropped from the page cache, read one
        # page a fault (MADV_RANDOM): HardFault (the file, offset, bytes and start of each major
        # fault of a file page) against perf recording what it is made of: the filemap
        # tracepoints of each file fault and page added, and the major faults
        kflags=memory_hard_faults
        events="filemap:mm_filemap_fault,filemap:mm_filemap_add_to_page_cache,major-faults -c 1"
        set -- "$build/tests/khardfault" "$build" 4096 1 random ;;
    cswitch) # perf bench sched pipe: 100 000 round trips of two processes over pipes, a context
        # switch each way: CSwitch (with NewThreadWaitTime: a switch to a thread whose switch out
        # another reader has not handled yet waits for it) and ReadyThread against the same two
        # tracepoints
        kflags=process,thread,cswitch,dispatcher
        events=sched:sched_switch,sched:sched_wakeup
        set -- perf bench sched pipe -l 100000 ;;
    *) echo "unknown flag $f"; exit 2 ;;
    esac
    r=0
    while [ "$r" -lt "$rounds" ]; do
        one "$f.none" "$@"
        one "$f.etl" "$etlrecord" run -f --kernel "$kflags" -o "$tmp/$f.out.etl" -- "$@"
        # shellcheck disable=SC2086 (events may carry perf options)
        case $events in
        -e*) one "$f.perf" perf record -q -B -a $events -o "$tmp/$f.out.data" -- "$@" ;;
        *) one "$f.perf" perf record -q -B -a -e $events -o "$tmp/$f.out.data" -- "$@" ;;
        esac
        r=$((r + 1))
    done
    report "$f"
done
