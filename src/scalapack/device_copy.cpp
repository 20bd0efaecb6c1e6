// Opens and frees the device copy of a ScaLAPACK submatrix through the CUDA module (see device_copy.h).
#include "scalapack/device_copy.h"

#include <cstring>

#include "offload/module_loader.h"

namespace blasoffload::scalapack {

namespace {
// The module where it has the shared memory entries (a module of API 16 or later has them all; a test's may not).
const bo_cuda_module* sharing_module() {
  const bo_cuda_module* m = gpu_module();
  return m && m->shared_alloc && m->shared_open && m->shared_close && m->regions_copy && m->lapack_in_place ? m
                                                                                                            : nullptr;
}
}  // namespace

bool DeviceCopy::create(std::size_t bytes, I handle[kHandleInts]) {
  release();
  const bo_cuda_module* m = sharing_module();
  unsigned char h[BO_SHARED_HANDLE_BYTES] = {};
  if (!m || m->shared_alloc(std::int64_t(bytes), &p_, h) != BO_CUDA_OK) return p_ = nullptr, false;
  std::memcpy(handle, h, sizeof h);
  m_ = m;
  owner_ = true;
  return true;
}

bool DeviceCopy::attach(const I handle[kHandleInts]) {
  release();
  const bo_cuda_module* m = sharing_module();
  unsigned char h[BO_SHARED_HANDLE_BYTES];
  std::memcpy(h, handle, sizeof h);
  if (!m || m->shared_open(h, &p_) != BO_CUDA_OK) return p_ = nullptr, false;
  m_ = m;
  owner_ = false;
  return true;
}

void DeviceCopy::release() {
  if (p_ && m_) m_->shared_close(p_, owner_ ? 1 : 0);
  p_ = nullptr;
  m_ = nullptr;
  owner_ = false;
}

}  // namespace blasoffload::scalapack
