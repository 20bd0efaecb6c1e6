// The command line of blasoffload_bench_level3 (level3_options.h): its usage text and the parsing of its arguments.
#include "level3_options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bo_level3 {

extern const char kUsage[] =
    "usage: blasoffload_bench_level3 [options]\n"
    "Times trsm and syrk in single and double precision on device-resident data: the registry's tuned choice\n"
    "(select_ex BO_SELECT_TUNED), every own configuration and the cuBLAS (vendor) entries, each with its\n"
    "workspace_bytes. One JSON line of context, then one per (shape, candidate) on stdout; progress on stderr.\n"
    "  --module=PATH      the CUDA module (else $BO_CUDA_MODULE, else <exe dir>/../../libblasoffload_cuda.so, else\n"
    "                     <exe dir>/../lib/libblasoffload_cuda.so, else <exe dir>/libblasoffload_cuda.so)\n"
    "  --routines=LIST    trsm,syrk (default both; strsm/ssyrk/dtrsm/dsyrk name the same kinds)\n"
    "  --precisions=LIST  s,d (default both)\n"
    "  --strsm=LIST       MxN shapes of the left, lower, no-transpose, non-unit solve in single precision\n"
    "                     (default 16384x1,16384x16,16384x128,128x16384,4096x4096,8192x8192)\n"
    "  --dtrsm=LIST       the same in double precision (default 16384x16,16384x128,4096x4096)\n"
    "  --right            also the right-side equivalents: X L^T = B with B N x M (side R, lower, transposed)\n"
    "  --ssyrk=LIST       n = k of the lower, no-transpose rank-k update (default 2048,4096,8192)\n"
    "  --dsyrk=LIST       the same in double precision (default 8192)\n"
    "  --host-gemm=LIST   also C = A B (NN, beta 0) on host (malloc'd) operands at these n, per precision: the\n"
    "                     module's call() (candidate module), the library's Fortran gemm (--library, candidate\n"
    "                     library) and the CPU BLAS's (--cpu-blas, candidate cpu); wall time per call (default none)\n"
    "  --library=PATH     libblasoffload.so for --host-gemm (its settings from the environment: BLASOFFLOAD_MODE,\n"
    "                     BLASOFFLOAD_CPU_BLAS, ...)\n"
    "  --cpu-blas=PATH    the CPU BLAS for --host-gemm (e.g. an OpenBLAS libopenblas.so.0)\n"
    "  --host-reps=N      timed host calls per candidate after one untimed (default 3)\n"
    "  --reps=N           timed runs per candidate (default 9; medians want at least 7)\n"
    "  --warmup=N         untimed runs per candidate after the check run (default 2)\n"
    "  --queue-ahead      start each timed call behind a 200 us spin kernel: GPU time only, without the host's\n"
    "                     launch overhead (default: each call starts on an idle GPU, as a BLAS call does)\n"
    "  --commit=STR, --date=STR   written into every line (bench.ini passes the build's commit)\n"
    "Environment: BLASOFFLOAD_DEVICE (GPU index), the module's own settings (tuned table, BLASOFFLOAD_STRSM_*).\n"
    "Exit status: 0 done, 1 a candidate failed or disagreed with the reference, 2 set-up error, 3 no GPU.\n";

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> r;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = std::min(s.find(',', p), s.size());
    if (q > p) r.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return r;
}

}  // namespace

bool ParseArgs(int argc, char** argv, Options* out) {
  Options& o = *out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* key) -> const char* {
      const size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? argv[i] + n : nullptr;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (const char* v = val("--module=")) {
      o.module = v;
    } else if (const char* v = val("--routines=")) {
      o.trsm = o.syrk = false;
      for (const std::string& r : Split(v)) {
        // The kind, with or without a precision letter (--precisions picks those).
        const std::string k = r.size() == 5 && (r[0] == 's' || r[0] == 'd') ? r.substr(1) : r;
        if (k == "trsm")
          o.trsm = true;
        else if (k == "syrk")
          o.syrk = true;
        else
          return false;
      }
    } else if (const char* v = val("--precisions=")) {
      o.precisions.clear();
      for (const std::string& p : Split(v)) {
        if (p != "s" && p != "d") return false;
        o.precisions.push_back(p == "s" ? BO_PREC_S : BO_PREC_D);
      }
    } else if (a.rfind("--strsm=", 0) == 0 || a.rfind("--dtrsm=", 0) == 0) {
      MxN& shapes = o.trsm_shapes[a[2] == 'd' ? BO_PREC_D : BO_PREC_S];
      shapes.clear();
      for (const std::string& s : Split(argv[i] + 8)) {
        long long m = 0, n = 0;
        if (std::sscanf(s.c_str(), "%lldx%lld", &m, &n) != 2 || m < 1 || n < 1) return false;
        shapes.push_back({m, n});
      }
    } else if (a.rfind("--ssyrk=", 0) == 0 || a.rfind("--dsyrk=", 0) == 0 || a.rfind("--host-gemm=", 0) == 0) {
      std::vector<int64_t>& ns = a[2] == 'h' ? o.host_gemm_n : o.syrk_n[a[2] == 'd' ? BO_PREC_D : BO_PREC_S];
      ns.clear();
      for (const std::string& s : Split(argv[i] + a.find('=') + 1)) {
        const long long n = std::atoll(s.c_str());
        if (n < 1) return false;
        ns.push_back(n);
      }
    } else if (const char* v = val("--library=")) {
      o.library = v;
    } else if (const char* v = val("--cpu-blas=")) {
      o.cpu_blas = v;
    } else if (const char* v = val("--host-reps=")) {
      o.host_reps = std::max(1, std::atoi(v));
    } else if (a == "--right") {
      o.right = true;
    } else if (a == "--queue-ahead") {
      o.queue_ahead = true;
    } else if (const char* v = val("--reps=")) {
      o.reps = std::max(1, std::atoi(v));
    } else if (const char* v = val("--warmup=")) {
      o.warmup = std::max(0, std::atoi(v));
    } else if (const char* v = val("--commit=")) {
      o.commit = v;
    } else if (const char* v = val("--date=")) {
      o.date = v;
    } else {
      std::fprintf(stderr, "blasoffload_bench_level3: unknown argument %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

}  // namespace bo_level3
