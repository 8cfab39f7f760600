#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A rank that dies mid-run makes `mpirun ... dnsarena-lab sim rollout` fail with a message
# naming it, within the timeout (no hang). Rank 1 aborts on its first curve
# (DNSARENA_MPI_ABORT_RANK, mpi_task_farm.hpp), then, in a second run, on its first
# fleet span (DNSARENA_MPI_ABORT_SPAN_RANK, distributed_run.cpp). Exit 77 (skipped) when
# MPI was not built.
set -uo pipefail
source "$(dirname "$0")/mpi_common.sh"
# $1: the failpoint variable. Rank 1 aborts where it says; the run must fail and say so.
dies() {
  local var=$1 start rc
  start=$(date +%s)
  rm -rf "$dir/out"
  env "$var=1" "${mpi_rank_env[@]}" timeout 60 "$MPIEXEC" -np 2 --oversubscribe -x "$var" "$DNSARENA_LAB" \
    sim rollout --fleet "$DATA/mpi_fleet.yaml" --plan "$DATA/tiny_plan.yaml" --out "$dir/out" >"$dir/log" 2>&1
  rc=$?
  cat "$dir/log"
  echo "$var: exit $rc after $(($(date +%s) - start)) s"
  [ "$rc" -ne 124 ] || { echo "FAIL: the run hung until the 60 s timeout"; exit 1; }
  [ "$rc" -ne 0 ] || { echo "FAIL: the run succeeded although rank 1 died"; exit 1; }
  grep -q "rank 1: $var=1: aborting on purpose" "$dir/log" || { echo "FAIL: no message from rank 1"; exit 1; }
  grep -Eq "process rank 1 .*exited on signal|rank 1 .*(abort|signal)" "$dir/log" ||
    { echo "FAIL: mpirun did not say that rank 1 died"; exit 1; }
  [ ! -e "$dir/out/rollout.csv" ] || { echo "FAIL: a CSV was written"; exit 1; }
  echo "rank 1 died ($var): the run failed (exit $rc) and said so"
}
dies DNSARENA_MPI_ABORT_RANK
dies DNSARENA_MPI_ABORT_SPAN_RANK
