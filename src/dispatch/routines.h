// The intercepted routines in Fortran argument form: checks, quick returns, routing, forwarding.
#pragma once

#include "abi/blas_types.h"

namespace blasoffload {

// Option arguments keep the caller's pointers and hidden lengths so the CPU BLAS receives them unchanged.
struct SgemmCall {
  const char *transa, *transb;
  const blas_int *m, *n, *k;
  const float* alpha;
  const float* a;
  const blas_int* lda;
  const float* b;
  const blas_int* ldb;
  const float* beta;
  float* c;
  const blas_int* ldc;
  fortran_strlen transa_len, transb_len;
};

struct SgemvCall {
  const char* trans;
  const blas_int *m, *n;
  const float* alpha;
  const float* a;
  const blas_int* lda;
  const float* x;
  const blas_int* incx;
  const float* beta;
  float* y;
  const blas_int* incy;
  fortran_strlen trans_len;
};

struct StrsvCall {
  const char *uplo, *trans, *diag;
  const blas_int* n;
  const float* a;
  const blas_int* lda;
  float* x;
  const blas_int* incx;
  fortran_strlen uplo_len, trans_len, diag_len;
};

struct StrsmCall {
  const char *side, *uplo, *transa, *diag;
  const blas_int *m, *n;
  const float* alpha;
  const float* a;
  const blas_int* lda;
  float* b;
  const blas_int* ldb;
  fortran_strlen side_len, uplo_len, transa_len, diag_len;
};

struct SsyrkCall {
  const char *uplo, *trans;
  const blas_int *n, *k;
  const float* alpha;
  const float* a;
  const blas_int* lda;
  const float* beta;
  float* c;
  const blas_int* ldc;
  fortran_strlen uplo_len, trans_len;
};

void run_sgemm(const SgemmCall& c);
void run_sgemv(const SgemvCall& c);
void run_strsv(const StrsvCall& c);
float run_snrm2(const blas_int* n, const float* x, const blas_int* incx);
void run_strsm(const StrsmCall& c);
void run_ssyrk(const SsyrkCall& c);

// Direct forwarding for re-entrant calls (the CPU library calling back into us): no checks, no counts.
void forward_sgemm(const SgemmCall& c);
void forward_sgemv(const SgemvCall& c);
void forward_strsv(const StrsvCall& c);
float forward_snrm2(const blas_int* n, const float* x, const blas_int* incx);
void forward_strsm(const StrsmCall& c);
void forward_ssyrk(const SsyrkCall& c);

}  // namespace blasoffload
