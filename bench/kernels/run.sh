#!/usr/bin/env bash
# Runs the kernel benchmark suite once and writes OUTDIR/kernels-<gpu>-<date>-<commit>.json plus its report (.md).
# Usage: bench/kernels/run.sh OUTDIR [extra Google Benchmark arguments, e.g. --benchmark_filter='^sgemv_n/']
# Environment: BO_BENCH_BIN (the binary; default: next to this script, else build/bench/kernels/), BO_CUDA_MODULE
# (the module, else the binary looks beside itself), BO_BENCH_MIN_TIME (seconds of our timed calls per small case,
# default 0.1; big cases run a fixed count), BLASOFFLOAD_DEVICE, BO_READ_GBS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
outdir=$1
shift
mkdir -p "$outdir"

bin=${BO_BENCH_BIN:-}
if [ -z "$bin" ]; then
  for c in "$here/blasoffload_bench_kernels" "$here/../../build/bench/kernels/blasoffload_bench_kernels"; do
    if [ -x "$c" ]; then bin=$c; break; fi
  done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "run.sh: blasoffload_bench_kernels not found: set BO_BENCH_BIN" >&2
  exit 2
fi
bindir=$(cd "$(dirname "$bin")" && pwd)

slug() { tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${BLASOFFLOAD_DEVICE:-0}" 2>/dev/null |
  head -1 | slug || true)
gpu=${gpu:-gpu}
if [ -r "$bindir/COMMIT" ]; then
  commit=$(tr '\n' ' ' <"$bindir/COMMIT" | slug)
else
  commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
fi
base=$outdir/kernels-$gpu-$(date -u +%Y-%m-%d)-$commit
# The time budget (~3.5 minutes on an H100 for the whole suite, the double cases about 30 s of it): small cases stop
# after BO_BENCH_MIN_TIME seconds of ours-tuned time (their wall time is about 3x that plus probing), big ones run
# 5..50 iterations by themselves. A filter runs one precision: --benchmark_filter='^d' (or '^s').
rc=0
"$bin" --benchmark_out="$base.json" --benchmark_out_format=json \
  --benchmark_min_time="${BO_BENCH_MIN_TIME:-0.1}" "$@" || rc=$?
if [ -s "$base.json" ]; then
  python3 "$here/report.py" "$base.json" --md "$base.md"
  echo "run.sh: wrote $base.json and $base.md"
fi
exit $rc
