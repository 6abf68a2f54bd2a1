// The argument checks and attribute set-up the C++ op functions share
// (ops.cpp, normalization_ops.cpp): one wording for every op's errors, each
// naming the op by its TensorFlow name.
#pragma once

#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include "runtime/op_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace accel::ops::arguments {

[[noreturn]] inline void invalid(AccelOp op, const std::string& message) {
  throw InvalidArgumentError(fmt::format("{}: {}", detail::op_info(op).name, message));
}

// An Accel*Attributes struct, zeroed, with its struct_size set.
template <typename Attributes>
Attributes make_attributes() {
  Attributes attributes{};
  attributes.struct_size = sizeof(Attributes);
  return attributes;
}

inline void require_float(AccelOp op, const Tensor& tensor) {
  if (!is_floating(tensor.dtype())) {
    invalid(op, fmt::format("expected a floating-point tensor, got {}", dtype_name(tensor.dtype())));
  }
}

// `axis` counted from the end when negative, checked against `rank` (axis 0
// of a rank-0 tensor is accepted).
inline int32_t normalize_axis(AccelOp op, int32_t axis, int32_t rank) {
  const int32_t resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 0 || resolved >= std::max(rank, 1)) {
    invalid(op, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  return resolved;
}

}  // namespace accel::ops::arguments
