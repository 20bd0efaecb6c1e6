#!/usr/bin/env bash
# Runs the strsm/ssyrk benchmark (blasoffload_bench_level3) on the GPU machine and writes the raw JSON lines and the
# report (report.py).
# Usage: bench/level3/run.sh [OUTDIR]          (default OUTDIR: bench/results/level3)
# Writes OUTDIR/level3-<gpu>-<date>-<commit>.jsonl (every line) and .md (the report), and the folder of that name:
# level3.err (the program's progress and messages), env.txt, run.log.
# Environment:
#   BO_LEVEL3_BIN       the program (default: BO_CARRY/bin, else next to this script, else build/bench/level3/)
#   BO_CUDA_MODULE      the module (default: the program's own search: the build tree, else ../lib, else beside it)
#   BO_LEVEL3_ARGS      more program arguments (e.g. --right --reps=11, --routines=strsm, --strsm=16384x16)
#   BO_BUDGET_S=540     the program is stopped after this many seconds (what it measured by then is reported)
#   BO_CARRY=DIR        a carry folder: DIR/bin/blasoffload_bench_level3, DIR/lib/libblasoffload_cuda.so, DIR/COMMIT
#   BLASOFFLOAD_DEVICE and the module's BLASOFFLOAD_* settings pass through.
# Exit status: report.py's (0 every target passed, 1 a miss or a failed check, 2 nothing measured), or the program's
# when it measured nothing (2 set-up error, 3 no GPU).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
  exit 0
fi
# shellcheck source=../policy/env.sh
source "$here/../policy/env.sh"
carry=
if [ -n "${BO_CARRY:-}" ]; then
  carry=$(cd "$BO_CARRY" && pwd) || { echo "run.sh: no carry folder $BO_CARRY" >&2; exit 2; }
  if [ -z "${BO_CUDA_MODULE:-}" ] && [ -e "$carry/lib/libblasoffload_cuda.so" ]; then
    export BO_CUDA_MODULE=$carry/lib/libblasoffload_cuda.so
  fi
fi
outdir=${1:-$bo_repo/bench/results/level3}
bin=${BO_LEVEL3_BIN:-$(bo_first ${carry:+"$carry/bin/blasoffload_bench_level3"} "$here/blasoffload_bench_level3" \
  "$bo_repo/build/bench/level3/blasoffload_bench_level3")}
budget=${BO_BUDGET_S:-540}
read -r -a extra <<<"${BO_LEVEL3_ARGS:-}"

bo_start_run run.sh level3 "$outdir" "$bin" "BO_LEVEL3_BIN, BO_CARRY" "$bin"
commit=$(bo_commit ${carry:+"$carry"} "$(dirname "$bin")")
{
  bo_describe_env
  echo "program: $bin"
  echo "module: ${BO_CUDA_MODULE:-(found by the program)}"
  echo "commit: $commit; budget ${budget}s; extra: ${extra[*]:-}"
  env | grep -E '^(BLASOFFLOAD_|CUDA_VISIBLE_DEVICES)' | sort
  if command -v nvidia-smi >/dev/null; then
    # Clocks and power limits bound every rate in the report.
    nvidia-smi --query-gpu=index,name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv 2>&1
  fi
} >"$raw/env.txt"
cat "$raw/env.txt" >&2

log "running $bin ${extra[*]:-} (stopped after ${budget}s)"
timeout -k 5 "$budget" "$bin" --commit="$commit" "${extra[@]}" >"$base.jsonl" 2>"$raw/level3.err"
rc=$?
points=$(grep -c '"candidate"' "$base.jsonl")
case $rc in
  0) log "done: $points lines" ;;
  1) log "done: $points lines; a candidate failed or disagreed with the reference (see the report)" ;;
  124 | 137) log "stopped at the budget (${budget}s) after $points lines" ;;
  *) log "the program exited with $rc: $(tail -2 "$raw/level3.err" | tr '\n' ' ')" ;;
esac
if [ "$points" = 0 ]; then
  log "nothing measured: no report"
  [ "$rc" = 0 ] && rc=2
  exit "$rc"
fi
if ! command -v python3 >/dev/null; then
  log "no python3: raw lines in $base.jsonl, no report"
  exit 1
fi
python3 "$here/report.py" "$base.jsonl" --md "$base.md" >/dev/null
status=$?
log "wrote $base.jsonl and $base.md ($((SECONDS - start))s; report exit $status)"
exit $status
