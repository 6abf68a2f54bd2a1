// Internal: `tensor` in `dtype`, cast only when it is in another one. Layers
// under a dtype policy, losses, metrics and weight loading bring tensors to a
// dtype this way, so that no CAST op is recorded or traced for nothing.
#pragma once

#include <accel/ops.hpp>
#include <accel/tensor.hpp>

namespace accel::keras::detail {

inline Tensor cast_to(const Tensor& tensor, DType dtype) {
  return tensor.dtype() == dtype ? tensor : ops::cast(tensor, dtype);
}

}  // namespace accel::keras::detail
