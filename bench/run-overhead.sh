#!/usr/bin/env bash
# Runs the forwarding-overhead benchmark (no GPU needed) and stores its raw JSON and report in OUTDIR (default
# bench/results/), named by machine, date and commit. Usage: bench/run-overhead.sh [OUTDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
tag="$(hostname)-$(date -u +%Y-%m-%d)-$(git -C "$root" rev-parse --short HEAD)"
outdir=${1:-$root/bench/results}
mkdir -p "$outdir"
out="$outdir/overhead-$tag"
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas "$build/bench/bench_forwarding_overhead" \
  --benchmark_repetitions=10 --benchmark_min_time=0.1 --benchmark_out="$out.json" --benchmark_out_format=json >/dev/null
{
  echo "machine: $(hostname), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  commit: $(git -C "$root" rev-parse --short HEAD)  CPU BLAS: reference libblas 3.11"
  python3 "$root/bench/overhead_report.py" "$out.json"
} | tee "$out.txt"
