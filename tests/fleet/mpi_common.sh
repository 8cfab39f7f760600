# SPDX-License-Identifier: GPL-3.0-or-later
# Sourced by tests/fleet/mpi_*.sh: skip (exit 77) when MPI was not built; a temporary
# directory $dir removed at exit; mpirun allowed as root (Open MPI refuses otherwise)
# and kept to shared memory and loopback transports on this one machine.
if [ "${HAVE_MPI:-0}" != 1 ] || [ -z "${MPIEXEC:-}" ]; then
  echo "skipped: dnsarena was built without MPI (install libopenmpi-dev and reconfigure)"
  exit 77
fi
dir=$(mktemp -d /tmp/dnsarena-mpi-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# Under ASan (the CI's sanitizer suite) LeakSanitizer reports what Open MPI itself leaks
# at exit (ompi_op_base_op_select and its dlopen'd plugins, frames no suppression can
# name), so the mpirun launches get leak detection off: prefix them with
# "${mpi_rank_env[@]}". The single-process runs of the same commands in these scripts
# keep it, and so does the rest of the suite. (Harmless in a build without ASan.)
mpi_rank_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
