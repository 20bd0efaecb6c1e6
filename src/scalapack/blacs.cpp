// Finds the BLACS functions of the process's ScaLAPACK once, by name, so that the library links no MPI and no BLACS.
#include "scalapack/blacs.h"

#include <dlfcn.h>

#include <mutex>

namespace blasoffload::scalapack {

namespace {

template <class F>
bool find(F*& f, const char* name) {
  f = reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, name));
  return f != nullptr;
}

}  // namespace

const Blacs* blacs() {
  static Blacs b;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* sd[4] = {"sgesd2d_", "dgesd2d_", "cgesd2d_", "zgesd2d_"};
    const char* rv[4] = {"sgerv2d_", "dgerv2d_", "cgerv2d_", "zgerv2d_"};
    const char* bs[4] = {"sgebs2d_", "dgebs2d_", "cgebs2d_", "zgebs2d_"};
    const char* br[4] = {"sgebr2d_", "dgebr2d_", "cgebr2d_", "zgebr2d_"};
    ok = find(b.gridinfo, "blacs_gridinfo_") && find(b.igamx2d, "igamx2d_") && find(b.igebs2d, "igebs2d_") &&
         find(b.igebr2d, "igebr2d_") && find(b.igesd2d, "igesd2d_") && find(b.igerv2d, "igerv2d_");
    for (int t = 0; t < 4 && ok; ++t)
      ok = find(b.gesd2d[t], sd[t]) && find(b.gerv2d[t], rv[t]) && find(b.gebs2d[t], bs[t]) && find(b.gebr2d[t], br[t]);
  });
  return ok ? &b : nullptr;
}

}  // namespace blasoffload::scalapack
