// CPU-side tests of the table-driven kernel choice (kernels/tuned_select.cpp) against a stand-in registry:
// nearest tile -> family -> the entry of that family that can run the arguments, the "own" column,
// reference-only vendor entries, names a module does not have, the fallback when nothing applies, and the double
// keys (dgemv_n ... choose double entries only; keys and kernel times from the call).
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

int can_n(const bo_kernel_args* a) { return a->op[0] == 'N'; }
int can_t(const bo_kernel_args* a) { return a->op[0] != 'N'; }
int can_any(const bo_kernel_args*) { return 1; }
int can_nn_aligned(const bo_kernel_args* a) { return a->op[0] == 'N' && a->op[1] == 'N' && a->lda % 4 == 0; }
int can_tn_aligned(const bo_kernel_args* a) { return a->op[0] == 'T' && a->op[1] == 'N' && a->lda % 4 == 0; }
size_t no_ws(const bo_kernel_args*) { return 0; }
int no_launch(const bo_kernel_args*, void*, void*) { return 0; }

const bo_kernel_entry kEntries[] = {
    {"snrm2_1p_256_4_v4", "snrm2_1p_256_4_v4", BO_R_SNRM2, 0, can_any, no_ws, no_launch},  // 0
    {"cublas_snrm2", "cublas", BO_R_SNRM2, 2, can_any, no_ws, no_launch},                  // 1
    {"sgemv_n_32x8_u4_r4", "sgemv_n_32x8_u4_r4", BO_R_SGEMV, 0, can_n, no_ws, no_launch},  // 2
    {"sgemv_n_64x4_u2_r4", "sgemv_n_64x4_u2_r4", BO_R_SGEMV, 0, can_n, no_ws, no_launch},  // 3
    {"sgemv_tv_8w_u4", "sgemv_tv_8w_u4", BO_R_SGEMV, 0, can_t, no_ws, no_launch},          // 4
    {"cublas_sgemv", "cublas", BO_R_SGEMV, 1, can_any, no_ws, no_launch},                  // 5
    {"sgemm_wt_a_nn", "sgemm_wt_a", BO_R_SGEMM, 0, can_nn_aligned, no_ws, no_launch},      // 6
    {"sgemm_wt_a_tn", "sgemm_wt_a", BO_R_SGEMM, 0, can_tn_aligned, no_ws, no_launch},      // 7
    {"dgemv_n_32x8_u4_r2", "dgemv_n_32x8_u4_r2", BO_R_DGEMV, 0, can_n, no_ws, no_launch},  // 8
    {"cublas_dgemv", "cublas", BO_R_DGEMV, 1, can_any, no_ws, no_launch},                  // 9
    {"dgemm_wt_b_nn", "dgemm_wt_b", BO_R_DGEMM, 0, can_nn_aligned, no_ws, no_launch},      // 10
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
    // Double keys: the same shapes, their own families (a d key never names an s configuration, nor the reverse).
    KernelTable dn = kernel("GB/s", {"m", "n"}, {{16, 1024}, {16}});
    dn.tiles = {tile({16, 16}, "cublas", "dgemv_n_32x8_u4_r2"), tile({1024, 16}, "dgemv_n_32x8_u4_r2", "")};
    KernelTable dm = kernel("GFLOP/s", {"m", "n", "k"}, {{1024}, {1024}, {64}});
    dm.tiles = {tile({1024, 1024, 64}, "sgemm_wt_a", "sgemm_wt_a")};
    t.kernels = {{"snrm2", nrm}, {"sgemv_n", gn}, {"sgemm", mm}, {"dgemv_n", dn}, {"dgemm", dm}};
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

bo_kernel_args gemv(char t, int64_t m, int64_t n, int routine = BO_R_SGEMV) {
  bo_kernel_args a{};
  a.routine = routine;
  a.op[0] = t;
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
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, false), 3);
  a = gemv('N', 20, 3000);  // (16, 1024): cuBLAS chosen, ours best of own
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, false), 5);
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, true), 3);
  a = gemv('N', 1, 1);  // below the grid: (16, 16)
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, false), 2);
}

TEST_F(TunedSelect, DoubleKeysChooseDoubleEntries) {
  bo_kernel_args a = gemv('N', 20, 20, BO_R_DGEMV);  // dgemv_n (16, 16): cuBLAS, own dgemv_n_32x8_u4_r2
  EXPECT_EQ(bok::tuned_select(BO_R_DGEMV, &a, false), 9);
  EXPECT_EQ(bok::tuned_select(BO_R_DGEMV, &a, true), 8);
  a = gemv('N', 2000, 20, BO_R_DGEMV);
  EXPECT_EQ(bok::tuned_select(BO_R_DGEMV, &a, false), 8);
  a = gemv('T', 2000, 20, BO_R_DGEMV);  // no dgemv_t key
  EXPECT_EQ(bok::tuned_select(BO_R_DGEMV, &a, false), -1);
  // The dgemm key names an s family: no double entry of that family, so the caller's built-in choice.
  bo_kernel_args g{};
  g.routine = BO_R_DGEMM;
  g.op[0] = g.op[1] = 'N';
  g.m = g.n = 1000;
  g.k = 64;
  g.lda = 1000;
  EXPECT_EQ(bok::tuned_select(BO_R_DGEMM, &g, false), -1);
  // Keys and tile coordinates from the call.
  int64_t dims[3];
  EXPECT_STREQ(bok::tuned_key(&g, dims), "dgemm");
  EXPECT_EQ(dims[0], 1000);
  EXPECT_EQ(dims[2], 64);
  g.routine = BO_R_STRSM;
  g.op[0] = 'R';
  g.m = 10;
  g.n = 300;
  EXPECT_STREQ(bok::tuned_key(&g, dims), "strsm");
  EXPECT_EQ(dims[0], 300);  // a right-side solve: the triangle's order is n
  EXPECT_EQ(dims[1], 10);
  g.routine = BO_R_DTRSV;
  g.op[1] = 'T';
  EXPECT_STREQ(bok::tuned_key(&g, dims), "dtrsv_t");
  // The kernel time: the dgemv_n (1024, 16) tile's rate 2 GB/s over the bytes of a 1024 x 16 double gemv.
  a = gemv('N', 1024, 16, BO_R_DGEMV);
  EXPECT_DOUBLE_EQ(bok::tuned_kernel_us(&a), 8.0 * (1024.0 * 16 + 16 + 1024) / (2 * 1e3));
  a.routine = BO_R_DSYRK;  // no dsyrk key
  EXPECT_EQ(bok::tuned_kernel_us(&a), -1);
}

TEST_F(TunedSelect, NoTileOrNameFallsBackToTheCaller) {
  bo_kernel_args a = gemv('N', 5000, 5000);  // (1024, 1024) names a configuration this module lacks
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, false), -1);
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, true), 2);
  a = gemv('T', 100, 100);  // no sgemv_t table
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMV, &a, false), -1);
}

TEST_F(TunedSelect, ReferenceOnlyVendorEntryIsNeverChosen) {
  bo_kernel_args a{};
  a.routine = BO_R_SNRM2;
  a.n = 900;  // the 1000 tile names "cublas", whose snrm2 entry is reference-only
  a.incx = 1;
  EXPECT_EQ(bok::tuned_select(BO_R_SNRM2, &a, false), -1);
  EXPECT_EQ(bok::tuned_select(BO_R_SNRM2, &a, true), 0);
}

TEST_F(TunedSelect, TheFamilyMemberThatCanRunTheArguments) {
  bo_kernel_args a{};
  a.routine = BO_R_SGEMM;
  a.op[0] = 'T';
  a.op[1] = 'N';
  a.m = a.n = 1000;
  a.k = 64;
  a.lda = 64;
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMM, &a, false), 7);  // the TN member of the tuned (NN) family
  a.op[0] = 'N';
  a.lda = 1001;  // misaligned: no member can run it, the caller's built-in choice takes over
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMM, &a, false), -1);
  a.lda = 1000;
  EXPECT_EQ(bok::tuned_select(BO_R_SGEMM, &a, false), 6);
}

}  // namespace
