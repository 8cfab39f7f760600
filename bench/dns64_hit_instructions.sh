#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Instructions per UDP hit of one serve worker with DNS64 (docs/operator-guide.md#dns64),
# in one run of one worker, each an answer of one address record:
#   synthesized  AAAA of a name with only A, from a DNS64 client (127.0.0.1)
#   plain        AAAA of a name with AAAA, from a client outside dns64.clients (127.0.0.2)
#   real64       AAAA of a name with AAAA, from the DNS64 client
#   a            A of a name with only A, from the DNS64 client
#   bench/dns64_hit_instructions.sh [BINARY]     (default: ./build/dnsarena)
# 1,000 names of each kind (nN.example.com: A only; v6-N.example.com: AAAA too) from
# answer_a_upstream.py. Under callgrind: one pass of each fills the cache (the A, the
# AAAA and NODATA entries, the synthesized ones), the worker's counters are zeroed, then
# for each kind HITS queries (default 20,000) go out in batches of up to 20 (dnsperf -c 1
# -q 20) and the counters are dumped. Prints Ir per hit of each and the ratios to plain;
# deterministic up to batch sizes (about +-20 Ir, as hit_instructions.sh). Needs
# valgrind, dnsperf, kdig, python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/build/dnsarena}")
[ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 1; }
hits=${HITS:-20000}
port_up=${UPSTREAM_PORT:-$((20000 + $$ % 20000 * 2))}
port=${PORT:-$((port_up + 1))}
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-dns64-hit-instructions
start_answer_upstream "$port_up"
for i in $(seq 1 1000); do echo "n$i.example.com AAAA"; done > synthesized.txt
for i in $(seq 1 1000); do echo "v6-$i.example.com AAAA"; done > plain.txt
cp plain.txt real64.txt
for i in $(seq 1 1000); do echo "n$i.example.com A"; done > a.txt
kinds=(synthesized plain real64 a)
declare -A source=([synthesized]=127.0.0.1 [plain]=127.0.0.2 [real64]=127.0.0.1 [a]=127.0.0.1)
printf 'dns64:\n  clients: [127.0.0.1/32]\n' > serve.yaml

valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/cg.%p" \
  "$bin" serve -c serve.yaml --listen 127.0.0.1:$port --upstream 127.0.0.1:$port_up --workers 1 \
  --segment dnsarena-dns64-hit-instructions --max-entries 100000 --arena-bytes 64M --no-metrics \
  --remove-segment --reset-segment --log-level warn > serve.log 2>&1 &
serve=$!
pids+=($serve)
wait_answer "$port" probe.example.com
for k in "${kinds[@]}"; do
  dnsperf -s 127.0.0.1 -p "$port" -a "${source[$k]}" -d "$k.txt" -n 2 -c 1 -q 20 > "fill-$k.log" 2>&1
done
worker=$(pgrep -P "$serve" | head -1)
callgrind_control -z "$worker" > /dev/null 2>&1
for k in "${kinds[@]}"; do
  dnsperf -s 127.0.0.1 -p "$port" -a "${source[$k]}" -d "$k.txt" -n $((hits / 1000)) -c 1 -q 20 > "hits-$k.log" 2>&1
  callgrind_control -d "$worker" > /dev/null 2>&1
done
kill -TERM "$serve"; wait "$serve" || true

printf '%-12s %-8s %-10s %10s %12s %10s\n' kind qtype client queries Ir_per_hit to_plain
declare -A per
n=1
for k in "${kinds[@]}"; do
  completed=$(awk '/Queries completed/ {print $3}' "hits-$k.log")
  ir=$(grep -m1 '^summary:' "cg.$worker.$n" | awk '{print $2}')
  per[$k]=$(echo "$ir / $completed" | bc -l)
  n=$((n + 1))
done
for k in "${kinds[@]}"; do
  printf '%-12s %-8s %-10s %10s %12.1f %10.3f\n' "$k" "$(awk '{print $2; exit}' "$k.txt")" "${source[$k]}" \
    "$(awk '/Queries completed/ {print $3}' "hits-$k.log")" "${per[$k]}" "$(echo "${per[$k]} / ${per[plain]}" | bc -l)"
done
