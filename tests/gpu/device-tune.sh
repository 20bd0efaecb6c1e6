#!/usr/bin/env bash
# Tuning on the GPU machine in one device call: blasoffload-tune over the full grid (resuming from CARRY/cache
# when an earlier call was cut short), then the kernel benchmark suite with the new table, then a run of the
# library that shows in its log which table it picked. Everything lands in $OUT.
# Usage (repository root, GPU machine): tests/gpu/device-tune.sh CARRY [--quick] [--max-seconds=S]
set -u
K=$(cd "$1" && pwd)
shift
O=${OUT:-/tmp/blasoffload-tune}
mkdir -p "$O"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/-$//')
table=$O/$gpu.json
cache=$O/$gpu.json.cache.jsonl
[ -f "$K/cache/$gpu.json.cache.jsonl" ] && cp "$K/cache/$gpu.json.cache.jsonl" "$cache"
# A run over some kernels (--kernels=...) updates the shipped table for this GPU.
[ ! -f "$table" ] && [ -f "$K/lib/tuned_params/$gpu.json" ] && cp "$K/lib/tuned_params/$gpu.json" "$table"
echo "=== blasoffload-tune $* ($(date -u +%T))"
"$K/tune/blasoffload-tune" --module="$K/lib/libblasoffload_cuda.so" --out="$table" --cache="$cache" "$@" \
  >"$O/tune.log" 2>&1
rc=$?
echo "tune rc=$rc"
grep -E "^blasoffload-tune|INVALID" "$O/tune.log" | head -40
tail -5 "$O/tune.log"
if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
  mkdir -p "$K/lib/tuned_params" && cp "$table" "$K/lib/tuned_params/"
fi
if [ -x "$K/bin/blasoffload_bench_kernels" ] && [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "=== bench/kernels with the new table ($(date -u +%T))"
  # The runner stops the suite 10 s before the call's timeout, so that a stopped run still gets its report.
  bench_s=${BENCH_TIMEOUT:-200}
  timeout "$bench_s" python3 bench/common/run.py --carry="$K" --out="$O" "kernels@$((bench_s - 10))" \
    --args="${BENCH_ARGS:-}" >"$O/bench.log" 2>&1
  echo "bench rc=$?"
  grep -E "PASS|MISS|geomean|min " "$O/bench.log" | head -40
fi
echo "=== the library picks the table (BLASOFFLOAD_LOG=summary, a GPU-mode run of the unit tests' gemv cases)"
if [ ! -e /work/main/build/libblasoffload.so ]; then mkdir -p /work/main && ln -sfn "$K/lib" /work/main/build; fi
L=${BLAS_LIB_DIR:-}
[ -n "$L" ] && export LD_LIBRARY_PATH=$L/blas:$L
BLASOFFLOAD_MODE=gpu BLASOFFLOAD_TEST_ALLOW_GPU=1 BLASOFFLOAD_LOG=summary timeout 120 "$K/unit/blasoffload_unit_tests" \
  --gtest_filter='Gemv*' 2>&1 | grep -E "tuned parameters|PASSED|FAILED|GPU:" | head
echo "done $(date -u +%T)"
