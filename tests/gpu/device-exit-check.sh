#!/usr/bin/env bash
# Exit while the GPU starts in the background, on the GPU machine: tests/gpu/exit_startup (one GPU-worthy dgemm under
# BLASOFFLOAD_STARTUP=eager, then dgemm calls on the CPU for BUSY_MS beside the start-up) under the default exit wait
# (BLASOFFLOAD_EXIT_WAIT_MS unset: the main thread's exit waits for the start-up before any exit handler) and under 0
# (the start-up left running: the CUDA runtime's exit teardown meets it, the hazard the wait exists for), each case in
# its own process with a watchdog. A line per case: the exit wait, BUSY_MS, the exit status, how long exit took after
# main returned, and the library's lines about the start-up. A process still alive after 20 s gets its threads' kernel
# wait channels and system calls dumped, then is killed. Failure: with the default wait, any exit status but 0 or a
# process that does not end. The last line counts them; exit status 1 when there was one.
# Usage: tests/gpu/device-exit-check.sh LIB PROGRAM BLAS_DIR [ROUNDS]
#   LIB: libblasoffload.so; PROGRAM: exit_startup built here; BLAS_DIR: the usr/lib/x86_64-linux-gnu of a
#   prepare-carry.sh --openblas folder. Output on stdout, per-case logs under ${OUT:-/tmp}/exit-check[-TAG].
# Environment: WAITS (default "default 0"), BUSY (BUSY_MS values, default "0 300 1500"), TAG (names the log folder:
# another library's run beside this one's).
set -u
lib=$1
prog=$2
L=$3
rounds=${4:-2}
O=${OUT:-/tmp}/exit-check${TAG:+-$TAG}
mkdir -p "$O"
export LD_LIBRARY_PATH=$L/lapack:$L/openblas-pthread:$L
export BLASOFFLOAD_MODE=auto BLASOFFLOAD_STARTUP=eager BLASOFFLOAD_LOG=debug
export BLASOFFLOAD_CPU_BLAS=$L/openblas-pthread/libblas.so.3
hung=0
failed=0
for r in $(seq 1 "$rounds"); do
  for wait_ms in ${WAITS:-default 0}; do
    for busy in ${BUSY:-0 300 1500}; do
      name=w$wait_ms-b$busy-r$r
      rm -f "$O/$name.log"
      if [ "$wait_ms" = default ]; then unset BLASOFFLOAD_EXIT_WAIT_MS; else export BLASOFFLOAD_EXIT_WAIT_MS=$wait_ms; fi
      BLASOFFLOAD_LOG_FILE=$O/$name.log LD_PRELOAD=$lib "$prog" 2048 "$busy" \
        >"$O/$name.out" 2>"$O/$name.err" &
      pid=$!
      for _ in $(seq 1 200); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
      if kill -0 $pid 2>/dev/null; then
        hung=$((hung + 1))
        {
          echo "=== $name: alive after 20 s; threads:"
          for t in /proc/$pid/task/*; do
            echo "$(basename "$t") $(cat "$t/comm") wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null) state=$(awk '{print $3}' "$t/stat")"
          done
        } | tee "$O/$name.hang"
        kill -9 $pid
      fi
      wait $pid
      rc=$?
      [ "$wait_ms" = default ] && [ "$rc" != 0 ] && failed=$((failed + 1))
      end=$(date +%s.%N)
      ret=$(sed -n 's/.*main-returns-at \([0-9.]*\).*/\1/p' "$O/$name.out")
      took=$([ -n "$ret" ] && awk -v a="$end" -v b="$ret" 'BEGIN{printf "%.3f", a-b}' || echo "-")
      calls=$(awk '{print $2}' "$O/$name.out")
      stage=$(grep -E "GPU start-up|GPU path ready|exit:|GPU:" "$O/$name.log" 2>/dev/null | sed 's/^blasoffload: //' | tr '\n' '|')
      echo "wait_ms=$wait_ms busy_ms=$busy round=$r rc=$rc calls=$calls exit_s=$took | $stage"
    done
  done
done
echo "hung processes: $hung; failed with the default wait: $failed"
[ "$failed" = 0 ]
