#!/usr/bin/env bash
# The GPU check of the complex LAPACK part 2 (c, z: geqrf ungqr unmqr gels heevd heev heevr gesvd gesdd getri potri) in
# one device call of at most BO_DEVICE_LIMIT_S (default 290) seconds: the GPU LAPACK tests (the complex LU and Cholesky
# share the cuSOLVER complex group part 2 now needs), Debian's xlintst[cz] on the GE, PO, QR and LS paths and
# xeigtst[cz] on sep, svd, lse and glm with the part-2 routines forced onto the GPU (device-lapack2.sh with
# BO_LAPACK2_PRECISIONS="c z"), then lapack2_complex_check with every complex part-2 routine on the GPU. Each part must
# pass and show its routines run on the GPU; a PASS/FAIL table ends the output, the logs are in $OUT/logs.tar.gz.
# Usage (on the GPU machine, from the repository root):
#   tests/gpu/device-lapack2-complex.sh CARRY BLAS_CARRY
#     CARRY        made by tests/gpu/make-device-carry.sh (lib/ with the library and its CUDA module, gpu/ with
#                  blasoffload_gpu_tests, bin/ with lapack2_complex_check)
#     BLAS_CARRY   made by tests/gpu/make-blas-carry.sh (reference BLAS and LAPACK with their test programs)
# Environment: BO_LAPACK2_INPUTS (xeigtst inputs, default "sep svd lse glm"), BO_LAPACK2_COMPLEX_SIZES (the program's,
# default "60 300").
set -u
root=$(pwd)
C=$(cd "$1" && pwd)
B=$(cd "$2" && pwd)
L=$B/usr/lib/x86_64-linux-gnu
O=${OUT:-/tmp/blasoffload-lapack2-complex}
limit=${BO_DEVICE_LIMIT_S:-290}
start=$SECONDS
mkdir -p "$O/logs"
trap 'pkill -P $$ 2>/dev/null; exit 130' INT TERM
declare -A result
left() { echo $((limit - (SECONDS - start))); }

# 1. The GPU LAPACK tests (a few seconds): the complex group of cuSOLVER must still give part 1 its complex routines.
if [ -x "$C/gpu/blasoffload_gpu_tests" ]; then
  timeout -k 5 60 "$C/gpu/blasoffload_gpu_tests" --gtest_filter='*GpuLapack*' >"$O/logs/gpu_tests.log" 2>&1
  rc=$?
  result[gpu_tests]=$([ $rc = 0 ] && echo PASS || echo "FAIL rc=$rc")
else
  result[gpu_tests]="SKIP (no gpu/blasoffload_gpu_tests)"
fi

# 2. The reference suites, c and z, the part-2 routines forced onto the GPU; they stop 75 s before the end.
OUT=$O/logs/suites BO_LAPACK2_PRECISIONS="c z" BO_LAPACK2_INPUTS="${BO_LAPACK2_INPUTS:-sep svd lse glm}" \
  BO_DEVICE_LIMIT_S=$(($(left) - 75)) bash "$root/tests/gpu/device-lapack2.sh" "$C/lib" "$B" >"$O/logs/suites.log" 2>&1
while read -r name rest; do
  [ -n "$name" ] && result[$name]=$([[ $rest == rc=0\ * || $rest == rc=0 ]] && echo "PASS $rest" || echo "FAIL $rest")
done <"$O/logs/suites/index.txt"

# 3. lapack2_complex_check with every complex part-2 routine on the GPU (the rest of the program's calls on the CPU).
prog=$C/bin/lapack2_complex_check
if [ -x "$prog" ]; then
  env_args=(BLASOFFLOAD_MODE=cpu BLASOFFLOAD_LOG=summary "BLASOFFLOAD_LOG_FILE=$O/logs/program.summary")
  routines=(geqrf ungqr unmqr gels heevd heev heevr gesvd gesdd getri potri)
  for p in C Z; do for r in "${routines[@]}"; do env_args+=("BLASOFFLOAD_$p${r^^}=gpu"); done; done
  env "${env_args[@]}" LD_PRELOAD="$C/lib/libblasoffload.so" LD_LIBRARY_PATH="$L/blas:$L/lapack:$L" \
    timeout -k 5 $(($(left) - 5)) "$prog" ${BO_LAPACK2_COMPLEX_SIZES:-60 300} >"$O/logs/program.log" 2>&1
  rc=$?
  missing=""
  for p in c z; do
    for r in "${routines[@]}"; do
      g=$(awk -v r="$p$r" '$1 == r {print $4}' "$O/logs/program.summary" 2>/dev/null)
      [ "${g:-0}" -ge 1 ] 2>/dev/null || missing="$missing,$p$r"
    done
  done
  tally=$(grep -E "^[0-9]+ passed, [0-9]+ failed$" "$O/logs/program.log" | tail -1)
  if [ $rc = 0 ] && [ -z "$missing" ] && [[ $tally == *" 0 failed" ]]; then
    result[lapack2_complex_check]="PASS $tally"
  else
    result[lapack2_complex_check]="FAIL rc=$rc ${tally:-no tally}${missing:+ not-on-gpu:${missing#,}}"
  fi
else
  result[lapack2_complex_check]="FAIL (no bin/lapack2_complex_check in the carry)"
fi

tar -czf "$O/logs.tar.gz" -C "$O" logs 2>/dev/null && rm -rf "$O/logs"
echo "=== device-lapack2-complex ($((SECONDS - start)) s)"
bad=0
for k in $(printf '%s\n' "${!result[@]}" | sort); do
  printf '%-28s %s\n' "$k" "${result[$k]}"
  [[ ${result[$k]} == FAIL* ]] && bad=$((bad + 1))
done
[ -f "$O/logs.tar.gz" ] || echo "(logs left in $O/logs)"
grep -m 20 "^FAIL" <(tar -xOzf "$O/logs.tar.gz" logs/program.log 2>/dev/null) || true
echo "device-lapack2-complex: $([ $bad = 0 ] && echo PASS || echo "FAIL ($bad)")"
