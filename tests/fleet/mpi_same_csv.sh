#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `mpirun -np 2 dnsarena-lab sim rollout|sweep` writes the same CSV, byte for byte, as one
# process (sim/fleet/distributed_run.hpp): curves and fleet steps computed on both ranks. Exit 77 (skipped) when MPI was not built.
# Env: DNSARENA_LAB (the dnsarena-lab program), HAVE_MPI, MPIEXEC, DATA (tests/fleet/data).
set -euo pipefail
source "$(dirname "$0")/mpi_common.sh"
mpi() { "${mpi_rank_env[@]}" timeout 60 "$MPIEXEC" -np 2 --oversubscribe "$DNSARENA_LAB" "$@"; }
fleet="$DATA/mpi_fleet.yaml" plan="$DATA/tiny_plan.yaml" cal="$dir/calibration.json"

"$DNSARENA_LAB" sim rollout --fleet "$fleet" --plan "$plan" --out "$dir/one" --calibration "$cal" >"$dir/one.log"
mpi sim rollout --fleet "$fleet" --plan "$plan" --out "$dir/two" --calibration "$cal" >"$dir/two.log" 2>"$dir/two.err"
cat "$dir/two.err"
cmp "$dir/one/rollout.csv" "$dir/two/rollout.csv"
# Both ranks computed curves, and both walked fleet spans (the farm's report on rank 0's
# stderr): the CSV above is the same although rank 1 walked some of its steps.
grep -Eq "mpi: 2 ranks; curves computed per rank \(threads\): 0:[0-9]+ \([0-9]+\) 1:[1-9]" "$dir/two.err"
grep -Eq "fleet spans walked per rank: 0:[0-9]+ 1:[1-9]" "$dir/two.err"
echo "rollout: same CSV ($(wc -l <"$dir/one/rollout.csv") lines) with 1 and 2 ranks"

sweep=(sim sweep --fleet "$fleet" --plans "$plan" --capacities 0.5x,1x --layouts v5,arena --calibration "$cal")
"$DNSARENA_LAB" "${sweep[@]}" --out "$dir/sweep1" >"$dir/sweep1.log"
mpi "${sweep[@]}" --out "$dir/sweep2" >"$dir/sweep2.log" 2>"$dir/sweep2.err"
cmp "$dir/sweep1/sweep.csv" "$dir/sweep2/sweep.csv"
rows=$(($(wc -l <"$dir/sweep1/sweep.csv") - 1))
[ "$rows" -eq 8 ] || { echo "sweep: expected 2 datacenters x 2 capacities x 2 layouts = 8 rows, got $rows"; exit 1; }
echo "sweep: same CSV ($rows rows) with 1 and 2 ranks"
