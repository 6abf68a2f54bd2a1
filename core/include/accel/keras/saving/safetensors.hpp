// The safetensors file format (https://github.com/huggingface/safetensors),
// written and read here so that Python's `safetensors` opens accel's weights
// and checkpoints and accel opens its files:
//
//   8 bytes   N, the header's length (unsigned little-endian)
//   N bytes   JSON: {"<name>": {"dtype": "F32", "shape": [2, 3],
//                              "data_offsets": [begin, end]}, ...,
//                    "__metadata__": {"<key>": "<string>"}}   (optional)
//   the data  each tensor's raw little-endian bytes, row-major, packed in
//             order; offsets count from the end of the header
//
// The writer pads the header with spaces to a multiple of 8 bytes (as the
// reference writer does, so the data stays aligned). The reader accepts what
// the reference reader accepts and rejects, naming the file and the fault, a
// bad header length, bad JSON, an unknown dtype, offsets that do not match the
// shape, overlap, leave gaps or run past the end of the file.
#pragma once

#include <accel/dtype.hpp>
#include <accel/shape.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accel::keras::saving {

// One named tensor's contents as stored: its dtype, shape and raw bytes.
struct StoredTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<uint8_t> bytes;  // shape.element_count() * dtype_size(dtype)
};

// A tensor's contents read to the host, as a file stores them under `name`.
StoredTensor stored_tensor(const std::string& name, const Tensor& value);

// A whole file: tensors in the order of their data, and the free-form
// string metadata ("__metadata__").
struct SafetensorsContents {
  std::vector<StoredTensor> tensors;
  std::map<std::string, std::string> metadata;

  // The tensor called `name`, or nullptr.
  const StoredTensor* find(std::string_view name) const;
};

// "F32", "BF16", "F16", "I32", "I64", "U8", "BOOL": the format's dtype names.
std::string_view safetensors_dtype_name(DType dtype);

// The file's bytes for `contents` (tensors packed in the given order).
// Duplicate names or bytes that do not match a shape are InvalidArgumentError.
std::string serialize_safetensors(const SafetensorsContents& contents);
// Parses a file's bytes; `source` (the path) names the file in errors
// (InvalidArgumentError).
SafetensorsContents parse_safetensors(std::string_view bytes, const std::string& source);

// serialize_safetensors written atomically (see atomic_file.hpp): a failure
// or a kill at any point leaves any previous file at `path` intact.
void write_safetensors_file(const std::string& path, const SafetensorsContents& contents);
// Reads and parses `path`; a missing file is NotFoundError.
SafetensorsContents read_safetensors_file(const std::string& path);

}  // namespace accel::keras::saving
