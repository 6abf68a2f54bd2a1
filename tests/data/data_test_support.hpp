// Helpers shared by the data tests: reading int64 scalars out of a
// pipeline, temporary directories, writing small files, and the bytes of IDX
// files.
#pragma once

#include <accel/data/dataset.hpp>
#include <accel/data/idx_reader.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace accel::data::testing {

// Every element's first component as int64 scalars, flattened (batches too).
inline std::vector<int64_t> drain(Iterator& iterator) {
  std::vector<int64_t> values;
  while (auto element = iterator.next()) {
    auto part = (*element)[0].to_vector<int64_t>();
    values.insert(values.end(), part.begin(), part.end());
  }
  return values;
}

inline std::vector<int64_t> drain(const Dataset& dataset) {
  Iterator iterator = dataset.make_iterator();
  return drain(iterator);
}

inline std::vector<int64_t> iota(int64_t begin, int64_t end) {
  std::vector<int64_t> values;
  for (int64_t v = begin; v < end; ++v) values.push_back(v);
  return values;
}

// A fresh directory removed when the test ends.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("accel_data_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);  // left by a crashed earlier process of this pid
    std::filesystem::create_directories(path_);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream stream(path, std::ios::binary);
  stream.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream stream(path);
  stream << text;
}

// --- IDX bytes (big-endian header, then the payload).

inline void append_big_endian(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

// An images header [count, rows, cols], without the pixels.
inline std::vector<uint8_t> idx_images_header(uint32_t count, uint32_t rows, uint32_t cols) {
  std::vector<uint8_t> bytes;
  append_big_endian(bytes, kIdxImagesMagic);
  for (uint32_t dim : {count, rows, cols}) append_big_endian(bytes, dim);
  return bytes;
}

// A whole labels file holding `labels`.
inline std::vector<uint8_t> idx_labels(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> bytes;
  append_big_endian(bytes, kIdxLabelsMagic);
  append_big_endian(bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

}  // namespace accel::data::testing
