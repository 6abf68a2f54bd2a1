// Reductions (sum, mean, max, min over a set of axes), ARGMAX, and the
// softmax family over the last axis.
//
// A reduction first drops size-1 axes and merges neighbouring axes that are
// both reduced or both kept. The shapes training produces then fall into
// [kept, reduced, kept] (any part may be 1): row reductions (loss means,
// softmax sums) and column reductions (bias gradients) each have a loop that
// vectorizes. Other patterns fall back to a serial odometer walk.
#include "kernels.hpp"
#include "reducers.hpp"
#include "vector_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

// y[k1, k2] = reduce over r of x[k1, r, k2].
template <typename T, typename Reducer>
void reduce_kept_reduced_kept(const T* x, T* y, int64_t outer, int64_t reduced, int64_t inner,
                              Reducer reducer) {
  if (inner == 1) {
    parallel_ranges(outer, grain_for(reduced), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) y[row] = reduce_run(x + row * reduced, reduced, reducer);
    });
    return;
  }
  constexpr int64_t kColumnBlock = 1024;
  const int64_t blocks_per_row = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t work_per_item = reduced * std::min(inner, kColumnBlock);
  parallel_ranges(outer * blocks_per_row, grain_for(work_per_item), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t row = item / blocks_per_row;
      const int64_t column = (item % blocks_per_row) * kColumnBlock;
      const int64_t width = std::min(kColumnBlock, inner - column);
      T* __restrict out = y + row * inner + column;
      for (int64_t k = 0; k < width; ++k) out[k] = Reducer::identity();
      for (int64_t r = 0; r < reduced; ++r) {
        const T* __restrict in = x + (row * reduced + r) * inner + column;
        for (int64_t k = 0; k < width; ++k) out[k] = reducer(out[k], in[k]);
      }
    }
  });
}

// Any pattern: walk x in order, accumulating into y through strides that are
// 0 on reduced axes.
template <typename T, typename Reducer>
void reduce_generic(const T* x, T* y, int rank, const int64_t* shape, const bool* reduced,
                    int64_t y_count, Reducer reducer) {
  for (int64_t i = 0; i < y_count; ++i) y[i] = Reducer::identity();
  int64_t y_strides[ACCEL_MAX_RANK];
  int64_t stride = 1;
  for (int axis = rank - 1; axis >= 0; --axis) {
    y_strides[axis] = reduced[axis] ? 0 : stride;
    if (!reduced[axis]) stride *= shape[axis];
  }
  int64_t index[ACCEL_MAX_RANK] = {};
  int64_t x_count = 1;
  for (int axis = 0; axis < rank; ++axis) x_count *= shape[axis];
  int64_t y_offset = 0;
  for (int64_t i = 0; i < x_count; ++i) {
    y[y_offset] = reducer(y[y_offset], x[i]);
    for (int axis = rank - 1; axis >= 0; --axis) {
      y_offset += y_strides[axis];
      if (++index[axis] < shape[axis]) break;
      y_offset -= shape[axis] * y_strides[axis];
      index[axis] = 0;
    }
  }
}

template <typename T, typename Reducer>
void reduce_with(const HostTensor& x, const HostTensor& y, const bool* reduced_axis,
                 Reducer reducer) {
  const T* x_data = data_of<const T>(x);
  T* y_data = data_of<T>(y);
  const int64_t y_count = element_count(y);
  if (element_count(x) == 0) {
    for (int64_t i = 0; i < y_count; ++i) y_data[i] = Reducer::identity();
    return;
  }
  // Drop size-1 axes and merge runs of reduced or kept axes.
  int rank = 0;
  int64_t shape[ACCEL_MAX_RANK];
  bool reduced[ACCEL_MAX_RANK];
  for (int axis = 0; axis < x.rank; ++axis) {
    if (x.shape[axis] == 1) continue;
    if (rank > 0 && reduced[rank - 1] == reduced_axis[axis]) {
      shape[rank - 1] *= x.shape[axis];
    } else {
      shape[rank] = x.shape[axis];
      reduced[rank] = reduced_axis[axis];
      ++rank;
    }
  }
  int64_t outer = 1, middle = 1, inner = 1;
  bool fits = true;
  if (rank == 0) {
    // one element
  } else if (rank == 1) {
    (reduced[0] ? middle : inner) = shape[0];
  } else if (rank == 2) {
    if (reduced[0]) { middle = shape[0]; inner = shape[1]; } else { outer = shape[0]; middle = shape[1]; }
  } else if (rank == 3 && reduced[1]) {
    outer = shape[0]; middle = shape[1]; inner = shape[2];
  } else {
    fits = false;
  }
  if (fits) {
    reduce_kept_reduced_kept(x_data, y_data, outer, middle, inner, reducer);
  } else {
    reduce_generic(x_data, y_data, rank, shape, reduced, y_count, reducer);
  }
}

template <typename T>
void reduce_typed(AccelOp op, const HostTensor& x, const HostTensor& y, const bool* reduced_axis,
                  int64_t reduced_count) {
  switch (op) {
    case ACCEL_OP_REDUCE_SUM: return reduce_with<T>(x, y, reduced_axis, SumReducer<T>{});
    case ACCEL_OP_REDUCE_MAX: return reduce_with<T>(x, y, reduced_axis, MaxReducer<T>{});
    case ACCEL_OP_REDUCE_MIN: return reduce_with<T>(x, y, reduced_axis, MinReducer<T>{});
    case ACCEL_OP_REDUCE_MEAN: {
      reduce_with<T>(x, y, reduced_axis, SumReducer<T>{});
      T* y_data = data_of<T>(y);
      const int64_t count = element_count(y);
      if constexpr (std::is_floating_point_v<T>) {
        // An empty reduction gives 0/0 = NaN, as in TensorFlow.
        const T scale = T{1} / static_cast<T>(reduced_count);
        for (int64_t i = 0; i < count; ++i) y_data[i] = reduced_count == 0 ? NAN : y_data[i] * scale;
      } else {
        for (int64_t i = 0; i < count; ++i) {
          y_data[i] = reduced_count == 0 ? T{0} : static_cast<T>(y_data[i] / reduced_count);
        }
      }
      return;
    }
    default: fail(ACCEL_STATUS_UNIMPLEMENTED, "not a reduction");
  }
}

template <typename T>
void argmax_typed(const HostTensor& x, const HostTensor& y, int32_t axis) {
  const int64_t outer = extent(x, 0, axis), length = x.shape[axis],
                inner = extent(x, axis + 1, x.rank);
  const T* x_data = data_of<const T>(x);
  int64_t* y_data = data_of<int64_t>(y);
  parallel_ranges(outer, grain_for(length * inner), [&](int64_t begin, int64_t end) {
    std::vector<T> best(static_cast<size_t>(inner));
    for (int64_t o = begin; o < end; ++o) {
      const T* block = x_data + o * length * inner;
      int64_t* __restrict index = y_data + o * inner;
      for (int64_t k = 0; k < inner; ++k) { best[k] = block[k]; index[k] = 0; }
      for (int64_t a = 1; a < length; ++a) {
        const T* __restrict row = block + a * inner;
        for (int64_t k = 0; k < inner; ++k) {
          if (row[k] > best[k]) { best[k] = row[k]; index[k] = a; }  // strict: first max wins
        }
      }
    }
  });
}

}  // namespace

void reduce(AccelOp op, const HostTensor& x, const HostTensor& y,
            const AccelReduceAttributes& attributes) {
  bool reduced_axis[ACCEL_MAX_RANK] = {};
  if (attributes.num_axes < 0 || attributes.num_axes > x.rank) invalid("bad num_axes");
  int64_t reduced_count = 1;
  for (int32_t i = 0; i < attributes.num_axes; ++i) {
    const int32_t axis = attributes.axes[i];
    if (axis < 0 || axis >= x.rank || (i > 0 && axis <= attributes.axes[i - 1])) {
      invalid("reduction axes must be sorted, unique and within the input's rank; axis " +
              std::to_string(axis) + " is not");
    }
    reduced_axis[axis] = true;
    reduced_count *= x.shape[axis];
  }
  // keep_dims only changes the output shape: the element count decides.
  int64_t kept_count = 1;
  for (int32_t axis = 0; axis < x.rank; ++axis) {
    if (!reduced_axis[axis]) kept_count *= x.shape[axis];
  }
  if (element_count(y) != kept_count) invalid("output shape does not match the reduction");
  switch (x.dtype) {
    case ACCEL_DTYPE_F32: return reduce_typed<float>(op, x, y, reduced_axis, reduced_count);
    case ACCEL_DTYPE_I32: return reduce_typed<int32_t>(op, x, y, reduced_axis, reduced_count);
    case ACCEL_DTYPE_I64: return reduce_typed<int64_t>(op, x, y, reduced_axis, reduced_count);
    default: fail(ACCEL_STATUS_UNIMPLEMENTED, "no reduction kernel for this dtype");
  }
}

void argmax(const HostTensor& x, const HostTensor& y, int32_t axis) {
  if (axis < 0 || axis >= x.rank) invalid("axis " + std::to_string(axis) + " out of range");
  if (x.shape[axis] == 0) invalid("argmax over an empty axis");
  if (element_count(y) * x.shape[axis] != element_count(x)) invalid("output shape mismatch");
  if (element_count(x) == 0) return;
  switch (x.dtype) {
    case ACCEL_DTYPE_F32: return argmax_typed<float>(x, y, axis);
    case ACCEL_DTYPE_I32: return argmax_typed<int32_t>(x, y, axis);
    case ACCEL_DTYPE_I64: return argmax_typed<int64_t>(x, y, axis);
    default: fail(ACCEL_STATUS_UNIMPLEMENTED, "no argmax kernel for this dtype");
  }
}

namespace {

ACCEL_VECTOR_CLONES void softmax_rows(const float* x, float* y, int64_t rows, int64_t classes, bool logarithmic) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* __restrict in = x + row * classes;
    float* __restrict out = y + row * classes;
    const float max = reduce_run(in, classes, MaxReducer<float>{});
    for (int64_t c = 0; c < classes; ++c) out[c] = vector_exp(in[c] - max);
    const float sum = reduce_run(out, classes, SumReducer<float>{});  // in lanes: vectorizes
    if (logarithmic) {
      const float log_sum = std::log(sum) + max;
      for (int64_t c = 0; c < classes; ++c) out[c] = in[c] - log_sum;
    } else {
      const float scale = 1.0f / sum;
      for (int64_t c = 0; c < classes; ++c) out[c] *= scale;
    }
  }
}

}  // namespace

void softmax(const HostTensor& x, const HostTensor& y, bool logarithmic) {
  if (!same_shape(x, y)) invalid("output shape must equal the input shape");
  if (x.rank == 0) invalid("softmax needs at least one axis");
  const int64_t classes = x.shape[x.rank - 1];
  const int64_t rows = classes == 0 ? 0 : element_count(x) / classes;
  const float* x_data = data_of<const float>(x);
  float* y_data = data_of<float>(y);
  parallel_ranges(rows, grain_for(classes, kExpensiveGrain), [&](int64_t begin, int64_t end) {
    softmax_rows(x_data + begin * classes, y_data + begin * classes, end - begin, classes, logarithmic);
  });
}

void sparse_softmax_cross_entropy(const HostTensor& logits, const HostTensor& labels,
                                  const HostTensor& loss, const HostTensor& backprop) {
  if (logits.rank != 2 || labels.rank != 1 || labels.shape[0] != logits.shape[0] ||
      loss.rank != 1 || loss.shape[0] != logits.shape[0] || !same_shape(backprop, logits)) {
    invalid("expected logits[B,C], labels[B] -> loss[B], backprop[B,C]");
  }
  const int64_t batch = logits.shape[0], classes = logits.shape[1];
  std::vector<int64_t> label(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    label[b] = labels.dtype == ACCEL_DTYPE_I32 ? data_of<const int32_t>(labels)[b]
                                               : data_of<const int64_t>(labels)[b];
    if (label[b] < 0 || label[b] >= classes) {
      invalid("label " + std::to_string(label[b]) + " at index " + std::to_string(b) +
              " is outside [0, " + std::to_string(classes) + ")");
    }
  }
  const float* x_data = data_of<const float>(logits);
  float* loss_data = data_of<float>(loss);
  float* grad_data = data_of<float>(backprop);
  parallel_ranges(batch, grain_for(classes, kExpensiveGrain), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* __restrict in = x_data + b * classes;
      float* __restrict grad = grad_data + b * classes;
      const float max = reduce_run(in, classes, MaxReducer<float>{});
      for (int64_t c = 0; c < classes; ++c) grad[c] = vector_exp(in[c] - max);
      const float sum = reduce_run(grad, classes, SumReducer<float>{});
      const float log_sum = std::log(sum) + max;
      const float scale = 1.0f / sum;
      for (int64_t c = 0; c < classes; ++c) grad[c] *= scale;
      grad[label[b]] -= 1.0f;
      loss_data[b] = log_sum - in[label[b]];
    }
  });
}

}  // namespace accel::host_kernels::detail
