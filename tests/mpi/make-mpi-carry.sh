#!/usr/bin/env bash
# Makes the carry tests/gpu/device-mpi.sh and device-scalapack.sh need on the GPU machine (Ubuntu, no Debian packages,
# no registry): the built library, CUDA module, tables and blasoffload-info, the MPI test program and the ScaLAPACK
# benchmark (bench/scalapack), and Debian's OpenMPI, ScaLAPACK (BLACS is inside it), ten of its test programs, the
# reference BLAS and LAPACK and OpenBLAS, unpacked from their .debs (dpkg -x, as ../shared/device/prepare-carry.sh does
# for BLAS). All of it travels as one mpi-carry.tar.xz (about 17 MB; 150 MB unpacked) beside COMMIT;
# tests/mpi/carry-env.sh unpacks it there. The RDMA transports (UCX, libfabric, verbs, PSM) are left out with the
# OpenMPI components that need them: the ranks share one node and talk through shared memory.
# Usage: tests/mpi/make-mpi-carry.sh BUILD_DIR CARRY_DIR     (run here, on Debian 12, after building)
set -euo pipefail
b=$(cd "$1" && pwd)
k=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$b/tests/mpi/mpi_gemm" ]; then
  echo "make-mpi-carry: build tests/mpi/mpi_gemm first (needs libopenmpi-dev)" >&2
  exit 2
fi
bench=$b/bench/scalapack/blasoffload_scalapack
[ -x "$bench" ] || echo "make-mpi-carry: warning: no $bench (libscalapack-openmpi-dev): no benchmark there" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
s=$tmp/mpi   # what the tar holds
mkdir -p "$s/lib" "$s/bin" "$s/deb"
cp -P "$b"/libblasoffload.so "$b"/libblasoffload.so.[0-9]* "$s/lib/"
[ -e "$b/libblasoffload_cuda.so" ] && cp "$b/libblasoffload_cuda.so" "$s/lib/"
[ -d "$b/tuned_params" ] && cp -r "$b/tuned_params" "$s/lib/"
cp "$b/blasoffload-info" "$b/tests/mpi/mpi_gemm" "$s/bin/"
[ -x "$bench" ] && cp "$bench" "$s/bin/"
[ -x "$b/tests/mpi/scalapack_submatrix" ] && cp "$b/tests/mpi/scalapack_submatrix" "$s/bin/"
pkgs=(openmpi-bin openmpi-common libopenmpi3 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2
      libnuma1 libnl-3-200 libnl-route-3-200 libltdl7 libblas3 libgfortran5 libquadmath0 libatomic1
      libscalapack-openmpi2.2 scalapack-mpi-test liblapack3 libopenblas0-pthread)
(cd "$tmp" && apt-get download "${pkgs[@]}" >/dev/null)
for f in "$tmp"/*.deb; do dpkg -x "$f" "$s/deb"; done
L=$s/deb/usr/lib/x86_64-linux-gnu
# Components that need an RDMA library not carried would only print load errors.
rdma='libucp|libucs|libuct|libucm|libfabric|libibverbs|librdmacm|libpsm2|libpsm_infinipath|libcuda|libcudart'
for c in "$L"/openmpi/lib/openmpi3/*.so "$L"/pmix2/lib/pmix/*.so; do
  [ -e "$c" ] || continue
  if readelf -d "$c" 2>/dev/null | grep -Eq "NEEDED.*($rdma)"; then rm -f "$c"; fi
done
# Debian names mpirun through the alternatives system, which is not carried.
ln -sfn orterun "$s/deb/usr/bin/mpirun"
# Only the ten test programs of the OpenMPI build travel (our inputs are in tests/mpi/scalapack/), and OpenBLAS without
# its own LAPACK (reference LAPACK routes LAPACK's BLAS calls through the library).
t=$L/scalapack/openmpi-tests
find "$L/scalapack" -mindepth 1 -maxdepth 1 ! -name openmpi-tests -exec rm -rf {} +
find "$t" -mindepth 1 ! -regex '.*/x[ds]\(lu\|llt\|qr\|ls\|inv\)' -exec rm -rf {} +
rm -f "$L"/openblas-pthread/liblapack.so.3
rm -rf "$s/deb/usr/share" "$s/deb/usr/include"
find "$s" -type f \( -name "*.so*" -o -perm -u+x \) ! -name "*.sh" -exec strip --strip-debug {} + 2>/dev/null || true
git -C "$here" rev-parse --short HEAD >"$s/COMMIT"
git -C "$here" diff --quiet HEAD -- || echo "+uncommitted" >>"$s/COMMIT"
rm -rf "$k" && mkdir -p "$k"
cp "$s/COMMIT" "$k/COMMIT"
XZ_OPT=${XZ_OPT:--9 -T2} tar -C "$tmp" -cJf "$k/mpi-carry.tar.xz" mpi
echo "make-mpi-carry: $k: $(du -sh "$k" | cut -f1) ($(du -sh "$s" | cut -f1) unpacked)"
