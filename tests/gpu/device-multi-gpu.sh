#!/usr/bin/env bash
# Issue 42's LAPACK acceptance on a machine of two GPUs or more: Debian's xlintst[dsz] with the factorizations spread
# over two GPUs (BLASOFFLOAD_MULTI_GPU_MIN_N=1), each run required to pass, with the summary showing the routines under
# test intercepted and the log counting the calls that ran on two.
# - lu: gpu mode, every square getrf and every potrf of order 64 or more on cuSOLVERMg (BLASOFFLOAD_DEVICES=0,1;
#   smaller orders keep one GPU, 32 columns a GPU at least); input tests/gpu/multi-gpu/?test-2gpu.in (orders 0 1 64
#   132, the GE and PO paths): Debian's goes to order 50, which no longer reaches two GPUs.
# - qr: cpu mode with geqrf forced onto the GPU (BLASOFFLOAD_<P>GEQRF=gpu: the paths' other calls stay on the CPU), the
#   tiled QR (qr_mg.cu) on two lanes for every geqrf of two blocks or more; input ?test-qr-2gpu.in (the same orders, the
#   QR and LS paths).
# cuSOLVERMg and the tiled QR take a GPU listed twice as two shares: BO_MG_DEVICES=0,0 runs both jobs on one GPU.
# Usage (GPU machine, repository root): tests/gpu/device-multi-gpu.sh LIB_DIR BLAS_CARRY [PRECISIONS]
#   LIB_DIR: libblasoffload.so with libblasoffload_cuda.so beside it; BLAS_CARRY: prepare-carry.sh's folder with the
#   LAPACK test programs; PRECISIONS: default "d s z". Results: $OUT/multi-gpu-index.txt, one folder per suite and its
#   run_suite.sh output (<suite>.result.gz).
# Environment: BO_MG_JOBS (default "lu qr"), BO_MG_DEVICES (default 0,1), BO_SUITE_LIMIT_S (default 240, per suite).
set -u
K=$(cd "$1" && pwd)
L=$(cd "$2" && pwd)/usr/lib/x86_64-linux-gnu
root=$(cd "$(dirname "$0")/../.." && pwd)
O=${OUT:-/tmp/blasoffload-multi-gpu}
mkdir -p "$O"
status=0
devs=${BO_MG_DEVICES:-0,1}
for p in ${3:-d s z}; do
  for job in ${BO_MG_JOBS:-lu qr}; do
    if [ "$job" = lu ]; then
      name=xlintst$p-2gpu input=${p}test-2gpu.in mark="on 2 GPUs (cuSOLVERMg)"
      args=(--set BLASOFFLOAD_MODE=gpu --expect-mode gpu --min-calls "${p}getrf=1" --min-calls "${p}potrf=1")
      rows="getrf|potrf|getrs|potrs"
    else
      name=xlintst$p-qr-2gpu input=${p}test-qr-2gpu.in mark="on 2 GPUs (tiled QR"
      args=(--set BLASOFFLOAD_MODE=cpu --expect-mode cpu --set "BLASOFFLOAD_${p^^}GEQRF=gpu" --min-calls "${p}geqrf=1")
      rows="geqrf|gels"
    fi
    s=$SECONDS
    timeout -k 5 "${BO_SUITE_LIMIT_S:-240}" bash "$root/tests/lapack/run_suite.sh" --workdir "$O/$name" \
      --lib "$K/libblasoffload.so" --program "$L/lapack/xlintst$p" --stdin "$root/tests/gpu/multi-gpu/$input" \
      --format lapack --ld-library-path "$L/blas:$L/lapack:$L" "${args[@]}" \
      --set BLASOFFLOAD_MULTI_GPU_MIN_N=1 --set BLASOFFLOAD_DEVICES="$devs" --set BLASOFFLOAD_LOG=debug \
      >"$O/$name.result" 2>&1
    rc=$?
    log=$O/$name/blasoffload.log
    mg=$(grep -c "$mark" "$log" 2>/dev/null)
    why=$(grep -o "on 2 GPUs: [^;]*\|cuSOLVERMg failed ([0-9]*)" "$log" 2>/dev/null | sort | uniq -c | head -5 | tr '\n' ';')
    where=$(awk -v re="^[sdz]($rows)\$" '$1 ~ re && $2 ~ /^[0-9]+$/ {printf " %s=%s/%s/%s", $1, $2, $3, $4}' "$log")
    [ "${mg:-0}" -ge 1 ] || rc="$rc,none-on-2-gpus"
    [ "$rc" = 0 ] || status=1
    echo "$name rc=$rc on-2-gpus=${mg:-0}$where $((SECONDS - s))s ${why}" | tee -a "$O/multi-gpu-index.txt"
    grep -h "tests failed\|FAIL" "$O/$name.result" | head -5
    # Both hold the debug log (tens of MB): compressed, they come back from a device call (16 MiB a file).
    gzip -f "$log" "$O/$name.result" 2>/dev/null
  done
done
exit $status
