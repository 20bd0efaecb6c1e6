// The policy's questions to the residency cache (offload/module/residency.h) about a call's host matrices: what a
// device copy would spare the call and cost it, whether asking can pay at all, and, before the module is up, a guess
// at what it would answer. Used by decide_auto (policy.cpp).
#pragma once

#include "offload/cuda_module_api.h"
#include "policy/cost_model.h"
#include "routines/all.h"

namespace blasoffload::policy {

// What the residency's questions cost a call on average on the lent H100 (resident_at_most).
constexpr double kAskUs = 50;

// The host matrices of a call a device copy could serve (a triangle counts as its square), and whether the call reads
// them; only for routines whose predictions credit the module's device copies.
int host_operands(const Call& c, bo::routines::Operand* out);
// The call's pointer for an operand slot (0 a, 1 b, 2 c, 3 d).
inline const void* operand_pointer(const bo_call& c, int slot) {
  return slot == 0 ? c.a : slot == 1 ? c.b : slot == 2 ? c.c : c.d;
}

// The module's answers for the call's host matrices: *cp with copies (made or to be made, the making shared over the
// reuses), *staged with the clean candidates staged instead, *making_us the candidates' whole making.
void ask_resident(const bo_cuda_module* mod, const Call& c, Call* cp, Call* staged, double* making_us);
// The most device copies could spare the call: every host matrix it reads that the module could copy.
double resident_at_most(const Call& c);
// Before the module is up: the same matrix seen again, counted the way the module would.
void guess_resident(const Call& c, Call* cp);
// Whether a device copy could serve one of the call's matrices (the model must then see every call).
bool may_become_resident(const Call& c);

}  // namespace blasoffload::policy
