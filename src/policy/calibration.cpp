// The policy file: schema, validation, interpolation and the choice between a file and the defaults.
#include "policy/calibration.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "policy/calibration_checks.h"
#include "policy/shape_classes.h"

namespace blasoffload::policy {
namespace {

using nlohmann::json;
constexpr const char* kPrefix = "policy: ";

bool fail(std::string* e, const std::string& field, const std::string& what) {
  *e = field + ": " + what;
  return false;
}

bool get_number(const json& j, const char* key, double* out, std::string* e, const std::string& where) {
  if (!j.contains(key)) return fail(e, where + key, "missing");
  if (!j[key].is_number()) return fail(e, where + key, "expected a number");
  *out = j[key].get<double>();
  if (!std::isfinite(*out) || *out < 0) return fail(e, where + key, "expected a finite value >= 0");
  return true;
}

}  // namespace

const std::vector<std::string>& calibration_classes() { return class_names(); }

bool measured_by_calibrate(const std::string& cls) {
  static const char* const kPart2[] = {"geqrf", "orgqr", "ormqr", "gels",  "syevd", "syev",
                                       "syevr", "gesvd", "gesdd", "getri", "potri"};
  if (cls.empty() || cls[0] == 'c' || cls[0] == 'z') return false;  // complex: derived from the real classes
  const std::string base = cls.substr(1, cls.find('.') == std::string::npos ? std::string::npos : cls.find('.') - 1);
  for (const char* p : kPart2)
    if (base == p) return false;
  return true;
}

namespace {
// A narrow block of right-hand sides (64) against a wide one (256) at the same flops, on the lent machine's OpenBLAS:
// 0.31-0.70 at the orders both were measured at (bench/results/mix/calibrate-*-7f22406-*.log); the middle.
constexpr double kNarrowOfWide = 0.5;
// A trsm with 64 right-hand sides against a square one at the same flops on the lent machine's OpenBLAS: dtrsm
// m = 8192, n = 64 at about 110 GFLOP/s (the first-run benchmark's dpotrs calls), square dtrsm 300-370 measured
// (bench/results/policy, 14927f1).
constexpr double kNarrowTrsmOfSquare = 0.3;

// Adds `cls` from `from` at `factor` times its rates when the file lacks `cls` and has `from`.
bool derive(Calibration* c, const std::string& cls, const std::string& from, double factor) {
  auto have = c->cpu_rates.find(cls);
  if (have != c->cpu_rates.end() && !have->second.empty()) return false;
  auto src = c->cpu_rates.find(from);
  if (src == c->cpu_rates.end() || src->second.empty()) return false;  // the built-in curve applies (CostModel)
  std::vector<RatePoint> pts = src->second;
  for (RatePoint& p : pts) p.rate *= factor;
  c->cpu_rates[cls] = std::move(pts);
  return true;
}
}  // namespace

std::vector<std::string> derive_missing_classes(Calibration* c) {
  std::vector<std::string> derived;
  // Level 3 beyond gemm, within one precision: trsm as gemm.panel at half the rate, syrk as gemm.square.
  auto level3 = [&](const std::string& p) {
    if (derive(c, p + "trsm", p + "gemm.panel", 0.5)) derived.push_back(p + "trsm");
    if (derive(c, p + "trsm.narrow", p + "trsm", kNarrowTrsmOfSquare)) derived.push_back(p + "trsm.narrow");
    if (derive(c, p + "syrk", p + "gemm.square", 1.0)) derived.push_back(p + "syrk");
  };
  // LAPACK, within one precision, where the file has no measurement: the factorizations at a fraction of gemm.square
  // (a well-configured CPU LAPACK reaches 0.3-0.45 of its gemm rate at n = 16384; the higher figure keeps the CPU
  // looking strong, so that the GPU must win clearly), the solves as trsv (few right-hand sides) or trsm (many), a
  // narrow block of them at kNarrowOfWide of the wide block's rate (a file from before the narrow classes has these).
  auto lapack = [&](const std::string& p) {
    for (const char* f : {"getrf", "gesv"})
      if (derive(c, p + f, p + "gemm.square", 0.5)) derived.push_back(p + f);
    for (const char* f : {"potrf", "posv"})
      if (derive(c, p + f, p + "gemm.square", 0.45)) derived.push_back(p + f);
    for (const char* f : {"getrs", "potrs", "trtrs"}) {
      if (derive(c, p + f + ".vec", p + "trsv.n", 1.0)) derived.push_back(p + f + ".vec");
      if (derive(c, p + f + ".mat", p + "trsm", 1.0)) derived.push_back(p + f + ".mat");
      if (derive(c, p + f + ".narrow", p + f + ".mat", kNarrowOfWide)) derived.push_back(p + f + ".narrow");
    }
  };
  level3("s");
  // Double precision from single: the same bytes per second where the class is bytes (Level 1 and 2 stream memory),
  // half the flops where it is flops (a CPU's FP64 SIMD peak is half its FP32 one).
  for (int i = 0; i < class_count(); ++i) {
    const std::string name = class_name(i);
    if (name[0] != 'd') continue;
    if (derive(c, name, "s" + name.substr(1), class_by_bytes(i) ? 1.0 : 0.5)) derived.push_back(name);
  }
  level3("d");
  lapack("s");
  lapack("d");
  // Complex from real, c from s and z from d, at the same rates: the flops classes count real flops (four per
  // complex multiply-add), at which a CPU BLAS runs its complex kernels about as fast as its real ones, and bytes
  // stream at the same speed; herk as the complex syrk.
  for (int i = 0; i < class_count(); ++i) {
    const std::string name = class_name(i);
    if (name[0] != 'c' && name[0] != 'z') continue;
    const std::string real = std::string(name[0] == 'c' ? "s" : "d") + name.substr(1);
    if (derive(c, name, real, 1.0)) derived.push_back(name);
  }
  for (const char* p : {"c", "z"})
    if (derive(c, std::string(p) + "herk", std::string(p) + "syrk", 1.0)) derived.push_back(std::string(p) + "herk");
  // The complex routines of LAPACK part 2 with names of their own, as their real counterparts (c from s, z from d).
  static const char* const kComplexOf[][2] = {
      {"ungqr", "orgqr"},       {"unmqr", "ormqr"},       {"heevd.vec", "syevd.vec"}, {"heevd.val", "syevd.val"},
      {"heev.vec", "syev.vec"}, {"heev.val", "syev.val"}, {"heevr.vec", "syevr.vec"}, {"heevr.val", "syevr.val"}};
  for (const auto& cr : kComplexOf)
    for (const char* p : {"cs", "zd"})
      if (derive(c, p[0] + std::string(cr[0]), p[1] + std::string(cr[1]), 1.0))
        derived.push_back(p[0] + std::string(cr[0]));
  return derived;
}

double Calibration::rate(const std::string& cls, double size) const {
  auto it = cpu_rates.find(cls);
  if (it == cpu_rates.end() || it->second.empty()) return 0;
  const auto& p = it->second;
  if (size <= p.front().size) return p.front().rate;
  if (size >= p.back().size) return p.back().rate;
  for (size_t i = 1; i < p.size(); ++i)
    if (size <= p[i].size) {
      const double t = std::log(size / p[i - 1].size) / std::log(p[i].size / p[i - 1].size);
      return std::exp(std::log(p[i - 1].rate) + t * (std::log(p[i].rate) - std::log(p[i - 1].rate)));
    }
  return p.back().rate;
}

bool parse_calibration(const std::string& text, Calibration* out, std::string* e) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return fail(e, "(file)", "not valid JSON");
  if (!j.is_object()) return fail(e, "(file)", "expected an object");
  if (!j.contains("schema") || j["schema"] != kCalibrationSchema)
    return fail(e, "schema", std::string("expected \"") + kCalibrationSchema + "\"");
  Calibration c;
  if (!j.contains("cpu") || !j["cpu"].is_object()) return fail(e, "cpu", "missing");
  const json& cpu = j["cpu"];
  if (!cpu.contains("library") || !cpu["library"].is_string() || cpu["library"].get<std::string>().empty())
    return fail(e, "cpu.library", "expected a non-empty string");
  c.cpu.library = cpu["library"];
  c.cpu.report = cpu.value("report", "");
  c.created = j.value("created", "");
  c.tool = j.value("tool", "");
  if (!cpu.contains("rates") || !cpu["rates"].is_object()) return fail(e, "cpu.rates", "missing");
  for (auto& [cls, pts] : cpu["rates"].items()) {
    const std::string where = "cpu.rates." + cls;
    if (!pts.is_array() || pts.empty()) return fail(e, where, "expected a non-empty array");
    std::vector<RatePoint> v;
    for (size_t i = 0; i < pts.size(); ++i) {
      if (!pts[i].is_array() || pts[i].size() != 2 || !pts[i][0].is_number() || !pts[i][1].is_number())
        return fail(e, where + "[" + std::to_string(i) + "]", "expected [size, rate]");
      RatePoint r{pts[i][0].get<double>(), pts[i][1].get<double>()};
      if (!(r.size > 0) || !(r.rate > 0) || !std::isfinite(r.size) || !std::isfinite(r.rate))
        return fail(e, where + "[" + std::to_string(i) + "]", "size and rate must be finite and > 0");
      if (!v.empty() && !(r.size > v.back().size)) return fail(e, where, "sizes must ascend");
      v.push_back(r);
    }
    c.cpu_rates[cls] = v;
  }
  if (j.contains("gpu") && !j["gpu"].is_null()) {
    const json& g = j["gpu"];
    if (!g.is_object() || !g.contains("name") || !g["name"].is_string())
      return fail(e, "gpu.name", "expected a string");
    c.gpu = g["name"];
    if (!get_number(g, "h2d_gbs", &c.h2d_gbs, e, "gpu.") || !get_number(g, "d2h_gbs", &c.d2h_gbs, e, "gpu.") ||
        !get_number(g, "pageable_gbs", &c.pageable_gbs, e, "gpu.") ||
        !get_number(g, "call_overhead_us", &c.call_overhead_us, e, "gpu.") ||
        !get_number(g, "init_ms", &c.init_ms, e, "gpu."))
      return false;
    // Optional (files from before it was measured price every copy into call_overhead_us).
    if (g.contains("copy_latency_us") && !get_number(g, "copy_latency_us", &c.copy_latency_us, e, "gpu.")) return false;
  }
  *out = std::move(c);
  return true;
}

std::string calibration_to_json(const Calibration& c) {
  nlohmann::ordered_json j;
  j["schema"] = kCalibrationSchema;
  j["created"] = c.created;
  j["tool"] = c.tool;
  nlohmann::ordered_json rates = nlohmann::ordered_json::object();
  for (const auto& cls : calibration_classes()) {
    auto it = c.cpu_rates.find(cls);
    if (it == c.cpu_rates.end()) continue;
    nlohmann::ordered_json pts = nlohmann::ordered_json::array();
    for (const RatePoint& p : it->second) pts.push_back({p.size, p.rate});
    rates[cls] = pts;
  }
  for (const auto& [cls, pts] : c.cpu_rates)  // classes a newer tool added
    if (!rates.contains(cls)) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const RatePoint& p : pts) a.push_back({p.size, p.rate});
      rates[cls] = a;
    }
  j["cpu"] = {{"library", c.cpu.library}, {"report", c.cpu.report}, {"rates", rates}};
  if (c.gpu.empty())
    j["gpu"] = nullptr;
  else
    j["gpu"] = {{"name", c.gpu},
                {"h2d_gbs", c.h2d_gbs},
                {"d2h_gbs", c.d2h_gbs},
                {"pageable_gbs", c.pageable_gbs},
                {"call_overhead_us", c.call_overhead_us},
                {"copy_latency_us", c.copy_latency_us},
                {"init_ms", c.init_ms}};
  return j.dump(2) + "\n";
}

bool save_calibration(const std::string& path, const Calibration& c, std::string* e) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    if (!f) return fail(e, path, "cannot write");
    f << calibration_to_json(c);
    if (!f) return fail(e, path, "write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return fail(e, path, "cannot rename into place");
  }
  return true;
}

namespace {
Calibration make_built_in_defaults() {
  Calibration c;
  c.cpu.library = "(built-in defaults)";
  c.tool = "built-in";
  // Conservative both ways, so that an uncalibrated machine offloads only what wins by a wide margin: the CPU
  // is a strong one (a 16-core AVX-512 server with a well-configured OpenBLAS: the lent machine's measured
  // rates), the GPU sits behind a slow link (PCIe 4 pinned rates, single-threaded staging) and is slow to start.
  c.cpu_rates["sgemm.square"] = {{5e5, 50}, {3.4e7, 400}, {2.1e9, 880}, {1.4e11, 1200}};
  c.cpu_rates["sgemm.rank_k"] = {{5e5, 40}, {3.4e7, 300}, {2.1e9, 700}, {1.4e11, 950}};
  c.cpu_rates["sgemm.panel"] = {{5e5, 40}, {3.4e7, 300}, {2.1e9, 700}, {1.4e11, 950}};
  c.cpu_rates["sgemv.n"] = {{4e3, 2}, {4e6, 150}, {2.7e8, 110}};
  c.cpu_rates["sgemv.t"] = {{4e3, 2}, {4e6, 150}, {2.7e8, 100}};
  c.cpu_rates["strsv.n"] = {{4e3, 1}, {3.3e7, 26}, {5.4e8, 18}};
  c.cpu_rates["strsv.t"] = {{4e3, 1}, {3.3e7, 26}, {5.4e8, 18}};
  c.cpu_rates["snrm2"] = {{4e3, 2}, {4e7, 11.6}};
  // The CPU LAPACK, measured: the fastest of ten calibrations of the lent machines' OpenBLAS (its own LAPACK, 16
  // threads; bench/results/mix/policy-*.json), by point. Deriving them from gemm.square, as for a file without them,
  // would take the small factorizations for 6-10x faster than they run (sgetrf n = 256: 10-12 GFLOP/s measured, 115
  // derived), past the 4x that learning may correct, and keep them on the CPU where the GPU takes half their time;
  // sizes as blasoffload-calibrate measures them (flops; bytes for the solves with few right-hand sides). Those with 64
  // right-hand sides (.narrow) and the wide ones' points past n = 2048 (.mat) are the fastest of the two calibrations
  // of 7f22406 (bench/results/mix/calibrate-*-7f22406-*.log; the second ended before double precision at n = 8192)
  // and, for .narrow at n = 8192, of the CPU alone's three rounds in the mix at 8eb5988 (nrhs 64: dtrtrs 40.7 ms there,
  // 65 ms in the one calibration).
  c.cpu_rates["sgetrf"] = {{1.4e6, 19.7}, {1.12e7, 11.8}, {8.95e7, 39.4},   {7.16e8, 112},
                           {5.73e9, 329}, {4.58e10, 774}, {3.67e11, 1.07e3}};
  c.cpu_rates["sgesv"] = {{1.13e7, 12.6}, {7.18e8, 108}, {4.58e10, 671}};
  c.cpu_rates["spotrf"] = {{6.99e5, 3.54}, {5.59e6, 11.7}, {4.47e7, 35.2},   {3.58e8, 106},
                           {2.86e9, 267},  {2.29e10, 617}, {1.83e11, 1.09e3}};
  c.cpu_rates["sposv"] = {{5.72e6, 9.42}, {3.6e8, 82.1}, {2.29e10, 463}};
  c.cpu_rates["sgetrs.vec"] = {{2.62e5, 27.6}, {4.19e6, 25.8}, {6.71e7, 26.5}, {2.68e8, 17.7}};
  c.cpu_rates["sgetrs.narrow"] = {{3.36e7, 101}, {5.37e8, 118}, {8.59e9, 115}};
  c.cpu_rates["sgetrs.mat"] = {{1.34e8, 256}, {2.15e9, 396}, {3.44e10, 367}};
  c.cpu_rates["spotrs.vec"] = {{2.62e5, 8.82}, {4.19e6, 8.76}, {6.71e7, 8.46}, {2.68e8, 4.65}};
  c.cpu_rates["spotrs.narrow"] = {{3.36e7, 99.3}, {5.37e8, 114}, {8.59e9, 125}};
  c.cpu_rates["spotrs.mat"] = {{1.34e8, 289}, {2.15e9, 397}, {3.44e10, 402}};
  c.cpu_rates["strtrs.vec"] = {{1.31e5, 28.4}, {2.1e6, 35.7}, {3.36e7, 26.1}, {1.34e8, 20}};
  c.cpu_rates["strtrs.narrow"] = {{1.68e7, 106}, {2.68e8, 125}, {4.29e9, 113}};
  c.cpu_rates["strtrs.mat"] = {{6.71e7, 293}, {1.07e9, 399}, {1.72e10, 369}};
  c.cpu_rates["dgetrf"] = {{1.4e6, 2.28}, {1.12e7, 8.38}, {8.95e7, 30.4}, {7.16e8, 93.7},
                           {5.73e9, 255}, {4.58e10, 429}, {3.67e11, 660}};
  c.cpu_rates["dgesv"] = {{1.13e7, 8.24}, {7.18e8, 87.4}, {4.58e10, 439}};
  c.cpu_rates["dpotrf"] = {{6.99e5, 5.01}, {5.59e6, 15},   {4.47e7, 43.2}, {3.58e8, 97.6},
                           {2.86e9, 214},  {2.29e10, 361}, {1.83e11, 460}};
  c.cpu_rates["dposv"] = {{5.72e6, 13.4}, {3.6e8, 81.1}, {2.29e10, 313}};
  c.cpu_rates["dgetrs.vec"] = {{5.24e5, 35.7}, {8.39e6, 25.6}, {1.34e8, 18}, {5.37e8, 17.5}};
  c.cpu_rates["dgetrs.narrow"] = {{3.36e7, 72.4}, {5.37e8, 95.6}, {8.59e9, 115}};
  c.cpu_rates["dgetrs.mat"] = {{1.34e8, 161}, {2.15e9, 303}, {3.44e10, 209}};
  c.cpu_rates["dpotrs.vec"] = {{5.24e5, 15.6}, {8.39e6, 13.8}, {1.34e8, 11.6}, {5.37e8, 9.2}};
  c.cpu_rates["dpotrs.narrow"] = {{3.36e7, 77.1}, {5.37e8, 92.5}, {8.59e9, 91.3}};
  c.cpu_rates["dpotrs.mat"] = {{1.34e8, 168}, {2.15e9, 295}, {3.44e10, 222}};
  c.cpu_rates["dtrtrs.vec"] = {{2.62e5, 36.7}, {4.19e6, 32.4}, {6.71e7, 25}, {2.68e8, 18.2}};
  c.cpu_rates["dtrtrs.narrow"] = {{1.68e7, 72.7}, {2.68e8, 86.2}, {4.29e9, 106}};
  c.cpu_rates["dtrtrs.mat"] = {{6.71e7, 165}, {1.07e9, 317}, {1.72e10, 221}};
  // Square trsm and syrk as measured there (tests/policy/data/h100-openblas.json): derived from gemm.panel at half its
  // rate, dtrsm n = 4096 was predicted at 305 ms where it took 125-150.
  c.cpu_rates["strsm"] = {{2.1e6, 70.5}, {1.68e7, 141}, {1.34e8, 302}, {1.07e9, 509}, {8.59e9, 707}};
  c.cpu_rates["dtrsm"] = {{2.1e6, 75.8}, {1.68e7, 104}, {1.34e8, 163}, {1.07e9, 307}, {8.59e9, 366}};
  c.cpu_rates["ssyrk"] = {{2.1e6, 49.5}, {1.68e7, 263}, {1.34e8, 501}, {1.07e9, 549}, {8.59e9, 894}};
  c.cpu_rates["dsyrk"] = {{2.1e6, 49.4}, {1.68e7, 143}, {1.34e8, 249}, {1.07e9, 305}, {8.59e9, 463}};
  // LAPACK part 2, from OpenBLAS 0.3.21's own LAPACK on the lent machine (16 threads, SkylakeX; flops by the
  // descriptors' counts): dgeqrf n = 4096 / 8192 0.68 / 4.74 s, sgeqrf n = 16384 about 28 s; ?gels 65536 x 1024
  // 1.08 (s) / 1.59 s (d); dsyevd with vectors n = 2048 / 4096 / 8192 0.51 / 2.93 / 20.8 s, ssyevd 0.34 / 1.73 /
  // 10.4 s; dgesdd with vectors n = 2048 / 4096 1.42 / 8.02 s, sgesdd 1.03 / 5.32 s. Below those sizes, and for the
  // routines not measured there (orgqr, ormqr, the eigenvalues or singular values alone, getri, potri), the rates
  // are set high (a strong CPU), so that an uncalibrated machine offloads them only where the GPU wins clearly; the
  // CPU-only variants of syev and gesvd share syevd's and gesdd's, faster than their own. blasoffload-calibrate does
  // not measure these classes yet: a policy file has the built-in curves for them.
  for (const char* qr : {"geqrf", "orgqr"}) {
    c.cpu_rates[std::string("s") + qr] = {{1e6, 12}, {2.2e7, 40}, {1.4e9, 150}, {9.2e10, 260}, {5.9e12, 320}};
    c.cpu_rates[std::string("d") + qr] = {{1e6, 8}, {2.2e7, 25}, {1.4e9, 90}, {9.2e10, 150}, {7.3e11, 170}};
  }
  c.cpu_rates["sormqr"] = {{1e6, 20}, {2.2e7, 80}, {1.4e9, 300}, {9e10, 600}, {7e11, 700}};
  c.cpu_rates["dormqr"] = {{1e6, 10}, {2.2e7, 40}, {1.4e9, 150}, {9e10, 300}, {7e11, 350}};
  c.cpu_rates["sgels"] = {{1e6, 12}, {2.2e7, 40}, {1.4e9, 120}, {1.4e11, 170}};
  c.cpu_rates["dgels"] = {{1e6, 8}, {2.2e7, 25}, {1.4e9, 80}, {1.4e11, 110}};
  for (const char* ev : {"syevd", "syev", "syevr"}) {
    const std::string e = ev;
    c.cpu_rates["s" + e + ".vec"] = {{1.9e7, 20}, {1.2e9, 110}, {7.7e10, 250}, {6.2e11, 380}, {4.95e12, 500}};
    c.cpu_rates["d" + e + ".vec"] = {{1.9e7, 15}, {1.2e9, 80}, {7.7e10, 170}, {6.2e11, 230}, {4.95e12, 260}};
    c.cpu_rates["s" + e + ".val"] = {{2.8e6, 8}, {1.8e8, 50}, {1.15e10, 130}, {9.2e10, 180}, {7.4e11, 200}};
    c.cpu_rates["d" + e + ".val"] = {{2.8e6, 5}, {1.8e8, 30}, {1.15e10, 80}, {9.2e10, 110}, {7.4e11, 120}};
  }
  for (const char* sv : {"gesdd", "gesvd"}) {
    const std::string v = sv;
    c.cpu_rates["s" + v + ".vec"] = {{4e7, 16}, {2.6e9, 70}, {1.7e11, 180}, {1.35e12, 270}};
    c.cpu_rates["d" + v + ".vec"] = {{4e7, 12}, {2.6e9, 50}, {1.7e11, 130}, {1.35e12, 180}};
    c.cpu_rates["s" + v + ".val"] = {{5.6e6, 8}, {3.6e8, 50}, {2.3e10, 110}, {1.8e11, 160}};
    c.cpu_rates["d" + v + ".val"] = {{5.6e6, 5}, {3.6e8, 30}, {2.3e10, 70}, {1.8e11, 100}};
  }
  c.cpu_rates["sgetri"] = c.cpu_rates["sgetrf"];
  c.cpu_rates["dgetri"] = c.cpu_rates["dgetrf"];
  c.cpu_rates["spotri"] = c.cpu_rates["spotrf"];
  c.cpu_rates["dpotri"] = c.cpu_rates["dpotrf"];
  derive_missing_classes(&c);  // narrow trsm and double precision from the curves above, as for an older file
  c.gpu = "(built-in defaults)";
  c.h2d_gbs = 20;
  c.d2h_gbs = 20;
  c.pageable_gbs = 8;
  c.call_overhead_us = 30;
  c.copy_latency_us = 5;
  c.init_ms = 500;
  return c;
}
}  // namespace

// Built once: a process start read it two or three times (the policy, the cost model, the file's check), each time
// building every curve again.
const Calibration& built_in_defaults() {
  static const Calibration c = make_built_in_defaults();
  return c;
}

namespace {
// The same library reached through different names (symlinks, Debian's alternatives) is the same library.
bool same_cpu(const CpuIdentity& a, const CpuIdentity& b) {
  if (a.report != b.report) return false;
  if (a.library == b.library) return true;
  char ra[PATH_MAX], rb[PATH_MAX];
  return realpath(a.library.c_str(), ra) && realpath(b.library.c_str(), rb) && std::strcmp(ra, rb) == 0;
}
}  // namespace

CalibrationChoice choose_calibration(const std::string& path, bool path_explicit, const CpuIdentity& current) {
  CalibrationChoice r;
  r.calibration = built_in_defaults();
  if (path.empty()) {
    r.message = std::string(kPrefix) + "built-in defaults (no policy file configured)";
    return r;
  }
  std::ifstream f(path);
  if (!f) {
    r.message = std::string(kPrefix) + "built-in defaults (no policy file at " + path + "; run blasoffload-calibrate)";
    if (path_explicit)
      r.warnings.push_back(std::string(kPrefix) + "BLASOFFLOAD_POLICY_FILE=" + path + " does not exist");
    return r;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  Calibration c;
  std::string err;
  if (!parse_calibration(ss.str(), &c, &err)) {
    r.warnings.push_back(std::string(kPrefix) + "ignoring corrupt " + path + ": " + err);
    r.message = std::string(kPrefix) + "built-in defaults (" + path + " is corrupt)";
    return r;
  }
  if (!same_cpu(c.cpu, current)) {
    // At the default path this is no mistake of the user's: one machine, one default file, and programs using two
    // CPU BLAS libraries (auto-calibration measures whichever ran last). The summary says it; a named file warns.
    if (path_explicit)
      r.warnings.push_back(std::string(kPrefix) + "ignoring " + path + ": it was measured with " + c.cpu.library +
                           (c.cpu.report.empty() ? "" : " [" + c.cpu.report + "]") + ", this run uses " +
                           current.library + (current.report.empty() ? "" : " [" + current.report + "]") +
                           "; run blasoffload-calibrate again");
    r.message = std::string(kPrefix) + "built-in defaults (" + path + " is for another CPU BLAS)";
    return r;
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) r.age_days = std::max(0.0, double(std::time(nullptr) - st.st_mtime) / 86400.0);
  const std::vector<Rejection> rejected = reject_inconsistent(&c);
  for (const Rejection& x : rejected) r.rejected.push_back(describe(x));
  if (!rejected.empty())
    r.warnings.push_back(
        std::string(kPrefix) + "rejected " + std::to_string(rejected.size()) + " rate" +
        (rejected.size() > 1 ? "s" : "") + " of " + path +
        " as inconsistent with its others (measured while the machine was busy?), first: " + r.rejected.front() +
        "; derived or built-in rates are used instead. blasoffload-info lists them; run "
        "blasoffload-calibrate again on an idle machine");
  const std::vector<std::string> derived = derive_missing_classes(&c);
  // Classes blasoffload-calibrate does not measure (LAPACK part 2: geqrf ... potri) keep the built-in curves.
  for (const auto& cls : calibration_classes())
    if (!measured_by_calibrate(cls) && !c.cpu_rates.count(cls)) c.cpu_rates[cls] = r.calibration.cpu_rates[cls];
  r.from_file = true;
  r.calibration = std::move(c);
  r.message = std::string(kPrefix) + path + " (measured " + r.calibration.created + ")";
  if (!rejected.empty()) r.message += "; " + std::to_string(rejected.size()) + " inconsistent rates rejected";
  if (!derived.empty()) {
    std::string names;
    for (const std::string& d : derived) names += (names.empty() ? "" : ", ") + d;
    r.message +=
        "; CPU rates of " + names +
        " derived from its other rates (the file lacks them, or they were rejected: trsm at half gemm.panel, syrk as "
        "gemm.square, double precision as single at half the flops or the same bytes per second, LAPACK's "
        "factorizations at 0.45-0.5 of gemm.square and its solves as trsv or trsm; run "
        "blasoffload-calibrate to measure them)";
  }
  return r;
}

}  // namespace blasoffload::policy
