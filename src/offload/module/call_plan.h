// How the generic executor (executor.h) handles one call's operands, as data: which bo_call pointer and leading
// dimension (or increment) each operand of the routine's descriptor uses, whether it is the program's device memory,
// a device copy or staged through the slot, how many elements are staged and copied back, and the call as the kernel
// sees it. No CUDA here (device-pointer detection is passed in), so CI tests it against the real descriptors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "offload/module/residency.h"
#include "routines/call.h"
#include "routines/operand.h"

namespace bom {

// One operand of the call.
struct Piece {
  bo::routines::Operand o;
  const void* host = nullptr;  // the call's pointer
  bool unread = false;         // no elements: left alone
  bool on_dev = false;         // the program's device memory, used in place
  char* resident = nullptr;    // its device copy (residency), set by the executor
  size_t staged = 0;           // elements staged through the slot (packed form, staging.h)
  size_t back = 0;             // elements of a resident output copied back through the slot
  char* pin = nullptr;         // its pinned and device slices (executor)
  char* dev = nullptr;
};

struct CallPlan {
  bo_call call;  // as the core passed it
  int es = 4;    // element size
  int n = 0;     // operands
  Piece p[bo::routines::kMaxOperands];
  bool any_device = false;  // some operand is the program's device memory
  bool scalar_out = false;  // the routine returns a scalar (nrm2): call.c is a host scalar of the element type
};

// The call's operands from its descriptor (routines/all.h), each checked with is_device unless it has no elements.
// A routine with no operand in slot 2 and a non-null c returns a scalar there.
CallPlan plan_call(const bo_call& c, bool (*is_device)(const void*));

// Whether operand i may be served from a device copy (residency.h): matrices and triangles the call only reads, and
// the matrix outputs of routines whose policy credits device copies (descriptor trait kResidencyInPolicy: gemm's C,
// computed in its copy and written back). Other outputs are staged: a solve's right-hand sides and a syrk's triangle
// are rewritten by the program between calls far more often than they are reused.
bool resident_eligible(const CallPlan& plan, int i);

// The residency cache's view of an operand: a triangle is its n x n square, a strided vector 1 x n with ld |inc|.
Residency::Operand resident_view(const void* p, const bo::routines::Operand& o, int es);

// Once each host operand's device copy is known (Piece::resident): elements staged and copied back; returns the bytes
// staged.
double settle(CallPlan* plan);

// The call as the kernel sees it: operand i of a staged piece at staged[i] (packed: leading dimension rows, increment
// 1), a resident one at its copy (the host's layout), the program's device memory and unread operands as given; a
// scalar result at `result`. Used twice: with placeholder addresses to choose the configuration, then with the slot's.
bo_call kernel_call(const CallPlan& plan, const void* const staged[3], void* result);

}  // namespace bom
