// The kernel keys (keys.h): their names built once from the routine list, in static storage.
#include "tuning/keys.h"

#include <cstdio>
#include <cstring>

namespace bo::tuning {
namespace {

// The longest name is a routine's ("dznrm2", "zgemv") and a suffix: 16 bytes leave room.
constexpr int kNameBytes = 16;

struct Keys {
  int routine[kKeyCount];
  char name[kKeyCount][kNameBytes];
  Keys() {
    for (int i = 0; i < kKeyCount; ++i) {
      const KeySlot& s = kKeySlots[i % kKeysPerPrecision];
      routine[i] = bo_routine_id(s.kind, bo_precision(i / kKeysPerPrecision));
      name[i][0] = '\0';
      if (routine[i] >= 0) std::snprintf(name[i], kNameBytes, "%s%s", bo_routine_name(routine[i]), s.suffix);
    }
  }
};

// Built at the first use (no heap: fixed arrays), so that lookups on the policy's path never allocate.
const Keys& keys() {
  static const Keys k;
  return k;
}

}  // namespace

int key_index(int routine, char trans) {
  if (routine < 0 || routine >= BO_R_COUNT) return -1;
  const bo_routine_kind kind = bo_routine_kind_of(routine);
  for (int s = 0; s < kKeysPerPrecision; ++s) {
    const KeySlot& k = kKeySlots[s];
    if (k.kind != kind || (k.trans && (k.trans == 'N') != (trans == 'N'))) continue;
    return int(bo_routine_precision(routine)) * kKeysPerPrecision + s;
  }
  return -1;
}

const char* key_name(int index) {
  if (index < 0 || index >= kKeyCount || keys().routine[index] < 0) return nullptr;
  return keys().name[index];
}

int key_routine(int index) { return index < 0 || index >= kKeyCount ? -1 : keys().routine[index]; }

int find_key(const std::string& name) {
  for (int i = 0; i < kKeyCount; ++i)
    if (keys().routine[i] >= 0 && name == keys().name[i]) return i;
  return -1;
}

}  // namespace bo::tuning
