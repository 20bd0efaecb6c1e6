// Reference BLAS argument checks, one function per routine, returning netlib's INFO (0 = valid).
#pragma once

#include "abi/blas_types.h"

namespace blasoffload {

// LSAME for one option letter: case-insensitive, only the first character counts.
inline char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
inline bool is_trans(char c) {
  c = upper(c);
  return c == 'N' || c == 'T' || c == 'C';
}
inline bool is_uplo(char c) {
  c = upper(c);
  return c == 'U' || c == 'L';
}
inline bool is_diag(char c) {
  c = upper(c);
  return c == 'U' || c == 'N';
}
inline bool is_side(char c) {
  c = upper(c);
  return c == 'L' || c == 'R';
}
inline blas_int max1(blas_int v) { return v > 1 ? v : 1; }

inline blas_int check_sgemm(char transa, char transb, blas_int m, blas_int n, blas_int k, blas_int lda, blas_int ldb,
                            blas_int ldc) {
  const blas_int nrowa = upper(transa) == 'N' ? m : k;
  const blas_int nrowb = upper(transb) == 'N' ? k : n;
  if (!is_trans(transa)) return 1;
  if (!is_trans(transb)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < max1(nrowa)) return 8;
  if (ldb < max1(nrowb)) return 10;
  if (ldc < max1(m)) return 13;
  return 0;
}

inline blas_int check_sgemv(char trans, blas_int m, blas_int n, blas_int lda, blas_int incx, blas_int incy) {
  if (!is_trans(trans)) return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < max1(m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  return 0;
}

inline blas_int check_strsv(char uplo, char trans, char diag, blas_int n, blas_int lda, blas_int incx) {
  if (!is_uplo(uplo)) return 1;
  if (!is_trans(trans)) return 2;
  if (!is_diag(diag)) return 3;
  if (n < 0) return 4;
  if (lda < max1(n)) return 6;
  if (incx == 0) return 8;
  return 0;
}

// SNRM2 has no invalid arguments.

// NROWA follows SIDE before SIDE itself is checked, as in reference STRSM (an invalid SIDE reports 1 anyway).
inline blas_int check_strsm(char side, char uplo, char transa, char diag, blas_int m, blas_int n, blas_int lda,
                            blas_int ldb) {
  const blas_int nrowa = upper(side) == 'L' ? m : n;
  if (!is_side(side)) return 1;
  if (!is_uplo(uplo)) return 2;
  if (!is_trans(transa)) return 3;
  if (!is_diag(diag)) return 4;
  if (m < 0) return 5;
  if (n < 0) return 6;
  if (lda < max1(nrowa)) return 9;
  if (ldb < max1(m)) return 11;
  return 0;
}

inline blas_int check_ssyrk(char uplo, char trans, blas_int n, blas_int k, blas_int lda, blas_int ldc) {
  const blas_int nrowa = upper(trans) == 'N' ? n : k;
  if (!is_uplo(uplo)) return 1;
  if (!is_trans(trans)) return 2;
  if (n < 0) return 3;
  if (k < 0) return 4;
  if (lda < max1(nrowa)) return 7;
  if (ldc < max1(n)) return 10;
  return 0;
}

// Calls xerbla_ as reference BLAS does: SRNAME padded to 6 characters, INFO, and the hidden length.
// Looked up dynamically so that a program's own XERBLA wins over the CPU library's.
void report_xerbla(const char* srname6, blas_int info);

}  // namespace blasoffload
