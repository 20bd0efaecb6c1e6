// The CPU BLAS self-report: the advice rule for OpenBLAS kernel cores, and the probe against Debian's OpenBLAS
// (forced to its generic Prescott kernels and to its AVX-512 ones) and the reference BLAS.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "policy/cpu_blas_probe.h"

namespace {

using blasoffload::openblas_core_advice;
using blasoffload::probe_cpu_blas;

TEST(OpenblasCoreAdvice, GenericKernelsOnAvx512AreSerious) {
  bool serious = false;
  const std::string a = openblas_core_advice("Prescott", true, &serious);
  EXPECT_TRUE(serious);
  EXPECT_NE(a.find("'Prescott'"), std::string::npos) << a;
  EXPECT_NE(a.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << a;
  EXPECT_FALSE(openblas_core_advice("NEHALEM", true, &serious).empty());  // any case
  EXPECT_TRUE(serious);
}

TEST(OpenblasCoreAdvice, NothingToSayWithoutAvx512OrWithItsKernels) {
  bool serious = true;
  EXPECT_EQ(openblas_core_advice("Prescott", false, &serious), "");
  EXPECT_FALSE(serious);
  EXPECT_EQ(openblas_core_advice("SkylakeX", true, &serious), "");
  EXPECT_EQ(openblas_core_advice("Cooperlake", true, &serious), "");
  EXPECT_EQ(openblas_core_advice("", true, &serious), "");
}

TEST(OpenblasCoreAdvice, Avx2KernelsGetAMildNote) {
  bool serious = true;
  const std::string a = openblas_core_advice("Haswell", true, &serious);
  EXPECT_FALSE(serious);
  EXPECT_NE(a.find("may be faster"), std::string::npos) << a;
}

const char* kOpenblas = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
const char* kReference = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3";

// OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded, so one process can force one core: the generic
// one, the case the advice exists for (this test is the first to load OpenBLAS in this binary).
TEST(ProbeCpuBlas, OpenblasForcedToGenericKernels) {
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  void* h = dlopen(kOpenblas, RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "OpenBLAS not installed: " << dlerror();
  const void* sgemm = dlsym(h, "sgemm_");
  ASSERT_NE(sgemm, nullptr);
  const auto r = probe_cpu_blas(sgemm);
  EXPECT_EQ(r.identity.rfind("OpenBLAS 0.", 0), 0u) << r.identity;
  EXPECT_NE(r.identity.find("kernels: Prescott"), std::string::npos) << r.identity;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_TRUE(r.serious);
    EXPECT_NE(r.advice.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << r.advice;
  } else {
    EXPECT_EQ(r.advice, "") << "no AVX-512 here: nothing to advise";
  }
}

TEST(ProbeCpuBlas, ReferenceBlasSaysNothing) {
  void* h = dlopen(kReference, RTLD_NOW | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "reference BLAS not installed: " << dlerror();
  const auto r = probe_cpu_blas(dlsym(h, "sgemm_"));
  EXPECT_EQ(r.identity, "");
  EXPECT_EQ(r.advice, "");
  EXPECT_EQ(probe_cpu_blas(nullptr).identity, "");
}

}  // namespace
