// Device memory shared by the processes of one node, and the copies each makes to and from it (the module table's
// shared_alloc, shared_open, shared_close, regions_copy): the ScaLAPACK takeover gathers a matrix straight into the
// GPU memory of the process that factors it (src/scalapack/device_copy.h).
#pragma once

#include <cstdint>

#include "offload/cuda_module_api.h"

namespace bom {

int shared_alloc(int64_t bytes, void** dev, unsigned char handle[BO_SHARED_HANDLE_BYTES]);
int shared_open(const unsigned char handle[BO_SHARED_HANDLE_BYTES], void** dev);
void shared_close(void* dev, int owner);
int regions_copy(const bo_region* regions, int64_t count, int elem_size, int to_device);

}  // namespace bom
