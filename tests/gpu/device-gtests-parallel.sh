#!/usr/bin/env bash
# Runs parts of the GPU test suite side by side on a machine of several GPUs, one gtest filter per GPU
# (CUDA_VISIBLE_DEVICES), each under its own time limit, and prints one PASS/FAIL line per part; logs go to $OUT.
# Usage (repository root, GPU machine): tests/gpu/device-gtests-parallel.sh CARRY SECONDS FILTER...
#   CARRY    made by tests/gpu/make-device-carry.sh; SECONDS: each part's limit; FILTER i runs on GPU i mod count.
# Environment: BO_PARALLEL_UNIT=FILTER also runs the unit tests in gpu mode with that filter on the next free GPU.
set -u
K=$(cd "$1" && pwd)
limit=$2
shift 2
O=${OUT:-/tmp/blasoffload-gtests}
mkdir -p "$O"
ngpu=$(nvidia-smi --list-gpus | wc -l)
[ "$ngpu" -ge 1 ] || { echo "no GPU"; exit 3; }
# The unit tests were built with /work/main/build as the library's path: point it at the carried build.
if [ ! -e /work/main/build/libblasoffload.so ]; then mkdir -p /work/main && ln -sfn "$K/lib" /work/main/build; fi
export BO_GPU_TEST_MODULE=$K/lib/libblasoffload_cuda.so
pids=() tags=()
i=0
for filter in "$@"; do
  tag=part$i
  # setsid + timeout: a part past its limit is killed with everything it started
  CUDA_VISIBLE_DEVICES=$((i % ngpu)) setsid timeout -k 10 "$limit" "$K/gpu/blasoffload_gpu_tests" \
    --gtest_filter="$filter" >"$O/gpu-$tag.log" 2>&1 &
  pids+=($!) tags+=("$tag:$filter")
  i=$((i + 1))
done
if [ -n "${BO_PARALLEL_UNIT:-}" ]; then
  CUDA_VISIBLE_DEVICES=$((i % ngpu)) BLASOFFLOAD_MODE=gpu BLASOFFLOAD_TEST_ALLOW_GPU=1 setsid timeout -k 10 "$limit" \
    "$K/unit/blasoffload_unit_tests" --gtest_filter="$BO_PARALLEL_UNIT" >"$O/unit-gpu.log" 2>&1 &
  pids+=($!) tags+=("unit:$BO_PARALLEL_UNIT")
fi
status=0
for q in "${!pids[@]}"; do
  wait "${pids[$q]}"
  rc=$?
  t=${tags[$q]}
  log=$O/gpu-${t%%:*}.log
  [ "${t%%:*}" = unit ] && log=$O/unit-gpu.log
  passed=$(grep -c "^\[       OK" "$log")
  failed=$(grep -c "^\[  FAILED  \] .*(" "$log")
  skipped=$(grep -c "^\[  SKIPPED \] .*(" "$log")
  verdict=PASS
  { [ "$rc" != 0 ] || [ "$passed" = 0 ]; } && verdict=FAIL && status=1
  echo "$verdict ${t#*:} rc=$rc passed=$passed failed=$failed skipped=$skipped" | tee -a "$O/summary.txt"
  grep "^\[  FAILED  \] .*(" "$log" | head -20
done
exit $status
