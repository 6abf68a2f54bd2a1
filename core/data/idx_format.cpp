// IDX header and payload checks on bytes; see idx_format.hpp.
#include "idx_format.hpp"

#include <accel/data/data_error.hpp>

#include <cstdio>

namespace accel::data::detail {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
// Read the payload in slices so a header that promises more than the file
// holds fails at the end of the file, not at a huge allocation.
constexpr uint64_t kPayloadSlice = uint64_t{1} << 24;

uint32_t read_big_endian_u32(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | uint32_t{bytes[3]};
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08X", value);
  return text;
}

[[noreturn]] void fail(const IdxContents& idx, uint64_t offset, const std::string& what) {
  throw DataError(idx.name, idx.location(offset), what);
}

void require_magic(const IdxContents& idx, uint32_t expected, const char* kind) {
  if (idx.magic != expected) {
    fail(idx, 0, "IDX magic " + hex32(idx.magic) + " is not the " + kind + " magic " + hex32(expected) + " (" +
                     std::to_string(expected) + ")");
  }
}

void require_examples(const IdxContents& idx, const char* what) {
  if (idx.dims[0] == 0) fail(idx, idx_dim_offset(0), std::string("the file holds no ") + what);
}

}  // namespace

std::string IdxContents::location(uint64_t offset) const {
  return (was_gzip ? "decompressed byte " : "byte ") + std::to_string(offset);
}

std::string IdxContents::dims_text() const {
  std::string text = "(";
  for (size_t axis = 0; axis < dims.size(); ++axis) text += (axis ? ", " : "") + std::to_string(dims[axis]);
  return text + (dims.size() == 1 ? ",)" : ")");
}

IdxContents parse_idx(ByteReader& reader) {
  IdxContents idx;
  idx.name = reader.name();
  idx.was_gzip = reader.was_gzip();
  std::vector<uint8_t> header;
  if (reader.read(4, header) < 4) {
    fail(idx, header.size(), "truncated IDX header: " + std::to_string(header.size()) + " of the 4 magic bytes");
  }
  idx.magic = read_big_endian_u32(header.data());
  const uint8_t element_type = header[2];
  const uint8_t rank = header[3];
  if (header[0] != 0 || header[1] != 0 || rank == 0) {
    fail(idx, 0, "bad IDX magic " + hex32(idx.magic) + ": expected 0x0000TTNN, e.g. " + hex32(kIdxImagesMagic) +
                     " (images) or " + hex32(kIdxLabelsMagic) + " (labels)");
  }
  if (element_type != kUnsignedByteType) {
    fail(idx, 2, "unsupported IDX element type " + hex32(element_type) + " (magic " + hex32(idx.magic) +
                     "); only unsigned byte (0x08) is supported");
  }
  const uint64_t header_bytes = idx_dim_offset(rank);
  if (reader.read(header_bytes - 4, header) < header_bytes - 4) {
    fail(idx, header.size(), "truncated IDX header: " + std::to_string(rank) + " dimensions need " +
                                 std::to_string(header_bytes) + " header bytes, the file has " +
                                 std::to_string(header.size()));
  }
  uint64_t element_count = 1;
  for (size_t axis = 0; axis < rank; ++axis) {
    const uint32_t dim = read_big_endian_u32(header.data() + idx_dim_offset(axis));
    idx.dims.push_back(dim);
    // Checked before multiplying, so the product never overflows.
    if (dim != 0 && element_count > kMaxIdxElements / dim) {
      fail(idx, idx_dim_offset(axis), "IDX dimensions " + idx.dims_text() + (axis + 1 < rank ? "... " : " ") +
                                          "hold more than the " + std::to_string(kMaxIdxElements) +
                                          " elements an IDX file may have");
    }
    element_count *= dim;
  }
  while (idx.payload.size() < element_count) {
    const uint64_t wanted = std::min(kPayloadSlice, element_count - idx.payload.size());
    if (reader.read(wanted, idx.payload) < wanted) {
      fail(idx, header_bytes + idx.payload.size(),
           "truncated IDX data: shape " + idx.dims_text() + " needs " + std::to_string(element_count) +
               " bytes after the header, the file has " + std::to_string(idx.payload.size()));
    }
  }
  if (!reader.at_end()) {
    // Count what follows only for raw files: inflating the rest of a gzip
    // file could be a decompression bomb's whole output.
    std::string extra = "unexpected bytes";
    if (!reader.was_gzip()) {
      std::vector<uint8_t> rest;
      extra = std::to_string(reader.read(UINT64_MAX, rest)) + " unexpected bytes";
    }
    fail(idx, header_bytes + element_count, extra + " after the IDX data of shape " + idx.dims_text());
  }
  return idx;
}

IdxContents read_idx_file(const std::string& path) {
  ByteReader reader = ByteReader::open_file(path);
  return parse_idx(reader);
}

void check_idx_images(const IdxContents& idx, IdxImageSize expected) {
  require_magic(idx, kIdxImagesMagic, "images");
  require_examples(idx, "images");
  const char* names[] = {"rows", "columns"};
  const int64_t wanted[] = {expected.rows, expected.cols};
  for (size_t axis = 1; axis <= 2; ++axis) {
    const int64_t dim = idx.dims[axis];
    if (dim == 0) fail(idx, idx_dim_offset(axis), std::string("images of 0 ") + names[axis - 1]);
    if (wanted[axis - 1] != 0 && dim != wanted[axis - 1]) {
      fail(idx, idx_dim_offset(axis),
           "images are " + std::to_string(idx.dims[1]) + "x" + std::to_string(idx.dims[2]) + ", expected " +
               std::to_string(expected.rows ? expected.rows : idx.dims[1]) + "x" +
               std::to_string(expected.cols ? expected.cols : idx.dims[2]));
    }
  }
}

void check_idx_labels(const IdxContents& idx, int num_classes) {
  require_magic(idx, kIdxLabelsMagic, "labels");
  require_examples(idx, "labels");
  if (num_classes <= 0) return;
  for (size_t i = 0; i < idx.payload.size(); ++i) {
    if (idx.payload[i] >= num_classes) {
      fail(idx, idx_payload_offset(idx) + i,
           "label " + std::to_string(idx.payload[i]) + " of example " + std::to_string(i) + " is outside [0, " +
               std::to_string(num_classes) + ")");
    }
  }
}

}  // namespace accel::data::detail
