// CPU-side tests of the table-driven kernel choice (kernels/tuned_select.cpp) against a stand-in registry:
// nearest tile -> family -> the entry of that family that can run the arguments, the "own" column,
// reference-only vendor entries, names a module does not have, the fallback when nothing applies, the double keys
// (dgemv_n ... choose double entries only; keys and kernel times from the call) and the complex keys (cuBLAS, never in
// the own column; the norms' own entries; four times the flops, twice the bytes).
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
    {"snrm2_1p_256_4_v4", "snrm2_1p_256_4_v4", BO_R_SNRM2, 0, can_any, no_ws, no_launch},                       // 0
    {"cublas_snrm2", "cublas", BO_R_SNRM2, 2, can_any, no_ws, no_launch},                                       // 1
    {"sgemv_n_32x8_u4_r4", "sgemv_n_32x8_u4_r4", BO_R_SGEMV, 0, can_n, no_ws, no_launch},                       // 2
    {"sgemv_n_64x4_u2_r4", "sgemv_n_64x4_u2_r4", BO_R_SGEMV, 0, can_n, no_ws, no_launch},                       // 3
    {"sgemv_tv_8w_u4", "sgemv_tv_8w_u4", BO_R_SGEMV, 0, can_t, no_ws, no_launch},                               // 4
    {"cublas_sgemv", "cublas", BO_R_SGEMV, 1, can_any, no_ws, no_launch},                                       // 5
    {"sgemm_wt_a_nn", "sgemm_wt_a", BO_R_SGEMM, 0, can_nn_aligned, no_ws, no_launch},                           // 6
    {"sgemm_wt_a_tn", "sgemm_wt_a", BO_R_SGEMM, 0, can_tn_aligned, no_ws, no_launch},                           // 7
    {"dgemv_n_32x8_u4_r2", "dgemv_n_32x8_u4_r2", BO_R_DGEMV, 0, can_n, no_ws, no_launch},                       // 8
    {"cublas_dgemv", "cublas", BO_R_DGEMV, 1, can_any, no_ws, no_launch},                                       // 9
    {"dgemm_wt_b_nn", "dgemm_wt_b", BO_R_DGEMM, 0, can_nn_aligned, no_ws, no_launch},                           // 10
    {"scnrm2_on_snrm2_1p_256_4_v4", "scnrm2_on_snrm2_1p_256_4_v4", BO_R_SCNRM2, 0, can_any, no_ws, no_launch},  // 11
    {"scnrm2_on_snrm2_256_4_v4", "scnrm2_on_snrm2_256_4_v4", BO_R_SCNRM2, 0, can_any, no_ws, no_launch},        // 12
    {"cublas_scnrm2", "cublas", BO_R_SCNRM2, 2, can_any, no_ws, no_launch},                                     // 13
    {"cublas_cgemv", "cublas", BO_R_CGEMV, 1, can_any, no_ws, no_launch},                                       // 14
    {"cublas_zgemm", "cublas", BO_R_ZGEMM, 1, can_any, no_ws, no_launch},                                       // 15
    {"cublas_zherk", "cublas", BO_R_ZHERK, 1, can_any, no_ws, no_launch},                                       // 16
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
    // Complex keys as the tuner writes them: cuBLAS in both columns (no own configuration ran), the norms ours.
    KernelTable cn = kernel("GB/s", {"n"}, {{1000, 1000000}});
    cn.tiles = {tile({1000}, "scnrm2_on_snrm2_256_4_v4", "scnrm2_on_snrm2_256_4_v4"),
                tile({1000000}, "scnrm2_on_snrm2_1p_256_4_v4", "scnrm2_on_snrm2_1p_256_4_v4")};
    KernelTable ct = kernel("GB/s", {"m", "n"}, {{16}, {16}});
    ct.tiles = {tile({16, 16}, "cublas", "cublas")};
    KernelTable zm = kernel("GFLOP/s", {"m", "n", "k"}, {{1024}, {1024}, {64}});
    zm.tiles = {tile({1024, 1024, 64}, "cublas", "cublas")};
    KernelTable zh = kernel("GFLOP/s", {"n", "k"}, {{4096}, {64}});
    zh.tiles = {tile({4096, 64}, "cublas", "cublas")};
    t.kernels = {{"snrm2", nrm}, {"sgemv_n", gn}, {"sgemm", mm}, {"dgemv_n", dn}, {"dgemm", dm},
                 {"scnrm2", cn}, {"cgemv_t", ct}, {"zgemm", zm}, {"zherk", zh}};
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
  for (const auto& l : g_log)
    unknown |= l.rfind("0 ", 0) == 0 && l.find("sgemv_n_not_in_this_module") != std::string::npos;
  EXPECT_TRUE(unknown) << "a configuration the module lacks must be warned about";
  // cuBLAS is built in, also where its entry is the reference only (snrm2) or no own configuration exists (complex).
  for (const auto& l : g_log) EXPECT_EQ(l.find("\"cublas\""), std::string::npos) << l;
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

TEST_F(TunedSelect, ComplexKeys) {
  // gemv's conjugate transpose looks up the _t key: cuBLAS; the own column has no configuration of ours.
  bo_kernel_args a = gemv('C', 20, 20, BO_R_CGEMV);
  EXPECT_EQ(bok::tuned_select(BO_R_CGEMV, &a, false), 14);
  EXPECT_EQ(bok::tuned_select(BO_R_CGEMV, &a, true), -1);
  int64_t dims[3];
  EXPECT_STREQ(bok::tuned_key(&a, dims), "cgemv_t");
  a.op[0] = 'T';
  EXPECT_STREQ(bok::tuned_key(&a, dims), "cgemv_t");
  a.op[0] = 'N';  // no cgemv_n key in this table
  EXPECT_STREQ(bok::tuned_key(&a, dims), "cgemv_n");
  EXPECT_EQ(bok::tuned_select(BO_R_CGEMV, &a, false), -1);
  EXPECT_EQ(bok::tuned_kernel_us(&a), -1);
  // The kernel time: 8-byte elements at the tile's 2 GB/s.
  a = gemv('C', 16, 16, BO_R_CGEMV);
  EXPECT_DOUBLE_EQ(bok::tuned_kernel_us(&a), 8.0 * (16.0 * 16 + 16 + 16) / (2 * 1e3));
  // The norms: our two entries, by tile; cuBLAS's is the reference only.
  bo_kernel_args v{};
  v.routine = BO_R_SCNRM2;
  v.n = 900;
  v.incx = 1;
  EXPECT_STREQ(bok::tuned_key(&v, dims), "scnrm2");
  EXPECT_EQ(bok::tuned_select(BO_R_SCNRM2, &v, false), 12);
  EXPECT_EQ(bok::tuned_select(BO_R_SCNRM2, &v, true), 12);
  v.n = 2000000;
  EXPECT_EQ(bok::tuned_select(BO_R_SCNRM2, &v, false), 11);
  EXPECT_DOUBLE_EQ(bok::tuned_kernel_us(&v), (8.0 * 2000000 + 4) / (2 * 1e3));  // 2n parts read, one real written
  v.routine = BO_R_DZNRM2;                                                      // no dznrm2 key
  EXPECT_EQ(bok::tuned_select(BO_R_DZNRM2, &v, false), -1);
  EXPECT_STREQ(bok::tuned_key(&v, dims), "dznrm2");
  // zgemm: four times the real flops at the tile's 2 GFLOP/s.
  bo_kernel_args g{};
  g.routine = BO_R_ZGEMM;
  g.op[0] = 'C';
  g.op[1] = 'N';
  g.m = g.n = 1024;
  g.k = 64;
  g.lda = 64;
  EXPECT_STREQ(bok::tuned_key(&g, dims), "zgemm");
  EXPECT_EQ(dims[2], 64);
  EXPECT_EQ(bok::tuned_select(BO_R_ZGEMM, &g, false), 15);
  EXPECT_DOUBLE_EQ(bok::tuned_kernel_us(&g), 4 * 2.0 * 1024 * 1024 * 64 / (2 * 1e3));
  g.routine = BO_R_CGEMM;  // no cgemm key
  EXPECT_EQ(bok::tuned_kernel_us(&g), -1);
  // herk has a key of its own: (n, k).
  bo_kernel_args h{};
  h.routine = BO_R_ZHERK;
  h.op[0] = 'L';
  h.op[1] = 'C';
  h.n = 3000;
  h.k = 100;
  EXPECT_STREQ(bok::tuned_key(&h, dims), "zherk");
  EXPECT_EQ(dims[0], 3000);
  EXPECT_EQ(dims[1], 100);
  EXPECT_EQ(bok::tuned_select(BO_R_ZHERK, &h, false), 16);
  EXPECT_DOUBLE_EQ(bok::tuned_kernel_us(&h), 4.0 * 3000 * 3000 * 100 / (2 * 1e3));
  h.routine = BO_R_CHERK;
  EXPECT_STREQ(bok::tuned_key(&h, dims), "cherk");
  EXPECT_EQ(bok::tuned_select(BO_R_CHERK, &h, false), -1);
  // LAPACK routines have no key.
  h.routine = BO_R_ZGETRF;
  EXPECT_EQ(bok::tuned_key(&h, dims), nullptr);
}

}  // namespace
