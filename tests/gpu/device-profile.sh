#!/usr/bin/env bash
# Tuner smoke checks and kernel profiles on the GPU machine in one device call: `blasoffload-tune --quick` (timed),
# an interrupted run resumed from its cache, and Nsight Compute on the strsv and sgemm kernels at the sizes of the
# tuning issue's targets (one launch each, clocks left alone). Output in $OUT.
# Usage (repository root, GPU machine): tests/gpu/device-profile.sh CARRY
set -u
K=$(cd "$1" && pwd)
O=${OUT:-/tmp/blasoffload-profile}
mkdir -p "$O"
T=$K/tune/blasoffload-tune
M=$K/lib/libblasoffload_cuda.so
echo "=== blasoffload-tune --quick"
s=$(date +%s)
"$T" --module="$M" --quick --out="$O/quick.json" >"$O/quick.log" 2>&1
echo "rc=$? in $(( $(date +%s) - s )) s"
tail -2 "$O/quick.log"
echo "=== interrupted run (--max-seconds=1), then resumed"
"$T" --module="$M" --kernels=sgemv_n --max-seconds=1 --out="$O/resume.json" >"$O/resume1.log" 2>&1
echo "first rc=$? (3 = stopped, resumable); measurements cached: $(grep -c candidate "$O/resume.json.cache.jsonl")"
tail -1 "$O/resume1.log"
"$T" --module="$M" --kernels=sgemv_n --out="$O/resume.json" >"$O/resume2.log" 2>&1
echo "second rc=$?"
grep -E "resuming|complete" "$O/resume2.log"
if command -v ncu >/dev/null; then
  B=$K/bin/blasoffload_bench_kernels
  for c in "strsv_wave_kernel strsv_n/n:16384/" "sgemm_warp_kernel sgemm_nn/m:16384/n:16384/k:16384/" \
           "sgemm_warp_kernel sgemm_nn/m:16384/n:16384/k:64/"; do
    set -- $c
    echo "=== ncu $1 ($2)"
    BO_CUDA_MODULE=$M timeout 240 ncu --clock-control none --kernel-name "regex:$1" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
      --section LaunchStats "$B" --benchmark_filter="$2" --benchmark_min_time=0.01 >"$O/ncu-$1-$(echo "$2" | tr '/:' '__').txt" 2>&1
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|L2 Hit|Block Limit" \
      "$O/ncu-$1-$(echo "$2" | tr '/:' '__').txt" | head -24
  done
fi
