#!/usr/bin/env bash
# Everything issue 6's results came from on one lent H100, in one device call (about 3 minutes): the pipeline's GPU
# tests, the engine benchmark with registered and with staged host memory, the out-of-core run, and reference
# LAPACK sgetrf (pivoting and not) under the CPU alone, preloaded auto and OpenBLAS's own LAPACK. One archive,
# final.tar.gz, goes to $OUT. multi_gpu runs separately on a two-GPU machine (device-bench.sh ... multi_gpu).
# Usage (GPU machine, repository root; carried: .devcarry from tests/gpu/make-device-carry.sh and .carry/pipeline
# from bench/pipeline/make-carry.sh):  bash bench/pipeline/device-final.sh
set -u
R=/tmp/final
rm -rf $R && mkdir -p $R
export BO_GPU_TEST_MODULE=$PWD/.devcarry/lib/libblasoffload_cuda.so
timeout 120 .devcarry/gpu/blasoffload_gpu_tests --gtest_filter='Pipeline*' >$R/gpu-pipeline-tests.log 2>&1
grep -E "PASSED|FAILED" $R/gpu-pipeline-tests.log | head -5
# The benchmark process loads CUDA itself (to count GPUs), so registration is asked for explicitly.
BLASOFFLOAD_PIN_HOST=on BO_DEVICE_LIMIT_S=170 bash bench/pipeline/device-bench.sh .carry/pipeline $R/registered \
  sgemm_host,rank_update >$R/registered.log 2>&1
BLASOFFLOAD_PIN_HOST=off BO_DEVICE_LIMIT_S=150 bash bench/pipeline/device-bench.sh .carry/pipeline $R/staged \
  sgemm_host,rank_update >$R/staged.log 2>&1
BO_DEVICE_LIMIT_S=110 bash bench/pipeline/device-bench.sh .carry/pipeline $R/ooc out_of_core >$R/ooc.log 2>&1
BO_LAPACK_ARGS="--drivers=getrf,getrf_dominant" BO_STACKS="cpu auto openblas" BO_LAPACK_N="4096 8192 16384" \
  BO_BUDGET_S=150 bash bench/policy/device-bench.sh .carry/pipeline $R/lapack lapack >$R/lapack.log 2>&1
grep -hE "Verdict" $R/*.log
cp -r /tmp/blasoffload-bench-work/lapack/lapack-*/ $R/lapack/raw 2>/dev/null
tar -C /tmp -czf "${OUT:-/tmp}/final.tar.gz" final
