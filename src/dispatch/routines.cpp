// Per-routine logic shared by the Fortran and CBLAS entry points: reference checks and quick returns,
// then the GPU or the CPU BLAS.
#include "dispatch/routines.h"

#include <cstdio>

#include "abi/arg_checks.h"
#include "dispatch/cpu_blas.h"
#include "dispatch/route.h"

namespace blasoffload {

namespace {
constexpr std::uint64_t kF = sizeof(float);
inline std::uint64_t u(blas_int v) { return static_cast<std::uint64_t>(v); }
// Elements a strided vector of n entries spans in memory (what BLAS may touch).
// Invalid arguments: counted, and reported as reference BLAS does.
void reject(Routine r, blas_int info) {
  count_error(r);
  report_xerbla(routine_srname(r), info);
}
inline std::uint64_t span(blas_int n, blas_int inc) { return n > 0 ? 1 + u(n - 1) * u(inc < 0 ? -inc : inc) : 0; }
}  // namespace

void forward_sgemm(const SgemmCall& c) {
  if (!g_cpu.sgemm_f) cpu_blas_missing("sgemm_");
  g_cpu.sgemm_f(c.transa, c.transb, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.b, c.ldb, c.beta, c.c, c.ldc, c.transa_len,
                c.transb_len);
}

void forward_sgemv(const SgemvCall& c) {
  if (!g_cpu.sgemv_f) cpu_blas_missing("sgemv_");
  g_cpu.sgemv_f(c.trans, c.m, c.n, c.alpha, c.a, c.lda, c.x, c.incx, c.beta, c.y, c.incy, c.trans_len);
}

void forward_strsv(const StrsvCall& c) {
  if (!g_cpu.strsv_f) cpu_blas_missing("strsv_");
  g_cpu.strsv_f(c.uplo, c.trans, c.diag, c.n, c.a, c.lda, c.x, c.incx, c.uplo_len, c.trans_len, c.diag_len);
}

float forward_snrm2(const blas_int* n, const float* x, const blas_int* incx) {
  if (!g_cpu.snrm2_f) cpu_blas_missing("snrm2_");
  return g_cpu.snrm2_f(n, x, incx);
}

void forward_strsm(const StrsmCall& c) {
  if (!g_cpu.strsm_f) cpu_blas_missing("strsm_");
  g_cpu.strsm_f(c.side, c.uplo, c.transa, c.diag, c.m, c.n, c.alpha, c.a, c.lda, c.b, c.ldb, c.side_len, c.uplo_len,
                c.transa_len, c.diag_len);
}

void forward_ssyrk(const SsyrkCall& c) {
  if (!g_cpu.ssyrk_f) cpu_blas_missing("ssyrk_");
  g_cpu.ssyrk_f(c.uplo, c.trans, c.n, c.k, c.alpha, c.a, c.lda, c.beta, c.c, c.ldc, c.uplo_len, c.trans_len);
}

void run_sgemm(const SgemmCall& c) {
  const char ta = upper(*c.transa), tb = upper(*c.transb);
  const blas_int m = *c.m, n = *c.n, k = *c.k;
  if (blas_int info = check_sgemm(ta, tb, m, n, k, *c.lda, *c.ldb, *c.ldc)) {
    reject(Routine::sgemm, info);
    return;
  }
  const float alpha = *c.alpha, beta = *c.beta;
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) {
    count_quick_return(Routine::sgemm);
    return;
  }
  const std::uint64_t bytes = kF * (u(m) * u(k) + u(k) * u(n) + u(m) * u(n));
  policy::Call call{Routine::sgemm, ta, m, n, k, beta != 0.0f, false, {c.a, c.b, c.c}};
  call.op_b = tb;
  call.ld[0] = *c.lda;
  call.ld[1] = *c.ldb;
  call.ld[2] = *c.ldc;
  route(
      call, bytes, [&] { forward_sgemm(c); },
      [&](const bo_cuda_module* g, const Decision& d) {
        return g->sgemm(ta, tb, m, n, k, alpha, c.a, *c.lda, c.b, *c.ldb, beta, c.c, *c.ldc, d.cpu_share);
      },
      [&](char* buf, std::size_t size) {
        std::snprintf(buf, size, "%c%c m=%d n=%d k=%d", ta, tb, int(m), int(n), int(k));
      });
}

void run_sgemv(const SgemvCall& c) {
  const char t = upper(*c.trans);
  const blas_int m = *c.m, n = *c.n;
  if (blas_int info = check_sgemv(t, m, n, *c.lda, *c.incx, *c.incy)) {
    reject(Routine::sgemv, info);
    return;
  }
  const float alpha = *c.alpha, beta = *c.beta;
  if (m == 0 || n == 0 || (alpha == 0.0f && beta == 1.0f)) {
    count_quick_return(Routine::sgemv);
    return;
  }
  const blas_int lenx = t == 'N' ? n : m, leny = t == 'N' ? m : n;
  const std::uint64_t bytes = kF * (u(m) * u(n) + u(lenx) + u(leny));
  policy::Call call{Routine::sgemv, t, m, n, 0, beta != 0.0f, false, {c.a, c.x, c.y}};
  call.ld[0] = *c.lda;
  route(
      call, bytes, [&] { forward_sgemv(c); },
      [&](const bo_cuda_module* g, const Decision&) {
        return g->sgemv(t, m, n, alpha, c.a, *c.lda, c.x, *c.incx, beta, c.y, *c.incy);
      },
      [&](char* buf, std::size_t size) {
        std::snprintf(buf, size, "%c m=%d n=%d incx=%d incy=%d", t, int(m), int(n), int(*c.incx), int(*c.incy));
      });
}

void run_strsv(const StrsvCall& c) {
  const char ul = upper(*c.uplo), t = upper(*c.trans), d = upper(*c.diag);
  const blas_int n = *c.n;
  if (blas_int info = check_strsv(ul, t, d, n, *c.lda, *c.incx)) {
    reject(Routine::strsv, info);
    return;
  }
  if (n == 0) {
    count_quick_return(Routine::strsv);
    return;
  }
  const std::uint64_t bytes = kF * (u(n) * u(n + 1) / 2 + u(n));
  policy::Call call{Routine::strsv, t, 0, n, 0, true, false, {c.a, c.x, nullptr}};
  call.ld[0] = *c.lda;
  route(
      call, bytes, [&] { forward_strsv(c); },
      [&](const bo_cuda_module* g, const Decision&) { return g->strsv(ul, t, d, n, c.a, *c.lda, c.x, *c.incx); },
      [&](char* buf, std::size_t size) {
        std::snprintf(buf, size, "%c%c%c n=%d incx=%d", ul, t, d, int(n), int(*c.incx));
      });
}

void run_strsm(const StrsmCall& c) {
  const char sd = upper(*c.side), ul = upper(*c.uplo), ta = upper(*c.transa), dg = upper(*c.diag);
  const blas_int m = *c.m, n = *c.n;
  if (blas_int info = check_strsm(sd, ul, ta, dg, m, n, *c.lda, *c.ldb)) {
    reject(Routine::strsm, info);
    return;
  }
  if (m == 0 || n == 0) {
    count_quick_return(Routine::strsm);
    return;
  }
  const float alpha = *c.alpha;
  // Reference zeroes B without reading A; the module is promised alpha != 0, and zeroing is no GPU work.
  if (alpha == 0.0f) {
    count_quick_return(Routine::strsm);
    forward_strsm(c);
    return;
  }
  const blas_int t = sd == 'L' ? m : n;
  const std::uint64_t bytes = kF * (u(t) * u(t + 1) / 2 + u(m) * u(n));
  policy::Call call{Routine::strsm, sd, m, n, 0, true, false, {c.a, c.b, nullptr}};
  call.op_b = ta;
  call.ld[0] = *c.lda;
  call.ld[1] = *c.ldb;
  route(
      call, bytes, [&] { forward_strsm(c); },
      [&](const bo_cuda_module* g, const Decision&) {
        return g->strsm(sd, ul, ta, dg, m, n, alpha, c.a, *c.lda, c.b, *c.ldb);
      },
      [&](char* buf, std::size_t size) {
        std::snprintf(buf, size, "%c%c%c%c m=%d n=%d", sd, ul, ta, dg, int(m), int(n));
      });
}

void run_ssyrk(const SsyrkCall& c) {
  const char ul = upper(*c.uplo), t = upper(*c.trans);
  const blas_int n = *c.n, k = *c.k;
  if (blas_int info = check_ssyrk(ul, t, n, k, *c.lda, *c.ldc)) {
    reject(Routine::ssyrk, info);
    return;
  }
  const float alpha = *c.alpha, beta = *c.beta;
  if (n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) {
    count_quick_return(Routine::ssyrk);
    return;
  }
  // What is left of alpha == 0 or k == 0 is reference's early scaling of C's triangle: no GPU work, and the module
  // is promised alpha != 0, k >= 1.
  if (alpha == 0.0f || k == 0) {
    count_quick_return(Routine::ssyrk);
    forward_ssyrk(c);
    return;
  }
  const std::uint64_t bytes = kF * (u(n) * u(k) + u(n) * u(n + 1) / 2);
  policy::Call call{Routine::ssyrk, t, n, n, k, beta != 0.0f, false, {c.a, nullptr, c.c}};
  call.ld[0] = *c.lda;
  call.ld[2] = *c.ldc;
  route(
      call, bytes, [&] { forward_ssyrk(c); },
      [&](const bo_cuda_module* g, const Decision&) {
        return g->ssyrk(ul, t, n, k, alpha, c.a, *c.lda, beta, c.c, *c.ldc);
      },
      [&](char* buf, std::size_t size) { std::snprintf(buf, size, "%c%c n=%d k=%d", ul, t, int(n), int(k)); });
}

float run_snrm2(const blas_int* n, const float* x, const blas_int* incx) {
  // Libraries disagree for incx <= 0 (reference: norm of |incx| stride or sqrt(n)|x1|; OpenBLAS: 0), so
  // those calls always go to the CPU library: the user gets their own library's answer.
  if (*n <= 0) {
    count_quick_return(Routine::snrm2);
    return 0.0f;
  }
  float result = 0.0f;
  const blas_int nn = *n, inc = *incx;
  policy::Call call{Routine::snrm2, 'N', 0, nn, 0, false, false, {x, nullptr, nullptr}};
  route(
      call, kF * span(nn, inc), [&] { result = forward_snrm2(n, x, incx); },
      [&](const bo_cuda_module* g, const Decision&) {
        return inc > 0 ? g->snrm2(nn, x, inc, &result) : int(BO_CUDA_UNSUPPORTED);
      },
      [&](char* buf, std::size_t size) { std::snprintf(buf, size, "n=%d incx=%d", int(nn), int(inc)); });
  return result;
}

}  // namespace blasoffload
