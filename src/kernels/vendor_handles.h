// One vendor-library handle (cuBLAS, cuSOLVER) per thread and device, created on first use: handles are not
// thread-safe, and one is bound to its device. A thread of the several-GPU paths (level3_mg.cu, qr_mg.cu) lives for one
// call, so its handles go with it; the process's main thread keeps its own to the end (the driver reclaims them:
// destroying them from exit handlers could meet a CUDA already shut down).
#pragma once

#include <cuda_runtime.h>
#include <unistd.h>

#include "offload/one_time_cost.h"

namespace bok::vendor {

template <class H>
class ThreadHandles {
 public:
  explicit ThreadHandles(void (*destroy)(H)) : destroy_(destroy) {}
  ~ThreadHandles() {
    if (gettid() == getpid() || !destroy_) return;
    for (H x : h_)
      if (x) destroy_(x);
  }
  // The current device's handle, made by create(&handle) (true on success) on its first use; nullptr if that failed.
  template <class Create>
  H current(Create&& create) {
    int cur = 0;
    cudaGetDevice(&cur);
    H* h = cur >= 0 && cur < kDevices ? &h_[cur] : &other_;
    if (!*h || (h == &other_ && other_dev_ != cur)) {
      bo::one_time::Timer one_time;  // once per thread and device
      if (!create(h)) return *h = nullptr;
      if (h == &other_) other_dev_ = cur;
    }
    return *h;
  }

 private:
  static constexpr int kDevices = 64;
  void (*destroy_)(H);
  H h_[kDevices] = {};
  H other_ = nullptr;  // a device beyond kDevices: one handle, replaced on a change
  int other_dev_ = -1;
};

}  // namespace bok::vendor
