#!/usr/bin/env bash
# Sets up, builds only what the example needs, and runs it: a reference-LAPACK solve under
# LD_PRELOAD=libblasoffload.so, with the exit summary. Usage: tools/run-example.sh [n] (default 2000);
# BLASOFFLOAD_* variables pass through.
# It builds in build-example/ ($EXAMPLE_BUILD_DIR): the library, the example and, where a GPU is present, the CUDA
# module for that GPU's architecture only. Without a GPU the module is not built: the library would never load it, and
# building it for every supported GPU takes most of the time of a full build. The full build (every test and
# benchmark, the module for every supported GPU: what packaging wants) is tools/build.sh's, in build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${EXAMPLE_BUILD_DIR:-$root/build-example}
bash "$root/tools/install-deps.sh"

# The GPUs present, as CMake architectures ("9.0" -> 90); none when there is no driver or no device.
archs=""
if command -v nvidia-smi >/dev/null 2>&1; then
  archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | grep -E '^[0-9]+$' |
    sort -u | paste -sd';' || true)
fi
have_nvcc=0
{ command -v nvcc || [ -x /usr/local/cuda/bin/nvcc ]; } >/dev/null 2>&1 && have_nvcc=1
targets=(blasoffload solve_demo)
if [ -n "$archs" ] && [ "$have_nvcc" = 1 ]; then
  cuda=(-DBLASOFFLOAD_ENABLE_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$archs")
  targets+=(blasoffload_cuda blasoffload_tuned_tables)
  echo "run-example: building the library, the example and the CUDA module for the GPU present (sm_${archs//;/, sm_})"
else
  cuda=(-DBLASOFFLOAD_ENABLE_CUDA=OFF)
  why="no GPU present"
  [ -n "$archs" ] && why="no CUDA toolkit (nvcc)"
  echo "run-example: $why: building the library and the example (the CPU path; the CUDA module is not needed)"
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
  -DBLASOFFLOAD_BUILD_TESTS=OFF -DBLASOFFLOAD_BUILD_BENCH=OFF "${cuda[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

L=/usr/lib/x86_64-linux-gnu
# Reference BLAS/LAPACK pinned: Debian's alternatives may point libblas.so.3 at OpenBLAS.
export LD_LIBRARY_PATH=$L/blas:$L/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BLASOFFLOAD_LOG=${BLASOFFLOAD_LOG:-summary}
LD_PRELOAD="$build/libblasoffload.so" "$build/examples/solve_demo" "${1:-2000}"
