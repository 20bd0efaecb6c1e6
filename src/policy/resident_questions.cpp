// The policy's questions to the residency cache (see resident_questions.h).
#include "policy/resident_questions.h"

#include <algorithm>
#include <cstdint>

namespace blasoffload::policy {
namespace {

constexpr double kResidentMinBytes = BO_RESIDENT_MIN_BYTES;
constexpr double kCopyNsPerByte = BO_RESIDENT_COPY_NS_PER_BYTE;  // making a copy, before the module measured one

}  // namespace

// The host matrices of a call a device copy could serve (a triangle counts as its square), and whether the call reads
// them; only for routines whose predictions credit the module's device copies (the descriptors' kResidencyInPolicy:
// the others are predicted as moving everything, which errs toward the CPU).
int host_operands(const Call& c, bo::routines::Operand* out) {
  if (!bo::routines::residency_in_policy(c.call.routine)) return 0;
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = bo::routines::operands(c.call, ops);
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (ops[i].shape != bo::routines::Operand::kVector) out[k++] = ops[i];
  return k;
}

// What the module's device copies spare this call (residency.h). A resident operand moves only its written pages, after
// a scan. A clean candidate moves nothing once its copy exists, and making the copy (the module makes it if the call
// runs on the GPU, unless told to stage the call; it costs more than a call's staged transfer) is shared over the
// clean reuses seen so far: *cp. The same call with its candidates staged instead: *staged. Between the two, the copy
// is made once its share costs less than staging the matrix once more, that is once the transfers its earlier uses
// paid cover its making (ski rental), however the CPU compares. *making_us: the copies' whole making. What the model
// moves for a triangle is its elements; a copy covers its square.
void ask_resident(const bo_cuda_module* mod, const Call& c, Call* cp, Call* staged, double* making_us) {
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = host_operands(c, ops);
  const int e = bo::routines::element_size(c.call.routine);
  bool first = true;
  for (int i = 0; i < n; ++i) {
    const bo::routines::Operand& o = ops[i];
    const void* p = operand_pointer(c.call, o.slot);
    const double bytes = double(e) * double(o.rows) * double(o.cols);
    if (!p || bytes < kResidentMinBytes || o.ld < o.rows) continue;
    bo_resident_info info{};
    mod->host_resident(p, o.rows, o.cols, o.ld, e, first ? 1 : 0, &info);
    first = false;
    if (info.state == 0) continue;
    const double modelled = double(e) * o.elements();
    if (info.state == 1) {
      const double spared = o.read() ? std::max(0.0, modelled - double(info.upload_bytes)) : 0.0;
      for (Call* x : {cp, staged}) {
        x->check_us += info.check_us;
        x->resident_in += spared;
      }
    } else {
      cp->check_us += info.check_us / double(1 + std::max<int64_t>(info.reuses, 0));
      *making_us += info.check_us;
      if (o.read()) cp->resident_in += modelled;
      cp->candidate_in += modelled;
    }
  }
}

// The most device copies could spare the call: every host matrix it reads that the module could copy, as if copied
// already. Where even that leaves the CPU faster by the margin after paying for the questions (kAskUs a call), the
// module is not asked at all (no use counted, no sample armed or looked at): on the lent H100 its first questions
// about a matrix cost a CPU-routed call 0.5-2 ms (reading /proc/self/maps, protecting 64 sample pages) and every 16th
// a look of 0.6-0.8 ms, against calls of 0.1-0.3 ms (strtrs and sgetrs n = 1024 with one right-hand side: 1.2x the
// CPU alone while asked).
double resident_at_most(const Call& c) {
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = host_operands(c, ops);
  const int e = bo::routines::element_size(c.call.routine);
  double in = 0;
  for (int i = 0; i < n; ++i) {
    const bo::routines::Operand& o = ops[i];
    const double bytes = double(e) * double(o.rows) * double(o.cols);
    if (o.read() && operand_pointer(c.call, o.slot) && bytes >= kResidentMinBytes && o.ld >= o.rows)
      in += double(e) * o.elements();
  }
  return in;
}

// Before the module is up nothing can be asked: the same matrix seen again (this thread's last few large operands)
// is counted the way the module would (a copy after its third use, made at the rate copies are made before the
// module measured one, shared over the uses since), so that a program iterating on one matrix starts the GPU once
// the steady-state gain pays for it.
void guess_resident(const Call& c, Call* cp) {
  struct Seen {
    const void* p;
    int64_t rows, cols;
    int uses;
  };
  thread_local Seen seen[8] = {};
  thread_local unsigned next = 0;
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = host_operands(c, ops);
  const int e = bo::routines::element_size(c.call.routine);
  for (int i = 0; i < n; ++i) {
    const bo::routines::Operand& o = ops[i];
    const void* p = operand_pointer(c.call, o.slot);
    const double bytes = double(e) * double(o.rows) * double(o.cols);
    if (!o.read() || !p || bytes < kResidentMinBytes) continue;
    Seen* s = nullptr;
    for (Seen& q : seen)
      if (q.p == p && q.rows == o.rows && q.cols == o.cols) s = &q;
    if (!s) {
      s = &seen[next++ % 8];
      *s = Seen{p, o.rows, o.cols, 0};
    }
    if (++s->uses >= 3) {
      cp->resident_in += double(e) * o.elements();
      cp->check_us += bytes * kCopyNsPerByte * 1e-3 / double(s->uses - 1);
    }
  }
}

// Whether a device copy could serve one of the call's matrices (a routine whose predictions credit them, an operand of
// the module's minimum size or more): the model must then see every call, since the module counts the uses that decide
// when a copy pays (ask_resident) only in the model's queries.
bool may_become_resident(const Call& c) {
  bo::routines::Operand ops[bo::routines::kMaxOperands];
  const int n = host_operands(c, ops);
  const int e = bo::routines::element_size(c.call.routine);
  for (int i = 0; i < n; ++i)
    if (double(e) * double(ops[i].rows) * double(ops[i].cols) >= kResidentMinBytes) return true;
  return false;
}

}  // namespace blasoffload::policy
