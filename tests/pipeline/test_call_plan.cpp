// The generic executor's plan of a call (call_plan.h) against the real routine descriptors, for every routine in
// both precisions: which operands are staged, kept on the device or served from device copies, how many elements
// move, and the call the kernel sees (staged operands packed: leading dimension rows, increment 1; everything else as
// the program passed it).
#include <gtest/gtest.h>

#include <cstdint>

#include "offload/module/call_plan.h"
#include "routines/routine_ids.h"

namespace bom {
namespace {

using bo::routines::Operand;

// Distinct fake addresses: nothing is dereferenced.
const void* P(uintptr_t x) { return reinterpret_cast<const void*>(x); }
void* W(uintptr_t x) { return reinterpret_cast<void*>(x); }
const void *const kA = P(0x10000), *const kB = P(0x20000);
void* const kC = W(0x30000);
const void* const kStaged[3] = {P(0x100), P(0x200), P(0x300)};
void* const kResult = W(0x400);

bool HostOnly(const void*) { return false; }
const void* g_device_ptr = nullptr;
bool OneOnDevice(const void* p) { return p == g_device_ptr; }

int Routine(bo_routine_kind kind, int es) { return bo_routine_id(kind, es == 8 ? BO_PREC_D : BO_PREC_S); }

bo_call Gemm(int es, double alpha, double beta) {
  bo_call c{};
  c.routine = Routine(BO_KIND_GEMM, es);
  c.op[0] = 'N';
  c.op[1] = 'T';
  c.m = 5;
  c.n = 7;
  c.k = 3;
  c.alpha = alpha;
  c.beta = beta;
  c.a = kA;
  c.lda = 9;
  c.b = kB;
  c.ldb = 11;  // B^T: n x k
  c.c = kC;
  c.ldc = 13;
  return c;
}

class CallPlanTest : public ::testing::TestWithParam<int> {};  // the element size

TEST_P(CallPlanTest, GemmStagesEachOperandPackedAndReadsNoUnreadInputs) {
  const int es = GetParam();
  CallPlan plan = plan_call(Gemm(es, 2.0, 1.0), HostOnly);
  ASSERT_EQ(plan.n, 3);
  EXPECT_EQ(plan.es, es);
  EXPECT_FALSE(plan.any_device);
  EXPECT_FALSE(plan.scalar_out);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(resident_eligible(plan, i)) << "gemm operand " << i;
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * (5 * 3 + 7 * 3 + 5 * 7));
  EXPECT_EQ(plan.p[0].staged, 15u);
  EXPECT_EQ(plan.p[1].staged, 21u);
  EXPECT_EQ(plan.p[2].staged, 35u);
  EXPECT_EQ(plan.p[2].back, 0u);
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.a, kStaged[0]);
  EXPECT_EQ(k.lda, 5);
  EXPECT_EQ(k.b, kStaged[1]);
  EXPECT_EQ(k.ldb, 7);  // op(B) = B^T: B is n x k
  EXPECT_EQ(k.c, kStaged[2]);
  EXPECT_EQ(k.ldc, 5);
  EXPECT_EQ(k.m, 5);
  EXPECT_EQ(k.n, 7);
  EXPECT_EQ(k.k, 3);
  EXPECT_EQ(k.alpha, 2.0);
  EXPECT_EQ(k.beta, 1.0);
  EXPECT_EQ(k.incx, 0);
  EXPECT_EQ(k.incy, 0);

  // alpha == 0: only C, written and not read (beta == 0); A and B reach the kernel untouched, never staged.
  CallPlan zero = plan_call(Gemm(es, 0.0, 0.0), HostOnly);
  ASSERT_EQ(zero.n, 1);
  EXPECT_EQ(zero.p[0].o.access, Operand::kOut);
  settle(&zero);
  const bo_call kz = kernel_call(zero, kStaged, kResult);
  EXPECT_EQ(kz.a, kA);
  EXPECT_EQ(kz.lda, 9);
  EXPECT_EQ(kz.b, kB);
  EXPECT_EQ(kz.ldb, 11);
  EXPECT_EQ(kz.c, kStaged[0]);
  EXPECT_EQ(kz.ldc, 5);
}

TEST_P(CallPlanTest, AResidentOutputIsComputedInItsCopyAndCopiedBack) {
  const int es = GetParam();
  CallPlan plan = plan_call(Gemm(es, 1.0, 1.0), HostOnly);
  plan.p[0].resident = static_cast<char*>(W(0x5000));
  plan.p[2].resident = static_cast<char*>(W(0x7000));
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * 21);
  EXPECT_EQ(plan.p[0].staged, 0u);
  EXPECT_EQ(plan.p[0].back, 0u);  // an input: nothing comes back
  EXPECT_EQ(plan.p[2].staged, 0u);
  EXPECT_EQ(plan.p[2].back, 35u);
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.a, P(0x5000));
  EXPECT_EQ(k.lda, 9);  // a device copy keeps the host's layout
  EXPECT_EQ(k.b, kStaged[1]);
  EXPECT_EQ(k.c, P(0x7000));
  EXPECT_EQ(k.ldc, 13);
  const Residency::Operand v = resident_view(kC, plan.p[2].o, es);
  EXPECT_EQ(v.rows, 5);
  EXPECT_EQ(v.cols, 7);
  EXPECT_EQ(v.ld, 13);
  EXPECT_EQ(v.elem_size, es);
}

TEST_P(CallPlanTest, TheProgramsDeviceMemoryIsUsedInPlace) {
  const int es = GetParam();
  g_device_ptr = kB;
  CallPlan plan = plan_call(Gemm(es, 1.0, 0.0), OneOnDevice);
  EXPECT_TRUE(plan.any_device);
  EXPECT_TRUE(plan.p[1].on_dev);
  EXPECT_FALSE(resident_eligible(plan, 1));
  settle(&plan);
  EXPECT_EQ(plan.p[1].staged, 0u);
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.b, kB);
  EXPECT_EQ(k.ldb, 11);
  EXPECT_EQ(k.a, kStaged[0]);
  g_device_ptr = nullptr;
}

TEST_P(CallPlanTest, GemvVectorsOfAnyIncrementArePackedContiguous) {
  const int es = GetParam();
  bo_call c{};
  c.routine = Routine(BO_KIND_GEMV, es);
  c.op[0] = 'T';
  c.m = 4;
  c.n = 6;
  c.alpha = 1.5;
  c.beta = 0.5;
  c.a = kA;
  c.lda = 10;
  c.b = kB;
  c.incx = -2;
  c.c = kC;
  c.incy = 3;
  CallPlan plan = plan_call(c, HostOnly);
  ASSERT_EQ(plan.n, 3);
  EXPECT_TRUE(resident_eligible(plan, 0));
  EXPECT_FALSE(resident_eligible(plan, 1));
  EXPECT_FALSE(resident_eligible(plan, 2));
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * (4 * 6 + 4 + 6));  // x has m elements, y n (trans)
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.a, kStaged[0]);
  EXPECT_EQ(k.lda, 4);
  EXPECT_EQ(k.b, kStaged[1]);
  EXPECT_EQ(k.incx, 1);
  EXPECT_EQ(k.c, kStaged[2]);
  EXPECT_EQ(k.incy, 1);
  const Residency::Operand y = resident_view(kC, plan.p[2].o, es);  // what host_written is told after unpacking y
  EXPECT_EQ(y.rows, 1);
  EXPECT_EQ(y.cols, 6);
  EXPECT_EQ(y.ld, 3);
}

// alpha = 0: only y is an operand (A and x are not read); its increment is still incy, and incx stays as passed.
TEST_P(CallPlanTest, GemvWithAlphaZeroStagesOnlyYThroughIncy) {
  const int es = GetParam();
  bo_call c{};
  c.routine = Routine(BO_KIND_GEMV, es);
  c.op[0] = 'N';
  c.m = 45;
  c.n = 37;
  c.alpha = 0;
  c.beta = 0.5;
  c.a = kA;
  c.lda = 50;
  c.b = kB;
  c.incx = 2;
  c.c = kC;
  c.incy = -3;
  CallPlan plan = plan_call(c, HostOnly);
  ASSERT_EQ(plan.n, 1);
  EXPECT_EQ(plan.p[0].o.slot, 2);
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * 45);
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.c, kStaged[0]);
  EXPECT_EQ(k.incy, 1);
  EXPECT_EQ(k.incx, 2);
  EXPECT_EQ(k.b, kB);
}

TEST_P(CallPlanTest, TrsvSolvesItsVectorInPlaceWithIncx) {
  const int es = GetParam();
  bo_call c{};
  c.routine = Routine(BO_KIND_TRSV, es);
  c.op[0] = 'U';
  c.op[1] = 'N';
  c.op[2] = 'N';
  c.n = 8;
  c.a = kA;
  c.lda = 12;
  c.c = kC;
  c.incx = -3;
  CallPlan plan = plan_call(c, HostOnly);
  ASSERT_EQ(plan.n, 2);
  EXPECT_EQ(plan.p[0].o.shape, Operand::kUpper);
  EXPECT_TRUE(resident_eligible(plan, 0));
  EXPECT_FALSE(resident_eligible(plan, 1));
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * (8 * 8 + 8));  // the triangle's square (only the triangle moves)
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.a, kStaged[0]);
  EXPECT_EQ(k.lda, 8);
  EXPECT_EQ(k.c, kStaged[1]);
  EXPECT_EQ(k.incx, 1);
  EXPECT_EQ(k.incy, 0);
  const Residency::Operand a = resident_view(kA, plan.p[0].o, es);
  EXPECT_EQ(a.rows, 8);
  EXPECT_EQ(a.cols, 8);
  EXPECT_EQ(a.ld, 12);
}

TEST_P(CallPlanTest, Nrm2ReturnsItsScalarThroughTheResultSlot) {
  const int es = GetParam();
  bo_call c{};
  c.routine = Routine(BO_KIND_NRM2, es);
  c.n = 100;
  c.b = kB;
  c.incx = 4;
  c.c = kC;  // the host scalar
  CallPlan plan = plan_call(c, HostOnly);
  ASSERT_EQ(plan.n, 1);
  EXPECT_TRUE(plan.scalar_out);
  EXPECT_FALSE(resident_eligible(plan, 0));
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * 100);
  const bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.b, kStaged[0]);
  EXPECT_EQ(k.incx, 1);
  EXPECT_EQ(k.c, kResult);
  EXPECT_EQ(k.n, 100);
}

TEST_P(CallPlanTest, TrsmAndSyrkStageTheirOutputsAndMayReuseACopyOfA) {
  const int es = GetParam();
  bo_call t{};
  t.routine = Routine(BO_KIND_TRSM, es);
  t.op[0] = 'R';
  t.op[1] = 'L';
  t.op[2] = 'T';
  t.op[3] = 'U';
  t.m = 6;
  t.n = 9;
  t.alpha = 1.0;
  t.a = kA;
  t.lda = 20;
  t.c = kC;
  t.ldc = 7;
  CallPlan plan = plan_call(t, HostOnly);
  ASSERT_EQ(plan.n, 2);
  EXPECT_EQ(plan.p[0].o.shape, Operand::kLower);
  EXPECT_EQ(plan.p[0].o.rows, 9);  // side R: A is n x n
  EXPECT_TRUE(resident_eligible(plan, 0));
  EXPECT_FALSE(resident_eligible(plan, 1)) << "a solve's right-hand sides are staged";
  EXPECT_DOUBLE_EQ(settle(&plan), double(es) * (9 * 9 + 6 * 9));
  bo_call k = kernel_call(plan, kStaged, kResult);
  EXPECT_EQ(k.lda, 9);
  EXPECT_EQ(k.c, kStaged[1]);
  EXPECT_EQ(k.ldc, 6);

  bo_call s{};
  s.routine = Routine(BO_KIND_SYRK, es);
  s.op[0] = 'U';
  s.op[1] = 'T';
  s.n = 5;
  s.k = 12;
  s.alpha = 1.0;
  s.beta = 0.0;
  s.a = kA;
  s.lda = 14;
  s.c = kC;
  s.ldc = 8;
  CallPlan sp = plan_call(s, HostOnly);
  ASSERT_EQ(sp.n, 2);
  EXPECT_EQ(sp.p[1].o.shape, Operand::kUpper);
  EXPECT_EQ(sp.p[1].o.access, Operand::kOut);  // beta == 0: C is never read
  EXPECT_TRUE(resident_eligible(sp, 0));
  EXPECT_FALSE(resident_eligible(sp, 1));
  EXPECT_DOUBLE_EQ(settle(&sp), double(es) * (12 * 5 + 5 * 5));  // A^T A: A is k x n
  k = kernel_call(sp, kStaged, kResult);
  EXPECT_EQ(k.a, kStaged[0]);
  EXPECT_EQ(k.lda, 12);
  EXPECT_EQ(k.c, kStaged[1]);
  EXPECT_EQ(k.ldc, 5);
}

INSTANTIATE_TEST_SUITE_P(ElementSizes, CallPlanTest, ::testing::Values(4, 8),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param == 8 ? "double" : "float"; });

}  // namespace
}  // namespace bom
