// The epilogue of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT on the CUDA plugin
// (plugin API 1.2; docs/op-set.md, "Epilogues"): which ones the plugin runs
// (the answer of the table's supports_epilogue), a call's request and extra
// inputs read and checked, and the epilogue kernel (epilogue_kernels.cu)
// queued on the device's stream right after the op's cuBLAS / cuDNN call.
// Device mutex held, device current.
#pragma once

#include "op_dispatch.hpp"

#include <cstdint>

namespace accel::cuda {

struct Epilogue {
  int32_t flags = 0;  // AccelEpilogueFlag bits; 0 is the plain op
  AccelOp activation = ACCEL_OP_RELU;
  View bias;  // [N], N the output's last dimension (ACCEL_EPILOGUE_BIAS)
  View mask;  // the output's shape (ACCEL_EPILOGUE_RELU_MASK)

  bool any() const { return flags != 0; }
  bool has(AccelEpilogueFlag flag) const { return (flags & flag) != 0; }
  uint64_t input_bytes() const { return bias.bytes() + mask.bytes(); }
};

// Whether the device runs `op` with principal dtype `dtype` and this
// epilogue: every epilogue (bias, RELU / SIGMOID / TANH, ReLU mask) wherever
// the plain op runs (MATMUL on the float dtypes, the convolutions on float32);
// flags 0 is the plain op.
bool epilogue_supported(const AccelDevice& device, AccelOp op, AccelDType dtype, int32_t flags,
                       AccelOp activation);

// The epilogue `call` requests (none from an attribute struct older than 1.2)
// with its extra inputs, those after the op's two, checked against the output
// `y`: InvalidArgument for unknown flags, another activation, another number
// of inputs, a bias or mask of another shape or dtype, or an epilogue on
// another op. `name` starts the messages.
Epilogue bind_epilogue(const AccelOpCall& call, const View& y, const char* name);

// Queues the epilogue over `y`. `staged` is the op's float32 result when y is
// BF16 / F16 (y is then written from it, rounded once), else null (y is
// updated in place). Nothing is queued for the plain op on y itself.
void apply_epilogue(AccelDevice& device, const Epilogue& epilogue, const View& y, const float* staged = nullptr);

}  // namespace accel::cuda
