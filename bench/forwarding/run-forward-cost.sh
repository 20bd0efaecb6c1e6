#!/usr/bin/env bash
# Builds and runs bench/forwarding/forward_cost.c against a built libblasoffload.so and the reference BLAS, and keeps
# its raw output in bench/results/forwarding/<host>-<date>-<commit>.txt (with the CPU's name).
#
# bench/forwarding/run-forward-cost.sh BUILD_DIR [CPU_BLAS [CALLS [REPEATS]]]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
cpu=${2:-/usr/lib/x86_64-linux-gnu/blas/libblas.so.3}
lib=$build/libblasoffload.so
exe=$build/forward_cost
cc -O2 -Wall -o "$exe" "$here/bench/forwarding/forward_cost.c" -ldl
commit=$(git -C "$here" rev-parse --short HEAD)
out=$here/bench/results/forwarding/$(hostname -s)-$(date +%Y-%m-%d)-$commit.txt
mkdir -p "$(dirname "$out")"
{
  echo "host: $(hostname -s); cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); commit: $commit"
  echo "command: BLASOFFLOAD_CPU_BLAS=$cpu $exe $lib $cpu ${3:-} ${4:-}"
  env -u LD_PRELOAD BLASOFFLOAD_CPU_BLAS="$cpu" "$exe" "$lib" "$cpu" ${3:+"$3"} ${4:+"$4"}
} | tee "$out"
echo "written: $out"
