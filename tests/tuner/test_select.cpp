// CPU-side tests of the table-driven kernel choice (kernels/tuned_select.cpp) against a stand-in registry:
// nearest tile -> family -> the entry of that family that can run the arguments, the "own" column,
// reference-only vendor entries, names a module does not have, and the fallback when nothing applies.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "kernels/tuned_select.h"
#include "tuning/table.h"

namespace {

int can_n(const bo_kernel_args* a) { return a->opa == 'N'; }
int can_t(const bo_kernel_args* a) { return a->opa != 'N'; }
int can_any(const bo_kernel_args*) { return 1; }
int can_nn_aligned(const bo_kernel_args* a) { return a->opa == 'N' && a->opb == 'N' && a->lda % 4 == 0; }
int can_tn_aligned(const bo_kernel_args* a) { return a->opa == 'T' && a->opb == 'N' && a->lda % 4 == 0; }
size_t no_ws(const bo_kernel_args*) { return 0; }
int no_launch(const bo_kernel_args*, void*, void*) { return 0; }

const bo_kernel_entry kEntries[] = {
    {"snrm2_1p_256_4_v4", "snrm2_1p_256_4_v4", BO_K_SNRM2, 0, can_any, no_ws, no_launch},          // 0
    {"cublas_snrm2", "cublas", BO_K_SNRM2, 2, can_any, no_ws, no_launch},                          // 1
    {"sgemv_n_32x8_u4_r4", "sgemv_n_32x8_u4_r4", BO_K_SGEMV, 0, can_n, no_ws, no_launch},          // 2
    {"sgemv_n_64x4_u2_r4", "sgemv_n_64x4_u2_r4", BO_K_SGEMV, 0, can_n, no_ws, no_launch},          // 3
    {"sgemv_tv_8w_u4", "sgemv_tv_8w_u4", BO_K_SGEMV, 0, can_t, no_ws, no_launch},                  // 4
    {"cublas_sgemv", "cublas", BO_K_SGEMV, 1, can_any, no_ws, no_launch},                          // 5
    {"sgemm_wt_a_nn", "sgemm_wt_a", BO_K_SGEMM, 0, can_nn_aligned, no_ws, no_launch},              // 6
    {"sgemm_wt_a_tn", "sgemm_wt_a", BO_K_SGEMM, 0, can_tn_aligned, no_ws, no_launch},              // 7
};

}  // namespace

namespace bok {
const bo_kernel_entry* registry_entries(size_t* count) {
  *count = sizeof kEntries / sizeof kEntries[0];
  return kEntries;
}
}  // namespace bok

namespace {

using bo::tuning::KernelTable;
using bo::tuning::Table;
using bo::tuning::Tile;

KernelTable kernel(const char* unit, std::vector<std::string> axes, std::vector<std::vector<int64_t>> grid) {
  KernelTable k;
  k.unit = unit;
  k.axes = std::move(axes);
  k.grid = std::move(grid);
  return k;
}

Tile tile(std::vector<int64_t> at, const std::string& config, const std::string& own) {
  Tile t;
  t.at = std::move(at);
  t.config = config;
  t.rate = 2;
  t.time_us = 1;
  t.own_config = own;
  t.own_rate = 1;
  return t;
}

std::vector<std::string> g_log;
void capture(int level, const char* m) { g_log.push_back(std::to_string(level) + " " + m); }

class TunedSelect : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bo-select-XXXXXX";
    dir_ = mkdtemp(tmpl);
    Table t;
    t.device = {"Test GPU", 9, 0, 132, 80};
    t.toolkit = t.driver = "13.0";
    t.created = "2026-11-21T00:00:00Z";
    t.tuner = "test";
    t.read = t.write = {{1024, 10}, {1 << 30, 3000}};
    KernelTable nrm = kernel("GB/s", {"n"}, {{1000, 1000000}});
    nrm.tiles = {tile({1000}, "cublas", "snrm2_1p_256_4_v4"), tile({1000000}, "snrm2_1p_256_4_v4", "")};
    KernelTable gn = kernel("GB/s", {"m", "n"}, {{16, 1024}, {16, 1024}});
    gn.tiles = {tile({16, 16}, "sgemv_n_32x8_u4_r4", "sgemv_n_32x8_u4_r4"),
                tile({16, 1024}, "cublas", "sgemv_n_64x4_u2_r4"),
                tile({1024, 16}, "sgemv_n_64x4_u2_r4", "sgemv_n_64x4_u2_r4"),
                tile({1024, 1024}, "sgemv_n_not_in_this_module", "sgemv_n_32x8_u4_r4")};
    KernelTable mm = kernel("GFLOP/s", {"m", "n", "k"}, {{1024}, {1024}, {64}});
    mm.tiles = {tile({1024, 1024, 64}, "sgemm_wt_a", "sgemm_wt_a")};
    t.kernels = {{"snrm2", nrm}, {"sgemv_n", gn}, {"sgemm", mm}};
    for (auto& [k, kt] : t.kernels) kt.finalize();
    path_ = dir_ + "/test-gpu.json";
    std::string err;
    ASSERT_TRUE(bo::tuning::save_table(path_, t, &err)) << err;
    g_log.clear();
    bo::tuning::DeviceInfo dev{"Test GPU", 9, 0, 132, 80};
    bok::load_tuned_params(dev, path_.c_str(), {}, capture);
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

bo_kernel_args gemv(char t, int64_t m, int64_t n) {
  bo_kernel_args a{};
  a.opa = t;
  a.m = m;
  a.n = n;
  a.lda = m;
  a.incx = a.incy = 1;
  return a;
}

TEST_F(TunedSelect, LogsWhichTableAndUnknownNames) {
  EXPECT_NE(std::string(bok::tuned_params_info()).find("BLASOFFLOAD_TUNED_PARAMS"), std::string::npos)
      << bok::tuned_params_info();
  bool unknown = false;
  for (const auto& l : g_log) unknown |= l.rfind("0 ", 0) == 0 && l.find("sgemv_n_not_in_this_module") != std::string::npos;
  EXPECT_TRUE(unknown) << "a configuration the module lacks must be warned about";
}

TEST_F(TunedSelect, NearestTileChoosesTheNamedFamily) {
  bo_kernel_args a = gemv('N', 900, 20);  // nearest tile (1024, 16)
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, false), 3);
  a = gemv('N', 20, 3000);  // (16, 1024): cuBLAS chosen, ours best of own
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, false), 5);
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, true), 3);
  a = gemv('N', 1, 1);  // below the grid: (16, 16)
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, false), 2);
}

TEST_F(TunedSelect, NoTileOrNameFallsBackToTheCaller) {
  bo_kernel_args a = gemv('N', 5000, 5000);  // (1024, 1024) names a configuration this module lacks
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, false), -1);
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, true), 2);
  a = gemv('T', 100, 100);  // no sgemv_t table
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMV, &a, false), -1);
}

TEST_F(TunedSelect, ReferenceOnlyVendorEntryIsNeverChosen) {
  bo_kernel_args a{};
  a.n = 900;  // the 1000 tile names "cublas", whose snrm2 entry is reference-only
  a.incx = 1;
  EXPECT_EQ(bok::tuned_select(BO_K_SNRM2, &a, false), -1);
  EXPECT_EQ(bok::tuned_select(BO_K_SNRM2, &a, true), 0);
}

TEST_F(TunedSelect, TheFamilyMemberThatCanRunTheArguments) {
  bo_kernel_args a{};
  a.opa = 'T';
  a.opb = 'N';
  a.m = a.n = 1000;
  a.k = 64;
  a.lda = 64;
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMM, &a, false), 7);  // the TN member of the tuned (NN) family
  a.opa = 'N';
  a.lda = 1001;  // misaligned: no member can run it, the caller's built-in choice takes over
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMM, &a, false), -1);
  a.lda = 1000;
  EXPECT_EQ(bok::tuned_select(BO_K_SGEMM, &a, false), 6);
}

}  // namespace
