#!/usr/bin/env bash
# Makes the folder tests/gpu/device-mpi.sh needs on the GPU machine (Ubuntu, no Debian packages, no registry):
# the built library, CUDA module, tables and blasoffload-info, the MPI test program, and Debian's OpenMPI with the
# reference BLAS unpacked from their .debs (dpkg -x, as ../shared/device/prepare-carry.sh does for BLAS). The RDMA
# transports (UCX, libfabric, verbs, PSM) are left out with the OpenMPI components that need them: the ranks share
# one node and talk through shared memory.
# Usage: tests/mpi/make-mpi-carry.sh BUILD_DIR CARRY_DIR     (run here, on Debian 12, after building)
set -euo pipefail
b=$(cd "$1" && pwd)
k=$2
[ -x "$b/tests/mpi/mpi_gemm" ] || { echo "make-mpi-carry: build tests/mpi/mpi_gemm first (needs libopenmpi-dev)" >&2; exit 2; }
rm -rf "$k" && mkdir -p "$k/lib" "$k/bin" "$k/deb"
cp -P "$b"/libblasoffload.so "$b"/libblasoffload.so.[0-9]* "$k/lib/"
[ -e "$b/libblasoffload_cuda.so" ] && cp "$b/libblasoffload_cuda.so" "$k/lib/"
[ -d "$b/tuned_params" ] && cp -r "$b/tuned_params" "$k/lib/"
cp "$b/blasoffload-info" "$b/tests/mpi/mpi_gemm" "$k/bin/"
cp "$(dirname "$0")/run_mpi.sh" "$k/bin/"
pkgs=(openmpi-bin openmpi-common libopenmpi3 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2
      libnuma1 libnl-3-200 libnl-route-3-200 libltdl7 libblas3 libgfortran5 libquadmath0 libatomic1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "${pkgs[@]}" >/dev/null)
for f in "$tmp"/*.deb; do dpkg -x "$f" "$k/deb"; done
L=$k/deb/usr/lib/x86_64-linux-gnu
# Components that need an RDMA library not carried would only print load errors.
rdma='libucp|libucs|libuct|libucm|libfabric|libibverbs|librdmacm|libpsm2|libpsm_infinipath|libcuda|libcudart'
for c in "$L"/openmpi/lib/openmpi3/*.so "$L"/pmix2/lib/pmix/*.so; do
  [ -e "$c" ] || continue
  if readelf -d "$c" 2>/dev/null | grep -Eq "NEEDED.*($rdma)"; then rm -f "$c"; fi
done
# Debian names mpirun through the alternatives system, which is not carried.
ln -sfn orterun "$k/deb/usr/bin/mpirun"
rm -rf "$k/deb/usr/share/man" "$k/deb/usr/share/doc" "$k/deb/usr/include"
find "$k" -type f \( -name "*.so*" -o -perm -u+x \) ! -name "*.sh" -exec strip --strip-debug {} + 2>/dev/null || true
git -C "$(dirname "$0")" rev-parse --short HEAD >"$k/COMMIT"
du -sh "$k"
