// IDX contents (idx_format.hpp) as a tensor on /CPU:0 in the dtype asked for.
#pragma once

#include "idx_format.hpp"

#include <accel/dtype.hpp>
#include <accel/tensor.hpp>

namespace accel::data::detail {

// How a uint8 byte becomes a float32: byte * scale / divisor, in float32.
struct ByteToFloat {
  float scale = 1.0f;
  float divisor = 1.0f;
};

// Images in [0, 1] as TensorFlow's tutorials make them (train_images / 255.0,
// computed in double and stored as float32, which equals float(x) / 255.0f for
// every byte): a division. Multiplying by 1/255 instead rounds 126 of the 256
// byte values one ulp away from it.
inline constexpr ByteToFloat kImagesInUnitInterval{1.0f, 255.0f};

// uint8 as stored, float32 converted by `to_float`, int32 or int64;
// InvalidArgumentError naming the file for any other dtype.
Tensor idx_to_tensor(const IdxContents& idx, DType dtype, ByteToFloat to_float);

}  // namespace accel::data::detail
