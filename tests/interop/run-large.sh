#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The differential test against Knot DNS at benchmark size: many names, every pass.
# Usage: tests/interop/run-large.sh [BUILD_DIR] [NAMES] [SEED]
#   BUILD_DIR  default ./build (built with the project's usual cmake command)
#   NAMES      generated names over the three content zones (default 5000; CI uses 300)
#   SEED       zone and 0x20 seed (default 1)
# Prints the mismatch table of each pass (also as JSON lines in $DNSARENA_INTEROP_JSON,
# default BUILD_DIR/interop-large.jsonl) and the wall time; exits non-zero on any
# mismatch, as the CI test does. DNSARENA_INTEROP_KEEP=1 keeps knotd's directory
# (/tmp/dnsarena-interop-*: knot.conf, the zone files, knotd.log) for a look afterwards.
set -euo pipefail
build=${1:-build}
export DNSARENA_INTEROP_NAMES=${2:-5000}
export DNSARENA_INTEROP_SEED=${3:-1}
export DNSARENA_INTEROP_JSON=${DNSARENA_INTEROP_JSON:-$build/interop-large.jsonl}
: > "$DNSARENA_INTEROP_JSON"
bin="$build/tests/interop/interop_tests"
[ -x "$bin" ] || { echo "no $bin: build first (cmake --build $build --target interop_tests dnsarena)" >&2; exit 2; }
start=$(date +%s%N)
status=0
"$bin" --durations yes "[interop]" || status=$?
wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "names=$DNSARENA_INTEROP_NAMES seed=$DNSARENA_INTEROP_SEED json=$DNSARENA_INTEROP_JSON wall_ms=$wall_ms status=$status"
exit $status
