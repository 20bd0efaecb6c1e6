// blasoffload_regret: times one BLAS routine on host operands over a list of shapes, as an unmodified program calls it,
// so that the runner (bench/policy/bench.ini) can set BLASOFFLOAD_MODE=auto against cpu and gpu (and, with --tiny,
// measure what a decision costs per call). Single and double precision: the routine's first letter.
//
// The program links only the Fortran symbols of libblas.so.3: LD_LIBRARY_PATH picks the CPU BLAS and LD_PRELOAD
// picks libblasoffload.so, so the same binary measures every configuration. One JSON object per line on stdout.
#include "regret.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bo_bench {

const char kUsage[] =
    "usage: blasoffload_regret --routine=R [options]     (or: blasoffload_regret --tiny [options])\n"
    "  R: sgemm_nn (square, alpha 1 beta 0), sgemm_lu (LU trailing update m=n, alpha -1 beta 1), sgemv_n, sgemv_t,\n"
    "     strsv_ln, strsv_lt (lower, non-unit, diagonally dominant), snrm2; the same with d for double precision\n"
    "  --shapes=LIST      comma-separated; sgemm_nn: N or MxNxK; sgemm_lu: NxK or MxNxK; sgemv: N or MxN;\n"
    "                     strsv, snrm2: N (1e9 notation accepted). Default: the routine's full list\n"
    "  --quick            the small end of the default list (a smoke run)\n"
    "  --large            add the largest shapes (sgemm_nn 16384: about 8 s per CPU call)\n"
    "  --warmup-s=S       untimed warm-up per shape, at least --warmup-calls calls and S seconds (default 0.5)\n"
    "  --warmup-calls=N   (default 3)\n"
    "  --min-s=S          timed samples per shape until S seconds and at least 3 samples (default 0.5)\n"
    "  --max-reps=N       cap on timed samples per shape (default 20000)\n"
    "  --sample-us=U      small calls are timed in batches of about U microseconds (default 200)\n"
    "  --rotate-mb=MB     operand copies rotated per call span at least MB (default 256)\n"
    "  --round=N          copied into the output (the runner's round number)\n"
    "  --tiny             the decision-overhead benchmark instead: [sd]gemv 4x4, [sd]nrm2 n=4, [sd]gemm 4x4x4 on hot\n"
    "                     data\n"
    "Output: one JSON line of context, then one per shape: routine, shape, mode (BLASOFFLOAD_MODE or \"none\"),\n"
    "median_us, min_us, max_us per call, reps (timed samples), calls_per_rep, copies.\n";

namespace {

bool take(const std::string& arg, const char* key, std::string* value) {
  const size_t n = std::strlen(key);
  if (arg.compare(0, n, key) != 0 || arg.size() <= n || arg[n] != '=') return false;
  *value = arg.substr(n + 1);
  return true;
}

}  // namespace
}  // namespace bo_bench

int main(int argc, char** argv) {
  using namespace bo_bench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string v;
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--large") {
      o.large = true;
    } else if (a == "--tiny") {
      o.tiny = true;
    } else if (take(a, "--routine", &v)) {
      o.routine = v;
    } else if (take(a, "--shapes", &v)) {
      for (size_t b = 0; b <= v.size();) {
        size_t e = v.find_first_of(", ", b);
        if (e == std::string::npos) e = v.size();
        if (e > b) o.shapes.push_back(v.substr(b, e - b));
        b = e + 1;
      }
    } else if (take(a, "--warmup-s", &v)) {
      o.warmup_s = std::atof(v.c_str());
    } else if (take(a, "--warmup-calls", &v)) {
      o.warmup_calls = std::max(1, std::atoi(v.c_str()));
    } else if (take(a, "--min-s", &v)) {
      o.min_s = std::atof(v.c_str());
    } else if (take(a, "--max-reps", &v)) {
      o.max_reps = std::max(3, std::atoi(v.c_str()));
    } else if (take(a, "--sample-us", &v)) {
      o.sample_us = std::max(1.0, std::atof(v.c_str()));
    } else if (take(a, "--rotate-mb", &v)) {
      o.rotate_mb = std::max(0.0, std::atof(v.c_str()));
    } else if (take(a, "--round", &v)) {
      o.round = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "%s", kUsage);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (!o.tiny && o.routine.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  print_context("blasoffload_regret", o);
  return o.tiny ? run_tiny(o) : run_grid(o);
}
