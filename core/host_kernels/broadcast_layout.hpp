// Where the elements of NumPy-broadcast operands lie along an output's axes,
// with the axes merged that every operand walks as one contiguous run, and the
// odometer that steps from one run to the next. Shared by the elementwise
// kernels (up to 3 operands) and the fused elementwise kernel (its inputs and
// its reduced outputs).
#pragma once

#include "kernel_support.hpp"

#include <span>

namespace accel::host_kernels::detail {

// Operand o's element at merged index (i0, ..., i_{rank-1}) lies at
// sum(i_axis * strides[o][axis]). The innermost stride of an operand is 0
// (it repeats along the run) or 1 (it walks the run).
template <int MaxOperands>
struct BroadcastLayout {
  int rank = 1;
  int operands = 0;
  int64_t shape[ACCEL_MAX_RANK] = {1};
  int64_t strides[MaxOperands][ACCEL_MAX_RANK] = {};

  int64_t inner() const noexcept { return shape[rank - 1]; }
  // Runs along the innermost axis: the product of the outer axes.
  int64_t rows() const noexcept {
    int64_t count = 1;
    for (int axis = 0; axis + 1 < rank; ++axis) count *= shape[axis];
    return count;
  }
  int64_t inner_step(int operand) const noexcept { return strides[operand][rank - 1]; }
};

template <int MaxOperands>
BroadcastLayout<MaxOperands> make_layout(const HostTensor& output, std::span<const HostTensor* const> operands) {
  BroadcastLayout<MaxOperands> layout;
  if (static_cast<int>(operands.size()) > MaxOperands) invalid("too many broadcast operands");
  layout.operands = static_cast<int>(operands.size());
  int64_t shape[ACCEL_MAX_RANK];
  int64_t strides[MaxOperands][ACCEL_MAX_RANK];
  const int rank = output.rank;
  int k = 0;
  for (const HostTensor* operand : operands) {
    if (operand->rank > rank) {
      invalid("cannot broadcast " + describe(*operand) + " to " + describe(output));
    }
    const int lead = rank - operand->rank;
    int64_t contiguous = 1;
    for (int axis = rank - 1; axis >= 0; --axis) {
      const int64_t out_dim = output.shape[axis];
      const int64_t in_dim = axis >= lead ? operand->shape[axis - lead] : 1;
      if (in_dim == out_dim) {
        strides[k][axis] = contiguous;
      } else if (in_dim == 1) {
        strides[k][axis] = 0;
      } else {
        invalid("cannot broadcast " + describe(*operand) + " to " + describe(output));
      }
      contiguous *= in_dim;
    }
    ++k;
  }
  // Drop size-1 axes, then merge an axis into its inner neighbour whenever
  // every operand steps through both as one contiguous run.
  int kept = 0;
  for (int axis = 0; axis < rank; ++axis) {
    if (output.shape[axis] == 1) continue;
    shape[kept] = output.shape[axis];
    for (int o = 0; o < layout.operands; ++o) strides[o][kept] = strides[o][axis];
    ++kept;
  }
  if (kept == 0) return layout;  // one element: rank 1, shape {1}, strides 0
  layout.rank = 0;
  for (int axis = 0; axis < kept; ++axis) {
    if (layout.rank > 0) {
      const int last = layout.rank - 1;
      bool mergeable = true;
      for (int o = 0; o < layout.operands; ++o) {
        if (layout.strides[o][last] != strides[o][axis] * shape[axis]) mergeable = false;
      }
      if (mergeable) {
        layout.shape[last] *= shape[axis];
        for (int o = 0; o < layout.operands; ++o) layout.strides[o][last] = strides[o][axis];
        continue;
      }
    }
    layout.shape[layout.rank] = shape[axis];
    for (int o = 0; o < layout.operands; ++o) layout.strides[o][layout.rank] = strides[o][axis];
    ++layout.rank;
  }
  return layout;
}

// The position of one run (row) of a layout: its index along the outer axes
// and where each operand's part of it starts. next_row() is the odometer step.
template <int MaxOperands>
struct RunCursor {
  const BroadcastLayout<MaxOperands>* layout;
  int64_t index[ACCEL_MAX_RANK] = {};
  int64_t offsets[MaxOperands] = {};

  RunCursor(const BroadcastLayout<MaxOperands>& of, int64_t row) : layout(&of) {
    int64_t remainder = row;
    for (int axis = of.rank - 2; axis >= 0; --axis) {
      index[axis] = remainder % of.shape[axis];
      remainder /= of.shape[axis];
      for (int o = 0; o < of.operands; ++o) offsets[o] += index[axis] * of.strides[o][axis];
    }
  }

  // Steps over `rows` rows that stay within the innermost outer axis except
  // for, at most, reaching its end (rows <= shape[rank-2] - index[rank-2]).
  void advance(int64_t rows) noexcept {
    const BroadcastLayout<MaxOperands>& of = *layout;
    if (of.rank >= 2 && rows > 1) {
      const int axis = of.rank - 2;
      for (int o = 0; o < of.operands; ++o) offsets[o] += (rows - 1) * of.strides[o][axis];
      index[axis] += rows - 1;
    }
    next_row();
  }

  void next_row() noexcept {
    const BroadcastLayout<MaxOperands>& of = *layout;
    for (int axis = of.rank - 2; axis >= 0; --axis) {
      for (int o = 0; o < of.operands; ++o) offsets[o] += of.strides[o][axis];
      if (++index[axis] < of.shape[axis]) return;
      for (int o = 0; o < of.operands; ++o) offsets[o] -= of.shape[axis] * of.strides[o][axis];
      index[axis] = 0;
    }
  }
};

}  // namespace accel::host_kernels::detail
