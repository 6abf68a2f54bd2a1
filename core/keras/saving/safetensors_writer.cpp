// Serializes tensors to the safetensors layout and writes the file atomically.
#include <accel/error.hpp>
#include <accel/keras/saving/atomic_file.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <nlohmann/json.hpp>

#include <bit>
#include <set>

namespace accel::keras::saving {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; a big-endian host would have to swap bytes");

// The reference writer pads the header so that the data starts 8-byte aligned.
constexpr size_t kHeaderAlignment = 8;

size_t expected_byte_size(const StoredTensor& tensor) {
  return static_cast<size_t>(tensor.shape.element_count()) * dtype_size(tensor.dtype);
}

std::string little_endian_u64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int index = 0; index < 8; ++index) bytes[index] = static_cast<char>((value >> (8 * index)) & 0xff);
  return bytes;
}

}  // namespace

StoredTensor stored_tensor(const std::string& name, const Tensor& value) {
  StoredTensor stored{name, value.dtype(), value.shape(), {}};
  stored.bytes.resize(value.byte_size());
  if (!stored.bytes.empty()) value.copy_to_host(stored.bytes.data());
  return stored;
}

std::string serialize_safetensors(const SafetensorsContents& contents) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!contents.metadata.empty()) header["__metadata__"] = contents.metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const StoredTensor& tensor : contents.tensors) {
    if (tensor.name == "__metadata__") throw InvalidArgumentError("safetensors: '__metadata__' is reserved, not a tensor name");
    if (!names.insert(tensor.name).second) {
      throw InvalidArgumentError("safetensors: two tensors are named '" + tensor.name + "'");
    }
    if (tensor.bytes.size() != expected_byte_size(tensor)) {
      throw InvalidArgumentError("safetensors: tensor '" + tensor.name + "' of shape " + tensor.shape.to_string() +
                                 " needs " + std::to_string(expected_byte_size(tensor)) + " bytes, got " +
                                 std::to_string(tensor.bytes.size()));
    }
    nlohmann::ordered_json entry;
    entry["dtype"] = safetensors_dtype_name(tensor.dtype);
    entry["shape"] = nlohmann::ordered_json::array();
    for (int32_t axis = 0; axis < tensor.shape.rank(); ++axis) entry["shape"].push_back(tensor.shape[axis]);
    entry["data_offsets"] = {offset, offset + tensor.bytes.size()};
    header[tensor.name] = std::move(entry);
    offset += tensor.bytes.size();
  }
  std::string header_text = header.dump();
  header_text.append((kHeaderAlignment - header_text.size() % kHeaderAlignment) % kHeaderAlignment, ' ');

  std::string file = little_endian_u64(header_text.size());
  file.reserve(8 + header_text.size() + offset);
  file += header_text;
  for (const StoredTensor& tensor : contents.tensors) {
    file.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  }
  return file;
}

void write_safetensors_file(const std::string& path, const SafetensorsContents& contents) {
  write_file_atomically(path, serialize_safetensors(contents));
}

}  // namespace accel::keras::saving
