#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Where a DNS-over-TLS query's server CPU goes at a fixed rate (docs/benchmarking.md, "DoT
# at a fixed rate: who pays for waking the client"): serve (1 worker) and Unbound (1 thread),
# each with DoT, each on CPU 0 and warmed; dnsperf -m dot -e on CPU 1 at $RATE q/s (default
# 10,000) for $SECONDS_RUN s (default 10), $RUNS times each (default 2), alternating. For
# each run: the server's CPU us per answer (utime + stime from /proc), and from perf stat
# on the server: tasks it woke per answer (sched:sched_waking), its context switches and
# syscalls per answer; on the client: dnsperf's futex calls per answer (its receive thread
# woken by its own send thread rather than by the server's answer).
# On loopback a sender's sendmsg/write runs the receiver's TCP input in its own context,
# and waking a receiver that sleeps on another CPU is charged to the sender: this script
# shows how much of each server's figure is that.
# Needs perf, dnsperf, unbound, certtool (gnutls-bin), kdig, python3, taskset, and a built
# ./build/dnsarena. Root (perf stat on another process's tracepoints).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/dnsarena
rate=${RATE:-10000}
seconds=${SECONDS_RUN:-10}
runs=${RUNS:-2}
port_up=${UPSTREAM_PORT:-5395}
port=${PORT:-5396}
port_dot=${DOT_PORT:-5397}
port_ub=${UNBOUND_PORT:-5398}
port_ub_dot=${UNBOUND_DOT_PORT:-5399}
for tool in perf dnsperf unbound certtool kdig python3 taskset; do
  command -v "$tool" > /dev/null || { echo "dot_wakeups.sh: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "dot_wakeups.sh: build $bin first" >&2; exit 2; }
(( seconds >= 4 )) || { echo "dot_wakeups.sh: SECONDS_RUN must be at least 4 (1 s on each side of the window)" >&2; exit 2; }
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-dot-wakeups
start_answer_upstream "$port_up"  # every query answered NOERROR with one A record

certtool --generate-privkey --key-type ecdsa --outfile key.pem > /dev/null 2>&1
printf 'cn = bench\nexpiration_days = 30\ndns_name = localhost\nip_address = 127.0.0.1\ntls_www_server\nsigning_key\n' > cert.tmpl
certtool --generate-self-signed --load-privkey key.pem --template cert.tmpl --outfile cert.pem > /dev/null 2>&1
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "n%d.bench.test A\n", i }' > queries.txt

cat > serve.yaml <<EOF
listen: 127.0.0.1:$port
workers: 1
upstreams: [127.0.0.1:$port_up]
cache: {segment: dnsarena-dot-wakeups, max_entries: 100000, arena_bytes: 32M, reset_on_mismatch: true}
stats: {metrics_listen: ""}
tls: {listen: [127.0.0.1:$port_dot], certificate: $dir/cert.pem, key: $dir/key.pem}
policy: {local_zone: ["test. nodefault"]}  # a default local zone (RFC 6761): forwarded here, as by the Unbound beside it
EOF
cat > unbound.conf <<EOF
server:
  interface: 127.0.0.1@$port_ub
  interface: 127.0.0.1@$port_ub_dot
  tls-port: $port_ub_dot
  tls-service-key: "$dir/key.pem"
  tls-service-pem: "$dir/cert.pem"
  num-threads: 1
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$dir"
  pidfile: ""
  use-syslog: no
  logfile: ""
  do-not-query-localhost: no
  access-control: 127.0.0.0/8 allow
  local-zone: "test." nodefault  # a default local zone (RFC 6761): forwarded like any other here
  msg-cache-size: 64m
  rrset-cache-size: 128m
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@$port_up
EOF

taskset -c 0 "$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
pids+=($!)
taskset -c 0 unbound -c unbound.conf > unbound.log 2>&1 &
unbound_pid=$!
pids+=($unbound_pid)
wait_answer "$port" n0.bench.test
wait_answer "$port_ub" n0.bench.test
for p in "$port" "$port_ub"; do  # warm: every name cached
  taskset -c 1 dnsperf -s 127.0.0.1 -p "$p" -d queries.txt -n 1 -Q 20000 > /dev/null 2>&1
done
worker=$(pgrep -P "${pids[1]}" | head -1)
[ -n "$worker" ] || { echo "no serve worker found" >&2; exit 1; }

events=sched:sched_waking,context-switches,raw_syscalls:sys_enter
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() {  # measure NAME PID DOT_PORT
  taskset -c 1 dnsperf -s 127.0.0.1 -p "$3" -m dot -e -d queries.txt -Q "$rate" -c 4 -l "$seconds" > dnsperf.log 2>&1 &
  local client=$!
  sleep 1
  local window=$(( seconds - 2 )) t0 t1
  perf stat -x, -e syscalls:sys_enter_futex -p "$client" -o client.stat -- sleep "$window" &
  local client_stat=$!
  t0=$(ticks "$2")
  perf stat -x, -e "$events" -p "$2" -o server.stat -- sleep "$window"
  t1=$(ticks "$2")
  wait "$client_stat" || true
  wait "$client"
  local answers hz
  hz=$(getconf CLK_TCK)
  answers=$(( rate * window ))
  awk -F, -v name="$1" -v n="$answers" -v cpu="$(( t1 - t0 ))" -v hz="$hz" \
      -v futex="$(awk -F, '/sys_enter_futex/ {print $1}' client.stat)" \
      -v lat="$(awk '/Average Latency/ {v = $4} END {print v}' dnsperf.log)" \
      -v lost="$(awk '/Queries lost/ {print $3}' dnsperf.log)" '
    /sched_waking/ {wake = $1} /context-switches/ {cs = $1} /raw_syscalls:sys_enter/ {sys = $1}
    END { printf "%-9s %10.2f %12.2f %10.2f %10.2f %12.2f %10.2f %6s\n", name, cpu / hz * 1e6 / n,
          wake / n, cs / n, sys / n, futex / n, lat * 1000, lost }' server.stat
}

echo "== DoT at $rate q/s, $seconds s per run, dnsperf -m dot -e -c 4 on CPU 1, servers on CPU 0 (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %10s %12s %10s %10s %12s %10s %6s\n' server "cpu us/q" "woken/answer" "cs/answer" \
  "sys/answer" "client futex" "avg ms" lost
for _ in $(seq 1 "$runs"); do
  measure serve "$worker" "$port_dot"
  measure unbound "$unbound_pid" "$port_ub_dot"
done
