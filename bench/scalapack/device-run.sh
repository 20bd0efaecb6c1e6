#!/usr/bin/env bash
# Runs the ScaLAPACK benchmark (bench/scalapack/bench.ini) on the GPU machine in one device call, from the repository
# root, with the carry of tests/mpi/make-mpi-carry.sh (OpenMPI, ScaLAPACK, OpenBLAS, reference LAPACK, the library and
# blasoffload_scalapack in one .tar.xz): unpacks it (tests/mpi/carry-env.sh), then runs bench/common/device-run.sh with
# its OpenBLAS as the CPU BLAS; results in $OUT/scalapack/ (.md, .jsonl, .tar.gz with each rank's summary).
# Usage: bench/scalapack/device-run.sh CARRY [SELECTION ...]     (default: scalapack)
#   e.g. BO_RUN_ARGS="--set ranks=4" bench/scalapack/device-run.sh .carry/mpi scalapack@560
set -u
. tests/mpi/carry-env.sh "${1:?usage: device-run.sh CARRY [SELECTION ...]}" || exit 2
shift
[ $# -gt 0 ] || set -- scalapack
BO_BLAS_ROOT=$K/deb exec bash bench/common/device-run.sh "$K" - "$@"
