#!/usr/bin/env bash
# Runs one integration program in a fresh directory with a controlled environment and checks how it ended,
# what it printed, and the blasoffload summary (BLASOFFLOAD_LOG=summary, written to DIR/blasoffload.log).
#
# run_check.sh --workdir DIR [options] -- COMMAND [ARGS...]
#   --preload LIB              LD_PRELOAD=LIB
#   --ld-library-path P        LD_LIBRARY_PATH=P
#   --set KEY=VALUE            extra environment variable (repeatable)
#   --expect-exit N            expected exit status (default 0)
#   --expect-signal NAME       the program must be killed by signal NAME (e.g. ABRT) instead
#   --expect-output RE         stdout+stderr must contain a line matching RE (repeatable)
#   --reject-output RE         stdout+stderr must not contain a line matching RE (repeatable)
#   --no-log                   leave BLASOFFLOAD_LOG/BLASOFFLOAD_LOG_FILE unset (the library's defaults: messages
#                              on stderr, no summary); implies --summaries 0
#   --summaries N              the log must hold exactly N summaries (default 1; 0 = must not exist/be empty)
#   --summary-match RE         the last summary must contain a line matching RE (repeatable)
#   --summary-reject RE        the last summary must not contain a line matching RE (repeatable)
#   --min-calls ROUTINE=N      the last summary's row for ROUTINE must show at least N calls (repeatable)
#   --allow-zero-calls         the last summary may show no intercepted call (default: that fails)
set -u

workdir="" preload="" ldpath="" expect_exit=0 expect_signal="" summaries=1 nolog=0 allow_zero=0
sets=() want=() reject=() smatch=() sreject=() mincalls=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --ld-library-path) ldpath=$2; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --expect-exit) expect_exit=$2; shift 2 ;;
    --expect-signal) expect_signal=$2; shift 2 ;;
    --expect-output) want+=("$2"); shift 2 ;;
    --reject-output) reject+=("$2"); shift 2 ;;
    --summaries) summaries=$2; shift 2 ;;
    --no-log) nolog=1; summaries=0; shift ;;
    --summary-match) smatch+=("$2"); shift 2 ;;
    --summary-reject) sreject+=("$2"); shift 2 ;;
    --min-calls) mincalls+=("$2"); shift 2 ;;
    --allow-zero-calls) allow_zero=1; shift ;;
    --) shift; break ;;
    *) echo "run_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$workdir" ] && [ $# -gt 0 ] || { echo "usage: run_check.sh --workdir DIR [options] -- COMMAND..." >&2; exit 2; }

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
log="$workdir/blasoffload.log"
ulimit -c 0  # expected aborts must not leave core files

unset LD_PRELOAD LD_LIBRARY_PATH OPENBLAS_NUM_THREADS
for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
[ "$nolog" = 1 ] || export BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$log"
[ -n "$preload" ] && export LD_PRELOAD="$preload"
[ -n "$ldpath" ] && export LD_LIBRARY_PATH="$ldpath"
for kv in "${sets[@]}"; do export "${kv?}"; done
env | grep -E '^(LD_PRELOAD|LD_LIBRARY_PATH|BLASOFFLOAD_)' | sort
echo "command: $*"

"$@" > stdout.txt 2> stderr.txt < /dev/null
rc=$?
echo "---- stdout ----"; cat stdout.txt
echo "---- stderr ----"; cat stderr.txt
echo "---- exit status $rc ----"

failures=()
fail() { failures+=("$1"); }

if [ -n "$expect_signal" ]; then
  signum=$(kill -l "$expect_signal" 2>/dev/null) || { echo "bad signal name $expect_signal" >&2; exit 2; }
  if [ "$rc" -gt 128 ]; then
    got=$(kill -l $((rc - 128)) 2>/dev/null)
    [ "$rc" -eq $((128 + signum)) ] || fail "killed by SIG$got, expected SIG$expect_signal"
  else
    fail "exit status $rc, expected death by SIG$expect_signal"
  fi
else
  [ "$rc" -eq "$expect_exit" ] || fail "exit status $rc, expected $expect_exit"
fi

out=$(cat stdout.txt stderr.txt)
for re in "${want[@]}"; do grep -qE -- "$re" <<<"$out" || fail "no output line matches /$re/"; done
for re in "${reject[@]}"; do
  if grep -qE -- "$re" <<<"$out"; then fail "output matches rejected /$re/: $(grep -E -- "$re" <<<"$out" | head -3)"; fi
done

if [ "$summaries" -eq 0 ]; then
  [ ! -s "$log" ] || fail "expected no blasoffload summary, found: $(cat "$log")"
elif [ ! -s "$log" ]; then
  fail "no blasoffload summary in $log"
else
  echo "---- blasoffload.log ----"; cat "$log"
  n=$(grep -c '^blasoffload summary (pid' "$log")
  [ "$n" -eq "$summaries" ] || fail "expected $summaries summaries, found $n"
  # The last summary: from its header line to the end of the file.
  lastsum=$(awk '/^blasoffload summary \(pid/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$log")
  total=$(sed -nE 's/^  total: ([0-9]+) calls intercepted$/\1/p' <<<"$lastsum")
  if [ -z "$total" ]; then
    fail "last summary has no '  total: N calls intercepted' line"
  elif [ "$total" -le 0 ] && [ "$allow_zero" = 0 ]; then
    fail "last summary: no call was intercepted"
  fi
  for re in "${smatch[@]}"; do grep -qE -- "$re" <<<"$lastsum" || fail "last summary has no line matching /$re/"; done
  for re in "${sreject[@]}"; do ! grep -qE -- "$re" <<<"$lastsum" || fail "last summary has a line matching /$re/"; done
  for rc_ in "${mincalls[@]}"; do
    r=${rc_%%=*} min=${rc_#*=}
    calls=$(awk -v r="$r" '$1 == r { print $2 }' <<<"$lastsum")
    if [ -z "$calls" ] || [ "$calls" -lt "$min" ]; then fail "last summary: $r calls = ${calls:-none}, expected >= $min"; fi
  done
fi

if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "FAIL: $f"; done
  echo "(everything is kept in $workdir)"
  exit 1
fi
echo PASS
