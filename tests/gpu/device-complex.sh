#!/usr/bin/env bash
# Debian's complex reference suites (xblat[123][cz], x[cz]cblat[123], xlintst[cz]) on the GPU machine with
# BLASOFFLOAD_MODE=gpu, one program at a time: each must pass and count its complex routines; BO_COMPLEX_ON=gpu (the
# default) requires the routines listed to have run on the GPU, =cpu that they stayed on the CPU library (a library
# without the complex GPU path). With =gpu, xblat3[cz] run a second time with BLASOFFLOAD_PIPELINE=always: every gemm
# of theirs through the tiled host pipeline (complex alpha and beta in its tiles and K passes). Logs and an index go to
# $OUT.
# Usage (from the repository root): tests/gpu/device-complex.sh LIB_DIR BLAS_CARRY [UNIT_DIR]
#   LIB_DIR      libblasoffload.so and libblasoffload_cuda.so; BLAS_CARRY made by tests/gpu/make-blas-carry.sh
#   UNIT_DIR     blasoffload_unit_tests and complex_probe of a build in build-dev/: then the complex unit tests
#                (Complex*) run too, with BLASOFFLOAD_MODE=gpu, against the library in LIB_DIR
# Environment: BO_DEVICE_LIMIT_S (default 300): no program starts after this many seconds.
set -u
root=$(pwd)
K=$(cd "$1" && pwd)
L=$(cd "$2" && pwd)/usr/lib/x86_64-linux-gnu
O=${OUT:-/tmp/blasoffload-complex}
limit=${BO_DEVICE_LIMIT_S:-300}
on=${BO_COMPLEX_ON:-gpu}
mkdir -p "$O"
: >"$O/index.txt"
start=$SECONDS
trap 'pkill -P $$ 2>/dev/null; exit 130' INT TERM

# name program input format routines (summary rows that must count calls) expect-pass names...
jobs_list() {
  for p in c z; do
    P=${p^^}
    n=$([ $p = c ] && echo scnrm2 || echo dznrm2)
    echo "xblat1$p $L/blas/xblat1$p - blas1 $n ${n^^}"
    echo "xblat2$p $L/blas/xblat2$p $L/blas/${p}blat2.in blas ${p}gemv,${p}trsv ${P}GEMV ${P}TRSV"
    echo "xblat3$p $L/blas/xblat3$p $L/blas/${p}blat3.in blas ${p}gemm,${p}trsm,${p}syrk,${p}herk ${P}GEMM ${P}TRSM ${P}SYRK ${P}HERK"
    [ "$on" = gpu ] &&
      echo "xblat3$p-pipeline $L/blas/xblat3$p $L/blas/${p}blat3.in blas ${p}gemm ${P}GEMM"
    echo "x${p}cblat2 $L/blas/x${p}cblat2 $L/blas/${p}in2 blas ${p}gemv,${p}trsv cblas_${p}gemv cblas_${p}trsv"
    echo "x${p}cblat3 $L/blas/x${p}cblat3 $L/blas/${p}in3 blas ${p}gemm,${p}trsm,${p}herk cblas_${p}gemm cblas_${p}herk"
    echo "xlintst$p $L/lapack/xlintst$p $L/lapack/${p}test.in lapack ${p}getrf,${p}getrs,${p}gesv,${p}potrf,${p}potrs,${p}posv,${p}trtrs,${p}gemm,${p}herk"
  done
}

jobs_list | while read -r name prog inp fmt rows passes; do
  if [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "$name rc=not-started" >>"$O/index.txt"
    continue
  fi
  args=(--workdir "$O/$name" --lib "$K/libblasoffload.so" --program "$prog" --format "$fmt"
    --ld-library-path "$L/blas:$L/lapack:$L" --set BLASOFFLOAD_MODE=gpu --expect-mode gpu
    --expect-gpu "^  GPU: (blasoffload-cuda|not used)")  # not used: a program whose calls all stayed on the CPU
  [ "$inp" = - ] || args+=(--stdin "$inp")
  case $name in *-pipeline) args+=(--set BLASOFFLOAD_PIPELINE=always) ;; esac
  for r in ${rows//,/ }; do args+=(--min-calls "$r=1"); done
  for x in $passes; do args+=(--expect-pass "$x"); done
  s=$SECONDS
  timeout -k 5 $((limit - (SECONDS - start) + 60)) bash "$root/tests/lapack/run_suite.sh" "${args[@]}" \
    >"$O/$name.result" 2>&1
  rc=$?
  # Where the complex rows ran: calls/cpu/gpu.
  where=$(awk '$1 ~ /^(c|z|sc|dz)[a-z0-9]+$/ && $2 ~ /^[0-9]+$/ {printf " %s=%s/%s/%s", $1, $2, $3, $4}' \
    "$O/$name/blasoffload.log" 2>/dev/null)
  bad=""
  for r in ${rows//,/ }; do
    g=$(awk -v r="$r" '$1 == r {print $4}' "$O/$name/blasoffload.log" 2>/dev/null)
    if [ "$on" = cpu ]; then [ "${g:-x}" = 0 ] || bad="$bad,$r"; else [ "${g:-0}" -ge 1 ] 2>/dev/null || bad="$bad,$r"; fi
  done
  [ -n "$bad" ] && rc="$rc,not-on-$on:${bad#,}"
  echo "$name rc=$rc$where $((SECONDS - s))s" >>"$O/index.txt"
done

if [ -n "${3:-}" ] && [ $((SECONDS - start)) -lt "$limit" ]; then
  U=$(cd "$3" && pwd)
  # The unit tests find the library where they were built (build-dev/, not carried): point it at LIB_DIR.
  [ -e "$root/build-dev/libblasoffload.so.0.1.0" ] || ln -sfn "$K" "$root/build-dev"
  s=$SECONDS
  # ComplexSummary runs its probe against Debian's paths, which only the CPU machines have.
  LD_LIBRARY_PATH=$L/blas:$L/lapack:$L BLASOFFLOAD_MODE=gpu BLASOFFLOAD_TEST_ALLOW_GPU=1 BLASOFFLOAD_LOG=summary \
    BLASOFFLOAD_LOG_FILE=$O/unit-summary.log timeout -k 5 "$((limit - (SECONDS - start) + 60))" \
    "$U/blasoffload_unit_tests" --gtest_filter='Complex*:-ComplexSummary.*' >"$O/unit.log" 2>&1
  rc=$?
  where=$(awk '$1 ~ /^(c|z|sc|dz)[a-z0-9]+$/ && $2 ~ /^[0-9]+$/ {printf " %s=%s/%s/%s", $1, $2, $3, $4}' \
    "$O/unit-summary.log" 2>/dev/null)
  echo "unit-complex rc=$rc$where $((SECONDS - s))s" >>"$O/index.txt"
  grep -E "^\[  (PASSED|FAILED) |Failure" "$O/unit.log" | head -20
fi

echo "=== complex suites, BLASOFFLOAD_MODE=gpu, routines expected on the $on ($((SECONDS - start)) s)"
cat "$O/index.txt"
for f in "$O"/*.result; do grep -q "^FAIL" "$f" && { echo "--- $(basename "$f" .result)"; grep "^FAIL" "$f" | head -8; }; done
bad=$(grep -vEc " rc=0( |$)" "$O/index.txt")
echo "device-complex: $([ "$bad" = 0 ] && echo PASS || echo "FAIL ($bad)")"
