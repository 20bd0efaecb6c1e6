#!/usr/bin/env bash
# The offload policy's check on the GPU machine in one device call: the GPU test suite, blasoffload-calibrate
# (CPU side on the carried BLAS, GPU side on this GPU), a LAPACK-based demo under auto mode (adaptive and frozen,
# every decision logged) and the unit tests in auto mode with that policy file. Logs go to $OUT.
# Usage (on the GPU machine, from the repository root):
#   tests/gpu/device-policy-check.sh CARRY BLAS_CARRY   (CARRY from tests/gpu/make-device-carry.sh,
#                                                        BLAS_CARRY from ../shared/device/prepare-carry.sh)
set -u
K=$(cd "$1" && pwd)
C=$(cd "$2" && pwd)
O=${OUT:-/tmp/blasoffload-policy}
mkdir -p "$O"
L=$C/usr/lib/x86_64-linux-gnu
CPU_BLAS=${CPU_BLAS:-$L/blas/libblas.so.3}
BLAS_PATH=$(dirname "$CPU_BLAS")
if [ ! -e /work/main/build/libblasoffload.so ]; then mkdir -p /work/main && ln -sfn "$K/lib" /work/main/build; fi
export BO_GPU_TEST_MODULE=$K/lib/libblasoffload_cuda.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"

echo "=== GPU test suite: the module's calls in both precisions (device-check.sh runs the whole suite)"
timeout 240 "$K/gpu/blasoffload_gpu_tests" --gtest_filter='Gpu*/*.Module:GpuRuntime/*:GpuRegistry.*' \
  >"$O/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/gpu-tests.log" | head -20

echo "=== blasoffload-calibrate ${CALIBRATE_ARGS:---quick}"
LD_LIBRARY_PATH=$BLAS_PATH:$L timeout 200 "$K/lib/blasoffload-calibrate" ${CALIBRATE_ARGS:---quick} \
  --cpu-blas="$CPU_BLAS" --out="$O/policy.json" 2>&1 | tee "$O/calibrate.log"
export BLASOFFLOAD_POLICY_FILE=$O/policy.json

for d in adaptive frozen; do
  echo "=== solve_demo under auto ($d)"
  LD_LIBRARY_PATH=$BLAS_PATH:$L/lapack:$L BLASOFFLOAD_DECISIONS=$d BLASOFFLOAD_LOG=calls \
    BLASOFFLOAD_LOG_FILE="$O/demo-$d.log" LD_PRELOAD=$K/lib/libblasoffload.so timeout 120 "$K/unit/solve_demo" 4000 \
    >"$O/demo-$d.out" 2>&1
  echo "rc=$? $(cat "$O/demo-$d.out" | tail -2 | tr '\n' ' ')"
  grep -c -- '-> gpu' "$O/demo-$d.log" | sed 's/^/gpu calls: /'
  grep -o '\[[a-zA-Z -]*' "$O/demo-$d.log" | sort | uniq -c
  grep -- '-> gpu' "$O/demo-$d.log" | head -3
  grep -A30 'summary' "$O/demo-$d.log" | head -30
done

echo "=== unit tests, auto mode with the calibrated policy"
LD_LIBRARY_PATH=$L/blas:$L BLASOFFLOAD_MODE=auto BLASOFFLOAD_TEST_ALLOW_GPU=1 BLASOFFLOAD_LOG=summary \
  BLASOFFLOAD_LOG_FILE=$O/unit-auto-summary.log timeout 200 "$K/unit/blasoffload_unit_tests" \
  --gtest_filter='-NoCpuBlas.*:Config.*:Silence.*' >"$O/unit-auto.log" 2>&1
echo "unit auto rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED" "$O/unit-auto.log" | head -20
grep -E "^  (sgemm|sgemv|strsv|snrm2|GPU|policy)" "$O/unit-auto-summary.log" | sort | uniq -c | head -20
