// The epilogue of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT (accel_plugin.h,
// since 1.2): reading it from the attributes, checking its extra inputs, and
// the blocked pass that applies what a kernel did not apply itself.
#pragma once

#include "kernel_support.hpp"

#include <span>

namespace accel::host_kernels::detail {

struct Epilogue {
  int32_t flags = 0;  // AccelEpilogueFlag bits
  AccelOp activation = ACCEL_OP_RELU;
  const HostTensor* bias = nullptr;  // [N], N = the output's last dimension
  const HostTensor* mask = nullptr;  // the output's shape

  bool has(AccelEpilogueFlag flag) const noexcept { return (flags & flag) != 0; }
};

// The requested epilogue of a MATMUL or convolution call; an attribute
// struct from before 1.2 (or none) requests none.
struct EpilogueRequest {
  int32_t flags = 0;
  AccelOp activation = ACCEL_OP_RELU;
};
EpilogueRequest epilogue_request(AccelOp op, const void* attributes) noexcept;

// Extra inputs the request adds after the op's own two (bias, then mask).
int epilogue_input_count(const EpilogueRequest& request) noexcept;

// Checks the request against the op and binds its extra inputs (those after
// the op's first two), throwing InvalidArgument on a bad flag, activation or shape.
Epilogue bind_epilogue(AccelOp op, const EpilogueRequest& request, std::span<const HostTensor> extra_inputs,
                       const HostTensor& y);

// Applies the epilogue's steps to y in place, rows of the last dimension in
// cache-sized blocks, with the plain ops' formulas (ADD, the activation op,
// RELU_BACKWARD). `skip_bias_and_activation` when the kernel applied those.
void apply_epilogue(const Epilogue& epilogue, const HostTensor& y, bool skip_bias_and_activation = false);

}  // namespace accel::host_kernels::detail
