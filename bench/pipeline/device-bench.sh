#!/usr/bin/env bash
# The sgemm engine benchmark in one device call: unpacks the carried OpenBLAS, runs bench/pipeline/run.sh on the
# carried program and module within the call's time limit, and leaves the report, the raw lines and an archive of every
# log in the output folder (3 files, as the device tool returns them).
# Usage (on the GPU machine, from the repository root):
#   bash bench/pipeline/device-bench.sh CARRY_DIR OUTDIR [CASES]
#   CARRY_DIR  made by bench/pipeline/make-carry.sh
#   OUTDIR     where the results go; - for $OUT (the device tool's folder)
#   CASES      comma list of sgemm_host, rank_update, out_of_core, multi_gpu, or all (default; multi_gpu is skipped on
#              a machine with one GPU)
# Environment: BO_DEVICE_LIMIT_S=570 (the whole script's deadline; run.sh gets what is left minus 20 s for the
# report), BO_BLAS_DIR (a prepare-carry.sh --openblas folder instead of CARRY_DIR/blas-libs.tar.xz), and run.sh's
# knobs (BO_PIPELINE_ARGS, BLASOFFLOAD_* engine settings, OPENBLAS_NUM_THREADS, ...).
# OUTDIR gets pipeline/pipeline-<tag>.{md,jsonl} and pipeline-bench-<tag>.tar.gz (raw lines, stderr, env.txt, logs).
set -uo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
K=$(cd "$1" && pwd) || exit 2
if [ "$2" = "-" ]; then O=${OUT:-/tmp/blasoffload-pipeline-out}; else O=$2; fi
cases=${3:-all}
W=/tmp/blasoffload-pipeline-work
limit=${BO_DEVICE_LIMIT_S:-570}
rm -rf "$W"
mkdir -p "$O/pipeline" "$W"
exec > >(tee "$W/device-bench.log") 2>&1
echo "device-bench.sh: $(date -u +%Y-%m-%dT%H:%MZ) cases=$cases carry=$K limit=${limit}s"

if [ -n "${BO_BLAS_DIR:-}" ]; then
  blas_root=$(cd "$BO_BLAS_DIR" && pwd)
else
  # shellcheck source=../policy/unpack-blas.sh
  source "$here/../policy/unpack-blas.sh"
  blas_root=$(bo_unpack_blas "$K") || { echo "device-bench.sh: cannot unpack the BLAS libraries"; exit 2; }
fi
export BO_LIB_DIR=$K/lib BO_BLAS_ROOT=$blas_root
export BO_PIPELINE_BIN=$K/bin/blasoffload_bench_pipeline BO_CUDA_MODULE=$K/lib/libblasoffload_cuda.so
# shellcheck source=../policy/env.sh
source "$here/../policy/env.sh"
bo_cpu_env
tag=$(bo_gpu_name)-$(date -u +%Y-%m-%d)-$(bo_commit "$K/bin")
for f in "$BO_PIPELINE_BIN" "$BO_CUDA_MODULE" "$K/lib/tuned_params"; do
  [ -e "$f" ] || echo "device-bench.sh: warning: no $f"
done
nvidia-smi --query-gpu=index,name,temperature.gpu,power.draw,clocks.sm,memory.used --format=csv 2>&1 || true

budget=$((limit - SECONDS - 20))
echo "=== run.sh ($budget s)"
BO_BUDGET_S=$budget timeout $((budget + 15)) bash "$here/run.sh" "$W/pipeline" "$cases"
status=$?
cp "$W"/pipeline/pipeline-*.md "$W"/pipeline/pipeline-*.jsonl "$O/pipeline/" 2>/dev/null
echo "device-bench.sh: done in ${SECONDS}s (exit $status)"
sleep 0.2  # let tee write the last lines before the log is packed
tar -C "$W" -czf "$O/pipeline-bench-$tag.tar.gz" . 2>/dev/null
find "$O" -type f | sort
exit $status
