#!/usr/bin/env bash
# The GPU check of LAPACK part 2 in one device call: Debian's reference LAPACK test programs with the part-2 routines
# forced onto the GPU (xlintst[sd] on the paths that call them: GE for getri, PO for potri, QR, LS; xeigtst[sd] with
# the sep, svd, nep, lse and glm inputs), each required to pass and to show its part-2 routines run on the GPU, then the
# LAPACK user programs of tests/lapack_programs (device-run.sh) where they were built. Logs and a summary go to $OUT.
# BO_LAPACK2_MODE=part2 (the default) runs only the part-2 routines on the GPU (BLASOFFLOAD_MODE=cpu with
# BLASOFFLOAD_<ROUTINE>=gpu for each): with everything forced onto the GPU (=all, BLASOFFLOAD_MODE=gpu) the programs'
# hundreds of thousands of tiny BLAS calls each pay a GPU round trip, and xlintst and the svd input outlast a call.
# BO_LAPACK2_INPUTS: the xeigtst inputs (default "sep svd nep lse glm"). BO_LAPACK2_JOBS: only these jobs (names as in
# the index, e.g. "xlintstd.dtest2 xeigtsts.svd"; default all). BO_LAPACK2_PROGRAMS: LAPACK_PROGRAMS for device-run.sh,
# BO_LAPACK2_SIZES its sizes (default "300 2000").
# BO_LAPACK2_PRECISIONS: the precisions (default "s d"; "c z" for the complex part 2: ungqr unmqr heevd heev heevr for
# orgqr ormqr syevd syev syevr; device-lapack2-complex.sh runs that).
# BO_LAPACK2_PARALLEL: programs run at once (default 8 for part2, 1 for all). Processes sharing the GPU take turns in
# time slices: with ten of them each tiny call waited about 0.8 ms instead of the 15 us it takes alone, so with every
# call on the GPU one program at a time finishes sooner (the user programs then run first, not beside the suites).
# Usage (on the GPU machine, from the repository root):
#   tests/gpu/device-lapack2.sh LIB_DIR BLAS_CARRY [PROGRAMS_DIR]
#     LIB_DIR      libblasoffload.so and libblasoffload_cuda.so (a build folder or a carry of them)
#     BLAS_CARRY   made by tests/gpu/make-blas-carry.sh (reference BLAS/LAPACK with the s and d test programs)
#     PROGRAMS_DIR for device-run.sh: the lapack2_check programs and the library (in it or its bin/ and lib/;
#                  libblasoffload_cuda.so beside the library, not behind a link) (optional); they run over
#                  the carry's reference BLAS/LAPACK
# Environment: BO_DEVICE_LIMIT_S (default 560): the suites are stopped after this many seconds.
set -u
root=$(pwd)
K=$(cd "$1" && pwd)
L=$(cd "$2" && pwd)/usr/lib/x86_64-linux-gnu
P=${3:-}
O=${OUT:-/tmp/blasoffload-lapack2}
limit=${BO_DEVICE_LIMIT_S:-560}
precs=${BO_LAPACK2_PRECISIONS:-s d}
mkdir -p "$O/suites" "$O/inputs"
start=$SECONDS
trap 'pkill -P $$ 2>/dev/null; exit 130' INT TERM

# Inputs: the linear-equation files cut to the paths that reach part 2 (the header's 16 lines, then the paths).
for p in $precs; do
  P_=${p^^}
  {
    head -16 "$L/lapack/${p}test.in"
    grep -E "^${P_}(GE|PO|QR|LS) " "$L/lapack/${p}test.in"
  } >"$O/inputs/${p}test2.in"
done

part2_of() {  # the part-2 routines of precision $1, without its letter
  case $1 in
    c | z) echo geqrf ungqr unmqr gels heevd heev heevr gesvd gesdd getri potri ;;
    *) echo geqrf orgqr ormqr gels syevd syev syevr gesvd gesdd getri potri ;;
  esac
}
mode_args=(--set BLASOFFLOAD_MODE=gpu --expect-mode gpu)
if [ "${BO_LAPACK2_MODE:-part2}" = part2 ]; then
  mode_args=(--set BLASOFFLOAD_MODE=cpu --expect-mode cpu)
  for p in $precs; do
    for r in $(part2_of "$p"); do mode_args+=(--set "BLASOFFLOAD_${p^^}${r^^}=gpu"); done
  done
fi
declare -A need=([sep]=syevd,syev,syevr [svd]=gesvd,gesdd [nep]=- [lse]=- [glm]=-)
declare -A need_cx=([sep]=heevd,heev,heevr [svd]=gesvd,gesdd [nep]=- [lse]=- [glm]=-)

# name program input routines-that-must-run-on-the-GPU
jobs_list() {
  all_jobs | while read -r name rest; do
    if [ -z "${BO_LAPACK2_JOBS:-}" ] || [[ " $BO_LAPACK2_JOBS " == *" $name "* ]]; then echo "$name $rest"; fi
  done
}
all_jobs() {
  for p in $precs; do
    local q=orgqr,ormqr n
    [[ $p == [cz] ]] && q=ungqr,unmqr
    echo "xlintst$p.${p}test2 $L/lapack/xlintst$p $O/inputs/${p}test2.in geqrf,$q,gels,getri,potri"
    for i in ${BO_LAPACK2_INPUTS:-sep svd nep lse glm}; do
      n=${need[$i]}
      [[ $p == [cz] ]] && n=${need_cx[$i]}
      echo "xeigtst$p.$i $L/lapack/xeigtst$p $L/lapack/$i.in $n"
    done
  done
}

run_one() {  # name program input routines (without the precision letter, or -)
  local name=$1 prog=$2 inp=$3 need=$4 d=$O/suites/$1 t rc p
  p=${prog: -1}  # xlintsts, xeigtstd: the precision letter
  t=$((limit - (SECONDS - start)))
  [ "$t" -gt 10 ] || { echo "$name rc=not-started" >>"$O/index.txt"; return; }
  local s=$SECONDS
  timeout -k 5 "$t" bash "$root/tests/lapack/run_suite.sh" --workdir "$d" --lib "$K/libblasoffload.so" \
    --program "$prog" --format lapack --stdin "$inp" --ld-library-path "$L/blas:$L/lapack:$L" \
    $MODE_ARGS --expect-gpu "^  GPU: blasoffload-cuda" >"$d.result" 2>&1
  rc=$?
  # Summary rows: routine calls cpu gpu fallback ...; the part-2 rows as calls/gpu.
  local rows missing=""
  rows=$(awk '$1 ~ /^[sdcz](geqrf|orgqr|ormqr|ungqr|unmqr|gels|syevd|syev|syevr|heevd|heev|heevr|gesvd|gesdd|getri|potri)$/ {printf " %s=%s/%s", $1, $2, $4}' \
    "$d/blasoffload.log" 2>/dev/null)
  if [ "$need" != "-" ]; then
    for r in ${need//,/ }; do
      r=$p$r
      g=$(awk -v r="$r" '$1 == r {print $4}' "$d/blasoffload.log" 2>/dev/null)
      [ "${g:-0}" -ge 1 ] 2>/dev/null || missing="$missing,$r"
    done
  fi
  [ -n "$missing" ] && rc="$rc,not-on-gpu:${missing#,}"
  echo "$name rc=$rc$rows $((SECONDS - s))s" >>"$O/index.txt"
}
export -f run_one
export O L K root limit start
export MODE_ARGS="${mode_args[*]}"  # arrays do not cross into xargs' shells (no value holds a space)

: >"$O/index.txt"
parallel=${BO_LAPACK2_PARALLEL:-8}
[ "${BO_LAPACK2_MODE:-part2}" = part2 ] || parallel=${BO_LAPACK2_PARALLEL:-1}
run_programs() {  # the user programs (their sizes keep them within the call)
  if [ -n "$P" ] && [ -d "$P" ]; then
    LD_LIBRARY_PATH="$L/blas:$L/lapack:$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OUT=$O/programs \
      LAPACK_PROGRAMS=${BO_LAPACK2_PROGRAMS:-found} timeout -k 5 $((limit - 20)) \
      bash "$root/tests/lapack_programs/device-run.sh" "$P" ${BO_LAPACK2_SIZES:-300 2000} >"$O/programs.log" 2>&1
    echo "programs rc=$?" >>"$O/index.txt"
  fi
}
if [ "$parallel" -gt 1 ]; then
  jobs_list | xargs -r -P "$parallel" -L 1 bash -c 'run_one "$@"' _ &
  suites_pid=$!
  run_programs
  wait "$suites_pid"
else
  run_programs
  jobs_list | xargs -r -L 1 bash -c 'run_one "$@"' _
fi

echo "=== results ($((SECONDS - start)) s)"
sort "$O/index.txt"
for f in "$O"/suites/*.result; do
  if grep -q "FAIL" "$f"; then
    echo "--- $(basename "$f" .result)"
    grep -E "FAIL|fail" "$f" | head -12
  fi
done
[ -f "$O/programs.log" ] && { echo "--- programs"; grep -E "PASS|FAIL|passed" "$O/programs.log" | tail -30; }
bad=$(grep -vEc " rc=0( |$)" "$O/index.txt")
echo "device-lapack2: $([ "$bad" = 0 ] && echo PASS || echo "FAIL ($bad)")"
