# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the bench scripts (dnstap_cost.sh, policy_reload.sh, dot_wakeups.sh, proxy_cost.sh), after they set $root:
#   scratch_dir NAME             a new /tmp/NAME.XXXXXX as $dir, entered; at exit every
#                                process in $pids is killed and $dir removed
#   start_answer_upstream PORT   answer_a_upstream.py on 127.0.0.1:PORT (every query: one A)
#   wait_answer PORT NAME        until NAME A is answered 192.0.2.1 on 127.0.0.1:PORT (60 s;
#                                fails with a message after that)
#   rpz_rules N                  prints N RPZ triggers "b<i>.l<i % 1000>.zone CNAME ."
#   write_rpz_queries N          queries.txt for dnsperf: 1,000 names rpz_rules N blocks
#                                (drawn with a fixed seed) and 1,000 others, alternating
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
scratch_dir() {
  dir=$(mktemp -d "/tmp/$1.XXXXXX")
  cd "$dir"
  trap cleanup EXIT
}
start_answer_upstream() {
  python3 "$root/bench/answer_a_upstream.py" "$1" &
  pids+=($!)
}
wait_answer() {
  for _ in $(seq 1 120); do
    kdig @127.0.0.1 -p "$1" "$2" A +timeout=1 +retry=0 2>/dev/null | grep -q 192.0.2.1 && return 0
    sleep 0.5
  done
  echo "nothing answers $2 on 127.0.0.1:$1" >&2
  return 1
}
rpz_rules() {
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "b%d.l%d.zone CNAME .\n", i, i % 1000 }'
}
write_rpz_queries() {
  awk -v n="$1" 'BEGIN { srand(1); for (i = 0; i < 1000; i++) {
    k = int(rand() * n); printf "b%d.l%d.zone A\nok%d.zone A\n", k, k % 1000, i } }' > queries.txt
}
