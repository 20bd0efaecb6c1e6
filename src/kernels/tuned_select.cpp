// The installed tuned table and the per-call lookup: kernel key and dimensions from the arguments,
// nearest tile, then the registry entries of the family named there (precomputed at load).
#include "kernels/tuned_select.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "tuning/keys.h"

namespace bok {
namespace {

struct KernelChoice {
  const bo::tuning::KernelTable* table = nullptr;
  const bo::tuning::Tile* first = nullptr;
  // Per tile: registry indices of the chosen family and of the best own family (one per transpose
  // variant at most; -1 padded).
  std::vector<std::array<int, 4>> chosen, own;
};

bo::tuning::Table g_table;
bool g_have = false;
std::string g_info = "tuned parameters: none loaded (built-in defaults)";
std::map<std::string, KernelChoice> g_kernels;
// The table's kernels by key index (tuning/keys.h: precision * kKeysPerPrecision + slot), so that a call's lookup is
// an array access.
KernelChoice* g_by_key[bo::tuning::kKeyCount] = {};

// The registry entries of a family for a routine. own: ours only (a table's own column names cuBLAS where no own
// configuration ran, as for the complex routines other than the norms: the caller's built-in own choice then decides).
std::array<int, 4> family_entries(int routine, const std::string& family, bool own, std::set<std::string>* unknown) {
  std::array<int, 4> r{-1, -1, -1, -1};
  size_t count = 0;
  const bo_kernel_entry* e = registry_entries(&count);
  int k = 0, named = 0;
  for (size_t i = 0; i < count && k < 4; ++i) {
    if (e[i].routine != routine || family != e[i].family) continue;
    ++named;
    if (e[i].vendor != 2 && !(own && e[i].vendor)) r[k++] = int(i);
  }
  if (named == 0 && unknown) unknown->insert(family);
  return r;
}

}  // namespace

void load_tuned_params(const bo::tuning::DeviceInfo& dev, const char* override_path,
                       const std::vector<std::string>& search_dirs, void (*log)(int level, const char* message)) {
  bo::tuning::Resolution res = bo::tuning::resolve_table(dev, override_path, search_dirs);
  for (const std::string& w : res.warnings) log(0, w.c_str());
  g_info = res.message;
  g_kernels.clear();
  for (auto& k : g_by_key) k = nullptr;
  g_have = res.table.has_value();
  if (!g_have) {
    log(1, g_info.c_str());
    return;
  }
  g_table = std::move(*res.table);
  std::set<std::string> unknown;
  for (int key = 0; key < bo::tuning::kKeyCount; ++key) {
    const char* name = bo::tuning::key_name(key);
    if (!name) continue;
    auto it = g_table.kernels.find(name);
    if (it == g_table.kernels.end() || it->second.tiles.empty()) continue;
    KernelChoice& c = g_kernels[name];
    c.table = &it->second;
    c.first = it->second.tiles.data();
    const int routine = bo::tuning::key_routine(key);
    for (const bo::tuning::Tile& t : it->second.tiles) {
      c.chosen.push_back(family_entries(routine, t.config, false, &unknown));
      c.own.push_back(family_entries(routine, t.own_config.empty() ? t.config : t.own_config, true, &unknown));
    }
    g_by_key[key] = &c;
  }
  log(1, g_info.c_str());
  for (const std::string& f : unknown) {
    const std::string m = "tuned parameters: configuration \"" + f +
                          "\" is not built into this module; the built-in choice is used where the table names it";
    log(0, m.c_str());
  }
}

namespace {
// The table key (tuning/keys.h) and the tile coordinates of a call; -1 for a routine without a key.
int key_and_dims(int r, const bo_call* a, int64_t* dims) {
  if (r < 0 || r >= BO_R_COUNT) return -1;
  const bo_routine_kind kind = bo_routine_kind_of(r);
  // The transpose letter that picks gemv's and trsv's key: op = {trans} and {uplo, trans, diag}.
  const int key = bo::tuning::key_index(r, kind == BO_KIND_GEMV ? a->op[0] : kind == BO_KIND_TRSV ? a->op[1] : 'N');
  switch (kind) {
    case BO_KIND_NRM2:
    case BO_KIND_TRSV:
      dims[0] = a->n;
      break;
    case BO_KIND_GEMV:
      dims[0] = a->m;
      dims[1] = a->n;
      break;
    case BO_KIND_GEMM:
      dims[0] = a->m;
      dims[1] = a->n;
      dims[2] = a->k;
      break;
    case BO_KIND_TRSM:  // (triangle order, right-hand sides): a right-side solve is the left one transposed
      dims[0] = a->op[0] == 'R' ? a->n : a->m;
      dims[1] = a->op[0] == 'R' ? a->m : a->n;
      break;
    case BO_KIND_SYRK:
    case BO_KIND_HERK:
      dims[0] = a->n;
      dims[1] = a->k;
      break;
    default:
      return -1;
  }
  return key;
}
}  // namespace

const char* tuned_key(const bo_call* call, int64_t* dims) {
  for (int i = 0; i < 3; ++i) dims[i] = 1;
  const int key = key_and_dims(call->routine, call, dims);
  return key < 0 ? nullptr : bo::tuning::key_name(key);
}

double tuned_kernel_us(const bo_call* call) {
  int64_t dims[3] = {1, 1, 1};
  const int key = key_and_dims(call->routine, call, dims);
  if (key < 0 || !g_have || !g_by_key[key]) return -1;
  const bo::tuning::Tile* t = g_by_key[key]->table->nearest(dims);
  if (!t || !(t->rate > 0)) return -1;
  for (int64_t& d : dims) d = std::max<int64_t>(d, 1);
  const bo::tuning::KernelWork w = bo::tuning::kernel_work(key, dims);
  return (w.read + w.written) / (t->rate * 1e3);  // rate in GB/s or GFLOP/s: work / (rate * 1e9) seconds
}

int tuned_select(int routine, const bo_kernel_args* a, bool own) {
  if (!g_have) return -1;
  int64_t dims[3] = {1, 1, 1};
  const int key = key_and_dims(routine, a, dims);
  if (key < 0) return -1;
  const KernelChoice* c = g_by_key[key];
  if (!c) return -1;
  const bo::tuning::Tile* t = c->table->nearest(dims);
  if (!t) return -1;
  const std::array<int, 4>& cand = (own ? c->own : c->chosen)[size_t(t - c->first)];
  size_t count = 0;
  const bo_kernel_entry* e = registry_entries(&count);
  for (int i : cand)
    if (i >= 0 && e[i].can_implement(a)) return i;
  return -1;
}

const char* tuned_params_info() { return g_info.c_str(); }

}  // namespace bok
