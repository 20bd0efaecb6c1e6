#!/usr/bin/env bash
# On the GPU machine, one device call: LAPACK part 2 as a SciPy program sees it (part2.py), without the library twice
# (the A/A pair: the wheel's own OpenBLAS LAPACK, SkylakeX, 16 threads) and preloaded with default settings (auto, no
# policy file) twice, then the GPU route's reference (part2_torch.py). Raw lines to OUTDIR/part2-<gpu>-<date>-<commit>
# .jsonl, the log beside it; report.py makes the table.
# Usage: bench/scipy_lapack/run.sh LIBDIR OUTDIR [PYTHON]
set -uo pipefail
lib=$(cd "$1" && pwd)/libblasoffload.so
out=$2
py=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-')
commit=$(head -1 "$(dirname "$lib")/../COMMIT" 2>/dev/null)
tag=${gpu:-nogpu}-$(date -u +%Y%m%d)-${commit:-unknown}
jsonl=$out/part2-$tag.jsonl log=$out/part2-$tag.log
trap 'pkill -P $$ 2>/dev/null' EXIT
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-16}
# Small and medium points (both stacks, 3 repetitions), then the issue's large ones: one call each on the CPU.
small="geqrf:d:1024,geqrf:s:1024,syevd:d:1024,syevd:s:1024,gesdd:d:1024,gesdd:s:1024,gels:d:1024:8192,getri:d:1024"
small="$small,potri:d:1024,syevr:d:1024,geqrf:d:256,syevd:d:256,gesdd:d:256,getri:d:256,gels:d:256:2048"
big_pts=(geqrf:d:8192 geqrf:s:8192 geqrf:d:4096 gels:d:1024:65536 gels:s:1024:65536 syevd:d:4096 syevd:s:4096
  syevr:d:4096 syevd:d:8192 syevd:s:8192 gesdd:d:4096 gesdd:s:4096 gesvd:d:2048 getri:d:4096 potri:d:4096
  geqrf:s:16384 syevr:d:8192)
big=() bigr=()
for p in "${big_pts[@]}"; do big+=("$p::0"); bigr+=("$p::2"); done
fix() { sed -E 's/^([a-z]+:[sd]:[0-9]+)::/\1:0:/; s/^([a-z]+:[sd]:[0-9]+:[0-9]+)::/\1:/' <<<"$1"; }
cpu_pts=$(for p in "${big[@]}"; do fix "$p"; done | paste -sd,)
gpu_pts=$(for p in "${bigr[@]}"; do fix "$p"; done | paste -sd,)
{
  echo "# $(date -u +%FT%TZ) gpu=$gpu commit=$commit cores=$(nproc) threads=$OPENBLAS_NUM_THREADS"
  "$py" -c 'import numpy, scipy; print("numpy", numpy.__version__, "scipy", scipy.__version__); scipy.show_config()' \
    2>&1 | grep -iE "numpy|openblas|version" | head -8
} >"$log"
: >"$jsonl"
for round in 1 2; do
  echo "## without the library, round $round" >>"$log"
  timeout 200 env -u LD_PRELOAD "$py" "$here/part2.py" --label "cpu-$round" --points "$small" >>"$jsonl" 2>>"$log"
  echo "## with the library (auto), round $round" >>"$log"
  timeout 60 env LD_PRELOAD="$lib" BLASOFFLOAD_LOG=summary "$py" "$here/part2.py" --label "auto-$round" \
    --points "$small" >>"$jsonl" 2>>"$log"
done
echo "## large points without the library" >>"$log"
timeout 240 env -u LD_PRELOAD "$py" "$here/part2.py" --label cpu-1 --points "$cpu_pts" --budget-s 200 >>"$jsonl" \
  2>>"$log"
echo "## large points with the library (auto)" >>"$log"
timeout 120 env LD_PRELOAD="$lib" BLASOFFLOAD_LOG=summary "$py" "$here/part2.py" --label auto-1 --points "$gpu_pts" \
  >>"$jsonl" 2>>"$log"
echo "## the GPU route (PyTorch on CUDA: cuSOLVER)" >>"$log"
timeout 90 "$py" "$here/part2_torch.py" --points "$gpu_pts,$small" >>"$jsonl" 2>>"$log"
echo "# done $(date -u +%FT%TZ)" >>"$log"
