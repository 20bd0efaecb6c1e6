#!/usr/bin/env bash
# Runs named benchmarks on the GPU machine in one device call, from the repository root, with the carry made by
# bench/common/make-carry.sh: unpacks the carried OpenBLAS, sets the CPU BLAS up (OPENBLAS_CORETYPE=SkylakeX on an
# AVX-512 CPU, min(16, cores) threads), calibrates once if a selected benchmark asks, runs each selection within its
# own time limit and the whole call's deadline, and leaves in OUTDIR, per benchmark, <name>-<gpu>-<date>-<commit>.md
# (the report, its header naming GPU, date and commit), .jsonl (every raw line) and .tar.gz (the run folder: each
# process's output and stderr, summaries, env.txt); policy/policy-<tag>.json (the calibration) and this script's log.
# Usage: bench/common/device-run.sh CARRY OUTDIR SELECTION...
#   CARRY      made by bench/common/make-carry.sh (carried with the device call)
#   OUTDIR     where the results go; - for $OUT (what the device tool brings back)
#   SELECTION  FOLDER[:ITEMS][@SECONDS], e.g. pipeline:dgemm_host@200 policy:overhead@90 (bench/common/README.md)
# A device call brings back at most 8 files from $OUT: where OUTDIR then holds more, everything in it but earlier bundles
# is packed into one results-<time>.tar (unpack it with tar -xf; folders kept), so that several selections, or several
# runs of this script in one call, lose nothing.
# Environment: BO_DEVICE_LIMIT_S=570 (the whole call: every selection stops by then, 20 s kept for the reports),
# BO_POLICY=FILE (no calibration), BO_CALIBRATE_ARGS, BO_RUN_ARGS (more run.py options, e.g. "--set round=1"),
# BLASOFFLOAD_* (pass through to every run).
set -uo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "$1" && pwd) || exit 2
out=$2
[ "$out" = - ] && out=${OUT:?OUTDIR - needs \$OUT}
shift 2
mkdir -p "$out"
logfile=$out/device-run-$(date -u +%Y%m%dT%H%MZ).log
exec > >(tee "$logfile") 2>&1
echo "device-run.sh: $(date -u +%Y-%m-%dT%H:%MZ) carry=$carry out=$out limit=${BO_DEVICE_LIMIT_S:-570}s: $*"
nvidia-smi --query-gpu=index,name,temperature.gpu,power.draw,clocks.sm,memory.used --format=csv 2>&1 || true
read -r -a more <<<"${BO_RUN_ARGS:-}"
python3 "$here/run.py" --carry="$carry" --out="$out" --pack --deadline-s="${BO_DEVICE_LIMIT_S:-570}" \
  "${more[@]}" "$@"
status=$?
echo "device-run.sh: done in ${SECONDS}s (exit $status)"
find "$out" -type f | sort
sleep 0.2  # let tee write the last lines
if [ "$(find "$out" -type f | wc -l)" -gt 8 ]; then
  bundle=results-$(date -u +%Y%m%dT%H%M%SZ).tar
  (cd "$out" && find . -type f ! -name 'results-*.tar' ! -name "$(basename "$logfile")" | sort >"/tmp/$bundle.list" &&
    tar -cf "$bundle" -T "/tmp/$bundle.list" && xargs -d '\n' rm -f <"/tmp/$bundle.list" &&
    find . -mindepth 1 -type d -empty -delete)
  rm -f "/tmp/$bundle.list"
  echo "device-run.sh: more than 8 files in $out: packed into $out/$bundle (a call brings back 8)"
fi
exit $status
