# SPDX-License-Identifier: MIT
# The checks the tests/*.test scripts share: each sources this file (found through $TESTLIB,
# which Makefile.am sets) and prints one "ok - NAME" or "not ok - NAME" line per check.
#
# Conventions the functions rely on: the script has set $tmp (its scratch directory); the
# run functions leave the command's stdout in $tmp/out and its stderr in $tmp/err. Where
# scripts used to give one name two meanings (the string `same` and the file `same`), each
# meaning has its own name here.

passed=0
failed=0

# printf, not echo: dash's echo would eat the backslashes of a name or a pattern.
ok() { passed=$((passed + 1)); printf 'ok - %s\n' "$1"; }
not_ok() { failed=$((failed + 1)); printf 'not ok - %s\n' "$1"; }

# end_tests: the final count line; its status is the script's (0 when nothing failed).
end_tests() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# kernel_tests_turn: waits (at most 15 minutes) until no other test that records kernel
# sessions runs, and holds that turn until the script ends. A kernel session records the whole
# machine, so under make -j one test's workload would be in another's recording. The lock is
# a file descriptor (9) of the script's; flock(1) is util-linux's (without it, no waiting).
kernel_tests_turn() {
    command -v flock >/dev/null 2>&1 || return 0
    exec 9>>"${ETL_KERNEL_TESTS_LOCK:-/tmp/libetl-kernel-tests.lock}" || return 0
    flock -w 900 9 || echo "# kernel_tests_turn: waited 15 minutes for another kernel test; going on"
}

# indent [N]: the first N (5) lines of stdin, indented (never read as an ok/not ok line).
indent() { sed 's/^/  /' | head -"${1:-5}"; }

# ---- running the program under test
# The program the run functions start: $tool when the script set it (tool=$ETLDUMP), or else
# the first argument after EXPECTED_EXIT.

# tl_exec ARGS...: runs $tool ARGS (or ARGS), stdout to $tmp/out, stderr to $tmp/err; sets $got.
tl_exec() {
    if [ -n "${tool:-}" ]; then "$tool" "$@" >"$tmp/out" 2>"$tmp/err"; else "$@" >"$tmp/out" 2>"$tmp/err"; fi
    got=$?
}

# tl_wrong_exit NAME WANT: not ok when $got is not WANT, with what the program printed; status 1 then.
tl_wrong_exit() {
    [ "$got" -eq "$2" ] && return 0
    not_ok "$1: exit $got, want $2"
    sed 's/^/  stdout: /' "$tmp/out" | head -8
    sed 's/^/  stderr: /' "$tmp/err" | head -5
    return 1
}

# run NAME EXPECTED_EXIT ARGS...: status 0 when the exit status is EXPECTED_EXIT, and nothing is
# said then (the checks of its output that follow say ok); not ok when it is another.
run() {
    tl_name=$1 tl_want=$2
    shift 2
    tl_exec "$@"
    tl_wrong_exit "$tl_name" "$tl_want"
}

# run_ok NAME EXPECTED_EXIT ARGS...: as run, and "ok - NAME" when the exit status is the one expected.
run_ok() {
    tl_name=$1 tl_want=$2
    shift 2
    tl_exec "$@"
    tl_wrong_exit "$tl_name" "$tl_want" || return 1
    ok "$tl_name"
}

# run_exit NAME EXPECTED_EXIT ARGS...: as run_ok, the ok line saying "NAME: exit EXPECTED_EXIT".
run_exit() {
    tl_name=$1 tl_want=$2
    shift 2
    tl_exec "$@"
    tl_wrong_exit "$tl_name" "$tl_want" || return 1
    ok "$tl_name: exit $tl_want"
}

# ---- checks of values and files
# check NAME COMMAND...: ok when the command succeeds.
check() {
    tl_name=$1
    shift
    if "$@"; then ok "$tl_name"; else not_ok "$tl_name"; fi
}

# is NAME GOT WANT: two strings (or numbers) that must be equal.
is() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got '$2', want '$3'"; fi
}

# is_shown NAME GOT WANT: as is, and the ok line shows the value: "ok - NAME (GOT)".
is_shown() {
    if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1: got '$2', want '$3'"; fi
}

# at_least NAME GOT MIN: a count reached its minimum; the ok line shows it.
at_least() {
    if [ "${2:-0}" -ge "$3" ] 2>/dev/null; then ok "$1 ($2)"; else not_ok "$1: $2, want at least $3"; fi
}

# same_file NAME GOT_FILE WANT_FILE: the two files are byte for byte the same (a unified diff
# from WANT to GOT when they are not).
same_file() {
    if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1"; diff -u "$3" "$2" | head -20; fi
}

# empty NAME FILE: FILE is empty (or not there).
empty() {
    if [ ! -s "$2" ]; then ok "$1"; else not_ok "$1: not empty"; indent <"$2"; fi
}

# contains NAME FILE REGEX: a line of FILE matches REGEX, a basic regular expression (grep).
contains() {
    if grep -q -- "$3" "$2"; then ok "$1"; else not_ok "$1: no '$3'"; indent 8 <"$2"; fi
}

# lacks NAME FILE REGEX: no line of FILE matches the basic regular expression REGEX.
lacks() {
    if ! grep -q -- "$3" "$2"; then ok "$1"; else not_ok "$1: '$3' is there"; grep -- "$3" "$2" | indent 3; fi
}

# contains_ere NAME FILE REGEX, lacks_ere NAME FILE REGEX: the same with an extended regular
# expression (grep -E).
contains_ere() {
    if grep -E -q -- "$3" "$2"; then ok "$1"; else not_ok "$1: no '$3'"; indent 8 <"$2"; fi
}
lacks_ere() {
    if ! grep -E -q -- "$3" "$2"; then ok "$1"; else not_ok "$1: '$3' is there"; grep -E -- "$3" "$2" | indent 3; fi
}

# absent NAME PATH: nothing at PATH, and no temporary file (*.tmp-*, as the tools that write
# through a temporary name leave one) in $tmp.
absent() {
    if [ ! -e "$2" ] && ! ls "$tmp"/*.tmp-* >/dev/null 2>&1; then ok "$1"
    else not_ok "$1: $2 or a temporary file is there"; ls "$tmp" | indent 8; fi
}

# ---- etldump and etlrecord, as several scripts ask them
# summary_number FILE KEY: a number from etldump --summary of FILE.
summary_number() {
    "$ETLDUMP" --summary "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

# summary_value FILE KEY: a value, number or string (quotes taken off), from etldump --summary.
summary_value() {
    "$ETLDUMP" --summary "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",]*\).*/\1/p"
}

# pid_of NAME: the controller pid of session NAME, from etlrecord list.
pid_of() {
    "$ETLRECORD" list | awk -v n="$1" '$1 == n { print $2 }'
}

# kill_sessions: kills (SIGKILL) the controllers of the sessions etlrecord lists as running in
# $ETL_RUNTIME_DIR, so that a failed test leaves none behind.
kill_sessions() {
    for tl_pid in $("$ETLRECORD" list 2>/dev/null | awk '$3 == "running" { print $2 }'); do kill -9 "$tl_pid" 2>/dev/null; done
}
