// Whole-file reads for the readers, with transparent gzip: a file starting
// with the gzip magic (1f 8b) is inflated, anything else is taken as is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accel::data::detail {

struct FileBytes {
  std::vector<uint8_t> bytes;  // decompressed when the file was gzip
  bool was_gzip = false;
  // "byte 12" or, for gzip files, "decompressed byte 12".
  std::string location(uint64_t offset) const;
};

// Throws NotFoundError when the file cannot be opened and DataError (file and
// compressed byte offset) when a gzip stream is corrupt or truncated.
FileBytes read_file_bytes(const std::string& path);

}  // namespace accel::data::detail
