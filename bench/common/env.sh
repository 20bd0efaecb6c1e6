# The shell side of the benchmark set-up (sourced, not run), for scripts not yet described by a bench.ini
# (bench/level3/run.sh): where the libraries are, the CPU BLAS settings every run must share, the
# <gpu>-<date>-<commit> tag of the result files. bench/common/run.py does the same for the described benchmarks.
# Inputs (environment): BO_LIB_DIR (folder of libblasoffload.so), BO_BLAS_ROOT (a folder made by
# prepare-carry.sh --openblas; default / for the system's Debian packages), OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS.
# shellcheck shell=bash disable=SC2034

bo_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bo_repo=$(cd "$bo_here/../.." && pwd)

# The first of the candidates that exists, else the first (so that the error names the expected path).
bo_first() {
  local c
  for c in "$@"; do [ -e "$c" ] && { echo "$c"; return; }; done
  echo "$1"
}

BO_LIB_DIR=${BO_LIB_DIR:-$(dirname "$(bo_first "$bo_repo/build/libblasoffload.so")")}
BO_LIB=$BO_LIB_DIR/libblasoffload.so
BO_BLAS_ROOT=${BO_BLAS_ROOT:-/}
BO_L=${BO_BLAS_ROOT%/}/usr/lib/x86_64-linux-gnu
BO_OPENBLAS_DIR=$BO_L/openblas-pthread
# Reference LAPACK's folder first: it holds only liblapack.so.3, so libblas.so.3 comes from OpenBLAS's folder even
# where that folder also has OpenBLAS's liblapack.so.3 (the system packages; prepare-carry.sh removes it).
BO_OPENBLAS_PATH=$BO_L/lapack:$BO_OPENBLAS_DIR:$BO_L

bo_slug() { tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }

bo_gpu_name() {
  local g
  g=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${BLASOFFLOAD_DEVICE:-0}" 2>/dev/null | head -1 |
    bo_slug || true)
  echo "${g:-nogpu}"
}

# The commit the binaries were built from: COMMIT next to them (make-carry.sh), else this checkout's HEAD.
bo_commit() {
  local d
  for d in "$@"; do
    if [ -r "$d/COMMIT" ]; then
      tr '\n' ' ' <"$d/COMMIT" | bo_slug
      return
    fi
  done
  local c
  c=$(git -C "$bo_repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
  git -C "$bo_repo" diff --quiet HEAD -- 2>/dev/null || c="$c-uncommitted"
  echo "$c"
}

# OpenBLAS 0.3.21 runs its generic kernels on the lent AVX-512 Xeon unless told its type (anchors README); forcing
# SkylakeX on a CPU without AVX-512 would stop at the first illegal instruction, so it is only set where it can run.
bo_cpu_env() {
  if [ -z "${OPENBLAS_CORETYPE+x}" ] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=SkylakeX
  fi
  if [ -z "${OPENBLAS_NUM_THREADS+x}" ]; then
    local n
    n=$(nproc)
    export OPENBLAS_NUM_THREADS=$((n < 16 ? n : 16))
  fi
}

bo_describe_env() {
  echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-(unset)} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS-(unset)}"
  echo "libblasoffload: $BO_LIB"
  echo "BLAS root: $BO_BLAS_ROOT (OpenBLAS: $BO_OPENBLAS_DIR)"
  echo "BLASOFFLOAD_POLICY_FILE=${BLASOFFLOAD_POLICY_FILE-(unset)}"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  else
    echo "gpu: none (no nvidia-smi)"
  fi
}

# Starts a benchmark run, the same way in every script: stops with a message if one of FILES is missing (HINT names
# the variables that point at them), applies the CPU BLAS settings, and sets tag (<gpu>-<date>-<commit>, the commit of
# BIN's build), base=raw=OUTDIR/PREFIX-<tag> (created), start, and log() (stderr and $raw/run.log).
# Usage: bo_start_run SCRIPT PREFIX OUTDIR BIN HINT FILE...
bo_start_run() {
  local script=$1 prefix=$2 outdir=$3 bin=$4 hint=$5 f
  shift 5
  for f in "$@"; do
    [ -e "$f" ] || { echo "$script: missing $f ($hint)" >&2; exit 2; }
  done
  bo_cpu_env
  tag=$(bo_gpu_name)-$(date -u +%Y-%m-%d)-$(bo_commit "$(dirname "$bin")")
  base=$outdir/$prefix-$tag
  raw=$base
  mkdir -p "$raw"
  start=$SECONDS
  bo_script=$script
}
log() { echo "$bo_script: [$((SECONDS - start))s] $*" | tee -a "$raw/run.log" >&2; }
