// The public IDX readers: parse and check the file (idx_format), then build
// the tensor (idx_tensor).
#include <accel/data/idx_reader.hpp>
#include <accel/error.hpp>

#include "idx_format.hpp"
#include "idx_tensor.hpp"

namespace accel::data {

Tensor read_idx(const std::string& path, DType dtype, float float_scale) {
  return detail::idx_to_tensor(detail::read_idx_file(path), dtype, {.scale = float_scale});
}

Tensor read_idx_images(const std::string& path, DType dtype, IdxImageSize expected_size) {
  const detail::IdxContents idx = detail::read_idx_file(path);
  detail::check_idx_images(idx, expected_size);
  return detail::idx_to_tensor(idx, dtype, detail::kImagesInUnitInterval);
}

Tensor read_idx_labels(const std::string& path, DType dtype, int num_classes) {
  if (dtype == DType::kFloat32) {
    throw InvalidArgumentError("read_idx_labels('" + path + "'): labels are integers; use uint8, int32 or int64");
  }
  const detail::IdxContents idx = detail::read_idx_file(path);
  detail::check_idx_labels(idx, num_classes);
  return detail::idx_to_tensor(idx, dtype, {});
}

}  // namespace accel::data
