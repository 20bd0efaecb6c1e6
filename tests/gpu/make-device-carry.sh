#!/usr/bin/env bash
# Copies what tests/gpu/device-check.sh needs from a build into a small folder to carry to the GPU machine
# (the whole build tree is too large to travel). Usage: tests/gpu/make-device-carry.sh BUILD_DIR CARRY_DIR
set -euo pipefail
b=$(cd "$1" && pwd)
k=$2
rm -rf "$k" && mkdir -p "$k/lib" "$k/gpu" "$k/unit"
cp "$b/libblasoffload.so" "$b/libblasoffload_cuda.so" "$k/lib/"
cp "$b/tests/gpu/blasoffload_gpu_tests" "$k/gpu/"
[ -x "$b/tests/gpu/blasoffload_gpu_bench" ] && cp "$b/tests/gpu/blasoffload_gpu_bench" "$k/gpu/"
cp "$b/tests/unit/blasoffload_unit_tests" "$b/tests/unit/blas_probe" "$k/unit/"
git -C "$(dirname "$0")" rev-parse --short HEAD >"$k/COMMIT"
git -C "$(dirname "$0")" diff --quiet HEAD -- || echo "+uncommitted" >>"$k/COMMIT"
du -sh "$k"
