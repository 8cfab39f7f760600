#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What dnstap costs serve (docs/benchmarking.md, dnstap), dnstap off against on in one run:
#   bench/dnstap_cost.sh callgrind   instructions per UDP hit of the worker (and of its writer
#                                    thread): callgrind totals at 2,000 and 12,000 hits, the
#                                    slope between them (start-up cancels out)
#   bench/dnstap_cost.sh dnsperf     dnsperf at 50,000 q/s for 10 s, 2 workers: answers lost,
#                                    frames sent and dropped, frames in the capture file;
#                                    dnstap off, then on with each dnstap.queue of $QUEUES
#                                    (default "16384 65536": libfstrm's queue alone, and the
#                                    default with the worker's backlog)
# Needs valgrind, dnsperf, kdig, fstrm_capture, dnstap-ldns, python3, and a built ./build/dnsarena.
set -euo pipefail
mode=${1:?usage: dnstap_cost.sh callgrind|dnsperf}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/dnsarena
port_up=${UPSTREAM_PORT:-5391}
port=${PORT:-5392}
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-dnstap-cost
start_answer_upstream "$port_up"  # every A query answered with 192.0.2.1: all hits after one miss
echo "www.example.com A" > queries.txt

config() {  # config WORKERS on|off [QUEUE]
  cat <<EOF
listen: 127.0.0.1:$port
workers: $1
upstreams: [127.0.0.1:$port_up]
cache: {segment: dnsarena-dnstap-cost, max_entries: 10000, arena_bytes: 8M, reset_on_mismatch: true}
stats: {metrics_listen: ""}
restart: {heartbeat_timeout_ms: 0}
EOF
  [ "$2" = on ] && echo "dnstap: {socket: $dir/tap.sock, queue: ${3:-65536}}"
  return 0
}

start_capture() {
  rm -f tap.sock
  fstrm_capture -t protobuf:dnstap.Dnstap -u tap.sock -w tap.fstrm > capture.log 2>&1 &
  capture=$!
  pids+=($capture)
  sleep 0.5
}

tap_counts() { dnstap-ldns -q -r tap.fstrm | awk '{print $3}' | sort | uniq -c | tr '\n' ' '; echo; }

if [ "$mode" = callgrind ]; then
  printf '%-4s %8s %14s %14s\n' dnstap hits worker_Ir writer_Ir
  for tap in off on; do
    declare -A worker writer
    for n in 2000 12000; do
      config 1 $tap > serve.yaml
      [ $tap = on ] && start_capture
      rm -f cg.*
      valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/cg.%p" \
        "$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
      serve=$!
      wait_answer "$port" www.example.com
      dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -n $n -Q 2000 -c 1 > dnsperf.log 2>&1
      kill -TERM $serve; wait $serve || true
      [ $tap = on ] && { kill -TERM "$capture"; wait "$capture" || true; }
      # The worker's files are the ones of the pid that is not serve's.
      w=$(ls cg.*-01 | grep -v "cg.$serve-" | head -1)
      worker[$n]=$(grep -m1 '^summary:' "$w" | awk '{print $2}')
      t=${w%-01}-02
      writer[$n]=$([ -f "$t" ] && grep -m1 '^summary:' "$t" | awk '{print $2}' || echo 0)
      printf '%-4s %8d %14d %14d\n' $tap $n "${worker[$n]}" "${writer[$n]}"
    done
    echo "dnstap $tap: worker $(( (worker[12000] - worker[2000]) / 10000 )) Ir per hit," \
      "writer thread $(( (writer[12000] - writer[2000]) / 10000 ))"
  done
else
  for run in off ${QUEUES:-16384 65536}; do
    tap=on; [ "$run" = off ] && tap=off
    config 2 $tap "$run" > serve.yaml
    [ $tap = on ] && start_capture
    "$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
    serve=$!
    wait_answer "$port" www.example.com
    echo "== dnstap $tap$([ $tap = on ] && echo ", queue $run") (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
    dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -l 10 -Q 50000 -c 4 -q 2000 2>&1 |
      grep -E "Queries (sent|completed|lost)|Queries per second"
    "$bin" stats --segment dnsarena-dnstap-cost --json --interval 0 | python3 -c \
      "import json,sys; t=json.load(sys.stdin)['total']; print({k: t[k] for k in ['queries_udp', 'dnstap_sent', 'dnstap_dropped']})"
    kill -TERM $serve; wait $serve || true
    [ $tap = on ] && { kill -TERM "$capture"; wait "$capture" || true; echo "in the capture file: $(tap_counts)"; }
  done
fi
