#!/usr/bin/env bash
# Smoke test of bench/scalapack's program: blasoffload_scalapack at n = 512 on 2 ranks (it starts itself under mpirun),
# without and with the library preloaded, must print a context line and one valid JSON line per routine (pdgemm,
# pdgesv, pdpotrf, pdgels) with a time and an ok residual, and with the library each rank's summary file must count dgemm calls.
# Usage: run_scalapack_bench.sh PROGRAM LIBBLASOFFLOAD WORKDIR CPU_LIBRARY_PATH
set -u
program=$1 lib=$2 work=$3 libpath=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_plm_rsh_agent=false LD_LIBRARY_PATH=$libpath
status=0
for stack in cpu auto; do
  env=()
  [ $stack = auto ] && env=(LD_PRELOAD="$lib" BLASOFFLOAD_MODE=auto BLASOFFLOAD_LOG=summary
                            BLASOFFLOAD_LOG_FILE="$work/summary-$stack.log")
  timeout --kill-after=10 120 env "${env[@]}" "$program" --ranks=2 --nb=64 --warm-n=128 --stack=$stack --drivers=gemm,gesv,potrf,gels 512 \
    >"$stack.jsonl" 2>"$stack.err"
  rc=$?
  cat "$stack.jsonl" "$stack.err"
  [ $rc -eq 0 ] || { echo "FAIL: $stack: exit status $rc"; status=1; }
  python3 - "$stack.jsonl" "$stack" <<'PY' || status=1
import json, sys
path, stack = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(path) if l.strip()]
bad = []
if not lines or "context" not in lines[0] or lines[0]["context"].get("ranks") != 2:
    bad.append("no context line naming 2 ranks")
points = {l.get("routine"): l for l in lines[1:]}
for routine in ("pdgemm", "pdgesv", "pdpotrf", "pdgels"):
    p = points.get(routine)
    if p is None:
        bad.append("%s: no line" % routine)
    elif not (p.get("ok") is True and 0 <= p.get("residual", -1) < 16 and p.get("seconds", 0) > 0
              and p.get("n") == 512 and p.get("ranks") == 2 and p.get("stack") == stack):
        bad.append("%s: %s" % (routine, p))
for b in bad:
    print("FAIL: %s: %s" % (stack, b))
sys.exit(1 if bad else 0)
PY
done
for r in 0 1; do
  s=$work/summary-auto.log.rank$r
  calls=$(awk '$1 == "dgemm" { print $2 }' "$s" 2>/dev/null)
  [ "${calls:-0}" -gt 0 ] || { echo "FAIL: rank $r: no summary with dgemm calls in $s"; status=1; }
done
[ $status = 0 ] && echo "PASS: blasoffload_scalapack on 2 ranks, with and without the library"
exit $status
