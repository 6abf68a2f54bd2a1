// Parses the safetensors layout with the reference reader's checks: the header
// length fits the file, the header is a JSON object of well-formed entries,
// and the tensors' byte ranges tile the data exactly (sorted by offset they
// start at 0, follow each other without gap or overlap, match their shapes,
// and end where the file ends).
#include <accel/error.hpp>
#include <accel/input_file.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "safetensors_dtypes.hpp"

namespace accel::keras::saving {
namespace {

// The largest weights file read whole into memory (1 TiB: a bound, not a model size).
constexpr uint64_t kMaxSafetensorsFileBytes = uint64_t{1} << 40;

}  // namespace

namespace {

// The reference reader refuses headers above 100 MB.
constexpr uint64_t kMaxHeaderSize = 100'000'000;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InvalidArgumentError("safetensors file '" + source + "': " + what);
}

uint64_t read_little_endian_u64(std::string_view bytes) {
  uint64_t value = 0;
  for (int index = 7; index >= 0; --index) value = (value << 8) | static_cast<uint8_t>(bytes[index]);
  return value;
}

uint64_t read_non_negative_integer(const nlohmann::json& value, const std::string& source, const std::string& what) {
  if (!value.is_number_unsigned()) fail(source, what + " must be a non-negative integer, got " + value.dump());
  return value.get<uint64_t>();
}

// One header entry, checked for form; its offsets are checked against the others later.
struct HeaderEntry {
  StoredTensor tensor;
  uint64_t begin = 0;
  uint64_t end = 0;
};

HeaderEntry parse_entry(const std::string& name, const nlohmann::json& entry, const std::string& source) {
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object()) fail(source, where + ": the header entry is not an object");
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) fail(source, where + ": the header entry has no \"" + field + "\"");
  }
  HeaderEntry parsed;
  parsed.tensor.name = name;
  const nlohmann::json& dtype = entry["dtype"];
  if (!dtype.is_string()) fail(source, where + ": \"dtype\" must be a string, got " + dtype.dump());
  const std::optional<DType> accel_dtype = parse_safetensors_dtype(dtype.get<std::string>());
  if (!accel_dtype) {
    fail(source, where + ": dtype \"" + dtype.get<std::string>() +
                     "\" is not one accel stores (F32, BF16, F16, I32, I64, U8, BOOL)");
  }
  parsed.tensor.dtype = *accel_dtype;
  const nlohmann::json& shape = entry["shape"];
  if (!shape.is_array()) fail(source, where + ": \"shape\" must be an array, got " + shape.dump());
  std::vector<int64_t> dims;
  uint64_t element_count = 1;
  for (const nlohmann::json& dim : shape) {
    const uint64_t size = read_non_negative_integer(dim, source, where + ": a shape dimension");
    if (size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (size != 0 && element_count > std::numeric_limits<uint64_t>::max() / size)) {
      fail(source, where + ": the shape " + shape.dump() + " is too large");
    }
    element_count *= size;
    dims.push_back(static_cast<int64_t>(size));
  }
  parsed.tensor.shape = Shape(std::move(dims));
  const nlohmann::json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    fail(source, where + ": \"data_offsets\" must be [begin, end], got " + offsets.dump());
  }
  parsed.begin = read_non_negative_integer(offsets[0], source, where + ": the begin offset");
  parsed.end = read_non_negative_integer(offsets[1], source, where + ": the end offset");
  if (parsed.end < parsed.begin) fail(source, where + ": data_offsets " + offsets.dump() + " end before they begin");
  const uint64_t element_size = dtype_size(parsed.tensor.dtype);
  if (element_count > std::numeric_limits<uint64_t>::max() / element_size ||
      parsed.end - parsed.begin != element_count * element_size) {
    fail(source, where + ": data_offsets " + offsets.dump() + " hold " + std::to_string(parsed.end - parsed.begin) +
                     " bytes but shape " + shape.dump() + " of " + dtype.get<std::string>() + " needs " +
                     std::to_string(element_count * element_size));
  }
  return parsed;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::json& metadata, const std::string& source) {
  if (!metadata.is_object()) fail(source, "\"__metadata__\" must be an object of strings");
  std::map<std::string, std::string> parsed;
  for (const auto& [key, value] : metadata.items()) {
    if (!value.is_string()) fail(source, "\"__metadata__\" entry '" + key + "' is not a string: " + value.dump());
    parsed[key] = value.get<std::string>();
  }
  return parsed;
}

}  // namespace

SafetensorsContents parse_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8) {
    fail(source, "the file has " + std::to_string(bytes.size()) + " bytes, fewer than the 8 of the header length");
  }
  const uint64_t header_size = read_little_endian_u64(bytes);
  if (header_size > kMaxHeaderSize) {
    fail(source, "the header length " + std::to_string(header_size) + " exceeds the format's limit of 100000000");
  }
  if (header_size > bytes.size() - 8) {
    fail(source, "the header length " + std::to_string(header_size) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes; truncated?)");
  }
  const std::string_view header_text = bytes.substr(8, header_size);
  if (header_text.empty() || header_text.front() != '{') fail(source, "the header does not start with '{'");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and out_of_range for a number too large
    fail(source, std::string("the header is not valid JSON: ") + error.what());
  }
  if (!header.is_object()) fail(source, "the header is not a JSON object");

  SafetensorsContents contents;
  std::vector<HeaderEntry> entries;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      contents.metadata = parse_metadata(entry, source);
    } else {
      entries.push_back(parse_entry(name, entry, source));
    }
  }
  // The byte ranges must tile the data: in offset order, each starts where the
  // previous one ended, and the last ends at the end of the file.
  std::stable_sort(entries.begin(), entries.end(), [](const HeaderEntry& a, const HeaderEntry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  const std::string_view data = bytes.substr(8 + header_size);
  uint64_t expected_begin = 0;
  for (const HeaderEntry& entry : entries) {
    if (entry.begin != expected_begin) {
      fail(source, "tensor '" + entry.tensor.name + "' starts at data offset " + std::to_string(entry.begin) +
                       " but the previous tensor ends at " + std::to_string(expected_begin) +
                       (entry.begin < expected_begin ? " (overlapping data)" : " (a gap in the data)"));
    }
    if (entry.end > data.size()) {
      fail(source, "tensor '" + entry.tensor.name + "' ends at data offset " + std::to_string(entry.end) +
                       " past the end of the data (" + std::to_string(data.size()) + " bytes; truncated?)");
    }
    expected_begin = entry.end;
  }
  if (expected_begin != data.size()) {
    fail(source, "the tensors cover " + std::to_string(expected_begin) + " bytes of data but the file holds " +
                     std::to_string(data.size()));
  }
  for (HeaderEntry& entry : entries) {
    const std::string_view tensor_bytes = data.substr(entry.begin, entry.end - entry.begin);
    entry.tensor.bytes.assign(tensor_bytes.begin(), tensor_bytes.end());
    contents.tensors.push_back(std::move(entry.tensor));
  }
  return contents;
}

SafetensorsContents read_safetensors_file(const std::string& path) {
  // Checked by kind and size before it is opened (a FIFO, a device, a folder).
  return parse_safetensors(read_input_file(path, "safetensors file", kMaxSafetensorsFileBytes), path);
}

}  // namespace accel::keras::saving
