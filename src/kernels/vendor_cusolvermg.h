// cuSOLVERMg (the CUDA toolkit's multi-GPU dense solver), opened with dlopen on first use: LU and Cholesky of one
// matrix whose columns are spread over several GPUs of the process (1-D block-cyclic). Without it a factorization uses
// one GPU.
#pragma once

#include <cstdint>
#include <string>

namespace bok::vendor {

// Whether libcusolverMg opened with every symbol the module uses (opened on the first call; thread-safe).
bool cusolvermg_available();
std::string cusolvermg_description();

// One factorization over `ndev` devices (ordinals `devs`), columns in blocks of `tile` dealt round-robin: device q
// holds blocks q, q + ndev, ... one after another (leading dimension n) in local[q]; the pivots likewise in ipiv[q]
// (tile entries per block). `es` and `complex_type` give the element type (4/8 real, 8/16 complex). The workspace is
// allocated on each device here. Returns 0, or a CUDA / cuSOLVER error (nonzero); *info as LAPACK's.
int cusolvermg_getrf(int ndev, const int* devs, int64_t n, int64_t tile, int es, bool complex_type, void** local,
                     int** ipiv, int* info);
int cusolvermg_potrf(int ndev, const int* devs, char uplo, int64_t n, int64_t tile, int es, bool complex_type,
                     void** local, int* info);

}  // namespace bok::vendor
