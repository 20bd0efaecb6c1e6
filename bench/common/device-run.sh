#!/usr/bin/env bash
# The policy benchmarks in one device call: unpacks the carried BLAS libraries, calibrates (blasoffload-calibrate
# writes the policy file that BLASOFFLOAD_POLICY_FILE then names), runs the selected benchmarks within the call's time
# limit, and leaves their reports in $OUT in the bench/results layout (at most 8 files come back from there).
# Usage (on the GPU machine, from the repository root):
#   bench/policy/device-bench.sh CARRY_DIR BLAS_CARRY_DIR SELECTION
#   CARRY_DIR       made by bench/policy/make-carry.sh
#   BLAS_CARRY_DIR  a prepare-carry.sh --openblas folder, or - for CARRY_DIR/blas-libs.tar.xz (unpacked into /tmp)
#   SELECTION       regret | lapack | overhead | all, or a comma list (run in that order; all = overhead,lapack,regret,
#                   which does not fit one call: about 20 minutes)
# Environment: BO_DEVICE_LIMIT_S=570 (the whole script's deadline: each benchmark gets what is left of it, minus
# 20 s for the reports), BO_POLICY=FILE (use this policy file instead of calibrating), BO_CALIBRATE_ARGS (e.g.
# --quick), and the benchmarks' own knobs (BO_ROUNDS, BO_REGRET_ARGS, BO_LAPACK_N, BO_STACKS, ...).
# $OUT gets policy/regret-<tag>.{md,jsonl}, policy/overhead-<tag>.{md,jsonl}, policy/policy-<tag>.json,
# lapack/lapack-<tag>.{md,jsonl} and device-bench-<tag>.tar.gz (every raw file and log, this script's output too).
set -uo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
K=$(cd "$1" && pwd)
blas_arg=$2
selection=$3
O=${OUT:-/tmp/blasoffload-bench-out}
W=/tmp/blasoffload-bench-work
limit=${BO_DEVICE_LIMIT_S:-570}
rm -rf "$W"
mkdir -p "$O" "$W"
exec > >(tee "$W/device-bench.log") 2>&1
echo "device-bench.sh: $(date -u +%Y-%m-%dT%H:%MZ) selection=$selection carry=$K limit=${limit}s"

if [ "$blas_arg" != "-" ] && [ -d "$blas_arg/usr/lib/x86_64-linux-gnu" ]; then
  blas_root=$(cd "$blas_arg" && pwd)
else
  # shellcheck source=../policy/unpack-blas.sh
  source "$here/unpack-blas.sh"
  blas_root=$(bo_unpack_blas "$K") || { echo "device-bench.sh: cannot unpack the BLAS libraries"; exit 2; }
fi
export BO_LIB_DIR=$K/lib BO_BLAS_ROOT=$blas_root
export BO_REGRET_BIN=$K/bin/blasoffload_regret BO_LAPACK_BIN=$K/bin/blasoffload_lapack_drivers
# shellcheck source=env.sh
source "$here/env.sh"
bo_cpu_env
tag=$(bo_gpu_name)-$(date -u +%Y-%m-%d)-$(bo_commit "$K/bin")
bo_describe_env
for f in "$K/lib/libblasoffload_cuda.so" "$K/lib/tuned_params"; do
  [ -e "$f" ] || echo "device-bench.sh: warning: no $f"
done

left() { echo $((limit - SECONDS - 20)); }

# The policy file: calibrated here, with the benchmarks' CPU BLAS and OpenBLAS settings (the file is keyed by both).
mkdir -p "$O/policy"
if [ -n "${BO_POLICY:-}" ]; then
  export BLASOFFLOAD_POLICY_FILE=$BO_POLICY
  echo "device-bench.sh: policy file given: $BO_POLICY"
elif [ -x "$K/bin/blasoffload-calibrate" ]; then
  cal=("$K/bin/blasoffload-calibrate" --out="$W/policy.json")
  "${cal[0]}" --help 2>&1 | grep -q -- "--module" && cal+=(--module="$K/lib/libblasoffload_cuda.so")
  read -r -a extra <<<"${BO_CALIBRATE_ARGS:-}"
  echo "=== calibrate: ${cal[*]} ${extra[*]:-}"
  s=$SECONDS
  LD_LIBRARY_PATH=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 180 "${cal[@]}" "${extra[@]}" \
    >"$W/calibrate.log" 2>&1
  rc=$?
  tail -5 "$W/calibrate.log"
  if [ $rc = 0 ] && [ -s "$W/policy.json" ]; then
    export BLASOFFLOAD_POLICY_FILE=$W/policy.json
    cp "$W/policy.json" "$O/policy/policy-$tag.json"
    python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("gpu") else 1)' "$W/policy.json" ||
      echo "device-bench.sh: warning: the policy file has no GPU numbers: auto uses built-in ones"
  else
    echo "device-bench.sh: warning: calibration failed (exit $rc): auto runs on the built-in defaults"
  fi
  echo "calibration: $((SECONDS - s))s"
else
  echo "device-bench.sh: warning: no blasoffload-calibrate in the carry: auto runs on the built-in defaults"
fi

status=0
IFS=, read -r -a wanted <<<"${selection/all/overhead,lapack,regret}"
for what in "${wanted[@]}"; do
  budget=$(left)
  echo "=== $what ($budget s left)"
  if [ "$budget" -lt 30 ]; then
    echo "device-bench.sh: $what not run: ${budget}s left"
    status=1
    continue
  fi
  case $what in
    regret)
      BO_BUDGET_S=$((budget < ${BO_BUDGET_S:-480} ? budget : ${BO_BUDGET_S:-480})) \
        timeout $((budget + 15)) bash "$here/run.sh" "$W/policy" || status=1
      cp "$W"/policy/regret-*.md "$W"/policy/regret-*.jsonl "$O/policy/" 2>/dev/null ;;
    overhead)
      timeout "$budget" bash "$here/overhead.sh" "$W/policy" || status=1
      cp "$W"/policy/overhead-*.md "$W"/policy/overhead-*.jsonl "$O/policy/" 2>/dev/null ;;
    lapack)
      mkdir -p "$O/lapack"
      BO_BUDGET_S=$((budget < ${BO_BUDGET_S:-540} ? budget : ${BO_BUDGET_S:-540})) \
        timeout $((budget + 15)) bash "$here/../lapack/run.sh" "$W/lapack" || status=1
      cp "$W"/lapack/lapack-*.md "$W"/lapack/lapack-*.jsonl "$O/lapack/" 2>/dev/null ;;
    *)
      echo "device-bench.sh: unknown selection '$what' (regret, lapack, overhead, all)"
      status=2 ;;
  esac
done
echo "device-bench.sh: done in ${SECONDS}s (exit $status)"
sleep 0.2  # let tee write the last lines before the log is packed
tar -C "$W" -czf "$O/device-bench-$tag.tar.gz" . 2>/dev/null
find "$O" -type f | sort
exit $status
