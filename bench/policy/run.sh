#!/usr/bin/env bash
# Runs the offload policy's regret grid: blasoffload_regret for every routine under BLASOFFLOAD_MODE=auto, cpu and gpu,
# each in its own process with libblasoffload.so preloaded over OpenBLAS, in R rounds of rotating order; then re-runs
# once more the points whose verdict lies within the run-to-run spread, and writes the raw lines and the report.
# Usage: bench/policy/run.sh [OUTDIR]          (default OUTDIR: bench/results/policy)
# Writes OUTDIR/regret-<gpu>-<date>-<commit>.jsonl (all lines) and .md (report.py regret), and the folder
# OUTDIR/regret-<gpu>-<date>-<commit>/ (one output, stderr and BLASOFFLOAD_LOG=summary log per process, run.log).
# Environment:
#   BO_ROUNDS=2           rounds of the three modes (the spread needs 2)
#   BO_BUDGET_S=480       seconds for everything: a round-2 process starts only if its round-1 time fits in what is
#                         left, every process is stopped at the budget's end (its finished points are kept)
#   BO_ROUTINES="sgemm_nn sgemm_lu sgemv_n sgemv_t strsv_ln strsv_lt snrm2"
#   BO_REGRET_ARGS        extra arguments for every run: --quick, --large (sgemm 16384), --shapes=..., --min-s=...
#   BO_REGRET_BIN         the program (default: next to this script, else build/bench/policy/)
#   BO_LIB_DIR, BO_BLAS_ROOT, OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS, BLASOFFLOAD_POLICY_FILE: see env.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
source "$here/env.sh"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
outdir=${1:-$bo_repo/bench/results/policy}
bin=${BO_REGRET_BIN:-$(bo_first "$here/blasoffload_regret" "$bo_repo/build/bench/policy/blasoffload_regret")}
rounds=${BO_ROUNDS:-2}
budget=${BO_BUDGET_S:-480}
read -r -a routines <<<"${BO_ROUTINES:-sgemm_nn sgemm_lu sgemv_n sgemv_t strsv_ln strsv_lt snrm2}"
read -r -a extra <<<"${BO_REGRET_ARGS:-}"
modes=(auto cpu gpu)

bo_start_run run.sh regret "$outdir" "$bin" "see the usage: BO_REGRET_BIN, BO_LIB_DIR, BO_BLAS_ROOT" "$bin" "$BO_LIB" \
  "$BO_OPENBLAS_DIR/libblas.so.3"
{
  bo_describe_env
  echo "rounds=$rounds budget=${budget}s routines=${routines[*]} extra=${extra[*]:-}"
} >"$raw/env.txt"
cat "$raw/env.txt" >&2

declare -A took
: >"$raw/notes.jsonl"
# One process: ROUTINE MODE ROUND [SHAPES]. Returns 1 when the budget stopped it or left no room to start it.
run_one() {
  local routine=$1 mode=$2 round=$3 shapes=${4:-} name left est rc t0
  name=$routine-$mode-r$round
  left=$((budget - (SECONDS - start)))
  est=${took[$routine/$mode]:-0}
  if [ -n "$shapes" ]; then est=$((est / 4)); fi
  if [ "$left" -lt 10 ] || [ "$est" -gt "$left" ]; then
    log "skip $name: ${left}s of the budget left${took[$routine/$mode]:+, it took ${est}s before}"
    printf '{"routine": "%s", "mode": "%s", "round": %d, "skipped": "budget: %ds left"}\n' "$routine" "$mode" \
      "$round" "$left" >>"$raw/notes.jsonl"
    return 1
  fi
  t0=$SECONDS
  # The auto process compares itself with the CPU BLAS called directly: its counters (summary logging costs two
  # clock reads per call) stay off unless BO_AUTO_LOG asks for them.
  local level=summary
  [ "$mode" = auto ] && level=${BO_AUTO_LOG:-off}
  LD_LIBRARY_PATH=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LD_PRELOAD=$BO_LIB \
    BLASOFFLOAD_MODE=$mode BLASOFFLOAD_LOG=$level BLASOFFLOAD_LOG_FILE="$raw/summary-$name.log" \
    timeout -k 5 "$left" "$bin" --routine="$routine" --round="$round" "${extra[@]}" ${shapes:+--shapes="$shapes"} \
    >"$raw/$name.jsonl" 2>"$raw/$name.err"
  rc=$?
  [ -z "$shapes" ] && took[$routine/$mode]=$((SECONDS - t0))
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    log "$name stopped at the budget's end after $((SECONDS - t0))s ($(grep -c median_us "$raw/$name.jsonl") points)"
    printf '{"routine": "%s", "mode": "%s", "round": %d, "skipped": "stopped at the budget end"}\n' "$routine" \
      "$mode" "$round" >>"$raw/notes.jsonl"
    return 1
  fi
  if [ $rc != 0 ]; then
    log "$name exited with $rc: $(tail -3 "$raw/$name.err" | tr '\n' ' ')"
    printf '{"routine": "%s", "mode": "%s", "round": %d, "skipped": "exit status %d"}\n' "$routine" "$mode" \
      "$round" "$rc" >>"$raw/notes.jsonl"
  fi
  log "$name: $((SECONDS - t0))s, $(grep -c median_us "$raw/$name.jsonl") points"
  return 0
}

for ((r = 1; r <= rounds; ++r)); do
  order=()
  for ((i = 0; i < 3; ++i)); do order+=("${modes[$(((i + r - 1) % 3))]}"); done
  for routine in "${routines[@]}"; do
    for mode in "${order[@]}"; do run_one "$routine" "$mode" "$r"; done
  done
done

combine() { cat "$raw"/*-r*.jsonl "$raw/notes.jsonl" >"$base.jsonl" 2>/dev/null; }
combine
if ! command -v python3 >/dev/null; then
  log "no python3: raw lines in $base.jsonl, no report"
  exit 0
fi

# Points whose verdict the spread cannot settle: once more, all three modes, one process per routine and mode.
python3 "$here/report.py" regret "$base.jsonl" --repeat-list "$raw/repeat.txt" >/dev/null
if [ -s "$raw/repeat.txt" ]; then
  log "re-running $(wc -l <"$raw/repeat.txt") point(s) within the spread of a threshold:" \
    "$(tr '\n' ';' <"$raw/repeat.txt")"
  r=$((rounds + 1))
  for routine in $(cut -d' ' -f1 "$raw/repeat.txt" | sort -u); do
    shapes=$(awk -v r="$routine" '$1 == r {print $2}' "$raw/repeat.txt" | paste -sd, -)
    for ((i = 0; i < 3; ++i)); do run_one "$routine" "${modes[$(((i + r - 1) % 3))]}" "$r" "$shapes"; done
  done
  combine
fi

python3 "$here/report.py" regret "$base.jsonl" --summaries "$raw" --md "$base.md"
rc=$?
log "wrote $base.jsonl and $base.md ($((SECONDS - start))s)"
exit $rc
