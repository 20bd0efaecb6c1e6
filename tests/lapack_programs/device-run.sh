#!/usr/bin/env bash
# Runs the LAPACK user programs on the GPU machine under LD_PRELOAD=libblasoffload.so with BLASOFFLOAD_MODE=gpu and
# fails when a check fails or when the summary does not show every routine the program checks run on the GPU: part 1
# (lapacke_check, lapack_check: s/d getrf getrs gesv potrf potrs posv trtrs) and part 2 (lapack2_check,
# lapack2_check_f: s/d geqrf orgqr ormqr gels syevd syev syevr gesvd gesdd getri potri).
#
# device-run.sh BUILD_DIR [N ...]     (sizes default to 300 2000 8192 for part 1, 300 2000 4096 for part 2)
#   BUILD_DIR holds libblasoffload.so and the programs (directly, in bin/ or in tests/lapack_programs/). The
#   programs need liblapacke.so.3 (part 1's C program), liblapack.so.3, libblas.so.3, libtmglib.so.3 (LAPACKE's) and
#   libgfortran.so.5: the caller's LD_LIBRARY_PATH is kept for them. Output and logs go to $OUT (or
#   ./lapack-programs-gpu) / PROGRAM/.
#   LAPACK_PROGRAMS="lapack2_check lapack2_check_f" (or part1, part2, all) picks the programs, each required; by
#   default every one of the four found in BUILD_DIR runs (at least one must be there).
# At 8192 each part-1 program takes about a minute of CPU-side checking besides the GPU work; part 2 checks sampled
# columns, but its CPU-only routines (?gelsd ?geqp3 ?geev, capped at 600/300) and the variants blasoffload keeps on the
# CPU (?gels with m < n, ?syevr RANGE V and I, job O on a wide SVD) run at the given sizes on the CPU LAPACK.
set -u

[ $# -ge 1 ] || { echo "usage: device-run.sh BUILD_DIR [N ...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
sizes=("$@")
out=${OUT:-$PWD/lapack-programs-gpu}
part1_routines=(sgetrf dgetrf sgetrs dgetrs sgesv dgesv spotrf dpotrf spotrs dpotrs sposv dposv strtrs dtrtrs)
part2_routines=(sgeqrf dgeqrf sorgqr dorgqr sormqr dormqr sgels dgels ssyevd dsyevd ssyev dsyev ssyevr dsyevr
  sgesvd dgesvd sgesdd dgesdd sgetri dgetri spotri dpotri)
case "${LAPACK_PROGRAMS:-found}" in
  all | found) programs=(lapacke_check lapack_check lapack2_check lapack2_check_f) ;;
  part1) programs=(lapacke_check lapack_check) ;;
  part2) programs=(lapack2_check lapack2_check_f) ;;
  *) read -r -a programs <<<"$LAPACK_PROGRAMS" ;;
esac

find_file() {  # NAME: the first of BUILD_DIR/{.,bin,lib,tests/lapack_programs}/NAME
  for d in "$build" "$build/bin" "$build/lib" "$build/tests/lapack_programs"; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}
lib=$(find_file libblasoffload.so) || { echo "device-run: no libblasoffload.so in $build" >&2; exit 2; }
if [ "${LAPACK_PROGRAMS:-found}" = found ]; then
  found=()
  for program in "${programs[@]}"; do find_file "$program" >/dev/null && found+=("$program"); done
  [ ${#found[@]} -gt 0 ] || { echo "FAIL: none of ${programs[*]} in $build"; echo "device-run: FAIL"; exit 1; }
  programs=("${found[@]}")
fi

status=0
for program in "${programs[@]}"; do
  case "$program" in
    lapacke_check | lapack_check) routines=("${part1_routines[@]}") run_sizes=(300 2000 8192) ;;
    lapack2_check | lapack2_check_f) routines=("${part2_routines[@]}") run_sizes=(300 2000 4096) ;;
    *) echo "FAIL: unknown program $program"; status=1; continue ;;
  esac
  [ ${#sizes[@]} -eq 0 ] || run_sizes=("${sizes[@]}")
  exe=$(find_file "$program") || { echo "FAIL: no $program in $build"; status=1; continue; }
  dir="$out/$program"
  rm -rf "$dir" && mkdir -p "$dir"
  echo "==== $program ${run_sizes[*]} (LD_PRELOAD=$lib, BLASOFFLOAD_MODE=gpu)"
  (
    for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
    cd "$dir" &&
      LD_PRELOAD="$lib" BLASOFFLOAD_MODE=gpu BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$dir/blasoffload.log" \
        "$exe" "${run_sizes[@]}" > "$dir/stdout.txt" 2> "$dir/stderr.txt" < /dev/null
  )
  rc=$?
  cat "$dir/stdout.txt"
  [ -s "$dir/stderr.txt" ] && { echo "---- stderr"; cat "$dir/stderr.txt"; }
  echo "---- summary"
  cat "$dir/blasoffload.log" 2>/dev/null
  failures=()
  [ "$rc" -eq 0 ] || failures+=("exit status $rc")
  grep -qE '^[0-9]+ passed, 0 failed$' "$dir/stdout.txt" || failures+=("no '<N> passed, 0 failed' line")
  nfail=$(grep -c '^FAIL' "$dir/stdout.txt")
  [ "$nfail" -eq 0 ] || failures+=("$nfail checks failed")
  summary=$(awk '/^blasoffload summary \(pid/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
    "$dir/blasoffload.log" 2>/dev/null)
  if ! grep -qE '^blasoffload summary \(pid [0-9]+, mode gpu\)' <<<"$summary"; then
    failures+=("no summary in mode gpu")
  else
    # Summary rows: routine calls cpu gpu fallback errors bytes ...; every routine must have run on the GPU.
    for r in "${routines[@]}"; do
      row=$(awk -v r="$r" '$1 == r { print $2, $3, $4, $5 }' <<<"$summary")
      read -r calls cpu gpu fallback <<<"${row:-- - - -}"
      if ! [[ "$gpu" =~ ^[0-9]+$ ]] || [ "$gpu" -lt 1 ]; then
        failures+=("$r: calls=$calls cpu=$cpu gpu=$gpu fallback=$fallback, expected gpu >= 1")
      fi
    done
  fi
  if [ ${#failures[@]} -gt 0 ]; then
    for f in "${failures[@]}"; do echo "FAIL: $program: $f"; done
    status=1
  else
    echo "PASS: $program (all ${#routines[@]} LAPACK routines ran on the GPU)"
  fi
done
[ "$status" -eq 0 ] && echo "device-run: PASS" || echo "device-run: FAIL"
exit "$status"
