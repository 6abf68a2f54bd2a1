// The op set's own names for the AccelOp values ("RELU_BACKWARD",
// "ADAM_UPDATE"), as docs/op-set.md and plugin authors spell them: one table
// for the host's logs and reports, the host kernels' messages and any plugin.
// The host's TensorFlow names for the same ops ("ReluGrad",
// "ResourceApplyAdam") are in docs/op-set.md's table of TensorFlow names.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <stdint.h>

namespace accel::sdk {

// Indexed by AccelOp; appended to with the enum.
inline constexpr const char* kOpSetNames[] = {
    "MATMUL", "CONV2D", "CONV2D_BACKWARD_INPUT", "CONV2D_BACKWARD_FILTER", "MAX_POOL", "MAX_POOL_BACKWARD",
    "AVG_POOL", "AVG_POOL_BACKWARD", "NEG", "ABS", "EXP", "LOG", "SQRT", "RSQRT", "SQUARE", "RELU", "SIGMOID",
    "TANH", "SIGN", "RECIPROCAL", "LOGICAL_NOT", "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "POW",
    "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "RELU_BACKWARD", "SIGMOID_BACKWARD",
    "TANH_BACKWARD", "SELECT", "REDUCE_SUM", "REDUCE_MEAN", "REDUCE_MAX", "REDUCE_MIN", "ARGMAX", "SOFTMAX",
    "LOG_SOFTMAX", "SPARSE_SOFTMAX_CROSS_ENTROPY", "CAST", "FILL", "RANDOM_UNIFORM", "RANDOM_NORMAL",
    "RANDOM_TRUNCATED_NORMAL", "TRANSPOSE", "COPY", "BROADCAST_TO", "SLICE", "CONCAT", "PAD", "GATHER",
    "ONE_HOT", "SGD_UPDATE", "ADAM_UPDATE", "RMSPROP_UPDATE", "FUSED_ELEMENTWISE", "ERF",
    "MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER", "BATCH_NORM", "BATCH_NORM_BACKWARD"};
static_assert(sizeof(kOpSetNames) / sizeof(kOpSetNames[0]) == ACCEL_OP_COUNT,
              "one op-set name per AccelOp: append the new op's name");

// The op's name without the ACCEL_OP_ prefix; "UNKNOWN_OP" outside the op set.
constexpr const char* op_set_name(int32_t op) noexcept {
  return op >= 0 && op < ACCEL_OP_COUNT ? kOpSetNames[op] : "UNKNOWN_OP";
}

}  // namespace accel::sdk
