// The CUDA plugin's reduction plans (plugins/cuda/src/reduce_plan.cpp), host
// code tested without a GPU: which reductions read as bands, which run on the
// column kernels, and how those split the rows (every row in exactly one
// slice, the slices within the grid's limits, scratch for their partials).
#include "kernels.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace accel::cuda {
namespace {

ReducePlan plan_for(const std::vector<int64_t>& shape, const std::vector<int32_t>& axes) {
  bool reduced[kMaxRank] = {};
  for (int32_t axis : axes) reduced[axis] = true;
  return plan_reduction(static_cast<int32_t>(shape.size()), shape.data(), reduced);
}

TEST(CudaReducePlan, BatchNormStatisticsOverNhwcSplitTheirRowsOverManyBlocks) {
  // ResNet's first batch norm at batch 256: [256, 28, 28, 32] -> [32].
  const ReducePlan plan = plan_for({256, 28, 28, 32}, {0, 1, 2});
  EXPECT_TRUE(plan.banded);
  EXPECT_EQ(plan.outer, 1);
  EXPECT_EQ(plan.inner, 32);
  EXPECT_EQ(plan.reduced_count, 256 * 28 * 28);
  EXPECT_EQ(plan.out_count, 32);
  ASSERT_TRUE(plan.column_kernels);
  EXPECT_EQ(plan.chunks, 1024);  // one column tile: 1024 blocks from the rows alone
  EXPECT_EQ(plan.rows_per_chunk, 196);
  EXPECT_EQ(reduce_scratch_bytes(plan), 1024u * 32u * 8u);
}

TEST(CudaReducePlan, EnoughBlocksWithoutSplittingNeedNoScratch) {
  // Global average pooling at batch 256: [256, 7, 7, 128] -> [256, 128], 4 tiles x 256 bands.
  const ReducePlan plan = plan_for({256, 7, 7, 128}, {1, 2});
  EXPECT_TRUE(plan.banded);
  EXPECT_EQ(plan.outer, 256);
  EXPECT_EQ(plan.inner, 128);
  ASSERT_TRUE(plan.column_kernels);
  EXPECT_EQ(plan.chunks, 1);
  EXPECT_EQ(plan.rows_per_chunk, 49);
  EXPECT_EQ(reduce_scratch_bytes(plan), 0u);
}

TEST(CudaReducePlan, AxesOfSizeOneDoNotBreakABand) {
  const ReducePlan plan = plan_for({1, 70, 1, 9}, {1});
  EXPECT_TRUE(plan.banded);
  EXPECT_EQ(plan.outer, 1);
  EXPECT_EQ(plan.inner, 9);
  EXPECT_TRUE(plan.column_kernels);
  const ReducePlan beside_a_reduced_one = plan_for({5, 1, 40, 8}, {1, 2});
  EXPECT_TRUE(beside_a_reduced_one.banded);
  EXPECT_EQ(beside_a_reduced_one.outer, 5);
  EXPECT_EQ(beside_a_reduced_one.reduced_count, 40);
  EXPECT_TRUE(beside_a_reduced_one.column_kernels);
  const ReducePlan around_a_kept_one = plan_for({40, 1, 50, 16}, {0, 2});
  EXPECT_TRUE(around_a_kept_one.banded);
  EXPECT_EQ(around_a_kept_one.reduced_count, 2000);
  EXPECT_EQ(around_a_kept_one.inner, 16);
}

TEST(CudaReducePlan, OtherReductionsKeepTheGenericKernels) {
  const ReducePlan interleaved = plan_for({40, 5, 60}, {0, 2});  // a kept axis between reduced ones
  EXPECT_FALSE(interleaved.banded);
  EXPECT_FALSE(interleaved.column_kernels);
  const ReducePlan last_axis = plan_for({10, 1000}, {1});  // a band one element wide
  EXPECT_TRUE(last_axis.banded);
  EXPECT_EQ(last_axis.inner, 1);
  EXPECT_FALSE(last_axis.column_kernels);
  EXPECT_FALSE(plan_for({32, 64}, {0}).column_kernels);        // 32 rows: one thread per output
  EXPECT_TRUE(plan_for({33, 64}, {0}).column_kernels);
  EXPECT_FALSE(plan_for({0, 40}, {0}).column_kernels);         // an empty reduction
  EXPECT_FALSE(plan_for({40, 0}, {0}).column_kernels);         // an empty result
  EXPECT_FALSE(plan_for({65536, 40, 8}, {1}).column_kernels);  // outer past the grid's y
  EXPECT_TRUE(plan_for({65535, 40, 8}, {1}).column_kernels);
  EXPECT_FALSE(plan_for({5, 7}, {}).banded);                   // nothing reduced
  EXPECT_EQ(reduce_scratch_bytes(interleaved), 0u);
}

TEST(CudaReducePlan, EveryRowIsInExactlyOneSliceWithinTheGridsLimits) {
  for (int64_t rows : std::vector<int64_t>{33, 63, 64, 65, 127, 1000, 4097, 200704, 10000019, 4000000000}) {
    for (int64_t inner : std::vector<int64_t>{8, 31, 33, 128, 4096}) {
      for (int64_t outer : std::vector<int64_t>{1, 3, 300}) {
        SCOPED_TRACE(testing::Message() << "outer " << outer << ", rows " << rows << ", inner " << inner);
        const ReducePlan plan = plan_for({outer, rows, inner}, {1});
        ASSERT_TRUE(plan.column_kernels);
        EXPECT_GE(plan.chunks, 1);
        EXPECT_LE(plan.chunks, 65535);
        EXPECT_GE(plan.rows_per_chunk * plan.chunks, rows);       // every row read
        EXPECT_LT(plan.rows_per_chunk * (plan.chunks - 1), rows);  // no slice empty
        const int64_t blocks = (inner + 31) / 32 * outer;
        if (blocks >= 1024) {
          EXPECT_EQ(plan.chunks, 1);
        }
        if (plan.chunks > 1) {
          EXPECT_GE(plan.rows_per_chunk, 64);
        }
        EXPECT_EQ(reduce_scratch_bytes(plan),
                  plan.chunks == 1 ? 0u : static_cast<uint64_t>(outer * plan.chunks * inner) * 8u);
      }
    }
  }
}

// BATCH_NORM's sums split the rows as the column reductions do, for any
// number of features (a reduction keeps fewer than 8 on the generic kernel).
TEST(CudaBatchNormPlan, SplitsTheRowsAsTheColumnReductions) {
  const BatchNormPlan plan = plan_batch_norm(256 * 28 * 28, 32);
  const ReducePlan reduction = plan_for({256, 28, 28, 32}, {0, 1, 2});
  EXPECT_EQ(plan.chunks, reduction.chunks);
  EXPECT_EQ(plan.rows_per_chunk, reduction.rows_per_chunk);
  EXPECT_EQ(batch_norm_scratch_bytes(plan), 1024u * 2u * 32u * 8u + 3u * 32u * 4u);
  for (const auto& [rows, features] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 5}, {63, 3}, {64, 3}, {65, 1}, {1000, 2}, {4000, 40}, {100000, 512}, {7, 100000}}) {
    const BatchNormPlan split = plan_batch_norm(rows, features);
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(features));
    EXPECT_GE(split.chunks, 1);
    EXPECT_LE(split.chunks, 65535);
    EXPECT_GE(split.rows_per_chunk * split.chunks, rows);           // every row in a slice
    EXPECT_LT(split.rows_per_chunk * (split.chunks - 1), rows);      // none empty
    if (split.chunks > 1) {
      EXPECT_GE(split.rows_per_chunk, 64);
    }
  }
  const BatchNormPlan empty = plan_batch_norm(0, 8);
  EXPECT_EQ(empty.chunks, 1);
  EXPECT_EQ(empty.rows_per_chunk, 0);
}

}  // namespace
}  // namespace accel::cuda
