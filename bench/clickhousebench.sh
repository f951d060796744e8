#!/bin/sh
# SPDX-License-Identifier: MIT
# clickhousebench: how fast etl2clickhouse loads a large trace into ClickHouse, against
# clickhouse-client's own TSV import of the same events rows into a table of the same
# definition, in the same run, on a clickhouse-server of its own (loopback, a temporary
# directory, stopped at the end).
#
#   clickhousebench.sh --tools BUILDDIR [-n EVENTS] [-r ROUNDS]
#
# The trace is sqlitebench's kernel mix (bench/sqlitebench --write-trace: rundown, then
# SampledProfile 40%, CSwitch 20%, EVENT_HEADER events 40%, a quarter with a stack). Each
# round loads it into a fresh database (its schema made before the clock starts), as fresh
# processes, in turn:
#   etl2clickhouse               every table, payloads included (the whole load: the trace
#                                read and its rows sent as they are made)
#   etl2clickhouse --no-payload  the same without the payloads
#   clickhouse-client TSV, all   INSERT ... FORMAT TabSeparated of every table's rows of the
#                                first load (exported once, before the rounds, payloads
#                                included), one clickhouse-client per table, into the same
#                                tables of a fresh database: the same rows, without reading
#                                the trace
#   clickhouse-client TSV, events  the events rows alone, the same way: one table of the 21
#   etl2sqlite                   the same trace into SQLite (the same row code, writing a
#                                database instead of sending: a reference)
# and reports the median wall time and events per second of each, and their ratios. Needs
# clickhouse-server and clickhouse-client; says SKIP without them.
set -u
events=1000000
rounds=3
tools=
while [ $# -gt 0 ]; do
    case $1 in
    -n) events=$2; shift ;;
    -r) rounds=$2; shift ;;
    --tools) tools=$2; shift ;;
    *) echo "usage: clickhousebench.sh --tools BUILDDIR [-n EVENTS] [-r ROUNDS]" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$tools" ] || { echo "clickhousebench: --tools BUILDDIR is required" >&2; exit 2; }
server=$(command -v clickhouse-server || { [ -x /usr/sbin/clickhouse-server ] && echo /usr/sbin/clickhouse-server; })
client=$(command -v clickhouse-client)
if [ -z "$server" ] || [ -z "$client" ]; then
    echo "clickhousebench: SKIP (clickhouse-server and clickhouse-client are needed)"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clickhousebench.XXXXXX")
export TMPDIR="$tmp"
base=$((30000 + ($$ % 300) * 10))
cleanup() {
    [ -f "$tmp/pid" ] && kill "$(cat "$tmp/pid")" 2>/dev/null && sleep 1
    [ -f "$tmp/pid" ] && kill -9 "$(cat "$tmp/pid")" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$tmp/data" "$tmp/tmp"
cat >"$tmp/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$tmp/server.log</log><errorlog>$tmp/server.err.log</errorlog></logger>
  <http_port>$base</http_port><tcp_port>$((base + 1))</tcp_port><interserver_http_port>$((base + 2))</interserver_http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$tmp/data/</path><tmp_path>$tmp/tmp/</tmp_path><user_files_path>$tmp/tmp/</user_files_path>
  <mark_cache_size>268435456</mark_cache_size><uncompressed_cache_size>268435456</uncompressed_cache_size>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <profiles><default></default></profiles>
  <quotas><default></default></quotas>
  <default_profile>default</default_profile><default_database>default</default_database>
</yandex>
EOF
"$server" --config-file="$tmp/config.xml" >"$tmp/stdout" 2>&1 &
echo $! >"$tmp/pid"
ch() { "$client" --host 127.0.0.1 --port $((base + 1)) "$@"; }
for _ in $(seq 1 300); do ch -q "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
ch -q "SELECT 1" >/dev/null 2>&1 || { echo "clickhousebench: the server did not start"; cat "$tmp/server.err.log"; exit 1; }

"$tools/bench/sqlitebench" -n "$events" --write-trace "$tmp/trace.etl" >/dev/null || exit 1
url="http://127.0.0.1:$base/"
now() { date +%s.%N; }
# timed LABEL COMMAND...: appends the wall seconds to $tmp/LABEL.
timed() {
    label=$1
    shift
    t0=$(now)
    "$@" || { echo "clickhousebench: $label failed" >&2; exit 1; }
    t1=$(now)
    echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$tmp/$label"
}
fresh() { # DB: an empty database with the schema
    ch -q "DROP DATABASE IF EXISTS $1" && "$tools/tools/etl2clickhouse" --url "$url" --database "$1" --create-schema || exit 1
}
load() { "$tools/tools/etl2clickhouse" -q --no-progress --url "$url" --database "$@" --machine bench "$tmp/trace.etl"; }
tsv_events() { ch -q "INSERT INTO $1.events_local FORMAT TabSeparated" <"$tmp/events_local.tsv"; }
tsv_all() {
    for t in $tables; do
        [ -s "$tmp/$t.tsv" ] || continue # no rows (the loader sends none either)
        ch -q "INSERT INTO $1.$t FORMAT TabSeparated" <"$tmp/$t.tsv" || return 1
    done
}

fresh first
load first || exit 1
n=$(ch -q "SELECT count() FROM first.events")
tables=$(ch -q "SELECT name FROM system.tables WHERE database = 'first' AND endsWith(name, '_local')")
for t in $tables; do ch -q "SELECT * FROM first.$t FORMAT TabSeparated" >"$tmp/$t.tsv" || exit 1; done
tsv_mib=$(cat "$tmp"/*.tsv | wc -c | awk '{ printf "%.1f", $1 / 1048576 }')
ch -q "DROP DATABASE first"
for r in $(seq 1 "$rounds"); do
    fresh r$r
    timed load load "r$r"
    fresh p$r
    timed nopayload load "p$r" --no-payload
    fresh t$r
    timed tsvall tsv_all "t$r"
    fresh e$r
    timed tsv tsv_events "e$r"
    for d in r$r p$r t$r e$r; do ch -q "DROP DATABASE $d"; done
    rm -f "$tmp/staged.db"
    timed stage "$tools/tools/etl2sqlite" -q --no-progress -o "$tmp/staged.db" "$tmp/trace.etl"
    rm -f "$tmp/staged.db"
done

median() { sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -n "$tmp/$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "[%s, %s]", lo, hi }'; }
echo "clickhousebench: $(uname -sr), $(nproc) processors, ClickHouse $(ch -q 'SELECT version()'), $n events, $rounds rounds, trace $(du -m "$tmp/trace.etl" | cut -f1) MiB, TSV of every table $tsv_mib MiB"
for l in load nopayload tsvall tsv stage; do
    m=$(median $l)
    case $l in load) name="etl2clickhouse" ;; nopayload) name="etl2clickhouse --no-payload" ;;
    tsvall) name="clickhouse-client TSV, every table" ;; tsv) name="clickhouse-client TSV, events only" ;;
    stage) name="etl2sqlite (the same rows into SQLite)" ;; esac
    echo "$name: median $m s $(range $l): $(echo "$n $m" | awk '{ printf "%.3f", $1 / $2 / 1e6 }') M events/s"
done
ratio() { echo "$(median "$1") $(median "$2")" | awk '{ printf "%.2fx", $1 / $2 }'; }
echo "ratios (TSV import time / etl2clickhouse time): every table $(ratio tsvall load), events only $(ratio tsv load); with --no-payload: every table $(ratio tsvall nopayload), events only $(ratio tsv nopayload)"
