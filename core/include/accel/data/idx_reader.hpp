// Reading IDX files, the format of MNIST and Fashion-MNIST: raw or gzip
// (detected by the gzip magic), big-endian header, uint8 payload.
#pragma once

#include <accel/dtype.hpp>
#include <accel/tensor.hpp>

#include <string>

namespace accel::data {

inline constexpr uint32_t kIdxImagesMagic = 2051;  // 0x00000803: uint8, 3 dimensions
inline constexpr uint32_t kIdxLabelsMagic = 2049;  // 0x00000801: uint8, 1 dimension

// Any uint8 IDX file as a tensor of its dimensions, dtype uint8, float32
// (values scaled by `float_scale`, e.g. 1/255), int32 or int64. Throws
// DataError naming the file and byte offset for a bad magic, a truncated or
// overlong file, dims over 2^31 elements, or a corrupt, truncated or
// trailing-garbage gzip stream; NotFoundError when the file does not exist.
// A gzip file is inflated only as far as its header says the data goes.
Tensor read_idx(const std::string& path, DType dtype = DType::kUInt8, float float_scale = 1.0f);

// The image size a loader expects; 0 means any.
struct IdxImageSize {
  int64_t rows = 0;
  int64_t cols = 0;
};

// Images [N, rows, cols]: the magic must be 2051, N, rows and cols not 0, and
// rows x cols `expected_size` when given (DataError at the dimension's byte).
// float32 is x / 255 in [0, 1], exactly TensorFlow's tutorial's train_images / 255.0.
Tensor read_idx_images(const std::string& path, DType dtype = DType::kUInt8, IdxImageSize expected_size = {});
// Labels [N]: the magic must be 2049 and N not 0; with `num_classes` > 0,
// every label must be in [0, num_classes) (DataError at the label's byte).
// dtype uint8, int32 or int64.
Tensor read_idx_labels(const std::string& path, DType dtype = DType::kInt32, int num_classes = 0);

}  // namespace accel::data
