# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by the bench scripts (dnstap_cost.sh, policy_reload.sh), after they set $root:
#   scratch_dir NAME             a new /tmp/NAME.XXXXXX as $dir, entered; at exit every
#                                process in $pids is killed and $dir removed
#   start_answer_upstream PORT   answer_a_upstream.py on 127.0.0.1:PORT (every query: one A)
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
