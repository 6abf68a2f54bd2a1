// How a reduction reads its input (ReducePlan, kernels.hpp): the generic
// strided form every reduction has, the banded form of those whose reduced axes
// are adjacent, and how the column kernels split a band's rows over blocks.
// Batch normalization's sums split their rows the same way. Host code only, so
// that the plans are tested without a GPU.
#include "kernels.hpp"

#include <algorithm>

namespace accel::cuda {
namespace {

constexpr int64_t kColumnTile = 32;         // columns per block (reduction_kernels.cu)
constexpr int64_t kMinColumns = 8;          // fewer kept neighbours leave most of a tile idle
constexpr int64_t kMinRows = 33;            // up to 32 rows, one thread per output is as fast
constexpr int64_t kMaxGridY = 65535;        // outer is the grid's y
constexpr int64_t kTargetBlocks = 1024;     // a few waves on the largest GPUs
constexpr int64_t kMinRowsPerChunk = 64;    // below that a block spends more on starting than on reading
constexpr int64_t kMaxChunks = 65535;       // the grid's z

struct RowSplit {
  int64_t chunks;
  int64_t rows_per_chunk;
};

// `rows` split into slices for `column_blocks` blocks of columns. Fixed
// numbers, not the GPU's: the split, and so the order of the additions,
// depends on the shapes alone.
RowSplit split_rows(int64_t rows, int64_t column_blocks) {
  int64_t chunks = 1;
  if (column_blocks < kTargetBlocks) {
    chunks = std::min((kTargetBlocks + column_blocks - 1) / column_blocks,
                      rows / kMinRowsPerChunk);  // slices of 64 rows or more
    chunks = std::clamp<int64_t>(chunks, 1, kMaxChunks);
  }
  const int64_t rows_per_chunk = (rows + chunks - 1) / chunks;
  return {(rows + rows_per_chunk - 1) / rows_per_chunk, rows_per_chunk};  // none empty
}

int64_t column_tiles(int64_t columns) { return (columns + kColumnTile - 1) / kColumnTile; }

}  // namespace

ReducePlan plan_reduction(int32_t rank, const int64_t* shape, const bool* reduced) {
  int64_t strides[kMaxRank];
  row_major_strides(rank, shape, strides);
  ReducePlan plan;
  plan.out_count = 1;
  plan.reduced_count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      plan.reduced_shape[plan.reduced_rank] = shape[d];
      plan.reduced_stride[plan.reduced_rank++] = strides[d];
      plan.reduced_count *= shape[d];
    } else {
      plan.kept_shape[plan.kept_rank] = shape[d];
      plan.kept_stride[plan.kept_rank++] = strides[d];
      plan.out_count *= shape[d];
    }
  }

  int32_t first = -1, last = -1;
  for (int32_t d = 0; d < rank; ++d) {
    if (!reduced[d] || shape[d] == 1) continue;
    if (first < 0) first = d;
    last = d;
  }
  if (first < 0) return plan;  // nothing of size above 1 reduced
  for (int32_t d = first; d <= last; ++d) {
    if (!reduced[d] && shape[d] != 1) return plan;  // a kept axis between reduced ones
  }
  plan.banded = true;
  for (int32_t d = 0; d < first; ++d) plan.outer *= shape[d];
  for (int32_t d = last + 1; d < rank; ++d) plan.inner *= shape[d];

  plan.column_kernels = plan.out_count > 0 && plan.inner >= kMinColumns && plan.reduced_count >= kMinRows &&
                        plan.outer <= kMaxGridY;
  if (plan.column_kernels) {
    const RowSplit split = split_rows(plan.reduced_count, column_tiles(plan.inner) * plan.outer);
    plan.chunks = split.chunks;
    plan.rows_per_chunk = split.rows_per_chunk;
  }
  return plan;
}

uint64_t reduce_scratch_bytes(const ReducePlan& plan) {
  if (!plan.column_kernels || plan.chunks == 1) return 0;
  return static_cast<uint64_t>(plan.outer * plan.chunks * plan.inner) * sizeof(int64_t);
}

BatchNormPlan plan_batch_norm(int64_t rows, int64_t features) {
  BatchNormPlan plan;
  plan.rows = rows;
  plan.features = features;
  if (rows <= 0 || features <= 0) return plan;
  const RowSplit split = split_rows(rows, column_tiles(features));
  plan.chunks = split.chunks;
  plan.rows_per_chunk = split.rows_per_chunk;
  return plan;
}

uint64_t batch_norm_scratch_bytes(const BatchNormPlan& plan) {
  // The slices' two sums (double), then up to three float coefficients per feature.
  return static_cast<uint64_t>(plan.chunks * 2 * plan.features) * sizeof(double) +
         static_cast<uint64_t>(3 * plan.features) * sizeof(float);
}

}  // namespace accel::cuda
