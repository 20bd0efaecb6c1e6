#!/usr/bin/env bash
# The GPU check, in parts that fit the device tool's 600 s per call: the GPU GoogleTest suite per precision, the unit
# tests in GPU mode (16 threads, interleaved operands), Debian's reference suites of both precisions with
# BLASOFFLOAD_MODE=gpu, compute-sanitizer memcheck and racecheck, the kernel benchmarks against cuBLAS (bench/kernels),
# the trsm/syrk benchmarks (bench/level3) and the host dgemm point (the library against OpenBLAS). Logs and a summary go
# to $OUT.
# Usage (on the GPU machine, from the repository root):
#   tests/gpu/device-check.sh CARRY BLAS_CARRY [PART ...]   CARRY made by tests/gpu/make-device-carry.sh,
#                                                            BLAS_CARRY by ../shared/device/prepare-carry.sh
# PARTs (default: all of them, in this order; the suites run in the background beside the others):
#   gpu-float    the GPU suite's single-precision tests and the registry check   about 200-280 s on an H100 (it was
#                285 s before each case's reference was shared by all entries), limit 540 s
#   gpu-double   the GPU suite's double-precision tests                          about 250-450 s (estimated: FP64
#                kernels, twice the bytes, long double references), limit 540 s
#   gpu-cfloat   the GPU suite's single complex tests                             about 190 s on an H200 under the
#                built-in defaults (BO_GPU_TEST_TABLE=none), limit 540 s
#   gpu-cdouble  the GPU suite's double complex tests                             about 340 s (the same), limit 540 s
#   gpu-rest     the GPU suite's suites of no element type (the start-up's link, the staged uploads' timing, QR over
#                the int32 range on one lane)                                    about 45 s, limit 540 s
#   gpu=FILTER   the GPU suite with a gtest filter, e.g. gpu='*/double.*-Level3*' and gpu='Level3*/double.*' (the
#                double half in two calls, should it not fit one)
#   suites-s     xblat[123]s, xscblat[123], xlintsts, an xeigtsts subset         about 420 s (8 in parallel)
#   suites-d     xblat[123]d, xdcblat[123], xlintstd                            about 420 s (xlintstd is the longest)
#   unit         the unit tests with BLASOFFLOAD_MODE=gpu, then device_operands about 60-200 s, limit 300 s
#   sanitizer    compute-sanitizer memcheck and racecheck on a reduced set     about 2 x 100 s, limit 2 x 150 s
#   bench        bench/kernels, both precisions                                about 210 s, limit 300 s
#   level3       bench/level3, trsm/syrk in both precisions                    about 250 s, limit 300 s
#   host-gemm    dgemm n = 8192 on host operands: the library (gpu mode) against the carried OpenBLAS, about 60 s
# Device calls that fit (each under 600 s; the whole set about 45 minutes of device time):
#   1. gpu-float suites-d   2. gpu-double suites-s   3. unit sanitizer bench   4. level3 host-gemm
#   5. gpu-cfloat gpu-rest  6. gpu-cdouble
# Environment: BO_DEVICE_LIMIT_S (default 580: no part starts, and background suites are stopped, after this many
# seconds), SKIP_SANITIZER=1 / SKIP_BENCH=1 (leave those parts out of the default list), BO_GPU_TEST_TABLE=none (the
# GPU suite loads the module from a folder of its own, without the tuned tables beside it: the built-in defaults, which
# every GPU but the H100 and H200 gets; a workspace bug showed only there).
set -u
root=$(pwd)
K=$(cd "$1" && pwd)
C=$(cd "$2" && pwd)
shift 2
O=${OUT:-/tmp/blasoffload-gpu}
mkdir -p "$O"
L=$C/usr/lib/x86_64-linux-gnu
start=$SECONDS
limit=${BO_DEVICE_LIMIT_S:-580}
parts=("$@")
if [ ${#parts[@]} = 0 ]; then
  parts=(suites-s suites-d gpu-float gpu-double gpu-cfloat gpu-cdouble gpu-rest unit)
  [ "${SKIP_SANITIZER:-0}" = 1 ] || parts+=(sanitizer)
  [ "${SKIP_BENCH:-0}" = 1 ] || parts+=(bench level3 host-gemm)
fi
# The unit tests were built with their build folder as the library's path (/work/main/build, or the folder the carry
# was made from, which their RUNPATH names first): point it at the carried build.
built=/work/main/build
runpath=$(readelf -d "$K/unit/blasoffload_unit_tests" 2>/dev/null | sed -n 's/.*R[UN]*PATH.*\[\([^]:]*\).*/\1/p')
[ -n "$runpath" ] && built=$runpath
if [ ! -e "$built/libblasoffload.so" ]; then mkdir -p "$(dirname "$built")" && ln -sfn "$K/lib" "$built"; fi
lib=$built/libblasoffload.so
export BO_GPU_TEST_MODULE=$K/lib/libblasoffload_cuda.so
if [ "${BO_GPU_TEST_TABLE:-}" = none ]; then
  bare=$(mktemp -d /tmp/blasoffload-bare.XXXXXX) && cp "$K/lib/libblasoffload_cuda.so" "$bare/" &&
    export BO_GPU_TEST_MODULE=$bare/libblasoffload_cuda.so
fi
declare -A RES

# Seconds a step may take: its own limit, or what is left of the call's.
budget() {
  local left=$((limit - (SECONDS - start)))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}

# One line per reference program: name, output format, input file (- for none), run_suite.sh options (the routines
# that must be reported passed and the summary rows that must count calls; tests/lapack/run_suite.sh's --expect-pass
# and --min-calls, as tests/lapack/CMakeLists.txt uses them).
suite_list() {
  local p=$1 P=${1^^}
  echo "xblat1$p blas1 - --expect-pass ${P}NRM2 --min-calls ${p}nrm2=1"
  echo "xblat2$p blas $L/blas/${p}blat2.in --expect-pass ${P}GEMV --expect-pass ${P}TRSV --min-calls ${p}gemv=1" \
    "--min-calls ${p}trsv=1"
  echo "xblat3$p blas $L/blas/${p}blat3.in --expect-pass ${P}GEMM --expect-pass ${P}TRSM --expect-pass ${P}SYRK" \
    "--min-calls ${p}gemm=1 --min-calls ${p}trsm=1 --min-calls ${p}syrk=1"
  echo "x${p}cblat1 blas1 - --expect-pass CBLAS_${P}NRM2 --min-calls ${p}nrm2=1"
  echo "x${p}cblat2 blas $L/blas/${p}in2 --expect-pass cblas_${p}gemv --expect-pass cblas_${p}trsv" \
    "--min-calls ${p}gemv=1 --min-calls ${p}trsv=1"
  echo "x${p}cblat3 blas $L/blas/${p}in3 --expect-pass cblas_${p}gemm --expect-pass cblas_${p}trsm" \
    "--expect-pass cblas_${p}syrk --min-calls ${p}gemm=1 --min-calls ${p}trsm=1 --min-calls ${p}syrk=1"
  # xlintst[sd] call every intercepted LAPACK routine themselves (as tests/lapack/CMakeLists.txt requires).
  echo "xlintst$p lapack $L/lapack/${p}test.in --min-calls ${p}gemm=1 --min-calls ${p}trsm=1 --min-calls ${p}syrk=1" \
    "$(for r in getrf getrs gesv potrf potrs posv trtrs; do printf -- ' --min-calls %s%s=10' "$p" "$r"; done)"
  if [ "$p" = s ]; then
    for i in nep sep sec se2 ssg csd glm gqr gsv lse sbb ssb sgg sbal sgbak; do
      # prepare-carry.sh's [cdz]*.in (the complex and double inputs) takes csd.in (the CS decomposition's) too.
      if [ ! -r "$L/lapack/$i.in" ]; then
        echo "xeigtsts $i.in: not in the BLAS carry, left out" >&2
        continue
      fi
      echo "xeigtsts lapack $L/lapack/$i.in"
    done
  fi
}

# Reference suites of one precision in the background (CPU-bound between many small GPU calls), 8 at a time.
suites() {
  local p=$1 d=$O/suites t
  t=$(budget 560)
  mkdir -p "$d"
  suite_list "$p" | xargs -P 8 -L 1 bash -c '
      prog=$0 fmt=$1 inp=$2; shift 2; dir=$(dirname "$(ls '"$L"'/*/$prog)"); name=$prog.$(basename "$inp" .in)
      args=(--workdir "'"$d"'/$name" --lib "'"$lib"'" --program "$dir/$prog" --format "$fmt"
            --ld-library-path "'"$L"'/blas:'"$L"'/lapack:'"$L"'" --set BLASOFFLOAD_MODE=gpu
            --expect-mode gpu --expect-gpu "^  GPU: blasoffload-cuda" "$@")
      [ "$inp" != "-" ] && args+=(--stdin "$inp")
      s=$(date +%s)
      timeout '"$t"' bash '"$root"'/tests/lapack/run_suite.sh "${args[@]}" >"'"$d"'/$name.result" 2>&1; rc=$?
      gpu=$(awk '"'"'$1 ~ /^[sd](gemm|gemv|trsv|nrm2|trsm|syrk|getrf|getrs|gesv|potrf|potrs|posv|trtrs)$/ {g += $4; f += $5} ($1 ~ /^[sd](trsm|syrk)$/ || ($1 ~ /^[sd](getrf|getrs|gesv|potrf|potrs|posv|trtrs)$/ && $2 > 0)) {l3 = l3 " " $1 "=" $4} $1 ~ /^[sd](getrf|getrs|gesv|potrf|potrs|posv|trtrs)$/ && $2 >= 100 && $4 == 0 {cpu = cpu (cpu ? "," : "") $1} END {printf "gpu=%d fallback=%d%s%s", g, f, l3, cpu ? " lapack-cpu-only=" cpu : ""}'"'"' "'"$d"'/$name/blasoffload.log" 2>/dev/null)
      case "$gpu" in gpu=0*) rc="$rc,no-gpu-calls" ;; esac
      # A LAPACK routine called often that never ran on the GPU (cuSOLVER missing, or every call refused).
      case "$gpu" in *lapack-cpu-only=*) rc="$rc,lapack-cpu-only" ;; esac
      echo "$name rc=$rc $gpu $(( $(date +%s) - s ))s" >>"'"$d"'/index-'"$p"'.txt"'
}

# The GPU suite with a gtest filter (typed suites are named Suite/float and Suite/double); results under a tag.
gpu_suite() {
  local tag=$1 filter=$2
  echo "=== GPU test suite, $tag: $filter ($(date -u +%T))"
  timeout "$(budget 540)" "$K/gpu/blasoffload_gpu_tests" --gtest_filter="$filter" >"$O/gpu-tests-$tag.log" 2>&1
  RES[$tag]=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[       OK|^\[  FAILED" "$O/gpu-tests-$tag.log" | head -60
  grep -B3 -A12 "Failure" "$O/gpu-tests-$tag.log" | head -300 >"$O/gpu-failures-$tag.txt"
  gzip -f "$O/gpu-tests-$tag.log"
}

pids=() extra_tags=()
for part in "${parts[@]}"; do
  if [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "=== $part: not started (the call's ${limit}s are spent)"
    continue
  fi
  case $part in
    suites-s | suites-d)
      # ../shared/device/prepare-carry.sh drops the c/d/z programs unless told to keep the d ones.
      if [ ! -x "$L/blas/xblat2${part#suites-}" ]; then
        RES[$part]="no x*${part#suites-} programs in the BLAS carry"
        continue
      fi
      suites "${part#suites-}" &
      pids+=($!)
      RES[$part]=started
      ;;
    gpu-float) gpu_suite gpu-float '*/float.*:GpuRegistry.*' ;;
    gpu-double) gpu_suite gpu-double '*/double.*' ;;
    gpu-cfloat) gpu_suite gpu-cfloat '*/cfloat.*' ;;
    gpu-cdouble) gpu_suite gpu-cdouble '*/cdouble.*' ;;
    # Every suite without a type but the registry check (in gpu-float): a suite added later runs here by itself.
    gpu-rest) gpu_suite gpu-rest '-*/float.*:*/double.*:*/cfloat.*:*/cdouble.*:GpuRegistry.*' ;;
    gpu=*)
      tag=gpu-$(tr -c 'A-Za-z0-9\n' _ <<<"${part#gpu=}")
      gpu_suite "$tag" "${part#gpu=}"
      extra_tags+=("$tag")
      ;;
    unit)
      # The CPU-path-only subprocess tests are left out; ComplexSummary's also runs a helper of the build tree
      # (complex_probe) that the carry does not hold.
      echo "=== unit tests with BLASOFFLOAD_MODE=gpu (CPU-path-only subprocess tests excluded)"
      LD_LIBRARY_PATH=$L/blas:$L/lapack:$L BLASOFFLOAD_MODE=gpu BLASOFFLOAD_TEST_ALLOW_GPU=1 BLASOFFLOAD_LOG=summary \
        BLASOFFLOAD_LOG_FILE=$O/unit-gpu-summary.log timeout "$(budget 300)" "$K/unit/blasoffload_unit_tests" \
        --gtest_filter='-NoCpuBlas.*:Config.*:Silence.*:ComplexSummary.*' >"$O/unit-gpu.log" 2>&1
      RES[unit]=$?
      grep -E "^\[  (PASSED|FAILED) |Failure|^\[       OK" "$O/unit-gpu.log" | head -40
      cat "$O/unit-gpu-summary.log"
      # Device memory handed to the library in auto mode (tests/gpu/device_operands.cu), both cases.
      for sc in first:auto late:check; do
        LD_LIBRARY_PATH=$L/blas:$L LD_PRELOAD=$lib BLASOFFLOAD_MODE=auto BLASOFFLOAD_STARTUP=eager \
          BLASOFFLOAD_DEVICE_OPERANDS=${sc#*:} BLASOFFLOAD_POLICY_FILE=/nonexistent/blasoffload-policy.json \
          timeout "$(budget 60)" "$K/gpu/blasoffload_device_operands" "${sc%:*}" >"$O/device-operands-${sc%:*}.log" 2>&1
        rc=$?
        tail -1 "$O/device-operands-${sc%:*}.log"
        [ $rc = 0 ] || RES[unit]="device_operands ${sc%:*}: exit $rc"
      done
      ;;
    sanitizer)
      command -v compute-sanitizer >/dev/null || { RES[sanitizer]="no compute-sanitizer"; continue; }
      f='GpuNrm2/*.Module:GpuGemv/*.BetaZeroNeverReadsY:GpuTrsv/*.Module:GpuGemm/*.Module:GpuGemm/*.BetaZeroNeverReadsC'
      for tool in memcheck racecheck; do
        echo "=== compute-sanitizer $tool"
        timeout "$(budget 150)" compute-sanitizer --tool $tool --error-exitcode 99 "$K/gpu/blasoffload_gpu_tests" \
          --gtest_filter="$f" >"$O/$tool.log" 2>&1
        RES[$tool]=$?
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$O/$tool.log" | head -5
      done
      ;;
    bench)
      [ -x "$K/bin/blasoffload_bench_kernels" ] || { RES[bench]="not carried"; continue; }
      echo "=== timings against cuBLAS (bench/kernels, device-resident data, both precisions)"
      BO_BLAS_ROOT=$C timeout "$(budget 300)" python3 "$root/bench/common/run.py" --carry="$K" --out="$O" \
        "kernels@$(budget 290)" >"$O/bench.log" 2>&1
      RES[bench]=$?
      grep -E "PASS|MISS" "$O/bench.log"
      ;;
    level3)
      [ -x "$K/bin/blasoffload_bench_level3" ] || { RES[level3]="not carried"; continue; }
      echo "=== trsm/syrk against cuBLAS (bench/level3, both precisions)"
      BO_BLAS_ROOT=$C timeout "$(budget 300)" python3 "$root/bench/common/run.py" --carry="$K" --out="$O" \
        "level3@$(budget 280)" >"$O/level3.log" 2>&1
      RES[level3]=$?
      grep -E "PASS|MISS|noise" "$O/level3.log" | head -30
      ;;
    host-gemm)
      ob=$L/openblas-pthread/libopenblas.so.0
      [ -x "$K/bin/blasoffload_bench_level3" ] || { RES[host-gemm]="not carried"; continue; }
      [ -e "$ob" ] || { RES[host-gemm]="no OpenBLAS in the BLAS carry (prepare-carry.sh --openblas)"; continue; }
      echo "=== host dgemm n = 8192: the library (BLASOFFLOAD_MODE=gpu) against OpenBLAS"
      # bench/level3/bench.ini's host_gemm: stack lib-gpu (BLASOFFLOAD_MODE=gpu), OpenBLAS from BO_BLAS_ROOT.
      BO_BLAS_ROOT=$C timeout "$(budget 220)" python3 "$root/bench/common/run.py" --carry="$K" --out="$O" \
        "level3:host_gemm@$(budget 200)" >"$O/host-gemm.log" 2>&1
      RES[host-gemm]=$?
      grep -E "dgemm host|wrote" "$O/host-gemm.log" "$O"/level3/level3_host_gemm-*/*.err 2>/dev/null | head -10
      ;;
    *) echo "device-check.sh: unknown part $part" >&2 ;;
  esac
done

if [ ${#pids[@]} -gt 0 ]; then
  wait "${pids[@]}"
  echo "=== reference suites, BLASOFFLOAD_MODE=gpu"
  sort "$O"/suites/index-*.txt
  for r in "$O"/suites/*.result; do grep -q '^PASS' "$r" || { echo "--- $(basename "$r")"; tail -15 "$r"; }; done
  for part in suites-s suites-d; do
    # The number of programs that did not pass (0: all passed).
    [ "${RES[$part]:-}" = started ] && RES[$part]=$(grep -c -v ' rc=0 ' "$O/suites/index-${part#suites-}.txt")
  done
fi

echo "=== summary"
echo "date:   $(date -u +%FT%TZ) ($((SECONDS - start)) s)"
echo "gpu:    $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "commit: $(cat "$K/COMMIT" 2>/dev/null || echo unknown)"
echo "parts:  ${parts[*]}"
for k in gpu-float gpu-double gpu-cfloat gpu-cdouble gpu-rest "${extra_tags[@]}" unit memcheck racecheck suites-s suites-d bench level3 host-gemm; do
  echo "$k: ${RES[$k]:-not run}"
done
