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
#   etl2clickhouse               every table, payloads included (the whole load: reading the
#                                trace into the staging SQLite database, then sending)
#   etl2clickhouse --no-payload  the same without the payloads
#   clickhouse-client TSV        INSERT ... FORMAT TabSeparated of the events rows of the first
#                                load (exported once, before the rounds, with their payloads)
#                                into a table made AS events_local: one table of the 21 the
#                                loader fills, no reading of the trace
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
tsv() { ch -q "INSERT INTO peer.events FORMAT TabSeparated" <"$tmp/events.tsv"; }

fresh first
load first || exit 1
n=$(ch -q "SELECT count() FROM first.events")
ch -q "SELECT * FROM first.events_local FORMAT TabSeparated" >"$tmp/events.tsv"
tsv_mib=$(du -m "$tmp/events.tsv" | cut -f1)
ch -q "DROP DATABASE first"
fresh peerdef
ch -q "CREATE DATABASE IF NOT EXISTS peer"
for r in $(seq 1 "$rounds"); do
    fresh r$r
    timed load load "r$r"
    fresh p$r
    timed nopayload load "p$r" --no-payload
    ch -q "DROP DATABASE IF EXISTS r$r" && ch -q "DROP DATABASE IF EXISTS p$r"
    ch -q "DROP TABLE IF EXISTS peer.events" && ch -q "CREATE TABLE peer.events AS peerdef.events_local" || exit 1
    timed tsv tsv
done

median() { sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -n "$tmp/$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "[%s, %s]", lo, hi }'; }
echo "clickhousebench: $(uname -sr), $(nproc) processors, ClickHouse $(ch -q 'SELECT version()'), $n events, $rounds rounds, trace $(du -m "$tmp/trace.etl" | cut -f1) MiB, events TSV $tsv_mib MiB"
for l in load nopayload tsv; do
    m=$(median $l)
    case $l in load) name="etl2clickhouse" ;; nopayload) name="etl2clickhouse --no-payload" ;; tsv) name="clickhouse-client TSV (events only)" ;; esac
    echo "$name: median $m s $(range $l): $(echo "$n $m" | awk '{ printf "%.3f", $1 / $2 / 1e6 }') M events/s"
done
echo "ratio (TSV import time / etl2clickhouse time): $(echo "$(median tsv) $(median load)" | awk '{ printf "%.2fx", $1 / $2 }'), with --no-payload: $(echo "$(median tsv) $(median nopayload)" | awk '{ printf "%.2fx", $1 / $2 }')"
