#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Instructions per UDP hit of one serve worker, for one build or several side by side
# (docs/benchmarking.md, "Instructions per UDP hit"):
#   bench/hit_instructions.sh [BINARY ...]     (default: ./build/dnsarena)
# Each binary serves 1,000 names from an upstream that answers every A query (one
# worker, under callgrind); one pass fills the cache, the worker's counters are zeroed
# (callgrind_control -z), HITS queries (default 20,000) go out in batches of up to 20
# (dnsperf -c 1 -q 20, as a busy client sends), and the counters are dumped
# (callgrind_control -d): the dump holds the hits and nothing else, the worker's whole
# loop included (receive, parse, check, policy, lookup, answer, counters). Prints Ir
# per hit per binary and the top functions of each. Deterministic up to batch sizes
# (about +-20 Ir): compare builds in one run, not against old figures.
# CONFIG=FILE: a serve config every binary starts with (the flags above override it), e.g.
# one with `mrc: {enabled: false}` to price a feature by running the script twice.
# Needs valgrind, dnsperf, kdig, python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build/dnsarena"
config=()
[ -n "${CONFIG:-}" ] && config=(-c "$(realpath "$CONFIG")")
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
hits=${HITS:-20000}
port_up=${UPSTREAM_PORT:-$((20000 + $$ % 20000 * 2))}
port=${PORT:-$((port_up + 1))}
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-hit-instructions
start_answer_upstream "$port_up"
for i in $(seq 1 1000); do echo "n$i.example.com A"; done > names.txt

printf '%-50s %10s %12s\n' binary hits Ir_per_hit
for bin in "${bins[@]}"; do
  [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 1; }
  rm -f cg.*
  valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/cg.%p" \
    "$bin" serve "${config[@]}" --listen 127.0.0.1:$port --upstream 127.0.0.1:$port_up --workers 1 \
    --segment dnsarena-hit-instructions --max-entries 100000 --arena-bytes 64M --no-metrics \
    --remove-segment --reset-segment --log-level warn > serve.log 2>&1 &
  serve=$!
  pids+=($serve)
  wait_answer "$port" probe.example.com
  dnsperf -s 127.0.0.1 -p "$port" -d names.txt -n 2 -c 1 -q 20 > fill.log 2>&1
  callgrind_control -z "$serve" > /dev/null 2>&1 || true   # the supervisor
  for p in $(pgrep -P "$serve"); do callgrind_control -z "$p" > /dev/null 2>&1; done
  dnsperf -s 127.0.0.1 -p "$port" -d names.txt -n $((hits / 1000)) -c 1 -q 20 > hits.log 2>&1
  for p in $(pgrep -P "$serve"); do callgrind_control -d "$p" > /dev/null 2>&1; done
  kill -TERM "$serve"; wait "$serve" || true
  completed=$(awk '/Queries completed/ {print $3}' hits.log)
  # The worker's dump: a child of serve's pid, file cg.<pid>.1.
  w=$(ls cg.*.1 | grep -v "cg.$serve.1" | head -1)
  ir=$(grep -m1 '^summary:' "$w" | awk '{print $2}')
  printf '%-50s %10s %12.1f\n' "$bin" "$completed" "$(echo "$ir / $completed" | bc -l)"
  callgrind_annotate --threshold=100 --inclusive=no "$w" 2>/dev/null | sed -n '/file:function/,$p' |
    grep -v '100.0%' | sed -n "3,${TOP:-14}p" | awk -v n="$completed" '{ir = $1; gsub(",", "", ir); f = $0; sub(/^[^)]*\) +/, "", f); sub(/^[^:]*:/, "", f); printf "    %8.1f  %s\n", ir / n, substr(f, 1, 90)}'
done
