#!/usr/bin/env bash
# Sets up, builds, and runs the built-in example (a reference-LAPACK solve) under LD_PRELOAD=libblasoffload.so
# with the exit summary. Usage: tools/run-example.sh [n] (default 2000); BLASOFFLOAD_* variables pass through.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
L=/usr/lib/x86_64-linux-gnu
# Reference BLAS/LAPACK pinned: Debian's alternatives may point libblas.so.3 at OpenBLAS.
export LD_LIBRARY_PATH=$L/blas:$L/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BLASOFFLOAD_LOG=${BLASOFFLOAD_LOG:-summary}
LD_PRELOAD="$build/libblasoffload.so" "$build/examples/solve_demo" "${1:-2000}"
