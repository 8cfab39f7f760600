#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# RPZ by zone transfer, a one-change IXFR on a large zone (docs/benchmarking.md, RPZ by
# zone transfer): knotd is the primary of a generated RPZ of $RULES (default 1,000,000)
# CNAME . triggers, with its journal on and NOTIFY to serve; serve (2 workers) takes the
# zone by AXFR, then dnsperf runs at $RATE q/s (default 20,000) for $SECONDS_RUN s (default
# 30), half of the names blocked, while $CHANGES times (default 4) one rule is added on
# knotd (knotc zone-begin / zone-set / zone-commit: knotd sends NOTIFY). For each change:
# the time from the commit to the first NXDOMAIN for the new rule's name (asked every
# 10 ms), the time from serve's NOTIFY log line to that answer, and what serve logged: the
# IXFR's time (the delta and the kept copy written), the policy compile's time. Then
# dnsperf's sent, completed and lost.
# Needs knotd, knotc, dnsperf, kdig, python3, and a built ./build/dnsarena (or the binary
# DNSARENA_BIN names: another build's, to compare two in the same conditions).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${DNSARENA_BIN:-$root/build/dnsarena}
rules=${RULES:-1000000}
rate=${RATE:-20000}
seconds=${SECONDS_RUN:-30}
changes=${CHANGES:-4}
port_up=${UPSTREAM_PORT:-5395}
port=${PORT:-5396}
port_knot=${KNOT_PORT:-5397}
port_notify=${NOTIFY_PORT:-5398}
knotd=$(command -v knotd || echo /usr/sbin/knotd)
knotc=$(command -v knotc || echo /usr/sbin/knotc)
. "$root/bench/script_setup.sh"
scratch_dir dnsarena-rpz-xfr
start_answer_upstream "$port_up"  # every query answered NOERROR with one A record
mkdir -p zones db
{ echo '$ORIGIN rpz.bench.'; echo '$TTL 300'
  echo '@ SOA ns.example. admin.example. 1 3600 600 86400 300'; echo '@ NS ns.example.'
  rpz_rules "$rules"
} > zones/rpz.bench.zone
cat > knot.conf <<EOF2
server:
    rundir: "$dir"
    listen: 127.0.0.1@$port_knot
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "$dir/db"
control:
    listen: "$dir/knot.sock"
log:
  - target: "$dir/knotd.log"
    any: info
remote:
  - id: dnsarena
    address: 127.0.0.1@$port_notify
acl:
  - id: xfr
    address: 127.0.0.1
    action: transfer
template:
  - id: default
    storage: "$dir/zones"
    file: "%s.zone"
    zonefile-sync: -1
    journal-content: changes
zone:
  - domain: rpz.bench.
    acl: xfr
    notify: dnsarena
EOF2
"$knotd" -c knot.conf > knotd.out 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  kdig @127.0.0.1 -p "$port_knot" rpz.bench. SOA +timeout=1 +retry=0 2>/dev/null | grep -q 'status: NOERROR' && break
  sleep 0.2
done
write_rpz_queries "$rules"  # 1,000 blocked names and 1,000 others, alternating

cat > serve.yaml <<EOF2
listen: 127.0.0.1:$port
workers: 2
upstreams: [127.0.0.1:$port_up]
cache: {segment: dnsarena-rpz-xfr, max_entries: 100000, arena_bytes: 32M, reset_on_mismatch: true}
stats: {metrics_listen: ""}
policy:
  watch_interval_ms: 0
  notify_listen: 127.0.0.1@$port_notify
  rpz:
    - {zone: rpz.bench., primary: 127.0.0.1@$port_knot, file: $dir/rpz.bench.copy}
EOF2
"$bin" serve -c serve.yaml --remove-segment > serve.log 2>&1 &
serve=$!
pids+=($serve)
wait_answer "$port" ok0.zone
serial() { "$bin" stats --segment dnsarena-rpz-xfr --json --interval 0 2>/dev/null |
  python3 -c 'import json,sys; z=json.load(sys.stdin).get("rpz_zones") or [{}]; print(z[0].get("serial", 0) if z[0].get("has_copy") else 0)'; }
for _ in $(seq 1 600); do [ "$(serial)" = 1 ] && break; sleep 0.2; done
grep -o 'AXFR to serial 1 .*' serve.log || { echo "no AXFR" >&2; exit 1; }
# The serial is the transfer's; the policy is swapped in once the supervisor compiled it.
for _ in $(seq 1 600); do
  kdig @127.0.0.1 -p "$port" b0.l0.zone A +timeout=1 +retry=0 2>/dev/null | grep -q 'status: NXDOMAIN' && break
  sleep 0.2
done
dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -n 1 -c 4 -q 500 > /dev/null 2>&1  # warm
echo "== $rules rules, $rate q/s for $seconds s, $changes one-rule changes (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
rcvbuf_errors() { awk '/^Udp:/ { if (h) print $6; h = 1 }' /proc/net/snmp; }  # host-wide UDP drops (full socket buffers)
drops0=$(rcvbuf_errors)
dnsperf -s 127.0.0.1 -p "$port" -d queries.txt -l "$seconds" -Q "$rate" -c 4 -q 2000 > dnsperf.log 2>&1 &
perf=$!
gap=$(( seconds / (changes + 1) ))
# Asks NAME A every 10 ms from one socket (no process per query: kdig in a loop would take
# the CPU being measured) until NXDOMAIN; prints the seconds since T0 (date +%s.%N) and
# the wall-clock time of the answer (for the NOTIFY-to-answer figure below).
poll_nxdomain='
import socket, struct, sys, time
port, name, t0 = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.01)
for i in range(6000):
    s.sendto(struct.pack(">HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0) + q + b"\0\1\0\1", ("127.0.0.1", port))
    deadline = time.time() + 0.01
    try:  # every reply waiting (a late one too: only NAME is asked here, NOERROR until the rule)
        while time.time() < deadline:
            if s.recv(4096)[3] & 0xF == 3:
                now = time.time(); print("%.3f %.3f" % (now - t0, now)); sys.exit(0)
    except socket.timeout:
        pass
print("never")
'
answers=()
for c in $(seq 1 "$changes"); do
  sleep "$gap"
  "$knotc" -c knot.conf zone-begin rpz.bench. > /dev/null
  "$knotc" -c knot.conf zone-set rpz.bench. "new$c.zone.rpz.bench." 300 CNAME . > /dev/null
  t0=$(date +%s.%N)
  "$knotc" -c knot.conf zone-commit rpz.bench. > /dev/null
  read -r took answered_at < <(python3 -c "$poll_nxdomain" "$port" "new$c.zone" "$t0")
  echo "change $c: commit on knotd to NXDOMAIN from serve: $took s"
  answers+=("$answered_at")
done
# From the NOTIFY serve logged (its arrival, the issue's starting point: knotd's own commit
# of the zone is before it) to the answer: the last NOTIFY line before each answer.
python3 - "$dir/serve.log" "${answers[@]}" <<'PY'
import datetime, sys
notifies = []
for line in open(sys.argv[1], errors="replace"):
    if "NOTIFY from its primary" in line:
        t = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f")
        notifies.append(t.timestamp())  # serve logs local time, as this parse reads it
for i, a in enumerate(sys.argv[2:], 1):
    if a == "":
        continue
    before = [n for n in notifies if n <= float(a)]
    print("change %d: NOTIFY at serve to NXDOMAIN from serve: %s" %
          (i, "%.3f s" % (float(a) - before[-1]) if before else "no NOTIFY logged before the answer"))
PY
wait $perf
grep -E "Queries (sent|completed|lost)|Response codes" dnsperf.log
echo "UDP datagrams dropped by full socket buffers meanwhile (host-wide): $(( $(rcvbuf_errors) - drops0 ))"
grep -o 'IXFR to serial [0-9]* .*CPU)' serve.log || true
grep -o 'compiled in [0-9.]* s ([0-9.]* s CPU)' serve.log | tr '\n' ' '; echo
# Where the time goes, in CPU time (the machine may be loaded): the copy read and compiled
# alone, as the supervisor does it for every transfer.
/usr/bin/time -f 'the copy read and compiled alone (dnsarena policy check): %e s wall, %U s user + %S s system CPU' \
  "$bin" policy check "$dir/rpz.bench.copy" > /dev/null
