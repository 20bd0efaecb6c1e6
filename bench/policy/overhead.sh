#!/usr/bin/env bash
# Measures what the auto decision costs per call: blasoffload_regret --tiny (sgemv 4x4, snrm2 n=4, sgemm 4x4x4 on hot
# data) with no preload, with libblasoffload.so under BLASOFFLOAD_MODE=cpu (plain forwarding) and under auto, each in
# its own process, R rounds in rotating order, OpenBLAS as the CPU BLAS; then reports auto - cpu per call.
# Usage: bench/policy/overhead.sh [OUTDIR]     (default OUTDIR: bench/results/policy)
# Writes OUTDIR/overhead-<gpu>-<date>-<commit>.jsonl and .md, and the folder OUTDIR/overhead-<gpu>-<date>-<commit>/.
# Environment: BO_ROUNDS=5; BLASOFFLOAD_POLICY_FILE: a calibrated policy file with GPU numbers, so that auto runs the
# cost model (without one auto uses the built-in defaults, and on a machine without a GPU it never asks the model);
# BO_REGRET_BIN, BO_LIB_DIR, BO_BLAS_ROOT, OPENBLAS_*: as bench/policy/run.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=env.sh
source "$here/env.sh"
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
outdir=${1:-$bo_repo/bench/results/policy}
bin=${BO_REGRET_BIN:-$(bo_first "$here/blasoffload_regret" "$bo_repo/build/bench/policy/blasoffload_regret")}
rounds=${BO_ROUNDS:-5}
bo_start_run overhead.sh overhead "$outdir" "$bin" "BO_REGRET_BIN, BO_LIB_DIR, BO_BLAS_ROOT" "$bin" "$BO_LIB" \
  "$BO_OPENBLAS_DIR/libblas.so.3"
{
  bo_describe_env
  echo "rounds=$rounds"
} >"$base/env.txt"
cat "$base/env.txt" >&2
[ -n "${BLASOFFLOAD_POLICY_FILE:-}" ] ||
  echo "overhead.sh: warning: BLASOFFLOAD_POLICY_FILE unset: auto runs on the built-in defaults" >&2

path=$BO_OPENBLAS_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Logging stays off in the timed runs: counting is part of logging, not of the decision.
one() {
  local mode=$1 round=$2
  case $mode in
    none) env -u BLASOFFLOAD_MODE -u LD_PRELOAD LD_LIBRARY_PATH="$path" "$bin" --tiny --round="$round" ;;
    *) env -u BLASOFFLOAD_LOG LD_LIBRARY_PATH="$path" LD_PRELOAD="$BO_LIB" BLASOFFLOAD_MODE="$mode" \
      "$bin" --tiny --round="$round" ;;
  esac >"$base/tiny-$mode-r$round.jsonl" 2>"$base/tiny-$mode-r$round.err" ||
    echo "overhead.sh: $mode round $round failed: $(tail -2 "$base/tiny-$mode-r$round.err")" >&2
}
modes=(none cpu auto)
for ((r = 1; r <= rounds; ++r)); do
  for ((i = 0; i < 3; ++i)); do one "${modes[$(((i + r - 1) % 3))]}" "$r"; done
done
# Untimed: where auto sent these calls (the target is for calls it keeps on the CPU).
LD_LIBRARY_PATH="$path" LD_PRELOAD="$BO_LIB" BLASOFFLOAD_MODE=auto BLASOFFLOAD_LOG=summary \
  BLASOFFLOAD_LOG_FILE="$base/probe-auto-summary.log" "$bin" --tiny --warmup-s=0.05 >"$base/probe-auto.jsonl" 2>&1
cat "$base"/tiny-*.jsonl >"$base.jsonl"
rc=0
if command -v python3 >/dev/null; then
  python3 "$here/report.py" overhead "$base.jsonl" --md "$base.md" --summary "$base/probe-auto-summary.log" \
    ${BLASOFFLOAD_POLICY_FILE:+--policy "$BLASOFFLOAD_POLICY_FILE"}
  rc=$?
fi
echo "overhead.sh: wrote $base.jsonl and $base.md" >&2
exit $rc
