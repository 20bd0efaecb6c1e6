// blasoffload_bench_pipeline: times the CUDA module's sgemm engine on host (pageable) operands against the CPU BLAS,
// with the engine's per-stage statistics, as JSON lines for bench/common/reports/pipeline.py.
//
// The module is dlopen'ed and driven through its C table (src/offload/cuda_module_api.h, one generic call) as the core
// drives it, with host services whose cpu_call (an sgemm here) runs the CPU BLAS named by BO_CPU_BLAS: the hybrid
// share runs on the same library as the CPU-alone baseline. Nothing here links CUDA, so the program builds (and says
// why it cannot measure) on a machine without one.
//
// This file: the usage, the arguments and main(); pipeline_bench.h says which file holds the rest.
#include "pipeline_bench.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace bo_bench {
namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitSetup = 2, kExitNoGpu = 3;

const char kUsage[] =
    "usage: blasoffload_bench_pipeline [options]\n"
    "Times the CUDA module's sgemm on host (malloc'd) operands; one JSON line of context, then one per measured\n"
    "point (and per case a \"summary\" line with its ratios) on stdout. NN products only.\n"
    "  --case=LIST          sgemm_host,rank_update,out_of_core,multi_gpu or all (default all, in that order)\n"
    "  --sizes=LIST         sgemm_host: n of the square products (default 4096,8192,16384), beta 0 and beta 1\n"
    "  --cpu-max-n=N        sgemm_host: CPU BLAS baseline up to this n (default 8192: about 1 s a call there)\n"
    "  --no-direct          sgemm_host: leave out engine_direct (the engine with BLASOFFLOAD_PIPELINE=off)\n"
    "  --rank-n=N           rank_update: m = n (default 16384)\n"
    "  --rank-k=LIST        rank_update: k values (default 64,256); alpha -1, beta 1 as sgetrf's trailing update\n"
    "  --shares=LIST        rank_update: hybrid cpu_share sweep (default 0.2,0.3,0.4,0.5,0.6)\n"
    "  --hybrid-cpu-threads=N  openblas_set_num_threads(N) around the hybrid points (default: unchanged)\n"
    "  --pcie-gbs=G         rank_update: PCIe rate of the floor, GB/s per direction (default 55)\n"
    "  --ooc-n=N            out_of_core: n (default 49152: 29 GB of host operands; smaller for a dry run)\n"
    "  --ooc-memory-limit=S out_of_core: BLASOFFLOAD_DEVICE_MEMORY_LIMIT for it (default 8G)\n"
    "  --multi-n=N          multi_gpu: n (default 32768)\n"
    "  --multi-devices=L    multi_gpu: BLASOFFLOAD_DEVICES of the multi-GPU variant (default 0,1; the single-GPU\n"
    "                       variant uses its first entry); skipped when the driver shows fewer devices\n"
    "  --reps=N             timed calls per point for every case (defaults: sgemm_host 5 up to n = 8192, else 3;\n"
    "                       rank_update 7; multi_gpu 3; out_of_core 1)\n"
    "  --sets=N             operand sets rotated per call (default: enough to span 256 MB, at least 2; out_of_core\n"
    "                       and multi_gpu 1)\n"
    "  --budget-s=S         the whole run's time budget: a point whose warm-up does not fit is skipped, its\n"
    "                       repetitions are cut to what fits (default 480)\n"
    "  --no-check           skip the randomized result checks\n"
    "  --quick              small sizes for a dry run (sgemm 1024,2048; rank 4096; out_of_core 8192; multi 4096)\n"
    "  --module=PATH        the module (default $BO_CUDA_MODULE, else next to the build tree or the carry's lib/)\n"
    "  --cpu-blas=PATH      the CPU BLAS (default $BO_CPU_BLAS, else libopenblas.so.0 from the library path)\n"
    "  --cpu-stand-in       testing the benchmark itself without a GPU: \"engine\" calls run the CPU BLAS\n"
    "Environment: BO_CPU_BLAS, BO_CUDA_MODULE, BO_COMMIT (copied into every line), BO_BENCH_VERBOSE (module log),\n"
    "the engine's BLASOFFLOAD_* knobs (recorded; cases set BLASOFFLOAD_PIPELINE, _DEVICE_MEMORY_LIMIT and _DEVICES\n"
    "for their own points only), OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS (recorded).\n"
    "Exit status: 0 all points measured and checked, 1 a point failed (engine error or check), 2 setup or usage\n"
    "error, 3 no GPU (nothing measured).\n";

// ---- Arguments and context ----

bool parse_int(const std::string& s, int64_t* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || v < 0 || v > 9e15 || v != std::floor(v)) return false;
  *out = int64_t(v);
  return true;
}

template <typename T>
bool parse_list(const std::string& s, std::vector<T>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (std::is_integral<T>::value) {
      int64_t v;
      if (!parse_int(item, &v) || v < 1) return false;
      out->push_back(T(v));
    } else {
      char* end = nullptr;
      const double v = std::strtod(item.c_str(), &end);
      if (end == item.c_str() || *end || !(v >= 0 && v <= 1)) return false;
      out->push_back(T(v));
    }
  }
  return !out->empty();
}

// Returns -1 to go on, else the exit status.
int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    o->args += (i > 1 ? " " : "") + a;
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq), val = eq == std::string::npos ? "" : a.substr(eq + 1);
    int64_t v = 0;
    bool ok = true;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (key == "--case") {
      std::vector<std::string> c;
      std::stringstream ss(val == "all" ? "sgemm_host,rank_update,out_of_core,multi_gpu" : val);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (item != "sgemm_host" && item != "rank_update" && item != "out_of_core" && item != "multi_gpu") ok = false;
        c.push_back(item);
      }
      ok = ok && !c.empty();
      o->cases = c;
    } else if (key == "--sizes") {
      ok = parse_list(val, &o->sizes);
    } else if (key == "--cpu-max-n") {
      ok = parse_int(val, &o->cpu_max_n);
    } else if (a == "--no-direct") {
      o->direct = false;
    } else if (key == "--rank-n") {
      ok = parse_int(val, &o->rank_n) && o->rank_n > 0;
    } else if (key == "--rank-k") {
      ok = parse_list(val, &o->rank_k);
    } else if (key == "--shares") {
      ok = parse_list(val, &o->shares);
    } else if (key == "--hybrid-cpu-threads") {
      ok = parse_int(val, &v) && v > 0 && v < 4096;
      o->hybrid_cpu_threads = int(v);
    } else if (key == "--pcie-gbs") {
      o->pcie_gbs = std::atof(val.c_str());
      ok = o->pcie_gbs > 0;
    } else if (key == "--ooc-n") {
      ok = parse_int(val, &o->ooc_n) && o->ooc_n > 0;
    } else if (key == "--ooc-memory-limit") {
      o->ooc_limit = val;
      ok = !val.empty();
    } else if (key == "--multi-n") {
      ok = parse_int(val, &o->multi_n) && o->multi_n > 0;
    } else if (key == "--multi-devices") {
      o->multi_devices = val;
      ok = val.find(',') != std::string::npos;
    } else if (key == "--reps") {
      ok = parse_int(val, &v) && v > 0 && v < 100000;
      o->reps = int(v);
    } else if (key == "--sets") {
      ok = parse_int(val, &v) && v > 0 && v < 1000;
      o->sets = int(v);
    } else if (key == "--budget-s") {
      o->budget_s = std::atof(val.c_str());
      ok = o->budget_s > 0;
    } else if (a == "--no-check") {
      o->check = false;
    } else if (a == "--quick") {
      o->sizes = {1024, 2048};
      o->rank_n = 4096;
      o->ooc_n = 8192;
      o->multi_n = 4096;
    } else if (key == "--module") {
      o->module_path = val;
    } else if (key == "--cpu-blas") {
      o->cpu_blas_path = val;
    } else if (a == "--cpu-stand-in") {
      o->stand_in = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "blasoffload_bench_pipeline: bad argument '%s'\n%s", a.c_str(), kUsage);
      return kExitSetup;
    }
  }
  return -1;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

}  // namespace bo_bench

int main(int argc, char** argv) {
  using namespace bo_bench;
  Context ctx;
  const int parsed = parse_args(argc, argv, &ctx.opt);
  if (parsed >= 0) return parsed;
  const auto start = Clock::now();
  ctx.deadline = start + std::chrono::milliseconds(int64_t(ctx.opt.budget_s * 1e3));
  g_verbose = std::getenv("BO_BENCH_VERBOSE") != nullptr;
  ctx.date = utc_now();
  ctx.commit = env_or("BO_COMMIT", "unknown");

  ctx.gpus = probe_gpus();
  ctx.gpu = ctx.opt.stand_in ? "cpu-stand-in" : ctx.gpus.names.empty() ? "none" : ctx.gpus.names[0];
  const bool cpu_ok = load_cpu_blas(ctx.opt.cpu_blas_path);
  if (!ctx.opt.stand_in && ctx.gpus.count > 0 && cpu_ok) ctx.module = load_module(ctx.opt.module_path);
  emit_context(ctx, g_cpu);

  if (!cpu_ok) {
    std::fprintf(stderr,
                 "blasoffload_bench_pipeline: %s (set BO_CPU_BLAS or --cpu-blas to OpenBLAS's "
                 "libopenblas.so.0)\n",
                 g_cpu.error.c_str());
    return kExitSetup;
  }
  if (!ctx.opt.stand_in) {
    if (ctx.gpus.count == 0) {
      for (const auto& c : ctx.opt.cases) emit_case_skip(ctx, c, "no GPU: " + ctx.gpus.error);
      std::fprintf(stderr, "blasoffload_bench_pipeline: no GPU here (%s): nothing to measure\n",
                   ctx.gpus.error.c_str());
      return kExitNoGpu;
    }
    if (!ctx.module.mod || ctx.module.init_status != BO_CUDA_OK) {
      for (const auto& c : ctx.opt.cases) emit_case_skip(ctx, c, ctx.module.error);
      std::fprintf(stderr, "blasoffload_bench_pipeline: %s (module %s; --module or BO_CUDA_MODULE)\n",
                   ctx.module.error.c_str(), ctx.module.path.c_str());
      return ctx.module.init_status == BO_CUDA_NO_DEVICE ? kExitNoGpu : kExitSetup;
    }
  }
  std::fprintf(stderr, "blasoffload_bench_pipeline: %s; CPU BLAS %s (core %s, %d threads); budget %.0f s\n",
               ctx.opt.stand_in ? "CPU stand-in for the engine" : ctx.module.mod->name, g_cpu.path.c_str(),
               g_cpu.corename ? g_cpu.corename() : "?", g_cpu.get_threads ? g_cpu.get_threads() : 0, ctx.opt.budget_s);

  for (const auto& c : ctx.opt.cases) {
    try {
      if (c == "sgemm_host") case_sgemm_host(ctx);
      if (c == "rank_update") case_rank_update(ctx);
      if (c == "out_of_core") case_out_of_core(ctx);
      if (c == "multi_gpu") case_multi_gpu(ctx);
    } catch (const std::bad_alloc&) {
      emit_case_skip(ctx, c, "host memory exhausted");
      ++ctx.failures;
    }
  }
  if (ctx.module.mod && ctx.module.mod->shutdown) ctx.module.mod->shutdown();
  Json end;
  Json e;
  e.num("elapsed_s", ms_since(start) / 1e3).integer("failures", ctx.failures);
  end.raw("end", e.text());
  emit(end);
  return ctx.failures ? kExitFailed : kExitOk;
}
