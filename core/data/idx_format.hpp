// The IDX format (MNIST, Fashion-MNIST) as bytes, without tensors: the
// header parsed and checked against the payload, then the checks a loader
// adds (image size, label range, a non-empty set). Every failure is a
// DataError naming the file and the byte. Kept free of the runtime so the
// fuzz target (tests/data/fuzz_idx_reader.cpp) runs it on its own.
#pragma once

#include "byte_reader.hpp"

#include <accel/data/idx_reader.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::data::detail {

// The largest payload read_idx accepts: 2^31 elements (2 GiB of uint8; the
// Fashion-MNIST training images are 47 MB). Bounds what a forged header can
// make the reader allocate, and keeps the product of the dims from overflowing.
inline constexpr uint64_t kMaxIdxElements = uint64_t{1} << 31;

struct IdxContents {
  std::string name;             // the file, for errors
  bool was_gzip = false;
  uint32_t magic = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> payload;  // the elements, exactly the product of dims

  // "byte 8" or "decompressed byte 8".
  std::string location(uint64_t offset) const;
  // "(2, 28, 28)".
  std::string dims_text() const;
};

// Byte offset of dimension `axis` in the header, and of the first element.
inline uint64_t idx_dim_offset(size_t axis) { return 4 + 4 * uint64_t{axis}; }
inline uint64_t idx_payload_offset(const IdxContents& idx) { return idx_dim_offset(idx.dims.size()); }

// Reads a whole IDX file: magic 0x0000TTNN (only TT = 08, unsigned byte),
// NN big-endian u32 dims, then exactly their product in bytes. Inflates a
// gzip file only as far as the header says the data goes.
IdxContents parse_idx(ByteReader& reader);
// parse_idx of the file at `path`; NotFoundError when it cannot be opened.
IdxContents read_idx_file(const std::string& path);

// Images: magic 2051 (3 dims), at least one image, rows and cols not zero
// and, when given, equal to `expected`.
void check_idx_images(const IdxContents& idx, IdxImageSize expected);
// Labels: magic 2049 (1 dim), at least one label and, when `num_classes` > 0,
// every label in [0, num_classes).
void check_idx_labels(const IdxContents& idx, int num_classes);

}  // namespace accel::data::detail
