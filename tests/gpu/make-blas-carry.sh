#!/usr/bin/env bash
# Unpacks Debian's reference BLAS/LAPACK, their test programs of every precision (s, d, c, z) with their inputs, the
# Fortran runtime and (with --openblas) OpenBLAS into a folder that travels to the GPU machine (Ubuntu, no Debian
# packages there). The same layout as the shared prepare-carry.sh, which keeps the single-precision programs only.
# Usage: tests/gpu/make-blas-carry.sh [--openblas] DIR
# There: L=DIR/usr/lib/x86_64-linux-gnu; reference BLAS + LAPACK: LD_LIBRARY_PATH=$L/blas:$L/lapack:$L;
#        OpenBLAS: LD_LIBRARY_PATH=$L/openblas-pthread:$L/lapack:$L. Keep DIR ignored by git; under 64 MiB in all.
set -euo pipefail
openblas=0
if [ "${1:-}" = "--openblas" ]; then
  openblas=1
  shift
fi
dir=${1:?usage: make-blas-carry.sh [--openblas] DIR}
pkgs=(libblas3 liblapack3 liblapacke libgfortran5 libquadmath0 liblapack-test libblas-test libtmglib3)
[ $openblas = 1 ] && pkgs+=(libopenblas0-pthread)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "${pkgs[@]}" >/dev/null)
mkdir -p "$dir"
for f in "$tmp"/*.deb; do dpkg -x "$f" "$dir"; done
L="$dir/usr/lib/x86_64-linux-gnu"
rm -rf "$dir/usr/share"
# OpenBLAS's own LAPACK stays out: reference LAPACK routes LAPACK's BLAS calls through us.
rm -f "$L"/openblas-pthread/liblapack.so.3
# The mixed-precision and RFP drivers stay behind (nothing of ours is theirs); the complex programs (5.5 MB) travel.
rm -f "$L"/lapack/xlintstds "$L"/lapack/xlintstzc "$L"/lapack/xlintstrf*
du -sh "$dir"
