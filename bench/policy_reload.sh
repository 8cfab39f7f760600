#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Reloading a large response policy under load (docs/benchmarking.md, policy reload):
# serve (2 workers) with a generated RPZ of $RULES (default 1,000,000) CNAME . triggers,
# dnsperf at $RATE q/s (default 20,000) for $SECONDS_RUN s (default 30), half of the names
# blocked; meanwhile the policy is reloaded $RELOADS times (default 4), alternately by
# SIGHUP and by rewriting the zone file (policy.watch_interval_ms). Prints dnsperf's sent,
# completed and lost, the reloads serve logged, and each compile time.
# Needs dnsperf, kdig, python3, and a built ./build/dnsarena.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/dnsarena
rules=${RULES:-1000000}
rate=${RATE:-20000}
seconds=${SECONDS_RUN:-30}
reloads=${RELOADS:-4}
port_up=${UPSTREAM_PORT:-5393}
port=${PORT:-5394}
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-policy-reload
start_answer_upstream "$port_up"  # every query answered NOERROR with one A record

write_zone() {  # write_zone GENERATION: the triggers, plus one that names the generation
  { echo '$ORIGIN rpz.bench.'; echo '$TTL 300'
    echo '@ SOA ns.rpz.bench. admin.rpz.bench. 1 3600 600 86400 300'; echo '@ NS ns.rpz.bench.'
    rpz_rules "$rules"
    echo "generation$1.zone CNAME ."
  } > zone.new
  mv zone.new blocklist.rpz
}
write_zone 0
write_rpz_queries "$rules"  # 1,000 blocked names and 1,000 others, alternating

cat > serve.yaml <<EOF2
listen: 127.0.0.1:$port
workers: 2
upstreams: [127.0.0.1:$port_up]
cache: {segment: dnsarena-policy-reload, max_entries: 100000, arena_bytes: 32M, reset_on_mismatch: true}
stats: {metrics_listen: ""}
policy:
  watch_interval_ms: 500
  rpz: [{file: $dir/blocklist.rpz, name: rpz.bench.}]
EOF2
"$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
serve=$!
pids+=($serve)
wait_answer "$port" ok0.zone
dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -n 1 -c 4 -q 500 > /dev/null 2>&1  # warm
echo "== $rules rules, $rate q/s for $seconds s, $reloads reloads (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -l "$seconds" -Q "$rate" -c 4 -q 2000 > dnsperf.log 2>&1 &
perf=$!
gap=$(( seconds / (reloads + 1) ))
for r in $(seq 1 "$reloads"); do
  sleep "$gap"
  if (( r % 2 )); then kill -HUP "$serve"; echo "reload $r: SIGHUP"
  else write_zone "$r"; echo "reload $r: zone file rewritten"; fi
done
wait $perf
grep -E "Queries (sent|completed|lost)|Response codes" dnsperf.log
echo "reloads logged by serve: $(grep -c 'reloaded:' serve.log)"
grep -o 'compiled in [0-9.]* s' serve.log | tr '\n' ' '; echo
kdig @127.0.0.1 -p "$port" "generation$(( reloads - reloads % 2 )).zone" A +timeout=1 +retry=0 2>/dev/null | grep -o 'status: [A-Z]*' || true
