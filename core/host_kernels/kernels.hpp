// The internal entry points of the kernel files, one group per file. The
// dispatcher (dispatch.cpp) checks operand counts and dtypes and turns
// BF16/F16 operands of float-math ops into F32 before calling these, so every
// function below that computes floats sees F32 only, except those that say
// they take BF16 (the ops runs_in_16_bit in dispatch.cpp lets through).
#pragma once

#include "epilogue.hpp"
#include "kernel_support.hpp"

#include <functional>
#include <vector>

namespace accel::host_kernels::detail {

// elementwise.cpp: unary and binary maps with NumPy broadcasting.
void unary(AccelOp op, const HostTensor& x, const HostTensor& y);
void binary(AccelOp op, const HostTensor& a, const HostTensor& b, const HostTensor& y);
void select(const HostTensor& condition, const HostTensor& a, const HostTensor& b,
            const HostTensor& y);
void broadcast_to(const HostTensor& x, const HostTensor& y);

// reductions.cpp: reductions, argmax and the softmax family.
void reduce(AccelOp op, const HostTensor& x, const HostTensor& y,
            const AccelReduceAttributes& attributes);
void argmax(const HostTensor& x, const HostTensor& y, int32_t axis);
void softmax(const HostTensor& x, const HostTensor& y, bool logarithmic);
void sparse_softmax_cross_entropy(const HostTensor& logits, const HostTensor& labels,
                                  const HostTensor& loss, const HostTensor& backprop);

// data_movement.cpp: creation, casts and layout changes (dtype-generic by size).
void cast(const HostTensor& x, const HostTensor& y);
// Float working copies for a kernel that computes in float on 16-bit operands
// it reads itself: a float32 tensor of `like`'s shape over `storage` (resized
// to fit, not initialized), and one holding `tensor`'s values (by cast).
HostTensor float_tensor_like(const HostTensor& like, std::vector<float>& storage);
HostTensor float_copy_of(const HostTensor& tensor, std::vector<float>& storage);
void fill(const HostTensor& y, double value);
void random(AccelOp op, const HostTensor& y, const AccelRandomAttributes& attributes);
void transpose(const HostTensor& x, const HostTensor& y, const int32_t* permutation);
void copy(const HostTensor& x, const HostTensor& y);
void slice(const HostTensor& x, const HostTensor& y, const int64_t* begin);
void concat(std::span<const HostTensor> inputs, const HostTensor& y, int32_t axis);
void pad(const HostTensor& x, const HostTensor& y, const AccelPadAttributes& attributes);
void gather(const HostTensor& params, const HostTensor& indices, const HostTensor& y,
            int32_t axis);
void one_hot(const HostTensor& indices, const HostTensor& y,
             const AccelOneHotAttributes& attributes);
// Writes `value` converted to `dtype` into `bytes` (dtype_size bytes).
void encode_scalar(double value, AccelDType dtype, void* bytes);

// gemm.cpp: MATMUL on oneDNN, then its epilogue. `attributes` may
// be a struct from before 1.2: only the transposes are read from it. BF16
// operands where onednn_runs_bf16().
void matmul(const HostTensor& a, const HostTensor& b, const HostTensor& y,
            const AccelMatmulAttributes& attributes, const Epilogue& epilogue);

// matmul_primitive.cpp: y[i] = op(a[i]) @ op(b[i]) for i < batch on a cached
// oneDNN matmul primitive; an operand that is not batched is shared by all.
// All three are `dtype`: F32, or BF16 (CPUs with bf16 instructions only).
void matmul_primitive(bool transpose_a, bool transpose_b, int64_t batch, int64_t m, int64_t n, int64_t k,
                      const void* a, bool a_batched, const void* b, bool b_batched, void* y, AccelDType dtype);

// convolution.cpp: CONV2D and its gradients on oneDNN primitives, with the
// epilogue of CONV2D / CONV2D_BACKWARD_INPUT. `attributes` may be a struct
// from before 1.2: only the geometry is read from it. BF16 operands where
// onednn_runs_bf16().
void conv2d(AccelOp op, const HostTensor& first, const HostTensor& second,
            const HostTensor& y, const AccelConv2dAttributes& attributes, const Epilogue& epilogue,
            EpilogueRounding rounding);

// Everything that defines one convolution, with x/filter/y in forward terms.
struct ConvGeometry {
  int64_t batch, height, width, channels;          // x: [N, H, W, C]
  int64_t filter_h, filter_w, filters;             // filter: [R, S, C, K]
  int64_t out_h, out_w;                            // y: [N, OH, OW, K]
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
};

// convolution.cpp: the geometry of a convolution op's operands (first,
// second, y as execute() gets them), checked; and whether conv2d runs the
// filter gradient of `geometry` as the direct loop below.
ConvGeometry convolution_geometry(AccelOp op, const HostTensor& first, const HostTensor& second,
                                  const HostTensor& y, const AccelConv2dAttributes& attributes);
bool filter_gradient_is_direct(const ConvGeometry& geometry);

// convolution_gemm.cpp: whether `op` over `geometry` runs as im2col tiles
// times the filter on dnnl_sgemm (faster than oneDNN's direct kernels there),
// and that computation: CONV2D (x, filter -> y), CONV2D_BACKWARD_INPUT (dy,
// filter -> dx) or CONV2D_BACKWARD_FILTER (x, dy -> dfilter), no epilogue.
bool gemm_convolution_chosen(AccelOp op, const ConvGeometry& geometry);
// Whether ACCEL_CPU_CONV_GEMM=all sends every convolution there (before Winograd too).
bool gemm_convolution_forced();
void gemm_convolution(AccelOp op, const ConvGeometry& geometry, const float* first, const float* second,
                      float* out);

// convolution_winograd.cpp: whether `op` over `geometry` runs as Winograd
// F(4x4, 3x3) (3x3 stride-1 convolutions, on CPUs without oneDNN's Winograd
// kernels), and that computation: CONV2D (x, filter -> y),
// CONV2D_BACKWARD_INPUT (dy, filter -> dx) or CONV2D_BACKWARD_FILTER (x, dy
// -> dfilter), no epilogue.
bool winograd_convolution_chosen(AccelOp op, const ConvGeometry& geometry);
void winograd_convolution(AccelOp op, const ConvGeometry& geometry, const float* first, const float* second,
                          float* out);

// filter_gradient.cpp: CONV2D_BACKWARD_FILTER as a direct loop, for few
// input channels (convolution.cpp decides). x [N, H, W, C], dy [N, OH, OW, K],
// gradient [R, S, C, K].
void direct_filter_gradient(const ConvGeometry& geometry, const float* x, const float* dy, float* gradient);

// The same loop over an output gradient that is made a few images at a time
// by `make_dy(first, last, block)`: images [first, last) of dy written to
// `block` (laid out from image `first`), on the calling thread, just before
// the loop reads them, so that dy never goes to memory whole
// (pool_filter_gradient.cpp). Bitwise the same as the other form over the
// same dy.
using OutputGradientMaker = std::function<void(int64_t first, int64_t last, float* block)>;
void direct_filter_gradient(const ConvGeometry& geometry, const float* x, const OutputGradientMaker& make_dy,
                            float* gradient);

// pool_filter_gradient.cpp: MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, the
// filter gradient of x against the max-pooling gradient of (pool_x, pool_dy);
// F32 or BF16.
void pool_filter_gradient(const HostTensor& x, const HostTensor& pool_x, const HostTensor& pool_dy,
                          const HostTensor& dfilter, const AccelPoolFilterGradientAttributes& attributes,
                          EpilogueRounding rounding);

// fused_elementwise.cpp: FUSED_ELEMENTWISE, its program checked by fused_program.cpp.
void fused_elementwise(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                       const AccelFusedElementwiseAttributes& program);

// batch_norm.cpp: BATCH_NORM (x, scale, offset -> y, mean, variance) and
// BATCH_NORM_BACKWARD (dy, x, scale, mean, variance -> dx, dscale, doffset);
// activations F32 or BF16, per-feature operands F32 or the activations' dtype.
void batch_norm(const HostTensor& x, const HostTensor& scale, const HostTensor& offset, const HostTensor& y,
                const HostTensor& mean, const HostTensor& variance, const AccelBatchNormAttributes& attributes);
void batch_norm_backward(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                         const AccelBatchNormAttributes& attributes);

// pooling.cpp: max/avg pooling and their gradients; max_pool takes BF16 too.
void max_pool(const HostTensor& x, const HostTensor& y, const AccelPoolAttributes& attributes);
void max_pool_backward(const HostTensor& x, const HostTensor& dy, const HostTensor& dx,
                       const AccelPoolAttributes& attributes);
// The same gradient, all of it on the calling thread (for a caller that
// already spreads blocks of images over the threads).
void max_pool_backward_on_this_thread(const HostTensor& x, const HostTensor& dy, const HostTensor& dx,
                                      const AccelPoolAttributes& attributes);
// The same for BF16 x and dy and a float dx (the shape of x), reading the
// 16-bit values directly, when 2x2 windows tile the image; false (nothing
// done) otherwise.
bool max_pool_backward_bf16_on_this_thread(const HostTensor& x, const HostTensor& dy, float* dx,
                                           const AccelPoolAttributes& attributes);
void avg_pool(const HostTensor& x, const HostTensor& y, const AccelPoolAttributes& attributes);
void avg_pool_backward(const HostTensor& dy, const HostTensor& dx,
                       const AccelPoolAttributes& attributes);

// optimizers.cpp: fused Keras optimizer updates, in place.
void sgd_update(std::span<const HostTensor> inputs, const AccelSgdAttributes& attributes);
void adam_update(std::span<const HostTensor> inputs, const AccelAdamAttributes& attributes);
void rmsprop_update(std::span<const HostTensor> inputs, const AccelRmspropAttributes& attributes);

}  // namespace accel::host_kernels::detail
