// The primitive op set v1 as C++ functions (docs/op-set.md). Each call infers
// the output shape, places the op (placement.hpp), and runs it on a device's
// plugin, or on the CPU when that plugin lacks the op.
#pragma once

#include <accel/tensor.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace accel::ops {

enum class Padding { kValid, kSame };

struct Conv2DOptions {
  std::array<int32_t, 2> strides{1, 1};
  Padding padding = Padding::kValid;
  std::array<int32_t, 2> dilations{1, 1};
};

struct Pool2DOptions {
  std::array<int32_t, 2> window{2, 2};
  std::array<int32_t, 2> strides{2, 2};
  Padding padding = Padding::kValid;
};

// Linear algebra and convolution.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
Tensor conv2d(const Tensor& input, const Tensor& filter, const Conv2DOptions& options = {});
Tensor conv2d_backward_input(const Tensor& output_gradient, const Tensor& filter,
                             const Shape& input_shape, const Conv2DOptions& options = {});
Tensor conv2d_backward_filter(const Tensor& input, const Tensor& output_gradient,
                              const Shape& filter_shape, const Conv2DOptions& options = {});
Tensor max_pool2d(const Tensor& input, const Pool2DOptions& options = {});
Tensor max_pool2d_backward(const Tensor& input, const Tensor& output_gradient,
                           const Pool2DOptions& options = {});
Tensor avg_pool2d(const Tensor& input, const Pool2DOptions& options = {});
Tensor avg_pool2d_backward(const Tensor& output_gradient, const Shape& input_shape,
                           const Pool2DOptions& options = {});

// Unary elementwise.
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor logical_not(const Tensor& x);
// The Gauss error function, TensorFlow's Erf; float dtypes only.
Tensor erf(const Tensor& x);

// Binary elementwise with NumPy broadcasting.
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor relu_backward(const Tensor& output_gradient, const Tensor& input);
Tensor sigmoid_backward(const Tensor& output_gradient, const Tensor& output);
Tensor tanh_backward(const Tensor& output_gradient, const Tensor& output);
Tensor select(const Tensor& condition, const Tensor& a, const Tensor& b);

// Reductions; empty `axes` reduces over every axis; negative axes count from the end.
Tensor reduce_sum(const Tensor& x, std::vector<int32_t> axes = {}, bool keep_dims = false);
Tensor reduce_mean(const Tensor& x, std::vector<int32_t> axes = {}, bool keep_dims = false);
Tensor reduce_max(const Tensor& x, std::vector<int32_t> axes = {}, bool keep_dims = false);
Tensor reduce_min(const Tensor& x, std::vector<int32_t> axes = {}, bool keep_dims = false);
Tensor argmax(const Tensor& x, int32_t axis = -1);

// Softmax family over the last axis.
Tensor softmax(const Tensor& logits);
Tensor log_softmax(const Tensor& logits);
// Returns (per-example loss [B], gradient of the loss sum w.r.t. logits [B, C]).
std::pair<Tensor, Tensor> sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels);

// Batch normalization of a training step over every axis but `axis` (the
// features; TensorFlow's FusedBatchNormV3 with is_training): y = (x - mean) *
// rsqrt(variance + epsilon) * scale + offset, with the batch's mean and biased
// variance, each of shape [features] like scale and offset. One BATCH_NORM op
// where `axis` is the last and the device claims it, else primitive ops; the
// tape differentiates either (BATCH_NORM_BACKWARD for the fused op). As
// FusedBatchNormV3's T and U, scale and offset are of x's dtype or, for a
// bfloat16 or float16 x, float32: then the op computes in float32 and only y
// (dx backward) is of x's dtype, exactly a cast of x to float32, the float32
// normalization and a cast of y back (mixed precision without the casts).
struct BatchNormResult {
  Tensor y, mean, variance;
};
BatchNormResult batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, double epsilon,
                           int32_t axis = -1);
// BATCH_NORM's gradient (FusedBatchNormGradV3), the features last: dx, dscale, doffset.
std::array<Tensor, 3> batch_norm_backward(const Tensor& output_gradient, const Tensor& x, const Tensor& scale,
                                          const Tensor& mean, const Tensor& variance, double epsilon);

// Creation and data movement.
Tensor cast(const Tensor& x, DType dtype);
Tensor fill(const Shape& shape, double value, DType dtype = DType::kFloat32);
Tensor zeros(const Shape& shape, DType dtype = DType::kFloat32);
Tensor ones(const Shape& shape, DType dtype = DType::kFloat32);
Tensor random_uniform(const Shape& shape, uint64_t seed, double minval = 0.0, double maxval = 1.0,
                      DType dtype = DType::kFloat32, uint64_t counter_offset = 0);
Tensor random_normal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
                     DType dtype = DType::kFloat32, uint64_t counter_offset = 0);
Tensor truncated_normal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
                        DType dtype = DType::kFloat32, uint64_t counter_offset = 0);
Tensor transpose(const Tensor& x, std::vector<int32_t> permutation = {});
Tensor copy(const Tensor& x);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size);
Tensor concat(const std::vector<Tensor>& tensors, int32_t axis);
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           double value = 0.0);
Tensor gather(const Tensor& params, const Tensor& indices, int32_t axis = 0);
Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1.0, double off_value = 0.0,
               DType dtype = DType::kFloat32);

// Fused optimizer updates; `variable` and the slots are updated in place.
void sgd_update(const Tensor& variable, const Tensor& gradient, const Tensor& velocity,
                double learning_rate, double momentum = 0.0, bool nesterov = false);
void adam_update(const Tensor& variable, const Tensor& m, const Tensor& v, const Tensor& gradient,
                 double learning_rate, double beta1, double beta2, double epsilon, int64_t step);
void rmsprop_update(const Tensor& variable, const Tensor& mean_square, const Tensor& momentum_slot,
                    const Tensor& mean_gradient, const Tensor& gradient, double learning_rate,
                    double rho, double momentum, double epsilon, bool centered);

// The output shape of broadcasting a with b; throws InvalidArgumentError.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace accel::ops

namespace accel {
inline Tensor operator+(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return ops::sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return ops::mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b); }
inline Tensor operator-(const Tensor& x) { return ops::neg(x); }
}  // namespace accel
