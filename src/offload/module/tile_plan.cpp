// The tiled sgemm schedule (see tile_plan.h).
#include "offload/module/tile_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace bom {
namespace {
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t kAlign = 256;
int64_t al(int64_t b) { return (b + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::vector<TileBlock> split_tiles(const Plan& p, int devices) {
  int64_t best_r = 1, best_c = 1;
  double best = -1;
  for (int64_t pr = 1; pr <= devices; ++pr) {
    if (devices % pr) continue;
    const int64_t pc = devices / pr;
    if (pr > p.mt || pc > p.nt) continue;
    const double edge = double(p.m_) / double(pr) + double(p.n_) / double(pc);
    if (best < 0 || edge < best) best = edge, best_r = pr, best_c = pc;
  }
  if (best < 0) {  // a tile grid too small for a block per device: blocks along its longer side, the rest steal
    if (p.mt >= p.nt)
      best_r = std::min<int64_t>(devices, p.mt), best_c = 1;
    else
      best_r = 1, best_c = std::min<int64_t>(devices, p.nt);
  }
  std::vector<TileBlock> out;
  for (int64_t r = 0; r < best_r; ++r)
    for (int64_t c = 0; c < best_c; ++c) {
      TileBlock b;
      b.r0 = p.mt * r / best_r;
      b.r1 = p.mt * (r + 1) / best_r;
      b.c0 = p.nt * c / best_c;
      b.c1 = p.nt * (c + 1) / best_c;
      b.groups = p.whole ? b.r1 - b.r0 : cdiv(b.r1 - b.r0, p.a_slots);
      out.push_back(b);
    }
  return out;
}

namespace {
// Tile w of an r x c grid in growing squares: shell s holds the tiles whose larger coordinate is s, first row s's up to
// the corner (they need A panel s and B panels already there), then column s's (B panel s), then the corner.
void shell_tile(int64_t r, int64_t c, int64_t w, int64_t* u, int64_t* v) {
  auto before = [&](int64_t s) { return std::min(s, r) * std::min(s, c); };  // tiles of shells 0 .. s-1
  // The shell, in constant time (small tiles make hundreds of thousands of items): squares up to the shorter side,
  // then shells of that side's length each.
  const int64_t side = std::min(r, c);
  int64_t s = 0;
  if (w < side * side) {
    s = int64_t(std::sqrt(double(w)));
    while (s * s > w) --s;
    while ((s + 1) * (s + 1) <= w) ++s;
  } else {
    s = side + (w - side * side) / side;
  }
  int64_t o = w - before(s);
  const int64_t row_part = s < r ? std::min(s, c) : 0;
  if (o < row_part) {
    *u = s, *v = o;
    return;
  }
  o -= row_part;
  const int64_t col_part = s < c ? std::min(s, r) : 0;
  if (o < col_part) {
    *u = o, *v = s;
    return;
  }
  *u = s, *v = s;  // the corner
}
}  // namespace

void block_item(const Plan& p, const TileBlock& b, int64_t w, int64_t* i0, int64_t* i1, int64_t* j) {
  if (p.whole) {
    int64_t u = 0, v = 0;
    shell_tile(b.r1 - b.r0, b.c1 - b.c0, w, &u, &v);
    *i0 = b.r0 + u;
    *i1 = *i0 + 1;
    *j = b.c0 + v;
    return;
  }
  const int64_t nc = b.c1 - b.c0, g = w / nc, c = w % nc;
  *i0 = b.r0 + g * p.a_slots;
  *i1 = std::min(b.r1, *i0 + p.a_slots);
  *j = b.c0 + ((g % 2 == 0) ? c : nc - 1 - c);
}

Plan make_plan(const PlanInput& in) {
  Plan p;
  p.m_ = in.m;
  p.n_ = in.n;
  p.k_ = in.k;
  if (in.m <= 0 || in.n <= 0 || in.k <= 0) {
    p.why = "empty product";
    return p;
  }
  const int64_t es = in.elem_size;
  if (es != 4 && es != 8 && es != 16) {  // s; d and c; z
    p.why = "unsupported element size";
    return p;
  }
  int64_t tile = std::max<int64_t>(1, in.tile);
  // An output tile travels back through one pinned chunk.
  while (tile > 1 && es * tile * tile > in.chunk_bytes) tile /= 2;
  // K passes move C through the host once per pass, so tiles shrink to 512 first; below that only when not even a
  // single K column of panels fits.
  const int64_t pass_tile = std::min<int64_t>(tile, 512);
  for (;;) {
    const int64_t mb = std::min(tile, in.m), nb = std::min(tile, in.n);
    const int64_t c_bytes = al(es * mb * nb);
    const int64_t fixed = p.c_slots * c_bytes + al(in.workspace_bytes);
    const int64_t per_k = es * mb + p.b_slots * es * nb;  // one A panel and the B panels, per unit of K
    const int64_t room = in.budget_bytes - fixed - 3 * kAlign;
    const int64_t kc = room > 0 ? room / per_k : 0;
    if (kc < in.k && tile > pass_tile) {
      tile = std::max(pass_tile, tile / 2);
      continue;
    }
    if (kc < 1) {
      if (tile > 1) {
        tile /= 2;
        continue;
      }
      p.why = "device memory limit too small for one tile";
      return p;
    }
    p.mb = mb;
    p.nb = nb;
    p.mt = cdiv(in.m, mb);
    p.nt = cdiv(in.n, nb);
    if (kc >= in.k) {
      p.passes = 1;
      p.kc = in.k;
      const int64_t a_bytes = al(es * mb * in.k), b_bytes = al(es * in.k * nb);
      if (in.whole_panels && p.mt * a_bytes + p.nt * b_bytes <= (in.budget_bytes - fixed) / 2) {
        p.whole = true;
        p.a_slots = p.mt;
        p.b_slots = p.nt;
      } else {
        p.a_slots = std::max<int64_t>(1, std::min(p.mt, (in.budget_bytes - fixed - p.b_slots * b_bytes) / a_bytes));
      }
    } else {
      p.passes = cdiv(in.k, kc);  // balanced passes, each as deep as memory allows
      p.kc = cdiv(in.k, p.passes);
      p.a_slots = 1;
    }
    p.groups = p.whole ? p.mt : cdiv(p.mt, p.a_slots);
    p.bytes_needed = fixed + p.a_slots * al(es * mb * p.kc) + p.b_slots * al(es * p.kc * nb);
    p.ok = true;
    return p;
  }
}

int64_t parse_bytes(const char* s) {
  if (!s || !*s) return -1;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || v < 0) return -1;
  double mult = 1;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case '\0':
      break;
    case 'K':
      mult = 1024.0;
      break;
    case 'M':
      mult = 1024.0 * 1024;
      break;
    case 'G':
      mult = 1024.0 * 1024 * 1024;
      break;
    case 'T':
      mult = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      return -1;
  }
  if (*end && end[1] && !(std::toupper(static_cast<unsigned char>(end[1])) == 'B' && !end[2])) return -1;
  return int64_t(v * mult);
}

}  // namespace bom
