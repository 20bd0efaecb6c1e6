#!/usr/bin/env bash
# Runs tests/mpi/mpi_gemm on two ranks under LD_PRELOAD=libblasoffload.so with the summary on, and checks that both
# ranks passed and printed a summary with their calls (on the GPU in gpu mode, with the GPU chosen by the node-local
# rank). Usage: run_mpi.sh MPIEXEC PROGRAM LIBBLASOFFLOAD WORKDIR cpu|gpu [N]
set -euo pipefail
mpiexec=$1 program=$2 lib=$3 work=$4 mode=$5 n=${6:-512}
mkdir -p "$work"
out=$work/mpi-$mode.txt
# Root (containers, CI) must say so; ranks talk through shared memory only (one node, no network stack needed).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_plm_rsh_agent=false OMPI_MCA_rmaps_base_oversubscribe=1
extra=()
[ "$mode" = gpu ] && extra=(-x BLASOFFLOAD_MODE=gpu)
set +e
timeout 150 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 --tag-output -x LD_PRELOAD="$lib" \
  -x BLASOFFLOAD_LOG=summary "${extra[@]}" "$program" "$n" >"$out" 2>&1
rc=$?
set -e
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc -eq 0 ] || fail "mpirun exited $rc"
grep -q '^\[1,0\]<stdout>:PASS: 2 ranks$' "$out" || fail "the ranks' results"
for r in 0 1; do
  grep -q "^\[1,$r\]<stdout>:rank $r of 2 .*(node-local rank $r)" "$out" || fail "rank $r did not report"
  grep -q "^\[1,$r\]<stderr>:blasoffload summary" "$out" || fail "rank $r printed no summary"
  grep -Eq "^\[1,$r\]<stderr>:  sgemm +1 " "$out" || fail "rank $r: its sgemm was not intercepted"
  if [ "$mode" = gpu ]; then
    grep -Eq "^\[1,$r\]<stderr>:  sgemm +1 +0 +1 " "$out" || fail "rank $r: sgemm did not run on the GPU"
    grep -q "^\[1,$r\]<stderr>:  GPU: blasoffload-cuda .*by OMPI_COMM_WORLD_LOCAL_RANK" "$out" ||
      fail "rank $r: the GPU was not chosen by the node-local rank"
  fi
done
echo "PASS: two ranks, each with its summary ($mode)"
