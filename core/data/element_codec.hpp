// Element <-> bytes, for the file cache and iterator checkpoints. Layout per
// element: u32 component count, then per component: u32 name length, name,
// i32 dtype, u32 rank, i64 dims[rank], u64 byte count, bytes (host byte order).
#pragma once

#include <accel/data/element.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace accel::data::detail {

// Sequential reads that throw DataError naming the source and byte offset
// when the bytes run out.
class ElementReader {
 public:
  explicit ElementReader(std::string source) : source_(std::move(source)) {}
  virtual ~ElementReader() = default;
  void read(void* destination, size_t count, const char* what);
  template <typename T>
  T read_value(const char* what) {
    T value;
    read(&value, sizeof(T), what);
    return value;
  }
  uint64_t offset() const { return offset_; }
  const std::string& source() const { return source_; }
  // True when no byte is left.
  virtual bool at_end() = 0;
  [[noreturn]] void fail(const std::string& what_was_wrong) const;

 protected:
  virtual size_t read_some(void* destination, size_t count) = 0;

 private:
  std::string source_;
  uint64_t offset_ = 0;
};

class MemoryElementReader : public ElementReader {
 public:
  MemoryElementReader(const std::vector<uint8_t>& bytes, std::string source)
      : ElementReader(std::move(source)), bytes_(bytes) {}
  bool at_end() override { return position_ == bytes_.size(); }

 protected:
  size_t read_some(void* destination, size_t count) override;

 private:
  const std::vector<uint8_t>& bytes_;
  size_t position_ = 0;
};

class FileElementReader : public ElementReader {
 public:
  // Throws NotFoundError when the file cannot be opened.
  explicit FileElementReader(const std::string& path);
  bool at_end() override;

 protected:
  size_t read_some(void* destination, size_t count) override;

 private:
  std::ifstream stream_;
};

void encode_element(const Element& element, std::vector<uint8_t>& out);
std::vector<uint8_t> encode_element(const Element& element);
Element decode_element(ElementReader& reader);

}  // namespace accel::data::detail
