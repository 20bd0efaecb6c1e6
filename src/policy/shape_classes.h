// The policy's CPU-rate classes as data: every routine descriptor's classes (routines/<routine>.h kClasses) in every
// precision, numbered once ("sgemm.square" ... "dsyrk"), with the class and size of a call.
#pragma once

#include <string>
#include <vector>

#include "routines/call.h"

namespace blasoffload::policy {

// All classes, in routine-list order: "sgemm.square", "sgemm.rank_k", "sgemm.panel", "dgemm.square", ...
const std::vector<std::string>& class_names();
inline int class_count() { return int(class_names().size()); }
inline const char* class_name(int cls) { return class_names()[std::size_t(cls)].c_str(); }
// Whether the class's size is bytes (Level 1 and 2) rather than flops.
bool class_by_bytes(int cls);
// -1 for a name that is no class.
int class_index(const std::string& name);

// The classes of one routine: [first, first + count).
struct RoutineClasses {
  int first = 0, count = 0;
};
RoutineClasses classes_of(int routine);

// A routine's class i: its size per unit of the descriptor's work() (for the policy's floors).
double class_size_per_work(int routine, int i);

// Which class a call belongs to, and its size in the class's unit (bytes, or flops for Level 3).
int classify(const bo_call& c, double* size);

}  // namespace blasoffload::policy
