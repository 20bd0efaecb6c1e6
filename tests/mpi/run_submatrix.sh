#!/usr/bin/env bash
# Runs tests/mpi/scalapack_submatrix.c's program under mpirun with libblasoffload.so preloaded in every rank and
# BLASOFFLOAD_SCALAPACK=SETTING and BLASOFFLOAD_SCALAPACK_MIN_N=0 (auto: the policy is asked at the program's first
# call through the library, which is a p?getrf); passes when the program does, and with gather only when every rank's
# summary shows each of its 2 p?getrf, 4 p?potrf, 2 p?geqrf, 2 p?gesv, 2 p?posv and 2 p?gels calls taken over, each
# moved the way COPY asks, and its singular p?gesv and indefinite p?posv (2 each) left to ScaLAPACK after INFO > 0; in
# gpu mode with auto (BLASOFFLOAD_MODE=gpu set by the caller, with BLASOFFLOAD_CUDA_MODULE for the tests' fake module),
# when the calls were copied through the GPU's memory as expected. Each rank logs to a file of its own (log.RANK):
# mpirun's forwarding joins the ranks' long stderr lines at times.
# Usage: run_submatrix.sh MPIEXEC PROGRAM LIB NPROW NPCOL SETTING WORKDIR [COPY]
#   BO_REF_LIBS: the CPU BLAS and LAPACK's folders (default Debian's reference ones), ahead of LD_LIBRARY_PATH
#   COPY: BLASOFFLOAD_TEST_SCALAPACK_COPY (auto: the GPU's memory, else shared host memory, where they can; host:
#         shared host memory; messages: BLACS messages)
set -u
mpiexec=$1 program=$2 lib=$3 nprow=$4 npcol=$5 setting=$6 work=$7 copy=${8:-auto}
np=$((nprow * npcol))
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_plm_rsh_agent=false OMPI_MCA_rmaps_base_oversubscribe=1
# The mode and the CUDA module where the caller set them (gpu mode on the GPU machine; the tests' fake module here).
more=()
for v in BLASOFFLOAD_MODE BLASOFFLOAD_CUDA_MODULE; do [ -n "${!v:-}" ] && more+=(-x "$v=${!v}"); done
timeout --kill-after=10 120 "$mpiexec" --allow-run-as-root --oversubscribe -np $np --tag-output \
  -x LD_PRELOAD="$lib" -x BLASOFFLOAD_SCALAPACK="$setting" -x BLASOFFLOAD_TEST_SCALAPACK_COPY="$copy" \
  -x BLASOFFLOAD_SCALAPACK_MIN_N=0 "${more[@]}" \
  -x BLASOFFLOAD_LOG=calls \
  -x LD_LIBRARY_PATH="${BO_REF_LIBS:-/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  bash -c 'BLASOFFLOAD_LOG_FILE=$PWD/log.$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$program" "$nprow" "$npcol" \
  </dev/null >out.txt 2>&1
rc=$?
grep -E '<stdout>:(PASS|FAIL)' out.txt | sed 's/^\[1,0\]<stdout>://'
status=0
[ $rc -eq 0 ] || { echo "FAIL: mpirun exited $rc"; tail -20 out.txt; status=1; }
grep -q '<stdout>:PASS' out.txt || { echo "FAIL: no check ran"; status=1; }
# expect RANK OP N ERE WHAT: log.RANK's count of lines matching ERE must be OP (-eq, -ge) N.
expect() {
  local n
  n=$(grep -Ec "$4" "log.$1")
  [ "$n" "$2" "$3" ] || { echo "FAIL: rank $1: $n of $3 $5"; status=1; }
}
# Every rank's summary: the program's calls taken over. (p?gesv and p?posv left to ScaLAPACK call its p?getrf and
# p?potrf, which are left to it at once.)
expect_gathered() {
  for want in "getrf: 4 calls, 2 gathered" "potrf: 6 calls, 4 gathered" "geqrf: 2 calls, 2 gathered" \
    "gesv: 4 calls, 2 gathered" "posv: 4 calls, 2 gathered" "gels: 2 calls, 2 gathered"; do
    grep -q "^  ScaLAPACK p?$want" "log.$1" || { echo "FAIL: rank $1: no 'p?$want'"; status=1; }
  done
}
# The calls log names the way the matrix moved ("... (blocks of 8, shared memory), factored on its CPU: set-up 0.001 s,
# gather").
moved() { echo "gathered onto process \(0,0\) .*, $1\), factored on its (CPU|GPU): set-up [0-9.]+ s, gather"; }
info8="left to ScaLAPACK \(the gathered call returned INFO = 8\)"
declined="the GPU declined its copy \(INFO > 0, non-finite values or a scaled magnitude\); gathered again"
for ((r = 0; r < np; ++r)); do
  if [ "$setting" = gather ]; then
    expect_gathered $r
    way=$([ "$copy" = messages ] && echo messages || echo "shared memory")
    expect $r -eq 14 "$(moved "$way")" "calls' log lines say they moved by $way"
    # The singular and the indefinite matrix: found by the gathered call, left to ScaLAPACK (its INFO checked above).
    expect $r -eq 4 "$info8" "calls left to ScaLAPACK after INFO = 8"
    expect $r -eq 4 "left to ScaLAPACK \(the calling driver's gathered call found INFO > 0\)" \
      "nested factorizations left to ScaLAPACK at once"
  elif [ "${BLASOFFLOAD_MODE:-}" = gpu ] && [ "$setting" = auto ] && [ -n "${BLASOFFLOAD_CUDA_MODULE:-}" ]; then
    # The tests' fake module (tests/policy/fake_module.c), whose "device" memory is a memfd: the 10 LU and Cholesky
    # calls that succeed go through its memory, all but the first (the other processes' modules are not up yet, and
    # this small a matrix does not pay for starting them). It declines QR in place, as a GPU that fails on its copy,
    # and the singular and indefinite ones with INFO > 0: those 8 are gathered again through host memory, where the
    # CPU LAPACK factors the QR ones and finds INFO = 8 for the others.
    expect_gathered $r
    expect $r -ge 9 "$(moved "its GPU's memory")" "LU and Cholesky calls (10) moved through the fake GPU's memory"
    expect $r -eq 4 "the GPU declined its copy \(a failure\); gathered again" "QR calls declined by the fake GPU"
    expect $r -eq 4 "$declined" "singular or indefinite calls declined by the GPU"
    expect $r -eq 4 "$info8" "calls left to ScaLAPACK after INFO = 8"
  elif [ "${BLASOFFLOAD_MODE:-}" = gpu ] && [ "$setting" = auto ] && [ "$copy" = auto ]; then
    # On the GPU machine: the 14 calls that succeed (getrf 2, potrf 4, geqrf 2, gesv 2, posv 2, gels 2) go through
    # the GPU's memory, all but the first: its other processes have not started their GPU yet, and a matrix this
    # small does not pay for starting it (takeover.cpp). The singular and indefinite ones are declined by the GPU
    # and gathered again through host memory, where the CPU LAPACK finds INFO = 8.
    expect $r -ge 13 "$(moved "its GPU's memory")" "calls (14) moved through the GPU's memory"
    expect $r -eq 4 "$declined" "singular or indefinite calls declined by the GPU"
    expect $r -eq 4 "$info8" "calls left to ScaLAPACK after INFO = 8"
  fi
done
[ $status -eq 0 ] && echo "PASS: scalapack_submatrix on a ${nprow}x$npcol grid, BLASOFFLOAD_SCALAPACK=$setting ($copy)"
exit $status
