#!/usr/bin/env bash
# Times reference LAPACK's factorizations (blasoffload_lapack_drivers: sgetrf, sgesv, sgeqrf, spotrf) under five stacks
# in one run, every stack at one n before the next n, within a time budget:
#   cpu       reference LAPACK + OpenBLAS (the CPU alone)
#   auto      cpu + LD_PRELOAD=libblasoffload.so, BLASOFFLOAD_MODE=auto
#   gpu       cpu + LD_PRELOAD=libblasoffload.so, BLASOFFLOAD_MODE=gpu
#   openblas  OpenBLAS's own LAPACK (LD_PRELOAD=libopenblas.so.0: its sgetrf_ ... win over reference LAPACK)
#   nvblas    cpu + LD_PRELOAD=libnvblas.so (generated nvblas.conf: OpenBLAS behind it, all GPUs)
# Usage: bench/lapack/run.sh [OUTDIR]          (default OUTDIR: bench/results/lapack)
# Writes OUTDIR/lapack-<gpu>-<date>-<commit>.jsonl and .md (report.py) and the folder OUTDIR/lapack-<...>/ (per run
# output and stderr, BLASOFFLOAD_LOG=summary logs, nvblas.conf and its log, run.log).
# Environment:
#   BO_LAPACK_N="1024 2048 4096 8192 16384"  BO_STACKS="cpu auto gpu openblas nvblas"
#   BO_BUDGET_S=540       no run starts whose estimate (the same stack at the previous n, scaled by n^3) does not fit
#                         in what is left, and each run is stopped at the budget's end; skips are reported
#   BO_LAPACK_BIN         the program (default: next to this script, else build/bench/lapack/)
#   BO_NVBLAS_LIB         default /usr/local/cuda/lib64/libnvblas.so; BO_NVBLAS_AUTOPIN=1 adds autopin to nvblas.conf
#   BO_LAPACK_ARGS        more arguments for the program (e.g. --drivers=potrf --reps=3)
#   BO_LIB_DIR, BO_BLAS_ROOT, OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, BLASOFFLOAD_POLICY_FILE: see
#   bench/policy/env.sh (OPENBLAS_CORETYPE=SkylakeX and 16 threads when unset, on an AVX-512 CPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../policy/env.sh
source "$here/../policy/env.sh"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
outdir=${1:-$bo_repo/bench/results/lapack}
bin=${BO_LAPACK_BIN:-$(bo_first "$here/blasoffload_lapack_drivers" \
  "$bo_repo/build/bench/lapack/blasoffload_lapack_drivers")}
read -r -a ns <<<"${BO_LAPACK_N:-1024 2048 4096 8192 16384}"
read -r -a stacks <<<"${BO_STACKS:-cpu auto gpu openblas nvblas}"
budget=${BO_BUDGET_S:-540}
nvblas=${BO_NVBLAS_LIB:-/usr/local/cuda/lib64/libnvblas.so}
bo_start_run run.sh lapack "$outdir" "$bin" "BO_LAPACK_BIN, BO_BLAS_ROOT" "$bin" "$BO_OPENBLAS_DIR/libblas.so.3" \
  "$BO_L/lapack/liblapack.so.3"
{
  bo_describe_env
  echo "n=${ns[*]} stacks=${stacks[*]} budget=${budget}s nvblas=$nvblas"
} >"$raw/env.txt"
cat "$raw/env.txt" >&2

cat >"$raw/nvblas.conf" <<EOF
NVBLAS_LOGFILE $raw/nvblas.log
NVBLAS_CPU_BLAS_LIB $BO_OPENBLAS_DIR/libblas.so.3
NVBLAS_GPU_LIST ALL
EOF
# Autopin (cudaHostRegister of the caller's matrices) made cublasXtSgemm fail with CUBLAS_STATUS_MAPPING_ERROR on the
# lent machine under reference LAPACK, and NVBLAS then returns wrong factors without an error: opt-in only.
[ "${BO_NVBLAS_AUTOPIN:-0}" = 1 ] && echo "NVBLAS_AUTOPIN_MEM_ENABLED" >>"$raw/nvblas.conf"

path=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The environment of one stack, as arguments for env(1).
stack_env() {
  local s=$1 n=$2
  case $s in
    cpu) echo "LD_LIBRARY_PATH=$path" ;;
    auto | gpu)
      echo "LD_LIBRARY_PATH=$path LD_PRELOAD=$BO_LIB BLASOFFLOAD_MODE=$s BLASOFFLOAD_LOG=summary" \
        "BLASOFFLOAD_LOG_FILE=$raw/summary-$s-n$n.log" ;;
    openblas) echo "LD_LIBRARY_PATH=$path LD_PRELOAD=$BO_OPENBLAS_DIR/libopenblas.so.0" ;;
    nvblas) echo "LD_LIBRARY_PATH=$path:$(dirname "$nvblas") LD_PRELOAD=$nvblas NVBLAS_CONFIG_FILE=$raw/nvblas.conf" ;;
    *) return 1 ;;
  esac
}

# A line for the report when a stack does not run at some n (budget, missing library, failure).
note() { printf '{"driver": "all", "n": %d, "stack": "%s", "skipped": "%s"}\n' "$1" "$2" "$3" >>"$raw/notes.jsonl"; }

declare -A took last_n failed
: >"$raw/notes.jsonl"
for n in "${ns[@]}"; do
  for s in "${stacks[@]}"; do
    name=$s-n$n
    if [ -n "${failed[$s]:-}" ]; then
      note "$n" "$s" "not run: failed at n=${failed[$s]}"
      continue
    fi
    left=$((budget - (SECONDS - start)))
    est=0
    if [ -n "${took[$s]:-}" ]; then
      est=$(awk -v t="${took[$s]}" -v a="${last_n[$s]}" -v b="$n" 'BEGIN {printf "%d", t * (b / a) ^ 3}')
    fi
    if [ "$left" -lt 5 ] || [ "$est" -gt "$left" ]; then
      log "skip $name: estimated ${est}s, ${left}s of the budget left"
      note "$n" "$s" "budget: estimated ${est}s, ${left}s left"
      continue
    fi
    case $s in
      auto | gpu)
        [ -e "$BO_LIB" ] || { log "skip $name: no $BO_LIB"; note "$n" "$s" "no libblasoffload.so"; continue; } ;;
      nvblas) [ -e "$nvblas" ] || { log "skip $name: no $nvblas"; note "$n" "$s" "no libnvblas.so"; continue; } ;;
    esac
    read -r -a envs <<<"$(stack_env "$s" "$n")"
    t0=$SECONDS
    env "${envs[@]}" timeout -k 5 "$left" "$bin" --stack="$s" --budget-s="$left" ${BO_LAPACK_ARGS:-} "$n" >"$raw/$name.jsonl" \
      2>"$raw/$name.err"
    rc=$?
    took[$s]=$((SECONDS - t0 > 0 ? SECONDS - t0 : 1))
    last_n[$s]=$n
    points=$(grep -c '"seconds"' "$raw/$name.jsonl")
    if [ $rc = 124 ] || [ $rc = 137 ]; then
      log "$name stopped at the budget's end after $((SECONDS - t0))s ($points factorizations done)"
      note "$n" "$s" "stopped at the budget's end after $((SECONDS - t0))s"
    elif [ "$points" = 0 ]; then
      why=$(tail -2 "$raw/$name.err" | tr '\n"\\' '  /' | cut -c1-200)
      log "$name failed (exit $rc): $why"
      note "$n" "$s" "failed (exit $rc): $why"
      failed[$s]=$n  # a stack that cannot start is not tried again at larger n
    else
      [ $rc = 0 ] || log "$name exited with $rc (a check failed?)"
      log "$name: $((SECONDS - t0))s"
    fi
  done
done

if grep -q "No device selected" "$raw/nvblas.log" 2>/dev/null; then
  log "NVBLAS selected no GPU (see nvblas.log): its numbers are not a GPU's, and its results fail their checks"
fi
cat "$raw"/*-n*.jsonl "$raw/notes.jsonl" >"$base.jsonl" 2>/dev/null
rc=0
if command -v python3 >/dev/null; then
  python3 "$here/report.py" "$base.jsonl" --summaries "$raw" --md "$base.md"
  rc=$?
fi
log "wrote $base.jsonl and $base.md"
exit $rc
