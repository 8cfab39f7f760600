#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Starts the unit under systemd (as a transient copy named for this run, root instead
# of the dedicated user, this build's program, a private port and segment), waits for
# READY (systemctl start returns when Type=notify sends it), asks a query, reloads,
# stops. Only where systemd is the init system.
set -euo pipefail
if [[ ! -d /run/systemd/system ]]; then
  echo "SKIPPED: systemd is not the init system here (no /run/systemd/system; PID 1 is $(ps -p 1 -o comm=))"
  exit 77
fi
name=dnsarena-test-$$
port=$((20000 + $$ % 20000))
# Under /run, not /tmp: the unit has PrivateTmp=yes, so it would not see our /tmp.
dir=$(mktemp -d /run/dnsarena-unit-XXXXXX)
cat > "$dir/serve.yaml" <<CONF
listen: 127.0.0.1:$port
workers: 1
upstreams: [127.0.0.1:9]
cache: {segment: $name, max_entries: 1000, arena_bytes: 4M}
stats: {metrics_listen: ""}
CONF
sed -E -e "s#^(ExecStart(Pre)?=)[^ ]*/dnsarena (serve( --check-config| --config)) [^ ]*#\1$DNSARENA \3 $dir/serve.yaml#" \
  -e "s#^User=.*#User=root#" -e "s#^Group=.*#Group=root#" -e "s#^ProtectHome=.*#ProtectHome=no#" \
  "$UNIT" > "/run/systemd/system/$name.service"
cleanup() { systemctl stop "$name" || true; rm -f "/run/systemd/system/$name.service"; systemctl daemon-reload; rm -rf "$dir"; rm -f "/dev/shm/$name"; }
trap cleanup EXIT
systemctl daemon-reload
systemctl start "$name"
systemctl is-active "$name"
kdig @127.0.0.1 -p "$port" a.test. A +timeout=2 +retry=0 | grep -q "status:" || { journalctl -u "$name" --no-pager | tail -20; exit 1; }
systemctl reload "$name"
systemctl is-active "$name"
journalctl -u "$name" --no-pager | grep -q "reloaded" || { echo "no reload in the journal"; exit 1; }
systemctl stop "$name"
echo "started, answered, reloaded and stopped under systemd"
