#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# With standard error being the stream $JOURNAL_STREAM names (as under systemd), serve
# logs "<priority>[pid N] message" without timestamps; otherwise with timestamps.
set -euo pipefail
dir=$(mktemp -d /tmp/dnsarena-journal-XXXXXX)
seg=dnsarena-journal-test-$$
trap 'rm -rf "$dir"; rm -f /dev/shm/$seg' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run_serve() {  # $1: log file; $2: JOURNAL_STREAM value or empty
  ( exec 2>"$1"
    if [[ -n $2 ]]; then export JOURNAL_STREAM=$(stat -c '%d:%i' "$1"); fi
    exec timeout -s TERM 2 "$DNSARENA" serve --listen 127.0.0.1:$port --upstream 127.0.0.1:9 --workers 1 \
      --segment "$seg" --max-entries 1000 --arena-bytes 4M --no-metrics --remove-segment ) || true
}
run_serve "$dir/journal.log" yes
cat "$dir/journal.log"
grep -qE '^<6>\[pid [0-9]+\] serving DNS on 127.0.0.1' "$dir/journal.log" || { echo "no <6> info line"; exit 1; }
if grep -qE '^[0-9]{4}-' "$dir/journal.log"; then echo "timestamps in journal mode"; exit 1; fi
run_serve "$dir/plain.log" ""
grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T.* \[info\] \[pid [0-9]+\] serving DNS' "$dir/plain.log" || { cat "$dir/plain.log"; exit 1; }
echo "journald and plain formats as documented"
