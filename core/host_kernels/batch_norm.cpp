// BATCH_NORM and BATCH_NORM_BACKWARD (API 1.6): a training step's batch
// normalization over every axis but the last, in two passes over x each way
// where the primitive ops it replaces make about a dozen.
//
// The per-feature sums are taken in double over fixed blocks of rows and the
// blocks' sums added in block order, so the result does not depend on the
// number of threads, and the one-pass variance (E[x^2] - mean^2) keeps
// float32's precision for data whose mean lies within about 10^4 standard
// deviations of zero (the subtraction cancels log2((mean / std)^2) of
// double's 53 bits).
//
// BF16 activations (mixed_bfloat16) are read and written here, not staged by
// execute(): each value is widened as it is read and the result rounded as
// it is stored, the float formulas unchanged, so the results are those of the
// F32 kernel on widened copies, for half the bytes and none of the copies.
#include "element_conversions.hpp"
#include "kernels.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

// x[..., features] seen as [rows, features].
struct Rows {
  int64_t rows = 0;
  int64_t features = 0;
};

Rows rows_of(const HostTensor& x, const char* op) {
  if (x.rank < 1) invalid(std::string(op) + ": x must have at least one axis, got " + describe(x));
  Rows shape;
  shape.features = x.shape[x.rank - 1];
  shape.rows = shape.features == 0 ? 0 : element_count(x) / shape.features;
  return shape;
}

void expect_same_shape(const HostTensor& tensor, const HostTensor& like, const char* op, const char* role) {
  if (!same_shape(tensor, like)) {
    invalid(std::string(op) + ": " + role + " must have the shape of x " + describe(like) + ", got " +
            describe(tensor));
  }
}

void expect_per_feature(const HostTensor& tensor, int64_t features, const char* op, const char* role) {
  if (tensor.rank != 1 || tensor.shape[0] != features) {
    invalid(std::string(op) + ": " + role + " must be [" + std::to_string(features) + "] (x's last axis), got " +
            describe(tensor));
  }
}

// Calls body(S{}) with S the storage type of the activations: float or bf16_t.
template <typename Body>
void with_activation_type(AccelDType dtype, const char* op, const Body& body) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return body(float{});
    case ACCEL_DTYPE_BF16: return body(bf16_t{});
    default: invalid(std::string(op) + ": activations must be F32 or BF16 here");
  }
}

// Blocks of rows of about 16K elements: the unit of the deterministic sums.
int64_t rows_per_block(int64_t features) {
  constexpr int64_t kBlockElements = int64_t{1} << 14;
  return std::max<int64_t>(1, kBlockElements / std::max<int64_t>(features, 1));
}

// For each block of rows, `sum_block(first_row, last_row, first, second)` adds
// two per-feature sums into `first` and `second` (zeroed, `features` long);
// returns the two sums over every row, the blocks added in order.
template <typename BlockSums>
std::pair<std::vector<double>, std::vector<double>> per_feature_sums(const Rows& shape, const BlockSums& sum_block) {
  const int64_t block_rows = rows_per_block(shape.features);
  const int64_t blocks = (shape.rows + block_rows - 1) / block_rows;
  const auto width = static_cast<size_t>(shape.features);
  std::vector<double> partial(static_cast<size_t>(blocks) * width * 2, 0.0);
  parallel_ranges(blocks, grain_for(block_rows * shape.features), [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      double* first = partial.data() + static_cast<size_t>(block) * width * 2;
      sum_block(block * block_rows, std::min(shape.rows, (block + 1) * block_rows), first, first + width);
    }
  });
  std::pair<std::vector<double>, std::vector<double>> sums{std::vector<double>(width, 0.0),
                                                           std::vector<double>(width, 0.0)};
  for (int64_t block = 0; block < blocks; ++block) {
    const double* first = partial.data() + static_cast<size_t>(block) * width * 2;
    for (size_t c = 0; c < width; ++c) {
      sums.first[c] += first[c];
      sums.second[c] += first[width + c];
    }
  }
  return sums;
}

// body(first, last) over ranges of rows, in parallel.
template <typename RowsBody>
void for_each_row_range(const Rows& shape, const RowsBody& body) {
  parallel_ranges(shape.rows, grain_for(shape.features), body);
}

// The four loops, each over rows [first, last) of `features` contiguous
// values, the features innermost: vectorized across features, each
// feature's sum still taken row by row in order, so no clone of
// ACCEL_VECTOR_CLONES rounds differently.
template <typename S>
ACCEL_VECTOR_CLONES void add_sums(const S* __restrict x, int64_t first, int64_t last, int64_t features,
                                  double* __restrict sums, double* __restrict squares) {
  for (int64_t row = first; row < last; ++row) {
    const S* line = x + row * features;
    for (int64_t c = 0; c < features; ++c) {
      const double value = widen(line[c]);
      sums[c] += value;
      squares[c] += value * value;
    }
  }
}

template <typename S>
ACCEL_VECTOR_CLONES void add_gradient_sums(const S* __restrict dy, const S* __restrict x,
                                           const float* __restrict mean, int64_t first, int64_t last,
                                           int64_t features, double* __restrict sums,
                                           double* __restrict products) {
  for (int64_t row = first; row < last; ++row) {
    const S* dy_line = dy + row * features;
    const S* x_line = x + row * features;
    for (int64_t c = 0; c < features; ++c) {
      const double gradient = widen(dy_line[c]);
      sums[c] += gradient;
      products[c] += gradient * (static_cast<double>(widen(x_line[c])) - mean[c]);
    }
  }
}

// y = x * multiplier + addend, per feature.
template <typename S>
ACCEL_VECTOR_CLONES void normalize_rows(const S* __restrict x, const float* __restrict multiplier,
                                        const float* __restrict addend, int64_t first, int64_t last,
                                        int64_t features, S* __restrict y) {
  for (int64_t row = first; row < last; ++row) {
    const S* line = x + row * features;
    S* result = y + row * features;
    for (int64_t c = 0; c < features; ++c) result[c] = narrow<S>(widen(line[c]) * multiplier[c] + addend[c]);
  }
}

// dx = a * dy + b * (x - mean) + d, per feature.
template <typename S>
ACCEL_VECTOR_CLONES void input_gradient_rows(const S* __restrict dy, const S* __restrict x,
                                             const float* __restrict mean, const float* __restrict a,
                                             const float* __restrict b, const float* __restrict d, int64_t first,
                                             int64_t last, int64_t features, S* __restrict dx) {
  for (int64_t row = first; row < last; ++row) {
    const S* dy_line = dy + row * features;
    const S* x_line = x + row * features;
    S* result = dx + row * features;
    for (int64_t c = 0; c < features; ++c) {
      result[c] = narrow<S>(a[c] * widen(dy_line[c]) + b[c] * (widen(x_line[c]) - mean[c]) + d[c]);
    }
  }
}

}  // namespace

void batch_norm(const HostTensor& x, const HostTensor& scale, const HostTensor& offset, const HostTensor& y,
                const HostTensor& mean, const HostTensor& variance, const AccelBatchNormAttributes& attributes) {
  constexpr const char* kOp = "BATCH_NORM";
  const Rows shape = rows_of(x, kOp);
  expect_same_shape(y, x, kOp, "y");
  for (const auto& [tensor, role] : {std::pair{&scale, "scale"}, {&offset, "offset"}, {&mean, "mean"},
                                     {&variance, "variance"}}) {
    expect_per_feature(*tensor, shape.features, kOp, role);
  }
  if (!(attributes.epsilon > 0.0)) invalid(std::string(kOp) + ": epsilon must be positive");
  const int64_t features = shape.features;
  // Per-feature operands and results in float (F32 or BF16 where they are stored).
  std::vector<float> gamma, beta, mean_out, variance_out;
  float_copy_of(scale, gamma);
  float_copy_of(offset, beta);
  const HostTensor mean_float = float_tensor_like(mean, mean_out);
  const HostTensor variance_float = float_tensor_like(variance, variance_out);
  std::vector<float> multiplier(static_cast<size_t>(features)), addend(static_cast<size_t>(features));
  with_activation_type(x.dtype, kOp, [&](auto storage) {
    using S = decltype(storage);
    const S* in = data_of<const S>(x);
    const auto [sum, sum_of_squares] =
        per_feature_sums(shape, [&](int64_t first_row, int64_t last_row, double* values, double* squares) {
          add_sums(in, first_row, last_row, features, values, squares);
        });
    const double count = static_cast<double>(shape.rows);
    for (int64_t c = 0; c < features; ++c) {
      const double batch_mean = shape.rows == 0 ? std::numeric_limits<double>::quiet_NaN() : sum[c] / count;
      const double batch_variance = std::max(0.0, sum_of_squares[c] / count - batch_mean * batch_mean);
      const double inverse = 1.0 / std::sqrt(batch_variance + attributes.epsilon);
      mean_out[c] = static_cast<float>(batch_mean);
      variance_out[c] = shape.rows == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(batch_variance);
      multiplier[c] = static_cast<float>(gamma[c] * inverse);
      addend[c] = static_cast<float>(beta[c] - batch_mean * gamma[c] * inverse);
    }
    S* out = data_of<S>(y);
    for_each_row_range(shape, [&](int64_t first, int64_t last) {
      normalize_rows(in, multiplier.data(), addend.data(), first, last, features, out);
    });
  });
  cast(mean_float, mean);
  cast(variance_float, variance);
}

void batch_norm_backward(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                         const AccelBatchNormAttributes& attributes) {
  constexpr const char* kOp = "BATCH_NORM_BACKWARD";
  const HostTensor& dy = inputs[0];
  const HostTensor& x = inputs[1];
  const Rows shape = rows_of(x, kOp);
  expect_same_shape(dy, x, kOp, "dy");
  expect_same_shape(outputs[0], x, kOp, "dx");
  for (const auto& [tensor, role] : {std::pair{&inputs[2], "scale"}, {&inputs[3], "mean"}, {&inputs[4], "variance"},
                                     {&outputs[1], "dscale"}, {&outputs[2], "doffset"}}) {
    expect_per_feature(*tensor, shape.features, kOp, role);
  }
  if (!(attributes.epsilon > 0.0)) invalid(std::string(kOp) + ": epsilon must be positive");
  if (dy.dtype != x.dtype || outputs[0].dtype != x.dtype) invalid(std::string(kOp) + ": dy, x and dx dtypes differ");
  const int64_t features = shape.features;
  // Per-feature operands and results in float (F32 or BF16 where they are stored).
  std::vector<float> gamma, mean, variance, dscale, doffset;
  float_copy_of(inputs[2], gamma);
  float_copy_of(inputs[3], mean);
  float_copy_of(inputs[4], variance);
  const HostTensor dscale_float = float_tensor_like(outputs[1], dscale);
  const HostTensor doffset_float = float_tensor_like(outputs[2], doffset);
  with_activation_type(x.dtype, kOp, [&](auto storage) {
    using S = decltype(storage);
    const S* gradient = data_of<const S>(dy);
    const S* in = data_of<const S>(x);
    const auto [gradient_sum, centered_product_sum] =
        per_feature_sums(shape, [&](int64_t first_row, int64_t last_row, double* sums, double* products) {
          add_gradient_sums(gradient, in, mean.data(), first_row, last_row, features, sums, products);
        });

    // dx = a * dy + b * (x - mean) + d, with a = scale * inverse,
    // b = -a * inverse * dscale / n, d = -a * doffset / n.
    std::vector<float> a(static_cast<size_t>(features)), b(static_cast<size_t>(features)),
        d(static_cast<size_t>(features));
    const double count = static_cast<double>(std::max<int64_t>(shape.rows, 1));
    for (int64_t c = 0; c < features; ++c) {
      const double inverse = 1.0 / std::sqrt(static_cast<double>(variance[c]) + attributes.epsilon);
      const double scale_gradient = centered_product_sum[c] * inverse;
      const double gain = gamma[c] * inverse;
      dscale[c] = static_cast<float>(scale_gradient);
      doffset[c] = static_cast<float>(gradient_sum[c]);
      a[c] = static_cast<float>(gain);
      b[c] = static_cast<float>(-gain * inverse * scale_gradient / count);
      d[c] = static_cast<float>(-gain * gradient_sum[c] / count);
    }
    S* out = data_of<S>(outputs[0]);
    for_each_row_range(shape, [&](int64_t first, int64_t last) {
      input_gradient_rows(gradient, in, mean.data(), a.data(), b.data(), d.data(), first, last, features, out);
    });
  });
  cast(dscale_float, outputs[1]);
  cast(doffset_float, outputs[2]);
}

}  // namespace accel::host_kernels::detail
