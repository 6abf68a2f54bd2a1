// Grouped 2-D convolution (Conv2D(groups=...) and DepthwiseConv2D) composed
// from the op set, which has no grouped convolution: every piece is an op the
// tape differentiates exactly, so gradients need nothing of their own.
// Private to core/keras/layers.
//
// Two compositions, chosen by the channels per group, each the faster one
// where it is used. Measured on the CPU plugin: forward, and forward + the
// tape's gradients of sum(y * w) for x and the kernel; medians of 21 runs,
// ranges over runs; ACCEL_CPU_THREADS=1, because the 2-core build machine was
// shared and two-thread timings swung tenfold:
//
//                                                     forward      with gradients
//   depthwise 3x3 "same", x (8, 28, 28, 32):
//     per group: slice + conv2d + concat              1.8-5.8 ms   21-24 ms
//     over the taps: shifted slice * kernel tap       0.9 ms       7-11 ms
//     (block-diagonal (3, 3, 32, 32) kernel, conv2d   1.1 ms       5 ms)
//   depthwise 3x3 "same", x (8, 14, 14, 256):
//     per group                                       13 ms        83 ms
//     over the taps                                   1.9 ms       14 ms
//     (block-diagonal kernel, conv2d                  25 ms        89 ms)
//   3x3 "same", x (8, 28, 28, 32), 32 filters in 4 groups of 8 channels:
//     per group                                       0.9-1.2 ms   6-8 ms
//     over the taps (mul, then a sum over the 8)      28-33 ms     72-100 ms
//     (block-diagonal kernel, conv2d                  1.1 ms       7 ms)
//
// One input channel per group (depthwise): the sum over the kh*kw taps of a
// shifted (strided) slice of the padded input times that tap's kernel values
// broadcast over the channels: kh*kw large elementwise ops whose work grows
// linearly with the channels, where the per-group form dispatches one tiny
// convolution per channel (and two backward convolutions per channel).
// Several input channels per group: one conv2d per group on the group's
// channel slice, concatenated: each group is a real convolution that the
// conv kernels do well, while the tap form materializes
// (.., channels, filters / groups) products before summing them.
// The block-diagonal form (the grouped kernel spread into a dense
// (kh, kw, in, filters) one, zero between groups, and one conv2d) keeps up
// at 32 channels (faster with gradients there) but does groups times the
// needed work, so it falls behind as the groups grow (6x slower than the
// taps at 256 channels); not used.
#pragma once

#include <accel/ops.hpp>
#include <accel/tensor.hpp>

#include <cstdint>

namespace accel::keras::grouped_convolution {

// y = conv2d(x, kernel) where the input channels and the filters are split
// into `groups` contiguous blocks and block g of the filters sees only block
// g of the channels (TensorFlow's grouped convolution): x (N, H, W, C),
// kernel (kh, kw, C / groups, filters), filters and C divisible by groups
// (the caller checks). groups == 1 is exactly ops::conv2d.
Tensor conv2d(const Tensor& x, const Tensor& kernel, int64_t groups, const ops::Conv2DOptions& options);

// TensorFlow's depthwise_conv2d: kernel (kh, kw, C, multiplier), output
// channel c * multiplier + m is channel c convolved with kernel[.., c, m].
Tensor depthwise_conv2d(const Tensor& x, const Tensor& depthwise_kernel, const ops::Conv2DOptions& options);

}  // namespace accel::keras::grouped_convolution
