#!/usr/bin/env bash
# Issue 42's ScaLAPACK acceptance on the GPU machine in one device call: Debian's ScaLAPACK test programs (xdlu xdllt
# xdqr xdls xdinv and their s twins, carried) under mpirun with 2 and 4 ranks, the library preloaded in every rank, in
# gpu and auto mode, with our largest inputs (tests/mpi/scalapack/gpu/: Debian's programs hold at most 2 MB of matrix
# a rank, so N <= 480); each must pass with every rank's summary showing GPU calls on its node-local GPU. Prints a
# PASS/FAIL table; every run's log, rank 0's output and every rank's summary go into one $OUT/scalapack-logs.tar.gz
# beside scalapack-table.md.
# Usage (on the GPU machine, from the repository root): tests/gpu/device-scalapack.sh CARRY [MODE ...] [np=2,4]
#   MODE: gpu, auto (default both), auto-eager (auto with BLASOFFLOAD_STARTUP=eager: the GPU starts at the first call
#         the model gives it, where the default waits until the calls' gains cover its start-up, which these programs'
#         one or two seconds of N <= 480 never do), cpu (no GPU asked for: tries the carry anywhere)
#   CARRY made by tests/mpi/make-mpi-carry.sh BUILD_DIR CARRY
#   BO_DEVICE_LIMIT_S (default 560): no run starts after that many seconds; the rest report SKIP.
#   BO_SL_PROGS (default "lu llt qr ls inv"): the programs to run.
#   In gpu mode every p?getrf (lu, inv), p?potrf (llt) and p?geqrf (qr, ls) must be taken over whole (src/scalapack/)
#   on every rank.
set -u
. tests/mpi/carry-env.sh "$1" || exit 2
shift
modes=() nps=(2 4)
for a in "$@"; do
  case "$a" in
    gpu | auto | auto-eager | cpu) modes+=("$a") ;;
    np=*) IFS=, read -r -a nps <<<"${a#np=}" ;;
    *) echo "device-scalapack: unknown argument $a" >&2; exit 2 ;;
  esac
done
[ ${#modes[@]} -gt 0 ] || modes=(gpu auto)
O=${OUT:-/tmp/blasoffload-scalapack}
W=$(mktemp -d /tmp/blasoffload-scalapack.XXXXXX)   # the logs, tarred into $O at the end
mkdir -p "$O"
limit=${BO_DEVICE_LIMIT_S:-560}
T=$L/scalapack/openmpi-tests
in=tests/mpi/scalapack/gpu

# Each run in its own session, so that whatever outlives mpirun (a rank it lost) is found by the session's id and
# ended; a signal to this script ends the run under way the same way.
session=""
end_session() {
  [ -n "$session" ] || return 0
  local left
  left=$(ps -o pid= -s "$session" 2>/dev/null | tr '\n' ' ')
  [ -z "${left// /}" ] || kill -KILL $left 2>/dev/null
  session=""
}
trap 'end_session; exit 130' INT TERM HUP
trap end_session EXIT

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv >"$W/gpus.txt" 2>&1
gpus=$(grep -c '^[0-9]' "$W/gpus.txt")
echo "GPUs: $gpus; commit $(cat "$K/COMMIT")" | tee "$W/header.txt"

# The routines each program reaches on every rank (tests/mpi/CMakeLists.txt); in gpu mode every rank's gemm calls must
# include GPU calls, in auto mode some routine's (the policy decides which).
declare -A calls=([lu]="gemm trsm" [llt]="gemm trsm" [qr]="gemm gemv" [ls]="gemm gemv trsm" [inv]="gemm trsm")
declare -A factor=([lu]=getrf [llt]=potrf [qr]=geqrf [ls]=geqrf [inv]=getrf)
# In gpu mode most of each rank's taken-over calls must also have been copied through the GPU's memory
# (run_scalapack.sh --through-gpu-memory; a grid's first calls may take host memory).
# xdls scales some of its matrices near underflow and overflow, which LAPACK's gels scales back: the GPU path hands
# those calls (of the p?gels taken over) to the CPU LAPACK, and the summary counts them as fallbacks.
declare -A cpu_answers=([ls]=gels)
table=$W/table.md
printf '| mode | ranks | program | result | tests (passed/failed/skipped) | GPU calls per rank | seconds |\n' >"$table"
printf '|---|---|---|---|---|---|---|\n' >>"$table"
status=0
for mode in "${modes[@]}"; do
  case $mode in gpu) gpu_calls=gemm ;; auto | auto-eager) gpu_calls=any ;; *) gpu_calls="" ;; esac
  extra=()
  [ "$mode" = auto-eager ] && extra=(--set BLASOFFLOAD_STARTUP=eager)
  for np in "${nps[@]}"; do
    for prog in ${BO_SL_PROGS:-lu llt qr ls inv}; do
      for p in d s; do
        name=x$p$prog
        dir=$W/$mode.np$np.$name
        if [ "$SECONDS" -ge "$limit" ]; then
          printf '| %s | %s | %s | SKIP (time) | | | |\n' "$mode" "$np" "$name" >>"$table"
          status=1
          continue
        fi
        t0=$SECONDS
        # A factorization taken over (gpu mode) makes no local trsm on the processes holding no diagonal block.
        c=${calls[$prog]}
        [ "$mode" = gpu ] && [ -n "${factor[$prog]}" ] && c=gemm
        setsid bash tests/mpi/run_scalapack.sh --mpiexec "$D/bin/mpirun" --program "$T/$name" \
          --input "$in/$(echo "$prog" | tr '[:lower:]' '[:upper:]').dat" --lib "$K/lib/libblasoffload.so.0" \
          --np "$np" --mode "${mode%-eager}" "${extra[@]}" --workdir "$dir" --ld-library-path "$REF_LIBS" --calls "$c" \
          --gpu-calls "$gpu_calls" --cpu-answers "${cpu_answers[$prog]:-}" --gathered "$([ "$mode" = gpu ] && echo "${factor[$prog]}")" \
          --through-gpu-memory "$([ "$mode" = gpu ] && echo "${factor[$prog]}")" \
          --expect-local-gpu --timeout 150 >"$W/$mode.np$np.$name.log" 2>&1 &
        session=$!
        wait "$session"
        rc=$?
        end_session
        log=$W/$mode.np$np.$name.log
        counts=$(awk '/^tests: / { gsub(",", ""); print $4 "/" $6 "/" $8 }' "$log")
        per_rank=""
        for ((r = 0; r < np; ++r)); do
          g=$(awk '$1 ~ /^[a-z][a-z0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 6 { g += $4 } END { print g + 0 }' \
            "$dir/summary.$r.txt" 2>/dev/null)
          per_rank+="${per_rank:+ }${g:-?}"
        done
        result=PASS
        if [ $rc -ne 0 ]; then
          result="FAIL: $(grep -m1 '^FAIL' "$log" | cut -c7-90)"
          status=1
        fi
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$mode" "$np" "$name" "$result" "${counts:-?}" "$per_rank" \
          $((SECONDS - t0)) >>"$table"
        echo "$mode np=$np $name: $result ($((SECONDS - t0)) s)"
      done
    done
  done
done
echo
cat "$table"
cp "$table" "$O/scalapack-table.md"
# Each run's whole output (out.txt) stays behind: rank 0's part and every rank's summary travel (out.txt of every run
# came to 66 MB, over what a device call returns).
tar -C "$W" --exclude=out.txt -czf "$O/scalapack-logs.tar.gz" . && rm -rf "$W"
echo "device-scalapack: $([ $status = 0 ] && echo PASS || echo FAIL)" | tee -a "$O/scalapack-table.md"
exit $status
