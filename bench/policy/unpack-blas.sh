# Sourced by the device scripts (bench/policy/device-bench.sh, bench/pipeline/device-bench.sh): bo_unpack_blas CARRY
# unpacks the carried BLAS libraries (CARRY/blas-libs.tar.xz, made by bench/policy/make-carry.sh) into
# /tmp/blasoffload-blas and prints that folder; it fails with a message when the archive cannot be read.
bo_unpack_blas() {
  local root=/tmp/blasoffload-blas
  rm -rf "$root" && mkdir -p "$root"
  # The GPU machine may lack xz: Python's lzma reads the archive too.
  if ! tar -C "$root" -xJf "$1/blas-libs.tar.xz" 2>/dev/null; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$1/blas-libs.tar.xz" "$root" || { echo "cannot unpack the BLAS libraries from $1" >&2; return 1; }
  fi
  echo "$root"
}
