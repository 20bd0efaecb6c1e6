#!/usr/bin/env bash
# Runs the two LAPACK user programs (lapacke_check, lapack_check) on the GPU machine under LD_PRELOAD=libblasoffload.so
# with BLASOFFLOAD_MODE=gpu and fails when a check fails or when the summary does not show every intercepted LAPACK
# routine (s/d getrf getrs gesv potrf potrs posv trtrs) run on the GPU.
#
# device-run.sh BUILD_DIR [N ...]     (sizes default to 300 2000 8192)
#   BUILD_DIR holds libblasoffload.so and the two programs (directly, in bin/ or in tests/lapack_programs/). The
#   programs need liblapacke.so.3, liblapack.so.3, libblas.so.3, libtmglib.so.3 (LAPACKE's) and libgfortran.so.5:
#   the caller's LD_LIBRARY_PATH is kept for them. Output and logs go to $OUT (or ./lapack-programs-gpu) / PROGRAM/.
# At 8192 each program takes about a minute of CPU-side checking besides the GPU work.
set -u

[ $# -ge 1 ] || { echo "usage: device-run.sh BUILD_DIR [N ...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(300 2000 8192)
out=${OUT:-$PWD/lapack-programs-gpu}
routines=(sgetrf dgetrf sgetrs dgetrs sgesv dgesv spotrf dpotrf spotrs dpotrs sposv dposv strtrs dtrtrs)

find_file() {  # NAME: the first of BUILD_DIR/{.,bin,lib,tests/lapack_programs}/NAME
  for d in "$build" "$build/bin" "$build/lib" "$build/tests/lapack_programs"; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}
lib=$(find_file libblasoffload.so) || { echo "device-run: no libblasoffload.so in $build" >&2; exit 2; }

status=0
for program in lapacke_check lapack_check; do
  exe=$(find_file "$program") || { echo "FAIL: no $program in $build"; status=1; continue; }
  dir="$out/$program"
  rm -rf "$dir" && mkdir -p "$dir"
  echo "==== $program ${sizes[*]} (LD_PRELOAD=$lib, BLASOFFLOAD_MODE=gpu)"
  (
    for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
    cd "$dir" &&
      LD_PRELOAD="$lib" BLASOFFLOAD_MODE=gpu BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$dir/blasoffload.log" \
        "$exe" "${sizes[@]}" > "$dir/stdout.txt" 2> "$dir/stderr.txt" < /dev/null
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
