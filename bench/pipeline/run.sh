#!/usr/bin/env bash
# Runs the sgemm engine benchmark (blasoffload_bench_pipeline), one process per case within a time budget, and writes
# the raw JSON lines, the logs and the report (report.py).
# Usage: bench/pipeline/run.sh [OUTDIR] [CASES]
#   OUTDIR  default bench/results/pipeline
#   CASES   comma list of sgemm_host, rank_update, out_of_core, multi_gpu, or all (default; in that order)
# Writes OUTDIR/pipeline-<gpu>-<date>-<commit>.jsonl (all lines) and .md (the report), and the folder of that name
# (<case>.jsonl and <case>.err per process, env.txt, run.log).
# Environment:
#   BO_BUDGET_S=480     seconds for all cases: each case gets its weight's part of what is left (sgemm_host 35,
#                       rank_update 25, out_of_core 25, multi_gpu 15; time a case leaves unused goes to the next), which
#                       the program uses to skip or cut points; a process is stopped 60 s past its part
#   BO_PIPELINE_ARGS    more program arguments for every case (--quick, --ooc-n=16384, --reps=3, --shares=...)
#   BO_PIPELINE_BIN     the program (default: next to this script, else build/bench/pipeline/)
#   BO_CUDA_MODULE      the module (default: the program's own search: the build tree, else the carry's lib/)
#   BO_CPU_BLAS         the CPU BLAS (default: libopenblas.so.0 of BO_BLAS_ROOT's OpenBLAS folder)
#   BO_LIB_DIR, BO_BLAS_ROOT, OPENBLAS_CORETYPE, OPENBLAS_NUM_THREADS: see bench/policy/env.sh (SkylakeX and
#   min(16, cores) threads when unset, on an AVX-512 CPU); the engine's BLASOFFLOAD_* knobs pass through.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../policy/env.sh
source "$here/../policy/env.sh"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
outdir=${1:-$bo_repo/bench/results/pipeline}
selection=${2:-all}
bin=${BO_PIPELINE_BIN:-$(bo_first "$here/blasoffload_bench_pipeline" \
  "$bo_repo/build/bench/pipeline/blasoffload_bench_pipeline")}
budget=${BO_BUDGET_S:-480}
read -r -a extra <<<"${BO_PIPELINE_ARGS:-}"
IFS=, read -r -a cases <<<"${selection/all/sgemm_host,rank_update,out_of_core,multi_gpu}"
declare -A weight=([sgemm_host]=35 [rank_update]=25 [out_of_core]=25 [multi_gpu]=15)
for c in "${cases[@]}"; do
  if [ -z "${weight[$c]:-}" ]; then
    echo "run.sh: unknown case '$c' (sgemm_host, rank_update, out_of_core, multi_gpu)" >&2
    exit 2
  fi
done
export BO_CPU_BLAS=${BO_CPU_BLAS:-$BO_OPENBLAS_DIR/libopenblas.so.0}

bo_start_run run.sh pipeline "$outdir" "$bin" "BO_PIPELINE_BIN, BO_BLAS_ROOT, BO_CPU_BLAS" "$bin" "$BO_CPU_BLAS"
export BO_COMMIT=${BO_COMMIT:-$(bo_commit "$(dirname "$bin")")}
{
  bo_describe_env
  echo "program: $bin"
  echo "module: ${BO_CUDA_MODULE:-(found by the program)}"
  echo "CPU BLAS: $BO_CPU_BLAS"
  echo "commit: $BO_COMMIT; cases: ${cases[*]}; budget ${budget}s; extra: ${extra[*]:-}"
  echo "memory: $(grep -E '^(MemTotal|MemAvailable)' /proc/meminfo | tr -s ' ' | paste -sd' ')"
  env | grep -E '^(BLASOFFLOAD_|CUDA_VISIBLE_DEVICES)' | sort
  if command -v nvidia-smi >/dev/null; then
    # The PCIe link each GPU trained to bounds every transfer rate in the report.
    nvidia-smi --query-gpu=index,name,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm,power.limit \
      --format=csv 2>&1
    nvidia-smi topo -m 2>&1 | head -20
  fi
} >"$raw/env.txt"
cat "$raw/env.txt" >&2

: >"$raw/notes.jsonl"
note() { printf '{"case": "%s", "variant": "process", "skipped": "%s"}\n' "$1" "$2" >>"$raw/notes.jsonl"; }
status=0
for i in "${!cases[@]}"; do
  c=${cases[$i]}
  left=$((budget - (SECONDS - start)))
  total=0
  for r in "${cases[@]:$i}"; do total=$((total + weight[$r])); done
  part=$((left * weight[$c] / total))
  if [ "$part" -lt 15 ]; then
    log "skip $c: ${left}s of the budget left"
    note "$c" "budget: ${left}s left"
    status=1
    continue
  fi
  hard=$((part + 60 < left + 30 ? part + 60 : left + 30))
  log "$c: budget ${part}s (stopped at ${hard}s)"
  t0=$SECONDS
  LD_LIBRARY_PATH=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    timeout -k 5 "$hard" "$bin" --case="$c" --budget-s="$part" "${extra[@]}" >"$raw/$c.jsonl" 2>"$raw/$c.err"
  rc=$?
  log "$c: exit $rc after $((SECONDS - t0))s, $(grep -c '"median_ms"' "$raw/$c.jsonl") points"
  case $rc in
    0) ;;
    124 | 137)
      note "$c" "stopped after ${hard}s"
      status=1 ;;
    3)
      log "no GPU: $(tail -1 "$raw/$c.err")"
      status=3
      break ;;
    1)
      grep -h 'CHECK FAILED\|engine returned' "$raw/$c.err" | head -5 >&2
      status=1 ;;
    *)
      log "$c failed: $(tail -3 "$raw/$c.err" | tr '\n' ' ')"
      note "$c" "exit status $rc"
      status=1 ;;
  esac
done

for c in "${cases[@]}"; do [ -e "$raw/$c.jsonl" ] && cat "$raw/$c.jsonl"; done >"$base.jsonl"
cat "$raw/notes.jsonl" >>"$base.jsonl"
if ! command -v python3 >/dev/null; then
  log "no python3: raw lines in $base.jsonl, no report"
  exit $status
fi
python3 "$here/report.py" "$base.jsonl" --md "$base.md"
rc=$?
log "wrote $base.jsonl and $base.md ($((SECONDS - start))s; report exit $rc)"
[ $status = 0 ] && status=$rc
exit $status
