#include "timing/op_lowering.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace accel::tpu {
namespace {

void require_positive(std::int64_t value, const char* name) {
  if (value <= 0) throw std::invalid_argument(std::string(name) + " must be positive, got " + std::to_string(value));
}

}  // namespace

void check_gemm(const GemmShape& gemm) {
  require_positive(gemm.m, "M");
  require_positive(gemm.n, "N");
  require_positive(gemm.k, "K");
  (void)gemm.macs();  // every count of the op is at most about its MACs
}

Conv2dLowering lower_conv2d(const Conv2dShape& conv, TimingConvention convention) {
  require_positive(conv.batch, "batch N");
  require_positive(conv.height, "height H");
  require_positive(conv.width, "width W");
  require_positive(conv.channels, "channels C");
  require_positive(conv.filters, "filters K");
  require_positive(conv.kernel_h, "kernel rows R");
  require_positive(conv.kernel_w, "kernel columns S");
  require_positive(conv.stride, "stride");
  Conv2dLowering out;
  if (conv.padding == Padding::kSame) {
    const std::int64_t same_h = ceil_div(conv.height, conv.stride);
    const std::int64_t same_w = ceil_div(conv.width, conv.stride);
    out.pad_h = std::max<std::int64_t>(
        checked_add(checked_mul(same_h - 1, conv.stride, "the padded height"), conv.kernel_h, "the padded height") -
            conv.height,
        0);
    out.pad_w = std::max<std::int64_t>(
        checked_add(checked_mul(same_w - 1, conv.stride, "the padded width"), conv.kernel_w, "the padded width") -
            conv.width,
        0);
  }
  const std::int64_t h = checked_add(conv.height, out.pad_h, "the padded height");
  const std::int64_t w = checked_add(conv.width, out.pad_w, "the padded width");
  if (conv.kernel_h > h || conv.kernel_w > w) {
    throw std::invalid_argument("the " + std::to_string(conv.kernel_h) + "x" + std::to_string(conv.kernel_w) +
                                " window is larger than the " + std::to_string(h) + "x" + std::to_string(w) +
                                " (padded) input");
  }
  if (convention == TimingConvention::kScaleSim) {
    out.out_h = (h - conv.kernel_h) / conv.stride + 1 + ((h - conv.kernel_h) % conv.stride != 0 ? 1 : 0);
    out.out_w = (w - conv.kernel_w) / conv.stride + 1 + ((w - conv.kernel_w) % conv.stride != 0 ? 1 : 0);
  } else {
    out.out_h = (h - conv.kernel_h) / conv.stride + 1;
    out.out_w = (w - conv.kernel_w) / conv.stride + 1;
  }
  out.gemm = {checked_mul(checked_mul(conv.batch, out.out_h, "the im2col rows"), out.out_w, "the im2col rows"),
              conv.filters,
              checked_mul(checked_mul(conv.kernel_h, conv.kernel_w, "the im2col window"), conv.channels,
                          "the im2col window")};
  check_gemm(out.gemm);
  return out;
}

}  // namespace accel::tpu
