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
