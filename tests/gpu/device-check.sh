#!/usr/bin/env bash
# The whole GPU check in one device call: the GPU GoogleTest suite, the unit tests in GPU mode (16 threads,
# interleaved operands), Debian's reference suites with BLASOFFLOAD_MODE=gpu, compute-sanitizer memcheck
# and racecheck, and the kernel benchmarks against cuBLAS (bench/kernels). Logs and a summary go to $OUT.
# SKIP_SANITIZER=1 / SKIP_BENCH=1 leave out the sanitizer runs / the benchmarks.
# Usage (on the GPU machine, from the repository root):
#   tests/gpu/device-check.sh CARRY BLAS_CARRY      CARRY made by tests/gpu/make-device-carry.sh,
#                                                    BLAS_CARRY by ../shared/device/prepare-carry.sh
set -u
root=$(pwd)
K=$(cd "$1" && pwd)
C=$(cd "$2" && pwd)
O=${OUT:-/tmp/blasoffload-gpu}
mkdir -p "$O"
L=$C/usr/lib/x86_64-linux-gnu
# The unit tests were built with /work/main/build as the library's path: point it at the carried build.
if [ ! -e /work/main/build/libblasoffload.so ]; then mkdir -p /work/main && ln -sfn "$K/lib" /work/main/build; fi
lib=/work/main/build/libblasoffload.so
export BO_GPU_TEST_MODULE=$K/lib/libblasoffload_cuda.so
declare -A RES

# Reference suites in the background (they are CPU-bound between many small GPU calls).
suites() {
  local d=$O/suites
  mkdir -p "$d"
  {
    echo "xblat1s blas1 -"
    echo "xblat2s blas $L/blas/sblat2.in"
    echo "xblat3s blas $L/blas/sblat3.in"
    echo "xscblat1 blas1 -"
    echo "xscblat2 blas $L/blas/sin2"
    echo "xscblat3 blas $L/blas/sin3"
    echo "xlintsts lapack $L/lapack/stest.in"
    for i in nep sep sec se2 ssg csd glm gqr gsv lse sbb ssb sgg sbal sgbak; do echo "xeigtsts lapack $L/lapack/$i.in"; done
  } | xargs -P 8 -L 1 bash -c '
      prog=$0 fmt=$1 inp=$2; dir=$(dirname "$(ls '"$L"'/*/$prog)"); name=$prog.$(basename "$inp" .in)
      args=(--workdir "'"$d"'/$name" --lib "'"$lib"'" --program "$dir/$prog" --format "$fmt"
            --ld-library-path "'"$L"'/blas:'"$L"'/lapack:'"$L"'" --set BLASOFFLOAD_MODE=gpu
            --expect-mode gpu --expect-gpu "^  GPU: blasoffload-cuda")
      [ "$inp" != "-" ] && args+=(--stdin "$inp")
      s=$(date +%s)
      timeout 500 bash '"$root"'/tests/lapack/run_suite.sh "${args[@]}" >"'"$d"'/$name.result" 2>&1; rc=$?
      gpu=$(awk '"'"'$1 ~ /^(sgemm|sgemv|strsv|snrm2|strsm|ssyrk)$/ {g += $4; f += $5} $1 ~ /^(strsm|ssyrk)$/ {l3 = l3 " " $1 "=" $4} END {printf "gpu=%d fallback=%d%s", g, f, l3}'"'"' "'"$d"'/$name/blasoffload.log" 2>/dev/null)
      case "$gpu" in gpu=0*) rc="$rc,no-gpu-calls" ;; esac
      echo "$name rc=$rc $gpu $(( $(date +%s) - s ))s" >>"'"$d"'/index.txt"'
}
suites &
suites_pid=$!

echo "=== GPU test suite"
timeout 280 "$K/gpu/blasoffload_gpu_tests" >"$O/gpu-tests.log" 2>&1
RES[gtest]=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  FAILED" "$O/gpu-tests.log" | head -40
grep -B3 -A12 "Failure" "$O/gpu-tests.log" | head -300 >"$O/gpu-failures.txt"
gzip -f "$O/gpu-tests.log"

echo "=== unit tests with BLASOFFLOAD_MODE=gpu (CPU-path-only subprocess tests excluded)"
LD_LIBRARY_PATH=$L/blas:$L BLASOFFLOAD_MODE=gpu BLASOFFLOAD_TEST_ALLOW_GPU=1 BLASOFFLOAD_LOG=summary \
  BLASOFFLOAD_LOG_FILE=$O/unit-gpu-summary.log timeout 200 "$K/unit/blasoffload_unit_tests" \
  --gtest_filter='-NoCpuBlas.*:Config.*:Silence.*' >"$O/unit-gpu.log" 2>&1
RES[unit]=$?
grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK" "$O/unit-gpu.log" | head -30
cat "$O/unit-gpu-summary.log"

if command -v compute-sanitizer >/dev/null && [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  f='GpuSnrm2.Module:GpuSgemv.BetaZeroNeverReadsY:GpuStrsv.Module:GpuSgemm.Module:GpuSgemm.BetaZeroNeverReadsC'
  for tool in memcheck racecheck; do
    echo "=== compute-sanitizer $tool"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$K/gpu/blasoffload_gpu_tests" --gtest_filter="$f" \
      >"$O/$tool.log" 2>&1
    RES[$tool]=$?
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$O/$tool.log" | head -5
  done
fi

wait $suites_pid
echo "=== reference suites, BLASOFFLOAD_MODE=gpu"
sort "$O/suites/index.txt"
for r in "$O"/suites/*.result; do grep -q '^PASS' "$r" || { echo "--- $(basename "$r")"; tail -15 "$r"; }; done
RES[suites]=$(grep -c -v ' rc=0 ' "$O/suites/index.txt")

if [ -x "$K/bench/blasoffload_bench_kernels" ] && [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "=== timings against cuBLAS (bench/kernels, device-resident data)"
  BO_BENCH_BIN=$K/bench/blasoffload_bench_kernels BO_CUDA_MODULE=$K/lib/libblasoffload_cuda.so \
    timeout 300 bash "$root/bench/kernels/run.sh" "$O/bench" >"$O/bench.log" 2>&1
  RES[bench]=$?
  grep -E "PASS|MISS" "$O/bench.log"
fi

echo "=== summary"
echo "date:   $(date -u +%FT%TZ)"
echo "gpu:    $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "commit: $(cat "$K/COMMIT" 2>/dev/null || echo unknown)"
for k in gtest unit memcheck racecheck suites bench; do echo "$k: ${RES[$k]:-not run}"; done
