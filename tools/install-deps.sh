#!/usr/bin/env bash
# Installs what building and testing blasoffload needs on Debian 12 (run as root). The CUDA toolkit is not
# a Debian package of the right version: it must already be in /usr/local/cuda (nvcc, CUDA runtime).
set -euo pipefail
pkgs=(cmake g++ gfortran make python3 libgtest-dev libbenchmark-dev libblas-dev liblapack-dev
      libblas-test liblapack-test libtmglib3 libopenblas0-pthread nlohmann-json3-dev python3-matplotlib
      linux-libc-dev pkgconf openmpi-bin libopenmpi-dev scalapack-mpi-test libscalapack-openmpi-dev
      python3-numpy python3-scipy python3-pytest python3-hypothesis liblapacke-dev
      libblas64-3 liblapack64-3 libblas64-test liblapack64-test util-linux)
# linux-libc-dev: <linux/userfaultfd.h> (host registrations); g++ pulls it in, named for clarity.
# pkgconf: the install test builds a program with pkg-config; OpenMPI: the MPI test (tests/mpi); ScaLAPACK's test
# programs (OpenMPI build) and its library: tests/mpi's ScaLAPACK tests and bench/scalapack.
# NumPy/SciPy/pytest/hypothesis: their linalg suites under the library (tests/python); LAPACKE: tests/lapack_programs.
# The 64-bit-index reference BLAS/LAPACK and their test programs: the ILP64 library as the libblas64.so.3 alternative
# (tests/lapack, configuration alt64); util-linux: unshare and runuser for the alternatives' tests (tests/alternatives).
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: no CUDA toolkit (nvcc) found: the CUDA module will not be built; the CPU path still is." >&2
fi
