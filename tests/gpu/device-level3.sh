#!/usr/bin/env bash
# The trsm/syrk check in one device call: blasoffload-tune over the strsm and ssyrk grids (updating the carried
# table, which the rest then uses), the GPU suite's Level 3 tests (trsm and syrk, both precisions), and the Level 3
# benchmark against cuBLAS (bench/level3, both precisions). Everything lands in $OUT; the reference suites are device-check.sh's.
# Usage (GPU machine, repository root): tests/gpu/device-level3.sh CARRY
set -u
K=$(cd "$1" && pwd)
O=${OUT:-/tmp/blasoffload-level3}
mkdir -p "$O"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/-$//')
echo "=== blasoffload-tune --kernels=strsm,ssyrk ($(date -u +%T))"
cp "$K/lib/tuned_params/$gpu.json" "$O/$gpu.json"
timeout 240 "$K/tune/blasoffload-tune" --module="$K/lib/libblasoffload_cuda.so" --out="$O/$gpu.json" \
  --cache="$O/tune-cache.jsonl" --kernels=strsm,ssyrk >"$O/tune.log" 2>&1
echo "tune rc=$?"
grep -E "INVALID" "$O/tune.log" | grep -v "out of memory" | head -20
[ -s "$O/$gpu.json" ] && cp "$O/$gpu.json" "$K/lib/tuned_params/"
echo "=== GPU test suite, Level 3 ($(date -u +%T))"
BO_GPU_TEST_MODULE=$K/lib/libblasoffload_cuda.so timeout 300 "$K/gpu/blasoffload_gpu_tests" \
  --gtest_filter='Level3*' >"$O/gpu-tests.log" 2>&1
echo "gtest rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" "$O/gpu-tests.log" | head -40
grep -B3 -A12 "Failure" "$O/gpu-tests.log" | head -200 >"$O/gpu-failures.txt"
gzip -kf "$O/gpu-tests.log"
echo "=== bench/level3 ($(date -u +%T))"
timeout 260 python3 bench/common/run.py --carry="$K" --out="$O/bench" "level3@${BENCH_BUDGET_S:-200}" \
  >"$O/bench.log" 2>&1
echo "bench rc=$?"
grep -E "PASS|MISS|noise" "$O/bench.log" | head -30
echo "done $(date -u +%T); commit $(cat "$K/COMMIT")"
