// ByteReader: one file's bytes read front to back, gzip (detected by the
// magic 1f 8b, not by the name) inflated only as far as the caller reads.
// A reader that knows how many bytes it expects never inflates more than
// that plus one chunk, so a decompression bomb costs no memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accel::data::detail {

class ByteReader {
 public:
  // The bytes of the file at `path` as stored; NotFoundError when it cannot be opened.
  static ByteReader open_file(const std::string& path);
  // `stored`: a file's bytes as stored (raw or gzip); `name` is the file errors name.
  ByteReader(std::vector<uint8_t> stored, std::string name);
  ~ByteReader();
  ByteReader(ByteReader&&) noexcept;
  ByteReader& operator=(ByteReader&&) noexcept;

  // Appends up to `count` bytes to `out` and returns how many it appended:
  // fewer only when the data ends. DataError (the file and its compressed
  // byte offset) for a corrupt or truncated gzip stream, or for bytes after
  // the last gzip member that are not another member.
  uint64_t read(uint64_t count, std::vector<uint8_t>& out);
  // True when no byte is left (inflates at most one chunk to find out).
  bool at_end();

  const std::string& name() const noexcept;
  bool was_gzip() const noexcept;
  // "byte 12", or "decompressed byte 12" for a gzip file.
  std::string location(uint64_t offset) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace accel::data::detail
