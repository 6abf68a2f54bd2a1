// IDX payload bytes to a host tensor of the dims in the header.
#include "idx_tensor.hpp"

#include "host_tensor.hpp"

#include <accel/error.hpp>

namespace accel::data::detail {

Tensor idx_to_tensor(const IdxContents& idx, DType dtype, ByteToFloat to_float) {
  const uint8_t* data = idx.payload.data();
  const Shape shape(idx.dims);
  const size_t count = idx.payload.size();
  switch (dtype) {
    case DType::kUInt8:
      return make_host_tensor(data, shape, dtype);
    case DType::kFloat32: {
      std::vector<float> values(count);
      for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(data[i]) * to_float.scale / to_float.divisor;
      return make_host_tensor(values.data(), shape, dtype);
    }
    case DType::kInt32: {
      std::vector<int32_t> values(data, data + count);
      return make_host_tensor(values.data(), shape, dtype);
    }
    case DType::kInt64: {
      std::vector<int64_t> values(data, data + count);
      return make_host_tensor(values.data(), shape, dtype);
    }
    default:
      throw InvalidArgumentError("read_idx('" + idx.name + "'): dtype " + std::string(dtype_name(dtype)) +
                                 " is not supported; use uint8, float32, int32 or int64");
  }
}

}  // namespace accel::data::detail
