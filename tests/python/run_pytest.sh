#!/usr/bin/env bash
# Runs a Debian NumPy/SciPy pytest suite under LD_PRELOAD=libblasoffload.so and judges it from pytest's closing line
# and from the blasoffload summary of the pytest process itself (tests may start subprocesses, which write their own).
#
# run_pytest.sh --workdir DIR --lib LIB --mode MODE [options] -- PYTEST-ARGS...
#   --ld-library-path P     LD_LIBRARY_PATH=P (pins a BLAS/LAPACK stack; default: the system's alternatives)
#   --via-alternatives      no LD_PRELOAD: the library is the system's libblas.so.3 and liblapack.so.3 (run under
#                           tests/alternatives/in_private_alternatives.sh); --lib names it all the same
#   --min-passed N          pytest must report at least N passed tests (a suite that collected little fails)
#   --min-calls ROUTINE=N   the summary row of ROUTINE must count at least N calls (repeatable)
#   --summary-match RE      the summary must contain a line matching RE (repeatable)
#   --python EXE            the interpreter (default /usr/bin/python3: Debian's, which has the packages)
# Exit 77 (skipped) when the interpreter lacks numpy/scipy/pytest/hypothesis, except under CI (CI=true), where that
# is a failure: CI installs them (tools/install-deps.sh).
set -u

workdir="" lib="" mode="" ldpath="" min_passed=1 python=/usr/bin/python3 preload=1
mincalls=() smatch=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --ld-library-path) ldpath=$2; shift 2 ;;
    --via-alternatives) preload=0; shift ;;
    --min-passed) min_passed=$2; shift 2 ;;
    --min-calls) mincalls+=("$2"); shift 2 ;;
    --summary-match) smatch+=("$2"); shift 2 ;;
    --python) python=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_pytest.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$workdir" ] && [ -n "$lib" ] && [ -n "$mode" ] && [ $# -gt 0 ] ||
  { echo "usage: run_pytest.sh --workdir DIR --lib LIB --mode MODE [options] -- PYTEST-ARGS..." >&2; exit 2; }

if ! "$python" -c 'import numpy, scipy, pytest, hypothesis' 2>/dev/null; then
  msg="$python lacks numpy, scipy, pytest or hypothesis"
  msg+=" (Debian: python3-numpy python3-scipy python3-pytest python3-hypothesis)"
  if [ "${CI:-}" = true ]; then echo "FAIL: $msg" >&2; exit 1; fi
  echo "SKIP: $msg" >&2
  exit 77
fi

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
log="$workdir/blasoffload.log"
ulimit -c 0

unset LD_PRELOAD LD_LIBRARY_PATH OPENBLAS_NUM_THREADS PYTHONPATH PYTEST_ADDOPTS
for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
# No bytecode or pytest cache written into the system's dist-packages (CI runs as root); no third-party pytest
# plugin changes the run; hypothesis keeps its files here.
export PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 TMPDIR="$workdir"
# One OpenBLAS thread: ctest runs two suites at once on CI's 2 cores, where spinning OpenBLAS threads of both
# processes slow each other down several times.
export OPENBLAS_NUM_THREADS=1
export BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$log" BLASOFFLOAD_MODE="$mode"
[ "$preload" = 0 ] || export LD_PRELOAD="$lib"
[ -n "$ldpath" ] && export LD_LIBRARY_PATH="$ldpath"
env | grep -E '^(LD_PRELOAD|LD_LIBRARY_PATH|BLASOFFLOAD_)' | sort
cmd=("$python" -m pytest -p no:cacheprovider --rootdir "$workdir" -q -rfE --color=no "$@")
echo "command: ${cmd[*]}"

# Started in the background so that $! is the pytest process: its summary is the one with its pid.
"${cmd[@]}" > pytest.txt 2>&1 < /dev/null &
pid=$!
wait "$pid"
rc=$?
echo "---- pytest (pid $pid): last 40 lines of $workdir/pytest.txt ----"
tail -n 40 pytest.txt
echo "---- exit status $rc ----"

failures=()
fail() { failures+=("$1"); }

[ "$rc" -eq 0 ] || fail "pytest exit status $rc, expected 0"
# pytest -q closes with e.g. "3574 passed, 7 skipped, 3 xfailed, 2 xpassed in 20.35s" or "1 failed, 9 passed in 1s".
closing=$(grep -E '^[0-9]+ [a-z]+.* in [0-9.]+s' pytest.txt | tail -n 1)
if [ -z "$closing" ]; then
  fail "no pytest closing line (N passed ... in Ts)"
else
  passed=$(grep -oE '[0-9]+ passed' <<<"$closing" | cut -d' ' -f1)
  for bad in failed error errors; do
    if grep -qE "[0-9]+ $bad\b" <<<"$closing"; then fail "pytest reports $(grep -oE "[0-9]+ $bad\b" <<<"$closing")"; fi
  done
  if [ -z "$passed" ] || [ "$passed" -lt "$min_passed" ]; then
    fail "pytest passed ${passed:-0} tests, expected at least $min_passed"
  fi
fi

if [ ! -s "$log" ]; then
  fail "no blasoffload summary in $log"
else
  # The summary of the pytest process: from its header to the next header or the end of the file.
  summary=$(awk -v p="$pid" '/^blasoffload summary \(pid/ { on = ($0 ~ "^blasoffload summary \\(pid " p ",") } on' \
    "$log")
  others=$(grep -c '^blasoffload summary (pid' "$log")
  echo "---- blasoffload summary of pid $pid ($((others - 1)) more from subprocesses in $log) ----"
  echo "$summary"
  if [ -z "$summary" ]; then
    fail "no blasoffload summary for pid $pid"
  else
    grep -qE "^blasoffload summary \(pid $pid, mode $mode\)" <<<"$summary" || fail "summary does not say mode $mode"
    for re in "${smatch[@]}"; do grep -qE -- "$re" <<<"$summary" || fail "summary has no line matching /$re/"; done
    for rc_ in "${mincalls[@]}"; do
      r=${rc_%%=*} min=${rc_#*=}
      calls=$(awk -v r="$r" '$1 == r { print $2 }' <<<"$summary")
      if [ -z "$calls" ] || [ "$calls" -lt "$min" ]; then
        fail "summary: $r calls = ${calls:-none}, expected >= $min"
      fi
    done
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "FAIL: $f"; done
  echo "(everything is kept in $workdir)"
  exit 1
fi
echo PASS
