#!/usr/bin/env bash
# Isolates where a CPU-routed call's extra time comes from (issue 20, target d): the mixed benchmark's small and
# middle points (after a few large gemm calls that start the GPU) under the CPU alone and under the library with one
# part of it changed at a time, alternated over rounds; prints each point's median ratio to the CPU alone per variant.
#   cpu         OpenBLAS alone (its BLAS and LAPACK)
#   forward     the library, BLASOFFLOAD_MODE=cpu: checks and forwarding only, no policy, no GPU
#   nogpu       auto with a module that cannot load: the policy's decisions, the GPU never up
#   auto        auto, out of the box (built-in defaults): the GPU starts on the large gemm calls
#   frozen      auto with BLASOFFLOAD_DECISIONS=frozen: no learning, no exploration
#   noresid     auto with BLASOFFLOAD_RESIDENCY=off BLASOFFLOAD_PIN_HOST=off: no write tracking, no registration
#   cal         auto with CARRY/policy.json (a calibration brought along), when present
#   onestage    cal (else auto) with BLASOFFLOAD_STAGING_THREADS=1: the module's staging threads
# Usage (on the GPU machine, from the repository root, with the carry of bench/common/make-carry.sh):
#   bench/mix/isolate.sh CARRY OUTDIR [ROUNDS (3)]
# Environment: ISOLATE_VARIANTS (default: cpu forward nogpu auto frozen noresid), ISOLATE_ARGS (blasoffload_mix's
# point lists, replacing the default ones).
set -uo pipefail
carry=$(cd "$1" && pwd)
out=$2
rounds=${3:-3}
mkdir -p "$out"
root=${BO_BLAS_ROOT:-/tmp/blasoffload-blas}
if [ ! -d "$root/usr" ]; then mkdir -p "$root" && tar xJf "$carry/blas-libs.tar.xz" -C "$root"; fi
L=$root/usr/lib/x86_64-linux-gnu
ob=$L/openblas-pthread
export LD_LIBRARY_PATH=$L/lapack:$ob:$L
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-$(($(nproc) < 16 ? $(nproc) : 16))}
grep -qw avx512f /proc/cpuinfo && export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
export BLASOFFLOAD_AUTO_CALIBRATE=off
lib=$carry/lib/libblasoffload.so
bo="LD_PRELOAD=$lib:$ob/libopenblas.so.0 BLASOFFLOAD_CPU_BLAS=$ob/libblas.so.3 BLASOFFLOAD_CPU_LAPACK=$ob/libopenblas.so.0"
bo="$bo BLASOFFLOAD_POLICY_FILE=$out/no-policy-file.json"
declare -A env=(
  [cpu]="LD_PRELOAD=$ob/libopenblas.so.0"
  [forward]="$bo BLASOFFLOAD_MODE=cpu"
  [nogpu]="$bo BLASOFFLOAD_MODE=auto BLASOFFLOAD_CUDA_MODULE=/nonexistent/libblasoffload_cuda.so"
  [auto]="$bo BLASOFFLOAD_MODE=auto"
  [frozen]="$bo BLASOFFLOAD_MODE=auto BLASOFFLOAD_DECISIONS=frozen"
  [noresid]="$bo BLASOFFLOAD_MODE=auto BLASOFFLOAD_RESIDENCY=off BLASOFFLOAD_PIN_HOST=off"
)
cal="$bo BLASOFFLOAD_MODE=auto"
[ -e "$carry/policy.json" ] && cal="$cal BLASOFFLOAD_POLICY_FILE=$carry/policy.json"
env[cal]=$cal
env[onestage]="$cal BLASOFFLOAD_STAGING_THREADS=1"
read -r -a variants <<<"${ISOLATE_VARIANTS:-cpu forward nogpu auto frozen noresid}"
args=(--part=calls --gemm=2048:8:128 --gemv=256:1024:4096 --nrm2=10000:1000000:10000000 --trsv=512:2048 --l3=64
      --fact=64:256 --solve=64:1024 --drv=64 --nrhs=1:64 --min-time=0.05)
[ -n "${ISOLATE_ARGS:-}" ] && read -r -a args <<<"--part=calls $ISOLATE_ARGS"
for r in $(seq 1 "$rounds"); do
  n=${#variants[@]}
  for i in $(seq 0 $((n - 1))); do
    v=${variants[$(((i + r - 1) % n))]}  # each round starts with another variant
    env ${env[$v]} "$carry/bin/blasoffload_mix" --stack="$v" --round="$r" "${args[@]}" >"$out/$v-r$r.jsonl" 2>"$out/$v-r$r.err"
    echo "isolate.sh: round $r $v exit $?"
  done
done
# One more auto process with every decision logged (where each call ran and why).
env ${env[auto]} BLASOFFLOAD_LOG=calls BLASOFFLOAD_LOG_FILE="$out/auto-calls.log" "$carry/bin/blasoffload_mix" \
  --stack=auto-calls --round=1 "${args[@]}" >"$out/auto-calls.jsonl" 2>/dev/null
python3 - "$out" "$rounds" "${variants[@]}" <<'EOF'
import json, os, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t = {}
for v in variants:
    for r in range(1, rounds + 1):
        p = os.path.join(out, "%s-r%d.jsonl" % (v, r))
        for line in open(p) if os.path.exists(p) else []:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "routine" in d and "seconds" in d:
                t.setdefault((d["routine"], d["n"], d["nrhs"]), {}).setdefault(v, {})[r] = d["seconds"]
print("| routine | n | nrhs | cpu | " + " | ".join(v + " / cpu" for v in variants[1:]) + " |")
print("|---|---|---|---|" + "---|" * (len(variants) - 1))
for k in sorted(t, key=lambda k: (k[0][1:], k[0], k[1], k[2])):
    c = t[k].get("cpu", {})
    if not c:
        continue
    cells = []
    for v in variants[1:]:
        ratios = [t[k][v][r] / c[r] for r in t[k].get(v, {}) if r in c and c[r] > 0]
        cells.append("%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios)) if ratios else "-")
    print("| %s | %d | %s | %.3g us | %s |" % (k[0], k[1], k[2] or "-", statistics.median(c.values()) * 1e6,
                                               " | ".join(cells)))
EOF
