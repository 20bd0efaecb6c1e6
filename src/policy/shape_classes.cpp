// The class table, built once from the routine descriptors (see shape_classes.h).
#include "policy/shape_classes.h"

#include "routines/all.h"

namespace blasoffload::policy {
namespace {

struct Table {
  std::vector<std::string> names;
  std::vector<double> per_work;
  std::vector<bool> by_bytes;
  RoutineClasses of[BO_R_COUNT];
  Table() {
    for (int r = 0; r < BO_R_COUNT; ++r)
      bo::routines::visit(r, [&](auto t) {
        using D = typename decltype(t)::type;
        // The precision's letter, not the name's: scnrm2's classes are "cnrm2", not snrm2's.
        const char letter = bo_precision_letter(bo_routine_precision(r));
        of[r].first = int(names.size());
        for (const bo::routines::ShapeClassInfo& c : D::kClasses) {
          names.push_back(std::string(1, letter) + c.suffix);
          per_work.push_back(c.by_bytes ? c.size_per_work * bo_element_size(bo_routine_precision(r)) : c.size_per_work);
          by_bytes.push_back(c.by_bytes);
          ++of[r].count;
        }
        return 0;
      });
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const std::vector<std::string>& class_names() { return table().names; }

int class_index(const std::string& name) {
  const auto& n = table().names;
  for (std::size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) return int(i);
  return -1;
}

bool class_by_bytes(int cls) { return table().by_bytes[std::size_t(cls)]; }

RoutineClasses classes_of(int routine) { return table().of[routine]; }

double class_size_per_work(int routine, int i) { return table().per_work[std::size_t(table().of[routine].first + i)]; }

int classify(const bo_call& c, double* size) {
  return bo::routines::visit(c.routine, [&](auto t) {
    using D = typename decltype(t)::type;
    *size = D::class_size(c);
    return table().of[c.routine].first + D::shape_class(c);
  });
}

}  // namespace blasoffload::policy
