// The decision memo (src/policy/decision_memo.h): which calls count as alike, what is remembered, and the full
// decision every kRecheck-th call.
#include <gtest/gtest.h>

#include <memory>

#include "policy/decision_memo.h"

namespace {

using blasoffload::policy::DecisionMemo;

bo_call Gemm(std::int64_t m, std::int64_t n, std::int64_t k, char transa = 'N') {
  bo_call c{};
  c.routine = BO_R_SGEMM;
  c.op[0] = transa;
  c.op[1] = 'N';
  c.m = m;
  c.n = n;
  c.k = k;
  return c;
}
double Work(const bo_call& c) { return double(c.m) * double(c.n) * double(c.k); }
std::uint32_t Key(const bo_call& c) { return DecisionMemo::key(c, Work(c)); }

TEST(DecisionMemo, CallsAlikeShareAKeyOthersDoNot) {
  EXPECT_EQ(Key(Gemm(100, 100, 100)), Key(Gemm(101, 100, 100)));       // same factor-2 bands
  EXPECT_NE(Key(Gemm(100, 100, 100)), Key(Gemm(100, 100, 100, 'T')));  // another option letter
  EXPECT_NE(Key(Gemm(100, 100, 100)), Key(Gemm(300, 300, 300)));       // other work
  EXPECT_NE(Key(Gemm(1000, 1000, 16)), Key(Gemm(400, 400, 100)));      // the same work, another smallest dimension
  bo_call d = Gemm(100, 100, 100);
  d.routine = BO_R_DGEMM;
  EXPECT_NE(Key(Gemm(100, 100, 100)), Key(d));  // another routine
  EXPECT_NE(Key(Gemm(0, 0, 0)), 0u);            // 0 marks an empty slot
}

TEST(DecisionMemo, RemembersOnlyTheCpuByFarAndRechecksEveryKRecheckThCall) {
  auto memo = std::make_unique<DecisionMemo>();
  const std::uint32_t k = Key(Gemm(64, 64, 64));
  float cpu = 0, gpu = 0;
  EXPECT_FALSE(memo->cpu_without_model(k, &cpu, &gpu));
  memo->decided(k, true, 10, 15);  // the CPU, but not by far
  EXPECT_FALSE(memo->cpu_without_model(k, &cpu, &gpu));
  memo->decided(k, false, 30, 10);  // the GPU
  EXPECT_FALSE(memo->cpu_without_model(k, &cpu, &gpu));
  memo->decided(k, true, 10, 25);  // the CPU by far: the next kRecheck - 1 calls alike skip the model
  for (int i = 1; i < DecisionMemo::kRecheck; ++i) {
    ASSERT_TRUE(memo->cpu_without_model(k, &cpu, &gpu)) << "call " << i;
    memo->count_remembered();
    EXPECT_EQ(cpu, 10.0f);
    EXPECT_EQ(gpu, 25.0f);
  }
  EXPECT_FALSE(memo->cpu_without_model(k, &cpu, &gpu)) << "the kRecheck-th call is decided in full";
  EXPECT_EQ(memo->remembered(), std::uint64_t(DecisionMemo::kRecheck - 1));
  // A full decision that no longer gives the CPU by far forgets the key at once.
  memo->decided(k, true, 10, 25);
  memo->decided(k, false, 10, 5);
  EXPECT_FALSE(memo->cpu_without_model(k, &cpu, &gpu));
  // Another key is not served from this one's entry.
  memo->decided(k, true, 10, 25);
  EXPECT_FALSE(memo->cpu_without_model(Key(Gemm(64, 64, 64, 'T')), &cpu, &gpu));
}

}  // namespace
