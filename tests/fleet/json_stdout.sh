#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# With --json, the sim commands print one JSON document alone on stdout (the human report
# goes to stderr), so `dnsarena-lab sim rollout ... --json | jq` works; stdout is parsed whole.
# Env: DNSARENA_LAB (the dnsarena-lab program), DATA (tests/fleet/data).
set -euo pipefail
dir=$(mktemp -d /tmp/dnsarena-json-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fleet="$DATA/mpi_fleet.yaml" plan="$DATA/tiny_plan.yaml" cal="$dir/calibration.json"

# $1: name; the rest: the command. Fails unless stdout is one JSON value with the keys of
# $keys (comma-separated, of the top-level object, or of the first element of an array)
# and stderr has the human report.
check() {
  local name=$1; shift
  "$DNSARENA_LAB" "$@" --json >"$dir/$name.out" 2>"$dir/$name.err"
  python3 - "$dir/$name.out" "$keys" "$name" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text)  # the whole of stdout: raises on any table line
obj = doc[0] if isinstance(doc, list) else doc
missing = [k for k in sys.argv[2].split(",") if k not in obj]
if missing:
    sys.exit(f"{sys.argv[3]}: keys {missing} missing from {sorted(obj)}")
print(f"{sys.argv[3]}: stdout is one JSON document ({len(text)} bytes)")
PY
  [ -s "$dir/$name.err" ] || { echo "$name: no human report on stderr"; exit 1; }
}

keys=requests_per_s_per_core,p99_after_gb check rollout sim rollout --fleet "$fleet" --plan "$plan" --out "$dir/r" --calibration "$cal"
grep -q "RSS plateaus" "$dir/rollout.err"
keys=rows,curves check sweep sim sweep --fleet "$fleet" --plans "$plan" --capacities 1x --layouts v5,arena --calibration "$cal" --out "$dir/s"
keys=datacenter check tune sim tune --fleet "$fleet" --calibration "$cal" --out "$dir/t"
# One document with --churn as well (not a second one).
"$DNSARENA_LAB" sim layouts --entries 3000 --no-speed --churn --json >"$dir/layouts.out"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert {"layouts","churn","entries"} <= d.keys(), d.keys(); assert len(d["layouts"]) >= 7; print("layouts: one JSON document with layouts and churn")' "$dir/layouts.out"
