#include "file_bytes.hpp"

#include <accel/data/data_error.hpp>
#include <accel/error.hpp>

#include <zlib.h>

#include <fstream>
#include <iterator>

namespace accel::data::detail {
namespace {

bool has_gzip_magic(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

std::vector<uint8_t> gunzip(const std::vector<uint8_t>& compressed, const std::string& path) {
  std::vector<uint8_t> out;
  out.reserve(compressed.size() * 4);
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw InternalError("zlib: inflateInit2 failed");
  stream.next_in = const_cast<Bytef*>(compressed.data());
  stream.avail_in = static_cast<uInt>(compressed.size());
  uint8_t chunk[1 << 16];
  int status = Z_OK;
  while (true) {
    stream.next_out = chunk;
    stream.avail_out = sizeof(chunk);
    status = inflate(&stream, Z_NO_FLUSH);
    out.insert(out.end(), chunk, chunk + (sizeof(chunk) - stream.avail_out));
    if (status == Z_STREAM_END) {
      // Concatenated gzip members are one stream, as gunzip treats them.
      if (stream.avail_in > 0 && has_gzip_magic({stream.next_in, stream.next_in + std::min<uInt>(2, stream.avail_in)})) {
        inflateReset(&stream);
        continue;
      }
      break;
    }
    if (status == Z_OK) continue;
    uint64_t offset = stream.total_in;
    std::string message = stream.msg ? stream.msg : "";
    inflateEnd(&stream);
    if (status == Z_BUF_ERROR) {
      throw DataError(path, "byte " + std::to_string(compressed.size()),
                      "truncated gzip stream: the file ends before the compressed data does (" +
                          std::to_string(out.size()) + " bytes decompressed so far)");
    }
    throw DataError(path, "byte " + std::to_string(offset),
                    "corrupt gzip stream: " + (message.empty() ? "zlib error " + std::to_string(status) : message));
  }
  inflateEnd(&stream);
  return out;
}

}  // namespace

std::string FileBytes::location(uint64_t offset) const {
  return (was_gzip ? "decompressed byte " : "byte ") + std::to_string(offset);
}

FileBytes read_file_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw NotFoundError("cannot open '" + path + "' for reading");
  FileBytes file;
  file.bytes.assign(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
  if (has_gzip_magic(file.bytes)) {
    file.bytes = gunzip(file.bytes, path);
    file.was_gzip = true;
  }
  return file;
}

}  // namespace accel::data::detail
