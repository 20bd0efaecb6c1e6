#!/usr/bin/env bash
# Runs one Debian reference BLAS/LAPACK test program under libblasoffload.so in a fresh directory and
# decides pass/fail from its output (the programs exit 0 even when tests fail) and from the blasoffload
# summary (which must show intercepted calls).
#
# run_suite.sh --workdir DIR --lib LIBBLASOFFLOAD --program PROG --format blas1|blas|lapack [options]
#   --stdin FILE            feed FILE to the program's standard input
#   --ld-library-path P     LD_LIBRARY_PATH for the program (pins the reference or OpenBLAS libraries)
#   --set KEY=VALUE         extra environment variable (repeatable), e.g. BLASOFFLOAD_MODE=cpu
#   --loader LDSO --loader-path P
#                           start the program as `LDSO --inhibit-cache --library-path P --preload LIB PROG`
#                           (no LD_PRELOAD/LD_LIBRARY_PATH, and the ld.so cache is not consulted)
#   --expect-mode M         the summary's "mode" must be M
#   --via-alternatives      no LD_PRELOAD: the program reaches the library as the system's libblas.so.3 and
#                           liblapack.so.3 (run under tests/alternatives/in_private_alternatives.sh)
#   --expect-cpu-blas RE    the summary's "CPU BLAS:" line must match the extended regex RE
#   --expect-cpu-lapack RE  the summary's "CPU LAPACK:" line must match RE
#   --expect-gpu RE         the summary's "GPU:" line must match RE
#   --known-failure RE      a LAPACK "N out of M tests failed" line matching RE is tolerated (repeatable);
#                           only for failures that the CPU BLAS shows without blasoffload too
#   --stderr-ok RE          stderr lines matching RE are tolerated (otherwise stderr must be empty)
#   --expect-pass NAME      the program must report NAME (as it prints it: DNRM2, CBLAS_DNRM2, DGEMM, cblas_dgemm)
#                           tested and passed (repeatable): blas1: its subprogram block says PASS; blas: its error
#                           exits and its computational tests passed (CBLAS: in both layouts)
#   --min-calls ROUTINE=N   the summary's row for ROUTINE (e.g. dgemm) must count at least N calls (repeatable):
#                           shows that the routines under test, in their precision, went through blasoffload;
#                           ROUTINE "d*" sums the rows of every routine whose name starts with d
set -u

workdir="" lib="" program="" format="" stdin_file="" ldpath="" loader="" loader_path=""
expect_mode="" expect_cpu="" expect_cpu_lapack="" expect_gpu="" stderr_ok="" preload=1
sets=() known=() expect_pass=() mincalls=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --program) program=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --stdin) stdin_file=$2; shift 2 ;;
    --ld-library-path) ldpath=$2; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --loader) loader=$2; shift 2 ;;
    --loader-path) loader_path=$2; shift 2 ;;
    --expect-mode) expect_mode=$2; shift 2 ;;
    --via-alternatives) preload=0; shift ;;
    --expect-cpu-blas) expect_cpu=$2; shift 2 ;;
    --expect-cpu-lapack) expect_cpu_lapack=$2; shift 2 ;;
    --expect-gpu) expect_gpu=$2; shift 2 ;;
    --known-failure) known+=("$2"); shift 2 ;;
    --stderr-ok) stderr_ok=$2; shift 2 ;;
    --expect-pass) expect_pass+=("$2"); shift 2 ;;
    --min-calls) mincalls+=("$2"); shift 2 ;;
    *) echo "run_suite.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in workdir lib program format; do
  [ -n "${!v}" ] || { echo "run_suite.sh: --$v is required" >&2; exit 2; }
done
[ -x "$program" ] || { echo "FAIL: $program is not an executable (is the Debian test package installed?)"; exit 1; }
[ -z "$stdin_file" ] || [ -r "$stdin_file" ] || { echo "FAIL: cannot read $stdin_file"; exit 1; }
[ -r "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
log="$workdir/blasoffload.log"

# A clean environment: nothing inherited may change which libraries load or how blasoffload behaves.
unset LD_PRELOAD LD_LIBRARY_PATH OPENBLAS_NUM_THREADS OMP_NUM_THREADS
for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
export BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$log"
for kv in "${sets[@]}"; do export "${kv?}"; done

if [ -n "$loader" ]; then
  cmd=("$loader" --inhibit-cache --library-path "$loader_path" --preload "$lib" "$program")
else
  [ "$preload" = 0 ] || export LD_PRELOAD="$lib"
  [ -n "$ldpath" ] && export LD_LIBRARY_PATH="$ldpath"
  cmd=("$program")
fi

{
  echo "cwd: $workdir"
  env | grep -E '^(LD_PRELOAD|LD_LIBRARY_PATH|BLASOFFLOAD_|OPENBLAS_)' | sort
  echo "command: ${cmd[*]}${stdin_file:+ < $stdin_file}"
} | tee cmd.txt

start=$(date +%s.%N)
if [ -n "$stdin_file" ]; then
  "${cmd[@]}" < "$stdin_file" > stdout.txt 2> stderr.txt
else
  "${cmd[@]}" < /dev/null > stdout.txt 2> stderr.txt
fi
rc=$?
end=$(date +%s.%N)
awk -v rc="$rc" -v s="$start" -v e="$end" 'BEGIN { printf "exit status %d after %.2f s\n", rc, e - s }'

failures=()
fail() { failures+=("$1"); }

# The program's output: stdout plus every file it wrote into the working directory.
outputs=(stdout.txt)
for f in *; do
  case "$f" in stdout.txt | stderr.txt | cmd.txt | blasoffload.log) ;; *) [ -f "$f" ] && outputs+=("$f") ;; esac
done
echo "output files: ${outputs[*]}"
all=$(cat "${outputs[@]}")

[ "$rc" -eq 0 ] || fail "exit status $rc"
[ -n "$(printf '%s' "$all" | tr -d '[:space:]')" ] || fail "the program wrote no output"

# stderr: must be empty except for tolerated lines.
if [ -s stderr.txt ]; then
  if [ -n "$stderr_ok" ]; then
    bad=$(grep -Ev -- "$stderr_ok" stderr.txt)
  else
    bad=$(cat stderr.txt)
  fi
  [ -z "$bad" ] || fail "unexpected stderr: $(echo "$bad" | head -5)"
fi

case "$format" in
  blas1)  # xblat1[sd] / x[sd]cblat1: one "----- PASS -----" per subprogram, "FAIL" lines on failure
    n_pass=$(grep -c -- '----- PASS -----' <<<"$all")
    n_sub=$(grep -c 'Test of subprogram number' <<<"$all")
    [ "$n_pass" -gt 0 ] || fail "no '----- PASS -----' line"
    [ "$n_pass" -eq "$n_sub" ] || fail "$n_sub subprograms tested, $n_pass passed"
    grep -nE 'FAIL|\*\*\*|ERROR' <<<"$all" >/dev/null && fail "failure lines: $(grep -E 'FAIL|\*\*\*|ERROR' <<<"$all" | head -5)"
    for name in "${expect_pass[@]}"; do
      # The subprogram's header line, then its verdict on the next non-blank line.
      verdict=$(awk -v n="$name" '$0 ~ "Test of subprogram number" && $NF == n {
        while ((getline line) > 0) if (line !~ /^[[:space:]]*$/) { print line; exit }
        exit }' <<<"$all")
      grep -q -- '----- PASS -----' <<<"$verdict" || fail "$name: no PASS (${verdict:-not tested})"
    done
    echo "subprograms passed: $n_pass of $n_sub"
    ;;
  blas)  # xblat[23][sd], x[sd]cblat[23]: "PASSED THE ..." lines; "******* ... FAILED/SUSPECT/FATAL ERROR" otherwise
    # "PASSED THE TESTS OF ERROR-EXITS" is the one legitimate use of ERROR; drop it before looking.
    scrubbed=$(sed -e 's/PASSED THE TESTS OF ERROR-EXITS//' <<<"$all")
    bad=$(grep -E 'FAIL|\*\*\*\*\*\*|ERROR|SUSPECT' <<<"$scrubbed")
    [ -z "$bad" ] || fail "failure lines: $(echo "$bad" | head -5)"
    n_comp=$(grep -c 'PASSED THE .*COMPUTATIONAL TESTS' <<<"$all")
    [ "$n_comp" -gt 0 ] || fail "no 'PASSED THE COMPUTATIONAL TESTS' line"
    for name in "${expect_pass[@]}"; do
      grep -qE "^ *$name +PASSED THE TESTS OF ERROR-EXITS" <<<"$all" || fail "$name: error exits not reported passed"
      case "$name" in
        cblas_*) layouts=("COLUMN-MAJOR " "ROW-MAJOR +") ;;  # x[sdcz]cblat2/3 test both layouts
        *) layouts=("") ;;
      esac
      # x[cz]cblat2 print one unlabelled line per layout: two of them stand for both.
      if [ "${layouts[0]}" != "" ] && ! grep -qE "^ *$name +PASSED THE COLUMN-MAJOR" <<<"$all"; then
        n_lay=$(grep -cE "^ *$name +PASSED THE COMPUTATIONAL TESTS" <<<"$all")
        [ "$n_lay" -ge 2 ] || fail "$name: $n_lay unlabelled 'PASSED THE COMPUTATIONAL TESTS' lines, not one per layout"
        layouts=()
      fi
      for lay in "${layouts[@]}"; do
        grep -qE "^ *$name +PASSED THE ${lay}COMPUTATIONAL TESTS" <<<"$all" ||
          fail "$name: no 'PASSED THE ${lay}COMPUTATIONAL TESTS' line"
      done
    done
    grep -q 'END OF TESTS' <<<"$all" || fail "no 'END OF TESTS' line (program stopped early)"
    echo "computational test groups passed: $n_comp"
    ;;
  lapack)  # xlintst[sd] / xeigtst[sd]
    grep -q 'End of tests' <<<"$all" || fail "no 'End of tests' line (program stopped early)"
    # "XXX:  N out of M tests failed to pass the threshold" (only printed when N > 0)
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      tolerated=0
      for re in "${known[@]}"; do
        if grep -qE -- "$re" <<<"$line"; then tolerated=1; fi
      done
      if [ "$tolerated" = 1 ]; then
        echo "known failure (tolerated): $line"
      else
        fail "threshold failure: $line"
      fi
    done < <(grep -E '[0-9]+ +out of +[0-9]+ +tests' <<<"$all")
    # Anything else that mentions failing: error exits that failed, XERBLA not called, ...
    bad=$(grep -iE 'fail' <<<"$all" | grep -vE '[0-9]+ +out of +[0-9]+ +tests')
    [ -z "$bad" ] || fail "failure lines: $(echo "$bad" | head -5)"
    bad=$(grep -E '[Ii]llegal|ILLEGAL|[Ee]rror code|\*\*\*| INFO|ERROR' <<<"$all")
    [ -z "$bad" ] || fail "error lines: $(echo "$bad" | head -5)"
    # The balancing tests (sbal/sbak/sgbak) print counts instead of pass/fail lines.
    bad=$(grep -E '(info is not (0|zero)|ILO or IHI wrong) *= *[1-9]' <<<"$all")
    [ -z "$bad" ] || fail "balancing test errors: $bad"
    n_run=$(grep -oE '\( *[0-9]+ tests run\)' <<<"$all" | awk '{ gsub(/[^0-9]/, ""); n += $0 } END { print n + 0 }')
    echo "tests run (as reported): ${n_run:-n/a}"
    ;;
  *) echo "run_suite.sh: unknown --format $format" >&2; exit 2 ;;
esac

# The blasoffload summary.
if [ ! -s "$log" ]; then
  fail "no blasoffload summary in $log (was libblasoffload.so loaded, and did any call reach it?)"
else
  echo "---- blasoffload summary ----"
  cat "$log"
  n_sum=$(grep -c 'blasoffload summary (pid' "$log")
  [ "$n_sum" -eq 1 ] || fail "expected one summary, found $n_sum"
  last=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)
  if [[ "$last" =~ ^\ \ total:\ ([0-9]+)\ calls\ intercepted$ ]]; then
    [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "summary: no call was intercepted"
  else
    fail "summary's last line is not '  total: N calls intercepted': $last"
  fi
  if [ -n "$expect_mode" ]; then
    grep -qE "^blasoffload summary \(pid [0-9]+, mode $expect_mode\)" "$log" || fail "summary: mode is not $expect_mode"
  fi
  if [ -n "$expect_cpu" ]; then
    cpu_line=$(grep -E '^  CPU BLAS: ' "$log" | head -n 1)
    grep -qE -- "$expect_cpu" <<<"$cpu_line" || fail "summary: '$cpu_line' does not match /$expect_cpu/"
  fi
  if [ -n "$expect_cpu_lapack" ]; then
    lapack_line=$(grep -E '^  CPU LAPACK: ' "$log" | head -n 1)
    grep -qE -- "$expect_cpu_lapack" <<<"$lapack_line" ||
      fail "summary: '$lapack_line' does not match /$expect_cpu_lapack/"
  fi
  if [ -n "$expect_gpu" ]; then
    gpu_line=$(grep -E '^  GPU: ' "$log" | head -n 1)
    grep -qE -- "$expect_gpu" <<<"$gpu_line" || fail "summary: '$gpu_line' does not match /$expect_gpu/"
  fi
  # Per-routine rows: "  dgemm   <calls> <cpu> <gpu> ...", between the "routine" header and the "total:" line.
  for rc_ in "${mincalls[@]}"; do
    r=${rc_%%=*} min=${rc_#*=}
    calls=$(awk -v r="$r" '$1 == "routine" { on = 1; next } $1 == "total:" { on = 0 }
      on && ($1 == r || (r ~ /\*$/ && index($1, substr(r, 1, length(r) - 1)) == 1)) { n += $2; found = 1 }
      END { if (found) print n }' "$log")
    if [ -z "$calls" ] || [ "$calls" -lt "$min" ]; then
      fail "summary: $r calls = ${calls:-no row}, expected >= $min"
    else
      echo "$r: $calls calls intercepted"
    fi
  done
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "---- stderr ----"; head -c 4000 stderr.txt
  echo "---- output (last 40 lines) ----"; tail -n 40 <<<"$all"
  for f in "${failures[@]}"; do echo "FAIL: $f"; done
  echo "(everything is kept in $workdir)"
  exit 1
fi
echo "PASS"
