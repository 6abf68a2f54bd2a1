// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (API 1.4): the filter gradient of a
// convolution whose output was max-pooled, from the pooled gradient, without
// the pooling gradient (the size of the convolution's output) going to memory.
//
// Where conv2d runs the filter gradient as the direct loop (filter_gradient.cpp:
// one input channel, the tutorial CNN's first layer), the pooling gradient is
// made four images at a time into a scratch that stays in the second-level
// cache, just before the loop sums those images: at batch 256, 22 MB that are
// neither written nor read back. The bits are those of the two ops run one
// after the other, since both kernels give the same values however their
// images are split. Any other convolution runs the two ops one after the
// other through a temporary.
//
// BF16 operands (mixed_bfloat16) are read here, not staged by execute(): in
// the direct case the pooling gradient of a block of images is made from the
// 16-bit values themselves (2x2 windows that tile the image; other windows
// widen the block into scratch first), so the largest operand is read once,
// in 16 bits (the tutorial CNN's 11 MB instead of 22 MB read and 22 MB
// written); the input and the filter gradient are small and are widened and
// rounded whole. The other case runs the F32 ops on widened copies.
#include "kernels.hpp"

#include <cstddef>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

// Images [first, last) of a tensor whose first axis is the batch.
HostTensor images_of(const HostTensor& tensor, int64_t first, int64_t last) {
  HostTensor part = tensor;
  const int64_t image_bytes = element_count(tensor) / tensor.shape[0] * sdk::dtype_size(tensor.dtype);
  part.shape[0] = last - first;
  part.data = static_cast<char*>(tensor.data) + first * image_bytes;
  return part;
}

void pool_filter_gradient_bf16(const HostTensor& x, const HostTensor& pool_x, const HostTensor& pool_dy,
                               const HostTensor& dfilter, const AccelPoolFilterGradientAttributes& attributes,
                               EpilogueRounding rounding) {
  for (const HostTensor* operand : {&x, &pool_x, &pool_dy}) {
    if (operand->dtype != ACCEL_DTYPE_BF16) invalid("operands must all be bfloat16");
  }
  std::vector<float> x_floats, dfilter_floats;
  const HostTensor x_float = float_copy_of(x, x_floats);
  const HostTensor dfilter_float = float_tensor_like(dfilter, dfilter_floats);
  const ConvGeometry g = convolution_geometry(ACCEL_OP_CONV2D_BACKWARD_FILTER, x, pool_x, dfilter,
                                              attributes.convolution);
  if (filter_gradient_is_direct(g) && element_count(x) > 0 && element_count(pool_x) > 0 &&
      element_count(dfilter) > 0) {
    HostTensor no_images = images_of(pool_x, 0, 0);
    no_images.dtype = ACCEL_DTYPE_F32;
    HostTensor no_gradient = images_of(pool_dy, 0, 0);
    no_gradient.dtype = ACCEL_DTYPE_F32;
    max_pool_backward_on_this_thread(no_images, no_gradient, no_images, attributes.pool);
    direct_filter_gradient(
        g, x_floats.data(),
        [&](int64_t first, int64_t last, float* block) {
          if (max_pool_backward_bf16_on_this_thread(images_of(pool_x, first, last), images_of(pool_dy, first, last),
                                                    block, attributes.pool)) {
            return;
          }
          thread_local std::vector<float> pool_x_floats, pool_dy_floats;
          const HostTensor block_x = float_copy_of(images_of(pool_x, first, last), pool_x_floats);
          HostTensor block_gradient = block_x;
          block_gradient.data = block;
          max_pool_backward_on_this_thread(block_x, float_copy_of(images_of(pool_dy, first, last), pool_dy_floats),
                                           block_gradient, attributes.pool);
        },
        dfilter_floats.data());
  } else {
    std::vector<float> pool_x_floats, pool_dy_floats;
    pool_filter_gradient(x_float, float_copy_of(pool_x, pool_x_floats), float_copy_of(pool_dy, pool_dy_floats),
                         dfilter_float, attributes, rounding);
  }
  cast(dfilter_float, dfilter);
}

}  // namespace

void pool_filter_gradient(const HostTensor& x, const HostTensor& pool_x, const HostTensor& pool_dy,
                          const HostTensor& dfilter, const AccelPoolFilterGradientAttributes& attributes,
                          EpilogueRounding rounding) {
  const AccelConv2dAttributes& convolution = attributes.convolution;
  if (convolution.struct_size < offsetof(AccelConv2dAttributes, epilogue_flags) ||
      attributes.pool.struct_size < sizeof(AccelPoolAttributes)) {
    invalid("convolution or pooling attributes missing or too small");
  }
  if (ACCEL_STRUCT_HOLDS(&convolution, AccelConv2dAttributes, epilogue_flags) && convolution.epilogue_flags != 0) {
    invalid("the filter gradient takes no epilogue");
  }
  if (pool_dy.rank != 4 || pool_x.rank != 4 || pool_dy.shape[0] != pool_x.shape[0] ||
      pool_dy.shape[3] != pool_x.shape[3]) {
    invalid("the pooled gradient must be [N, PH, PW, K] with the pooling input's N and K");
  }
  if (x.dtype == ACCEL_DTYPE_BF16) {
    return pool_filter_gradient_bf16(x, pool_x, pool_dy, dfilter, attributes, rounding);
  }
  const ConvGeometry g = convolution_geometry(ACCEL_OP_CONV2D_BACKWARD_FILTER, x, pool_x, dfilter, convolution);
  if (filter_gradient_is_direct(g) && element_count(x) > 0 && element_count(pool_x) > 0 &&
      element_count(dfilter) > 0) {
    // The pooling operands checked before any thread starts: the same call over no images.
    HostTensor no_images = images_of(pool_x, 0, 0);
    max_pool_backward_on_this_thread(no_images, images_of(pool_dy, 0, 0), no_images, attributes.pool);
    direct_filter_gradient(
        g, data_of<const float>(x),
        [&](int64_t first, int64_t last, float* block) {
          HostTensor block_gradient = images_of(pool_x, first, last);
          block_gradient.data = block;
          max_pool_backward_on_this_thread(images_of(pool_x, first, last), images_of(pool_dy, first, last),
                                           block_gradient, attributes.pool);
        },
        data_of<float>(dfilter));
    return;
  }
  std::vector<float> pooling_gradient(static_cast<size_t>(element_count(pool_x)));
  HostTensor dy = pool_x;
  dy.data = pooling_gradient.data();
  max_pool_backward(pool_x, pool_dy, dy, attributes.pool);
  conv2d(ACCEL_OP_CONV2D_BACKWARD_FILTER, x, dy, dfilter, convolution, Epilogue{}, rounding);
}

}  // namespace accel::host_kernels::detail
