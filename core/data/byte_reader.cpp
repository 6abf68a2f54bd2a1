// ByteReader: raw files are served from memory; gzip files are inflated
// chunk by chunk as the reader asks, with zlib.
#include "byte_reader.hpp"

#include <accel/data/data_error.hpp>
#include <accel/error.hpp>
#include <accel/input_file.hpp>

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>

namespace accel::data::detail {
namespace {

constexpr size_t kInflateChunk = size_t{1} << 16;

bool starts_with_gzip_magic(const uint8_t* bytes, size_t size) {
  return size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

}  // namespace

struct ByteReader::State {
  std::vector<uint8_t> stored;
  std::string name;
  bool was_gzip = false;
  uint64_t raw_position = 0;  // raw files: the next byte to deliver

  // gzip files
  z_stream stream{};
  bool inflating = false;           // inflateInit2 succeeded; inflateEnd is owed
  bool stream_finished = false;     // the last member ended with the stored bytes
  std::vector<uint8_t> inflated;    // one chunk, delivered from inflated_begin on
  size_t inflated_begin = 0;

  ~State() {
    if (inflating) inflateEnd(&stream);
  }

  uint64_t compressed_consumed() const { return stored.size() - stream.avail_in; }

  // Refills `inflated` with up to one chunk; leaves it empty only at the end.
  void inflate_chunk() {
    inflated.resize(kInflateChunk);
    inflated_begin = 0;
    stream.next_out = inflated.data();
    stream.avail_out = static_cast<uInt>(kInflateChunk);
    while (stream.avail_out > 0 && !stream_finished) {
      const int status = inflate(&stream, Z_NO_FLUSH);
      if (status == Z_OK) continue;
      if (status == Z_STREAM_END) {
        if (stream.avail_in == 0) {
          stream_finished = true;
        } else if (starts_with_gzip_magic(stream.next_in, stream.avail_in)) {
          inflateReset(&stream);  // concatenated members are one stream, as gunzip reads them
        } else {
          throw DataError(name, "byte " + std::to_string(compressed_consumed()),
                          std::to_string(stream.avail_in) +
                              " bytes after the end of the gzip stream are not another gzip member");
        }
        continue;
      }
      const uint64_t delivered = stream.total_out;
      if (status == Z_BUF_ERROR && stream.avail_in == 0) {
        throw DataError(name, "byte " + std::to_string(stored.size()),
                        "truncated gzip stream: the file ends before the compressed data does (" +
                            std::to_string(delivered) + " bytes of the last member decompressed)");
      }
      const std::string message = stream.msg != nullptr ? stream.msg : "zlib error " + std::to_string(status);
      throw DataError(name, "byte " + std::to_string(compressed_consumed()), "corrupt gzip stream: " + message);
    }
    inflated.resize(kInflateChunk - stream.avail_out);
  }
};

ByteReader ByteReader::open_file(const std::string& path) {
  check_input_file(path, "data file", uint64_t{1} << 40);  // by kind first: a FIFO would block the open
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw NotFoundError("cannot open '" + path + "' for reading");
  std::vector<uint8_t> stored((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  return ByteReader(std::move(stored), path);
}

ByteReader::ByteReader(std::vector<uint8_t> stored, std::string name) : state_(std::make_unique<State>()) {
  State& state = *state_;
  state.stored = std::move(stored);
  state.name = std::move(name);
  state.was_gzip = starts_with_gzip_magic(state.stored.data(), state.stored.size());
  if (!state.was_gzip) return;
  if (state.stored.size() > UINT32_MAX) {  // zlib counts input in 32 bits
    throw DataError(state.name, "byte 0", "gzip files of 4 GiB or more are not supported");
  }
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate data.
  if (inflateInit2(&state.stream, 16 + MAX_WBITS) != Z_OK) throw InternalError("zlib: inflateInit2 failed");
  state.inflating = true;
  state.stream.next_in = state.stored.data();
  state.stream.avail_in = static_cast<uInt>(state.stored.size());
}

ByteReader::~ByteReader() = default;
ByteReader::ByteReader(ByteReader&&) noexcept = default;
ByteReader& ByteReader::operator=(ByteReader&&) noexcept = default;

uint64_t ByteReader::read(uint64_t count, std::vector<uint8_t>& out) {
  State& state = *state_;
  if (!state.was_gzip) {
    const uint64_t available = std::min<uint64_t>(count, state.stored.size() - state.raw_position);
    const auto begin = state.stored.begin() + static_cast<std::ptrdiff_t>(state.raw_position);
    out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(available));
    state.raw_position += available;
    return available;
  }
  uint64_t delivered = 0;
  while (delivered < count) {
    if (state.inflated_begin == state.inflated.size()) {
      if (state.stream_finished) break;
      state.inflate_chunk();
      continue;
    }
    const uint64_t take = std::min<uint64_t>(count - delivered, state.inflated.size() - state.inflated_begin);
    const auto begin = state.inflated.begin() + static_cast<std::ptrdiff_t>(state.inflated_begin);
    out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(take));
    state.inflated_begin += take;
    delivered += take;
  }
  return delivered;
}

bool ByteReader::at_end() {
  State& state = *state_;
  if (!state.was_gzip) return state.raw_position == state.stored.size();
  while (state.inflated_begin == state.inflated.size() && !state.stream_finished) state.inflate_chunk();
  return state.inflated_begin == state.inflated.size();
}

const std::string& ByteReader::name() const noexcept { return state_->name; }
bool ByteReader::was_gzip() const noexcept { return state_->was_gzip; }

std::string ByteReader::location(uint64_t offset) const {
  return (state_->was_gzip ? "decompressed byte " : "byte ") + std::to_string(offset);
}

}  // namespace accel::data::detail
