// The cases blasoffload_bench_pipeline sweeps (sgemm_host, rank_update, out_of_core, multi_gpu): each one's points
// and its summary line.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "pipeline_bench.h"

namespace bo_bench {

void case_sgemm_host(Context& ctx) {
  const Options& opt = ctx.opt;
  for (const int64_t n : opt.sizes) {
    if (ctx.left_s() < 5) {
      emit_case_skip(ctx, "sgemm_host", "budget: n=" + std::to_string(n) + " not started");
      continue;
    }
    const double set_bytes = 12.0 * double(n) * double(n);
    Operands o(n, n, n, sets_for(set_bytes, opt.sets, 2), true);
    std::fprintf(stderr, "sgemm_host n=%lld: %d operand sets filled in %.1f s\n", (long long)n, o.sets(), o.fill_s);
    const int reps = opt.reps > 0 ? opt.reps : (n <= 8192 ? 5 : 3);
    for (const float beta : {0.0f, 1.0f}) {
      Point eng{"sgemm_host", {"engine", true, 0, {}}, 1.0f, beta, reps};
      const Result re = measure(ctx, eng, o);
      emit_point(ctx, eng, o, re);
      Result rd;
      if (opt.direct) {
        Point dir{"sgemm_host", {"engine_direct", true, 0, {{"BLASOFFLOAD_PIPELINE", "off"}}}, 1.0f, beta, reps};
        rd = measure(ctx, dir, o);
        emit_point(ctx, dir, o, rd);
      }
      Result rc;
      if (n <= opt.cpu_max_n) {
        Point cpu{"sgemm_host", {"cpu", false, 0, {}}, 1.0f, beta, reps};
        rc = measure(ctx, cpu, o);
        emit_point(ctx, cpu, o, rc);
      }
      Json j = line_start("sgemm_host", "summary");
      j.integer("m", n).integer("n", n).integer("k", n).num("beta", beta);
      j.num("engine_ms", med_or_nan(re)).num("engine_min_ms", re.min()).num("engine_max_ms", re.max());
      j.num("cpu_ms", med_or_nan(rc)).num("cpu_min_ms", rc.min()).num("cpu_max_ms", rc.max());
      j.num("direct_ms", med_or_nan(rd));
      j.num("speedup_vs_cpu", med_or_nan(rc) / med_or_nan(re));
      j.num("speedup_vs_direct", med_or_nan(rd) / med_or_nan(re));
      if (n == 8192 || n == 16384) j.num("target_ms", n == 8192 ? 30.0 : 200.0);
      line_end(ctx, j);
      emit(j);
    }
  }
}

void case_rank_update(Context& ctx) {
  const Options& opt = ctx.opt;
  const int64_t n = opt.rank_n;
  for (const int64_t k : opt.rank_k) {
    if (ctx.left_s() < 5) {
      emit_case_skip(ctx, "rank_update", "budget: k=" + std::to_string(k) + " not started");
      continue;
    }
    const double set_bytes = 4.0 * double(2 * n * k + n * n);
    Operands o(n, n, k, sets_for(set_bytes, opt.sets, 2), true);
    std::fprintf(stderr, "rank_update n=%lld k=%lld: %d operand sets filled in %.1f s\n", (long long)n, (long long)k,
                 o.sets(), o.fill_s);
    const int reps = opt.reps > 0 ? opt.reps : 7;
    Point cpu{"rank_update", {"cpu", false, 0, {}}, -1.0f, 1.0f, reps};
    const Result rc = measure(ctx, cpu, o);
    emit_point(ctx, cpu, o, rc);
    Point gpu{"rank_update", {"gpu", true, 0, {}}, -1.0f, 1.0f, reps};
    const Result rg = measure(ctx, gpu, o);
    emit_point(ctx, gpu, o, rg);
    const int threads0 = g_cpu.get_threads ? g_cpu.get_threads() : 0;
    if (opt.hybrid_cpu_threads > 0 && g_cpu.set_threads) g_cpu.set_threads(opt.hybrid_cpu_threads);
    double best_ms = NAN, best_share = NAN, best_min = NAN, best_max = NAN;
    for (const double share : opt.shares) {
      Point hy{"rank_update", {"hybrid", true, share, {}}, -1.0f, 1.0f, reps};
      const Result rh = measure(ctx, hy, o);
      emit_point(ctx, hy, o, rh, [&](Json& j) {
        if (opt.hybrid_cpu_threads > 0) j.integer("cpu_threads", opt.hybrid_cpu_threads);
      });
      if (rh.ok() && !(rh.median() >= best_ms)) {
        best_ms = rh.median();
        best_share = share;
        best_min = rh.min();
        best_max = rh.max();
      }
    }
    if (opt.hybrid_cpu_threads > 0 && g_cpu.set_threads && threads0 > 0) g_cpu.set_threads(threads0);
    // Minimal traffic: C, A, B in; C out; both directions at once, each at the PCIe rate.
    const double in_bytes = 4.0 * double(n * n + 2 * n * k), out_bytes = 4.0 * double(n * n);
    const double floor_ms = std::max(in_bytes, out_bytes) / (opt.pcie_gbs * 1e6);
    const double single = std::fmin(med_or_nan(rc), med_or_nan(rg));  // fmin: a missing side does not count
    Json j = line_start("rank_update", "summary");
    j.integer("m", n).integer("n", n).integer("k", k).num("pcie_gbs", opt.pcie_gbs).num("floor_ms", floor_ms);
    j.num("cpu_ms", med_or_nan(rc)).num("cpu_min_ms", rc.min()).num("cpu_max_ms", rc.max());
    j.num("gpu_ms", med_or_nan(rg)).num("gpu_min_ms", rg.min()).num("gpu_max_ms", rg.max());
    j.num("gpu_vs_floor", med_or_nan(rg) / floor_ms).num("target_gpu_vs_floor", 1.2);
    j.num("best_share", best_share).num("best_hybrid_ms", best_ms).num("best_hybrid_min_ms", best_min);
    j.num("best_hybrid_max_ms", best_max);
    j.num("best_single_ms", single).str("best_single", single == med_or_nan(rc) ? "cpu" : "gpu");
    j.num("hybrid_speedup", single / best_ms).num("target_hybrid_speedup", 1.5);
    line_end(ctx, j);
    emit(j);
  }
}

void case_out_of_core(Context& ctx) {
  const Options& opt = ctx.opt;
  const int64_t n = opt.ooc_n;
  const double need_gib = 12.0 * double(n) * double(n) / double(1ull << 30);
  const double avail = mem_available_gib();
  if (avail > 0 && need_gib + 2 > avail) {
    char why[160];
    std::snprintf(why, sizeof why, "n=%lld needs %.1f GiB of host operands, %.1f GiB available", (long long)n, need_gib,
                  avail);
    emit_case_skip(ctx, "out_of_core", why);
    return;
  }
  // A, B random; C poisoned with NaN: beta is 0, and an element the engine never writes must show in the check.
  Operands o(n, n, n, 1, false);
  std::fprintf(stderr, "out_of_core n=%lld: %.1f GiB filled in %.1f s\n", (long long)n, need_gib, o.fill_s);
  const int reps = opt.reps > 0 ? opt.reps : 1;
  Point pt{"out_of_core", {"engine", true, 0, {{"BLASOFFLOAD_DEVICE_MEMORY_LIMIT", opt.ooc_limit}}}, 1.0f, 0.0f, reps};
  // A full-size warm-up would double the case's time: the first call's pools are set up on the leading block, with
  // the same leading dimension and knobs.
  pt.warmup_sub_n = std::min<int64_t>(n, 8192);
  pt.check_timed = true;
  const Result r = measure(ctx, pt, o);
  emit_point(ctx, pt, o, r, [&](Json& j) { j.num("fill_s", o.fill_s).num("host_gib", need_gib); });
}

void case_multi_gpu(Context& ctx) {
  const Options& opt = ctx.opt;
  if (ctx.gpus.count < 2 && !opt.stand_in) {
    emit_case_skip(ctx, "multi_gpu", "the driver shows " + std::to_string(ctx.gpus.count) + " GPU(s): needs 2");
    return;
  }
  const int64_t n = opt.multi_n;
  Operands o(n, n, n, sets_for(12.0 * double(n) * double(n), opt.sets, 1), true);
  std::fprintf(stderr, "multi_gpu n=%lld: filled in %.1f s\n", (long long)n, o.fill_s);
  const int reps = opt.reps > 0 ? opt.reps : 3;
  const std::string first = opt.multi_devices.substr(0, opt.multi_devices.find(','));
  Point one{"multi_gpu", {"1gpu", true, 0, {{"BLASOFFLOAD_DEVICES", first}}}, 1.0f, 0.0f, reps};
  const Result r1 = measure(ctx, one, o);
  emit_point(ctx, one, o, r1);
  Point two{"multi_gpu", {"multi", true, 0, {{"BLASOFFLOAD_DEVICES", opt.multi_devices}}}, 1.0f, 0.0f, reps};
  const Result r2 = measure(ctx, two, o);
  emit_point(ctx, two, o, r2);
  Json j = line_start("multi_gpu", "summary");
  j.integer("m", n).integer("n", n).integer("k", n).str("devices", opt.multi_devices);
  j.num("one_ms", med_or_nan(r1)).num("one_min_ms", r1.min()).num("one_max_ms", r1.max());
  j.num("multi_ms", med_or_nan(r2)).num("multi_min_ms", r2.min()).num("multi_max_ms", r2.max());
  const int mr = r2.ok() ? r2.median_rep() : -1;
  if (mr >= 0 && r2.have_stats[size_t(mr)]) j.integer("multi_devices_used", r2.stats[size_t(mr)].devices);
  j.num("speedup", med_or_nan(r1) / med_or_nan(r2)).num("target_speedup", 1.7);
  line_end(ctx, j);
  emit(j);
}

}  // namespace bo_bench
