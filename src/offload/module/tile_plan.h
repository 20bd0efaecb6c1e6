// The tiled gemm schedule (either precision) for host operands, as data: tile sizes, K passes, how many panels each
// device keeps, and the order of work. Pure C++ (no CUDA) so CI tests it on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bom {

struct PlanInput {
  int64_t m = 0, n = 0, k = 0;     // the GPU's part of C (m x n) and the inner dimension
  bool reads_c = false;            // beta != 0
  int elem_size = 4;               // bytes of one element: 4 (float) or 8 (double)
  int64_t tile = 2048;             // requested edge of the C tiles
  int64_t budget_bytes = 0;        // device memory the engine may use per device (panels, tiles, workspace)
  int64_t workspace_bytes = 0;     // kernel scratch per device
  int64_t chunk_bytes = 32 << 20;  // a pinned staging chunk: an output tile must fit in one
  bool whole_panels = true;        // false: never the whole-panel order (the tests' A/B of the two orders)
};

// C is cut into mt x nt tiles of mb x nb (the last row / column of tiles partial). op(A) is cut into mt row
// panels (mb x kc) and op(B) into nt column panels (kc x nb). A device keeps up to `a_slots` A panels and two B
// panels. Work items are (group of a_slots consecutive A panels) x (one B panel column): a device uploads the
// group's A panels once and streams B panels past them, so A moves once per device and B once per group
// (once in all when every A panel fits). When not even one panel pair fits, K is split into passes that each
// accumulate into C (beta for the first pass, 1 after).
// Whole panels: where every A panel and every B panel fit together in half the budget (one K pass), each has a slot of
// its own and the work items are single tiles in growing squares (shell s: the tiles of row s and of column s up to
// their corner), so each new panel brings the work of a whole row or column of tiles while the next one uploads. In
// the column order the first column of tiles waits on every A panel: dgemm n = 32768 spent about 0.2 s of its 1.43 s
// on one H200 (kernels 1.2 s) and of its 0.80 s on two (0.57 s) waiting on them. Half the budget, not all of it: the
// arena is grow-only, and the order is not worth holding the rest of the GPU for.
struct Plan {
  bool ok = false;
  std::string why;  // when !ok
  int64_t mb = 0, nb = 0, kc = 0;
  int64_t mt = 0, nt = 0, passes = 0;
  int64_t a_slots = 0, b_slots = 2, c_slots = 3;
  bool whole = false;        // whole panels: a_slots = mt, b_slots = nt, items single tiles in growing squares
  int64_t groups = 0;        // ceil(mt / a_slots); whole panels: mt
  int64_t bytes_needed = 0;  // device memory for this plan, per device

  int64_t tile_rows(int64_t i) const { return i + 1 < mt ? mb : m_ - i * mb; }
  int64_t tile_cols(int64_t j) const { return j + 1 < nt ? nb : n_ - j * nb; }
  int64_t pass_k0(int64_t p) const { return p * kc; }
  int64_t pass_k(int64_t p) const { return p + 1 < passes ? kc : k_ - p * kc; }

  int64_t m_ = 0, n_ = 0, k_ = 0;
};

Plan make_plan(const PlanInput& in);

// Several devices share a call: C's tiles in a grid of blocks, one per device, so that a device moves only its
// block's A and B panels. With one queue for all, 4 GPUs each moved all of A and a quarter of B (10 GiB apiece for a
// double 32768 product, not 8), and each one's first work item waited on every A panel. A device that has finished
// its block takes items from the others' (the same tiles, the same bits: a tile's result does not depend on the GPU).
struct TileBlock {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;  // tile rows [r0, r1) x tile columns [c0, c1)
  int64_t groups = 0;                      // ceil((r1 - r0) / a_slots); whole panels: r1 - r0 (one tile an item)
  int64_t items() const { return groups * (c1 - c0); }
};
// The blocks for `devices` devices: pr x pc of them (pr * pc = devices) with the least panel traffic (m / pr + n / pc
// elements of panel edge per device), as many as the tile grid allows; one block (the whole of C) for one device.
std::vector<TileBlock> split_tiles(const Plan& p, int devices);
// Work item w of block b: its group of A panels [i0, i1) (a_slots consecutive rows of the block's tiles) and its B
// panel j. Columns snake from group to group so that consecutive items share a B panel. Whole panels: one tile
// (i1 = i0 + 1), the block's tiles in growing squares from its first corner.
void block_item(const Plan& p, const TileBlock& b, int64_t w, int64_t* i0, int64_t* i1, int64_t* j);

// "8G", "512M", "300K", "123" (bytes); -1 when malformed.
int64_t parse_bytes(const char* s);

}  // namespace bom
