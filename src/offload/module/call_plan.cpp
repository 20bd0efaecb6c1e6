// How the generic executor handles one call's operands (see call_plan.h).
#include "offload/module/call_plan.h"

#include <cstdlib>

#include "offload/module/staging.h"
#include "routines/all.h"

namespace bom {
namespace {

// The call's pointer for an operand slot (0 = a, 1 = b, 2 = c).
const void* slot_pointer(const bo_call& c, int slot) { return slot == 0 ? c.a : slot == 1 ? c.b : c.c; }
void set_slot_pointer(bo_call& c, int slot, const void* p) {
  if (slot == 0)
    c.a = p;
  else if (slot == 1)
    c.b = p;
  else
    c.c = const_cast<void*>(p);
}
// Where the operand's leading dimension (a matrix: lda/ldb/ldc by slot) or increment (a vector: the field its
// descriptor names) is kept.
int64_t* ld_field(bo_call& c, const Operand& o) {
  if (o.field == Operand::kIncx) return &c.incx;
  if (o.field == Operand::kIncy) return &c.incy;
  return o.slot == 0 ? &c.lda : o.slot == 1 ? &c.ldb : &c.ldc;
}

}  // namespace

CallPlan plan_call(const bo_call& c, bool (*is_device)(const void*)) {
  CallPlan plan;
  plan.call = c;
  plan.es = bo_element_size(bo_routine_precision(c.routine));
  Operand ops[bo::routines::kMaxOperands];
  plan.n = bo::routines::operands(c, ops);
  bool has_slot2 = false;
  for (int i = 0; i < plan.n; ++i) {
    Piece& p = plan.p[i];
    p.o = ops[i];
    p.host = slot_pointer(c, p.o.slot);
    has_slot2 |= p.o.slot == 2;
    p.unread = packed_elements(p.o) == 0;
    if (p.unread) continue;
    p.on_dev = is_device(p.host);
    plan.any_device |= p.on_dev;
  }
  plan.scalar_out = !has_slot2 && c.c != nullptr;
  return plan;
}

bool resident_eligible(const CallPlan& plan, int i) {
  const Piece& p = plan.p[i];
  if (p.unread || p.on_dev || p.o.shape == Operand::kVector) return false;
  return p.o.access == Operand::kIn || bo::routines::residency_in_policy(plan.call.routine);
}

Residency::Operand resident_view(const void* p, const Operand& o, int es) {
  if (o.shape == Operand::kVector) return {p, 1, o.rows, std::abs(o.ld), es};
  if (o.shape != Operand::kMatrix) return {p, o.rows, o.rows, o.ld, es};
  return {p, o.rows, o.cols, o.ld, es};
}

double settle(CallPlan* plan) {
  double bytes = 0;
  for (int i = 0; i < plan->n; ++i) {
    Piece& p = plan->p[i];
    if (p.unread || p.on_dev) continue;
    p.staged = p.resident ? 0 : size_t(packed_elements(p.o));
    p.back = p.resident && p.o.access != Operand::kIn ? size_t(packed_elements(p.o)) : 0;
    bytes += double(plan->es) * double(p.staged);
  }
  return bytes;
}

bo_call kernel_call(const CallPlan& plan, const void* const staged[3], void* result) {
  bo_call k = plan.call;
  for (int i = 0; i < plan.n; ++i) {
    const Piece& p = plan.p[i];
    int64_t* ld = ld_field(k, p.o);
    if (p.resident) {
      set_slot_pointer(k, p.o.slot, p.resident);
    } else if (p.staged) {
      set_slot_pointer(k, p.o.slot, staged[i]);
      *ld = packed_ld(p.o);
    }
  }
  if (plan.scalar_out) k.c = result;
  return k;
}

}  // namespace bom
