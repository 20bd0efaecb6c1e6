#!/usr/bin/env bash
# Runs one of Debian's ScaLAPACK test programs (xdlu, xsllt, ...) under mpirun with libblasoffload.so preloaded in
# every rank, and decides pass/fail from rank 0's counts (the programs exit 0 when tests fail) and from each rank's
# blasoffload summary, which must count calls of the routines ScaLAPACK reaches (on the GPU where asked).
#
# run_scalapack.sh --mpiexec MPIRUN --program PROG --input FILE --lib LIB --np R --mode cpu|auto|gpu --workdir DIR
#                  [options]
#   --input FILE            the program's input, copied into DIR under the name the program opens (LU.dat ...)
#   --ld-library-path P     LD_LIBRARY_PATH of the ranks (pins the CPU BLAS/LAPACK the programs load)
#   --set KEY=VALUE         one more variable for every rank (repeatable)
#   --calls "gemm trsm"     routines (without the precision letter) every rank's summary must count calls of
#   --calls-somewhere "syrk" routines some rank's summary must count calls of (only the diagonal blocks' owners
#                           call syrk)
#   --gpu-calls "gemm"      routines whose calls, on every rank, must include GPU calls ("any": some row's)
#   --gathered "getrf"      ScaLAPACK factorizations (getrf, potrf, geqrf) every rank's summary must show taken over
#                           (its "ScaLAPACK p?getrf: N calls, G gathered ..." line with G > 0 and nothing left; with
#                           --gpu-calls, every one factored on the GPU)
#   --through-gpu-memory "getrf"  of the --gathered ones, those whose calls must mostly have been copied through the
#                           factoring GPU's memory: on every rank, at least half of them and one (a grid's first calls
#                           may take host memory: the other processes' GPUs are not up yet)
#   --cpu-answers "gels"    routines whose GPU calls may end in the summary's fallback column (the CPU LAPACK answers
#                           inputs LAPACK scales, by design: docs/lapack.md); any other routine's may not
#   --expect-local-gpu      a rank whose summary names its GPU must have GPU (rank mod GPUs), chosen by
#                           OMPI_COMM_WORLD_LOCAL_RANK (one node: the world rank is the node-local rank)
#   --expect-cpu-blas RE    every rank's "CPU BLAS:" line must match the extended regex RE
#   --timeout S             seconds before mpirun and its ranks are killed (default 240)
set -u

mpiexec="" program="" input="" lib="" np="" mode="" workdir="" ldpath=""
calls="" somewhere="" gpu_calls="" gathered="" expect_cpu="" local_gpu=0 cpu_answers="" through=""
limit=240 sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpiexec) mpiexec=$2; shift 2 ;;
    --program) program=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --ld-library-path) ldpath=$2; shift 2 ;;
    --set) sets+=("$2"); shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --calls-somewhere) somewhere=$2; shift 2 ;;
    --gpu-calls) gpu_calls=$2; shift 2 ;;
    --gathered) gathered=$2; shift 2 ;;
    --cpu-answers) cpu_answers=$2; shift 2 ;;
    --through-gpu-memory) through=$2; shift 2 ;;
    --expect-cpu-blas) expect_cpu=$2; shift 2 ;;
    --expect-local-gpu) local_gpu=1; shift ;;
    --timeout) limit=$2; shift 2 ;;
    *) echo "run_scalapack.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for v in mpiexec program input lib np mode workdir; do
  [ -n "${!v}" ] || { echo "run_scalapack.sh: --$v is required" >&2; exit 2; }
done
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$program" ] || fail "$program is not an executable (is Debian's scalapack-mpi-test installed?)"
[ -r "$input" ] || fail "cannot read $input"
[ -r "$lib" ] || fail "$lib not built"
input=$(realpath "$input")

# The program opens its input by a fixed name: xdlu and xslu read LU.dat, xdllt LLT.dat, xdinv INV.dat ...
name=$(basename "$program")
prec=${name:1:1}
dat=$(echo "${name:2}" | tr '[:lower:]' '[:upper:]').dat
rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
cp "$input" "$dat"

# Root (containers, CI) must say so; the ranks share one node and talk through shared memory only. More ranks than
# cores (CI has 2) need oversubscription, which also makes idle ranks yield instead of spinning.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_plm_rsh_agent=false OMPI_MCA_rmaps_base_oversubscribe=1
xs=(-x LD_PRELOAD="$lib" -x BLASOFFLOAD_LOG=summary -x BLASOFFLOAD_MODE="$mode")
[ -n "$ldpath" ] && xs+=(-x LD_LIBRARY_PATH="$ldpath")
for kv in "${sets[@]}"; do xs+=(-x "$kv"); done
# Each rank logs to a file of its own (summary.RANK.txt): mpirun's forwarding of the ranks' stderr joins their long
# lines at times.
cmd=("$mpiexec" --allow-run-as-root --oversubscribe -np "$np" --tag-output "${xs[@]}"
     bash -c 'BLASOFFLOAD_LOG_FILE=$PWD/summary.$OMPI_COMM_WORLD_RANK.txt exec "$0" "$@"' "$program")
echo "cwd: $workdir ($dat from $input)"
echo "command: ${cmd[*]}"
# timeout signals mpirun and its whole process group (the ranks are mpirun's children), then kills what is left.
start=$(date +%s.%N)
timeout --kill-after=15 "$limit" "${cmd[@]}" </dev/null >out.txt 2>&1
rc=$?
end=$(date +%s.%N)
awk -v rc="$rc" -v s="$start" -v e="$end" 'BEGIN { printf "mpirun exited %d after %.1f s\n", rc, e - s }'

failures=()
problem() { failures+=("$1"); }
[ "$rc" -eq 0 ] || problem "mpirun exited $rc$([ "$rc" -ge 124 ] && echo " (timed out after $limit s)")"

# Rank 0 prints the results: "Finished N tests, ...", "P tests completed and passed residual checks.",
# "F tests completed and failed residual checks.", "S tests skipped because of illegal input values."
sed -n 's/^\[1,0\]<stdout>://p' out.txt >rank0.txt
count() { grep -E "$1" rank0.txt | awk '{ print $1 }' | tail -n 1; }
total=$(grep -E '^ *Finished +[0-9]+ tests' rank0.txt | awk '{ print $2 }' | tail -n 1)
passed=$(count '^ *[0-9]+ tests completed and passed')
failed=$(count '^ *[0-9]+ tests completed and failed')
skipped=$(count '^ *[0-9]+ tests skipped')
echo "tests: ${total:-?} run, ${passed:-?} passed, ${failed:-?} failed, ${skipped:-?} skipped"
if [ -z "$total" ]; then
  problem "no 'Finished N tests' line from rank 0 (the program stopped early)"
else
  [ "${failed:-1}" -eq 0 ] || problem "${failed:-?} tests failed their residual checks"
  [ "${passed:-0}" -gt 0 ] || problem "no test passed"
fi
bad=$(grep -E 'FAILED|Unable to perform|Bad MEMORY' rank0.txt | head -5)
[ -z "$bad" ] || problem "failure lines: $bad"

# A summary's row "  dgemm   calls   cpu   gpu   fallback   errors ...": prints calls, cpu, gpu and fallback; "any"
# sums every routine's row. Usage: row ROUTINE|any SUMMARY_FILE
row() {
  awk -v r="$1" '$1 ~ /^[a-z][a-z0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 6 && ($1 == r || r == "any") {
    n += $2; c += $3; g += $4; f += $5 } END { print n + 0, c + 0, g + 0, f + 0 }' "$2"
}

# Every rank's summary: present, in this mode, and counting the routines ScaLAPACK reaches in this precision.
for ((r = 0; r < np; ++r)); do
  s=summary.$r.txt
  touch "$s"
  if ! grep -q "^blasoffload summary (pid [0-9]*, mode $mode)" "$s"; then
    problem "rank $r printed no summary (mode $mode)"
    continue
  fi
  if [ -n "$expect_cpu" ] && ! grep -Eq "$expect_cpu" "$s"; then
    problem "rank $r: CPU BLAS is $(grep -m1 'CPU BLAS:' "$s"), not /$expect_cpu/"
  fi
  for routine in $calls; do
    read -r n cpu gpu fb <<<"$(row "$prec$routine" "$s")"
    [ "$n" -gt 0 ] || problem "rank $r: no $prec$routine call reached blasoffload"
    echo "rank $r: $prec$routine $n calls (cpu $cpu, gpu $gpu)"
  done
  for routine in $gpu_calls; do
    [ "$routine" = any ] || routine=$prec$routine
    read -r n cpu gpu fb <<<"$(row "$routine" "$s")"
    [ "$gpu" -gt 0 ] || problem "rank $r: $routine: $n calls, none on the GPU"
  done
  # "  ScaLAPACK p?getrf: 18 calls, 18 gathered onto process (0,0) (18 factored on its GPU; gather ...), 0 left to
  # ScaLAPACK"; where GPU calls are demanded (--gpu-calls), every gathered call factored on the GPU.
  for kind in $gathered; do
    line=$(grep -m1 "^  ScaLAPACK p?$kind: " "$s")
    read -r n g f left <<<"$(sed -E 's/.*: ([0-9]+) calls, ([0-9]+) gathered onto process \(0,0\) \(([0-9]+) factored.*, ([0-9]+) left to ScaLAPACK.*/\1 \2 \3 \4/' <<<"$line")"
    if ! [[ "${n:-}" =~ ^[0-9]+$ ]] || [ "$n" -eq 0 ]; then
      problem "rank $r: no p$prec$kind call taken over (no '  ScaLAPACK p?$kind:' line)"
    elif [ "$g" -eq 0 ] || [ "$left" -ne 0 ] || { [ -n "$gpu_calls" ] && [ "$f" != "$g" ]; }; then
      problem "rank $r: p$prec$kind: $line"
    else
      echo "rank $r: p$prec$kind $n calls, $g gathered"
    fi
    if [[ " $through " == *" $kind "* ]]; then
      t=$(sed -nE 's/.* ([0-9]+) copied through its memory.*/\1/p' <<<"$line")
      if ! [[ "${t:-}" =~ ^[0-9]+$ ]] || [ "$t" -lt 1 ] || [ $((2 * t)) -lt "$g" ]; then
        problem "rank $r: p$prec$kind: ${t:-no} of $g gathered calls copied through the GPU's memory: $line"
      fi
    fi
  done
  # "  GPU: blasoffload-cuda 0.4 (CUDA 13.0, GPU 1 of 4: NVIDIA H200, sm_90, by OMPI_COMM_WORLD_LOCAL_RANK)"
  gpu_line=$(grep -m1 '^  GPU: blasoffload-cuda' "$s")
  if [ "$local_gpu" = 1 ] && [ -n "$gpu_line" ]; then
    read -r dev count <<<"$(sed -E 's/.*GPU ([0-9]+) of ([0-9]+).*/\1 \2/' <<<"$gpu_line")"
    if ! [[ "$count" =~ ^[1-9][0-9]*$ ]] || ! grep -q 'by OMPI_COMM_WORLD_LOCAL_RANK' <<<"$gpu_line" ||
      [ "$dev" != $((r % count)) ]; then
      problem "rank $r: not on its node-local GPU: $gpu_line"
    fi
  fi
  # A GPU call that failed and ran on the CPU instead is a failure of the GPU path, though the test passed; except in
  # the --cpu-answers routines, whose inputs the CPU LAPACK is meant to answer for (the column counts both).
  if [ -n "$gpu_calls" ]; then
    read -r n cpu gpu fb <<<"$(row any "$s")"
    for routine in $cpu_answers; do
      read -r _ _ _ rfb <<<"$(row "$prec$routine" "$s")"
      fb=$((fb - ${rfb:-0}))
    done
    [ "$fb" -eq 0 ] || problem "rank $r: $fb GPU calls failed and ran on the CPU: $(grep -m3 '^blasoffload: ' "$s")"
  fi
done
for routine in $somewhere; do
  total_calls=0
  for ((r = 0; r < np; ++r)); do
    [ -f "summary.$r.txt" ] || continue
    read -r n cpu gpu fb <<<"$(row "$prec$routine" "summary.$r.txt")"
    total_calls=$((total_calls + n))
  done
  [ "$total_calls" -gt 0 ] || problem "no rank's $prec$routine call reached blasoffload"
  echo "all ranks: $prec$routine $total_calls calls"
done

if [ ${#failures[@]} -gt 0 ]; then
  echo "---- output (last 60 lines) ----"
  tail -n 60 out.txt
  for f in "${failures[@]}"; do echo "FAIL: $f"; done
  exit 1
fi
echo "PASS: $name, $np ranks, mode $mode: ${passed} passed, ${skipped:-0} skipped"
