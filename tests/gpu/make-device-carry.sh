#!/usr/bin/env bash
# Copies what the device scripts (tests/gpu/device-check.sh, tests/gpu/device-tune.sh) need from a build into a
# small folder to carry to the GPU machine (the whole build tree is too large to travel).
# Usage: tests/gpu/make-device-carry.sh BUILD_DIR CARRY_DIR
set -euo pipefail
b=$(cd "$1" && pwd)
k=$2
keep_cache=""
[ -d "$k/cache" ] && keep_cache=$(mktemp -d) && cp -r "$k/cache/." "$keep_cache/"
rm -rf "$k" && mkdir -p "$k/lib" "$k/gpu" "$k/unit" "$k/tune" "$k/bin" "$k/cache"
# The library with its SONAME links (libblasoffload.so -> .so.0 -> .so.0.1.0): programs name .so.0.
cp -P "$b"/libblasoffload.so "$b"/libblasoffload.so.[0-9]* "$b/libblasoffload_cuda.so" "$k/lib/"
[ -d "$b/tuned_params" ] && cp -r "$b/tuned_params" "$k/lib/"
cp "$b/tests/gpu/blasoffload_gpu_tests" "$k/gpu/"
cp "$b/tests/unit/blasoffload_unit_tests" "$b/tests/unit/blas_probe" "$k/unit/"
cp "$b/blasoffload-tune" "$k/tune/"
# The calibration tool finds the CUDA module next to itself.
cp "$b/blasoffload-calibrate" "$k/lib/"
cp "$b/examples/solve_demo" "$k/unit/"
[ -x "$b/tests/gpu/blasoffload_device_operands" ] && cp "$b/tests/gpu/blasoffload_device_operands" "$k/gpu/"
# The LAPACKE and Fortran programs of every LAPACK routine (tests/lapack_programs/device-run.sh).
cp "$b/tests/lapack_programs/lapacke_check" "$b/tests/lapack_programs/lapack_check" "$k/bin/"
# The complex part 2's program (tests/gpu/device-lapack2-complex.sh).
[ -x "$b/tests/lapack_programs/lapack2_complex_check" ] && cp "$b/tests/lapack_programs/lapack2_complex_check" "$k/bin/"
if [ -x "$b/bench/kernels/blasoffload_bench_kernels" ]; then
  cp "$b/bench/kernels/blasoffload_bench_kernels" "$b/bench/kernels/libbenchmark.so.1debian" "$k/bin/"
fi
if [ -x "$b/bench/level3/blasoffload_bench_level3" ]; then
  cp "$b/bench/level3/blasoffload_bench_level3" "$k/bin/"
fi
[ -n "$keep_cache" ] && cp -r "$keep_cache/." "$k/cache/"
# Debug info stays home: the carry limit is 64 MiB with the BLAS test programs.
find "$k" -type f \( -name "*.so*" -o -perm -u+x \) -exec strip --strip-debug {} + 2>/dev/null || true
git -C "$(dirname "$0")" rev-parse --short HEAD >"$k/COMMIT"
git -C "$(dirname "$0")" diff --quiet HEAD -- || echo "+uncommitted" >>"$k/COMMIT"
# bench/common/run.py names results after the COMMIT beside the programs.
cp "$k/COMMIT" "$k/bin/COMMIT"
du -sh "$k"
