#!/usr/bin/env bash
# Issue 42's LAPACK acceptance on a machine of two GPUs or more: Debian's xlintst[dsz] in gpu mode with every square
# getrf and every potrf of order 64 or more spread over two GPUs (BLASOFFLOAD_MULTI_GPU_MIN_N=1,
# BLASOFFLOAD_DEVICES=0,1: cuSOLVERMg; smaller orders keep one GPU, 32 columns a GPU at least); each must pass, with the
# summary showing getrf/potrf on the GPU and the log counting the calls that ran on two. The input is ours
# (tests/gpu/multi-gpu/?test-2gpu.in: orders 0 1 64 132, the GE and PO paths): Debian's goes to order 50, which no
# longer reaches two GPUs.
# Usage (GPU machine, repository root): tests/gpu/device-multi-gpu.sh LIB_DIR BLAS_CARRY [PRECISIONS]
#   LIB_DIR: libblasoffload.so with libblasoffload_cuda.so beside it; BLAS_CARRY: prepare-carry.sh's folder with the
#   LAPACK test programs; PRECISIONS: default "d s z". Results: $OUT/multi-gpu-index.txt and one folder per suite.
set -u
K=$(cd "$1" && pwd)
L=$(cd "$2" && pwd)/usr/lib/x86_64-linux-gnu
root=$(cd "$(dirname "$0")/../.." && pwd)
O=${OUT:-/tmp/blasoffload-multi-gpu}
mkdir -p "$O"
status=0
for p in ${3:-d s z}; do
  name=xlintst$p-2gpu
  s=$SECONDS
  timeout -k 5 "${BO_SUITE_LIMIT_S:-240}" bash "$root/tests/lapack/run_suite.sh" --workdir "$O/$name" \
    --lib "$K/libblasoffload.so" --program "$L/lapack/xlintst$p" --stdin "$root/tests/gpu/multi-gpu/${p}test-2gpu.in" \
    --format lapack \
    --ld-library-path "$L/blas:$L/lapack:$L" --set BLASOFFLOAD_MODE=gpu --expect-mode gpu \
    --set BLASOFFLOAD_MULTI_GPU_MIN_N=1 --set BLASOFFLOAD_DEVICES=0,1 --set BLASOFFLOAD_LOG=debug \
    --min-calls "${p}getrf=1" --min-calls "${p}potrf=1" >"$O/$name.result" 2>&1
  rc=$?
  log=$O/$name/blasoffload.log
  mg=$(grep -c "on 2 GPUs (cuSOLVERMg)" "$log" 2>/dev/null)
  why=$(grep -o "on 2 GPUs: [^;]*\|cuSOLVERMg failed ([0-9]*)" "$log" 2>/dev/null | sort | uniq -c | head -5 | tr '\n' ';')
  where=$(awk '$1 ~ /^[sdz](getrf|potrf|getrs|potrs)$/ && $2 ~ /^[0-9]+$/ {printf " %s=%s/%s/%s", $1, $2, $3, $4}' "$log")
  [ "${mg:-0}" -ge 1 ] || rc="$rc,none-on-2-gpus"
  [ "$rc" = 0 ] || status=1
  echo "$name rc=$rc on-2-gpus=${mg:-0}$where $((SECONDS - s))s ${why}" | tee -a "$O/multi-gpu-index.txt"
  grep -h "tests failed\|FAIL" "$O/$name.result" | head -5
  gzip -f "$log" 2>/dev/null
done
exit $status
