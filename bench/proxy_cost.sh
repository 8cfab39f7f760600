#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What a PROXY v2 header costs serve per UDP hit (docs/benchmarking.md, PROXY v2): the
# worker's instructions (callgrind) per answered hit, in one serve run with
# proxy_protocol_from: [127.0.0.3/32]: hits from 127.0.0.2 without a header (an unlisted
# client: the subnet scan and the signature test only), hits from the balancer 127.0.0.3
# behind a header carrying 192.0.2.7 (parse, strip, the carried address used), then the
# plain hits again; each phase's counts zeroed before and dumped after it
# (callgrind_control), so start-up and warm-up are out. Then a second run with
# proxy_protocol_from empty (off): the same plain hits.
#   bench/proxy_cost.sh callgrind [N [BURST]]   N hits per phase (default 20000), sent in
#                                     bursts of BURST (default 32: recvmmsg batches as under load)
#   bench/proxy_cost.sh cpu [N [BURST]]   the worker's CPU time (user + system, from
#                                     /proc/PID/schedstat: nanoseconds on a CPU) per hit, plain
#                                     and headered phases alternated ROUNDS (default 10) times
#                                     in one serve run (proxy on), no valgrind: what the
#                                     kernel's share of a hit (recvmmsg, sendmmsg, epoll) makes
#                                     of the difference. Prints the ratio of the sums and the
#                                     median of the rounds' ratios (a loaded machine's noise
#                                     moves single rounds by +-10%)
# Needs valgrind (callgrind_control), kdig, python3, bc and a built ./build/dnsarena.
set -euo pipefail
mode=${1:?usage: proxy_cost.sh callgrind|cpu [N [BURST]]}
n=${2:-20000}
burst=${3:-32}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/dnsarena
port_up=${UPSTREAM_PORT:-5393}
port=${PORT:-5394}
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-proxy-cost
start_answer_upstream "$port_up"  # every A query answered with 192.0.2.1: all hits after one miss

config() {  # config on|off
  cat <<EOF
listen: 127.0.0.1:$port
workers: 1
upstreams: [127.0.0.1:$port_up]
access_control: ["127.0.0.0/8 allow", "192.0.2.0/24 allow"]
cache: {segment: dnsarena-proxy-cost, max_entries: 10000, arena_bytes: 8M, reset_on_mismatch: true}
stats: {metrics_listen: ""}
restart: {heartbeat_timeout_ms: 0}
EOF
  if [ "$1" = on ]; then echo "proxy_protocol_from: [127.0.0.3/32]"; fi
}

send() { python3 "$root/bench/proxy_sender.py" "$port" "$@"; }

# phase WORKER_PID NAME SENDER_ARGS...: the worker's Ir over one phase, per answered hit.
phase() {
  local worker=$1 name=$2
  shift 2
  callgrind_control -z "$worker" > /dev/null
  local answered ir
  answered=$(send "$@")
  callgrind_control --dump="$name" "$worker" > /dev/null
  ir=$(grep -h '^summary:' "$(ls -t cg.out."$worker".* | head -1)" | awk '{print $2}')
  printf '%-30s %8s %14s %10.0f\n' "$name" "$answered" "$ir" "$(echo "$ir / $answered" | bc -l)"
  echo "$name $answered $ir" >> results.txt
}

run() {  # run on|off PHASES [plain]
  config "$1" > serve.yaml
  if [ "${3:-}" = plain ]; then
    "$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
  else
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/cg.out.%p" "$bin" serve -c serve.yaml \
      --remove-segment > serve.log 2>&1 &
  fi
  local serve=$!
  pids+=($serve)
  wait_answer "$port" www.example.com  # kdig from 127.0.0.1: not a listed balancer
  local worker
  worker=$(cat /proc/$serve/task/*/children | tr ' ' '\n' | grep . | head -1)
  "$2" "$worker"
  kill -TERM $serve
  wait $serve || true
}

on_phases() {
  send 127.0.0.2 1000 "$burst" > /dev/null  # warm-up
  send 127.0.0.3 1000 "$burst" 192.0.2.7 > /dev/null
  phase "$1" on_plain 127.0.0.2 "$n" "$burst"
  phase "$1" on_header 127.0.0.3 "$n" "$burst" 192.0.2.7
  phase "$1" on_plain_again 127.0.0.2 "$n" "$burst"
}
off_phases() {
  send 127.0.0.2 1000 "$burst" > /dev/null
  phase "$1" off_plain 127.0.0.2 "$n" "$burst"
}

# cpu_phase WORKER_PID NAME SENDER_ARGS...: the worker's nanoseconds on a CPU over one phase.
cpu_phase() {
  local worker=$1 name=$2
  shift 2
  local before after answered
  before=$(awk '{print $1}' /proc/"$worker"/schedstat)
  answered=$(send "$@")
  after=$(awk '{print $1}' /proc/"$worker"/schedstat)
  printf '%-12s %8s %12s %8.0f\n' "$name" "$answered" "$((after - before))" "$(echo "($after - $before) / $answered" | bc -l)"
  echo "$name $answered $((after - before))" >> cpu.txt
}
cpu_phases() {
  send 127.0.0.2 5000 "$burst" > /dev/null
  send 127.0.0.3 5000 "$burst" 192.0.2.7 > /dev/null
  for _ in $(seq 1 "${ROUNDS:-10}"); do
    cpu_phase "$1" plain 127.0.0.2 "$n" "$burst"
    cpu_phase "$1" header 127.0.0.3 "$n" "$burst" 192.0.2.7
  done
}
if [ "$mode" = cpu ]; then
  printf '%-12s %8s %12s %8s\n' phase answered worker_ns ns/hit
  run on cpu_phases plain
  python3 - <<'PY'
import statistics
t, rounds = {}, {"plain": [], "header": []}
for l in open("cpu.txt"):
    name, a, ns = l.split()
    t.setdefault(name, [0, 0])
    t[name][0] += int(a)
    t[name][1] += int(ns)
    rounds[name].append(int(ns) / int(a))
per = {k: ns / a for k, (a, ns) in t.items()}
ratios = [h / p for p, h in zip(rounds["plain"], rounds["header"])]
print(f"header / no header (same run, {len(ratios)} alternations): sums {per['header'] / per['plain']:.4f} "
      f"({per['header'] - per['plain']:+.0f} ns per hit of {per['plain']:.0f}), "
      f"median of rounds {statistics.median(ratios):.4f}")
PY
  exit 0
fi

printf '%-30s %8s %14s %10s\n' phase answered worker_Ir Ir/hit
run on on_phases
run off off_phases
python3 - <<'PY'
r = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open("results.txt")}
per = {k: ir / a for k, (a, ir) in r.items()}
plain = (per["on_plain"] + per["on_plain_again"]) / 2
print(f"header / no header (same run): {per['on_header'] / plain:.4f} ({per['on_header'] - plain:+.0f} Ir per hit)")
print(f"no header, proxy on / off:     {plain / per['off_plain']:.4f} ({plain - per['off_plain']:+.0f} Ir per hit)")
PY
