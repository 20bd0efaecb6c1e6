// blasoffload_bench_pipeline's output: the JSON lines of the context, of each measured point and of each skipped case,
// and a line on stderr as each point is done.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pipeline_bench.h"

extern char** environ;

namespace bo_bench {

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

void emit(const Json& j) {
  std::printf("%s\n", j.text().c_str());
  std::fflush(stdout);
}

namespace {

std::string stats_json(const bo_gemm_stats& s) {
  Json j;
  j.integer("path", s.path).integer("devices", s.devices).integer("tile_m", s.tile_m).integer("tile_n", s.tile_n);
  j.integer("k_passes", s.k_passes).integer("tiles", s.tiles).integer("tiles_cpu", s.tiles_cpu);
  j.integer("panel_uploads", s.panel_uploads).integer("n_cpu_cols", s.n_cpu_cols).integer("m_cpu_rows", s.m_cpu_rows);
  j.num("bytes_h2d", s.bytes_h2d).num("bytes_d2h", s.bytes_d2h).num("wall_ms", s.wall_ms);
  j.num("cpu_part_ms", s.cpu_part_ms).num("first_kernel_ms", s.first_kernel_ms).num("h2d_busy_ms", s.h2d_busy_ms);
  j.num("kernel_busy_ms", s.kernel_busy_ms).num("d2h_busy_ms", s.d2h_busy_ms).num("pack_ms", s.pack_ms);
  j.num("unpack_ms", s.unpack_ms);
  return j.text();
}

}  // namespace

Json line_start(const std::string& case_name, const std::string& variant) {
  Json j;
  j.str("case", case_name).str("variant", variant);
  return j;
}

void line_end(const Context& ctx, Json& j) {
  j.str("gpu", ctx.gpu).str("date", ctx.date).str("commit", ctx.commit);
  if (ctx.opt.stand_in) j.boolean("stand_in", true);
}

void emit_point(Context& ctx, const Point& pt, const Operands& o, const Result& r,
                const std::function<void(Json&)>& extra) {
  Json j = line_start(pt.case_name, pt.v.name);
  j.integer("m", o.m).integer("n", o.n).integer("k", o.k).str("ta", "N").str("tb", "N");
  j.num("alpha", pt.alpha).num("beta", pt.beta).num("cpu_share", pt.v.cpu_share).integer("sets", o.sets());
  if (!pt.v.env.empty()) {
    Json e;
    for (const auto& kv : pt.v.env) e.str(kv.first.c_str(), kv.second);
    j.raw("env", e.text());
  }
  if (pt.warmup_sub_n > 0) j.integer("warmup_n", pt.warmup_sub_n);
  j.num("warmup_ms", r.warmup_ms);
  if (!r.skipped.empty()) {
    j.str("skipped", r.skipped);
  } else if (r.status != BO_CUDA_OK) {
    j.integer("status", r.status).str("error", std::string("engine returned ") + status_name(r.status));
    ++ctx.failures;
  } else {
    const double med = r.median();
    j.integer("reps", int64_t(r.ms.size())).integer("reps_wanted", r.reps_wanted);
    j.num("median_ms", med).num("min_ms", r.min()).num("max_ms", r.max()).nums("times_ms", r.ms);
    j.num("gflops", flops(o) / (med * 1e6)).num("gflops_best", flops(o) / (r.min() * 1e6));
    if (pt.v.engine) j.integer("cpu_sgemm_calls", r.cpu_calls);
    const int mr = r.median_rep();
    if (mr >= 0 && r.have_stats[size_t(mr)]) {
      const bo_gemm_stats& s = r.stats[size_t(mr)];
      j.raw("stats", stats_json(s));
      // Busy rates: the link while it moved data; wall rates: what the call as a whole achieved.
      j.num("h2d_gbs", s.h2d_busy_ms > 0 ? s.bytes_h2d / (s.h2d_busy_ms * 1e6) : NAN);
      j.num("d2h_gbs", s.d2h_busy_ms > 0 ? s.bytes_d2h / (s.d2h_busy_ms * 1e6) : NAN);
      j.num("h2d_wall_gbs", s.bytes_h2d / (med * 1e6)).num("d2h_wall_gbs", s.bytes_d2h / (med * 1e6));
    }
    if (r.check.done) {
      Json c;
      c.num("rel_err", r.check.rel_err).num("bound", r.check.bound).boolean("pass", r.check.pass);
      c.num("ms", r.check.ms);
      j.raw("check", c.text());
      if (!r.check.pass) {
        ++ctx.failures;
        std::fprintf(stderr,
                     "blasoffload_bench_pipeline: CHECK FAILED: %s %s m=%lld n=%lld k=%lld beta=%g: "
                     "relative error %.3g > %.3g\n",
                     pt.case_name.c_str(), pt.v.name.c_str(), (long long)o.m, (long long)o.n, (long long)o.k,
                     double(pt.beta), r.check.rel_err, r.check.bound);
      }
    }
  }
  if (extra) extra(j);
  line_end(ctx, j);
  emit(j);
  std::string said;
  if (!r.skipped.empty())
    said = r.skipped;
  else if (r.status != BO_CUDA_OK)
    said = status_name(r.status);
  else
    said = std::to_string(r.median()) + " ms median of " + std::to_string(r.ms.size()) +
           (r.check.done ? (r.check.pass ? ", check ok" : ", CHECK FAILED") : "");
  std::fprintf(stderr, "  %-12s %-14s m=%-6lld n=%-6lld k=%-6lld beta=%g share=%.2f: %s\n", pt.case_name.c_str(),
               pt.v.name.c_str(), (long long)o.m, (long long)o.n, (long long)o.k, double(pt.beta), pt.v.cpu_share,
               said.c_str());
}

void emit_case_skip(Context& ctx, const std::string& case_name, const std::string& why) {
  Json j = line_start(case_name, "case");
  j.str("skipped", why);
  line_end(ctx, j);
  emit(j);
  std::fprintf(stderr, "  %s: skipped: %s\n", case_name.c_str(), why.c_str());
}

double med_or_nan(const Result& r) { return r.ok() ? r.median() : NAN; }

void emit_context(const Context& ctx, const CpuBlas& cpu) {
  Json c;
  c.str("program", "blasoffload_bench_pipeline").str("args", ctx.opt.args);
  std::string cases;
  for (const auto& s : ctx.opt.cases) cases += (cases.empty() ? "" : ",") + s;
  c.str("cases", cases).str("gpu", ctx.gpu).integer("gpu_count", ctx.gpus.count);
  std::string names = "[";
  for (size_t i = 0; i < ctx.gpus.names.size(); ++i) {
    char mem[32];
    std::snprintf(mem, sizeof mem, "%.1f", ctx.gpus.memory_gib[i]);
    names += std::string(i ? ", " : "") + "\"" + json_escape(ctx.gpus.names[i]) + " (" + mem + " GiB)\"";
  }
  c.raw("gpus", names + "]").integer("driver_version", ctx.gpus.driver_version);
  if (!ctx.gpus.error.empty()) c.str("gpu_error", ctx.gpus.error);
  c.str("module", ctx.module.mod && ctx.module.init_status == BO_CUDA_OK ? ctx.module.mod->name : "");
  c.str("module_path", ctx.module.path);
  if (!ctx.module.error.empty()) c.str("module_error", ctx.module.error);
  c.str("cpu_blas", cpu.path);
  if (!cpu.error.empty()) c.str("cpu_blas_error", cpu.error);
  c.str("openblas_corename", cpu.corename ? cpu.corename() : "");
  c.str("openblas_config", cpu.config ? cpu.config() : "");
  c.integer("openblas_threads", cpu.get_threads ? cpu.get_threads() : 0);
  c.str("OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "(unset)"));
  c.str("OPENBLAS_NUM_THREADS", env_or("OPENBLAS_NUM_THREADS", "(unset)"));
  Json env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("BLASOFFLOAD_", 0) == 0 || kv.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) {
      const size_t eq = kv.find('=');
      env.str(kv.substr(0, eq).c_str(), kv.substr(eq + 1));
    }
  }
  c.raw("env", env.text());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  c.str("host", host).integer("cores", hw_threads()).num("mem_available_gib", mem_available_gib());
  c.str("date", ctx.date).str("commit", ctx.commit).num("budget_s", ctx.opt.budget_s);
  c.boolean("check", ctx.opt.check).boolean("stand_in", ctx.opt.stand_in);
  Json j;
  j.raw("context", c.text());
  emit(j);
}

}  // namespace bo_bench
