// The dense copy of a ScaLAPACK submatrix in the memory of process (0,0)'s GPU, which the grid's other processes of
// the node open too (CUDA IPC): each copies its own blocks to and from it through its own GPU's DMA, and (0,0)
// factors it there in place. The matrix then crosses host memory once each way, where the copy in shared host memory
// (dense_copy.h) has it copied in, staged up to the GPU, staged down and copied out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "offload/cuda_module_api.h"
#include "scalapack/gather.h"

namespace blasoffload::scalapack {

// The handle another process opens the copy with, as BLACS integers (broadcast with the others' instructions).
constexpr int kHandleInts = BO_SHARED_HANDLE_BYTES / int(sizeof(I));

class DeviceCopy {
 public:
  DeviceCopy() = default;
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { release(); }

  // Process (0,0): `bytes` of zeroed memory on its GPU, and their handle. False (and nothing held) when the module,
  // the memory or the handle cannot be had.
  bool create(std::size_t bytes, I handle[kHandleInts]);
  // Another process: opens (0,0)'s copy on its own GPU's context (loading the CUDA module if this process has not
  // yet). False when it cannot.
  bool attach(const I handle[kHandleInts]);
  // Closes the copy (another process) or frees it (process (0,0): only once every other process has closed it).
  void release();

  void* data() const { return p_; }
  const bo_cuda_module* module() const { return m_; }

 private:
  const bo_cuda_module* m_ = nullptr;
  void* p_ = nullptr;
  bool owner_ = false;
};

// Copies this process's own chunks of sub(A) between its local array `a` and the device copy `g` (m x n, leading
// dimension ldg): copy_own_part's device twin, every run of rows one region of the module's ring. False on a CUDA
// failure (the destination then partly written).
template <class T>
bool copy_own_part_device(const DeviceCopy& d, const Layout& L, std::int64_t ia, std::int64_t ja, std::int64_t m,
                          std::int64_t n, T* a, T* g, std::int64_t ldg, Part part, bool into_g) {
  std::vector<bo_region> regions;
  for (const Chunk& c : chunks(L, ia, ja, m, n, part)) {
    if (c.pr != L.myrow || c.pc != L.mycol) continue;
    for_each_run(L, c, [&](std::int64_t r, std::int64_t gr, std::int64_t run) {
      regions.push_back(bo_region{a + (c.lr + r) + c.lc * std::int64_t(L.lld), std::int64_t(L.lld), g + gr + c.gc * ldg,
                                  ldg, run, c.w});
    });
  }
  return d.module()->regions_copy(regions.data(), std::int64_t(regions.size()), int(sizeof(T)), into_g ? 1 : 0) ==
         BO_CUDA_OK;
}

}  // namespace blasoffload::scalapack
