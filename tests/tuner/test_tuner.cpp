// CPU-side tests of the tuner: the parameter spaces (enumeration, constraints, pruning, names), the tuning
// grids, and that the CUDA module compiles exactly the spaces' compiled points (no GPU needed: the kernel
// registry is plain data until a kernel is launched).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "grids.h"
#include "kernels/registry.h"
#include "kernels/spaces.h"
#include "offload/cuda_module_api.h"
#include "tuning/keys.h"

namespace {

using bok::space::Verdict;

// A space's verdict as a callable of (point, why) (the single-precision verdicts take the element size as a third,
// defaulted, argument).
#define VERDICT(f) [](const auto& p, const char** w) { return bok::space::f(p, w); }

template <int D, class V>
std::set<std::string> compiled(const bok::space::Space<D>& sp, V verdict) {
  std::set<std::string> s;
  for (int i = 0; i < sp.size(); ++i) {
    const auto p = sp.point(i);
    if (verdict(p, nullptr) == Verdict::kCompiled) s.insert(bok::space::family_name(sp.family, p.data(), D));
  }
  return s;
}

TEST(Spaces, EnumerationIsTheFullProduct) {
  EXPECT_EQ(bok::space::kSnrm2.size(), 4 * 4 * 2);
  EXPECT_EQ(bok::space::kSgemvN.size(), 4 * 4 * 3 * 2);
  EXPECT_EQ(bok::space::kSgemvT.size(), 5 * 4);
  EXPECT_EQ(bok::space::kStrsv.size(), 3 * 4);
  EXPECT_EQ(bok::space::kSgemmWarp.size(), 3 * 3 * 3 * 2 * 2 * 2 * 3 * 3);
  // Mixed radix, last axis fastest; every point distinct.
  std::set<std::array<int, 8>> seen;
  for (int i = 0; i < bok::space::kSgemmWarp.size(); ++i) seen.insert(bok::space::kSgemmWarp.point(i));
  EXPECT_EQ(int(seen.size()), bok::space::kSgemmWarp.size());
  EXPECT_EQ(bok::space::kSnrm2.point(0), (std::array<int, 3>{128, 1, 1}));
  EXPECT_EQ(bok::space::kSnrm2.point(1), (std::array<int, 3>{128, 1, 4}));
  EXPECT_EQ(bok::space::kSnrm2.point(31), (std::array<int, 3>{1024, 8, 4}));
  EXPECT_EQ(bok::space::kDnrm2.size(), 4 * 4 * 2);
  EXPECT_EQ(bok::space::kDgemmWarp.size(), bok::space::kSgemmWarp.size());
}

TEST(Spaces, HardwareConstraintsReject) {
  using bok::space::sgemm_warp_verdict;
  using bok::space::strsv_verdict;
  // 32 lanes must tile the warp tile exactly.
  EXPECT_EQ(sgemm_warp_verdict({128, 128, 16, 64, 32, 8, 4, 3}), Verdict::kInvalid);
  // Over 1024 threads.
  EXPECT_EQ(sgemm_warp_verdict({256, 256, 16, 32, 32, 4, 8, 3}), Verdict::kInvalid);
  // Shared memory: 4 stages x 32 x (256 + 256) floats = 256 KB > 227 KB.
  EXPECT_EQ(sgemm_warp_verdict({256, 256, 32, 64, 64, 8, 16, 4}), Verdict::kInvalid);
  // strsv: NB 32 has no vector width; 128 rows on 4 warps need 256 registers of tiles.
  EXPECT_EQ(strsv_verdict({32, 128}), Verdict::kInvalid);
  EXPECT_EQ(strsv_verdict({128, 128}), Verdict::kInvalid);
  EXPECT_EQ(strsv_verdict({128, 256}), Verdict::kCompiled);
  // Double: 16-byte loads are 2 elements (NB 128 would need 4), the tiles take twice the registers, and shared
  // memory doubles.
  EXPECT_EQ(bok::space::dtrsv_verdict({128, 256}), Verdict::kInvalid);
  EXPECT_EQ(bok::space::dtrsv_verdict({64, 128}), Verdict::kCompiled);
  EXPECT_EQ(bok::space::dnrm2_verdict({256, 4, 4}), Verdict::kInvalid);
  EXPECT_EQ(bok::space::dgemv_n_verdict({32, 8, 4, 4}), Verdict::kInvalid);
  EXPECT_EQ(bok::space::dgemm_warp_verdict({256, 128, 16, 64, 64, 8, 16, 3}), Verdict::kInvalid);  // 8 x 16 doubles
  EXPECT_EQ(bok::space::sgemm_warp_verdict({256, 128, 16, 64, 64, 8, 16, 3}), Verdict::kCompiled);
  // 3 stages x 32 x (256 + 256) doubles = 384 KB
  EXPECT_EQ(bok::space::dgemm_warp_verdict({256, 256, 32, 64, 64, 4, 8, 3}), Verdict::kInvalid);
}

TEST(Spaces, PruningRulesSayWhy) {
  const char* why = nullptr;
  EXPECT_EQ(bok::space::snrm2_verdict({256, 4, 1}, &why), Verdict::kPruned);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("scalar"), std::string::npos);
  why = nullptr;
  EXPECT_EQ(bok::space::sgemm_warp_verdict({128, 128, 16, 64, 32, 8, 8, 2}, &why), Verdict::kPruned);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("stages"), std::string::npos);
  EXPECT_EQ(bok::space::sgemm_warp_verdict({128, 128, 16, 64, 32, 8, 8, 3}), Verdict::kCompiled);
}

TEST(Spaces, CompiledSetsAreSmall) {
  // Build time on 2-core CI: the pruning keeps each family to a handful of instantiations.
  EXPECT_EQ(compiled(bok::space::kSnrm2, VERDICT(snrm2_verdict)).size(), 11u);
  EXPECT_EQ(compiled(bok::space::kStrsv, VERDICT(strsv_verdict)).size(), 5u);
  EXPECT_LE(compiled(bok::space::kSgemmWarp, VERDICT(sgemm_warp_verdict)).size(), 8u);
  EXPECT_GE(compiled(bok::space::kSgemmWarp, VERDICT(sgemm_warp_verdict)).size(), 4u);
  EXPECT_TRUE(
      compiled(bok::space::kSgemmWarp, VERDICT(sgemm_warp_verdict)).count("sgemm_wt_128x128x16_w64x32_t8x8_s3"));
  // Double: a few points each (FP64 speed tuning is later work), with the precision letter.
  EXPECT_EQ(
      compiled(bok::space::kDnrm2, VERDICT(dnrm2_verdict)),
      (std::set<std::string>{"dnrm2_1p_256_2_v2", "dnrm2_1p_256_4_v2", "dnrm2_1p_512_2_v2", "dnrm2_1p_512_4_v2"}));
  EXPECT_EQ(
      compiled(bok::space::kDgemvN, VERDICT(dgemv_n_verdict)),
      (std::set<std::string>{"dgemv_n_32x4_u2_r2", "dgemv_n_32x4_u4_r2", "dgemv_n_32x8_u2_r2", "dgemv_n_32x8_u4_r2"}));
  EXPECT_EQ(compiled(bok::space::kDgemvT, VERDICT(dgemv_t_verdict)),
            (std::set<std::string>{"dgemv_tv_4w_u2", "dgemv_tv_4w_u4", "dgemv_tv_8w_u2", "dgemv_tv_8w_u4"}));
  EXPECT_EQ(compiled(bok::space::kDtrsv, VERDICT(dtrsv_verdict)),
            (std::set<std::string>{"dtrsv_wave_64_128", "dtrsv_wave_64_256", "dtrsv_wave_64_512"}));
  EXPECT_EQ(compiled(bok::space::kDgemmWarp, VERDICT(dgemm_warp_verdict)),
            (std::set<std::string>{"dgemm_wt_64x64x16_w32x32_t4x8_s3", "dgemm_wt_128x64x16_w32x32_t4x8_s3",
                                   "dgemm_wt_64x128x16_w32x32_t4x8_s3"}));
}

TEST(Grids, LogSpacing) {
  EXPECT_EQ(bo::tune::log_spaced(1, 65536, 4), (std::vector<int64_t>{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536}));
  const auto v = bo::tune::log_spaced(1, 1e8, std::sqrt(10.0));
  EXPECT_EQ(v.size(), 17u);
  EXPECT_EQ(v.front(), 1);
  EXPECT_EQ(v[2], 10);
  EXPECT_EQ(v.back(), 100000000);
}

TEST(Grids, CoverWhatTheIssueAsks) {
  const auto g = bo::tune::grid_specs(false);
  std::set<std::string> keys;
  for (const auto& s : g) {
    keys.insert(s.key);
    ASSERT_EQ(s.axes.size(), s.points.size());
    for (const auto& p : s.points) EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    if (s.key == "snrm2") {
      EXPECT_EQ(s.points[0].front(), 1);
      EXPECT_EQ(s.points[0].back(), 100000000);
    }
    if (s.key == "sgemv_n" || s.key == "sgemv_t") {
      EXPECT_GE(s.points[0].size(), 8u);  // 8 x 8 or finer
      EXPECT_GE(s.points[1].size(), 8u);
      EXPECT_EQ(s.points[0].back(), 65536);
      EXPECT_EQ(s.points[1].front(), 1);  // very skinny shapes
    }
    if (s.key == "strsv_n") EXPECT_EQ(s.points[0].back(), 32768);
    if (s.key == "strsm") {  // the solves (t >> r, r = 1 / 16 / 128) and the factorizations' panels (t << r)
      for (int64_t r : {1, 16, 128, 16384}) EXPECT_TRUE(std::count(s.points[1].begin(), s.points[1].end(), r)) << r;
      EXPECT_TRUE(std::count(s.points[0].begin(), s.points[0].end(), 16384));
      EXPECT_TRUE(std::count(s.points[0].begin(), s.points[0].end(), 128));
    }
    if (s.key == "ssyrk") EXPECT_EQ(s.points[0].back(), 8192);
    if (s.key == "sgemm") {
      EXPECT_TRUE(std::count(s.points[2].begin(), s.points[2].end(), 64));   // LU rank-64 updates
      EXPECT_TRUE(std::count(s.points[2].begin(), s.points[2].end(), 256));  // and rank-256
      EXPECT_TRUE(std::count(s.points[0].begin(), s.points[0].end(), 16384));
    }
  }
  EXPECT_EQ(keys, (std::set<std::string>{"snrm2",   "sgemv_n", "sgemv_t", "strsv_n", "strsv_t", "sgemm",   "strsm",
                                         "ssyrk",   "dnrm2",   "dgemv_n", "dgemv_t", "dtrsv_n", "dtrsv_t", "dgemm",
                                         "dtrsm",   "dsyrk",   "scnrm2",  "cgemv_n", "cgemv_t", "ctrsv_n", "ctrsv_t",
                                         "cgemm",   "ctrsm",   "csyrk",   "cherk",   "dznrm2",  "zgemv_n", "zgemv_t",
                                         "ztrsv_n", "ztrsv_t", "zgemm",   "ztrsm",   "zsyrk",   "zherk"}));
  // Each key's routine is the one it is named after (and the module looks it up by): the d keys are the d routines,
  // scnrm2 the complex norm.
  for (const auto& s : g) {
    EXPECT_EQ(s.key.rfind(bo_routine_name(s.routine), 0), 0u) << s.key;
    EXPECT_EQ(bo::tuning::key_routine(bo::tuning::find_key(s.key)), s.routine) << s.key;
    // The transposed complex keys are timed with the conjugate transpose.
    const bool t = s.key.size() > 2 && s.key.compare(s.key.size() - 2, 2, "_t") == 0;
    if (t) EXPECT_EQ(s.op, bo_is_complex(bo_routine_precision(s.routine)) ? 'C' : 'T') << s.key;
  }
  EXPECT_EQ(bo::tune::tile_count(g[1]), 81);
  EXPECT_EQ(bo::tune::tile_at(g[1], 10), (std::vector<int64_t>{4, 4}));
  // The quick grids are a few tiles each.
  for (const auto& s : bo::tune::grid_specs(true)) EXPECT_LE(bo::tune::tile_count(s), 4);
}

TEST(Grids, ComplexKeysOnTheDoubleGrids) {
  std::map<std::string, bo::tune::GridSpec> by;
  for (const auto& s : bo::tune::grid_specs(false)) by.emplace(s.key, s);
  // c has d's 8-byte elements and d's grids; herk's are syrk's.
  for (const char* k : {"nrm2", "gemv_n", "gemv_t", "trsv_n", "gemm", "trsm", "syrk"}) {
    const std::string c = std::string(k) == "nrm2" ? "scnrm2" : "c" + std::string(k);
    EXPECT_EQ(by.at(c).points, by.at("d" + std::string(k)).points) << c;
    EXPECT_EQ(by.at(c).unit, by.at("d" + std::string(k)).unit) << c;
  }
  EXPECT_EQ(by.at("cherk").points, by.at("dsyrk").points);
  EXPECT_EQ(by.at("zherk").axes, (std::vector<std::string>{"n", "k"}));
  EXPECT_EQ(by.at("zherk").unit, "GFLOP/s");
  // z's 16-byte matrices stop at 32768 per side (a 65536-square zgemv is 64 GiB); its vectors still reach 1e8.
  EXPECT_EQ(by.at("zgemv_n").points[0], (std::vector<int64_t>{1, 16, 256, 4096, 32768}));
  EXPECT_EQ(by.at("zgemv_t").points[1].back(), 32768);
  EXPECT_EQ(by.at("dgemv_t").points[1].back(), 65536);
  EXPECT_EQ(by.at("dznrm2").points[0].back(), 100000000);
  EXPECT_EQ(by.at("zgemm").points, by.at("dgemm").points);
  // The quick run: 27 tiles per real precision, 31 per complex one (herk's 4 more).
  int64_t quick[4] = {};
  for (const auto& s : bo::tune::grid_specs(true)) quick[bo_routine_precision(s.routine)] += bo::tune::tile_count(s);
  EXPECT_EQ(quick[BO_PREC_S], 27);
  EXPECT_EQ(quick[BO_PREC_D], 27);
  EXPECT_EQ(quick[BO_PREC_C], 31);
  EXPECT_EQ(quick[BO_PREC_Z], 31);
}

TEST(Grids, KernelSelection) {
  using bo::tune::key_selected;
  EXPECT_TRUE(key_selected({}, "sgemm"));
  EXPECT_TRUE(key_selected({"sgemm"}, "sgemm"));
  EXPECT_FALSE(key_selected({"sgemm"}, "dgemm"));
  // A precision letter takes all its keys: "c" the complex single ones, scnrm2 included, and not snrm2.
  const std::vector<std::string> dcz = {"d", "c", "z"};
  for (const char* k : {"dnrm2", "dsyrk", "scnrm2", "cgemv_t", "cherk", "dznrm2", "zherk"})
    EXPECT_TRUE(key_selected(dcz, k)) << k;
  for (const char* k : {"snrm2", "sgemm", "ssyrk", "my_kernel"}) EXPECT_FALSE(key_selected(dcz, k)) << k;
  EXPECT_TRUE(key_selected({"s", "zgemm"}, "zgemm"));
  EXPECT_TRUE(key_selected({"s", "zgemm"}, "strsv_t"));
  EXPECT_FALSE(key_selected({"s", "zgemm"}, "zsyrk"));
  // Every quick run over d, c, z: 89 tiles.
  int64_t tiles = 0;
  for (const auto& s : bo::tune::grid_specs(true))
    if (key_selected(dcz, s.key)) tiles += bo::tune::tile_count(s);
  EXPECT_EQ(tiles, 89);
  EXPECT_EQ(bo::tune::unknown_selection(dcz), "");
  EXPECT_EQ(bo::tune::unknown_selection({"dgemm", "zherk", "s"}), "");
  EXPECT_EQ(bo::tune::unknown_selection({"dgemm", "sherk", "z"}), "sherk");
  EXPECT_EQ(bo::tune::unknown_selection({"x"}), "x");
  EXPECT_EQ(bo::tune::unknown_selection({"dcz"}), "dcz");
}

TEST(Grids, WorkModel) {
  const auto g = bo::tune::grid_specs(false);
  const auto w = bo::tune::tile_work(g[1], {1024, 2048});  // sgemv_n: A + x read, y written
  EXPECT_DOUBLE_EQ(w.read, 4.0 * (1024.0 * 2048 + 2048));
  EXPECT_DOUBLE_EQ(w.written, 4.0 * 1024);
  const auto t = bo::tune::tile_work(g[3], {100});  // strsv: the triangle and b read, x written
  EXPECT_DOUBLE_EQ(t.read, 4.0 * (100.0 * 101 / 2 + 100));
  EXPECT_DOUBLE_EQ(bo::tune::tile_work(g[5], {10, 20, 30}).read, 2.0 * 10 * 20 * 30);
  // The double keys: 8-byte elements for the bandwidth-bound keys, the same flops for the others.
  for (const auto& s : g) {
    if (s.key == "dgemv_n") {
      const auto d = bo::tune::tile_work(s, {1024, 2048});
      EXPECT_DOUBLE_EQ(d.read, 8.0 * (1024.0 * 2048 + 2048));
      EXPECT_DOUBLE_EQ(d.written, 8.0 * 1024);
    }
    if (s.key == "dnrm2") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {1000}).read, 8000.0);
    if (s.key == "dgemm") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {10, 20, 30}).read, 2.0 * 10 * 20 * 30);
    // Complex: twice the bytes of the real precision, four times the flops.
    if (s.key == "zgemv_t") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {1024, 2048}).read, 16.0 * (1024.0 * 2048 + 1024));
    if (s.key == "cgemm") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {10, 20, 30}).read, 8.0 * 10 * 20 * 30);
    if (s.key == "zherk") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {10, 20}).read, 4.0 * 10 * 10 * 20);
    if (s.key == "dznrm2") EXPECT_DOUBLE_EQ(bo::tune::tile_work(s, {1000}).written, 8.0);
  }
}

#ifdef BO_CUDA_MODULE_PATH
// The core finds the module by the entry symbol of its API version (cuda_module_api.h): the module's linker map must
// export that name, and the table must be complete. (A version's first device run once found the new entry built but
// only the old one exported: every library process ran without its GPU, "not a compatible blasoffload CUDA module".)
TEST(Module, ExportsTheEntryTableOfThisApiVersion) {
  void* h = dlopen(BO_CUDA_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto entry = reinterpret_cast<bo_cuda_module_entry_fn>(dlsym(h, BO_CUDA_MODULE_ENTRY));
  ASSERT_NE(entry, nullptr) << BO_CUDA_MODULE_ENTRY << " is not exported";
  const bo_cuda_module* m = entry();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version, BO_CUDA_API_VERSION);
  EXPECT_NE(m->name, nullptr);
  const void* fns[] = {
      reinterpret_cast<const void*>(m->init),         reinterpret_cast<const void*>(m->call),
      reinterpret_cast<const void*>(m->kernel_us),    reinterpret_cast<const void*>(m->measure),
      reinterpret_cast<const void*>(m->host_pinned),  reinterpret_cast<const void*>(m->host_resident),
      reinterpret_cast<const void*>(m->growth_us),    reinterpret_cast<const void*>(m->shutdown),
      reinterpret_cast<const void*>(m->measure_link), reinterpret_cast<const void*>(m->staged_gbs_seen)};
  for (const void* f : fns) EXPECT_NE(f, nullptr);
}

// The module's registry holds exactly the spaces' compiled points (plus the hand-written fallbacks and
// cuBLAS), with the names the tables use.
TEST(Registry, CompiledSpacesAreRegistered) {
  void* h = dlopen(BO_CUDA_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto fn = reinterpret_cast<bo_kernel_registry_fn>(dlsym(h, BO_KERNEL_REGISTRY_ENTRY));
  ASSERT_NE(fn, nullptr);
  const bo_kernel_registry* r = fn();
  ASSERT_EQ(r->version, 5u);
  std::set<std::string> families;
  for (size_t i = 0; i < r->count; ++i) families.insert(r->entries[i].family);
  auto expect_all = [&](const std::set<std::string>& want) {
    for (const auto& f : want) EXPECT_TRUE(families.count(f)) << f << " is compiled by the space but not registered";
  };
  expect_all(compiled(bok::space::kSnrm2, VERDICT(snrm2_verdict)));
  expect_all(compiled(bok::space::kSgemvN, VERDICT(sgemv_n_verdict)));
  expect_all(compiled(bok::space::kSgemvT, VERDICT(sgemv_t_verdict)));
  expect_all(compiled(bok::space::kStrsv, VERDICT(strsv_verdict)));
  expect_all(compiled(bok::space::kSgemmWarp, VERDICT(sgemm_warp_verdict)));
  expect_all(compiled(bok::space::kDnrm2, VERDICT(dnrm2_verdict)));
  expect_all(compiled(bok::space::kDgemvN, VERDICT(dgemv_n_verdict)));
  expect_all(compiled(bok::space::kDgemvT, VERDICT(dgemv_t_verdict)));
  expect_all(compiled(bok::space::kDtrsv, VERDICT(dtrsv_verdict)));
  expect_all(compiled(bok::space::kDgemmWarp, VERDICT(dgemm_warp_verdict)));
  EXPECT_TRUE(families.count("cublas"));
  // Every gemm family comes in all four transpose variants, named <family>_<ta><tb>.
  for (const auto& fams : {compiled(bok::space::kSgemmWarp, VERDICT(sgemm_warp_verdict)),
                           compiled(bok::space::kDgemmWarp, VERDICT(dgemm_warp_verdict))})
    for (const auto& f : fams)
      for (const char* t : {"_nn", "_nt", "_tn", "_tt"}) {
        bool found = false;
        for (size_t i = 0; i < r->count; ++i) found |= std::string(r->entries[i].name) == f + t;
        EXPECT_TRUE(found) << f + t;
      }
  // Every entry's name carries its routine's precision letter, and each routine has entries.
  std::set<int> routines;
  for (size_t i = 0; i < r->count; ++i) {
    const bo_kernel_entry& e = r->entries[i];
    routines.insert(e.routine);
    const std::string name = e.name, routine = bo_routine_name(e.routine);
    const bo_precision p = bo_routine_precision(e.routine);
    if (e.vendor)
      EXPECT_EQ(name, "cublas_" + routine);
    else if (bo_is_complex(p))  // the complex norms on the real kernels: "scnrm2_on_snrm2_..."
      EXPECT_EQ(name.rfind(routine + "_on_", 0), 0u) << name;
    else
      EXPECT_EQ(name[0], bo_precision_letter(p)) << name;
  }
  // Every BLAS routine has kernels (the complex ones cuBLAS's, and our norms); LAPACK routines have none (the module
  // runs them with cuSOLVER).
  int blas_routines = 0;
#define BO_BLAS_ENTRY(p, P, name, NAME, T) ++blas_routines;
#include "routines/routine_list.h"
#undef BO_BLAS_ENTRY
  EXPECT_EQ(int(routines.size()), blas_routines);
  // Without a table and without a GPU the built-in choice is made from the arguments alone.
  bo_kernel_args a{};
  a.routine = BO_R_SGEMV;
  a.op[0] = 'N';
  a.m = a.n = 1000;
  a.incx = a.incy = 1;
  const int i = r->select_ex(BO_R_SGEMV, &a, BO_SELECT_BUILTIN);
  ASSERT_GE(i, 0);
  EXPECT_STREQ(r->entries[i].name, "sgemv_n_32x8_u4_r4");
  EXPECT_EQ(r->select_ex(BO_R_SGEMV, &a, BO_SELECT_TUNED), i);
  // Double: cuBLAS where it is available (it is not without a GPU), else our own default; OWN: ours.
  a.routine = BO_R_DGEMV;
  const int d = r->select_ex(BO_R_DGEMV, &a, BO_SELECT_BUILTIN);
  ASSERT_GE(d, 0);
  const bool have_cublas = std::string(r->vendor_info()).rfind("cuBLAS: ", 0) != 0;
  EXPECT_STREQ(r->entries[d].name, have_cublas ? "cublas_dgemv" : "dgemv_n_32x8_u4_r2");
  const int own = r->select_ex(BO_R_DGEMV, &a, BO_SELECT_OWN);
  ASSERT_GE(own, 0);
  EXPECT_STREQ(r->entries[own].name, "dgemv_n_32x8_u4_r2");
  EXPECT_NE(std::string(r->tuned_params_info()).find("built-in"), std::string::npos);
}
#endif

}  // namespace
