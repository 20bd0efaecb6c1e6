#!/usr/bin/env bash
# Issue 19's GPU acceptance in one device call: blasoffload-info names the GPU and the tuned table, and two MPI
# ranks (Debian's OpenMPI, carried) sharing the lent GPU each run sgemm/dgemm under LD_PRELOAD on it, each printing
# its summary with GPU calls and the GPU chosen by its node-local rank. Logs go to $OUT.
# Usage (on the GPU machine, from the repository root): tests/gpu/device-mpi.sh CARRY
#   CARRY made by tests/mpi/make-mpi-carry.sh BUILD_DIR CARRY
set -u
. tests/mpi/carry-env.sh "$1" || exit 2
O=${OUT:-/tmp/blasoffload-mpi}
mkdir -p "$O"
status=0

# 1. blasoffload-info on the GPU machine.
"$K/bin/blasoffload-info" --library="$K/lib/libblasoffload.so.0" >"$O/info.txt" 2>&1
echo "blasoffload-info exit $? (0: no problems, 1: problems listed)" >>"$O/info.txt"
cat "$O/info.txt"
grep -q "^  module: blasoffload-cuda .*GPU 0 of" "$O/info.txt" || { echo "FAIL: info does not name the GPU"; status=1; }
grep -Eq "^  module says: .*tuned" "$O/info.txt" || { echo "FAIL: info does not name the tuned table"; status=1; }

# 2. Two ranks on the one GPU, then the same on the CPU path for comparison.
LD_LIBRARY_PATH=$REF_LIBS:$LD_LIBRARY_PATH bash tests/mpi/run_mpi.sh "$D/bin/mpirun" "$K/bin/mpi_gemm" \
  "$K/lib/libblasoffload.so.0" "$O" gpu 2048 || status=1
LD_LIBRARY_PATH=$REF_LIBS:$LD_LIBRARY_PATH bash tests/mpi/run_mpi.sh "$D/bin/mpirun" "$K/bin/mpi_gemm" \
  "$K/lib/libblasoffload.so.0" "$O" cpu 512 || status=1
echo "device-mpi: $([ $status = 0 ] && echo PASS || echo FAIL)" | tee "$O/summary.txt"
exit $status
