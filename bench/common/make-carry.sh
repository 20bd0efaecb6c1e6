#!/usr/bin/env bash
# The one carry builder: packs what bench/common/device-run.sh needs on the GPU machine into one folder small enough to
# travel (the tree and the carried folders together must stay under 64 MiB): our two libraries, the tuned tables, the
# calibration tool, every benchmark program of the build tree (bench/*/blasoffload_*, kernels' and level3's too, with
# the Google Benchmark library the kernel benchmark loads from beside itself) and COMMIT, without debug info; and the
# BLAS/LAPACK/Fortran runtime libraries of a prepare-carry.sh --openblas folder as one .tar.xz (about 50 MB unpacked,
# too large to carry as it is).
# Usage: bench/common/make-carry.sh BUILD_DIR CARRY_DIR BLAS_CARRY_DIR
#   e.g. bench/common/make-carry.sh build .carry/bench ../shared/blas-carry   (.carry/ is git-ignored here)
#   BLAS_CARRY_DIR: ../shared/device/prepare-carry.sh --openblas BLAS_CARRY_DIR
# Then, in one device call with CARRY_DIR carried: bench/common/device-run.sh CARRY_DIR - SELECTION...
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "$1" && pwd)
k=$2
blas=$(cd "$3" && pwd)
L=usr/lib/x86_64-linux-gnu

for f in "$b/libblasoffload.so" "$blas/$L/openblas-pthread/libopenblas.so.0" "$blas/$L/lapack/liblapack.so.3"; do
  [ -e "$f" ] || { echo "make-carry.sh: missing $f" >&2; exit 2; }
done
rm -rf "$k"
mkdir -p "$k/lib" "$k/bin"
cp -P "$b"/libblasoffload.so "$b"/libblasoffload.so.[0-9]* "$k/lib/"
if [ -e "$b/libblasoffload_cuda.so" ]; then
  cp "$b/libblasoffload_cuda.so" "$k/lib/"
else
  echo "make-carry.sh: warning: no $b/libblasoffload_cuda.so: the GPU side cannot run" >&2
fi
# The module looks for tuned tables in tuned_params/ next to itself.
[ -d "$b/tuned_params" ] && cp -r "$b/tuned_params" "$k/lib/"
[ -x "$b/blasoffload-calibrate" ] && cp "$b/blasoffload-calibrate" "$k/bin/"
find "$b/bench" -mindepth 2 -maxdepth 2 -type f -name 'blasoffload_*' -perm -u+x -exec cp {} "$k/bin/" \;
# The shared libraries the build put beside a program (the kernel benchmark's Google Benchmark, RPATH $ORIGIN).
find "$b/bench" -mindepth 2 -maxdepth 2 -name 'lib*.so*' -exec cp -L {} "$k/bin/" \;
# The programs the descriptions name: each one missing is a benchmark that cannot run there.
mapfile -t programs < <(sed -n 's/^program *= *//p' "$here"/../*/bench.ini | sort -u)
for p in "${programs[@]}"; do
  [ -e "$k/bin/$p" ] || echo "make-carry.sh: warning: no $p in $b/bench (its benchmarks cannot run)" >&2
done
find "$k" -type f \( -name "*.so*" -o -perm -u+x \) -exec strip --strip-debug {} + 2>/dev/null || true
git -C "$here" rev-parse --short HEAD >"$k/COMMIT"
git -C "$here" diff --quiet HEAD -- || echo "+uncommitted" >>"$k/COMMIT"
cp "$k/COMMIT" "$k/bin/COMMIT"

# Only the libraries the benchmarks load: reference BLAS and LAPACK, OpenBLAS, the Fortran runtime (no test programs).
files=()
for pattern in "blas/libblas.so.3*" "lapack/liblapack.so.3*" "openblas-pthread/libblas.so.3" \
  "openblas-pthread/libopenblas.so.0" "openblas-pthread/libopenblas*.so" "libgfortran.so.5*" "libquadmath.so.0*"; do
  for f in "$blas"/$L/$pattern; do
    [ -e "$f" ] && files+=("${f#"$blas"/}")
  done
done
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u)
XZ_OPT=${XZ_OPT:--9 -T0} tar -C "$blas" -cJf "$k/blas-libs.tar.xz" "${files[@]}"
echo "make-carry.sh: $k: $(du -sh "$k" | cut -f1) in all; blas-libs.tar.xz $(du -h "$k/blas-libs.tar.xz" | cut -f1)" \
  "(unpacked $(cd "$blas" && du -ch "${files[@]}" | tail -1 | cut -f1), ${#files[@]} files)"
du -h "$k"/lib/*.so "$k"/bin/* "$k/blas-libs.tar.xz" | sed 's/^/  /'
kb=$(du -sk "$k" | cut -f1)
if [ "$kb" -gt $((64 * 1024)) ]; then
  echo "make-carry.sh: $((kb / 1024)) MiB: over the 64 MiB a device call carries" >&2
  exit 1
elif [ "$kb" -gt $((48 * 1024)) ]; then
  echo "make-carry.sh: warning: $((kb / 1024)) MiB leaves little of the 64 MiB for the working tree" >&2
fi
