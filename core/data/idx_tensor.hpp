// IDX contents (idx_format.hpp) as a tensor on /CPU:0 in the dtype asked for.
#pragma once

#include "idx_format.hpp"

#include <accel/dtype.hpp>
#include <accel/tensor.hpp>

namespace accel::data::detail {

// uint8 as stored, float32 scaled by `float_scale`, int32 or int64;
// InvalidArgumentError naming the file for any other dtype.
Tensor idx_to_tensor(const IdxContents& idx, DType dtype, float float_scale);

}  // namespace accel::data::detail
