#!/usr/bin/env bash
# On the GPU machine: SciPy's linalg test suite (its pip wheel: scipy-openblas32, the scipy_ LP64 family, beside NumPy's ILP64
# wheel) preloaded in modes auto and gpu with the summary; writes OUTDIR/scipy-<gpu>-<date>-<commit>.log in about 2 minutes.
# Usage: bench/numpy/scipy_suite.sh LIBDIR OUTDIR   (LIBDIR as for run.sh, its ../COMMIT naming the commit)
lib=$(cd "$1" && pwd)/libblasoffload.so
out=$2
tag=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')-$(date -u +%Y%m%d)-$(cat "$1/../COMMIT")
log=$out/scipy-$tag.log
cd /tmp
python3 -c 'import scipy, numpy; print("scipy", scipy.__version__, "numpy", numpy.__version__)' > "$log" 2>&1
for mode in auto gpu; do
  echo "## pytest scipy.linalg, BLASOFFLOAD_MODE=$mode" >> "$log"
  timeout 135 env LD_PRELOAD="$lib" BLASOFFLOAD_MODE=$mode BLASOFFLOAD_LOG=summary python3 -m pytest --pyargs \
    scipy.linalg -q -p no:cacheprovider -W ignore -x 2>&1 | grep -v '^\.*  *\[' | tail -45 >> "$log"
done
echo "# done in ${SECONDS}s" >> "$log"
