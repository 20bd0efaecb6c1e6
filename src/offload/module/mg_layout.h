// cuSOLVERMg's 1-D block-cyclic column layout as data (pure C++, so CI tests it without a GPU): the block width for an
// order and a device count, how many blocks each device holds, and where a device's local column lies in the matrix.
#pragma once

#include <algorithm>
#include <cstdint>

namespace bom {

struct MgLayout {
  int64_t n = 0;       // the matrix's order
  int devices = 1;     // GPUs sharing it
  int64_t tile = 1;    // columns per block
  int64_t blocks = 0;  // ceil(n / tile), dealt round-robin: block b to device b % devices

  // Blocks device q holds, one after another in its local array (leading dimension n).
  int64_t local_blocks(int q) const { return blocks / devices + (q < blocks % devices ? 1 : 0); }
  // The matrix's block of device q's t-th local block.
  int64_t global_block(int q, int64_t t) const { return q + t * devices; }
  // The matrix's column of device q's local column l (columns past n belong to no one: the last block's padding).
  int64_t global_column(int q, int64_t l) const { return (l / tile * devices + q) * tile + l % tile; }
  // Columns of block b (the last one may be narrower).
  int64_t block_cols(int64_t b) const { return std::min(tile, n - b * tile); }
};

// Blocks of 256 columns (cuSOLVERMg's examples' width, a panel of its factorization); a matrix too small to give
// every device a block of 256 gets blocks of a multiple of 32, down to 32.
inline MgLayout mg_layout(int64_t n, int devices) {
  MgLayout l;
  l.n = n;
  l.devices = std::max(devices, 1);
  const int64_t share = (n + l.devices - 1) / l.devices;
  l.tile = std::min<int64_t>(256, std::max<int64_t>(32, (share + 31) / 32 * 32));
  l.blocks = (n + l.tile - 1) / l.tile;
  return l;
}

}  // namespace bom
