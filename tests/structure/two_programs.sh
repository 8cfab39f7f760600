#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The two programs: dnsarena (the daemon) carries no simulator, TBB, MPI or lab bench, at
# run time as at link time; dnsarena-lab holds `sim` and the lab benches and runs the
# dnsarena beside its own executable (else the one on PATH, else a clear error).
# Env: DNSARENA, DNSARENA_LAB (the two built programs).
set -euo pipefail
dir=$(mktemp -d /tmp/dnsarena-two-programs-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The daemon's shared libraries: none of the simulator's.
ldd "$DNSARENA" > "$dir/ldd"
if grep -Ei "libtbb|libmpi|libopen-(rte|pal)|libhwloc" "$dir/ldd"; then fail "the daemon links the above"; fi
echo "dnsarena: $(wc -l < "$dir/ldd") lines of ldd, $(stat -c %s "$DNSARENA") bytes"

# Each program's command table.
"$DNSARENA" --help > "$dir/help"
for c in serve stats check flush dump restore top migrate bench; do
  grep -Eq "^  $c( |$)" "$dir/help" || fail "dnsarena --help lists no $c"
done
if grep -Eq "^  sim( |$)" "$dir/help"; then fail "dnsarena has a sim command"; fi
"$DNSARENA_LAB" --help > "$dir/lab-help"
for c in sim bench; do grep -Eq "^  $c( |$)" "$dir/lab-help" || fail "dnsarena-lab --help lists no $c"; done
if grep -Eq "^  serve( |$)" "$dir/lab-help"; then fail "dnsarena-lab has a serve command"; fi
"$DNSARENA_LAB" bench --help > "$dir/lab-bench-help"
for c in serve attack torture; do
  grep -Eq "^  $c( |$)" "$dir/lab-bench-help" || fail "dnsarena-lab bench --help lists no $c"
done
# A command of the other program says where it is.
status=0; "$DNSARENA" sim rollout --fleet x > "$dir/moved.out" 2>&1 || status=$?
[[ $status == 2 ]] && grep -q "is a command of dnsarena-lab" "$dir/moved.out" || { cat "$dir/moved.out"; fail "dnsarena sim"; }
status=0; "$DNSARENA" bench serve > "$dir/moved.out" 2>&1 || status=$?
[[ $status == 2 ]] && grep -q "is a command of dnsarena-lab" "$dir/moved.out" || { cat "$dir/moved.out"; fail "dnsarena bench serve"; }
status=0; "$DNSARENA_LAB" serve > "$dir/moved.out" 2>&1 || status=$?
[[ $status == 2 ]] && grep -q "is a command of dnsarena " "$dir/moved.out" || { cat "$dir/moved.out"; fail "dnsarena-lab serve"; }

# A copy of the lab alone in a directory, with no dnsarena on PATH: a clear error.
mkdir "$dir/alone" "$dir/empty"
cp "$DNSARENA_LAB" "$dir/alone/dnsarena-lab"
status=0
PATH="$dir/empty" "$dir/alone/dnsarena-lab" bench attack --quick --only fill > "$dir/alone.out" 2>&1 || status=$?
[[ $status != 0 ]] || fail "dnsarena-lab ran without a daemon"
grep -q "dnsarena not found: neither $dir/alone/dnsarena nor on PATH ($dir/empty)" "$dir/alone.out" \
  || { cat "$dir/alone.out"; fail "no clear error for a missing daemon"; }

# A daemon beside the lab (a stand-in recording how it was run) is the one run, though
# another is on PATH.
printf '#!/bin/sh\necho "$@" >> %s/beside.calls\nexit 3\n' "$dir" > "$dir/alone/dnsarena"
printf '#!/bin/sh\necho "$@" >> %s/path.calls\nexit 3\n' "$dir" > "$dir/empty/dnsarena"
chmod +x "$dir/alone/dnsarena" "$dir/empty/dnsarena"
PATH="$dir/empty" "$dir/alone/dnsarena-lab" bench attack --quick --only fill > "$dir/beside.out" 2>&1 || true
grep -q "^serve " "$dir/beside.calls" || { cat "$dir/beside.out"; fail "the daemon beside the lab was not run"; }
[[ ! -e $dir/path.calls ]] || fail "the daemon on PATH was run, not the one beside the lab"
echo "two programs: the daemon is simulator-free; the lab runs the daemon beside it"
