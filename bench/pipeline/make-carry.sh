#!/usr/bin/env bash
# Packs what bench/pipeline/device-bench.sh needs on the GPU machine: bench/policy/make-carry.sh's folder (libraries,
# tuned tables, the carried OpenBLAS as blas-libs.tar.xz, COMMIT) plus blasoffload_bench_pipeline, without debug info.
# Usage: bench/pipeline/make-carry.sh BUILD_DIR CARRY_DIR BLAS_CARRY_DIR
#   e.g. bench/pipeline/make-carry.sh build .carry/pipeline ../shared/blas-carry   (.carry/ is git-ignored)
# BUILD_DIR must hold what bench/policy/make-carry.sh needs (libblasoffload.so, blasoffload_regret,
# blasoffload_lapack_drivers; libblasoffload_cuda.so for the GPU) and bench/pipeline/blasoffload_bench_pipeline.
# Then, in one device call with CARRY_DIR carried: bash bench/pipeline/device-bench.sh CARRY_DIR - [CASES]
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
prog=$1/bench/pipeline/blasoffload_bench_pipeline
[ -x "$prog" ] || { echo "make-carry.sh: missing $prog (build the blasoffload_bench_pipeline target)" >&2; exit 2; }
bash "$here/../policy/make-carry.sh" "$@"
cp "$prog" "$2/bin/"
strip --strip-debug "$2/bin/blasoffload_bench_pipeline" 2>/dev/null || true
echo "make-carry.sh: added $(du -h "$2/bin/blasoffload_bench_pipeline" | cut -f1) blasoffload_bench_pipeline;" \
  "$(du -sh "$2" | cut -f1) in all"
