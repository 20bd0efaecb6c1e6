#!/usr/bin/env bash
# Runs the GPU checks on a machine with a CUDA device and prints a summary (date, GPU, commit):
#   1. the GoogleTest GPU suite (every kernel configuration + the module's entry points);
#   2. Debian's reference BLAS test programs xblat1s/2s/3s with libblasoffload.so preloaded and
#      BLASOFFLOAD_MODE=gpu (every snrm2/sgemv/strsv/sgemm call they make runs on the GPU);
#   3. compute-sanitizer memcheck on a reduced test set;
#   4. the kernel timings next to cuBLAS.
# Usage: tests/gpu/run-on-device.sh BUILD_DIR [BLAS_CARRY_DIR]
#   BUILD_DIR holds libblasoffload.so, libblasoffload_cuda.so (at its top or under main/) and
#   tests/gpu/blasoffload_gpu_tests; BLAS_CARRY_DIR is what /work/shared/device/prepare-carry.sh made.
# Logs go to $OUT (or /tmp/blasoffload-gpu) as gpu-tests.log, xblat.log, memcheck.log, bench.log.
set -u
B=$(cd "${1:-build}" && pwd)
C=${2:-}
O=${OUT:-/tmp/blasoffload-gpu}
mkdir -p "$O"
LIBDIR=$B
[ -f "$B/libblasoffload_cuda.so" ] || LIBDIR=$B/main
T=$B/tests/gpu
export BO_GPU_TEST_MODULE=$LIBDIR/libblasoffload_cuda.so
declare -A RES

echo "=== 1. GPU test suite"
timeout ${BO_GTEST_TIMEOUT:-280} "$T/blasoffload_gpu_tests" --gtest_output=xml:"$O/gpu-tests.xml" >"$O/gpu-tests.log" 2>&1
RES[gtest]=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error" "$O/gpu-tests.log" | head -60

if [ -n "$C" ]; then
  echo "=== 2. reference BLAS test programs on the GPU path"
  L=$(cd "$C/usr/lib/x86_64-linux-gnu" && pwd)
  W=$(mktemp -d)
  : >"$O/xblat.log"
  for p in 1 2 3; do
    (cd "$W" && if [ $p = 1 ]; then inp=/dev/null; else inp=$L/blas/sblat$p.in; fi
     LD_LIBRARY_PATH=$L/blas:$L LD_PRELOAD=$LIBDIR/libblasoffload.so BLASOFFLOAD_MODE=gpu BLASOFFLOAD_LOG=summary \
       timeout 40 "$L/blas/xblat${p}s" <"$inp" >"xblat$p.out" 2>"xblat$p.err"
     echo "--- xblat${p}s rc=$?"; cat "xblat$p.out" xblat$p.err; cat sblat$p.out 2>/dev/null) >>"$O/xblat.log" 2>&1
  done
  grep -E "rc=|PASSED|FAIL|SUSPECT|FATAL|SNRM2|^  (sgemm|sgemv|strsv|snrm2) " "$O/xblat.log" | head -60
  RES[xblat]=$(grep -cE "FAIL|SUSPECT|FATAL" "$O/xblat.log")
fi

if command -v compute-sanitizer >/dev/null; then
  echo "=== 3. compute-sanitizer memcheck (reduced set)"
  timeout ${BO_MEMCHECK_TIMEOUT:-100} compute-sanitizer --tool memcheck --error-exitcode 99 "$T/blasoffload_gpu_tests" \
    --gtest_filter='GpuSnrm2.Module:GpuSgemv.BetaZeroNeverReadsY:GpuStrsv.Module:GpuSgemm.Module:GpuSgemm.BetaZeroNeverReadsC' \
    >"$O/memcheck.log" 2>&1
  RES[memcheck]=$?
  grep -E "ERROR SUMMARY|PASSED|FAILED|Invalid" "$O/memcheck.log" | head -20
fi

if [ -x "$T/blasoffload_gpu_bench" ]; then
  echo "=== 4. timings (default configurations vs cuBLAS, device-resident data)"
  timeout 90 "$T/blasoffload_gpu_bench" "$LIBDIR/libblasoffload_cuda.so" >"$O/bench.log" 2>&1
  RES[bench]=$?
  cat "$O/bench.log"
fi

echo "=== summary"
echo "date:   $(date -u +%FT%TZ)"
echo "gpu:    $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "commit: ${BO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "gtest:  rc=${RES[gtest]} $(grep -E '^\[  PASSED  \]|^\[  FAILED  \].*tests?, listed' "$O/gpu-tests.log" | tr '\n' ' ')"
[ -n "${RES[xblat]:-}" ] && echo "xblat:  FAIL/SUSPECT/FATAL lines=${RES[xblat]}; $(grep -cE 'PASSED THE|----- PASS -----' "$O/xblat.log") test passes"
[ -n "${RES[memcheck]:-}" ] && echo "memcheck: rc=${RES[memcheck]} $(grep -E 'ERROR SUMMARY' "$O/memcheck.log" | tail -1)"
[ -n "${RES[bench]:-}" ] && echo "bench:  rc=${RES[bench]}"
exit "${RES[gtest]}"
