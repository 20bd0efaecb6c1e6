// The module's residency cache (residency.h) on its GPU: device memory, the uploads of written pages through a
// pinned bounce buffer, the program's own registrations, BLASOFFLOAD_RESIDENCY and BLASOFFLOAD_RESIDENCY_MEM.
#pragma once

#include <cstdint>

#include "offload/cuda_module_api.h"
#include "offload/module/residency.h"

namespace bom {

// The cache of `device`, or nullptr when residency is off (setting, kernel without write tracking, RDMA library in the
// process); the first call decides and logs why.
Residency* resident_copies(const bo_cuda_host_services* host, int device);
// The summary line (exit), empty when the cache never started.
void resident_copies_summary(const bo_cuda_host_services* host);
// A call's use number (residency.h acquire): the policy's questions about a coming call (the first of them starts a
// new number) and the module call that follows on the same thread share one; a module call nobody asked about gets
// its own.
uint64_t resident_query_use(bool first_of_call);
uint64_t resident_call_use();
// Whether the calling thread's current call may make device copies (the policy's stage_candidates, cuda_module_api.h):
// set before the call, cleared by call_done() and by the next call's first question.
void resident_stage_candidates();
bool resident_may_copy();
void resident_call_done();

}  // namespace bom
