#!/usr/bin/env bash
# Runs a program that prints LAPACK workspace-query answers ("QUERY <routine> <args> -> <lwork> <liwork>") once
# alone and once under LD_PRELOAD=LIB with BLASOFFLOAD_MODE=cpu, and fails unless both runs succeed and print the
# same QUERY lines (at least one): blasoffload must hand every LWORK = -1 call to the CPU LAPACK unchanged.
#
# query_parity.sh --workdir DIR --preload LIB [--ld-library-path P] -- COMMAND [ARGS...]
set -u

workdir="" preload="" ldpath=""
while [ $# -gt 0 ]; do
  case "$1" in
    --workdir) workdir=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --ld-library-path) ldpath=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "query_parity.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$workdir" ] && [ -n "$preload" ] && [ $# -gt 0 ] ||
  { echo "usage: query_parity.sh --workdir DIR --preload LIB [--ld-library-path P] -- COMMAND..." >&2; exit 2; }

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
unset LD_PRELOAD LD_LIBRARY_PATH
for v in $(compgen -v BLASOFFLOAD_); do unset "$v"; done
export OPENBLAS_NUM_THREADS=1
[ -n "$ldpath" ] && export LD_LIBRARY_PATH="$ldpath"
echo "command: $*"

"$@" > alone.txt 2> alone.err < /dev/null
rc_alone=$?
LD_PRELOAD="$preload" BLASOFFLOAD_MODE=cpu BLASOFFLOAD_LOG=summary BLASOFFLOAD_LOG_FILE="$workdir/blasoffload.log" \
  "$@" > preloaded.txt 2> preloaded.err < /dev/null
rc_preloaded=$?
grep '^QUERY' alone.txt > alone.query
grep '^QUERY' preloaded.txt > preloaded.query

failures=()
[ "$rc_alone" -eq 0 ] || failures+=("alone: exit status $rc_alone ($(grep -c '^FAIL' alone.txt) FAIL lines)")
[ "$rc_preloaded" -eq 0 ] ||
  failures+=("preloaded: exit status $rc_preloaded ($(grep -c '^FAIL' preloaded.txt) FAIL lines)")
n=$(wc -l < alone.query)
[ "$n" -gt 0 ] || failures+=("no QUERY lines without the library")
[ -s preloaded.query ] || failures+=("no QUERY lines with the library")
grep -q "^blasoffload summary (pid [0-9]*, mode cpu)" blasoffload.log 2>/dev/null ||
  failures+=("no blasoffload summary: the library was not loaded")
if ! diff -u alone.query preloaded.query > query.diff; then
  failures+=("QUERY lines differ ($(grep -c '^[-+]QUERY' query.diff) lines): $(grep '^[-+]QUERY' query.diff | head -6)")
fi

if [ ${#failures[@]} -gt 0 ]; then
  for f in "${failures[@]}"; do echo "FAIL: $f"; done
  echo "(everything is kept in $workdir)"
  exit 1
fi
echo "PASS: $n QUERY lines identical with and without $preload"
