// Static facts about each primitive op: its TensorFlow name, its report
// category, its attribute struct size, and which inputs it updates in place
// (optimizer ops); and the name logs, traces and reports give it, which joins
// the TensorFlow name to the op-set name plugin authors know (op_set_names.hpp).
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace accel::detail {

struct OpInfo {
  const char* name;          // "MatMul"
  const char* category;      // "matmul", "convolution", "pooling", "elementwise", ...
  size_t attributes_size;    // sizeof the op's attribute struct, 0 for none
  uint32_t updated_inputs;   // bit i set: input i is updated in place
};

const OpInfo& op_info(AccelOp op);
const OpInfo& op_info(int32_t op);  // also accepts the kReshapeOp pseudo-op

// The TensorFlow name, then the op-set name in parentheses where the two differ
// in more than case and underscores: "ReluGrad (RELU_BACKWARD)", "AddV2 (ADD)",
// but "MatMul", "MaxPool". The Reshape pseudo-op is "Reshape".
const std::string& op_display_name(int32_t op);

}  // namespace accel::detail
