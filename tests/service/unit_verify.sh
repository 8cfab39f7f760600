#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# systemd-analyze verify on the unit as configured for this build, its ExecStart
# pointed at this build's program (verify checks that the executable exists).
set -euo pipefail
command -v systemd-analyze >/dev/null || { echo "SKIPPED: systemd-analyze not found (apt-get install systemd)"; exit 77; }
dir=$(mktemp -d /tmp/dnsarena-unit-XXXXXX)
trap 'rm -rf "$dir"' EXIT
sed -E "s#^(ExecStart(Pre)?=)[^ ]*/dnsarena #\1$DNSARENA #" "$UNIT" > "$dir/dnsarena.service"
grep -E "^ExecStart" "$dir/dnsarena.service"
if ! systemd-analyze verify "$dir/dnsarena.service" >"$dir/verify.log" 2>&1; then
  cat "$dir/verify.log"; exit 1
fi
# Anything it prints about our unit is a finding, even with exit 0.
if grep -i "dnsarena.service" "$dir/verify.log"; then exit 1; fi
grep -q "^Type=notify$" "$dir/dnsarena.service"
grep -q "^RemoveIPC=no$" "$dir/dnsarena.service"
echo "systemd-analyze verify: clean"
