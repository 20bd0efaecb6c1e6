#!/usr/bin/env bash
# On the GPU machine: issue 39's NumPy targets and checks with the machine's own pip NumPy, in one device call.
# 1. targets.py four times, alternating without and with the library preloaded (default settings: mode auto, no
#    policy file), so each side has an A/A pair, and once preloaded in mode cpu (its summary times NumPy's LAPACK and
#    BLAS calls on the CPU, apart from NumPy's own work around them); 2. NumPy's linalg test suite preloaded in mode auto
#    and mode gpu with the summary on, and SciPy's where the machine has it. Everything goes to OUTDIR as numpy-<gpu>-<date>-<commit>.{jsonl,log}; the report is made here by
#    bench/numpy/report.py.
# Usage: bench/numpy/run.sh LIBDIR OUTDIR [PYTHON]   (LIBDIR holds libblasoffload.so and libblasoffload_cuda.so)
set -uo pipefail
lib=$(cd "$1" && pwd)/libblasoffload.so
out=$2
py=${3:-python3}
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-')
commit=$(cat "$(dirname "$lib")/../COMMIT" 2>/dev/null | head -1)
tag=${gpu:-nogpu}-$(date -u +%Y%m%d)-${commit:-unknown}
here=$(cd "$(dirname "$0")" && pwd)
jsonl=$out/numpy-$tag.jsonl log=$out/numpy-$tag.log
trap 'pkill -P $$ 2>/dev/null' EXIT
{
  echo "# $(date -u +%FT%TZ) gpu=$gpu commit=$commit python=$($py -c 'import sys;print(sys.version.split()[0])')" \
    "numpy=$($py -c 'import numpy;print(numpy.__version__)') cores=$(nproc)"
  $py -c 'import numpy; numpy.show_config()' 2>&1 | grep -i -A1 "openblas configuration" | head -3
} >"$log"
: >"$jsonl"
for round in 1 2; do
  echo "## targets without the library, round $round" >>"$log"
  timeout 90 env -u LD_PRELOAD "$py" "$here/targets.py" --label "without-$round" >>"$jsonl" 2>>"$log"
  echo "## targets with the library, round $round" >>"$log"
  timeout 90 env LD_PRELOAD="$lib" BLASOFFLOAD_LOG=summary "$py" "$here/targets.py" --label "with-$round" \
    >>"$jsonl" 2>>"$log"
  if [ $round = 1 ]; then
    echo "## targets with the library, BLASOFFLOAD_MODE=cpu" >>"$log"
    timeout 90 env LD_PRELOAD="$lib" BLASOFFLOAD_MODE=cpu BLASOFFLOAD_LOG=summary "$py" "$here/targets.py" \
      --label cpu-mode >>"$jsonl" 2>>"$log"
  fi
done
for mode in auto gpu; do
  echo "## pytest numpy.linalg, BLASOFFLOAD_MODE=$mode" >>"$log"
  (cd /tmp && timeout 130 env LD_PRELOAD="$lib" BLASOFFLOAD_MODE=$mode BLASOFFLOAD_LOG=summary \
    "$py" -m pytest --pyargs numpy.linalg -q -p no:cacheprovider -x -W ignore 2>&1 | tail -60) >>"$log"
done
# SciPy's, where the machine has it (its wheel brings scipy-openblas32: the scipy_ LP64 family).
if "$py" -c 'import scipy' 2>/dev/null; then
  for mode in auto gpu; do
    echo "## pytest scipy.linalg, BLASOFFLOAD_MODE=$mode" >>"$log"
    (cd /tmp && timeout 150 env LD_PRELOAD="$lib" BLASOFFLOAD_MODE=$mode BLASOFFLOAD_LOG=summary \
      "$py" -m pytest --pyargs scipy.linalg -q -p no:cacheprovider -W ignore 2>&1 | tail -60) >>"$log"
  done
else
  echo "## no SciPy on this machine" >>"$log"
fi
echo "# done in ${SECONDS}s" >>"$log"
