// Lowers layers to the GEMM the MXU runs, OUT[M x N] = IN[M x K] . W[K x N]:
// convolutions by im2col (M = output pixels x batch, N = filters,
// K = window R*S*C), dense layers directly.
#pragma once

#include <cstdint>

#include "timing/checked_count.hpp"
#include "timing/timing_convention.hpp"

namespace accel::tpu {

struct GemmShape {
  std::int64_t m = 0;  // rows of the output
  std::int64_t n = 0;  // columns of the output
  std::int64_t k = 0;  // the reduced dimension
  // Throws CountOverflowError beyond int64 (check_gemm does, too).
  std::int64_t macs() const { return checked_mul(checked_mul(m, n, "M x N"), k, "the GEMM's MAC count (M x N x K)"); }
};

enum class Padding { kValid, kSame };

struct Conv2dShape {
  std::int64_t batch = 1;
  std::int64_t height = 0;
  std::int64_t width = 0;
  std::int64_t channels = 0;
  std::int64_t filters = 0;
  std::int64_t kernel_h = 0;
  std::int64_t kernel_w = 0;
  std::int64_t stride = 1;
  Padding padding = Padding::kValid;
};

struct Conv2dLowering {
  GemmShape gemm;
  std::int64_t out_h = 0;
  std::int64_t out_w = 0;
  std::int64_t pad_h = 0;  // total rows of zero padding (same padding)
  std::int64_t pad_w = 0;
};

// TPU convention: TensorFlow's output size (valid: floor((H-R)/s)+1,
// same: ceil(H/s)). SCALE-Sim convention: Ho = ceil((H' - R + s) / s) on the
// (pre-padded) input H' = H + pad_h, as SCALE-Sim has no padding parameter.
// Throws std::invalid_argument for non-positive sizes or a window larger
// than a valid-padded input.
Conv2dLowering lower_conv2d(const Conv2dShape& conv, TimingConvention convention);

// Throws std::invalid_argument unless m, n, k > 0 and M x N x K fits int64.
void check_gemm(const GemmShape& gemm);

}  // namespace accel::tpu
