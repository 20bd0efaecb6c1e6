// cuSOLVERMg's column layout (mg_layout.h): every column of the matrix belongs to exactly one device's local array,
// at the place the pivots' gathering and the transfers assume, and the block widths follow the rule.
#include <gtest/gtest.h>

#include <vector>

#include "offload/module/mg_layout.h"

namespace bom {
namespace {

TEST(MgLayout, EveryColumnOnceWhereTheTransfersPutIt) {
  for (int devices : {1, 2, 3, 4, 8})
    for (int64_t n : {1, 31, 32, 50, 255, 256, 257, 1000, 32768, 65536 + 17}) {
      const MgLayout l = mg_layout(n, devices);
      std::vector<int> owner(size_t(n), 0);
      int64_t local_total = 0;
      for (int q = 0; q < devices; ++q) {
        local_total += l.local_blocks(q);
        for (int64_t t = 0; t < l.local_blocks(q); ++t) {
          const int64_t b = l.global_block(q, t);
          ASSERT_LT(b, l.blocks);
          ASSERT_EQ(b % devices, q);
          for (int64_t c = 0; c < l.block_cols(b); ++c) {
            // Local column t * tile + c of device q is the matrix's column b * tile + c (the transfers' placement);
            // the pivots' gathering maps it back the same way.
            const int64_t j = l.global_column(q, t * l.tile + c);
            ASSERT_EQ(j, b * l.tile + c);
            ASSERT_LT(j, n);
            ++owner[size_t(j)];
          }
        }
      }
      EXPECT_EQ(local_total, l.blocks) << n << " " << devices;
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(owner[size_t(j)], 1) << "column " << j << " n " << n;
    }
}

TEST(MgLayout, BlockWidths) {
  EXPECT_EQ(mg_layout(65536, 2).tile, 256);
  EXPECT_EQ(mg_layout(131072, 4).tile, 256);
  EXPECT_EQ(mg_layout(50, 2).tile, 32);  // 25 columns a device, rounded up to 32: each device gets a block
  EXPECT_EQ(mg_layout(50, 2).blocks, 2);
  EXPECT_EQ(mg_layout(1000, 4).tile, 256);
  EXPECT_EQ(mg_layout(600, 4).tile, 160);  // 150 a device, a multiple of 32
  EXPECT_EQ(mg_layout(600, 4).blocks, 4);
  for (int64_t n : {1, 5, 31}) EXPECT_EQ(mg_layout(n, 2).tile, 32);
}

}  // namespace
}  // namespace bom
