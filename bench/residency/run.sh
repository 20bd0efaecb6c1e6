#!/usr/bin/env bash
# Times the residency benchmarks (blasoffload_residency_bench: power, strsv, rewrite) and two LAPACK factorizations
# (blasoffload_lapack_drivers: spotrf, sgetrf at n = 16384) under several stacks in one run, within a time budget:
#   cpu             OpenBLAS alone (reference LAPACK + OpenBLAS for the drivers)
#   resident        cpu + LD_PRELOAD=libblasoffload.so, BLASOFFLOAD_MODE=auto, _STARTUP=eager, _RESIDENCY=auto
#   noresident      resident with BLASOFFLOAD_RESIDENCY=off
#   gpu             cpu + libblasoffload.so, BLASOFFLOAD_MODE=gpu, _RESIDENCY=auto      (scenarios only)
#   gpu-noresident  gpu with BLASOFFLOAD_RESIDENCY=off                                  (scenarios only)
#   resident-thp    resident, the matrix in transparent huge pages (--thp)              (power only)
#   openblas        OpenBLAS's own LAPACK (LD_PRELOAD=libopenblas.so.0)                 (LAPACK drivers only)
# Every libblasoffload stack runs with BLASOFFLOAD_LOG=summary; the summary goes to the run's stderr file.
# Usage: bench/residency/run.sh [OUTDIR]          (default OUTDIR: bench/results/residency)
# Writes OUTDIR/residency-<gpu>-<date>-<commit>.jsonl (every line) and .md (report.py), and the folder of that name:
# <run>.jsonl and <run>.err (stdout, stderr with the summary) per run, notes.jsonl (skips), env.txt, run.log; with
# BO_RES_PACK=1 that folder becomes <name>.tar.gz (3 files in OUTDIR, what one device call can bring back).
# Order: each scenario under every stack, then each driver under every stack. A process per run.
# Environment:
#   BO_RES_SCENARIOS="power strsv rewrite"   (spaces or commas; empty: none)
#   BO_RES_STACKS="cpu resident noresident gpu gpu-noresident resident-thp openblas"   each runs where it applies
#   BO_RES_LAPACK=1          0: no LAPACK drivers;  BO_RES_LAPACK_N=16384;  BO_RES_LAPACK_DRIVERS="potrf getrf"
#   BO_RES_ARGS              more arguments for blasoffload_residency_bench (e.g. --n=2048 --strsv-n=1024 --iters=20)
#   BO_RES_LAPACK_ARGS       more arguments for blasoffload_lapack_drivers (e.g. --reps=2)
#   BO_BUDGET_S=480          the whole run: a run starts only with 10 s left, and is stopped at the budget's end
#   BO_RES_RUN_CAP_S=120     one run at most (the residency program stops iterating 15 s before; its line says how
#                            many iterations ran)
#   BO_CARRY=DIR             a carry (README.md): DIR/lib/libblasoffload*.so, DIR/bin/ programs and COMMIT, and
#                            DIR/blas-libs.tar.xz, unpacked into /tmp unless BO_BLAS_ROOT is set
#   BO_RES_PACK              1: pack the run folder (default 1 with BO_CARRY, else 0)
#   BO_RES_CALIBRATE         1: first run blasoffload-calibrate (BO_CALIBRATE_ARGS; at most 180 s, taken from the
#                            budget) and give auto its policy file (default 1 with BO_CARRY where
#                            BLASOFFLOAD_POLICY_FILE is unset, else 0)
#   BO_RES_BIN, BO_LAPACK_BIN the programs (default: BO_CARRY/bin, else next to this script, else build/bench/...)
#   BO_LIB_DIR, BO_BLAS_ROOT, OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, BLASOFFLOAD_POLICY_FILE: see
#   bench/policy/env.sh (OPENBLAS_CORETYPE=SkylakeX and 16 threads when unset, on an AVX-512 CPU)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
carry=
if [ -n "${BO_CARRY:-}" ]; then
  carry=$(cd "$BO_CARRY" && pwd) || { echo "run.sh: no carry folder $BO_CARRY" >&2; exit 2; }
  export BO_LIB_DIR=${BO_LIB_DIR:-$carry/lib}
  if [ -z "${BO_BLAS_ROOT:-}" ]; then
    # shellcheck source=../policy/unpack-blas.sh
    source "$here/../policy/unpack-blas.sh"
    BO_BLAS_ROOT=$(bo_unpack_blas "$carry") || { echo "run.sh: cannot unpack the BLAS libraries" >&2; exit 2; }
    export BO_BLAS_ROOT
  fi
fi
# shellcheck source=../policy/env.sh
source "$here/../policy/env.sh"
outdir=${1:-$bo_repo/bench/results/residency}
bin=${BO_RES_BIN:-$(bo_first ${carry:+"$carry/bin/blasoffload_residency_bench"} "$here/blasoffload_residency_bench" \
  "$bo_repo/build/bench/residency/blasoffload_residency_bench")}
lapack_bin=${BO_LAPACK_BIN:-$(bo_first ${carry:+"$carry/bin/blasoffload_lapack_drivers"} \
  "$here/../lapack/blasoffload_lapack_drivers" "$bo_repo/build/bench/lapack/blasoffload_lapack_drivers")}
words() { tr ',' ' ' <<<"$1"; } # lists may use commas too
read -r -a scenarios <<<"$(words "${BO_RES_SCENARIOS-power strsv rewrite}")"
read -r -a stacks <<<"$(words "${BO_RES_STACKS:-cpu resident noresident gpu gpu-noresident resident-thp openblas}")"
read -r -a drivers <<<"$(words "${BO_RES_LAPACK_DRIVERS:-potrf getrf}")"
lapack_n=${BO_RES_LAPACK_N:-16384}
[ "${BO_RES_LAPACK:-1}" = 1 ] || drivers=()
read -r -a res_args <<<"${BO_RES_ARGS:-}"
read -r -a lapack_args <<<"${BO_RES_LAPACK_ARGS:-}"
budget=${BO_BUDGET_S:-480}
run_cap=${BO_RES_RUN_CAP_S:-120}
pack=${BO_RES_PACK:-$([ -n "$carry" ] && echo 1 || echo 0)}
for s in "${scenarios[@]}"; do
  case $s in
    power | strsv | rewrite) ;;
    *) echo "run.sh: unknown scenario '$s' (power, strsv, rewrite)" >&2; exit 2 ;;
  esac
done
for s in "${stacks[@]}"; do
  case $s in
    cpu | resident | noresident | gpu | gpu-noresident | resident-thp | openblas) ;;
    *) echo "run.sh: unknown stack '$s'" >&2; exit 2 ;;
  esac
done

need=("$bin" "$BO_OPENBLAS_DIR/libblas.so.3")
[ ${#drivers[@]} -gt 0 ] && need+=("$lapack_bin" "$BO_L/lapack/liblapack.so.3")
bo_start_run run.sh residency "$outdir" "$bin" "BO_RES_BIN, BO_LAPACK_BIN, BO_CARRY, BO_BLAS_ROOT" "${need[@]}"

if [ "${BO_RES_CALIBRATE:-$([ -n "$carry" ] && [ -z "${BLASOFFLOAD_POLICY_FILE:-}" ] && echo 1 || echo 0)}" = 1 ]; then
  cal=$(bo_first ${carry:+"$carry/bin/blasoffload-calibrate"} "$BO_LIB_DIR/blasoffload-calibrate")
  if [ -x "$cal" ]; then
    read -r -a cal_args <<<"${BO_CALIBRATE_ARGS:-}"
    [ -e "$BO_LIB_DIR/libblasoffload_cuda.so" ] && cal_args+=(--module="$BO_LIB_DIR/libblasoffload_cuda.so")
    log "calibrating: $cal ${cal_args[*]}"
    LD_LIBRARY_PATH=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 180 "$cal" \
      --out="$raw/policy.json" "${cal_args[@]}" >"$raw/calibrate.log" 2>&1
    if [ -s "$raw/policy.json" ]; then
      export BLASOFFLOAD_POLICY_FILE=$raw/policy.json
    else
      log "calibration failed (see calibrate.log): auto uses ${BLASOFFLOAD_POLICY_FILE:-the default policy file}"
    fi
  else
    log "no blasoffload-calibrate found: auto uses ${BLASOFFLOAD_POLICY_FILE:-the default policy file}"
  fi
fi

{
  bo_describe_env
  echo "residency program: $bin; LAPACK program: $lapack_bin"
  echo "scenarios=${scenarios[*]} stacks=${stacks[*]} drivers=${drivers[*]} (n=$lapack_n) budget=${budget}s" \
    "run cap=${run_cap}s"
  echo "BO_RES_ARGS=${res_args[*]:-} BO_RES_LAPACK_ARGS=${lapack_args[*]:-}"
  echo "kernel: $(uname -r); THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" \
    "defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
  echo "memory: $(grep -E '^(MemTotal|MemAvailable)' /proc/meminfo | tr -s ' ' | paste -sd' ')"
  env | grep -E '^(BLASOFFLOAD_|CUDA_VISIBLE_DEVICES)' | sort
} >"$raw/env.txt"
cat "$raw/env.txt" >&2

path=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The environment of one stack, as arguments for env(1) (after -u BLASOFFLOAD_LOG_FILE: the summary goes to stderr).
stack_env() {
  local offload="LD_LIBRARY_PATH=$path LD_PRELOAD=$BO_LIB BLASOFFLOAD_LOG=summary BLASOFFLOAD_STARTUP=eager"
  case $1 in
    cpu) echo "LD_LIBRARY_PATH=$path" ;;
    openblas) echo "LD_LIBRARY_PATH=$path LD_PRELOAD=$BO_OPENBLAS_DIR/libopenblas.so.0" ;;
    resident | resident-thp) echo "$offload BLASOFFLOAD_MODE=auto BLASOFFLOAD_RESIDENCY=auto" ;;
    noresident) echo "$offload BLASOFFLOAD_MODE=auto BLASOFFLOAD_RESIDENCY=off" ;;
    gpu) echo "$offload BLASOFFLOAD_MODE=gpu BLASOFFLOAD_RESIDENCY=auto" ;;
    gpu-noresident) echo "$offload BLASOFFLOAD_MODE=gpu BLASOFFLOAD_RESIDENCY=off" ;;
    *) return 1 ;;
  esac
}

: >"$raw/notes.jsonl"
# A line for the report when a run does not happen or fails: KIND (scenario or driver) NAME STACK WHY.
note() {
  local extra=
  [ "$1" = driver ] && extra=", \"n\": $lapack_n"
  printf '{"%s": "%s"%s, "stack": "%s", "skipped": "%s"}\n' "$1" "$2" "$extra" "$3" "$4" >>"$raw/notes.jsonl"
}

# One run: KIND NAME STACK, then the program and its arguments. Output in $raw/<name>-<stack>.{jsonl,err}.
run_one() {
  local kind=$1 what=$2 s=$3 name=$2-$3
  shift 3
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -lt 10 ]; then
    log "skip $name: ${left}s of the budget left"
    note "$kind" "$what" "$s" "budget: ${left}s left"
    return
  fi
  case $s in
    cpu | openblas) ;;
    *)
      if [ ! -e "$BO_LIB" ]; then
        log "skip $name: no $BO_LIB"
        note "$kind" "$what" "$s" "no libblasoffload.so"
        return
      fi ;;
  esac
  local cap=$((left < run_cap ? left : run_cap)) envs rc points t0=$SECONDS
  read -r -a envs <<<"$(stack_env "$s")"
  [ "$kind" = scenario ] && set -- "$@" --budget-s=$((cap > 30 ? cap - 15 : cap / 2))
  env -u BLASOFFLOAD_LOG_FILE "${envs[@]}" timeout -k 5 "$cap" "$@" >"$raw/$name.jsonl" 2>"$raw/$name.err"
  rc=$?
  points=$(grep -cE '"(median_ms|seconds)"' "$raw/$name.jsonl")
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    log "$name stopped after $((SECONDS - t0))s (cap ${cap}s)"
    note "$kind" "$what" "$s" "stopped after $((SECONDS - t0))s (cap ${cap}s)"
  elif [ "$points" = 0 ]; then
    local why
    why=$(grep -v '^ ' "$raw/$name.err" | tail -2 | tr '\n"' '  ' | tr -d "\\\\" | cut -c1-200)
    log "$name failed (exit $rc): $why"
    note "$kind" "$what" "$s" "failed (exit $rc): $why"
  else
    [ "$rc" = 0 ] || log "$name exited with $rc (a check failed?)"
    log "$name: $((SECONDS - t0))s"
  fi
  # A stack is only what its name says if sgemv_ (sgemm_ for LAPACK) resolved where it should.
  local from
  from=$(grep -oE '"(sgemv|sgemm)_from": "[^"]*"' "$raw/$name.jsonl" | head -1)
  case $s in
    cpu | openblas) [[ $from == *libblasoffload* ]] && log "WARNING $name: $from" ;;
    *) [[ $from == *libblasoffload* ]] || log "WARNING $name: not libblasoffload's ($from)" ;;
  esac
}

for sc in "${scenarios[@]}"; do
  for s in "${stacks[@]}"; do
    args=(--scenarios="$sc" --stack="$s")
    case $s in
      openblas) continue ;;
      resident-thp) [ "$sc" = power ] || continue; args+=(--thp) ;;
    esac
    run_one scenario "$sc" "$s" "$bin" "${args[@]}" "${res_args[@]}"
  done
done
for d in "${drivers[@]}"; do
  for s in "${stacks[@]}"; do
    case $s in cpu | resident | noresident | openblas) ;; *) continue ;; esac
    run_one driver "$d" "$s" "$lapack_bin" --stack="$s" --drivers="$d" "${lapack_args[@]}" "$lapack_n"
  done
done

cat "$raw"/*-*.jsonl "$raw/notes.jsonl" >"$base.jsonl" 2>/dev/null
rc=0
if command -v python3 >/dev/null; then
  python3 "$here/report.py" "$base.jsonl" --raw "$raw" --md "$base.md"
  rc=$?
fi
log "done in $((SECONDS - start))s; wrote $base.jsonl and $base.md"
if [ "$pack" = 1 ]; then
  tar -C "$(dirname "$raw")" -czf "$base.tar.gz" "$(basename "$raw")" && rm -rf "$raw"
  echo "run.sh: packed the run folder into $base.tar.gz" >&2
fi
exit $rc
