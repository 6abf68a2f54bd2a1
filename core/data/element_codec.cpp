#include "element_codec.hpp"

#include <accel/data/data_error.hpp>
#include <accel/error.hpp>

#include "host_tensor.hpp"

#include <cstring>

namespace accel::data::detail {

void ElementReader::read(void* destination, size_t count, const char* what) {
  auto* bytes = static_cast<uint8_t*>(destination);
  size_t done = 0;
  while (done < count) {
    size_t got = read_some(bytes + done, count - done);
    if (got == 0) {
      fail("truncated: expected " + std::to_string(count) + " bytes of " + what + ", found " +
           std::to_string(done));
    }
    done += got;
  }
  offset_ += count;
}

void ElementReader::fail(const std::string& what_was_wrong) const {
  throw DataError(source_, "byte " + std::to_string(offset_), what_was_wrong);
}

size_t MemoryElementReader::read_some(void* destination, size_t count) {
  size_t available = std::min(count, bytes_.size() - position_);
  std::memcpy(destination, bytes_.data() + position_, available);
  position_ += available;
  return available;
}

FileElementReader::FileElementReader(const std::string& path)
    : ElementReader(path), stream_(path, std::ios::binary) {
  if (!stream_) throw NotFoundError("cannot open '" + path + "' for reading");
}

bool FileElementReader::at_end() { return stream_.peek() == std::ifstream::traits_type::eof(); }

size_t FileElementReader::read_some(void* destination, size_t count) {
  stream_.read(static_cast<char*>(destination), static_cast<std::streamsize>(count));
  return static_cast<size_t>(stream_.gcount());
}

namespace {

template <typename T>
void append_value(std::vector<uint8_t>& out, T value) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

constexpr uint32_t kMaxComponents = 1u << 16;
constexpr uint32_t kMaxNameLength = 1u << 16;
constexpr uint32_t kMaxRank = 64;

}  // namespace

void encode_element(const Element& element, std::vector<uint8_t>& out) {
  append_value<uint32_t>(out, static_cast<uint32_t>(element.size()));
  for (size_t i = 0; i < element.size(); ++i) {
    const std::string name = element.has_names() ? element.names()[i] : std::string();
    append_value<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    const Tensor& tensor = element[i];
    append_value<int32_t>(out, static_cast<int32_t>(tensor.dtype()));
    append_value<uint32_t>(out, static_cast<uint32_t>(tensor.rank()));
    for (int64_t dim : tensor.shape().dims()) append_value<int64_t>(out, dim);
    std::vector<uint8_t> data = host_bytes(tensor);
    append_value<uint64_t>(out, data.size());
    out.insert(out.end(), data.begin(), data.end());
  }
}

std::vector<uint8_t> encode_element(const Element& element) {
  std::vector<uint8_t> out;
  encode_element(element, out);
  return out;
}

Element decode_element(ElementReader& reader) {
  auto component_count = reader.read_value<uint32_t>("component count");
  if (component_count > kMaxComponents) {
    reader.fail("implausible component count " + std::to_string(component_count));
  }
  std::vector<std::string> names;
  std::vector<Tensor> components;
  bool any_name = false;
  for (uint32_t c = 0; c < component_count; ++c) {
    auto name_length = reader.read_value<uint32_t>("name length");
    if (name_length > kMaxNameLength) reader.fail("implausible name length " + std::to_string(name_length));
    std::string name(name_length, '\0');
    reader.read(name.data(), name_length, "component name");
    any_name = any_name || !name.empty();
    names.push_back(std::move(name));

    auto dtype_code = reader.read_value<int32_t>("dtype");
    if (dtype_code < 0 || dtype_code > static_cast<int32_t>(DType::kBool)) {
      reader.fail("unknown dtype code " + std::to_string(dtype_code));
    }
    auto dtype = static_cast<DType>(dtype_code);
    auto rank = reader.read_value<uint32_t>("rank");
    if (rank > kMaxRank) reader.fail("implausible rank " + std::to_string(rank));
    std::vector<int64_t> dims(rank);
    for (auto& dim : dims) {
      dim = reader.read_value<int64_t>("dimension");
      if (dim < 0) reader.fail("negative dimension " + std::to_string(dim));
    }
    Shape shape(std::move(dims));
    auto byte_count = reader.read_value<uint64_t>("tensor byte count");
    uint64_t expected = static_cast<uint64_t>(shape.element_count()) * dtype_size(dtype);
    if (byte_count != expected) {
      reader.fail("tensor of shape " + shape.to_string() + " holds " + std::to_string(expected) +
                  " bytes, the record says " + std::to_string(byte_count));
    }
    std::vector<uint8_t> data(byte_count);
    reader.read(data.data(), data.size(), "tensor data");
    components.push_back(make_host_tensor(data.data(), shape, dtype));
  }
  if (any_name) return Element(std::move(names), std::move(components));
  return Element(std::move(components));
}

}  // namespace accel::data::detail
