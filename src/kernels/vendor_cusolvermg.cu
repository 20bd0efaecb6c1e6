// Opens libcusolverMg with dlopen on first use and runs its LU and Cholesky over several GPUs (see
// vendor_cusolvermg.h). One handle per set of devices, made once and kept (its creation enables peer access).
#include <cuda_runtime.h>
#include <cusolverMg.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/vendor_cusolvermg.h"
#include "kernels/vendor_dl.h"

namespace bok::vendor {
namespace {

struct Api {
  cusolverStatus_t (*create)(cusolverMgHandle_t*);
  cusolverStatus_t (*select)(cusolverMgHandle_t, int, int*);
  cusolverStatus_t (*grid)(cudaLibMgGrid_t*, int32_t, int32_t, const int32_t*, cusolverMgGridMapping_t);
  cusolverStatus_t (*destroy_grid)(cudaLibMgGrid_t);
  cusolverStatus_t (*desc)(cudaLibMgMatrixDesc_t*, int64_t, int64_t, int64_t, int64_t, cudaDataType,
                           const cudaLibMgGrid_t);
  cusolverStatus_t (*destroy_desc)(cudaLibMgMatrixDesc_t);
  cusolverStatus_t (*getrf_work)(cusolverMgHandle_t, int, int, void**, int, int, cudaLibMgMatrixDesc_t, int**,
                                 cudaDataType, int64_t*);
  cusolverStatus_t (*getrf)(cusolverMgHandle_t, int, int, void**, int, int, cudaLibMgMatrixDesc_t, int**, cudaDataType,
                            void**, int64_t, int*);
  cusolverStatus_t (*potrf_work)(cusolverMgHandle_t, cublasFillMode_t, int, void**, int, int, cudaLibMgMatrixDesc_t,
                                 cudaDataType, int64_t*);
  cusolverStatus_t (*potrf)(cusolverMgHandle_t, cublasFillMode_t, int, void**, int, int, cudaLibMgMatrixDesc_t,
                            cudaDataType, void**, int64_t, int*);
};
Api g_api{};
bool g_ok = false;
std::string g_desc = "cuSOLVERMg: not opened";
std::once_flag g_once;
std::mutex g_mu;  // one multi-GPU factorization at a time (the handles and the devices' memory are shared)

void open_mg() {
  std::string tried, used;
  const char* names[] = {"libcusolverMg.so.12", "libcusolverMg.so.11", "libcusolverMg.so",
                         "/usr/local/cuda/lib64/libcusolverMg.so.12", "/usr/local/cuda/lib64/libcusolverMg.so"};
  void* h = open_first(names, sizeof names / sizeof names[0], &used, &tried);
  if (!h) {
    g_desc = "cuSOLVERMg: not found (tried " + tried + "); factorizations use one GPU";
    return;
  }
  Api a{};
  g_ok = sym(h, "cusolverMgCreate", a.create) && sym(h, "cusolverMgDeviceSelect", a.select) &&
         sym(h, "cusolverMgCreateDeviceGrid", a.grid) && sym(h, "cusolverMgDestroyGrid", a.destroy_grid) &&
         sym(h, "cusolverMgCreateMatrixDesc", a.desc) && sym(h, "cusolverMgDestroyMatrixDesc", a.destroy_desc) &&
         sym(h, "cusolverMgGetrf_bufferSize", a.getrf_work) && sym(h, "cusolverMgGetrf", a.getrf) &&
         sym(h, "cusolverMgPotrf_bufferSize", a.potrf_work) && sym(h, "cusolverMgPotrf", a.potrf);
  if (g_ok) g_api = a;
  g_desc = g_ok ? "cuSOLVERMg: " + used : "cuSOLVERMg: " + used + " lacks a symbol; factorizations use one GPU";
}

cudaDataType type_of(int es, bool cplx) {
  if (cplx) return es == 8 ? CUDA_C_32F : CUDA_C_64F;
  return es == 4 ? CUDA_R_32F : CUDA_R_64F;
}

// The handle of a set of devices (kept; the caller has enabled peer access between them, device.h peers_reachable).
cusolverMgHandle_t handle_for(int ndev, const int* devs) {
  static std::map<std::vector<int>, cusolverMgHandle_t> handles;
  std::vector<int> key(devs, devs + ndev);
  auto it = handles.find(key);
  if (it != handles.end()) return it->second;
  cusolverMgHandle_t h = nullptr;
  if (g_api.create(&h) != CUSOLVER_STATUS_SUCCESS) return nullptr;
  if (g_api.select(h, ndev, key.data()) != CUSOLVER_STATUS_SUCCESS) return nullptr;  // kept: a handle is small
  handles[key] = h;
  return h;
}

// The descriptor of the distributed n x n matrix and a workspace of `lwork` elements on each device, freed after.
struct Job {
  cudaLibMgGrid_t grid = nullptr;
  cudaLibMgMatrixDesc_t desc = nullptr;
  std::vector<void*> work;
  std::vector<int> devs;
  ~Job() {
    for (size_t q = 0; q < work.size(); ++q)
      if (work[q]) cudaSetDevice(devs[q]), cudaFree(work[q]);
    if (desc) g_api.destroy_desc(desc);
    if (grid) g_api.destroy_grid(grid);
  }
  int make(int ndev, const int* d, int64_t n, int64_t tile, cudaDataType t) {
    devs.assign(d, d + ndev);
    if (g_api.grid(&grid, 1, ndev, devs.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR) != CUSOLVER_STATUS_SUCCESS)
      return 1000;
    if (g_api.desc(&desc, n, n, n, tile, t, grid) != CUSOLVER_STATUS_SUCCESS) return 1001;
    return 0;
  }
  int alloc(int64_t lwork, int es) {
    int old = 0;
    cudaGetDevice(&old);
    work.assign(devs.size(), nullptr);
    for (size_t q = 0; q < devs.size(); ++q) {
      cudaSetDevice(devs[q]);
      if (cudaError_t e = cudaMalloc(&work[q], size_t(es) * size_t(lwork > 0 ? lwork : 1))) {
        cudaSetDevice(old);
        return int(e);
      }
    }
    cudaSetDevice(old);
    return 0;
  }
};

}  // namespace

bool cusolvermg_available() {
  std::call_once(g_once, open_mg);
  return g_ok;
}
std::string cusolvermg_description() {
  std::call_once(g_once, open_mg);
  return g_desc;
}

namespace {
// One factorization: the handle of these devices, the matrix's descriptor, the workspace the query asks for on each
// device, then the routine. query(h, desc, type, &lwork) and run(h, desc, type, work, lwork) are cuSOLVERMg's calls.
// 0, or where it stopped: 1 no cuSOLVERMg, 1002 no handle, 1000/1001 grid/descriptor, 1003 the query, 1004 the
// routine, or a CUDA error of the workspace's allocation.
template <class Query, class Run>
int factor(int ndev, const int* devs, int64_t n, int64_t tile, int es, bool cplx, Query query, Run run) {
  if (!cusolvermg_available()) return 1;
  std::lock_guard<std::mutex> lock(g_mu);
  cusolverMgHandle_t h = handle_for(ndev, devs);
  if (!h) return 1002;
  Job j;
  const cudaDataType t = type_of(es, cplx);
  if (int e = j.make(ndev, devs, n, tile, t)) return e;
  int64_t lwork = 0;
  if (query(h, j.desc, t, &lwork) != CUSOLVER_STATUS_SUCCESS) return 1003;
  if (int e = j.alloc(lwork, es)) return e;
  return run(h, j.desc, t, j.work.data(), lwork) == CUSOLVER_STATUS_SUCCESS ? 0 : 1004;
}
}  // namespace

int cusolvermg_getrf(int ndev, const int* devs, int64_t n, int64_t tile, int es, bool cplx, void** local, int** ipiv,
                     int* info) {
  const int m = int(n);
  return factor(
      ndev, devs, n, tile, es, cplx,
      [&](cusolverMgHandle_t h, cudaLibMgMatrixDesc_t d, cudaDataType t, int64_t* lwork) {
        return g_api.getrf_work(h, m, m, local, 1, 1, d, ipiv, t, lwork);
      },
      [&](cusolverMgHandle_t h, cudaLibMgMatrixDesc_t d, cudaDataType t, void** work, int64_t lwork) {
        return g_api.getrf(h, m, m, local, 1, 1, d, ipiv, t, work, lwork, info);
      });
}

int cusolvermg_potrf(int ndev, const int* devs, char uplo, int64_t n, int64_t tile, int es, bool cplx, void** local,
                     int* info) {
  const int m = int(n);
  const cublasFillMode_t fill = (uplo == 'U' || uplo == 'u') ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  return factor(
      ndev, devs, n, tile, es, cplx,
      [&](cusolverMgHandle_t h, cudaLibMgMatrixDesc_t d, cudaDataType t, int64_t* lwork) {
        return g_api.potrf_work(h, fill, m, local, 1, 1, d, t, lwork);
      },
      [&](cusolverMgHandle_t h, cudaLibMgMatrixDesc_t d, cudaDataType t, void** work, int64_t lwork) {
        return g_api.potrf(h, fill, m, local, 1, 1, d, t, work, lwork, info);
      });
}

}  // namespace bok::vendor
